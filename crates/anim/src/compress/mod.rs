//! Offline compression. Every sample is kept (uniform sampling). Per clip: loop detection,
//! default/constant sub-track detection measured with the error metric, a dropped quaternion
//! component chosen per track, clip range reduction. Per segment of ~16 samples: 8-bit segment
//! ranges and a bit width per component of every animated sub-track, chosen by a
//! hierarchy-aware search ([`search`]) and a greedy refinement of it. The result is verified by decoding it and measuring the
//! error in float64 before it is returned. Each bone may have its own threshold and shell
//! distance ([`CompressionSettings::bones`], the clip file's per-bone precision): errors are
//! then weighed by the global target over the bone's own. Layout: `docs/FORMAT.md`.

mod encode;
mod lanes;
mod prepare;
mod search;

use super::clip::RawClip;
use super::metric;
use super::runtime::ClipReader;
use serde::{Deserialize, Serialize};

/// Samples per segment (the last segment absorbs a short remainder).
pub const SEGMENT_SIZE: usize = 16;
// The format stores only this segment size (the runtime must not depend on the compressor, so
// the check lives here).
const _: () = assert!(SEGMENT_SIZE == crate::runtime::format::SEGMENT_SIZE);

/// What the user controls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompressionSettings {
    /// Max object-space virtual-vertex error allowed, in clip units (cm).
    pub error_threshold: f32,
    /// Overrides every bone's shell distance (virtual vertex distance) when set.
    pub shell_distance: Option<f32>,
    /// Per-bone overrides, matched on bone names; a later entry wins over an earlier one for
    /// the bones both match. They win over the clip file's per-bone precision and over the two
    /// settings above ([`CompressionSettings::bone_limits`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bones: Vec<BoneOverride>,
}

/// The error threshold a clip gets when nothing says otherwise, in cm: ACL's default (ACL's
/// 0.01 cm assumes clips in centimetres, see `formats`).
pub const DEFAULT_ERROR_THRESHOLD_CM: f32 = 0.01;

impl Default for CompressionSettings {
    fn default() -> Self {
        Self {
            error_threshold: DEFAULT_ERROR_THRESHOLD_CM,
            shell_distance: None,
            bones: Vec::new(),
        }
    }
}

/// A threshold and/or a shell distance for the bones whose names match a glob
/// ([`BoneGlob`](crate::bone_glob::BoneGlob): `*`, `?`, `[...]`, `{a,b}`, `\` escapes;
/// case-sensitive). In clip units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoneOverride {
    /// Glob over bone names (`*Finger*`).
    pub pattern: String,
    pub error_threshold: Option<f32>,
    pub shell_distance: Option<f32>,
}

/// The threshold and shell distance each bone is held to, in clip units.
#[derive(Clone, Debug, PartialEq)]
pub struct BoneLimits {
    pub thresholds: Vec<f32>,
    pub shells: Vec<f32>,
}

impl BoneLimits {
    /// True when every bone is held to `threshold` (no per-bone threshold in effect).
    pub fn uniform(&self, threshold: f32) -> bool {
        self.thresholds.iter().all(|&t| t == threshold)
    }
}

pub use crate::bone_glob::glob_match;

impl CompressionSettings {
    /// Each bone's threshold and shell distance, the most specific source winning: the
    /// overrides in [`Self::bones`] (later ones over earlier ones), then the clip file's own
    /// per-bone precision ([`Skeleton::precisions`](crate::skeleton::Skeleton)), then
    /// [`Self::error_threshold`]. Shell distances: the overrides, then the clip file's own
    /// per-bone shell distance (one other than [`DEFAULT_SHELL_DISTANCE`]: a file that sets none
    /// reads as the default, and writers such as ACL's always write one), then
    /// [`Self::shell_distance`] when set, then the default.
    ///
    /// [`DEFAULT_SHELL_DISTANCE`]: crate::skeleton::DEFAULT_SHELL_DISTANCE
    pub fn bone_limits(&self, skeleton: &crate::skeleton::Skeleton) -> BoneLimits {
        let nb = skeleton.num_bones();
        let mut thresholds: Vec<f32> = (0..nb)
            .map(|b| {
                skeleton
                    .precisions
                    .get(b)
                    .copied()
                    .flatten()
                    .unwrap_or(self.error_threshold)
            })
            .collect();
        let mut shells: Vec<f32> = (0..nb)
            .map(|b| {
                let own = skeleton.shell_distances[b];
                match self.shell_distance {
                    Some(d) if own == crate::skeleton::DEFAULT_SHELL_DISTANCE => d,
                    _ => own,
                }
            })
            .collect();
        for o in &self.bones {
            // A pattern that does not compile matches nothing: every place a user gives one
            // refuses it first (`BoneGlob::new`), so only a hand-built override gets here.
            let Ok(glob) = crate::bone_glob::BoneGlob::new(&o.pattern) else {
                continue;
            };
            for b in 0..nb {
                if glob.is_match(&skeleton.names[b]) {
                    if let Some(t) = o.error_threshold {
                        thresholds[b] = t;
                    }
                    if let Some(d) = o.shell_distance {
                        shells[b] = d;
                    }
                }
            }
        }
        BoneLimits { thresholds, shells }
    }
}

