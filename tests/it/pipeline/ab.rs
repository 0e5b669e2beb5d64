//! The engine side of the app's A/B of presets (`pipeline::ab`): one clip compressed with two
//! settings into a temporary folder, nothing written to the output folder before "keep", the
//! kept file identical to what a batch with those settings writes, and kept: the choice is a
//! `[[clip]]` table in the clip folder's `clipforge.toml`, so later batches leave the kept file
//! as it is. On a real ACL clip (copied into a temporary folder: keeping writes a
//! `clipforge.toml` beside it) when CLIPFORGE_DATA is set, on a generated one otherwise.

use crate::common;

use clipforge::anim::CompressionSettings;
use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::pipeline::ab::{AbError, AbRequest, AbSettings, Side, run_ab};
use clipforge::pipeline::folder_settings::{self, FolderSettings, Overrides};
use clipforge::pipeline::{
    BatchOptions, CancelToken, ClipFile, Progress, run_batch, run_batch_configured,
};
use std::path::{Path, PathBuf};

/// The tests look for their temporary folders in the system temp dir by process id: one at a
/// time, so one test's folder is never counted by another.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn settings(label: &str, threshold: f32, shell: Option<f32>) -> AbSettings {
    AbSettings {
        label: label.into(),
        settings: CompressionSettings {
            error_threshold: threshold,
            shell_distance: shell,
            ..Default::default()
        },
    }
}

/// The clip to compare: `(root, file, clip name)`.
fn clip_under_test(generated_dir: &Path) -> (PathBuf, PathBuf, String) {
    if let Some(data) = real_data_or_skip!() {
        let file = generated_dir.join("104_30.acl.sjson");
        std::fs::copy(data.join("acl-regression/104_30.acl.sjson"), &file).unwrap();
        return (generated_dir.to_path_buf(), file, "104_30".into());
    }
    let clip = generate(&GenerateOptions {
        name: "hero_walk".into(),
        num_samples: 90,
        seed: 7,
        with_scale: true,
        ..Default::default()
    });
    let file = generated_dir.join("hero_walk.acl.sjson");
    std::fs::write(&file, write_acl_clip(&clip)).unwrap();
    (generated_dir.to_path_buf(), file, "hero_walk".into())
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect()
}

