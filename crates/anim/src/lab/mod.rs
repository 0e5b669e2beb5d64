//! The codec lab (issue 16): three codec families measured side by side on the same clips under
//! the same error guarantee (the project's object-space metric, float64, at every sample and
//! every midpoint between samples): ClipForge's uniform codec as it is, linear key reduction per
//! sub-track in UE4's unsorted layout ([`unsorted`]) and the same keys as a sorted key stream in
//! BitSquid's manner ([`sorted`]). For each: compressed bytes, max error, bytes and cache lines
//! the decoder touches per full pose (counted by the decoders, [`probe`]), the per-instance
//! context's size and decode time per pose for four access patterns. No UI; the CLI is `pipeline::lab`.

pub mod keys;
pub mod probe;
pub mod sorted;
pub mod uniform;
pub mod unsorted;

use crate::clip::RawClip;
use crate::compress::{self, CompressionSettings};
use crate::pose::Pose;
use crate::runtime::{ClipReader, Looping};
use probe::{Counter, NoProbe};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Codec names, as the JSON spells them.
pub const UNIFORM: &str = "uniform";
pub const KEY_REDUCTION: &str = "key_reduction";
pub const SORTED_STREAM: &str = "sorted_stream";

/// Float32 rounding of the input moves the float64 measurement by up to ~3e-5 cm (the
/// compressor's own margin), so the key reduction aims that much below the threshold.
const INPUT_ROUNDING_MARGIN: f32 = 3.0e-5;

/// Decode time per pose, in nanoseconds, for each access pattern.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DecodeNs {
    pub forward_30hz: f64,
    pub forward_60hz: f64,
    pub backward: f64,
    pub random: f64,
}

/// One codec's figures on one clip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CodecResult {
    pub codec: String,
    /// Compressed size: the runtime data (no names or metadata).
    pub bytes: usize,
    /// Max object-space error, float64, at every sample and every midpoint between samples.
    pub max_error_cm: f64,
    /// Mean distinct bytes read per full-pose decode over a forward playback at 30 Hz.
    pub bytes_touched_per_pose: f64,
    /// Mean distinct 64-byte cache lines read per full-pose decode, same playback.
    pub cache_lines_per_pose: f64,
    /// Per-instance playback state.
    pub context_bytes: usize,
    pub decode_ns: DecodeNs,
    /// Keys stored (every stored sample of every animated sub-track for the uniform codec).
    pub keys: usize,
}

/// Every codec's figures on one clip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClipLab {
    pub clip: String,
    pub path: String,
    pub bones: usize,
    pub samples: usize,
    pub threshold_cm: f32,
    pub codecs: Vec<CodecResult>,
}

/// A codec's reconstruction at every sample, for `--export-lossy`.
pub struct Lossy {
    pub codec: &'static str,
    pub clip: RawClip,
}

/// What [`run_clip`] measures, with or without timings.
#[derive(Clone, Copy, Debug)]
pub struct LabOptions {
    pub settings_threshold: f32,
    pub shell_distance: Option<f32>,
    /// Measure decode times (off in tests: speed belongs to benchmarks).
    pub timings: bool,
}

impl Default for LabOptions {
    fn default() -> Self {
        Self {
            settings_threshold: crate::DEFAULT_ERROR_THRESHOLD_CM,
            shell_distance: None,
            timings: true,
        }
    }
}

/// The lab codecs' decoders over one key set, for [`keys::reduce_clip`]: the reconstruction at
/// every sample and at every midpoint, through the unsorted decoder.
pub fn decode_key_set(clip: &RawClip, ks: &keys::KeySet) -> (RawClip, RawClip) {
    let u = unsorted::Unsorted::encode(ks);
    let at = keys::clip_from_poses(clip, clip.num_samples, |s, p| {
        u.decode(s as f32, p, &mut NoProbe)
    });
    let mid = keys::clip_from_poses(clip, clip.num_samples.saturating_sub(1), |s, p| {
        u.decode(s as f32 + 0.5, p, &mut NoProbe)
    });
    (at, mid)
}

/// Sample times (in samples) of each access pattern over a clip of `n` samples at `rate` Hz.
pub fn pattern_times(n: usize, rate: f32) -> [Vec<f32>; 4] {
    let last = n.saturating_sub(1) as f32;
    // A hostile sample rate (1e-30 Hz) would ask for billions of poses: at most 4 per sample.
    let cap = 4 * n + 64;
    let forward = |hz: f32| {
        let step = (rate / hz).max(last / cap as f32);
        let count = if step > 0.0 {
            ((last / step).floor() as usize + 1).min(cap)
        } else {
            1
        };
        (0..count).map(|i| i as f32 * step).collect::<Vec<_>>()
    };
    let f30 = forward(30.0);
    let f60 = forward(60.0);
    let backward: Vec<f32> = f30.iter().rev().copied().collect();
    // Deterministic pseudo-random seeks (SplitMix64).
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ n as u64;
    let random = (0..f30.len().max(64))
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 * last
        })
        .collect();
    [f30, f60, backward, random]
}

