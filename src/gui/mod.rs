//! The egui desktop app: one window with the "Clips" library (table, settings, clip detail),
//! "Charts", "Lab" (the three codec families of `anim::lab` side by side), "Watch" (pipelines +
//! event log) and "Headers" tabs.
//!
//! All the work (scanning, compressing, measuring a clip, the skip cache, reports) is done by
//! [`crate::pipeline`] and [`crate::anim`] on background threads; the UI only polls their
//! progress counters and channels, so it never blocks. [`AppState::ui`] is callable without
//! eframe (egui_kittest drives it).
//!
//! # Structure
//! [`AppState`] holds what is shared ([`Persisted`] settings, the [`model::Library`], the
//! [`jobs::ClipJobs`]) and one struct per view, each owning its state: `clips`
//! ([`library::ClipsView`]), `settings` ([`settings::SettingsView`]), `detail`
//! ([`detail::DetailView`]), `watch` ([`PipelinesState`]), `lab` ([`LabView`]) and `headers`
//! ([`HeadersState`]). A view draws from what it is given and returns the actions that reach
//! beyond it as [`Command`]s; [`AppState::handle`] carries them out, in this file only.
//!
//! # Module graph (imports between `gui` modules; `mod.rs` declares them all)
//! ```text
//! util, filter, open_folder                   leaves
//! model          -> filter                     (and pipeline::clip_detail::ClipKey)
//! drop           -> headers_tab
//! command        -> drop, model
//! settings       -> command
//! plots          -> model
//! jobs           -> command, model
//! pipelines      -> open_folder, settings, util
//! persisted      -> headers_tab, model, pipelines, settings, util
//! library        -> command, filter, jobs, model, open_folder, persisted, pipelines, util
//! skeleton_view  -> (pipeline::clip_detail only)
//! mesh_view      -> skeleton_view (pipeline::mesh only)
//! detail         -> command, model, plots, skeleton_view, mesh_view, scalar_view, util
//! ab_view        -> model, settings, util
//! scalar_view    -> (none)
//! charts         -> model, plots
//! lab_view       -> jobs, model, util
//! headers_job    -> util (bundled_assets_dir, through a re-export here)
//! headers_tab    -> filter, headers_job, util (fmt_count, through a re-export here)
//! mod            -> everything
//! ```
//! No cycles: `gui_module_graph_has_no_cycles` (below) parses the `use` lines and checks it.

mod ab_view;
pub mod charts;
mod command;
mod detail;
mod drop;
pub mod filter;
mod headers_job;
mod headers_tab;
mod jobs;
mod lab_view;
mod library;
mod mesh_view;
mod model;
#[cfg(test)]
mod module_graph;
pub mod open_folder;
mod persisted;
mod pipelines;
mod plots;
mod scalar_view;
mod settings;
mod skeleton_view;
mod util;

pub use command::{Command, CompressScope, DialogTarget};
pub use detail::{DETAIL_COLUMN_SHARES, DetailData, DetailView, UNREADABLE_ADVICE};
pub use drop::{DropAction, plan_drop};
pub use filter::TextFilter;
pub use headers_job::{CompilerPick, HeadersProject};
pub use headers_tab::{HeaderColumn, HeaderSort, HeadersSettings, HeadersState, HeadersView};
pub use jobs::ClipJobs;
pub use lab_view::{ChartSeries, DecodePattern, LabMode, LabView, chart_series, codec_color};
pub use library::ClipsView;
pub use model::{RowKey, RowStatus};
pub use persisted::{DEFAULT_EXPORT_NAME, Persisted, Tab};
pub use pipelines::{
    LogEntry, LogKind, PipelineConfig, PipelineCounts, PipelineStatus, PipelinesState,
    PipelinesView, SavedPipeline, pipelines_toml,
};
pub use plots::{bit_rate_plot, plot_rect_id};
pub use settings::{Preset, SettingsView};
pub use util::{FrameStats, bundled_assets_dir, default_output_dir, user_cache_dir};
// The Headers tab's modules reach these through `super::`.
pub(crate) use util::fmt_count;

