//! Header profiler tests on small trees written by the tests: resolution rules, include_next,
//! cycles, guards, pragma once, comments, conditionals, macro includes, CRLF, non-UTF-8 bytes,
//! unreadable files and symlink loops, both modes, why-chains, what-if, exports, the cache and
//! compile_commands.json. No compiler needed (`CompilerChoice::None`).

use crate::common::headers_scan::{opts, project, scan as run, write};
use clipforge::headers::{
    self, CompilerChoice, MacroOpt, Mode, Progress, Project, Report, ScanOptions, Scanner, WhatIf,
};
use std::fs;
use std::path::{Path, PathBuf};

/// Sorted closure (display paths) of the TU whose path ends with `tu`.
fn closure(r: &Report, tu: &str) -> Vec<String> {
    let g = &r.graph;
    let t = g
        .tus
        .iter()
        .find(|t| g.nodes[t.node as usize].path.ends_with(tu))
        .expect("tu");
    let mut v: Vec<String> = t
        .closure
        .iter()
        .filter(|&&f| f != t.node)
        .map(|&f| {
            let p = &g.nodes[f as usize].abs;
            p.file_name().unwrap().to_string_lossy().into_owned()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn quoted_vs_angle_resolution() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "src/a.cpp", b"#include \"x.h\"\n#include <y.h>\n");
    write(r, "src/x.h", b"// local x\n");
    write(r, "src/y.h", b"// local y: never used by <y.h>\n");
    write(r, "inc/x.h", b"// inc x\n");
    write(r, "inc/y.h", b"// inc y\n#include \"z.h\"\n");
    write(r, "inc/z.h", b"// z next to y\n");
    let rep = run(&project(r, &["inc"]), Mode::Preprocessed);
    let t = &rep.graph.tus[0];
    let paths: Vec<String> = t
        .closure
        .iter()
        .map(|&f| {
            rep.graph.nodes[f as usize]
                .abs
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(
        paths.iter().any(|p| p.ends_with("src/x.h")),
        "quoted: includer's dir first: {paths:?}"
    );
    assert!(
        paths.iter().any(|p| p.ends_with("inc/y.h")),
        "angle: never the includer's dir"
    );
    assert!(!paths.iter().any(|p| p.ends_with("src/y.h")));
    assert!(
        paths.iter().any(|p| p.ends_with("inc/z.h")),
        "quoted from inc/y.h: its own dir"
    );
    assert_eq!(rep.files, 4);
    // Same resolution in all-branches mode.
    let hh = run(&project(r, &["inc"]), Mode::AllBranches);
    assert_eq!(hh.total_parsed, rep.total_parsed);
}

#[test]
fn include_next_continues_after_found_dir() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "src/a.c", b"#include <w.h>\n");
    write(r, "i1/w.h", b"#pragma once\n#include_next <w.h>\n");
    write(r, "i2/w.h", b"#include_next <w.h>\n");
    write(r, "i3/w.h", b"int w;\n");
    let rep = run(&project(r, &["i1", "i2", "i3"]), Mode::Preprocessed);
    let t = &rep.graph.tus[0];
    let mut got: Vec<String> = t
        .closure
        .iter()
        .map(|&f| {
            rep.graph.nodes[f as usize]
                .abs
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    got.sort();
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(got.iter().any(|p| p.ends_with("i3/w.h")));
    // Header Hero does not follow include_next.
    let hh = run(&project(r, &["i1", "i2", "i3"]), Mode::AllBranches);
    assert_eq!(hh.files, 2);
}

#[test]
fn cycles_guards_pragma_once() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "src/a.cpp",
        b"#include \"p.h\"\n#include \"q.h\"\n#include \"g.h\"\n#include \"g.h\"\n",
    );
    write(r, "src/p.h", b"#pragma once\n#include \"q.h\"\nint p;\n");
    write(r, "src/q.h", b"#pragma once\n#include \"p.h\"\nint q;\n");
    write(
        r,
        "src/g.h",
        b"/* guard */\n#ifndef G_H\n#define G_H\n#include \"p.h\"\n#endif\n",
    );
    write(r, "src/b.cpp", b"#include \"q.h\"\n");
    for mode in [Mode::Preprocessed, Mode::AllBranches] {
        let rep = run(&project(r, &[]), mode);
        assert_eq!(rep.cycles.len(), 1, "{mode}: {:?}", rep.cycles);
        assert_eq!(rep.cycles[0], vec!["p.h".to_string(), "q.h".to_string()]);
        assert_eq!(closure(&rep, "a.cpp"), vec!["g.h", "p.h", "q.h"]);
        assert_eq!(closure(&rep, "b.cpp"), vec!["p.h", "q.h"]);
        // Each header once per TU: a.cpp(4) + g.h(5) + p.h(3) + q.h(3) + b.cpp(1) + p.h + q.h
        assert_eq!(rep.total_parsed, 4 + 5 + 3 + 3 + 1 + 3 + 3, "{mode}");
        let p = rep.headers.iter().find(|h| h.path == "p.h").unwrap();
        assert_eq!(p.tu_count, 2);
        assert_eq!(p.transitive_includes, 1, "true reachability, no self");
    }
    // The guard makes the second include of g.h a no-op; no errors.
    let rep = run(&project(r, &[]), Mode::Preprocessed);
    assert!(rep.errors.is_empty(), "{:?}", rep.errors);
}

#[test]
fn comments_strings_and_conditionals() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "src/a.cpp",
        concat!(
            "// #include \"c1.h\"\n",
            "/* multi\n#include \"c2.h\"\n*/\n",
            "const char* s = \"#include \\\"c3.h\\\"\";\n",
            "const char* raw = R\"x(\n#include \"c4.h\"\n)x\";\n",
            "#if 0\n#include \"dead.h\"\n#elif defined(FOO) && FOO > 2\n#include \"foo.h\"\n#else\n#include \"else.h\"\n#endif\n",
            "#ifdef BAR\n#include \"bar.h\"\n#endif\n",
            "#define LEVEL (1 << 3)\n#if LEVEL == 8 && !defined(NOPE)\n#include \"lvl.h\"\n#endif\n",
            "/**/ # /**/ include /**/ \"spaced.h\"\n",
            "#if __has_include(\"lvl.h\") && !__has_include(<nothere.h>)\n#include \"has.h\"\n#endif\n",
        )
        .as_bytes(),
    );
    for f in [
        "c1.h", "c2.h", "c3.h", "c4.h", "dead.h", "foo.h", "else.h", "bar.h", "lvl.h", "spaced.h",
        "has.h",
    ] {
        write(r, &format!("src/{f}"), b"int x;\n");
    }
    let mut p = project(r, &[]);
    p.defines = vec![MacroOpt::parse_define("FOO=3")];
    let rep = run(&p, Mode::Preprocessed);
    assert_eq!(
        closure(&rep, "a.cpp"),
        vec!["foo.h", "has.h", "lvl.h", "spaced.h"]
    );
    // Lines in inactive branches still count as lines of a.cpp.
    let a = rep.headers.iter().find(|h| h.path == "a.cpp").unwrap();
    assert_eq!(a.lines, 26);
    // Header Hero follows every branch and the comment line starting with #include, but not
    // strings or `//` lines or directives with comments before `#`.
    let hh = run(&p, Mode::AllBranches);
    assert_eq!(
        closure(&hh, "a.cpp"),
        vec![
            "bar.h", "c2.h", "c4.h", "dead.h", "else.h", "foo.h", "has.h", "lvl.h"
        ]
    );
    assert!(
        hh.errors.iter().any(|e| e.line == 5),
        "string line is an HH parse error: {:?}",
        hh.errors
    );
}

