//! Progress and cancellation shared by every background job: clip batches and pipelines
//! (`clipforge_pipeline`) and header scans (`clipforge_headers`). One [`CancelToken`] type is the
//! only way to stop a job; one [`Progress`] type carries it with the job's counters and the item
//! (or phase) being worked on, so a UI polls every kind of job the same way. This module sits
//! below both users (like [`crate::fsio`]): headers does not depend on pipeline.

use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Shared cancellation flag: clones share it; set it from any thread and running jobs stop at
/// their next check (a clip boundary, a translation unit) and write nothing partial.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed)
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A job's counters, as [`Progress::done_total`] reads them.
pub trait Counters {
    /// (finished, total) work items.
    fn done_total(&self) -> (u64, u64);
}

/// Live progress a UI or the CLI polls while a job runs on other threads: the job's counters
/// (`C`, reached through `Deref`, so `progress.done_clips` reads a batch's), the current item or
/// phase, and the job's [`CancelToken`].
#[derive(Debug, Default)]
pub struct Progress<C> {
    counters: C,
    cancel: CancelToken,
    current: Mutex<String>,
    current_start: Mutex<Option<std::time::Instant>>,
}

impl<C> Deref for Progress<C> {
    type Target = C;
    fn deref(&self) -> &C {
        &self.counters
    }
}

impl<C: Default> Progress<C> {
    /// Progress whose [`Self::cancel`] is `cancel` (cancelling either stops the job).
    pub fn with_cancel(cancel: CancelToken) -> Self {
        Self {
            cancel,
            ..Self::default()
        }
    }
}

impl<C> Progress<C> {
    pub fn counters(&self) -> &C {
        &self.counters
    }
    /// The job's token (a clone: cancelling it cancels this job).
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }
    pub fn cancel(&self) {
        self.cancel.cancel()
    }
    pub fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
    /// What the job is doing now (a phase such as "checking files", or an item's name).
    pub fn phase(&self) -> String {
        self.current.lock().map(|g| g.clone()).unwrap_or_default()
    }
    pub fn set_phase(&self, phase: &str) {
        let Ok(mut g) = self.current.lock() else {
            return;
        };
        // CLIPFORGE_HEADERS_TIMING=1 prints how long each phase took (for benchmarking).
        if std::env::var_os("CLIPFORGE_HEADERS_TIMING").is_some()
            && let Ok(mut t) = self.current_start.lock()
        {
            if let Some(start) = *t {
                eprintln!(
                    "[headers] {:<34} {:>8.3} s",
                    *g,
                    start.elapsed().as_secs_f64()
                );
            }
            *t = Some(std::time::Instant::now());
        }
        phase.clone_into(&mut g);
    }
}

impl<C: Counters> Progress<C> {
    /// (finished, total) work items.
    pub fn done_total(&self) -> (u64, u64) {
        self.counters.done_total()
    }
}

/// A clip batch's counters (`clipforge_pipeline::Progress`).
///
/// Progress is counted in **input files**: the only unit whose total is known before the batch
/// starts (a glTF or FBX file holds any number of clips, known only once it is opened).
/// `total_files` and `total_input_bytes` are set once, before the first file; `done_files` and
/// `done_input_bytes` grow as files finish, so a bar over them never runs backwards and the ETA
/// ([`Self::eta`]) weighs files by size. The clip counters say what the finished files held:
/// `total_clips` starts at the number of files and grows as files turn out to hold several
/// clips; `done_clips` counts every finished row (compressed, failed, skipped or cancelled), so
/// `done_clips == total_clips` at the end; `failed_clips` and `skipped_clips` are subsets of it.
#[derive(Debug, Default)]
pub struct ClipCounters {
    pub total_files: AtomicU64,
    pub done_files: AtomicU64,
    /// Sizes of the input files, the ETA's weights.
    pub total_input_bytes: AtomicU64,
    pub done_input_bytes: AtomicU64,
    pub total_clips: AtomicU64,
    pub done_clips: AtomicU64,
    pub failed_clips: AtomicU64,
    pub skipped_clips: AtomicU64,
    /// Raw bytes (10 float32 per bone per sample) of the clips finished so far.
    pub raw_bytes_done: AtomicU64,
}

