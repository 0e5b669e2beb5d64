//! Hostile trees for the header profiler, run through the real `clipforge headers` binary under
//! a 2 GB address-space limit (`ulimit -v`) and a watchdog: deeply nested `#if` expressions,
//! macro chains and nestings whose expansion grew quadratically, exponential macro bombs, FIFOs
//! named like translation units, headers, the compilation database or the cache. Each must end
//! in a clean exit with an error entry naming the file and line (or a clear error), the rest of
//! the scan unaffected. What already held (self and mutual includes, a 10,000-deep include chain,
//! symlink loops) is checked the same way.

use crate::common;
use crate::common::headers_scan::write;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[cfg(unix)]
fn mkfifo(p: &Path) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    json: Option<Value>,
    closures: Option<Value>,
}

/// Runs `clipforge headers ROOT --no-cache --compiler none --quiet --json --closures EXTRA...`
/// under `ulimit -v 2000000` (2 GB), killing it after 120 s (a hang fails the test).
fn clipforge(root: &Path, extra: &[&str]) -> Outcome {
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("r.json");
    let closures = out_dir.path().join("c.json");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2000000 && exec \"$0\" \"$@\"")
        .arg(common::BIN)
        .arg("headers")
        .arg(root)
        .args(["--no-cache", "--compiler", "none", "--quiet", "--json"])
        .arg(&json)
        .arg("--closures")
        .arg(&closures)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run clipforge");
    // Read the pipes on threads so a chatty child never blocks on a full pipe.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let ro = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut so, &mut s).ok();
        s
    });
    let re = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut se, &mut s).ok();
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().ok();
            child.wait().ok();
            panic!(
                "clipforge headers {} hung (killed after 120 s)",
                root.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &PathBuf| {
        fs::read_to_string(p)
            .ok()
            .map(|t| serde_json::from_str::<Value>(&t).expect("valid JSON"))
    };
    Outcome {
        code: status.code(),
        stdout: ro.join().unwrap(),
        stderr: re.join().unwrap(),
        json: read(&json),
        closures: read(&closures),
    }
}

impl Outcome {
    /// A clean exit (0) with a report; the outcome for every tree here.
    fn ok(&self) -> &Value {
        assert_eq!(
            self.code,
            Some(0),
            "exit {:?}\nstdout:\n{}\nstderr:\n{}",
            self.code,
            self.stdout,
            self.stderr
        );
        assert!(
            !self.stderr.contains("panicked"),
            "panic text shown: {}",
            self.stderr
        );
        self.json.as_ref().expect("JSON report written")
    }

    /// The error entries: (file, line, message).
    fn errors(&self) -> Vec<(String, u64, String)> {
        self.ok()["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["file"].as_str().unwrap().to_string(),
                    e["line"].as_u64().unwrap(),
                    e["message"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn assert_error(&self, file: &str, line: u64, needle: &str) {
        let errs = self.errors();
        assert!(
            errs.iter()
                .any(|(f, l, m)| f.ends_with(file) && *l == line && m.contains(needle)),
            "no error {file}:{line} containing {needle:?} in {errs:#?}"
        );
    }

    /// File names in the closure of the TU whose path ends with `tu`.
    fn closure(&self, tu: &str) -> Vec<String> {
        let c = self.closures.as_ref().expect("closures written");
        let (_, files) = c
            .as_object()
            .unwrap()
            .iter()
            .find(|(k, _)| k.ends_with(tu))
            .unwrap_or_else(|| panic!("TU {tu} in {c}"));
        let mut v: Vec<String> = files
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                Path::new(f.as_str().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        v.sort();
        v
    }
}

/// `#if` followed by `n` opening parentheses (and as many closing), in two TUs, then an include
/// that shows the TU went on.
#[test]
fn deeply_nested_parentheses_are_an_error_entry() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let n = 10_000;
    let expr = format!("{}1{}", "(".repeat(n), ")".repeat(n));
    for tu in ["a.cpp", "b.cpp"] {
        write(
            r,
            tu,
            format!("// nested\n#if {expr}\n#include \"never.h\"\n#endif\n#include \"after.h\"\n")
                .as_bytes(),
        );
    }
    // Nesting below the limit still evaluates exactly.
    let shallow = format!("{}2{}", "(".repeat(100), ")".repeat(100));
    write(
        r,
        "c.cpp",
        format!("#if {shallow} == 2\n#include \"taken.h\"\n#endif\n").as_bytes(),
    );
    for h in ["never.h", "after.h", "taken.h"] {
        write(r, h, b"int x;\n");
    }
    let o = clipforge(r, &[]);
    o.assert_error("a.cpp", 2, "nested too deeply");
    o.assert_error("b.cpp", 2, "nested too deeply");
    assert_eq!(o.closure("a.cpp"), ["a.cpp", "after.h"]);
    assert_eq!(o.closure("b.cpp"), ["after.h", "b.cpp"]);
    assert_eq!(o.closure("c.cpp"), ["c.cpp", "taken.h"]);
    assert!(
        !o.errors().iter().any(|(f, _, _)| f.ends_with("c.cpp")),
        "{:?}",
        o.errors()
    );
}

#[test]
fn two_hundred_thousand_nots_are_an_error_entry() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "a.cpp",
        format!(
            "#if {}1\n#endif\n#include \"after.h\"\n#if !!!!1\n#include \"four.h\"\n#endif\n",
            "!".repeat(200_000)
        )
        .as_bytes(),
    );
    write(r, "after.h", b"\n");
    write(r, "four.h", b"\n");
    let o = clipforge(r, &[]);
    o.assert_error("a.cpp", 1, "nested too deeply");
    assert_eq!(o.closure("a.cpp"), ["a.cpp", "after.h", "four.h"]);
}

/// `#define M_i M_(i+1)` for i < n, `M_n` defined as 1.
fn chain(prefix: &str, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("#define {prefix}_{i} {prefix}_{}\n", i + 1));
    }
    s.push_str(&format!("#define {prefix}_{n} 1\n"));
    s
}

