//! Folder watching: compresses clips as they appear or change under an input folder, mirrors the
//! tree into the output folder and deletes the outputs of inputs that are deleted or renamed away.
//!
//! Built on `notify` 8 through `notify-debouncer-full` 0.7, whose events are only hints: the
//! watcher keeps its own list of pending files and compresses one once it has stopped changing
//! (same size and modification time for [`WatchOptions::settle`], and no event in that time).
//! A file that fails to import is retried a few times ([`WatchOptions::retries`]) before it is
//! reported as failed, since it may still be being written; a failure on a file that then
//! changes is retracted by its next event ([`WatchEvent::retracts_failure`]). A new folder is
//! rescanned with [`super::scan_with`] (inotify misses files created right after their folder),
//! which visits each real folder once; paths through a link back into the tree are ignored.
//! See `docs/PIPELINE.md`.

use super::cache::{SkipCache, cache_key};
use super::report::{ClipReport, ClipStatus};
use crate::input::{ClipFile, read_input};
use crate::job::{BatchOptions, FileJob, FileOutcome};
use crate::naming::{clip_output_path, clip_stem, output_base, output_base_on_disk};
use crate::output_lock::LockError;
use crate::process::process_file;
use crate::{CancelToken, Progress};
use clipforge_base::watcher::Watcher;
use notify_debouncer_full::DebounceEventResult;
use notify_debouncer_full::notify::{EventKind, event::ModifyKind, event::RenameMode};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// What happened to one input file.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchEventKind {
    /// Compressed (every clip of the file); `reports` holds the rows.
    Compressed,
    /// Already up to date according to the skip cache (same content and settings).
    Skipped,
    /// Could not be compressed (after the retries, for an import error): the message.
    Failed(String),
    /// A clip of the file was refused because its threshold is below float32 precision (the
    /// message names the floor; the row's `below_precision` holds it): a setting to raise, not a
    /// broken file, so never retried and never counted as a failure. The file's other clips
    /// were compressed (`outputs`).
    BelowPrecision(String),
    /// The input was deleted or renamed away; its outputs (in `outputs`) were deleted.
    Removed,
    /// The watcher itself reported a problem (the watch goes on).
    WatchError(String),
}

/// One event of the watcher.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchEvent {
    pub time: SystemTime,
    /// The input file (or folder, for [`WatchEventKind::WatchError`]).
    pub path: PathBuf,
    pub kind: WatchEventKind,
    /// Outputs written (Compressed/Skipped) or deleted (Removed).
    pub outputs: Vec<PathBuf>,
    /// Report rows of the file (Compressed, Skipped, Failed).
    pub reports: Vec<ClipReport>,
    /// This file was reported `Failed` earlier and has changed since: that failure no longer
    /// stands, this event replaces it (the file was probably still being written).
    pub retracts_failure: bool,
}

/// How a watch behaves.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// Settings, output folder, worker threads (0 = all cores), skip cache.
    pub batch: BatchOptions,
    /// A file is compressed once unchanged (size, modification time, no event) for this long.
    pub settle: Duration,
    /// Import failures are retried this many times before the file is reported as failed.
    pub retries: u32,
    /// Wait between two import attempts.
    pub retry_delay: Duration,
    /// Debouncer timeout (notify-debouncer-full).
    pub debounce: Duration,
    /// Compress (or skip, when up to date) the files already there when the watch starts.
    pub initial_scan: bool,
    /// Run the watch's worker threads at a lower CPU priority (the app: its UI comes first).
    pub low_priority: bool,
    /// Follow symbolic links to folders on other filesystems than the input folder's
    /// ([`super::ScanOptions::other_filesystems`]).
    pub other_filesystems: bool,
    /// Explicit options (a command line, a pipeline) that win over the folders' `clipforge.toml`
    /// files, and extra exclude patterns. `batch.settings` are the defaults.
    pub overrides: super::folder_settings::Overrides,
    /// Test seam: called with each file's path after it was processed and before the worker
    /// checks whether it changed meanwhile, so a test can change it at exactly that moment.
    #[doc(hidden)]
    pub after_process_hook: Option<ProcessHook>,
}

/// See [`WatchOptions::after_process_hook`].
#[derive(Clone)]
pub struct ProcessHook(pub Arc<dyn Fn(&Path) + Send + Sync>);

impl std::fmt::Debug for ProcessHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProcessHook")
    }
}

