//! Validation of a `.cfa` buffer, one function per section of `docs/FORMAT.md` (header, bone
//! descriptors, fixed values, clip ranges, reference rotations, segment table and each segment,
//! metadata, the decoder's tables): each checks its section against hostile input (every count
//! bounded, every offset inside the buffer before it is read) and hands its results to the next.
//! [`ClipReader::new`](crate::ClipReader::new) runs them in file order, so a buffer with several
//! faults reports the same first one as ever.

use crate::format::*;
use crate::limits::{MAX_COMPONENT_MAGNITUDE, MAX_TOTAL_SAMPLES};
use crate::quant::{self, num_segments, rebuild_rotation};
use crate::segmeta;
use crate::skeleton::{BoneDesc, Skeleton};
use crate::{
    FormatError, Metadata, NO_FILL, NO_REFERENCE, NO_SLOT, SegEntry, Track, f32_at, metadata,
    u16_at, u32_at,
};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use glam::{Quat, Vec3, Vec3A};

pub(crate) fn corrupt<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError::Corrupt(msg.into()))
}

/// A stored range `[min, min + ext]` is finite, not reversed, and within ±`limit`
/// (float32 rounding of `min + ext` allowed for).
fn range_within(min: f32, ext: f32, limit: f32) -> bool {
    let slack = limit * 1e-6;
    min.is_finite()
        && ext.is_finite()
        && ext >= 0.0
        && min >= -limit - slack
        && min as f64 + ext as f64 <= (limit + slack) as f64
}

/// Reads little-endian values with bounds checks, for validation and metadata.
pub(crate) struct Cursor<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
    pub(crate) end: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<usize, FormatError> {
        let at = self.pos;
        let end = at.checked_add(n).ok_or(FormatError::Truncated {
            needed: usize::MAX,
            len: self.end,
        })?;
        if end > self.end {
            return Err(FormatError::Truncated {
                needed: end,
                len: self.end,
            });
        }
        self.pos = end;
        Ok(at)
    }
    fn u16(&mut self) -> Result<u16, FormatError> {
        Ok(u16_at(self.buf, self.take(2)?))
    }
    fn u32(&mut self) -> Result<u32, FormatError> {
        Ok(u32_at(self.buf, self.take(4)?))
    }
    fn f32(&mut self) -> Result<f32, FormatError> {
        let v = f32_at(self.buf, self.take(4)?);
        if v.is_finite() {
            Ok(v)
        } else {
            corrupt(format!("non-finite float at byte {}", self.pos - 4))
        }
    }
    fn str(&mut self) -> Result<String, FormatError> {
        self.str_in_buffer().map(String::from)
    }
    /// A name where it is in the buffer (UTF-8 checked), without copying it.
    fn str_in_buffer(&mut self) -> Result<&'a str, FormatError> {
        let n = self.u16()? as usize;
        let at = self.take(n)?;
        core::str::from_utf8(&self.buf[at..at + n]).or_else(|_| corrupt("a name is not UTF-8"))
    }
}

/// The fixed-size header's fields, checked against each other and the buffer.
pub(crate) struct Header {
    pub(crate) version: u16,
    pub(crate) flags: u16,
    pub(crate) runtime_size: usize,
    pub(crate) num_bones: usize,
    pub(crate) num_samples: usize,
    pub(crate) sample_rate: f32,
    pub(crate) num_segs: usize,
    pub(crate) num_constant: usize,
    pub(crate) num_animated: usize,
    pub(crate) num_qconstant: usize,
    pub(crate) wrap: bool,
    pub(crate) additive: u8,
}

/// Magic, version, size, checksum, flags and counts.
pub(crate) fn header(buf: &[u8]) -> Result<Header, FormatError> {
    let len = buf.len();
    if len < HEADER_SIZE {
        if len >= 4 && buf[..4] != MAGIC {
            return Err(FormatError::BadMagic);
        }
        return Err(FormatError::Truncated {
            needed: HEADER_SIZE,
            len,
        });
    }
    if buf[..4] != MAGIC {
        return Err(FormatError::BadMagic);
    }
    let version = u16_at(buf, 4);
    if !(MIN_VERSION..=MAX_VERSION).contains(&version) {
        return Err(FormatError::UnsupportedVersion(version));
    }
    let total_size = u32_at(buf, 12) as usize;
    if total_size != len {
        return if total_size > len {
            Err(FormatError::Truncated {
                needed: total_size,
                len,
            })
        } else {
            corrupt(format!("header says {total_size} bytes, buffer has {len}"))
        };
    }
    let stored = u32_at(buf, 8);
    let computed = checksum(buf);
    if stored != computed {
        return Err(FormatError::ChecksumMismatch { stored, computed });
    }
    // The checksum catches accidents; everything below also guards against hostile buffers.
    let flags = u16_at(buf, 6);
    if flags & !KNOWN_FLAGS != 0 {
        return corrupt(format!("unknown flags {flags:#x}"));
    }
    if flags & FLAG_METADATA == 0 {
        return corrupt("metadata section missing (names, hierarchy, bind pose)");
    }
    if flags & FLAG_COMPACT_REFERENCES != 0 && flags & FLAG_ROTATION_REFERENCES == 0 {
        return corrupt("flags: compact reference rotations (bit 6) without references (bit 4)");
    }
    let runtime_size = u32_at(buf, 16) as usize;
    if runtime_size > len || runtime_size < HEADER_SIZE + TAIL_PADDING {
        return corrupt(format!(
            "runtime size {runtime_size} outside the buffer ({len} bytes)"
        ));
    }
    let h = Header {
        version,
        flags,
        runtime_size,
        num_bones: u16_at(buf, 20) as usize,
        num_samples: u32_at(buf, 24) as usize,
        sample_rate: f32_at(buf, 28),
        num_segs: u32_at(buf, 32) as usize,
        num_constant: u32_at(buf, 36) as usize,
        num_animated: u32_at(buf, 40) as usize,
        num_qconstant: u32_at(buf, 44) as usize,
        wrap: flags & FLAG_WRAP != 0,
        additive: ((flags & FLAG_ADDITIVE_MASK) >> FLAG_ADDITIVE_SHIFT) as u8,
    };
    header_counts(&h, u16_at(buf, 22) as usize)?;
    Ok(h)
}

