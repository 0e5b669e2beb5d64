//! The clip detail's data: reads a clip with the importers and its compressed `.cfa` with the
//! runtime reader, samples both at the raw clip's sample times and measures them with
//! `anim::metric` (the reports' metric), on a background thread ([`start_clip_detail`]). The
//! app's detail view only shows the result.

use crate::CancelToken;
use crate::report::ClipReport;
use crate::scalar::{ScalarError, read_scalar_list, scalar_reader};
use clipforge_anim::limits::max_memory_bytes;
use clipforge_anim::metric::{object_space_f64, vertex_error};
use clipforge_anim::scalar::measure_scalar_error;
use clipforge_anim::{BoneOverride, ClipReader, Looping, Pose, RawClip, formats};
use glam::{Quat, Vec3};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};

/// One clip: its file and its name inside the file (a glTF/FBX file may hold several).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClipKey {
    pub path: PathBuf,
    pub clip: String,
}

/// What the app's clip detail shows of one clip, measured once per clip and report.
pub struct ClipDetail {
    pub key: ClipKey,
    pub names: Vec<String>,
    pub parents: Vec<u32>,
    pub sample_rate: f32,
    pub num_samples: usize,
    /// Object-space joint positions, `sample * bones + bone`.
    pub raw_pos: Vec<Vec3>,
    /// Decompressed joint positions, same layout (None before compression).
    pub lossy_pos: Option<Vec<Vec3>>,
    /// Max error over bones per sample, and per bone over samples (cm).
    pub per_sample_err: Vec<f64>,
    pub per_bone_err: Vec<f64>,
    /// Each bone's own threshold (cm) when the clip was compressed with per-bone thresholds
    /// (the report's `per_bone_threshold_cm`); empty: every bone had the one threshold.
    pub per_bone_limit: Vec<f64>,
    /// Sample where each bone's error peaks.
    pub per_bone_worst_sample: Vec<usize>,
    pub worst_bone: Option<usize>,
    /// Largest distance of a joint (raw or decompressed) from its raw pose's centre, over every
    /// sample, strays aside (a root left at the origin): the body's size, which a view
    /// following the character frames.
    pub extent: f32,
    /// Box around every joint of every sample, raw and decompressed (the viewer frames it,
    /// so the whole clip stays in view: feet, a walk, a rising scale).
    pub bounds_min: Vec3,
    pub bounds_max: Vec3,
    /// Largest distance between a raw joint and its decompressed one (clip units).
    pub max_offset: f32,
    /// Error magnification that makes `max_offset` a visible part of the clip's size.
    pub suggested_magnify: f32,
    /// Why the compressed clip could not be read (the raw one is still shown).
    pub note: Option<String>,
    /// The clip's skinned mesh, measured (`None`: the file has none for it; `Err`: why it
    /// cannot be shown; shared, as the app keeps the detail and the mesh view the error).
    pub mesh: Option<Result<Arc<crate::mesh::MeshDetail>, Arc<crate::mesh::MeshViewError>>>,
}

/// Why a clip's detail could not be loaded.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DetailError {
    #[error(transparent)]
    Import(#[from] formats::ImportError),
    #[error("clip '{clip}' not found in {}", .path.display())]
    ClipNotFound { clip: String, path: PathBuf },
    #[error("reading the clip stopped unexpectedly")]
    Stopped,
}

