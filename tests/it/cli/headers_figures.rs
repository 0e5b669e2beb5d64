//! `clipforge headers`' figures of time: a cheap header's seconds and a small PCH's load are
//! not printed as zero ("0.000", "0.000 s loading it", ux32's tour). The costs come from
//! hand-written clang time traces (no compiler needed), so the figures are known.

use crate::common;
use crate::common::headers_scan::write;
use serde_json::Value;
use std::path::Path;

/// t0..t3.cpp include `big.h` (3 ms a TU) and `tiny.h` (40 µs a TU: 0.16 ms over the build).
fn tree_and_traces(root: &Path, traces: &Path) {
    write(root, "inc/big.h", "#pragma once\nint big;\n");
    write(root, "inc/tiny.h", "#pragma once\nint tiny;\n");
    let inc = root.join("inc").canonicalize().unwrap();
    for i in 0..4 {
        write(
            root,
            &format!("t{i}.cpp"),
            "#include \"big.h\"\n#include \"tiny.h\"\nint t;\n",
        );
        let src = |ts: u64, dur: u64, f: &str| {
            serde_json::json!({"ph": "X", "ts": ts, "dur": dur, "name": "Source",
                "args": {"detail": inc.join(f)}})
        };
        let t = serde_json::json!({"traceEvents": [
            {"ph": "X", "ts": 0, "dur": 20_000, "name": "Frontend"},
            src(10, 3_000, "big.h"),
            src(5_000, 40, "tiny.h"),
        ]});
        std::fs::write(traces.join(format!("t{i}.json")), t.to_string()).unwrap();
    }
}

#[test]
fn a_cheap_headers_seconds_and_a_small_pchs_load_are_not_printed_as_zero() {
    let d = tempfile::tempdir().unwrap();
    let traces = tempfile::tempdir().unwrap();
    tree_and_traces(d.path(), traces.path());
    let json = traces.path().join("r.json");
    let o = common::clipforge()
        .arg("headers")
        .arg(d.path())
        .args([
            "-I",
            "inc",
            "--compiler",
            "none",
            "--no-cache",
            "--pch",
            "2",
        ])
        .arg("--time-trace")
        .arg(traces.path())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let tiny = v["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == "inc/tiny.h")
        .unwrap_or_else(|| panic!("no tiny.h in {v}"));
    let secs = tiny["seconds_contributed"].as_f64().unwrap();
    assert!(
        secs > 0.0 && secs < 0.0005,
        "{secs}: not a figure 0.000 would hide"
    );
    // The "Headers by seconds" row: "< 0.001", and its ms per TU as it is.
    let by_seconds = text
        .split_once("Headers by seconds")
        .unwrap_or_else(|| panic!("no seconds table: {text}"))
        .1;
    let row = by_seconds
        .lines()
        .find(|l| l.ends_with("  inc/tiny.h"))
        .unwrap_or_else(|| panic!("no seconds row for tiny.h: {text}"));
    assert!(row.trim_start().starts_with("< 0.001      0.040"), "{row}");
    // The PCH's formula in ms below 0.1 s, none of its terms "0.000 s".
    let formula = text
        .lines()
        .find(|l| l.starts_with("predicted per clean build: "))
        .unwrap_or_else(|| panic!("no PCH formula: {text}"));
    assert!(!formula.contains("0.000"), "{formula}");
    // 4 TUs × 3.04 ms of headers.
    assert!(formula.contains(": 12.2 ms saved - "), "{formula}");
    let load = v["pch"]["load_s"].as_f64().unwrap();
    assert!(load > 0.0, "{}", v["pch"]);
    assert!(
        formula.contains(&format!(
            " - {} loading it - ",
            clipforge::pipeline::report::format_seconds(load)
        )),
        "{formula}"
    );
    // No column of the output prints a figure that is not zero as 0.000.
    for l in text.lines().filter(|l| l.contains("inc/tiny.h")) {
        assert!(!l.contains("0.000"), "{l}");
    }
}
