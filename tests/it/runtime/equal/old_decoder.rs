//! The decoder of `clipforge-runtime` as it was before issue 23's rewrite (commit 1373fc4's
//! `ClipReader`, verbatim but for the paths): `tests/it/runtime/equal.rs` checks that the new one
//! decodes every real clip to the same bits. Test-only; never used by the product.
#![allow(dead_code, clippy::all)]

use clipforge::runtime::format::*;
use clipforge::runtime::limits::{MAX_COMPONENT_MAGNITUDE, MAX_TOTAL_SAMPLES};
use clipforge::runtime::quant::{
    self, Dequant, num_segments, rebuild_rotation, rebuild_rotation_unnormalized,
};
use clipforge::runtime::{BoneDesc, FormatError, Looping, Pose, Skeleton};
use glam::{Quat, Vec3, Vec3A, Vec4};

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

fn corrupt<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError::Corrupt(msg.into()))
}

#[inline]
fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
#[inline]
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
#[inline]
fn f32_at(b: &[u8], o: usize) -> f32 {
    f32::from_bits(u32_at(b, o))
}

/// Reads little-endian values with bounds checks, for validation and metadata.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
}

impl Cursor<'_> {
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
        let n = self.u16()? as usize;
        let at = self.take(n)?;
        String::from_utf8(self.buf[at..at + n].to_vec()).or_else(|_| corrupt("a name is not UTF-8"))
    }
}

/// Skeleton and names stored after the runtime data.
#[derive(Clone, Debug)]
struct Metadata {
    clip_name: String,
    original_num_samples: usize,
    skeleton: Skeleton,
}

/// A validated read-only view over a compressed clip. Construction checks every offset, count,
/// width and float, so sampling afterwards cannot read out of bounds or panic.
#[derive(Clone, Debug)]
pub struct OldReader<'a> {
    buf: &'a [u8],
    num_bones: usize,
    num_samples: usize,
    sample_rate: f32,
    segment_size: usize,
    num_segments: usize,
    wrap: bool,
    /// 0 plain; 1 relative, 2 additive0, 3 additive1 ([`FLAG_ADDITIVE_MASK`]).
    additive: u8,
    desc_off: usize,
    seg_header_off: usize,
    num_animated: usize,
    runtime_size: usize,
    /// Every default and constant sub-track decoded once, at construction: the hot path only
    /// copies them and decodes the animated ones.
    fixed_rotations: Vec<Quat>,
    fixed_translations: Vec<Vec3A>,
    fixed_scales: Vec<Vec3A>,
    /// The animated sub-tracks in stream order.
    animated: Vec<AnimatedTrack>,
    /// Clip range (min x,y,z, extent x,y,z) of each animated sub-track, read once.
    clip_ranges: Vec<[f32; 6]>,
    /// Per bone: index of its first animated sub-track and how many it has.
    bone_animated: Vec<(u32, u8)>,
    /// Per animated sub-track, the rotation it is stored relative to
    /// ([`FLAG_ROTATION_REFERENCES`]); empty when the clip has none.
    references: Vec<Option<Quat>>,
    meta: Metadata,
}

