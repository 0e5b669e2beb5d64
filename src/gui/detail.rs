//! Clip detail (the selected row): error over time with the threshold, error per bone (each
//! bone's own threshold drawn over its bar), the per-bone threshold table saved into the
//! `clipforge.toml` that applies to the clip, the skeleton viewer, and bit-rate histograms for the clip and the
//! whole batch.
//!
//! The view only shows: the clip is read and measured by a job of
//! [`crate::pipeline::clip_detail`] (started on select, and again when the row gets a new report).

use super::command::Command;
use super::mesh_view::MeshView;
use super::model::{Library, RowKey};
use super::plots::{
    LOSSY_COLOR, RAW_COLOR, THRESHOLD_COLOR, bit_rate_plots, hover_point, tick_label, value_ticks,
};
use super::skeleton_view::{self, ViewerState};
use super::util::fmt_bytes;
use crate::anim::BoneOverride;
pub use crate::pipeline::clip_detail::ClipDetail as DetailData;
use crate::pipeline::clip_detail::{ClipDetailJob, DetailOutcome, ScalarDetail, start_clip_detail};
use crate::pipeline::report::ClipReport;
use eframe::egui;
use egui_plot::{Bar, BarChart, HLine, HoverPosition, Line, Plot, PlotPoints, VLine};
use std::path::PathBuf;
use std::sync::Arc;

/// What to do about a clip file that does not read (no batch has tried it yet).
pub const UNREADABLE_ADVICE: &str = "The file does not read (the error above says where and why): \
    fix or re-export it, then compress again; as it is, a batch fails on it the same way.";

/// The share of the detail's width each column takes: error plots, pose (skeleton or mesh),
/// bit rates.
pub const DETAIL_COLUMN_SHARES: [f32; 3] = [0.3, 0.4, 0.3];

/// The clip detail view: which clip is open, its measured data, the viewer and the bone table.
#[derive(Default)]
pub struct DetailView {
    pub selected: Option<RowKey>,
    pub data: Option<Arc<DetailData>>,
    /// The report the data was computed for (reload when the row gets a new one).
    loaded_for: Option<Option<Arc<ClipReport>>>,
    job: Option<ClipDetailJob>,
    /// A scalar track list's detail, when the selected clip is one.
    pub scalar: Option<Arc<Result<ScalarDetail, crate::pipeline::scalar::ScalarError>>>,
    pub error: Option<String>,
    pub viewer: ViewerState,
    /// The skinned mesh of the clip (when its file has one), shown in place of the skeleton.
    pub mesh: MeshView,
    /// The skeleton instead of the mesh (for a clip with a mesh).
    pub show_skeleton: bool,
    /// The per-bone threshold table of the selected clip.
    pub bones: Option<BoneTable>,
    /// The input folder the selected clip was scanned from.
    root: Option<PathBuf>,
}

/// Which clips a per-bone table is saved for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoneScope {
    /// This clip only: `[[clip.bone]]` tables of its `[[clip]]` table.
    ThisClip,
    /// Every clip the `clipforge.toml` applies to: the app's `[[bone]]` tables.
    ThisFolder,
}

/// The editable per-bone table: one row per bone of the clip, saved for this clip only (its
/// `[[clip]]` table's `[[clip.bone]]`s) or for the folder (the app's `[[bone]]` tables at the
/// end of the `clipforge.toml` that applies to the clip), where they win over the file's own
/// tables and the clip file's per-bone precision.
pub struct BoneTable {
    pub key: RowKey,
    /// The `clipforge.toml` it is saved into: the one that applies to the clip (the nearest up
    /// to the input root, `folder_settings::applying_file`), else a new one in its folder.
    pub file: std::path::PathBuf,
    /// The input folder the clip was scanned from (where the nearest file is looked for).
    pub root: Option<PathBuf>,
    pub scope: BoneScope,
    /// Bone name, threshold (cm) and shell distance (cm) as typed; empty: not overridden.
    pub rows: Vec<(String, String, String)>,
    /// What was saved before: for the folder, for this clip.
    saved: (Vec<BoneOverride>, Vec<BoneOverride>),
    /// The last save's outcome.
    pub message: Option<Result<String, String>>,
}

