//! `clipforge watch --pipelines FILE.toml` through the real binary: several pipelines in one
//! process, each into its own output with its own settings; catch-up on start (inputs added,
//! changed and deleted while stopped are handled exactly once); SIGTERM stops cleanly;
//! overlapping folders are refused; a watch honours `clipforge.toml` changes and exclude
//! patterns. Clips are generated (`anim::generate`).
#![cfg(unix)]

use crate::common;

use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::pipeline::cache::SkipCache;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
    // Written beside and renamed in, as a careful exporter does (no half-written clip seen).
    let tmp = path.with_extension("part");
    std::fs::write(&tmp, write_acl_clip(&clip)).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A running `clipforge watch` with its stdout lines.
struct Watch {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Watch {
    fn start(args: &[&std::ffi::OsStr]) -> Self {
        let mut child = Command::new(BIN)
            .arg("watch")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start clipforge watch");
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Waits until `done(lines so far)` holds (panics after 60 s with the lines seen).
    fn wait_for(&mut self, what: &str, done: impl Fn(&[String]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done(&self.seen) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; lines:\n{}",
                self.seen.join("\n")
            );
            if let Ok(l) = self.lines.recv_timeout(Duration::from_millis(100)) {
                self.seen.push(l);
            }
            if let Ok(Some(st)) = self.child.try_wait() {
                let mut err = String::new();
                use std::io::Read as _;
                let _ = self.child.stderr.take().unwrap().read_to_string(&mut err);
                panic!("watch exited ({st}) waiting for {what}; stderr:\n{err}");
            }
        }
    }

    /// Collects lines for `d` more (events that should not come).
    fn settle(&mut self, d: Duration) {
        let end = Instant::now() + d;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            if let Ok(l) = self.lines.recv_timeout(left) {
                self.seen.push(l);
            }
        }
    }

    /// SIGTERM, as systemd stops a service: the watch must stop cleanly with status 0.
    fn terminate(mut self) -> Vec<String> {
        // SAFETY: sending a signal to our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let st = self.child.wait().unwrap();
        let mut err = String::new();
        use std::io::Read as _;
        let _ = self.child.stderr.take().unwrap().read_to_string(&mut err);
        assert!(st.success(), "watch ended with {st}; stderr:\n{err}");
        assert!(err.contains("watch stopped"), "{err}");
        while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(200)) {
            self.seen.push(l);
        }
        self.seen
    }
}

/// Lines of `kind` (`compressed`, `up to date`, `removed`) of pipeline `name` for input files
/// whose name ends with `file`.
fn count(lines: &[String], name: &str, kind: &str, file: &str) -> usize {
    let pre = format!("[{name}] {kind} ");
    lines
        .iter()
        .filter(|l| {
            l.strip_prefix(&pre).is_some_and(|rest| {
                rest.split(" -> ")
                    .next()
                    .unwrap_or(rest)
                    .split(" (deleted")
                    .next()
                    .unwrap_or(rest)
                    .ends_with(file)
            })
        })
        .count()
}

fn total(lines: &[String], name: &str, kind: &str) -> usize {
    count(lines, name, kind, "")
}

fn cfa_count(dir: &Path) -> usize {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "cfa"))
        .count()
}

fn pipelines_file(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("pipelines.toml");
    write(&p, text);
    p
}

