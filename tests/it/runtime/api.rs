//! `clipforge-runtime`'s sampling API (issue 23, item 2) against its full-pose path, and the
//! promise that no sampling call allocates: a list of bones (one seek for the list), the
//! writer-style option that leaves default sub-tracks to the caller, an additive layer applied
//! onto a base pose, scalar tracks (all, or a list). On generated clips (always) and on the
//! real clips and scalar lists of `CLIPFORGE_DATA` when it is set.

use crate::common;

use clipforge::anim::additive::{AdditiveFormat, apply_f32, first_frame, make_additive};
use clipforge::anim::formats::acl::{AclFile, read_acl_file};
use clipforge::anim::formats::load_clips;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::anim::scalar::compress_scalar_list;
use clipforge::anim::{CompressionSettings, RawClip, compress};
use clipforge::runtime::scalar::ScalarReader;
use clipforge::runtime::{ClipReader, Defaults, Looping, Pose, PoseMut, SampleError, Sampler};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the allocations made on the current thread (tests run on several threads at once).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

fn generated() -> Vec<(String, RawClip)> {
    (1..=3)
        .map(|seed| {
            let c = generate(&GenerateOptions {
                seed,
                num_samples: [2, 40, 130][seed as usize - 1],
                with_scale: seed != 2,
                ..Default::default()
            });
            (format!("generated {seed}"), c)
        })
        .collect()
}

fn real() -> Vec<(String, RawClip)> {
    let Some(data) = common::real_data() else {
        return Vec::new();
    };
    let mut v = Vec::new();
    for name in [
        "09_02",
        "27_06",
        "81_18_looping",
        "09_02_with_scale",
        "104_30",
    ] {
        let p = data
            .join("acl-regression")
            .join(format!("{name}.acl.sjson"));
        v.push((name.to_string(), load_clips(&p).unwrap().remove(0)));
    }
    v
}

/// Plain buffers and an additive layer of each clip.
fn buffers() -> Vec<(String, Vec<u8>)> {
    let settings = CompressionSettings::default();
    let mut out = Vec::new();
    for (name, clip) in generated().into_iter().chain(real()) {
        out.push((name.clone(), compress(&clip, &settings).unwrap().bytes));
        let layer = make_additive(&clip, &first_frame(&clip), AdditiveFormat::Relative).unwrap();
        out.push((
            format!("{name} additive"),
            compress(&layer, &settings).unwrap().bytes,
        ));
    }
    out
}

fn times(r: &ClipReader) -> Vec<f32> {
    let d = r.duration();
    (0..=23)
        .map(|i| i as f32 / 20.0 * d - 0.05)
        .chain([0.0, d, d * 0.37])
        .collect()
}

fn garbage(n: usize) -> Pose {
    let mut p = Pose::new(n);
    for b in 0..n {
        p.rotations[b] = glam::Quat::from_xyzw(0.5, -0.5, 0.5, 0.5);
        p.translations[b] = glam::Vec3A::splat(-777.0);
        p.scales[b] = glam::Vec3A::splat(9.0);
    }
    p
}

#[test]
fn a_bone_list_equals_the_full_pose_for_its_bones_and_leaves_the_others() {
    for (name, bytes) in buffers() {
        let r = ClipReader::new(&bytes).unwrap();
        let n = r.num_bones();
        let list: Vec<u32> = (0..n as u32).filter(|b| b % 3 != 1).rev().collect();
        let mut full = Pose::new(n);
        for t in times(&r) {
            for looping in [Looping::Clamp, Looping::Wrap] {
                r.sample_pose(t, looping, &mut full);
                let mut p = garbage(n);
                r.sample_bones(&list, t, looping, Defaults::Write, &mut p)
                    .unwrap();
                for b in 0..n {
                    let got = (p.rotations[b], p.translations[b], p.scales[b]);
                    if list.contains(&(b as u32)) {
                        let want = (full.rotations[b], full.translations[b], full.scales[b]);
                        assert_eq!(got, want, "{name}: bone {b} at {t} {looping:?}");
                    } else {
                        assert_eq!(
                            got,
                            (
                                garbage(1).rotations[0],
                                garbage(1).translations[0],
                                garbage(1).scales[0]
                            )
                        );
                    }
                }
                // One bone agrees with the list (and so with the full pose).
                if n > 0 {
                    let one = r.sample_bone(list[0] as usize, t, looping).unwrap();
                    let b = list[0] as usize;
                    assert!(one.0.dot(full.rotations[b]).abs() > 1.0 - 1e-6, "{name}");
                    assert_eq!(
                        (one.1, one.2),
                        (full.translations[b], full.scales[b]),
                        "{name}"
                    );
                }
            }
        }
        let mut p = Pose::new(n);
        assert_eq!(
            r.sample_bones(&[n as u32], 0.0, Looping::Clamp, Defaults::Write, &mut p),
            Err(SampleError::NoSuchBone {
                bone: n as u32,
                num_bones: n
            })
        );
        let mut small = Pose::new(n.saturating_sub(1));
        assert!(matches!(
            r.sample_bones(&[0], 0.0, Looping::Clamp, Defaults::Write, &mut small),
            Err(SampleError::OutputSize { .. })
        ));
    }
}

