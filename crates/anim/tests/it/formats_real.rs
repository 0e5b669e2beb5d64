//! Importers against the real corpus (`CLIPFORGE_DATA=/path/to/shared/data`; skipped otherwise).
//!
//! - every `.acl.sjson` loads with the bone and sample counts of INDEX.tsv, or is refused with
//!   the expected clear message (scalar track lists (read by the scalar reader instead), the inf clip, the commented format reference);
//! - every BVH loads with INDEX.tsv's bone and frame counts;
//! - every glTF/GLB loads as many clips as INDEX-gltf-animations.tsv lists, with those names;
//! - every loaded clip round-trips bit-exactly through the ACL writer (decimal and hex);
//! - a few BVH files agree with the reference converter `bvh_to_acl.py`, measured by the
//!   independent `clip_eval.py` (needs python3 + numpy; skipped with a message otherwise).

use crate::common;

use clipforge_anim::RawClip;
use clipforge_anim::formats::{
    AclWriteOptions, ClipFormat, load_clips, load_clips_with_warnings, write_acl_clip_with,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

struct Row {
    path: String,
    bones: usize,
    frames: usize,
}

fn index(data: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(data.join("INDEX.tsv")).expect("INDEX.tsv");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            Row {
                path: c[0].to_string(),
                bones: c[2].parse().unwrap_or(0),
                frames: c[5].parse().unwrap_or(0),
            }
        })
        .collect()
}

fn bits(c: &RawClip) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    (
        c.rotations
            .iter()
            .flat_map(|q| q.to_array())
            .map(f32::to_bits)
            .collect(),
        c.translations
            .iter()
            .flat_map(|v| v.to_array())
            .map(f32::to_bits)
            .collect(),
        c.scales
            .iter()
            .flat_map(|v| v.to_array())
            .map(f32::to_bits)
            .collect(),
    )
}

fn assert_round_trip(clip: &RawClip, label: &str) {
    let dir = tempfile::tempdir().unwrap();
    for binary_exact in [false, true] {
        let text = write_acl_clip_with(
            clip,
            &AclWriteOptions {
                binary_exact,
                ..Default::default()
            },
        );
        let p = dir.path().join("rt.acl.sjson");
        std::fs::write(&p, &text).unwrap();
        let back = load_clips(&p).unwrap_or_else(|e| panic!("{label}: re-reading failed: {e}"));
        assert_eq!(back.len(), 1);
        let b = &back[0];
        assert_eq!(b.name, clip.name, "{label}");
        assert_eq!(b.skeleton.names, clip.skeleton.names, "{label}");
        assert_eq!(b.skeleton.parents, clip.skeleton.parents, "{label}");
        assert_eq!(b.num_samples, clip.num_samples, "{label}");
        assert_eq!(
            b.sample_rate.to_bits(),
            clip.sample_rate.to_bits(),
            "{label}"
        );
        assert!(
            bits(b) == bits(clip),
            "{label}: samples differ after round trip (exact={binary_exact})"
        );
        let bind = |c: &RawClip| {
            let s = &c.skeleton;
            (
                s.bind_rotations
                    .iter()
                    .flat_map(|q| q.to_array())
                    .map(f32::to_bits)
                    .collect::<Vec<_>>(),
                s.bind_translations
                    .iter()
                    .flat_map(|v| v.to_array())
                    .map(f32::to_bits)
                    .collect::<Vec<_>>(),
                s.bind_scales
                    .iter()
                    .flat_map(|v| v.to_array())
                    .map(f32::to_bits)
                    .collect::<Vec<_>>(),
                s.shell_distances
                    .iter()
                    .map(|v| v.to_bits())
                    .collect::<Vec<_>>(),
            )
        };
        assert!(
            bind(b) == bind(clip),
            "{label}: bind pose differs after round trip"
        );
    }
}

