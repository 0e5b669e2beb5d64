//! Folder watching on a temporary folder. Waits use `recv_timeout` on the event channel with
//! generous deadlines; nothing asserts on timing.

use crate::common;

use clipforge::anim::CompressionSettings;
use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::pipeline::watch::{
    WatchEvent, WatchEventKind, WatchHandle, WatchOptions, start_watch,
};
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn clip_text(seed: u64, samples: usize) -> String {
    let clip = generate(&GenerateOptions {
        name: format!("clip{seed}"),
        num_samples: samples,
        sample_rate: 30.0,
        seed,
        with_scale: false,
    });
    let text = write_acl_clip(&clip);
    assert!(!text.is_empty(), "formats::write_acl_clip returned nothing");
    text
}

fn start(input: &Path, out: &Path) -> WatchHandle {
    let mut opts = WatchOptions::new(CompressionSettings::default(), out);
    opts.settle = Duration::from_millis(150);
    opts.debounce = Duration::from_millis(100);
    opts.retry_delay = Duration::from_millis(300);
    opts.retries = 6;
    opts.batch.jobs = 2;
    start_watch(input, opts).unwrap()
}

/// Collects events until `done` says so; panics with what arrived after `limit`.
fn collect_until(
    h: &WatchHandle,
    limit: Duration,
    mut done: impl FnMut(&[WatchEvent]) -> bool,
) -> Vec<WatchEvent> {
    let deadline = Instant::now() + limit;
    let mut got = Vec::new();
    while !done(&got) {
        let left = deadline.saturating_duration_since(Instant::now());
        match h.events().recv_timeout(left) {
            Ok(ev) => got.push(ev),
            Err(_) => panic!(
                "timed out after {limit:?}; events so far: {:#?}",
                got.iter().map(|e| (&e.path, &e.kind)).collect::<Vec<_>>()
            ),
        }
    }
    got
}

/// Whatever arrives within `quiet` (used only to check nothing more happens; not an assertion on time).
fn drain(h: &WatchHandle, quiet: Duration) -> Vec<WatchEvent> {
    let mut got = Vec::new();
    while let Ok(ev) = h.events().recv_timeout(quiet) {
        got.push(ev);
    }
    got
}

fn cfa_files(dir: &Path) -> BTreeSet<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "cfa"))
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

fn no_temp_files(dir: &Path) {
    for e in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
    {
        assert!(
            !e.file_name().to_string_lossy().contains(".cf-tmp-"),
            "temp file left: {}",
            e.path().display()
        );
    }
}

fn is(kind: &WatchEventKind, path: &Path, ev: &WatchEvent) -> bool {
    &ev.kind == kind && ev.path == path
}

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().canonicalize().unwrap().join("in");
    let out = dir.path().canonicalize().unwrap().join("out");
    std::fs::create_dir_all(&input).unwrap();
    (dir, input, out)
}

#[test]
fn a_file_written_in_chunks_is_compressed_once_complete() {
    let (_d, input, out) = dirs();
    let mut h = start(&input, &out);
    let text = clip_text(7, 40);
    let path = input.join("slow.acl.sjson");
    let mut f = std::fs::File::create(&path).unwrap();
    let chunks: Vec<&[u8]> = text.as_bytes().chunks(text.len() / 5 + 1).collect();
    for (i, c) in chunks.iter().enumerate() {
        f.write_all(c).unwrap();
        f.flush().unwrap();
        // One long pause (longer than the settle time: the half file gets read and retried).
        std::thread::sleep(Duration::from_millis(if i == 2 { 700 } else { 60 }));
    }
    drop(f);
    let events = collect_until(&h, Duration::from_secs(30), |evs| {
        evs.iter().any(|e| {
            e.path == path
                && matches!(
                    e.kind,
                    WatchEventKind::Compressed | WatchEventKind::Failed(_)
                )
        })
    });
    let mine: Vec<&WatchEvent> = events.iter().filter(|e| e.path == path).collect();
    assert!(
        matches!(mine.last().unwrap().kind, WatchEventKind::Compressed),
        "a half-written file was reported: {:?}",
        mine.iter().map(|e| &e.kind).collect::<Vec<_>>()
    );
    assert_eq!(mine.len(), 1);
    let row = &mine[0].reports[0];
    assert_eq!((row.bones, row.samples), (23, 40));
    assert!(out.join("slow.cfa").is_file());
    h.stop();
    no_temp_files(&out);
}