#[test]
fn two_pipelines_write_their_own_outputs_with_their_own_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    for i in 0..3 {
        // The same clips in both inputs: only the settings differ.
        write_clip(&t.join(format!("in-a/c{i}.acl.sjson")), 10 + i);
        write_clip(&t.join(format!("in-b/sub/c{i}.acl.sjson")), 10 + i);
    }
    // The pipeline's own threshold wins over the folder's; the folder's shell distance applies
    // where the pipeline sets none.
    write(&t.join("in-a/clipforge.toml"), "error_threshold = 0.3\n");
    write(&t.join("in-b/clipforge.toml"), "shell_distance = 5\n");
    let file = pipelines_file(
        t,
        "[[pipeline]]\nname = \"a\"\ninput = \"in-a\"\noutput = \"out-a\"\nerror_threshold = 0.5\n\n\
         [[pipeline]]\nname = \"b\"\ninput = \"in-b\"\noutput = \"out-b\"\nerror_threshold = 0.002\n",
    );
    let mut w = Watch::start(&["--pipelines".as_ref(), file.as_os_str()]);
    w.wait_for("6 clips compressed", |l| {
        total(l, "a", "compressed") == 3 && total(l, "b", "compressed") == 3
    });
    let lines = w.terminate();
    // Each pipeline's lines name its own input and output only.
    for l in &lines {
        if let Some(rest) = l.strip_prefix("[a] compressed ") {
            assert!(rest.contains("/in-a/") && rest.contains("/out-a/"), "{l}");
        }
        if let Some(rest) = l.strip_prefix("[b] compressed ") {
            assert!(
                rest.contains("/in-b/") && rest.contains("/out-b/sub/"),
                "{l}"
            );
        }
    }
    assert_eq!(cfa_count(&t.join("out-a")), 3);
    assert_eq!(cfa_count(&t.join("out-b")), 3);
    let (ca, cb) = (
        SkipCache::load(&t.join("out-a")),
        SkipCache::load(&t.join("out-b")),
    );
    for i in 0..3 {
        let a = ca.get(&format!("c{i}.acl.sjson")).expect("cache entry a");
        let b = cb
            .get(&format!("sub/c{i}.acl.sjson"))
            .expect("cache entry b");
        let (ra, rb) = (&a.reports[0], &b.reports[0]);
        let (sa, sb) = (ra.settings.clone().unwrap(), rb.settings.clone().unwrap());
        assert_eq!(sa.error_threshold_cm, 0.5);
        assert_eq!(sa.shell_distance_cm, None);
        assert_eq!(sb.error_threshold_cm, 0.002);
        assert_eq!(sb.shell_distance_cm, Some(5.0));
        assert!(ra.max_error_cm <= 0.5 && rb.max_error_cm <= 0.002 * 1.0001);
        // A 250x tighter threshold on the same clip costs bytes.
        assert!(
            rb.compressed_bytes > ra.compressed_bytes,
            "c{i}: {} <= {}",
            rb.compressed_bytes,
            ra.compressed_bytes
        );
    }
}

#[test]
fn restart_catches_up_exactly_once_with_what_changed_while_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    for i in 0..4 {
        write_clip(&t.join(format!("in-a/k{i}.acl.sjson")), 20 + i);
        write_clip(&t.join(format!("in-b/k{i}.acl.sjson")), 30 + i);
    }
    let file = pipelines_file(
        t,
        "[[pipeline]]\nname = \"a\"\ninput = \"in-a\"\noutput = \"out-a\"\n\n\
         [[pipeline]]\nname = \"b\"\ninput = \"in-b\"\noutput = \"out-b\"\nerror_threshold = 0.05\n",
    );
    let args = ["--pipelines".as_ref(), file.as_os_str()];
    let mut w = Watch::start(&args);
    w.wait_for("8 clips compressed", |l| {
        total(l, "a", "compressed") == 4 && total(l, "b", "compressed") == 4
    });
    w.terminate();
    assert!(t.join("out-a/k3.cfa").exists());

    // While nothing watches: in a, one added, one changed, one deleted; in b, one changed.
    write_clip(&t.join("in-a/new.acl.sjson"), 99);
    write_clip(&t.join("in-a/k1.acl.sjson"), 98);
    std::fs::remove_file(t.join("in-a/k3.acl.sjson")).unwrap();
    write_clip(&t.join("in-b/k2.acl.sjson"), 97);

    let mut w = Watch::start(&args);
    w.wait_for("the catch-up", |l| {
        total(l, "a", "compressed") == 2
            && total(l, "a", "removed") == 1
            && total(l, "a", "up to date") == 2
            && total(l, "b", "compressed") == 1
            && total(l, "b", "up to date") == 3
    });
    // Nothing more comes: each change was handled once.
    w.settle(Duration::from_secs(2));
    let lines = w.terminate();
    let once = |name: &str, kind: &str, f: &str| {
        assert_eq!(
            count(&lines, name, kind, f),
            1,
            "{name} {kind} {f}:\n{}",
            lines.join("\n")
        );
    };
    once("a", "compressed", "/new.acl.sjson");
    once("a", "compressed", "/k1.acl.sjson");
    once("a", "removed", "/k3.acl.sjson");
    once("a", "up to date", "/k0.acl.sjson");
    once("a", "up to date", "/k2.acl.sjson");
    once("b", "compressed", "/k2.acl.sjson");
    assert_eq!(total(&lines, "a", "compressed"), 2, "{}", lines.join("\n"));
    assert_eq!(total(&lines, "b", "compressed"), 1, "{}", lines.join("\n"));
    assert!(
        !lines.iter().any(|l| l.contains("FAILED")),
        "{}",
        lines.join("\n")
    );
    assert!(!t.join("out-a/k3.cfa").exists());
    assert!(t.join("out-a/new.cfa").exists());
    assert_eq!(cfa_count(&t.join("out-a")), 4);
    assert_eq!(cfa_count(&t.join("out-b")), 4);
    // The changed clips' outputs hold the new content: the cache has their new hash and b's
    // settings.
    let cb = SkipCache::load(&t.join("out-b"));
    let r = &cb.get("k2.acl.sjson").unwrap().reports[0];
    assert_eq!(r.clip, "clip97");
    assert_eq!(r.settings.as_ref().unwrap().error_threshold_cm, 0.05);
}

