//! Per-segment bit-width search, aware of the hierarchy.
//!
//! Each animated sub-track gets a ladder of levels; a level fixes a quantization step and gives
//! every component the fewest bits reaching it (components with a small range need fewer bits,
//! where ACL uses one rate for all three). A level's error is measured in the bone's local
//! space at its dominant shell distance. Errors add up along a chain (a parent's error moves
//! every child), so with a budget B per chain the cheapest choice of levels is a tree dynamic
//! program over discretised budgets. The additive bound is pessimistic, so the budget is then
//! scaled up as far as the real object-space error (decoded exactly as the runtime decodes)
//! allows. That scaling stops when the worst chain meets the target and leaves slack on the
//! others, so a greedy pass then makes each track coarser, roots first (by levels, then by
//! one bit of one component), while the real error of the bones it moves stays within the
//! target (`SegmentCtx::refine`; 6 % of the bytes on ACL's regression clips, 6 % on the BVH
//! clips, leaves first; roots first 1.5 % more). With per-bone thresholds every error is
//! weighed by its bone's weight (`Prepared::weights`; levers by the bones they move), so the
//! one target stands for each bone's own threshold.

use super::lanes;
use super::prepare::{Prepared, Xf, raw_vertices, vertex_error_to};
use crate::pose::Compose;
use crate::runtime::quant::{Dequant, MAX_BITS, RAW_BITS, SEGMENT_RANGE_STEPS};
use crate::skeleton::NO_PARENT;
use glam::{Quat, Vec3A, Vec4};

/// The search aims this fraction under the target: it measures in float32, the final check in float64.
pub(crate) const SEARCH_SAFETY: f32 = 0.99;
/// Budget buckets of the dynamic program.
const BUCKETS: usize = 48;
/// Entries of a table over the buckets (0 to [`BUCKETS`] inclusive).
const K1: usize = BUCKETS + 1;
const INF: u32 = u32::MAX / 4;
/// The largest chain budget tried, as a multiple of the target.
const MAX_BUDGET_MULTIPLIER: f32 = 8.0;
/// Rows (samples, and the wrapped one) up to which a segment's budget search takes the first
/// budget that passes, on a grid of whole steps of 1.4 ([`SegmentCtx::best_allocation`]).
const TINY_SEGMENT_ROWS: usize = 3;

/// The segment's decisions for every animated sub-track.
#[derive(Default)]
pub(crate) struct SegmentChoice {
    /// 8-bit segment range inside the clip range: min x,y,z then extent x,y,z.
    pub ranges: Vec<[u8; 6]>,
    pub widths: Vec<[u32; 3]>,
}

struct Level {
    widths: [u32; 3],
    cost: u32,
    err: f32,
}

fn segment_range(values: &[[f32; 3]], min: [f32; 3], ext: [f32; 3], multi: bool) -> [u8; 6] {
    if !multi {
        return [0, 0, 0, 255, 255, 255];
    }
    let mut r = [0u8; 6];
    for c in 0..3 {
        if ext[c] <= 0.0 {
            continue;
        }
        let (mut lo, mut hi) = (f32::MAX, f32::MIN);
        for v in values {
            lo = lo.min(v[c]);
            hi = hi.max(v[c]);
        }
        let nlo = ((lo - min[c]) / ext[c] * SEGMENT_RANGE_STEPS)
            .floor()
            .clamp(0.0, 255.0) as u8;
        let nhi = ((hi - min[c]) / ext[c] * SEGMENT_RANGE_STEPS)
            .ceil()
            .clamp(nlo as f32, 255.0) as u8;
        r[c] = nlo;
        r[3 + c] = nhi - nlo;
    }
    r
}

/// The dequantizers of one track in one segment (the encoder writes with the same ones).
#[inline(always)]
pub(super) fn dequants(
    p: &Prepared,
    track: usize,
    range: &[u8; 6],
    widths: [u32; 3],
) -> [Dequant; 3] {
    let t = &p.tracks[track];
    let dq = |c: usize| {
        Dequant::new(
            t.clip_min[c],
            t.clip_ext[c],
            range[c],
            range[3 + c],
            // A raw float32 component has no dequantizer (any one will do, it is not used).
            widths[c].min(MAX_BITS),
        )
    };
    // Spelled out rather than `array::from_fn`, which the search's hot loops do not always get
    // inlined (it showed up as its own 2 % in profiles).
    [dq(0), dq(1), dq(2)]
}

/// Decoded value of a track's stored sample, exactly as the runtime computes it.
#[inline(always)]
fn decode_value(v: &[f32; 3], dq: &[Dequant; 3], widths: [u32; 3]) -> [f32; 3] {
    let one = |c: usize| {
        if widths[c] == RAW_BITS {
            v[c]
        } else {
            dq[c].value(dq[c].quantize(v[c], widths[c]))
        }
    };
    [one(0), one(1), one(2)]
}

/// The raw float32 level of a track: every component that varies over the clip is stored
/// verbatim, so the decoded values are the values themselves (a component constant over the
/// clip decodes exactly to its clip minimum with 0 bits).
pub(super) fn raw_widths(p: &Prepared, track: usize) -> [u32; 3] {
    let t = &p.tracks[track];
    std::array::from_fn(|c| if t.clip_ext[c] > 0.0 { RAW_BITS } else { 0 })
}

/// Smallest |dot| between the raw rotations of `bone` at the samples of `refs` and their
/// neighbours: how far from half a turn apart the closest pair of samples is.
fn min_arc_dot(p: &Prepared, bone: usize, refs: &[(usize, usize)]) -> f32 {
    let n = p.num_samples;
    let raw = &p.rotations[bone * n..(bone + 1) * n];
    let mut m = f32::MAX;
    for &(_, j) in refs {
        for jn in [j.wrapping_sub(1), j + 1] {
            if jn < n {
                m = m.min(Vec4::from(raw[j]).dot(Vec4::from(raw[jn])).abs());
            }
        }
    }
    m
}

/// Whether the decoded rotations of `bone` (`dec(r)` at `refs[r]`) keep every interval on the
/// raw clip's side of the sphere. The runtime blends two samples on the shorter arc, chosen by
/// the sign of their dot product; between raw samples nearly half a turn apart (CMU 131_02's
/// right thumb flips ~20 times, |dot| down to 1.5e-5) an error larger than |dot| can flip that
/// sign, and the point between the two samples is then half a turn off: 5.8 cm at the thumb's
/// midpoint, whatever the threshold. The search measures at the samples only, so it checks the
/// sign here. An interval inside the segment keeps the sign of its decoded dot; one to a sample
/// of another segment (not decoded here) holds this end within |dot|/3 of its raw value, which,
/// each end doing so, keeps the sign (|Δdot| ≤ 2|dot|/3 + dot²/9). The check does not depend
/// on the threshold, so a looser one never refuses what a tighter one allows (before, only the
/// float64 check saw the flip, and re-searching at 0.7× the target for 6 rounds could not reach
/// the precision it takes from a loose start: the clip fell to the last resort). `min_dot` is
/// [`min_arc_dot`]: ends within a third of it keep every arc, the common case, checked first.
fn keeps_arcs(
    p: &Prepared,
    bone: usize,
    refs: &[(usize, usize)],
    min_dot: f32,
    dec: impl Fn(usize) -> Quat,
) -> bool {
    let n = p.num_samples;
    let raw = &p.rotations[bone * n..(bone + 1) * n];
    // Each decoded rotation on its raw sample's side (q and -q are the same rotation).
    let aligned = |r: usize| {
        let (d, q) = (Vec4::from(dec(r)), Vec4::from(raw[refs[r].1]));
        if d.dot(q) < 0.0 { -d } else { d }
    };
    let err = |r: usize| (aligned(r) - Vec4::from(raw[refs[r].1])).length();
    if (0..refs.len()).all(|r| err(r) <= min_dot / 3.0) {
        return true;
    }
    for (r, &(_, j)) in refs.iter().enumerate() {
        let q = Vec4::from(raw[j]);
        for jn in [j.wrapping_sub(1), j + 1] {
            if jn >= n {
                continue;
            }
            let c = q.dot(Vec4::from(raw[jn]));
            let kept = match refs.iter().position(|x| x.1 == jn) {
                Some(rn) => (aligned(r).dot(aligned(rn)) < 0.0) == (c < 0.0),
                None => err(r) <= c.abs() / 3.0,
            };
            if !kept {
                return false;
            }
        }
    }
    true
}

struct SegmentCtx<'a> {
    p: &'a Prepared<'a>,
    seg: usize,
    /// (stored sample, raw sample it must reproduce)
    refs: Vec<(usize, usize)>,
    ranges: Vec<[u8; 6]>,
    /// Per track: the levels measured so far, coarse to fine ([`SegmentCtx::extend_ladder`]).
    levels: Vec<Vec<Level>>,
    /// Per track: where its ladder goes on.
    cursors: Vec<LadderCursor>,
    /// Per bone: the dominant shell distance over the segment's samples (the ladders' levers).
    dom: Vec<f32>,
    /// The segment's target (the ladders' ends).
    target: f32,
    /// Animated tracks of each bone.
    bone_tracks: Vec<Vec<usize>>,
    /// Per bone: whether it or a bone below it has an animated track (the others' subtrees
    /// are 0 from a fixed bucket on in every budget: [`SegmentCtx::allocate`] reduces them to
    /// that bucket).
    active: Vec<bool>,
    /// Per track: [`min_arc_dot`] of a rotation's bone; infinite (no check) for the others.
    arc_dots: Vec<f32>,
    /// Per row of `refs` and bone: [`raw_vertices`] of the raw object transform (measured
    /// against at every budget tried and every refinement trial).
    raw_v: Vec<[Vec3A; 3]>,
    /// Per track: its samples as lanes ([`lanes::TrackLanes`], the ladders' input).
    lanes: Vec<lanes::TrackLanes>,
    /// The raw side as lanes, for a clip that is not additive ([`RawLanes`]).
    raw_lanes: Option<RawLanes>,
    /// The dynamic program's tables ([`SegmentCtx::allocate`]).
    dp: std::cell::RefCell<DpTables>,
    /// Row where the last failing choice failed ([`SegmentCtx::real_error_within`]).
    hot_row: std::cell::Cell<usize>,
    /// A ladder level's decoded rotations and errors per row ([`measure_level`]'s scratch).
    ladder_rots: Vec<Quat>,
    ladder_errs: Vec<f32>,
}

