//! The CLI's wording as users read it (issue 12, "Wording"), checked through the real binary:
//! `path:line: message` errors, "empty file", plurals, "11.9×" ratios, thousands separators in
//! `headers`, and what `inspect` says about a file that is not a `.cfa`.

use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::pipeline::report::BatchReport;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::BIN;

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json_errors(path: &Path) -> Vec<String> {
    let report: BatchReport = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    report.clips.into_iter().filter_map(|c| c.error).collect()
}

fn valid_acl() -> String {
    write_acl_clip(&generate(&GenerateOptions::default()))
}

#[test]
fn errors_name_the_file_and_line_like_a_compiler() {
    let dir = tempfile::tempdir().unwrap();
    // Line 6 closes the hierarchy and the MOTION section never comes.
    std::fs::write(
        dir.path().join("bad.bvh"),
        "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n}\n",
    )
    .unwrap();
    // A syntax error on line 3 of an ACL clip.
    std::fs::write(
        dir.path().join("bad.acl.sjson"),
        "version = 5\nclip = {\n  name ] \"x\"\n}\n",
    )
    .unwrap();
    let o = run(
        dir.path(),
        &[
            "compress",
            "bad.bvh",
            "bad.acl.sjson",
            "-o",
            "out",
            "--json",
            "r.json",
        ],
    );
    let err = stderr(&o);
    assert!(err.contains("FAILED bad.bvh:6: "), "{err}");
    assert!(err.contains("FAILED bad.acl.sjson:3: "), "{err}");
    let errors = json_errors(&dir.path().join("r.json"));
    assert!(
        errors.iter().any(|e| e.starts_with("bad.bvh:6: ")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.starts_with("bad.acl.sjson:3: ")),
        "{errors:?}"
    );
    // No bare line number after a colon ("failed: 6: …").
    for line in err.lines() {
        let bare = line
            .split(": ")
            .skip(1)
            .any(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()));
        assert!(!bare, "bare line number in {line:?}");
    }
}

#[test]
fn an_empty_file_is_called_empty_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "e.acl.sjson",
        "e.bvh",
        "e.gltf",
        "e.glb",
        "e.fbx",
        "w.acl.sjson",
    ];
    for n in names {
        let body = if n.starts_with('w') { " \n\t\n" } else { "" };
        std::fs::write(dir.path().join(n), body).unwrap();
    }
    let mut args = vec!["compress"];
    args.extend(names);
    args.extend(["-o", "out", "--json", "r.json"]);
    let o = run(dir.path(), &args);
    assert!(!o.status.success());
    let err = stderr(&o);
    for n in names {
        assert!(
            err.contains(&format!("FAILED {n}: empty file")),
            "{n}: {err}"
        );
    }
    assert!(!err.contains("version = N"), "{err}");
    let errors = json_errors(&dir.path().join("r.json"));
    assert_eq!(errors.len(), names.len(), "{errors:?}");
    assert!(
        errors.iter().all(|e| e.contains(": empty file")),
        "{errors:?}"
    );
}

/// A folder given that does not exist: the failure names it as a folder, and the advice is
/// about the path (where a relative one was looked for), not the pipeline's "The file could not
/// be read…" for a file that is there but unreadable (ux32's tour).
#[test]
fn a_missing_folder_is_named_a_folder_with_advice_for_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(dir.path(), &["compress", "takes", "-o", "out"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("FAILED takes: does not exist (no such folder)"),
        "{err}"
    );
    assert!(!err.contains("The file could not be read"), "{err}");
    let here = dir.path().canonicalize().unwrap();
    assert!(
        err.contains(&format!(
            "Nothing is at that path: check its spelling (a relative path starts from {})",
            here.display()
        )),
        "{err}"
    );
    // A clip file's name that does not exist is a file; a file that is there but does not
    // read still gets the pipeline's advice.
    std::fs::write(dir.path().join("broken.bvh"), "HIERARCHY\nROOT a\n{\n").unwrap();
    let o = run(
        dir.path(),
        &["compress", "walk.bvh", "takes", "broken.bvh", "-o", "out"],
    );
    let err = stderr(&o);
    assert!(
        err.contains("walk.bvh: does not exist (no such file)"),
        "{err}"
    );
    assert_eq!(err.matches("Nothing is at that path").count(), 1, "{err}");
    assert!(err.contains("2 paths do not exist"), "{err}");
}

