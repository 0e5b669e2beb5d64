//! The calls that sample into a `cf_pose` and the jobs, called through the C API as a C caller
//! would: results equal the runtime's Rust API bit for bit (skip-defaults, bind pose, additive,
//! blend with per-bone weights and an additive layer, local → object whole and partial, the
//! palette in both layouts, points and skinning on every SIMD path this CPU has), and every
//! rejection (NULL, misaligned, overlapping, too many layers, each `JobError`) gets its status
//! and a message, and writes nothing.

mod common;

use common::pose::{CPose as P, MARK, create};

use clipforge_runtime::format::KIND_DEFAULT;
use clipforge_runtime::jobs::{
    BlendJob, BlendLayer, LocalToObjectJob, PaletteOut, SimdPath, SkinJob, SkinningPaletteJob,
    TransformPointsJob,
};
use clipforge_runtime::{ClipReader, Defaults, Looping, NO_PARENT, Pose};
use clipforge_runtime_capi::cf_status::*;
use clipforge_runtime_capi::*;
use glam::{Mat4, Quat, Vec3, Vec3A, Vec4};
use std::ptr::{null, null_mut};

fn last_error() -> String {
    let mut buf = [0u8; 512];
    let n = unsafe { cf_last_error(buf.as_mut_ptr().cast(), buf.len()) };
    String::from_utf8_lossy(&buf[..n.min(511)]).into_owned()
}

#[test]
fn sampling_into_a_pose_skip_defaults_bind_pose_and_additive_equal_the_rust_reader() {
    let bytes = common::cfa_defaults(40);
    let reader = ClipReader::new(&bytes).unwrap();
    let clip = create(&bytes);
    let n = reader.num_bones();
    let defaults: usize = (0..n)
        .map(|b| {
            reader
                .subtrack_kinds(b)
                .iter()
                .filter(|&&k| k == KIND_DEFAULT)
                .count()
        })
        .sum();
    assert!(
        defaults > 0,
        "the clip must have default sub-tracks to skip"
    );

    let mut bind = Pose::new(n);
    reader.bind_pose_into(&mut bind);
    let mut c_bind = P::marked(n);
    assert_eq!(unsafe { cf_clip_bind_pose(clip, c_bind.c()) }, CF_OK);
    assert_eq!(c_bind.bits(), P::from(&bind).bits(), "bind pose");

    let mut pose = Pose::new(n);
    for &t in &[0.0, 0.013, 0.5, reader.duration(), 7.31, -2.0] {
        for (mode, looping) in [
            (CF_LOOPING_CLAMP, Looping::Clamp),
            (CF_LOOPING_WRAP, Looping::Wrap),
        ] {
            reader.sample_pose(t, looping, &mut pose);
            let want = P::from(&pose).bits();
            let mut c = P::marked(n);
            let st = unsafe { cf_clip_sample_into(clip, t, mode, CF_DEFAULTS_WRITE, c.c()) };
            assert_eq!(st, CF_OK);
            assert_eq!(c.bits(), want, "write at {t}");

            // Skip onto the bind pose: the same complete pose, as the Rust reader gives it.
            let mut skip = c_bind.clone();
            let st = unsafe { cf_clip_sample_into(clip, t, mode, CF_DEFAULTS_SKIP, skip.c()) };
            assert_eq!(st, CF_OK);
            let mut rust_skip = bind.clone();
            reader.sample_pose_with(t, looping, Defaults::Skip, &mut rust_skip);
            assert_eq!(skip.bits(), P::from(&rust_skip).bits(), "skip at {t}");
            assert_eq!(
                skip.bits(),
                want,
                "skip onto the bind pose is the whole pose"
            );

            // Skip onto marks: the default sub-tracks stay marked, the others are written.
            let mut m = P::marked(n);
            let st = unsafe { cf_clip_sample_into(clip, t, mode, CF_DEFAULTS_SKIP, m.c()) };
            assert_eq!(st, CF_OK);
            for b in 0..n {
                let kinds = reader.subtrack_kinds(b);
                let got = [
                    m.r[b].to_array().to_vec(),
                    m.t[b].to_array().to_vec(),
                    m.s[b].to_array().to_vec(),
                ];
                let full = [
                    pose.rotations[b].to_array().to_vec(),
                    pose.translations[b].to_array().to_vec(),
                    pose.scales[b].to_array().to_vec(),
                ];
                for k in 0..3 {
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    if kinds[k] == KIND_DEFAULT {
                        assert!(got[k].iter().all(|x| x.to_bits() == MARK.to_bits()));
                    } else {
                        assert_eq!(bits(&got[k]), bits(&full[k]), "bone {b} sub-track {k}");
                    }
                }
            }
        }
    }

    // Additive: a layer of the generated clip applied onto a base pose of the same skeleton.
    let base_bytes = common::cfa(40);
    let add_bytes = common::cfa_additive(40);
    let (base_r, add_r) = (
        ClipReader::new(&base_bytes).unwrap(),
        ClipReader::new(&add_bytes).unwrap(),
    );
    let (base_c, add_c) = (create(&base_bytes), create(&add_bytes));
    let nb = base_r.num_bones();
    assert_eq!(add_r.num_bones(), nb);
    let (mut base, mut scratch) = (Pose::new(nb), Pose::new(nb));
    for &t in &[0.0, 0.3, 0.77, 5.0] {
        base_r.sample_pose(t, Looping::Clamp, &mut base);
        let mut c = P::from(&base);
        add_r
            .sample_additive_onto(t, Looping::Clamp, &mut scratch, &mut base)
            .unwrap();
        let st = unsafe { cf_clip_sample_additive_onto(add_c, t, CF_LOOPING_CLAMP, c.c()) };
        assert_eq!(st, CF_OK, "{}", last_error());
        assert_eq!(c.bits(), P::from(&base).bits(), "additive at {t}");
    }
    // A plain clip, a pose of another size, a bad defaults value: refused, nothing written.
    let mut m = P::marked(nb);
    let st = unsafe { cf_clip_sample_additive_onto(base_c, 0.1, CF_LOOPING_CLAMP, m.c()) };
    assert_eq!(st, CF_ERR_NOT_ADDITIVE);
    assert!(
        last_error().contains("not an additive clip"),
        "{}",
        last_error()
    );
    let mut short = P::marked(nb - 1);
    let st = unsafe { cf_clip_sample_additive_onto(add_c, 0.1, CF_LOOPING_CLAMP, short.c()) };
    assert_eq!(st, CF_ERR_LENGTH_MISMATCH);
    let st = unsafe { cf_clip_sample_into(base_c, 0.1, CF_LOOPING_CLAMP, 2, m.c()) };
    assert_eq!(st, CF_ERR_INVALID_ARGUMENT);
    let mut mis = m.c();
    mis.translations = unsafe { mis.translations.add(1) };
    let st = unsafe { cf_clip_sample_into(base_c, 0.1, CF_LOOPING_CLAMP, 0, mis) };
    assert_eq!(st, CF_ERR_MISALIGNED_POINTER);
    let mut nul = m.c();
    nul.scales = null_mut();
    assert_eq!(
        unsafe { cf_clip_bind_pose(base_c, nul) },
        CF_ERR_NULL_POINTER
    );
    assert!(m.untouched() && short.untouched());
    for c in [clip, base_c, add_c] {
        assert_eq!(cf_clip_free(c), CF_OK);
    }
}

