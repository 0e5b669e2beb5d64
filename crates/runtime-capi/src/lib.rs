//! The C API of ClipForge's runtime (`include/clipforge_runtime.h`, generated from this file and
//! its modules by cbindgen; `docs/RUNTIME.md`, "C and C++ API"): opaque handles over the
//! validated `.cfa` ([`clipforge_runtime::ClipReader`]) and `.cfs`
//! ([`clipforge_runtime::scalar::ScalarReader`]) readers, sampling into caller-owned float arrays
//! and `cf_pose`s; the jobs over caller arrays are in [`jobs`].
//!
//! A crate of its own rather than a `capi` feature of `clipforge-runtime`, because Cargo cannot
//! make `crate-type` depend on a feature: this one builds `cdylib` + `staticlib` (+ `rlib` for
//! its tests and the fuzz target), the runtime stays a plain Rust library.
//!
//! What holds at this boundary, for every function:
//! - No panic crosses it: each entry runs in `catch_unwind`; a panic (a bug) becomes
//!   `CF_ERR_INTERNAL`.
//! - Every pointer is checked for NULL and alignment, every length against what is written, every
//!   index against the clip, every time for NaN/infinity, every enum value passed in as an
//!   integer. Outputs are written only once every check passed (the exceptions, documented on
//!   each function: a failed create writes a zero handle, a too-short name buffer gets the
//!   length it needs).
//! - Handles are generation-checked numbers ([`handles`]), so a freed, forged or wrong-kind
//!   handle is refused with `CF_ERR_INVALID_HANDLE`, and `free` waits for calls in flight.
//! - Outside [`jobs`], caller memory is only ever read or written through raw pointers, never
//!   turned into Rust references that could alias (output arrays may overlap each other or the
//!   inputs without undefined behaviour on this side), except the bytes of a buffer being
//!   copied, a name being looked up and a bone list being copied, which are read once. The jobs
//!   view caller arrays as slices, after refusing any output that overlaps another array.
//! - Creation copies the caller's buffer (16-byte aligned), so the caller may free or reuse its
//!   buffer as soon as create returns, and no later write to it can reach a validated reader.

// The exported names are the C names.
#![allow(non_camel_case_types)]

mod handles;
mod jobs;
mod sampler;

use clipforge_runtime::scalar::ScalarReader;
use clipforge_runtime::{
    ClipReader, Defaults, FormatError, Looping, Pose, PoseMut, SampleError, format,
};
use glam::{Quat, Vec3A};
pub use jobs::*;
pub use sampler::*;
use std::alloc::Layout;
use std::cell::RefCell;
use std::ffi::{CStr, c_char};
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;

/// Version of this API; `cf_api_version()` returns the library's, to compare with the header's.
pub const CF_API_VERSION: u32 = 4;

/// The parent index of a root bone.
pub const CF_NO_PARENT: u32 = 0xFFFF_FFFF;

/// How a time outside `[0, duration]` is handled: one of the `CF_LOOPING_*` values (any other
/// value is refused with `CF_ERR_INVALID_ARGUMENT`).
pub type cf_looping = u32;
/// Time is clamped to `[0, duration]`.
pub const CF_LOOPING_CLAMP: cf_looping = 0;
/// Time wraps around the clip; past the last sample it interpolates towards the first.
pub const CF_LOOPING_WRAP: cf_looping = 1;

/// Largest buffer `cf_clip_create` and `cf_scalars_create` accept (a `.cfa` stores its size in
/// 32 bits; a `.cfs` within the format's limits is far smaller), checked before anything is
/// copied.
pub const CF_MAX_BUFFER_SIZE: u64 = 0xFFFF_FFFF;

/// What every function returns. `cf_error_message(status)` describes a status;
/// `cf_last_error()` gives the details of the last failure on the calling thread.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum cf_status {
    /// Success.
    CF_OK = 0,
    /// A required pointer is NULL (or an optional array is NULL with a non-zero length).
    CF_ERR_NULL_POINTER = 1,
    /// A pointer is not aligned for its type.
    CF_ERR_MISALIGNED_POINTER = 2,
    /// An output array or string buffer is shorter than what the call writes.
    CF_ERR_BUFFER_TOO_SMALL = 3,
    /// The handle is not live: never created, already freed, zero, or of another kind.
    CF_ERR_INVALID_HANDLE = 4,
    /// An argument is out of its domain (a looping, defaults, palette layout or SIMD value, a
    /// buffer larger than `CF_MAX_BUFFER_SIZE`, an influence count outside 1..4, more than
    /// `CF_MAX_BLEND_LAYERS` layers).
    CF_ERR_INVALID_ARGUMENT = 5,
    /// The sampling time is NaN or infinite.
    CF_ERR_INVALID_TIME = 6,
    /// A bone or track index is not one of the clip's (or a job's joint index or bone range
    /// is outside what it indexes).
    CF_ERR_INDEX_OUT_OF_RANGE = 7,
    /// No bone has that name.
    CF_ERR_NOT_FOUND = 8,
    /// The buffer is shorter than its header says.
    CF_ERR_TRUNCATED = 9,
    /// The buffer is not a `.cfa` (or, for scalars, a `.cfs`) at all.
    CF_ERR_BAD_MAGIC = 10,
    /// The buffer is of a format version this library does not read.
    CF_ERR_UNSUPPORTED_VERSION = 11,
    /// The buffer's checksum does not match: it was damaged.
    CF_ERR_CHECKSUM_MISMATCH = 12,
    /// The buffer breaks a rule of the format (docs/FORMAT.md); `cf_last_error()` says which.
    CF_ERR_CORRUPT = 13,
    /// Memory for the copy of the buffer or the reader could not be allocated.
    CF_ERR_OUT_OF_MEMORY = 14,
    /// Every handle of this kind is in use (1,048,576 live at once).
    CF_ERR_TOO_MANY_HANDLES = 15,
    /// A bug in ClipForge (a caught panic); `cf_last_error()` has the message. Please report it.
    CF_ERR_INTERNAL = 16,
    /// Two arrays of a job (or a pose and its clip) disagree in length: a job's `validate()`;
    /// `cf_last_error()` names the array.
    CF_ERR_LENGTH_MISMATCH = 17,
    /// A parent index does not come before its bone (the one-pass order the jobs rely on).
    CF_ERR_PARENT_ORDER = 18,
    /// A weight is NaN or infinite, or a threshold is not a positive finite number.
    CF_ERR_NOT_FINITE = 19,
    /// An output array overlaps another array of the same call.
    CF_ERR_OVERLAP = 20,
    /// The SIMD path asked for is not available on this CPU or target.
    CF_ERR_UNAVAILABLE = 21,
    /// The clip is not an additive clip (no additive format in its flags).
    CF_ERR_NOT_ADDITIVE = 22,
}

