//! Structure-of-arrays poses and the local → object space pass.

use glam::{Quat, Vec3A};

/// One pose of a skeleton, structure-of-arrays (what decompression writes and the error metric reads).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pose {
    pub rotations: Vec<Quat>,
    pub translations: Vec<Vec3A>,
    pub scales: Vec<Vec3A>,
}

impl Pose {
    pub fn new(num_bones: usize) -> Self {
        let mut p = Self::default();
        p.resize(num_bones);
        p
    }

    pub fn resize(&mut self, num_bones: usize) {
        self.rotations.resize(num_bones, Quat::IDENTITY);
        self.translations.resize(num_bones, Vec3A::ZERO);
        self.scales.resize(num_bones, Vec3A::ONE);
    }

    pub fn len(&self) -> usize {
        self.rotations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rotations.is_empty()
    }
}

/// A transform the local → object pass composes: ACL's qvv composition (see [`local_to_object`]),
/// in whatever precision the caller measures (float64 for the metric, float32 for the compressor).
pub trait Compose: Copy {
    fn compose(parent: &Self, local: &Self) -> Self;
}

/// The one local → object pass over parent indices (parents come before children, so one
/// linear walk): `object[b]` is `local(b)` for a root, else `compose(object[parent], local(b))`.
/// The metric, the compressor's preparation and (through the metric) the app's skeleton viewer
/// all go through it.
#[inline(always)]
pub fn local_to_object_with<T: Compose>(
    parents: &[u32],
    mut local: impl FnMut(usize) -> T,
    object: &mut [T],
) {
    for (b, &p) in parents.iter().enumerate() {
        let l = local(b);
        object[b] = if p == super::skeleton::NO_PARENT {
            l
        } else {
            T::compose(&object[p as usize], &l)
        };
    }
}

/// Local → object space in one linear pass: valid because parents come before children.
/// Composition is ACL's qvv one (and `clip_eval.py`'s): rotation = parent ⊗ local,
/// translation = parent_rot · (local_t ∘ parent_scale) + parent_t, scale = local ∘ parent_scale.
pub fn local_to_object(parents: &[u32], local: &Pose, object: &mut Pose) {
    let n = parents.len();
    object.resize(n);
    debug_assert!(local.len() >= n);
    for b in 0..n {
        let p = parents[b];
        if p == super::skeleton::NO_PARENT {
            object.rotations[b] = local.rotations[b];
            object.translations[b] = local.translations[b];
            object.scales[b] = local.scales[b];
        } else {
            let p = p as usize;
            let (pr, pt, ps) = (
                object.rotations[p],
                object.translations[p],
                object.scales[p],
            );
            object.rotations[b] = (pr * local.rotations[b]).normalize();
            object.translations[b] = pr * (local.translations[b] * ps) + pt;
            object.scales[b] = local.scales[b] * ps;
        }
    }
}
