//! [`SkinningPaletteJob`]: object-space transforms × inverse bind matrices → the matrices a
//! skinned mesh is drawn with (4×4 column-major, or 3×4 rows for a GPU's three float4s).

use super::{JobError, PoseRef, check_len};
use glam::{Mat4, Vec3, Vec4};

/// Where the palette goes.
#[derive(Debug)]
pub enum PaletteOut<'a> {
    /// Column-major 4×4 matrices.
    Mat4(&'a mut [Mat4]),
    /// The first three rows of each matrix (the last is always 0 0 0 1): 48 bytes a joint.
    Rows3x4(&'a mut [[Vec4; 3]]),
}

impl PaletteOut<'_> {
    fn len(&self) -> usize {
        match self {
            PaletteOut::Mat4(m) => m.len(),
            PaletteOut::Rows3x4(m) => m.len(),
        }
    }
}

/// `out[i] = M(object[bone(i)]) · inverse_bind[i]`, where `M(r, t, s)` maps `x` to
/// `r·(s ∘ x) + t` (the object transform as the local → object pass composes it) and
/// `bone(i)` is `joints[i]`, or `i` without a joint list (a skin's joints are often a subset
/// of the skeleton's bones, in an order of their own: glTF's `skin.joints`).
#[derive(Debug)]
pub struct SkinningPaletteJob<'a> {
    pub object: PoseRef<'a>,
    pub inverse_bind: &'a [Mat4],
    pub joints: Option<&'a [u16]>,
    pub out: PaletteOut<'a>,
}

impl SkinningPaletteJob<'_> {
    /// Checks the lengths and every joint index.
    pub fn validate(&self) -> Result<(), JobError> {
        let bones = self.object.rotations.len();
        self.object.check("palette object pose", bones)?;
        let n = self.inverse_bind.len();
        check_len("palette output", self.out.len(), n)?;
        match self.joints {
            Some(j) => {
                check_len("palette joints", j.len(), n)?;
                if let Some(at) = j.iter().position(|&b| b as usize >= bones) {
                    return Err(JobError::Index {
                        what: "palette joints",
                        at,
                        index: j[at] as usize,
                        limit: bones,
                    });
                }
            }
            None if n > bones => {
                return Err(JobError::Length {
                    what: "palette inverse_bind (no joint list: one per bone at most)",
                    expected: bones,
                    got: n,
                });
            }
            None => {}
        }
        Ok(())
    }

    /// Validates, then builds the palette.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let o = self.object;
        for (i, ib) in self.inverse_bind.iter().enumerate() {
            let b = match self.joints {
                Some(j) => j[i] as usize,
                None => i,
            };
            let m = Mat4::from_scale_rotation_translation(
                Vec3::from(o.scales[b]),
                o.rotations[b],
                Vec3::from(o.translations[b]),
            ) * *ib;
            match &mut self.out {
                PaletteOut::Mat4(out) => out[i] = m,
                PaletteOut::Rows3x4(out) => {
                    let t = m.transpose();
                    out[i] = [t.x_axis, t.y_axis, t.z_axis];
                }
            }
        }
        Ok(())
    }
}