#[test]
fn a_burst_of_1000_files_is_compressed_exactly_once_each() {
    let (_d, input, out) = dirs();
    let mut h = start(&input, &out);
    let texts: Vec<String> = (0..8).map(|s| clip_text(s, 3)).collect();
    let mut expected = BTreeSet::new();
    for i in 0..1000 {
        let rel = format!("burst/f{:02}/c{i:04}.acl.sjson", i % 10);
        let p = input.join(&rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, &texts[i % texts.len()]).unwrap();
        expected.insert(p);
    }
    let mut compressed: HashMap<PathBuf, usize> = HashMap::new();
    let events = collect_until(&h, Duration::from_secs(50), |evs| {
        compressed.clear();
        for e in evs {
            if let WatchEventKind::Failed(m) = &e.kind {
                panic!("{}: {m}", e.path.display());
            }
            if e.kind == WatchEventKind::Compressed {
                *compressed.entry(e.path.clone()).or_default() += 1;
            }
        }
        compressed.len() == 1000
    });
    let late = drain(&h, Duration::from_millis(1500));
    for e in events.iter().chain(&late) {
        if e.kind == WatchEventKind::Compressed {
            assert!(
                expected.contains(&e.path),
                "unexpected {}",
                e.path.display()
            );
        }
    }
    let twice: Vec<_> = late
        .iter()
        .filter(|e| e.kind == WatchEventKind::Compressed)
        .collect();
    assert!(
        twice.is_empty(),
        "compressed again: {:?}",
        twice.iter().map(|e| &e.path).collect::<Vec<_>>()
    );
    assert!(compressed.values().all(|&n| n == 1));
    assert_eq!(cfa_files(&out).len(), 1000);
    h.stop();
    no_temp_files(&out);
}

#[test]
fn files_created_right_after_their_new_folder_are_found() {
    let (_d, input, out) = dirs();
    let mut h = start(&input, &out);
    let text = clip_text(3, 10);
    let deep = input.join("new/deeper");
    std::fs::create_dir_all(&deep).unwrap();
    for i in 0..5 {
        std::fs::write(deep.join(format!("x{i}.acl.sjson")), &text).unwrap();
    }
    std::fs::write(input.join("new/top.acl.sjson"), &text).unwrap();
    collect_until(&h, Duration::from_secs(30), |evs| {
        evs.iter()
            .filter(|e| e.kind == WatchEventKind::Compressed)
            .count()
            == 6
    });
    let outs = cfa_files(&out);
    assert_eq!(
        outs,
        [
            "new/deeper/x0.cfa",
            "new/deeper/x1.cfa",
            "new/deeper/x2.cfa",
            "new/deeper/x3.cfa",
            "new/deeper/x4.cfa",
            "new/top.cfa"
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    );
    h.stop();
}

#[test]
fn renamed_and_deleted_inputs_lose_their_outputs() {
    let (_d, input, out) = dirs();
    let mut h = start(&input, &out);
    let a = input.join("a.acl.sjson");
    std::fs::write(&a, clip_text(1, 10)).unwrap();
    collect_until(&h, Duration::from_secs(20), |evs| {
        evs.iter().any(|e| is(&WatchEventKind::Compressed, &a, e))
    });
    assert!(out.join("a.cfa").is_file());

    // Rename: the old output goes, the new name is compressed.
    let b = input.join("b.acl.sjson");
    std::fs::rename(&a, &b).unwrap();
    let evs = collect_until(&h, Duration::from_secs(20), |evs| {
        evs.iter().any(|e| is(&WatchEventKind::Removed, &a, e))
            && evs.iter().any(|e| is(&WatchEventKind::Compressed, &b, e))
    });
    let removed = evs
        .iter()
        .find(|e| is(&WatchEventKind::Removed, &a, e))
        .unwrap();
    assert_eq!(removed.outputs, [out.join("a.cfa")]);
    assert!(!out.join("a.cfa").exists());
    assert!(out.join("b.cfa").is_file());

    // Delete: its output goes.
    std::fs::remove_file(&b).unwrap();
    collect_until(&h, Duration::from_secs(20), |evs| {
        evs.iter().any(|e| is(&WatchEventKind::Removed, &b, e))
    });
    assert!(!out.join("b.cfa").exists());

    // A folder renamed away and deleted.
    let sub = input.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("c.acl.sjson"), clip_text(2, 10)).unwrap();
    collect_until(&h, Duration::from_secs(20), |evs| {
        evs.iter().any(|e| e.kind == WatchEventKind::Compressed)
    });
    assert!(out.join("sub/c.cfa").is_file());
    std::fs::rename(&sub, input.join("moved")).unwrap();
    collect_until(&h, Duration::from_secs(20), |evs| {
        evs.iter()
            .any(|e| is(&WatchEventKind::Removed, &sub.join("c.acl.sjson"), e))
            && evs.iter().any(|e| {
                is(
                    &WatchEventKind::Compressed,
                    &input.join("moved/c.acl.sjson"),
                    e,
                )
            })
    });
    assert!(!out.join("sub/c.cfa").exists());
    assert!(out.join("moved/c.cfa").is_file());
    std::fs::remove_dir_all(input.join("moved")).unwrap();
    collect_until(&h, Duration::from_secs(20), |evs| {
        evs.iter().any(|e| e.kind == WatchEventKind::Removed)
    });
    assert!(cfa_files(&out).is_empty());
    h.stop();
    assert!(!h.is_running());
}

