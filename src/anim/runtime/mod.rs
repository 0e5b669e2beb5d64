//! Runtime side: a validated, read-only view over a compressed `.cfa` buffer; full-pose and
//! single-bone sampling at any time (linear interpolation, nlerp for rotations) with no
//! allocation; and conversion back to a raw clip. Layout: `docs/FORMAT.md`.

pub mod format;
pub mod quant;

use super::clip::RawClip;
use super::pose::Pose;
use super::skeleton::{BoneDesc, Skeleton};
use format::*;
use glam::{Quat, Vec3, Vec3A};
use quant::{Dequant, num_segments, rebuild_rotation};
use std::fmt;

/// How time outside `[0, duration]` is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Looping {
    /// Time is clamped to the clip.
    #[default]
    Clamp,
    /// Time wraps; the last sample interpolates towards the first.
    Wrap,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FormatError {
    Truncated { needed: usize, len: usize },
    BadMagic,
    UnsupportedVersion(u16),
    ChecksumMismatch { stored: u32, computed: u32 },
    Corrupt(String),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Truncated { needed, len } => {
                write!(f, "buffer truncated: needs {needed} bytes, has {len}")
            }
            FormatError::BadMagic => write!(f, "not a ClipForge .cfa buffer (bad magic)"),
            FormatError::UnsupportedVersion(v) => write!(f, "unsupported .cfa version {v}"),
            FormatError::ChecksumMismatch { stored, computed } => {
                write!(
                    f,
                    "checksum mismatch (stored {stored:08x}, computed {computed:08x}): the buffer is corrupt"
                )
            }
            FormatError::Corrupt(s) => write!(f, "corrupt buffer: {s}"),
        }
    }
}

impl std::error::Error for FormatError {}

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
pub struct ClipReader<'a> {
    buf: &'a [u8],
    num_bones: usize,
    num_samples: usize,
    sample_rate: f32,
    segment_size: usize,
    num_segments: usize,
    wrap: bool,
    desc_off: usize,
    const_off: usize,
    clip_range_off: usize,
    seg_header_off: usize,
    num_animated: usize,
    runtime_size: usize,
    qbox_off: usize,
    qconst_off: usize,
    /// Index of each bone's first constant, 16-bit constant and animated sub-track (single-bone path).
    bone_first: Vec<[u32; 3]>,
    bind_rotations: Vec<Quat>,
    bind_translations: Vec<Vec3A>,
    bind_scales: Vec<Vec3A>,
    meta: Metadata,
}

/// Where one sample's data lives: its segment's widths, ranges and the bit position.
#[derive(Clone, Copy)]
struct SampleCursor {
    widths_off: usize,
    ranges_off: Option<usize>,
    bitpos: usize,
}

