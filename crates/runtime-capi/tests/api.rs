//! The C API called from Rust as a C caller would: results equal the Rust readers' bit for bit,
//! and every misuse the header describes is refused with its status, leaves the outputs
//! untouched and leaves a message in `cf_last_error` (NULL and misaligned pointers, short
//! arrays, bad indices, NaN/infinite times, unknown looping values, freed, forged and
//! wrong-kind handles, damaged buffers); handles stay sound under threads freeing them.

mod common;

use clipforge_runtime::scalar::ScalarReader;
use clipforge_runtime::{ClipReader, Looping, Pose};
use clipforge_runtime_capi::cf_status::*;
use clipforge_runtime_capi::*;
use std::ffi::CStr;
use std::ptr::{null, null_mut};

fn cfa() -> Vec<u8> {
    common::cfa(45)
}

use common::cfs;

fn create(bytes: &[u8]) -> cf_clip {
    let mut c = cf_clip { id: 0 };
    assert_eq!(
        unsafe { cf_clip_create(bytes.as_ptr(), bytes.len(), &mut c) },
        CF_OK
    );
    c
}

fn last_error() -> String {
    let n = unsafe { cf_last_error(null_mut(), 0) };
    let mut buf = vec![0u8; n + 1];
    assert_eq!(
        unsafe { cf_last_error(buf.as_mut_ptr().cast(), buf.len()) },
        n
    );
    CStr::from_bytes_with_nul(&buf)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string()
}

/// Full-pose outputs, filled with a marker so an untouched array is visible.
struct Out {
    rot: Vec<f32>,
    tra: Vec<f32>,
    sca: Vec<f32>,
}
const MARK: f32 = -12345.0;
impl Out {
    fn new(n: usize) -> Self {
        Self {
            rot: vec![MARK; 4 * n],
            tra: vec![MARK; 3 * n],
            sca: vec![MARK; 3 * n],
        }
    }
    fn untouched(&self) -> bool {
        [&self.rot, &self.tra, &self.sca]
            .iter()
            .all(|v| v.iter().all(|&x| x == MARK))
    }
    fn pose(&mut self, clip: cf_clip, t: f32, looping: cf_looping) -> cf_status {
        unsafe {
            cf_clip_sample_pose(
                clip,
                t,
                looping,
                self.rot.as_mut_ptr(),
                self.rot.len(),
                self.tra.as_mut_ptr(),
                self.tra.len(),
                self.sca.as_mut_ptr(),
                self.sca.len(),
            )
        }
    }
}