#[test]
fn two_presets_compared_then_one_kept_as_a_batch_would_write_it() {
    let _serial = serial();
    let gen_dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (root, file, clip) = clip_under_test(gen_dir.path());
    let request = AbRequest {
        root: root.clone(),
        file: file.clone(),
        clip: clip.clone(),
        a: settings("High quality (0.001 cm)", 0.001, None),
        b: settings("Crowd / LOD (0.1 cm)", 0.1, Some(3.0)),
    };
    let progress = Progress::default();
    let run = run_ab(&request, &progress, &CancelToken::default()).unwrap();
    let temp = run.temp_dir().to_path_buf();
    assert!(temp.is_dir());
    assert_eq!(
        progress
            .done_clips
            .load(std::sync::atomic::Ordering::Relaxed),
        2
    );

    for side in [&run.a, &run.b] {
        let r = &side.report;
        assert!(side.ok(), "{}: {:?}", side.label, r.error);
        assert_eq!(r.clip, clip);
        assert!(r.bones > 0 && r.samples > 0);
        assert_eq!(r.per_bone_max_error_cm.len(), r.bones);
        assert_eq!(r.per_sample_max_error_cm.len(), r.samples);
        let worst = r
            .per_sample_max_error_cm
            .iter()
            .cloned()
            .fold(0.0, f64::max);
        assert!((worst - r.max_error_at_samples_cm).abs() <= 1e-9 * worst.max(1.0));
        assert!(r.compressed_bytes > 0 && r.ratio > 1.0);
    }
    // Each side meets its own threshold; the looser one is smaller and less precise.
    assert!(
        run.a.report.max_error_cm <= 0.001 * 1.0001,
        "{}",
        run.a.report.max_error_cm
    );
    assert!(
        run.b.report.max_error_cm <= 0.1 * 1.0001,
        "{}",
        run.b.report.max_error_cm
    );
    assert!(run.b.report.compressed_bytes < run.a.report.compressed_bytes);
    assert!(run.b.report.max_error_cm > run.a.report.max_error_cm);

    // Nothing in the output folder until the user keeps one.
    assert!(files_under(out.path()).is_empty());
    let dest = run.destination(Side::B, out.path()).unwrap();
    let k = run.keep(Side::B, out.path()).unwrap();
    let kept = k.output.clone();
    assert_eq!(kept, dest);
    assert_eq!(files_under(out.path()), vec![kept.clone()]);
    // The kept row is B's, in the output folder, with the settings a batch now resolves.
    assert_eq!(k.report.compressed_bytes, run.b.report.compressed_bytes);
    assert_eq!(k.report.output.as_deref(), Some(&*kept.to_string_lossy()));
    let s = k.report.settings.as_ref().unwrap();
    assert_eq!(
        (s.error_threshold_cm, s.shell_distance_cm),
        (0.1, Some(3.0))
    );
    assert_eq!(k.settings_file, root.join("clipforge.toml"));
    assert_eq!(s.clip_match.as_deref(), Some(&*format!("{clip}.acl.sjson")));

    // The kept file is byte for byte what a batch with B's settings writes for this clip.
    let batch_out = tempfile::tempdir().unwrap();
    let cf = ClipFile::new(&root, &file).unwrap();
    let rep = run_batch(
        std::slice::from_ref(&cf),
        &BatchOptions {
            settings: request.b.settings.clone(),
            output_root: batch_out.path().to_path_buf(),
            jobs: 1,
            use_skip_cache: false,
        },
        &Progress::default(),
        &CancelToken::default(),
    );
    let row = rep.clips.iter().find(|r| r.clip == clip).unwrap();
    let batch_file = PathBuf::from(row.output.as_ref().unwrap());
    assert_eq!(
        batch_file.strip_prefix(batch_out.path()).unwrap(),
        kept.strip_prefix(out.path()).unwrap()
    );
    assert_eq!(
        std::fs::read(&batch_file).unwrap(),
        std::fs::read(&kept).unwrap()
    );
    // Keeping A afterwards replaces it (the user changed their mind), file and table both.
    run.keep(Side::A, out.path()).unwrap();
    assert_ne!(
        std::fs::read(&batch_file).unwrap(),
        std::fs::read(&kept).unwrap()
    );
    let f = FolderSettings::load(&k.settings_file).unwrap();
    assert_eq!(f.clips.len(), 1);
    assert_eq!(f.clips[0].error_threshold, Some(0.001));
    assert_eq!(f.clips[0].shell_distance, None);

    drop(run);
    assert!(!temp.exists(), "the temporary folder goes with the run");
}

#[test]
fn cancelled_and_bad_requests_leave_nothing_behind() {
    let _serial = serial();
    let gen_dir = tempfile::tempdir().unwrap();
    let (root, file, clip) = clip_under_test(gen_dir.path());
    let cancel = CancelToken::default();
    cancel.cancel();
    let request = AbRequest {
        root: root.clone(),
        file: file.clone(),
        clip: clip.clone(),
        a: settings("A", 0.01, None),
        b: settings("B", 0.1, None),
    };
    let before = std::fs::read_dir(std::env::temp_dir()).unwrap().count();
    assert!(matches!(
        run_ab(&request, &Progress::default(), &cancel),
        Err(AbError::Cancelled)
    ));
    let txt = gen_dir.path().join("notes.txt");
    std::fs::write(&txt, "x").unwrap();
    let bad = AbRequest {
        file: txt.clone(),
        ..request.clone()
    };
    let e = run_ab(&bad, &Progress::default(), &CancelToken::default()).unwrap_err();
    assert!(e.to_string().starts_with(&txt.display().to_string()), "{e}");
    let other = AbRequest {
        clip: "no_such_clip".into(),
        ..request
    };
    let e = run_ab(&other, &Progress::default(), &CancelToken::default()).unwrap_err();
    assert!(
        e.to_string().contains("no clip named 'no_such_clip'"),
        "{e}"
    );
    // Other processes use the temp dir too: only check that ours are not left there.
    let ours = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("clipforge-ab-{}-", std::process::id()))
        })
        .count();
    assert_eq!(ours, 0, "({before} entries before)");
}

