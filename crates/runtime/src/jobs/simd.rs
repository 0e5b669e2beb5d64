//! Which SIMD path the vertex jobs take, and the kernels of each: scalar (every target, the
//! reference the others are tested against), SSE2 (x86-64's baseline), AVX2 + FMA (x86-64,
//! chosen at run time: CPUID and XGETBV read through `core::arch`, no `std` needed; a build with
//! `-C target-feature=+avx2,+fma` skips the check), NEON (aarch64's baseline).
//!
//! The SIMD kernels are `unsafe`: they index with raw pointers and rely on what the jobs'
//! `validate()` established (lengths, joint indices below the palette length).

/// A SIMD path of the vertex jobs ([`super::TransformPointsJob`], [`super::SkinJob`]) and of
/// [`super::LocalToObjectJob`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimdPath {
    /// The fastest path this CPU has (what `run()` uses).
    Auto,
    /// Plain Rust (the compiler may still vectorise it).
    Scalar,
    /// x86-64 SSE2, 4-wide, separate multiply and add.
    Sse2,
    /// x86-64 AVX2 + FMA (fused multiply-add, 4- and 8-wide).
    Avx2Fma,
    /// aarch64 NEON, 4-wide, fused multiply-add.
    Neon,
}

impl SimdPath {
    /// The path [`SimdPath::Auto`] stands for on this CPU.
    pub fn best() -> SimdPath {
        #[cfg(target_arch = "x86_64")]
        {
            if avx2_fma() {
                SimdPath::Avx2Fma
            } else {
                SimdPath::Sse2
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            SimdPath::Neon
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            SimdPath::Scalar
        }
    }

    /// Whether this path can run here.
    pub fn available(self) -> bool {
        match self {
            SimdPath::Auto | SimdPath::Scalar => true,
            SimdPath::Sse2 => cfg!(target_arch = "x86_64"),
            #[cfg(target_arch = "x86_64")]
            SimdPath::Avx2Fma => avx2_fma(),
            #[cfg(not(target_arch = "x86_64"))]
            SimdPath::Avx2Fma => false,
            SimdPath::Neon => cfg!(target_arch = "aarch64"),
        }
    }

    /// `Auto` resolved; an error for a path this CPU or target lacks.
    pub(crate) fn resolve(self) -> Result<SimdPath, super::JobError> {
        match self {
            SimdPath::Auto => Ok(SimdPath::best()),
            p if p.available() => Ok(p),
            p => Err(super::JobError::Unavailable(p)),
        }
    }
}

/// AVX usable (implied by [`avx2_fma`]; what [`super::SkinningPaletteJob`]'s VEX-encoded copy
/// needs).
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx() -> bool {
    cfg!(target_feature = "avx") || avx2_fma()
}

/// The largest of `v` (0 when empty): what `SkinJob::validate` checks every joint index with,
/// once per call. SSE2 has no unsigned 16-bit maximum (the compiler builds it from a saturating
/// subtract and an add, eight lanes at a time); AVX2's takes sixteen in one instruction, a
/// few percent of a small mesh's skinning.
pub(crate) fn max_u16(v: &[u16]) -> u16 {
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        #[target_feature(enable = "avx2")]
        fn max_avx2(v: &[u16]) -> u16 {
            v.iter().fold(0, |m, &j| m.max(j))
        }
        // SAFETY: the CPU has AVX2.
        return unsafe { max_avx2(v) };
    }
    v.iter().fold(0, |m, &j| m.max(j))
}

/// AVX2 and FMA usable: the CPU has them and the OS saves the YMM registers.
#[cfg(target_arch = "x86_64")]
fn avx2_fma() -> bool {
    #[cfg(all(target_feature = "avx2", target_feature = "fma"))]
    {
        true
    }
    #[cfg(not(all(target_feature = "avx2", target_feature = "fma")))]
    {
        use core::sync::atomic::{AtomicU8, Ordering};
        // 0 not yet asked, 1 no, 2 yes; a race only asks the CPU twice.
        static STATE: AtomicU8 = AtomicU8::new(0);
        match STATE.load(Ordering::Relaxed) {
            1 => false,
            2 => true,
            _ => {
                let yes = detect_avx2_fma();
                STATE.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
                yes
            }
        }
    }
}

