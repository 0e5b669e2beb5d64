//! Compression of a raw scalar track list into a `.cfs` buffer: every sample kept (uniform
//! sampling), each output track's components stored as exact zero, constant, or quantized over
//! their own range with the fewest bits that keep every sample within the track's precision
//! (checked in float64 on the runtime's own decoding), raw float32 as the last resort. A list whose
//! last sample equals its first, bit for bit, drops it and loops.

use super::error::{ScalarErrorStats, ScalarShapeMismatch, measure_scalar_error};
use super::{DEFAULT_SCALAR_PRECISION, RawScalarList};
use crate::runtime::scalar::{
    CODE_CONSTANT, CODE_QUANTIZED_BASE, CODE_RAW, CODE_ZERO, CRC_OFFSET, FLAG_SHARED_PRECISION,
    FLAG_WRAP, HEADER_SIZE, MAGIC, MAX_QUANTIZED_BITS, ScalarReader, VERSION, checksum, dequantize,
    write_bits,
};

/// Why a list cannot be compressed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ScalarCompressError {
    #[error("{0} output tracks: the format stores at most 65535")]
    TooManyTracks(usize),
    #[error("{0} samples: the format stores at most 4294967295")]
    TooManySamples(usize),
    #[error("track '{track}' sample {sample}: value {value} is not finite")]
    NotFinite {
        track: String,
        sample: usize,
        value: f32,
    },
    #[error("a name of {0} bytes: the format stores names up to 65535 bytes")]
    NameTooLong(usize),
    #[error("track '{0}': precision is not a number")]
    BadPrecision(String),
    #[error("output_index values must be unique and contiguous from 0 (found {0:?})")]
    BadOutputs(Vec<u32>),
    /// The buffer just written does not read (a bug: never returned as a bad `.cfs`).
    #[error("internal error: the compressed buffer does not read back: {0}")]
    ReadBack(crate::runtime::FormatError),
    /// The buffer just written reads as another shape than its list (a bug, as above).
    #[error("internal error: the compressed buffer does not read back: {0}")]
    ReadBackShape(ScalarShapeMismatch),
}

/// [`measure_scalar_error`] of a `.cfs` buffer just written (a failure is a bug).
fn measure_bytes(
    list: &RawScalarList,
    bytes: &[u8],
) -> Result<ScalarErrorStats, ScalarCompressError> {
    let reader = ScalarReader::new(bytes).map_err(ScalarCompressError::ReadBack)?;
    measure_scalar_error(list, &reader).map_err(ScalarCompressError::ReadBackShape)
}

/// A compressed list: the `.cfs` bytes and what the compressor measured on them.
#[derive(Clone, Debug)]
pub struct CompressedScalars {
    pub bytes: Vec<u8>,
    pub error: ScalarErrorStats,
    /// Index = bits per sample of a component (0 = zero/constant, 32 = raw); value = count.
    pub bit_rate_histogram: Vec<u32>,
    pub constant_components: u32,
    pub zero_components: u32,
    pub animated_components: u32,
    /// The last sample equalled the first and was dropped: the list loops.
    pub looping: bool,
}

/// How one component is stored (the compressor's choice).
enum Choice {
    Zero,
    Constant(f32),
    Quantized { min: f32, ext: f32, bits: u32 },
    Raw,
}

/// The track's precision as the compressor uses it (ACL's default when negative).
pub(crate) fn effective_precision(p: f32) -> f32 {
    if p < 0.0 { DEFAULT_SCALAR_PRECISION } else { p }
}

fn quantize(v: f32, min: f32, ext: f32, bits: u32) -> u32 {
    let steps = ((1u64 << bits) - 1) as f64;
    if ext <= 0.0 {
        return 0;
    }
    let x = ((v as f64 - min as f64) / ext as f64 * steps).round();
    x.clamp(0.0, steps) as u32
}

