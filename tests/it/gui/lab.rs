//! The Lab tab driven headless with egui_kittest: the three codecs on a clip, the batch chart's
//! points per codec, and cancelling (per clip and per batch) leaving the view usable.
#![cfg(feature = "gui")]

use crate::common::app_folder::clip_folders;
use crate::common::gui::{harness, wait_until};
use clipforge::gui::{AppState, DecodePattern, LabMode, Persisted, chart_series};
use eframe::egui;
use egui_kittest::{Harness, kittest::Queryable};
use std::path::Path;
use std::time::Duration;

const CODECS: [&str; 3] = ["uniform", "key_reduction", "sorted_stream"];

/// The app on `input`, scanned and inspected, showing the Lab tab.
fn lab_harness(input: &Path, out: &Path) -> Harness<'static, AppState> {
    let p = Persisted {
        input_dir: input.display().to_string(),
        output_dir: out.display().to_string(),
        ..Default::default()
    };
    let mut state = AppState::new(p);
    state.start(false);
    let mut h = harness(state);
    wait(&mut h, |s| {
        s.jobs.scan_job.is_none() && s.jobs.inspect_job.is_none() && s.jobs.cached_job.is_none()
    });
    h.get_by_label("Lab").click();
    h.run();
    h
}

/// Steps frames until `done` holds (bounded); while a job runs the UI repaints continuously,
/// so frames are stepped one by one and `run` only once idle.
fn wait(h: &mut Harness<'_, AppState>, done: impl Fn(&AppState) -> bool) {
    wait_until(h, 30_000, "the lab", done);
}

#[test]
fn the_clip_view_lists_the_three_codecs_with_their_error_curves() {
    let (input, out) = clip_folders(2, 45);
    let mut h = lab_harness(input.path(), out.path());
    assert_eq!(h.state().lab.mode, LabMode::Clip);
    assert!(
        h.query_by_label("uniform").is_none(),
        "nothing measured yet"
    );
    h.get_by_label("Run lab on this clip").click();
    h.step();
    assert!(h.state().lab.busy(), "the lab runs in the background");
    wait(&mut h, |s| !s.lab.busy());
    let lab = h.state().lab.clip.clone().expect("a result");
    assert_eq!(lab.key.clip, "clip_00");
    let names: Vec<&str> = lab.lab.codecs.iter().map(|c| c.codec.as_str()).collect();
    assert_eq!(names, CODECS);
    assert_eq!(lab.series.len(), 3);
    let threshold = lab.lab.threshold_cm as f64;
    for (c, (name, curve)) in lab.lab.codecs.iter().zip(&lab.series) {
        assert_eq!(&c.codec, name);
        assert_eq!(curve.len(), lab.lab.samples, "{name}: a point per sample");
        let peak = curve.iter().copied().fold(0.0, f64::max);
        // The curve is at the samples; the codec's max also counts the midpoints between them.
        assert!(
            peak <= c.max_error_cm + 1e-9,
            "{name}: {peak} > {}",
            c.max_error_cm
        );
        assert!(peak > 0.0, "{name}: a lossy codec has some error");
        assert!(c.max_error_cm <= threshold, "{name}: over the threshold");
        assert!(c.bytes > 0 && c.cache_lines_per_pose > 0.0);
        assert!(c.decode_ns.forward_30hz > 0.0 && c.decode_ns.random > 0.0);
    }
    // Only the sorted stream keeps a playback context.
    assert_eq!(lab.lab.codecs[0].context_bytes, 0);
    assert!(lab.lab.codecs[2].context_bytes > 0);
    for name in CODECS {
        assert!(h.query_all_by_label(name).next().is_some(), "{name} shown");
    }
    assert!(h.query_by_label("cache lines / pose").is_some());
    assert!(h.query_by_label("decode, random seeks").is_some());
}

