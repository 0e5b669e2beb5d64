//! Clip-level analysis before the per-segment search: centred raw object space, dominant shell
//! distances, loop detection, default/constant classification measured with the error metric,
//! the dropped quaternion component of each rotation track, and clip ranges.

use crate::additive::{AdditiveFormat, apply_f32};
use crate::clip::RawClip;
use crate::runtime::format::{
    DROPPED_NONE, DROPPED_PER_SEGMENT, KIND_ANIMATED, KIND_CONSTANT, KIND_CONSTANT_Q, KIND_DEFAULT,
    QROT_RANGE, q16_decode, q16_encode, reference_decode3, reference_encode3, rot_range_decode,
    rot_range_encode,
};
use crate::runtime::quant::{self, kept_components, rebuild_rotation};
use crate::skeleton::NO_PARENT;
use glam::{Quat, Vec3A, Vec4};

/// Share of the error budget that collapsing a sub-track to a constant (or the bind pose) may use.
const CONSTANT_SHARE: f32 = 0.3;
/// Along any root → leaf chain, constants and defaults together may use at most this share.
const FIXED_CHAIN_SHARE: f32 = 0.5;
/// A clip loops when its last pose is within this share of the budget of its first.
const LOOP_SHARE: f32 = 0.05;
/// Rebuilding a dropped component loses float32 precision as it nears zero; below this over the
/// clip, the dropped component is chosen per segment instead.
const MIN_CLIP_DROPPED: f32 = 0.3;
/// Share of the error budget that rebuilding a dropped component in float32 may cost; a segment
/// whose best dropped component would cost more drops none ([`DROPPED_NONE`]).
const REBUILD_SHARE: f32 = 0.1;

/// Object-space error bound of rebuilding a dropped component whose smallest magnitude is
/// `min_abs`, at lever `lever`: `d = sqrt(1 − |k|²)` with `|k|²` rounded in float32 (about
/// 2.4e-7 absolute, kept components included) is off by about 1.2e-7 / d, and a quaternion
/// error `e` moves a point at distance 1 by up to `2e`.
fn rebuild_error(min_abs: f32, lever: f32) -> f32 {
    2.4e-7 / min_abs.max(1e-12) * lever
}

/// An object-space (or local) transform in float32.
#[derive(Clone, Copy, Debug)]
pub struct Xf {
    pub r: Quat,
    pub t: Vec3A,
    pub s: Vec3A,
}

impl crate::pose::Compose for Xf {
    #[inline(always)]
    fn compose(parent: &Xf, local: &Xf) -> Xf {
        Xf {
            r: (parent.r * local.r).normalize(),
            t: parent.r * (local.t * parent.s) + parent.t,
            s: local.s * parent.s,
        }
    }
}

/// Error at one bone between two object transforms, the lossy one shifted by `offset`
/// (the difference of root translations, kept out of the transforms for float32 precision).
#[inline(always)]
pub fn vertex_error(raw: &Xf, lossy: &Xf, offset: Vec3A, shell: f32) -> f32 {
    let dt = lossy.t + offset - raw.t;
    let mut worst = 0.0f32;
    for axis in [Vec3A::X, Vec3A::Y, Vec3A::Z] {
        let v = axis * shell;
        let d = lossy.r * (v * lossy.s) - raw.r * (v * raw.s) + dt;
        worst = worst.max(d.length_squared());
    }
    worst.sqrt()
}

/// The raw side of [`vertex_error`]: the three virtual vertices of `raw` relative to its
/// translation, for measuring many lossy transforms against the same raw one.
#[inline(always)]
pub(crate) fn raw_vertices(raw: &Xf, shell: f32) -> [Vec3A; 3] {
    let at = |axis: Vec3A| raw.r * (axis * shell * raw.s);
    [at(Vec3A::X), at(Vec3A::Y), at(Vec3A::Z)]
}

/// [`vertex_error`] against a raw transform given by its translation and [`raw_vertices`]:
/// the same figure, bit for bit, at half the rotations.
#[inline(always)]
pub(crate) fn vertex_error_to(
    raw_t: Vec3A,
    raw_v: &[Vec3A; 3],
    lossy: &Xf,
    offset: Vec3A,
    shell: f32,
) -> f32 {
    let dt = lossy.t + offset - raw_t;
    let at =
        |axis: Vec3A, raw: Vec3A| (lossy.r * (axis * shell * lossy.s) - raw + dt).length_squared();
    0.0f32
        .max(at(Vec3A::X, raw_v[0]))
        .max(at(Vec3A::Y, raw_v[1]))
        .max(at(Vec3A::Z, raw_v[2]))
        .sqrt()
}

/// Upper bound of the displacement of a point at distance 1 rotated by `a` instead of `b`:
/// 2·sin(θ/2) ≤ 2·|a − b| (sign-aligned chord), computed without float32 cancellation.
#[inline(always)]
pub(crate) fn rotation_lever(a: Quat, b: Quat) -> f32 {
    let (va, vb) = (Vec4::from(a), Vec4::from(b));
    let d = if va.dot(vb) < 0.0 { va + vb } else { va - vb };
    2.0 * d.length()
}

/// A base local pose of one bone at one sample: (rotation, translation, scale).
pub(crate) type BaseLocal = (Quat, Vec3A, Vec3A);

