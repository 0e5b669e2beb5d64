//! Hostile input for scalar track lists: the `.cfs` reader (truncation, checksum, non-finite
//! ranges and raw values, random corruption with a valid checksum) and the ACL scalar reader
//! (bad outputs, widths, counts, values), each refused with a clear error and never a panic.

use clipforge_anim::Looping;
use clipforge_anim::formats::acl::{AclFile, read_acl_file};
use clipforge_anim::runtime::FormatError;
use clipforge_anim::runtime::scalar::{CRC_OFFSET, HEADER_SIZE, ScalarReader, checksum};
use clipforge_anim::scalar::{RawScalarList, compress_scalar_list};
use std::path::Path;

/// An ACL scalar list: `tracks` rows of float3f over `n` samples; track 0 constant, track 1
/// animated, track 2 all zeros, track 3 with `precision` 0 (stored raw).
fn acl_text(n: usize) -> String {
    let mut s = String::from(
        "version = 4\ntrack_list =\n{\n\tname = \"hostile\"\n\tnum_samples = NUM\n\tsample_rate = 30\n}\ntracks =\n[\n",
    )
    .replace("NUM", &n.to_string());
    for (t, prec) in [(0, "0.001"), (1, "0.001"), (2, "0.001"), (3, "0")] {
        s.push_str(&format!(
            "\t{{\n\t\tname = \"t{t}\"\n\t\ttype = \"float3f\"\n\t\tprecision = {prec}\n\t\tdata =\n\t\t[\n"
        ));
        for i in 0..n {
            let x = i as f64 * 0.37;
            let row = match t {
                0 => "[ 1.5, -2, 0.25 ]".to_string(),
                1 => format!("[ {}, {}, {} ]", x.sin(), (x * 3.0).cos() * 40.0, x * x),
                2 => "[ 0, 0, 0 ]".to_string(),
                _ => format!("[ {}, 1e-3, {} ]", x.cos(), -x),
            };
            s.push_str(&format!("\t\t\t{row}\n"));
        }
        s.push_str("\t\t]\n\t}\n");
    }
    s.push_str("]\n");
    s
}

fn path() -> &'static Path {
    Path::new("hostile.acl.sjson")
}

fn list(n: usize) -> RawScalarList {
    match read_acl_file(&acl_text(n), path()).unwrap() {
        AclFile::Scalars(l) => l,
        AclFile::Clip(_) => panic!("read as a clip"),
    }
}

