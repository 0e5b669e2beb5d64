//! The root package's integration tests, one binary (issue 29, item 6): a module per concern
//! (the codec, the importers, the pipeline, the header profiler, the CLI, the app), helpers in
//! [`common`]. One binary links the crates once instead of once per file, which is what made
//! `cargo test` slow after touching one file. Modules that need the app carry
//! `#![cfg(feature = "gui")]`; `runtime_api` installs the binary's counting allocator (it counts
//! per thread, so the other tests running beside it do not disturb its counts).

#[macro_use]
mod common;

mod ab;
mod additive;
mod additive_decompress;
mod additive_perbone;
mod additive_real;
mod additive_references;
mod cli_wording;
mod codec;
mod codec_monotone;
mod codec_real;
mod codec_robustness;
mod codec_sweep;
mod fbx_limits;
mod fbx_real;
mod folder_settings;
mod formats_generated;
mod formats_real;
mod fuzz_regressions;
mod gui;
mod gui_headers;
mod gui_lab;
mod gui_pipelines;
mod gui_ux;
mod headers;
mod headers_churn;
mod headers_cli;
mod headers_configs;
mod headers_cuts;
mod headers_gxx;
mod headers_hostile;
mod headers_time;
mod hostile_anim;
mod lab;
mod lab_cli;
mod nothing_lost;
mod output_paths;
mod perbone;
mod perbone_gui;
mod perbone_sweep;
mod pipeline;
mod pipeline_hostile;
mod pipeline_real;
mod pipelines;
mod runtime_api;
mod runtime_equal;
mod runtime_jobs;
mod scalar_hostile;
mod scalar_real;
mod task;
mod watch;
