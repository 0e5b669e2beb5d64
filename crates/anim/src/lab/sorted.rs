//! Key-reduced clip as one sorted key stream, in BitSquid's manner: every key of every sub-track
//! in one array, ordered by the time the decoder first needs it (the time of the key before it
//! on its sub-track), played forward through a per-instance [`Context`] that holds the two
//! bracketing keys of every sub-track. Every [`JUMP_INTERVAL`] samples a jump frame holds the
//! context's keys at that time and the stream position, so a seek backwards (or far forwards)
//! reloads the nearest jump frame before it and replays from there instead of from the start.
//!
//! Buffer: header (32 bytes: u32 sub-tracks, u32 samples, f32 rate, u32 stream entries, u32
//! jump interval, u32 jump frames, u32 stream offset, u32 jump table offset), then per sub-track
//! its info (28 bytes: u8 storage, u8 kind, u16 keys, range 24 bytes), the jump table (8 bytes per
//! frame: u32 frame data offset, u32 stream byte offset), the jump frames' entries and the
//! stream. An entry is u16 sub-track, u16 key time, then the value (6 bytes in 16-bit storage,
//! 12 or 16 raw).

use super::keys::{self, KeySet, Storage};
use super::probe::{Probe, Region};
use super::unsorted::{read_range, read_value, u16_at, u32_at, write_range, write_value};
use crate::pose::Pose;
use glam::Vec4;

pub(crate) const HEADER_BYTES: usize = 32;
pub(crate) const TRACK_INFO_BYTES: usize = 28;
pub(crate) const ENTRY_HEADER_BYTES: usize = 4;
/// Samples between jump frames (~2 s at 30 Hz).
pub(crate) const JUMP_INTERVAL: usize = 64;
/// Context bytes per sub-track: two key times (f32) and two decoded values (4 × f32 each).
pub(crate) const CONTEXT_TRACK_BYTES: usize = 40;
/// Context bytes besides the sub-tracks: stream position, time, valid flag, pad.
pub(crate) const CONTEXT_HEADER_BYTES: usize = 16;

pub struct Sorted {
    pub buf: Vec<u8>,
    num_tracks: usize,
    num_samples: usize,
    sample_rate: f32,
    stream_off: usize,
    jumps_off: usize,
    num_jumps: usize,
    /// Decoded track infos, for the decoder's arithmetic; reads of them are still counted at
    /// their place in the buffer.
    infos: Vec<(Storage, u8, u16)>,
}

#[derive(Clone, Copy)]
struct Slot {
    t0: f32,
    t1: f32,
    v0: Vec4,
    v1: Vec4,
}

/// Per-instance playback state.
pub struct Context {
    slots: Vec<Slot>,
    /// Byte offset of the next stream entry.
    pos: usize,
    /// Time (in samples) of the last decode.
    x: f32,
    valid: bool,
}

impl Context {
    pub fn size_bytes(&self) -> usize {
        CONTEXT_HEADER_BYTES + CONTEXT_TRACK_BYTES * self.slots.len()
    }
}

fn write_entry(out: &mut Vec<u8>, track: usize, keys: &KeySet, k: usize) {
    let t = &keys.tracks[track];
    out.extend_from_slice(&(track as u16).to_le_bytes());
    out.extend_from_slice(&(t.times[k] as u16).to_le_bytes());
    write_value(out, t.storage, t.kind, t.words[k]);
}

/// (previous, next) key indices of a sub-track with ≥ 2 keys once every entry needed at or
/// before `x` is consumed.
fn bracket(times: &[u32], x: usize) -> (usize, usize) {
    // next = the largest i ≥ 1 with times[i - 1] ≤ x.
    let mut next = 1;
    while next + 1 < times.len() && times[next] as usize <= x {
        next += 1;
    }
    (next - 1, next)
}

