//! Version 5's coded segment metadata (`docs/FORMAT.md`, "Coded segment metadata"): every
//! segment's widths, segment ranges and per-segment dropped components in one bit stream, each
//! segment after the first coded against the one before it, and its expansion into the layout
//! version 4 keeps in its blocks (what the decoder reads).
//!
//! A segment's metadata changes little from the previous segment's (a component's width moves
//! by 0 or ±1 in most segments; its range by a few 255ths), so coding the changes instead of the
//! values takes 2.8 % / 4.5 % off the regression / BVH sets' bytes (`docs/BENCHMARKS.md`). The
//! price is that no segment's metadata can be read without the ones before it: a reader expands
//! all of it once, at construction, so the full-pose call reads the same values as from a
//! version-4 block. Written by hand: a few prefix codes over a bit stream, nothing a crate of
//! this `no_std`, dependency-free runtime could take on.

use crate::FormatError;
use crate::format::grouped_range_offset;
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

/// Zero bytes after the expanded metadata: a four-track load of widths (8 bytes from a group's
/// first track) or of a range row (4 bytes) of the last segment may run past its end.
pub const EXPANDED_TAIL: usize = 8;

/// The fewest bits a sub-track of a segment after the first can take: a flag bit, three
/// unchanged widths (1 bit each), a range flag and six unchanged range bytes (4 bits each),
/// so the expansion (8 bytes) is at most ~2.2 × the coded bytes, checked before allocating.
pub const MIN_BITS_PER_TRACK_SEGMENT: usize = 29;

/// Exp-Golomb order of the range byte changes: the shortest code on both clip sets (orders 0–5
/// measured, `scripts/segment_metadata_coding.py`).
const RANGE_GOLOMB_ORDER: u32 = 3;
/// The longest exp-Golomb prefix a range change can have: a zigzagged change of a byte is at
/// most 510, and 510 + 2³ has 10 bits, so at most 10 − 1 − 3 = 6 leading zeros.
const MAX_GOLOMB_ZEROS: u32 = 6;
/// Bits of a per-segment dropped component (0–3, or 4: none).
const DROPPED_BITS: u32 = 3;

/// What a segment's metadata holds (the same for every segment of a clip).
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub num_segs: usize,
    pub num_animated: usize,
    /// Segment ranges are stored (more than one segment).
    pub multi: bool,
    /// Animated rotations whose dropped component is chosen per segment.
    pub num_dropped: usize,
}

/// Bytes from one segment's block (`block_len` bytes) to the next in the reader's copy of the
/// metadata, whose allocation starts on a cache line: each block on its own line so a cold call
/// reads the fewest lines, but blocks under half a line stay back to back when there are several
/// (padding would more than double them). The lab's cache-line replay models the reader with it.
pub fn reader_stride(num_segs: usize, block_len: usize) -> usize {
    if num_segs == 1 || block_len >= 32 {
        block_len.next_multiple_of(64)
    } else {
        block_len
    }
}

impl Shape {
    /// Bytes of one segment's expanded metadata: widths, grouped ranges, dropped components.
    pub fn block_len(&self) -> usize {
        self.num_animated * if self.multi { 8 } else { 2 } + self.num_dropped
    }
    fn ranges_off(&self) -> usize {
        2 * self.num_animated
    }
    fn dropped_off(&self) -> usize {
        self.num_animated * if self.multi { 8 } else { 2 }
    }
}

/// Bit writer, least-significant bit first (the order of the format's bit streams).
struct Writer {
    out: Vec<u8>,
    bits: usize,
}

impl Writer {
    fn put(&mut self, value: u32, n: u32) {
        for i in 0..n {
            if self.bits.is_multiple_of(8) {
                self.out.push(0);
            }
            let bit = (value >> i) & 1;
            *self.out.last_mut().expect("a byte was pushed") |= (bit as u8) << (self.bits % 8);
            self.bits += 1;
        }
    }
}

/// Bit reader over the coded bytes: every read is bounded by them.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn bit(&mut self) -> Result<u32, FormatError> {
        let byte = *self.buf.get(self.pos / 8).ok_or_else(|| {
            FormatError::Corrupt("coded segment metadata ends in the middle of a value".into())
        })?;
        let b = (byte >> (self.pos % 8)) & 1;
        self.pos += 1;
        Ok(b as u32)
    }
    fn get(&mut self, n: u32) -> Result<u32, FormatError> {
        let mut v = 0;
        for i in 0..n {
            v |= self.bit()? << i;
        }
        Ok(v)
    }
}

