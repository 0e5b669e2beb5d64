//! Four rotations at once (x86-64, SSE2): rebuilding the dropped component, the shorter-arc
//! blend and the normalization of four animated rotation sub-tracks in one pass of vector
//! operations, one track per lane (three square roots and four divisions per four rotations
//! instead of per rotation). Finishing is about a third of a 44-bone full pose; the bit walk
//! before it is the rest (docs/BENCHMARKS.md, "Four rotations at a time").
//!
//! Every lane computes exactly what the per-track path computes with glam's SSE2 `Vec4` (the same
//! operations in the same order: the rebuilt component `sqrt(max(1 − ((x² + y²) + z²), 0))`, the
//! dot product grouped `(x·x′ + z·z′) + (y·y′ + w·w′)`, the lerp `a·(1 − s) + b·s`, the
//! normalization `q / sqrt((x² + z²) + (y² + w²))`), so the decoded bits are the same
//! (`tests/it/runtime/equal.rs`). Other targets keep the per-track path, which is glam's own
//! arithmetic there.

use core::arch::x86_64::*;
use glam::Vec4;

/// Rotations waiting to be finished, up to [`CHUNK`] of them, four lanes at a time: per
/// rotation, the decoded kept components (lane w: the raw w when the segment drops nothing) and
/// the dropped component, at both samples. The full pose decodes a chunk's bits first and then
/// finishes it, so the finishing operations of different rotations overlap.
pub(crate) struct Chunk {
    k0: [Vec4; CHUNK],
    k1: [Vec4; CHUNK],
    d0: [u8; CHUNK],
    d1: [u8; CHUNK],
    /// Where each rotation goes: its bone (low 16 bits) and reference (high 16 bits).
    pub track: [u32; CHUNK],
    pub len: usize,
}

/// Rotations per chunk (a multiple of 4; 2 × 16 × 16 bytes of components on the stack).
pub(crate) const CHUNK: usize = 16;

impl Chunk {
    #[inline(always)]
    pub fn new() -> Self {
        Self {
            // Lanes never filled rebuild x from zeros: a unit quaternion, nothing undefined.
            k0: [Vec4::ZERO; CHUNK],
            k1: [Vec4::ZERO; CHUNK],
            d0: [0; CHUNK],
            d1: [0; CHUNK],
            track: [0; CHUNK],
            len: 0,
        }
    }

    /// Adds a rotation (the chunk must not be full).
    #[inline(always)]
    pub fn push(&mut self, track: u32, (k0, d0): (Vec4, u8), (k1, d1): (Vec4, u8)) {
        let j = self.len % CHUNK;
        self.k0[j] = k0;
        self.k1[j] = k1;
        self.d0[j] = d0;
        self.d1[j] = d1;
        self.track[j] = track;
        self.len = j + 1;
    }

    /// Rotations `4 g .. 4 g + 4`, normalized (one `Vec4` per lane; lanes past `len` are
    /// meaningless): sample 0's alone when `exact`, else the shorter-arc blend at `alpha`.
    #[inline(always)]
    pub(crate) fn finish4(&self, g: usize, exact: bool, alpha: f32) -> [Vec4; 4] {
        let lanes = |k: &[Vec4; CHUNK]| core::array::from_fn(|j| k[(4 * g + j) % CHUNK]);
        let dropped =
            |d: &[u8; CHUNK]| u32::from_le_bytes(core::array::from_fn(|j| d[(4 * g + j) % CHUNK]));
        let k0 = (transpose(lanes(&self.k0)), dropped(&self.d0));
        if exact {
            finish_columns(k0, None, alpha)
        } else {
            finish_columns(
                k0,
                Some((transpose(lanes(&self.k1)), dropped(&self.d1))),
                alpha,
            )
        }
    }
}