/// The cheapest storage of one component's samples `vals` within `precision`.
fn choose(vals: &[f32], precision: f32) -> Choice {
    if vals.iter().all(|&v| v == 0.0) {
        return Choice::Zero;
    }
    let lo = vals.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = vals.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // Between samples the error is a blend of the errors at the two samples (linear
    // interpolation), so bounding it at the samples bounds it everywhere.
    let p = precision as f64;
    // Constant: the float32 nearest the middle of the values, if it is within precision of all.
    let mid = ((lo as f64 + hi as f64) / 2.0) as f32;
    for c in [mid, lo] {
        if vals.iter().all(|&v| (v as f64 - c as f64).abs() <= p) {
            return Choice::Constant(c);
        }
    }
    let ext = hi - lo;
    if ext.is_finite() {
        for bits in 1..=MAX_QUANTIZED_BITS {
            let ok = vals.iter().all(|&v| {
                let d = dequantize(lo, ext, quantize(v, lo, ext, bits), bits);
                (d as f64 - v as f64).abs() <= p
            });
            if ok {
                return Choice::Quantized { min: lo, ext, bits };
            }
        }
    }
    Choice::Raw
}

fn push_str(out: &mut Vec<u8>, s: &str) -> Result<(), ScalarCompressError> {
    let n = u16::try_from(s.len()).map_err(|_| ScalarCompressError::NameTooLong(s.len()))?;
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

/// Compresses `list` into a `.cfs` buffer (layout in `docs/FORMAT.md`), then decodes the bytes
/// with the runtime reader and measures them against `list` in float64, at and between samples.
pub fn compress_scalar_list(
    list: &RawScalarList,
) -> Result<CompressedScalars, ScalarCompressError> {
    let w = list.width();
    let n = list.num_samples;
    let order = list.output_order();
    check_list(list, &order)?;
    // Loop: the last sample equals the first bit for bit on every output track.
    let wrap = n >= 2
        && !order.is_empty()
        && order.iter().all(|&i| {
            let v = &list.tracks[i].values;
            (0..w).all(|c| v[c].to_bits() == v[(n - 1) * w + c].to_bits())
        });
    let stored = if wrap { n - 1 } else { n };
    let precisions: Vec<f32> = order
        .iter()
        .map(|&i| effective_precision(list.tracks[i].precision))
        .collect();
    let shared = precisions
        .first()
        .is_some_and(|p| precisions.iter().all(|q| q.to_bits() == p.to_bits()));

    let mut out = Vec::with_capacity(HEADER_SIZE + order.len() * (4 + 9 * w + stored * 4 * w));
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.push(if wrap { FLAG_WRAP } else { 0 } | if shared { FLAG_SHARED_PRECISION } else { 0 });
    out.push(list.track_type.code());
    out.extend_from_slice(&(order.len() as u16).to_le_bytes());
    let stripped = (list.tracks.len() - order.len()).min(u16::MAX as usize) as u16;
    out.extend_from_slice(&stripped.to_le_bytes());
    out.extend_from_slice(&(stored as u32).to_le_bytes());
    out.extend_from_slice(&list.sample_rate.to_le_bytes());
    out.extend_from_slice(&[0; 4]); // CRC, filled last
    if shared {
        out.extend_from_slice(&precisions[0].to_le_bytes());
    }

    let (tally, streams) = push_components(&mut out, list, &order, stored, &precisions, shared);
    push_stream(&mut out, &streams);
    push_str(&mut out, &list.name)?;
    for &i in &order {
        push_str(&mut out, &list.tracks[i].name)?;
    }
    let crc = checksum(&out);
    out[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_le_bytes());

    let error = measure_bytes(list, &out)?;
    Ok(CompressedScalars {
        bytes: out,
        error,
        bit_rate_histogram: tally.hist,
        constant_components: tally.constant,
        zero_components: tally.zero,
        animated_components: tally.animated,
        looping: wrap,
    })
}

/// Refuses a list the format cannot store: outputs not `0..k` (ACL's `track_array::is_valid`),
/// too many tracks or samples, a precision or value that is not a number.
fn check_list(list: &RawScalarList, order: &[usize]) -> Result<(), ScalarCompressError> {
    let w = list.width();
    let n = list.num_samples;
    let mut outs: Vec<u32> = order
        .iter()
        .filter_map(|&i| list.tracks[i].output_index)
        .collect();
    outs.sort_unstable();
    if outs.iter().enumerate().any(|(i, &o)| o as usize != i) {
        return Err(ScalarCompressError::BadOutputs(outs));
    }
    if order.len() > u16::MAX as usize {
        return Err(ScalarCompressError::TooManyTracks(order.len()));
    }
    if n > u32::MAX as usize {
        return Err(ScalarCompressError::TooManySamples(n));
    }
    for t in &list.tracks {
        if t.precision.is_nan() {
            return Err(ScalarCompressError::BadPrecision(t.name.clone()));
        }
        if let Some(i) = t.values.iter().position(|v| !v.is_finite()) {
            return Err(ScalarCompressError::NotFinite {
                track: t.name.clone(),
                sample: i / w.max(1),
                value: t.values[i],
            });
        }
    }
    Ok(())
}

/// What [`push_components`] chose, counted for the report.
struct Tally {
    hist: Vec<u32>,
    zero: u32,
    constant: u32,
    animated: u32,
}

/// Each output track's precision (unless shared) and each component's code and range, appended
/// to `out`; returns the counts and the components whose samples go in the bit stream.
fn push_components(
    out: &mut Vec<u8>,
    list: &RawScalarList,
    order: &[usize],
    stored: usize,
    precisions: &[f32],
    shared: bool,
) -> (Tally, Vec<(Vec<f32>, Choice)>) {
    let w = list.width();
    let mut hist = vec![0u32; 33];
    let (mut zero, mut constant, mut animated) = (0, 0, 0);
    let mut streams: Vec<(Vec<f32>, Choice)> = Vec::new();
    let mut vals = Vec::with_capacity(stored);
    for (k, &i) in order.iter().enumerate() {
        if !shared {
            out.extend_from_slice(&precisions[k].to_le_bytes());
        }
        let t = &list.tracks[i];
        for c in 0..w {
            vals.clear();
            vals.extend((0..stored).map(|s| t.values[s * w + c]));
            let choice = choose(&vals, precisions[k]);
            match choice {
                Choice::Zero => {
                    out.push(CODE_ZERO);
                    zero += 1;
                    hist[0] += 1;
                }
                Choice::Constant(v) => {
                    out.push(CODE_CONSTANT);
                    out.extend_from_slice(&v.to_le_bytes());
                    constant += 1;
                    hist[0] += 1;
                }
                Choice::Quantized { min, ext, bits } => {
                    out.push(CODE_QUANTIZED_BASE + bits as u8);
                    out.extend_from_slice(&min.to_le_bytes());
                    out.extend_from_slice(&ext.to_le_bytes());
                    animated += 1;
                    hist[bits as usize] += 1;
                    streams.push((vals.clone(), choice));
                }
                Choice::Raw => {
                    out.push(CODE_RAW);
                    animated += 1;
                    hist[32] += 1;
                    streams.push((vals.clone(), choice));
                }
            }
        }
    }
    let tally = Tally {
        hist,
        zero,
        constant,
        animated,
    };
    (tally, streams)
}

/// The bit stream, component-major in the order of the codes, appended to `out`.
fn push_stream(out: &mut Vec<u8>, streams: &[(Vec<f32>, Choice)]) {
    let total_bits: usize = streams
        .iter()
        .map(|(v, c)| {
            v.len()
                * match c {
                    Choice::Quantized { bits, .. } => *bits as usize,
                    _ => 32,
                }
        })
        .sum();
    let stream_at = out.len();
    out.resize(stream_at + total_bits.div_ceil(8), 0);
    let mut pos = 0;
    for (v, c) in streams {
        for &x in v {
            match *c {
                Choice::Quantized { min, ext, bits } => {
                    write_bits(
                        &mut out[stream_at..],
                        pos,
                        bits,
                        quantize(x, min, ext, bits),
                    );
                    pos += bits as usize;
                }
                _ => {
                    write_bits(&mut out[stream_at..], pos, 32, x.to_bits());
                    pos += 32;
                }
            }
        }
    }
}
