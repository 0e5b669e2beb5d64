//! Batch jobs shared by the CLI and the app: scanning folders for clips, compressing them in
//! parallel with progress and cancellation, the skip cache, folder watching and the JSON/CSV reports.
//!
//! The behaviour (output naming, cache, deleted inputs) is documented in `docs/PIPELINE.md`.

// Parallel arrays indexed by position read best as index loops.
#![allow(clippy::needless_range_loop)]

pub mod ab;
pub mod cache;

pub mod clip_detail;
pub mod folder_settings;
pub mod interrupt;
pub mod mesh;
pub mod output_lock;

pub mod pipelines;
pub mod report;
pub mod scalar;
pub mod scan;
pub mod watch;

pub use scan::{
    LinkSkip, ScanOptions, ScanResult, SkippedLink, SpecialFile, scan, scan_with, scan_with_special,
};

use cache::{CacheEntry, SkipCache};
use clipforge_anim::formats::{self, ClipFormat};
use clipforge_anim::{CompressionSettings, RawClip};
use report::{BatchReport, ClipReport};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// File name of the skip cache, kept in the output root.
pub const CACHE_FILE_NAME: &str = ".clipforge-cache.json";

/// Extension of compressed clips.
pub const OUTPUT_EXTENSION: &str = "cfa";

/// One clip file found by a scan (a glTF file with several animations is still one entry).
#[derive(Clone, Debug, PartialEq)]
pub struct ClipFile {
    pub path: PathBuf,
    /// Path relative to the scanned root (mirrored under the output folder).
    pub relative: PathBuf,
    pub format: clipforge_anim::formats::ClipFormat,
    pub size_bytes: u64,
}

impl ClipFile {
    /// Describes one file; `root` is the folder its output path is mirrored from
    /// (a file root: the file itself, mirrored as its bare name).
    pub fn new(root: &Path, path: &Path) -> Option<Self> {
        let format = ClipFormat::from_path(path)?;
        let relative = match path.strip_prefix(root) {
            Ok(r) if !r.as_os_str().is_empty() => r.to_path_buf(),
            _ => PathBuf::from(path.file_name()?),
        };
        let size_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        Some(Self {
            path: path.to_path_buf(),
            relative,
            format,
            size_bytes,
        })
    }
}

/// Reads a clip input (or a `.cfa`) as a regular file checked on its handle, at most the per-clip
/// memory budget ([`clipforge_anim::limits::max_memory_bytes`]) in size: a clip file larger than the
/// budget could not be imported within it anyway. The error names the file; `retry` is false
/// when retrying cannot help (not a regular file).
pub fn read_input(path: &Path) -> Result<Vec<u8>, ReadError> {
    use clipforge_anim::limits::{OVER_BUDGET, format_bytes, max_memory_bytes};
    let budget = max_memory_bytes();
    clipforge_base::fsio::read_regular(path, budget).map_err(|e| {
        let len = std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        let over_budget = len.is_some_and(|l| l > budget);
        let message = if over_budget {
            format!(
                "{}: cannot read: the file ({}) is {OVER_BUDGET} of {} for one clip \
                 (see --max-memory)",
                path.display(),
                format_bytes(len.unwrap_or_default()),
                format_bytes(budget)
            )
        } else {
            format!("{}: cannot read: {e}", path.display())
        };
        ReadError {
            message,
            retry: e.kind() != std::io::ErrorKind::InvalidInput && !over_budget,
            limit: over_budget.then_some(Limit::Memory),
        }
    })
}

/// Why [`read_input`] failed.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadError {
    /// Names the file and the problem.
    pub message: String,
    /// The file may still be being written: reading it again later may succeed.
    pub retry: bool,
    /// The resource limit that refused it ([`ClipReport::limit`]).
    pub limit: Option<Limit>,
}

/// Which limit refused a clip: a report's `limit` is its [`Limit::as_str`], taken from the
/// error's variant ([`ReadError::limit`], [`clipforge_anim::formats::ImportError::limit`],
/// [`clipforge_anim::CompressError::limit`]).
pub use clipforge_anim::limits::Limit;

/// A report's `limit` field of a refusal.
fn limit_field(limit: Option<Limit>) -> Option<String> {
    limit.map(|l| l.as_str().to_string())
}