#[test]
fn a_clip_that_fails_in_one_side_can_not_be_kept() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.acl.sjson");
    std::fs::write(&file, "version = 5\nclip = { name = \"broken\" ").unwrap();
    let request = AbRequest {
        root: dir.path().to_path_buf(),
        file,
        clip: "broken".into(),
        a: settings("A", 0.01, None),
        b: settings("B", 0.1, None),
    };
    let run = run_ab(&request, &Progress::default(), &CancelToken::default()).unwrap();
    assert!(!run.a.ok() && !run.b.ok());
    assert!(
        run.a
            .report
            .error
            .as_ref()
            .unwrap()
            .contains("broken.acl.sjson")
    );
    let e = run.keep(Side::A, out.path()).unwrap_err();
    assert_eq!(e.to_string(), "side A failed: nothing to keep");
    assert!(files_under(out.path()).is_empty());
}

/// Compresses `file` (under `root`) into `out` as a later batch would: the tab's or the command
/// line's settings, the skip cache on.
fn batch(root: &Path, file: &Path, out: &Path, threshold: f32, explicit: bool) -> Vec<PathBuf> {
    let cf = ClipFile::new(root, file).unwrap();
    let overrides = Overrides {
        error_threshold: explicit.then_some(threshold),
        ..Default::default()
    };
    let rep = run_batch_configured(
        std::slice::from_ref(&cf),
        &BatchOptions {
            settings: CompressionSettings {
                error_threshold: threshold,
                ..Default::default()
            },
            output_root: out.to_path_buf(),
            jobs: 2,
            use_skip_cache: true,
        },
        &overrides,
        &Progress::default(),
        &CancelToken::default(),
        &|_| {},
    );
    rep.clips
        .iter()
        .map(|r| {
            assert!(r.error.is_none(), "{:?}", r.error);
            PathBuf::from(r.output.as_ref().unwrap())
        })
        .collect()
}

#[test]
fn a_kept_side_stays_kept_through_later_batches() {
    let _serial = serial();
    let gen_dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (root, file, clip) = clip_under_test(gen_dir.path());
    // A user's own settings file, with a comment and a key of its own, both kept.
    let toml = root.join("clipforge.toml");
    std::fs::write(&toml, "# studio defaults\nerror_threshold = 0.01\n").unwrap();
    // The clip was compressed by a batch first (skip cache filled, A's settings).
    let first = batch(&root, &file, out.path(), 0.01, false);
    assert_eq!(first.len(), 1);
    let a_bytes = std::fs::read(&first[0]).unwrap();

    let request = AbRequest {
        root: root.clone(),
        file: file.clone(),
        clip,
        a: settings("Default (0.01 cm)", 0.01, None),
        b: settings("Crowd / LOD (0.1 cm)", 0.1, None),
    };
    let run = run_ab(&request, &Progress::default(), &CancelToken::default()).unwrap();
    let k = run.keep(Side::B, out.path()).unwrap();
    assert_eq!(k.output, first[0]);
    let b_bytes = std::fs::read(&k.output).unwrap();
    assert_ne!(a_bytes, b_bytes);
    let text = std::fs::read_to_string(&toml).unwrap();
    assert!(
        text.starts_with("# studio defaults\nerror_threshold = 0.01\n"),
        "{text}"
    );
    assert!(text.contains(folder_settings::APP_CLIPS_MARKER), "{text}");

    // The next "Compress all" with the tab's settings, then a command line that gives a
    // threshold explicitly: the `[[clip]]` table wins in both, the file stays B's.
    for explicit in [false, true] {
        let again = batch(&root, &file, out.path(), 0.01, explicit);
        assert_eq!(again, first);
        assert_eq!(
            std::fs::read(&again[0]).unwrap(),
            b_bytes,
            "explicit: {explicit}"
        );
    }

    // A new comparison still compresses A with A's settings (the table does not apply there).
    let run2 = run_ab(&request, &Progress::default(), &CancelToken::default()).unwrap();
    assert_eq!(
        run2.a.report.compressed_bytes,
        run.a.report.compressed_bytes
    );
    assert!(run2.a.report.compressed_bytes > run2.b.report.compressed_bytes);
}