/// Bits of the code of a width change: '0' (none), '10' + sign (±1), '110' + sign (±2),
/// '111' + the width in 5 bits (any other).
#[cfg(test)]
fn width_change_bits(d: i32) -> usize {
    match d.abs() {
        0 => 1,
        1 => 3,
        2 => 4,
        _ => 8,
    }
}

fn zigzag(d: i32) -> u32 {
    if d >= 0 {
        2 * d as u32
    } else {
        (-2 * d - 1) as u32
    }
}

fn unzigzag(z: u32) -> i32 {
    if z.is_multiple_of(2) {
        (z / 2) as i32
    } else {
        -(z.div_ceil(2) as i32)
    }
}

fn golomb_bits(v: u32) -> usize {
    let x = v + (1 << RANGE_GOLOMB_ORDER);
    (2 * (32 - x.leading_zeros()) - 1 - RANGE_GOLOMB_ORDER) as usize
}

fn put_golomb(w: &mut Writer, v: u32) {
    let x = v + (1 << RANGE_GOLOMB_ORDER);
    let len = 32 - x.leading_zeros();
    w.put(0, len - 1 - RANGE_GOLOMB_ORDER);
    // The value's bits, most significant first, after its leading zeros.
    for i in (0..len).rev() {
        w.put((x >> i) & 1, 1);
    }
}

fn get_golomb(r: &mut Reader) -> Result<u32, FormatError> {
    let mut zeros = 0;
    while r.bit()? == 0 {
        zeros += 1;
        if zeros > MAX_GOLOMB_ZEROS {
            return Err(FormatError::Corrupt(
                "coded segment metadata: a range change is too long".into(),
            ));
        }
    }
    let mut x = 1u32;
    for _ in 0..zeros + RANGE_GOLOMB_ORDER {
        x = (x << 1) | r.bit()?;
    }
    Ok(x - (1 << RANGE_GOLOMB_ORDER))
}

/// The three widths and bit 15 of a widths word.
fn split_widths(v: u16) -> ([i32; 3], u32) {
    ([0, 5, 10].map(|s| ((v >> s) & 31) as i32), (v >> 15) as u32)
}

/// The six range bytes of track `a` in a block (grouped rows).
fn ranges_of(block: &[u8], shape: &Shape, a: usize) -> [u8; 6] {
    core::array::from_fn(|row| {
        block[shape.ranges_off() + grouped_range_offset(shape.num_animated, a, row)]
    })
}

/// Codes `blocks` (each segment's expanded metadata, [`Shape::block_len`] bytes, as version 4
/// lays it out) into the coded bit stream, padded to a byte.
pub fn encode(blocks: &[&[u8]], shape: &Shape) -> Vec<u8> {
    let mut w = Writer {
        out: Vec::new(),
        bits: 0,
    };
    let a_n = shape.num_animated;
    for (s, block) in blocks.iter().enumerate() {
        let prev = (s > 0).then(|| blocks[s - 1]);
        for a in 0..a_n {
            let v = u16::from_le_bytes([block[2 * a], block[2 * a + 1]]);
            match prev {
                None => w.put(v as u32, 16),
                Some(p) => {
                    let (cur, flag) = split_widths(v);
                    let (old, _) = split_widths(u16::from_le_bytes([p[2 * a], p[2 * a + 1]]));
                    w.put(flag, 1);
                    for c in 0..3 {
                        let d = cur[c] - old[c];
                        match d {
                            0 => w.put(0, 1),
                            -2..=2 => {
                                let ones = d.unsigned_abs();
                                w.put((1 << ones) - 1, ones);
                                w.put(0, 1);
                                w.put((d < 0) as u32, 1);
                            }
                            _ => {
                                w.put(0b111, 3);
                                w.put(cur[c] as u32, 5);
                            }
                        }
                    }
                }
            }
            if shape.multi {
                let r = ranges_of(block, shape, a);
                let raw_bits = 48;
                let changes = prev.map(|p| {
                    let o = ranges_of(p, shape, a);
                    core::array::from_fn::<u32, 6, _>(|k| zigzag(r[k] as i32 - o[k] as i32))
                });
                let coded = changes.map(|z| z.iter().map(|&v| golomb_bits(v)).sum::<usize>());
                match (changes, coded) {
                    (Some(z), Some(bits)) if bits < raw_bits => {
                        w.put(1, 1);
                        for v in z {
                            put_golomb(&mut w, v);
                        }
                    }
                    _ => {
                        if prev.is_some() {
                            w.put(0, 1);
                        }
                        for b in r {
                            w.put(b as u32, 8);
                        }
                    }
                }
            }
        }
        for k in 0..shape.num_dropped {
            w.put(block[shape.dropped_off() + k] as u32, DROPPED_BITS);
        }
    }
    w.out
}

