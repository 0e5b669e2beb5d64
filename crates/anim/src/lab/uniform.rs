//! The uniform codec (`anim::compress`, `anim::runtime`) through the lab's counters. The reader
//! is not instrumented (the lab does not change the codec): [`touch_pose`] replays the reads
//! `ClipReader::sample_pose` makes, from the `.cfa` layout (`docs/FORMAT.md`): the two samples'
//! segment headers, widths, segment ranges, per-segment dropped components and bit-stream spans
//! in the buffer, and the reader's own per-clip arrays (decoded constants copied into the pose,
//! clip ranges, sub-track descriptors).

use super::probe::{Probe, Region};
use crate::runtime::format::{
    self, DROPPED_NONE, DROPPED_NONE_BITS, unpack_descriptor, unpack_widths,
};

/// Bytes of the reader's per-bone decoded constants (rotation, translation, scale: 16 each).
pub(crate) const READER_BYTES_PER_BONE: usize = 48;
/// Bytes of the reader's per-animated-sub-track state (clip range 24, descriptor 12).
pub(crate) const READER_BYTES_PER_ANIMATED: usize = 36;

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

/// Size of the clip-range section: float32 min and extent (24 B) per animated sub-track, except
/// that from version 3 on an animated rotation's range is 16-bit fixed point (12 B) and the
/// section is padded to 4 bytes (`docs/FORMAT.md`, item 5).
fn clip_ranges_bytes(version: u16, animated_rotations: usize, num_animated: usize) -> usize {
    if version >= 3 {
        format::align4(12 * animated_rotations + 24 * (num_animated - animated_rotations))
    } else {
        24 * num_animated
    }
}

/// What the counting needs from a validated `.cfa` buffer.
pub struct Layout {
    num_bones: usize,
    num_stored: usize,
    num_segments: usize,
    num_animated: usize,
    wrap: bool,
    seg_header_off: usize,
    /// Version 4: segment blocks instead of a segment table ([`Self::blocks`]).
    grouped: bool,
    /// Version 5: the buffer laid out as version 4 (the same values: `relayout`), whose blocks
    /// the replay walks for the widths; the metadata reads then count in the reader's region,
    /// where a version-5 reader keeps the expanded metadata (its own allocation after its
    /// per-clip tables, segment blocks `Shape::reader_stride` apart).
    expanded: Option<Vec<u8>>,
    /// Version 4, per segment: its block's offset, widths offset, bit stream offset and bits
    /// per sample (`format::segment_block_layout`).
    blocks: Vec<(usize, usize, usize, usize)>,
    /// Per animated sub-track: is it a rotation whose dropped component is chosen per segment
    /// (its slot in the segment's list)?
    per_segment_slot: Vec<Option<usize>>,
}

impl Layout {
    /// Reads the header of a buffer `ClipReader::new` accepted.
    pub fn new(buf: &[u8]) -> Self {
        if u16_at(buf, 4) >= format::CODED_METADATA_VERSION {
            // Accepted by the reader, so it lays out as version 4.
            let v4 = crate::runtime::relayout::relayout(buf, format::GROUPED_SEGMENTS_VERSION)
                .expect("a buffer the reader accepted lays out as version 4");
            let mut layout = Self::new(&v4);
            layout.expanded = Some(v4);
            return layout;
        }
        let num_bones = u16_at(buf, 20) as usize;
        let num_stored = u32_at(buf, 24) as usize;
        let num_segments = u32_at(buf, 32) as usize;
        let num_f32 = u32_at(buf, 36) as usize;
        let num_animated = u32_at(buf, 40) as usize;
        let num_q16 = u32_at(buf, 44) as usize;
        let wrap = u16_at(buf, 6) & format::FLAG_WRAP != 0;
        let desc = format::HEADER_SIZE;
        let mut box_present = false;
        let mut per_segment_slot = Vec::with_capacity(num_animated);
        let mut slots = 0;
        let mut animated_rotations = 0;
        for b in 0..num_bones {
            let (kinds, dropped) = unpack_descriptor(buf[desc + b]);
            if kinds[1] == format::KIND_CONSTANT_Q {
                box_present = true;
            }
            for (k, &kind) in kinds.iter().enumerate() {
                if kind == format::KIND_ANIMATED {
                    if k == 0 {
                        animated_rotations += 1;
                    }
                    if k == 0 && dropped == 2 {
                        per_segment_slot.push(Some(slots));
                        slots += 1;
                    } else {
                        per_segment_slot.push(None);
                    }
                }
            }
        }
        let seg_header_off = format::align4(desc + num_bones)
            + 12 * num_f32
            + if box_present { 24 } else { 0 }
            + format::align4(6 * num_q16)
            + clip_ranges_bytes(u16_at(buf, 4), animated_rotations, num_animated);
        let grouped = u16_at(buf, 4) >= format::GROUPED_SEGMENTS_VERSION;
        let mut blocks = Vec::new();
        if grouped {
            let mut at = seg_header_off;
            for seg in 0..num_segments {
                let bits = u32_at(buf, at) as usize;
                let (_, len) = crate::runtime::quant::segment_span(
                    seg,
                    num_segments,
                    num_stored,
                    format::SEGMENT_SIZE,
                );
                let (w, _, _, d, end) =
                    format::segment_block_layout(num_animated, num_segments > 1, slots, len, bits);
                blocks.push((at, at + w, at + d, bits));
                at += end;
            }
        }
        Self {
            num_bones,
            num_stored,
            num_segments,
            num_animated,
            wrap,
            seg_header_off,
            grouped,
            expanded: None,
            blocks,
            per_segment_slot,
        }
    }

