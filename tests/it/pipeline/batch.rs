//! Batch pipeline on generated clips (no external data needed).

use crate::common;
use crate::common::batch_dirs::{
    cfa_count, compress, in_out, temp_files, tree, write_generated_clip as write_clip,
};
use clipforge::anim::{ClipReader, CompressionSettings};
use clipforge::pipeline::report::BatchReport;
use clipforge::pipeline::{
    self, BatchOptions, CancelToken, Progress, run_batch, run_batch_with, scan,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

fn options(out: &Path) -> BatchOptions {
    BatchOptions {
        settings: CompressionSettings::default(),
        output_root: out.to_path_buf(),
        jobs: 2,
        use_skip_cache: true,
    }
}

fn batch(input: &Path, opts: &BatchOptions) -> BatchReport {
    run_batch(
        &scan(input),
        opts,
        &Progress::default(),
        &CancelToken::default(),
    )
}

#[test]
fn batch_mirrors_the_tree_and_fills_every_field() {
    let (_dir, input, out) = in_out();
    write_clip(&input.join("a/b/walk1.acl.sjson"), 1, 40);
    write_clip(&input.join("a/b/walk2.acl.sjson"), 2, 50);
    write_clip(&input.join("a/run.acl.sjson"), 3, 30);
    write_clip(&input.join("top.acl.sjson"), 4, 20);
    write_clip(&input.join(".hidden/skipme.acl.sjson"), 5, 20);
    std::fs::write(input.join("a/notes.txt"), "not a clip").unwrap();
    let before: Vec<Vec<u8>> = scan(&input)
        .iter()
        .map(|f| std::fs::read(&f.path).unwrap())
        .collect();

    let files = scan(&input);
    let rel: Vec<String> = files
        .iter()
        .map(|f| f.relative.to_string_lossy().replace('\\', "/"))
        .collect();
    assert_eq!(
        rel,
        [
            "a/b/walk1.acl.sjson",
            "a/b/walk2.acl.sjson",
            "a/run.acl.sjson",
            "top.acl.sjson"
        ]
    );

    let progress = Progress::default();
    let report = run_batch(&files, &options(&out), &progress, &CancelToken::default());
    assert_eq!(report.clips.len(), 4);
    assert_eq!(progress.done_clips.load(Ordering::Relaxed), 4);
    assert_eq!(progress.total_clips.load(Ordering::Relaxed), 4);
    assert_eq!(progress.failed_clips.load(Ordering::Relaxed), 0);
    assert!(progress.raw_bytes_done.load(Ordering::Relaxed) > 0);

    let outputs = tree(&out);
    for expected in ["a/b/walk1.cfa", "a/b/walk2.cfa", "a/run.cfa", "top.cfa"] {
        assert!(
            outputs.contains(expected),
            "{expected} missing in {outputs:?}"
        );
    }
    assert_eq!(outputs.iter().filter(|p| p.ends_with(".cfa")).count(), 4);
    assert!(temp_files(&out).is_empty());

    for (row, samples) in report.clips.iter().zip([40usize, 50, 30, 20]) {
        assert_eq!(row.error, None, "{row:?}");
        assert!(!row.skipped);
        assert_eq!(row.format, "acl.sjson");
        assert_eq!(row.bones, 23);
        assert_eq!(row.samples, samples);
        assert_eq!(row.sample_rate, 30.0);
        assert!((row.duration_s - (samples - 1) as f32 / 30.0).abs() < 1e-5);
        assert_eq!(row.raw_bytes, (23 * samples * 40) as u64);
        let out_path = PathBuf::from(row.output.as_ref().unwrap());
        let bytes = std::fs::read(&out_path).unwrap();
        assert_eq!(row.file_bytes, bytes.len() as u64);
        assert!(row.compressed_bytes > 0 && row.compressed_bytes <= row.file_bytes);
        assert!((row.ratio - row.raw_bytes as f64 / row.compressed_bytes as f64).abs() < 1e-9);
        assert!(
            row.max_error_cm.is_finite()
                && row.max_error_cm >= row.mean_error_cm
                && row.mean_error_cm >= 0.0
        );
        assert!(row.worst_bone.is_some() && row.worst_sample.unwrap() < samples);
        assert_eq!(row.per_bone_max_error_cm.len(), 23);
        assert_eq!(row.per_sample_max_error_cm.len(), samples);
        assert!(row.compress_ms >= 0.0);
        let decoded = ClipReader::new(&bytes).unwrap();
        assert_eq!(decoded.num_bones(), 23);
        assert_eq!(decoded.num_samples(), samples);
    }
    let t = &report.totals;
    assert_eq!((t.clips, t.failed, t.skipped, t.cancelled), (4, 0, 0, 0));
    assert_eq!(
        t.raw_bytes,
        report.clips.iter().map(|c| c.raw_bytes).sum::<u64>()
    );
    assert!(t.ratio > 0.0 && t.wall_ms > 0.0 && t.throughput_kb_s > 0.0);
    assert!(t.compress_ms_p50 <= t.compress_ms_p85 && t.compress_ms_p85 <= t.compress_ms_p99);

    // Inputs untouched.
    let after: Vec<Vec<u8>> = scan(&input)
        .iter()
        .map(|f| std::fs::read(&f.path).unwrap())
        .collect();
    assert_eq!(before, after);
}

#[test]
fn a_bad_file_is_reported_and_the_batch_goes_on() {
    let (_dir, input, out) = in_out();
    write_clip(&input.join("good1.acl.sjson"), 1, 20);
    std::fs::write(
        input.join("broken.acl.sjson"),
        "version = 5\nclip = { name = \"x\"\n  this is not sjson",
    )
    .unwrap();
    std::fs::write(input.join("empty.bvh"), "").unwrap();
    write_clip(&input.join("good2.acl.sjson"), 2, 20);

    let progress = Progress::default();
    let report = run_batch(
        &scan(&input),
        &options(&out),
        &progress,
        &CancelToken::default(),
    );
    assert_eq!(report.clips.len(), 4);
    for row in &report.clips {
        if row.input.contains("good") {
            assert_eq!(row.error, None);
        } else {
            let e = row.error.as_ref().expect("bad file must fail");
            let name = Path::new(&row.input)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            assert!(e.contains(&name), "error should name the file: {e}");
            assert!(row.output.is_none());
        }
    }
    assert_eq!(report.totals.failed, 2);
    assert_eq!(progress.failed_clips.load(Ordering::Relaxed), 2);
    assert_eq!(cfa_count(&out), 2);
    assert!(!out.join("broken.cfa").exists() && !out.join("empty.cfa").exists());
}

#[test]
fn cancelling_mid_batch_leaves_no_partial_or_temp_files() {
    let (_dir, input, out) = in_out();
    for i in 0..60 {
        write_clip(
            &input.join(format!("d{}/clip{i:03}.acl.sjson", i % 4)),
            i,
            30,
        );
    }
    let files = scan(&input);
    let cancel = CancelToken::default();
    let progress = Progress::default();
    let rows_seen = AtomicUsize::new(0);
    // The callback runs on a worker thread while the other worker is busy with its clip.
    let on_row = |_: &clipforge::pipeline::report::ClipReport| {
        if rows_seen.fetch_add(1, Ordering::SeqCst) + 1 == 5 {
            cancel.cancel();
        }
    };
    let report = run_batch_with(&files, &options(&out), &progress, &cancel, &on_row);
    assert_eq!(report.clips.len(), 60, "every clip has a row, done or not");
    let cancelled: Vec<_> = report.clips.iter().filter(|c| c.cancelled).collect();
    assert!(cancelled.len() >= 40, "only {} cancelled", cancelled.len());
    assert_eq!(report.totals.cancelled, cancelled.len());
    assert_eq!(report.totals.failed, 0, "cancelled clips are not failures");
    for c in &cancelled {
        assert!(c.error.as_ref().unwrap().contains("cancelled"));
        assert!(c.output.is_none());
    }
    let done: BTreeSet<String> = report
        .clips
        .iter()
        .filter(|c| c.error.is_none())
        .map(|c| {
            Path::new(c.output.as_ref().unwrap())
                .strip_prefix(&out)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    let cfa: BTreeSet<String> = tree(&out)
        .into_iter()
        .filter(|p| p.ends_with(".cfa"))
        .collect();
    assert_eq!(cfa, done, "exactly the finished clips have outputs");
    for p in &cfa {
        ClipReader::new(&std::fs::read(out.join(p)).unwrap()).expect("complete output");
    }
    assert!(temp_files(&out).is_empty());
    assert_eq!(progress.done_clips.load(Ordering::Relaxed), 60);

    // Cancelled clips are not in the cache: the next run compresses them and skips the done ones.
    let again = batch(&input, &options(&out));
    assert_eq!(again.totals.failed + again.totals.cancelled, 0);
    assert_eq!(again.totals.skipped, done.len());
}

#[test]
fn cancelling_from_another_thread_stops_the_batch() {
    let (_dir, input, out) = in_out();
    for i in 0..150 {
        write_clip(&input.join(format!("clip{i:03}.acl.sjson")), i, 40);
    }
    let files = scan(&input);
    let cancel = CancelToken::default();
    let progress = Progress::default();
    let opts = BatchOptions {
        jobs: 1,
        ..options(&out)
    };
    let report = std::thread::scope(|s| {
        s.spawn(|| {
            while progress.done_clips.load(Ordering::Relaxed) < 3 {
                std::thread::yield_now();
            }
            cancel.cancel();
        });
        run_batch(&files, &opts, &progress, &cancel)
    });
    assert_eq!(report.clips.len(), 150);
    assert!(
        report.totals.cancelled > 0,
        "the batch finished before the cancel arrived"
    );
    let ok = report.clips.iter().filter(|c| c.error.is_none()).count();
    assert_eq!(cfa_count(&out), ok);
    assert!(temp_files(&out).is_empty());
}

#[test]
fn skip_cache_skips_unchanged_and_redoes_changed_clips() {
    let (_dir, input, out) = in_out();
    for i in 0..4 {
        write_clip(&input.join(format!("c{i}.acl.sjson")), i, 25);
    }
    let first = batch(&input, &options(&out));
    assert_eq!(first.totals.skipped, 0);
    assert!(out.join(pipeline::CACHE_FILE_NAME).is_file());

    let second = batch(&input, &options(&out));
    assert_eq!(second.totals.skipped, 4);
    for (a, b) in first.clips.iter().zip(&second.clips) {
        assert!(b.skipped);
        assert_eq!(
            (a.ratio, a.max_error_cm, a.compressed_bytes, a.bones),
            (b.ratio, b.max_error_cm, b.compressed_bytes, b.bones)
        );
        assert_eq!(a.output, b.output);
    }
    assert_eq!(
        second.totals.raw_bytes, first.totals.raw_bytes,
        "skipped rows keep their figures"
    );

    // One input changes: only it is recompressed.
    write_clip(&input.join("c2.acl.sjson"), 99, 25);
    let third = batch(&input, &options(&out));
    let redone: Vec<&str> = third
        .clips
        .iter()
        .filter(|c| !c.skipped)
        .map(|c| c.clip.as_str())
        .collect();
    assert_eq!(redone, ["clip99"]);

    // A deleted output is remade.
    std::fs::remove_file(out.join("c0.cfa")).unwrap();
    let fourth = batch(&input, &options(&out));
    assert_eq!(fourth.totals.skipped, 3);
    assert!(out.join("c0.cfa").is_file());

    // New settings: everything again.
    let mut opts = options(&out);
    opts.settings.error_threshold = 0.05;
    let fifth = batch(&input, &opts);
    assert_eq!(fifth.totals.skipped, 0);
    let sixth = batch(&input, &opts);
    assert_eq!(sixth.totals.skipped, 4);

    // --no-skip.
    let seventh = batch(
        &input,
        &BatchOptions {
            use_skip_cache: false,
            ..opts
        },
    );
    assert_eq!(seventh.totals.skipped, 0);
}

#[test]
fn json_and_csv_reports_have_stable_keys() {
    let (_dir, input, out) = in_out();
    write_clip(&input.join("a.acl.sjson"), 1, 20);
    std::fs::write(input.join("bad.bvh"), "HIERARCHY\nnonsense").unwrap();
    let report = batch(&input, &options(&out));
    let v: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    let keys = |v: &serde_json::Value| {
        v.as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<BTreeSet<String>>()
    };
    assert_eq!(
        keys(&v),
        BTreeSet::from(["settings".into(), "clips".into(), "totals".into()])
    );
    assert_eq!(
        keys(&v["settings"]),
        BTreeSet::from(["error_threshold".into(), "shell_distance".into()])
    );
    let clip_keys = [
        "input",
        "output",
        "clip",
        "format",
        "bones",
        "samples",
        "sample_rate",
        "duration_s",
        "raw_bytes",
        "compressed_bytes",
        "file_bytes",
        "ratio",
        "max_error_cm",
        "max_error_at_samples_cm",
        "mean_error_cm",
        "worst_bone",
        "worst_sample",
        "compress_ms",
        "bit_rate_histogram",
        "default_subtracks",
        "constant_subtracks",
        "animated_subtracks",
        "segments",
        "looping",
        "per_bone_max_error_cm",
        "per_sample_max_error_cm",
        "skipped",
        "error",
        "cancelled",
        "warnings",
        "limit",
        // Null, or the failed row's kind of failure (`report::Failure`).
        "failure",
        "settings",
        // Derived from the fields above when the report is written (`ClipReport::status`).
        "status",
    ];
    for c in v["clips"].as_array().unwrap() {
        assert_eq!(keys(c), clip_keys.iter().map(|s| s.to_string()).collect());
        // What kind of failure, typed: a script decides on it, not on `error`'s words.
        let bad = c["input"].as_str().unwrap().ends_with("bad.bvh");
        let want = if bad {
            "invalid_file".into()
        } else {
            serde_json::Value::Null
        };
        assert_eq!(c["failure"], want, "{c}");
    }
    let total_keys = [
        "clips",
        "failed",
        "skipped",
        "cancelled",
        // Clips refused as below float32 precision, not in `failed`.
        "below_precision",
        "raw_bytes",
        "compressed_bytes",
        "ratio",
        "max_error_cm",
        "compress_ms",
        "wall_ms",
        "throughput_kb_s",
        "compress_ms_p50",
        "compress_ms_p85",
        "compress_ms_p99",
        // Scalar track lists' worst error as a share of a track's precision (never in cm).
        "worst_scalar_error_over_precision",
    ];
    assert_eq!(
        keys(&v["totals"]),
        total_keys.iter().map(|s| s.to_string()).collect()
    );
    // Round trip.
    let back: BatchReport = serde_json::from_value(v).unwrap();
    assert_eq!(back.clips.len(), 2);

    let csv = report.to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0], clipforge::pipeline::report::CSV_COLUMNS.join(","));
}

#[test]
fn output_names() {
    use clipforge::pipeline::{clip_output_path, output_base, plan_outputs, sanitize_name};
    assert_eq!(
        output_base(Path::new("a/b/walk.bvh"), false),
        Path::new("a/b/walk")
    );
    assert_eq!(output_base(Path::new("x.ACL.SJSON"), false), Path::new("x"));
    assert_eq!(
        clip_output_path(Path::new("a/b/walk"), 0, 1, "walk"),
        Path::new("a/b/walk.cfa")
    );
    assert_eq!(
        clip_output_path(Path::new("g/robot"), 3, 14, "Robot Jump!"),
        Path::new("g/robot.3_Robot_Jump.cfa")
    );
    assert_eq!(sanitize_name("../../etc"), "______etc");
    assert_eq!(sanitize_name(""), "anim");
    // Two inputs of one folder with the same stem keep their extension.
    let dir = tempfile::tempdir().unwrap();
    for n in ["walk.bvh", "walk.acl.sjson", "run.bvh"] {
        std::fs::write(dir.path().join(n), "").unwrap();
    }
    let files = scan(dir.path());
    let bases: Vec<PathBuf> = plan_outputs(&files);
    assert_eq!(
        bases,
        [
            PathBuf::from("run"),
            PathBuf::from("walk.acl.sjson"),
            PathBuf::from("walk.bvh")
        ]
    );
}

#[test]
fn atomic_write_replaces_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sub/x.cfa");
    pipeline::write_atomic(&p, b"one").unwrap();
    pipeline::write_atomic(&p, b"two").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"two");
    // The parent is a file: the write fails and leaves nothing behind.
    let bad = dir.path().join("sub/x.cfa/y.cfa");
    assert!(pipeline::write_atomic(&bad, b"three").is_err());
    assert_eq!(tree(dir.path()), BTreeSet::from(["sub/x.cfa".to_string()]));
}

