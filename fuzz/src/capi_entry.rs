//! Entry point of the `capi` fuzz target: the C API of the runtime (`clipforge-runtime-capi`)
//! driven by a random program, as a careless or hostile C caller would drive it.
//!
//! Shared by the libFuzzer binary (`fuzz/fuzz_targets/capi.rs`) and the seed/regression replay
//! in `crates/runtime-capi/tests/fuzz_capi.rs` (which includes this file with `#[path]`), so a
//! saved input goes through exactly the code that found it. It depends on
//! `clipforge_runtime_capi` and `std` only.
//!
//! The input is a program: each step is an opcode byte and its operands, read from the input
//! (running out of bytes ends the program; missing operands read as zeros). Steps create clip
//! and scalar readers from buffers embedded in the input (optionally resealed: size and CRC-32
//! fixed, so mutations reach the checks behind the checksum), with NULL pointers and shortened
//! sizes; free them, twice, or free forged handles; query and sample through live, freed, forged
//! and wrong-kind handles with random times (NaN, infinities), looping values, bone and track
//! indices and output arrays that are exact, short, long, NULL, NULL with a length, misaligned.
//!
//! Three more steps: sampling into a `cf_pose` (write or skip defaults, the bind pose, an additive
//! layer onto a base) with poses of the right, wrong and zero size, NULL and misaligned arrays;
//! samplers (`cf_sampler_*`): created from live, freed and forged clips, freed (twice), and
//! sampled at random times, also after their clip was freed; and the five jobs (`cf_<job>_validate`, then `cf_<job>_run`) on random small skeletons and
//! meshes: counts off by one, NULL, misaligned and overlapping arrays, parents out of order,
//! joints out of range, NaN weights, bad influence, layout, SIMD and layer counts.
//!
//! Contract (besides "no panic, abort, hang or blow-up"; off with `CLIPFORGE_FUZZ_LAX=1`):
//! - no call returns `CF_ERR_INTERNAL` (a caught panic inside the library);
//! - a handle this program freed (or never had) is refused: never `CF_OK`, and `free` of a live
//!   handle succeeds exactly once;
//! - a failed create writes the zero handle;
//! - a call that fails leaves every output array untouched; one that succeeds writes finite
//!   values, and never past the length it was given (guard floats after each array);
//! - a job's validate writes nothing, and run returns what validate returned; an output
//!   overlapping another array is never accepted;
//! - a sampler's pose equals `cf_clip_sample_into`'s on its clip bit for bit, whatever calls came
//!   before (its cache), and a sampler outlives its freed clip handle.

use clipforge_runtime_capi::cf_status::*;
use clipforge_runtime_capi::*;
use std::collections::{HashMap, HashSet};
use std::ptr::{null, null_mut};

/// Steps run per input at most (the rest of a long input is ignored).
const MAX_STEPS: usize = 512;
/// Floats after every output array that no call may touch.
const GUARD: usize = 8;
const MARK: f32 = -7.25e-33;

/// What one run did (the seed test checks that the committed seed reaches the valid paths).
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    pub clips_created: usize,
    pub scalars_created: usize,
    pub samples_ok: usize,
    /// Jobs that validated and ran.
    pub jobs_ok: usize,
    /// Jobs refused (by the pointer checks or the job's validate).
    pub jobs_refused: usize,
    /// Calls on a handle this program had freed, each refused.
    pub stale_refused: usize,
    pub samplers_created: usize,
    /// Sampler poses compared bit for bit with the clip's.
    pub sampler_samples_ok: usize,
}

fn strict() -> bool {
    static STRICT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *STRICT.get_or_init(|| std::env::var_os("CLIPFORGE_FUZZ_LAX").is_none())
}

struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    fn take(&mut self, n: usize) -> &'a [u8] {
        let end = self.pos.saturating_add(n).min(self.data.len());
        let s = &self.data[self.pos..end];
        self.pos = end;
        s
    }
    fn u8(&mut self) -> u8 {
        self.take(1).first().copied().unwrap_or(0)
    }
    fn u16(&mut self) -> u16 {
        u16::from(self.u8()) | u16::from(self.u8()) << 8
    }
    fn u32(&mut self) -> u32 {
        u32::from(self.u16()) | u32::from(self.u16()) << 16
    }
    fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }
    /// A time: special values half the time, raw bits otherwise.
    fn time(&mut self) -> f32 {
        const SPECIAL: [f32; 12] = [
            0.0,
            -0.0,
            0.016,
            0.5,
            1.0,
            -1.0,
            1e9,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let b = self.u8();
        if b & 1 == 0 {
            SPECIAL[(b as usize >> 1) % SPECIAL.len()]
        } else {
            f32::from_bits(self.u32())
        }
    }
    /// A looping value: mostly the two valid ones, sometimes anything.
    fn looping(&mut self) -> cf_looping {
        match self.u8() {
            0..=119 => CF_LOOPING_CLAMP,
            120..=239 => CF_LOOPING_WRAP,
            b => b as u32 * 0x0101_0101,
        }
    }
}

/// CRC-32 (IEEE, the formats' checksum; docs/FORMAT.md), bitwise: no dependency on the runtime.
fn crc32(parts: &[&[u8]]) -> u32 {
    let mut c = !0u32;
    for p in parts {
        for &b in *p {
            c ^= b as u32;
            for _ in 0..8 {
                c = (c >> 1) ^ (0xEDB8_8320 & (c & 1).wrapping_neg());
            }
        }
    }
    !c
}

/// Reseals a `.cfa` (size at 12..16, CRC at 8..12 over the rest) or `.cfs` (CRC at 20..24).
pub fn reseal(buf: &mut [u8]) {
    if buf.len() >= 16 && &buf[..4] == b"CFA1" {
        let len = buf.len() as u32;
        buf[12..16].copy_from_slice(&len.to_le_bytes());
        let crc = crc32(&[&buf[..8], &buf[12..]]);
        buf[8..12].copy_from_slice(&crc.to_le_bytes());
    } else if buf.len() >= 24 && &buf[..4] == b"CFS1" {
        let crc = crc32(&[&buf[..20], &buf[24..]]);
        buf[20..24].copy_from_slice(&crc.to_le_bytes());
    }
}

/// An output array of `len` floats as a call sees it, with guards after it.
struct OutArray {
    buf: Vec<f32>,
    len: usize,
    /// Passed as NULL (with `len`, possibly non-zero).
    null: bool,
    /// Passed one byte off its alignment.
    misaligned: bool,
}