impl BoneTable {
    /// The table of a clip's bones, with what the app saved for them before (`saved_folder`,
    /// `saved_clip`, read from `file` by the detail job). It opens on the clip's own settings
    /// unless only the folder has some.
    pub fn new(
        key: &RowKey,
        names: &[String],
        file: PathBuf,
        saved_folder: &[BoneOverride],
        saved_clip: &[BoneOverride],
    ) -> Self {
        let scope = if saved_clip.is_empty() && !saved_folder.is_empty() {
            BoneScope::ThisFolder
        } else {
            BoneScope::ThisClip
        };
        let mut t = Self {
            key: key.clone(),
            file,
            root: None,
            scope,
            rows: names
                .iter()
                .map(|n| (n.clone(), String::new(), String::new()))
                .collect(),
            saved: (saved_folder.to_vec(), saved_clip.to_vec()),
            message: None,
        };
        t.fill();
        t
    }

    /// The rows from what was saved for the current scope.
    fn fill(&mut self) {
        let saved = match self.scope {
            BoneScope::ThisFolder => &self.saved.0,
            BoneScope::ThisClip => &self.saved.1,
        };
        let text = |v: Option<f32>| v.map_or(String::new(), |x| x.to_string());
        for (n, t, d) in &mut self.rows {
            // The last saved entry for the bone wins, as in the compressor. Rows are exact
            // bone names, saved as globs matching that name alone.
            let exact = crate::anim::bone_glob::glob_escape(n);
            let o = saved.iter().rev().find(|o| o.pattern == exact);
            *t = text(o.and_then(|o| o.error_threshold));
            *d = text(o.and_then(|o| o.shell_distance));
        }
    }

    /// Switches what the table is saved for (and shows what was saved for it).
    pub fn set_scope(&mut self, scope: BoneScope) {
        if self.scope != scope {
            self.scope = scope;
            self.message = None;
            self.fill();
        }
    }

    /// The clips a save in the current scope changes (their labels, table order): this clip's
    /// file, or every clip the settings file applies to (those that read it now, and, for a file
    /// not there yet, those under its folder that read none).
    pub fn affected(&self, lib: &Library) -> Vec<RowKey> {
        let dir = self.file.parent().unwrap_or(std::path::Path::new(""));
        let file = self.file.display().to_string();
        lib.rows
            .iter()
            .filter(|r| match self.scope {
                BoneScope::ThisClip => r.key.path == self.key.path,
                BoneScope::ThisFolder => match &r.effective {
                    Some(Ok(e)) => match &e.settings_file {
                        Some(f) => *f == file,
                        None => r.key.path.starts_with(dir),
                    },
                    _ => false,
                },
            })
            .map(|r| r.key.clone())
            .collect()
    }

    /// The overrides the table holds, or what is wrong with a value.
    pub fn overrides(&self) -> Result<Vec<crate::anim::BoneOverride>, String> {
        let value = |name: &str, what: &str, s: &str| -> Result<Option<f32>, String> {
            let s = s.trim();
            if s.is_empty() {
                return Ok(None);
            }
            match s.parse::<f32>() {
                Ok(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
                _ => Err(format!(
                    "bone '{name}': {what} '{s}' is not a positive number of cm"
                )),
            }
        };
        let mut out = Vec::new();
        for (name, t, d) in &self.rows {
            let error_threshold = value(name, "threshold", t)?;
            let shell_distance = value(name, "shell distance", d)?;
            if error_threshold.is_some() || shell_distance.is_some() {
                out.push(crate::anim::BoneOverride {
                    pattern: crate::anim::bone_glob::glob_escape(name),
                    error_threshold,
                    shell_distance,
                });
            }
        }
        Ok(out)
    }

    /// Saves the table into [`Self::file`] for the current scope; `affected`: how many clips
    /// it changes (the message says so). True when it wrote.
    pub fn save(&mut self, affected: usize) -> bool {
        use crate::pipeline::folder_settings as fs;
        let result = self.overrides().and_then(|bones| {
            let written = match (self.scope, &self.root) {
                (BoneScope::ThisFolder, _) => fs::save_app_bones(&self.file, &bones),
                (BoneScope::ThisClip, Some(root)) => {
                    fs::save_clip_bones(root, &self.key.path, &bones)
                }
                (BoneScope::ThisClip, None) => fs::save_clip_bones(
                    self.key.path.parent().unwrap_or(std::path::Path::new(".")),
                    &self.key.path,
                    &bones,
                ),
            };
            written
                .map(|p| {
                    match self.scope {
                        BoneScope::ThisFolder => self.saved.0 = bones.clone(),
                        BoneScope::ThisClip => self.saved.1 = bones.clone(),
                    }
                    format!(
                        "Saved {} for {} to {}: {} now stale, compress again to apply them.",
                        super::util::fmt_counted(bones.len() as u64, "bone setting"),
                        match self.scope {
                            BoneScope::ThisClip => "this clip".to_string(),
                            BoneScope::ThisFolder => "the folder".to_string(),
                        },
                        p.display(),
                        crate::pipeline::report::count(affected, "clip", "clips"),
                    )
                })
                .map_err(|e| e.to_string())
        });
        let ok = result.is_ok();
        self.message = Some(result);
        ok
    }
}

impl DetailView {
    pub fn loading(&self) -> bool {
        self.job.is_some()
    }

