//! Skeleton: data-oriented hierarchy (parent index per bone, parents before children),
//! bind pose and per-bone shell distance.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use glam::{Quat, Vec3};

/// Parent index of a root bone.
pub const NO_PARENT: u32 = u32::MAX;

/// The shell distance of a bone whose clip file sets none (ACL's default vertex distance, cm).
pub const DEFAULT_SHELL_DISTANCE: f32 = 3.0;

/// A validated skeleton. Bones are stored so that `parents[b] < b` for every non-root bone,
/// which lets local → object space run as one linear pass. Several roots are allowed.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    pub names: Vec<String>,
    /// Parent bone index, or [`NO_PARENT`].
    pub parents: Vec<u32>,
    /// Virtual vertex distance used by the error metric, in clip units (cm for our data).
    pub shell_distances: Vec<f32>,
    /// The error threshold a clip file sets for a bone (ACL's per-track `precision`), in clip
    /// units; `None`: the compression settings' threshold applies.
    pub precisions: Vec<Option<f32>>,
    pub bind_rotations: Vec<Quat>,
    pub bind_translations: Vec<Vec3>,
    pub bind_scales: Vec<Vec3>,
}

/// One bone as described by an importer, in any order; parents are referenced by index into the same list.
#[derive(Clone, Debug)]
pub struct BoneDesc {
    pub name: String,
    pub parent: Option<usize>,
    pub shell_distance: f32,
    /// The file's own error threshold for this bone, if it sets one.
    pub precision: Option<f32>,
    pub bind_rotation: Quat,
    pub bind_translation: Vec3,
    pub bind_scale: Vec3,
}