/// How a compressed clip stores its sub-tracks: the figures every report shows (a batch row,
/// `inspect`'s stats), which embed this with `#[serde(flatten)]` rather than copy its fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClipLayout {
    /// Index = bits per component (0..=24); value = number of (animated sub-track component, segment) pairs.
    pub bit_rate_histogram: Vec<u32>,
    pub default_subtracks: u32,
    pub constant_subtracks: u32,
    pub animated_subtracks: u32,
    pub segments: u32,
    /// The last sample matched the first and was dropped (the clip wraps).
    pub looping: bool,
}

/// What the compressor decided, for reports and histograms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompressionStats {
    #[serde(flatten)]
    pub layout: ClipLayout,
    /// Max error measured (float64, decoded buffer vs the raw clip) by the compressor's final
    /// check, at every sample and between samples ([`BETWEEN_ALPHAS`]).
    pub verified_max_error: f64,
    /// The same check at the stored samples alone.
    #[serde(default)]
    pub verified_max_error_at_samples: f64,
    /// Segments stored as raw float32 by the last resort (0 on every clip measured so far).
    #[serde(default)]
    pub raw_segments: u32,
    /// Bits of animated sample data per bone (every segment's widths × samples): where the
    /// bytes go, e.g. what tightening some bones costs their ancestors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_bone_bits: Vec<u64>,
}

#[derive(Clone, Debug)]
pub struct CompressedClip {
    /// The whole `.cfa` file: runtime data followed by the skeleton metadata.
    pub bytes: Vec<u8>,
    /// Size of the runtime data alone (what ACL's `compressed_size` counts: no names or metadata).
    pub runtime_bytes: usize,
    pub stats: CompressionStats,
    /// The final float64 check's full measurement of `bytes` decoded against the raw clip (at the
    /// shell distances the compressor used): callers report it instead of measuring again.
    pub error: metric::ErrorStats,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompressError {
    #[error("invalid settings: {0}")]
    InvalidSettings(String),
    /// The clip's own data cannot be compressed (not a setting to change: the file to fix).
    #[error("invalid clip: {0}")]
    InvalidClip(String),
    #[error("clip too large to compress: {0}")]
    TooLarge(String),
    /// The internal check failed (a bug): never returned silently as a bad clip.
    #[error("compressed clip failed verification: {0}")]
    Verification(String),
    /// Compressing the clip would need more memory than [`crate::limits::max_memory_bytes`].
    #[error(transparent)]
    LimitExceeded(crate::limits::OverBudget),
    /// The threshold is below float32 rounding of the clip's values (far below 0.0005 cm on
    /// every real clip measured): a refusal the caller reports apart from a broken file.
    #[error("threshold too low: {0}")]
    BelowPrecision(PrecisionFloor),
}

/// Why a clip was refused as below float32 precision: with every animated value stored as raw
/// float32, the runtime's own float32 arithmetic still misses the threshold on `bone`. In the
/// clip's units, like [`CompressionSettings::error_threshold_cm`] (cm for every importer but
/// BVH/ACL with other units; callers convert).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PrecisionFloor {
    /// The threshold that bone was held to.
    pub threshold_cm: f32,
    /// The error that bone still reaches at best: no threshold below it can be met.
    pub floor_cm: f64,
    /// The bone furthest over its own threshold.
    pub bone: String,
    /// The smallest threshold for that bone whose aim (a margin under it, for the input's
    /// float32 rounding) reaches `floor_cm`: what to raise the threshold to, at least.
    pub min_threshold_cm: f32,
}

impl std::fmt::Display for PrecisionFloor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} cm is below float32 precision for this clip: with every animated value stored as \
             raw float32 the runtime's own float32 arithmetic still reaches {} cm (bone '{}'); \
             raise the threshold to at least {} cm",
            self.threshold_cm,
            crate::figures::three_digits(self.floor_cm),
            self.bone,
            crate::figures::three_digits_up(self.min_threshold_cm as f64)
        )
    }
}

impl CompressError {
    /// The resource limit that refused the clip, if one did (a report's `limit`).
    pub fn limit(&self) -> Option<crate::limits::Limit> {
        matches!(self, Self::LimitExceeded(_)).then_some(crate::limits::Limit::Memory)
    }
}

/// Float32 rounding of the raw input moves the float64 measurement against the original file
/// by up to ~3e-5 cm, so the compressor aims that much below the threshold.
const INPUT_ROUNDING_MARGIN: f32 = 3.0e-5;

/// Blends at which the final check measures between every pair of samples (see `docs/METRIC.md`
/// for why the midpoint stands for the whole interval).
pub const BETWEEN_ALPHAS: [f32; 1] = [0.5];

/// Blends measured between samples for an additive clip (see [`verify`]).
pub const ADDITIVE_BETWEEN_ALPHAS: [f32; 5] = [0.125, 0.25, 0.5, 0.75, 0.875];

/// Stored sample holding original sample `i` (a wrapping clip's last sample is its first).
fn stored_index(i: usize, num_stored: usize) -> usize {
    if i >= num_stored { 0 } else { i }
}

/// The decoded clip at `alpha` between every pair of consecutive original samples, decoded as the
/// runtime samples it (one pose per interval).
pub fn decoded_between(reader: &ClipReader, alpha: f32) -> RawClip {
    decoded_between_with(reader, |_| alpha)
}

