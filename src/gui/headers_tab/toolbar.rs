//! The top of the tab: Scan / Clean rescan / Cancel with progress, the watch toggle and the
//! shown mode; the summary of the last scan; the picker of the central view.

use super::fmt_count;
use super::{HeadersSettings, HeadersState, HeadersView};
use crate::gui::util::fmt_seconds;
use crate::headers::{Mode, Report};
use eframe::egui;

impl HeadersState {
    pub(super) fn action_row(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        ui.add_space(4.0);
        ui.horizontal(|ui| {
            let running = self.job.is_some();
            if ui
                .add_enabled(
                    !running,
                    egui::Button::new(egui::RichText::new("Scan").strong()),
                )
                .on_hover_text("Rescan: only changed files are re-read")
                .clicked()
            {
                self.start_scan(s, false);
            }
            if ui
                .add_enabled(!running, egui::Button::new("Clean rescan"))
                .on_hover_text("Forget the previous scan and the cache; read everything again")
                .clicked()
            {
                self.start_scan(s, true);
            }
            if ui
                .add_enabled(running, egui::Button::new("Cancel"))
                .clicked()
            {
                self.cancel();
            }
            let mut watch = s.watch;
            if ui
                .checkbox(&mut watch, "Watch")
                .on_hover_text("Rescan whenever files under the roots or include dirs change")
                .changed()
            {
                s.watch = watch;
                self.error = None;
            }
            ui.separator();
            ui.label("Show:");
            ui.selectable_value(&mut s.show_mode, Mode::Preprocessed, "Preprocessed")
                .on_hover_text(
                    "Each TU preprocessed for real (macros, #if, guards): what the compiler parses",
                );
            ui.selectable_value(&mut s.show_mode, Mode::AllBranches, "All branches")
                .on_hover_text("Every #include line, every #if branch (Header Hero's definition)");
            ui.separator();
            if let Some(job) = &self.job {
                let (done, total) = job.counts();
                let frac = if total == 0 {
                    0.0
                } else {
                    done as f32 / total as f32
                };
                let text = if job.progress.cancelled() {
                    "Cancelling…".to_string()
                } else {
                    format!(
                        "{} · {} / {} TUs · {:.1} s",
                        job.progress.phase(),
                        fmt_count(done as u64),
                        fmt_count(total as u64),
                        job.started.elapsed().as_secs_f64()
                    )
                };
                ui.add(
                    egui::ProgressBar::new(frac)
                        .desired_width(ui.available_width().clamp(120.0, 520.0))
                        .text(text)
                        // No animation: an animated bar repaints every frame (one core's worth of
                        // UI work at an unlimited frame rate, taken from the scan); the app
                        // repaints every 50 ms while a scan runs, which keeps the counts live.
                        .animate(false),
                );
            } else if let Some(o) = &self.outcome {
                ui.weak(format!(
                    "{} in {}{}",
                    if o.clean { "Clean scan" } else { "Scanned" },
                    // In ms below 0.1 s: a cached rescan said "Scan 0.00 s" beside "0.01 s".
                    fmt_seconds(o.wall.as_secs_f64()),
                    if self.watcher.is_some() {
                        " · watching for changes"
                    } else {
                        ""
                    }
                ));
            }
        });
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        if let Some((m, is_err)) = &self.message {
            let c = if *is_err {
                ui.visuals().error_fg_color
            } else {
                ui.visuals().weak_text_color()
            };
            ui.colored_label(c, m);
        }
    }

