//! Linear key reduction per sub-track, shared by the two key-reduced layouts ([`super::unsorted`]
//! and [`super::sorted`]): both store the same keys, so they differ only in layout.
//!
//! Each sub-track is first quantized (16 bits per component over the sub-track's range, or raw
//! float32 when 16 bits alone would use more than half the bone's tolerance), then keys are
//! removed greedily (UE4's approach: extend a line from the last kept key as far as every sample
//! and every midpoint between samples stays within the tolerance). The tolerance is a local
//! proxy of the object-space metric: rotations and scales are measured at the bone's *reach*
//! (its shell distance, or further when its descendants hang further away). The proxy ignores
//! how errors add down the hierarchy, so [`reduce_clip`] measures the result with the project's
//! float64 metric (at every sample and every midpoint) and tightens the bones that fail, and
//! their ancestors, until the clip passes.

use crate::clip::RawClip;
use crate::metric;
use glam::{DQuat, DVec3, Quat, Vec3, Vec4};

/// Sub-track kinds, in the order they are stored within a bone.
pub const ROTATION: u8 = 0;
pub const TRANSLATION: u8 = 1;
pub const SCALE: u8 = 2;

/// How a sub-track's key values are stored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Storage {
    /// No keys: the default value (identity rotation, zero translation, unit scale).
    Default,
    /// 16 bits per component: `min + ext · q / 65535` (a rotation stores x, y, z with w ≥ 0).
    Q16 { min: [f32; 3], ext: [f32; 3] },
    /// Float32 components (four for a rotation, three otherwise).
    Raw,
}

impl Storage {
    pub fn code(self) -> u8 {
        match self {
            Storage::Default => 0,
            Storage::Q16 { .. } => 1,
            Storage::Raw => 2,
        }
    }

    /// Bytes of one key value.
    pub(crate) fn value_bytes(self, kind: u8) -> usize {
        match self {
            Storage::Default => 0,
            Storage::Q16 { .. } => 6,
            Storage::Raw if kind == ROTATION => 16,
            Storage::Raw => 12,
        }
    }
}

/// The keys of one sub-track: sample indices (strictly increasing, the first is 0 when there is
/// any) and, per key, its stored words (three u16 for [`Storage::Q16`], the f32 bits otherwise).
#[derive(Clone, Debug, PartialEq)]
pub struct TrackKeys {
    pub bone: u32,
    pub kind: u8,
    pub storage: Storage,
    pub times: Vec<u32>,
    pub words: Vec<[u32; 4]>,
}

/// Every sub-track of a clip (three per bone, bone order: rotation, translation, scale).
#[derive(Clone, Debug)]
pub struct KeySet {
    pub num_samples: usize,
    pub sample_rate: f32,
    pub tracks: Vec<TrackKeys>,
}

impl KeySet {
    pub(crate) fn num_keys(&self) -> usize {
        self.tracks.iter().map(|t| t.times.len()).sum()
    }
}

/// The default value of a sub-track kind, as the decoders return it.
pub(crate) fn default_value(kind: u8) -> Vec4 {
    match kind {
        ROTATION => Vec4::new(0.0, 0.0, 0.0, 1.0),
        TRANSLATION => Vec4::ZERO,
        _ => Vec4::new(1.0, 1.0, 1.0, 0.0),
    }
}

/// Decodes one stored key value exactly as both decoders do (float32).
#[inline]
pub(crate) fn decode_value(storage: Storage, kind: u8, w: [u32; 4]) -> Vec4 {
    match storage {
        Storage::Default => default_value(kind),
        Storage::Q16 { min, ext } => {
            let c = |k: usize| min[k] + ext[k] * (w[k] as f32 / 65535.0);
            let (x, y, z) = (c(0), c(1), c(2));
            if kind == ROTATION {
                let w = (1.0 - (x * x + y * y + z * z)).max(0.0).sqrt();
                Vec4::new(x, y, z, w).normalize()
            } else {
                Vec4::new(x, y, z, 0.0)
            }
        }
        Storage::Raw => {
            let f = |k: usize| f32::from_bits(w[k]);
            if kind == ROTATION {
                Vec4::new(f(0), f(1), f(2), f(3)).normalize()
            } else {
                Vec4::new(f(0), f(1), f(2), 0.0)
            }
        }
    }
}

