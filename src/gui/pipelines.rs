//! The Watch tab's pipelines and their event log.
//!
//! A pipeline is a value: an input folder, an output folder and its own settings
//! ([`PipelineConfig`], the keys of a `clipforge watch --pipelines` file). The Watch tab owns the
//! list; the Clips tab's folders and settings never reach a pipeline once it exists, so a running
//! watch always writes into its own output folder with its own settings. Each running pipeline is
//! one `pipeline::watch` (the engine's [`Pipeline`] turned into watch options, exactly as the CLI
//! does); the UI drains its events every frame into the log and the pipeline's counters, and
//! hands their report rows to the Clips table.

use super::settings::Preset;
use crate::anim::CompressionSettings;
use crate::pipeline::pipelines::{Pipeline, PipelinesFile, check_overlaps};
use crate::pipeline::report::ClipReport;
use crate::pipeline::watch::{WatchEventKind, WatchHandle, start_watch};
use eframe::egui;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A failed file's log line: the message usually starts with the full path (`/in/broken.bvh:4:
/// …` or `/in/broken.bvh: …`): shown with the short name and the rest as is, so it reads
/// `broken.bvh:4: …` as the CLI's `path:line:`.
pub fn failure_line(name: &str, full: &str, message: &str) -> String {
    match message.strip_prefix(full) {
        Some(rest) if rest.starts_with(':') => format!("{name}{rest}"),
        _ => format!("{name}: {message}"),
    }
}

/// One pipeline as the user configured it: the keys of a `[[pipeline]]` table of a
/// `clipforge watch --pipelines` file (thresholds in cm).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PipelineConfig {
    pub name: String,
    pub input: String,
    pub output: String,
    /// In cm; `None`: the folders' `clipforge.toml`, else 0.01 cm.
    pub error_threshold: Option<f64>,
    /// In cm; `None`: each bone's own (or the folders' `clipforge.toml`).
    pub shell_distance: Option<f64>,
    /// Regular expressions over the path relative to the input folder.
    pub exclude: Vec<String>,
    /// Worker threads (0 = every core, at a lower priority than the UI).
    pub jobs: usize,
    /// Ignore the skip cache (recompress everything on start).
    pub no_skip: bool,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            name: String::new(),
            input: String::new(),
            output: String::new(),
            error_threshold: Some(short_f64(crate::anim::DEFAULT_ERROR_THRESHOLD_CM)),
            shell_distance: None,
            exclude: Vec::new(),
            jobs: 0,
            no_skip: false,
        }
    }
}

impl PipelineConfig {
    /// A pipeline with the values of a settings preset.
    pub fn with_preset(
        name: &str,
        input: &str,
        output: &str,
        preset: Preset,
        custom_cm: f64,
    ) -> Self {
        let (threshold, shell) = preset
            .values()
            .map(|(t, s)| (short_f64(t), s.map(short_f64)))
            .unwrap_or((custom_cm, None));
        Self {
            name: name.to_string(),
            input: input.trim().to_string(),
            output: output.trim().to_string(),
            error_threshold: Some(threshold),
            shell_distance: shell,
            ..Default::default()
        }
    }