/// One animated sub-track: the values the encoder quantizes (three kept quaternion components
/// for rotations), per stored sample, and its clip range.
pub struct Track {
    pub bone: usize,
    /// 0 rotation, 1 translation, 2 scale.
    pub kind: usize,
    pub values: Vec<[f32; 3]>,
    /// Dropped quaternion component in each segment (rotations; the same in every segment unless
    /// the bone's descriptor says per segment).
    pub dropped: Vec<u8>,
    /// The dropped component is stored per segment.
    pub per_segment_dropped: bool,
    /// w of every stored sample, for segments that drop no component (empty when none does).
    pub w: Vec<f32>,
    pub clip_min: [f32; 3],
    pub clip_ext: [f32; 3],
    /// Rotations: the clip range as stored (16-bit min x,y,z then extent x,y,z); `clip_min` and
    /// `clip_ext` are its decoded values.
    pub rot_range_q: [u16; 6],
    /// Rotations stored relative to a reference `r` ([`FLAG_ROTATION_REFERENCES`]): the values
    /// are those of `r⁻¹·q`, and a decoded value is `r·stored`. `r` is the stored reference as
    /// the runtime decodes it.
    ///
    /// [`FLAG_ROTATION_REFERENCES`]: crate::runtime::format::FLAG_ROTATION_REFERENCES
    pub reference: Option<(Quat, [i8; 3])>,
}

pub struct Prepared<'a> {
    pub clip: &'a RawClip,
    /// The clip's rotations normalized in float64 (importers may keep rotations a few 1e-7 off
    /// unit length for exact round trips; the error metric normalizes, so the codec must too).
    pub rotations: Vec<Quat>,
    pub num_bones: usize,
    /// Samples of the original clip.
    pub num_samples: usize,
    /// Samples stored (one fewer when the clip wraps).
    pub num_stored: usize,
    pub num_segments: usize,
    /// Samples per segment (the last segment absorbs a short remainder).
    pub segment_size: usize,
    pub wrap: bool,
    pub shells: Vec<f32>,
    /// Per bone: the factor taking its errors to the global target's scale (the global target
    /// over the bone's own; 1 for every bone without a per-bone threshold). Every comparison
    /// with the target weighs a bone's error by it.
    pub weights: Vec<f32>,
    /// Per bone: the largest weight of its sub-hierarchy (itself included). An error in a
    /// bone's own sub-tracks moves every bone below it, so it is weighed by the tightest of
    /// them: an ancestor's precision serves its tightest descendant.
    pub chain_weights: Vec<f32>,
    pub parents: Vec<u32>,
    pub root_of: Vec<usize>,
    /// Raw object space, `sample * bones + bone`, with every root's translation set to zero.
    pub raw_obj: Vec<Xf>,
    pub kinds: Vec<[u8; 3]>,
    pub dropped: Vec<u8>,
    /// Decoded value of every default or constant sub-track (bind pose for defaults).
    pub fixed: Vec<Xf>,
    /// Full-precision constant values in encoding order (bone order; rotation, translation, scale).
    pub constants: Vec<[f32; 3]>,
    /// 16-bit constants in encoding order.
    pub qconstants: Vec<[u16; 3]>,
    /// Box (min, extent) of the 16-bit constant translations, when there are any.
    pub qbox: Option<([f32; 3], [f32; 3])>,
    /// Error bound contributed by each bone's default/constant sub-tracks.
    pub fixed_err: Vec<f32>,
    pub tracks: Vec<Track>,
    /// Largest parent object scale component per bone (1 for roots): translation errors scale by it.
    pub parent_scale: Vec<f32>,
    /// The hierarchy is shallow enough for [`Prepared::dominant_shells`] to walk every ancestor.
    pub exact_dominant_shells: bool,
    /// [`Prepared::dominant_shells`] over every sample, as the classification measured them
    /// (empty when it did not run: no bone or no sample). A clip of one segment's search
    /// measures the same samples.
    pub clip_dominant_shells: Vec<f32>,
    /// An additive clip's format and its raw base local pose at every sample (`sample * bones +
    /// bone`, ACL's nearest-key rule). The search then works in the combined space: raw object
    /// space is the raw additive applied to the base, and every decoded candidate is applied to
    /// the same base before it is composed ([`Prepared::combined`]), so the error it bounds is
    /// the one a game sees on the combined pose. (Measuring the additive alone would see lever
    /// arms of nearly zero: additive translations of a rig are ~0, so a parent's rotation error
    /// would look harmless to its children.)
    pub base: Option<(AdditiveFormat, Vec<BaseLocal>)>,
    /// Per bone (empty: none): the reference rotation its rotation is stored relative to when it
    /// is animated ([`Track::reference`]).
    pub references: Vec<Option<Quat>>,
}

/// Up to this mean number of ancestors per bone, dominant shells are measured exactly; real
/// skeletons have 5–15 (the deepest real clip here: under 30).
pub(crate) const EXACT_MEAN_DEPTH: usize = 64;
/// The chain guard demotes one sub-track per pass over the bones; past this many bone visits
/// (far above what any real clip needs) it finishes with one linear pass instead.
const CHAIN_GUARD_WORK: usize = 20_000_000;

impl Track {
    /// The rotation decoded from three decoded components of stored sample `i` in segment
    /// `seg`, as the runtime decodes it.
    #[inline(always)]
    pub fn rotation(&self, k: [f32; 3], seg: usize, i: usize) -> Quat {
        let q = if self.dropped[seg] == DROPPED_NONE {
            Quat::from_vec4(Vec4::new(k[0], k[1], k[2], self.w[i]).normalize())
        } else {
            rebuild_rotation(k, self.dropped[seg])
        };
        match self.reference {
            Some((r, _)) => r * q,
            None => q,
        }
    }
}

