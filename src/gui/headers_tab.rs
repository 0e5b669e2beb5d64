//! The "Headers" tab: the C/C++ header profiler's view over [`crate::headers`]. Project editor
//! (roots, include dirs, defines, compile_commands.json, std, compiler) on the left; Scan /
//! Clean rescan / Cancel with progress, the watch toggle, the shown mode and the summary on top;
//! the per-file table with the detail view (includers / includes, why-chain, what-if), or the
//! missing includes, errors and cycles; export at the bottom. The scan and the watcher live in
//! [`super::headers_job`]; this file only draws and reacts.

use super::fmt_count;
use super::headers_job::{
    CompilerPick, ConfigEntry, HeadersJob, HeadersProject, HeadersWatcher, JobPoll, ScanOutcome,
    parse_defines, write_atomic,
};
use crate::headers::report::{Detail, DetailLink};
use crate::headers::{ChainStep, Mode, Report, ScanOptions, Scanner, WhatIf, WhatIfResult};
use eframe::egui;
use egui_extras::{Column, TableBuilder};
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
}

const COLUMNS: [(HeaderColumn, &str, &str); 7] = [
    (HeaderColumn::Path, "File", "Path (relative to its root)"),
    (HeaderColumn::Lines, "Lines", "Lines in the file"),
    (
        HeaderColumn::Tus,
        "TUs",
        "Translation units that reach this file",
    ),
    (
        HeaderColumn::Contributed,
        "Contributed",
        "Lines × TUs: what this file adds to Total Parsed",
    ),
    (
        HeaderColumn::TransitiveIncludes,
        "Incl. (trans.)",
        "Files it includes, directly or not",
    ),
    (
        HeaderColumn::TransitiveLines,
        "Lines (trans.)",
        "Lines of those files",
    ),
    (
        HeaderColumn::IncludedBy,
        "Included by",
        "Files that include it, directly or not",
    ),
];

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
}

impl Default for HeadersSettings {
    fn default() -> Self {
        Self {
            project: HeadersProject::default(),
            show_mode: Mode::Preprocessed,
            watch: false,
            export_path: std::env::temp_dir()
                .join("clipforge-headers")
                .display()
                .to_string(),
            sort: HeaderSort::default(),
            view: HeadersView::Files,
        }
    }
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
    pub why: Option<Result<Vec<ChainStep>, String>>,
    why_key: Option<(u64, Mode, String, String)>,
    pub what_if: Option<(String, Result<WhatIfResult, String>)>,
    detail: Option<((u64, Mode, String), Detail)>,
    dialog: Option<mpsc::Receiver<(Pick, Option<PathBuf>)>>,
    watcher: Option<HeadersWatcher>,
    /// The project the watched folders were last worked out for, and when (they are stat'ed,
    /// so not every frame).
    watch_checked: Option<(HeadersProject, Instant)>,
    pending_rescan: bool,
    shown_once: bool,
    ctx: Option<egui::Context>,
    /// The row picked in Top cuts (index into the report's `cuts`), with what it shows: the
    /// TUs it touches and why the first of them includes the file (keyed by scan generation).
    pub cut_selected: Option<usize>,
    cut_detail: Option<((u64, usize), CutDetail)>,
}

/// What the Top cuts view shows under its list for the picked row.
struct CutDetail {
    tus: Vec<String>,
    why: Option<Result<Vec<ChainStep>, String>>,
}

