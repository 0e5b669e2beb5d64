//! Byte layout of the `.cfa` buffer (see `docs/FORMAT.md`): constants, section arithmetic and
//! the bit packing shared by the writer and the reader.

use crate::fmath;
use alloc::vec::Vec;

pub const MAGIC: [u8; 4] = *b"CFA1";
/// The version the writer stamps: 5 codes every segment's metadata against the previous
/// segment's ([`CODED_METADATA_VERSION`]); the values are version 4's.
pub const VERSION: u16 = CODED_METADATA_VERSION;
/// The newest version the reader accepts.
pub const MAX_VERSION: u16 = CODED_METADATA_VERSION;
/// The oldest version the reader accepts: version 2 only added the raw float32 width code
/// ([`RAW_WIDTH_CODE`]), so a version-1 buffer is a version-2 buffer without it; versions 1
/// and 2 store every clip range in float32.
pub const MIN_VERSION: u16 = 1;
/// The first version with 16-bit rotation clip ranges.
pub const COMPACT_ROT_RANGE_VERSION: u16 = 3;
/// The first version whose segments are blocks (bits per sample, widths, segment ranges in
/// groups of four tracks, dropped components, then the bit stream; no segment table), laid out
/// for decoding four tracks at a time ([`segment_block_layout`]). Same values as version 3.
pub const GROUPED_SEGMENTS_VERSION: u16 = 4;
/// The first version whose segment metadata (widths, segment ranges, dropped components) is
/// one coded bit stream before the bit streams, each segment after the first coded against the
/// one before it (`docs/FORMAT.md`, "Coded segment metadata"); the reader expands it into
/// version 4's block layout once, at construction. No bits-per-sample count: the widths give
/// it. Same values as version 4.
pub const CODED_METADATA_VERSION: u16 = 5;
/// Tracks per group in a version-4 segment: their widths load as one 64-bit word and their
/// segment ranges as one 32-bit word per row.
pub const GROUP: usize = 4;
/// Version 4: bit 15 of a track's widths says its segment drops no rotation component (a raw
/// float32 w follows its x, y, z in the stream), so the widths alone give the track's bits.
pub const WIDTHS_RAW_W_FLAG: u16 = 1 << 15;

/// Where the parts of a version-4 segment block lie, relative to the block's start (a multiple
/// of 4): `(widths, ranges, dropped, data, end)` for `num_animated` tracks, `slots` per-segment
/// dropped components, `seg_len` samples of `bits` bits each, ranges stored when `multi`.
#[inline]
pub fn segment_block_layout(
    num_animated: usize,
    multi: bool,
    slots: usize,
    seg_len: usize,
    bits: usize,
) -> (usize, usize, usize, usize, usize) {
    let widths = 4;
    let ranges = widths + 2 * num_animated;
    let dropped = ranges + if multi { 6 * num_animated } else { 0 };
    let data = align4(dropped + slots);
    (
        widths,
        ranges,
        dropped,
        data,
        data + align4((bits * seg_len).div_ceil(8)),
    )
}

/// Version 4: byte offset, from the start of a segment's ranges, of row `row` (min x, y, z,
/// extent x, y, z) of animated sub-track `a`: the rows of a group of [`GROUP`] tracks are
/// stored one after the other, one byte per track of the group (fewer in a last, partial group).
#[inline(always)]
pub fn grouped_range_offset(num_animated: usize, a: usize, row: usize) -> usize {
    let g = a / GROUP;
    let lanes = (num_animated - GROUP * g).min(GROUP);
    6 * GROUP * g + row * lanes + a % GROUP
}

/// Steps of a 16-bit rotation clip range over [-1, 1] (kept quaternion components).
const ROT_RANGE_STEPS: f32 = 65535.0;

/// Clip range `(min, extent)` of a kept quaternion component stored as 16-bit `min_q` and
/// `ext_q` (`min_q + ext_q ≤ 65535`): `min = −1 + 2·min_q/65535`, `extent = 2·ext_q/65535`.
#[inline]
pub fn rot_range_decode(min_q: u16, ext_q: u16) -> (f32, f32) {
    (
        min_q as f32 * (2.0 / ROT_RANGE_STEPS) - 1.0,
        ext_q as f32 * (2.0 / ROT_RANGE_STEPS),
    )
}

