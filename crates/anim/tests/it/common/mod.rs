//! Test helpers of the codec library's tests (`clipforge-anim`): the real-data folder, the
//! independent evaluator (`../shared/tools/clip_eval.py`), real clips and float64 error checks.
//! The root package's test binary includes this file too (`tests/it/common/mod.rs`), so both
//! binaries share one copy.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Hostile-input builders (glTF chains, declared-size bombs) of the hostile tests.
pub mod hostile_inputs;

/// The repository's root (fixtures, fuzz seeds and `assets/` live there), from whichever
/// package's tests this file is compiled into.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|p| p.join("assets/clips").is_dir())
        .expect("the repository root (a folder holding assets/clips) above the package")
        .to_path_buf()
}

/// The real-data folder (`../shared/data`) when the suite is switched on with
/// `CLIPFORGE_DATA=/path/to/shared/data`. Unset: `None` (the test prints that it skipped).
/// Set but missing: panics, so CI never passes silently without its data.
pub fn real_data() -> Option<PathBuf> {
    let dir = std::env::var_os("CLIPFORGE_DATA")?;
    // Cargo runs each package's tests in that package's folder: a relative path (the README's
    // `../shared/data`) means the repository root's, wherever the test binary runs.
    let dir = repo_root().join(dir);
    assert!(
        dir.join("acl-regression").is_dir(),
        "CLIPFORGE_DATA={} does not hold the real data (acl-regression/ missing)",
        dir.display()
    );
    Some(dir)
}

/// Use at the top of a real-data test: `let Some(data) = real_data_or_skip!() else { return };`
#[macro_export]
macro_rules! real_data_or_skip {
    () => {{
        let d = common::real_data();
        if d.is_none() {
            eprintln!("skipped: set CLIPFORGE_DATA=../shared/data to run the real-data suite");
        }
        d
    }};
}

/// python3 with numpy, which the reference tools in `../shared/tools` need.
pub fn python_with_numpy() -> bool {
    Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// The independent evaluator's max error (cm) of `lossy` against `raw`
/// (`tools/clip_eval.py RAW LOSSY --json EXTRA...`); fails the test when the tool fails.
pub fn clip_eval(tools: &Path, raw: &Path, lossy: &Path, extra: &[&str]) -> f64 {
    let out = Command::new("python3")
        .arg(tools.join("clip_eval.py"))
        .arg(raw)
        .arg(lossy)
        .arg("--json")
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "clip_eval.py failed on {} vs {}: {}",
        raw.display(),
        lossy.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let res: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    res["max_error"].as_f64().unwrap()
}

/// The files under `dir` whose names end with one of `exts`, sorted.
pub fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .filter(|p| exts.iter().any(|x| p.to_string_lossy().ends_with(x)))
        .collect();
    v.sort();
    v
}

/// Every real non-empty transform clip (24 of the 25 ACL regression transform clips: one has no
/// samples): (label, clip). Files the importers refuse (scalar track lists, the
/// infinite-error clip, documents without transform tracks) are left out; callers count the
/// clips of each set, so a sweep still covers what it must.
pub fn real_transform_clips(data: &Path) -> Vec<(String, clipforge_anim::RawClip)> {
    let mut out = Vec::new();
    let sets: [(&str, &[&str]); 3] = [
        ("acl-regression", &[".acl.sjson"]),
        ("bvh", &[".bvh"]),
        ("gltf", &[".gltf", ".glb"]),
    ];
    for (dir, exts) in sets {
        for path in files(&data.join(dir), exts) {
            let Ok(clips) = clipforge_anim::formats::load_clips(&path) else {
                continue;
            };
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            for clip in clips {
                if clip.num_bones() == 0 || clip.num_samples == 0 {
                    continue;
                }
                out.push((format!("{file}:{}", clip.name), clip));
            }
        }
    }
    out
}

/// Float64 per-bone max error of the compressed `bytes` against `clip`, at every sample and at
/// `alphas` between every pair of samples (the runtime's interpolation), at `shells`.
pub fn per_bone_error(
    clip: &clipforge_anim::RawClip,
    bytes: &[u8],
    shells: &[f32],
    alphas: &[f32],
) -> Vec<f64> {
    use clipforge_anim::metric::{self, Between};
    let reader = clipforge_anim::ClipReader::new(bytes).unwrap();
    let decoded = clipforge_anim::decompress::to_raw_clip(&reader);
    let poses: Vec<clipforge_anim::RawClip> = if clip.num_samples > 1 {
        alphas
            .iter()
            .map(|&a| clipforge_anim::compress::decoded_between(&reader, a))
            .collect()
    } else {
        Vec::new()
    };
    let between: Vec<Between> = poses
        .iter()
        .zip(alphas)
        .map(|(poses, &a)| Between {
            alpha: a as f64,
            poses,
        })
        .collect();
    metric::measure_with_between(clip, &decoded, &between, shells)
        .unwrap()
        .per_bone_max
}

/// The combined-pose error (additive decoded on its raw base, against the raw additive on the
/// same base) of `bytes`, at every sample and at 9 points between each pair (more than the
/// compressor checks).
pub fn combined_error_9(
    additive: &clipforge_anim::RawClip,
    bytes: &[u8],
) -> clipforge_anim::metric::ErrorStats {
    use clipforge_anim::compress::decoded_between;
    use clipforge_anim::metric::Between;
    let reader = clipforge_anim::ClipReader::new(bytes).unwrap();
    let decoded = clipforge_anim::decompress::to_raw_clip(&reader);
    let poses: Vec<(f64, clipforge_anim::RawClip)> = (1..=9)
        .map(|j| {
            let a = j as f32 / 10.0;
            (a as f64, decoded_between(&reader, a))
        })
        .collect();
    let between: Vec<Between> = poses
        .iter()
        .map(|(alpha, poses)| Between {
            alpha: *alpha,
            poses,
        })
        .collect();
    clipforge_anim::additive::measure_combined(
        additive,
        additive.additive.as_ref().unwrap(),
        &decoded,
        &between,
        &additive.skeleton.shell_distances,
    )
    .unwrap()
}

/// `clip_eval.py RAW LOSSY --json --per-bone`: bone name → max error at the samples.
pub fn clip_eval_per_bone(
    tools: &Path,
    raw: &Path,
    lossy: &Path,
) -> std::collections::HashMap<String, f64> {
    let out = Command::new("python3")
        .arg(tools.join("clip_eval.py"))
        .arg(raw)
        .arg(lossy)
        .args(["--json", "--per-bone"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "clip_eval.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["per_bone_max_error"]
        .as_object()
        .expect("per_bone_max_error")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
        .collect()
}

/// Object-space positions of every bone at one sample (ACL's composition, f32 like the runtime).
pub fn object_positions(clip: &clipforge_anim::RawClip, sample: usize) -> Vec<glam::Vec3> {
    let mut local = clipforge_anim::pose::Pose::new(clip.num_bones());
    clip.sample_pose(sample, &mut local);
    let mut object = clipforge_anim::pose::Pose::new(clip.num_bones());
    clipforge_anim::pose::local_to_object(&clip.skeleton.parents, &local, &mut object).unwrap();
    object.translations.iter().map(|&t| t.into()).collect()
}