    /// Opens `key`'s detail (its row, when the table has it, says which report to measure).
    pub fn select(&mut self, key: RowKey, lib: &Library, ctx: &egui::Context) {
        if self.selected.as_ref() != Some(&key) {
            self.viewer = ViewerState::default();
            self.mesh = MeshView::default();
            self.data = None;
            self.error = None;
            self.scalar = None;
        }
        self.selected = Some(key.clone());
        self.load(key, lib, ctx);
    }

    fn load(&mut self, key: RowKey, lib: &Library, ctx: &egui::Context) {
        let row = lib.row(&key);
        let report = row
            .and_then(|r| r.result.as_ref())
            .map(|r| r.report.clone());
        // The folder it was scanned from: which `clipforge.toml` applies to it.
        let root = row
            .and_then(|r| lib.files.get(r.file))
            .map(|f| crate::pipeline::folder_settings::root_of(&f.path, &f.relative));
        self.loaded_for = Some(report.clone());
        self.root = root.clone();
        let ctx = ctx.clone();
        self.job = Some(start_clip_detail(key, report, root, move || {
            ctx.request_repaint()
        }));
    }

    pub fn close(&mut self) {
        *self = Self::default();
    }

    /// Takes the job's result (cheap: a channel read).
    pub fn poll(&mut self) {
        let Some(outcome) = self.job.as_ref().and_then(|j| j.try_take()) else {
            return;
        };
        self.job = None;
        let DetailOutcome {
            key,
            result,
            scalar,
            settings_file,
            saved_bones,
            saved_clip_bones,
        } = outcome;
        if self.selected.as_ref() != Some(&key) {
            return;
        }
        self.scalar = scalar.map(Arc::new);
        match result {
            Ok(d) => {
                if self.viewer.focus_bone.is_none() {
                    self.viewer.focus_bone = d.worst_bone;
                }
                if !self.viewer.magnify_set {
                    self.viewer.magnify = d.suggested_magnify;
                }
                self.error = None;
                if self.bones.as_ref().is_none_or(|t| t.key != key) {
                    let mut t = BoneTable::new(
                        &key,
                        &d.names,
                        settings_file,
                        &saved_bones,
                        &saved_clip_bones,
                    );
                    t.root = self.root.clone();
                    self.bones = Some(t);
                }
                self.mesh.set_detail(d.mesh.clone());
                self.data = Some(Arc::new(d));
            }
            Err(e) => {
                self.error = Some(e.to_string());
                self.data = None;
            }
        }
    }

    /// Reloads when the selected row got a new report (e.g. the batch just finished it).
    fn refresh(&mut self, lib: &Library, ctx: &egui::Context) {
        let Some(key) = self.selected.clone() else {
            return;
        };
        let row = lib.row(&key);
        let current = row
            .and_then(|r| r.result.as_ref())
            .map(|r| r.report.clone());
        let same = match (&self.loaded_for, &current) {
            (Some(Some(a)), Some(b)) => Arc::ptr_eq(a, b),
            (Some(None), None) => true,
            _ => false,
        };
        if !same && self.job.is_none() {
            self.load(key, lib, ctx);
        }
    }