impl<'a> ClipReader<'a> {
    /// Validates `buf` completely and returns a view over it.
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
        if version != VERSION {
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
        if segment_size == 0 {
            return corrupt("segment size is 0");
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
        let mut bone_first = Vec::with_capacity(num_bones);
        for b in 0..num_bones {
            bone_first.push([
                counted_constant as u32,
                counted_q as u32,
                counted_animated as u32,
            ]);
            let (kinds, _) = unpack_descriptor(buf[desc_off + b]);
            for (i, k) in kinds.into_iter().enumerate() {
                match k {
                    KIND_DEFAULT => {}
                    KIND_CONSTANT => counted_constant += 1,
                    KIND_ANIMATED => counted_animated += 1,
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
        for i in 0..(if counted_qtrans > 0 { 6 } else { 0 }) {
            let v = f32_at(buf, qbox_off + 4 * i);
            if !v.is_finite() || (i >= 3 && v < 0.0) {
                return corrupt("constant translation box is invalid");
            }
        }
        let qconst_off = c.take(num_qconstant * 6)?;
        c.pos = align4(c.pos);
        let clip_range_off = c.take(
            num_animated
                .checked_mul(24)
                .ok_or(FormatError::Corrupt("too many tracks".into()))?,
        )?;
        for i in 0..num_animated * 6 {
            let v = f32_at(buf, clip_range_off + 4 * i);
            if !v.is_finite() || (i % 6 >= 3 && v < 0.0) {
                return corrupt(format!(
                    "clip range of animated sub-track {} is invalid",
                    i / 6
                ));
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
            let meta_end = widths_off.checked_add(num_animated * per_seg);
            if widths_off < seg_header_off + 12 * num_segs || meta_end.is_none_or(|e| e > data_off)
            {
                return corrupt(format!(
                    "segment {s}: metadata offset {widths_off} out of place"
                ));
            }
            let mut sum = 0usize;
            for a in 0..num_animated {
                let w = unpack_widths(u16_at(buf, widths_off + 2 * a));
                if u16_at(buf, widths_off + 2 * a) >> 15 != 0
                    || w.iter().any(|&x| x > quant::MAX_BITS)
                {
                    return corrupt(format!("segment {s}: bit width above {}", quant::MAX_BITS));
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
        }
        let meta = Self::read_metadata(buf, runtime_size, len, num_bones, num_samples, wrap)?;
        let sk = &meta.skeleton;
        Ok(Self {
            buf,
            num_bones,
            num_samples,
            sample_rate,
            segment_size,
            num_segments: num_segs,
            wrap,
            desc_off,
            const_off,
            clip_range_off,
            seg_header_off,
            num_animated,
            runtime_size,
            qbox_off,
            qconst_off,
            bone_first,
            bind_rotations: sk.bind_rotations.clone(),
            bind_translations: sk.bind_translations.iter().map(|&v| v.into()).collect(),
            bind_scales: sk.bind_scales.iter().map(|&v| v.into()).collect(),
            meta,
        })
    }

    fn read_metadata(
        buf: &[u8],
        start: usize,
        end: usize,
        num_bones: usize,
        num_samples: usize,
        wrap: bool,
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
            let q = Quat::from_xyzw(c.f32()?, c.f32()?, c.f32()?, c.f32()?);
            if q.length() < 1e-3 {
                return corrupt(format!("bone {b}: bind rotation has zero length"));
            }
            d.bind_rotation = q.normalize();
            d.bind_translation = Vec3::new(c.f32()?, c.f32()?, c.f32()?);
            d.bind_scale = Vec3::new(c.f32()?, c.f32()?, c.f32()?);
            bones.push(d);
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
        SampleCursor {
            widths_off,
            ranges_off: (self.num_segments > 1).then_some(widths_off + 2 * self.num_animated),
            bitpos: data_off * 8 + in_seg * bits,
        }
    }

    /// Decodes the three components of animated sub-track `a` at the cursor and advances it.
    #[inline(always)]
    fn decode3(&self, cur: &mut SampleCursor, a: usize) -> [f32; 3] {
        let b = self.buf;
        let w = unpack_widths(u16_at(b, cur.widths_off + 2 * a));
        let cr = self.clip_range_off + 24 * a;
        let mut out = [0.0f32; 3];
        for k in 0..3 {
            let (smin, sext) = match cur.ranges_off {
                Some(r) => (b[r + 6 * a + k], b[r + 6 * a + 3 + k]),
                None => (0, 255),
            };
            let d = Dequant::new(
                f32_at(b, cr + 4 * k),
                f32_at(b, cr + 12 + 4 * k),
                smin,
                sext,
                w[k],
            );
            let q = if w[k] == 0 {
                0
            } else {
                read_bits(b, cur.bitpos, w[k])
            };
            cur.bitpos += w[k] as usize;
            out[k] = d.value(q);
        }
        out
    }

    #[inline(always)]
    fn constant3(&self, index: usize) -> [f32; 3] {
        let o = self.const_off + 12 * index;
        [
            f32_at(self.buf, o),
            f32_at(self.buf, o + 4),
            f32_at(self.buf, o + 8),
        ]
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

    fn decode_between(&self, i0: usize, i1: usize, alpha: f32, pose: &mut Pose) {
        if pose.len() != self.num_bones {
            pose.resize(self.num_bones);
        }
        if self.num_bones == 0 {
            return;
        }
        let mut c0 = self.cursor(i0);
        let mut c1 = self.cursor(i1);
        let mut idx = [0usize; 3];
        for b in 0..self.num_bones {
            let (r, t, sc) = self.decode_bone(b, &mut idx, &mut c0, &mut c1, alpha);
            pose.rotations[b] = r;
            pose.translations[b] = t;
            pose.scales[b] = sc;
        }
    }

    /// Decodes bone `b` at two cursors and blends. `idx` holds the next constant, 16-bit constant
    /// and animated sub-track indices, advanced past this bone's.
    #[inline(always)]
    fn decode_bone(
        &self,
        b: usize,
        idx: &mut [usize; 3],
        c0: &mut SampleCursor,
        c1: &mut SampleCursor,
        alpha: f32,
    ) -> (Quat, Vec3A, Vec3A) {
        let (kinds, dropped) = unpack_descriptor(self.buf[self.desc_off + b]);
        let rot = match kinds[0] {
            KIND_CONSTANT => {
                idx[0] += 1;
                rebuild_rotation(self.constant3(idx[0] - 1), dropped)
            }
            KIND_CONSTANT_Q => {
                idx[1] += 1;
                let q = self.qconstant3(idx[1] - 1);
                let k = q.map(|v| q16_decode(v, -QROT_RANGE, 2.0 * QROT_RANGE));
                rebuild_rotation(k, dropped)
            }
            KIND_ANIMATED => {
                let q0 = rebuild_rotation(self.decode3(c0, idx[2]), dropped);
                let q1 = rebuild_rotation(self.decode3(c1, idx[2]), dropped);
                idx[2] += 1;
                nlerp(q0, q1, alpha)
            }
            _ => self.bind_rotations[b],
        };
        let mut vec3 = |kind: u8, default: Vec3A| match kind {
            KIND_CONSTANT => {
                idx[0] += 1;
                Vec3A::from_array(self.constant3(idx[0] - 1))
            }
            KIND_CONSTANT_Q => {
                idx[1] += 1;
                let q = self.qconstant3(idx[1] - 1);
                let bx = self.qbox_off;
                Vec3A::from_array(std::array::from_fn(|c| {
                    q16_decode(
                        q[c],
                        f32_at(self.buf, bx + 4 * c),
                        f32_at(self.buf, bx + 12 + 4 * c),
                    )
                }))
            }
            KIND_ANIMATED => {
                let v0 = Vec3A::from_array(self.decode3(c0, idx[2]));
                let v1 = Vec3A::from_array(self.decode3(c1, idx[2]));
                idx[2] += 1;
                v0.lerp(v1, alpha)
            }
            _ => default,
        };
        let tr = vec3(kinds[1], self.bind_translations[b]);
        let sc = vec3(kinds[2], self.bind_scales[b]);
        (rot, tr, sc)
    }

    #[inline(always)]
    fn qconstant3(&self, index: usize) -> [u16; 3] {
        let o = self.qconst_off + 6 * index;
        [
            u16_at(self.buf, o),
            u16_at(self.buf, o + 2),
            u16_at(self.buf, o + 4),
        ]
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
        let (i0, i1, alpha) = self.locate(t, looping);
        let first = self.bone_first[bone];
        let mut idx = [first[0] as usize, first[1] as usize, first[2] as usize];
        let (mut c0, mut c1) = (self.cursor(i0), self.cursor(i1));
        // Skip the bits of the animated sub-tracks stored before this bone's.
        for c in [&mut c0, &mut c1] {
            for a in 0..idx[2] {
                let w = unpack_widths(u16_at(self.buf, c.widths_off + 2 * a));
                c.bitpos += (w[0] + w[1] + w[2]) as usize;
            }
        }
        Some(self.decode_bone(bone, &mut idx, &mut c0, &mut c1, alpha))
    }

    /// Every original sample decoded back into a raw clip, with the stored names, hierarchy and bind pose.
    pub fn to_raw_clip(&self) -> RawClip {
        let nb = self.num_bones;
        let n = self.meta.original_num_samples;
        let mut rotations = vec![Quat::IDENTITY; nb * n];
        let mut translations = vec![Vec3::ZERO; nb * n];
        let mut scales = vec![Vec3::ONE; nb * n];
        let mut pose = Pose::new(nb);
        for s in 0..n {
            // A wrapping clip's dropped last sample is its first.
            self.decode_sample(if s >= self.num_samples { 0 } else { s }, &mut pose);
            for b in 0..nb {
                rotations[b * n + s] = pose.rotations[b];
                translations[b * n + s] = pose.translations[b].into();
                scales[b * n + s] = pose.scales[b].into();
            }
        }
        RawClip::new(
            self.meta.clip_name.clone(),
            self.meta.skeleton.clone(),
            self.sample_rate,
            n,
            rotations,
            translations,
            scales,
        )
        .unwrap_or_else(|_| {
            // Validation bounds every stored float, so decoded values are finite; this is unreachable
            // in practice, but a hostile buffer must never panic: fall back to the bind pose.
            let sk = &self.meta.skeleton;
            RawClip {
                name: self.meta.clip_name.clone(),
                skeleton: sk.clone(),
                sample_rate: self.sample_rate,
                num_samples: n,
                rotations: (0..nb * n)
                    .map(|i| sk.bind_rotations[i / n.max(1)])
                    .collect(),
                translations: (0..nb * n)
                    .map(|i| sk.bind_translations[i / n.max(1)])
                    .collect(),
                scales: (0..nb * n).map(|i| sk.bind_scales[i / n.max(1)]).collect(),
            }
        })
    }
}

/// Normalized linear interpolation, taking the shorter arc.
#[inline(always)]
pub fn nlerp(a: Quat, b: Quat, alpha: f32) -> Quat {
    let (va, vb) = (glam::Vec4::from(a), glam::Vec4::from(b));
    let vb = if va.dot(vb) < 0.0 { -vb } else { vb };
    Quat::from_vec4(va.lerp(vb, alpha).normalize())
}