impl OutArray {
    /// `mode` picks the shape relative to the `needed` floats.
    fn new(mode: u8, needed: usize) -> Self {
        let (len, null, misaligned) = match mode % 8 {
            0 | 1 => (needed, false, false),
            2 => (needed.saturating_sub(1), false, false),
            3 => (0, true, false),
            4 => (needed.max(1), true, false),
            5 => (needed + 3, false, false),
            6 => (needed, false, true),
            _ => (0, false, false),
        };
        Self {
            buf: vec![MARK; len + GUARD + 1],
            len,
            null,
            misaligned,
        }
    }
    fn ptr(&mut self) -> *mut f32 {
        if self.null {
            null_mut()
        } else if self.misaligned {
            // One byte into the buffer: never written through (the call must refuse it).
            self.buf.as_mut_ptr().cast::<u8>().wrapping_add(1).cast()
        } else {
            self.buf.as_mut_ptr()
        }
    }
    fn untouched(&self) -> bool {
        self.buf.iter().all(|x| x.to_bits() == MARK.to_bits())
    }
    /// After success: the first `written` floats finite, the rest (and the guards) untouched.
    fn check_written(&self, written: usize, what: &str) {
        if self.null || self.misaligned {
            assert!(self.untouched(), "{what}: a skipped array was written");
            return;
        }
        for (i, x) in self.buf.iter().enumerate() {
            if i < written {
                assert!(x.is_finite(), "{what}: value {i} is {x}");
            } else {
                assert_eq!(
                    x.to_bits(),
                    MARK.to_bits(),
                    "{what}: wrote float {i} of {written}"
                );
            }
        }
    }
}

struct Vm {
    clips: [u64; 4],
    scalars: [u64; 4],
    samplers: [u64; 4],
    live_clips: HashSet<u64>,
    live_scalars: HashSet<u64>,
    /// Live samplers: the clip each was created from (which may be freed since), its bones.
    live_samplers: HashMap<u64, (u64, usize)>,
    freed: HashSet<u64>,
    strict: bool,
    stats: Stats,
}

impl Vm {
    fn check(&mut self, status: cf_status, handle: u64, live: bool, what: &str) {
        if !self.strict {
            return;
        }
        assert_ne!(
            status,
            CF_ERR_INTERNAL,
            "{what}: internal error: {}",
            last_error()
        );
        if !live {
            assert_ne!(
                status, CF_OK,
                "{what}: a handle that is not live ({handle:#x}) was accepted"
            );
            if self.freed.contains(&handle) {
                self.stats.stale_refused += 1;
            }
        } else {
            assert_ne!(
                status, CF_ERR_INVALID_HANDLE,
                "{what}: a live handle was refused"
            );
        }
    }

    fn pick(slots: &[u64; 4], inp: &mut Input) -> u64 {
        let b = inp.u8();
        if b >= 0xF0 {
            inp.u64()
        } else {
            slots[b as usize % 4]
        }
    }

    fn create(&mut self, inp: &mut Input, scalars: bool) {
        let flags = inp.u8();
        let slot = inp.u8() as usize % 4;
        let len = inp.u16() as usize;
        let mut bytes = inp.take(len).to_vec();
        if flags & 1 != 0 {
            reseal(&mut bytes);
        }
        // Never longer than the bytes: a size past the buffer is the caller's undefined behaviour.
        let size = bytes
            .len()
            .saturating_sub((flags >> 4) as usize * (flags >> 3 & 1) as usize);
        let data = if flags & 2 != 0 {
            null()
        } else {
            bytes.as_ptr()
        };
        let null_out = flags & 4 != 0;
        let mut id = 0xDEAD_u64;
        let status = unsafe {
            if scalars {
                let mut h = cf_scalars { id };
                let out = if null_out {
                    null_mut()
                } else {
                    &mut h as *mut _
                };
                let s = cf_scalars_create(data, size, out);
                id = h.id;
                s
            } else {
                let mut h = cf_clip { id };
                let out = if null_out {
                    null_mut()
                } else {
                    &mut h as *mut _
                };
                let s = cf_clip_create(data, size, out);
                id = h.id;
                s
            }
        };
        if self.strict {
            assert_ne!(status, CF_ERR_INTERNAL, "create: {}", last_error());
            if status == CF_OK {
                assert!(!null_out && !data.is_null());
                assert_ne!(id, 0, "create returned the zero handle");
            } else if !null_out {
                assert_eq!(id, 0, "a failed create left {id:#x} in *out");
            } else {
                assert_eq!(id, 0xDEAD, "a NULL out was written?");
            }
        }
        if status == CF_OK {
            if scalars {
                self.stats.scalars_created += 1;
                self.live_scalars.insert(id);
                self.scalars[slot] = id;
            } else {
                self.stats.clips_created += 1;
                self.live_clips.insert(id);
                self.clips[slot] = id;
            }
        }
    }

    fn free(&mut self, inp: &mut Input, scalars: bool) {
        let h = Self::pick(if scalars { &self.scalars } else { &self.clips }, inp);
        let (status, live) = if scalars {
            (
                cf_scalars_free(cf_scalars { id: h }),
                self.live_scalars.remove(&h),
            )
        } else {
            (cf_clip_free(cf_clip { id: h }), self.live_clips.remove(&h))
        };
        if self.strict {
            assert_ne!(status, CF_ERR_INTERNAL);
            if live {
                assert_eq!(
                    status,
                    CF_OK,
                    "free of a live handle failed: {}",
                    last_error()
                );
            } else {
                assert_eq!(
                    status, CF_ERR_INVALID_HANDLE,
                    "free of a dead handle {h:#x}"
                );
                if self.freed.contains(&h) {
                    self.stats.stale_refused += 1;
                }
            }
        }
        if live {
            self.freed.insert(h);
        }
    }

    fn num_bones(&self, h: u64) -> usize {
        let mut n = 0u32;
        unsafe { cf_clip_num_bones(cf_clip { id: h }, &mut n) };
        n as usize
    }

