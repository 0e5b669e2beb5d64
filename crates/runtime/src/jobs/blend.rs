//! [`BlendJob`]: weighted layers of local poses (optionally weighted per bone), then additive
//! layers on top; the rest pose fills in where the weights sum to (almost) zero.

use super::{JobError, check_len};
use crate::pose::Pose;
use glam::{Quat, Vec3A, Vec4};

/// A borrowed structure-of-arrays pose: one rotation, translation and scale per bone.
#[derive(Clone, Copy, Debug)]
pub struct PoseRef<'a> {
    pub rotations: &'a [Quat],
    pub translations: &'a [Vec3A],
    pub scales: &'a [Vec3A],
}

impl<'a> From<&'a Pose> for PoseRef<'a> {
    fn from(p: &'a Pose) -> Self {
        PoseRef {
            rotations: &p.rotations,
            translations: &p.translations,
            scales: &p.scales,
        }
    }
}

impl PoseRef<'_> {
    /// Every slice has `bones` elements.
    pub(crate) fn check(&self, what: &'static str, bones: usize) -> Result<(), JobError> {
        check_len(what, self.rotations.len(), bones)?;
        check_len(what, self.translations.len(), bones)?;
        check_len(what, self.scales.len(), bones)
    }
}

/// One layer: a local pose, its weight, and optionally a weight per bone (multiplied with it).
#[derive(Clone, Copy, Debug)]
pub struct BlendLayer<'a> {
    pub pose: PoseRef<'a>,
    /// Layer weight; zero and negative weights leave the layer out.
    pub weight: f32,
    /// Per-bone weights (one per bone), or `None` for 1 everywhere.
    pub bone_weights: Option<&'a [f32]>,
}

impl BlendLayer<'_> {
    #[inline(always)]
    fn weight_at(&self, b: usize) -> f32 {
        match self.bone_weights {
            Some(w) => self.weight * w[b],
            None => self.weight,
        }
    }
}

/// Running weighted sums of one bone.
#[derive(Default)]
struct Acc {
    q: Vec4,
    t: Vec3A,
    s: Vec3A,
    w: f32,
}

impl Acc {
    #[inline(always)]
    fn add(&mut self, p: &PoseRef, b: usize, w: f32) {
        let lq = Vec4::from(p.rotations[b]);
        // Sign fix against the sum so far: q and −q are one rotation.
        let lq = if self.q.dot(lq) < 0.0 { -lq } else { lq };
        self.q += lq * w;
        self.t += p.translations[b] * w;
        self.s += p.scales[b] * w;
        self.w += w;
    }
}

/// Blends `layers` into the output pose, bone by bone:
/// * translation and scale: the weighted mean; rotation: the weighted sum of the layers'
///   quaternions, each sign-fixed against the sum so far (shorter arc), normalised;
/// * where the weights sum to less than `threshold`, the rest pose is added with weight
///   `threshold − sum` (so zero weights give the rest pose exactly, and small ones fade into it);
/// * then each additive layer with weight `w > 0`, ACL's additive0 scaled by `w` (the format
///   [`crate::ClipReader::additive_format`] calls 2): rotation `r · nlerp(identity, add, w)`,
///   translation `t + w·add`, scale `s ∘ lerp(1, add, w)`.
///
/// Outputs may not alias inputs (the borrow checker sees to it).
#[derive(Debug)]
pub struct BlendJob<'a> {
    pub layers: &'a [BlendLayer<'a>],
    pub additive: &'a [BlendLayer<'a>],
    pub rest: PoseRef<'a>,
    /// Sum of weights below which the rest pose is blended in; finite and > 0 (ozz uses 0.1).
    pub threshold: f32,
    pub out_rotations: &'a mut [Quat],
    pub out_translations: &'a mut [Vec3A],
    pub out_scales: &'a mut [Vec3A],
}

impl BlendJob<'_> {
    /// Checks every slice's length against the output's bone count and every weight.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.out_rotations.len();
        check_len("blend out_translations", self.out_translations.len(), n)?;
        check_len("blend out_scales", self.out_scales.len(), n)?;
        self.rest.check("blend rest pose", n)?;
        if !(self.threshold.is_finite() && self.threshold > 0.0) {
            return Err(JobError::NotFinite {
                what: "blend threshold",
                at: 0,
            });
        }
        for (what, layers) in [
            ("blend layer", self.layers),
            ("blend additive layer", self.additive),
        ] {
            for (i, l) in layers.iter().enumerate() {
                l.pose.check(what, n)?;
                if !l.weight.is_finite() {
                    return Err(JobError::NotFinite { what, at: i });
                }
                if let Some(w) = l.bone_weights {
                    check_len("blend bone weights", w.len(), n)?;
                    if let Some(b) = w.iter().position(|v| !v.is_finite()) {
                        return Err(JobError::NotFinite {
                            what: "blend bone weight",
                            at: b,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Validates, then blends.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let n = self.out_rotations.len();
        for b in 0..n {
            let mut acc = Acc::default();
            for l in self.layers {
                let w = l.weight_at(b);
                if w > 0.0 {
                    acc.add(&l.pose, b, w);
                }
            }
            if acc.w < self.threshold {
                acc.add(&self.rest, b, self.threshold - acc.w);
            }
            let (q, t, s, wsum) = (acc.q, acc.t, acc.s, acc.w);
            let inv = 1.0 / wsum;
            let mut r = Quat::from_vec4(q.normalize());
            let (mut t, mut s) = (t * inv, s * inv);
            for l in self.additive {
                let w = l.weight_at(b);
                if w > 0.0 {
                    let aq = Vec4::from(l.pose.rotations[b]);
                    let aq = if aq.w < 0.0 { -aq } else { aq };
                    let aq = Vec4::W.lerp(aq, w).normalize();
                    r = (r * Quat::from_vec4(aq)).normalize();
                    t += l.pose.translations[b] * w;
                    s *= Vec3A::ONE + (l.pose.scales[b] - Vec3A::ONE) * w;
                }
            }
            self.out_rotations[b] = r;
            self.out_translations[b] = t;
            self.out_scales[b] = s;
        }
        Ok(())
    }
}
