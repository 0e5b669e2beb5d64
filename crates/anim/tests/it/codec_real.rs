//! The codec on real clips (`CLIPFORGE_DATA=../shared/data`): every ACL regression transform clip
//! and every BVH file compresses under the error threshold, measured in float64 on the
//! decompressed `.acl.sjson` re-imported against the original file; sizes against ACL's figures
//! (issue 11's targets: each clip no larger than ACL's, totals at most 0.85 x and 0.88 x ACL's).

use crate::common;

use clipforge_anim::formats::{load_clips, write_acl_clip};
use clipforge_anim::{ClipReader, CompressionSettings, compress, metric};
use std::collections::HashMap;
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

/// ACL's compressed size per clip from `reference/acl-baseline.tsv` (beside `data/`).
fn acl_sizes(data: &Path) -> HashMap<String, u64> {
    let tsv = std::fs::read_to_string(data.join("../reference/acl-baseline.tsv"))
        .expect("acl-baseline.tsv");
    tsv.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() > 11 && f[1] == "transform_clip" && f[2] == "ok")
                .then(|| (f[0].to_string(), f[11].parse().unwrap()))
        })
        .collect()
}

/// ACL's compressed size per shared BVH file (file name) from `reference/acl-bvh-baseline.tsv`
/// (each BVH converted by `tools/bvh_to_acl.py`, ACL's default settings).
fn acl_bvh_sizes(data: &Path) -> HashMap<String, u64> {
    let tsv = std::fs::read_to_string(data.join("../reference/acl-bvh-baseline.tsv"))
        .expect("acl-bvh-baseline.tsv");
    tsv.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() > 7 && f[0] == "shared").then(|| {
                let name = f[2].rsplit('/').next().unwrap_or(f[2]).to_string();
                (name, f[7].parse().unwrap())
            })
        })
        .collect()
}

/// Compresses, checks the compressor's own verification, then writes the decompressed clip as
/// `.acl.sjson`, re-imports it and measures it against the original file in float64.
fn round_trip(path: &Path, threshold: f32) -> Option<(String, usize, f64)> {
    let clips = match load_clips(path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("refused: {e}");
            return None;
        }
    };
    let clip = &clips[0];
    let settings = CompressionSettings {
        error_threshold: threshold,
        shell_distance: None,
        ..Default::default()
    };
    let c = compress(clip, &settings).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        c.stats.verified_max_error <= threshold as f64,
        "{}",
        path.display()
    );
    let decoded = clipforge_anim::decompress::to_raw_clip(&ClipReader::new(&c.bytes).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lossy.acl.sjson");
    std::fs::write(&out, write_acl_clip(&decoded)).unwrap();
    let reread = load_clips(&out).unwrap().remove(0);
    let e = metric::measure(clip, &reread).unwrap();
    let name = path
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace(".acl.sjson", "");
    Some((name, c.runtime_bytes, e.max))
}

#[test]
fn acl_regression_clips_beat_acl_under_the_threshold() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let acl = acl_sizes(&data);
    let (mut ours, mut theirs) = (0usize, 0u64);
    let mut compared = 0;
    for path in files(&data.join("acl-regression"), ".acl.sjson") {
        let Some((name, size, err)) = round_trip(&path, 0.01) else {
            continue;
        };
        eprintln!(
            "{name:28} {size:7} B (ACL {:>7})  max error {err:.5} cm",
            acl.get(&name).map_or("-".into(), |s| s.to_string())
        );
        // Our float32 clip against the file's float64 values: leave ACL's documented 3e-5 margin.
        assert!(err <= 0.01 + 3e-5, "{name}: max error {err} above 0.01 cm");
        if let Some(&a) = acl.get(&name) {
            assert!(size as u64 <= a, "{name}: {size} B is above ACL's {a} B");
            ours += size;
            theirs += a;
            compared += 1;
        }
    }
    eprintln!("total {ours} B vs ACL {theirs} B over {compared} clips");
    assert_eq!(
        compared, 25,
        "every ACL baseline clip that ACL compressed must be compared"
    );
    // Issue 24's target: at most 0.78 x ACL's 201,297 B (was issue 11's 0.85 x). `.cfa` version
    // 5 with the refinement roots first: 155,676 B (2026-11-28; leaves first 158,064 B, above).
    assert!(
        ours <= 157_011,
        "total {ours} B above 0.78 x ACL (157,011 B)"
    );
}

