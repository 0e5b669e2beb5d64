//! The Clips view: folder bar (typed paths + folder dialog + recent folders), the action row
//! with progress, the virtualised clip table, the summary footer and the export row. It owns
//! its filter, selection and messages; everything it cannot do itself (scan, compress, open a
//! clip, export, watch) it returns as a [`Command`].

use super::command::{Command, CompressScope, DialogTarget};
use super::jobs::ClipJobs;
use super::model::{Library, Row, RowKey, RowStatus, SortColumn, SortState};
use super::persisted::{DEFAULT_EXPORT_NAME, Persisted};
use super::pipelines::PipelinesState;
use super::util::{FrameStats, fmt_bytes, fmt_count, fmt_counted, fmt_rate};
use crate::pipeline::report::ClipReport;
use eframe::egui;
use egui_extras::{Column, TableBuilder};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

const COLUMNS: [(SortColumn, &str); 12] = [
    (SortColumn::Name, "Clip"),
    (SortColumn::Format, "Format"),
    (SortColumn::Bones, "Bones"),
    (SortColumn::Duration, "Duration"),
    (SortColumn::Samples, "Samples"),
    (SortColumn::RawSize, "Raw size"),
    (SortColumn::Compressed, "Compressed"),
    (SortColumn::Ratio, "Ratio"),
    (SortColumn::MaxError, "Max error (cm)"),
    (SortColumn::Threshold, "Threshold"),
    (SortColumn::Time, "Time (ms)"),
    (SortColumn::Status, "Status"),
];

/// The Clips view's own state.
#[derive(Default)]
pub struct ClipsView {
    pub filter: String,
    pub selection: HashSet<RowKey>,
    /// One-line messages shown under the folder bar (errors).
    pub message: Option<(String, bool)>,
    /// The last export's message, shown next to the export buttons.
    pub export_message: Option<(String, bool)>,
}

/// What the Clips view reads (and, for the persisted folders, sort and export name, edits).
pub struct ClipsCtx<'a> {
    pub persisted: &'a mut Persisted,
    pub library: &'a Library,
    pub jobs: &'a ClipJobs,
    pub watch: &'a PipelinesState,
    /// The clip whose detail is open (highlighted in the table).
    pub open_clip: Option<&'a RowKey>,
    pub frame_stats: &'a FrameStats,
    pub eframe_cpu_ms: Option<f32>,
}

impl ClipsCtx<'_> {
    /// The last batch when it ran on the folders shown (none after opening another folder).
    fn last_batch(&self) -> Option<&super::jobs::BatchOutcome> {
        self.jobs.last_batch_for(
            self.library.root.as_deref(),
            Path::new(self.persisted.output_dir.trim()),
        )
    }
}

impl ClipsView {
    /// The folder bar and the action row (the tab's top panel).
    pub fn top_ui(&mut self, ui: &mut egui::Ui, cx: &mut ClipsCtx<'_>) -> Vec<Command> {
        let mut out = Vec::new();
        self.folder_bar(ui, cx, &mut out);
        out
    }

    /// The totals, throughput and export row (the tab's bottom panel).
    pub fn footer_ui(&mut self, ui: &mut egui::Ui, cx: &mut ClipsCtx<'_>) -> Vec<Command> {
        let mut out = Vec::new();
        self.footer(ui, cx, &mut out);
        out
    }

    /// The filter and the table (the tab's central panel).
    pub fn table_ui(&mut self, ui: &mut egui::Ui, cx: &mut ClipsCtx<'_>) -> Vec<Command> {
        let mut out = Vec::new();
        self.table(ui, cx, &mut out);
        out
    }

