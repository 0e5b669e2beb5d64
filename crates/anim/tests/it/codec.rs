//! Codec tests on generated clips (no external data): error bound, round trip, sampling.

use crate::common;

use clipforge_anim::generate::{GenerateOptions, generate};
use clipforge_anim::{ClipReader, CompressionSettings, Looping, Pose, compress, metric};

#[test]
fn generated_clips_meet_the_threshold() {
    for (seed, ns, scale) in [
        (1u64, 60usize, false),
        (2, 1, false),
        (3, 2, false),
        (4, 200, true),
        (5, 31, false),
    ] {
        let clip = generate(&GenerateOptions {
            seed,
            num_samples: ns,
            with_scale: scale,
            ..Default::default()
        });
        let settings = CompressionSettings::default();
        let c = compress(&clip, &settings).unwrap();
        let reader = ClipReader::new(&c.bytes).unwrap();
        let decoded = clipforge_anim::decompress::to_raw_clip(&reader);
        let stats = metric::measure(&clip, &decoded).unwrap();
        eprintln!(
            "seed {seed} ns {ns}: {} B (raw {}), max err {:.5}",
            c.runtime_bytes,
            clip.raw_size_bytes(),
            stats.max
        );
        assert!(
            stats.max <= 0.01,
            "seed {seed}: error {} above threshold",
            stats.max
        );
        assert!(c.runtime_bytes < clip.raw_size_bytes() || ns <= 2);
        assert_eq!(decoded.num_samples, clip.num_samples);
        assert_eq!(decoded.skeleton.names, clip.skeleton.names);
    }
}

#[test]
fn sample_pose_matches_stored_samples_and_interpolates() {
    let clip = generate(&GenerateOptions {
        num_samples: 40,
        ..Default::default()
    });
    let c = compress(&clip, &CompressionSettings::default()).unwrap();
    let r = ClipReader::new(&c.bytes).unwrap();
    let mut a = Pose::default();
    let mut b = Pose::default();
    let mut mid = Pose::default();
    r.decode_sample(10, &mut a);
    r.decode_sample(11, &mut b);
    r.sample_pose(10.5 / clip.sample_rate, Looping::Clamp, &mut mid);
    for bone in 0..clip.num_bones() {
        let expect = (a.translations[bone] + b.translations[bone]) * 0.5;
        assert!((mid.translations[bone] - expect).length() < 1e-3);
        let (rot, tr, _) = r
            .sample_bone(bone, 10.5 / clip.sample_rate, Looping::Clamp)
            .unwrap();
        assert!((tr - mid.translations[bone]).length() < 1e-5);
        assert!(rot.dot(mid.rotations[bone]).abs() > 0.99999);
    }
    // Clamped beyond the end = last sample.
    r.sample_pose(100.0, Looping::Clamp, &mut mid);
    r.decode_sample(39, &mut a);
    assert!((mid.translations[0] - a.translations[0]).length() < 1e-4);
}

/// Buffers written by the previous writer (format version 1, float32 rotation clip ranges;
/// `tests/fixtures/cfa-v1/`, compressed from `assets/clips` at 0.01 cm) still read: the reader
/// takes versions 1 to 3, and they decode within the threshold of their source clips.
#[test]
fn version_1_buffers_still_read() {
    let root = common::repo_root();
    for (cfa, src) in [
        (
            "walk_slow.cfa",
            "assets/clips/locomotion/walk_slow.acl.sjson",
        ),
        (
            "swing_scaled.cfa",
            "assets/clips/combat/swing_scaled.acl.sjson",
        ),
    ] {
        let bytes = std::fs::read(root.join("tests/fixtures/cfa-v1").join(cfa)).unwrap();
        assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 1, "{cfa}");
        let reader = ClipReader::new(&bytes).unwrap();
        let clip = clipforge_anim::formats::load_clips(&root.join(src))
            .unwrap()
            .remove(0);
        let e = metric::measure(&clip, &clipforge_anim::decompress::to_raw_clip(&reader)).unwrap();
        assert!(e.max <= 0.01, "{cfa}: {}", e.max);
        // The same clip written today is version 3 and no larger.
        let c = compress(&clip, &CompressionSettings::default()).unwrap();
        assert_eq!(
            u16::from_le_bytes([c.bytes[4], c.bytes[5]]),
            clipforge_anim::runtime::format::VERSION
        );
        assert!(c.runtime_bytes <= reader.runtime_size(), "{cfa}");
    }
}