#[test]
fn a_fifty_thousand_macro_chain_is_an_error_entry() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let mut text = chain("M", 50_000);
    let line = text.lines().count() + 1;
    text.push_str("#if M_0\n#include \"never.h\"\n#endif\n");
    // A chain of ordinary length is followed to its end.
    text.push_str(&chain("S", 300));
    text.push_str("#if S_0 == 1\n#include \"short.h\"\n#endif\n");
    write(r, "a.cpp", text.as_bytes());
    write(r, "never.h", b"\n");
    write(r, "short.h", b"\n");
    let o = clipforge(r, &[]);
    o.assert_error("a.cpp", line as u64, "macro expansion too large");
    assert_eq!(o.closure("a.cpp"), ["a.cpp", "short.h"]);
}

#[test]
fn twenty_thousand_nested_macro_calls_are_an_error_entry() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let n = 20_000;
    let call = format!("{}1{}", "G(".repeat(n), ")".repeat(n));
    let small = format!("{}3{}", "G(".repeat(50), ")".repeat(50));
    write(
        r,
        "a.cpp",
        format!(
            "#define G(x) x\n#if {call}\n#include \"never.h\"\n#endif\n#if {small} == 3\n#include \"small.h\"\n#endif\n"
        )
        .as_bytes(),
    );
    // The same through #include MACRO.
    write(
        r,
        "b.cpp",
        format!(
            "#define G(x) x\n#define H \"never.h\"\n#include {}H{}\n#include \"small.h\"\n",
            "G(".repeat(n),
            ")".repeat(n)
        )
        .as_bytes(),
    );
    write(r, "never.h", b"\n");
    write(r, "small.h", b"\n");
    let o = clipforge(r, &[]);
    let errs = o.errors();
    for (tu, line) in [("a.cpp", 2), ("b.cpp", 3)] {
        assert!(
            errs.iter().any(|(f, l, m)| f.ends_with(tu)
                && *l == line
                && (m.contains("macro expansion too large") || m.contains("nested too deeply"))),
            "{tu}: {errs:#?}"
        );
    }
    assert_eq!(o.closure("a.cpp"), ["a.cpp", "small.h"]);
    assert_eq!(o.closure("b.cpp"), ["b.cpp", "small.h"]);
}

