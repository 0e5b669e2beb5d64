//! What the real window showed a new user that was not so (issue 24, ux30's tour under Xvfb):
//! after opening another folder, the line "Last batch: 8 clips from 8 files … 2.2 MiB/s" and the
//! footer's throughput still described the batch of the folder before, over a table of which
//! nothing had been compressed (and an export took that batch's wall time); a threshold typed
//! back to 0.01 cm left the Preset box on "Custom"; a small folder was "scanned in 0 ms".
#![cfg(feature = "gui")]

use crate::common::app_folder::{clip_folders, compressed};
use crate::common::gui::wait_idle;
use clipforge::gui::{AppState, Preset};
use egui_kittest::{Harness, kittest::Queryable};
use std::path::Path;

/// Another input folder in the field (as typed), then Scan, waited for.
fn open_folder(h: &mut Harness<'_, AppState>, dir: &Path) {
    h.state_mut().persisted.input_dir = dir.display().to_string();
    h.get_by_label("Scan").click();
    wait_idle(h);
}

#[test]
fn the_last_batch_line_belongs_to_the_folders_it_ran_on() {
    let (a, out) = clip_folders(2, 30);
    let (b, _) = clip_folders(3, 30);
    let mut h = compressed(a.path(), out.path());
    h.get_by_label_contains("Last batch: 2 clips from 2 files");
    assert!(h.query_by_label_contains("Throughput: ").is_none());
    assert!(h.state().results_report().totals.wall_ms > 0.0);

    // Another folder, nothing of it compressed: no batch of it to speak of.
    open_folder(&mut h, b.path());
    assert_eq!(h.state().library.rows.len(), 3);
    // Three files list in well under a millisecond: said so, not "scanned in 0 ms".
    assert!(h.query_by_label("scanned in 0 ms").is_none());
    let ms = h.state().library.scan_time.unwrap().as_secs_f64() * 1000.0;
    if ms < 0.5 {
        h.get_by_label("scanned in < 1 ms");
    }
    assert!(h.query_by_label_contains("Last batch:").is_none());
    h.get_by_label("Throughput: no batch on this folder since the app started");
    assert_eq!(h.state().results_report().totals.wall_ms, 0.0);

    // Back on the first folder the batch that ran on it is its own again.
    open_folder(&mut h, a.path());
    h.get_by_label_contains("Last batch: 2 clips from 2 files");
    assert!(h.query_by_label_contains("Throughput: ").is_none());
}

/// A folder typed that does not exist, then Scan: the table had kept the previous folder's rows
/// and its "Last batch" line under "Input folder not found" (the Headers tab's finding, in the
/// Clips tab). They go; the folder typed right again brings them back.
#[test]
fn a_missing_input_folder_shows_no_rows_of_the_previous_one() {
    let (a, out) = clip_folders(2, 30);
    let mut h = compressed(a.path(), out.path());
    h.get_by_label_contains("Last batch: 2 clips from 2 files");
    let missing = a.path().join("moved-away");
    open_folder(&mut h, &missing);
    h.get_by_label(&format!("Input folder not found: {}", missing.display()));
    assert_eq!(h.state().library.rows.len(), 0);
    assert!(h.query_by_label("clip_00").is_none());
    assert!(h.query_by_label_contains("Last batch:").is_none());
    h.get_by_label_contains("0 compressed of 0");

    open_folder(&mut h, a.path());
    assert_eq!(h.state().library.rows.len(), 2);
    h.get_by_label_contains("Last batch: 2 clips from 2 files");
}

/// A threshold typed back to a preset's value is that preset: typed 0.01 (no shell override)
/// the Preset box said "Custom" beside a field reading 0.0100, the Default preset's value.
#[test]
fn a_typed_threshold_equal_to_a_presets_is_that_preset() {
    let out = tempfile::tempdir().unwrap();
    let mut h =
        crate::common::gui::harness(crate::common::app_folder::state_with_output(out.path()));
    h.run();
    for (typed, want) in [
        ("0.05", Preset::Custom),
        ("0.01", Preset::Default),
        ("0.001", Preset::HighQuality),
    ] {
        crate::common::gui::type_threshold(&mut h, typed);
        assert_eq!(h.state().persisted.settings.preset, want, "typed {typed}");
        // And the Preset box shows it.
        assert!(
            crate::common::gui::drawn_texts(&h)
                .iter()
                .any(|(t, _)| t == want.label()),
            "typed {typed}: {} shown",
            want.label()
        );
    }
}
