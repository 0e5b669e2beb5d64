//! Per-bone thresholds and shell distances (issue 13, item 3): a finger bone held to 0.001 cm
//! while the rest stays at 0.01 cm, on real clips (`CLIPFORGE_DATA`), measured in float64 at
//! every sample and at 9 points between samples, and at the samples per bone by the independent
//! `clip_eval.py --per-bone`; the three sources' precedence (the clip file's per-track
//! `precision`, the folder's `[[bone]]` tables, the command line's `--bone`) through the real
//! binary; no override, or overrides equal to the global settings, leave the bytes unchanged.

use crate::common;

use clipforge::anim::compress::{BoneOverride, CompressionSettings, compress, glob_match};
use clipforge::anim::formats::{load_clips, write_acl_clip};
use clipforge::anim::runtime::ClipReader;
use clipforge::pipeline::folder_settings::{
    FolderSettings, Overrides, SettingsResolver, parse_bone_override,
};
use clipforge::pipeline::report::BatchReport;
use std::process::Command;

use crate::common::BIN;

fn over(pattern: &str, t: Option<f32>, d: Option<f32>) -> BoneOverride {
    BoneOverride {
        pattern: pattern.into(),
        error_threshold: t,
        shell_distance: d,
    }
}

/// Blends between samples: the 9 points of `clip_eval.py --between 9`.
fn nine() -> Vec<f32> {
    (1..10).map(|i| i as f32 / 10.0).collect()
}

#[test]
fn globs_and_command_line_overrides_parse() {
    assert!(glob_match("*Finger*", "LeftFingerBase"));
    assert!(glob_match("*Index2", "rIndex2"));
    assert!(!glob_match("*Index2", "rIndex2_end"));
    assert!(glob_match("r?ndex*", "rIndex1"));
    assert!(glob_match("*", ""));
    assert!(!glob_match("?", ""));
    assert!(glob_match("a*b*c", "aXXbYYbc"));
    assert!(!glob_match("a*b*c", "aXXbYYb"));
    assert!(!glob_match("finger", "Finger"), "case-sensitive");
    assert_eq!(
        parse_bone_override("*Finger*=0.001").unwrap(),
        over("*Finger*", Some(0.001), None)
    );
    assert_eq!(
        parse_bone_override("lHand=0.002,shell=1.5").unwrap(),
        over("lHand", Some(0.002), Some(1.5))
    );
    assert_eq!(
        parse_bone_override("eye*=shell=0.5").unwrap(),
        over("eye*", None, Some(0.5))
    );
    for bad in [
        "*Finger*",
        "=0.001",
        "x=",
        "x=-1",
        "x=0.001,shell=0",
        "x=0.001,foo=2",
        "x=nan",
    ] {
        assert!(parse_bone_override(bad).is_err(), "{bad}");
    }
}

