//! The work on one input file: read it, skip it when the cache says it is up to date, import its
//! clips, compress and write each one, and record the outcome in the skip cache. Never panics
//! (a panic becomes the file's error row).

use crate::cache::{self, CacheEntry};
use crate::input::read_input;
use crate::job::{FileJob, FileOutcome, RecordRow, cancelled_row, input_root_of, row_for};
use crate::naming::{clip_output_path, clip_stem};
use crate::report::{ClipReport, ClipStatus, Failure, limit_field};
use crate::{clip_detail, mesh, scalar};
use clipforge_anim::RawClip;
use clipforge_anim::compress::{CompressError, PrecisionFloor};
use clipforge_anim::formats::{self, ClipFormat};
use clipforge_base::fsio::write_atomic;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

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
                failure: Some(Failure::Internal),
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

/// The steps of one file, in order; each step that ends the file's work returns its outcome.
fn process_file_inner(job: &FileJob) -> FileOutcome {
    let file = job.file;
    let stem = clip_stem(&file.path);
    if job.cancel.is_cancelled() {
        let row = cancelled_row(file, &stem);
        job.progress.record(&row);
        return one_row(row, false);
    }
    let content = match read_input(&file.path) {
        Ok(c) => c,
        Err(e) => {
            let row = ClipReport {
                error: Some(e.message),
                limit: limit_field(e.limit),
                failure: Some(Failure::or_limit(e.limit, Failure::Unreadable)),
                ..row_for(file, &stem)
            };
            job.progress.record(&row);
            return one_row(row, e.retry);
        }
    };
    let hash = cache::input_hash(&file.path, &content);
    let key = cache::cache_key(&file.relative);
    let previous = job.cache.get(&key);

    if let Some(outcome) = skip_if_up_to_date(job, previous.as_ref(), &hash) {
        return outcome;
    }

    // ACL scalar track lists compress to a `.cfs` of their own (see `scalar`).
    if file.format == ClipFormat::AclSjson
        && let Some(outcome) = scalar::process_scalar_list(job, &content, &hash, previous.as_ref())
    {
        return outcome;
    }

    let (clips, warnings) = match import_clips(job, content, &stem) {
        Ok(loaded) => loaded,
        Err(outcome) => return outcome,
    };
    let (rows, outputs, written) = compress_clips(job, clips, &warnings, &stem);
    remove_stale_outputs(job, previous.as_ref(), &written);
    record_in_cache(job, key, hash, &rows, written, previous.is_some());
    FileOutcome {
        rows,
        import_failed: false,
        outputs,
    }
}

/// The outcome of a file that ends in one row (an error, or cancelled before it began).
fn one_row(row: ClipReport, import_failed: bool) -> FileOutcome {
    FileOutcome {
        rows: vec![row],
        import_failed,
        outputs: Vec::new(),
    }
}

/// The file's error row, counted, as its whole outcome.
fn error_outcome(
    job: &FileJob,
    stem: &str,
    message: String,
    limit: Option<clipforge_anim::limits::Limit>,
    import_failed: bool,
) -> FileOutcome {
    let row = ClipReport {
        error: Some(message),
        limit: limit_field(limit),
        failure: Some(Failure::or_limit(limit, Failure::InvalidFile)),
        ..row_for(job.file, stem)
    };
    job.progress.record(&row);
    one_row(row, import_failed)
}

/// The skip cache's rows when the file needs nothing: same content, same settings and codec,
/// every output still there and unchanged.
fn skip_if_up_to_date(
    job: &FileJob,
    previous: Option<&CacheEntry>,
    hash: &str,
) -> Option<FileOutcome> {
    let entry = previous.filter(|e| {
        job.options.use_skip_cache
            && e.is_up_to_date(hash, job.settings_key, &job.base, &job.options.output_root)
    })?;
    let rows = entry.skipped_rows(&job.file.path);
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
    Some(FileOutcome {
        rows,
        import_failed: false,
        outputs,
    })
}

/// The file's clips and the importer's warnings, or the outcome of a file that cannot be
/// imported (retried by the watcher unless a budget refused it) or holds no clip.
fn import_clips(
    job: &FileJob,
    content: Vec<u8>,
    stem: &str,
) -> Result<(Vec<RawClip>, Vec<String>), FileOutcome> {
    let file = job.file;
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
            // Refused for a budget: the same bytes will be refused again, no retry.
            let limit = e.limit();
            return Err(error_outcome(job, stem, message, limit, limit.is_none()));
        }
    };
    if clips.is_empty() {
        return Err(error_outcome(
            job,
            stem,
            format!("{}: the file holds no animation clip", file.path.display()),
            None,
            false,
        ));
    }
    // "FILE[:LINE]: what", as the row's other warnings read (the importer's own text begins
    // "warning: ", which the CLI's warning lines and the app's detail already say).
    let warnings = warnings
        .iter()
        .map(|w| match w.line {
            Some(l) => format!("{}:{l}: {}", w.path.display(), w.message),
            None => format!("{}: {}", w.path.display(), w.message),
        })
        .collect();
    Ok((clips, warnings))
}

