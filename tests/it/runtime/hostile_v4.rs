//! Hostile version-4 and version-5 buffers (`docs/FORMAT.md`, "Versions" and "Semantic
//! validation"): every truncation, every byte of the segment blocks (version 4) or of the coded
//! metadata and bit streams (version 5) set to hostile values and random corruptions, each with
//! its checksum and size resealed so that the reader's own checks are what stands.
//! None may panic; a buffer the reader accepts must sample finite values everywhere (full pose,
//! every bone, a bone list), on the four-track path and the per-track one alike.

use clipforge::anim::additive::{AdditiveFormat, first_frame, make_additive};
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::anim::{CompressionSettings, compress};
use clipforge::runtime::format::checksum;
use clipforge::runtime::relayout::relayout;
use clipforge::runtime::{ClipReader, Defaults, FormatError, Looping, Pose};

/// Version-4 buffers of generated clips with one, two and eight segments, plain and additive.
fn buffers() -> Vec<(String, Vec<u8>)> {
    buffers_in(4)
}

/// The same clips laid out as `version` (the writer's own buffers are version 5).
fn buffers_in(version: u16) -> Vec<(String, Vec<u8>)> {
    let settings = CompressionSettings::default();
    let mut out = Vec::new();
    for (seed, samples) in [(1u64, 2usize), (2, 40), (3, 130)] {
        let clip = generate(&GenerateOptions {
            seed,
            num_samples: samples,
            with_scale: seed != 2,
            ..Default::default()
        });
        out.push((
            format!("generated {seed}"),
            compress(&clip, &settings).unwrap().bytes,
        ));
        let layer = make_additive(&clip, &first_frame(&clip), AdditiveFormat::Relative).unwrap();
        out.push((
            format!("generated {seed} additive"),
            compress(&layer, &settings).unwrap().bytes,
        ));
    }
    for (name, b) in &mut out {
        assert_eq!(
            u16::from_le_bytes([b[4], b[5]]),
            5,
            "{name}: the writer stamps 5"
        );
        *b = relayout(b, version).unwrap();
        assert_eq!(u16::from_le_bytes([b[4], b[5]]), version, "{name}");
    }
    out
}

fn reseal(b: &mut [u8]) {
    let len = b.len() as u32;
    b[12..16].copy_from_slice(&len.to_le_bytes());
    let crc = checksum(b);
    b[8..12].copy_from_slice(&crc.to_le_bytes());
}

/// Reads `b`; when accepted, samples it everywhere and checks every value is finite. True when
/// accepted.
fn read_and_sample(label: &str, b: &[u8]) -> bool {
    let r = match ClipReader::new(b) {
        Ok(r) => r,
        Err(e) => {
            if let FormatError::Corrupt(m) = &e {
                assert!(!m.is_empty(), "{label}: empty message");
            }
            return false;
        }
    };
    let mut pose = Pose::new(r.num_bones());
    let list: Vec<u32> = (0..r.num_bones() as u32).step_by(3).collect();
    let d = r.duration();
    for t in [0.0, 0.37 * d, 0.5 * d + 0.001, d, 2.0 * d] {
        for looping in [Looping::Clamp, Looping::Wrap] {
            r.sample_pose(t, looping, &mut pose);
            let finite = (0..pose.len()).all(|i| {
                pose.rotations[i].is_finite()
                    && pose.translations[i].is_finite()
                    && pose.scales[i].is_finite()
            });
            assert!(finite, "{label}: non-finite pose at t = {t}");
            r.sample_bones(&list, t, looping, Defaults::Write, &mut pose)
                .unwrap();
            for bone in 0..r.num_bones() {
                let (q, tr, s) = r.sample_bone(bone, t, looping).unwrap();
                assert!(
                    q.is_finite() && tr.is_finite() && s.is_finite(),
                    "{label}: bone {bone} at t = {t}"
                );
            }
        }
    }
    true
}

