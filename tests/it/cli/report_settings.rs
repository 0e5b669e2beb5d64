//! The JSON report's top-level `settings` says the run's settings: the command line's
//! threshold, shell distance and per-bone overrides over the built-in defaults (it used to hold
//! the defaults alone, so `--error-threshold 0.05` read as 0.01); where no option is given, the
//! default, while a folder file's own threshold shows in the rows it applied to.

use crate::common;

use std::path::Path;

fn compress(input: &Path, dir: &Path, extra: &[&str]) -> serde_json::Value {
    let json = dir.join("r.json");
    common::run_ok(
        common::clipforge()
            .arg("compress")
            .arg(input)
            .arg("-o")
            .arg(dir.join("out"))
            .args(["--no-skip", "--jobs", "1", "-q", "--json"])
            .arg(&json)
            .args(extra),
    );
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

/// A real clip of the repository's own assets, alone in a fresh folder.
fn one_clip() -> tempfile::TempDir {
    crate::common::batch_dirs::in_out_with(&[&crate::common::batch_dirs::bundled_jog()]).0
}

#[test]
fn the_reports_settings_are_the_command_lines() {
    let dir = one_clip();
    let v = compress(
        &dir.path().join("in"),
        dir.path(),
        &[
            "--error-threshold",
            "0.05",
            "--shell-distance",
            "5",
            "--bone",
            "*Hand*=0.02",
        ],
    );
    let s = &v["settings"];
    assert_eq!(s["error_threshold"].as_f64(), Some(0.05), "{s}");
    assert_eq!(s["shell_distance"].as_f64(), Some(5.0), "{s}");
    assert_eq!(s["bones"][0]["pattern"], "*Hand*", "{s}");
    assert_eq!(s["bones"][0]["error_threshold"].as_f64(), Some(0.02), "{s}");
    // The row says the same threshold.
    assert_eq!(
        v["clips"][0]["settings"]["error_threshold_cm"].as_f64(),
        Some(0.05)
    );
}

#[test]
fn without_options_the_reports_settings_are_the_defaults_and_rows_say_their_folders() {
    let dir = one_clip();
    let input = dir.path().join("in");
    std::fs::write(input.join("clipforge.toml"), "error_threshold = 0.2\n").unwrap();
    let v = compress(&input, dir.path(), &[]);
    assert_eq!(v["settings"]["error_threshold"].as_f64(), Some(0.01));
    assert!(v["settings"]["shell_distance"].is_null());
    let row = &v["clips"][0]["settings"];
    assert_eq!(row["error_threshold_cm"].as_f64(), Some(0.2), "{row}");
    assert_eq!(row["threshold_source"], "folder", "{row}");
}
