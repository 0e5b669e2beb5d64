//! Clip detail (the selected row): error over time with the threshold, error per bone (each
//! bone's own threshold drawn over its bar), the per-bone threshold table saved into the clip
//! folder's `clipforge.toml`, the skeleton viewer, and bit-rate histograms for the clip and the
//! whole batch.
//!
//! The raw clip is read back with the importers and the compressed one with the runtime reader
//! on a background thread; errors are measured with `anim::metric` (the same metric as the reports).

use super::AppState;
use super::model::{Library, Row, RowKey};
use super::skeleton_view::{self, ViewerState};
use crate::anim::metric::{object_space_f64, vertex_error};
use crate::anim::{ClipReader, Looping, Pose, RawClip, formats};
use crate::pipeline::report::ClipReport;
use eframe::egui;
use egui_plot::{
    Bar, BarChart, GridInput, GridMark, HLine, HoverPosition, Line, Plot, PlotPoints, VLine,
};
use glam::{Quat, Vec3};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};

/// What the detail view draws, computed once per selected clip.
pub struct DetailData {
    pub key: RowKey,
    pub names: Vec<String>,
    pub parents: Vec<u32>,
    pub sample_rate: f32,
    pub num_samples: usize,
    /// Object-space joint positions, `sample * bones + bone`.
    pub raw_pos: Vec<Vec3>,
    /// Decompressed joint positions, same layout (None before compression).
    pub lossy_pos: Option<Vec<Vec3>>,
    /// Max error over bones per sample, and per bone over samples (cm).
    pub per_sample_err: Vec<f64>,
    pub per_bone_err: Vec<f64>,
    /// Each bone's own threshold (cm) when the clip was compressed with per-bone thresholds
    /// (the report's `per_bone_threshold_cm`); empty: every bone had the one threshold.
    pub per_bone_limit: Vec<f64>,
    /// Sample where each bone's error peaks.
    pub per_bone_worst_sample: Vec<usize>,
    pub worst_bone: Option<usize>,
    /// Largest distance of a joint from its pose centre (for the viewer's zoom).
    pub extent: f32,
    /// Box around every joint of every sample, raw and decompressed (the viewer frames it,
    /// so the whole clip stays in view: feet, a walk, a rising scale).
    pub bounds_min: Vec3,
    pub bounds_max: Vec3,
    /// Largest distance between a raw joint and its decompressed one (clip units).
    pub max_offset: f32,
    /// Error magnification that makes `max_offset` a visible part of the clip's size.
    pub suggested_magnify: f32,
    /// Why the compressed clip could not be read (the raw one is still shown).
    pub note: Option<String>,
}

#[derive(Default)]
pub struct DetailState {
    pub selected: Option<RowKey>,
    pub data: Option<Arc<DetailData>>,
    /// The report the data was computed for (reload when the row gets a new one).
    loaded_for: Option<Option<Arc<ClipReport>>>,
    rx: Option<Receiver<(RowKey, Result<DetailData, String>)>>,
    pub error: Option<String>,
    pub viewer: ViewerState,
    /// The per-bone threshold table of the selected clip.
    pub bones: Option<BoneTable>,
}

/// The editable per-bone table: one row per bone of the clip, saved as the app's `[[bone]]`
/// tables (exact bone names) at the end of the clip folder's `clipforge.toml`, where they win
/// over the file's own tables and the clip file's per-bone precision.
pub struct BoneTable {
    pub key: RowKey,
    /// The `clipforge.toml` it is saved into (the clip's own folder).
    pub file: std::path::PathBuf,
    /// Bone name, threshold (cm) and shell distance (cm) as typed; empty: not overridden.
    pub rows: Vec<(String, String, String)>,
    /// The last save's outcome.
    pub message: Option<Result<String, String>>,
}

