//! The runtime jobs (`clipforge::runtime::jobs`) on real clips (`CLIPFORGE_DATA=../shared/data`):
//! every ACL regression transform clip and a BVH clip per folder, at a spread of samples.
//! References are float64: local → object is the codec's own metric composition
//! (`anim::metric::object_space_f64`); the blend, palette and skinning references are written
//! here with glam's float64 types. Every SIMD path this CPU has is run.

// Poses are parallel arrays indexed by bone.
#![allow(clippy::needless_range_loop)]

use crate::common;

use clipforge::anim::RawClip;
use clipforge::anim::formats::load_clips;
use clipforge::anim::metric::{self, DTransform};
use clipforge::runtime::jobs::{
    BlendJob, BlendLayer, LocalToObjectJob, PaletteOut, PoseRef, SimdPath, SkinJob,
    SkinningPaletteJob,
};
use glam::{DMat4, DQuat, DVec3, DVec4, Mat4, Quat, Vec3A};
use std::path::{Path, PathBuf};

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    v.sort();
    v
}

/// The real clips: ACL regression transform clips (the 1e25 one left out, as everywhere) and
/// the first BVH file of each BVH folder.
fn clips(data: &Path) -> Vec<RawClip> {
    let mut out = Vec::new();
    for p in files(&data.join("acl-regression"), ".acl.sjson") {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.contains("with_inf_error") || name.contains("format_reference") {
            continue;
        }
        if let Ok(cs) = load_clips(&p) {
            out.extend(
                cs.into_iter()
                    .filter(|c| c.num_bones() > 0 && c.additive.is_none()),
            );
        }
    }
    let mut seen = std::collections::HashSet::new();
    for p in files(&data.join("bvh"), ".bvh") {
        if seen.insert(p.parent().unwrap().to_path_buf()) {
            out.extend(load_clips(&p).unwrap());
        }
    }
    assert!(out.len() >= 20, "only {} real clips", out.len());
    out
}

struct Soa {
    r: Vec<Quat>,
    t: Vec<Vec3A>,
    s: Vec<Vec3A>,
}
impl Soa {
    fn of(clip: &RawClip, sample: usize) -> Soa {
        let n = clip.num_bones();
        let ix = |b| clip.index(b, sample);
        Soa {
            r: (0..n).map(|b| clip.rotations[ix(b)]).collect(),
            t: (0..n).map(|b| clip.translations[ix(b)].into()).collect(),
            s: (0..n).map(|b| clip.scales[ix(b)].into()).collect(),
        }
    }
    fn empty(n: usize) -> Soa {
        Soa {
            r: vec![Quat::IDENTITY; n],
            t: vec![Vec3A::ZERO; n],
            s: vec![Vec3A::ONE; n],
        }
    }
    fn pose(&self) -> PoseRef<'_> {
        PoseRef {
            rotations: &self.r,
            translations: &self.t,
            scales: &self.s,
        }
    }
    fn d(&self, b: usize) -> DTransform {
        DTransform {
            rotation: self.r[b].as_dquat(),
            translation: self.t[b].as_dvec3(),
            scale: self.s[b].as_dvec3(),
        }
    }
    fn l2o(&self, parents: &[u32]) -> Soa {
        let mut o = Soa::empty(parents.len());
        LocalToObjectJob::new(parents, self.pose(), &mut o.r, &mut o.t, &mut o.s)
            .run()
            .unwrap();
        o
    }
}

fn samples(clip: &RawClip) -> Vec<usize> {
    let n = clip.num_samples;
    let mut v: Vec<usize> = (0..8).map(|i| i * (n - 1) / 7).collect();
    v.dedup();
    v
}

fn rot_err(a: Quat, b: DQuat) -> f64 {
    let a = a.as_dquat();
    (DVec4::from(a) - DVec4::from(b))
        .length()
        .min((DVec4::from(a) + DVec4::from(b)).length())
}

/// Largest translation magnitude of a pose, for relative tolerances (clips are in cm, up to
/// metres from the origin).
fn scale_of(ts: impl Iterator<Item = DVec3>) -> f64 {
    ts.map(|t| t.abs().max_element()).fold(1.0, f64::max)
}