/// Everything the job test needs: two poses of one skeleton, an additive pose, parents.
struct Scene {
    parents: Vec<u32>,
    a: P,
    b: P,
    add: P,
    rest: P,
}

fn scene(t: f32) -> Scene {
    let (a_bytes, b_bytes, add_bytes) =
        (common::cfa(45), common::cfa(31), common::cfa_additive(40));
    let pose = |bytes: &[u8], t: f32| {
        let r = ClipReader::new(bytes).unwrap();
        let mut p = Pose::new(r.num_bones());
        r.sample_pose(t, Looping::Wrap, &mut p);
        P::from(&p)
    };
    let r = ClipReader::new(&a_bytes).unwrap();
    let mut rest = Pose::new(r.num_bones());
    r.bind_pose_into(&mut rest);
    Scene {
        parents: (0..r.num_bones())
            .map(|b| r.skeleton().parent(b).map_or(NO_PARENT, |p| p as u32))
            .collect(),
        a: pose(&a_bytes, t),
        b: pose(&b_bytes, t * 1.7),
        add: pose(&add_bytes, t),
        rest: P::from(&rest),
    }
}

fn layer(p: &mut P, weight: f32, w: Option<&[f32]>) -> cf_blend_layer {
    cf_blend_layer {
        pose: p.c(),
        weight,
        bone_weights: w.map_or(null(), |w| w.as_ptr()),
        num_bone_weights: w.map_or(0, |w| w.len()),
    }
}

/// Positions, normals, joints, weights.
type Mesh = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u16>, Vec<f32>);

/// A small mesh: `per` vertices around each bone's object position, skinned to the bone and
/// its parent (weights from `k` influences summing to 1).
fn mesh(n: usize, k: usize, parents: &[u32]) -> Mesh {
    let per = 5;
    let (mut pos, mut nor, mut joints, mut weights) = (vec![], vec![], vec![], vec![]);
    for (b, &parent) in parents.iter().enumerate().take(n) {
        for i in 0..per {
            let a = i as f32 * 1.3 + b as f32;
            pos.push([a.sin() * 3.0, a.cos() * 2.0, i as f32 * 0.5 - 1.0]);
            nor.push([a.cos(), 0.0, -a.sin()]);
            let chain = [b, parent.min(b as u32) as usize, 0, (b + 1) % n];
            let mut left = 1.0f32;
            for (j, &bone) in chain.iter().enumerate().take(k) {
                let w = if j + 1 == k { left } else { left * 0.6 };
                left -= w;
                joints.push(bone as u16);
                weights.push(w);
            }
        }
    }
    (pos, nor, joints, weights)
}