/// Reads the raw clip and (if compressed) the `.cfa`, and measures both.
pub(crate) fn load_clip_detail(
    key: &ClipKey,
    report: Option<&ClipReport>,
) -> Result<ClipDetail, DetailError> {
    let clips = formats::load_clips(&key.path)?;
    let raw = clips
        .iter()
        .position(|c| c.name == key.clip)
        .or((clips.len() == 1).then_some(0))
        .map(|i| clips[i].clone())
        .ok_or_else(|| DetailError::ClipNotFound {
            clip: key.clip.clone(),
            path: key.path.clone(),
        })?;
    let mut note = None;
    let lossy = match report
        .and_then(|r| r.output.as_ref())
        .filter(|_| report.is_some_and(|r| r.error.is_none()))
    {
        None => None,
        Some(out) => match clipforge_base::fsio::read_regular(Path::new(out), max_memory_bytes()) {
            Err(e) => {
                note = Some(format!("cannot read {out}: {e}"));
                None
            }
            Ok(bytes) => match ClipReader::new(&bytes) {
                Err(e) => {
                    note = Some(format!("cannot read {out}: {e}"));
                    None
                }
                Ok(reader) => resample(&raw, &reader),
            },
        },
    };
    let mut detail = measure_detail(key.clone(), &raw, lossy.as_ref(), report, note);
    // Meshes come from glTF (imported in cm, whatever `units` says): 1 cm per clip unit.
    detail.mesh = crate::mesh::detail_for(&key.path, &raw, lossy.as_ref(), 1.0)
        .map(|m| m.map(Arc::new).map_err(Arc::new));
    Ok(detail)
}

/// The decompressed clip sampled at the raw clip's sample times (so the two line up even when
/// the codec dropped a looping clip's last sample).
pub fn resample(raw: &RawClip, reader: &ClipReader<'_>) -> Option<RawClip> {
    if reader.num_bones() != raw.num_bones() {
        return None;
    }
    let (nb, ns) = (raw.num_bones(), raw.num_samples);
    let mut r = vec![Quat::IDENTITY; nb * ns];
    let mut t = vec![Vec3::ZERO; nb * ns];
    let mut s = vec![Vec3::ONE; nb * ns];
    let mut pose = Pose::new(nb);
    for si in 0..ns {
        let time = si as f32 / raw.sample_rate;
        reader.sample_pose(
            time.min(reader.duration().max(0.0)),
            Looping::Clamp,
            &mut pose,
        );
        for b in 0..nb {
            let i = raw.index(b, si);
            r[i] = pose.rotations[b];
            t[i] = pose.translations[b].into();
            s[i] = pose.scales[b].into();
        }
    }
    RawClip::new(
        raw.name.clone(),
        raw.skeleton.clone(),
        raw.sample_rate,
        ns,
        r,
        t,
        s,
    )
    .ok()
}

