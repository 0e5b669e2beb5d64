//! The runtime decoder rewritten for issue 23 (speed) decodes every real clip to the same bits
//! as the decoder before it (`runtime_equal/old_decoder.rs`, a verbatim copy kept only here):
//! every ACL regression clip, BVH, glTF and FBX file of `CLIPFORGE_DATA` and an additive layer
//! of each regression clip (reference rotations), compressed with the default settings, at
//! every stored sample, at every original sample time, at random times (both loopings, outside
//! the clip too) and one bone at a time. The old decoder is kept as code rather than as recorded
//! expectations, so the check covers any time and any clip the compressor writes, and survives
//! a compressor change.
//!
//! Version 4 (`docs/FORMAT.md`, "Versions") changes only where a segment's parts lie: each
//! buffer the compressor writes (version 5) is laid out again as versions 3 and 4
//! (`runtime::relayout`), the old decoder reads that, and the new decoder must give the same bits
//! on both layouts (its four-track path on version 4, its per-track path on version 3); the two
//! layouts convert into each other byte for byte, and version 4 is never larger.
//!
//! A `Sampler` (the full pose with a per-segment cache kept between calls) is held to the same
//! bits over the same times: in order (every sample, then playback at three times the clip's
//! rate: its cached samples reused), at random (refilled), and alternating loopings.
//!
//! On x86-64 the full pose has two copies, one compiled for AVX2 + BMI2 (taken where the CPU
//! has them) and one for the build target (`ClipReader::use_baseline_decoder`): both are
//! compared.
//!
//! Bit for bit, on any target: the new decoder does the same IEEE operations per component
//! (lanes of glam vectors, no fused multiply-add) and calls the same glam functions for the
//! horizontal ones (dot, normalize, quaternion product).

use crate::common;
mod old_decoder;

use clipforge::anim::additive::{AdditiveFormat, first_frame, make_additive};
use clipforge::anim::formats::load_clips;
use clipforge::anim::{CompressionSettings, RawClip, compress};
use clipforge::runtime::relayout::relayout;
use clipforge::runtime::{ClipReader, Looping, Pose, Sampler};
use old_decoder::OldReader;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .filter(|p| {
            let s = p.to_string_lossy().to_lowercase();
            exts.iter().any(|e| s.ends_with(e))
        })
        .collect();
    v.sort();
    v
}