#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx2", target_feature = "fma"))
))]
fn detect_avx2_fma() -> bool {
    use core::arch::x86_64::{__cpuid, __cpuid_count};
    // Bit 12 of leaf 1's ECX: FMA; leaf 7's EBX bit 5: AVX2.
    os_saves_ymm() && __cpuid(1).ecx & 1 << 12 != 0 && __cpuid_count(7, 0).ebx & 1 << 5 != 0
}

/// AVX2, BMI1 and BMI2 usable: what the full pose's decoder is compiled for a second time
/// (`ClipReader`'s AVX2 copy of its group walk: the same IEEE float operations, VEX-encoded, and
/// BMI2's shifts by a register for the bit extraction; no FMA, so the same bits).
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx2_bmi2() -> bool {
    #[cfg(all(
        target_feature = "avx2",
        target_feature = "bmi1",
        target_feature = "bmi2"
    ))]
    {
        true
    }
    #[cfg(not(all(
        target_feature = "avx2",
        target_feature = "bmi1",
        target_feature = "bmi2"
    )))]
    {
        use core::sync::atomic::{AtomicU8, Ordering};
        // 0 not yet asked, 1 no, 2 yes; a race only asks the CPU twice.
        static STATE: AtomicU8 = AtomicU8::new(0);
        match STATE.load(Ordering::Relaxed) {
            1 => false,
            2 => true,
            _ => {
                use core::arch::x86_64::__cpuid_count;
                let ebx = if os_saves_ymm() {
                    __cpuid_count(7, 0).ebx
                } else {
                    0
                };
                // Leaf 7, EBX: bit 3 BMI1, bit 5 AVX2, bit 8 BMI2.
                let yes = ebx & (1 << 3 | 1 << 5 | 1 << 8) == 1 << 3 | 1 << 5 | 1 << 8;
                STATE.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
                yes
            }
        }
    }
}

/// The CPU has leaf 7 and AVX, and the OS saves the XMM and YMM registers (XCR0 bits 1 and 2).
#[cfg(target_arch = "x86_64")]
#[allow(dead_code)] // unused when the build's target features already imply what it checks
fn os_saves_ymm() -> bool {
    use core::arch::x86_64::__cpuid;
    #[target_feature(enable = "xsave")]
    fn xcr0() -> u64 {
        // SAFETY: only called after CPUID said the OS enabled XSAVE (OSXSAVE).
        unsafe { core::arch::x86_64::_xgetbv(0) }
    }
    if __cpuid(0).eax < 7 {
        return false;
    }
    let ecx = __cpuid(1).ecx;
    // Bit 27 OSXSAVE, bit 28 AVX.
    if ecx & (1 << 27 | 1 << 28) != 1 << 27 | 1 << 28 {
        return false;
    }
    // SAFETY: OSXSAVE is set, so XGETBV exists.
    unsafe { xcr0() & 6 == 6 }
}

/// Scalar kernels: the reference of every SIMD path.
pub(crate) mod scalar {
    use glam::Mat4;

    pub fn points(m: &Mat4, src: &[[f32; 3]], dst: &mut [[f32; 4]]) {
        let m = m.as_ref();
        for (s, d) in src.iter().zip(dst) {
            let [x, y, z] = *s;
            for r in 0..4 {
                d[r] = m[r] * x + m[4 + r] * y + m[8 + r] * z + m[12 + r];
            }
        }
    }

    pub fn vectors(m: &Mat4, src: &[[f32; 3]], dst: &mut [[f32; 3]]) {
        let m = m.as_ref();
        for (s, d) in src.iter().zip(dst) {
            let [x, y, z] = *s;
            for r in 0..3 {
                d[r] = m[r] * x + m[4 + r] * y + m[8 + r] * z;
            }
        }
    }

    /// Linear-blend skinning with `K` influences; `normals` may be empty.
    #[allow(clippy::too_many_arguments)]
    pub fn skin<const K: usize>(
        palette: &[Mat4],
        joints: &[u16],
        weights: &[f32],
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        out_positions: &mut [[f32; 3]],
        out_normals: &mut [[f32; 3]],
    ) {
        for v in 0..positions.len() {
            // The blended matrix, column-major (the last row is not needed).
            let mut m = [[0.0f32; 3]; 4];
            for k in 0..K {
                let p = palette[joints[v * K + k] as usize].to_cols_array_2d();
                let w = weights[v * K + k];
                for c in 0..4 {
                    for r in 0..3 {
                        m[c][r] += p[c][r] * w;
                    }
                }
            }
            let [x, y, z] = positions[v];
            for r in 0..3 {
                out_positions[v][r] = m[0][r] * x + m[1][r] * y + m[2][r] * z + m[3][r];
            }
            if let Some(n) = normals.get(v) {
                let [x, y, z] = *n;
                for r in 0..3 {
                    out_normals[v][r] = m[0][r] * x + m[1][r] * y + m[2][r] * z;
                }
            }
        }
    }
}

