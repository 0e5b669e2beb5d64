//! The library model: scanned files, what the inspection found in them, the latest report of
//! each clip, and the rows the table shows (sorted and filtered, rebuilt only when something changed).
//! A leaf: plain data, it imports nothing from the other `gui` modules.

use crate::anim::CompressionSettings;
use crate::anim::formats::file_stem;
use crate::pipeline::ClipFile;
use crate::pipeline::folder_settings::{ClipSettings, Overrides, SettingsResolver, root_of};
use crate::pipeline::report::{ClipReport, percentile};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One clip: its file and its name inside the file (the pipeline's clip key: the detail job
/// loads clips by it).
pub use crate::pipeline::clip_detail::ClipKey as RowKey;

/// What the inspection found in a file, before compression.
#[derive(Clone, Debug)]
pub struct ClipMeta {
    pub name: String,
    pub bones: usize,
    pub samples: usize,
    pub duration_s: f32,
    pub raw_bytes: u64,
    /// An ACL scalar track list (`bones` counts its output tracks): held to each track's own
    /// precision, never to a threshold in cm.
    pub scalar_list: bool,
}

#[derive(Clone, Debug)]
pub enum Inspect {
    Pending,
    Clips(Vec<ClipMeta>),
    Failed(String),
}

/// A report together with the settings it was made with.
#[derive(Clone, Debug)]
pub struct StoredResult {
    pub report: Arc<ClipReport>,
    pub settings: CompressionSettings,
    /// The output folder it was written into: a row shows only the results of the output
    /// folder shown now (another folder's "up to date" would be a lie there).
    pub output: PathBuf,
    /// The batch that made it.
    pub generation: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RowStatus {
    NotCompressed,
    Queued,
    Ok,
    /// Compressed fine, but the max error is above the threshold: look at it.
    OverThreshold,
    Skipped,
    Failed(String),
    /// Refused: its threshold is below float32 precision for this clip (the floor it reaches at
    /// best, in cm). A setting to raise, not a broken file.
    BelowPrecision(crate::anim::compress::PrecisionFloor),
    /// Made with other settings than the current ones.
    Stale,
    Unreadable(String),
}

impl RowStatus {
    pub fn text(&self) -> String {
        match self {
            RowStatus::NotCompressed => "—".into(),
            RowStatus::Queued => "queued".into(),
            RowStatus::Ok => "ok".into(),
            RowStatus::OverThreshold => "over threshold".into(),
            // Not "(skipped)": after a restart or reopening a folder no batch has skipped
            // anything yet; the batch line counts what a batch skipped.
            RowStatus::Skipped => "up to date".into(),
            RowStatus::Failed(m) => format!("failed: {m}"),
            // Short: the Status column shows ~20 characters at 1280 px (a floor figure cut in
            // half misled); the hover gives the floor and what to raise the threshold to.
            RowStatus::BelowPrecision(_) => "below float32 floor".into(),
            RowStatus::Stale => "stale (settings changed)".into(),
            // "does not read", as the detail says: "unreadable" was untrue of a file that reads
            // but is not a valid clip (most of these rows).
            RowStatus::Unreadable(m) => format!("does not read: {m}"),
        }
    }
    /// What the Status cell's hover says beyond its text, when it has more to say.
    pub fn hover(&self) -> Option<String> {
        match self {
            // The compressor's own sentence (the CLI's REFUSED line): the floor written once.
            RowStatus::BelowPrecision(p) => Some(format!("Refused, not compressed: {p}.")),
            RowStatus::Skipped => Some(
                "Its output was made from this file, unchanged since, with the settings that \
                 apply now: a batch skips it (uncheck \"Skip unchanged clips\" to compress it \
                 again)."
                    .into(),
            ),
            _ => None,
        }
    }

    pub fn rank(&self) -> u8 {
        match self {
            RowStatus::Failed(_) | RowStatus::Unreadable(_) => 0,
            RowStatus::OverThreshold | RowStatus::BelowPrecision(_) => 1,
            RowStatus::Stale => 2,
            RowStatus::Queued => 3,
            RowStatus::NotCompressed => 4,
            RowStatus::Skipped => 5,
            RowStatus::Ok => 6,
        }
    }
}

/// One table row = one clip.
#[derive(Clone, Debug)]
pub struct Row {
    pub key: RowKey,
    /// What the table shows: the clip name, prefixed with the file name when they differ.
    pub label: String,
    /// The inspection of its file is still running (bones, samples… not known yet).
    pub pending: bool,
    /// Index into [`Library::files`].
    pub file: usize,
    pub format: &'static str,
    pub bones: Option<usize>,
    pub samples: Option<usize>,
    pub duration_s: Option<f32>,
    pub raw_bytes: Option<u64>,
    pub result: Option<StoredResult>,
    pub status: RowStatus,
    /// An ACL scalar track list (from its inspection or its report): the threshold and shell
    /// settings do not apply to it.
    pub scalar_list: bool,
    /// The settings a batch would compress it with now and where each comes from (the Clips
    /// tab's, its folder's `clipforge.toml`, a `[[clip]]` table, per-bone tables), or why its
    /// settings file cannot be used.
    pub effective: Option<Result<ClipSettings, String>>,
}

/// What holds a scalar track list, said where a clip's settings would be.
pub const SCALAR_LIST_SETTINGS: &str = "A scalar track list: each track is held to its own \
    precision (the file's `precision`), not to the threshold or shell distance in cm";

/// Where the app's defaults come from and what sets explicit options in it, for
/// [`ClipSettings::describe`].
pub const APP_SOURCES: (&str, &str) = ("Clips tab settings", "pipeline");

impl Row {
    /// One line per setting in force for what the row shows, and where each came from; with
    /// what applies now when that differs (the row is stale).
    pub fn settings_text(&self) -> Option<String> {
        if self.scalar_list {
            return Some(SCALAR_LIST_SETTINGS.to_string());
        }
        let (d, e) = APP_SOURCES;
        // A refusal below float32 precision was tried with its settings too: said as such, not
        // as a clip still to compress.
        let refused = self.report().is_some_and(|r| r.below_precision.is_some());
        // A failure is no clip still to compress either: it was tried (with its settings when
        // it got that far) and failed; the detail says why and what to do.
        let failed = self.report().is_some_and(|r| r.error.is_some()) && !refused;
        let made = self.report().and_then(|r| r.settings.as_ref());
        // Nor is a file that does not read (no batch tried it yet): it would fail the same way.
        let unreadable = self.report().is_none() && matches!(self.status, RowStatus::Unreadable(_));
        if (failed || unreadable) && made.is_none() {
            return None;
        }
        let now = self.effective.as_ref();
        let mut out = match (made, now) {
            (Some(m), _) if refused => format!("Refused with {}", m.describe(d, e)),
            (Some(m), _) if failed => format!("Failed with {}", m.describe(d, e)),
            (Some(m), _) => format!("Compressed with {}", m.describe(d, e)),
            (None, Some(Ok(n))) => format!("Will compress with {}", n.describe(d, e)),
            (None, Some(Err(err))) => return Some(format!("Settings file unusable: {err}")),
            (None, None) => return None,
        };
        if let Some(m) = made {
            match now {
                Some(Ok(n)) if !m.same_effect(n) => {
                    out.push_str(&format!("\nNow applies: {}", n.describe(d, e)));
                }
                Some(Err(err)) => out.push_str(&format!("\nSettings file unusable now: {err}")),
                _ => {}
            }
        }
        Some(out)
    }

    /// The settings its result was made with (when it has one), else what applies now: what
    /// the Threshold column and the detail show.
    pub fn shown_settings(&self) -> Option<&ClipSettings> {
        self.good_report()
            .and_then(|r| r.settings.as_ref())
            .or(self.effective.as_ref().and_then(|e| e.as_ref().ok()))
    }

    pub fn report(&self) -> Option<&ClipReport> {
        self.result.as_ref().map(|r| r.report.as_ref())
    }
    /// A report that compressed (no error).
    pub fn good_report(&self) -> Option<&ClipReport> {
        self.report().filter(|r| r.error.is_none())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum SortColumn {
    #[default]
    Name,
    Format,
    Bones,
    Duration,
    Samples,
    RawSize,
    Compressed,
    Ratio,
    MaxError,
    Threshold,
    Time,
    Status,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortState {
    pub column: SortColumn,
    pub ascending: bool,
}

impl Default for SortState {
    fn default() -> Self {
        Self {
            column: SortColumn::Name,
            ascending: true,
        }
    }
}

/// Totals over the rows that have a result (the footer).
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub clips: usize,
    pub compressed: usize,
    pub failed: usize,
    /// Files the scan's inspection found do not read (red rows before a batch, and after a
    /// restart, where the failed results are not kept): the footer said nothing of them.
    pub unreadable: usize,
    /// Refused as below float32 precision (not in `failed`).
    pub below_precision: usize,
    pub skipped: usize,
    pub stale: usize,
    pub over_threshold: usize,
    pub raw_bytes: u64,
    pub compressed_bytes: u64,
    pub worst_error_cm: f64,
    pub worst_clip: Option<String>,
    /// The worst clip is over the threshold it was compressed with (its own, which a folder's
    /// `clipforge.toml` may set, not necessarily the tab's).
    pub worst_over: bool,
    /// Clips whose compression time the percentiles are over: compressed (not skipped) or
    /// refused as below float32 precision by a search that ran (as the report's totals count).
    pub timed: usize,
    pub p50_ms: f64,
    pub p85_ms: f64,
    pub p99_ms: f64,
}

impl Summary {
    pub fn ratio(&self) -> f64 {
        if self.compressed_bytes == 0 {
            0.0
        } else {
            self.raw_bytes as f64 / self.compressed_bytes as f64
        }
    }
}

#[derive(Default)]
pub struct Library {
    /// The folder the files were scanned from.
    pub root: Option<PathBuf>,
    pub files: Vec<ClipFile>,
    pub inspect: Vec<Inspect>,
    pub scan_time: Option<Duration>,
    /// Special files (FIFOs, sockets…) named like clips: listed as unreadable, never opened.
    pub special: std::collections::HashSet<PathBuf>,
    /// Latest reports per input file path.
    pub results: HashMap<PathBuf, Vec<StoredResult>>,
    pub rows: Vec<Row>,
    /// Indices into `rows`, filtered and sorted: what the table shows.
    pub view: Vec<usize>,
    pub summary: Summary,
    /// `files` index of each path (which rows a new result or inspection touches).
    file_index: HashMap<PathBuf, usize>,
    /// The rows of each file: `rows[file_rows[f].clone()]`.
    file_rows: Vec<std::ops::Range<usize>>,
    /// Everything must be rebuilt (new scan, settings, batch start/end).
    dirty: bool,
    /// Files whose rows changed (a result or an inspection came in): rebuilt in place, each frame.
    dirty_files: Vec<usize>,
    /// Summary and sorted/filtered view must follow the rows (throttled: they are O(n log n)).
    view_dirty: bool,
    last_rebuild: Option<Instant>,
    last_view: Option<Instant>,
    last_filter: String,
    last_sort: Option<SortState>,
    last_settings: Option<CompressionSettings>,
    /// The output folder the rows were built for (rows show only its results).
    output: PathBuf,
    /// Reads the folders' `clipforge.toml` files once (for `last_settings`); dropped when
    /// they or the tab's settings change.
    resolver: Option<SettingsResolver>,
    /// What applies to each file now (see [`Row::effective`]).
    effective: HashMap<PathBuf, Result<ClipSettings, String>>,
}

impl Library {
    /// New scan results: forget the old files (results are kept: they are keyed by path).
    pub fn set_files(&mut self, root: PathBuf, files: Vec<ClipFile>, scan_time: Duration) {
        self.inspect = vec![Inspect::Pending; files.len()];
        self.file_index = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.clone(), i))
            .collect();
        self.files = files;
        self.root = Some(root);
        self.scan_time = Some(scan_time);
        self.mark_dirty_now();
    }

    /// No folder: the one typed does not exist. The previous folder's files go (their rows, its
    /// last batch's line and the footer's totals read as the missing folder's); results stay,
    /// keyed by path, for when a folder is scanned again.
    pub fn forget_folder(&mut self) {
        self.inspect.clear();
        self.file_index.clear();
        self.files.clear();
        self.special.clear();
        self.root = None;
        self.scan_time = None;
        self.mark_dirty_now();
    }

    /// Adds `path` (under `root`, the scanned folder) to the files when the scan did not list it:
    /// a file a pipeline compressed after the scan. Its rows come from its reports (bones,
    /// samples, duration, sizes) until the next scan inspects it.
    pub fn ensure_file(&mut self, root: &Path, path: &Path) {
        if self.file_index.contains_key(path) {
            return;
        }
        let Some(f) = ClipFile::new(root, path) else {
            return;
        };
        self.file_index.insert(f.path.clone(), self.files.len());
        self.files.push(f);
        // Not inspected: its rows come from its reports (not "pending" forever when it failed).
        self.inspect.push(Inspect::Clips(Vec::new()));
        self.mark_dirty_now();
    }

    /// A `clipforge.toml` was written (per-bone table, kept A/B side): what applies to each
    /// clip is read again, and the rows whose results were made otherwise turn stale at once.
    pub fn settings_files_changed(&mut self) {
        self.resolver = None;
        self.effective.clear();
        self.mark_dirty_now();
    }

    /// What applies to file `fi` now (resolved once per settings change).
    fn effective_of(&mut self, fi: usize) -> Option<Result<ClipSettings, String>> {
        let f = self.files.get(fi)?;
        if let Some(e) = self.effective.get(&f.path) {
            return Some(e.clone());
        }
        let defaults = self.last_settings.clone()?;
        let resolver = self
            .resolver
            .get_or_insert_with(|| SettingsResolver::new(defaults, Overrides::default()));
        let root = root_of(&f.path, &f.relative);
        let e = resolver
            .resolve(&root, &f.path, f.format)
            .map(|r| r.clip)
            .map_err(|e| e.to_string());
        self.effective.insert(f.path.clone(), e.clone());
        Some(e)
    }

    /// Forgets every result written into `output` (its skip cache is read again: the files
    /// may have changed or gone since).
    pub fn forget_output(&mut self, output: &Path) {
        for list in self.results.values_mut() {
            list.retain(|r| r.output != output);
        }
        self.mark_dirty_now();
    }

    /// True when `path` has a result written into `output`.
    pub fn has_result_for(&self, path: &Path, output: &Path) -> bool {
        self.results
            .get(path)
            .is_some_and(|l| l.iter().any(|r| r.output == output))
    }

    /// The output folder the rows show results of.
    pub fn output(&self) -> &Path {
        &self.output
    }

    /// Forgets the results of a file (its row stays, not compressed).
    pub fn forget_results(&mut self, path: &Path) {
        self.results.remove(path);
        self.mark_dirty_now();
    }

    /// Forgets a file whose input went away (a pipeline deleted its outputs), with its results.
    pub fn remove_file(&mut self, path: &Path) {
        self.results.remove(path);
        let Some(i) = self.file_index.remove(path) else {
            return;
        };
        self.files.remove(i);
        self.inspect.remove(i);
        for v in self.file_index.values_mut() {
            if *v > i {
                *v -= 1;
            }
        }
        self.mark_dirty_now();
    }

    /// The table's rows wait for a full rebuild (the files changed since the last one).
    pub fn rows_pending(&self) -> bool {
        self.dirty
    }

    /// Forces a rebuild on the next frame.
    pub fn mark_dirty_now(&mut self) {
        self.dirty = true;
        self.last_rebuild = None;
    }

    /// Sets what the inspection found in file `i`.
    pub fn set_inspect(&mut self, i: usize, found: Inspect) {
        if let Some(slot) = self.inspect.get_mut(i) {
            *slot = found;
            self.dirty_files.push(i);
        }
    }

    /// Stores finished rows. Cancelled rows are ignored (the previous result stays); the first
    /// row of a file from a newer `generation` (batch) replaces every older row of that file.
    pub fn add_reports(
        &mut self,
        reports: &[ClipReport],
        settings: &CompressionSettings,
        output: &Path,
        generation: u64,
    ) {
        for r in reports {
            // Its rows change either way (a cancelled file is no longer queued).
            match self.file_index.get(Path::new(&r.input)) {
                Some(&i) => self.dirty_files.push(i),
                None => self.dirty = true,
            }
        }
        for r in reports.iter().filter(|r| !r.cancelled) {
            let list = self.results.entry(PathBuf::from(&r.input)).or_default();
            // Another output folder's results stay (shown again when it is), the same folder's
            // older batches go.
            list.retain(|old| {
                old.output != output || (old.generation == generation && old.report.clip != r.clip)
            });
            list.push(StoredResult {
                report: Arc::new(r.clone()),
                settings: settings.clone(),
                output: output.to_path_buf(),
                generation,
            });
        }
    }

    /// How often rows are rebuilt while results stream in: 200 ms, longer for huge tables.
    fn rebuild_interval(&self) -> Duration {
        Duration::from_millis(200 + (self.files.len() as u64 / 25).min(800))
    }

    pub fn row(&self, key: &RowKey) -> Option<&Row> {
        // Only the rows of its file (the detail view asks every frame).
        let f = *self.file_index.get(&key.path)?;
        self.rows
            .get(self.file_rows.get(f)?.clone())?
            .iter()
            .find(|r| &r.key == key)
    }

    /// Rows with a usable report (for charts and batch histograms).
    pub fn compressed_rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.good_report().is_some())
    }

    /// Brings rows, summary and view up to date. Files whose result or inspection just came in
    /// are rebuilt in place at once (a few rows per frame, so a batch over thousands of clips
    /// never rebuilds the whole table per result); full rebuilds, and the O(n log n) re-sort and
    /// summary that follow row changes, run at most every [`Self::rebuild_interval`] unless forced.
    /// `queued`: the files a running batch has not finished; `output`: the output folder shown
    /// (only its results count).
    pub fn rebuild_if_needed(
        &mut self,
        settings: &CompressionSettings,
        output: &Path,
        sort: SortState,
        filter: &str,
        batch: Option<&HashSet<PathBuf>>,
    ) {
        let settings = settings.clone();
        if self.last_settings.as_ref() != Some(&settings) {
            self.last_settings = Some(settings.clone());
            self.settings_files_changed();
        }
        if self.output != output {
            self.output = output.to_path_buf();
            self.mark_dirty_now();
        }
        let interval = self.rebuild_interval();
        if self.dirty && self.last_rebuild.is_none_or(|t| t.elapsed() > interval) {
            self.rebuild_rows(&settings, batch);
            self.dirty = false;
            self.dirty_files.clear();
            self.last_rebuild = Some(Instant::now());
            self.last_view = None;
            self.view_dirty = true;
        }
        if !self.dirty && !self.dirty_files.is_empty() {
            self.update_dirty_files(&settings, batch);
        }
        let view_due = self.view_dirty && self.last_view.is_none_or(|t| t.elapsed() > interval);
        if view_due || self.last_filter != filter || self.last_sort != Some(sort) {
            self.last_filter = filter.to_string();
            self.last_sort = Some(sort);
            self.summary = summarize(&self.rows);
            self.rebuild_view(filter, sort);
            self.view_dirty = false;
            self.last_view = Some(Instant::now());
        }
    }

    /// Rebuilds the rows of the dirty files in place; a file whose row count changed (a glTF
    /// file's animations became known) needs a full rebuild instead.
    fn update_dirty_files(
        &mut self,
        settings: &CompressionSettings,
        batch: Option<&HashSet<PathBuf>>,
    ) {
        let mut files = std::mem::take(&mut self.dirty_files);
        files.sort_unstable();
        files.dedup();
        for f in files {
            // A full rebuild (throttled) takes care of this file and the rest.
            let Some(range) = self.file_rows.get(f).cloned() else {
                self.dirty = true;
                return;
            };
            let eff = self.effective_of(f);
            let new_rows = self.rows_of_file(f, settings, batch, eff);
            if new_rows.len() != range.len() {
                self.dirty = true;
                return;
            }
            for (slot, row) in self.rows[range].iter_mut().zip(new_rows) {
                *slot = row;
            }
        }
        self.view_dirty = true;
    }

    fn rebuild_rows(&mut self, settings: &CompressionSettings, batch: Option<&HashSet<PathBuf>>) {
        let mut rows = Vec::with_capacity(self.files.len());
        let mut file_rows = Vec::with_capacity(self.files.len());
        for fi in 0..self.files.len() {
            let start = rows.len();
            let eff = self.effective_of(fi);
            rows.extend(self.rows_of_file(fi, settings, batch, eff));
            file_rows.push(start..rows.len());
        }
        self.rows = rows;
        self.file_rows = file_rows;
    }

    /// The rows of file `fi`: one per clip it holds (known from its inspection or its results).
    fn rows_of_file(
        &self,
        fi: usize,
        settings: &CompressionSettings,
        batch: Option<&HashSet<PathBuf>>,
        effective: Option<Result<ClipSettings, String>>,
    ) -> Vec<Row> {
        let mut rows = Vec::new();
        let f = &self.files[fi];
        // Only what was written into the output folder shown.
        let results: Vec<&StoredResult> = self
            .results
            .get(&f.path)
            .map(|v| v.iter().filter(|r| r.output == self.output).collect())
            .unwrap_or_default();
        let queued = batch.is_some_and(|q| q.contains(&f.path));
        let fmt = f.format.label();
        let stem = file_stem(&f.path);
        let pending = matches!(self.inspect.get(fi), Some(Inspect::Pending) | None);
        let mut push = |name: String,
                        meta: Option<&ClipMeta>,
                        res: Option<&StoredResult>,
                        unreadable: Option<&str>| {
            let rep = res.map(|r| r.report.as_ref());
            let now = effective.as_ref().and_then(|e| e.as_ref().ok());
            let status = status_of(res, settings, now, queued, unreadable, &f.path);
            let label = if name == stem || name.is_empty() {
                stem.clone()
            } else {
                format!("{stem} · {name}")
            };
            rows.push(Row {
                label,
                pending: pending && meta.is_none() && rep.is_none_or(|r| r.samples == 0),
                key: RowKey {
                    path: f.path.clone(),
                    clip: name,
                },
                file: fi,
                format: fmt,
                bones: meta
                    .map(|m| m.bones)
                    .or(rep.filter(|r| r.bones > 0).map(|r| r.bones)),
                samples: meta
                    .map(|m| m.samples)
                    .or(rep.filter(|r| r.samples > 0).map(|r| r.samples)),
                duration_s: meta
                    .map(|m| m.duration_s)
                    .or(rep.filter(|r| r.samples > 0).map(|r| r.duration_s)),
                raw_bytes: meta
                    .map(|m| m.raw_bytes)
                    .or(rep.filter(|r| r.raw_bytes > 0).map(|r| r.raw_bytes)),
                result: res.cloned(),
                status,
                scalar_list: meta.is_some_and(|m| m.scalar_list)
                    || rep.is_some_and(|r| r.is_scalar_list()),
                effective: effective.clone(),
            });
        };
        match self.inspect.get(fi).unwrap_or(&Inspect::Pending) {
            Inspect::Clips(clips) if !clips.is_empty() => {
                for (ci, m) in clips.iter().enumerate() {
                    let res = results
                        .iter()
                        .find(|r| r.report.clip == m.name)
                        .copied()
                        .or_else(|| {
                            (results.len() == 1
                                && (clips.len() == 1 || results[0].report.error.is_some()))
                            .then(|| results[0])
                        })
                        .or_else(|| (results.len() == clips.len()).then(|| results[ci]));
                    push(m.name.clone(), Some(m), res, None);
                }
            }
            other => {
                let unreadable = match other {
                    Inspect::Failed(m) => Some(m.as_str()),
                    _ => None,
                };
                if results.is_empty() {
                    push(stem.clone(), None, None, unreadable);
                } else {
                    for r in results.iter().copied() {
                        let name = if r.report.clip.is_empty() {
                            stem.clone()
                        } else {
                            r.report.clip.clone()
                        };
                        push(name, None, Some(r), None);
                    }
                }
            }
        }
        rows
    }

    fn rebuild_view(&mut self, filter: &str, sort: SortState) {
        let f = super::filter::TextFilter::new(filter);
        let rows = &self.rows;
        let mut view: Vec<usize> = (0..rows.len())
            .filter(|&i| {
                f.is_all() || {
                    let r = &rows[i];
                    f.matches(&r.label)
                        || f.matches(&r.key.path.to_string_lossy())
                        || f.matches(r.format)
                        || f.matches(&r.status.text())
                }
            })
            .collect();
        let num = |r: &Row| -> f64 {
            let rep = r.good_report();
            match sort.column {
                SortColumn::Bones => r.bones.map_or(-1.0, |v| v as f64),
                SortColumn::Duration => r.duration_s.map_or(-1.0, |v| v as f64),
                SortColumn::Samples => r.samples.map_or(-1.0, |v| v as f64),
                SortColumn::RawSize => r.raw_bytes.map_or(-1.0, |v| v as f64),
                SortColumn::Compressed => rep.map_or(-1.0, |r| r.compressed_bytes as f64),
                SortColumn::Ratio => rep.map_or(-1.0, |r| r.ratio),
                SortColumn::MaxError => rep.map_or(-1.0, |r| r.max_error_cm),
                SortColumn::Threshold => r
                    .shown_settings()
                    .map_or(-1.0, |s| s.error_threshold_cm as f64),
                SortColumn::Time => rep.map_or(-1.0, |r| r.compress_ms),
                _ => 0.0,
            }
        };
        view.sort_by(|&a, &b| {
            let (ra, rb) = (&rows[a], &rows[b]);
            let ord = match sort.column {
                SortColumn::Name => ra
                    .label
                    .cmp(&rb.label)
                    .then_with(|| ra.key.path.cmp(&rb.key.path)),
                SortColumn::Format => ra.format.cmp(rb.format),
                SortColumn::Status => ra.status.rank().cmp(&rb.status.rank()),
                _ => num(ra).total_cmp(&num(rb)),
            };
            let ord = ord
                .then_with(|| ra.key.path.cmp(&rb.key.path))
                .then_with(|| ra.key.clip.cmp(&rb.key.clip));
            if sort.ascending { ord } else { ord.reverse() }
        });
        self.view = view;
    }
}

