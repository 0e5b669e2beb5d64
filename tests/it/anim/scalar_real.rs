//! Scalar track lists on ACL's 8 regression lists (real data, `CLIPFORGE_DATA`): every output
//! track within its precision at and between samples by the independent `clip_eval.py`, the
//! `.acl.sjson` round trip, runtime sampling, and the size target against ACL.

use crate::common;

use clipforge::anim::Looping;
use clipforge::anim::formats::acl::{AclFile, read_acl_file, write_acl_scalar_list};
use clipforge::anim::runtime::scalar::ScalarReader;
use clipforge::anim::scalar::{RawScalarList, compress_scalar_list, to_raw_scalar_list};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The 8 scalar lists of acl-regression, with ACL's compressed size (acl-baseline.tsv).
const LISTS: [(&str, usize); 8] = [
    ("no_output_scalar_tracks", 67),
    ("track_list_float1f", 193),
    ("track_list_float2f", 503),
    ("track_list_float3f", 719),
    ("track_list_float3f_looping", 695),
    ("track_list_float4f", 935),
    ("track_list_remap_output", 935),
    ("track_list_vector4f", 935),
];

fn load(path: &Path) -> RawScalarList {
    let text = std::fs::read_to_string(path).unwrap();
    match read_acl_file(&text, path).unwrap() {
        AclFile::Scalars(l) => l,
        AclFile::Clip(_) => panic!("{} read as a transform clip", path.display()),
    }
}

fn files(data: &Path) -> Vec<(PathBuf, usize)> {
    LISTS
        .iter()
        .map(|(n, acl)| {
            (
                data.join("acl-regression").join(format!("{n}.acl.sjson")),
                *acl,
            )
        })
        .collect()
}

#[test]
fn lists_read_with_types_precisions_and_outputs() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    for (path, _) in files(&data) {
        let l = load(&path);
        assert_eq!(
            (l.num_samples, l.sample_rate),
            (26, 24.0),
            "{}",
            path.display()
        );
        assert!(l.tracks.iter().all(|t| t.precision == 0.0001));
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with("no_output") {
            assert_eq!(l.tracks.len(), 1);
            assert_eq!(l.tracks[0].output_index, None);
            assert!(l.output_order().is_empty());
        } else if name.contains("remap") {
            let outs: Vec<_> = l.tracks.iter().map(|t| t.output_index).collect();
            assert_eq!(outs, [Some(3), Some(0), Some(2), Some(1)]);
            assert_eq!(l.output_order(), [1, 3, 2, 0]);
        } else {
            assert_eq!(l.output_order(), [0, 1, 2, 3]);
        }
        let width = [
            ("float1f", 1),
            ("float2f", 2),
            ("float3f", 3),
            ("float4f", 4),
            ("vector4f", 4),
            ("remap", 4),
            ("no_output", 4),
        ]
        .iter()
        .find(|(k, _)| name.contains(k))
        .unwrap()
        .1;
        assert_eq!(l.width(), width, "{name}");
        assert!(l.tracks.iter().all(|t| t.values.len() == 26 * width));
    }
}

#[test]
fn compressed_lists_meet_precision_by_clip_eval_and_round_trip() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let tools = data.join("../tools");
    let eval = tools.join("clip_eval.py").is_file() && common::python_with_numpy();
    if !eval {
        eprintln!("clip_eval.py or numpy missing: the independent check is skipped");
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut ours, mut acl) = (0, 0);
    for (path, acl_bytes) in files(&data) {
        let raw = load(&path);
        let c = compress_scalar_list(&raw).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        eprintln!(
            "{name}: {} B (ACL {acl_bytes} B), max error {:.3e} (at samples {:.3e})",
            c.bytes.len(),
            c.error.max,
            c.error.max_at_samples
        );
        assert!(c.error.all_within_precision, "{name}: {:?}", c.error);
        ours += c.bytes.len();
        acl += acl_bytes;

        let reader = ScalarReader::new(&c.bytes).unwrap();
        let back = to_raw_scalar_list(&reader);
        assert_eq!(back.num_samples, raw.num_samples);
        assert_eq!(back.tracks.len(), raw.output_order().len());
        let text = write_acl_scalar_list(&back);
        let out = dir.path().join(&name);
        std::fs::write(&out, &text).unwrap();
        if back.tracks.is_empty() {
            // ACL's format has no type for a list without tracks: it reads back as an empty
            // (transform) track list.
            assert!(
                matches!(read_acl_file(&text, &out).unwrap(), AclFile::Clip(c) if c.num_bones() == 0)
            );
            continue;
        }
        // Re-import: the very values and names.
        assert_eq!(load(&out), back, "{name}: re-import differs");
        // Compressing the decompressed list again loses nothing more.
        let again = compress_scalar_list(&back).unwrap();
        assert!(again.error.all_within_precision);

        if eval {
            let res = Command::new("python3")
                .arg(tools.join("clip_eval.py"))
                .arg(&path)
                .arg(&out)
                .args(["--json", "--between", "4"])
                .output()
                .unwrap();
            assert!(
                res.status.success(),
                "{}",
                String::from_utf8_lossy(&res.stderr)
            );
            let v: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
            assert_eq!(v["kind"], "scalar_tracks");
            assert_eq!(v["all_within_precision"], true, "{name}: {v}");
            let tracks = v["tracks"].as_array().unwrap();
            assert_eq!(tracks.len(), back.tracks.len(), "{name}: {v}");
            for t in tracks {
                assert!(
                    t["max_error"].as_f64().unwrap() <= t["precision"].as_f64().unwrap(),
                    "{name}: {t}"
                );
            }
        }
    }
    eprintln!(
        "total: {ours} B, ACL {acl} B, ratio {:.3}",
        ours as f64 / acl as f64
    );
    assert_eq!(acl, 4982);
    assert!(
        ours * 10 <= acl * 9,
        "{ours} B is over 0.90 x ACL's {acl} B"
    );
}