fn measure_detail(
    key: ClipKey,
    raw: &RawClip,
    lossy: Option<&RawClip>,
    report: Option<&ClipReport>,
    note: Option<String>,
) -> ClipDetail {
    let (nb, ns) = (raw.num_bones(), raw.num_samples);
    let a = object_space_f64(raw);
    let raw_pos: Vec<Vec3> = a.iter().map(|t| t.translation.as_vec3()).collect();
    let mut per_sample = vec![0.0; ns];
    let mut per_bone = vec![0.0; nb];
    let mut per_bone_worst_sample = vec![0usize; nb];
    let lossy_pos = lossy.map(|l| {
        let b = object_space_f64(l);
        for (s, worst_at_s) in per_sample.iter_mut().enumerate() {
            for bone in 0..nb {
                let i = s * nb + bone;
                let e = vertex_error(&a[i], &b[i], raw.skeleton.shell_distances[bone] as f64);
                if e > *worst_at_s {
                    *worst_at_s = e;
                }
                if e > per_bone[bone] {
                    per_bone[bone] = e;
                    per_bone_worst_sample[bone] = s;
                }
            }
        }
        b.iter()
            .map(|t| t.translation.as_vec3())
            .collect::<Vec<_>>()
    });
    // The report's curves are authoritative when present (same metric, made by the pipeline).
    if let Some(r) = report {
        if r.per_sample_max_error_cm.len() == ns {
            per_sample = r.per_sample_max_error_cm.clone();
        }
        if r.per_bone_max_error_cm.len() == nb {
            per_bone = r.per_bone_max_error_cm.clone();
        }
    }
    let per_bone_limit: Vec<f64> = report
        .filter(|r| r.per_bone_threshold_cm.len() == nb)
        .map(|r| r.per_bone_threshold_cm.iter().map(|&t| t as f64).collect())
        .unwrap_or_default();
    let worst_bone = (lossy_pos.is_some()
        || report.is_some_and(|r| !r.per_bone_max_error_cm.is_empty()))
    .then(|| (0..nb).max_by(|&x, &y| per_bone[x].total_cmp(&per_bone[y])))
    .flatten();
    // The body's own size: per sample, the farthest joint from the pose's centre (raw and
    // decompressed) that is not a stray: a root left at the origin while the character walks
    // away (BVH and FBX exports do this) is farther than 2.5× the 90th-percentile distance and
    // must not shrink the followed body to a dot.
    let mut extent: f32 = 1e-3;
    let mut dist = Vec::with_capacity(2 * nb);
    for s in 0..ns {
        let c = pose_center(&raw_pos[s * nb..(s + 1) * nb]);
        dist.clear();
        for pos in std::iter::once(&raw_pos).chain(lossy_pos.as_ref()) {
            dist.extend(
                pos[s * nb..(s + 1) * nb]
                    .iter()
                    .filter(|p| p.is_finite())
                    .map(|p| (*p - c).length()),
            );
        }
        dist.sort_by(f32::total_cmp);
        let Some(&p90) = dist.get((dist.len() * 9 / 10).min(dist.len().saturating_sub(1))) else {
            continue;
        };
        if let Some(&far) = dist.iter().rev().find(|&&d| d <= 2.5 * p90.max(1e-3)) {
            extent = extent.max(far);
        }
    }
    let (bounds_min, bounds_max) = joint_bounds(
        raw_pos
            .iter()
            .chain(lossy_pos.iter().flat_map(|l| l.iter())),
    );
    let max_offset = lossy_pos.as_ref().map_or(0.0, |l| {
        l.iter()
            .zip(&raw_pos)
            .map(|(q, p)| (*q - *p).length())
            .filter(|d| d.is_finite())
            .fold(0.0, f32::max)
    });
    let suggested_magnify = suggest_magnify(max_offset, (bounds_max - bounds_min).length() / 2.0);
    ClipDetail {
        key,
        names: raw.skeleton.names.clone(),
        parents: raw.skeleton.parents.clone(),
        sample_rate: raw.sample_rate,
        num_samples: ns,
        raw_pos,
        lossy_pos,
        per_sample_err: per_sample,
        per_bone_err: per_bone,
        per_bone_limit,
        per_bone_worst_sample,
        worst_bone,
        extent,
        bounds_min,
        bounds_max,
        max_offset,
        suggested_magnify,
        note,
        mesh: None,
    }
}

/// Box around the finite points (a unit box at the origin when there are none).
pub(crate) fn joint_bounds<'a>(points: impl Iterator<Item = &'a Vec3>) -> (Vec3, Vec3) {
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for p in points.filter(|p| p.is_finite()) {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    if lo.x > hi.x {
        (Vec3::splat(-0.5), Vec3::splat(0.5))
    } else {
        (lo, hi)
    }
}

/// Fraction of the clip's radius the largest magnified error should span on screen.
const MAGNIFIED_ERROR_SHARE: f32 = 0.06;

/// Error magnification for a clip whose largest joint offset is `max_offset` and whose framing
/// radius is `radius`: the offset becomes ~6% of the radius (several pixels in any usable
/// viewer), rounded up to 1, 2 or 5 × a power of ten, within 1…10000.
pub(crate) fn suggest_magnify(max_offset: f32, radius: f32) -> f32 {
    if !(max_offset > 0.0 && radius > 0.0) {
        return 1.0;
    }
    let raw = (MAGNIFIED_ERROR_SHARE * radius / max_offset).clamp(1.0, 10000.0);
    let p = 10f32.powf(raw.log10().floor());
    let nice = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&v| v >= raw * 0.999)
        .unwrap_or(10.0 * p);
    nice.clamp(1.0, 10000.0)
}

impl ClipDetail {
    /// Time of a sample as both the slider and the viewer's readout show it (one rounding).
    pub fn time_label(&self, sample: usize) -> String {
        format!("{:.2} s", sample as f64 / self.sample_rate.max(1e-6) as f64)
    }

    /// True when the clip covers much more ground than the body's size (a walk, a run): the
    /// whole-clip framing would show a small figure, so the viewer follows it by default.
    pub fn travels(&self) -> bool {
        self.framing().1 > 2.0 * self.extent
    }

