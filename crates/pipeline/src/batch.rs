//! Running a batch: every file of a scan through the per-file steps on a worker pool (with the
//! output collision rule, folder settings, progress and cancellation), the skip cache's rows of a
//! folder without compressing ([`cached_results`]), and the background thread priority.

use crate::cache::{self, SkipCache};
use crate::input::{ClipFile, read_input};
use crate::job::{BatchOptions, FileJob, RecordRow, row_for};
use crate::naming::{clip_stem, plan_outputs};
use crate::process::process_file;
use crate::report::{self, BatchReport, ClipReport};
use crate::{CancelToken, Progress, folder_settings, interrupt};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

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

/// Compresses every clip of `files` (from [`scan`](crate::scan::scan) of `input_root`) into `options.output_root`,
/// mirroring the tree, one `.cfa` per clip. Failures are reported per clip; the batch goes on.
pub fn run_batch(
    files: &[ClipFile],
    options: &BatchOptions,
    progress: &Progress,
    cancel: &CancelToken,
) -> BatchReport {
    run_batch_with(files, options, progress, cancel, &|_| {})
}

/// The results of the last batch, without compressing anything: for each file, the skip cache's
/// rows (`skipped: true`) when its content and its outputs are unchanged and either the settings
/// are too (up to date) or the rows record the other settings they were made with by this codec
/// (the app compares those with what applies now and shows them stale, as before a restart),
/// else `None`. The app shows them when it reopens a folder. Reads every input.
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
                // Settings, output base and outputs first: the input is read only if they match
                // (or the rows record other settings: shown stale, see the doc above).
                if !entry.matches_run(&skey, base, &options.output_root)
                    && !entry.made_with_other_settings(&skey, base, &options.output_root)
                {
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
                failure: Some(crate::report::Failure::OutputClash),
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
                let row = crate::job::settings_unusable_row(file, &e);
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
        settings: overrides.applied_to(&options.settings),
        clips,
        totals,
    }
}
