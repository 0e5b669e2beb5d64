//! A clang time trace's summary, kept beside it (`<trace>.sum`): exactly what the timing model
//! reads from the trace (the frontend time, the time in top-level `Source` events, the run's
//! CPU / wall ratio, and per `Source` path as written the exclusive time and inclusions), so
//! that `--time-trace` reads ~100 KB per TU instead of a ~7 MB trace. `--measure --keep-traces`
//! writes it beside each trace it keeps; `--time-trace` reads it when its version and the
//! trace's size and modification time match, else parses the trace (and writes the summary).
//! A summary that is missing, too large, corrupt or stale is ignored: the trace decides.

use std::path::{Path, PathBuf};

/// Bumped whenever [`TraceSummary`] or what it holds changes meaning.
pub(crate) const VERSION: u32 = 1;

/// Largest summary read (gRPC's largest: ~150 KB; a larger file is not ours).
pub(crate) const MAX_SUMMARY_BYTES: u64 = 16 << 20;

/// What the timing model reads from one trace, before paths are resolved and times scaled.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct TraceSummary {
    /// Sum of the `Frontend` events' durations, µs.
    pub frontend_us: u64,
    /// Sum of the top-level `Source` events' durations, µs.
    pub top_us: u64,
    /// The trace's CPU / wall ratio as the trace reader takes it (`f64::to_bits`: exact).
    pub cpu_ratio_bits: Option<u64>,
    /// (`Source` detail as written, exclusive µs summed, inclusions), sorted by detail.
    pub files: Vec<(String, u64, u32)>,
}

/// The file as written: the summary and the trace it was made from.
#[derive(serde::Serialize, serde::Deserialize)]
struct SummaryFile {
    version: u32,
    trace_len: u64,
    trace_mtime_s: u64,
    trace_mtime_ns: u32,
    summary: TraceSummary,
}

/// `<trace>.sum` (not `*.json`: a trace folder's reader never takes it for a trace).
pub(crate) fn path_for(trace: &Path) -> PathBuf {
    let mut s = trace.as_os_str().to_os_string();
    s.push(".sum");
    PathBuf::from(s)
}

/// The trace's size and modification time (None where the platform gives no time).
fn stamp(md: &std::fs::Metadata) -> Option<(u64, u64, u32)> {
    let t = md.modified().ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some((md.len(), d.as_secs(), d.subsec_nanos()))
}

/// Writes the summary of `trace` (as it is now: `md` is its metadata, taken before it was read)
/// atomically beside it.
pub(crate) fn write(trace: &Path, md: &std::fs::Metadata, s: &TraceSummary) -> std::io::Result<()> {
    let Some((trace_len, trace_mtime_s, trace_mtime_ns)) = stamp(md) else {
        return Ok(());
    };
    let f = SummaryFile {
        version: VERSION,
        trace_len,
        trace_mtime_s,
        trace_mtime_ns,
        summary: s.clone(),
    };
    let bytes = serde_json::to_vec(&f).map_err(std::io::Error::other)?;
    clipforge_base::fsio::write_atomic(&path_for(trace), &bytes)
}

/// The summary beside `trace` if there is one of this version made from the trace as it is
/// (`md`: its metadata now); None otherwise (missing, too large, corrupt, stale).
pub(crate) fn read(trace: &Path, md: &std::fs::Metadata) -> Option<TraceSummary> {
    let now = stamp(md)?;
    let bytes = clipforge_base::fsio::read_regular(&path_for(trace), MAX_SUMMARY_BYTES).ok()?;
    let (stamp, summary) = parse(&bytes)?;
    (stamp == now).then_some(summary)
}

/// A summary file's bytes: the trace's (size, mtime s, mtime ns) it was made from, and the
/// summary; None for anything else (corrupt, another version).
pub(crate) fn parse(bytes: &[u8]) -> Option<((u64, u64, u32), TraceSummary)> {
    let f: SummaryFile = serde_json::from_slice(bytes).ok()?;
    (f.version == VERSION).then_some(((f.trace_len, f.trace_mtime_s, f.trace_mtime_ns), f.summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_is_read_back_only_for_the_trace_it_was_made_from() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("a.cpp.json");
        std::fs::write(&t, b"{}").unwrap();
        let s = TraceSummary {
            frontend_us: 10,
            top_us: 7,
            cpu_ratio_bits: Some(0.5f64.to_bits()),
            files: vec![("a.h".into(), 3, 1)],
        };
        let md = std::fs::metadata(&t).unwrap();
        write(&t, &md, &s).unwrap();
        assert_eq!(read(&t, &std::fs::metadata(&t).unwrap()), Some(s.clone()));
        // Corrupt, then too large: ignored, no panic.
        let sum = path_for(&t);
        std::fs::write(&sum, b"{\"version\":1,\"trace_len\":").unwrap();
        assert_eq!(read(&t, &md), None);
        std::fs::write(&sum, vec![b' '; MAX_SUMMARY_BYTES as usize + 1]).unwrap();
        assert_eq!(read(&t, &md), None);
        // The trace changed after its summary: stale.
        write(&t, &md, &s).unwrap();
        std::fs::write(&t, b"{ }").unwrap();
        assert_eq!(read(&t, &std::fs::metadata(&t).unwrap()), None);
    }
}
