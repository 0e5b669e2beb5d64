//! The animation clip codec, with no UI.
//!
//! Offline side (raw data, importers, the compressor and its optimiser): [`clip`],
//! [`formats`], [`compress`], [`decompress`] (back to a raw clip), [`limits`] (memory budgets),
//! [`metric`] (the virtual-vertex error metric), [`lab`]. The runtime side (the compact format
//! and the small, validated operations that sample it) is the `clipforge-runtime` crate below
//! this one, re-exported as [`runtime`] (with its [`pose`] and [`skeleton`]).

// Parallel arrays indexed by bone (structure-of-arrays) read best as index loops.
#![allow(clippy::needless_range_loop)]

pub mod additive;
pub mod bone_glob;
pub mod clip;
pub mod compress;
pub mod decompress;
pub mod figures;
pub mod formats;
pub mod generate;
pub mod lab;
pub mod limits;
pub mod mesh;
pub mod metric;
pub mod scalar;

// The runtime crate's modules, under the names the offline side has always used for them.
pub use clipforge_runtime as runtime;
pub use clipforge_runtime::{pose, skeleton};

pub use clip::RawClip;
pub use compress::{
    BoneOverride, ClipLayout, CompressedClip, CompressionSettings, CompressionStats,
    DEFAULT_ERROR_THRESHOLD_CM, compress,
};
pub use metric::ErrorStats;
pub use pose::Pose;
pub use runtime::{ClipReader, Looping};
pub use skeleton::{BoneDesc, NO_PARENT, Skeleton};
