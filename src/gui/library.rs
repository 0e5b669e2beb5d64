//! The library view: folder bar (typed paths + folder dialog + recent folders), the action row
//! with progress, the virtualised clip table, the summary footer, and CSV / JSON export.

use super::jobs::CompressScope;
use super::model::{RowStatus, SortColumn};
use super::{AppState, DialogTarget, fmt_bytes, fmt_count};
use crate::pipeline::report::{BatchReport, ClipReport, compute_totals};
use eframe::egui;
use egui_extras::{Column, TableBuilder};
use std::path::{Path, PathBuf};

const COLUMNS: [(SortColumn, &str); 11] = [
    (SortColumn::Name, "Clip"),
    (SortColumn::Format, "Format"),
    (SortColumn::Bones, "Bones"),
    (SortColumn::Duration, "Duration"),
    (SortColumn::Samples, "Samples"),
    (SortColumn::RawSize, "Raw size"),
    (SortColumn::Compressed, "Compressed"),
    (SortColumn::Ratio, "Ratio"),
    (SortColumn::MaxError, "Max error (cm)"),
    (SortColumn::Time, "Time (ms)"),
    (SortColumn::Status, "Status"),
];

impl AppState {
    pub(super) fn folder_bar(&mut self, ui: &mut egui::Ui) {
        ui.add_space(4.0);
        egui::Grid::new("cf_folder_grid")
            .num_columns(2)
            .spacing([8.0, 4.0])
            .show(ui, |ui| {
                // Input folder
                let l = ui.label("Input folder:");
                ui.horizontal(|ui| {
                    let w = (ui.available_width() - 330.0).max(160.0);
                    let r = ui
                        .add(
                            egui::TextEdit::singleline(&mut self.persisted.input_dir)
                                .desired_width(w),
                        )
                        .labelled_by(l.id);
                    if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                        self.start_scan();
                    }
                    if ui
                        .button("Browse…")
                        .on_hover_text("Folder dialog (Ctrl+O)")
                        .clicked()
                    {
                        self.open_folder_dialog(DialogTarget::Input);
                    }
                    let picked = recent_menu(
                        ui,
                        "Recent inputs",
                        &self.persisted.recent_inputs.clone(),
                        &mut self.persisted.input_dir,
                    );
                    // A folder chosen from Recent is opened like a typed one (scanned).
                    if ui.button("Scan").clicked() || picked {
                        self.start_scan();
                    }
                    let dir = self.persisted.input_dir.trim().to_string();
                    let mut watching = self.watch.is_watching(&dir);
                    if ui
                        .checkbox(&mut watching, "Watch")
                        .on_hover_text(
                            "Compress every clip dropped into this folder into the output \
                             folder below, with the settings of now: a pipeline of the Watch tab, \
                             which keeps them when this tab changes",
                        )
                        .changed()
                    {
                        self.set_watched(&dir, watching);
                    }
                });
                ui.end_row();
                // Output folder
                let l = ui.label("Output folder:");
                ui.horizontal(|ui| {
                    let w = (ui.available_width() - 330.0).max(160.0);
                    ui.add(
                        egui::TextEdit::singleline(&mut self.persisted.output_dir).desired_width(w),
                    )
                    .labelled_by(l.id);
                    if ui.button("Browse… ").clicked() {
                        self.open_folder_dialog(DialogTarget::Output);
                    }
                    if recent_menu(
                        ui,
                        "Recent outputs",
                        &self.persisted.recent_outputs.clone(),
                        &mut self.persisted.output_dir,
                    ) {
                        self.export_message = None;
                    }
                });
                ui.end_row();
            });
        if let Some((msg, is_error)) = &self.message {
            let c = if *is_error {
                ui.visuals().error_fg_color
            } else {
                ui.visuals().weak_text_color()
            };
            ui.colored_label(c, msg);
        } else if !self.persisted.input_dir.trim().is_empty()
            && !Path::new(self.persisted.input_dir.trim()).is_dir()
        {
            ui.colored_label(ui.visuals().error_fg_color, "Input folder not found");
        }
        ui.add_space(2.0);
        self.action_row(ui);
        ui.add_space(4.0);
    }

    fn action_row(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let running = self.batch.is_some();
            if ui
                .add_enabled(
                    !running,
                    egui::Button::new(egui::RichText::new("Compress all").strong()),
                )
                .on_hover_text("Ctrl+Enter")
                .clicked()
            {
                self.compress(CompressScope::All);
            }
            let sel = self.selection.len();
            if ui
                .add_enabled(
                    !running && sel > 0,
                    egui::Button::new(format!("Compress selected ({sel})")),
                )
                .clicked()
            {
                let paths: Vec<PathBuf> = self.selection.iter().map(|k| k.path.clone()).collect();
                self.compress(CompressScope::Files(paths));
            }
            if ui
                .add_enabled(running, egui::Button::new("Cancel"))
                .on_hover_text("Esc")
                .clicked()
            {
                self.cancel();
            }
            if ui
                .button("Open output folder")
                .on_hover_text("Show the output folder in the file manager")
                .clicked()
            {
                self.message = Some(super::open_folder::open_folder_message(
                    &self.persisted.output_dir,
                ));
            }
            ui.separator();
            if let Some(job) = &self.batch {
                let c = job.counts();
                let eta = c.eta().map_or("—".to_string(), |d| {
                    format!("{:.0} s", d.as_secs_f64().ceil())
                });
                let text = if job.cancel.is_cancelled() {
                    "Cancelling…".to_string()
                } else {
                    format!(
                        "{} / {} clips · {:.0} KB/s · ETA {eta}{}",
                        fmt_count(c.done),
                        fmt_count(c.total),
                        c.kb_per_s(),
                        if c.failed > 0 {
                            format!(" · {} failed", c.failed)
                        } else {
                            String::new()
                        }
                    )
                };
                ui.add(
                    egui::ProgressBar::new(c.fraction())
                        .desired_width(ui.available_width().min(520.0))
                        .text(text),
                );
            } else if self.scan_job.is_some() {
                ui.spinner();
                ui.label("Scanning…");
            } else if let Some(j) = &self.inspect_job {
                ui.spinner();
                ui.label(format!(
                    "Reading clips {}/{}",
                    fmt_count(j.done as u64),
                    fmt_count(j.total as u64)
                ));
            } else if let Some(last) = &self.last_batch {
                let t = &last.report.totals;
                ui.label(format!(
                    "Last batch: {} clips ({} skipped, {} failed) in {:.2} s · {:.0} KB/s{}",
                    fmt_count(t.clips as u64),
                    t.skipped,
                    t.failed,
                    t.wall_ms / 1000.0,
                    t.throughput_kb_s,
                    if last.cancelled { " (cancelled)" } else { "" }
                ));
            }
        });
    }

    pub(super) fn table_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            super::filter::filter_field(ui, &mut self.filter, "name, path, format, status");
            let lib = &self.library;
            ui.label(format!(
                "{} of {} clips · {} files",
                fmt_count(lib.view.len() as u64),
                fmt_count(lib.rows.len() as u64),
                fmt_count(lib.files.len() as u64)
            ));
            if let Some(t) = lib.scan_time {
                ui.weak(format!("scanned in {:.0} ms", t.as_secs_f64() * 1000.0));
            }
            if !self.selection.is_empty() && ui.small_button("Clear selection").clicked() {
                self.selection.clear();
            }
        });
        if self.library.rows.is_empty() {
            ui.add_space(20.0);
            ui.vertical_centered(|ui| {
                if self.scan_job.is_some() {
                    ui.label("Scanning…");
                } else {
                    ui.label("No clips yet: type an input folder above and press Scan or Compress all.");
                    ui.weak("Supported: .acl.sjson, .bvh, .gltf, .glb, .fbx (each animation in a file is one clip)");
                }
            });
            return;
        }

        let threshold = self.persisted.settings.error_threshold_cm as f64;
        let mut clicked: Option<(usize, egui::Modifiers)> = None;
        let mut sort = self.persisted.sort;
        let text_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        let selected_detail = self.detail.selected.clone();
        let lib = &self.library;
        let selection = &self.selection;
        TableBuilder::new(ui)
            .id_salt("cf_clip_table")
            .striped(true)
            .resizable(true)
            .sense(egui::Sense::click())
            .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
            .column(Column::initial(180.0).at_least(80.0).clip(true))
            .column(Column::initial(70.0).at_least(50.0))
            .column(Column::initial(50.0).at_least(40.0))
            .column(Column::initial(66.0).at_least(50.0))
            .column(Column::initial(62.0).at_least(50.0))
            .column(Column::initial(78.0).at_least(60.0))
            .column(Column::initial(84.0).at_least(60.0))
            .column(Column::initial(56.0).at_least(44.0))
            .column(Column::initial(104.0).at_least(60.0))
            .column(Column::initial(70.0).at_least(50.0))
            .column(Column::remainder().at_least(120.0).clip(true))
            .min_scrolled_height(0.0)
            .header(text_h + 4.0, |mut header| {
                for (col, title) in COLUMNS {
                    header.col(|ui| {
                        let r = ui.add(
                            egui::Button::new(egui::RichText::new(title).strong()).frame(false),
                        );
                        if sort.column == col {
                            // A small triangle (the default fonts have no arrow glyphs).
                            let c = egui::pos2(r.rect.right() + 7.0, r.rect.center().y);
                            let (a, b) = if sort.ascending {
                                (-4.0, 3.0)
                            } else {
                                (4.0, -3.0)
                            };
                            let color = ui.visuals().strong_text_color();
                            ui.painter().add(egui::Shape::convex_polygon(
                                vec![
                                    egui::pos2(c.x, c.y + a),
                                    egui::pos2(c.x + 4.0, c.y + b),
                                    egui::pos2(c.x - 4.0, c.y + b),
                                ],
                                color,
                                egui::Stroke::NONE,
                            ));
                        }
                        if r.on_hover_text("Sort by this column").clicked() {
                            if sort.column == col {
                                sort.ascending = !sort.ascending;
                            } else {
                                sort.column = col;
                                sort.ascending = !matches!(
                                    col,
                                    SortColumn::Ratio
                                        | SortColumn::MaxError
                                        | SortColumn::Time
                                        | SortColumn::RawSize
                                );
                            }
                        }
                    });
                }
            })
            .body(|body| {
                body.rows(text_h, lib.view.len(), |mut row| {
                    let ri = lib.view[row.index()];
                    let r = &lib.rows[ri];
                    let is_sel =
                        selection.contains(&r.key) || selected_detail.as_ref() == Some(&r.key);
                    row.set_selected(is_sel);
                    let unknown = if r.pending { "…" } else { "—" };
                    row.col(|ui| {
                        let resp = ui.add(egui::Label::new(&r.label).selectable(false).truncate());
                        resp.on_hover_text(r.key.path.display().to_string());
                    });
                    row.col(|ui| {
                        ui.label(r.format);
                    });
                    row.col(|ui| {
                        ui.label(r.bones.map_or(unknown.into(), |b| b.to_string()));
                    });
                    row.col(|ui| {
                        ui.label(r.duration_s.map_or(unknown.into(), |d| format!("{d:.2} s")));
                    });
                    row.col(|ui| {
                        ui.label(r.samples.map_or(unknown.into(), |s| fmt_count(s as u64)));
                    });
                    row.col(|ui| {
                        ui.label(r.raw_bytes.map_or(unknown.into(), fmt_bytes));
                    });
                    let rep = r.good_report();
                    row.col(|ui| {
                        ui.label(rep.map_or(String::new(), |p| fmt_bytes(p.compressed_bytes)));
                    });
                    row.col(|ui| {
                        ui.label(rep.map_or(String::new(), |p| format!("{:.1}×", p.ratio)));
                    });
                    row.col(|ui| {
                        if let Some(p) = rep {
                            let txt = egui::RichText::new(format!("{:.4}", p.max_error_cm));
                            let txt = if p.max_error_cm > threshold * 1.0001 {
                                txt.color(ui.visuals().error_fg_color)
                            } else {
                                txt
                            };
                            ui.label(txt);
                        }
                    });
                    row.col(|ui| {
                        ui.label(
                            rep.filter(|p| !p.skipped)
                                .map_or(String::new(), |p| format!("{:.2}", p.compress_ms)),
                        );
                    });
                    row.col(|ui| {
                        status_label(ui, &r.status);
                    });
                    if row.response().clicked() {
                        clicked = Some((ri, row.response().ctx.input(|i| i.modifiers)));
                    }
                });
            });
        self.persisted.sort = sort;
        if let Some((ri, mods)) = clicked {
            let key = self.library.rows[ri].key.clone();
            self.select_row(key, mods.command || mods.shift);
        }
    }

    /// Selects a row (opens its detail); with `add`, toggles it in the multi-selection.
    pub fn select_row(&mut self, key: super::RowKey, add: bool) {
        if add {
            if !self.selection.remove(&key) {
                self.selection.insert(key.clone());
            }
        } else {
            self.selection.clear();
            self.selection.insert(key.clone());
        }
        let row = self.library.row(&key).cloned();
        self.detail.select(key, row.as_ref());
    }

    pub(super) fn footer(&mut self, ui: &mut egui::Ui) {
        ui.add_space(2.0);
        ui.horizontal_wrapped(|ui| {
            let s = &self.library.summary;
            ui.label(egui::RichText::new("Total").strong());
            ui.label(format!(
                "{} compressed of {} · raw {}, compressed {} · ratio {:.2}×",
                fmt_count(s.compressed as u64),
                fmt_count(s.clips as u64),
                fmt_bytes(s.raw_bytes),
                fmt_bytes(s.compressed_bytes),
                s.ratio()
            ));
            ui.separator();
            let worst = format!(
                "worst max error {:.4} cm{}",
                s.worst_error_cm,
                s.worst_clip
                    .as_ref()
                    .map_or(String::new(), |c| format!(" ({c})"))
            );
            if s.worst_error_cm > self.persisted.settings.error_threshold_cm as f64 * 1.0001 {
                ui.colored_label(ui.visuals().error_fg_color, worst);
            } else {
                ui.label(worst);
            }
            if s.failed > 0 {
                ui.separator();
                ui.colored_label(ui.visuals().error_fg_color, format!("{} failed", s.failed));
            }
            if s.over_threshold > 0 {
                ui.separator();
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    format!("{} over threshold", s.over_threshold),
                );
            }
        });
        ui.horizontal(|ui| {
            let s = &self.library.summary;
            let kbs = self.batch.as_ref().map(|b| b.counts().kb_per_s()).or(self
                .last_batch
                .as_ref()
                .map(|b| b.report.totals.throughput_kb_s));
            ui.label(match kbs {
                Some(k) if k > 0.0 => format!("Throughput {k:.0} KB/s"),
                _ => "Throughput —".to_string(),
            })
            .on_hover_text(
                "Raw KB compressed per second of wall time (last batch; skipped clips excluded)",
            );
            ui.separator();
            if s.compressed > s.skipped {
                ui.label(format!(
                    "compression time per clip: p50 {:.2} · p85 {:.2} · p99 {:.2} ms",
                    s.p50_ms, s.p85_ms, s.p99_ms
                ));
            } else {
                // Skipped clips were not compressed this time: no times to show.
                ui.label("compression time per clip: —");
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let fs = &self.frame_stats;
                let mut ft = format!(
                    "UI {:.1} ms/frame (max {:.1})",
                    fs.average_ms(),
                    fs.max_ms()
                );
                if let Some(cpu) = self.eframe_cpu_ms {
                    ft.push_str(&format!(" · CPU {cpu:.1} ms"));
                }
                ui.weak(ft).on_hover_text(format!(
                    "Time spent building the UI each frame (CPU: eframe's whole frame). \
                     During the last batch: {} frames, mean {:.2} ms, worst {:.2} ms",
                    fs.frames_during_batch,
                    if fs.frames_during_batch > 0 {
                        fs.sum_during_batch_ms / fs.frames_during_batch as f64
                    } else {
                        0.0
                    },
                    fs.worst_during_batch_ms
                ));
            });
        });
        ui.horizontal(|ui| {
            if self.persisted.export_path.trim().is_empty() {
                self.persisted.export_path = super::DEFAULT_EXPORT_NAME.into();
            }
            let l = ui.label("Export as:");
            ui.add(
                egui::TextEdit::singleline(&mut self.persisted.export_path).desired_width(200.0),
            )
            .labelled_by(l.id)
            .on_hover_text(format!(
                "File name without extension (.csv / .json is added), in the output folder \
                 ({}); an absolute path is used as it is",
                self.persisted.output_dir.trim()
            ));
            let has = self.library.summary.compressed > 0 || self.library.summary.failed > 0;
            if ui
                .add_enabled(has, egui::Button::new("Export CSV"))
                .clicked()
            {
                self.export_message = Some(self.export(false));
            }
            if ui
                .add_enabled(has, egui::Button::new("Export JSON"))
                .clicked()
            {
                self.export_message = Some(self.export(true));
            }
            // Where it wrote, next to the buttons that wrote it.
            if let Some((msg, is_error)) = &self.export_message {
                let c = if *is_error {
                    ui.visuals().error_fg_color
                } else {
                    ui.visuals().text_color()
                };
                ui.add(egui::Label::new(egui::RichText::new(msg).color(c)).truncate())
                    .on_hover_text(msg);
            }
        });
        ui.add_space(2.0);
    }

    /// The table's reports as a batch report (what the CLI writes), in table order.
    pub fn results_report(&self) -> BatchReport {
        let clips: Vec<ClipReport> = self
            .library
            .view
            .iter()
            .filter_map(|&i| self.library.rows[i].report().cloned())
            .collect();
        let wall_ms = self
            .last_batch
            .as_ref()
            .map_or(0.0, |b| b.report.totals.wall_ms);
        let totals = compute_totals(&clips, wall_ms);
        BatchReport {
            settings: self.compression_settings(),
            clips,
            totals,
        }
    }

    /// Where an export goes: the export name in the current output folder (an absolute path
    /// as it is), with the format's extension.
    pub fn export_file(&self, json: bool) -> PathBuf {
        let name = match self.persisted.export_path.trim() {
            "" => super::DEFAULT_EXPORT_NAME,
            n => n,
        };
        let base = Path::new(self.persisted.output_dir.trim()).join(name);
        base.with_extension(if json { "json" } else { "csv" })
    }

    /// Writes the results as CSV or JSON (the pipeline's report formats); returns the message to show.
    pub fn export(&self, json: bool) -> (String, bool) {
        let path = self.export_file(json);
        let report = self.results_report();
        let res = (|| {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            if json {
                report.write_json(&path)
            } else {
                report.write_csv(&path)
            }
        })();
        match res {
            Ok(()) => (
                format!(
                    "Exported {} clips to {}",
                    report.clips.len(),
                    path.display()
                ),
                false,
            ),
            Err(e) => (format!("Export to {} failed: {e}", path.display()), true),
        }
    }

    /// The folder bar's Watch box: starts the pipeline of this input folder (a new one gets the
    /// output folder and settings shown now, copied) or stops it (it stays in the Watch tab).
    pub fn set_watched(&mut self, dir: &str, on: bool) {
        if dir.is_empty() {
            return;
        }
        if on {
            if !Path::new(dir).is_dir() {
                self.message = Some((format!("Cannot watch {dir}: not a folder"), true));
                return;
            }
            let i = match self.watch.index_of_input(dir) {
                Some(i) => i,
                None => {
                    if self.persisted.output_dir.trim().is_empty() {
                        self.message = Some(("Choose an output folder first".into(), true));
                        return;
                    }
                    match self.watch.add(self.pipeline_from_clips_tab(dir)) {
                        Ok(i) => i,
                        Err(e) => {
                            self.message = Some((format!("Cannot watch {dir}: {e}"), true));
                            return;
                        }
                    }
                }
            };
            self.watch.start(i);
            if let super::PipelineStatus::Error(e) = &self.watch.pipelines[i].status {
                self.message = Some((format!("Cannot watch {dir}: {e}"), true));
            }
        } else if let Some(i) = self.watch.index_of_input(dir) {
            self.watch.stop(i);
        }
    }
}