impl BoneTable {
    /// The table of a clip's bones, with what the app saved for them before.
    pub fn load(key: &RowKey, names: &[String]) -> Self {
        use crate::pipeline::folder_settings::{FILE_NAME, app_bones};
        let file = key
            .path
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join(FILE_NAME);
        let saved = crate::fsio::read_regular(&file, 1 << 20)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .map(|t| app_bones(&file, &t))
            .unwrap_or_default();
        let text = |v: Option<f32>| v.map_or(String::new(), |x| x.to_string());
        let rows = names
            .iter()
            .map(|n| {
                // The last saved entry for the bone wins, as in the compressor.
                let o = saved.iter().rev().find(|o| &o.pattern == n);
                (
                    n.clone(),
                    text(o.and_then(|o| o.error_threshold)),
                    text(o.and_then(|o| o.shell_distance)),
                )
            })
            .collect();
        Self {
            key: key.clone(),
            file,
            rows,
            message: None,
        }
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
                    pattern: name.clone(),
                    error_threshold,
                    shell_distance,
                });
            }
        }
        Ok(out)
    }

    /// Saves the table into the folder's `clipforge.toml`.
    pub fn save(&mut self) {
        let folder = self
            .file
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .to_path_buf();
        self.message = Some(self.overrides().and_then(|bones| {
            crate::pipeline::folder_settings::save_app_bones(&folder, &bones)
                .map(|p| {
                    format!(
                        "Saved {} bone setting(s) to {}; compress again to apply them.",
                        bones.len(),
                        p.display()
                    )
                })
                .map_err(|e| e.to_string())
        }));
    }
}

impl DetailState {
    pub fn loading(&self) -> bool {
        self.rx.is_some()
    }

    pub fn select(&mut self, key: RowKey, row: Option<&Row>) {
        if self.selected.as_ref() != Some(&key) {
            self.viewer = ViewerState::default();
            self.data = None;
            self.error = None;
        }
        self.selected = Some(key.clone());
        self.load(key, row);
    }

    fn load(&mut self, key: RowKey, row: Option<&Row>) {
        let report = row
            .and_then(|r| r.result.as_ref())
            .map(|r| r.report.clone());
        self.loaded_for = Some(report.clone());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let r = load_detail(&key, report.as_deref());
            let _ = tx.send((key, r));
        });
        self.rx = Some(rx);
    }

    pub fn close(&mut self) {
        *self = Self::default();
    }

    pub fn poll(&mut self) {
        let Some(rx) = &self.rx else { return };
        match rx.try_recv() {
            Ok((key, res)) => {
                self.rx = None;
                if self.selected.as_ref() == Some(&key) {
                    match res {
                        Ok(d) => {
                            if self.viewer.focus_bone.is_none() {
                                self.viewer.focus_bone = d.worst_bone;
                            }
                            if !self.viewer.magnify_set {
                                self.viewer.magnify = d.suggested_magnify;
                            }
                            self.error = None;
                            if self.bones.as_ref().is_none_or(|t| t.key != key) {
                                self.bones = Some(BoneTable::load(&key, &d.names));
                            }
                            self.data = Some(Arc::new(d));
                        }
                        Err(e) => {
                            self.error = Some(e);
                            self.data = None;
                        }
                    }
                }
            }
            Err(TryRecvError::Disconnected) => self.rx = None,
            Err(TryRecvError::Empty) => {}
        }
    }

    /// Reloads when the selected row got a new report (e.g. the batch just finished it).
    fn refresh(&mut self, lib: &Library) {
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
        if !same && self.rx.is_none() {
            self.load(key, row);
        }
    }
}

/// Reads the raw clip and (if compressed) the `.cfa`, and measures both.
fn load_detail(key: &RowKey, report: Option<&ClipReport>) -> Result<DetailData, String> {
    let clips = formats::load_clips(&key.path).map_err(|e| e.to_string())?;
    let raw = clips
        .iter()
        .position(|c| c.name == key.clip)
        .or((clips.len() == 1).then_some(0))
        .map(|i| clips[i].clone())
        .ok_or_else(|| format!("clip '{}' not found in {}", key.clip, key.path.display()))?;
    let mut note = None;
    let lossy = match report
        .and_then(|r| r.output.as_ref())
        .filter(|_| report.is_some_and(|r| r.error.is_none()))
    {
        None => None,
        Some(out) => match std::fs::read(out) {
            Err(e) => {
                note = Some(format!("cannot read {out}: {e}"));
                None
            }
            Ok(bytes) => match ClipReader::new(&bytes) {
                Err(e) => {
                    note = Some(format!("cannot read {out}: {e}"));
                    None
                }
                Ok(reader) => resample(&raw, &reader),
            },
        },
    };
    Ok(measure_detail(
        key.clone(),
        &raw,
        lossy.as_ref(),
        report,
        note,
    ))
}

