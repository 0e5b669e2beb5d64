//! `clipforge decompress` of an additive `.cfa` (issue 13 item 2, "write them back with their
//! base"), end to end through the CLI on real BVH clips (`CLIPFORGE_DATA=../shared/data`): an
//! additive made from a real clip (relative to its first frame, and against another clip of the
//! same rig) is compressed, decompressed with `--base`, and re-imported; the output carries
//! `additive_format` and the raw base bit for bit as `base_tracks`, and the combined pose of the
//! decompressed layer on that base is within the threshold of the raw additive on the raw base.
//! Without `--base` the output is the layer with `additive_format` and no base, and stderr says so.

use crate::common;

use clipforge::anim::RawClip;
use clipforge::anim::additive::{AdditiveFormat, combined_clip, measure_combined};
use clipforge::anim::formats::load_clips;
use std::path::{Path, PathBuf};
use std::process::Output;

const THRESHOLD: f64 = 0.01;

fn cli(args: &[&str]) -> Output {
    common::clipforge().args(args).output().unwrap()
}

fn ok(out: Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{what} failed: {err}");
    err
}

fn load(p: &Path) -> RawClip {
    load_clips(p).unwrap().into_iter().next().unwrap()
}

/// Two clips of the same rig (Bandai Namco's dataset 1, read at run time, never copied).
fn pair(data: &Path) -> (PathBuf, PathBuf) {
    let d = data.join("bvh/bandai-namco-nc/dataset-1");
    (
        d.join("dataset-1_run_normal_001.bvh"),
        d.join("dataset-1_dash_normal_001.bvh"),
    )
}

/// `convert --additive-base BASE` of `clip`, then `compress`: (additive file, .cfa).
fn make_and_compress(dir: &Path, clip: &Path, base: &str) -> (PathBuf, PathBuf) {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let add = src.join("add.acl.sjson");
    let clip = clip.to_str().unwrap();
    ok(
        cli(&[
            "convert",
            clip,
            "--additive-base",
            base,
            "-o",
            add.to_str().unwrap(),
        ]),
        "convert",
    );
    let out = dir.join("out");
    ok(
        cli(&[
            "compress",
            src.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--no-skip",
        ]),
        "compress",
    );
    let cfa = out.join("add.cfa");
    assert!(cfa.is_file(), "no {}", cfa.display());
    (add, cfa)
}

fn assert_same_samples(a: &RawClip, b: &RawClip, label: &str) {
    assert_eq!(a.num_samples, b.num_samples, "{label}: samples");
    assert_eq!(
        a.sample_rate.to_bits(),
        b.sample_rate.to_bits(),
        "{label}: rate"
    );
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let flat_q = |c: &RawClip| {
        bits(
            &c.rotations
                .iter()
                .flat_map(|q| q.to_array())
                .collect::<Vec<_>>(),
        )
    };
    let flat_t = |c: &RawClip| {
        bits(
            &c.translations
                .iter()
                .flat_map(|v| v.to_array())
                .collect::<Vec<_>>(),
        )
    };
    let flat_s = |c: &RawClip| {
        bits(
            &c.scales
                .iter()
                .flat_map(|v| v.to_array())
                .collect::<Vec<_>>(),
        )
    };
    assert!(flat_q(a) == flat_q(b), "{label}: rotations differ");
    assert!(flat_t(a) == flat_t(b), "{label}: translations differ");
    assert!(flat_s(a) == flat_s(b), "{label}: scales differ");
}

/// Decompresses `cfa` with `base_args`, re-imports it and checks it against the raw additive.
fn round_trip(dir: &Path, raw_add: &Path, cfa: &Path, base_args: &[&str], label: &str) -> f64 {
    let dec = dir.join(format!("dec-{label}.acl.sjson"));
    let mut args = vec![
        "decompress",
        cfa.to_str().unwrap(),
        "-o",
        dec.to_str().unwrap(),
    ];
    args.extend_from_slice(base_args);
    let err = ok(cli(&args), "decompress");
    assert!(!err.contains("no base_tracks"), "{label}: {err}");
    let raw = load(raw_add);
    let raw_base = raw.additive.as_ref().expect("the raw clip is additive");
    let back = load(&dec);
    let back_base = back
        .additive
        .as_ref()
        .unwrap_or_else(|| panic!("{label}: decompressed clip is not additive"));
    assert_eq!(back_base.format, AdditiveFormat::Additive1, "{label}");
    assert_same_samples(&back_base.base, &raw_base.base, label);
    // The decompressed layer on the base written with it, against the raw additive on the raw base.
    let e = measure_combined(&raw, back_base, &back, &[], &raw.skeleton.shell_distances)
        .unwrap()
        .max;
    assert!(e <= THRESHOLD + 1e-6, "{label}: combined-pose error {e}");
    e
}

