//! Per-bone thresholds on the sweep (`CLIPFORGE_DATA`): every ACL regression transform clip and
//! every BVH clip, each rig's finger bones (the hands for the rig without fingers) held to 0.001
//! cm while the rest stays at 0.01 cm. Asserts that every bone meets its own threshold at every
//! sample and every midpoint (what `compress` guarantees) and prints, per clip, the size against
//! no override and where the extra bytes go: the tightened bones, their ancestors (which must
//! serve them), and the other bones (figures in docs/BENCHMARKS.md, "Per-bone thresholds").

use crate::common;

use clipforge_anim::clip::RawClip;
use clipforge_anim::compress::{
    BETWEEN_ALPHAS, BoneOverride, CompressionSettings, compress, glob_match,
};
use clipforge_anim::formats::load_clips;
use std::path::{Path, PathBuf};

/// Finger bones of the rigs in the data (ACL's CMU clips and cmu-acrnn: `lIndex1`…; cmu-bvh11
/// and cmu-assimp: `LFingers`, `LThumb`, `LeftFingerBase`…). Bandai Namco's rig has no
/// fingers: its hands stand in.
const FINGER_GLOBS: &[&str] = &[
    "*Thumb*", "*Index*", "*Mid1", "*Mid2", "*Ring*", "*Pinky*", "*Finger*",
];
const HAND_GLOBS: &[&str] = &["Hand_L", "Hand_R"];

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.to_string_lossy().ends_with(ext) {
            out.push(p);
        }
    }
}

fn per_bone(clip: &RawClip, bytes: &[u8]) -> Vec<f64> {
    common::per_bone_error(clip, bytes, &clip.skeleton.shell_distances, &BETWEEN_ALPHAS)
}

