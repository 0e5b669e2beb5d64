//! A/B of two compression settings on one clip file: both are compressed into a private
//! temporary folder (nothing in the output folder changes), their reports (sizes, ratio, max
//! error, per-bone and per-sample errors) are compared, and [`AbRun::keep`] records the chosen
//! side's settings for the clip (a `[[clip]]` table in its `clipforge.toml`, so later batches
//! compress it the same way) and copies its output into the output folder, atomically, at the
//! path a batch would write it to. The temporary folder goes away with the [`AbRun`].

use crate::input::ClipFile;
use crate::job::BatchOptions;
use crate::report::ClipReport;
use crate::{CancelToken, Progress, folder_settings};
use clipforge_anim::CompressionSettings;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which of the two settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn letter(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }
}

/// One side of the comparison: a name for people ("Default (0.01 cm)") and its settings.
#[derive(Clone, Debug, PartialEq)]
pub struct AbSettings {
    pub label: String,
    pub settings: CompressionSettings,
}

/// What to compare.
#[derive(Clone, Debug)]
pub struct AbRequest {
    /// The folder the clip's output path is mirrored from (the Clips tab's input folder).
    pub root: PathBuf,
    /// The clip's file.
    pub file: PathBuf,
    /// The clip's name in its file (a glTF/FBX file holds several; ACL/BVH: the file's stem).
    pub clip: String,
    pub a: AbSettings,
    pub b: AbSettings,
}

/// One side's result: its report row (with `error` set when it failed) and where its output
/// waits in the temporary folder.
#[derive(Clone, Debug)]
pub struct AbSide {
    pub label: String,
    pub settings: CompressionSettings,
    pub report: ClipReport,
    /// Relative to the output folder (as a batch would write it); `None` when it failed.
    pub relative_output: Option<PathBuf>,
}

