//! Folder settings (`clipforge.toml`) through the real `clipforge compress` binary: the nearest
//! file up the tree wins, bounded to the input root; the command line wins over every file;
//! units convert the threshold; exclude patterns (file and `--exclude`); bad files give errors
//! naming file, line and key while the batch goes on; `[[bone]]` tables apply; `[[clip]]` tables
//! win for the clips they match, over the file's keys and the command line; changing a folder's
//! file recompresses exactly the clips under it. Clips are generated (`anim::generate`).

use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::pipeline::folder_settings::Units;
use clipforge::pipeline::report::{BatchReport, ClipReport};
use std::path::Path;
use std::process::{Command, Output};

use crate::common::BIN;

fn write_clip(path: &Path, seed: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let clip = generate(&GenerateOptions {
        name: format!("clip{seed}"),
        num_samples: 40,
        sample_rate: 30.0,
        seed,
        with_scale: false,
    });
    std::fs::write(path, write_acl_clip(&clip)).unwrap();
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `clipforge compress IN -o OUT --json REPORT EXTRA...`: the process output and the report.
fn compress(input: &Path, out: &Path, extra: &[&str]) -> (Output, BatchReport) {
    let report = out.with_extension("report.json");
    let o = Command::new(BIN)
        .arg("compress")
        .arg(input)
        .arg("-o")
        .arg(out)
        .arg("--json")
        .arg(&report)
        .args(extra)
        .output()
        .expect("run clipforge");
    let r: BatchReport =
        serde_json::from_slice(&std::fs::read(&report).unwrap_or_else(|_| {
            panic!("no report; stderr:\n{}", String::from_utf8_lossy(&o.stderr))
        }))
        .expect("report parses");
    (o, r)
}

fn row<'a>(r: &'a BatchReport, ends: &str) -> &'a ClipReport {
    r.clips
        .iter()
        .find(|c| c.input.ends_with(ends))
        .unwrap_or_else(|| panic!("no row for {ends}: {:#?}", r.clips))
}

fn threshold(r: &BatchReport, ends: &str) -> f32 {
    let c = row(r, ends);
    assert!(c.error.is_none(), "{ends}: {:?}", c.error);
    c.settings
        .as_ref()
        .expect("settings recorded")
        .error_threshold_cm
}

#[test]
fn nearest_file_wins_and_the_command_line_wins_over_files() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("top");
    let input = top.join("in");
    // Above the input root: never read.
    write(&top.join("clipforge.toml"), "error_threshold = 0.7\n");
    write(&input.join("clipforge.toml"), "error_threshold = 0.5\n");
    write(
        &input.join("sub/clipforge.toml"),
        "error_threshold = 0.05\nshell_distance = 6\n",
    );
    write_clip(&input.join("root.acl.sjson"), 1);
    write_clip(&input.join("sub/a.acl.sjson"), 2);
    write_clip(&input.join("sub/deeper/b.acl.sjson"), 3);
    write_clip(&input.join("other/c.acl.sjson"), 4);

    let (o, r) = compress(&input, &tmp.path().join("out"), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(threshold(&r, "/in/root.acl.sjson"), 0.5);
    assert_eq!(threshold(&r, "/other/c.acl.sjson"), 0.5);
    assert_eq!(threshold(&r, "/sub/a.acl.sjson"), 0.05);
    assert_eq!(threshold(&r, "/deeper/b.acl.sjson"), 0.05);
    let b = row(&r, "/deeper/b.acl.sjson").settings.clone().unwrap();
    assert_eq!(b.shell_distance_cm, Some(6.0));
    assert!(
        b.settings_file
            .as_deref()
            .is_some_and(|f| f.ends_with("in/sub/clipforge.toml")),
        "{b:?}"
    );
    // The threshold was honoured: every error within its own clip's threshold.
    for c in &r.clips {
        let t = c.settings.as_ref().unwrap().error_threshold_cm as f64;
        assert!(
            c.max_error_cm <= t * 1.0001,
            "{}: {} > {t}",
            c.input,
            c.max_error_cm
        );
    }
    // A looser threshold makes a smaller clip than the default would: compare with the
    // command line's value forced everywhere.
    let (o2, r2) = compress(
        &input,
        &tmp.path().join("out2"),
        &["--error-threshold", "0.002", "--shell-distance", "2"],
    );
    assert!(o2.status.success());
    for c in &r2.clips {
        let s = c.settings.as_ref().unwrap();
        assert_eq!(s.error_threshold_cm, 0.002, "{}", c.input);
        assert_eq!(s.shell_distance_cm, Some(2.0), "{}", c.input);
    }
    let size = |r: &BatchReport, e: &str| row(r, e).compressed_bytes;
    assert!(size(&r2, "/in/root.acl.sjson") > size(&r, "/in/root.acl.sjson"));

    // Compressing the sub-folder alone: its own file is the nearest, the parent's is above the
    // input root and is not read.
    let (_, r3) = compress(&input.join("other"), &tmp.path().join("out3"), &[]);
    assert_eq!(threshold(&r3, "/other/c.acl.sjson"), 0.01);
    assert!(
        row(&r3, "/other/c.acl.sjson")
            .settings
            .as_ref()
            .unwrap()
            .settings_file
            .is_none()
    );
}