fn paths() -> Vec<(cf_simd, SimdPath)> {
    [
        (CF_SIMD_AUTO, SimdPath::Auto),
        (CF_SIMD_SCALAR, SimdPath::Scalar),
        (CF_SIMD_SSE2, SimdPath::Sse2),
        (CF_SIMD_AVX2_FMA, SimdPath::Avx2Fma),
        (CF_SIMD_NEON, SimdPath::Neon),
    ]
    .into_iter()
    .filter(|(_, p)| p.available())
    .collect()
}

fn bits<const K: usize>(v: &[[f32; K]]) -> Vec<u32> {
    v.iter().flatten().map(|x| x.to_bits()).collect()
}

/// Object-space pose of `local` through the Rust job (the reference inputs of the palette
/// and vertex tests).
fn object_of(parents: &[u32], local: &P) -> P {
    let mut o = P::marked(parents.len());
    LocalToObjectJob::new(parents, local.get(), &mut o.r, &mut o.t, &mut o.s)
        .run()
        .unwrap();
    o
}

/// A pose whose arrays overlap each other (translations and scales in one array) cannot be
/// borrowed as slices: `cf_clip_sample_into` goes through the scratch pose and copies
/// rotations, translations, then scales, so the shared array ends with the scales.
#[test]
fn a_pose_whose_arrays_overlap_is_sampled_through_the_scratch_pose() {
    let bytes = common::cfa_defaults(40);
    let reader = ClipReader::new(&bytes).unwrap();
    let clip = create(&bytes);
    let n = reader.num_bones();
    let t = 0.37;
    let mut pose = Pose::new(n);
    reader.sample_pose(t, Looping::Clamp, &mut pose);
    let mut shared = vec![Vec3A::splat(MARK); n];
    let mut rot = vec![Quat::from_xyzw(MARK, MARK, MARK, MARK); n];
    let overlapping = cf_pose {
        rotations: rot.as_mut_ptr().cast(),
        translations: shared.as_mut_ptr().cast(),
        scales: shared.as_mut_ptr().cast(),
        num_bones: n,
    };
    let st =
        unsafe { cf_clip_sample_into(clip, t, CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, overlapping) };
    assert_eq!(st, CF_OK, "{}", last_error());
    assert_eq!(rot, pose.rotations, "rotations through the scratch pose");
    assert_eq!(
        shared, pose.scales,
        "the shared array holds the scales, written last"
    );
    assert_eq!(cf_clip_free(clip), CF_OK);
}

#[test]
fn blend_and_local_to_object_through_the_c_api_equal_the_rust_jobs_bit_for_bit() {
    let mut s = scene(0.41);
    let n = s.parents.len();
    // Blend: two weighted layers (one per-bone weighted), an additive layer on top.
    let bw: Vec<f32> = (0..n).map(|b| (b % 3) as f32 * 0.5).collect();
    let layers = [layer(&mut s.a, 0.7, None), layer(&mut s.b, 0.4, Some(&bw))];
    let additive = [layer(&mut s.add, 0.5, None)];
    let mut out = P::marked(n);
    let job = cf_blend_job {
        layers: layers.as_ptr(),
        num_layers: 2,
        additive: additive.as_ptr(),
        num_additive: 1,
        rest: s.rest.c(),
        threshold: 0.1,
        out: out.c(),
    };
    assert_eq!(unsafe { cf_blend_validate(&job) }, CF_OK);
    assert!(out.untouched(), "validate writes nothing");
    assert_eq!(unsafe { cf_blend_run(&job) }, CF_OK, "{}", last_error());
    let mut want = P::marked(n);
    {
        let (wr, wt, ws) = (&mut want.r, &mut want.t, &mut want.s);
        let l = [
            BlendLayer {
                pose: s.a.get(),
                weight: 0.7,
                bone_weights: None,
            },
            BlendLayer {
                pose: s.b.get(),
                weight: 0.4,
                bone_weights: Some(&bw),
            },
        ];
        let ad = [BlendLayer {
            pose: s.add.get(),
            weight: 0.5,
            bone_weights: None,
        }];
        BlendJob {
            layers: &l,
            additive: &ad,
            rest: s.rest.get(),
            threshold: 0.1,
            out_rotations: wr,
            out_translations: wt,
            out_scales: ws,
        }
        .run()
        .unwrap();
    }
    assert_eq!(out.bits(), want.bits(), "blend");

    // Local → object, whole and then a partial range over it.
    let blended = out;
    let mut obj = P::marked(n);
    let mut l2o = cf_local_to_object_job {
        parents: s.parents.as_ptr(),
        num_bones: n,
        local: blended.clone().c(),
        start: 0,
        end: n,
        out: obj.c(),
        simd: CF_SIMD_AUTO,
    };
    let mut local = blended.clone();
    l2o.local = local.c();
    assert_eq!(
        unsafe { cf_local_to_object_run(&l2o) },
        CF_OK,
        "{}",
        last_error()
    );
    let mut want_obj = P::marked(n);
    LocalToObjectJob::new(
        &s.parents,
        blended.get(),
        &mut want_obj.r,
        &mut want_obj.t,
        &mut want_obj.s,
    )
    .run()
    .unwrap();
    assert_eq!(obj.bits(), want_obj.bits(), "local to object");
    let (start, end) = (n / 3, n - 1);
    let mut part = s.a.clone();
    l2o.local = part.c();
    l2o.start = start;
    l2o.end = end;
    assert_eq!(unsafe { cf_local_to_object_run(&l2o) }, CF_OK);
    let mut j = LocalToObjectJob::new(
        &s.parents,
        s.a.get(),
        &mut want_obj.r,
        &mut want_obj.t,
        &mut want_obj.s,
    );
    (j.start, j.end) = (start, end);
    j.run().unwrap();
    assert_eq!(
        obj.bits(),
        want_obj.bits(),
        "local to object, bones {start}..{end}"
    );
}

