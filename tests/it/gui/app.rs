//! The desktop app driven headless with egui_kittest: type a folder, compress, cancel, open a
//! clip's detail, charts, stale settings, export, keyboard, and the no-display message.
#![cfg(feature = "gui")]

use crate::common;

use crate::common::app_folder::{
    clip_folders, compressed, open_clip_detail, row_key, scanned, state_with_output,
    type_input_folder, typed, write_clip,
};
use crate::common::gui::{harness, wait_idle, write_clips};
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::gui::{AppState, Command, RowStatus};
use eframe::egui;
use egui_kittest::{Harness, kittest::Queryable};
use std::time::Duration;

#[test]
fn type_folder_compress_all_and_see_sizes_and_errors() {
    let (input, out) = clip_folders(6, 40);
    let mut h = typed(input.path(), out.path());
    assert_eq!(
        h.state().persisted.input_dir,
        input.path().display().to_string()
    );

    h.get_by_label("Compress all").click();
    wait_idle(&mut h);

    let s = h.state();
    assert_eq!(s.library.rows.len(), 6, "one row per clip");
    for r in &s.library.rows {
        let rep = r
            .good_report()
            .unwrap_or_else(|| panic!("row {} has no result: {:?}", r.key.clip, r.status));
        assert!(rep.compressed_bytes > 0 && rep.raw_bytes > 0);
        assert!(rep.max_error_cm.is_finite());
        assert!(
            matches!(r.status, RowStatus::Ok | RowStatus::OverThreshold),
            "{:?}",
            r.status
        );
    }
    let outcome = s.jobs.last_batch.as_ref().expect("batch outcome");
    assert!(!outcome.cancelled);
    // The table shows the rows with their sizes and errors.
    for i in 0..6 {
        h.get_by_label(&format!("clip_{i:02}"));
    }
    assert!(
        h.query_all_by_label_contains("×").count() >= 6,
        "ratios shown"
    );
    assert!(
        h.query_all_by_label_contains(" KiB").count() >= 6,
        "sizes shown"
    );
    // The footer shows the batch's figures, not the UI's frame time (a developer's figure,
    // only with CLIPFORGE_FRAME_TIME set).
    h.get_by_label_contains("compression time per clip");
    if std::env::var_os("CLIPFORGE_FRAME_TIME").is_none() {
        assert_eq!(h.query_all_by_label_contains("ms/frame").count(), 0);
    }
    let err_cells = h
        .state()
        .library
        .rows
        .iter()
        .filter_map(|r| r.good_report())
        .map(|p| format!("{:.4}", p.max_error_cm));
    for e in err_cells {
        assert!(h.query_all_by_label(&e).count() >= 1, "error {e} shown");
    }
    // Footer totals.
    h.get_by_label_contains("compression time per clip: p50");
    h.get_by_label_contains("worst max error");

    // A second run skips everything (same inputs, same settings).
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    let s = h.state();
    assert!(
        s.library
            .rows
            .iter()
            .all(|r| r.status == RowStatus::Skipped),
        "second run skipped"
    );
}

#[test]
fn a_broken_clip_shows_its_error_and_the_others_go_on() {
    let (input, out) = clip_folders(3, 30);
    std::fs::write(
        input.path().join("broken.bvh"),
        "HIERARCHY\nROOT hips {\n  this is not bvh\n",
    )
    .unwrap();
    let h = compressed(input.path(), out.path());
    let s = h.state();
    assert_eq!(
        s.library
            .rows
            .iter()
            .filter(|r| r.good_report().is_some())
            .count(),
        3
    );
    let broken = s
        .library
        .rows
        .iter()
        .find(|r| r.key.path.ends_with("broken.bvh"))
        .expect("broken row");
    assert!(
        matches!(broken.status, RowStatus::Failed(_)),
        "{:?}",
        broken.status
    );
    assert!(
        h.query_all_by_label_contains("failed:").count() >= 1,
        "error message in its row"
    );
}

