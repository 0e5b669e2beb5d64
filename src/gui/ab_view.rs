//! "Compare presets…": the A/B window of one clip. It runs [`crate::pipeline::ab::run_ab`] on a
//! background thread (progress, cancel), then shows both sides' sizes, ratios and max errors,
//! their error over time in one plot (a line each, thresholds drawn) and the per-bone max
//! errors side by side. "Keep A" / "Keep B" record that side's settings for the clip (a
//! `[[clip]]` table in its `clipforge.toml`) and write its output into the output folder;
//! nothing there changes before. The kept report waits in [`AbView::kept`] for the app to put
//! it in the Clips table.

use super::model::RowKey;
use super::settings::{Preset, SettingsState};
use super::util::{fmt_bytes, fmt_count};
use crate::anim::CompressionSettings;
use crate::pipeline::ab::{AbRequest, AbRun, AbSettings, Side, run_ab};
use crate::pipeline::{CancelToken, Progress};
use eframe::egui;
use egui_plot::{HLine, Legend, Line, Plot, PlotPoints};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, TryRecvError};

/// One side's choice: a preset, or a custom threshold (cm).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbChoice {
    pub preset: Preset,
    pub custom_cm: f32,
}

impl AbChoice {
    pub fn settings(&self) -> AbSettings {
        let (threshold, shell) = self.preset.values().unwrap_or((self.custom_cm, None));
        let label = match self.preset {
            Preset::Custom => format!("Custom ({} cm)", self.custom_cm),
            p => p.label().to_string(),
        };
        AbSettings {
            label,
            settings: CompressionSettings {
                error_threshold: threshold,
                shell_distance: shell,
                ..Default::default()
            },
        }
    }
}

struct AbJob {
    progress: Arc<Progress>,
    cancel: CancelToken,
    rx: Receiver<Result<AbRun, String>>,
}

/// The A/B window's state.
pub struct AbView {
    pub open: bool,
    /// The clip compared, and its folder (the output path is mirrored from it).
    pub key: Option<RowKey>,
    pub root: Option<PathBuf>,
    pub bone_names: Vec<String>,
    pub a: AbChoice,
    pub b: AbChoice,
    job: Option<AbJob>,
    pub result: Option<Result<AbRun, String>>,
    /// The last keep's outcome, shown next to the buttons: (text, is_error).
    pub message: Option<(String, bool)>,
    /// The report row of the side just kept, for the Clips table (`AppState` takes it).
    pub kept: Option<crate::pipeline::report::ClipReport>,
}

impl Default for AbView {
    fn default() -> Self {
        Self {
            open: false,
            key: None,
            root: None,
            bone_names: Vec::new(),
            a: AbChoice {
                preset: Preset::Default,
                custom_cm: crate::anim::DEFAULT_ERROR_THRESHOLD_CM,
            },
            b: AbChoice {
                preset: Preset::Crowd,
                custom_cm: 0.05,
            },
            job: None,
            result: None,
            message: None,
            kept: None,
        }
    }
}

impl AbView {
    /// Opens the window for a clip: A is the Clips tab's settings, B another preset.
    pub fn open_for(
        &mut self,
        key: RowKey,
        root: &Path,
        bone_names: Vec<String>,
        current: &SettingsState,
        compressed_with_cm: Option<f32>,
    ) {
        self.cancel();
        self.job = None;
        self.result = None;
        self.message = None;
        self.a = AbChoice {
            preset: current.preset,
            custom_cm: current.error_threshold_cm,
        };
        // A clip compressed with another threshold than the tab's (a kept side, a folder's
        // clipforge.toml): A starts at what it has now, the preset of that threshold or Custom.
        if let Some(t) = compressed_with_cm.filter(|&t| t != current.error_threshold_cm) {
            self.a = AbChoice {
                preset: Preset::ALL
                    .into_iter()
                    .find(|p| p.values().is_some_and(|(v, _)| v == t))
                    .unwrap_or(Preset::Custom),
                custom_cm: t,
            };
        }
        self.b.preset = if self.a.preset == Preset::Crowd {
            Preset::Default
        } else {
            Preset::Crowd
        };
        self.key = Some(key);
        self.root = Some(root.to_path_buf());
        self.bone_names = bone_names;
        self.open = true;
    }

    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    pub fn cancel(&self) {
        if let Some(j) = &self.job {
            j.cancel.cancel();
        }
    }

