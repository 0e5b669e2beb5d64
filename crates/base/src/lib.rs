//! The base under the libraries that touch files: atomic file writes and regular-file reads
//! ([`fsio`]), progress and cancellation ([`task`]) and the debounced file watcher
//! ([`watcher`]). Both the clip pipeline and the header profiler use them; neither depends on
//! the other.

pub mod fsio;
pub mod task;
pub mod text;
pub mod watcher;
