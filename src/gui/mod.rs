//! The egui desktop app: one window with the "Clips" library (table, settings, clip detail),
//! "Charts", "Lab" (the three codec families of `anim::lab` side by side), "Watch" (watched
//! folders + event log) and "Headers" tabs.
//!
//! All the work (scanning, compressing, the skip cache, reports) is done by [`crate::pipeline`]
//! and [`crate::anim`] on background threads; the UI only polls their progress counters and
//! channels, so it never blocks. [`AppState::ui`] is callable without eframe (egui_kittest drives it).

mod ab_view;
pub mod charts;
mod detail;
mod drop;
pub mod filter;
mod headers_job;
mod headers_tab;
mod jobs;
mod lab_view;
mod library;
mod model;
pub mod open_folder;
mod pipelines;
mod scalar_view;
mod settings;
mod skeleton_view;

pub use drop::{DropAction, plan_drop};
pub use filter::TextFilter;
pub use headers_job::{CompilerPick, HeadersProject};
pub use headers_tab::{HeaderColumn, HeaderSort, HeadersSettings, HeadersState, HeadersView};
pub use lab_view::{ChartSeries, DecodePattern, LabMode, LabView, chart_series};
pub use model::{RowKey, RowStatus};
pub use pipelines::{
    PipelineConfig, PipelineCounts, PipelineStatus, PipelinesState, SavedPipeline, pipelines_toml,
};
pub use settings::Preset;

use crate::anim::CompressionSettings;
use eframe::egui;
use serde::{Deserialize, Serialize};
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Top-level tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Tab {
    #[default]
    Clips,
    Charts,
    Lab,
    Watch,
    Headers,
}

/// Everything that survives a restart (eframe persistence, RON under the app's data dir).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Persisted {
    pub input_dir: String,
    pub output_dir: String,
    pub recent_inputs: Vec<String>,
    pub recent_outputs: Vec<String>,
    pub settings: settings::SettingsState,
    /// Input folders watched by versions before pipelines (read once: they become pipelines).
    #[serde(skip_serializing)]
    pub watched: Vec<String>,
    /// The Watch tab's pipelines (each its own input, output and settings) and which ran.
    pub pipelines: Vec<SavedPipeline>,
    /// The pipelines file the Watch tab saves to / loads from.
    pub pipelines_file: String,
    pub tab: Tab,
    pub sort: model::SortState,
    pub export_path: String,
    /// The Headers tab's project and view settings.
    pub headers: headers_tab::HeadersSettings,
}

impl Default for Persisted {
    fn default() -> Self {
        let input = bundled_assets_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let output = std::env::temp_dir()
            .join("clipforge-out")
            .display()
            .to_string();
        Self {
            input_dir: input,
            output_dir: output,
            recent_inputs: Vec::new(),
            recent_outputs: Vec::new(),
            settings: settings::SettingsState::default(),
            watched: Vec::new(),
            pipelines: Vec::new(),
            pipelines_file: String::new(),
            tab: Tab::Clips,
            sort: model::SortState::default(),
            export_path: String::new(),
            headers: headers_tab::HeadersSettings::default(),
        }
    }
}

/// The bundled sample library: `assets/` of the crate this was built from, else `./assets`.
pub fn bundled_assets_dir() -> Option<PathBuf> {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    if built.is_dir() {
        return Some(built);
    }
    let cwd = PathBuf::from("assets");
    cwd.is_dir().then(|| cwd.canonicalize().unwrap_or(cwd))
}