/// The decompressed clip sampled at the raw clip's sample times (so the two line up even when
/// the codec dropped a looping clip's last sample).
fn resample(raw: &RawClip, reader: &ClipReader<'_>) -> Option<RawClip> {
    if reader.num_bones() != raw.num_bones() {
        return None;
    }
    let (nb, ns) = (raw.num_bones(), raw.num_samples);
    let mut r = vec![Quat::IDENTITY; nb * ns];
    let mut t = vec![Vec3::ZERO; nb * ns];
    let mut s = vec![Vec3::ONE; nb * ns];
    let mut pose = Pose::new(nb);
    for si in 0..ns {
        let time = si as f32 / raw.sample_rate;
        reader.sample_pose(
            time.min(reader.duration().max(0.0)),
            Looping::Clamp,
            &mut pose,
        );
        for b in 0..nb {
            let i = raw.index(b, si);
            r[i] = pose.rotations[b];
            t[i] = pose.translations[b].into();
            s[i] = pose.scales[b].into();
        }
    }
    RawClip::new(
        raw.name.clone(),
        raw.skeleton.clone(),
        raw.sample_rate,
        ns,
        r,
        t,
        s,
    )
    .ok()
}

fn measure_detail(
    key: RowKey,
    raw: &RawClip,
    lossy: Option<&RawClip>,
    report: Option<&ClipReport>,
    note: Option<String>,
) -> DetailData {
    let (nb, ns) = (raw.num_bones(), raw.num_samples);
    let a = object_space_f64(raw);
    let raw_pos: Vec<Vec3> = a.iter().map(|t| t.translation.as_vec3()).collect();
    let mut per_sample = vec![0.0; ns];
    let mut per_bone = vec![0.0; nb];
    let mut per_bone_worst_sample = vec![0usize; nb];
    let lossy_pos = lossy.map(|l| {
        let b = object_space_f64(l);
        for (s, worst_at_s) in per_sample.iter_mut().enumerate() {
            for bone in 0..nb {
                let i = s * nb + bone;
                let e = vertex_error(&a[i], &b[i], raw.skeleton.shell_distances[bone] as f64);
                if e > *worst_at_s {
                    *worst_at_s = e;
                }
                if e > per_bone[bone] {
                    per_bone[bone] = e;
                    per_bone_worst_sample[bone] = s;
                }
            }
        }
        b.iter()
            .map(|t| t.translation.as_vec3())
            .collect::<Vec<_>>()
    });
    // The report's curves are authoritative when present (same metric, made by the pipeline).
    if let Some(r) = report {
        if r.per_sample_max_error_cm.len() == ns {
            per_sample = r.per_sample_max_error_cm.clone();
        }
        if r.per_bone_max_error_cm.len() == nb {
            per_bone = r.per_bone_max_error_cm.clone();
        }
    }
    let per_bone_limit: Vec<f64> = report
        .filter(|r| r.per_bone_threshold_cm.len() == nb)
        .map(|r| r.per_bone_threshold_cm.iter().map(|&t| t as f64).collect())
        .unwrap_or_default();
    let worst_bone = (lossy_pos.is_some()
        || report.is_some_and(|r| !r.per_bone_max_error_cm.is_empty()))
    .then(|| (0..nb).max_by(|&x, &y| per_bone[x].total_cmp(&per_bone[y])))
    .flatten();
    // Zoom on the body: the 90th percentile joint distance from the pose centre (a root left
    // at the origin while the character walks away must not shrink the view).
    let mut extent: f32 = 1.0;
    let mut dist = Vec::with_capacity(nb);
    for s in (0..ns).step_by((ns / 64).max(1)) {
        let pose = &raw_pos[s * nb..(s + 1) * nb];
        let c = pose_center(pose);
        dist.clear();
        dist.extend(pose.iter().map(|p| (*p - c).length()));
        dist.sort_by(f32::total_cmp);
        if let Some(&d) = dist.get((dist.len() * 9 / 10).min(dist.len().saturating_sub(1))) {
            extent = extent.max(d * 1.15);
        }
    }
    let (bounds_min, bounds_max) = joint_bounds(
        raw_pos
            .iter()
            .chain(lossy_pos.iter().flat_map(|l| l.iter())),
    );
    let max_offset = lossy_pos.as_ref().map_or(0.0, |l| {
        l.iter()
            .zip(&raw_pos)
            .map(|(q, p)| (*q - *p).length())
            .filter(|d| d.is_finite())
            .fold(0.0, f32::max)
    });
    let suggested_magnify = suggest_magnify(max_offset, (bounds_max - bounds_min).length() / 2.0);
    DetailData {
        key,
        names: raw.skeleton.names.clone(),
        parents: raw.skeleton.parents.clone(),
        sample_rate: raw.sample_rate,
        num_samples: ns,
        raw_pos,
        lossy_pos,
        per_sample_err: per_sample,
        per_bone_err: per_bone,
        per_bone_limit,
        per_bone_worst_sample,
        worst_bone,
        extent,
        bounds_min,
        bounds_max,
        max_offset,
        suggested_magnify,
        note,
    }
}