/// Exponential bombs held before the limits were added: they still do, through every place
/// that expands macros (`#if`, `#include MACRO`, stringizing, pasting).
#[test]
fn exponential_macro_bombs_stay_bounded() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let mut s = String::from("#define A0 1\n");
    for i in 1..=64 {
        s.push_str(&format!("#define A{i} A{} + A{}\n", i - 1, i - 1));
    }
    s.push_str("#if A64\n#endif\n"); // line 66
    s.push_str("#include A64\n"); // line 68
    // Stringizing stringized text doubles its backslashes at each level.
    s.push_str("#define STR(x) #x\n#define X(x) STR(x)\n");
    let mut e = String::from("\"\\\\\"");
    for _ in 0..40 {
        e = format!("X({e})");
    }
    s.push_str(&format!("#if sizeof {e}\n#endif\n")); // line 71
    s.push_str("#include \"after.h\"\n");
    write(r, "a.cpp", s.as_bytes());
    write(r, "after.h", b"\n");
    let t = Instant::now();
    let o = clipforge(r, &[]);
    o.assert_error("a.cpp", 66, "macro expansion too large");
    o.assert_error("a.cpp", 68, "macro expansion too large");
    assert!(
        o.errors().iter().any(|(f, l, m)| f.ends_with("a.cpp")
            && *l == 71
            && m.contains("macro expansion too large")),
        "{:#?}",
        o.errors()
    );
    assert_eq!(o.closure("a.cpp"), ["a.cpp", "after.h"]);
    // Not a timing assertion of speed, a bound against a regression to exponential work.
    assert!(t.elapsed() < Duration::from_secs(100));
}

/// What held before: self and mutual includes, a 10,000-deep include chain (GCC's depth limit
/// of 200 is an error entry), a symlink loop.
#[cfg(unix)]
#[test]
fn include_loops_and_deep_chains_still_hold() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "src/a.cpp",
        b"#include \"self.h\"\n#include \"m1.h\"\n#include \"c0.h\"\n#include \"loop.h\"\n#include \"ok.h\"\n",
    );
    write(r, "src/self.h", b"#include \"self.h\"\n");
    write(r, "src/m1.h", b"#include \"m2.h\"\n");
    write(r, "src/m2.h", b"#include \"m1.h\"\n");
    for i in 0..10_000 {
        write(
            r,
            &format!("src/c{i}.h"),
            format!("#include \"c{}.h\"\n", i + 1).as_bytes(),
        );
    }
    std::os::unix::fs::symlink(r.join("src/loop.h"), r.join("src/loop.h")).unwrap();
    write(r, "src/ok.h", b"\n");
    let o = clipforge(&r.join("src"), &[]);
    let errs = o.errors();
    assert!(
        errs.iter()
            .any(|(_, _, m)| m.contains("#include nested depth 200 exceeds maximum of 200")),
        "{errs:#?}"
    );
    assert!(
        errs.iter()
            .any(|(f, _, m)| f.ends_with("loop.h") && m.contains("symlink loop")),
        "{errs:#?}"
    );
    let c = o.closure("a.cpp");
    for f in ["self.h", "m1.h", "m2.h", "ok.h", "c0.h", "c150.h"] {
        assert!(c.contains(&f.to_string()), "{f} not in the closure");
    }
}

/// A FIFO named like a TU, FIFOs and devices as headers, through symlinks too: nothing blocks,
/// the special TUs are listed as skipped (JSON and CLI line), the good TU is scanned.
#[cfg(unix)]
#[test]
fn fifos_and_devices_never_block_and_are_reported() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "a.cpp",
        b"#include \"fifo.h\"\n#include </dev/zero>\n#include \"linked.h\"\n#include \"ok.h\"\n",
    );
    write(r, "ok.h", b"\n");
    mkfifo(&r.join("x.cpp"));
    mkfifo(&r.join("fifo.h"));
    mkfifo(&r.join("sub/y.cc"));
    std::os::unix::fs::symlink("/dev/zero", r.join("z.cpp")).unwrap();
    std::os::unix::fs::symlink(r.join("fifo.h"), r.join("linked.h")).unwrap();
    // A FIFO named like a header no TU includes is no candidate: not listed.
    mkfifo(&r.join("unused.h"));
    let o = clipforge(r, &[]);
    let j = o.ok();
    let skipped: Vec<(String, String)> = j["skipped_special"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        skipped,
        [
            ("sub/y.cc".to_string(), "a FIFO".to_string()),
            ("x.cpp".to_string(), "a FIFO".to_string()),
            ("z.cpp".to_string(), "a character device".to_string()),
        ]
    );
    assert_eq!(j["skipped_special_count"], 3);
    assert_eq!(j["translation_units"], 1);
    assert!(
        o.stdout
            .contains("skipped 3 special files (not a regular file, never opened): sub/y.cc (a FIFO), x.cpp (a FIFO), z.cpp (a character device)"),
        "{}",
        o.stdout
    );
    assert_eq!(o.closure("a.cpp"), ["a.cpp", "ok.h"]);
    let missing: Vec<&str> = j["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["include"].as_str().unwrap())
        .collect();
    for m in ["fifo.h", "/dev/zero", "linked.h"] {
        assert!(
            missing.contains(&m),
            "{m} not reported missing: {missing:?}"
        );
    }
}

