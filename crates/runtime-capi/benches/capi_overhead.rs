//! What a call through the C API costs on top of the same call through the Rust API: each case
//! runs both ways on the same inputs, in alternating rounds (C, Rust, C, Rust, ...) so load on
//! the machine falls on both alike, and prints per-call medians and the median of the per-round
//! ratios (C / Rust). `docs/BENCHMARKS.md` ("C API overhead") has the command and figures.
//!
//! The C side is called as a C program calls it (through the exported `extern "C"` functions:
//! handle lookup, pointer checks, `catch_unwind`; a full pose decoded straight into the caller's
//! arrays, the other sampling calls copied out of the thread's scratch pose); the
//! Rust side is `clipforge_runtime` directly, on buffers it owns.
//!
//! Usage: `cargo bench -p clipforge-runtime-capi --bench capi_overhead [-- --quick]`; with
//! `CLIPFORGE_DATA` set, a real clip (ACL regression set) is used beside the generated one.

use clipforge_anim::generate::{GenerateOptions, generate};
use clipforge_anim::{CompressionSettings, compress};
use clipforge_runtime::jobs::{BlendJob, BlendLayer, LocalToObjectJob, PoseRef, SimdPath, SkinJob};
use clipforge_runtime::{ClipReader, Defaults, Looping, NO_PARENT, Pose};
use clipforge_runtime_capi::*;
use glam::{Mat4, Quat, Vec3A};
use std::hint::black_box;
use std::time::Instant;

/// Per-call nanoseconds of `calls` calls of `f(i)`.
fn time(calls: usize, mut f: impl FnMut(usize)) -> f64 {
    let t0 = Instant::now();
    for i in 0..calls {
        f(i);
    }
    t0.elapsed().as_nanos() as f64 / calls as f64
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Case<'a> {
    name: String,
    c: Box<dyn FnMut(usize) + 'a>,
    rust: Box<dyn FnMut(usize) + 'a>,
}

fn run(cases: &mut [Case], rounds: usize, calls: usize) {
    println!(
        "{:<44} {:>10} {:>10} {:>8} {:>10}",
        "case", "c_ns", "rust_ns", "ratio", "extra_ns"
    );
    for case in cases.iter_mut() {
        // Warm both paths (the thread's scratch pose grows on the first C call).
        time(calls / 10 + 1, &mut case.c);
        time(calls / 10 + 1, &mut case.rust);
        let (mut cs, mut rs, mut ratios) = (vec![], vec![], vec![]);
        for _ in 0..rounds {
            let c = time(calls, &mut case.c);
            let r = time(calls, &mut case.rust);
            cs.push(c);
            rs.push(r);
            ratios.push(c / r);
        }
        let (c, r) = (median(&mut cs), median(&mut rs));
        println!(
            "{:<44} {:>10.1} {:>10.1} {:>8.2} {:>10.1}",
            case.name,
            c,
            r,
            median(&mut ratios),
            c - r
        );
    }
}

/// A pose in caller memory (the `cf_pose` layout is glam's).
struct P {
    r: Vec<Quat>,
    t: Vec<Vec3A>,
    s: Vec<Vec3A>,
}

impl P {
    fn new(n: usize) -> P {
        P {
            r: vec![Quat::IDENTITY; n],
            t: vec![Vec3A::ZERO; n],
            s: vec![Vec3A::ONE; n],
        }
    }
    fn get(&self) -> PoseRef<'_> {
        PoseRef {
            rotations: &self.r,
            translations: &self.t,
            scales: &self.s,
        }
    }
    fn c(&mut self) -> cf_pose {
        cf_pose {
            rotations: self.r.as_mut_ptr().cast(),
            translations: self.t.as_mut_ptr().cast(),
            scales: self.s.as_mut_ptr().cast(),
            num_bones: self.r.len(),
        }
    }
}

fn clips() -> Vec<(String, Vec<u8>)> {
    let settings = CompressionSettings::default();
    let generated = generate(&GenerateOptions {
        num_samples: 120,
        with_scale: true,
        ..Default::default()
    });
    let mut v = vec![(
        "generated".to_string(),
        compress(&generated, &settings).unwrap().bytes,
    )];
    if let Some(data) = std::env::var_os("CLIPFORGE_DATA") {
        // The first regression clip in name order (the set's file names are stable).
        let found = std::fs::read_dir(std::path::Path::new(&data).join("acl-regression"))
            .ok()
            .and_then(|rd| {
                let mut p: Vec<_> = rd
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.to_string_lossy().ends_with(".acl.sjson"))
                    .collect();
                p.sort();
                p.into_iter().next()
            });
        if let Some(Ok(mut raw)) = found
            .as_ref()
            .map(|f| clipforge_anim::formats::load_clips(f))
        {
            let found = found.unwrap();
            let name = found.file_name().unwrap().to_string_lossy().into_owned();
            v.push((name, compress(&raw.remove(0), &settings).unwrap().bytes));
        }
    }
    v
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // Many short rounds: on a shared, loaded machine a short round is less often cut by a
    // context switch, and the median over many discards the ones that were.
    let (rounds, calls) = if quick { (5, 2_000) } else { (101, 2_000) };
    for (name, bytes) in clips() {
        let reader = ClipReader::new(&bytes).unwrap();
        let mut clip = cf_clip { id: 0 };
        assert_eq!(
            unsafe { cf_clip_create(bytes.as_ptr(), bytes.len(), &mut clip) },
            cf_status::CF_OK
        );
        println!(
            "\n{name}: {} bones, {} samples; {rounds} rounds of {calls} calls each way",
            reader.num_bones(),
            reader.num_samples()
        );
        sampling(&reader, clip, rounds, calls);
        jobs(&reader, clip, rounds, calls / 4);
        assert_eq!(cf_clip_free(clip), cf_status::CF_OK);
    }
}