#[test]
fn bvh_clips_compress_under_the_threshold() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let acl = acl_bvh_sizes(&data);
    let paths = files(&data.join("bvh"), ".bvh");
    assert!(paths.len() >= 40);
    let (mut ours, mut theirs, mut compared) = (0usize, 0u64, 0);
    for path in paths {
        let (name, size, err) = round_trip(&path, 0.01).expect("every BVH file imports");
        let a = acl.get(&name).copied();
        eprintln!(
            "{name:48} {size:8} B (ACL {:>8})  max error {err:.5} cm",
            a.map_or("-".into(), |s| s.to_string())
        );
        assert!(err <= 0.01 + 3e-5, "{name}: max error {err}");
        if let Some(a) = a {
            assert!(size as u64 <= a, "{name}: {size} B is above ACL's {a} B");
            ours += size;
            theirs += a;
            compared += 1;
        }
    }
    eprintln!("total {ours} B vs ACL {theirs} B over {compared} BVH clips");
    assert_eq!(compared, 42, "every shared BVH clip in ACL's baseline");
    // Issue 24's target: at most 0.82 x ACL's 3,188,825 B (was issue 11's 0.88 x). `.cfa` version
    // 5 with the refinement roots first: 2,538,040 B (2026-11-28; leaves first 2,575,780 B).
    assert!(
        ours <= 2_614_836,
        "total {ours} B above 0.82 x ACL (2,614,836 B)"
    );
}

#[test]
fn inf_error_clip_is_refused_clearly() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let err = load_clips(&data.join("acl-regression/09_02_with_inf_error.acl.sjson")).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("09_02_with_inf_error") && msg.contains("hip") && msg.contains("translation"),
        "{msg}"
    );
}

/// The clip with no bones (ACL's `no_output_transform_tracks`: 5 samples, nothing in them) skips
/// the search and the decode of its float64 check (there is nothing to choose or measure): it
/// still writes the bytes the full path wrote, reads back, and reports the figures the full
/// check measures on the decoded buffer.
#[test]
fn a_clip_without_bones_writes_the_same_bytes_and_verifies() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let path = data.join("acl-regression/no_output_transform_tracks.acl.sjson");
    let clip = load_clips(&path).unwrap().remove(0);
    assert_eq!((clip.num_bones(), clip.num_samples), (0, 5));
    let settings = CompressionSettings::default();
    let c = compress(&clip, &settings).unwrap();
    // FNV-1a of the whole .cfa as the build before the shortcut wrote it (`compress_cpu --hash`,
    // 2026-11-28): a change to the format changes it on purpose.
    let fnv = c.bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    assert_eq!((c.runtime_bytes, fnv), (56, 0xa9bd_12df_7928_a91a));
    let reader = ClipReader::new(&c.bytes).unwrap();
    assert_eq!((reader.num_bones(), reader.num_samples()), (0, 5));
    let full = clipforge_anim::compress::verify(&clip, &reader, &[]).unwrap();
    assert_eq!(c.error, full);
    assert_eq!(c.error.per_sample_max.len(), 5);
    assert_eq!(c.error.per_interval_max.len(), 4);
    assert_eq!(c.stats.verified_max_error, 0.0);
}

/// A bone that turns more than ~106° between two samples (CMU 131_03's right thumb, |dot| 0.005
/// from sample 242 to 243) is held to the threshold across its intervals, not only at the
/// midpoint that stands for an interval elsewhere: measured here at 1/9 … 8/9 of every interval
/// (as `clip_eval.py --between 8`, which found 0.01015 cm at 3/9 of that interval when the
/// float64 check measured the midpoint alone there).
#[test]
fn a_bone_turning_fast_is_within_the_threshold_across_its_intervals() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let clip = load_clips(&data.join("bvh/cmu-bvh11/131_03.bvh"))
        .unwrap()
        .remove(0);
    let settings = CompressionSettings {
        error_threshold: 0.01,
        shell_distance: None,
        ..Default::default()
    };
    let c = compress(&clip, &settings).unwrap();
    let reader = ClipReader::new(&c.bytes).unwrap();
    let decoded = clipforge_anim::decompress::to_raw_clip(&reader);
    let polls: Vec<_> = (1..9)
        .map(|k| clipforge_anim::compress::decoded_between(&reader, k as f32 / 9.0))
        .collect();
    let between: Vec<metric::Between> = polls
        .iter()
        .zip(1..9)
        .map(|(poses, k)| metric::Between {
            alpha: k as f64 / 9.0,
            poses,
        })
        .collect();
    let e = metric::measure_with_between(&clip, &decoded, &between, &clip.skeleton.shell_distances)
        .unwrap();
    assert!(
        e.max <= 0.01,
        "max error {} cm between samples {} and {} (bone {})",
        e.max,
        e.worst_sample,
        e.worst_sample + 1,
        e.worst_bone
    );
}
