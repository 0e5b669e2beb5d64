//! One input file: what a scan found ([`ClipFile`]) and reading it within the per-clip memory
//! budget ([`read_input`], [`ReadError`]).

use crate::Limit;
use clipforge_anim::formats::ClipFormat;
use std::path::{Path, PathBuf};

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
