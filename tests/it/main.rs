//! The root package's integration tests in one binary (issue 29, item 6): a folder per crate
//! under test (anim, runtime, headers, pipeline) and one each for the CLI and the app, a module
//! per concern, helpers in [`common`]. One binary links the crates once instead of once per
//! test file, which is what made `cargo test` slow after touching one file.
//!
//! Modules that need the app carry `#![cfg(feature = "gui")]`. `runtime::api` installs the
//! binary's counting allocator (it counts per thread, so tests running beside it do not disturb
//! its counts). Tests that measure a child's memory run it under a small parent of its own
//! (`pipeline::nothing_lost`): a child's peak RSS counts the process that spawned it. The fuzz
//! replay (`tests/fuzz_regressions.rs`) is a binary of its own: it sets process-wide fuzzing
//! limits.

#[macro_use]
mod common;

mod anim;
mod cli;
mod gui;
mod headers;
mod pipeline;
mod runtime;