/// What the lanes kernels read of the raw clip in one segment, per chunk of [`lanes::L`] rows
/// (padded with copies of the first row) and bone, `chunk * bones + bone`.
struct RawLanes {
    /// Raw object translation and [`raw_vertices`].
    raw: Vec<lanes::RawL>,
    /// Raw local translation (a root's decoded translation is measured against it).
    root_t: Vec<[[f32; lanes::L]; 3]>,
    /// Per bone: its default/constant sub-tracks' decoded value in every lane.
    fixed: Vec<lanes::XfL>,
}

impl RawLanes {
    fn new(p: &Prepared, refs: &[(usize, usize)], raw_v: &[[Vec3A; 3]]) -> Self {
        let nb = p.num_bones;
        let chunks = refs.len().div_ceil(lanes::L);
        let mut raw = vec![[[0.0f32; lanes::L]; 12]; chunks * nb];
        let mut root_t = vec![[[0.0f32; lanes::L]; 3]; chunks * nb];
        for c in 0..chunks {
            for l in 0..lanes::L {
                let r = if c * lanes::L + l < refs.len() {
                    c * lanes::L + l
                } else {
                    0
                };
                let j = refs[r].1;
                for b in 0..nb {
                    let x = &mut raw[c * nb + b];
                    let t = p.raw_obj[j * nb + b].t;
                    let v = &raw_v[r * nb + b];
                    let vals = [
                        t.x, t.y, t.z, v[0].x, v[0].y, v[0].z, v[1].x, v[1].y, v[1].z, v[2].x,
                        v[2].y, v[2].z,
                    ];
                    for (a, val) in x.iter_mut().zip(vals) {
                        a[l] = val;
                    }
                    let rt = p.raw_root_translation(b, j);
                    for (a, val) in root_t[c * nb + b].iter_mut().zip(rt.to_array()) {
                        a[l] = val;
                    }
                }
            }
        }
        RawLanes {
            raw,
            root_t,
            fixed: p.fixed.iter().map(lanes::splat).collect(),
        }
    }
}

/// The tables of [`SegmentCtx::allocate`], kept between the budgets it tries.
#[derive(Default)]
struct DpTables {
    /// Per track and bucket: the cheapest level's cost and index.
    track_best: Vec<[(u32, u32); K1]>,
    /// Per track and bucket of its bone's tracks so far: the bucket the track gets.
    split: Vec<[u8; K1]>,
    /// Per bone and bucket: the cheapest cost of its own sub-tracks.
    bone_cost: Vec<[u32; K1]>,
    /// Per bone: its children's subtrees summed, when it has any (`has_below`).
    below: Vec<[u32; K1]>,
    has_below: Vec<bool>,
    /// Per bone and bucket: the cheapest cost of its subtree, and the bucket the bone keeps.
    subtree: Vec<[u32; K1]>,
    subtree_arg: Vec<[u8; K1]>,
    steps: Vec<(usize, u32)>,
    steps_b: Vec<(usize, u32)>,
    /// Per bone without anything animated at or below it: its fixed bucket, and the largest
    /// bucket its children's subtrees start from.
    fixed_from: Vec<usize>,
    children_from: Vec<usize>,
}

impl DpTables {
    /// The cheapest cost of a bone's own sub-tracks per bucket (min-plus convolution of their
    /// `track_best` tables, from 0 at the bone's fixed bucket `jf` on), remembering each split,
    /// into `bone_cost[b]`.
    fn bone_table(&mut self, b: usize, tracks: &[usize], jf: usize) {
        let cur = &mut self.bone_cost[b];
        *cur = [INF; K1];
        cur[jf..].fill(0);
        for (n, &k) in tracks.iter().enumerate() {
            steps(self.track_best[k].iter().map(|x| x.0), &mut self.steps);
            let split = &mut self.split[k];
            *split = [0; K1];
            if n == 0 {
                // `cur` is 0 from `jf` on and INF below, and the steps' costs fall strictly:
                // the convolution's minimum at `j` is the last step at or below `j - jf`, the
                // split it keeps (the first reaching that minimum) that step: each step holds
                // from its bucket (shifted by `jf`) to the next one's. One pass over the
                // buckets instead of steps × buckets (most bones animate one track).
                *cur = [INF; K1];
                for (s, &(i, cost)) in self.steps.iter().enumerate() {
                    let from = (jf + i).min(K1);
                    let to = self.steps.get(s + 1).map_or(K1, |x| (jf + x.0).min(K1));
                    cur[from..to].fill(cost);
                    split[from..to].fill(i as u8);
                }
                continue;
            }
            // The track's steps against the table so far; the split is the track's bucket.
            // No overflow: step values are below INF = u32::MAX / 4.
            steps(cur.iter().copied(), &mut self.steps_b);
            min_plus(&self.steps, &self.steps_b, cur, split);
        }
    }
}

/// Searches one segment; `start` is the budget multiplier to try first (the previous segment's
/// result is a good guess). Returns the choice and the multiplier it used.
pub(crate) fn search_segment(
    p: &Prepared,
    seg: usize,
    target: f32,
    start_m: f32,
) -> (SegmentChoice, f32) {
    let (start, len) = p.segment_span(seg);
    let multi = p.num_segments > 1;
    let mut refs: Vec<(usize, usize)> = (start..start + len).map(|i| (i, i)).collect();
    if seg == 0 && p.wrap {
        refs.push((0, p.num_samples - 1));
    }
    // Levers weighed by the bones each track moves (`Prepared::dominant_shells`).
    // A clip of one segment: its rows are every sample of the clip (the wrapped one too), whose
    // dominant shells the classification measured (the same maxima over the same samples).
    let dom = if p.num_segments == 1 && !p.clip_dominant_shells.is_empty() {
        p.clip_dominant_shells.clone()
    } else {
        p.dominant_shells(refs.iter().map(|r| r.1))
    };
    let ranges: Vec<[u8; 6]> = p
        .tracks
        .iter()
        .map(|t| segment_range(&t.values[start..start + len], t.clip_min, t.clip_ext, multi))
        .collect();
    let mut bone_tracks = vec![Vec::new(); p.num_bones];
    for (k, t) in p.tracks.iter().enumerate() {
        bone_tracks[t.bone].push(k);
    }
    // Children come after their parents.
    let mut active: Vec<bool> = bone_tracks.iter().map(|t| !t.is_empty()).collect();
    for b in (0..p.num_bones).rev() {
        if active[b] && p.parents[b] != NO_PARENT {
            active[p.parents[b] as usize] = true;
        }
    }
    // The other arc turns the bone half a turn at worst, 2 × its lever: a target above that
    // needs no check (infinite: every level passes `keeps_arcs` at once).
    let arc_dots: Vec<f32> = p
        .tracks
        .iter()
        .map(|t| match t.kind {
            0 if 2.0 * dom[t.bone] > target => min_arc_dot(p, t.bone, &refs),
            _ => f32::INFINITY,
        })
        .collect();
    let (levels, cursors) = (0..p.tracks.len())
        .map(|k| ladder_start(p, k, &ranges[k], &refs, &dom, target))
        .unzip();
    let nb = p.num_bones;
    let mut raw_v: Vec<[Vec3A; 3]> = Vec::with_capacity(refs.len() * nb);
    for &(_, j) in &refs {
        raw_v.extend((0..nb).map(|b| raw_vertices(&p.raw_obj[j * nb + b], p.shells[b])));
    }
    let track_lanes = p
        .tracks
        .iter()
        .map(|t| {
            let mut l = lanes::TrackLanes::default();
            l.fill(p, t, seg, &refs);
            l
        })
        .collect();
    // Additive clips combine every decoded value with the base first: those keep the
    // one-row code; so do segments of fewer rows than a chunk (clips under 8 samples), where
    // the padded lanes cost more than the rows (82_01, two samples: 0.21 → 0.25 ms).
    let raw_lanes =
        (p.base.is_none() && refs.len() >= lanes::L).then(|| RawLanes::new(p, &refs, &raw_v));
    let mut ctx = SegmentCtx {
        p,
        seg,
        refs,
        ranges,
        levels,
        cursors,
        dom,
        target,
        bone_tracks,
        active,
        arc_dots,
        raw_v,
        lanes: track_lanes,
        raw_lanes,
        dp: Default::default(),
        hot_row: Default::default(),
        ladder_rots: Vec::new(),
        ladder_errs: Vec::new(),
    };
    let (widths, m) = ctx.best_allocation(target, start_m);
    (
        SegmentChoice {
            ranges: ctx.ranges,
            widths,
        },
        m,
    )
}

