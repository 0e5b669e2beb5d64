//! `clipforge lab` end to end: the JSON of issue 16 (one object per clip with a `codecs` array
//! and every field), the exported reconstructions, deterministic figures without timings, and a
//! bad file reported by name while the batch goes on.

use crate::common;
use clipforge::anim::generate::{GenerateOptions, generate};

fn lab(args: &[&std::ffi::OsStr]) -> std::process::Output {
    common::clipforge().arg("lab").args(args).output().unwrap()
}

#[test]
fn lab_writes_the_issue_json_and_exports_and_goes_on_past_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let clips = dir.path().join("clips");
    std::fs::create_dir(&clips).unwrap();
    for seed in [1, 2] {
        let clip = generate(&GenerateOptions {
            name: format!("walk{seed}"),
            num_samples: 45,
            seed,
            ..Default::default()
        });
        let text = clipforge::anim::formats::write_acl_clip(&clip);
        std::fs::write(clips.join(format!("walk{seed}.acl.sjson")), text).unwrap();
    }
    std::fs::write(clips.join("broken.acl.sjson"), "{ not a clip").unwrap();
    let out = dir.path().join("lossy");
    let json = |name: &str| dir.path().join(name);
    let run = |json_name: &str| {
        lab(&[
            clips.as_os_str(),
            "--json".as_ref(),
            json(json_name).as_os_str(),
            "--export-lossy".as_ref(),
            out.as_os_str(),
            "--no-timings".as_ref(),
        ])
    };
    let first = run("a.json");
    assert_eq!(first.status.code(), Some(1), "a bad file fails the run");
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(stderr.contains("broken.acl.sjson"), "{stderr}");
    // One failure in the singular (it said "1 file(s) or clip(s) failed").
    assert!(
        stderr.contains("clipforge lab: 1 file or clip failed"),
        "{stderr}"
    );

    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(json("a.json")).unwrap()).unwrap();
    let clips_json = doc["clips"].as_array().unwrap();
    assert_eq!(clips_json.len(), 2, "both good clips measured");
    assert_eq!(doc["errors"].as_array().unwrap().len(), 1);
    for c in clips_json {
        let codecs = c["codecs"].as_array().unwrap();
        let names: Vec<&str> = codecs
            .iter()
            .map(|x| x["codec"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["uniform", "key_reduction", "sorted_stream"]);
        for x in codecs {
            assert!(x["bytes"].as_u64().unwrap() > 0);
            assert!(x["max_error_cm"].as_f64().unwrap() <= 0.01);
            assert!(x["bytes_touched_per_pose"].as_f64().unwrap() > 0.0);
            assert!(x["cache_lines_per_pose"].as_f64().unwrap() >= 1.0);
            assert!(x["context_bytes"].is_u64());
            for k in ["forward_30hz", "forward_60hz", "backward", "random"] {
                assert!(x["decode_ns"][k].is_f64(), "{k}");
            }
            let codec = x["codec"].as_str().unwrap();
            let clip = c["clip"].as_str().unwrap();
            let f = out.join(format!("{clip}.{codec}.acl.sjson"));
            let back = clipforge::anim::formats::load_clips(&f).unwrap();
            assert_eq!(back[0].num_samples, 45);
        }
        let sorted = &codecs[2];
        assert!(sorted["context_bytes"].as_u64().unwrap() > 0);
    }

    // Everything but the timings is deterministic.
    run("b.json");
    assert_eq!(
        std::fs::read(json("a.json")).unwrap(),
        std::fs::read(json("b.json")).unwrap()
    );
}