impl AbSide {
    pub fn ok(&self) -> bool {
        self.report.error.is_none() && self.relative_output.is_some()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AbError {
    #[error(
        "{}: not a clip file ({})",
        .0.display(),
        clipforge_anim::formats::clip_extension_list(", ")
    )]
    NotAClip(PathBuf),
    #[error("could not create a temporary folder for the comparison ({0})")]
    TempDir(std::io::Error),
    #[error("cancelled")]
    Cancelled,
    #[error("{file}: no clip named '{clip}' in this file")]
    NoSuchClip { file: PathBuf, clip: String },
    #[error("side {0} failed: nothing to keep")]
    NothingToKeep(&'static str),
    #[error("{path}: {reason}")]
    Write { path: PathBuf, reason: String },
    #[error("could not record the choice (nothing was written): {0}")]
    Settings(#[from] folder_settings::SettingsError),
}

/// What [`AbRun::keep`] did.
#[derive(Clone, Debug)]
pub struct Kept {
    /// The output file written.
    pub output: PathBuf,
    /// The `clipforge.toml` that now holds the clip's `[[clip]]` table.
    pub settings_file: PathBuf,
    /// The kept side's report row as a batch would now make it: its output in the output
    /// folder, its settings as a batch resolves them (the `[[clip]]` table applied).
    pub report: ClipReport,
}

/// The two compressed versions, waiting for the user's choice.
#[derive(Debug)]
pub struct AbRun {
    pub a: AbSide,
    pub b: AbSide,
    file: ClipFile,
    temp: TempDir,
}

/// A folder under the system temp dir, removed on drop.
#[derive(Debug)]
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("clipforge-ab-{}-{nanos}-{n}", std::process::id()));
        // create_dir (not _all): fails rather than reuse a folder someone else made.
        std::fs::create_dir(&dir)?;
        Ok(Self(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Upper bound of the bytes [`AbRun::keep`] reads back (outputs are far smaller than this).
const MAX_OUTPUT_BYTES: u64 = 1 << 30;

/// Compresses the clip with both settings (one after the other, each as a one-file batch with
/// the settings given explicitly, so they win over `clipforge.toml` files). `progress` counts
/// the clips of both runs; `cancel` stops between and inside them.
pub fn run_ab(
    request: &AbRequest,
    progress: &Progress,
    cancel: &CancelToken,
) -> Result<AbRun, AbError> {
    let file = ClipFile::new(&request.root, &request.file)
        .ok_or_else(|| AbError::NotAClip(request.file.clone()))?;
    let temp = TempDir::new().map_err(AbError::TempDir)?;
    let side = |s: &AbSettings, dir: &str| -> Result<AbSide, AbError> {
        if cancel.is_cancelled() {
            return Err(AbError::Cancelled);
        }
        let output_root = temp.0.join(dir);
        let options = BatchOptions {
            settings: s.settings.clone(),
            output_root: output_root.clone(),
            jobs: 1,
            use_skip_cache: false,
        };
        let overrides = folder_settings::Overrides {
            error_threshold: Some(s.settings.error_threshold),
            shell_distance: s.settings.shell_distance,
            bones: s.settings.bones.clone(),
            // A clip kept before must not turn both sides into the kept one.
            ignore_clip_tables: true,
            ..Default::default()
        };
        let report = crate::batch::run_batch_configured(
            std::slice::from_ref(&file),
            &options,
            &overrides,
            progress,
            cancel,
            &|_| {},
        );
        if cancel.is_cancelled() {
            return Err(AbError::Cancelled);
        }
        let rows = report.clips;
        let row = match rows.iter().find(|r| r.clip == request.clip) {
            Some(r) => r.clone(),
            // A file that failed as a whole has one row named after the file.
            None if rows.len() == 1 && rows[0].error.is_some() => rows[0].clone(),
            None => {
                return Err(AbError::NoSuchClip {
                    file: request.file.clone(),
                    clip: request.clip.clone(),
                });
            }
        };
        let relative_output = row
            .output
            .as_deref()
            .filter(|_| row.error.is_none())
            .and_then(|o| Path::new(o).strip_prefix(&output_root).ok())
            .map(Path::to_path_buf);
        Ok(AbSide {
            label: s.label.clone(),
            settings: s.settings.clone(),
            report: row,
            relative_output,
        })
    };
    let a = side(&request.a, "a")?;
    let b = side(&request.b, "b")?;
    Ok(AbRun { a, b, file, temp })
}

impl AbRun {
    pub fn side(&self, s: Side) -> &AbSide {
        match s {
            Side::A => &self.a,
            Side::B => &self.b,
        }
    }

    /// Where the chosen side's output would go in `output_root`.
    pub fn destination(&self, s: Side, output_root: &Path) -> Option<PathBuf> {
        self.side(s)
            .relative_output
            .as_ref()
            .map(|r| output_root.join(r))
    }

    /// Keeps the chosen side: records its threshold and shell distance for the clip file (a
    /// `[[clip]]` table in the `clipforge.toml` that applies to it, so the next batch, watch or
    /// `compress` makes the same file), then writes its output into `output_root` (atomically:
    /// a reader sees the old file or the new one, never a part).
    pub fn keep(&self, s: Side, output_root: &Path) -> Result<Kept, AbError> {
        let side = self.side(s);
        let (Some(rel), true) = (&side.relative_output, side.report.error.is_none()) else {
            return Err(AbError::NothingToKeep(s.letter()));
        };
        let root = folder_settings::root_of(&self.file.path, &self.file.relative);
        let settings_file = folder_settings::save_clip_choice(
            &root,
            &self.file.path,
            side.settings.error_threshold,
            side.settings.shell_distance,
        )?;
        let from = self
            .temp
            .0
            .join(if s == Side::A { "a" } else { "b" })
            .join(rel);
        let mut bytes =
            clipforge_base::fsio::read_regular(&from, MAX_OUTPUT_BYTES).map_err(|e| {
                AbError::Write {
                    path: from.clone(),
                    reason: e.to_string(),
                }
            })?;
        // The settings a batch records for it now (the kept values win over the defaults):
        // in the report, and in the file's settings record, so a later batch that remakes it
        // writes the very same bytes.
        let resolver = folder_settings::SettingsResolver::new(
            side.settings.clone(),
            folder_settings::Overrides::default(),
        );
        let resolved = resolver
            .resolve(&root, &self.file.path, self.file.format)
            .ok();
        if let Some(r) = &resolved {
            // A .cfs has no record: kept as made (a refusal leaves the bytes as they were).
            let _ = clipforge_anim::runtime::metadata::replace(&mut bytes, &r.clip.record());
        }
        let to = output_root.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| AbError::Write {
                path: parent.to_path_buf(),
                reason: format!("could not create the folder: {e}"),
            })?;
        }
        clipforge_base::fsio::write_atomic(&to, &bytes).map_err(|e| AbError::Write {
            path: to.clone(),
            reason: e.to_string(),
        })?;
        let mut report = side.report.clone();
        report.output = Some(to.display().to_string());
        report.skipped = false;
        report.file_bytes = bytes.len() as u64;
        if let Some(r) = resolved {
            report.settings = Some(r.clip);
        }
        Ok(Kept {
            output: to,
            settings_file,
            report,
        })
    }

    /// The temporary folder (tests check it is removed).
    pub fn temp_dir(&self) -> &Path {
        &self.temp.0
    }
}