#[test]
fn cancel_stops_and_leaves_no_partial_output() {
    let (input, out) = clip_folders(40, 400);
    let mut h = typed(input.path(), out.path());
    h.get_by_label("Compress all").click();
    // Run until the batch has started, then cancel with the button.
    for _ in 0..2000 {
        h.step();
        if h.state().batch_running() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(h.state().batch_running(), "batch started");
    h.get_by_label("Cancel").click();
    wait_idle(&mut h);
    let s = h.state();
    let outcome = s.jobs.last_batch.as_ref().expect("outcome");
    assert!(outcome.cancelled, "batch reports cancelled");
    // Every file written is a whole, readable compressed clip; nothing else was left behind.
    let mut outputs = 0;
    for e in walkdir::WalkDir::new(out.path())
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".cfa") {
            let bytes = std::fs::read(e.path()).unwrap();
            clipforge::anim::ClipReader::new(&bytes)
                .unwrap_or_else(|err| panic!("{name} is partial: {err}"));
            outputs += 1;
        } else {
            assert!(
                !name.contains("tmp") && !name.contains("partial"),
                "leftover {name}"
            );
        }
    }
    let reported = s
        .library
        .rows
        .iter()
        .filter(|r| r.good_report().is_some_and(|p| p.output.is_some()))
        .count();
    assert!(outputs <= reported.max(outputs), "outputs match reports");
    assert!(
        h.query_all_by_label_contains("Cancelled").count() >= 1,
        "the UI says it was cancelled"
    );
}

#[test]
fn selecting_a_row_opens_its_plots_and_skeleton() {
    let (input, out) = clip_folders(3, 45);
    let mut h = compressed(input.path(), out.path());

    h.get_by_label("clip_01").click();
    wait_idle(&mut h);
    let s = h.state();
    assert_eq!(
        s.detail.selected.as_ref().map(|k| k.clip.as_str()),
        Some("clip_01")
    );
    let d = s.detail.data.as_ref().expect("detail loaded");
    assert!(d.lossy_pos.is_some(), "decompressed pose loaded");
    assert_eq!(d.per_sample_err.len(), d.num_samples);
    h.get_by_label("Clip: clip_01");
    h.get_by_label("Max error over time (cm)");
    h.get_by_label("Max error per bone (cm)");
    h.get_by_label("Skeleton (raw vs decompressed)");
    h.get_by_label("Bit rates (this clip)");
    h.get_by_label("Bit rates (whole batch)");
    h.get_by_label("Play").click();
    h.run_steps(3);
    assert!(h.state().detail.viewer.playing);
    h.get_by_label("Pause").click();
    h.run();

    // Charts tab.
    h.get_by_label("Charts").click();
    h.run();
    h.get_by_label("Compression ratio vs max error");
    h.get_by_label("Compression ratio by clip duration");
    h.get_by_label("Max error distribution");
    h.get_by_label("Bit-rate distribution (batch)");
}

