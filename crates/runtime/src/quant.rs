//! Quantization arithmetic shared by the decoder and the compressor's search, so the search
//! measures exactly the values the runtime will produce.

use glam::{Quat, Vec4};

/// Largest bit width of one quantized component.
pub const MAX_BITS: u32 = 24;
/// Width of a component stored as raw float32 bits (no quantization, no range): the last resort
/// that meets any threshold above float32 rounding.
pub const RAW_BITS: u32 = 32;
/// Steps of the 8-bit per-segment range inside the clip range.
pub const SEGMENT_RANGE_STEPS: f32 = 255.0;

/// `1 / (2^bits − 1)`: a multiply instead of a divide per component on the decode path.
const INV_STEPS: [f32; 25] = {
    let mut t = [0.0f32; 25];
    let mut b = 1;
    while b < 25 {
        t[b] = 1.0 / ((1u32 << b) - 1) as f32;
        b += 1;
    }
    t
};

/// `q / 255` for every 8-bit segment range value `q`, exactly as [`Dequant::new`] divides (a
/// load instead of a division on the decode path: the divider was its bottleneck).
pub(crate) const SEGMENT_FRACTIONS: [f32; 256] = {
    let mut t = [0.0f32; 256];
    let mut q = 0;
    while q < 256 {
        t[q] = q as f32 / SEGMENT_RANGE_STEPS;
        q += 1;
    }
    t
};

/// `1 / (2^bits − 1)` for `bits` ≤ [`MAX_BITS`], 0 for 0 bits or any other width (a raw
/// component, which is not dequantized): the decoder computes every lane's step, then ignores
/// the raw ones.
#[inline(always)]
pub(crate) fn inv_steps(bits: u32) -> f32 {
    INV_STEPS.get(bits as usize).copied().unwrap_or(0.0)
}

/// Affine map from a quantized integer to a value: `value = base + q * step`.
/// With 0 bits the value is the middle of the segment range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dequant {
    pub base: f32,
    pub step: f32,
}

impl Dequant {
    /// `clip_min/clip_ext`: the clip range of the component; `seg_min_q/seg_ext_q`: the 8-bit
    /// segment range inside it (0/255 when the clip has a single segment).
    #[inline]
    pub fn new(clip_min: f32, clip_ext: f32, seg_min_q: u8, seg_ext_q: u8, bits: u32) -> Self {
        let seg_min = seg_min_q as f32 / SEGMENT_RANGE_STEPS;
        let seg_ext = seg_ext_q as f32 / SEGMENT_RANGE_STEPS;
        let base = clip_min + clip_ext * seg_min;
        let range = clip_ext * seg_ext;
        if bits == 0 {
            Self {
                base: base + 0.5 * range,
                step: 0.0,
            }
        } else {
            Self {
                base,
                step: range * INV_STEPS[bits as usize],
            }
        }
    }

    #[inline]
    pub fn value(&self, q: u32) -> f32 {
        self.base + self.step * q as f32
    }

    /// The integer whose value is nearest to `v` with `bits` bits.
    #[inline]
    pub fn quantize(&self, v: f32, bits: u32) -> u32 {
        if bits == 0 || self.step <= 0.0 {
            return 0;
        }
        let max = (1u32 << bits) - 1;
        // Non-negative after the clamp, so +0.5 and truncation rounds (faster than `round`); the
        // final `min` matters at 24 bits, where 2^24 − 0.5 rounds up to 2^24 in float32.
        let x = ((v - self.base) / self.step).clamp(0.0, max as f32);
        ((x + 0.5) as u32).min(max)
    }
}

/// The three components kept when component `dropped` (0 = x .. 3 = w) of a quaternion is
/// dropped, in ascending component order.
#[inline]
pub fn kept_components(q: Vec4, dropped: u8) -> [f32; 3] {
    let a = q.to_array();
    match dropped {
        0 => [a[1], a[2], a[3]],
        1 => [a[0], a[2], a[3]],
        2 => [a[0], a[1], a[3]],
        _ => [a[0], a[1], a[2]],
    }
}

/// [`rebuild_rotation`] without the final normalization, for callers that normalize anyway
/// (nlerp).
#[inline(always)]
pub fn rebuild_rotation_unnormalized(k: [f32; 3], dropped: u8) -> Vec4 {
    let d = (1.0 - (k[0] * k[0] + k[1] * k[1] + k[2] * k[2])).max(0.0);
    let d = crate::fmath::sqrt(d);
    match dropped {
        0 => Vec4::new(d, k[0], k[1], k[2]),
        1 => Vec4::new(k[0], d, k[1], k[2]),
        2 => Vec4::new(k[0], k[1], d, k[2]),
        _ => Vec4::new(k[0], k[1], k[2], d),
    }
}