/// Cancellation and progress live in [`clipforge_base::task`], shared with the header profiler.
pub use clipforge_base::task::{CancelToken, ClipCounters};

/// Live counters a UI or the CLI reads while a batch runs (see [`ClipCounters`]).
pub type Progress = clipforge_base::task::Progress<ClipCounters>;

/// Counting a finished row into the batch's counters (a trait because [`ClipCounters`] lives in
/// `clipforge-base`, which knows nothing of reports).
pub(crate) trait RecordRow {
    fn record(&self, row: &ClipReport);
}

impl RecordRow for ClipCounters {
    fn record(&self, row: &ClipReport) {
        if row.skipped {
            self.skipped_clips.fetch_add(1, Ordering::Relaxed);
        } else if row.error.is_some() && !row.cancelled {
            self.failed_clips.fetch_add(1, Ordering::Relaxed);
        }
        if row.error.is_none() {
            self.raw_bytes_done
                .fetch_add(row.raw_bytes, Ordering::Relaxed);
        }
        self.done_clips.fetch_add(1, Ordering::Relaxed);
    }
}

/// What a batch does.
#[derive(Clone, Debug)]
pub struct BatchOptions {
    pub settings: CompressionSettings,
    pub output_root: PathBuf,
    /// Worker threads; 0 = all cores.
    pub jobs: usize,
    /// Skip clips whose input content and settings match the skip cache.
    pub use_skip_cache: bool,
}

// ---------------------------------------------------------------------------------------------
// Background priority

/// Lowers the calling thread's CPU priority (nice +10), so an interactive thread on the same
/// machine (the app's UI) runs first when both want a core. Threads created afterwards from this
/// one (the batch's rayon pool) inherit it: on Linux the nice value is per thread and inherited at
/// creation. Best effort: does nothing where unsupported. std has no API for it, hence libc.
pub fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on the calling thread's own id; no memory is passed.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

// ---------------------------------------------------------------------------------------------
// Atomic writes: in [`clipforge_base::fsio`], shared with the header profiler's cache.

pub use clipforge_base::fsio::{is_temp_file, write_atomic};

// ---------------------------------------------------------------------------------------------
// Output naming

/// The input file name without its clip extension: `walk.bvh` → `walk`, `x.acl.sjson` → `x`.
pub fn clip_stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match clipforge_anim::formats::strip_clip_extension(&name) {
        Some(stem) if !stem.is_empty() => stem.to_string(),
        _ => name,
    }
}

/// Makes an animation name safe as part of a file name: ASCII letters, digits, `-` and `_` kept,
/// anything else becomes `_`, at most 64 characters, `anim` when nothing is left.
pub fn sanitize_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    while s.ends_with('_') && s.len() > 1 {
        s.pop();
    }
    if s.is_empty() || s.chars().all(|c| c == '_') {
        s = "anim".into();
    }
    s
}

/// Output path base (without extension) for an input, relative to the output root: the relative
/// input path with the clip extension removed, or with it kept (`walk.bvh` → `walk.bvh`) when
/// `keep_extension` is set, which the batch does when two inputs of one folder share a stem.
pub fn output_base(relative: &Path, keep_extension: bool) -> PathBuf {
    let stem = if keep_extension {
        relative
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        clip_stem(relative)
    };
    match relative.parent() {
        Some(p) => p.join(stem),
        None => PathBuf::from(stem),
    }
}

/// File name of clip `index` out of `count` clips of one input: `base.cfa` for a single clip,
/// `base.<index>_<sanitised name>.cfa` otherwise.
pub fn clip_output_path(base: &Path, index: usize, count: usize, clip_name: &str) -> PathBuf {
    let file = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = if count == 1 {
        format!("{file}.{OUTPUT_EXTENSION}")
    } else {
        format!(
            "{file}.{index}_{}.{OUTPUT_EXTENSION}",
            sanitize_name(clip_name)
        )
    };
    base.with_file_name(name)
}

