//! The Watch tab's pipelines and the Clips tab's live results, driven headless with
//! egui_kittest: a running pipeline keeps its own folders and settings whatever the Clips tab
//! shows, pipelines are listed / started / stopped / persisted, what a pipeline compresses shows
//! in the table at once, changing folders closes the detail, Recent rescans, and export writes
//! into the current output folder and says where next to its buttons.
#![cfg(feature = "gui")]

use crate::common;

use crate::common::gui::{harness, wait_idle};
use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::gui::{AppState, Persisted, PipelineStatus, RowStatus};
use eframe::egui;
use egui::accesskit::Role;
use egui_kittest::{Harness, kittest::Queryable};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn write_clip(dir: &Path, name: &str, samples: usize, seed: u64) {
    let clip = generate(&GenerateOptions {
        name: name.into(),
        num_samples: samples,
        seed,
        ..Default::default()
    });
    // Written beside and renamed in, as a tool saving a file would (the watcher sees it whole).
    let tmp = dir.join(format!(".{name}.part"));
    std::fs::write(&tmp, write_acl_clip(&clip)).unwrap();
    std::fs::rename(&tmp, dir.join(format!("{name}.acl.sjson"))).unwrap();
}

fn state(input: &str, out: &Path) -> AppState {
    AppState::new(Persisted {
        input_dir: input.into(),
        output_dir: out.display().to_string(),
        ..Default::default()
    })
}

/// Steps frames until `done` holds (the watcher works on its own threads), at most 30 s.
fn wait_for(h: &mut Harness<'_, AppState>, what: &str, done: impl Fn(&AppState) -> bool) {
    let t0 = Instant::now();
    while !done(h.state()) {
        assert!(t0.elapsed() < Duration::from_secs(30), "timed out: {what}");
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.step();
}

/// Every `.cfa` under `dir`.
fn cfa_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "cfa"))
        .collect();
    v.sort();
    v
}

fn has_cfa(dir: &Path, stem: &str) -> bool {
    cfa_files(dir).iter().any(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(stem))
    })
}

fn compressed_count(s: &AppState, i: usize) -> u64 {
    s.watch.pipelines[i].counts.compressed
}

fn scan(h: &mut Harness<'_, AppState>) {
    h.get_by_label("Scan").click();
    wait_idle(h);
}

