//! Measured seconds per header (`--measure`, `--time-trace`, module `headers::timing`) with real
//! clang on a generated tree: a template-heavy header of a few lines (thousands of class
//! template instantiations) and a long, cheap one of declarations. Lines rank the long one
//! first, seconds the template one; the traces `--measure` kept, read back with `--time-trace`,
//! give the same costs; traces of the test's own clang runs (as a build makes them) rank the
//! same and give the costs read from them independently; on hand-written traces, a header's cost
//! is taken at the size of the TU predicted. (No timing is compared across runs: the machine's
//! load moves it.)
//! Skipped, with a message, where clang is not installed.

use crate::common;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const TEMPLATES: &str = "#pragma once
template <int N, int M> struct P { static constexpr unsigned v = (P<N - 1, M>::v + P<N, M - 1>::v) % 1000003u; };
template <int M> struct P<0, M> { static constexpr unsigned v = 1; };
template <int N> struct P<N, 0> { static constexpr unsigned v = 1; };
template <> struct P<0, 0> { static constexpr unsigned v = 1; };
static_assert(P<60, 60>::v > 0, \"\");
";

/// 4,000 lines of plain declarations.
fn long_header() -> String {
    let mut s = String::from("#pragma once\n");
    for i in 0..4000 {
        s.push_str(&format!("extern int long_v{i};\n"));
    }
    s
}

fn clang_missing() -> bool {
    let ok = Command::new("clang++")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: no clang++ on PATH (apt-get install clang)");
    }
    !ok
}

/// t0..t3.cpp include both headers, u0..u3.cpp the long one only.
fn tree(root: &Path) {
    std::fs::create_dir_all(root.join("inc")).unwrap();
    std::fs::write(root.join("inc/tmpl.h"), TEMPLATES).unwrap();
    std::fs::write(root.join("inc/long.h"), long_header()).unwrap();
    for i in 0..4 {
        std::fs::write(
            root.join(format!("t{i}.cpp")),
            format!("#include \"tmpl.h\"\n#include \"long.h\"\nint t{i}() {{ return 0; }}\n"),
        )
        .unwrap();
        std::fs::write(
            root.join(format!("u{i}.cpp")),
            format!("#include \"long.h\"\nint u{i}() {{ return 0; }}\n"),
        )
        .unwrap();
    }
}

fn headers(root: &Path, extra: &[&str]) -> Value {
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
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

fn entry<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("no {name} in {r}"))
}

