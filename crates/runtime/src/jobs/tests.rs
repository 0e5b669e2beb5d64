//! The jobs against float64 references written here independently (plain `[f64; N]` arithmetic,
//! no glam), on generated edge cases; every SIMD path against the scalar one; `validate()`
//! against every bad length and index. Real clips: `tests/it/runtime/jobs.rs`.

use super::*;
use crate::NO_PARENT;
use glam::{Mat4, Quat, Vec3A, Vec4};
use std::vec;
use std::vec::Vec;

// ------------------------------------------------------------------ float64 reference

type Q = [f64; 4];
type V = [f64; 3];

fn qd(q: Quat) -> Q {
    [q.x as f64, q.y as f64, q.z as f64, q.w as f64]
}
fn vd(v: Vec3A) -> V {
    [v.x as f64, v.y as f64, v.z as f64]
}
fn qmul(a: Q, b: Q) -> Q {
    [
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    ]
}
fn qnorm(q: Q) -> Q {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
}
/// q · v · q* for a unit q.
fn qrot(q: Q, v: V) -> V {
    let p = qmul(
        qmul(q, [v[0], v[1], v[2], 0.0]),
        [-q[0], -q[1], -q[2], q[3]],
    );
    [p[0], p[1], p[2]]
}
fn vmul(a: V, b: V) -> V {
    [a[0] * b[0], a[1] * b[1], a[2] * b[2]]
}
fn vadd(a: V, b: V) -> V {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

#[derive(Clone, Copy, Debug)]
struct Xf {
    r: Q,
    t: V,
    s: V,
}

/// The metric's composition, normalising at every level.
fn l2o_ref(parents: &[u32], local: &[Xf]) -> Vec<Xf> {
    let mut out: Vec<Xf> = Vec::new();
    for (b, &p) in parents.iter().enumerate() {
        let l = local[b];
        out.push(if p == NO_PARENT {
            l
        } else {
            let pp = out[p as usize];
            Xf {
                r: qnorm(qmul(pp.r, l.r)),
                t: vadd(qrot(pp.r, vmul(l.t, pp.s)), pp.t),
                s: vmul(l.s, pp.s),
            }
        });
    }
    out
}

/// Column-major 4×4 of x ↦ r·(s ∘ x) + t.
fn mat_ref(x: Xf) -> [f64; 16] {
    let mut m = [0.0; 16];
    for c in 0..3 {
        let mut e = [0.0; 3];
        e[c] = x.s[c];
        let col = qrot(x.r, e);
        m[4 * c..4 * c + 3].copy_from_slice(&col);
    }
    m[12..15].copy_from_slice(&x.t);
    m[15] = 1.0;
    m
}
fn matmul(a: &[f64; 16], b: &[f64; 16]) -> [f64; 16] {
    let mut m = [0.0; 16];
    for c in 0..4 {
        for r in 0..4 {
            m[4 * c + r] = (0..4).map(|k| a[4 * k + r] * b[4 * c + k]).sum();
        }
    }
    m
}
fn md(m: &Mat4) -> [f64; 16] {
    m.to_cols_array().map(|v| v as f64)
}

// ------------------------------------------------------------------ generators

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    fn f(&mut self, a: f32) -> f32 {
        ((self.next() >> 40) as f32 / 16777216.0 * 2.0 - 1.0) * a
    }
    fn quat(&mut self) -> Quat {
        Quat::from_xyzw(self.f(1.0), self.f(1.0), self.f(1.0), self.f(1.0)).normalize()
    }
    fn v3(&mut self, a: f32) -> Vec3A {
        Vec3A::new(self.f(a), self.f(a), self.f(a))
    }
}

struct Soa {
    r: Vec<Quat>,
    t: Vec<Vec3A>,
    s: Vec<Vec3A>,
}
impl Soa {
    fn new(n: usize) -> Self {
        Soa {
            r: vec![Quat::IDENTITY; n],
            t: vec![Vec3A::ZERO; n],
            s: vec![Vec3A::ONE; n],
        }
    }
    fn random(rng: &mut Rng, n: usize, scales: &[Vec3A]) -> Self {
        Soa {
            r: (0..n).map(|_| rng.quat()).collect(),
            t: (0..n).map(|_| rng.v3(10.0)).collect(),
            s: (0..n).map(|i| scales[i % scales.len()]).collect(),
        }
    }
    fn pose(&self) -> PoseRef<'_> {
        PoseRef {
            rotations: &self.r,
            translations: &self.t,
            scales: &self.s,
        }
    }
    fn xf(&self, b: usize) -> Xf {
        Xf {
            r: qd(self.r[b]),
            t: vd(self.t[b]),
            s: vd(self.s[b]),
        }
    }
}

/// A random parents-before-children hierarchy (several roots when `roots`).
fn hierarchy(rng: &mut Rng, n: usize, roots: bool) -> Vec<u32> {
    (0..n)
        .map(|b| {
            if b == 0 || (roots && rng.next().is_multiple_of(7)) {
                NO_PARENT
            } else if !rng.next().is_multiple_of(4) {
                b as u32 - 1 // mostly chains, as skeletons are
            } else {
                (rng.next() % b as u64) as u32
            }
        })
        .collect()
}

fn rot_close(a: Quat, b: Q, tol: f64) -> bool {
    let d = qd(a);
    let same = (0..4).all(|i| (d[i] - b[i]).abs() <= tol);
    let flip = (0..4).all(|i| (d[i] + b[i]).abs() <= tol);
    same || flip
}
/// Within `tol` of `b`'s largest component (at least 1): what rounding a rotated vector's
/// components gives (each carries the error of the whole vector's magnitude).
fn v_near(a: Vec3A, b: V, tol: f64) -> bool {
    let a = vd(a);
    let m = b.iter().fold(1.0f64, |m, c| m.max(c.abs()));
    (0..3).all(|i| (a[i] - b[i]).abs() <= tol * m)
}
fn v_close(a: Vec3A, b: V, tol: f64) -> bool {
    let a = vd(a);
    (0..3).all(|i| (a[i] - b[i]).abs() <= tol * b[i].abs().max(1.0))
}

