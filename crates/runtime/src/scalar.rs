//! Runtime side of scalar track lists: the `.cfs` buffer (layout in `docs/FORMAT.md`, "Scalar
//! track lists") and [`ScalarReader`], a validated read-only view that samples every track or one
//! at any time (linear interpolation between samples). Like the `.cfa` reader it depends on
//! nothing offline; the compressor shares its constants and [`dequantize`].

use super::{FormatError, Looping};
use crate::limits::MAX_TOTAL_SAMPLES;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

pub const MAGIC: [u8; 4] = *b"CFS1";
pub const VERSION: u16 = 1;
pub const HEADER_SIZE: usize = 24;
/// Byte offset of the CRC-32 field; the checksum covers the whole buffer except these 4 bytes.
pub const CRC_OFFSET: usize = 20;

/// Header flag: the list loops and its last sample (equal to the first) is not stored.
pub const FLAG_WRAP: u8 = 1;
/// Header flag: one precision for every track, stored once before the tracks.
pub const FLAG_SHARED_PRECISION: u8 = 2;
const KNOWN_FLAGS: u8 = FLAG_WRAP | FLAG_SHARED_PRECISION;

/// Component code: exactly 0 at every sample (ACL's default value for scalars); no payload.
pub const CODE_ZERO: u8 = 0;
/// Component code: one float32 value at every sample; payload the value.
pub const CODE_CONSTANT: u8 = 1;
/// Component codes `CODE_QUANTIZED_BASE + w` for `w` in 1..=[`MAX_QUANTIZED_BITS`]: `w`-bit
/// samples over a range; payload `min`, `extent` (float32).
pub const CODE_QUANTIZED_BASE: u8 = 1;
pub const MAX_QUANTIZED_BITS: u32 = 24;
/// Component code: raw float32 bits in the stream (32 bits per sample); no payload.
pub const CODE_RAW: u8 = 33;

/// Element type of every track of a list (ACL's scalar track types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    Float1,
    Float2,
    Float3,
    Float4,
    Vector4,
}

impl ScalarType {
    /// Components per sample.
    pub fn width(self) -> usize {
        match self {
            Self::Float1 => 1,
            Self::Float2 => 2,
            Self::Float3 => 3,
            Self::Float4 | Self::Vector4 => 4,
        }
    }

    /// Bytes of one raw sample as ACL counts them (vector4f is a 16-byte SIMD vector).
    pub fn sample_bytes(self) -> usize {
        4 * self.width()
    }

    /// ACL's name of the type (`float1f` … `vector4f`).
    pub fn acl_name(self) -> &'static str {
        match self {
            Self::Float1 => "float1f",
            Self::Float2 => "float2f",
            Self::Float3 => "float3f",
            Self::Float4 => "float4f",
            Self::Vector4 => "vector4f",
        }
    }

    pub fn from_acl_name(name: &str) -> Option<Self> {
        Some(match name {
            "float1f" => Self::Float1,
            "float2f" => Self::Float2,
            "float3f" => Self::Float3,
            "float4f" => Self::Float4,
            "vector4f" => Self::Vector4,
            _ => return None,
        })
    }

    /// The type's byte in a `.cfs` header.
    pub fn code(self) -> u8 {
        match self {
            Self::Float1 => 1,
            Self::Float2 => 2,
            Self::Float3 => 3,
            Self::Float4 => 4,
            Self::Vector4 => 5,
        }
    }

    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            1 => Self::Float1,
            2 => Self::Float2,
            3 => Self::Float3,
            4 => Self::Float4,
            5 => Self::Vector4,
            _ => return None,
        })
    }
}

/// The value of quantized sample `q` of a `bits`-wide component over `[min, min + ext]`: the one
/// formula the compressor verifies and the reader decodes with.
#[inline]
pub fn dequantize(min: f32, ext: f32, q: u32, bits: u32) -> f32 {
    let steps = ((1u64 << bits) - 1) as f32;
    min + ext * (q as f32 / steps)
}

