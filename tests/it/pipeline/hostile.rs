//! Hostile input and interruption, through the real `clipforge` binary: mixed batches of good
//! clips, memory bombs, FIFOs and garbage; Ctrl-C (SIGINT) and SIGTERM mid-batch; temporary files
//! left by a killed run; a watch fed hostile files. Every run of the binary is capped at 4 GiB of
//! address space, so a missing memory budget shows up as a failed run, not a swapping machine.
#![cfg(unix)]

use crate::common;

use clipforge::anim::ClipReader;
use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::pipeline::cache::SkipCache;
use clipforge::pipeline::report::BatchReport;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::BIN;

/// A command running the binary under a 4 GiB address-space limit.
fn clipforge() -> Command {
    let mut c = Command::new(BIN);
    // SAFETY: setrlimit only, between fork and exec (async-signal-safe).
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 4 << 30,
                rlim_max: 4 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("run clipforge");
    assert!(
        out.status.code().is_some(),
        "clipforge was killed by a signal: {:?}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn clip_text(seed: u64, samples: usize) -> String {
    let clip = generate(&GenerateOptions {
        name: format!("clip{seed}"),
        num_samples: samples,
        sample_rate: 30.0,
        seed,
        with_scale: seed.is_multiple_of(2),
    });
    write_acl_clip(&clip)
}

fn write_clip(path: &Path, seed: u64, samples: usize) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, clip_text(seed, samples)).unwrap();
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// An `.acl.sjson` of ~150 bytes declaring one bone and 49,999,999 samples: importing and
/// compressing it as declared would take gigabytes.
const SAMPLES_BOMB: &str = "version = 1\nclip = { name = \"bomb\" num_samples = 49999999 \
     sample_rate = 30 error_threshold = 0.01 }\nbones = [ { name = \"root\" parent = \"\" \
     vertex_distance = 3.0 } ]\ntracks = [ ]\n";

/// An ACL scalar track list of one track declaring 49,999,999 samples (a `.cfs` path of its own:
/// its refusal must name the limit too).
const SCALAR_LIST_BOMB: &str = "version = 4\ntrack_list = { name = \"bomb\" num_samples = 49999999 \
     sample_rate = 30 }\ntracks = [ { name = \"t\" type = \"float1f\" data = [ ] } ]\n";

/// Zero bones and two billion samples.
const ZERO_BONE_BOMB: &str = "version = 1\nclip = { name = \"bomb0\" num_samples = 2000000000 \
     sample_rate = 30 error_threshold = 0.01 }\nbones = [ ]\ntracks = [ ]\n";

/// Every temporary file (`*.cf-tmp-*`) under `dir`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".cf-tmp-"))
        .map(|e| e.into_path())
        .collect()
}

fn cfa_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "cfa"))
        .map(|e| e.into_path())
        .collect();
    v.sort();
    v
}

fn read_report(path: &Path) -> BatchReport {
    serde_json::from_slice(&std::fs::read(path).expect("JSON report written"))
        .expect("JSON report parses")
}

fn row<'a>(
    report: &'a BatchReport,
    input_ends: &str,
) -> &'a clipforge::pipeline::report::ClipReport {
    report
        .clips
        .iter()
        .find(|c| c.input.ends_with(input_ends))
        .unwrap_or_else(|| panic!("no report row for {input_ends}: {:#?}", report.clips))
}

/// Good clips (generated, plus a few real BVH files when CLIPFORGE_DATA is set) in `input`;
/// returns the output paths they must produce, relative to the output folder.
fn good_clips(input: &Path, n: u64) -> Vec<PathBuf> {
    let mut expected = Vec::new();
    for i in 0..n {
        write_clip(&input.join(format!("good/g{i}.acl.sjson")), 100 + i, 40);
        expected.push(PathBuf::from(format!("good/g{i}.cfa")));
    }
    if let Some(data) = common::real_data() {
        let mut bvh: Vec<PathBuf> = std::fs::read_dir(data.join("bvh"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "bvh"))
            .collect();
        bvh.sort();
        for p in bvh.iter().take(3) {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            std::fs::create_dir_all(input.join("real")).unwrap();
            std::fs::copy(p, input.join("real").join(&name)).unwrap();
            expected.push(PathBuf::from(format!(
                "real/{}.cfa",
                name.trim_end_matches(".bvh")
            )));
        }
    }
    expected
}

