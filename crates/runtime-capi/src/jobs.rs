//! The C API of the runtime's jobs ([`clipforge_runtime::jobs`]): blend, local → object,
//! skinning palette, transform points, skin. Each job is a C struct of pointer + count spans
//! (ozz's style), passed to `cf_<job>_validate` (the job's `validate()`: nothing is written) or
//! `cf_<job>_run` (validates, then runs).
//!
//! Caller arrays are viewed as Rust slices for the length of the call (no copy, no allocation),
//! so each is checked first: NULL only with a count of 0, aligned (16 bytes for pose arrays and
//! matrices, the element's alignment otherwise), its size within what an allocation can be, and
//! every output disjoint from every other array of the call (`CF_ERR_OVERLAP`: a Rust `&mut`
//! slice may not alias; inputs may overlap each other). The job's own `validate()` then checks
//! lengths, indices, weights and parent order; its `JobError` becomes a status and the message
//! of `cf_last_error()` ([`job_error`]).

use crate::{Fail, Res, call, cf_pose, cf_status, checked, fail};
use clipforge_runtime::jobs::{
    BlendJob, BlendLayer, JobError, LocalToObjectJob, PaletteOut, PoseRef, SimdPath, SkinJob,
    SkinningPaletteJob, TransformPointsJob,
};
use glam::{Mat4, Quat, Vec3A, Vec4};
use std::fmt;
use std::mem::{MaybeUninit, align_of, size_of};
use std::ptr::NonNull;

/// Most layers (and most additive layers) one blend takes: the layers are gathered on the
/// stack, so a blend allocates nothing.
pub const CF_MAX_BLEND_LAYERS: usize = 32;

/// Which code path a job runs (local → object and the vertex jobs): one of the `CF_SIMD_*` values.
pub type cf_simd = u32;
/// The fastest path this CPU has (AVX2 + FMA, else SSE2, on x86-64; NEON on aarch64).
pub const CF_SIMD_AUTO: cf_simd = 0;
/// Plain code, every target: what every SIMD path is tested against.
pub const CF_SIMD_SCALAR: cf_simd = 1;
/// x86-64 SSE2.
pub const CF_SIMD_SSE2: cf_simd = 2;
/// x86-64 AVX2 + FMA, where the CPU has them.
pub const CF_SIMD_AVX2_FMA: cf_simd = 3;
/// aarch64 NEON.
pub const CF_SIMD_NEON: cf_simd = 4;

/// The matrices a skinning palette is written as: one of the `CF_PALETTE_*` values.
pub type cf_palette_layout = u32;
/// 4×4 column-major: 16 floats a joint.
pub const CF_PALETTE_4X4: cf_palette_layout = 0;
/// The first three rows (the fourth is always 0 0 0 1): 12 floats a joint, row-major.
pub const CF_PALETTE_3X4: cf_palette_layout = 1;

/// One blend layer: a local pose (`num_bones` equal to the output's), its weight (zero and
/// negative weights leave it out), and optionally a weight per bone multiplied with it
/// (`bone_weights`, `num_bone_weights` = the bones; NULL with 0 for 1 everywhere).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cf_blend_layer {
    pub pose: cf_pose,
    pub weight: f32,
    pub bone_weights: *const f32,
    pub num_bone_weights: usize,
}

/// Blends `layers` into `out`, then applies `additive` on top (`docs/RUNTIME.md`, "Jobs"):
/// translations and scales the weighted mean, rotations the sign-fixed weighted sum,
/// normalised; where the weights sum to less than `threshold` (finite, > 0; ozz uses 0.1) the
/// `rest` pose is blended in with the difference. At most `CF_MAX_BLEND_LAYERS` of each kind.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cf_blend_job {
    pub layers: *const cf_blend_layer,
    pub num_layers: usize,
    pub additive: *const cf_blend_layer,
    pub num_additive: usize,
    pub rest: cf_pose,
    pub threshold: f32,
    pub out: cf_pose,
}

/// Local → object space for bones `start..end` (0..`num_bones` for all): `parents[b]` is bone
/// b's parent (`CF_NO_PARENT` for a root, else a smaller index: `cf_clip_parents` writes
/// them); `local` and `out` have `num_bones` bones. Bones before `start` whose children are in
/// the range must already hold their object transforms in `out`. `simd`: the path
/// (`CF_SIMD_AUTO`, 0, the fastest; `CF_SIMD_SCALAR` normalises each rotation exactly, the others
/// by one Newton step, within 1e-6 of it: an engine that needs the same bits on every CPU picks
/// one path).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cf_local_to_object_job {
    pub parents: *const u32,
    pub num_bones: usize,
    pub local: cf_pose,
    pub start: usize,
    pub end: usize,
    pub out: cf_pose,
    pub simd: cf_simd,
}