#[test]
fn units_convert_the_threshold_for_formats_without_units() {
    let tmp = tempfile::tempdir().unwrap();
    let cm = tmp.path().join("cm");
    let m = tmp.path().join("m");
    write_clip(&cm.join("x.acl.sjson"), 9);
    write_clip(&m.join("x.acl.sjson"), 9);
    write(&m.join("clipforge.toml"), "units = \"m\"\n");
    let (_, rc) = compress(&cm, &tmp.path().join("out-cm"), &[]);
    let (_, rm) = compress(&m, &tmp.path().join("out-m"), &[]);
    let (c, mm) = (row(&rc, "x.acl.sjson"), row(&rm, "x.acl.sjson"));
    let s = mm.settings.as_ref().unwrap();
    assert_eq!(s.units, Units::M);
    assert_eq!(s.error_threshold_cm, 0.01);
    // The same numbers read as metres: 0.01 cm is 100x finer in the clip's units, so the clip
    // needs more bits, and its error (reported in cm) is still within 0.01 cm.
    assert!(
        mm.compressed_bytes > c.compressed_bytes,
        "{} <= {}",
        mm.compressed_bytes,
        c.compressed_bytes
    );
    assert!(mm.max_error_cm <= 0.01 * 1.0001, "{}", mm.max_error_cm);
    assert!(mm.max_error_cm > 0.0);
}