impl BoneDesc {
    pub fn new(name: impl Into<String>, parent: Option<usize>) -> Self {
        Self {
            name: name.into(),
            parent,
            shell_distance: DEFAULT_SHELL_DISTANCE,
            precision: None,
            bind_rotation: Quat::IDENTITY,
            bind_translation: Vec3::ZERO,
            bind_scale: Vec3::ONE,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SkeletonError {
    #[error("bone '{bone}' has parent index {parent}, which is not a bone")]
    DanglingParent { bone: String, parent: usize },
    #[error("bone '{bone}' is part of a parent cycle")]
    Cycle { bone: String },
    #[error("bone name '{name}' is used twice")]
    DuplicateName { name: String },
    #[error("bone '{bone}' is listed before its parent")]
    ParentAfterChild { bone: String },
    #[error("{0} bones is more than the 65535 supported")]
    TooManyBones(usize),
    /// A bind-pose value or shell distance outside what clips may hold (non-finite, a zero
    /// rotation, a component beyond [`crate::limits::MAX_COMPONENT_MAGNITUDE`], a negative
    /// shell distance).
    #[error("bone '{bone}': {what}")]
    BadBindPose { bone: String, what: &'static str },
}

/// What is wrong with a bone's bind pose or shell distance, if anything: the same limits as
/// the clip's samples (`clipforge_anim::clip::RawClip::new`), so a default sub-track (which
/// decodes to the bind pose) holds only values an importer accepts.
fn bad_bind_pose(b: &BoneDesc) -> Option<&'static str> {
    let limit = crate::limits::MAX_COMPONENT_MAGNITUDE;
    let big = |v: Vec3| !v.is_finite() || v.abs().max_element() > limit;
    if !b.bind_rotation.is_finite() || b.bind_rotation.length() < 1e-6 {
        Some("bind rotation is zero or not finite")
    } else if big(b.bind_translation) {
        Some("bind translation is not finite or larger than 1e7")
    } else if big(b.bind_scale) {
        Some("bind scale is not finite or larger than 1e7")
    } else if !(b.shell_distance.is_finite() && b.shell_distance >= 0.0) {
        Some("shell distance is negative or not finite")
    } else if b.precision.is_some_and(|p| !(p.is_finite() && p > 0.0)) {
        Some("precision is not a positive finite number")
    } else {
        None
    }
}

impl Skeleton {
    pub fn num_bones(&self) -> usize {
        self.parents.len()
    }

    pub fn parent(&self, bone: usize) -> Option<usize> {
        let p = self.parents[bone];
        (p != NO_PARENT).then_some(p as usize)
    }

    /// Builds a skeleton from bones that must already be in parent-before-child order
    /// (ACL's clip format and BVH guarantee it).
    pub fn from_ordered(bones: Vec<BoneDesc>) -> Result<Self, SkeletonError> {
        for (i, b) in bones.iter().enumerate() {
            if let Some(p) = b.parent {
                if p >= bones.len() {
                    return Err(SkeletonError::DanglingParent {
                        bone: b.name.clone(),
                        parent: p,
                    });
                }
                if p >= i {
                    return Err(SkeletonError::ParentAfterChild {
                        bone: b.name.clone(),
                    });
                }
            }
        }
        Self::build(bones)
    }

    /// Builds a skeleton from bones in any order (glTF nodes), sorting them parent-first.
    /// Returns the skeleton and, for each new bone index, the index it had in `bones`.
    pub fn from_unordered(bones: Vec<BoneDesc>) -> Result<(Self, Vec<usize>), SkeletonError> {
        let n = bones.len();
        for b in &bones {
            if let Some(p) = b.parent
                && p >= n
            {
                return Err(SkeletonError::DanglingParent {
                    bone: b.name.clone(),
                    parent: p,
                });
            }
        }
        // Depth-first order from every root; anything never reached is on a cycle.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, b) in bones.iter().enumerate() {
            if let Some(p) = b.parent {
                children[p].push(i);
            }
        }
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<usize> = (0..n)
            .filter(|&i| bones[i].parent.is_none())
            .rev()
            .collect();
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(children[i].iter().rev());
        }
        if order.len() != n {
            let mut seen = vec![false; n];
            for &i in &order {
                seen[i] = true;
            }
            let bone = (0..n)
                .find(|&i| !seen[i])
                .map(|i| bones[i].name.clone())
                .unwrap_or_default();
            return Err(SkeletonError::Cycle { bone });
        }
        let mut new_index = vec![0usize; n];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let sorted: Vec<BoneDesc> = order
            .iter()
            .map(|&old| {
                let mut b = bones[old].clone();
                b.parent = b.parent.map(|p| new_index[p]);
                b
            })
            .collect();
        Ok((Self::build(sorted)?, order))
    }

    fn build(bones: Vec<BoneDesc>) -> Result<Self, SkeletonError> {
        if bones.len() > u16::MAX as usize {
            return Err(SkeletonError::TooManyBones(bones.len()));
        }
        let mut seen = alloc::collections::BTreeSet::new();
        for b in &bones {
            if !seen.insert(b.name.as_str()) {
                return Err(SkeletonError::DuplicateName {
                    name: b.name.clone(),
                });
            }
            if let Some(what) = bad_bind_pose(b) {
                return Err(SkeletonError::BadBindPose {
                    bone: b.name.clone(),
                    what,
                });
            }
        }
        Ok(Self {
            parents: bones
                .iter()
                .map(|b| b.parent.map_or(NO_PARENT, |p| p as u32))
                .collect(),
            shell_distances: bones.iter().map(|b| b.shell_distance).collect(),
            precisions: bones.iter().map(|b| b.precision).collect(),
            bind_rotations: bones.iter().map(|b| b.bind_rotation.normalize()).collect(),
            bind_translations: bones.iter().map(|b| b.bind_translation).collect(),
            bind_scales: bones.iter().map(|b| b.bind_scale).collect(),
            // Moved, not copied (every reader of a .cfa builds one: a copy was an allocation
            // per bone).
            names: bones.into_iter().map(|b| b.name).collect(),
        })
    }

    /// Length of the longest root → leaf chain, in bones.
    pub fn longest_chain(&self) -> usize {
        let mut depth = vec![0usize; self.num_bones()];
        for b in 0..self.num_bones() {
            depth[b] = self.parent(b).map_or(1, |p| depth[p] + 1);
        }
        depth.into_iter().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unordered_bones_are_sorted_parent_first() {
        let bones = vec![
            BoneDesc::new("hand", Some(2)),
            BoneDesc::new("root", None),
            BoneDesc::new("arm", Some(1)),
        ];
        let (s, order) = Skeleton::from_unordered(bones).unwrap();
        assert_eq!(s.names, ["root", "arm", "hand"]);
        assert_eq!(order, [1, 2, 0]);
        for b in 0..s.num_bones() {
            if let Some(p) = s.parent(b) {
                assert!(p < b);
            }
        }
    }

    #[test]
    fn cycles_and_dangling_parents_are_refused() {
        let cyc = vec![
            BoneDesc::new("a", Some(1)),
            BoneDesc::new("b", Some(0)),
            BoneDesc::new("r", None),
        ];
        assert!(matches!(
            Skeleton::from_unordered(cyc),
            Err(SkeletonError::Cycle { .. })
        ));
        let dangling = vec![BoneDesc::new("a", Some(7))];
        assert!(matches!(
            Skeleton::from_ordered(dangling),
            Err(SkeletonError::DanglingParent { .. })
        ));
        let late = vec![BoneDesc::new("a", Some(1)), BoneDesc::new("b", None)];
        assert!(matches!(
            Skeleton::from_ordered(late),
            Err(SkeletonError::ParentAfterChild { .. })
        ));
        let dup = vec![BoneDesc::new("a", None), BoneDesc::new("a", None)];
        assert!(matches!(
            Skeleton::from_ordered(dup),
            Err(SkeletonError::DuplicateName { .. })
        ));
    }

    #[test]
    fn several_roots_are_allowed() {
        let s = Skeleton::from_ordered(vec![
            BoneDesc::new("r1", None),
            BoneDesc::new("r2", None),
            BoneDesc::new("c", Some(1)),
        ])
        .unwrap();
        assert_eq!(s.longest_chain(), 2);
    }
}