#[test]
fn the_batch_chart_has_a_point_per_clip_for_each_codec() {
    let (input, out) = clip_folders(3, 30);
    // A file the inspection could not read is left out of the batch (it is listed as
    // unreadable in the Clips tab).
    std::fs::write(input.path().join("broken.acl.sjson"), "clip = { name = ").unwrap();
    let mut h = lab_harness(input.path(), out.path());
    h.get_by_label("Per batch").click();
    h.run();
    h.get_by_label("Run lab on 3 clips").click();
    h.step();
    assert!(h.state().lab.batch_job.is_some());
    wait(&mut h, |s| !s.lab.busy());
    let lab = &h.state().lab;
    assert_eq!(lab.batch_rows.len(), 3);
    assert!(lab.batch_rows.iter().all(|r| r.result.is_ok()));
    for pattern in DecodePattern::ALL {
        let series = chart_series(&lab.batch_rows, pattern);
        let codecs: Vec<&str> = series.iter().map(|s| s.codec).collect();
        assert_eq!(codecs, CODECS);
        for s in &series {
            assert_eq!(s.points.len(), 3, "{}: a point per good clip", s.codec);
            let mut clips = s.clips.clone();
            clips.sort();
            assert_eq!(clips, ["clip_00", "clip_01", "clip_02"]);
            assert!(s.points.iter().all(|p| p[0] > 0.0 && p[1] > 0.0));
        }
    }
    let msg = lab.batch_message.clone().expect("a summary").0;
    assert!(msg.starts_with("3 clips in "), "{msg}");
    assert!(h.query_by_label("mean decode").is_some());
}

/// One clip is "1 clip" on the button and in the summary (they said "1 clip(s)").
#[test]
fn one_clip_reads_in_the_singular() {
    let (input, out) = clip_folders(1, 20);
    let mut h = lab_harness(input.path(), out.path());
    h.get_by_label("Per batch").click();
    h.run();
    h.get_by_label("Run lab on 1 clip").click();
    h.step();
    wait(&mut h, |s| !s.lab.busy());
    let msg = h.state().lab.batch_message.clone().expect("a summary").0;
    assert!(msg.starts_with("1 clip in "), "{msg}");
    assert_eq!(h.query_all_by_label_contains("(s)").count(), 0);
}