#[test]
fn macro_includes_and_function_macros() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "src/a.cpp",
        concat!(
            "#define STR(x) #x\n#define XSTR(x) STR(x)\n#define DIR sub\n",
            "#include XSTR(DIR/one.h)\n",
            "#define HDR <two.h>\n#include HDR\n",
            "#define CAT(a, b) a ## b\n#define PICK(n) XSTR(CAT(thr, n).h)\n#include PICK(ee)\n",
            "#define UNKNOWN_HEADER_MACRO_NEVER_DEFINED\n",
        )
        .as_bytes(),
    );
    write(r, "src/sub/one.h", b"int one;\n");
    write(r, "inc/two.h", b"int two;\n");
    write(r, "src/three.h", b"int three;\n");
    let rep = run(&project(r, &["inc"]), Mode::Preprocessed);
    assert_eq!(closure(&rep, "a.cpp"), vec!["one.h", "three.h", "two.h"]);
    assert!(rep.errors.is_empty(), "{:?}", rep.errors);
}

#[test]
fn crlf_and_non_utf8() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "src/a.c", b"#include \"h1.h\"\r\n#if 1 \\\r\n  && 1\r\n#include \"h2.h\"\r\n#endif\r\nchar c = '\xff\xfe';\r\n/* \xe9\xe8 */\r\n");
    write(
        r,
        "src/h1.h",
        b"\xff\xfe\xfd garbage bytes\r\n#define X 1\r\n",
    );
    write(r, "src/h2.h", b"\rold mac\r#include \"h3.h\"\r");
    write(r, "src/h3.h", b"");
    let rep = run(&project(r, &[]), Mode::Preprocessed);
    assert_eq!(closure(&rep, "a.c"), vec!["h1.h", "h2.h", "h3.h"]);
    let lines = |n: &str| rep.headers.iter().find(|h| h.path == n).unwrap().lines;
    assert_eq!(lines("a.c"), 7);
    assert_eq!(lines("h1.h"), 2);
    assert_eq!(lines("h2.h"), 3);
    assert_eq!(lines("h3.h"), 0);
    let hh = run(&project(r, &[]), Mode::AllBranches);
    assert_eq!(hh.total_parsed, rep.total_parsed);
}