    fn clip_query(&mut self, inp: &mut Input) {
        let h = Self::pick(&self.clips, inp);
        let clip = cf_clip { id: h };
        let live = self.live_clips.contains(&h);
        let sel = inp.u8();
        let null_out = sel & 0x80 != 0;
        let mut u = 0u32;
        let mut f = 0f32;
        let pu: *mut u32 = if null_out { null_mut() } else { &mut u };
        let pf: *mut f32 = if null_out { null_mut() } else { &mut f };
        let status = unsafe {
            match sel % 8 {
                0 => cf_clip_num_bones(clip, pu),
                1 => cf_clip_num_samples(clip, pu),
                2 => cf_clip_sample_rate(clip, pf),
                3 => cf_clip_duration(clip, pf),
                4 => cf_clip_bone_parent(clip, inp.u16() as u32, pu),
                5 => {
                    let mut out = vec![0x5A5A_5A5Au32; inp.u8() as usize + GUARD];
                    let len = out.len() - GUARD;
                    let p = if null_out {
                        null_mut()
                    } else {
                        out.as_mut_ptr()
                    };
                    let s = cf_clip_parents(clip, p, len);
                    if self.strict && s != CF_OK {
                        assert!(
                            out.iter().all(|&x| x == 0x5A5A_5A5A),
                            "failed parents wrote"
                        );
                    }
                    if self.strict && s == CF_OK {
                        let n = self.num_bones(h);
                        assert!(
                            out[n..].iter().all(|&x| x == 0x5A5A_5A5A),
                            "parents wrote past n"
                        );
                        for (b, &p) in out[..n].iter().enumerate() {
                            assert!(
                                p == CF_NO_PARENT || (p as usize) < b,
                                "parent {p} of bone {b}"
                            );
                        }
                    }
                    s
                }
                6 => {
                    let cap = inp.u8() as usize;
                    let mut buf = vec![0x77u8; cap + GUARD];
                    let mut len = usize::MAX;
                    let p = if sel & 0x40 != 0 {
                        null_mut()
                    } else {
                        buf.as_mut_ptr().cast()
                    };
                    let lp: *mut usize = if null_out { null_mut() } else { &mut len };
                    let s = cf_clip_bone_name(clip, inp.u16() as u32, p, cap, lp);
                    if self.strict {
                        assert!(
                            buf[cap..].iter().all(|&b| b == 0x77),
                            "bone name wrote past its buffer"
                        );
                        if s == CF_OK && !p.is_null() {
                            assert!(len < cap && buf[len] == 0, "name not NUL-terminated");
                        }
                    }
                    s
                }
                _ => {
                    let len = inp.u8() as usize;
                    let name = inp.take(len);
                    let np = if sel & 0x40 != 0 {
                        null()
                    } else {
                        name.as_ptr().cast()
                    };
                    cf_clip_find_bone(clip, np, name.len(), pu)
                }
            }
        };
        self.check(status, h, live, "clip query");
    }

    fn sample(&mut self, inp: &mut Input, which: u8) {
        let h = Self::pick(&self.clips, inp);
        let clip = cf_clip { id: h };
        let live = self.live_clips.contains(&h);
        let t = inp.time();
        let looping = inp.looping();
        let modes = [inp.u8(), inp.u8(), inp.u8()];
        // A dead handle's arrays are sized from the input (the call must refuse them anyway).
        let guess = inp.u8() as usize;
        let n = if live { self.num_bones(h) } else { guess };
        let (status, what) = match which {
            0 => {
                let mut a: Vec<OutArray> = (0..3)
                    .map(|k| OutArray::new(modes[k], n * [4, 3, 3][k]))
                    .collect();
                let s = unsafe {
                    let (p0, p1, p2) = (a[0].ptr(), a[1].ptr(), a[2].ptr());
                    cf_clip_sample_pose(clip, t, looping, p0, a[0].len, p1, a[1].len, p2, a[2].len)
                };
                self.outputs(s, &a, n, "sample_pose");
                (s, "sample_pose")
            }
            1 => {
                let bone = inp.u16() as u32 % (n as u32 + 2);
                let mut a: Vec<OutArray> = (0..3)
                    .map(|k| {
                        // Fixed sizes: NULL or a full array (a short one would be the caller's UB).
                        OutArray::new(
                            if modes[k] % 8 == 3 {
                                3
                            } else if modes[k] % 8 == 6 {
                                6
                            } else {
                                0
                            },
                            [4, 3, 3][k],
                        )
                    })
                    .collect();
                let s = unsafe {
                    let (p0, p1, p2) = (a[0].ptr(), a[1].ptr(), a[2].ptr());
                    cf_clip_sample_bone(clip, bone, t, looping, p0, p1, p2)
                };
                self.outputs(s, &a, 1, "sample_bone");
                (s, "sample_bone")
            }
            _ => {
                let k = inp.u8() as usize % 24;
                let mut list: Vec<u32> =
                    (0..k).map(|_| inp.u16() as u32 % (n as u32 + 2)).collect();
                let list_null = modes[0] & 0x80 != 0;
                let mut a: Vec<OutArray> = (0..3)
                    .map(|j| OutArray::new(modes[j], k * [4, 3, 3][j]))
                    .collect();
                let lp = if list_null {
                    null()
                } else {
                    list.as_mut_ptr().cast_const()
                };
                let s = unsafe {
                    let (p0, p1, p2) = (a[0].ptr(), a[1].ptr(), a[2].ptr());
                    cf_clip_sample_bones(
                        clip, t, looping, lp, k, p0, a[0].len, p1, a[1].len, p2, a[2].len,
                    )
                };
                self.outputs(s, &a, k, "sample_bones");
                (s, "sample_bones")
            }
        };
        self.check(status, h, live, what);
        if status == CF_OK {
            self.stats.samples_ok += 1;
        }
    }

    /// Output contract of a sampling call writing `items` transforms.
    fn outputs(&self, status: cf_status, arrays: &[OutArray], items: usize, what: &str) {
        if !self.strict {
            return;
        }
        if status == CF_OK {
            for (k, a) in arrays.iter().enumerate() {
                a.check_written(items * [4, 3, 3][k], what);
            }
        } else {
            assert!(
                arrays.iter().all(OutArray::untouched),
                "{what} failed ({status:?}) but wrote an output"
            );
        }
    }

    fn scalar_ops(&mut self, inp: &mut Input) {
        let h = Self::pick(&self.scalars, inp);
        let sc = cf_scalars { id: h };
        let live = self.live_scalars.contains(&h);
        let sel = inp.u8();
        let (mut tracks, mut width) = (0u32, 0u32);
        unsafe {
            cf_scalars_num_tracks(sc, &mut tracks);
            cf_scalars_track_width(sc, &mut width);
        }
        let (tracks, width) = (tracks as usize, width as usize);
        let t = inp.time();
        let looping = inp.looping();
        let status = unsafe {
            match sel % 5 {
                0 => {
                    let mut u = 0u32;
                    let mut f = 0f32;
                    match sel / 5 % 5 {
                        0 => cf_scalars_num_samples(sc, &mut u),
                        1 => cf_scalars_sample_rate(sc, &mut f),
                        2 => cf_scalars_duration(sc, &mut f),
                        3 => cf_scalars_num_tracks(sc, null_mut()),
                        _ => cf_scalars_track_width(sc, &mut u),
                    }
                }
                1 => {
                    let cap = inp.u8() as usize;
                    let mut buf = vec![0x77u8; cap + GUARD];
                    let mut len = 0usize;
                    let s = cf_scalars_track_name(
                        sc,
                        inp.u16() as u32,
                        buf.as_mut_ptr().cast(),
                        cap,
                        &mut len,
                    );
                    if self.strict {
                        assert!(
                            buf[cap..].iter().all(|&b| b == 0x77),
                            "track name wrote past its buffer"
                        );
                    }
                    s
                }
                2 | 3 => {
                    let mut a = OutArray::new(inp.u8(), tracks * width);
                    let s = cf_scalars_sample_all(sc, t, looping, a.ptr(), a.len);
                    if self.strict {
                        if s == CF_OK {
                            a.check_written(tracks * width, "scalars_sample_all");
                        } else {
                            assert!(a.untouched(), "scalars_sample_all failed but wrote");
                        }
                    }
                    s
                }
                _ => {
                    let k = inp.u8() as usize % 16;
                    let list: Vec<u32> = (0..k)
                        .map(|_| inp.u16() as u32 % (tracks as u32 + 2))
                        .collect();
                    let mut a = OutArray::new(inp.u8(), k * width.max(1));
                    let s =
                        cf_scalars_sample_tracks(sc, t, looping, list.as_ptr(), k, a.ptr(), a.len);
                    if self.strict {
                        if s == CF_OK {
                            a.check_written(k * width, "scalars_sample_tracks");
                        } else {
                            assert!(a.untouched(), "scalars_sample_tracks failed but wrote");
                        }
                    }
                    s
                }
            }
        };
        self.check(status, h, live, "scalars");
    }