impl Prepared<'_> {
    pub fn segment_span(&self, seg: usize) -> (usize, usize) {
        quant::segment_span(seg, self.num_segments, self.num_stored, self.segment_size)
    }

    pub(crate) fn count_kind(&self, kind: u8) -> u32 {
        self.kinds.iter().flatten().filter(|&&k| k == kind).count() as u32
    }

    /// A decoded (or raw) local transform of `bone` at raw sample `sample` as the pose combines
    /// it: applied to the base for an additive clip, unchanged otherwise.
    #[inline(always)]
    pub fn combined(&self, bone: usize, sample: usize, local: &Xf) -> Xf {
        match &self.base {
            None => *local,
            Some((format, base)) => {
                let (r, t, s) = apply_f32(
                    *format,
                    base[sample * self.num_bones + bone],
                    (local.r, local.t, local.s),
                );
                Xf { r, t, s }
            }
        }
    }

    /// Raw translation of root `root` at `sample` in the combined space (what a root's decoded
    /// translation is compared with: roots keep their translation out of the object transforms).
    #[inline(always)]
    pub(crate) fn raw_root_translation(&self, root: usize, sample: usize) -> Vec3A {
        let raw = Vec3A::from(self.clip.translations[self.clip.index(root, sample)]);
        if self.base.is_none() {
            return raw;
        }
        self.combined(root, sample, &self.raw_local(root, sample)).t
    }

    /// Raw local transform of `bone` at `sample`.
    #[inline(always)]
    pub(crate) fn raw_local(&self, bone: usize, sample: usize) -> Xf {
        let i = self.clip.index(bone, sample);
        Xf {
            r: self.clip.rotations[i],
            t: self.clip.translations[i].into(),
            s: self.clip.scales[i].into(),
        }
    }

    /// Dominant shell distance of every bone over `samples`: the farthest any virtual vertex of
    /// its sub-hierarchy gets from its origin, so its local error times this bounds what moves.
    /// Each vertex's distance is weighed by its bone's [`Prepared::weights`], so the lever is on
    /// the global target's scale: a bone with a tighter threshold counts as farther away.
    ///
    /// Measured exactly (every bone against each of its ancestors) while that costs at most
    /// [`EXACT_MEAN_DEPTH`] steps per bone; deeper hierarchies (a 20,000-bone chain would take
    /// 2·10⁸ steps per sample) get a bound computed children first in one pass instead:
    /// `d[a] = max(reach[a], max over children c of |t_c − t_a| + d[c])`, never below the exact
    /// value by the triangle inequality (an over-estimate only costs bits).
    pub(crate) fn dominant_shells(&self, samples: impl Iterator<Item = usize>) -> Vec<f32> {
        let nb = self.num_bones;
        let mut d = vec![0.0f32; nb];
        if !self.exact_dominant_shells {
            let mut here = vec![0.0f32; nb];
            for s in samples {
                let obj = &self.raw_obj[s * nb..(s + 1) * nb];
                for b in 0..nb {
                    here[b] =
                        self.shells[b] * obj[b].s.abs().max_element().max(1e-6) * self.weights[b];
                }
                for b in (0..nb).rev() {
                    if let Some(par) =
                        (self.parents[b] != NO_PARENT).then(|| self.parents[b] as usize)
                    {
                        // w_d·(|t_d − t_par| + reach_d) ≤ W_b·|t_b − t_par| + here[b] for
                        // every d below b (triangle inequality, w_d ≤ W_b).
                        let via = obj[b].t.distance(obj[par].t) * self.chain_weights[b] + here[b];
                        if via > here[par] {
                            here[par] = via;
                        }
                    }
                    if here[b] > d[b] {
                        d[b] = here[b];
                    }
                }
            }
            return d;
        }
        for s in samples {
            let obj = &self.raw_obj[s * nb..(s + 1) * nb];
            for b in 0..nb {
                let reach = self.shells[b] * obj[b].s.abs().max_element().max(1e-6);
                let mut a = b;
                loop {
                    let dist = (obj[b].t.distance(obj[a].t) + reach) * self.weights[b];
                    if dist > d[a] {
                        d[a] = dist;
                    }
                    match self.parents[a] {
                        NO_PARENT => break,
                        p => a = p as usize,
                    }
                }
            }
        }
        d
    }
}

#[cfg(test)]
pub fn prepare<'a>(
    clip: &'a RawClip,
    settings: &super::CompressionSettings,
    target: f32,
) -> Prepared<'a> {
    let limits = settings.bone_limits(&clip.skeleton);
    let weights = super::bone_weights(&limits, settings.error_threshold);
    prepare_with(
        clip,
        &limits.shells,
        weights,
        target,
        false,
        super::SEGMENT_SIZE,
        &[],
    )
}