impl Default for HeadersState {
    fn default() -> Self {
        Self {
            scanner: Some(Scanner::new()),
            job: None,
            outcome: None,
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
        self.job = Some(HeadersJob::start(scanner, project, opts, self.ctx.clone()));
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
            match res {
                Ok(o) => {
                    self.outcome = Some(o);
                    self.generation += 1;
                    self.view_key = None;
                    self.why_key = None;
                    self.what_if = None;
                    if self.selected.is_none()
                        && let Some(r) = self.report(s)
                    {
                        // Open the top header hub (else the biggest contributor) so the detail
                        // view starts with both includers and includes.
                        self.selected = r
                            .hubs
                            .iter()
                            .map(|h| &h.path)
                            .find(|p| r.find(p).and_then(|n| r.entry(n)).is_some_and(|e| !e.tu))
                            .or_else(|| r.headers.iter().find(|h| !h.tu).map(|h| &h.path))
                            .cloned();
                    }
                }
                Err(e) => self.error = Some(e),
            }
        }
        self.sync_watch(s);
        if self.pending_rescan && self.job.is_none() {
            self.pending_rescan = false;
            self.start_scan(s, false);
        }
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
            && self.watcher.as_ref().is_none_or(|w| w.dirs != dirs)
        {
            self.watcher = None;
            if dirs.is_empty() {
                self.error = Some("Watch: no existing root or include dir to watch".into());
                s.watch = false;
                return;
            }
            match HeadersWatcher::start(dirs, self.ctx.clone()) {
                Ok(w) => self.watcher = Some(w),
                Err(e) => {
                    self.error = Some(format!("Watch: {e}"));
                    s.watch = false;
                    return;
                }
            }
        }
        if self.watcher.as_ref().is_some_and(|w| w.changed()) {
            self.pending_rescan = true;
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

    fn project_ui(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        let p = &mut s.project;
        ui.heading("Project");
        ui.add_space(4.0);
        ui.label(egui::RichText::new("Source roots").strong())
            .on_hover_text("Scanned recursively for .c/.cc/.cpp/.cxx/.m/.mm translation units");
        path_list(ui, "Root", &mut p.roots, false);
        ui.horizontal(|ui| {
            if ui.button("Add root").clicked() {
                p.roots.push(String::new());
            }
            if ui
                .button("Browse…")
                .on_hover_text("Folder dialog")
                .clicked()
            {
                let start = p.roots.last().cloned().unwrap_or_default();
                self.open_dialog(Pick::Root, &start);
            }
        });
        ui.add_space(6.0);
        ui.label(egui::RichText::new("Include dirs (-I, in order)").strong());
        let p = &mut s.project;
        path_list(ui, "-I", &mut p.include_dirs, true);
        ui.horizontal(|ui| {
            if ui.button("Add dir").clicked() {
                p.include_dirs.push(String::new());
            }
            if ui
                .button("Browse… ")
                .on_hover_text("Folder dialog")
                .clicked()
            {
                let start = p
                    .include_dirs
                    .last()
                    .or(p.roots.first())
                    .cloned()
                    .unwrap_or_default();
                self.open_dialog(Pick::Include, &start);
            }
        });
        ui.add_space(6.0);
        ui.label(egui::RichText::new("System dirs (-isystem, in order)").strong())
            .on_hover_text(
                "Searched after the -I dirs; the compiler's own system dirs come after these",
            );
        let p = &mut s.project;
        path_list(ui, "-isystem", &mut p.system_dirs, true);
        if ui.button("Add system dir").clicked() {
            p.system_dirs.push(String::new());
        }
        ui.add_space(6.0);
        let l = ui.label(egui::RichText::new("Defines (one per line)").strong());
        ui.add(
            egui::TextEdit::multiline(&mut p.defines)
                .hint_text("NAME\nNAME=VALUE\n-UNAME")
                .desired_rows(3)
                .desired_width(f32::INFINITY)
                .code_editor(),
        )
        .labelled_by(l.id);
        if let Err(e) = parse_defines(&p.defines) {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        ui.add_space(6.0);
        let l = ui.label(egui::RichText::new("compile_commands.json (optional)").strong());
        let mut browse = false;
        ui.horizontal(|ui| {
            let w = (ui.available_width() - 90.0).max(80.0);
            ui.add(
                egui::TextEdit::singleline(&mut p.compile_commands)
                    .hint_text("TUs and flags from a build")
                    .desired_width(w),
            )
            .labelled_by(l.id);
            if ui
                .button("Browse…  ")
                .on_hover_text("File dialog")
                .clicked()
            {
                browse = true;
            }
            if !p.compile_commands.is_empty()
                && ui.small_button("x").on_hover_text("Clear").clicked()
            {
                p.compile_commands.clear();
            }
        });
        if browse {
            let start = s.project.compile_commands.clone();
            self.open_dialog(Pick::CompDb, &start);
        }
        let p = &mut s.project;
        let cc = p.compile_commands.trim();
        if !cc.is_empty() && !Path::new(cc).is_file() {
            ui.colored_label(ui.visuals().error_fg_color, "File not found");
        } else if !cc.is_empty() {
            ui.weak("Translation units and their flags come from this file; the include dirs and defines above are added to each.");
        }
        ui.add_space(6.0);
        configs_ui(ui, &mut p.configs);
        ui.add_space(6.0);
        egui::Grid::new("hh_opts")
            .num_columns(2)
            .spacing([8.0, 4.0])
            .show(ui, |ui| {
                let l = ui.label("C++ std:");
                ui.add(
                    egui::TextEdit::singleline(&mut p.std)
                        .hint_text("compiler default, e.g. c++17")
                        .desired_width(140.0),
                )
                .labelled_by(l.id);
                ui.end_row();
                let l = ui.label("C std:");
                ui.add(
                    egui::TextEdit::singleline(&mut p.cstd)
                        .hint_text("compiler default, e.g. c11")
                        .desired_width(140.0),
                )
                .labelled_by(l.id);
                ui.end_row();
                let l = ui.label("Compiler:");
                egui::ComboBox::from_id_salt("hh_compiler")
                    .selected_text(match p.compiler {
                        CompilerPick::Auto => "Auto (c++, g++, clang++)",
                        CompilerPick::None => "None (built-in macros)",
                        CompilerPick::Named => "Named",
                    })
                    .show_ui(ui, |ui| {
                        ui.selectable_value(
                            &mut p.compiler,
                            CompilerPick::Auto,
                            "Auto (c++, g++, clang++)",
                        );
                        ui.selectable_value(
                            &mut p.compiler,
                            CompilerPick::None,
                            "None (built-in macros)",
                        );
                        ui.selectable_value(&mut p.compiler, CompilerPick::Named, "Named");
                    })
                    .response
                    .labelled_by(l.id)
                    .on_hover_text("Asked for its predefined macros and system include dirs");
                ui.end_row();
                if p.compiler == CompilerPick::Named {
                    let l = ui.label("Name:");
                    ui.add(
                        egui::TextEdit::singleline(&mut p.compiler_name)
                            .hint_text("g++-12, clang++ …")
                            .desired_width(140.0),
                    )
                    .labelled_by(l.id);
                    ui.end_row();
                }
            });
        ui.checkbox(&mut p.disk_cache, "On-disk cache")
            .on_hover_text(
                "Keep the scan in the user cache dir so the next start rescans only what changed",
            );
        ui.add_space(10.0);
        ui.separator();
        ui.label(egui::RichText::new("Reading the numbers").strong());
        ui.weak(
            "Total Parsed: the lines the compiler reads, summed over every translation unit \
             (each TU with all it includes). Blowup: Total Parsed / Total Lines. \
             Contributed: a file's lines × the TUs that reach it; the headers to slim down or \
             include less often are at the top. Project files only: system headers are followed \
             for their macros but not counted.",
        );
    }

    fn action_row(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
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
                        .animate(true),
                );
            } else if let Some(o) = &self.outcome {
                ui.weak(format!(
                    "{} in {:.2} s{}",
                    if o.clean { "Clean scan" } else { "Scanned" },
                    o.wall.as_secs_f64(),
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

    fn summary_ui(&mut self, ui: &mut egui::Ui, s: &HeadersSettings) {
        let Some(o) = &self.outcome else {
            ui.add_space(4.0);
            if self.job.is_none() {
                ui.label("No scan yet: add a source root on the left and press Scan.");
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
                    ui.label(t(match mode {
                        Mode::Preprocessed => "Preprocessed".into(),
                        Mode::AllBranches => "All branches".into(),
                    }));
                    for v in [
                        r.files as u64,
                        r.translation_units as u64,
                        r.total_lines,
                        r.total_parsed,
                    ] {
                        ui.label(t(fmt_count(v)));
                    }
                    ui.label(t(format!("{:.2}×", r.blowup)));
                    for v in [r.missing.len(), r.errors.len(), r.cycles.len()] {
                        ui.label(t(fmt_count(v as u64)));
                    }
                    ui.end_row();
                    // Each configuration's own figures under the combined row.
                    for c in &r.configs {
                        ui.label(format!("  config {}", c.name));
                        for v in [
                            c.files as u64,
                            c.translation_units as u64,
                            c.total_lines,
                            c.total_parsed,
                        ] {
                            ui.label(fmt_count(v));
                        }
                        ui.label(format!("{:.2}×", c.blowup));
                        ui.end_row();
                    }
                }
            });
        if let Some(r) = o.report(s.show_mode) {
            let st = &r.stats;
            ui.weak(format!(
                "Scan {:.2} s · files read {}, reused {} · TUs evaluated {}, reused {}{}",
                r.scan_seconds,
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

    fn view_picker(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
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

    fn rebuild_view(&mut self, s: &HeadersSettings) {
        let key = (
            self.generation,
            s.show_mode,
            self.filter.trim().to_lowercase(),
            s.sort,
        );
        if self.view_key.as_ref() == Some(&key) {
            return;
        }
        let Some(r) = self.outcome.as_ref().and_then(|o| o.report(s.show_mode)) else {
            self.view.clear();
            return;
        };
        let f = &key.2;
        let mut v: Vec<usize> = (0..r.headers.len())
            .filter(|&i| f.is_empty() || r.headers[i].path.to_lowercase().contains(f))
            .collect();
        let h = &r.headers;
        v.sort_by(|&a, &b| {
            let (x, y) = (&h[a], &h[b]);
            let o = match s.sort.column {
                HeaderColumn::Path => x.path.cmp(&y.path),
                HeaderColumn::Lines => x.lines.cmp(&y.lines),
                HeaderColumn::Tus => x.tu_count.cmp(&y.tu_count),
                HeaderColumn::Contributed => x.contributed.cmp(&y.contributed),
                HeaderColumn::TransitiveIncludes => {
                    x.transitive_includes.cmp(&y.transitive_includes)
                }
                HeaderColumn::TransitiveLines => x.transitive_lines.cmp(&y.transitive_lines),
                HeaderColumn::IncludedBy => x.included_by_count.cmp(&y.included_by_count),
            };
            let o = if s.sort.ascending { o } else { o.reverse() };
            o.then_with(|| x.path.cmp(&y.path))
        });
        self.view = v;
        self.view_key = Some(key);
    }

    /// Paths of the table's rows, in display order (for tests and export checks).
    pub fn table_paths(&mut self, s: &HeadersSettings) -> Vec<String> {
        self.rebuild_view(s);
        let Some(r) = self.report(s) else {
            return Vec::new();
        };
        self.view
            .iter()
            .map(|&i| r.headers[i].path.clone())
            .collect()
    }

    fn table_ui(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        self.rebuild_view(s);
        ui.horizontal(|ui| {
            let l = ui.label("Filter:");
            ui.add(
                egui::TextEdit::singleline(&mut self.filter)
                    .hint_text("part of a path")
                    .desired_width(220.0),
            )
            .labelled_by(l.id);
            if !self.filter.is_empty()
                && ui
                    .small_button("Clear")
                    .on_hover_text("Clear the filter")
                    .clicked()
            {
                self.filter.clear();
            }
            if let Some(r) = self.report(s) {
                ui.label(format!(
                    "{} of {} files",
                    fmt_count(self.view.len() as u64),
                    fmt_count(r.headers.len() as u64)
                ));
                ui.weak("· click a row for its detail; translation units in italics");
            }
        });
        let Some(r) = self.outcome.as_ref().and_then(|o| o.report(s.show_mode)) else {
            if self.job.is_some() {
                ui.add_space(20.0);
                ui.vertical_centered(|ui| ui.label("Scanning…"));
            }
            return;
        };
        let text_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        let mut sort = s.sort;
        let mut clicked: Option<String> = None;
        let selected = self.selected.clone();
        let view = &self.view;
        TableBuilder::new(ui)
            .id_salt("hh_table")
            .striped(true)
            .resizable(true)
            .sense(egui::Sense::click())
            .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
            // The path takes what the number columns leave (recomputed each frame: not resizable).
            .column(
                Column::remainder()
                    .at_least(160.0)
                    .clip(true)
                    .resizable(false),
            )
            .column(Column::initial(60.0).at_least(44.0))
            .column(Column::initial(50.0).at_least(40.0))
            .column(Column::initial(96.0).at_least(60.0))
            .column(Column::initial(100.0).at_least(60.0))
            .column(Column::initial(104.0).at_least(60.0))
            .column(Column::initial(90.0).at_least(60.0))
            .columns(Column::initial(70.0).at_least(40.0), r.configs.len())
            .min_scrolled_height(0.0)
            .header(text_h + 4.0, |mut header| {
                for (col, title, tip) in COLUMNS {
                    header.col(|ui| {
                        let r = ui.add(
                            egui::Button::new(egui::RichText::new(title).strong()).frame(false),
                        );
                        if sort.column == col {
                            sort_triangle(ui, r.rect, sort.ascending);
                        }
                        if r.on_hover_text(format!("{tip}. Click to sort")).clicked() {
                            if sort.column == col {
                                sort.ascending = !sort.ascending;
                            } else {
                                sort.column = col;
                                sort.ascending = col == HeaderColumn::Path;
                            }
                        }
                    });
                }
                for c in &r.configs {
                    header.col(|ui| {
                        ui.label(egui::RichText::new(format!("TUs {}", c.name)).strong())
                            .on_hover_text(format!(
                                "Translation units of configuration {} that reach this file",
                                c.name
                            ));
                    });
                }
            })
            .body(|body| {
                body.rows(text_h, view.len(), |mut row| {
                    let h = &r.headers[view[row.index()]];
                    row.set_selected(selected.as_deref() == Some(h.path.as_str()));
                    row.col(|ui| {
                        let t = egui::RichText::new(&h.path);
                        let t = if h.tu { t.italics() } else { t };
                        ui.add(egui::Label::new(t).selectable(false).truncate())
                            .on_hover_text(if h.tu {
                                format!("{} (translation unit)", h.path)
                            } else {
                                h.path.clone()
                            });
                    });
                    row.col(|ui| num(ui, h.lines as u64));
                    row.col(|ui| num(ui, h.tu_count as u64));
                    row.col(|ui| num(ui, h.contributed));
                    row.col(|ui| num(ui, h.transitive_includes as u64));
                    row.col(|ui| num(ui, h.transitive_lines));
                    row.col(|ui| num(ui, h.included_by_count as u64));
                    for &n in h.tu_count_by_config.iter().flatten() {
                        row.col(|ui| num(ui, n as u64));
                    }
                    if row.response().clicked() {
                        clicked = Some(h.path.clone());
                    }
                });
            });
        s.sort = sort;
        if let Some(p) = clicked {
            self.select(&p);
        }
    }

    fn detail_ui(&mut self, ui: &mut egui::Ui, s: &HeadersSettings) {
        let Some(sel) = self.selected.clone() else {
            return;
        };
        let gen_mode = (self.generation, s.show_mode);
        // Long paths and the summary line are cut with "…" (full text on hover) instead of
        // widening the panel, which would push the why / what-if column off the window.
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
        // Taken out for the frame so the why / what-if sections can update `self` while reading it.
        let Some(outcome) = self.outcome.take() else {
            return;
        };
        self.detail_inner(ui, s, &outcome, &sel, gen_mode);
        self.outcome = Some(outcome);
    }

    fn detail_inner(
        &mut self,
        ui: &mut egui::Ui,
        s: &HeadersSettings,
        outcome: &ScanOutcome,
        sel: &str,
        gen_mode: (u64, Mode),
    ) {
        let Some(r) = outcome.report(s.show_mode) else {
            return;
        };
        // The detail (sorted includer / include lists, large for a popular header) is built once
        // per selection and scan, not every frame.
        let key = (gen_mode.0, gen_mode.1, sel.to_string());
        if self.detail.as_ref().is_none_or(|(k, _)| *k != key) {
            let Some(node) = r.find(sel) else {
                return;
            };
            self.detail = Some((key, r.detail(node)));
        }
        let Some((dkey, d)) = self.detail.take() else {
            return;
        };
        let mut refocus: Option<String> = None;
        let mut pick: Option<PickedEdge> = None;
        let mut back = false;
        let mut close = false;
        ui.add_space(4.0);
        ui.horizontal(|ui| {
            if ui
                .add_enabled(!self.history.is_empty(), egui::Button::new("Back"))
                .on_hover_text("The previously shown file")
                .clicked()
            {
                back = true;
            }
            if ui.button("Close").clicked() {
                close = true;
            }
            ui.label(egui::RichText::new(&d.path).strong().size(15.0));
            if let Some(e) = &d.entry {
                ui.weak(format!(
                    "{} lines · reached by {} TUs · contributes {} lines · includes {} files ({} lines) · included by {} files",
                    fmt_count(e.lines as u64),
                    fmt_count(e.tu_count as u64),
                    fmt_count(e.contributed),
                    fmt_count(e.transitive_includes as u64),
                    fmt_count(e.transitive_lines),
                    fmt_count(e.included_by_count as u64)
                ));
            }
        });
        ui.separator();
        let picked = self.picked.clone();
        ui.columns(3, |cols| {
            // Includers: the count is how many files reach each includer.
            let side = LinkColumn {
                title: format!("Included by ({})", d.includers.len()),
                hover: "Direct includers. Count: files that include that includer, directly or not. Double-click to open",
                id: "hh_includers",
                empty: "Nothing includes it (a translation unit, or unused)",
                picked: picked.as_ref(),
            };
            side.show(&mut cols[0], &d.includers, &mut refocus, &mut pick, |l| {
                (
                    PickedEdge {
                        from: l.path.clone(),
                        to: d.path.clone(),
                    },
                    format!("{}:{}", l.path, l.line),
                    None,
                )
            });
            // Includes: the count is how many files each include pulls in.
            let side = LinkColumn {
                title: format!("Includes ({})", d.includes.len()),
                hover: "Direct includes. Count: files each one includes, directly or not. Click to pick it for What-if, double-click to open",
                id: "hh_includes",
                empty: "Includes no project file",
                picked: picked.as_ref(),
            };
            side.show(&mut cols[1], &d.includes, &mut refocus, &mut pick, |l| {
                (
                    PickedEdge {
                        from: d.path.clone(),
                        to: l.path.clone(),
                    },
                    l.path.clone(),
                    Some(format!("#include at line {} of {}", l.line, d.path)),
                )
            });
            let ui = &mut cols[2];
            egui::ScrollArea::vertical()
                .id_salt("hh_why_whatif")
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    // Columns are justified; wrapped text here should not be.
                    ui.with_layout(egui::Layout::top_down(egui::Align::LEFT), |ui| {
                        self.why_ui(ui, r, &d.path, gen_mode);
                        ui.separator();
                        self.what_if_ui(ui, r, &d.path);
                    });
                });
        });
        self.detail = Some((dkey, d));
        if let Some(p) = pick
            && self.picked.as_ref() != Some(&p)
        {
            self.picked = Some(p);
            self.what_if = None;
        }
        if let Some(p) = refocus {
            self.select(&p);
        } else if back {
            self.back();
        } else if close {
            if let Some(p) = self.selected.take() {
                self.history.push(p);
            }
            self.picked = None;
        }
    }

    fn why_ui(&mut self, ui: &mut egui::Ui, r: &Report, path: &str, gen_mode: (u64, Mode)) {
        ui.label(egui::RichText::new("Why is it included?").strong())
            .on_hover_text("The shortest #include chain from a translation unit");
        let mut go = false;
        ui.horizontal(|ui| {
            let l = ui.label("From TU:");
            let resp = ui
                .add(
                    egui::TextEdit::singleline(&mut self.from_tu)
                        .hint_text("any (optional)")
                        .desired_width((ui.available_width() - 90.0).max(60.0)),
                )
                .labelled_by(l.id);
            if resp.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                go = true;
            }
            if ui.button("Show chain").clicked() {
                go = true;
            }
        });
        let key = (
            gen_mode.0,
            gen_mode.1,
            path.to_string(),
            self.from_tu.trim().to_string(),
        );
        // Automatic for a new selection when cheap (one BFS per TU over its own edges).
        let cheap = r.graph.tus.len().saturating_mul(r.graph.nodes.len()) < 20_000_000;
        let stale = self
            .why_key
            .as_ref()
            .is_none_or(|k| k.0 != key.0 || k.1 != key.1 || k.2 != key.2);
        if go || (stale && cheap) {
            let from = (!key.3.is_empty()).then_some(key.3.as_str());
            self.why = Some(r.why_chain(path, from));
            self.why_key = Some(key);
        } else if stale {
            self.why = None;
        }
        match &self.why {
            Some(Ok(chain)) => {
                for (i, st) in chain.iter().enumerate() {
                    ui.horizontal(|ui| {
                        ui.add_space(10.0 * i as f32);
                        if st.line > 0 {
                            ui.label(format!("{}:{}", st.file, st.line))
                                .on_hover_text(format!("#include at line {}", st.line));
                            ui.weak("#include");
                        } else {
                            ui.label(egui::RichText::new(&st.file).strong());
                        }
                    });
                }
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().warn_fg_color, e);
            }
            None => {
                ui.weak("Press Show chain");
            }
        }
    }

    fn what_if_ui(&mut self, ui: &mut egui::Ui, r: &Report, path: &str) {
        ui.label(egui::RichText::new("What if…").strong())
            .on_hover_text("Evaluated on this scan's include graph, without rescanning");
        let mut run: Option<(String, WhatIf)> = None;
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Make it empty")
                .on_hover_text("This file with 0 lines and no includes")
                .clicked()
            {
                run = Some((format!("{path} empty"), WhatIf::EmptyFile(path.to_string())));
            }
            let picked = self.picked.clone();
            if ui
                .add_enabled(
                    picked.is_some(),
                    egui::Button::new("Remove the picked #include"),
                )
                .on_hover_text("Pick an include (or an includer) with a click first")
                .on_disabled_hover_text("Click an include or an includer on the left first")
                .clicked()
                && let Some(e) = picked
            {
                run = Some((
                    format!("{} without #include {}", e.from, e.to),
                    WhatIf::RemoveInclude {
                        from: e.from,
                        to: e.to,
                    },
                ));
            }
        });
        if let Some((label, w)) = run {
            self.what_if = Some((label, r.what_if(&w)));
        }
        if let Some(e) = &self.picked
            && self.what_if.is_none()
        {
            ui.weak(format!("picked: {} includes {}", e.from, e.to));
        }
        match &self.what_if {
            Some((label, Ok(w))) => {
                ui.label(egui::RichText::new(label).italics())
                    .on_hover_text(&w.note);
                ui.label(format!(
                    "Total Parsed {} -> {}",
                    fmt_count(w.total_parsed_before),
                    fmt_count(w.total_parsed_after)
                ));
                ui.label(
                    egui::RichText::new(format!(
                        "saves {} lines ({:.1}%), {} TUs affected",
                        fmt_count(w.saved),
                        w.saved_percent,
                        w.tus_affected
                    ))
                    .strong(),
                )
                .on_hover_text(&w.note);
            }
            Some((label, Err(e))) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("{label}: {e}"));
            }
            None => {}
        }
    }

    fn missing_ui(&mut self, ui: &mut egui::Ui, s: &HeadersSettings) {
        let Some(r) = self.report(s) else { return };
        if r.missing.is_empty() {
            ui.label("No missing includes.");
            return;
        }
        ui.weak("Includes that were not found in any search dir, with the places that tried them. Angle includes not found are usually system headers (give their dirs with -I, or pick a compiler).");
        let text_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        TableBuilder::new(ui)
            .id_salt("hh_missing")
            .striped(true)
            .resizable(true)
            .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
            .column(Column::initial(260.0).at_least(100.0).clip(true))
            .column(Column::initial(60.0).at_least(40.0))
            .column(Column::remainder().at_least(120.0).clip(true))
            .header(text_h + 4.0, |mut h| {
                for t in ["Include", "TUs", "Tried by"] {
                    h.col(|ui| {
                        ui.strong(t);
                    });
                }
            })
            .body(|body| {
                body.rows(text_h, r.missing.len(), |mut row| {
                    let m = &r.missing[row.index()];
                    row.col(|ui| {
                        let q = if m.angle {
                            format!("<{}>", m.include)
                        } else {
                            format!("\"{}\"", m.include)
                        };
                        ui.label(q);
                        if m.likely_system {
                            ui.weak("system?");
                        }
                    });
                    row.col(|ui| num(ui, m.tu_count as u64));
                    row.col(|ui| {
                        let sites: Vec<String> = m
                            .tried_by
                            .iter()
                            .map(|t| format!("{}:{}", t.file, t.line))
                            .collect();
                        let shown = if sites.len() > 3 {
                            format!("{} … (+{} more)", sites[..3].join(", "), sites.len() - 3)
                        } else {
                            sites.join(", ")
                        };
                        ui.add(egui::Label::new(shown).truncate())
                            .on_hover_text(sites.join("\n"));
                    });
                });
            });
    }

    fn errors_ui(&mut self, ui: &mut egui::Ui, s: &HeadersSettings) {
        let Some(r) = self.report(s) else { return };
        if r.errors.is_empty() {
            ui.label("No errors.");
            return;
        }
        let row_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        egui::ScrollArea::both()
            .id_salt("hh_errors")
            .auto_shrink([false, false])
            .show_rows(ui, row_h, r.errors.len(), |ui, range| {
                for e in &r.errors[range] {
                    ui.horizontal(|ui| {
                        ui.label(
                            egui::RichText::new(format!("{}:{}", e.file, e.line))
                                .color(ui.visuals().error_fg_color),
                        );
                        ui.label(&e.message);
                    });
                }
            });
    }

    /// Top cuts: every directive's (and header's) saving, best first; a row picked shows the TUs
    /// it touches and the include chain to its file from the first of them.
    fn cuts_ui(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        use crate::headers::cuts::CutKind;
        let generation = self.generation;
        let busy = self.busy();
        let Some(r) = self.outcome.as_ref().and_then(|o| o.preprocessed.as_ref()) else {
            return;
        };
        let Some(cuts) = &r.cuts else {
            ui.label("The saving of every #include directive is computed by a scan made while this view is shown.");
            if ui
                .add_enabled(!busy, egui::Button::new("Compute cuts (rescan)"))
                .clicked()
            {
                self.start_scan(s, false);
            }
            return;
        };
        if cuts.is_empty() {
            ui.label("No #include directive of the project saves anything.");
            return;
        }
        ui.weak(format!(
            "Total Parsed lines saved (preprocessed) if the #include were removed, or the header emptied; the top {CUTS_CONFIRMED} confirmed by evaluating their TUs again (exact), the rest estimated from the include graphs."
        ));
        let shown = cuts.len().min(500);
        let text_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        let mut picked = None;
        let list_h = (ui.available_height() * 0.55).max(120.0);
        TableBuilder::new(ui)
            .id_salt("hh_cuts")
            .striped(true)
            .resizable(true)
            .max_scroll_height(list_h)
            .sense(egui::Sense::click())
            .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
            .column(Column::initial(110.0).at_least(60.0))
            .column(Column::initial(60.0).at_least(40.0))
            .column(Column::initial(50.0).at_least(40.0))
            .column(Column::remainder().at_least(200.0).clip(true))
            .header(text_h + 4.0, |mut h| {
                for t in ["Lines saved", "TUs", "Exact", "Directive"] {
                    h.col(|ui| {
                        ui.strong(t);
                    });
                }
            })
            .body(|body| {
                body.rows(text_h, shown, |mut row| {
                    let i = row.index();
                    let c = &cuts[i];
                    row.set_selected(self.cut_selected == Some(i));
                    row.col(|ui| num(ui, c.lines_saved.max(0) as u64));
                    row.col(|ui| num(ui, c.tus_affected as u64));
                    row.col(|ui| {
                        ui.label(if c.exact { "yes" } else { "est." });
                    });
                    let what = match c.kind {
                        CutKind::Include => {
                            format!("{}:{}  #include {}", c.includer, c.line, c.included)
                        }
                        CutKind::EmptyHeader => format!("{}  (make it empty)", c.included),
                    };
                    row.col(|ui| {
                        if ui
                            .add(
                                egui::Label::new(what)
                                    .truncate()
                                    .sense(egui::Sense::click()),
                            )
                            .clicked()
                        {
                            picked = Some(i);
                        }
                    });
                    if row.response().clicked() {
                        picked = Some(i);
                    }
                });
            });
        if let Some(i) = picked {
            self.cut_selected = Some(i);
        }
        let Some(i) = self.cut_selected.filter(|&i| i < cuts.len()) else {
            return;
        };
        if self
            .cut_detail
            .as_ref()
            .is_none_or(|(k, _)| *k != (generation, i))
        {
            let c = &cuts[i];
            let tus: Vec<String> = c
                .tus
                .iter()
                .map(|&t| r.graph.nodes[t as usize].path.clone())
                .collect();
            let why = tus
                .first()
                .map(|tu| r.why_chain(&c.included, Some(tu.as_str())));
            self.cut_detail = Some(((generation, i), CutDetail { tus, why }));
        }
        let Some((_, d)) = &self.cut_detail else {
            return;
        };
        ui.separator();
        ui.strong(format!("Translation units touched ({})", d.tus.len()));
        egui::ScrollArea::vertical()
            .id_salt("hh_cut_tus")
            .max_height(ui.available_height() * 0.5)
            .show(ui, |ui| {
                for t in &d.tus {
                    ui.label(t);
                }
            });
        if let Some(w) = &d.why {
            ui.strong("Why it is included (from the first TU):");
            match w {
                Ok(chain) => {
                    for step in chain {
                        if step.line > 0 {
                            ui.label(format!("{}:{}  #include", step.file, step.line));
                        } else {
                            ui.label(&step.file);
                        }
                    }
                }
                Err(e) => {
                    ui.weak(e);
                }
            }
        }
    }

    fn cycles_ui(&mut self, ui: &mut egui::Ui, s: &HeadersSettings) {
        let Some(r) = self.report(s) else { return };
        if r.cycles.is_empty() {
            ui.label("No include cycles.");
            return;
        }
        ui.weak("Files that include each other (directly or not); include guards usually cut these at run time.");
        let row_h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
        egui::ScrollArea::both()
            .id_salt("hh_cycles")
            .auto_shrink([false, false])
            .show_rows(ui, row_h, r.cycles.len(), |ui, range| {
                for c in &r.cycles[range] {
                    ui.label(c.join("  <->  "));
                }
            });
    }

    fn export_row(&mut self, ui: &mut egui::Ui, s: &mut HeadersSettings) {
        ui.add_space(2.0);
        ui.horizontal(|ui| {
            let l = ui.label("Export to:");
            ui.add(egui::TextEdit::singleline(&mut s.export_path).desired_width(320.0))
                .labelled_by(l.id)
                .on_hover_text("Path without extension; .json / .csv / .dot is added");
            let has = self.report(s).is_some();
            for (label, ext) in [
                ("Export JSON", "json"),
                ("Export CSV", "csv"),
                ("Export dot", "dot"),
            ] {
                if ui.add_enabled(has, egui::Button::new(label)).clicked() {
                    self.message = Some(self.export(s, ext));
                }
            }
        });
        ui.add_space(2.0);
    }

    /// Writes the shown report as `ext` (json / csv / dot); returns the message to show.
    pub fn export(&self, s: &HeadersSettings, ext: &str) -> (String, bool) {
        let Some(r) = self.report(s) else {
            return ("Nothing to export yet: scan first".into(), true);
        };
        let base = s.export_path.trim();
        if base.is_empty() {
            return ("Export: type a path first".into(), true);
        }
        let path = PathBuf::from(format!("{base}.{ext}"));
        let text = match ext {
            "json" => r.to_json(),
            "csv" => r.to_csv(),
            _ => r.to_dot(),
        };
        match write_atomic(&path, &text) {
            Ok(()) => (
                format!(
                    "Exported {} files ({}) to {}",
                    fmt_count(r.headers.len() as u64),
                    r.mode,
                    path.display()
                ),
                false,
            ),
            Err(e) => (format!("Export failed: {e}"), true),
        }
    }
}

/// One row of an includers / includes list: the count, then the path as a selectable button.
/// One side of the detail view (includers or includes): a titled, scrolling list of linked
/// files with their counts. Click picks the edge for What-if, double-click refocuses on the file.
struct LinkColumn<'a> {
    title: String,
    hover: &'a str,
    id: &'a str,
    empty: &'a str,
    picked: Option<&'a PickedEdge>,
}

