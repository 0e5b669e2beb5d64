//! The lock a watch holds on its output folder (`.clipforge-watch.lock`): two watchers writing
//! one output folder (the app's pipeline and a `clipforge watch --pipelines` service on the
//! same folders) would overwrite and delete each other's outputs, so the second one is refused
//! with a message naming the first. A lock left by a process that is gone is taken over.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The lock file's name in the output folder.
pub(crate) const LOCK_FILE: &str = ".clipforge-watch.lock";

/// Largest lock file read (it holds a few short lines).
const MAX_LOCK_BYTES: u64 = 4096;

/// Why a watch could not take its output folder; the app and the CLI show the message, and code
/// can tell a folder another watch holds ([`LockError::Held`]) from a file-system failure.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live watch (process `pid`, watching `by`) writes into `out`.
    #[error(
        "{} is already the output folder of a running watch (process {pid}, watching {by}): two \
         watchers would overwrite and delete each other's outputs; stop that one or choose \
         another output folder ({} says who holds it)",
        out.display(),
        lock.display()
    )]
    Held {
        out: PathBuf,
        lock: PathBuf,
        pid: u32,
        by: String,
    },
    #[error(
        "{}: another watch's lock that cannot be read ({source}): delete it if no watch writes \
         into {}",
        lock.display(),
        out.display()
    )]
    Unreadable {
        lock: PathBuf,
        out: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: cannot write the lock: {source}", lock.display())]
    Write {
        lock: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: cannot create the lock: {source}", lock.display())]
    Create {
        lock: PathBuf,
        source: std::io::Error,
    },
    /// Removed as stale twice and there again each time.
    #[error("{}: the lock keeps coming back", lock.display())]
    KeepsComingBack { lock: PathBuf },
}

/// A held lock; dropping it removes the file.
#[derive(Debug)]
pub(crate) struct OutputLock {
    path: PathBuf,
}

/// True while process `pid` runs (where that can be told: Linux's /proc; elsewhere a lock is
/// taken as held, and the message says which file to delete).
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

impl OutputLock {
    /// Takes the lock of output folder `out` for a watch of `input`; why not, when another
    /// live watch holds it.
    pub(crate) fn acquire(out: &Path, input: &Path) -> Result<Self, LockError> {
        let path = out.join(LOCK_FILE);
        let text = format!(
            "pid = {}\ninput = {}\n",
            std::process::id(),
            serde_json::to_string(&input.display().to_string()).unwrap_or_default()
        );
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    f.write_all(text.as_bytes())
                        .map_err(|source| LockError::Write {
                            lock: path.clone(),
                            source,
                        })?;
                    return Ok(Self { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let held = clipforge_base::fsio::read_regular(&path, MAX_LOCK_BYTES).map_err(
                        |source| LockError::Unreadable {
                            lock: path.clone(),
                            out: out.to_path_buf(),
                            source,
                        },
                    )?;
                    let held = String::from_utf8_lossy(&held);
                    let pid = held
                        .lines()
                        .find_map(|l| l.strip_prefix("pid = "))
                        .and_then(|p| p.trim().parse::<u32>().ok());
                    let by = held
                        .lines()
                        .find_map(|l| l.strip_prefix("input = "))
                        .map(|i| i.trim().trim_matches('"').to_string())
                        .unwrap_or_default();
                    match pid {
                        Some(pid) if alive(pid) => {
                            return Err(LockError::Held {
                                out: out.to_path_buf(),
                                lock: path,
                                pid,
                                by,
                            });
                        }
                        // A watch that was killed: its lock is stale.
                        _ => {
                            let _ = std::fs::remove_file(&path);
                        }
                    }
                }
                Err(source) => return Err(LockError::Create { lock: path, source }),
            }
        }
        Err(LockError::KeepsComingBack { lock: path })
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_watch_of_one_output_is_refused_and_a_stale_lock_taken_over() {
        let out = tempfile::tempdir().unwrap();
        let first = OutputLock::acquire(out.path(), Path::new("/in/a")).unwrap();
        let e = OutputLock::acquire(out.path(), Path::new("/in/b")).unwrap_err();
        assert!(matches!(e, LockError::Held { .. }), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("already the output folder of a running watch"),
            "{e}"
        );
        assert!(e.contains("/in/a"), "{e}");
        drop(first);
        assert!(!out.path().join(LOCK_FILE).exists());
        // A dead process's lock (pid far above any real one).
        std::fs::write(out.path().join(LOCK_FILE), "pid = 4000000000\n").unwrap();
        let _again = OutputLock::acquire(out.path(), Path::new("/in/b")).unwrap();
    }
}
