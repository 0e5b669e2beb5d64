//! Support for ClipForge's fuzz targets: the entry points ([`entries`], shared with the main
//! crate's regression replay) and an allocator that turns a memory blow-up into a crash.
//!
//! libFuzzer's `-malloc_limit_mb` needs a sanitizer's allocator hooks, and this engine runs
//! without a sanitizer (stable toolchain, see docs/RELIABILITY.md), so [`LimitAlloc`] does that
//! job: one allocation, or all live allocations together, above the limit abort the process
//! with a message and a backtrace, and libFuzzer saves the input as a crash. `-rss_limit_mb`
//! still works and is passed too.

/// The `capi` target's entry point: a file of its own, because the main crate's regression
/// replay (which includes `entries.rs`) does not depend on the C API crate; its seeds and
/// regressions are replayed by `crates/runtime-capi/tests/fuzz_capi.rs`.
#[path = "capi_entry.rs"]
pub mod capi_entry;
#[path = "entries.rs"]
pub mod entries;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Default limit: the issue's target "no input of at most 1 MB makes ClipForge use more than
/// 1 GiB". `CLIPFORGE_FUZZ_MEM_MB` changes it.
const DEFAULT_LIMIT_MB: usize = 1024;

pub struct LimitAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static REPORTING: Cell<bool> = const { Cell::new(false) };
}

fn limit() -> usize {
    let l = LIMIT.load(Ordering::Relaxed);
    if l != 0 {
        return l;
    }
    // Read without allocating: env::var_os would allocate inside the allocator.
    let mb = std::env::var_os("CLIPFORGE_FUZZ_MEM_MB")
        .and_then(|v| v.to_str().and_then(|s| s.parse::<usize>().ok()))
        .unwrap_or(DEFAULT_LIMIT_MB);
    let l = mb.saturating_mul(1 << 20).max(1);
    LIMIT.store(l, Ordering::Relaxed);
    l
}

#[cold]
fn over_limit(size: usize) -> ! {
    let first = REPORTING.with(|r| !r.replace(true));
    if first {
        eprintln!(
            "==clipforge-fuzz== allocation of {size} bytes with {} bytes live exceeds the fuzz \
             memory limit of {} bytes (CLIPFORGE_FUZZ_MEM_MB)",
            LIVE.load(Ordering::Relaxed),
            limit()
        );
        eprintln!("{}", std::backtrace::Backtrace::force_capture());
    }
    std::process::abort();
}

#[inline]
fn admit(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    // The first call reads the environment, which allocates: LIMIT is 0 until then and the
    // check is skipped while it is being read.
    let l = LIMIT.load(Ordering::Relaxed);
    if l != 0 && (size > l || live > l) && !REPORTING.with(|r| r.get()) {
        over_limit(size);
    }
}

/// Reads the limit once the allocator can be re-entered (called from each target's init).
pub fn init_limit() {
    limit();
}