use crate::anim::CompressionSettings;
use crate::pipeline::BatchOptions;
use crate::pipeline::report::{BatchReport, ClipReport, compute_totals};
use eframe::egui;
use library::ClipsCtx;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The app: shared state (settings, library, jobs) and one state object per view.
pub struct AppState {
    pub persisted: Persisted,
    pub library: model::Library,
    /// The Clips tab's scan, inspection, skip-cache lookup and batch.
    pub jobs: ClipJobs,
    /// The Clips tab's folder bar, table and footer.
    pub clips: ClipsView,
    pub settings: SettingsView,
    /// The clip detail under the table.
    pub detail: DetailView,
    /// The Watch tab's pipelines: they own their folders and settings.
    pub watch: PipelinesState,
    /// The Headers tab (its scan, watcher, selection).
    pub headers: HeadersState,
    /// The Lab tab (its clip, jobs and results).
    pub lab: LabView,
    folder_dialog: Option<mpsc::Receiver<(DialogTarget, Option<PathBuf>)>>,
    pub frame_stats: FrameStats,
    /// CPU time of the previous whole frame as eframe reports it (ui + tessellation), when known.
    pub eframe_cpu_ms: Option<f32>,
    /// The context of the last frame (background jobs ask it for repaints).
    ctx: Option<egui::Context>,
    /// The commands handled lately, oldest first (at most [`COMMAND_LOG_LEN`]): what the views
    /// asked for, for tests and debugging.
    pub command_log: std::collections::VecDeque<Command>,
    /// What a drop on the window still waits for (a clip to select once its folder is scanned,
    /// a header scan of a dropped root once the old scan stopped).
    pub drop: drop::DropState,
    /// The "Compare presets" (A/B) window of a clip.
    pub ab: ab_view::AbView,
    /// The output folder whose skip cache the table's rows were last looked up in: another one
    /// typed or picked is looked up at once (a row's state comes from the folder shown).
    cache_output: PathBuf,
}

/// How many handled commands [`AppState::command_log`] keeps.
pub const COMMAND_LOG_LEN: usize = 64;

impl Default for AppState {
    fn default() -> Self {
        Self::new(Persisted::default())
    }
}

impl AppState {
    /// A fresh state from persisted settings. Nothing runs until [`AppState::start`] or a button.
    pub fn new(mut persisted: Persisted) -> Self {
        // Before, the export path was fixed to the first output folder: a path of that shape is
        // now the bare name, resolved against the current output folder.
        if Path::new(&persisted.export_path).is_absolute()
            && Path::new(&persisted.export_path).file_name() == Some("clipforge-report".as_ref())
        {
            persisted.export_path = DEFAULT_EXPORT_NAME.into();
        }
        Self {
            persisted,
            library: model::Library::default(),
            jobs: ClipJobs::default(),
            clips: ClipsView::default(),
            settings: SettingsView,
            detail: DetailView::default(),
            watch: PipelinesState::default(),
            headers: HeadersState::default(),
            lab: LabView::default(),
            folder_dialog: None,
            frame_stats: FrameStats::default(),
            eframe_cpu_ms: None,
            ctx: None,
            command_log: std::collections::VecDeque::new(),
            drop: drop::DropState::default(),
            ab: ab_view::AbView::default(),
            cache_output: PathBuf::new(),
        }
    }

    /// What the desktop app does on start: scan the input folder (and compress it on the very
    /// first start, so a new user sees results at once), and resume watched folders.
    pub fn start(&mut self, first_start: bool) {
        if Path::new(&self.persisted.input_dir).is_dir() {
            self.handle(Command::Scan);
            if first_start {
                self.jobs.pending_compress = Some(CompressScope::All);
            }
        }
        self.restore_pipelines();
    }

    /// Starts the stored pipelines that were running (each catches up with its input folder).
    /// Folders watched by an older version become pipelines with the output folder and settings
    /// they were watched with then.
    pub fn restore_pipelines(&mut self) {
        let saved = self.persisted.pipelines.clone();
        self.watch.restore(&saved);
        self.watch.file_path = self.persisted.pipelines_file.clone();
        for w in std::mem::take(&mut self.persisted.watched) {
            let config = self.pipeline_from_clips_tab(&w);
            if let Ok(i) = self.watch.add(config) {
                self.watch.start(i);
            }
        }
        self.persisted.pipelines = self.watch.saved();
    }

    /// A new pipeline of `input` with the Clips tab's output folder and settings as they are now
    /// (copied: later changes in the Clips tab do not reach it).
    pub fn pipeline_from_clips_tab(&self, input: &str) -> PipelineConfig {
        let s = &self.persisted.settings;
        let short = pipelines::short_f64;
        PipelineConfig {
            input: input.trim().to_string(),
            output: self.persisted.output_dir.trim().to_string(),
            error_threshold: Some(short(s.error_threshold_cm)),
            shell_distance: s.override_shell.then(|| short(s.shell_distance_cm)),
            jobs: s.jobs,
            no_skip: !s.use_skip_cache,
            ..Default::default()
        }
    }

