//! [`SkinningPaletteJob`]: object-space transforms × inverse bind matrices → the matrices a
//! skinned mesh is drawn with (4×4 column-major, or 3×4 rows for a GPU's three float4s).

use super::{JobError, PoseRef, check_len};
use glam::{Mat4, Vec3, Vec4};

/// Where the palette goes.
#[derive(Debug)]
pub enum PaletteOut<'a> {
    /// Column-major 4×4 matrices.
    Mat4(&'a mut [Mat4]),
    /// The first three rows of each matrix (the last is always 0 0 0 1): 48 bytes a joint.
    Rows3x4(&'a mut [[Vec4; 3]]),
}

impl PaletteOut<'_> {
    fn len(&self) -> usize {
        match self {
            PaletteOut::Mat4(m) => m.len(),
            PaletteOut::Rows3x4(m) => m.len(),
        }
    }
}

/// `out[i] = M(object[bone(i)]) · inverse_bind[i]`, where `M(r, t, s)` maps `x` to
/// `r·(s ∘ x) + t` (the object transform as the local → object pass composes it) and
/// `bone(i)` is `joints[i]`, or `i` without a joint list (a skin's joints are often a subset
/// of the skeleton's bones, in an order of their own: glTF's `skin.joints`).
#[derive(Debug)]
pub struct SkinningPaletteJob<'a> {
    pub object: PoseRef<'a>,
    pub inverse_bind: &'a [Mat4],
    pub joints: Option<&'a [u16]>,
    pub out: PaletteOut<'a>,
}