    fn messages(&mut self, inp: &mut Input) {
        let code = inp.u32() as i32;
        let m = unsafe { std::ffi::CStr::from_ptr(cf_error_message(code)) };
        assert!(!m.is_empty());
        let cap = inp.u8() as usize;
        let mut buf = vec![0x33u8; cap + GUARD];
        let n = unsafe { cf_last_error(buf.as_mut_ptr().cast(), cap) };
        if cap > 0 {
            assert_eq!(buf[n.min(cap - 1)], 0, "last error not NUL-terminated");
        }
        assert!(
            buf[cap..].iter().all(|&b| b == 0x33),
            "last error wrote past its buffer"
        );
    }

    /// Frees everything still live (each exactly once), then checks every freed handle stays dead.
    fn finish(mut self) -> Stats {
        for h in std::mem::take(&mut self.live_clips) {
            assert_eq!(cf_clip_free(cf_clip { id: h }), CF_OK);
            self.freed.insert(h);
        }
        for h in std::mem::take(&mut self.live_scalars) {
            assert_eq!(cf_scalars_free(cf_scalars { id: h }), CF_OK);
            self.freed.insert(h);
        }
        for (h, _) in std::mem::take(&mut self.live_samplers) {
            assert_eq!(cf_sampler_free(cf_sampler { id: h }), CF_OK);
            self.freed.insert(h);
        }
        for &h in &self.freed {
            let mut n = 0u32;
            let s = unsafe { cf_clip_num_bones(cf_clip { id: h }, &mut n) };
            let s2 = unsafe { cf_scalars_num_tracks(cf_scalars { id: h }, &mut n) };
            let s3 = cf_sampler_free(cf_sampler { id: h });
            if self.strict {
                assert_eq!(
                    (s, s2, s3),
                    (
                        CF_ERR_INVALID_HANDLE,
                        CF_ERR_INVALID_HANDLE,
                        CF_ERR_INVALID_HANDLE
                    ),
                    "{h:#x} lives on"
                );
            }
        }
        self.stats
    }
}

/// 16 bytes, 16-aligned: what `cf_pose` arrays and matrices need.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct F4([f32; 4]);

/// A caller's float array of `len` floats (16-aligned) and guard floats after it.
struct Buf {
    v: Vec<F4>,
    len: usize,
    /// How it is passed: 0 as is, 1 NULL, 2 one byte off its alignment.
    shape: u8,
}

impl Buf {
    fn new(len: usize, shape: u8) -> Self {
        Buf {
            v: vec![F4([MARK; 4]); len.div_ceil(4) + GUARD / 4 + 1],
            len,
            shape,
        }
    }
    /// An input: the first `len` floats from the input (small values, sometimes NaN).
    fn input(len: usize, shape: u8, inp: &mut Input) -> Self {
        let mut b = Self::new(len, shape);
        for i in 0..len {
            let x = inp.u8();
            b.v[i / 4].0[i % 4] = if x == 0xFF {
                f32::NAN
            } else {
                (x as f32 - 100.0) / 64.0
            };
        }
        b
    }
    fn floats(&self) -> impl Iterator<Item = &f32> {
        self.v.iter().flat_map(|f| f.0.iter())
    }
    fn ptr(&mut self) -> *mut f32 {
        match self.shape {
            1 => null_mut(),
            2 => self.v.as_mut_ptr().cast::<u8>().wrapping_add(1).cast(),
            _ => self.v.as_mut_ptr().cast(),
        }
    }
    fn untouched(&self) -> bool {
        self.floats().all(|x| x.to_bits() == MARK.to_bits())
    }
    /// Nothing written past `len` floats.
    fn guards_ok(&self) -> bool {
        self.floats()
            .skip(self.len)
            .all(|x| x.to_bits() == MARK.to_bits())
    }
}

/// A pose of `n` bones in three `Buf`s (input values or marks).
struct PoseBufs([Buf; 3], usize);

impl PoseBufs {
    fn new(n: usize, shapes: [u8; 3], input: Option<&mut Input>) -> Self {
        match input {
            Some(inp) => PoseBufs(shapes.map(|s| Buf::input(4 * n, s, inp)), n),
            None => PoseBufs(shapes.map(|s| Buf::new(4 * n, s)), n),
        }
    }
    fn c(&mut self) -> cf_pose {
        let [r, t, s] = &mut self.0;
        cf_pose {
            rotations: r.ptr(),
            translations: t.ptr(),
            scales: s.ptr(),
            num_bones: self.1,
        }
    }
    fn untouched(&self) -> bool {
        self.0.iter().all(Buf::untouched)
    }
    fn guards_ok(&self) -> bool {
        self.0.iter().all(Buf::guards_ok)
    }
}

/// A pointer shape from a mode byte: mostly as is, sometimes NULL or misaligned.
fn shape(m: u8) -> u8 {
    match m % 16 {
        14 => 1,
        15 => 2,
        _ => 0,
    }
}

/// A joint index: mostly one of `limit`, sometimes just past it or far out.
fn joint(inp: &mut Input, limit: usize) -> u16 {
    match inp.u8() {
        0xFE => limit as u16,
        0xFF => u16::MAX,
        x => x as u16 % (limit as u16).max(1),
    }
}

/// A count near `n`: mostly exact, sometimes one more or one less.
fn near(n: usize, m: u8) -> usize {
    match m >> 5 {
        6 => n + 1,
        7 => n.saturating_sub(1),
        _ => n,
    }
}

