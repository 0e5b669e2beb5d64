//! `clipforge headers … --churn 90d` on a real git repository made here, with commits dated
//! through GIT_AUTHOR_DATE / GIT_COMMITTER_DATE inside and outside the period. The per-header
//! commit counts are checked against `git log --since … --format= --name-only` counted
//! independently, the TU rebuilds against the TUs each header is known to reach, and a tree
//! without git (or without the `git` command) says so clearly.

use crate::common;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Command;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn git(root: &Path, args: &[&str], date: Option<u64>) -> String {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(root)
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1");
    if let Some(d) = date {
        c.env("GIT_AUTHOR_DATE", format!("@{d} +0000"))
            .env("GIT_COMMITTER_DATE", format!("@{d} +0000"));
    }
    let o = c.output().expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn have_git() -> bool {
    Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The tree: three TUs; `common.h` reaches all three, `mid.h` and `leaf.h` two, `only_c.h`
/// one, `cond.h` none in preprocessed mode (behind `#if 0`, so it never rebuilds anything).
fn tree(r: &Path) {
    write(
        r,
        "src/a.cpp",
        "#include \"common.h\"\n#include \"mid.h\"\n#if 0\n#include \"cond.h\"\n#endif\n",
    );
    write(r, "src/b.cpp", "#include \"mid.h\"\n");
    write(
        r,
        "src/c.cpp",
        "#include \"common.h\"\n#include \"only_c.h\"\n",
    );
    write(r, "src/common.h", "#pragma once\nint common;\n");
    write(
        r,
        "src/mid.h",
        "#pragma once\n#include \"common.h\"\n#include \"leaf.h\"\n",
    );
    write(r, "src/leaf.h", "#pragma once\nint leaf;\n");
    write(r, "src/only_c.h", "#pragma once\nint only_c;\n");
    write(r, "src/cond.h", "#pragma once\nint cond;\n");
    write(r, "README", "not a source file\n");
}

fn reach(path: &str) -> u64 {
    match path {
        "src/common.h" => 3,
        "src/mid.h" | "src/leaf.h" => 2,
        "src/only_c.h" | "src/a.cpp" | "src/b.cpp" | "src/c.cpp" => 1,
        _ => 0,
    }
}

fn tus_of(path: &str) -> &'static [&'static str] {
    match path {
        "src/common.h" => &["a", "b", "c"],
        "src/mid.h" | "src/leaf.h" => &["a", "b"],
        "src/only_c.h" => &["c"],
        "src/a.cpp" => &["a"],
        "src/b.cpp" => &["b"],
        "src/c.cpp" => &["c"],
        _ => &[],
    }
}

fn run_churn(root: &Path, period: &str, path_env: Option<&str>) -> std::process::Output {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let mut c = common::clipforge();
    c.arg("headers")
        .arg(root.join("src"))
        .args([
            "--no-cache",
            "--compiler",
            "none",
            "--churn",
            period,
            "--json",
        ])
        .arg(&json);
    if let Some(p) = path_env {
        c.env("PATH", p);
    }
    let mut o = c.output().unwrap();
    // The JSON travels in stdout's place for the caller (the temp dir goes away).
    if let Ok(j) = fs::read(&json) {
        o.stderr.extend_from_slice(b"\n--json--\n");
        o.stderr.extend_from_slice(&j);
    }
    o
}

fn json_of(o: &std::process::Output) -> Value {
    let e = String::from_utf8_lossy(&o.stderr);
    let j = e.split("\n--json--\n").nth(1).expect("JSON written");
    serde_json::from_str(j).unwrap()
}

#[test]
fn churn_counts_match_git_log_and_the_closures() {
    if !have_git() {
        eprintln!("skipped: no git command");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    git(r, &["init", "-q"], None);
    tree(r);
    let day = 86_400;
    let t = now();
    git(r, &["add", "-A"], None);
    git(r, &["commit", "-qm", "initial"], Some(t - 400 * day));
    // Outside the period: changes that must not count.
    let edit = |rel: &str, n: u32| {
        let p = r.join(rel);
        let mut s = fs::read_to_string(&p).unwrap();
        s.push_str(&format!("// edit {n}\n"));
        fs::write(p, s).unwrap();
    };
    let plan: &[(u64, &[&str])] = &[
        (200, &["src/common.h", "src/mid.h"]),
        (120, &["src/common.h"]),
        // Inside the last 90 days.
        (80, &["src/common.h", "src/leaf.h"]),
        (60, &["src/mid.h", "src/common.h", "README"]),
        (45, &["src/only_c.h"]),
        (30, &["src/common.h"]),
        (20, &["src/cond.h", "src/a.cpp"]),
        (10, &["src/leaf.h", "src/only_c.h"]),
        (2, &["src/common.h"]),
    ];
    for (k, (age, files)) in plan.iter().enumerate() {
        for f in *files {
            edit(f, k as u32);
        }
        git(r, &["add", "-A"], None);
        git(
            r,
            &["commit", "-qm", &format!("change {k}")],
            Some(t - age * day),
        );
    }

    // The independent count: `git log --since … --format= --name-only`, lines per path.
    let log = git(
        r,
        &["log", "--since=90 days ago", "--format=", "--name-only"],
        None,
    );
    let mut by_git: BTreeMap<String, u64> = BTreeMap::new();
    for l in log.lines().filter(|l| !l.is_empty()) {
        *by_git.entry(l.to_string()).or_default() += 1;
    }
    assert_eq!(by_git["src/common.h"], 4, "{log}");
    // Per commit, for the tree's total (each TU once per commit).
    let per_commit = git(
        r,
        &[
            "log",
            "--since=90 days ago",
            "--format=format:@@",
            "--name-only",
        ],
        None,
    );
    let mut tree_total = 0u64;
    for c in per_commit.split("@@").filter(|c| !c.trim().is_empty()) {
        let tus: BTreeSet<&str> = c
            .lines()
            .filter(|l| !l.is_empty())
            .flat_map(|l| tus_of(l).iter().copied())
            .collect();
        tree_total += tus.len() as u64;
    }

    let o = run_churn(r, "90d", None);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j = json_of(&o);
    assert_eq!(j["churn_days"], 90);
    assert_eq!(j["churn_tu_rebuilds"], tree_total);
    let per_week = j["churn_tu_rebuilds_per_week"].as_f64().unwrap();
    assert!((per_week - tree_total as f64 / (90.0 / 7.0)).abs() < 1e-9);
    let headers = j["headers"].as_array().unwrap();
    let mut seen = 0;
    for h in headers {
        let path = format!("src/{}", h["path"].as_str().unwrap());
        let commits = by_git.get(&path).copied().unwrap_or(0);
        assert_eq!(h["churn_commits"], commits, "{path}");
        assert_eq!(h["churn_tu_rebuilds"], commits * reach(&path), "{path}");
        seen += 1;
    }
    // Every file of the preprocessed closures (cond.h is in none of them).
    assert_eq!(seen, 7, "{headers:#?}");
    // The ranked table: common.h first (4 commits × 3 TUs).
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Rebuild cost from history"))
        .collect();
    assert!(
        table[0].contains("last 90 days")
            && table[0].contains(&format!("{tree_total} TU rebuilds")),
        "{stdout}"
    );
    assert!(table[2].trim_end().ends_with("common.h"), "{stdout}");
    assert!(table[2].trim_start().starts_with("12 "), "{stdout}");

    // A shorter period sees only the last commits.
    let o = run_churn(r, "2w", None);
    let j = json_of(&o);
    let log = git(
        r,
        &["log", "--since=14 days ago", "--format=", "--name-only"],
        None,
    );
    let common = log.lines().filter(|l| *l == "src/common.h").count() as u64;
    let h = headers_by_path(&j);
    assert_eq!(h["common.h"]["churn_commits"], common);
    assert_eq!(h["common.h"]["churn_tu_rebuilds"], common * 3);
    assert_eq!(j["churn_days"], 14);
}

fn headers_by_path(j: &Value) -> BTreeMap<String, Value> {
    j["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["path"].as_str().unwrap().to_string(), h.clone()))
        .collect()
}

#[test]
fn a_tree_without_git_says_so() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    tree(r);
    if have_git() {
        let o = run_churn(r, "90d", None);
        assert_eq!(o.status.code(), Some(2));
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("not inside a git repository"), "{e}");
    }
    // No git command at all.
    let empty = tempfile::tempdir().unwrap();
    let o = run_churn(r, "90d", Some(empty.path().to_str().unwrap()));
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("no `git` command found on PATH"), "{e}");
    // A bad period is refused before anything runs.
    let o = run_churn(r, "ninety", None);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("invalid period"), "{e}");
}

