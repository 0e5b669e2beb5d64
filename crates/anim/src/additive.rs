//! Additive clips: ACL's three additive formats (`relative`, `additive0`, `additive1`), applying
//! an additive pose to a base pose, making an additive clip from a clip and a base, ACL's rule
//! for which base sample goes with which additive sample, and the float64 error of an additive
//! clip measured where a game sees it: on the combined pose (additive applied to the raw base),
//! at and between samples.
//!
//! Formulas follow ACL's `apply_additive_to_base` (`acl/core/additive_utils.h`), as
//! `clip_eval.py` documents them (in the usual notation, `a·b` = Hamilton product):
//! - relative:  rot = base.rot·add.rot, trans = base.rot·(add.trans ∘ base.scale) + base.trans,
//!   scale = add.scale ∘ base.scale (a qvv composition: the additive is a child of the base);
//! - additive0: rot = base.rot·add.rot, trans = add.trans + base.trans, scale = add.scale ∘ base.scale;
//! - additive1: as additive0 but scale = (1 + add.scale) ∘ base.scale (neutral scale 0).

// The additive layer a raw clip carries lives beside `RawClip` (which holds it); re-exported
// here, where it has always been named.
use super::clip::RawClip;
pub use super::clip::{AdditiveBase, AdditiveError, AdditiveFormat};
use super::metric::{self, DTransform, ErrorStats, MeasureError, local_f64};
use glam::{DQuat, DVec3, Quat, Vec3A};

/// `add` applied to `base` in float64.
#[inline]
pub(crate) fn apply_f64(format: AdditiveFormat, base: &DTransform, add: &DTransform) -> DTransform {
    let rotation = (base.rotation * add.rotation).normalize();
    match format {
        AdditiveFormat::Relative => DTransform {
            rotation,
            translation: base.rotation * (add.translation * base.scale) + base.translation,
            scale: add.scale * base.scale,
        },
        AdditiveFormat::Additive0 => DTransform {
            rotation,
            translation: add.translation + base.translation,
            scale: add.scale * base.scale,
        },
        AdditiveFormat::Additive1 => DTransform {
            rotation,
            translation: add.translation + base.translation,
            scale: (DVec3::ONE + add.scale) * base.scale,
        },
    }
}

/// `add` applied to `base` in float32 (the compressor's search), as (rotation, translation, scale).
#[inline(always)]
pub fn apply_f32(
    format: AdditiveFormat,
    base: (Quat, Vec3A, Vec3A),
    add: (Quat, Vec3A, Vec3A),
) -> (Quat, Vec3A, Vec3A) {
    let format = match format {
        AdditiveFormat::Relative => crate::runtime::AdditiveFormat::Relative,
        AdditiveFormat::Additive0 => crate::runtime::AdditiveFormat::Additive0,
        AdditiveFormat::Additive1 => crate::runtime::AdditiveFormat::Additive1,
    };
    crate::runtime::pose::apply_additive_bone(format, base, add)
}

/// The additive `add` such that `apply_f64(format, base, add) == pose` (up to rounding); a zero
/// base scale component gives a zero ratio rather than infinity.
pub(crate) fn extract_f64(
    format: AdditiveFormat,
    base: &DTransform,
    pose: &DTransform,
) -> DTransform {
    let inv = base.rotation.conjugate();
    let ratio = |a: DVec3, b: DVec3| {
        DVec3::new(
            if b.x != 0.0 { a.x / b.x } else { 0.0 },
            if b.y != 0.0 { a.y / b.y } else { 0.0 },
            if b.z != 0.0 { a.z / b.z } else { 0.0 },
        )
    };
    let rotation = (inv * pose.rotation).normalize();
    let scale = ratio(pose.scale, base.scale);
    match format {
        AdditiveFormat::Relative => DTransform {
            rotation,
            translation: ratio(inv * (pose.translation - base.translation), base.scale),
            scale,
        },
        AdditiveFormat::Additive0 => DTransform {
            rotation,
            translation: pose.translation - base.translation,
            scale,
        },
        AdditiveFormat::Additive1 => DTransform {
            rotation,
            translation: pose.translation - base.translation,
            scale: scale - DVec3::ONE,
        },
    }
}