/// [`decoded_between`] at blend `alpha_of(s)` in interval `s` (one pose per interval).
pub fn decoded_between_with(reader: &ClipReader, alpha_of: impl Fn(usize) -> f32) -> RawClip {
    decoded_between_in(reader, alpha_of, reader.skeleton().clone())
}

/// The reader's skeleton without its names (each one empty, which allocates nothing): what the
/// float64 check's decoded clips carry. The check composes by the decoded hierarchy and never
/// reads a name, and the names were most of the cost of the skeletons it copied (44 strings
/// allocated and freed per copy, two copies per check).
fn unnamed(skeleton: &crate::skeleton::Skeleton) -> crate::skeleton::Skeleton {
    crate::skeleton::Skeleton {
        names: vec![String::new(); skeleton.num_bones()],
        parents: skeleton.parents.clone(),
        shell_distances: skeleton.shell_distances.clone(),
        precisions: skeleton.precisions.clone(),
        bind_rotations: skeleton.bind_rotations.clone(),
        bind_translations: skeleton.bind_translations.clone(),
        bind_scales: skeleton.bind_scales.clone(),
    }
}

/// [`crate::decompress::to_raw_clip`] for the float64 check: the same poses (through
/// [`RawClip::new`], which normalizes the rotations), with an [`unnamed`] skeleton; a decoded
/// value that [`RawClip::new`] refuses (validation bounds every stored float, so none does) is a
/// failed check rather than the bind pose.
fn decoded_samples(reader: &ClipReader) -> Result<RawClip, CompressError> {
    let nb = reader.num_bones();
    let n = reader.num_samples();
    let stored = reader.num_stored_samples();
    let mut rotations = vec![glam::Quat::IDENTITY; nb * n];
    let mut translations = vec![glam::Vec3::ZERO; nb * n];
    let mut scales = vec![glam::Vec3::ONE; nb * n];
    let mut pose = crate::pose::Pose::new(nb);
    for s in 0..n {
        reader.decode_sample(stored_index(s, stored), &mut pose);
        for b in 0..nb {
            rotations[b * n + s] = pose.rotations[b];
            translations[b * n + s] = pose.translations[b].into();
            scales[b * n + s] = pose.scales[b].into();
        }
    }
    RawClip::new(
        String::new(),
        unnamed(reader.skeleton()),
        reader.sample_rate(),
        n,
        rotations,
        translations,
        scales,
    )
    .map_err(|e| CompressError::Verification(format!("decoded clip: {e}")))
}

/// [`decoded_between_with`] into a clip with the given skeleton.
fn decoded_between_in(
    reader: &ClipReader,
    alpha_of: impl Fn(usize) -> f32,
    skeleton: crate::skeleton::Skeleton,
) -> RawClip {
    let nb = reader.num_bones();
    let n = reader.num_samples();
    let intervals = n.saturating_sub(1);
    let stored = reader.num_stored_samples();
    let mut rotations = vec![glam::Quat::IDENTITY; nb * intervals];
    let mut translations = vec![glam::Vec3::ZERO; nb * intervals];
    let mut scales = vec![glam::Vec3::ONE; nb * intervals];
    let mut pose = crate::pose::Pose::new(nb);
    for s in 0..intervals {
        reader.decode_blend(
            stored_index(s, stored),
            stored_index(s + 1, stored),
            alpha_of(s),
            &mut pose,
        );
        for b in 0..nb {
            rotations[b * intervals + s] = pose.rotations[b];
            translations[b * intervals + s] = pose.translations[b].into();
            scales[b * intervals + s] = pose.scales[b].into();
        }
    }
    RawClip {
        name: String::new(),
        skeleton,
        sample_rate: reader.sample_rate(),
        num_samples: intervals,
        rotations,
        translations,
        scales,
        additive: None,
    }
}

/// The float64 check of a decoded buffer against the raw clip: every sample and every
/// [`BETWEEN_ALPHAS`] blend between samples, at the given shell distances.
pub fn verify(
    clip: &RawClip,
    reader: &ClipReader,
    shells: &[f32],
) -> Result<metric::ErrorStats, CompressError> {
    Ok(verify_weighted(clip, reader, shells, None)?.0)
}