#[test]
fn local_to_object_matches_the_metric_on_real_clips() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let mut checked = 0;
    for clip in clips(&data) {
        let parents = &clip.skeleton.parents;
        let reference = metric::object_space_f64(&clip);
        let nb = clip.num_bones();
        for s in samples(&clip) {
            let o = Soa::of(&clip, s).l2o(parents);
            let refs = &reference[s * nb..(s + 1) * nb];
            let mag = scale_of(refs.iter().map(|r| r.translation));
            for b in 0..nb {
                let e = rot_err(o.r[b], refs[b].rotation);
                assert!(
                    e < 1e-5,
                    "{} sample {s} bone {b}: rotation off by {e}",
                    clip.name
                );
                let e = (o.t[b].as_dvec3() - refs[b].translation)
                    .abs()
                    .max_element();
                assert!(
                    e < 2e-6 * mag,
                    "{} sample {s} bone {b}: translation off by {e} (scale {mag})",
                    clip.name
                );
                let e = (o.s[b].as_dvec3() - refs[b].scale).abs().max_element();
                assert!(
                    e < 1e-5 * refs[b].scale.abs().max_element().max(1.0),
                    "{} bone {b}: scale",
                    clip.name
                );
            }
            checked += 1;
        }
    }
    eprintln!("{checked} real poses checked");
}

/// Two samples of a clip blended (one with per-bone weights) plus a third as an additive layer,
/// against the documented blend in float64.
#[test]
fn blend_matches_float64_on_real_clips() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    for clip in clips(&data) {
        let n = clip.num_bones();
        let ss = samples(&clip);
        let (a, b, c) = (
            Soa::of(&clip, ss[0]),
            Soa::of(&clip, *ss.last().unwrap()),
            Soa::of(&clip, ss[ss.len() / 2]),
        );
        // The additive layer: the middle sample relative to the first (a small delta).
        let add = Soa {
            r: (0..n)
                .map(|i| (a.r[i].conjugate() * c.r[i]).normalize())
                .collect(),
            t: (0..n).map(|i| c.t[i] - a.t[i]).collect(),
            s: (0..n).map(|i| c.s[i] / a.s[i]).collect(),
        };
        let bone_w: Vec<f32> = (0..n).map(|i| (i % 3) as f32 * 0.5).collect();
        let rest = Soa::of(&clip, 0);
        let layers = [
            BlendLayer {
                pose: a.pose(),
                weight: 0.3,
                bone_weights: None,
            },
            BlendLayer {
                pose: b.pose(),
                weight: 0.7,
                bone_weights: Some(&bone_w),
            },
        ];
        let additive = [BlendLayer {
            pose: add.pose(),
            weight: 0.5,
            bone_weights: None,
        }];
        let mut out = Soa::empty(n);
        BlendJob {
            layers: &layers,
            additive: &additive,
            rest: rest.pose(),
            threshold: 0.1,
            out_rotations: &mut out.r,
            out_translations: &mut out.t,
            out_scales: &mut out.s,
        }
        .run()
        .unwrap();
        let mag = scale_of((0..n).map(|i| a.d(i).translation.abs().max(b.d(i).translation.abs())));
        for i in 0..n {
            let (wa, wb) = (0.3f64, 0.7 * bone_w[i] as f64);
            let mut ws = wa + wb;
            let (qa, qb) = (a.d(i).rotation, b.d(i).rotation);
            let qb = if qa.dot(qb) < 0.0 { -qb } else { qb };
            let mut q = DVec4::from(qa) * wa + DVec4::from(qb) * wb;
            let mut t = a.d(i).translation * wa + b.d(i).translation * wb;
            let mut s = a.d(i).scale * wa + b.d(i).scale * wb;
            if ws < 0.1 {
                let w = 0.1 - ws;
                let r = rest.d(i);
                let rq = DVec4::from(r.rotation);
                q += if q.dot(rq) < 0.0 { -rq } else { rq } * w;
                t += r.translation * w;
                s += r.scale * w;
                ws = 0.1;
            }
            let r = DQuat::from_vec4(q.normalize());
            let (t, s) = (t / ws, s / ws);
            let d = add.d(i);
            let aq = if d.rotation.w < 0.0 {
                -d.rotation
            } else {
                d.rotation
            };
            let aq = DQuat::from_vec4(DVec4::W.lerp(DVec4::from(aq), 0.5).normalize());
            let r = (r * aq).normalize();
            let t = t + d.translation * 0.5;
            let s = s * (DVec3::ONE + (d.scale - DVec3::ONE) * 0.5);
            assert!(
                rot_err(out.r[i], r) < 2e-6,
                "{} bone {i}: rotation",
                clip.name
            );
            assert!(
                (out.t[i].as_dvec3() - t).abs().max_element() < 2e-6 * mag,
                "{} bone {i}: translation",
                clip.name
            );
            assert!(
                (out.s[i].as_dvec3() - s).abs().max_element() < 2e-6,
                "{} bone {i}: scale",
                clip.name
            );
        }
    }
}

fn m_of(x: &DTransform) -> DMat4 {
    DMat4::from_scale_rotation_translation(x.scale, x.rotation, x.translation)
}