/// [`prepare`] with each bone's shell distance and error weight ([`Prepared::weights`]); with
/// `exact_rotations` every animated rotation keeps all four components in every segment (the
/// last resort: nothing is rebuilt). `references`, per bone (or empty), the rotation each
/// animated rotation is stored relative to ([`Track::reference`]).
pub(crate) fn prepare_with<'a>(
    clip: &'a RawClip,
    shells: &[f32],
    weights: Vec<f32>,
    target: f32,
    exact_rotations: bool,
    segment_size: usize,
    references: &[Option<Quat>],
) -> Prepared<'a> {
    let nb = clip.num_bones();
    let n = clip.num_samples;
    let shells = shells.to_vec();
    let parents = clip.skeleton.parents.clone();
    let mut chain_weights = weights.clone();
    for b in (0..nb).rev() {
        if parents[b] != NO_PARENT {
            let par = parents[b] as usize;
            chain_weights[par] = chain_weights[par].max(chain_weights[b]);
        }
    }
    let mut root_of = vec![0usize; nb];
    let mut depth = vec![0usize; nb];
    for b in 0..nb {
        (root_of[b], depth[b]) = match parents[b] {
            NO_PARENT => (b, 0),
            p => (root_of[p as usize], depth[p as usize] + 1),
        };
    }
    let exact_dominant_shells = depth.iter().sum::<usize>() <= EXACT_MEAN_DEPTH * nb;
    let mut p = Prepared {
        clip,
        rotations: clip
            .rotations
            .iter()
            .map(|q| q.as_dquat().normalize().as_quat())
            .collect(),
        num_bones: nb,
        num_samples: n,
        num_stored: n,
        num_segments: 0,
        segment_size,
        wrap: false,
        shells,
        weights,
        chain_weights,
        parents,
        root_of,
        raw_obj: Vec::with_capacity(nb * n),
        kinds: vec![[KIND_DEFAULT; 3]; nb],
        dropped: vec![3; nb],
        fixed: Vec::with_capacity(nb),
        constants: Vec::new(),
        qconstants: Vec::new(),
        qbox: None,
        fixed_err: vec![0.0; nb],
        tracks: Vec::new(),
        parent_scale: vec![1.0; nb],
        exact_dominant_shells,
        clip_dominant_shells: Vec::new(),
        base: clip
            .additive
            .as_ref()
            .map(|a| (a.format, crate::additive::base_at_samples(clip, &a.base))),
        references: references.to_vec(),
    };
    let mut locals = Vec::with_capacity(nb);
    let mut objects = Vec::with_capacity(nb);
    for s in 0..n {
        locals.clear();
        locals.extend((0..nb).map(|b| {
            let mut local = p.combined(b, s, &p.raw_local(b, s));
            if p.parents[b] == NO_PARENT {
                // Roots keep their translation out of the transform (float32 precision far
                // from the origin).
                local.t = Vec3A::ZERO;
            }
            local
        }));
        objects.clear();
        objects.extend_from_slice(&locals);
        crate::pose::local_to_object_with(&p.parents, |b| locals[b], &mut objects);
        for b in 0..nb {
            if p.parents[b] != NO_PARENT {
                // Never below 1: an over-estimate only costs bits, an under-estimate would
                // be caught by the real check but makes the search's bound wrong.
                let mut ps = objects[p.parents[b] as usize].s.abs().max_element();
                // A relative additive's translation is scaled by its own base's scale too.
                if let Some((AdditiveFormat::Relative, base)) = &p.base {
                    ps *= base[s * nb + b].2.abs().max_element().max(1.0);
                }
                p.parent_scale[b] = p.parent_scale[b].max(ps);
            }
        }
        p.raw_obj.extend_from_slice(&objects);
    }
    if nb == 0 || n == 0 {
        p.num_segments = quant::num_segments(n, segment_size);
        return p;
    }
    // An additive clip over a base of several samples combines its last sample with the base's
    // last, its first with the base's first: a wrapped (dropped) last sample would be wrong.
    let single_base = clip
        .additive
        .as_ref()
        .is_none_or(|a| a.base.num_samples <= 1);
    p.wrap = n >= 3 && single_base && is_looping(&p, target);
    p.num_stored = if p.wrap { n - 1 } else { n };
    p.num_segments = quant::num_segments(p.num_stored, segment_size);
    classify(&mut p, target, exact_rotations);
    p
}

fn is_looping(p: &Prepared, target: f32) -> bool {
    let (nb, n) = (p.num_bones, p.num_samples);
    let first = &p.raw_obj[..nb];
    let last = &p.raw_obj[(n - 1) * nb..];
    (0..nb).all(|b| {
        let root = p.root_of[b];
        let offset = p.raw_root_translation(root, 0) - p.raw_root_translation(root, n - 1);
        vertex_error(&last[b], &first[b], offset, p.shells[b]) * p.weights[b] <= LOOP_SHARE * target
    })
}

/// Normalized mean of a rotation track aligned to one hemisphere: the constant that best
/// stands for all its samples.
pub(super) fn mean_rotation(rots: &[Quat]) -> Quat {
    let r0 = Vec4::from(rots[0]);
    let sum: Vec4 = rots
        .iter()
        .map(|&q| {
            if Vec4::from(q).dot(r0) < 0.0 {
                -Vec4::from(q)
            } else {
                Vec4::from(q)
            }
        })
        .sum();
    if sum.length() < 1e-6 {
        rots[0]
    } else {
        Quat::from_vec4(sum.normalize())
    }
}

/// The stored form of a constant rotation: the largest component is dropped (kept non-negative).
fn constant_rotation(q: Quat) -> (u8, [f32; 3], Quat) {
    let v = Vec4::from(q);
    let dropped = (0..4)
        .max_by(|&a, &b| v[a].abs().total_cmp(&v[b].abs()))
        .unwrap_or(3) as u8;
    let v = if v[dropped as usize] < 0.0 { -v } else { v };
    let kept = kept_components(v, dropped);
    (dropped, kept, rebuild_rotation(kept, dropped))
}

fn bbox_mid(vals: &[glam::Vec3]) -> Vec3A {
    let (mut lo, mut hi) = (Vec3A::splat(f32::MAX), Vec3A::splat(f32::MIN));
    for &v in vals {
        lo = lo.min(v.into());
        hi = hi.max(v.into());
    }
    (lo + hi) * 0.5
}

/// The first decisions of [`classify`], per bone: each sub-track's kind is in `p.kinds`; these
/// are what the later steps need beside it.
struct FixedChoice {
    /// Per sub-track: its error bound when fixed (the global target's scale).
    sub_err: Vec<[f32; 3]>,
    /// Per bone: the decoded value of its fixed sub-tracks (bind pose where default).
    fixed: Vec<Xf>,
    /// Per bone: the kept components and the dropped component of its constant rotation.
    const_rot: Vec<([f32; 3], u8)>,
}