#[test]
fn existing_files_are_compressed_at_start_and_skipped_next_time() {
    let (_d, input, out) = dirs();
    std::fs::write(input.join("x.acl.sjson"), clip_text(4, 10)).unwrap();
    let mut h = start(&input, &out);
    collect_until(&h, Duration::from_secs(20), |evs| {
        evs.iter().any(|e| e.kind == WatchEventKind::Compressed)
    });
    h.stop();
    let mut h = start(&input, &out);
    collect_until(&h, Duration::from_secs(20), |evs| {
        evs.iter().any(|e| e.kind == WatchEventKind::Skipped)
    });
    h.stop();
}

#[test]
fn cli_watch_compresses_new_files() {
    let (_d, input, out) = dirs();
    let mut child = common::clipforge()
        .args([
            "watch",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--jobs",
            "1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    // The watcher is up once the output folder exists.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !out.is_dir() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(input.join("w.acl.sjson"), clip_text(5, 10)).unwrap();
    let line = rx.recv_timeout(Duration::from_secs(20));
    let _ = child.kill();
    let _ = child.wait();
    let line = line.expect("no event line from `clipforge watch`");
    assert!(
        line.starts_with("compressed") && line.contains("w.acl.sjson"),
        "{line}"
    );
    assert!(out.join("w.cfa").is_file());
}

#[test]
fn outputs_of_another_root_are_never_deleted_and_offline_deletions_are_caught_up() {
    use clipforge::pipeline::{BatchOptions, CancelToken, Progress, run_batch, scan};
    let (_d, input, out) = dirs();
    std::fs::create_dir_all(input.join("sub")).unwrap();
    std::fs::write(input.join("b.acl.sjson"), clip_text(1, 10)).unwrap();
    std::fs::write(input.join("sub/a.acl.sjson"), clip_text(2, 10)).unwrap();
    // A batch of the whole tree into `out`...
    let opts = BatchOptions {
        settings: CompressionSettings::default(),
        output_root: out.clone(),
        jobs: 1,
        use_skip_cache: true,
    };
    let r = run_batch(
        &scan(&input),
        &opts,
        &Progress::default(),
        &CancelToken::default(),
    );
    assert_eq!(r.totals.failed, 0);
    assert!(out.join("b.cfa").is_file() && out.join("sub/a.cfa").is_file());
    // ...then a watch of the sub-folder into the same `out`: its root holds no `b` or `sub`, which
    // must not be taken for deleted inputs.
    let sub = input.join("sub");
    let mut h = start(&sub, &out);
    let c = sub.join("c.acl.sjson");
    std::fs::write(&c, clip_text(3, 10)).unwrap();
    let evs = collect_until(&h, Duration::from_secs(20), |evs| {
        evs.iter().any(|e| is(&WatchEventKind::Compressed, &c, e))
    });
    assert!(
        evs.iter().all(|e| e.kind != WatchEventKind::Removed),
        "{evs:?}"
    );
    assert!(
        out.join("b.cfa").is_file()
            && out.join("sub/a.cfa").is_file()
            && out.join("c.cfa").is_file()
    );
    h.stop();

    // Deleted while no watcher ran: caught up at the next start.
    std::fs::remove_file(&c).unwrap();
    let mut h = start(&sub, &out);
    collect_until(&h, Duration::from_secs(20), |evs| {
        evs.iter().any(|e| is(&WatchEventKind::Removed, &c, e))
    });
    assert!(!out.join("c.cfa").exists());
    assert!(out.join("b.cfa").is_file() && out.join("sub/a.cfa").is_file());
    h.stop();
}

/// The race fixed in the watcher: a pass compresses a file (outputs written, skip cache filled),
/// but the file's size/mtime changed while it was read, so that pass's result is dropped and the
/// file is queued again. The next pass finds it up to date in the skip cache; it must still be
/// reported once as Compressed (its outputs are new), not as Skipped. The hook changes the
/// file's modification time (same content) at exactly the racy moment.
#[test]
fn a_file_touched_while_it_was_compressed_is_reported_compressed_once() {
    let (_d, input, out) = dirs();
    let path = input.join("raced.acl.sjson");
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut opts = WatchOptions::new(CompressionSettings::default(), &out);
    opts.settle = Duration::from_millis(150);
    opts.debounce = Duration::from_millis(100);
    opts.batch.jobs = 1;
    let (c, p) = (calls.clone(), path.clone());
    opts.after_process_hook = Some(clipforge::pipeline::watch::ProcessHook(
        std::sync::Arc::new(move |seen: &Path| {
            if seen == p && c.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                let f = std::fs::File::options().write(true).open(seen).unwrap();
                let later = std::time::SystemTime::now() + Duration::from_secs(5);
                f.set_modified(later).unwrap();
            }
        }),
    ));
    let mut h = start_watch(&input, opts).unwrap();
    std::fs::write(&path, clip_text(11, 30)).unwrap();
    let events = collect_until(&h, Duration::from_secs(30), |evs| {
        evs.iter().any(|e| e.path == path)
    });
    let mut mine: Vec<WatchEventKind> = events
        .iter()
        .filter(|e| e.path == path)
        .map(|e| e.kind.clone())
        .collect();
    mine.extend(
        drain(&h, Duration::from_millis(1500))
            .into_iter()
            .filter(|e| e.path == path)
            .map(|e| e.kind),
    );
    assert!(
        calls.load(std::sync::atomic::Ordering::SeqCst) >= 2,
        "the file was not processed a second time after the touch"
    );
    assert_eq!(
        mine,
        vec![WatchEventKind::Compressed],
        "events for the file"
    );
    assert!(out.join("raced.cfa").is_file());
    h.stop();
    no_temp_files(&out);
}

/// A real multi-stack FBX (`maya_game_sausage_7500_binary_combined.fbx`: stacks wiggle, spin and
/// deform, 20/21/21 frames at 24 Hz) moved into a subfolder of a running watch: one `.cfa` per
/// stack in the mirrored folder, each decodable with the stack's frames; a second start
/// compresses nothing (skip cache). A watch with `sample_rate` 60 resamples the same file.
#[test]
fn a_real_fbx_dropped_in_is_compressed_per_stack_and_skipped_on_restart() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (d, input, out) = dirs();
    let src = data.join("fbx/ufbx/maya_game_sausage_7500_binary_combined.fbx");
    let mut h = start(&input, &out);
    std::fs::create_dir_all(input.join("chars")).unwrap();
    // Copied beside the input, then moved in: the watch sees a complete file appear.
    let staged = d.path().join("sausage.fbx");
    std::fs::copy(&src, &staged).unwrap();
    let dropped = input.join("chars/sausage.fbx");
    std::fs::rename(&staged, &dropped).unwrap();
    let evs = collect_until(&h, Duration::from_secs(60), |evs| {
        evs.iter()
            .any(|e| is(&WatchEventKind::Compressed, &dropped, e))
    });
    h.stop();
    let ev = evs
        .iter()
        .find(|e| is(&WatchEventKind::Compressed, &dropped, e))
        .unwrap();
    let expected = [("0_wiggle", 20), ("1_spin", 21), ("2_deform", 21)];
    assert_eq!(
        cfa_files(&out),
        expected
            .iter()
            .map(|(s, _)| format!("chars/sausage.{s}.cfa"))
            .collect::<BTreeSet<_>>()
    );
    assert_eq!(ev.reports.len(), 3);
    for ((stem, frames), row) in expected.iter().zip(&ev.reports) {
        assert_eq!((row.samples, row.sample_rate), (*frames, 24.0), "{stem}");
        assert_eq!(row.format, "fbx");
        assert!(
            row.max_error_cm <= 0.01 * 1.0001,
            "{stem}: {}",
            row.max_error_cm
        );
        let bytes = std::fs::read(out.join(format!("chars/sausage.{stem}.cfa"))).unwrap();
        let reader = clipforge::anim::ClipReader::new(&bytes).unwrap();
        assert_eq!(
            (reader.num_samples(), reader.sample_rate()),
            (*frames, 24.0),
            "{stem}"
        );
    }
    no_temp_files(&out);

    // Second start: the skip cache says the file is up to date; nothing is compressed.
    let mut h = start(&input, &out);
    let evs = collect_until(&h, Duration::from_secs(30), |evs| {
        evs.iter()
            .any(|e| is(&WatchEventKind::Skipped, &dropped, e))
    });
    let more = drain(&h, Duration::from_millis(1500));
    h.stop();
    assert!(
        !evs.iter()
            .chain(&more)
            .any(|e| e.kind == WatchEventKind::Compressed),
        "{:?}",
        evs.iter()
            .chain(&more)
            .map(|e| (&e.path, &e.kind))
            .collect::<Vec<_>>()
    );

    // `--sample-rate 60` (the pipeline/command-line override): a new setting, so the file is
    // compressed again, 0.8333 s spin and deform stacks now at 51 samples.
    let out60 = d.path().join("out60");
    let mut opts = WatchOptions::new(CompressionSettings::default(), &out60);
    opts.settle = Duration::from_millis(150);
    opts.debounce = Duration::from_millis(100);
    opts.batch.jobs = 2;
    opts.overrides.sample_rate = Some(60.0);
    let mut h = start_watch(&input, opts).unwrap();
    let evs = collect_until(&h, Duration::from_secs(60), |evs| {
        evs.iter()
            .any(|e| is(&WatchEventKind::Compressed, &dropped, e))
    });
    h.stop();
    let ev = evs
        .iter()
        .find(|e| is(&WatchEventKind::Compressed, &dropped, e))
        .unwrap();
    for row in &ev.reports[1..] {
        assert_eq!((row.samples, row.sample_rate), (51, 60.0), "{}", row.clip);
        assert_eq!(row.settings.as_ref().unwrap().sample_rate_hz, Some(60.0));
    }
    let bytes = std::fs::read(out60.join("chars/sausage.1_spin.cfa")).unwrap();
    let reader = clipforge::anim::ClipReader::new(&bytes).unwrap();
    assert_eq!((reader.num_samples(), reader.sample_rate()), (51, 60.0));
}
