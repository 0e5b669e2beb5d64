//! Runtime side: the validated view over a compressed buffer, pose and single-bone sampling,
//! and conversion back to a raw clip.
//!
//! PLACEHOLDER format until the real codec lands.

use super::clip::RawClip;
use super::pose::Pose;
use super::skeleton::{BoneDesc, Skeleton};
use glam::{Quat, Vec3, Vec3A};
use std::fmt;

/// How time outside `[0, duration]` is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Looping {
    #[default]
    Clamp,
    Wrap,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FormatError {
    Truncated { needed: usize, len: usize },
    BadMagic,
    Corrupt(String),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Truncated { needed, len } => {
                write!(f, "buffer truncated: need {needed} bytes, have {len}")
            }
            FormatError::BadMagic => write!(f, "not a ClipForge .cfa buffer (bad magic)"),
            FormatError::Corrupt(s) => write!(f, "corrupt buffer: {s}"),
        }
    }
}

impl std::error::Error for FormatError {}

pub(crate) fn placeholder_encode(clip: &RawClip) -> Vec<u8> {
    let mut out = b"CFAP".to_vec();
    out.extend((clip.num_bones() as u32).to_le_bytes());
    out.extend((clip.num_samples as u32).to_le_bytes());
    out.extend(clip.sample_rate.to_le_bytes());
    for b in 0..clip.num_bones() {
        let name = clip.skeleton.names[b].as_bytes();
        out.extend((name.len() as u32).to_le_bytes());
        out.extend(name);
        out.extend(clip.skeleton.parents[b].to_le_bytes());
        out.extend(clip.skeleton.shell_distances[b].to_le_bytes());
    }
    for i in 0..clip.rotations.len() {
        for v in clip.rotations[i].to_array() {
            out.extend(v.to_le_bytes());
        }
        for v in clip.translations[i].to_array() {
            out.extend(v.to_le_bytes());
        }
        for v in clip.scales[i].to_array() {
            out.extend(v.to_le_bytes());
        }
    }
    out
}

/// A validated read-only view over a compressed clip.
pub struct ClipReader<'a> {
    #[allow(dead_code)]
    bytes: &'a [u8],
    clip: RawClip,
}

impl<'a> ClipReader<'a> {
    pub fn new(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let mut pos = 0usize;
        let mut take = |n: usize| -> Result<&'a [u8], FormatError> {
            if pos + n > bytes.len() {
                return Err(FormatError::Truncated {
                    needed: pos + n,
                    len: bytes.len(),
                });
            }
            let s = &bytes[pos..pos + n];
            pos += n;
            Ok(s)
        };
        if take(4)? != b"CFAP" {
            return Err(FormatError::BadMagic);
        }
        let u32_at = |s: &[u8]| u32::from_le_bytes(s.try_into().unwrap());
        let nb = u32_at(take(4)?) as usize;
        let ns = u32_at(take(4)?) as usize;
        let rate = f32::from_le_bytes(take(4)?.try_into().unwrap());
        let mut bones = Vec::new();
        for _ in 0..nb {
            let len = u32_at(take(4)?) as usize;
            let name = String::from_utf8_lossy(take(len)?).into_owned();
            let parent = u32_at(take(4)?);
            let shell = f32::from_le_bytes(take(4)?.try_into().unwrap());
            let mut d = BoneDesc::new(name, (parent != u32::MAX).then_some(parent as usize));
            d.shell_distance = shell;
            bones.push(d);
        }
        let skel =
            Skeleton::from_ordered(bones).map_err(|e| FormatError::Corrupt(e.to_string()))?;
        let mut f =
            || -> Result<f32, FormatError> { Ok(f32::from_le_bytes(take(4)?.try_into().unwrap())) };
        let (mut r, mut t, mut s) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..nb * ns {
            r.push(Quat::from_xyzw(f()?, f()?, f()?, f()?));
            t.push(Vec3::new(f()?, f()?, f()?));
            s.push(Vec3::new(f()?, f()?, f()?));
        }
        let clip = RawClip::new("", skel, rate, ns, r, t, s)
            .map_err(|e| FormatError::Corrupt(e.to_string()))?;
        Ok(Self { bytes, clip })
    }

    pub fn num_bones(&self) -> usize {
        self.clip.num_bones()
    }
    pub fn num_samples(&self) -> usize {
        self.clip.num_samples
    }
    pub fn sample_rate(&self) -> f32 {
        self.clip.sample_rate
    }
    pub fn duration(&self) -> f32 {
        self.clip.duration()
    }

    /// Samples every bone's local transform at time `t` seconds.
    pub fn sample_pose(&self, t: f32, _looping: Looping, pose: &mut Pose) {
        let s = ((t * self.clip.sample_rate).round().max(0.0) as usize)
            .min(self.clip.num_samples.saturating_sub(1));
        self.clip.sample_pose(s, pose);
    }

    /// Samples one bone's local transform at time `t` seconds.
    pub fn sample_bone(&self, bone: usize, t: f32, looping: Looping) -> (Quat, Vec3A, Vec3A) {
        let mut p = Pose::new(self.num_bones());
        self.sample_pose(t, looping, &mut p);
        (p.rotations[bone], p.translations[bone], p.scales[bone])
    }

    /// Every stored sample back as a raw clip (names, hierarchy and bind pose from the metadata).
    pub fn to_raw_clip(&self) -> RawClip {
        self.clip.clone()
    }
}