/// The header's rate, segment size and counts agree with each other and the importers' limits.
fn header_counts(h: &Header, segment_size: usize) -> Result<(), FormatError> {
    let (num_bones, num_samples, sample_rate) = (h.num_bones, h.num_samples, h.sample_rate);
    if !(sample_rate.is_finite() && sample_rate > 0.0) {
        return corrupt(format!("sample rate {sample_rate} is not positive"));
    }
    if segment_size != SEGMENT_SIZE {
        return corrupt(format!(
            "segment size {segment_size}: the format's is {SEGMENT_SIZE}"
        ));
    }
    if num_bones.saturating_mul(num_samples) > MAX_TOTAL_SAMPLES {
        return corrupt(format!(
            "{num_bones} bones x {num_samples} samples is more than the {} an importer accepts",
            MAX_TOTAL_SAMPLES
        ));
    }
    if num_samples > 0 && !(num_samples as f32 / sample_rate).is_finite() {
        return corrupt(format!(
            "sample rate {sample_rate} gives {num_samples} samples an infinite duration"
        ));
    }
    if h.num_segs != num_segments(num_samples, segment_size) {
        return corrupt(format!(
            "{} segments do not match {num_samples} samples",
            h.num_segs
        ));
    }
    if num_bones > 0 && num_samples == 0 {
        return corrupt("a clip with bones has no samples");
    }
    Ok(())
}

/// What the bone descriptors say about the streams that follow.
pub(crate) struct Descriptors {
    pub(crate) desc_off: usize,
    /// Animated rotations whose dropped component is stored per segment.
    num_seg_dropped: usize,
    /// Animated sub-track index of each per-segment dropped slot.
    slot_track: Vec<usize>,
    /// Kind (0 rotation, 1 translation, 2 scale) of each animated sub-track, in stream order.
    animated_kinds: Vec<u8>,
    /// Some translation is a 16-bit constant (the constant box is stored).
    has_qtrans: bool,
}

/// Section 1: a descriptor byte per bone; its kinds must add up to the header's counts.
pub(crate) fn descriptors(
    buf: &[u8],
    c: &mut Cursor,
    h: &Header,
) -> Result<Descriptors, FormatError> {
    let desc_off = c.take(h.num_bones)?;
    c.pos = align4(c.pos);
    let mut counted_constant = 0usize;
    let mut counted_q = 0usize;
    let mut counted_qtrans = 0usize;
    let mut num_seg_dropped = 0usize;
    let mut slot_track = Vec::new();
    let mut animated_kinds = Vec::new();
    for b in 0..h.num_bones {
        let (kinds, dropped) = unpack_descriptor(buf[desc_off + b]);
        if kinds[0] == KIND_ANIMATED && dropped == DROPPED_PER_SEGMENT {
            num_seg_dropped += 1;
            slot_track.push(animated_kinds.len());
        }
        for (i, k) in kinds.into_iter().enumerate() {
            match k {
                KIND_DEFAULT => {}
                KIND_CONSTANT => counted_constant += 1,
                KIND_ANIMATED => animated_kinds.push(i as u8),
                KIND_CONSTANT_Q if i < 2 => {
                    counted_q += 1;
                    counted_qtrans += i;
                }
                _ => return corrupt(format!("bone {b}: invalid sub-track kind {k}")),
            }
        }
    }
    if counted_constant != h.num_constant
        || animated_kinds.len() != h.num_animated
        || counted_q != h.num_qconstant
    {
        return corrupt("sub-track counts do not match the bone descriptors");
    }
    if h.num_animated > 0 && h.num_samples == 0 {
        return corrupt("animated sub-tracks without samples");
    }
    Ok(Descriptors {
        desc_off,
        num_seg_dropped,
        slot_track,
        animated_kinds,
        has_qtrans: counted_qtrans > 0,
    })
}

/// Where the constants are (sections 2–4).
pub(crate) struct FixedTables {
    const_off: usize,
    qbox_off: usize,
    qconst_off: usize,
}

