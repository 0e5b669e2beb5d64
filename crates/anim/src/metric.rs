//! The error metric: object-space distance between raw and lossy virtual vertices placed at each
//! bone's shell distance on its local X, Y and Z axes (ACL's qvv metric, the one
//! `clip_eval.py` implements). Measured in float64 for reports; the compressor has its own
//! float32 kernel for the search but always finishes with this measurement, at every sample and
//! between samples (the raw clip interpolated the way the runtime interpolates: lerp, nlerp on
//! the shorter arc). `docs/METRIC.md` explains it.

use super::clip::RawClip;
use glam::{DQuat, DVec3};

#[path = "metric_lanes.rs"]
mod lanes;

/// Why two clips (or a clip and its between-sample poses) cannot be measured against each other.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MeasureError {
    #[error("bone counts differ: {raw} vs {lossy}")]
    BoneCounts { raw: usize, lossy: usize },
    #[error("sample counts differ: {raw} vs {lossy}")]
    SampleCounts { raw: usize, lossy: usize },
    #[error("lossy clip is {bones} bones x {samples} samples, raw {raw_bones} x {raw_samples}")]
    LossyShape {
        bones: usize,
        samples: usize,
        raw_bones: usize,
        raw_samples: usize,
    },
    #[error("{shells} shell distances for {bones} bones")]
    Shells { shells: usize, bones: usize },
    #[error("{weights} error weights for {bones} bones")]
    Weights { weights: usize, bones: usize },
    #[error("shell distances or weights are not one per bone ({bones})")]
    ShellsOrWeights { bones: usize },
    #[error(
        "between-sample poses: {bones} bones x {poses} poses for {raw_bones} bones x {intervals} intervals"
    )]
    BetweenPoses {
        bones: usize,
        poses: usize,
        raw_bones: usize,
        intervals: usize,
    },
    #[error("error tables were not started at the samples")]
    TablesNotStarted,
    /// An additive clip's base does not fit it.
    #[error(transparent)]
    Base(#[from] super::clip::AdditiveError),
}
use serde::{Deserialize, Serialize};

/// Object-space transform in float64.
#[derive(Clone, Copy, Debug)]
pub struct DTransform {
    pub rotation: DQuat,
    pub translation: DVec3,
    pub scale: DVec3,
}

/// Max, mean and where the worst error is, per bone and per sample.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorStats {
    pub max: f64,
    pub mean: f64,
    pub worst_bone: usize,
    pub worst_sample: usize,
    /// Max error of each bone over every point measured.
    pub per_bone_max: Vec<f64>,
    /// Max error over all bones at each sample.
    pub per_sample_max: Vec<f64>,
    /// Max error at the stored samples alone (`max` also covers the points between samples
    /// when they were measured).
    #[serde(default)]
    pub max_at_samples: f64,
    /// Max error over all bones at the points measured between sample `i` and `i + 1` (empty
    /// when only the samples were measured).
    #[serde(default)]
    pub per_interval_max: Vec<f64>,
    /// The threshold each bone was held to, when bones have thresholds of their own (empty:
    /// every bone had the one threshold of the settings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_bone_threshold: Vec<f32>,
}

/// Local transform of `bone` at `sample` in float64, rotation normalized.
#[inline]
pub(crate) fn local_f64(clip: &RawClip, bone: usize, sample: usize) -> DTransform {
    let i = clip.index(bone, sample);
    DTransform {
        rotation: clip.rotations[i].as_dquat().normalize(),
        translation: clip.translations[i].as_dvec3(),
        scale: clip.scales[i].as_dvec3(),
    }
}

/// Blends two local transforms the way the runtime does: lerp for translation and scale,
/// nlerp on the shorter arc for the rotation.
#[inline]
pub(crate) fn blend_local(a: &DTransform, b: &DTransform, alpha: f64) -> DTransform {
    let (qa, qb) = (a.rotation, b.rotation);
    let qb = if qa.dot(qb) < 0.0 { -qb } else { qb };
    let v = glam::DVec4::from(qa)
        .lerp(glam::DVec4::from(qb), alpha)
        .normalize();
    DTransform {
        rotation: DQuat::from_vec4(v),
        translation: a.translation.lerp(b.translation, alpha),
        scale: a.scale.lerp(b.scale, alpha),
    }
}