/// The last resort for one segment: every animated component that varies over the clip stored
/// as raw float32, so the segment's error is float32 rounding alone.
pub(crate) fn raw_segment(p: &Prepared, seg: usize) -> SegmentChoice {
    let (start, len) = p.segment_span(seg);
    let multi = p.num_segments > 1;
    SegmentChoice {
        ranges: p
            .tracks
            .iter()
            .map(|t| segment_range(&t.values[start..start + len], t.clip_min, t.clip_ext, multi))
            .collect(),
        widths: (0..p.tracks.len()).map(|k| raw_widths(p, k)).collect(),
    }
}

/// Where a track's ladder goes on ([`SegmentCtx::extend_ladder`]): levels in half-octave steps
/// of the quantization step, from `level` on, skipping steps that give the widths of the last one.
struct LadderCursor {
    /// The track's range in the segment, per component.
    r: [f32; 3],
    level: f32,
    last: [u32; 3],
    done: bool,
    /// Per component: widths from 2 up to this one are measured as 1 bit ([`two_row_fine_from`]);
    /// 0 (never) unless the segment has two rows.
    fine_from: [u32; 3],
}

/// On a segment of two rows both rows of a component decode to the ends of its range at 1 bit:
/// its values themselves, up to the rounding of the range (a rotation's clip range is stored in
/// 16 bits). A finer width decodes a row to something else only once half its step is below that
/// rounding (the row's value is nearer to the end than to the next step), so the widths from 2
/// up to there decode as 1 bit does, cost more and measure the same error (to float rounding):
/// the ladder gives those components 1 bit there instead (what a two-sample clip's components
/// end at: 50 of 54 on 81_16), and the levels that then repeat the last one are not measured.
/// Per component the first width that can decode differently (at most [`MAX_BITS`]).
fn two_row_fine_from(
    p: &Prepared,
    k: usize,
    range: &[u8; 6],
    r: [f32; 3],
    refs: &[(usize, usize)],
) -> [u32; 3] {
    if refs.len() != 2 {
        return [0; 3];
    }
    let t = &p.tracks[k];
    let one = [1u32; 3];
    let dq = dequants(p, k, range, one);
    let mut off = [0.0f32; 3];
    for &(i, _) in refs {
        let d = decode_value(&t.values[i], &dq, one);
        for c in 0..3 {
            off[c] = off[c].max((t.values[i][c] - d[c]).abs());
        }
    }
    std::array::from_fn(|c| {
        if off[c].is_nan() || off[c] <= 0.0 || r[c] <= 0.0 {
            return MAX_BITS;
        }
        // The first w with r / (2^w − 1) < 2·off.
        let w = ((r[c] / (2.0 * off[c]) + 1.0).log2().floor() as u32).saturating_add(1);
        w.clamp(2, MAX_BITS)
    })
}

/// The start of a track's ladder in one segment: no level measured yet, or the one level of a
/// track constant over the segment (its error is measured when the ladder is extended).
fn ladder_start(
    p: &Prepared,
    k: usize,
    range: &[u8; 6],
    refs: &[(usize, usize)],
    dom: &[f32],
    target: f32,
) -> (Vec<Level>, LadderCursor) {
    let t = &p.tracks[k];
    let r: [f32; 3] =
        std::array::from_fn(|c| t.clip_ext[c] * (range[3 + c] as f32 / SEGMENT_RANGE_STEPS));
    let max_r = r.iter().cloned().fold(0.0f32, f32::max);
    // The dynamic program never uses a level whose error is above the largest budget it tries,
    // so the ladder starts about there (from the error a step produces at this track's lever)
    // rather than at "all 0 bits".
    let lever = match t.kind {
        0 => 2.0 * dom[t.bone],
        1 => p.parent_scale[t.bone] * p.chain_weights[t.bone],
        _ => dom[t.bone],
    }
    .max(1e-6);
    let coarsest_useful = -((MAX_BUDGET_MULTIPLIER * target) / lever).log2() - 1.0;
    let level = if max_r <= 0.0 {
        0.0
    } else {
        (-max_r.log2() - 0.5).max(coarsest_useful.floor())
    };
    (
        // Most ladders measure up to ~10 levels (one allocation, not four growths).
        Vec::with_capacity(12),
        LadderCursor {
            r,
            level,
            last: [u32::MAX; 3],
            done: false,
            fine_from: two_row_fine_from(p, k, range, r, refs),
        },
    )
}

/// One level of track `k` in segment `seg`: its widths, cost and local error (the largest over
/// the segment's samples, at the bone's lever). A level whose error is over every budget the
/// dynamic program can try gets an infinite error as soon as one sample shows it (the coarse
/// levels of a ladder: their exact error is never read).
#[allow(clippy::too_many_arguments)]
fn measure_level(
    p: &Prepared,
    k: usize,
    seg: usize,
    range: &[u8; 6],
    refs: &[(usize, usize)],
    dom: &[f32],
    target: f32,
    arc_dot: f32,
    widths: [u32; 3],
    lanes: &lanes::TrackLanes,
    errs: &mut Vec<f32>,
    rots: &mut Vec<Quat>,
) -> Level {
    let t = &p.tracks[k];
    let translation_lever = p.parent_scale[t.bone] * p.chain_weights[t.bone];
    // Above this no budget bucket holds the level (budgets are at most MAX_BUDGET_MULTIPLIER ×
    // the target; 1 % over it covers their rounding).
    let unusable = MAX_BUDGET_MULTIPLIER * 1.01 * target;
    let len = p.segment_span(seg).1;
    let dq = dequants(p, k, range, widths);
    let lever = match t.kind {
        0 => dom[t.bone],
        1 => translation_lever,
        _ => dom[t.bone],
    };
    // Every row's error at once (`lanes`), folded in row order as one row at a time did.
    lanes::errors(lanes, t, seg, &dq, widths, lever, errs, rots);
    let mut err = 0.0f32;
    for &e in errs.iter() {
        err = err.max(e);
        if err > unusable {
            err = f32::INFINITY;
            break;
        }
    }
    // A level that moves an interval to the other arc is never usable (`keeps_arcs`).
    if t.kind == 0 && err.is_finite() && !keeps_arcs(p, t.bone, refs, arc_dot, |r| rots[r]) {
        err = f32::INFINITY;
    }
    Level {
        widths,
        cost: (widths[0] + widths[1] + widths[2]) * len as u32,
        err,
    }
}

/// The buckets where `table`, non-increasing, steps down to a new finite value, with that value.
/// The dynamic program's min-plus convolutions run over these alone: both operands are
/// non-increasing in the budget, so within a flat stretch of `table` the first bucket is at
/// least as good as any later one, and the first bucket reaching the minimum (the split the
/// full loop keeps) is always a step. Same result as every bucket pair, at buckets × steps
/// instead of buckets² (the DP was 35–60 % of a search round; a ladder has ~10–20 levels).
fn steps(table: impl Iterator<Item = u32>, out: &mut Vec<(usize, u32)>) {
    out.clear();
    let mut last = INF;
    for (i, v) in table.enumerate() {
        if v < last {
            out.push((i, v));
            last = v;
        }
    }
}

/// The min-plus convolution of two non-increasing tables given by their [`steps`] `a` and `b`:
/// `out[r] = min over i ≤ r of A[i] + B[r − i]`, with `arg[r]` the smallest `i` reaching it
/// (INF and 0 where nothing is finite), what the loop over `a`'s steps and every bucket gives.
/// `B[r − i]` is the last step of `b` at or below `r − i`, so the minimum is over pairs of
/// steps `(i, m)` with `i + m ≤ r`, and the smallest `i` among the pairs reaching it is the
/// smallest `i` reaching it in that loop (a pair reaches it only if `A[i] + B[r − i]` does, and
/// a step `i` that does has such a pair): the lexicographic minimum of (value, `i`) over the
/// pairs at or below `r`, at `a` × `b` steps instead of `a` steps × buckets (the tree's
/// convolutions were a third of a two-sample clip's dynamic program).
fn min_plus(a: &[(usize, u32)], b: &[(usize, u32)], out: &mut [u32; K1], arg: &mut [u8; K1]) {
    let mut at = [(INF, 0u8); K1];
    for &(i, ca) in a {
        for &(m, cb) in b {
            let r = i + m;
            if r >= K1 {
                break;
            }
            let c = (ca + cb, i as u8);
            if c.0 < INF && c < at[r] {
                at[r] = c;
            }
        }
    }
    let mut cur = (INF, 0u8);
    for r in 0..K1 {
        if at[r] < cur {
            cur = at[r];
        }
        out[r] = cur.0;
        arg[r] = cur.1;
    }
}