    /// The current compression settings.
    pub fn compression_settings(&self) -> CompressionSettings {
        self.persisted.settings.compression()
    }

    /// True while a scan or a batch runs (or a batch waits for its scan).
    pub fn is_busy(&self) -> bool {
        self.jobs.is_busy()
    }

    /// True while a batch runs.
    pub fn batch_running(&self) -> bool {
        self.jobs.batch.is_some()
    }

    /// Draws the whole app, then carries out what the views asked for.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let t0 = Instant::now();
        if self.ctx.is_none() {
            self.ctx = Some(ui.ctx().clone());
            readable_weak_text(ui.ctx());
        }
        let mut commands = self.poll(ui.ctx());
        let dropped = drop::dropped_paths(ui.ctx());
        if !dropped.is_empty() {
            let headers_tab = self.persisted.tab == Tab::Headers;
            commands.push(Command::Drop(plan_drop(&dropped, headers_tab)));
        }
        commands.extend(self.poll_drop());
        commands.extend(self.keyboard(ui));
        for c in commands {
            self.handle(c);
        }
        // After the commands: a batch they started shows its rows queued in this frame.
        self.rebuild_library();

        egui::Panel::top("cf_tabs").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.heading("ClipForge");
                ui.separator();
                let tab = &mut self.persisted.tab;
                ui.selectable_value(tab, Tab::Clips, "Clips");
                ui.selectable_value(tab, Tab::Charts, "Charts");
                ui.selectable_value(tab, Tab::Lab, "Lab");
                ui.selectable_value(tab, Tab::Watch, "Watch");
                ui.selectable_value(tab, Tab::Headers, "Headers");
            });
        });

        let commands = match self.persisted.tab {
            Tab::Clips => self.clips_tab(ui),
            Tab::Charts => {
                // A clicked dot opens its clip in the Clips tab.
                let picked = egui::CentralPanel::default()
                    .show(ui, |ui| {
                        charts::charts_ui(ui, &self.library, &self.clips.filter)
                    })
                    .inner;
                match picked {
                    Some(key) => {
                        self.persisted.tab = Tab::Clips;
                        vec![Command::OpenClip { key, add: false }]
                    }
                    None => Vec::new(),
                }
            }
            Tab::Lab => {
                let settings = self.compression_settings();
                egui::CentralPanel::default().show(ui, |ui| {
                    self.lab
                        .ui(ui, &self.library, self.detail.selected.as_ref(), &settings)
                });
                Vec::new()
            }
            Tab::Watch => {
                egui::CentralPanel::default().show(ui, |ui| self.watch.ui(ui));
                match self.watch.browse_request.take() {
                    Some(pipelines::FormFolder::Input) => {
                        vec![Command::BrowseFolder(DialogTarget::PipelineInput)]
                    }
                    Some(pipelines::FormFolder::Output) => {
                        vec![Command::BrowseFolder(DialogTarget::PipelineOutput)]
                    }
                    None => Vec::new(),
                }
            }
            Tab::Headers => {
                self.headers.ui(ui, &mut self.persisted.headers);
                Vec::new()
            }
        };
        for c in commands {
            self.handle(c);
        }

        self.ab.window(ui.ctx(), &self.persisted.output_dir);
        if let Some(report) = self.ab.kept.take() {
            self.take_kept(report);
        }

        // Keep polling while background work runs (cheap: the UI only reads counters).
        if self.jobs.any_running() || self.detail.loading() || self.folder_dialog.is_some() {
            ui.ctx().request_repaint_after(Duration::from_millis(50));
        }
        if self.headers.busy() || self.lab.busy() {
            ui.ctx().request_repaint_after(Duration::from_millis(50));
        }
        if self.watch.any_active() || self.headers.watching() {
            ui.ctx().request_repaint_after(Duration::from_millis(500));
        }
        let ms = t0.elapsed().as_secs_f32() * 1000.0;
        let running = self.batch_running();
        self.frame_stats.push(ms, running);
    }

    /// The Clips tab: folder bar, footer, settings, detail and table, each its view's panel.
    fn clips_tab(&mut self, ui: &mut egui::Ui) -> Vec<Command> {
        let mut out = Vec::new();
        let Self {
            persisted,
            library,
            jobs,
            clips,
            settings,
            detail,
            watch,
            frame_stats,
            eframe_cpu_ms,
            ..
        } = self;
        let threshold = persisted.settings.error_threshold_cm as f64;
        let open_clip = detail.selected.clone();
        let mut cx = ClipsCtx {
            persisted,
            library,
            jobs,
            watch,
            open_clip: open_clip.as_ref(),
            frame_stats,
            eframe_cpu_ms: *eframe_cpu_ms,
        };
        egui::Panel::top("cf_folders").show(ui, |ui| out.extend(clips.top_ui(ui, &mut cx)));
        egui::Panel::bottom("cf_footer").show(ui, |ui| out.extend(clips.footer_ui(ui, &mut cx)));
        let (running, stale) = (jobs.batch.is_some(), library.summary.stale);
        egui::Panel::left("cf_settings")
            .resizable(true)
            .default_size(230.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    out.extend(settings.ui(ui, &mut cx.persisted.settings, running, stale))
                });
            });
        if detail.selected.is_some() {
            let h = ui.available_height();
            egui::Panel::bottom("cf_detail")
                .resizable(true)
                .default_size((h * 0.52).max(200.0))
                // The clip table keeps room for rows whatever the detail holds (at 1280×800
                // with the per-bone table open it shrank to one row).
                .max_size((h - 170.0).max(200.0))
                .show(ui, |ui| {
                    // What does not fit scrolls: taller content pushed the title row (Compare
                    // presets…, Close) up under the table at 1280×800 with a 31-bone clip.
                    egui::ScrollArea::vertical()
                        .id_salt("cf_detail_scroll")
                        .auto_shrink(false)
                        .show(ui, |ui| out.extend(detail.ui(ui, library, threshold)));
                });
        }
        egui::CentralPanel::default().show(ui, |ui| out.extend(clips.table_ui(ui, &mut cx)));
        out
    }

    /// Ctrl+O open folder, Ctrl+Enter compress all, Esc cancel (on the Headers and Lab tabs:
    /// their jobs too).
    fn keyboard(&mut self, ui: &mut egui::Ui) -> Vec<Command> {
        let (open, compress, cancel) = ui.input_mut(|i| {
            (
                i.consume_key(egui::Modifiers::COMMAND, egui::Key::O),
                i.consume_key(egui::Modifiers::COMMAND, egui::Key::Enter),
                i.consume_key(egui::Modifiers::NONE, egui::Key::Escape),
            )
        });
        let mut out = Vec::new();
        if open {
            out.push(Command::BrowseFolder(DialogTarget::Input));
        }
        if compress {
            out.push(Command::Compress(CompressScope::All));
        }
        if cancel {
            out.push(Command::Cancel);
        }
        out
    }

    /// Carries out one cross-view action: the only place where one view's action changes
    /// another view, the jobs or the library.
    pub fn handle(&mut self, cmd: Command) {
        if self.command_log.len() >= COMMAND_LOG_LEN {
            self.command_log.pop_front();
        }
        self.command_log.push_back(cmd.clone());
        match cmd {
            Command::OpenClip { key, add } => {
                let sel = &mut self.clips.selection;
                if add {
                    if !sel.remove(&key) {
                        sel.insert(key.clone());
                    }
                } else {
                    sel.clear();
                    sel.insert(key.clone());
                }
                let ctx = self.ctx_for_jobs();
                self.detail.select(key, &self.library, &ctx);
            }
            Command::ClearDetail => {
                self.detail.close();
                self.clips.selection.clear();
            }
            Command::Scan => self.start_scan(),
            Command::Compress(scope) => self.compress(scope),
            Command::RecompressStale => {
                let paths = self
                    .library
                    .rows
                    .iter()
                    .filter(|r| r.status == RowStatus::Stale)
                    .map(|r| r.key.path.clone())
                    .collect();
                self.compress(CompressScope::Files(paths));
            }
            Command::Cancel => {
                if self.jobs.scan_job.is_some() {
                    self.clips.message = Some(("Scan cancelled".into(), false));
                }
                self.jobs.cancel();
                if self.persisted.tab == Tab::Headers {
                    self.headers.cancel();
                }
                if self.persisted.tab == Tab::Lab {
                    self.lab.cancel();
                }
            }
            Command::BrowseFolder(target) => self.open_folder_dialog(target),
            Command::SetWatched { dir, on } => self.set_watched(&dir, on),
            Command::Export { json } => self.clips.export_message = Some(self.export(json)),
            Command::SettingsChanged => self.library.mark_dirty_now(),
            Command::SettingsFilesChanged => self.library.settings_files_changed(),
            Command::ClearSelection => self.clips.selection.clear(),
            Command::Message { text, error } => self.clips.message = Some((text, error)),
            Command::Drop(action) => self.apply_drop(action),
            Command::ComparePresets(key) => self.open_ab(&key),
        }
    }

    /// What a drop still waits for: the dropped root's header scan once the old scan stopped,
    /// and the dropped clip's selection once its folder's rows are there.
    fn poll_drop(&mut self) -> Vec<Command> {
        if self.drop.pending_headers_scan && !self.headers.busy() {
            self.drop.pending_headers_scan = false;
            self.headers.start_scan(&self.persisted.headers, false);
        }
        let Some(clip) = self.drop.pending_clip.clone() else {
            return Vec::new();
        };
        // The rows must show the scan's files first: a drop that looked for the clip in rows
        // not yet rebuilt would say it is absent and give up.
        if self.jobs.scan_job.is_some() || self.library.rows_pending() {
            return Vec::new();
        }
        let canon = clip.canonicalize().unwrap_or_else(|_| clip.clone());
        let key = self
            .library
            .rows
            .iter()
            .find(|r| r.key.path == canon || r.key.path == clip)
            .map(|r| r.key.clone());
        if let Some(key) = key {
            self.drop.pending_clip = None;
            vec![Command::OpenClip { key, add: false }]
        } else if self.jobs.inspect_job.is_none() && self.jobs.cached_job.is_none() {
            // Scanned and read, and still not there: not a clip of this folder after all.
            self.drop.pending_clip = None;
            vec![Command::Message {
                text: format!("{}: no clip found in this file", drop::name_of(&clip)),
                error: true,
            }]
        } else {
            Vec::new()
        }
    }

    /// Does what [`plan_drop`] decided.
    fn apply_drop(&mut self, action: DropAction) {
        match action {
            DropAction::OpenInput(dir) => {
                self.persisted.tab = Tab::Clips;
                self.persisted.input_dir = dir.display().to_string();
                self.drop.pending_clip = None;
                self.start_scan();
            }
            DropAction::OpenClip { folder, clip } => {
                self.persisted.tab = Tab::Clips;
                self.persisted.input_dir = folder.display().to_string();
                self.start_scan();
                self.drop.pending_clip = Some(clip);
            }
            DropAction::HeadersRoot(dir) => {
                self.headers.message = Some((
                    drop::set_headers_root(&mut self.persisted.headers, &dir),
                    false,
                ));
                // A running scan (of the old root) stops first; the new one starts after it.
                self.headers.cancel();
                self.drop.pending_headers_scan = true;
            }
            DropAction::Unsupported(msg) => {
                if self.persisted.tab == Tab::Headers {
                    self.headers.message = Some((msg, true));
                } else {
                    self.clips.message = Some((msg, true));
                }
            }
        }
    }

    /// Opens the A/B window for a clip: A is what the clip was compressed with (else the Clips
    /// tab's settings), B another preset.
    fn open_ab(&mut self, key: &RowKey) {
        let root = self
            .library
            .root
            .clone()
            .or_else(|| key.path.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        let names = self
            .detail
            .data
            .as_ref()
            .filter(|d| d.key == *key)
            .map(|d| d.names.clone())
            .unwrap_or_default();
        // What the clip was compressed with, when it has a result.
        let compressed_with = self
            .library
            .row(key)
            .and_then(|r| r.good_report())
            .and_then(|p| p.settings.as_ref())
            .map(|s| s.error_threshold_cm);
        self.ab.open_for(
            key.clone(),
            &root,
            names,
            &self.persisted.settings,
            compressed_with,
        );
    }

    /// A side kept in the A/B window: its row shows the kept report (in the generation of the
    /// file's other rows, so a multi-clip file keeps its other clips' results). Its settings are
    /// the tab's: the kept threshold comes from the clip's `[[clip]]` table, which every batch
    /// applies, so the row is not stale.
    fn take_kept(&mut self, report: crate::pipeline::report::ClipReport) {
        let path = PathBuf::from(&report.input);
        let generation = self
            .library
            .results
            .get(&path)
            .and_then(|l| l.first())
            .map(|r| r.generation)
            .unwrap_or(self.jobs.batch_generation);
        let settings = self.persisted.settings.compression();
        let output = PathBuf::from(self.persisted.output_dir.trim());
        // Its [[clip]] table was just written: what applies to the clip changed.
        self.library.settings_files_changed();
        self.library
            .add_reports(&[report], &settings, &output, generation);
    }

    /// Scans the input folder (the table fills when it returns).
    fn start_scan(&mut self) {
        match self.jobs.start_scan(&self.persisted.input_dir) {
            Err(m) => {
                self.clips.message = Some((m, true));
                // The table showed the previous folder's rows under "Input folder not found".
                if self.library.root.is_some() {
                    self.library.forget_folder();
                    self.handle(Command::ClearDetail);
                    self.handle(Command::ClearSelection);
                }
            }
            Ok(root) => {
                self.clips.message = None;
                self.persisted.remember_recent();
                if self.library.root.as_deref() != Some(root.as_path()) {
                    self.handle(Command::ClearDetail);
                    // Another folder: the old folder's filter would hide its rows ("0 of 34").
                    self.clips.filter.clear();
                }
            }
        }
    }

    /// "Compress all" / "Compress selected": scans first when the folder was not scanned yet.
    fn compress(&mut self, scope: CompressScope) {
        if self.jobs.batch.is_some() {
            return;
        }
        let input = jobs::canonical(self.persisted.input_dir.trim());
        let output = PathBuf::from(self.persisted.output_dir.trim());
        if self.persisted.output_dir.trim().is_empty() {
            self.clips.message = Some(("Choose an output folder first".into(), true));
            return;
        }
        if self.jobs.scan_job.is_some() {
            self.jobs.pending_compress = Some(scope);
            return;
        }
        if self.library.root.as_deref() != Some(input.as_path()) {
            self.start_scan();
            if self.jobs.scan_job.is_some() {
                self.jobs.pending_compress = Some(scope);
            }
            return;
        }
        let request = jobs::BatchRequest {
            output: output.clone(),
            options: BatchOptions {
                settings: self.compression_settings(),
                output_root: output,
                jobs: jobs::background_workers(self.persisted.settings.jobs),
                use_skip_cache: self.persisted.settings.use_skip_cache,
            },
        };
        let ctx = self.ctx_for_jobs();
        match self.jobs.start_batch(&scope, &self.library, request, &ctx) {
            Err(m) => self.clips.message = Some((m, true)),
            Ok(()) => {
                self.persisted.remember_recent();
                self.clips.message = None;
                self.frame_stats.reset_batch();
                self.library.mark_dirty_now();
            }
        }
    }

    fn ctx_for_jobs(&self) -> egui::Context {
        self.ctx.clone().unwrap_or_default()
    }

    /// Starts the native folder picker on its own thread (it may be missing or block).
    fn open_folder_dialog(&mut self, target: DialogTarget) {
        if self.folder_dialog.is_some() {
            return;
        }
        let (tx, rx) = mpsc::channel();
        let start = match target {
            DialogTarget::Input => self.persisted.input_dir.clone(),
            DialogTarget::Output => self.persisted.output_dir.clone(),
            DialogTarget::PipelineInput => self.watch.form.input.clone(),
            DialogTarget::PipelineOutput => self.watch.form.output.clone(),
        };
        std::thread::spawn(move || {
            let mut d = rfd::FileDialog::new().set_title("Choose a folder");
            if Path::new(&start).is_dir() {
                d = d.set_directory(&start);
            }
            let _ = tx.send((target, d.pick_folder()));
        });
        self.folder_dialog = Some(rx);
    }

    /// Takes what the jobs, the dialog and the pipelines finished; returns what must follow.
    fn poll(&mut self, ctx: &egui::Context) -> Vec<Command> {
        let mut out = Vec::new();
        if let Some(rx) = &self.folder_dialog {
            match rx.try_recv() {
                Ok((target, picked)) => {
                    self.folder_dialog = None;
                    match picked {
                        Some(p) => {
                            let s = p.display().to_string();
                            match target {
                                DialogTarget::Input => {
                                    self.persisted.input_dir = s;
                                    out.push(Command::Scan);
                                }
                                DialogTarget::Output => self.persisted.output_dir = s,
                                DialogTarget::PipelineInput => self.watch.form.input = s,
                                DialogTarget::PipelineOutput => self.watch.form.output = s,
                            }
                        }
                        None => {
                            let text = "No folder chosen (or no folder dialog on this desktop): type the path instead";
                            match target {
                                DialogTarget::PipelineInput | DialogTarget::PipelineOutput => {
                                    self.watch.message = Some((text.into(), false))
                                }
                                _ => out.push(Command::Message {
                                    text: text.into(),
                                    error: false,
                                }),
                            }
                        }
                    }
                }
                Err(mpsc::TryRecvError::Disconnected) => self.folder_dialog = None,
                Err(mpsc::TryRecvError::Empty) => {}
            }
        }
        // Commands that change the library's folder run before the rest reads it.
        for c in std::mem::take(&mut out) {
            self.handle(c);
        }
        self.headers.poll(&mut self.persisted.headers, ctx);
        let output = self.persisted.output_dir.trim();
        let cache = (!output.is_empty()).then(|| BatchOptions {
            settings: self.persisted.settings.compression(),
            output_root: PathBuf::from(output),
            jobs: 0,
            use_skip_cache: true,
        });
        let output = PathBuf::from(output);
        if self.jobs.scan_job.is_some() {
            // The scan's own lookup reads the folder shown when it returns.
            self.cache_output = output;
        } else if output != self.cache_output {
            self.cache_output = output;
            if self.jobs.batch.is_none() && self.library.root.is_some() {
                self.jobs
                    .output_changed(&mut self.library, cache.clone(), ctx);
            }
        }
        self.jobs.poll_scan(&mut self.library, cache, ctx, &mut out);
        self.jobs.poll_cached(&mut self.library);
        self.jobs.poll_inspect(&mut self.library);
        self.jobs.poll_batch(&mut self.library, &mut out);
        if self.jobs.scan_job.is_none()
            && let Some(scope) = self.jobs.pending_compress.take()
        {
            out.push(Command::Compress(scope));
        }
        self.detail.poll();
        // Also when another tab is shown, so a finished lab job is not held until the tab opens.
        self.lab.poll();
        for r in self.watch.poll() {
            // What a pipeline did to a file of the folder open in the Clips tab shows there at
            // once (one generation per event: it replaces the file's older rows).
            let Some(root) = self.library.root.clone() else {
                continue;
            };
            if !r.path.starts_with(&root) {
                continue;
            }
            if r.removed {
                if self.jobs.inspect_job.is_some() {
                    // Its index is still in flight: keep the row, drop its results.
                    self.library.forget_results(&r.path);
                } else {
                    self.library.remove_file(&r.path);
                }
                if self
                    .detail
                    .selected
                    .as_ref()
                    .is_some_and(|k| k.path == r.path)
                {
                    self.detail.close();
                }
                continue;
            }
            self.library.ensure_file(&root, &r.path);
            self.jobs.batch_generation += 1;
            self.library.add_reports(
                &r.reports,
                &r.settings,
                &r.output,
                self.jobs.batch_generation,
            );
        }
        if self.watch.take_changed() {
            self.persisted.pipelines = self.watch.saved();
        }
        self.persisted.pipelines_file = self.watch.file_path.clone();
        out
    }

    /// Brings the table's rows up to date (cheap when nothing changed).
    fn rebuild_library(&mut self) {
        self.library.rebuild_if_needed(
            &self.persisted.settings.compression(),
            Path::new(self.persisted.output_dir.trim()),
            self.persisted.sort,
            &self.clips.filter,
            self.jobs.queued(),
        );
    }

    /// Cancels the running batch (Esc).
    pub fn cancel(&mut self) {
        self.jobs.cancel();
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
            .jobs
            .last_batch_for(
                self.library.root.as_deref(),
                Path::new(self.persisted.output_dir.trim()),
            )
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
            "" => DEFAULT_EXPORT_NAME,
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
                // "1 clip": a one-clip folder read "Exported 1 clips".
                format!(
                    "Exported {} to {}",
                    util::fmt_counted(report.clips.len() as u64, "clip"),
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
                self.clips.message = Some((format!("Cannot watch {dir}: not a folder"), true));
                return;
            }
            let i = match self.watch.index_of_input(dir) {
                Some(i) => i,
                None => {
                    if self.persisted.output_dir.trim().is_empty() {
                        self.clips.message = Some(("Choose an output folder first".into(), true));
                        return;
                    }
                    match self.watch.add(self.pipeline_from_clips_tab(dir)) {
                        Ok(i) => i,
                        Err(e) => {
                            self.clips.message = Some((format!("Cannot watch {dir}: {e}"), true));
                            return;
                        }
                    }
                }
            };
            self.watch.start(i);
            if let PipelineStatus::Error(e) = &self.watch.pipelines[i].status {
                self.clips.message = Some((format!("Cannot watch {dir}: {e}"), true));
            }
        } else if let Some(i) = self.watch.index_of_input(dir) {
            self.watch.stop(i);
        }
    }
}

