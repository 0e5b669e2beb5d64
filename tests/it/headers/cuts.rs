//! The saving of every `#include` directive (`--cuts`, module `headers::cuts`):
//!
//! - on small trees written here, the figures of the dominator analysis against counts made by
//!   hand (another path to the header keeps it; a header and what only it pulls in go), the macro
//!   flag, and the exact re-evaluation catching what the estimate cannot see;
//! - on a real tree (a copy of this machine's libstdc++ used by ten TUs, as the agreement tests
//!   pick it), every cut marked exact against the Total Parsed difference of a fresh scan of the
//!   tree with that one directive blanked (or that header emptied), line for line; and the
//!   estimate of every cut without a flag equal to its exact figure;
//! - the CLI's table (thousands separators) and the JSON's `cuts` keys.

use crate::common;

use crate::common::header_tree::{copy_libstdcxx, write};
use clipforge::headers::cuts::{Cut, CutKind, thousands};
use clipforge::headers::util::count_lines;
use clipforge::headers::{self, CompilerChoice, Mode, Progress, Project, Report, ScanOptions};
use std::fs;
use std::path::{Path, PathBuf};

fn scan(p: &Project, mode: Mode, cuts: Option<usize>) -> Report {
    let o = ScanOptions {
        mode,
        use_disk_cache: false,
        cuts,
        ..Default::default()
    };
    headers::scan(p, &o, &Progress::default()).unwrap().primary
}

fn find<'a>(cuts: &'a [Cut], includer: &str, line: u32) -> Option<&'a Cut> {
    cuts.iter()
        .find(|c| c.kind == CutKind::Include && c.includer.ends_with(includer) && c.line == line)
}

fn empty<'a>(cuts: &'a [Cut], header: &str) -> Option<&'a Cut> {
    cuts.iter()
        .find(|c| c.kind == CutKind::EmptyHeader && c.included.ends_with(header))
}

fn lines(root: &Path, rel: &str) -> i64 {
    count_lines(&fs::read(root.join(rel)).unwrap()) as i64
}

/// a.cpp includes x.h and y.h, b.cpp only y.h; both headers include big.h, which includes
/// leaf.h. Removing a directive saves only what no other path in that TU still reaches.
#[test]
fn savings_follow_the_other_paths_in_each_tu() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let filler = "int f;\n".repeat(40);
    write(
        r,
        "src/a.cpp",
        "#include \"x.h\"\n#include \"y.h\"\nint a;\n",
    );
    write(r, "src/b.cpp", "#include \"y.h\"\n");
    write(r, "src/x.h", "#pragma once\n#include \"big.h\"\nint x;\n");
    write(
        r,
        "src/y.h",
        "#pragma once\n\n#include \"big.h\"\nint y1;\nint y2;\n",
    );
    write(
        r,
        "src/big.h",
        &format!("#ifndef BIG_H\n#define BIG_H\n#include \"leaf.h\"\n{filler}#endif\n"),
    );
    write(r, "src/leaf.h", &format!("#pragma once\n{filler}"));
    let p = Project {
        roots: vec![r.join("src")],
        compiler: CompilerChoice::None,
        ..Default::default()
    };
    let (x, y, big, leaf) = (
        lines(r, "src/x.h"),
        lines(r, "src/y.h"),
        lines(r, "src/big.h"),
        lines(r, "src/leaf.h"),
    );
    for mode in [Mode::Preprocessed, Mode::AllBranches] {
        let rep = scan(&p, mode, Some(0));
        let cuts = rep.cuts.as_ref().expect("cuts");
        // a.cpp:1 -> x.h: big.h stays through y.h.
        let c = find(cuts, "a.cpp", 1).unwrap();
        assert_eq!((c.lines_saved, c.tus_affected), (x, 1), "{mode}");
        // a.cpp:2 -> y.h: only y.h goes.
        assert_eq!(find(cuts, "a.cpp", 2).unwrap().lines_saved, y);
        // y.h:3 -> big.h: kept in a.cpp (through x.h), gone with leaf.h in b.cpp.
        let c = find(cuts, "y.h", 3).unwrap();
        assert_eq!((c.lines_saved, c.tus_affected), (big + leaf, 1));
        // x.h:2 -> big.h saves nothing anywhere: not listed.
        assert!(find(cuts, "x.h", 2).is_none());
        // Emptying big.h: its lines in both TUs, and leaf.h which only it includes.
        let c = empty(cuts, "big.h").unwrap();
        assert_eq!((c.lines_saved, c.tus_affected), (2 * (big + leaf), 2));
        // The figures on a diamond are exact without re-evaluation.
        assert!(cuts.iter().all(|c| !c.macros_tested_later), "{mode}");
        // The list is sorted, best first.
        assert!(
            cuts.windows(2)
                .all(|w| w[0].lines_saved >= w[1].lines_saved)
        );
    }
}