    /// Per-clip state the reader holds decoded.
    pub(crate) fn reader_bytes(&self) -> usize {
        READER_BYTES_PER_BONE * self.num_bones + READER_BYTES_PER_ANIMATED * self.num_animated
    }

    /// The stored samples bracketing `x` (in samples) as `sample_pose` picks them with clamping.
    fn locate(&self, x: f32) -> (usize, usize) {
        let n = self.num_stored;
        if n <= 1 {
            return (0, 0);
        }
        let last = if self.wrap { n } else { n - 1 };
        let x = if x.is_finite() {
            x.clamp(0.0, last as f32)
        } else {
            0.0
        };
        let i0 = (x as usize).min(last.saturating_sub(1)).min(n - 1);
        let i1 = if i0 + 1 >= n {
            if self.wrap { 0 } else { n - 1 }
        } else {
            i0 + 1
        };
        (i0, i1)
    }

    /// Reports the reads of one `sample_pose` at `x` samples.
    pub fn touch_pose<P: Probe>(&self, buf: &[u8], x: f32, probe: &mut P) {
        if self.num_bones == 0 {
            return;
        }
        // Version 5: the version-4 layout of the same values; metadata in the reader's region.
        let (buf, meta) = match &self.expanded {
            Some(v4) => (&v4[..], Region::Reader),
            None => (buf, Region::Clip),
        };
        let a = self.num_animated;
        let multi = self.num_segments > 1;
        let slots = self.per_segment_slot.iter().flatten().count();
        probe.read(Region::Reader, 0, self.reader_bytes());
        let (i0, i1) = self.locate(x);
        let samples: &[usize] = if i0 == i1 { &[i0] } else { &[i0, i1] };
        for &s in samples {
            let seg = (s / format::SEGMENT_SIZE).min(self.num_segments.saturating_sub(1));
            // Version 4: no table; the block's first 4 bytes hold its bits per sample.
            let (widths_off, data_off, bits) = if self.grouped {
                let (h, w, d, b) = self.blocks[seg];
                // Version 5 keeps no count in the buffer (the reader's segment entry has it).
                if self.expanded.is_none() {
                    probe.read(Region::Clip, h, 4);
                }
                (w, d, b)
            } else {
                let h = self.seg_header_off + 12 * seg;
                probe.read(Region::Clip, h, 12);
                let e = |o: usize| u32_at(buf, h + o) as usize;
                (e(0), e(4), e(8))
            };
            // Where the segment's metadata is read: its block in the buffer, or (version 5) the
            // reader's expanded copy.
            // The reader's copy is an allocation of its own, on a cache line, its blocks
            // `Shape::reader_stride` apart.
            let meta_off = match meta {
                Region::Reader => {
                    let block_len = a * if multi { 8 } else { 2 } + slots;
                    let stride =
                        crate::runtime::segmeta::reader_stride(self.num_segments, block_len);
                    self.reader_bytes().next_multiple_of(64) + seg * stride
                }
                _ => widths_off,
            };
            probe.read(meta, meta_off, 2 * a);
            if multi {
                probe.read(meta, meta_off + 2 * a, 6 * a);
            }
            let dropped_off = widths_off + a * if multi { 8 } else { 2 };
            let mut bitpos = data_off * 8 + (s - seg * format::SEGMENT_SIZE) * bits;
            let start = bitpos;
            for t in 0..a {
                let w = unpack_widths(u16_at(buf, widths_off + 2 * t));
                bitpos += (w[0] + w[1] + w[2]) as usize;
                if let Some(slot) = self.per_segment_slot[t] {
                    probe.read(meta, meta_off + (dropped_off - widths_off) + slot, 1);
                    if buf[dropped_off + slot] == DROPPED_NONE {
                        bitpos += DROPPED_NONE_BITS;
                    }
                }
            }
            if bitpos > start {
                probe.read(Region::Clip, start / 8, bitpos.div_ceil(8) - start / 8);
            }
        }
    }
}