/// Blends two decoded key values: nlerp on the shorter arc for rotations, lerp otherwise (the
/// uniform runtime's interpolation).
#[inline]
pub(crate) fn interpolate(kind: u8, a: Vec4, b: Vec4, alpha: f32) -> Vec4 {
    if kind == ROTATION {
        let b = if a.dot(b) < 0.0 { -b } else { b };
        a.lerp(b, alpha).normalize()
    } else {
        a.lerp(b, alpha)
    }
}

/// Writes a decoded value into a pose slot.
#[inline]
pub fn store(kind: u8, v: Vec4, bone: usize, pose: &mut crate::pose::Pose) {
    match kind {
        ROTATION => pose.rotations[bone] = Quat::from_vec4(v),
        TRANSLATION => pose.translations[bone] = glam::Vec3A::from_vec4(v),
        _ => pose.scales[bone] = glam::Vec3A::from_vec4(v),
    }
}

/// The raw value of sub-track `kind` of `bone` at `sample`, as x, y, z, w (a rotation with w ≥ 0).
fn raw_value(clip: &RawClip, bone: usize, kind: u8, sample: usize) -> Vec4 {
    let i = clip.index(bone, sample);
    match kind {
        ROTATION => {
            let q = Vec4::from(clip.rotations[i]);
            if q.w < 0.0 { -q } else { q }
        }
        TRANSLATION => clip.translations[i].extend(0.0),
        _ => clip.scales[i].extend(0.0),
    }
}

fn encode_q16(v: Vec4, min: [f32; 3], ext: [f32; 3]) -> [u32; 4] {
    let mut w = [0u32; 4];
    for k in 0..3 {
        w[k] = if ext[k] > 0.0 {
            (((v[k] - min[k]) / ext[k]) * 65535.0)
                .round()
                .clamp(0.0, 65535.0) as u32
        } else {
            0
        };
    }
    w
}

fn encode_raw(v: Vec4) -> [u32; 4] {
    [v.x.to_bits(), v.y.to_bits(), v.z.to_bits(), v.w.to_bits()]
}

/// Local error of a lossy value against a raw one (float64): for rotations and scales the
/// largest displacement of the three virtual vertices at `reach`, for translations the distance.
#[inline]
fn local_error(kind: u8, raw: glam::DVec4, lossy: glam::DVec4, reach: f64) -> f64 {
    match kind {
        ROTATION => {
            let a = DQuat::from_vec4(raw).normalize();
            let b = DQuat::from_vec4(lossy).normalize();
            let mut worst: f64 = 0.0;
            for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
                worst = worst.max((a * axis - b * axis).length() * reach);
            }
            worst
        }
        TRANSLATION => (raw - lossy).truncate().length(),
        _ => (raw - lossy).truncate().abs().max_element() * reach,
    }
}

/// f64 blend of two values the way the runtime blends them.
#[inline]
fn blend64(kind: u8, a: glam::DVec4, b: glam::DVec4, alpha: f64) -> glam::DVec4 {
    if kind == ROTATION {
        let b = if a.dot(b) < 0.0 { -b } else { b };
        a.lerp(b, alpha).normalize()
    } else {
        a.lerp(b, alpha)
    }
}

/// Longest span between two kept keys, in samples: bounds the greedy search's work (quadratic
/// in the span) and keeps key times small; a sub-track flat for longer is usually constant.
pub(crate) const MAX_SPAN: usize = 128;

/// One sub-track's samples, in float64: raw values at each sample and at each midpoint.
struct TrackSamples {
    kind: u8,
    raw: Vec<glam::DVec4>,
    raw_mid: Vec<glam::DVec4>,
}

impl TrackSamples {
    fn new(clip: &RawClip, bone: usize, kind: u8) -> Self {
        let n = clip.num_samples;
        let raw: Vec<glam::DVec4> = (0..n)
            .map(|s| raw_value(clip, bone, kind, s).as_dvec4())
            .collect();
        let raw_mid = (0..n.saturating_sub(1))
            .map(|s| blend64(kind, raw[s], raw[s + 1], 0.5))
            .collect();
        Self { kind, raw, raw_mid }
    }

