//! Atomic file writes, below every layer: batch outputs, reports and skip caches
//! ([`crate::pipeline`]) and the header profiler's cache ([`crate::headers`]) all replace files
//! this way, so a reader never sees half a file and two writers never share a temporary name.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: the data goes to a temporary file in the same folder
/// (`.<name>.cf-tmp-<pid>-<n>`), is flushed to disk, then renamed over `path`. Readers see the old
/// file or the new one, never a partial one; on any error the temporary file is removed.
/// Missing parent folders are created.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(path, bytes, true)
}

/// [`write_atomic`], with the flush to disk optional: a cache that is checksummed and simply
/// rebuilt when damaged does not need to wait for the disk.
pub fn replace_file(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    replace_file_parts(path, &[bytes], durable)
}

/// [`replace_file`] with the content given in parts, written one after the other (no buffer
/// joining them: the header cache is several megabytes of separately encoded sections).
pub fn replace_file_parts(path: &Path, parts: &[&[u8]], durable: bool) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "path has no file name")
    })?;
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(
        ".{}.cf-tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        n
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        for p in parts {
            f.write_all(p)?;
        }
        if durable {
            f.sync_all()?;
        }
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// True for the temporary files [`write_atomic`] creates (left behind only if the process is killed).
pub fn is_temp_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| {
        let n = n.to_string_lossy();
        n.starts_with('.') && n.contains(".cf-tmp-")
    })
}