/// Output bases (relative to the output root) of a set of files, with the stem collision rule
/// applied: inputs of one folder that share a stem (`walk.bvh`, `walk.glb`) keep their extension.
pub fn plan_outputs(files: &[ClipFile]) -> Vec<PathBuf> {
    let mut count: HashMap<PathBuf, usize> = HashMap::new();
    for f in files {
        *count.entry(output_base(&f.relative, false)).or_default() += 1;
    }
    files
        .iter()
        .map(|f| {
            let b = output_base(&f.relative, false);
            if count[&b] > 1 {
                output_base(&f.relative, true)
            } else {
                b
            }
        })
        .collect()
}

/// Output base for one file judged against what is on disk next to it (used by the watcher,
/// which sees files one by one): the extension is kept when another supported clip file of the
/// same folder has the same stem.
pub fn output_base_on_disk(file: &ClipFile) -> PathBuf {
    let stem = clip_stem(&file.path);
    let clash = file
        .path
        .parent()
        .and_then(|d| std::fs::read_dir(d).ok())
        .map(|rd| {
            rd.filter_map(Result::ok).any(|e| {
                let p = e.path();
                p != file.path && ClipFormat::from_path(&p).is_some() && clip_stem(&p) == stem
            })
        })
        .unwrap_or(false);
    output_base(&file.relative, clash)
}

// ---------------------------------------------------------------------------------------------
// Per-file work

/// A fingerprint of the codec: crate version plus a hash of what the compressor makes of a small
/// fixed clip. Any codec change that alters its output invalidates the skip cache.
pub fn codec_fingerprint() -> &'static str {
    static FP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FP.get_or_init(|| {
        let clip = clipforge_anim::generate::generate(&clipforge_anim::generate::GenerateOptions {
            name: "fingerprint".into(),
            num_samples: 16,
            sample_rate: 30.0,
            seed: 7,
            with_scale: true,
        });
        let h = std::panic::catch_unwind(|| {
            clipforge_anim::compress(&clip, &CompressionSettings::default())
                .map(|c| cache::content_hash(&c.bytes))
                .unwrap_or_else(|e| format!("error:{e}"))
        })
        .unwrap_or_else(|_| "panic".into());
        format!("{}+{}", env!("CARGO_PKG_VERSION"), h)
    })
}

/// The key of a settings value in the skip cache.
pub fn settings_key(settings: &CompressionSettings) -> String {
    format!(
        "error_threshold={:?};shell_distance={:?};codec={}",
        settings.error_threshold,
        settings.shell_distance,
        codec_fingerprint()
    )
}

/// What processing one input file produced.
pub(crate) struct FileOutcome {
    pub rows: Vec<ClipReport>,
    /// The importer refused the file (maybe still being written: the watcher retries these).
    pub import_failed: bool,
    /// Outputs written or kept, relative to the output root.
    pub outputs: Vec<PathBuf>,
}

pub(crate) struct FileJob<'a> {
    pub file: &'a ClipFile,
    /// Output base relative to the output root (see [`output_base`]).
    pub base: PathBuf,
    pub options: &'a BatchOptions,
    pub settings_key: &'a str,
    /// The settings that apply to this file (folder settings and explicit options merged).
    pub resolved: &'a folder_settings::Resolved,
    pub cache: &'a SkipCache,
    pub cancel: &'a CancelToken,
    pub progress: &'a Progress,
}

pub(crate) fn row_for(file: &ClipFile, clip: &str) -> ClipReport {
    ClipReport {
        input: file.path.display().to_string(),
        clip: clip.to_string(),
        format: file.format.label().to_string(),
        ..Default::default()
    }
}

fn cancelled_row(file: &ClipFile, clip: &str) -> ClipReport {
    ClipReport {
        error: Some(format!(
            "{}: cancelled before it was compressed",
            file.path.display()
        )),
        cancelled: true,
        ..row_for(file, clip)
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

/// Processes one input file, never panicking: a panic becomes that file's error row.
pub(crate) fn process_file(job: &FileJob) -> FileOutcome {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| process_file_inner(job))) {
        Ok(o) => o,
        Err(p) => {
            let row = ClipReport {
                error: Some(format!(
                    "{}: internal error while processing: {}",
                    job.file.path.display(),
                    panic_message(&*p)
                )),
                ..row_for(job.file, &clip_stem(&job.file.path))
            };
            job.progress.record(&row);
            FileOutcome {
                rows: vec![row],
                import_failed: false,
                outputs: Vec::new(),
            }
        }
    }
}