impl Vm {
    /// Sampling into a `cf_pose`: write / skip defaults, the bind pose, additive onto a base.
    fn pose_sample(&mut self, inp: &mut Input) {
        let h = Self::pick(&self.clips, inp);
        let clip = cf_clip { id: h };
        let live = self.live_clips.contains(&h);
        let sel = inp.u8();
        let t = inp.time();
        let looping = inp.looping();
        let m = [inp.u8(), inp.u8(), inp.u8()];
        let n = near(
            if live {
                self.num_bones(h)
            } else {
                inp.u8() as usize % 8
            },
            m[0],
        );
        let mut pose = PoseBufs::new(n, m.map(shape), None);
        let status = unsafe {
            match sel % 4 {
                0 | 1 => {
                    let defaults = if sel & 0x40 != 0 {
                        sel as u32 >> 6
                    } else {
                        sel as u32 & 1
                    };
                    cf_clip_sample_into(clip, t, looping, defaults, pose.c())
                }
                2 => cf_clip_bind_pose(clip, pose.c()),
                _ => {
                    // A base to add onto: the bind pose when the clip gives one, else marks.
                    let _ = cf_clip_bind_pose(clip, pose.c());
                    let before: Vec<u32> = pose
                        .0
                        .iter()
                        .flat_map(|b| b.floats().map(|x| x.to_bits()))
                        .collect();
                    let s = cf_clip_sample_additive_onto(clip, t, looping, pose.c());
                    if self.strict && s != CF_OK {
                        let after: Vec<u32> = pose
                            .0
                            .iter()
                            .flat_map(|b| b.floats().map(|x| x.to_bits()))
                            .collect();
                        assert_eq!(before, after, "a failed additive call changed its base");
                    }
                    self.check(s, h, live, "sample_additive_onto");
                    if self.strict {
                        assert!(pose.guards_ok(), "additive wrote past its pose");
                    }
                    return;
                }
            }
        };
        self.check(status, h, live, "sample_into");
        if !self.strict {
            return;
        }
        if status == CF_OK {
            self.stats.samples_ok += 1;
            assert!(pose.guards_ok(), "sample_into wrote past its pose");
            // Rotations: every float written and finite (or, skipped defaults, still marked).
            for x in pose.0[0].floats().take(4 * n) {
                assert!(x.is_finite(), "sample_into wrote {x}");
            }
        } else {
            assert!(pose.untouched(), "a failed sample_into wrote ({status:?})");
        }
    }

    /// A sampler step: create one from a clip slot (live, freed or forged; sometimes a NULL
    /// out), free one (live, freed or forged), or sample through one into a pose of the right,
    /// wrong or zero size, NULL or misaligned arrays; a pose it writes must be what
    /// `cf_clip_sample_into` writes on its clip (while that clip handle lives).
    fn sampler(&mut self, inp: &mut Input) {
        let sel = inp.u8();
        let slot = inp.u8() as usize % 4;
        match sel % 4 {
            0 => {
                let clip = Self::pick(&self.clips, inp);
                let live = self.live_clips.contains(&clip);
                let null_out = sel & 0x80 != 0;
                let mut h = cf_sampler { id: 0xDEAD };
                let out = if null_out {
                    null_mut()
                } else {
                    &mut h as *mut _
                };
                let status = unsafe { cf_sampler_create(cf_clip { id: clip }, out) };
                self.check(status, clip, live, "sampler_create");
                if self.strict {
                    if status == CF_OK {
                        assert!(!null_out);
                        assert_ne!(h.id, 0, "sampler_create returned the zero handle");
                    } else if !null_out {
                        assert_eq!(h.id, 0, "a failed sampler_create left {:#x}", h.id);
                    }
                }
                if status == CF_OK {
                    self.stats.samplers_created += 1;
                    let n = self.num_bones(clip);
                    self.live_samplers.insert(h.id, (clip, n));
                    self.samplers[slot] = h.id;
                }
            }
            1 => {
                let h = Self::pick(&self.samplers, inp);
                let live = self.live_samplers.remove(&h).is_some();
                let status = cf_sampler_free(cf_sampler { id: h });
                if self.strict {
                    assert_eq!(
                        status,
                        if live { CF_OK } else { CF_ERR_INVALID_HANDLE },
                        "sampler_free of {h:#x} (live: {live}): {}",
                        last_error()
                    );
                    if !live && self.freed.contains(&h) {
                        self.stats.stale_refused += 1;
                    }
                }
                if live {
                    self.freed.insert(h);
                }
            }
            _ => {
                let h = Self::pick(&self.samplers, inp);
                let sampled = self.live_samplers.get(&h).copied();
                let t = inp.time();
                let looping = inp.looping();
                let defaults = match inp.u8() {
                    0..=199 => CF_DEFAULTS_WRITE,
                    200..=249 => CF_DEFAULTS_SKIP,
                    b => b as u32,
                };
                let m = [inp.u8(), inp.u8(), inp.u8()];
                // The sampler's clip size (a dead handle's guessed).
                let n = near(
                    match sampled {
                        Some((_, n)) => n,
                        None => inp.u8() as usize % 64,
                    },
                    m[0],
                );
                let mut pose = PoseBufs::new(n, m.map(shape), None);
                let status = unsafe {
                    cf_sampler_sample_into(cf_sampler { id: h }, t, looping, defaults, pose.c())
                };
                self.check(status, h, sampled.is_some(), "sampler_sample_into");
                if !self.strict {
                    return;
                }
                if status != CF_OK {
                    assert!(
                        pose.untouched(),
                        "a failed sampler_sample_into wrote ({status:?})"
                    );
                    return;
                }
                assert!(pose.guards_ok(), "sampler_sample_into wrote past its pose");
                self.stats.samples_ok += 1;
                let Some((c, _)) = sampled.filter(|(c, _)| self.live_clips.contains(c)) else {
                    return;
                };
                // The same call on the clip, into a pose of the same shape: the same floats
                // (x, y, z of translations and scales: the fourth is padding).
                let mut want = PoseBufs::new(n, m.map(shape), None);
                let s = unsafe {
                    cf_clip_sample_into(cf_clip { id: c }, t, looping, defaults, want.c())
                };
                assert_eq!(
                    s,
                    CF_OK,
                    "the sampler sampled, its clip did not: {}",
                    last_error()
                );
                for k in 0..3 {
                    let width = if k == 0 { 4 } else { 3 };
                    let a = pose.0[k].floats().take(4 * n).enumerate();
                    let b: Vec<u32> = want.0[k]
                        .floats()
                        .take(4 * n)
                        .map(|x| x.to_bits())
                        .collect();
                    for (i, x) in a {
                        if i % 4 < width {
                            assert_eq!(
                                x.to_bits(),
                                b[i],
                                "sampler and clip differ: array {k}, float {i}, t={t}"
                            );
                        }
                    }
                }
                self.stats.sampler_samples_ok += 1;
            }
        }
    }

