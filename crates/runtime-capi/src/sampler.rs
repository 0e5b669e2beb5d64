//! `cf_sampler`: the runtime's [`Sampler`] through the C API, a clip's sampling context for one
//! character (as ozz's `SamplingJob::Context`): it keeps the current segment's dequantisation
//! and the last decoded samples between calls, so a character playing the clip pays only the
//! blend on most frames. The same poses, bit for bit, as `cf_clip_sample_into` (and the Rust
//! `ClipReader::sample_pose_into`).
//!
//! A sampler is a generation-checked handle like a clip's ([`super::handles`]); it holds the
//! clip's reader and buffer alive itself (an `Arc` shared with the clip handle), so freeing the
//! clip first is allowed and its samplers keep working. Calls on one sampler take it `&mut`:
//! a mutex per sampler serialises calls from several threads on the same one (one sampler per
//! character and thread is the intended use; the lock is then uncontended).

use super::*;
use clipforge_runtime::Sampler;
use std::sync::{Arc, Mutex, MutexGuard};

/// A sampling context of one clip for one character. Zero is never a live handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cf_sampler {
    pub id: u64,
}

/// A sampler over its clip's shared reader. `sampler` borrows `clip`'s reader, whose heap
/// memory never moves while the `Arc` lives; it is declared first so it is dropped first.
struct SamplerEntry {
    sampler: Mutex<Sampler<'static, 'static>>,
    clip: Arc<ClipData>,
}

impl SamplerEntry {
    fn new(clip: Arc<ClipData>) -> Self {
        SamplerEntry {
            // SAFETY: see `reader_static`.
            sampler: Mutex::new(Sampler::new(unsafe { reader_static(&clip) })),
            clip,
        }
    }

    /// The sampler, for one call. A call that panicked inside it (a bug) may have left its cache
    /// half written: it is replaced by a fresh sampler (the cache refills on the next call).
    fn lock(&self) -> MutexGuard<'_, Sampler<'static, 'static>> {
        self.sampler.lock().unwrap_or_else(|poisoned| {
            let mut g = poisoned.into_inner();
            // SAFETY: see `reader_static`.
            *g = Sampler::new(unsafe { reader_static(&self.clip) });
            self.sampler.clear_poison();
            g
        })
    }
}

/// The clip's reader with its borrow widened to `'static`, for a sampler stored beside the `Arc`.
///
/// # Safety
/// The returned reference must not outlive `clip`'s `Arc` (the entry drops its sampler first).
unsafe fn reader_static(clip: &Arc<ClipData>) -> &'static ClipReader<'static> {
    // SAFETY: the reader lives in the `Arc`'s heap allocation, which does not move; the caller
    // keeps the `Arc` alive for as long as the reference is used.
    unsafe { &*(clip.reader() as *const ClipReader<'_>).cast::<ClipReader<'static>>() }
}

impl Kind for SamplerEntry {
    type Handle = cf_sampler;
    const KIND: &'static str = "cf_sampler";
    fn table() -> &'static handles::Table<Self> {
        &SAMPLERS
    }
    fn id(h: cf_sampler) -> u64 {
        h.id
    }
    fn handle(id: u64) -> cf_sampler {
        cf_sampler { id }
    }
}

static SAMPLERS: handles::Table<SamplerEntry> = handles::Table::new(0x5A);

/// Creates a sampler of `clip` in `*out` (the zero handle on failure, when `out` is usable). The
/// sampler keeps the clip's data alive: `clip` may be freed before it. Allocates the sampler's
/// cache (a few hundred bytes per four animated sub-tracks); sampling through it does not
/// allocate.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_sampler_create(clip: cf_clip, out: *mut cf_sampler) -> cf_status {
    let mut id = 0;
    let status = call("cf_sampler_create", || {
        checked(out.cast_const(), "out")?;
        let data = with(clip, |e: &ClipEntry| Ok(Arc::clone(&e.data)))?;
        id = SAMPLERS
            .insert(Box::new(SamplerEntry::new(data)))
            .map_err(|_| Fail {
                status: cf_status::CF_ERR_TOO_MANY_HANDLES,
                detail: "every cf_sampler handle is in use (1,048,576 live at once)".into(),
            })?;
        Ok(())
    });
    if !out.is_null() && out.is_aligned() {
        // SAFETY: writable per the contract.
        unsafe { out.write(cf_sampler { id }) };
    }
    status
}

/// Frees a sampler (waiting for a call in flight on it). Afterwards every call with this handle,
/// `cf_sampler_free` included, returns `CF_ERR_INVALID_HANDLE`.
#[unsafe(no_mangle)]
pub extern "C" fn cf_sampler_free(sampler: cf_sampler) -> cf_status {
    free::<SamplerEntry>("cf_sampler_free", sampler)
}

/// `cf_clip_sample_into` through the sampler: every bone of its clip at `time` seconds into
/// `pose` (`num_bones` equal to the clip's, else `CF_ERR_LENGTH_MISMATCH`), the same values
/// bit for bit, faster when consecutive calls stay in one segment of the clip (playback).
/// `CF_DEFAULTS_SKIP` leaves the default sub-tracks as they are in `pose`. Nothing is written
/// unless every check passes; no allocation after a thread's first call with its largest
/// skeleton (only when `pose`'s arrays overlap, which goes through a per-thread copy).
///
/// # Safety
/// `pose`'s arrays point to 4 × `num_bones` writable floats each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_sampler_sample_into(
    sampler: cf_sampler,
    time: f32,
    looping: cf_looping,
    defaults: cf_defaults,
    pose: cf_pose,
) -> cf_status {
    call("cf_sampler_sample_into", || {
        let t = super::time(time)?;
        let l = super::looping(looping)?;
        let d = super::defaults(defaults)?;
        with(sampler, |e: &SamplerEntry| {
            let out = pose_out(&pose, e.clip.reader().num_bones(), "pose")?;
            let mut s = e.lock();
            // SAFETY: `out` was checked for `n` bones.
            if let Some(direct) = unsafe { out.as_pose_mut() } {
                return s.sample_pose_into(t, l, d, direct).map_err(sample_error);
            }
            with_scratch(out.n, |scratch| {
                s.sample_pose_into(t, l, d, scratch.pose.as_pose_mut())
                    .map_err(sample_error)?;
                // SAFETY: `out` was checked for `n` bones; the scratch is this library's.
                unsafe {
                    match d {
                        Defaults::Write => out.copy_all(&scratch.pose),
                        Defaults::Skip => out.copy_stored(&scratch.pose, &e.clip.stored),
                    }
                }
                Ok(())
            })
        })
    })
}