unsafe impl GlobalAlloc for LimitAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        admit(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        admit(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            admit(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Set up once per process (from each target's `init`): the memory limit, and a panic hook
/// that only records the message. libfuzzer-sys's own hook aborts on every panic, but the glTF
/// importer deliberately catches the gltf crate's panics (docs: "no input makes an importer
/// panic"; the caught panic becomes an import error), so only a panic that escapes the entry
/// point is a failure ([`run`] aborts then, printing what was recorded).
/// `CLIPFORGE_FUZZ_PANIC_TRACE=1` prints every panic with the default hook instead (with
/// `RUST_BACKTRACE=1`: the full stack), for replaying one crash input.
pub fn init() {
    init_limit();
    if std::env::var_os("CLIPFORGE_FUZZ_PANIC_TRACE").is_some() {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = format!("{msg} at {at}"));
    }));
}

/// Runs one entry point; a panic escaping it aborts the process (libFuzzer saves the input).
pub fn run(data: &[u8], entry: fn(&[u8])) {
    if std::panic::catch_unwind(|| entry(data)).is_err() {
        LAST_PANIC.with(|p| eprintln!("==clipforge-fuzz== panic: {}", p.borrow()));
        std::process::abort();
    }
}

/// Declares a fuzz target whose body is `clipforge_fuzz::entries::$entry`, with the limiting
/// allocator installed.
#[macro_export]
macro_rules! target {
    ($entry:ident) => {
        #[global_allocator]
        static ALLOC: $crate::LimitAlloc = $crate::LimitAlloc;

        libfuzzer_sys::fuzz_target!(init: { $crate::init(); }, |data: &[u8]| {
            $crate::run(data, $crate::entries::$entry);
        });
    };
}

/// What the structure-aware mutator of the `.cfa` and `.cfs` targets needs to know about a
/// format: both are checksummed buffers with a fixed header of integer fields, so one mutator
/// serves both (see [`mutate`]).
pub struct BufferLayout {
    /// Size of the fixed header in bytes (48 for `.cfa`, 24 for `.cfs`).
    pub header_len: usize,
    /// (offset, width in bytes: 1, 2 or 4) of the header's integer fields (docs/FORMAT.md).
    pub fields: &'static [(usize, usize)],
    /// (offset, width) of the flags field: a quarter of the header mutations flip one of its
    /// bits, so every flag combination (e.g. `.cfa` bits 4 and 5: reference rotations,
    /// per-bone precision) is reached from any seed, not only the values of [`INTS`].
    pub flags: Option<(usize, usize)>,
    /// Floats after the header sit on 4-byte boundaries (`.cfa`) or anywhere (`.cfs`, whose
    /// floats follow 1-byte codes).
    pub aligned_floats: bool,
    /// Makes a mutated buffer pass the integrity check again (total size, CRC-32), so that
    /// mutations reach the semantic checks instead of being refused by the checksum at once.
    pub fix_up: fn(&mut [u8]),
}

/// Boundary integers written into header fields (truncated to the field's width).
pub const INTS: &[u32] = &[
    0,
    1,
    2,
    3,
    7,
    15,
    16,
    17,
    31,
    32,
    48,
    255,
    256,
    0x7fff,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0xffff_ffff,
];

/// Floats the formats must refuse or handle: non-finite, signed zero, huge, denormal.
pub const FLOATS: &[f32] = &[
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    -1.0,
    1.0,
    2.0,
    1e-40,
    1e30,
    -1e30,
    f32::MAX,
    f32::MIN_POSITIVE,
];

struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        // xorshift32; the seed comes from libFuzzer, so runs stay reproducible.
        let mut x = self.0.max(1);
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() as usize) % n.max(1)
    }
}

/// The structure-aware mutation of a checksummed buffer (body of the targets'
/// `fuzz_mutator!`): half the time libFuzzer's own mutation (`libfuzzer`, i.e.
/// `fuzzer_mutate`), a quarter a boundary integer, ±1 or a flipped flag bit in a header field,
/// a quarter a special float in a 4-byte window after the header; then `layout.fix_up`.
/// Returns the new size.
pub fn mutate(
    layout: &BufferLayout,
    data: &mut [u8],
    size: usize,
    max_size: usize,
    seed: u32,
    libfuzzer: fn(&mut [u8], usize, usize) -> usize,
) -> usize {
    let mut rng = Rng(seed);
    let mut size = size;
    let h = layout.header_len;
    match rng.below(4) {
        2 if size >= h => {
            let (off, w) = match layout.flags {
                Some(f) if rng.below(4) == 0 => f,
                _ => layout.fields[rng.below(layout.fields.len())],
            };
            let cur = match w {
                1 => data[off] as u32,
                2 => u16::from_le_bytes([data[off], data[off + 1]]) as u32,
                _ => u32::from_le_bytes(data[off..off + 4].try_into().unwrap()),
            };
            let v = if Some((off, w)) == layout.flags && rng.below(2) == 0 {
                cur ^ (1 << rng.below(8 * w))
            } else {
                match rng.below(3) {
                    0 => INTS[rng.below(INTS.len())],
                    1 => cur.wrapping_add(1),
                    _ => cur.wrapping_sub(1),
                }
            };
            data[off..off + w].copy_from_slice(&v.to_le_bytes()[..w]);
        }
        3 if size >= h + 4 => {
            let off = if layout.aligned_floats {
                h + 4 * rng.below((size - h) / 4)
            } else {
                h + rng.below(size - h - 3)
            };
            let f = FLOATS[rng.below(FLOATS.len())];
            data[off..off + 4].copy_from_slice(&f.to_le_bytes());
        }
        _ => size = libfuzzer(data, size, max_size),
    }
    (layout.fix_up)(&mut data[..size]);
    size
}