#[test]
fn skinning_palettes_through_the_c_api_equal_the_rust_job_bit_for_bit() {
    let s = scene(0.41);
    let n = s.parents.len();
    let mut obj = object_of(&s.parents, &s.a);
    // Palette: inverse bind matrices of the rest pose, a joint list, both layouts.
    let mut rest_obj = P::marked(n);
    LocalToObjectJob::new(
        &s.parents,
        s.rest.get(),
        &mut rest_obj.r,
        &mut rest_obj.t,
        &mut rest_obj.s,
    )
    .run()
    .unwrap();
    let joints: Vec<u16> = (0..n as u16).rev().step_by(2).collect();
    let ib: Vec<Mat4> = joints
        .iter()
        .map(|&b| {
            let b = b as usize;
            Mat4::from_scale_rotation_translation(
                Vec3::from(rest_obj.s[b]),
                rest_obj.r[b],
                Vec3::from(rest_obj.t[b]),
            )
            .inverse()
        })
        .collect();
    let nj = joints.len();
    for layout in [CF_PALETTE_4X4, CF_PALETTE_3X4] {
        let per = if layout == CF_PALETTE_4X4 { 16 } else { 12 };
        let mut c_out = vec![Vec4::splat(MARK); nj * per / 4];
        let job = cf_skinning_palette_job {
            object: obj.c(),
            inverse_bind: ib.as_ptr().cast(),
            num_joints: nj,
            joints: joints.as_ptr(),
            joints_count: nj,
            layout,
            out: c_out.as_mut_ptr().cast(),
            out_count: nj,
        };
        assert_eq!(
            unsafe { cf_skinning_palette_run(&job) },
            CF_OK,
            "{}",
            last_error()
        );
        let mut m4 = vec![Mat4::ZERO; nj];
        let mut r3 = vec![[Vec4::ZERO; 3]; nj];
        let o = if layout == CF_PALETTE_4X4 {
            PaletteOut::Mat4(&mut m4)
        } else {
            PaletteOut::Rows3x4(&mut r3)
        };
        SkinningPaletteJob {
            object: obj.get(),
            inverse_bind: &ib,
            joints: Some(&joints),
            out: o,
        }
        .run()
        .unwrap();
        let want: Vec<u32> = if layout == CF_PALETTE_4X4 {
            m4.iter()
                .flat_map(|m| m.to_cols_array())
                .map(f32::to_bits)
                .collect()
        } else {
            r3.iter()
                .flatten()
                .flat_map(|v| v.to_array())
                .map(f32::to_bits)
                .collect()
        };
        let got: Vec<u32> = c_out
            .iter()
            .flat_map(|v| v.to_array())
            .map(f32::to_bits)
            .collect();
        assert_eq!(got, want, "palette layout {layout}");
    }
}

