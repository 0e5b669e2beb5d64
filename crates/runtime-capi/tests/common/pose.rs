//! A pose in caller memory as a C caller holds it, and handle set-up, for the C API tests.
// Not every test binary uses every helper.
#![allow(dead_code)]

use clipforge_runtime::Pose;
use clipforge_runtime::jobs::PoseRef;
use clipforge_runtime_capi::cf_status::CF_OK;
use clipforge_runtime_capi::*;
use glam::{Quat, Vec3A};

/// What a pose the API must not touch holds: a float no sampling or job writes.
pub const MARK: f32 = -7.25e-33;

/// A `.cfa`/`.cfs` buffer's clip handle (the call must succeed).
pub fn create(bytes: &[u8]) -> cf_clip {
    let mut c = cf_clip { id: 0 };
    assert_eq!(
        unsafe { cf_clip_create(bytes.as_ptr(), bytes.len(), &mut c) },
        CF_OK
    );
    c
}

/// A pose in caller memory (glam's vectors are the `cf_pose` layout: 16 bytes, 16-aligned).
#[derive(Clone)]
pub struct CPose {
    pub r: Vec<Quat>,
    pub t: Vec<Vec3A>,
    pub s: Vec<Vec3A>,
}

impl CPose {
    /// Every float [`MARK`]: what the call writes shows, and what it must not write stays.
    pub fn marked(n: usize) -> CPose {
        CPose {
            r: vec![Quat::from_xyzw(MARK, MARK, MARK, MARK); n],
            t: vec![Vec3A::splat(MARK); n],
            s: vec![Vec3A::splat(MARK); n],
        }
    }
    /// The rest pose (identity rotations, zero translations, unit scales).
    pub fn rest(n: usize) -> CPose {
        CPose {
            r: vec![Quat::IDENTITY; n],
            t: vec![Vec3A::ZERO; n],
            s: vec![Vec3A::ONE; n],
        }
    }
    pub fn from(p: &Pose) -> CPose {
        CPose {
            r: p.rotations.clone(),
            t: p.translations.clone(),
            s: p.scales.clone(),
        }
    }
    pub fn c(&mut self) -> cf_pose {
        cf_pose {
            rotations: self.r.as_mut_ptr().cast(),
            translations: self.t.as_mut_ptr().cast(),
            scales: self.s.as_mut_ptr().cast(),
            num_bones: self.r.len(),
        }
    }
    pub fn get(&self) -> PoseRef<'_> {
        PoseRef {
            rotations: &self.r,
            translations: &self.t,
            scales: &self.s,
        }
    }
    /// Rotations x y z w, translations and scales x y z (the padding lane is unspecified).
    pub fn bits(&self) -> Vec<u32> {
        let mut v = Vec::new();
        for q in &self.r {
            v.extend(q.to_array().map(f32::to_bits));
        }
        for x in self.t.iter().chain(&self.s) {
            v.extend(x.to_array().map(f32::to_bits));
        }
        v
    }
    pub fn untouched(&self) -> bool {
        self.bits().iter().all(|&b| b == MARK.to_bits())
    }
}

/// A Rust pose's floats in [`CPose::bits`]'s order.
pub fn pose_bits(p: &Pose) -> Vec<u32> {
    CPose::from(p).bits()
}
