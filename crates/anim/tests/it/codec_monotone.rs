//! A looser threshold never makes a clip bigger: every real transform clip of `CLIPFORGE_DATA`
//! (ACL regression clips, BVH files, every glTF clip) is compressed at 0.001, 0.003, 0.01, 0.03,
//! 0.1, 0.3, 1, 3 and 10 cm; each file is at most 1 % larger than at the previous, tighter
//! threshold, and its float64 error, measured again here at every sample and at the midpoints
//! the runtime decodes, is under the threshold. A threshold below the clip's float32 floor may
//! be refused, only where raw float32 really is over it. On the clips where the search used to
//! fall back to raw float32 at loose thresholds (CMU 131_02, 131_03 and their scaled copies:
//! rotations nearly half a turn apart between samples) and on two ACL clips (121_10, one sample;
//! 90_10), the independent evaluator `clip_eval.py` measures every output too, at and between
//! samples (needs python3 with numpy; CI installs it). All (clip, threshold) runs are
//! parallel: the whole sweep (100 clips × 9 thresholds) takes ~2 CPU-minutes in release, so CI
//! runs all of it (`docs/BENCHMARKS.md`).

use crate::common;

use clipforge_anim::RawClip;
use clipforge_anim::compress::{CompressError, compress_all_raw, decoded_between};
use clipforge_anim::formats::write_acl_clip;
use clipforge_anim::{ClipReader, CompressionSettings, compress, metric};
use rayon::prelude::*;

const THRESHOLDS: [f32; 9] = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0];

/// Size noise allowed between neighbouring thresholds (the target).
const NOISE: f64 = 1.01;

/// Files measured by `clip_eval.py` too (label prefixes).
const EVALUATED: [&str; 7] = [
    "131_02.bvh:",
    "131_03.bvh:",
    "scaled_131_01.bvh:",
    "scaled_131_02.bvh:",
    "scaled_131_03.bvh:",
    "121_10.acl.sjson:",
    "90_10.acl.sjson:",
];

/// What one (clip, threshold) run produced.
enum Run {
    /// Refused below the float32 floor (verified: raw float32 is over the threshold).
    Floor,
    /// The `.cfa` size and the decoded clip.
    Out(usize, Box<RawClip>),
}

/// Compresses `clip` at `t` and measures the result independently of the compressor's own check.
fn run(label: &str, clip: &RawClip, t: f32) -> Result<Run, String> {
    let settings = CompressionSettings {
        error_threshold: t,
        shell_distance: None,
        ..Default::default()
    };
    let c = match compress(clip, &settings) {
        Ok(c) => c,
        Err(e @ CompressError::BelowPrecision(_)) => {
            let floor = compress_all_raw(clip, &settings).unwrap().error.max;
            return if floor > t as f64 {
                Ok(Run::Floor)
            } else {
                Err(format!(
                    "{label} at {t}: {e}, but raw float32 reaches {floor}"
                ))
            };
        }
        Err(e) => return Err(format!("{label} at {t}: {e}")),
    };
    let reader =
        ClipReader::new(&c.bytes).map_err(|e| format!("{label} at {t}: does not read: {e}"))?;
    let decoded = clipforge_anim::decompress::to_raw_clip(&reader);
    let mid = decoded_between(&reader, 0.5);
    let between = [metric::Between {
        alpha: 0.5,
        poses: &mid,
    }];
    let e = metric::measure_with_between(clip, &decoded, &between, &clip.skeleton.shell_distances)
        .unwrap();
    if e.max > t as f64 {
        return Err(format!("{label} at {t}: max error {} cm", e.max));
    }
    Ok(Run::Out(c.bytes.len(), Box::new(decoded)))
}

#[test]
fn size_never_grows_with_the_threshold_and_errors_stay_under_it() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let clips = common::real_transform_clips(&data);
    let count = |ext: &str| clips.iter().filter(|(l, _)| l.contains(ext)).count();
    assert!(
        count(".acl.sjson:") >= 24,
        "ACL clips: {}",
        count(".acl.sjson:")
    );
    assert!(count(".bvh:") >= 42, "BVH clips: {}", count(".bvh:"));
    assert!(count(".gl") >= 5, "glTF clips: {}", count(".gl"));
    let tools = data.join("../tools");
    let eval = tools.join("clip_eval.py").is_file() && common::python_with_numpy();
    if !eval {
        eprintln!("clip_eval.py not run: needs python3 with numpy");
    }
    let dir = tempfile::tempdir().unwrap();
    let jobs: Vec<(usize, usize)> = (0..clips.len())
        .flat_map(|i| (0..THRESHOLDS.len()).map(move |k| (i, k)))
        .collect();
    let results: Vec<Result<Option<usize>, String>> = jobs
        .par_iter()
        .map(|&(i, k)| {
            let (label, clip) = (&clips[i].0, &clips[i].1);
            let t = THRESHOLDS[k];
            let (size, decoded) = match run(label, clip, t)? {
                Run::Floor => return Ok(None),
                Run::Out(size, decoded) => (size, *decoded),
            };
            if eval && EVALUATED.iter().any(|p| label.starts_with(p)) {
                let raw = dir.path().join(format!("{i}.raw.acl.sjson"));
                // Written once per clip; every thread writes the same bytes, so write to a
                // private name and rename (atomic).
                if !raw.exists() {
                    let tmp = dir.path().join(format!("{i}.{k}.tmp"));
                    std::fs::write(&tmp, write_acl_clip(clip)).unwrap();
                    std::fs::rename(&tmp, &raw).unwrap();
                }
                let lossy = dir.path().join(format!("{i}.{k}.acl.sjson"));
                std::fs::write(&lossy, write_acl_clip(&decoded)).unwrap();
                let e = common::clip_eval(&tools, &raw, &lossy, &["--between", "1"]);
                if e > t as f64 {
                    return Err(format!("{label} at {t}: clip_eval.py measures {e} cm"));
                }
            }
            Ok(Some(size))
        })
        .collect();
    let mut failures: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err().cloned())
        .collect();
    let (mut floors, mut evaluated) = (0, 0);
    for (i, (label, _)) in clips.iter().enumerate() {
        let runs = &results[i * THRESHOLDS.len()..(i + 1) * THRESHOLDS.len()];
        floors += runs.iter().filter(|r| matches!(r, Ok(None))).count();
        let sizes: Vec<Option<usize>> = runs.iter().map(|r| r.clone().ok().flatten()).collect();
        evaluated += usize::from(EVALUATED.iter().any(|p| label.starts_with(p)));
        for k in 1..THRESHOLDS.len() {
            if let (Some(tight), Some(loose)) = (sizes[k - 1], sizes[k])
                && loose as f64 > NOISE * tight as f64
            {
                failures.push(format!(
                    "{label}: {loose} B at {} cm > {tight} B at {} cm",
                    THRESHOLDS[k],
                    THRESHOLDS[k - 1]
                ));
            }
            // A floor refusal is only right below every threshold that compressed.
            if sizes[k - 1].is_some() && matches!(runs[k], Ok(None)) {
                failures.push(format!(
                    "{label}: refused at {} cm, compressed at {} cm",
                    THRESHOLDS[k],
                    THRESHOLDS[k - 1]
                ));
            }
        }
    }
    eprintln!(
        "{} clips × {} thresholds, {floors} float32-floor refusals, {} clips by clip_eval.py, {} failures",
        clips.len(),
        THRESHOLDS.len(),
        if eval { evaluated } else { 0 },
        failures.len()
    );
    assert!(
        evaluated >= EVALUATED.len(),
        "picked clips missing: {evaluated}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
