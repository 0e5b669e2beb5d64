//! What animators expect of the app, driven headless with egui_kittest: regex filters (Clips
//! and Headers tables), "Open output folder" errors, drag-and-drop of folders and files, the A/B
//! of presets (a kept side stays kept through the next "Compress all").
#![cfg(feature = "gui")]

use crate::common::app_folder::{harness_on as harness, row_key};
use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::gui::{AppState, Command, Persisted, RowKey, RowStatus, Tab};
use clipforge::pipeline::report::ClipReport;
use eframe::egui;
use egui_kittest::{Harness, kittest::Queryable};
use std::path::{Path, PathBuf};
use std::time::Duration;

const NAMES: [&str; 5] = [
    "hero_walk",
    "hero_run",
    "villain_walk",
    "villain_idle",
    "crowd_jog",
];

/// Writes one small generated clip per name (`NAME.acl.sjson`).
fn write_named_clips(dir: &Path) {
    for (i, name) in NAMES.iter().enumerate() {
        let clip = generate(&GenerateOptions {
            name: name.to_string(),
            num_samples: 20 + i,
            seed: i as u64 + 1,
            ..Default::default()
        });
        std::fs::write(dir.join(format!("{name}.acl.sjson")), write_acl_clip(&clip)).unwrap();
    }
}

/// The named clips in a fresh input folder, the app opened on it (and an empty output folder)
/// and scanned.
fn scanned_named_clips() -> (
    tempfile::TempDir,
    tempfile::TempDir,
    Harness<'static, AppState>,
) {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_named_clips(input.path());
    let mut h = harness(input.path(), out.path());
    h.state_mut().handle(Command::Scan);
    wait_idle(&mut h);
    (input, out, h)
}