    /// The engine's pipeline (exclude patterns compiled).
    pub fn to_engine(&self) -> Result<Pipeline, String> {
        let positive = |v: Option<f64>, key: &str| match v {
            Some(x) if !(x.is_finite() && x > 0.0) => {
                Err(format!("{key} must be a positive number of cm, got {x}"))
            }
            _ => Ok(v.map(|x| x as f32)),
        };
        if self.input.trim().is_empty() || self.output.trim().is_empty() {
            return Err("a pipeline needs an input folder and an output folder".into());
        }
        let exclude = self
            .exclude
            .iter()
            .map(|p| {
                crate::pipeline::folder_settings::compile_exclude(p)
                    .map_err(|e| format!("exclude '{p}': {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Pipeline {
            name: self.name.clone(),
            input: PathBuf::from(self.input.trim()),
            output: PathBuf::from(self.output.trim()),
            error_threshold: positive(self.error_threshold, "error_threshold")?,
            shell_distance: positive(self.shell_distance, "shell_distance")?,
            exclude,
            jobs: self.jobs,
            no_skip: self.no_skip,
            // The app's pipelines sample curve formats at the file's own rate.
            sample_rate: None,
        })
    }

    /// Back from the engine's pipeline (a loaded pipelines file).
    pub fn from_engine(p: &Pipeline) -> Self {
        Self {
            name: p.name.clone(),
            input: p.input.display().to_string(),
            output: p.output.display().to_string(),
            error_threshold: p.error_threshold.map(short_f64),
            shell_distance: p.shell_distance.map(short_f64),
            exclude: p.exclude.iter().map(|r| r.as_str().to_string()).collect(),
            jobs: p.jobs,
            no_skip: p.no_skip,
        }
    }

    /// What the clips of this pipeline are compressed with when no folder file says otherwise
    /// (the settings its table rows are compared with).
    pub fn compression(&self) -> CompressionSettings {
        let d = CompressionSettings::default();
        CompressionSettings {
            error_threshold: self.error_threshold.map_or(d.error_threshold, |t| t as f32),
            shell_distance: self.shell_distance.map(|s| s as f32).or(d.shell_distance),
            ..Default::default()
        }
    }

    /// "0.01 cm, shell 3 cm, 2 excludes".
    pub fn settings_text(&self) -> String {
        let mut s = match self.error_threshold {
            Some(t) => format!("{t} cm"),
            None => "folder default".into(),
        };
        if let Some(d) = self.shell_distance {
            s.push_str(&format!(", shell {d} cm"));
        }
        if !self.exclude.is_empty() {
            s.push_str(&format!(
                ", {}",
                super::util::fmt_counted(self.exclude.len() as u64, "exclude")
            ));
        }
        if self.no_skip {
            s.push_str(", no skip");
        }
        s
    }
}

/// `v` as the f64 of its shortest decimal: 0.01f32 is 0.01, not 0.009999999776… (what the user
/// chose, and what a pipelines file says).
pub fn short_f64(v: f32) -> f64 {
    v.to_string().parse().unwrap_or(v as f64)
}

/// A pipeline as the app stores it between runs: its configuration and whether it was running.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct SavedPipeline {
    pub config: PipelineConfig,
    pub running: bool,
}

/// The `[[pipeline]]` tables of a pipelines file (what `clipforge watch --pipelines` reads).
pub fn pipelines_toml(configs: &[PipelineConfig]) -> String {
    fn string(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }
    let mut t = String::from(
        "# ClipForge pipelines: run them headless with `clipforge watch --pipelines FILE.toml`.\n",
    );
    for c in configs {
        t.push_str("\n[[pipeline]]\n");
        if !c.name.is_empty() {
            t.push_str(&format!("name = {}\n", string(&c.name)));
        }
        t.push_str(&format!("input = {}\n", string(&c.input)));
        t.push_str(&format!("output = {}\n", string(&c.output)));
        if let Some(v) = c.error_threshold {
            t.push_str(&format!("error_threshold = {v:?}\n"));
        }
        if let Some(v) = c.shell_distance {
            t.push_str(&format!("shell_distance = {v:?}\n"));
        }
        if !c.exclude.is_empty() {
            let list: Vec<String> = c.exclude.iter().map(|e| string(e)).collect();
            t.push_str(&format!("exclude = [{}]\n", list.join(", ")));
        }
        if c.jobs > 0 {
            t.push_str(&format!("jobs = {}\n", c.jobs));
        }
        if c.no_skip {
            t.push_str("no_skip = true\n");
        }
    }
    t
}

#[derive(Clone, Debug, PartialEq)]
pub enum PipelineStatus {
    Idle,
    Watching,
    Error(String),
}

impl PipelineStatus {
    pub fn text(&self) -> String {
        match self {
            PipelineStatus::Idle => "idle".into(),
            PipelineStatus::Watching => "watching".into(),
            PipelineStatus::Error(m) => format!("error: {m}"),
        }
    }
}

/// What a pipeline did since it was added (this session).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipelineCounts {
    pub compressed: u64,
    pub skipped: u64,
    pub failed: u64,
    /// Files with a clip refused as below float32 precision (not in `failed`).
    pub below_precision: u64,
    pub removed: u64,
}

/// One pipeline of the Watch tab: its configuration, its watch when running, what it did.
pub struct PipelineRun {
    pub config: PipelineConfig,
    /// The input folder, canonical when added (the folder bar asks every frame).
    input_canonical: PathBuf,
    handle: Option<WatchHandle>,
    pub status: PipelineStatus,
    pub counts: PipelineCounts,
    pub last_event: Option<(SystemTime, String)>,
}

impl PipelineRun {
    pub fn is_running(&self) -> bool {
        self.handle.is_some()
    }
}

/// One input file a pipeline handled, for the Clips table.
pub struct PipelineResult {
    /// The settings the pipeline compresses with (what its rows are compared with).
    pub settings: CompressionSettings,
    /// The pipeline's output folder (its rows count only while the Clips tab shows it).
    pub output: PathBuf,
    pub path: PathBuf,
    pub reports: Vec<ClipReport>,
    /// The input went away (its outputs were deleted).
    pub removed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    Info,
    Compressed,
    Skipped,
    Failed,
    /// A clip refused as below float32 precision (a setting to raise).
    BelowPrecision,
    Removed,
}

impl LogKind {
    /// What the log's "problems only" filter keeps: failures and refusals, each something for
    /// the user to act on (a file to fix, a threshold to raise).
    pub fn is_problem(self) -> bool {
        matches!(self, Self::Failed | Self::BelowPrecision)
    }
}