#[test]
fn fifo_given_as_a_clip_fails_with_exit_1_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("x.bvh");
    mkfifo(&fifo);
    for args in [
        vec![
            "compress".into(),
            fifo.clone(),
            "-o".into(),
            dir.path().join("out"),
        ],
        vec![
            "convert".into(),
            fifo.clone(),
            "-o".into(),
            dir.path().join("x.acl.sjson"),
        ],
        vec!["inspect".into(), fifo.clone()],
        vec![
            "decompress".into(),
            fifo.clone(),
            "-o".into(),
            dir.path().join("y.acl.sjson"),
        ],
    ] {
        let out = run(clipforge().args(&args));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("x.bvh") && stderr.contains("FIFO"),
            "{args:?}: the error names the file and what it is: {stderr}"
        );
    }
}

#[test]
fn mixed_batch_with_special_and_garbage_files_writes_every_good_clip() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let out = dir.path().join("out");
    let expected = good_clips(&input, 8);
    mkfifo(&input.join("stuck.bvh"));
    mkfifo(&input.join("good/also_stuck.gltf"));
    mkfifo(&input.join("notes.pipe"));
    std::fs::write(
        input.join("junk.bvh"),
        b"\x00\xffHIERARCHY garbage \x7f\x01",
    )
    .unwrap();
    let json = dir.path().join("report.json");
    let csv = dir.path().join("report.csv");
    let o = run(clipforge()
        .arg("compress")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .args(["-j", "2", "--max-memory", "512M"])
        .stdin(Stdio::null()));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");

    for rel in &expected {
        let bytes = std::fs::read(out.join(rel))
            .unwrap_or_else(|e| panic!("{} not written: {e}\n{stderr}", rel.display()));
        ClipReader::new(&bytes).expect("a valid .cfa");
    }
    assert_eq!(cfa_files(&out).len(), expected.len(), "{stderr}");
    assert!(temp_files(&out).is_empty());

    let report = read_report(&json);
    assert_eq!(report.totals.failed, 3, "{:#?}", report.clips);
    for fifo in ["stuck.bvh", "also_stuck.gltf"] {
        let e = row(&report, fifo).error.as_deref().unwrap();
        assert!(e.contains("FIFO") && e.contains(fifo), "{e}");
    }
    let e = row(&report, "junk.bvh").error.as_deref().unwrap();
    assert!(e.contains("junk.bvh"), "{e}");
    assert!(
        !report.clips.iter().any(|c| c.input.ends_with("notes.pipe")),
        "a special file not named like a clip is no clip row"
    );
    assert!(
        stderr.contains("notes.pipe") && stderr.contains("1 special file skipped"),
        "a special file is named and counted: {stderr}"
    );
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv_text.lines().count(), 1 + report.clips.len());

    let cache = SkipCache::load(&out);
    assert!(
        cache.len() >= expected.len(),
        "skip cache holds {} entries",
        cache.len()
    );
    // The cache is real: a second run finds every good clip up to date.
    let again = dir.path().join("again.json");
    let o2 = run(clipforge()
        .arg("compress")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .arg("--json")
        .arg(&again));
    assert_eq!(o2.status.code(), Some(1));
    assert_eq!(read_report(&again).totals.skipped, expected.len());
}