const MIRRORED: [Vec3A; 4] = [
    Vec3A::ONE,
    Vec3A::new(-1.0, 1.0, 1.0),
    Vec3A::new(1.0, -2.0, 0.5),
    Vec3A::new(-0.5, -0.5, -0.5),
];

// ------------------------------------------------------------------ local → object

fn run_l2o(
    parents: &[u32],
    local: &Soa,
    start: usize,
    end: usize,
    out: &mut Soa,
) -> Result<(), JobError> {
    run_l2o_on(SimdPath::Auto, parents, local, start, end, out)
}

fn run_l2o_on(
    path: SimdPath,
    parents: &[u32],
    local: &Soa,
    start: usize,
    end: usize,
    out: &mut Soa,
) -> Result<(), JobError> {
    LocalToObjectJob {
        parents,
        local: local.pose(),
        start,
        end,
        out_rotations: &mut out.r,
        out_translations: &mut out.t,
        out_scales: &mut out.s,
    }
    .run_with(path)
}

/// Each bone's depth (0 for a root).
fn depths(parents: &[u32]) -> Vec<usize> {
    let mut depth = vec![0usize; parents.len()];
    for b in 0..parents.len() {
        if parents[b] != NO_PARENT {
            depth[b] = depth[parents[b] as usize] + 1;
        }
    }
    depth
}

/// The local → object paths this machine has: the scalar reference first.
fn l2o_paths() -> Vec<SimdPath> {
    [
        SimdPath::Scalar,
        SimdPath::Sse2,
        SimdPath::Avx2Fma,
        SimdPath::Neon,
    ]
    .into_iter()
    .filter(|p| p.available())
    .collect()
}

/// Float32 against the float64 metric composition: rotations within 2e-6 per level of depth,
/// translations within 4e-6 relative per level (mirrored and non-uniform scales included), on
/// every path; scales of 1 everywhere (the run that leaves the scale products out) too.
#[test]
fn local_to_object_matches_float64() {
    let mut rng = Rng(1);
    for (n, roots, scales) in [
        (1, false, &[Vec3A::ONE][..]),
        (2, false, &MIRRORED[1..2]),
        (96, false, &[Vec3A::ONE][..]),
        (200, true, &MIRRORED[..]),
        (200, true, &[Vec3A::ONE][..]),
    ] {
        let parents = hierarchy(&mut rng, n, roots);
        let local = Soa::random(&mut rng, n, scales);
        let reference = l2o_ref(&parents, &(0..n).map(|b| local.xf(b)).collect::<Vec<_>>());
        for path in l2o_paths() {
            let mut out = Soa::new(n);
            run_l2o_on(path, &parents, &local, 0, n, &mut out).unwrap();
            let mut depth = vec![0usize; n];
            for b in 0..n {
                if parents[b] != NO_PARENT {
                    depth[b] = depth[parents[b] as usize] + 1;
                }
                let d = depth[b] as f64 + 1.0;
                let rf = reference[b];
                assert!(
                    rot_close(out.r[b], rf.r, 2e-6 * d),
                    "{path:?} n={n} bone {b} rotation"
                );
                assert!(
                    v_close(out.t[b], rf.t, 4e-6 * d),
                    "{path:?} n={n} bone {b} translation {:?} {:?}",
                    out.t[b],
                    rf.t
                );
                assert!(
                    v_close(out.s[b], rf.s, 1e-6 * d),
                    "{path:?} n={n} bone {b} scale"
                );
                assert!(
                    (out.r[b].length() - 1.0).abs() < 1e-6,
                    "{path:?} normalised"
                );
            }
        }
    }
}

/// A deep chain (1,000 levels): the unnormalised rotation chain stays within rounding, and the
/// Newton step from 1 still normalises what it drifted to, on every path.
#[test]
fn local_to_object_deep_chain() {
    let mut rng = Rng(2);
    let n = 1000;
    let parents: Vec<u32> = (0..n as u32)
        .map(|b| if b == 0 { NO_PARENT } else { b - 1 })
        .collect();
    let mut local = Soa::random(&mut rng, n, &[Vec3A::ONE]);
    for t in &mut local.t {
        *t *= 0.01;
    }
    let reference = l2o_ref(&parents, &(0..n).map(|b| local.xf(b)).collect::<Vec<_>>());
    for path in l2o_paths() {
        let mut out = Soa::new(n);
        run_l2o_on(path, &parents, &local, 0, n, &mut out).unwrap();
        for b in 0..n {
            assert!(
                rot_close(out.r[b], reference[b].r, 1e-4),
                "{path:?} bone {b}"
            );
            assert!(v_close(out.t[b], reference[b].t, 1e-4), "{path:?} bone {b}");
            assert!(
                (out.r[b].length() - 1.0).abs() < 1e-6,
                "{path:?} bone {b} normalised"
            );
        }
    }
}