#[test]
fn exclude_patterns_from_files_and_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    write(
        &input.join("clipforge.toml"),
        "exclude = [\"_old/\", \"\\\\.tmp\\\\.\"]\n",
    );
    write_clip(&input.join("keep.acl.sjson"), 1);
    write_clip(&input.join("a/_old/drop.acl.sjson"), 2);
    write_clip(&input.join("a/draft.tmp.acl.sjson"), 3);
    write_clip(&input.join("a/keep2.acl.sjson"), 4);
    write_clip(&input.join("wip/x.acl.sjson"), 5);
    let out = tmp.path().join("out");
    let (o, r) = compress(&input, &out, &["--exclude", "^wip/"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut inputs: Vec<String> = r
        .clips
        .iter()
        .map(|c| {
            Path::new(&c.input)
                .strip_prefix(&input)
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    inputs.sort();
    assert_eq!(inputs, ["a/keep2.acl.sjson", "keep.acl.sjson"]);
    assert!(!out.join("a/_old").exists() && !out.join("wip").exists());
    assert!(!out.join("a/draft.tmp.cfa").exists());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("3 clip files left out by exclude patterns"),
        "{err}"
    );

    let o = Command::new(BIN)
        .args(["compress", "--exclude", "(", "-o"])
        .arg(tmp.path().join("o2"))
        .arg(&input)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--exclude '('"));
}

#[test]
fn bad_settings_files_fail_their_clips_only_with_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    write_clip(&input.join("good/a.acl.sjson"), 1);
    write_clip(&input.join("bad/b.acl.sjson"), 2);
    write_clip(&input.join("badvalue/c.acl.sjson"), 3);
    write(
        &input.join("bad/clipforge.toml"),
        "# thresholds\nerror_threshold = 0.1\nthreshhold = 0.2\n",
    );
    write(
        &input.join("badvalue/clipforge.toml"),
        "\nunits = \"feet\"\n",
    );
    let (o, r) = compress(&input, &tmp.path().join("out"), &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(row(&r, "good/a.acl.sjson").error.is_none());
    let e = row(&r, "bad/b.acl.sjson").error.clone().unwrap();
    assert!(
        e.contains("bad/clipforge.toml:3:") && e.contains("threshhold"),
        "{e}"
    );
    let e = row(&r, "badvalue/c.acl.sjson").error.clone().unwrap();
    assert!(
        e.contains("badvalue/clipforge.toml:2:") && e.contains("units") && e.contains("feet"),
        "{e}"
    );
}

#[test]
fn bone_tables_apply_to_the_bones_they_match() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    write_clip(&input.join("a.acl.sjson"), 1);
    // The later table wins for r_finger (matched by both).
    write(
        &input.join("clipforge.toml"),
        "error_threshold = 0.02\n[[bone]]\nmatch = \"*finger\"\nerror_threshold = 0.002\n\
         [[bone]]\nmatch = \"r_fing?r\"\nerror_threshold = 0.004\n",
    );
    let (o, r) = compress(&input, &tmp.path().join("out"), &[]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("not applied"), "{err}");
    let a = row(&r, "a.acl.sjson");
    assert_eq!(threshold(&r, "a.acl.sjson"), 0.02);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    let names = clipforge::anim::generate::humanoid_skeleton().names;
    assert_eq!(a.per_bone_threshold_cm.len(), names.len());
    for (b, name) in names.iter().enumerate() {
        let want = match name.as_str() {
            "l_finger" => 0.002,
            "r_finger" => 0.004,
            _ => 0.02,
        };
        assert_eq!(a.per_bone_threshold_cm[b], want, "{name}");
        assert!(
            a.per_bone_max_error_cm[b] <= want as f64,
            "{name}: {} > {want}",
            a.per_bone_max_error_cm[b]
        );
    }
}

/// A clip's own `[[clip.bone]]` table that selects no bone is not applied, and the row says so
/// (report and progress line), naming the file, the pattern and the bone whose name differs only
/// in case; a folder `[[bone]]` table that selects nothing in this clip is not a mistake (it
/// serves other skeletons) and says nothing, nor does a table that selects a bone.
#[test]
fn a_clip_bone_table_that_selects_no_bone_is_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    write_clip(&input.join("a.acl.sjson"), 1);
    write_clip(&input.join("b.acl.sjson"), 2);
    write(
        &input.join("clipforge.toml"),
        "[[bone]]\nmatch = \"tail*\"\nerror_threshold = 0.002\n\
         [[clip]]\nmatch = \"a.acl.sjson\"\n[[clip.bone]]\nmatch = \"Head\"\nerror_threshold = 0.002\n\
         [[clip]]\nmatch = \"b.acl.sjson\"\n[[clip.bone]]\nmatch = \"head\"\nerror_threshold = 0.002\n",
    );
    let names = clipforge::anim::generate::humanoid_skeleton().names;
    assert!(names.iter().any(|n| n == "head") && !names.iter().any(|n| n == "Head"));
    let (o, r) = compress(&input, &tmp.path().join("out"), &[]);
    assert!(o.status.success());
    let a = row(&r, "a.acl.sjson");
    assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
    let w = &a.warnings[0];
    assert!(
        w.contains("clipforge.toml: [[clip.bone]] match \"Head\" selects no bone of this clip")
            && w.contains("not applied")
            && w.ends_with("(bone names are case-sensitive: the clip has \"head\")"),
        "{w}"
    );
    // Not applied: every bone at the clip's threshold.
    assert!(
        a.per_bone_threshold_cm.iter().all(|&t| t == 0.01),
        "{:?}",
        a.per_bone_threshold_cm
    );
    let b = row(&r, "b.acl.sjson");
    assert!(b.warnings.is_empty(), "{:?}", b.warnings);
    let head = names.iter().position(|n| n == "head").unwrap();
    assert_eq!(b.per_bone_threshold_cm[head], 0.002);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("  warning: ").count(), 1, "{err}");
    assert!(err.contains(&format!("  warning: {w}\n")), "{err}");
}

