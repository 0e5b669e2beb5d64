//! The app's kittest harness, shared by the GUI tests: the window at the size they all use,
//! waiting for background work, and procedural clips to open.

use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::gui::AppState;
use eframe::egui;
use egui_kittest::{Harness, kittest::Queryable};
use std::path::Path;
use std::time::Duration;

/// The app in a 1400×950 window, `AppState::ui` drawn each frame.
pub fn harness(state: AppState) -> Harness<'static, AppState> {
    Harness::builder()
        .with_size(egui::vec2(1400.0, 950.0))
        .with_max_steps(200)
        .build_ui_state(|ui, s: &mut AppState| s.ui(ui), state)
}

/// No scan, inspection, skip-cache lookup, batch or detail load is running.
pub fn idle(s: &AppState) -> bool {
    !s.is_busy()
        && s.jobs.inspect_job.is_none()
        && s.jobs.cached_job.is_none()
        && !s.detail.loading()
}

/// Runs frames until the app is [`idle`] (bounded). While work runs the UI repaints
/// continuously (progress spinner), so single frames are stepped; `run` (which waits for the UI
/// to settle) only once idle.
pub fn wait_idle(h: &mut Harness<'_, AppState>) {
    wait_until(h, 6000, "background work", idle);
}

/// Steps frames until `done` holds, at most `steps` frames 10 ms apart; `run` once it holds.
pub fn wait_until(
    h: &mut Harness<'_, AppState>,
    steps: usize,
    what: &str,
    done: impl Fn(&AppState) -> bool,
) {
    for _ in 0..steps {
        h.step();
        if done(h.state()) {
            h.run();
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{what} did not finish");
}

/// Types `text` into the Error threshold field key by key, as a user would, then Enter.
pub fn type_threshold(h: &mut Harness<'_, AppState>, text: &str) {
    h.get_by_label("Error threshold (cm)").click();
    h.run();
    // The field selects its text when it gains focus: the first key replaces it.
    for c in text.chars() {
        h.event(egui::Event::Text(c.to_string()));
        h.run();
    }
    h.key_press(egui::Key::Enter);
    h.run();
}

/// Writes `n` procedural clips (`clip_00.acl.sjson`, …) of `samples` (+7 per clip) samples.
pub fn write_clips(dir: &Path, n: usize, samples: usize) {
    for i in 0..n {
        let clip = generate(&GenerateOptions {
            name: format!("clip_{i:02}"),
            num_samples: samples + 7 * i,
            seed: i as u64 + 1,
            with_scale: i % 3 == 0,
            ..Default::default()
        });
        std::fs::write(
            dir.join(format!("clip_{i:02}.acl.sjson")),
            write_acl_clip(&clip),
        )
        .unwrap();
    }
}

/// WCAG relative luminance of an opaque colour.
fn luminance(c: egui::Color32) -> f64 {
    let lin = |v: u8| {
        let v = v as f64 / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.r()) + 0.7152 * lin(c.g()) + 0.0722 * lin(c.b())
}

/// WCAG contrast ratio of two opaque colours (small text needs 4.5:1).
pub fn contrast(a: egui::Color32, b: egui::Color32) -> f64 {
    let (x, y) = (luminance(a), luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

/// Every text shape painted in the last frame.
fn text_shapes(h: &Harness<'_, AppState>) -> Vec<egui::epaint::TextShape> {
    fn walk(s: &egui::Shape, out: &mut Vec<egui::epaint::TextShape>) {
        match s {
            egui::Shape::Text(t) => out.push(t.clone()),
            egui::Shape::Vec(v) => v.iter().for_each(|s| walk(s, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in &h.output().shapes {
        walk(&c.shape, &mut out);
    }
    out
}

/// Every text drawn in the last frame with its on-screen box (rotated ones too).
pub fn drawn_texts(h: &Harness<'_, AppState>) -> Vec<(String, egui::Rect)> {
    text_shapes(h)
        .iter()
        .map(|t| (t.galley.text().to_string(), t.visual_bounding_rect()))
        .collect()
}

/// Each text painted in the last frame whose text starts with `starts`: the colour its glyphs
/// were drawn in (the shape's override, else its section's colour, else its fallback, as the
/// tessellator picks) and its on-screen box.
pub fn painted_texts(h: &Harness<'_, AppState>, starts: &str) -> Vec<(egui::Color32, egui::Rect)> {
    text_shapes(h)
        .iter()
        .filter(|t| t.galley.text().starts_with(starts))
        .map(|t| {
            let section = t
                .galley
                .job
                .sections
                .first()
                .map_or(egui::Color32::PLACEHOLDER, |s| s.format.color);
            let color = t
                .override_text_color
                .unwrap_or(if section == egui::Color32::PLACEHOLDER {
                    t.fallback_color
                } else {
                    section
                });
            (color, t.visual_bounding_rect())
        })
        .collect()
}

/// The fill colours of the rectangles painted in the last frame under the point `at`.
pub fn fills_under(h: &Harness<'_, AppState>, at: egui::Pos2) -> Vec<egui::Color32> {
    fn walk(s: &egui::Shape, at: egui::Pos2, out: &mut Vec<egui::Color32>) {
        match s {
            egui::Shape::Vec(v) => v.iter().for_each(|s| walk(s, at, out)),
            egui::Shape::Rect(r) if r.rect.contains(at) => out.push(r.fill),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in &h.output().shapes {
        walk(&c.shape, at, &mut out);
    }
    out
}