    /// Draws the detail of the selected clip (`threshold`: the current one, cm); returns what
    /// reaches beyond the detail ("Compare presets…").
    pub fn ui(&mut self, ui: &mut egui::Ui, lib: &Library, threshold: f64) -> Vec<Command> {
        let mut commands = Vec::new();
        self.refresh(lib, ui.ctx());
        let Some(key) = self.selected.clone() else {
            return commands;
        };
        let row = lib.row(&key).cloned();
        // The threshold line is the one the clip was compressed with (a folder's
        // clipforge.toml, a kept A/B side), not necessarily the tab's.
        let threshold = row
            .as_ref()
            .and_then(|r| r.good_report())
            .and_then(|p| p.settings.as_ref())
            .map_or(threshold, |s| s.error_threshold_cm as f64);
        self.title_row(ui, &key, row.as_ref(), &mut commands);
        if self.selected.is_none() {
            return commands;
        }
        // A scalar track list has no skeleton: its own view (per-track error vs precision).
        let report = row.as_ref().and_then(|r| r.report());
        if super::scalar_view::is_scalar_row(report, self.scalar.is_some()) {
            super::scalar_view::scalar_detail_ui(ui, self.scalar.as_deref());
            return commands;
        }
        if let Some(r) = row.as_ref().and_then(|r| r.report()) {
            ui.horizontal_wrapped(|ui| {
                if let (Some(e), true) = (&r.error, r.below_precision.is_some()) {
                    // A setting to raise, not a broken file: said as the row's status says it.
                    ui.colored_label(ui.visuals().warn_fg_color, format!("Refused: {e}"));
                } else if let Some(e) = &r.error {
                    ui.colored_label(ui.visuals().error_fg_color, format!("Failed: {e}"));
                    // What to do, by the kind of failure (its message names file and place).
                    if let Some(f) = r.failure {
                        ui.end_row();
                        ui.add(egui::Label::new(f.advice()).wrap());
                    }
                } else {
                    ui.label(format!(
                        "{} to {} ({:.1}×) · max error {:.4} cm (mean {:.5}) · worst bone {} at sample {} · {} · {:.2} ms",
                        fmt_bytes(r.raw_bytes),
                        fmt_bytes(r.compressed_bytes),
                        r.ratio,
                        r.max_error_cm,
                        r.mean_error_cm,
                        r.worst_bone.as_deref().unwrap_or("—"),
                        r.worst_sample.map_or("—".into(), |s| s.to_string()),
                        // "1 segment": a short clip is one (it said "1 segments").
                        crate::gui::util::fmt_counted(r.layout.segments as u64, "segment"),
                        r.compress_ms
                    ));
                }
            });
        } else if let Some(e) = &self.error {
            // The file does not read (found by the scan's inspection or the detail job):
            // "press Compress to see its error" was untrue, the error was already there and a
            // batch fails on it the same way.
            ui.colored_label(ui.visuals().error_fg_color, format!("Does not read: {e}"));
            ui.add(egui::Label::new(UNREADABLE_ADVICE).wrap());
        } else {
            ui.weak("Not compressed yet: press Compress to see its error and bit rates.");
        }
        // Where the result came from: each setting and its source (and what applies now).
        if let Some(t) = row.as_ref().and_then(|r| r.settings_text()) {
            let mut lines = t.lines();
            if let Some(first) = lines.next() {
                ui.add(egui::Label::new(first).wrap());
            }
            for l in lines {
                ui.add(
                    egui::Label::new(egui::RichText::new(l).color(ui.visuals().warn_fg_color))
                        .wrap(),
                );
            }
        }
        // What the importer, the mesh check or the settings noted about this clip (a per-bone
        // table that selects no bone): the report held them, and no screen showed them.
        for w in report.map(|r| r.warnings.as_slice()).unwrap_or_default() {
            ui.add(
                egui::Label::new(
                    egui::RichText::new(format!("Warning: {w}")).color(ui.visuals().warn_fg_color),
                )
                .wrap(),
            );
        }
        // A failed clip's report (or the line above) already says why: its reading error
        // would say it again.
        let failed = report.is_some_and(|r| r.error.is_some());
        let failed = failed || (report.is_none() && self.error.is_some());
        if let Some(e) = self.error.as_ref().filter(|_| !failed) {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        let data = self.data.clone().filter(|d| d.key == key);
        if let Some(n) = data.as_ref().and_then(|d| d.note.as_ref()) {
            ui.colored_label(ui.visuals().warn_fg_color, n);
        }
        if data.is_none() && self.loading() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Loading clip…");
            });
        }
        ui.separator();
        let area = ui.available_rect_before_wrap();
        // Three columns placed, not flowed: a row that did not wrap in one column used to widen
        // it and squeeze the next (the bit rates got ~110 px at 1280 px). The pose column has
        // the most controls (the mesh view's above all), so it gets the widest share. Each
        // column's rows wrap, and what still overflows is clipped at its edge.
        let gap = 12.0;
        let share = (area.width() - 2.0 * gap).max(0.0);
        let widths = DETAIL_COLUMN_SHARES.map(|s| (s * share).max(200.0));
        let column = |i: usize| {
            let x = widths[..i].iter().sum::<f32>() + i as f32 * gap;
            egui::Rect::from_min_size(
                area.min + egui::vec2(x, 0.0),
                egui::vec2(widths[i], area.height()),
            )
        };
        // The per-bone table's header sits above the error plots: keep the column within the
        // window (an overflowing column pushed the skeleton viewer's controls out of reach).
        let bone_header_h = if self.bones.is_some() { 28.0 } else { 0.0 };
        let plot_h = ((area.height() - 60.0 - bone_header_h) / 2.0).max(80.0);
        let mut bottom = area.bottom();
        bottom = bottom.max(in_column(ui, column(0), |ui| {
            // Open, the table takes the column's room in place of the error plots: both did
            // not fit the panel, and overflowing it pushed the detail's title and the table's
            // own header out of sight.
            let room = ui.available_height();
            if !self.bone_table_ui(ui, &key, room, lib, &mut commands) {
                self.error_plots(ui, data.as_deref(), threshold, plot_h, failed);
            }
        }));
        bottom = bottom.max(in_column(ui, column(1), |ui| {
            self.pose_column(ui, data.as_deref(), threshold, report)
        }));
        bottom = bottom.max(in_column(ui, column(2), |ui| {
            let unreadable = report.is_none() && self.error.is_some();
            bit_rate_plots(ui, report, unreadable, lib, plot_h);
        }));
        let stroke = ui.visuals().widgets.noninteractive.bg_stroke;
        for i in 0..2 {
            let x = column(i).right() + gap / 2.0;
            ui.painter().vline(x, area.top()..=bottom, stroke);
        }
        // The tallest column's height, so that the detail's scroll area reaches its end.
        ui.allocate_rect(
            egui::Rect::from_min_max(area.min, egui::pos2(area.right(), bottom)),
            egui::Sense::hover(),
        );
        commands
    }

    /// "Clip: NAME", its path, and Close / Compare presets… (not for a scalar track list).
    fn title_row(
        &mut self,
        ui: &mut egui::Ui,
        key: &RowKey,
        row: Option<&super::model::Row>,
        commands: &mut Vec<Command>,
    ) {
        ui.horizontal(|ui| {
            ui.label(
                egui::RichText::new(format!("Clip: {}", key.clip))
                    .strong()
                    .size(15.0),
            );
            ui.weak(key.path.display().to_string());
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui
                    .button("Close")
                    .on_hover_text("Close the clip detail")
                    .clicked()
                {
                    self.close();
                }
                // A scalar track list has no preset comparison (its precisions come from the file).
                let scalar = super::scalar_view::is_scalar_row(
                    row.and_then(|r| r.report()),
                    self.scalar.is_some(),
                );
                if !scalar
                    && ui
                        .button("Compare presets…")
                        .on_hover_text(
                            "Compress this clip with two presets and compare before keeping one",
                        )
                        .clicked()
                {
                    commands.push(Command::ComparePresets(key.clone()));
                }
            });
        });
    }

    /// The skeleton viewer, or for a clip with a skinned mesh the mesh view (the default) or
    /// the skeleton, picked above it; one clock for both.
    fn pose_column(
        &mut self,
        ui: &mut egui::Ui,
        data: Option<&DetailData>,
        threshold: f64,
        report: Option<&ClipReport>,
    ) {
        let has_mesh = data.is_some_and(|d| d.mesh.is_some());
        if has_mesh {
            ui.horizontal_wrapped(|ui| {
                ui.selectable_value(&mut self.show_skeleton, false, "Mesh")
                    .on_hover_text("The skinned mesh, coloured by vertex error");
                ui.selectable_value(&mut self.show_skeleton, true, "Skeleton");
                ui.label(egui::RichText::new("(raw vs decompressed)").strong());
            });
        } else {
            ui.label(egui::RichText::new("Skeleton (raw vs decompressed)").strong());
        }
        match data {
            Some(d) if has_mesh && !self.show_skeleton => {
                self.mesh.ui(ui, &mut self.viewer, d, threshold, report)
            }
            Some(d) => skeleton_view::viewer_ui(ui, &mut self.viewer, d),
            // "yet" only while it may still come: a file that does not read never shows one.
            None if self.error.is_some() && !self.loading() => {
                ui.weak("No pose to show: the file does not read (the error is above).");
            }
            None => {
                ui.weak("No pose to show yet.");
            }
        }
    }

    /// The per-bone threshold table (collapsed by default): a threshold and a shell distance per
    /// bone, saved into the `clipforge.toml` that applies to the clip ([`BoneTable::file`]).
    /// `room`: the column's height; returns whether the table is open (it then takes the room
    /// of the error plots).
    fn bone_table_ui(
        &mut self,
        ui: &mut egui::Ui,
        key: &RowKey,
        room: f32,
        lib: &Library,
        commands: &mut Vec<Command>,
    ) -> bool {
        let Some(table) = self.bones.as_mut().filter(|t| &t.key == key) else {
            return false;
        };
        // Per clip: another clip opens with its error plots, not this clip's open table.
        egui::CollapsingHeader::new("Per-bone thresholds")
            .id_salt(("cf_bone_table", &key.path, &key.clip))
            .default_open(false)
            .show(ui, |ui| {
                ui.horizontal(|ui| {
                    ui.label("Save for:");
                    let mut scope = table.scope;
                    ui.radio_value(&mut scope, BoneScope::ThisClip, "this clip")
                        .on_hover_text("A [[clip]] table for this clip's file: no other clip changes");
                    ui.radio_value(&mut scope, BoneScope::ThisFolder, "this folder")
                        .on_hover_text("[[bone]] tables: every clip this clipforge.toml applies to");
                    table.set_scope(scope);
                });
                let affected = table.affected(lib);
                let names: Vec<String> = affected
                    .iter()
                    .filter_map(|k| lib.row(k).map(|r| r.label.clone()))
                    .collect();
                let shown: Vec<&str> = names.iter().take(4).map(String::as_str).collect();
                let more = names.len().saturating_sub(shown.len());
                ui.add(
                    egui::Label::new(format!(
                        "A save changes {}: {}{}",
                        crate::pipeline::report::count(names.len(), "clip", "clips"),
                        shown.join(", "),
                        if more > 0 { format!(" and {more} more") } else { String::new() }
                    ))
                    .wrap(),
                )
                .on_hover_text(names.join("\n"));
                // The units are in the column titles: a caption of its own starting "cm; …" read
                // as a sentence with its start cut off, and took a line from the rows.
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(format!(
                            "Empty: the clip's own. Saved into {}",
                            table.file.display()
                        ))
                        .weak(),
                    )
                    .wrap(),
                )
                .on_hover_text(
                    "These win over the file's [[bone]] tables and the clip file's precision",
                );
                egui::ScrollArea::vertical()
                    .id_salt("cf_bone_rows")
                    // What is left of the column once the captions above are drawn, less the
                    // Save button and its (wrapped, path-holding) message below: a fixed guess
                    // of the captions' height left a third of the room empty.
                    .max_height(
                        (ui.available_height().min(room)
                            - if table.message.is_some() { 70.0 } else { 32.0 })
                        .max(80.0),
                    )
                    .show(ui, |ui| {
                        egui::Grid::new("cf_bone_grid").striped(true).show(ui, |ui| {
                            ui.strong("bone");
                            ui.strong("threshold (cm)");
                            ui.strong("shell (cm)");
                            ui.end_row();
                            for (name, t, d) in table.rows.iter_mut() {
                                let l = ui.label(name.as_str());
                                ui.add(egui::TextEdit::singleline(t).desired_width(70.0))
                                    .labelled_by(l.id);
                                ui.add(egui::TextEdit::singleline(d).desired_width(50.0))
                                    .on_hover_text(format!("shell distance of {name} (cm)"));
                                ui.end_row();
                            }
                        });
                    });
                if ui
                    .button("Save to clipforge.toml")
                    .on_hover_text("Write these per-bone settings into the clipforge.toml named above, for the clips listed")
                    .clicked()
                    && table.save(affected.len())
                {
                    // The affected rows turn stale at once (what applies to them changed).
                    commands.push(Command::SettingsFilesChanged);
                }
                // Below the button and wrapped: the message holds a path, and on the button's
                // row it widened the column until the detail panel was pushed off the window.
                match &table.message {
                    Some(Ok(m)) => {
                        ui.add(egui::Label::new(m.as_str()).wrap());
                    }
                    Some(Err(e)) => {
                        ui.add(
                            egui::Label::new(
                                egui::RichText::new(e.as_str()).color(ui.visuals().error_fg_color),
                            )
                            .wrap(),
                        );
                    }
                    None => {}
                }
            })
            .body_returned
            .is_some()
    }

    /// Max error over time with the threshold (a click jumps to the sample), then
    /// [`Self::error_per_bone`].
    fn error_plots(
        &mut self,
        ui: &mut egui::Ui,
        data: Option<&DetailData>,
        threshold: f64,
        plot_h: f32,
        failed: bool,
    ) {
        let d = data.filter(|d| d.lossy_pos.is_some() || d.per_sample_err.iter().any(|&e| e > 0.0));
        ui.horizontal_wrapped(|ui| {
            ui.label(egui::RichText::new("Max error over time (cm)").strong());
            // The key only beside a plot: over an empty column it read as if one were there.
            if d.is_some() {
                ui.weak("red: threshold · click: jump");
            }
        });
        let Some(d) = d else {
            // Said as the pose column says it: the error itself is in the detail's first lines.
            ui.weak(if failed {
                "No error to show: no output (the error is above)."
            } else {
                "Compress this clip to see its error."
            });
            return;
        };
        let rate = d.sample_rate as f64;
        let pts: PlotPoints = d
            .per_sample_err
            .iter()
            .enumerate()
            .map(|(i, &e)| [i as f64 / rate, e])
            .collect();
        let cursor_t = self.viewer.sample as f64 / rate;
        let resp = Plot::new("cf_err_time")
            .height(plot_h)
            .width(ui.available_width())
            .allow_scroll(false)
            .include_y(0.0)
            .include_y(threshold * 1.1)
            .x_axis_label("time (s)")
            .y_axis_label("cm")
            .y_grid_spacer(value_ticks)
            .y_axis_formatter(tick_label)
            .label_formatter(|h| {
                Some(match h {
                    HoverPosition::NearDataPoint {
                        plot_name,
                        position: p,
                        ..
                    } => {
                        format!("{plot_name}\nt = {:.3} s\n{:.5} cm", p.x, p.y)
                    }
                    HoverPosition::Elsewhere { position: p } => {
                        format!("t = {:.3} s\n{:.5} cm", p.x, p.y)
                    }
                })
            })
            .show(ui, |pui| {
                pui.line(Line::new("max error", pts).color(LOSSY_COLOR));
                pui.hline(HLine::new("threshold", threshold).color(THRESHOLD_COLOR));
                pui.vline(VLine::new("", cursor_t).color(egui::Color32::GRAY));
                pui.pointer_coordinate()
            });
        if resp.response.clicked()
            && let Some(p) = resp.inner
        {
            let s = (p.x * rate)
                .round()
                .clamp(0.0, (d.num_samples.max(1) - 1) as f64);
            self.viewer.sample = s as f32;
            self.viewer.playing = false;
        }
        self.error_per_bone(ui, d, threshold, plot_h);
    }

    /// Max error per bone, each bone's own threshold over its bar (or the clip's as a line);
    /// a click picks the bone and jumps to its worst sample.
    fn error_per_bone(&mut self, ui: &mut egui::Ui, d: &DetailData, threshold: f64, plot_h: f32) {
        let limits = d.per_bone_limit.clone();
        ui.horizontal_wrapped(|ui| {
            ui.label(egui::RichText::new("Max error per bone (cm)").strong());
            ui.weak(if limits.is_empty() {
                "red: worst bone · click: pick"
            } else {
                "red: worst bone, each bone's own threshold · click: pick"
            });
        });
        let focus = self.viewer.focus_bone;
        let bars: Vec<Bar> = d
            .per_bone_err
            .iter()
            .enumerate()
            .map(|(i, &e)| {
                let c = if Some(i) == d.worst_bone {
                    THRESHOLD_COLOR
                } else if Some(i) == focus {
                    egui::Color32::YELLOW
                } else {
                    RAW_COLOR
                };
                Bar::new(i as f64, e).name(&d.names[i]).fill(c).width(0.8)
            })
            .collect();
        let names = d.names.clone();
        let errs = d.per_bone_err.clone();
        let label_errs = d.per_bone_err.clone();
        let label_limits = limits.clone();
        let top = limits.iter().cloned().fold(threshold, f64::max);
        let resp = Plot::new("cf_err_bone")
            .height(plot_h)
            .width(ui.available_width())
            .allow_scroll(false)
            .include_y(0.0)
            .include_y(top * 1.1)
            .x_axis_label("bone")
            .y_axis_label("cm")
            .y_grid_spacer(value_ticks)
            .y_axis_formatter(tick_label)
            .x_axis_formatter(move |m, _| {
                let i = m.value.round();
                if (m.value - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < errs.len() {
                    format!("{i}")
                } else {
                    String::new()
                }
            })
            // The bar under the pointer is named in a tooltip (readable, never clipped).
            .label_formatter(move |hp| {
                let p = hover_point(hp);
                let i = p.x.round();
                (i >= 0.0 && (i as usize) < names.len()).then(|| {
                    let i = i as usize;
                    match label_limits.get(i) {
                        Some(t) => format!(
                            "{i}: {}\n{:.5} cm (threshold {t} cm)",
                            names[i], label_errs[i]
                        ),
                        None => format!("{i}: {}\n{:.5} cm", names[i], label_errs[i]),
                    }
                })
            })
            .show(ui, |pui| {
                pui.bar_chart(BarChart::new("per bone", bars).allow_hover(false));
                if limits.is_empty() {
                    pui.hline(HLine::new("threshold", threshold).color(THRESHOLD_COLOR));
                } else {
                    // Each bone's own threshold, a tick over its bar.
                    for (i, &t) in limits.iter().enumerate() {
                        let x = i as f64;
                        pui.line(
                            Line::new(
                                "threshold",
                                PlotPoints::new(vec![[x - 0.45, t], [x + 0.45, t]]),
                            )
                            .color(THRESHOLD_COLOR)
                            .width(2.0),
                        );
                    }
                }
                pui.pointer_coordinate()
            });
        if resp.response.clicked()
            && let Some(p) = resp.inner
        {
            let b = p.x.round();
            if b >= 0.0 && (b as usize) < d.per_bone_err.len() {
                let b = b as usize;
                self.viewer.focus_bone = Some(b);
                self.viewer.sample = d.per_bone_worst_sample[b] as f32;
                self.viewer.playing = false;
            }
        }
    }
}

/// Runs `add` in `rect` (top-down), its drawing clipped to the column's sides (not its bottom:
/// a taller column scrolls the detail); returns the bottom of what it drew.
fn in_column(ui: &mut egui::Ui, rect: egui::Rect, add: impl FnOnce(&mut egui::Ui)) -> f32 {
    ui.scope_builder(
        egui::UiBuilder::new()
            .max_rect(rect)
            .layout(egui::Layout::top_down(egui::Align::Min)),
        |ui| {
            let clip = ui.clip_rect();
            ui.set_clip_rect(egui::Rect::from_x_y_ranges(
                rect.x_range().intersection(clip.x_range()),
                clip.y_range(),
            ));
            add(ui);
        },
    )
    .response
    .rect
    .bottom()
}
