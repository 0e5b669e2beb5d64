//! [`LocalToObjectJob`] and [`local_to_object_pass`], the one linear parent-before-child walk
//! every local → object computation goes through (this job, [`crate::pose::local_to_object`],
//! and through [`crate::pose::local_to_object_with`] the codec's float64 metric and float32
//! compressor).

use super::{JobError, PoseRef, SimdPath, check_len};
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
/// Local rotations must be unit (what the readers and [`super::BlendJob`] write; within ~1e-3
/// is enough). The rotation chain is carried unnormalised from a bone to its children, and the
/// stored rotations are normalised in a second pass over the range, by one Newton step from 1
/// (`q · (3 − |q|²) / 2`): the products of unit rotations drift from unit by rounding only
/// (≈ 1e-7 per level), where that step leaves an error of ≈ ¾·(|q|² − 1)², far below float32's.
/// It keeps the normalisation off the parent → child chain and out of the composing loop (whose
/// multipliers are its busiest units), and lets the second pass normalise two rotations per
/// instruction.
///
/// Paths ([`SimdPath`], as the vertex jobs): `Scalar` (plain `f32`, the reference), `Sse2` (and
/// `Neon`: the same operations through glam), `Avx2Fma` (fused multiply-adds, the second pass
/// two rotations per 256-bit instruction; chosen at run time). Every path is held to the scalar
/// one and to a float64 reference (`jobs/tests.rs`).
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
        if !parents_in_order(&self.parents[self.start..self.end], self.start) {
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

    /// Validates, then composes on the fastest path this CPU has.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.run_with(SimdPath::Auto)
    }

    /// Validates, then composes on `path` (an error if this CPU or target lacks it).
    pub fn run_with(&mut self, path: SimdPath) -> Result<(), JobError> {
        self.validate()?;
        let path = path.resolve()?;
        let (io, start, end) = (self.io(), self.start, self.end);
        match path {
            SimdPath::Scalar => {
                // SAFETY: validate() checked every length, the range and the parents' order.
                unsafe { compose_scalar(&io, start, end) }
            }
            #[cfg(target_arch = "x86_64")]
            SimdPath::Avx2Fma => {
                // SAFETY: as above; resolve() checked that the CPU has AVX2 and FMA.
                unsafe { x86::compose_avx2fma(&io, start, end) }
            }
            // Sse2 on x86-64, Neon on aarch64: glam's SIMD.
            _ => {
                // SAFETY: as above.
                unsafe { compose_portable(&io, start, end) }
            }
        }
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

/// Whether each of `parents` (those of bones `start..`) is a root's or comes before its bone:
/// `p + 1 <= b` covers both `p < b` and [`NO_PARENT`] (`u32::MAX` wraps to 0). One branch-free
/// pass in 32-bit lanes (in 64-bit ones the compiler emulates the unsigned compares: a small
/// skeleton's check cost a tenth of the job), eight at a time with AVX2's unsigned minimum.
fn parents_in_order(parents: &[u32], start: usize) -> bool {
    #[inline(always)]
    fn fold(parents: &[u32], start: u32) -> bool {
        // min(p + 1, b) == p + 1: an unsigned compare SSE2 lacks, AVX2 has.
        (start..).zip(parents).fold(true, |ok, (b, &p)| {
            ok & (p.wrapping_add(1).min(b) == p.wrapping_add(1))
        })
    }
    // The bone numbers in 32 bits, one past the last included (the range's iterator steps to it).
    let Some(start32) = (start + parents.len() < u32::MAX as usize).then_some(start as u32) else {
        // More bones than 32 bits count: only a hostile length gets here.
        return (start..)
            .zip(parents)
            .all(|(b, &p)| p.wrapping_add(1) as usize <= b);
    };
    #[cfg(target_arch = "x86_64")]
    if SimdPath::Avx2Fma.available() {
        #[target_feature(enable = "avx2")]
        fn fold_avx2(parents: &[u32], start: u32) -> bool {
            fold(parents, start)
        }
        // SAFETY: the CPU has AVX2.
        return unsafe { fold_avx2(parents, start32) };
    }
    fold(parents, start32)
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

/// [`compose`] then [`renormalize`] on every rotation of the range (SSE2 on x86-64, NEON on
/// aarch64, through glam).
///
/// # Safety
/// As [`compose`].
unsafe fn compose_portable(io: &Io, start: usize, end: usize) {
    // SAFETY: the caller's.
    unsafe {
        compose::<false>(io, start, end);
        for b in start..end {
            let q = io.or.add(b);
            *q = Quat::from_vec4(renormalize(Vec4::from(*q)));
        }
    }
}

/// The composition over `start..end` (see [`LocalToObjectJob`]) without bounds checks, rotations
/// stored unnormalised (the caller normalises the range afterwards). `FMA`: fused multiply-adds
/// and AVX broadcasts (only inlined into code compiled for them).
///
/// # Safety
/// Every pointer of `io` covers `end` elements, and each bone of the range is a root or has its
/// parent before it ([`LocalToObjectJob::validate`]); with `FMA`, the CPU has AVX2 and FMA.
#[inline(always)]
unsafe fn compose<const FMA: bool>(io: &Io, start: usize, end: usize) {
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
            let (lr, lt, ls) = (io.lr.add(b), *io.lt.add(b), *io.ls.add(b));
            let (r, t, s) = if p == NO_PARENT {
                (Vec4::from(*lr), lt, ls)
            } else {
                let p = p as usize;
                let (pr, pt, ps) = if p + 1 == b { prev } else { load(p) };
                let r = quat_mul::<FMA>(pr, lr);
                (r, rotate::<FMA>(pr, lt * ps) + pt, ls * ps)
            };
            prev = (r, t, s);
            *io.or.add(b) = Quat::from_vec4(r);
            *io.ot.add(b) = t;
            *io.os.add(b) = s;
        }
    }
}