/// `simd` picks local → object's path too (API version 4; before, C ran only the fastest): each
/// path's pose equals the Rust job's on that path bit for bit, the paths agree within 1e-6
/// of the pose's size, and a path the CPU lacks or a value that is none is refused.
#[test]
fn local_to_object_through_the_c_api_runs_on_the_path_asked_for() {
    let s = scene(0.63);
    let n = s.parents.len();
    let mut local = s.a.clone();
    let mut job = |simd, out| cf_local_to_object_job {
        parents: s.parents.as_ptr(),
        num_bones: n,
        local: local.c(),
        start: 0,
        end: n,
        out,
        simd,
    };
    let mut poses = Vec::new();
    for (simd, path) in paths() {
        let mut obj = P::marked(n);
        let job = job(simd, obj.c());
        assert_eq!(
            unsafe { cf_local_to_object_run(&job) },
            CF_OK,
            "{path:?}: {}",
            last_error()
        );
        let mut want = P::marked(n);
        LocalToObjectJob::new(&s.parents, s.a.get(), &mut want.r, &mut want.t, &mut want.s)
            .run_with(path)
            .unwrap();
        assert_eq!(obj.bits(), want.bits(), "{path:?}");
        poses.push((path, obj));
    }
    let (_, scalar) = poses
        .iter()
        .find(|(p, _)| *p == SimdPath::Scalar)
        .expect("the scalar path");
    let size = scalar
        .t
        .iter()
        .flat_map(|v| v.to_array())
        .fold(1.0f32, |m, x| m.max(x.abs()));
    for (path, p) in &poses {
        for (a, b) in scalar.r.iter().zip(&p.r) {
            assert!((*a - *b).length() <= 1e-6, "{path:?}: rotation {b} vs {a}");
        }
        for (a, b) in scalar
            .t
            .iter()
            .flat_map(|v| v.to_array())
            .zip(p.t.iter().flat_map(|v| v.to_array()))
        {
            assert!(
                (a - b).abs() <= 1e-6 * size,
                "{path:?}: translation {b} vs {a}"
            );
        }
    }
    let mut obj = P::marked(n);
    let missing = if SimdPath::Neon.available() {
        CF_SIMD_SSE2
    } else {
        CF_SIMD_NEON
    };
    refused(
        unsafe { cf_local_to_object_validate(&job(missing, obj.c())) },
        CF_ERR_UNAVAILABLE,
        "not available",
    );
    refused(
        unsafe { cf_local_to_object_run(&job(7, obj.c())) },
        CF_ERR_INVALID_ARGUMENT,
        "simd 7",
    );
    assert!(obj.untouched());
}

#[test]
fn points_and_skinning_through_the_c_api_equal_the_rust_jobs_on_every_path() {
    let s = scene(0.41);
    let n = s.parents.len();
    let mut obj = object_of(&s.parents, &s.a);
    let rest_obj = object_of(&s.parents, &s.rest);
    // The 4×4 palette over every bone (no joint list), then points and skinning on each path.
    let ib_all: Vec<Mat4> = (0..n)
        .map(|b| {
            Mat4::from_scale_rotation_translation(
                Vec3::from(rest_obj.s[b]),
                rest_obj.r[b],
                Vec3::from(rest_obj.t[b]),
            )
            .inverse()
        })
        .collect();
    let mut palette = vec![Mat4::ZERO; n];
    let job = cf_skinning_palette_job {
        object: obj.c(),
        inverse_bind: ib_all.as_ptr().cast(),
        num_joints: n,
        joints: null(),
        joints_count: 0,
        layout: CF_PALETTE_4X4,
        out: palette.as_mut_ptr().cast(),
        out_count: n,
    };
    assert_eq!(unsafe { cf_skinning_palette_run(&job) }, CF_OK);
    for (simd, path) in paths() {
        let (pos, nor, _, _) = mesh(n, 1, &s.parents);
        let (mut op, mut on) = (vec![[MARK; 4]; pos.len()], vec![[MARK; 3]; nor.len()]);
        let job = cf_transform_points_job {
            matrix: palette[n / 2].as_ref().as_ptr(),
            points: pos.as_ptr().cast(),
            num_points: pos.len(),
            out_points: op.as_mut_ptr().cast(),
            out_points_count: op.len(),
            normals: nor.as_ptr().cast(),
            num_normals: nor.len(),
            out_normals: on.as_mut_ptr().cast(),
            out_normals_count: on.len(),
            simd,
        };
        assert_eq!(unsafe { cf_transform_points_run(&job) }, CF_OK);
        let (mut wp, mut wn) = (vec![[0.0; 4]; pos.len()], vec![[0.0; 3]; nor.len()]);
        TransformPointsJob {
            matrix: &palette[n / 2],
            points: &pos,
            out_points: &mut wp,
            normals: &nor,
            out_normals: &mut wn,
        }
        .run_with(path)
        .unwrap();
        assert_eq!(
            (bits(&op), bits(&on)),
            (bits(&wp), bits(&wn)),
            "points on {path:?}"
        );

        for k in 1..=4 {
            let (pos, nor, joints, weights) = mesh(n, k, &s.parents);
            let (mut op, mut on) = (vec![[MARK; 3]; pos.len()], vec![[MARK; 3]; nor.len()]);
            let job = cf_skin_job {
                palette: palette.as_ptr().cast(),
                palette_count: n,
                influences: k as u32,
                joints: joints.as_ptr(),
                joints_count: joints.len(),
                weights: weights.as_ptr(),
                weights_count: weights.len(),
                positions: pos.as_ptr().cast(),
                num_vertices: pos.len(),
                normals: nor.as_ptr().cast(),
                normals_count: nor.len(),
                out_positions: op.as_mut_ptr().cast(),
                out_positions_count: op.len(),
                out_normals: on.as_mut_ptr().cast(),
                out_normals_count: on.len(),
                simd,
            };
            assert_eq!(unsafe { cf_skin_validate(&job) }, CF_OK);
            assert_eq!(unsafe { cf_skin_run(&job) }, CF_OK, "{}", last_error());
            let (mut wp, mut wn) = (vec![[0.0; 3]; pos.len()], vec![[0.0; 3]; nor.len()]);
            SkinJob {
                palette: &palette,
                influences: k,
                joints: &joints,
                weights: &weights,
                positions: &pos,
                normals: &nor,
                out_positions: &mut wp,
                out_normals: &mut wn,
            }
            .run_with(path)
            .unwrap();
            assert_eq!(
                (bits(&op), bits(&on)),
                (bits(&wp), bits(&wn)),
                "skin, {k} influences, on {path:?}"
            );
        }
    }
}