fn process_file_inner(job: &FileJob) -> FileOutcome {
    let file = job.file;
    let stem = clip_stem(&file.path);
    let out_root = &job.options.output_root;
    let single_error = |msg: String, import_failed: bool| {
        let row = ClipReport {
            error: Some(msg),
            ..row_for(file, &stem)
        };
        job.progress.record(&row);
        FileOutcome {
            rows: vec![row],
            import_failed,
            outputs: Vec::new(),
        }
    };
    if job.cancel.is_cancelled() {
        let row = cancelled_row(file, &stem);
        job.progress.record(&row);
        return FileOutcome {
            rows: vec![row],
            import_failed: false,
            outputs: Vec::new(),
        };
    }
    let content = match read_input(&file.path) {
        Ok(c) => c,
        Err(e) => {
            let row = ClipReport {
                error: Some(e.message),
                limit: limit_field(e.limit),
                ..row_for(file, &stem)
            };
            job.progress.record(&row);
            return FileOutcome {
                rows: vec![row],
                import_failed: e.retry,
                outputs: Vec::new(),
            };
        }
    };
    let hash = cache::input_hash(&file.path, &content);
    let key = cache::cache_key(&file.relative);
    let previous = job.cache.get(&key);

    // Skip cache: same content, same settings and codec, every output still there and unchanged.
    if job.options.use_skip_cache
        && let Some(entry) = &previous
        && entry.is_up_to_date(&hash, job.settings_key, &job.base, out_root)
    {
        let rows = entry.skipped_rows(&file.path);
        let extra = rows.len().saturating_sub(1) as u64;
        job.progress.total_clips.fetch_add(extra, Ordering::Relaxed);
        for r in &rows {
            job.progress.record(r);
        }
        let outputs = entry
            .outputs
            .iter()
            .map(|o| PathBuf::from(&o.path))
            .collect();
        return FileOutcome {
            rows,
            import_failed: false,
            outputs,
        };
    }

    // ACL scalar track lists compress to a `.cfs` of their own (see `scalar`).
    if file.format == ClipFormat::AclSjson
        && let Some(outcome) = scalar::process_scalar_list(job, &content, &hash, previous.as_ref())
    {
        return outcome;
    }

    // Parse the very bytes that were hashed (one read, and the cache entry matches what was
    // compressed); a `.gltf` may reference external buffers, which only the path-based loader finds.
    let is_text_gltf = file
        .path
        .to_string_lossy()
        .to_ascii_lowercase()
        .ends_with(".gltf");
    let import = &job.resolved.import;
    let loaded = if is_text_gltf {
        formats::load_clips_with_options(&file.path, import)
    } else {
        formats::load_clips_from_bytes_with_options(&content, &file.path, import)
    };
    drop(content);
    let (clips, warnings) = match loaded {
        Ok(c) => c,
        Err(e) => {
            let message = e.to_string();
            if let Some(limit) = e.limit() {
                // Refused for a budget: the same bytes will be refused again, no retry.
                let row = ClipReport {
                    error: Some(message),
                    limit: limit_field(Some(limit)),
                    ..row_for(file, &stem)
                };
                job.progress.record(&row);
                return FileOutcome {
                    rows: vec![row],
                    import_failed: false,
                    outputs: Vec::new(),
                };
            }
            return single_error(message, true);
        }
    };
    let warnings: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    if clips.is_empty() {
        return single_error(
            format!("{}: the file holds no animation clip", file.path.display()),
            false,
        );
    }
    let count = clips.len();
    job.progress
        .total_clips
        .fetch_add(count as u64 - 1, Ordering::Relaxed);

    let mut rows = Vec::with_capacity(count);
    let mut outputs = Vec::with_capacity(count);
    let mut written = Vec::with_capacity(count);
    for (index, clip) in clips.into_iter().enumerate() {
        let name = if clip.name.is_empty() {
            stem.clone()
        } else {
            clip.name.clone()
        };
        let rel_out = clip_output_path(&job.base, index, count, &name);
        let mut row = if job.cancel.is_cancelled() {
            cancelled_row(file, &name)
        } else {
            compress_one(job, clip, &name, &rel_out)
        };
        row.warnings.splice(0..0, warnings.iter().cloned());
        row.warnings.extend(job.resolved.warnings.iter().cloned());
        job.progress.record(&row);
        if row.error.is_none() {
            written.push(cache::CachedOutput {
                path: cache::cache_key(&rel_out),
                // Exactly the bytes `write_atomic` wrote.
                file_bytes: row.file_bytes,
            });
            outputs.push(rel_out);
        }
        rows.push(row);
    }

    let input_root = input_root_of(file);

    // Outputs the previous run made for this input that this run did not remake (a renamed or
    // removed glTF animation) are stale: delete them.
    if let Some(prev) = &previous {
        for o in &prev.outputs {
            if !written.iter().any(|w| w.path == o.path) {
                let _ = std::fs::remove_file(out_root.join(&o.path));
            }
        }
    }

    if rows.iter().all(|r| r.error.is_none()) {
        job.cache.insert(
            key,
            CacheEntry {
                input_hash: hash,
                settings_key: job.settings_key.to_string(),
                base: cache::cache_key(&job.base),
                outputs: written,
                reports: rows.clone(),
                input_root,
            },
        );
    } else if rows.iter().any(|r| r.error.is_some() && !r.cancelled)
        || !written.is_empty()
        || previous.is_some()
    {
        // Failed, or cancelled part-way: remember the outputs that exist (tracked for deletion),
        // but never as up to date.
        job.cache.insert(
            key,
            CacheEntry {
                input_hash: String::new(),
                settings_key: String::new(),
                base: cache::cache_key(&job.base),
                outputs: written,
                reports: Vec::new(),
                input_root,
            },
        );
    }
    FileOutcome {
        rows,
        import_failed: false,
        outputs,
    }
}