/// `sample_pose_into` writes caller-owned arrays exactly as `sample_pose_with` writes a `Pose`
/// (both default modes, onto garbage so that a sub-track it wrongly skips or writes shows), and
/// refuses arrays of the wrong length before writing anything.
#[test]
fn sampling_into_caller_arrays_equals_sampling_into_a_pose() {
    for (name, bytes) in buffers() {
        let r = ClipReader::new(&bytes).unwrap();
        let n = r.num_bones();
        let mut sampler = Sampler::new(&r);
        for t in times(&r) {
            for (looping, defaults) in [
                (Looping::Clamp, Defaults::Write),
                (Looping::Wrap, Defaults::Skip),
                (Looping::Clamp, Defaults::Skip),
            ] {
                let mut want = garbage(n);
                r.sample_pose_with(t, looping, defaults, &mut want);
                let mut got = garbage(n);
                let out = PoseMut {
                    rotations: &mut got.rotations,
                    translations: &mut got.translations,
                    scales: &mut got.scales,
                };
                assert_eq!(r.sample_pose_into(t, looping, defaults, out), Ok(()));
                // A sampler (its cache kept across these calls) writes the same.
                let mut cached = garbage(n);
                let out = PoseMut {
                    rotations: &mut cached.rotations,
                    translations: &mut cached.translations,
                    scales: &mut cached.scales,
                };
                assert_eq!(sampler.sample_pose_into(t, looping, defaults, out), Ok(()));

                let bits = |p: &Pose| {
                    let mut v: Vec<u32> = Vec::new();
                    for b in 0..n {
                        v.extend(p.rotations[b].to_array().map(f32::to_bits));
                        v.extend(p.translations[b].to_array().map(f32::to_bits));
                        v.extend(p.scales[b].to_array().map(f32::to_bits));
                    }
                    v
                };
                assert_eq!(bits(&got), bits(&want), "{name} at {t} {defaults:?}");
                assert_eq!(
                    bits(&cached),
                    bits(&want),
                    "{name} at {t} {defaults:?}, sampler"
                );
            }
        }
        // One array too short: refused, and the others untouched.
        if n == 0 {
            continue;
        }
        let mut p = garbage(n);
        let mut short = vec![glam::Vec3A::splat(-777.0); n - 1];
        let out = PoseMut {
            rotations: &mut p.rotations,
            translations: &mut short,
            scales: &mut p.scales,
        };
        assert_eq!(
            r.sample_pose_into(0.0, Looping::Clamp, Defaults::Write, out),
            Err(SampleError::OutputSize {
                expected: n,
                got: n - 1
            }),
            "{name}"
        );
        assert_eq!(p, garbage(n), "{name}: nothing written");
        assert!(short.iter().all(|v| *v == glam::Vec3A::splat(-777.0)));
        let out = PoseMut {
            rotations: &mut p.rotations,
            translations: &mut short,
            scales: &mut p.scales,
        };
        assert_eq!(
            sampler.sample_pose_into(0.0, Looping::Clamp, Defaults::Write, out),
            Err(SampleError::OutputSize {
                expected: n,
                got: n - 1
            }),
            "{name}, sampler"
        );
        assert_eq!(p, garbage(n), "{name}: nothing written by the sampler");
    }
}

