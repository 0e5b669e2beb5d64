//! Several build configurations in one scan (`--config NAME=compile_commands.json`,
//! `Project::configs`):
//!
//! - on a real tree (a copy of this machine's libstdc++ used by eight TUs, through two
//!   compilation databases that differ by `-D_GLIBCXX_DEBUG`, which flips hundreds of `#if`s),
//!   each configuration's figures and per-header TU counts equal a scan of that configuration
//!   alone, the combined ones are their sums, and the cuts' estimates are summed too;
//! - a rescan reuses every TU of every configuration;
//! - the CLI: a summary line per configuration, the JSON's `configs` and `tu_count_by_config`,
//!   and clear errors for a bad `--config`, a name given twice, a missing file.

use crate::common;

use crate::common::header_tree::{copy_libstdcxx, write};
use clipforge::headers::cuts::CutKind;
use clipforge::headers::{
    self, CompilerChoice, Configuration, Mode, Progress, Project, Report, ScanOptions,
};
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// A compilation database of every `src/*.cpp` with `extra` flags.
fn compdb(root: &Path, name: &str, extra: &str) -> PathBuf {
    let mut tus: Vec<String> = fs::read_dir(root.join("src"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cpp"))
        .collect();
    tus.sort();
    let entries: Vec<serde_json::Value> = tus
        .iter()
        .map(|t| {
            serde_json::json!({
                "directory": root.join("src"),
                "file": t,
                "command": format!("g++ -std=c++17 -I../inc {extra} -c {t}"),
            })
        })
        .collect();
    let p = root.join(name);
    fs::write(&p, serde_json::Value::Array(entries).to_string()).unwrap();
    p
}

fn scan(p: &Project, cuts: Option<usize>) -> Report {
    let o = ScanOptions {
        mode: Mode::Preprocessed,
        use_disk_cache: false,
        cuts,
        ..Default::default()
    };
    headers::scan(p, &o, &Progress::default()).unwrap().primary
}

fn tu_counts(r: &Report) -> HashMap<String, u32> {
    r.headers
        .iter()
        .map(|h| (h.path.clone(), h.tu_count))
        .collect()
}

/// Each configuration's figures equal its own scan; the combined ones are their sums.
#[test]
fn two_configurations_of_a_real_tree_equal_their_own_scans() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    if copy_libstdcxx(root).is_none() {
        return;
    }
    for h in [
        "vector", "map", "string", "memory", "set", "deque", "list", "bitset",
    ] {
        write(
            root,
            &format!("src/tu_{h}.cpp"),
            &format!("#include <{h}>\n#include <algorithm>\nint main() {{}}\n"),
        );
    }
    let release = compdb(root, "release.json", "-DNDEBUG");
    let debug = compdb(root, "debug.json", "-D_GLIBCXX_DEBUG");
    let base = Project {
        std: Some("c++17".into()),
        compiler: CompilerChoice::Named("g++".into()),
        ..Default::default()
    };
    let single = |cc: &Path| {
        scan(
            &Project {
                compile_commands: Some(cc.to_path_buf()),
                ..base.clone()
            },
            Some(0),
        )
    };
    let singles = [single(&release), single(&debug)];
    let both = scan(
        &Project {
            configs: vec![
                Configuration {
                    name: "release".into(),
                    compile_commands: release.clone(),
                },
                Configuration {
                    name: "debug".into(),
                    compile_commands: debug.clone(),
                },
            ],
            ..base.clone()
        },
        Some(0),
    );
    // The define flips #ifs: the two configurations differ (debug mode pulls in debug/*.h).
    assert!(singles[1].total_parsed > singles[0].total_parsed);
    assert!(singles[1].files > singles[0].files);
    assert_eq!(both.configs.len(), 2);
    for (c, s) in both.configs.iter().zip(&singles) {
        assert_eq!(c.translation_units, s.translation_units, "{}", c.name);
        assert_eq!(c.files, s.files, "{}", c.name);
        assert_eq!(c.total_lines, s.total_lines, "{}", c.name);
        assert_eq!(c.total_parsed, s.total_parsed, "{}", c.name);
    }
    assert_eq!(both.configs[0].name, "release");
    assert_eq!(
        both.total_parsed,
        singles[0].total_parsed + singles[1].total_parsed
    );
    assert_eq!(
        both.translation_units,
        singles[0].translation_units + singles[1].translation_units
    );
    // Files: the union (debug's closure holds release's here, plus its own debug headers).
    assert!(both.files >= singles[1].files);
    // Every header's count per configuration equals that configuration's own scan.
    let counts = [tu_counts(&singles[0]), tu_counts(&singles[1])];
    let mut only_debug = 0;
    for h in &both.headers {
        let by = h.tu_count_by_config.as_ref().expect("tu_count_by_config");
        assert_eq!(by.len(), 2);
        for (i, c) in counts.iter().enumerate() {
            assert_eq!(by[i], c.get(&h.path).copied().unwrap_or(0), "{}", h.path);
        }
        assert_eq!(h.tu_count, by[0] + by[1], "{}", h.path);
        let cb = h.contributed_by_config.as_ref().unwrap();
        assert_eq!(h.contributed, cb[0] + cb[1]);
        if by[0] == 0 && by[1] > 0 {
            only_debug += 1;
        }
    }
    assert!(only_debug > 10, "{only_debug} headers only debug reaches");
    // Cuts are ranked by the combined saving: each estimate is the sum of the two scans'.
    let cuts = both.cuts.as_ref().unwrap();
    let key = |c: &headers::cuts::Cut| {
        (
            c.kind == CutKind::Include,
            c.includer.clone(),
            c.line,
            c.included.clone(),
        )
    };
    let per: Vec<HashMap<_, i64>> = singles
        .iter()
        .map(|s| {
            s.cuts
                .as_ref()
                .unwrap()
                .iter()
                .map(|c| (key(c), c.lines_saved))
                .collect()
        })
        .collect();
    let mut compared = 0;
    for c in cuts.iter().take(200) {
        let k = key(c);
        let sum = per[0].get(&k).copied().unwrap_or(0) + per[1].get(&k).copied().unwrap_or(0);
        assert_eq!(c.lines_saved, sum, "{k:?}");
        compared += 1;
    }
    assert!(compared >= 50, "{compared}");
    assert!(
        cuts.windows(2)
            .all(|w| w[0].lines_saved >= w[1].lines_saved)
    );
}

fn small_tree(r: &Path) -> (PathBuf, PathBuf) {
    write(
        r,
        "src/a.cpp",
        "#ifdef BIG\n#include \"big.h\"\n#endif\n#include \"small.h\"\n",
    );
    write(r, "src/b.cpp", "#include \"small.h\"\n");
    write(r, "src/big.h", &"int big;\n".repeat(30));
    write(r, "src/small.h", "int small;\n");
    let cc = |name: &str, extra: &str| {
        let j = serde_json::json!([
            {"directory": r.join("src"), "file": "a.cpp", "command": format!("cc -I. {extra} -c a.cpp")},
            {"directory": r.join("src"), "file": "b.cpp", "command": format!("cc -I. {extra} -c b.cpp")},
        ]);
        let p = r.join(name);
        fs::write(&p, j.to_string()).unwrap();
        p
    };
    (cc("plain.json", ""), cc("big.json", "-DBIG"))
}

/// A rescan in the same session reuses every TU of both configurations, with the same figures.
#[test]
fn a_rescan_reuses_every_configuration() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let (plain, big) = small_tree(r);
    let p = Project {
        configs: vec![
            Configuration {
                name: "plain".into(),
                compile_commands: plain,
            },
            Configuration {
                name: "big".into(),
                compile_commands: big,
            },
        ],
        compiler: CompilerChoice::None,
        ..Default::default()
    };
    let o = ScanOptions {
        use_disk_cache: false,
        ..Default::default()
    };
    let mut s = headers::Scanner::new();
    let first = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    let again = s.scan(&p, &o, &Progress::default()).unwrap().primary;
    assert_eq!(first.stats.tus_evaluated, 4);
    assert_eq!(again.stats.tus_evaluated, 0);
    assert_eq!(again.stats.tus_reused, 4);
    assert_eq!(first.configs, again.configs);
    // Hand counts: a.cpp is 4 lines, b.cpp 1, small.h 1, big.h 30.
    assert_eq!(first.configs[0].total_parsed, 4 + 1 + 1 + 1);
    assert_eq!(first.configs[1].total_parsed, 4 + 30 + 1 + 1 + 1);
    assert_eq!(first.total_parsed, 7 + 37);
    let big_h = first
        .headers
        .iter()
        .find(|h| h.path.ends_with("big.h"))
        .unwrap();
    assert_eq!(big_h.tu_count_by_config, Some(vec![0, 1]));
    assert_eq!(big_h.contributed_by_config, Some(vec![0, 30]));
}