/// The non-TU headers, best first by `key`.
fn ranked(r: &Value, key: &str) -> Vec<String> {
    let mut v: Vec<(f64, String)> = r["headers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| !h["tu"].as_bool().unwrap())
        .map(|h| {
            (
                h[key].as_f64().unwrap(),
                h["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    v.into_iter().map(|x| x.1).collect()
}

#[test]
fn seconds_put_the_template_header_first_where_lines_do_not() {
    if clang_missing() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    let kept = tempfile::tempdir().unwrap();
    let r = headers(
        d.path(),
        &[
            "--measure",
            "8",
            "--jobs",
            "2",
            "--cuts",
            "3",
            "--keep-traces",
            kept.path().to_str().unwrap(),
        ],
    );
    assert_eq!(r["measured_tus"], 8, "{r}");
    assert_eq!(ranked(&r, "contributed")[0], "inc/long.h");
    assert_eq!(ranked(&r, "seconds_contributed")[0], "inc/tmpl.h");
    let (t, l) = (entry(&r, "tmpl.h"), entry(&r, "long.h"));
    assert_eq!(t["cost_measured"], true);
    assert!(
        t["cost_ms"].as_f64().unwrap() > 3.0 * l["cost_ms"].as_f64().unwrap(),
        "{t} {l}"
    );
    // seconds = TUs reaching it x its cost.
    let s = t["seconds_contributed"].as_f64().unwrap();
    assert!((s - 4.0 * t["cost_ms"].as_f64().unwrap() / 1000.0).abs() < 1e-5);
    // Every TU measured and predicted; the total is the sum of the predictions.
    let tus = r["tus"].as_array().unwrap();
    assert_eq!(tus.len(), 8);
    let sum: f64 = tus
        .iter()
        .map(|t| t["predicted_ms"].as_f64().unwrap())
        .sum();
    assert!((r["predicted_frontend_s"].as_f64().unwrap() - sum / 1000.0).abs() < 1e-3);
    assert!(tus.iter().all(|t| t["measured_ms"].as_f64().unwrap() > 0.0));
    // A TU with the template header is predicted slower than one without.
    let ms = |name: &str| {
        tus.iter().find(|t| t["path"] == name).unwrap()["predicted_ms"]
            .as_f64()
            .unwrap()
    };
    assert!(ms("t0.cpp") > ms("u0.cpp"));
    // Cuts: by seconds, emptying tmpl.h (or its directives) comes first; by lines, long.h's.
    let cuts = r["cuts"].as_array().unwrap();
    assert!(cuts[0]["included"].as_str().unwrap().ends_with("long.h"));
    let best_s = cuts
        .iter()
        .max_by(|a, b| {
            a["seconds_saved"]
                .as_f64()
                .partial_cmp(&b["seconds_saved"].as_f64())
                .unwrap()
        })
        .unwrap();
    assert!(
        best_s["included"].as_str().unwrap().ends_with("tmpl.h"),
        "{best_s}"
    );

    // The kept traces read back: the same costs.
    let again = headers(d.path(), &["--time-trace", kept.path().to_str().unwrap()]);
    assert_eq!(again["measured_tus"], 8);
    for h in ["tmpl.h", "long.h"] {
        assert_eq!(entry(&again, h)["cost_ms"], entry(&r, h)["cost_ms"], "{h}");
    }
}

#[test]
fn a_sample_covers_the_most_included_headers_and_build_traces_agree() {
    if clang_missing() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    // Two TUs: the first chosen reaches both headers.
    let r = headers(d.path(), &["--measure", "2", "--jobs", "2"]);
    assert_eq!(r["measured_tus"], 2);
    for h in ["tmpl.h", "long.h"] {
        assert_eq!(entry(&r, h)["cost_measured"], true, "{h}");
    }
    let tus = r["tus"].as_array().unwrap();
    assert_eq!(
        tus.iter().filter(|t| !t["measured_ms"].is_null()).count(),
        2
    );
    assert!(
        tus.iter()
            .all(|t| t["predicted_ms"].as_f64().unwrap() > 0.0)
    );

    // Traces as a build writes them (`-c -o x.o` writes x.json beside the object).
    let build = tempfile::tempdir().unwrap();
    for i in 0..4 {
        for p in ["t", "u"] {
            let o = Command::new("clang++")
                .args(["-c", "-ftime-trace", "-ftime-trace-granularity=0", "-I"])
                .arg(d.path().join("inc"))
                .arg(d.path().join(format!("{p}{i}.cpp")))
                .arg("-o")
                .arg(build.path().join(format!("{p}{i}.o")))
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
    }
    let b = headers(d.path(), &["--time-trace", build.path().to_str().unwrap()]);
    assert_eq!(b["measured_tus"], 8);
    assert_eq!(ranked(&b, "seconds_contributed")[0], "inc/tmpl.h");
    // Each header's cost is the mean of its `Source` events over the traces (neither includes
    // another file, so its exclusive time is the whole event), read here independently.
    for h in ["tmpl.h", "long.h"] {
        let (mut sum, mut n) = (0.0, 0);
        for f in std::fs::read_dir(build.path()).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let t: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            for e in t["traceEvents"].as_array().unwrap() {
                if e["name"] == "Source" && e["args"]["detail"].as_str().unwrap().ends_with(h) {
                    sum += e["dur"].as_f64().unwrap();
                    n += 1;
                }
            }
        }
        let want = sum / n as f64 / 1000.0;
        let got = entry(&b, h)["cost_ms"].as_f64().unwrap();
        assert!((got - want).abs() < 0.002, "{h}: {got} vs {want}");
    }
}

#[test]
fn bad_timing_input_is_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    let run = |args: &[&str]| {
        common::clipforge()
            .arg("headers")
            .arg(d.path())
            .args(["-I", "inc", "--compiler", "none", "--no-cache", "-q"])
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["--time-trace", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--time-trace /nonexistent: folder not found")
    );
    // A folder of JSON that is no trace.
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("t0.json"), "{\"x\": 1}").unwrap();
    std::fs::write(t.path().join("t1.json"), "[1,").unwrap();
    let o = run(&["--time-trace", t.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("no clang time trace matching"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    // A compiler that is not there.
    let o = run(&["--measure", "1", "--measure-compiler", "no-such-clang"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("no `no-such-clang` command found"), "{e}");
}

/// A header costs more in a TU with a larger closure (clang's lookups work over everything
/// declared before it), and the TUs `--measure` picks have the largest closures: costs are
/// brought to the TU predicted. Hand-written traces (no compiler needed): `a.h` takes 40 ms in
/// `big.cpp` (4,000 closure lines, header time 0.4 ms a line) and 10 ms in `small.cpp` (100
/// lines, 0.1 ms a line), so header time grows as L^(ln 4 / ln 40). `other.cpp` has
/// `small.cpp`'s closure: predicted 5 ms of its own + 10 ms for `a.h`, not the 25 ms mean.
#[test]
fn header_costs_follow_the_size_of_the_tu_they_are_predicted_for() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let w = |rel: &str, text: &str| common::headers_scan::write(r, rel, text);
    let lines = |n: usize| "#pragma once\n".to_string() + &"extern int v;\n".repeat(n - 1);
    w("inc/a.h", &lines(98));
    w("inc/pad.h", &lines(3900));
    w("big.cpp", "#include \"a.h\"\n#include \"pad.h\"\n");
    w("small.cpp", "#include \"a.h\"\nint s;\n");
    w("other.cpp", "#include \"a.h\"\nint o;\n");
    let inc = r.join("inc").canonicalize().unwrap();
    let traces = tempfile::tempdir().unwrap();
    let src = |ts: u64, ms: u64, f: &str| {
        serde_json::json!({"ph": "X", "ts": ts, "dur": ms * 1000, "name": "Source",
            "args": {"detail": inc.join(f)}})
    };
    // Each frontend: its headers + 5 ms of its own.
    for (tu, events, frontend_ms) in [
        (
            "big",
            vec![src(0, 40, "a.h"), src(50_000, 1560, "pad.h")],
            1605u64,
        ),
        ("small", vec![src(0, 10, "a.h")], 15),
    ] {
        let mut ev = vec![
            serde_json::json!({"ph": "X", "ts": 0, "dur": frontend_ms * 1000, "name": "Frontend"}),
        ];
        ev.extend(events);
        let t = serde_json::json!({ "traceEvents": ev });
        std::fs::write(traces.path().join(format!("{tu}.json")), t.to_string()).unwrap();
    }
    let v = headers(r, &["--time-trace", traces.path().to_str().unwrap()]);
    assert_eq!(v["measured_tus"], 2, "{v}");
    let tu = |name: &str| {
        v["tus"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["path"].as_str().unwrap().ends_with(name))
            .unwrap()
            .clone()
    };
    assert_eq!(tu("small.cpp")["measured_ms"].as_f64(), Some(15.0));
    let p = tu("other.cpp")["predicted_ms"].as_f64().unwrap();
    assert!(
        (p - 15.0).abs() < 0.5,
        "other.cpp predicted {p} ms, not 15: {v}"
    );
}

/// A TU's own time (outside its headers) is modelled per language and from its headers' time,
/// not as a constant plus its lines: the C++ TUs here spend ~100 ms of their own instantiating
/// a template the header declares (as clang's end-of-TU instantiations do in real trees), a C
/// file and a TU whose body is `#ifdef`'d out spend a few ms. Every TU measured once (real
/// clang); the first two traces (the TUs `--measure 2` picks: a C++ and a C one) predict the
/// others. Before, own time = a + b × own lines over the sample put tens of ms on each small TU
/// (off.cpp: 37 ms predicted, 0.1 ms measured).
#[test]
fn a_c_file_and_a_compiled_out_tu_are_predicted_near_their_cost() {
    if clang_missing() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let w = |rel: &str, text: &str| common::headers_scan::write(r, rel, text);
    // TEMPLATES without its static_assert: each TU instantiates P itself.
    w(
        "inc/tmpl.h",
        TEMPLATES
            .lines()
            .take(5)
            .collect::<Vec<_>>()
            .join("\n")
            .as_str(),
    );
    for i in 0..3 {
        w(
            &format!("t{i}.cpp"),
            "#include \"tmpl.h\"\nstatic_assert(P<60, 60>::v > 0, \"\");\n",
        );
    }
    w(
        "off.cpp",
        "#ifdef NEVER_DEFINED\n#include \"tmpl.h\"\nstatic_assert(P<60, 60>::v > 0, \"\");\n#endif\nint off;\n",
    );
    let decls: String = (0..200).map(|i| format!("extern int c_v{i};\n")).collect();
    w("inc/c.h", &format!("#pragma once\n{decls}"));
    for i in 0..2 {
        w(
            &format!("c{i}.c"),
            &format!("#include \"c.h\"\nint c{i}(void) {{ return 0; }}\n"),
        );
    }
    let ms = |v: &Value, name: &str, key: &str| {
        v["tus"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["path"].as_str().unwrap() == name)
            .unwrap_or_else(|| panic!("no {name} in {v}"))[key]
            .as_f64()
    };
    // The sample is one trace per language, so a scheduler hiccup of ~10 ms inside the c0.c or
    // t0.cpp trace (two clang jobs on a machine the other tests share) carries into every
    // prediction made from it: seen failing ~1 run in 13 with c1.c predicted 11.5 ms against
    // 1.3 ms measured. This test checks the model, not the machine, so its premise is a run in
    // which the twins (c0.c/c1.c, t0.cpp/t2.cpp: the same text but a name) measured alike, within
    // the bounds asserted below; a run that breaks it is measured again (at most 4 runs).
    let twins_alike = |m: &Value| {
        let (c0, c1) = (
            ms(m, "c0.c", "measured_ms").unwrap_or(f64::NAN),
            ms(m, "c1.c", "measured_ms").unwrap_or(f64::NAN),
        );
        let (t0, t2) = (
            ms(m, "t0.cpp", "measured_ms").unwrap_or(f64::NAN),
            ms(m, "t2.cpp", "measured_ms").unwrap_or(f64::NAN),
        );
        (c0 - c1).abs() <= 0.5 * c1 + 5.0 && (t0 - t2).abs() <= 0.5 * t2
    };
    let mut runs = Vec::new();
    let (all, m) = loop {
        let all = tempfile::tempdir().unwrap();
        let m = headers(
            r,
            &[
                "--measure",
                "6",
                "--jobs",
                "2",
                "--keep-traces",
                all.path().to_str().unwrap(),
            ],
        );
        assert_eq!(m["measured_tus"], 6, "{m}");
        if twins_alike(&m) {
            break (all, m);
        }
        runs.push(m);
        assert!(
            runs.len() < 4,
            "in 4 runs the twin TUs never measured alike (the machine is too busy to test the \
             model): {runs:?}"
        );
    };
    // The premise: a C++ TU's own instantiations dwarf the small TUs.
    let t_ms = ms(&m, "t1.cpp", "measured_ms").unwrap();
    assert!(t_ms > 40.0, "t1.cpp measured {t_ms} ms");
    let sample = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(all.path()).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("0-") || name.starts_with("1-") {
            std::fs::copy(&f, sample.path().join(&name)).unwrap();
        }
    }
    let p = headers(r, &["--time-trace", sample.path().to_str().unwrap()]);
    assert_eq!(p["measured_tus"], 2, "{p}");
    for sampled in ["t0.cpp", "c0.c"] {
        assert!(
            ms(&p, sampled, "measured_ms").is_some(),
            "{sampled} not sampled: {p}"
        );
    }
    for small in ["off.cpp", "c1.c"] {
        let (pred, real) = (
            ms(&p, small, "predicted_ms").unwrap(),
            ms(&m, small, "measured_ms").unwrap(),
        );
        assert!(
            (pred - real).abs() <= 0.5 * real + 5.0 && pred < t_ms / 4.0,
            "{small}: predicted {pred} ms, measured {real} ms (t1.cpp {t_ms} ms)"
        );
    }
    // The C++ TU not sampled is still predicted near its measure.
    let pred = ms(&p, "t2.cpp", "predicted_ms").unwrap();
    let real = ms(&m, "t2.cpp", "measured_ms").unwrap();
    assert!(
        (pred - real).abs() <= 0.5 * real,
        "t2.cpp: predicted {pred}, measured {real}"
    );
}

/// Every `*.json` in `dir`, sorted.
fn traces_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

/// Where two reports differ (JSON pointers with both values): every figure compared but the
/// scan's own wall time.
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
            for (k, v) in x.iter().filter(|(k, _)| *k != "scan_seconds") {
                match y.get(k) {
                    Some(w) => differences(v, w, &format!("{at}/{k}"), out),
                    None => out.push(format!("{at}/{k}: missing")),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                differences(v, w, &format!("{at}/{i}"), out);
            }
        }
        _ if a != b => out.push(format!("{at}: {a} vs {b}")),
        _ => {}
    }
}

fn assert_same(a: &Value, b: &Value, what: &str) {
    let mut d = Vec::new();
    differences(a, b, "", &mut d);
    assert!(d.is_empty(), "{what}: {d:?}");
}

fn summary_of(trace: &Path) -> std::path::PathBuf {
    let mut s = trace.as_os_str().to_os_string();
    s.push(".sum");
    s.into()
}

#[test]
fn summaries_beside_the_traces_give_the_same_report_and_a_changed_trace_is_read_again() {
    if clang_missing() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    let kept = tempfile::tempdir().unwrap();
    let k = kept.path().to_str().unwrap();
    headers(
        d.path(),
        &["--measure", "8", "--jobs", "2", "--keep-traces", k],
    );
    let measured = traces_in(kept.path());
    assert_eq!(measured.len(), 8);
    assert!(
        measured.iter().all(|t| summary_of(t).is_file()),
        "{measured:?}"
    );
    // The traces alone (no summary beside them): the reference report.
    let alone = tempfile::tempdir().unwrap();
    for t in &measured {
        std::fs::copy(t, alone.path().join(t.file_name().unwrap())).unwrap();
    }
    let a = alone.path().to_str().unwrap();
    let run = |dir: &str| {
        headers(
            d.path(),
            &["--time-trace", dir, "--cuts", "3", "--pch", "auto"],
        )
    };
    let reference = run(a);
    assert_eq!(reference["measured_tus"], 8);
    // That run wrote the summaries; the second run reads them, as does one on the measure's.
    let traces = traces_in(alone.path());
    assert!(traces.iter().all(|t| summary_of(t).is_file()));
    assert_same(&run(a), &reference, "from the summaries the read wrote");
    assert_same(&run(k), &reference, "from the summaries --measure wrote");
    // Summaries are what is read: doubled times in them (trace unchanged) change the report.
    for t in &traces {
        let p = summary_of(t);
        let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let s = &mut v["summary"];
        s["frontend_us"] = (s["frontend_us"].as_u64().unwrap() * 2).into();
        for f in s["files"].as_array_mut().unwrap() {
            f[1] = (f[1].as_u64().unwrap() * 2).into();
        }
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    }
    let doubled = run(a);
    assert_ne!(
        doubled["predicted_frontend_s"],
        reference["predicted_frontend_s"]
    );
    // A trace changed after its summary was written: the trace is read again.
    for t in &traces {
        let mut bytes = std::fs::read(t).unwrap();
        bytes.push(b'\n');
        std::fs::write(t, bytes).unwrap();
    }
    assert_same(&run(a), &reference, "changed traces read again");
    // Corrupt summaries: the traces decide, no panic.
    for t in &traces {
        std::fs::write(summary_of(t), b"{\"version\":1,\"trace_len\":\xff").unwrap();
    }
    assert_same(&run(a), &reference, "corrupt summaries ignored");
}
