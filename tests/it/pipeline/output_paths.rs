//! Where `-o` and report paths write (issue 27, item 1), through the real binary: an input of the
//! run is never overwritten (by any name), `-o -` and devices are written as they are, a symlink
//! is written through and stays a symlink, a missing folder is an error; and an error quoting a
//! huge token cuts it (item 7).

use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
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

/// A folder holding `walk.acl.sjson` and its `walk.cfa`.
fn clip_and_cfa() -> (tempfile::TempDir, Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let acl = write_acl_clip(&generate(&GenerateOptions::default()));
    std::fs::write(dir.path().join("walk.acl.sjson"), &acl).unwrap();
    let o = run(dir.path(), &["compress", "walk.acl.sjson", "-o", "."]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cfa = std::fs::read(dir.path().join("walk.cfa")).unwrap();
    (dir, acl.into_bytes(), cfa)
}

#[test]
fn convert_and_decompress_never_overwrite_their_input_by_any_name() {
    let (dir, acl, cfa) = clip_and_cfa();
    let d = dir.path();
    std::os::unix::fs::symlink("walk.acl.sjson", d.join("alias.acl.sjson")).unwrap();
    std::fs::hard_link(d.join("walk.cfa"), d.join("hard.cfa")).unwrap();
    for args in [
        vec!["convert", "walk.acl.sjson", "-o", "walk.acl.sjson"],
        vec!["convert", "walk.acl.sjson", "-o", "./"],
        vec!["convert", "walk.acl.sjson", "-o", "alias.acl.sjson"],
        vec!["convert", "./walk.acl.sjson", "-o", &d.to_string_lossy()],
        vec!["decompress", "walk.cfa", "-o", "walk.cfa"],
        vec!["decompress", "walk.cfa", "-o", "hard.cfa"],
    ] {
        let o = run(d, &args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(
            stderr(&o).contains("is an input of this run"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    assert_eq!(std::fs::read(d.join("walk.acl.sjson")).unwrap(), acl);
    assert_eq!(std::fs::read(d.join("walk.cfa")).unwrap(), cfa);
    assert!(
        std::fs::symlink_metadata(d.join("alias.acl.sjson"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_report_is_never_written_over_a_clip_of_the_run() {
    let (dir, acl, _) = clip_and_cfa();
    let d = dir.path();
    let o = run(
        d,
        &[
            "compress",
            "walk.acl.sjson",
            "-o",
            "out",
            "--json",
            "walk.acl.sjson",
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("is an input of this run"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(d.join("walk.acl.sjson")).unwrap(), acl);
}

#[test]
fn dash_writes_to_standard_output_and_devices_are_written_not_replaced() {
    let (dir, _, _) = clip_and_cfa();
    let d = dir.path();
    let o = run(d, &["decompress", "walk.cfa", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("bones"),
        "stdout is not an ACL clip: {text:.200}"
    );
    let o = run(d, &["convert", "walk.acl.sjson", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("bones"));

    // /dev/null stays a device and no /dev/null.acl.sjson appears.
    let o = run(d, &["convert", "walk.acl.sjson", "-o", "/dev/null"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!Path::new("/dev/null.acl.sjson").exists());
    let meta = std::fs::metadata("/dev/null").unwrap();
    assert!(!meta.is_file());

    // /dev/full: the write fails with an error naming it, and nothing is created beside it.
    let o = run(d, &["convert", "walk.acl.sjson", "-o", "/dev/full"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("/dev/full"), "{}", stderr(&o));
    assert!(!Path::new("/dev/full.acl.sjson").exists());
}

#[test]
fn a_symlinked_output_is_written_through_and_stays_a_symlink() {
    let (dir, _, _) = clip_and_cfa();
    let d = dir.path();
    std::fs::create_dir(d.join("real")).unwrap();
    std::fs::write(d.join("real/out.acl.sjson"), "old").unwrap();
    std::os::unix::fs::symlink("real/out.acl.sjson", d.join("link.acl.sjson")).unwrap();
    let o = run(d, &["decompress", "walk.cfa", "-o", "link.acl.sjson"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(d.join("link.acl.sjson"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let written = std::fs::read_to_string(d.join("real/out.acl.sjson")).unwrap();
    assert!(written.contains("bones"), "{written:.200}");
}

#[test]
fn a_missing_output_folder_is_an_error_and_is_not_created() {
    let (dir, _, _) = clip_and_cfa();
    let d = dir.path();
    for args in [
        vec!["decompress", "walk.cfa", "-o", "nope/x.acl.sjson"],
        vec!["convert", "walk.acl.sjson", "-o", "nope/deeper/x.acl.sjson"],
        vec!["convert", "walk.acl.sjson", "-o", "nope/deeper/"],
    ] {
        let o = run(d, &args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains("nope"), "{args:?}: {}", stderr(&o));
        assert!(!d.join("nope").exists(), "{args:?} created the folder");
    }
    // The documented exception: `-o DIR/` creates that one last folder.
    let o = run(d, &["convert", "walk.acl.sjson", "-o", "made/"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("made/walk.acl.sjson").is_file());
}

#[test]
fn an_error_quoting_a_huge_token_cuts_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut bvh = String::from(
        "HIERARCHY\nROOT hip\n{\n OFFSET 0 0 0\n CHANNELS 3 Xposition Yposition Zposition\n \
         End Site\n {\n  OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.0333\n0 0 ",
    );
    bvh.push_str("0.0");
    bvh.push_str(&"[".repeat(300_000));
    bvh.push('\n');
    std::fs::write(d.join("huge_token.bvh"), bvh).unwrap();
    let o = run(d, &["convert", "huge_token.bvh", "-o", "x.acl.sjson"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("huge_token.bvh"), "{e:.300}");
    assert!(e.contains("bad number"), "{e:.300}");
    assert!(e.len() < 2_000, "the error is {} bytes long", e.len());
}
