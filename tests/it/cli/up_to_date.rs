//! What `compress` does and says when there is nothing to do (issue 24, "some screens say things
//! that are not so"), through the real binary: a scalar track list reads no setting, so a new
//! threshold leaves it up to date (it was recompressed to the same bytes, its row "stale"), while
//! a clip beside it is recompressed; a run with everything up to date says "nothing compressed"
//! and why, not "0 B/s".

use crate::common::batch_dirs::scalar_list_and_clip;
use crate::common::{clipforge, run_ok};
use clipforge::pipeline::report::{BatchReport, ClipStatus};
use std::path::Path;

/// `compress IN -o OUT --json R --error-threshold T`: the report and what it said on stderr.
fn compress(input: &Path, out: &Path, report: &Path, threshold: &str) -> (BatchReport, String) {
    let o = run_ok(clipforge().args([
        "compress".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "--json".as_ref(),
        report.as_os_str(),
        "--error-threshold".as_ref(),
        threshold.as_ref(),
    ]));
    let r: BatchReport = serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap();
    (r, String::from_utf8_lossy(&o.stderr).into_owned())
}

fn status_of(r: &BatchReport, input: &str) -> ClipStatus {
    r.clips
        .iter()
        .find(|c| c.input.ends_with(input))
        .unwrap_or_else(|| panic!("no row {input}"))
        .status()
}

#[test]
fn a_scalar_track_list_stays_up_to_date_when_the_threshold_changes() {
    let (_dir, input, out, report) = scalar_list_and_clip();

    let (first, _) = compress(&input, &out, &report, "0.01");
    assert_eq!(
        status_of(&first, "weights.acl.sjson"),
        ClipStatus::Compressed
    );
    assert_eq!(status_of(&first, "walk.acl.sjson"), ClipStatus::Compressed);
    let cfs = out.join("weights.cfs");
    let made = std::fs::metadata(&cfs).unwrap().modified().unwrap();
    let bytes = std::fs::read(&cfs).unwrap();

    // A looser threshold: the clip is compressed again, the list (which never reads it) is not.
    let (second, err) = compress(&input, &out, &report, "0.1");
    assert_eq!(
        status_of(&second, "weights.acl.sjson"),
        ClipStatus::Skipped,
        "{err}"
    );
    assert_eq!(status_of(&second, "walk.acl.sjson"), ClipStatus::Compressed);
    assert!(err.contains("2 clips: 1 compressed, 1 up to date"), "{err}");
    assert_eq!(std::fs::metadata(&cfs).unwrap().modified().unwrap(), made);
    assert_eq!(std::fs::read(&cfs).unwrap(), bytes);
    // The cache keys the list on no threshold at all, the clip on its own.
    let cache = std::fs::read_to_string(out.join(".clipforge-cache.json")).unwrap();
    let cache: serde_json::Value = serde_json::from_str(&cache).unwrap();
    let key = |name: &str| {
        cache["entries"][name]["settings_key"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(!key("weights.acl.sjson").contains("threshold"), "{cache}");
    assert!(key("walk.acl.sjson").starts_with("error_threshold=0.1;"));

    // Another change of the settings the list does not read (a shell distance): still up to date.
    let o = run_ok(clipforge().args([
        "compress".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "--json".as_ref(),
        report.as_os_str(),
        "--shell-distance".as_ref(),
        "5".as_ref(),
    ]));
    let third: BatchReport = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(
        status_of(&third, "weights.acl.sjson"),
        ClipStatus::Skipped,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A changed list is compressed again.
    std::fs::write(
        input.join("weights.acl.sjson"),
        std::fs::read_to_string(input.join("weights.acl.sjson"))
            .unwrap()
            .replacen("0.0005", "0.001", 1),
    )
    .unwrap();
    let (fourth, err) = compress(&input, &out, &report, "0.1");
    assert_eq!(
        status_of(&fourth, "weights.acl.sjson"),
        ClipStatus::Compressed,
        "{err}"
    );
}

#[test]
fn a_run_with_everything_up_to_date_says_nothing_was_compressed() {
    let (_dir, input, out, report) = scalar_list_and_clip();
    let (_, err) = compress(&input, &out, &report, "0.01");
    let wall = |err: &str| {
        err.lines()
            .find(|l| l.starts_with("wall "))
            .unwrap_or_else(|| panic!("no wall-time line: {err}"))
            .to_string()
    };
    assert!(wall(&err).contains("B/s; compress time p50"), "{err}");

    let (again, err) = compress(&input, &out, &report, "0.01");
    assert_eq!(again.totals.skipped, 2);
    let line = wall(&err);
    assert!(
        line.ends_with("; nothing compressed: 2 up to date"),
        "{line}"
    );
    assert!(!line.contains("B/s") && !line.contains("p50"), "{line}");
    assert!(
        err.contains("2 clips: 0 compressed, 2 up to date, 0 failed"),
        "{err}"
    );
    // Each up-to-date line says so instead of a time: it printed the earlier run's compression
    // time, as if this run had spent it.
    let rows: Vec<&str> = err.lines().filter(|l| l.contains(" up to date ")).collect();
    assert_eq!(rows.len(), 2, "{err}");
    for l in rows {
        assert!(l.ends_with(", unchanged since the last run"), "{l}");
        assert!(!l.ends_with(" ms"), "{l}");
    }
}