    fn folder_bar(&mut self, ui: &mut egui::Ui, cx: &mut ClipsCtx<'_>, out: &mut Vec<Command>) {
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
                            egui::TextEdit::singleline(&mut cx.persisted.input_dir)
                                .desired_width(w),
                        )
                        .labelled_by(l.id);
                    if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                        out.push(Command::Scan);
                    }
                    if ui
                        .button("Browse…")
                        .on_hover_text("Folder dialog (Ctrl+O)")
                        .clicked()
                    {
                        out.push(Command::BrowseFolder(DialogTarget::Input));
                    }
                    let picked = recent_menu(
                        ui,
                        "Recent inputs",
                        &cx.persisted.recent_inputs.clone(),
                        &mut cx.persisted.input_dir,
                    );
                    // A folder chosen from Recent is opened like a typed one (scanned).
                    if ui.button("Scan").clicked() || picked {
                        out.push(Command::Scan);
                    }
                    let dir = cx.persisted.input_dir.trim().to_string();
                    let mut watching = cx.watch.is_watching(&dir);
                    if ui
                        .checkbox(&mut watching, "Watch")
                        .on_hover_text(
                            "Compress every clip dropped into this folder into the output \
                             folder below, with the settings of now: a pipeline of the Watch tab, \
                             which keeps them when this tab changes",
                        )
                        .changed()
                    {
                        out.push(Command::SetWatched { dir, on: watching });
                    }
                });
                ui.end_row();
                // Output folder
                let l = ui.label("Output folder:");
                ui.horizontal(|ui| {
                    let w = (ui.available_width() - 330.0).max(160.0);
                    ui.add(
                        egui::TextEdit::singleline(&mut cx.persisted.output_dir).desired_width(w),
                    )
                    .labelled_by(l.id);
                    if ui.button("Browse… ").clicked() {
                        out.push(Command::BrowseFolder(DialogTarget::Output));
                    }
                    if recent_menu(
                        ui,
                        "Recent outputs",
                        &cx.persisted.recent_outputs.clone(),
                        &mut cx.persisted.output_dir,
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
        } else if !cx.persisted.input_dir.trim().is_empty()
            && !Path::new(cx.persisted.input_dir.trim()).is_dir()
        {
            ui.colored_label(ui.visuals().error_fg_color, "Input folder not found");
        }
        ui.add_space(2.0);
        self.action_row(ui, cx, out);
        ui.add_space(4.0);
    }

    fn action_row(&mut self, ui: &mut egui::Ui, cx: &ClipsCtx<'_>, out: &mut Vec<Command>) {
        ui.horizontal(|ui| {
            let running = cx.jobs.batch.is_some();
            if ui
                .add_enabled(
                    !running,
                    egui::Button::new(egui::RichText::new("Compress all").strong()),
                )
                .on_hover_text("Ctrl+Enter")
                .clicked()
            {
                out.push(Command::Compress(CompressScope::All));
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
                out.push(Command::Compress(CompressScope::Files(paths)));
            }
            if ui
                .add_enabled(running, egui::Button::new("Cancel"))
                .on_hover_text("Esc")
                .clicked()
            {
                out.push(Command::Cancel);
            }
            if ui
                .button("Open output folder")
                .on_hover_text("Show the output folder in the file manager")
                .clicked()
            {
                self.message = Some(super::open_folder::open_folder_message(
                    &cx.persisted.output_dir,
                ));
            }
            ui.separator();
            if let Some(job) = &cx.jobs.batch {
                let c = job.counts();
                let eta = c
                    .eta
                    .map_or("—".to_string(), clipforge_base::task::format_eta);
                let text = if job.cancel.is_cancelled() {
                    "Cancelling…".to_string()
                } else {
                    // Files, as the CLI counts: known before the batch starts, never growing.
                    format!(
                        "{} / {} files · {} · ETA {eta}{}",
                        fmt_count(c.done),
                        fmt_count(c.total),
                        fmt_rate(c.bytes_per_s()),
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
            } else if cx.jobs.scan_job.is_some() {
                ui.spinner();
                ui.label("Scanning…");
            } else if let Some(j) = &cx.jobs.inspect_job {
                ui.spinner();
                ui.label(format!(
                    "Reading clips {}/{}",
                    fmt_count(j.done as u64),
                    fmt_count(j.total as u64)
                ));
            } else if let Some(last) = cx.last_batch() {
                let t = &last.report.totals;
                ui.label(format!(
                    "Last batch: {} from {} ({} skipped, {} failed{}) in {} · {}{}",
                    fmt_counted(t.clips as u64, "clip"),
                    fmt_counted(last.counts.total, "file"),
                    t.skipped,
                    t.failed,
                    if t.below_precision > 0 {
                        format!(", {} below float32 precision", t.below_precision)
                    } else {
                        String::new()
                    },
                    // A batch of up-to-date clips takes a few ms: not "0.00 s".
                    super::util::fmt_seconds(t.wall_ms / 1000.0),
                    // Every clip up to date: no rate to give (the footer says "—" too).
                    if t.throughput_kb_s > 0.0 {
                        fmt_rate(t.throughput_kb_s * 1024.0)
                    } else {
                        "nothing compressed".to_string()
                    },
                    if last.cancelled { " (cancelled)" } else { "" }
                ));
            }
        });
    }

    /// The filter, the counts and the hint above the table.
    fn filter_row(&mut self, ui: &mut egui::Ui, cx: &ClipsCtx<'_>) {
        ui.horizontal(|ui| {
            super::filter::filter_field(ui, &mut self.filter, "name, path, format, status");
            let lib = &cx.library;
            ui.label(format!(
                "{} of {} · {}",
                fmt_count(lib.view.len() as u64),
                fmt_counted(lib.rows.len() as u64, "clip"),
                fmt_counted(lib.files.len() as u64, "file")
            ));
            if let Some(t) = lib.scan_time {
                // A folder of a few files lists in well under a millisecond: not "0 ms".
                let ms = t.as_secs_f64() * 1000.0;
                ui.weak(if ms < 0.5 {
                    "scanned in < 1 ms".to_string()
                } else {
                    format!("scanned in {ms:.0} ms")
                });
            }
            if !self.selection.is_empty() && ui.small_button("Clear selection").clicked() {
                self.selection.clear();
            }
            if cx.open_clip.is_none() && !cx.library.rows.is_empty() {
                ui.weak("· click a row to open its clip (Ctrl/Shift+click: select several)");
            }
        });
    }

    fn table(&mut self, ui: &mut egui::Ui, cx: &mut ClipsCtx<'_>, out: &mut Vec<Command>) {
        self.filter_row(ui, cx);
        if cx.library.rows.is_empty() {
            empty_library(ui, cx.jobs.scan_job.is_some());
            return;
        }

        let threshold = cx.persisted.settings.error_threshold_cm as f64;
        let mut clicked: Option<(usize, egui::Modifiers)> = None;
        let mut sort = cx.persisted.sort;
        let text_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        let selected_detail = cx.open_clip.cloned();
        let lib = &cx.library;
        let selection = &self.selection;
        TableBuilder::new(ui)
            .id_salt("cf_clip_table")
            .striped(true)
            .resizable(true)
            .sense(egui::Sense::click())
            .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
            // The figures' columns are as wide as their headers; the name and the status share
            // what is left, so the table fits the window at 1280 px (the status column used to
            // run past its edge, cut off with no hover) and uses a 1920 px one.
            .column(Column::remainder().at_least(100.0).clip(true))
            .column(Column::initial(64.0).at_least(50.0))
            .column(Column::initial(50.0).at_least(40.0))
            .column(Column::initial(66.0).at_least(50.0))
            .column(Column::initial(62.0).at_least(50.0))
            .column(Column::initial(72.0).at_least(60.0))
            .column(Column::initial(78.0).at_least(60.0))
            .column(Column::initial(50.0).at_least(44.0))
            .column(Column::initial(94.0).at_least(60.0))
            .column(Column::initial(66.0).at_least(50.0))
            .column(Column::initial(64.0).at_least(50.0))
            .column(Column::remainder().at_least(120.0).clip(true))
            .min_scrolled_height(0.0)
            .header(text_h + 4.0, |mut header| {
                for (col, title) in COLUMNS {
                    header.col(|ui| header_cell(ui, col, title, &mut sort));
                }
            })
            .body(|body| {
                body.rows(text_h, lib.view.len(), |mut row| {
                    let ri = lib.view[row.index()];
                    let r = &lib.rows[ri];
                    let is_sel =
                        selection.contains(&r.key) || selected_detail.as_ref() == Some(&r.key);
                    row.set_selected(is_sel);
                    clip_row(&mut row, r, threshold, is_sel);
                    if row.response().clicked() {
                        clicked = Some((ri, row.response().ctx.input(|i| i.modifiers)));
                    }
                });
            });
        cx.persisted.sort = sort;
        if let Some((ri, mods)) = clicked {
            let key = cx.library.rows[ri].key.clone();
            out.push(Command::OpenClip {
                key,
                add: mods.command || mods.shift,
            });
        }
    }

    fn footer(&mut self, ui: &mut egui::Ui, cx: &mut ClipsCtx<'_>, out: &mut Vec<Command>) {
        ui.add_space(2.0);
        ui.horizontal_wrapped(|ui| {
            let s = &cx.library.summary;
            ui.label(egui::RichText::new("Total").strong());
            // With nothing compressed there is no ratio nor worst error to give (not 0).
            if s.compressed == 0 {
                ui.label(format!("0 compressed of {}", fmt_count(s.clips as u64)));
            } else {
                ui.label(format!(
                    "{} compressed of {} · raw {}, compressed {} · ratio {:.2}×",
                    fmt_count(s.compressed as u64),
                    fmt_count(s.clips as u64),
                    fmt_bytes(s.raw_bytes),
                    fmt_bytes(s.compressed_bytes),
                    s.ratio()
                ));
            }
            ui.separator();
            let worst = match &s.worst_clip {
                // Only scalar track lists: their errors are not in cm.
                None => "worst max error —".to_string(),
                Some(c) => format!("worst max error {:.4} cm ({c})", s.worst_error_cm),
            };
            if s.worst_over {
                ui.colored_label(ui.visuals().error_fg_color, worst);
            } else {
                ui.label(worst);
            }
            problem_counts(ui, s);
        });
        ui.horizontal(|ui| {
            let s = &cx.library.summary;
            // The report keeps its KiB/s figure (`throughput_kb_s`, a stable JSON key).
            let running = cx.jobs.batch.as_ref().map(|b| b.counts().bytes_per_s());
            let last = cx
                .last_batch()
                .map(|b| b.report.totals.throughput_kb_s * 1024.0);
            let (text, hover) = throughput_text(running, last);
            ui.label(text).on_hover_text(hover);
            ui.separator();
            if s.timed > 0 {
                ui.label(format!(
                    "compression time per clip: p50 {:.2} · p85 {:.2} · p99 {:.2} ms",
                    s.p50_ms, s.p85_ms, s.p99_ms
                ));
            } else {
                // Skipped clips were not compressed this time: no times to show.
                ui.label("compression time per clip: —");
            }
            // Frame times are a developer's figure (a user trial read them as noise): shown only
            // with CLIPFORGE_FRAME_TIME set; the tests read `FrameStats` directly.
            if !super::util::show_frame_time() {
                return;
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let fs = &cx.frame_stats;
                let mut ft = format!(
                    "UI {:.1} ms/frame (max {:.1})",
                    fs.average_ms(),
                    fs.max_ms()
                );
                if let Some(cpu) = cx.eframe_cpu_ms {
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
            if cx.persisted.export_path.trim().is_empty() {
                cx.persisted.export_path = DEFAULT_EXPORT_NAME.into();
            }
            let l = ui.label("Export as:");
            ui.add(egui::TextEdit::singleline(&mut cx.persisted.export_path).desired_width(200.0))
                .labelled_by(l.id)
                .on_hover_text(format!(
                    "File name without extension (.csv / .json is added), in the output folder \
                 ({}); an absolute path is used as it is",
                    cx.persisted.output_dir.trim()
                ));
            let has = cx.library.summary.compressed > 0 || cx.library.summary.failed > 0;
            if ui
                .add_enabled(has, egui::Button::new("Export CSV"))
                .clicked()
            {
                out.push(Command::Export { json: false });
            }
            if ui
                .add_enabled(has, egui::Button::new("Export JSON"))
                .clicked()
            {
                out.push(Command::Export { json: true });
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
}

/// The table when there is nothing in it: scanning, or what to do and which files it reads.
fn empty_library(ui: &mut egui::Ui, scanning: bool) {
    ui.add_space(20.0);
    ui.vertical_centered(|ui| {
        if scanning {
            ui.label("Scanning…");
        } else {
            ui.label("No clips yet: type an input folder above and press Scan or Compress all.");
            ui.weak(format!(
                "Supported: {} (each animation in a file is one clip)",
                crate::anim::formats::clip_extension_list(", ")
            ));
        }
    });
}

/// A column's header: a button that sorts by it (again: the other way), with a triangle on
/// the sorted column.
fn header_cell(ui: &mut egui::Ui, col: SortColumn, title: &str, sort: &mut SortState) {
    let r = ui.add(egui::Button::new(egui::RichText::new(title).strong()).frame(false));
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
                SortColumn::Ratio | SortColumn::MaxError | SortColumn::Time | SortColumn::RawSize
            );
        }
    }
}

/// One clip's row of the table (`threshold`: the tab's, cm; `selected`: drawn on the selection
/// colour, where the status colours are made readable).
fn clip_row(row: &mut egui_extras::TableRow<'_, '_>, r: &Row, threshold: f64, selected: bool) {
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
    row.col(|ui| max_error_cell(ui, rep, threshold, selected));
    row.col(|ui| threshold_cell(ui, r));
    row.col(|ui| {
        // A refusal's search ran in full: its time is shown (and in the footer's percentiles).
        let timed = rep.or(r.report().filter(|p| p.below_precision.is_some()));
        ui.label(
            timed
                .filter(|p| !p.skipped)
                .map_or(String::new(), |p| format!("{:.2}", p.compress_ms)),
        );
    });
    row.col(|ui| {
        status_label(ui, &r.status, selected);
    });
}

/// The Max error cell: red when over the threshold the clip was compressed with.
fn max_error_cell(ui: &mut egui::Ui, rep: Option<&ClipReport>, threshold: f64, selected: bool) {
    if let Some(p) = rep {
        // A scalar track list's errors are in its tracks' own units: the
        // cell gives the worst track's share of its precision instead.
        let txt = egui::RichText::new(match &p.scalar {
            Some(s) => format!("{:.2}× prec.", s.worst_error_over_precision),
            None => format!("{:.4}", p.max_error_cm),
        });
        // Red when over the threshold the clip was compressed with
        // (a folder's clipforge.toml may set it), as its status says.
        let txt = if p.over_threshold(p.held_to_cm(threshold as f32)) {
            txt.color(cell_color(
                ui.visuals(),
                ui.visuals().error_fg_color,
                selected,
            ))
        } else {
            txt
        };
        let cell = ui.label(txt);
        if let Some(s) = &p.scalar {
            cell.on_hover_text(format!(
                "A scalar track list: its values are in their own units, not \
                 cm. Track {}'s largest error is {:.2}× its precision \
                 ({:e}); 1× or less: every track within its precision.",
                s.worst_track,
                s.worst_error_over_precision,
                s.per_track_precision
                    .get(s.worst_track)
                    .copied()
                    .unwrap_or(0.0)
            ));
        }
    }
}

/// The Threshold cell: the threshold (cm) the shown result was made with (else what applies
/// now), a `*` when a `[[clip]]` table or per-bone settings apply to the clip; its hover says
/// every setting and where it came from.
fn threshold_cell(ui: &mut egui::Ui, r: &super::model::Row) {
    if r.scalar_list {
        ui.add(egui::Label::new("per track").selectable(false).truncate())
            .on_hover_text(super::model::SCALAR_LIST_SETTINGS);
        return;
    }
    let Some(s) = r.shown_settings() else {
        if let Some(Err(e)) = &r.effective {
            ui.colored_label(ui.visuals().error_fg_color, "unusable")
                .on_hover_text(e);
        }
        return;
    };
    let mut text = format!("{}", s.error_threshold_cm);
    if s.has_override() {
        text.push_str(" *");
    }
    let cell = ui.add(egui::Label::new(text).selectable(false).truncate());
    if let Some(t) = r.settings_text() {
        cell.on_hover_text(t);
    }
}

/// A cell's own colour, on a selected row readable against the selection's fill (the row's
/// other text takes the theme's selection text colour).
fn cell_color(v: &egui::Visuals, color: egui::Color32, selected: bool) -> egui::Color32 {
    if selected {
        super::util::readable_on(color, v.selection.bg_fill)
    } else {
        color
    }
}

fn status_label(ui: &mut egui::Ui, s: &RowStatus, selected: bool) {
    let v = ui.visuals();
    let color = match s {
        RowStatus::Failed(_) | RowStatus::Unreadable(_) => v.error_fg_color,
        RowStatus::OverThreshold | RowStatus::Stale | RowStatus::BelowPrecision(_) => {
            v.warn_fg_color
        }
        RowStatus::Ok | RowStatus::Skipped => egui::Color32::from_rgb(90, 170, 90),
        _ => v.text_color(),
    };
    let color = cell_color(v, color, selected);
    let (text, hover) = (s.text(), s.hover());
    // A truncated label shows its whole text on hover by itself (a hover text of our own
    // showed it twice); a status with more to say than its text says it on hover instead.
    let cell = ui.add(
        egui::Label::new(egui::RichText::new(&text).color(color))
            .selectable(false)
            .truncate()
            .show_tooltip_when_elided(hover.is_none()),
    );
    if let Some(h) = hover {
        cell.on_hover_text(h);
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

/// The footer's counts of rows to look at (failed, do not read, over threshold, refused),
/// each after a separator, in the colour of its rows' status.
fn problem_counts(ui: &mut egui::Ui, s: &super::model::Summary) {
    if s.failed > 0 {
        ui.separator();
        ui.colored_label(ui.visuals().error_fg_color, format!("{} failed", s.failed));
    }
    if s.unreadable > 0 {
        ui.separator();
        ui.colored_label(
            ui.visuals().error_fg_color,
            match s.unreadable {
                1 => "1 does not read".to_string(),
                n => format!("{} do not read", fmt_count(n as u64)),
            },
        );
    }
    if s.over_threshold > 0 {
        ui.separator();
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!("{} over threshold", s.over_threshold),
        );
    }
    if s.below_precision > 0 {
        ui.separator();
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!("{} below float32 precision", s.below_precision),
        )
        .on_hover_text(
            "Refused: the threshold is below what float32 can hold for these clips (each \
                 row's status gives its floor); raise the threshold above it",
        );
    }
}

/// The footer's throughput and its hover, from the running batch's rate or the last finished
/// batch's on this folder. Without a figure it says why: a "Throughput —" beside a p50 of clips
/// compressed by Watch (or by a batch before a restart) read as a figure missing by mistake.
fn throughput_text(running: Option<f64>, last: Option<f64>) -> (String, &'static str) {
    const HOVER: &str = "Raw clip data compressed per second of wall time by a batch (Compress \
                         all; skipped clips excluded). Watch compresses clips one at a time: \
                         their compression times are in the percentiles beside it";
    let text = match running.or(last) {
        Some(r) if r > 0.0 => format!("Throughput {}", fmt_rate(r)),
        _ if running.is_some() => "Throughput: no clip compressed yet".to_string(),
        Some(_) => "Throughput: the last batch compressed nothing".to_string(),
        None => "Throughput: no batch on this folder since the app started".to_string(),
    };
    (text, HOVER)
}