/// The reader calls, C and Rust.
fn sampling(reader: &ClipReader, clip: cf_clip, rounds: usize, calls: usize) {
    let n = reader.num_bones();
    let dur = reader.duration().max(1e-3);
    let t = |i: usize| (i % 997) as f32 / 997.0 * dur;
    let list: Vec<u32> = (0..8).map(|k| (k * 5 % n) as u32).collect();
    // Buffers of each side (the C side's through pointers, as a C caller passes them).
    let (mut cp, mut rp, mut rp2) = (P::new(n), Pose::new(n), Pose::new(n));
    let mut rskip = Pose::new(n);
    reader.bind_pose_into(&mut rskip);
    let mut cskip = P::new(n);
    unsafe { cf_clip_bind_pose(clip, cskip.c()) };
    let (mut packed_r, mut packed_t, mut packed_s) =
        (vec![0f32; 4 * n], vec![0f32; 3 * n], vec![0f32; 3 * n]);
    let (mut lr, mut lt, mut ls) = (vec![0f32; 32], vec![0f32; 24], vec![0f32; 24]);
    let bone = n / 2;
    let mut num = 0u32;
    // The C side's arrays as a C caller holds them: pointers (copied into each closure).
    let (plr, plt, pls) = (lr.as_mut_ptr(), lt.as_mut_ptr(), ls.as_mut_ptr());
    let (cpc, cskipc) = (cp.c(), cskip.c());
    let mut rp_list = Pose::new(n);
    {
        let cases = &mut [
            Case {
                name: "query: num_bones".into(),
                c: Box::new(|_| unsafe {
                    cf_clip_num_bones(black_box(clip), &mut num);
                    black_box(num);
                }),
                rust: Box::new(|_| {
                    black_box(black_box(&reader).num_bones());
                }),
            },
            Case {
                name: "one bone: sample_bone".into(),
                c: Box::new(|i| unsafe {
                    cf_clip_sample_bone(clip, bone as u32, t(i), CF_LOOPING_CLAMP, plr, plt, pls);
                }),
                rust: Box::new(|i| {
                    black_box(reader.sample_bone(bone, t(i), Looping::Clamp));
                }),
            },
            Case {
                name: "8 bones: sample_bones".into(),
                c: Box::new(|i| unsafe {
                    cf_clip_sample_bones(
                        clip,
                        t(i),
                        CF_LOOPING_CLAMP,
                        list.as_ptr(),
                        8,
                        plr,
                        32,
                        plt,
                        24,
                        pls,
                        24,
                    );
                }),
                rust: Box::new(|i| {
                    reader
                        .sample_bones(&list, t(i), Looping::Clamp, Defaults::Write, &mut rp_list)
                        .unwrap();
                    black_box(&rp_list);
                }),
            },
            Case {
                name: "full pose: sample_into / sample_pose".into(),
                c: Box::new(|i| unsafe {
                    cf_clip_sample_into(clip, t(i), CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, cpc);
                }),
                rust: Box::new(|i| {
                    reader.sample_pose(t(i), Looping::Clamp, &mut rp);
                    black_box(&rp);
                }),
            },
            Case {
                name: "full pose, skip defaults".into(),
                c: Box::new(|i| unsafe {
                    cf_clip_sample_into(clip, t(i), CF_LOOPING_CLAMP, CF_DEFAULTS_SKIP, cskipc);
                }),
                rust: Box::new(|i| {
                    reader.sample_pose_with(t(i), Looping::Clamp, Defaults::Skip, &mut rskip);
                    black_box(&rskip);
                }),
            },
            Case {
                name: "full pose, packed: sample_pose".into(),
                c: Box::new(|i| unsafe {
                    cf_clip_sample_pose(
                        clip,
                        t(i),
                        CF_LOOPING_CLAMP,
                        packed_r.as_mut_ptr(),
                        4 * n,
                        packed_t.as_mut_ptr(),
                        3 * n,
                        packed_s.as_mut_ptr(),
                        3 * n,
                    );
                }),
                rust: Box::new(|i| {
                    reader.sample_pose(t(i), Looping::Clamp, &mut rp2);
                    black_box(&rp2);
                }),
            },
        ];
        run(cases, rounds, calls);
    }
}