    /// Starts the comparison on a thread (the previous result is dropped, its files with it).
    pub fn start(&mut self, ctx: &egui::Context) {
        let (Some(key), Some(root)) = (&self.key, &self.root) else {
            return;
        };
        self.result = None;
        self.message = None;
        let request = AbRequest {
            root: root.clone(),
            file: key.path.clone(),
            clip: key.clip.clone(),
            a: self.a.settings(),
            b: self.b.settings(),
        };
        let progress = Arc::new(Progress::default());
        let cancel = CancelToken::default();
        let (tx, rx) = mpsc::channel();
        let (p, c, ctx) = (progress.clone(), cancel.clone(), ctx.clone());
        let spawned = std::thread::Builder::new()
            .name("clipforge-ab".into())
            .spawn(move || {
                crate::pipeline::lower_thread_priority();
                let r = run_ab(&request, &p, &c).map_err(|e| e.to_string());
                let _ = tx.send(r);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => {
                self.job = Some(AbJob {
                    progress,
                    cancel,
                    rx,
                })
            }
            Err(e) => self.result = Some(Err(format!("could not start the comparison: {e}"))),
        }
    }

    /// Takes a finished comparison's result.
    pub fn poll(&mut self) {
        let Some(job) = &self.job else { return };
        match job.rx.try_recv() {
            Ok(r) => {
                self.job = None;
                self.result = Some(r);
            }
            Err(TryRecvError::Disconnected) => {
                self.job = None;
                self.result = Some(Err("the comparison stopped unexpectedly".into()));
            }
            Err(TryRecvError::Empty) => {}
        }
    }

    /// Writes the chosen side into `output_dir`.
    pub fn keep(&mut self, side: Side, output_dir: &str) {
        let Some(Ok(run)) = &self.result else { return };
        let out = output_dir.trim();
        if out.is_empty() {
            self.message = Some(("Set an output folder first".into(), true));
            return;
        }
        self.message = Some(match run.keep(side, Path::new(out)) {
            Ok(k) => {
                let text = format!(
                    "Kept {} ({}): wrote {}; recorded in {} for the next batches",
                    side.letter(),
                    run.side(side).label,
                    k.output.display(),
                    k.settings_file.display()
                );
                self.kept = Some(k.report);
                (text, false)
            }
            Err(e) => (format!("Could not keep {}: {e}", side.letter()), true),
        });
    }

    /// Draws the window (when open) and polls the job.
    pub fn window(&mut self, ctx: &egui::Context, output_dir: &str) {
        self.poll();
        if !self.open {
            return;
        }
        if self.busy() {
            ctx.request_repaint_after(std::time::Duration::from_millis(50));
        }
        let mut open = true;
        let title = match &self.key {
            Some(k) => format!("Compare presets: {}", k.clip),
            None => "Compare presets".into(),
        };
        egui::Window::new(title)
            .open(&mut open)
            .default_size([820.0, 660.0])
            .min_height(420.0)
            .resizable(true)
            .show(ctx, |ui| self.ui(ui, output_dir));
        if !open {
            self.cancel();
            self.open = false;
        }
    }

    /// The window's content.
    pub fn ui(&mut self, ui: &mut egui::Ui, output_dir: &str) {
        let running = self.busy();
        ui.add_enabled_ui(!running, |ui| {
            egui::Grid::new("cf_ab_choices")
                .num_columns(2)
                .show(ui, |ui| {
                    choice_ui(ui, "A:", &mut self.a);
                    ui.end_row();
                    choice_ui(ui, "B:", &mut self.b);
                    ui.end_row();
                });
        });
        ui.horizontal(|ui| {
            if ui
                .add_enabled(!running, egui::Button::new("Run comparison"))
                .on_hover_text("Compress this clip with A and B into a temporary folder")
                .clicked()
            {
                self.start(ui.ctx());
            }
            if let Some(job) = &self.job {
                if ui.button("Cancel").clicked() {
                    job.cancel.cancel();
                }
                let done = job.progress.done_clips.load(Ordering::Relaxed);
                let text = if job.cancel.is_cancelled() {
                    "Cancelling…".to_string()
                } else if done == 0 {
                    "Compressing A…".to_string()
                } else {
                    "Compressing B…".to_string()
                };
                ui.add(
                    egui::ProgressBar::new(done as f32 / 2.0)
                        .desired_width(260.0)
                        .text(text),
                );
            }
        });
        ui.label("Nothing in the output folder changes until you keep one side.");
        let run = match &self.result {
            None => return,
            Some(Err(e)) => {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!("Comparison failed: {e}"),
                );
                return;
            }
            Some(Ok(run)) => run,
        };
        ui.separator();
        summary_grid(ui, run);
        let mut keep = None;
        ui.horizontal(|ui| {
            for side in [Side::A, Side::B] {
                let s = run.side(side);
                let hint = match run.destination(side, Path::new(output_dir.trim())) {
                    Some(p) => format!("Write {} to {}", s.label, p.display()),
                    None => "This side failed: nothing to keep".into(),
                };
                if ui
                    .add_enabled(s.ok(), egui::Button::new(format!("Keep {}", side.letter())))
                    .on_hover_text(hint)
                    .clicked()
                {
                    keep = Some(side);
                }
            }
            if let Some((m, err)) = &self.message {
                let c = if *err {
                    ui.visuals().error_fg_color
                } else {
                    ui.visuals().text_color()
                };
                ui.colored_label(c, m);
            }
        });
        if let Some(side) = keep {
            self.keep(side, output_dir);
            return;
        }
        let Some(Ok(run)) = &self.result else { return };
        error_plot(ui, run);
        per_bone_table(ui, run, &self.bone_names);
    }
}

