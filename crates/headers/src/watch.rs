//! Watching the roots and include dirs: after a debounced batch of file-system events the scan
//! is re-run with the same [`Scanner`], so only changed files are re-read and only affected
//! translation units re-evaluated. Off unless the user turns it on (`--watch` in the CLI).

use super::scan::{ScanError, ScanResult, Scanner};
use super::{Progress, Project, ScanOptions};
use clipforge_base::task::CancelToken;
use clipforge_base::watcher::{Watcher, WatcherError};
use std::time::Duration;

/// Scans once, then rescans after every change until `stop` is cancelled or `on_result` returns
/// false. Only the first scan honours `opts.clean`. Cancelling `stop` also cancels a running scan.
pub fn watch(
    project: &Project,
    opts: &ScanOptions,
    scanner: &mut Scanner,
    stop: &CancelToken,
    mut on_result: impl FnMut(Result<ScanResult, ScanError>) -> bool,
) -> Result<(), WatcherError> {
    let dirs: Vec<_> = project
        .roots
        .iter()
        .chain(project.include_dirs.iter())
        .chain(project.quote_dirs.iter())
        .cloned()
        .collect();
    let watcher = Watcher::start(&dirs, Duration::from_millis(300), None)?;
    let mut o = opts.clone();
    loop {
        let progress = Progress::with_cancel(stop.clone());
        let res = scanner.scan(project, &o, &progress);
        if stop.is_cancelled() || !on_result(res) {
            return Ok(());
        }
        o.clean = false;
        // Wait for a batch of changes (or a stop request); a watcher error means events may
        // have been lost, so it rescans too.
        if !watcher.wait_for_change(stop, Duration::from_millis(200), |e| {
            eprintln!("clipforge headers: file watcher: {e}")
        }) {
            return Ok(());
        }
    }
}