/// A 4-lane float32 vector of one SIMD path and the few operations the kernels need: the
/// kernels ([`kernels`]) are written once over it, and each path only says how to load, store,
/// broadcast and multiply-add. Only targets with a SIMD path have one (x86-64, aarch64).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) trait Lanes: Copy {
    /// Four floats at `p`.
    ///
    /// # Safety
    /// `p` addresses 4 readable floats.
    unsafe fn load(p: *const f32) -> Self;
    /// Three floats at `p`, lane 3 zero (the last element of a `[[f32; 3]]`).
    ///
    /// # Safety
    /// `p` addresses 3 readable floats.
    unsafe fn load_last3(p: *const f32) -> Self;
    /// # Safety
    /// `p` addresses 4 writable floats.
    unsafe fn store(p: *mut f32, v: Self);
    /// Lanes 0..3 only.
    ///
    /// # Safety
    /// `p` addresses 3 writable floats.
    unsafe fn store_last3(p: *mut f32, v: Self);
    fn splat(x: f32) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    /// `a * b + c` (fused where the path has it).
    fn madd(a: Self, b: Self, c: Self) -> Self;
    /// Lane `L` (0..3) of `v` in every lane.
    fn lane<const L: i32>(v: Self) -> Self;
}

/// The kernels of every SIMD path, over its [`Lanes`]; each path's module wraps them in a
/// function compiled for its target feature (where `#[inline(always)]` puts them).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) mod kernels {
    use super::Lanes;
    use glam::Mat4;

    /// The first three lanes of `src[i]` (the fourth is junk unless `i` is the last).
    ///
    /// # Safety
    /// `i < src.len()`.
    #[inline(always)]
    unsafe fn load3<V: Lanes>(src: &[[f32; 3]], i: usize) -> V {
        let p = src.as_ptr() as *const f32;
        // SAFETY: i < len; reading 16 bytes stays inside unless i is the last element.
        unsafe {
            if i + 1 < src.len() {
                V::load(p.add(3 * i))
            } else {
                V::load_last3(p.add(3 * i))
            }
        }
    }

    /// Writes lanes 0..3 to `dst[i]` (16 bytes when the next element is written later anyway).
    ///
    /// # Safety
    /// `i < dst.len()`.
    #[inline(always)]
    unsafe fn store3<V: Lanes>(dst: &mut [[f32; 3]], i: usize, v: V) {
        let n = dst.len();
        let p = dst.as_mut_ptr() as *mut f32;
        // SAFETY: i < len; the 4th lane lands on dst[i + 1].x, rewritten by the caller's next
        // iteration, and only when dst[i + 1] exists.
        unsafe {
            if i + 1 < n {
                V::store(p.add(3 * i), v);
            } else {
                V::store_last3(p.add(3 * i), v);
            }
        }
    }

    #[inline(always)]
    unsafe fn cols<V: Lanes>(m: &Mat4) -> [V; 4] {
        let p = m.as_ref().as_ptr();
        // SAFETY: 16 floats.
        unsafe {
            [
                V::load(p),
                V::load(p.add(4)),
                V::load(p.add(8)),
                V::load(p.add(12)),
            ]
        }
    }

    /// `c0·x + c1·y + c2·z + c3`, x, y, z broadcast from lanes of the inputs.
    #[inline(always)]
    fn point<V: Lanes>([c0, c1, c2, c3]: [V; 4], x: V, y: V, z: V) -> V {
        V::madd(c0, x, V::madd(c1, y, V::madd(c2, z, c3)))
    }

    /// `c0·x + c1·y + c2·z` for `p`'s lanes 0..3 (a direction: no translation).
    #[inline(always)]
    fn direction<V: Lanes>([c0, c1, c2, _]: [V; 4], p: V) -> V {
        V::madd(
            c0,
            V::lane::<0>(p),
            V::madd(c1, V::lane::<1>(p), V::mul(c2, V::lane::<2>(p))),
        )
    }

    /// Seed 002: four points per iteration from three 16-byte loads
    /// (x0 y0 z0 x1 | y1 z1 x2 y2 | z2 x3 y3 z3), each component broadcast and multiplied by
    /// its matrix column, the four columns kept in registers.
    ///
    /// # Safety
    /// The CPU has the path's feature; `dst.len() == src.len()`.
    #[inline(always)]
    pub unsafe fn points<V: Lanes>(m: &Mat4, src: &[[f32; 3]], dst: &mut [[f32; 4]]) {
        let c = unsafe { cols::<V>(m) };
        let n = src.len();
        let sp = src.as_ptr() as *const f32;
        let dp = dst.as_mut_ptr() as *mut f32;
        let mut i = 0;
        while i + 4 <= n {
            // SAFETY: points i..i+4 are 12 floats of src and 16 of dst.
            unsafe {
                let a = V::load(sp.add(3 * i));
                let b = V::load(sp.add(3 * i + 4));
                let e = V::load(sp.add(3 * i + 8));
                let d0 = point(c, V::lane::<0>(a), V::lane::<1>(a), V::lane::<2>(a));
                let d1 = point(c, V::lane::<3>(a), V::lane::<0>(b), V::lane::<1>(b));
                let d2 = point(c, V::lane::<2>(b), V::lane::<3>(b), V::lane::<0>(e));
                let d3 = point(c, V::lane::<1>(e), V::lane::<2>(e), V::lane::<3>(e));
                V::store(dp.add(4 * i), d0);
                V::store(dp.add(4 * i + 4), d1);
                V::store(dp.add(4 * i + 8), d2);
                V::store(dp.add(4 * i + 12), d3);
            }
            i += 4;
        }
        while i < n {
            // SAFETY: i < n.
            unsafe {
                let p = load3::<V>(src, i);
                let d = point(c, V::lane::<0>(p), V::lane::<1>(p), V::lane::<2>(p));
                V::store(dp.add(4 * i), d);
            }
            i += 1;
        }
    }

    /// Directions (w = 0) by the matrix: normals.
    ///
    /// # Safety
    /// The CPU has the path's feature; `dst.len() == src.len()`.
    #[inline(always)]
    pub unsafe fn vectors<V: Lanes>(m: &Mat4, src: &[[f32; 3]], dst: &mut [[f32; 3]]) {
        let c = unsafe { cols::<V>(m) };
        for i in 0..src.len() {
            // SAFETY: i < len of both.
            unsafe { store3(dst, i, direction(c, load3::<V>(src, i))) };
        }
    }

    /// Linear-blend skinning, one vertex at a time: the `K` palette matrices blended by weight
    /// (four columns), then the position and normal by the blended matrix.
    ///
    /// # Safety
    /// The CPU has the path's feature; the slices have the lengths `SkinJob::validate` checks
    /// and every joint index is below `palette.len()`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn skin<V: Lanes, const K: usize>(
        palette: &[Mat4],
        joints: &[u16],
        weights: &[f32],
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        out_positions: &mut [[f32; 3]],
        out_normals: &mut [[f32; 3]],
    ) {
        let pal = palette.as_ptr() as *const f32;
        let has_normals = !normals.is_empty();
        for v in 0..positions.len() {
            // SAFETY: v·K + k < joints.len() = weights.len(); joint < palette.len().
            unsafe {
                let j = joints.as_ptr().add(v * K);
                let w = weights.as_ptr().add(v * K);
                let m = pal.add(16 * *j as usize);
                let wk = V::splat(*w);
                let mut c = [0, 4, 8, 12].map(|o| V::mul(V::load(m.add(o)), wk));
                for k in 1..K {
                    let m = pal.add(16 * *j.add(k) as usize);
                    let wk = V::splat(*w.add(k));
                    for (col, o) in c.iter_mut().zip([0, 4, 8, 12]) {
                        *col = V::madd(V::load(m.add(o)), wk, *col);
                    }
                }
                let p = load3::<V>(positions, v);
                let r = point(c, V::lane::<0>(p), V::lane::<1>(p), V::lane::<2>(p));
                store3(out_positions, v, r);
                if has_normals {
                    store3(out_normals, v, direction(c, load3::<V>(normals, v)));
                }
            }
        }
    }
}