#[test]
fn scan_of_a_file_returns_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("one.bvh");
    std::fs::write(&p, "").unwrap();
    let files = scan(&p);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].relative, Path::new("one.bvh"));
    assert!(scan(&dir.path().join("missing")).is_empty());
}

#[test]
fn cli_compress_exit_code_and_reports() {
    let (dir, input, out) = in_out();
    write_clip(&input.join("a.acl.sjson"), 1, 20);
    write_clip(&input.join("sub/b.acl.sjson"), 2, 20);
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let o = compress(&input, &out)
        .args(["--jobs", "2", "--json"])
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("2 clips"), "{stderr}");
    assert!(out.join("a.cfa").is_file() && out.join("sub/b.cfa").is_file());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["totals"]["clips"], 2);
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 3);

    // Second run: up to date, still success.
    let o = compress(&input, &out).output().unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("2 up to date"));

    // A broken file: non-zero exit, the file named on stderr, the good ones still written.
    std::fs::write(input.join("broken.acl.sjson"), "not { sjson").unwrap();
    let o = compress(&input, &out).args(["--no-skip"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("broken.acl.sjson"));
    assert!(out.join("a.cfa").is_file());

    // A missing path: non-zero.
    let o = compress(Path::new("/nonexistent/clips"), &out)
        .output()
        .unwrap();
    assert!(!o.status.success());
}