#[test]
fn mixed_batch_with_memory_bombs_refuses_them_and_names_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let out = dir.path().join("out");
    let expected = good_clips(&input, 6);
    std::fs::write(input.join("bomb.acl.sjson"), SAMPLES_BOMB).unwrap();
    std::fs::write(input.join("bomb0.acl.sjson"), ZERO_BONE_BOMB).unwrap();
    std::fs::write(input.join("scalars_huge.acl.sjson"), SCALAR_LIST_BOMB).unwrap();
    mkfifo(&input.join("stuck.acl.sjson"));
    let json = dir.path().join("report.json");
    let csv = dir.path().join("report.csv");
    let o = run(clipforge()
        .arg("compress")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .args(["-j", "2", "--max-memory", "256M"]));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    for rel in &expected {
        assert!(
            out.join(rel).is_file(),
            "{} missing: {stderr}",
            rel.display()
        );
    }
    let report = read_report(&json);
    for bomb in [
        "bomb.acl.sjson",
        "bomb0.acl.sjson",
        "scalars_huge.acl.sjson",
    ] {
        let r = row(&report, bomb);
        let e = r.error.as_deref().unwrap();
        assert!(e.contains(bomb) && e.contains("memory budget"), "{e}");
        assert_eq!(r.limit.as_deref(), Some("memory"), "{e}");
    }
    assert!(row(&report, "stuck.acl.sjson").limit.is_none());
    // The CSV's `limit` column (found by its header: columns may be added after it).
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let mut rd = csv::Reader::from_reader(csv_text.as_bytes());
    let limit = rd
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "limit")
        .expect("a limit column");
    let bomb = rd
        .records()
        .map(Result::unwrap)
        .find(|r| r[0].ends_with("/bomb.acl.sjson"))
        .expect("the bomb's line");
    assert_eq!(&bomb[limit], "memory", "{bomb:?}");
    assert!(SkipCache::load(&out).len() >= expected.len());
    assert!(temp_files(&out).is_empty());
}

/// Spawns a compress of `input` with stderr read line by line on a thread.
fn spawn_compress(input: &Path, out: &Path, json: &Path) -> (Child, mpsc::Receiver<String>) {
    let mut child = clipforge()
        .arg("compress")
        .arg(input)
        .arg("-o")
        .arg(out)
        .arg("--json")
        .arg(json)
        .args(["-j", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits for a line containing `what`; returns every line read.
fn wait_for_line(rx: &mpsc::Receiver<String>, what: &str, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    let mut lines = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) => {
                let hit = l.contains(what);
                lines.push(l);
                if hit {
                    return lines;
                }
            }
            Err(_) => panic!("no line with '{what}' within {limit:?}: {lines:#?}"),
        }
    }
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("clipforge did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
}

/// Clips in the batches a signal interrupts: at `-j 1` a clip of 900 samples takes well over a
/// tenth of a second, so after the first "compressed" line most of the batch is still to do when
/// the signal arrives (the tests assert that some clips were cancelled).
const LONG_BATCH: u64 = 16;

fn long_batch(input: &Path, n: u64) {
    for i in 0..n {
        write_clip(
            &input.join(format!("d{}/c{i}.acl.sjson", i % 4)),
            500 + i,
            900,
        );
    }
}

#[test]
fn sigint_mid_batch_cancels_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let out = dir.path().join("out");
    let json = dir.path().join("report.json");
    long_batch(&input, LONG_BATCH);
    let (mut child, rx) = spawn_compress(&input, &out, &json);
    let mut lines = wait_for_line(&rx, "compressed", Duration::from_secs(120));
    signal(&child, libc::SIGINT);
    let status = wait_exit(&mut child, Duration::from_secs(120));
    lines.extend(rx.iter());
    let stderr = lines.join("\n");
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(
        stderr.contains("cancelled"),
        "the summary is printed: {stderr}"
    );
    assert!(temp_files(&out).is_empty(), "{:?}", temp_files(&out));

    let report = read_report(&json);
    assert_eq!(report.clips.len(), LONG_BATCH as usize);
    assert!(
        report.totals.cancelled > 0,
        "the batch ended before the signal"
    );
    assert_eq!(report.totals.failed, 0);
    let done: Vec<_> = report.clips.iter().filter(|c| c.error.is_none()).collect();
    assert!(!done.is_empty());
    // Every clip reported done is written and valid; no cancelled clip left an output.
    for c in &report.clips {
        match &c.output {
            Some(o) => {
                ClipReader::new(&std::fs::read(o).unwrap()).expect("valid .cfa");
            }
            None => assert!(c.cancelled),
        }
    }
    assert_eq!(cfa_files(&out).len(), done.len());
    // The skip cache was saved and loads: the next run skips exactly the clips done.
    let cache = SkipCache::load(&out);
    assert_eq!(cache.len(), done.len());
    let again = dir.path().join("again.json");
    let o = run(clipforge()
        .arg("compress")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .arg("--json")
        .arg(&again));
    assert_eq!(o.status.code(), Some(0));
    let r2 = read_report(&again);
    assert_eq!(r2.totals.skipped, done.len());
    assert_eq!(cfa_files(&out).len(), LONG_BATCH as usize);
}