impl SegmentCtx<'_> {
    /// Measures the ladder of track `k` further, from coarse to fine, until its last level's
    /// error is at most `until` or the ladder ends: at a level finer than the smallest budget
    /// bucket (`target / (2 · BUCKETS)`, never worth its bits), or after the raw float32 level
    /// when 24 bits are not fine enough. Ladders are measured lazily because the dynamic
    /// program never picks a level finer than the first one in its first bucket (each finer
    /// level costs more bits and falls in that bucket or a later one), and the budgets tried
    /// are rarely below the target: the finest third of a full ladder was never read.
    fn extend_ladder(&mut self, k: usize, until: f32) {
        let p = self.p;
        let target = self.target;
        let cur = &mut self.cursors[k];
        let out = &mut self.levels[k];
        let (rots, errs) = (&mut self.ladder_rots, &mut self.ladder_errs);
        let mut measure = |w: [u32; 3]| {
            measure_level(
                p,
                k,
                self.seg,
                &self.ranges[k],
                &self.refs,
                &self.dom,
                target,
                self.arc_dots[k],
                w,
                &self.lanes[k],
                errs,
                rots,
            )
        };
        if cur.done || out.last().is_some_and(|l| l.err <= until) {
            return;
        }
        if cur.r.iter().all(|&x| x <= 0.0) {
            out.push(measure([0, 0, 0]));
            cur.done = true;
            return;
        }
        loop {
            let scale = cur.level.exp2();
            let widths: [u32; 3] = std::array::from_fn(|c| {
                let x = cur.r[c] * scale;
                let f = cur.fine_from[c];
                if x <= 1.0 {
                    0
                } else if f > 2 && x < ((1u32 << (f - 1)) - 1) as f32 * 0.5 {
                    // Below 2^(f − 1) − 1 by a factor of two, so the width below is under `f`
                    // whatever the rounding of `log2`: 1 bit (a two-row ladder climbs ~20 of
                    // these half steps a track, three `log2` calls each).
                    1
                } else {
                    let w = ((x + 1.0).log2().ceil() as u32).min(MAX_BITS);
                    if w < f { w.min(1) } else { w }
                }
            });
            cur.level += 0.5;
            if widths == cur.last {
                continue;
            }
            cur.last = widths;
            let l = measure(widths);
            let err = l.err;
            out.push(l);
            let saturated = (0..3).all(|c| cur.r[c] <= 0.0 || widths[c] == MAX_BITS);
            // Finer than the smallest budget bucket is never worth its bits.
            if err <= target / (2.0 * BUCKETS as f32) {
                cur.done = true;
                return;
            }
            if saturated {
                // 24 bits are not fine enough (a large range, or a low threshold): the raw
                // float32 level is the one finer step left.
                out.push(measure(raw_widths(p, k)));
                cur.done = true;
                return;
            }
            if err <= until {
                return;
            }
        }
    }

    /// Cheapest levels under a chain budget `budget` (tree dynamic program), or None. Its
    /// tables live in `self.dp`, reused by every budget tried (one allocation per segment).
    fn allocate(&mut self, budget: f32) -> Option<Vec<usize>> {
        let delta = budget / BUCKETS as f32;
        // Every level finer than one within 99 % of the first bucket is dominated (the margin
        // keeps that level's bucket at 1 whatever the rounding of `e / delta`).
        for k in 0..self.levels.len() {
            self.extend_ladder(k, 0.99 * delta);
        }
        let p = self.p;
        let nb = p.num_bones;
        // `ceil(e / delta)`, or usize::MAX past the last bucket; the ceiling done on the integer
        // part (exact for 0 ≤ x ≤ BUCKETS; NaN gives 0 as before): without SSE4.1 `f32::ceil` is
        // a library call, 1 % of a two-sample clip's time.
        let bucket = |e: f32| -> usize {
            let x = e / delta;
            if x > BUCKETS as f32 {
                usize::MAX
            } else {
                let j = x as usize;
                j + usize::from((j as f32) < x)
            }
        };
        let mut guard = self.dp.borrow_mut();
        let dp = &mut *guard;
        let nt = self.levels.len();
        dp.track_best.resize(nt, [(INF, u32::MAX); K1]);
        dp.split.resize(nt, [0; K1]);
        dp.bone_cost.resize(nb, [INF; K1]);
        dp.subtree.resize(nb, [INF; K1]);
        dp.subtree_arg.resize(nb, [0; K1]);
        // Per track: min cost and level for each budget bucket.
        for (lv, best) in self.levels.iter().zip(dp.track_best.iter_mut()) {
            *best = [(INF, u32::MAX); K1];
            for (li, l) in lv.iter().enumerate() {
                let j = bucket(l.err);
                if j < K1 && l.cost < best[j].0 {
                    best[j] = (l.cost, li as u32);
                }
            }
            for j in 1..K1 {
                if best[j - 1].0 < best[j].0 {
                    best[j] = best[j - 1];
                }
            }
        }
        // Per bone: combine its tracks (min-plus convolution), remembering each split. A bone
        // with nothing animated at or below it needs its fixed bucket alone (below).
        dp.fixed_from.clear();
        dp.fixed_from.resize(nb, 0);
        dp.children_from.clear();
        dp.children_from.resize(nb, 0);
        for b in 0..nb {
            let jf = bucket(p.fixed_err[b]);
            if jf >= K1 {
                return None;
            }
            if self.active[b] {
                dp.bone_table(b, &self.bone_tracks[b], jf);
            } else {
                dp.fixed_from[b] = jf;
            }
        }
        // Tree: children first (they come after their parents), each child gets what its parent leaves.
        // Bones without animated tracks only shift their children's table (O(K), not O(K²)).
        // The tables are written in place (`below[b]` valid where `has_below[b]`).
        let DpTables {
            bone_cost,
            below,
            has_below,
            subtree,
            subtree_arg,
            steps: stp,
            steps_b: stp_b,
            fixed_from,
            children_from,
            ..
        } = dp;
        below.resize(nb, [INF; K1]);
        has_below.clear();
        has_below.resize(nb, false);
        for b in (0..nb).rev() {
            let parent = (p.parents[b] != NO_PARENT).then(|| p.parents[b] as usize);
            if !self.active[b] {
                // Its subtree's table (as the loop below would build it) is 0 from bucket `from`
                // on and INF below: its own fixed bucket plus the largest of its children's
                // (a shift of their sum, which is INF wherever one of them is). Added into an
                // active parent's sum, it makes the buckets below `from` INF and leaves the
                // others as they are; its own split is never read (the walk down skips it).
                let from = (fixed_from[b] + children_from[b]).min(K1);
                let Some(par) = parent else {
                    if from > BUCKETS {
                        return None;
                    }
                    continue;
                };
                if !self.active[par] {
                    children_from[par] = children_from[par].max(from);
                    continue;
                }
                if !has_below[par] {
                    below[par] = [0; K1];
                    has_below[par] = true;
                }
                below[par][..from].fill(INF);
                continue;
            }
            let g = &bone_cost[b];
            let f = &mut subtree[b];
            let arg = &mut subtree_arg[b];
            *f = [INF; K1];
            *arg = [0; K1];
            let h = has_below[b].then_some(&below[b]);
            if self.bone_tracks[b].is_empty() {
                // g is 0 from its fixed bucket on: f(r) = h(r - jf).
                let jf = g.iter().position(|&c| c == 0).unwrap_or(K1);
                for r in jf..K1 {
                    f[r] = h.map_or(0, |h| h[r - jf]);
                    arg[r] = jf as u8;
                }
            } else if let Some(h) = h {
                // The bone's own table against its children's; the split is the bone's bucket.
                steps(g.iter().copied(), stp);
                steps(h.iter().copied(), stp_b);
                min_plus(stp, stp_b, f, arg);
            } else {
                for r in 0..K1 {
                    f[r] = g[r];
                    arg[r] = r as u8;
                }
            }
            if let Some(par) = parent {
                let f = &subtree[b];
                if has_below[par] {
                    for (a, &x) in below[par].iter_mut().zip(f) {
                        *a = a.saturating_add(x).min(INF);
                    }
                } else {
                    below[par] = *f;
                    has_below[par] = true;
                }
            }
        }
        // Walk down: each bone's remaining budget, then split its share over its tracks.
        self.walk_down(dp)
    }

    /// The DP's walk down ([`Self::allocate`]'s tables): each bone's remaining budget, then its
    /// share split over its tracks; `None` when a root's subtree does not fit the budget or a
    /// track has no level in its share.
    fn walk_down(&self, dp: &DpTables) -> Option<Vec<usize>> {
        let p = self.p;
        let nb = p.num_bones;
        let nt = self.levels.len();
        let mut remaining = vec![BUCKETS; nb];
        let mut choice = vec![0usize; nt];
        for b in 0..nb {
            if !self.active[b] {
                // Nothing to choose (`allocate` checked that a root's subtree fits the budget).
                continue;
            }
            if p.parents[b] != NO_PARENT {
                let par = p.parents[b] as usize;
                remaining[b] = remaining[par] - dp.subtree_arg[par][remaining[par]] as usize;
            } else if dp.subtree[b][BUCKETS] >= INF {
                return None;
            }
            let mut j = dp.subtree_arg[b][remaining[b]] as usize;
            for &k in self.bone_tracks[b].iter().rev() {
                let i = dp.split[k][j] as usize;
                choice[k] = dp.track_best[k][i].1 as usize;
                if choice[k] == u32::MAX as usize {
                    return None;
                }
                j -= i;
            }
        }
        Some(choice)
    }

    /// Whether the segment's object-space error with these levels, decoded as the runtime
    /// decodes, stays within `target` at every sample. Stops at the first error over it (half
    /// the budgets tried fail, and measuring them to the end was a third of this check's
    /// time), starting from the sample where the last failing choice failed (rows are
    /// measured independently, so the order changes no verdict).
    fn real_error_within(&self, choice: &[usize], target: f32) -> bool {
        if let Some(raw) = &self.raw_lanes {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2 (checked just above).
                return unsafe { self.real_error_lanes_avx2(raw, choice, target) };
            }
            return self.real_error_lanes(raw, choice, target);
        }
        let p = self.p;
        let nb = p.num_bones;
        let mut local: Vec<Xf> = p.fixed.clone();
        let mut obj: Vec<Xf> = p.fixed.clone();
        let dqs: Vec<[Dequant; 3]> = (0..p.tracks.len())
            .map(|k| dequants(p, k, &self.ranges[k], self.levels[k][choice[k]].widths))
            .collect();
        let nr = self.refs.len();
        let first = self.hot_row.get();
        for r in (first..nr).chain(0..first) {
            let (i, j) = self.refs[r];
            for (k, t) in p.tracks.iter().enumerate() {
                let d = decode_value(&t.values[i], &dqs[k], self.levels[k][choice[k]].widths);
                match t.kind {
                    0 => local[t.bone].r = t.rotation(d, self.seg, i),
                    1 => local[t.bone].t = Vec3A::from_array(d),
                    _ => local[t.bone].s = Vec3A::from_array(d),
                }
            }
            for b in 0..nb {
                let offset = self.root_offset(&local, b, j);
                obj[b] = self.object(&local, &obj, b, j);
                if self.error_at(r, j, b, &obj[b], offset) > target {
                    self.hot_row.set(r);
                    return false;
                }
            }
        }
        true
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn real_error_lanes_avx2(&self, raw: &RawLanes, choice: &[usize], target: f32) -> bool {
        self.real_error_lanes(raw, choice, target)
    }

    /// [`Self::real_error_within`] [`lanes::L`] rows at a time (the same values, so the same
    /// verdict: every row and bone must pass), from the chunk where the last failing choice
    /// failed.
    #[inline(always)]
    fn real_error_lanes(&self, raw: &RawLanes, choice: &[usize], target: f32) -> bool {
        let p = self.p;
        let nb = p.num_bones;
        let nr = self.refs.len();
        let chunks = nr.div_ceil(lanes::L);
        let dqs: Vec<[Dequant; 3]> = (0..p.tracks.len())
            .map(|k| dequants(p, k, &self.ranges[k], self.levels[k][choice[k]].widths))
            .collect();
        let mut local: Vec<lanes::XfL> = raw.fixed.clone();
        let mut obj: Vec<lanes::XfL> = vec![[[0.0; lanes::L]; 10]; nb];
        let first = self.hot_row.get() / lanes::L;
        for c in (first..chunks).chain(0..first) {
            let rows = (nr - c * lanes::L).min(lanes::L);
            for (k, t) in p.tracks.iter().enumerate() {
                let w = self.levels[k][choice[k]].widths;
                lanes::decode_into(
                    &self.lanes[k],
                    c,
                    t,
                    self.seg,
                    &dqs[k],
                    w,
                    &mut local[t.bone],
                );
            }
            for b in 0..nb {
                let root = p.root_of[b];
                let rt = &raw.root_t[c * nb + root];
                let mut offset = [[0.0f32; lanes::L]; 3];
                for x in 0..3 {
                    for l in 0..lanes::L {
                        offset[x][l] = local[root][4 + x][l] - rt[x][l];
                    }
                }
                obj[b] = match p.parents[b] {
                    NO_PARENT => lanes::root_object(&local[b]),
                    q => lanes::compose(&obj[q as usize], &local[b]),
                };
                let e = lanes::vertex_error(
                    &raw.raw[c * nb + b],
                    &obj[b],
                    &offset,
                    p.shells[b],
                    p.weights[b],
                );
                if let Some(l) = (0..rows).find(|&l| e[l] > target) {
                    self.hot_row.set(c * lanes::L + l);
                    return false;
                }
            }
        }
        true
    }

    fn cost(&self, choice: &[usize]) -> u64 {
        choice
            .iter()
            .enumerate()
            .map(|(k, &l)| self.levels[k][l].cost as u64)
            .sum()
    }

    /// Scales the chain budget as far as the real error allows and returns the cheapest passing choice.
    fn best_allocation(&mut self, target: f32, start: f32) -> (Vec<[u32; 3]>, f32) {
        if self.levels.is_empty() {
            return (Vec::new(), start);
        }
        let mut best: Option<(u64, Vec<usize>)> = None;
        // Choices already measured and their verdicts: neighbouring budgets often give the
        // same levels, and the real error is the dearer half of a try.
        let mut seen: Vec<(Vec<usize>, bool)> = Vec::new();
        let tiny = self.refs.len() <= TINY_SEGMENT_ROWS;
        let mut try_m = |m: f32| -> bool {
            let Some(c) = self.allocate(m * target) else {
                return false;
            };
            if let Some((_, passed)) = seen.iter().find(|(x, _)| *x == c) {
                return *passed;
            }
            let passed = self.real_error_within(&c, target);
            if passed {
                let cost = self.cost(&c);
                if best.as_ref().is_none_or(|b| cost < b.0) {
                    best = Some((cost, c.clone()));
                }
            }
            seen.push((c, passed));
            passed
        };
        // The budget multipliers tried are `start · g^e` on a grid of quarter steps of 1.4 (the
        // resolution two bisections of a 1.4 step had). From `start` (the previous segment's
        // result, usually within a step of this one's) the search gallops up while the real
        // error allows (1, 2, 4, ... steps) or down while it does not, then bisects between
        // the last pass and the first failure: 2–3 tries where growing by 1.4 then bisecting
        // twice took 4 (the tries were 40 % of the search).
        // A tiny segment (at most TINY_SEGMENT_ROWS rows: clips of 1–3 samples) takes the first
        // budget that passes, on whole steps of 1.4: each try is a DP over the whole skeleton
        // (82_01: 4 DPs after the first pass, ~40 % of its search), and the refinement then
        // walks each track down to what a few rows need (1 bit on two rows) whatever budget
        // it starts from (sizes on the 67 clips: BENCHMARKS.md, 2026-11-28 cx31b).
        let g = if tiny { 1.4f32 } else { 1.4f32.powf(0.25) };
        let m_of = |e: i32| start * g.powi(e);
        // The largest exponent within MAX_BUDGET_MULTIPLIER, and the lowest one tried
        // (1.4^-12 below `start`, as before).
        let e_max = ((MAX_BUDGET_MULTIPLIER / start).ln() / g.ln()).floor() as i32;
        let e_min = if tiny { -12 } else { -48 };
        // lo: the largest exponent known to pass (None: none); hi: the smallest known to fail
        // (or past the range).
        let (mut lo, mut hi): (Option<i32>, i32);
        if try_m(start) {
            lo = Some(0);
            hi = if tiny { 1 } else { e_max.max(0) + 1 };
            if !tiny {
                let mut step = 1;
                loop {
                    let e = (lo.unwrap_or(0) + step).min(e_max);
                    if e <= lo.unwrap_or(0) {
                        break;
                    }
                    if try_m(m_of(e)) {
                        lo = Some(e);
                        step *= 2;
                    } else {
                        hi = e;
                        break;
                    }
                }
            }
        } else {
            lo = None;
            hi = 0;
            let mut step = 1;
            while hi > e_min {
                let e = (hi - step).max(e_min);
                if try_m(m_of(e)) {
                    lo = Some(e);
                    break;
                }
                hi = e;
                step *= 2;
            }
        }
        if let Some(mut l) = lo {
            while !tiny && hi - l > 1 {
                let mid = l + (hi - l) / 2;
                if try_m(m_of(mid)) {
                    l = mid;
                } else {
                    hi = mid;
                }
            }
            lo = Some(l);
        }
        let lo = lo.map_or(0.0, m_of);
        match best {
            Some((_, mut c)) => (self.refine(&mut c, target), lo.max(0.05)),
            None => {
                // The finest level of every ladder, measured to its end.
                for k in 0..self.levels.len() {
                    self.extend_ladder(k, -1.0);
                }
                let finest = self.levels.iter().map(|l| l[l.len() - 1].widths).collect();
                (finest, 1.0)
            }
        }
    }

    /// Greedy refinement after the dynamic program: its additive chain bound is scaled up until
    /// the worst bone meets the target, which leaves slack on every other chain. Each track,
    /// roots first (leaves first on tiny segments), is made coarser by levels, then each
    /// component by bits ([`Self::descend`]), while the real error of every bone it moves (its
    /// subtree, at every sample of the segment) stays within `target`. Only the subtree is
    /// measured again, so a trial costs samples × subtree size. Returns the widths of every
    /// track.
    fn refine(&self, choice: &mut [usize], target: f32) -> Vec<[u32; 3]> {
        let p = self.p;
        let nb = p.num_bones;
        let mut cur: Vec<[u32; 3]> = choice
            .iter()
            .enumerate()
            .map(|(k, &l)| self.levels[k][l].widths)
            .collect();
        // The subtree lists cost the sum of the depths; deep synthetic hierarchies skip this.
        if !p.exact_dominant_shells || nb == 0 {
            return cur;
        }
        // Every bone's subtree (itself and the bones below it, in bone order) in one array,
        // bone `b`'s at `starts[b]..starts[b + 1]`: a list per bone grew ~90 times on a 44-bone
        // clip, a tenth of a two-sample clip's allocations.
        let mut sizes = vec![1usize; nb];
        for b in (0..nb).rev() {
            if p.parents[b] != NO_PARENT {
                sizes[p.parents[b] as usize] += sizes[b];
            }
        }
        let mut starts = Vec::with_capacity(nb + 1);
        starts.push(0usize);
        for b in 0..nb {
            starts.push(starts[b] + sizes[b]);
        }
        let mut next = starts[..nb].to_vec();
        let mut flat = vec![0u32; starts[nb]];
        for b in 0..nb {
            let mut a = b;
            loop {
                flat[next[a]] = b as u32;
                next[a] += 1;
                match p.parents[a] {
                    NO_PARENT => break,
                    q => a = q as usize,
                }
            }
        }
        let subtree = |b: usize| &flat[starts[b]..starts[b + 1]];
        let nr = self.refs.len();
        let two_rows = nr == 2;
        // Decoded local transforms, object transforms and errors with the current choice.
        let mut local: Vec<Xf> = Vec::with_capacity(nr * nb);
        for &(i, _) in &self.refs {
            let row = local.len();
            local.extend_from_slice(&p.fixed);
            for (k, t) in p.tracks.iter().enumerate() {
                let dq = dequants(p, k, &self.ranges[k], cur[k]);
                let d = decode_value(&t.values[i], &dq, cur[k]);
                set_local(&mut local[row + t.bone], t, d, self.seg, i);
            }
        }
        let mut obj: Vec<Xf> = local.clone();
        for r in 0..nr {
            for b in 0..nb {
                let j = self.refs[r].1;
                obj[r * nb + b] = self.object(&local[r * nb..(r + 1) * nb], &obj[r * nb..], b, j);
            }
        }
        let mut err = vec![0.0f32; nr * nb];
        for (r, &(_, j)) in self.refs.iter().enumerate() {
            let row = r * nb;
            for d in 0..nb {
                let offset = self.root_offset(&local[row..row + nb], d, j);
                err[row + d] = self.error_at(r, j, d, &obj[row + d], offset);
            }
        }
        let lanes = self
            .raw_lanes
            .as_ref()
            .map(|_| RefineLanes::new(nr, nb, &local, &obj, &err));
        let mut st = RefineState {
            tmp: obj.clone(),
            tmp_err: err.clone(),
            local,
            obj,
            err,
            new_local: vec![p.fixed[0]; nr],
            order: Vec::with_capacity(nr),
            order_stale: true,
            changed: vec![true; nr],
            lanes,
            failed_rows: Vec::new(),
            failed_arcs: Vec::new(),
        };
        // Roots first: each track takes the slack the ones after it could have used, and given
        // to the tracks nearer the roots first it buys more bits: −1.5 % / −1.45 % of the bytes
        // (ACL's regression clips / the BVH clips) against leaves first (BENCHMARKS.md, "Smaller:
        // a better search over the same format"). Segments of at most TINY_SEGMENT_ROWS rows
        // keep leaves first: nothing to gain there (82_18 +4 B) and no time to spare.
        let nt = p.tracks.len();
        let roots_first = nr > TINY_SEGMENT_ROWS;
        for n in 0..nt {
            let k = if roots_first { n } else { nt - 1 - n };
            let t = &p.tracks[k];
            let moved = subtree(t.bone);
            // Another track moves other bones: its rows are ordered afresh (and the failures
            // remembered were another track's).
            st.order_stale = true;
            st.failed_rows.clear();
            st.failed_arcs.clear();
            let levels = &self.levels[k];
            choice[k] = self.descend(&mut st, moved, k, choice[k], |i| levels[i].widths, target);
            cur[k] = levels[choice[k]].widths;
            // Then each component alone (the ladder moves all three together).
            if cur[k].contains(&RAW_BITS) {
                continue;
            }
            for c in 0..3 {
                let at = cur[k];
                let width = |v: usize| {
                    let mut w = at;
                    w[c] = v as u32;
                    w
                };
                let hi = at[c] as usize;
                cur[k][c] = if two_rows {
                    self.descend_two_rows(&mut st, moved, k, hi, width, target)
                } else {
                    self.descend(&mut st, moved, k, hi, width, target)
                } as u32;
            }
        }
        cur
    }

    /// The coarsest position found for track `k` at or below `hi` (which passes), positions
    /// ordered from coarse (0) to fine with widths `widths(i)`: tries `hi − 1` first (most
    /// walks stop there: about three trials in four fail); when it passes, tries position 0,
    /// then bisects between the last failure and the last pass. One step at a time, a
    /// component that may lose 7 bits (a two-sample clip is exact at 1 bit) cost 7 passing
    /// trials, each measuring every sample of the subtree; the bisection takes about three.
    /// The result is never finer than where the one-step walk stops (that walk stops above the
    /// highest failure below `hi`; the bisection ends just above a failure), and every pass is
    /// kept in `st` as it is found, so `st` holds the returned position.
    fn descend(
        &self,
        st: &mut RefineState,
        moved: &[u32],
        k: usize,
        hi: usize,
        widths: impl Fn(usize) -> [u32; 3],
        target: f32,
    ) -> usize {
        if hi == 0 || !self.trial(st, moved, k, widths(hi - 1), target) {
            return hi;
        }
        let mut hi = hi - 1;
        if hi == 0 || self.trial(st, moved, k, widths(0), target) {
            return 0;
        }
        let mut lo = 0;
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.trial(st, moved, k, widths(mid), target) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }

    /// [`Self::descend`] over a component's bits on a segment of two rows, where 1 bit stores
    /// both values exactly (they are the ends of the segment's range): tries 1 bit, then 0;
    /// only when 1 bit fails does it walk as [`Self::descend`] does. Two trials a component
    /// where the walk took about four.
    fn descend_two_rows(
        &self,
        st: &mut RefineState,
        moved: &[u32],
        k: usize,
        hi: usize,
        widths: impl Fn(usize) -> [u32; 3],
        target: f32,
    ) -> usize {
        if hi > 1 && self.trial(st, moved, k, widths(1), target) {
            return if self.trial(st, moved, k, widths(0), target) {
                0
            } else {
                1
            };
        }
        self.descend(st, moved, k, hi, widths, target)
    }

    /// Tries widths `w` for track `k`: decodes it, recomputes the object transforms of the
    /// bones it moves at every sample, and keeps the change (in `st`) when every error stays
    /// within `target`.
    fn trial(
        &self,
        st: &mut RefineState,
        moved: &[u32],
        k: usize,
        w: [u32; 3],
        target: f32,
    ) -> bool {
        if let (Some(raw), Some(_)) = (&self.raw_lanes, &st.lanes) {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2 (checked just above).
                return unsafe { self.trial_lanes_avx2(raw, st, moved, k, w, target) };
            }
            return self.trial_lanes(raw, st, moved, k, w, target);
        }
        let p = self.p;
        let nb = p.num_bones;
        let nr = self.refs.len();
        // Samples where the moved bones are closest to the target first: a trial that fails
        // (every track's last) usually fails on the first one measured. Each sample is decoded
        // when it is measured and the arcs are checked once every sample passed, so a failing
        // trial costs about one sample (half the trials fail; both checks must pass, so the
        // order changes no verdict). The order depends on `st.err` and `moved` alone, so it is
        // sorted again only after a trial that kept its change (a failing one leaves `st.err`
        // as it was): on a failing trial the sort cost as much as the sample it measured.
        if st.order_stale {
            st.order.clear();
            st.order.extend((0..nr).map(|r| {
                let worst = moved
                    .iter()
                    .map(|&d| st.err[r * nb + d as usize])
                    .fold(0.0f32, f32::max);
                (worst, r)
            }));
            st.order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            st.order_stale = false;
        }
        // Widths that decode every sample to the value it has now change no error, and the
        // values now passed (the first choice passed the real error and the arcs, every change
        // since passed its trial): the trial passes without measuring. Two-sample clips meet
        // this in most passing trials (82_01: 90 of 142; a component at fewer bits still lands
        // on the same two values); elsewhere the first row, the worst, already differs.
        // Each row decoded once, in the order measured, as far as the check needs: its new
        // value in `st.new_local`, whether it differs in `st.changed` (`seen`: bit `r` for a
        // row `r` decoded, [`RowTrial::decode`]).
        let tr = RowTrial {
            k,
            w,
            dq: dequants(p, k, &self.ranges[k], w),
        };
        let mut seen = 0u64;
        let mut decoded = 0;
        loop {
            if decoded == nr {
                return true;
            }
            let r = st.order[decoded].1;
            decoded += 1;
            if self.decode(st, &tr, &mut seen, r) {
                break;
            }
        }
        if self.failed_before(st, &tr, &mut seen) {
            return false;
        }
        self.trial_rows(st, moved, &tr, &mut seen, target)
    }

    /// Decodes row `r` of a [`RowTrial`] into `st.new_local` unless `seen` says it was (a row
    /// past the 64th is decoded again: no segment has that many), marks it in `seen`, and
    /// returns whether it differs from the row's value now (`st.changed`).
    fn decode(&self, st: &mut RefineState, tr: &RowTrial, seen: &mut u64, r: usize) -> bool {
        let bit = if r < 64 { 1u64 << r } else { 0 };
        if *seen & bit != 0 {
            return st.changed[r];
        }
        *seen |= bit;
        let t = &self.p.tracks[tr.k];
        let i = self.refs[r].0;
        let now = st.local[r * self.p.num_bones + t.bone];
        let mut x = now;
        set_local(
            &mut x,
            t,
            decode_value(&t.values[i], &tr.dq, tr.w),
            self.seg,
            i,
        );
        st.new_local[r] = x;
        st.changed[r] = !same_sub_track(&x, &now, t.kind);
        st.changed[r]
    }

    /// Whether a trial on rows is known to fail from the track's earlier trials. A failing
    /// trial changes nothing, and whether a row fails depends on the value the trial decodes
    /// into it and on the other tracks alone (the track's own value is replaced; the other
    /// tracks do not change while this one walks): until the walk moves to another track, a
    /// trial that decodes a row as one that failed there fails too, and one that decodes every
    /// row as one that failed the arcs fails those (`st.failed_rows`, `st.failed_arcs`). The
    /// widths of a component below where its step resolves a row's distance to the range's
    /// end decode that row alike (81_16's root: 1, 6, 9, 10 and 11 bits of one component, each
    /// failing at the last of 43 bones; 82_18 tried 1 bit on every component twice, around a
    /// pass). Rows are decoded as far as the comparisons need.
    fn failed_before(&self, st: &mut RefineState, tr: &RowTrial, seen: &mut u64) -> bool {
        let kind = self.p.tracks[tr.k].kind;
        for i in 0..st.failed_rows.len() {
            let (r, bits) = st.failed_rows[i];
            self.decode(st, tr, seen, r);
            if sub_track_bits(&st.new_local[r], kind) == bits {
                return true;
            }
        }
        let nr = self.refs.len();
        if st.failed_arcs.is_empty() {
            return false;
        }
        for r in 0..nr {
            self.decode(st, tr, seen, r);
        }
        st.failed_arcs
            .chunks_exact(nr)
            .any(|f| (0..nr).all(|r| f[r] == sub_track_bits(&st.new_local[r], kind)))
    }

    /// The measurement of a trial on rows ([`Self::trial`]): every row whose value changes,
    /// then the arcs; the change is kept when both pass, the failure remembered otherwise
    /// ([`Self::failed_before`]).
    fn trial_rows(
        &self,
        st: &mut RefineState,
        moved: &[u32],
        tr: &RowTrial,
        seen: &mut u64,
        target: f32,
    ) -> bool {
        let p = self.p;
        let nb = p.num_bones;
        let nr = self.refs.len();
        let t = &p.tracks[tr.k];
        let b = t.bone;
        for oi in 0..nr {
            let r = st.order[oi].1;
            let j = self.refs[r].1;
            let row = r * nb;
            // A row whose value does not change keeps its object transforms and errors, which
            // passed (the same argument as for the whole trial above): not measured, not
            // written back. A component trial of a two-sample segment leaves the row at that
            // component's minimum as it was (it decodes to the range's base at any width).
            if !self.decode(st, tr, seen, r) {
                continue;
            }
            let saved = st.local[row + b];
            let x = st.new_local[r];
            st.local[row + b] = x;
            // Every moved bone is in `b`'s tree: one root offset for the row.
            let offset = self.root_offset(&st.local[row..row + nb], b, j);
            let mut ok = true;
            for &d in moved {
                let d = d as usize;
                // Parents of the subtree's bones other than its top are in the subtree.
                let parent_row: &[Xf] = if d == b {
                    &st.obj[row..]
                } else {
                    &st.tmp[row..]
                };
                let x = self.object(&st.local[row..row + nb], parent_row, d, j);
                st.tmp[row + d] = x;
                let e = self.error_at(r, j, d, &x, offset);
                st.tmp_err[row + d] = e;
                if e > target {
                    ok = false;
                    break;
                }
            }
            st.local[row + b] = saved;
            if !ok {
                let bits = sub_track_bits(&st.new_local[r], t.kind);
                st.failed_rows.push((r, bits));
                return false;
            }
        }
        if t.kind == 0 && !keeps_arcs(p, b, &self.refs, self.arc_dots[tr.k], |r| st.new_local[r].r)
        {
            for r in 0..nr {
                let bits = sub_track_bits(&st.new_local[r], t.kind);
                st.failed_arcs.push(bits);
            }
            return false;
        }
        st.order_stale = true;
        for r in (0..nr).filter(|&r| st.changed[r]) {
            let row = r * nb;
            st.local[row + b] = st.new_local[r];
            for &d in moved {
                st.obj[row + d as usize] = st.tmp[row + d as usize];
                st.err[row + d as usize] = st.tmp_err[row + d as usize];
            }
        }
        true
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn trial_lanes_avx2(
        &self,
        raw: &RawLanes,
        st: &mut RefineState,
        moved: &[u32],
        k: usize,
        w: [u32; 3],
        target: f32,
    ) -> bool {
        self.trial_lanes(raw, st, moved, k, w, target)
    }

    /// [`Self::trial`] on the state kept as lanes ([`RefineLanes`]): the same values, so the
    /// same verdict and the same state after it. The row nearest the target is measured
    /// alone first, as before (about three trials in four fail, most on that row); the rest
    /// [`lanes::L`] rows at a time.
    #[inline(always)]
    fn trial_lanes(
        &self,
        raw: &RawLanes,
        st: &mut RefineState,
        moved: &[u32],
        k: usize,
        w: [u32; 3],
        target: f32,
    ) -> bool {
        const L: usize = lanes::L;
        let p = self.p;
        let nb = p.num_bones;
        let nr = self.refs.len();
        let t = &p.tracks[k];
        let b = t.bone;
        let dq = dequants(p, k, &self.ranges[k], w);
        let Some(ls) = st.lanes.as_mut() else {
            return false;
        };
        let chunks = nr.div_ceil(L);
        if st.order_stale {
            st.order.clear();
            st.order.extend((0..nr).map(|r| {
                let worst = moved
                    .iter()
                    .map(|&d| ls.err[(r / L) * nb + d as usize][r % L])
                    .fold(0.0f32, f32::max);
                (worst, r)
            }));
            st.order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            st.order_stale = false;
        }
        // The new local transforms of `b` at every row, and whether any differs (widths that
        // decode every sample to the value it has pass without measuring, as in `trial`).
        let mut unchanged = true;
        let subs: std::ops::Range<usize> = match t.kind {
            0 => 0..4,
            1 => 4..7,
            _ => 7..10,
        };
        for c in 0..chunks {
            let (now, x) = (&ls.local[c * nb + b], &mut ls.new_local[c]);
            *x = *now;
            lanes::decode_into(&self.lanes[k], c, t, self.seg, &dq, w, x);
            let rows = (nr - c * L).min(L);
            for i in subs.clone() {
                for l in 0..rows {
                    unchanged &= x[i][l].to_bits() == now[i][l].to_bits();
                }
            }
        }
        if unchanged {
            return true;
        }
        // The row nearest the target alone, then every row L at a time.
        let r0 = st.order[0].1;
        if !self.row_passes(ls, moved, b, r0, target)
            || !self.rows_pass(raw, ls, moved, b, chunks, target)
        {
            return false;
        }
        if t.kind == 0 {
            let nl = &ls.new_local;
            let q = |r: usize| {
                let x = &nl[r / L];
                let l = r % L;
                Quat::from_xyzw(x[0][l], x[1][l], x[2][l], x[3][l])
            };
            if !keeps_arcs(p, b, &self.refs, self.arc_dots[k], q) {
                return false;
            }
        }
        st.order_stale = true;
        for c in 0..chunks {
            ls.local[c * nb + b] = ls.new_local[c];
            for &d in moved {
                let i = c * nb + d as usize;
                ls.obj[i] = ls.tmp[i];
                ls.err[i] = ls.tmp_err[i];
            }
        }
        true
    }

    /// Whether every moved bone's error at row `r0` stays within `target` with `b`'s new local
    /// transforms (`ls.new_local`), measured one row alone ([`Self::trial_lanes`]).
    #[inline(always)]
    fn row_passes(
        &self,
        ls: &mut RefineLanes,
        moved: &[u32],
        b: usize,
        r0: usize,
        target: f32,
    ) -> bool {
        const L: usize = lanes::L;
        let p = self.p;
        let nb = p.num_bones;
        let root = p.root_of[b];
        let (c0, l0) = (r0 / L, r0 % L);
        let j0 = self.refs[r0].1;
        let xb = lanes::get(&ls.new_local[c0], l0);
        let root_t = if root == b {
            xb.t
        } else {
            lanes::get(&ls.local[c0 * nb + root], l0).t
        };
        let offset = root_t - p.raw_root_translation(root, j0);
        for &d in moved {
            let d = d as usize;
            let xl = if d == b {
                xb
            } else {
                lanes::get(&ls.local[c0 * nb + d], l0)
            };
            let x = match p.parents[d] {
                NO_PARENT => Xf {
                    r: xl.r,
                    t: Vec3A::ZERO,
                    s: xl.s,
                },
                q => {
                    let q = q as usize;
                    let parent = if d == b {
                        lanes::get(&ls.obj[c0 * nb + q], l0)
                    } else {
                        ls.row[q]
                    };
                    Xf::compose(&parent, &xl)
                }
            };
            ls.row[d] = x;
            if self.error_at(r0, j0, d, &x, offset) > target {
                return false;
            }
        }
        true
    }

    /// Whether every moved bone's error at every row stays within `target` with `b`'s new
    /// local transforms, [`lanes::L`] rows at a time; their object transforms and errors are
    /// left in `ls.tmp` and `ls.tmp_err`.
    #[inline(always)]
    fn rows_pass(
        &self,
        raw: &RawLanes,
        ls: &mut RefineLanes,
        moved: &[u32],
        b: usize,
        chunks: usize,
        target: f32,
    ) -> bool {
        const L: usize = lanes::L;
        let p = self.p;
        let nb = p.num_bones;
        let nr = self.refs.len();
        let root = p.root_of[b];
        for c in 0..chunks {
            let rows = (nr - c * L).min(L);
            let root_local = if root == b {
                &ls.new_local[c]
            } else {
                &ls.local[c * nb + root]
            };
            let rt = &raw.root_t[c * nb + root];
            let mut offset = [[0.0f32; L]; 3];
            for x in 0..3 {
                for l in 0..L {
                    offset[x][l] = root_local[4 + x][l] - rt[x][l];
                }
            }
            for &d in moved {
                let d = d as usize;
                let xl = if d == b {
                    &ls.new_local[c]
                } else {
                    &ls.local[c * nb + d]
                };
                ls.tmp[c * nb + d] = match p.parents[d] {
                    NO_PARENT => lanes::root_object(xl),
                    q => {
                        let q = q as usize;
                        let parent = if d == b {
                            &ls.obj[c * nb + q]
                        } else {
                            &ls.tmp[c * nb + q]
                        };
                        lanes::compose(parent, xl)
                    }
                };
                let e = lanes::vertex_error(
                    &raw.raw[c * nb + d],
                    &ls.tmp[c * nb + d],
                    &offset,
                    p.shells[d],
                    p.weights[d],
                );
                ls.tmp_err[c * nb + d] = e;
                if e[..rows].iter().any(|&e| e > target) {
                    return false;
                }
            }
        }
        true
    }

    /// Weighed error of bone `d` at row `r` (raw sample `j`) with object transform `x`
    /// ([`vertex_error_to`] against the row's [`SegmentCtx::raw_v`]).
    #[inline(always)]
    fn error_at(&self, r: usize, j: usize, d: usize, x: &Xf, offset: Vec3A) -> f32 {
        let p = self.p;
        let nb = p.num_bones;
        vertex_error_to(
            p.raw_obj[j * nb + d].t,
            &self.raw_v[r * nb + d],
            x,
            offset,
            p.shells[d],
        ) * p.weights[d]
    }

    /// Translation of the root of `d`'s tree, decoded minus raw, at raw sample `j` (roots keep
    /// their translation out of the object transforms, as in [`Self::real_error_within`]).
    #[inline(always)]
    fn root_offset(&self, local: &[Xf], d: usize, j: usize) -> Vec3A {
        let p = self.p;
        let root = p.root_of[d];
        p.combined(root, j, &local[root]).t - p.raw_root_translation(root, j)
    }

    /// Object transform of bone `b` from its decoded local transform and its parent's object
    /// transform in `parent_row` (roots keep their translation out, as in [`Self::real_error_within`]).
    #[inline(always)]
    fn object(&self, local: &[Xf], parent_row: &[Xf], b: usize, j: usize) -> Xf {
        // An additive clip's decoded value is applied to its base first (combined space).
        let l = self.p.combined(b, j, &local[b]);
        match self.p.parents[b] {
            NO_PARENT => Xf {
                r: l.r,
                t: Vec3A::ZERO,
                s: l.s,
            },
            q => Xf::compose(&parent_row[q as usize], &l),
        }
    }
}