impl LinkColumn<'_> {
    /// `row` gives each link's edge, label and optional hover text.
    fn show(
        &self,
        ui: &mut egui::Ui,
        links: &[DetailLink],
        refocus: &mut Option<String>,
        pick: &mut Option<PickedEdge>,
        row: impl Fn(&DetailLink) -> (PickedEdge, String, Option<String>),
    ) {
        ui.label(egui::RichText::new(&self.title).strong())
            .on_hover_text(self.hover);
        egui::ScrollArea::vertical()
            .id_salt(self.id)
            .auto_shrink([false, false])
            .show(ui, |ui| {
                if links.is_empty() {
                    ui.weak(self.empty);
                }
                for l in links {
                    let (edge, label, hover) = row(l);
                    let mut r = link_row(ui, l.count, &label, self.picked == Some(&edge));
                    if let Some(h) = hover {
                        r = r.on_hover_text(h);
                    }
                    if r.double_clicked() || r.triple_clicked() {
                        *refocus = Some(l.path.clone());
                    } else if r.clicked() {
                        *pick = Some(edge);
                    }
                }
            });
    }
}

fn link_row(ui: &mut egui::Ui, count: u32, text: &str, picked: bool) -> egui::Response {
    ui.horizontal(|ui| {
        ui.add_sized(
            [44.0, 18.0],
            egui::Label::new(egui::RichText::new(fmt_count(count as u64)).monospace()),
        );
        ui.add(egui::Button::selectable(picked, text).truncate())
    })
    .inner
}