#[derive(Clone, Copy, Debug)]
struct AnimatedTrack {
    bone: u32,
    /// 0 rotation, 1 translation, 2 scale.
    kind: u8,
    dropped: u8,
    /// For a rotation whose dropped component is stored per segment: its slot in the segment's list.
    per_segment_slot: Option<u16>,
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

/// Where one sample's data lives: its segment's widths, ranges and the bit position.
#[derive(Clone, Copy)]
struct SampleCursor {
    widths_off: usize,
    ranges_off: Option<usize>,
    dropped_off: usize,
    bitpos: usize,
}

impl<'a> OldReader<'a> {
    /// Validates `buf` completely and returns a view over it.
    /// One piece: a frozen copy of the version-3 reader's validation as it was when version 4
    /// landed — the reference the new decoder is compared with, kept as written, not refactored.
    pub fn new(buf: &'a [u8]) -> Result<Self, FormatError> {
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
        if !(MIN_VERSION..=VERSION).contains(&version) {
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
            return corrupt(
                "flags: compact reference rotations (bit 6) without references (bit 4)",
            );
        }
        let runtime_size = u32_at(buf, 16) as usize;
        if runtime_size > len || runtime_size < HEADER_SIZE + TAIL_PADDING {
            return corrupt(format!(
                "runtime size {runtime_size} outside the buffer ({len} bytes)"
            ));
        }
        let num_bones = u16_at(buf, 20) as usize;
        let segment_size = u16_at(buf, 22) as usize;
        let num_samples = u32_at(buf, 24) as usize;
        let sample_rate = f32_at(buf, 28);
        let num_segs = u32_at(buf, 32) as usize;
        let num_constant = u32_at(buf, 36) as usize;
        let num_animated = u32_at(buf, 40) as usize;
        let num_qconstant = u32_at(buf, 44) as usize;
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
        if num_segs != num_segments(num_samples, segment_size) {
            return corrupt(format!(
                "{num_segs} segments do not match {num_samples} samples"
            ));
        }
        if num_bones > 0 && num_samples == 0 {
            return corrupt("a clip with bones has no samples");
        }
        let wrap = flags & FLAG_WRAP != 0;
        let additive = ((flags & FLAG_ADDITIVE_MASK) >> FLAG_ADDITIVE_SHIFT) as u8;
        let rt = Cursor {
            buf,
            pos: HEADER_SIZE,
            end: runtime_size,
        };
        let mut c = rt;
        let desc_off = c.take(num_bones)?;
        c.pos = align4(c.pos);
        let mut counted_constant = 0usize;
        let mut counted_q = 0usize;
        let mut counted_qtrans = 0usize;
        let mut counted_animated = 0usize;
        let mut num_seg_dropped = 0usize;
        // Animated sub-track index of each per-segment dropped slot.
        let mut slot_track = Vec::new();
        // Kind (0 rotation, 1 translation, 2 scale) of each animated sub-track, in stream order.
        let mut animated_kinds = Vec::new();
        let mut bone_first = Vec::with_capacity(num_bones);
        for b in 0..num_bones {
            bone_first.push([
                counted_constant as u32,
                counted_q as u32,
                counted_animated as u32,
                num_seg_dropped as u32,
            ]);
            let (kinds, dropped) = unpack_descriptor(buf[desc_off + b]);
            if kinds[0] == KIND_ANIMATED && dropped == DROPPED_PER_SEGMENT {
                num_seg_dropped += 1;
                slot_track.push(counted_animated);
            }
            for (i, k) in kinds.into_iter().enumerate() {
                match k {
                    KIND_DEFAULT => {}
                    KIND_CONSTANT => counted_constant += 1,
                    KIND_ANIMATED => {
                        counted_animated += 1;
                        animated_kinds.push(i as u8);
                    }
                    KIND_CONSTANT_Q if i < 2 => {
                        counted_q += 1;
                        counted_qtrans += i;
                    }
                    _ => return corrupt(format!("bone {b}: invalid sub-track kind {k}")),
                }
            }
        }
        if counted_constant != num_constant
            || counted_animated != num_animated
            || counted_q != num_qconstant
        {
            return corrupt("sub-track counts do not match the bone descriptors");
        }
        if num_animated > 0 && num_samples == 0 {
            return corrupt("animated sub-tracks without samples");
        }
        let const_off = c.take(
            num_constant
                .checked_mul(12)
                .ok_or(FormatError::Corrupt("too many constants".into()))?,
        )?;
        for i in 0..num_constant * 3 {
            if !f32_at(buf, const_off + 4 * i).is_finite() {
                return corrupt(format!("constant value {} is not finite", i / 3));
            }
        }
        // Box of the 16-bit constant translations (only when there are some), then the 16-bit constants.
        let qbox_off = c.take(if counted_qtrans > 0 { 24 } else { 0 })?;
        for i in 0..(if counted_qtrans > 0 { 3 } else { 0 }) {
            let (min, ext) = (
                f32_at(buf, qbox_off + 4 * i),
                f32_at(buf, qbox_off + 12 + 4 * i),
            );
            if !range_within(min, ext, MAX_COMPONENT_MAGNITUDE) {
                return corrupt("constant translation box is invalid");
            }
        }
        let qconst_off = c.take(num_qconstant * 6)?;
        c.pos = align4(c.pos);
        // Clip ranges: float32 min x,y,z and extent x,y,z, or for a rotation from version 3 on,
        // 16-bit fixed point (min_q + ext_q ≤ 65535 keeps it inside [-1, 1]).
        let compact = version >= COMPACT_ROT_RANGE_VERSION;
        let mut clip_ranges: Vec<[f32; 6]> = Vec::with_capacity(num_animated);
        for (a, &kind) in animated_kinds.iter().enumerate() {
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
                let r: [f32; 6] = std::array::from_fn(|i| f32_at(buf, o + 4 * i));
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
        // Reference rotations: a bit per animated sub-track (set only on rotations), then each
        // set track's reference: 3 bytes right after the bits (bit 6), or 4 bytes from the next
        // multiple of 4 (bit 4 alone, the first layout).
        let mut references = Vec::new();
        if flags & FLAG_ROTATION_REFERENCES != 0 {
            let compact_refs = flags & FLAG_COMPACT_REFERENCES != 0;
            let bits_off = c.take(num_animated.div_ceil(8))?;
            if !compact_refs {
                c.pos = align4(c.pos);
            }
            references = vec![None; num_animated];
            for (a, &kind) in animated_kinds.iter().enumerate() {
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
                    reference_decode3(std::array::from_fn(|k| buf[o + k] as i8))
                } else {
                    let o = c.take(4)?;
                    reference_decode(std::array::from_fn(|k| buf[o + k] as i8))
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
        }
        let seg_header_off = c.take(num_segs * 12)?;
        for s in 0..num_segs {
            let h = seg_header_off + 12 * s;
            let (widths_off, data_off, bits) = (
                u32_at(buf, h) as usize,
                u32_at(buf, h + 4) as usize,
                u32_at(buf, h + 8) as usize,
            );
            let per_seg = if num_segs > 1 { 8 } else { 2 };
            let meta_end = widths_off.checked_add(num_animated * per_seg + num_seg_dropped);
            // Every offset inside the runtime data before anything is read through it.
            if widths_off < seg_header_off + 12 * num_segs
                || meta_end.is_none_or(|e| e > data_off)
                || data_off > runtime_size
            {
                return corrupt(format!(
                    "segment {s}: metadata offset {widths_off} out of place"
                ));
            }
            let mut sum = 0usize;
            for a in 0..num_animated {
                let w = unpack_widths(u16_at(buf, widths_off + 2 * a));
                if u16_at(buf, widths_off + 2 * a) >> 15 != 0
                    || w.iter()
                        .any(|&x| x > quant::MAX_BITS && x != quant::RAW_BITS)
                {
                    return corrupt(format!("segment {s}: bit width above {}", quant::MAX_BITS));
                }
                if version < 2 && w.contains(&quant::RAW_BITS) {
                    return corrupt(format!(
                        "segment {s}: raw float32 width in a version {version} buffer"
                    ));
                }
                sum += (w[0] + w[1] + w[2]) as usize;
                if num_segs > 1 {
                    let r = widths_off + 2 * num_animated + 6 * a;
                    for k in 0..3 {
                        if buf[r + k] as u16 + buf[r + 3 + k] as u16 > 255 {
                            return corrupt(format!("segment {s}: range outside the clip range"));
                        }
                    }
                }
            }
            let dropped_off = widths_off + num_animated * per_seg;
            let slots = &buf[dropped_off..dropped_off + num_seg_dropped];
            let max_dropped = if version >= 2 { DROPPED_NONE } else { 3 };
            if slots.iter().any(|&d| d > max_dropped) {
                return corrupt(format!(
                    "segment {s}: dropped rotation component above {max_dropped}"
                ));
            }
            sum += DROPPED_NONE_BITS * slots.iter().filter(|&&d| d == DROPPED_NONE).count();
            if sum != bits {
                return corrupt(format!(
                    "segment {s}: {bits} bits per sample, widths add up to {sum}"
                ));
            }
            let (_, seg_len) = quant::segment_span(s, num_segs, num_samples, segment_size);
            let data_bytes = (bits * seg_len).div_ceil(8);
            if data_off
                .checked_add(data_bytes + TAIL_PADDING)
                .is_none_or(|e| e > runtime_size)
            {
                return corrupt(format!(
                    "segment {s}: bit stream runs past the runtime data"
                ));
            }
            let none_tracks: Vec<usize> = (0..num_seg_dropped)
                .filter(|&k| slots[k] == DROPPED_NONE)
                .map(|k| slot_track[k])
                .collect();
            let layout = RawLayout {
                widths_off,
                data_off,
                num_animated,
                bits,
                none_tracks: &none_tracks,
            };
            Self::check_raw_values(buf, s, &layout, seg_len)?;
        }
        let precisions = flags & FLAG_BONE_PRECISIONS != 0;
        let meta = Self::read_metadata(
            buf,
            runtime_size,
            len,
            num_bones,
            num_samples,
            wrap,
            precisions,
        )?;
        let sk = &meta.skeleton;
        let mut fixed_rotations = sk.bind_rotations.clone();
        let mut fixed_translations: Vec<Vec3A> =
            sk.bind_translations.iter().map(|&v| v.into()).collect();
        let mut fixed_scales: Vec<Vec3A> = sk.bind_scales.iter().map(|&v| v.into()).collect();
        let mut animated = Vec::with_capacity(num_animated);
        let mut bone_animated = Vec::with_capacity(num_bones);
        let (mut ci, mut qi, mut slot) = (0usize, 0usize, 0u16);
        let f3 = |o: usize| [f32_at(buf, o), f32_at(buf, o + 4), f32_at(buf, o + 8)];
        let q3 = |o: usize| [u16_at(buf, o), u16_at(buf, o + 2), u16_at(buf, o + 4)];
        for b in 0..num_bones {
            let (kinds, dropped) = unpack_descriptor(buf[desc_off + b]);
            bone_animated.push((
                animated.len() as u32,
                kinds.iter().filter(|&&k| k == KIND_ANIMATED).count() as u8,
            ));
            for (kind, &k) in kinds.iter().enumerate() {
                match k {
                    KIND_CONSTANT => {
                        let v = f3(const_off + 12 * ci);
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
                            0 => fixed_rotations[b] = rebuild_rotation(v, dropped),
                            1 => fixed_translations[b] = Vec3A::from_array(v),
                            _ => fixed_scales[b] = Vec3A::from_array(v),
                        }
                    }
                    KIND_CONSTANT_Q => {
                        let q = q3(qconst_off + 6 * qi);
                        qi += 1;
                        if kind == 0 {
                            let k = q.map(|v| q16_decode(v, -QROT_RANGE, 2.0 * QROT_RANGE));
                            fixed_rotations[b] = rebuild_rotation(k, dropped);
                        } else {
                            fixed_translations[b] = Vec3A::from_array(std::array::from_fn(|c| {
                                q16_decode(
                                    q[c],
                                    f32_at(buf, qbox_off + 4 * c),
                                    f32_at(buf, qbox_off + 12 + 4 * c),
                                )
                            }));
                        }
                    }
                    KIND_ANIMATED => {
                        let per_segment = kind == 0 && dropped == DROPPED_PER_SEGMENT;
                        animated.push(AnimatedTrack {
                            bone: b as u32,
                            kind: kind as u8,
                            dropped,
                            per_segment_slot: per_segment.then_some(slot),
                        });
                        slot += per_segment as u16;
                    }
                    _ => {}
                }
            }
        }
        // Decoded values lie in [min, min + extent]: keep that inside what an importer accepts.
        for (a, (t, r)) in animated.iter().zip(&clip_ranges).enumerate() {
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
        Ok(Self {
            buf,
            num_bones,
            num_samples,
            sample_rate,
            segment_size,
            num_segments: num_segs,
            wrap,
            additive,
            desc_off,
            seg_header_off,
            num_animated,
            runtime_size,
            fixed_rotations,
            fixed_translations,
            fixed_scales,
            animated,
            clip_ranges,
            bone_animated,
            references,
            meta,
        })
    }

    /// Raw float32 components (the compressor's last resort, and the w of rotations whose
    /// segment drops nothing) must be finite, like every other stored float.
    fn check_raw_values(
        buf: &[u8],
        seg: usize,
        l: &RawLayout,
        seg_len: usize,
    ) -> Result<(), FormatError> {
        let widths = (0..l.num_animated).map(|a| unpack_widths(u16_at(buf, l.widths_off + 2 * a)));
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

    fn read_metadata(
        buf: &[u8],
        start: usize,
        end: usize,
        num_bones: usize,
        num_samples: usize,
        wrap: bool,
        precisions: bool,
    ) -> Result<Metadata, FormatError> {
        let mut c = Cursor {
            buf,
            pos: start,
            end,
        };
        let original_num_samples = c.u32()? as usize;
        if original_num_samples != num_samples + wrap as usize {
            return corrupt("metadata sample count does not match the stored samples");
        }
        let clip_name = c.str()?;
        let mut bones = Vec::with_capacity(num_bones);
        for b in 0..num_bones {
            let name = c.str()?;
            let parent = c.u16()?;
            let parent = if parent == NO_PARENT_U16 {
                None
            } else if (parent as usize) < b {
                Some(parent as usize)
            } else {
                return corrupt(format!("bone {b}: parent {parent} does not come before it"));
            };
            let mut d = BoneDesc::new(name, parent);
            d.shell_distance = c.f32()?;
            if d.shell_distance < 0.0 {
                return corrupt(format!(
                    "bone {b}: negative shell distance {}",
                    d.shell_distance
                ));
            }
            let q = Quat::from_xyzw(c.f32()?, c.f32()?, c.f32()?, c.f32()?);
            if (q.length() - 1.0).abs() > BIND_ROTATION_TOLERANCE {
                return corrupt(format!(
                    "bone {b}: bind rotation is not normalized (length {})",
                    q.length()
                ));
            }
            d.bind_rotation = q.normalize();
            d.bind_translation = Vec3::new(c.f32()?, c.f32()?, c.f32()?);
            d.bind_scale = Vec3::new(c.f32()?, c.f32()?, c.f32()?);
            bones.push(d);
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
        })
    }

    pub fn num_bones(&self) -> usize {
        self.num_bones
    }
    /// Samples stored (one fewer than the original when the clip wraps).
    pub fn num_stored_samples(&self) -> usize {
        self.num_samples
    }
    /// Samples of the original clip.
    pub fn num_samples(&self) -> usize {
        self.meta.original_num_samples
    }
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }
    pub fn duration(&self) -> f32 {
        let n = self.meta.original_num_samples;
        if n <= 1 {
            0.0
        } else {
            (n - 1) as f32 / self.sample_rate
        }
    }
    /// True when the compressor found the clip looping and dropped its last sample.
    pub fn is_wrapping(&self) -> bool {
        self.wrap
    }

    /// The clip is an additive layer in this format: 1 relative, 2 additive0, 3 additive1 (ACL's
    /// formats; `docs/FORMAT.md`); 0 for a plain clip.
    pub fn additive_format(&self) -> u8 {
        self.additive
    }
    pub fn num_segments(&self) -> usize {
        self.num_segments
    }
    pub fn num_animated_subtracks(&self) -> usize {
        self.num_animated
    }
    /// Size of the runtime data (without the names/hierarchy/bind-pose metadata).
    pub fn runtime_size(&self) -> usize {
        self.runtime_size
    }
    pub fn total_size(&self) -> usize {
        self.buf.len()
    }
    pub fn clip_name(&self) -> &str {
        &self.meta.clip_name
    }
    pub fn skeleton(&self) -> &Skeleton {
        &self.meta.skeleton
    }

    /// Kinds (default/constant/animated) of a bone's rotation, translation and scale.
    pub fn subtrack_kinds(&self, bone: usize) -> [u8; 3] {
        unpack_descriptor(self.buf[self.desc_off + bone]).0
    }

    /// Bit widths of every animated sub-track component in every segment.
    pub fn segment_widths(&self, seg: usize) -> impl Iterator<Item = [u32; 3]> + '_ {
        let off = u32_at(self.buf, self.seg_header_off + 12 * seg) as usize;
        (0..self.num_animated).map(move |a| unpack_widths(u16_at(self.buf, off + 2 * a)))
    }