#[test]
fn cancel_leaves_the_view_consistent_and_usable() {
    let (input, out) = clip_folders(12, 200);
    let mut h = lab_harness(input.path(), out.path());

    // Per clip: a result, then a run cancelled with Esc keeps that result and says so.
    h.get_by_label("Run lab on this clip").click();
    wait(&mut h, |s| !s.lab.busy());
    let first = h.state().lab.clip.clone().expect("a result");
    h.get_by_label("Run lab on this clip").click();
    h.step();
    assert!(h.state().lab.clip_job.is_some());
    h.key_press(egui::Key::Escape);
    h.step();
    let lab = &h.state().lab;
    assert!(lab.clip_job.is_none(), "Esc cancels the lab at once");
    assert_eq!(
        lab.clip_message.as_ref().map(|m| m.0.as_str()),
        Some("Cancelled")
    );
    assert!(std::sync::Arc::ptr_eq(lab.clip.as_ref().unwrap(), &first));
    // The cancelled run's thread must not deliver later.
    for _ in 0..50 {
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(std::sync::Arc::ptr_eq(
        h.state().lab.clip.as_ref().unwrap(),
        &first
    ));

    // Per batch: cancel after the first rows; the rows kept are whole, and a new run works.
    h.get_by_label("Per batch").click();
    h.run();
    h.get_by_label("Run lab on 12 clips").click();
    wait(&mut h, |s| !s.lab.batch_rows.is_empty() || !s.lab.busy());
    h.get_by_label("Cancel").click();
    h.step();
    let lab = &h.state().lab;
    assert!(lab.batch_job.is_none());
    let kept = lab.batch_rows.len();
    assert!((1..12).contains(&kept), "{kept} rows kept");
    assert!(lab.batch_rows.iter().all(|r| r.result.is_ok()));
    let msg = lab.batch_message.clone().unwrap().0;
    assert_eq!(msg, format!("Cancelled: {kept} of 12 clips measured"));
    for s in chart_series(&lab.batch_rows, DecodePattern::Random) {
        assert_eq!(s.points.len(), kept);
    }
    for _ in 0..30 {
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        h.state().lab.batch_rows.len(),
        kept,
        "nothing arrives after cancel"
    );
    assert!(h.query_by_label("Run lab on 12 clips").is_some());
}

#[test]
fn weak_text_is_readable_on_both_themes() {
    let mut h = Harness::builder()
        .with_size(egui::vec2(800.0, 500.0))
        .build_ui_state(|ui, s: &mut AppState| s.ui(ui), AppState::default());
    h.step();
    for theme in [egui::Theme::Dark, egui::Theme::Light] {
        let v = h.ctx.style_of(theme).visuals.clone();
        let weak = v.weak_text_color();
        for bg in [v.panel_fill, v.window_fill, v.extreme_bg_color] {
            let c = crate::common::gui::contrast(weak, bg);
            assert!(
                c >= 4.5,
                "{theme:?}: weak text {weak:?} on {bg:?} is {c:.2}:1"
            );
        }
    }
}

/// Issue 26, finding 5: the Lab runs a clip with its effective settings (here its folder's
/// `clipforge.toml`, not the Clips tab's 0.01 cm) and says them and where they came from.
#[test]
fn the_lab_runs_a_clip_with_its_folder_settings_and_says_so() {
    let (input, out) = clip_folders(1, 45);
    let toml = input.path().join("clipforge.toml");
    std::fs::write(&toml, "error_threshold = 0.05\n").unwrap();
    let mut h = lab_harness(input.path(), out.path());
    h.get_by_label("Run lab on this clip").click();
    h.step();
    wait(&mut h, |s| !s.lab.busy());
    let lab = h.state().lab.clip.clone().expect("a result");
    assert_eq!(lab.lab.threshold_cm, 0.05);
    assert!(
        lab.lab.codecs.iter().any(|c| c.max_error_cm > 0.01),
        "held to 0.05, not 0.01"
    );
    h.get_by_label_contains(&format!("Ran with threshold 0.05 cm ({}", toml.display()));
}

/// Seen in the real window: with a clip already in the Clip box the view said "Pick a clip, or
/// press …", as if none were picked; it names the clip the button runs on.
#[test]
fn the_clip_view_names_the_picked_clip_it_will_run_on() {
    let (input, out) = clip_folders(2, 45);
    let h = lab_harness(input.path(), out.path());
    assert!(h.state().lab.clip.is_none(), "nothing measured yet");
    assert!(h.query_by_label_contains("Pick a clip").is_none());
    h.get_by_label("Press \u{201c}Run lab on this clip\u{201d} to compare the codecs on clip_00.");
}

/// The rectangles painted in the last frame whose outline is `color` (egui_plot's bars).
fn bars_outlined(h: &Harness<'_, AppState>, color: egui::Color32) -> Vec<egui::Rect> {
    fn walk(s: &egui::Shape, color: egui::Color32, out: &mut Vec<egui::Rect>) {
        match s {
            egui::Shape::Vec(v) => v.iter().for_each(|s| walk(s, color, out)),
            egui::Shape::Rect(r) if r.stroke.color == color && r.stroke.width > 0.0 => {
                out.push(r.rect)
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in &h.output().shapes {
        walk(&c.shape, color, &mut out);
    }
    out
}

/// The decode-time chart leaves its key (top right, over the "random" group) clear of the
/// bars: sorted_stream's random-seek bar, tens of µs beside ~1 µs, ran up to the frame under
/// the key (ux32's tour). At the app's size and at 1280 × 800.
#[test]
fn no_decode_bar_runs_under_the_charts_key() {
    let (input, out) = clip_folders(1, 200);
    let mut h = lab_harness(input.path(), out.path());
    h.get_by_label("Run lab on this clip").click();
    h.step();
    wait(&mut h, |s| !s.lab.busy());
    for size in [egui::vec2(1400.0, 950.0), egui::vec2(1280.0, 800.0)] {
        h.set_size(size);
        h.run();
        let heading = h.get_by_label("Decode time per pose").rect();
        let below = h.get_by_label_contains("Error over time").rect();
        // The key's entries: the codec names drawn between the chart's heading and the next
        // plot's, right of its left edge (the figures' column titles are left of it).
        let key: Vec<egui::Rect> = crate::common::gui::drawn_texts(&h)
            .into_iter()
            .filter(|(t, r)| {
                CODECS.contains(&t.as_str())
                    && r.min.y > heading.max.y
                    && r.max.y < below.min.y
                    && r.min.x > heading.min.x
            })
            .map(|(_, r)| r)
            .collect();
        assert_eq!(key.len(), 3, "the key's three entries at {size:?}");
        let mut tallest = f32::INFINITY;
        for codec in CODECS {
            let bars = bars_outlined(&h, clipforge::gui::codec_color(codec));
            assert_eq!(
                bars.len(),
                4,
                "{codec}: a bar per access pattern at {size:?}"
            );
            for b in bars {
                tallest = tallest.min(b.min.y);
                for k in &key {
                    assert!(
                        !b.intersects(k.shrink(1.0)),
                        "{codec}'s bar {b:?} runs under the key's entry {k:?} at {size:?}"
                    );
                }
            }
        }
        assert!(tallest > heading.max.y, "a bar above the chart");
    }
}
