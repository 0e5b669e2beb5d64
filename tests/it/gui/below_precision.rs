//! The app on the real Fox at 0.001 cm, below float32 precision for its Run clip: the row's
//! status is its own (the floor in its text, not "failed"), the footer and the last batch count
//! it apart from failures, a second batch keeps the refusal (remembered by the skip cache),
//! raising the threshold makes the refusal stale, and the Watch log's "problems only" filter
//! keeps refusals (`CLIPFORGE_DATA=/path/to/shared/data`).
#![cfg(feature = "gui")]

use crate::common;

use crate::common::app_folder::{state_on, type_input_folder};
use crate::common::gui::{harness, wait_idle};
use clipforge::gui::RowStatus;
use egui_kittest::kittest::Queryable;
use std::path::Path;

#[test]
fn the_fox_run_row_is_below_float32_precision_with_its_floor() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (input, out) =
        common::app_folder::folders_with_real_file(&data, "gltf/fox-via-bevy/Fox.glb");
    let mut state = state_on(Path::new(""), out.path());
    state.persisted.settings.error_threshold_cm = 0.001;
    let mut h = harness(state);
    h.run();
    type_input_folder(&mut h, input.path());
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);

    let status = |clip: &str| status_of(&h, clip);
    let RowStatus::BelowPrecision(p) = status("Run") else {
        panic!("Run: {:?}", status("Run"));
    };
    assert!(
        p.floor_cm > 0.001 && p.floor_cm < 0.002,
        "floor {}",
        p.floor_cm
    );
    assert_eq!((p.threshold_cm, p.bone.as_str()), (0.001, "b_RightHand_08"));
    for clip in ["Survey", "Walk"] {
        assert!(
            matches!(status(clip), RowStatus::Ok | RowStatus::OverThreshold),
            "{clip}: {:?}",
            status(clip)
        );
    }
    let s = h.state();
    let sum = &s.library.summary;
    assert_eq!((sum.failed, sum.below_precision, sum.compressed), (0, 1, 2));
    let t = &s
        .jobs
        .last_batch
        .as_ref()
        .expect("a batch ran")
        .report
        .totals;
    assert_eq!((t.failed, t.below_precision), (0, 1));
    // On screen: the row's status with its floor, the footer's count, no "failed".
    h.get_by_label("below float32 floor");
    let hover = status("Run").hover().unwrap();
    assert!(
        hover.contains("0.001 cm is below float32 precision")
            && hover.contains("reaches 0.00107 cm (bone 'b_RightHand_08')")
            && hover.contains("at least 0.00111 cm"),
        "{hover}"
    );
    h.get_by_label("1 below float32 precision");
    assert!(h.query_by_label("1 failed").is_none());
    // Its search ran: its time is in the Time column, as in the footer's percentiles.
    let run_ms = run_row_ms(&h);
    assert!(run_ms > 0.0);
    assert!(
        h.query_all_by_label(&format!("{run_ms:.2}")).count() >= 1,
        "Run's time {run_ms:.2} ms is shown"
    );
    assert_eq!(h.query_all_by_label_contains("failed:").count(), 0);

    // Compressed again unchanged: the skip cache remembers the refusal, so nothing is searched
    // again, and the row still says it with its floor (not "up to date").
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    let RowStatus::BelowPrecision(again) = status_of(&h, "Run") else {
        panic!("Run, second batch: {:?}", status_of(&h, "Run"));
    };
    assert_eq!(again.floor_cm, p.floor_cm);
    for clip in ["Survey", "Walk"] {
        assert!(
            matches!(
                status_of(&h, clip),
                RowStatus::Skipped | RowStatus::OverThreshold
            ),
            "{clip}: {:?}",
            status_of(&h, clip)
        );
    }
    let t = &h.state().jobs.last_batch.as_ref().unwrap().report.totals;
    assert_eq!((t.skipped, t.below_precision, t.compress_ms), (2, 1, 0.0));
    h.get_by_label("1 below float32 precision");
    // Nothing was compressed: the last batch gives no rate (it said "0 B/s").
    h.get_by_label_contains("· nothing compressed");
    assert_eq!(h.query_all_by_label_contains(" 0 B/s").count(), 0);

    // Its detail says it as a refusal too, not as a failure.
    h.get_by_label("Fox · Run").click();
    wait_idle(&mut h);
    // With its floor written as the row's hover and the CLI write it (it said "0.001070 cm").
    let refused = h
        .get_by_label_contains("Refused: ")
        .value()
        .unwrap_or_default();
    assert!(
        refused.contains("reaches 0.00107 cm (bone 'b_RightHand_08')")
            && refused.contains("raise the threshold to at least 0.00111 cm"),
        "{refused}"
    );
    assert!(h.query_by_label_contains("Failed: ").is_none());
    // The mesh view says the refusal and its floor as the row's hover does (it said "Compress
    // this clip to see its vertex error" of a clip compressed and refused).
    assert!(
        h.query_by_label_contains("Compress this clip to see its vertex error")
            .is_none()
    );
    h.get_by_label(
        "Refused, no vertex error: below float32 precision (floor 0.00107 cm, bone \
         'b_RightHand_08'). Raise the threshold to at least 0.00111 cm.",
    );
    // It was tried with its settings, and has no bit rates because it was refused: neither
    // "Will compress with" nor "Not compressed yet".
    h.get_by_label_contains("Refused with threshold 0.001 cm");
    h.get_by_label("Refused (below float32 precision): no output, no bit rates.");
    assert!(h.query_by_label_contains("Will compress with").is_none());
    assert!(h.query_by_label("Not compressed yet.").is_none());

    // A looser threshold lifts the refusal: the row no longer claims it.
    h.state_mut().persisted.settings.error_threshold_cm = 0.01;
    h.run();
    h.run();
    assert_eq!(status_of(&h, "Run"), RowStatus::Stale);
}