/// The reference path: [`compose`]'s walk ([`local_to_object_pass`]) and formulas in plain
/// `f32` arithmetic, one component at a time, and an exact normalisation (`q / |q|`).
///
/// # Safety
/// As [`compose`].
unsafe fn compose_scalar(io: &Io, start: usize, end: usize) {
    type V3 = [f32; 3];
    let cross = |a: V3, b: V3| -> V3 {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    // SAFETY: lengths `end`, parents before their bones (the caller's contract).
    let parents = unsafe { core::slice::from_raw_parts(io.parents, end) };
    local_to_object_pass(parents, start, end, |b, p| {
        // SAFETY: b < end; p < b.
        unsafe {
            let (lr, lt, ls) = (*io.lr.add(b), *io.lt.add(b), *io.ls.add(b));
            let (r, t, s) = match p {
                None => (lr, lt, ls),
                Some(p) => {
                    let (a, pt, ps) = (*io.or.add(p), *io.ot.add(p), *io.os.add(p));
                    let r = Quat::from_xyzw(
                        a.w * lr.x + a.x * lr.w + a.y * lr.z - a.z * lr.y,
                        a.w * lr.y - a.x * lr.z + a.y * lr.w + a.z * lr.x,
                        a.w * lr.z + a.x * lr.y - a.y * lr.x + a.z * lr.w,
                        a.w * lr.w - a.x * lr.x - a.y * lr.y - a.z * lr.z,
                    );
                    // a · v · a* as v + w·u + a⃗ × u, u = 2·a⃗ × v (a unit).
                    let (q, v) = ([a.x, a.y, a.z], (lt * ps).to_array());
                    let u = cross(q, v).map(|c| 2.0 * c);
                    let c = cross(q, u);
                    let rt = core::array::from_fn::<f32, 3, _>(|i| v[i] + a.w * u[i] + c[i]);
                    (r, Vec3A::from_array(rt) + pt, ls * ps)
                }
            };
            *io.or.add(b) = r;
            *io.ot.add(b) = t;
            *io.os.add(b) = s;
        }
    });
    for b in start..end {
        // SAFETY: b < end.
        unsafe {
            let q = *io.or.add(b);
            let n = crate::fmath::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
            *io.or.add(b) = Quat::from_xyzw(q.x / n, q.y / n, q.z / n, q.w / n);
        }
    }
}

/// The AVX2 + FMA path.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;
    use core::arch::x86_64::*;

    /// [`compose`] with fused multiply-adds, then the range's rotations normalised two per
    /// 256-bit instruction ([`renormalize`]'s formula).
    ///
    /// # Safety
    /// As [`compose`], and the CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn compose_avx2fma(io: &Io, start: usize, end: usize) {
        // SAFETY: the caller's.
        unsafe {
            compose::<true>(io, start, end);
            let (f, n) = (io.or.add(start) as *mut f32, end - start);
            let (half, three_halves) = (_mm256_set1_ps(0.5), _mm256_set1_ps(1.5));
            let mut i = 0;
            while i + 2 <= n {
                // Unaligned: a range may start at an odd bone.
                let v = _mm256_loadu_ps(f.add(4 * i));
                // Each 128-bit lane: |q|² in every element.
                let sq = _mm256_mul_ps(v, v);
                let s = _mm256_add_ps(sq, _mm256_shuffle_ps::<0b01_00_11_10>(sq, sq));
                let d = _mm256_add_ps(s, _mm256_shuffle_ps::<0b10_11_00_01>(s, s));
                let k = _mm256_fnmadd_ps(half, d, three_halves);
                _mm256_storeu_ps(f.add(4 * i), _mm256_mul_ps(v, k));
                i += 2;
            }
            if i < n {
                let q = io.or.add(start + i);
                *q = Quat::from_vec4(renormalize(Vec4::from(*q)));
            }
        }
    }

    /// `a · b + c`, fused.
    ///
    /// # Safety
    /// The CPU has FMA (only inlined into [`compose_avx2fma`]).
    #[inline(always)]
    pub(super) unsafe fn madd(a: __m128, b: __m128, c: __m128) -> __m128 {
        // SAFETY: the caller's.
        unsafe { _mm_fmadd_ps(a, b, c) }
    }

    /// `a · b − c`, fused.
    ///
    /// # Safety
    /// As [`madd`].
    #[inline(always)]
    pub(super) unsafe fn msub(a: __m128, b: __m128, c: __m128) -> __m128 {
        // SAFETY: the caller's.
        unsafe { _mm_fmsub_ps(a, b, c) }
    }

    /// `v.yzx` (w kept): `a × b = yzx(a ∘ b.yzx − a.yzx ∘ b)`.
    #[inline(always)]
    pub(super) fn yzx(v: __m128) -> __m128 {
        // SAFETY: SSE is part of x86-64's baseline.
        unsafe { _mm_shuffle_ps::<0b11_00_10_01>(v, v) }
    }
}