/// Runs `f` (a validate or run call) and checks its status and that `cf_last_error` names
/// `needle`.
fn refused(st: cf_status, want: cf_status, needle: &str) {
    assert_eq!(st, want, "{}", last_error());
    let e = last_error();
    assert!(e.contains(needle), "{e:?} does not mention {needle:?}");
}

#[test]
fn blend_rejections_get_their_status_and_write_nothing() {
    let mut s = scene(0.2);
    let n = s.parents.len();
    let mut out = P::marked(n);
    let mut short = P::marked(n - 1);
    let nan = f32::NAN;
    let blend = |layers: &[cf_blend_layer], rest: cf_pose, threshold: f32, out: cf_pose| {
        let job = cf_blend_job {
            layers: layers.as_ptr(),
            num_layers: layers.len(),
            additive: null(),
            num_additive: 0,
            rest,
            threshold,
            out,
        };
        let v = unsafe { cf_blend_validate(&job) };
        let r = unsafe { cf_blend_run(&job) };
        assert_eq!(v, r, "validate and run agree");
        r
    };
    let (rest, o) = (s.rest.c(), out.c());
    let a = layer(&mut s.a, 1.0, None);
    refused(
        blend(&[a, layer(&mut short, 1.0, None)], rest, 0.1, o),
        CF_ERR_LENGTH_MISMATCH,
        "blend layer",
    );
    refused(
        blend(&[layer(&mut s.b, nan, None)], rest, 0.1, o),
        CF_ERR_NOT_FINITE,
        "blend layer",
    );
    refused(blend(&[a], rest, 0.0, o), CF_ERR_NOT_FINITE, "threshold");
    let bad_w = vec![1.0; n - 2];
    refused(
        blend(&[layer(&mut s.b, 1.0, Some(&bad_w))], rest, 0.1, o),
        CF_ERR_LENGTH_MISMATCH,
        "bone weights",
    );
    let mut mis = o;
    mis.scales = unsafe { mis.scales.add(2) };
    refused(
        blend(&[a], rest, 0.1, mis),
        CF_ERR_MISALIGNED_POINTER,
        "out.scales",
    );
    let mut nul = a;
    nul.pose.translations = null_mut();
    refused(
        blend(&[nul], rest, 0.1, o),
        CF_ERR_NULL_POINTER,
        "layers[0].translations",
    );
    let mut over = o;
    over.rotations = s.a.r.as_mut_ptr().cast();
    refused(
        blend(&[a], rest, 0.1, over),
        CF_ERR_OVERLAP,
        "overlaps layers[0]",
    );
    refused(
        blend(&[a; 33], rest, 0.1, o),
        CF_ERR_INVALID_ARGUMENT,
        "CF_MAX_BLEND_LAYERS",
    );
    assert_eq!(unsafe { cf_blend_run(null()) }, CF_ERR_NULL_POINTER);
    assert!(out.untouched());
}

