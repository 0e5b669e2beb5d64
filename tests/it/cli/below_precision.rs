//! `compress` on the real Fox at 0.001 cm, below float32 precision for its Run clip: the
//! refusal is its own status (JSON `status` + `below_precision` with the floor, CSV `status` +
//! `precision_floor_cm`), counted apart from failures in the summary, named with its floor, and
//! exit code 3; a broken file beside it still makes it exit 1 (`docs/CLI.md`).

use crate::common;
use crate::common::batch_dirs::{in_out_with, real_fox};

use clipforge::pipeline::report::BatchReport;
use std::path::Path;
use std::process::Output;

fn compress(input: &Path, dir: &Path, extra: &[&str]) -> Output {
    common::clipforge()
        .arg("compress")
        .arg(input)
        .arg("-o")
        .arg(dir.join("out"))
        .args(["--no-skip", "--jobs", "1", "--error-threshold", "0.001"])
        .arg("--json")
        .arg(dir.join("r.json"))
        .arg("--csv")
        .arg(dir.join("r.csv"))
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn the_fox_below_float32_precision_is_a_refusal_with_its_floor_not_a_failure() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let fox = real_fox(&data);
    let dir = tempfile::tempdir().unwrap();
    let o = compress(&fox, dir.path(), &[]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(3), "{err}");

    let json = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let run = &v["clips"][2];
    assert_eq!(run["clip"], "Run");
    assert_eq!(run["status"], "below_precision");
    let floor = run["below_precision"]["floor_cm"].as_f64().unwrap();
    assert!(floor > 0.001 && floor < 0.002, "floor {floor}");
    assert_eq!(run["below_precision"]["bone"], "b_RightHand_08");
    // A float32 written as the shortest text that reads back as it.
    assert_eq!(run["below_precision"]["threshold_cm"].as_f64(), Some(0.001));
    assert!(run["output"].is_null());
    for c in &v["clips"].as_array().unwrap()[..2] {
        assert_eq!(c["status"], "compressed", "{c}");
        assert!(c.get("below_precision").is_none());
    }
    assert_eq!(v["totals"]["failed"], 0);
    assert_eq!(v["totals"]["below_precision"], 1);
    // The report still reads back as a report.
    let back: BatchReport = serde_json::from_str(&json).unwrap();
    assert_eq!(
        back.clips[2].below_precision.as_ref().unwrap().floor_cm,
        floor
    );

    let csv = std::fs::read_to_string(dir.path().join("r.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .ends_with(",status,precision_floor_cm")
    );
    let rows: Vec<&str> = lines.collect();
    assert!(rows[0].ends_with(",compressed,"), "{}", rows[0]);
    assert!(
        rows[2].ends_with(&format!(",below_precision,{floor:.6}")),
        "{}",
        rows[2]
    );

    // The summary counts it apart and names the floor and what to raise the threshold to.
    assert!(
        err.contains(
            "3 clips: 2 compressed, 0 up to date, 0 failed, 1 below float32 precision (1 file)"
        ),
        "{err}"
    );
    assert!(
        err.contains("1 clip below float32 precision (floor 0.00107 cm): raise the threshold to at least 0.0011"),
        "{err}"
    );
    assert!(err.contains("REFUSED "), "{err}");
    // The REFUSED line writes the floor as the summary (and the app) do: it said "0.001070 cm"
    // where the summary said 0.00107, and "use a larger threshold" without saying how large.
    let refused = err.lines().find(|l| l.contains("REFUSED ")).unwrap();
    assert!(
        refused.contains("still reaches 0.00107 cm (bone 'b_RightHand_08')")
            && refused.ends_with("raise the threshold to at least 0.00111 cm"),
        "{refused}"
    );
    assert!(!err.contains("0.001070"), "{err}");
    assert_eq!(
        run["error"]
            .as_str()
            .map(|e| e.contains("reaches 0.00107 cm")),
        Some(true),
        "{run}"
    );
    assert!(
        !err.contains("FAILED") && !err.contains("failures:"),
        "{err}"
    );
    // Only the compressed clips were written.
    assert!(dir.path().join("out/Fox.0_Survey.cfa").is_file());
    assert!(!dir.path().join("out/Fox.2_Run.cfa").exists());

    // What the summary says to raise the threshold to is enough.
    let at_least = err
        .split("raise the threshold to at least ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .to_string();
    let raised = common::clipforge()
        .arg("compress")
        .arg(&fox)
        .arg("-o")
        .arg(dir.path().join("raised"))
        .args([
            "--no-skip",
            "--jobs",
            "1",
            "-q",
            "--error-threshold",
            &at_least,
        ])
        .output()
        .unwrap();
    assert_eq!(
        raised.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&raised.stderr)
    );
}

#[test]
fn a_failure_beside_a_refusal_still_exits_1() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (dir, input, _) = in_out_with(&[&real_fox(&data)]);
    std::fs::write(input.join("broken.bvh"), "HIERARCHY\nROOT").unwrap();
    let o = compress(&input, dir.path(), &["-q"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "4 clips: 2 compressed, 0 up to date, 1 failed, 1 below float32 precision (2 files)"
        ),
        "{err}"
    );
    // Under -q both are still said, each as what it is.
    assert!(err.contains("FAILED ") && err.contains("REFUSED "), "{err}");
    let failures = err.split("failures:").nth(1).unwrap();
    assert!(failures.contains("broken.bvh"), "{err}");
    assert!(
        !failures.lines().take(2).any(|l| l.contains("Fox.glb")),
        "{err}"
    );
}