#[test]
fn changing_settings_marks_results_stale_and_export_writes_files() {
    let (input, out) = clip_folders(2, 30);
    let mut h = typed(input.path(), out.path());
    // Ctrl+Enter = Compress all.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Enter);
    wait_idle(&mut h);
    assert!(
        h.state()
            .library
            .rows
            .iter()
            .all(|r| r.good_report().is_some())
    );

    let export = out.path().join("report");
    h.state_mut().persisted.export_path = export.display().to_string();
    let (msg, err) = h.state().export(false);
    assert!(!err, "{msg}");
    let csv = std::fs::read_to_string(export.with_extension("csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "header + 2 clips:\n{csv}");
    assert!(csv.starts_with("input,output,clip,"));
    let (msg, err) = h.state().export(true);
    assert!(!err, "{msg}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(export.with_extension("json")).unwrap())
            .unwrap();
    assert_eq!(json["clips"].as_array().unwrap().len(), 2);

    h.state_mut().persisted.settings.error_threshold_cm = 0.05;
    h.run();
    h.run();
    assert!(
        h.state()
            .library
            .rows
            .iter()
            .all(|r| r.status == RowStatus::Stale)
    );
    h.get_by_label_contains("2 results are stale: settings changed since they were made.");
}

#[test]
fn sorting_and_filtering_the_table() {
    let (input, out) = clip_folders(5, 20);
    let mut h = scanned(input.path(), out.path());
    assert_eq!(h.state().library.view.len(), 5);
    // Sort by samples, descending on the second click.
    h.get_by_label("Samples").click();
    h.run();
    h.get_by_label("Samples").click();
    h.run();
    let s = h.state();
    let first = &s.library.rows[s.library.view[0]];
    assert_eq!(first.key.clip, "clip_04", "longest clip first");
    let f = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Filter:");
    f.focus();
    f.type_text("clip_02");
    h.run();
    assert_eq!(h.state().library.view.len(), 1);
}

#[test]
fn without_a_display_the_app_says_so_in_one_line() {
    let out = common::clipforge()
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("run clipforge");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("no display found") && err.contains("--help"),
        "{err}"
    );
}

/// eframe's storage, in memory (the app itself uses eframe's file store, `app.ron`).
#[derive(Default)]
struct MemStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

#[test]
fn folders_tab_and_settings_persist_between_runs() {
    let (input, out) = clip_folders(1, 10);
    let mut h = scanned(input.path(), out.path());
    h.state_mut().persisted.settings.error_threshold_cm = 0.05;
    h.get_by_label("Charts").click();
    h.run();

    let mut storage = MemStorage::default();
    assert!(
        clipforge::gui::load_persisted(&storage).is_none(),
        "first start"
    );
    clipforge::gui::save_persisted(&mut storage, h.state());
    let restored = clipforge::gui::load_persisted(&storage).expect("state saved");
    assert_eq!(restored.input_dir, input.path().display().to_string());
    assert_eq!(restored.output_dir, out.path().display().to_string());
    assert_eq!(restored.settings.error_threshold_cm, 0.05);
    assert!(
        restored
            .recent_inputs
            .contains(&input.path().display().to_string()),
        "recent folders: {:?}",
        restored.recent_inputs
    );

    // A new run opens where the last one left off: the Charts tab, the same folder.
    let mut h2 = harness(AppState::new(restored));
    h2.run();
    h2.get_by_label_contains("compress a folder in the Clips tab");
    assert_eq!(
        h2.state().persisted.input_dir,
        input.path().display().to_string()
    );
}

/// Reopening a folder shows the last batch's results that are still valid (from the output
/// folder's skip cache) without compressing again; a changed input shows as not compressed.
#[test]
fn reopening_a_folder_shows_the_previous_results() {
    let (input, out) = clip_folders(3, 20);
    let h = compressed(input.path(), out.path());
    let sizes = |h: &Harness<'_, AppState>| -> Vec<(String, Option<u64>)> {
        let mut v: Vec<_> = h
            .state()
            .library
            .rows
            .iter()
            .map(|r| (r.label.clone(), r.good_report().map(|c| c.compressed_bytes)))
            .collect();
        v.sort();
        v
    };
    let first = sizes(&h);
    assert!(first.iter().all(|(_, s)| s.is_some()), "{first:?}");
    let persisted = h.state().persisted.clone();
    drop(h);

    // Change one input (a different clip under the same name).
    let clip = generate(&GenerateOptions {
        name: "clip_01".into(),
        num_samples: 11,
        seed: 99,
        ..Default::default()
    });
    write_clip(input.path(), &clip);

    let mut h = harness(AppState::new(persisted));
    h.run();
    h.get_by_label("Scan").click();
    wait_idle(&mut h);
    assert!(
        h.state().jobs.last_batch.is_none(),
        "nothing was compressed"
    );
    let again = sizes(&h);
    for ((name, before), (name2, now)) in first.iter().zip(&again) {
        assert_eq!(name, name2);
        if name == "clip_01" {
            assert_eq!(*now, None, "a changed input has no valid result");
        } else {
            assert_eq!(now, before, "{name}");
        }
    }
    let statuses: Vec<RowStatus> = h
        .state()
        .library
        .rows
        .iter()
        .filter(|r| r.label != "clip_01")
        .map(|r| r.status.clone())
        .collect();
    assert!(
        statuses.iter().all(|s| *s == RowStatus::Skipped),
        "{statuses:?}"
    );
    // No batch has run since the reopening: the rows say "up to date", not "(skipped)" (they
    // did).
    assert_eq!(statuses[0].text(), "up to date");
    assert!(h.query_by_label_contains("skipped)").is_none());
    assert_eq!(h.query_all_by_label("up to date").count(), statuses.len());
}

/// Special files are never opened and never skipped silently (as in the CLI): one named like a
/// clip is an unreadable row, the others are counted in the folder bar; a batch goes on.
#[cfg(unix)]
#[test]
fn special_files_are_reported_not_opened() {
    let (input, out) = clip_folders(1, 20);
    for name in ["pipe.bvh", "notes.fifo"] {
        let st = std::process::Command::new("mkfifo")
            .arg(input.path().join(name))
            .status()
            .expect("mkfifo");
        assert!(st.success());
    }
    let mut h = scanned(input.path(), out.path());
    let s = h.state();
    assert_eq!(
        s.library.rows.len(),
        2,
        "the clip and the FIFO named like a clip"
    );
    let pipe = s
        .library
        .rows
        .iter()
        .find(|r| r.label == "pipe")
        .expect("a row for pipe.bvh");
    assert!(
        matches!(&pipe.status, RowStatus::Unreadable(m) if m.contains("not a regular file (a FIFO)")),
        "{:?}",
        pipe.status
    );
    h.get_by_label_contains("1 special file skipped (not regular files");
    h.get_by_label_contains("notes.fifo: not a regular file (a FIFO)");

    // Compressing the folder compresses the clip and never touches the FIFO.
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    let s = h.state();
    let clip = s
        .library
        .rows
        .iter()
        .find(|r| r.label == "clip_00")
        .unwrap();
    assert!(clip.good_report().is_some(), "{:?}", clip.status);
    let pipe = s.library.rows.iter().find(|r| r.label == "pipe").unwrap();
    assert!(matches!(pipe.status, RowStatus::Unreadable(_)));
}

#[test]
fn skeleton_viewer_frames_the_whole_clip_magnifies_the_error_and_agrees_on_time() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    // A clip whose root scale rises 0.2 → 3 over its length: framed on its first pose it
    // would start as a dot and grow out of view.
    let mut rising = generate(&GenerateOptions {
        name: "rising".into(),
        num_samples: 60,
        seed: 7,
        ..Default::default()
    });
    let ns = rising.num_samples;
    for s in 0..ns {
        let i = rising.index(0, s);
        rising.scales[i] = glam::Vec3::splat(0.2 + 2.8 * s as f32 / (ns - 1) as f32);
    }
    write_clip(input.path(), &rising);
    let mut h = compressed(input.path(), out.path());
    open_clip_detail(&mut h, "rising");

    let d = h.state().detail.data.clone().unwrap();
    let lossy = d.lossy_pos.as_ref().expect("decompressed pose loaded");
    // The framing bounds contain every joint of every sample, raw and decompressed.
    for p in d.raw_pos.iter().chain(lossy) {
        assert!(
            p.cmpge(d.bounds_min - 1e-4).all() && p.cmple(d.bounds_max + 1e-4).all(),
            "{p} outside {}..{}",
            d.bounds_min,
            d.bounds_max
        );
    }
    // The suggested magnification is the one shown, and makes the largest error visible.
    assert!(d.max_offset > 0.0, "the codec moved some joint");
    let v = &h.state().detail.viewer;
    assert_eq!(v.magnify, d.suggested_magnify);
    let px = d.max_offset * v.magnify * v.px_per_unit;
    assert!(px >= 4.0, "largest error magnified to only {px} px");

    // Every pose stays in view from first to last sample; both time readouts say the same.
    for s in (0..ns).step_by(7).chain([ns - 1]) {
        h.state_mut().detail.viewer.sample = s as f32;
        h.run();
        assert_eq!(
            h.state().detail.viewer.joints_outside_view,
            0,
            "joints out of view at sample {s}"
        );
        let t = d.time_label(s);
        h.get_by_label_contains(&format!("sample {s}/{} · t {t} ·", ns - 1));
        // The slider's value box (and the text inside it) shows exactly the readout's time.
        assert!(
            h.query_all_by_value(&t).count() >= 1,
            "slider does not show {t}"
        );
    }
}