    /// Centre and radius of the sphere around the raw pose at `sample`, which contains every
    /// joint of it (raw and decompressed) from any angle: the framing that follows the body.
    pub fn follow_framing(&self, sample: usize) -> (Vec3, f32) {
        let nb = self.names.len();
        let pose = self
            .raw_pos
            .get(sample * nb..(sample + 1) * nb)
            .unwrap_or(&[]);
        (pose_center(pose), self.extent.max(1e-3))
    }

    /// Centre and radius of the sphere around `bounds`, which the camera frames from any angle.
    pub fn framing(&self) -> (Vec3, f32) {
        let c = (self.bounds_min + self.bounds_max) / 2.0;
        let r = ((self.bounds_max - self.bounds_min).length() / 2.0).max(1e-3);
        (c, r)
    }
}

/// Centre of a pose: the per-axis median of its joints (robust to a root left far away).
pub(crate) fn pose_center(pose: &[Vec3]) -> Vec3 {
    if pose.is_empty() {
        return Vec3::ZERO;
    }
    let med = |f: fn(&Vec3) -> f32| {
        let mut v: Vec<f32> = pose.iter().map(f).collect();
        v.sort_by(f32::total_cmp);
        v[v.len() / 2]
    };
    Vec3::new(med(|p| p.x), med(|p| p.y), med(|p| p.z))
}

/// What a detail job hands back: the measured clip (or why it could not be read) and the
/// per-bone settings the app saved for its folder before (the detail's bone table starts from them).
pub struct DetailOutcome {
    pub key: ClipKey,
    pub result: Result<ClipDetail, DetailError>,
    /// A scalar track list's own detail (its tracks against their precisions).
    pub scalar: Option<Result<ScalarDetail, ScalarError>>,
    /// The `clipforge.toml` of the clip's folder, where the bone table is saved.
    pub settings_file: PathBuf,
    pub saved_bones: Vec<BoneOverride>,
    /// The per-bone settings saved for this clip only (its `[[clip.bone]]` tables there).
    pub saved_clip_bones: Vec<BoneOverride>,
}

/// Loading and measuring one clip on a thread. Dropping it cancels it (its result is thrown away).
pub struct ClipDetailJob {
    pub key: ClipKey,
    cancel: CancelToken,
    rx: Receiver<DetailOutcome>,
}