/// cfg.h defines FEATURE, which feature.h tests before including heavy.h: removing cfg.h also
/// drops heavy.h, which the graph alone cannot see. The estimate is flagged; the exact check
/// (the TU evaluated again without the directive) gets the real figure.
#[test]
fn macro_effects_are_flagged_and_confirmed_exactly() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let filler = "int h;\n".repeat(50);
    write(
        r,
        "src/a.cpp",
        "#include \"cfg.h\"\n#include \"feature.h\"\n",
    );
    write(r, "src/cfg.h", "#pragma once\n#define FEATURE 1\n");
    write(
        r,
        "src/feature.h",
        "#pragma once\n#ifdef FEATURE\n#include \"heavy.h\"\n#endif\nint f;\n",
    );
    write(r, "src/heavy.h", &format!("#pragma once\n{filler}"));
    let p = Project {
        roots: vec![r.join("src")],
        compiler: CompilerChoice::None,
        ..Default::default()
    };
    let (cfg, heavy) = (lines(r, "src/cfg.h"), lines(r, "src/heavy.h"));
    let est = scan(&p, Mode::Preprocessed, Some(0));
    let c = find(est.cuts.as_ref().unwrap(), "a.cpp", 1).unwrap();
    assert_eq!(c.lines_saved, cfg);
    assert!(c.macros_tested_later && !c.exact);
    // heavy.h's directive does not depend on a macro defined by what it removes.
    let h = find(est.cuts.as_ref().unwrap(), "feature.h", 3).unwrap();
    assert!(!h.macros_tested_later);
    let exact = scan(&p, Mode::Preprocessed, Some(5));
    let cuts = exact.cuts.as_ref().unwrap();
    let c = find(cuts, "a.cpp", 1).unwrap();
    assert!(c.exact);
    assert_eq!((c.lines_saved, c.tus_affected), (cfg + heavy, 1));
    // The exact figure moved it above heavy.h's own directive.
    let pos = |f: &str, l: u32| {
        cuts.iter()
            .position(|c| c.kind == CutKind::Include && c.includer.ends_with(f) && c.line == l)
    };
    assert!(pos("a.cpp", 1).unwrap() < pos("feature.h", 3).unwrap());
}

/// Removing one of two directives naming the same file is flagged; the exact figure knows
/// whether the other one is active.
#[test]
fn a_file_included_on_two_lines() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "src/a.cpp",
        "#ifdef NEVER\n#include \"h.h\"\n#else\n#include \"h.h\"\n#endif\n",
    );
    write(r, "src/b.cpp", "#include \"h.h\"\n#include \"h.h\"\n");
    write(r, "src/h.h", &"int h;\n".repeat(30));
    let p = Project {
        roots: vec![r.join("src")],
        compiler: CompilerChoice::None,
        ..Default::default()
    };
    let h = lines(r, "src/h.h");
    let rep = scan(&p, Mode::Preprocessed, Some(10));
    let cuts = rep.cuts.as_ref().unwrap();
    // a.cpp:4 is the only active one: removing it saves h.h.
    let c = find(cuts, "a.cpp", 4).unwrap();
    assert!(c.exact);
    assert_eq!(c.lines_saved, h);
    // b.cpp:1: line 2 still includes it (h.h has no guard: it is parsed twice, counted once).
    assert!(find(cuts, "b.cpp", 1).is_none_or(|c| c.exact && c.lines_saved == 0));
}

/// `line` (1-based) of the file replaced by an empty line, line ends kept.
fn blank_line(text: &[u8], line: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut n = 1;
    let mut i = 0;
    while i < text.len() {
        let end = text[i..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |p| i + p + 1);
        let chunk = &text[i..end];
        if n == line {
            let nl = chunk.len()
                - chunk
                    .iter()
                    .rev()
                    .take_while(|&&b| b == b'\n' || b == b'\r')
                    .count();
            out.extend_from_slice(&chunk[nl..]);
        } else {
            out.extend_from_slice(chunk);
        }
        n += 1;
        i = end;
    }
    out
}