/// A partial update (a range) gives what the whole pass gives, and leaves the rest alone, on
/// every path, with scales of 1 everywhere and mirrored ones.
#[test]
fn local_to_object_range() {
    let mut rng = Rng(3);
    let n = 60;
    let parents = hierarchy(&mut rng, n, true);
    let depth = depths(&parents);
    for scales in [&MIRRORED[..], &[Vec3A::ONE][..]] {
        let local = Soa::random(&mut rng, n, scales);
        for path in l2o_paths() {
            let mut whole = Soa::new(n);
            run_l2o_on(path, &parents, &local, 0, n, &mut whole).unwrap();
            let mut part = Soa::new(n);
            run_l2o_on(path, &parents, &local, 0, 25, &mut part).unwrap();
            assert_eq!(part.t[30], Vec3A::ZERO, "bones past the range untouched");
            run_l2o_on(path, &parents, &local, 25, n, &mut part).unwrap();
            // Equal up to rounding: the whole pass composes bone 25's subtree from bone 24's
            // rotation unnormalised (in a register, or stored before the normalising pass)
            // where the second call reads it back normalised; translations carry that rounding
            // down the levels (within 1e-6 of their magnitude per level).
            for b in 0..n {
                assert!(
                    rot_close(part.r[b], qd(whole.r[b]), 1e-6),
                    "{path:?} bone {b}"
                );
                let d = depth[b] as f64 + 1.0;
                assert!(
                    v_near(part.t[b], vd(whole.t[b]), 1e-6 * d),
                    "{path:?} bone {b}"
                );
                assert_eq!(part.s[b], whole.s[b]);
            }
            // An empty range is valid and writes nothing.
            run_l2o_on(path, &parents, &local, 7, 7, &mut part).unwrap();
        }
    }
}

/// Every SIMD path against the scalar one, over whole skeletons and ranges (odd starts and
/// lengths: the AVX2 normalisation goes two by two): rotations within 1e-6, translations within
/// 1e-6 of their magnitude per level of depth, scales within 1e-6 relative (the paths
/// differ by rounding only: fused multiply-adds, the Newton step against an exact division).
#[test]
fn local_to_object_paths_match_scalar() {
    let mut rng = Rng(11);
    for (n, roots) in [(1, false), (2, false), (7, true), (96, false), (201, true)] {
        let parents = hierarchy(&mut rng, n, roots);
        let depth = depths(&parents);
        for scales in [&MIRRORED[..], &[Vec3A::ONE][..]] {
            let local = Soa::random(&mut rng, n, scales);
            for (start, end) in [(0, n), (n / 3, n), (1.min(n), n / 2 + 1)] {
                let run = |path| {
                    let mut o = Soa::new(n);
                    run_l2o_on(SimdPath::Scalar, &parents, &local, 0, start, &mut o).unwrap();
                    run_l2o_on(path, &parents, &local, start, end, &mut o).unwrap();
                    o
                };
                let want = run(SimdPath::Scalar);
                for path in l2o_paths() {
                    let got = run(path);
                    for b in 0..n {
                        let at = std::format!("{path:?} n={n} range {start}..{end} bone {b}");
                        let d = depth[b] as f64 + 1.0;
                        assert!(rot_close(got.r[b], qd(want.r[b]), 1e-6), "{at}");
                        assert!(v_near(got.t[b], vd(want.t[b]), 1e-6 * d), "{at}");
                        assert!(v_close(got.s[b], vd(want.s[b]), 1e-6), "{at}");
                    }
                }
            }
        }
    }
}

/// A partial update composes with the object transform the caller left before the range,
/// its scale included (bone 1's parent, bone 0, is before the range and scaled by 2).
#[test]
fn local_to_object_partial_update_reads_the_parents_scale() {
    let mut rng = Rng(12);
    let parents = [NO_PARENT, 0];
    let mut local = Soa::random(&mut rng, 2, &[Vec3A::ONE]);
    local.s[0] = Vec3A::splat(2.0);
    for path in l2o_paths() {
        let mut o = Soa::new(2);
        run_l2o_on(path, &parents, &local, 0, 1, &mut o).unwrap();
        run_l2o_on(path, &parents, &local, 1, 2, &mut o).unwrap();
        assert_eq!(o.s[1], Vec3A::splat(2.0), "{path:?}");
        let want = o.r[0] * (local.t[1] * 2.0) + o.t[0];
        assert!(v_near(o.t[1], vd(want), 1e-6), "{path:?}");
    }
}

#[test]
fn local_to_object_rejects() {
    let n = 5;
    let parents = [NO_PARENT, 0, 1, 1, 3];
    let local = Soa::new(n);
    let mut out = Soa::new(n);
    assert_eq!(run_l2o(&parents, &local, 0, n, &mut out), Ok(()));
    let e = run_l2o(&parents, &local, 3, 2, &mut out);
    assert_eq!(
        e,
        Err(JobError::Range {
            start: 3,
            end: 2,
            bones: 5
        })
    );
    assert!(matches!(
        run_l2o(&parents, &local, 0, 6, &mut out),
        Err(JobError::Range { .. })
    ));
    for bad in [
        [NO_PARENT, 0, 2, 1, 3],
        [NO_PARENT, 0, 1, 7, 3],
        [0, 0, 1, 1, 3],
    ] {
        let e = run_l2o(&bad, &local, 0, n, &mut out).unwrap_err();
        assert!(matches!(e, JobError::ParentOrder { .. }), "{bad:?}: {e:?}");
    }
    // Only the range's bones are checked: a bad parent outside it is not this call's business.
    assert_eq!(
        run_l2o(&[NO_PARENT, 0, 1, 9, 3], &local, 0, 3, &mut out),
        Ok(())
    );
    let short = Soa::new(4);
    for which in 0..6 {
        let mut l = Soa::new(n);
        let mut o = Soa::new(n);
        match which {
            0 => l.r = short.r.clone(),
            1 => l.t = short.t.clone(),
            2 => l.s = short.s.clone(),
            3 => o.r = short.r.clone(),
            4 => o.t = short.t.clone(),
            _ => o.s = short.s.clone(),
        }
        let e = run_l2o(&parents, &l, 0, n, &mut o).unwrap_err();
        assert!(
            matches!(
                e,
                JobError::Length {
                    expected: 5,
                    got: 4,
                    ..
                }
            ),
            "{which}: {e:?}"
        );
    }
}

// ------------------------------------------------------------------ blend

struct Layer {
    pose: Soa,
    weight: f32,
    bone_weights: Option<Vec<f32>>,
}