#[derive(Clone, Debug)]
pub struct LogEntry {
    pub time: SystemTime,
    /// The pipeline's name.
    pub pipeline: String,
    pub kind: LogKind,
    pub message: String,
}

/// The "Add a pipeline" form: every key of a `[[pipeline]]` table.
pub struct NewPipelineForm {
    /// Empty: the input folder's name (made unique).
    pub name: String,
    pub input: String,
    pub output: String,
    pub preset: Preset,
    pub custom_cm: f64,
    /// Shell distance (cm) when ticked; else the preset's, or each bone's own.
    pub shell_on: bool,
    pub shell_cm: f64,
    /// Exclude patterns (regular expressions), comma-separated.
    pub exclude: String,
    /// Worker threads (0 = every core).
    pub jobs: usize,
}

impl Default for NewPipelineForm {
    fn default() -> Self {
        Self {
            name: String::new(),
            input: String::new(),
            output: String::new(),
            preset: Preset::Default,
            custom_cm: short_f64(crate::anim::DEFAULT_ERROR_THRESHOLD_CM),
            shell_on: false,
            shell_cm: 3.0,
            exclude: String::new(),
            jobs: 0,
        }
    }
}

impl NewPipelineForm {
    /// The pipeline the form describes.
    pub fn config(&self) -> PipelineConfig {
        let mut c = PipelineConfig::with_preset(
            self.name.trim(),
            &self.input,
            &self.output,
            self.preset,
            self.custom_cm,
        );
        if self.shell_on {
            c.shell_distance = Some(short_f64(self.shell_cm as f32));
        }
        c.exclude = self
            .exclude
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect();
        c.jobs = self.jobs;
        c
    }
}

/// Which folder of the add form a folder dialog fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormFolder {
    Input,
    Output,
}

/// Every pipeline of the Watch tab, the event log, and the tab's forms.
#[derive(Default)]
pub struct PipelinesState {
    pub pipelines: Vec<PipelineRun>,
    pub log: VecDeque<LogEntry>,
    pub filter_problems_only: bool,
    pub form: NewPipelineForm,
    /// The pipelines file the tab saves to / loads from.
    pub file_path: String,
    /// The last message of the tab (add refused, file saved…), and whether it is an error.
    pub message: Option<(String, bool)>,
    /// The list or a running state changed: the app persists it.
    changed: bool,
    /// A Browse button of the add form was pressed: the app opens its folder dialog.
    pub browse_request: Option<FormFolder>,
}

const LOG_LIMIT: usize = 5000;

/// The folder as the watcher reports it (canonical when it exists).
fn canonical(p: &str) -> PathBuf {
    let p = PathBuf::from(p.trim());
    p.canonicalize().unwrap_or(p)
}

impl PipelinesState {
    /// The list as stored between runs.
    pub fn saved(&self) -> Vec<SavedPipeline> {
        self.pipelines
            .iter()
            .map(|p| SavedPipeline {
                config: p.config.clone(),
                running: p.is_running() || matches!(p.status, PipelineStatus::Error(_)),
            })
            .collect()
    }

    /// True once after the list or a running state changed.
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Restores the stored list; the ones that were running start again (each catches up with
    /// what changed in its input folder meanwhile).
    pub fn restore(&mut self, saved: &[SavedPipeline]) {
        for s in saved {
            match self.add(s.config.clone()) {
                Ok(i) if s.running => self.start(i),
                Ok(_) => {}
                Err(e) => {
                    let name = &s.config.name;
                    self.push(entry(name, LogKind::Failed, format!("not restored: {e}")));
                }
            }
        }
        self.changed = false;
    }

    pub fn any_active(&self) -> bool {
        self.pipelines.iter().any(|p| p.is_running())
    }

    /// The pipeline whose input folder is `input` (same folder after canonicalisation).
    pub fn index_of_input(&self, input: &str) -> Option<usize> {
        let want = canonical(input);
        self.pipelines
            .iter()
            .position(|p| p.input_canonical == want)
    }

    /// True while the pipeline of this input folder runs.
    pub fn is_watching(&self, input: &str) -> bool {
        self.index_of_input(input)
            .is_some_and(|i| self.pipelines[i].is_running())
    }

    /// Adds a pipeline (not started). Refused when its folders overlap another pipeline's or
    /// each other (a pipeline owns its output folder: it deletes the outputs of deleted inputs).
    pub fn add(&mut self, mut config: PipelineConfig) -> Result<usize, String> {
        config.input = config.input.trim().to_string();
        config.output = config.output.trim().to_string();
        if config.name.trim().is_empty() {
            config.name = self.unique_name(&config.input);
        } else if self.pipelines.iter().any(|p| p.config.name == config.name) {
            return Err(format!("a pipeline named '{}' exists already", config.name));
        }
        let mut engine: Vec<Pipeline> = self
            .pipelines
            .iter()
            .filter_map(|p| p.config.to_engine().ok())
            .collect();
        engine.push(config.to_engine()?);
        check_overlaps(&engine).map_err(|e| e.to_string())?;
        self.pipelines.push(PipelineRun {
            input_canonical: canonical(&config.input),
            config,
            handle: None,
            status: PipelineStatus::Idle,
            counts: PipelineCounts::default(),
            last_event: None,
        });
        self.changed = true;
        Ok(self.pipelines.len() - 1)
    }

    /// The input folder's name, made unique among the pipelines.
    fn unique_name(&self, input: &str) -> String {
        let base = Path::new(input)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "pipeline".into());
        let taken = |n: &str| self.pipelines.iter().any(|p| p.config.name == n);
        if !taken(&base) {
            return base;
        }
        (2..)
            .map(|i| format!("{base} ({i})"))
            .find(|n| !taken(n))
            .expect("a free name")
    }

