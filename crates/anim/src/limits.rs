//! Resource budgets for hostile input: how much memory importing and compressing one clip may
//! take. Importers and the compressor estimate their need from the input's declared sizes
//! *before* allocating and refuse a clip over budget with an error that names the figure, so a
//! small file can never make the process allocate gigabytes.
//!
//! The budget is process-wide (set once from `--max-memory` or the app's settings) because it
//! protects the process, not a clip: it is not part of the compression settings or the skip cache.

use std::sync::atomic::{AtomicU64, Ordering};

use clipforge_runtime::ClipReader;
pub use clipforge_runtime::limits::{MAX_COMPONENT_MAGNITUDE, MAX_TOTAL_SAMPLES};
use clipforge_runtime::scalar::ScalarReader;

/// 0 means "not set": [`default_max_memory_bytes`] applies.
static MAX_MEMORY: AtomicU64 = AtomicU64::new(0);

/// The memory one clip's import and compression may use: the value set with
/// [`set_max_memory_bytes`], else [`default_max_memory_bytes`].
pub fn max_memory_bytes() -> u64 {
    match MAX_MEMORY.load(Ordering::Relaxed) {
        0 => default_max_memory_bytes(),
        n => n,
    }
}

/// Sets the per-clip memory budget (`--max-memory`). 0 restores the default.
pub fn set_max_memory_bytes(bytes: u64) {
    MAX_MEMORY.store(bytes, Ordering::Relaxed);
}

/// A quarter of physical memory (batches compress clips in parallel, one per core), at least
/// 256 MiB; 2 GiB where physical memory cannot be read.
pub(crate) fn default_max_memory_bytes() -> u64 {
    // Read once per process: every compression checks its budget, and two sysconf calls (a
    // sysinfo system call) were a measurable part of a tiny clip's compression.
    static DEFAULT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| (physical_memory_bytes().unwrap_or(8 << 30) / 4).max(256 << 20))
}

fn physical_memory_bytes() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no memory arguments.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGE_SIZE),
            )
        };
        if pages > 0 && page > 0 {
            return Some((pages as u64).saturating_mul(page as u64));
        }
    }
    None
}

/// Peak bytes import and compression hold per (bone, sample): the raw clip (40), its normalized
/// rotations and float32 object space in `prepare` (64), the animated tracks' values (≤ 36), the
/// decoded clip (40) and the two float64 object spaces of the final check (160), plus allocator
/// slack. Measured with `/usr/bin/time -f %M clipforge compress FILE -j 1` (peak RSS minus the
/// 6 MB of a one-bone clip, divided by bones × samples): 321 B for a glTF of 10 animated bones ×
/// 20,000 samples (keys resampled, so no text to hold), 319 B for `cmu-assimp/01_03.bvh` and
/// 311 B for `indian_04.bvh` (their text and parse included). 512 leaves a margin of 1.6×.
pub(crate) const COMPRESS_BYTES_PER_BONE_SAMPLE: u64 = 512;
/// Bytes per sample whatever the bone count (per-sample error tables, segment targets): a clip
/// with no bones and two billion samples must not get through as "free".
pub(crate) const COMPRESS_BYTES_PER_SAMPLE: u64 = 64;
/// Fixed bytes per bone (skeleton, names, per-bone tables).
pub(crate) const BYTES_PER_BONE: u64 = 256;

/// Memory an import plus compression of a clip of `bones` × `samples` needs, estimated from the
/// declared sizes before anything is allocated (saturating: absurd sizes give `u64::MAX`).
pub fn clip_memory_estimate(bones: usize, samples: usize) -> u64 {
    let (b, s) = (bones as u64, samples as u64);
    b.saturating_mul(s)
        .saturating_mul(COMPRESS_BYTES_PER_BONE_SAMPLE)
        .saturating_add(s.saturating_mul(COMPRESS_BYTES_PER_SAMPLE))
        .saturating_add(b.saturating_mul(BYTES_PER_BONE))
}