/// The eframe wrapper: persistence and the frame-time readout.
pub struct ClipForgeApp {
    pub state: AppState,
}

const STORAGE_KEY: &str = "clipforge_app_state";

/// Writes what persists between runs (settings, folders, tab, watched folders) to eframe's storage.
pub fn save_persisted(storage: &mut dyn eframe::Storage, state: &AppState) {
    eframe::set_value(storage, STORAGE_KEY, &state.persisted);
}

/// Reads it back; `None` on the very first start (or an unreadable store).
pub fn load_persisted(storage: &dyn eframe::Storage) -> Option<Persisted> {
    eframe::get_value(storage, STORAGE_KEY)
}

impl ClipForgeApp {
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        let stored = cc.storage.and_then(load_persisted);
        let first_start = stored.is_none();
        let mut persisted = stored.unwrap_or_default();
        // CLIPFORGE_TAB=clips|charts|lab|watch|headers opens that tab (screenshots, scripts).
        if let Ok(t) = std::env::var("CLIPFORGE_TAB") {
            match t.to_ascii_lowercase().as_str() {
                "clips" => persisted.tab = Tab::Clips,
                "charts" => persisted.tab = Tab::Charts,
                "lab" => persisted.tab = Tab::Lab,
                "watch" => persisted.tab = Tab::Watch,
                "headers" => persisted.tab = Tab::Headers,
                _ => eprintln!(
                    "clipforge: CLIPFORGE_TAB={t}: expected clips, charts, lab, watch or headers"
                ),
            }
        }
        let mut state = AppState::new(persisted);
        state.start(first_start);
        close_on_sigterm(&cc.egui_ctx);
        Self { state }
    }
}

