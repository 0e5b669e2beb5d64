//! The precompiled-header advisor (`--pch`, `--verify-pch`, module `headers::pch`) with real
//! clang on a generated tree: two template-heavy headers of a few lines (one in every TU, one in
//! two TUs) and a long, cheap header of declarations in every TU. The advice takes the template
//! headers, the naive choice (by Total Parsed) the long one; `pch.h` builds and every verified TU
//! compiles with it; with history where the two-TU header changes in every commit, the advice
//! leaves it out (each change would rebuild every TU); headers that include a missing file are
//! left out (hand-written traces, no compiler). No timing is compared across runs: the
//! machine's load moves it; only the report's own arithmetic is checked.
//! Skipped, with a message, where clang or git is not installed.

use crate::common;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// A header whose few lines instantiate `n`² class templates named `name`.
fn templates(name: &str, n: u32) -> String {
    format!(
        "#pragma once
template <int N, int M> struct {name} {{ static constexpr unsigned v = ({name}<N - 1, M>::v + {name}<N, M - 1>::v) % 1000003u; }};
template <int M> struct {name}<0, M> {{ static constexpr unsigned v = 1; }};
template <int N> struct {name}<N, 0> {{ static constexpr unsigned v = 1; }};
template <> struct {name}<0, 0> {{ static constexpr unsigned v = 1; }};
static_assert({name}<{n}, {n}>::v > 0, \"\");
"
    )
}

fn long_header() -> String {
    let mut s = String::from("#pragma once\n");
    for i in 0..4000 {
        s.push_str(&format!("extern int long_v{i};\n"));
    }
    s
}

fn tools_missing() -> bool {
    for (tool, pkg) in [("clang++", "clang"), ("git", "git")] {
        let ok = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("skipped: no {tool} on PATH (apt-get install {pkg})");
            return true;
        }
    }
    false
}

/// t0..t5.cpp include tmpl.h and long.h; t0 and t1 also hot.h.
fn tree(root: &Path) {
    std::fs::create_dir_all(root.join("inc")).unwrap();
    std::fs::write(root.join("inc/tmpl.h"), templates("P", 60)).unwrap();
    std::fs::write(root.join("inc/hot.h"), templates("Q", 60)).unwrap();
    std::fs::write(root.join("inc/long.h"), long_header()).unwrap();
    for i in 0..6 {
        let hot = if i < 2 { "#include \"hot.h\"\n" } else { "" };
        std::fs::write(
            root.join(format!("t{i}.cpp")),
            format!("#include \"tmpl.h\"\n{hot}#include \"long.h\"\nint t{i}() {{ return 0; }}\n"),
        )
        .unwrap();
    }
}

fn git(root: &Path, args: &[&str]) {
    let o = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn headers(root: &Path, extra: &[&str]) -> (Value, String) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let o = common::clipforge()
        .arg("headers")
        .arg(root)
        .args(["-I", "inc", "--compiler", "none", "--no-cache", "-q"])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    let v = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (v, text)
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let p = h.get("path").unwrap_or(h).as_str().unwrap();
            p.rsplit('/').next().unwrap().to_string()
        })
        .collect()
}