#[test]
fn local_to_object_rejections_get_their_status_and_write_nothing() {
    let mut s = scene(0.2);
    let n = s.parents.len();
    let mut out = P::marked(n);
    let o = out.c();
    // Local → object: parent order, range, NULL parents, an output overlapping the input.
    let mut parents = s.parents.clone();
    let l2o =
        |parents: &[u32], count: usize, local: cf_pose, start: usize, end: usize, out: cf_pose| {
            let job = cf_local_to_object_job {
                parents: if count == usize::MAX {
                    null()
                } else {
                    parents.as_ptr()
                },
                num_bones: if count == usize::MAX { n } else { count },
                local,
                start,
                end,
                out,
                simd: CF_SIMD_AUTO,
            };
            let v = unsafe { cf_local_to_object_validate(&job) };
            assert_eq!(v, unsafe { cf_local_to_object_run(&job) });
            v
        };
    let local = s.a.c();
    parents[n - 1] = (n - 1) as u32;
    refused(
        l2o(&parents, n, local, 0, n, o),
        CF_ERR_PARENT_ORDER,
        &format!("bone {}", n - 1),
    );
    refused(
        l2o(&s.parents, n, local, 2, n + 1, o),
        CF_ERR_INDEX_OUT_OF_RANGE,
        "range",
    );
    refused(
        l2o(&s.parents, n, local, 3, 2, o),
        CF_ERR_INDEX_OUT_OF_RANGE,
        "range",
    );
    refused(
        l2o(&s.parents, usize::MAX, local, 0, n, o),
        CF_ERR_NULL_POINTER,
        "parents",
    );
    refused(
        l2o(&s.parents, n - 1, local, 0, n - 1, o),
        CF_ERR_LENGTH_MISMATCH,
        "local",
    );
    refused(
        l2o(&s.parents, n, local, 0, n, local),
        CF_ERR_OVERLAP,
        "out",
    );
    assert!(out.untouched());
}

#[test]
fn palette_rejections_get_their_status_and_write_nothing() {
    let s = scene(0.2);
    let n = s.parents.len();
    // Palette: a joint out of range, a bad layout, a short output, more joints than bones.
    let ib = vec![Mat4::IDENTITY; n + 1];
    let mut pal = vec![Mat4::from_cols_array(&[MARK; 16]); n + 1];
    let palette =
        |joints: Option<&[u16]>, nj: usize, layout: u32, out_count: usize, pal: &mut [Mat4]| {
            let job = cf_skinning_palette_job {
                object: s.rest.clone().c(),
                inverse_bind: ib.as_ptr().cast(),
                num_joints: nj,
                joints: joints.map_or(null(), |j| j.as_ptr()),
                joints_count: joints.map_or(0, |j| j.len()),
                layout,
                out: pal.as_mut_ptr().cast(),
                out_count,
            };
            let v = unsafe { cf_skinning_palette_validate(&job) };
            assert_eq!(v, unsafe { cf_skinning_palette_run(&job) });
            v
        };
    let js = [0u16, n as u16];
    refused(
        palette(Some(&js), 2, CF_PALETTE_4X4, 2, &mut pal),
        CF_ERR_INDEX_OUT_OF_RANGE,
        "palette joints[1]",
    );
    refused(
        palette(None, 2, 7, 2, &mut pal),
        CF_ERR_INVALID_ARGUMENT,
        "layout 7",
    );
    refused(
        palette(None, 3, CF_PALETTE_4X4, 2, &mut pal),
        CF_ERR_LENGTH_MISMATCH,
        "palette output",
    );
    refused(
        palette(None, n + 1, CF_PALETTE_4X4, n + 1, &mut pal),
        CF_ERR_LENGTH_MISMATCH,
        "inverse_bind",
    );
    refused(
        palette(Some(&js[..1]), 2, CF_PALETTE_4X4, 2, &mut pal),
        CF_ERR_LENGTH_MISMATCH,
        "palette joints",
    );
    assert!(pal.iter().all(|m| {
        m.to_cols_array()
            .iter()
            .all(|x| x.to_bits() == MARK.to_bits())
    }));
}