/// Box around the finite points (a unit box at the origin when there are none).
pub fn joint_bounds<'a>(points: impl Iterator<Item = &'a Vec3>) -> (Vec3, Vec3) {
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for p in points.filter(|p| p.is_finite()) {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    if lo.x > hi.x {
        (Vec3::splat(-0.5), Vec3::splat(0.5))
    } else {
        (lo, hi)
    }
}

/// Fraction of the clip's radius the largest magnified error should span on screen.
const MAGNIFIED_ERROR_SHARE: f32 = 0.06;

/// Error magnification for a clip whose largest joint offset is `max_offset` and whose framing
/// radius is `radius`: the offset becomes ~6% of the radius (several pixels in any usable
/// viewer), rounded up to 1, 2 or 5 × a power of ten, within 1…10000.
pub fn suggest_magnify(max_offset: f32, radius: f32) -> f32 {
    if !(max_offset > 0.0 && radius > 0.0) {
        return 1.0;
    }
    let raw = (MAGNIFIED_ERROR_SHARE * radius / max_offset).clamp(1.0, 10000.0);
    let p = 10f32.powf(raw.log10().floor());
    let nice = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&v| v >= raw * 0.999)
        .unwrap_or(10.0 * p);
    nice.clamp(1.0, 10000.0)
}

impl DetailData {
    /// Time of a sample as both the slider and the viewer's readout show it (one rounding).
    pub fn time_label(&self, sample: usize) -> String {
        format!("{:.2} s", sample as f64 / self.sample_rate.max(1e-6) as f64)
    }

    /// Centre and radius of the sphere around `bounds`, which the camera frames from any angle.
    pub fn framing(&self) -> (Vec3, f32) {
        let c = (self.bounds_min + self.bounds_max) / 2.0;
        let r = ((self.bounds_max - self.bounds_min).length() / 2.0).max(1e-3);
        (c, r)
    }
}

/// Centre of a pose: the per-axis median of its joints (robust to a root left far away).
pub fn pose_center(pose: &[Vec3]) -> Vec3 {
    if pose.is_empty() {
        return Vec3::ZERO;
    }
    let med = |f: fn(&Vec3) -> f32| {
        let mut v: Vec<f32> = pose.iter().map(f).collect();
        v.sort_by(f32::total_cmp);
        v[v.len() / 2]
    };
    Vec3::new(med(|p| p.x), med(|p| p.y), med(|p| p.z))
}

const RAW_COLOR: egui::Color32 = egui::Color32::from_rgb(90, 160, 255);
const LOSSY_COLOR: egui::Color32 = egui::Color32::from_rgb(255, 145, 40);
const THRESHOLD_COLOR: egui::Color32 = egui::Color32::from_rgb(230, 70, 70);

