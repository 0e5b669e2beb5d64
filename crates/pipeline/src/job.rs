//! One input file's job in a batch (or the watcher) and what it produced: the batch's options,
//! the per-file job, its outcome, the report row every path starts from, and counting a finished
//! row into the live counters. Shared by the per-file steps (`process`), scalar track lists
//! (`scalar`), batches and the watcher.

use crate::cache::SkipCache;
use crate::folder_settings;
use crate::input::ClipFile;
use crate::report::{ClipReport, ClipStatus};
use crate::{CancelToken, ClipCounters, Progress};
use clipforge_anim::CompressionSettings;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// Counting a finished row into the batch's counters (a trait because [`ClipCounters`] lives in
/// `clipforge-base`, which knows nothing of reports).
pub(crate) trait RecordRow {
    fn record(&self, row: &ClipReport);
}

impl RecordRow for ClipCounters {
    fn record(&self, row: &ClipReport) {
        match row.status() {
            ClipStatus::Skipped => {
                self.skipped_clips.fetch_add(1, Ordering::Relaxed);
            }
            ClipStatus::Failed => {
                self.failed_clips.fetch_add(1, Ordering::Relaxed);
            }
            // A refusal below float32 precision is not a failure (the summaries count it).
            ClipStatus::Compressed | ClipStatus::Cancelled | ClipStatus::BelowPrecision => {}
        }
        if row.error.is_none() {
            self.raw_bytes_done
                .fetch_add(row.raw_bytes, Ordering::Relaxed);
        }
        self.done_clips.fetch_add(1, Ordering::Relaxed);
    }
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

/// What processing one input file produced.
pub(crate) struct FileOutcome {
    pub rows: Vec<ClipReport>,
    /// The importer refused the file (maybe still being written: the watcher retries these).
    pub import_failed: bool,
    /// Outputs written or kept, relative to the output root.
    pub outputs: Vec<PathBuf>,
}

pub(crate) struct FileJob<'a> {
    pub file: &'a ClipFile,
    /// Output base relative to the output root (see [`crate::naming::output_base`]).
    pub base: PathBuf,
    pub options: &'a BatchOptions,
    pub settings_key: &'a str,
    /// The settings that apply to this file (folder settings and explicit options merged).
    pub resolved: &'a folder_settings::Resolved,
    pub cache: &'a SkipCache,
    pub cancel: &'a CancelToken,
    pub progress: &'a Progress,
}

pub(crate) fn row_for(file: &ClipFile, clip: &str) -> ClipReport {
    ClipReport {
        input: file.path.display().to_string(),
        clip: clip.to_string(),
        format: file.format.label().to_string(),
        ..Default::default()
    }
}

/// The row of a file whose folder settings (`clipforge.toml`) cannot be used: not compressed.
pub(crate) fn settings_unusable_row(file: &ClipFile, e: &dyn std::fmt::Display) -> ClipReport {
    ClipReport {
        error: Some(format!(
            "{}: not compressed: the folder settings do not apply: {e}",
            file.path.display()
        )),
        failure: Some(crate::report::Failure::Settings),
        ..row_for(file, &crate::naming::clip_stem(&file.path))
    }
}

pub(crate) fn cancelled_row(file: &ClipFile, clip: &str) -> ClipReport {
    ClipReport {
        error: Some(format!(
            "{}: cancelled before it was compressed",
            file.path.display()
        )),
        cancelled: true,
        ..row_for(file, clip)
    }
}

/// The canonical root folder `file.relative` is relative to.
pub(crate) fn input_root_of(file: &ClipFile) -> String {
    let n = file.relative.components().count();
    file.path
        .ancestors()
        .nth(n)
        .and_then(|r| r.canonicalize().ok())
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_default()
}
