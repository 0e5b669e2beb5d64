//! The root package's integration tests, one binary (issue 29, item 6): a folder per crate
//! it tests (anim, runtime, headers, pipeline) and for the CLI and the app, a module per concern, helpers in
//! [`common`]. One binary links the crates once instead of once per file, which is what made
//! `cargo test` slow after touching one file. Modules that need the app carry
//! `#![cfg(feature = "gui")]`; `runtime_api` installs the binary's counting allocator (it counts
//! per thread, so the other tests running beside it do not disturb its counts).

#[macro_use]
mod common;

mod anim;
mod cli;
mod fuzz_regressions;
mod gui;
mod headers;
mod pipeline;
mod runtime;
