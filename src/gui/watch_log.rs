//! Watched folders and the event log.
//!
//! Each watched input folder runs `pipeline::watch` (the same engine and skip cache as
//! "Compress all", and the same as `clipforge watch IN -o OUT`); the UI drains its events every
//! frame into the log, and hands their report rows to the library table.

use super::Persisted;
use super::settings::SettingsState;
use crate::pipeline::report::ClipReport;
use crate::pipeline::watch::{WatchEventKind, WatchHandle, WatchOptions, start_watch};
use eframe::egui;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchKind {
    Info,
    Compressed,
    Skipped,
    Failed,
    Removed,
}

#[derive(Clone, Debug)]
pub struct WatchEvent {
    pub time: SystemTime,
    pub folder: String,
    pub kind: WatchKind,
    pub message: String,
}

struct Watcher {
    folder: String,
    handle: WatchHandle,
    /// What it was started with (restarted when the user changes them).
    settings: SettingsState,
    output: String,
}

#[derive(Default)]
pub struct WatchState {
    watchers: Vec<Watcher>,
    pub log: VecDeque<WatchEvent>,
    pub filter_failed_only: bool,
}

const LOG_LIMIT: usize = 5000;

impl WatchState {
    pub fn is_watching(&self, folder: &str) -> bool {
        self.watchers.iter().any(|w| w.folder == folder)
    }

    pub fn any_active(&self) -> bool {
        !self.watchers.is_empty()
    }

    pub fn folders(&self) -> Vec<String> {
        self.watchers.iter().map(|w| w.folder.clone()).collect()
    }

    pub fn start(&mut self, folder: &str, output: &str, settings: &SettingsState) {
        if self.is_watching(folder) {
            return;
        }
        let mut opts = WatchOptions::new(settings.compression(), PathBuf::from(output.trim()));
        opts.batch.jobs = super::jobs::background_workers(settings.jobs);
        opts.low_priority = true;
        match start_watch(Path::new(folder), opts) {
            Ok(handle) => {
                self.push(event(
                    folder,
                    WatchKind::Info,
                    format!("watching, output to {}", handle.output_root().display()),
                ));
                self.watchers.push(Watcher {
                    folder: folder.to_string(),
                    handle,
                    settings: settings.clone(),
                    output: output.to_string(),
                });
            }
            Err(e) => self.push(event(folder, WatchKind::Failed, e)),
        }
    }

    pub fn stop(&mut self, folder: &str) {
        let before = self.watchers.len();
        self.watchers.retain(|w| w.folder != folder);
        if self.watchers.len() != before {
            self.push(event(folder, WatchKind::Info, "stopped watching".into()));
        }
    }

    /// Restarts the watchers whose settings or output folder are not the current ones.
    pub fn sync(&mut self, output: &str, settings: &SettingsState) {
        let outdated: Vec<String> = self
            .watchers
            .iter()
            .filter(|w| w.output != output || w.settings.compression() != settings.compression())
            .map(|w| w.folder.clone())
            .collect();
        for f in outdated {
            self.watchers.retain(|w| w.folder != f);
            self.push(event(
                &f,
                WatchKind::Info,
                "settings or output changed: restarting".into(),
            ));
            self.start(&f, output, settings);
        }
    }

    pub fn stop_all(&mut self) {
        for w in &mut self.watchers {
            w.handle.stop();
        }
        self.watchers.clear();
    }

    fn push(&mut self, e: WatchEvent) {
        if self.log.len() >= LOG_LIMIT {
            self.log.pop_front();
        }
        self.log.push_back(e);
    }

    /// Drains the watchers' events into the log; returns their report rows (one Vec per file).
    pub fn poll(&mut self) -> Vec<Vec<ClipReport>> {
        let mut new = Vec::new();
        let mut reports = Vec::new();
        for w in &self.watchers {
            let root = w.handle.input_root().to_path_buf();
            while let Ok(e) = w.handle.events().try_recv() {
                let name = e
                    .path
                    .strip_prefix(&root)
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| e.path.display().to_string());
                let (kind, message) = match &e.kind {
                    WatchEventKind::Compressed => {
                        (WatchKind::Compressed, describe(&name, &e.reports))
                    }
                    WatchEventKind::Skipped => (WatchKind::Skipped, format!("{name}: up to date")),
                    WatchEventKind::Failed(m) => {
                        // The message usually starts with the full path: keep the short name only.
                        let full = e.path.display().to_string();
                        let m = m
                            .strip_prefix(&full)
                            .map(|r| r.trim_start_matches(':').trim_start())
                            .unwrap_or(m);
                        (WatchKind::Failed, format!("{name}: {m}"))
                    }
                    WatchEventKind::Removed => (
                        WatchKind::Removed,
                        format!("{name}: input gone, {} output(s) deleted", e.outputs.len()),
                    ),
                    WatchEventKind::WatchError(m) => {
                        (WatchKind::Failed, format!("watch error: {m}"))
                    }
                };
                new.push(WatchEvent {
                    time: e.time,
                    folder: w.folder.clone(),
                    kind,
                    message,
                });
                if !e.reports.is_empty() {
                    reports.push(e.reports);
                }
            }
        }
        for e in new {
            self.push(e);
        }
        reports
    }
}