#[test]
fn cli_output_inside_input_is_not_rescanned() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write_clip(&input.join("a.acl.sjson"), 1, 20);
    let out = input.join("compressed");
    for _ in 0..2 {
        let o = compress(&input, &out).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(cfa_count(&out), 1);
}

#[test]
fn cli_inspect_decompress_convert() {
    let (dir, input, out) = in_out();
    write_clip(&input.join("walk.acl.sjson"), 3, 30);
    let o = compress(&input, &out).output().unwrap();
    assert!(o.status.success());
    let cfa = out.join("walk.cfa");

    let o = common::clipforge()
        .args(["inspect", cfa.to_str().unwrap(), "--json", "--raw"])
        .arg(input.join("walk.acl.sjson"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["bones"], 23);
    assert_eq!(v["samples"], 30);
    assert!(v["error"]["max_error_cm"].as_f64().unwrap() >= 0.0);
    assert!(
        v["compression"].is_object(),
        "stats found through the batch cache"
    );

    let o = common::clipforge()
        .args(["inspect", cfa.to_str().unwrap(), "--bones"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("l_forearm"));

    let back = dir.path().join("back.acl.sjson");
    let o = common::clipforge()
        .args([
            "decompress",
            cfa.to_str().unwrap(),
            "-o",
            back.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let clips = clipforge::anim::formats::load_clips(&back).unwrap();
    assert_eq!((clips[0].num_bones(), clips[0].num_samples), (23, 30));

    let conv = dir.path().join("conv.acl.sjson");
    let o = common::clipforge()
        .args([
            "convert",
            back.to_str().unwrap(),
            "-o",
            conv.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        clipforge::anim::formats::load_clips(&conv).unwrap()[0].num_samples,
        30
    );
    // `-o DIR/` names a folder even before it exists: the file goes inside, named after the input.
    let new_dir = dir.path().join("new-dir");
    let o = common::clipforge()
        .args(["convert", back.to_str().unwrap(), "-o"])
        .arg(format!("{}/", new_dir.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(new_dir.join("back.acl.sjson").is_file());
    assert!(!dir.path().join("new-dir.acl.sjson").exists());

    let o = common::clipforge()
        .args(["inspect", input.join("walk.acl.sjson").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!o.status.success(), "a non-.cfa file is refused");
}

#[test]
fn scan_lists_10000_files() {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..100 {
        let sub = dir.path().join(format!("set{d:03}/take"));
        std::fs::create_dir_all(&sub).unwrap();
        for i in 0..100 {
            std::fs::write(sub.join(format!("clip{i:03}.bvh")), "").unwrap();
        }
        std::fs::write(sub.join("readme.txt"), "").unwrap();
    }
    std::fs::create_dir_all(dir.path().join(".git/objects")).unwrap();
    std::fs::write(dir.path().join(".git/objects/x.bvh"), "").unwrap();
    let t = std::time::Instant::now();
    let files = scan(dir.path());
    // Speed is for benchmarks; printed for information only.
    eprintln!("scan of 10,000 files: {:?}", t.elapsed());
    assert_eq!(files.len(), 10_000);
    assert!(files.windows(2).all(|w| w[0].path < w[1].path), "sorted");
    assert_eq!(files[0].relative, Path::new("set000/take/clip000.bvh"));
}