impl AppState {
    pub(super) fn detail_ui(&mut self, ui: &mut egui::Ui) {
        self.detail.refresh(&self.library);
        let Some(key) = self.detail.selected.clone() else {
            return;
        };
        let row = self.library.row(&key).cloned();
        let threshold = self.persisted.settings.error_threshold_cm as f64;
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
                    self.detail.close();
                }
                if ui
                    .button("Compare presets…")
                    .on_hover_text(
                        "Compress this clip with two presets and compare before keeping one",
                    )
                    .clicked()
                {
                    self.open_ab(&key);
                }
            });
        });
        if self.detail.selected.is_none() {
            return;
        }
        // A scalar track list has no skeleton: its own view (per-track error vs precision).
        let report = row.as_ref().and_then(|r| r.report());
        if super::scalar_view::is_scalar_row(report, self.detail.error.as_deref()) {
            let good = report.filter(|r| r.error.is_none());
            super::scalar_view::scalar_detail_ui(ui, &key.path, good);
            return;
        }
        if let Some(r) = row.as_ref().and_then(|r| r.report()) {
            ui.horizontal_wrapped(|ui| {
                if let Some(e) = &r.error {
                    ui.colored_label(ui.visuals().error_fg_color, format!("Failed: {e}"));
                } else {
                    ui.label(format!(
                        "{} to {} ({:.1}×) · max error {:.4} cm (mean {:.5}) · worst bone {} at sample {} · {} segments · {:.2} ms",
                        super::fmt_bytes(r.raw_bytes),
                        super::fmt_bytes(r.compressed_bytes),
                        r.ratio,
                        r.max_error_cm,
                        r.mean_error_cm,
                        r.worst_bone.as_deref().unwrap_or("—"),
                        r.worst_sample.map_or("—".into(), |s| s.to_string()),
                        r.segments,
                        r.compress_ms
                    ));
                }
            });
        } else {
            ui.weak("Not compressed yet: press Compress to see its error and bit rates.");
        }
        // A failed clip's report already says why: its reading error would say it again.
        let failed = report.is_some_and(|r| r.error.is_some());
        if let Some(e) = self.detail.error.as_ref().filter(|_| !failed) {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        let data = self.detail.data.clone().filter(|d| d.key == key);
        if let Some(n) = data.as_ref().and_then(|d| d.note.as_ref()) {
            ui.colored_label(ui.visuals().warn_fg_color, n);
        }
        if data.is_none() && self.detail.loading() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Loading clip…");
            });
        }
        ui.separator();
        let avail = ui.available_size();
        let col_w = ((avail.x - 24.0) / 3.0).max(200.0);
        // The per-bone table's header sits above the error plots: keep the column within the
        // window (an overflowing column pushed the skeleton viewer's controls out of reach).
        let bone_header_h = if self.detail.bones.is_some() {
            28.0
        } else {
            0.0
        };
        let plot_h = ((avail.y - 60.0 - bone_header_h) / 2.0).max(80.0);
        ui.horizontal_top(|ui| {
            ui.allocate_ui(egui::vec2(col_w, avail.y), |ui| {
                ui.vertical(|ui| {
                    self.bone_table_ui(ui, &key);
                    self.error_plots(ui, data.as_deref(), threshold, plot_h);
                });
            });
            ui.separator();
            ui.allocate_ui(egui::vec2(col_w, avail.y), |ui| {
                ui.vertical(|ui| {
                    ui.label(egui::RichText::new("Skeleton (raw vs decompressed)").strong());
                    match &data {
                        Some(d) => skeleton_view::viewer_ui(ui, &mut self.detail.viewer, d),
                        None => {
                            ui.weak("No pose to show yet.");
                        }
                    }
                });
            });
            ui.separator();
            ui.allocate_ui(egui::vec2(ui.available_width(), avail.y), |ui| {
                ui.vertical(|ui| {
                    bit_rate_plots(
                        ui,
                        row.as_ref().and_then(|r| r.good_report()),
                        &self.library,
                        plot_h,
                    );
                });
            });
        });
    }

    /// The per-bone threshold table (collapsed by default): a threshold and a shell distance per
    /// bone, saved into the clip folder's `clipforge.toml`.
    fn bone_table_ui(&mut self, ui: &mut egui::Ui, key: &RowKey) {
        let Some(table) = self.detail.bones.as_mut().filter(|t| &t.key == key) else {
            return;
        };
        egui::CollapsingHeader::new("Per-bone thresholds")
            .id_salt("cf_bone_table")
            .default_open(false)
            .show(ui, |ui| {
                ui.weak(format!(
                    "cm; empty: the clip's own. Saved into {} (they win over its [[bone]] tables and the clip file's precision).",
                    table.file.display()
                ));
                egui::ScrollArea::vertical()
                    .id_salt("cf_bone_rows")
                    .max_height(160.0)
                    .show(ui, |ui| {
                        egui::Grid::new("cf_bone_grid").striped(true).show(ui, |ui| {
                            ui.strong("bone");
                            ui.strong("threshold");
                            ui.strong("shell");
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
                ui.horizontal(|ui| {
                    if ui
                        .button("Save to clipforge.toml")
                        .on_hover_text("Write these per-bone settings into the folder's clipforge.toml")
                        .clicked()
                    {
                        table.save();
                    }
                    match &table.message {
                        Some(Ok(m)) => {
                            ui.label(m);
                        }
                        Some(Err(e)) => {
                            ui.colored_label(ui.visuals().error_fg_color, e);
                        }
                        None => {}
                    }
                });
            });
    }

    fn error_plots(
        &mut self,
        ui: &mut egui::Ui,
        data: Option<&DetailData>,
        threshold: f64,
        plot_h: f32,
    ) {
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new("Max error over time (cm)").strong());
            ui.weak("red: threshold · click: jump");
        });
        let Some(d) =
            data.filter(|d| d.lossy_pos.is_some() || d.per_sample_err.iter().any(|&e| e > 0.0))
        else {
            let failed = (self.detail.selected.as_ref())
                .and_then(|k| self.library.row(k))
                .and_then(|r| r.report())
                .is_some_and(|r| r.error.is_some());
            if !failed {
                ui.weak("Compress this clip to see its error.");
            }
            return;
        };
        let rate = d.sample_rate as f64;
        let pts: PlotPoints = d
            .per_sample_err
            .iter()
            .enumerate()
            .map(|(i, &e)| [i as f64 / rate, e])
            .collect();
        let cursor_t = self.detail.viewer.sample as f64 / rate;
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
            self.detail.viewer.sample = s as f32;
            self.detail.viewer.playing = false;
        }
        let limits = d.per_bone_limit.clone();
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new("Max error per bone (cm)").strong());
            ui.weak(if limits.is_empty() {
                "red: worst bone · click: pick"
            } else {
                "red: worst bone, each bone's own threshold · click: pick"
            });
        });
        let focus = self.detail.viewer.focus_bone;
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
                self.detail.viewer.focus_bone = Some(b);
                self.detail.viewer.sample = d.per_bone_worst_sample[b] as f32;
                self.detail.viewer.playing = false;
            }
        }
    }
}

