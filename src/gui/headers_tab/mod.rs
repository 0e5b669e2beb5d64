//! The "Headers" tab: the C/C++ header profiler's view over [`crate::headers`]. Project editor
//! (roots, include dirs, defines, compile_commands.json, std, compiler) on the left; Scan /
//! Clean rescan / Cancel with progress, the watch toggle, the shown mode and the summary on top;
//! the per-file table with the detail view (includers / includes, why-chain, what-if), or the
//! missing includes, errors and cycles; export at the bottom. The scan and the watcher live in
//! [`super::headers_job`]; this module only draws and reacts. This file holds the tab's settings and
//! state, the dialogs, the scan / watch plumbing and the layout; each panel is drawn by its own
//! file (`project`, `toolbar`, `seconds`, `table`, `detail`, `issues`, `cuts`, `export`).

mod cuts;
mod detail;
mod export;
mod issues;
mod project;
mod seconds;
mod table;
mod toolbar;

use super::fmt_count;
use super::headers_job::{
    HeadersJob, HeadersProject, JobPoll, ScanOutcome, Shown, default_selection,
};
use crate::headers::report::{Detail, WhatIfError};
use crate::headers::{ChainStep, Mode, Report, ScanOptions, Scanner, WhatIfResult};
use crate::watcher::Watcher;
use eframe::egui;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Table columns (also the sort keys).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeaderColumn {
    Path,
    Lines,
    Tus,
    Contributed,
    TransitiveIncludes,
    TransitiveLines,
    IncludedBy,
    /// TU rebuilds its changes caused over the history period (shown with a period).
    Rebuilds,
    /// Measured seconds the file adds to the build (shown once measured).
    Seconds,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderSort {
    pub column: HeaderColumn,
    pub ascending: bool,
}

impl Default for HeaderSort {
    fn default() -> Self {
        Self {
            column: HeaderColumn::Contributed,
            ascending: false,
        }
    }
}

/// What the central area shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum HeadersView {
    #[default]
    Files,
    Missing,
    Errors,
    Cycles,
    /// The saving of every `#include` (`headers::cuts`): scans made while it is shown compute
    /// them, confirming the best [`CUTS_CONFIRMED`] exactly.
    Cuts,
}

/// Cuts the Top cuts view has confirmed by evaluating their TUs again.
pub const CUTS_CONFIRMED: usize = 10;

/// The tab's persisted settings (inside [`super::Persisted`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct HeadersSettings {
    pub project: HeadersProject,
    /// Both modes are computed; this one fills the table.
    pub show_mode: Mode,
    pub watch: bool,
    /// Export path without extension (.json / .csv / .dot added).
    pub export_path: String,
    pub sort: HeaderSort,
    pub view: HeadersView,
    /// TUs "Measure" compiles, and "Verify" of the PCH advice.
    pub measure_tus: usize,
    pub verify_tus: usize,
}

impl Default for HeadersSettings {
    fn default() -> Self {
        Self {
            project: HeadersProject::default(),
            show_mode: Mode::Preprocessed,
            watch: false,
            export_path: default_export_base(),
            sort: HeaderSort::default(),
            view: HeadersView::Files,
            measure_tus: 10,
            verify_tus: 6,
        }
    }
}

