//! The float32-floor refusal as its own status at the pipeline layer, on the real Fox (its Run
//! clip is below float32 precision at 0.001 cm): a batch counts it apart from failures with the
//! floor in its row; a watched folder reports it once as `BelowPrecision`, never retried, never
//! in the failed set (`CLIPFORGE_DATA=/path/to/shared/data`).

use crate::common;
use crate::common::batch_dirs::{bundled_jog, in_out_with, real_fox};

use clipforge::anim::CompressionSettings;
use clipforge::pipeline::report::{ClipReport, ClipStatus};
use clipforge::pipeline::watch::{WatchEventKind, WatchOptions, start_watch};
use clipforge::pipeline::{BatchOptions, CancelToken, Progress, run_batch, scan};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The threshold the Fox's Run clip cannot meet in float32 (its floor is ~0.00107 cm).
const BELOW_FLOOR_CM: f32 = 0.001;

fn tight() -> CompressionSettings {
    CompressionSettings {
        error_threshold: BELOW_FLOOR_CM,
        ..Default::default()
    }
}

/// The Fox's rows: Survey and Walk compressed, Run refused with its floor, in cm.
fn check_fox_rows(rows: &[ClipReport]) {
    let status: Vec<(&str, ClipStatus)> =
        rows.iter().map(|r| (r.clip.as_str(), r.status())).collect();
    assert_eq!(
        status,
        [
            ("Survey", ClipStatus::Compressed),
            ("Walk", ClipStatus::Compressed),
            ("Run", ClipStatus::BelowPrecision)
        ]
    );
    let run = &rows[2];
    let p = run
        .below_precision
        .as_ref()
        .expect("the floor is in the row");
    assert_eq!(p.threshold_cm, BELOW_FLOOR_CM);
    assert!(
        p.floor_cm > BELOW_FLOOR_CM as f64 && p.floor_cm < 0.002,
        "floor {} cm",
        p.floor_cm
    );
    assert_eq!(p.bone, "b_RightHand_08");
    assert!(p.min_threshold_cm as f64 > p.floor_cm);
    // The message says the same figures; no output, no `limit`.
    let e = run.error.as_deref().unwrap();
    assert!(e.contains("below float32 precision"), "{e}");
    assert!(
        e.contains(&format!(
            "{} cm (bone 'b_RightHand_08')",
            clipforge::pipeline::report::three_digits(p.floor_cm)
        )),
        "{e}"
    );
    assert_eq!((run.output.as_ref(), run.limit.as_ref()), (None, None));
}

#[test]
fn a_batch_counts_a_clip_below_float32_precision_apart_from_failures() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (dir, input, _) = in_out_with(&[&real_fox(&data)]);
    // A broken file beside it is a failure, and stays one.
    std::fs::write(input.join("broken.bvh"), "HIERARCHY\nROOT").unwrap();
    let opts = BatchOptions {
        settings: tight(),
        output_root: dir.path().join("out"),
        jobs: 1,
        use_skip_cache: true,
    };
    let progress = Progress::default();
    let report = run_batch(&scan(&input), &opts, &progress, &CancelToken::default());
    let fox_rows: Vec<ClipReport> = report
        .clips
        .iter()
        .filter(|r| r.input.ends_with("Fox.glb"))
        .cloned()
        .collect();
    check_fox_rows(&fox_rows);
    let t = &report.totals;
    assert_eq!(
        (t.clips, t.failed, t.below_precision, t.skipped, t.cancelled),
        (4, 1, 1, 0, 0)
    );
    // The live counters agree: the refusal is not a failure.
    assert_eq!(progress.failed_clips.load(Ordering::Relaxed), 1);
    // Only the two clips that were compressed were written.
    let mut outs: Vec<String> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cfa"))
        .collect();
    outs.sort();
    assert_eq!(outs, ["Fox.0_Survey.cfa", "Fox.1_Walk.cfa"]);
    // A second run: the skip cache remembers the refusal with its settings, so the unchanged
    // Fox is not compressed (nor searched) again, and its rows still say the refusal and floor;
    // still not a failure.
    let again = run_batch(
        &scan(&input),
        &opts,
        &Progress::default(),
        &CancelToken::default(),
    );
    let t = &again.totals;
    assert_eq!(
        (t.clips, t.failed, t.below_precision, t.skipped),
        (4, 1, 1, 2)
    );
    let fox_again: Vec<ClipReport> = again
        .clips
        .iter()
        .filter(|r| r.input.ends_with("Fox.glb"))
        .cloned()
        .collect();
    assert!(fox_again.iter().all(|r| r.skipped), "{fox_again:?}");
    assert_eq!(fox_again[2].below_precision, fox_rows[2].below_precision);
    assert_eq!(t.compress_ms, 0.0);
    // The first run's time counted the refused clip's search.
    let first_ms: f64 = fox_rows.iter().map(|r| r.compress_ms).sum();
    assert!(fox_rows[2].compress_ms > 0.0);
    assert!((report.totals.compress_ms - first_ms).abs() < 1e-9 * first_ms);
    // A raised threshold is other settings: Run is compressed now.
    let raised = run_batch(
        &scan(&input),
        &BatchOptions {
            settings: CompressionSettings {
                error_threshold: 0.002,
                ..Default::default()
            },
            ..opts
        },
        &Progress::default(),
        &CancelToken::default(),
    );
    assert_eq!(
        (raised.totals.below_precision, raised.totals.skipped),
        (0, 0)
    );
    assert!(dir.path().join("out/Fox.2_Run.cfa").is_file());
}

