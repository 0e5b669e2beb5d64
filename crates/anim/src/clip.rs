//! Raw (uncompressed) clip: every sample of every bone, stored structure-of-arrays and track-major
//! (`bone * num_samples + sample`), which is the order the compressor walks.

use super::skeleton::Skeleton;
use glam::{Quat, Vec3};

#[derive(Clone, Debug, PartialEq)]
pub struct RawClip {
    pub name: String,
    pub skeleton: Skeleton,
    /// Samples per second (> 0).
    pub sample_rate: f32,
    pub num_samples: usize,
    /// Local rotations, `bone * num_samples + sample`; unit length.
    pub rotations: Vec<Quat>,
    pub translations: Vec<Vec3>,
    pub scales: Vec<Vec3>,
    /// Set when the samples are an additive layer: its format and the base it is applied to
    /// (the error that matters is then measured on the combined pose, [`super::additive`]).
    pub additive: Option<Box<super::additive::AdditiveBase>>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ClipError {
    #[error("sample rate {0} is not a positive finite number")]
    BadSampleRate(f32),
    #[error("{what}: expected {expected} values, got {got}")]
    WrongLength {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("bone '{bone}' sample {sample}: {what} is not finite")]
    NonFinite {
        bone: String,
        sample: usize,
        what: &'static str,
    },
    #[error("bone '{bone}' sample {sample}: rotation has zero length")]
    ZeroRotation { bone: String, sample: usize },
}

pub use super::limits::MAX_COMPONENT_MAGNITUDE;

impl RawClip {
    /// Builds a clip, normalizing rotations and checking every value.
    pub fn new(
        name: impl Into<String>,
        skeleton: Skeleton,
        sample_rate: f32,
        num_samples: usize,
        mut rotations: Vec<Quat>,
        translations: Vec<Vec3>,
        scales: Vec<Vec3>,
    ) -> Result<Self, ClipError> {
        if !(sample_rate.is_finite() && sample_rate > 0.0) {
            return Err(ClipError::BadSampleRate(sample_rate));
        }
        let expected = skeleton.num_bones() * num_samples;
        for (what, got) in [
            ("rotations", rotations.len()),
            ("translations", translations.len()),
            ("scales", scales.len()),
        ] {
            if got != expected {
                return Err(ClipError::WrongLength {
                    what,
                    expected,
                    got,
                });
            }
        }
        for i in 0..expected {
            let (bone, sample) = (i / num_samples.max(1), i % num_samples.max(1));
            let name = || skeleton.names[bone].clone();
            let q = rotations[i];
            if !q.is_finite() {
                return Err(ClipError::NonFinite {
                    bone: name(),
                    sample,
                    what: "rotation",
                });
            }
            let len = q.length();
            if len < 1e-6 {
                return Err(ClipError::ZeroRotation {
                    bone: name(),
                    sample,
                });
            }
            rotations[i] = q / len;
            let big = |v: Vec3| !v.is_finite() || v.abs().max_element() > MAX_COMPONENT_MAGNITUDE;
            if big(translations[i]) {
                return Err(ClipError::NonFinite {
                    bone: name(),
                    sample,
                    what: "translation (or larger than 1e7)",
                });
            }
            if big(scales[i]) {
                return Err(ClipError::NonFinite {
                    bone: name(),
                    sample,
                    what: "scale (or larger than 1e7)",
                });
            }
        }
        Ok(Self {
            name: name.into(),
            skeleton,
            sample_rate,
            num_samples,
            rotations,
            translations,
            scales,
            additive: None,
        })
    }

    pub fn num_bones(&self) -> usize {
        self.skeleton.num_bones()
    }

    /// Duration in seconds: `(num_samples - 1) / sample_rate`, 0 for one sample.
    pub fn duration(&self) -> f32 {
        if self.num_samples <= 1 {
            0.0
        } else {
            (self.num_samples - 1) as f32 / self.sample_rate
        }
    }

    /// Raw size as ACL counts it: 10 float32 per bone per sample.
    pub fn raw_size_bytes(&self) -> usize {
        self.num_bones() * self.num_samples * 40
    }

    pub fn has_scale(&self) -> bool {
        self.scales
            .iter()
            .any(|s| (*s - Vec3::ONE).abs().max_element() > 1e-6)
    }

    #[inline]
    pub fn index(&self, bone: usize, sample: usize) -> usize {
        bone * self.num_samples + sample
    }

    /// The track of one bone: (rotations, translations, scales) over all samples.
    pub fn track(&self, bone: usize) -> (&[Quat], &[Vec3], &[Vec3]) {
        let r = bone * self.num_samples..(bone + 1) * self.num_samples;
        (
            &self.rotations[r.clone()],
            &self.translations[r.clone()],
            &self.scales[r],
        )
    }

    /// Copies one sample of every bone into a pose.
    pub fn sample_pose(&self, sample: usize, pose: &mut super::pose::Pose) {
        pose.resize(self.num_bones());
        for b in 0..self.num_bones() {
            let i = self.index(b, sample);
            pose.rotations[b] = self.rotations[i];
            pose.translations[b] = self.translations[i].into();
            pose.scales[b] = self.scales[i].into();
        }
    }
}
