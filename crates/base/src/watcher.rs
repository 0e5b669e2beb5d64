//! The one file-system watcher wrapper: `notify` 8 through `notify-debouncer-full` 0.7, watching
//! folders recursively with a debounce time, delivering debounced batches on a channel (and
//! optionally waking a UI), with errors as values. Used by folder pipelines
//! (`clipforge_pipeline::watch`), the header profiler's `--watch` (`clipforge_headers::watch`) and
//! the app's Headers tab. Events are hints: users re-read what they care about.

use crate::task::CancelToken;
use notify_debouncer_full::notify::{self, EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, DebouncedEvent};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::time::Duration;

/// Why a watcher could not start.
#[derive(Debug, thiserror::Error)]
pub enum WatcherError {
    #[error("cannot start the file watcher: {0}")]
    Start(notify::Error),
    #[error("{}: cannot watch: {source}", path.display())]
    Watch {
        path: PathBuf,
        source: notify::Error,
    },
}

/// Called from the debouncer's thread after each batch is queued (e.g. to repaint a UI).
pub type Wake = Box<dyn Fn() + Send + 'static>;

type Debouncer = notify_debouncer_full::Debouncer<
    notify::RecommendedWatcher,
    notify_debouncer_full::RecommendedCache,
>;

/// Watches folders recursively; debounced batches (or the watcher's errors) arrive in order on
/// [`Self::recv_timeout`] / [`Self::try_recv`]. Dropping it stops watching.
pub struct Watcher {
    dirs: Vec<PathBuf>,
    debouncer: Option<Debouncer>,
    rx: Receiver<DebounceEventResult>,
}

/// True for an event that may change a file's contents: our own reads show up as access
/// events, and those never count.
pub(crate) fn is_change(event: &DebouncedEvent) -> bool {
    !matches!(event.event.kind, EventKind::Access(_))
}

impl Watcher {
    /// Starts watching every folder of `dirs` (recursively), batching events for `debounce`.
    pub fn start(
        dirs: &[PathBuf],
        debounce: Duration,
        wake: Option<Wake>,
    ) -> Result<Self, WatcherError> {
        let (tx, rx) = mpsc::channel();
        let handler = move |ev: DebounceEventResult| {
            let _ = tx.send(ev);
            if let Some(w) = &wake {
                w();
            }
        };
        // Symbolic links are not followed by the OS watcher: notify walks a followed link with
        // walkdir, which only detects ancestor loops, so a link into /sys never ends. The
        // callers' own scans follow links (each real folder once).
        let mut debouncer = notify_debouncer_full::new_debouncer_opt::<
            _,
            notify_debouncer_full::notify::RecommendedWatcher,
            notify_debouncer_full::RecommendedCache,
        >(
            debounce,
            None,
            handler,
            notify_debouncer_full::RecommendedCache::new(),
            notify_debouncer_full::notify::Config::default().with_follow_symlinks(false),
        )
        .map_err(WatcherError::Start)?;
        for d in dirs {
            debouncer
                .watch(d, RecursiveMode::Recursive)
                .map_err(|source| WatcherError::Watch {
                    path: d.clone(),
                    source,
                })?;
        }
        Ok(Self {
            dirs: dirs.to_vec(),
            debouncer: Some(debouncer),
            rx,
        })
    }

    /// The watched folders.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Whether `dir` is one of the watched folders.
    pub fn watches(&self, dir: &Path) -> bool {
        self.dirs.iter().any(|d| d == dir)
    }

    pub fn recv_timeout(&self, wait: Duration) -> Result<DebounceEventResult, RecvTimeoutError> {
        self.rx.recv_timeout(wait)
    }

    pub fn try_recv(&self) -> Result<DebounceEventResult, TryRecvError> {
        self.rx.try_recv()
    }

    /// Drains what arrived: whether any batch held a change ([`is_change`]), and the
    /// watcher's error messages (events may have been lost then: treat them as a change).
    pub fn drain(&self) -> (bool, Vec<String>) {
        let mut changed = false;
        let mut errors = Vec::new();
        while let Ok(r) = self.rx.try_recv() {
            match r {
                Ok(events) => changed |= events.iter().any(is_change),
                Err(es) => {
                    changed = true;
                    errors.extend(es.into_iter().map(|e| e.to_string()));
                }
            }
        }
        (changed, errors)
    }

    /// Blocks until a batch holds a change (true) or `stop` is cancelled or the watcher ended
    /// (false). Checks `stop` every `poll`. Errors are reported to `on_error` and count as a
    /// change (events may have been lost).
    pub fn wait_for_change(
        &self,
        stop: &CancelToken,
        poll: Duration,
        mut on_error: impl FnMut(String),
    ) -> bool {
        loop {
            if stop.is_cancelled() {
                return false;
            }
            match self.rx.recv_timeout(poll) {
                Ok(Ok(events)) if events.iter().any(is_change) => return !stop.is_cancelled(),
                Ok(Ok(_)) => {}
                Ok(Err(es)) => {
                    for e in es {
                        on_error(e.to_string());
                    }
                    return !stop.is_cancelled();
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    /// Stops watching now (also done on drop) and waits for the debouncer's thread.
    pub fn stop(&mut self) {
        if let Some(d) = self.debouncer.take() {
            d.stop();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn reports_a_change_and_stops_on_cancel() {
        let dir = tempfile::tempdir().unwrap();
        let w =
            Watcher::start(&[dir.path().to_path_buf()], Duration::from_millis(50), None).unwrap();
        std::fs::write(dir.path().join("a.h"), "x").unwrap();
        let stop = CancelToken::new();
        assert!(w.wait_for_change(&stop, Duration::from_millis(20), |_| {}));
        stop.cancel();
        let t = Instant::now();
        assert!(!w.wait_for_change(&stop, Duration::from_millis(20), |_| {}));
        assert!(t.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn missing_folder_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("nope");
        let e = Watcher::start(std::slice::from_ref(&gone), Duration::from_millis(50), None)
            .err()
            .expect("watching a missing folder fails");
        assert!(e.to_string().contains("nope"), "{e}");
    }
}