/// Steps frames until no scan, inspection or detail load runs (bounded).
fn wait_idle(h: &mut Harness<'_, AppState>) {
    for _ in 0..6000 {
        h.step();
        let s = h.state();
        if !s.is_busy()
            && s.jobs.inspect_job.is_none()
            && s.jobs.cached_job.is_none()
            && !s.detail.loading()
            && !s.headers.busy()
            && s.drop.pending_clip.is_none()
            && !s.drop.pending_headers_scan
        {
            // Stepped, not `run`: the Headers tab animates a little after its scan.
            h.run_steps(4);
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("background work did not finish");
}

fn set_filter(h: &mut Harness<'_, AppState>, text: &str) {
    let f = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Filter:");
    f.focus();
    f.type_text(text);
    h.run_steps(4);
}

fn shown_labels(h: &Harness<'_, AppState>) -> Vec<String> {
    let lib = &h.state().library;
    lib.view
        .iter()
        .map(|&i| lib.rows[i].label.clone())
        .collect()
}

/// Clicks "Run comparison" in the open A/B window and steps until it finished (bounded).
fn run_comparison(h: &mut Harness<'_, AppState>) {
    h.get_by_label("Run comparison").click();
    h.step();
    for _ in 0..3000 {
        if !h.state().ab.busy() {
            break;
        }
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run_steps(4);
}

/// A file dropped on the window, as the native integration hands it to egui.
#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

fn drop_paths(h: &mut Harness<'_, AppState>, paths: &[PathBuf]) {
    for p in paths {
        let f: egui::DroppedFileHandle = std::sync::Arc::new(Dropped(p.clone()));
        h.input_mut().dropped_files.push(f);
    }
    h.step();
}

#[test]
fn a_regex_filter_shows_the_matching_rows_and_a_bad_one_says_why() {
    let (_input, _out, mut h) = scanned_named_clips();
    assert_eq!(h.state().library.view.len(), 5);

    // Metacharacters: a regex (2 of 5 rows), and the count says so.
    set_filter(&mut h, "^hero_(walk|run)$");
    let mut shown = shown_labels(&h);
    shown.sort();
    assert_eq!(shown, vec!["hero_run", "hero_walk"]);
    h.get_by_label("2 of 5 clips · 5 files");

    // Plain text stays a substring.
    h.state_mut().clips.filter = "walk".into();
    h.run();
    assert_eq!(shown_labels(&h).len(), 2);

    // The .* toggle forces a regex: `.` is then any character.
    h.state_mut().clips.filter = "villain.".into();
    h.run();
    assert_eq!(shown_labels(&h).len(), 2);
    h.get_by_label(".*").click();
    h.run();
    assert_eq!(h.state().clips.filter, "/villain./");
    h.state_mut().clips.filter = "/_(j|i)/".into();
    h.run();
    let mut shown = shown_labels(&h);
    shown.sort();
    assert_eq!(shown, vec!["crowd_jog", "villain_idle"]);

    // An invalid regex filters nothing out and its error is shown next to the field.
    h.state_mut().clips.filter = "/walk(/".into();
    h.run();
    assert_eq!(shown_labels(&h).len(), 5);
    let err = h.get_by_label_contains("invalid regex:");
    let text = format!("{err:?}");
    assert!(text.contains("unclosed"), "{text}");
}

#[test]
fn open_output_folder_says_when_the_folder_does_not_exist_yet() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let missing = out.path().join("not-created-yet");
    let mut h = harness(input.path(), &missing);
    h.run();
    h.get_by_label("Open output folder").click();
    h.run();
    let (msg, is_error) = h.state().clips.message.clone().unwrap();
    assert!(is_error);
    assert!(
        msg.contains(&missing.display().to_string()) && msg.contains("does not exist yet"),
        "{msg}"
    );
    assert!(!missing.exists(), "nothing created, nothing launched");
}

#[test]
fn dropping_a_folder_opens_it_and_dropping_a_clip_selects_it() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_named_clips(a.path());
    write_named_clips(b.path());
    let mut h = harness(Path::new(""), out.path());
    h.run();

    // A folder: becomes the input folder and is scanned.
    drop_paths(&mut h, &[a.path().to_path_buf()]);
    wait_idle(&mut h);
    assert_eq!(
        h.state().persisted.input_dir,
        a.path().display().to_string()
    );
    assert_eq!(h.state().library.rows.len(), 5);
    assert!(h.state().detail.selected.is_none());

    // A clip of another folder: that folder opens and the clip is selected (its detail open).
    let clip = b.path().join("villain_idle.acl.sjson");
    drop_paths(&mut h, std::slice::from_ref(&clip));
    wait_idle(&mut h);
    assert_eq!(
        h.state().persisted.input_dir,
        b.path().display().to_string()
    );
    let sel = h
        .state()
        .detail
        .selected
        .clone()
        .expect("the dropped clip is selected");
    assert_eq!(sel.path, clip.canonicalize().unwrap());
    assert_eq!(sel.clip, "villain_idle");

    // An unsupported file: a readable message, nothing else changes.
    let txt = b.path().join("notes.txt");
    std::fs::write(&txt, "hello").unwrap();
    drop_paths(&mut h, &[txt]);
    h.run();
    let (msg, is_error) = h.state().clips.message.clone().unwrap();
    assert!(is_error);
    assert!(msg.starts_with("notes.txt: not a supported file"), "{msg}");
    h.get_by_label(&msg);
    assert_eq!(
        h.state().persisted.input_dir,
        b.path().display().to_string()
    );
}

#[test]
fn a_source_folder_dropped_on_the_headers_tab_becomes_its_root_and_filters_by_regex() {
    let src = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("common.h"), "int common;\n").unwrap();
    std::fs::write(src.path().join("math_vec.h"), "#include \"common.h\"\n").unwrap();
    std::fs::write(src.path().join("math_mat.h"), "#include \"math_vec.h\"\n").unwrap();
    std::fs::write(
        src.path().join("main.cpp"),
        "#include \"math_mat.h\"\nint main() { return 0; }\n",
    )
    .unwrap();
    let mut h = harness(Path::new(""), out.path());
    h.state_mut().persisted.tab = Tab::Headers;
    h.run();
    drop_paths(&mut h, &[src.path().join("main.cpp")]);
    wait_idle(&mut h);
    assert_eq!(
        h.state().persisted.headers.project.roots,
        vec![src.path().display().to_string()]
    );
    let s = h.state().persisted.headers.clone();
    let all = h.state_mut().headers.table_paths(&s);
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(all.iter().any(|p| p.ends_with("main.cpp")), "{all:?}");
    // The Headers table's filter takes a regex too.
    set_filter(&mut h, r"math_(vec|mat)\.h$");
    let shown = h.state_mut().headers.table_paths(&s);
    assert_eq!(
        shown.len(),
        2,
        "{shown:?} of {all:?} for {:?}",
        h.state().headers.filter
    );
    assert!(shown.iter().all(|p| p.contains("math_")));
    // An upper-case class keeps its meaning (`\D`: not a digit; lowercased it would be `\d`).
    h.state_mut().headers.filter.clear();
    h.run_steps(2);
    set_filter(&mut h, r"math_\D\D\D\.h$");
    let shown = h.state_mut().headers.table_paths(&s);
    assert_eq!(
        shown.len(),
        2,
        "{shown:?} for {:?}",
        h.state().headers.filter
    );
}

