//! The command line's subcommands over the libraries: argument types (clap) and the code that
//! runs each subcommand and prints its output. The libraries below know nothing of clap.

// The printing macros come first: `macro_rules!` is in scope in the modules declared after it.
/// `eprintln!` that never panics (a closed stderr pipe is not our problem).
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

/// `println!` that never panics (`clipforge inspect ... | head`).
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// Prints `clipforge: MSG` and gives the failing exit code.
pub(crate) fn fail(msg: impl std::fmt::Display) -> std::process::ExitCode {
    say!("clipforge: {msg}");
    std::process::ExitCode::FAILURE
}

pub mod clip_input;
pub mod compress;
pub mod headers;
pub mod inspect;
pub mod lab;
pub mod progress;
