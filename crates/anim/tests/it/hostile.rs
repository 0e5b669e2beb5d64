//! Hostile clip input through the library (issue 10, the animation side): memory budgets from
//! the input's declared sizes, glTF buffers kept inside the asset's folder, deep hierarchies and
//! `.cfa` semantic validation. The cases that run the real binary (address-space limits, special
//! files, no panic text through the CLI) are the root package's `anim::hostile`.

use crate::common;
use crate::common::hostile_inputs::*;

use clipforge_anim::clip::{MAX_COMPONENT_MAGNITUDE, RawClip};
use clipforge_anim::formats;
use clipforge_anim::runtime::format::{HEADER_SIZE, align4, checksum};
use clipforge_anim::{ClipReader, CompressionSettings, Pose, compress, limits};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Budgets

#[test]
fn declared_sizes_over_the_budget_are_refused_before_allocating() {
    assert!(SJSON_HUGE_ONE_BONE.len() < 160);
    for (text, needle) in [
        (SJSON_HUGE_ONE_BONE, "1 bones x 49999999 samples"),
        (SJSON_ZERO_BONES, "0 bones x 2000000000 samples"),
    ] {
        let e = load_text(text, "bomb.acl.sjson").unwrap_err();
        assert!(e.is_over_budget(), "{e}");
        assert!(e.message.contains(needle), "{e}");
        assert!(e.message.contains("GiB"), "the figure is named: {e}");
    }
    // Keys 1.6e6 s apart: 48 million samples at 30 Hz for a file under 1 KB.
    let (json, _) = chain_gltf(&[0.0, 1.6e6], 1, &[0], 1, None);
    assert!(json.len() < 1000, "{}", json.len());
    let e = load_text(&json, "far.gltf").unwrap_err();
    assert!(e.is_over_budget(), "{e}");
    assert!(e.message.contains("animation 'a0'"), "{e}");
}

#[test]
fn many_animations_each_under_the_cap_are_refused_together() {
    // One animation of 1 bone x 150,001 samples (5000 s at 30 Hz) fits a small file's budget...
    let times = [0.0, 5000.0];
    let (one, _) = chain_gltf(&times, 1, &[0], 1, None);
    let clips = load_text(&one, "one.gltf").unwrap();
    assert_eq!(clips[0].num_samples, 150_001);
    assert!(limits::clip_memory_estimate(1, 150_001) < limits::budget_for_input(one.len() as u64));
    // ...forty of them (a 5 KB file) do not.
    let (forty, _) = chain_gltf(&times, 1, &[0], 40, None);
    assert!(forty.len() < 6000, "{}", forty.len());
    let e = load_text(&forty, "forty.gltf").unwrap_err();
    assert!(e.is_over_budget(), "{e}");
    assert!(e.message.contains("animation(s) before it"), "{e}");
}

