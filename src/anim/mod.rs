//! The animation clip codec, with no UI.
//!
//! Offline side (raw data, importers, the compressor and its optimiser): [`clip`],
//! [`formats`], [`compress`], [`decompress`] (back to a raw clip). Runtime side (the compact format and the small, validated
//! operations that sample it): [`runtime`], which depends on nothing offline. Shared: [`pose`] (SoA poses, local → object pass),
//! [`skeleton`] (the hierarchy; its sorting builder is used offline only), [`limits`] and [`metric`] (the virtual-vertex error metric).

pub mod additive;
pub mod clip;
pub mod compress;
pub mod decompress;
pub mod formats;
pub mod generate;
pub mod lab;
pub mod limits;
pub mod metric;
pub mod pose;
pub mod runtime;
pub mod scalar;
pub mod skeleton;

pub use clip::RawClip;
pub use compress::{BoneOverride, CompressedClip, CompressionSettings, CompressionStats, compress};
pub use metric::ErrorStats;
pub use pose::Pose;
pub use runtime::{ClipReader, Looping};
pub use skeleton::{BoneDesc, NO_PARENT, Skeleton};