/// `out[i] = M(object[joint(i)]) · inverse_bind[i]` for `num_joints` joints, where `joint(i)`
/// is `joints[i]` (`num_joints` of them) or `i` when `joints` is NULL with `joints_count` 0.
/// `inverse_bind`: 16 floats a joint, column-major, 16-byte aligned. `out`: `out_count`
/// matrices of the `layout` (16 or 12 floats each), 16-byte aligned.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cf_skinning_palette_job {
    pub object: cf_pose,
    pub inverse_bind: *const f32,
    pub num_joints: usize,
    pub joints: *const u16,
    pub joints_count: usize,
    pub layout: cf_palette_layout,
    pub out: *mut f32,
    pub out_count: usize,
}

/// Points (x y z, w = 1) and normals (w = 0) by one column-major 4×4 `matrix` (16 floats,
/// 16-byte aligned): `out_points` gets x y z w (4 floats a point), `out_normals` x y z. Counts
/// are of points and normals; the normal arrays may be NULL with counts 0.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cf_transform_points_job {
    pub matrix: *const f32,
    pub points: *const f32,
    pub num_points: usize,
    pub out_points: *mut f32,
    pub out_points_count: usize,
    pub normals: *const f32,
    pub num_normals: usize,
    pub out_normals: *mut f32,
    pub out_normals_count: usize,
    pub simd: cf_simd,
}

/// Linear-blend skinning: each vertex's position (and normal) by `Σ_k weight_k ·
/// palette[joint_k]` over its `influences` (1–4) joints. `palette`: `palette_count` 4×4
/// column-major matrices, 16-byte aligned; `joints` and `weights`: `influences` per vertex,
/// vertex after vertex (counts = vertices × influences; weights used as given); positions and
/// normals 3 floats a vertex (counts in vertices; normals NULL with 0 to skip them).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cf_skin_job {
    pub palette: *const f32,
    pub palette_count: usize,
    pub influences: u32,
    pub joints: *const u16,
    pub joints_count: usize,
    pub weights: *const f32,
    pub weights_count: usize,
    pub positions: *const f32,
    pub num_vertices: usize,
    pub normals: *const f32,
    pub normals_count: usize,
    pub out_positions: *mut f32,
    pub out_positions_count: usize,
    pub out_normals: *mut f32,
    pub out_normals_count: usize,
    pub simd: cf_simd,
}

// ---- Checking caller arrays ---------------------------------------------------------------------

/// A job's validate() error as a status and message.
pub(crate) fn job_error(e: JobError) -> Fail {
    use cf_status::*;
    #[allow(unreachable_patterns)] // a variant the runtime may add is "invalid argument"
    let status = match e {
        JobError::Length { .. } => CF_ERR_LENGTH_MISMATCH,
        JobError::Index { .. } | JobError::Range { .. } => CF_ERR_INDEX_OUT_OF_RANGE,
        JobError::ParentOrder { .. } => CF_ERR_PARENT_ORDER,
        JobError::NotFinite { .. } => CF_ERR_NOT_FINITE,
        JobError::Unavailable(_) => CF_ERR_UNAVAILABLE,
        JobError::Influences(_) => CF_ERR_INVALID_ARGUMENT,
        _ => CF_ERR_INVALID_ARGUMENT,
    };
    Fail {
        status,
        detail: e.to_string(),
    }
}

fn simd(v: cf_simd) -> Res<SimdPath> {
    let path = match v {
        CF_SIMD_AUTO => SimdPath::Auto,
        CF_SIMD_SCALAR => SimdPath::Scalar,
        CF_SIMD_SSE2 => SimdPath::Sse2,
        CF_SIMD_AVX2_FMA => SimdPath::Avx2Fma,
        CF_SIMD_NEON => SimdPath::Neon,
        _ => {
            return fail(
                cf_status::CF_ERR_INVALID_ARGUMENT,
                format!("simd {v} is not one of the CF_SIMD_* values (0 to 4)"),
            );
        }
    };
    if path.available() {
        Ok(path)
    } else {
        Err(job_error(JobError::Unavailable(path)))
    }
}