/// Sections 2–4: float32 constants (finite), the 16-bit translation box (a valid range) when
/// some translation uses it, the 16-bit constants.
pub(crate) fn fixed_tables(
    buf: &[u8],
    c: &mut Cursor,
    h: &Header,
    d: &Descriptors,
) -> Result<FixedTables, FormatError> {
    let num_constant = h.num_constant;
    let const_off = c.take(
        num_constant
            .checked_mul(12)
            // `_else`: the message is built only on the error (eagerly, it was an allocation
            // and a free in every read-back).
            .ok_or_else(|| FormatError::Corrupt("too many constants".into()))?,
    )?;
    for i in 0..num_constant * 3 {
        if !f32_at(buf, const_off + 4 * i).is_finite() {
            return corrupt(format!("constant value {} is not finite", i / 3));
        }
    }
    // Box of the 16-bit constant translations (only when there are some), then the 16-bit constants.
    let qbox_off = c.take(if d.has_qtrans { 24 } else { 0 })?;
    for i in 0..(if d.has_qtrans { 3 } else { 0 }) {
        let (min, ext) = (
            f32_at(buf, qbox_off + 4 * i),
            f32_at(buf, qbox_off + 12 + 4 * i),
        );
        if !range_within(min, ext, MAX_COMPONENT_MAGNITUDE) {
            return corrupt("constant translation box is invalid");
        }
    }
    let qconst_off = c.take(h.num_qconstant * 6)?;
    c.pos = align4(c.pos);
    Ok(FixedTables {
        const_off,
        qbox_off,
        qconst_off,
    })
}

/// Section 5: clip ranges, float32 min x,y,z and extent x,y,z, or for a rotation from version 3
/// on, 16-bit fixed point (min_q + ext_q ≤ 65535 keeps it inside [-1, 1]).
pub(crate) fn clip_ranges(
    buf: &[u8],
    c: &mut Cursor,
    version: u16,
    d: &Descriptors,
) -> Result<Vec<[f32; 6]>, FormatError> {
    let compact = version >= COMPACT_ROT_RANGE_VERSION;
    let mut clip_ranges: Vec<[f32; 6]> = Vec::with_capacity(d.animated_kinds.len());
    for (a, &kind) in d.animated_kinds.iter().enumerate() {
        if compact && kind == 0 {
            let o = c.take(12)?;
            let mut r = [0.0f32; 6];
            for k in 0..3 {
                let (mq, eq) = (u16_at(buf, o + 2 * k), u16_at(buf, o + 6 + 2 * k));
                if mq as u32 + eq as u32 > u16::MAX as u32 {
                    return corrupt(format!(
                        "clip range of animated sub-track {a} runs past the rotation range"
                    ));
                }
                (r[k], r[3 + k]) = rot_range_decode(mq, eq);
            }
            clip_ranges.push(r);
        } else {
            let o = c.take(24)?;
            let r: [f32; 6] = core::array::from_fn(|i| f32_at(buf, o + 4 * i));
            if r.iter()
                .enumerate()
                .any(|(i, v)| !v.is_finite() || (i >= 3 && *v < 0.0))
            {
                return corrupt(format!("clip range of animated sub-track {a} is invalid"));
            }
            clip_ranges.push(r);
        }
    }
    if compact {
        c.pos = align4(c.pos);
    }
    Ok(clip_ranges)
}

/// Section 5b (flags bit 4): a bit per animated sub-track (set only on rotations), then each set
/// track's reference: 3 bytes right after the bits (bit 6), or 4 bytes from the next multiple of
/// 4 (bit 4 alone, the first layout). Per animated sub-track, its reference or `None`.
pub(crate) fn references(
    buf: &[u8],
    c: &mut Cursor,
    flags: u16,
    d: &Descriptors,
) -> Result<Vec<Option<Quat>>, FormatError> {
    let mut references = Vec::new();
    if flags & FLAG_ROTATION_REFERENCES == 0 {
        return Ok(references);
    }
    let num_animated = d.animated_kinds.len();
    let compact_refs = flags & FLAG_COMPACT_REFERENCES != 0;
    let bits_off = c.take(num_animated.div_ceil(8))?;
    if !compact_refs {
        c.pos = align4(c.pos);
    }
    references = vec![None; num_animated];
    for (a, &kind) in d.animated_kinds.iter().enumerate() {
        if buf[bits_off + a / 8] >> (a % 8) & 1 == 0 {
            continue;
        }
        if kind != 0 {
            return corrupt(format!(
                "animated sub-track {a} has a reference rotation but is not a rotation"
            ));
        }
        let decoded = if compact_refs {
            let o = c.take(3)?;
            reference_decode3(core::array::from_fn(|k| buf[o + k] as i8))
        } else {
            let o = c.take(4)?;
            reference_decode(core::array::from_fn(|k| buf[o + k] as i8))
        };
        references[a] = Some(decoded.ok_or_else(|| {
            FormatError::Corrupt(format!(
                "reference rotation of animated sub-track {a} is not a unit quaternion"
            ))
        })?);
    }
    c.pos = align4(c.pos);
    // Unused bits of the last byte are zero.
    if !num_animated.is_multiple_of(8)
        && buf[bits_off + num_animated / 8] >> (num_animated % 8) != 0
    {
        return corrupt("reference rotation bits set past the last animated sub-track");
    }
    Ok(references)
}