const CONSTANT_COLOR: egui::Color32 = egui::Color32::from_rgb(130, 130, 130);
const DEFAULT_COLOR: egui::Color32 = egui::Color32::from_rgb(175, 175, 175);

/// A bit-rate histogram: "constant" sub-tracks at x = −2, "default" ones at −1 (grey, named in
/// the legend), then one bar per bit width. Hovering names the bar under the pointer in a
/// tooltip (egui_plot's own bar label is dim text over the bars, clipped above the tallest).
pub(super) fn bit_rate_plot(
    ui: &mut egui::Ui,
    id: &str,
    (hist, constant, default): (&[u32], u32, u32),
    [w, h]: [f32; 2],
) {
    let counts: Vec<(i64, u32)> = [(-2, constant), (-1, default)]
        .into_iter()
        .chain(hist.iter().enumerate().map(|(b, &n)| (b as i64, n)))
        .collect();
    let bar = |x: i64, n: u32, c: egui::Color32| Bar::new(x as f64, n as f64).fill(c).width(0.8);
    let animated: Vec<Bar> = counts
        .iter()
        .filter(|&&(x, n)| x >= 0 && n > 0)
        .map(|&(x, n)| bar(x, n, LOSSY_COLOR))
        .collect();
    let max_bits = counts
        .iter()
        .filter(|&&(x, n)| x >= 0 && n > 0)
        .map(|&(x, _)| x)
        .max()
        .unwrap_or(16)
        .max(8);
    Plot::new(id)
        .width(w)
        .height(h)
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .include_y(0.0)
        .include_x(-2.5)
        .include_x(max_bits as f64 + 0.5)
        .include_y(counts.iter().map(|&(_, n)| n).max().unwrap_or(0) as f64 * 1.1)
        .x_axis_label("bits per component")
        .y_axis_label("sub-tracks")
        .x_grid_spacer(bit_rate_ticks)
        .x_axis_formatter(|m, _| bit_rate_axis_label(m.value))
        .y_grid_spacer(count_ticks)
        .y_axis_formatter(tick_label)
        .label_formatter(move |hp| {
            let x = hover_point(hp).x.round() as i64;
            let &(_, n) = counts.iter().find(|&&(b, _)| b == x)?;
            Some(match x {
                -2 => format!("constant sub-tracks: {n}"),
                -1 => format!("default sub-tracks: {n}"),
                b => format!("{b} bits: {n} sub-tracks"),
            })
        })
        .show(ui, |pui| {
            pui.bar_chart(
                BarChart::new("constant", vec![bar(-2, constant, CONSTANT_COLOR)])
                    .color(CONSTANT_COLOR)
                    .allow_hover(false),
            );
            pui.bar_chart(
                BarChart::new("default", vec![bar(-1, default, DEFAULT_COLOR)])
                    .color(DEFAULT_COLOR)
                    .allow_hover(false),
            );
            pui.bar_chart(
                BarChart::new("animated", animated)
                    .color(LOSSY_COLOR)
                    .allow_hover(false),
            );
        });
}