/// An editable list of paths (one labelled field each, red when the folder is missing), with
/// remove and, when `movable`, up / down buttons (the search order matters).
/// The project's build configurations: name and compile_commands.json per row, add / remove.
fn configs_ui(ui: &mut egui::Ui, configs: &mut Vec<ConfigEntry>) {
    ui.label(egui::RichText::new("Configurations (optional)").strong())
        .on_hover_text(
            "Several builds of the tree (debug / release, Linux / Windows) scanned in one run, \
             each from its compile_commands.json; the totals are summed and the table shows \
             each configuration's TU count",
        );
    let mut remove = None;
    for (i, c) in configs.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            let l = ui.label(format!("Config {} name:", i + 1));
            ui.add(
                egui::TextEdit::singleline(&mut c.name)
                    .hint_text("e.g. debug")
                    .desired_width(90.0),
            )
            .labelled_by(l.id);
            if ui
                .small_button("Remove")
                .on_hover_text("Remove this configuration")
                .clicked()
            {
                remove = Some(i);
            }
        });
        ui.horizontal(|ui| {
            let l = ui.label(format!("Config {} file:", i + 1));
            ui.add(
                egui::TextEdit::singleline(&mut c.compile_commands)
                    .hint_text("path/to/compile_commands.json")
                    .desired_width(ui.available_width().max(80.0)),
            )
            .labelled_by(l.id);
        });
        let path = c.compile_commands.trim();
        if !path.is_empty() && !Path::new(path).is_file() {
            ui.colored_label(ui.visuals().error_fg_color, "File not found");
        }
    }
    if let Some(i) = remove {
        configs.remove(i);
    }
    if ui.button("Add configuration").clicked() {
        configs.push(ConfigEntry::default());
    }
    if configs
        .iter()
        .any(|c| !c.compile_commands.trim().is_empty())
    {
        ui.weak("The configurations replace the compile_commands.json above.");
    }
}