#[test]
fn skipping_defaults_leaves_them_and_writes_everything_else() {
    for (name, bytes) in buffers() {
        let r = ClipReader::new(&bytes).unwrap();
        let n = r.num_bones();
        let mut full = Pose::new(n);
        let mut bind = Pose::new(n);
        r.bind_pose_into(&mut bind);
        let mut defaults = 0;
        for t in times(&r) {
            r.sample_pose(t, Looping::Clamp, &mut full);
            // Pre-filled once with the bind pose: the same pose as the full path.
            let mut p = bind.clone();
            r.sample_pose_with(t, Looping::Clamp, Defaults::Skip, &mut p);
            assert_eq!(p, full, "{name} at {t}");
            // Pre-filled with garbage: exactly the default sub-tracks keep it.
            let mut g = garbage(n);
            r.sample_pose_with(t, Looping::Clamp, Defaults::Skip, &mut g);
            let junk = garbage(1);
            for b in 0..n {
                let kinds = r.subtrack_kinds(b);
                let is_default = kinds.map(|k| k == clipforge::runtime::format::KIND_DEFAULT);
                defaults += is_default.iter().filter(|&&d| d).count();
                let got = [
                    g.rotations[b]
                        == if is_default[0] {
                            junk.rotations[0]
                        } else {
                            full.rotations[b]
                        },
                    g.translations[b]
                        == if is_default[1] {
                            junk.translations[0]
                        } else {
                            full.translations[b]
                        },
                    g.scales[b]
                        == if is_default[2] {
                            junk.scales[0]
                        } else {
                            full.scales[b]
                        },
                ];
                assert_eq!(got, [true; 3], "{name}: bone {b} at {t} ({kinds:?})");
            }
        }
        assert!(
            defaults > 0 || n == 0,
            "{name}: no default sub-track tested"
        );
    }
}

#[test]
fn an_additive_layer_applies_onto_the_base_as_the_compressor_measures_it() {
    for (name, bytes) in buffers() {
        let r = ClipReader::new(&bytes).unwrap();
        let n = r.num_bones();
        let mut scratch = Pose::new(n);
        let Some(format) = clipforge::runtime::AdditiveFormat::from_code(r.additive_format())
        else {
            assert_eq!(
                r.sample_additive_onto(0.0, Looping::Clamp, &mut scratch, &mut Pose::new(n)),
                Err(SampleError::NotAdditive)
            );
            continue;
        };
        assert_eq!(format, clipforge::runtime::AdditiveFormat::Relative);
        let mut base = Pose::new(n);
        let mut layer = Pose::new(n);
        for t in times(&r) {
            r.bind_pose_into(&mut base);
            base.translations
                .iter_mut()
                .for_each(|v| *v += glam::Vec3A::new(1.0, 2.0, 3.0));
            let before = base.clone();
            r.sample_additive_onto(t, Looping::Clamp, &mut scratch, &mut base)
                .unwrap();
            r.sample_pose(t, Looping::Clamp, &mut layer);
            for b in 0..n {
                let want = apply_f32(
                    AdditiveFormat::Relative,
                    (
                        before.rotations[b],
                        before.translations[b],
                        before.scales[b],
                    ),
                    (layer.rotations[b], layer.translations[b], layer.scales[b]),
                );
                assert_eq!(
                    (base.rotations[b], base.translations[b], base.scales[b]),
                    want,
                    "{name}"
                );
            }
        }
    }
}