/// A clip that walks 12 m (far more than the body's size): the viewer follows the character by
/// default, so it stays large and whole in view; "follow" off frames the whole path instead.
#[test]
fn the_skeleton_viewer_follows_a_travelling_clip() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut walk = generate(&GenerateOptions {
        name: "travel".into(),
        num_samples: 61,
        seed: 3,
        ..Default::default()
    });
    let ns = walk.num_samples;
    for s in 0..ns {
        let i = walk.index(0, s);
        walk.translations[i].x += 20.0 * s as f32;
    }
    write_clip(input.path(), &walk);
    let mut h = compressed(input.path(), out.path());
    open_clip_detail(&mut h, "travel");
    let d = h.state().detail.data.clone().unwrap();
    assert!(d.travels(), "a 12 m walk travels (extent {})", d.extent);
    let mut followed_px = 0.0;
    for s in (0..ns).step_by(10) {
        h.state_mut().detail.viewer.sample = s as f32;
        h.run();
        let v = &h.state().detail.viewer;
        assert_eq!(
            v.joints_outside_view, 0,
            "following: joints out of view at {s}"
        );
        followed_px = v.px_per_unit;
    }
    h.get_by_label("follow").click();
    h.run();
    assert_eq!(h.state().detail.viewer.follow, Some(false));
    for s in (0..ns).step_by(10) {
        h.state_mut().detail.viewer.sample = s as f32;
        h.run();
        let v = &h.state().detail.viewer;
        assert_eq!(
            v.joints_outside_view, 0,
            "whole path: joints out of view at {s}"
        );
        // Following drew the body several times larger than the whole path's framing does.
        assert!(
            followed_px > 3.0 * v.px_per_unit,
            "followed {followed_px} px/unit vs whole path {}",
            v.px_per_unit
        );
    }
}