fn classify(p: &mut Prepared, target: f32, exact_rotations: bool) {
    let nb = p.num_bones;
    // Levers weighed by the bones each sub-track moves ([`Prepared::dominant_shells`],
    // [`Prepared::chain_weights`]): every error bound below is on the global target's scale.
    let dom = p.dominant_shells(0..p.num_samples);
    let allowed = CONSTANT_SHARE * target;
    let mut c = choose_fixed(p, &dom, allowed);
    // The float32 constants, for the chain guard to fall back on.
    let (fixed32, err32) = (c.fixed.clone(), c.sub_err.clone());
    let (qvals, qbox) = quantize_constants(p, &dom, allowed, &mut c);
    chain_guard(p, &mut c.sub_err, &err32, target);
    // A 16-bit constant the guard sent back to float32 decodes to its float32 value.
    for b in 0..nb {
        if p.kinds[b][0] == KIND_CONSTANT {
            c.fixed[b].r = fixed32[b].r;
        }
        if p.kinds[b][1] == KIND_CONSTANT {
            c.fixed[b].t = fixed32[b].t;
        }
    }
    // The box is stored only when a 16-bit translation survived the chain guard (the reader
    // expects it exactly then).
    if (0..nb).any(|b| p.kinds[b][1] == KIND_CONSTANT_Q) {
        p.qbox = qbox;
    }
    store_tracks(p, &dom, target, exact_rotations, &c, &qvals);
    p.fixed = c.fixed;
    p.clip_dominant_shells = dom;
}

/// Each sub-track default, constant (float32) or animated: the first of default and constant
/// whose error bound fits `allowed`.
fn choose_fixed(p: &mut Prepared, dom: &[f32], allowed: f32) -> FixedChoice {
    let nb = p.num_bones;
    let n = p.num_samples;
    let mut sub_err = vec![[0.0f32; 3]; nb];
    let mut fixed = Vec::with_capacity(nb);
    let mut const_rot = vec![([0.0f32; 3], 3u8); nb];
    for b in 0..nb {
        let (_, trans, scales) = p.clip.track(b);
        let rots = &p.rotations[b * n..(b + 1) * n];
        let sk = &p.clip.skeleton;
        let mut x = Xf {
            r: sk.bind_rotations[b],
            t: sk.bind_translations[b].into(),
            s: sk.bind_scales[b].into(),
        };
        // Rotation.
        let e_def = rots
            .iter()
            .map(|&q| rotation_lever(q, x.r))
            .fold(0.0, f32::max)
            * dom[b];
        let (dropped, kept, qc) = constant_rotation(mean_rotation(rots));
        let e_const = rots
            .iter()
            .map(|&q| rotation_lever(q, qc))
            .fold(0.0, f32::max)
            * dom[b];
        if e_def <= allowed {
            p.kinds[b][0] = KIND_DEFAULT;
            sub_err[b][0] = e_def;
        } else if e_const <= allowed {
            p.kinds[b][0] = KIND_CONSTANT;
            sub_err[b][0] = e_const;
            x.r = qc;
            const_rot[b] = (kept, dropped);
        } else {
            p.kinds[b][0] = KIND_ANIMATED;
        }
        // Translation: an error moves everything below by the same amount, times the parent's scale.
        let ps = p.parent_scale[b] * p.chain_weights[b];
        let tc = bbox_mid(trans);
        let e_def = trans
            .iter()
            .map(|&t| (Vec3A::from(t) - x.t).length())
            .fold(0.0, f32::max)
            * ps;
        let e_const = trans
            .iter()
            .map(|&t| (Vec3A::from(t) - tc).length())
            .fold(0.0, f32::max)
            * ps;
        if e_def <= allowed {
            sub_err[b][1] = e_def;
        } else if e_const <= allowed {
            p.kinds[b][1] = KIND_CONSTANT;
            sub_err[b][1] = e_const;
            x.t = tc;
        } else {
            p.kinds[b][1] = KIND_ANIMATED;
        }
        // Scale: an error scales the whole sub-hierarchy around the bone.
        let sc = bbox_mid(scales);
        let e_def = scales
            .iter()
            .map(|&s| (Vec3A::from(s) - x.s).length())
            .fold(0.0, f32::max)
            * dom[b];
        let e_const = scales
            .iter()
            .map(|&s| (Vec3A::from(s) - sc).length())
            .fold(0.0, f32::max)
            * dom[b];
        if e_def <= allowed {
            sub_err[b][2] = e_def;
        } else if e_const <= allowed {
            p.kinds[b][2] = KIND_CONSTANT;
            sub_err[b][2] = e_const;
            x.s = sc;
        } else {
            p.kinds[b][2] = KIND_ANIMATED;
        }
        fixed.push(x);
    }
    FixedChoice {
        sub_err,
        fixed,
        const_rot,
    }
}