impl Drop for ClipDetailJob {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl ClipDetailJob {
    /// The outcome once the thread is done; `Some(Err)` when it stopped unexpectedly.
    pub fn try_take(&self) -> Option<DetailOutcome> {
        match self.rx.try_recv() {
            Ok(o) => Some(o),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(DetailOutcome {
                key: self.key.clone(),
                result: Err(DetailError::Stopped),
                scalar: None,
                settings_file: settings_file_of(&self.key),
                saved_bones: Vec::new(),
                saved_clip_bones: Vec::new(),
            }),
        }
    }
}

/// The folder settings file the app saves `key`'s per-bone table into: the one that applies to
/// it under the input root `root` (`folder_settings::applying_file`), else the one next to it.
pub(crate) fn settings_file_for(key: &ClipKey, root: Option<&Path>) -> PathBuf {
    root.and_then(|r| crate::folder_settings::applying_file(r, &key.path).ok())
        .unwrap_or_else(|| settings_file_of(key))
}

/// The folder settings file next to a clip.
pub(crate) fn settings_file_of(key: &ClipKey) -> PathBuf {
    key.path
        .parent()
        .unwrap_or(Path::new("."))
        .join(crate::folder_settings::FILE_NAME)
}

/// The per-bone settings the app saved into `file` (none when it is missing or unreadable).
pub(crate) fn saved_app_bones(file: &Path) -> Vec<BoneOverride> {
    clipforge_base::fsio::read_regular(file, 1 << 20)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .map(|t| crate::folder_settings::app_bones(file, &t))
        .unwrap_or_default()
}

/// Loads and measures `key`'s clip (against `report`'s output when it compressed) on a thread;
/// `done` is called when the result is ready (the app asks for a repaint). `root`: the input
/// root the clip was scanned from (which folder settings file applies to it).
pub fn start_clip_detail(
    key: ClipKey,
    report: Option<Arc<ClipReport>>,
    root: Option<PathBuf>,
    done: impl Fn() + Send + 'static,
) -> ClipDetailJob {
    let (tx, rx) = mpsc::channel();
    let cancel = CancelToken::default();
    {
        let (key, cancel) = (key.clone(), cancel.clone());
        std::thread::Builder::new()
            .name("clipforge-detail".into())
            .spawn(move || {
                crate::lower_thread_priority();
                let result = load_clip_detail(&key, report.as_deref());
                let scalar = is_scalar(report.as_deref(), result.as_ref().err()).then(|| {
                    let good = report.as_deref().filter(|r| r.error.is_none());
                    load_scalar_detail(&key.path, good)
                });
                let settings_file = settings_file_for(&key, root.as_deref());
                let saved_bones = saved_app_bones(&settings_file);
                let saved_clip_bones =
                    crate::folder_settings::app_clip_bones(&settings_file, &key.path);
                if !cancel.is_cancelled() {
                    let _ = tx.send(DetailOutcome {
                        key,
                        result,
                        scalar,
                        settings_file,
                        saved_bones,
                        saved_clip_bones,
                    });
                    done();
                }
            })
            .expect("spawn the detail thread");
    }
    ClipDetailJob { key, cancel, rx }
}

/// Whether a clip is a scalar track list: its report says so, or the clip loader refused it as one.
pub fn is_scalar(report: Option<&ClipReport>, load_error: Option<&DetailError>) -> bool {
    report.is_some_and(|r| r.is_scalar_list())
        || matches!(
            load_error,
            Some(DetailError::Import(e)) if e.kind == formats::ImportErrorKind::ScalarTrackList
        )
}

/// What the app's detail shows of a scalar track list (raw against its `.cfs`).
pub struct ScalarDetail {
    pub names: Vec<String>,
    pub precisions: Vec<f64>,
    /// Per output track: largest error at and between samples (None before compression).
    pub max_error: Option<Vec<f64>>,
    /// Per output track, per sample: error / precision.
    pub relative_over_time: Vec<Vec<f64>>,
    /// Index = bits per sample of a component (0 = zero or constant, 32 = raw).
    pub bit_histogram: Vec<u32>,
    pub summary: String,
}

/// Reads a scalar track list and (when compressed) its `.cfs`, and measures each track.
pub fn load_scalar_detail(
    path: &Path,
    report: Option<&ClipReport>,
) -> Result<ScalarDetail, ScalarError> {
    let raw = read_scalar_list(path)?;
    let order = raw.output_order();
    let w = raw.width();
    let mut data = ScalarDetail {
        names: order.iter().map(|&i| raw.tracks[i].name.clone()).collect(),
        precisions: order
            .iter()
            .map(|&i| raw.tracks[i].precision as f64)
            .collect(),
        max_error: None,
        relative_over_time: Vec::new(),
        bit_histogram: Vec::new(),
        summary: format!(
            "{} {} tracks ({} stripped) × {} samples at {} Hz",
            order.len(),
            raw.track_type.acl_name(),
            raw.tracks.len() - order.len(),
            raw.num_samples,
            raw.sample_rate
        ),
    };
    let Some(out) = report.and_then(|r| r.output.as_ref()) else {
        return Ok(data);
    };
    let out = Path::new(out);
    let bytes = crate::read_input(out).map_err(ScalarError::Read)?;
    let reader = scalar_reader(out, &bytes)?;
    let stats = measure_scalar_error(&raw, &reader).map_err(|problem| ScalarError::Measure {
        cfs: out.to_path_buf(),
        raw: None,
        problem,
    })?;
    let mut v = [0f32; 4];
    data.relative_over_time = order
        .iter()
        .enumerate()
        .map(|(k, &ti)| {
            let p = (raw.tracks[ti].precision as f64).max(f64::MIN_POSITIVE);
            (0..raw.num_samples)
                .map(|s| {
                    reader.decode_sample(k, s, &mut v);
                    (0..w)
                        .map(|c| (v[c] as f64 - raw.value(ti, s, c) as f64).abs())
                        .fold(0.0, f64::max)
                        / p
                })
                .collect()
        })
        .collect();
    let mut hist = vec![0u32; 33];
    for k in 0..reader.num_tracks() {
        for c in 0..w {
            hist[reader.component_bits(k, c) as usize] += 1;
        }
    }
    data.bit_histogram = hist;
    data.summary.push_str(&format!(
        " · {} B · max error {:.3e} · {}",
        reader.total_size(),
        stats.max,
        if stats.all_within_precision {
            "every track within its precision"
        } else {
            "some tracks over their precision"
        }
    ));
    data.max_error = Some(stats.per_track_max);
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggested_magnify_makes_the_error_a_visible_share_of_the_clip() {
        // 0.001 units of error on a 1-unit clip: ×60 would do, rounded up to ×100.
        assert_eq!(suggest_magnify(0.001, 1.0), 100.0);
        for (off, r) in [(0.0003, 90.0), (0.02, 1.5), (1e-9, 1.0), (2.0, 1.0)] {
            let m = suggest_magnify(off, r);
            assert!((1.0..=10000.0).contains(&m), "{m}");
            assert!(
                m == 10000.0 || m == 1.0 || off * m >= MAGNIFIED_ERROR_SHARE * r * 0.999,
                "{off} × {m} on radius {r}"
            );
        }
        assert_eq!(suggest_magnify(0.0, 1.0), 1.0);
    }

    use crate::{BatchOptions, CancelToken as Cancel, Progress, run_batch, scan};
    use clipforge_anim::formats::write_acl_clip;
    use clipforge_anim::generate::{GenerateOptions, generate};

    /// Compresses every clip of `dir` into `out`; the reports.
    fn compress_folder(dir: &Path, out: &Path) -> Vec<ClipReport> {
        let options = BatchOptions {
            settings: Default::default(),
            output_root: out.to_path_buf(),
            jobs: 1,
            use_skip_cache: false,
        };
        run_batch(
            &scan(dir),
            &options,
            &Progress::default(),
            &Cancel::default(),
        )
        .clips
    }

    #[test]
    fn a_compressed_clip_is_measured_against_its_output_and_a_raw_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let clip = generate(&GenerateOptions {
            name: "walk".into(),
            num_samples: 40,
            seed: 5,
            ..Default::default()
        });
        let file = dir.path().join("walk.acl.sjson");
        std::fs::write(&file, write_acl_clip(&clip)).unwrap();
        let reports = compress_folder(dir.path(), out.path());
        let report = reports.first().expect("one report");
        assert!(report.error.is_none(), "{:?}", report.error);
        let key = ClipKey {
            path: PathBuf::from(&report.input),
            clip: report.clip.clone(),
        };
        let (nb, ns) = (clip.num_bones(), clip.num_samples);

        let raw_only = load_clip_detail(&key, None).unwrap();
        assert_eq!(raw_only.raw_pos.len(), nb * ns);
        assert!(raw_only.lossy_pos.is_none() && raw_only.worst_bone.is_none());
        assert_eq!(raw_only.max_offset, 0.0);

        let d = load_clip_detail(&key, Some(report)).unwrap();
        let lossy = d.lossy_pos.as_ref().expect("the .cfa was read");
        assert_eq!(lossy.len(), nb * ns);
        assert!(d.note.is_none(), "{:?}", d.note);
        assert!(d.max_offset > 0.0 && d.max_offset.is_finite());
        assert!(d.suggested_magnify >= 1.0);
        assert_eq!(d.per_sample_err.len(), ns);
        let worst = d.worst_bone.expect("a worst bone");
        let peak = d.per_bone_err.iter().cloned().fold(0.0, f64::max);
        assert_eq!(d.per_bone_err[worst], peak);
        assert!((peak - report.max_error_cm).abs() <= 1e-9 + report.max_error_cm * 1e-6);

        // An output that went missing: the raw clip is still shown, with a note naming the file.
        let output = report.output.clone().unwrap();
        std::fs::remove_file(&output).unwrap();
        let d = load_clip_detail(&key, Some(report)).unwrap();
        assert!(d.lossy_pos.is_none());
        assert!(
            d.note.as_deref().is_some_and(|n| n.contains(&output)),
            "{:?}",
            d.note
        );
    }