fn choice_ui(ui: &mut egui::Ui, name: &str, c: &mut AbChoice) {
    let l = ui.label(name);
    ui.horizontal(|ui| {
        egui::ComboBox::from_id_salt(("cf_ab_preset", name))
            .selected_text(c.preset.label())
            .show_ui(ui, |ui| {
                for p in Preset::ALL {
                    ui.selectable_value(&mut c.preset, p, p.label());
                }
            })
            .response
            .labelled_by(l.id);
        if c.preset == Preset::Custom {
            let t = ui.label("threshold (cm)");
            ui.add(
                egui::DragValue::new(&mut c.custom_cm)
                    .range(0.0001..=10.0)
                    .speed(0.001),
            )
            .labelled_by(t.id);
        }
    });
}

fn summary_grid(ui: &mut egui::Ui, run: &AbRun) {
    egui::Grid::new("cf_ab_summary")
        .num_columns(6)
        .striped(true)
        .spacing([16.0, 4.0])
        .show(ui, |ui| {
            for h in [
                "",
                "Settings",
                "Compressed",
                "Ratio",
                "Max error (cm)",
                "Time (ms)",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for side in [Side::A, Side::B] {
                let s = run.side(side);
                let r = &s.report;
                ui.strong(side.letter());
                ui.label(&s.label);
                if let Some(e) = &r.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                    ui.end_row();
                    continue;
                }
                ui.label(fmt_bytes(r.compressed_bytes));
                ui.label(format!("{:.1}×", r.ratio));
                ui.label(format!("{:.4}", r.max_error_cm));
                ui.label(format!("{:.1}", r.compress_ms));
                ui.end_row();
            }
        });
    // What else applied to both sides (the folder's per-bone tables, its units): a comparison
    // of presets is not a comparison of thresholds alone when they do.
    for side in [Side::A, Side::B] {
        let s = run.side(side);
        if let Some(cs) = &s.report.settings {
            ui.add(
                egui::Label::new(format!(
                    "{}: {}",
                    side.letter(),
                    cs.describe("Clips tab settings", "this comparison")
                ))
                .wrap(),
            );
        }
    }
    let bones =
        |s: &crate::pipeline::ab::AbSide| s.report.settings.as_ref().map_or(0, |c| c.bones.len());
    if bones(&run.a) > 0 && bones(&run.b) > 0 {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            "Per-bone settings apply to both sides: the bones they name keep their own \
             thresholds whatever the preset",
        );
    }
    if run.a.ok() && run.b.ok() {
        let (a, b) = (&run.a.report, &run.b.report);
        let size = b.compressed_bytes as f64 / a.compressed_bytes.max(1) as f64;
        ui.label(format!(
            "B is {:.0}% of A's size ({} vs {} raw {}); its max error is {:.2}× A's",
            size * 100.0,
            fmt_bytes(b.compressed_bytes),
            fmt_bytes(a.compressed_bytes),
            fmt_bytes(a.raw_bytes),
            b.max_error_cm / a.max_error_cm.max(1e-12)
        ));
    }
}