/// [`verify`], and with `weights` the same figures with each bone's errors weighed
/// ([`metric::measure_weighted`]).
pub fn verify_weighted(
    clip: &RawClip,
    reader: &ClipReader,
    shells: &[f32],
    weights: Option<&[f64]>,
) -> Result<(metric::ErrorStats, Option<metric::ErrorStats>), CompressError> {
    let decoded = decoded_samples(reader)?;
    // Over a base of several samples the base between two additive samples is interpolated on
    // its own timeline (not the nearest keys used at the samples), so the combined error has a
    // kink wherever a base key falls inside an interval: each interval is cut there and every
    // piece measured as a one-sample base's interval is ([`additive::multi_base_blends`]).
    if let Some(add) = clip.additive.as_ref().filter(|a| a.base.num_samples > 1) {
        return verify_over_multi_sample_base(clip, add, reader, &decoded, shells, weights)
            .map_err(|e| CompressError::Verification(e.to_string()));
    }
    // Additive clips are checked at five points per interval. Over a one-sample base the
    // midpoint argument holds to second order only, and an additive's quantization errors sit
    // differently in the interval than a plain clip's: on 01_03.bvh (a thumb turning fast
    // between two samples) clip_eval.py measured 0.0103 cm at 4/5 of an interval whose
    // midpoint was within the threshold.
    let alphas: &[f32] = if clip.additive.is_some() || weights.is_some() {
        // With per-bone thresholds the same five points: the midpoint bounds an interval only
        // to second order in the motion between two samples, and that remainder is measured
        // against each bone's own threshold, which for a loose bone (a thumb at 0.1 cm turning
        // fast) is where the higher-order terms are largest.
        &ADDITIVE_BETWEEN_ALPHAS
    } else {
        &BETWEEN_ALPHAS
    };
    let between: Vec<RawClip> = if clip.num_samples > 1 {
        alphas
            .iter()
            .map(|&a| decoded_between_in(reader, |_| a, unnamed(reader.skeleton())))
            .collect()
    } else {
        Vec::new()
    };
    let between: Vec<metric::Between> = between
        .iter()
        .zip(alphas.iter().copied())
        .map(|(poses, alpha)| metric::Between {
            alpha: alpha as f64,
            poses,
        })
        .collect();
    // An additive clip is measured where a game sees it: on the combined pose (the decoded
    // additive applied to the raw base, against the raw additive applied to the same base).
    match &clip.additive {
        Some(add) => crate::additive::measure_combined_weighted(
            clip, add, &decoded, &between, shells, weights,
        )
        .map_err(|e| CompressError::Verification(e.to_string())),
        None => {
            let (mut stats, weighted) =
                metric::measure_weighted(clip, &decoded, &between, shells, weights)
                    .map_err(|e| CompressError::Verification(e.to_string()))?;
            if alphas.len() == 1 {
                fast_turns_between(clip, reader, shells, &mut stats);
            }
            Ok((stats, weighted))
        }
    }
}

/// Below this |dot| between two consecutive raw rotations of a bone (a turn of more than ~106°
/// in one sample) the midpoint does not stand for the interval: its remainder grows with the
/// motion per sample (`docs/METRIC.md`). CMU 131_03's right thumb (|dot| 0.005 at sample 242):
/// `clip_eval.py --between 8` measured 0.01015 cm a third of the way through an interval whose
/// midpoint and ends were within 0.01 cm. 10 of the 42 BVH clips have such intervals (1–34),
/// 8 of the 25 ACL regression clips (1–2).
pub const FAST_TURN_DOT: f32 = 0.6;

/// The blends, besides the midpoint, at which the final check measures a plain clip's
/// [`fast_turn_intervals`] (the other points of [`ADDITIVE_BETWEEN_ALPHAS`]).
pub const FAST_TURN_ALPHAS: [f32; 4] = [0.125, 0.25, 0.75, 0.875];

/// The intervals `s` (between samples `s` and `s + 1`) where some bone's raw rotation turns
/// faster than [`FAST_TURN_DOT`]: where the final check of a plain clip measures
/// [`FAST_TURN_ALPHAS`] besides the midpoint.
pub fn fast_turn_intervals(clip: &RawClip) -> Vec<usize> {
    let n = clip.num_samples;
    if n < 2 {
        return Vec::new();
    }
    (0..n - 1)
        .filter(|&s| {
            (0..clip.num_bones()).any(|b| {
                let r = &clip.rotations[b * n..(b + 1) * n];
                r[s].dot(r[s + 1]).abs() < FAST_TURN_DOT
            })
        })
        .collect()
}

/// The midpoint check's complement on a plain clip: the [`fast_turn_intervals`] are measured at
/// [`FAST_TURN_ALPHAS`] too, one pose at a time (a few intervals: five whole-clip passes made
/// the ten BVH clips that have one 1.3–1.7 × slower to compress).
fn fast_turns_between(
    clip: &RawClip,
    reader: &ClipReader,
    shells: &[f32],
    stats: &mut metric::ErrorStats,
) {
    let fast = fast_turn_intervals(clip);
    if fast.is_empty() {
        return;
    }
    let alphas = FAST_TURN_ALPHAS.map(|a| a as f64);
    let stored = reader.num_stored_samples();
    let mut pose = crate::pose::Pose::new(reader.num_bones());
    let lossy = |s: usize, a: f64, out: &mut Vec<metric::DTransform>| {
        reader.decode_blend(
            stored_index(s, stored),
            stored_index(s + 1, stored),
            a as f32,
            &mut pose,
        );
        out.extend((0..pose.rotations.len()).map(|b| metric::DTransform {
            rotation: pose.rotations[b].as_dquat().normalize(),
            translation: glam::Vec3::from(pose.translations[b]).as_dvec3(),
            scale: glam::Vec3::from(pose.scales[b]).as_dvec3(),
        }));
    };
    metric::measure_intervals_at(clip, &fast, &alphas, lossy, shells, stats);
}

