//! The batch over the real data (`CLIPFORGE_DATA=/path/to/shared/data`).

use crate::common;

use clipforge::anim::CompressionSettings;
use clipforge::pipeline::report::BatchReport;
use clipforge::pipeline::{BatchOptions, CancelToken, Progress, run_batch, scan};
use std::collections::BTreeMap;
use std::path::Path;

fn run(data: &Path, out: &Path, jobs: usize) -> BatchReport {
    let files = scan(data);
    let opts = BatchOptions {
        settings: CompressionSettings::default(),
        output_root: out.to_path_buf(),
        jobs,
        use_skip_cache: false,
    };
    run_batch(&files, &opts, &Progress::default(), &CancelToken::default())
}

/// Inputs expected to fail: the clip holding 1e25, and ACL's commented format reference (a clip
/// and a track list in one file: refused by the importer at the repeated `settings` key). ACL's
/// scalar track lists compress (to `.cfs`).
fn expected_failure(input: &str) -> bool {
    let name = Path::new(input)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    name == "09_02_with_inf_error.acl.sjson" || name == "format_reference.acl.sjson"
}

#[test]
fn batch_over_all_real_data() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = scan(&data);
    assert!(files.len() >= 80, "only {} files found", files.len());
    let report = run(&data, dir.path(), 0);
    let mut unexpected = Vec::new();
    for c in &report.clips {
        match (&c.error, expected_failure(&c.input)) {
            (None, false) => {
                assert!(c.bones > 0 || c.input.contains("no_output"), "{c:?}");
                assert!(c.compressed_bytes > 0 && c.file_bytes > 0);
                assert!(c.max_error_cm.is_finite());
                assert!(Path::new(c.output.as_ref().unwrap()).is_file());
            }
            (Some(e), true) => {
                let name = Path::new(&c.input)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                assert!(e.contains(&name), "the error should name the file: {e}");
            }
            (Some(e), false) => unexpected.push(format!("FAILED {e}")),
            (None, true) => unexpected.push(format!("should have failed: {}", c.input)),
        }
    }
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
    // glTF files with several animations give one row and one output per animation.
    let robot: Vec<_> = report
        .clips
        .iter()
        .filter(|c| c.input.ends_with("robot.glb"))
        .collect();
    assert_eq!(robot.len(), 14);
    assert!(robot.iter().any(|c| {
        c.output
            .as_deref()
            .is_some_and(|o| o.ends_with("robot.3_Robot_Jump.cfa"))
    }));
    assert!(report.totals.ratio > 0.0);
    eprintln!(
        "{} clips, {} failed, ratio {:.2}, worst {:.4} cm, wall {:.0} ms",
        report.totals.clips,
        report.totals.failed,
        report.totals.ratio,
        report.totals.max_error_cm,
        report.totals.wall_ms
    );
}

#[test]
fn one_job_and_all_cores_give_the_same_sizes() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let sizes = |r: &BatchReport| -> BTreeMap<String, (u64, u64, Option<String>)> {
        r.clips
            .iter()
            .map(|c| {
                (
                    format!("{}#{}", c.input, c.clip),
                    (c.compressed_bytes, c.file_bytes, c.error.clone()),
                )
            })
            .collect()
    };
    let one = run(&data, a.path(), 1);
    let all = run(&data, b.path(), 0);
    assert_eq!(sizes(&one), sizes(&all));
    for c in one.clips.iter().filter(|c| c.error.is_none()) {
        let rel = Path::new(c.output.as_ref().unwrap())
            .strip_prefix(a.path())
            .unwrap();
        assert_eq!(
            std::fs::read(a.path().join(rel)).unwrap(),
            std::fs::read(b.path().join(rel)).unwrap()
        );
    }
}

/// Adds 0.25 to the last little-endian f32 of a glTF buffer file (keyframe data) in place.
fn nudge_last_float(bin: &Path) {
    let mut bytes = std::fs::read(bin).unwrap();
    let n = bytes.len();
    let v = f32::from_le_bytes(bytes[n - 4..].try_into().unwrap()) + 0.25;
    bytes[n - 4..].copy_from_slice(&v.to_le_bytes());
    std::fs::write(bin, bytes).unwrap();
}

/// A text `.gltf` keeps its animation in an external `.bin`: a re-exported `.bin` beside an
/// unchanged `.gltf` must be recompressed, not skipped as up to date.
#[test]
fn a_changed_external_gltf_buffer_is_not_skipped() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let src = data.join("gltf/khronos-via-ozz");
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    for f in ["interpolation_test.gltf", "interpolation_test.bin"] {
        std::fs::copy(src.join(f), input.path().join(f)).unwrap();
    }
    let opts = BatchOptions {
        settings: CompressionSettings::default(),
        output_root: out.path().to_path_buf(),
        jobs: 1,
        use_skip_cache: true,
    };
    let batch = || {
        run_batch(
            &scan(input.path()),
            &opts,
            &Progress::default(),
            &CancelToken::default(),
        )
    };
    let first = batch();
    assert_eq!(first.clips.len(), 9, "one row per animation");
    assert!(first.clips.iter().all(|c| c.error.is_none() && !c.skipped));
    let again = batch();
    assert!(again.clips.iter().all(|c| c.skipped), "unchanged: skipped");

    // Change the keyframe data, not the .gltf.
    nudge_last_float(&input.path().join("interpolation_test.bin"));
    let changed = batch();
    assert!(
        changed.clips.iter().all(|c| !c.skipped),
        "a changed .bin must recompress: {:?}",
        changed
            .clips
            .iter()
            .map(|c| (&c.clip, c.skipped))
            .collect::<Vec<_>>()
    );
}

/// The watcher: rewriting only the external `.bin` of a watched `.gltf` recompresses the glTF.
#[test]
fn watch_recompresses_a_gltf_when_its_bin_changes() {
    use clipforge::pipeline::watch::{WatchEventKind, WatchOptions, start_watch};
    use std::time::{Duration, Instant};
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let src = data.join("gltf/khronos-via-ozz");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().canonicalize().unwrap().join("in");
    let out = dir.path().canonicalize().unwrap().join("out");
    std::fs::create_dir_all(&input).unwrap();
    for f in ["interpolation_test.gltf", "interpolation_test.bin"] {
        std::fs::copy(src.join(f), input.join(f)).unwrap();
    }
    let mut opts = WatchOptions::new(CompressionSettings::default(), &out);
    opts.settle = Duration::from_millis(150);
    opts.debounce = Duration::from_millis(100);
    let mut h = start_watch(&input, opts).unwrap();
    let gltf = input.join("interpolation_test.gltf");
    let wait_compressed = |h: &clipforge::pipeline::watch::WatchHandle| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = h
                .events()
                .recv_timeout(left)
                .expect("no Compressed event for the glTF");
            if ev.path == gltf {
                assert_eq!(ev.kind, WatchEventKind::Compressed);
                return ev;
            }
        }
    };
    let first = wait_compressed(&h);
    assert_eq!(first.reports.len(), 9);

    nudge_last_float(&input.join("interpolation_test.bin"));
    let second = wait_compressed(&h);
    assert!(second.reports.iter().all(|r| !r.skipped));
    h.stop();
}
