//! The `.cfa` settings record (flags bit 7, `docs/FORMAT.md` "Settings record"; issue 26
//! finding 4): the reader accepts files with and without it, sampling reads the same poses
//! either way, the runtime data (what sizes are compared on) is untouched, and a damaged or
//! hostile record is a clear error, never a panic.

use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::anim::runtime::format::{FLAG_SETTINGS, checksum};
use clipforge::anim::runtime::metadata::{self, BoneSetting, Settings, Source};
use clipforge::anim::{ClipReader, Pose};
use clipforge::runtime::{FormatError, Looping};

fn plain() -> Vec<u8> {
    let clip = generate(&GenerateOptions {
        num_samples: 40,
        ..Default::default()
    });
    clipforge::anim::compress(&clip, &Default::default())
        .unwrap()
        .bytes
}

fn settings() -> Settings {
    Settings {
        error_threshold_cm: 0.05,
        threshold_source: Source::Clip,
        shell_distance_cm: Some(2.5),
        shell_source: Source::Folder,
        bones: vec![
            BoneSetting {
                pattern: "head".into(),
                source: Source::Explicit,
                error_threshold_cm: Some(0.002),
                shell_distance_cm: None,
            },
            BoneSetting {
                pattern: "*finger".into(),
                source: Source::Clip,
                error_threshold_cm: None,
                shell_distance_cm: Some(1.0),
            },
        ],
        tool_version: "0.1.0".into(),
    }
}

/// Size and CRC made to match, as a hostile writer would.
fn reseal(b: &mut [u8]) {
    let len = b.len() as u32;
    b[12..16].copy_from_slice(&len.to_le_bytes());
    let crc = checksum(b);
    b[8..12].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn files_with_and_without_the_record_read_and_sample_the_same() {
    let old = plain();
    let mut new = old.clone();
    metadata::append(&mut new, &settings()).unwrap();
    let a = ClipReader::new(&old).unwrap();
    let b = ClipReader::new(&new).unwrap();
    assert!(a.settings().is_none());
    assert_eq!(b.settings(), Some(&settings()));
    assert_eq!(a.runtime_size(), b.runtime_size());
    // Past the header's flags, size and checksum (bytes 6..16), the runtime data is the same.
    let rt = a.runtime_size();
    assert!(new[16..rt] == old[16..rt] && new[..6] == old[..6]);
    assert_eq!(a.skeleton().names, b.skeleton().names);
    let (mut pa, mut pb) = (Pose::new(a.num_bones()), Pose::new(b.num_bones()));
    for i in 0..50 {
        let t = a.duration() * i as f32 / 49.0;
        a.sample_pose(t, Looping::Clamp, &mut pa);
        b.sample_pose(t, Looping::Clamp, &mut pb);
        assert_eq!(pa.rotations, pb.rotations);
        assert_eq!(pa.translations, pb.translations);
        assert_eq!(pa.scales, pb.scales);
    }
    // A second record is refused rather than stacked.
    assert!(metadata::append(&mut new.clone(), &settings()).is_err());
}

/// A record without per-bone settings costs tens of bytes (the bound).
#[test]
fn a_record_without_overrides_is_small() {
    let old = plain();
    let mut new = old.clone();
    let s = Settings {
        bones: Vec::new(),
        ..settings()
    };
    metadata::append(&mut new, &s).unwrap();
    let added = new.len() - old.len();
    assert!(added <= 24, "{added} bytes");
}

/// Every truncation (resealed), every byte of the record set to hostile values (resealed), the
/// flag without a record, and an unknown record version: an error naming the record or a
/// valid record, never a panic.
#[test]
fn hostile_records_are_refused_with_a_clear_error() {
    let old = plain();
    let mut good = old.clone();
    metadata::append(&mut good, &settings()).unwrap();
    let rec_start = old.len();
    for n in rec_start..good.len() {
        let mut b = good[..n].to_vec();
        reseal(&mut b);
        let e = ClipReader::new(&b).expect_err("a truncated record is refused");
        assert!(
            matches!(e, FormatError::Corrupt(_) | FormatError::Truncated { .. }),
            "{n}: {e}"
        );
    }
    for i in rec_start..good.len() {
        for v in [0u8, 1, 2, 0x3f, 0x7f, 0x80, 0xc0, 0xff] {
            let mut b = good.clone();
            b[i] = v;
            reseal(&mut b);
            if let Ok(r) = ClipReader::new(&b) {
                let s = r.settings().expect("flag still set");
                assert!(s.error_threshold_cm.is_finite() && s.error_threshold_cm > 0.0);
                assert!(b.ends_with(&metadata::encode(s)), "byte {i} = {v}");
            }
        }
    }
    let mut flag_only = old.clone();
    let flags = u16::from_le_bytes([flag_only[6], flag_only[7]]) | FLAG_SETTINGS;
    flag_only[6..8].copy_from_slice(&flags.to_le_bytes());
    reseal(&mut flag_only);
    let e = ClipReader::new(&flag_only).unwrap_err().to_string();
    assert!(e.contains("settings record"), "{e}");
    let mut v9 = good.clone();
    v9[rec_start] = 9;
    reseal(&mut v9);
    let e = ClipReader::new(&v9).unwrap_err().to_string();
    assert!(e.contains("settings record: unsupported version 9"), "{e}");
}

/// A clip kept from a comparison gets the record of the settings that will make it from now on:
/// `replace` swaps the record, and leaves the buffer as it was when it refuses.
#[test]
fn a_record_is_replaced_whole() {
    let old = plain();
    let mut buf = old.clone();
    metadata::append(&mut buf, &settings()).unwrap();
    let other = Settings {
        bones: Vec::new(),
        threshold_source: Source::Folder,
        ..settings()
    };
    metadata::replace(&mut buf, &other).unwrap();
    assert_eq!(ClipReader::new(&buf).unwrap().settings(), Some(&other));
    let before = buf.clone();
    let bad = Settings {
        error_threshold_cm: -1.0,
        ..settings()
    };
    assert!(metadata::replace(&mut buf, &bad).is_err());
    assert_eq!(buf, before);
    // A buffer without a record gets one.
    let mut plain_buf = old.clone();
    metadata::replace(&mut plain_buf, &other).unwrap();
    assert_eq!(
        ClipReader::new(&plain_buf).unwrap().settings(),
        Some(&other)
    );
}