    #[inline]
    fn cursor(&self, sample: usize) -> SampleCursor {
        let seg = (sample / self.segment_size).min(self.num_segments - 1);
        let h = self.seg_header_off + 12 * seg;
        let widths_off = u32_at(self.buf, h) as usize;
        let data_off = u32_at(self.buf, h + 4) as usize;
        let bits = u32_at(self.buf, h + 8) as usize;
        let in_seg = sample - seg * self.segment_size;
        let multi = self.num_segments > 1;
        SampleCursor {
            widths_off,
            ranges_off: multi.then_some(widths_off + 2 * self.num_animated),
            dropped_off: widths_off + self.num_animated * if multi { 8 } else { 2 },
            bitpos: data_off * 8 + in_seg * bits,
        }
    }

    /// Decodes the three components of animated sub-track `a` at the cursor and advances it.
    #[inline(always)]
    fn decode3(&self, cur: &mut SampleCursor, a: usize) -> [f32; 3] {
        let b = self.buf;
        let w = unpack_widths(u16_at(b, cur.widths_off + 2 * a));
        let cr = &self.clip_ranges[a];
        let mut out = [0.0f32; 3];
        for k in 0..3 {
            let (smin, sext) = match cur.ranges_off {
                Some(r) => (b[r + 6 * a + k], b[r + 6 * a + 3 + k]),
                None => (0, 255),
            };
            out[k] = if w[k] == quant::RAW_BITS {
                read_raw_f32(b, cur.bitpos)
            } else {
                let d = Dequant::new(cr[k], cr[3 + k], smin, sext, w[k]);
                let q = if w[k] == 0 {
                    0
                } else {
                    read_bits(b, cur.bitpos, w[k])
                };
                d.value(q)
            };
            cur.bitpos += w[k] as usize;
        }
        out
    }