/// [`verify_weighted`] of an additive clip over a base of several samples: the samples, then the
/// points [`additive::multi_base_blends`] gives each interval, one set of decoded poses at a
/// time (the `j`-th point of every interval; an interval with fewer points measures its midpoint
/// again), so memory stays one set of poses whatever the base's length.
///
/// [`additive::multi_base_blends`]: crate::additive::multi_base_blends
fn verify_over_multi_sample_base(
    clip: &RawClip,
    add: &crate::additive::AdditiveBase,
    reader: &ClipReader,
    decoded: &RawClip,
    shells: &[f32],
    weights: Option<&[f64]>,
) -> Result<(metric::ErrorStats, Option<metric::ErrorStats>), metric::MeasureError> {
    use crate::additive::{combined_between_into, measure_combined_weighted, multi_base_blends};
    let (mut stats, mut weighted) =
        measure_combined_weighted(clip, add, decoded, &[], shells, weights)?;
    let ns = clip.num_samples;
    let blends: Vec<Vec<f64>> = (0..ns.saturating_sub(1))
        .map(|s| multi_base_blends(ns, clip.sample_rate, &add.base, s))
        .collect();
    let sets = blends.iter().map(Vec::len).max().unwrap_or(0);
    for j in 0..sets {
        // The blend as the runtime gets it (float32), for the raw and the decoded pose alike.
        let alpha_of = |s: usize| blends[s].get(j).copied().unwrap_or(0.5) as f32;
        let poses = decoded_between_with(reader, alpha_of);
        combined_between_into(
            clip,
            add,
            &poses,
            |s| alpha_of(s) as f64,
            shells,
            weights,
            &mut stats,
            weighted.as_mut(),
        )?;
    }
    Ok((stats, weighted))
}

/// What the compressor aims at for a threshold `t`: a margin under it for the float32 rounding
/// of the input ([`INPUT_ROUNDING_MARGIN`]).
fn aim(t: f32) -> f32 {
    (t - INPUT_ROUNDING_MARGIN).max(t * 0.5)
}

/// Each bone's error weight: the global aim over the bone's own, so that a weighed error within
/// the global aim is an error within the bone's own (exactly 1 for a bone at the global threshold).
pub(super) fn bone_weights(limits: &BoneLimits, threshold: f32) -> Vec<f32> {
    let global = aim(threshold);
    limits.thresholds.iter().map(|&t| global / aim(t)).collect()
}

/// Compresses a raw clip so that the measured max error stays under `settings.error_threshold`.
pub fn compress(
    clip: &RawClip,
    settings: &CompressionSettings,
) -> Result<CompressedClip, CompressError> {
    let t = settings.error_threshold;
    if !(t.is_finite() && t > 0.0) {
        return Err(CompressError::InvalidSettings(format!(
            "error threshold {t} must be positive"
        )));
    }
    if let Some(d) = settings.shell_distance
        && !(d.is_finite() && d > 0.0)
    {
        return Err(CompressError::InvalidSettings(format!(
            "shell distance {d} must be positive"
        )));
    }
    for o in &settings.bones {
        for (what, v) in [
            ("error threshold", o.error_threshold),
            ("shell distance", o.shell_distance),
        ] {
            if let Some(v) = v
                && !(v.is_finite() && v > 0.0)
            {
                return Err(CompressError::InvalidSettings(format!(
                    "bones '{}': {what} {v} must be positive",
                    o.pattern
                )));
            }
        }
    }
    if clip.num_bones() > 0 && clip.num_samples == 0 {
        return Err(CompressError::InvalidClip(
            "the clip has bones but no samples".into(),
        ));
    }
    if clip.num_samples > u32::MAX as usize / 2 {
        return Err(CompressError::TooLarge(format!(
            "{} samples",
            clip.num_samples
        )));
    }
    if let Some(add) = &clip.additive {
        crate::additive::check_base(clip, add)
            .map_err(|e| CompressError::InvalidClip(e.to_string()))?;
    }
    // Clips built in memory (not through an importer) meet the process-wide budget here.
    let (nb, ns) = (clip.num_bones(), clip.num_samples);
    let needed = crate::limits::clip_memory_estimate(nb, ns);
    let budget = crate::limits::max_memory_bytes();
    if needed > budget {
        return Err(CompressError::LimitExceeded(crate::limits::OverBudget {
            what: format!("{nb} bones x {ns} samples"),
            needed,
            budget,
        }));
    }
    let limits = settings.bone_limits(&clip.skeleton);
    let target = aim(t);
    let (done, passed) = attempt(clip, settings, &limits, target, target, Mode::Search, &[])?;
    if passed {
        return match &clip.additive {
            Some(add) => in_the_cheapest_frame(clip, settings, &limits, target, add, done),
            None => Ok(done),
        };
    }
    // Last resort: constants exact to a thousandth of the target, every rotation with its four
    // components (nothing rebuilt), then every segment that still fails stored as raw float32:
    // its error is then float32 rounding alone.
    let (done, passed) = attempt(
        clip,
        settings,
        &limits,
        target,
        target * 1e-3,
        Mode::RawWhereFailing,
        &[],
    )?;
    if passed {
        return Ok(done);
    }
    // The bone furthest over its own threshold.
    let e = &done.error;
    let worst = (0..clip.num_bones())
        .max_by(|&a, &b| {
            let r = |x: usize| e.per_bone_max[x] / limits.thresholds[x] as f64;
            r(a).total_cmp(&r(b))
        })
        .unwrap_or(e.worst_bone);
    let floor = e.per_bone_max.get(worst).copied().unwrap_or(e.max);
    Err(CompressError::BelowPrecision(PrecisionFloor {
        threshold_cm: limits.thresholds.get(worst).copied().unwrap_or(t),
        floor_cm: floor,
        bone: clip
            .skeleton
            .names
            .get(worst)
            .map_or("?", |s| s.as_str())
            .to_string(),
        // `aim(t) >= floor`, by either branch of its max.
        min_threshold_cm: (floor as f32 + INPUT_ROUNDING_MARGIN).min(2.0 * floor as f32),
    }))
}