impl cf_status {
    /// Every status, in code order (for tests and the fuzz target).
    pub fn all() -> &'static [cf_status] {
        use cf_status::*;
        &[
            CF_OK,
            CF_ERR_NULL_POINTER,
            CF_ERR_MISALIGNED_POINTER,
            CF_ERR_BUFFER_TOO_SMALL,
            CF_ERR_INVALID_HANDLE,
            CF_ERR_INVALID_ARGUMENT,
            CF_ERR_INVALID_TIME,
            CF_ERR_INDEX_OUT_OF_RANGE,
            CF_ERR_NOT_FOUND,
            CF_ERR_TRUNCATED,
            CF_ERR_BAD_MAGIC,
            CF_ERR_UNSUPPORTED_VERSION,
            CF_ERR_CHECKSUM_MISMATCH,
            CF_ERR_CORRUPT,
            CF_ERR_OUT_OF_MEMORY,
            CF_ERR_TOO_MANY_HANDLES,
            CF_ERR_INTERNAL,
            CF_ERR_LENGTH_MISMATCH,
            CF_ERR_PARENT_ORDER,
            CF_ERR_NOT_FINITE,
            CF_ERR_OVERLAP,
            CF_ERR_UNAVAILABLE,
            CF_ERR_NOT_ADDITIVE,
        ]
    }

    fn message(self) -> &'static CStr {
        use cf_status::*;
        match self {
            CF_OK => c"success",
            CF_ERR_NULL_POINTER => c"a required pointer is NULL",
            CF_ERR_MISALIGNED_POINTER => c"a pointer is not aligned for its type",
            CF_ERR_BUFFER_TOO_SMALL => c"an output buffer is too small",
            CF_ERR_INVALID_HANDLE => {
                c"invalid handle (never created, already freed, or of another kind)"
            }
            CF_ERR_INVALID_ARGUMENT => c"invalid argument",
            CF_ERR_INVALID_TIME => c"the time is NaN or infinite",
            CF_ERR_INDEX_OUT_OF_RANGE => c"bone or track index out of range",
            CF_ERR_NOT_FOUND => c"no bone has that name",
            CF_ERR_TRUNCATED => c"the buffer is truncated",
            CF_ERR_BAD_MAGIC => c"not a ClipForge buffer of this kind (bad magic)",
            CF_ERR_UNSUPPORTED_VERSION => c"unsupported format version",
            CF_ERR_CHECKSUM_MISMATCH => c"checksum mismatch: the buffer is damaged",
            CF_ERR_CORRUPT => c"the buffer is corrupt",
            CF_ERR_OUT_OF_MEMORY => c"out of memory",
            CF_ERR_TOO_MANY_HANDLES => c"too many live handles",
            CF_ERR_INTERNAL => c"internal error in ClipForge (please report it)",
            CF_ERR_LENGTH_MISMATCH => c"array lengths do not match",
            CF_ERR_PARENT_ORDER => c"a parent does not come before its bone",
            CF_ERR_NOT_FINITE => c"a weight or threshold is not a finite number",
            CF_ERR_OVERLAP => c"an output array overlaps another array",
            CF_ERR_UNAVAILABLE => c"the SIMD path is not available here",
            CF_ERR_NOT_ADDITIVE => c"not an additive clip",
        }
    }
}

/// A `.cfa` clip reader. Zero is never a live handle (`cf_clip c = {0};` is a safe "none").
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cf_clip {
    pub id: u64,
}

/// A `.cfs` scalar track list reader. Zero is never a live handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cf_scalars {
    pub id: u64,
}

/// A structure-of-arrays pose in caller memory, in the layout the runtime and the jobs use:
/// `rotations[4b..4b+4]` = quaternion x, y, z, w of bone b; `translations[4b..4b+3]` and
/// `scales[4b..4b+3]` = x, y, z, the fourth float of each being padding (written with an
/// unspecified value, never read). Each array holds 4 × `num_bones` floats and is 16-byte
/// aligned; NULL only when `num_bones` is 0. The same type is passed for poses a call only
/// reads.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cf_pose {
    pub rotations: *mut f32,
    pub translations: *mut f32,
    pub scales: *mut f32,
    pub num_bones: usize,
}

/// What a sampling call does with the sub-tracks a clip stores as default (their bind pose
/// value): one of the `CF_DEFAULTS_*` values.
pub type cf_defaults = u32;
/// Written: the pose is complete after the call.
pub const CF_DEFAULTS_WRITE: cf_defaults = 0;
/// Left as they are in the caller's pose (ACL's skip-defaults writer): for a caller that
/// filled them once with `cf_clip_bind_pose` and saves the writes.
pub const CF_DEFAULTS_SKIP: cf_defaults = 1;

// ---- Internals ---------------------------------------------------------------------------------

/// A failed call: the status returned and the detail `cf_last_error` gives.
struct Fail {
    status: cf_status,
    detail: String,
}

type Res<T> = Result<T, Fail>;

fn fail<T>(status: cf_status, detail: impl Into<String>) -> Res<T> {
    Err(Fail {
        status,
        detail: detail.into(),
    })
}

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
    /// What the sampling calls decode into before copying out: per thread, so many threads
    /// sample one reader at once, and grown once, so sampling does not allocate.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A thread's sampling scratch: the runtime's calls take an owned [`Pose`], which caller
/// memory cannot be.
#[derive(Default)]
struct Scratch {
    pose: Pose,
    /// The additive layer of `cf_clip_sample_additive_onto`.
    layer: Pose,
    /// The bone list of `cf_clip_sample_bones`, copied once (the outputs may overlap it).
    list: Vec<u32>,
}

/// Runs `f` on the calling thread's scratch, its pose sized to `bones` (growing it only the
/// first time a thread sees a skeleton this large).
fn with_scratch<R>(bones: usize, f: impl FnOnce(&mut Scratch) -> Res<R>) -> Res<R> {
    SCRATCH
        .try_with(|s| {
            let mut s = s.try_borrow_mut().map_err(|_| Fail {
                status: cf_status::CF_ERR_INTERNAL,
                detail: "the thread's scratch pose is in use (re-entered)".into(),
            })?;
            if s.pose.len() != bones {
                s.pose.resize(bones);
            }
            f(&mut s)
        })
        .unwrap_or_else(|_| fail(cf_status::CF_ERR_INTERNAL, "thread is exiting"))
}

/// Records the detail of a failure for `cf_last_error` (never panics).
fn set_last_error(func: &str, detail: &str) {
    let _ = LAST_ERROR.try_with(|e| {
        if let Ok(mut e) = e.try_borrow_mut() {
            e.clear();
            let _ = write!(e, "{func}: {detail}");
        }
    });
}

/// Runs the body of an exported function: a failure is recorded and returned as its status,
/// a panic is caught and becomes `CF_ERR_INTERNAL`.
fn call(func: &'static str, body: impl FnOnce() -> Res<()>) -> cf_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => cf_status::CF_OK,
        Ok(Err(f)) => {
            set_last_error(func, &f.detail);
            f.status
        }
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(no message)");
            set_last_error(
                func,
                &format!("internal error (a bug in ClipForge; please report it): {msg}"),
            );
            cf_status::CF_ERR_INTERNAL
        }
    }
}

/// A pointer the call writes to or reads from: not NULL, aligned for `T`.
fn checked<T>(p: *const T, what: &str) -> Res<()> {
    if p.is_null() {
        fail(cf_status::CF_ERR_NULL_POINTER, format!("{what} is NULL"))
    } else if !p.is_aligned() {
        fail(
            cf_status::CF_ERR_MISALIGNED_POINTER,
            format!(
                "{what} ({p:p}) is not aligned to {} bytes",
                std::mem::align_of::<T>()
            ),
        )
    } else {
        Ok(())
    }
}

/// An optional array of `len` elements the call reads `needed` of (`None`: too many to
/// count): `Some(p)` to use, `None` when the caller passed NULL with length 0 (skip it).
fn array<T>(p: *const T, len: usize, needed: Option<usize>, what: &str) -> Res<Option<*const T>> {
    if p.is_null() && len == 0 {
        return Ok(None);
    }
    if p.is_null() {
        return fail(
            cf_status::CF_ERR_NULL_POINTER,
            format!("{what} is NULL but its length is {len} (pass NULL with length 0 to skip it)"),
        );
    }
    checked(p, what)?;
    match needed {
        Some(n) if n <= len => Ok(Some(p)),
        _ => fail(
            cf_status::CF_ERR_BUFFER_TOO_SMALL,
            format!(
                "{what} holds {len} elements, the call needs {}",
                needed.map_or("more than fit in memory".to_string(), |n| n.to_string())
            ),
        ),
    }
}