#[test]
fn a_watch_honours_folder_settings_changes_and_exclude_patterns() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    write_clip(&t.join("in/a/1.acl.sjson"), 1);
    write_clip(&t.join("in/a/2.acl.sjson"), 2);
    write_clip(&t.join("in/b/3.acl.sjson"), 3);
    let (input, out) = (t.join("in"), t.join("out"));
    let mut w = Watch::start(&[
        input.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "--exclude".as_ref(),
        "_old/".as_ref(),
    ]);
    let compressed = |l: &[String], f: &str| {
        l.iter()
            .filter(|l| l.starts_with("compressed ") && l.contains(f))
            .count()
    };
    w.wait_for("3 clips compressed", |l| {
        l.iter().filter(|l| l.starts_with("compressed ")).count() == 3
    });
    // A settings file appears in a/: exactly a's clips are recompressed with it.
    write(&t.join("in/a/clipforge.toml"), "error_threshold = 0.25\n");
    w.wait_for("a's clips recompressed", |l| {
        compressed(l, "/a/1.acl.sjson") == 2 && compressed(l, "/a/2.acl.sjson") == 2
    });
    // Excluded by the command line and by a folder file: never compressed.
    write_clip(&t.join("in/b/_old/4.acl.sjson"), 4);
    write(&t.join("in/b/clipforge.toml"), "exclude = [\"draft\"]\n");
    write_clip(&t.join("in/b/draft5.acl.sjson"), 5);
    write_clip(&t.join("in/b/6.acl.sjson"), 6);
    w.wait_for("b/6 compressed", |l| compressed(l, "/b/6.acl.sjson") == 1);
    w.settle(Duration::from_secs(1));
    let lines = w.terminate();
    assert_eq!(
        compressed(&lines, "/b/3.acl.sjson"),
        1,
        "{}",
        lines.join("\n")
    );
    assert_eq!(compressed(&lines, "4.acl.sjson"), 0, "{}", lines.join("\n"));
    assert_eq!(compressed(&lines, "draft5"), 0, "{}", lines.join("\n"));
    let c = SkipCache::load(&out);
    let s = c.get("a/1.acl.sjson").unwrap().reports[0]
        .settings
        .clone()
        .unwrap();
    assert_eq!(s.error_threshold_cm, 0.25);
    assert!(!out.join("b/_old").exists() && !out.join("b/draft5.cfa").exists());
}

#[test]
fn overlapping_or_bad_pipelines_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::create_dir_all(t.join("in")).unwrap();
    let run = |text: &str| {
        let f = pipelines_file(t, text);
        let o = Command::new(BIN)
            .args(["watch", "--pipelines"])
            .arg(&f)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let e = run("[[pipeline]]\ninput = \"in\"\noutput = \"in/out\"\n");
    assert!(
        e.contains("pipelines overlap") && e.contains("in/out"),
        "{e}"
    );
    let e = run(
        "[[pipeline]]\ninput = \"in\"\noutput = \"o1\"\n[[pipeline]]\ninput = \"in2\"\noutput = \"o1\"\n",
    );
    assert!(
        e.contains("pipelines overlap") && e.contains("same folder"),
        "{e}"
    );
    let e = run("[[pipeline]]\ninput = \"in\"\noutput = \"o1\"\nthreshold = 0.1\n");
    assert!(
        e.contains("pipelines.toml:4:") && e.contains("threshold"),
        "{e}"
    );
    // Nothing was created for a refused file.
    assert!(!t.join("o1").exists() && !t.join("in/out").exists());
}