/// Position on the base's timeline (in base samples, fractional) that goes with additive
/// position `pos` (in additive samples, fractional): ACL stretches the base over the additive
/// (first sample on first, last on last), in float32 as ACL computes it.
fn base_position(additive_samples: usize, rate: f32, base: &RawClip, pos: f32) -> f32 {
    if base.num_samples <= 1 || additive_samples <= 1 {
        return 0.0;
    }
    let duration = (additive_samples - 1) as f32 / rate;
    let t = (pos / rate).min(duration);
    let u = t / duration;
    u * base.duration() * base.sample_rate
}

/// Base sample used at additive sample `i` (ACL's rule: nearest key, clamped).
pub(crate) fn base_sample_index(
    additive_samples: usize,
    rate: f32,
    base: &RawClip,
    i: usize,
) -> usize {
    let x = base_position(additive_samples, rate, base, i as f32);
    let k = x.floor();
    let key = k as usize + usize::from(x - k >= 0.5);
    key.min(base.num_samples.saturating_sub(1))
}

/// The base pose of `bone` at additive position `pos` between samples: the base interpolated
/// (lerp, nlerp) at the same normalised time, as ACL and `clip_eval.py` do.
fn base_between(
    additive_samples: usize,
    rate: f32,
    base: &RawClip,
    bone: usize,
    pos: f32,
) -> DTransform {
    let x = base_position(additive_samples, rate, base, pos);
    let last = base.num_samples.saturating_sub(1);
    let k = (x.floor() as usize).min(last);
    let alpha = (x - k as f32).clamp(0.0, 1.0) as f64;
    let k1 = (k + 1).min(last);
    metric::blend_local(&local_f64(base, bone, k), &local_f64(base, bone, k1), alpha)
}

/// Two skeletons of the same rig: the same hierarchy in the same order, and the same name for
/// every bone but the roots (exporters often name a root after the clip, as the CMU conversions
/// in ACL's regression data do).
pub fn same_rig(a: &super::skeleton::Skeleton, b: &super::skeleton::Skeleton) -> bool {
    a.parents == b.parents
        && a.names.len() == b.names.len()
        && (0..a.names.len())
            .all(|i| a.parents[i] == super::skeleton::NO_PARENT || a.names[i] == b.names[i])
}

/// Makes an additive clip: `clip` relative to `base` (same bone names in the same order; any
/// sample count: the base is stretched over the clip, ACL's rule). The additive clip's bind pose
/// is the format's identity (what a bone that does not move adds), and it carries its base.
pub fn make_additive(
    clip: &RawClip,
    base: &RawClip,
    format: AdditiveFormat,
) -> Result<RawClip, AdditiveError> {
    if !same_rig(&clip.skeleton, &base.skeleton) {
        return Err(AdditiveError::DifferentRig {
            base: base.name.clone(),
            clip: clip.name.clone(),
        });
    }
    if base.num_samples == 0 && clip.num_samples > 0 {
        return Err(AdditiveError::BaseHasNoSamples {
            base: base.name.clone(),
        });
    }
    let (nb, n) = (clip.num_bones(), clip.num_samples);
    let mut rotations = Vec::with_capacity(nb * n);
    let mut translations = Vec::with_capacity(nb * n);
    let mut scales = Vec::with_capacity(nb * n);
    for b in 0..nb {
        for s in 0..n {
            let k = base_sample_index(n, clip.sample_rate, base, s);
            let a = extract_f64(format, &local_f64(base, b, k), &local_f64(clip, b, s));
            rotations.push(a.rotation.as_quat());
            translations.push(a.translation.as_vec3());
            scales.push(a.scale.as_vec3());
        }
    }
    let mut skeleton = clip.skeleton.clone();
    let (ir, it, is) = format.identity();
    skeleton.bind_rotations.fill(ir);
    skeleton.bind_translations.fill(it);
    skeleton.bind_scales.fill(is);
    let mut out = RawClip::new(
        clip.name.clone(),
        skeleton.clone(),
        clip.sample_rate,
        n,
        rotations,
        translations,
        scales,
    )
    .map_err(|source| AdditiveError::Invalid {
        clip: clip.name.clone(),
        source,
    })?;
    let mut base = base.clone();
    base.additive = None;
    base.skeleton = skeleton;
    out.additive = Some(Box::new(AdditiveBase { format, base }));
    Ok(out)
}

