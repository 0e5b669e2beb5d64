//! `clipforge headers` command-line arguments and entry point.

use std::process::ExitCode;

#[derive(clap::Args, Debug, Clone)]
pub struct HeadersArgs {
    /// Source roots to scan.
    pub roots: Vec<std::path::PathBuf>,
}

pub fn run(_args: &HeadersArgs) -> ExitCode {
    eprintln!("clipforge headers: not built yet");
    ExitCode::FAILURE
}