#[test]
fn acl_regression_files_load_or_are_refused_clearly() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let rows = index(&data);
    let mut loaded = 0;
    let mut refused = 0;
    for row in rows.iter().filter(|r| r.path.ends_with(".acl.sjson")) {
        let path = data.join(&row.path);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let result = load_clips(&path);
        let scalar = name.starts_with("track_list_") || name == "no_output_scalar_tracks.acl.sjson";
        if scalar {
            // Not a transform clip: refused by the clip loader with a clear message, read by
            // the scalar reader (tests/it/anim/scalar_real.rs checks what it reads).
            let e = result.expect_err(&name);
            assert!(e.message.contains("a scalar track list"), "{e}");
            assert_eq!(e.path, path);
            assert!(e.line.is_some());
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(matches!(
                clipforge_anim::formats::acl::read_acl_file(&text, &path),
                Ok(clipforge_anim::formats::acl::AclFile::Scalars(_))
            ));
            refused += 1;
        } else if name == "09_02_with_inf_error.acl.sjson" {
            let e = result.expect_err(&name);
            let msg = e.to_string();
            assert!(msg.contains(&path.display().to_string()), "{msg}");
            assert!(
                msg.contains("bone '") && msg.contains("sample") && msg.contains("translation"),
                "{msg}"
            );
            assert!(
                e.line.is_some(),
                "the line of the bad sample is known: {msg}"
            );
            eprintln!("refused as expected: {msg}");
            refused += 1;
        } else if name == "format_reference.acl.sjson" {
            // The commented reference holds a clip *and* a track list (two `settings`, two
            // `tracks`): refused at the first repeated key, naming both lines.
            let e = result.expect_err(&name);
            assert!(
                e.message
                    .contains("duplicate key 'settings' (first defined on line 60)"),
                "{e}"
            );
            assert_eq!(e.line, Some(198));
            refused += 1;
        } else {
            let clips = result.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(clips.len(), 1);
            let c = &clips[0];
            assert_eq!(c.num_bones(), row.bones, "{name} bones");
            assert_eq!(c.num_samples, row.frames, "{name} samples");
            assert!(c.sample_rate > 0.0);
            assert_round_trip(c, &name);
            loaded += 1;
        }
    }
    eprintln!(
        "acl.sjson: {loaded} loaded and round-tripped, {refused} refused with a clear message"
    );
    assert_eq!(loaded + refused, 35);
    assert!(loaded >= 25);
}

#[test]
fn multi_root_clip_has_three_roots() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let c = &load_clips(&data.join("acl-regression/09_02_multi_root.acl.sjson")).unwrap()[0];
    let roots = (0..c.num_bones())
        .filter(|&b| c.skeleton.parent(b).is_none())
        .count();
    assert_eq!(roots, 3);
}

#[test]
fn every_bvh_loads_with_index_counts() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let mut n = 0;
    for row in index(&data).iter().filter(|r| r.path.ends_with(".bvh")) {
        let path = data.join(&row.path);
        let t = Instant::now();
        let (clips, warnings) = load_clips_with_warnings(&path).unwrap_or_else(|e| panic!("{e}"));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let c = &clips[0];
        assert_eq!(c.num_bones(), row.bones, "{}", row.path);
        assert_eq!(c.num_samples, row.frames, "{}", row.path);
        assert!(c.rotations.iter().all(|q| q.w >= 0.0));
        for w in &warnings {
            eprintln!("{w}");
        }
        if n % 8 == 0 {
            assert_round_trip(c, &row.path);
        }
        eprintln!(
            "{}: {} bones x {} frames @ {} Hz, {ms:.1} ms",
            row.path,
            c.num_bones(),
            c.num_samples,
            c.sample_rate
        );
        n += 1;
    }
    assert_eq!(n, 42, "BVH files in INDEX.tsv");
}

#[test]
fn every_gltf_animation_loads() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let text = std::fs::read_to_string(data.join("INDEX-gltf-animations.tsv")).unwrap();
    let mut expected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let c: Vec<&str> = l.split('\t').collect();
        expected
            .entry(c[0].to_string())
            .or_default()
            .push(c[2].to_string());
    }
    assert_eq!(expected.len(), 8);
    for (file, names) in &expected {
        let path: PathBuf = data.join(file);
        assert_eq!(ClipFormat::from_path(&path), Some(ClipFormat::Gltf));
        let (clips, warnings) = load_clips_with_warnings(&path).unwrap_or_else(|e| panic!("{e}"));
        for w in &warnings {
            eprintln!("{w}");
        }
        let got: Vec<&str> = clips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(got, *names, "{file}");
        for c in &clips {
            assert!(c.num_bones() > 0 && c.num_samples > 0, "{file} {}", c.name);
            assert_round_trip(c, &format!("{file} {}", c.name));
            eprintln!(
                "{file} '{}': {} bones x {} samples @ {} Hz",
                c.name,
                c.num_bones(),
                c.num_samples,
                c.sample_rate
            );
        }
    }
}

