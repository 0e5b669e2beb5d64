//! Raw (uncompressed) clip: every sample of every bone, stored structure-of-arrays and track-major
//! (`bone * num_samples + sample`), which is the order the compressor walks; and the additive
//! layer a clip may carry (its format and base, and why a base does not fit), which
//! [`super::additive`] applies and measures.

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
    pub additive: Option<Box<AdditiveBase>>,
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

/// Why an additive clip cannot be made, or its base does not fit it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AdditiveError {
    #[error(
        "the base '{base}' does not have the same bones as '{clip}' (same hierarchy, same bone \
         names in the same order; only root names may differ)"
    )]
    DifferentRig { base: String, clip: String },
    #[error("the base '{base}' has no samples")]
    BaseHasNoSamples { base: String },
    #[error("additive of '{clip}': {source}")]
    Invalid { clip: String, source: ClipError },
    #[error(transparent)]
    Combined(ClipError),
    #[error("additive base has {base} bones, the clip {clip}")]
    BaseBones { base: usize, clip: usize },
    #[error("additive base has no samples")]
    BaseWithoutSamples,
}

pub use super::limits::MAX_COMPONENT_MAGNITUDE;

/// How an additive pose combines with its base (ACL's `additive_clip_format8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum AdditiveFormat {
    Relative,
    Additive0,
    Additive1,
}

impl AdditiveFormat {
    /// The name ACL's clip files use (`additive_format = "..."`).
    pub fn acl_name(self) -> &'static str {
        match self {
            Self::Relative => "relative",
            Self::Additive0 => "additive0",
            Self::Additive1 => "additive1",
        }
    }

    pub(crate) fn from_acl_name(name: &str) -> Option<Self> {
        match name {
            "relative" => Some(Self::Relative),
            "additive0" => Some(Self::Additive0),
            "additive1" => Some(Self::Additive1),
            _ => None,
        }
    }

    /// The additive value that leaves the base unchanged, as (rotation, translation, scale).
    pub(crate) fn identity(self) -> (Quat, Vec3, Vec3) {
        let s = if self == Self::Additive1 {
            Vec3::ZERO
        } else {
            Vec3::ONE
        };
        (Quat::IDENTITY, Vec3::ZERO, s)
    }

    /// The additive format `clipforge convert --additive-base` makes: additive1, the one ACL
    /// added for Unreal Engine's additive animations (rotation and translation deltas in the
    /// bone's parent space, scale as a ratio minus one).
    pub const DEFAULT: Self = Self::Additive1;
}

/// The base an additive clip is applied to: a clip of the same skeleton (bones in the same
/// order), with its own sample count and rate (ACL's `base_tracks`).
#[derive(Clone, Debug, PartialEq)]
pub struct AdditiveBase {
    pub format: AdditiveFormat,
    pub base: RawClip,
}

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
