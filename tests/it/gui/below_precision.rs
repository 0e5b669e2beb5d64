//! The app on the real Fox at 0.001 cm, below float32 precision for its Run clip: the row's
//! status is its own (the floor in its text, not "failed"), the footer and the last batch count
//! it apart from failures, and raising the threshold makes the refusal stale
//! (`CLIPFORGE_DATA=/path/to/shared/data`).
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
    assert_eq!(h.query_all_by_label_contains("failed:").count(), 0);

    // Its detail says it as a refusal too, not as a failure.
    h.get_by_label("Fox · Run").click();
    wait_idle(&mut h);
    h.get_by_label_contains("Refused: ");
    assert!(h.query_by_label_contains("Failed: ").is_none());

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
