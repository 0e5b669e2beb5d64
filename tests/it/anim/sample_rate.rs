//! `--sample-rate` on the real files of `$CLIPFORGE_DATA`: FBX and glTF resampled, ACL and BVH
//! never; through the library and the CLI (`convert`, `compress`, `inspect --raw`).

use crate::common;

use clipforge::anim::formats::{ImportOptions, load_clips, load_clips_with_options};
use glam::Vec3;

/// A BVH file of the real data (stores its samples).
const BVH_FILE: &str = "bvh/cmu-acrnn/standard.bvh";

/// `--sample-rate` ([`ImportOptions::sample_rate`]): FBX and glTF are sampled at the rate asked
/// for over the same span, and a sample at a time both rates share has the same pose; ACL and BVH
/// store samples and are never resampled. Through the CLI: `convert --sample-rate 60`, and an
/// unsupported rate refused before anything is read.
#[test]
fn sample_rate_resamples_fbx_and_gltf_only() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let at = |hz: f64| ImportOptions {
        sample_rate: Some(hz),
    };
    let close = |a: &[Vec3], b: &[Vec3], what: &str| {
        for (i, (p, q)) in a.iter().zip(b).enumerate() {
            assert!(p.distance(*q) <= 1e-3, "{what}: bone {i}: {p} vs {q}");
        }
    };
    // skinning.fbx: one 0.8333 s take at 30 Hz (26 frames).
    let fbx_path = data.join("fbx/magnum-plugins/skinning.fbx");
    let own = &load_clips(&fbx_path).unwrap()[0];
    assert_eq!((own.num_samples, own.sample_rate), (26, 30.0));
    let (clips, _) = load_clips_with_options(&fbx_path, &at(60.0)).unwrap();
    let hi = &clips[0];
    assert_eq!((hi.num_samples, hi.sample_rate), (51, 60.0));
    for k in [0, 7, 25] {
        close(
            &common::object_positions(own, k),
            &common::object_positions(hi, 2 * k),
            &format!("fbx 30 Hz sample {k}"),
        );
    }
    let (clips, _) = load_clips_with_options(&fbx_path, &at(10.0)).unwrap();
    assert_eq!(clips[0].num_samples, 9);

    // glTF: the keyframe grid's rate is replaced the same way.
    let gltf_path = data.join("gltf/khronos-via-ozz/rigged_simple.gltf");
    let own = load_clips(&gltf_path).unwrap();
    let (hi, _) = load_clips_with_options(&gltf_path, &at(120.0)).unwrap();
    assert_eq!(own.len(), hi.len());
    for (a, b) in own.iter().zip(&hi) {
        let span = (a.num_samples - 1) as f64 / a.sample_rate as f64;
        assert_eq!(b.sample_rate, 120.0);
        assert_eq!(b.num_samples, (span * 120.0).round() as usize + 1);
        close(
            &common::object_positions(a, 0),
            &common::object_positions(b, 0),
            "gltf t=0",
        );
        close(
            &common::object_positions(a, a.num_samples - 1),
            &common::object_positions(b, b.num_samples - 1),
            "gltf end",
        );
    }

    // ACL and BVH: the option changes nothing.
    for f in ["acl-regression/09_02.acl.sjson", BVH_FILE] {
        let p = data.join(f);
        let own = load_clips(&p).unwrap();
        let (with, _) = load_clips_with_options(&p, &at(60.0)).unwrap();
        assert_eq!(own, with, "{f}");
    }

    // The CLI.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("s.acl.sjson");
    common::run_ok(
        common::clipforge()
            .args(["convert", "--sample-rate", "60"])
            .arg(&fbx_path)
            .arg("-o")
            .arg(&out),
    );
    let back = &load_clips(&out).unwrap()[0];
    assert_eq!((back.num_samples, back.sample_rate), (51, 60.0));
    // compress at 60 Hz; `inspect --raw` needs the same rate to compare, and says so.
    let input = tmp.path().join("in");
    std::fs::create_dir_all(&input).unwrap();
    std::fs::copy(&fbx_path, input.join("skinning.fbx")).unwrap();
    let out_dir = tmp.path().join("out");
    common::run_ok(
        common::clipforge()
            .args(["compress", "-q", "--sample-rate", "60"])
            .arg(&input)
            .arg("-o")
            .arg(&out_dir),
    );
    let cfa = out_dir.join("skinning.cfa");
    let inspect = |extra: &[&str]| {
        common::clipforge()
            .arg("inspect")
            .arg(&cfa)
            .arg("--raw")
            .arg(&fbx_path)
            .args(extra)
            .output()
            .unwrap()
    };
    let o = inspect(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("--sample-rate 60"),
        "{err}"
    );
    let o = inspect(&["--sample-rate", "60"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("error:"));
    for bad in ["0", "1001", "nan", "fast"] {
        let o = common::clipforge()
            .args(["convert", "--sample-rate", bad])
            .arg(&fbx_path)
            .arg("-o")
            .arg(tmp.path().join("bad.acl.sjson"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("--sample-rate"), "{bad}: {err}");
    }
}
