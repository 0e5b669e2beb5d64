//! Four tracks at once (x86-64, SSE2), for version 4's segment blocks
//! (`format::segment_block_layout`): a group's widths are one 64-bit load, each row of its
//! segment ranges one 32-bit load, and the masks, steps and segment fractions of its twelve
//! components come out of a few vector operations instead of per-track table lookups. The bits
//! themselves are extracted with one 64-bit load per track (SSE2 has no per-lane shift), then
//! masked, converted and dequantized four lanes at a time.
//!
//! Every lane computes what the per-track path (`ClipReader::dequant`, `values`) computes with
//! glam's SSE2 `Vec4`, the same IEEE operations in the same order: `q / 255` as a division (the
//! table of the per-track path holds the same divisions), `1 / (2^w − 1)` as a division of
//! exact operands, `base = min + ext · seg_min`, `range = ext · seg_ext`, the zero-width middle
//! `base + 0.5 · range`, the value `base + step · q`. So both paths decode the same bits
//! (`tests/it/runtime/v4.rs`).

use core::arch::x86_64::*;
use glam::Vec4;

/// Low 5-bit field of each 16-bit lane.
const FIELD: u64 = 0x001F_001F_001F_001F;

/// A group of four tracks whose widths are in `w` (four little-endian u16) can take the
/// four-lane path: no raw float32 component (width code 31) and no raw w (bit 15).
#[inline(always)]
pub(crate) fn plain(w: u64) -> bool {
    let all_ones = w & (w >> 1) & (w >> 2) & (w >> 3) & (w >> 4) & 0x0421_0421_0421_0421;
    w & 0x8000_8000_8000_8000 == 0 && all_ones == 0
}

/// Bits per sample of a plain group's four tracks.
#[inline(always)]
pub(crate) fn plain_bits(w: u64) -> usize {
    let t = (w & FIELD) + ((w >> 5) & FIELD) + ((w >> 10) & FIELD);
    (t.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize
}

/// The clip ranges of a group, by lane: min x, y, z then extent x, y, z.
pub(crate) type GroupRanges = [Vec4; 6];

/// Base, step and mask of the three components of a plain group's four lanes in one segment
/// (`ClipReader::dequant`'s arithmetic, lane by lane): the widths `w`, the segment ranges at
/// `ranges` (rows of `lanes` bytes; `None` for a single-segment clip), the clip ranges `clip`.
#[derive(Clone, Copy)]
pub(crate) struct Dequant4 {
    base: [__m128; 3],
    step: [__m128; 3],
    mask: [__m128i; 3],
}

impl Dequant4 {
    /// All zero: a placeholder for a cache entry not computed yet (never read as one).
    pub(crate) fn zeroed() -> Self {
        // SAFETY: SSE2 is part of the x86-64 baseline (this module is compiled only there).
        unsafe {
            Dequant4 {
                base: [_mm_setzero_ps(); 3],
                step: [_mm_setzero_ps(); 3],
                mask: [_mm_setzero_si128(); 3],
            }
        }
    }
}

/// [`Dequant4`] of a group. The caller guarantees (validation) 4 bytes from every range row.
#[inline(always)]
pub(crate) fn dequant(
    buf: &[u8],
    w: u64,
    ranges: Option<(usize, usize)>,
    clip: &GroupRanges,
) -> Dequant4 {
    // SAFETY: SSE2 is part of the x86-64 baseline (this module is compiled only there).
    unsafe {
        let zero = _mm_setzero_si128();
        let lanes = _mm_unpacklo_epi16(_mm_cvtsi64_si128(w as i64), zero);
        let one = _mm_set1_ps(1.0);
        let (smin, sext): ([__m128; 3], [__m128; 3]) = match ranges {
            Some((off, lanes)) => {
                let row = |r: usize| {
                    let o = off + r * lanes;
                    let v = i32::from_le_bytes(buf[o..o + 4].try_into().unwrap());
                    let v = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(v), zero), zero);
                    _mm_div_ps(_mm_cvtepi32_ps(v), _mm_set1_ps(255.0))
                };
                ([row(0), row(1), row(2)], [row(3), row(4), row(5)])
            }
            None => ([_mm_setzero_ps(); 3], [one; 3]),
        };
        let field = _mm_set1_epi32(31);
        let bits = [
            _mm_and_si128(lanes, field),
            _mm_and_si128(_mm_srli_epi32::<5>(lanes), field),
            _mm_and_si128(_mm_srli_epi32::<10>(lanes), field),
        ];
        let mut d = Dequant4 {
            base: [_mm_setzero_ps(); 3],
            step: [_mm_setzero_ps(); 3],
            mask: [zero; 3],
        };
        for c in 0..3 {
            // 2^bits exactly (an exponent), minus one: the step count, exact up to 24 bits.
            let pow2 = _mm_castsi128_ps(_mm_slli_epi32::<23>(_mm_add_epi32(
                bits[c],
                _mm_set1_epi32(127),
            )));
            let steps = _mm_sub_ps(pow2, one);
            d.mask[c] = _mm_cvttps_epi32(steps);
            let inv = _mm_div_ps(one, steps);
            let cmin: __m128 = clip[c].into();
            let cext: __m128 = clip[3 + c].into();
            let base = _mm_add_ps(cmin, _mm_mul_ps(cext, smin[c]));
            let range = _mm_mul_ps(cext, sext[c]);
            let is_zero = _mm_castsi128_ps(_mm_cmpeq_epi32(bits[c], zero));
            d.base[c] = select(
                is_zero,
                _mm_add_ps(base, _mm_mul_ps(_mm_set1_ps(0.5), range)),
                base,
            );
            d.step[c] = _mm_andnot_ps(is_zero, _mm_mul_ps(range, inv));
        }
        d
    }
}