    /// One job, validated then run, with inputs and counts from a segment of the input (a u16
    /// length, then its bytes: the program goes on after it however much the job reads).
    fn job(&mut self, inp: &mut Input) {
        let len = inp.u16() as usize;
        let inp = &mut Input {
            data: inp.take(len),
            pos: 0,
        };
        let sel = inp.u8();
        let n = inp.u8() as usize % 9;
        let overlap = sel & 0x80 != 0;
        let (v, r, outs_ok) = match sel % 5 {
            0 => self.job_blend(inp, n, overlap),
            1 => self.job_l2o(inp, n, overlap),
            2 => self.job_palette(inp, n, overlap),
            3 => self.job_points(inp, n, overlap),
            _ => self.job_skin(inp, n, overlap),
        };
        if v == CF_OK {
            self.stats.jobs_ok += 1;
        } else {
            self.stats.jobs_refused += 1;
        }
        if !self.strict {
            return;
        }
        assert_ne!(v, CF_ERR_INTERNAL, "job {}: {}", sel % 5, last_error());
        assert_eq!(
            v,
            r,
            "job {}: validate and run disagree: {}",
            sel % 5,
            last_error()
        );
        assert!(outs_ok, "job {}: outputs written wrongly ({v:?})", sel % 5);
    }

    /// Checks a job's outputs: untouched after validate (`after_validate`), and after run
    /// untouched on failure, guards intact on success.
    fn outs_ok(bufs: &[&Buf], after_validate: bool, status: cf_status) -> bool {
        if after_validate || status != CF_OK {
            bufs.iter().all(|b| b.untouched())
        } else {
            bufs.iter().all(|b| b.guards_ok())
        }
    }

    fn job_blend(
        &mut self,
        inp: &mut Input,
        n: usize,
        overlap: bool,
    ) -> (cf_status, cf_status, bool) {
        let counts = inp.u8();
        let (nl, na) = if counts == 0xFF {
            (33, 0)
        } else {
            ((counts % 4) as usize, (counts >> 4 & 3) as usize)
        };
        let mut poses: Vec<PoseBufs> = Vec::new();
        let mut weights: Vec<Buf> = Vec::new();
        let mut specs = Vec::new();
        for _ in 0..nl + na {
            let m = [inp.u8(), inp.u8(), inp.u8(), inp.u8()];
            poses.push(PoseBufs::new(near(n, m[0]), [shape(m[1]), 0, 0], Some(inp)));
            let wm = inp.u8();
            weights.push(Buf::input(near(n, wm), shape(wm), inp));
            let weight = match m[2] % 8 {
                0 => f32::NAN,
                1 => 0.0,
                2 => -1.0,
                _ => (m[3] as f32) / 64.0,
            };
            specs.push((weight, m[2] & 0x80 != 0));
        }
        let rm = inp.u8();
        let mut rest = PoseBufs::new(near(n, rm), [shape(rm), 0, 0], Some(inp));
        let om = inp.u8();
        let mut out = PoseBufs::new(near(n, om), [shape(om), 0, 0], None);
        let threshold = match inp.u8() % 8 {
            0 => 0.0,
            1 => f32::NAN,
            2 => -0.5,
            _ => 0.1,
        };
        let layers: Vec<cf_blend_layer> = poses
            .iter_mut()
            .zip(weights.iter_mut())
            .zip(&specs)
            .map(|((p, w), &(weight, per_bone))| cf_blend_layer {
                pose: p.c(),
                weight,
                bone_weights: if per_bone { w.ptr() } else { null() },
                num_bone_weights: if per_bone { w.len } else { 0 },
            })
            .collect();
        let mut out_c = out.c();
        if overlap && !layers.is_empty() {
            out_c.translations = layers[0].pose.rotations;
        }
        let job = cf_blend_job {
            layers: layers.as_ptr(),
            num_layers: nl,
            additive: layers[nl.min(layers.len())..].as_ptr(),
            num_additive: na,
            rest: rest.c(),
            threshold,
            out: out_c,
        };
        let v = unsafe { cf_blend_validate(&job) };
        let after_v = out.untouched();
        let r = unsafe { cf_blend_run(&job) };
        let forced =
            overlap && !layers.is_empty() && n > 0 && out_c.num_bones > 0 && poses[0].1 > 0;
        let ok = after_v
            && Self::outs_ok(&out.0.iter().collect::<Vec<_>>(), false, r)
            && !(forced && r == CF_OK);
        (v, r, ok)
    }

    fn job_l2o(
        &mut self,
        inp: &mut Input,
        n: usize,
        overlap: bool,
    ) -> (cf_status, cf_status, bool) {
        let m = [inp.u8(), inp.u8(), inp.u8(), inp.u8()];
        let count = near(n, m[0]);
        let mut parents: Vec<u32> = (0..count + GUARD)
            .map(|b| match inp.u8() {
                0..=199 => b.checked_sub(1).map_or(CF_NO_PARENT, |p| p as u32),
                200..=239 => CF_NO_PARENT,
                x => x as u32 % (count as u32 + 2),
            })
            .collect();
        let mut local = PoseBufs::new(near(n, m[1]), [shape(m[1]), 0, 0], Some(inp));
        let mut out = PoseBufs::new(near(n, m[2]), [shape(m[2]), 0, 0], None);
        let (start, end) = match m[3] % 8 {
            0 => (1.min(n), n),
            1 => (n / 2, n + 1),
            2 => (n, n.saturating_sub(1)),
            _ => (0, n),
        };
        let simd = Self::simd(inp);
        let mut out_c = out.c();
        if overlap {
            out_c.scales = local.c().translations;
        }
        let job = cf_local_to_object_job {
            parents: if m[0] % 16 == 14 {
                null()
            } else {
                parents.as_mut_ptr()
            },
            num_bones: count,
            local: local.c(),
            start,
            end,
            out: out_c,
            simd,
        };
        let v = unsafe { cf_local_to_object_validate(&job) };
        let after_v = out.untouched();
        let r = unsafe { cf_local_to_object_run(&job) };
        let forced = overlap && n > 0 && local.1 > 0 && out.1 > 0;
        let ok = after_v
            && Self::outs_ok(&out.0.iter().collect::<Vec<_>>(), false, r)
            && !(forced && r == CF_OK);
        (v, r, ok)
    }