#[test]
fn tightened_fingers_meet_their_threshold_on_every_clip_of_the_sweep() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let mut paths = Vec::new();
    files(&data.join("acl-regression"), ".acl.sjson", &mut paths);
    files(&data.join("bvh"), ".bvh", &mut paths);
    paths.sort();
    let mut failures = Vec::new();
    let (mut total_base, mut total_new) = (0u64, 0u64);
    let (mut other_base, mut other_new) = (0u64, 0u64);
    let (mut shared_base, mut shared_new) = (0u64, 0u64);
    let mut clips = 0;
    eprintln!(
        "clip | bones tightened | base B | tightened B | ratio | bits: tightened base->new | ancestors base->new | others base->new"
    );
    for path in &paths {
        // Scalar track lists, additive clips and the deliberately broken files are not
        // transform clips to compress.
        let Ok(loaded) = load_clips(path) else {
            continue;
        };
        let rel = path.strip_prefix(&data).unwrap().display().to_string();
        for clip in &loaded {
            let names = &clip.skeleton.names;
            let mut globs = FINGER_GLOBS;
            if !(0..clip.num_bones()).any(|b| globs.iter().any(|g| glob_match(g, &names[b]))) {
                globs = HAND_GLOBS;
            }
            let tight: Vec<bool> = names
                .iter()
                .map(|n| globs.iter().any(|g| glob_match(g, n)))
                .collect();
            if !tight.contains(&true) {
                continue;
            }
            let base = compress(clip, &CompressionSettings::default())
                .unwrap_or_else(|e| panic!("{rel}: {e}"));
            let settings = CompressionSettings {
                bones: globs
                    .iter()
                    .map(|g| BoneOverride {
                        pattern: g.to_string(),
                        error_threshold: Some(0.001),
                        shell_distance: None,
                    })
                    .collect(),
                ..Default::default()
            };
            let c = compress(clip, &settings).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let errors = per_bone(clip, &c.bytes);
            for (b, &e) in errors.iter().enumerate() {
                let t = if tight[b] { 0.001 } else { 0.01 };
                if e > t {
                    failures.push(format!("{rel}: bone '{}' {e:.6} > {t}", names[b]));
                }
            }
            // Ancestors of a tightened bone (not tightened themselves).
            let mut ancestor = vec![false; clip.num_bones()];
            for b in (0..clip.num_bones()).filter(|&b| tight[b]) {
                let mut a = clip.skeleton.parent(b);
                while let Some(p) = a {
                    ancestor[p] = !tight[p];
                    a = clip.skeleton.parent(p);
                }
            }
            // The ancestors that are also above some other bone (the root, hips, spine, chest):
            // what a tightened finger and an untouched leg or head share.
            let mut shared = vec![false; clip.num_bones()];
            for b in (0..clip.num_bones()).filter(|&b| !tight[b] && !ancestor[b]) {
                let mut a = clip.skeleton.parent(b);
                while let Some(p) = a {
                    shared[p] |= ancestor[p];
                    a = clip.skeleton.parent(p);
                }
            }
            let sum = |bits: &[u64], f: &dyn Fn(usize) -> bool| -> u64 {
                (0..bits.len()).filter(|&b| f(b)).map(|b| bits[b]).sum()
            };
            let (bb, nb) = (&base.stats.per_bone_bits, &c.stats.per_bone_bits);
            let is_t = |b: usize| tight[b];
            let is_a = |b: usize| ancestor[b];
            let is_o = |b: usize| !tight[b] && !ancestor[b];
            eprintln!(
                "{rel} | {} | {} | {} | {:.3} | {}->{} | {}->{} | {}->{}",
                tight.iter().filter(|&&t| t).count(),
                base.runtime_bytes,
                c.runtime_bytes,
                c.runtime_bytes as f64 / base.runtime_bytes as f64,
                sum(bb, &is_t),
                sum(nb, &is_t),
                sum(bb, &is_a),
                sum(nb, &is_a),
                sum(bb, &is_o),
                sum(nb, &is_o),
            );
            total_base += base.runtime_bytes as u64;
            total_new += c.runtime_bytes as u64;
            other_base += sum(bb, &is_o);
            other_new += sum(nb, &is_o);
            shared_base += sum(bb, &|b| shared[b]);
            shared_new += sum(nb, &|b| shared[b]);
            clips += 1;
        }
    }
    eprintln!(
        "{clips} clips: {total_base} -> {total_new} B ({:.3}x); the other bones' animated bits \
         {other_base} -> {other_new} ({:+.2}%); the ancestors they share with a tightened bone \
         {shared_base} -> {shared_new} ({:+.2}%)",
        total_new as f64 / total_base as f64,
        (other_new as f64 / other_base.max(1) as f64 - 1.0) * 100.0,
        (shared_new as f64 / shared_base.max(1) as f64 - 1.0) * 100.0
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(clips >= 60, "{clips} clips");
    // The bones neither tightened nor above a tightened one never pay for it: their bits grow by
    // at most the 2 %, and every one of them stays within its threshold (`failures`).
    let drift = other_new as f64 / other_base as f64 - 1.0;
    assert!(drift <= 0.02, "the other bones' bits grew {drift:+.4}");
    // They may shrink, by the precision the shared ancestors now hold for the tightened bones:
    // a chain's error is its ancestors' plus its own, and the refinement walks roots first, so
    // without an override the root, hips and spine take the slack of the legs and head first;
    // a tightened finger pins them finer, and that slack stays with the legs and head. (The
    // segment's one budget multiplier, set by its worst chain, also moves where every chain's
    // refinement starts: 09_02_multi_root, no ancestor shared, −2.4 %.) 2026-11-28, 66 clips:
    // other bones −2.13 %, shared ancestors +38 %; leaves first −0.07 %, and the tightened
    // run's other bones within 0.4 % of each other in both orders. Issue 13's "within 2 %"
    // was about a cost; a shrink is bounded by what the shared ancestors gained.
    assert!(
        other_base.saturating_sub(other_new) <= shared_new.saturating_sub(shared_base),
        "the other bones lost {} bits while their shared ancestors gained {}",
        other_base.saturating_sub(other_new),
        shared_new.saturating_sub(shared_base)
    );
}