/// The real-tree check: every exact cut equals a fresh scan of the edited tree.
#[test]
fn exact_cuts_equal_a_clean_rescan_of_the_edited_real_tree() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    if copy_libstdcxx(root).is_none() {
        return;
    }
    let std_headers = [
        "vector",
        "map",
        "string",
        "memory",
        "algorithm",
        "functional",
        "iostream",
        "unordered_map",
        "optional",
        "tuple",
        "sstream",
        "set",
    ];
    // Each TU includes three of them: the library's own directives then save more than a
    // TU's (several TUs share them), so both kinds are among the top.
    for (i, h) in std_headers.iter().enumerate() {
        let text: String = (0..3)
            .map(|k| format!("#include <{}>\n", std_headers[(i + k) % std_headers.len()]))
            .collect();
        write(
            root,
            &format!("src/tu_{h}.cpp"),
            &format!("{text}int main() {{}}\n"),
        );
    }
    let p = Project {
        roots: vec![root.join("src")],
        include_dirs: vec![root.join("inc")],
        std: Some("c++17".into()),
        compiler: CompilerChoice::Named("g++".into()),
        ..Default::default()
    };
    let top = 20;
    let est = scan(&p, Mode::Preprocessed, Some(0));
    let rep = scan(&p, Mode::Preprocessed, Some(top));
    assert_eq!(est.total_parsed, rep.total_parsed);
    let cuts = rep.cuts.as_ref().unwrap();
    let exact: Vec<&Cut> = cuts.iter().filter(|c| c.exact).collect();
    assert!(exact.len() >= top, "{} exact cuts", exact.len());
    assert!(cuts[..top].iter().all(|c| c.exact));
    let kinds = |k| exact.iter().filter(|c| c.kind == k).count();
    assert!(kinds(CutKind::Include) > 0 && kinds(CutKind::EmptyHeader) > 0);
    // Directives inside the library (not only the TUs' own) are among them.
    assert!(
        exact
            .iter()
            .any(|c| c.kind == CutKind::Include && !c.includer.contains("tu_"))
    );
    let est_cuts = est.cuts.as_ref().unwrap();
    let mut compared_estimates = 0;
    for c in &exact {
        let file: PathBuf = rep.graph.nodes[c.from as usize].abs.clone();
        let before = fs::read(&file).unwrap();
        let edited = match c.kind {
            CutKind::Include => blank_line(&before, c.line),
            CutKind::EmptyHeader => Vec::new(),
        };
        fs::write(&file, &edited).unwrap();
        let after = scan(&p, Mode::Preprocessed, None);
        fs::write(&file, &before).unwrap();
        assert_eq!(
            rep.total_parsed as i64 - after.total_parsed as i64,
            c.lines_saved,
            "{:?} {}:{} -> {}",
            c.kind,
            c.includer,
            c.line,
            c.included
        );
        // Without a flag, the one-analysis estimate was already the exact figure.
        let e = est_cuts
            .iter()
            .find(|e| {
                e.kind == c.kind
                    && e.includer == c.includer
                    && e.line == c.line
                    && e.included == c.included
            })
            .expect("estimated too");
        if !e.macros_tested_later && !e.other_directives {
            assert_eq!(
                (e.lines_saved, e.tus_affected),
                (c.lines_saved, c.tus_affected)
            );
            compared_estimates += 1;
        }
    }
    assert!(compared_estimates > 0);
}

#[test]
fn cli_table_and_json() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let filler = "int h;\n".repeat(1200);
    write(r, "src/a.cpp", "#include \"big.h\"\n");
    write(r, "src/b.cpp", "#include \"big.h\"\n");
    write(r, "src/big.h", &filler);
    let out_json = r.join("r.json");
    let run = |extra: &[&str]| {
        let o = common::run_ok(
            common::clipforge()
                .args(["headers", "--compiler", "none", "--no-cache", "-q"])
                .arg(r.join("src"))
                .arg("--json")
                .arg(&out_json)
                .args(extra),
        );
        let j: serde_json::Value = serde_json::from_slice(&fs::read(&out_json).unwrap()).unwrap();
        (String::from_utf8_lossy(&o.stdout).into_owned(), j)
    };
    let (text, j) = run(&["--cuts", "2"]);
    assert!(text.contains("Top cuts"), "{text}");
    assert!(text.contains("2,400"), "{text}");
    assert!(text.contains("a.cpp:1  #include big.h"), "{text}");
    let cuts = j["cuts"].as_array().unwrap();
    assert_eq!(cuts.len(), 3);
    let first = &cuts[0];
    for k in [
        "includer",
        "line",
        "included",
        "lines_saved",
        "tus_affected",
        "exact",
        "kind",
        "macros_tested_later",
        "other_directives",
    ] {
        assert!(first.get(k).is_some(), "{k} missing: {first}");
    }
    assert_eq!(first["kind"], "empty_header");
    assert_eq!(first["lines_saved"], 2400);
    assert_eq!(cuts[1]["lines_saved"], 1200);
    assert_eq!(cuts[1]["exact"], true);
    // Without --cuts the report is unchanged.
    let (text, j) = run(&[]);
    assert!(!text.contains("Top cuts"));
    assert!(j.get("cuts").is_none());
}

#[test]
fn thousands_separators() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1000), "1,000");
    assert_eq!(thousands(12_345_678), "12,345,678");
    assert_eq!(thousands(-1_234), "-1,234");
}
