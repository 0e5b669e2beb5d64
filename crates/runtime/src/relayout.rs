//! Converts a `.cfa` buffer between the layouts of versions 3, 4 and 5 (`docs/FORMAT.md`,
//! "Versions"): the same sections up to the segments, the same widths, segment ranges, dropped
//! components and bit streams, laid out as a segment table with the parts of each segment
//! (version 3), as one block per segment with its ranges in groups of four tracks (version 4),
//! or as version 4's metadata coded against the previous segment's, then the bit streams
//! (version 5). The values are untouched, so all decode to the same poses bit for bit; tests
//! compare the layouts with it.

use crate::format::*;
use crate::quant::segment_span;
use crate::segmeta;
use crate::{ClipReader, FormatError, NO_SLOT, u16_at};

use alloc::vec::Vec;

/// `buf` (a buffer of version 3, 4 or 5, validated here) laid out as version `version` (3, 4
/// or 5; a clip without animated sub-tracks asked for as version 5 is laid out as version 4,
/// the version such a clip is stored in). Fails on an invalid buffer, on versions 1 and 2
/// (their clip ranges are float32: a different value, not a layout) and on any other target
/// version.
pub fn relayout(buf: &[u8], version: u16) -> Result<Vec<u8>, FormatError> {
    let r = ClipReader::new(buf)?;
    let from = u16_at(buf, 4);
    for v in [from, version] {
        if !(COMPACT_ROT_RANGE_VERSION..=MAX_VERSION).contains(&v) {
            return Err(FormatError::UnsupportedVersion(v));
        }
    }
    let (a, nseg) = (r.num_animated, r.num_segments);
    let version = if a == 0 {
        version.min(GROUPED_SEGMENTS_VERSION)
    } else {
        version
    };
    let grouped = version >= GROUPED_SEGMENTS_VERSION;
    let multi = nseg > 1;
    let slots = r.tracks.iter().filter(|t| t.slot != NO_SLOT).count();
    let m = &r.seg_meta[..];
    // Each segment's metadata in the target layout (widths, ranges, dropped) and bit stream.
    let mut blocks: Vec<Vec<u8>> = Vec::with_capacity(nseg);
    let mut streams: Vec<&[u8]> = Vec::with_capacity(nseg);
    for (s, e) in r.segs.iter().enumerate() {
        let w_off = e.widths_off as usize;
        let ranges_off = w_off + 2 * a;
        let dropped_off = ranges_off + if multi { 6 * a } else { 0 };
        let slot_bytes = &m[dropped_off..dropped_off + slots];
        let none = |k: usize| {
            let slot = r.tracks[k].slot;
            slot != NO_SLOT && slot_bytes[slot as usize] == DROPPED_NONE
        };
        let range = |k: usize, row: usize| {
            m[ranges_off
                + if r.grouped {
                    grouped_range_offset(a, k, row)
                } else {
                    6 * k + row
                }]
        };
        let (_, seg_len) = segment_span(s, nseg, r.num_samples, SEGMENT_SIZE);
        let data_off = e.data_off as usize;
        streams.push(&buf[data_off..data_off + (e.bits as usize * seg_len).div_ceil(8)]);
        let mut block = Vec::new();
        for k in 0..a {
            let w = u16_at(m, w_off + 2 * k) & !WIDTHS_RAW_W_FLAG;
            let flag = if grouped && none(k) {
                WIDTHS_RAW_W_FLAG
            } else {
                0
            };
            block.extend_from_slice(&(w | flag).to_le_bytes());
        }
        if multi {
            if grouped {
                for g in 0..a.div_ceil(GROUP) {
                    let lanes = GROUP * g..(GROUP * g + GROUP).min(a);
                    for row in 0..6 {
                        block.extend(lanes.clone().map(|k| range(k, row)));
                    }
                }
            } else {
                for k in 0..a {
                    block.extend((0..6).map(|row| range(k, row)));
                }
            }
        }
        block.extend_from_slice(slot_bytes);
        blocks.push(block);
    }
    let mut out = buf[..r.segments_off].to_vec();
    if version >= CODED_METADATA_VERSION {
        let shape = segmeta::Shape {
            num_segs: nseg,
            num_animated: a,
            multi,
            num_dropped: slots,
        };
        let refs: Vec<&[u8]> = blocks.iter().map(|b| &b[..]).collect();
        let coded = segmeta::encode(&refs, &shape);
        out.extend_from_slice(&(coded.len() as u32).to_le_bytes());
        out.extend_from_slice(&coded);
        out.resize(align4(out.len()), 0);
        for stream in streams {
            out.extend_from_slice(stream);
            out.resize(align4(out.len()), 0);
        }
    } else {
        let table = out.len();
        if !grouped {
            out.resize(table + 12 * nseg, 0);
        }
        for (s, (block, stream)) in blocks.iter().zip(streams).enumerate() {
            let bits = r.segs[s].bits;
            if grouped {
                out.extend_from_slice(&bits.to_le_bytes());
            }
            let widths_at = out.len();
            out.extend_from_slice(block);
            out.resize(align4(out.len()), 0);
            let data_at = out.len();
            out.extend_from_slice(stream);
            out.resize(align4(out.len()), 0);
            if !grouped {
                let h = table + 12 * s;
                out[h..h + 4].copy_from_slice(&(widths_at as u32).to_le_bytes());
                out[h + 4..h + 8].copy_from_slice(&(data_at as u32).to_le_bytes());
                out[h + 8..h + 12].copy_from_slice(&bits.to_le_bytes());
            }
        }
    }
    out.extend_from_slice(&[0u8; TAIL_PADDING]);
    let runtime_size = out.len();
    out.extend_from_slice(&buf[r.runtime_size..]);
    let total = out.len();
    out[4..6].copy_from_slice(&version.to_le_bytes());
    out[12..16].copy_from_slice(&(total as u32).to_le_bytes());
    out[16..20].copy_from_slice(&(runtime_size as u32).to_le_bytes());
    let crc = checksum(&out);
    out[8..12].copy_from_slice(&crc.to_le_bytes());
    // What was written must read back (a layout bug here would otherwise ship).
    debug_assert!(ClipReader::new(&out).is_ok());
    Ok(out)
}
