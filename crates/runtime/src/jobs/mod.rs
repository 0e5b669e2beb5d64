//! The per-frame jobs an engine runs for every character after sampling: blend layers
//! ([`BlendJob`]), local → object space ([`LocalToObjectJob`]), the skinning matrix palette
//! ([`SkinningPaletteJob`]), and vertex work: points by one matrix ([`TransformPointsJob`],
//! seed 002) and linear-blend skinning ([`SkinJob`]).
//!
//! Each job is a struct of input and output slices (no allocation, `core` only, so it builds
//! under `#![no_std]`) with `validate()`, which checks every length and index and returns a typed
//! [`JobError`], and `run()`, which validates first and then cannot panic. Poses are
//! structure-of-arrays ([`glam::Quat`] rotations, [`glam::Vec3A`] translations and scales), as
//! the readers write them; matrices are column-major [`glam::Mat4`].
//!
//! The vertex jobs and [`LocalToObjectJob`] have a scalar path and SIMD paths ([`SimdPath`]):
//! SSE2 on x86-64 (the baseline), AVX2 + FMA on x86-64 where the CPU has them (chosen at run
//! time through CPUID, which `core` can read, so no `std` is needed; a build with
//! `-C target-feature=+avx2,+fma` skips the check), NEON on aarch64. `docs/RUNTIME.md` ("Jobs") has the measurements.

mod blend;
mod local_to_object;
mod palette;
mod simd;
mod vertex;

pub use blend::{BlendJob, BlendLayer, PoseRef};
pub use local_to_object::{LocalToObjectJob, local_to_object_pass};
pub use palette::{PaletteOut, SkinningPaletteJob};
pub use simd::SimdPath;
#[cfg(target_arch = "x86_64")]
pub(crate) use simd::avx2_bmi2;
pub use vertex::{SkinJob, TransformPointsJob};

/// Why a job refused its inputs. Every field names the slice or value at fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// A slice does not have the length the job's other inputs imply.
    #[error("{what}: {got} elements where {expected} are needed")]
    Length {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// An index stored in an input points outside what it indexes.
    #[error("{what}[{at}] = {index}, outside 0..{limit}")]
    Index {
        what: &'static str,
        at: usize,
        index: usize,
        limit: usize,
    },
    /// A bone's parent does not come before it (the one-pass order the jobs rely on).
    #[error("bone {bone}: parent {parent} does not come before it")]
    ParentOrder { bone: usize, parent: usize },
    /// A bone range that is reversed or runs past the skeleton.
    #[error("bone range {start}..{end} outside the {bones} bones")]
    Range {
        start: usize,
        end: usize,
        bones: usize,
    },
    /// A weight or threshold that is NaN or infinite (or, for the threshold, not positive).
    #[error("{what} #{at} is not a finite number (or not positive where it must be)")]
    NotFinite { what: &'static str, at: usize },
    /// Influences per vertex outside 1..=4.
    #[error("{0} influences per vertex: the skinning job takes 1 to 4")]
    Influences(usize),
    /// The SIMD path asked for is not available on this CPU or target.
    #[error("SIMD path {0:?} is not available here")]
    Unavailable(SimdPath),
}

/// `Err(Length)` unless `got == expected`.
#[inline]
pub(crate) fn check_len(what: &'static str, got: usize, expected: usize) -> Result<(), JobError> {
    if got == expected {
        Ok(())
    } else {
        Err(JobError::Length {
            what,
            expected,
            got,
        })
    }
}

#[cfg(test)]
mod tests;