/// The additive format of a `.cfa`'s flags bits 2–3 (`ClipReader::additive_format`: 1
/// relative, 2 additive0, 3 additive1); `None` for a plain clip (0).
pub fn format_from_code(code: u8) -> Option<AdditiveFormat> {
    match code {
        1 => Some(AdditiveFormat::Relative),
        2 => Some(AdditiveFormat::Additive0),
        3 => Some(AdditiveFormat::Additive1),
        _ => None,
    }
}

/// The base to write back with a decompressed additive `layer` (`clipforge decompress --base`):
/// `given` is the first clip of the base file; when that clip is itself an additive clip (an ACL
/// file with `base_tracks`, e.g. the one `clipforge convert --additive-base` wrote), its base is
/// taken. `first_frame_only` keeps the first sample alone (a clip made relative to its first
/// frame). The base must be of the layer's rig; it takes the layer's skeleton, as
/// [`make_additive`] gives it.
pub fn base_for_layer(
    layer: &RawClip,
    format: AdditiveFormat,
    given: RawClip,
    first_frame_only: bool,
) -> Result<AdditiveBase, AdditiveError> {
    let mut base = match given.additive {
        Some(inner) => inner.base,
        None => given,
    };
    if first_frame_only {
        base = first_frame(&base);
    }
    if !same_rig(&layer.skeleton, &base.skeleton) {
        return Err(AdditiveError::DifferentRig {
            base: base.name.clone(),
            clip: layer.name.clone(),
        });
    }
    base.additive = None;
    base.skeleton = layer.skeleton.clone();
    let base = AdditiveBase { format, base };
    check_base(layer, &base)?;
    Ok(base)
}

/// The base as a clip of one sample: `clip`'s first sample.
pub fn first_frame(clip: &RawClip) -> RawClip {
    let nb = clip.num_bones();
    let pick = |b: usize| clip.index(b, 0);
    let one = clip.num_samples.min(1);
    RawClip {
        name: format!("{} (first frame)", clip.name),
        skeleton: clip.skeleton.clone(),
        sample_rate: clip.sample_rate,
        num_samples: one,
        rotations: (0..nb * one).map(|b| clip.rotations[pick(b)]).collect(),
        translations: (0..nb * one).map(|b| clip.translations[pick(b)]).collect(),
        scales: (0..nb * one).map(|b| clip.scales[pick(b)]).collect(),
        additive: None,
    }
}

/// Base local pose (float32) at every sample of an additive clip, `sample * bones + bone`, by
/// ACL's nearest-key rule: what the compressor's search combines its candidates with.
pub(crate) fn base_at_samples(additive: &RawClip, base: &RawClip) -> Vec<(Quat, Vec3A, Vec3A)> {
    let (nb, n) = (additive.num_bones(), additive.num_samples);
    let mut out = Vec::with_capacity(nb * n);
    for s in 0..n {
        let k = base_sample_index(n, additive.sample_rate, base, s);
        for b in 0..nb {
            let i = base.index(b, k);
            out.push((
                base.rotations[i].as_dquat().normalize().as_quat(),
                base.translations[i].into(),
                base.scales[i].into(),
            ));
        }
    }
    out
}

