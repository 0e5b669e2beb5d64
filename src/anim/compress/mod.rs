//! Offline compression. Every sample is kept (uniform sampling). Per clip: loop detection,
//! default/constant sub-track detection measured with the error metric, a dropped quaternion
//! component chosen per track, clip range reduction. Per segment of ~16 samples: 8-bit segment
//! ranges and a bit width per component of every animated sub-track, chosen by a
//! hierarchy-aware search ([`search`]). The result is verified by decoding it and measuring the
//! error in float64 before it is returned. Layout: `docs/FORMAT.md`.

mod encode;
mod prepare;
mod search;

use super::clip::RawClip;
use super::error;
use super::runtime::ClipReader;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Samples per segment (the last segment absorbs a short remainder).
pub const SEGMENT_SIZE: usize = 16;

/// What the user controls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompressionSettings {
    /// Max object-space virtual-vertex error allowed, in clip units (cm).
    pub error_threshold: f32,
    /// Overrides every bone's shell distance (virtual vertex distance) when set.
    pub shell_distance: Option<f32>,
}

impl Default for CompressionSettings {
    fn default() -> Self {
        Self {
            error_threshold: 0.01,
            shell_distance: None,
        }
    }
}

/// What the compressor decided, for reports and histograms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompressionStats {
    /// Index = bits per component (0..=24); value = number of (animated sub-track component, segment) pairs.
    pub bit_rate_histogram: Vec<u32>,
    pub default_subtracks: u32,
    pub constant_subtracks: u32,
    pub animated_subtracks: u32,
    pub segments: u32,
    /// The last sample matched the first and was dropped (the clip wraps).
    pub looping: bool,
    /// Max error measured (float64, decoded buffer vs the raw clip) by the compressor's final check.
    pub verified_max_error: f64,
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
    pub error: error::ErrorStats,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CompressError {
    InvalidSettings(String),
    TooLarge(String),
    /// The internal check failed (a bug): never returned silently as a bad clip.
    Verification(String),
    /// Compressing the clip would need more memory than [`crate::anim::limits::max_memory_bytes`];
    /// the message carries [`crate::anim::limits::OVER_BUDGET`].
    LimitExceeded(String),
}

impl fmt::Display for CompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompressError::InvalidSettings(s) => write!(f, "invalid settings: {s}"),
            CompressError::TooLarge(s) => write!(f, "clip too large to compress: {s}"),
            CompressError::Verification(s) => write!(f, "compressed clip failed verification: {s}"),
            CompressError::LimitExceeded(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for CompressError {}

/// Float32 rounding of the raw input moves the float64 measurement against the original file
/// by up to ~3e-5 cm, so the compressor aims that much below the threshold.
const INPUT_ROUNDING_MARGIN: f32 = 3.0e-5;

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
    if clip.num_bones() > 0 && clip.num_samples == 0 {
        return Err(CompressError::InvalidSettings(
            "the clip has bones but no samples".into(),
        ));
    }
    if clip.num_samples > u32::MAX as usize / 2 {
        return Err(CompressError::TooLarge(format!(
            "{} samples",
            clip.num_samples
        )));
    }
    // Clips built in memory (not through an importer) meet the process-wide budget here.
    let (nb, ns) = (clip.num_bones(), clip.num_samples);
    let needed = crate::anim::limits::clip_memory_estimate(nb, ns);
    let budget = crate::anim::limits::max_memory_bytes();
    if needed > budget {
        return Err(CompressError::LimitExceeded(
            crate::anim::limits::over_budget_message(
                &format!("{nb} bones x {ns} samples"),
                needed,
                budget,
            ),
        ));
    }
    let target = (t - INPUT_ROUNDING_MARGIN).max(t * 0.5);
    // Normal search first; if a segment still fails the float64 check after tightening, one
    // near-lossless attempt (exact constants only, a far lower target so the finest widths win).
    for (prepare_target, attempts) in [(target, 6), (target * 1e-3, 1)] {
        if let Some(done) = attempt(clip, settings, target, prepare_target, attempts)? {
            return Ok(done);
        }
    }
    Err(CompressError::Verification(format!(
        "could not meet {t} after tightening the search; please report this clip"
    )))
}

/// One search of the whole clip with `prepare_target` driving classification and the search;
/// `Ok(None)` when the float64 check still fails after `attempts` tightenings.
fn attempt(
    clip: &RawClip,
    settings: &CompressionSettings,
    target: f32,
    prepare_target: f32,
    attempts: usize,
) -> Result<Option<CompressedClip>, CompressError> {
    let prepared = prepare::prepare(clip, settings, prepare_target);
    let mut segment_targets = vec![prepare_target * search::SEARCH_SAFETY; prepared.num_segments];
    // The search measures in float32; the final check decodes the real buffer and measures in
    // float64. A segment that fails it (rare) is searched again with a tighter target.
    for _attempt in 0..attempts {
        let mut start = 2.0f32;
        let choices: Vec<search::SegmentChoice> = (0..prepared.num_segments)
            .map(|s| {
                let (c, m) = search::search_segment(&prepared, s, segment_targets[s], start);
                start = m;
                c
            })
            .collect();
        let (bytes, runtime_bytes) = encode::encode(clip, &prepared, &choices);
        let reader = ClipReader::new(&bytes).map_err(|e| {
            CompressError::Verification(format!("encoded buffer does not read back: {e}"))
        })?;
        let decoded = reader.to_raw_clip();
        let stats = error::measure_with_shells(clip, &decoded, &prepared.shells)
            .map_err(CompressError::Verification)?;
        let failing: Vec<usize> = (0..prepared.num_segments)
            .filter(|&s| {
                let (start, len) = prepared.segment_span(s);
                let mut worst = (start..start + len)
                    .map(|i| stats.per_sample_max[i])
                    .fold(0.0, f64::max);
                if s == 0 && prepared.wrap {
                    worst = worst.max(stats.per_sample_max[clip.num_samples - 1]);
                }
                worst > target as f64
            })
            .collect();
        if failing.is_empty() {
            let histogram = encode::histogram(&choices);
            return Ok(Some(CompressedClip {
                bytes,
                runtime_bytes,
                stats: CompressionStats {
                    bit_rate_histogram: histogram,
                    default_subtracks: prepared
                        .count_kind(crate::anim::runtime::format::KIND_DEFAULT),
                    constant_subtracks: prepared
                        .count_kind(crate::anim::runtime::format::KIND_CONSTANT)
                        + prepared.count_kind(crate::anim::runtime::format::KIND_CONSTANT_Q),
                    animated_subtracks: prepared.tracks.len() as u32,
                    segments: prepared.num_segments as u32,
                    looping: prepared.wrap,
                    verified_max_error: stats.max,
                },
                error: stats,
            }));
        }
        for s in failing {
            segment_targets[s] *= 0.7;
        }
    }
    Ok(None)
}