/// Where each segment's parts are and what the decoder precomputes from them.
pub(crate) struct Segments {
    /// Where section 6 starts (the segment table, version 4's first block, or version 5's
    /// coded metadata).
    pub(crate) table_off: usize,
    /// Per segment: where its metadata (in [`Self::meta`]) and bit stream (in the buffer) start
    /// and its bits per sample (version 3: the segment table's entry; version 4: found by
    /// walking the blocks; version 5: from the widths, the streams one after the other).
    pub(crate) segs: Vec<SegEntry>,
    /// Per segment, per animated sub-track: its bit offset inside one sample of the segment.
    pub(crate) seg_offsets: Vec<u32>,
    /// Version 5: every segment's metadata, checked, expanded into the layout version 4's
    /// blocks have, then [`segmeta::EXPANDED_TAIL`] zero bytes. Versions 1–4: empty, the
    /// metadata is read where it is in the buffer (the reader copies it once, into its lines;
    /// a copy here first was an allocation and a copy more per read-back).
    pub(crate) meta: Vec<u8>,
    /// Bytes of one segment's metadata in [`Self::meta`] (blocks back to back).
    pub(crate) block_len: usize,
}

/// Section 6: the segment table and every segment it points to (versions 1–3), the segment
/// blocks one after the other (version 4, [`segment_block_layout`]), or the coded metadata and
/// the bit streams (version 5, [`coded_segments`]), each segment checked by [`segment`].
pub(crate) fn segments(
    buf: &[u8],
    c: &mut Cursor,
    h: &Header,
    d: &Descriptors,
) -> Result<Segments, FormatError> {
    if h.version >= CODED_METADATA_VERSION {
        return coded_segments(buf, c, h, d);
    }
    let grouped = h.version >= GROUPED_SEGMENTS_VERSION;
    // Bounded by the buffer before allocating: a table entry is 12 bytes, a block at least 4.
    let table_off = c.take(h.num_segs * if grouped { 4 } else { 12 })?;
    c.pos = table_off;
    let mut segs = Vec::with_capacity(h.num_segs);
    // Bounded by the buffer: every segment stores at least 2 bytes per animated sub-track.
    let mut seg_offsets: Vec<u32> = Vec::with_capacity(h.num_segs * h.num_animated);
    let shape = segmeta_shape(h, d);
    let mut none_mark = vec![false; h.num_animated];
    let first = if grouped {
        table_off
    } else {
        table_off + 12 * h.num_segs
    };
    for s in 0..h.num_segs {
        let e = if grouped {
            let e = block(buf, c, s, h, d)?;
            c.pos = e.1;
            e.0
        } else {
            let hd = table_off + 12 * s;
            SegEntry {
                widths_off: u32_at(buf, hd),
                data_off: u32_at(buf, hd + 4),
                bits: u32_at(buf, hd + 8),
                #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                plain: false,
            }
        };
        segment_in_place(buf, s, e, first, h, d)?;
        let place = Place {
            meta: buf,
            bits: buf,
        };
        segment(place, s, e, h, d, &mut none_mark, &mut seg_offsets)?;
        // `widths_off` stays in the buffer: the reader copies the block from there.
        segs.push(e);
    }
    if grouped {
        if c.pos + TAIL_PADDING != h.runtime_size {
            return corrupt(format!(
                "the segments end at byte {}, the runtime data at {}",
                c.pos, h.runtime_size
            ));
        }
    } else {
        c.pos = table_off + 12 * h.num_segs;
    }
    Ok(Segments {
        table_off,
        segs,
        seg_offsets,
        meta: Vec::new(),
        block_len: shape.block_len(),
    })
}

/// What one segment's metadata holds, for [`segmeta`].
fn segmeta_shape(h: &Header, d: &Descriptors) -> segmeta::Shape {
    segmeta::Shape {
        num_segs: h.num_segs,
        num_animated: h.num_animated,
        multi: h.num_segs > 1,
        num_dropped: d.num_seg_dropped,
    }
}

/// Version 5's section 6: the coded metadata's byte count (u32) and bytes, padded to 4, then
/// every segment's bit stream padded to 4, then the 4 tail bytes. The metadata is expanded
/// ([`segmeta::decode`], bounded by the coded bytes) and each segment then checked as a
/// version-4 block is. A clip without animated sub-tracks has nothing to code and is stored
/// in version 4 (its blocks bound its segment count by the buffer; here nothing would).
fn coded_segments(
    buf: &[u8],
    c: &mut Cursor,
    h: &Header,
    d: &Descriptors,
) -> Result<Segments, FormatError> {
    if h.num_animated == 0 {
        return corrupt(
            "version 5 with no animated sub-track (such a clip is stored in version 4)",
        );
    }
    let table_off = c.pos;
    let len = c.u32()? as usize;
    let coded_at = c.take(len)?;
    c.pos = align4(c.pos);
    let shape = segmeta_shape(h, d);
    // Bounded by the coded bytes (checked inside before allocating).
    let meta = segmeta::decode(&buf[coded_at..coded_at + len], &shape)?;
    // The expansion bounds the segment count: every segment after the first has coded bits.
    let mut segs = Vec::with_capacity(h.num_segs);
    let mut seg_offsets: Vec<u32> = Vec::with_capacity(h.num_segs * h.num_animated);
    let mut none_mark = vec![false; h.num_animated];
    let limit = h.runtime_size - TAIL_PADDING;
    for s in 0..h.num_segs {
        let widths_off = s * shape.block_len();
        let bits: usize = (0..h.num_animated)
            .map(|a| track_bits(u16_at(&meta, widths_off + 2 * a)))
            .sum();
        let (_, seg_len) = quant::segment_span(s, h.num_segs, h.num_samples, SEGMENT_SIZE);
        let data_off = c.pos;
        let end = data_off
            .checked_add(align4((bits * seg_len).div_ceil(8)))
            .filter(|&e| e <= limit)
            .ok_or_else(|| {
                FormatError::Corrupt(format!(
                    "segment {s}: bit stream runs past the runtime data"
                ))
            })?;
        let e = SegEntry {
            widths_off: widths_off as u32,
            data_off: data_off as u32,
            bits: bits as u32,
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            plain: false,
        };
        let place = Place {
            meta: &meta,
            bits: buf,
        };
        segment(place, s, e, h, d, &mut none_mark, &mut seg_offsets)?;
        segs.push(e);
        c.pos = end;
    }
    if c.pos + TAIL_PADDING != h.runtime_size {
        return corrupt(format!(
            "the segments end at byte {}, the runtime data at {}",
            c.pos, h.runtime_size
        ));
    }
    Ok(Segments {
        table_off,
        segs,
        seg_offsets,
        meta,
        block_len: shape.block_len(),
    })
}