/// How one component of one track is stored.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Comp {
    Zero,
    Constant(f32),
    Quantized {
        min: f32,
        ext: f32,
        bits: u32,
        bitpos: usize,
    },
    Raw {
        bitpos: usize,
    },
}

/// A validated read-only view over a `.cfs` buffer. Construction checks sizes, the checksum,
/// every code, range and raw value, so sampling afterwards cannot read out of bounds, panic or
/// return a non-finite value.
#[derive(Clone, Debug)]
pub struct ScalarReader<'a> {
    buf: &'a [u8],
    track_type: ScalarType,
    num_tracks: usize,
    num_stripped: usize,
    /// Stored samples (the original count minus one when wrapping).
    num_samples: usize,
    wrap: bool,
    sample_rate: f32,
    precisions: Vec<f32>,
    comps: Vec<Comp>,
    name: String,
    track_names: Vec<String>,
}

fn corrupt<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError::Corrupt(msg.into()))
}

/// Bounds-checked little-endian reads over the buffer.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], FormatError> {
        let end = self.pos.checked_add(n).ok_or(FormatError::Truncated {
            needed: usize::MAX,
            len: self.buf.len(),
        })?;
        if end > self.buf.len() {
            return Err(FormatError::Truncated {
                needed: end,
                len: self.buf.len(),
            });
        }
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, FormatError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, FormatError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn f32(&mut self, what: &str) -> Result<f32, FormatError> {
        let at = self.pos;
        let b = self.take(4)?;
        let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if v.is_finite() {
            Ok(v)
        } else {
            corrupt(format!("{what} at byte {at} is not finite"))
        }
    }
    fn str(&mut self) -> Result<String, FormatError> {
        let n = self.u16()? as usize;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).or_else(|_| corrupt("a name is not UTF-8"))
    }
}

/// Reads `bits` (1..=32) bits at bit position `pos` of `buf` (LSB-first); bytes past the end
/// read as 0, so it never panics (a validated reader never reads past its stream anyway).
#[inline]
fn read_bits(buf: &[u8], pos: usize, bits: u32) -> u32 {
    let byte = pos / 8;
    let shift = (pos % 8) as u32;
    let mut word = 0u64;
    for i in 0..5 {
        word |= (*buf.get(byte + i).unwrap_or(&0) as u64) << (8 * i);
    }
    ((word >> shift) & ((1u64 << bits) - 1)) as u32
}

/// Writes `bits` bits of `value` at bit position `pos` (LSB-first) into a zeroed buffer; the
/// compressor's counterpart of [`read_bits`].
pub fn write_bits(buf: &mut [u8], pos: usize, bits: u32, value: u32) {
    for k in 0..bits as usize {
        if (value >> k) & 1 == 1 {
            let p = pos + k;
            buf[p / 8] |= 1 << (p % 8);
        }
    }
}

/// The CRC-32 of a `.cfs` buffer: every byte except the CRC field itself.
pub fn checksum(buf: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&buf[..CRC_OFFSET.min(buf.len())]);
    if buf.len() > CRC_OFFSET + 4 {
        h.update(&buf[CRC_OFFSET + 4..]);
    }
    h.finalize()
}

/// True when `buf` starts with the `.cfs` magic (for tools that accept either format).
pub fn is_scalar_buffer(buf: &[u8]) -> bool {
    buf.starts_with(&MAGIC)
}

/// The header's fields, checked against each other and the importers' cap.
struct Header {
    track_type: ScalarType,
    width: usize,
    flags: u8,
    num_tracks: usize,
    num_stripped: usize,
    num_samples: usize,
    sample_rate: f32,
    wrap: bool,
}