    /// Starts pipeline `i` (catching up with its input folder first); errors show as its status.
    pub fn start(&mut self, i: usize) {
        let Some(p) = self.pipelines.get(i) else {
            return;
        };
        if p.is_running() {
            return;
        }
        let name = p.config.name.clone();
        let result = p.config.to_engine().and_then(|engine| {
            let mut options = engine.watch_options(CompressionSettings::default());
            options.low_priority = true;
            start_watch(&engine.input, options).map_err(|e| e.to_string())
        });
        let p = &mut self.pipelines[i];
        let entry = match result {
            Ok(handle) => {
                let msg = format!(
                    "watching {}, output to {}",
                    handle.input_root().display(),
                    handle.output_root().display()
                );
                p.handle = Some(handle);
                p.status = PipelineStatus::Watching;
                entry(&name, LogKind::Info, msg)
            }
            Err(e) => {
                p.status = PipelineStatus::Error(e.clone());
                entry(&name, LogKind::Failed, e)
            }
        };
        p.last_event = Some((entry.time, entry.message.clone()));
        self.changed = true;
        self.push(entry);
    }

    /// Stops pipeline `i` (the clip in flight is abandoned without a partial file).
    pub fn stop(&mut self, i: usize) {
        let Some(p) = self.pipelines.get_mut(i) else {
            return;
        };
        let was = p.is_running() || p.status != PipelineStatus::Idle;
        if let Some(mut h) = p.handle.take() {
            h.stop();
        }
        p.status = PipelineStatus::Idle;
        if was {
            let e = entry(&p.config.name, LogKind::Info, "stopped".into());
            p.last_event = Some((e.time, e.message.clone()));
            self.push(e);
            self.changed = true;
        }
    }

    /// Stops and forgets pipeline `i` (its output folder is left as it is).
    pub fn remove(&mut self, i: usize) {
        if i >= self.pipelines.len() {
            return;
        }
        self.stop(i);
        let p = self.pipelines.remove(i);
        self.push(entry(
            &p.config.name,
            LogKind::Info,
            "removed from the list".into(),
        ));
        self.changed = true;
    }

    pub fn stop_all(&mut self) {
        for p in &mut self.pipelines {
            if let Some(mut h) = p.handle.take() {
                h.stop();
            }
        }
    }

    fn push(&mut self, e: LogEntry) {
        if self.log.len() >= LOG_LIMIT {
            self.log.pop_front();
        }
        self.log.push_back(e);
    }