    /// The unnormalized rotation of three decoded components with dropped component `d`; when
    /// the segment drops nothing, w is read raw at the cursor, which moves past it.
    #[inline(always)]
    fn rotation(&self, v: [f32; 3], d: u8, c: &mut SampleCursor) -> Vec4 {
        if d == DROPPED_NONE {
            let w = read_raw_f32(self.buf, c.bitpos);
            c.bitpos += DROPPED_NONE_BITS;
            Vec4::new(v[0], v[1], v[2], w)
        } else {
            rebuild_rotation_unnormalized(v, d)
        }
    }

    /// A decoded rotation of animated sub-track `a` (normalized) in the clip's space: its
    /// reference rotation applied when it has one.
    #[inline(always)]
    fn referenced(&self, a: usize, q: Vec4) -> Vec4 {
        match self.references.get(a) {
            Some(Some(r)) => Vec4::from(*r * Quat::from_vec4(q)),
            _ => q,
        }
    }

    /// Decodes animated sub-track `a` at one cursor: a normalized rotation or x,y,z (what
    /// [`Self::decode_track`] returns when both cursors are on the same sample).
    #[inline(always)]
    fn decode_exact(&self, a: usize, c: &mut SampleCursor) -> Vec4 {
        let t = self.animated[a];
        let v = self.decode3(c, a);
        if t.kind == 0 {
            let d = match t.per_segment_slot {
                Some(s) => self.buf[c.dropped_off + s as usize],
                None => t.dropped,
            };
            self.referenced(a, self.rotation(v, d, c).normalize())
        } else {
            Vec4::new(v[0], v[1], v[2], 0.0)
        }
    }