#[test]
fn the_compressor_refuses_a_clip_over_the_process_budget() {
    // A clip built in memory (no importer) meets the budget in `compress` itself.
    let clip = RawClip::new(
        "empty",
        clipforge_anim::Skeleton::from_ordered(Vec::new()).unwrap(),
        30.0,
        2_000_000_000,
        Vec::new(),
        Vec::new(),
        Vec::new(),
    )
    .unwrap();
    let e = compress(&clip, &CompressionSettings::default()).unwrap_err();
    assert!(
        matches!(e, clipforge_anim::compress::CompressError::LimitExceeded(_))
            && e.to_string().contains(limits::OVER_BUDGET),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// glTF buffers stay inside the asset's folder

#[test]
fn gltf_buffers_resolve_only_inside_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let asset = root.join("asset");
    std::fs::create_dir_all(asset.join("sub dir")).unwrap();
    let times = [0.0, 0.5, 1.0];
    let bin = keys_bin(&times);
    // Outside the folder: a "secret" of a recognisable size whose content would load as keys.
    let mut secret = bin.clone();
    secret.resize(12_345, 0);
    std::fs::write(root.join("secret.bin"), &secret).unwrap();
    std::fs::write(asset.join("sub dir").join("keys.bin"), &bin).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("secret.bin"), asset.join("link.bin")).unwrap();
    let secret_abs = root.join("secret.bin");
    let file_uri = format!("file://{}", secret_abs.display());
    let cases: Vec<(String, Option<&str>)> = vec![
        ("sub%20dir/keys.bin".into(), None),
        ("./sub dir/../sub dir/keys.bin".into(), None),
        ("../secret.bin".into(), Some("outside")),
        ("%2e%2e/secret.bin".into(), Some("outside")),
        ("sub dir/../../secret.bin".into(), Some("outside")),
        (secret_abs.display().to_string(), Some("relative path")),
        (file_uri, Some("relative path")),
        ("file:secret.bin".into(), Some("relative path")),
        ("missing.bin".into(), Some("does not exist")),
        ("bad%zz.bin".into(), Some("percent-encoding")),
        ("%ff%fe.bin".into(), Some("not UTF-8")),
        ("data:application/octet-stream,AAAA".into(), Some("base64")),
        (
            "data:application/octet-stream;base64,A===".into(),
            Some("base64"),
        ),
        #[cfg(unix)]
        ("link.bin".into(), Some("outside")),
    ];
    for (uri, refused) in cases {
        let (json, _) = chain_gltf(&times, 2, &[1], 1, Some(&uri));
        let g = asset.join("a.gltf");
        std::fs::write(&g, json).unwrap();
        match (formats::load_clips(&g), refused) {
            (Ok(clips), None) => assert_eq!(clips[0].num_samples, 25, "{uri}"),
            (Err(e), Some(needle)) => {
                assert!(e.message.contains(needle), "{uri}: {e}");
                assert!(!e.message.contains("12345"), "{uri}: size leaked: {e}");
            }
            (r, _) => panic!("{uri}: unexpected {:?}", r.map(|c| c.len())),
        }
    }
    // From memory, an external buffer cannot be resolved at all (nothing is read).
    let (json, _) = chain_gltf(&times, 2, &[1], 1, Some("sub%20dir/keys.bin"));
    let e = load_text(&json, "mem.gltf").unwrap_err();
    assert!(e.message.contains("in memory"), "{e}");
}

#[test]
fn real_gltf_files_with_external_buffers_still_load() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let clips =
        formats::load_clips(&data.join("gltf/khronos-via-ozz/interpolation_test.gltf")).unwrap();
    assert_eq!(clips.len(), 9);
}

// ---------------------------------------------------------------------------------------------
// Deep hierarchies

#[test]
fn a_deep_chain_imports_and_compresses() {
    // A 3,000-node chain, one node in a hundred animated: linear import and prepare make this
    // quick (the quadratic versions took minutes at 20,000; see the report for measurements).
    let n = 3000;
    let mut animated: Vec<usize> = (0..n).step_by(100).collect();
    animated.push(n - 1);
    let (json, _) = chain_gltf(&[0.0, 0.5, 1.0], n, &animated, 1, None);
    let clips = load_text(&json, "chain.gltf").unwrap();
    assert_eq!(clips[0].num_bones(), n);
    assert_eq!(clips[0].skeleton.longest_chain(), n);
    let c = compress(&clips[0], &CompressionSettings::default()).unwrap();
    assert!(
        c.stats.verified_max_error <= 0.01,
        "{}",
        c.stats.verified_max_error
    );
    // A skinned chain (gap-closing between joints): joints every 10th node, all nodes between
    // them join the skeleton.
    let joints: Vec<String> = (0..n).step_by(10).map(|i| i.to_string()).collect();
    let skinned = json.replacen(
        r#""animations""#,
        &format!(
            r#""skins":[{{"joints":[{}]}}],"animations""#,
            joints.join(",")
        ),
        1,
    );
    let clips = load_text(&skinned, "skinned.gltf").unwrap();
    assert_eq!(
        clips[0].num_bones(),
        n - 9,
        "joints 0..=2990 and every node between"
    );
}