#[cfg(unix)]
#[test]
fn unreadable_files_and_symlink_loops_are_errors() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "src/a.cpp",
        b"#include \"loop.h\"\n#include \"locked.h\"\n#include \"ok.h\"\n",
    );
    write(r, "src/ok.h", b"int ok;\n");
    symlink(r.join("src/loop.h"), r.join("src/loop.h")).unwrap();
    // A directory symlink loop under the root must not hang the walk.
    symlink(r.join("src"), r.join("src/dirloop")).unwrap();
    write(r, "src/locked.h", b"int locked;\n");
    fs::set_permissions(r.join("src/locked.h"), fs::Permissions::from_mode(0o000)).unwrap();
    let running_as_root = fs::read(r.join("src/locked.h")).is_ok();
    for mode in [Mode::Preprocessed, Mode::AllBranches] {
        let rep = run(&project(r, &[]), mode);
        assert!(
            rep.errors
                .iter()
                .any(|e| e.file.ends_with("loop.h") && e.message.contains("symlink loop")),
            "{mode}: {:?}",
            rep.errors
        );
        if !running_as_root {
            assert!(
                rep.errors
                    .iter()
                    .any(|e| e.file.ends_with("locked.h") && e.message.contains("cannot read")),
                "{:?}",
                rep.errors
            );
        }
        assert!(closure(&rep, "a.cpp").contains(&"ok.h".to_string()));
    }
}

#[test]
fn conditional_errors_never_panic() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "src/a.cpp", b"#if\n#endif\n#if 1 +\n#endif\n#if (1\n#endif\n#else\n#endif\n#if 1/0\n#endif\n#define F(x) x\n#if F(1\n#endif\n#include\n#include <unterminated\n#if 1\n#include \"z.h\"\n");
    write(r, "src/z.h", b"#error stop here\n/* unterminated comment\n");
    let rep = run(&project(r, &[]), Mode::Preprocessed);
    assert!(rep.errors.len() >= 8, "{:#?}", rep.errors);
    assert!(
        rep.errors
            .iter()
            .any(|e| e.message.contains("#error stop here"))
    );
    assert!(
        rep.errors
            .iter()
            .any(|e| e.message.contains("unterminated comment"))
    );
    assert!(
        rep.errors
            .iter()
            .any(|e| e.message.contains("unterminated conditional"))
    );
}

#[test]
fn missing_includes_list_who_tried() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "src/a.cpp",
        b"#include <vector>\n#include \"gen/config.h\"\n",
    );
    write(r, "src/b.cpp", b"\n#include <vector>\n");
    let rep = run(&project(r, &[]), Mode::Preprocessed);
    let v = rep.missing.iter().find(|m| m.include == "vector").unwrap();
    assert_eq!(v.tu_count, 2);
    assert!(v.angle && v.likely_system);
    assert!(v.tried_by.iter().any(|s| s.file == "b.cpp" && s.line == 2));
    assert!(
        rep.missing
            .iter()
            .any(|m| m.include == "gen/config.h" && !m.angle)
    );
}

