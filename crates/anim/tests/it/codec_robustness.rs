//! A `.cfa` reader must turn truncated, bit-flipped or hostile buffers into errors (or, for a
//! hostile buffer with a valid checksum, into poses) without panicking or reading out of bounds.
//! Property tests: the compressor meets any threshold on random clips.

use clipforge_anim::generate::{GenerateOptions, generate};
use clipforge_anim::runtime::format::checksum;
use clipforge_anim::{ClipReader, CompressionSettings, Looping, Pose, compress, metric};
use proptest::prelude::*;

fn sample_buffer() -> Vec<u8> {
    let clip = generate(&GenerateOptions {
        num_samples: 40,
        with_scale: true,
        ..Default::default()
    });
    compress(&clip, &CompressionSettings::default())
        .unwrap()
        .bytes
}

/// Uses a reader the way a runtime would, at many times, both looping modes, every bone.
fn exercise(r: &ClipReader) {
    let mut pose = Pose::default();
    for i in 0..=20 {
        let t = r.duration() * i as f32 / 20.0 + if i == 20 { 1.0 } else { 0.0 };
        r.sample_pose(t, Looping::Clamp, &mut pose);
        r.sample_pose(-t, Looping::Wrap, &mut pose);
        for b in 0..r.num_bones() {
            r.sample_bone(b, t, Looping::Wrap);
        }
    }
    r.sample_pose(f32::NAN, Looping::Clamp, &mut pose);
    let _ = clipforge_anim::decompress::to_raw_clip(r);
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = sample_buffer();
    for len in 0..bytes.len() {
        assert!(
            ClipReader::new(&bytes[..len]).is_err(),
            "truncated to {len} bytes was accepted"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(ClipReader::new(&longer).is_err());
}

#[test]
fn every_single_bit_flip_is_caught() {
    let bytes = sample_buffer();
    for i in 0..bytes.len() {
        for bit in [0, 3, 7] {
            let mut b = bytes.clone();
            b[i] ^= 1 << bit;
            assert!(
                ClipReader::new(&b).is_err(),
                "flip of bit {bit} of byte {i} was accepted"
            );
        }
    }
}

#[test]
fn hostile_buffers_with_valid_checksums_never_panic() {
    let bytes = sample_buffer();
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut accepted = 0;
    for _ in 0..3000 {
        let mut b = bytes.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() as usize) % b.len();
            b[i] = next() as u8;
        }
        let crc = checksum(&b);
        b[8..12].copy_from_slice(&crc.to_le_bytes());
        if let Ok(r) = ClipReader::new(&b) {
            accepted += 1;
            exercise(&r);
        }
    }
    eprintln!(
        "{accepted} of 3000 mutated buffers were structurally valid and sampled without panic"
    );
}

#[test]
fn garbage_and_wrong_magic_are_errors() {
    assert!(ClipReader::new(b"").is_err());
    assert!(ClipReader::new(b"CFA1").is_err());
    assert!(ClipReader::new(&[0u8; 200]).is_err());
    let mut b = sample_buffer();
    b[0] = b'X';
    assert!(
        ClipReader::new(&b)
            .unwrap_err()
            .to_string()
            .contains("magic")
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// The search meets any threshold, on any clip, and the stored bit widths decode back.
    #[test]
    fn compressor_meets_any_threshold(
        seed in 1u64..1000, samples in 1usize..80, threshold in 0.0005f32..2.0, scale in any::<bool>(), shell in 0.5f32..20.0,
    ) {
        let clip = generate(&GenerateOptions { seed, num_samples: samples, with_scale: scale, ..Default::default() });
        let settings = CompressionSettings { error_threshold: threshold, shell_distance: Some(shell), ..Default::default() };
        let c = compress(&clip, &settings).unwrap();
        let r = ClipReader::new(&c.bytes).unwrap();
        let decoded = clipforge_anim::decompress::to_raw_clip(&r);
        let shells = vec![shell; clip.num_bones()];
        let e = metric::measure_with_shells(&clip, &decoded, &shells).unwrap();
        prop_assert!(e.max <= threshold as f64, "max error {} above {}", e.max, threshold);
        prop_assert_eq!(c.stats.layout.bit_rate_histogram.iter().sum::<u32>() as usize,
            (0..r.num_segments()).map(|s| r.segment_widths(s).count() * 3).sum::<usize>());
    }

    /// A looser threshold never needs more space than a much tighter one.
    #[test]
    fn looser_thresholds_are_not_bigger(seed in 1u64..1000, samples in 20usize..80) {
        let clip = generate(&GenerateOptions { seed, num_samples: samples, ..Default::default() });
        let tight = compress(&clip, &CompressionSettings { error_threshold: 0.001, shell_distance: None, ..Default::default() }).unwrap();
        let loose = compress(&clip, &CompressionSettings { error_threshold: 0.1, shell_distance: None, ..Default::default() }).unwrap();
        prop_assert!(loose.runtime_bytes <= tight.runtime_bytes);
    }
}

#[test]
fn invalid_settings_are_refused() {
    let clip = generate(&GenerateOptions::default());
    for t in [0.0, -1.0, f32::NAN] {
        assert!(
            compress(
                &clip,
                &CompressionSettings {
                    error_threshold: t,
                    shell_distance: None,
                    ..Default::default()
                }
            )
            .is_err()
        );
    }
    assert!(
        compress(
            &clip,
            &CompressionSettings {
                error_threshold: 0.01,
                shell_distance: Some(0.0),
                ..Default::default()
            }
        )
        .is_err()
    );
}