#[test]
fn deep_bvh_and_acl_chains_import() {
    // 5,000 joints in one chain: the BVH reader checked each new name against every joint
    // before it (quadratic), the ACL reader resolves parents through a map.
    let n = 5000;
    let mut bvh = String::from("HIERARCHY\n");
    for i in 0..n {
        let kw = if i == 0 { "ROOT" } else { "JOINT" };
        bvh.push_str(&format!(
            "{kw} j{i}\n{{\nOFFSET 0 1 0\nCHANNELS 1 Zrotation\n"
        ));
    }
    bvh.push_str("End Site\n{\nOFFSET 0 1 0\n}\n");
    bvh.push_str(&"}\n".repeat(n));
    bvh.push_str("MOTION\nFrames: 2\nFrame Time: 0.0333333\n");
    for k in 0..2 {
        bvh.push_str(&vec![format!("{k}"); n].join(" "));
        bvh.push('\n');
    }
    let clips = load_text(&bvh, "deep.bvh").unwrap();
    assert_eq!(clips[0].skeleton.longest_chain(), n);
    // A repeated name is still found.
    let dup = bvh.replacen("JOINT j4999", "JOINT j17", 1);
    let e = load_text(&dup, "dup.bvh").unwrap_err();
    assert!(e.message.contains("duplicate joint name 'j17'"), "{e}");

    let mut acl = String::from(
        "version = 5\nclip = { name = \"deep\" num_samples = 2 sample_rate = 30 }\nbones = [\n",
    );
    for i in 0..n {
        let parent = if i == 0 {
            String::new()
        } else {
            format!("b{}", i - 1)
        };
        acl.push_str(&format!(
            "{{ name = \"b{i}\" parent = \"{parent}\" bind_translation = [ 0, 1, 0 ] }}\n"
        ));
    }
    acl.push_str("]\n");
    let clips = load_text(&acl, "deep.acl.sjson").unwrap();
    assert_eq!(clips[0].skeleton.longest_chain(), n);
}

// ---------------------------------------------------------------------------------------------
// .cfa semantic validation

/// Offsets of the fields a test corrupts, found by walking the layout of `docs/FORMAT.md`.
struct Layout {
    num_bones: usize,
    const_off: usize,
    num_constant: usize,
    qbox_off: Option<usize>,
    /// Per animated sub-track: offset of its clip range and whether it is a rotation's 16-bit
    /// range (format version 3; 24 bytes of float32 otherwise).
    clip_ranges: Vec<(usize, bool)>,
    /// Per bone: offset of its shell distance (rotation at +4, translation at +20, scale at +32).
    bone_meta: Vec<usize>,
}

fn u16_at(b: &[u8], o: usize) -> usize {
    u16::from_le_bytes([b[o], b[o + 1]]) as usize
}
fn u32_at(b: &[u8], o: usize) -> usize {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize
}

fn layout(b: &[u8]) -> Layout {
    let nb = u16_at(b, 20);
    let descs = &b[HEADER_SIZE..HEADER_SIZE + nb];
    let qtrans = descs.iter().filter(|&&d| (d >> 2) & 3 == 3).count();
    let const_off = align4(HEADER_SIZE + nb);
    let num_constant = u32_at(b, 36);
    let qbox = const_off + 12 * num_constant;
    let qconst = qbox + if qtrans > 0 { 24 } else { 0 };
    let mut at = align4(qconst + 6 * u32_at(b, 44));
    let mut clip_ranges = Vec::new();
    for &d in descs {
        for k in 0..3 {
            if (d >> (2 * k)) & 3 == 2 {
                let rot16 = k == 0 && u16_at(b, 4) >= 3;
                clip_ranges.push((at, rot16));
                at += if rot16 { 12 } else { 24 };
            }
        }
    }
    assert_eq!(clip_ranges.len(), u32_at(b, 40), "animated sub-tracks");
    let mut pos = u32_at(b, 16) + 4;
    pos += 2 + u16_at(b, pos);
    let mut bone_meta = Vec::new();
    for _ in 0..nb {
        pos += 2 + u16_at(b, pos) + 2;
        bone_meta.push(pos);
        pos += 44;
    }
    assert_eq!(pos, b.len(), "layout walk");
    Layout {
        num_bones: nb,
        const_off,
        num_constant,
        qbox_off: (qtrans > 0).then_some(qbox),
        clip_ranges,
        bone_meta,
    }
}

