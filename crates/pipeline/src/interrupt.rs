//! Ctrl-C (SIGINT) and SIGTERM for the long-running commands (`compress`, `watch`), and the
//! clean-up of temporary files a killed run left behind.
//!
//! Signals are received on a thread of our own (signal-hook's iterator), not in a signal handler,
//! so the reaction may do ordinary work: the first signal cancels the job's [`CancelToken`] (the
//! job then finishes or drops the clips in flight, saves the skip cache and reports); a second one
//! removes this process's temporary files from the output folder and exits at once with
//! [`EXIT_INTERRUPTED`].

use super::CancelToken;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

/// Exit code of a command stopped by Ctrl-C or SIGTERM (128 + SIGINT, what shells report).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Installed signal handling; [`Interrupt::received`] tells whether a signal came.
#[derive(Debug)]
pub struct Interrupt {
    received: Arc<AtomicI32>,
}

impl Interrupt {
    /// The first signal received (`SIGINT`, `SIGTERM`), if any.
    pub fn received(&self) -> Option<i32> {
        match self.received.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}

/// Starts handling SIGINT and SIGTERM for the rest of the process's life: the first signal prints
/// `first_message` and cancels `cancel`; a second one prints a line, removes the temporary files
/// this process has under `output_root` and exits with [`EXIT_INTERRUPTED`] without waiting for
/// anything else.
pub fn install(
    cancel: CancelToken,
    first_message: String,
    output_root: PathBuf,
) -> std::io::Result<Interrupt> {
    install_many(cancel, first_message, vec![output_root])
}

/// [`install`] for a process writing into several output folders (`watch --pipelines`): a
/// second signal removes this process's temporary files from each of them.
#[cfg(unix)]
pub fn install_many(
    cancel: CancelToken,
    first_message: String,
    output_roots: Vec<PathBuf>,
) -> std::io::Result<Interrupt> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    let received = Arc::new(AtomicI32::new(0));
    let seen = received.clone();
    std::thread::Builder::new()
        .name("clipforge-signals".into())
        .spawn(move || {
            use std::io::Write as _;
            for sig in signals.forever() {
                if seen
                    .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    cancel.cancel();
                    let _ = writeln!(std::io::stderr(), "\nclipforge: {first_message}");
                } else {
                    let _ = writeln!(
                        std::io::stderr(),
                        "\nclipforge: interrupted again: stopping now"
                    );
                    for root in &output_roots {
                        remove_own_temp_files(root);
                    }
                    // _exit: no destructor or atexit handler can block it (the workers still run).
                    signal_hook::low_level::exit(i32::from(EXIT_INTERRUPTED));
                }
            }
        })?;
    Ok(Interrupt { received })
}

/// Without Unix signals: nothing is installed and no signal is ever reported.
#[cfg(not(unix))]
pub fn install_many(
    _cancel: CancelToken,
    _first_message: String,
    _output_roots: Vec<PathBuf>,
) -> std::io::Result<Interrupt> {
    Ok(Interrupt {
        received: Arc::new(AtomicI32::new(0)),
    })
}

/// The process id in a temporary file name of [`clipforge_base::fsio::write_atomic`]
/// (`.<name>.cf-tmp-<pid>-<n>`); `None` for any other name.
pub(crate) fn temp_file_pid(path: &Path) -> Option<u32> {
    if !super::is_temp_file(path) {
        return None;
    }
    let name = path.file_name()?.to_str()?;
    let (_, tail) = name.rsplit_once(".cf-tmp-")?;
    let (pid, n) = tail.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(n) {
        return None;
    }
    pid.parse().ok().filter(|&p| p > 0)
}

/// True when a process with this id runs (or may run: any answer but "no such process").
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists; no memory is passed.
        if unsafe { libc::kill(pid, 0) } == 0 {
            return true;
        }
        std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Temporary files under `root` (symbolic links not followed) whose name follows our temporary
/// naming and whose process id satisfies `pick`.
fn temp_files_under(root: &Path, pick: impl Fn(u32) -> bool) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| temp_file_pid(e.path()).is_some_and(&pick))
        .map(|e| e.into_path())
        .collect()
}

/// Removes the temporary files a killed run left under `root`: only files named like ours
/// (`.<name>.cf-tmp-<pid>-<n>`) whose process no longer exists, so a batch or watch running
/// into the same folder keeps its own. Returns the files removed.
pub(crate) fn remove_stale_temp_files(root: &Path) -> Vec<PathBuf> {
    let own = std::process::id();
    temp_files_under(root, |pid| pid != own && !process_alive(pid))
        .into_iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .collect()
}

/// Removes this process's own temporary files under `root` (on the way out after a second signal).
pub(crate) fn remove_own_temp_files(root: &Path) {
    let own = std::process::id();
    for p in temp_files_under(root, |pid| pid == own) {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_parsed_strictly() {
        let p = |s: &str| temp_file_pid(Path::new(s));
        assert_eq!(p("out/.walk.cfa.cf-tmp-1234-7"), Some(1234));
        assert_eq!(p(".clipforge-cache.json.cf-tmp-99-0"), Some(99));
        assert_eq!(p("walk.cfa.cf-tmp-1234-7"), None, "not a dot name");
        assert_eq!(p(".walk.cfa.cf-tmp-12x4-7"), None);
        assert_eq!(p(".walk.cfa.cf-tmp-1234-"), None);
        assert_eq!(p(".walk.cfa.cf-tmp-0-1"), None);
        assert_eq!(p(".walk.cfa"), None);
    }

    #[test]
    fn only_dead_processes_temp_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        // A pid above the kernel's pid_max (4194304 at most) never names a live process.
        let dead = sub.join(".walk.cfa.cf-tmp-2147483000-3");
        let mine = sub.join(format!(".run.cfa.cf-tmp-{}-0", std::process::id()));
        let other = sub.join(".walk.cfa.cf-tmp-notapid-3");
        let clip = sub.join("walk.cfa");
        for f in [&dead, &mine, &other, &clip] {
            std::fs::write(f, b"x").unwrap();
        }
        let removed = remove_stale_temp_files(dir.path());
        assert_eq!(removed, vec![dead.clone()]);
        assert!(!dead.exists() && mine.exists() && other.exists() && clip.exists());
        remove_own_temp_files(dir.path());
        assert!(!mine.exists() && other.exists() && clip.exists());
    }
}