/// The decoded x, y, z of the four tracks of a plain group whose widths are `w` at bit
/// position `pos` of `buf`, dequantized by `d`, by component (one vector of four lanes each; the
/// fourth vector zero). Lanes past the group's tracks hold meaningless finite values. The
/// caller guarantees (validation) that `buf` has 4 bytes from every component's byte.
///
/// `AVX2` (only in the copy of the decoder compiled for AVX2 + BMI2, `ClipReader::decode_into`):
/// the components are cut out of the four tracks' 64-bit words with AVX2's per-lane shifts
/// ([`raw_avx2`]) instead of one scalar shift per component; the same integers.
#[inline(always)]
pub(crate) fn columns<const AVX2: bool>(
    buf: &[u8],
    pos: usize,
    w: u64,
    d: &Dequant4,
) -> [__m128; 4] {
    let f0 = w & FIELD;
    let f1 = (w >> 5) & FIELD;
    let t = f0 + f1 + ((w >> 10) & FIELD);
    // Where each lane's track starts, relative to `pos`: the running sum of the totals.
    let start = (t << 16).wrapping_add(t << 32).wrapping_add(t << 48);
    let last = pos + (start >> 48) as usize;
    // One 64-bit load per track holds its three components when the track has at most 57 bits
    // (a load starts at most 7 bits before the track) and 8 bytes follow its first byte: a
    // quarter of the loads and index checks of a load per component.
    let fits = (t + FITS_57) & LANE_HIGH == 0 && (last >> 3) + 8 <= buf.len();
    if AVX2 && fits {
        // SAFETY: `AVX2` is true only in the decoder's copy that runs where the CPU has AVX2
        // and BMI2 (`ClipReader::decode_into`); `fits` is the bound `raw_avx2` relies on.
        let q = unsafe { raw_avx2(buf, pos, start, f0, f1) };
        // SAFETY: SSE2 is part of the x86-64 baseline.
        return unsafe {
            let mut out = [_mm_setzero_ps(); 4];
            for c in 0..3 {
                let q = _mm_and_si128(q[c], d.mask[c]);
                out[c] = _mm_add_ps(d.base[c], _mm_mul_ps(d.step[c], _mm_cvtepi32_ps(q)));
            }
            out
        };
    }
    let raw = if fits {
        // A function, not a closure: with two copies of the decoder, the compiler stopped
        // inlining the closure (7 % slower warm).
        #[inline(always)]
        fn lane(buf: &[u8], pos: usize, (start, f0, f1): (u64, u64, u64), j: usize) -> [i32; 3] {
            let p = pos + ((start >> (16 * j)) & 0xFFFF) as usize;
            let b = p >> 3;
            let word = u64::from_le_bytes(buf[b..b + 8].try_into().unwrap()) >> (p & 7);
            let (a, c) = (((f0 >> (16 * j)) & 0xFFFF), ((f1 >> (16 * j)) & 0xFFFF));
            [word as i32, (word >> a) as i32, (word >> (a + c)) as i32]
        }
        let o = (start, f0, f1);
        let l = [
            lane(buf, pos, o, 0),
            lane(buf, pos, o, 1),
            lane(buf, pos, o, 2),
            lane(buf, pos, o, 3),
        ];
        core::array::from_fn(|c| [l[0][c], l[1][c], l[2][c], l[3][c]])
    } else {
        let word = |p: usize| {
            let b = p >> 3;
            (u32::from_le_bytes(buf[b..b + 4].try_into().unwrap()) >> (p & 7)) as i32
        };
        let comp = |off: u64| -> [i32; 4] {
            core::array::from_fn(|j| word(pos + ((off >> (16 * j)) & 0xFFFF) as usize))
        };
        [comp(start), comp(start + f0), comp(start + f0 + f1)]
    };
    // The same dequantization as the AVX2 branch above, written out again: through a shared
    // helper the build-target copy measured 2-3 % slower warm (code layout), with the loop
    // here as it was before the AVX2 copy, the same as before.
    // SAFETY: SSE2 is part of the x86-64 baseline (this module is compiled only there).
    unsafe {
        let mut out = [_mm_setzero_ps(); 4];
        for c in 0..3 {
            let r = raw[c];
            let q = _mm_and_si128(_mm_set_epi32(r[3], r[2], r[1], r[0]), d.mask[c]);
            out[c] = _mm_add_ps(d.base[c], _mm_mul_ps(d.step[c], _mm_cvtepi32_ps(q)));
        }
        out
    }
}