#[test]
fn compare_presets_runs_in_the_background_and_keeps_only_the_chosen_side() {
    let (_input, out, mut h) = scanned_named_clips();
    let key = row_key(&h, "hero_walk");
    h.state_mut().handle(Command::OpenClip {
        key: key.clone(),
        add: false,
    });
    wait_idle(&mut h);
    h.get_by_label("Compare presets…").click();
    h.run_steps(2);
    assert!(h.state().ab.open);
    run_comparison(&mut h);
    let run = match &h.state().ab.result {
        Some(Ok(run)) => run,
        other => panic!(
            "no comparison: {:?}",
            other.as_ref().map(|r| r.as_ref().err())
        ),
    };
    // A: the Clips tab's preset (Default, 0.01 cm); B: Crowd (0.1 cm).
    assert_eq!(run.a.settings.error_threshold, 0.01);
    assert_eq!(run.b.settings.error_threshold, 0.1);
    let (a_bytes, b_bytes) = (run.a.report.compressed_bytes, run.b.report.compressed_bytes);
    let b_file_bytes = run.b.report.file_bytes;
    assert!(b_bytes < a_bytes, "{b_bytes} vs {a_bytes}");
    h.get_by_label("Error over time (max over bones, cm)");
    h.get_by_label_contains("Max error per bone (cm)");
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "nothing written before the user chooses"
    );
    h.get_by_label("Keep B").click();
    h.run_steps(2);
    let kept = out.path().join("hero_walk.cfa");
    assert!(kept.is_file());
    assert_eq!(std::fs::metadata(&kept).unwrap().len(), b_file_bytes);
    let (msg, err) = h.state().ab.message.clone().unwrap();
    assert!(
        !err && msg.starts_with("Kept B (Crowd / LOD (0.1 cm)): wrote "),
        "{msg}"
    );
    h.get_by_label(&msg);
}