#[test]
fn vertex_job_rejections_get_their_status_and_write_nothing() {
    let s = scene(0.2);
    let n = s.parents.len();
    // Vertex jobs: lengths, influences, joints, SIMD values, overlap, a NULL matrix.
    let (pos, nor, joints, weights) = mesh(n, 2, &s.parents);
    let palette = vec![Mat4::IDENTITY; n];
    let mut op = vec![[MARK; 3]; pos.len()];
    let base = cf_skin_job {
        palette: palette.as_ptr().cast(),
        palette_count: n,
        influences: 2,
        joints: joints.as_ptr(),
        joints_count: joints.len(),
        weights: weights.as_ptr(),
        weights_count: weights.len(),
        positions: pos.as_ptr().cast(),
        num_vertices: pos.len(),
        normals: nor.as_ptr().cast(),
        normals_count: nor.len(),
        out_positions: op.as_mut_ptr().cast(),
        out_positions_count: op.len(),
        out_normals: null_mut(),
        out_normals_count: 0,
        simd: CF_SIMD_AUTO,
    };
    let skin = |j: cf_skin_job| {
        let v = unsafe { cf_skin_validate(&j) };
        assert_eq!(v, unsafe { cf_skin_run(&j) });
        v
    };
    refused(skin(base), CF_ERR_LENGTH_MISMATCH, "skin out_normals");
    let ok = cf_skin_job {
        normals: null(),
        normals_count: 0,
        ..base
    };
    for k in [0, 5, u32::MAX] {
        refused(
            skin(cf_skin_job {
                influences: k,
                ..ok
            }),
            CF_ERR_INVALID_ARGUMENT,
            "influences",
        );
    }
    refused(
        skin(cf_skin_job {
            palette_count: 1,
            ..ok
        }),
        CF_ERR_INDEX_OUT_OF_RANGE,
        "skin joints",
    );
    refused(
        skin(cf_skin_job {
            weights_count: 3,
            ..ok
        }),
        CF_ERR_LENGTH_MISMATCH,
        "skin weights",
    );
    refused(
        skin(cf_skin_job { simd: 5, ..ok }),
        CF_ERR_INVALID_ARGUMENT,
        "simd 5",
    );
    let missing = if SimdPath::Neon.available() {
        CF_SIMD_SSE2
    } else {
        CF_SIMD_NEON
    };
    refused(
        skin(cf_skin_job {
            simd: missing,
            ..ok
        }),
        CF_ERR_UNAVAILABLE,
        "not available",
    );
    refused(
        skin(cf_skin_job {
            out_positions: pos.as_ptr().cast_mut().cast(),
            ..ok
        }),
        CF_ERR_OVERLAP,
        "out_positions overlaps positions",
    );
    refused(
        skin(cf_skin_job {
            palette: unsafe { ok.palette.add(1) },
            ..ok
        }),
        CF_ERR_MISALIGNED_POINTER,
        "palette",
    );
    refused(
        skin(cf_skin_job {
            joints: null(),
            ..ok
        }),
        CF_ERR_NULL_POINTER,
        "joints",
    );
    assert!(op.iter().flatten().all(|x| x.to_bits() == MARK.to_bits()));
    assert_eq!(skin(ok), CF_OK);

    let mut opts = vec![[MARK; 4]; pos.len()];
    let tp = cf_transform_points_job {
        matrix: palette[0].as_ref().as_ptr(),
        points: pos.as_ptr().cast(),
        num_points: pos.len(),
        out_points: opts.as_mut_ptr().cast(),
        out_points_count: pos.len() - 1,
        normals: null(),
        num_normals: 0,
        out_normals: null_mut(),
        out_normals_count: 0,
        simd: CF_SIMD_AUTO,
    };
    let tpf = |j: cf_transform_points_job| {
        let v = unsafe { cf_transform_points_validate(&j) };
        assert_eq!(v, unsafe { cf_transform_points_run(&j) });
        v
    };
    refused(tpf(tp), CF_ERR_LENGTH_MISMATCH, "transform out_points");
    refused(
        tpf(cf_transform_points_job {
            matrix: null(),
            ..tp
        }),
        CF_ERR_NULL_POINTER,
        "matrix",
    );
    refused(
        tpf(cf_transform_points_job { simd: 99, ..tp }),
        CF_ERR_INVALID_ARGUMENT,
        "simd 99",
    );
    assert!(opts.iter().flatten().all(|x| x.to_bits() == MARK.to_bits()));
}

#[test]
fn sample_bones_is_one_seek_over_a_copy_of_the_list_which_the_output_may_overlap() {
    let bytes = common::cfa(45);
    let reader = ClipReader::new(&bytes).unwrap();
    let clip = create(&bytes);
    let n = reader.num_bones();
    let list: Vec<u32> = vec![(n - 1) as u32, 2, 0, 2];
    let mut want = Pose::new(n);
    reader
        .sample_bones(&list, 0.37, Looping::Wrap, Defaults::Write, &mut want)
        .unwrap();
    // The rotations are written over the list itself: 4 floats a bone, the list's 4 indices
    // at its start.
    let mut shared = vec![0u32; 4 * list.len()];
    shared[..list.len()].copy_from_slice(&list);
    let (mut tra, mut sca) = (vec![0f32; 3 * list.len()], vec![0f32; 3 * list.len()]);
    let st = unsafe {
        cf_clip_sample_bones(
            clip,
            0.37,
            CF_LOOPING_WRAP,
            shared.as_ptr(),
            list.len(),
            shared.as_mut_ptr().cast(),
            shared.len(),
            tra.as_mut_ptr(),
            tra.len(),
            sca.as_mut_ptr(),
            sca.len(),
        )
    };
    assert_eq!(st, CF_OK, "{}", last_error());
    for (i, &b) in list.iter().enumerate() {
        let b = b as usize;
        let q: Vec<u32> = want.rotations[b].to_array().map(f32::to_bits).to_vec();
        assert_eq!(
            &shared[4 * i..4 * i + 4],
            &q[..],
            "rotation of list entry {i}"
        );
        let t: Vec<u32> = want.translations[b].to_array().map(f32::to_bits).to_vec();
        let got: Vec<u32> = tra[3 * i..3 * i + 3].iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, t, "translation of list entry {i}");
    }
    assert_eq!(cf_clip_free(clip), CF_OK);
}
