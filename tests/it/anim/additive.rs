//! Additive clips on generated clips (no real data needed): every ACL format, relative to the
//! first frame and to another clip of the rig (another sample count), compressed and measured
//! on the combined pose at many points between samples; the `.cfa` flag; the ACL round trip with
//! a base of several samples; `clipforge convert --additive-base` end to end.

use crate::common;

use clipforge::anim::additive::{AdditiveError, AdditiveFormat, first_frame, make_additive};
use clipforge::anim::formats::{load_clips, write_acl_clip};
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::anim::{ClipReader, CompressionSettings, RawClip, compress, metric};

const FORMATS: [AdditiveFormat; 3] = [
    AdditiveFormat::Relative,
    AdditiveFormat::Additive0,
    AdditiveFormat::Additive1,
];

fn clip(seed: u64, num_samples: usize, with_scale: bool) -> RawClip {
    generate(&GenerateOptions {
        name: format!("walk{seed}"),
        num_samples,
        seed,
        with_scale,
        ..Default::default()
    })
}

#[test]
fn every_format_meets_the_threshold_on_the_combined_pose() {
    let settings = CompressionSettings::default();
    for with_scale in [false, true] {
        let walk = clip(1, 60, with_scale);
        // Another clip of the same rig with another sample count: the base is stretched.
        let other = clip(2, 41, with_scale);
        for format in FORMATS {
            for (what, base) in [
                ("first frame", first_frame(&walk)),
                ("other clip", other.clone()),
            ] {
                let add = make_additive(&walk, &base, format).unwrap();
                let c = compress(&add, &settings).unwrap();
                let label = format!("{format:?} on {what}, scale {with_scale}");
                assert!(
                    c.stats.verified_max_error <= 0.01,
                    "{label}: {}",
                    c.stats.verified_max_error
                );
                let e = common::combined_error_9(&add, &c.bytes).max;
                assert!(
                    e <= 0.01 + 3e-5,
                    "{label}: {e} cm at 9 points between samples"
                );
                let flag = ClipReader::new(&c.bytes).unwrap().additive_format();
                assert_eq!(flag, format as u8 + 1, "{label}: the .cfa's additive flag");
            }
        }
    }
    // A plain clip keeps flag 0.
    let c = compress(&clip(1, 60, false), &settings).unwrap();
    assert_eq!(ClipReader::new(&c.bytes).unwrap().additive_format(), 0);
}

#[test]
fn the_error_that_matters_is_the_combined_one() {
    // The additive alone (as a plain clip: no lever arms, its translations are ~0) against the
    // combined pose: compressing the additive as if it were a plain clip and applying it to the
    // base exceeds the threshold, which is why the search works in the combined space.
    let walk = clip(3, 60, false);
    let add = make_additive(&walk, &first_frame(&walk), AdditiveFormat::Additive1).unwrap();
    let mut plain = add.clone();
    plain.additive = None;
    let settings = CompressionSettings::default();
    let naive = compress(&plain, &settings).unwrap();
    let naive_combined = common::combined_error_9(&add, &naive.bytes).max;
    let ours = compress(&add, &settings).unwrap();
    let ours_combined = common::combined_error_9(&add, &ours.bytes).max;
    assert!(
        naive_combined > 0.01,
        "the additive compressed alone measures {naive_combined} on the combined pose"
    );
    assert!(ours_combined <= 0.01 + 3e-5, "{ours_combined}");
}

#[test]
fn acl_round_trip_keeps_a_base_of_several_samples() {
    let walk = clip(4, 30, true);
    let base = clip(5, 17, true);
    for format in FORMATS {
        let add = make_additive(&walk, &base, format).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("add.acl.sjson");
        std::fs::write(&path, write_acl_clip(&add)).unwrap();
        let back = load_clips(&path).unwrap().remove(0);
        assert_eq!(back, add, "{format:?}");
        let b = back.additive.as_ref().unwrap();
        assert_eq!((b.format, b.base.num_samples), (format, 17));
    }
}

#[test]
fn a_base_of_another_rig_is_refused() {
    let walk = clip(1, 20, false);
    let mut other = clip(2, 20, false);
    other.skeleton.names[3] = "not_a_bone".into();
    let e = make_additive(&walk, &other, AdditiveFormat::DEFAULT).unwrap_err();
    assert!(
        matches!(e, AdditiveError::DifferentRig { .. }) && e.to_string().contains("same bones"),
        "{e}"
    );
}

fn convert(args: &[&std::ffi::OsStr]) -> std::process::Output {
    common::clipforge()
        .arg("convert")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn convert_makes_additive_clips_from_the_first_frame_or_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let walk_path = dir.path().join("walk.acl.sjson");
    let base_path = dir.path().join("base.acl.sjson");
    let walk = clip(1, 40, false);
    std::fs::write(&walk_path, write_acl_clip(&walk)).unwrap();
    std::fs::write(&base_path, write_acl_clip(&clip(2, 25, false))).unwrap();
    let out = dir.path().join("out.acl.sjson");
    for base in [std::ffi::OsStr::new("first-frame"), base_path.as_os_str()] {
        let o = convert(&[
            walk_path.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
            "--additive-base".as_ref(),
            base,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let add = load_clips(&out).unwrap().remove(0);
        let b = add.additive.as_ref().expect("an additive clip");
        assert_eq!(b.format, AdditiveFormat::Additive1);
        let expected = if base == "first-frame" { 1 } else { 25 };
        assert_eq!(b.base.num_samples, expected);
        // The combined pose is the clip.
        let combined = clipforge::anim::additive::combined_clip(&add, b).unwrap();
        assert!(metric::measure(&walk, &combined).unwrap().max < 1e-3);
    }
    // A base of another rig: a clear error naming the input, exit status 1.
    let mut other = clip(2, 25, false);
    other.skeleton.names[2] = "elsewhere".into();
    std::fs::write(&base_path, write_acl_clip(&other)).unwrap();
    let o = convert(&[
        walk_path.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "--additive-base".as_ref(),
        base_path.as_os_str(),
    ]);
    assert!(!o.status.success());
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        text.contains("walk.acl.sjson") && text.contains("same bones"),
        "{text}"
    );
    assert!(!text.contains("panicked"), "{text}");
}