fn run_blend(
    layers: &[Layer],
    additive: &[Layer],
    rest: &Soa,
    out: &mut Soa,
) -> Result<(), JobError> {
    let l: Vec<BlendLayer> = layers
        .iter()
        .map(|l| BlendLayer {
            pose: l.pose.pose(),
            weight: l.weight,
            bone_weights: l.bone_weights.as_deref(),
        })
        .collect();
    let a: Vec<BlendLayer> = additive
        .iter()
        .map(|l| BlendLayer {
            pose: l.pose.pose(),
            weight: l.weight,
            bone_weights: l.bone_weights.as_deref(),
        })
        .collect();
    BlendJob {
        layers: &l,
        additive: &a,
        rest: rest.pose(),
        threshold: 0.1,
        out_rotations: &mut out.r,
        out_translations: &mut out.t,
        out_scales: &mut out.s,
    }
    .run()
}

/// The documented blend in float64.
fn blend_ref(layers: &[Layer], additive: &[Layer], rest: &Soa, b: usize, threshold: f64) -> Xf {
    // (q, t, s, w) sums
    let mut acc = ([0.0f64; 4], [0.0f64; 3], [0.0f64; 3], 0.0f64);
    fn add(acc: &mut ([f64; 4], [f64; 3], [f64; 3], f64), x: Xf, wt: f64) {
        let dot: f64 = (0..4).map(|i| acc.0[i] * x.r[i]).sum();
        let sign = if dot < 0.0 { -1.0 } else { 1.0 };
        for i in 0..4 {
            acc.0[i] += sign * x.r[i] * wt;
        }
        for i in 0..3 {
            acc.1[i] += x.t[i] * wt;
            acc.2[i] += x.s[i] * wt;
        }
        acc.3 += wt;
    }
    for l in layers {
        let wt = l.weight as f64 * l.bone_weights.as_ref().map_or(1.0, |v| v[b] as f64);
        if wt > 0.0 {
            add(&mut acc, l.pose.xf(b), wt);
        }
    }
    if acc.3 < threshold {
        let wt = threshold - acc.3;
        add(&mut acc, rest.xf(b), wt);
    }
    let (q, t, s, w) = acc;
    let mut r = qnorm(q);
    let mut t = t.map(|v| v / w);
    let mut s = s.map(|v| v / w);
    for l in additive {
        let wt = l.weight as f64 * l.bone_weights.as_ref().map_or(1.0, |v| v[b] as f64);
        if wt > 0.0 {
            let x = l.pose.xf(b);
            let a = if x.r[3] < 0.0 { x.r.map(|v| -v) } else { x.r };
            let a = qnorm([a[0] * wt, a[1] * wt, a[2] * wt, 1.0 + (a[3] - 1.0) * wt]);
            r = qnorm(qmul(r, a));
            for i in 0..3 {
                t[i] += x.t[i] * wt;
                s[i] *= 1.0 + (x.s[i] - 1.0) * wt;
            }
        }
    }
    Xf { r, t, s }
}

#[test]
fn blend_matches_float64() {
    let mut rng = Rng(4);
    let n = 40;
    let rest = Soa::random(&mut rng, n, &[Vec3A::ONE]);
    let mk = |rng: &mut Rng, w: f32, per_bone: bool| Layer {
        pose: Soa::random(rng, n, &MIRRORED),
        weight: w,
        bone_weights: per_bone.then(|| {
            (0..n)
                .map(|b| if b % 5 == 0 { 0.0 } else { rng.f(1.0).abs() })
                .collect()
        }),
    };
    let cases: Vec<(Vec<Layer>, Vec<Layer>)> = vec![
        (vec![mk(&mut rng, 1.0, false)], vec![]),
        (
            vec![mk(&mut rng, 0.3, false), mk(&mut rng, 0.7, true)],
            vec![],
        ),
        (
            vec![
                mk(&mut rng, 0.5, true),
                mk(&mut rng, 0.2, false),
                mk(&mut rng, -1.0, false),
            ],
            vec![mk(&mut rng, 0.6, false)],
        ),
        (
            vec![mk(&mut rng, 0.02, false)],
            vec![mk(&mut rng, 1.0, true), mk(&mut rng, 0.25, false)],
        ),
        // Zero weights everywhere: the rest pose.
        (
            vec![mk(&mut rng, 0.0, false), mk(&mut rng, 0.0, true)],
            vec![],
        ),
    ];
    for (i, (layers, additive)) in cases.iter().enumerate() {
        let mut out = Soa::new(n);
        run_blend(layers, additive, &rest, &mut out).unwrap();
        for b in 0..n {
            let r = blend_ref(layers, additive, &rest, b, 0.1);
            assert!(
                rot_close(out.r[b], r.r, 2e-6),
                "case {i} bone {b}: {:?} {:?}",
                out.r[b],
                r.r
            );
            assert!(
                v_close(out.t[b], r.t, 2e-6),
                "case {i} bone {b} translation"
            );
            assert!(v_close(out.s[b], r.s, 2e-6), "case {i} bone {b} scale");
        }
    }
    // Zero weights give the rest pose itself.
    let (layers, _) = &cases[4];
    let mut out = Soa::new(n);
    run_blend(layers, &[], &rest, &mut out).unwrap();
    for b in 0..n {
        assert!(rot_close(out.r[b], qd(rest.r[b]), 1e-6));
        assert!(v_close(out.t[b], vd(rest.t[b]), 1e-6));
    }
    // No layer at all: the rest pose too.
    run_blend(&[], &[], &rest, &mut out).unwrap();
    assert!(v_close(out.t[3], vd(rest.t[3]), 1e-6));
}

