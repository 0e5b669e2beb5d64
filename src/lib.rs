//! ClipForge: an asset-pipeline workbench for game teams. This root package is the CLI
//! ([`cli`]) and the desktop app ([`gui`], feature `gui`) over the workspace's libraries:
//!
//! - [`pipeline`] (`clipforge-pipeline`): batch jobs, progress, cancellation, the skip cache,
//!   folder settings, watching, reports.
//! - [`anim`] (`clipforge-anim`): the offline animation codec (raw clips, importers, compressor,
//!   metric, lab), over [`runtime`] (`clipforge-runtime`, the reader and sampling that games link).
//! - [`headers`] (`clipforge-headers`): the C/C++ header profiler, independent of the codec.
//! - [`base`] (`clipforge-base`): atomic file writes, progress and cancellation, the file watcher.
//!
//! The crate graph keeps the layering: dependencies point downward only. See
//! `docs/ARCHITECTURE.md`.

// Parallel arrays indexed by bone (structure-of-arrays) read best as index loops.
#![allow(clippy::needless_range_loop)]

pub use clipforge_anim as anim;
pub use clipforge_base as base;
pub use clipforge_base::{fsio, task, watcher};
pub use clipforge_headers as headers;
pub use clipforge_pipeline as pipeline;
pub use clipforge_runtime as runtime;

pub mod cli;

#[cfg(feature = "gui")]
pub mod gui;