/// Four rotations, normalized (one `Vec4` per rotation), from their kept components by
/// component (x, y, z columns; w: the raw w of a lane that drops nothing) and dropped
/// components (a byte per lane) at sample 0 `k0` and, unless the sample is exact, sample 1
/// `k1`, blended on the shorter arc at `alpha`: what [`Chunk::finish4`] does with four of its
/// rotations, and what a group of four rotation tracks ([`crate::group4::columns`]) is
/// finished with directly, without going through a chunk.
#[inline(always)]
pub(crate) fn finish_columns(
    k0: ([__m128; 4], u32),
    k1: Option<([__m128; 4], u32)>,
    alpha: f32,
) -> [Vec4; 4] {
    // SAFETY: SSE2 is part of the x86-64 baseline (this module is compiled only there).
    unsafe {
        let q0 = rebuild(k0.0, k0.1);
        let q = match k1 {
            None => q0,
            Some(k1) => {
                let q1 = rebuild(k1.0, k1.1);
                // Shorter arc: negate q1 where q0 · q1 < 0 (glam's Neg flips the sign bit).
                let dot = _mm_add_ps(
                    _mm_add_ps(_mm_mul_ps(q0[0], q1[0]), _mm_mul_ps(q0[2], q1[2])),
                    _mm_add_ps(_mm_mul_ps(q0[1], q1[1]), _mm_mul_ps(q0[3], q1[3])),
                );
                let flip = _mm_and_ps(_mm_cmplt_ps(dot, _mm_setzero_ps()), _mm_set1_ps(-0.0));
                let (a0, a1) = (_mm_set1_ps(1.0 - alpha), _mm_set1_ps(alpha));
                core::array::from_fn(|c| {
                    _mm_add_ps(
                        _mm_mul_ps(q0[c], a0),
                        _mm_mul_ps(_mm_xor_ps(q1[c], flip), a1),
                    )
                })
            }
        };
        let len = _mm_sqrt_ps(_mm_add_ps(
            _mm_add_ps(_mm_mul_ps(q[0], q[0]), _mm_mul_ps(q[2], q[2])),
            _mm_add_ps(_mm_mul_ps(q[1], q[1]), _mm_mul_ps(q[3], q[3])),
        ));
        let n: [__m128; 4] = core::array::from_fn(|c| _mm_div_ps(q[c], len));
        transpose(n.map(Vec4::from)).map(Vec4::from)
    }
}

/// Rows (one vector per lane) to columns (one vector per component), and back.
#[inline(always)]
fn transpose(r: [Vec4; 4]) -> [__m128; 4] {
    let r: [__m128; 4] = r.map(Into::into);
    // SAFETY: SSE is part of the x86-64 baseline.
    unsafe {
        let t0 = _mm_unpacklo_ps(r[0], r[1]);
        let t1 = _mm_unpacklo_ps(r[2], r[3]);
        let t2 = _mm_unpackhi_ps(r[0], r[1]);
        let t3 = _mm_unpackhi_ps(r[2], r[3]);
        [
            _mm_movelh_ps(t0, t1),
            _mm_movehl_ps(t1, t0),
            _mm_movelh_ps(t2, t3),
            _mm_movehl_ps(t3, t2),
        ]
    }
}

#[inline(always)]
fn select(mask: __m128, a: __m128, b: __m128) -> __m128 {
    // SAFETY: SSE is part of the x86-64 baseline.
    unsafe { _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b)) }
}

/// [`crate::quant::rebuild_rotation_unnormalized`] on four lanes: the kept components `k` (x, y,
/// z columns; w holds the raw w of a lane whose dropped component is
/// [`crate::format::DROPPED_NONE`], which no mask below matches) with the dropped component
/// rebuilt and put in its place.
#[inline(always)]
fn rebuild(k: [__m128; 4], dropped: u32) -> [__m128; 4] {
    let [x, y, z, w] = k;
    // SAFETY: SSE2 is part of the x86-64 baseline.
    unsafe {
        let s = _mm_add_ps(
            _mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)),
            _mm_mul_ps(z, z),
        );
        let d = _mm_sqrt_ps(_mm_max_ps(
            _mm_sub_ps(_mm_set1_ps(1.0), s),
            _mm_setzero_ps(),
        ));
        let zero = _mm_setzero_si128();
        let di = _mm_cvtsi32_si128(dropped as i32);
        let di = _mm_unpacklo_epi16(_mm_unpacklo_epi8(di, zero), zero);
        let is = |c: i32| _mm_castsi128_ps(_mm_cmpeq_epi32(di, _mm_set1_epi32(c)));
        let (m0, m1, m2, m3) = (is(0), is(1), is(2), is(3));
        let le1 = _mm_or_ps(m0, m1);
        [
            select(m0, d, x),
            select(m0, x, select(m1, d, y)),
            select(le1, y, select(m2, d, z)),
            select(m3, d, select(_mm_or_ps(le1, m2), z, w)),
        ]
    }
}