fn describe(name: &str, reports: &[ClipReport]) -> String {
    let raw: u64 = reports.iter().map(|r| r.raw_bytes).sum();
    let comp: u64 = reports.iter().map(|r| r.compressed_bytes).sum();
    let err = reports.iter().map(|r| r.max_error_cm).fold(0.0, f64::max);
    let ms: f64 = reports.iter().map(|r| r.compress_ms).sum();
    format!(
        "{name}: {} clip(s), {} to {} ({:.1}×), max error {:.4} cm, {:.1} ms",
        reports.len(),
        super::fmt_bytes(raw),
        super::fmt_bytes(comp),
        if comp > 0 {
            raw as f64 / comp as f64
        } else {
            0.0
        },
        err,
        ms
    )
}

fn event(folder: &str, kind: WatchKind, message: String) -> WatchEvent {
    WatchEvent {
        time: SystemTime::now(),
        folder: folder.to_string(),
        kind,
        message,
    }
}

/// "hh:mm:ss" UTC.
pub fn clock(t: SystemTime) -> String {
    let s = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
        % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// The Watch tab: folders with their toggles, and the event log.
pub fn watch_ui(
    ui: &mut egui::Ui,
    w: &mut WatchState,
    p: &Persisted,
    toggle: &mut Option<(String, bool)>,
) {
    ui.heading("Watched folders");
    ui.label(format!(
        "Every clip dropped into a watched folder is compressed into the output folder ({}). \
         Headless: `clipforge watch IN -o OUT`.",
        p.output_dir
    ));
    ui.add_space(4.0);
    let mut folders: Vec<String> = p.recent_inputs.clone();
    for f in w
        .folders()
        .into_iter()
        .chain(std::iter::once(p.input_dir.clone()))
    {
        if !f.trim().is_empty() && !folders.contains(&f) {
            folders.insert(0, f);
        }
    }
    egui::Grid::new("cf_watch_grid")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for f in &folders {
                let mut on = w.is_watching(f);
                if ui
                    .checkbox(&mut on, "")
                    .on_hover_text(format!("Watch {f}"))
                    .changed()
                {
                    *toggle = Some((f.clone(), on));
                }
                ui.label(f);
                ui.end_row();
            }
        });
    ui.add_space(8.0);
    ui.horizontal(|ui| {
        ui.heading("Event log");
        ui.checkbox(&mut w.filter_failed_only, "failures only");
        if ui.button("Clear").clicked() {
            w.log.clear();
        }
    });
    let rows: Vec<&WatchEvent> = w
        .log
        .iter()
        .rev()
        .filter(|e| !w.filter_failed_only || e.kind == WatchKind::Failed)
        .collect();
    if rows.is_empty() {
        ui.weak("No events yet.");
        return;
    }
    let h = egui::TextStyle::Body.resolve(ui.style()).size + 4.0;
    egui_extras::TableBuilder::new(ui)
        .id_salt("cf_watch_log")
        .striped(true)
        .column(egui_extras::Column::exact(70.0))
        .column(egui_extras::Column::exact(90.0))
        .column(egui_extras::Column::initial(190.0).clip(true))
        .column(egui_extras::Column::remainder().clip(true))
        .header(h, |mut r| {
            for t in ["Time (UTC)", "Event", "Folder", "Details"] {
                r.col(|ui| {
                    ui.strong(t);
                });
            }
        })
        .body(|body| {
            body.rows(h, rows.len(), |mut r| {
                let e = rows[r.index()];
                let (txt, col) = match e.kind {
                    WatchKind::Info => ("info", ui_gray()),
                    WatchKind::Compressed => ("compressed", egui::Color32::from_rgb(90, 170, 90)),
                    WatchKind::Skipped => ("skipped", ui_gray()),
                    WatchKind::Removed => ("removed", ui_gray()),
                    WatchKind::Failed => ("failed", egui::Color32::from_rgb(230, 80, 80)),
                };
                r.col(|ui| {
                    ui.label(clock(e.time));
                });
                r.col(|ui| {
                    ui.colored_label(col, txt);
                });
                r.col(|ui| {
                    ui.label(&e.folder);
                });
                r.col(|ui| {
                    ui.label(&e.message);
                });
            });
        });
}

fn ui_gray() -> egui::Color32 {
    egui::Color32::from_gray(150)
}