/// The data-safety bug of issue 12: a watch of in-a → out-a followed the Clips tab's output
/// folder and preset, writing in-a's clips into the new output. A pipeline keeps its own.
#[test]
fn a_running_pipeline_keeps_its_output_and_settings_when_the_clips_tab_changes() {
    let (in_a, out_a, in_b, out_b) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    write_clip(in_a.path(), "first", 30, 1);
    write_clip(in_b.path(), "other", 25, 2);
    let mut h = harness(state(&in_a.path().display().to_string(), out_a.path()));
    h.run();
    scan(&mut h);
    // Watch in-a (→ out-a, default preset) from the folder bar.
    h.get_by_role_and_label(Role::CheckBox, "Watch").click();
    h.run();
    assert!(
        h.state()
            .watch
            .is_watching(&in_a.path().display().to_string())
    );
    let (oa, ob) = (out_a.path().to_path_buf(), out_b.path().to_path_buf());
    wait_for(&mut h, "the catch-up of in-a", |_| has_cfa(&oa, "first"));

    // The Clips tab moves on: another input and output folder, another preset.
    h.state_mut().persisted.input_dir = in_b.path().display().to_string();
    h.state_mut().persisted.output_dir = out_b.path().display().to_string();
    scan(&mut h);
    h.get_by_role_and_label(Role::ComboBox, "Preset").click();
    h.run();
    h.get_by_label("Crowd / LOD (0.1 cm)").click();
    h.run();
    assert_eq!(h.state().persisted.settings.error_threshold_cm, 0.1);
    for _ in 0..20 {
        h.step();
    }

    // A clip dropped into in-a goes to out-a, with the pipeline's settings.
    write_clip(in_a.path(), "dropped", 40, 3);
    wait_for(&mut h, "the dropped clip", |_| {
        has_cfa(&oa, "dropped") || has_cfa(&ob, "dropped")
    });
    // A watch restarted into the new output would catch up there too: give it time to show.
    for _ in 0..25 {
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(has_cfa(&oa, "dropped"), "{:?}", cfa_files(&oa));
    assert!(
        cfa_files(&ob).is_empty(),
        "nothing of in-a in the new output folder: {:?}",
        cfa_files(&ob)
    );
    let p = &h.state().watch.pipelines[0];
    assert_eq!(p.status, PipelineStatus::Watching);
    assert_eq!(Path::new(&p.config.output), out_a.path());
    assert_eq!(p.config.error_threshold, Some(0.01));
    assert_eq!(p.counts.compressed, 2, "first, then dropped, each once");
    assert!(
        !h.state()
            .watch
            .log
            .iter()
            .any(|e| e.message.contains("restarting")),
        "the pipeline was never restarted"
    );
}

/// Two pipelines from the Watch tab's form, each into its own output with its own preset;
/// stop one; the list and which ran survive a restart, and the running one catches up.
#[test]
fn the_watch_tab_lists_starts_stops_and_persists_pipelines() {
    let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    let (in_a, out_a, in_b, out_b) = (
        dirs[0].path(),
        dirs[1].path(),
        dirs[2].path(),
        dirs[3].path(),
    );
    write_clip(in_a, "a1", 30, 1);
    write_clip(in_b, "b1", 30, 2);
    let mut h = harness(state("", out_a));
    h.run();
    h.get_by_role_and_label(Role::Button, "Watch").click();
    h.run();
    h.get_by_label_contains("No pipelines yet");

    let add = |h: &mut Harness<'_, AppState>, input: &Path, output: &Path, preset: &str| {
        for (label, v) in [("Pipeline input:", input), ("Pipeline output:", output)] {
            let f = h.get_by_role_and_label(Role::TextInput, label);
            f.focus();
            f.type_text(&v.display().to_string());
            h.run();
        }
        if let Some(p) = preset.strip_prefix("pick:") {
            h.get_by_role_and_label(Role::ComboBox, "Preset:").click();
            h.run();
            h.get_by_label(p).click();
            h.run();
        }
        h.get_by_label("Add pipeline").click();
        h.run();
    };
    add(&mut h, in_a, out_a, "");
    add(&mut h, in_b, out_b, "pick:High quality (0.001 cm)");
    {
        let s = h.state();
        assert_eq!(s.watch.pipelines.len(), 2, "{:?}", s.watch.message);
        assert!(s.watch.pipelines.iter().all(|p| p.is_running()));
        assert_eq!(s.watch.pipelines[0].config.error_threshold, Some(0.01));
        assert_eq!(s.watch.pipelines[1].config.error_threshold, Some(0.001));
    }
    wait_for(&mut h, "both catch-ups", |s| {
        compressed_count(s, 0) >= 1 && compressed_count(s, 1) >= 1
    });
    // Status, counts and the last event are shown per pipeline.
    assert_eq!(h.query_all_by_label("watching").count(), 2);
    assert_eq!(
        h.query_all_by_label_contains("1 file compressed · 0 skipped · 0 failed")
            .count(),
        2
    );
    assert_eq!(
        h.query_all_by_label_contains("a1.acl.sjson: 1 clip, ")
            .count(),
        2,
        "in the pipeline's last event and in the log"
    );
    assert!(has_cfa(out_a, "a1") && !has_cfa(out_a, "b1"));
    assert!(has_cfa(out_b, "b1") && !has_cfa(out_b, "a1"));

    // An overlapping pipeline is refused (a pipeline owns its output folder).
    add(&mut h, out_a, &out_b.join("sub"), "");
    h.get_by_label_contains("Not added: pipelines overlap");
    assert_eq!(h.state().watch.pipelines.len(), 2);

    // Stop the second one from its row.
    let stops: Vec<_> = h.query_all_by_label("Stop").collect();
    assert_eq!(stops.len(), 2);
    stops[1].click();
    h.run();
    assert!(h.state().watch.pipelines[0].is_running());
    assert!(!h.state().watch.pipelines[1].is_running());
    assert_eq!(h.query_all_by_label("idle").count(), 1);

    // Restart: the list comes back, the first one running (and catching up), the second idle.
    let persisted = h.state().persisted.clone();
    drop(h);
    write_clip(in_a, "a2", 20, 5);
    write_clip(in_b, "b2", 20, 6);
    let mut app = AppState::new(persisted);
    app.start(false);
    let mut h = harness(app);
    h.run();
    {
        let s = h.state();
        assert_eq!(s.watch.pipelines.len(), 2);
        assert!(s.watch.pipelines[0].is_running());
        assert!(!s.watch.pipelines[1].is_running());
        assert_eq!(s.watch.pipelines[1].config.error_threshold, Some(0.001));
    }
    wait_for(&mut h, "the catch-up after a restart", |s| {
        compressed_count(s, 0) >= 1
    });
    assert!(has_cfa(out_a, "a2"));
    assert!(!has_cfa(out_b, "b2"), "a stopped pipeline stays stopped");

    // Remove the second: gone from the list, its outputs stay.
    let removes: Vec<_> = h.query_all_by_label("Remove").collect();
    removes[1].click();
    h.run();
    assert_eq!(h.state().watch.pipelines.len(), 1);
    assert!(has_cfa(out_b, "b1"));
}

