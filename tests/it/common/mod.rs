//! Shared test helpers.
#![allow(dead_code)]

use std::process::Command;

/// The app's set-ups over a folder of clips (GUI tests only).
#[cfg(feature = "gui")]
pub mod app_folder;
/// The app's kittest harness (GUI tests only).
#[cfg(feature = "gui")]
pub mod gui;

/// The CLI binary this test build made; every test runs the CLI through [`clipforge`] or, where
/// it must go through a shell (resource limits), through this path.
pub const BIN: &str = env!("CARGO_BIN_EXE_clipforge");

/// A command running the CLI.
pub fn clipforge() -> Command {
    Command::new(BIN)
}

/// Runs `cmd` and returns its output, failing the test with the command, its exit status,
/// stdout and stderr (`assert_cmd`'s report) when it does not exit with success.
pub fn run_ok(cmd: &mut Command) -> std::process::Output {
    use assert_cmd::assert::OutputAssertExt;
    cmd.assert().success().get_output().clone()
}

/// A generated skinned glTF (mesh view and vertex error tests).
pub mod skinned;

/// Temporary input/output folders and generated clips for the batch tests.
pub mod batch_dirs;

/// Float64 skinning and the vertex-error check shared by the glTF and FBX mesh tests.
pub mod mesh_f64;

pub mod header_tree;

/// The header profiler's scan set-ups (trees, projects, compilation databases).
pub mod headers_scan;

/// The library tests' helpers (real data, the independent evaluator, float64 errors), written
/// once in `crates/anim/tests/it/common/` and compiled into this binary too.
#[macro_use]
#[path = "../../../crates/anim/tests/it/common/mod.rs"]
mod anim_common;
pub use anim_common::*;
