//! Batch jobs shared by the CLI and the app: scanning folders for clips, compressing them in
//! parallel with progress and cancellation, the skip cache, folder watching and the JSON/CSV reports.
//!
//! CONTRACT STUB: signatures are final, bodies land with the pipeline change.

pub mod report;

use crate::anim::CompressionSettings;
use report::BatchReport;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One clip file found by a scan (a glTF file with several animations is still one entry).
#[derive(Clone, Debug, PartialEq)]
pub struct ClipFile {
    pub path: PathBuf,
    /// Path relative to the scanned root (mirrored under the output folder).
    pub relative: PathBuf,
    pub format: crate::anim::formats::ClipFormat,
    pub size_bytes: u64,
}

/// Recursively lists every supported clip file under `root` (a file is returned as itself), sorted by path.
pub fn scan(root: &Path) -> Vec<ClipFile> {
    let _ = root;
    Vec::new()
}

/// Shared cancellation flag: set it from any thread; running jobs stop at the next clip boundary
/// (and inside long clips) and write nothing partial.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed)
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Live counters a UI or the CLI reads while a batch runs.
#[derive(Debug, Default)]
pub struct Progress {
    pub total_clips: AtomicU64,
    pub done_clips: AtomicU64,
    pub failed_clips: AtomicU64,
    pub skipped_clips: AtomicU64,
    /// Raw bytes (10 float32 per bone per sample) of the clips finished so far.
    pub raw_bytes_done: AtomicU64,
}

/// What a batch does.
#[derive(Clone, Debug)]
pub struct BatchOptions {
    pub settings: CompressionSettings,
    pub output_root: PathBuf,
    /// Worker threads; 0 = all cores.
    pub jobs: usize,
    /// Skip clips whose input content and settings match the skip cache.
    pub use_skip_cache: bool,
}

/// Compresses every clip of `files` (from [`scan`] of `input_root`) into `options.output_root`,
/// mirroring the tree, one `.cfa` per clip. Failures are reported per clip; the batch goes on.
pub fn run_batch(
    files: &[ClipFile],
    options: &BatchOptions,
    progress: &Progress,
    cancel: &CancelToken,
) -> BatchReport {
    let _ = (files, options, progress, cancel);
    BatchReport::default()
}