fn path_list(ui: &mut egui::Ui, what: &str, list: &mut Vec<String>, movable: bool) {
    let mut remove = None;
    let mut swap = None;
    let n = list.len();
    for (i, item) in list.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            let l = ui.label(format!("{what} {}:", i + 1));
            let buttons = if movable { 84.0 } else { 30.0 };
            let missing = !item.trim().is_empty() && !Path::new(item.trim()).is_dir();
            let mut te = egui::TextEdit::singleline(item)
                .hint_text("folder path")
                .desired_width((ui.available_width() - buttons).max(80.0));
            if missing {
                te = te.text_color(ui.visuals().error_fg_color);
            }
            let r = ui.add(te).labelled_by(l.id);
            if missing {
                r.on_hover_text("Folder not found");
            }
            if movable {
                if arrow_button(ui, i > 0, true)
                    .on_hover_text("Search earlier")
                    .clicked()
                {
                    swap = Some((i - 1, i));
                }
                if arrow_button(ui, i + 1 < n, false)
                    .on_hover_text("Search later")
                    .clicked()
                {
                    swap = Some((i, i + 1));
                }
            }
            if ui.small_button("x").on_hover_text("Remove").clicked() {
                remove = Some(i);
            }
        });
    }
    if let Some((a, b)) = swap {
        list.swap(a, b);
    }
    if let Some(i) = remove {
        list.remove(i);
    }
}