/// Where the segment blocks start: what version 4 changed (the sections before are version
/// 3's, tested with it).
fn segments_start(b: &[u8]) -> usize {
    // Both layouts share everything before section 6 but the header's version, sizes and
    // checksum: the first byte after the header where they differ starts section 6.
    let v3 = relayout(b, 3).unwrap();
    (48..b.len().min(v3.len()))
        .find(|&i| b[i] != v3[i])
        .expect("the layouts differ")
}

#[test]
fn every_truncation_is_refused() {
    for (name, b) in buffers().into_iter().chain(buffers_in(5)) {
        for len in 0..b.len() {
            let mut t = b[..len].to_vec();
            if len >= 16 {
                reseal(&mut t);
            }
            assert!(
                ClipReader::new(&t).is_err(),
                "{name}: truncated to {len} bytes and accepted"
            );
        }
    }
}

#[test]
fn hostile_bytes_in_the_segment_blocks_never_panic() {
    hostile_bytes_in_the_segments_never_panic(4);
}

#[test]
fn hostile_bytes_in_the_coded_metadata_and_streams_never_panic() {
    hostile_bytes_in_the_segments_never_panic(5);
}

fn hostile_bytes_in_the_segments_never_panic(version: u16) {
    let mut accepted = 0;
    let mut refused = 0;
    for (name, b) in buffers_in(version) {
        let runtime_size = u32::from_le_bytes(b[16..20].try_into().unwrap()) as usize;
        let start = segments_start(&b);
        for i in start..runtime_size {
            for v in [0x00, 0xFF, 0x80, 0x7F, b[i].wrapping_add(1), b[i] ^ 0x80] {
                if v == b[i] {
                    continue;
                }
                let mut h = b.clone();
                h[i] = v;
                reseal(&mut h);
                if read_and_sample(&format!("{name}: byte {i} = {v:#x}"), &h) {
                    accepted += 1;
                } else {
                    refused += 1;
                }
            }
        }
    }
    eprintln!(
        "version {version}: {accepted} hostile buffers accepted (and sampled finite), {refused} refused"
    );
    assert!(refused > 1000 && accepted > 1000);
}

#[test]
fn random_corruptions_of_versions_4_and_5_never_panic() {
    let mut s = 0x4C0FFEEu64;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) as usize
    };
    let bufs: Vec<(String, Vec<u8>)> = buffers().into_iter().chain(buffers_in(5)).collect();
    for k in 0..8000 {
        let (name, b) = &bufs[k % bufs.len()];
        let mut h = b.clone();
        for _ in 0..1 + next() % 4 {
            let i = 48 + next() % (h.len() - 48);
            h[i] = next() as u8;
        }
        reseal(&mut h);
        read_and_sample(&format!("{name}: corruption {k}"), &h);
    }
}

/// `h`, resealed, is refused as corrupt with a message containing `what`.
fn expect(mut h: Vec<u8>, what: &str) {
    reseal(&mut h);
    let e = ClipReader::new(&h).expect_err("refused").to_string();
    assert!(
        e.starts_with("corrupt buffer: ") && e.contains(what),
        "{e} (wanted {what})"
    );
}