/// Compresses and writes each clip of the file: its rows (counted), the outputs written
/// (relative to the output root) and the same outputs as the cache records them.
fn compress_clips(
    job: &FileJob,
    clips: Vec<RawClip>,
    warnings: &[String],
    stem: &str,
) -> (Vec<ClipReport>, Vec<PathBuf>, Vec<cache::CachedOutput>) {
    let count = clips.len();
    job.progress
        .total_clips
        .fetch_add(count as u64 - 1, Ordering::Relaxed);

    let mut rows = Vec::with_capacity(count);
    let mut outputs = Vec::with_capacity(count);
    let mut written = Vec::with_capacity(count);
    let meshes = mesh::FileMeshes::new(job.file);
    for (index, clip) in clips.into_iter().enumerate() {
        let name = if clip.name.is_empty() {
            stem.to_string()
        } else {
            clip.name.clone()
        };
        let rel_out = clip_output_path(&job.base, index, count, &name);
        let unmatched = job.resolved.clip.unmatched_clip_bones(&clip.skeleton.names);
        let mut row = if job.cancel.is_cancelled() {
            cancelled_row(job.file, &name)
        } else {
            compress_one(job, clip, &name, &rel_out, &meshes)
        };
        row.warnings.splice(0..0, warnings.iter().cloned());
        row.warnings.extend(job.resolved.warnings.iter().cloned());
        row.warnings.extend(unmatched);
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
    (rows, outputs, written)
}

/// Outputs the previous run made for this input that this run did not remake (a renamed or
/// removed glTF animation) are stale: deleted.
fn remove_stale_outputs(
    job: &FileJob,
    previous: Option<&CacheEntry>,
    written: &[cache::CachedOutput],
) {
    if let Some(prev) = previous {
        for o in &prev.outputs {
            if !written.iter().any(|w| w.path == o.path) {
                let _ = std::fs::remove_file(job.options.output_root.join(&o.path));
            }
        }
    }
}

/// The file's skip-cache entry: up to date when every clip succeeded or was refused as below
/// float32 precision (the same bytes at the same settings are refused again: recorded with the
/// settings key, so raising the threshold recompresses); otherwise (failed, or cancelled
/// part-way) the outputs that exist are still tracked for deletion, never as up to date.
fn record_in_cache(
    job: &FileJob,
    key: String,
    hash: String,
    rows: &[ClipReport],
    written: Vec<cache::CachedOutput>,
    had_previous: bool,
) {
    let input_root = input_root_of(job.file);
    let settled = |r: &ClipReport| {
        matches!(
            r.status(),
            ClipStatus::Compressed | ClipStatus::BelowPrecision
        )
    };
    if rows.iter().all(settled) {
        job.cache.insert(
            key,
            CacheEntry {
                input_hash: hash,
                settings_key: job.settings_key.to_string(),
                base: cache::cache_key(&job.base),
                outputs: written,
                reports: rows.to_vec(),
                input_root,
            },
        );
    } else if rows.iter().any(|r| r.error.is_some() && !r.cancelled)
        || !written.is_empty()
        || had_previous
    {
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
}

/// Compresses and writes one clip; the row says what happened. The error figures are the
/// compressor's own float64 check of the very bytes written (decoded, measured against `clip`).
fn compress_one(
    job: &FileJob,
    clip: RawClip,
    name: &str,
    rel_out: &Path,
    meshes: &mesh::FileMeshes,
) -> ClipReport {
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
    let fail = |mut row: ClipReport, msg: String, failure: Option<Failure>| {
        row.output = None;
        row.error = Some(msg);
        row.failure = failure;
        row
    };
    let t0 = Instant::now();
    let compressed = clipforge_anim::compress(&clip, settings);
    row.compress_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let compressed = match compressed {
        Ok(c) => c,
        Err(e) => {
            let e = match e {
                // In cm, like every figure of the report (the compressor works in the clip's
                // units), so the message and the row's floor say the same.
                CompressError::BelowPrecision(p) => {
                    let p = PrecisionFloor {
                        threshold_cm: (p.threshold_cm as f64 * k) as f32,
                        floor_cm: p.floor_cm * k,
                        bone: p.bone,
                        min_threshold_cm: (p.min_threshold_cm as f64 * k) as f32,
                    };
                    row.below_precision = Some(p.clone());
                    CompressError::BelowPrecision(p)
                }
                e => e,
            };
            let message = format!("{} (clip '{name}'): {e}", file.path.display());
            row.limit = limit_field(e.limit());
            return fail(row, message, Failure::of_compress_error(&e));
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
        // The names and settings record did not fit the file's metadata.
        return fail(
            row,
            format!("{}: {e}", out_path.display()),
            Some(Failure::InvalidClip),
        );
    }
    if let Err(e) = write_atomic(&out_path, &bytes) {
        return fail(
            row,
            format!("{}: cannot write: {e}", out_path.display()),
            Some(Failure::Write),
        );
    }
    let stats = compressed.error;
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
    row.layout = compressed.stats.layout;
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
        mesh::measure_row(&mut row, meshes, &clip, lossy, k);
    }
    row
}