/// An output array, as [`array`].
fn out_array(p: *mut f32, len: usize, needed: Option<usize>, what: &str) -> Res<Option<*mut f32>> {
    Ok(array(p.cast_const(), len, needed, what)?.map(|p| p.cast_mut()))
}

/// Writes `values` at `out[at..]` (through the raw pointer: caller memory is never borrowed).
///
/// # Safety
/// `out` points to at least `at + values.len()` writable, aligned floats.
unsafe fn put(out: Option<*mut f32>, at: usize, values: &[f32]) {
    if let Some(p) = out {
        for (k, &v) in values.iter().enumerate() {
            // SAFETY: per the function's contract.
            unsafe { p.add(at + k).write(v) };
        }
    }
}

/// Writes one value to a checked output pointer.
///
/// # Safety
/// `p` points to a writable `T`.
unsafe fn put_one<T>(p: *mut T, value: T, what: &str) -> Res<()> {
    checked(p.cast_const(), what)?;
    // SAFETY: not NULL, aligned, and writable per the contract.
    unsafe { p.write(value) };
    Ok(())
}

fn time(t: f32) -> Res<f32> {
    if t.is_finite() {
        Ok(t)
    } else {
        fail(
            cf_status::CF_ERR_INVALID_TIME,
            format!("time {t} is not a finite number of seconds"),
        )
    }
}

fn defaults(d: cf_defaults) -> Res<Defaults> {
    match d {
        CF_DEFAULTS_WRITE => Ok(Defaults::Write),
        CF_DEFAULTS_SKIP => Ok(Defaults::Skip),
        _ => fail(
            cf_status::CF_ERR_INVALID_ARGUMENT,
            format!("defaults {d} is neither CF_DEFAULTS_WRITE (0) nor CF_DEFAULTS_SKIP (1)"),
        ),
    }
}

fn sample_error(e: SampleError) -> Fail {
    #[allow(unreachable_patterns)] // a variant the runtime may add is "invalid argument"
    let status = match e {
        SampleError::NoSuchBone { .. } | SampleError::NoSuchTrack { .. } => {
            cf_status::CF_ERR_INDEX_OUT_OF_RANGE
        }
        SampleError::OutputSize { .. } => cf_status::CF_ERR_LENGTH_MISMATCH,
        SampleError::NotAdditive => cf_status::CF_ERR_NOT_ADDITIVE,
        _ => cf_status::CF_ERR_INVALID_ARGUMENT,
    };
    Fail {
        status,
        detail: e.to_string(),
    }
}

fn looping(l: cf_looping) -> Res<Looping> {
    match l {
        CF_LOOPING_CLAMP => Ok(Looping::Clamp),
        CF_LOOPING_WRAP => Ok(Looping::Wrap),
        _ => fail(
            cf_status::CF_ERR_INVALID_ARGUMENT,
            format!("looping {l} is neither CF_LOOPING_CLAMP (0) nor CF_LOOPING_WRAP (1)"),
        ),
    }
}

// The `cf_pose` layout is the runtime's: 16 bytes a bone in each array.
const _: () = assert!(
    std::mem::size_of::<Quat>() == 16
        && std::mem::size_of::<Vec3A>() == 16
        && std::mem::align_of::<Quat>() <= 16
        && std::mem::align_of::<Vec3A>() <= 16
);

/// One array of a `cf_pose` of `bones` bones, checked: not NULL (unless there are no bones),
/// 16-byte aligned, its size within what an allocation can be. The pointer to use (dangling
/// but aligned for no bones).
fn pose_array<T>(p: *mut f32, bones: usize, what: &str, field: &str) -> Res<*mut T> {
    if bones == 0 {
        return Ok(NonNull::<T>::dangling().as_ptr());
    }
    if p.is_null() {
        return fail(
            cf_status::CF_ERR_NULL_POINTER,
            format!("{what}.{field} is NULL but the pose has {bones} bones"),
        );
    }
    if !(p as usize).is_multiple_of(16) {
        return fail(
            cf_status::CF_ERR_MISALIGNED_POINTER,
            format!("{what}.{field} ({p:p}) is not 16-byte aligned"),
        );
    }
    if bones > isize::MAX as usize / 16 {
        return fail(
            cf_status::CF_ERR_INVALID_ARGUMENT,
            format!("{what}.num_bones {bones} is larger than any array"),
        );
    }
    Ok(p.cast())
}

/// A caller's pose checked for `bones` bones (written through raw pointers only: its arrays
/// may overlap each other without undefined behaviour here).
struct PoseOut {
    r: *mut Quat,
    t: *mut Vec3A,
    s: *mut Vec3A,
    n: usize,
}

fn pose_out(p: &cf_pose, bones: usize, what: &str) -> Res<PoseOut> {
    if p.num_bones != bones {
        return fail(
            cf_status::CF_ERR_LENGTH_MISMATCH,
            format!(
                "{what}.num_bones is {}, the clip has {bones} bones",
                p.num_bones
            ),
        );
    }
    Ok(PoseOut {
        r: pose_array(p.rotations, bones, what, "rotations")?,
        t: pose_array(p.translations, bones, what, "translations")?,
        s: pose_array(p.scales, bones, what, "scales")?,
        n: bones,
    })
}

impl PoseOut {
    /// The caller's arrays as slices, when no two of them overlap (a `&mut` slice must not
    /// alias another); `None` otherwise, and the caller goes through the thread's scratch.
    ///
    /// # Safety
    /// The arrays hold `n` writable bones, and nothing else reads or writes them during the
    /// returned borrow.
    unsafe fn as_pose_mut<'p>(&self) -> Option<PoseMut<'p>> {
        let bytes = self.n * 16;
        let span = |p: *mut u8| (p as usize, (p as usize).saturating_add(bytes));
        let [a, b, c] = [
            span(self.r.cast()),
            span(self.t.cast()),
            span(self.s.cast()),
        ];
        let apart = |x: (usize, usize), y: (usize, usize)| x.1 <= y.0 || y.1 <= x.0;
        if self.n > 0 && !(apart(a, b) && apart(a, c) && apart(b, c)) {
            return None;
        }
        // SAFETY: per the contract; disjoint (checked above), 16-byte aligned (`pose_array`),
        // and every bit pattern is a valid float.
        unsafe {
            Some(PoseMut {
                rotations: std::slice::from_raw_parts_mut(self.r, self.n),
                translations: std::slice::from_raw_parts_mut(self.t, self.n),
                scales: std::slice::from_raw_parts_mut(self.s, self.n),
            })
        }
    }

    /// # Safety
    /// The arrays hold `n` writable bones; `p` has `n` bones.
    unsafe fn copy_all(&self, p: &Pose) {
        // SAFETY: per the contract; `p` is this library's memory, which the caller cannot name.
        unsafe {
            std::ptr::copy_nonoverlapping(p.rotations.as_ptr(), self.r, self.n);
            std::ptr::copy_nonoverlapping(p.translations.as_ptr(), self.t, self.n);
            std::ptr::copy_nonoverlapping(p.scales.as_ptr(), self.s, self.n);
        }
    }

