//! Key-reduced clip in UE4's unsorted layout: per sub-track a table entry (data offset, key
//! count, storage, kind), then at its offset the sub-track's range (16-bit storage), its key
//! times (u8 when the clip has ≤ 256 samples, else u16) and its key values. Sampling a pose
//! visits every sub-track's table entry, range, times (binary search) and two values: the reads
//! scatter over the whole buffer, which is what the article's cache-line estimate counts.
//!
//! Buffer: header (16 bytes: u32 sub-tracks, u32 samples, f32 rate, u8 time bytes, 3 pad),
//! table (8 bytes per sub-track: u32 offset, u16 keys, u8 storage 0 default / 1 q16 / 2 raw,
//! u8 kind), then each sub-track's data, 4-byte aligned.

use super::keys::{self, KeySet, Storage};
use super::probe::{Probe, Region};
use crate::pose::Pose;
use glam::Vec4;

pub(crate) const HEADER_BYTES: usize = 16;
pub(crate) const TABLE_ENTRY_BYTES: usize = 8;
pub(crate) const RANGE_BYTES: usize = 24;

/// An encoded clip and what its decoder needs to read it.
pub struct Unsorted {
    pub buf: Vec<u8>,
    num_tracks: usize,
    num_samples: usize,
    sample_rate: f32,
    time_bytes: usize,
}

fn align4(x: usize) -> usize {
    (x + 3) & !3
}

/// Little-endian reads of the lab's buffers (this layout's and the sorted stream's).
pub(crate) fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
pub(crate) fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn f32_at(b: &[u8], o: usize) -> f32 {
    f32::from_bits(u32_at(b, o))
}

/// Reads one key value at `off` (the storage says how many bytes).
pub(super) fn read_value(b: &[u8], off: usize, storage: Storage, kind: u8) -> Vec4 {
    let mut w = [0u32; 4];
    match storage {
        Storage::Default => {}
        Storage::Q16 { .. } => {
            for (k, w) in w.iter_mut().take(3).enumerate() {
                *w = u16_at(b, off + 2 * k) as u32;
            }
        }
        Storage::Raw => {
            let n = if kind == keys::ROTATION { 4 } else { 3 };
            for (k, w) in w.iter_mut().take(n).enumerate() {
                *w = u32_at(b, off + 4 * k);
            }
        }
    }
    keys::decode_value(storage, kind, w)
}