/// Every input gets at least this much memory, whatever its size (the smallest real files,
/// e.g. an `.acl.sjson` whose tracks are all at the bind pose, declare many samples in few bytes).
pub(crate) const INPUT_ALLOWANCE_FLOOR: u64 = 128 << 20;
/// Beyond the floor, an input may use this many estimated bytes of memory per byte of input
/// (the real clips need at most ~20: sjson and BVH store every sample as text; the glTF ones are
/// small enough for the floor), so a 1 MB file never gets more than 256 MiB of estimate whatever
/// `--max-memory` says. Measured at that limit (a 1 MB glTF of 40 animated bones × 22,001
/// samples): 281 MB peak RSS and 1.3 s; the slowest shape found (an 880-bone chain, every bone
/// animated, 1,000 samples, at twice that limit) took 5.4 s, so ~2.7 s at this one.
pub(crate) const INPUT_ALLOWANCE_PER_BYTE: u64 = 256;

/// The memory budget of one input file of `input_len` bytes (its buffers included):
/// `min(max_memory_bytes(), max(INPUT_ALLOWANCE_FLOOR, INPUT_ALLOWANCE_PER_BYTE × input_len))`.
pub fn budget_for_input(input_len: u64) -> u64 {
    max_memory_bytes()
        .min(INPUT_ALLOWANCE_FLOOR.max(input_len.saturating_mul(INPUT_ALLOWANCE_PER_BYTE)))
}

/// Every over-budget error message contains this text (users and scripts read it); code decides
/// on the error's variant instead ([`OverBudget`], [`Limit`]).
pub const OVER_BUDGET: &str = "over the memory budget";

/// The resource limit that refused an input: what a report's `limit` field names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The per-clip memory budget ([`max_memory_bytes`], [`budget_for_input`]).
    Memory,
}

impl Limit {
    /// The name a report writes (`"memory"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Memory => "memory",
        }
    }
}

/// A refusal for memory, before anything was allocated: `what` needs `needed` bytes to import
/// and compress, over `budget`.
///
/// "1 bone x 49999999 samples needs ~24 GiB to import and compress, over the memory budget of
/// 128 MiB (see --max-memory)"
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} needs ~{} to import and compress, {OVER_BUDGET} of {} (see --max-memory)",
    format_bytes(*.needed),
    format_bytes(*.budget)
)]
pub struct OverBudget {
    pub what: String,
    pub needed: u64,
    pub budget: u64,
}

/// The message of an [`OverBudget`] refusal.
pub(crate) fn over_budget_message(what: &str, needed: u64, budget: u64) -> String {
    OverBudget {
        what: what.to_string(),
        needed,
        budget,
    }
    .to_string()
}

/// Why a `--max-memory` / `max_memory` value is refused (the text names the value as typed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemorySizeError {
    /// No number before the unit.
    #[error("'{0}' is not a memory size (e.g. 512M, 2G)")]
    NotASize(String),
    /// The unit after the number.
    #[error("'{0}' is not a memory unit (use K, M, G or T)")]
    Unit(String),
    /// Below one byte, or too large for a byte count.
    #[error("'{0}' is not a usable memory size")]
    Unusable(String),
}

/// Parses a memory size as users type it: `512M`, `2G`, `1.5GiB`, `1000000` (bytes).
pub fn parse_memory_size(text: &str) -> Result<u64, MemorySizeError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| MemorySizeError::NotASize(text.to_string()))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        u => return Err(MemorySizeError::Unit(u.to_string())),
    };
    let bytes = value * scale;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(MemorySizeError::Unusable(text.to_string()));
    }
    Ok(bytes as u64)
}

/// Formats a byte count: `2.4 GiB`, `310 MiB`, `12.0 KiB`. The one formatter of the CLI and the
/// app, in binary units (1 KiB = 1024 bytes) written as such, the convention [`parse_memory_size`]
/// reads too (`512M` = 512 MiB).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if v >= 100.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A byte rate: [`format_bytes`] of the bytes per second, `/s` after it (`5.9 MiB/s`).
pub fn format_byte_rate(bytes_per_s: f64) -> String {
    format!("{}/s", format_bytes(bytes_per_s.max(0.0).round() as u64))
}