#[test]
fn gltf_skinned_clips_use_the_skin_joints() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    // INDEX.tsv: bones(joints) per file; one skin per file in these.
    for (file, joints) in [
        ("gltf/fox-via-bevy/Fox.glb", 24),
        ("gltf/khronos-via-ozz/cesium_man.gltf", 19),
        ("gltf/raylib-cc0/robot.glb", 43),
        ("gltf/raylib-cc0/greenman.glb", 12),
    ] {
        let clips = load_clips(&data.join(file)).unwrap();
        for c in &clips {
            assert!(
                c.num_bones() >= joints,
                "{file} {}: {} bones",
                c.name,
                c.num_bones()
            );
            eprintln!(
                "{file} '{}': {} bones ({} joints in the skin)",
                c.name,
                c.num_bones(),
                joints
            );
        }
    }
}

/// Our BVH importer + ACL writer vs. the reference converter, measured by clip_eval.py.
#[test]
fn bvh_cross_check_with_reference_converter() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let tools = data.join("../tools");
    if !tools.join("bvh_to_acl.py").is_file() || !common::python_with_numpy() {
        eprintln!(
            "skipped: needs python3 with numpy and {}/bvh_to_acl.py",
            tools.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "bvh/cmu-acrnn/standard.bvh",
        "bvh/bandai-namco-nc/dataset-1/dataset-1_dash_normal_001.bvh",
        "bvh/cmu-bvh11/131_01.bvh",
        "bvh/cmu-assimp/01_01.bvh",
        "bvh/cmu-acrnn/salsa_10.bvh",
    ] {
        let src = data.join(file);
        let reference = dir.path().join("ref.acl.sjson");
        let ours = dir.path().join("ours.acl.sjson");
        let out = Command::new("python3")
            .arg(tools.join("bvh_to_acl.py"))
            .arg(&src)
            .arg(&reference)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "bvh_to_acl.py failed on {file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let clip = &load_clips(&src).unwrap()[0];
        std::fs::write(&ours, clipforge_anim::formats::write_acl_clip(clip)).unwrap();
        for (a, b) in [(&reference, &ours), (&ours, &reference)] {
            let out = Command::new("python3")
                .arg(tools.join("clip_eval.py"))
                .arg(a)
                .arg(b)
                .arg("--json")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "clip_eval.py failed on {file}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let res: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let max = res["max_error"].as_f64().unwrap();
            let mean = res["mean_error"].as_f64().unwrap();
            eprintln!(
                "cross-check {file}: max_error {max:.3e} cm at bone {} sample {}, mean {mean:.3e} ({} bones x {} samples)",
                res["bone"], res["sample"], res["bones"], res["samples"]
            );
            // f64 reference vs. our f32 samples: differences are float32 rounding only.
            assert!(max < 1e-3, "{file}: max_error {max} cm");
        }
    }
}

/// interpolation_test.gltf: one node per animation; STEP holds key values, LINEAR and
/// CUBICSPLINE pass through the keys but differ between them.
#[test]
fn gltf_interpolation_modes_on_real_file() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let clips = load_clips(&data.join("gltf/khronos-via-ozz/interpolation_test.gltf")).unwrap();
    let get = |name: &str| {
        clips
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let distinct = |v: &[glam::Vec3]| {
        let mut d: Vec<[u32; 3]> = v.iter().map(|x| x.to_array().map(f32::to_bits)).collect();
        d.sort();
        d.dedup();
        d.len()
    };
    let step = get("Step Translation");
    let linear = get("Linear Translation");
    let cubic = get("CubicSpline Translation");
    assert!(
        distinct(&step.translations) <= 5,
        "STEP must only hold the 5 key values"
    );
    assert!(distinct(&linear.translations) > 5);
    assert!(distinct(&step.scales) <= 1 && distinct(&get("Step Scale").scales) <= 5);
    assert_eq!(linear.num_samples, cubic.num_samples);
    let max_diff = linear
        .translations
        .iter()
        .zip(&cubic.translations)
        .map(|(a, b)| (*a - *b).length())
        .fold(0.0f32, f32::max);
    eprintln!(
        "linear vs cubic translation: max difference {max_diff} cm over {} samples @ {} Hz",
        linear.num_samples, linear.sample_rate
    );
    assert!(
        max_diff > 1.0,
        "cubic spline must differ from linear between keys"
    );
    for name in ["Step Rotation", "Linear Rotation", "CubicSpline Rotation"] {
        let c = get(name);
        assert!(
            c.rotations.iter().all(|q| (q.length() - 1.0).abs() < 1e-5),
            "{name}"
        );
    }
}
