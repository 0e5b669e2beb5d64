//! Batches, pipelines, watching, folder settings, output paths and what is never lost (`clipforge-pipeline`).

mod ab;
mod batch;
mod below_precision;
mod folder_settings;
mod hostile;
mod nothing_lost;
mod output_paths;
mod pipelines;
mod real;
mod task;
mod watch;
