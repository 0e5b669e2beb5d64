//! Set-ups the batch tests share: a temporary input/output folder pair, generated clips written
//! into it, what a run left in a folder, and the `compress` command line over the pair.

use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary folder (removed when the first value drops) with the paths `in/` (inputs) and
/// `out/` (the output root) inside it; neither is created.
pub fn in_out() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let out = dir.path().join("out");
    (dir, input, out)
}

/// [`in_out`] with `in/` created and holding a copy of each file of `files` (under its own
/// name): a real clip alone (or beside others) in a fresh folder.
pub fn in_out_with(files: &[&Path]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (dir, input, out) = in_out();
    std::fs::create_dir_all(&input).unwrap();
    for f in files {
        std::fs::copy(f, input.join(f.file_name().unwrap()))
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    }
    (dir, input, out)
}

/// The repository's own real clip `assets/clips/locomotion/jog.acl.sjson`.
pub fn bundled_jog() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/clips/locomotion/jog.acl.sjson")
}

/// The real Fox (three clips; its Run is below float32 precision at 0.001 cm) under `data`.
pub fn real_fox(data: &Path) -> PathBuf {
    data.join("gltf/fox-via-bevy/Fox.glb")
}

/// Writes a generated 23-bone `.acl.sjson` clip named `clip{seed}` with `samples` samples (with
/// scale tracks for even seeds), creating its folder.
pub fn write_generated_clip(path: &Path, seed: u64, samples: usize) {
    let clip = generate(&GenerateOptions {
        name: format!("clip{seed}"),
        num_samples: samples,
        sample_rate: 30.0,
        seed,
        with_scale: seed.is_multiple_of(2),
    });
    let text = write_acl_clip(&clip);
    assert!(!text.is_empty(), "formats::write_acl_clip returned nothing");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Writes an ACL scalar track list named `blend_weights`: three float2f tracks (the third
/// stripped from the output) of 40 samples at 30 Hz, each held to 0.0005.
pub fn write_scalar_list(path: &Path) {
    use clipforge::anim::scalar::{RawScalarList, RawScalarTrack, ScalarType};
    let num_samples = 40;
    let list = RawScalarList {
        name: "blend_weights".into(),
        track_type: ScalarType::Float2,
        sample_rate: 30.0,
        num_samples,
        tracks: (0..3u32)
            .map(|t| RawScalarTrack {
                name: format!("w{t}"),
                precision: 0.0005,
                output_index: (t != 2).then_some(t),
                values: (0..num_samples * 2)
                    .map(|i| (i as f32 * 0.21 + t as f32).sin())
                    .collect(),
            })
            .collect(),
    };
    let text = clipforge::anim::formats::acl::write_acl_scalar_list(&list);
    std::fs::write(path, text).unwrap();
}

/// A fresh `in/` holding a scalar track list (`weights.acl.sjson`) and a generated clip
/// (`walk.acl.sjson`), the `out/` path and the JSON report's path beside them.
pub fn scalar_list_and_clip() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let (dir, input, out) = in_out();
    std::fs::create_dir(&input).unwrap();
    write_scalar_list(&input.join("weights.acl.sjson"));
    write_generated_clip(&input.join("walk.acl.sjson"), 1, 30);
    let report = dir.path().join("r.json");
    (dir, input, out, report)
}

/// Every file under `dir`, relative, `/`-separated.
pub fn tree(dir: &Path) -> BTreeSet<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

/// How many `.cfa` files are under `dir`.
pub fn cfa_count(dir: &Path) -> usize {
    tree(dir).iter().filter(|p| p.ends_with(".cfa")).count()
}

/// The temporary files of an atomic write left under `dir` (relative paths).
pub fn temp_files(dir: &Path) -> Vec<String> {
    tree(dir)
        .into_iter()
        .filter(|p| p.contains(".cf-tmp-"))
        .collect()
}

/// `clipforge compress INPUT -o OUT`; more arguments may be added.
pub fn compress(input: &Path, out: &Path) -> Command {
    let mut cmd = super::clipforge();
    cmd.arg("compress").arg(input).arg("-o").arg(out);
    cmd
}