#[test]
fn version_4_refusals_name_the_problem() {
    let (_, b) = buffers().remove(4); // eight segments
    let start = segments_start(&b);
    // A block whose bits per sample disagree with its widths.
    let mut h = b.clone();
    h[start] ^= 1;
    expect(h, "segment 0");
    // A huge bits per sample: bounded before anything is read through it.
    let mut h = b.clone();
    h[start..start + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    expect(h, "segment 0: 4294967295 bits per sample");
    // The raw-w flag (bit 15) on a track whose segment drops a component.
    let mut h = b.clone();
    h[start + 5] |= 0x80;
    expect(h, "bit 15");
    // A byte after the last block (the blocks must tile the runtime data).
    let mut h = b.clone();
    let runtime_size = u32::from_le_bytes(h[16..20].try_into().unwrap()) as usize;
    h.insert(runtime_size, 0);
    let rs = (runtime_size + 1) as u32;
    h[16..20].copy_from_slice(&rs.to_le_bytes());
    expect(h, "the segments end at byte");
}

#[test]
fn version_5_refusals_name_the_problem() {
    let (_, b) = buffers_in(5).remove(4); // eight segments
    let start = segments_start(&b);
    let len = u32::from_le_bytes(b[start..start + 4].try_into().unwrap()) as usize;
    // A coded length past the runtime data.
    let mut h = b.clone();
    h[start..start + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    reseal(&mut h);
    let e = ClipReader::new(&h).expect_err("refused").to_string();
    assert!(e.starts_with("buffer truncated"), "{e}");
    // Too few coded bytes for the segments and sub-tracks: refused before anything is expanded.
    let mut h = b.clone();
    h[start..start + 4].copy_from_slice(&4u32.to_le_bytes());
    expect(h, "cannot hold");
    // One coded byte more than the values use (the streams then start a byte late).
    let mut h = b.clone();
    h[start..start + 4].copy_from_slice(&((len + 1) as u32).to_le_bytes());
    expect(h, "coded segment metadata");
    // A clip without animated sub-tracks is written as version 4 (nothing bounds the segment
    // count of a version 5 one); stamped 5 it is refused, and relayout keeps it in 4.
    let n = 70;
    let still = clipforge::anim::RawClip::new(
        "still",
        clipforge::anim::Skeleton::from_ordered(vec![clipforge::anim::BoneDesc::new("root", None)])
            .unwrap(),
        30.0,
        n,
        vec![glam::Quat::IDENTITY; n],
        vec![glam::Vec3::new(1.0, 2.0, 3.0); n],
        vec![glam::Vec3::ONE; n],
    )
    .unwrap();
    let b4 = compress(&still, &CompressionSettings::default())
        .unwrap()
        .bytes;
    assert_eq!(u16::from_le_bytes([b4[4], b4[5]]), 4);
    assert_eq!(ClipReader::new(&b4).unwrap().num_animated_subtracks(), 0);
    assert_eq!(relayout(&b4, 5).unwrap(), b4);
    let mut h = b4.clone();
    h[4..6].copy_from_slice(&5u16.to_le_bytes());
    expect(h, "no animated sub-track");
}

/// Coarse thresholds give segments whose tracks all have zero widths (no bits at all): the
/// four-track loads of such a block reach into the tail bytes, which the validation must count
/// exactly (it once refused such blocks, so the compressor's read-back failed at 1–10 cm). Every
/// buffer reads back, and decodes as its version-3 layout does.
#[test]
fn coarse_thresholds_write_readable_version_4() {
    let mut zero_width_segments = 0;
    for (seed, samples) in [(4u64, 9usize), (5, 33), (6, 70), (7, 131)] {
        let clip = generate(&GenerateOptions {
            seed,
            num_samples: samples,
            with_scale: seed % 2 == 0,
            ..Default::default()
        });
        for threshold in [0.3f32, 1.0, 3.0, 10.0, 100.0] {
            let settings = CompressionSettings {
                error_threshold: threshold,
                ..Default::default()
            };
            let label = format!("seed {seed} at {threshold} cm");
            let b = compress(&clip, &settings)
                .unwrap_or_else(|e| panic!("{label}: {e}"))
                .bytes;
            let r = ClipReader::new(&b).unwrap();
            zero_width_segments += (0..r.num_segments())
                .filter(|&s| r.segment_widths(s).all(|w| w == [0; 3]))
                .count();
            let v3 = relayout(&b, 3).unwrap();
            let r3 = ClipReader::new(&v3).unwrap();
            let (mut p, mut p3) = (Pose::default(), Pose::default());
            for i in 0..r.num_stored_samples() {
                r.decode_sample(i, &mut p);
                r3.decode_sample(i, &mut p3);
                assert_eq!(p, p3, "{label}: sample {i}");
            }
        }
    }
    assert!(
        zero_width_segments > 0,
        "no segment without bits was tested"
    );
}
