//! Reference rotations (`.cfa` flags bit 4, `docs/FORMAT.md` section 5b) on a real additive clip
//! (`CLIPFORGE_DATA`): ACL's 49_15 relative to its first frame is stored with most of its
//! rotations relative to a reference (11 of 17 since the search walks roots first; 09_02, the
//! clip this test used before, kept none then); the buffer decodes to the combined-pose error the compressor
//! reported, and the reader refuses a reference section a hostile file bends (checksum resealed).

use crate::common;

use clipforge_anim::additive::{AdditiveFormat, first_frame, make_additive, measure_combined};
use clipforge_anim::formats::load_clips;
use clipforge_anim::runtime::format::{
    FLAG_COMPACT_REFERENCES, FLAG_ROTATION_REFERENCES, checksum,
};
use clipforge_anim::{ClipReader, CompressionSettings, compress};

fn u16_at(b: &[u8], o: usize) -> usize {
    u16::from_le_bytes([b[o], b[o + 1]]) as usize
}
fn u32_at(b: &[u8], o: usize) -> usize {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]) as usize
}
fn align4(x: usize) -> usize {
    x.div_ceil(4) * 4
}

/// Offset of the reference bits, the number of animated sub-tracks and the stream index of
/// each animated sub-track's kind (0 rotation, 1 translation, 2 scale), from the layout.
fn reference_section(b: &[u8]) -> (usize, Vec<u8>) {
    let nb = u16_at(b, 20);
    let (nconst, nq) = (u32_at(b, 36), u32_at(b, 44));
    let desc = &b[48..48 + nb];
    let mut kinds = Vec::new();
    let mut qtrans = false;
    for &d in desc {
        for k in 0..3u8 {
            match (d >> (2 * k)) & 3 {
                2 => kinds.push(k),
                3 if k == 1 => qtrans = true,
                _ => {}
            }
        }
    }
    let mut pos = align4(48 + nb) + 12 * nconst + if qtrans { 24 } else { 0 } + 6 * nq;
    pos = align4(pos);
    let rots = kinds.iter().filter(|&&k| k == 0).count();
    pos = align4(pos + 12 * rots + 24 * (kinds.len() - rots));
    (pos, kinds)
}

fn resealed(mut b: Vec<u8>) -> Vec<u8> {
    let crc = checksum(&b);
    b[8..12].copy_from_slice(&crc.to_le_bytes());
    b
}