/// Opposite-sign quaternions of one rotation blend to that rotation (the sign fix).
#[test]
fn blend_sign_fix() {
    let q = Quat::from_rotation_y(1.0);
    let a = Layer {
        pose: Soa {
            r: vec![q],
            t: vec![Vec3A::X],
            s: vec![Vec3A::ONE],
        },
        weight: 0.5,
        bone_weights: None,
    };
    let b = Layer {
        pose: Soa {
            r: vec![-q],
            t: vec![Vec3A::Y],
            s: vec![Vec3A::ONE],
        },
        weight: 0.5,
        bone_weights: None,
    };
    let mut out = Soa::new(1);
    run_blend(&[a, b], &[], &Soa::new(1), &mut out).unwrap();
    assert!(rot_close(out.r[0], qd(q), 1e-6), "{:?}", out.r[0]);
    assert!(v_close(out.t[0], [0.5, 0.5, 0.0], 1e-6));
}

#[test]
fn blend_rejects() {
    let n = 4;
    let rest = Soa::new(n);
    let good = || Layer {
        pose: Soa::new(n),
        weight: 1.0,
        bone_weights: None,
    };
    let mut out = Soa::new(n);
    assert_eq!(run_blend(&[good()], &[good()], &rest, &mut out), Ok(()));
    // Every slice of a layer, of an additive layer, of the rest pose, of the output, per-bone weights.
    for which in 0..3 {
        let mut l = good();
        match which {
            0 => l.pose.r.pop().map(|_| ()),
            1 => l.pose.t.pop().map(|_| ()),
            _ => l.pose.s.pop().map(|_| ()),
        };
        assert!(matches!(
            run_blend(&[l], &[], &rest, &mut out),
            Err(JobError::Length { .. })
        ));
        let mut l = good();
        l.pose.r.push(Quat::IDENTITY);
        assert!(matches!(
            run_blend(&[], &[l], &rest, &mut out),
            Err(JobError::Length { .. })
        ));
    }
    let l = Layer {
        bone_weights: Some(vec![1.0; n + 1]),
        ..good()
    };
    assert!(matches!(
        run_blend(&[l], &[], &rest, &mut out),
        Err(JobError::Length { .. })
    ));
    let l = Layer {
        bone_weights: Some(vec![1.0, f32::NAN, 1.0, 1.0]),
        ..good()
    };
    assert_eq!(
        run_blend(&[l], &[], &rest, &mut out),
        Err(JobError::NotFinite {
            what: "blend bone weight",
            at: 1
        })
    );
    let l = Layer {
        weight: f32::INFINITY,
        ..good()
    };
    assert!(matches!(
        run_blend(&[], &[l], &rest, &mut out),
        Err(JobError::NotFinite { .. })
    ));
    let short = Soa::new(n - 1);
    assert!(matches!(
        run_blend(&[good()], &[], &short, &mut out),
        Err(JobError::Length { .. })
    ));
    for which in 0..3 {
        let mut o = Soa::new(n);
        match which {
            0 => o.r.push(Quat::IDENTITY),
            1 => o.t.push(Vec3A::ZERO),
            _ => o.s.push(Vec3A::ONE),
        }
        assert!(matches!(
            run_blend(&[good()], &[], &rest, &mut o),
            Err(JobError::Length { .. })
        ));
    }
    for threshold in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let l = [BlendLayer {
            pose: rest.pose(),
            weight: 1.0,
            bone_weights: None,
        }];
        let e = BlendJob {
            layers: &l,
            additive: &[],
            rest: rest.pose(),
            threshold,
            out_rotations: &mut out.r,
            out_translations: &mut out.t,
            out_scales: &mut out.s,
        }
        .run();
        assert!(matches!(e, Err(JobError::NotFinite { .. })), "{threshold}");
    }
}

// ------------------------------------------------------------------ palette

#[test]
fn palette_matches_float64() {
    let mut rng = Rng(5);
    let n = 30;
    let object = Soa::random(&mut rng, n, &MIRRORED);
    let inv: Vec<Mat4> = (0..12)
        .map(|_| {
            Mat4::from_scale_rotation_translation(
                rng.v3(2.0).into(),
                rng.quat(),
                rng.v3(5.0).into(),
            )
        })
        .collect();
    let joints: Vec<u16> = (0..12).map(|i| (i * 7 % n) as u16).collect();
    for use_joints in [false, true] {
        let mut m4 = vec![Mat4::ZERO; 12];
        let mut rows = vec![[Vec4::ZERO; 3]; 12];
        for rows_out in [false, true] {
            SkinningPaletteJob {
                object: object.pose(),
                inverse_bind: &inv,
                joints: use_joints.then_some(&joints[..]),
                out: if rows_out {
                    PaletteOut::Rows3x4(&mut rows)
                } else {
                    PaletteOut::Mat4(&mut m4)
                },
            }
            .run()
            .unwrap();
        }
        for i in 0..12 {
            let b = if use_joints { joints[i] as usize } else { i };
            let r = matmul(&mat_ref(object.xf(b)), &md(&inv[i]));
            let got = md(&m4[i]);
            for e in 0..16 {
                assert!(
                    (got[e] - r[e]).abs() <= 1e-5 * r[e].abs().max(10.0),
                    "{i} {e}: {} {}",
                    got[e],
                    r[e]
                );
            }
            for (row, v) in rows[i].iter().enumerate() {
                for c in 0..4 {
                    assert_eq!(
                        v[c],
                        m4[i].col(c)[row],
                        "3x4 row {row} col {c} is the 4x4's"
                    );
                }
            }
        }
    }
}