    /// Decodes animated sub-track `a` at both cursors and blends: a rotation (nlerp) or x,y,z.
    #[inline(always)]
    fn decode_track(
        &self,
        a: usize,
        c0: &mut SampleCursor,
        c1: &mut SampleCursor,
        alpha: f32,
    ) -> Vec4 {
        let t = self.animated[a];
        let v0 = self.decode3(c0, a);
        let v1 = self.decode3(c1, a);
        if t.kind == 0 {
            let (d0, d1) = match t.per_segment_slot {
                Some(s) => (
                    self.buf[c0.dropped_off + s as usize],
                    self.buf[c1.dropped_off + s as usize],
                ),
                None => (t.dropped, t.dropped),
            };
            let q0 = self.rotation(v0, d0, c0);
            let q1 = self.rotation(v1, d1, c1);
            let q1 = if q0.dot(q1) < 0.0 { -q1 } else { q1 };
            // Left-multiplying by a unit quaternion is an isometry of 4-space: blending the
            // stored values and then applying the reference equals blending referenced ones.
            self.referenced(a, q0.lerp(q1, alpha).normalize())
        } else {
            Vec4::from((
                Vec3A::from_array(v0).lerp(Vec3A::from_array(v1), alpha),
                0.0,
            ))
        }
    }

