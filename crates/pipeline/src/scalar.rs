//! The batch's branch for ACL scalar track lists: an `.acl.sjson` holding a `float1f`…`vector4f`
//! `track_list` is compressed into a `.cfs` (see `docs/FORMAT.md`) beside where its `.cfa`
//! would go, with one report row; everything else goes down the clip path.

use super::cache::{self, CacheEntry};
use super::report::{ClipReport, Failure, ScalarErrors, limit_field};
use crate::input::{ReadError, read_input};
use crate::job::{FileJob, FileOutcome, RecordRow, input_root_of, row_for};
use crate::naming::clip_stem;
use clipforge_anim::formats::acl::{AclFile, read_acl_file, write_acl_scalar_list};
use clipforge_anim::limits::CheckMemoryBudget;
use clipforge_anim::runtime::scalar::ScalarReader;
use clipforge_anim::scalar::{
    RawScalarList, compress_scalar_list, measure_scalar_error, to_raw_scalar_list,
};
use clipforge_base::fsio::write_atomic;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Why a scalar track list or its `.cfs` could not be read, measured or written (`decompress`,
/// `inspect`, the app's detail). Each names the file; [`ScalarError::limit`] says when a memory
/// budget refused it.
#[derive(Debug, thiserror::Error)]
pub enum ScalarError {
    /// Reading a file: missing, not a regular file, over the memory budget.
    #[error("{}", .0.message)]
    Read(ReadError),
    #[error("{}: not UTF-8 text", .0.display())]
    NotUtf8(PathBuf),
    #[error(transparent)]
    Import(#[from] clipforge_anim::formats::ImportError),
    /// An ACL file holding a transform clip where a scalar track list was expected.
    #[error("{}: a transform clip, not a scalar track list", .0.display())]
    NotScalarList(PathBuf),
    /// The `.cfs` does not read (truncated, corrupt, another format).
    #[error("{}: {source}", .path.display())]
    Cfs {
        path: PathBuf,
        source: clipforge_anim::runtime::FormatError,
    },
    /// Decoding the `.cfs` whole would need more memory than the budget.
    #[error("{}: {source}", .path.display())]
    OverBudget {
        path: PathBuf,
        source: clipforge_anim::limits::OverBudget,
    },
    /// The `.cfs` and the list it is measured against do not match (`raw`: the list, when the
    /// caller named one).
    #[error("{}{}: {problem}", .cfs.display(), .raw.as_ref().map_or(String::new(), |r| format!(" against {}", r.display())))]
    Measure {
        cfs: PathBuf,
        raw: Option<PathBuf>,
        problem: clipforge_anim::scalar::ScalarShapeMismatch,
    },
    #[error(transparent)]
    Write(#[from] clipforge_base::fsio::OutputError),
}

impl ScalarError {
    /// The resource limit that refused the file, if one did.
    pub fn limit(&self) -> Option<clipforge_anim::limits::Limit> {
        match self {
            Self::Read(e) => e.limit,
            Self::OverBudget { .. } => Some(clipforge_anim::limits::Limit::Memory),
            _ => None,
        }
    }
}

/// Reads the ACL scalar track list at `path` (within the memory budget).
pub fn read_scalar_list(path: &Path) -> Result<RawScalarList, ScalarError> {
    let content = read_input(path).map_err(ScalarError::Read)?;
    let text =
        std::str::from_utf8(&content).map_err(|_| ScalarError::NotUtf8(path.to_path_buf()))?;
    match read_acl_file(text, path)? {
        AclFile::Scalars(l) => Ok(l),
        AclFile::Clip(_) => Err(ScalarError::NotScalarList(path.to_path_buf())),
    }
}

/// Reads a `.cfs` buffer; the error names `path`.
pub fn scalar_reader<'a>(path: &Path, bytes: &'a [u8]) -> Result<ScalarReader<'a>, ScalarError> {
    ScalarReader::new(bytes).map_err(|source| ScalarError::Cfs {
        path: path.to_path_buf(),
        source,
    })
}

/// Extension of a compressed scalar list.
pub(crate) const SCALAR_OUTPUT_EXTENSION: &str = "cfs";

/// Compresses `content` when it is an ACL scalar track list (`None` when it is anything else, to
/// go down the clip path; a file that fails to read as an ACL file gets its error row here).
pub(crate) fn process_scalar_list(
    job: &FileJob,
    content: &[u8],
    hash: &str,
    previous: Option<&CacheEntry>,
) -> Option<FileOutcome> {
    // Only a file naming a track_list can be one: clip files skip the second parse.
    memchr::memmem::find(content, b"track_list")?;
    let text = std::str::from_utf8(content).ok()?;
    let file = job.file;
    let stem = clip_stem(&file.path);
    let list = match read_acl_file(text, &file.path) {
        Ok(AclFile::Scalars(l)) => l,
        Ok(AclFile::Clip(_)) => return None,
        Err(e) => {
            // Refused for a budget: the same bytes will be refused again, no retry (as a clip).
            let limit = e.limit();
            let row = ClipReport {
                error: Some(e.to_string()),
                limit: limit_field(limit),
                failure: Some(Failure::or_limit(limit, Failure::InvalidFile)),
                ..row_for(file, &stem)
            };
            job.progress.record(&row);
            return Some(FileOutcome {
                rows: vec![row],
                import_failed: limit.is_none(),
                outputs: Vec::new(),
            });
        }
    };
    let name = if list.name.is_empty() {
        stem.clone()
    } else {
        list.name.clone()
    };
    let rel_out = {
        let mut s = job.base.clone().into_os_string();
        s.push(".");
        s.push(SCALAR_OUTPUT_EXTENSION);
        PathBuf::from(s)
    };
    let out_path = job.options.output_root.join(&rel_out);
    let mut row = ClipReport {
        output: Some(out_path.display().to_string()),
        format: super::report::SCALAR_LIST_FORMAT.into(),
        bones: list.output_order().len(),
        samples: list.num_samples,
        sample_rate: list.sample_rate,
        duration_s: list.duration(),
        raw_bytes: list.raw_size_bytes() as u64,
        ..row_for(file, &name)
    };
    let t0 = Instant::now();
    let compressed = compress_scalar_list(&list);
    row.compress_ms = t0.elapsed().as_secs_f64() * 1000.0;
    match compressed {
        Err(e) => {
            row.output = None;
            row.error = Some(format!("{} (list '{name}'): {e}", file.path.display()));
            row.failure = Some(match e {
                clipforge_anim::scalar::ScalarCompressError::ReadBack(_)
                | clipforge_anim::scalar::ScalarCompressError::ReadBackShape(_) => {
                    Failure::Internal
                }
                _ => Failure::InvalidClip,
            });
        }
        Ok(c) => {
            if let Err(e) = write_atomic(&out_path, &c.bytes) {
                row.output = None;
                row.error = Some(format!("{}: cannot write: {e}", out_path.display()));
                row.failure = Some(Failure::Write);
            } else {
                row.compressed_bytes = c.bytes.len() as u64;
                row.file_bytes = c.bytes.len() as u64;
                row.ratio = row.raw_bytes as f64 / row.compressed_bytes.max(1) as f64;
                // Scalar errors are in the tracks' own units: never in the `*_cm` fields.
                row.scalar = Some(ScalarErrors::new(
                    c.error.max,
                    c.error.max_at_samples,
                    c.error.per_track_max.clone(),
                    c.error.per_track_precision.clone(),
                ));
                row.layout.bit_rate_histogram = c.bit_rate_histogram.clone();
                row.layout.default_subtracks = c.zero_components;
                row.layout.constant_subtracks = c.constant_components;
                row.layout.animated_subtracks = c.animated_components;
                row.layout.looping = c.looping;
                if !c.error.all_within_precision {
                    row.warnings.push(format!(
                        "{}: a track is over its precision (max error {:e})",
                        file.path.display(),
                        c.error.max
                    ));
                }
            }
        }
    }
    job.progress.record(&row);
    let ok = row.error.is_none();
    let written = if ok {
        vec![cache::CachedOutput {
            path: cache::cache_key(&rel_out),
            file_bytes: row.file_bytes,
        }]
    } else {
        Vec::new()
    };
    let key = cache::cache_key(&file.relative);
    job.cache.insert(
        key,
        CacheEntry {
            input_hash: if ok { hash.to_string() } else { String::new() },
            settings_key: if ok {
                crate::fingerprint::scalar_list_key()
            } else {
                String::new()
            },
            base: cache::cache_key(&job.base),
            outputs: written,
            reports: if ok { vec![row.clone()] } else { Vec::new() },
            input_root: input_root_of(file),
        },
    );
    // A previous run's outputs of this input that this one did not make are stale.
    if let Some(prev) = previous {
        for o in &prev.outputs {
            if o.path != cache::cache_key(&rel_out) {
                let _ = std::fs::remove_file(job.options.output_root.join(&o.path));
            }
        }
    }
    Some(FileOutcome {
        rows: vec![row],
        import_failed: false,
        outputs: if ok { vec![rel_out] } else { Vec::new() },
    })
}

/// `clipforge decompress FILE.cfs -o OUT.acl.sjson`: the output tracks, in output order, as an
/// ACL scalar track list. Returns the line to print.
pub fn decompress_scalar(file: &Path, bytes: &[u8], out: &Path) -> Result<String, ScalarError> {
    let reader = scalar_reader(file, bytes)?;
    reader
        .check_memory_budget()
        .map_err(|source| ScalarError::OverBudget {
            path: file.to_path_buf(),
            source,
        })?;
    let list = to_raw_scalar_list(&reader);
    let text = write_acl_scalar_list(&list);
    clipforge_base::fsio::write_output(out, text.as_bytes(), &[file])?;
    Ok(format!(
        "{} -> {} ({} {} tracks, {} samples)",
        file.display(),
        out.display(),
        list.tracks.len(),
        list.track_type.acl_name(),
        list.num_samples
    ))
}

/// `clipforge inspect FILE.cfs [--raw LIST.acl.sjson] [--json]`: the list's shape, each track's
/// precision and bits per component, and with `raw` the error of every track against it.
pub fn inspect_scalar(
    file: &Path,
    bytes: &[u8],
    raw: Option<&Path>,
    json: bool,
) -> Result<String, ScalarError> {
    let reader = scalar_reader(file, bytes)?;
    let w = reader.track_type().width();
    let measured = match raw {
        None => None,
        Some(path) => {
            let list = read_scalar_list(path)?;
            Some(
                measure_scalar_error(&list, &reader).map_err(|problem| ScalarError::Measure {
                    cfs: file.to_path_buf(),
                    raw: Some(path.to_path_buf()),
                    problem,
                })?,
            )
        }
    };
    let tracks: Vec<serde_json::Value> = (0..reader.num_tracks())
        .map(|k| {
            let bits: Vec<u32> = (0..w).map(|c| reader.component_bits(k, c)).collect();
            let mut v = serde_json::json!({
                "name": reader.track_name(k),
                // The f32 as written (0.0001), not its f64 widening.
                "precision": reader.precision(k).to_string().parse::<f64>().unwrap_or(0.0),
                "bits": bits,
            });
            if let Some(m) = &measured {
                v["max_error"] = m.per_track_max[k].into();
                v["ok"] = (m.per_track_max[k] <= reader.precision(k) as f64).into();
            }
            v
        })
        .collect();
    if json {
        let mut v = serde_json::json!({
            "kind": "scalar_tracks",
            "name": reader.list_name(),
            "type": reader.track_type().acl_name(),
            "tracks": tracks,
            "stripped_tracks": reader.num_stripped(),
            "samples": reader.num_samples(),
            "sample_rate": reader.sample_rate(),
            "looping": reader.is_wrapping(),
            "file_bytes": reader.total_size(),
        });
        if let Some(m) = &measured {
            v["max_error"] = m.max.into();
            v["all_within_precision"] = m.all_within_precision.into();
        }
        return Ok(serde_json::to_string_pretty(&v).unwrap_or_default());
    }
    let mut s = format!(
        "{}: scalar track list '{}': {} {} tracks ({} stripped), {} samples at {} Hz{}, {} bytes",
        file.display(),
        reader.list_name(),
        reader.num_tracks(),
        reader.track_type().acl_name(),
        reader.num_stripped(),
        reader.num_samples(),
        reader.sample_rate(),
        if reader.is_wrapping() {
            ", looping"
        } else {
            ""
        },
        reader.total_size()
    );
    for t in &tracks {
        s.push_str(&format!(
            "\n  {:<24} precision {:<8} bits {}",
            t["name"].as_str().unwrap_or(""),
            t["precision"],
            t["bits"]
        ));
        if let Some(e) = t.get("max_error") {
            s.push_str(&format!("  max error {e}"));
        }
    }
    if let Some(m) = &measured {
        s.push_str(&format!(
            "\nmax error {:e}; {}",
            m.max,
            if m.all_within_precision {
                "every track within its precision"
            } else {
                "SOME TRACKS OVER THEIR PRECISION"
            }
        ));
    }
    Ok(s)
}