/// Set by the SIGTERM handler; read by a watcher thread.
static SIGTERM_RECEIVED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A session logout (or `kill`) sends SIGTERM, whose default action ends the process before
/// eframe saves the settings. Instead, close the window the normal way, so `save` and `on_exit`
/// run (settings persisted, batch cancelled with no partial files). The handler only sets a flag
/// (async-signal-safe); a small thread turns it into a close command. std has no signal API,
/// hence libc.
fn close_on_sigterm(ctx: &egui::Context) {
    #[cfg(unix)]
    {
        extern "C" fn on_sigterm(_: libc::c_int) {
            SIGTERM_RECEIVED.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        // SAFETY: installs a handler that only stores to an atomic.
        unsafe {
            libc::signal(
                libc::SIGTERM,
                on_sigterm as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
        let ctx = ctx.clone();
        let _ = std::thread::Builder::new()
            .name("clipforge-sigterm".into())
            .spawn(move || {
                while !SIGTERM_RECEIVED.load(std::sync::atomic::Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(100));
                }
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                ctx.request_repaint();
            });
    }
    #[cfg(not(unix))]
    let _ = ctx;
}

impl eframe::App for ClipForgeApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        self.state.eframe_cpu_ms = frame.info().cpu_usage.map(|s| s * 1000.0);
        self.state.ui(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        save_persisted(storage, &self.state);
    }

    /// eframe saves on exit and then every interval while frames run; 30 s (its default) loses
    /// too much if the app is killed.
    fn auto_save_interval(&self) -> Duration {
        Duration::from_secs(5)
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.state.jobs.cancel();
        self.state.ab.cancel();
        self.state.headers.cancel();
        self.state.lab.cancel();
        self.state.ab.cancel();
        self.state.watch.stop_all();
    }
}

/// Why no window can be opened, if we can tell before trying.
fn missing_display() -> Option<String> {
    if cfg!(target_os = "linux") {
        let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
        if !set("DISPLAY") && !set("WAYLAND_DISPLAY") {
            return Some(
                "no display found (DISPLAY is not set): the desktop app needs a graphical session; \
                 use the CLI instead, see `clipforge --help`"
                    .into(),
            );
        }
    }
    None
}

/// Opens the app window; returns a one-line error message when no window can be opened.
pub fn run_app() -> Result<(), String> {
    if let Some(msg) = missing_display() {
        return Err(msg);
    }
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("ClipForge")
            .with_app_id("clipforge")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([800.0, 500.0]),
        ..Default::default()
    };
    eframe::run_native(
        "ClipForge",
        options,
        Box::new(|cc| Ok(Box::new(ClipForgeApp::new(cc)))),
    )
    .map_err(|e| {
        let detail = e.to_string().replace('\n', " ");
        format!(
            "could not open the app window ({detail}): the desktop app needs a graphical session; \
                 use the CLI instead, see `clipforge --help`"
        )
    })
}

/// egui's weak text is the text colour at 60 % alpha: #5F5F5F on the dark panel (#1B1B1B) is
/// 2.7:1, under the 4.5:1 that small text needs. Explicit greys give 5.8:1 on the dark theme's
/// panel and 5.2:1 on the light one's.
pub fn readable_weak_text(ctx: &egui::Context) {
    ctx.style_mut_of(egui::Theme::Dark, |s| {
        s.visuals.weak_text_color = Some(egui::Color32::from_gray(150));
    });
    ctx.style_mut_of(egui::Theme::Light, |s| {
        s.visuals.weak_text_color = Some(egui::Color32::from_gray(105));
    });
}