fn reseal(buf: &mut [u8]) {
    let crc = checksum(buf);
    buf[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn synthetic_list_compresses_within_precision_with_every_kind_of_component() {
    let l = list(40);
    let c = compress_scalar_list(&l).unwrap();
    assert!(c.error.all_within_precision, "{:?}", c.error);
    assert_eq!(c.zero_components, 3);
    assert!(c.constant_components >= 4); // track 0, and track 3's 1e-3 component
    assert_eq!(c.bit_rate_histogram[32], 2, "precision 0: raw float32");
    let r = ScalarReader::new(&c.bytes).unwrap();
    let mut v = [0f32; 4];
    r.decode_sample(3, 7, &mut v);
    assert_eq!(v[0], l.value(3, 7, 0), "a raw component is exact");
}

#[test]
fn truncated_buffers_are_refused() {
    let c = compress_scalar_list(&list(40)).unwrap();
    for len in 0..c.bytes.len() {
        let e = ScalarReader::new(&c.bytes[..len]).unwrap_err();
        assert!(
            matches!(
                e,
                FormatError::Truncated { .. } | FormatError::ChecksumMismatch { .. }
            ),
            "length {len}: {e}"
        );
    }
    // Truncated and resealed: the checksum passes, the layout does not.
    for len in HEADER_SIZE..c.bytes.len() {
        let mut b = c.bytes[..len].to_vec();
        reseal(&mut b);
        assert!(ScalarReader::new(&b).is_err(), "length {len}");
    }
}

#[test]
fn any_flipped_bit_fails_the_checksum() {
    let c = compress_scalar_list(&list(40)).unwrap();
    for bit in 0..c.bytes.len() * 8 {
        let mut b = c.bytes.clone();
        b[bit / 8] ^= 1 << (bit % 8);
        let e = ScalarReader::new(&b).unwrap_err();
        assert!(
            matches!(
                e,
                FormatError::ChecksumMismatch { .. } | FormatError::BadMagic
            ) || matches!(&e, FormatError::Corrupt(m) if m.contains("unsupported .cfs version")
            ),
            "bit {bit}: {e}"
        );
    }
}

#[test]
fn non_finite_ranges_constants_and_raw_values_are_refused() {
    let l = list(40);
    let c = compress_scalar_list(&l).unwrap();
    // Find each float32 whose bits we know (constant 1.5, raw sample 0 of track 3 = cos 0 = 1)
    // and replace it with NaN, resealing the checksum.
    let find = |v: f32, from: usize| -> usize {
        let bits = v.to_le_bytes();
        from + c.bytes[from..]
            .windows(4)
            .position(|w| w == bits)
            .expect("value in buffer")
    };
    for (value, what) in [
        (1.5f32, "constant"),
        (-2.0, "constant"),
        (1.0, "raw sample"),
    ] {
        let at = find(value, HEADER_SIZE);
        let mut b = c.bytes.clone();
        b[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        reseal(&mut b);
        let e = ScalarReader::new(&b).unwrap_err();
        assert!(
            matches!(&e, FormatError::Corrupt(m) if m.contains("not finite")),
            "{what}: {e}"
        );
    }
    // A range minimum: the first float after track 1's first code byte (a quantized code > 1).
    // Per track: its precision (4 B; the tracks' precisions differ) then code + payload per
    // component. Track 0 is three constants (5 B each); track 1's first code follows its precision.
    let t1 = HEADER_SIZE + 4 + 3 * 5 + 4;
    let mut b = c.bytes.clone();
    assert!(
        b[t1] > 1 && b[t1] <= 25,
        "a quantized code at {t1}: {}",
        b[t1]
    );
    b[t1 + 1..t1 + 5].copy_from_slice(&f32::INFINITY.to_le_bytes());
    reseal(&mut b);
    assert!(matches!(
        ScalarReader::new(&b).unwrap_err(),
        FormatError::Corrupt(m) if m.contains("not finite")
    ));
    // A negative extent.
    let mut b = c.bytes.clone();
    b[t1 + 5..t1 + 9].copy_from_slice(&(-1.0f32).to_le_bytes());
    reseal(&mut b);
    assert!(matches!(
        ScalarReader::new(&b).unwrap_err(),
        FormatError::Corrupt(m) if m.contains("bad range")
    ));
}

#[test]
fn corrupt_but_resealed_buffers_never_panic_and_sample_finite_values() {
    let c = compress_scalar_list(&list(40)).unwrap();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut accepted = 0;
    for _ in 0..4000 {
        let mut b = c.bytes.clone();
        for _ in 0..1 + next() % 4 {
            let i = next() as usize % b.len();
            b[i] = next() as u8;
        }
        if next() % 8 == 0 {
            let cut = next() as usize % b.len();
            b.truncate(cut.max(HEADER_SIZE));
        }
        if b.len() >= HEADER_SIZE {
            reseal(&mut b);
        }
        if let Ok(r) = ScalarReader::new(&b) {
            accepted += 1;
            let mut all = Vec::new();
            let mut one = [0f32; 4];
            for t in [-1.0f32, 0.0, 0.3, 0.5, 1.3, 1e9, f32::NAN] {
                for looping in [Looping::Clamp, Looping::Wrap] {
                    r.sample_all(t, looping, &mut all);
                    assert!(all.iter().all(|v| v.is_finite()));
                    r.sample_track(r.num_tracks(), t, looping, &mut one);
                }
            }
        }
    }
    eprintln!("{accepted} of 4000 corrupt buffers passed validation (and sampled finite values)");
}

fn expect_acl_err(text: &str, line: usize, needle: &str) {
    let e = read_acl_file(text, path()).unwrap_err();
    assert_eq!(e.path, path());
    assert!(e.message.contains(needle), "expected {needle:?} in: {e}");
    assert_eq!(e.line, Some(line), "{e}");
}

#[test]
fn acl_scalar_reader_refuses_bad_lists_naming_the_line() {
    let t = acl_text(3);
    // Line numbers: the header takes 9 lines; track 0 opens on line 10 (name 11, type 12,
    // precision 13, data 14, rows 16-18), track 1 on line 21; an inserted line shifts the rest.
    expect_acl_err(
        &t.replacen(
            "precision = 0.001",
            "precision = 0.001\n\t\toutput_index = 1",
            2,
        ),
        26,
        "used twice",
    );
    // Outputs 3, 1, 2 (track 3 stripped): no output 0. Track 1 starts on line 22.
    expect_acl_err(
        &t.replacen(
            "precision = 0.001",
            "precision = 0.001\n\t\toutput_index = 3",
            1,
        )
        .replacen("\"t3\"", "\"t3\"\n\t\toutput_index = 0xFFFFFFFF", 1),
        22,
        "no track has output 0",
    );
    expect_acl_err(
        &t.replacen(
            "precision = 0.001",
            "precision = 0.001\n\t\toutput_index = 9",
            1,
        ),
        14,
        "must be below the number of tracks",
    );
    expect_acl_err(
        &t.replacen("[ 1.5, -2, 0.25 ]", "[ 1.5, -2 ]", 1),
        16,
        "has 3 components, found 2",
    );
    expect_acl_err(
        &t.replacen("[ 1.5, -2, 0.25 ]", "[ 1.5, 1e39, 0.25 ]", 1),
        16,
        "not finite in float32",
    );
    expect_acl_err(
        &t.replacen("num_samples = 3", "num_samples = 4", 1),
        15,
        "data has 3 rows, expected num_samples = 4",
    );
    expect_acl_err(
        &t.replacen("type = \"float3f\"", "type = \"float2f\"", 1),
        23,
        "differs from",
    );
    expect_acl_err(
        &t.replacen("num_samples = 3", "num_samples = 4000000000", 1),
        3,
        "",
    );
    // Negative precision: ACL's default; a stripped track is not an output.
    let l = match read_acl_file(
        &t.replacen("precision = 0.001", "precision = -1", 1)
            .replacen("\"t3\"", "\"t3\"\n\t\toutput_index = 0xFFFFFFFF", 1),
        path(),
    )
    .unwrap()
    {
        AclFile::Scalars(l) => l,
        AclFile::Clip(_) => unreachable!(),
    };
    assert_eq!(l.tracks[0].precision, 0.00001);
    assert_eq!(l.tracks[3].output_index, None);
    assert_eq!(l.output_order(), [0, 1, 2]);
}

#[test]
fn a_huge_sample_count_without_stream_bytes_is_refused() {
    // Constant tracks take no stream bytes: only the cap stops a 40-byte buffer from claiming
    // billions of samples that decoding would allocate.
    let text = acl_text(4)
        .split("\t{\n\t\tname = \"t1\"")
        .next()
        .unwrap()
        .to_string()
        + "]\n";
    let l = match read_acl_file(&text, path()).unwrap() {
        AclFile::Scalars(l) => l,
        AclFile::Clip(_) => unreachable!(),
    };
    assert_eq!(l.tracks.len(), 1);
    let mut b = compress_scalar_list(&l).unwrap().bytes;
    b[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    reseal(&mut b);
    let e = ScalarReader::new(&b).unwrap_err();
    assert!(
        matches!(&e, FormatError::Corrupt(m) if m.contains("values supported")),
        "{e}"
    );
}