/// A path's module: [`kernels`] compiled for its target feature over its [`Lanes`]; with
/// `skin`, the skinning kernel too (AVX2 skins with its own, [`avx2cols`]).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! path_kernels {
    ($name:ident, $feature:literal, $lanes:ty $(, $skin:ident)?) => {
        pub(crate) mod $name {
            use glam::Mat4;

            /// # Safety
            /// The CPU has the feature; `dst.len() == src.len()`.
            #[target_feature(enable = $feature)]
            pub unsafe fn points(m: &Mat4, src: &[[f32; 3]], dst: &mut [[f32; 4]]) {
                // SAFETY: the caller's promise.
                unsafe { super::kernels::points::<$lanes>(m, src, dst) }
            }

            /// # Safety
            /// The CPU has the feature; `dst.len() == src.len()`.
            #[target_feature(enable = $feature)]
            pub unsafe fn vectors(m: &Mat4, src: &[[f32; 3]], dst: &mut [[f32; 3]]) {
                // SAFETY: the caller's promise.
                unsafe { super::kernels::vectors::<$lanes>(m, src, dst) }
            }

            $(
            /// # Safety
            /// The CPU has the feature; lengths and joint indices as `SkinJob::validate` checks.
            #[target_feature(enable = $feature)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn $skin<const K: usize>(
                palette: &[Mat4],
                joints: &[u16],
                weights: &[f32],
                positions: &[[f32; 3]],
                normals: &[[f32; 3]],
                out_positions: &mut [[f32; 3]],
                out_normals: &mut [[f32; 3]],
            ) {
                // SAFETY: the caller's promise.
                unsafe {
                    super::kernels::skin::<$lanes, K>(
                        palette,
                        joints,
                        weights,
                        positions,
                        normals,
                        out_positions,
                        out_normals,
                    )
                }
            }
            )?
        }
    };
}