/// The three sources: global < the clip file's per-track precision < the folder's `[[bone]]`
/// tables (later tables over earlier ones) < explicit overrides (command line, app).
#[test]
fn the_most_specific_source_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(root.join("a.acl.sjson"), TRACK_LIST).unwrap();
    let clip = &load_clips(&root.join("a.acl.sjson")).unwrap()[0];
    assert_eq!(
        clip.skeleton.precisions,
        [Some(0.01), Some(0.002), None, None]
    );
    // Global and file.
    let s = CompressionSettings {
        error_threshold: 0.05,
        ..Default::default()
    };
    let l = s.bone_limits(&clip.skeleton);
    assert_eq!(l.thresholds, [0.01, 0.002, 0.05, 0.05]);
    assert_eq!(l.shells, [3.0, 1.0, 3.0, 2.0]);
    // The folder's tables over the file's; the later table over the earlier one.
    std::fs::write(
        root.join("clipforge.toml"),
        "error_threshold = 0.05\n\
         [[bone]]\nmatch = \"*\"\nerror_threshold = 0.02\n\
         [[bone]]\nmatch = \"k*\"\nerror_threshold = 0.004\nshell_distance = 5\n\
         [[bone]]\nmatch = \"kid\"\nerror_threshold = 0.003\n",
    )
    .unwrap();
    let f = FolderSettings::load(&root.join("clipforge.toml")).unwrap();
    assert_eq!(f.bones.len(), 3);
    let fmt = clipforge::anim::formats::ClipFormat::AclSjson;
    let r = SettingsResolver::new(CompressionSettings::default(), Overrides::default());
    let res = r.resolve(root, &root.join("a.acl.sjson"), fmt).unwrap();
    assert!(res.warnings.is_empty());
    let l = res.compression.bone_limits(&clip.skeleton);
    assert_eq!(l.thresholds, [0.02, 0.003, 0.004, 0.02]);
    assert_eq!(l.shells, [3.0, 5.0, 5.0, 2.0]);
    // Explicit overrides over the folder's tables.
    let r = SettingsResolver::new(
        CompressionSettings::default(),
        Overrides {
            bones: vec![over("kid", Some(0.001), None)],
            ..Default::default()
        },
    );
    let res = r.resolve(root, &root.join("a.acl.sjson"), fmt).unwrap();
    let l = res.compression.bone_limits(&clip.skeleton);
    assert_eq!(l.thresholds, [0.02, 0.001, 0.004, 0.02]);
    assert!(res.settings_key().contains(";bone=\"kid\""));
    // The whole way through the binary: the report shows each bone's threshold beside its
    // error, every error within its own threshold.
    let run = |extra: &[&str]| -> BatchReport {
        let out = root.join("out");
        let report = root.join("r.json");
        let o = Command::new(BIN)
            .args(["compress", "--no-skip", "-o"])
            .arg(&out)
            .arg("--json")
            .arg(&report)
            .arg(root.join("a.acl.sjson"))
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap()
    };
    let check = |r: &BatchReport, want: [f32; 4]| {
        let c = &r.clips[0];
        assert!(c.error.is_none(), "{:?}", c.error);
        assert_eq!(c.per_bone_threshold_cm, want);
        for (b, (&e, &t)) in c.per_bone_max_error_cm.iter().zip(&want).enumerate() {
            assert!(e <= t as f64, "bone {b}: {e} > {t}");
        }
    };
    check(&run(&[]), [0.02, 0.003, 0.004, 0.02]);
    check(
        &run(&["--bone", "kid=0.001", "--bone", "k*=shell=4"]),
        [0.02, 0.001, 0.004, 0.02],
    );
    // Without the folder file: the file's precision, the global threshold elsewhere.
    std::fs::remove_file(root.join("clipforge.toml")).unwrap();
    check(
        &run(&["--error-threshold", "0.05"]),
        [0.01, 0.002, 0.05, 0.05],
    );
}