/// The canonical root folder `file.relative` is relative to.
pub(crate) fn input_root_of(file: &ClipFile) -> String {
    let n = file.relative.components().count();
    file.path
        .ancestors()
        .nth(n)
        .and_then(|r| r.canonicalize().ok())
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Compresses and writes one clip; the row says what happened. The error figures are the
/// compressor's own float64 check of the very bytes written (decoded, measured against `clip`).
fn compress_one(job: &FileJob, clip: RawClip, name: &str, rel_out: &Path) -> ClipReport {
    let file = job.file;
    let settings = &job.resolved.compression;
    // The compressor works in the clip's units; the report is in cm.
    let k = job.resolved.cm_per_unit();
    let out_path = job.options.output_root.join(rel_out);
    let mut row = ClipReport {
        output: Some(out_path.display().to_string()),
        bones: clip.num_bones(),
        samples: clip.num_samples,
        sample_rate: clip.sample_rate,
        duration_s: clip.duration(),
        raw_bytes: clip.raw_size_bytes() as u64,
        settings: Some(job.resolved.clip.clone()),
        ..row_for(file, name)
    };
    let fail = |mut row: ClipReport, msg: String| {
        row.output = None;
        row.error = Some(msg);
        row
    };
    let t0 = Instant::now();
    let compressed = clipforge_anim::compress(&clip, settings);
    row.compress_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let compressed = match compressed {
        Ok(c) => c,
        Err(e) => {
            let message = format!("{} (clip '{name}'): {e}", file.path.display());
            row.limit = limit_field(e.limit());
            return fail(row, message);
        }
    };
    if job.cancel.is_cancelled() {
        return ClipReport {
            output: None,
            ..cancelled_row(file, name)
        };
    }
    // What made the file, for `clipforge inspect` (after the runtime data: sizes compared
    // with ACL's use `runtime_bytes`, which it leaves alone).
    let mut bytes = compressed.bytes;
    if let Err(e) =
        clipforge_anim::runtime::metadata::append(&mut bytes, &job.resolved.clip.record())
    {
        return fail(row, format!("{}: {e}", out_path.display()));
    }
    if let Err(e) = write_atomic(&out_path, &bytes) {
        return fail(row, format!("{}: cannot write: {e}", out_path.display()));
    }
    let stats = compressed.error;
    let s = &compressed.stats;
    row.compressed_bytes = compressed.runtime_bytes as u64;
    row.file_bytes = bytes.len() as u64;
    row.ratio = if row.compressed_bytes > 0 {
        row.raw_bytes as f64 / row.compressed_bytes as f64
    } else {
        0.0
    };
    row.max_error_cm = stats.max * k;
    row.max_error_at_samples_cm = stats.max_at_samples * k;
    row.mean_error_cm = stats.mean * k;
    if clip.num_bones() > 0 && clip.num_samples > 0 {
        row.worst_bone = clip.skeleton.names.get(stats.worst_bone).cloned();
        row.worst_sample = Some(stats.worst_sample);
    }
    row.bit_rate_histogram = s.bit_rate_histogram.clone();
    row.default_subtracks = s.default_subtracks;
    row.constant_subtracks = s.constant_subtracks;
    row.animated_subtracks = s.animated_subtracks;
    row.segments = s.segments;
    row.looping = s.looping;
    row.per_bone_max_error_cm = stats.per_bone_max.iter().map(|e| e * k).collect();
    row.per_bone_threshold_cm = stats
        .per_bone_threshold
        .iter()
        .map(|&t| (t as f64 * k) as f32)
        .collect();
    row.per_sample_max_error_cm = stats.per_sample_max.iter().map(|e| e * k).collect();
    if mesh::has_meshes(file) {
        // The decoder at the raw sample times, as the clip detail samples it.
        let lossy = clipforge_anim::ClipReader::new(&bytes)
            .ok()
            .and_then(|r| clip_detail::resample(&clip, &r));
        mesh::measure_row(&mut row, file, &clip, lossy, k);
    }
    row
}

// ---------------------------------------------------------------------------------------------
// Batches

/// Compresses every clip of `files` (from [`scan`] of `input_root`) into `options.output_root`,
/// mirroring the tree, one `.cfa` per clip. Failures are reported per clip; the batch goes on.
pub fn run_batch(
    files: &[ClipFile],
    options: &BatchOptions,
    progress: &Progress,
    cancel: &CancelToken,
) -> BatchReport {
    run_batch_with(files, options, progress, cancel, &|_| {})
}

/// The results of the last batch that are still valid, without compressing anything: for each
/// file, the skip cache's rows (`skipped: true`) when its content, the settings and its outputs
/// are unchanged, else `None`. The app shows them when it reopens a folder. Reads every input.
pub fn cached_results(
    files: &[ClipFile],
    options: &BatchOptions,
    cancel: &CancelToken,
) -> Vec<Option<Vec<ClipReport>>> {
    use rayon::prelude::*;
    let cache = SkipCache::load(&options.output_root);
    if cache.is_empty() {
        return vec![None; files.len()];
    }
    let resolver = folder_settings::SettingsResolver::new(
        options.settings.clone(),
        folder_settings::Overrides::default(),
    );
    let bases = plan_outputs(files);
    let lookup = || -> Vec<Option<Vec<ClipReport>>> {
        files
            .par_iter()
            .zip(bases.par_iter())
            .map(|(file, base)| {
                if cancel.is_cancelled() {
                    return None;
                }
                let entry = cache.get(&cache::cache_key(&file.relative))?;
                let skey = resolver
                    .resolve(
                        &folder_settings::root_of(&file.path, &file.relative),
                        &file.path,
                        file.format,
                    )
                    .ok()?
                    .settings_key();
                // Settings, output base and outputs first: the input is read only if they match.
                if !entry.matches_run(&skey, base, &options.output_root) {
                    return None;
                }
                let content = read_input(&file.path).ok()?;
                let hash = cache::input_hash(&file.path, &content);
                (entry.input_hash == hash).then(|| entry.skipped_rows(&file.path))
            })
            .collect()
    };
    // Its own pool (like the batch), so its workers are created by, and inherit the priority
    // of, the calling thread.
    match rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs)
        .build()
    {
        Ok(pool) => pool.install(lookup),
        Err(_) => lookup(),
    }
}