/// Where Export writes until the user types a path (`.json` / `.csv` / `.dot` appended):
/// `clipforge/headers-report` in the user's own cache folder, like the Clips tab's first
/// output, never a folder every user shares such as `/tmp`. Empty (Export asks for a path)
/// when there is no such folder.
fn default_export_base() -> String {
    crate::gui::util::user_cache_dir(|k| std::env::var_os(k), std::env::home_dir())
        .map(|d| {
            d.join("clipforge")
                .join("headers-report")
                .display()
                .to_string()
        })
        .unwrap_or_default()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pick {
    Root,
    Include,
    CompDb,
}

/// An include edge picked in the detail view (for "what if it were removed").
#[derive(Clone, Debug, PartialEq)]
pub struct PickedEdge {
    pub from: String,
    pub to: String,
}

/// The tab's runtime state.
pub struct HeadersState {
    /// The session kept between scans (None while the worker holds it).
    scanner: Option<Scanner>,
    pub job: Option<HeadersJob>,
    pub outcome: Option<ScanOutcome>,
    /// The project `outcome` is the scan of, and the one the running job scans: a scan of
    /// another project that cannot run or fails must not leave the old tree's figures under
    /// its error as if they were the new one's.
    outcome_project: Option<HeadersProject>,
    job_project: Option<HeadersProject>,
    /// Why the last scan did not run or failed.
    pub error: Option<String>,
    /// Export results and other one-liners (text, is_error).
    pub message: Option<(String, bool)>,
    pub filter: String,
    /// Indices into the shown report's `headers`, sorted and filtered.
    view: Vec<usize>,
    view_key: Option<(u64, Mode, String, HeaderSort)>,
    /// Bumped per finished scan.
    pub generation: u64,
    pub selected: Option<String>,
    /// Previous selections (Back).
    pub history: Vec<String>,
    pub picked: Option<PickedEdge>,
    pub from_tu: String,
    pub why: Option<Result<Vec<ChainStep>, crate::headers::WhyError>>,
    why_key: Option<(u64, Mode, String, String)>,
    pub what_if: Option<(String, Result<WhatIfResult, WhatIfError>)>,
    detail: Option<((u64, Mode, String), Detail)>,
    dialog: Option<mpsc::Receiver<(Pick, Option<PathBuf>)>>,
    watcher: Option<Watcher>,
    /// The project the watched folders were last worked out for, and when (they are stat'ed,
    /// so not every frame).
    watch_checked: Option<(HeadersProject, Instant)>,
    pending_rescan: bool,
    shown_once: bool,
    ctx: Option<egui::Context>,
    /// The row picked in Top cuts, by what it edits (not its row: a rescan reorders the list),
    /// with what it shows: the TUs it touches and why the first of them includes the file
    /// (keyed by scan generation and the cut).
    pub cut_selected: Option<cuts::CutKey>,
    cut_detail: Option<((u64, cuts::CutKey), cuts::CutDetail)>,
    /// The Top cuts list's filter (on the directive's text).
    pub cut_filter: String,
    /// Clang runs: Measure, Verify PCH (module `seconds`), and the costs of the last Measure
    /// with the scan generation they belong to.
    pub measure: Option<super::headers_job::CompileJob<super::headers_job::Measured>>,
    pub verify: Option<super::headers_job::CompileJob<crate::headers::report::PchCheck>>,
    pub timing: Option<(u64, std::sync::Arc<crate::headers::timing::Timing>)>,
}

impl Default for HeadersState {
    fn default() -> Self {
        Self {
            scanner: Some(Scanner::new()),
            job: None,
            outcome: None,
            outcome_project: None,
            job_project: None,
            error: None,
            message: None,
            filter: String::new(),
            view: Vec::new(),
            view_key: None,
            generation: 0,
            selected: None,
            history: Vec::new(),
            picked: None,
            from_tu: String::new(),
            why: None,
            why_key: None,
            what_if: None,
            detail: None,
            dialog: None,
            watcher: None,
            watch_checked: None,
            pending_rescan: false,
            shown_once: false,
            ctx: None,
            cut_selected: None,
            cut_detail: None,
            cut_filter: String::new(),
            measure: None,
            verify: None,
            timing: None,
        }
    }
}

/// A right-aligned number cell.
fn num(ui: &mut egui::Ui, v: u64) {
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        // Clear of the next column's border (and of the scrollbar in the last one).
        ui.add_space(8.0);
        ui.label(fmt_count(v));
    });
}

impl HeadersState {
    /// True while a scan runs (or a watched change waits for one).
    pub fn busy(&self) -> bool {
        self.job.is_some() || self.pending_rescan
    }

    pub fn watching(&self) -> bool {
        self.watcher.is_some()
    }

    /// The report the table shows.
    pub fn report(&self, s: &HeadersSettings) -> Option<&Report> {
        self.outcome.as_ref().and_then(|o| o.report(s.show_mode))
    }

    /// Starts a scan (incremental unless `clean`); bad input is shown instead of scanned.
    pub fn start_scan(&mut self, s: &HeadersSettings, clean: bool) {
        if self.job.is_some() {
            return;
        }
        let project = match s.project.project() {
            Ok(p) => p,
            Err(e) => {
                self.error = Some(e);
                self.forget_other_project(&s.project);
                return;
            }
        };
        let opts = ScanOptions {
            mode: Mode::Preprocessed,
            both_modes: true,
            clean,
            use_disk_cache: s.project.disk_cache,
            cuts: (s.view == HeadersView::Cuts).then_some(CUTS_CONFIRMED),
            ..Default::default()
        };
        let scanner = self.scanner.take().unwrap_or_default();
        self.error = None;
        let shown = Shown {
            mode: s.show_mode,
            selected: self.selected.clone(),
            from_tu: self.from_tu.trim().to_string(),
        };
        self.job_project = Some(s.project.clone());
        self.job = Some(HeadersJob::start(
            scanner,
            project,
            opts,
            shown,
            s.project.churn_period.clone(),
            self.ctx.clone(),
        ));
    }

