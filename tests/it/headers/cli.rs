//! `clipforge headers` as a user types it: include dirs that do not exist are an error naming the
//! flag and the folder looked for, and a relative include dir means the same folder whatever the
//! current directory (the first root's, as in the app).

use crate::common;
use std::path::Path;

fn clipforge(cwd: &Path, args: &[&str]) -> std::process::Output {
    common::clipforge()
        .current_dir(cwd)
        .arg("headers")
        .args(args)
        .args(["--compiler", "none", "--no-cache", "-q"])
        .output()
        .unwrap()
}

/// The JSON report of a run from `cwd` (written to a file outside the tree).
fn json(cwd: &Path, args: &[&str]) -> serde_json::Value {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("r.json");
    let mut all = args.to_vec();
    all.extend(["--json", file.to_str().unwrap()]);
    let o = clipforge(cwd, &all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
}

/// `proj/src/a.cpp` includes `x.h`, found in `proj/src/include/`.
fn tree(d: &Path) -> std::path::PathBuf {
    let src = d.join("proj/src");
    std::fs::create_dir_all(src.join("include")).unwrap();
    std::fs::write(src.join("a.cpp"), "#include \"x.h\"\nint a;\n").unwrap();
    std::fs::write(src.join("include/x.h"), "int x;\nint y;\n").unwrap();
    src
}

#[test]
fn a_missing_include_dir_is_an_error_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let src = tree(d.path());
    for flag in ["-I", "--iquote", "--isystem"] {
        let o = clipforge(d.path(), &[src.to_str().unwrap(), flag, "/nonexistent"]);
        assert_eq!(o.status.code(), Some(2), "{flag}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains(&format!("{flag} /nonexistent: folder not found")),
            "{e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
    // A relative one that exists under the current directory but not under the first root:
    // the message says where it was looked for and how to give the other one.
    std::fs::create_dir(d.path().join("elsewhere")).unwrap();
    let o = clipforge(d.path(), &["proj/src", "-I", "elsewhere"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("proj/src/elsewhere") && e.contains("taken from the first source root"),
        "{e}"
    );
    assert!(e.contains("it exists under the current directory"), "{e}");
}

#[test]
fn a_relative_include_dir_is_the_same_from_any_directory() {
    let d = tempfile::tempdir().unwrap();
    let src = tree(d.path());
    // The same root named from two directories, the same relative `-I include`.
    let from_top = json(d.path(), &["proj/src", "-I", "include"]);
    let from_src = json(&src, &[".", "-I", "include"]);
    for r in [&from_top, &from_src] {
        assert_eq!(r["missing"].as_array().unwrap().len(), 0, "{r}");
        // a.cpp (2) + x.h (2).
        assert_eq!(r["total_parsed"], 4, "{r}");
    }
}