/// What a pipeline compresses shows in the Clips table at once when its folder is open there,
/// new files included (the table used to stay "0 of 0" / "20 of 20").
#[test]
fn pipeline_results_appear_live_in_the_clips_table() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_clip(input.path(), "walk", 30, 1);
    write_clip(input.path(), "run", 35, 2);
    let mut h = harness(state(&input.path().display().to_string(), out.path()));
    h.run();
    scan(&mut h);
    assert_eq!(h.state().library.rows.len(), 2);
    assert!(h.state().library.rows.iter().all(|r| r.report().is_none()));
    h.get_by_role_and_label(Role::CheckBox, "Watch").click();
    h.run();
    wait_for(&mut h, "the catch-up", |s| compressed_count(s, 0) >= 2);
    wait_for(&mut h, "rows with results", |s| {
        s.library.summary.compressed == 2
    });
    h.get_by_label_contains("2 compressed of 2");

    write_clip(input.path(), "jump", 25, 3);
    wait_for(&mut h, "the new clip's row", |s| {
        s.library.summary.compressed == 3 && s.library.view.len() == 3
    });
    h.get_by_label_contains("3 compressed of 3");
    h.get_by_label("jump");
    let s = h.state();
    let row = s
        .library
        .rows
        .iter()
        .find(|r| r.label == "jump")
        .expect("a row for the dropped clip");
    assert_eq!(row.status, RowStatus::Ok);
    assert!(row.good_report().unwrap().compressed_bytes > 0);
    assert_eq!(row.samples, Some(25));

    // A broken file dropped there: a failed row at once (not "reading…" forever).
    std::fs::write(input.path().join("broken.bvh"), "HIERARCHY\nROOT Hips\n{\n").unwrap();
    wait_for(&mut h, "the broken file's row", |s| {
        s.library
            .rows
            .iter()
            .any(|r| r.label == "broken" && matches!(r.status, RowStatus::Failed(_)))
    });
    let s = h.state();
    let broken = s.library.rows.iter().find(|r| r.label == "broken").unwrap();
    assert!(!broken.pending, "{broken:?}");

    // Deleted in the folder: the pipeline deletes its output, the row goes away.
    std::fs::remove_file(input.path().join("jump.acl.sjson")).unwrap();
    wait_for(&mut h, "the row of the deleted clip to go", |s| {
        s.library.view.len() == 3 && s.library.rows.iter().all(|r| r.label != "jump")
    });
}