/// Version 4: segment `s`'s block at `c.pos`: its bits per sample and where its parts are, and
/// where the next block starts (all inside the runtime data, before its 4 tail bytes).
fn block(
    buf: &[u8],
    c: &Cursor,
    s: usize,
    h: &Header,
    d: &Descriptors,
) -> Result<(SegEntry, usize), FormatError> {
    let at = c.pos;
    let limit = h.runtime_size - TAIL_PADDING;
    if at + 4 > limit {
        return corrupt(format!(
            "segment {s}: block at byte {at} runs past the runtime data"
        ));
    }
    let bits = u32_at(buf, at);
    let (_, seg_len) = quant::segment_span(s, h.num_segs, h.num_samples, SEGMENT_SIZE);
    // Bits per sample are at most 128 per sub-track (three raw components and a raw w).
    if bits as usize > 128 * h.num_animated {
        return corrupt(format!("segment {s}: {bits} bits per sample"));
    }
    let (w, _, _, data, end) = segment_block_layout(
        h.num_animated,
        h.num_segs > 1,
        d.num_seg_dropped,
        seg_len,
        bits as usize,
    );
    if at.checked_add(end).is_none_or(|e| e > limit) {
        return corrupt(format!("segment {s}: block runs past the runtime data"));
    }
    let e = SegEntry {
        widths_off: (at + w) as u32,
        data_off: (at + data) as u32,
        bits,
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        plain: false,
    };
    Ok((e, at + end))
}

/// Versions 1–4: segment `s`'s metadata at `e` lies inside the runtime data after `first` (the
/// first byte a segment may use) and before its bit stream, and version 4's four-track loads
/// stay inside the runtime data too: 8 bytes of widths from each group's first track, 4 bytes
/// from each range row (the last row of the last group starts `lanes` bytes before the ranges
/// end).
fn segment_in_place(
    buf: &[u8],
    s: usize,
    e: SegEntry,
    first: usize,
    h: &Header,
    d: &Descriptors,
) -> Result<(), FormatError> {
    let (num_segs, num_animated) = (h.num_segs, h.num_animated);
    let grouped = h.version >= GROUPED_SEGMENTS_VERSION;
    let (widths_off, data_off) = (e.widths_off as usize, e.data_off as usize);
    let per_seg = if num_segs > 1 { 8 } else { 2 };
    let meta_end = widths_off.checked_add(num_animated * per_seg + d.num_seg_dropped);
    let last_lanes = (num_animated + GROUP - 1) % GROUP + 1;
    let group_loads_end = if num_segs > 1 {
        widths_off + 8 * num_animated + 4 - last_lanes
    } else {
        widths_off + 8 * num_animated.div_ceil(GROUP)
    };
    if widths_off < first
        || meta_end.is_none_or(|e| e > data_off)
        || data_off > h.runtime_size
        || data_off > buf.len()
        || (grouped && num_animated > 0 && group_loads_end > h.runtime_size)
    {
        return corrupt(format!(
            "segment {s}: metadata offset {widths_off} out of place"
        ));
    }
    Ok(())
}

/// Where a segment's metadata and bit stream are read from: the buffer for both (versions
/// 1–4), or the expanded metadata and the buffer (version 5).
#[derive(Clone, Copy)]
struct Place<'a> {
    meta: &'a [u8],
    bits: &'a [u8],
}

