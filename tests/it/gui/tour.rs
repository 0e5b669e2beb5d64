//! What the real window showed a new user that was not so (issue 24, ux30's tour under Xvfb):
//! after opening another folder, the line "Last batch: 8 clips from 8 files … 2.2 MiB/s" and the
//! footer's throughput still described the batch of the folder before, over a table of which
//! nothing had been compressed (and an export took that batch's wall time).
#![cfg(feature = "gui")]

use crate::common::app_folder::{clip_folders, compressed};
use crate::common::gui::wait_idle;
use clipforge::gui::AppState;
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
    assert!(h.query_by_label("Throughput —").is_none());
    assert!(h.state().results_report().totals.wall_ms > 0.0);

    // Another folder, nothing of it compressed: no batch of it to speak of.
    open_folder(&mut h, b.path());
    assert_eq!(h.state().library.rows.len(), 3);
    assert!(h.query_by_label_contains("Last batch:").is_none());
    h.get_by_label("Throughput —");
    assert_eq!(h.state().results_report().totals.wall_ms, 0.0);

    // Back on the first folder the batch that ran on it is its own again.
    open_folder(&mut h, a.path());
    h.get_by_label_contains("Last batch: 2 clips from 2 files");
    assert!(h.query_by_label("Throughput —").is_none());
}