/// After Watch compresses clips the footer has their compression times but no batch's
/// throughput (a batch's wall-time figure): it says why there is none, not "Throughput —"
/// beside a p50 (ux32's tour).
#[test]
fn the_footer_says_why_watch_results_have_no_throughput() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_clip(input.path(), "walk", 30, 1);
    write_clip(input.path(), "run", 35, 2);
    let mut h = harness(state(&input.path().display().to_string(), out.path()));
    h.run();
    scan(&mut h);
    h.get_by_role_and_label(Role::CheckBox, "Watch").click();
    h.run();
    wait_for(&mut h, "rows with results", |s| {
        s.library.summary.compressed == 2
    });
    assert_eq!(h.state().library.summary.timed, 2);
    h.get_by_label_contains("compression time per clip: p50 ");
    h.get_by_label("Throughput: no batch on this folder since the app started");
    assert!(h.query_by_label("Throughput —").is_none());
}

/// Choosing another folder from Recent rescans it and closes the old folder's clip detail.
#[test]
fn recent_folder_rescans_and_closes_the_detail() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_clip(a.path(), "alpha", 30, 1);
    write_clip(b.path(), "beta", 30, 2);
    write_clip(b.path(), "gamma", 30, 3);
    let mut app = state(&a.path().display().to_string(), out.path());
    app.persisted.recent_inputs = vec![b.path().display().to_string()];
    let mut h = harness(app);
    h.run();
    scan(&mut h);
    h.get_by_label("alpha").click();
    wait_idle(&mut h);
    assert!(h.state().detail.selected.is_some());

    let recent: Vec<_> = h.query_all_by_label("Recent").collect();
    recent[0].click();
    h.run();
    h.get_by_label(&b.path().display().to_string()).click();
    h.run();
    assert!(
        h.state().detail.selected.is_none(),
        "the old folder's clip detail is closed"
    );
    wait_idle(&mut h);
    let canon = b.path().canonicalize().unwrap();
    assert_eq!(h.state().library.root.as_deref(), Some(canon.as_path()));
    assert_eq!(
        h.state().library.rows.len(),
        2,
        "the chosen folder was scanned"
    );
    h.get_by_label("beta");
    h.get_by_label("gamma");
}

/// Export writes into the output folder shown now (not the first one) and says where, next to
/// its buttons.
#[test]
fn export_writes_into_the_current_output_folder_and_says_where() {
    let input = tempfile::tempdir().unwrap();
    let out1 = tempfile::tempdir().unwrap();
    let out2 = tempfile::tempdir().unwrap();
    write_clip(input.path(), "walk", 30, 1);
    write_clip(input.path(), "run", 30, 2);
    let mut h = harness(state(&input.path().display().to_string(), out1.path()));
    h.run();
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    assert_eq!(h.state().library.summary.compressed, 2);

    h.state_mut().persisted.output_dir = out2.path().display().to_string();
    h.run();
    // The table shows the results of the output folder shown (issue 26): none in out2 yet.
    wait_idle(&mut h);
    assert_eq!(h.state().library.summary.compressed, 0);
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    assert_eq!(h.state().library.summary.compressed, 2);
    h.get_by_label("Export CSV").click();
    h.run();
    let csv = out2.path().join("clipforge-report.csv");
    assert!(csv.is_file(), "written into the current output folder");
    assert!(!out1.path().join("clipforge-report.csv").exists());
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 3);
    h.get_by_label(&format!("Exported 2 clips to {}", csv.display()));
    // The message sits in the export row, beside the button (same line).
    let button = h.get_by_label("Export CSV").rect();
    let msg = h
        .get_by_label(&format!("Exported 2 clips to {}", csv.display()))
        .rect();
    assert!(
        (msg.center().y - button.center().y).abs() < 6.0 && msg.left() > button.right(),
        "message {msg:?} beside the button {button:?}"
    );
    h.get_by_label("Export JSON").click();
    h.run();
    assert!(out2.path().join("clipforge-report.json").is_file());
}