/// Magic, version, checksum, flags, type and counts.
fn header(buf: &[u8]) -> Result<Header, FormatError> {
    if buf.len() < HEADER_SIZE {
        return Err(FormatError::Truncated {
            needed: HEADER_SIZE,
            len: buf.len(),
        });
    }
    if buf[..4] != MAGIC {
        return Err(FormatError::BadMagic);
    }
    let version = u16::from_le_bytes([buf[4], buf[5]]);
    if version != VERSION {
        return corrupt(format!(
            "unsupported .cfs version {version} (this reader knows {VERSION})"
        ));
    }
    let stored = u32::from_le_bytes(buf[CRC_OFFSET..CRC_OFFSET + 4].try_into().unwrap());
    let computed = checksum(buf);
    if stored != computed {
        return Err(FormatError::ChecksumMismatch { stored, computed });
    }
    let flags = buf[6];
    if flags & !KNOWN_FLAGS != 0 {
        return corrupt(format!("unknown header flags {flags:#04x}"));
    }
    let Some(track_type) = ScalarType::from_code(buf[7]) else {
        return corrupt(format!("unknown track type code {}", buf[7]));
    };
    let width = track_type.width();
    let num_tracks = u16::from_le_bytes([buf[8], buf[9]]) as usize;
    let num_stripped = u16::from_le_bytes([buf[10], buf[11]]) as usize;
    let num_samples = u32::from_le_bytes(buf[12..16].try_into().unwrap()) as usize;
    let sample_rate = f32::from_le_bytes(buf[16..20].try_into().unwrap());
    if !(sample_rate.is_finite() && sample_rate > 0.0) {
        return corrupt(format!(
            "sample rate {sample_rate} is not a positive number"
        ));
    }
    let wrap = flags & FLAG_WRAP != 0;
    if wrap && num_samples == 0 {
        return corrupt("a wrapping list with no stored sample");
    }
    if num_tracks > 0 && num_samples == 0 {
        return corrupt("tracks with no samples");
    }
    if !(num_samples as f32 / sample_rate).is_finite() {
        return corrupt("infinite duration");
    }
    // Zero and constant components take no stream bytes, so the buffer's size alone does not
    // bound what decoding every sample allocates: the importers' cap does.
    let values = (num_tracks * width).saturating_mul(num_samples + 1);
    if values > MAX_TOTAL_SAMPLES {
        return corrupt(format!(
            "{num_tracks} tracks x {} samples x {width} components is more than the {MAX_TOTAL_SAMPLES} values supported",
            num_samples + wrap as usize
        ));
    }
    // Each track needs at least one code byte per component: bounds the tables below by the
    // buffer's size before anything is allocated.
    if num_tracks * width > buf.len() {
        return Err(FormatError::Truncated {
            needed: num_tracks * width,
            len: buf.len(),
        });
    }
    Ok(Header {
        track_type,
        width,
        flags,
        num_tracks,
        num_stripped,
        num_samples,
        sample_rate,
        wrap,
    })
}

/// The track table: per track its precision (or the shared one), per component its code and
/// what follows it. Bit positions are relative to the stream; returns the stream's bit count.
fn track_table(cur: &mut Cursor, h: &Header) -> Result<(Vec<f32>, Vec<Comp>, usize), FormatError> {
    let shared = if h.flags & FLAG_SHARED_PRECISION != 0 {
        Some(cur.f32("the shared precision")?)
    } else {
        None
    };
    let mut precisions = Vec::with_capacity(h.num_tracks);
    let mut comps = Vec::with_capacity(h.num_tracks * h.width);
    let mut stream_bits: usize = 0;
    for t in 0..h.num_tracks {
        let p = match shared {
            Some(p) => p,
            None => cur.f32("a track precision")?,
        };
        if p < 0.0 {
            return corrupt(format!("track {t}: negative precision {p}"));
        }
        precisions.push(p);
        for c in 0..h.width {
            comps.push(component(cur, h.num_samples, (t, c), &mut stream_bits)?);
        }
    }
    Ok((precisions, comps, stream_bits))
}