/// 16-bit constants (rotations, and translations in the box of every constant translation)
/// where they are precise enough: half the size of float32 ones. Returns each bone's 16-bit
/// values (rotation, translation) and the box.
#[allow(clippy::type_complexity)]
fn quantize_constants(
    p: &mut Prepared,
    dom: &[f32],
    allowed: f32,
    choice: &mut FixedChoice,
) -> (Vec<[[u16; 3]; 2]>, Option<([f32; 3], [f32; 3])>) {
    let nb = p.num_bones;
    let n = p.num_samples;
    let (sub_err, fixed) = (&mut choice.sub_err, &mut choice.fixed);
    let mut qvals = vec![[[0u16; 3]; 2]; nb];
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for b in (0..nb).filter(|&b| p.kinds[b][1] == KIND_CONSTANT) {
        for c in 0..3 {
            lo[c] = lo[c].min(fixed[b].t[c]);
            hi[c] = hi[c].max(fixed[b].t[c]);
        }
    }
    let qbox = (lo[0] <= hi[0]).then(|| (lo, std::array::from_fn::<f32, 3, _>(|c| hi[c] - lo[c])));
    for b in 0..nb {
        let (_, trans, _) = p.clip.track(b);
        let rots = &p.rotations[b * n..(b + 1) * n];
        if p.kinds[b][0] == KIND_CONSTANT {
            let (kept, dropped) = choice.const_rot[b];
            let q = kept.map(|v| q16_encode(v, -QROT_RANGE, 2.0 * QROT_RANGE));
            let dec = rebuild_rotation(
                q.map(|v| q16_decode(v, -QROT_RANGE, 2.0 * QROT_RANGE)),
                dropped,
            );
            let e = rots
                .iter()
                .map(|&r| rotation_lever(r, dec))
                .fold(0.0, f32::max)
                * dom[b];
            if e <= allowed {
                p.kinds[b][0] = KIND_CONSTANT_Q;
                sub_err[b][0] = e;
                fixed[b].r = dec;
                qvals[b][0] = q;
            }
        }
        if p.kinds[b][1] == KIND_CONSTANT
            && let Some((min, ext)) = qbox
        {
            let q: [u16; 3] = std::array::from_fn(|c| q16_encode(fixed[b].t[c], min[c], ext[c]));
            let dec = Vec3A::from_array(std::array::from_fn(|c| q16_decode(q[c], min[c], ext[c])));
            let e = trans
                .iter()
                .map(|&t| (Vec3A::from(t) - dec).length())
                .fold(0.0, f32::max)
                * (p.parent_scale[b] * p.chain_weights[b]);
            if e <= allowed {
                p.kinds[b][1] = KIND_CONSTANT_Q;
                sub_err[b][1] = e;
                fixed[b].t = dec;
                qvals[b][1] = q;
            }
        }
    }
    (qvals, qbox)
}

/// Chain guard: fixed errors add up along a chain; demote the largest until every chain fits
/// [`FIXED_CHAIN_SHARE`] of `target`. Sets `p.fixed_err`.
fn chain_guard(p: &mut Prepared, sub_err: &mut [[f32; 3]], err32: &[[f32; 3]], target: f32) {
    let nb = p.num_bones;
    let mut work = 0usize;
    loop {
        work += nb;
        if work > CHAIN_GUARD_WORK {
            chain_guard_linear(p, sub_err, err32, FIXED_CHAIN_SHARE * target);
            break;
        }
        let mut chain = vec![0.0f32; nb];
        let mut worst = (0.0f32, 0usize);
        for b in 0..nb {
            let own: f32 = (0..3)
                .filter(|&k| p.kinds[b][k] != KIND_ANIMATED)
                .map(|k| sub_err[b][k])
                .sum();
            chain[b] = own
                + if p.parents[b] == NO_PARENT {
                    0.0
                } else {
                    chain[p.parents[b] as usize]
                };
            if chain[b] > worst.0 {
                worst = (chain[b], b);
            }
        }
        if worst.0 <= FIXED_CHAIN_SHARE * target {
            for b in 0..nb {
                p.fixed_err[b] = (0..3)
                    .filter(|&k| p.kinds[b][k] != KIND_ANIMATED)
                    .map(|k| sub_err[b][k])
                    .sum();
            }
            break;
        }
        // Demote the biggest fixed sub-track on the worst chain.
        let mut best = (0.0f32, 0usize, 0usize);
        let mut a = worst.1;
        loop {
            for k in 0..3 {
                if p.kinds[a][k] != KIND_ANIMATED && sub_err[a][k] > best.0 {
                    best = (sub_err[a][k], a, k);
                }
            }
            match p.parents[a] {
                NO_PARENT => break,
                q => a = q as usize,
            }
        }
        demote(p, sub_err, err32, best.1, best.2);
    }
}

/// Constants in encoding order, dropped components, and the animated tracks.
fn store_tracks(
    p: &mut Prepared,
    dom: &[f32],
    target: f32,
    exact_rotations: bool,
    c: &FixedChoice,
    qvals: &[[[u16; 3]; 2]],
) {
    for b in 0..p.num_bones {
        for k in 0..3 {
            match p.kinds[b][k] {
                KIND_CONSTANT => {
                    let v = match k {
                        0 => {
                            p.dropped[b] = c.const_rot[b].1;
                            c.const_rot[b].0
                        }
                        1 => c.fixed[b].t.to_array(),
                        _ => c.fixed[b].s.to_array(),
                    };
                    p.constants.push(v);
                }
                KIND_CONSTANT_Q => {
                    if k == 0 {
                        p.dropped[b] = c.const_rot[b].1;
                    }
                    p.qconstants.push(qvals[b][k]);
                }
                KIND_ANIMATED => {
                    // Rebuilding may cost a share of the budget at the bone's lever.
                    let rebuild_err = if exact_rotations {
                        0.0
                    } else {
                        REBUILD_SHARE * target / dom[b].max(1e-6)
                    };
                    let (track, dropped) = animated_track(p, b, k, rebuild_err);
                    if let Some(d) = dropped {
                        p.dropped[b] = d;
                    }
                    p.tracks.push(track);
                }
                _ => {}
            }
        }
    }
}

