//! Batch jobs shared by the CLI and the app: scanning folders for clips, compressing them in
//! parallel with progress and cancellation, the skip cache, folder watching and the JSON/CSV reports.
//!
//! The behaviour (output naming, cache, deleted inputs) is documented in `docs/PIPELINE.md`.

// Parallel arrays indexed by position read best as index loops.
#![allow(clippy::needless_range_loop)]

pub mod ab;
pub mod batch;
pub mod cache;
pub mod clip_detail;
pub mod fingerprint;
pub mod folder_settings;
pub mod input;
pub mod interrupt;
pub(crate) mod job;
pub mod mesh;
pub mod naming;
pub mod output_lock;
pub(crate) mod process;

pub mod pipelines;
pub mod report;
pub mod scalar;
pub mod scan;
pub mod watch;

// The crate's public paths from before it was split by concern (the CLI, the app and the tests
// use them).
pub use batch::{
    cached_results, lower_thread_priority, run_batch, run_batch_configured, run_batch_with,
};
pub use cache::CACHE_FILE_NAME;
pub use fingerprint::settings_key;
pub use input::{ClipFile, ReadError, read_input};
pub use job::BatchOptions;
pub use naming::{clip_output_path, clip_stem, output_base, plan_outputs, sanitize_name};
pub use scan::{
    LinkSkip, ScanOptions, ScanResult, SkippedLink, SpecialFile, scan, scan_with, scan_with_special,
};

/// Which limit refused a clip: a report's `limit` is its [`Limit::as_str`], taken from the
/// error's variant ([`ReadError::limit`], [`clipforge_anim::formats::ImportError::limit`],
/// [`clipforge_anim::CompressError::limit`]).
pub use clipforge_anim::limits::Limit;

/// Cancellation and progress live in [`clipforge_base::task`], shared with the header profiler.
pub use clipforge_base::task::{CancelToken, ClipCounters};

/// Live counters a UI or the CLI reads while a batch runs (see [`ClipCounters`]).
pub type Progress = clipforge_base::task::Progress<ClipCounters>;

// Atomic writes: in [`clipforge_base::fsio`], shared with the header profiler's cache.
pub use clipforge_base::fsio::{is_temp_file, write_atomic};