/// Drops the "<input path>: " prefix of an error message (the row already says which file); a
/// place left after it is named: "<path>:4: no MOTION…" reads "line 4: no MOTION…", not a bare
/// "4: …".
fn short_error(msg: &str, path: &std::path::Path) -> String {
    let p = path.display().to_string();
    let Some(rest) = msg.strip_prefix(&p).and_then(|m| m.strip_prefix(':')) else {
        return msg.to_string();
    };
    let rest = rest.trim_start();
    match rest.split_once(':') {
        Some((line, after)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => {
            format!("line {line}:{after}")
        }
        _ => rest.to_string(),
    }
}

fn status_of(
    res: Option<&StoredResult>,
    settings: &CompressionSettings,
    effective: Option<&ClipSettings>,
    queued: bool,
    unreadable: Option<&str>,
    path: &std::path::Path,
) -> RowStatus {
    if queued {
        return RowStatus::Queued;
    }
    match res {
        None => match unreadable {
            Some(m) => RowStatus::Unreadable(short_error(m, path)),
            None => RowStatus::NotCompressed,
        },
        Some(r) => {
            if let Some(p) = &r.report.below_precision {
                // Raising the threshold lifts the refusal: it then no longer stands.
                if is_stale(r, settings, effective) {
                    RowStatus::Stale
                } else {
                    RowStatus::BelowPrecision(p.clone())
                }
            } else if let Some(e) = &r.report.error {
                RowStatus::Failed(short_error(e, path))
            } else if is_stale(r, settings, effective) {
                RowStatus::Stale
            } else if r.report.over_threshold(threshold_of(r, settings)) {
                RowStatus::OverThreshold
            } else if r.report.skipped {
                RowStatus::Skipped
            } else {
                RowStatus::Ok
            }
        }
    }
}

/// Made with other settings than a batch would use now: what made it (its report's settings)
/// against what applies now (the tab's settings with the clip's folder file, `[[clip]]` and
/// per-bone tables), so a saved per-bone table or a kept side is seen at once; a report without
/// recorded settings is compared with the tab's settings it was made with. A scalar track list
/// reads none of them (the skip cache keys it on its codec alone), so it is never stale by them.
fn is_stale(
    r: &StoredResult,
    settings: &CompressionSettings,
    effective: Option<&ClipSettings>,
) -> bool {
    if r.report.is_scalar_list() {
        return false;
    }
    match (r.report.settings.as_ref(), effective) {
        (Some(made), Some(now)) => !made.same_effect(now),
        _ => &r.settings != settings,
    }
}

/// The threshold a result was held to: the one it was compressed with (a `clipforge.toml`'s,
/// a kept A/B side's), else the tab's.
fn threshold_of(r: &StoredResult, settings: &CompressionSettings) -> f32 {
    r.report.held_to_cm(settings.error_threshold)
}

/// Footer totals over every row that has a report.
pub fn summarize(rows: &[Row]) -> Summary {
    let mut s = Summary {
        clips: rows.len(),
        ..Default::default()
    };
    let mut times = Vec::new();
    for r in rows {
        match &r.status {
            RowStatus::Failed(_) => s.failed += 1,
            RowStatus::Unreadable(_) => s.unreadable += 1,
            RowStatus::BelowPrecision(_) => s.below_precision += 1,
            RowStatus::Stale => s.stale += 1,
            RowStatus::OverThreshold => s.over_threshold += 1,
            _ => {}
        }
        if let (RowStatus::BelowPrecision(_), Some(rep)) = (&r.status, r.report())
            && !rep.skipped
        {
            times.push(rep.compress_ms);
        }
        let Some(rep) = r.good_report() else { continue };
        s.compressed += 1;
        if rep.skipped {
            s.skipped += 1;
        }
        s.raw_bytes += rep.raw_bytes;
        s.compressed_bytes += rep.compressed_bytes;
        // Centimetres only: a scalar track list's errors are in its tracks' own units.
        if rep.scalar.is_none() && (rep.max_error_cm > s.worst_error_cm || s.worst_clip.is_none()) {
            s.worst_error_cm = rep.max_error_cm;
            s.worst_clip = Some(r.key.clip.clone());
            s.worst_over = r.status == RowStatus::OverThreshold;
        }
        if !rep.skipped {
            times.push(rep.compress_ms);
        }
    }
    s.timed = times.len();
    s.p50_ms = percentile(&times, 50.0);
    s.p85_ms = percentile(&times, 85.0);
    s.p99_ms = percentile(&times, 99.0);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_drop_the_clip_extension() {
        assert_eq!(file_stem(std::path::Path::new("/a/walk.acl.sjson")), "walk");
        assert_eq!(file_stem(std::path::Path::new("run.BVH")), "run");
    }
}