    /// Copies the sub-tracks `stored` marks (bit k of bone b: sub-track k is not a default).
    ///
    /// # Safety
    /// As [`Self::copy_all`]; `stored` has `n` entries.
    unsafe fn copy_stored(&self, p: &Pose, stored: &[u8]) {
        for (b, &m) in stored.iter().enumerate().take(self.n) {
            // SAFETY: `b < n` (contract).
            unsafe {
                if m & 1 != 0 {
                    self.r.add(b).write(p.rotations[b]);
                }
                if m & 2 != 0 {
                    self.t.add(b).write(p.translations[b]);
                }
                if m & 4 != 0 {
                    self.s.add(b).write(p.scales[b]);
                }
            }
        }
    }

    /// # Safety
    /// The arrays hold `n` readable bones; `p` has `n` bones.
    unsafe fn read_into(&self, p: &mut Pose) {
        // SAFETY: per the contract; every bit pattern is a valid float.
        unsafe {
            std::ptr::copy_nonoverlapping(self.r, p.rotations.as_mut_ptr(), self.n);
            std::ptr::copy_nonoverlapping(self.t, p.translations.as_mut_ptr(), self.n);
            std::ptr::copy_nonoverlapping(self.s, p.scales.as_mut_ptr(), self.n);
        }
    }
}

/// A private, immutable, 16-byte-aligned copy of the caller's buffer.
struct OwnedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
    len: usize,
}

// SAFETY: the bytes are written once, in `copy_from`, and only read afterwards.
unsafe impl Send for OwnedBuf {}
unsafe impl Sync for OwnedBuf {}

impl OwnedBuf {
    /// # Safety
    /// `data` points to `size` readable bytes.
    unsafe fn copy_from(data: *const u8, size: usize) -> Res<Self> {
        checked(data, "data")?;
        if size as u64 > CF_MAX_BUFFER_SIZE {
            return fail(
                cf_status::CF_ERR_INVALID_ARGUMENT,
                format!("size {size} is larger than any valid buffer (CF_MAX_BUFFER_SIZE)"),
            );
        }
        let layout = Layout::from_size_align(size.max(1), 16).map_err(|_| Fail {
            status: cf_status::CF_ERR_INVALID_ARGUMENT,
            detail: format!("size {size} is too large"),
        })?;
        // SAFETY: the layout's size is not zero.
        let ptr = NonNull::new(unsafe { std::alloc::alloc(layout) }).ok_or(Fail {
            status: cf_status::CF_ERR_OUT_OF_MEMORY,
            detail: format!("cannot allocate {size} bytes for the copy of the buffer"),
        })?;
        // SAFETY: `data` has `size` readable bytes (contract), `ptr` was just allocated with
        // at least as many, and a fresh allocation overlaps nothing.
        unsafe { std::ptr::copy_nonoverlapping(data, ptr.as_ptr(), size) };
        Ok(Self {
            ptr,
            layout,
            len: size,
        })
    }

    /// The bytes, for a reader stored beside this buffer.
    ///
    /// # Safety
    /// The returned slice must not be used after `self` is dropped.
    unsafe fn bytes_unbounded(&self) -> &'static [u8] {
        // SAFETY: `ptr` holds `len` initialized bytes until drop (the caller's contract).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for OwnedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `copy_from` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// What one kind of handle refers to. The free / query functions of every kind are written
/// once, over this trait ([`free`], [`with`], [`query`]).
trait Kind: Sized + Send + Sync + 'static {
    /// The C handle type (`cf_clip`, `cf_scalars`, `cf_sampler`).
    type Handle: Copy;
    /// The handle type's C name, for messages.
    const KIND: &'static str;
    fn table() -> &'static handles::Table<Self>;
    fn id(h: Self::Handle) -> u64;
    fn handle(id: u64) -> Self::Handle;
}

/// A kind whose handle is a validated reader over its own copy of a buffer ([`create`]).
trait Entry: Kind {
    /// The file kind the buffer must be, for messages (".cfa").
    const FORMAT: &'static str;
    /// Validates the copied buffer and builds the entry that owns it.
    fn open(buf: OwnedBuf) -> Result<Self, FormatError>;
}

/// A clip handle's entry: the reader and its buffer, shared with the clip's samplers
/// (`cf_sampler`), which keep them alive after the clip handle is freed.
struct ClipEntry {
    data: std::sync::Arc<ClipData>,
}

/// A clip reader over its own copy of the buffer. `reader` borrows `_buf`'s heap bytes, which
/// never move; it is declared first so it is dropped first, and only [`ClipData::reader`],
/// which ties the borrow to `&self`, hands it out.
struct ClipData {
    reader: ClipReader<'static>,
    /// Per bone, bit k set when sub-track k (rotation, translation, scale) is not a default
    /// one: what a `CF_DEFAULTS_SKIP` call copies out (made once, at create).
    stored: Vec<u8>,
    _buf: OwnedBuf,
}

impl ClipData {
    fn reader(&self) -> &ClipReader<'_> {
        &self.reader
    }
}

impl ClipEntry {
    fn reader(&self) -> &ClipReader<'_> {
        self.data.reader()
    }
}

impl Kind for ClipEntry {
    type Handle = cf_clip;
    const KIND: &'static str = "cf_clip";
    fn table() -> &'static handles::Table<Self> {
        &CLIPS
    }
    fn id(h: cf_clip) -> u64 {
        h.id
    }
    fn handle(id: u64) -> cf_clip {
        cf_clip { id }
    }
}

impl Entry for ClipEntry {
    const FORMAT: &'static str = ".cfa";
    fn open(buf: OwnedBuf) -> Result<Self, FormatError> {
        // SAFETY: the reader goes into the entry beside `buf` and drops before it.
        let reader = ClipReader::new(unsafe { buf.bytes_unbounded() })?;
        let stored = (0..reader.num_bones())
            .map(|b| {
                let kinds = reader.subtrack_kinds(b);
                (0..3).fold(0u8, |m, k| {
                    m | u8::from(kinds[k] != format::KIND_DEFAULT) << k
                })
            })
            .collect();
        Ok(ClipEntry {
            data: std::sync::Arc::new(ClipData {
                reader,
                stored,
                _buf: buf,
            }),
        })
    }
}

/// A scalar list reader over its own copy of the buffer (as [`ClipEntry`]).
struct ScalarEntry {
    reader: ScalarReader<'static>,
    _buf: OwnedBuf,
}

impl ScalarEntry {
    fn reader(&self) -> &ScalarReader<'_> {
        &self.reader
    }
}

impl Kind for ScalarEntry {
    type Handle = cf_scalars;
    const KIND: &'static str = "cf_scalars";
    fn table() -> &'static handles::Table<Self> {
        &SCALARS
    }
    fn id(h: cf_scalars) -> u64 {
        h.id
    }
    fn handle(id: u64) -> cf_scalars {
        cf_scalars { id }
    }
}

impl Entry for ScalarEntry {
    const FORMAT: &'static str = ".cfs";
    fn open(buf: OwnedBuf) -> Result<Self, FormatError> {
        // SAFETY: as in `ClipEntry::open`.
        let reader = ScalarReader::new(unsafe { buf.bytes_unbounded() })?;
        Ok(ScalarEntry { reader, _buf: buf })
    }
}

static CLIPS: handles::Table<ClipEntry> = handles::Table::new(0xC1);
static SCALARS: handles::Table<ScalarEntry> = handles::Table::new(0x5C);