/// A refinement trial on rows ([`SegmentCtx::trial`]): track `k` at widths `w`, with their
/// dequantizers.
struct RowTrial {
    k: usize,
    w: [u32; 3],
    dq: [Dequant; 3],
}

/// What [`SegmentCtx::refine`] keeps per sample (row) and bone: decoded local and object
/// transforms and errors, and a trial's scratch copies.
struct RefineState {
    local: Vec<Xf>,
    obj: Vec<Xf>,
    err: Vec<f32>,
    tmp: Vec<Xf>,
    tmp_err: Vec<f32>,
    new_local: Vec<Xf>,
    /// Rows in the order a trial measures them ([`SegmentCtx::trial`]), valid for `st.err` and
    /// the current track's moved bones unless `order_stale`.
    order: Vec<(f32, usize)>,
    order_stale: bool,
    /// Per row: whether the trial changed its value ([`SegmentCtx::trial`]).
    changed: Vec<bool>,
    /// The current track's failed trials on rows ([`SegmentCtx::trial`]): a row and the
    /// [`sub_track_bits`] that failed there, and the bits of every row (a row after another)
    /// of each trial that failed the arcs.
    failed_rows: Vec<(usize, [u32; 4])>,
    failed_arcs: Vec<[u32; 4]>,
    /// The same state as lanes, kept instead of the per-row fields for a clip that is not
    /// additive.
    lanes: Option<RefineLanes>,
}