/// The colour key of the bit-rate histograms (a legend inside would cover the bars).
pub(super) fn bit_rate_key(ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for (c, name) in [
            (CONSTANT_COLOR, "constant"),
            (DEFAULT_COLOR, "default"),
            (LOSSY_COLOR, "animated (by bit width)"),
        ] {
            let (r, _) = ui.allocate_exact_size(egui::vec2(9.0, 9.0), egui::Sense::hover());
            ui.painter().rect_filled(r, 1.0, c);
            ui.label(egui::RichText::new(name).small());
        }
    });
}

/// The plot position under the pointer, wherever it is.
pub(super) fn hover_point(h: &HoverPosition<'_>) -> egui_plot::PlotPoint {
    match h {
        HoverPosition::NearDataPoint { position, .. } | HoverPosition::Elsewhere { position } => {
            *position
        }
    }
}

/// 1, 2 or 5 × a power of ten, at least `x`.
fn nice_step(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&v| v >= x * 0.999)
        .unwrap_or(10.0 * p)
}

/// Evenly spaced ticks, about `n` over the visible range.
fn ticks(input: GridInput, n: f64, min_step: f64) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) {
        return Vec::new();
    }
    // Never closer than egui_plot's label spacing allows (it hides labels under ~20 px).
    let step = nice_step((span / n).max(input.base_step_size * 3.0)).max(min_step);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last.min(first + 100))
        .map(|i| GridMark {
            value: i as f64 * step,
            step_size: step,
        })
        .collect()
}

/// About six labelled ticks (egui_plot's default labels only 0 and 0.01 on small plots).
pub(super) fn value_ticks(input: GridInput) -> Vec<GridMark> {
    ticks(input, 6.0, 0.0)
}

/// Ticks for counts: whole numbers only.
pub(super) fn count_ticks(input: GridInput) -> Vec<GridMark> {
    ticks(input, 6.0, 1.0)
}