    /// Does the line from key `a` (value `va`) to key `b` (value `vb`) stay within `tol` at
    /// every sample in `a..=b` and every midpoint in `a..b`?
    fn fits(
        &self,
        a: usize,
        va: glam::DVec4,
        b: usize,
        vb: glam::DVec4,
        tol: f64,
        reach: f64,
    ) -> bool {
        let span = (b - a).max(1) as f64;
        for j in a..=b {
            let v = blend64(self.kind, va, vb, (j - a) as f64 / span);
            if local_error(self.kind, self.raw[j], v, reach) > tol {
                return false;
            }
            if j < b {
                let v = blend64(self.kind, va, vb, (j - a) as f64 / span + 0.5 / span);
                if local_error(self.kind, self.raw_mid[j], v, reach) > tol {
                    return false;
                }
            }
        }
        true
    }
}

/// Reduces one sub-track within local tolerance `tol` at `reach`; `keep_all` stores every sample
/// as raw float32 (the last resort, error = float32 rounding alone).
fn reduce_track(
    clip: &RawClip,
    bone: usize,
    kind: u8,
    tol: f64,
    reach: f64,
    keep_all: bool,
) -> TrackKeys {
    let n = clip.num_samples;
    let ts = TrackSamples::new(clip, bone, kind);
    let mut out = TrackKeys {
        bone: bone as u32,
        kind,
        storage: Storage::Raw,
        times: Vec::new(),
        words: Vec::new(),
    };
    if n == 0 {
        out.storage = Storage::Default;
        return out;
    }
    if keep_all {
        for s in 0..n {
            out.times.push(s as u32);
            out.words.push(encode_raw(raw_value(clip, bone, kind, s)));
        }
        return out;
    }
    let def = default_value(kind).as_dvec4();
    if ts.fits(0, def, n - 1, def, tol, reach) {
        out.storage = Storage::Default;
        return out;
    }
    // Quantize: 16 bits over the range unless that alone would take more than half the tolerance.
    let values: Vec<Vec4> = (0..n).map(|s| raw_value(clip, bone, kind, s)).collect();
    let (mut min, mut max) = ([f32::MAX; 3], [f32::MIN; 3]);
    for v in &values {
        for k in 0..3 {
            min[k] = min[k].min(v[k]);
            max[k] = max[k].max(v[k]);
        }
    }
    let ext: [f32; 3] = std::array::from_fn(|k| (max[k] - min[k]).max(0.0));
    let q16 = Storage::Q16 { min, ext };
    let q_words: Vec<[u32; 4]> = values.iter().map(|&v| encode_q16(v, min, ext)).collect();
    let q16_ok = q_words.iter().zip(&ts.raw).all(|(w, r)| {
        local_error(kind, *r, decode_value(q16, kind, *w).as_dvec4(), reach) <= tol * 0.5
    });
    let (storage, words): (Storage, Vec<[u32; 4]>) = if q16_ok {
        (q16, q_words)
    } else {
        (
            Storage::Raw,
            values.iter().map(|&v| encode_raw(v)).collect(),
        )
    };
    out.storage = storage;
    let dec: Vec<glam::DVec4> = words
        .iter()
        .map(|&w| decode_value(storage, kind, w).as_dvec4())
        .collect();
    // Constant: one key.
    if ts.fits(0, dec[0], n - 1, dec[0], tol, reach) {
        out.times.push(0);
        out.words.push(words[0]);
        return out;
    }
    let mut a = 0usize;
    out.times.push(0);
    out.words.push(words[0]);
    while a < n - 1 {
        let mut b = a + 1;
        while b + 1 < n
            && b + 1 - a <= MAX_SPAN
            && ts.fits(a, dec[a], b + 1, dec[b + 1], tol, reach)
        {
            b += 1;
        }
        out.times.push(b as u32);
        out.words.push(words[b]);
        a = b;
    }
    out
}

/// How far each bone's motion reaches: its shell distance, or the longest chain of bone lengths
/// (largest local translation over the clip) plus shell distance among its descendants.
fn reaches(clip: &RawClip, shells: &[f32]) -> Vec<f64> {
    let nb = clip.num_bones();
    let mut reach: Vec<f64> = shells.iter().map(|&s| s as f64).collect();
    for b in (0..nb).rev() {
        let (_, t, s) = clip.track(b);
        let len = t.iter().map(|v| v.length() as f64).fold(0.0, f64::max);
        let scale = s
            .iter()
            .map(|v| v.abs().max_element() as f64)
            .fold(1.0, f64::max);
        if let Some(p) = clip.skeleton.parent(b) {
            reach[p] = reach[p].max(len + reach[b] * scale);
        }
    }
    reach
}