/// [`RefineState`]'s local and object transforms and errors as lanes, `chunk * bones + bone`
/// (rows padded to a multiple of [`lanes::L`] with copies of the first), for a clip that is
/// not additive: [`SegmentCtx::trial_lanes`] keeps these, not the per-row ones.
struct RefineLanes {
    local: Vec<lanes::XfL>,
    obj: Vec<lanes::XfL>,
    err: Vec<[f32; lanes::L]>,
    tmp: Vec<lanes::XfL>,
    tmp_err: Vec<[f32; lanes::L]>,
    /// Per chunk: the trial's new local transform of its bone.
    new_local: Vec<lanes::XfL>,
    /// Per bone: object transforms of the row measured alone.
    row: Vec<Xf>,
}

impl RefineLanes {
    fn new(nr: usize, nb: usize, local: &[Xf], obj: &[Xf], err: &[f32]) -> Self {
        const L: usize = lanes::L;
        let chunks = nr.div_ceil(L);
        let zero = [[0.0f32; L]; 10];
        let mut ls = RefineLanes {
            local: vec![zero; chunks * nb],
            obj: vec![zero; chunks * nb],
            err: vec![[0.0; L]; chunks * nb],
            tmp: vec![zero; chunks * nb],
            tmp_err: vec![[0.0; L]; chunks * nb],
            new_local: vec![zero; chunks],
            row: vec![obj[0]; nb],
        };
        for c in 0..chunks {
            for l in 0..L {
                let r = if c * L + l < nr { c * L + l } else { 0 };
                for b in 0..nb {
                    lanes::set(&mut ls.local[c * nb + b], l, &local[r * nb + b]);
                    lanes::set(&mut ls.obj[c * nb + b], l, &obj[r * nb + b]);
                    ls.err[c * nb + b][l] = err[r * nb + b];
                }
            }
        }
        ls
    }
}