/// A [`chain_tree`] project in a new directory, scanned once ("preprocessed") by a session kept
/// for rescans: (directory, project, session, options, first report).
fn chain_session() -> (tempfile::TempDir, Project, Scanner, ScanOptions, Report) {
    let d = tempfile::tempdir().unwrap();
    chain_tree(d.path());
    let p = project(d.path(), &[]);
    let mut s = Scanner::new();
    let o = opts(Mode::Preprocessed);
    let first = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    (d, p, s, o, first)
}

fn chain_tree(r: &Path) {
    write(r, "src/a.cpp", b"#include \"x.h\"\n\n#include \"y.h\"\n");
    write(r, "src/b.cpp", b"#include \"big.h\"\n");
    write(r, "src/x.h", b"#include \"big.h\"\n");
    write(r, "src/y.h", b"int y;\n#include \"x.h\"\n");
    write(r, "src/big.h", "int a;\n".repeat(100).as_bytes());
}

#[test]
fn why_chain_and_what_if() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    chain_tree(r);
    for mode in [Mode::Preprocessed, Mode::AllBranches] {
        let rep = run(&project(r, &[]), mode);
        let c = rep.why_chain("big.h", Some("a.cpp")).unwrap();
        let steps: Vec<(String, u32)> = c.iter().map(|s| (s.file.clone(), s.line)).collect();
        assert_eq!(
            steps,
            vec![("a.cpp".into(), 1), ("x.h".into(), 1), ("big.h".into(), 0)]
        );
        let any = rep.why_chain("big.h", None).unwrap();
        assert_eq!(any.len(), 2, "b.cpp includes it directly");
        assert!(rep.why_chain("a.cpp", Some("b.cpp")).is_err());
        // a.cpp: 3 + x 1 + y 2 + big 100; b.cpp: 1 + 100
        assert_eq!(rep.total_parsed, 106 + 101);
        let w = rep
            .what_if(&WhatIf::RemoveInclude {
                from: "x.h".into(),
                to: "big.h".into(),
            })
            .unwrap();
        assert_eq!(w.total_parsed_after, 6 + 101);
        assert_eq!(w.tus_affected, 1);
        let w = rep.what_if(&WhatIf::EmptyFile("big.h".into())).unwrap();
        assert_eq!(w.total_parsed_after, 6 + 1);
        assert!(
            rep.what_if(&WhatIf::RemoveInclude {
                from: "big.h".into(),
                to: "x.h".into()
            })
            .is_err()
        );
        let det = rep.detail(rep.find("x.h").unwrap());
        assert_eq!(det.includers.len(), 2);
        assert_eq!(det.includes.len(), 1);
        assert_eq!(det.includes[0].path, "big.h");
        let hub = rep.headers.iter().find(|h| h.path == "y.h").unwrap();
        assert_eq!((hub.transitive_includes, hub.transitive_lines), (2, 101));
    }
}

#[test]
fn exports_have_stable_keys() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    chain_tree(r);
    let rep = run(&project(r, &[]), Mode::Preprocessed);
    let v: serde_json::Value = serde_json::from_str(&rep.to_json()).unwrap();
    for k in [
        "files",
        "translation_units",
        "total_lines",
        "total_parsed",
        "blowup",
        "mode",
        "scan_seconds",
        "headers",
    ] {
        assert!(v.get(k).is_some(), "missing key {k}");
    }
    assert_eq!(v["mode"], "preprocessed");
    let h = &v["headers"][0];
    for k in [
        "path",
        "lines",
        "tu_count",
        "contributed",
        "includes",
        "included_by",
    ] {
        assert!(h.get(k).is_some(), "missing header key {k}");
    }
    assert_eq!(h["path"], "big.h");
    assert_eq!(h["contributed"], 200);
    assert!(v["other_mode"]["total_parsed"].is_u64());
    let csv = rep.to_csv();
    assert!(csv.starts_with("path,lines,"));
    assert!(csv.contains("\nbig.h,100,0,2,200,"));
    let dot = rep.to_dot();
    assert!(dot.starts_with("digraph"));
    assert!(dot.contains("->"));
}