/// Every segment stored as raw float32 and every rotation with its four components, whatever
/// the threshold: the last resort's worst case, for tests. The float64 check's result is in
/// `stats` and `error`; it is not compared with the threshold.
#[doc(hidden)]
pub fn compress_all_raw(
    clip: &RawClip,
    settings: &CompressionSettings,
) -> Result<CompressedClip, CompressError> {
    let limits = settings.bone_limits(&clip.skeleton);
    let target = aim(settings.error_threshold);
    Ok(attempt(
        clip,
        settings,
        &limits,
        target,
        target * 1e-3,
        Mode::AllRaw,
        &[],
    )?
    .0)
}

/// Bits a reference rotation costs in the buffer (three 8-bit components,
/// [`FLAG_COMPACT_REFERENCES`]).
///
/// [`FLAG_COMPACT_REFERENCES`]: crate::runtime::format::FLAG_COMPACT_REFERENCES
const REFERENCE_BITS: u64 = 24;
/// Mixes of frames measured at most for an additive clip (each one a compression; a mix that
/// repeats an earlier one, fails the check or is not smaller than the best buffer so far ends
/// the rounds). On the 42 BVH clips relative to their first frame, one round left 4 clips
/// larger than plain, three rounds 2 (`docs/BENCHMARKS.md`).
const FRAME_MIX_ROUNDS: usize = 4;
/// After the rounds, the polish: the mix once more for each margin, a reference kept only where
/// it saves its own [`REFERENCE_BITS`] and the margin. A bone's bits move by hundreds between
/// two measurements of nearly the same data (CMU 131_01: the same rotations in a frame turned
/// by half a degree), so a reference that gains less than that is as likely a loss as a gain;
/// each margin drops the references below it, and the smallest buffer is kept. Measured on the
/// 67 real clips (`docs/BENCHMARKS.md`): with the early end of the rounds, as many compressions
/// as the rounds alone took before, and smaller totals.
const POLISH_MARGINS: [u64; 3] = [16, 48, 128];

/// An additive clip's rotations each in the frame that costs the fewest bits. Relative to a base
/// the clip leaves far behind (CMU 131_01's right thumb turns 160° away from its first frame),
/// an additive rotation track covers as wide a region of the unit sphere as the pose's own,
/// turned by the base's inverse: its ranges and dropped components fall differently, and over
/// a long clip that cost up to 1% more than the same clip compressed plain. A rotation can be
/// stored relative to a reference ([`FLAG_ROTATION_REFERENCES`]); two are tried for every
/// bone: the base's own rotation at the first sample (which turns an additive over its first
/// frame back into the pose's rotation exactly) and the track's mean (which centres the track
/// on the identity: its largest component is then w throughout, and the kept components move
/// like the rotation itself). The clip is compressed with each frame for every bone, then once
/// more with each bone in the frame its bits were fewest in (a reference costs
/// [`REFERENCE_BITS`]) while that finds smaller buffers, then with the [`POLISH_MARGINS`], and
/// the smallest buffer that passed the float64 check is returned (`none`, the buffer without
/// references, when nothing is smaller). Additive clips only: a plain clip's output does not
/// change.
///
/// [`FLAG_ROTATION_REFERENCES`]: crate::runtime::format::FLAG_ROTATION_REFERENCES
fn in_the_cheapest_frame(
    clip: &RawClip,
    settings: &CompressionSettings,
    limits: &BoneLimits,
    target: f32,
    add: &crate::additive::AdditiveBase,
    none: CompressedClip,
) -> Result<CompressedClip, CompressError> {
    let (nb, ns) = (clip.num_bones(), clip.num_samples);
    if ns < 2 || add.base.num_samples == 0 {
        return Ok(none);
    }
    // A reference that is stored as the identity leaves the frame as it is.
    let useful =
        |r: glam::Quat| (crate::runtime::format::reference_encode3(r) != [0; 3]).then_some(r);
    let k = crate::additive::base_sample_index(ns, clip.sample_rate, &add.base, 0);
    let base_frame: Vec<Option<glam::Quat>> = (0..nb)
        .map(|b| {
            let r = add.base.rotations[add.base.index(b, k)]
                .as_dquat()
                .normalize();
            useful(r.conjugate().as_quat())
        })
        .collect();
    let mean_frame: Vec<Option<glam::Quat>> = (0..nb)
        .map(|b| {
            let rots: Vec<glam::Quat> = (0..ns)
                .map(|s| {
                    clip.rotations[clip.index(b, s)]
                        .as_dquat()
                        .normalize()
                        .as_quat()
                })
                .collect();
            useful(prepare::mean_rotation(&rots))
        })
        .collect();
    let bits = |c: &CompressedClip, b: usize| c.stats.per_bone_bits.get(b).copied().unwrap_or(0);
    // Frames: 0 none, 1 the base's, 2 the mean. Per bone and frame, its bits in the last buffer
    // measured with the bone in that frame (references included); u64::MAX when not measured.
    let frames = [vec![None; nb], base_frame, mean_frame];
    let mut cost = vec![[u64::MAX; 3]; nb];
    for (b, c) in cost.iter_mut().enumerate() {
        c[0] = bits(&none, b);
    }
    let mut best = none;
    let record = |cost: &mut Vec<[u64; 3]>, c: &CompressedClip, choice: &[usize]| {
        for (b, &f) in choice.iter().enumerate() {
            cost[b][f] = bits(c, b) + if f > 0 { REFERENCE_BITS } else { 0 };
        }
    };
    for f in 1..3 {
        if frames[f].iter().all(Option::is_none) {
            continue;
        }
        let (c, passed) = attempt(
            clip,
            settings,
            limits,
            target,
            target,
            Mode::Search,
            &frames[f],
        )?;
        if !passed {
            continue;
        }
        let choice: Vec<usize> = (0..nb)
            .map(|b| if frames[f][b].is_some() { f } else { 0 })
            .collect();
        record(&mut cost, &c, &choice);
        if c.runtime_bytes < best.runtime_bytes {
            best = c;
        }
    }
    // Each bone in its cheapest frame; the bones' bits depend on each other (the search shares
    // the error budget along chains), so the mix is measured, its figures replace the ones it
    // was chosen on, and a changed choice is measured again.
    let mut tried: Vec<Vec<usize>> = Vec::new();
    let margins = std::iter::repeat_n(0, FRAME_MIX_ROUNDS).chain(POLISH_MARGINS);
    let mut rounds_over = false;
    for (i, margin) in margins.enumerate() {
        if i < FRAME_MIX_ROUNDS && rounds_over {
            continue;
        }
        let choice: Vec<usize> = cost
            .iter()
            .map(|c| {
                (0..3)
                    .min_by_key(|&f| c[f].saturating_add(if f > 0 { margin } else { 0 }))
                    .unwrap_or(0)
            })
            .collect();
        if choice.iter().all(|&f| f == 0) || tried.contains(&choice) {
            rounds_over = true;
            continue;
        }
        let mixed: Vec<Option<glam::Quat>> = (0..nb).map(|b| frames[choice[b]][b]).collect();
        let (c, passed) = attempt(clip, settings, limits, target, target, Mode::Search, &mixed)?;
        if !passed {
            rounds_over = true;
            continue;
        }
        record(&mut cost, &c, &choice);
        tried.push(choice);
        if c.runtime_bytes < best.runtime_bytes {
            best = c;
        } else {
            rounds_over = true;
        }
    }
    Ok(best)
}