/// The bits of the sub-track of kind `kind` in a decoded local transform.
#[inline(always)]
fn sub_track_bits(a: &Xf, kind: usize) -> [u32; 4] {
    match kind {
        0 => a.r.to_array().map(f32::to_bits),
        1 => a.t.extend(0.0).to_array().map(f32::to_bits),
        _ => a.s.extend(0.0).to_array().map(f32::to_bits),
    }
}

/// Whether two decoded local transforms hold the same bits in the sub-track of kind `kind`.
#[inline(always)]
fn same_sub_track(a: &Xf, b: &Xf, kind: usize) -> bool {
    let bits = |v: [f32; 4]| v.map(f32::to_bits);
    match kind {
        0 => bits(a.r.to_array()) == bits(b.r.to_array()),
        1 => bits(a.t.extend(0.0).to_array()) == bits(b.t.extend(0.0).to_array()),
        _ => bits(a.s.extend(0.0).to_array()) == bits(b.s.extend(0.0).to_array()),
    }
}

/// Sets the sub-track of `t` in a decoded local transform.
#[inline(always)]
fn set_local(x: &mut Xf, t: &super::prepare::Track, d: [f32; 3], seg: usize, i: usize) {
    match t.kind {
        0 => x.r = t.rotation(d, seg, i),
        1 => x.t = Vec3A::from_array(d),
        _ => x.s = Vec3A::from_array(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{GenerateOptions, generate};

    /// What the two-row ladder rests on ([`two_row_fine_from`]): at every width from 2 up to a
    /// component's first fine width, each of the two rows quantizes to the end of the range it
    /// takes at 1 bit (so it decodes to that end, the error 1 bit gives); measured on every
    /// animated component of generated two-sample clips, whose rotations' 16-bit clip ranges
    /// put the rows a little inside the range.
    #[test]
    fn two_row_widths_below_the_fine_width_snap_to_the_ends_one_bit_does() {
        let mut checked = 0;
        for seed in 1..12 {
            let clip = generate(&GenerateOptions {
                num_samples: 2,
                seed,
                with_scale: true,
                ..Default::default()
            });
            let p = super::super::prepare::prepare(&clip, &Default::default(), 0.01);
            let refs = [(0usize, 0usize), (1, 1)];
            for (k, t) in p.tracks.iter().enumerate() {
                let range = segment_range(&t.values[..2], t.clip_min, t.clip_ext, false);
                let r: [f32; 3] = std::array::from_fn(|c| {
                    t.clip_ext[c] * (range[3 + c] as f32 / SEGMENT_RANGE_STEPS)
                });
                let fine = two_row_fine_from(&p, k, &range, r, &refs);
                for c in (0..3).filter(|&c| r[c] > 0.0) {
                    assert!((2..=MAX_BITS).contains(&fine[c]), "{fine:?}");
                    let end = |w: u32, i: usize| {
                        let dq = dequants(&p, k, &range, [w; 3]);
                        let q = dq[c].quantize(t.values[i][c], w);
                        assert!(q == 0 || q == (1 << w) - 1, "w {w}: q {q} is not an end");
                        q == 0
                    };
                    for w in 2..fine[c] {
                        for i in 0..2 {
                            assert_eq!(end(w, i), end(1, i), "track {k} component {c} w {w}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 100, "only {checked} widths checked");
    }
}