/// The app state; its [`AppState::ui`] draws the whole window into any `Ui`.
pub struct AppState {
    pub persisted: Persisted,
    pub library: model::Library,
    pub scan_job: Option<jobs::ScanJob>,
    pub inspect_job: Option<jobs::InspectJob>,
    /// Reading the previous results of the scanned folder from the skip cache.
    pub cached_job: Option<jobs::CachedJob>,
    pub batch: Option<jobs::BatchJob>,
    /// Set when "Compress all" was pressed before the folder was scanned.
    pending_compress: Option<jobs::CompressScope>,
    pub last_batch: Option<jobs::BatchOutcome>,
    pub detail: detail::DetailState,
    /// The Watch tab's pipelines: they own their folders and settings.
    pub watch: pipelines::PipelinesState,
    /// The Headers tab (its scan, watcher, selection).
    pub headers: headers_tab::HeadersState,
    /// The Lab tab (its clip, jobs and results).
    pub lab: lab_view::LabView,
    folder_dialog: Option<mpsc::Receiver<(DialogTarget, Option<PathBuf>)>>,
    /// One-line messages shown under the folder bar (errors).
    pub message: Option<(String, bool)>,
    /// The last export's message, shown next to the export buttons.
    pub export_message: Option<(String, bool)>,
    pub filter: String,
    pub selection: HashSet<RowKey>,
    pub frame_stats: FrameStats,
    /// CPU time of the previous whole frame as eframe reports it (ui + tessellation), when known.
    pub eframe_cpu_ms: Option<f32>,
    /// The context of the last frame (background jobs ask it for repaints).
    ctx: Option<egui::Context>,
    /// Reports of the running batch, merged (becomes `last_batch.report`).
    /// Bumped per batch (and per watch event): a file's first row of a newer generation
    /// replaces all its older rows.
    pub(crate) batch_generation: u64,
    /// A dropped clip waiting for its folder's scan (see `drop.rs`).
    pub drop: drop::DropState,
    /// The "Compare presets" (A/B) window of a clip.
    pub ab: ab_view::AbView,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DialogTarget {
    Input,
    Output,
}

/// Time spent in [`AppState::ui`] over the last frames.
#[derive(Default)]
pub struct FrameStats {
    pub recent_ms: VecDeque<f32>,
    pub worst_during_batch_ms: f32,
    pub frames_during_batch: u64,
    pub sum_during_batch_ms: f64,
}

impl FrameStats {
    fn push(&mut self, ms: f32, batch_running: bool) {
        if self.recent_ms.len() >= 120 {
            self.recent_ms.pop_front();
        }
        self.recent_ms.push_back(ms);
        if batch_running {
            self.worst_during_batch_ms = self.worst_during_batch_ms.max(ms);
            self.frames_during_batch += 1;
            self.sum_during_batch_ms += ms as f64;
        }
    }
    pub fn average_ms(&self) -> f32 {
        if self.recent_ms.is_empty() {
            0.0
        } else {
            self.recent_ms.iter().sum::<f32>() / self.recent_ms.len() as f32
        }
    }
    pub fn max_ms(&self) -> f32 {
        self.recent_ms.iter().copied().fold(0.0, f32::max)
    }
}

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
            scan_job: None,
            inspect_job: None,
            cached_job: None,
            batch: None,
            pending_compress: None,
            last_batch: None,
            detail: detail::DetailState::default(),
            watch: pipelines::PipelinesState::default(),
            headers: headers_tab::HeadersState::default(),
            lab: lab_view::LabView::default(),
            folder_dialog: None,
            message: None,
            export_message: None,
            filter: String::new(),
            selection: HashSet::new(),
            frame_stats: FrameStats::default(),
            eframe_cpu_ms: None,
            ctx: None,
            batch_generation: 0,
            drop: drop::DropState::default(),
            ab: ab_view::AbView::default(),
        }
    }

    /// What the desktop app does on start: scan the input folder (and compress it on the very
    /// first start, so a new user sees results at once), and resume watched folders.
    pub fn start(&mut self, first_start: bool) {
        if Path::new(&self.persisted.input_dir).is_dir() {
            self.start_scan();
            if first_start {
                self.pending_compress = Some(jobs::CompressScope::All);
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
    pub fn pipeline_from_clips_tab(&self, input: &str) -> pipelines::PipelineConfig {
        let s = &self.persisted.settings;
        let short = pipelines::short_f64;
        pipelines::PipelineConfig {
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

    /// True while a scan, an inspection or a batch runs.
    pub fn is_busy(&self) -> bool {
        self.scan_job.is_some() || self.batch.is_some() || self.pending_compress.is_some()
    }

    /// True while a batch runs.
    pub fn batch_running(&self) -> bool {
        self.batch.is_some()
    }

    /// Draws the whole app.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let t0 = Instant::now();
        if self.ctx.is_none() {
            self.ctx = Some(ui.ctx().clone());
            readable_weak_text(ui.ctx());
        }
        self.poll(ui.ctx());
        self.handle_drops(ui.ctx());
        self.keyboard(ui);

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

        match self.persisted.tab {
            Tab::Clips => self.clips_tab(ui),
            Tab::Charts => {
                let picked = egui::CentralPanel::default()
                    .show(ui, |ui| charts::charts_ui(ui, &self.library))
                    .inner;
                if let Some(key) = picked {
                    self.persisted.tab = Tab::Clips;
                    self.select_row(key, false);
                }
            }
            Tab::Lab => {
                let settings = self.compression_settings();
                egui::CentralPanel::default().show(ui, |ui| {
                    self.lab
                        .ui(ui, &self.library, self.detail.selected.as_ref(), &settings)
                });
            }
            Tab::Watch => {
                egui::CentralPanel::default().show(ui, |ui| {
                    egui::ScrollArea::vertical()
                        .id_salt("cf_watch_scroll")
                        .show(ui, |ui| pipelines::watch_ui(ui, &mut self.watch));
                });
            }
            Tab::Headers => {
                self.headers.ui(ui, &mut self.persisted.headers);
            }
        }

        self.ab.window(ui.ctx(), &self.persisted.output_dir);

        // Keep polling while background work runs (cheap: the UI only reads counters).
        if self.is_busy()
            || self.inspect_job.is_some()
            || self.cached_job.is_some()
            || self.detail.loading()
            || self.folder_dialog.is_some()
        {
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

    fn clips_tab(&mut self, ui: &mut egui::Ui) {
        egui::Panel::top("cf_folders").show(ui, |ui| self.folder_bar(ui));
        egui::Panel::bottom("cf_footer").show(ui, |ui| self.footer(ui));
        egui::Panel::left("cf_settings")
            .resizable(true)
            .default_size(230.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| self.settings_panel(ui));
            });
        if self.detail.selected.is_some() {
            let h = ui.available_height();
            egui::Panel::bottom("cf_detail")
                .resizable(true)
                .default_size((h * 0.52).max(200.0))
                .show(ui, |ui| self.detail_ui(ui));
        }
        egui::CentralPanel::default().show(ui, |ui| self.table_ui(ui));
    }

    /// Ctrl+O open folder, Ctrl+Enter compress all, Esc cancel (on the Headers and Lab tabs:
    /// their jobs too).
    fn keyboard(&mut self, ui: &mut egui::Ui) {
        let (open, compress, cancel) = ui.input_mut(|i| {
            (
                i.consume_key(egui::Modifiers::COMMAND, egui::Key::O),
                i.consume_key(egui::Modifiers::COMMAND, egui::Key::Enter),
                i.consume_key(egui::Modifiers::NONE, egui::Key::Escape),
            )
        });
        if open {
            self.open_folder_dialog(DialogTarget::Input);
        }
        if compress {
            self.compress(jobs::CompressScope::All);
        }
        if cancel {
            self.cancel();
            if self.persisted.tab == Tab::Headers {
                self.headers.cancel();
            }
            if self.persisted.tab == Tab::Lab {
                self.lab.cancel();
            }
        }
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

    fn poll(&mut self, ctx: &egui::Context) {
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
                                    self.start_scan();
                                }
                                DialogTarget::Output => self.persisted.output_dir = s,
                            }
                        }
                        None => {
                            self.message = Some((
                                "No folder chosen (or no folder dialog on this desktop): type the path instead".into(),
                                false,
                            ))
                        }
                    }
                }
                Err(mpsc::TryRecvError::Disconnected) => self.folder_dialog = None,
                Err(mpsc::TryRecvError::Empty) => {}
            }
        }
        self.headers.poll(&mut self.persisted.headers, ctx);
        self.poll_scan();
        self.poll_cached();
        self.poll_inspect();
        self.poll_batch();
        if self.scan_job.is_none()
            && let Some(scope) = self.pending_compress.take()
        {
            self.compress(scope);
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
                if self.inspect_job.is_some() {
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
            self.batch_generation += 1;
            self.library
                .add_reports(&r.reports, &r.settings, self.batch_generation);
        }
        if self.watch.take_changed() {
            self.persisted.pipelines = self.watch.saved();
        }
        self.persisted.pipelines_file = self.watch.file_path.clone();
        self.library
            .rebuild_if_needed(&self.persisted, &self.filter, self.batch.as_ref());
    }

    /// Cancels the running batch (Esc).
    pub fn cancel(&mut self) {
        if let Some(b) = &self.batch {
            b.cancel.cancel();
        }
        self.pending_compress = None;
    }

    fn remember_recent(&mut self) {
        fn push(list: &mut Vec<String>, v: &str) {
            if v.is_empty() {
                return;
            }
            list.retain(|x| x != v);
            list.insert(0, v.to_string());
            list.truncate(8);
        }
        let (i, o) = (
            self.persisted.input_dir.clone(),
            self.persisted.output_dir.clone(),
        );
        push(&mut self.persisted.recent_inputs, &i);
        push(&mut self.persisted.recent_outputs, &o);
    }
}

/// The eframe wrapper: persistence and the frame-time readout.
pub struct ClipForgeApp {
    pub state: AppState,
}

const STORAGE_KEY: &str = "clipforge_app_state";

/// The export file name (without extension), in the current output folder.
pub const DEFAULT_EXPORT_NAME: &str = "clipforge-report";

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
        self.state.cancel();
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

/// Formats bytes as "12.3 KB" / "4.5 MB".
pub(crate) fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b < 1024.0 {
        format!("{b:.0} B")
    } else if b < 1024.0 * 1024.0 {
        format!("{:.1} KB", b / 1024.0)
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} MB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.2} GB", b / (1024.0 * 1024.0 * 1024.0))
    }
}

/// Thousands separators: 12345 → "12,345".
pub(crate) fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