/// The result of [`reduce_clip`]: the keys and the float64 measurement of their reconstruction.
pub struct Reduced {
    pub keys: KeySet,
    pub error: metric::ErrorStats,
    /// Tightening rounds the float64 check needed (0 = the first reduction passed).
    pub rounds: u32,
}

/// Tightening rounds before every sub-track of a failing bone keeps all its samples raw.
const MAX_ROUNDS: u32 = 10;

/// Reduces every sub-track of `clip` so that the object-space error (float64, at every sample and
/// every midpoint, `decode` reconstructing as the lab decoders do) stays within `target`.
pub fn reduce_clip(
    clip: &RawClip,
    shells: &[f32],
    target: f32,
    decode: &dyn Fn(&KeySet) -> (RawClip, RawClip),
) -> Result<Reduced, metric::MeasureError> {
    let nb = clip.num_bones();
    let reach = reaches(clip, shells);
    // Start at the whole target per bone: the check below tightens the chains that add up.
    let mut tol: Vec<f64> = vec![target as f64; nb];
    let mut keep_all = vec![false; nb];
    let mut tracks: Vec<TrackKeys> = Vec::with_capacity(3 * nb);
    for b in 0..nb {
        for kind in [ROTATION, TRANSLATION, SCALE] {
            tracks.push(reduce_track(clip, b, kind, tol[b], reach[b], false));
        }
    }
    let mut rounds = 0;
    loop {
        let keys = KeySet {
            num_samples: clip.num_samples,
            sample_rate: clip.sample_rate,
            tracks: tracks.clone(),
        };
        let (at, mid) = decode(&keys);
        let between = [metric::Between {
            alpha: 0.5,
            poses: &mid,
        }];
        let between: &[metric::Between] = if clip.num_samples > 1 { &between } else { &[] };
        let stats = metric::measure_with_between(clip, &at, between, shells)?;
        let failing: Vec<usize> = (0..nb)
            .filter(|&b| stats.per_bone_max[b] > target as f64)
            .collect();
        if failing.is_empty() || rounds > MAX_ROUNDS {
            return Ok(Reduced {
                keys,
                error: stats,
                rounds,
            });
        }
        rounds += 1;
        let mut changed = vec![false; nb];
        for &b in &failing {
            let mut cur = Some(b);
            while let Some(c) = cur {
                changed[c] = true;
                cur = clip.skeleton.parent(c);
            }
        }
        for b in (0..nb).filter(|&b| changed[b]) {
            tol[b] *= 0.5;
            if rounds >= MAX_ROUNDS - 2 || tol[b] < target as f64 / 64.0 {
                keep_all[b] = true;
            }
            for (i, kind) in [ROTATION, TRANSLATION, SCALE].into_iter().enumerate() {
                tracks[3 * b + i] = reduce_track(clip, b, kind, tol[b], reach[b], keep_all[b]);
            }
        }
    }
}

/// A decoded clip as a [`RawClip`] with `clip`'s skeleton (for the metric and for export).
pub(crate) fn clip_from_poses(
    clip: &RawClip,
    num_samples: usize,
    mut pose_at: impl FnMut(usize, &mut crate::pose::Pose),
) -> RawClip {
    let nb = clip.num_bones();
    let mut rotations = vec![Quat::IDENTITY; nb * num_samples];
    let mut translations = vec![Vec3::ZERO; nb * num_samples];
    let mut scales = vec![Vec3::ONE; nb * num_samples];
    let mut pose = crate::pose::Pose::new(nb);
    for s in 0..num_samples {
        pose_at(s, &mut pose);
        for b in 0..nb {
            rotations[b * num_samples + s] = pose.rotations[b];
            translations[b * num_samples + s] = pose.translations[b].into();
            scales[b * num_samples + s] = pose.scales[b].into();
        }
    }
    RawClip {
        name: clip.name.clone(),
        skeleton: clip.skeleton.clone(),
        sample_rate: clip.sample_rate,
        num_samples,
        rotations,
        translations,
        scales,
        additive: None,
    }
}
