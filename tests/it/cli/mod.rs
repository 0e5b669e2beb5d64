//! What the CLI says (wording, the lab subcommand).

mod lab;
mod wording;
mod cfa_settings;
mod progress;