#[test]
fn sigterm_cancels_and_a_second_signal_exits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let out = dir.path().join("out");
    let json = dir.path().join("report.json");
    long_batch(&input, LONG_BATCH);

    // SIGTERM cancels like Ctrl-C.
    let (mut child, rx) = spawn_compress(&input, &out, &json);
    wait_for_line(&rx, "compressed", Duration::from_secs(120));
    signal(&child, libc::SIGTERM);
    assert_eq!(
        wait_exit(&mut child, Duration::from_secs(120)).code(),
        Some(130)
    );
    assert!(read_report(&json).totals.cancelled > 0);
    assert!(temp_files(&out).is_empty());

    // Two signals: the second one ends the process without waiting for the clip in flight.
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_file(&json).unwrap();
    let (mut child, rx) = spawn_compress(&input, &out, &json);
    wait_for_line(&rx, "compressed", Duration::from_secs(120));
    // Two different signals back to back (two of the same kind may merge into one delivery):
    // the second arrives long before the clip in flight could be done.
    signal(&child, libc::SIGINT);
    signal(&child, libc::SIGTERM);
    let status = wait_exit(&mut child, Duration::from_secs(60));
    let rest: Vec<String> = rx.iter().collect();
    assert_eq!(status.code(), Some(130), "{rest:#?}");
    assert!(rest.iter().any(|l| l.contains("stopping now")), "{rest:#?}");
    // Whatever it left, the next run removes (only temp files of dead processes exist now).
    let o = run(clipforge().arg("compress").arg(&input).arg("-o").arg(&out));
    assert_eq!(o.status.code(), Some(0));
    assert!(temp_files(&out).is_empty());
    assert_eq!(cfa_files(&out).len(), LONG_BATCH as usize);
}

#[test]
fn stale_temp_files_of_a_killed_run_are_removed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let out = dir.path().join("out");
    write_clip(&input.join("sub/walk.acl.sjson"), 1, 30);
    std::fs::create_dir_all(out.join("sub")).unwrap();
    // Pids above the kernel's pid_max never name a live process: these were left by a killed run.
    let stale = [
        out.join("sub/.walk.cfa.cf-tmp-2147483000-3"),
        out.join(".clipforge-cache.json.cf-tmp-2147483001-0"),
    ];
    // This test's own process is alive: a concurrent run's file is left alone, and so is
    // anything not named like our temporary files.
    let live = out.join(format!("sub/.run.cfa.cf-tmp-{}-1", std::process::id()));
    let unrelated = [
        out.join("sub/notes.txt"),
        out.join("sub/.walk.cfa.cf-tmp-x"),
    ];
    for f in stale.iter().chain([&live]).chain(&unrelated) {
        std::fs::write(f, b"partial").unwrap();
    }
    let o = run(clipforge().arg("compress").arg(&input).arg("-o").arg(&out));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    for f in &stale {
        assert!(!f.exists(), "{} left", f.display());
        assert!(stderr.contains(&f.display().to_string()), "{stderr}");
    }
    assert!(live.exists());
    for f in &unrelated {
        assert!(f.exists());
    }
    assert!(out.join("sub/walk.cfa").is_file());
}

/// Reads a child's stdout lines on a thread.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Collects stdout lines until `done` holds; panics with what arrived after `limit`.
fn collect_lines(
    rx: &mpsc::Receiver<String>,
    limit: Duration,
    mut done: impl FnMut(&[String]) -> bool,
) -> Vec<String> {
    let deadline = Instant::now() + limit;
    let mut got = Vec::new();
    while !done(&got) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) => got.push(l),
            Err(_) => panic!("not done after {limit:?}: {got:#?}"),
        }
    }
    got
}