    /// Drains the watches' events into the log and the counters; returns what they did to
    /// input files (for the Clips table).
    pub fn poll(&mut self) -> Vec<PipelineResult> {
        let mut new = Vec::new();
        let mut results = Vec::new();
        for p in &mut self.pipelines {
            let Some(h) = &p.handle else { continue };
            let root = h.input_root().to_path_buf();
            let settings = p.config.compression();
            while let Ok(e) = h.events().try_recv() {
                let name = e
                    .path
                    .strip_prefix(&root)
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| e.path.display().to_string());
                let (kind, message) = match &e.kind {
                    WatchEventKind::Compressed => {
                        p.counts.compressed += 1;
                        (LogKind::Compressed, describe(&name, &e.reports))
                    }
                    WatchEventKind::Skipped => {
                        p.counts.skipped += 1;
                        (LogKind::Skipped, format!("{name}: up to date"))
                    }
                    WatchEventKind::Failed(m) => {
                        p.counts.failed += 1;
                        let full = e.path.display().to_string();
                        (LogKind::Failed, failure_line(&name, &full, m))
                    }
                    WatchEventKind::BelowPrecision(m) => {
                        p.counts.below_precision += 1;
                        let full = e.path.display().to_string();
                        (LogKind::BelowPrecision, failure_line(&name, &full, m))
                    }
                    WatchEventKind::Removed => {
                        p.counts.removed += 1;
                        (
                            LogKind::Removed,
                            format!(
                                "{name}: input gone, {} deleted",
                                super::util::fmt_counted(e.outputs.len() as u64, "output")
                            ),
                        )
                    }
                    WatchEventKind::WatchError(m) => (LogKind::Failed, format!("watch error: {m}")),
                };
                p.last_event = Some((e.time, message.clone()));
                new.push(LogEntry {
                    time: e.time,
                    pipeline: p.config.name.clone(),
                    kind,
                    message,
                });
                let removed = e.kind == WatchEventKind::Removed;
                if removed || !e.reports.is_empty() {
                    results.push(PipelineResult {
                        settings: settings.clone(),
                        output: PathBuf::from(p.config.output.trim()),
                        path: e.path.clone(),
                        reports: e.reports,
                        removed,
                    });
                }
            }
            // A watch that ended on its own (its folder went away, the watcher died).
            if !h.is_running() {
                p.handle = None;
                let msg = "the watch stopped on its own (is the input folder still there?)";
                p.status = PipelineStatus::Error(msg.into());
                new.push(LogEntry {
                    time: SystemTime::now(),
                    pipeline: p.config.name.clone(),
                    kind: LogKind::Failed,
                    message: msg.into(),
                });
                self.changed = true;
            }
        }
        for e in new {
            self.push(e);
        }
        results
    }

    /// Writes every pipeline as a pipelines file (`clipforge watch --pipelines FILE.toml`).
    pub fn save_file(&self, path: &Path) -> Result<(), String> {
        let configs: Vec<PipelineConfig> =
            self.pipelines.iter().map(|p| p.config.clone()).collect();
        if configs.is_empty() {
            return Err("no pipelines to save".into());
        }
        let text = pipelines_toml(&configs);
        // What the headless watch will read back (relative folders are relative to the file).
        PipelinesFile::parse(path, &text).map_err(|e| e.to_string())?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        crate::fsio::write_atomic(path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Adds the pipelines of a pipelines file (not started); returns how many were added.
    pub fn load_file(&mut self, path: &Path) -> Result<usize, String> {
        let file = PipelinesFile::load(path).map_err(|e| e.to_string())?;
        let mut added = 0;
        for p in &file.pipelines {
            self.add(PipelineConfig::from_engine(p))
                .map_err(|e| format!("pipeline '{}': {e}", p.name))?;
            added += 1;
        }
        Ok(added)
    }
}

fn describe(name: &str, reports: &[ClipReport]) -> String {
    let raw: u64 = reports.iter().map(|r| r.raw_bytes).sum();
    let comp: u64 = reports.iter().map(|r| r.compressed_bytes).sum();
    let ms: f64 = reports.iter().map(|r| r.compress_ms).sum();
    format!(
        "{name}: {}, {} to {} ({:.1}×), {}, {}",
        // A scalar track list is not a clip (its errors are said per track, beside).
        if reports.iter().all(|r| r.is_scalar_list()) {
            super::util::fmt_counted(reports.len() as u64, "scalar track list")
        } else {
            super::util::fmt_counted(reports.len() as u64, "clip")
        },
        super::util::fmt_bytes(raw),
        super::util::fmt_bytes(comp),
        if comp > 0 {
            raw as f64 / comp as f64
        } else {
            0.0
        },
        crate::pipeline::report::worst_error_summary(reports.iter()),
        super::util::fmt_ms(ms)
    )
}

fn entry(pipeline: &str, kind: LogKind, message: String) -> LogEntry {
    LogEntry {
        time: SystemTime::now(),
        pipeline: pipeline.to_string(),
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

fn green() -> egui::Color32 {
    egui::Color32::from_rgb(90, 170, 90)
}

fn gray() -> egui::Color32 {
    egui::Color32::from_gray(170)
}

/// The Watch tab's view: its state is [`PipelinesState`] (the pipelines own their folders and
/// settings; nothing in another view changes them).
pub type PipelinesView = PipelinesState;

impl PipelinesState {
    /// Draws the Watch tab (scrolled). It changes nothing outside the pipelines: the app reads
    /// what they compressed from [`PipelinesState::poll`].
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        egui::ScrollArea::vertical()
            .id_salt("cf_watch_scroll")
            .show(ui, |ui| watch_ui(ui, self));
    }
}

/// The Watch tab: the pipelines (add, start/stop, remove, status, counts, last event), the
/// pipelines file, and the event log.
fn watch_ui(ui: &mut egui::Ui, w: &mut PipelinesState) {
    ui.heading("Pipelines");
    ui.label(
        "Each pipeline watches its input folder and compresses every clip dropped there into its \
         own output folder with its own settings; the Clips tab never changes them. \
         Headless: `clipforge watch --pipelines FILE.toml` (save the list below as that file).",
    );
    ui.add_space(4.0);
    pipelines_table(ui, w);
    ui.add_space(6.0);
    add_form(ui, w);
    file_row(ui, w);
    if let Some((msg, err)) = &w.message {
        let c = if *err {
            ui.visuals().error_fg_color
        } else {
            ui.visuals().text_color()
        };
        ui.colored_label(c, msg);
    }
    ui.add_space(8.0);
    log_ui(ui, w);
}

fn pipelines_table(ui: &mut egui::Ui, w: &mut PipelinesState) {
    if w.pipelines.is_empty() {
        ui.label("No pipelines yet: add one below, or tick Watch in the Clips tab.");
        return;
    }
    let h = egui::TextStyle::Body.resolve(ui.style()).size + 8.0;
    let mut action: Option<(usize, &str)> = None;
    egui_extras::TableBuilder::new(ui)
        .id_salt("cf_pipelines")
        .striped(true)
        .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
        .column(egui_extras::Column::initial(100.0).clip(true))
        .column(egui_extras::Column::initial(180.0).clip(true))
        .column(egui_extras::Column::initial(180.0).clip(true))
        .column(egui_extras::Column::initial(140.0).clip(true))
        .column(egui_extras::Column::initial(76.0).clip(true))
        .column(egui_extras::Column::initial(236.0).clip(true))
        .column(egui_extras::Column::remainder().at_least(100.0).clip(true))
        .column(egui_extras::Column::exact(120.0))
        .max_scroll_height(220.0)
        .header(h, |mut r| {
            for t in [
                "Name",
                "Input",
                "Output",
                "Settings",
                "Status",
                "Counts",
                "Last event",
                "",
            ] {
                r.col(|ui| {
                    ui.strong(t);
                });
            }
        })
        .body(|mut body| {
            for (i, p) in w.pipelines.iter().enumerate() {
                body.row(h, |mut r| {
                    r.col(|ui| {
                        ui.label(&p.config.name);
                    });
                    r.col(|ui| {
                        ui.label(&p.config.input).on_hover_text(&p.config.input);
                    });
                    r.col(|ui| {
                        if ui
                            .small_button("Open")
                            .on_hover_text("Open this output folder in the file manager")
                            .clicked()
                        {
                            action = Some((i, "Open"));
                        }
                        ui.label(&p.config.output).on_hover_text(&p.config.output);
                    });
                    r.col(|ui| {
                        let t = p.config.settings_text();
                        ui.label(&t).on_hover_text(t);
                    });
                    r.col(|ui| {
                        let color = match p.status {
                            PipelineStatus::Watching => green(),
                            PipelineStatus::Idle => gray(),
                            PipelineStatus::Error(_) => ui.visuals().error_fg_color,
                        };
                        let resp = ui.colored_label(color, p.status.text());
                        if let PipelineStatus::Error(m) = &p.status {
                            resp.on_hover_text(m);
                        }
                    });
                    r.col(|ui| {
                        let c = p.counts;
                        // Input files, said: "2 compressed" of a folder whose two files held 4
                        // clips read as 2 clips (the log beside it says "3 clips", "1 clip").
                        ui.label(format!(
                            "{} compressed · {} skipped · {} failed{}",
                            super::util::fmt_counted(c.compressed, "file"),
                            c.skipped,
                            c.failed,
                            if c.below_precision > 0 {
                                format!(" · {} below float32 precision", c.below_precision)
                            } else {
                                String::new()
                            }
                        ))
                        .on_hover_text(format!(
                            "Input files this session; {} removed (input gone, outputs deleted)",
                            c.removed
                        ));
                    });
                    r.col(|ui| match &p.last_event {
                        Some((t, m)) => {
                            ui.label(format!("{} {m}", clock(*t))).on_hover_text(m);
                        }
                        None => {
                            ui.label("—");
                        }
                    });
                    r.col(|ui| {
                        let (label, hint) = if p.is_running() {
                            ("Stop", format!("Stop watching {}", p.config.input))
                        } else {
                            ("Start", format!("Start watching {}", p.config.input))
                        };
                        if ui.button(label).on_hover_text(hint).clicked() {
                            action = Some((i, label));
                        }
                        if ui
                            .button("Remove")
                            .on_hover_text("Stop and remove this pipeline (its outputs stay)")
                            .clicked()
                        {
                            action = Some((i, "Remove"));
                        }
                    });
                });
            }
        });
    match action {
        Some((i, "Start")) => w.start(i),
        Some((i, "Stop")) => w.stop(i),
        Some((i, "Remove")) => w.remove(i),
        Some((i, "Open")) => {
            w.message = Some(super::open_folder::open_folder_message(
                &w.pipelines[i].config.output,
            ))
        }
        _ => {}
    }
}

fn add_form(ui: &mut egui::Ui, w: &mut PipelinesState) {
    ui.label(egui::RichText::new("Add a pipeline").strong());
    let mut add = false;
    ui.horizontal_wrapped(|ui| {
        let l = ui.label("Pipeline name:");
        ui.add(
            egui::TextEdit::singleline(&mut w.form.name)
                .desired_width(120.0)
                .hint_text("input's name"),
        )
        .labelled_by(l.id)
        .on_hover_text("Empty: the input folder's name");
        let l = ui.label("Pipeline input:");
        ui.add(egui::TextEdit::singleline(&mut w.form.input).desired_width(220.0))
            .labelled_by(l.id);
        if ui
            .button("Browse…")
            .on_hover_text("Folder dialog for the pipeline's input")
            .clicked()
        {
            w.browse_request = Some(FormFolder::Input);
        }
        let l = ui.label("Pipeline output:");
        ui.add(egui::TextEdit::singleline(&mut w.form.output).desired_width(220.0))
            .labelled_by(l.id);
        if ui
            .button("Browse… ")
            .on_hover_text("Folder dialog for the pipeline's output")
            .clicked()
        {
            w.browse_request = Some(FormFolder::Output);
        }
        let l = ui.label("Preset:");
        egui::ComboBox::from_id_salt("cf_pipeline_preset")
            .selected_text(w.form.preset.label())
            .show_ui(ui, |ui| {
                for p in Preset::ALL {
                    ui.selectable_value(&mut w.form.preset, p, p.label());
                }
            })
            .response
            .labelled_by(l.id);
        if w.form.preset == Preset::Custom {
            ui.add(
                egui::DragValue::new(&mut w.form.custom_cm)
                    .range(0.0001..=10.0)
                    .speed(0.0005)
                    .max_decimals(4)
                    .suffix(" cm"),
            )
            .on_hover_text("Error threshold of this pipeline, in cm");
        }
        ui.checkbox(&mut w.form.shell_on, "Shell distance:")
            .on_hover_text(
                "Unticked: the preset's, else each bone's own (or the folders' clipforge.toml)",
            );
        ui.add_enabled(
            w.form.shell_on,
            egui::DragValue::new(&mut w.form.shell_cm)
                .range(0.01..=1000.0)
                .speed(0.1)
                .suffix(" cm"),
        );
        let l = ui.label("Exclude:");
        ui.add(
            egui::TextEdit::singleline(&mut w.form.exclude)
                .desired_width(140.0)
                .hint_text("_old/, \\.tmp$"),
        )
        .labelled_by(l.id)
        .on_hover_text("Regular expressions over the path relative to the input, comma-separated");
        let l = ui.label("Threads:");
        ui.add(egui::DragValue::new(&mut w.form.jobs).range(0..=256))
            .labelled_by(l.id)
            .on_hover_text("0: every core (at a lower priority than the app)");
        add = ui
            .button("Add pipeline")
            .on_hover_text("Adds it to the list and starts it")
            .clicked();
    });
    if add {
        let config = w.form.config();
        if !Path::new(config.input.as_str()).is_dir() {
            w.message = Some((format!("Input folder not found: {}", config.input), true));
            return;
        }
        match w.add(config) {
            Ok(i) => {
                w.start(i);
                w.message = None;
                w.form.input.clear();
                w.form.output.clear();
                w.form.name.clear();
            }
            Err(e) => w.message = Some((format!("Not added: {e}"), true)),
        }
    }
}

fn file_row(ui: &mut egui::Ui, w: &mut PipelinesState) {
    ui.horizontal(|ui| {
        let l = ui.label("Pipelines file:");
        ui.add(egui::TextEdit::singleline(&mut w.file_path).desired_width(320.0))
            .labelled_by(l.id)
            .on_hover_text(
                "A TOML file of [[pipeline]] tables, as `clipforge watch --pipelines` reads",
            );
        let path = PathBuf::from(w.file_path.trim());
        let has_path = !w.file_path.trim().is_empty();
        if ui
            .add_enabled(
                has_path && !w.pipelines.is_empty(),
                egui::Button::new("Save list"),
            )
            .clicked()
        {
            w.message = Some(match w.save_file(&path) {
                Ok(()) => (
                    format!(
                        "Saved {} to {}",
                        super::util::fmt_counted(w.pipelines.len() as u64, "pipeline"),
                        path.display()
                    ),
                    false,
                ),
                Err(e) => (format!("Not saved: {e}"), true),
            });
        }
        if ui
            .add_enabled(has_path, egui::Button::new("Load"))
            .on_hover_text("Adds the file's pipelines to the list (not started)")
            .clicked()
        {
            w.message = Some(match w.load_file(&path) {
                Ok(n) => (
                    format!(
                        "Added {} from {}",
                        super::util::fmt_counted(n as u64, "pipeline"),
                        path.display()
                    ),
                    false,
                ),
                Err(e) => (format!("Not loaded: {e}"), true),
            });
        }
    });
}

fn log_ui(ui: &mut egui::Ui, w: &mut PipelinesState) {
    ui.horizontal(|ui| {
        ui.heading("Event log");
        ui.checkbox(&mut w.filter_problems_only, "problems only")
            .on_hover_text("Failures and clips refused as below float32 precision");
        if ui.button("Clear").clicked() {
            w.log.clear();
        }
    });
    let rows: Vec<&LogEntry> = w
        .log
        .iter()
        .rev()
        .filter(|e| !w.filter_problems_only || e.kind.is_problem())
        .collect();
    if rows.is_empty() {
        ui.label("No events yet.");
        return;
    }
    let h = egui::TextStyle::Body.resolve(ui.style()).size + 4.0;
    let warn = ui.visuals().warn_fg_color;
    egui_extras::TableBuilder::new(ui)
        .id_salt("cf_watch_log")
        .striped(true)
        .column(egui_extras::Column::exact(70.0))
        .column(egui_extras::Column::exact(90.0))
        .column(egui_extras::Column::initial(130.0).clip(true))
        .column(egui_extras::Column::remainder().clip(true))
        .header(h, |mut r| {
            for t in ["Time (UTC)", "Event", "Pipeline", "Details"] {
                r.col(|ui| {
                    ui.strong(t);
                });
            }
        })
        .body(|body| {
            body.rows(h, rows.len(), |mut r| {
                let e = rows[r.index()];
                let (txt, col) = match e.kind {
                    LogKind::Info => ("info", gray()),
                    LogKind::Compressed => ("compressed", green()),
                    LogKind::Skipped => ("skipped", gray()),
                    LogKind::Removed => ("removed", gray()),
                    LogKind::Failed => ("failed", egui::Color32::from_rgb(240, 100, 100)),
                    LogKind::BelowPrecision => ("refused", warn),
                };
                r.col(|ui| {
                    ui.label(clock(e.time));
                });
                r.col(|ui| {
                    ui.colored_label(col, txt);
                });
                r.col(|ui| {
                    ui.label(&e.pipeline);
                });
                r.col(|ui| {
                    ui.label(&e.message);
                });
            });
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_reads_path_line_as_the_cli_says_it() {
        let full = "/in/moves/broken.bvh";
        assert_eq!(
            failure_line(
                "moves/broken.bvh",
                full,
                "/in/moves/broken.bvh:4: bad channel count"
            ),
            "moves/broken.bvh:4: bad channel count"
        );
        assert_eq!(
            failure_line("moves/broken.bvh", full, "/in/moves/broken.bvh: empty file"),
            "moves/broken.bvh: empty file"
        );
        assert_eq!(
            failure_line("moves/broken.bvh", full, "cannot read the file"),
            "moves/broken.bvh: cannot read the file"
        );
    }

    #[test]
    fn a_saved_list_is_a_pipelines_file_the_cli_reads() {
        let configs = vec![
            PipelineConfig {
                name: "heroes \"A\"".into(),
                input: "/in/a".into(),
                output: "/out/a".into(),
                error_threshold: Some(0.001),
                shell_distance: Some(3.0),
                exclude: vec!["_old/".into(), "\\.tmp\\.".into()],
                jobs: 2,
                no_skip: true,
            },
            PipelineConfig::with_preset("", "rel/b", "/out/b", Preset::Crowd, 0.0),
        ];
        let text = pipelines_toml(&configs);
        let f = PipelinesFile::parse(Path::new("/etc/p.toml"), &text).unwrap();
        assert_eq!(f.pipelines.len(), 2);
        let back = PipelineConfig::from_engine(&f.pipelines[0]);
        assert_eq!(back, configs[0]);
        assert_eq!(f.pipelines[1].input, PathBuf::from("/etc/rel/b"));
        assert_eq!(f.pipelines[1].error_threshold, Some(0.1));
        assert!(f.pipelines[0].exclude[1].is_match("x.tmp.bvh"));
    }

    #[test]
    fn overlapping_pipelines_are_refused_on_add() {
        let mut s = PipelinesState::default();
        let c = |i: &str, o: &str| PipelineConfig::with_preset("", i, o, Preset::Default, 0.0);
        s.add(c("/tmp/cf-none/a", "/tmp/cf-none/oa")).unwrap();
        assert!(s.add(c("/tmp/cf-none/a/sub", "/tmp/cf-none/ob")).is_err());
        assert!(s.add(c("/tmp/cf-none/b", "/tmp/cf-none/oa")).is_err());
        let i = s.add(c("/tmp/cf-none/b", "/tmp/cf-none/ob")).unwrap();
        assert_eq!(s.pipelines[i].config.name, "b");
        assert_eq!(s.pipelines[i].status, PipelineStatus::Idle);
    }
}