    fn job_palette(
        &mut self,
        inp: &mut Input,
        n: usize,
        overlap: bool,
    ) -> (cf_status, cf_status, bool) {
        let m = [inp.u8(), inp.u8(), inp.u8(), inp.u8()];
        let mut object = PoseBufs::new(n, [shape(m[0]), 0, 0], Some(inp));
        let nj = inp.u8() as usize % 10;
        let mut ib = Buf::input(16 * nj, shape(m[1]), inp);
        let mut joints: Vec<u16> = (0..near(nj, m[2]) + GUARD).map(|_| joint(inp, n)).collect();
        let with_joints = m[2] & 1 != 0;
        let layout = match m[3] % 8 {
            7 => 2 + m[3] as u32,
            x => x as u32 & 1,
        };
        let per = if layout == CF_PALETTE_3X4 { 12 } else { 16 };
        let oc = near(nj, m[3]);
        let mut out = Buf::new(per * oc, shape(m[3] >> 1));
        let job = cf_skinning_palette_job {
            object: object.c(),
            inverse_bind: ib.ptr(),
            num_joints: nj,
            joints: if with_joints {
                joints.as_mut_ptr()
            } else {
                null()
            },
            joints_count: if with_joints { joints.len() - GUARD } else { 0 },
            layout,
            out: if overlap { ib.ptr() } else { out.ptr() },
            out_count: oc,
        };
        let v = unsafe { cf_skinning_palette_validate(&job) };
        let after_v = out.untouched();
        let r = unsafe { cf_skinning_palette_run(&job) };
        let forced = overlap && nj > 0 && oc > 0;
        let ok = after_v && Self::outs_ok(&[&out], false, r) && !(forced && r == CF_OK);
        (v, r, ok)
    }

    fn simd(inp: &mut Input) -> cf_simd {
        match inp.u8() {
            0..=199 => CF_SIMD_AUTO,
            x => x as u32 % 7,
        }
    }

    fn job_points(
        &mut self,
        inp: &mut Input,
        n: usize,
        overlap: bool,
    ) -> (cf_status, cf_status, bool) {
        let m = [inp.u8(), inp.u8(), inp.u8(), inp.u8(), inp.u8()];
        let np = n * 3;
        let mut matrix = Buf::input(16, shape(m[0]), inp);
        let mut pts = Buf::input(3 * np, shape(m[1]), inp);
        let nn = if m[2] & 1 != 0 { np } else { 0 };
        let mut nor = Buf::input(3 * nn, shape(m[2] >> 1), inp);
        let opc = near(np, m[3]);
        let onc = near(nn, m[4]);
        let mut op = Buf::new(4 * opc, shape(m[3]));
        let mut on = Buf::new(3 * onc, shape(m[4]));
        let simd = Self::simd(inp);
        let job = cf_transform_points_job {
            matrix: matrix.ptr(),
            points: pts.ptr(),
            num_points: np,
            out_points: if overlap { pts.ptr() } else { op.ptr() },
            out_points_count: opc,
            normals: nor.ptr(),
            num_normals: nn,
            out_normals: on.ptr(),
            out_normals_count: onc,
            simd,
        };
        let v = unsafe { cf_transform_points_validate(&job) };
        let after_v = op.untouched() && on.untouched();
        let r = unsafe { cf_transform_points_run(&job) };
        let forced = overlap && np > 0 && opc > 0;
        let ok = after_v && Self::outs_ok(&[&op, &on], false, r) && !(forced && r == CF_OK);
        (v, r, ok)
    }

    fn job_skin(
        &mut self,
        inp: &mut Input,
        n: usize,
        overlap: bool,
    ) -> (cf_status, cf_status, bool) {
        let m = [inp.u8(), inp.u8(), inp.u8(), inp.u8(), inp.u8(), inp.u8()];
        let np = inp.u8() as usize % 5;
        let k = match m[0] % 8 {
            6 => 0,
            7 => 5 + m[0] as u32,
            x => x as u32 % 4 + 1,
        };
        let nv = n * 2;
        let vk = nv * (k as usize).min(8);
        let mut palette = Buf::input(16 * np, shape(m[1]), inp);
        let mut joints: Vec<u16> = (0..near(vk, m[2]) + GUARD)
            .map(|_| joint(inp, np))
            .collect();
        let mut weights = Buf::input(near(vk, m[3]), shape(m[3] >> 1), inp);
        let mut pos = Buf::input(3 * nv, shape(m[4]), inp);
        let nn = if m[4] & 1 != 0 { nv } else { 0 };
        let mut nor = Buf::input(3 * nn, 0, inp);
        let opc = near(nv, m[5]);
        let onc = near(nn, m[5] >> 1);
        let mut op = Buf::new(3 * opc, shape(m[5]));
        let mut on = Buf::new(3 * onc, 0);
        let simd = Self::simd(inp);
        let job = cf_skin_job {
            palette: palette.ptr(),
            palette_count: np,
            influences: k,
            joints: if m[2] % 16 == 14 {
                null()
            } else {
                joints.as_mut_ptr()
            },
            joints_count: joints.len() - GUARD,
            weights: weights.ptr(),
            weights_count: weights.len,
            positions: pos.ptr(),
            num_vertices: nv,
            normals: nor.ptr(),
            normals_count: nn,
            out_positions: op.ptr(),
            out_positions_count: opc,
            out_normals: if overlap { weights.ptr() } else { on.ptr() },
            out_normals_count: if overlap { onc.max(1) } else { onc },
            simd,
        };
        let v = unsafe { cf_skin_validate(&job) };
        let after_v = op.untouched() && on.untouched();
        let r = unsafe { cf_skin_run(&job) };
        let forced = overlap && weights.len > 0;
        let ok = after_v && Self::outs_ok(&[&op, &on], false, r) && !(forced && r == CF_OK);
        (v, r, ok)
    }
}

fn last_error() -> String {
    let mut buf = [0u8; 512];
    let n = unsafe { cf_last_error(buf.as_mut_ptr().cast(), buf.len()) };
    String::from_utf8_lossy(&buf[..n.min(511)]).into_owned()
}