/// How an attempt searches and what it does with a segment that fails the float64 check.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Searched; a failing segment is searched again with a tighter target.
    Search,
    /// Searched; a failing segment is stored as raw float32.
    RawWhereFailing,
    /// Every segment raw float32 (tests).
    AllRaw,
}

/// [`verify_weighted`] of an attempt's buffer. A clip without bones (and not additive) has no
/// error: it gets the figures measuring its decoded buffer gives (every one 0, a sample's and an
/// interval's maximum each) without decoding every sample and interval into poses of nothing
/// or measuring them.
fn check(
    clip: &RawClip,
    reader: &ClipReader,
    shells: &[f32],
    weights: Option<&[f64]>,
) -> Result<(metric::ErrorStats, Option<metric::ErrorStats>), CompressError> {
    if clip.num_bones() > 0 || clip.additive.is_some() {
        return verify_weighted(clip, reader, shells, weights);
    }
    let ns = clip.num_samples;
    let stats = metric::ErrorStats {
        per_sample_max: vec![0.0; ns],
        per_interval_max: vec![0.0; ns.saturating_sub(1)],
        ..Default::default()
    };
    let weighted = weights.map(|_| stats.clone());
    Ok((stats, weighted))
}

/// What [`attempt`] keeps per segment between its rounds.
#[derive(Clone, Copy)]
struct SegmentState {
    /// The search's target (tightened for a segment that failed the float64 check).
    target: f32,
    /// Stored as raw float32 (the last resort).
    raw: bool,
    /// The budget multiplier the segment's search ended at (the next segment starts there).
    end: f32,
    /// This round's worst error of the samples and intervals the segment's choices take part in.
    worst: f64,
}

/// The segments whose worst error is over `target`: the worst error each segment's choices take
/// part in (its samples and the intervals that touch them; the wrapped last sample is stored
/// sample 0), kept in `segs`.
fn failing_segments(
    prepared: &prepare::Prepared,
    segs: &mut [SegmentState],
    judged: &metric::ErrorStats,
    target: f32,
) -> Vec<usize> {
    for x in segs.iter_mut() {
        x.worst = 0.0;
    }
    let seg_of = |i: usize| {
        (stored_index(i, prepared.num_stored) / prepared.segment_size)
            .min(prepared.num_segments.saturating_sub(1))
    };
    for (i, &e) in judged.per_sample_max.iter().enumerate() {
        let s = seg_of(i);
        segs[s].worst = segs[s].worst.max(e);
    }
    for (i, &e) in judged.per_interval_max.iter().enumerate() {
        for s in [seg_of(i), seg_of(i + 1)] {
            segs[s].worst = segs[s].worst.max(e);
        }
    }
    (0..prepared.num_segments)
        .filter(|&s| segs[s].worst > target as f64)
        .collect()
}

