//! Watching the roots and include dirs: after a debounced batch of file-system events the scan
//! is re-run with the same [`Scanner`], so only changed files are re-read and only affected
//! translation units re-evaluated. Off unless the user turns it on (`--watch` in the CLI).

use super::scan::{ScanError, ScanResult, Scanner};
use super::{Progress, Project, ScanOptions};
use notify::RecursiveMode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Scans once, then rescans after every change until `stop` is set or `on_result` returns false.
/// Only the first scan honours `opts.clean`.
pub fn watch(
    project: &Project,
    opts: &ScanOptions,
    scanner: &mut Scanner,
    stop: &AtomicBool,
    mut on_result: impl FnMut(Result<ScanResult, ScanError>) -> bool,
) -> Result<(), String> {
    let (tx, rx) = mpsc::channel();
    let mut deb = notify_debouncer_full::new_debouncer(Duration::from_millis(300), None, tx)
        .map_err(|e| format!("cannot start the file watcher: {e}"))?;
    for d in project
        .roots
        .iter()
        .chain(project.include_dirs.iter())
        .chain(project.quote_dirs.iter())
    {
        deb.watch(d, RecursiveMode::Recursive)
            .map_err(|e| format!("{}: cannot watch: {e}", d.display()))?;
    }
    let mut o = opts.clone();
    loop {
        let progress = Progress::default();
        if !on_result(scanner.scan(project, &o, &progress)) {
            return Ok(());
        }
        o.clean = false;
        // Wait for a batch of changes (or a stop request).
        loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            match rx.recv_timeout(Duration::from_millis(200)) {
                // Our own reads show up as access events: only changes count.
                Ok(Ok(events))
                    if events
                        .iter()
                        .any(|e| !matches!(e.event.kind, notify::EventKind::Access(_))) =>
                {
                    break;
                }
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
            }
        }
    }
}