/// Component `c` of track `t`: its code and constant or range; a stored one takes its place in
/// the stream at `stream_bits`, which moves past its `num_samples` samples.
fn component(
    cur: &mut Cursor,
    num_samples: usize,
    (t, c): (usize, usize),
    stream_bits: &mut usize,
) -> Result<Comp, FormatError> {
    let len = cur.buf.len();
    let bits_per_component = |bits: u32| -> Result<usize, FormatError> {
        (bits as usize)
            .checked_mul(num_samples)
            .ok_or(FormatError::Truncated {
                needed: usize::MAX,
                len,
            })
    };
    let code = cur.u8()?;
    Ok(match code {
        CODE_ZERO => Comp::Zero,
        CODE_CONSTANT => Comp::Constant(cur.f32("a constant")?),
        CODE_RAW => {
            let bitpos = *stream_bits;
            *stream_bits = stream_bits.saturating_add(bits_per_component(32)?);
            Comp::Raw { bitpos }
        }
        q if q > CODE_QUANTIZED_BASE
            && ((q - CODE_QUANTIZED_BASE) as u32) <= MAX_QUANTIZED_BITS =>
        {
            let bits = (q - CODE_QUANTIZED_BASE) as u32;
            let min = cur.f32("a range minimum")?;
            let ext = cur.f32("a range extent")?;
            if ext < 0.0 || (min as f64 + ext as f64).abs() > f32::MAX as f64 {
                return corrupt(format!(
                    "track {t} component {c}: bad range min {min} extent {ext}"
                ));
            }
            let bitpos = *stream_bits;
            *stream_bits = stream_bits.saturating_add(bits_per_component(bits)?);
            Comp::Quantized {
                min,
                ext,
                bits,
                bitpos,
            }
        }
        other => {
            return corrupt(format!(
                "track {t} component {c}: unknown component code {other}"
            ));
        }
    })
}

/// Rebases the components' bit positions from the stream (at byte `stream_at`) onto the whole
/// buffer; raw samples must be finite.
fn rebase_and_check_raw(
    comps: &mut [Comp],
    stream: &[u8],
    stream_at: usize,
    num_samples: usize,
) -> Result<(), FormatError> {
    for comp in comps {
        match comp {
            Comp::Quantized { bitpos, .. } => *bitpos += stream_at * 8,
            Comp::Raw { bitpos } => {
                for s in 0..num_samples {
                    let v = f32::from_bits(read_bits(stream, *bitpos + 32 * s, 32));
                    if !v.is_finite() {
                        return corrupt(format!("raw sample {s} is not finite"));
                    }
                }
                *bitpos += stream_at * 8;
            }
            _ => {}
        }
    }
    Ok(())
}

impl<'a> ScalarReader<'a> {
    /// Validates `buf` completely (see `docs/FORMAT.md` for every rule): the header, the track
    /// table, the stream's extent, the names, then the raw samples.
    pub fn new(buf: &'a [u8]) -> Result<Self, FormatError> {
        let h = header(buf)?;
        let mut cur = Cursor {
            buf,
            pos: HEADER_SIZE,
        };
        let (precisions, mut comps, stream_bits) = track_table(&mut cur, &h)?;
        let stream_bytes = stream_bits.div_ceil(8);
        let stream_at = cur.pos;
        cur.take(stream_bytes)?;
        let stream = &buf[stream_at..stream_at + stream_bytes];
        let name = cur.str()?;
        let mut track_names = Vec::with_capacity(h.num_tracks);
        for _ in 0..h.num_tracks {
            track_names.push(cur.str()?);
        }
        if cur.pos != buf.len() {
            return corrupt(format!(
                "{} unexpected bytes after the names",
                buf.len() - cur.pos
            ));
        }
        rebase_and_check_raw(&mut comps, stream, stream_at, h.num_samples)?;
        Ok(Self {
            buf,
            track_type: h.track_type,
            num_tracks: h.num_tracks,
            num_stripped: h.num_stripped,
            num_samples: h.num_samples,
            wrap: h.wrap,
            sample_rate: h.sample_rate,
            precisions,
            comps,
            name,
            track_names,
        })
    }