/// The smallest 16-bit rotation clip range whose decoded interval holds `[lo, hi]` (within
/// [-1, 1]; values beyond are clamped by quantization, a float32 rounding away).
pub fn rot_range_encode(lo: f32, hi: f32) -> (u16, u16) {
    let half = ROT_RANGE_STEPS * 0.5;
    // Floor and ceiling of values clamped to [0, 65535] by the cast and one comparison: the
    // same integers as `floor(x).clamp(..)`, without `libm`'s software rounding (~1 % of a
    // two-sample clip's compression, which encodes every animated rotation's range).
    let mut min_q = ((lo + 1.0) * half).clamp(0.0, ROT_RANGE_STEPS) as u16;
    while min_q > 0 && rot_range_decode(min_q, 0).0 > lo {
        min_q -= 1;
    }
    let top = ((hi + 1.0) * half).clamp(min_q as f32, ROT_RANGE_STEPS);
    let mut max_q = top as u16;
    if (max_q as f32) < top {
        max_q += 1;
    }
    while max_q < u16::MAX && {
        let (m, e) = rot_range_decode(min_q, max_q - min_q);
        m + e < hi
    } {
        max_q += 1;
    }
    (min_q, max_q - min_q)
}
/// Width code (5 bits) of a component stored as raw float32 bits (32 bits, no range): the
/// compressor's guaranteed last resort. Version 2 and later.
pub(crate) const RAW_WIDTH_CODE: u32 = 31;
pub const HEADER_SIZE: usize = 48;
/// Zero bytes after the last bit stream, so a 4-byte load at any bit position stays in bounds.
pub const TAIL_PADDING: usize = 4;

/// Samples per segment: the only segment size this version of the format has (the header
/// stores it, and a reader refuses any other value).
pub const SEGMENT_SIZE: usize = 16;

/// Largest magnitude of a kept quaternion component a reader accepts (unit quaternions have
/// components in [-1, 1]; the margin covers float32 rounding of a normalized value).
pub const MAX_KEPT_COMPONENT: f32 = 1.0 + 1e-4;
/// Largest deviation from unit length of a stored bind rotation (the compressor writes
/// rotations normalized to float32 precision, about 1e-7 off).
pub const BIND_ROTATION_TOLERANCE: f32 = 1e-5;

pub const FLAG_WRAP: u16 = 1;
pub const FLAG_METADATA: u16 = 2;
/// Bits 2–3: the samples are an additive layer, in ACL's format 1 relative, 2 additive0,
/// 3 additive1 (0: a plain clip). The base is not stored: a game applies the layer to its own pose.
pub const FLAG_ADDITIVE_SHIFT: u16 = 2;
pub const FLAG_ADDITIVE_MASK: u16 = 3 << FLAG_ADDITIVE_SHIFT;
/// Some animated rotations are stored relative to a reference rotation of their own: a section
/// after the clip ranges says which ones and holds the references ([`reference_decode`]); such a
/// track decodes to `reference · stored`. The compressor uses it for additive clips, whose
/// rotations relative to a base that the clip leaves far behind can cost more bits than the
/// same rotations in the base's frame (`docs/FORMAT.md`).
pub const FLAG_ROTATION_REFERENCES: u16 = 1 << 4;
/// The metadata ends with a float32 per bone: the clip file's own error threshold for it (ACL's
/// per-track `precision`), 0 for none, so a decompressed clip keeps its per-bone settings.
pub const FLAG_BONE_PRECISIONS: u16 = 1 << 5;
/// With [`FLAG_ROTATION_REFERENCES`] only: each reference is 3 bytes ([`reference_decode3`]:
/// x, y, z, with w ≥ 0 rebuilt) and follows the reference bits without padding. Bit 4 alone
/// is the first layout (4 bytes each, [`reference_decode`]), which readers still accept; a new
/// flag rather than a reinterpretation, so an older reader refuses such a buffer.
pub const FLAG_COMPACT_REFERENCES: u16 = 1 << 6;
/// The buffer ends with a settings record: what the clip was compressed with and where each
/// setting came from ([`crate::metadata`]). Informational; a buffer without it is complete.
pub const FLAG_SETTINGS: u16 = 1 << 7;
pub const KNOWN_FLAGS: u16 = FLAG_WRAP
    | FLAG_METADATA
    | FLAG_ADDITIVE_MASK
    | FLAG_ROTATION_REFERENCES
    | FLAG_BONE_PRECISIONS
    | FLAG_COMPACT_REFERENCES
    | FLAG_SETTINGS;