/// [`run_batch`] with a callback called (from worker threads) for every finished row, in
/// completion order; the CLI prints a progress line with it.
pub fn run_batch_with(
    files: &[ClipFile],
    options: &BatchOptions,
    progress: &Progress,
    cancel: &CancelToken,
    on_row: &(dyn Fn(&ClipReport) + Sync),
) -> BatchReport {
    run_batch_configured(
        files,
        options,
        &folder_settings::Overrides::default(),
        progress,
        cancel,
        on_row,
    )
}

/// [`run_batch_with`] with explicit options (`overrides`, from a command line or a pipeline)
/// that win over the folders' `clipforge.toml` files; `options.settings` are the defaults used
/// when neither says. Exclude patterns are not applied here (the caller filters `files`).
pub fn run_batch_configured(
    files: &[ClipFile],
    options: &BatchOptions,
    overrides: &folder_settings::Overrides,
    progress: &Progress,
    cancel: &CancelToken,
    on_row: &(dyn Fn(&ClipReport) + Sync),
) -> BatchReport {
    let resolver =
        folder_settings::SettingsResolver::new(options.settings.clone(), overrides.clone());
    let start = Instant::now();
    for p in interrupt::remove_stale_temp_files(&options.output_root) {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "clipforge: removed {} (a temporary file left by an interrupted run)",
            p.display()
        );
    }
    // The bar's unit and weights, known before the first file (see `ClipCounters`).
    progress
        .total_files
        .fetch_add(files.len() as u64, Ordering::Relaxed);
    progress
        .total_input_bytes
        .fetch_add(files.iter().map(|f| f.size_bytes).sum(), Ordering::Relaxed);
    progress
        .total_clips
        .fetch_add(files.len() as u64, Ordering::Relaxed);
    let cache = SkipCache::load(&options.output_root);
    let bases = plan_outputs(files);

    // Two inputs mapping to the same output (same relative path under two roots): the later one fails.
    let mut first_owner: HashMap<&Path, usize> = HashMap::new();

    let mut owner = Vec::with_capacity(files.len());
    for (i, b) in bases.iter().enumerate() {
        owner.push(*first_owner.entry(b.as_path()).or_insert(i));
    }

    // A panicking callback must not take the batch down with it.
    let on_row = |r: &ClipReport| {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| on_row(r)));
    };
    // A file counts as done before its rows are handed on, so their progress lines count it.
    let file_done = |file: &ClipFile| {
        progress.done_files.fetch_add(1, Ordering::Relaxed);
        progress
            .done_input_bytes
            .fetch_add(file.size_bytes, Ordering::Relaxed);
    };
    let work = |i: usize| -> Vec<ClipReport> {
        let file = &files[i];
        if owner[i] != i {
            let row = ClipReport {
                error: Some(format!(
                    "{}: its output {} would overwrite the output of {}",
                    file.path.display(),
                    options.output_root.join(&bases[i]).display(),
                    files[owner[i]].path.display()
                )),
                ..row_for(file, &clip_stem(&file.path))
            };
            progress.record(&row);
            file_done(file);
            on_row(&row);
            return vec![row];
        }
        let resolved = match resolver.resolve(
            &folder_settings::root_of(&file.path, &file.relative),
            &file.path,
            file.format,
        ) {
            Ok(r) => r,
            Err(e) => {
                let row = ClipReport {
                    error: Some(format!(
                        "{}: not compressed: the folder settings do not apply: {e}",
                        file.path.display()
                    )),
                    ..row_for(file, &clip_stem(&file.path))
                };
                progress.record(&row);
                file_done(file);
                on_row(&row);
                return vec![row];
            }
        };
        let skey = resolved.settings_key();
        let job = FileJob {
            file,
            base: bases[i].clone(),
            options,
            settings_key: &skey,
            resolved: &resolved,
            cache: &cache,
            cancel,
            progress,
        };
        let outcome = process_file(&job);
        file_done(file);
        for r in &outcome.rows {
            on_row(r);
        }
        outcome.rows
    };

    let run_all = || -> Vec<Vec<ClipReport>> {
        use rayon::prelude::*;
        (0..files.len()).into_par_iter().map(work).collect()
    };
    let per_file = match rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs)
        .build()
    {
        Ok(pool) => pool.install(run_all),
        Err(_) => (0..files.len()).map(work).collect(),
    };

    let clips: Vec<ClipReport> = per_file.into_iter().flatten().collect();
    if let Err(e) = cache.save(&options.output_root) {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "clipforge: could not save the skip cache in {}: {e}",
            options.output_root.display()
        );
    }
    let wall_ms = start.elapsed().as_secs_f64() * 1000.0;
    let totals = report::compute_totals(&clips, wall_ms);
    BatchReport {
        settings: options.settings.clone(),
        clips,
        totals,
    }
}