/// Segment `s` at `e` (its metadata in `p.meta`, placed: [`segment_in_place`] or an expansion):
/// widths, segment ranges, dropped components and bit count, its bit stream inside the runtime
/// data, its raw floats finite. Appends the segment's per-track bit offsets to `seg_offsets`;
/// `none_mark` is all false on entry and exit.
fn segment(
    p: Place,
    s: usize,
    e: SegEntry,
    h: &Header,
    d: &Descriptors,
    none_mark: &mut [bool],
    seg_offsets: &mut Vec<u32>,
) -> Result<(), FormatError> {
    let (num_segs, num_animated, version) = (h.num_segs, h.num_animated, h.version);
    let (widths_off, data_off, bits) =
        (e.widths_off as usize, e.data_off as usize, e.bits as usize);
    let per_seg = if num_segs > 1 { 8 } else { 2 };
    let dropped_off = widths_off + num_animated * per_seg;
    let slots = &p.meta[dropped_off..dropped_off + d.num_seg_dropped];
    let max_dropped = if version >= 2 { DROPPED_NONE } else { 3 };
    if slots.iter().any(|&d| d > max_dropped) {
        return corrupt(format!(
            "segment {s}: dropped rotation component above {max_dropped}"
        ));
    }
    let none_tracks: Vec<usize> = (0..d.num_seg_dropped)
        .filter(|&k| slots[k] == DROPPED_NONE)
        .map(|k| d.slot_track[k])
        .collect();
    for &a in &none_tracks {
        none_mark[a] = true;
    }
    let checked = segment_widths_and_ranges(p.meta, s, widths_off, h, none_mark);
    let mut sum = 0usize;
    let mut off = 0u32;
    if checked.is_ok() {
        for a in 0..num_animated {
            seg_offsets.push(off);
            let w = unpack_widths(u16_at(p.meta, widths_off + 2 * a));
            let t = w[0] + w[1] + w[2] + DROPPED_NONE_BITS as u32 * none_mark[a] as u32;
            off += t;
            sum += t as usize;
        }
    }
    for &a in &none_tracks {
        none_mark[a] = false;
    }
    checked?;
    if sum != bits {
        return corrupt(format!(
            "segment {s}: {bits} bits per sample, widths add up to {sum}"
        ));
    }
    let (_, seg_len) = quant::segment_span(s, num_segs, h.num_samples, SEGMENT_SIZE);
    let data_bytes = (bits * seg_len).div_ceil(8);
    if data_off
        .checked_add(data_bytes + TAIL_PADDING)
        .is_none_or(|e| e > h.runtime_size)
    {
        return corrupt(format!(
            "segment {s}: bit stream runs past the runtime data"
        ));
    }
    let layout = RawLayout {
        widths_off,
        data_off,
        num_animated,
        bits,
        none_tracks: &none_tracks,
    };
    check_raw_values(p, s, &layout, seg_len)
}

/// Segment `s`'s widths (≤ 24 or raw, raw only from version 2 on; bit 15 clear before version
/// 4, from version 4 set exactly on the tracks `none_mark` marks) and segment ranges (start +
/// extent ≤ 255).
fn segment_widths_and_ranges(
    buf: &[u8],
    s: usize,
    widths_off: usize,
    h: &Header,
    none_mark: &[bool],
) -> Result<(), FormatError> {
    let (num_animated, version) = (h.num_animated, h.version);
    let grouped = version >= GROUPED_SEGMENTS_VERSION;
    let ranges_off = widths_off + 2 * num_animated;
    for a in 0..num_animated {
        let v = u16_at(buf, widths_off + 2 * a);
        let w = unpack_widths(v);
        if w.iter()
            .any(|&x| x > quant::MAX_BITS && x != quant::RAW_BITS)
        {
            return corrupt(format!("segment {s}: bit width above {}", quant::MAX_BITS));
        }
        let flag = v & WIDTHS_RAW_W_FLAG != 0;
        if flag != (grouped && none_mark[a]) {
            return corrupt(format!(
                "segment {s}: widths of animated sub-track {a}: bit 15 does not match its dropped component"
            ));
        }
        if version < 2 && w.contains(&quant::RAW_BITS) {
            return corrupt(format!(
                "segment {s}: raw float32 width in a version {version} buffer"
            ));
        }
        if h.num_segs > 1 {
            let at = |row: usize| {
                ranges_off
                    + if grouped {
                        grouped_range_offset(num_animated, a, row)
                    } else {
                        6 * a + row
                    }
            };
            for k in 0..3 {
                if buf[at(k)] as u16 + buf[at(3 + k)] as u16 > 255 {
                    return corrupt(format!("segment {s}: range outside the clip range"));
                }
            }
        }
    }
    Ok(())
}

/// Where a segment's widths and bit stream are, for the check of its raw float32 values.
struct RawLayout<'a> {
    widths_off: usize,
    data_off: usize,
    num_animated: usize,
    bits: usize,
    /// Animated rotations whose segment drops no component (a raw w follows x, y, z).
    none_tracks: &'a [usize],
}

/// Raw float32 components (the compressor's last resort, and the w of rotations whose
/// segment drops nothing) must be finite, like every other stored float.
fn check_raw_values(
    p: Place,
    seg: usize,
    l: &RawLayout,
    seg_len: usize,
) -> Result<(), FormatError> {
    let buf = p.bits;
    let widths = (0..l.num_animated).map(|a| unpack_widths(u16_at(p.meta, l.widths_off + 2 * a)));
    if l.none_tracks.is_empty() && !widths.clone().any(|w| w.contains(&quant::RAW_BITS)) {
        return Ok(());
    }
    for i in 0..seg_len {
        let mut pos = l.data_off * 8 + i * l.bits;
        for (a, w) in widths.clone().enumerate() {
            let mut raw = w.map(|x| x == quant::RAW_BITS).to_vec();
            let mut step: Vec<usize> = w.iter().map(|&x| x as usize).collect();
            if l.none_tracks.contains(&a) {
                raw.push(true);
                step.push(DROPPED_NONE_BITS);
            }
            for (r, x) in raw.into_iter().zip(step) {
                if r && !read_raw_f32(buf, pos).is_finite() {
                    return corrupt(format!(
                        "segment {seg}: raw float32 value at sample {i} is not finite"
                    ));
                }
                pos += x;
            }
        }
    }
    Ok(())
}