impl WatchOptions {
    pub fn new(
        settings: clipforge_anim::CompressionSettings,
        output_root: impl Into<PathBuf>,
    ) -> Self {
        Self {
            batch: BatchOptions {
                settings,
                output_root: output_root.into(),
                jobs: 0,
                use_skip_cache: true,
            },
            settle: Duration::from_millis(300),
            retries: 5,
            retry_delay: Duration::from_millis(400),
            debounce: Duration::from_millis(200),
            initial_scan: true,
            low_priority: false,
            other_filesystems: false,
            overrides: Default::default(),
            after_process_hook: None,
        }
    }
}

/// A running watch. Dropping it stops it too.
pub struct WatchHandle {
    events: Receiver<WatchEvent>,
    /// Stops the watch loop and abandons the clip being compressed.
    cancel: CancelToken,
    thread: Option<JoinHandle<()>>,
    input_root: PathBuf,
    output_root: PathBuf,
    /// The output folder's lock, released once the thread stopped.
    lock: Option<super::output_lock::OutputLock>,
}

impl WatchHandle {
    /// The event channel (`recv_timeout` / `try_recv` on it).
    pub fn events(&self) -> &Receiver<WatchEvent> {
        &self.events
    }

    /// The watched folder (canonical).
    pub fn input_root(&self) -> &Path {
        &self.input_root
    }

    /// The output folder (canonical).
    pub fn output_root(&self) -> &Path {
        &self.output_root
    }

