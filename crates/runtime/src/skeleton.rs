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

/// The first name (in bone order) that another bone also has. Names are compared through a
/// 64-bit hash first, sorted as integers, and as strings only where two hashes are equal: every
/// `.cfa` read builds a skeleton (the compressor reads back each file it writes), and a set of
/// strings cost a two-sample clip's compression ~4 % of its instructions in string
/// comparisons and node allocations. FNV-1a by hand: `core` has no hasher, and this crate
/// takes no dependency for five lines.
fn duplicate_name(bones: &[BoneDesc]) -> Option<String> {
    let fnv1a = |s: &str| {
        s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let mut keys: Vec<(u64, u32)> = bones
        .iter()
        .enumerate()
        .map(|(i, b)| (fnv1a(&b.name), i as u32))
        .collect();
    // Ties on the hash sorted by bone index, so the bone reported is the later of the first
    // repeated name, as a walk in bone order finds it.
    keys.sort_unstable();
    let mut first_dup: Option<usize> = None;
    let mut run = 0;
    while run < keys.len() {
        let mut end = run + 1;
        while end < keys.len() && keys[end].0 == keys[run].0 {
            end += 1;
        }
        // Within a run of equal hashes, a bone repeats a name when an earlier bone of the run
        // has the same string (runs are one entry long unless names repeat or hashes collide).
        for j in run + 1..end {
            let name = &bones[keys[j].1 as usize].name;
            if keys[run..j]
                .iter()
                .any(|k| bones[k.1 as usize].name == *name)
            {
                let at = keys[j].1 as usize;
                first_dup = Some(first_dup.map_or(at, |d| d.min(at)));
                break;
            }
        }
        run = end;
    }
    first_dup.map(|i| bones[i].name.clone())
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
        if let Some(name) = duplicate_name(&bones) {
            return Err(SkeletonError::DuplicateName { name });
        }
        for b in &bones {
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
    use alloc::format;

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
    fn the_name_reported_is_the_first_repeated_in_bone_order() {
        let named = |names: &[&str]| -> Vec<BoneDesc> {
            names.iter().map(|n| BoneDesc::new(*n, None)).collect()
        };
        // "b" repeats at bone 3, before "a" repeats at bone 4.
        assert_eq!(
            duplicate_name(&named(&["a", "b", "c", "b", "a"])).as_deref(),
            Some("b")
        );
        assert_eq!(
            duplicate_name(&named(&["x", "y", "x", "y"])).as_deref(),
            Some("x")
        );
        // Names alike but for a byte, an empty name, and many unique ones: no repeat.
        let many: Vec<String> = (0..2000).map(|i| format!("bone_{i}")).collect();
        let mut names: Vec<&str> = many.iter().map(String::as_str).collect();
        names.extend(["", "bone_", "Bone_1"]);
        assert_eq!(duplicate_name(&named(&names)), None);
        names.push("bone_1999");
        assert_eq!(duplicate_name(&named(&names)).as_deref(), Some("bone_1999"));
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
