//! `cf_sampler` called from Rust as a C caller would: its poses equal the Rust `Sampler`'s and
//! the stateless reader's bit for bit (playback, wrap-around, seeks, backwards, skipped
//! defaults, overlapping arrays), the sampler outlives its freed clip handle, misuse is refused
//! with its status and leaves the pose untouched, and threads sharing one sampler take turns.

mod common;

use common::pose::{CPose, create, pose_bits};

use clipforge_runtime::{ClipReader, Defaults, Looping, Pose, Sampler};
use clipforge_runtime_capi::cf_status::*;
use clipforge_runtime_capi::*;
use std::ptr::null_mut;

fn sampler(clip: cf_clip) -> cf_sampler {
    let mut s = cf_sampler { id: 0 };
    assert_eq!(unsafe { cf_sampler_create(clip, &mut s) }, CF_OK);
    assert_ne!(s.id, 0);
    s
}

/// Playback at 60 Hz over twice the clip (wrapping), a stretch at 240 Hz, pseudo-random seeks,
/// and backwards: what a character's calls look like, and what defeats the cache.
fn times(duration: f32) -> Vec<(f32, cf_looping)> {
    let mut v = vec![];
    let mut k = 0;
    while (k as f32 / 60.0) < 2.0 * duration + 0.1 {
        v.push((k as f32 / 60.0, CF_LOOPING_WRAP));
        k += 1;
    }
    for k in 0..60 {
        v.push((k as f32 / 240.0, CF_LOOPING_CLAMP));
    }
    let mut x = 0x2545F491u32;
    for _ in 0..200 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v.push((
            (x % 10_000) as f32 / 10_000.0 * 1.2 * duration,
            CF_LOOPING_CLAMP,
        ));
    }
    for k in (0..40).rev() {
        v.push((k as f32 / 40.0 * duration, CF_LOOPING_CLAMP));
    }
    v.push((-1.0, CF_LOOPING_CLAMP));
    v.push((1e6, CF_LOOPING_WRAP));
    v
}

#[test]
fn sampler_poses_equal_the_rust_sampler_and_reader_bit_for_bit() {
    // Animated scales over two segments' worth of samples, defaults-only scales, a short clip.
    for bytes in [common::cfa(300), common::cfa_defaults(61), common::cfa(3)] {
        let reader = ClipReader::new(&bytes).unwrap();
        let n = reader.num_bones();
        let clip = create(&bytes);
        let cs = sampler(clip);
        let mut rust = Sampler::new(&reader);
        let (mut want, mut stateless) = (Pose::new(n), Pose::new(n));
        let mut got = CPose::marked(n);
        for (t, l) in times(reader.duration()) {
            let looping = if l == CF_LOOPING_WRAP {
                Looping::Wrap
            } else {
                Looping::Clamp
            };
            assert_eq!(
                unsafe { cf_sampler_sample_into(cs, t, l, CF_DEFAULTS_WRITE, got.c()) },
                CF_OK
            );
            rust.sample_pose(t, looping, &mut want);
            reader.sample_pose(t, looping, &mut stateless);
            assert_eq!(got.bits(), pose_bits(&want), "t={t} {looping:?}");
            assert_eq!(got.bits(), pose_bits(&stateless), "t={t} {looping:?}");
        }

        // Skipped defaults: the caller's values stay where the clip stores defaults, as the
        // Rust sampler's `Defaults::Skip`; the rest as written.
        let mut c_skip = CPose::marked(n);
        let mut r_skip = Pose::new(n);
        for b in 0..n {
            r_skip.rotations[b] = c_skip.r[b];
            r_skip.translations[b] = c_skip.t[b];
            r_skip.scales[b] = c_skip.s[b];
        }
        for (t, l) in times(reader.duration()).into_iter().step_by(7) {
            let looping = if l == CF_LOOPING_WRAP {
                Looping::Wrap
            } else {
                Looping::Clamp
            };
            assert_eq!(
                unsafe { cf_sampler_sample_into(cs, t, l, CF_DEFAULTS_SKIP, c_skip.c()) },
                CF_OK
            );
            rust.sample_pose_into(t, looping, Defaults::Skip, r_skip.as_pose_mut())
                .unwrap();
            assert_eq!(c_skip.bits(), pose_bits(&r_skip), "skip t={t}");
        }

        // Overlapping arrays (through the per-thread copy): what `cf_clip_sample_into` writes.
        if n > 0 {
            let mut a = CPose::marked(n);
            let mut b = CPose::marked(n);
            let overlap = |p: &mut CPose| {
                let mut c = p.c();
                c.scales = c.translations;
                c
            };
            for d in [CF_DEFAULTS_WRITE, CF_DEFAULTS_SKIP] {
                assert_eq!(
                    unsafe { cf_sampler_sample_into(cs, 0.3, CF_LOOPING_WRAP, d, overlap(&mut a)) },
                    CF_OK
                );
                assert_eq!(
                    unsafe { cf_clip_sample_into(clip, 0.3, CF_LOOPING_WRAP, d, overlap(&mut b)) },
                    CF_OK
                );
                assert_eq!(a.bits(), b.bits(), "overlapping arrays, defaults {d}");
            }
        }
        assert_eq!(cf_sampler_free(cs), CF_OK);
        assert_eq!(cf_clip_free(clip), CF_OK);
    }
}