/// The combined pose of an additive clip applied to its base, as a plain clip (float32 values
/// computed in float64): for viewing and exporting what a game would show.
pub fn combined_clip(additive: &RawClip, base: &AdditiveBase) -> Result<RawClip, AdditiveError> {
    let (nb, n) = (additive.num_bones(), additive.num_samples);
    let mut rotations = Vec::with_capacity(nb * n);
    let mut translations = Vec::with_capacity(nb * n);
    let mut scales = Vec::with_capacity(nb * n);
    for b in 0..nb {
        for s in 0..n {
            let k = base_sample_index(n, additive.sample_rate, &base.base, s);
            let c = apply_f64(
                base.format,
                &local_f64(&base.base, b, k),
                &local_f64(additive, b, s),
            );
            rotations.push(c.rotation.as_quat());
            translations.push(c.translation.as_vec3());
            scales.push(c.scale.as_vec3());
        }
    }
    RawClip::new(
        additive.name.clone(),
        base.base.skeleton.clone(),
        additive.sample_rate,
        n,
        rotations,
        translations,
        scales,
    )
    .map_err(AdditiveError::Combined)
}

/// Checks that `base` fits `additive` (same bone count; samples when the additive has some).
pub(crate) fn check_base(additive: &RawClip, base: &AdditiveBase) -> Result<(), AdditiveError> {
    if base.base.num_bones() != additive.num_bones() {
        return Err(AdditiveError::BaseBones {
            base: base.base.num_bones(),
            clip: additive.num_bones(),
        });
    }
    if additive.num_samples > 0 && additive.num_bones() > 0 && base.base.num_samples == 0 {
        return Err(AdditiveError::BaseWithoutSamples);
    }
    Ok(())
}

/// The error of a lossy additive clip where it matters: `raw` and `lossy` (additive poses, same
/// skeleton and samples) each applied to `raw`'s base, then the virtual-vertex metric in float64
/// between the two combined poses, at every sample (base by ACL's nearest-key rule) and at each
/// of `between` (raw additive blended as the runtime blends; base interpolated at the same
/// normalised time). Same figures as [`metric::measure_with_between`] gives a plain clip.
pub fn measure_combined(
    raw: &RawClip,
    base: &AdditiveBase,
    lossy: &RawClip,
    between: &[metric::Between],
    shells: &[f32],
) -> Result<ErrorStats, MeasureError> {
    Ok(measure_combined_weighted(raw, base, lossy, between, shells, None)?.0)
}

/// The buffers of one combined-pose measurement: the base pose, the two combined poses in object
/// space and each bone's error (allocated once per clip, reused at every point).
struct CombinedPoses {
    base_pose: Vec<DTransform>,
    raw: Vec<DTransform>,
    lossy: Vec<DTransform>,
    errors: Vec<f64>,
}

impl CombinedPoses {
    fn new(nb: usize) -> Self {
        let identity = DTransform {
            rotation: DQuat::IDENTITY,
            translation: DVec3::ZERO,
            scale: DVec3::ONE,
        };
        Self {
            base_pose: vec![identity; nb],
            raw: vec![identity; nb],
            lossy: vec![identity; nb],
            errors: vec![0.0; nb],
        }
    }

    /// Each bone's error between the raw and the lossy additive local poses applied to the base
    /// local pose (`base_local`), composed down the hierarchy.
    fn errors(
        &mut self,
        clip: &RawClip,
        base: &AdditiveBase,
        base_local: impl Fn(usize) -> DTransform,
        raw_local: impl Fn(usize) -> DTransform,
        lossy_local: impl Fn(usize) -> DTransform,
        shells: &[f32],
    ) -> &[f64] {
        let (parents, fmt) = (&clip.skeleton.parents, base.format);
        for (bone, bp) in self.base_pose.iter_mut().enumerate() {
            *bp = base_local(bone);
        }
        let bp = &self.base_pose;
        crate::pose::local_to_object_with(
            parents,
            |bone| apply_f64(fmt, &bp[bone], &raw_local(bone)),
            &mut self.raw,
        );
        crate::pose::local_to_object_with(
            parents,
            |bone| apply_f64(fmt, &bp[bone], &lossy_local(bone)),
            &mut self.lossy,
        );
        for (bone, e) in self.errors.iter_mut().enumerate() {
            *e = metric::vertex_error(&self.raw[bone], &self.lossy[bone], shells[bone] as f64);
        }
        &self.errors
    }
}