#[test]
fn rescan_reuses_unchanged_and_sees_changes() {
    let (d, p, mut s, o, first) = chain_session();
    let r = d.path();
    assert_eq!(first.stats.tus_evaluated, 2);
    let warm = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(warm.stats.files_read, 0);
    assert_eq!(warm.stats.tus_reused, 2);
    assert_eq!(warm.total_parsed, first.total_parsed);
    // Touch a header: more lines, same directives -> re-read, but no TU re-evaluated.
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(r, "src/big.h", "int a;\n".repeat(101).as_bytes());
    let t = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(t.stats.files_read, 1);
    assert_eq!(t.stats.tus_reused, 2);
    assert_eq!(t.total_parsed, first.total_parsed + 2);
    // Change an include: the TUs reaching it are re-evaluated.
    write(r, "src/y.h", b"int y;\n");
    let t = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(t.stats.tus_evaluated, 1);
    assert_eq!(closure(&t, "a.cpp"), vec!["big.h", "x.h", "y.h"]);
    // A new file that shadows another is seen (directory stamps).
    write(r, "src/sub/q.cpp", b"#include \"big.h\"\n");
    let t = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(t.translation_units, 3);
    // Clean rescan ignores everything.
    let c = s
        .scan(
            &p,
            &ScanOptions {
                clean: true,
                ..o.clone()
            },
            &Progress::default(),
        )
        .unwrap()
        .primary;
    assert_eq!(c.stats.tus_reused, 0);
    assert_eq!(c.total_parsed, t.total_parsed);
}

#[test]
fn rescan_sees_a_header_created_in_missing_directories() {
    // `a.cpp` includes `gen/deep/cfg.h` through two include dirs; none exists yet. A missing
    // directory is remembered through its deepest existing ancestor, so creating the whole
    // chain later (in the second include dir) must still be seen without a clean rescan.
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "src/a.cpp",
        b"#include <gen/deep/cfg.h>\n#include <other/x.h>\n",
    );
    fs::create_dir_all(r.join("inc1")).unwrap();
    fs::create_dir_all(r.join("inc2/gen")).unwrap();
    write(r, "inc1/other/x.h", b"int x;\n");
    let p = project(r, &["inc1", "inc2"]);
    let mut s = Scanner::new();
    let o = opts(Mode::Preprocessed);
    let first = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(first.missing.len(), 1);
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(r, "inc2/gen/deep/cfg.h", b"int a;\nint b;\n");
    let t = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert!(t.missing.is_empty(), "{:?}", t.missing);
    assert_eq!(t.stats.tus_evaluated, 1);
    assert_eq!(t.total_parsed, first.total_parsed + 2);
    // And again one level up: a new directory in the first include dir shadows the second.
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(r, "inc1/gen/deep/cfg.h", b"int c;\n");
    let t2 = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(t2.total_parsed, first.total_parsed + 1);
}

#[test]
fn all_branches_graph_is_kept_only_while_its_inputs_hold() {
    // The all-branches graph is reused by a rescan when no file's Header Hero include lines
    // changed. An `#include` inside a block comment changes those lines (Header Hero follows
    // it) but not the directives, so it must still be seen; so must a new TU.
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    chain_tree(r);
    write(r, "src/z.h", "int z;\n".repeat(7).as_bytes());
    let mut p = project(r, &[]);
    p.cache_file = Some(r.join("proj.cache"));
    let o = ScanOptions {
        use_disk_cache: true,
        ..opts(Mode::AllBranches)
    };
    let scan = || headers::scan(&p, &o, &Progress::default()).unwrap().primary;
    let first = scan();
    let warm = scan();
    assert_eq!(warm.total_parsed, first.total_parsed);
    assert_eq!(warm.to_csv(), first.to_csv());
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(
        r,
        "src/y.h",
        b"int y;\n#include \"x.h\"\n/*\n#include \"z.h\"\n*/\n",
    );
    let t = scan();
    assert_eq!(closure(&t, "a.cpp"), vec!["big.h", "x.h", "y.h", "z.h"]);
    // y.h grew by 3 lines and a.cpp now reaches z.h's 7 lines.
    assert_eq!(t.total_parsed, first.total_parsed + 3 + 7);
    // The preprocessed mode is not fooled by the comment.
    let pre = headers::scan(
        &p,
        &ScanOptions {
            mode: Mode::Preprocessed,
            ..o.clone()
        },
        &Progress::default(),
    )
    .unwrap()
    .primary;
    assert_eq!(closure(&pre, "a.cpp"), vec!["big.h", "x.h", "y.h"]);
    write(r, "src/c.cpp", b"#include \"z.h\"\n");
    let t2 = scan();
    assert_eq!(t2.translation_units, 3);
    assert_eq!(t2.total_parsed, t.total_parsed + 1 + 7);
}