/// The metadata (names, hierarchy, bind pose, precisions) from the end of the runtime data to
/// the settings record or the end of the buffer.
pub(crate) fn read_metadata<'a>(buf: &'a [u8], h: &Header) -> Result<Metadata<'a>, FormatError> {
    let (start, num_bones, flags) = (h.runtime_size, h.num_bones, h.flags);
    let precisions = flags & FLAG_BONE_PRECISIONS != 0;
    // The optional settings record fills the end of the buffer: the names end before it.
    let (end, settings) = metadata::split(buf, start, flags)?;
    let mut c = Cursor {
        buf,
        pos: start,
        end,
    };
    let original_num_samples = c.u32()? as usize;
    if original_num_samples != h.num_samples + h.wrap as usize {
        return corrupt("metadata sample count does not match the stored samples");
    }
    // Borrowed from the buffer the reader borrows anyway: no copy, no allocation.
    let clip_name = c.str_in_buffer()?;
    let mut bones = Vec::with_capacity(num_bones);
    for b in 0..num_bones {
        bones.push(bone_desc(&mut c, b)?);
    }
    if precisions {
        for (b, d) in bones.iter_mut().enumerate() {
            let p = c.f32()?;
            if !(p.is_finite() && p >= 0.0) {
                return corrupt(format!("bone {b}: precision {p} is not a positive number"));
            }
            d.precision = (p > 0.0).then_some(p);
        }
    }
    if c.pos != end {
        return corrupt(format!(
            "{} unexpected bytes after the metadata",
            end - c.pos
        ));
    }
    let skeleton =
        Skeleton::from_ordered(bones).map_err(|e| FormatError::Corrupt(e.to_string()))?;
    Ok(Metadata {
        clip_name,
        original_num_samples,
        skeleton,
        settings,
    })
}

/// Bone `b`'s name, parent (before it), shell distance and bind pose.
fn bone_desc(c: &mut Cursor, b: usize) -> Result<BoneDesc, FormatError> {
    let name = c.str()?;
    // The fixed part in one bounds check: parent (u16), then eleven floats (shell distance,
    // rotation, translation, scale). Every `.cfa` read builds these (the compressor reads back
    // each file it writes), and a check per field was ~3 % of a two-sample clip's compression.
    let at = c.take(2 + 11 * 4)?;
    let parent = u16_at(c.buf, at);
    let mut f = [0.0f32; 11];
    for (i, v) in f.iter_mut().enumerate() {
        *v = f32_at(c.buf, at + 2 + 4 * i);
    }
    if let Some(i) = f.iter().position(|v| !v.is_finite()) {
        return corrupt(format!("non-finite float at byte {}", at + 2 + 4 * i));
    }
    let parent = if parent == NO_PARENT_U16 {
        None
    } else if (parent as usize) < b {
        Some(parent as usize)
    } else {
        return corrupt(format!("bone {b}: parent {parent} does not come before it"));
    };
    let mut d = BoneDesc::new(name, parent);
    d.shell_distance = f[0];
    if d.shell_distance < 0.0 {
        return corrupt(format!(
            "bone {b}: negative shell distance {}",
            d.shell_distance
        ));
    }
    let q = Quat::from_xyzw(f[1], f[2], f[3], f[4]);
    if (q.length() - 1.0).abs() > BIND_ROTATION_TOLERANCE {
        return corrupt(format!(
            "bone {b}: bind rotation is not normalized (length {})",
            q.length()
        ));
    }
    d.bind_rotation = q.normalize();
    d.bind_translation = Vec3::new(f[5], f[6], f[7]);
    d.bind_scale = Vec3::new(f[8], f[9], f[10]);
    Ok(d)
}

/// The decoder's tables, built from the validated sections.
pub(crate) struct Tables {
    pub(crate) tracks: Vec<Track>,
    pub(crate) fixed_rotations: Vec<Quat>,
    pub(crate) fixed_translations: Vec<Vec3A>,
    pub(crate) fixed_scales: Vec<Vec3A>,
    pub(crate) fill: [u32; 3],
    pub(crate) refs: Vec<Quat>,
    pub(crate) bone_animated: Vec<(u32, u8)>,
    pub(crate) constants: Vec<(u32, u8)>,
}