/// Scale of a reference rotation's 8-bit signed components.
const REFERENCE_SCALE: f32 = 127.0;

/// The rotation a stored reference stands for (normalized); `None` when it is too far from
/// unit length to be one (a hostile buffer: a real one is within 0.8% of it).
pub fn reference_decode(v: [i8; 4]) -> Option<glam::Quat> {
    let q = glam::Vec4::from_array(v.map(|c| c as f32 / REFERENCE_SCALE));
    let len = q.length();
    (len > 0.97 && len < 1.03).then(|| glam::Quat::from_vec4(q / len))
}

/// Largest length of a compact reference's x, y, z a reader accepts: a real one is a unit
/// quaternion's, within 3·½/127 of its rounding (0.7%).
const COMPACT_REFERENCE_MAX_LEN: f32 = 1.03;

/// A reference rotation as stored with [`FLAG_COMPACT_REFERENCES`]: x, y, z of the quaternion
/// with w ≥ 0 (q and −q are the same rotation), in 8-bit signed fixed point; w is rebuilt.
pub fn reference_encode3(q: glam::Quat) -> [i8; 3] {
    let q = if q.w < 0.0 { -q } else { q };
    [q.x, q.y, q.z].map(|v| fmath::round(v.clamp(-1.0, 1.0) * REFERENCE_SCALE) as i8)
}

/// The rotation a compact reference stands for: w = √(1 − |xyz|²) (0 when the rounded x, y, z
/// are a little longer than 1), normalized; `None` when x, y, z are too long to belong to a unit
/// quaternion (a hostile buffer).
pub fn reference_decode3(v: [i8; 3]) -> Option<glam::Quat> {
    let xyz = glam::Vec3::from_array(v.map(|c| c as f32 / REFERENCE_SCALE));
    let len2 = xyz.length_squared();
    if len2 > COMPACT_REFERENCE_MAX_LEN * COMPACT_REFERENCE_MAX_LEN {
        return None;
    }
    let q = xyz.extend(fmath::sqrt((1.0 - len2).max(0.0)));
    Some(glam::Quat::from_vec4(q / q.length()))
}

/// Sub-track kinds, two bits each in a bone descriptor byte.
pub const KIND_DEFAULT: u8 = 0;
pub const KIND_CONSTANT: u8 = 1;
pub const KIND_ANIMATED: u8 = 2;
/// A constant stored in 16 bits per component (rotations: kept components; translations:
/// inside the clip's constant-translation box) when that is precise enough.
pub const KIND_CONSTANT_Q: u8 = 3;

/// Kept components of a quaternion whose largest component was dropped lie in ±1/√2.
pub const QROT_RANGE: f32 = 0.707_2;
const Q16_MAX: f32 = 65535.0;

#[inline]
pub fn q16_encode(v: f32, min: f32, ext: f32) -> u16 {
    if ext <= 0.0 {
        0
    } else {
        fmath::round((v - min) / ext * Q16_MAX).clamp(0.0, Q16_MAX) as u16
    }
}

#[inline]
pub fn q16_decode(q: u16, min: f32, ext: f32) -> f32 {
    min + ext * (q as f32 / Q16_MAX)
}

pub const NO_PARENT_U16: u16 = u16::MAX;

/// In the descriptor of a bone with an animated rotation, this "dropped component" value means
/// the dropped component is chosen per segment (one byte per segment), for rotations where every
/// component comes close to zero somewhere in the clip (a root turning around).
pub const DROPPED_PER_SEGMENT: u8 = 2;