/// `buf` with `bytes` written at `at` and the checksum recomputed, so only the semantic checks
/// stand between the corruption and the reader.
fn patched(buf: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut b = buf.to_vec();
    b[at..at + bytes.len()].copy_from_slice(bytes);
    let crc = checksum(&b);
    b[8..12].copy_from_slice(&crc.to_le_bytes());
    b
}

fn f32s(v: f32) -> [u8; 4] {
    v.to_le_bytes()
}

/// `.cfa` files to corrupt: real clips compressed when the real data is there, and a generated
/// one (with scale, so every sub-track kind appears) always.
fn cfa_samples() -> Vec<(String, Vec<u8>)> {
    let mut clips: Vec<RawClip> = Vec::new();
    if let Some(data) = common::real_data() {
        for f in [
            "acl-regression/90_10.acl.sjson",
            "acl-regression/09_02_with_scale.acl.sjson",
        ] {
            clips.extend(formats::load_clips(&data.join(f)).unwrap());
        }
        clips.extend(formats::load_clips(&data.join("gltf/raylib-cc0/greenman.glb")).unwrap());
    }
    clips.push(clipforge_anim::generate::generate(
        &clipforge_anim::generate::GenerateOptions {
            num_samples: 40,
            with_scale: true,
            ..Default::default()
        },
    ));
    clips
        .iter()
        .map(|c| {
            let bytes = compress(c, &CompressionSettings::default()).unwrap().bytes;
            (c.name.clone(), bytes)
        })
        .collect()
}

fn refused(buf: &[u8], needle: &str, what: &str) {
    match ClipReader::new(buf) {
        Ok(_) => panic!("{what}: accepted"),
        Err(e) => assert!(e.to_string().contains(needle), "{what}: {e}"),
    }
}

#[test]
fn cfa_fields_the_format_does_not_allow_are_refused_even_with_a_valid_checksum() {
    for (name, buf) in cfa_samples() {
        let l = layout(&buf);
        let reader = ClipReader::new(&buf).unwrap();
        clipforge_anim::limits::CheckMemoryBudget::check_memory_budget(&reader).unwrap();
        assert!(ClipReader::new(&patched(&buf, 22, &16u16.to_le_bytes())).is_ok());
        refused(
            &patched(&buf, 22, &17u16.to_le_bytes()),
            "segment size",
            &name,
        );
        refused(
            &patched(&buf, 22, &8u16.to_le_bytes()),
            "segment size",
            &name,
        );
        refused(&patched(&buf, 28, &f32s(1e-40)), "", &name);
        let b0 = l.bone_meta[0];
        let last = l.bone_meta[l.num_bones - 1];
        for (at, value, needle, what) in [
            (b0 + 4, f32::NAN, "non-finite", "bind rotation NaN"),
            (b0 + 16, f32::INFINITY, "non-finite", "bind rotation inf"),
            (b0 + 16, 2.0, "not normalized", "bind rotation w = 2"),
            (last + 4, 0.5, "not normalized", "bind rotation x = 0.5"),
            (b0, -1.0, "negative shell distance", "shell distance -1"),
            (last, f32::NAN, "non-finite", "shell distance NaN"),
            (b0 + 20, 1e30, "bind translation", "bind translation 1e30"),
            (last + 40, -2e7, "bind scale", "bind scale -2e7"),
        ] {
            refused(
                &patched(&buf, at, &f32s(value)),
                needle,
                &format!("{name}: {what}"),
            );
        }
        for i in 0..l.num_constant.min(50) {
            let at = l.const_off + 12 * i;
            refused(
                &patched(&buf, at, &f32s(f32::INFINITY)),
                "not finite",
                &name,
            );
            refused(&patched(&buf, at + 4, &f32s(3e7)), "beyond", &name);
        }
        if let Some(q) = l.qbox_off {
            refused(&patched(&buf, q, &f32s(-1e30)), "box", &name);
            refused(&patched(&buf, q + 12, &f32s(-1.0)), "box", &name);
            refused(&patched(&buf, q + 16, &f32s(f32::MAX)), "box", &name);
        }
        for &(at, rot16) in l.clip_ranges.iter().take(50) {
            if rot16 {
                // 16-bit min and extent must stay inside [-1, 1]: min_q + ext_q <= 65535.
                let full = [0u8, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255];
                assert!(ClipReader::new(&patched(&buf, at, &full)).is_ok(), "{name}");
                refused(
                    &patched(&buf, at, &[1, 0, 0, 0, 0, 0, 255, 255, 0, 0, 0, 0]),
                    "clip range",
                    &name,
                );
                refused(
                    &patched(&buf, at + 4, &[255, 255, 0, 0, 0, 0, 1, 0]),
                    "clip range",
                    &name,
                );
                continue;
            }
            refused(&patched(&buf, at, &f32s(f32::NAN)), "clip range", &name);
            refused(&patched(&buf, at + 12, &f32s(-0.5)), "clip range", &name);
            refused(&patched(&buf, at + 16, &f32s(1e9)), "clip range", &name);
        }
    }
}