fn scalar_lists() -> Vec<Vec<u8>> {
    let mut texts = vec![(
        "inline".to_string(),
        "version = 4\ntrack_list =\n{\n\tname = \"l\"\n\tnum_samples = 37\n\tsample_rate = 30\n}\ntracks =\n[\n".to_string()
            + &(0..3)
                .map(|t| {
                    let rows: String = (0..37)
                        .map(|i| format!("\t\t\t[ {}, {} ]\n", (i as f64 * 0.3 + t as f64).sin(), t as f64 * 2.0))
                        .collect();
                    format!("\t{{\n\t\tname = \"t{t}\"\n\t\ttype = \"float2f\"\n\t\tprecision = 0.001\n\t\tdata =\n\t\t[\n{rows}\t\t]\n\t}}\n")
                })
                .collect::<String>()
            + "]\n",
    )];
    if let Some(data) = common::real_data() {
        for e in std::fs::read_dir(data.join("acl-regression")).unwrap() {
            let p = e.unwrap().path();
            if p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("track_list_")
            {
                texts.push((
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    texts
        .into_iter()
        .map(
            |(name, text)| match read_acl_file(&text, std::path::Path::new(&name)).unwrap() {
                AclFile::Scalars(l) => compress_scalar_list(&l).unwrap().bytes,
                AclFile::Clip(_) => panic!("{name}: not a scalar list"),
            },
        )
        .collect()
}

#[test]
fn scalar_tracks_sample_all_or_a_list_as_one_track_at_a_time() {
    for bytes in scalar_lists() {
        let r = ScalarReader::new(&bytes).unwrap();
        let w = r.track_type().width();
        let k = r.num_tracks();
        let list: Vec<u32> = (0..k as u32).rev().chain([0]).collect();
        let mut all = vec![0.0; k * w];
        let mut some = vec![0.0; list.len() * w];
        let mut one = [0.0; 4];
        for i in 0..30 {
            let t = i as f32 * 0.05 * r.duration() - 0.1;
            r.sample_all_into(t, Looping::Clamp, &mut all).unwrap();
            r.sample_tracks(&list, t, Looping::Clamp, &mut some)
                .unwrap();
            for (j, &tr) in list.iter().enumerate() {
                r.sample_track(tr as usize, t, Looping::Clamp, &mut one);
                assert_eq!(&some[j * w..(j + 1) * w], &one[..w]);
                assert_eq!(&all[tr as usize * w..(tr as usize + 1) * w], &one[..w]);
            }
        }
        assert!(matches!(
            r.sample_tracks(&[k as u32], 0.0, Looping::Clamp, &mut some),
            Err(SampleError::NoSuchTrack { .. })
        ));
        assert!(matches!(
            r.sample_all_into(0.0, Looping::Clamp, &mut all[..k * w - 1]),
            Err(SampleError::OutputSize { .. })
        ));
    }
}

#[test]
fn no_sampling_call_allocates() {
    let bufs = buffers();
    let scalars = scalar_lists();
    let readers: Vec<ClipReader> = bufs
        .iter()
        .map(|(_, b)| ClipReader::new(b).unwrap())
        .collect();
    let sreaders: Vec<ScalarReader> = scalars
        .iter()
        .map(|b| ScalarReader::new(b).unwrap())
        .collect();
    let mut poses: Vec<(Pose, Pose)> = readers
        .iter()
        .map(|r| (Pose::new(r.num_bones()), Pose::new(r.num_bones())))
        .collect();
    let lists: Vec<Vec<u32>> = readers
        .iter()
        .map(|r| (0..r.num_bones() as u32).step_by(3).collect())
        .collect();
    let mut out: Vec<Vec<f32>> = sreaders
        .iter()
        .map(|r| vec![0.0; r.num_tracks() * r.track_type().width()])
        .collect();
    let mut samplers: Vec<Sampler> = readers.iter().map(Sampler::new).collect();
    let mut calls = 0usize;
    let before = allocations();
    for (i, r) in readers.iter().enumerate() {
        let (p, scratch) = &mut poses[i];
        let sampler = &mut samplers[i];
        for k in 0..50 {
            let t = k as f32 * 0.031 - 0.2;
            for looping in [Looping::Clamp, Looping::Wrap] {
                r.sample_pose(t, looping, p);
                r.sample_pose_with(t, looping, Defaults::Skip, p);
                sampler.sample_pose(t, looping, p);
                std::hint::black_box(r.sample_bone(k % r.num_bones().max(1), t, looping));
                r.sample_bones(&lists[i], t, looping, Defaults::Write, p)
                    .unwrap();
                r.decode_sample(k, p);
                r.decode_blend(k, k + 1, 0.25, p);
                let _ = r.sample_additive_onto(t, looping, scratch, p);
                calls += 8;
            }
        }
    }
    for (i, r) in sreaders.iter().enumerate() {
        let mut one = [0.0; 4];
        for k in 0..50 {
            let t = k as f32 * 0.031;
            r.sample_all_into(t, Looping::Clamp, &mut out[i]).unwrap();
            r.sample_tracks(&[0], t, Looping::Wrap, &mut out[i])
                .unwrap();
            r.sample_track(0, t, Looping::Clamp, &mut one);
            calls += 3;
        }
    }
    let after = allocations();
    std::hint::black_box(&poses);
    assert!(calls > 1000);
    assert_eq!(
        after - before,
        0,
        "{} allocations in {calls} sampling calls",
        after - before
    );
    // The counter counts: building a reader allocates (its tables).
    let a = allocations();
    let r = ClipReader::new(&bufs[0].1).unwrap();
    assert!(allocations() > a);
    drop(r);
}