#[test]
fn runtime_samples_tracks_at_and_between_samples() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    for (path, _) in files(&data) {
        let raw = load(&path);
        let c = compress_scalar_list(&raw).unwrap();
        let r = ScalarReader::new(&c.bytes).unwrap();
        let w = raw.width();
        let order = raw.output_order();
        let mut all = Vec::new();
        let mut one = [0f32; 4];
        let mut at = [0f32; 4];
        for s in 0..raw.num_samples {
            let t = s as f32 / raw.sample_rate;
            r.sample_all(t, Looping::Clamp, &mut all);
            assert_eq!(all.len(), order.len() * w);
            for (k, &ti) in order.iter().enumerate() {
                r.decode_sample(k, s, &mut at);
                r.sample_track(k, t, Looping::Clamp, &mut one);
                for c in 0..w {
                    assert!((one[c] - at[c]).abs() <= 1e-4 * at[c].abs().max(1.0));
                    assert_eq!(all[k * w + c], one[c]);
                    let e = (at[c] as f64 - raw.value(ti, s, c) as f64).abs();
                    assert!(e <= raw.tracks[ti].precision as f64, "{}", path.display());
                }
            }
        }
        // Past the end clamps to the last sample; a looping list's last sample is its first.
        for (k, &ti) in order.iter().enumerate() {
            r.sample_track(k, 100.0, Looping::Clamp, &mut one);
            for (c, &v) in one.iter().enumerate().take(w) {
                let last = raw.value(ti, raw.num_samples - 1, c) as f64;
                assert!((v as f64 - last).abs() <= raw.tracks[ti].precision as f64);
            }
        }
        if path.to_string_lossy().contains("looping") {
            assert!(r.is_wrapping() && r.num_stored_samples() == raw.num_samples - 1);
        } else if !order.is_empty() {
            assert!(!r.is_wrapping());
        }
    }
}

#[test]
fn batch_compresses_the_scalar_lists_to_cfs() {
    use clipforge::anim::CompressionSettings;
    use clipforge::pipeline::{BatchOptions, CancelToken, Progress, run_batch, scan};
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let names: Vec<String> = LISTS
        .iter()
        .map(|(n, _)| format!("{n}.acl.sjson"))
        .collect();
    let files: Vec<_> = scan(&data.join("acl-regression"))
        .into_iter()
        .filter(|f| names.iter().any(|n| f.path.ends_with(n)))
        .collect();
    assert_eq!(files.len(), 8);
    let out = tempfile::tempdir().unwrap();
    let opts = BatchOptions {
        settings: CompressionSettings::default(),
        output_root: out.path().to_path_buf(),
        jobs: 1,
        use_skip_cache: false,
    };
    let report = run_batch(&files, &opts, &Progress::default(), &CancelToken::default());
    assert_eq!(report.clips.len(), 8);
    let mut total = 0;
    for c in &report.clips {
        assert!(c.error.is_none(), "{c:?}");
        let output = c.output.as_deref().unwrap();
        assert!(output.ends_with(".cfs"), "{output}");
        let bytes = std::fs::read(output).unwrap();
        assert_eq!(bytes.len() as u64, c.file_bytes);
        let r = ScalarReader::new(&bytes).unwrap();
        assert_eq!(r.num_samples(), c.samples);
        // Errors in the tracks' own units, beside each track's precision; none in `*_cm`.
        assert_eq!(c.max_error_cm, 0.0, "{c:?}");
        assert!(c.per_bone_max_error_cm.is_empty(), "{c:?}");
        let s = c.scalar.as_ref().expect("a scalar row has scalar errors");
        assert_eq!(s.per_track_max_error.len(), c.bones, "{c:?}");
        assert_eq!(s.per_track_precision.len(), c.bones, "{c:?}");
        for (e, p) in s.per_track_max_error.iter().zip(&s.per_track_precision) {
            assert!(*e <= *p as f64, "{}: {e} over {p}", c.input);
        }
        assert!(s.worst_error_over_precision <= 1.0, "{s:?}");
        total += bytes.len();
    }
    assert!(total <= 4484, "{total} B");
    let worst = report
        .clips
        .iter()
        .map(|c| c.scalar.as_ref().unwrap().worst_error_over_precision)
        .fold(0.0, f64::max);
    assert!(worst > 0.0);
    assert_eq!(report.totals.worst_scalar_error_over_precision, worst);
    assert_eq!(report.totals.max_error_cm, 0.0);
}