fn clipforge(args: &[&str]) -> std::process::Output {
    common::clipforge()
        .arg("headers")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_summary_lines_json_and_errors() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let (plain, big) = small_tree(r);
    let a = format!("plain={}", plain.display());
    let b = format!("big={}", big.display());
    let json = r.join("out.json");
    let o = clipforge(&[
        "--config",
        &a,
        "--config",
        &b,
        "--compiler",
        "none",
        "--no-cache",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("config plain: 2 TUs, 3 files, Total Lines 6, Total Parsed 7"),
        "{out}"
    );
    assert!(
        out.contains("config big: 2 TUs, 4 files, Total Lines 36, Total Parsed 37"),
        "{out}"
    );
    assert!(out.contains("TUs plain"), "{out}");
    let v: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["total_parsed"], 44);
    assert_eq!(v["configs"][1]["name"], "big");
    assert_eq!(v["configs"][1]["translation_units"], 2);
    assert_eq!(v["configs"][1]["total_parsed"], 37);
    assert_eq!(v["configs"][0]["total_lines"], 6);
    let small = v["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"].as_str().unwrap().ends_with("small.h"))
        .unwrap();
    assert_eq!(small["tu_count_by_config"], serde_json::json!([2, 2]));
    assert_eq!(small["tu_count"], 4);
    // Without --config the JSON has no per-configuration keys.
    let o = clipforge(&[
        "--compile-commands",
        plain.to_str().unwrap(),
        "--compiler",
        "none",
        "--no-cache",
        "--json",
        "-",
        "-q",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("tu_count_by_config") && !text.contains("\"configs\""));
    // Bad input: clear errors, exit 2.
    for (args, msg) in [
        (
            vec!["--config", "noequals"],
            "expected NAME=path/to/compile_commands.json",
        ),
        (
            vec!["--config", &a, "--config", &a],
            "configuration name \"plain\" given twice",
        ),
        (
            vec!["--config", "x=/nonexistent/cc.json"],
            "/nonexistent/cc.json",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--compiler", "none", "--no-cache"]);
        let o = clipforge(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(msg), "{err}");
    }
}
