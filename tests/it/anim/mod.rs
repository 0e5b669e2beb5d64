//! The offline codec (`clipforge-anim`): importers, compressor, metric, additive, scalar tracks, lab.

mod additive;
mod additive_decompress;
mod additive_perbone;
mod additive_real;
mod additive_references;
mod codec;
mod codec_monotone;
mod codec_real;
mod codec_robustness;
mod codec_sweep;
mod fbx_limits;
mod fbx_mesh;
mod fbx_real;
mod formats_generated;
mod formats_real;
mod hostile;
mod lab;
mod mesh_error;
mod perbone;
mod perbone_sweep;
mod scalar_hostile;
mod scalar_real;