/// Copies the caller's buffer, validates it and returns a handle in `*out` (the zero handle
/// on failure, when `out` is usable).
///
/// # Safety
/// `data` points to `size` readable bytes; `out` is writable.
unsafe fn create<E: Entry>(
    func: &'static str,
    data: *const u8,
    size: usize,
    out: *mut E::Handle,
) -> cf_status {
    let mut id = 0;
    let status = call(func, || {
        checked(out.cast_const(), "out")?;
        // SAFETY: `data` is checked inside and readable for `size` bytes (contract).
        let buf = unsafe { OwnedBuf::copy_from(data, size)? };
        let entry = Box::new(E::open(buf).map_err(|e| format_error(e, E::FORMAT))?);
        id = E::table().insert(entry).map_err(|_| Fail {
            status: cf_status::CF_ERR_TOO_MANY_HANDLES,
            detail: format!(
                "every {} handle is in use (1,048,576 live at once)",
                E::KIND
            ),
        })?;
        Ok(())
    });
    if !out.is_null() && out.is_aligned() {
        // SAFETY: writable per the contract; after the copy, so `out` may even point into `data`.
        unsafe { out.write(E::handle(id)) };
    }
    status
}

fn free<E: Kind>(func: &'static str, h: E::Handle) -> cf_status {
    call(func, || match E::table().remove(E::id(h)) {
        Some(_) => Ok(()),
        None => invalid_handle(E::KIND, E::id(h)),
    })
}

fn invalid_handle<T>(kind: &str, id: u64) -> Res<T> {
    fail(
        cf_status::CF_ERR_INVALID_HANDLE,
        format!(
            "{id:#x} is not a live {kind} handle (never created, already freed, or of another kind)"
        ),
    )
}

/// Runs `f` on the entry of a live handle (holding the slot's read lock).
fn with<E: Kind, R>(h: E::Handle, f: impl FnOnce(&E) -> Res<R>) -> Res<R> {
    E::table()
        .with(E::id(h), f)
        .unwrap_or_else(|| invalid_handle(E::KIND, E::id(h)))
}

/// A function returning one value of a live handle's reader in `*out`.
///
/// # Safety
/// `out` is writable.
unsafe fn query<E: Kind, T>(
    func: &'static str,
    h: E::Handle,
    out: *mut T,
    get: impl FnOnce(&E) -> T,
) -> cf_status {
    call(func, || {
        let v = with(h, |e| Ok(get(e)))?;
        // SAFETY: checked inside; writable per the contract.
        unsafe { put_one(out, v, "out") }
    })
}

fn with_clip<R>(clip: cf_clip, f: impl FnOnce(&ClipReader<'_>) -> Res<R>) -> Res<R> {
    with(clip, |e: &ClipEntry| f(e.reader()))
}

fn with_scalars<R>(h: cf_scalars, f: impl FnOnce(&ScalarReader<'_>) -> Res<R>) -> Res<R> {
    with(h, |e: &ScalarEntry| f(e.reader()))
}

fn format_error(e: FormatError, what: &str) -> Fail {
    use cf_status::*;
    #[allow(unreachable_patterns)] // a variant the runtime may add is "corrupt"
    let status = match &e {
        FormatError::Truncated { .. } => CF_ERR_TRUNCATED,
        FormatError::BadMagic => CF_ERR_BAD_MAGIC,
        FormatError::UnsupportedVersion(..) => CF_ERR_UNSUPPORTED_VERSION,
        FormatError::ChecksumMismatch { .. } => CF_ERR_CHECKSUM_MISMATCH,
        FormatError::Corrupt(..) => CF_ERR_CORRUPT,
        _ => CF_ERR_CORRUPT,
    };
    Fail {
        status,
        detail: format!("not a valid {what}: {e}"),
    }
}

fn bone_index(bone: u32, num_bones: usize, what: &str) -> Res<usize> {
    let b = bone as usize;
    if b < num_bones {
        Ok(b)
    } else {
        fail(
            cf_status::CF_ERR_INDEX_OUT_OF_RANGE,
            format!("{what} {bone} is out of range (there are {num_bones})"),
        )
    }
}

/// Copies `name` into a caller's string buffer (see `cf_clip_bone_name`).
///
/// # Safety
/// `buf` points to `buf_len` writable bytes; `name_len` is writable.
unsafe fn copy_name(name: &str, buf: *mut c_char, buf_len: usize, name_len: *mut usize) -> Res<()> {
    checked(name_len.cast_const(), "name_len")?;
    let bytes = name.as_bytes();
    if buf.is_null() && buf_len != 0 {
        return fail(
            cf_status::CF_ERR_NULL_POINTER,
            format!("buf is NULL but buf_len is {buf_len}"),
        );
    }
    // SAFETY: checked above.
    unsafe { name_len.write(bytes.len()) };
    if buf.is_null() {
        return Ok(());
    }
    if buf_len <= bytes.len() {
        return fail(
            cf_status::CF_ERR_BUFFER_TOO_SMALL,
            format!(
                "buf holds {buf_len} bytes, the name needs {} (with its NUL)",
                bytes.len() + 1
            ),
        );
    }
    // SAFETY: `buf` has at least `bytes.len() + 1` writable bytes; `bytes` is this library's
    // memory, which the caller cannot name.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), bytes.len());
        buf.add(bytes.len()).write(0);
    }
    Ok(())
}

/// Reads index `i` of a caller's index list.
///
/// # Safety
/// `list` points to more than `i` readable `u32`s.
unsafe fn index_at(list: *const u32, i: usize) -> u32 {
    // SAFETY: per the contract.
    unsafe { list.add(i).read() }
}

// Every pointer argument below is checked: NULL is refused with `CF_ERR_NULL_POINTER` (or,
// for an optional array with length 0, skipped), a misaligned one with
// `CF_ERR_MISALIGNED_POINTER`. What cannot be checked is the caller's part of each contract,
// in the "Safety" notes: a non-NULL pointer points to as much memory as its length says.

// ---- General -----------------------------------------------------------------------------------

/// The API version of the library (`CF_API_VERSION` of the header it was built with).
#[unsafe(no_mangle)]
pub extern "C" fn cf_api_version() -> u32 {
    CF_API_VERSION
}

/// A static, NUL-terminated description of a status code (any integer: an unknown code gets
/// "unknown status code"). Never NULL; never to be freed.
#[unsafe(no_mangle)]
pub extern "C" fn cf_error_message(status: i32) -> *const c_char {
    cf_status::all()
        .iter()
        .find(|s| **s as i32 == status)
        .map_or(c"unknown status code", |s| s.message())
        .as_ptr()
}

/// Details of the last failed call on the calling thread (function, what was wrong, where),
/// e.g. "cf_clip_create: not a valid .cfa: checksum mismatch ...". Copies at most
/// `buf_len - 1` bytes and a NUL into `buf` (nothing when `buf` is NULL or `buf_len` is 0) and
/// returns the full length without the NUL, so a caller can size a buffer; 0 when no call on
/// this thread has failed. Successful calls leave it unchanged.
///
/// # Safety
/// `buf` points to `buf_len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_last_error(buf: *mut c_char, buf_len: usize) -> usize {
    let copy = |e: &str| {
        if !buf.is_null() && buf_len > 0 {
            let n = e.len().min(buf_len - 1);
            // SAFETY: `buf` has `buf_len > n` writable bytes (contract); `e` is ours.
            unsafe {
                std::ptr::copy_nonoverlapping(e.as_ptr(), buf.cast::<u8>(), n);
                buf.add(n).write(0);
            }
        }
        e.len()
    };
    LAST_ERROR
        .try_with(|e| e.try_borrow().map_or(0, |e| copy(&e)))
        .unwrap_or(0)
}

// ---- Clips (.cfa) ------------------------------------------------------------------------------