/// A batch of a scalar list and a transform clip keeps their errors apart: the totals' cm figure
/// is the clip's, the list's worst share of its precision has its own total, and the CSV and the
/// CLI's summary say which is which.
#[test]
fn a_mixed_batch_never_mixes_track_units_into_centimetres() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    for n in ["track_list_float3f.acl.sjson", "121_10.acl.sjson"] {
        std::fs::copy(data.join("acl-regression").join(n), input.join(n)).unwrap();
    }
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    // `clipforge compress` of the folder into `out`, the JSON report (and the CSV one).
    let compress = |csv: Option<&Path>| {
        let mut c = common::clipforge();
        c.arg("compress")
            .arg(&input)
            .arg("-o")
            .arg(dir.path().join("out"))
            .arg("--json")
            .arg(&json);
        if let Some(csv) = csv {
            c.arg("--csv").arg(csv);
        }
        c.output().unwrap()
    };
    let res = compress(Some(&csv));
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(res.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let clips = v["clips"].as_array().unwrap();
    let row = |suffix: &str| {
        clips
            .iter()
            .find(|c| c["input"].as_str().unwrap().ends_with(suffix))
            .unwrap()
    };
    let (list, clip) = (row("track_list_float3f.acl.sjson"), row("121_10.acl.sjson"));
    assert_eq!(list["max_error_cm"], 0.0, "{list}");
    assert!(clip.get("scalar").is_none(), "{clip}");
    let ratio = list["scalar"]["worst_error_over_precision"]
        .as_f64()
        .unwrap();
    assert!(ratio > 0.0 && ratio <= 1.0, "{list}");
    assert_eq!(v["totals"]["max_error_cm"], clip["max_error_cm"]);
    assert_eq!(v["totals"]["worst_scalar_error_over_precision"], ratio);
    // CSV: the scalar columns are filled on the list's line only.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header = rd.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for rec in rd.records() {
        let rec = rec.unwrap();
        let is_list = rec[col("input")].ends_with("track_list_float3f.acl.sjson");
        assert_eq!(
            rec[col("scalar_worst_error_over_precision")].is_empty(),
            !is_list,
            "{rec:?}"
        );
        if is_list {
            assert_eq!(&rec[col("max_error_cm")], "0.000000", "{rec:?}");
        }
    }
    // The summary gives the clip's error in cm and the list's as a share of its precision.
    assert!(stderr.contains("× a track's precision"), "{stderr}");
    assert!(stderr.contains("× its track's precision"), "{stderr}");

    // A skip cache written before scalar rows had their own errors (the list's row without
    // `scalar`, its track units in `max_error_cm`) is not reused for the list: it is compressed
    // again and reported right, while the clip stays up to date.
    let cache_path = dir.path().join("out").join(".clipforge-cache.json");
    let mut cache: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&cache_path).unwrap()).unwrap();
    let mut stripped = 0;
    for entry in cache["entries"].as_object_mut().unwrap().values_mut() {
        for r in entry["reports"].as_array_mut().unwrap() {
            if let Some(s) = r.as_object_mut().unwrap().remove("scalar") {
                r["max_error_cm"] = s["max_error"].clone();
                stripped += 1;
            }
        }
    }
    assert_eq!(stripped, 1, "{cache}");
    std::fs::write(&cache_path, serde_json::to_vec(&cache).unwrap()).unwrap();
    let res = compress(None);
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for c in v["clips"].as_array().unwrap() {
        let is_list = c["input"]
            .as_str()
            .unwrap()
            .ends_with("track_list_float3f.acl.sjson");
        assert_eq!(c["skipped"], !is_list, "{c}");
        assert_eq!(c.get("scalar").is_some(), is_list, "{c}");
    }
}