    pub fn track_type(&self) -> ScalarType {
        self.track_type
    }
    /// Output tracks (the ones stored), in output order.
    pub fn num_tracks(&self) -> usize {
        self.num_tracks
    }
    /// Tracks of the source list stripped from the output (not stored).
    pub fn num_stripped(&self) -> usize {
        self.num_stripped
    }
    /// Samples of the source list (the stored ones plus the dropped last one when wrapping).
    pub fn num_samples(&self) -> usize {
        self.num_samples + self.wrap as usize
    }
    pub fn num_stored_samples(&self) -> usize {
        self.num_samples
    }
    pub fn is_wrapping(&self) -> bool {
        self.wrap
    }
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }
    pub fn duration(&self) -> f32 {
        let n = self.num_samples();
        if n <= 1 {
            0.0
        } else {
            (n - 1) as f32 / self.sample_rate
        }
    }
    pub fn list_name(&self) -> &str {
        &self.name
    }
    pub fn track_name(&self, track: usize) -> &str {
        self.track_names.get(track).map_or("", String::as_str)
    }
    pub fn precision(&self, track: usize) -> f32 {
        self.precisions.get(track).copied().unwrap_or(0.0)
    }
    pub fn total_size(&self) -> usize {
        self.buf.len()
    }

    /// Bits per sample of component `c` of `track` in the stream (0 for zero and constant
    /// components, 32 for raw ones).
    pub fn component_bits(&self, track: usize, c: usize) -> u32 {
        match self.comps.get(track * self.track_type.width() + c) {
            Some(Comp::Quantized { bits, .. }) => *bits,
            Some(Comp::Raw { .. }) => 32,
            _ => 0,
        }
    }

    #[inline]
    fn component(&self, comp: Comp, stored_sample: usize) -> f32 {
        match comp {
            Comp::Zero => 0.0,
            Comp::Constant(v) => v,
            Comp::Quantized {
                min,
                ext,
                bits,
                bitpos,
            } => dequantize(
                min,
                ext,
                read_bits(self.buf, bitpos + bits as usize * stored_sample, bits),
                bits,
            ),
            Comp::Raw { bitpos } => {
                f32::from_bits(read_bits(self.buf, bitpos + 32 * stored_sample, 32))
            }
        }
    }

    /// The stored sample of original sample index `sample` (a wrapping list's last sample is
    /// its first); indices past the end clamp to the last sample.
    #[inline]
    fn stored(&self, sample: usize) -> usize {
        if sample >= self.num_samples {
            if self.wrap {
                0
            } else {
                self.num_samples.saturating_sub(1)
            }
        } else {
            sample
        }
    }

    /// The exact values of `track` at original sample `sample` into `out[..width]` (nothing for
    /// an unknown track).
    pub fn decode_sample(&self, track: usize, sample: usize, out: &mut [f32; 4]) {
        *out = [0.0; 4];
        if track >= self.num_tracks || self.num_samples == 0 {
            return;
        }
        let w = self.track_type.width();
        let s = self.stored(sample);
        for (c, o) in out.iter_mut().enumerate().take(w) {
            *o = self.component(self.comps[track * w + c], s);
        }
    }

    /// (sample before, sample after, blend) in original sample indices for time `t`.
    #[inline]
    fn locate(&self, t: f32, looping: Looping) -> (usize, usize, f32) {
        let n = self.num_samples();
        if n <= 1 {
            return (0, 0, 0.0);
        }
        let x = t * self.sample_rate;
        let x = if x.is_finite() { x } else { 0.0 };
        match looping {
            Looping::Wrap => {
                // The loop is the stored samples; the interval after the last one goes back to
                // the first (for a wrapping list that is the dropped last sample).
                let s = self.num_samples;
                let x = crate::fmath::rem_euclid(x, s as f32);
                let i0 = (x as usize).min(s - 1);
                (i0, (i0 + 1) % s, (x - i0 as f32).clamp(0.0, 1.0))
            }
            Looping::Clamp => {
                let last = (n - 1) as f32;
                let x = x.clamp(0.0, last);
                let i0 = (x as usize).min(n - 2);
                (i0, i0 + 1, (x - i0 as f32).clamp(0.0, 1.0))
            }
        }
    }

    /// Samples `track` at `t` seconds into `out[..width]` (linear interpolation between the two
    /// nearest samples; the rest of `out` is zeroed). An unknown track gives zeros.
    pub fn sample_track(&self, track: usize, t: f32, looping: Looping, out: &mut [f32; 4]) {
        let (i0, i1, a) = self.locate(t, looping);
        let mut v0 = [0.0; 4];
        let mut v1 = [0.0; 4];
        self.decode_sample(track, i0, &mut v0);
        if a == 0.0 {
            *out = v0;
            return;
        }
        self.decode_sample(track, i1, &mut v1);
        // In float64: two finite samples of opposite sign near f32::MAX have a difference that
        // overflows float32 (inf, then NaN), which the fuzzer found; the float64 blend stays
        // between them, so it converts back to a finite float32.
        for k in 0..4 {
            let (x0, x1) = (v0[k] as f64, v1[k] as f64);
            out[k] = (x0 + (x1 - x0) * a as f64) as f32;
        }
    }

    /// Samples every track at `t` seconds into `out` (resized to `num_tracks × width` once,
    /// track-major: track `i`'s components at `i × width ..`).
    pub fn sample_all(&self, t: f32, looping: Looping, out: &mut Vec<f32>) {
        let w = self.track_type.width();
        out.resize(self.num_tracks * w, 0.0);
        let mut v = [0.0; 4];
        for track in 0..self.num_tracks {
            self.sample_track(track, t, looping, &mut v);
            out[track * w..(track + 1) * w].copy_from_slice(&v[..w]);
        }
    }

    /// Samples every track at `t` seconds into the caller's `out` (at least `num_tracks ×
    /// width` floats, track-major as [`Self::sample_all`]); never allocates.
    pub fn sample_all_into(
        &self,
        t: f32,
        looping: Looping,
        out: &mut [f32],
    ) -> Result<(), crate::SampleError> {
        let w = self.track_type.width();
        let need = self.num_tracks * w;
        if out.len() < need {
            return Err(crate::SampleError::OutputSize {
                expected: need,
                got: out.len(),
            });
        }
        let mut v = [0.0; 4];
        for track in 0..self.num_tracks {
            self.sample_track(track, t, looping, &mut v);
            out[track * w..(track + 1) * w].copy_from_slice(&v[..w]);
        }
        Ok(())
    }

    /// Samples the tracks listed in `tracks` (any order, repeats allowed) at `t` seconds:
    /// entry `i`'s components go to `out[i × width ..]`. Fails, before writing anything, on an
    /// index that is not a track or an `out` shorter than `tracks.len() × width`.
    pub fn sample_tracks(
        &self,
        tracks: &[u32],
        t: f32,
        looping: Looping,
        out: &mut [f32],
    ) -> Result<(), crate::SampleError> {
        let w = self.track_type.width();
        if let Some(&k) = tracks.iter().find(|&&k| k as usize >= self.num_tracks) {
            return Err(crate::SampleError::NoSuchTrack {
                track: k,
                num_tracks: self.num_tracks,
            });
        }
        if out.len() < tracks.len() * w {
            return Err(crate::SampleError::OutputSize {
                expected: tracks.len() * w,
                got: out.len(),
            });
        }
        let mut v = [0.0; 4];
        for (i, &k) in tracks.iter().enumerate() {
            self.sample_track(k as usize, t, looping, &mut v);
            out[i * w..(i + 1) * w].copy_from_slice(&v[..w]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn bits_round_trip_at_any_position() {
        let mut buf = vec![0u8; 16];
        write_bits(&mut buf, 3, 17, 0x1_5A5A);
        write_bits(&mut buf, 20, 32, 0xDEAD_BEEF);
        assert_eq!(read_bits(&buf, 3, 17), 0x1_5A5A);
        assert_eq!(read_bits(&buf, 20, 32), 0xDEAD_BEEF);
    }

    #[test]
    fn dequantize_spans_the_range() {
        assert_eq!(dequantize(-1.0, 2.0, 0, 8), -1.0);
        assert_eq!(dequantize(-1.0, 2.0, 255, 8), 1.0);
    }

    #[test]
    fn short_and_foreign_buffers_are_refused() {
        assert!(matches!(
            ScalarReader::new(b"CFS1"),
            Err(FormatError::Truncated { .. })
        ));
        assert!(matches!(
            ScalarReader::new(&[0u8; 64]),
            Err(FormatError::BadMagic)
        ));
    }
}