#[test]
fn the_bone_under_the_pointer_is_named() {
    let (input, out) = clip_folders(1, 40);
    let mut h = compressed(input.path(), out.path());
    open_clip_detail(&mut h, "clip_00");
    // Sweep the pointer over the viewer, centre first, on a grid finer than the 10 px pick
    // radius, until it lands on a joint.
    let rect = h.state().detail.viewer.view_rect;
    assert!(rect.is_positive(), "viewer drawn");
    let mut points: Vec<egui::Pos2> = (0..(rect.height() / 12.0) as i32)
        .flat_map(|y| {
            (0..(rect.width() / 12.0) as i32)
                .map(move |x| rect.min + egui::vec2(x as f32 * 12.0 + 6.0, y as f32 * 12.0 + 6.0))
        })
        .collect();
    points.sort_by(|a, b| {
        a.distance(rect.center())
            .total_cmp(&b.distance(rect.center()))
    });
    let mut found = None;
    for p in points {
        h.hover_at(p);
        h.run();
        if let Some(b) = h.state().detail.viewer.hovered_bone {
            found = Some(b);
            break;
        }
    }
    let b = found.expect("some joint lies under the pointer somewhere in the viewer");
    let name = h.state().detail.data.as_ref().unwrap().names[b].clone();
    assert!(!name.is_empty());
}

#[test]
fn views_ask_through_commands_and_the_app_carries_them_out() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_clips(a.path(), 3, 30);
    write_clips(b.path(), 2, 30);
    let mut h = harness(state_with_output(out.path()));
    type_input_folder(&mut h, a.path());
    h.get_by_label("Scan").click();
    wait_idle(&mut h);
    assert_eq!(h.state().library.rows.len(), 3);

    // A row click is a command; handled, it opens the detail and selects the row.
    h.state_mut().command_log.clear();
    h.get_by_label("clip_01").click();
    wait_idle(&mut h);
    let k1 = row_key(&h, "clip_01");
    let log: Vec<Command> = h.state().command_log.iter().cloned().collect();
    assert_eq!(
        log,
        [Command::OpenClip {
            key: k1.clone(),
            add: false
        }]
    );
    let s = h.state();
    assert_eq!(s.detail.selected.as_ref(), Some(&k1));
    assert_eq!(s.detail.data.as_ref().map(|d| &d.key), Some(&k1));
    assert!(s.clips.selection.contains(&k1) && s.clips.selection.len() == 1);

    // The same value sent from outside any view does the same.
    let k2 = row_key(&h, "clip_02");
    h.state_mut().handle(Command::OpenClip {
        key: k2.clone(),
        add: false,
    });
    wait_idle(&mut h);
    assert_eq!(h.state().detail.data.as_ref().map(|d| &d.key), Some(&k2));

    // Rescanning the same folder keeps the detail open.
    h.state_mut().command_log.clear();
    h.get_by_label("Scan").click();
    wait_idle(&mut h);
    assert!(h.state().command_log.contains(&Command::Scan));
    assert!(!h.state().command_log.contains(&Command::ClearDetail));
    assert_eq!(h.state().detail.selected.as_ref(), Some(&k2));

    // Another folder: the scan clears the detail and the selection (the old folder's clip).
    h.state_mut().command_log.clear();
    h.state_mut().persisted.input_dir = b.path().display().to_string();
    h.get_by_label("Scan").click();
    h.run();
    let log: Vec<Command> = h.state().command_log.iter().cloned().collect();
    let scan = log.iter().position(|c| c == &Command::Scan).expect("Scan");
    let clear = log
        .iter()
        .position(|c| c == &Command::ClearDetail)
        .expect("ClearDetail");
    assert!(scan < clear, "{log:?}");
    assert!(h.state().detail.selected.is_none());
    assert!(h.state().clips.selection.is_empty());
    wait_idle(&mut h);
    assert_eq!(h.state().library.rows.len(), 2);
    assert!(h.state().detail.selected.is_none());
}