/// The skip cache remembers a refusal with the settings it was refused under: a second run of
/// the unchanged Fox at 0.001 cm compresses nothing (Survey and Walk up to date, Run not
/// searched again) and still says the refusal with its floor, exit code 3; a raised threshold
/// compresses all three. The first run's `compress_ms` total counts the refused clip's search.
#[test]
fn a_refusal_is_remembered_by_the_skip_cache_and_still_said() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (dir, input, _) = in_out_with(&[&real_fox(&data)]);
    let run = |threshold: &str| {
        let o = common::clipforge()
            .arg("compress")
            .arg(&input)
            .arg("-o")
            .arg(dir.path().join("out"))
            .args(["--jobs", "1", "--error-threshold", threshold, "--json"])
            .arg(dir.path().join("r.json"))
            .output()
            .unwrap();
        let json = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        (o, v)
    };

    let (first, v) = run("0.001");
    assert_eq!(first.status.code(), Some(3));
    // Every clip's search counts, the refused one's too.
    let rows = v["clips"].as_array().unwrap();
    let run_ms = rows[2]["compress_ms"].as_f64().unwrap();
    assert!(run_ms > 0.0);
    let sum: f64 = rows
        .iter()
        .map(|r| r["compress_ms"].as_f64().unwrap())
        .sum();
    let total = v["totals"]["compress_ms"].as_f64().unwrap();
    assert!(
        (total - sum).abs() < 1e-6 * sum.max(1.0),
        "{total} vs {sum}"
    );

    let (second, v) = run("0.001");
    let err = String::from_utf8_lossy(&second.stderr).into_owned();
    assert_eq!(second.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "3 clips: 0 compressed, 2 up to date, 0 failed, 1 below float32 precision (1 file)"
        ),
        "{err}"
    );
    assert!(
        err.contains("REFUSED ") && err.contains("unchanged since the last run"),
        "{err}"
    );
    assert!(
        err.contains("1 clip below float32 precision (floor 0.00107 cm): raise the threshold to at least 0.0011"),
        "{err}"
    );
    let run_row = &v["clips"][2];
    assert_eq!(run_row["clip"], "Run");
    assert_eq!(run_row["status"], "below_precision", "{run_row}");
    assert_eq!(run_row["skipped"], true);
    assert_eq!(run_row["below_precision"]["bone"], "b_RightHand_08");
    for c in &v["clips"].as_array().unwrap()[..2] {
        assert_eq!(c["status"], "skipped", "{c}");
    }
    let t = &v["totals"];
    assert_eq!(
        (
            &t["clips"],
            &t["skipped"],
            &t["below_precision"],
            &t["failed"]
        ),
        (&3.into(), &2.into(), &1.into(), &0.into())
    );
    // Nothing was compressed or searched again.
    assert_eq!(t["compress_ms"].as_f64(), Some(0.0));
    assert!(!dir.path().join("out/Fox.2_Run.cfa").exists());

    // A raised threshold is other settings: everything is compressed again, Run included.
    let (raised, v) = run("0.002");
    assert_eq!(
        raised.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&raised.stderr)
    );
    for c in v["clips"].as_array().unwrap() {
        assert_eq!(c["status"], "compressed", "{c}");
    }
    assert!(dir.path().join("out/Fox.2_Run.cfa").is_file());
}