/// The palette (sample 0 as the bind pose) and skinning of generated vertices bound to the
/// clip's bones, 1–4 influences, every SIMD path, against float64 (normals relative to their
/// magnitude: 09_02's palette has 3×3 entries near 1,000).
#[test]
fn palette_and_skinning_match_float64_on_real_clips() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let mut state = 0x5EED_0025u64;
    let mut rnd = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as f64 / 16777216.0
    };
    for clip in clips(&data) {
        let n = clip.num_bones();
        let parents = &clip.skeleton.parents;
        let bind = Soa::of(&clip, 0).l2o(parents);
        let bind_d: Vec<DMat4> = (0..n).map(|b| m_of(&bind.d(b))).collect();
        let inv: Vec<Mat4> = bind_d.iter().map(|m| m.inverse().as_mat4()).collect();
        let s = *samples(&clip).last().unwrap();
        let obj = Soa::of(&clip, s).l2o(parents);
        let mut pal = vec![Mat4::ZERO; n];
        SkinningPaletteJob {
            object: obj.pose(),
            inverse_bind: &inv,
            joints: None,
            out: PaletteOut::Mat4(&mut pal),
        }
        .run()
        .unwrap();
        let mag = scale_of((0..n).map(|b| obj.d(b).translation))
            .max(scale_of((0..n).map(|b| bind.d(b).translation)));
        for b in 0..n {
            let want = m_of(&obj.d(b)) * inv[b].as_dmat4();
            let got = pal[b].as_dmat4();
            let e = (0..4)
                .map(|c| (got.col(c) - want.col(c)).abs().max_element())
                .fold(0.0, f64::max);
            assert!(
                e < 4e-6 * mag,
                "{} palette {b}: off by {e} (scale {mag})",
                clip.name
            );
        }
        // Vertices around the bind pose's joints.
        let v = 300;
        for k in 1..=4usize {
            let mut joints = Vec::new();
            let mut weights = Vec::new();
            let mut pos = Vec::new();
            let mut nrm = Vec::new();
            for _ in 0..v {
                let mut ws: Vec<f64> = (0..k).map(|_| 0.05 + rnd()).collect();
                let sum: f64 = ws.iter().sum();
                ws.iter_mut().for_each(|w| *w /= sum);
                let js: Vec<u16> = (0..k)
                    .map(|_| (rnd() * n as f64) as u16 % n as u16)
                    .collect();
                let at = bind.d(js[0] as usize).translation;
                pos.push(
                    [
                        at.x + rnd() * 10.0 - 5.0,
                        at.y + rnd() * 10.0 - 5.0,
                        at.z + rnd() * 10.0 - 5.0,
                    ]
                    .map(|x| x as f32),
                );
                let d = DVec3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5).normalize_or(DVec3::Y);
                nrm.push([d.x as f32, d.y as f32, d.z as f32]);
                joints.extend(js);
                weights.extend(ws.iter().map(|w| *w as f32));
            }
            for path in [
                SimdPath::Scalar,
                SimdPath::Sse2,
                SimdPath::Avx2Fma,
                SimdPath::Neon,
            ] {
                if !path.available() {
                    continue;
                }
                let (mut op, mut on) = (vec![[0.0f32; 3]; v], vec![[0.0f32; 3]; v]);
                SkinJob {
                    palette: &pal,
                    influences: k,
                    joints: &joints,
                    weights: &weights,
                    positions: &pos,
                    normals: &nrm,
                    out_positions: &mut op,
                    out_normals: &mut on,
                }
                .run_with(path)
                .unwrap();
                for i in 0..v {
                    let (mut p, mut q) = (DVec3::ZERO, DVec3::ZERO);
                    for j in 0..k {
                        let m = pal[joints[i * k + j] as usize].as_dmat4();
                        let w = weights[i * k + j] as f64;
                        p += m.transform_point3(DVec3::from_array(pos[i].map(f64::from))) * w;
                        q += m.transform_vector3(DVec3::from_array(nrm[i].map(f64::from))) * w;
                    }
                    let e = (DVec3::from_array(op[i].map(f64::from)) - p)
                        .abs()
                        .max_element();
                    // Never tighter than float32 holds the result (4 ulps of it): 09_02's
                    // skinned positions reach ~6,000 (its palette), where an ulp is 4.9e-4
                    // and 4e-6 × its translations' scale (9.3e-4) is two of them.
                    let p_ulps = 4.0 * f32::EPSILON as f64 * p.abs().max_element();
                    assert!(
                        e < (4e-6 * mag).max(p_ulps),
                        "{} {path:?} k={k} vertex {i}: position off by {e}",
                        clip.name
                    );
                    let e = (DVec3::from_array(on[i].map(f64::from)) - q)
                        .abs()
                        .max_element();
                    assert!(
                        e < 2e-6 * q.abs().max_element().max(1.0),
                        "{} {path:?} k={k} vertex {i}: normal off by {e}",
                        clip.name
                    );
                }
            }
        }
    }
}