#[test]
fn a_header_saved_through_a_rename_reevaluates_only_its_tus() {
    // Editors (and `sed -i`) save by writing a new file and renaming it over the old one: the
    // directory's time changes, but no name appeared or disappeared, so only the TUs reaching the
    // header are evaluated again. A rename that makes a probed name appear still counts.
    let (d, p, mut s, o, first) = chain_session();
    let r = d.path();
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(
        r,
        "src/y.h.tmp",
        b"int y;\n#include \"x.h\"\n#include \"big.h\"\n",
    );
    fs::rename(r.join("src/y.h.tmp"), r.join("src/y.h")).unwrap();
    let t = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(t.stats.tus_evaluated, 1, "only a.cpp reaches y.h");
    assert_eq!(t.total_parsed, first.total_parsed + 1);
    // A file renamed into a name the TUs probed and missed: seen.
    write(r, "src/b.cpp", b"#include \"big.h\"\n#include \"late.h\"\n");
    let t = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(t.missing.len(), 1);
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(r, "src/late.tmp", b"int l;\nint m;\n");
    fs::rename(r.join("src/late.tmp"), r.join("src/late.h")).unwrap();
    let t2 = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert!(t2.missing.is_empty());
    assert_eq!(t2.total_parsed, t.total_parsed + 2);
}

#[test]
fn a_name_with_a_trailing_slash_is_not_a_file() {
    // `x.h/` names a directory that does not exist: g++ says "No such file or directory".
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "src/a.cpp", b"#include \"x.h/\"\n#include \"y.h/.\"\n");
    write(r, "src/x.h", b"int x;\n");
    write(r, "src/y.h", b"int y;\n");
    let rep = run(&project(r, &[]), Mode::Preprocessed);
    assert_eq!(closure(&rep, "a.cpp"), Vec::<String>::new());
    assert_eq!(rep.missing.len(), 2, "{:?}", rep.missing);
}

#[test]
fn a_rescan_orders_the_all_branches_report_like_a_clean_scan() {
    // A TU added since the last scan gets the highest file id; the report must not depend on
    // ids (its include lists follow the walk's order), or a rescan and a clean scan disagree.
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "src/b.cpp", b"#include \"x.h\"\n#include \"z.h\"\n");
    write(r, "src/z.h", b"#include \"x.h\"\n#include \"y.h\"\n");
    write(r, "src/x.h", b"int x;\n");
    write(r, "src/y.h", b"int y;\n");
    let p = project(r, &[]);
    let o = opts(Mode::AllBranches);
    let mut s = Scanner::new();
    s.scan(&p, &o, &Progress::default()).unwrap();
    write(r, "src/a.cpp", b"#include \"y.h\"\n");
    let warm = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    let clean = run(&p, Mode::AllBranches);
    let rows = |rep: &Report| -> Vec<(String, Vec<String>, Vec<String>)> {
        rep.headers
            .iter()
            .map(|h| (h.path.clone(), h.includes.clone(), h.included_by.clone()))
            .collect()
    };
    assert_eq!(rows(&warm), rows(&clean));
}