    /// True until stopped (or until the watcher thread ended on its own).
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stops watching: the clip being compressed is abandoned without leaving a partial file,
    /// the skip cache is saved, and the call returns once the watcher thread has ended.
    pub fn stop(&mut self) {
        self.cancel.cancel();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.lock = None;
    }
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Why a watch did not start ([`start_watch`]); code can tell an output folder another watch
/// holds ([`WatchError::Lock`] of [`LockError::Held`]) from a missing or unreadable folder.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("{}: cannot watch: {source}", path.display())]
    Input {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a folder", path.display())]
    NotAFolder { path: PathBuf },
    #[error("{}: cannot create the output folder: {source}", path.display())]
    CreateOutput {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Output {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Watcher(#[from] clipforge_base::watcher::WatcherError),
    #[error("cannot start the watch thread: {0}")]
    Thread(std::io::Error),
}

/// Starts watching `input_root` (a folder, recursively) into `options.batch.output_root`
/// (created if missing). Events arrive on [`WatchHandle::events`].
pub fn start_watch(input_root: &Path, options: WatchOptions) -> Result<WatchHandle, WatchError> {
    let root = input_root
        .canonicalize()
        .map_err(|source| WatchError::Input {
            path: input_root.to_path_buf(),
            source,
        })?;
    if !root.is_dir() {
        return Err(WatchError::NotAFolder {
            path: input_root.to_path_buf(),
        });
    }
    std::fs::create_dir_all(&options.batch.output_root).map_err(|source| {
        WatchError::CreateOutput {
            path: options.batch.output_root.clone(),
            source,
        }
    })?;
    let out = options
        .batch
        .output_root
        .canonicalize()
        .map_err(|source| WatchError::Output {
            path: options.batch.output_root.clone(),
            source,
        })?;
    // One watch per output folder (another process's too).
    let lock = super::output_lock::OutputLock::acquire(&out, &root)?;
    let mut options = options;
    options.batch.output_root = out.clone();
    // Temporary files of a run that was killed (never those of a live process).
    super::interrupt::remove_stale_temp_files(&out);

    let mut watcher = Watcher::start(std::slice::from_ref(&root), options.debounce, None)?;

    let (tx, rx) = mpsc::channel();
    let cancel = CancelToken::default();
    let mut worker = Worker {
        cache: SkipCache::load(&out),
        resolver: super::folder_settings::SettingsResolver::new(
            options.batch.settings.clone(),
            options.overrides.clone(),
        ),
        root: root.clone(),
        opts: options,
        pending: HashMap::new(),
        failed: HashSet::new(),
        reported_special: HashSet::new(),
        tx,
        cancel: cancel.clone(),
    };
    let stop = cancel.clone();
    let low_priority = worker.opts.low_priority;
    let thread = std::thread::Builder::new()
        .name("clipforge-watch".into())
        .spawn(move || {
            if low_priority {
                crate::batch::lower_thread_priority();
            }
            worker.run(&watcher, &stop);
            watcher.stop();
        })
        .map_err(WatchError::Thread)?;
    Ok(WatchHandle {
        events: rx,
        cancel,
        thread: Some(thread),
        input_root: root,
        output_root: out,
        lock: Some(lock),
    })
}

/// Size and modification time: a file is stable while this stays the same.
type Sig = (u64, Option<SystemTime>);

fn signature(path: &Path) -> Option<Sig> {
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| (m.len(), m.modified().ok()))
}

struct Pending {
    sig: Option<Sig>,
    due: Instant,
    attempts: u32,
    /// An earlier pass compressed the file (outputs written, skip cache filled) but its result
    /// was dropped because the file changed while it was read, so no `Compressed` event has been
    /// sent for it yet: a later pass that only finds it up to date must still report it compressed.
    unreported: bool,
}

struct Worker {
    cache: SkipCache,
    /// Folder settings; forgotten whenever a `clipforge.toml` changes.
    resolver: super::folder_settings::SettingsResolver,
    root: PathBuf,
    opts: WatchOptions,
    pending: HashMap<PathBuf, Pending>,
    /// Files whose last event was `Failed`: their next event says it retracts that failure.
    failed: HashSet<PathBuf>,
    /// Special files already reported (once each, until they go away: events repeat).
    reported_special: HashSet<PathBuf>,
    tx: Sender<WatchEvent>,
    cancel: CancelToken,
}

impl Worker {
    fn run(&mut self, watcher: &Watcher, stop: &CancelToken) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.opts.batch.jobs)
            .build()
            .ok();
        if self.opts.initial_scan {
            self.forget_missing();
            self.rescan(&self.root.clone(), true);
        }
        while !stop.is_cancelled() {
            let now = Instant::now();
            let wait = self
                .pending
                .values()
                .map(|p| p.due.saturating_duration_since(now))
                .min()
                .unwrap_or(Duration::from_millis(100))
                .min(Duration::from_millis(100));
            match watcher.recv_timeout(wait) {
                Ok(r) => {
                    self.handle(r);
                    while let Ok(r) = watcher.try_recv() {
                        self.handle(r);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if stop.is_cancelled() {
                break;
            }
            self.process_due(pool.as_ref());
            if let Err(e) = self.cache.save(&self.opts.batch.output_root) {
                self.emit(
                    self.opts.batch.output_root.clone(),
                    WatchEventKind::WatchError(format!("cannot save the skip cache: {e}")),
                    vec![],
                    vec![],
                );
            }
        }
        let _ = self.cache.save(&self.opts.batch.output_root);
    }

    fn emit(
        &self,
        path: PathBuf,
        kind: WatchEventKind,
        outputs: Vec<PathBuf>,
        reports: Vec<ClipReport>,
    ) {
        let _ = self.tx.send(WatchEvent {
            time: SystemTime::now(),
            path,
            kind,
            outputs,
            reports,
            retracts_failure: false,
        });
    }

    /// Paths the watcher leaves alone: the output folder (when inside the input), dot folders,
    /// our temporary files.
    fn ignored(&self, path: &Path) -> bool {
        if path.starts_with(&self.opts.batch.output_root) || super::is_temp_file(path) {
            return true;
        }
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return true;
        };
        if self.is_alias(path) {
            return true;
        }
        let n = rel.components().count();
        rel.components().enumerate().any(|(i, c)| {
            let dot = c.as_os_str().to_string_lossy().starts_with('.');
            dot && (i + 1 < n || path.is_dir())
        }) || (!path.is_dir() && self.resolver.excluded(&self.root, path))
    }

    /// `path` is reached through a symbolic link to a folder that is itself inside the watched
    /// tree (`in/sub/loop -> ..`): the real path is watched already, so this one is left alone
    /// (each real folder is handled once). A link to a folder outside the tree is no alias.
    fn is_alias(&self, path: &Path) -> bool {
        let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let dir = if link && path.is_dir() {
            Some(path)
        } else {
            path.parent()
        };
        let Some(dir) = dir else { return false };
        match dir.canonicalize() {
            Ok(real) => real != dir && real.starts_with(&self.root),
            Err(_) => false,
        }
    }

    /// A `clipforge.toml` appeared, changed or went away: every clip under its folder is looked
    /// at again (the skip cache key holds the effective settings, so only the clips whose
    /// settings changed are recompressed).
    fn settings_file_changed(&mut self, path: &Path) -> bool {
        if path.file_name() != Some(std::ffi::OsStr::new(super::folder_settings::FILE_NAME))
            || self.ignored_parent(path)
        {
            return false;
        }
        self.resolver.invalidate();
        if let Some(dir) = path.parent() {
            self.rescan(dir, false);
            // Clips newly excluded keep their outputs; clips no longer excluded are picked up
            // by the rescan above.
        }
        true
    }

    fn handle(&mut self, result: DebounceEventResult) {
        let events = match result {
            Ok(ev) => ev,
            Err(errors) => {
                for e in errors {
                    self.emit(
                        self.root.clone(),
                        WatchEventKind::WatchError(e.to_string()),
                        vec![],
                        vec![],
                    );
                }
                // Events may have been lost: look at everything again.
                self.rescan(&self.root.clone(), false);
                self.forget_missing();
                return;
            }
        };
        let mut dirs = std::collections::BTreeSet::new();
        for ev in &events {
            for p in &ev.event.paths {
                if let Some(d) = p.parent() {
                    dirs.insert(d.to_path_buf());
                }
            }
        }
        for ev in events {
            if ev.need_rescan() {
                self.rescan(&self.root.clone(), false);
                self.forget_missing();
                continue;
            }
            let paths = ev.event.paths.clone();
            match ev.event.kind {
                EventKind::Access(_) => {}
                EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if paths.len() == 2 => {
                    self.gone(&paths[0]);
                    self.touched(&paths[1]);
                }
                EventKind::Modify(ModifyKind::Name(RenameMode::From)) | EventKind::Remove(_) => {
                    for p in &paths {
                        self.gone(p);
                    }
                }
                _ => {
                    for p in &paths {
                        if p.exists() {
                            self.touched(p)
                        } else {
                            self.gone(p)
                        }
                    }
                }
            }
        }
        // The debouncer folds a rename of a file whose events were still queued into a plain
        // create of the new name, so the old name is never reported: look for inputs that
        // vanished from every folder something happened in.
        for d in dirs {
            self.reconcile(&d);
        }
    }

    /// Handles as deleted every input recorded under `dir` whose entry directly in `dir` (the
    /// file itself, or the sub-folder holding it) no longer exists.
    fn reconcile(&mut self, dir: &Path) {
        if self.ignored_parent(dir) && dir != self.root {
            return;
        }
        let Ok(rel) = dir.strip_prefix(&self.root) else {
            return;
        };
        let key = cache_key(rel);
        let skip = if key.is_empty() { 0 } else { key.len() + 1 };
        let children: std::collections::BTreeSet<String> = self
            .entries_under(&key)
            .into_iter()
            .map(|(k, _)| k)
            .filter(|k| k.len() > skip)
            .map(|k| k[skip..].split('/').next().unwrap_or_default().to_string())
            .collect();
        for c in children {
            let p = dir.join(&c);
            if !p.exists() {
                self.gone(&p);
            }
        }
    }

    /// Marks every clip file under `dir` pending (`now`: due at once, for the initial scan);
    /// reports the special files named like clips (never opened).
    fn rescan(&mut self, dir: &Path, now: bool) {
        let found = crate::scan::scan_with(
            dir,
            &super::ScanOptions {
                cancel: Some(self.cancel.clone()),
                other_filesystems: self.opts.other_filesystems,
                ..Default::default()
            },
        );
        if found.cancelled {
            return;
        }
        for f in found.files {
            if !self.ignored(&f.path) {
                self.mark(&f.path, now);
            }
        }
        for s in found.special {
            if s.clip_named && !self.ignored(&s.path) {
                self.special_file(&s);
            }
        }
    }

    /// A FIFO, device or socket named like a clip: reported as failed, never opened (reading a
    /// FIFO would block the watch).
    fn special_file(&mut self, special: &super::SpecialFile) {
        self.pending.remove(&special.path);
        if !self.reported_special.insert(special.path.clone()) {
            return;
        }
        let message = special.message();
        let row = ClipReport {
            input: special.path.display().to_string(),
            clip: clip_stem(&special.path),
            error: Some(message.clone()),
            failure: Some(crate::report::Failure::Unreadable),
            ..Default::default()
        };
        self.emit(
            special.path.clone(),
            WatchEventKind::Failed(message),
            vec![],
            vec![row],
        );
    }

    fn mark(&mut self, path: &Path, now: bool) {
        let due = if now {
            Instant::now()
        } else {
            Instant::now() + self.opts.settle
        };
        let sig = signature(path);
        let e = self.pending.entry(path.to_path_buf()).or_insert(Pending {
            sig,
            due,
            attempts: 0,
            unreported: false,
        });
        e.sig = sig;
        e.due = e.due.max(due);
    }

    fn touched(&mut self, path: &Path) {
        if self.ignored(path) {
            return;
        }
        if self.settings_file_changed(path) {
            return;
        }
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        let is_clip = clipforge_anim::formats::ClipFormat::from_path(path).is_some();
        if meta.is_dir() {
            // A new (or moved-in) folder: inotify may have missed files created right after it.
            self.rescan(path, false);
        } else if !meta.is_file() {
            if is_clip {
                self.special_file(&super::SpecialFile {
                    path: path.to_path_buf(),
                    kind: clipforge_base::fsio::file_kind(&meta.file_type()),
                    clip_named: true,
                });
            }
        } else if is_clip {
            self.reported_special.remove(path);
            self.mark(path, false);
        } else {
            // The external buffer of a text glTF beside it: recompress the glTF files naming it.
            let gltfs: Vec<PathBuf> = path
                .parent()
                .and_then(|d| std::fs::read_dir(d).ok())
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|g| {
                    g.extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("gltf"))
                        && read_input(g).is_ok_and(|c| {
                            super::cache::gltf_external_buffers(g, &c)
                                .iter()
                                .any(|b| b == path)
                        })
                })
                .collect();
            for g in gltfs {
                if !self.ignored(&g) {
                    self.mark(&g, false);
                }
            }
        }
    }

    /// Cache entries made from this watch's input root (never those of another root sharing
    /// the output folder).
    fn entries_under(&self, key: &str) -> Vec<(String, super::cache::CacheEntry)> {
        let root = self.root.to_string_lossy();
        self.cache
            .entries_under(key)
            .into_iter()
            .filter(|(_, e)| e.input_root == root)
            .collect()
    }

    /// Removes and returns [`Self::entries_under`].
    fn take_under(&self, key: &str) -> Vec<(String, super::cache::CacheEntry)> {
        let entries = self.entries_under(key);
        for (k, _) in &entries {
            self.cache.remove(k);
        }
        entries
    }

    /// Inputs whose cache entry or pending entry remains but which no longer exist (deleted
    /// while the watcher was not running, or while events were lost).
    fn forget_missing(&mut self) {
        self.pending.retain(|p, _| p.exists());
        for (k, _) in self.entries_under("") {
            if !self.root.join(&k).exists()
                && let Some(e) = self.cache.remove(&k)
            {
                self.drop_outputs(&k, e);
            }
        }
    }

    fn drop_outputs(&self, key: &str, entry: super::cache::CacheEntry) {
        let out = &self.opts.batch.output_root;
        let mut removed = Vec::new();
        for o in &entry.outputs {
            let p = out.join(&o.path);
            if std::fs::remove_file(&p).is_ok() {
                removed.push(p);
            }
        }
        self.emit(
            self.root.join(key),
            WatchEventKind::Removed,
            removed,
            vec![],
        );
    }

    /// `path` was deleted or renamed away: delete the outputs of every input at or under it.
    fn gone(&mut self, path: &Path) {
        if path.exists() {
            self.touched(path);
            return;
        }
        if self.ignored_parent(path) || self.settings_file_changed(path) {
            return;
        }
        self.pending.retain(|p, _| !p.starts_with(path));
        self.reported_special.retain(|p| !p.starts_with(path));
        self.failed.retain(|p| !p.starts_with(path));
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return;
        };
        let key = cache_key(rel);
        if key.is_empty() {
            return;
        }
        let entries = self.take_under(&key);
        if entries.is_empty() {
            // Not in the cache (e.g. the cache was deleted): remove the output its name gives.
            if clipforge_anim::formats::ClipFormat::from_path(path).is_some() {
                let p = clip_output_path(
                    &self.opts.batch.output_root.join(output_base(rel, false)),
                    0,
                    1,
                    "",
                );
                if std::fs::remove_file(&p).is_ok() {
                    self.emit(path.to_path_buf(), WatchEventKind::Removed, vec![p], vec![]);
                }
            }
            return;
        }
        for (k, e) in entries {
            self.drop_outputs(&k, e);
        }
    }

