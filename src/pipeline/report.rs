//! Report types: one object per clip plus totals. The JSON keys are stable (scripts read them).

use crate::anim::CompressionSettings;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClipReport {
    pub input: String,
    pub output: Option<String>,
    /// Clip name (a glTF file holds several).
    pub clip: String,
    pub format: String,
    pub bones: usize,
    pub samples: usize,
    pub sample_rate: f32,
    pub duration_s: f32,
    /// 10 float32 per bone per sample, as ACL counts.
    pub raw_bytes: u64,
    /// Runtime data alone, no names or metadata (what ACL's compressed_size counts).
    pub compressed_bytes: u64,
    /// The whole `.cfa` file, skeleton metadata included.
    pub file_bytes: u64,
    pub ratio: f64,
    pub max_error_cm: f64,
    pub mean_error_cm: f64,
    pub worst_bone: Option<String>,
    pub worst_sample: Option<usize>,
    /// Compression alone (no file reading, no final error measurement), as ACL times itself.
    pub compress_ms: f64,
    /// Index = bits per component; value = number of sub-track components × segments.
    pub bit_rate_histogram: Vec<u32>,
    pub default_subtracks: u32,
    pub constant_subtracks: u32,
    pub animated_subtracks: u32,
    pub segments: u32,
    pub looping: bool,
    pub per_bone_max_error_cm: Vec<f64>,
    /// Max error over all bones at each sample (error over time).
    pub per_sample_max_error_cm: Vec<f64>,
    /// True when the skip cache said the output is up to date.
    pub skipped: bool,
    /// Null, or why this clip failed.
    pub error: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub clips: usize,
    pub failed: usize,
    pub skipped: usize,
    pub raw_bytes: u64,
    pub compressed_bytes: u64,
    pub ratio: f64,
    pub max_error_cm: f64,
    pub compress_ms: f64,
    pub wall_ms: f64,
    /// Raw kilobytes compressed per second of wall time.
    pub throughput_kb_s: f64,
    pub compress_ms_p50: f64,
    pub compress_ms_p85: f64,
    pub compress_ms_p99: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchReport {
    pub settings: CompressionSettings,
    pub clips: Vec<ClipReport>,
    pub totals: Totals,
}