/// Two pipelines fed real FBX files (`magnum-plugins/skinning.fbx`: one 26-frame stack at
/// 30 Hz, beside a generated ACL clip; `maya_game_sausage_7500_binary_combined.fbx`: three
/// stacks at 24 Hz) dropped in while they run: each compressed into its own pipeline's output,
/// pipeline b at its own `sample_rate = 60`; a restart compresses nothing (skip cache).
#[test]
fn real_fbx_files_dropped_into_two_pipelines() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::create_dir_all(t.join("in-a")).unwrap();
    std::fs::create_dir_all(t.join("in-b/props")).unwrap();
    let file = pipelines_file(
        t,
        "[[pipeline]]\nname = \"a\"\ninput = \"in-a\"\noutput = \"out-a\"\n\n\
         [[pipeline]]\nname = \"b\"\ninput = \"in-b\"\noutput = \"out-b\"\nsample_rate = 60\n",
    );
    let args = ["--pipelines".as_ref(), file.as_os_str()];
    let mut w = Watch::start(&args);
    w.wait_for("both watching", |_| {
        t.join("out-a").is_dir() && t.join("out-b").is_dir()
    });
    // Moved in complete, as an exporter writing beside the folder would.
    let drop_in = |src: &str, dst: &Path| {
        let staged = t.join("staged.fbx");
        std::fs::copy(data.join("fbx").join(src), &staged).unwrap();
        std::fs::rename(&staged, dst).unwrap();
    };
    drop_in("magnum-plugins/skinning.fbx", &t.join("in-a/skinning.fbx"));
    write_clip(&t.join("in-a/gen.acl.sjson"), 5);
    drop_in(
        "ufbx/maya_game_sausage_7500_binary_combined.fbx",
        &t.join("in-b/props/sausage.fbx"),
    );
    w.wait_for("3 files compressed", |l| {
        total(l, "a", "compressed") == 2 && total(l, "b", "compressed") == 1
    });
    let lines = w.terminate();
    assert!(
        !lines.iter().any(|l| l.contains("FAILED")),
        "{}",
        lines.join("\n")
    );
    assert!(t.join("out-a/skinning.cfa").is_file());
    assert!(t.join("out-a/gen.cfa").is_file());
    for s in ["0_wiggle", "1_spin", "2_deform"] {
        assert!(
            t.join(format!("out-b/props/sausage.{s}.cfa")).is_file(),
            "{s}"
        );
    }
    assert_eq!(cfa_count(&t.join("out-a")), 2);
    assert_eq!(cfa_count(&t.join("out-b")), 3);
    let ca = SkipCache::load(&t.join("out-a"));
    let r = &ca.get("skinning.fbx").expect("cache entry").reports[0];
    assert_eq!(
        (r.format.as_str(), r.samples, r.sample_rate),
        ("fbx", 26, 30.0)
    );
    assert_eq!(r.settings.as_ref().unwrap().sample_rate_hz, None);
    let cb = SkipCache::load(&t.join("out-b"));
    let rows = &cb.get("props/sausage.fbx").expect("cache entry").reports;
    assert_eq!(rows.len(), 3);
    // spin and deform last 0.8333 s: 51 samples at 60 Hz (21 at the file's 24).
    for r in &rows[1..] {
        assert_eq!((r.samples, r.sample_rate), (51, 60.0), "{}", r.clip);
        assert_eq!(r.settings.as_ref().unwrap().sample_rate_hz, Some(60.0));
    }

    // Restart: everything is up to date.
    let mut w = Watch::start(&args);
    w.wait_for("the catch-up", |l| {
        total(l, "a", "up to date") == 2 && total(l, "b", "up to date") == 1
    });
    w.settle(Duration::from_secs(2));
    let lines = w.terminate();
    assert_eq!(total(&lines, "a", "compressed"), 0, "{}", lines.join("\n"));
    assert_eq!(total(&lines, "b", "compressed"), 0, "{}", lines.join("\n"));
}