#[cfg(unix)]
#[test]
fn a_repointed_system_header_symlink_is_seen_by_a_rescan() {
    // A system header's reported path is its realpath when shorter (GCC's
    // -fcanonical-system-headers): re-pointing the symlink changes it without changing which
    // names exist.
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "src/a.cpp", b"#include <h.h>\n");
    write(r, "a.h", b"int a;\n");
    write(r, "b.h", b"int b;\nint c;\n");
    fs::create_dir_all(r.join("some/sys")).unwrap();
    std::os::unix::fs::symlink(r.join("a.h"), r.join("some/sys/h.h")).unwrap();
    let mut p = project(r, &[]);
    p.system_dirs = vec![r.join("some/sys")];
    let o = ScanOptions {
        count_system: true,
        ..opts(Mode::Preprocessed)
    };
    let mut s = Scanner::new();
    let first = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(closure(&first, "a.cpp"), vec!["a.h"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    fs::remove_file(r.join("some/sys/h.h")).unwrap();
    std::os::unix::fs::symlink(r.join("b.h"), r.join("some/sys/h.h")).unwrap();
    let t = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(closure(&t, "a.cpp"), vec!["b.h"]);
}

#[test]
fn disk_cache_roundtrip() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    chain_tree(r);
    let mut p = project(r, &[]);
    p.cache_file = Some(r.join("proj.cache"));
    let o = ScanOptions {
        use_disk_cache: true,
        ..opts(Mode::Preprocessed)
    };
    let a = headers::scan(&p, &o, &Progress::default()).unwrap().primary;
    assert!(r.join("proj.cache").is_file());
    let b = headers::scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(b.stats.files_read, 0);
    assert_eq!(b.stats.tus_reused, 2);
    assert_eq!(a.total_parsed, b.total_parsed);
    assert_eq!(a.to_csv(), b.to_csv());
    // A corrupt cache is ignored with a note, never an error.
    fs::write(r.join("proj.cache"), b"CFHDRC05garbage").unwrap();
    let c = headers::scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(c.total_parsed, a.total_parsed);
    assert!(c.notes.iter().any(|n| n.contains("cache not used")));
}

#[test]
fn compile_commands_per_tu_flags() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "src/a.cpp",
        b"#ifdef USE_X\n#include \"x.h\"\n#endif\n#include <y.h>\n",
    );
    write(
        r,
        "src/b.cpp",
        b"#ifdef USE_X\n#include \"x.h\"\n#endif\n#include <y.h>\n",
    );
    write(r, "src/x.h", b"int x;\n");
    write(r, "i1/y.h", b"int y1;\n");
    write(r, "i2/y.h", b"int y2;\n");
    let cc = serde_json::json!([
        {"directory": r.join("src"), "file": "a.cpp", "command": "g++ -DUSE_X -I../i1 -c a.cpp"},
        {"directory": r.join("src"), "file": "b.cpp", "arguments": ["g++", "-I", "../i2", "-c", "b.cpp"]},
    ]);
    write(r, "cc.json", cc.to_string().as_bytes());
    let mut p = project(r, &[]);
    p.compile_commands = Some(r.join("cc.json"));
    let rep = run(&p, Mode::Preprocessed);
    assert_eq!(rep.translation_units, 2);
    let g = &rep.graph;
    let cl = |tu: &str| -> Vec<PathBuf> {
        let t = g
            .tus
            .iter()
            .find(|t| g.nodes[t.node as usize].path.ends_with(tu))
            .unwrap();
        t.closure
            .iter()
            .map(|&f| g.nodes[f as usize].abs.clone())
            .collect()
    };
    assert!(cl("a.cpp").contains(&r.join("src/x.h")));
    assert!(cl("a.cpp").contains(&r.join("i1/y.h")));
    assert!(!cl("b.cpp").contains(&r.join("src/x.h")));
    assert!(cl("b.cpp").contains(&r.join("i2/y.h")));
    // Bad input: a clear error naming the file.
    write(r, "bad.json", b"[{\"file\": 1}");
    p.compile_commands = Some(r.join("bad.json"));
    let e = headers::scan(&p, &opts(Mode::Preprocessed), &Progress::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("bad.json"), "{e}");
}

#[test]
fn cancel_stops_the_scan() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    chain_tree(r);
    let pr = Progress::default();
    pr.cancel();
    let e = headers::scan(&project(r, &[]), &opts(Mode::Preprocessed), &pr)
        .err()
        .unwrap();
    assert_eq!(e, headers::ScanError::Cancelled);
}

#[test]
fn missing_root_is_a_clear_error() {
    let p = Project {
        roots: vec![PathBuf::from("/nonexistent/root/xyz")],
        compiler: CompilerChoice::None,
        ..Default::default()
    };
    let e = headers::scan(&p, &opts(Mode::Preprocessed), &Progress::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("/nonexistent/root/xyz"));
}

