//! Progress output of the long-running commands (`compress`, `lab`), on standard error: one unit
//! (input files: the only one whose total is known before the first starts, as a glTF or FBX
//! file holds any number of clips), an ETA weighted by file size, and "scanning… N found" while
//! the folders are walked. On a terminal the status line is rewritten in place; otherwise lines
//! are printed as they come.

use clipforge_base::task::{eta, format_eta};
use clipforge_pipeline::{Progress, ScanOptions};
use std::io::{IsTerminal, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// `[3/113 files · 2 min 05 s left]` (no ETA before the first file finishes or after the last).
pub fn prefix(done: u64, total: u64, left: Option<Duration>) -> String {
    let unit = if total == 1 { "file" } else { "files" };
    match left {
        // The ETA rounds up to whole seconds: a run of 0.14 s said "1 s left" on every line.
        Some(d) if d < Duration::from_secs(1) => format!("[{done}/{total} {unit} · < 1 s left]"),
        Some(d) => format!("[{done}/{total} {unit} · {} left]", format_eta(d)),
        None => format!("[{done}/{total} {unit}]"),
    }
}

/// Standard error is a terminal (status lines are rewritten in place with `\r`).
pub fn stderr_is_tty() -> bool {
    std::io::stderr().is_terminal()
}

/// Runs `scan_with(options)` (a folder scan: `collect_files`), showing "scanning… N found" on a
/// terminal while it runs (a scan of a large library or a slow disk takes seconds; the bar's
/// total is known only when it ends).
pub fn while_scanning<T>(options: &ScanOptions, scan_with: impl FnOnce(&ScanOptions) -> T) -> T {
    if !stderr_is_tty() {
        return scan_with(options);
    }
    let found = Arc::new(AtomicUsize::new(0));
    let scan = ScanOptions {
        found: Some(found.clone()),
        ..options.clone()
    };
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            // Shown only when the scan is not over at once, so quick runs print nothing extra.
            let start = Instant::now();
            let mut shown = false;
            while !finished.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                if start.elapsed() >= Duration::from_millis(300) {
                    let n = found.load(Ordering::Relaxed);
                    let _ = write!(std::io::stderr(), "\rscanning… {n} found\x1b[K");
                    shown = true;
                }
            }
            if shown {
                let _ = write!(std::io::stderr(), "\r\x1b[K");
            }
        });
        let c = scan_with(&scan);
        finished.store(true, Ordering::Relaxed);
        c
    })
}

/// `[3/113 files · 2 min 05 s left]` for a batch's progress: counted in files, known before
/// the first one started (see `ClipCounters`).
pub fn batch_prefix(progress: &Progress, started: Instant) -> String {
    let (done, total) = progress.done_total();
    prefix(done, total, progress.eta(started.elapsed()))
}

/// Progress of a loop over files done on this thread (`lab`): counts files and their bytes.
pub struct FileProgress {
    start: Instant,
    total: u64,
    total_bytes: u64,
    done: u64,
    done_bytes: u64,
    tty: bool,
}

impl FileProgress {
    pub fn new(sizes: impl Iterator<Item = u64>) -> Self {
        let (mut total, mut total_bytes) = (0, 0);
        for s in sizes {
            total += 1;
            total_bytes += s;
        }
        Self {
            start: Instant::now(),
            total,
            total_bytes,
            done: 0,
            done_bytes: 0,
            tty: stderr_is_tty(),
        }
    }

    fn prefix(&self) -> String {
        let left = eta(
            self.start.elapsed(),
            (self.done_bytes, self.total_bytes),
            (self.done, self.total),
        );
        prefix(self.done, self.total, left)
    }

    /// Says which file is being worked on: a status line on a terminal, a line otherwise.
    pub fn start(&self, what: &str) {
        let line = format!("{} {what}…", self.prefix());
        if self.tty {
            let _ = write!(std::io::stderr(), "\r{line}\x1b[K");
        } else {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }

    /// Clears the status line (before other output, or at the end).
    pub fn clear(&self) {
        if self.tty {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }

    pub fn finish_file(&mut self, size: u64) {
        self.done += 1;
        self.done_bytes += size;
    }
}