const COLOR_A: egui::Color32 = egui::Color32::from_rgb(90, 170, 255);
const COLOR_B: egui::Color32 = egui::Color32::from_rgb(255, 160, 60);

fn error_plot(ui: &mut egui::Ui, run: &AbRun) {
    ui.add_space(4.0);
    ui.strong("Error over time (max over bones, cm)");
    Plot::new("cf_ab_error_plot")
        .height(180.0)
        .legend(Legend::default())
        .x_axis_label("time (s)")
        .y_axis_label("error (cm)")
        .allow_scroll(false)
        .show(ui, |p| {
            for (side, color) in [(Side::A, COLOR_A), (Side::B, COLOR_B)] {
                let s = run.side(side);
                let r = &s.report;
                let rate = if r.sample_rate > 0.0 {
                    r.sample_rate as f64
                } else {
                    30.0
                };
                let pts: PlotPoints = r
                    .per_sample_max_error_cm
                    .iter()
                    .enumerate()
                    .map(|(i, &e)| [i as f64 / rate, e])
                    .collect();
                let name = format!("{} · {}", side.letter(), s.label);
                p.line(Line::new(name.clone(), pts).color(color));
                p.hline(
                    HLine::new(
                        format!(
                            "{} threshold {} cm",
                            side.letter(),
                            s.settings.error_threshold
                        ),
                        s.settings.error_threshold as f64,
                    )
                    .color(color.gamma_multiply(0.6))
                    .style(egui_plot::LineStyle::dashed_loose()),
                );
            }
        });
}

fn per_bone_table(ui: &mut egui::Ui, run: &AbRun, names: &[String]) {
    let (a, b) = (
        &run.a.report.per_bone_max_error_cm,
        &run.b.report.per_bone_max_error_cm,
    );
    let n = a.len().max(b.len());
    if n == 0 {
        return;
    }
    ui.add_space(4.0);
    ui.strong(format!(
        "Max error per bone (cm), {} bones",
        fmt_count(n as u64)
    ));
    egui::ScrollArea::vertical()
        .id_salt("cf_ab_bones")
        .min_scrolled_height(200.0)
        .max_height(ui.available_height().max(200.0))
        .show(ui, |ui| {
            egui::Grid::new("cf_ab_bones_grid")
                .num_columns(3)
                .striped(true)
                .spacing([24.0, 2.0])
                .show(ui, |ui| {
                    ui.strong("Bone");
                    ui.strong("A");
                    ui.strong("B");
                    ui.end_row();
                    let cell = |v: Option<&f64>| v.map_or("—".to_string(), |e| format!("{e:.4}"));
                    for i in 0..n {
                        let name = names.get(i).cloned().unwrap_or_else(|| format!("bone {i}"));
                        ui.label(name);
                        ui.label(cell(a.get(i)));
                        ui.label(cell(b.get(i)));
                        ui.end_row();
                    }
                });
        });
}