/// [`measure_combined`], and with `weights` (one per bone) the same figures with each bone's
/// every error weighed by its own weight, as [`metric::measure_weighted`] does for a plain clip:
/// per sample and per interval the largest weighed error over the bones, so a bone held to a
/// tighter threshold of its own is judged against it exactly, wherever it sits.
pub(crate) fn measure_combined_weighted(
    raw: &RawClip,
    base: &AdditiveBase,
    lossy: &RawClip,
    between: &[metric::Between],
    shells: &[f32],
    weights: Option<&[f64]>,
) -> Result<(ErrorStats, Option<ErrorStats>), MeasureError> {
    check_base(raw, base)?;
    let (nb, ns) = (raw.num_bones(), raw.num_samples);
    if lossy.num_bones() != nb || lossy.num_samples != ns {
        return Err(MeasureError::LossyShape {
            bones: lossy.num_bones(),
            samples: lossy.num_samples,
            raw_bones: nb,
            raw_samples: ns,
        });
    }
    if shells.len() != nb {
        return Err(MeasureError::Shells {
            shells: shells.len(),
            bones: nb,
        });
    }
    if let Some(w) = weights
        && w.len() != nb
    {
        return Err(MeasureError::Weights {
            weights: w.len(),
            bones: nb,
        });
    }
    let mut scratch = CombinedPoses::new(nb);
    let mut stats = ErrorStats::new(nb, ns);
    let mut weighted = weights.map(|_| ErrorStats::new(nb, ns));
    let (mut sum, mut wsum) = (0.0, 0.0);
    for s in 0..ns {
        let k = base_sample_index(ns, raw.sample_rate, &base.base, s);
        let errors = scratch.errors(
            raw,
            base,
            |bone| local_f64(&base.base, bone, k),
            |bone| local_f64(raw, bone, s),
            |bone| local_f64(lossy, bone, s),
            shells,
        );
        for (bone, &e) in errors.iter().enumerate() {
            sum += e;
            stats.at_sample(s, bone, e);
            if let (Some(ws), Some(w)) = (&mut weighted, weights) {
                wsum += e * w[bone];
                ws.at_sample(s, bone, e * w[bone]);
            }
        }
    }
    if nb * ns > 0 {
        stats.mean = sum / (nb * ns) as f64;
        if let Some(ws) = &mut weighted {
            ws.mean = wsum / (nb * ns) as f64;
        }
    }
    stats.max_at_samples = stats.max;
    let intervals = ns.saturating_sub(1);
    stats.per_interval_max = vec![0.0; intervals];
    if let Some(ws) = &mut weighted {
        ws.max_at_samples = ws.max;
        ws.per_interval_max = vec![0.0; intervals];
    }
    for bt in between {
        combined_between_into(
            raw,
            base,
            bt.poses,
            |_| bt.alpha,
            shells,
            weights,
            &mut stats,
            weighted.as_mut(),
        )?;
    }
    Ok((stats, weighted))
}