/// Per-segment dropped value (version 2): no component dropped. The three stored components are
/// x, y, z and w follows them as raw float32 (32 more bits per sample), for segments where every
/// component nears zero somewhere, so rebuilding one from the other three would lose precision.
pub const DROPPED_NONE: u8 = 4;
/// Bits that follow the three components of a rotation whose segment drops nothing.
pub const DROPPED_NONE_BITS: usize = 32;

/// Bits of one sample of an animated sub-track from its widths word (versions 4 and 5): its
/// three widths, and the raw w that bit 15 marks.
#[inline]
pub fn track_bits(word: u16) -> usize {
    let w = unpack_widths(word);
    (w[0] + w[1] + w[2]) as usize
        + if word & WIDTHS_RAW_W_FLAG != 0 {
            DROPPED_NONE_BITS
        } else {
            0
        }
}

/// Bone descriptor byte: rotation kind (bits 0-1), translation kind (2-3), scale kind (4-5),
/// dropped rotation component (6-7).
#[inline]
pub fn pack_descriptor(kinds: [u8; 3], dropped: u8) -> u8 {
    kinds[0] | (kinds[1] << 2) | (kinds[2] << 4) | (dropped << 6)
}

#[inline]
pub fn unpack_descriptor(d: u8) -> ([u8; 3], u8) {
    ([d & 3, (d >> 2) & 3, (d >> 4) & 3], d >> 6)
}

/// Per-segment bit widths of one animated sub-track: 5 bits per component; a width of
/// [`RAW_BITS`](super::quant::RAW_BITS) (raw float32) is stored as [`RAW_WIDTH_CODE`].
#[inline]
pub fn pack_widths(w: [u32; 3]) -> u16 {
    let code = |x: u32| {
        if x == super::quant::RAW_BITS {
            RAW_WIDTH_CODE
        } else {
            x
        }
    };
    (code(w[0]) | (code(w[1]) << 5) | (code(w[2]) << 10)) as u16
}

/// The three widths in bits ([`RAW_WIDTH_CODE`] read as [`RAW_BITS`](super::quant::RAW_BITS)).
#[inline]
pub fn unpack_widths(v: u16) -> [u32; 3] {
    let v = v as u32;
    let bits = |x: u32| {
        if x == RAW_WIDTH_CODE {
            super::quant::RAW_BITS
        } else {
            x
        }
    };
    [bits(v & 31), bits((v >> 5) & 31), bits((v >> 10) & 31)]
}

#[inline]
pub fn align4(x: usize) -> usize {
    (x + 3) & !3
}

/// CRC-32 of the whole buffer except the checksum field itself (bytes 8..12).
pub fn checksum(buf: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&buf[..8]);
    h.update(&buf[12..]);
    h.finalize()
}

/// LSB-first bit writer.
#[derive(Default)]
pub struct BitWriter {
    pub bytes: Vec<u8>,
    acc: u64,
    nbits: u32,
}

impl BitWriter {
    #[inline]
    pub fn write(&mut self, value: u32, bits: u32) {
        if bits == 0 {
            return;
        }
        self.acc |= (value as u64 & ((1u64 << bits) - 1)) << self.nbits;
        self.nbits += bits;
        while self.nbits >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.nbits -= 8;
        }
    }

    pub fn finish(mut self) -> Vec<u8> {
        if self.nbits > 0 {
            self.bytes.push(self.acc as u8);
        }
        self.bytes
    }
}

/// Reads `bits` (≤ 24) bits at bit position `pos` of `data`. The caller guarantees
/// `pos / 8 + 4 <= data.len()` (validated once, see `TAIL_PADDING`).
/// Reads a raw float32 component (32 bits at any bit position), in two reads of 16 bits so it
/// touches no byte beyond what [`read_bits`] may.
#[inline]
pub fn read_raw_f32(data: &[u8], pos: usize) -> f32 {
    f32::from_bits(read_bits(data, pos, 16) | (read_bits(data, pos + 16, 16) << 16))
}

