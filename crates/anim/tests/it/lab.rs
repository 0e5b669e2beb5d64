//! The codec lab (issue 16): the decoders' byte and cache-line counters against hand counts on
//! small hand-built key sets, the two key layouts decoding identically, and every lab codec
//! meeting the threshold (measured here in float64, and on real clips by the independent
//! `clip_eval.py` on the exported reconstructions when `CLIPFORGE_DATA` is set).

use crate::common;

use clipforge_anim::generate::{GenerateOptions, generate};
use clipforge_anim::lab::keys::{KeySet, ROTATION, SCALE, Storage, TRANSLATION, TrackKeys};
use clipforge_anim::lab::probe::Counter;
use clipforge_anim::lab::sorted::Sorted;
use clipforge_anim::lab::unsorted::Unsorted;
use clipforge_anim::lab::{self, LabOptions};
use clipforge_anim::pose::Pose;

/// One bone, `n` samples: default rotation and scale, a translation with the given key times in
/// 16-bit storage (x = 10 · key index cm).
fn one_bone_keys(n: usize, times: &[u32]) -> KeySet {
    let def = |kind| TrackKeys {
        bone: 0,
        kind,
        storage: Storage::Default,
        times: vec![],
        words: vec![],
    };
    let last = (times.len() - 1).max(1) as f32;
    let translation = TrackKeys {
        bone: 0,
        kind: TRANSLATION,
        storage: Storage::Q16 {
            min: [0.0; 3],
            ext: [10.0 * last, 0.0, 0.0],
        },
        times: times.to_vec(),
        words: (0..times.len())
            .map(|i| [(i as f32 / last * 65535.0).round() as u32, 0, 0, 0])
            .collect(),
    };
    KeySet {
        num_samples: n,
        sample_rate: 30.0,
        tracks: vec![def(ROTATION), translation, def(SCALE)],
    }
}

#[test]
fn unsorted_counters_match_a_hand_count() {
    // Header 16 B (0..16), three table entries (16..40), the translation's data at 40: its range
    // (40..64), two one-byte key times (64..66), two 6-byte values (66..78). Two keys: the
    // binary search reads no time besides the bracketing pair. 78 contiguous bytes: 2 lines.
    let u = Unsorted::encode(&one_bone_keys(4, &[0, 3]));
    assert_eq!(u.buf.len(), 80, "78 bytes padded to 4");
    let mut pose = Pose::new(1);
    let mut c = Counter::default();
    u.decode(1.5, &mut pose, &mut c);
    assert_eq!(c.end_pose(), (78, 2));
    assert!(
        (pose.translations[0].x - 5.0).abs() < 1e-3,
        "{:?}",
        pose.translations[0]
    );

    // Five keys at 0, 1, 2, 3, 4 (n = 5): times at 64..69, values at 69..99. At x = 3.5 the
    // search over keys 0..=3 probes key 2 (64+2), then key 3 (64+3), then reads keys 3 and 4
    // (67..69) and values 3 and 4 (69 + 18 .. 69 + 30 = 87..99).
    let u = Unsorted::encode(&one_bone_keys(5, &[0, 1, 2, 3, 4]));
    let mut c = Counter::default();
    u.decode(3.5, &mut pose, &mut c);
    // Distinct: 0..64 (64) + 66..69 (3) + 87..99 (12) = 79 bytes, lines 0 and 1.
    assert_eq!(c.end_pose(), (79, 2));
    assert!((pose.translations[0].x - 35.0).abs() < 1e-2);
}

#[test]
fn sorted_stream_counters_match_a_hand_count() {
    // Keys at 0, 2, 3: layout header 32, track infos 3 × 28 (32..116), one jump table entry
    // (116..124), jump frame 0 with keys 0 and 1 of the translation (two 10-byte entries,
    // 124..144), the stream with key 2 (144..154).
    let s = Sorted::encode(&one_bone_keys(4, &[0, 2, 3])).unwrap();
    assert_eq!(s.buf.len(), 154);
    let mut ctx = s.new_context();
    assert_eq!(ctx.size_bytes(), 16 + 3 * 40);
    let mut pose = Pose::new(1);

    // First decode at 0: the jump frame is loaded. Clip reads: key counts of the three
    // tracks (34..36, 62..64, 90..92), the translation's info and range (60..88), the jump
    // entry (116..124), the two frame entries (124..144), the stream head's track id
    // (144..146): 2 + 28 + 2 + 30 = 62 bytes on lines 0, 1, 2. Context: header and three
    // slots, 0..136: 136 bytes, 3 lines.
    let mut c = Counter::default();
    s.decode(0.0, &mut ctx, &mut pose, &mut c);
    assert_eq!(c.end_pose(), (62 + 136, 3 + 3));
    assert!(pose.translations[0].x.abs() < 1e-3);

    // Forward to 2: no reload; the head entry (key 2, needed at key 1's time 2) is consumed:
    // its 10 bytes (144..154) and the track's info and range (60..88): 38 bytes, lines 0..2.
    s.decode(2.0, &mut ctx, &mut pose, &mut c);
    assert_eq!(c.end_pose(), (38 + 136, 3 + 3));
    assert!((pose.translations[0].x - 10.0).abs() < 1e-3);

    // Back to 1: the jump frame is reloaded (and key 2 consumed again only at 2).
    s.decode(1.0, &mut ctx, &mut pose, &mut c);
    assert!((pose.translations[0].x - 5.0).abs() < 1e-3);
}