/// The status and report of `key`'s row once `done` holds for them (rows are rebuilt on a
/// timer while results come in).
fn row_when(
    h: &mut Harness<'_, AppState>,
    key: &RowKey,
    done: impl Fn(&RowStatus, &ClipReport) -> bool,
) -> (RowStatus, ClipReport) {
    for _ in 0..300 {
        h.step();
        if let Some(r) = h.state().library.rows.iter().find(|r| &r.key == key)
            && let Some(rep) = r.report()
            && done(&r.status, rep)
        {
            return (r.status.clone(), rep.clone());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let r = h.state().library.rows.iter().find(|r| &r.key == key);
    panic!("the row never got there: {r:?}");
}

#[test]
fn a_kept_side_stays_kept_when_compress_all_runs_again() {
    let (_input, out, mut h) = scanned_named_clips();
    compress_all(&mut h);
    let key = row_key(&h, "hero_walk");
    let kept = out.path().join("hero_walk.cfa");
    let a_file = std::fs::read(&kept).unwrap();
    h.state_mut().handle(Command::OpenClip {
        key: key.clone(),
        add: false,
    });
    wait_idle(&mut h);
    h.get_by_label("Compare presets…").click();
    h.run_steps(2);
    run_comparison(&mut h);
    let b_bytes = match &h.state().ab.result {
        Some(Ok(run)) => run.b.report.compressed_bytes,
        other => panic!(
            "no comparison: {:?}",
            other.as_ref().map(|r| r.as_ref().err())
        ),
    };
    h.get_by_label("Keep B").click();
    h.run_steps(2);
    let b_file = std::fs::read(&kept).unwrap();
    assert_ne!(a_file, b_file);
    // The row shows B's result at once, with B's threshold, and is not stale.
    let (status, rep) = row_when(&mut h, &key, |_, p| p.compressed_bytes == b_bytes);
    assert_eq!(status, RowStatus::Ok);
    assert_eq!(rep.settings.unwrap().error_threshold_cm, 0.1);
    assert_eq!(h.state().library.summary.stale, 0);
    // Compress all again with the tab's settings (Default, 0.01 cm): B's file stays.
    h.state_mut().ab.open = false;
    h.run_steps(2);
    compress_all(&mut h);
    assert_eq!(std::fs::read(&kept).unwrap(), b_file);
    let (status, rep) = row_when(&mut h, &key, |s, p| {
        p.compressed_bytes == b_bytes && *s != RowStatus::Queued
    });
    assert!(
        matches!(status, RowStatus::Ok | RowStatus::Skipped),
        "{status:?}"
    );
    assert_eq!(rep.settings.unwrap().error_threshold_cm, 0.1);
    // The other clips kept the tab's threshold.
    let other = h
        .state()
        .library
        .rows
        .iter()
        .find(|r| r.label == "hero_run")
        .unwrap();
    assert_eq!(
        other
            .report()
            .unwrap()
            .settings
            .as_ref()
            .unwrap()
            .error_threshold_cm,
        0.01
    );
    // Reopened, the comparison starts from what the clip has now: A is the kept Crowd preset
    // (not the tab's Default), B the tab's.
    h.state_mut().handle(Command::ComparePresets(key.clone()));
    h.run_steps(2);
    let ab = &h.state().ab;
    assert!(ab.open);
    assert_eq!(ab.a.settings().settings.error_threshold, 0.1);
    assert_eq!(ab.b.settings().settings.error_threshold, 0.01);
}

fn compress_all(h: &mut Harness<'_, AppState>) {
    h.get_by_label("Compress all").click();
    h.step();
    wait_idle(h);
}

#[test]
fn clicking_a_point_of_a_library_chart_opens_that_clip() {
    let (_input, _out, mut h) = scanned_named_clips();
    compress_all(&mut h);
    assert!(h.state().detail.selected.is_none());
    h.state_mut().persisted.tab = Tab::Charts;
    h.run_steps(4);
    let points: Vec<egui::Pos2> = h
        .ctx
        .data(|d| d.get_temp(clipforge::gui::charts::points_id("cf_chart_ratio_err")))
        .expect("the scatter plot drew its dots");
    assert_eq!(points.len(), 5);
    let p = points[2];
    h.hover_at(p);
    h.step();
    h.drag_at(p);
    h.step();
    h.drop_at(p);
    h.run_steps(3);
    let opened = h.state().detail.selected.clone();
    let key = opened.expect("a click on a dot opens its clip");
    assert_eq!(h.state().persisted.tab, Tab::Clips);
    assert!(NAMES.contains(&key.clip.as_str()), "{}", key.clip);
}

#[test]
fn a_real_scalar_track_list_shows_one_line_per_track() {
    let Some(data) = std::env::var_os("CLIPFORGE_DATA").map(PathBuf::from) else {
        eprintln!("skipped: set CLIPFORGE_DATA=../shared/data to run the real-data suite");
        return;
    };
    let name = "track_list_float3f.acl.sjson";
    let real = data.join("acl-regression").join(name);
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    // One file of its own (the whole regression folder would be a long scan).
    std::fs::copy(&real, input.path().join(name)).unwrap();
    let text = std::fs::read_to_string(&real).unwrap();
    let clipforge::anim::formats::acl::AclFile::Scalars(list) =
        clipforge::anim::formats::acl::read_acl_file(&text, &real).unwrap()
    else {
        panic!("{name} is a scalar track list");
    };
    let mut h = harness(input.path(), out.path());
    h.state_mut().handle(Command::Scan);
    wait_idle(&mut h);
    compress_all(&mut h);
    // The library's error cell gives the worst track's share of its precision, not centimetres
    // (the list's units are its own), and the row is not over its threshold.
    let rep = h.state().library.rows[0].good_report().unwrap().clone();
    let share = rep.scalar.as_ref().unwrap().worst_error_over_precision;
    assert!(share > 0.0 && share <= 1.0, "{share}");
    h.get_by_label(&format!("{share:.2}× prec."));
    let key = h.state().library.rows[0].key.clone();
    h.state_mut().handle(Command::OpenClip { key, add: false });
    wait_idle(&mut h);
    h.get_by_label_contains("Scalar track list:");
    assert_eq!(
        h.query_all_by_label_contains(": max error ").count(),
        list.tracks.len(),
        "one line per track"
    );
    for (k, i) in list.output_order().into_iter().enumerate() {
        h.get_by_label_contains(&format!("Track {k} {}: max error", list.tracks[i].name));
    }
    assert_eq!(h.query_all_by_label_contains(" · over").count(), 0);
}

#[test]
fn a_failed_clip_detail_says_why_once_and_no_compress_hint() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_named_clips(input.path());
    std::fs::write(
        input.path().join("broken.acl.sjson"),
        "version = 5\nclip = { name = \"broken\" ",
    )
    .unwrap();
    let mut h = harness(input.path(), out.path());
    h.state_mut().handle(Command::Scan);
    wait_idle(&mut h);
    compress_all(&mut h);
    let key = h
        .state()
        .library
        .rows
        .iter()
        .find(|r| r.key.path.ends_with("broken.acl.sjson"))
        .unwrap()
        .key
        .clone();
    h.state_mut().handle(Command::OpenClip { key, add: false });
    wait_idle(&mut h);
    assert!(h.state().detail.error.is_some(), "the clip cannot be read");
    assert_eq!(h.query_all_by_label_contains("Failed: ").count(), 1);
    let error = h.state().detail.error.clone().unwrap();
    assert_eq!(
        h.query_all_by_label(&error).count(),
        0,
        "the reading error is not said a second time"
    );
    assert_eq!(
        h.query_all_by_label("Compress this clip to see its error.")
            .count(),
        0
    );
    // No pose will come of it: not "No pose to show yet." (seen in the real window).
    h.get_by_label("No pose to show: the file does not read (the error is above).");
    assert!(h.query_by_label("No pose to show yet.").is_none());
}

#[test]
fn a_pipeline_row_opens_its_own_output_folder_or_says_why_not() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let missing = out.path().join("pipeline-out");
    let mut app = AppState::new(Persisted {
        output_dir: out.path().display().to_string(),
        ..Default::default()
    });
    let mut c = app.pipeline_from_clips_tab(&input.path().display().to_string());
    c.output = missing.display().to_string();
    app.watch.add(c).unwrap();
    app.persisted.tab = Tab::Watch;
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 950.0))
        .build_ui_state(|ui, s: &mut AppState| s.ui(ui), app);
    h.run();
    h.get_by_label("Open").click();
    h.run();
    let (msg, is_error) = h.state().watch.message.clone().unwrap();
    assert!(is_error);
    assert!(
        msg.contains(&missing.display().to_string()) && msg.contains("does not exist yet"),
        "{msg}"
    );
    assert!(!missing.exists());
}