/// Rebuilds a unit quaternion from its three kept components; the dropped one was stored
/// non-negative, so it is `sqrt(1 - |kept|²)`. The result is normalized because quantized
/// components need not lie exactly on the unit sphere.
#[inline]
pub fn rebuild_rotation(k: [f32; 3], dropped: u8) -> Quat {
    Quat::from_vec4(rebuild_rotation_unnormalized(k, dropped).normalize())
}

/// Segment layout: segments of `segment_size` samples; the last one absorbs a remainder
/// shorter than half a segment, so no segment is tiny.
#[inline]
pub fn num_segments(num_samples: usize, segment_size: usize) -> usize {
    if num_samples == 0 {
        return 0;
    }
    let full = num_samples.div_ceil(segment_size);
    let rem = num_samples - (full - 1) * segment_size;
    if full > 1 && rem < segment_size / 2 {
        full - 1
    } else {
        full
    }
}

/// (first sample, sample count) of segment `seg`.
#[inline]
pub fn segment_span(
    seg: usize,
    num_segments: usize,
    num_samples: usize,
    segment_size: usize,
) -> (usize, usize) {
    let start = seg * segment_size;
    let len = if seg + 1 == num_segments {
        num_samples - start
    } else {
        segment_size
    };
    (start, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Quantizing then dequantizing lands within half a step of any value inside the range.
        #[test]
        fn quantization_error_is_at_most_half_a_step(
            clip_min in -100.0f32..100.0, clip_ext in 0.001f32..200.0,
            lo in 0u8..=255, ext in 0u8..=255, bits in 0u32..=MAX_BITS, u in 0.0f32..=1.0,
        ) {
            let ext = ext.min(255 - lo);
            let d = Dequant::new(clip_min, clip_ext, lo, ext, bits);
            let seg_lo = clip_min + clip_ext * lo as f32 / 255.0;
            let seg_range = clip_ext * ext as f32 / 255.0;
            let v = seg_lo + u * seg_range;
            let q = d.quantize(v, bits);
            prop_assert!(q < (1u64 << bits) as u32 || bits == 0);
            let err = (d.value(q) - v).abs();
            let half = if bits == 0 { seg_range * 0.5 } else { seg_range / ((1u64 << bits) - 1) as f32 * 0.5 };
            prop_assert!(err <= half + 1e-5 * (clip_min.abs() + clip_ext), "err {err} half {half}");
        }

        /// Dropping any component whose value is non-negative and rebuilding gives the same rotation.
        #[test]
        fn rebuild_rotation_round_trips(x in -1.0f32..1.0, y in -1.0f32..1.0, z in -1.0f32..1.0, w in -1.0f32..1.0, drop in 0u8..4) {
            let v = Vec4::new(x, y, z, w);
            prop_assume!(v.length() > 0.1);
            let mut v = v.normalize();
            if v[drop as usize] < 0.0 { v = -v; }
            let r = rebuild_rotation(kept_components(v, drop), drop);
            prop_assert!((Vec4::from(r) - v).length() < 1e-3);
        }
    }

    #[test]
    fn segment_fractions_are_the_divisions() {
        for q in 0..=255u8 {
            assert_eq!(
                SEGMENT_FRACTIONS[q as usize].to_bits(),
                (q as f32 / SEGMENT_RANGE_STEPS).to_bits()
            );
        }
    }

    #[test]
    fn segments_absorb_short_remainders() {
        assert_eq!(num_segments(1, 16), 1);
        assert_eq!(num_segments(16, 16), 1);
        assert_eq!(num_segments(17, 16), 1);
        assert_eq!(num_segments(24, 16), 2);
        assert_eq!(num_segments(574, 16), 36);
        assert_eq!(segment_span(35, 36, 574, 16), (560, 14));
        assert_eq!(segment_span(0, 1, 23, 16), (0, 23));
    }
}

#[cfg(test)]
mod top_of_range {
    use super::*;

    /// At 24 bits the top of the range must stay 2^24 − 1 (float32 rounding once wrapped it to 0).
    #[test]
    fn top_value_does_not_wrap_at_any_width() {
        for bits in 1..=MAX_BITS {
            let d = Dequant::new(0.0, 0.733, 0, 255, bits);
            let q = d.quantize(0.733, bits);
            assert_eq!(q, (1u32 << bits) - 1, "bits {bits}");
            assert!((d.value(q) - 0.733).abs() < 1e-6);
        }
    }
}
