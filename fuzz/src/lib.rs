//! Support for ClipForge's fuzz targets: the entry points ([`entries`], shared with the main
//! crate's regression replay) and an allocator that turns a memory blow-up into a crash.
//!
//! libFuzzer's `-malloc_limit_mb` needs a sanitizer's allocator hooks, and this engine runs
//! without a sanitizer (stable toolchain, see docs/RELIABILITY.md), so [`LimitAlloc`] does that
//! job: one allocation, or all live allocations together, above the limit abort the process
//! with a message and a backtrace, and libFuzzer saves the input as a crash. `-rss_limit_mb`
//! still works and is passed too.

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