fn flat(pose: &Pose) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    (
        pose.rotations.iter().flat_map(|q| q.to_array()).collect(),
        pose.translations
            .iter()
            .flat_map(|v| v.to_array())
            .collect(),
        pose.scales.iter().flat_map(|v| v.to_array()).collect(),
    )
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn queries_and_sampling_equal_the_rust_reader_bit_for_bit() {
    let bytes = cfa();
    let reader = ClipReader::new(&bytes).unwrap();
    let clip = create(&bytes);
    let n = reader.num_bones();
    let (mut nb, mut ns, mut rate, mut dur) = (0u32, 0u32, 0f32, 0f32);
    unsafe {
        assert_eq!(cf_clip_num_bones(clip, &mut nb), CF_OK);
        assert_eq!(cf_clip_num_samples(clip, &mut ns), CF_OK);
        assert_eq!(cf_clip_sample_rate(clip, &mut rate), CF_OK);
        assert_eq!(cf_clip_duration(clip, &mut dur), CF_OK);
    }
    assert_eq!(
        (nb as usize, ns as usize, rate, dur),
        (
            n,
            reader.num_samples(),
            reader.sample_rate(),
            reader.duration()
        )
    );
    // Names, parents, lookup by name.
    let sk = reader.skeleton();
    let mut parents = vec![7u32; n];
    assert_eq!(
        unsafe { cf_clip_parents(clip, parents.as_mut_ptr(), n) },
        CF_OK
    );
    for (b, &got) in parents.iter().enumerate() {
        let want = sk.parent(b).map_or(CF_NO_PARENT, |p| p as u32);
        assert_eq!(got, want);
        let mut p = 0;
        assert_eq!(
            unsafe { cf_clip_bone_parent(clip, b as u32, &mut p) },
            CF_OK
        );
        assert_eq!(p, want);
        let mut len = 0usize;
        let mut buf = [0x55u8; 64];
        let st = unsafe { cf_clip_bone_name(clip, b as u32, null_mut(), 0, &mut len) };
        assert_eq!((st, len), (CF_OK, sk.names[b].len()));
        let st =
            unsafe { cf_clip_bone_name(clip, b as u32, buf.as_mut_ptr().cast(), 64, &mut len) };
        assert_eq!(st, CF_OK);
        assert_eq!(&buf[..len], sk.names[b].as_bytes());
        assert_eq!(buf[len], 0);
        let mut found = u32::MAX;
        let name = &sk.names[b];
        let st = unsafe { cf_clip_find_bone(clip, name.as_ptr().cast(), name.len(), &mut found) };
        assert_eq!((st, found), (CF_OK, b as u32));
    }
    // Full poses, single bones and bone lists at and between samples, outside, both modes.
    let mut pose = Pose::new(n);
    let mut out = Out::new(n);
    let list: Vec<u32> = vec![3, 0, (n - 1) as u32, 3];
    for &t in &[0.0, 0.013, 0.5, reader.duration(), 7.31, -2.0, 1e9] {
        for (mode, looping) in [
            (CF_LOOPING_CLAMP, Looping::Clamp),
            (CF_LOOPING_WRAP, Looping::Wrap),
        ] {
            reader.sample_pose(t, looping, &mut pose);
            assert_eq!(out.pose(clip, t, mode), CF_OK);
            let (r, tr, s) = flat(&pose);
            assert_eq!(bits(&out.rot), bits(&r), "rotations at {t}");
            assert_eq!(bits(&out.tra), bits(&tr), "translations at {t}");
            assert_eq!(bits(&out.sca), bits(&s), "scales at {t}");
            for b in 0..n {
                let (q, tt, ss) = reader.sample_bone(b, t, looping).unwrap();
                let (mut a, mut c, mut d) = ([0f32; 4], [0f32; 3], [0f32; 3]);
                let st = unsafe {
                    cf_clip_sample_bone(
                        clip,
                        b as u32,
                        t,
                        mode,
                        a.as_mut_ptr(),
                        c.as_mut_ptr(),
                        d.as_mut_ptr(),
                    )
                };
                assert_eq!(st, CF_OK);
                assert_eq!(
                    (bits(&a), bits(&c), bits(&d)),
                    (
                        bits(&q.to_array()),
                        bits(&tt.to_array()),
                        bits(&ss.to_array())
                    )
                );
            }
            let mut o = Out::new(list.len());
            let st = unsafe {
                cf_clip_sample_bones(
                    clip,
                    t,
                    mode,
                    list.as_ptr(),
                    list.len(),
                    o.rot.as_mut_ptr(),
                    o.rot.len(),
                    o.tra.as_mut_ptr(),
                    o.tra.len(),
                    o.sca.as_mut_ptr(),
                    o.sca.len(),
                )
            };
            assert_eq!(st, CF_OK);
            for (i, &b) in list.iter().enumerate() {
                let (q, tt, ss) = reader.sample_bone(b as usize, t, looping).unwrap();
                assert_eq!(bits(&o.rot[4 * i..4 * i + 4]), bits(&q.to_array()));
                assert_eq!(bits(&o.tra[3 * i..3 * i + 3]), bits(&tt.to_array()));
                assert_eq!(bits(&o.sca[3 * i..3 * i + 3]), bits(&ss.to_array()));
            }
        }
    }
    // NULL with length 0 skips an array; longer arrays are fine and only their start is written.
    let mut rot = vec![MARK; 4 * n + 5];
    let st = unsafe {
        cf_clip_sample_pose(
            clip,
            0.2,
            CF_LOOPING_CLAMP,
            rot.as_mut_ptr(),
            rot.len(),
            null_mut(),
            0,
            null_mut(),
            0,
        )
    };
    assert_eq!(st, CF_OK);
    reader.sample_pose(0.2, Looping::Clamp, &mut pose);
    assert_eq!(bits(&rot[..4 * n]), bits(&flat(&pose).0));
    assert!(rot[4 * n..].iter().all(|&x| x == MARK));
    assert_eq!(cf_clip_free(clip), CF_OK);
}