#[test]
fn a_missing_path_is_said_missing_and_counts_read_right() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(dir.path(), &["compress", "no/such/dir", "-o", "out"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("no/such/dir: does not exist"), "{err}");
    assert!(err.contains("1 path does not exist"), "{err}");
    assert!(!err.contains("1 clips"), "{err}");
    assert!(err.contains("0 clips: "), "{err}");

    std::fs::write(dir.path().join("one.acl.sjson"), valid_acl()).unwrap();
    let o = run(dir.path(), &["compress", "one.acl.sjson", "-o", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("1 clip: 1 compressed"), "{err}");
}

#[test]
fn ratios_read_like_the_app() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.acl.sjson"), valid_acl()).unwrap();
    let o = run(dir.path(), &["compress", "one.acl.sjson", "-o", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let per_clip = err.lines().find(|l| l.contains("compressed one")).unwrap();
    let ratio = per_clip
        .split("): ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    assert!(
        ratio.ends_with('×') && ratio.trim_end_matches('×').parse::<f64>().unwrap() > 1.0,
        "{per_clip}"
    );
    let total = err.lines().find(|l| l.starts_with("raw ")).unwrap();
    assert!(total.contains("×), worst error"), "{total}");
    assert!(!err.contains(":1"), "{err}");

    let o = run(dir.path(), &["inspect", "out/one.cfa"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.starts_with("compressed:")).unwrap();
    assert!(line.ends_with('×') && !line.contains(":1"), "{line}");
}

#[test]
fn inspect_on_a_clip_that_is_not_a_cfa_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let acl = valid_acl();
    std::fs::write(dir.path().join("x.acl.sjson"), &acl).unwrap();
    // The same clip under a name that says nothing: found by its contents.
    std::fs::write(dir.path().join("renamed.cfa"), &acl).unwrap();
    std::fs::write(dir.path().join("m.bvh"), "HIERARCHY\nROOT a\n").unwrap();
    std::fs::write(dir.path().join("empty.cfa"), "").unwrap();
    for (file, what) in [
        ("x.acl.sjson", "ACL clip"),
        ("renamed.cfa", "ACL clip"),
        ("m.bvh", "BVH clip"),
    ] {
        for cmd in ["inspect", "decompress"] {
            let mut args = vec![cmd, file];
            if cmd == "decompress" {
                args.extend(["-o", "back.acl.sjson"]);
            }
            let o = run(dir.path(), &args);
            assert!(!o.status.success());
            let err = stderr(&o);
            assert!(err.contains(&format!("{file}: not a .cfa file")), "{err}");
            assert!(err.contains(what), "{err}");
            assert!(err.contains("clipforge compress"), "{err}");
            assert!(err.contains("clipforge convert"), "{err}");
            assert!(!err.contains("bad magic"), "{err}");
        }
    }
    let err = stderr(&run(dir.path(), &["inspect", "empty.cfa"]));
    assert!(err.contains("empty.cfa: empty file"), "{err}");
    // A file of nothing we know still gets the reader's reason.
    std::fs::write(dir.path().join("noise.cfa"), [7u8; 100]).unwrap();
    let err = stderr(&run(dir.path(), &["inspect", "noise.cfa"]));
    assert!(err.contains("noise.cfa: not a valid .cfa file: "), "{err}");
}

#[test]
fn headers_prints_big_numbers_with_separators_but_json_and_csv_stay_plain() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    // 1,500 lines in a header that 3 TUs include: Total Parsed above a thousand, per TU too.
    let big: String = (0..1500).map(|i| format!("int v{i};\n")).collect();
    std::fs::write(src.join("big.h"), big).unwrap();
    for tu in ["a.cpp", "b.cpp", "c.cpp"] {
        std::fs::write(
            src.join(tu),
            "#include \"big.h\"\nint main() { return 0; }\n",
        )
        .unwrap();
    }
    let o = run(
        dir.path(),
        &[
            "headers",
            "src",
            "--compiler",
            "none",
            "--no-cache",
            "--json",
            "r.json",
            "--csv",
            "r.csv",
            "--empty",
            "src/big.h",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let total = out.lines().find(|l| l.starts_with("Total Parsed")).unwrap();
    // 3 × (1,500 + 2) lines.
    assert!(total.contains("4,506"), "{total}");
    let contributor = out.lines().find(|l| l.ends_with("big.h")).unwrap();
    assert!(
        contributor.contains("4,500") && contributor.contains("1,500"),
        "{contributor}"
    );
    let what_if = out.lines().find(|l| l.starts_with("What if")).unwrap();
    assert!(what_if.contains("4,506 -> 6 (-4,500"), "{what_if}");

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    assert!(
        json.to_string().contains("4506"),
        "JSON keeps plain numbers"
    );
    assert!(!json.to_string().contains("4,506"));
    let csv = std::fs::read_to_string(dir.path().join("r.csv")).unwrap();
    assert!(csv.contains("4500") && !csv.contains("4,500"), "{csv}");
}

#[test]
fn a_bad_folder_settings_file_is_named_path_colon_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    std::fs::write(input.join("a.acl.sjson"), valid_acl()).unwrap();
    std::fs::write(
        input.join("clipforge.toml"),
        "# defaults\n\nthreshhold = 0.1\n",
    )
    .unwrap();
    let o = run(
        dir.path(),
        &["compress", "in", "-o", "out", "--json", "r.json"],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("clipforge.toml:3: "), "{err}");
    assert!(!err.contains(": line 3:"), "{err}");
    let errors = json_errors(&dir.path().join("r.json"));
    assert!(
        errors.iter().any(|e| e.contains("clipforge.toml:3: ")),
        "{errors:?}"
    );
}

/// Issue 26, finding 9: a negative threshold or shell distance gets the CLI's own message (what
/// is wrong with the value), not clap's "to pass '-1' as a value, use '-- -1'" tip.
#[test]
fn a_negative_threshold_is_refused_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.acl.sjson"), valid_acl()).unwrap();
    for args in [
        &[
            "compress",
            "--error-threshold",
            "-1",
            "--output",
            "out",
            ".",
        ][..],
        &["compress", "--shell-distance", "-2", "--output", "out", "."][..],
        &["lab", "--error-threshold", "-1", "a.acl.sjson"][..],
    ] {
        let o = run(dir.path(), args);
        let e = stderr(&o);
        assert!(!o.status.success(), "{args:?}");
        assert!(!e.contains("-- -"), "{args:?}: clap's tip: {e}");
        assert!(
            e.contains("must be a positive number of cm, got -"),
            "{args:?}: {e}"
        );
    }
}

/// The summary's throughput is in the binary units of the sizes on the line above it (it said
/// "KB/s" of 1024-byte units beside "KiB"), formatted by the one byte formatter.
#[test]
fn throughput_reads_in_the_units_of_the_sizes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("walk.acl.sjson"), valid_acl()).unwrap();
    let o = run(
        dir.path(),
        &[
            "compress",
            "walk.acl.sjson",
            "-o",
            "out",
            "--json",
            "r.json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains("KB/s"), "{err}");
    let report: BatchReport =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    let rate = clipforge::anim::limits::format_byte_rate(report.totals.throughput_kb_s * 1024.0);
    let line = err
        .lines()
        .find(|l| l.starts_with("wall "))
        .unwrap_or_else(|| panic!("no wall-time line: {err}"));
    assert!(
        line.contains(&format!(", {rate}; ")),
        "{line} (want {rate})"
    );
}

/// The summary's "failures:" list says what to do, as the app's clip detail does
/// (`Failure::advice`): under the first failure of each kind, once per kind.
#[test]
fn the_failures_list_says_what_to_do_once_per_kind() {
    use clipforge::pipeline::report::Failure;
    let dir = tempfile::tempdir().unwrap();
    for n in ["a.bvh", "b.bvh", "c.bvh"] {
        std::fs::write(dir.path().join(n), "HIERARCHY\nROOT").unwrap();
    }
    std::fs::write(dir.path().join("ok.acl.sjson"), valid_acl()).unwrap();
    let o = run(
        dir.path(),
        &["compress", ".", "-o", "out", "--jobs", "1", "--no-skip"],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let failures = err.split("failures:\n").nth(1).expect("a failures list");
    let advice = Failure::InvalidFile.advice();
    assert_eq!(failures.matches(advice).count(), 1, "{err}");
    let lines: Vec<&str> = failures.lines().collect();
    assert!(lines[0].trim_start().contains(".bvh:"), "{err}");
    assert_eq!(lines[1].trim(), advice, "{err}");
    // Every broken file is still listed.
    for n in ["a.bvh", "b.bvh", "c.bvh"] {
        assert!(failures.contains(n), "{err}");
    }
}

/// Seen on the command line: a one-pose glTF clip's line ended "0.0 ms" (the app says
/// "< 0.1 ms"), and a run of 0.14 s said "1 s left" on every line (the ETA rounds up).
#[test]
fn a_few_microseconds_are_not_0_0_ms_and_under_a_second_left_is_not_1_s() {
    use clipforge::cli::compress::format_clip_ms;
    use clipforge::cli::progress::prefix;
    use std::time::Duration;
    assert_eq!(format_clip_ms(0.03), "< 0.1 ms");
    assert_eq!(format_clip_ms(0.05), "0.1 ms");
    assert_eq!(format_clip_ms(147.19), "147.2 ms");
    assert_eq!(
        prefix(1, 7, Some(Duration::from_millis(120))),
        "[1/7 files · < 1 s left]"
    );
    assert_eq!(
        prefix(1, 7, Some(Duration::from_millis(1200))),
        "[1/7 files · 2 s left]"
    );
    // Through the binary: a scalar track list compresses in a few µs; its line says so as
    // the report's own time does.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    crate::common::batch_dirs::write_scalar_list(&input.join("weights.acl.sjson"));
    let o = run(
        dir.path(),
        &["compress", "in", "-o", "out", "--json", "r.json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let report: BatchReport =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.contains("compressed") && l.contains("weights.acl.sjson"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.ends_with(&format!(
            ", {}",
            format_clip_ms(report.clips[0].compress_ms)
        )),
        "{line}"
    );
    assert!(!line.ends_with(" 0.0 ms"), "{line}");
}

/// Seen on ozz-animation: a missing include's name longer than 40 characters put its count
/// out of line with the others ("…import2ozz_config.h"     5 TUs" beside "<fbxsdk.h>  5 TUs").
#[test]
fn missing_includes_counts_line_up_under_long_names() {
    let dir = tempfile::tempdir().unwrap();
    let long = "animation/offline/tools/import2ozz_config_long_name.h";
    std::fs::write(
        dir.path().join("a.cpp"),
        format!("#include \"{long}\"\n#include <short.h>\nint a;\n"),
    )
    .unwrap();
    let o = run(
        dir.path(),
        &["headers", ".", "--compiler", "none", "--no-cache"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Missing includes (2)"))
        .skip(1)
        .take(2)
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(rows.iter().any(|r| r.contains(long)), "{out}");
    let at: Vec<usize> = rows.iter().map(|r| r.find(" TUs, e.g.").unwrap()).collect();
    assert_eq!(
        at[0],
        at[1],
        "the counts are out of line:\n{}",
        rows.join("\n")
    );
}