#[test]
fn a_scalar_track_list_opens_its_own_detail_measured_off_the_ui_thread() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let n = 24;
    let mut text = format!(
        "version = 4\ntrack_list =\n{{\n\tname = \"curves\"\n\tnum_samples = {n}\n\tsample_rate = 30\n}}\ntracks =\n[\n"
    );
    for t in 0..2 {
        text.push_str(&format!(
            "\t{{\n\t\tname = \"t{t}\"\n\t\ttype = \"float1f\"\n\t\tprecision = 0.001\n\t\tdata =\n\t\t[\n"
        ));
        for i in 0..n {
            text.push_str(&format!(
                "\t\t\t[ {} ]\n",
                (i as f64 * 0.2 + t as f64).sin()
            ));
        }
        text.push_str("\t\t]\n\t}\n");
    }
    text.push_str("]\n");
    std::fs::write(input.path().join("curves.acl.sjson"), text).unwrap();
    let mut h = typed(input.path(), out.path());
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    let label = h.state().library.rows[0].label.clone();
    h.get_by_label(&label).click();
    wait_idle(&mut h);
    let s = h.state();
    let scalar = s.detail.scalar.as_ref().expect("the job measured the list");
    let d = scalar.as_ref().as_ref().expect("measured without error");
    assert_eq!(d.names, ["t0", "t1"]);
    assert!(d.max_error.as_ref().is_some_and(|m| m.len() == 2));
    assert!(
        h.query_by_label_contains("Scalar track list:").is_some(),
        "the scalar view is shown"
    );
}

/// Reopened (a restart) with another threshold, the folder's results made with the old one are
/// "stale (settings changed)", as they were before the restart, not "—" (never compressed: the
/// real window said "0 compressed of 42" of a folder whose 42 outputs were there).
#[test]
fn results_made_with_other_settings_are_stale_after_a_restart() {
    let (input, out) = clip_folders(2, 20);
    let h = compressed(input.path(), out.path());
    assert!(
        h.state()
            .library
            .rows
            .iter()
            .all(|r| r.status == RowStatus::Ok)
    );
    drop(h);

    let mut state = common::app_folder::state_on(input.path(), out.path());
    state.persisted.settings.error_threshold_cm = 0.05;
    state.start(false);
    let mut h = harness(state);
    wait_idle(&mut h);
    let statuses: Vec<RowStatus> = h
        .state()
        .library
        .rows
        .iter()
        .map(|r| r.status.clone())
        .collect();
    assert_eq!(statuses, [RowStatus::Stale, RowStatus::Stale]);
    h.get_by_label("2 results are stale: settings changed since they were made.");
    // Back at the threshold they were made with: up to date, nothing to compress.
    h.state_mut().persisted.settings.error_threshold_cm = 0.01;
    h.run();
    h.run();
    assert!(
        h.state()
            .library
            .rows
            .iter()
            .all(|r| r.status == RowStatus::Skipped)
    );
}