#[test]
fn watch_rescans_after_a_change() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().to_path_buf();
    chain_tree(&r);
    let p = project(&r, &[]);
    let stop = clipforge::task::CancelToken::new();
    let mut s = Scanner::new();
    let mut totals = Vec::new();
    let (r2, stop2) = (r.clone(), stop.clone());
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        write(&r2, "src/big.h", "int a;\n".repeat(150).as_bytes());
        // Safety net: never let the test hang.
        std::thread::sleep(std::time::Duration::from_secs(20));
        stop2.cancel();
    });
    headers::watch::watch(&p, &opts(Mode::Preprocessed), &mut s, &stop, |res| {
        totals.push(res.unwrap().primary.total_parsed);
        totals.len() < 2
    })
    .unwrap();
    stop.cancel();
    drop(writer);
    assert_eq!(totals[0], 207);
    assert_eq!(
        totals.get(1),
        Some(&(207 + 100)),
        "rescan after the change: {totals:?}"
    );
}

#[test]
fn a_mapped_cache_carries_existence_answers_through_saves() {
    // The one-shot CLI maps the cache file and leaves its existence answers encoded until
    // something needs them; a save in between copies them as they are. Each step is a fresh
    // process's view: a new scanner loading what the previous one saved.
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "src/a.cpp", b"#include \"gen.h\"\n#include \"x.h\"\n");
    write(r, "src/x.h", b"int x;\n");
    let mut p = project(r, &[]);
    p.cache_file = Some(r.join("proj.cache"));
    let o = ScanOptions {
        use_disk_cache: true,
        ..opts(Mode::Preprocessed)
    };
    let scan = || {
        let mut s = Scanner::new();
        s.map_cache_file = true;
        headers::scan_cached(&mut s, &p, &o, &Progress::default())
            .unwrap()
            .primary
    };
    let first = scan();
    assert_eq!(first.missing.len(), 1, "gen.h does not exist yet");
    // Rewritten in place: its directory's time does not change, the answers are not decoded,
    // and the scan is saved (a file was read again).
    write(r, "src/x.h", b"int x;\nint x2;\n");
    let second = scan();
    assert_eq!(second.stats.files_read, 1);
    assert_eq!(second.total_parsed, first.total_parsed + 1);
    // The name the TU missed appears: the saved answers are read and found out of date.
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(r, "src/gen.h", b"int g;\n");
    let third = scan();
    assert!(
        !third.notes.iter().any(|n| n.contains("cache not used")),
        "{:?}",
        third.notes
    );
    assert!(third.stats.cache_used);
    assert_eq!(third.stats.files_read, 1, "only gen.h is read");
    assert!(third.missing.is_empty());
    assert_eq!(closure(&third, "a.cpp"), vec!["gen.h", "x.h"]);
}

#[test]
fn code_lines_hide_no_comment_or_literal_boundary() {
    // Inside code lines the lexer jumps between the few bytes that matter: a digit separator
    // is not a quote, a raw string or a literal can hold `/*`, a prefixed char literal is one.
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    for h in [
        "in1.h", "in2.h", "in3.h", "in4.h", "out1.h", "out2.h", "out3.h",
    ] {
        write(r, &format!("src/{h}"), b"int h;\n");
    }
    write(
        r,
        "src/a.cpp",
        concat!(
            "int a = 1'000; /*\n#include \"out1.h\"\n*/\n",
            "auto s = R\"x(/*)x\"; int k = 0x1'F'F;\n#include \"in1.h\"\n",
            "char c = u8'/'; /*\n#include \"out2.h\" */\n",
            "int x1 = 0; auto t = \"a\\\"/*\"; float f = .5'0;\n#include \"in2.h\"\n",
            "auto u = LR\"(\n#include \"out3.h\"\n)\"; int y = x1+1'0;\n#include \"in3.h\"\n",
            "int z = 2 / 3; // a comment \\\n#include \"out3.h\"\n#include \"in4.h\"\n",
        )
        .as_bytes(),
    );
    let rep = run(&project(r, &[]), Mode::Preprocessed);
    assert_eq!(
        closure(&rep, "a.cpp"),
        vec!["in1.h", "in2.h", "in3.h", "in4.h"]
    );
    assert!(rep.errors.is_empty(), "{:?}", rep.errors);
}