/// What every default and constant sub-track decodes to (the bind pose where default, each
/// constant within its kind's limits), the animated tracks with their ranges and references
/// (every range's decoded values within an importer's limits), per bone its animated tracks.
pub(crate) fn tables(
    buf: &[u8],
    h: &Header,
    d: &Descriptors,
    f: &FixedTables,
    clip_ranges: &[[f32; 6]],
    references: &[Option<Quat>],
    sk: &Skeleton,
) -> Result<Tables, FormatError> {
    let mut t = Tables {
        fixed_rotations: sk.bind_rotations.clone(),
        fixed_translations: sk.bind_translations.iter().map(|&v| v.into()).collect(),
        fixed_scales: sk.bind_scales.iter().map(|&v| v.into()).collect(),
        tracks: Vec::with_capacity(h.num_animated),
        refs: Vec::new(),
        constants: Vec::new(),
        bone_animated: Vec::with_capacity(h.num_bones),
        fill: [NO_FILL; 3],
    };
    let (mut ci, mut qi, mut slot) = (0usize, 0usize, 0u16);
    let f3 = |o: usize| [f32_at(buf, o), f32_at(buf, o + 4), f32_at(buf, o + 8)];
    let q3 = |o: usize| [u16_at(buf, o), u16_at(buf, o + 2), u16_at(buf, o + 4)];
    for b in 0..h.num_bones {
        let (kinds, dropped) = unpack_descriptor(buf[d.desc_off + b]);
        t.bone_animated.push((
            t.tracks.len() as u32,
            kinds.iter().filter(|&&k| k == KIND_ANIMATED).count() as u8,
        ));
        for (kind, &k) in kinds.iter().enumerate() {
            match k {
                KIND_CONSTANT => {
                    t.constants.push((b as u32, kind as u8));
                    let v = f3(f.const_off + 12 * ci);
                    ci += 1;
                    let limit = if kind == 0 {
                        MAX_KEPT_COMPONENT
                    } else {
                        MAX_COMPONENT_MAGNITUDE
                    };
                    if v.iter().any(|c| c.abs() > limit) {
                        return corrupt(format!(
                            "bone {b}: constant {} beyond {limit}",
                            ["rotation component", "translation", "scale"][kind]
                        ));
                    }
                    match kind {
                        0 => t.fixed_rotations[b] = rebuild_rotation(v, dropped),
                        1 => t.fixed_translations[b] = Vec3A::from_array(v),
                        _ => t.fixed_scales[b] = Vec3A::from_array(v),
                    }
                }
                KIND_CONSTANT_Q => {
                    t.constants.push((b as u32, kind as u8));
                    let q = q3(f.qconst_off + 6 * qi);
                    qi += 1;
                    if kind == 0 {
                        let k = q.map(|v| q16_decode(v, -QROT_RANGE, 2.0 * QROT_RANGE));
                        t.fixed_rotations[b] = rebuild_rotation(k, dropped);
                    } else {
                        t.fixed_translations[b] = Vec3A::from_array(core::array::from_fn(|c| {
                            q16_decode(
                                q[c],
                                f32_at(buf, f.qbox_off + 4 * c),
                                f32_at(buf, f.qbox_off + 12 + 4 * c),
                            )
                        }));
                    }
                }
                KIND_ANIMATED => {
                    let per_segment = kind == 0 && dropped == DROPPED_PER_SEGMENT;
                    let a = t.tracks.len();
                    let reference = match references.get(a) {
                        Some(Some(r)) => {
                            t.refs.push(*r);
                            (t.refs.len() - 1) as u16
                        }
                        _ => NO_REFERENCE,
                    };
                    t.tracks.push(Track {
                        range: clip_ranges[a],
                        bone: b as u16,
                        reference,
                        kind: kind as u8,
                        dropped,
                        slot: if per_segment { slot } else { NO_SLOT },
                    });
                    slot += per_segment as u16;
                }
                _ => {}
            }
        }
    }
    track_ranges_within_limits(&t.tracks)?;
    t.fill = uniform_fills(
        &buf[d.desc_off..d.desc_off + h.num_bones],
        &t.fixed_rotations,
        &t.fixed_translations,
        &t.fixed_scales,
    );
    Ok(t)
}

/// Decoded values lie in [min, min + extent]: keep that inside what an importer accepts.
fn track_ranges_within_limits(tracks: &[Track]) -> Result<(), FormatError> {
    for (a, t) in tracks.iter().enumerate() {
        let r = &t.range;
        let limit = if t.kind == 0 {
            MAX_KEPT_COMPONENT
        } else {
            MAX_COMPONENT_MAGNITUDE
        };
        if (0..3).any(|c| !range_within(r[c], r[c + 3], limit)) {
            return corrupt(format!(
                "clip range of animated sub-track {a} (bone {}) reaches beyond {limit}",
                t.bone
            ));
        }
    }
    Ok(())
}

/// [`ClipReader::fill`](crate::ClipReader) for rotations, translations and scales, from the
/// bones' descriptors ([`uniform_fill`]).
fn uniform_fills(
    descriptors: &[u8],
    rotations: &[Quat],
    translations: &[Vec3A],
    scales: &[Vec3A],
) -> [u32; 3] {
    let num_bones = descriptors.len();
    let fixed =
        |kind: usize| move |b: usize| unpack_descriptor(descriptors[b]).0[kind] != KIND_ANIMATED;
    [
        uniform_fill(num_bones, fixed(0), |b| {
            rotations[b].to_array().map(f32::to_bits)
        }),
        uniform_fill(num_bones, fixed(1), |b| {
            translations[b].to_array().map(f32::to_bits)
        }),
        uniform_fill(num_bones, fixed(2), |b| {
            scales[b].to_array().map(f32::to_bits)
        }),
    ]
}

/// For one kind: `bits(b)` is bone `b`'s fixed value, `fixed(b)` whether the sub-track is
/// default or constant (a kind with none fills with anything: every value is decoded). A bone
/// whose fixed value every fixed sub-track shares bit for bit, or [`NO_FILL`].
fn uniform_fill<V: PartialEq>(
    num_bones: usize,
    fixed: impl Fn(usize) -> bool,
    bits: impl Fn(usize) -> V,
) -> u32 {
    let mut bones = (0..num_bones).filter(|&b| fixed(b));
    match bones.next() {
        None => 0,
        Some(first) => {
            let v = bits(first);
            if bones.all(|b| bits(b) == v) {
                first as u32
            } else {
                NO_FILL
            }
        }
    }
}