#[test]
fn decompress_with_base_writes_the_additive_with_its_base() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (run, dash) = pair(&data);
    let tmp = tempfile::tempdir().unwrap();

    // Relative to its first frame: the base is the additive file's own base_tracks, or the
    // original clip with --base-first-frame.
    let ff = tmp.path().join("ff");
    let (add, cfa) = make_and_compress(&ff, &run, "first-frame");
    let e1 = round_trip(
        &ff,
        &add,
        &cfa,
        &["--base", add.to_str().unwrap()],
        "ff-own",
    );
    let e2 = round_trip(
        &ff,
        &add,
        &cfa,
        &["--base", run.to_str().unwrap(), "--base-first-frame"],
        "ff-original",
    );
    assert_eq!(e1.to_bits(), e2.to_bits(), "the same base both ways");

    // Against another clip of the rig (another sample count).
    let ob = tmp.path().join("ob");
    let (add, cfa) = make_and_compress(&ob, &run, dash.to_str().unwrap());
    round_trip(
        &ob,
        &add,
        &cfa,
        &["--base", dash.to_str().unwrap()],
        "other",
    );
    // The base given wrongly (its first frame only) is written as given: the combined pose
    // then differs from the raw one by far more than the threshold.
    let dec = ob.join("wrong.acl.sjson");
    ok(
        cli(&[
            "decompress",
            cfa.to_str().unwrap(),
            "-o",
            dec.to_str().unwrap(),
            "--base",
            dash.to_str().unwrap(),
            "--base-first-frame",
        ]),
        "decompress",
    );
    let back = load(&dec);
    let raw = load(&add);
    assert_eq!(back.additive.as_ref().unwrap().base.num_samples, 1);
    let want = combined_clip(&raw, raw.additive.as_ref().unwrap()).unwrap();
    let got = combined_clip(&back, back.additive.as_ref().unwrap()).unwrap();
    let far = want
        .rotations
        .iter()
        .zip(&got.rotations)
        .map(|(a, b)| a.angle_between(*b))
        .fold(0.0f32, f32::max);
    assert!(far > 0.1, "a wrong base went unnoticed: {far} rad");
}

#[test]
fn decompress_without_base_writes_the_layer_and_says_so() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (run, _) = pair(&data);
    let tmp = tempfile::tempdir().unwrap();
    let (add, cfa) = make_and_compress(tmp.path(), &run, "first-frame");
    let dec = tmp.path().join("layer.acl.sjson");
    let err = ok(
        cli(&[
            "decompress",
            cfa.to_str().unwrap(),
            "-o",
            dec.to_str().unwrap(),
        ]),
        "decompress",
    );
    assert!(
        err.contains("additive clip (additive1)") && err.contains("no base_tracks"),
        "{err}"
    );
    let text = std::fs::read_to_string(&dec).unwrap();
    assert!(text.contains("additive_format = \"additive1\""));
    assert!(!text.contains("base_tracks") && !text.contains("additive_base_num_samples"));
    // Re-imported: the layer itself, with ACL's default base (one identity sample).
    let back = load(&dec);
    let raw = load(&add);
    let base = back.additive.as_ref().unwrap();
    assert_eq!(base.format, AdditiveFormat::Additive1);
    assert_eq!(base.base.num_samples, 1);
    assert_eq!(back.num_samples, raw.num_samples);
    // The same layer as with --base: only the base differs.
    let with = tmp.path().join("with.acl.sjson");
    ok(
        cli(&[
            "decompress",
            cfa.to_str().unwrap(),
            "-o",
            with.to_str().unwrap(),
            "--base",
            add.to_str().unwrap(),
        ]),
        "decompress",
    );
    assert_same_samples(&load(&with), &back, "layer");
}

#[test]
fn decompress_base_errors_name_the_file() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (run, _) = pair(&data);
    let tmp = tempfile::tempdir().unwrap();
    let (_, cfa) = make_and_compress(tmp.path(), &run, "first-frame");
    // A base of another rig.
    let other_rig = data.join("bvh/cmu-acrnn/standard.bvh");
    let dec = tmp.path().join("x.acl.sjson");
    let out = cli(&[
        "decompress",
        cfa.to_str().unwrap(),
        "-o",
        dec.to_str().unwrap(),
        "--base",
        other_rig.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("standard.bvh") && err.contains("same bones"),
        "{err}"
    );
    assert!(!dec.exists());
    // --base on a plain clip.
    let plain_dir = tmp.path().join("plain");
    std::fs::create_dir_all(&plain_dir).unwrap();
    ok(
        cli(&[
            "compress",
            run.to_str().unwrap(),
            "-o",
            plain_dir.to_str().unwrap(),
            "--no-skip",
        ]),
        "compress",
    );
    let plain = std::fs::read_dir(&plain_dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "cfa"))
        .unwrap();
    let out = cli(&[
        "decompress",
        plain.to_str().unwrap(),
        "-o",
        dec.to_str().unwrap(),
        "--base",
        run.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("not an additive clip"), "{err}");
    assert!(!dec.exists());
}
