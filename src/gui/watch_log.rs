//! Watched folders and the event log.
//!
//! Each watched input folder has a thread that waits for file-system events (notify +
//! debouncer) and hands every new or changed clip file to `pipeline::run_batch` (same engine,
//! same skip cache as "Compress all"); each clip's outcome lands in the event log.
//!
//! ADAPTER: the contract in `pipeline` has no watch API yet; [`spawn_watcher`] is the small
//! part that would be replaced by `pipeline::watch` when it lands (the UI only sees [`WatchEvent`]s).

use super::Persisted;
use super::settings::SettingsState;
use crate::anim::formats::ClipFormat;
use crate::pipeline::{self, BatchOptions, CancelToken, ClipFile, Progress};
use eframe::egui;
use notify_debouncer_full::notify::{EventKind, RecursiveMode};
use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchKind {
    Info,
    Compressed,
    Skipped,
    Failed,
}

#[derive(Clone, Debug)]
pub struct WatchEvent {
    /// Seconds since the Unix epoch.
    pub time: SystemTime,
    pub folder: String,
    pub kind: WatchKind,
    pub message: String,
}

struct Watcher {
    folder: String,
    cancel: CancelToken,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

pub struct WatchState {
    watchers: Vec<Watcher>,
    tx: Sender<WatchEvent>,
    rx: Receiver<WatchEvent>,
    pub log: VecDeque<WatchEvent>,
    pub filter_failed_only: bool,
}

impl Default for WatchState {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel();
        Self {
            watchers: Vec::new(),
            tx,
            rx,
            log: VecDeque::new(),
            filter_failed_only: false,
        }
    }
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
        let cancel = CancelToken::default();
        let options = BatchOptions {
            settings: settings.compression(),
            output_root: PathBuf::from(output.trim()),
            jobs: settings.jobs,
            use_skip_cache: true,
        };
        match spawn_watcher(
            PathBuf::from(folder),
            options,
            cancel.clone(),
            self.tx.clone(),
        ) {
            Ok(()) => self.watchers.push(Watcher {
                folder: folder.to_string(),
                cancel,
            }),
            Err(e) => self.push(event(
                folder,
                WatchKind::Failed,
                format!("cannot watch: {e}"),
            )),
        }
    }

    pub fn stop(&mut self, folder: &str) {
        let before = self.watchers.len();
        self.watchers.retain(|w| w.folder != folder);
        if self.watchers.len() != before {
            self.push(event(folder, WatchKind::Info, "stopped watching".into()));
        }
    }

    pub fn stop_all(&mut self) {
        self.watchers.clear();
    }

    fn push(&mut self, e: WatchEvent) {
        if self.log.len() >= LOG_LIMIT {
            self.log.pop_front();
        }
        self.log.push_back(e);
    }

    pub fn poll(&mut self) {
        while let Ok(e) = self.rx.try_recv() {
            self.push(e);
        }
    }
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

/// Starts a watcher thread: a catch-up batch over the whole folder, then one batch per burst of
/// file-system events. Outputs under the input folder are ignored (no feedback loop).
fn spawn_watcher(
    root: PathBuf,
    options: BatchOptions,
    cancel: CancelToken,
    log: Sender<WatchEvent>,
) -> Result<(), String> {
    let (ev_tx, ev_rx) = mpsc::channel();
    let mut debouncer =
        notify_debouncer_full::new_debouncer(Duration::from_millis(400), None, ev_tx)
            .map_err(|e| e.to_string())?;
    debouncer
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|e| e.to_string())?;
    let folder = root.display().to_string();
    std::thread::Builder::new()
        .name("clipforge-watch".into())
        .spawn(move || {
            let _keep = debouncer;
            let out_root = options
                .output_root
                .canonicalize()
                .unwrap_or(options.output_root.clone());
            let _ = log.send(event(
                &folder,
                WatchKind::Info,
                format!("watching → {}", options.output_root.display()),
            ));
            let run = |files: Vec<ClipFile>| {
                if files.is_empty() {
                    return;
                }
                let progress = Progress::default();
                let report = pipeline::run_batch(&files, &options, &progress, &cancel);
                for c in report.clips {
                    let name = Path::new(&c.input)
                        .strip_prefix(&root)
                        .map(|p| p.display().to_string())
                        .unwrap_or(c.input.clone());
                    let clip = if c.clip.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", c.clip)
                    };
                    let (kind, msg) = match (&c.error, c.skipped) {
                        (Some(e), _) => (WatchKind::Failed, format!("{name}{clip}: {e}")),
                        (None, true) => (WatchKind::Skipped, format!("{name}{clip}: up to date")),
                        (None, false) => (
                            WatchKind::Compressed,
                            format!(
                                "{name}{clip}: {} → {} ({:.1}×, max error {:.4} cm)",
                                super::fmt_bytes(c.raw_bytes),
                                super::fmt_bytes(c.compressed_bytes),
                                c.ratio,
                                c.max_error_cm
                            ),
                        ),
                    };
                    let _ = log.send(event(&folder, kind, msg));
                }
            };
            let in_output = |p: &Path| {
                let c = p.canonicalize().unwrap_or(p.to_path_buf());
                c.starts_with(&out_root)
            };
            run(pipeline::scan(&root)
                .into_iter()
                .filter(|f| !in_output(&f.path))
                .collect());
            loop {
                if cancel.is_cancelled() {
                    return;
                }
                let events = match ev_rx.recv_timeout(Duration::from_millis(200)) {
                    Ok(Ok(events)) => events,
                    Ok(Err(errors)) => {
                        for e in errors {
                            let _ = log.send(event(
                                &folder,
                                WatchKind::Failed,
                                format!("watch error: {e}"),
                            ));
                        }
                        continue;
                    }
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return,
                };
                let mut paths = BTreeSet::new();
                for e in events {
                    if matches!(e.event.kind, EventKind::Create(_) | EventKind::Modify(_)) {
                        paths.extend(e.event.paths.iter().cloned());
                    }
                }
                let mut files = Vec::new();
                let mut seen = BTreeSet::new();
                for p in paths {
                    if in_output(&p) {
                        continue;
                    }
                    if p.is_dir() {
                        // A new folder: its files may have been created before the watch saw it.
                        for f in pipeline::scan(&p) {
                            if seen.insert(f.path.clone()) {
                                files.push(relative_to(f, &root));
                            }
                        }
                    } else if let Some(format) = ClipFormat::from_path(&p)
                        && p.is_file()
                        && seen.insert(p.clone())
                    {
                        let size_bytes = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
                        let relative = p.strip_prefix(&root).unwrap_or(&p).to_path_buf();
                        files.push(ClipFile {
                            path: p,
                            relative,
                            format,
                            size_bytes,
                        });
                    }
                }
                run(files);
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(())
}

fn relative_to(mut f: ClipFile, root: &Path) -> ClipFile {
    if let Ok(r) = f.path.strip_prefix(root) {
        f.relative = r.to_path_buf();
    }
    f
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
        .column(egui_extras::Column::initial(260.0).clip(true))
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