/// X ticks of the bit-rate histograms: bit widths, labelled every 8 (egui_plot labels X ticks
/// only 60 px apart); the constant and default bars are named in the legend.
fn bit_rate_ticks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    (lo.ceil().max(0.0) as i64..=hi.floor().min(64.0) as i64)
        .map(|v| GridMark {
            value: v as f64,
            step_size: match v {
                _ if v % 8 == 0 => 8.0,
                _ if v % 4 == 0 => 4.0,
                _ => 1.0,
            },
        })
        .collect()
}

/// A tick's label with as many decimals as its step needs.
pub(super) fn tick_label(m: GridMark, _: &std::ops::RangeInclusive<f64>) -> String {
    let decimals = (-m.step_size.log10().floor()).max(0.0) as usize;
    format!("{:.*}", decimals, m.value)
}

/// Sum of the bit-rate histograms of every compressed clip.
pub fn batch_histogram(lib: &Library) -> (Vec<u32>, u32, u32) {
    let mut hist = vec![0u32; 33];
    let (mut c, mut d) = (0, 0);
    for r in lib.compressed_rows() {
        let rep = r.good_report().expect("compressed rows have reports");
        for (i, &n) in rep.bit_rate_histogram.iter().enumerate() {
            if i >= hist.len() {
                hist.resize(i + 1, 0);
            }
            hist[i] += n;
        }
        c += rep.constant_subtracks;
        d += rep.default_subtracks;
    }
    (hist, c, d)
}

fn bit_rate_plots(ui: &mut egui::Ui, report: Option<&ClipReport>, lib: &Library, h: f32) {
    ui.label(egui::RichText::new("Bit rates (this clip)").strong());
    let w = ui.available_width();
    match report {
        Some(r) => {
            ui.weak(format!(
                "{} animated · {} constant · {} default sub-tracks · {} segments",
                r.animated_subtracks, r.constant_subtracks, r.default_subtracks, r.segments
            ));
            bit_rate_key(ui);
            bit_rate_plot(
                ui,
                "cf_bits_clip",
                (
                    &r.bit_rate_histogram,
                    r.constant_subtracks,
                    r.default_subtracks,
                ),
                [w, h - 36.0],
            );
        }
        None => {
            ui.weak("Not compressed yet.");
        }
    }
    ui.label(egui::RichText::new("Bit rates (whole batch)").strong());
    let (hist, c, d) = batch_histogram(lib);
    bit_rate_plot(ui, "cf_bits_batch", (&hist, c, d), [w, h]);
}

/// X-axis label of the bit-rate histograms: bits per component (the bars left of 0, constant
/// and default sub-tracks, are named in the legend).
pub(super) fn bit_rate_axis_label(v: f64) -> String {
    if (v - v.round()).abs() > 1e-6 {
        String::new()
    } else if v >= 0.0 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggested_magnify_makes_the_error_a_visible_share_of_the_clip() {
        // 0.001 units of error on a 1-unit clip: ×60 would do, rounded up to ×100.
        assert_eq!(suggest_magnify(0.001, 1.0), 100.0);
        for (off, r) in [(0.0003, 90.0), (0.02, 1.5), (1e-9, 1.0), (2.0, 1.0)] {
            let m = suggest_magnify(off, r);
            assert!((1.0..=10000.0).contains(&m), "{m}");
            assert!(
                m == 10000.0 || m == 1.0 || off * m >= MAGNIFIED_ERROR_SHARE * r * 0.999,
                "{off} × {m} on radius {r}"
            );
        }
        assert_eq!(suggest_magnify(0.0, 1.0), 1.0);
    }

    #[test]
    fn value_ticks_are_many_enough_and_labelled_with_their_precision() {
        let input = GridInput {
            bounds: (0.0, 0.011),
            base_step_size: 0.0001,
        };
        let marks = value_ticks(input);
        assert!(marks.len() >= 5, "{} ticks", marks.len());
        let labels: Vec<String> = marks.iter().map(|m| tick_label(*m, &(0.0..=1.0))).collect();
        assert_eq!(labels[..3], ["0.000", "0.002", "0.004"]);
        assert!(
            count_ticks(GridInput {
                bounds: (0.0, 3.0),
                base_step_size: 0.01
            })
            .iter()
            .all(|m| m.value.fract() == 0.0)
        );
    }
}