// ---- Issue 26: what the app says must be true ----

/// Finding 1: a row's state comes from the output folder shown. Compressed into one folder,
/// then another (empty) output folder and a rescan: no row may say "up to date" or show sizes
/// of files that are not there, and Compress all compresses everything again.
#[test]
fn rows_show_the_results_of_the_output_folder_shown_only() {
    let (input, out, mut h) = scanned_named_clips();
    compress_all(&mut h);
    assert_eq!(h.state().library.summary.compressed, 5);
    let out2 = tempfile::tempdir().unwrap();
    let new_out = out2.path().join("fresh");
    // The user sets another output folder, then types the input folder again (Enter).
    h.state_mut().persisted.output_dir = new_out.display().to_string();
    h.run_steps(2);
    h.state_mut().persisted.input_dir = input.path().display().to_string();
    h.state_mut().handle(Command::Scan);
    wait_idle(&mut h);
    let s = h.state();
    for r in &s.library.rows {
        assert_eq!(
            r.status,
            RowStatus::NotCompressed,
            "{}: {:?}",
            r.label,
            r.status
        );
        assert!(r.good_report().is_none(), "{}", r.label);
    }
    assert_eq!(s.library.summary.compressed, 0);
    compress_all(&mut h);
    let t = &h.state().jobs.last_batch.as_ref().unwrap().report.totals;
    assert_eq!((t.clips, t.skipped), (5, 0));
    // Back to the first folder (typed, no rescan): its results show again, from its cache.
    h.state_mut().persisted.output_dir = out.path().display().to_string();
    h.run_steps(2);
    wait_idle(&mut h);
    h.run_steps(2);
    let s = h.state();
    assert_eq!(s.library.summary.compressed, 5);
    assert!(
        s.library
            .rows
            .iter()
            .all(|r| r.status == RowStatus::Skipped),
        "{:?}",
        s.library.rows.iter().map(|r| &r.status).collect::<Vec<_>>()
    );
}