/// Validates a `.cfa` buffer of `size` bytes and returns a reader in `*out`. The buffer is
/// copied: the caller may free it as soon as this returns. On failure `*out` is set to the zero
/// handle (when `out` is usable) and the status says why (`CF_ERR_TRUNCATED`, `CF_ERR_BAD_MAGIC`,
/// `CF_ERR_CHECKSUM_MISMATCH`, `CF_ERR_CORRUPT`, ...); `cf_last_error()` has the details.
///
/// # Safety
/// `data` points to `size` readable bytes; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_create(
    data: *const u8,
    size: usize,
    out: *mut cf_clip,
) -> cf_status {
    // SAFETY: the same contract.
    unsafe { create::<ClipEntry>("cf_clip_create", data, size, out) }
}

/// Frees a clip reader (waiting for calls in flight on it on other threads). Afterwards every
/// call with this handle, `cf_clip_free` included, returns `CF_ERR_INVALID_HANDLE`.
#[unsafe(no_mangle)]
pub extern "C" fn cf_clip_free(clip: cf_clip) -> cf_status {
    free::<ClipEntry>("cf_clip_free", clip)
}

/// Number of bones of the clip's skeleton.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_num_bones(clip: cf_clip, out: *mut u32) -> cf_status {
    // SAFETY: the same contract.
    unsafe {
        query("cf_clip_num_bones", clip, out, |e: &ClipEntry| {
            e.reader().num_bones() as u32
        })
    }
}

/// Number of samples of the original clip (duration × rate + 1).
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_num_samples(clip: cf_clip, out: *mut u32) -> cf_status {
    // SAFETY: the same contract.
    unsafe {
        query("cf_clip_num_samples", clip, out, |e: &ClipEntry| {
            e.reader().num_samples() as u32
        })
    }
}

/// Samples per second.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_sample_rate(clip: cf_clip, out: *mut f32) -> cf_status {
    // SAFETY: the same contract.
    unsafe {
        query("cf_clip_sample_rate", clip, out, |e: &ClipEntry| {
            e.reader().sample_rate()
        })
    }
}

/// Duration in seconds: (samples − 1) / rate; 0 for a single-sample clip.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_duration(clip: cf_clip, out: *mut f32) -> cf_status {
    // SAFETY: the same contract.
    unsafe {
        query("cf_clip_duration", clip, out, |e: &ClipEntry| {
            e.reader().duration()
        })
    }
}

/// Copies the UTF-8 name of `bone` with a terminating NUL into `buf` (`buf_len` bytes) and
/// its length without the NUL into `*name_len`. Pass `buf = NULL, buf_len = 0` to get the
/// length only (`CF_OK`). A buffer too small for the name and its NUL gets nothing and
/// `CF_ERR_BUFFER_TOO_SMALL`, with `*name_len` still set.
///
/// # Safety
/// `buf` points to `buf_len` writable bytes; `name_len` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_bone_name(
    clip: cf_clip,
    bone: u32,
    buf: *mut c_char,
    buf_len: usize,
    name_len: *mut usize,
) -> cf_status {
    call("cf_clip_bone_name", || {
        with_clip(clip, |r| {
            let b = bone_index(bone, r.num_bones(), "bone")?;
            let name: &str = &r.skeleton().names[b];
            // SAFETY: per this function's contract.
            unsafe { copy_name(name, buf, buf_len, name_len) }
        })
    })
}

/// The parent of `bone` (always a smaller index), or `CF_NO_PARENT` for a root.
///
/// # Safety
/// `parent` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_bone_parent(
    clip: cf_clip,
    bone: u32,
    parent: *mut u32,
) -> cf_status {
    call("cf_clip_bone_parent", || {
        let p = with_clip(clip, |r| {
            let b = bone_index(bone, r.num_bones(), "bone")?;
            Ok(r.skeleton().parent(b).map_or(CF_NO_PARENT, |p| p as u32))
        })?;
        // SAFETY: checked inside; writable per the contract.
        unsafe { put_one(parent, p, "parent") }
    })
}

/// Writes the parent of every bone (`CF_NO_PARENT` for a root) into `parents[0..num_bones]`;
/// `parents_len` must be at least the number of bones. Parents come before their children, so
/// local → model space is one pass in index order.
///
/// # Safety
/// `parents` points to `parents_len` writable `uint32_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_parents(
    clip: cf_clip,
    parents: *mut u32,
    parents_len: usize,
) -> cf_status {
    call("cf_clip_parents", || {
        with_clip(clip, |r| {
            let n = r.num_bones();
            if n == 0 {
                return Ok(()); // nothing to write: any pointer will do
            }
            checked(parents.cast_const(), "parents")?;
            let Some(out) = array(parents.cast_const(), parents_len, Some(n), "parents")? else {
                return Ok(());
            };
            let out = out.cast_mut();
            for b in 0..n {
                let p = r.skeleton().parent(b).map_or(CF_NO_PARENT, |p| p as u32);
                // SAFETY: `b < n <= parents_len`, checked above.
                unsafe { out.add(b).write(p) };
            }
            Ok(())
        })
    })
}

/// The index of the bone named `name` (`name_len` bytes, no NUL needed), or `CF_ERR_NOT_FOUND`.
///
/// # Safety
/// `name` points to `name_len` readable bytes; `bone` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_find_bone(
    clip: cf_clip,
    name: *const c_char,
    name_len: usize,
    bone: *mut u32,
) -> cf_status {
    call("cf_clip_find_bone", || {
        checked(name, "name")?;
        checked(bone.cast_const(), "bone")?;
        let found = with_clip(clip, |r| {
            // SAFETY: `name` has `name_len` readable bytes (contract); the slice is dropped
            // before anything is written.
            let wanted = unsafe { std::slice::from_raw_parts(name.cast::<u8>(), name_len) };
            let names = &r.skeleton().names;
            match (0..r.num_bones()).find(|&b| names[b].as_bytes() == wanted) {
                Some(b) => Ok(b as u32),
                None => fail(
                    cf_status::CF_ERR_NOT_FOUND,
                    format!("no bone is named {:?}", String::from_utf8_lossy(wanted)),
                ),
            }
        })?;
        // SAFETY: checked above.
        unsafe { put_one(bone, found, "bone") }
    })
}

/// Samples every bone's local transform at `time` seconds into structure-of-arrays float
/// arrays: `rotations[4b..4b+4]` = quaternion x, y, z, w of bone b; `translations[3b..3b+3]`
/// and `scales[3b..3b+3]` = x, y, z. Each array needs at least 4 (or 3) × bones floats; pass
/// NULL with length 0 to skip one. `time` must be finite; `looping` is `CF_LOOPING_CLAMP` or
/// `CF_LOOPING_WRAP`. Nothing is written unless every check passes. Allocation-free after a
/// thread's first call with its largest skeleton.
///
/// # Safety
/// Each array points to its length in writable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_sample_pose(
    clip: cf_clip,
    time: f32,
    looping: cf_looping,
    rotations: *mut f32,
    rotations_len: usize,
    translations: *mut f32,
    translations_len: usize,
    scales: *mut f32,
    scales_len: usize,
) -> cf_status {
    call("cf_clip_sample_pose", || {
        let t = self::time(time)?;
        let l = self::looping(looping)?;
        with_clip(clip, |r| {
            let n = r.num_bones();
            let rot = out_array(rotations, rotations_len, n.checked_mul(4), "rotations")?;
            let tra = out_array(
                translations,
                translations_len,
                n.checked_mul(3),
                "translations",
            )?;
            let sca = out_array(scales, scales_len, n.checked_mul(3), "scales")?;
            with_scratch(n, |s| {
                let p = &mut s.pose;
                r.sample_pose(t, l, p);
                for b in 0..n {
                    // SAFETY: each array holds at least 4n / 3n floats (checked above).
                    unsafe {
                        put(rot, 4 * b, &p.rotations[b].to_array());
                        put(tra, 3 * b, &p.translations[b].to_array());
                        put(sca, 3 * b, &p.scales[b].to_array());
                    }
                }
                Ok(())
            })
        })
    })
}

