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
/// The rotation chain is carried unnormalised from a bone to its children, and the stored
/// rotations are normalised in a second pass over the range: for unit local rotations (what the
/// readers and [`super::BlendJob`] write) that is the same product, the norm drifting by
/// rounding only (≈ 1e-7 per level). It keeps the normalisation off the parent → child chain and
/// out of the composing loop (whose multipliers are its busiest units), and lets the second pass
/// normalise two rotations per instruction. On x86-64 with AVX (chosen at run time) both passes
/// are compiled VEX-encoded; the operations are the same (no FMA), so are the bits.
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
        let io = self.io();
        #[cfg(target_arch = "x86_64")]
        if super::simd::avx() {
            // SAFETY: validate() checked every length, the range and that each parent comes
            // before its bone; the CPU has AVX (CPUID/XGETBV).
            unsafe { compose_avx(&io, self.start, self.end) };
            return Ok(());
        }
        // SAFETY: as above.
        unsafe { compose_portable(&io, self.start, self.end) };
        Ok(())
    }

    /// [`Self::run`] on the portable path (SSE2 on x86-64) whatever the CPU: the tests check
    /// that the AVX path gives the same bits.
    #[cfg(test)]
    pub(crate) fn run_portable(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let io = self.io();
        // SAFETY: validated above.
        unsafe { compose_portable(&io, self.start, self.end) };
        Ok(())
    }

    fn io(&mut self) -> Io {
        Io {
            parents: self.parents.as_ptr(),
            lr: self.local.rotations.as_ptr(),
            lt: self.local.translations.as_ptr(),
            ls: self.local.scales.as_ptr(),
            or: self.out_rotations.as_mut_ptr(),
            ot: self.out_translations.as_mut_ptr(),
            os: self.out_scales.as_mut_ptr(),
        }
    }
}

/// The job's slices as raw pointers (the outputs are distinct `&mut` slices, so no aliasing).
struct Io {
    parents: *const u32,
    lr: *const Quat,
    lt: *const Vec3A,
    ls: *const Vec3A,
    or: *mut Quat,
    ot: *mut Vec3A,
    os: *mut Vec3A,
}

/// [`compose`] then [`normalize_range`], compiled with AVX: the same operations (no FMA, so the
/// same bits), VEX-encoded (three operands: no register copies before each destructive SSE
/// operation), and the normalisation two rotations per instruction.
///
/// # Safety
/// As [`compose`], and the CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn compose_avx(io: &Io, start: usize, end: usize) {
    // SAFETY: the caller's.
    unsafe {
        compose(io, start, end);
        normalize_range_avx(io.or.add(start), end - start);
    }
}

/// [`compose`] then [`normalize_range`] (SSE2 on x86-64, NEON on aarch64, via glam).
///
/// # Safety
/// As [`compose`].
unsafe fn compose_portable(io: &Io, start: usize, end: usize) {
    // SAFETY: the caller's.
    unsafe {
        compose(io, start, end);
        for b in start..end {
            let q = io.or.add(b);
            *q = Quat::from_vec4(normalize(Vec4::from(*q)));
        }
    }
}

/// The composition over `start..end` (see [`LocalToObjectJob`]) without bounds checks, rotations
/// stored unnormalised (the caller normalises the range afterwards).
///
/// # Safety
/// Every pointer of `io` covers `end` elements, and each bone of the range is a root or has its
/// parent before it ([`LocalToObjectJob::validate`]).
#[inline(always)]
unsafe fn compose(io: &Io, start: usize, end: usize) {
    // SAFETY (all pointer reads and writes below): indices are below `end` (bones) or a bone's
    // parent, which is below the bone (the caller's contract).
    unsafe {
        let load = |p: usize| (Vec4::from(*io.or.add(p)), *io.ot.add(p), *io.os.add(p));
        // The previous bone's object transform, kept in registers: most bones are their
        // predecessor's child, and reading it back from memory would put a store → load round
        // trip on the chain. Before the range: what the caller left there.
        let mut prev = if start > 0 {
            load(start - 1)
        } else {
            (Vec4::W, Vec3A::ZERO, Vec3A::ONE)
        };
        for b in start..end {
            let p = *io.parents.add(b);
            let (lr, lt, ls) = (Vec4::from(*io.lr.add(b)), *io.lt.add(b), *io.ls.add(b));
            let (r, t, s) = if p == NO_PARENT {
                (lr, lt, ls)
            } else {
                let p = p as usize;
                let (pr, pt, ps) = if p + 1 == b { prev } else { load(p) };
                (quat_mul(pr, lr), rotate(pr, lt * ps) + pt, ls * ps)
            };
            prev = (r, t, s);
            *io.or.add(b) = Quat::from_vec4(r);
            *io.ot.add(b) = t;
            *io.os.add(b) = s;
        }
    }
}