fn pose_bits(p: &Pose) -> Vec<u32> {
    let mut v = Vec::with_capacity(p.len() * 10);
    for i in 0..p.len() {
        v.extend(p.rotations[i].to_array().map(f32::to_bits));
        v.extend(p.translations[i].to_array().map(f32::to_bits));
        v.extend(p.scales[i].to_array().map(f32::to_bits));
    }
    v
}

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Compares the two decoders on one buffer the compressor wrote (version 5, or 4 for a clip
/// without animated sub-tracks): the old one on its version-3 layout, the new one on the
/// version-3, 4 and 5 layouts. Returns the number of poses compared.
fn compare(label: &str, bytes: &[u8]) -> usize {
    let animated = ClipReader::new(bytes)
        .unwrap_or_else(|e| panic!("{label}: {e}"))
        .num_animated_subtracks()
        > 0;
    assert_eq!(
        u16::from_le_bytes([bytes[4], bytes[5]]),
        if animated { 5 } else { 4 },
        "{label}: the writer stamps 5 (4 without animated sub-tracks)"
    );
    let v3 = relayout(bytes, 3).unwrap_or_else(|e| panic!("{label}: to version 3: {e}"));
    let v4 = relayout(&v3, 4).unwrap();
    assert_eq!(
        relayout(&v4, 5).unwrap(),
        bytes,
        "{label}: version 3 -> 4 -> 5 is not the writer's buffer"
    );
    assert!(v3.len() >= v4.len(), "{label}: version 4 is larger than 3");
    assert!(
        v4.len() >= bytes.len(),
        "{label}: version 5 is larger than 4"
    );
    let mut n = compare_on(label, &v3, bytes);
    n += compare_on(&format!("{label} (v4)"), &v3, &v4);
    n += compare_on(&format!("{label} (v3)"), &v3, &v3);
    n
}

/// The old decoder on `old_bytes` against the new on `bytes` (the same clip).
fn compare_on(label: &str, old_bytes: &[u8], bytes: &[u8]) -> usize {
    let old = OldReader::new(old_bytes).unwrap_or_else(|e| panic!("{label}: old reader: {e}"));
    let new = ClipReader::new(bytes).unwrap_or_else(|e| panic!("{label}: new reader: {e}"));
    // The full pose's other copy: on a CPU with AVX2 `new` runs the one compiled for it, this
    // one the build target's (SSE2); both must give the old decoder's bits.
    let mut baseline = new.clone();
    baseline.use_baseline_decoder();
    let (mut a, mut b, mut c) = (Pose::default(), Pose::default(), Pose::default());
    let mut n = 0;
    for s in 0..new.num_stored_samples() {
        old.decode_sample(s, &mut a);
        new.decode_sample(s, &mut b);
        baseline.decode_sample(s, &mut c);
        assert_eq!(pose_bits(&a), pose_bits(&b), "{label}: stored sample {s}");
        assert_eq!(
            pose_bits(&a),
            pose_bits(&c),
            "{label}: stored sample {s}, baseline"
        );
        n += 1;
    }
    let d = new.duration();
    let mut times: Vec<f32> = (0..new.num_samples())
        .map(|i| i as f32 / new.sample_rate())
        .collect();
    // Playback at three times the clip's rate (the first 64 samples): a sampler blends the same
    // pair again, then moves on by one sample.
    times.extend((0..3 * new.num_samples().min(64)).map(|k| k as f32 / (3.0 * new.sample_rate())));
    let mut seed = 0x5EED ^ bytes.len() as u64;
    for _ in 0..300 {
        let u = (splitmix(&mut seed) >> 40) as f32 / 16_777_216.0;
        times.push((u * 1.4 - 0.2) * d.max(0.1));
    }
    times.extend([d, -1.0, 1e9, f32::NAN, f32::INFINITY]);
    let (mut sampler, mut sampler_baseline) = (Sampler::new(&new), Sampler::new(&baseline));
    let mut e = Pose::default();
    for &t in &times {
        for looping in [Looping::Clamp, Looping::Wrap] {
            old.sample_pose(t, looping, &mut a);
            new.sample_pose(t, looping, &mut b);
            baseline.sample_pose(t, looping, &mut c);
            assert_eq!(pose_bits(&a), pose_bits(&b), "{label}: t = {t} {looping:?}");
            assert_eq!(
                pose_bits(&a),
                pose_bits(&c),
                "{label}: t = {t} {looping:?}, baseline"
            );
            sampler.sample_pose(t, looping, &mut e);
            assert_eq!(
                pose_bits(&a),
                pose_bits(&e),
                "{label}: t = {t} {looping:?}, sampler"
            );
            sampler_baseline.sample_pose(t, looping, &mut e);
            assert_eq!(
                pose_bits(&a),
                pose_bits(&e),
                "{label}: t = {t} {looping:?}, sampler, baseline"
            );
            n += 1;
        }
    }
    for bone in 0..new.num_bones() {
        for &t in times.iter().step_by(7) {
            let (x, y) = (
                old.sample_bone(bone, t, Looping::Clamp).unwrap(),
                new.sample_bone(bone, t, Looping::Clamp).unwrap(),
            );
            let bits = |v: (glam::Quat, glam::Vec3A, glam::Vec3A)| {
                [
                    v.0.to_array(),
                    v.1.extend(0.0).to_array(),
                    v.2.extend(0.0).to_array(),
                ]
                .map(|c| c.map(f32::to_bits))
            };
            assert_eq!(bits(x), bits(y), "{label}: bone {bone} at t = {t}");
        }
    }
    assert!(
        new.sample_bone(new.num_bones(), 0.0, Looping::Clamp)
            .is_none()
    );
    n
}

#[test]
fn new_decoder_equals_old_on_every_real_clip() {
    let Some(data) = common::real_data() else {
        eprintln!("skipped: set CLIPFORGE_DATA to the shared data folder");
        return;
    };
    let mut paths = files(&data.join("acl-regression"), &[".acl.sjson"]);
    let regression = paths.len();
    paths.extend(files(&data.join("bvh"), &[".bvh"]));
    paths.extend(files(&data.join("gltf"), &[".gltf", ".glb"]));
    paths.extend(files(&data.join("fbx"), &[".fbx"]));
    let settings = CompressionSettings::default();
    let results: Vec<(usize, usize, usize)> = paths
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            let label = p.display().to_string();
            // Files the importers refuse (scalar track lists, 09_02_with_inf_error, …) are
            // tested elsewhere; they have no buffer to decode.
            let clips: Vec<RawClip> = match load_clips(p) {
                Ok(c) => c,
                Err(_) => return (0, 0, 0),
            };
            let (mut buffers, mut poses, mut additive) = (0, 0, 0);
            for (k, clip) in clips.iter().enumerate() {
                let Ok(c) = compress(clip, &settings) else {
                    continue;
                };
                poses += compare(&format!("{label} #{k}"), &c.bytes);
                buffers += 1;
                if i < regression && clip.num_bones() > 0 && clip.num_samples > 1 {
                    let layer = make_additive(clip, &first_frame(clip), AdditiveFormat::DEFAULT)
                        .expect("additive layer");
                    let c = compress(&layer, &settings).expect("additive compresses");
                    poses += compare(&format!("{label} #{k} additive"), &c.bytes);
                    additive += 1;
                }
            }
            (buffers, poses, additive)
        })
        .collect();
    let buffers: usize = results.iter().map(|r| r.0).sum();
    let poses: usize = results.iter().map(|r| r.1).sum();
    let additive: usize = results.iter().map(|r| r.2).sum();
    eprintln!(
        "{buffers} buffers ({additive} additive) from {} files, {poses} poses: equal bit for bit",
        paths.len()
    );
    assert!(buffers >= 100, "only {buffers} real clips compressed");
    assert!(additive >= 20, "only {additive} additive layers");
}
