//! Additive clips made from the real data (`CLIPFORGE_DATA=../shared/data`): every ACL regression
//! transform clip and every BVH file, each relative to its first frame and each against another
//! clip of the same rig as base. For each: the compressor's own float64 check on the combined
//! pose, the additive (with its base) round-tripped through ACL's format, and the independent
//! evaluator (`clip_eval.py`, combined pose, at the samples and at 3 points between each pair)
//! on the exported `.acl.sjson` files. Sizes: the additive relative to the first frame against
//! the same clip compressed as a plain clip (printed per clip and in total; figures in
//! `docs/BENCHMARKS.md`, "Additive clips").

use crate::common;

use clipforge_anim::additive::{AdditiveFormat, first_frame, make_additive};
use clipforge_anim::formats::{load_clips, write_acl_clip};
use clipforge_anim::{ClipReader, CompressionSettings, RawClip, compress};
use std::path::{Path, PathBuf};

const THRESHOLD: f32 = 0.01;
/// Points measured between each pair of samples by the independent evaluator.
/// (Not the compressor's own points: 1/8, 1/4, 1/2, 3/4, 7/8 of each interval, and over a base
/// of several samples of each piece between base keys, `additive::multi_base_blends`.)
const BETWEEN: &str = "4";

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

fn same_rig(a: &RawClip, b: &RawClip) -> bool {
    clipforge_anim::additive::same_rig(&a.skeleton, &b.skeleton)
}

/// Compresses `additive`, checks the compressor's combined-pose check, round-trips the raw
/// additive through ACL's format, writes the decompressed additive and has `clip_eval.py`
/// measure the combined pose. Returns (runtime bytes, evaluator's max error).
fn check(additive: &RawClip, label: &str, dir: &Path, tools: Option<&Path>) -> (usize, f64) {
    let settings = CompressionSettings {
        error_threshold: THRESHOLD,
        shell_distance: None,
        ..Default::default()
    };
    let c = compress(additive, &settings).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert!(
        c.stats.verified_max_error <= THRESHOLD as f64,
        "{label}: combined-pose error {} over the threshold",
        c.stats.verified_max_error
    );
    // Round trip of the raw additive and its base through ACL's format.
    let raw_path = dir.join("raw.acl.sjson");
    std::fs::write(&raw_path, write_acl_clip(additive)).unwrap();
    let back = load_clips(&raw_path).unwrap().remove(0);
    assert_eq!(&back, additive, "{label}: ACL round trip");
    // The decompressed additive, written with the same base.
    let mut decoded = clipforge_anim::decompress::to_raw_clip(&ClipReader::new(&c.bytes).unwrap());
    decoded.additive = additive.additive.clone();
    let lossy_path = dir.join("lossy.acl.sjson");
    std::fs::write(&lossy_path, write_acl_clip(&decoded)).unwrap();
    let reread = load_clips(&lossy_path).unwrap().remove(0);
    assert_eq!(
        reread.additive, additive.additive,
        "{label}: base written back"
    );
    let err = match tools {
        Some(t) => common::clip_eval(t, &raw_path, &lossy_path, &["--between", BETWEEN]),
        None => c.error.max,
    };
    // The evaluator reads the same float32 values; its between-sample points other than the
    // compressor's, and its own float32 base timing, leave the codec's
    // documented 3e-5 cm margin.
    assert!(
        err <= THRESHOLD as f64 + 3e-5,
        "{label}: clip_eval.py measures {err} cm on the combined pose"
    );
    (c.runtime_bytes, err)
}

/// Runs both additive checks on every clip of `paths` and compares first-frame additive sizes
/// with plain sizes. Returns (clips, other-base pairs, plain total, additive total).
fn run(paths: &[PathBuf]) -> (usize, usize, usize, usize) {
    let tools = common::real_data()
        .map(|d| d.join("../tools"))
        .filter(|_| common::python_with_numpy());
    if tools.is_none() {
        eprintln!("python3 with numpy missing: only the compressor's own check is used");
    }
    let clips: Vec<(String, RawClip)> = paths
        .iter()
        .filter_map(|p| match load_clips(p) {
            Ok(mut c) if !c.is_empty() => Some((
                p.file_name().unwrap().to_string_lossy().into_owned(),
                c.remove(0),
            )),
            _ => {
                eprintln!("not a loadable transform clip, skipped: {}", p.display());
                None
            }
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let settings = CompressionSettings {
        error_threshold: THRESHOLD,
        shell_distance: None,
        ..Default::default()
    };
    let (mut plain_total, mut add_total, mut pairs) = (0, 0, 0);
    for (i, (name, clip)) in clips.iter().enumerate() {
        let plain = compress(clip, &settings).unwrap().runtime_bytes;
        let add = make_additive(clip, &first_frame(clip), AdditiveFormat::DEFAULT).unwrap();
        let (size, err) = check(
            &add,
            &format!("{name} (first frame)"),
            dir.path(),
            tools.as_deref(),
        );
        eprintln!(
            "{name:48} plain {plain:8} B  additive/first frame {size:8} B ({:5.1}%)  error {err:.5} cm",
            100.0 * size as f64 / plain.max(1) as f64
        );
        plain_total += plain;
        add_total += size;
        // Another clip of the same rig as base: the next one in the list (wrapping around).
        if let Some((base_name, base)) = (1..clips.len())
            .map(|k| &clips[(i + k) % clips.len()])
            .find(|(_, b)| same_rig(clip, b) && b.num_samples > 0)
        {
            let add = make_additive(clip, base, AdditiveFormat::DEFAULT).unwrap();
            let (size, err) = check(
                &add,
                &format!("{name} on {base_name}"),
                dir.path(),
                tools.as_deref(),
            );
            eprintln!("{name:48} on {base_name:40} {size:8} B  error {err:.5} cm");
            pairs += 1;
        }
    }
    eprintln!(
        "{} clips: plain {plain_total} B, additive relative to the first frame {add_total} B ({:.1}%); {pairs} clips also on another clip of their rig",
        clips.len(),
        100.0 * add_total as f64 / plain_total.max(1) as f64
    );
    (clips.len(), pairs, plain_total, add_total)
}

#[test]
fn additive_acl_regression_clips_meet_the_threshold_on_the_combined_pose() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (clips, pairs, plain, add) = run(&files(&data.join("acl-regression"), ".acl.sjson"));
    // 35 files: 8 scalar track lists, the format reference and the inf-error clip do not load.
    assert_eq!(clips, 25, "ACL regression transform clips loaded");
    assert!(
        pairs >= clips / 2,
        "only {pairs} clips found another clip of their rig"
    );
    assert!(add < plain, "additive {add} B not below plain {plain} B");
}

#[test]
fn additive_bvh_clips_meet_the_threshold_on_the_combined_pose() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let paths = files(&data.join("bvh"), ".bvh");
    assert!(paths.len() >= 40);
    let (clips, pairs, plain, add) = run(&paths);
    assert_eq!(clips, paths.len(), "every BVH file imports");
    assert!(
        pairs >= clips / 2,
        "only {pairs} clips found another clip of their rig"
    );
    assert!(add < plain, "additive {add} B not below plain {plain} B");
}
