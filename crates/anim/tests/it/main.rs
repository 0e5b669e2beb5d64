//! The codec library's integration tests (`clipforge-anim`): importers, compressor, metric,
//! additive clips, scalar tracks and the lab, through the library's public API only. One test
//! binary; tests that drive the CLI or the pipeline live in the root package's `tests/it/anim/`.
//! Real-data tests run when `CLIPFORGE_DATA` points at the shared data (see `common`).

#[macro_use]
mod common;

mod additive_perbone;
mod additive_real;
mod additive_references;
mod codec;
mod codec_monotone;
mod codec_real;
mod codec_robustness;
mod codec_sweep;
mod fbx_limits;
mod fbx_real;
mod formats_generated;
mod formats_real;
mod hostile;
mod lab;
mod perbone_sweep;
mod scalar_hostile;