/// `q / |q|` for the `n` rotations at `q`, two per 256-bit instruction (the operations of
/// [`normalize`], lane by lane: the same bits).
///
/// # Safety
/// `q` covers `n` rotations; the CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn normalize_range_avx(q: *mut Quat, n: usize) {
    use core::arch::x86_64::*;
    // SAFETY: the caller's; unaligned loads and stores (a range may start at an odd bone).
    unsafe {
        let f = q as *mut f32;
        let (half, three_halves) = (_mm256_set1_ps(0.5), _mm256_set1_ps(1.5));
        let mut i = 0;
        while i + 2 <= n {
            let v = _mm256_loadu_ps(f.add(4 * i));
            // Each 128-bit lane: the dot product in every element, as glam's dot_into_vec.
            let sq = _mm256_mul_ps(v, v);
            let s = _mm256_add_ps(sq, _mm256_shuffle_ps::<0b01_00_11_10>(sq, sq));
            let d = _mm256_add_ps(s, _mm256_shuffle_ps::<0b10_11_00_01>(s, s));
            let y = _mm256_rsqrt_ps(d);
            let e = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(half, d), y), y);
            let k = _mm256_mul_ps(y, _mm256_sub_ps(three_halves, e));
            _mm256_storeu_ps(f.add(4 * i), _mm256_mul_ps(v, k));
            i += 2;
        }
        if i < n {
            let r = q.add(i);
            *r = Quat::from_vec4(normalize(Vec4::from(*r)));
        }
    }
}

/// `a ⊗ b` (Hamilton product, x y z w), arranged so that the parent `a` goes through one
/// broadcast, one multiply and two adds (the chain's latency) while the sign flips and swizzles
/// are applied to the local `b`, which does not wait for the parent. The sign flips are exact
/// (a sign bit), done as `−x` rather than `× −1` to keep them off the multipliers, the loop's
/// busiest units.
#[inline(always)]
fn quat_mul(a: Vec4, b: Vec4) -> Vec4 {
    use glam::Vec4Swizzles;
    const S1: Vec4 = Vec4::new(0.0, -0.0, 0.0, -0.0);
    const S2: Vec4 = Vec4::new(0.0, 0.0, -0.0, -0.0);
    const S3: Vec4 = Vec4::new(-0.0, 0.0, 0.0, -0.0);
    let (b1, b2, b3) = (flip(b.wzyx(), S1), flip(b.zwxy(), S2), flip(b.yxwz(), S3));
    (a.wwww() * b + a.xxxx() * b1) + (a.yyyy() * b2 + a.zzzz() * b3)
}

/// `v` with the sign bits of `signs` flipped (`v × ±1`, bit for bit, without a multiply).
#[inline(always)]
fn flip(v: Vec4, signs: Vec4) -> Vec4 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::_mm_xor_ps;
        // SAFETY: SSE is part of x86-64's baseline.
        Vec4::from(unsafe { _mm_xor_ps(v.into(), signs.into()) })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec4::from_array(core::array::from_fn(|i| {
            f32::from_bits(v[i].to_bits() ^ signs[i].to_bits())
        }))
    }
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