/// A FIFO as the compilation database is a clear error (exit 2), as the cache file it is not
/// used (a note), and a compilation database entry naming a FIFO is skipped and listed.
#[cfg(unix)]
#[test]
fn fifo_compile_commands_cache_and_entries() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "a.cpp", b"#include \"ok.h\"\n");
    write(r, "ok.h", b"\n");
    mkfifo(&r.join("cc/compile_commands.json"));
    let o = clipforge(
        r,
        &[
            "--compile-commands",
            r.join("cc/compile_commands.json").to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, Some(2), "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stderr
            .contains("compile_commands.json: cannot read: not a regular file (a FIFO)"),
        "{}",
        o.stderr
    );

    // Entries: one good TU, one FIFO TU.
    mkfifo(&r.join("f.cpp"));
    let db = serde_json::json!([
        {"directory": r, "file": r.join("a.cpp"), "arguments": ["c++", "-c", "a.cpp"]},
        {"directory": r, "file": r.join("f.cpp"), "arguments": ["c++", "-c", "f.cpp"]},
    ]);
    write(r, "db/compile_commands.json", db.to_string().as_bytes());
    let o = clipforge(
        r,
        &[
            "--compile-commands",
            r.join("db/compile_commands.json").to_str().unwrap(),
        ],
    );
    let j = o.ok();
    assert_eq!(j["translation_units"], 1);
    assert_eq!(j["skipped_special_count"], 1);
    assert_eq!(j["skipped_special"][0]["kind"], "a FIFO");
    assert!(
        j["skipped_special"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("f.cpp")
    );

    // The cache file as a FIFO: `--cache` given without `--no-cache`.
    mkfifo(&r.join("cache.bin"));
    let status = Command::new("timeout")
        .arg("120")
        .arg(common::BIN)
        .arg("headers")
        .arg(r)
        .args(["--compiler", "none", "--cache"])
        .arg(r.join("cache.bin"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "{out}");
    assert!(
        out.contains("cache not used") && out.contains("a FIFO"),
        "{out}"
    );
}

/// Headers that include the next one twice without a guard: 2^40 inclusions within GCC's depth
/// limit. The TU stops at its inclusion budget with an error entry; the other TU is whole.
#[test]
fn an_include_bomb_stops_at_the_tu_inclusion_budget() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "a.cpp", b"#include \"h0.h\"\n");
    write(r, "b.cpp", b"#include \"ok.h\"\n");
    write(r, "ok.h", b"\n");
    for i in 0..40 {
        write(
            r,
            &format!("h{i}.h"),
            format!("#include \"h{n}.h\"\n#include \"h{n}.h\"\n", n = i + 1).as_bytes(),
        );
    }
    write(r, "h40.h", b"int x;\n");
    let o = clipforge(r, &[]);
    let errs = o.errors();
    assert!(
        errs.iter()
            .any(|(f, _, m)| f.starts_with('h') && m.contains("inclusions in one translation unit")),
        "{errs:#?}"
    );
    assert_eq!(o.closure("b.cpp"), ["b.cpp", "ok.h"]);
    assert!(o.closure("a.cpp").contains(&"h40.h".to_string()));
}

/// The inclusion budget stays far above real code: the largest real TU measured (a Boost
/// top-level header) takes 10,505 inclusions; a TU taking 30,000 (10,000 headers, each included
/// three times behind its guard) is whole, with no error entry.
#[test]
fn a_tu_with_thirty_thousand_guarded_inclusions_is_whole() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    let mut tu = String::new();
    for i in 0..10_000 {
        write(
            r,
            &format!("g{i}.h"),
            format!("#ifndef G{i}\n#define G{i}\nint g{i};\n#endif\n").as_bytes(),
        );
        tu.push_str(&format!("#include \"g{i}.h\"\n"));
    }
    let tu = tu.repeat(3);
    write(r, "big.cpp", tu.as_bytes());
    let o = clipforge(r, &[]);
    assert!(o.errors().is_empty(), "{:#?}", o.errors());
    assert_eq!(o.closure("big.cpp").len(), 10_001);
}