/// Finding 2: no bar of the max error histogram straddles a threshold line; a bar right of
/// the line holds only clips over the threshold.
#[test]
fn the_error_histogram_has_a_bin_edge_at_the_threshold() {
    let (_input, _out, mut h) = scanned_named_clips();
    compress_all(&mut h);
    // One clip again at a tighter threshold: two lines, the tighter one inside the range.
    h.state_mut().persisted.settings.error_threshold_cm = 0.001;
    h.state_mut().handle(Command::SettingsChanged);
    let walk = row_key(&h, "hero_walk").path;
    h.state_mut()
        .handle(Command::Compress(clipforge::gui::CompressScope::Files(
            vec![walk],
        )));
    wait_idle(&mut h);
    h.state_mut().persisted.tab = Tab::Charts;
    h.run_steps(4);
    let bins: Vec<clipforge::gui::charts::HistBin> = h
        .ctx
        .data(|d| d.get_temp(clipforge::gui::charts::bins_id("cf_chart_err_hist")))
        .expect("the histogram drew its bars");
    let errs: Vec<f64> = h
        .state()
        .library
        .compressed_rows()
        .map(|r| r.good_report().unwrap().max_error_cm)
        .collect();
    let max = errs.iter().copied().fold(0.0, f64::max);
    for t in [0.001f32 as f64, 0.01f32 as f64] {
        if t >= max {
            continue;
        }
        for b in &bins {
            assert!(
                !(b.lo < t && b.hi > t),
                "a bar straddles the {t} line: {b:?}"
            );
        }
        let right: u32 = bins.iter().filter(|b| b.lo >= t).map(|b| b.count).sum();
        assert_eq!(right as usize, errs.iter().filter(|e| **e > t).count());
    }
    assert!(max > 0.001f32 as f64, "{errs:?}");
}

/// Finding 6: the filter does not follow to another folder; the charts show what the table
/// shows (a click never opens a clip the filter hides); a point's hover names its file.
#[test]
fn filters_stay_with_their_folder_and_charts_follow_the_table() {
    let (_input, _out, mut h) = scanned_named_clips();
    compress_all(&mut h);
    set_filter(&mut h, "hero");
    assert_eq!(shown_labels(&h).len(), 2);
    h.state_mut().persisted.tab = Tab::Charts;
    h.run_steps(4);
    let points: Vec<egui::Pos2> = h
        .ctx
        .data(|d| d.get_temp(clipforge::gui::charts::points_id("cf_chart_ratio_err")))
        .unwrap();
    assert_eq!(points.len(), 2, "only the filtered clips are plotted");
    let names: Vec<String> = h
        .ctx
        .data(|d| d.get_temp(clipforge::gui::charts::names_id("cf_chart_ratio_err")))
        .unwrap();
    assert!(
        names.iter().all(|n| n.contains(".acl.sjson")),
        "a point's hover names its file: {names:?}"
    );
    for p in points {
        h.state_mut().persisted.tab = Tab::Charts;
        h.run_steps(3);
        h.hover_at(p);
        h.step();
        h.drag_at(p);
        h.step();
        h.drop_at(p);
        h.run_steps(3);
        let key = h
            .state()
            .detail
            .selected
            .clone()
            .expect("a click opens a clip");
        assert!(key.clip.starts_with("hero"), "{}", key.clip);
        assert!(shown_labels(&h).contains(&key.clip));
    }
    // Another folder: the filter is gone and every clip of it shows.
    let other = tempfile::tempdir().unwrap();
    write_named_clips(other.path());
    h.state_mut().persisted.tab = Tab::Clips;
    h.state_mut().persisted.input_dir = other.path().display().to_string();
    h.state_mut().handle(Command::Scan);
    wait_idle(&mut h);
    assert_eq!(h.state().clips.filter, "");
    assert_eq!(shown_labels(&h).len(), 5);
}

