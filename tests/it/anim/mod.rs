//! The offline codec (`clipforge-anim`) through the CLI and the pipeline: additive clips, hostile
//! input through the binary, per-bone settings, scalar lists in a batch, `--sample-rate`, skinned
//! meshes. Tests of the library alone are `clipforge-anim`'s own (`crates/anim/tests/it/`).

mod additive;
mod additive_decompress;
mod fbx_mesh;
mod hostile;
mod mesh_error;
mod perbone;
mod sample_rate;
mod scalar_real;