/// A text glTF whose only buffer is the FIFO `uri` beside it.
fn fifo_buffer_gltf(uri: &str) -> String {
    format!(
        r#"{{"asset":{{"version":"2.0"}},"buffers":[{{"uri":"{uri}","byteLength":48}}],
        "bufferViews":[{{"buffer":0,"byteLength":48}}],
        "accessors":[{{"bufferView":0,"componentType":5126,"count":4,"type":"SCALAR","min":[0],"max":[1]}},
                     {{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3"}}],
        "nodes":[{{"name":"root"}}],"scenes":[{{"nodes":[0]}}],
        "animations":[{{"channels":[{{"sampler":0,"target":{{"node":0,"path":"translation"}}}}],
                       "samplers":[{{"input":0,"output":1}}]}}]}}"#
    )
}

fn watch_is_fed_hostile_files_then_compresses_ten_good_clips(with_budget_cases: bool) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&input).unwrap();
    let mut child = clipforge()
        .arg("watch")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .args(["-j", "2", "--max-memory", "256M"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines_of(&mut child);
    // "watching IN -> OUT" once the folder is watched.
    let (tx, err_rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    wait_for_line(&err_rx, "watching", Duration::from_secs(60));

    mkfifo(&input.join("stuck.bvh"));
    let mut hostile = vec!["stuck.bvh"];
    if with_budget_cases {
        mkfifo(&input.join("buffer.bin"));
        std::fs::write(
            input.join("fifo_buffer.gltf"),
            fifo_buffer_gltf("buffer.bin"),
        )
        .unwrap();
        std::fs::write(input.join("bomb.acl.sjson"), SAMPLES_BOMB).unwrap();
        hostile.extend(["fifo_buffer.gltf", "bomb.acl.sjson"]);
    }
    let failed = collect_lines(&rx, Duration::from_secs(120), |got| {
        hostile
            .iter()
            .all(|h| got.iter().any(|l| l.starts_with("FAILED") && l.contains(h)))
    });
    let line = |name: &str| {
        failed
            .iter()
            .find(|l| l.starts_with("FAILED") && l.contains(name))
            .unwrap()
            .clone()
    };
    assert!(line("stuck.bvh").contains("FIFO"), "{failed:#?}");
    if with_budget_cases {
        assert!(
            line("bomb.acl.sjson").contains("memory budget"),
            "{failed:#?}"
        );
        assert!(line("fifo_buffer.gltf").contains("FIFO"), "{failed:#?}");
    }

    // Then ten good clips arrive (written elsewhere and moved in, as a copy tool does).
    let staging = dir.path().join("staging");
    for i in 0..10u64 {
        let tmp = staging.join(format!("w{i}.acl.sjson"));
        write_clip(&tmp, 700 + i, 60);
        std::fs::rename(&tmp, input.join(format!("w{i}.acl.sjson"))).unwrap();
    }
    let got = collect_lines(&rx, Duration::from_secs(180), |got| {
        (0..10).all(|i| {
            let name = format!("w{i}.acl.sjson");
            got.iter()
                .any(|l| l.starts_with("compressed") && l.contains(&name))
        })
    });
    for i in 0..10 {
        let cfa = out.join(format!("w{i}.cfa"));
        ClipReader::new(&std::fs::read(&cfa).unwrap()).expect("valid .cfa");
    }
    assert!(!got.iter().any(|l| l.starts_with("FAILED")), "{got:#?}");

    // SIGTERM stops the watch cleanly: exit 0, skip cache saved, no temporary file.
    signal(&child, libc::SIGTERM);
    let status = wait_exit(&mut child, Duration::from_secs(60));
    assert_eq!(status.code(), Some(0));
    assert!(SkipCache::load(&out).len() >= 10);
    assert!(temp_files(&out).is_empty());
}

#[test]
fn watch_is_fed_a_fifo_then_compresses_ten_good_clips() {
    watch_is_fed_hostile_files_then_compresses_ten_good_clips(false);
}

#[test]
fn watch_is_fed_a_fifo_buffer_gltf_and_a_memory_bomb_then_compresses_ten_good_clips() {
    watch_is_fed_hostile_files_then_compresses_ten_good_clips(true);
}