/// Runs one program; returns what it did.
pub fn run(data: &[u8]) -> Stats {
    let mut inp = Input { data, pos: 0 };
    let mut vm = Vm {
        clips: [0; 4],
        scalars: [0; 4],
        samplers: [0; 4],
        live_clips: HashSet::new(),
        live_scalars: HashSet::new(),
        live_samplers: HashMap::new(),
        freed: HashSet::new(),
        strict: strict(),
        stats: Stats::default(),
    };
    let trace = std::env::var_os("CLIPFORGE_FUZZ_TRACE").is_some();
    for _ in 0..MAX_STEPS {
        if inp.done() {
            break;
        }
        let op = inp.u8() % 15;
        if trace {
            eprintln!("capi: byte {} op {op} {:?}", inp.pos - 1, vm.stats);
        }
        match op {
            0 => vm.create(&mut inp, false),
            1 => vm.create(&mut inp, true),
            2 => vm.free(&mut inp, false),
            3 => vm.free(&mut inp, true),
            4 => vm.clip_query(&mut inp),
            5 => vm.sample(&mut inp, 0),
            6 => vm.sample(&mut inp, 1),
            7 => vm.sample(&mut inp, 2),
            8 | 9 => vm.scalar_ops(&mut inp),
            10 => {
                // Forge or confuse: a raw number, or a handle of the other kind.
                let b = inp.u8();
                let v = if b & 1 == 0 {
                    inp.u64()
                } else if b & 2 == 0 {
                    vm.scalars[b as usize >> 2 & 3]
                } else {
                    vm.clips[b as usize >> 2 & 3]
                };
                if b & 0x80 != 0 {
                    vm.samplers[b as usize >> 4 & 3] = v;
                } else if b & 0x40 == 0 {
                    vm.clips[b as usize >> 4 & 3] = v;
                } else {
                    vm.scalars[b as usize >> 4 & 3] = v;
                }
            }
            11 => vm.messages(&mut inp),
            12 => vm.pose_sample(&mut inp),
            13 => vm.job(&mut inp),
            _ => vm.sampler(&mut inp),
        }
    }
    vm.finish()
}

/// The fuzz target's entry point (`CLIPFORGE_FUZZ_TRACE=1` prints each step, for replaying a
/// crash).
#[allow(dead_code)] // the seed test calls `run`
pub fn capi(data: &[u8]) {
    run(data);
}

/// Builds a program around a valid `.cfa` and `.cfs` (the committed seed is made with it):
/// create both (resealed), query and sample in every way, free, use after free, double free,
/// forged and wrong-kind handles.
pub fn seed_program(cfa: &[u8], cfs: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    let blob = |p: &mut Vec<u8>, op: u8, flags: u8, slot: u8, b: &[u8]| {
        p.extend_from_slice(&[op, flags, slot]);
        p.extend_from_slice(&(b.len() as u16).to_le_bytes());
        p.extend_from_slice(b);
    };
    blob(&mut p, 0, 1, 0, cfa);
    blob(&mut p, 1, 1, 0, cfs);
    blob(&mut p, 0, 0, 1, &cfa[..cfa.len() / 2]); // truncated
    blob(&mut p, 0, 2, 2, b""); // NULL data
    // Queries on clip slot 0: counts, rate, duration, a parent, parents, a name, a lookup.
    for q in [
        &[4u8, 0, 0][..],
        &[4, 0, 1],
        &[4, 0, 2],
        &[4, 0, 3],
        &[4, 0, 4, 1, 0],
        &[4, 0, 5, 40],
        &[4, 0, 6, 40, 1, 0],
        &[4, 0, 7, 4, b'r', b'o', b'o', b't'],
    ] {
        p.extend_from_slice(q);
    }
    // Pose, one bone, a list of bones, at 0.016 s, 0.5 s, 1e9 s and NaN, with exact, short,
    // NULL, NULL-with-length, long and misaligned arrays.
    for (t, m) in [
        (4u8, [0u8, 0, 0]),
        (6, [2, 0, 0]),
        (12, [3, 4, 0]),
        (18, [5, 6, 0]),
    ] {
        p.extend_from_slice(&[5, 0, t, 0, m[0], m[1], m[2], 0]);
        p.extend_from_slice(&[6, 0, t, 130, m[0], m[1], m[2], 0, 1, 0]);
        p.extend_from_slice(&[7, 0, t, 0, m[0], m[1], m[2], 0, 3, 0, 0, 1, 0, 1, 0]);
    }
    // Scalars: the queries, a track name, sample all, sample some.
    for q in [
        &[8u8, 0, 0, 6, 0][..],
        &[8, 0, 5, 6, 0],
        &[8, 0, 10, 6, 0],
        &[8, 0, 15, 6, 0],
        &[8, 0, 20, 6, 0],
        &[8, 0, 1, 6, 0, 32, 0, 0],
        &[8, 0, 2, 6, 0, 0],
        &[8, 0, 2, 4, 130, 2],
        &[8, 0, 4, 6, 0, 2, 0, 0, 1, 0, 0],
    ] {
        p.extend_from_slice(q);
    }
    // A clip handle used as a scalar handle.
    p.extend_from_slice(&[10, 0x43, 8, 0, 0, 6, 0]);
    // Free, use after free, double free, for both kinds.
    p.extend_from_slice(&[2, 0, 5, 0, 4, 0, 0, 0, 0, 0, 2, 0]);
    p.extend_from_slice(&[3, 0, 8, 0, 0, 6, 0, 3, 0]);
    // A forged handle, queried and freed; then the messages.
    p.extend_from_slice(&[10, 0, 1, 0, 0, 0, 1, 0, 0, 0xC1, 4, 0, 0, 2, 0]);
    p.extend_from_slice(&[11, 13, 0, 0, 0, 64]);
    // Sampling into a pose (write, skip, bind pose, additive onto it) on a fresh clip in slot 0.
    blob(&mut p, 0, 1, 0, cfa);
    for sel in [0u8, 1, 2, 3] {
        p.extend_from_slice(&[12, 0, sel, 4, 0, 0, 0, 0]);
    }
    // Samplers of the clip in slot 0: create (and one with a NULL out), play it at 0.016 s
    // and 0.5 s with every default mode (each compared with the clip), free the clip and sample
    // on, free the sampler, use after free, double free, a forged sampler handle.
    p.extend_from_slice(&[14, 0, 0, 0, 14, 0x80, 1, 0]);
    for t in [4u8, 6, 4, 6] {
        for d in [0u8, 210] {
            p.extend_from_slice(&[14, 2, 0, 0, t, 0, d, 0, 0, 0]);
        }
    }
    p.extend_from_slice(&[2, 0]);
    p.extend_from_slice(&[14, 3, 0, 0, 6, 0, 0, 0, 0, 0]);
    p.extend_from_slice(&[14, 1, 0, 0, 14, 1, 0, 0]);
    p.extend_from_slice(&[14, 2, 0, 0, 4, 0, 0, 0, 0, 0, 4]);
    p.extend_from_slice(&[
        10, 0x80, 1, 2, 3, 4, 5, 6, 7, 8, 14, 2, 0, 0, 4, 0, 0, 0, 0, 0, 4,
    ]);
    // Each job on 4 bones, every operand 11: valid inputs (see `Vm::job_*`).
    for job in 0..5u8 {
        p.extend_from_slice(&[13, 66, 1, job, 4]);
        p.extend_from_slice(&[11; 320]);
    }
    p
}