/// Animated sub-track `k` of bone `b`: its stored values and clip range, and for a rotation the
/// dropped component (rebuilding it may cost `rebuild_err` at distance 1).
fn animated_track(p: &Prepared, b: usize, k: usize, rebuild_err: f32) -> (Track, Option<u8>) {
    let n = p.num_samples;
    let (_, trans, scales) = p.clip.track(b);
    let rots = &p.rotations[b * n..(b + 1) * n];
    let ns = p.num_stored;
    // The reference as the runtime decodes it, and the rotations relative to it.
    let reference = if k == 0 {
        p.references.get(b).copied().flatten().and_then(|r| {
            let stored = reference_encode3(r);
            reference_decode3(stored).map(|d| (d, stored))
        })
    } else {
        None
    };
    let relative: Vec<Quat>;
    let rots = match reference {
        Some((r, _)) => {
            let inv = r.conjugate();
            relative = rots.iter().map(|&q| (inv * q).normalize()).collect();
            &relative[..]
        }
        None => rots,
    };
    let mut seg_dropped = vec![3u8; p.num_segments];
    let mut per_segment = false;
    let mut w = Vec::new();
    let mut track_dropped = None;
    let values: Vec<[f32; 3]> = match k {
        0 => {
            let (dropped, vals) =
                rotation_track_values(p, &rots[..ns], &mut seg_dropped, rebuild_err, &mut w);
            per_segment = dropped == DROPPED_PER_SEGMENT;
            track_dropped = Some(dropped);
            vals
        }
        1 => trans[..ns].iter().map(|v| v.to_array()).collect(),
        _ => scales[..ns].iter().map(|v| v.to_array()).collect(),
    };
    let mut lo = [f32::MAX; 3];
    let mut hi = [f32::MIN; 3];
    for v in &values {
        for c in 0..3 {
            lo[c] = lo[c].min(v[c]);
            hi[c] = hi[c].max(v[c]);
        }
    }
    let mut ext = std::array::from_fn(|c| (hi[c] - lo[c]).max(0.0));
    let mut rot_range_q = [0u16; 6];
    if k == 0 {
        // Stored in 16 bits (format version 3): quantize with the decoded range.
        for c in 0..3 {
            let (mq, eq) = rot_range_encode(lo[c], hi[c]);
            (lo[c], ext[c]) = rot_range_decode(mq, eq);
            rot_range_q[c] = mq;
            rot_range_q[3 + c] = eq;
        }
    }
    let track = Track {
        bone: b,
        kind: k,
        values,
        dropped: seg_dropped,
        per_segment_dropped: per_segment,
        w,
        clip_min: lo,
        clip_ext: ext,
        rot_range_q,
        reference,
    };
    (track, track_dropped)
}

/// One step of the chain guard for fixed sub-track `k` of bone `b`: a 16-bit constant falls
/// back to its float32 constant (error `err32`), anything else becomes animated. A looser
/// threshold lets more constants into 16 bits; sending those straight to animated made a clip
/// bigger at a looser threshold (ACL's one-sample 121_10: 992 B at 0.001 cm, all constants in
/// float32; 1,188 B at 0.003 cm, 29 of its 16-bit constants animated).
fn demote(p: &mut Prepared, sub_err: &mut [[f32; 3]], err32: &[[f32; 3]], b: usize, k: usize) {
    if p.kinds[b][k] == KIND_CONSTANT_Q {
        p.kinds[b][k] = KIND_CONSTANT;
        sub_err[b][k] = err32[b][k];
    } else {
        p.kinds[b][k] = KIND_ANIMATED;
    }
}

/// The chain guard's fallback for huge hierarchies, in one pass parents first: each bone whose
/// chain is over `limit` demotes its own fixed sub-tracks ([`demote`]), largest first, until it
/// fits (its parent's chain already fits, so it always can). Sets `fixed_err` like the guard.
fn chain_guard_linear(p: &mut Prepared, sub_err: &mut [[f32; 3]], err32: &[[f32; 3]], limit: f32) {
    let nb = p.num_bones;
    let mut chain = vec![0.0f32; nb];
    for b in 0..nb {
        let above = match p.parents[b] {
            NO_PARENT => 0.0,
            q => chain[q as usize],
        };
        let own = |p: &Prepared, sub_err: &[[f32; 3]]| -> f32 {
            (0..3)
                .filter(|&k| p.kinds[b][k] != KIND_ANIMATED)
                .map(|k| sub_err[b][k])
                .sum()
        };
        while above + own(p, sub_err) > limit {
            let Some(k) = (0..3)
                .filter(|&k| p.kinds[b][k] != KIND_ANIMATED)
                .max_by(|&x, &y| sub_err[b][x].total_cmp(&sub_err[b][y]))
            else {
                break;
            };
            demote(p, sub_err, err32, b, k);
        }
        p.fixed_err[b] = own(p, sub_err);
        chain[b] = above + p.fixed_err[b];
    }
}