    /// (sample before, sample after, blend) for time `t`.
    #[inline]
    fn locate(&self, t: f32, looping: Looping) -> (usize, usize, f32) {
        let n = self.num_samples;
        if n <= 1 {
            return (0, 0, 0.0);
        }
        let x = t * self.sample_rate;
        let x = if x.is_finite() { x } else { 0.0 };
        match looping {
            Looping::Wrap => {
                let x = x.rem_euclid(n as f32);
                let i0 = (x as usize).min(n - 1);
                (i0, (i0 + 1) % n, (x - i0 as f32).clamp(0.0, 1.0))
            }
            Looping::Clamp => {
                // A wrapping clip's last original sample is its first stored one.
                let last = if self.wrap { n } else { n - 1 };
                let x = x.clamp(0.0, last as f32);
                let i0 = (x as usize).min(last.saturating_sub(1)).min(n - 1);
                let i1 = if i0 + 1 >= n { 0 } else { i0 + 1 };
                let i1 = if !self.wrap && i1 == 0 { n - 1 } else { i1 };
                (i0, i1, (x - i0 as f32).clamp(0.0, 1.0))
            }
        }
    }

    /// Samples every bone's local transform at time `t` seconds into `pose` (resized once if needed).
    pub fn sample_pose(&self, t: f32, looping: Looping, pose: &mut Pose) {
        let (i0, i1, alpha) = self.locate(t, looping);
        self.decode_between(i0, i1, alpha, pose);
    }

