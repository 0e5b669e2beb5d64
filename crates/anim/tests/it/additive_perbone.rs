//! Per-bone thresholds on additive clips made from the real data (`CLIPFORGE_DATA`): a finger
//! bone held to 0.001 cm while the rest stays at 0.01 cm, each clip relative to its first frame.
//! The combined pose (additive on its base) is measured per bone in float64 at every sample and
//! at 9 points between each pair (more than the compressor's own check), and independently by
//! `clip_eval.py --per-bone` on the combined poses written as plain clips (the evaluator has no
//! per-bone figures for additive clips).

use crate::common;

use clipforge_anim::additive::{AdditiveFormat, combined_clip, first_frame, make_additive};
use clipforge_anim::compress::glob_match;
use clipforge_anim::formats::{load_clips, write_acl_clip};
use clipforge_anim::{BoneOverride, ClipReader, CompressionSettings, compress};

/// Real clips with finger bones: (path under the data folder, the finger bone's glob).
const FINGER_CLIPS: &[(&str, &str)] = &[
    ("acl-regression/09_02.acl.sjson", "rIndex2"),
    ("acl-regression/49_09.acl.sjson", "lMid1"),
    ("acl-regression/81_18_looping.acl.sjson", "rThumb2"),
    ("bvh/cmu-acrnn/salsa_05.bvh", "*Index2"),
];

#[test]
fn an_additive_finger_at_a_tenth_of_the_threshold_meets_its_own() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let tools = data.join("../tools");
    let eval = tools.join("clip_eval.py").is_file() && common::python_with_numpy();
    if !eval {
        eprintln!("clip_eval.py check skipped: needs python3 with numpy");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    // Fingers over 0.001 cm without their own threshold: the override must have done something.
    let mut loose_fingers = 0;
    for (i, &(rel, glob)) in FINGER_CLIPS.iter().enumerate() {
        let clip = &load_clips(&data.join(rel)).unwrap()[0];
        let add = make_additive(clip, &first_frame(clip), AdditiveFormat::DEFAULT).unwrap();
        let fingers: Vec<usize> = (0..add.num_bones())
            .filter(|&b| glob_match(glob, &add.skeleton.names[b]))
            .collect();
        assert!(!fingers.is_empty(), "{rel}: no bone matches {glob}");
        let settings = CompressionSettings {
            bones: vec![BoneOverride {
                pattern: glob.into(),
                error_threshold: Some(0.001),
                shell_distance: None,
            }],
            ..Default::default()
        };
        let plain = compress(&add, &CompressionSettings::default()).unwrap();
        let c = compress(&add, &settings).unwrap();
        let limit = |b: usize| if fingers.contains(&b) { 0.001 } else { 0.01 };
        assert_eq!(c.error.per_bone_threshold.len(), add.num_bones());
        let per_bone = common::combined_error_9(&add, &c.bytes).per_bone_max;
        for (b, &e) in per_bone.iter().enumerate() {
            if e > limit(b) {
                failures.push(format!(
                    "{rel}: bone '{}' {e:.6} cm > {} on the combined pose",
                    add.skeleton.names[b],
                    limit(b)
                ));
            }
        }
        let before = common::combined_error_9(&add, &plain.bytes).per_bone_max;
        let loose = fingers.iter().map(|&b| before[b]).fold(0.0, f64::max);
        let tight = fingers.iter().map(|&b| per_bone[b]).fold(0.0, f64::max);
        loose_fingers += usize::from(loose > 0.001);
        eprintln!(
            "{rel}: additive, {} finger bone(s) '{glob}': {loose:.5} -> {tight:.5} cm; {} -> {} B",
            fingers.len(),
            plain.runtime_bytes,
            c.runtime_bytes
        );
        if eval {
            // The combined poses as plain clips: the evaluator measures them bone by bone.
            let base = add.additive.as_ref().unwrap();
            let decoded =
                clipforge_anim::decompress::to_raw_clip(&ClipReader::new(&c.bytes).unwrap());
            let raw = dir.path().join(format!("raw{i}.acl.sjson"));
            let lossy = dir.path().join(format!("lossy{i}.acl.sjson"));
            std::fs::write(&raw, write_acl_clip(&combined_clip(&add, base).unwrap())).unwrap();
            std::fs::write(
                &lossy,
                write_acl_clip(&combined_clip(&decoded, base).unwrap()),
            )
            .unwrap();
            let per = common::clip_eval_per_bone(&tools, &raw, &lossy);
            for b in 0..add.num_bones() {
                let e = per[&add.skeleton.names[b]];
                // Both combined poses are rounded to float32 when written (the codec's 3e-5 cm
                // input-rounding margin covers that).
                if e > limit(b) {
                    failures.push(format!(
                        "{rel}: clip_eval: bone '{}' {e:.6} cm > {}",
                        add.skeleton.names[b],
                        limit(b)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        loose_fingers > 0,
        "no finger bone was over 0.001 cm without its own threshold: the test proves nothing"
    );
}