impl SkinningPaletteJob<'_> {
    /// Checks the lengths and every joint index.
    pub fn validate(&self) -> Result<(), JobError> {
        let bones = self.object.rotations.len();
        self.object.check("palette object pose", bones)?;
        let n = self.inverse_bind.len();
        check_len("palette output", self.out.len(), n)?;
        match self.joints {
            Some(j) => {
                check_len("palette joints", j.len(), n)?;
                if let Some(at) = j.iter().position(|&b| b as usize >= bones) {
                    return Err(JobError::Index {
                        what: "palette joints",
                        at,
                        index: j[at] as usize,
                        limit: bones,
                    });
                }
            }
            None if n > bones => {
                return Err(JobError::Length {
                    what: "palette inverse_bind (no joint list: one per bone at most)",
                    expected: bones,
                    got: n,
                });
            }
            None => {}
        }
        Ok(())
    }

    /// Validates, then builds the palette. On x86-64 four lanes at a time (SSE2; where the CPU
    /// has AVX the same operations VEX-encoded, the inverse-bind product two columns per 256-bit
    /// operation: the same bits, the tests check it), with glam's operations in glam's order, so
    /// the matrices are bit for bit what `Mat4::from_scale_rotation_translation(s, r, t) *
    /// inverse_bind` gives; elsewhere glam (docs/BENCHMARKS.md has the two measured).
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        #[cfg(target_arch = "x86_64")]
        {
            let io = self.io();
            if super::simd::avx() {
                // SAFETY: validate() checked every length and joint index; the CPU has AVX.
                unsafe { x86::palette_avx(&io) };
            } else {
                // SAFETY: as above; SSE2 is x86-64's baseline.
                unsafe { x86::palette_sse2(&io) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.run_glam();
        Ok(())
    }

    /// The palette through glam, one matrix at a time: the other targets' path, and the
    /// reference the x86-64 paths are held to bit for bit.
    #[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
    pub(crate) fn run_glam(&mut self) {
        let o = self.object;
        for (i, ib) in self.inverse_bind.iter().enumerate() {
            let b = match self.joints {
                Some(j) => j[i] as usize,
                None => i,
            };
            let m = Mat4::from_scale_rotation_translation(
                Vec3::from(o.scales[b]),
                o.rotations[b],
                Vec3::from(o.translations[b]),
            ) * *ib;
            match &mut self.out {
                PaletteOut::Mat4(out) => out[i] = m,
                PaletteOut::Rows3x4(out) => {
                    let t = m.transpose();
                    out[i] = [t.x_axis, t.y_axis, t.z_axis];
                }
            }
        }
    }

    /// [`Self::run`] on SSE2 whatever the CPU (the tests compare it with the AVX path).
    #[cfg(all(test, target_arch = "x86_64"))]
    pub(crate) fn run_sse2(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let io = self.io();
        // SAFETY: validated above; SSE2 is x86-64's baseline.
        unsafe { x86::palette_sse2(&io) };
        Ok(())
    }

    #[cfg(target_arch = "x86_64")]
    fn io(&mut self) -> x86::Io {
        let (out, rows) = match &mut self.out {
            PaletteOut::Mat4(m) => (m.as_mut_ptr() as *mut f32, false),
            PaletteOut::Rows3x4(m) => (m.as_mut_ptr() as *mut f32, true),
        };
        x86::Io {
            r: self.object.rotations.as_ptr() as *const f32,
            t: self.object.translations.as_ptr() as *const f32,
            s: self.object.scales.as_ptr() as *const f32,
            ib: self.inverse_bind.as_ptr() as *const f32,
            joints: self.joints.map_or(core::ptr::null(), |j| j.as_ptr()),
            n: self.inverse_bind.len(),
            out,
            rows,
        }
    }
}

/// The x86-64 kernel: one matrix per iteration, each operation on four lanes.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    /// The job's slices as raw pointers (after `validate()`).
    pub(super) struct Io {
        pub r: *const f32,
        pub t: *const f32,
        pub s: *const f32,
        pub ib: *const f32,
        /// Null without a joint list.
        pub joints: *const u16,
        pub n: usize,
        /// `n` 4×4 matrices, or `n` 3×4 row blocks when `rows`.
        pub out: *mut f32,
        pub rows: bool,
    }

    /// # Safety
    /// As [`palette`]; the CPU has AVX.
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn palette_avx(io: &Io) {
        // SAFETY: the caller's.
        unsafe { palette::<true>(io) }
    }

    /// # Safety
    /// As [`palette`].
    pub(super) unsafe fn palette_sse2(io: &Io) {
        // SAFETY: the caller's.
        unsafe { palette::<false>(io) }
    }

    /// `M · inverse_bind` two columns per 256-bit operation: `[c_k | c_k] · [ib_j.k | ib_(j+1).k]`
    /// (an in-lane broadcast), lane for lane the SSE2 path's multiplies and adds in its order.
    ///
    /// # Safety
    /// `ib` addresses 16 floats; only inlined into AVX code ([`palette_avx`]).
    #[inline(always)]
    unsafe fn times_wide(c: [__m128; 4], ib: *const f32) -> (__m128, __m128, __m128, __m128) {
        // SAFETY: the caller's. (No closures: they would not inherit AVX, and each intrinsic
        // would become a call.)
        unsafe {
            let [c0, c1, c2, c3] = [
                _mm256_set_m128(c[0], c[0]),
                _mm256_set_m128(c[1], c[1]),
                _mm256_set_m128(c[2], c[2]),
                _mm256_set_m128(c[3], c[3]),
            ];
            macro_rules! half {
                ($e:expr) => {{
                    let b = _mm256_loadu_ps($e);
                    let r = _mm256_mul_ps(c0, _mm256_permute_ps::<0x00>(b));
                    let r = _mm256_add_ps(r, _mm256_mul_ps(c1, _mm256_permute_ps::<0x55>(b)));
                    let r = _mm256_add_ps(r, _mm256_mul_ps(c2, _mm256_permute_ps::<0xAA>(b)));
                    _mm256_add_ps(r, _mm256_mul_ps(c3, _mm256_permute_ps::<0xFF>(b)))
                }};
            }
            let (lo, hi) = (half!(ib), half!(ib.add(8)));
            (
                _mm256_castps256_ps128(lo),
                _mm256_extractf128_ps::<1>(lo),
                _mm256_castps256_ps128(hi),
                _mm256_extractf128_ps::<1>(hi),
            )
        }
    }

    /// `(a ^ sign bits of s)`: `a × ±1` per lane, exactly, without a multiply.
    #[inline(always)]
    unsafe fn flip(a: __m128, s: __m128) -> __m128 {
        // SAFETY: SSE2 is x86-64's baseline.
        unsafe { _mm_xor_ps(a, s) }
    }

    /// One column of glam's `quat_to_axes`, e.g. `x_axis = (1 − (yy + zz), xy + wz, xz − wy, 0)`:
    /// `u = a + (b ^ sb)` is the three sums and differences, then `(u ^ su) + one` turns the
    /// diagonal lane into `1 − u` (adding −0 leaves the other lanes as they are, signed zeros
    /// included), and lane 3 is cleared to glam's 0.
    #[inline(always)]
    unsafe fn axis(a: __m128, b: __m128, sb: __m128, su: __m128, one: __m128) -> __m128 {
        // SAFETY: SSE2 is x86-64's baseline.
        unsafe {
            let xyz = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
            let u = _mm_add_ps(a, flip(b, sb));
            _mm_and_ps(_mm_add_ps(flip(u, su), one), xyz)
        }
    }

    /// `out[i] = M(r, t, s)[joint i] · inverse_bind[i]` as glam computes it: the axes of
    /// `quat_to_axes` (same products, same sums), each times its scale, then glam's
    /// `mul_vec4` per inverse-bind column (`((c0·x + c1·y) + c2·z) + c3·w`).
    /// `WIDE`: the multiply by the inverse bind matrix on 256 bits ([`times_wide`]).
    ///
    /// # Safety
    /// `r`, `t`, `s` cover every joint index (or `n` bones without a joint list), `ib` and
    /// `out` cover `n` matrices (or row blocks), `joints` (if not null) `n` indices; `WIDE`
    /// only in AVX code.
    #[inline(always)]
    unsafe fn palette<const WIDE: bool>(io: &Io) {
        // SAFETY (all loads and stores): the caller's; Quat, Vec3A and Mat4 are 16-byte
        // aligned, and a row block is 48 bytes of 16-byte aligned Vec4s.
        unsafe {
            // Sign masks: `m` flips a lane, `k` keeps it.
            let (k, m, z) = (0.0f32, -0.0f32, -0.0f32);
            let sb = [
                _mm_setr_ps(k, k, m, k),
                _mm_setr_ps(m, k, k, k),
                _mm_setr_ps(k, m, k, k),
            ];
            let su = [
                _mm_setr_ps(m, k, k, k),
                _mm_setr_ps(k, m, k, k),
                _mm_setr_ps(k, k, m, k),
            ];
            let one = [
                _mm_setr_ps(1.0, z, z, z),
                _mm_setr_ps(z, 1.0, z, z),
                _mm_setr_ps(z, z, 1.0, z),
            ];
            let xyz = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
            let w1 = _mm_setr_ps(0.0, 0.0, 0.0, 1.0);
            for i in 0..io.n {
                let b = if io.joints.is_null() {
                    i
                } else {
                    *io.joints.add(i) as usize
                };
                let q = _mm_load_ps(io.r.add(4 * b));
                let q2 = _mm_add_ps(q, q);
                // x_axis: (y, x, x)·(y2, y2, z2) + ±(z, w, w)·(z2, z2, y2)
                let c0 = axis(
                    _mm_mul_ps(
                        _mm_shuffle_ps::<0b11_00_00_01>(q, q),
                        _mm_shuffle_ps::<0b11_10_01_01>(q2, q2),
                    ),
                    _mm_mul_ps(
                        _mm_shuffle_ps::<0b11_11_11_10>(q, q),
                        _mm_shuffle_ps::<0b11_01_10_10>(q2, q2),
                    ),
                    sb[0],
                    su[0],
                    one[0],
                );
                // y_axis: (x, x, y)·(y2, x2, z2) + ±(w, z, w)·(z2, z2, x2)
                let c1 = axis(
                    _mm_mul_ps(
                        _mm_shuffle_ps::<0b11_01_00_00>(q, q),
                        _mm_shuffle_ps::<0b11_10_00_01>(q2, q2),
                    ),
                    _mm_mul_ps(
                        _mm_shuffle_ps::<0b11_11_10_11>(q, q),
                        _mm_shuffle_ps::<0b11_00_10_10>(q2, q2),
                    ),
                    sb[1],
                    su[1],
                    one[1],
                );
                // z_axis: (x, y, x)·(z2, z2, x2) + ±(w, w, y)·(y2, x2, y2)
                let c2 = axis(
                    _mm_mul_ps(
                        _mm_shuffle_ps::<0b11_00_01_00>(q, q),
                        _mm_shuffle_ps::<0b11_00_10_10>(q2, q2),
                    ),
                    _mm_mul_ps(
                        _mm_shuffle_ps::<0b11_01_11_11>(q, q),
                        _mm_shuffle_ps::<0b11_01_00_01>(q2, q2),
                    ),
                    sb[2],
                    su[2],
                    one[2],
                );
                let s = io.s.add(4 * b);
                let c0 = _mm_mul_ps(c0, _mm_set1_ps(*s));
                let c1 = _mm_mul_ps(c1, _mm_set1_ps(*s.add(1)));
                let c2 = _mm_mul_ps(c2, _mm_set1_ps(*s.add(2)));
                let c3 = _mm_or_ps(_mm_and_ps(_mm_load_ps(io.t.add(4 * b)), xyz), w1);
                let ib = io.ib.add(16 * i);
                let (m0, m1, m2, m3) = if WIDE {
                    times_wide([c0, c1, c2, c3], ib)
                } else {
                    let col = |j: usize| {
                        let e = ib.add(4 * j);
                        let r = _mm_mul_ps(c0, _mm_set1_ps(*e));
                        let r = _mm_add_ps(r, _mm_mul_ps(c1, _mm_set1_ps(*e.add(1))));
                        let r = _mm_add_ps(r, _mm_mul_ps(c2, _mm_set1_ps(*e.add(2))));
                        _mm_add_ps(r, _mm_mul_ps(c3, _mm_set1_ps(*e.add(3))))
                    };
                    (col(0), col(1), col(2), col(3))
                };
                if io.rows {
                    // The transpose's first three rows (moves only).
                    let t0 = _mm_unpacklo_ps(m0, m1); // m00 m01 m10 m11
                    let t1 = _mm_unpacklo_ps(m2, m3); // m02 m03 m12 m13
                    let t2 = _mm_unpackhi_ps(m0, m1); // m20 m21 m30 m31
                    let t3 = _mm_unpackhi_ps(m2, m3); // m22 m23 m32 m33
                    let o = io.out.add(12 * i);
                    _mm_store_ps(o, _mm_movelh_ps(t0, t1));
                    _mm_store_ps(o.add(4), _mm_movehl_ps(t1, t0));
                    _mm_store_ps(o.add(8), _mm_movelh_ps(t2, t3));
                } else {
                    let o = io.out.add(16 * i);
                    _mm_store_ps(o, m0);
                    _mm_store_ps(o.add(4), m1);
                    _mm_store_ps(o.add(8), m2);
                    _mm_store_ps(o.add(12), m3);
                }
            }
        }
    }
}