/// A small button with a triangle pointing up or down (no arrow glyphs in the default fonts).
fn arrow_button(ui: &mut egui::Ui, enabled: bool, up: bool) -> egui::Response {
    let r = ui.add_enabled(
        enabled,
        egui::Button::new("")
            .small()
            .min_size(egui::vec2(18.0, 18.0)),
    );
    r.widget_info(|| {
        egui::WidgetInfo::labeled(
            egui::Role::Button,
            enabled,
            if up { "Move up" } else { "Move down" },
        )
    });
    let c = r.rect.center();
    let (a, b) = if up { (-4.0, 3.0) } else { (4.0, -3.0) };
    let color = if enabled {
        ui.visuals().strong_text_color()
    } else {
        ui.visuals().weak_text_color()
    };
    ui.painter().add(egui::Shape::convex_polygon(
        vec![
            egui::pos2(c.x, c.y + a),
            egui::pos2(c.x + 4.5, c.y + b),
            egui::pos2(c.x - 4.5, c.y + b),
        ],
        color,
        egui::Stroke::NONE,
    ));
    r
}

fn sort_triangle(ui: &egui::Ui, rect: egui::Rect, ascending: bool) {
    // A small triangle (the default fonts have no arrow glyphs).
    let c = egui::pos2(rect.right() + 7.0, rect.center().y);
    let (a, b) = if ascending { (-4.0, 3.0) } else { (4.0, -3.0) };
    ui.painter().add(egui::Shape::convex_polygon(
        vec![
            egui::pos2(c.x, c.y + a),
            egui::pos2(c.x + 4.0, c.y + b),
            egui::pos2(c.x - 4.0, c.y + b),
        ],
        ui.visuals().strong_text_color(),
        egui::Stroke::NONE,
    ));
}