/// [`columns`]' bit extraction with AVX2: the four tracks' 64-bit words in one register, each
/// shifted by its own bit offset, then by each component's offset inside the track, all four
/// lanes at once (`vpsrlvq`); the low 32 bits of each lane are what the scalar path's
/// `word >> … as i32` keeps. The caller guarantees (its `fits`) 8 bytes from every track's
/// first byte and at most 57 bits per track.
#[target_feature(enable = "avx2,bmi1,bmi2")]
#[inline]
unsafe fn raw_avx2(buf: &[u8], pos: usize, start: u64, f0: u64, f1: u64) -> [__m128i; 3] {
    let word = |j: usize| {
        let b = (pos + ((start >> (16 * j)) & 0xFFFF) as usize) >> 3;
        i64::from_le_bytes(buf[b..b + 8].try_into().unwrap())
    };
    let words = _mm256_set_epi64x(word(3), word(2), word(1), word(0));
    // Each lane's bit position (pos + its start), then the shift inside its first byte.
    let widen = |v: u64| _mm256_cvtepu16_epi64(_mm_cvtsi64_si128(v as i64));
    let at = _mm256_add_epi64(widen(start), _mm256_set1_epi64x(pos as i64));
    let words = _mm256_srlv_epi64(words, _mm256_and_si256(at, _mm256_set1_epi64x(7)));
    let a = widen(f0);
    let ac = _mm256_add_epi64(a, widen(f1));
    // Lanes 0, 2, 4, 6 (the low halves of the four 64-bit lanes) into the low 128 bits.
    let low = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    let pick = |v: __m256i| _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(v, low));
    [
        pick(words),
        pick(_mm256_srlv_epi64(words, a)),
        pick(_mm256_srlv_epi64(words, ac)),
    ]
}

/// [`columns`] by track: the decoded x, y, z (lane w: 0) of each of the four tracks.
#[inline(always)]
pub(crate) fn rows(c: [__m128; 4]) -> [Vec4; 4] {
    transpose(c).map(Vec4::from)
}

/// Added to four 16-bit totals of at most 72 bits: bit 7 of a lane is set when its total is
/// above 57.
const FITS_57: u64 = 0x0046_0046_0046_0046;
const LANE_HIGH: u64 = 0x0080_0080_0080_0080;

#[inline(always)]
fn select(mask: __m128, a: __m128, b: __m128) -> __m128 {
    // SAFETY: SSE is part of the x86-64 baseline.
    unsafe { _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b)) }
}

/// Columns (one vector per component) to rows (one vector per lane).
#[inline(always)]
fn transpose(c: [__m128; 4]) -> [__m128; 4] {
    // SAFETY: SSE is part of the x86-64 baseline.
    unsafe {
        let t0 = _mm_unpacklo_ps(c[0], c[1]);
        let t1 = _mm_unpacklo_ps(c[2], c[3]);
        let t2 = _mm_unpackhi_ps(c[0], c[1]);
        let t3 = _mm_unpackhi_ps(c[2], c[3]);
        [
            _mm_movelh_ps(t0, t1),
            _mm_movehl_ps(t1, t0),
            _mm_movelh_ps(t2, t3),
            _mm_movehl_ps(t3, t2),
        ]
    }
}