/// A checked caller array of `n` `T`s (dangling but aligned when `n` is 0), turned into a
/// slice only after every array of the call was checked against the others.
#[derive(Clone, Copy)]
struct Arr<T> {
    p: *mut T,
    n: usize,
}

impl<T> Arr<T> {
    /// The empty array.
    fn empty() -> Self {
        Arr {
            p: NonNull::dangling().as_ptr(),
            n: 0,
        }
    }

    /// `p` holding `n` `T`s: NULL only with `n` 0, aligned to `align` (and `T`'s), at most
    /// `isize::MAX` bytes. Any pointer goes with `n` 0.
    fn new(p: *const T, n: usize, align: usize, what: impl fmt::Display) -> Res<Self> {
        if n == 0 {
            return Ok(Self::empty());
        }
        if p.is_null() {
            return fail(
                cf_status::CF_ERR_NULL_POINTER,
                format!("{what} is NULL but its count is {n}"),
            );
        }
        let align = align.max(align_of::<T>());
        if !(p as usize).is_multiple_of(align) {
            return fail(
                cf_status::CF_ERR_MISALIGNED_POINTER,
                format!("{what} ({p:p}) is not aligned to {align} bytes"),
            );
        }
        if n > isize::MAX as usize / size_of::<T>().max(1) {
            return fail(
                cf_status::CF_ERR_INVALID_ARGUMENT,
                format!("{what}: count {n} is larger than any array"),
            );
        }
        Ok(Arr { p: p.cast_mut(), n })
    }

    fn span(&self, what: &'static str, at: Option<usize>, out: bool) -> Span {
        let start = self.p as usize;
        Span {
            start,
            end: start.saturating_add(self.n * size_of::<T>()),
            what,
            at,
            out,
        }
    }

    /// # Safety
    /// The caller's contract: `n` readable `T`s, not written by anyone during the call; no
    /// output of the call overlaps it (checked by [`Spans::check`]).
    unsafe fn get<'a>(self) -> &'a [T] {
        // SAFETY: per the contract; `p` is aligned and non-NULL (dangling for n = 0).
        unsafe { std::slice::from_raw_parts(self.p, self.n) }
    }

    /// # Safety
    /// As [`Self::get`], writable, and no other array of the call overlaps it.
    unsafe fn get_mut<'a>(self) -> &'a mut [T] {
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts_mut(self.p, self.n) }
    }
}

/// The name of an array in messages: `what[at].field` (formatted only on failure).
struct Name(&'static str, Option<usize>, &'static str);

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)?;
        if let Some(i) = self.1 {
            write!(f, "[{i}]")?;
        }
        if !self.2.is_empty() {
            write!(f, ".{}", self.2)?;
        }
        Ok(())
    }
}

/// The three arrays of a `cf_pose`, checked.
#[derive(Clone, Copy)]
struct PoseArrs {
    r: Arr<Quat>,
    t: Arr<Vec3A>,
    s: Arr<Vec3A>,
}

impl PoseArrs {
    fn new<const N: usize>(
        p: &cf_pose,
        what: &'static str,
        at: Option<usize>,
        out: bool,
        spans: &mut Spans<N>,
    ) -> Res<Self> {
        let n = p.num_bones;
        let a = PoseArrs {
            r: Arr::new(
                p.rotations.cast::<Quat>(),
                n,
                16,
                Name(what, at, "rotations"),
            )?,
            t: Arr::new(
                p.translations.cast::<Vec3A>(),
                n,
                16,
                Name(what, at, "translations"),
            )?,
            s: Arr::new(p.scales.cast::<Vec3A>(), n, 16, Name(what, at, "scales"))?,
        };
        spans.push(a.r.span(what, at, out))?;
        spans.push(a.t.span(what, at, out))?;
        spans.push(a.s.span(what, at, out))?;
        Ok(a)
    }

    /// # Safety
    /// As [`Arr::get`].
    unsafe fn get<'a>(self) -> PoseRef<'a> {
        // SAFETY: per the contract.
        unsafe {
            PoseRef {
                rotations: self.r.get(),
                translations: self.t.get(),
                scales: self.s.get(),
            }
        }
    }

    /// # Safety
    /// As [`Arr::get_mut`].
    unsafe fn get_mut<'a>(self) -> (&'a mut [Quat], &'a mut [Vec3A], &'a mut [Vec3A]) {
        // SAFETY: per the contract.
        unsafe { (self.r.get_mut(), self.t.get_mut(), self.s.get_mut()) }
    }
}