fn walk(samples: usize, seed: u64) -> clipforge_anim::RawClip {
    generate(&GenerateOptions {
        name: format!("walk{seed}"),
        num_samples: samples,
        sample_rate: 30.0,
        seed,
        with_scale: true,
    })
}

#[test]
fn both_key_layouts_decode_identically_for_every_access_pattern() {
    let clip = walk(200, 3);
    let opts = LabOptions {
        timings: false,
        ..Default::default()
    };
    let (lab, lossy) = lab::run_clip(&clip, "walk", &opts).unwrap();
    assert_eq!(lab.codecs.len(), 3);
    let kr = lossy
        .iter()
        .find(|l| l.codec == lab::KEY_REDUCTION)
        .unwrap();
    let ss = lossy
        .iter()
        .find(|l| l.codec == lab::SORTED_STREAM)
        .unwrap();
    assert_eq!(
        kr.clip, ss.clip,
        "same keys, same reconstruction at every sample"
    );
    // Random, backward and forward access through one context agree with the unsorted decoder.
    let ks = clipforge_anim::lab::keys::reduce_clip(
        &clip,
        &clip.skeleton.shell_distances,
        0.0099,
        &|ks| lab::decode_key_set(&clip, ks),
    )
    .unwrap();
    let u = Unsorted::encode(&ks.keys);
    let s = Sorted::encode(&ks.keys).unwrap();
    let mut ctx = s.new_context();
    let (mut a, mut b) = (Pose::new(clip.num_bones()), Pose::new(clip.num_bones()));
    for times in lab::pattern_times(clip.num_samples, clip.sample_rate) {
        for x in times {
            u.decode(x, &mut a, &mut clipforge_anim::lab::probe::NoProbe);
            s.decode(
                x,
                &mut ctx,
                &mut b,
                &mut clipforge_anim::lab::probe::NoProbe,
            );
            assert_eq!(a, b, "at {x} samples");
        }
    }
}

#[test]
fn every_lab_codec_meets_the_threshold_on_generated_clips() {
    for (samples, seed, threshold) in [(60, 1, 0.01f32), (240, 7, 0.01), (90, 2, 0.05)] {
        let clip = walk(samples, seed);
        let opts = LabOptions {
            settings_threshold: threshold,
            timings: false,
            ..Default::default()
        };
        let (lab, lossy) = lab::run_clip(&clip, "walk", &opts).unwrap();
        for c in &lab.codecs {
            assert!(
                c.max_error_cm <= threshold as f64 && c.max_error_cm > 0.0,
                "{}: {} cm over {threshold}",
                c.codec,
                c.max_error_cm
            );
            assert!(c.bytes > 0 && c.bytes_touched_per_pose > 0.0 && c.cache_lines_per_pose >= 1.0);
        }
        // The exported reconstructions, measured again at the samples.
        for l in &lossy {
            let e = clipforge_anim::metric::measure(&clip, &l.clip).unwrap();
            assert!(e.max <= threshold as f64, "{}: {}", l.codec, e.max);
        }
        // The key reduction removed keys on a smooth procedural motion.
        let kr = lab
            .codecs
            .iter()
            .find(|c| c.codec == lab::KEY_REDUCTION)
            .unwrap();
        let all = clip.num_bones() * 3 * samples;
        assert!(kr.keys < all, "{} keys of {all}", kr.keys);
    }
}