    fn ignored_parent(&self, path: &Path) -> bool {
        path.starts_with(&self.opts.batch.output_root)
            || super::is_temp_file(path)
            || !path.starts_with(&self.root)
    }

    fn process_due(&mut self, pool: Option<&rayon::ThreadPool>) {
        let now = Instant::now();
        let due: Vec<PathBuf> = self
            .pending
            .iter()
            .filter(|(_, p)| p.due <= now)
            .map(|(k, _)| k.clone())
            .collect();
        let mut ready: Vec<(PathBuf, Option<Sig>, u32, bool)> = Vec::new();
        for path in due {
            let cur = signature(&path);
            let Some(p) = self.pending.get_mut(&path) else {
                continue;
            };
            if cur.is_none() {
                // Vanished (its removal event deals with the outputs).
                self.pending.remove(&path);
                continue;
            }
            if p.sig != cur {
                // Still changing: wait again, and a later import failure starts a fresh count.
                p.sig = cur;
                p.due = now + self.opts.settle;
                p.attempts = 0;
                continue;
            }
            let (attempts, unreported) = (p.attempts, p.unreported);
            self.pending.remove(&path);
            ready.push((path, cur, attempts, unreported));
        }
        if ready.is_empty() {
            return;
        }
        let progress = Progress::default();
        let work = |(path, _, _, _): &(PathBuf, Option<Sig>, u32, bool)| {
            let file = ClipFile::new(&self.root, path)?;
            let base = output_base_on_disk(&file);
            let resolved = match self.resolver.resolve(&self.root, path, file.format) {
                Ok(r) => r,
                Err(e) => {
                    return Some(FileOutcome {
                        rows: vec![crate::job::settings_unusable_row(&file, &e)],
                        import_failed: false,
                        outputs: Vec::new(),
                    });
                }
            };
            let skey = resolved.settings_key();
            let job = FileJob {
                file: &file,
                base,
                options: &self.opts.batch,
                settings_key: &skey,
                resolved: &resolved,
                cache: &self.cache,
                cancel: &self.cancel,
                progress: &progress,
            };
            Some(process_file(&job))
        };
        let outcomes: Vec<Option<FileOutcome>> = match pool {
            Some(pool) => pool.install(|| {
                use rayon::prelude::*;
                ready.par_iter().map(work).collect()
            }),
            None => ready.iter().map(work).collect(),
        };
        for ((path, sig, attempts, unreported), outcome) in ready.into_iter().zip(outcomes) {
            let Some(o) = outcome else { continue };
            if o.rows.iter().any(|r| r.cancelled) {
                continue;
            }
            if let Some(hook) = &self.opts.after_process_hook {
                (hook.0)(&path);
            }
            let now_sig = signature(&path);
            if now_sig.is_none() {
                continue;
            }
            if now_sig != sig {
                // Changed while we read it: do it again once it settles. If this pass compressed
                // it (outputs and skip-cache entry already written for the bytes it read), the next
                // pass may well be a skip-cache hit: remember that it was never reported.
                let compressed = o.rows.iter().any(|r| !r.skipped && r.error.is_none());
                self.pending.insert(
                    path,
                    Pending {
                        sig: now_sig,
                        due: Instant::now() + self.opts.settle,
                        attempts: 0,
                        unreported: unreported || compressed,
                    },
                );
                continue;
            }
            if o.import_failed && attempts < self.opts.retries {
                self.pending.insert(
                    path,
                    Pending {
                        sig: now_sig,
                        due: Instant::now() + self.opts.retry_delay,
                        attempts: attempts + 1,
                        unreported,
                    },
                );
                continue;
            }
            let out = &self.opts.batch.output_root;
            let outputs: Vec<PathBuf> = o.outputs.iter().map(|p| out.join(p)).collect();
            let mut rows = o.rows;
            let message_of = |status| {
                rows.iter()
                    .find(|r| r.status() == status)
                    .map(|r| r.error.clone().unwrap_or_default())
            };
            let kind = if let Some(e) = message_of(ClipStatus::Failed) {
                WatchEventKind::Failed(e)
            } else if let Some(e) = message_of(ClipStatus::BelowPrecision) {
                WatchEventKind::BelowPrecision(e)
            } else if rows.iter().all(|r| r.skipped) && !unreported {
                WatchEventKind::Skipped
            } else {
                // Either compressed now, or up to date thanks to an earlier pass of this watch
                // that compressed these very bytes but was never reported.
                for r in &mut rows {
                    r.skipped = false;
                }
                WatchEventKind::Compressed
            };
            let retracts_failure = self.failed.remove(&path);
            if matches!(kind, WatchEventKind::Failed(_)) {
                self.failed.insert(path.clone());
            }
            let _ = self.tx.send(WatchEvent {
                time: SystemTime::now(),
                path,
                kind,
                outputs,
                reports: rows,
                retracts_failure,
            });
        }
    }
}