/// x86-64's `__m128` with a separate multiply and add (SSE2) or fused (`FMA = true`: only
/// inlined into the `avx2,fma` kernels, which run after the CPU check).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct X86<const FMA: bool>(core::arch::x86_64::__m128);

#[cfg(target_arch = "x86_64")]
impl<const FMA: bool> Lanes for X86<FMA> {
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller's promise.
        Self(unsafe { core::arch::x86_64::_mm_loadu_ps(p) })
    }
    #[inline(always)]
    unsafe fn load_last3(p: *const f32) -> Self {
        // SAFETY: the caller's promise.
        Self(unsafe { core::arch::x86_64::_mm_set_ps(0.0, *p.add(2), *p.add(1), *p) })
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: Self) {
        // SAFETY: the caller's promise.
        unsafe { core::arch::x86_64::_mm_storeu_ps(p, v.0) }
    }
    #[inline(always)]
    unsafe fn store_last3(p: *mut f32, v: Self) {
        use core::arch::x86_64::*;
        // SAFETY: the caller's promise.
        unsafe {
            _mm_store_ss(p, v.0);
            _mm_store_ss(p.add(1), _mm_shuffle_ps::<0x55>(v.0, v.0));
            _mm_store_ss(p.add(2), _mm_shuffle_ps::<0xAA>(v.0, v.0));
        }
    }
    #[inline(always)]
    fn splat(x: f32) -> Self {
        // SAFETY: SSE2 is x86-64's baseline.
        Self(unsafe { core::arch::x86_64::_mm_set1_ps(x) })
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        // SAFETY: SSE2 is x86-64's baseline.
        Self(unsafe { core::arch::x86_64::_mm_mul_ps(a.0, b.0) })
    }
    #[inline(always)]
    fn madd(a: Self, b: Self, c: Self) -> Self {
        use core::arch::x86_64::*;
        if FMA {
            // SAFETY: only inlined into the `avx2,fma` kernels, run after the CPU check.
            Self(unsafe { _mm_fmadd_ps(a.0, b.0, c.0) })
        } else {
            // SAFETY: SSE2 is x86-64's baseline.
            Self(unsafe { _mm_add_ps(_mm_mul_ps(a.0, b.0), c.0) })
        }
    }
    #[inline(always)]
    fn lane<const L: i32>(v: Self) -> Self {
        use core::arch::x86_64::*;
        let v = v.0;
        // SAFETY: SSE2 is x86-64's baseline.
        Self(unsafe {
            match L {
                0 => _mm_shuffle_ps::<0x00>(v, v),
                1 => _mm_shuffle_ps::<0x55>(v, v),
                2 => _mm_shuffle_ps::<0xAA>(v, v),
                _ => _mm_shuffle_ps::<0xFF>(v, v),
            }
        })
    }
}