#[test]
fn lab_exports_meet_the_threshold_by_clip_eval_on_real_clips() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let tools = data.join("../tools");
    if !tools.join("clip_eval.py").is_file() || !common::python_with_numpy() {
        eprintln!(
            "skipped: needs python3 with numpy and {}/clip_eval.py",
            tools.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let opts = LabOptions {
        timings: false,
        ..Default::default()
    };
    for name in ["09_02", "104_30", "81_18_looping", "09_02_with_scale"] {
        let raw = data
            .join("acl-regression")
            .join(format!("{name}.acl.sjson"));
        let clip = clipforge_anim::formats::load_clips(&raw).unwrap().remove(0);
        let (_, lossy) = lab::run_clip(&clip, name, &opts).unwrap();
        for l in &lossy {
            let out = dir.path().join(format!("{name}.{}.acl.sjson", l.codec));
            std::fs::write(&out, clipforge_anim::formats::write_acl_clip(&l.clip)).unwrap();
            let e = common::clip_eval(&tools, &raw, &out, &["--between", "3"]);
            assert!(
                e <= 0.01,
                "{name} {}: clip_eval.py measures {e} cm",
                l.codec
            );
        }
    }
}

#[test]
fn uniform_counters_match_a_hand_count() {
    use clipforge_anim::lab::uniform::Layout;
    use clipforge_anim::{BoneDesc, CompressionSettings, RawClip, Skeleton};
    // One bone, 8 samples, only its translation moving: one animated sub-track, one segment.
    let sk = Skeleton::from_ordered(vec![BoneDesc::new("root", None)]).unwrap();
    let n = 8;
    let clip = RawClip::new(
        "one",
        sk,
        30.0,
        n,
        vec![glam::Quat::IDENTITY; n],
        (0..n)
            .map(|s| glam::Vec3::new(s as f32 * 3.0, 0.0, 0.0))
            .collect(),
        vec![glam::Vec3::ONE; n],
    )
    .unwrap();
    let c = clipforge_anim::compress(&clip, &CompressionSettings::default()).unwrap();
    let buf = &c.bytes;
    let reader = clipforge_anim::ClipReader::new(buf).unwrap();
    assert_eq!(
        (reader.num_animated_subtracks(), reader.num_segments()),
        (1, 1)
    );
    // docs/FORMAT.md (version 5): header 48, one descriptor padded to 4 (48..52), no constants,
    // one clip range (52..76), the coded metadata's length at 76 (2: one segment's widths, raw)
    // and bytes at 80..82, padded to 84, the bit stream at 84.
    let u32_at = |o: usize| u32::from_le_bytes(buf[o..o + 4].try_into().unwrap()) as usize;
    let bits: usize = reader.segment_widths(0).next().unwrap().iter().sum::<u32>() as usize;
    assert_eq!(u16::from_le_bytes([buf[4], buf[5]]), 5);
    assert_eq!(u32_at(76), 2);
    assert_eq!(
        u16::from_le_bytes([buf[80], buf[81]]) as usize & 0x7fff,
        reader.segment_widths(0).next().unwrap()[0] as usize
            | (reader.segment_widths(0).next().unwrap()[1] as usize) << 5
            | (reader.segment_widths(0).next().unwrap()[2] as usize) << 10
    );
    // Sampling at 2.5 reads samples 2 and 3's bits, bytes (84·8 + 2·bits) / 8 up to
    // ⌈(84·8 + 4·bits) / 8⌉ of the buffer, and in the reader its own state (48 B for the bone,
    // 36 B for the animated sub-track: 2 lines) and the expanded widths (2 B) in the reader's
    // copy of the metadata, an allocation of its own starting on a line: 86 B, 3 lines.
    let stream = (84 * 8 + 4 * bits).div_ceil(8) - (84 * 8 + 2 * bits) / 8;
    let lines_stream = if 84 + (4 * bits).div_ceil(8) <= 128 {
        0
    } else {
        1
    };
    let mut counter = Counter::default();
    Layout::new(buf).touch_pose(buf, 2.5, &mut counter);
    assert_eq!(
        counter.end_pose(),
        ((stream + 86) as u64, (1 + lines_stream + 3) as u64)
    );
}

#[test]
fn access_patterns_stay_bounded_for_a_hostile_sample_rate() {
    // 30 Hz clip: one pose per sample forward at 30 Hz, two at 60 Hz.
    let [f30, f60, back, random] = lab::pattern_times(100, 30.0);
    assert_eq!((f30.len(), f60.len(), back.len()), (100, 199, 100));
    assert!(random.iter().all(|&x| (0.0..=99.0).contains(&x)));
    // A clip claiming 1e-30 Hz would mean ~1e32 poses at 30 Hz: capped at 4 per sample (+64).
    for times in lab::pattern_times(10, 1e-30) {
        assert!(
            !times.is_empty() && times.len() <= 4 * 10 + 64,
            "{}",
            times.len()
        );
        assert!(times.iter().all(|&x| (0.0..=9.0).contains(&x)));
    }
}