impl ClipCounters {
    /// Time left after `elapsed`, from the input bytes finished (see [`eta`]). None until a
    /// clip was compressed (or searched and refused below float32 precision): a file that
    /// failed at once or was up to date took no compression's time, and a sub-second run's
    /// first line said "34 s left" from one fast failure.
    pub fn eta(&self, elapsed: Duration) -> Option<Duration> {
        let worked = self
            .done_clips
            .load(Ordering::Relaxed)
            .saturating_sub(self.failed_clips.load(Ordering::Relaxed))
            .saturating_sub(self.skipped_clips.load(Ordering::Relaxed));
        if worked == 0 {
            return None;
        }
        eta(
            elapsed,
            (
                self.done_input_bytes.load(Ordering::Relaxed),
                self.total_input_bytes.load(Ordering::Relaxed),
            ),
            (
                self.done_files.load(Ordering::Relaxed),
                self.total_files.load(Ordering::Relaxed),
            ),
        )
    }
}

impl Counters for ClipCounters {
    fn done_total(&self) -> (u64, u64) {
        (
            self.done_files.load(Ordering::Relaxed),
            self.total_files.load(Ordering::Relaxed),
        )
    }
}

/// Time left of a job that took `elapsed` for `bytes.0` of `bytes.1` input bytes and `items.0`
/// of `items.1` items: by bytes (an import's time grows with its file's size), by items when the
/// sizes say nothing (all empty). `None` before the first item finishes or after the last.
pub fn eta(elapsed: Duration, bytes: (u64, u64), items: (u64, u64)) -> Option<Duration> {
    let (done, total) = if bytes.1 > 0 && bytes.0 > 0 {
        bytes
    } else {
        items
    };
    if items.0 == 0 || items.0 >= items.1 || done == 0 || done >= total {
        return None;
    }
    let left = elapsed.as_secs_f64() * (total - done) as f64 / done as f64;
    Some(Duration::from_secs_f64(left))
}

/// A short duration for a progress line: `45 s`, `3 min 05 s`, `2 h 10 min`.
pub fn format_eta(d: Duration) -> String {
    let s = d.as_secs_f64().ceil() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// A header scan's counters (`clipforge_headers::Progress`): translation units.
#[derive(Debug, Default)]
pub struct ScanCounters {
    pub tus_total: AtomicUsize,
    pub tus_done: AtomicUsize,
}

impl Counters for ScanCounters {
    fn done_total(&self) -> (u64, u64) {
        (
            self.tus_done.load(Ordering::Relaxed) as u64,
            self.tus_total.load(Ordering::Relaxed) as u64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_clones_share_the_flag_and_progress_shares_its_token() {
        let t = CancelToken::new();
        let p: Progress<ClipCounters> = Progress::with_cancel(t.clone());
        assert!(!p.cancelled());
        t.clone().cancel();
        assert!(t.is_cancelled());
        assert!(p.cancelled());
        let q: Progress<ScanCounters> = Progress::default();
        q.cancel();
        assert!(q.cancel_token().is_cancelled());
    }

    #[test]
    fn counters_through_deref() {
        let p: Progress<ScanCounters> = Progress::default();
        p.tus_total.store(4, Ordering::Relaxed);
        p.tus_done.fetch_add(1, Ordering::Relaxed);
        assert_eq!(p.done_total(), (1, 4));
        p.set_phase("checking files");
        assert_eq!(p.phase(), "checking files");
    }

    /// The ETA follows bytes, not items: one big file done of a big and three small ones leaves
    /// little; no ETA before the first item or after the last.
    #[test]
    fn eta_weighs_items_by_size() {
        let ten = Duration::from_secs(10);
        assert_eq!(eta(ten, (0, 100), (0, 4)), None);
        assert_eq!(eta(ten, (100, 100), (4, 4)), None);
        let left = eta(ten, (90, 100), (1, 4)).unwrap();
        assert!((left.as_secs_f64() - 10.0 / 9.0).abs() < 1e-6, "{left:?}");
        // Empty files: by items.
        let left = eta(ten, (0, 0), (1, 4)).unwrap();
        assert!((left.as_secs_f64() - 30.0).abs() < 1e-6, "{left:?}");
        let c = ClipCounters::default();
        c.total_files.store(2, Ordering::Relaxed);
        c.total_input_bytes.store(300, Ordering::Relaxed);
        c.done_files.store(1, Ordering::Relaxed);
        c.done_input_bytes.store(100, Ordering::Relaxed);
        // The file done failed at once: its time is no rate of work, no ETA.
        c.done_clips.store(1, Ordering::Relaxed);
        c.failed_clips.store(1, Ordering::Relaxed);
        assert_eq!(c.eta(ten), None);
        // It was compressed: the time left follows its bytes.
        c.failed_clips.store(0, Ordering::Relaxed);
        assert_eq!(c.eta(ten), Some(Duration::from_secs(20)));
        assert_eq!(format_eta(Duration::from_secs(185)), "3 min 05 s");
        assert_eq!(format_eta(Duration::from_millis(44_100)), "45 s");
    }
}
