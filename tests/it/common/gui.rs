//! The app's kittest harness, shared by the GUI tests: the window at the size they all use,
//! waiting for background work, and procedural clips to open.

use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::gui::AppState;
use eframe::egui;
use egui_kittest::Harness;
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