/// Issue 26, finding 4: where a result came from. A folder file's threshold, a `[[clip]]`
/// table's and per-bone tables show in the Threshold column (a `*` where a clip or per-bone
/// override applies), in the detail with their sources, and the A/B window says per-bone
/// settings applied to both sides.
#[test]
fn each_result_says_the_settings_that_made_it_and_where_they_came_from() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_named_clips(input.path());
    let toml = input.path().join("clipforge.toml");
    std::fs::write(
        &toml,
        "error_threshold = 0.05\n[[clip]]\nmatch = \"hero_run.acl.sjson\"\nerror_threshold = 0.1\n",
    )
    .unwrap();
    let mut h = harness(input.path(), out.path());
    h.state_mut().handle(Command::Scan);
    wait_idle(&mut h);
    compress_all(&mut h);
    // The column: the folder's 0.05 for most, the clip table's 0.1 (marked) for hero_run.
    h.get_by_label("Threshold");
    assert_eq!(h.query_all_by_label("0.05").count(), 4);
    h.get_by_label("0.1 *");
    let row = |h: &Harness<'_, AppState>, l: &str| {
        h.state()
            .library
            .rows
            .iter()
            .find(|r| r.label == l)
            .unwrap()
            .clone()
    };
    let run = row(&h, "hero_run").settings_text().unwrap();
    assert!(
        run.contains("threshold 0.1 cm ([[clip]] \"hero_run.acl.sjson\" in ")
            && run.contains(&toml.display().to_string()),
        "{run}"
    );
    let walk = row(&h, "hero_walk").settings_text().unwrap();
    assert!(
        walk.starts_with(&format!(
            "Compressed with threshold 0.05 cm ({})",
            toml.display()
        )),
        "{walk}"
    );
    // The detail says it too.
    let key = row_key(&h, "hero_run");
    h.state_mut().handle(Command::OpenClip { key, add: false });
    wait_idle(&mut h);
    h.get_by_label_contains("Compressed with threshold 0.1 cm ([[clip]]");

    // Per-bone tables in the folder file apply to both sides of a comparison: it says so.
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str("[[bone]]\nmatch = \"head\"\nerror_threshold = 0.002\n");
    // (TOML: a top-level [[bone]] after [[clip]] is its own array.)
    std::fs::write(&toml, text).unwrap();
    h.state_mut().handle(Command::SettingsFilesChanged);
    h.run_steps(3);
    // What applies now differs from what made the results: stale, and the hover says both.
    assert_eq!(row(&h, "hero_walk").status, RowStatus::Stale);
    assert!(
        row(&h, "hero_walk")
            .settings_text()
            .unwrap()
            .contains("Now applies: threshold 0.05 cm"),
    );
    h.get_by_label("Compare presets…").click();
    h.run_steps(2);
    run_comparison(&mut h);
    h.get_by_label_contains("Per-bone settings apply to both sides");
    h.get_by_label_contains("A: threshold");
}

/// `n` generated clips `take_00.acl.sjson`… in `dir`.
fn write_takes(dir: &Path, n: usize) {
    for i in 0..n {
        let clip = generate(&GenerateOptions {
            name: format!("take_{i:02}"),
            num_samples: 20 + i,
            seed: i as u64 + 1,
            ..Default::default()
        });
        std::fs::write(
            dir.join(format!("take_{i:02}.acl.sjson")),
            write_acl_clip(&clip),
        )
        .unwrap();
    }
}