fn status_of(h: &egui_kittest::Harness<'_, clipforge::gui::AppState>, clip: &str) -> RowStatus {
    h.state()
        .library
        .rows
        .iter()
        .find(|r| r.key.clip == clip)
        .unwrap_or_else(|| panic!("no row {clip}"))
        .status
        .clone()
}

/// The Watch log's "problems only" filter keeps the refusals beside the failures: a user
/// looking for what needs doing must see a threshold to raise as well as a file to fix.
#[test]
fn the_watch_logs_problems_only_filter_keeps_refusals() {
    use clipforge::gui::{LogEntry, LogKind, Tab};
    let out = tempfile::tempdir().unwrap();
    let mut state = state_on(Path::new(""), out.path());
    state.persisted.tab = Tab::Watch;
    for (kind, message) in [
        (LogKind::Compressed, "walk.bvh: 1 clip compressed"),
        (LogKind::Failed, "broken.bvh: no MOTION section"),
        (
            LogKind::BelowPrecision,
            "Fox.glb: threshold too low: 0.001 cm is below float32 precision",
        ),
        (LogKind::Skipped, "run.bvh: up to date"),
    ] {
        state.watch.log.push_back(LogEntry {
            time: std::time::SystemTime::now(),
            pipeline: "p".into(),
            kind,
            message: message.into(),
        });
    }
    let mut h = harness(state);
    h.run();
    h.get_by_label("problems only").click();
    h.run();
    assert!(h.state().watch.filter_problems_only);
    h.get_by_label("refused");
    h.get_by_label_contains("below float32 precision");
    h.get_by_label("failed");
    assert!(h.query_by_label("compressed").is_none());
    assert!(h.query_by_label("skipped").is_none());
}

/// The Fox · Run row's compression time (its search, refused).
fn run_row_ms(h: &egui_kittest::Harness<'_, clipforge::gui::AppState>) -> f64 {
    h.state()
        .library
        .rows
        .iter()
        .find(|r| r.key.clip == "Run")
        .and_then(|r| r.report())
        .map_or(0.0, |r| r.compress_ms)
}