#[test]
fn changing_a_folder_file_recompresses_exactly_the_clips_under_it() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    let out = tmp.path().join("out");
    write_clip(&input.join("a/1.acl.sjson"), 1);
    write_clip(&input.join("a/2.acl.sjson"), 2);
    write_clip(&input.join("b/3.acl.sjson"), 3);
    write(&input.join("a/clipforge.toml"), "error_threshold = 0.05\n");
    let (_, r1) = compress(&input, &out, &[]);
    assert!(r1.clips.iter().all(|c| !c.skipped && c.error.is_none()));
    let (_, r2) = compress(&input, &out, &[]);
    assert!(r2.clips.iter().all(|c| c.skipped), "{:#?}", r2.clips);
    write(&input.join("a/clipforge.toml"), "error_threshold = 0.2\n");
    let (_, r3) = compress(&input, &out, &[]);
    assert!(!row(&r3, "a/1.acl.sjson").skipped);
    assert!(!row(&r3, "a/2.acl.sjson").skipped);
    assert!(row(&r3, "b/3.acl.sjson").skipped);
    assert_eq!(threshold(&r3, "a/1.acl.sjson"), 0.2);
    // Skipped rows carry the settings they were compressed with.
    assert_eq!(threshold(&r3, "b/3.acl.sjson"), 0.01);
    // A comment-only edit changes no setting: nothing recompresses.
    write(
        &input.join("a/clipforge.toml"),
        "# looser\nerror_threshold = 0.2\n",
    );
    let (_, r4) = compress(&input, &out, &[]);
    assert!(r4.clips.iter().all(|c| c.skipped), "{:#?}", r4.clips);
}

#[test]
fn clip_tables_win_for_their_clips_over_the_file_and_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    write(
        &input.join("clipforge.toml"),
        "error_threshold = 0.05\nshell_distance = 6\n\
         [[clip]]\nmatch = \"sub/hero*.acl.sjson\"\nerror_threshold = 0.2\n\
         [[clip]]\nmatch = \"sub/hero_run.acl.sjson\"\nshell_distance = 1.5\n",
    );
    write_clip(&input.join("sub/hero_walk.acl.sjson"), 1);
    write_clip(&input.join("sub/hero_run.acl.sjson"), 2);
    write_clip(&input.join("sub/crowd.acl.sjson"), 3);
    for extra in [
        &[][..],
        &["--error-threshold", "0.002", "--shell-distance", "2"][..],
    ] {
        let (o, r) = compress(&input, &tmp.path().join("out"), extra);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let explicit = !extra.is_empty();
        let walk = row(&r, "/hero_walk.acl.sjson").settings.clone().unwrap();
        let run = row(&r, "/hero_run.acl.sjson").settings.clone().unwrap();
        let crowd = row(&r, "/crowd.acl.sjson").settings.clone().unwrap();
        // The table's keys win; what it does not set comes from the usual order.
        assert_eq!(walk.error_threshold_cm, 0.2, "{extra:?}");
        assert_eq!(walk.clip_match.as_deref(), Some("sub/hero*.acl.sjson"));
        let shell = if explicit { 2.0 } else { 6.0 };
        assert_eq!(walk.shell_distance_cm, Some(shell), "{extra:?}");
        // Two tables match: each key from the last one that sets it.
        assert_eq!(run.error_threshold_cm, 0.2, "{extra:?}");
        assert_eq!(run.shell_distance_cm, Some(1.5), "{extra:?}");
        assert_eq!(run.clip_match.as_deref(), Some("sub/hero_run.acl.sjson"));
        assert_eq!(
            crowd.error_threshold_cm,
            if explicit { 0.002 } else { 0.05 },
            "{extra:?}"
        );
        assert_eq!(crowd.clip_match, None);
        assert!(row(&r, "/hero_walk.acl.sjson").max_error_cm <= 0.2 * 1.0001);
    }
    // A bad table names the file, line and key; the file's clips fail, the batch goes on.
    write(
        &input.join("sub/clipforge.toml"),
        "[[clip]]\nmatch = \"crowd.acl.sjson\"\nerror_threshold = -1\n",
    );
    let (_, r) = compress(&input, &tmp.path().join("out_bad"), &[]);
    let e = row(&r, "/crowd.acl.sjson").error.clone().unwrap();
    assert!(
        e.contains("clipforge.toml:3: ") && e.contains("error_threshold"),
        "{e}"
    );
}