    #[test]
    fn the_job_hands_back_the_clip_and_the_saved_bone_settings() {
        let dir = tempfile::tempdir().unwrap();
        let clip = generate(&GenerateOptions {
            name: "jog".into(),
            num_samples: 12,
            seed: 2,
            ..Default::default()
        });
        let file = dir.path().join("jog.acl.sjson");
        std::fs::write(&file, write_acl_clip(&clip)).unwrap();
        let bone = clip.skeleton.names[1].clone();
        crate::folder_settings::save_app_bones(
            &dir.path().join(crate::folder_settings::FILE_NAME),
            &[BoneOverride {
                pattern: bone.clone(),
                error_threshold: Some(0.005),
                shell_distance: None,
            }],
        )
        .unwrap();
        let key = ClipKey {
            path: file.clone(),
            clip: "jog".into(),
        };
        let (tx, rx) = mpsc::channel();
        let job = start_clip_detail(
            key.clone(),
            None,
            Some(dir.path().to_path_buf()),
            move || {
                let _ = tx.send(());
            },
        );
        rx.recv_timeout(std::time::Duration::from_secs(30))
            .expect("the job finished");
        let o = job.try_take().expect("an outcome");
        assert_eq!(o.key, key);
        assert!(o.scalar.is_none());
        assert_eq!(o.result.unwrap().names, clip.skeleton.names);
        assert_eq!(
            o.settings_file,
            dir.path().join(crate::folder_settings::FILE_NAME)
        );
        assert_eq!(o.saved_bones.len(), 1);
        assert_eq!(o.saved_bones[0].pattern, bone);
        assert_eq!(o.saved_bones[0].error_threshold, Some(0.005));

        // A one-clip file: its only clip, whatever name the row has (as the batch does).
        let renamed = ClipKey {
            path: file,
            clip: "renamed".into(),
        };
        let d = load_clip_detail(&renamed, None).unwrap();
        assert_eq!(d.names, clip.skeleton.names);
    }

