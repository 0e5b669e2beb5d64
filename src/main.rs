//! The `clipforge` command line. With no arguments it opens the desktop app.

use clap::{Parser, Subcommand};
use clipforge::cli::compress as cli;
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
    Headers(Box<clipforge::cli::headers::HeadersArgs>),
    /// Compress clip files or folders (recursively) into OUTDIR, one .cfa per clip, with a report.
    Compress(cli::CompressArgs),
    /// Describe a compressed clip (.cfa); with --raw, measure its error against the original.
    Inspect(clipforge::cli::inspect::InspectArgs),
    /// Decompress a .cfa back to an ACL clip file (.acl.sjson).
    Decompress(cli::DecompressArgs),
    /// Convert a clip file to ACL's .acl.sjson clip format (`about` names the formats).
    #[command(about = format!(
        "Convert a clip file ({}) to ACL's .acl.sjson clip format",
        clipforge::anim::formats::clip_format_names()
    ))]
    Convert(cli::ConvertArgs),
    /// Watch a folder and compress clips as they appear or change (runs until killed).
    Watch(cli::WatchArgs),
    /// Codec lab: the uniform codec, key reduction and a sorted key stream measured side by side.
    Lab(clipforge::cli::lab::LabArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Headers(args)) => clipforge::cli::headers::run(&args),
        Some(Command::Compress(args)) => cli::run_compress(&args),
        Some(Command::Inspect(args)) => clipforge::cli::inspect::run_inspect(&args),
        Some(Command::Decompress(args)) => cli::run_decompress(&args),
        Some(Command::Convert(args)) => cli::run_convert(&args),
        Some(Command::Watch(args)) => cli::run_watch(&args),
        Some(Command::Lab(args)) => clipforge::cli::lab::run(&args),
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