/// A qvvf track list (ACL's `write_track_list` form) with per-track precision on two tracks.
const TRACK_LIST: &str = r#"version = 5
track_list = { name = "perbone" num_samples = 6 sample_rate = 30 is_binary_exact = false }
settings = { }
tracks = [
	{ name = "root" type = "qvvf" precision = 0.01 parent_index = -1 shell_distance = 3.0
	  data = [
		[ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, 0.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.05, 0.0, 0.99875 ], [ 0.5, 0.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.1, 0.0, 0.995 ], [ 1.0, 0.1, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.15, 0.0, 0.98868 ], [ 1.5, 0.2, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.2, 0.0, 0.97980 ], [ 2.0, 0.1, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.25, 0.0, 0.96825 ], [ 2.5, 0.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
	  ] }
	{ name = "kid" type = "qvvf" precision = 0.002 parent_index = 0 shell_distance = 1.0
	  data = [
		[ [ 0.1, 0.0, 0.0, 0.99499 ], [ 0.0, 10.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.2, 0.0, 0.0, 0.97980 ], [ 0.0, 10.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.3, 0.0, 0.0, 0.95394 ], [ 0.0, 10.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.25, 0.0, 0.0, 0.96825 ], [ 0.0, 10.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.15, 0.0, 0.0, 0.98868 ], [ 0.0, 10.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.05, 0.0, 0.0, 0.99875 ], [ 0.0, 10.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
	  ] }
	{ name = "knee" type = "qvvf" parent_index = 1 shell_distance = 3.0
	  data = [
		[ [ 0.0, 0.0, 0.1, 0.99499 ], [ 0.0, 20.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.0, 0.2, 0.97980 ], [ 0.0, 20.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.0, 0.3, 0.95394 ], [ 0.0, 20.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.0, 0.2, 0.97980 ], [ 0.0, 20.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.0, 0.1, 0.99499 ], [ 0.0, 20.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, 20.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
	  ] }
	{ name = "tail" type = "qvvf" parent_index = 0 shell_distance = 2.0
	  data = [
		[ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, -5.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, -5.0, 1.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, -5.0, 2.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, -5.0, 3.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, -5.0, 2.0 ], [ 1.0, 1.0, 1.0 ] ]
		[ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, -5.0, 1.0 ], [ 1.0, 1.0, 1.0 ] ]
	  ] }
]
"#;

/// A per-bone shell distance from the clip file or a `[[bone]]` table / `--bone` beats the global
/// `--shell-distance` (the most specific source wins); the bones the file leaves at the default
/// (3 cm) take the global one. Through the library and the binary (the `.cfa` stores the shell
/// distance each bone was measured at).
#[test]
fn a_per_bone_shell_distance_beats_the_global_one() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(root.join("a.acl.sjson"), TRACK_LIST).unwrap();
    let clip = &load_clips(&root.join("a.acl.sjson")).unwrap()[0];
    assert_eq!(clip.skeleton.shell_distances, [3.0, 1.0, 3.0, 2.0]);
    let global = CompressionSettings {
        shell_distance: Some(7.0),
        ..Default::default()
    };
    assert_eq!(
        global.bone_limits(&clip.skeleton).shells,
        [7.0, 1.0, 7.0, 2.0]
    );
    let with_bone = CompressionSettings {
        bones: vec![over("kid", None, Some(0.5)), over("root", None, Some(4.0))],
        ..global.clone()
    };
    assert_eq!(
        with_bone.bone_limits(&clip.skeleton).shells,
        [4.0, 0.5, 7.0, 2.0]
    );
    let out = root.join("out");
    let o = Command::new(BIN)
        .args([
            "compress",
            "--no-skip",
            "-q",
            "--shell-distance",
            "7",
            "--bone",
        ])
        .arg("kid=shell=0.5")
        .arg("-o")
        .arg(&out)
        .arg(root.join("a.acl.sjson"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(out.join("a.cfa")).unwrap();
    let reader = ClipReader::new(&bytes).unwrap();
    assert_eq!(reader.skeleton().shell_distances, [7.0, 0.5, 7.0, 2.0]);
}

/// A decompressed clip keeps its per-bone settings: the clip file's own per-track `precision` is
/// stored in the `.cfa` (flags bit 5) and written back as each bone's `precision` by the ACL
/// writer, the shell distances each bone was measured at as its `vertex_distance`; the written
/// file reads back with both. Through the library and `clipforge decompress`.
#[test]
fn a_decompressed_clip_keeps_its_per_bone_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(root.join("a.acl.sjson"), TRACK_LIST).unwrap();
    let clip = &load_clips(&root.join("a.acl.sjson")).unwrap()[0];
    let want_precisions = [Some(0.01), Some(0.002), None, None];
    assert_eq!(clip.skeleton.precisions, want_precisions);
    let c = compress(clip, &CompressionSettings::default()).unwrap();
    let decoded = clipforge::anim::decompress::to_raw_clip(&ClipReader::new(&c.bytes).unwrap());
    assert_eq!(decoded.skeleton.precisions, want_precisions);
    assert_eq!(decoded.skeleton.shell_distances, [3.0, 1.0, 3.0, 2.0]);
    std::fs::write(root.join("b.acl.sjson"), write_acl_clip(&decoded)).unwrap();
    let back = &load_clips(&root.join("b.acl.sjson")).unwrap()[0];
    assert_eq!(back.skeleton.precisions, want_precisions);
    assert_eq!(back.skeleton.shell_distances, [3.0, 1.0, 3.0, 2.0]);
    // Recompressed, the round-tripped clip is held to the same per-bone thresholds.
    let again = compress(back, &CompressionSettings::default()).unwrap();
    assert_eq!(again.error.per_bone_threshold, [0.01, 0.002, 0.01, 0.01]);
    // The binary: compress, then decompress to ACL's format.
    std::fs::write(root.join("a.cfa"), &c.bytes).unwrap();
    let o = Command::new(BIN)
        .args(["decompress", "-o"])
        .arg(root.join("c.acl.sjson"))
        .arg(root.join("a.cfa"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c_clip = &load_clips(&root.join("c.acl.sjson")).unwrap()[0];
    assert_eq!(c_clip.skeleton.precisions, want_precisions);
    // A clip without per-bone precision has no such section (plain outputs unchanged).
    let mut plain = clip.clone();
    plain.skeleton.precisions = vec![None; 4];
    let p = compress(&plain, &CompressionSettings::default()).unwrap();
    let flags = u16::from_le_bytes([p.bytes[6], p.bytes[7]]);
    assert_eq!(
        flags & clipforge::anim::runtime::format::FLAG_BONE_PRECISIONS,
        0
    );
    // Its metadata is a float32 per bone shorter.
    assert_eq!(
        p.bytes.len() - p.runtime_bytes + 16,
        c.bytes.len() - c.runtime_bytes
    );
}

/// Real clips with finger bones: (path under the data folder, the finger bone's glob).
const FINGER_CLIPS: &[(&str, &str)] = &[
    ("acl-regression/09_02.acl.sjson", "rIndex2"),
    ("acl-regression/49_09.acl.sjson", "lMid1"),
    ("acl-regression/81_18_looping.acl.sjson", "rThumb2"),
    ("bvh/cmu-acrnn/salsa_05.bvh", "*Index2"),
    ("bvh/cmu-bvh11/131_01.bvh", "LFingers"),
    ("bvh/cmu-assimp/01_01.bvh", "RThumb"),
];

#[test]
fn a_finger_at_a_tenth_of_the_threshold_meets_its_own_on_real_clips() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let tools = data.join("../tools");
    let eval = tools.join("clip_eval.py").is_file() && common::python_with_numpy();
    if !eval {
        eprintln!("clip_eval.py check skipped: needs python3 with numpy");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, &(rel, glob)) in FINGER_CLIPS.iter().enumerate() {
        let clip = &load_clips(&data.join(rel)).unwrap()[0];
        let fingers: Vec<usize> = (0..clip.num_bones())
            .filter(|&b| glob_match(glob, &clip.skeleton.names[b]))
            .collect();
        assert!(!fingers.is_empty(), "{rel}: no bone matches {glob}");
        let base = compress(clip, &CompressionSettings::default()).unwrap();
        let settings = CompressionSettings {
            bones: vec![over(glob, Some(0.001), None)],
            ..Default::default()
        };
        let c = compress(clip, &settings).unwrap();
        let limit = |b: usize| if fingers.contains(&b) { 0.001 } else { 0.01 };
        // The compressor's own report: each bone's threshold beside its error.
        assert_eq!(c.error.per_bone_threshold.len(), clip.num_bones());
        for b in 0..clip.num_bones() {
            assert_eq!(c.error.per_bone_threshold[b], limit(b) as f32);
        }
        let shells = &clip.skeleton.shell_distances;
        let per_bone = common::per_bone_error(clip, &c.bytes, shells, &nine());
        for (b, &e) in per_bone.iter().enumerate() {
            if e > limit(b) {
                failures.push(format!(
                    "{rel}: bone '{}' {e:.6} cm > {}",
                    clip.skeleton.names[b],
                    limit(b)
                ));
            }
        }
        let finger_max = fingers.iter().map(|&b| per_bone[b]).fold(0.0, f64::max);
        let base_finger = common::per_bone_error(clip, &base.bytes, shells, &nine());
        let base_finger = fingers.iter().map(|&b| base_finger[b]).fold(0.0, f64::max);
        eprintln!(
            "{rel}: {} finger bone(s) '{glob}': {base_finger:.5} -> {finger_max:.5} cm; {} -> {} B",
            fingers.len(),
            base.runtime_bytes,
            c.runtime_bytes
        );
        if eval {
            let raw = dir.path().join(format!("raw{i}.acl.sjson"));
            let lossy = dir.path().join(format!("lossy{i}.acl.sjson"));
            let decoded =
                clipforge::anim::decompress::to_raw_clip(&ClipReader::new(&c.bytes).unwrap());
            std::fs::write(&raw, write_acl_clip(clip)).unwrap();
            std::fs::write(&lossy, write_acl_clip(&decoded)).unwrap();
            let per = common::clip_eval_per_bone(&tools, &raw, &lossy);
            for b in 0..clip.num_bones() {
                let e = per[&clip.skeleton.names[b]];
                if e > limit(b) {
                    failures.push(format!(
                        "{rel}: clip_eval: bone '{}' {e:.6} cm > {}",
                        clip.skeleton.names[b],
                        limit(b)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Overrides that change nothing (the global threshold, a glob matching no bone) keep the
/// bytes of no override at all; a looser leaf never grows the clip.
#[test]
fn overrides_equal_to_the_settings_keep_the_bytes() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    for rel in ["acl-regression/09_02.acl.sjson", "bvh/cmu-bvh11/131_02.bvh"] {
        let clip = &load_clips(&data.join(rel)).unwrap()[0];
        let base = compress(clip, &CompressionSettings::default()).unwrap();
        let same = compress(
            clip,
            &CompressionSettings {
                bones: vec![
                    over("*", Some(0.01), None),
                    over("no bone has this name", Some(0.0001), Some(9.0)),
                ],
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(base.bytes, same.bytes, "{rel}");
        assert!(same.error.per_bone_threshold.is_empty());
        let leaves: Vec<&String> = (0..clip.num_bones())
            .filter(|&b| !clip.skeleton.parents.contains(&(b as u32)))
            .map(|b| &clip.skeleton.names[b])
            .collect();
        let loose = compress(
            clip,
            &CompressionSettings {
                bones: leaves.iter().map(|n| over(n, Some(0.05), None)).collect(),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(
            loose.runtime_bytes <= base.runtime_bytes,
            "{rel}: {} > {}",
            loose.runtime_bytes,
            base.runtime_bytes
        );
        // What `compress` guarantees: the samples and the midpoints (`BETWEEN_ALPHAS`). At 9
        // points CMU 131_02's right thumb, whose rotation turns near half way round between two
        // samples, reaches 0.0502 cm at 0.05 (docs/BENCHMARKS.md, "Per-bone thresholds").
        let per_bone = common::per_bone_error(
            clip,
            &loose.bytes,
            &clip.skeleton.shell_distances,
            &clipforge::anim::compress::BETWEEN_ALPHAS,
        );
        for (b, &e) in per_bone.iter().enumerate() {
            let t = loose.error.per_bone_threshold[b] as f64;
            assert!(e <= t, "{rel}: bone {b}: {e} > {t}");
        }
    }
}

/// A per-bone shell distance is the one the bone is measured at (and stored in the `.cfa`).
#[test]
fn a_per_bone_shell_distance_is_measured_and_stored() {
    let clip = clipforge::anim::generate::generate(&Default::default());
    let settings = CompressionSettings {
        bones: vec![over("*hand", None, Some(12.0))],
        ..Default::default()
    };
    let c = compress(&clip, &settings).unwrap();
    let reader = ClipReader::new(&c.bytes).unwrap();
    let shells = &reader.skeleton().shell_distances;
    for (b, &shell) in shells.iter().enumerate() {
        let want = if clip.skeleton.names[b].ends_with("hand") {
            12.0
        } else {
            clip.skeleton.shell_distances[b]
        };
        assert_eq!(shell, want);
    }
    let per_bone = common::per_bone_error(&clip, &c.bytes, shells, &nine());
    assert!(per_bone.iter().all(|&e| e <= 0.01), "{per_bone:?}");
    // Bad override values are refused.
    for bad in [over("x", Some(0.0), None), over("x", None, Some(f32::NAN))] {
        let s = CompressionSettings {
            bones: vec![bad],
            ..Default::default()
        };
        assert!(compress(&clip, &s).is_err());
    }
}