/// A file whose only clip is refused writes no output, and the skip cache still remembers it:
/// the second run does not search again and still says the refusal.
#[test]
fn a_file_whose_only_clip_is_refused_is_remembered_too() {
    let (dir, input, _) = in_out_with(&[&bundled_jog()]);
    // As the CLI and the app do: no output is written here, and the cache goes beside them.
    std::fs::create_dir_all(dir.path().join("out")).unwrap();
    let opts = BatchOptions {
        // Far below float32 precision for any clip metres from its origin.
        settings: CompressionSettings {
            error_threshold: 1e-6,
            ..Default::default()
        },
        output_root: dir.path().join("out"),
        jobs: 1,
        use_skip_cache: true,
    };
    let batch = || {
        run_batch(
            &scan(&input),
            &opts,
            &Progress::default(),
            &CancelToken::default(),
        )
    };
    let first = batch();
    assert_eq!(first.clips.len(), 1);
    assert_eq!(first.clips[0].status(), ClipStatus::BelowPrecision);
    assert!(!first.clips[0].skipped);
    let second = batch();
    let row = &second.clips[0];
    assert_eq!(row.status(), ClipStatus::BelowPrecision);
    assert!(row.skipped);
    assert_eq!(row.below_precision, first.clips[0].below_precision);
    assert_eq!(second.totals.compress_ms, 0.0);
}

#[test]
fn a_watched_folder_reports_the_refusal_once_and_never_retries_it() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().canonicalize().unwrap().join("in");
    let out = dir.path().canonicalize().unwrap().join("out");
    std::fs::create_dir_all(&input).unwrap();
    std::fs::copy(real_fox(&data), input.join("Fox.glb")).unwrap();
    let mut opts = WatchOptions::new(tight(), &out);
    opts.settle = Duration::from_millis(100);
    opts.debounce = Duration::from_millis(50);
    // Short retries: a retried refusal would show within the wait below.
    opts.retry_delay = Duration::from_millis(50);
    opts.batch.jobs = 1;
    let mut h = start_watch(&input, opts).unwrap();
    let fox_path = input.join("Fox.glb");
    let mut events = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while events.is_empty() && Instant::now() < deadline {
        if let Ok(ev) = h.events().recv_timeout(Duration::from_millis(200))
            && ev.path == fox_path
        {
            events.push(ev);
        }
    }
    // Anything more for the Fox within 2 s (40 retry delays) would be a retry.
    let quiet_until = Instant::now() + Duration::from_secs(2);
    while let Some(left) = quiet_until.checked_duration_since(Instant::now()) {
        if let Ok(ev) = h.events().recv_timeout(left)
            && ev.path == fox_path
        {
            events.push(ev);
        }
    }
    h.stop();
    assert_eq!(
        events.len(),
        1,
        "{:?}",
        events.iter().map(|e| &e.kind).collect::<Vec<_>>()
    );
    let ev = &events[0];
    match &ev.kind {
        WatchEventKind::BelowPrecision(m) => {
            assert!(m.contains("below float32 precision"), "{m}")
        }
        k => panic!("expected BelowPrecision, got {k:?}"),
    }
    assert!(!ev.retracts_failure);
    check_fox_rows(&ev.reports);
    // The clips that could be compressed were.
    assert_eq!(ev.outputs.len(), 2, "{:?}", ev.outputs);
    assert!(ev.outputs.iter().all(|p| p.exists()));
}