/// Makes a rotation track continuous (each sample in the hemisphere of the previous), picks the
/// component that stays farthest from zero to drop (ACL always drops W; the largest one loses
/// less precision), and returns the three kept components with the dropped one made
/// non-negative. When every component nears zero somewhere (a root turning around), the choice
/// is made per segment instead and [`DROPPED_PER_SEGMENT`] is returned; `seg_dropped` gets the
/// component dropped in each segment.
fn rotation_track_values(
    p: &Prepared,
    rots: &[Quat],
    seg_dropped: &mut [u8],
    max_err: f32,
    w: &mut Vec<f32>,
) -> (u8, Vec<[f32; 3]>) {
    let mut aligned: Vec<Vec4> = Vec::with_capacity(rots.len());
    for &q in rots {
        let v = Vec4::from(q);
        let v = match aligned.last() {
            Some(prev) if prev.dot(v) < 0.0 => -v,
            _ => v,
        };
        aligned.push(v);
    }
    let best_of = |samples: &[Vec4], candidates: &[u8]| -> (u8, f32) {
        candidates
            .iter()
            .map(|&j| {
                (
                    j,
                    samples
                        .iter()
                        .map(|v| v[j as usize].abs())
                        .fold(f32::MAX, f32::min),
                )
            })
            .max_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
            .unwrap_or((3, 1.0))
    };
    let keep = |v: Vec4, j: u8| kept_components(if v[j as usize] < 0.0 { -v } else { v }, j);
    // At clip level the per-segment marker value is not a component choice.
    let (dropped, min_abs) = best_of(&aligned, &[0, 1, 3]);
    if min_abs >= MIN_CLIP_DROPPED && rebuild_error(min_abs, 1.0) <= max_err {
        seg_dropped.iter_mut().for_each(|d| *d = dropped);
        return (dropped, aligned.iter().map(|&v| keep(v, dropped)).collect());
    }
    let mut vals = Vec::with_capacity(aligned.len());
    for (s, d) in seg_dropped.iter_mut().enumerate() {
        let (start, len) = p.segment_span(s);
        let seg = &aligned[start..start + len];
        let (best, min_abs) = best_of(seg, &[0, 1, 2, 3]);
        if rebuild_error(min_abs, 1.0) <= max_err {
            *d = best;
            vals.extend(seg.iter().map(|&v| keep(v, best)));
        } else {
            // Every component nears zero somewhere in the segment (a pose that turns half way
            // round between two samples): keep all four, w raw.
            *d = DROPPED_NONE;
            if w.is_empty() {
                w.resize(aligned.len(), 0.0);
            }
            for (i, &v) in seg.iter().enumerate() {
                w[start + i] = v.w;
            }
            vals.extend(seg.iter().map(|&v| kept_components(v, 3)));
        }
    }
    (DROPPED_PER_SEGMENT, vals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CompressionSettings;
    use crate::generate::{GenerateOptions, generate};
    use crate::skeleton::{BoneDesc, Skeleton};

    /// A random hierarchy (each bone's parent any earlier bone, or none) over a generated clip's
    /// samples, so object space varies.
    fn random_tree_clip(seed: u64, nb: usize) -> RawClip {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let base = generate(&GenerateOptions {
            num_samples: 12,
            seed,
            with_scale: true,
            ..Default::default()
        });
        let src = base.num_bones();
        let descs: Vec<BoneDesc> = (0..nb)
            .map(|b| {
                let parent = (b > 0 && next() % 8 != 0).then(|| next() as usize % b);
                BoneDesc::new(format!("b{b}"), parent)
            })
            .collect();
        let n = base.num_samples;
        let pick = |v: &[glam::Vec3]| -> Vec<glam::Vec3> {
            (0..nb * n).map(|i| v[(i / n % src) * n + i % n]).collect()
        };
        RawClip::new(
            "tree",
            Skeleton::from_ordered(descs).unwrap(),
            base.sample_rate,
            n,
            (0..nb * n)
                .map(|i| base.rotations[(i / n % src) * n + i % n])
                .collect(),
            pick(&base.translations),
            pick(&base.scales),
        )
        .unwrap()
    }

    #[test]
    fn the_linear_dominant_shell_bound_is_never_below_the_exact_value() {
        for seed in 1..20u64 {
            let clip = random_tree_clip(seed, 40);
            let mut p = prepare(&clip, &CompressionSettings::default(), 0.01);
            assert!(p.exact_dominant_shells);
            let exact = p.dominant_shells(0..clip.num_samples);
            p.exact_dominant_shells = false;
            let bound = p.dominant_shells(0..clip.num_samples);
            for b in 0..clip.num_bones() {
                assert!(
                    bound[b] >= exact[b] * (1.0 - 1e-5),
                    "seed {seed} bone {b}: {} < {}",
                    bound[b],
                    exact[b]
                );
            }
            // Leaves: both are the bone's own reach.
            for b in (0..clip.num_bones()).filter(|&b| !p.parents.contains(&(b as u32))) {
                assert!((bound[b] - exact[b]).abs() <= 1e-6 * exact[b].max(1.0));
            }
        }
    }

    #[test]
    fn the_linear_chain_guard_keeps_every_chain_within_the_limit() {
        for seed in 1..10u64 {
            let clip = random_tree_clip(seed, 60);
            let mut p = prepare(&clip, &CompressionSettings::default(), 0.01);
            let nb = p.num_bones;
            // Every sub-track fixed, with errors that overflow long chains.
            let mut sub_err: Vec<[f32; 3]> = (0..nb)
                .map(|b| [0.001 * (b % 3) as f32, 0.002, 0.0005 * (b % 5) as f32])
                .collect();
            p.kinds = vec![[KIND_CONSTANT; 3]; nb];
            let limit = 0.005;
            let err32 = sub_err.clone();
            chain_guard_linear(&mut p, &mut sub_err, &err32, limit);
            let mut chain = vec![0.0f32; nb];
            for b in 0..nb {
                let own: f32 = (0..3)
                    .filter(|&k| p.kinds[b][k] != KIND_ANIMATED)
                    .map(|k| sub_err[b][k])
                    .sum();
                assert_eq!(own, p.fixed_err[b]);
                chain[b] = own
                    + match p.parents[b] {
                        NO_PARENT => 0.0,
                        q => chain[q as usize],
                    };
                assert!(chain[b] <= limit * (1.0 + 1e-6), "bone {b}: {}", chain[b]);
            }
            assert!(p.kinds.iter().flatten().any(|&k| k == KIND_CONSTANT));
        }
    }
}