/// The x86-64 palette paths (SSE2 and, where the CPU has it, AVX) give glam's matrices bit for
/// bit: random rotations (some with zero or negative-zero components), mirrored and
/// non-uniform scales, with and without a joint list, 4×4 and 3×4 out.
#[cfg(target_arch = "x86_64")]
#[test]
fn palette_paths_agree_bit_for_bit_with_glam() {
    let mut rng = Rng(77);
    let n = 97;
    let mut object = Soa::random(&mut rng, n, &MIRRORED);
    for b in 0..n {
        if b % 3 == 0 {
            object.s[b] = rng.v3(3.0);
        }
    }
    object.r[0] = Quat::IDENTITY;
    object.r[1] = Quat::from_xyzw(-0.0, 0.0, -0.0, 1.0);
    object.r[2] = Quat::from_xyzw(0.0, 1.0, 0.0, 0.0);
    let inv: Vec<Mat4> = (0..n)
        .map(|i| {
            if i % 5 == 0 {
                Mat4::IDENTITY
            } else {
                Mat4::from_scale_rotation_translation(
                    rng.v3(2.0).into(),
                    rng.quat(),
                    rng.v3(5.0).into(),
                )
            }
        })
        .collect();
    let joints: Vec<u16> = (0..n).map(|i| (i * 31 % n) as u16).collect();
    let bits = |m: &[Mat4]| -> Vec<u32> {
        m.iter()
            .flat_map(|m| m.to_cols_array())
            .map(f32::to_bits)
            .collect()
    };
    for use_joints in [false, true] {
        macro_rules! job {
            ($out:expr) => {
                SkinningPaletteJob {
                    object: object.pose(),
                    inverse_bind: &inv,
                    joints: use_joints.then_some(&joints[..]),
                    out: $out,
                }
            };
        }
        let (mut want, mut sse2, mut auto) = (
            vec![Mat4::ZERO; n],
            vec![Mat4::ZERO; n],
            vec![Mat4::ZERO; n],
        );
        job!(PaletteOut::Mat4(&mut want)).run_glam();
        job!(PaletteOut::Mat4(&mut sse2)).run_sse2().unwrap();
        job!(PaletteOut::Mat4(&mut auto)).run().unwrap();
        assert_eq!(bits(&sse2), bits(&want), "SSE2 path vs glam");
        assert_eq!(
            bits(&auto),
            bits(&want),
            "{:?} path vs glam",
            SimdPath::best()
        );
        let (mut want_rows, mut rows) = (vec![[Vec4::ZERO; 3]; n], vec![[Vec4::ZERO; 3]; n]);
        job!(PaletteOut::Rows3x4(&mut want_rows)).run_glam();
        job!(PaletteOut::Rows3x4(&mut rows)).run().unwrap();
        let rbits = |r: &[[Vec4; 3]]| -> Vec<u32> {
            r.iter()
                .flatten()
                .flat_map(|v| v.to_array())
                .map(f32::to_bits)
                .collect()
        };
        assert_eq!(rbits(&rows), rbits(&want_rows), "3x4 rows vs glam");
    }
}

#[test]
fn palette_rejects() {
    let object = Soa::new(4);
    let inv = vec![Mat4::IDENTITY; 3];
    let run = |object: &Soa, inv: &[Mat4], joints: Option<&[u16]>, out: usize| {
        let mut m = vec![Mat4::ZERO; out];
        SkinningPaletteJob {
            object: object.pose(),
            inverse_bind: inv,
            joints,
            out: PaletteOut::Mat4(&mut m),
        }
        .run()
    };
    assert_eq!(run(&object, &inv, None, 3), Ok(()));
    assert_eq!(run(&object, &inv, Some(&[3, 0, 1]), 3), Ok(()));
    assert!(matches!(
        run(&object, &inv, None, 2),
        Err(JobError::Length { .. })
    ));
    assert!(matches!(
        run(&object, &inv, Some(&[0, 1]), 3),
        Err(JobError::Length { .. })
    ));
    assert_eq!(
        run(&object, &inv, Some(&[0, 4, 1]), 3),
        Err(JobError::Index {
            what: "palette joints",
            at: 1,
            index: 4,
            limit: 4
        })
    );
    assert!(matches!(
        run(&object, &vec![Mat4::IDENTITY; 5], None, 5),
        Err(JobError::Length { .. })
    ));
    let mut bad = Soa::new(4);
    bad.t.pop();
    assert!(matches!(
        run(&bad, &inv, None, 3),
        Err(JobError::Length { .. })
    ));
    let mut rows = vec![[Vec4::ZERO; 3]; 2];
    let e = SkinningPaletteJob {
        object: object.pose(),
        inverse_bind: &inv,
        joints: None,
        out: PaletteOut::Rows3x4(&mut rows),
    }
    .run();
    assert!(matches!(e, Err(JobError::Length { .. })));
}

// ------------------------------------------------------------------ vertex jobs

const PATHS: [SimdPath; 4] = [
    SimdPath::Sse2,
    SimdPath::Avx2Fma,
    SimdPath::Neon,
    SimdPath::Auto,
];

fn v3s(rng: &mut Rng, n: usize, a: f32) -> Vec<[f32; 3]> {
    (0..n).map(|_| [rng.f(a), rng.f(a), rng.f(a)]).collect()
}