/// The between-sample part of [`measure_combined_weighted`] for one set of poses: `poses` holds
/// one decoded pose per interval, taken at blend `alpha_of(s)` in interval `s` (a blend per
/// interval, so the points can follow the base's keys); the errors go into `stats` (and the
/// weighed ones into `weighted`), which [`measure_combined_weighted`] started at the samples.
/// Measuring a set at a time keeps one set of poses in memory however many points are measured.
#[allow(clippy::too_many_arguments)]
pub(crate) fn combined_between_into(
    raw: &RawClip,
    base: &AdditiveBase,
    poses: &RawClip,
    alpha_of: impl Fn(usize) -> f64,
    shells: &[f32],
    weights: Option<&[f64]>,
    stats: &mut ErrorStats,
    mut weighted: Option<&mut ErrorStats>,
) -> Result<(), MeasureError> {
    let (nb, ns) = (raw.num_bones(), raw.num_samples);
    let intervals = ns.saturating_sub(1);
    if poses.num_bones() != nb || poses.num_samples != intervals {
        return Err(MeasureError::BetweenPoses {
            bones: poses.num_bones(),
            poses: poses.num_samples,
            raw_bones: nb,
            intervals,
        });
    }
    if shells.len() != nb || weights.is_some_and(|w| w.len() != nb) {
        return Err(MeasureError::ShellsOrWeights { bones: nb });
    }
    if stats.per_interval_max.len() != intervals
        || weighted
            .as_ref()
            .is_some_and(|w| w.per_interval_max.len() != intervals)
    {
        return Err(MeasureError::TablesNotStarted);
    }
    let mut scratch = CombinedPoses::new(nb);
    for s in 0..intervals {
        let alpha = alpha_of(s);
        let pos = s as f32 + alpha as f32;
        let errors = scratch.errors(
            raw,
            base,
            |bone| base_between(ns, raw.sample_rate, &base.base, bone, pos),
            |bone| {
                metric::blend_local(
                    &local_f64(raw, bone, s),
                    &local_f64(raw, bone, s + 1),
                    alpha,
                )
            },
            |bone| local_f64(poses, bone, s),
            shells,
        );
        for (bone, &e) in errors.iter().enumerate() {
            stats.between(s, bone, e);
            if let (Some(ws), Some(w)) = (weighted.as_deref_mut(), weights) {
                ws.between(s, bone, e * w[bone]);
            }
        }
    }
    Ok(())
}

/// Blends at which every interval over a base of several samples is measured, whatever the base
/// keys inside it: every 1/16 of the interval (the grid the check used before it followed the
/// keys; kept so a piece between keys is never measured more sparsely than that).
const GRID: usize = 16;

