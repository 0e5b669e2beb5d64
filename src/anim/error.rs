//! The error metric: object-space distance between raw and lossy virtual vertices placed at each
//! bone's shell distance on its local X, Y and Z axes (ACL's qvv metric, the one
//! `clip_eval.py` implements). Measured in float64 for reports; the compressor has its own
//! float32 kernel for the search but always finishes with this measurement.

use super::clip::RawClip;
use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

/// Object-space transform in float64.
#[derive(Clone, Copy, Debug)]
pub struct DTransform {
    pub rotation: DQuat,
    pub translation: DVec3,
    pub scale: DVec3,
}

/// Max, mean and where the worst error is, per bone and per sample.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorStats {
    pub max: f64,
    pub mean: f64,
    pub worst_bone: usize,
    pub worst_sample: usize,
    /// Max error of each bone over all samples.
    pub per_bone_max: Vec<f64>,
    /// Max error over all bones at each sample.
    pub per_sample_max: Vec<f64>,
}

/// Object-space transforms of every bone at every sample, `sample * bones + bone`.
pub fn object_space_f64(clip: &RawClip) -> Vec<DTransform> {
    let nb = clip.num_bones();
    let mut out = Vec::with_capacity(nb * clip.num_samples);
    for s in 0..clip.num_samples {
        let base = out.len();
        for b in 0..nb {
            let i = clip.index(b, s);
            let local = DTransform {
                rotation: clip.rotations[i].as_dquat().normalize(),
                translation: clip.translations[i].as_dvec3(),
                scale: clip.scales[i].as_dvec3(),
            };
            let t = match clip.skeleton.parent(b) {
                None => local,
                Some(p) => {
                    let pt: DTransform = out[base + p];
                    DTransform {
                        rotation: (pt.rotation * local.rotation).normalize(),
                        translation: pt.rotation * (local.translation * pt.scale) + pt.translation,
                        scale: local.scale * pt.scale,
                    }
                }
            };
            out.push(t);
        }
    }
    out
}

/// Error at one bone: the largest distance between the raw and lossy images of the three
/// virtual vertices `(d,0,0)`, `(0,d,0)`, `(0,0,d)`.
#[inline]
pub fn vertex_error(raw: &DTransform, lossy: &DTransform, shell_distance: f64) -> f64 {
    let mut worst: f64 = 0.0;
    for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
        let v = axis * shell_distance;
        let a = raw.rotation * (v * raw.scale) + raw.translation;
        let b = lossy.rotation * (v * lossy.scale) + lossy.translation;
        worst = worst.max(a.distance(b));
    }
    worst
}

/// Measures `lossy` against `raw` (same skeleton and sample count) on every sample, with the
/// raw clip's shell distances.
pub fn measure(raw: &RawClip, lossy: &RawClip) -> Result<ErrorStats, String> {
    measure_with_shells(raw, lossy, &raw.skeleton.shell_distances)
}

/// [`measure`] with explicit per-bone shell distances.
pub fn measure_with_shells(
    raw: &RawClip,
    lossy: &RawClip,
    shells: &[f32],
) -> Result<ErrorStats, String> {
    if raw.num_bones() != lossy.num_bones() {
        return Err(format!(
            "bone counts differ: {} vs {}",
            raw.num_bones(),
            lossy.num_bones()
        ));
    }
    if raw.num_samples != lossy.num_samples {
        return Err(format!(
            "sample counts differ: {} vs {}",
            raw.num_samples, lossy.num_samples
        ));
    }
    let nb = raw.num_bones();
    let ns = raw.num_samples;
    if shells.len() != nb {
        return Err(format!("{} shell distances for {nb} bones", shells.len()));
    }
    let a = object_space_f64(raw);
    let b = object_space_f64(lossy);
    let mut stats = ErrorStats {
        per_bone_max: vec![0.0; nb],
        per_sample_max: vec![0.0; ns],
        ..Default::default()
    };
    let mut sum = 0.0;
    for s in 0..ns {
        for bone in 0..nb {
            let i = s * nb + bone;
            let e = vertex_error(&a[i], &b[i], shells[bone] as f64);
            sum += e;
            if e > stats.per_bone_max[bone] {
                stats.per_bone_max[bone] = e;
            }
            if e > stats.per_sample_max[s] {
                stats.per_sample_max[s] = e;
            }
            if e > stats.max {
                stats.max = e;
                stats.worst_bone = bone;
                stats.worst_sample = s;
            }
        }
    }
    if nb * ns > 0 {
        stats.mean = sum / (nb * ns) as f64;
    }
    Ok(stats)
}