impl crate::pose::Compose for DTransform {
    #[inline]
    fn compose(parent: &Self, local: &Self) -> Self {
        DTransform {
            rotation: (parent.rotation * local.rotation).normalize(),
            translation: parent.rotation * (local.translation * parent.scale) + parent.translation,
            scale: local.scale * parent.scale,
        }
    }
}

/// Appends the object-space transforms of one pose, given its local transforms in bone order.
fn push_object_pose(
    clip: &RawClip,
    mut local: impl FnMut(usize) -> DTransform,
    out: &mut Vec<DTransform>,
) {
    let base = out.len();
    // Placeholders, each overwritten by the pass before it is read.
    let identity = DTransform {
        rotation: DQuat::IDENTITY,
        translation: DVec3::ZERO,
        scale: DVec3::ONE,
    };
    out.resize(base + clip.num_bones(), identity);
    crate::pose::local_to_object_with(&clip.skeleton.parents, &mut local, &mut out[base..]);
}

/// Errors between samples at extra blends of a few intervals, one pose at a time: for each
/// interval `s` of `intervals` and each blend `a` of `alphas`, the raw clip blended there (as the
/// runtime blends) against `lossy(s, a, out)`'s local transforms, into `stats` as points between
/// samples (`stats.per_interval_max` sized for the clip). For the intervals where the midpoint
/// does not stand for the whole interval (`compress::verify_weighted`).
pub(crate) fn measure_intervals_at(
    raw: &RawClip,
    intervals: &[usize],
    alphas: &[f64],
    mut lossy: impl FnMut(usize, f64, &mut Vec<DTransform>),
    shells: &[f32],
    stats: &mut ErrorStats,
) {
    let nb = raw.num_bones();
    let (mut a, mut b, mut local) = (Vec::new(), Vec::new(), Vec::new());
    for &s in intervals {
        for &alpha in alphas {
            a.clear();
            push_object_pose(
                raw,
                |x| blend_local(&local_f64(raw, x, s), &local_f64(raw, x, s + 1), alpha),
                &mut a,
            );
            local.clear();
            lossy(s, alpha, &mut local);
            b.clear();
            push_object_pose(raw, |x| local[x], &mut b);
            for bone in 0..nb {
                stats.between(
                    s,
                    bone,
                    vertex_error(&a[bone], &b[bone], shells[bone] as f64),
                );
            }
        }
    }
}

/// Object-space transforms of every bone at every sample, `sample * bones + bone`.
pub fn object_space_f64(clip: &RawClip) -> Vec<DTransform> {
    let nb = clip.num_bones();
    let mut out = Vec::with_capacity(nb * clip.num_samples);
    for s in 0..clip.num_samples {
        push_object_pose(clip, |b| local_f64(clip, b, s), &mut out);
    }
    out
}

/// Error at one bone: the largest distance between the raw and lossy images of the three
/// virtual vertices `(d,0,0)`, `(0,d,0)`, `(0,0,d)` (`rotation * (v * scale) + translation`).
#[inline]
pub fn vertex_error(raw: &DTransform, lossy: &DTransform, shell_distance: f64) -> f64 {
    let ra = axis_images(raw.rotation, raw.scale * shell_distance);
    let la = axis_images(lossy.rotation, lossy.scale * shell_distance);
    let mut worst: f64 = 0.0;
    for c in 0..3 {
        let a = ra[c] + raw.translation;
        let b = la[c] + lossy.translation;
        worst = worst.max(a.distance(b));
    }
    worst
}