    #[test]
    fn a_scalar_list_is_recognised_and_measured_track_by_track() {
        let dir = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let n = 30;
        let mut text = format!(
            "version = 4\ntrack_list =\n{{\n\tname = \"curves\"\n\tnum_samples = {n}\n\tsample_rate = 30\n}}\ntracks =\n[\n"
        );
        for t in 0..2 {
            text.push_str(&format!(
                "\t{{\n\t\tname = \"t{t}\"\n\t\ttype = \"float2f\"\n\t\tprecision = 0.001\n\t\tdata =\n\t\t[\n"
            ));
            for i in 0..n {
                let x = i as f64 * 0.3 + t as f64;
                text.push_str(&format!("\t\t\t[ {}, {} ]\n", x.sin(), x * 0.5));
            }
            text.push_str("\t\t]\n\t}\n");
        }
        text.push_str("]\n");
        let file = dir.path().join("curves.acl.sjson");
        std::fs::write(&file, text).unwrap();
        let reports = compress_folder(dir.path(), out.path());
        let report = reports.first().expect("one report");
        assert!(report.error.is_none(), "{:?}", report.error);
        let key = ClipKey {
            path: file.clone(),
            clip: report.clip.clone(),
        };
        let err = load_clip_detail(&key, Some(report)).err();
        assert!(is_scalar(Some(report), err.as_ref()));
        assert!(
            is_scalar(None, err.as_ref()),
            "the loader's refusal says so: {err:?}"
        );

        let raw = load_scalar_detail(&file, None).unwrap();
        assert_eq!(raw.names, ["t0", "t1"]);
        assert!(raw.max_error.is_none());
        let d = load_scalar_detail(&file, Some(report)).unwrap();
        let max = d.max_error.as_ref().expect("measured");
        assert_eq!(max.len(), 2);
        assert!(max.iter().all(|&e| e <= 0.001 * 1.0001), "{max:?}");
        assert_eq!(d.relative_over_time.len(), 2);
        assert!(d.relative_over_time.iter().all(|v| v.len() == n));
        assert_eq!(
            d.bit_histogram.iter().sum::<u32>(),
            4,
            "2 tracks × 2 components"
        );
    }
}