/// Samples one bone's local transform at `time` seconds: `rotation[0..4]` = x, y, z, w,
/// `translation[0..3]`, `scale[0..3]` = x, y, z (fixed sizes; NULL skips one). Cheaper than a
/// full pose for one bone.
///
/// # Safety
/// `rotation` points to 4 writable floats, `translation` and `scale` to 3.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_sample_bone(
    clip: cf_clip,
    bone: u32,
    time: f32,
    looping: cf_looping,
    rotation: *mut f32,
    translation: *mut f32,
    scale: *mut f32,
) -> cf_status {
    call("cf_clip_sample_bone", || {
        let t = self::time(time)?;
        let l = self::looping(looping)?;
        let len = |p: *mut f32, n: usize| if p.is_null() { 0 } else { n };
        let rot = out_array(rotation, len(rotation, 4), Some(4), "rotation")?;
        let tra = out_array(translation, len(translation, 3), Some(3), "translation")?;
        let sca = out_array(scale, len(scale, 3), Some(3), "scale")?;
        with_clip(clip, |r| {
            let b = bone_index(bone, r.num_bones(), "bone")?;
            let Some((q, tr, s)) = r.sample_bone(b, t, l) else {
                return fail(
                    cf_status::CF_ERR_INTERNAL,
                    "the reader refused a valid bone",
                );
            };
            // SAFETY: fixed sizes, per the contract.
            unsafe {
                put(rot, 0, &q.to_array());
                put(tra, 0, &tr.to_array());
                put(sca, 0, &s.to_array());
            }
            Ok(())
        })
    })
}

/// Samples the bones listed in `bones[0..num_bones]` (any order, repeats allowed) at `time`
/// seconds into packed arrays in list order: `rotations[4i..4i+4]` for `bones[i]`, and so on
/// (arrays of at least 4 / 3 / 3 × `num_bones` floats; NULL with length 0 skips one). Every
/// index is checked before anything is written. One seek for the whole list (the runtime's
/// `sample_bones`); the list is copied first (per thread, grown once), so an output array may
/// overlap it.
///
/// # Safety
/// `bones` points to `num_bones` readable `uint32_t`s; each array points to
/// its length in writable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_sample_bones(
    clip: cf_clip,
    time: f32,
    looping: cf_looping,
    bones: *const u32,
    num_bones: usize,
    rotations: *mut f32,
    rotations_len: usize,
    translations: *mut f32,
    translations_len: usize,
    scales: *mut f32,
    scales_len: usize,
) -> cf_status {
    call("cf_clip_sample_bones", || {
        let t = self::time(time)?;
        let l = self::looping(looping)?;
        let list = array(bones, num_bones, Some(num_bones), "bones")?;
        let rot = out_array(
            rotations,
            rotations_len,
            num_bones.checked_mul(4),
            "rotations",
        )?;
        let tra = out_array(
            translations,
            translations_len,
            num_bones.checked_mul(3),
            "translations",
        )?;
        let sca = out_array(scales, scales_len, num_bones.checked_mul(3), "scales")?;
        with_clip(clip, |r| {
            let Some(list) = list else {
                return Ok(()); // an empty list
            };
            let n = r.num_bones();
            with_scratch(n, |s| {
                // Copied first: an output array may overlap the list.
                s.list.clear();
                // The caller holds this much memory already; still, no abort on a failed grow.
                s.list.try_reserve(num_bones).map_err(|_| Fail {
                    status: cf_status::CF_ERR_OUT_OF_MEMORY,
                    detail: format!("cannot allocate the copy of a list of {num_bones} bones"),
                })?;
                // SAFETY: `list` has `num_bones` readable indices (contract); read once.
                s.list
                    .extend_from_slice(unsafe { std::slice::from_raw_parts(list, num_bones) });
                if let Some(i) = s.list.iter().position(|&b| b as usize >= n) {
                    return fail(
                        cf_status::CF_ERR_INDEX_OUT_OF_RANGE,
                        format!(
                            "bones[{i}]: bone index {} is out of range (there are {n})",
                            s.list[i]
                        ),
                    );
                }
                // One seek for the whole list (ACL #118).
                r.sample_bones(&s.list, t, l, Defaults::Write, &mut s.pose)
                    .map_err(sample_error)?;
                for (i, &b) in s.list.iter().enumerate() {
                    let b = b as usize;
                    let p = &s.pose;
                    // SAFETY: each array holds at least 4 / 3 × num_bones floats (checked above).
                    unsafe {
                        put(rot, 4 * i, &p.rotations[b].to_array());
                        put(tra, 3 * i, &p.translations[b].to_array());
                        put(sca, 3 * i, &p.scales[b].to_array());
                    }
                }
                Ok(())
            })
        })
    })
}

/// Samples every bone at `time` seconds into `pose` (`cf_pose`: the layout the jobs read;
/// `pose.num_bones` must equal the clip's bones, else `CF_ERR_LENGTH_MISMATCH`). With
/// `CF_DEFAULTS_SKIP` the sub-tracks the clip stores as default are left as they are in
/// `pose` (fill them once with `cf_clip_bind_pose`). Nothing is written unless every check
/// passes. Allocation-free after a thread's first call with its largest skeleton.
///
/// # Safety
/// `pose`'s arrays point to 4 × `num_bones` writable floats each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_sample_into(
    clip: cf_clip,
    time: f32,
    looping: cf_looping,
    defaults: cf_defaults,
    pose: cf_pose,
) -> cf_status {
    call("cf_clip_sample_into", || {
        let t = self::time(time)?;
        let l = self::looping(looping)?;
        let d = self::defaults(defaults)?;
        with(clip, |e: &ClipEntry| {
            let r = e.reader();
            let out = pose_out(&pose, r.num_bones(), "pose")?;
            // SAFETY: `out` was checked for `n` bones.
            if let Some(direct) = unsafe { out.as_pose_mut() } {
                // Straight into the caller's arrays: with CF_DEFAULTS_SKIP the defaults are
                // not touched at all. The lengths were checked, so this cannot fail.
                return r.sample_pose_into(t, l, d, direct).map_err(sample_error);
            }
            with_scratch(out.n, |s| {
                r.sample_pose_with(t, l, d, &mut s.pose);
                // SAFETY: `out` was checked for `n` bones; the scratch is this library's.
                unsafe {
                    match d {
                        Defaults::Write => out.copy_all(&s.pose),
                        Defaults::Skip => out.copy_stored(&s.pose, &e.data.stored),
                    }
                }
                Ok(())
            })
        })
    })
}

/// Writes the clip's bind pose (what every default sub-track decodes to, and the constants)
/// into `pose` (`num_bones` equal to the clip's): what a caller sampling with
/// `CF_DEFAULTS_SKIP` fills its pose with once.
///
/// # Safety
/// As `cf_clip_sample_into`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_bind_pose(clip: cf_clip, pose: cf_pose) -> cf_status {
    call("cf_clip_bind_pose", || {
        with_clip(clip, |r| {
            let out = pose_out(&pose, r.num_bones(), "pose")?;
            with_scratch(out.n, |s| {
                r.bind_pose_into(&mut s.pose);
                // SAFETY: as in `cf_clip_sample_into`.
                unsafe { out.copy_all(&s.pose) };
                Ok(())
            })
        })
    })
}

