//! Issue 26 findings 9 and 4 on the command line: `compress` counts its progress in input files
//! (known before the first starts, never growing, while a glTF file holds several clips) with an
//! ETA, also with `-q` on a terminal; `lab` says what it runs; the summary says which clips used
//! other settings than the command line's; `inspect` shows the settings a `.cfa` was made with.

use crate::common;
use crate::common::batch_dirs::{in_out_with, real_fox};

use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use std::path::Path;
use std::process::{Command, Output};

use crate::common::BIN;

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run clipforge")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `n` generated clips `take_NN.acl.sjson` of `samples` samples in `dir`.
fn write_takes(dir: &Path, n: usize, samples: usize) {
    for i in 0..n {
        let clip = generate(&GenerateOptions {
            name: format!("take_{i:02}"),
            num_samples: samples,
            seed: i as u64 + 1,
            ..Default::default()
        });
        std::fs::write(
            dir.join(format!("take_{i:02}.acl.sjson")),
            write_acl_clip(&clip),
        )
        .unwrap();
    }
}

/// The `[done/total files…]` of every progress line.
fn progress_counts(err: &str) -> Vec<(u64, u64)> {
    err.lines()
        .filter_map(|l| {
            let inner = l.strip_prefix('[')?.split(']').next()?;
            let (d, rest) = inner.split_once('/')?;
            let t = rest.split(' ').next()?;
            assert!(
                rest[t.len()..].starts_with(" file"),
                "a progress line counts something else than files: {l}"
            );
            Some((d.parse().ok()?, t.parse().ok()?))
        })
        .collect()
}

/// A real glTF holding three animations among two one-clip files: every line says "of 3
/// files" (the total never grows as the glTF's clips turn up), the count ends at 3, and the
/// summary says 5 clips from 3 files.
#[test]
fn compress_counts_files_and_its_total_never_grows() {
    let Some(data) = common::real_data() else {
        eprintln!("skipped: CLIPFORGE_DATA not set");
        return;
    };
    let (dir, input, _) = in_out_with(&[&real_fox(&data)]);
    write_takes(&input, 2, 40);
    let o = run(dir.path(), &["compress", "in", "-o", "out"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let counts = progress_counts(&err);
    assert_eq!(counts.len(), 5, "one line per clip: {err}");
    assert!(counts.iter().all(|&(_, t)| t == 3), "{err}");
    assert!(counts.windows(2).all(|w| w[0].0 <= w[1].0), "{err}");
    assert_eq!(counts.last().unwrap().0, 3, "{err}");
    assert!(
        err.contains("5 clips: 5 compressed, 0 up to date, 0 failed (3 files)"),
        "{err}"
    );
}

/// `-q` on a terminal (run under `script`, which gives it one): the status line has the file
/// count and the time left once a file is done.
#[test]
fn quiet_on_a_terminal_shows_an_eta() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` to run under a terminal");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    write_takes(&input, 6, 600);
    let cmd = format!("{BIN} compress in -o out -q -j 1");
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let all = stdout(&o);
    assert!(o.status.success(), "{all}");
    assert!(
        all.contains("/6 files · "),
        "no ETA in -q's counter: {all:?}"
    );
    assert!(all.contains(" left]"), "no ETA in -q's counter: {all:?}");
    assert!(all.contains("6 clips: 6 compressed"), "{all:?}");
}

/// A first file that fails at once gives no ETA (ux32's tour: "[1/4 files · 34 s left]" on a
/// run of under a second, extrapolated from one failure's time); the files compressed after it
/// do.
#[test]
fn a_fast_failure_first_gives_no_time_left() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    // Sorted first, and a few bytes: it fails in microseconds.
    std::fs::write(input.join("a_broken.bvh"), "HIERARCHY\nROOT Hips\n{\n").unwrap();
    write_takes(&input, 3, 600);
    let o = run(dir.path(), &["compress", "in", "-o", "out", "-j", "1"]);
    let err = stderr(&o);
    let failed = err
        .lines()
        .find(|l| l.contains("FAILED") && l.contains("a_broken.bvh"))
        .unwrap_or_else(|| panic!("no FAILED line for the broken file: {err}"));
    assert!(failed.starts_with("[1/4 files] FAILED "), "{failed}");
    // After a real compression the estimate is given.
    assert!(
        err.lines()
            .any(|l| l.starts_with("[2/4 files · ") && l.contains(" left] compressed ")),
        "{err}"
    );
}

/// `lab` says which file it works on, with the count, before each one's tables.
#[test]
fn lab_says_what_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    write_takes(dir.path(), 2, 30);
    let o = run(
        dir.path(),
        &[
            "lab",
            "take_00.acl.sjson",
            "take_01.acl.sjson",
            "--no-timings",
        ],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("[0/2 files] lab: take_00.acl.sjson…"), "{err}");
    assert!(err.contains("[1/2 files · "), "{err}");
    assert!(err.contains("lab: take_01.acl.sjson…"), "{err}");
}

/// A `[[clip]]` table wins over the command line for one clip: the summary says so, and that
/// clip's `.cfa` says what made it (threshold and per-bone setting with their sources, the
/// version); the others say the command line's.
#[test]
fn the_summary_and_inspect_say_where_the_settings_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    write_takes(&input, 3, 30);
    std::fs::write(
        input.join("clipforge.toml"),
        "[[clip]]\nmatch = \"take_01*\"\nerror_threshold = 0.1\n\
         [[clip.bone]]\nmatch = \"head\"\nerror_threshold = 0.02\n",
    )
    .unwrap();
    let o = run(
        dir.path(),
        &["compress", "in", "-o", "out", "--error-threshold", "0.02"],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("1 clip used its own settings from ")
            && err.contains("clipforge.toml ([[clip]] tables)"),
        "{err}"
    );
    assert!(err.contains("1 clip used per-bone settings"), "{err}");

    let o = run(dir.path(), &["inspect", "out/take_01.cfa"]);
    let text = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = text
        .lines()
        .find(|l| l.starts_with("settings:"))
        .unwrap_or_else(|| panic!("no settings line: {text}"));
    assert!(line.contains("threshold 0.1 cm ([[clip]] table)"), "{line}");
    assert!(line.contains("head 0.02 cm ([[clip]] table)"), "{line}");
    assert!(
        line.contains(&format!("ClipForge {}", env!("CARGO_PKG_VERSION"))),
        "{line}"
    );
    let o = run(dir.path(), &["inspect", "out/take_00.cfa", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["settings"]["error_threshold_cm"], 0.02);
    assert_eq!(
        v["settings"]["threshold_source"],
        "command line, pipeline or app"
    );

    // A file written without the record (by the codec alone, as earlier versions did).
    let clip = generate(&GenerateOptions::default());
    let plain = clipforge::anim::compress(&clip, &Default::default()).unwrap();
    std::fs::write(dir.path().join("old.cfa"), &plain.bytes).unwrap();
    let o = run(dir.path(), &["inspect", "old.cfa"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("settings:    not recorded"),
        "{}",
        stdout(&o)
    );
}