/// Issue 26, finding 7 (layout), in the window size of the app's first start (1280×800): a
/// hint that a row opens its clip; the batch bit-rate plot's axis inside the detail; the
/// "suggested ×N" button there from the start (no jump on the first keystroke); the per-bone
/// table closed on the next clip; the table keeping several rows with it open; a failed Status
/// cell's text once in its hover.
#[test]
fn the_clips_tab_layout_holds_at_1280_by_800() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_takes(input.path(), 20);
    std::fs::write(input.path().join("broken.bvh"), "HIERARCHY\nROOT Hips\n{\n").unwrap();
    let p = Persisted {
        input_dir: input.path().display().to_string(),
        output_dir: out.path().display().to_string(),
        ..Default::default()
    };
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_max_steps(200)
        .build_ui_state(|ui, s: &mut AppState| s.ui(ui), AppState::new(p));
    h.state_mut().handle(Command::Scan);
    wait_idle(&mut h);
    compress_all(&mut h);
    h.get_by_label_contains("click a row to open its clip");

    // A failed cell's hover says its text once (the truncated label's own hover).
    let text = h
        .state()
        .library
        .rows
        .iter()
        .find(|r| r.label == "broken")
        .unwrap()
        .status
        .text();
    let failed = h.get_by_label(&text);
    let at = failed.rect().center();
    h.hover_at(egui::pos2(at.x as f32, at.y as f32));
    h.run_steps(60);
    // Rendered: the cell and its tooltip, which holds the text once (counting the tooltip
    // rather than the string: a hover that showed nothing would pass `<= 2` as well).
    let shown = h.query_all_by_label(&text).count();
    assert_eq!(
        shown, 2,
        "the failure text is shown {shown} times (the cell, then its tooltip once)"
    );

    let key = row_key(&h, "take_00");
    h.state_mut().handle(Command::OpenClip { key, add: false });
    wait_idle(&mut h);
    h.get_by_label_contains("suggested ×");
    let (plot, clip): (egui::Rect, egui::Rect) = h
        .ctx
        .data(|d| d.get_temp(clipforge::gui::plot_rect_id("cf_bits_batch")))
        .expect("the batch bit-rate plot was drawn");
    assert!(
        plot.bottom() <= clip.bottom() + 0.5,
        "the batch plot's axis is cut off: {plot:?} in {clip:?}"
    );

    h.get_by_label("Per-bone thresholds").click();
    h.run();
    h.get_by_label("Save to clipforge.toml");
    let rows_shown = |h: &Harness<'_, AppState>| {
        (0..20)
            .filter(|i| h.query_by_label(&format!("take_{i:02}")).is_some())
            .count()
    };
    let n = rows_shown(&h);
    assert!(
        n >= 4,
        "with the per-bone table open the table shows {n} rows"
    );

    let key = row_key(&h, "take_01");
    h.state_mut().handle(Command::OpenClip { key, add: false });
    wait_idle(&mut h);
    assert!(
        h.query_by_label("Save to clipforge.toml").is_none(),
        "the next clip opens with its error plots, not the table"
    );
}

/// Issue 26, finding 7 (layout) at both ends: at 1280 px the table fits the window (the Status
/// column used to run past its right edge, its text cut off with no hover), and at 1920 px a
/// failure's whole text fits its cell (nothing elided, so no hover needed).
#[test]
fn the_clip_table_fits_the_window_at_1280_and_1920() {
    let input = tempfile::tempdir().unwrap();
    write_takes(input.path(), 3);
    std::fs::write(input.path().join("broken.bvh"), "HIERARCHY\nROOT Hips\n{\n").unwrap();
    for width in [1280.0, 1920.0] {
        let out = tempfile::tempdir().unwrap();
        let p = Persisted {
            input_dir: input.path().display().to_string(),
            output_dir: out.path().display().to_string(),
            ..Default::default()
        };
        let mut h = Harness::builder()
            .with_size(egui::vec2(width, 800.0))
            .with_max_steps(200)
            .build_ui_state(|ui, s: &mut AppState| s.ui(ui), AppState::new(p));
        h.state_mut().handle(Command::Scan);
        wait_idle(&mut h);
        compress_all(&mut h);
        let status = h.get_by_label("Status").rect();
        assert!(
            status.right() <= width,
            "{width} px: the Status header ends at {}",
            status.right()
        );
        let text = h
            .state()
            .library
            .rows
            .iter()
            .find(|r| r.label == "broken")
            .unwrap()
            .status
            .text();
        let cell = h.get_by_label(&text).rect();
        assert!(
            cell.left() < width && cell.right() <= width,
            "{width} px: the failed Status cell spans {}..{}",
            cell.left(),
            cell.right()
        );
        if width >= 1920.0 {
            let at = cell.center();
            h.hover_at(at);
            h.run_steps(60);
            assert_eq!(
                h.query_all_by_label(&text).count(),
                1,
                "at {width} px the failure's text is elided (a hover shows it)"
            );
        }
    }
}