    pub fn cancel(&self) {
        if let Some(j) = &self.job {
            j.progress.cancel();
        }
    }

    /// Called every frame (whatever the tab): dialogs, the scan, the watcher.
    pub fn poll(&mut self, s: &mut HeadersSettings, ctx: &egui::Context) {
        if self.ctx.is_none() {
            self.ctx = Some(ctx.clone());
        }
        if let Some(rx) = &self.dialog {
            match rx.try_recv() {
                Ok((pick, got)) => {
                    self.dialog = None;
                    match got {
                        Some(p) => {
                            let p = p.display().to_string();
                            match pick {
                                Pick::Root => s.project.roots.push(p),
                                Pick::Include => s.project.include_dirs.push(p),
                                Pick::CompDb => s.project.compile_commands = p,
                            }
                        }
                        None => {
                            self.message = Some((
                                "Nothing chosen (or no file dialog on this desktop): type the path instead".into(),
                                false,
                            ))
                        }
                    }
                }
                Err(mpsc::TryRecvError::Disconnected) => self.dialog = None,
                Err(mpsc::TryRecvError::Empty) => {}
            }
        }
        if let Some(job) = &self.job
            && let JobPoll::Done(done) = job.poll()
        {
            let (scanner, res) = *done;
            self.scanner = Some(scanner);
            self.job = None;
            let scanned = self.job_project.take();
            match res {
                Ok(mut o) => {
                    self.outcome_project = scanned;
                    let first_detail = o.first_detail.take();
                    if let Some(e) = o.history_error.take() {
                        self.message = Some((e, true));
                    }
                    // Freeing the previous reports (two modes, hundreds of thousands of small
                    // allocations on a large tree) takes tens of ms: not on the UI thread.
                    let old = self.outcome.replace(o);
                    self.generation += 1;
                    self.carry_measure(old.as_ref());
                    if let Some(old) = old {
                        let _ = std::thread::Builder::new()
                            .name("clipforge-headers-free".into())
                            .spawn(move || drop(old));
                    }
                    self.view_key = None;
                    self.why_key = None;
                    self.what_if = None;
                    if self.selected.is_none()
                        && let Some(r) = self.report(s)
                    {
                        self.selected = default_selection(r);
                    }
                    // The detail the scan's thread prepared, if it is still the one to show.
                    if let Some(f) = first_detail
                        && f.mode == s.show_mode
                        && self.selected.as_deref() == Some(f.path.as_str())
                    {
                        if let Some(why) = f.why
                            && self.from_tu.trim() == f.from_tu
                        {
                            self.why = Some(why);
                            self.why_key =
                                Some((self.generation, f.mode, f.path.clone(), f.from_tu));
                        }
                        self.detail = Some(((self.generation, f.mode, f.path), f.detail));
                    }
                }
                Err(e) => {
                    self.error = Some(e);
                    if let Some(p) = scanned {
                        self.forget_other_project(&p);
                    }
                }
            }
        }
        self.poll_compile();
        self.sync_watch(s);
        if self.pending_rescan && self.job.is_none() {
            self.pending_rescan = false;
            self.start_scan(s, false);
        }
    }

    /// Drops the shown scan when it is of another project than `project` (whose scan could not
    /// run or failed): its figures, selection and measure were the old tree's.
    fn forget_other_project(&mut self, project: &HeadersProject) {
        if self.outcome_project.as_ref() == Some(project) {
            return;
        }
        if let Some(old) = self.outcome.take() {
            // Freed off the UI thread, as a new scan's predecessor is.
            let _ = std::thread::Builder::new()
                .name("clipforge-headers-free".into())
                .spawn(move || drop(old));
        }
        self.outcome_project = None;
        self.generation += 1;
        self.timing = None;
        self.view_key = None;
        self.why_key = None;
        self.why = None;
        self.what_if = None;
        self.detail = None;
        self.selected = None;
        self.history.clear();
        self.picked = None;
        self.cut_selected = None;
        self.cut_detail = None;
    }