#[test]
fn reference_rotations_decode_and_bent_ones_are_refused() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let clip = load_clips(&data.join("acl-regression/49_15.acl.sjson"))
        .unwrap()
        .remove(0);
    let add = make_additive(&clip, &first_frame(&clip), AdditiveFormat::DEFAULT).unwrap();
    let c = compress(&add, &CompressionSettings::default()).unwrap();
    let flags = u16_at(&c.bytes, 6) as u16;
    assert_ne!(
        flags & FLAG_ROTATION_REFERENCES,
        0,
        "49_15 relative to its first frame no longer uses reference rotations: pick another clip"
    );
    assert_ne!(
        flags & FLAG_COMPACT_REFERENCES,
        0,
        "the compressor writes 3-byte references"
    );
    // Decoded through the reader, the combined pose is what the compressor measured.
    let reader = ClipReader::new(&c.bytes).unwrap();
    let decoded = clipforge_anim::decompress::to_raw_clip(&reader);
    let e = measure_combined(
        &add,
        add.additive.as_ref().unwrap(),
        &decoded,
        &[],
        &add.skeleton.shell_distances,
    )
    .unwrap();
    assert!(e.max <= 0.01, "{}", e.max);
    assert_eq!(e.max, c.error.max_at_samples);

    let (bits_off, kinds) = reference_section(&c.bytes);
    let set = |b: &[u8], a: usize| b[bits_off + a / 8] >> (a % 8) & 1 == 1;
    let refs = (0..kinds.len()).filter(|&a| set(&c.bytes, a)).count();
    let rotations = kinds.iter().filter(|&&k| k == 0).count();
    eprintln!("{refs} of {rotations} animated rotations relative to a reference");
    // Several references, so the decode above goes through them (a clip that keeps one is one
    // search change away from keeping none, as 09_02 did).
    assert!(
        refs >= 4,
        "49_15 keeps {refs} references: pick a clip that keeps several"
    );
    let first_ref = (0..kinds.len()).find(|&a| set(&c.bytes, a)).unwrap();
    assert_eq!(kinds[first_ref], 0, "a reference on a non-rotation");
    // Compact layout: the 3-byte references follow the bits without padding.
    let refs_off = bits_off + kinds.len().div_ceil(8);
    let refused = |b: Vec<u8>, what: &str| {
        let err = ClipReader::new(&resealed(b)).err();
        assert!(err.is_some(), "{what}: accepted");
        eprintln!("{what}: {}", err.unwrap());
    };
    // A reference that is no rotation (x, y, z longer than any unit quaternion's).
    let mut b = c.bytes.clone();
    b[refs_off..refs_off + 3].fill(127);
    refused(b, "too long reference");
    let mut b = c.bytes.clone();
    b[refs_off..refs_off + 3].fill(0x80);
    refused(b, "too long negative reference");
    // A reference bit on a translation.
    if let Some(t) = kinds.iter().position(|&k| k != 0) {
        let mut b = c.bytes.clone();
        b[bits_off + t / 8] |= 1 << (t % 8);
        refused(b, "reference on a translation");
    }
    // A bit past the last animated sub-track.
    if !kinds.len().is_multiple_of(8) {
        let mut b = c.bytes.clone();
        b[bits_off + kinds.len() / 8] |= 0x80;
        refused(b, "bit past the last track");
    }
    // The flag cleared: the reference section is read as segment headers (and bit 6 alone is
    // refused outright).
    let mut b = c.bytes.clone();
    b[6] &= !(FLAG_ROTATION_REFERENCES as u8);
    refused(b, "flag cleared");
    let mut b = c.bytes.clone();
    b[6] &= !((FLAG_ROTATION_REFERENCES | FLAG_COMPACT_REFERENCES) as u8);
    refused(b, "both flags cleared");
}

/// The first layout of the reference section (flags bit 4 alone: 4-byte references after the
/// bits padded to 4), as in the committed fuzz seed written before bit 6 existed, still reads
/// and decodes; a reference bent to zero length in it is refused.
#[test]
fn four_byte_references_still_read_and_bent_ones_are_refused() {
    let path = common::repo_root().join("fuzz/seeds/cfa/additive-references.cfa");
    let bytes = std::fs::read(&path).unwrap();
    let flags = u16_at(&bytes, 6) as u16;
    assert_ne!(flags & FLAG_ROTATION_REFERENCES, 0);
    assert_eq!(flags & FLAG_COMPACT_REFERENCES, 0);
    let reader = ClipReader::new(&bytes).unwrap();
    let decoded = clipforge_anim::decompress::to_raw_clip(&reader);
    assert!(
        decoded
            .rotations
            .iter()
            .all(|q| q.is_finite() && (q.length() - 1.0).abs() < 1e-3)
    );
    let (bits_off, kinds) = reference_section(&bytes);
    let refs_off = align4(bits_off + kinds.len().div_ceil(8));
    let mut b = bytes.clone();
    b[refs_off..refs_off + 4].fill(0);
    assert!(
        ClipReader::new(&resealed(b)).is_err(),
        "zero reference accepted"
    );
    // Read as the compact layout, the same bytes are not a valid buffer.
    let mut b = bytes;
    b[6] |= FLAG_COMPACT_REFERENCES as u8;
    assert!(
        ClipReader::new(&resealed(b)).is_err(),
        "read as 3-byte references"
    );
}