/// The Watch tab's list saved as a pipelines file runs headless with `clipforge watch
/// --pipelines` (same keys): each pipeline into its own output with its own threshold; and
/// loading the file back gives the same list.
#[test]
fn a_saved_pipelines_file_runs_headless_and_loads_back() {
    let dirs: Vec<tempfile::TempDir> = (0..5).map(|_| tempfile::tempdir().unwrap()).collect();
    let (in_a, out_a, in_b, out_b) = (
        dirs[0].path(),
        dirs[1].path(),
        dirs[2].path(),
        dirs[3].path(),
    );
    write_clip(in_a, "a1", 40, 1);
    write_clip(in_b, "b1", 40, 1);
    let mut app = state("", out_a);
    for (i, o, t) in [(in_a, out_a, 0.1), (in_b, out_b, 0.001)] {
        let mut c = app.pipeline_from_clips_tab(&i.display().to_string());
        c.output = o.display().to_string();
        c.error_threshold = Some(t);
        app.watch.add(c).unwrap();
    }
    let file = dirs[4].path().join("pipelines.toml");
    let mut h = harness(app);
    h.run();
    h.get_by_role_and_label(Role::Button, "Watch").click();
    h.run();
    let f = h.get_by_role_and_label(Role::TextInput, "Pipelines file:");
    f.focus();
    f.type_text(&file.display().to_string());
    h.run();
    h.get_by_label("Save list").click();
    h.run();
    h.get_by_label_contains("Saved 2 pipelines to");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("error_threshold = 0.001\n"), "{text}");

    let mut child = common::clipforge()
        .args(["watch", "--pipelines"])
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run clipforge watch");
    let t0 = Instant::now();
    while !(has_cfa(out_a, "a1") && has_cfa(out_b, "b1")) {
        if t0.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the headless watch did not catch up");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    // Same clip, two thresholds: the tighter pipeline wrote the bigger output.
    let size = |d: &Path| std::fs::metadata(&cfa_files(d)[0]).unwrap().len();
    assert!(
        size(out_b) > size(out_a),
        "{} vs {}",
        size(out_b),
        size(out_a)
    );
    assert!(!has_cfa(out_a, "b1") && !has_cfa(out_b, "a1"));

    // Loading the file into an empty list gives the same pipelines.
    let mut again = clipforge::gui::PipelinesState::default();
    assert_eq!(again.load_file(&file).unwrap(), 2);
    let configs = |s: &clipforge::gui::PipelinesState| -> Vec<_> {
        s.pipelines.iter().map(|p| p.config.clone()).collect()
    };
    assert_eq!(configs(&again), configs(&h.state().watch));
}

/// Folders watched by the version before pipelines become pipelines with the output folder and
/// settings they were watched with, running, and are stored as pipelines from then on.
#[test]
fn folders_watched_before_pipelines_become_pipelines() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_clip(input.path(), "old", 30, 1);
    let mut p = Persisted {
        input_dir: String::new(),
        output_dir: out.path().display().to_string(),
        watched: vec![input.path().display().to_string()],
        ..Default::default()
    };
    p.settings.error_threshold_cm = 0.05;
    let mut app = AppState::new(p);
    app.start(false);
    assert!(app.persisted.watched.is_empty());
    assert_eq!(app.persisted.pipelines.len(), 1);
    let saved = &app.persisted.pipelines[0];
    assert!(saved.running);
    assert_eq!(Path::new(&saved.config.output), out.path());
    assert_eq!(saved.config.error_threshold, Some(0.05));
    let mut h = harness(app);
    let o = out.path().to_path_buf();
    wait_for(&mut h, "the migrated pipeline's catch-up", |_| {
        has_cfa(&o, "old")
    });
}