/// Where the combined error of an additive clip over a base of several samples is measured
/// between additive samples `s` and `s + 1`: the base is interpolated on its own timeline, so
/// inside the interval it has a kink wherever a base key falls, and the combined error is smooth
/// only between kinks. Measured: every kink; both ends of the interval with the base interpolated
/// there (what a game sees at the sample times, where the check at the samples takes ACL's
/// nearest base key instead); every 1/16 of the interval; and the midpoint of every piece
/// between kinks, so a short piece is measured inside too. Sorted blends in [0, 1], duplicates
/// removed.
pub(crate) fn multi_base_blends(
    additive_samples: usize,
    rate: f32,
    base: &RawClip,
    s: usize,
) -> Vec<f64> {
    let x0 = base_position(additive_samples, rate, base, s as f32) as f64;
    let x1 = base_position(additive_samples, rate, base, (s + 1) as f32) as f64;
    let mut cuts = vec![0.0];
    // A key within float32 rounding of an end is at that end (measured there already).
    const AT_END: f64 = 1e-4;
    if x1 > x0 {
        let mut k = (x0 + AT_END).floor() + 1.0;
        while k < x1 - AT_END {
            cuts.push((k - x0) / (x1 - x0));
            k += 1.0;
        }
    }
    cuts.push(1.0);
    let mut out: Vec<f64> = (1..GRID).map(|j| j as f64 / GRID as f64).collect();
    out.extend(cuts.iter().copied());
    out.extend(cuts.windows(2).map(|w| 0.5 * (w[0] + w[1])));
    out.sort_by(f64::total_cmp);
    // Within float32 rounding (the blend the runtime gets) two points are one.
    out.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{GenerateOptions, generate};
    use glam::Vec3;

    #[test]
    fn extract_then_apply_gives_the_pose_back_in_every_format() {
        let clip = generate(&GenerateOptions::default());
        let base = first_frame(&clip);
        for format in [
            AdditiveFormat::Relative,
            AdditiveFormat::Additive0,
            AdditiveFormat::Additive1,
        ] {
            let add = make_additive(&clip, &base, format).unwrap();
            let combined = combined_clip(&add, add.additive.as_ref().unwrap()).unwrap();
            let stats = metric::measure(&clip, &combined).unwrap();
            assert!(stats.max < 1e-3, "{format:?}: {}", stats.max);
            // Relative to its own first frame, the first additive sample is the identity.
            let (ir, it, is) = format.identity();
            for b in 0..add.num_bones() {
                let i = add.index(b, 0);
                assert!(
                    add.rotations[i].abs_diff_eq(ir, 1e-5)
                        || add.rotations[i].abs_diff_eq(-ir, 1e-5)
                );
                assert!(add.translations[i].abs_diff_eq(it, 1e-3));
                assert!(add.scales[i].abs_diff_eq(is, 1e-5));
            }
        }
    }

    #[test]
    fn the_base_is_stretched_over_the_additive_with_nearest_keys() {
        let clip = generate(&GenerateOptions::default());
        // A base of 3 samples under an additive of 11: positions 0, 0.2, ..., 2.0.
        let mut base = clip.clone();
        base.num_samples = 3;
        let nb = clip.num_bones();
        base.rotations = (0..nb * 3).map(|_| Quat::IDENTITY).collect();
        base.translations = vec![Vec3::ZERO; nb * 3];
        base.scales = vec![Vec3::ONE; nb * 3];
        let keys: Vec<usize> = (0..11)
            .map(|i| base_sample_index(11, 30.0, &base, i))
            .collect();
        assert_eq!(keys, [0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2]);
        assert_eq!(base_sample_index(11, 30.0, &first_frame(&clip), 7), 0);
    }

    #[test]
    fn an_interval_is_cut_at_the_base_keys_inside_it_and_each_piece_measured() {
        let clip = generate(&GenerateOptions::default());
        let mut base = clip.clone();
        // A base of 11 samples under an additive of 6: each additive interval spans two base
        // intervals, with base key 2s + 1 at its middle.
        base.num_samples = 11;
        let nb = clip.num_bones();
        base.rotations = vec![Quat::IDENTITY; nb * 11];
        base.translations = vec![Vec3::ZERO; nb * 11];
        base.scales = vec![Vec3::ONE; nb * 11];
        let grid: Vec<f64> = (1..16).map(|j| j as f64 / 16.0).collect();
        for s in 0..5 {
            let b = multi_base_blends(6, 30.0, &base, s);
            assert!(b.windows(2).all(|w| w[0] < w[1]), "{b:?}");
            assert_eq!((b[0], *b.last().unwrap()), (0.0, 1.0));
            let has = |a: f64| b.iter().any(|&x| (x - a).abs() < 1e-6);
            // The grid, the kink at 1/2 (on the grid), the ends and each piece's midpoint.
            assert!(grid.iter().all(|&g| has(g)), "{b:?}");
            assert!(has(0.25) && has(0.75), "{b:?}");
            assert_eq!(b.len(), 17, "{b:?}");
        }
        // A base of 4 under an additive of 6 (keys at additive 5/3 and 10/3): the interval from
        // sample 1 has its key at 2/3, off the grid, measured with both pieces' midpoints.
        base.num_samples = 4;
        base.rotations.truncate(nb * 4);
        base.translations.truncate(nb * 4);
        base.scales.truncate(nb * 4);
        let b = multi_base_blends(6, 30.0, &base, 1);
        for a in [2.0 / 3.0, 1.0 / 3.0, 5.0 / 6.0] {
            assert!(b.iter().any(|&x| (x - a).abs() < 1e-4), "{a} in {b:?}");
        }
        // A base of 3 under an additive of 11: base key 1 is at additive sample 5 exactly, so no
        // interval has a key inside: its ends, the grid and its midpoint (on the grid).
        base.num_samples = 3;
        base.rotations.truncate(nb * 3);
        base.translations.truncate(nb * 3);
        base.scales.truncate(nb * 3);
        for s in [0, 3, 7, 9] {
            assert_eq!(
                multi_base_blends(11, 30.0, &base, s).len(),
                17,
                "interval {s}"
            );
        }
    }
}