/// Scalar against float64, and every SIMD path this machine has against scalar: within 1e-5
/// relative to the magnitude of the inputs (the SIMD paths fuse or reorder multiply-adds).
#[test]
fn transform_points_paths() {
    let mut rng = Rng(6);
    let m = Mat4::from_cols_array(&core::array::from_fn(|_| rng.f(1.0)));
    for n in [0, 1, 2, 3, 4, 5, 7, 8, 9, 33, 1000] {
        let pts = v3s(&mut rng, n, 100.0);
        let nrm = v3s(&mut rng, n, 1.0);
        let run = |path| {
            let (mut op, mut on) = (vec![[0.0f32; 4]; n], vec![[0.0f32; 3]; n]);
            TransformPointsJob {
                matrix: &m,
                points: &pts,
                out_points: &mut op,
                normals: &nrm,
                out_normals: &mut on,
            }
            .run_with(path)
            .map(|_| (op, on))
        };
        let (sp, sn) = run(SimdPath::Scalar).unwrap();
        let md = md(&m);
        for i in 0..n {
            for r in 0..4 {
                let want: f64 = (0..3)
                    .map(|c| md[4 * c + r] * pts[i][c] as f64)
                    .sum::<f64>()
                    + md[12 + r];
                assert!(
                    (sp[i][r] as f64 - want).abs() <= 1e-5 * 300.0,
                    "scalar point {i}"
                );
            }
            for r in 0..3 {
                let want: f64 = (0..3).map(|c| md[4 * c + r] * nrm[i][c] as f64).sum();
                assert!(
                    (sn[i][r] as f64 - want).abs() <= 1e-5 * 3.0,
                    "scalar normal {i}"
                );
            }
        }
        for path in PATHS {
            match run(path) {
                Ok((p, nn)) => {
                    for i in 0..n {
                        for r in 0..4 {
                            assert!(
                                (p[i][r] - sp[i][r]).abs() <= 1e-5 * 300.0,
                                "{path:?} n={n} point {i}"
                            );
                        }
                        for r in 0..3 {
                            assert!(
                                (nn[i][r] - sn[i][r]).abs() <= 1e-5 * 3.0,
                                "{path:?} n={n} normal {i}"
                            );
                        }
                    }
                }
                Err(e) => assert!(!path.available() && e == JobError::Unavailable(path)),
            }
        }
    }
}

type Points = Vec<[f32; 3]>;

/// Inputs of one skinning case.
struct SkinCase {
    palette: Vec<Mat4>,
    k: usize,
    joints: Vec<u16>,
    weights: Vec<f32>,
    pos: Vec<[f32; 3]>,
    nrm: Vec<[f32; 3]>,
}

impl SkinCase {
    fn new(rng: &mut Rng, v: usize, k: usize, with_normals: bool) -> Self {
        let palette: Vec<Mat4> = (0..20)
            .map(|i| {
                Mat4::from_scale_rotation_translation(
                    MIRRORED[i % 4].into(),
                    rng.quat(),
                    rng.v3(50.0).into(),
                )
            })
            .collect();
        let mut weights = Vec::new();
        for i in 0..v {
            let w: Vec<f32> = (0..k).map(|_| rng.f(1.0).abs() + 0.01).collect();
            let s: f32 = w.iter().sum();
            // Sums of 1 ± ε: the job uses weights as given.
            let eps = [0.0, 1e-6, -1e-6, 1e-3][i % 4];
            weights.extend(w.iter().map(|x| x / s * (1.0 + eps)));
        }
        SkinCase {
            palette,
            k,
            joints: (0..v * k).map(|_| (rng.next() % 20) as u16).collect(),
            weights,
            pos: v3s(rng, v, 100.0),
            nrm: if with_normals {
                v3s(rng, v, 1.0)
            } else {
                vec![]
            },
        }
    }
    fn run(&self, path: SimdPath) -> Result<(Points, Points), JobError> {
        let (mut op, mut on) = (
            vec![[0.0f32; 3]; self.pos.len()],
            vec![[0.0f32; 3]; self.nrm.len()],
        );
        SkinJob {
            palette: &self.palette,
            influences: self.k,
            joints: &self.joints,
            weights: &self.weights,
            positions: &self.pos,
            normals: &self.nrm,
            out_positions: &mut op,
            out_normals: &mut on,
        }
        .run_with(path)
        .map(|_| (op, on))
    }
}

#[test]
fn skin_paths_match_float64() {
    let mut rng = Rng(7);
    for k in 1..=4 {
        for v in [0, 1, 2, 3, 5, 17, 500] {
            for with_normals in [true, false] {
                let c = SkinCase::new(&mut rng, v, k, with_normals);
                let (sp, sn) = c.run(SimdPath::Scalar).unwrap();
                // float64: Σ w · (M p), which equals (Σ w M) p.
                for i in 0..v {
                    let mut want = [0.0f64; 6];
                    for j in 0..k {
                        let m = md(&c.palette[c.joints[i * k + j] as usize]);
                        let w = c.weights[i * k + j] as f64;
                        for r in 0..3 {
                            want[r] += w
                                * ((0..3)
                                    .map(|q| m[4 * q + r] * c.pos[i][q] as f64)
                                    .sum::<f64>()
                                    + m[12 + r]);
                            if with_normals {
                                want[3 + r] += w
                                    * (0..3)
                                        .map(|q| m[4 * q + r] * c.nrm[i][q] as f64)
                                        .sum::<f64>();
                            }
                        }
                    }
                    for r in 0..3 {
                        // |M p| ≤ ~2·100·√3 + 50·√3 here: 1e-6 relative of 500.
                        assert!(
                            (sp[i][r] as f64 - want[r]).abs() <= 5e-4,
                            "k={k} v={i} pos {} {}",
                            sp[i][r],
                            want[r]
                        );
                        if with_normals {
                            assert!(
                                (sn[i][r] as f64 - want[3 + r]).abs() <= 1e-5,
                                "k={k} v={i} normal"
                            );
                        }
                    }
                }
                for path in PATHS {
                    match c.run(path) {
                        Ok((p, n)) => {
                            for i in 0..v {
                                for r in 0..3 {
                                    assert!(
                                        (p[i][r] - sp[i][r]).abs() <= 5e-4,
                                        "{path:?} k={k} v={i}"
                                    );
                                    if with_normals {
                                        assert!(
                                            (n[i][r] - sn[i][r]).abs() <= 1e-5,
                                            "{path:?} k={k} v={i} normal"
                                        );
                                    }
                                }
                            }
                        }
                        Err(e) => assert!(!path.available() && e == JobError::Unavailable(path)),
                    }
                }
            }
        }
    }
}