#[test]
fn the_advice_takes_the_costly_headers_builds_and_is_verified() {
    if tools_missing() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    let traces = tempfile::tempdir().unwrap();
    let (_, _) = headers(
        d.path(),
        &[
            "--measure",
            "6",
            "--jobs",
            "2",
            "--keep-traces",
            traces.path().to_str().unwrap(),
        ],
    );
    let tr = traces.path().to_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let pch_h = out.path().join("pch.h");
    let (r, text) = headers(
        d.path(),
        &[
            "--time-trace",
            tr,
            "--pch",
            "2",
            "--pch-out",
            pch_h.to_str().unwrap(),
            "--verify-pch",
            "3",
            "--jobs",
            "2",
        ],
    );
    let a = &r["pch"];
    let mut got = names(&a["headers"]);
    got.sort();
    assert_eq!(got, ["hot.h", "tmpl.h"], "{a}");
    // The naive choice: as many headers, by lines x TUs: the long one first.
    assert_eq!(names(&a["naive"])[0], "long.h", "{a}");
    // The arithmetic of the figures.
    let f = |k: &str| a[k].as_f64().unwrap();
    assert!((f("net_s") - (f("saved_s") - f("load_s") - f("build_s"))).abs() < 1e-5);
    assert!(f("net_s") > f("naive_net_s"), "{a}");
    let gains: f64 = a["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["gain_s"].as_f64().unwrap())
        .sum();
    assert!((gains - f("net_s")).abs() < 1e-4, "{gains} {a}");
    assert_eq!(a["files"], 2);
    // pch.h as written, and the report's copy.
    let written = std::fs::read_to_string(&pch_h).unwrap();
    assert_eq!(written, a["pch_h"].as_str().unwrap());
    assert!(written.contains("tmpl.h\"\n") && written.contains("hot.h\"\n"));
    assert!(text.contains("Verified on 3 TUs"), "{text}");
    // Verified: both PCHs built and every TU compiled three ways.
    let c = &a["check"];
    assert_eq!(c["tus"], 3, "{c}");
    assert!(c["notes"].as_array().unwrap().is_empty(), "{c}");
    for k in ["advised", "naive"] {
        let m = &c[k];
        let (w, with, saving) = (
            c["without_s"].as_f64().unwrap(),
            m["with_s"].as_f64().unwrap(),
            m["measured_saving_s"].as_f64().unwrap(),
        );
        assert!(
            w > 0.0 && with > 0.0 && m["build_s"].as_f64().unwrap() > 0.0,
            "{m}"
        );
        assert!((w - with - saving).abs() < 1e-5, "{m}");
        // The load is measured per PCH, and the prediction charges it.
        let (load, content) = (
            m["load_ms"].as_f64().unwrap(),
            m["content_ms"].as_f64().unwrap(),
        );
        assert!(load >= 0.0 && content > 0.0, "{m}");
        assert!((m["load_fraction"].as_f64().unwrap() - load / content).abs() < 1e-3);
        // Per TU: the three runs add up to the totals, the predictions to the prediction.
        let rows = c["per_tu"].as_array().unwrap();
        assert_eq!(rows.len(), 3, "{c}");
        let sum = |k: &str| rows.iter().map(|x| x[k].as_f64().unwrap()).sum::<f64>() / 1000.0;
        assert!((sum("without_ms") - w).abs() < 1e-4, "{c}");
        assert!((sum(&format!("{k}_ms")) - with).abs() < 1e-4, "{c}");
        let pred = m["predicted_saving_s"].as_f64().unwrap();
        assert!(
            (sum(&format!("{k}_predicted_ms")) - pred).abs() < 1e-4,
            "{c}"
        );
    }

    // The PCH really works: built with the flags the report gives (templates instantiated
    // once), a TU compiles with it.
    let built = out.path().join("pch.h.pch");
    let flags: Vec<String> = a["build_flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    assert_eq!(flags[0], "-fpch-instantiate-templates", "{a}");
    let o = Command::new("clang++")
        .args(flags.iter().map(|x| match x.as_str() {
            "pch.h" => pch_h.as_os_str(),
            "pch.h.pch" => built.as_os_str(),
            x => std::ffi::OsStr::new(x),
        }))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new("clang++")
        .args(["-fsyntax-only", "-I"])
        .arg(d.path().join("inc"))
        .arg("-include-pch")
        .arg(&built)
        .arg(d.path().join("t0.cpp"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // History: hot.h changes in each of five commits. Each change would rebuild all six TUs
    // instead of its two: the advice leaves it out.
    git(d.path(), &["init", "-q"]);
    git(d.path(), &["add", "."]);
    git(d.path(), &["commit", "-qm", "tree"]);
    for k in 0..5 {
        let mut s = templates("Q", 60);
        s.push_str(&format!("// edit {k}\n"));
        std::fs::write(d.path().join("inc/hot.h"), s).unwrap();
        git(d.path(), &["commit", "-qam", "edit hot.h"]);
    }
    let (r, _) = headers(
        d.path(),
        &["--time-trace", tr, "--pch", "auto", "--churn", "90d"],
    );
    let a = &r["pch"];
    let got = names(&a["headers"]);
    assert!(got.contains(&"tmpl.h".to_string()), "{a}");
    assert!(!got.contains(&"hot.h".to_string()), "{a}");
    // Only the first commit (which added every file, rebuilding every TU anyway) changed it.
    assert_eq!(a["churn_commits"], 1, "{a}");
}

#[test]
fn pch_input_errors_are_clear() {
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    let run = |args: &[&str]| {
        let o = common::clipforge()
            .arg("headers")
            .arg(d.path())
            .args(["-I", "inc", "--compiler", "none", "--no-cache", "-q"])
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, e) = run(&["--pch", "3"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("--pch: the advice needs measured costs"), "{e}");
    let (code, e) = run(&["--pch", "zero"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("or `auto`"), "{e}");
    let (code, e) = run(&["--pch", "0"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("1 or more"), "{e}");
}

/// A header that includes a file the scan cannot find would not build as a PCH: the advice
/// leaves it out, and every header that includes it, however much time they would save. The
/// costs come from hand-written traces (no compiler needed): `opt.h`, which includes a missing
/// generated header, and `wrap.h`, which includes `opt.h`, cost far more than `ok.h`.
#[test]
fn headers_that_include_a_missing_file_are_left_out_of_the_pch() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let w = common::headers_scan::write;
    w(
        r,
        "inc/opt.h",
        "#pragma once\n#include \"gen/generated.h\"\nint opt;\n",
    );
    w(
        r,
        "inc/wrap.h",
        "#pragma once\n#include \"opt.h\"\nint wrap;\n",
    );
    w(r, "inc/ok.h", "#pragma once\nint ok;\n");
    let traces = tempfile::tempdir().unwrap();
    let inc = r.join("inc").canonicalize().unwrap();
    for i in 0..4 {
        w(
            r,
            &format!("t{i}.cpp"),
            "#include \"wrap.h\"\n#include \"ok.h\"\nint t;\n",
        );
        // wrap.h 60 ms (of which opt.h 55 ms), ok.h 5 ms, in a 100 ms frontend.
        let src = |ts: u64, dur: u64, f: &str| {
            serde_json::json!({"ph": "X", "ts": ts, "dur": dur, "name": "Source",
                "args": {"detail": inc.join(f)}})
        };
        let t = serde_json::json!({"traceEvents": [
            {"ph": "X", "ts": 0, "dur": 100_000, "name": "Frontend"},
            src(10, 60_000, "wrap.h"),
            src(20, 55_000, "opt.h"),
            src(70_000, 5_000, "ok.h"),
        ]});
        std::fs::write(traces.path().join(format!("t{i}.json")), t.to_string()).unwrap();
    }
    let tr = traces.path().to_str().unwrap();
    let (v, text) = headers(r, &["--time-trace", tr, "--pch", "3"]);
    assert_eq!(v["measured_tus"], 4, "{text}");
    // The costs were read: the broken headers are the costly ones.
    let cost = |name: &str| {
        v["headers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["path"].as_str().unwrap().ends_with(name))
            .and_then(|h| h["cost_ms"].as_f64())
            .unwrap()
    };
    assert!(cost("opt.h") > 10.0 * cost("ok.h"), "{v}");
    assert_eq!(names(&v["pch"]["headers"]), ["ok.h"], "{}", v["pch"]);
}
