//! Structure-of-arrays poses and the local → object space pass.

use alloc::vec::Vec;
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

    /// The pose's arrays, borrowed as a [`PoseMut`].
    pub fn as_pose_mut(&mut self) -> PoseMut<'_> {
        PoseMut {
            rotations: &mut self.rotations,
            translations: &mut self.translations,
            scales: &mut self.scales,
        }
    }
}

/// A pose in memory the caller owns (an engine's own SoA arrays, the C API's `cf_pose`): what
/// [`ClipReader::sample_pose_into`](crate::ClipReader::sample_pose_into) writes without a copy.
/// Each array has one entry per bone.
#[derive(Debug)]
pub struct PoseMut<'p> {
    pub rotations: &'p mut [Quat],
    pub translations: &'p mut [Vec3A],
    pub scales: &'p mut [Vec3A],
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

/// How an additive layer combines with its base: ACL's three formats (`.cfa` flags bits 2–3:
/// 1, 2, 3; `docs/FORMAT.md`, "Additive clips").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdditiveFormat {
    /// The layer is a child of the base: rotation base·add, translation
    /// base.rot·(add.trans ∘ base.scale) + base.trans, scale add ∘ base.
    Relative,
    /// rotation base·add, translation add + base, scale add ∘ base.
    Additive0,
    /// As additive0 but scale (1 + add) ∘ base (neutral scale 0).
    Additive1,
}

impl AdditiveFormat {
    /// The format of a `.cfa`'s flags code (1, 2, 3); `None` for 0 (a plain clip).
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Self::Relative),
            2 => Some(Self::Additive0),
            3 => Some(Self::Additive1),
            _ => None,
        }
    }
}

/// One bone's additive value `add` applied to its `base` (rotation, translation, scale), in
/// float32: the one definition the runtime and the compressor's search share.
#[inline(always)]
pub fn apply_additive_bone(
    format: AdditiveFormat,
    base: (Quat, Vec3A, Vec3A),
    add: (Quat, Vec3A, Vec3A),
) -> (Quat, Vec3A, Vec3A) {
    let r = (base.0 * add.0).normalize();
    match format {
        AdditiveFormat::Relative => (r, base.0 * (add.1 * base.2) + base.1, add.2 * base.2),
        AdditiveFormat::Additive0 => (r, add.1 + base.1, add.2 * base.2),
        AdditiveFormat::Additive1 => (r, add.1 + base.1, (Vec3A::ONE + add.2) * base.2),
    }
}

/// `add` applied to every bone of `base`, in place (both poses of the same size; extra bones of
/// either are left alone).
pub fn apply_additive(format: AdditiveFormat, base: &mut Pose, add: &Pose) {
    let n = base.len().min(add.len());
    for b in 0..n {
        let (r, t, s) = apply_additive_bone(
            format,
            (base.rotations[b], base.translations[b], base.scales[b]),
            (add.rotations[b], add.translations[b], add.scales[b]),
        );
        base.rotations[b] = r;
        base.translations[b] = t;
        base.scales[b] = s;
    }
}
