//! Writes the `.cfa` buffer (layout in `docs/FORMAT.md`) in the current version's layout
//! ([`VERSION`], 5: every segment's metadata coded against the previous segment's, then the bit
//! streams; a clip without animated sub-tracks in version 4's blocks, as the format requires):
//! the sections in file order, then the header (which counts and seals them). Older layouts are
//! the runtime's [`relayout`](crate::runtime::relayout::relayout)'s business (reading and
//! converting files).

use super::prepare::Prepared;
use super::search::SegmentChoice;
use crate::clip::RawClip;
use crate::runtime::format::*;
use crate::runtime::quant::{Dequant, MAX_BITS, RAW_BITS};
use crate::runtime::segmeta;
use crate::skeleton::NO_PARENT;

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_f32(out: &mut Vec<u8>, v: f32) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_str(out: &mut Vec<u8>, s: &str) {
    // Names longer than 65535 bytes are cut at a character boundary.
    let mut end = s.len().min(u16::MAX as usize);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    put_u16(out, end as u16);
    out.extend_from_slice(&s.as_bytes()[..end]);
}
fn pad4(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// Returns the buffer ([`VERSION`]) and the size of its runtime part.
pub fn encode(clip: &RawClip, p: &Prepared, choices: &[SegmentChoice]) -> (Vec<u8>, usize) {
    // Version 5 needs an animated sub-track (its segment count is bounded by the coded
    // metadata); a clip without one keeps version 4's blocks.
    let version = if p.tracks.is_empty() {
        GROUPED_SEGMENTS_VERSION
    } else {
        VERSION
    };
    // Version 5 codes every segment's metadata together; version 4 writes each segment as it
    // is built (no list of them: one allocation fewer for a clip of nothing animated).
    let segments: Vec<Segment> = if version >= CODED_METADATA_VERSION {
        choices
            .iter()
            .enumerate()
            .map(|(s, choice)| segment(p, s, choice))
            .collect()
    } else {
        Vec::new()
    };
    // Room for the whole file in most cases (the segments, ~150 bytes a bone of tables and
    // metadata, the names): a small clip's buffer is then allocated once, not grown by
    // reallocation, and not zeroed first.
    let room = HEADER_SIZE
        + 256
        + TAIL_PADDING
        + clip.name.len()
        + p.num_bones * 150
        + clip.skeleton.names.iter().map(String::len).sum::<usize>()
        + 8 * choices.len()
        + segments
            .iter()
            .map(|s| s.meta.len() + s.stream.len())
            .sum::<usize>();
    let mut out = Vec::with_capacity(room);
    out.resize(HEADER_SIZE, 0);
    let referenced = write_tables(&mut out, p);
    if version >= CODED_METADATA_VERSION {
        let shape = segmeta::Shape {
            num_segs: segments.len(),
            num_animated: p.tracks.len(),
            multi: p.num_segments > 1,
            num_dropped: p.tracks.iter().filter(|t| t.per_segment_dropped).count(),
        };
        let blocks: Vec<&[u8]> = segments.iter().map(|s| &s.meta[..]).collect();
        let coded = segmeta::encode(&blocks, &shape);
        put_u32(&mut out, coded.len() as u32);
        out.extend_from_slice(&coded);
        pad4(&mut out);
        for s in &segments {
            out.extend_from_slice(&s.stream);
            pad4(&mut out);
        }
    } else {
        for (i, choice) in choices.iter().enumerate() {
            let s = segment(p, i, choice);
            // The block (docs/FORMAT.md, "Segment blocks"): bits per sample, the metadata, the
            // bit stream.
            put_u32(&mut out, s.bits);
            out.extend_from_slice(&s.meta);
            pad4(&mut out);
            out.extend_from_slice(&s.stream);
            pad4(&mut out);
        }
    }
    out.extend_from_slice(&[0u8; TAIL_PADDING]);
    let runtime_size = out.len();
    let precisions = write_metadata(&mut out, clip, p);
    let flags = FLAG_METADATA
        | if p.wrap { FLAG_WRAP } else { 0 }
        | if referenced {
            FLAG_ROTATION_REFERENCES | FLAG_COMPACT_REFERENCES
        } else {
            0
        }
        | if precisions { FLAG_BONE_PRECISIONS } else { 0 };
    write_header(&mut out, clip, p, flags, runtime_size, version);
    (out, runtime_size)
}

/// Sections 1–5b: bone descriptors, constants, the 16-bit constant box and constants, clip
/// ranges, reference rotations. True when some track has a reference.
fn write_tables(out: &mut Vec<u8>, p: &Prepared) -> bool {
    for b in 0..p.num_bones {
        out.push(pack_descriptor(p.kinds[b], p.dropped[b]));
    }
    pad4(out);
    for c in &p.constants {
        for &v in c {
            put_f32(out, v);
        }
    }
    if let Some((min, ext)) = p.qbox {
        for &v in min.iter().chain(&ext) {
            put_f32(out, v);
        }
    }
    for q in &p.qconstants {
        for &v in q {
            put_u16(out, v);
        }
    }
    pad4(out);
    for t in &p.tracks {
        if t.kind == 0 {
            for &v in &t.rot_range_q {
                put_u16(out, v);
            }
        } else {
            for &v in t.clip_min.iter().chain(&t.clip_ext) {
                put_f32(out, v);
            }
        }
    }
    pad4(out);
    let referenced = p.tracks.iter().any(|t| t.reference.is_some());
    if referenced {
        let mut bits = vec![0u8; p.tracks.len().div_ceil(8)];
        for (a, t) in p.tracks.iter().enumerate() {
            if t.reference.is_some() {
                bits[a / 8] |= 1 << (a % 8);
            }
        }
        out.extend_from_slice(&bits);
        for (_, stored) in p.tracks.iter().filter_map(|t| t.reference) {
            out.extend(stored.map(|v| v as u8));
        }
        pad4(out);
    }
    referenced
}

/// Segment `s`'s block: its bits per sample, widths, ranges and dropped components, its bit
/// stream.
/// One segment's parts: its metadata as version 4's block holds it (widths, ranges by groups
/// of four tracks, per-segment dropped components), its bits per sample and its bit stream.
struct Segment {
    meta: Vec<u8>,
    bits: u32,
    stream: Vec<u8>,
}

fn segment(p: &Prepared, s: usize, choice: &SegmentChoice) -> Segment {
    let (start, len) = p.segment_span(s);
    let none = |t: &super::prepare::Track| {
        t.kind == 0 && t.per_segment_dropped && t.dropped[s] == DROPPED_NONE
    };
    let bits: u32 = choice
        .widths
        .iter()
        .map(|w| w[0] + w[1] + w[2])
        .sum::<u32>()
        + p.tracks.iter().filter(|t| none(t)).count() as u32 * DROPPED_NONE_BITS as u32;
    // Widths (with the raw-w flag of a rotation stored whole in this segment), ranges by
    // groups of four tracks (row by row), the per-segment dropped components.
    let mut meta = Vec::new();
    for (w, t) in choice.widths.iter().zip(&p.tracks) {
        debug_assert!(w.iter().all(|&x| x <= MAX_BITS || x == RAW_BITS));
        let flag = if none(t) { WIDTHS_RAW_W_FLAG } else { 0 };
        put_u16(&mut meta, pack_widths(*w) | flag);
    }
    if p.num_segments > 1 {
        let a = choice.ranges.len();
        for g in 0..a.div_ceil(GROUP) {
            let lanes = &choice.ranges[GROUP * g..(GROUP * g + GROUP).min(a)];
            for row in 0..6 {
                meta.extend(lanes.iter().map(|r| r[row]));
            }
        }
    }
    for t in p.tracks.iter().filter(|t| t.per_segment_dropped) {
        meta.push(t.dropped[s]);
    }
    let dqs: Vec<[Dequant; 3]> = (0..p.tracks.len())
        .map(|k| super::search::dequants(p, k, &choice.ranges[k], choice.widths[k]))
        .collect();
    let mut w = BitWriter::default();
    for i in start..start + len {
        for (k, t) in p.tracks.iter().enumerate() {
            for c in 0..3 {
                let width = choice.widths[k][c];
                let q = if width == RAW_BITS {
                    t.values[i][c].to_bits()
                } else {
                    dqs[k][c].quantize(t.values[i][c], width)
                };
                w.write(q, width);
            }
            if none(t) {
                w.write(t.w[i].to_bits(), DROPPED_NONE_BITS as u32);
            }
        }
    }
    Segment {
        meta,
        bits,
        stream: w.finish(),
    }
}

/// The metadata: what a tool needs to rebuild a clip file (names, hierarchy, bind pose), and
/// the clip file's own per-bone thresholds when it has any (then true: flags bit 5).
fn write_metadata(out: &mut Vec<u8>, clip: &RawClip, p: &Prepared) -> bool {
    put_u32(out, p.num_samples as u32);
    put_str(out, &clip.name);
    let sk = &clip.skeleton;
    for b in 0..p.num_bones {
        put_str(out, &sk.names[b]);
        put_u16(
            out,
            if sk.parents[b] == NO_PARENT {
                NO_PARENT_U16
            } else {
                sk.parents[b] as u16
            },
        );
        put_f32(out, p.shells[b]);
        for v in sk.bind_rotations[b].to_array() {
            put_f32(out, v);
        }
        for v in sk.bind_translations[b]
            .to_array()
            .into_iter()
            .chain(sk.bind_scales[b].to_array())
        {
            put_f32(out, v);
        }
    }
    let precisions = sk.precisions.iter().any(Option::is_some);
    if precisions {
        for p in &sk.precisions {
            put_f32(out, p.unwrap_or(0.0));
        }
    }
    precisions
}

/// The header, written last: it holds the sizes, counts and the checksum of the rest.
fn write_header(
    out: &mut [u8],
    clip: &RawClip,
    p: &Prepared,
    flags: u16,
    runtime_size: usize,
    version: u16,
) {
    let total = out.len();
    out[0..4].copy_from_slice(&MAGIC);
    out[4..6].copy_from_slice(&version.to_le_bytes());
    let additive: u16 = match p.clip.additive.as_ref().map(|a| a.format) {
        None => 0,
        Some(crate::additive::AdditiveFormat::Relative) => 1,
        Some(crate::additive::AdditiveFormat::Additive0) => 2,
        Some(crate::additive::AdditiveFormat::Additive1) => 3,
    };
    let flags = flags | (additive << crate::runtime::format::FLAG_ADDITIVE_SHIFT);
    out[6..8].copy_from_slice(&flags.to_le_bytes());
    out[12..16].copy_from_slice(&(total as u32).to_le_bytes());
    out[16..20].copy_from_slice(&(runtime_size as u32).to_le_bytes());
    out[20..22].copy_from_slice(&(p.num_bones as u16).to_le_bytes());
    out[22..24].copy_from_slice(&(p.segment_size as u16).to_le_bytes());
    out[24..28].copy_from_slice(&(p.num_stored as u32).to_le_bytes());
    out[28..32].copy_from_slice(&clip.sample_rate.to_le_bytes());
    out[32..36].copy_from_slice(&(p.num_segments as u32).to_le_bytes());
    out[36..40].copy_from_slice(&(p.constants.len() as u32).to_le_bytes());
    out[40..44].copy_from_slice(&(p.tracks.len() as u32).to_le_bytes());
    out[44..48].copy_from_slice(&(p.qconstants.len() as u32).to_le_bytes());
    let crc = checksum(out);
    out[8..12].copy_from_slice(&crc.to_le_bytes());
}

/// Number of (component, segment) pairs at each bit width (index 32: raw float32).
pub fn histogram(choices: &[SegmentChoice]) -> Vec<u32> {
    // Counted on the stack, then one allocation of the length the result has (not a zeroed
    // vector grown when a raw width shows up).
    let mut h = [0u32; RAW_BITS as usize + 1];
    let mut len = MAX_BITS as usize + 1;
    for c in choices {
        for w in &c.widths {
            for &x in w {
                // Widths are at most MAX_BITS or RAW_BITS (`segment` asserts it).
                let i = (x as usize).min(RAW_BITS as usize);
                h[i] += 1;
                // Index 32 (raw float32) only exists when it is used.
                len = len.max(i + 1);
            }
        }
    }
    h[..len].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(widths: &[[u32; 3]]) -> SegmentChoice {
        SegmentChoice {
            ranges: vec![[0; 6]; widths.len()],
            widths: widths.to_vec(),
        }
    }

    /// Counted per (component, segment); index 32 (raw float32) exists only when some component
    /// is stored raw (the fixed-array count must give the same vectors the growing one did).
    #[test]
    fn histogram_counts_widths_and_has_the_raw_slot_only_when_used() {
        let h = histogram(&[choice(&[[3, 3, 0], [MAX_BITS, 5, 3]]), choice(&[[3, 0, 0]])]);
        assert_eq!(h.len(), MAX_BITS as usize + 1);
        assert_eq!((h[0], h[3], h[5], h[MAX_BITS as usize]), (3, 4, 1, 1));
        assert_eq!(h.iter().sum::<u32>(), 9);
        let h = histogram(&[
            choice(&[[RAW_BITS, RAW_BITS, RAW_BITS]]),
            choice(&[[7, 7, 7]]),
        ]);
        assert_eq!(h.len(), RAW_BITS as usize + 1);
        assert_eq!((h[7], h[RAW_BITS as usize]), (3, 3));
        assert!(histogram(&[]).iter().all(|&x| x == 0));
        assert_eq!(histogram(&[]).len(), MAX_BITS as usize + 1);
    }
}