/// Bits of the coded metadata of `blocks` (what [`encode`] writes, unpadded).
#[cfg(test)]
pub(crate) fn coded_bits(blocks: &[&[u8]], shape: &Shape) -> usize {
    let mut bits = 0;
    for (s, block) in blocks.iter().enumerate() {
        for a in 0..shape.num_animated {
            let v = u16::from_le_bytes([block[2 * a], block[2 * a + 1]]);
            if s == 0 {
                bits += 16 + if shape.multi { 48 } else { 0 };
                continue;
            }
            let p = blocks[s - 1];
            let (cur, _) = split_widths(v);
            let (old, _) = split_widths(u16::from_le_bytes([p[2 * a], p[2 * a + 1]]));
            bits += 1
                + (0..3)
                    .map(|c| width_change_bits(cur[c] - old[c]))
                    .sum::<usize>();
            if shape.multi {
                let (r, o) = (ranges_of(block, shape, a), ranges_of(p, shape, a));
                let z: usize = (0..6)
                    .map(|k| golomb_bits(zigzag(r[k] as i32 - o[k] as i32)))
                    .sum();
                bits += 1 + z.min(48);
            }
        }
        bits += DROPPED_BITS as usize * shape.num_dropped;
    }
    bits
}

/// Expands `coded` into every segment's metadata laid out as version 4's blocks
/// ([`Shape::block_len`] bytes each, back to back), followed by [`EXPANDED_TAIL`] zero bytes.
/// Fails when the coded bytes end early, a change takes a width or range byte out of its
/// field, or bytes are left over (whole bytes only: the last one's unused bits must be 0).
/// The values themselves are checked afterwards, as a version-4 block's are.
pub(crate) fn decode(coded: &[u8], shape: &Shape) -> Result<Vec<u8>, FormatError> {
    let (n, a_n) = (shape.num_segs, shape.num_animated);
    // Bounded by the coded bytes before allocating.
    let needed_bits = n.saturating_sub(1) * a_n * MIN_BITS_PER_TRACK_SEGMENT;
    if needed_bits > coded.len().saturating_mul(8) {
        return Err(FormatError::Corrupt(format!(
            "coded segment metadata: {} bytes cannot hold {n} segments of {a_n} sub-tracks",
            coded.len()
        )));
    }
    let len = shape.block_len();
    let mut out = vec![0u8; n * len + EXPANDED_TAIL];
    let mut r = Reader { buf: coded, pos: 0 };
    let corrupt = |s: usize, what: &str| {
        FormatError::Corrupt(format!("coded segment metadata, segment {s}: {what}"))
    };
    for s in 0..n {
        let (done, rest) = out.split_at_mut(s * len);
        let block = &mut rest[..len];
        let prev = (s > 0).then(|| &done[(s - 1) * len..]);
        for a in 0..a_n {
            let v = match prev {
                None => r.get(16)? as u16,
                Some(p) => {
                    let (old, _) = split_widths(u16::from_le_bytes([p[2 * a], p[2 * a + 1]]));
                    let flag = r.get(1)?;
                    let mut word = (flag as u16) << 15;
                    for (c, &o) in old.iter().enumerate() {
                        let width = if r.bit()? == 0 {
                            o
                        } else if r.bit()? == 0 {
                            o + if r.bit()? == 0 { 1 } else { -1 }
                        } else if r.bit()? == 0 {
                            o + if r.bit()? == 0 { 2 } else { -2 }
                        } else {
                            r.get(5)? as i32
                        };
                        if !(0..32).contains(&width) {
                            return Err(corrupt(s, "a width change leaves the 5-bit field"));
                        }
                        word |= (width as u16) << (5 * c);
                    }
                    word
                }
            };
            block[2 * a..2 * a + 2].copy_from_slice(&v.to_le_bytes());
            if shape.multi {
                let bytes: [u8; 6] = match prev {
                    Some(p) if r.bit()? == 1 => {
                        let o = ranges_of(p, shape, a);
                        let mut b = [0u8; 6];
                        for k in 0..6 {
                            let x = o[k] as i32 + unzigzag(get_golomb(&mut r)?);
                            b[k] = u8::try_from(x)
                                .map_err(|_| corrupt(s, "a range change leaves the byte"))?;
                        }
                        b
                    }
                    _ => {
                        let mut b = [0u8; 6];
                        for x in &mut b {
                            *x = r.get(8)? as u8;
                        }
                        b
                    }
                };
                for (row, &b) in bytes.iter().enumerate() {
                    block[shape.ranges_off() + grouped_range_offset(a_n, a, row)] = b;
                }
            }
        }
        for k in 0..shape.num_dropped {
            block[shape.dropped_off() + k] = r.get(DROPPED_BITS)? as u8;
        }
    }
    // The coded stream is whole bytes: what is left after the last value is padding only.
    if r.pos.div_ceil(8) != coded.len()
        || (!r.pos.is_multiple_of(8) && coded[r.pos / 8] >> (r.pos % 8) != 0)
    {
        return Err(FormatError::Corrupt(
            "coded segment metadata: bytes after the last segment's values".into(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn shape(num_segs: usize, num_animated: usize, num_dropped: usize) -> Shape {
        Shape {
            num_segs,
            num_animated,
            multi: num_segs > 1,
            num_dropped,
        }
    }

    proptest! {
        /// Any metadata (widths ≤ 31 per field, any bit 15, any range bytes, dropped 0–7) codes
        /// and expands back to the same bytes, in the bits `coded_bits` counts; small changes
        /// between segments (the common case) take fewer bytes than the blocks.
        #[test]
        fn metadata_codes_and_expands_to_the_same_bytes(
            num_segs in 1usize..6, num_animated in 0usize..11, num_dropped in 0usize..3,
            seed in any::<u64>(), smooth in any::<bool>(),
        ) {
            let sh = shape(num_segs, num_animated, num_dropped.min(num_animated));
            let len = sh.block_len();
            let mut x = seed | 1;
            let mut next = move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
            let mut data = vec![0u8; num_segs * len];
            for s in 0..num_segs {
                for a in 0..num_animated {
                    let word = if smooth && s > 0 {
                        let p = u16::from_le_bytes([data[(s - 1) * len + 2 * a], data[(s - 1) * len + 2 * a + 1]]);
                        let (mut w, f) = split_widths(p);
                        for c in &mut w { *c = (*c + (next() % 3) as i32 - 1).clamp(0, 31); }
                        (w[0] | w[1] << 5 | w[2] << 10) as u16 | (f as u16) << 15
                    } else {
                        next() as u16
                    };
                    data[s * len + 2 * a..s * len + 2 * a + 2].copy_from_slice(&word.to_le_bytes());
                }
                for b in &mut data[s * len + 2 * num_animated..(s + 1) * len] {
                    *b = next() as u8;
                }
                for k in 0..sh.num_dropped {
                    data[s * len + sh.dropped_off() + k] = (next() % 8) as u8;
                }
                if smooth && s > 0 && sh.multi {
                    for i in sh.ranges_off()..sh.dropped_off() {
                        let p = data[(s - 1) * len + i] as i32;
                        data[s * len + i] = (p + (next() % 5) as i32 - 2).clamp(0, 255) as u8;
                    }
                }
            }
            let blocks: Vec<&[u8]> = data.chunks(len.max(1)).take(num_segs).collect();
            let blocks: Vec<&[u8]> = if len == 0 { vec![&[][..]; num_segs] } else { blocks };
            let coded = encode(&blocks, &sh);
            prop_assert_eq!(coded.len(), coded_bits(&blocks, &sh).div_ceil(8));
            let back = decode(&coded, &sh).expect("what was coded expands");
            prop_assert_eq!(&back[..num_segs * len], &data[..]);
            prop_assert!(back[num_segs * len..].iter().all(|&b| b == 0));
            if smooth && num_segs > 2 && num_animated > 0 {
                prop_assert!(coded.len() < data.len(), "{} coded vs {} raw", coded.len(), data.len());
            }
        }

        /// Any bytes either expand or are refused with an error (never a panic), and an
        /// expansion is never more than the bound checked before allocating.
        #[test]
        fn any_bytes_expand_or_are_refused(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
            num_segs in 1usize..40, num_animated in 0usize..20, num_dropped in 0usize..3,
        ) {
            let sh = shape(num_segs, num_animated, num_dropped.min(num_animated));
            if let Ok(out) = decode(&bytes, &sh) {
                prop_assert_eq!(out.len(), num_segs * sh.block_len() + EXPANDED_TAIL);
                prop_assert!((num_segs - 1) * num_animated * MIN_BITS_PER_TRACK_SEGMENT <= 8 * bytes.len());
            }
        }
    }

    #[test]
    fn a_stream_cut_short_or_too_long_is_refused() {
        let sh = shape(3, 2, 1);
        let len = sh.block_len();
        let data: Vec<u8> = (0..3 * len).map(|i| (i * 7 % 31) as u8).collect();
        let blocks: Vec<&[u8]> = data.chunks(len).collect();
        let coded = encode(&blocks, &sh);
        assert!(decode(&coded, &sh).is_ok());
        assert!(decode(&coded[..coded.len() - 1], &sh).is_err());
        let mut longer = coded.clone();
        longer.push(0);
        assert!(decode(&longer, &sh).is_err());
    }
}
