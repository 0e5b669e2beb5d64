//! What the CLI says (wording, the lab subcommand).

mod below_precision;
mod cfa_settings;
mod headers_figures;
mod lab;
mod progress;
mod report_settings;
mod up_to_date;
mod wording;