/// Ns per pose of `decode` over `times`: the fastest of three runs of at least 2 ms each (warm:
/// the clip was decoded just before; the fastest run is the one least disturbed by other work
/// on the machine).
fn time_per_pose(times: &[f32], mut decode: impl FnMut(f32)) -> f64 {
    if times.is_empty() {
        return 0.0;
    }
    for &t in times {
        decode(t);
    }
    let mut best = f64::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        let mut poses = 0u64;
        while start.elapsed().as_secs_f64() < 2e-3 {
            for &t in times {
                decode(t);
            }
            poses += times.len() as u64;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / poses as f64);
    }
    best
}

fn decode_ns(times: &[Vec<f32>; 4], timings: bool, mut decode: impl FnMut(f32)) -> DecodeNs {
    if !timings {
        return DecodeNs::default();
    }
    let mut t = [0.0; 4];
    for (i, ts) in times.iter().enumerate() {
        t[i] = time_per_pose(ts, &mut decode);
    }
    DecodeNs {
        forward_30hz: t[0],
        forward_60hz: t[1],
        backward: t[2],
        random: t[3],
    }
}

/// Why the lab cannot run on a clip.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LabError {
    /// Longer than the key layouts' 16-bit key times reach.
    #[error("{0} samples: the lab's key layouts store 16-bit key times (at most 65535 samples)")]
    TooManySamples(usize),
    /// The uniform codec (the compressor) refused the clip.
    #[error(transparent)]
    Compress(#[from] compress::CompressError),
    /// The uniform codec's output does not read back (a bug).
    #[error("uniform codec: {0}")]
    Uniform(crate::runtime::FormatError),
    /// The sorted stream's 16-bit counts cannot hold the key set.
    #[error("sorted stream: more than 65535 sub-tracks or samples")]
    SortedTooLarge,
    /// A codec's reconstruction cannot be measured against the clip.
    #[error(transparent)]
    Measure(#[from] crate::metric::MeasureError),
}

/// Runs the three codecs on one clip.
pub fn run_clip(
    clip: &RawClip,
    path: &str,
    opts: &LabOptions,
) -> Result<(ClipLab, Vec<Lossy>), LabError> {
    let settings = CompressionSettings {
        error_threshold: opts.settings_threshold,
        shell_distance: opts.shell_distance,
        ..Default::default()
    };
    if clip.num_samples > u16::MAX as usize {
        return Err(LabError::TooManySamples(clip.num_samples));
    }
    let compressed = compress::compress(clip, &settings)?;
    let nb = clip.num_bones();
    let shells: Vec<f32> = match opts.shell_distance {
        Some(d) => vec![d; nb],
        None => clip.skeleton.shell_distances.clone(),
    };
    let n = clip.num_samples;
    let times = pattern_times(n, clip.sample_rate);
    let rate = clip.sample_rate;
    let mut pose = Pose::new(nb);
    let mut results = Vec::new();
    let mut lossy = Vec::new();

    // (a) uniform.
    let reader = ClipReader::new(&compressed.bytes).map_err(LabError::Uniform)?;
    let layout = uniform::Layout::new(&compressed.bytes);
    let mut counter = Counter::default();
    for &x in &times[0] {
        layout.touch_pose(&compressed.bytes, x, &mut counter);
        counter.end_pose();
    }
    let (tb, tl) = counter.per_pose();
    let dns = decode_ns(&times, opts.timings, |x| {
        reader.sample_pose(x / rate, Looping::Clamp, &mut pose);
        std::hint::black_box(&pose);
    });
    results.push(CodecResult {
        codec: UNIFORM.into(),
        bytes: compressed.runtime_bytes,
        max_error_cm: compressed.error.max,
        bytes_touched_per_pose: tb,
        cache_lines_per_pose: tl,
        context_bytes: 0,
        decode_ns: dns,
        keys: compressed.stats.layout.animated_subtracks as usize * reader.num_stored_samples(),
    });
    lossy.push(Lossy {
        codec: UNIFORM,
        clip: crate::decompress::to_raw_clip(&reader),
    });

    // (b) key reduction, unsorted.
    let target =
        (opts.settings_threshold - INPUT_ROUNDING_MARGIN).max(opts.settings_threshold * 0.5);
    let reduced = keys::reduce_clip(clip, &shells, target, &|ks| decode_key_set(clip, ks))?;
    let num_keys = reduced.keys.num_keys();
    let u = unsorted::Unsorted::encode(&reduced.keys);
    let mut counter = Counter::default();
    for &x in &times[0] {
        u.decode(x, &mut pose, &mut counter);
        counter.end_pose();
    }
    let (tb, tl) = counter.per_pose();
    let dns = decode_ns(&times, opts.timings, |x| {
        u.decode(x, &mut pose, &mut NoProbe);
        std::hint::black_box(&pose);
    });
    results.push(CodecResult {
        codec: KEY_REDUCTION.into(),
        bytes: u.buf.len(),
        max_error_cm: reduced.error.max,
        bytes_touched_per_pose: tb,
        cache_lines_per_pose: tl,
        context_bytes: 0,
        decode_ns: dns,
        keys: num_keys,
    });
    let u_clip = keys::clip_from_poses(clip, n, |s, p| u.decode(s as f32, p, &mut NoProbe));

    // (c) the same keys as a sorted stream.
    let s = sorted::Sorted::encode(&reduced.keys).ok_or(LabError::SortedTooLarge)?;
    let mut ctx = s.new_context();
    let mut counter = Counter::default();
    for &x in &times[0] {
        s.decode(x, &mut ctx, &mut pose, &mut counter);
        counter.end_pose();
    }
    let (tb, tl) = counter.per_pose();
    let dns = decode_ns(&times, opts.timings, |x| {
        s.decode(x, &mut ctx, &mut pose, &mut NoProbe);
        std::hint::black_box(&pose);
    });
    let s_clip = {
        let mut c = s.new_context();
        keys::clip_from_poses(clip, n, |i, p| s.decode(i as f32, &mut c, p, &mut NoProbe))
    };
    let s_mid = {
        let mut c = s.new_context();
        keys::clip_from_poses(clip, n.saturating_sub(1), |i, p| {
            s.decode(i as f32 + 0.5, &mut c, p, &mut NoProbe)
        })
    };
    let between = [crate::metric::Between {
        alpha: 0.5,
        poses: &s_mid,
    }];
    let between: &[crate::metric::Between] = if n > 1 { &between } else { &[] };
    let s_error = crate::metric::measure_with_between(clip, &s_clip, between, &shells)?;
    results.push(CodecResult {
        codec: SORTED_STREAM.into(),
        bytes: s.buf.len(),
        max_error_cm: s_error.max,
        bytes_touched_per_pose: tb,
        cache_lines_per_pose: tl,
        context_bytes: ctx.size_bytes(),
        decode_ns: dns,
        keys: num_keys,
    });
    lossy.push(Lossy {
        codec: KEY_REDUCTION,
        clip: u_clip,
    });
    lossy.push(Lossy {
        codec: SORTED_STREAM,
        clip: s_clip,
    });
    Ok((
        ClipLab {
            clip: clip.name.clone(),
            path: path.to_string(),
            bones: nb,
            samples: n,
            threshold_cm: opts.settings_threshold,
            codecs: results,
        },
        lossy,
    ))
}

/// Max error over bones at each sample of `lossy` against `raw` (cm, float64, the metric of
/// the reports), for the app's error-over-time plot. Samples past the shorter clip are left
/// out; a skeleton mismatch gives an empty curve.
pub fn per_sample_error(raw: &RawClip, lossy: &RawClip, shells: &[f32]) -> Vec<f64> {
    let nb = raw.num_bones();
    if lossy.num_bones() != nb || shells.len() != nb {
        return Vec::new();
    }
    let n = raw.num_samples.min(lossy.num_samples);
    let a = crate::metric::object_space_f64(raw);
    let b = crate::metric::object_space_f64(lossy);
    (0..n)
        .map(|s| {
            (0..nb)
                .map(|bone| {
                    let i = s * nb + bone;
                    crate::metric::vertex_error(&a[i], &b[i], shells[bone] as f64)
                })
                .fold(0.0, f64::max)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lab_error_texts() {
        assert_eq!(
            LabError::TooManySamples(70000).to_string(),
            "70000 samples: the lab's key layouts store 16-bit key times (at most 65535 samples)"
        );
        assert_eq!(
            LabError::SortedTooLarge.to_string(),
            "sorted stream: more than 65535 sub-tracks or samples"
        );
    }
}