/// `[q * (a.x, 0, 0), q * (0, a.y, 0), q * (0, 0, a.z)]`, equal to glam's products: glam's
/// `DQuat::mul_vec3` is `v·(w² − |b|²) + b·(2·(v·b)) + (b × v)·2w` (`b` the vector part, sums
/// left to right); with two components of `v` zero its terms differ from these only by exact
/// zeros (`x ± 0 = x`, `0 − x = −x`), and the rest is done here in the same order. The six
/// rotations of [`vertex_error`] were most of the float64 check's arithmetic; this does a
/// third of the multiplications.
#[inline(always)]
fn axis_images(q: DQuat, a: DVec3) -> [DVec3; 3] {
    let (bx, by, bz, w) = (q.x, q.y, q.z, q.w);
    let k = w * w - ((bx * bx) + (by * by) + (bz * bz));
    let w2 = w * 2.0;
    let (ax, ay, az) = (a.x, a.y, a.z);
    let dx = (ax * bx) * 2.0;
    let dy = (ay * by) * 2.0;
    let dz = (az * bz) * 2.0;
    [
        DVec3::new(
            ax * k + bx * dx,
            by * dx + (bz * ax) * w2,
            bz * dx - (ax * by) * w2,
        ),
        DVec3::new(
            bx * dy - (ay * bz) * w2,
            ay * k + by * dy,
            bz * dy + (bx * ay) * w2,
        ),
        DVec3::new(
            bx * dz + (by * az) * w2,
            by * dz - (az * bx) * w2,
            az * k + bz * dz,
        ),
    ]
}

/// Measures `lossy` against `raw` (same skeleton and sample count) on every sample, with the
/// raw clip's shell distances.
pub fn measure(raw: &RawClip, lossy: &RawClip) -> Result<ErrorStats, MeasureError> {
    measure_with_shells(raw, lossy, &raw.skeleton.shell_distances)
}

/// [`measure`] with explicit per-bone shell distances.
pub fn measure_with_shells(
    raw: &RawClip,
    lossy: &RawClip,
    shells: &[f32],
) -> Result<ErrorStats, MeasureError> {
    let mut stats = measure_with_between(raw, lossy, &[], shells)?;
    // Only the samples were measured.
    stats.per_interval_max = Vec::new();
    Ok(stats)
}

/// The lossy clip between two samples: `poses` holds one pose per interval (`raw.num_samples −
/// 1`, decoded as the runtime decodes at blend `alpha`), as a clip of that many samples.
pub struct Between<'a> {
    pub alpha: f64,
    pub poses: &'a RawClip,
}

impl ErrorStats {
    pub(crate) fn new(nb: usize, ns: usize) -> Self {
        ErrorStats {
            per_bone_max: vec![0.0; nb],
            per_sample_max: vec![0.0; ns],
            ..Default::default()
        }
    }

    #[inline]
    pub(crate) fn at_sample(&mut self, s: usize, bone: usize, e: f64) {
        if e > self.per_bone_max[bone] {
            self.per_bone_max[bone] = e;
        }
        if e > self.per_sample_max[s] {
            self.per_sample_max[s] = e;
        }
        if e > self.max {
            self.max = e;
            self.worst_bone = bone;
            self.worst_sample = s;
        }
    }

    #[inline]
    pub(crate) fn between(&mut self, s: usize, bone: usize, e: f64) {
        if e > self.per_interval_max[s] {
            self.per_interval_max[s] = e;
        }
        if e > self.per_bone_max[bone] {
            self.per_bone_max[bone] = e;
        }
        if e > self.max {
            self.max = e;
            self.worst_bone = bone;
            self.worst_sample = s;
        }
    }
}

/// [`measure_with_shells`] at every sample plus, for each of `between`, at its blend between
/// every pair of consecutive samples, against the raw clip blended the same way in float64.
/// `max`, `worst_bone` and `worst_sample` cover every point (a worst point between samples `i`
/// and `i + 1` reports sample `i`); `max_at_samples` and `per_sample_max` the samples alone.
pub fn measure_with_between(
    raw: &RawClip,
    lossy: &RawClip,
    between: &[Between],
    shells: &[f32],
) -> Result<ErrorStats, MeasureError> {
    Ok(measure_weighted(raw, lossy, between, shells, None)?.0)
}