fn status_label(ui: &mut egui::Ui, s: &RowStatus) {
    let v = ui.visuals();
    let color = match s {
        RowStatus::Failed(_) | RowStatus::Unreadable(_) => v.error_fg_color,
        RowStatus::OverThreshold | RowStatus::Stale => v.warn_fg_color,
        RowStatus::Ok | RowStatus::Skipped => egui::Color32::from_rgb(90, 170, 90),
        _ => v.text_color(),
    };
    let text = s.text();
    let r = ui.add(
        egui::Label::new(egui::RichText::new(&text).color(color))
            .selectable(false)
            .truncate(),
    );
    if matches!(s, RowStatus::Failed(_) | RowStatus::Unreadable(_)) {
        r.on_hover_text(text);
    }
}

/// A Recent menu; true when a folder was picked (it is in `target`).
fn recent_menu(ui: &mut egui::Ui, title: &str, recent: &[String], target: &mut String) -> bool {
    let mut picked = false;
    ui.add_enabled_ui(!recent.is_empty(), |ui| {
        ui.menu_button("Recent", |ui| {
            ui.label(egui::RichText::new(title).weak());
            for r in recent {
                if ui.button(r).clicked() {
                    *target = r.clone();
                    picked = true;
                    ui.close();
                }
            }
        });
    });
    picked
}