#[inline(always)]
pub fn read_bits(data: &[u8], pos: usize, bits: u32) -> u32 {
    let byte = pos >> 3;
    let word = u32::from_le_bytes([data[byte], data[byte + 1], data[byte + 2], data[byte + 3]]);
    (word >> (pos & 7)) & ((1u32 << bits) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The 16-bit rotation clip range holds every value it was made for, and is tight (at
        /// most a step and a bit wider on each side).
        #[test]
        fn rotation_ranges_hold_their_values(a in -1.0f32..=1.0, b in -1.0f32..=1.0) {
            let (lo, hi) = (a.min(b), a.max(b));
            let (mq, eq) = rot_range_encode(lo, hi);
            prop_assert!(mq as u32 + eq as u32 <= 65535);
            let (min, ext) = rot_range_decode(mq, eq);
            prop_assert!(min <= lo && min + ext >= hi, "{lo} {hi}: {min} {ext}");
            prop_assert!(lo - min <= 4e-5 && (min + ext) - hi <= 7e-5, "{lo} {hi}: {min} {ext}");
        }

        /// The encoder's rounding by casts gives the integers `libm`'s floor and ceiling gave
        /// (the written ranges, so the `.cfa` bytes, unchanged), also past ±1 and on the
        /// 16-bit grid's own points.
        #[test]
        fn rotation_ranges_round_as_floor_and_ceiling_did(
            a in -1.2f32..=1.2, b in -1.2f32..=1.2, grid in 0u16..=65535, on_grid in any::<bool>(),
        ) {
            let (mut lo, hi) = (a.min(b), a.max(b));
            if on_grid {
                lo = rot_range_decode(grid, 0).0.min(hi);
            }
            let half = ROT_RANGE_STEPS * 0.5;
            let mut min_q = fmath::floor((lo + 1.0) * half).clamp(0.0, ROT_RANGE_STEPS) as u16;
            while min_q > 0 && rot_range_decode(min_q, 0).0 > lo {
                min_q -= 1;
            }
            let mut max_q =
                fmath::ceil((hi + 1.0) * half).clamp(min_q as f32, ROT_RANGE_STEPS) as u16;
            while max_q < u16::MAX && {
                let (m, e) = rot_range_decode(min_q, max_q - min_q);
                m + e < hi
            } {
                max_q += 1;
            }
            prop_assert_eq!(rot_range_encode(lo, hi), (min_q, max_q - min_q));
        }

        /// A compact reference decodes to a unit quaternion near the rotation it was made from
        /// (q or −q); every 3 bytes either decode to a unit quaternion or are refused
        /// for being too long.
        #[test]
        fn compact_references_stand_for_their_rotation(
            x in -1.0f32..=1.0, y in -1.0f32..=1.0, z in -1.0f32..=1.0, w in -1.0f32..=1.0,
            raw in any::<[i8; 3]>(),
        ) {
            let v = glam::Vec4::new(x, y, z, w);
            prop_assume!(v.length() > 0.1);
            let q = glam::Quat::from_vec4(v.normalize());
            let d = reference_decode3(reference_encode3(q)).expect("a real reference is accepted");
            prop_assert!((d.length() - 1.0).abs() < 1e-5);
            // w is rebuilt from x, y, z: coarse near a half turn (w near 0), where x, y, z's
            // rounding moves it most.
            let angle = (2.0 * d.dot(q).abs().min(1.0).acos()).to_degrees();
            let limit = if q.w.abs() >= 0.3 { 3.0 } else { 15.0 };
            prop_assert!(angle < limit, "{q} -> {d}: {angle}°");
            let xyz = glam::Vec3::from_array(raw.map(|c| c as f32 / 127.0));
            match reference_decode3(raw) {
                Some(d) => prop_assert!((d.length() - 1.0).abs() < 1e-5),
                None => prop_assert!(xyz.length() > 1.0),
            }
        }

        #[test]
        fn bits_round_trip(values in proptest::collection::vec((0u32..=24, any::<u32>()), 0..200)) {
            let mut w = BitWriter::default();
            for &(bits, v) in &values {
                w.write(v, bits);
            }
            let mut bytes = w.finish();
            bytes.extend([0u8; TAIL_PADDING]);
            let mut pos = 0;
            for &(bits, v) in &values {
                let mask = if bits == 0 { 0 } else { (1u32 << bits) - 1 };
                prop_assert_eq!(read_bits(&bytes, pos, bits), v & mask);
                pos += bits as usize;
            }
        }
    }
}