#[cfg(target_arch = "x86_64")]
path_kernels!(sse2, "sse2", super::X86<false>, skin);
#[cfg(target_arch = "x86_64")]
path_kernels!(avx2fma, "avx2,fma", super::X86<true>);

/// aarch64's `float32x4_t`, fused multiply-add.
#[cfg(target_arch = "aarch64")]
#[derive(Clone, Copy)]
pub(crate) struct Neon(core::arch::aarch64::float32x4_t);

#[cfg(target_arch = "aarch64")]
impl Lanes for Neon {
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller's promise.
        Self(unsafe { core::arch::aarch64::vld1q_f32(p) })
    }
    #[inline(always)]
    unsafe fn load_last3(p: *const f32) -> Self {
        use core::arch::aarch64::*;
        // SAFETY: the caller's promise (lane 3 repeats z: only lanes 0..3 are read).
        Self(unsafe { vcombine_f32(vld1_f32(p), vld1_dup_f32(p.add(2))) })
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: Self) {
        // SAFETY: the caller's promise.
        unsafe { core::arch::aarch64::vst1q_f32(p, v.0) }
    }
    #[inline(always)]
    unsafe fn store_last3(p: *mut f32, v: Self) {
        use core::arch::aarch64::*;
        // SAFETY: the caller's promise.
        unsafe {
            vst1_f32(p, vget_low_f32(v.0));
            vst1q_lane_f32::<2>(p.add(2), v.0);
        }
    }
    #[inline(always)]
    fn splat(x: f32) -> Self {
        // SAFETY: NEON is aarch64's baseline.
        Self(unsafe { core::arch::aarch64::vdupq_n_f32(x) })
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        // SAFETY: NEON is aarch64's baseline.
        Self(unsafe { core::arch::aarch64::vmulq_f32(a.0, b.0) })
    }
    #[inline(always)]
    fn madd(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: NEON is aarch64's baseline.
        Self(unsafe { core::arch::aarch64::vfmaq_f32(c.0, a.0, b.0) })
    }
    #[inline(always)]
    fn lane<const L: i32>(v: Self) -> Self {
        use core::arch::aarch64::*;
        // SAFETY: NEON is aarch64's baseline.
        Self(unsafe {
            match L {
                0 => vdupq_laneq_f32::<0>(v.0),
                1 => vdupq_laneq_f32::<1>(v.0),
                2 => vdupq_laneq_f32::<2>(v.0),
                _ => vdupq_laneq_f32::<3>(v.0),
            }
        })
    }
}

#[cfg(target_arch = "aarch64")]
path_kernels!(neon, "neon", super::Neon, skin);