    /// Decodes stored sample `sample` exactly (no interpolation).
    pub fn decode_sample(&self, sample: usize, pose: &mut Pose) {
        let s = sample.min(self.num_samples.saturating_sub(1));
        self.decode_between(s, s, 0.0, pose);
    }

    /// Decodes at blend `alpha` between stored samples `i0` and `i1` exactly as
    /// [`Self::sample_pose`] does, without going through a time in seconds (the compressor's
    /// check between samples).
    pub fn decode_blend(&self, i0: usize, i1: usize, alpha: f32, pose: &mut Pose) {
        let last = self.num_samples.saturating_sub(1);
        self.decode_between(i0.min(last), i1.min(last), alpha, pose);
    }

    fn decode_between(&self, i0: usize, i1: usize, alpha: f32, pose: &mut Pose) {
        if pose.len() != self.num_bones {
            pose.resize(self.num_bones);
        }
        if self.num_bones == 0 {
            return;
        }
        pose.rotations.copy_from_slice(&self.fixed_rotations);
        pose.translations.copy_from_slice(&self.fixed_translations);
        pose.scales.copy_from_slice(&self.fixed_scales);
        let mut c0 = self.cursor(i0);
        let mut c1 = self.cursor(i1);
        // An exact sample (to_raw_clip, the compressor's self-check) needs one decode, not two.
        let exact = i0 == i1;
        for a in 0..self.animated.len() {
            let v = if exact {
                self.decode_exact(a, &mut c0)
            } else {
                self.decode_track(a, &mut c0, &mut c1, alpha)
            };
            let b = self.animated[a].bone as usize;
            match self.animated[a].kind {
                0 => pose.rotations[b] = Quat::from_vec4(v),
                1 => pose.translations[b] = Vec3A::from_vec4(v),
                _ => pose.scales[b] = Vec3A::from_vec4(v),
            }
        }
    }

