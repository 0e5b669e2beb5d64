//! The command line's subcommands over the libraries: argument types (clap) and the code that
//! runs each subcommand and prints its output. The libraries below know nothing of clap.

pub mod compress;
pub mod headers;
pub mod lab;
pub mod progress;
