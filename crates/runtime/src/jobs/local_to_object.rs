//! [`LocalToObjectJob`] and [`local_to_object_pass`], the one linear parent-before-child walk
//! every local → object computation goes through (this job, [`crate::pose::local_to_object`],
//! and through [`crate::pose::local_to_object_with`] the codec's float64 metric and float32
//! compressor).

use super::{JobError, PoseRef, check_len};
use crate::skeleton::NO_PARENT;
use glam::{Quat, Vec3A, Vec4};

/// The one local → object walk: bones `start..end` in index order, each with its parent
/// (`None` for a root). Parents come before children, so when `step(b, Some(p))` runs, bone `p`
/// is already done (in this walk, or before `start` by the caller). The composition is the
/// caller's (float32 here, float64 in the metric); the order and root handling are this loop's.
#[inline(always)]
pub fn local_to_object_pass(
    parents: &[u32],
    start: usize,
    end: usize,
    mut step: impl FnMut(usize, Option<usize>),
) {
    for (b, &p) in parents[start..end].iter().enumerate() {
        let b = start + b;
        step(
            b,
            if p == NO_PARENT {
                None
            } else {
                Some(p as usize)
            },
        );
    }
}

/// Local → object space for bones `start..end` (the whole skeleton by default), composed as the
/// codec's metric composes (ACL's qvv): rotation = parent ⊗ local (normalised), translation =
/// parent_rot · (local_t ∘ parent_scale) + parent_t, scale = local_s ∘ parent_scale; a root's
/// object transform is its local one.
///
/// Bones before `start` whose children are in the range must already hold their object
/// transforms in the outputs (a partial update: e.g. only an arm after IK moved its shoulder).
///
/// The rotation chain is carried unnormalised from a bone to its children and only the stored
/// rotations are normalised: for unit local rotations (what the readers and
/// [`super::BlendJob`] write) that is the same product, the norm drifting by rounding only
/// (≈ 1e-7 per level), and it takes the square root and division off the parent → child
/// dependency chain, which is what bounds this loop's speed.
#[derive(Debug)]
pub struct LocalToObjectJob<'a> {
    /// Parent of each bone ([`NO_PARENT`] for a root), parents before children.
    pub parents: &'a [u32],
    pub local: PoseRef<'a>,
    /// First bone updated.
    pub start: usize,
    /// One past the last bone updated.
    pub end: usize,
    pub out_rotations: &'a mut [Quat],
    pub out_translations: &'a mut [Vec3A],
    pub out_scales: &'a mut [Vec3A],
}

impl<'a> LocalToObjectJob<'a> {
    /// The job over the whole skeleton.
    pub fn new(
        parents: &'a [u32],
        local: PoseRef<'a>,
        out_rotations: &'a mut [Quat],
        out_translations: &'a mut [Vec3A],
        out_scales: &'a mut [Vec3A],
    ) -> Self {
        LocalToObjectJob {
            parents,
            local,
            start: 0,
            end: parents.len(),
            out_rotations,
            out_translations,
            out_scales,
        }
    }

    /// Checks every length, the range, and that each bone of the range has its parent before it.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.parents.len();
        self.local.check("local_to_object local pose", n)?;
        check_len("local_to_object out_rotations", self.out_rotations.len(), n)?;
        check_len(
            "local_to_object out_translations",
            self.out_translations.len(),
            n,
        )?;
        check_len("local_to_object out_scales", self.out_scales.len(), n)?;
        if self.start > self.end || self.end > n {
            return Err(JobError::Range {
                start: self.start,
                end: self.end,
                bones: n,
            });
        }
        // p + 1 <= b covers both p < b and NO_PARENT (u32::MAX wraps to 0); one branch-free
        // pass the compiler vectorises, and the error path looks for the culprit.
        let ok = self.parents[self.start..self.end]
            .iter()
            .enumerate()
            .fold(true, |ok, (i, &p)| {
                ok & (p.wrapping_add(1) as usize <= self.start + i)
            });
        if !ok {
            for b in self.start..self.end {
                let p = self.parents[b];
                if p != NO_PARENT && p as usize >= b {
                    return Err(JobError::ParentOrder {
                        bone: b,
                        parent: p as usize,
                    });
                }
            }
        }
        Ok(())
    }

    /// Validates, then composes.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let (lr, lt, ls) = (
            self.local.rotations,
            self.local.translations,
            self.local.scales,
        );
        let (or, ot, os) = (
            &mut *self.out_rotations,
            &mut *self.out_translations,
            &mut *self.out_scales,
        );
        // The previous bone's object transform (rotation unnormalised), kept in registers: most
        // bones are their predecessor's child, and reading it back from memory would put a
        // store → load round trip on the chain.
        let mut prev: Option<(Vec4, Vec3A, Vec3A)> = None;
        local_to_object_pass(self.parents, self.start, self.end, |b, p| {
            let (r, t, s) = match p {
                None => (Vec4::from(lr[b]), lt[b], ls[b]),
                Some(p) => {
                    let (pr, pt, ps) = match prev {
                        Some(x) if p + 1 == b => x,
                        _ => (Vec4::from(or[p]), ot[p], os[p]),
                    };
                    (
                        quat_mul(pr, Vec4::from(lr[b])),
                        rotate(pr, lt[b] * ps) + pt,
                        ls[b] * ps,
                    )
                }
            };
            prev = Some((r, t, s));
            or[b] = Quat::from_vec4(normalize(r));
            ot[b] = t;
            os[b] = s;
        });
        Ok(())
    }
}

/// `a ⊗ b` (Hamilton product, x y z w), arranged so that the parent `a` goes through one
/// broadcast, one multiply and two adds (the chain's latency) while the sign flips and swizzles
/// are applied to the local `b`, which does not wait for the parent.
#[inline(always)]
fn quat_mul(a: Vec4, b: Vec4) -> Vec4 {
    use glam::Vec4Swizzles;
    const S1: Vec4 = Vec4::new(1.0, -1.0, 1.0, -1.0);
    const S2: Vec4 = Vec4::new(1.0, 1.0, -1.0, -1.0);
    const S3: Vec4 = Vec4::new(-1.0, 1.0, 1.0, -1.0);
    let (b1, b2, b3) = (b.wzyx() * S1, b.zwxy() * S2, b.yxwz() * S3);
    (a.wwww() * b + a.xxxx() * b1) + (a.yyyy() * b2 + a.zzzz() * b3)
}

/// `q · v · q*` for a unit `q` as `v + w·t + q⃗ × t`, `t = 2·q⃗ × v`: two cross products, fewer
/// operations than the general form (glam's also covers non-unit quaternions).
#[inline(always)]
fn rotate(q: Vec4, v: Vec3A) -> Vec3A {
    let qv = Vec3A::from_vec4(q);
    let t = 2.0 * qv.cross(v);
    v + q.w * t + qv.cross(t)
}

/// `q / |q|`. On x86-64 from the reciprocal square root estimate and one Newton step (relative
/// error ≈ 2e-7, under the tests' tolerances): the square root and division of the exact form
/// share one unpipelined divider, which bounds this loop's throughput.
#[inline(always)]
fn normalize(q: Vec4) -> Vec4 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::_mm_rsqrt_ps;
        let d = q.dot_into_vec(q);
        // SAFETY: SSE is part of x86-64's baseline.
        let y = Vec4::from(unsafe { _mm_rsqrt_ps(d.into()) });
        q * (y * (1.5 - 0.5 * d * y * y))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        q.normalize()
    }
}