/// Appends one key value's bytes.
pub(super) fn write_value(out: &mut Vec<u8>, storage: Storage, kind: u8, w: [u32; 4]) {
    match storage {
        Storage::Default => {}
        Storage::Q16 { .. } => {
            for &x in &w[..3] {
                out.extend_from_slice(&(x as u16).to_le_bytes());
            }
        }
        Storage::Raw => {
            let n = if kind == keys::ROTATION { 4 } else { 3 };
            for &x in &w[..n] {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
}

pub(super) fn write_range(out: &mut Vec<u8>, storage: Storage) {
    if let Storage::Q16 { min, ext } = storage {
        for v in min.iter().chain(ext.iter()) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

pub(super) fn read_range(b: &[u8], off: usize) -> ([f32; 3], [f32; 3]) {
    (
        std::array::from_fn(|k| f32_at(b, off + 4 * k)),
        std::array::from_fn(|k| f32_at(b, off + 12 + 4 * k)),
    )
}

impl Unsorted {
    pub fn encode(keys: &KeySet) -> Self {
        let n = keys.num_samples;
        let time_bytes = if n <= 256 { 1 } else { 2 };
        let nt = keys.tracks.len();
        let mut buf = Vec::new();
        buf.extend_from_slice(&(nt as u32).to_le_bytes());
        buf.extend_from_slice(&(n as u32).to_le_bytes());
        buf.extend_from_slice(&keys.sample_rate.to_le_bytes());
        buf.extend_from_slice(&[time_bytes as u8, 0, 0, 0]);
        let table = buf.len();
        buf.resize(table + TABLE_ENTRY_BYTES * nt, 0);
        for (i, t) in keys.tracks.iter().enumerate() {
            let off = buf.len();
            let e = table + TABLE_ENTRY_BYTES * i;
            buf[e..e + 4].copy_from_slice(&(off as u32).to_le_bytes());
            buf[e + 4..e + 6].copy_from_slice(&(t.times.len() as u16).to_le_bytes());
            buf[e + 6] = t.storage.code();
            buf[e + 7] = t.kind;
            write_range(&mut buf, t.storage);
            if t.times.len() > 1 {
                for &time in &t.times {
                    if time_bytes == 1 {
                        buf.push(time as u8);
                    } else {
                        buf.extend_from_slice(&(time as u16).to_le_bytes());
                    }
                }
            }
            if matches!(t.storage, Storage::Raw) {
                buf.resize(align4(buf.len()), 0);
            }
            for &w in &t.words {
                write_value(&mut buf, t.storage, t.kind, w);
            }
            buf.resize(align4(buf.len()), 0);
        }
        Self {
            buf,
            num_tracks: nt,
            num_samples: n,
            sample_rate: keys.sample_rate,
            time_bytes,
        }
    }

    pub fn num_samples(&self) -> usize {
        self.num_samples
    }

    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    /// Decodes every sub-track at `x` samples (clamped to the clip) into `pose`.
    pub fn decode<P: Probe>(&self, x: f32, pose: &mut Pose, probe: &mut P) {
        let b = &self.buf[..];
        probe.read(Region::Clip, 0, HEADER_BYTES);
        let last = self.num_samples.saturating_sub(1) as f32;
        let x = if x.is_finite() {
            x.clamp(0.0, last)
        } else {
            0.0
        };
        let tb = self.time_bytes;
        let time_at = |off: usize| -> u32 {
            if tb == 1 {
                b[off] as u32
            } else {
                u16_at(b, off) as u32
            }
        };
        for i in 0..self.num_tracks {
            let e = HEADER_BYTES + TABLE_ENTRY_BYTES * i;
            probe.read(Region::Clip, e, TABLE_ENTRY_BYTES);
            let mut off = u32_at(b, e) as usize;
            let nk = u16_at(b, e + 4) as usize;
            let kind = b[e + 7];
            let storage = match b[e + 6] {
                1 => {
                    probe.read(Region::Clip, off, RANGE_BYTES);
                    let (min, ext) = read_range(b, off);
                    off += RANGE_BYTES;
                    Storage::Q16 { min, ext }
                }
                2 => Storage::Raw,
                _ => Storage::Default,
            };
            let bone = i / 3;
            let vb = storage.value_bytes(kind);
            let v = if nk == 0 {
                keys::default_value(kind)
            } else if nk == 1 {
                if matches!(storage, Storage::Raw) {
                    off = align4(off);
                }
                probe.read(Region::Clip, off, vb);
                read_value(b, off, storage, kind)
            } else {
                // Binary search: the last key at or before x, among the first nk - 1.
                let (mut lo, mut hi) = (0usize, nk - 1);
                while hi - lo > 1 {
                    let mid = (lo + hi) / 2;
                    probe.read(Region::Clip, off + mid * tb, tb);
                    if time_at(off + mid * tb) as f32 <= x {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                probe.read(Region::Clip, off + lo * tb, tb);
                probe.read(Region::Clip, off + (lo + 1) * tb, tb);
                let (t0, t1) = (time_at(off + lo * tb), time_at(off + (lo + 1) * tb));
                let mut voff = off + nk * tb;
                if matches!(storage, Storage::Raw) {
                    voff = align4(voff);
                }
                probe.read(Region::Clip, voff + lo * vb, 2 * vb);
                let a = read_value(b, voff + lo * vb, storage, kind);
                let c = read_value(b, voff + (lo + 1) * vb, storage, kind);
                let alpha = ((x - t0 as f32) / (t1 - t0) as f32).clamp(0.0, 1.0);
                keys::interpolate(kind, a, c, alpha)
            };
            keys::store(kind, v, bone, pose);
        }
    }
}