/// The byte range of one array of a call.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    what: &'static str,
    /// The layer index, for the arrays of a blend layer.
    at: Option<usize>,
    out: bool,
}

impl Span {
    fn name(&self) -> String {
        match self.at {
            Some(i) => format!("{}[{i}]", self.what),
            None => self.what.to_string(),
        }
    }
}

/// A fixed-capacity list on the stack, filled in order; nothing is initialised past what was
/// pushed (a blend's lists are several kilobytes: zeroing them cost more than the blend).
struct Stack<T: Copy, const N: usize> {
    v: [MaybeUninit<T>; N],
    n: usize,
}

impl<T: Copy, const N: usize> Stack<T, N> {
    fn new() -> Self {
        Stack {
            v: [const { MaybeUninit::uninit() }; N],
            n: 0,
        }
    }

    fn push(&mut self, x: T) -> Res<()> {
        let Some(slot) = self.v.get_mut(self.n) else {
            // Unreachable: the layer counts are checked first. Kept total anyway.
            return fail(
                cf_status::CF_ERR_INVALID_ARGUMENT,
                "too many arrays in one call",
            );
        };
        slot.write(x);
        self.n += 1;
        Ok(())
    }

    fn as_slice(&self) -> &[T] {
        // SAFETY: the first `n` elements were written by `push`.
        unsafe { std::slice::from_raw_parts(self.v.as_ptr().cast::<T>(), self.n) }
    }
}

/// Every array of a call, to refuse an output that overlaps any other array.
struct Spans<const N: usize>(Stack<Span, N>);

/// A blend's arrays at most: 4 per layer of each kind, the rest pose and the output.
const BLEND_SPANS: usize = 2 * CF_MAX_BLEND_LAYERS * 4 + 8;

impl<const N: usize> Spans<N> {
    fn new() -> Self {
        Spans(Stack::new())
    }

    fn push(&mut self, s: Span) -> Res<()> {
        self.0.push(s)
    }

