//! The vertex jobs: [`TransformPointsJob`] (seed 002: a batch of points and normals by one 4×4
//! matrix) and [`SkinJob`] (linear-blend skinning, 1–4 influences per vertex), each on the
//! [`SimdPath`] asked for.

use super::simd::{self, SimdPath};
use super::{JobError, check_len};
use glam::Mat4;

/// Points (w = 1) and normals (w = 0) by one column-major matrix. Points give the full
/// homogeneous result `(x, y, z, w)` (the matrix may be projective), normals `(x, y, z)`; the
/// normals slices may be empty.
#[derive(Debug)]
pub struct TransformPointsJob<'a> {
    pub matrix: &'a Mat4,
    pub points: &'a [[f32; 3]],
    pub out_points: &'a mut [[f32; 4]],
    pub normals: &'a [[f32; 3]],
    pub out_normals: &'a mut [[f32; 3]],
}

impl TransformPointsJob<'_> {
    /// Checks that each output is as long as its input.
    pub fn validate(&self) -> Result<(), JobError> {
        check_len(
            "transform out_points",
            self.out_points.len(),
            self.points.len(),
        )?;
        check_len(
            "transform out_normals",
            self.out_normals.len(),
            self.normals.len(),
        )
    }

    /// Validates, then transforms on the fastest path this CPU has.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.run_with(SimdPath::Auto)
    }

    /// Validates, then transforms on `path` (an error if this CPU or target lacks it).
    pub fn run_with(&mut self, path: SimdPath) -> Result<(), JobError> {
        self.validate()?;
        let (m, p, op, n, on) = (
            self.matrix,
            self.points,
            &mut *self.out_points,
            self.normals,
            &mut *self.out_normals,
        );
        match path.resolve()? {
            #[cfg(target_arch = "x86_64")]
            SimdPath::Sse2 => {
                // SAFETY: SSE2 is x86-64's baseline; lengths validated.
                unsafe {
                    simd::sse2::points(m, p, op);
                    simd::sse2::vectors(m, n, on);
                }
            }
            #[cfg(target_arch = "x86_64")]
            SimdPath::Avx2Fma => {
                // SAFETY: resolve() checked the CPU; lengths validated.
                unsafe {
                    simd::avx2fma::points(m, p, op);
                    simd::avx2fma::vectors(m, n, on);
                }
            }
            #[cfg(target_arch = "aarch64")]
            SimdPath::Neon => {
                // SAFETY: NEON is aarch64's baseline; lengths validated.
                unsafe {
                    simd::neon::points(m, p, op);
                    simd::neon::vectors(m, n, on);
                }
            }
            _ => {
                simd::scalar::points(m, p, op);
                simd::scalar::vectors(m, n, on);
            }
        }
        Ok(())
    }
}

/// Linear-blend skinning: each vertex's position and normal by `Σ_k weight_k · palette[joint_k]`
/// over its `influences` (1–4) joints. Joints and weights are `influences` per vertex, vertex
/// after vertex; every weight is used as given (no renormalisation: store them summing to 1).
/// Normals are transformed by the blended matrix's upper 3×3 (right for rotations and uniform
/// scale; a palette with non-uniform scale needs an inverse-transpose palette for its
/// normals, which a caller can run as a second job) and are not renormalised. `normals` and
/// `out_normals` may both be empty.
#[derive(Debug)]
pub struct SkinJob<'a> {
    pub palette: &'a [Mat4],
    pub influences: usize,
    pub joints: &'a [u16],
    pub weights: &'a [f32],
    pub positions: &'a [[f32; 3]],
    pub normals: &'a [[f32; 3]],
    pub out_positions: &'a mut [[f32; 3]],
    pub out_normals: &'a mut [[f32; 3]],
}

impl SkinJob<'_> {
    /// Checks the influence count, every length, and every joint index against the palette.
    pub fn validate(&self) -> Result<(), JobError> {
        let k = self.influences;
        if !(1..=4).contains(&k) {
            return Err(JobError::Influences(k));
        }
        let v = self.positions.len();
        let vk = v.checked_mul(k).ok_or(JobError::Length {
            what: "skin positions (× influences overflows)",
            expected: usize::MAX / k,
            got: v,
        })?;
        check_len("skin joints", self.joints.len(), vk)?;
        check_len("skin weights", self.weights.len(), vk)?;
        check_len("skin out_positions", self.out_positions.len(), v)?;
        if !self.normals.is_empty() {
            check_len("skin normals", self.normals.len(), v)?;
        }
        check_len(
            "skin out_normals",
            self.out_normals.len(),
            self.normals.len(),
        )?;
        let limit = self.palette.len();
        // The maximum first (a branch-free pass the compiler vectorises), the culprit only on error.
        let max = simd::max_u16(self.joints);
        if !self.joints.is_empty() && max as usize >= limit {
            let at = self
                .joints
                .iter()
                .position(|&j| j as usize >= limit)
                .unwrap_or(0);
            return Err(JobError::Index {
                what: "skin joints",
                at,
                index: self.joints[at] as usize,
                limit,
            });
        }
        Ok(())
    }

    /// Validates, then skins on the fastest path this CPU has.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.run_with(SimdPath::Auto)
    }

    /// Validates, then skins on `path` (an error if this CPU or target lacks it).
    pub fn run_with(&mut self, path: SimdPath) -> Result<(), JobError> {
        self.validate()?;
        let path = path.resolve()?;
        let (pal, j, w, p, n) = (
            self.palette,
            self.joints,
            self.weights,
            self.positions,
            self.normals,
        );
        let (op, on) = (&mut *self.out_positions, &mut *self.out_normals);
        macro_rules! dispatch {
            ($k:literal) => {
                match path {
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: SSE2 is x86-64's baseline; lengths and joints validated.
                    SimdPath::Sse2 => unsafe { simd::sse2::skin::<$k>(pal, j, w, p, n, op, on) },
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: resolve() checked the CPU; lengths and joints validated.
                    SimdPath::Avx2Fma => unsafe {
                        simd::avx2cols::skin::<$k>(pal, j, w, p, n, op, on)
                    },
                    #[cfg(target_arch = "aarch64")]
                    // SAFETY: NEON is aarch64's baseline; lengths and joints validated.
                    SimdPath::Neon => unsafe { simd::neon::skin::<$k>(pal, j, w, p, n, op, on) },
                    _ => simd::scalar::skin::<$k>(pal, j, w, p, n, op, on),
                }
            };
        }
        match self.influences {
            1 => dispatch!(1),
            2 => dispatch!(2),
            3 => dispatch!(3),
            _ => dispatch!(4),
        }
        Ok(())
    }
}