/// Issue 26, finding 8: the add form has a name, Browse buttons, shell distance, exclude
/// patterns and threads (every key of a `[[pipeline]]` table); a second watcher of one output
/// folder (here a `clipforge watch`-style engine watch of another input, as a service would
/// run) is refused with a message naming the first, and the folder is free again once it stops.
#[test]
fn the_add_form_has_every_key_and_two_watchers_of_one_output_are_refused() {
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let (in_a, in_b, out) = (dirs[0].path(), dirs[1].path(), dirs[2].path());
    write_clip(in_a, "a1", 30, 1);
    write_clip(in_b, "b1", 30, 2);
    let mut h = harness(state("", out));
    h.run();
    h.get_by_role_and_label(Role::Button, "Watch").click();
    h.run();
    h.get_by_label("Browse…");
    h.get_by_label("Browse… ");
    for (label, v) in [
        ("Pipeline name:", "heroes".to_string()),
        ("Pipeline input:", in_a.display().to_string()),
        ("Pipeline output:", out.display().to_string()),
        ("Exclude:", "_old/, \\.tmp$".to_string()),
    ] {
        let f = h.get_by_role_and_label(Role::TextInput, label);
        f.focus();
        f.type_text(&v);
        h.run();
    }
    h.get_by_label("Shell distance:").click();
    h.run();
    h.state_mut().watch.form.jobs = 2;
    // The watch a service started on the same output folder, from another input.
    let service = clipforge::pipeline::watch::start_watch(
        in_b,
        clipforge::pipeline::watch::WatchOptions::new(Default::default(), out),
    )
    .unwrap();
    h.get_by_label("Add pipeline").click();
    h.run();
    {
        let s = h.state();
        assert_eq!(s.watch.pipelines.len(), 1, "{:?}", s.watch.message);
        let c = &s.watch.pipelines[0].config;
        assert_eq!(c.name, "heroes");
        assert_eq!(c.shell_distance, Some(3.0));
        assert_eq!(c.exclude, vec!["_old/".to_string(), "\\.tmp$".to_string()]);
        assert_eq!(c.jobs, 2);
        match &s.watch.pipelines[0].status {
            PipelineStatus::Error(e) => assert!(
                e.contains("already the output folder of a running watch")
                    && e.contains(&in_b.canonicalize().unwrap().display().to_string()),
                "{e}"
            ),
            other => panic!("two watchers of one output folder: {other:?}"),
        }
    }
    // The service stops: the pipeline starts.
    drop(service);
    h.state_mut().watch.start(0);
    h.run();
    assert!(h.state().watch.pipelines[0].is_running());
}

/// The Watch log names what it compressed: a scalar track list is "1 scalar track list", not
/// "1 clip(s)".
#[test]
fn the_watch_log_calls_a_scalar_track_list_by_its_name() {
    let (input, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_clip(input.path(), "walk", 30, 1);
    let mut h = harness(state(&input.path().display().to_string(), out.path()));
    h.run();
    scan(&mut h);
    h.get_by_role_and_label(Role::CheckBox, "Watch").click();
    h.run();
    let o = out.path().to_path_buf();
    wait_for(&mut h, "the catch-up", |_| has_cfa(&o, "walk"));
    // Written beside and renamed in, as a tool saving a file would.
    let tmp = input.path().join(".weights.part");
    common::batch_dirs::write_scalar_list(&tmp);
    std::fs::rename(&tmp, input.path().join("weights.acl.sjson")).unwrap();
    wait_for(&mut h, "the list", |s| {
        s.watch
            .log
            .iter()
            .any(|e| e.message.starts_with("weights.acl.sjson: "))
    });
    h.get_by_role_and_label(Role::Button, "Watch").click();
    h.run();
    // In the pipeline's last event and in the log.
    assert_eq!(
        h.query_all_by_label_contains("weights.acl.sjson: 1 scalar track list, ")
            .count(),
        2
    );
    h.get_by_label_contains("walk.acl.sjson: 1 clip, ");
    // Its few µs of work are not "0.0 ms" (nothing done).
    let list = &h
        .state()
        .watch
        .log
        .iter()
        .find(|e| e.message.starts_with("weights.acl.sjson: "))
        .unwrap()
        .message;
    assert!(!list.ends_with(" 0.0 ms"), "{list}");
    assert!(list.ends_with(" ms"), "{list}");
}