/// Normals go through the blended matrix's 3×3 only: an infinite translation leaves them
/// finite and equal on every path (a path that multiplied the translation column by 0 would
/// turn them into NaN).
#[test]
fn skin_normals_never_meet_the_translation() {
    let palette = vec![
        Mat4::from_cols(
            Vec4::new(0.0, 1.0, 0.0, 0.0),
            Vec4::new(-1.0, 0.0, 0.0, 0.0),
            Vec4::new(0.0, 0.0, 1.0, 0.0),
            Vec4::new(f32::INFINITY, f32::NEG_INFINITY, f32::INFINITY, 1.0),
        );
        2
    ];
    let v = 5;
    let normals: Vec<[f32; 3]> = (0..v).map(|i| [1.0, i as f32, 0.5]).collect();
    let positions = vec![[0.0f32; 3]; v];
    let (joints, weights) = ([0u16, 1].repeat(v), [0.25f32, 0.75].repeat(v));
    for path in [SimdPath::Scalar]
        .into_iter()
        .chain(PATHS)
        .filter(|p| p.available())
    {
        let (mut op, mut on) = (vec![[0.0f32; 3]; v], vec![[0.0f32; 3]; v]);
        SkinJob {
            palette: &palette,
            influences: 2,
            joints: &joints,
            weights: &weights,
            positions: &positions,
            normals: &normals,
            out_positions: &mut op,
            out_normals: &mut on,
        }
        .run_with(path)
        .unwrap();
        for (i, n) in on.iter().enumerate() {
            assert_eq!(*n, [-(i as f32), 1.0, 0.5], "{path:?} normal {i}");
        }
    }
}

#[test]
fn skin_rejects() {
    let mut rng = Rng(8);
    let good = SkinCase::new(&mut rng, 6, 3, true);
    assert!(good.run(SimdPath::Scalar).is_ok());
    for k in [0, 5] {
        let c = SkinCase {
            k,
            ..SkinCase::new(&mut rng, 6, 3, true)
        };
        assert_eq!(c.run(SimdPath::Auto).unwrap_err(), JobError::Influences(k));
    }
    let mut c = SkinCase::new(&mut rng, 6, 3, true);
    c.joints[13] = 20;
    assert_eq!(
        c.run(SimdPath::Auto).unwrap_err(),
        JobError::Index {
            what: "skin joints",
            at: 13,
            index: 20,
            limit: 20
        }
    );
    let mut c = SkinCase::new(&mut rng, 6, 3, true);
    c.joints.pop();
    assert!(matches!(
        c.run(SimdPath::Auto),
        Err(JobError::Length {
            what: "skin joints",
            ..
        })
    ));
    let mut c = SkinCase::new(&mut rng, 6, 3, true);
    c.weights.push(0.0);
    assert!(matches!(
        c.run(SimdPath::Auto),
        Err(JobError::Length {
            what: "skin weights",
            ..
        })
    ));
    let mut c = SkinCase::new(&mut rng, 6, 3, true);
    c.nrm.pop();
    assert!(matches!(
        c.run(SimdPath::Auto),
        Err(JobError::Length { .. })
    ));
    // Outputs of the wrong length.
    let c = SkinCase::new(&mut rng, 6, 3, true);
    for (po, no) in [(5, 6), (7, 6), (6, 5), (6, 0)] {
        let (mut op, mut on) = (vec![[0.0f32; 3]; po], vec![[0.0f32; 3]; no]);
        let e = SkinJob {
            palette: &c.palette,
            influences: 3,
            joints: &c.joints,
            weights: &c.weights,
            positions: &c.pos,
            normals: &c.nrm,
            out_positions: &mut op,
            out_normals: &mut on,
        }
        .run();
        assert!(matches!(e, Err(JobError::Length { .. })), "{po} {no}");
    }
    // An empty palette rejects any joint.
    let c = SkinCase {
        palette: vec![],
        ..SkinCase::new(&mut rng, 2, 1, false)
    };
    assert!(matches!(
        c.run(SimdPath::Auto),
        Err(JobError::Index { limit: 0, .. })
    ));
    // Points job: outputs of the wrong length.
    let m = Mat4::IDENTITY;
    let pts = [[0.0f32; 3]; 3];
    let (mut op, mut on) = ([[0.0f32; 4]; 2], [[0.0f32; 3]; 0]);
    let e = TransformPointsJob {
        matrix: &m,
        points: &pts,
        out_points: &mut op,
        normals: &[],
        out_normals: &mut on,
    }
    .run();
    assert!(matches!(e, Err(JobError::Length { .. })));
    let mut op = [[0.0f32; 4]; 3];
    let mut on = [[0.0f32; 3]; 1];
    let e = TransformPointsJob {
        matrix: &m,
        points: &pts,
        out_points: &mut op,
        normals: &pts,
        out_normals: &mut on,
    }
    .run();
    assert!(matches!(e, Err(JobError::Length { .. })));
}

/// The one pass behind `pose::local_to_object` and `pose::local_to_object_with` gives this
/// job's figures.
#[test]
fn pose_passes_are_the_job() {
    let mut rng = Rng(9);
    let n = 50;
    let parents = hierarchy(&mut rng, n, true);
    let local = Soa::random(&mut rng, n, &MIRRORED);
    let mut out = Soa::new(n);
    run_l2o(&parents, &local, 0, n, &mut out).unwrap();
    let mut p = crate::Pose::new(n);
    p.rotations.clone_from(&local.r);
    p.translations.clone_from(&local.t);
    p.scales.clone_from(&local.s);
    let mut obj = crate::Pose::default();
    crate::pose::local_to_object(&parents, &p, &mut obj).unwrap();
    assert_eq!(obj.translations, out.t);
    assert_eq!(obj.rotations, out.r);
    assert!(matches!(
        crate::pose::local_to_object(&[NO_PARENT, 2, 0], &crate::Pose::new(3), &mut obj),
        Err(JobError::ParentOrder { bone: 1, parent: 2 })
    ));
}