/// Every value of every sample of an accepted buffer is finite and within an importer's limits,
/// and the clip written back as `.acl.sjson` imports again.
fn check_accepted(reader: &ClipReader, what: &str) {
    let nb = reader.num_bones();
    let mut pose = Pose::new(nb);
    for s in 0..reader.num_stored_samples() {
        reader.decode_sample(s, &mut pose);
        for b in 0..nb {
            let r = pose.rotations[b];
            assert!(
                r.is_finite() && (r.length() - 1.0).abs() < 1e-3,
                "{what}: {r}"
            );
            for v in [pose.translations[b], pose.scales[b]] {
                assert!(
                    v.is_finite() && v.abs().max_element() <= MAX_COMPONENT_MAGNITUDE * 1.0001,
                    "{what}: {v}"
                );
            }
        }
    }
    for t in [0.0, reader.duration() * 0.37, reader.duration()] {
        reader.sample_pose(t, clipforge_anim::Looping::Wrap, &mut pose);
        assert!(pose.rotations.iter().all(|q| q.is_finite()), "{what}");
    }
    let clip = clipforge_anim::decompress::to_raw_clip(reader);
    let text = formats::write_acl_clip(&clip);
    let back = formats::load_clips_from_bytes(text.as_bytes(), Path::new("back.acl.sjson"));
    assert!(back.is_ok(), "{what}: re-import: {:?}", back.err());
}

#[test]
fn whatever_the_reader_accepts_decodes_to_values_that_reimport() {
    // Structure-aware mutations: a random 1-4 byte field overwritten with a random value or an
    // interesting float, the checksum recomputed.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let floats = [
        f32::NAN,
        f32::INFINITY,
        -f32::INFINITY,
        f32::MAX,
        -1.0,
        0.0,
        2.0,
        1e-40,
        1e8,
        -1e8,
    ];
    let mut accepted = 0;
    for (name, buf) in cfa_samples() {
        for i in 0..1500 {
            let at = 4 + next() as usize % (buf.len() - 4);
            if (8..12).contains(&at) {
                continue;
            }
            let bytes: Vec<u8> = match next() % 3 {
                0 => vec![next() as u8],
                1 => (next() as u16).to_le_bytes().to_vec(),
                _ => f32s(floats[next() as usize % floats.len()]).to_vec(),
            };
            let at = at.min(buf.len() - bytes.len());
            let b = patched(&buf, at, &bytes);
            if let Ok(r) = ClipReader::new(&b) {
                accepted += 1;
                check_accepted(&r, &format!("{name} mutation {i} at {at}: {bytes:?}"));
            }
        }
    }
    assert!(
        accepted > 0,
        "some mutations (names, bit streams) are legitimately accepted"
    );
}

#[test]
fn budget_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p: PathBuf = dir.path().join("bomb.acl.sjson");
    std::fs::write(&p, SJSON_HUGE_ONE_BONE).unwrap();
    let e = formats::load_clips(&p).unwrap_err();
    assert!(e.to_string().starts_with(s(&p)), "{e}");
    assert!(e.is_over_budget());
}