    fn check(&self) -> Res<()> {
        let v = self.0.as_slice();
        for (i, a) in v.iter().enumerate() {
            if !a.out || a.start == a.end {
                continue;
            }
            for (j, b) in v.iter().enumerate() {
                if i != j && b.start != b.end && a.start < b.end && b.start < a.end {
                    return fail(
                        cf_status::CF_ERR_OVERLAP,
                        format!(
                            "{} overlaps {} (an output may not share memory with any other \
                             array of the call)",
                            a.name(),
                            b.name()
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

/// Reads the caller's job struct once (later changes to it do not reach this call).
///
/// # Safety
/// `job` points to a readable `T`.
unsafe fn read<T>(job: *const T) -> Res<T> {
    checked(job, "job")?;
    // SAFETY: not NULL, aligned, readable per the contract.
    Ok(unsafe { job.read() })
}

// ---- The jobs ------------------------------------------------------------------------------------

/// The checked arrays of one blend layer.
#[derive(Clone, Copy)]
struct LayerArrs {
    pose: PoseArrs,
    weight: f32,
    bone_weights: Option<Arr<f32>>,
}

/// Reads `n` caller layers into `into`, checking each one's arrays.
///
/// # Safety
/// `p` points to `n` readable `cf_blend_layer`s.
unsafe fn read_layers(
    p: *const cf_blend_layer,
    n: usize,
    what: &'static str,
    into: &mut Stack<LayerArrs, CF_MAX_BLEND_LAYERS>,
    spans: &mut Spans<BLEND_SPANS>,
) -> Res<()> {
    if n > CF_MAX_BLEND_LAYERS {
        return fail(
            cf_status::CF_ERR_INVALID_ARGUMENT,
            format!(
                "{n} {what}: a blend takes at most CF_MAX_BLEND_LAYERS ({CF_MAX_BLEND_LAYERS})"
            ),
        );
    }
    let list = Arr::new(p, n, 1, what)?;
    for i in 0..n {
        // SAFETY: `i < n`, the list's length (contract); read once, by value.
        let l = unsafe { list.p.add(i).read() };
        let pose = PoseArrs::new(&l.pose, what, Some(i), false, spans)?;
        let bone_weights = if l.bone_weights.is_null() && l.num_bone_weights == 0 {
            None
        } else {
            let w = Arr::new(
                l.bone_weights,
                l.num_bone_weights,
                1,
                Name(what, Some(i), "bone_weights"),
            )?;
            spans.push(w.span(what, Some(i), false))?;
            Some(w)
        };
        into.push(LayerArrs {
            pose,
            weight: l.weight,
            bone_weights,
        })?;
    }
    Ok(())
}

/// # Safety
/// The job's arrays hold what their counts say (`cf_blend_validate`'s contract).
unsafe fn blend(job: *const cf_blend_job, run: bool) -> Res<()> {
    // SAFETY: the caller's contract.
    let j = unsafe { read(job)? };
    let mut spans = Spans::<BLEND_SPANS>::new();
    let out = PoseArrs::new(&j.out, "out", None, true, &mut spans)?;
    let rest = PoseArrs::new(&j.rest, "rest", None, false, &mut spans)?;
    let (mut layers, mut additive) = (Stack::new(), Stack::new());
    // SAFETY: the caller's contract.
    unsafe { read_layers(j.layers, j.num_layers, "layers", &mut layers, &mut spans)? };
    // SAFETY: as above.
    unsafe {
        read_layers(
            j.additive,
            j.num_additive,
            "additive",
            &mut additive,
            &mut spans,
        )?
    };
    spans.check()?;
    // Filled in place: a list of 32 layers is kilobytes, and moving it costs.
    let fill = |arrs: &Stack<LayerArrs, CF_MAX_BLEND_LAYERS>,
                into: &mut Stack<BlendLayer, CF_MAX_BLEND_LAYERS>|
     -> Res<()> {
        for a in arrs.as_slice() {
            // SAFETY: checked above, disjoint from every output.
            into.push(unsafe {
                BlendLayer {
                    pose: a.pose.get(),
                    weight: a.weight,
                    bone_weights: a.bone_weights.map(|w| w.get()),
                }
            })?;
        }
        Ok(())
    };
    let (mut l, mut ad) = (Stack::new(), Stack::new());
    fill(&layers, &mut l)?;
    fill(&additive, &mut ad)?;
    // SAFETY: checked above; the output overlaps no other array.
    let (or, ot, os) = unsafe { out.get_mut() };
    let mut job = BlendJob {
        layers: l.as_slice(),
        additive: ad.as_slice(),
        // SAFETY: checked above.
        rest: unsafe { rest.get() },
        threshold: j.threshold,
        out_rotations: or,
        out_translations: ot,
        out_scales: os,
    };
    // run() validates first: validating here too would double the checks' cost.
    if run { job.run() } else { job.validate() }.map_err(job_error)
}

/// # Safety
/// The job's arrays hold what their counts say.
unsafe fn local_to_object(job: *const cf_local_to_object_job, run: bool) -> Res<()> {
    // SAFETY: the caller's contract.
    let j = unsafe { read(job)? };
    let path = simd(j.simd)?;
    let mut spans = Spans::<8>::new();
    let out = PoseArrs::new(&j.out, "out", None, true, &mut spans)?;
    let local = PoseArrs::new(&j.local, "local", None, false, &mut spans)?;
    let parents = Arr::new(j.parents, j.num_bones, 1, "parents")?;
    spans.push(parents.span("parents", None, false))?;
    spans.check()?;
    // SAFETY: checked above; the output overlaps no other array.
    let (or, ot, os) = unsafe { out.get_mut() };
    // SAFETY: as above.
    let mut job = unsafe {
        LocalToObjectJob {
            parents: parents.get(),
            local: local.get(),
            start: j.start,
            end: j.end,
            out_rotations: or,
            out_translations: ot,
            out_scales: os,
        }
    };
    // run_with() validates first: validating here too would double the checks' cost.
    if run {
        job.run_with(path)
    } else {
        job.validate()
    }
    .map_err(job_error)
}

/// # Safety
/// The job's arrays hold what their counts say.
unsafe fn skinning_palette(job: *const cf_skinning_palette_job, run: bool) -> Res<()> {
    // SAFETY: the caller's contract.
    let j = unsafe { read(job)? };
    let mut spans = Spans::<8>::new();
    let object = PoseArrs::new(&j.object, "object", None, false, &mut spans)?;
    let ib = Arr::new(
        j.inverse_bind.cast::<Mat4>(),
        j.num_joints,
        16,
        "inverse_bind",
    )?;
    spans.push(ib.span("inverse_bind", None, false))?;
    let joints = if j.joints.is_null() && j.joints_count == 0 {
        None
    } else {
        let a = Arr::new(j.joints, j.joints_count, 1, "joints")?;
        spans.push(a.span("joints", None, false))?;
        Some(a)
    };
    enum Out {
        M4(Arr<Mat4>),
        R3(Arr<[Vec4; 3]>),
    }
    let out = match j.layout {
        CF_PALETTE_4X4 => {
            let a = Arr::new(j.out.cast::<Mat4>(), j.out_count, 16, "out")?;
            spans.push(a.span("out", None, true))?;
            Out::M4(a)
        }
        CF_PALETTE_3X4 => {
            let a = Arr::new(j.out.cast::<[Vec4; 3]>(), j.out_count, 16, "out")?;
            spans.push(a.span("out", None, true))?;
            Out::R3(a)
        }
        l => {
            return fail(
                cf_status::CF_ERR_INVALID_ARGUMENT,
                format!("layout {l} is neither CF_PALETTE_4X4 (0) nor CF_PALETTE_3X4 (1)"),
            );
        }
    };
    spans.check()?;
    // SAFETY: checked above; the output overlaps no other array.
    let mut job = unsafe {
        SkinningPaletteJob {
            object: object.get(),
            inverse_bind: ib.get(),
            joints: joints.map(|a| a.get()),
            out: match out {
                Out::M4(a) => PaletteOut::Mat4(a.get_mut()),
                Out::R3(a) => PaletteOut::Rows3x4(a.get_mut()),
            },
        }
    };
    // run() validates first: validating here too would double the checks' cost.
    if run { job.run() } else { job.validate() }.map_err(job_error)
}

/// # Safety
/// The job's arrays hold what their counts say.
unsafe fn transform_points(job: *const cf_transform_points_job, run: bool) -> Res<()> {
    // SAFETY: the caller's contract.
    let j = unsafe { read(job)? };
    let path = simd(j.simd)?;
    let mut spans = Spans::<8>::new();
    let m = Arr::new(j.matrix.cast::<Mat4>(), 1, 16, "matrix")?;
    let p = Arr::new(j.points.cast::<[f32; 3]>(), j.num_points, 1, "points")?;
    let op = Arr::new(
        j.out_points.cast::<[f32; 4]>(),
        j.out_points_count,
        1,
        "out_points",
    )?;
    let n = Arr::new(j.normals.cast::<[f32; 3]>(), j.num_normals, 1, "normals")?;
    let on = Arr::new(
        j.out_normals.cast::<[f32; 3]>(),
        j.out_normals_count,
        1,
        "out_normals",
    )?;
    spans.push(m.span("matrix", None, false))?;
    spans.push(p.span("points", None, false))?;
    spans.push(op.span("out_points", None, true))?;
    spans.push(n.span("normals", None, false))?;
    spans.push(on.span("out_normals", None, true))?;
    spans.check()?;
    // SAFETY: checked above; the outputs overlap no other array.
    let mut job = unsafe {
        TransformPointsJob {
            matrix: &m.get()[0],
            points: p.get(),
            out_points: op.get_mut(),
            normals: n.get(),
            out_normals: on.get_mut(),
        }
    };
    // run_with() validates first.
    if run {
        job.run_with(path)
    } else {
        job.validate()
    }
    .map_err(job_error)
}

/// # Safety
/// The job's arrays hold what their counts say.
unsafe fn skin(job: *const cf_skin_job, run: bool) -> Res<()> {
    // SAFETY: the caller's contract.
    let j = unsafe { read(job)? };
    let path = simd(j.simd)?;
    let mut spans = Spans::<8>::new();
    let pal = Arr::new(j.palette.cast::<Mat4>(), j.palette_count, 16, "palette")?;
    let jo = Arr::new(j.joints, j.joints_count, 1, "joints")?;
    let w = Arr::new(j.weights, j.weights_count, 1, "weights")?;
    let p = Arr::new(
        j.positions.cast::<[f32; 3]>(),
        j.num_vertices,
        1,
        "positions",
    )?;
    let n = Arr::new(j.normals.cast::<[f32; 3]>(), j.normals_count, 1, "normals")?;
    let op = Arr::new(
        j.out_positions.cast::<[f32; 3]>(),
        j.out_positions_count,
        1,
        "out_positions",
    )?;
    let on = Arr::new(
        j.out_normals.cast::<[f32; 3]>(),
        j.out_normals_count,
        1,
        "out_normals",
    )?;
    spans.push(pal.span("palette", None, false))?;
    spans.push(jo.span("joints", None, false))?;
    spans.push(w.span("weights", None, false))?;
    spans.push(p.span("positions", None, false))?;
    spans.push(n.span("normals", None, false))?;
    spans.push(op.span("out_positions", None, true))?;
    spans.push(on.span("out_normals", None, true))?;
    spans.check()?;
    // SAFETY: checked above; the outputs overlap no other array.
    let mut job = unsafe {
        SkinJob {
            palette: pal.get(),
            influences: j.influences as usize,
            joints: jo.get(),
            weights: w.get(),
            positions: p.get(),
            normals: n.get(),
            out_positions: op.get_mut(),
            out_normals: on.get_mut(),
        }
    };
    // run_with() validates first.
    if run {
        job.run_with(path)
    } else {
        job.validate()
    }
    .map_err(job_error)
}

// ---- Exported ------------------------------------------------------------------------------------

// The contract of every job function (`# Safety` below): `job` points to a readable job struct;
// each of its arrays points to as many readable (outputs: writable) elements as its count says,
// and no other thread writes them during the call. Everything else is checked.

/// Checks a blend job (every pointer, count, weight; nothing written): `CF_OK` when
/// `cf_blend_run` would run it.
///
/// # Safety
/// See the job contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_blend_validate(job: *const cf_blend_job) -> cf_status {
    // SAFETY: the same contract.
    call("cf_blend_validate", || unsafe { blend(job, false) })
}

/// Validates, then blends into `job->out`.
///
/// # Safety
/// See the job contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_blend_run(job: *const cf_blend_job) -> cf_status {
    // SAFETY: the same contract.
    call("cf_blend_run", || unsafe { blend(job, true) })
}

/// Checks a local → object job (lengths, range, parent order, the SIMD path; nothing written).
///
/// # Safety
/// See the job contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_local_to_object_validate(
    job: *const cf_local_to_object_job,
) -> cf_status {
    // SAFETY: the same contract.
    call("cf_local_to_object_validate", || unsafe {
        local_to_object(job, false)
    })
}

/// Validates, then composes bones `start..end` into `job->out` on `job->simd`'s path.
///
/// # Safety
/// See the job contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_local_to_object_run(job: *const cf_local_to_object_job) -> cf_status {
    // SAFETY: the same contract.
    call("cf_local_to_object_run", || unsafe {
        local_to_object(job, true)
    })
}

/// Checks a skinning palette job (lengths, every joint index, the layout; nothing written).
///
/// # Safety
/// See the job contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_skinning_palette_validate(
    job: *const cf_skinning_palette_job,
) -> cf_status {
    // SAFETY: the same contract.
    call("cf_skinning_palette_validate", || unsafe {
        skinning_palette(job, false)
    })
}

/// Validates, then writes the palette into `job->out`.
///
/// # Safety
/// See the job contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_skinning_palette_run(job: *const cf_skinning_palette_job) -> cf_status {
    // SAFETY: the same contract.
    call("cf_skinning_palette_run", || unsafe {
        skinning_palette(job, true)
    })
}

/// Checks a transform points job (output lengths, the SIMD path; nothing written).
///
/// # Safety
/// See the job contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_transform_points_validate(
    job: *const cf_transform_points_job,
) -> cf_status {
    // SAFETY: the same contract.
    call("cf_transform_points_validate", || unsafe {
        transform_points(job, false)
    })
}

/// Validates, then transforms on `job->simd`'s path.
///
/// # Safety
/// See the job contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_transform_points_run(job: *const cf_transform_points_job) -> cf_status {
    // SAFETY: the same contract.
    call("cf_transform_points_run", || unsafe {
        transform_points(job, true)
    })
}

/// Checks a skinning job (influences, every length and joint index, the SIMD path; nothing
/// written).
///
/// # Safety
/// See the job contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_skin_validate(job: *const cf_skin_job) -> cf_status {
    // SAFETY: the same contract.
    call("cf_skin_validate", || unsafe { skin(job, false) })
}

/// Validates, then skins on `job->simd`'s path.
///
/// # Safety
/// See the job contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cf_skin_run(job: *const cf_skin_job) -> cf_status {
    // SAFETY: the same contract.
    call("cf_skin_run", || unsafe { skin(job, true) })
}