/// The jobs, C and Rust, on the same inputs.
fn jobs(reader: &ClipReader, clip: cf_clip, rounds: usize, calls: usize) {
    let n = reader.num_bones();
    let parents: Vec<u32> = (0..n)
        .map(|b| reader.skeleton().parent(b).map_or(NO_PARENT, |p| p as u32))
        .collect();
    let (mut cp, mut rp) = (P::new(n), Pose::new(n));
    let (mut cp2, mut rp2) = (P::new(n), Pose::new(n));
    let (mut cobj, mut robj) = (P::new(n), P::new(n));
    reader.sample_pose(0.3, Looping::Clamp, &mut rp);
    reader.sample_pose(0.7, Looping::Clamp, &mut rp2);
    unsafe {
        cf_clip_sample_into(clip, 0.3, CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, cp.c());
        cf_clip_sample_into(clip, 0.7, CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, cp2.c());
    }
    // A 256-vertex mesh, 4 influences, identity palette.
    let nv = 256;
    let palette = vec![Mat4::IDENTITY; n];
    let pos: Vec<[f32; 3]> = (0..nv).map(|v| [v as f32, 1.0, 2.0]).collect();
    let nor: Vec<[f32; 3]> = vec![[0.0, 1.0, 0.0]; nv];
    let joints: Vec<u16> = (0..4 * nv).map(|k| (k % n) as u16).collect();
    let weights = vec![0.25f32; 4 * nv];
    let (mut cop, mut con) = (vec![[0f32; 3]; nv], vec![[0f32; 3]; nv]);
    let (mut rop, mut ron) = (vec![[0f32; 3]; nv], vec![[0f32; 3]; nv]);
    // The jobs: the same inputs both ways.
    let mut cout = P::new(n);
    let mut rest = P::new(n);
    let bw: Vec<f32> = (0..n).map(|k| (k % 2) as f32).collect();
    let layers = [
        cf_blend_layer {
            pose: cp.c(),
            weight: 0.6,
            bone_weights: std::ptr::null(),
            num_bone_weights: 0,
        },
        cf_blend_layer {
            pose: cp2.c(),
            weight: 0.4,
            bone_weights: bw.as_ptr(),
            num_bone_weights: n,
        },
    ];
    let blend = cf_blend_job {
        layers: layers.as_ptr(),
        num_layers: 2,
        additive: std::ptr::null(),
        num_additive: 0,
        rest: rest.c(),
        threshold: 0.1,
        out: cout.c(),
    };
    let l2o = cf_local_to_object_job {
        parents: parents.as_ptr(),
        num_bones: n,
        local: cp.c(),
        start: 0,
        end: n,
        out: cobj.c(),
        simd: CF_SIMD_AUTO,
    };
    let skin = cf_skin_job {
        palette: palette.as_ptr().cast(),
        palette_count: n,
        influences: 4,
        joints: joints.as_ptr(),
        joints_count: joints.len(),
        weights: weights.as_ptr(),
        weights_count: weights.len(),
        positions: pos.as_ptr().cast(),
        num_vertices: nv,
        normals: nor.as_ptr().cast(),
        normals_count: nv,
        out_positions: cop.as_mut_ptr().cast(),
        out_positions_count: nv,
        out_normals: con.as_mut_ptr().cast(),
        out_normals_count: nv,
        simd: CF_SIMD_AUTO,
    };
    let mut bo = P::new(n);
    let cases = &mut [
        Case {
            name: "blend 2 layers (1 per-bone weighted)".into(),
            c: Box::new(|_| unsafe {
                cf_blend_run(black_box(&blend));
            }),
            rust: Box::new(|_| {
                let l = [
                    BlendLayer {
                        pose: PoseRef::from(&rp),
                        weight: 0.6,
                        bone_weights: None,
                    },
                    BlendLayer {
                        pose: PoseRef::from(&rp2),
                        weight: 0.4,
                        bone_weights: Some(&bw),
                    },
                ];
                BlendJob {
                    layers: black_box(&l),
                    additive: &[],
                    rest: rest.get(),
                    threshold: 0.1,
                    out_rotations: &mut bo.r,
                    out_translations: &mut bo.t,
                    out_scales: &mut bo.s,
                }
                .run()
                .unwrap();
            }),
        },
        Case {
            name: "local to object".into(),
            c: Box::new(|_| unsafe {
                cf_local_to_object_run(black_box(&l2o));
            }),
            rust: Box::new(|_| {
                LocalToObjectJob::new(
                    black_box(&parents),
                    PoseRef::from(&rp),
                    &mut robj.r,
                    &mut robj.t,
                    &mut robj.s,
                )
                .run()
                .unwrap();
            }),
        },
        Case {
            name: format!("skin {nv} vertices x 4 influences"),
            c: Box::new(|_| unsafe {
                cf_skin_run(black_box(&skin));
            }),
            rust: Box::new(|_| {
                SkinJob {
                    palette: black_box(&palette),
                    influences: 4,
                    joints: &joints,
                    weights: &weights,
                    positions: &pos,
                    normals: &nor,
                    out_positions: &mut rop,
                    out_normals: &mut ron,
                }
                .run_with(SimdPath::Auto)
                .unwrap();
            }),
        },
    ];
    run(cases, rounds, calls);
}
