//! Background jobs the UI starts and polls: the folder scan, the inspection (bones / samples /
//! duration of each clip, read by the importers), and batches (`pipeline::run_batch` on a thread,
//! in chunks so rows fill in while it runs), held together in [`ClipJobs`]; and the Lab's jobs.
//! The UI thread never waits on any of them. Polls put their results into the library and
//! return what the other views must follow as [`Command`]s (messages, a cleared selection).

use super::command::Command;
pub use super::command::CompressScope;
use super::model::{ClipMeta, Inspect, Library, RowKey};
use crate::anim::formats;
use crate::pipeline::report::{BatchReport, ClipReport};
use crate::pipeline::{self, BatchOptions, CancelToken, ClipFile, Progress};
use eframe::egui;
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct ScanJob {
    pub root: PathBuf,
    rx: Receiver<(pipeline::ScanResult, Duration)>,
    /// Checked by the scan at every entry: Cancel (Esc) stops it at once.
    pub cancel: CancelToken,
}

impl Drop for ScanJob {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

pub struct InspectJob {
    cancel: CancelToken,
    rx: Receiver<(usize, Inspect)>,
    pub done: usize,
    pub total: usize,
}

impl Drop for InspectJob {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// The previous batch's still-valid results of a freshly scanned folder (from the skip cache),
/// so reopening a folder shows its sizes and errors without compressing anything.
pub struct CachedJob {
    cancel: CancelToken,
    rx: Receiver<Vec<ClipReport>>,
    settings: crate::anim::CompressionSettings,
    /// The output folder whose cache it reads.
    output: PathBuf,
}

impl Drop for CachedJob {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

pub enum BatchMsg {
    /// One finished clip (streamed from the worker threads as they finish).
    Row(Box<ClipReport>),
    Finished(Box<BatchReport>),
}

pub struct BatchJob {
    pub cancel: CancelToken,
    pub progress: Arc<Progress>,
    rx: Receiver<BatchMsg>,
    pub started: Instant,
    /// Input files of the batch: the progress unit, known before it starts (as the CLI's).
    pub total_files: u64,
    /// Input files not finished yet.
    pub queued: HashSet<PathBuf>,
    pub settings: crate::anim::CompressionSettings,
    /// Where it writes (its rows are that folder's results).
    pub output: PathBuf,
    /// The scanned folder it compresses (the library's root when it started).
    pub input: Option<PathBuf>,
}

/// A snapshot of a running batch's counters: `done` of `total` input files (the CLI's unit:
/// the clips a file holds are known only once it is opened), the clips they held so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchCounts {
    pub done: u64,
    pub total: u64,
    pub done_clips: u64,
    pub failed: u64,
    pub skipped: u64,
    pub raw_bytes: u64,
    pub elapsed: Duration,
    /// Time left, weighted by file size (`ClipCounters::eta`).
    pub eta: Option<Duration>,
}

impl BatchCounts {
    /// Raw bytes compressed per second of the batch so far.
    pub fn bytes_per_s(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s <= 0.0 {
            0.0
        } else {
            self.raw_bytes as f64 / s
        }
    }
    pub fn fraction(&self) -> f32 {
        if self.total == 0 {
            0.0
        } else {
            (self.done as f32 / self.total as f32).min(1.0)
        }
    }
}

impl BatchJob {
    pub fn counts(&self) -> BatchCounts {
        let p = &self.progress;
        let elapsed = self.started.elapsed();
        BatchCounts {
            done: p.done_files.load(Ordering::Relaxed),
            total: self.total_files,
            done_clips: p.done_clips.load(Ordering::Relaxed),
            failed: p.failed_clips.load(Ordering::Relaxed),
            skipped: p.skipped_clips.load(Ordering::Relaxed),
            raw_bytes: p.raw_bytes_done.load(Ordering::Relaxed),
            elapsed,
            eta: p.eta(elapsed),
        }
    }
}

/// How the last batch ended (the footer's throughput and wall time).
#[derive(Clone, Debug)]
pub struct BatchOutcome {
    /// The folders it ran on: its figures are about them, not about another folder opened
    /// since (see [`ClipJobs::last_batch_for`]).
    pub input: Option<PathBuf>,
    pub output: PathBuf,
    pub counts: BatchCounts,
    pub cancelled: bool,
    /// The pipeline's report of the batch (rows + totals).
    pub report: BatchReport,
}

/// Starts `pipeline::run_batch_with` on a thread; rows are sent to the UI as they finish.
pub fn start_batch(files: Vec<ClipFile>, options: BatchOptions, ctx: egui::Context) -> BatchJob {
    let (tx, rx) = mpsc::channel();
    let cancel = CancelToken::default();
    let progress = Arc::new(Progress::default());
    let queued: HashSet<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let settings = options.settings.clone();
    let output = options.output_root.clone();
    let total_files = files.len() as u64;
    {
        let cancel = cancel.clone();
        let progress = progress.clone();
        std::thread::Builder::new()
            .name("clipforge-batch".into())
            .spawn(move || {
                // The batch (and the pool it builds) yields to the UI thread.
                pipeline::lower_thread_priority();
                let row_tx = Mutex::new(tx.clone());
                let on_row = |r: &ClipReport| {
                    if let Ok(t) = row_tx.lock() {
                        let _ = t.send(BatchMsg::Row(Box::new(r.clone())));
                    }
                    ctx.request_repaint();
                };
                let report =
                    pipeline::run_batch_with(&files, &options, &progress, &cancel, &on_row);
                let _ = tx.send(BatchMsg::Finished(Box::new(report)));
                ctx.request_repaint();
            })
            .expect("spawn the batch thread");
    }
    BatchJob {
        cancel,
        progress,
        rx,
        started: Instant::now(),
        total_files,
        queued,
        settings,
        output,
        input: None,
    }
}

/// Worker threads for background work: the user's choice, else every core. The workers run at a
/// lower priority ([`pipeline::lower_thread_priority`]), so the UI thread still gets a core at
/// once when it wants one, without giving up a whole core to it on small machines.
pub fn background_workers(jobs: usize) -> usize {
    if jobs > 0 {
        return jobs;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The folder as the watcher reports it (canonical), so watch results match the table's rows.
pub fn canonical(p: &str) -> PathBuf {
    let p = PathBuf::from(p);
    p.canonicalize().unwrap_or(p)
}

fn inspect_file(path: &std::path::Path) -> Inspect {
    match formats::load_clips(path) {
        Ok(clips) => Inspect::Clips(
            clips
                .iter()
                .map(|c| ClipMeta {
                    name: c.name.clone(),
                    bones: c.num_bones(),
                    samples: c.num_samples,
                    duration_s: c.duration(),
                    raw_bytes: c.raw_size_bytes() as u64,
                    scalar_list: false,
                })
                .collect(),
        ),
        // An ACL scalar track list is no transform clip, but a batch compresses it (`.cfs`):
        // its row gives its tracks, samples and size, not "unreadable".
        Err(e) => match scalar_list_meta(path) {
            Some(meta) => Inspect::Clips(vec![meta]),
            // The whole error (file and line): the row's status keeps the place, as a batch's row does.
            None => Inspect::Failed(e.to_string()),
        },
    }
}

/// The row facts of the ACL scalar track list at `path`, named as its report row is; `None`
/// when it is not one. Tracks count as the Bones column (the report's `bones` for a list).
fn scalar_list_meta(path: &Path) -> Option<ClipMeta> {
    if formats::ClipFormat::from_path(path) != Some(formats::ClipFormat::AclSjson) {
        return None;
    }
    let list = pipeline::scalar::read_scalar_list(path).ok()?;
    Some(ClipMeta {
        name: if list.name.is_empty() {
            pipeline::clip_stem(path)
        } else {
            list.name.clone()
        },
        bones: list.output_order().len(),
        samples: list.num_samples,
        duration_s: list.duration(),
        raw_bytes: list.raw_size_bytes() as u64,
        scalar_list: true,
    })
}

/// The Clips tab's background work, shared by the views (they only read it): the scan of the
/// input folder, the inspection of its files, the skip-cache lookup and the batch.
#[derive(Default)]
pub struct ClipJobs {
    pub scan_job: Option<ScanJob>,
    pub inspect_job: Option<InspectJob>,
    /// Reading the previous results of the scanned folder from the skip cache.
    pub cached_job: Option<CachedJob>,
    pub batch: Option<BatchJob>,
    /// Set when "Compress all" was pressed before the folder was scanned.
    pub pending_compress: Option<CompressScope>,
    pub last_batch: Option<BatchOutcome>,
    /// Bumped per batch (and per watch event): a file's first row of a newer generation
    /// replaces all its older rows.
    pub batch_generation: u64,
}

/// What a batch needs besides the files: where it writes and with which settings.
pub struct BatchRequest {
    pub output: PathBuf,
    pub options: BatchOptions,
}

impl ClipJobs {
    /// True while a scan or a batch runs, or a batch waits for its scan.
    pub fn is_busy(&self) -> bool {
        self.scan_job.is_some() || self.batch.is_some() || self.pending_compress.is_some()
    }

    /// True while anything runs that the UI polls.
    pub fn any_running(&self) -> bool {
        self.is_busy() || self.inspect_job.is_some() || self.cached_job.is_some()
    }

    /// Files not finished by the running batch (their rows show "queued").
    pub fn queued(&self) -> Option<&HashSet<PathBuf>> {
        self.batch.as_ref().map(|b| &b.queued)
    }

    /// Scans `input` on a thread (the table fills when it returns); the folder scanned, or why not.
    pub fn start_scan(&mut self, input: &str) -> Result<PathBuf, String> {
        let root = canonical(input.trim());
        if !root.is_dir() {
            return Err(format!("Input folder not found: {}", root.display()));
        }
        let (tx, rx) = mpsc::channel();
        let r = root.clone();
        let cancel = CancelToken::default();
        let options = pipeline::ScanOptions {
            cancel: Some(cancel.clone()),
            ..Default::default()
        };
        std::thread::spawn(move || {
            pipeline::lower_thread_priority();
            let t = Instant::now();
            let found = pipeline::scan_with(&r, &options);
            let _ = tx.send((found, t.elapsed()));
        });
        self.inspect_job = None;
        self.scan_job = Some(ScanJob {
            root: root.clone(),
            rx,
            cancel,
        });
        Ok(root)
    }

    /// Takes the scan's result into `lib`, then starts the inspection and the skip-cache lookup
    /// (`cache`: the output folder's cache with the current settings).
    pub fn poll_scan(
        &mut self,
        lib: &mut Library,
        cache: Option<BatchOptions>,
        ctx: &egui::Context,
        out: &mut Vec<Command>,
    ) {
        let Some(job) = &self.scan_job else { return };
        match job.rx.try_recv() {
            Ok((found, took)) => {
                let root = job.root.clone();
                self.scan_job = None;
                let mut files = found.files;
                let paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
                self.start_cached_lookup(&files, cache, ctx);
                // Special files (FIFOs, sockets, devices) are never opened. Named like a clip,
                // one was meant as a clip: an unreadable row, as the CLI's failed row. The
                // others are only counted, in the folder bar's message.
                let (named, other): (Vec<_>, Vec<_>) =
                    found.special.into_iter().partition(|s| s.clip_named);
                let first_special = files.len();
                files.extend(named.iter().filter_map(|s| ClipFile::new(&root, &s.path)));
                lib.set_files(root, files, took);
                for (i, s) in named.iter().enumerate() {
                    lib.set_inspect(first_special + i, Inspect::Failed(s.message()));
                }
                lib.special = named.iter().map(|s| s.path.clone()).collect();
                if let Some(first) = other.first() {
                    out.push(Command::Message {
                        // The CLI's wording (singular or plural, no "(s)").
                        text: format!(
                            "{} skipped (not regular files, not named like clips), e.g. {}",
                            pipeline::report::count(other.len(), "special file", "special files"),
                            first.message()
                        ),
                        error: false,
                    });
                }
                out.push(Command::ClearSelection);
                self.start_inspect(paths);
            }
            Err(TryRecvError::Disconnected) => {
                self.scan_job = None;
                out.push(Command::Message {
                    text: "The scan stopped unexpectedly".into(),
                    error: true,
                });
            }
            Err(TryRecvError::Empty) => {}
        }
    }

    /// The output folder shown changed: its skip cache tells which rows are up to date there
    /// (the rows of the old folder's results are already gone from the table).
    pub fn output_changed(
        &mut self,
        lib: &mut Library,
        options: Option<BatchOptions>,
        ctx: &egui::Context,
    ) {
        if self.scan_job.is_some() {
            // The scan's own lookup will read the new folder.
            return;
        }
        // What the folder holds now, not what it held when it was shown before.
        if let Some(o) = &options {
            lib.forget_output(&o.output_root);
        }
        let files: Vec<ClipFile> = lib
            .files
            .iter()
            .filter(|f| !lib.special.contains(&f.path))
            .cloned()
            .collect();
        self.start_cached_lookup(&files, options, ctx);
    }

    /// Looks the scanned files up in the output folder's skip cache on a thread (unless a batch
    /// is about to run anyway).
    fn start_cached_lookup(
        &mut self,
        files: &[ClipFile],
        options: Option<BatchOptions>,
        ctx: &egui::Context,
    ) {
        self.cached_job = None;
        let Some(options) = options else { return };
        if self.pending_compress.is_some() || self.batch.is_some() {
            return;
        }
        let (tx, rx) = mpsc::channel();
        let cancel = CancelToken::default();
        let settings = options.settings.clone();
        let output = options.output_root.clone();
        let (files, c, ctx) = (files.to_vec(), cancel.clone(), ctx.clone());
        std::thread::spawn(move || {
            pipeline::lower_thread_priority();
            let rows: Vec<ClipReport> = pipeline::cached_results(&files, &options, &c)
                .into_iter()
                .flatten()
                .flatten()
                .collect();
            let _ = tx.send(rows);
            ctx.request_repaint();
        });
        self.cached_job = Some(CachedJob {
            cancel,
            rx,
            settings,
            output,
        });
    }

    pub fn poll_cached(&mut self, lib: &mut Library) {
        let Some(job) = &self.cached_job else { return };
        match job.rx.try_recv() {
            Ok(rows) => {
                // Only files nothing newer (a batch, the watcher) has reported on in this
                // output folder.
                let output = job.output.clone();
                let rows: Vec<ClipReport> = rows
                    .into_iter()
                    .filter(|r| !lib.has_result_for(Path::new(&r.input), &output))
                    .collect();
                let settings = job.settings.clone();
                self.cached_job = None;
                if !rows.is_empty() {
                    lib.add_reports(&rows, &settings, &output, self.batch_generation);
                    lib.mark_dirty_now();
                }
            }
            Err(TryRecvError::Disconnected) => self.cached_job = None,
            Err(TryRecvError::Empty) => {}
        }
    }

    fn start_inspect(&mut self, paths: Vec<PathBuf>) {
        let (tx, rx) = mpsc::channel();
        let cancel = CancelToken::new();
        let total = paths.len();
        let s = cancel.clone();
        std::thread::spawn(move || {
            pipeline::lower_thread_priority();
            let run = || {
                let _ = paths.par_iter().enumerate().try_for_each(|(i, p)| {
                    if s.is_cancelled() {
                        return Err(());
                    }
                    tx.send((i, inspect_file(p))).map_err(|_| ())
                });
            };
            // Its own pool, so the inspection never competes with rayon's global pool.
            match rayon::ThreadPoolBuilder::new()
                .num_threads(background_workers(0))
                .build()
            {
                Ok(pool) => pool.install(run),
                Err(_) => run(),
            }
        });
        self.inspect_job = Some(InspectJob {
            cancel,
            rx,
            done: 0,
            total,
        });
    }

    pub fn poll_inspect(&mut self, lib: &mut Library) {
        let Some(job) = &mut self.inspect_job else {
            return;
        };
        let deadline = Instant::now() + Duration::from_millis(3);
        let mut finished = false;
        loop {
            match job.rx.try_recv() {
                Ok((i, ins)) => {
                    lib.set_inspect(i, ins);
                    job.done += 1;
                    if Instant::now() > deadline {
                        break;
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    finished = true;
                    break;
                }
            }
        }
        if finished || job.done >= job.total {
            self.inspect_job = None;
            lib.mark_dirty_now();
        }
    }

    /// Starts a batch over `scope`'s files of the scanned folder; why not, when it cannot.
    pub fn start_batch(
        &mut self,
        scope: &CompressScope,
        lib: &Library,
        request: BatchRequest,
        ctx: &egui::Context,
    ) -> Result<(), String> {
        let wanted: Option<HashSet<&PathBuf>> = match scope {
            CompressScope::All => None,
            CompressScope::Files(paths) => Some(paths.iter().collect()),
        };
        let mut files = Vec::new();
        for f in &lib.files {
            if wanted.as_ref().is_some_and(|w| !w.contains(&f.path))
                || lib.special.contains(&f.path)
            {
                continue;
            }
            files.push(f.clone());
        }
        if files.is_empty() {
            return Err("No clips to compress in this folder".into());
        }
        if let Err(e) = std::fs::create_dir_all(&request.output) {
            return Err(format!(
                "Cannot create the output folder {}: {e}",
                request.output.display()
            ));
        }
        self.batch_generation += 1;
        self.cached_job = None;
        let mut job = start_batch(files, request.options, ctx.clone());
        job.input = lib.root.clone();
        self.batch = Some(job);
        Ok(())
    }

    /// Takes the rows the batch finished into `lib` (a few ms per frame at most).
    pub fn poll_batch(&mut self, lib: &mut Library, out: &mut Vec<Command>) {
        let Some(job) = &mut self.batch else { return };
        let mut finished = None;
        let mut rows = Vec::new();
        let deadline = Instant::now() + Duration::from_millis(4);
        loop {
            match job.rx.try_recv() {
                Ok(BatchMsg::Row(r)) => {
                    rows.push(*r);
                    if Instant::now() > deadline {
                        break;
                    }
                }
                Ok(BatchMsg::Finished(rep)) => {
                    finished = Some(*rep);
                    break;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    finished = Some(BatchReport::default());
                    break;
                }
            }
        }
        let (settings, output) = (job.settings.clone(), job.output.clone());
        if !rows.is_empty() {
            // A file leaves the queue once all its rows are in (a glTF file has several).
            let mut done_files: HashSet<PathBuf> = HashSet::new();
            for r in &rows {
                done_files.insert(PathBuf::from(&r.input));
            }
            for f in done_files {
                job.queued.remove(&f);
            }
            lib.add_reports(&rows, &settings, &output, self.batch_generation);
        }
        if let Some(report) = finished
            && let Some(job) = self.batch.take()
        {
            let counts = job.counts();
            let cancelled = job.cancel.is_cancelled() || report.totals.cancelled > 0;
            lib.mark_dirty_now();
            if cancelled {
                out.push(Command::Message {
                    text: format!(
                        "Cancelled: {} done, {} not compressed, nothing partial written",
                        pipeline::report::count(
                            report.totals.clips - report.totals.cancelled,
                            "clip",
                            "clips"
                        ),
                        report.totals.cancelled
                    ),
                    error: false,
                });
            }
            self.last_batch = Some(BatchOutcome {
                input: job.input.clone(),
                output: job.output.clone(),
                counts,
                cancelled,
                report,
            });
        }
    }

    /// The last batch when it ran on these folders (the scanned input `root` and `output`):
    /// after opening another folder the line "Last batch: 8 clips…" and its throughput were
    /// still shown over a table of which nothing had been compressed.
    pub fn last_batch_for(&self, root: Option<&Path>, output: &Path) -> Option<&BatchOutcome> {
        self.last_batch
            .as_ref()
            .filter(|b| b.input.as_deref() == root && b.output == output)
    }

    /// Cancels the running batch and a compression waiting for its scan (Esc).
    pub fn cancel(&mut self) {
        if let Some(b) = &self.batch {
            b.cancel.cancel();
        }
        // Dropping the job cancels its scan (the table keeps what it showed).
        self.scan_job = None;
        self.pending_compress = None;
    }
}

/// What the Lab view shows for one clip: the lab's figures and each codec's error per sample.
#[derive(Clone, Debug)]
pub struct LabClipOutcome {
    pub key: RowKey,
    pub lab: crate::anim::lab::ClipLab,
    pub sample_rate: f32,
    /// `(codec, max error over bones at each sample, cm)`, in the lab's codec order.
    pub series: Vec<(String, Vec<f64>)>,
    /// The settings it ran with and where each came from (one line).
    pub settings: String,
}

/// Where a lab job is (the view shows it next to the spinner).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabStage {
    Reading,
    Measuring,
    Curves,
}

impl LabStage {
    pub fn text(self) -> &'static str {
        match self {
            LabStage::Reading => "reading the clip",
            LabStage::Measuring => "compressing and timing the three codecs",
            LabStage::Curves => "measuring the error curves",
        }
    }
}

/// The lab on one clip, on a background thread. Cancelling drops the job at once; the thread
/// stops at its next stage boundary and its result is thrown away.
pub struct LabClipJob {
    pub key: RowKey,
    pub cancel: CancelToken,
    stage: Arc<std::sync::atomic::AtomicU8>,
    rx: Receiver<Result<LabClipOutcome, String>>,
    pub started: Instant,
}

impl Drop for LabClipJob {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl LabClipJob {
    pub fn stage(&self) -> LabStage {
        match self.stage.load(Ordering::Relaxed) {
            0 => LabStage::Reading,
            1 => LabStage::Measuring,
            _ => LabStage::Curves,
        }
    }

    /// The outcome once the thread is done (`Some(Err)` also when it stopped unexpectedly).
    pub fn try_take(&self) -> Option<Result<LabClipOutcome, String>> {
        match self.rx.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err("the lab stopped unexpectedly".into())),
        }
    }
}

/// Reads `key`'s clip from its file (a glTF/FBX file may hold several).
fn load_lab_clip(key: &RowKey) -> Result<crate::anim::RawClip, String> {
    let mut clips = formats::load_clips(&key.path).map_err(|e| e.to_string())?;
    let i = clips
        .iter()
        .position(|c| c.name == key.clip)
        .or((clips.len() == 1).then_some(0))
        .ok_or_else(|| format!("{}: clip '{}' not found", key.path.display(), key.clip))?;
    Ok(clips.swap_remove(i))
}

/// The lab's options from the app's compression settings (timings on: the view shows them).
pub fn lab_options(settings: &crate::anim::CompressionSettings) -> crate::anim::lab::LabOptions {
    crate::anim::lab::LabOptions {
        settings_threshold: settings.error_threshold,
        shell_distance: settings.shell_distance,
        timings: true,
    }
}

/// The lab's options for one clip and the line that says them: the clip's effective settings
/// (its folder's `clipforge.toml`, a kept `[[clip]]` choice, else the Clips tab's), in the
/// clip's units as a batch gives them to the compressor. The lab has no per-bone thresholds:
/// the line says when the clip has some.
pub fn clip_lab_options(
    lib: &Library,
    key: &RowKey,
    tab: &crate::anim::CompressionSettings,
) -> (crate::anim::lab::LabOptions, String) {
    let eff = lib
        .row(key)
        .and_then(|r| r.effective.as_ref())
        .and_then(|e| e.as_ref().ok());
    let Some(e) = eff else {
        return (
            lab_options(tab),
            format!(
                "threshold {} cm{} (Clips tab settings)",
                tab.error_threshold,
                tab.shell_distance
                    .map_or(String::new(), |d| format!(" · shell {d} cm"))
            ),
        );
    };
    let k = e.units.cm_per_unit();
    let to_units = |cm: f32| (cm as f64 / k) as f32;
    let (d, x) = super::model::APP_SOURCES;
    let mut text = e.describe(d, x);
    if !e.bones.is_empty() {
        text.push_str(" (the lab applies no per-bone settings)");
    }
    (
        crate::anim::lab::LabOptions {
            settings_threshold: to_units(e.error_threshold_cm),
            shell_distance: e.shell_distance_cm.map(to_units),
            timings: true,
        },
        text,
    )
}

/// Starts the lab on one clip.
pub fn start_lab_clip(
    key: RowKey,
    opts: crate::anim::lab::LabOptions,
    settings: String,
    ctx: egui::Context,
) -> LabClipJob {
    let (tx, rx) = mpsc::channel();
    let cancel = CancelToken::default();
    let stage = Arc::new(std::sync::atomic::AtomicU8::new(0));
    {
        let (key, cancel, stage) = (key.clone(), cancel.clone(), stage.clone());
        std::thread::Builder::new()
            .name("clipforge-lab".into())
            .spawn(move || {
                pipeline::lower_thread_priority();
                let r = run_lab_clip(&key, &opts, &cancel, &stage).map(|mut o| {
                    o.settings = settings;
                    o
                });
                if !cancel.is_cancelled() {
                    let _ = tx.send(r);
                    ctx.request_repaint();
                }
            })
            .expect("spawn the lab thread");
    }
    LabClipJob {
        key,
        cancel,
        stage,
        rx,
        started: Instant::now(),
    }
}

fn run_lab_clip(
    key: &RowKey,
    opts: &crate::anim::lab::LabOptions,
    cancel: &CancelToken,
    stage: &std::sync::atomic::AtomicU8,
) -> Result<LabClipOutcome, String> {
    let clip = load_lab_clip(key)?;
    if cancel.is_cancelled() {
        return Err("cancelled".into());
    }
    stage.store(1, Ordering::Relaxed);
    let shown = key.path.display().to_string();
    let (mut lab, lossy) = crate::anim::lab::run_clip(&clip, &shown, opts)
        .map_err(|e| format!("{shown}: clip '{}': {e}", clip.name))?;
    lab.clip = key.clip.clone();
    if cancel.is_cancelled() {
        return Err("cancelled".into());
    }
    stage.store(2, Ordering::Relaxed);
    let shells: Vec<f32> = match opts.shell_distance {
        Some(d) => vec![d; clip.num_bones()],
        None => clip.skeleton.shell_distances.clone(),
    };
    let series = lossy
        .iter()
        .map(|l| {
            (
                l.codec.to_string(),
                crate::anim::lab::per_sample_error(&clip, &l.clip, &shells),
            )
        })
        .collect();
    Ok(LabClipOutcome {
        key: key.clone(),
        lab,
        sample_rate: clip.sample_rate,
        series,
        settings: String::new(),
    })
}

/// One clip of a lab batch: its figures or why it failed.
#[derive(Clone, Debug)]
pub struct LabBatchRow {
    pub key: RowKey,
    pub label: String,
    pub result: Result<crate::anim::lab::ClipLab, String>,
}

/// The lab over many clips, one after the other on a background thread (one at a time keeps the
/// decode timings apart from each other), rows streamed as they finish.
pub struct LabBatchJob {
    pub cancel: CancelToken,
    pub done: Arc<std::sync::atomic::AtomicUsize>,
    pub total: usize,
    rx: Receiver<LabBatchRow>,
    pub started: Instant,
}

impl Drop for LabBatchJob {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl LabBatchJob {
    /// Rows finished since the last call, and whether the thread is done.
    pub fn drain(&self) -> (Vec<LabBatchRow>, bool) {
        let mut rows = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(r) => rows.push(r),
                Err(TryRecvError::Empty) => return (rows, false),
                Err(TryRecvError::Disconnected) => return (rows, true),
            }
        }
    }
}

/// The lab on `key`'s clip among the clips of its file.
fn lab_one(
    all: &[crate::anim::RawClip],
    key: &RowKey,
    shown: &str,
    opts: &crate::anim::lab::LabOptions,
) -> Result<crate::anim::lab::ClipLab, String> {
    let clip = all
        .iter()
        .find(|c| c.name == key.clip)
        .or(all.first().filter(|_| all.len() == 1))
        .ok_or_else(|| format!("{shown}: clip '{}' not found", key.clip))?;
    let (mut lab, _) = crate::anim::lab::run_clip(clip, shown, opts)
        .map_err(|e| format!("{shown}: clip '{}': {e}", key.clip))?;
    lab.clip = key.clip.clone();
    Ok(lab)
}

/// Starts the lab over `clips` (`(key, label, options)`: each clip with its own settings),
/// grouped by file so each file is read once.
pub fn start_lab_batch(
    clips: Vec<(RowKey, String, crate::anim::lab::LabOptions)>,
    ctx: egui::Context,
) -> LabBatchJob {
    let (tx, rx) = mpsc::channel();
    let cancel = CancelToken::default();
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let total = clips.len();
    {
        let (cancel, done) = (cancel.clone(), done.clone());
        std::thread::Builder::new()
            .name("clipforge-lab-batch".into())
            .spawn(move || {
                pipeline::lower_thread_priority();
                let mut i = 0;
                while i < clips.len() && !cancel.is_cancelled() {
                    let path = clips[i].0.path.clone();
                    let end = i + clips[i..].iter().take_while(|c| c.0.path == path).count();
                    let shown = path.display().to_string();
                    let file = formats::load_clips(&path).map_err(|e| e.to_string());
                    for (key, label, opts) in &clips[i..end] {
                        if cancel.is_cancelled() {
                            break;
                        }
                        let result = match &file {
                            Err(e) => Err(e.clone()),
                            Ok(all) => lab_one(all, key, &shown, opts),
                        };
                        done.fetch_add(1, Ordering::Relaxed);
                        let row = LabBatchRow {
                            key: key.clone(),
                            label: label.clone(),
                            result,
                        };
                        if tx.send(row).is_err() {
                            return;
                        }
                        ctx.request_repaint();
                    }
                    i = end;
                }
                ctx.request_repaint();
            })
            .expect("spawn the lab batch thread");
    }
    LabBatchJob {
        cancel,
        done,
        total,
        rx,
        started: Instant::now(),
    }
}