    /// Samples one bone's local transform at time `t` seconds: (rotation, translation, scale).
    pub fn sample_bone(
        &self,
        bone: usize,
        t: f32,
        looping: Looping,
    ) -> Option<(Quat, Vec3A, Vec3A)> {
        if bone >= self.num_bones {
            return None;
        }
        let mut out = (
            self.fixed_rotations[bone],
            self.fixed_translations[bone],
            self.fixed_scales[bone],
        );
        let (first, count) = self.bone_animated[bone];
        if count == 0 {
            return Some(out);
        }
        let (i0, i1, alpha) = self.locate(t, looping);
        let (mut c0, mut c1) = (self.cursor(i0), self.cursor(i1));
        // Skip the bits of the animated sub-tracks stored before this bone's.
        for c in [&mut c0, &mut c1] {
            for a in 0..first as usize {
                let w = unpack_widths(u16_at(self.buf, c.widths_off + 2 * a));
                c.bitpos += (w[0] + w[1] + w[2]) as usize;
                if let Some(slot) = self.animated[a].per_segment_slot
                    && self.buf[c.dropped_off + slot as usize] == DROPPED_NONE
                {
                    c.bitpos += DROPPED_NONE_BITS;
                }
            }
        }
        for a in first as usize..first as usize + count as usize {
            let v = self.decode_track(a, &mut c0, &mut c1, alpha);
            match self.animated[a].kind {
                0 => out.0 = Quat::from_vec4(v),
                1 => out.1 = Vec3A::from_vec4(v),
                _ => out.2 = Vec3A::from_vec4(v),
            }
        }
        Some(out)
    }
}

/// Normalized linear interpolation, taking the shorter arc.
#[inline(always)]
pub fn nlerp(a: Quat, b: Quat, alpha: f32) -> Quat {
    let (va, vb) = (glam::Vec4::from(a), glam::Vec4::from(b));
    let vb = if va.dot(vb) < 0.0 { -vb } else { vb };
    Quat::from_vec4(va.lerp(vb, alpha).normalize())
}
