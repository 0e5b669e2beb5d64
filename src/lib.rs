//! ClipForge: an asset-pipeline workbench for game teams.
//!
//! Layers, dependencies pointing downward only:
//! - [`gui`] (feature `gui`): the egui desktop app, one file per view.
//! - [`pipeline`]: batch jobs, progress, cancellation, the skip cache, folder watching, reports.
//! - [`anim`]: the animation clip codec (raw data, importers, compression, runtime format, error metric).
//! - [`headers`]: the C/C++ header profiler.
//! - [`task`]: progress and cancellation shared by batches, pipelines and header scans.
//! - [`watcher`]: the file-system watcher (notify + debouncer) shared by pipelines and headers.
//! - [`fsio`]: atomic file writes, used by the layers above.

// Parallel arrays indexed by bone (structure-of-arrays) read best as index loops.
#![allow(clippy::needless_range_loop)]

pub mod anim;
pub mod fsio;
pub mod headers;
pub mod pipeline;
pub mod task;
pub mod watcher;

#[cfg(feature = "gui")]
pub mod gui;