    fn sync_watch(&mut self, s: &mut HeadersSettings) {
        if !s.watch {
            self.watcher = None;
            self.watch_checked = None;
            return;
        }
        // Don't restart the watcher while a path is being typed.
        let typing = self
            .ctx
            .as_ref()
            .is_some_and(|c| c.egui_wants_keyboard_input());
        // Work the folders out again when the project changed, or once a second (a folder may
        // have appeared).
        let due = self
            .watch_checked
            .as_ref()
            .is_none_or(|(p, t)| *p != s.project || t.elapsed() > Duration::from_secs(1));
        let dirs = (!typing && due).then(|| {
            self.watch_checked = Some((s.project.clone(), Instant::now()));
            s.project.watch_dirs()
        });
        if let Some(dirs) = dirs
            && self
                .watcher
                .as_ref()
                .is_none_or(|w| w.dirs() != dirs.as_slice())
        {
            self.watcher = None;
            if dirs.is_empty() {
                self.error = Some("Watch: no existing root or include dir to watch".into());
                s.watch = false;
                return;
            }
            // Each batch of events wakes the UI, which polls the watcher in the next frame.
            let wake = self
                .ctx
                .clone()
                .map(|c| -> crate::watcher::Wake { Box::new(move || c.request_repaint()) });
            match Watcher::start(&dirs, Duration::from_millis(300), wake) {
                Ok(w) => self.watcher = Some(w),
                Err(e) => {
                    self.error = Some(format!("Watch: {e}"));
                    s.watch = false;
                    return;
                }
            }
        }
        if let Some(w) = &self.watcher {
            let (changed, errors) = w.drain();
            if !errors.is_empty() {
                // Events may have been lost: say so, and rescan (drain counts it as a change).
                self.message = Some((format!("Watch: {}", errors.join("; ")), true));
            }
            if changed {
                self.pending_rescan = true;
            }
        }
    }

    fn open_dialog(&mut self, pick: Pick, start: &str) {
        if self.dialog.is_some() {
            return;
        }
        let (tx, rx) = mpsc::channel();
        let start = start.trim().to_string();
        // The native dialog may be missing or block: it runs on its own thread.
        std::thread::spawn(move || {
            let mut d = rfd::FileDialog::new();
            let dir = Path::new(&start);
            let dir = if dir.is_file() {
                dir.parent()
            } else {
                Some(dir)
            };
            if let Some(dir) = dir.filter(|d| d.is_dir()) {
                d = d.set_directory(dir);
            }
            let got = match pick {
                Pick::CompDb => d
                    .set_title("Choose compile_commands.json")
                    .add_filter("compile_commands.json", &["json"])
                    .pick_file(),
                _ => d.set_title("Choose a folder").pick_folder(),
            };
            let _ = tx.send((pick, got));
        });
        self.dialog = Some(rx);
    }

    /// Moves the selection (remembering the previous one for Back).
    pub fn select(&mut self, path: &str) {
        if self.selected.as_deref() == Some(path) {
            return;
        }
        if let Some(prev) = self.selected.take() {
            self.history.push(prev);
        }
        self.selected = Some(path.to_string());
        self.picked = None;
        self.what_if = None;
    }

    pub fn back(&mut self) {
        if let Some(p) = self.history.pop() {
            self.selected = Some(p);
            self.picked = None;
            self.what_if = None;
        }
    }

    /// Draws the tab (panels inside `ui`).
    pub fn ui(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        if !self.shown_once {
            self.shown_once = true;
            // First look at the tab: scan the persisted project (cheap with the disk cache).
            if self.outcome.is_none() && s.project.project().is_ok() {
                self.start_scan(s, false);
            }
        }
        egui::Panel::left("hh_project")
            .resizable(true)
            .default_size(300.0)
            // Long include paths must not push the detail view off the window.
            .max_size(360.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("hh_project_scroll")
                    .show(ui, |ui| self.project_ui(ui, s));
            });
        egui::Panel::top("hh_top").show(ui, |ui| {
            self.action_row(ui, s);
            self.summary_ui(ui, s);
            self.seconds_ui(ui, s);
            self.view_picker(ui, s);
        });
        egui::Panel::bottom("hh_export").show(ui, |ui| self.export_row(ui, s));
        let has_detail = s.view == HeadersView::Files
            && self
                .selected
                .as_ref()
                .is_some_and(|p| self.report(s).is_some_and(|r| r.find(p).is_some()));
        if has_detail {
            let h = ui.available_height();
            egui::Panel::bottom("hh_detail")
                .resizable(true)
                .default_size((h * 0.48).max(220.0))
                .show(ui, |ui| self.detail_ui(ui, s));
        }
        egui::CentralPanel::default().show(ui, |ui| match s.view {
            HeadersView::Files => self.table_ui(ui, s),
            HeadersView::Missing => self.missing_ui(ui, s),
            HeadersView::Errors => self.errors_ui(ui, s),
            HeadersView::Cycles => self.cycles_ui(ui, s),
            HeadersView::Cuts => self.cuts_ui(ui, s),
        });
    }
}