#[test]
fn misuse_is_refused_with_its_status_and_leaves_outputs_untouched() {
    let bytes = cfa();
    let clip = create(&bytes);
    let n = ClipReader::new(&bytes).unwrap().num_bones();
    let mut out = Out::new(n);
    // Times and looping values.
    for t in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        assert_eq!(out.pose(clip, t, CF_LOOPING_CLAMP), CF_ERR_INVALID_TIME);
        assert!(
            last_error().starts_with("cf_clip_sample_pose: time"),
            "{}",
            last_error()
        );
    }
    assert_eq!(out.pose(clip, 0.0, 2), CF_ERR_INVALID_ARGUMENT);
    assert_eq!(out.pose(clip, 0.0, u32::MAX), CF_ERR_INVALID_ARGUMENT);
    // Short, NULL and misaligned arrays.
    let st = unsafe {
        cf_clip_sample_pose(
            clip,
            0.0,
            0,
            out.rot.as_mut_ptr(),
            4 * n - 1,
            out.tra.as_mut_ptr(),
            3 * n,
            out.sca.as_mut_ptr(),
            3 * n,
        )
    };
    assert_eq!(st, CF_ERR_BUFFER_TOO_SMALL);
    assert!(last_error().contains("rotations holds"), "{}", last_error());
    let st = unsafe {
        cf_clip_sample_pose(
            clip,
            0.0,
            0,
            out.rot.as_mut_ptr(),
            4 * n,
            null_mut(),
            3 * n,
            out.sca.as_mut_ptr(),
            3 * n,
        )
    };
    assert_eq!(st, CF_ERR_NULL_POINTER);
    let odd = unsafe { out.rot.as_mut_ptr().cast::<u8>().add(1).cast::<f32>() };
    let st =
        unsafe { cf_clip_sample_pose(clip, 0.0, 0, odd, 4 * n - 1, null_mut(), 0, null_mut(), 0) };
    assert_eq!(st, CF_ERR_MISALIGNED_POINTER);
    assert!(out.untouched());
    // Indices.
    let mut r4 = [MARK; 4];
    let st = unsafe {
        cf_clip_sample_bone(
            clip,
            n as u32,
            0.0,
            0,
            r4.as_mut_ptr(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(st, CF_ERR_INDEX_OUT_OF_RANGE);
    let list = [0u32, 1, n as u32 + 9];
    let mut o = Out::new(3);
    let st = unsafe {
        cf_clip_sample_bones(
            clip,
            0.0,
            0,
            list.as_ptr(),
            3,
            o.rot.as_mut_ptr(),
            12,
            o.tra.as_mut_ptr(),
            9,
            o.sca.as_mut_ptr(),
            9,
        )
    };
    assert_eq!(st, CF_ERR_INDEX_OUT_OF_RANGE);
    assert!(last_error().contains("bones[2]"), "{}", last_error());
    assert!(o.untouched() && r4 == [MARK; 4]);
    let st = unsafe {
        cf_clip_sample_bones(
            clip,
            0.0,
            0,
            null(),
            3,
            o.rot.as_mut_ptr(),
            12,
            null_mut(),
            0,
            null_mut(),
            0,
        )
    };
    assert_eq!(st, CF_ERR_NULL_POINTER);
    parent_name_and_lookup_misuse_is_refused(clip, n);
    let mut nb = 0u32;
    assert_eq!(
        unsafe { cf_clip_num_bones(clip, null_mut()) },
        CF_ERR_NULL_POINTER
    );
    // Handles: zero, forged, wrong kind, freed, freed twice; a new clip in the same slot does
    // not revive the old handle. The forged ones keep the tag: another generation, and a slot
    // no clip has (not `id + 1`: the tests share the process's table, and another test's clip
    // in the next slot at the same generation is a live handle — a race CI once lost).
    let far_slot = (clip.id & !0xFFFF_FFFF) | 0xFFFF_FFF0;
    for h in [0, 1, u64::MAX, clip.id ^ (1 << 40), far_slot] {
        assert_eq!(
            unsafe { cf_clip_num_bones(cf_clip { id: h }, &mut nb) },
            CF_ERR_INVALID_HANDLE
        );
    }
    assert_eq!(
        cf_scalars_free(cf_scalars { id: clip.id }),
        CF_ERR_INVALID_HANDLE
    );
    assert_eq!(cf_clip_free(clip), CF_OK);
    assert_eq!(out.pose(clip, 0.0, 0), CF_ERR_INVALID_HANDLE);
    assert!(
        last_error().contains("not a live cf_clip handle"),
        "{}",
        last_error()
    );
    assert_eq!(cf_clip_free(clip), CF_ERR_INVALID_HANDLE);
    let again = create(&bytes);
    assert_ne!(again, clip);
    assert_eq!(
        unsafe { cf_clip_num_bones(clip, &mut nb) },
        CF_ERR_INVALID_HANDLE
    );
    assert_eq!(unsafe { cf_clip_num_bones(again, &mut nb) }, CF_OK);
    assert_eq!(cf_clip_free(again), CF_OK);
    assert!(out.untouched());
}

/// The parent, name and lookup calls of [`misuse_is_refused_with_its_status_and_leaves_outputs_untouched`]
/// (a piece of it, so that test stays readable).
fn parent_name_and_lookup_misuse_is_refused(clip: cf_clip, n: usize) {
    let mut len = 0usize;
    // Parents.
    let mut p = 0u32;
    assert_eq!(
        unsafe { cf_clip_bone_parent(clip, n as u32, &mut p) },
        CF_ERR_INDEX_OUT_OF_RANGE
    );
    assert_eq!(
        unsafe { cf_clip_bone_parent(clip, 0, null_mut()) },
        CF_ERR_NULL_POINTER
    );
    let mut parents = vec![0u32; n - 1];
    assert_eq!(
        unsafe { cf_clip_parents(clip, parents.as_mut_ptr(), n - 1) },
        CF_ERR_BUFFER_TOO_SMALL
    );
    // Names: a buffer one byte short gets nothing but the length.
    let mut name_len = 0usize;
    unsafe { cf_clip_bone_name(clip, 0, null_mut(), 0, &mut name_len) };
    let mut buf = vec![0x55u8; name_len];
    let st = unsafe { cf_clip_bone_name(clip, 0, buf.as_mut_ptr().cast(), name_len, &mut len) };
    assert_eq!((st, len), (CF_ERR_BUFFER_TOO_SMALL, name_len));
    assert!(buf.iter().all(|&b| b == 0x55));
    assert_eq!(
        unsafe { cf_clip_bone_name(clip, 0, null_mut(), 5, &mut len) },
        CF_ERR_NULL_POINTER
    );
    assert_eq!(
        unsafe { cf_clip_bone_name(clip, 0, null_mut(), 0, null_mut()) },
        CF_ERR_NULL_POINTER
    );
    let mut found = 77u32;
    assert_eq!(
        unsafe { cf_clip_find_bone(clip, c"no such bone".as_ptr(), 12, &mut found) },
        CF_ERR_NOT_FOUND
    );
    assert_eq!(
        unsafe { cf_clip_find_bone(clip, null(), 0, &mut found) },
        CF_ERR_NULL_POINTER
    );
    assert_eq!(found, 77);
}

#[test]
fn bad_buffers_get_their_status_and_a_zero_handle() {
    let good = cfa();
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 1;
    let mut version = good.clone();
    version[4] = 0xee;
    let cases: [(&[u8], cf_status, &str); 5] = [
        (&good[..10], CF_ERR_TRUNCATED, "truncated"),
        (&good[..good.len() - 1], CF_ERR_TRUNCATED, "truncated"),
        (
            b"RIFF and more bytes than a header holds, surely, yes: 48 of them...",
            CF_ERR_BAD_MAGIC,
            "bad magic",
        ),
        (&flipped, CF_ERR_CHECKSUM_MISMATCH, "checksum"),
        (&version, CF_ERR_UNSUPPORTED_VERSION, "version"),
    ];
    for (bytes, status, text) in cases {
        let mut c = cf_clip { id: 99 };
        assert_eq!(
            unsafe { cf_clip_create(bytes.as_ptr(), bytes.len(), &mut c) },
            status
        );
        assert_eq!(c.id, 0);
        let e = last_error();
        assert!(
            e.starts_with("cf_clip_create: not a valid .cfa") && e.contains(text),
            "{e}"
        );
    }
    let mut c = cf_clip { id: 99 };
    assert_eq!(
        unsafe { cf_clip_create(null(), 10, &mut c) },
        CF_ERR_NULL_POINTER
    );
    assert_eq!(c.id, 0);
    assert_eq!(
        unsafe { cf_clip_create(good.as_ptr(), good.len(), null_mut()) },
        CF_ERR_NULL_POINTER
    );
    // A size no .cfa can have is refused before a byte is read or copied.
    let huge = CF_MAX_BUFFER_SIZE as usize + 1;
    assert_eq!(
        unsafe { cf_clip_create(good.as_ptr(), huge, &mut c) },
        CF_ERR_INVALID_ARGUMENT
    );
    // A .cfs is not a .cfa and the other way round.
    let s = cfs();
    assert_eq!(
        unsafe { cf_clip_create(s.as_ptr(), s.len(), &mut c) },
        CF_ERR_BAD_MAGIC
    );
    let mut sc = cf_scalars { id: 5 };
    assert_eq!(
        unsafe { cf_scalars_create(good.as_ptr(), good.len(), &mut sc) },
        CF_ERR_BAD_MAGIC
    );
    assert_eq!(sc.id, 0);
}

#[test]
fn the_callers_buffer_may_be_freed_or_reused_after_create() {
    let bytes = cfa();
    let mut copy = bytes.clone();
    let clip = create(&copy);
    copy.iter_mut().for_each(|b| *b = 0xAA);
    drop(copy);
    let reader = ClipReader::new(&bytes).unwrap();
    let mut pose = Pose::new(reader.num_bones());
    reader.sample_pose(0.3, Looping::Wrap, &mut pose);
    let mut out = Out::new(reader.num_bones());
    assert_eq!(out.pose(clip, 0.3, CF_LOOPING_WRAP), CF_OK);
    assert_eq!(bits(&out.rot), bits(&flat(&pose).0));
    assert_eq!(cf_clip_free(clip), CF_OK);
}

#[test]
fn scalar_lists_equal_the_rust_reader() {
    let bytes = cfs();
    let reader = ScalarReader::new(&bytes).unwrap();
    let mut h = cf_scalars { id: 0 };
    assert_eq!(
        unsafe { cf_scalars_create(bytes.as_ptr(), bytes.len(), &mut h) },
        CF_OK
    );
    let (mut nt, mut w, mut ns, mut rate, mut dur) = (0u32, 0u32, 0u32, 0f32, 0f32);
    unsafe {
        assert_eq!(cf_scalars_num_tracks(h, &mut nt), CF_OK);
        assert_eq!(cf_scalars_track_width(h, &mut w), CF_OK);
        assert_eq!(cf_scalars_num_samples(h, &mut ns), CF_OK);
        assert_eq!(cf_scalars_sample_rate(h, &mut rate), CF_OK);
        assert_eq!(cf_scalars_duration(h, &mut dur), CF_OK);
    }
    let (nt, w) = (nt as usize, w as usize);
    assert_eq!(
        (nt, w, ns as usize, rate, dur),
        (
            reader.num_tracks(),
            reader.track_type().width(),
            reader.num_samples(),
            reader.sample_rate(),
            reader.duration()
        )
    );
    for tr in 0..nt {
        let mut buf = [0u8; 128];
        let mut len = 0;
        assert_eq!(
            unsafe { cf_scalars_track_name(h, tr as u32, buf.as_mut_ptr().cast(), 128, &mut len) },
            CF_OK
        );
        assert_eq!(&buf[..len], reader.track_name(tr).as_bytes());
    }
    let list: Vec<u32> = (0..nt as u32).rev().collect();
    for &t in &[0.0f32, 0.01, 0.5, dur, 3.7, -1.0] {
        for (mode, looping) in [
            (CF_LOOPING_CLAMP, Looping::Clamp),
            (CF_LOOPING_WRAP, Looping::Wrap),
        ] {
            let mut all = vec![MARK; nt * w];
            assert_eq!(
                unsafe { cf_scalars_sample_all(h, t, mode, all.as_mut_ptr(), all.len()) },
                CF_OK
            );
            let mut some = vec![MARK; nt * w];
            let st = unsafe {
                cf_scalars_sample_tracks(
                    h,
                    t,
                    mode,
                    list.as_ptr(),
                    list.len(),
                    some.as_mut_ptr(),
                    some.len(),
                )
            };
            assert_eq!(st, CF_OK);
            for tr in 0..nt {
                let mut v = [0f32; 4];
                reader.sample_track(tr, t, looping, &mut v);
                assert_eq!(bits(&all[tr * w..(tr + 1) * w]), bits(&v[..w]));
                let i = nt - 1 - tr;
                assert_eq!(bits(&some[i * w..(i + 1) * w]), bits(&v[..w]));
            }
        }
    }
    let mut all = vec![MARK; nt * w];
    assert_eq!(
        unsafe { cf_scalars_sample_all(h, f32::NAN, 0, all.as_mut_ptr(), all.len()) },
        CF_ERR_INVALID_TIME
    );
    assert_eq!(
        unsafe { cf_scalars_sample_all(h, 0.0, 0, all.as_mut_ptr(), all.len() - 1) },
        CF_ERR_BUFFER_TOO_SMALL
    );
    let bad = [0u32, nt as u32];
    assert_eq!(
        unsafe {
            cf_scalars_sample_tracks(h, 0.0, 0, bad.as_ptr(), 2, all.as_mut_ptr(), all.len())
        },
        CF_ERR_INDEX_OUT_OF_RANGE
    );
    assert!(all.iter().all(|&x| x == MARK));
    // A clip handle is not a scalar handle, even with the same slot and generation.
    assert_eq!(
        unsafe { cf_clip_num_bones(cf_clip { id: h.id }, &mut 0u32) },
        CF_ERR_INVALID_HANDLE
    );
    assert_eq!(cf_scalars_free(h), CF_OK);
    assert_eq!(cf_scalars_free(h), CF_ERR_INVALID_HANDLE);
}

#[test]
fn every_status_has_a_message_and_last_error_truncates_safely() {
    let mut seen = std::collections::HashSet::new();
    for (i, s) in cf_status::all().iter().enumerate() {
        assert_eq!(*s as i32, i as i32, "codes are dense, in order");
        let m = unsafe { CStr::from_ptr(cf_error_message(*s as i32)) }
            .to_str()
            .unwrap();
        assert!(!m.is_empty() && seen.insert(m), "{m}");
    }
    let past = cf_status::all().len() as i32; // the first code not in use
    for code in [-1, past, i32::MAX, i32::MIN] {
        let m = unsafe { CStr::from_ptr(cf_error_message(code)) };
        assert_eq!(m, c"unknown status code");
    }
    assert_eq!(cf_api_version(), CF_API_VERSION);
    // A failure on this thread, then a 5-byte buffer: 4 bytes and a NUL.
    assert_eq!(cf_clip_free(cf_clip { id: 0 }), CF_ERR_INVALID_HANDLE);
    let full = last_error();
    let mut small = [0xFFu8; 5];
    let n = unsafe { cf_last_error(small.as_mut_ptr().cast(), 5) };
    assert_eq!(n, full.len());
    assert_eq!(&small[..4], &full.as_bytes()[..4]);
    assert_eq!(small[4], 0);
    // Per thread: another thread has seen no failure.
    let other = std::thread::spawn(|| unsafe { cf_last_error(null_mut(), 0) })
        .join()
        .unwrap();
    assert_eq!(other, 0);
}

/// Threads sample one clip while another frees it: every call returns either a correct pose or
/// `CF_ERR_INVALID_HANDLE`, and once free has returned, only the latter.
#[test]
fn threads_sampling_while_the_clip_is_freed_get_a_pose_or_invalid_handle() {
    let bytes = cfa();
    let reader = ClipReader::new(&bytes).unwrap();
    let n = reader.num_bones();
    let mut pose = Pose::new(n);
    reader.sample_pose(0.25, Looping::Clamp, &mut pose);
    let want = bits(&flat(&pose).0);
    for _round in 0..20 {
        let clip = create(&bytes);
        let freed = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    let mut out = Out::new(n);
                    loop {
                        let was_freed = freed.load(std::sync::atomic::Ordering::SeqCst);
                        match out.pose(clip, 0.25, CF_LOOPING_CLAMP) {
                            CF_OK => {
                                assert!(!was_freed, "a freed clip was sampled");
                                assert_eq!(bits(&out.rot), want);
                            }
                            CF_ERR_INVALID_HANDLE => return,
                            other => panic!("unexpected status {other:?}"),
                        }
                    }
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
            assert_eq!(cf_clip_free(clip), CF_OK);
            freed.store(true, std::sync::atomic::Ordering::SeqCst);
        });
    }
}