/// Samples this additive clip at `time` seconds and applies it onto `base` in place, in the
/// clip's additive format (`docs/FORMAT.md`, "Additive clips"); `base.num_bones` equal to the
/// clip's. `CF_ERR_NOT_ADDITIVE` for a plain clip.
///
/// # Safety
/// `base`'s arrays point to 4 × `num_bones` readable and writable floats each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_clip_sample_additive_onto(
    clip: cf_clip,
    time: f32,
    looping: cf_looping,
    base: cf_pose,
) -> cf_status {
    call("cf_clip_sample_additive_onto", || {
        let t = self::time(time)?;
        let l = self::looping(looping)?;
        with_clip(clip, |r| {
            let out = pose_out(&base, r.num_bones(), "base")?;
            if r.additive_format() == 0 {
                return Err(sample_error(SampleError::NotAdditive));
            }
            with_scratch(out.n, |s| {
                // SAFETY: `out` was checked for `n` bones (readable per the contract).
                unsafe { out.read_into(&mut s.pose) };
                let Scratch { pose, layer, .. } = s;
                r.sample_additive_onto(t, l, layer, pose)
                    .map_err(sample_error)?;
                // SAFETY: as in `cf_clip_sample_into`.
                unsafe { out.copy_all(pose) };
                Ok(())
            })
        })
    })
}

// ---- Scalar track lists (.cfs) -----------------------------------------------------------------

/// Validates a `.cfs` buffer (a list of scalar tracks: float1..float4 / vector4 curves) and
/// returns a reader in `*out`; copied, like `cf_clip_create`, and the same failure rules.
///
/// # Safety
/// `data` points to `size` readable bytes; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_scalars_create(
    data: *const u8,
    size: usize,
    out: *mut cf_scalars,
) -> cf_status {
    // SAFETY: the same contract.
    unsafe { create::<ScalarEntry>("cf_scalars_create", data, size, out) }
}

/// Frees a scalar list reader; as `cf_clip_free`.
#[unsafe(no_mangle)]
pub extern "C" fn cf_scalars_free(scalars: cf_scalars) -> cf_status {
    free::<ScalarEntry>("cf_scalars_free", scalars)
}

/// Number of tracks (the stored ones, in output order).
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_scalars_num_tracks(scalars: cf_scalars, out: *mut u32) -> cf_status {
    // SAFETY: the same contract.
    unsafe {
        query("cf_scalars_num_tracks", scalars, out, |e: &ScalarEntry| {
            e.reader().num_tracks() as u32
        })
    }
}

/// Floats per track sample: 1 to 4 (every track of a list has the same type).
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_scalars_track_width(scalars: cf_scalars, out: *mut u32) -> cf_status {
    // SAFETY: the same contract.
    unsafe {
        query("cf_scalars_track_width", scalars, out, |e: &ScalarEntry| {
            e.reader().track_type().width() as u32
        })
    }
}

/// Number of samples of the original list.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_scalars_num_samples(scalars: cf_scalars, out: *mut u32) -> cf_status {
    // SAFETY: the same contract.
    unsafe {
        query("cf_scalars_num_samples", scalars, out, |e: &ScalarEntry| {
            e.reader().num_samples() as u32
        })
    }
}

/// Samples per second.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_scalars_sample_rate(scalars: cf_scalars, out: *mut f32) -> cf_status {
    // SAFETY: the same contract.
    unsafe {
        query("cf_scalars_sample_rate", scalars, out, |e: &ScalarEntry| {
            e.reader().sample_rate()
        })
    }
}

/// Duration in seconds.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_scalars_duration(scalars: cf_scalars, out: *mut f32) -> cf_status {
    // SAFETY: the same contract.
    unsafe {
        query("cf_scalars_duration", scalars, out, |e: &ScalarEntry| {
            e.reader().duration()
        })
    }
}

/// The name of `track`, copied as `cf_clip_bone_name` copies a bone's.
///
/// # Safety
/// `buf` points to `buf_len` writable bytes; `name_len` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_scalars_track_name(
    scalars: cf_scalars,
    track: u32,
    buf: *mut c_char,
    buf_len: usize,
    name_len: *mut usize,
) -> cf_status {
    call("cf_scalars_track_name", || {
        with_scalars(scalars, |r| {
            let tr = bone_index(track, r.num_tracks(), "track")?;
            // SAFETY: per this function's contract.
            unsafe { copy_name(r.track_name(tr), buf, buf_len, name_len) }
        })
    })
}

/// Samples every track at `time` seconds into `out`, track-major: track i's `width` floats at
/// `out[i × width ..]`; `out_len` must be at least tracks × width.
///
/// # Safety
/// `out` points to `out_len` writable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_scalars_sample_all(
    scalars: cf_scalars,
    time: f32,
    looping: cf_looping,
    out: *mut f32,
    out_len: usize,
) -> cf_status {
    call("cf_scalars_sample_all", || {
        let t = self::time(time)?;
        let l = self::looping(looping)?;
        with_scalars(scalars, |r| {
            let w = r.track_type().width();
            let n = r.num_tracks();
            if n == 0 {
                return Ok(()); // nothing to write: any pointer will do
            }
            checked(out.cast_const(), "out")?;
            let dst = out_array(out, out_len, n.checked_mul(w), "out")?;
            let mut v = [0.0f32; 4];
            for track in 0..n {
                r.sample_track(track, t, l, &mut v);
                // SAFETY: `out` holds at least n × w floats (checked above).
                unsafe { put(dst, track * w, &v[..w]) };
            }
            Ok(())
        })
    })
}

/// Samples the tracks listed in `tracks[0..num_tracks]` at `time` seconds into `out`, packed in
/// list order (`width` floats each; `out_len` at least `num_tracks` × width). Every index is
/// checked before anything is written.
///
/// # Safety
/// `tracks` points to `num_tracks` readable `uint32_t`s; `out` points to
/// `out_len` writable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_scalars_sample_tracks(
    scalars: cf_scalars,
    time: f32,
    looping: cf_looping,
    tracks: *const u32,
    num_tracks: usize,
    out: *mut f32,
    out_len: usize,
) -> cf_status {
    call("cf_scalars_sample_tracks", || {
        let t = self::time(time)?;
        let l = self::looping(looping)?;
        let list = array(tracks, num_tracks, Some(num_tracks), "tracks")?;
        with_scalars(scalars, |r| {
            let w = r.track_type().width();
            let dst = out_array(out, out_len, num_tracks.checked_mul(w), "out")?;
            let Some(list) = list else {
                return Ok(());
            };
            let n = r.num_tracks();
            for i in 0..num_tracks {
                // SAFETY: `i < num_tracks`, the list's length (contract).
                bone_index(unsafe { index_at(list, i) }, n, "track index").map_err(|e| Fail {
                    detail: format!("tracks[{i}]: {}", e.detail),
                    ..e
                })?;
            }
            let mut v = [0.0f32; 4];
            for i in 0..num_tracks {
                // SAFETY: as above; read again in case `out` overlaps the list.
                let tr = bone_index(unsafe { index_at(list, i) }, n, "track index")?;
                r.sample_track(tr, t, l, &mut v);
                // SAFETY: `out` holds at least num_tracks × w floats (checked above).
                unsafe { put(dst, i * w, &v[..w]) };
            }
            Ok(())
        })
    })
}
