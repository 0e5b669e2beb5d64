//! Offline compression: constant/default detection, range reduction, segmenting and the
//! bit-rate search. Produces the buffer described in `docs/FORMAT.md`.
//!
//! PLACEHOLDER: stores every value as float32 until the real codec lands.

use super::clip::RawClip;
use serde::{Deserialize, Serialize};
use std::fmt;

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
    /// Number of animated sub-track components × segments using each bit width (index = bits, 0..=32).
    pub bit_rate_histogram: Vec<u32>,
    pub default_subtracks: u32,
    pub constant_subtracks: u32,
    pub animated_subtracks: u32,
    pub segments: u32,
    /// The last sample matched the first and was dropped (the clip wraps).
    pub looping: bool,
}

#[derive(Clone, Debug)]
pub struct CompressedClip {
    /// The whole `.cfa` file: runtime data followed by the skeleton metadata.
    pub bytes: Vec<u8>,
    /// Size of the runtime data alone (what ACL's `compressed_size` counts: no names or metadata).
    pub runtime_bytes: usize,
    pub stats: CompressionStats,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CompressError {
    TooLarge(String),
}

impl fmt::Display for CompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompressError::TooLarge(s) => write!(f, "clip too large to compress: {s}"),
        }
    }
}

impl std::error::Error for CompressError {}

/// Compresses a raw clip.
pub fn compress(
    clip: &RawClip,
    _settings: &CompressionSettings,
) -> Result<CompressedClip, CompressError> {
    let bytes = super::runtime::placeholder_encode(clip);
    let n = bytes.len();
    Ok(CompressedClip {
        bytes,
        runtime_bytes: n,
        stats: CompressionStats::default(),
    })
}
