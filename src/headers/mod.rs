//! The C/C++ header profiler, with no UI: scanning, directives, include resolution, the graph,
//! the report and the cache.
//!
//! PLACEHOLDER: lands with the header profiler change.

pub mod cli;
