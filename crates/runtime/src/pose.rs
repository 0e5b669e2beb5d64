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
    crate::jobs::local_to_object_pass(parents, 0, parents.len(), |b, p| {
        let l = local(b);
        object[b] = match p {
            None => l,
            Some(p) => T::compose(&object[p], &l),
        };
    });
}

/// Local → object space in one linear pass (valid because parents come before children):
/// [`crate::jobs::LocalToObjectJob`] over the whole skeleton, `object` resized to it. Composition
/// is ACL's qvv one (and `clip_eval.py`'s): rotation = parent ⊗ local, translation =
/// parent_rot · (local_t ∘ parent_scale) + parent_t, scale = local ∘ parent_scale.
pub fn local_to_object(
    parents: &[u32],
    local: &Pose,
    object: &mut Pose,
) -> Result<(), crate::jobs::JobError> {
    let n = parents.len();
    object.resize(n);
    // A pose longer than the skeleton: its extra bones are not the skeleton's.
    let local = crate::jobs::PoseRef {
        rotations: local.rotations.get(..n).unwrap_or(&local.rotations),
        translations: local.translations.get(..n).unwrap_or(&local.translations),
        scales: local.scales.get(..n).unwrap_or(&local.scales),
    };
    crate::jobs::LocalToObjectJob::new(
        parents,
        local,
        &mut object.rotations,
        &mut object.translations,
        &mut object.scales,
    )
    .run()
}