/// Reads a `.cfa` file for [`ClipReader::new`]: a regular file only (a FIFO or device is
/// refused without blocking, see [`clipforge_base::fsio::open_regular`]), no larger than the
/// format's 32-bit size field or the memory budget allows.
pub fn read_cfa_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    clipforge_base::fsio::read_regular(path, max_memory_bytes().min(u32::MAX as u64))
}

/// The offline side's memory check on a validated compressed buffer, before it is decoded whole
/// (the runtime's readers never allocate, so they know nothing of budgets).
pub trait CheckMemoryBudget {
    /// Refuses a clip whose decoded form needs more memory than the budget allows.
    fn check_memory_budget(&self) -> Result<(), OverBudget>;
}

impl CheckMemoryBudget for ClipReader<'_> {
    /// Refuses, before `decompress::to_raw_clip` allocates it, a clip whose decoded form needs
    /// more memory than a `.cfa` of this size may use ([`budget_for_input`]): a small hostile
    /// buffer can declare tens of millions of bone samples.
    fn check_memory_budget(&self) -> Result<(), OverBudget> {
        let (nb, n) = (self.num_bones(), self.num_samples());
        let needed = clip_memory_estimate(nb, n);
        let budget = budget_for_input(self.total_size() as u64);
        if needed > budget {
            return Err(OverBudget {
                what: format!("{nb} bones x {n} samples"),
                needed,
                budget,
            });
        }
        Ok(())
    }
}

impl CheckMemoryBudget for ScalarReader<'_> {
    /// Refuses decoding every sample (to a raw list and its ACL text, ~40 bytes a value) when
    /// that is over the memory budget ([`max_memory_bytes`]).
    fn check_memory_budget(&self) -> Result<(), OverBudget> {
        let values = (self.num_tracks() * self.track_type().width() * self.num_samples()) as u64;
        let needed = values * 40 + (self.num_tracks() as u64) * 256;
        let budget = max_memory_bytes();
        if needed > budget {
            return Err(OverBudget {
                what: format!("decoding {values} values"),
                needed,
                budget,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_typed() {
        assert_eq!(parse_memory_size("512M").unwrap(), 512 << 20);
        assert_eq!(parse_memory_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_memory_size("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(parse_memory_size("1000").unwrap(), 1000);
        assert!(parse_memory_size("lots").is_err());
        // The texts clap and the pipeline file print (typed since issue 29; the same words).
        let text = |s: &str| parse_memory_size(s).unwrap_err().to_string();
        assert_eq!(text("lots"), "'lots' is not a memory size (e.g. 512M, 2G)");
        assert_eq!(text("5X"), "'x' is not a memory unit (use K, M, G or T)");
        assert_eq!(text("0"), "'0' is not a usable memory size");
        assert_eq!(
            parse_memory_size("5X"),
            Err(MemorySizeError::Unit("x".into()))
        );
        assert!(parse_memory_size("5X").is_err());
        assert!(parse_memory_size("0").is_err());
    }

    #[test]
    fn bytes_format_readably() {
        assert_eq!(format_bytes(12), "12 B");
        assert_eq!(format_bytes(2_576_980_378), "2.4 GiB");
        assert_eq!(format_bytes(310 << 20), "310 MiB");
    }

    #[test]
    fn estimates_saturate_and_budgets_scale_with_the_input() {
        assert_eq!(clip_memory_estimate(usize::MAX, usize::MAX), u64::MAX);
        assert!(clip_memory_estimate(0, 2_000_000_000) > 100 << 30);
        assert!(clip_memory_estimate(1, 49_999_999) > 20 << 30);
        assert_eq!(
            budget_for_input(0),
            max_memory_bytes().min(INPUT_ALLOWANCE_FLOOR)
        );
        assert!(budget_for_input(1 << 20) <= 256 << 20);
        let m = over_budget_message("x", 3 << 30, 1 << 30);
        assert!(
            m.contains(OVER_BUDGET) && m.contains("3.0 GiB") && m.contains("1.0 GiB"),
            "{m}"
        );
    }

    #[test]
    fn default_budget_is_usable() {
        assert!(default_max_memory_bytes() >= 256 << 20);
    }
}