#[test]
fn a_sampler_outlives_its_clip_handle_and_misuse_is_refused() {
    let bytes = common::cfa(45);
    let reader = ClipReader::new(&bytes).unwrap();
    let n = reader.num_bones();
    let clip = create(&bytes);
    let s = sampler(clip);
    let mut before = CPose::marked(n);
    assert_eq!(
        unsafe { cf_sampler_sample_into(s, 0.7, CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, before.c()) },
        CF_OK
    );

    // Freeing the clip first: the sampler keeps its data, the clip handle is dead.
    assert_eq!(cf_clip_free(clip), CF_OK);
    let mut after = CPose::marked(n);
    assert_eq!(
        unsafe { cf_sampler_sample_into(s, 0.7, CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, after.c()) },
        CF_OK
    );
    assert_eq!(after.bits(), before.bits());
    let mut dead = cf_sampler { id: 0xDEAD };
    assert_eq!(
        unsafe { cf_sampler_create(clip, &mut dead) },
        CF_ERR_INVALID_HANDLE
    );
    assert_eq!(dead.id, 0, "a failed create writes the zero handle");
    let clip = create(&bytes);
    assert_eq!(
        unsafe { cf_sampler_create(clip, null_mut()) },
        CF_ERR_NULL_POINTER
    );

    // Each bad argument: its status, the pose untouched.
    let mut p = CPose::marked(n);
    type Call = Box<dyn Fn(&mut CPose) -> cf_status>;
    let cases: Vec<(cf_status, Call)> = vec![
        (
            CF_ERR_INVALID_TIME,
            Box::new(move |p| unsafe {
                cf_sampler_sample_into(s, f32::NAN, CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, p.c())
            }),
        ),
        (
            CF_ERR_INVALID_ARGUMENT,
            Box::new(move |p| unsafe {
                cf_sampler_sample_into(s, 0.1, 7, CF_DEFAULTS_WRITE, p.c())
            }),
        ),
        (
            CF_ERR_INVALID_ARGUMENT,
            Box::new(move |p| unsafe {
                cf_sampler_sample_into(s, 0.1, CF_LOOPING_CLAMP, 2, p.c())
            }),
        ),
        (
            CF_ERR_LENGTH_MISMATCH,
            Box::new(move |p| unsafe {
                let mut c = p.c();
                c.num_bones -= 1;
                cf_sampler_sample_into(s, 0.1, CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, c)
            }),
        ),
        (
            CF_ERR_NULL_POINTER,
            Box::new(move |p| unsafe {
                let mut c = p.c();
                c.rotations = null_mut();
                cf_sampler_sample_into(s, 0.1, CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, c)
            }),
        ),
        (
            CF_ERR_MISALIGNED_POINTER,
            Box::new(move |p| unsafe {
                let mut c = p.c();
                c.scales = c.scales.cast::<u8>().wrapping_add(4).cast();
                cf_sampler_sample_into(s, 0.1, CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, c)
            }),
        ),
        (
            CF_ERR_INVALID_HANDLE,
            // A clip handle is not a sampler handle.
            Box::new(move |p| unsafe {
                cf_sampler_sample_into(
                    cf_sampler { id: clip.id },
                    0.1,
                    CF_LOOPING_CLAMP,
                    CF_DEFAULTS_WRITE,
                    p.c(),
                )
            }),
        ),
    ];
    for (want, call) in &cases {
        assert_eq!(call(&mut p), *want);
        assert!(p.untouched(), "{want:?} wrote the pose");
    }
    // A sampler handle is not a clip handle.
    let mut nb = 0u32;
    assert_eq!(
        unsafe { cf_clip_num_bones(cf_clip { id: s.id }, &mut nb) },
        CF_ERR_INVALID_HANDLE
    );

    // Freed: refused, once freed always refused.
    assert_eq!(cf_sampler_free(s), CF_OK);
    assert_eq!(
        unsafe { cf_sampler_sample_into(s, 0.1, CF_LOOPING_CLAMP, CF_DEFAULTS_WRITE, p.c()) },
        CF_ERR_INVALID_HANDLE
    );
    assert!(p.untouched());
    assert_eq!(cf_sampler_free(s), CF_ERR_INVALID_HANDLE);
    assert_eq!(cf_sampler_free(cf_sampler { id: 0 }), CF_ERR_INVALID_HANDLE);
    assert_eq!(cf_clip_free(clip), CF_OK);
}

#[test]
fn threads_sharing_one_sampler_take_turns_and_get_the_readers_poses() {
    let bytes = common::cfa(120);
    let reader = ClipReader::new(&bytes).unwrap();
    let n = reader.num_bones();
    let clip = create(&bytes);
    let s = sampler(clip);
    std::thread::scope(|scope| {
        for k in 0..3 {
            let reader = &reader;
            scope.spawn(move || {
                let (mut got, mut want) = (CPose::marked(n), Pose::new(n));
                for i in 0..200 {
                    let t = (i * (k + 1)) as f32 / 60.0;
                    let st = unsafe {
                        cf_sampler_sample_into(s, t, CF_LOOPING_WRAP, CF_DEFAULTS_WRITE, got.c())
                    };
                    assert_eq!(st, CF_OK);
                    reader.sample_pose(t, Looping::Wrap, &mut want);
                    assert_eq!(got.bits(), pose_bits(&want), "thread {k} t={t}");
                }
            });
        }
    });
    assert_eq!(cf_sampler_free(s), CF_OK);
    assert_eq!(cf_clip_free(clip), CF_OK);
}