    pub(super) fn summary_ui(&mut self, ui: &mut egui::Ui, s: &HeadersSettings) {
        let Some(o) = &self.outcome else {
            ui.add_space(4.0);
            if self.job.is_none() {
                ui.label(if self.error.is_some() {
                    // A project that does not scan has no figures (an earlier tree's are not
                    // its own).
                    "No figures: the scan did not run (the message above says why)."
                } else {
                    "No scan yet: add a source root on the left and press Scan."
                });
            }
            ui.add_space(4.0);
            return;
        };
        let other = match s.show_mode {
            Mode::Preprocessed => Mode::AllBranches,
            Mode::AllBranches => Mode::Preprocessed,
        };
        ui.add_space(4.0);
        egui::Grid::new("hh_summary")
            .num_columns(9)
            .spacing([18.0, 3.0])
            .striped(true)
            .show(ui, |ui| {
                for h in [
                    "",
                    "Files",
                    "TUs",
                    "Total Lines",
                    "Total Parsed",
                    "Blowup",
                    "Missing",
                    "Errors",
                    "Cycles",
                ] {
                    ui.label(egui::RichText::new(h).strong());
                }
                ui.end_row();
                for (i, mode) in [s.show_mode, other].into_iter().enumerate() {
                    let Some(r) = o.report(mode) else { continue };
                    let t = |x: String| {
                        let t = egui::RichText::new(x);
                        if i == 0 { t.strong() } else { t.weak() }
                    };
                    // With several configurations, TUs and Total Parsed summed over them are
                    // no build's figures (a file is one TU per configuration): the headline row
                    // keeps the union's files and lines, each configuration's row the rest.
                    let several = r.configs.len() > 1;
                    let name = match mode {
                        Mode::Preprocessed => "Preprocessed",
                        Mode::AllBranches => "All branches",
                    };
                    ui.label(t(if several {
                        format!("{name} ({} configurations)", r.configs.len())
                    } else {
                        name.to_string()
                    }));
                    let per_config = |ui: &mut egui::Ui| {
                        ui.label(t("per configuration".into())).on_hover_text(
                            "Each configuration's figure is on its own row below: a file scanned in two configurations is two TUs, so a sum would be no build's figure.",
                        );
                    };
                    ui.label(t(fmt_count(r.files as u64)));
                    if several {
                        per_config(ui);
                    } else {
                        ui.label(t(fmt_count(r.translation_units as u64)));
                    }
                    ui.label(t(fmt_count(r.total_lines)));
                    if several {
                        per_config(ui);
                        per_config(ui);
                    } else {
                        ui.label(t(fmt_count(r.total_parsed)));
                        ui.label(t(format!("{:.2}×", r.blowup)));
                    }
                    for v in [r.missing.len(), r.errors.len(), r.cycles.len()] {
                        ui.label(t(fmt_count(v as u64)));
                    }
                    ui.end_row();
                    // Each configuration's own figures under the combined row.
                    for c in &r.configs {
                        ui.label(t(format!("  config {}", c.name)));
                        for v in [
                            c.files as u64,
                            c.translation_units as u64,
                            c.total_lines,
                            c.total_parsed,
                        ] {
                            ui.label(t(fmt_count(v)));
                        }
                        ui.label(t(format!("{:.2}×", c.blowup)));
                        ui.end_row();
                    }
                }
            });
        if let Some(r) = o.report(s.show_mode) {
            let st = &r.stats;
            ui.weak(format!(
                "Scan {} · files read {}, reused {} · TUs evaluated {}, reused {}{}",
                fmt_seconds(r.scan_seconds),
                fmt_count(st.files_read as u64),
                fmt_count(st.files_reused as u64),
                fmt_count(st.tus_evaluated as u64),
                fmt_count(st.tus_reused as u64),
                if st.cache_used { " · disk cache" } else { "" }
            ));
            egui::CollapsingHeader::new(format!("Notes ({})", r.notes.len()))
                .id_salt("hh_notes")
                .show(ui, |ui| {
                    for n in &r.notes {
                        ui.weak(n);
                    }
                });
        }
    }

    pub(super) fn view_picker(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        let r = self.report(s);
        let n = |f: &dyn Fn(&Report) -> usize| r.map_or(0, f);
        let labels = [
            (
                HeadersView::Files,
                format!("Files ({})", fmt_count(n(&|r| r.headers.len()) as u64)),
            ),
            (
                HeadersView::Missing,
                format!("Missing includes ({})", n(&|r| r.missing.len())),
            ),
            (
                HeadersView::Errors,
                format!("Errors ({})", n(&|r| r.errors.len())),
            ),
            (
                HeadersView::Cycles,
                format!("Cycles ({})", n(&|r| r.cycles.len())),
            ),
            (HeadersView::Cuts, "Top cuts".to_string()),
        ];
        ui.separator();
        ui.horizontal(|ui| {
            for (v, text) in labels {
                ui.selectable_value(&mut s.view, v, text);
            }
        });
        ui.add_space(2.0);
    }
}
