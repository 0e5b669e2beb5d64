//! Seconds, not just lines: the history line (rebuild cost over the project's History period),
//! the "Measure N TUs" row (clang on a worker thread, with progress and
//! Cancel; the table's Seconds column and the predicted frontend time appear when it is done),
//! and the precompiled-header advice with its "Verify" (real builds, measured beside the
//! prediction). The compiler runs are [`super::super::headers_job::CompileJob`]s; this file
//! starts them, polls them and draws their results.

use super::super::headers_job;
use super::{HeadersSettings, HeadersState, fmt_count};
use crate::gui::util::{fmt_counted, fmt_ms, fmt_seconds};
use crate::headers::report::{PchAdvice, PchCheck};
use crate::headers::{Mode, pch};
use crate::pipeline::report::format_3_decimals;
use eframe::egui;

impl HeadersState {
    /// Starts measuring the shown scan's preprocessed report (its copy goes to the worker).
    pub fn start_measure(&mut self, s: &HeadersSettings) {
        if self.measure.is_some() || self.verify.is_some() {
            return;
        }
        let project = match s.project.project() {
            Ok(p) => p,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        let Some(r) = self.outcome.as_ref().and_then(|o| o.preprocessed.clone()) else {
            return;
        };
        self.message = None;
        let history = self.outcome.as_ref().and_then(|o| o.history.clone());
        self.measure = Some(headers_job::start_measure(
            project,
            r,
            s.measure_tus.max(1),
            history,
            self.generation,
            self.ctx.clone(),
        ));
    }

    /// Starts verifying the advised PCH on `s.verify_tus` TUs.
    pub fn start_verify(&mut self, s: &HeadersSettings) {
        if self.measure.is_some() || self.verify.is_some() {
            return;
        }
        let (Some((g, t)), Ok(project)) = (self.timing.clone(), s.project.project()) else {
            return;
        };
        let Some(r) = self.outcome.as_ref().and_then(|o| o.preprocessed.clone()) else {
            return;
        };
        if g != self.generation {
            return;
        }
        self.message = None;
        self.verify = Some(headers_job::start_verify_pch(
            project,
            r,
            t,
            s.verify_tus.max(1),
            self.generation,
            self.ctx.clone(),
        ));
    }

    /// Takes finished compiler runs (called every frame).
    pub(super) fn poll_compile(&mut self) {
        if let Some(res) = self.measure.as_ref().and_then(|j| j.poll()) {
            let job = self.measure.take();
            match res {
                Ok(m) if job.is_some_and(|j| j.generation == self.generation) => {
                    if let Some(o) = self.outcome.as_mut() {
                        let old = o.preprocessed.replace(m.report);
                        // Freeing a large report takes a while: not on the UI thread.
                        let _ = std::thread::Builder::new()
                            .name("clipforge-headers-free".into())
                            .spawn(move || drop(old));
                    }
                    self.timing = Some((self.generation, m.timing));
                    self.view_key = None;
                }
                Ok(_) => {
                    self.message = Some((
                        "The tree was rescanned while measuring: press Measure again".into(),
                        true,
                    ))
                }
                Err(e) => self.message = Some((e, true)),
            }
        }
        if let Some(res) = self.verify.as_ref().and_then(|j| j.poll()) {
            let job = self.verify.take();
            match res {
                Ok(c) if job.is_some_and(|j| j.generation == self.generation) => {
                    if let Some(a) = self
                        .outcome
                        .as_mut()
                        .and_then(|o| o.preprocessed.as_mut())
                        .and_then(|r| r.pch.as_mut())
                    {
                        a.check = Some(c);
                    }
                }
                Ok(_) => {
                    self.message = Some((
                        "The tree was rescanned while verifying: measure and verify again".into(),
                        true,
                    ))
                }
                Err(e) => self.message = Some((format!("Verify PCH: {e}"), true)),
            }
        }
    }

    /// After a rescan (called with the scan it replaced): the last Measure's seconds go on the
    /// new report when the tree's files are unchanged (none re-read, the same files and TUs);
    /// otherwise they are dropped and the message says so (before, a rescan dropped them
    /// silently).
    pub(super) fn carry_measure(&mut self, old: Option<&headers_job::ScanOutcome>) {
        let Some((g, t)) = self.timing.take() else {
            return;
        };
        // Measured on the scan just replaced (an older one was dropped already).
        if g + 1 != self.generation {
            return;
        }
        let old = old.and_then(|o| o.preprocessed.as_ref());
        let history = self.outcome.as_ref().and_then(|o| o.history.clone());
        let Some(new) = self.outcome.as_mut().and_then(|o| o.preprocessed.as_mut()) else {
            return;
        };
        let unchanged =
            new.stats.files_read == 0 && old.is_some_and(|old| old.graph.same_files(&new.graph));
        if !unchanged {
            self.message = Some((
                "The tree changed since Measure: its seconds are no longer shown (press Measure \
                 again)"
                    .into(),
                true,
            ));
            return;
        }
        t.apply(new);
        let h = history.as_ref().map(|h| (&h.0, h.1));
        let mut advice = pch::advise(new, &t, 0, pch::PchSize::Auto, h);
        // A verification stays with the same advice.
        if let Some(a) = old.and_then(|o| o.pch.as_ref())
            && a.headers == advice.headers
        {
            advice.check = a.check.clone();
        }
        new.pch = Some(advice);
        self.timing = Some((self.generation, t));
    }

    /// True while clang runs for Measure or Verify.
    pub fn compiling(&self) -> bool {
        self.measure.is_some() || self.verify.is_some()
    }

    /// The Measure row, the predicted time and the PCH advice.
    pub(super) fn seconds_ui(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        let has_pre = self
            .outcome
            .as_ref()
            .is_some_and(|o| o.preprocessed.is_some());
        // The tree's TUs: Measure compiles at most that many (the button said "Measure 10 TUs"
        // on a tree of 4, and then measured 4).
        let tree_tus = self
            .outcome
            .as_ref()
            .and_then(|o| o.preprocessed.as_ref())
            .map(|r| r.graph.tus.len());
        ui.horizontal(|ui| {
            let busy = self.compiling() || self.job.is_some();
            // Named for what the number is: "Clang: [10]" read as a compiler version.
            let l = ui.label("TUs to measure:");
            ui.add(
                egui::DragValue::new(&mut s.measure_tus)
                    .range(1..=100_000)
                    .speed(1.0),
            )
            .labelled_by(l.id)
            .on_hover_text("Translation units to compile with clang");
            if ui
                .add_enabled(
                    has_pre && !busy,
                    egui::Button::new(format!(
                        "Measure {}",
                        tus_to_compile(s.measure_tus, tree_tus)
                    )),
                )
                .on_hover_text(
                    "Compile this many TUs (chosen to cover the most-included headers) with clang \
                     -fsyntax-only -ftime-trace: each header's cost in ms, every TU's predicted \
                     time, the Seconds column and the PCH advice",
                )
                .clicked()
            {
                self.start_measure(s);
            }
            let job = self
                .measure
                .as_ref()
                .map(|j| (j.counts(), j.started, &j.cancel, "Measuring"))
                .or_else(|| {
                    self.verify
                        .as_ref()
                        .map(|j| (j.counts(), j.started, &j.cancel, "Verifying the PCH"))
                });
            if let Some(((done, total), started, cancel, what)) = job {
                let frac = if total == 0 {
                    0.0
                } else {
                    done as f32 / total as f32
                };
                let text = if cancel.is_cancelled() {
                    "Cancelling (the running compiles finish)…".to_string()
                } else {
                    format!(
                        "{what} · {} / {} TUs · {:.1} s",
                        fmt_count(done as u64),
                        fmt_count(total as u64),
                        started.elapsed().as_secs_f64()
                    )
                };
                ui.add(
                    egui::ProgressBar::new(frac)
                        .desired_width(ui.available_width().clamp(120.0, 360.0))
                        .text(text)
                        .animate(false),
                );
                if ui.button("Cancel measuring").clicked() {
                    cancel.cancel();
                }
            } else if let Some(r) = self.report(s).filter(|_| s.show_mode == Mode::Preprocessed)
                && let (Some(total), Some(m)) = (r.predicted_frontend_s, r.measured_tus)
            {
                // In ms below 0.1 s, as the PCH line under it ("0.01 s" beside "2 ms").
                ui.label(format!(
                    "Frontend time: {} predicted for {} ({} measured)",
                    fmt_seconds(total),
                    fmt_counted(r.translation_units as u64, "TU"),
                    fmt_count(m as u64)
                ));
            } else if !has_pre {
                ui.weak("Scan first, then measure");
            }
        });
        if let Some(c) = self.report(s).and_then(|r| r.churn.as_ref()) {
            ui.label(format!(
                "History (last {} days): {} commits, {} TU rebuilds, {:.1} per week",
                c.churn_days,
                fmt_count(c.churn_commits as u64),
                fmt_count(c.churn_tu_rebuilds),
                c.churn_tu_rebuilds_per_week
            ));
        }
        let advice = self
            .outcome
            .as_ref()
            .and_then(|o| o.preprocessed.as_ref())
            .and_then(|r| r.pch.as_ref());
        if let Some(a) = advice {
            let mut verify = false;
            egui::CollapsingHeader::new(format!(
                "Precompiled header: {} headers, {} net per build",
                a.headers.len(),
                fmt_seconds(a.net_s)
            ))
            .id_salt("hh_pch")
            .show(ui, |ui| {
                verify = pch_ui(ui, a, s, tree_tus, self.compiling() || self.job.is_some());
            });
            if verify {
                self.start_verify(s);
            }
        }
    }
}

/// The largest share of the window the advised headers' list takes (it scrolls beyond): the
/// top panel clips what does not fit, so at 800 px a list of tens of headers hid the Verify
/// and Copy buttons below it, and took the table's room.
const PCH_LIST_SHARE: f32 = 0.15;

/// The advice, the Verify button (true when clicked) and the verification's figures.
fn pch_ui(
    ui: &mut egui::Ui,
    a: &PchAdvice,
    s: &mut HeadersSettings,
    tree_tus: Option<usize>,
    busy: bool,
) -> bool {
    // In ms below 0.1 s: a small PCH's load read "0.000 s loading it".
    ui.label(format!(
        "Per clean build: {} saved − {} loading it − {} building it = {} net (the same \
         number of headers by Total Parsed: {})",
        fmt_seconds(a.saved_s),
        fmt_seconds(a.load_s),
        fmt_seconds(a.build_s),
        fmt_seconds(a.net_s),
        fmt_seconds(a.naive_net_s)
    ));
    let mut clicked = false;
    ui.horizontal(|ui| {
        let l = ui.label("TUs to verify:");
        ui.add(
            egui::DragValue::new(&mut s.verify_tus)
                .range(1..=10_000)
                .speed(1.0),
        )
        .labelled_by(l.id)
        .on_hover_text("Translation units to compile three ways");
        clicked = ui
            .add_enabled(
                !busy && !a.headers.is_empty(),
                egui::Button::new(format!(
                    "Verify on {}",
                    tus_to_compile(s.verify_tus, tree_tus)
                )),
            )
            .on_hover_text(
                "Build this PCH and the naive one (as many headers by Total Parsed) with clang and \
                 compile the TUs without and with each: measured saving beside the prediction",
            )
            .clicked();
        if ui
            .button("Copy pch.h")
            .on_hover_text("The advised pch.h, to paste into the project")
            .clicked()
        {
            ui.ctx().copy_text(a.pch_h.clone());
        }
    });
    // The list scrolls within its share of the window; the buttons above stay in view.
    let cap = (ui.ctx().content_rect().height() * PCH_LIST_SHARE).max(90.0);
    egui::ScrollArea::vertical()
        .id_salt("hh_pch_scroll")
        .max_height(cap)
        .show(ui, |ui| {
            egui::Grid::new("hh_pch_grid")
                .num_columns(4)
                .spacing([14.0, 2.0])
                .striped(true)
                .show(ui, |ui| {
                    for h in ["Header", "Gain (s)", "ms per TU", "TUs"] {
                        ui.label(egui::RichText::new(h).strong());
                    }
                    ui.end_row();
                    for h in &a.headers {
                        ui.label(&h.path);
                        ui.label(format_3_decimals(h.gain_s));
                        ui.label(format_3_decimals(h.cost_ms));
                        ui.label(fmt_count(h.tus as u64));
                        ui.end_row();
                    }
                });
        });
    if let Some(c) = &a.check {
        check_ui(ui, c);
    }
    clicked
}

fn check_ui(ui: &mut egui::Ui, c: &PchCheck) {
    ui.label(format!(
        "Verified on {} TUs (clang -fsyntax-only, CPU seconds; without a PCH {}):",
        c.tus,
        fmt_seconds(c.without_s)
    ));
    egui::Grid::new("hh_pch_check")
        .num_columns(5)
        .spacing([14.0, 2.0])
        .show(ui, |ui| {
            for h in ["", "Measured saving", "Predicted", "Error", "PCH build"] {
                ui.label(egui::RichText::new(h).strong());
            }
            ui.end_row();
            for (name, m) in [("Advised", &c.advised), ("Naive", &c.naive)] {
                ui.label(name);
                ui.label(fmt_seconds(m.measured_saving_s));
                ui.label(fmt_seconds(m.predicted_saving_s));
                ui.label(format!("{:+.1} %", m.error_percent));
                ui.label(fmt_seconds(m.build_s));
                ui.end_row();
            }
        });
    // The prediction charges each PCH's measured load; the advice's own figure beside it.
    for (name, m) in [("advised", &c.advised), ("naive", &c.naive)] {
        // A load that the medians cannot tell from zero is said so, not "0.0 ms per TU".
        let load = if m.load_ms > 0.0 {
            // The fraction is stored to three decimals: a load it rounded to 0 is still a load.
            let fraction = if m.load_fraction > 0.0 {
                format_3_decimals(m.load_fraction)
            } else {
                "< 0.001".to_string()
            };
            format!(
                "loading it costs {} per TU ({fraction} of its headers' time)",
                fmt_ms(m.load_ms),
            )
        } else {
            "loading it took no measurable time per TU (within the timing noise)".to_string()
        };
        ui.weak(format!(
            "The {name} PCH: {load}; the advice predicted {}",
            fmt_seconds(m.advice_predicted_saving_s)
        ));
    }
    for n in &c.notes {
        ui.weak(n);
    }
}

/// "4 TUs" for a button that compiles `asked` TUs of a tree of `tree` (clang runs on at most the
/// tree's TUs; the count asked for is the field beside the button).
pub(crate) fn tus_to_compile(asked: usize, tree: Option<usize>) -> String {
    let n = tree.map_or(asked, |t| asked.min(t)).max(1);
    fmt_counted(n as u64, "TU")
}
