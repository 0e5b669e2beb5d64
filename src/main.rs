//! The `clipforge` command line. With no arguments it opens the desktop app.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "clipforge",
    version,
    about = "Animation clip compression and C/C++ header profiling"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Profile #include usage of a C/C++ tree (Header Hero's report, compiler-accurate).
    Headers(clipforge::headers::cli::HeadersArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Headers(args)) => clipforge::headers::cli::run(&args),
        None => open_app(),
    }
}

#[cfg(feature = "gui")]
fn open_app() -> ExitCode {
    match clipforge::gui::run_app() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("clipforge: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "gui"))]
fn open_app() -> ExitCode {
    eprintln!(
        "clipforge: built without the desktop app (feature `gui`); see `clipforge --help` for the CLI"
    );
    ExitCode::FAILURE
}
