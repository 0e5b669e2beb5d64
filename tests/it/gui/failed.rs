//! A failed clip as the app shows it (issue 24, "some screens say things that are not so", seen
//! in the real window): its detail said "Will compress with threshold …" of a clip that had just
//! failed, and nothing of what to do; the selected failed row's red status on the blue selection
//! was 1.9:1 (dark theme) and 2.4:1 (light), too faint to read; a file that does not read,
//! before any batch, was offered "press Compress to see its error".
#![cfg(feature = "gui")]

use crate::common::app_folder::{compressed, scanned};
use crate::common::gui::{contrast, fills_under, painted_texts, wait_idle, write_clips};
use clipforge::gui::{AppState, RowStatus, UNREADABLE_ADVICE};
use clipforge::pipeline::report::Failure;
use eframe::egui;
use egui_kittest::{Harness, kittest::Queryable};

/// Two generated clips and two BVH files that do not read (the parser names line 3).
fn folder_with_broken_files() -> tempfile::TempDir {
    let input = tempfile::tempdir().unwrap();
    write_clips(input.path(), 2, 30);
    for name in ["broken.bvh", "broken2.bvh"] {
        std::fs::write(
            input.path().join(name),
            "HIERARCHY\nROOT hips {\n  this is not bvh\n",
        )
        .unwrap();
    }
    input
}

/// The status of `broken.bvh`'s row and its report's kind of failure.
fn broken_row(h: &Harness<'_, AppState>) -> (RowStatus, Option<Failure>) {
    let r = h
        .state()
        .library
        .rows
        .iter()
        .find(|r| r.key.path.ends_with("broken.bvh"))
        .expect("broken row");
    (r.status.clone(), r.report().and_then(|p| p.failure))
}

#[test]
fn a_failed_clips_detail_says_what_happened_and_what_to_do() {
    let input = folder_with_broken_files();
    let out = tempfile::tempdir().unwrap();
    let mut h = compressed(input.path(), out.path());
    let (status, failure) = broken_row(&h);
    assert!(matches!(status, RowStatus::Failed(_)), "{status:?}");
    // The kind of failure is typed in the report, not read off its words.
    assert_eq!(failure, Some(Failure::InvalidFile));
    h.get_by_label("broken").click();
    wait_idle(&mut h);
    // What happened, with the file and the place…
    let path = input.path().join("broken.bvh");
    h.get_by_label_contains(&format!("Failed: {}:3: no MOTION section", path.display()));
    // …what to do…
    h.get_by_label(Failure::InvalidFile.advice());
    // …and nothing that says it is still to be compressed.
    assert!(h.query_by_label_contains("Will compress with").is_none());
    assert!(h.query_by_label_contains("Not compressed yet").is_none());
    h.get_by_label("No error to show: no output (the error is above).");
}

#[test]
fn a_selected_failed_rows_status_is_readable_on_the_selection() {
    let input = folder_with_broken_files();
    let out = tempfile::tempdir().unwrap();
    let mut h = compressed(input.path(), out.path());
    h.get_by_label("broken").click();
    wait_idle(&mut h);
    for theme in [egui::Theme::Dark, egui::Theme::Light] {
        h.ctx.set_theme(theme);
        h.run();
        let v = h.ctx.style_of(theme).visuals.clone();
        // The theme's own red on its selection is what the row showed: under 4.5:1.
        assert!(
            contrast(v.error_fg_color, v.selection.bg_fill) < 4.5,
            "{theme:?}"
        );
        let failed = painted_texts(&h, "failed:");
        assert_eq!(failed.len(), 2, "{theme:?}: two failed rows painted");
        let (mut on_selection, mut elsewhere) = (0, 0);
        for (color, rect) in failed {
            if fills_under(&h, rect.center()).contains(&v.selection.bg_fill) {
                on_selection += 1;
                let c = contrast(color, v.selection.bg_fill);
                assert!(
                    c >= 4.5,
                    "{theme:?}: {color:?} on the selection {:?} is {c:.2}:1",
                    v.selection.bg_fill
                );
                // Still red: the row still says it failed by its colour.
                assert!(
                    color.r() as u16 > color.g() as u16 + 40
                        && color.r() as u16 > color.b() as u16 + 40,
                    "{theme:?}: {color:?} is no red"
                );
            } else {
                elsewhere += 1;
                assert_eq!(color, v.error_fg_color, "{theme:?}: an unselected row");
            }
        }
        assert_eq!((on_selection, elsewhere), (1, 1), "{theme:?}");
    }
}

/// A file that does not read, seen before any batch (the scan's inspection found it): its
/// detail said "Not compressed yet: press Compress to see its error", "Will compress with
/// threshold …" and "Compress this clip to see its error" over the error itself.
#[test]
fn an_unreadable_files_detail_says_it_does_not_read_not_press_compress() {
    let input = folder_with_broken_files();
    let out = tempfile::tempdir().unwrap();
    let mut h = scanned(input.path(), out.path());
    let (status, _) = broken_row(&h);
    assert!(matches!(status, RowStatus::Unreadable(_)), "{status:?}");
    // The row says what the detail says, with the place (it read "unreadable: no MOTI…").
    assert!(
        status
            .text()
            .starts_with("does not read: line 3: no MOTION section"),
        "{}",
        status.text()
    );
    h.get_by_label("broken").click();
    wait_idle(&mut h);
    let path = input.path().join("broken.bvh");
    h.get_by_label_contains(&format!(
        "Does not read: {}:3: no MOTION section",
        path.display()
    ));
    h.get_by_label(UNREADABLE_ADVICE);
    // Its bit rates and error plot say why there are none (the bit rates said "Not compressed
    // yet.", the plot column showed its key over nothing).
    h.get_by_label("No output (the file does not read): no bit rates.");
    h.get_by_label("No error to show: no output (the error is above).");
    assert!(h.query_by_label("red: threshold · click: jump").is_none());
    for untrue in [
        "press Compress to see its error",
        "Will compress with",
        "Compress this clip to see its error",
        "Not compressed yet",
    ] {
        assert!(h.query_by_label_contains(untrue).is_none(), "{untrue}");
    }
}

/// Seen in the real window after a restart: three red "does not read" rows and a footer that
/// said nothing of them (before the restart it said "3 failed"). The footer counts them, and
/// after a batch they are failures, counted once.
#[test]
fn the_footer_counts_the_files_that_do_not_read() {
    let input = folder_with_broken_files();
    let out = tempfile::tempdir().unwrap();
    let mut h = scanned(input.path(), out.path());
    h.get_by_label("2 do not read");
    assert!(h.query_by_label("2 failed").is_none());
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    h.get_by_label("2 failed");
    assert!(h.query_by_label_contains("do not read").is_none());
}