impl Sorted {
    /// Encodes the key set; `None` when key times or sub-track ids do not fit 16 bits.
    pub fn encode(keys: &KeySet) -> Option<Self> {
        let n = keys.num_samples;
        let nt = keys.tracks.len();
        if n > u16::MAX as usize || nt > u16::MAX as usize {
            return None;
        }
        // Stream entries: key i ≥ 2 of each sub-track, needed at times[i - 1].
        let mut entries: Vec<(u32, usize, usize)> = Vec::new();
        for (ti, t) in keys.tracks.iter().enumerate() {
            for k in 2..t.times.len() {
                entries.push((t.times[k - 1], ti, k));
            }
        }
        entries.sort_unstable();
        let num_jumps = n.div_ceil(JUMP_INTERVAL).max(1);
        let mut buf = Vec::new();
        for v in [nt as u32, n as u32] {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        buf.extend_from_slice(&keys.sample_rate.to_le_bytes());
        for v in [
            entries.len() as u32,
            JUMP_INTERVAL as u32,
            num_jumps as u32,
            0,
            0,
        ] {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        let mut infos = Vec::with_capacity(nt);
        for t in &keys.tracks {
            buf.push(t.storage.code());
            buf.push(t.kind);
            buf.extend_from_slice(&(t.times.len() as u16).to_le_bytes());
            let before = buf.len();
            write_range(&mut buf, t.storage);
            buf.resize(before + 24, 0);
            infos.push((t.storage, t.kind, t.times.len() as u16));
        }
        let jumps_off = buf.len();
        buf.resize(jumps_off + 8 * num_jumps, 0);
        // Byte offset of each stream entry, known once the frames are written: record entry
        // indices first.
        let mut frame_entry_index = Vec::with_capacity(num_jumps);
        for j in 0..num_jumps {
            let x = j * JUMP_INTERVAL;
            let off = buf.len();
            buf[jumps_off + 8 * j..jumps_off + 8 * j + 4]
                .copy_from_slice(&(off as u32).to_le_bytes());
            for (ti, t) in keys.tracks.iter().enumerate() {
                match t.times.len() {
                    0 => {}
                    1 => write_entry(&mut buf, ti, keys, 0),
                    _ => {
                        let (p, q) = bracket(&t.times, x);
                        write_entry(&mut buf, ti, keys, p);
                        write_entry(&mut buf, ti, keys, q);
                    }
                }
            }
            frame_entry_index.push(entries.partition_point(|e| e.0 as usize <= x));
        }
        let stream_off = buf.len();
        let mut entry_offsets = Vec::with_capacity(entries.len() + 1);
        for &(_, ti, k) in &entries {
            entry_offsets.push(buf.len());
            write_entry(&mut buf, ti, keys, k);
        }
        entry_offsets.push(buf.len());
        for (j, &ei) in frame_entry_index.iter().enumerate() {
            let o = jumps_off + 8 * j + 4;
            buf[o..o + 4].copy_from_slice(&(entry_offsets[ei] as u32).to_le_bytes());
        }
        buf[24..28].copy_from_slice(&(stream_off as u32).to_le_bytes());
        buf[28..32].copy_from_slice(&(jumps_off as u32).to_le_bytes());
        Some(Self {
            buf,
            num_tracks: nt,
            num_samples: n,
            sample_rate: keys.sample_rate,
            stream_off,
            jumps_off,
            num_jumps,
            infos,
        })
    }

    pub fn num_samples(&self) -> usize {
        self.num_samples
    }

    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    pub fn new_context(&self) -> Context {
        let slots = self
            .infos
            .iter()
            .map(|&(_, kind, _)| {
                let v = keys::default_value(kind);
                Slot {
                    t0: 0.0,
                    t1: 0.0,
                    v0: v,
                    v1: v,
                }
            })
            .collect();
        Context {
            slots,
            pos: self.stream_off,
            x: 0.0,
            valid: false,
        }
    }

    /// Reads the entry at `off` (its track info included): (sub-track, time, value, size).
    #[inline]
    fn read_entry<P: Probe>(&self, off: usize, probe: &mut P) -> (usize, f32, Vec4, usize) {
        let b = &self.buf[..];
        probe.read(Region::Clip, off, ENTRY_HEADER_BYTES);
        let ti = u16_at(b, off) as usize;
        let time = u16_at(b, off + 2) as f32;
        let info = HEADER_BYTES + TRACK_INFO_BYTES * ti;
        probe.read(Region::Clip, info, 4);
        let (storage, kind, _) = self.infos[ti];
        let storage = match storage {
            Storage::Q16 { .. } => {
                probe.read(Region::Clip, info + 4, 24);
                let (min, ext) = read_range(b, info + 4);
                Storage::Q16 { min, ext }
            }
            s => s,
        };
        let vb = storage.value_bytes(kind);
        probe.read(Region::Clip, off + ENTRY_HEADER_BYTES, vb);
        let v = read_value(b, off + ENTRY_HEADER_BYTES, storage, kind);
        (ti, time, v, ENTRY_HEADER_BYTES + vb)
    }

    /// Reloads the context from jump frame `j`.
    fn load_jump<P: Probe>(&self, j: usize, ctx: &mut Context, probe: &mut P) {
        let b = &self.buf[..];
        probe.read(Region::Clip, self.jumps_off + 8 * j, 8);
        let mut off = u32_at(b, self.jumps_off + 8 * j) as usize;
        ctx.pos = u32_at(b, self.jumps_off + 8 * j + 4) as usize;
        for ti in 0..self.num_tracks {
            probe.read(Region::Clip, HEADER_BYTES + TRACK_INFO_BYTES * ti + 2, 2);
            let nk = self.infos[ti].2;
            if nk == 0 {
                continue;
            }
            let (_, t0, v0, size) = self.read_entry(off, probe);
            off += size;
            let (t1, v1) = if nk == 1 {
                (t0, v0)
            } else {
                let (_, t1, v1, size) = self.read_entry(off, probe);
                off += size;
                (t1, v1)
            };
            probe.read(
                Region::Context,
                CONTEXT_HEADER_BYTES + CONTEXT_TRACK_BYTES * ti,
                CONTEXT_TRACK_BYTES,
            );
            ctx.slots[ti] = Slot { t0, t1, v0, v1 };
        }
    }

    /// Decodes every sub-track at `x` samples (clamped to the clip) into `pose`, moving the
    /// context forward from where it is, or from the last jump frame at or before `x` when `x`
    /// is behind it or more than a jump interval ahead.
    pub fn decode<P: Probe>(&self, x: f32, ctx: &mut Context, pose: &mut Pose, probe: &mut P) {
        let last = self.num_samples.saturating_sub(1) as f32;
        let x = if x.is_finite() {
            x.clamp(0.0, last)
        } else {
            0.0
        };
        probe.read(Region::Context, 0, CONTEXT_HEADER_BYTES);
        let j = ((x as usize) / JUMP_INTERVAL).min(self.num_jumps - 1);
        if !ctx.valid || x < ctx.x || (j * JUMP_INTERVAL) as f32 > ctx.x {
            self.load_jump(j, ctx, probe);
            ctx.valid = true;
        }
        ctx.x = x;
        let end = self.buf.len();
        while ctx.pos < end {
            // The head entry is needed once x reaches its sub-track's current next key.
            probe.read(Region::Clip, ctx.pos, 2);
            let ti = u16_at(&self.buf, ctx.pos) as usize;
            probe.read(
                Region::Context,
                CONTEXT_HEADER_BYTES + CONTEXT_TRACK_BYTES * ti,
                CONTEXT_TRACK_BYTES,
            );
            if ctx.slots[ti].t1 > x {
                break;
            }
            let (_, t, v, size) = self.read_entry(ctx.pos, probe);
            ctx.pos += size;
            let s = &mut ctx.slots[ti];
            *s = Slot {
                t0: s.t1,
                t1: t,
                v0: s.v1,
                v1: v,
            };
        }
        for (ti, s) in ctx.slots.iter().enumerate() {
            probe.read(
                Region::Context,
                CONTEXT_HEADER_BYTES + CONTEXT_TRACK_BYTES * ti,
                CONTEXT_TRACK_BYTES,
            );
            let kind = self.infos[ti].1;
            let v = if s.t1 > s.t0 {
                let alpha = ((x - s.t0) / (s.t1 - s.t0)).clamp(0.0, 1.0);
                keys::interpolate(kind, s.v0, s.v1, alpha)
            } else {
                s.v0
            };
            keys::store(kind, v, ti / 3, pose);
        }
    }
}