/// With two configurations the rebuild cost counts a TU once per configuration that reaches the
/// header (each configuration is a build to redo): per header, commits × the TUs reaching it
/// summed over the configurations (its `tu_count_by_config`); for the tree, per commit, the
/// distinct (TU, configuration) pairs reaching a file it changed.
#[test]
fn two_configurations_count_each_configurations_tus() {
    if !have_git() {
        eprintln!("skipped: no git command");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    git(r, &["init", "-q"], None);
    write(
        r,
        "src/a.cpp",
        "#include \"common.h\"\n#ifdef FEAT\n#include \"feat.h\"\n#endif\n",
    );
    write(r, "src/b.cpp", "#include \"common.h\"\n");
    write(r, "src/common.h", "#pragma once\nint common;\n");
    write(r, "src/feat.h", "#pragma once\nint feat;\n");
    let compdb = |name: &str, extra: &str| {
        let entries: Vec<Value> = ["a.cpp", "b.cpp"]
            .iter()
            .map(|t| {
                serde_json::json!({
                    "directory": r.join("src"),
                    "file": t,
                    "command": format!("g++ -I. {extra} -c {t}"),
                })
            })
            .collect();
        fs::write(r.join(name), Value::Array(entries).to_string()).unwrap();
    };
    compdb("on.json", "-DFEAT");
    compdb("off.json", "");
    let day = 86_400;
    let t = now();
    git(r, &["add", "-A"], None);
    git(r, &["commit", "-qm", "initial"], Some(t - 400 * day));
    let plan: &[(u64, &[&str])] = &[
        (30, &["src/common.h"]),
        (20, &["src/feat.h"]),
        (10, &["src/common.h", "src/feat.h"]),
    ];
    for (k, (age, files)) in plan.iter().enumerate() {
        for f in *files {
            let p = r.join(f);
            let mut s = fs::read_to_string(&p).unwrap();
            s.push_str(&format!("// edit {k}\n"));
            fs::write(p, s).unwrap();
        }
        git(r, &["add", "-A"], None);
        git(
            r,
            &["commit", "-qm", &format!("change {k}")],
            Some(t - age * day),
        );
    }
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let o = common::clipforge()
        .arg("headers")
        .arg("--config")
        .arg(format!("on={}", r.join("on.json").display()))
        .arg("--config")
        .arg(format!("off={}", r.join("off.json").display()))
        .args([
            "--no-cache",
            "--compiler",
            "none",
            "--churn",
            "90d",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let j: Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    // Without roots, the report names files by their absolute paths.
    let h: BTreeMap<String, Value> = headers_by_path(&j)
        .into_iter()
        .filter_map(|(p, v)| Some((Path::new(&p).file_name()?.to_str()?.to_string(), v)))
        .collect();
    let by_config = |p: &str| -> Vec<u64> {
        h[p]["tu_count_by_config"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    // common.h: both TUs in both configurations; feat.h: a.cpp with FEAT only.
    assert_eq!(by_config("common.h"), [2, 2]);
    assert_eq!(by_config("feat.h"), [1, 0]);
    assert_eq!(h["common.h"]["churn_commits"], 2);
    assert_eq!(h["common.h"]["churn_tu_rebuilds"], 2 * 4);
    assert_eq!(h["feat.h"]["churn_commits"], 2);
    assert_eq!(h["feat.h"]["churn_tu_rebuilds"], 2);
    // The tree: 4 (common.h) + 1 (feat.h) + 4 (both: a.cpp with FEAT is among common.h's 4).
    assert_eq!(j["churn_tu_rebuilds"], 4 + 1 + 4);
}