/// AVX2 + FMA skinning, one vertex per iteration with a matrix in two 256-bit registers:
/// `[c0 | c1]` and `[c2 | c3]` (two loads per influence), then the point as
/// `[c0·x | c1·y] + [c2·z | c3·1]` and the sum of the two halves. What bounds it is latency,
/// not throughput: joint index → matrix load → weighted sum → point → store per vertex, so the
/// index reads and the sum are arranged to keep that chain short (docs/RUNTIME.md, "SIMD
/// paths", has the measurements).
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2cols {
    use core::arch::x86_64::*;
    use glam::Mat4;

    /// `src[v]`'s x y z in lanes 0..3 of both halves (lane 3 junk unless `v` is the last).
    #[inline(always)]
    unsafe fn load_both(src: &[[f32; 3]], v: usize) -> __m256 {
        let p = src.as_ptr() as *const f32;
        // SAFETY: v < len; 16 bytes stay inside unless v is the last element.
        unsafe {
            if v + 1 < src.len() {
                let q = _mm_loadu_ps(p.add(3 * v));
                _mm256_set_m128(q, q)
            } else {
                let q = _mm_set_ps(0.0, *p.add(3 * v + 2), *p.add(3 * v + 1), *p.add(3 * v));
                _mm256_set_m128(q, q)
            }
        }
    }

    #[inline(always)]
    unsafe fn store(dst: &mut [[f32; 3]], v: usize, r: __m128) {
        let p = dst.as_mut_ptr() as *mut f32;
        // SAFETY: v < len; a 16-byte store's 4th lane lands on the next vertex's x, which is
        // written after it.
        unsafe {
            if v + 1 < dst.len() {
                _mm_storeu_ps(p.add(3 * v), r);
            } else {
                _mm_store_ss(p.add(3 * v), r);
                _mm_store_ss(p.add(3 * v + 1), _mm_shuffle_ps::<0x55>(r, r));
                _mm_store_ss(p.add(3 * v + 2), _mm_shuffle_ps::<0xAA>(r, r));
            }
        }
    }

    /// # Safety
    /// The CPU has AVX2 and FMA; lengths and joint indices as `SkinJob::validate` checks them.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn skin<const K: usize>(
        palette: &[Mat4],
        joints: &[u16],
        weights: &[f32],
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        out_positions: &mut [[f32; 3]],
        out_normals: &mut [[f32; 3]],
    ) {
        let pal = palette.as_ptr() as *const f32;
        let has_normals = !normals.is_empty();
        // SAFETY: v·K + k < joints.len() = weights.len(); every joint < palette.len().
        unsafe {
            let xy = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
            let zz = _mm256_set1_epi32(2);
            let one_hi = _mm256_setr_ps(0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0);
            for v in 0..positions.len() {
                let j = joints.as_ptr().add(v * K);
                let w = weights.as_ptr().add(v * K);
                // Influences 0 and 2 start two independent sums (1 and 3 are added to them),
                // joined at the end: half the dependent chain of one running sum.
                let (mut a, mut b) = (_mm256_setzero_ps(), _mm256_setzero_ps());
                let (mut a2, mut b2) = (_mm256_setzero_ps(), _mm256_setzero_ps());
                // The four indices as one integer, taken apart with shifts: read as four u16
                // the compiler gathers them into a vector register and extracts each again,
                // which puts two more steps on the way to every matrix load.
                let packed = if K == 4 {
                    (j as *const u64).read_unaligned()
                } else {
                    0
                };
                for k in 0..K {
                    let jk = if K == 4 {
                        (packed >> (16 * k)) as u16
                    } else {
                        *j.add(k)
                    };
                    let m = pal.add(16 * jk as usize);
                    let wk = _mm256_broadcast_ss(&*w.add(k));
                    let (lo, hi) = (_mm256_loadu_ps(m), _mm256_loadu_ps(m.add(8)));
                    match k {
                        0 => (a, b) = (_mm256_mul_ps(lo, wk), _mm256_mul_ps(hi, wk)),
                        2 => (a2, b2) = (_mm256_mul_ps(lo, wk), _mm256_mul_ps(hi, wk)),
                        1 => (a, b) = (_mm256_fmadd_ps(lo, wk, a), _mm256_fmadd_ps(hi, wk, b)),
                        _ => (a2, b2) = (_mm256_fmadd_ps(lo, wk, a2), _mm256_fmadd_ps(hi, wk, b2)),
                    }
                }
                if K > 2 {
                    (a, b) = (_mm256_add_ps(a, a2), _mm256_add_ps(b, b2));
                }
                let p = load_both(positions, v);
                // [z | 1]: the high half's z replaced by 1 (the translation column's factor).
                let z1 = _mm256_blend_ps::<0xF0>(_mm256_permutevar_ps(p, zz), one_hi);
                let r = _mm256_fmadd_ps(a, _mm256_permutevar_ps(p, xy), _mm256_mul_ps(b, z1));
                let r = _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps::<1>(r));
                store(out_positions, v, r);
                if has_normals {
                    let n = load_both(normals, v);
                    // A direction: c0·x + c1·y from the halves, then c2·z from the low half of
                    // `b` alone (the translation column never meets it, even as 0 × ∞).
                    let r = _mm256_mul_ps(a, _mm256_permutevar_ps(n, xy));
                    let r = _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps::<1>(r));
                    let nz = _mm256_castps256_ps128(_mm256_permutevar_ps(n, zz));
                    let r = _mm_fmadd_ps(_mm256_castps256_ps128(b), nz, r);
                    store(out_normals, v, r);
                }
            }
        }
    }
}