/// `a ⊗ *b` (Hamilton product, x y z w) for the parent `a` and the local `*b`.
///
/// Portable: arranged so that the parent goes through one broadcast, one multiply and two adds
/// (the chain's latency) while the sign flips and swizzles are applied to the local rotation,
/// which does not wait for the parent. The sign flips are exact (a sign bit), done as `−x`
/// rather than `× −1` to keep them off the multipliers, the loop's busiest units.
///
/// With `FMA` (AVX2): the other way round, `b.w·a + b.x·(S2∘a.wzyx) + b.y·(S3∘a.zwxy) +
/// b.z·(S1∘a.yxwz)`: the local components come broadcast straight from memory (loads, not
/// shuffles) and the parent takes three swizzles, where the portable form takes four broadcasts
/// and three swizzles (shuffles are this loop's scarcest units: two pipes). The signs of the z
/// term alternate (S1 = +−+−), which an add/subtract-alternating fused multiply-add applies;
/// so do those of the y term relative to the x term's (S2 ∘ S3 = −+−+), which leaves one flip
/// (S2) on their sum.
///
/// # Safety
/// `b` is readable; with `FMA`, the CPU has AVX2 and FMA (only inlined into
/// [`x86::compose_avx2fma`]).
#[inline(always)]
unsafe fn quat_mul<const FMA: bool>(a: Vec4, b: *const Quat) -> Vec4 {
    use glam::Vec4Swizzles;
    const S1: Vec4 = Vec4::new(0.0, -0.0, 0.0, -0.0);
    const S2: Vec4 = Vec4::new(0.0, 0.0, -0.0, -0.0);
    const S3: Vec4 = Vec4::new(-0.0, 0.0, 0.0, -0.0);
    #[cfg(target_arch = "x86_64")]
    if FMA {
        use core::arch::x86_64::*;
        // SAFETY: the caller's.
        return unsafe {
            let b = &*b;
            let (bx, by, bz, bw) = (
                _mm_broadcast_ss(&b.x),
                _mm_broadcast_ss(&b.y),
                _mm_broadcast_ss(&b.z),
                _mm_broadcast_ss(&b.w),
            );
            let lo = _mm_fmsubadd_ps(bw, a.into(), _mm_mul_ps(bz, a.yxwz().into()));
            let hi = _mm_fmaddsub_ps(bx, a.wzyx().into(), _mm_mul_ps(by, a.zwxy().into()));
            Vec4::from(lo) + flip(Vec4::from(hi), S2)
        };
    }
    // SAFETY: the caller's.
    let b = Vec4::from(unsafe { *b });
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
/// operations than the general form (glam's also covers non-unit quaternions). With `FMA` each
/// cross product is one multiply and one fused multiply-subtract, in a rotated frame
/// (`a × b = yzx(a ∘ b.yzx − a.yzx ∘ b)`) that needs one swizzle of `q` for both.
#[inline(always)]
fn rotate<const FMA: bool>(q: Vec4, v: Vec3A) -> Vec3A {
    #[cfg(target_arch = "x86_64")]
    if FMA {
        use core::arch::x86_64::*;
        use x86::{madd, msub, yzx};
        // SAFETY: FMA is only set in code compiled for it ([`x86::compose_avx2fma`]); the
        // shuffles and adds are SSE, x86-64's baseline.
        return unsafe {
            let (q, v): (__m128, __m128) = (q.into(), v.into());
            let q1 = yzx(q);
            // u = q⃗ × v = yzx(x); c = q⃗ × u = yzx(y); the result v + 2·(w·u + c).
            let x = msub(q, yzx(v), _mm_mul_ps(q1, v));
            let u = yzx(x);
            let y = msub(q, yzx(u), _mm_mul_ps(q1, u));
            let w = _mm_shuffle_ps::<0b11_11_11_11>(q, q);
            Vec3A::from(madd(_mm_set1_ps(2.0), madd(w, u, yzx(y)), v))
        };
    }
    let qv = Vec3A::from_vec4(q);
    let t = 2.0 * qv.cross(v);
    v + q.w * t + qv.cross(t)
}

/// `q / |q|` for a `q` near unit: one Newton step from 1, `q · (3 − |q|²) / 2` (error
/// ≈ ¾·(|q|² − 1)², below float32's rounding for the drift of a product chain of unit rotations;
/// no square root or division, whose shared divider would bound the pass).
#[inline(always)]
fn renormalize(q: Vec4) -> Vec4 {
    let d = q.dot_into_vec(q);
    q * (Vec4::splat(1.5) - 0.5 * d)
}