/// One classification of the whole clip with `prepare_target`, then searches and float64
/// checks of the encoded buffer; the last encoding and whether it passed the check.
fn attempt(
    clip: &RawClip,
    settings: &CompressionSettings,
    limits: &BoneLimits,
    target: f32,
    prepare_target: f32,
    mode: Mode,
    references: &[Option<glam::Quat>],
) -> Result<(CompressedClip, bool), CompressError> {
    let weights = bone_weights(limits, settings.error_threshold);
    // Weighed measurements only when some bone has a threshold of its own (the same figures
    // otherwise, measured once).
    let uniform = limits.uniform(settings.error_threshold);
    let weights64: Vec<f64> = weights.iter().map(|&w| w as f64).collect();
    // The last resort keeps all four components of every rotation: nothing is rebuilt.
    let prepared = prepare::prepare_with(
        clip,
        &limits.shells,
        weights,
        prepare_target,
        mode != Mode::Search,
        SEGMENT_SIZE,
        references,
    );
    // Per segment: its search target, whether it is stored raw, the budget multiplier its
    // search ended at and its worst error in the last check (one vector, not four: on the
    // smallest clips each allocation is a few per cent of the compression).
    let mut segs = vec![
        SegmentState {
            target: prepare_target * search::SEARCH_SAFETY,
            raw: mode == Mode::AllRaw,
            end: 2.0,
            worst: 0.0,
        };
        prepared.num_segments
    ];
    let rounds = match mode {
        // A bone with a looser threshold of its own starts further from what a segment whose
        // error between samples is far above its error at the samples needs (a rotation
        // turning near half way round between two samples: 5.9 cm at the midpoint of a thumb
        // in CMU 131_02 on the first round), so it gets more rounds to get there.
        Mode::Search if !uniform => 12,
        Mode::Search => 6,
        _ => 3,
    };
    // The search measures in float32; the final check decodes the real buffer and measures in
    // float64. A segment that fails it (rare) is searched again with a tighter target; the
    // others keep their choices (a segment's search reads no other segment's choice), so a
    // retry round costs one segment's search and the check, not the whole clip's search again
    // (before, 01_03.bvh spent half its time re-searching 281 passing segments for one).
    // Each segment's search starts from the budget multiplier the one before it ended at.
    let mut choices: Vec<search::SegmentChoice> = Vec::with_capacity(prepared.num_segments);
    // The segments to search again after the first round (the first searches every one: no
    // list of them all is allocated).
    let mut redo: Vec<usize> = Vec::new();
    for round in 0..rounds {
        let todo = if round == 0 { &[][..] } else { &redo[..] };
        let all = (round == 0).then_some(0..prepared.num_segments);
        for s in all.into_iter().flatten().chain(todo.iter().copied()) {
            let choice = if segs[s].raw {
                search::raw_segment(&prepared, s)
            } else if prepared.tracks.is_empty() {
                // Nothing animated: nothing to choose (what the search returns, without its
                // per-bone tables).
                search::SegmentChoice::default()
            } else {
                let start = if s > 0 { segs[s - 1].end } else { 2.0 };
                let (c, m) = search::search_segment(&prepared, s, segs[s].target, start);
                segs[s].end = m;
                c
            };
            match choices.get_mut(s) {
                Some(slot) => *slot = choice,
                None => choices.push(choice),
            }
        }
        let (bytes, runtime_bytes) = encode::encode(clip, &prepared, &choices);
        // The read-back stays even with no bones: it is what refuses a buffer the runtime
        // would not read (a hostile sample count or rate in a clip built in memory).
        let reader = ClipReader::new(&bytes).map_err(|e| {
            CompressError::Verification(format!("encoded buffer does not read back: {e}"))
        })?;
        let weights = (!uniform).then_some(&weights64[..]);
        let (mut stats, weighted) = check(clip, &reader, &prepared.shells, weights)?;
        if !uniform {
            stats.per_bone_threshold = limits.thresholds.clone();
        }
        // Segments are judged on the weighed errors: each bone against its own threshold.
        let judged = weighted.as_ref().unwrap_or(&stats);
        let failing = failing_segments(&prepared, &mut segs, judged, target);
        let last = round + 1 == rounds;
        if failing.is_empty() || last {
            let histogram = encode::histogram(&choices);
            let mut per_bone_bits = vec![0u64; prepared.num_bones];
            for (s, c) in choices.iter().enumerate() {
                let len = prepared.segment_span(s).1 as u64;
                for (k, w) in c.widths.iter().enumerate() {
                    per_bone_bits[prepared.tracks[k].bone] += w.iter().sum::<u32>() as u64 * len;
                }
            }
            let done = CompressedClip {
                bytes,
                runtime_bytes,
                stats: CompressionStats {
                    layout: ClipLayout {
                        bit_rate_histogram: histogram,
                        default_subtracks: prepared
                            .count_kind(crate::runtime::format::KIND_DEFAULT),
                        constant_subtracks: prepared
                            .count_kind(crate::runtime::format::KIND_CONSTANT)
                            + prepared.count_kind(crate::runtime::format::KIND_CONSTANT_Q),
                        animated_subtracks: prepared.tracks.len() as u32,
                        segments: prepared.num_segments as u32,
                        looping: prepared.wrap,
                    },
                    verified_max_error: stats.max,
                    verified_max_error_at_samples: stats.max_at_samples,
                    raw_segments: segs.iter().filter(|x| x.raw).count() as u32,
                    per_bone_bits,
                },
                error: stats,
            };
            return Ok((done, failing.is_empty()));
        }
        for &s in &failing {
            match mode {
                Mode::Search => segs[s].target *= 0.7,
                _ => segs[s].raw = true,
            }
        }
        redo = failing;
    }
    unreachable!("the last round returns")
}