/// [`measure_with_between`], and with `weights` the same figures with every error of bone `b`
/// multiplied by `weights[b]` (errors on the scale of one common threshold when each bone has
/// its own: the weight is that threshold over the bone's), measured in the same pass.
pub(crate) fn measure_weighted(
    raw: &RawClip,
    lossy: &RawClip,
    between: &[Between],
    shells: &[f32],
    weights: Option<&[f64]>,
) -> Result<(ErrorStats, Option<ErrorStats>), MeasureError> {
    if raw.num_bones() != lossy.num_bones() {
        return Err(MeasureError::BoneCounts {
            raw: raw.num_bones(),
            lossy: lossy.num_bones(),
        });
    }
    if raw.num_samples != lossy.num_samples {
        return Err(MeasureError::SampleCounts {
            raw: raw.num_samples,
            lossy: lossy.num_samples,
        });
    }
    let nb = raw.num_bones();
    let ns = raw.num_samples;
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
    // A few poses of each at a time (not the whole clip's object space: 14 MB each on a
    // 4,500-sample clip, which the compressor's check paid for in page faults every round),
    // [`lanes::M`] samples per pass; the figures are taken in sample then bone order, as one
    // pose at a time took them (the same sums, maxima and worst places).
    const M: usize = lanes::M;
    let mut scratch = [vec![[[0.0f64; M]; 10]; nb], vec![[[0.0f64; M]; 10]; nb]];
    let mut errs = vec![[0.0f64; M]; nb];
    let mut stats = ErrorStats::new(nb, ns);
    let mut weighted = weights.map(|_| ErrorStats::new(nb, ns));
    let (mut sum, mut wsum) = (0.0, 0.0);
    for s0 in (0..ns).step_by(M) {
        let at: [usize; M] = std::array::from_fn(|l| (s0 + l).min(ns - 1));
        lanes::errors(raw, lossy, &at, None, shells, &mut scratch, &mut errs);
        for l in 0..M.min(ns - s0) {
            let s = s0 + l;
            for bone in 0..nb {
                let e = errs[bone][l];
                sum += e;
                stats.at_sample(s, bone, e);
                if let (Some(ws), Some(w)) = (&mut weighted, weights) {
                    let e = e * w[bone];
                    wsum += e;
                    ws.at_sample(s, bone, e);
                }
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
    if let Some(ws) = &mut weighted {
        ws.max_at_samples = ws.max;
    }
    let intervals = ns.saturating_sub(1);
    stats.per_interval_max = vec![0.0; intervals];
    if let Some(ws) = &mut weighted {
        ws.per_interval_max = vec![0.0; intervals];
    }
    for bt in between {
        if bt.poses.num_bones() != nb || bt.poses.num_samples != intervals {
            return Err(MeasureError::BetweenPoses {
                bones: bt.poses.num_bones(),
                poses: bt.poses.num_samples,
                raw_bones: nb,
                intervals,
            });
        }
        for s0 in (0..intervals).step_by(M) {
            let at: [usize; M] = std::array::from_fn(|l| (s0 + l).min(intervals - 1));
            let alpha = Some(bt.alpha);
            lanes::errors(raw, bt.poses, &at, alpha, shells, &mut scratch, &mut errs);
            for l in 0..M.min(intervals - s0) {
                let s = s0 + l;
                for bone in 0..nb {
                    let e = errs[bone][l];
                    stats.between(s, bone, e);
                    if let (Some(ws), Some(w)) = (&mut weighted, weights) {
                        ws.between(s, bone, e * w[bone]);
                    }
                }
            }
        }
    }
    Ok((stats, weighted))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pose-at-a-time measurement the lanes replaced, kept as the reference.
    fn one_pose_at_a_time(
        raw: &RawClip,
        lossy: &RawClip,
        between: &[Between],
        shells: &[f32],
        weights: Option<&[f64]>,
    ) -> (ErrorStats, Option<ErrorStats>) {
        let (nb, ns) = (raw.num_bones(), raw.num_samples);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut stats = ErrorStats::new(nb, ns);
        let mut weighted = weights.map(|_| ErrorStats::new(nb, ns));
        let (mut sum, mut wsum) = (0.0, 0.0);
        for s in 0..ns {
            a.clear();
            push_object_pose(raw, |x| local_f64(raw, x, s), &mut a);
            b.clear();
            push_object_pose(lossy, |x| local_f64(lossy, x, s), &mut b);
            for bone in 0..nb {
                let e = vertex_error(&a[bone], &b[bone], shells[bone] as f64);
                sum += e;
                stats.at_sample(s, bone, e);
                if let (Some(ws), Some(w)) = (&mut weighted, weights) {
                    wsum += e * w[bone];
                    ws.at_sample(s, bone, e * w[bone]);
                }
            }
        }
        stats.mean = sum / (nb * ns) as f64;
        stats.max_at_samples = stats.max;
        if let Some(ws) = &mut weighted {
            ws.mean = wsum / (nb * ns) as f64;
            ws.max_at_samples = ws.max;
            ws.per_interval_max = vec![0.0; ns - 1];
        }
        stats.per_interval_max = vec![0.0; ns - 1];
        for bt in between {
            for s in 0..ns - 1 {
                a.clear();
                push_object_pose(
                    raw,
                    |x| blend_local(&local_f64(raw, x, s), &local_f64(raw, x, s + 1), bt.alpha),
                    &mut a,
                );
                b.clear();
                push_object_pose(bt.poses, |x| local_f64(bt.poses, x, s), &mut b);
                for bone in 0..nb {
                    let e = vertex_error(&a[bone], &b[bone], shells[bone] as f64);
                    stats.between(s, bone, e);
                    if let (Some(ws), Some(w)) = (&mut weighted, weights) {
                        ws.between(s, bone, e * w[bone]);
                    }
                }
            }
        }
        (stats, weighted)
    }

    /// [`measure_weighted`] (several samples at a time) gives every figure bit for bit as one
    /// pose at a time did: generated clips of 1 to 23 samples (chunks full and partial),
    /// lossy sides off by up to 1e-3 with scales, blends with rotations on either arc, weights.
    #[test]
    fn lanes_equal_one_pose() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        for (seed, ns) in [(1u64, 1usize), (2, 2), (3, 5), (4, 16), (5, 23)] {
            let raw = crate::generate::generate(&crate::generate::GenerateOptions {
                num_samples: ns,
                seed,
                with_scale: seed % 2 == 0,
                ..Default::default()
            });
            let mut lossy = raw.clone();
            for q in lossy.rotations.iter_mut() {
                // Unnormalized, and some turned to the other sign (the same rotation).
                let v = glam::Vec4::from(*q) + glam::Vec4::splat(next() * 1e-3);
                *q = glam::Quat::from_vec4(if next() < -0.5 { -v } else { v });
            }
            for t in lossy.translations.iter_mut() {
                *t += glam::Vec3::splat(next() * 1e-3);
            }
            for s in lossy.scales.iter_mut() {
                *s *= 1.0 + next() * 1e-3;
            }
            let mut mid = lossy.clone();
            mid.num_samples = ns - 1;
            let nb = raw.num_bones();
            mid.rotations = (0..nb)
                .flat_map(|b| lossy.rotations[b * ns..b * ns + ns - 1].to_vec())
                .collect();
            mid.translations = (0..nb)
                .flat_map(|b| lossy.translations[b * ns..b * ns + ns - 1].to_vec())
                .collect();
            mid.scales = (0..nb)
                .flat_map(|b| lossy.scales[b * ns..b * ns + ns - 1].to_vec())
                .collect();
            let between = [Between {
                alpha: 0.375,
                poses: &mid,
            }];
            let shells: Vec<f32> = (0..nb).map(|b| 1.0 + b as f32 * 0.7).collect();
            let weights: Vec<f64> = (0..nb).map(|b| 0.5 + b as f64 * 0.1).collect();
            let got = measure_weighted(&raw, &lossy, &between, &shells, Some(&weights)).unwrap();
            let want = one_pose_at_a_time(&raw, &lossy, &between, &shells, Some(&weights));
            assert_eq!(got, want, "{ns} samples");
            assert!(got.0.max > 0.0);
        }
    }

    #[test]
    fn axis_images_equal_glams_products() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for i in 0..50_000 {
            let q = DQuat::from_xyzw(next(), next(), next(), next()).normalize();
            // Shells times scales: large, tiny, negative and zero components.
            let mut a = DVec3::new(next(), next(), next()) * [300.0, 1e-4, 1.0][i % 3];
            if i % 7 == 0 {
                a.y = 0.0;
            }
            let got = axis_images(q, a);
            let want = [q * (DVec3::X * a), q * (DVec3::Y * a), q * (DVec3::Z * a)];
            for c in 0..3 {
                // Equal as numbers (a zero may differ in sign: it is only ever added to).
                assert!(
                    got[c].to_array() == want[c].to_array(),
                    "{q:?} {a:?} axis {c}: {:?} vs {:?}",
                    got[c],
                    want[c]
                );
            }
        }
    }
}
