//! Importers and exporters: ACL's `.acl.sjson` clip format, BVH motion capture, glTF 2.0, FBX.
//!
//! - [`load_clips`] reads any supported file (dispatch on the file name, see [`ClipFormat`]);
//!   [`load_clips_from_bytes`] does the same for data already in memory;
//!   [`load_clips_with_warnings`] also returns non-fatal findings (e.g. extra BVH frames).
//! - [`write_acl_clip`] / [`write_acl_clip_with`] write ACL's clip format (version 5).
//!
//! Conventions shared by the importers:
//! - Units: clips are in centimetres (ACL's 0.01 cm error threshold assumes it). ACL files and
//!   BVH are taken as they are; glTF (metres) is converted to centimetres, see [`gltf`]; FBX is
//!   converted from its own unit and axis system to centimetres, Y-up, see [`fbx`].
//! - Rotations are normalized with f64 arithmetic; a rotation already of unit length to f32
//!   precision (|length − 1| ≤ 1e-6) keeps its exact bits, so write → read round-trips exactly.
//! - Errors name the file, the line when the format has lines, and what is wrong. No input makes
//!   an importer panic; panics of the gltf crate are caught without printing ([`catch_quietly`]).
//! - Hostile input: files are read only when regular ([`clipforge_base::fsio::read_regular`]); before
//!   allocating samples an importer estimates what import and compression of the clip need
//!   ([`crate::limits::clip_memory_estimate`]; for glTF the sum over the file's animations
//!   and keyframes) and refuses a clip over [`crate::limits::budget_for_input`] with an
//!   error of kind [`ImportErrorKind::OverBudget`] ([`ImportError::limit`]).

pub mod acl;
pub(crate) mod bvh;
pub mod fbx;
pub mod gltf;
pub mod sjson;

pub use acl::{AclWriteOptions, write_acl_additive_without_base, write_acl_clip_with};

use super::clip::{ClipError, RawClip};
use super::limits;
use super::skeleton::{BoneDesc, Skeleton, SkeletonError};
use glam::{Quat, Vec3};
use std::fmt;
use std::path::{Path, PathBuf};

/// An import failure: which file, where (line, when the format has lines), what is wrong (the
/// message users read) and its [`ImportErrorKind`] (what code decides on).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}{}: {message}", .path.display(), line_suffix(*.line))]
pub struct ImportError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
    pub kind: ImportErrorKind,
}

/// What kind of import failure an [`ImportError`] is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ImportErrorKind {
    /// The file is not a valid clip of its format (or cannot be read).
    #[default]
    Invalid,
    /// An `.acl.sjson` scalar track list given to the clip loader (it compresses to a `.cfs`).
    ScalarTrackList,
    /// Refused for memory before allocating: `needed` bytes (when the importer could tell) over
    /// `budget`.
    OverBudget { needed: Option<u64>, budget: u64 },
}

fn line_suffix(line: Option<usize>) -> String {
    line.map(|l| format!(":{l}")).unwrap_or_default()
}

impl ImportError {
    pub fn new(path: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line,
            message: message.into(),
            kind: ImportErrorKind::Invalid,
        }
    }

    /// The same error, of kind `kind`.
    pub(crate) fn with_kind(self, kind: ImportErrorKind) -> Self {
        Self { kind, ..self }
    }

    /// The resource limit that refused the clip, if one did (a report's `limit`).
    pub fn limit(&self) -> Option<limits::Limit> {
        matches!(self.kind, ImportErrorKind::OverBudget { .. }).then_some(limits::Limit::Memory)
    }

    /// True when the clip was refused for memory, so a report can say which limit was hit.
    pub fn is_over_budget(&self) -> bool {
        self.limit() == Some(limits::Limit::Memory)
    }
}

/// Clip file formats we read. What the program says and does about each is its [`FormatInfo`]
/// row ([`ClipFormat::info`]): add a format there, in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ClipFormat {
    AclSjson,
    Bvh,
    Gltf,
    Fbx,
}

/// What the importers return: the clips of one file and the non-fatal findings.
pub type Loaded = (Vec<RawClip>, Vec<ImportWarning>);
/// An importer reading bytes in memory ([`FormatInfo::load_bytes`]).
pub type LoadBytes = fn(&[u8], &Path, &ImportOptions) -> Result<Loaded, ImportError>;
/// An importer reading a file itself ([`FormatInfo::load_file`]).
pub type LoadFile = fn(&Path, &ImportOptions) -> Result<Loaded, ImportError>;

/// One clip format: everything detection, output naming, reports, the app and `--help` say
/// about it.
pub struct FormatInfo {
    pub format: ClipFormat,
    /// What the format is called in prose ("glTF/GLB").
    pub name: &'static str,
    /// File name endings, lowercase, with the dot; matched case-insensitively.
    pub extensions: &'static [&'static str],
    /// The reports' `format` field and the app's Format column.
    pub label: &'static str,
    /// How a message names a file of this format ("a BVH clip").
    pub noun: &'static str,
    /// True when the file says its own length unit (glTF: metres by specification; FBX:
    /// `UnitScaleFactor`) and the importer converts to cm: a folder's `units` does not apply.
    pub carries_units: bool,
    /// True when the importer samples keyframe curves at a rate it chooses (`--sample-rate`
    /// applies); false when the file stores its samples and their rate.
    pub sampled_from_curves: bool,
    /// Reads the clips from bytes in memory (`path` names them in errors).
    pub load_bytes: LoadBytes,
    /// Reads the clips from a file, when the format needs the path itself (a glTF's external
    /// buffers, next to it); `None`: the file is read whole and given to `load_bytes`.
    pub load_file: Option<LoadFile>,
}

const ACL_SJSON: FormatInfo = FormatInfo {
    format: ClipFormat::AclSjson,
    name: "ACL",
    extensions: &[".acl.sjson"],
    label: "acl.sjson",
    noun: "an ACL clip (.acl.sjson)",
    carries_units: false,
    sampled_from_curves: false,
    load_bytes: |bytes, path, _| {
        let text = utf8(bytes, path)?;
        acl::read_acl_clip(text, path).map(|c| (vec![c], Vec::new()))
    },
    load_file: None,
};

const BVH: FormatInfo = FormatInfo {
    format: ClipFormat::Bvh,
    name: "BVH",
    extensions: &[".bvh"],
    label: "bvh",
    noun: "a BVH clip",
    carries_units: false,
    sampled_from_curves: false,
    load_bytes: |bytes, path, _| bvh::read_bvh(bytes, path).map(|(c, w)| (vec![c], w)),
    load_file: None,
};

const GLTF: FormatInfo = FormatInfo {
    format: ClipFormat::Gltf,
    name: "glTF/GLB",
    extensions: &[".gltf", ".glb"],
    label: "gltf",
    noun: "a glTF clip",
    carries_units: true,
    sampled_from_curves: true,
    load_bytes: gltf::load_gltf_slice_with_options,
    load_file: Some(gltf::load_gltf_file_with_options),
};

const FBX: FormatInfo = FormatInfo {
    format: ClipFormat::Fbx,
    name: "FBX",
    extensions: &[".fbx"],
    label: "fbx",
    noun: "an FBX file",
    carries_units: true,
    sampled_from_curves: true,
    load_bytes: fbx::read_fbx,
    load_file: Some(fbx::load_fbx_file_with_warnings),
};

impl ClipFormat {
    /// Every format, in the order messages list them.
    pub const ALL: [ClipFormat; 4] = [Self::AclSjson, Self::Bvh, Self::Gltf, Self::Fbx];

    /// This format's row of the table.
    pub fn info(self) -> &'static FormatInfo {
        match self {
            Self::AclSjson => &ACL_SJSON,
            Self::Bvh => &BVH,
            Self::Gltf => &GLTF,
            Self::Fbx => &FBX,
        }
    }

    /// Format from the file name (its [`FormatInfo::extensions`]), case-insensitive.
    pub fn from_path(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|f| f.info().extensions.iter().any(|e| name.ends_with(e)))
    }

    /// True for the formats whose clips are sampled from keyframe curves at a rate the importer
    /// chooses (FBX, glTF), so `--sample-rate` applies; ACL and BVH store their samples.
    pub fn is_sampled_from_curves(self) -> bool {
        self.info().sampled_from_curves
    }

    pub fn label(self) -> &'static str {
        self.info().label
    }
}

/// Every clip file extension, in table order (`.acl.sjson`, `.bvh`, `.gltf`, `.glb`, `.fbx`).
pub(crate) fn clip_extensions() -> impl Iterator<Item = &'static str> {
    ClipFormat::ALL
        .into_iter()
        .flat_map(|f| f.info().extensions.iter().copied())
}

/// The extensions as a message lists them: `.acl.sjson, .bvh, .gltf, .glb, .fbx` with `last`
/// = `", "`, `... .glb or .fbx` with `last` = `" or "`.
pub fn clip_extension_list(last: &str) -> String {
    let all: Vec<&str> = clip_extensions().collect();
    match all.split_last() {
        Some((l, rest)) if !rest.is_empty() => format!("{}{last}{l}", rest.join(", ")),
        _ => all.join(""),
    }
}

/// The formats' prose names as a message lists them: `ACL, BVH, glTF/GLB or FBX`.
pub fn clip_format_names() -> String {
    let names: Vec<&str> = ClipFormat::ALL.iter().map(|f| f.info().name).collect();
    match names.split_last() {
        Some((l, rest)) if !rest.is_empty() => format!("{} or {l}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// A file name without its clip extension (`Walk.BVH` → `Walk`, `x.acl.sjson` → `x`; possibly
/// empty), or `None` when it has none.
pub fn strip_clip_extension(name: &str) -> Option<&str> {
    let lower = name.to_ascii_lowercase();
    clip_extensions()
        .find(|e| lower.ends_with(e))
        .map(|e| &name[..name.len() - e.len()])
}

/// A non-fatal finding while importing (the clip loaded, but something was ignored).
#[derive(Clone, Debug, PartialEq)]
pub struct ImportWarning {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(
                f,
                "warning: {}:{}: {}",
                self.path.display(),
                l,
                self.message
            ),
            None => write!(f, "warning: {}: {}", self.path.display(), self.message),
        }
    }
}

/// Lowest and highest sampling rate accepted for `--sample-rate` ([`ImportOptions::sample_rate`]).
pub(crate) const SAMPLE_RATE_RANGE: std::ops::RangeInclusive<f64> = 1.0..=1000.0;

/// How files are imported.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ImportOptions {
    /// Sampling rate in Hz for the formats whose clips are sampled from curves (FBX, glTF), in
    /// [`SAMPLE_RATE_RANGE`]; `None`: the file's own rate (FBX) or its keyframe grid's (glTF).
    /// Formats that store samples (ACL, BVH) keep their own samples and rate: they are never
    /// resampled.
    pub sample_rate: Option<f64>,
}

impl ImportOptions {
    /// True when these options change what a file of `format` imports to (the skip cache and the
    /// report record them only then).
    pub fn applies_to(&self, format: ClipFormat) -> bool {
        self.sample_rate.is_some() && format.is_sampled_from_curves()
    }
}

/// A `--sample-rate` (or folder `sample_rate`) outside [`SAMPLE_RATE_RANGE`], or not finite.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "sample rate {hz} Hz is not supported (expected {}-{} Hz)",
    SAMPLE_RATE_RANGE.start(),
    SAMPLE_RATE_RANGE.end()
)]
pub struct SampleRateError {
    pub hz: f64,
}

/// Checks a `--sample-rate` value: finite and within [`SAMPLE_RATE_RANGE`].
pub fn check_sample_rate(hz: f64) -> Result<f64, SampleRateError> {
    if hz.is_finite() && SAMPLE_RATE_RANGE.contains(&hz) {
        Ok(hz)
    } else {
        Err(SampleRateError { hz })
    }
}

/// Loads every clip in a file (glTF and FBX files may hold several animations; the others hold one).
/// Warnings (see [`load_clips_with_warnings`]) are printed to stderr so nothing is dropped silently.
pub fn load_clips(path: &Path) -> Result<Vec<RawClip>, ImportError> {
    let (clips, warnings) = load_clips_with_warnings(path)?;
    for w in &warnings {
        eprintln!("{w}");
    }
    Ok(clips)
}

/// [`load_clips`], returning the warnings instead of printing them.
pub fn load_clips_with_warnings(
    path: &Path,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    load_clips_with_options(path, &ImportOptions::default())
}

/// [`load_clips_with_warnings`] with import options (e.g. `--sample-rate`).
pub fn load_clips_with_options(
    path: &Path,
    options: &ImportOptions,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    let format = format_of(path)?;
    if let Some(load_file) = format.info().load_file {
        // e.g. a glTF's external buffers (`.bin`) resolve inside the file's own folder.
        return load_file(path, options);
    }
    let bytes = read_input(path)?;
    load_bytes(&bytes, path, format, options)
}

/// Loads clips from bytes already in memory; `path` names the data in errors and picks the format
/// (by extension). glTF files with external buffers cannot be read this way (use [`load_clips`]).
pub fn load_clips_from_bytes(bytes: &[u8], path: &Path) -> Result<Vec<RawClip>, ImportError> {
    let (clips, warnings) = load_clips_from_bytes_with_warnings(bytes, path)?;
    for w in &warnings {
        eprintln!("{w}");
    }
    Ok(clips)
}

/// [`load_clips_from_bytes`], returning the warnings instead of printing them.
pub fn load_clips_from_bytes_with_warnings(
    bytes: &[u8],
    path: &Path,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    load_clips_from_bytes_with_options(bytes, path, &ImportOptions::default())
}

/// [`load_clips_from_bytes_with_warnings`] with import options (e.g. `--sample-rate`).
pub fn load_clips_from_bytes_with_options(
    bytes: &[u8],
    path: &Path,
    options: &ImportOptions,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    let format = format_of(path)?;
    load_bytes(bytes, path, format, options)
}

/// Reads a clip file: a regular file only (FIFOs, devices and sockets are refused without
/// blocking, see [`clipforge_base::fsio::open_regular`]) and no larger than the memory budget.
pub(crate) fn read_input(path: &Path) -> Result<Vec<u8>, ImportError> {
    read_input_up_to(path, limits::max_memory_bytes())
}

/// [`read_input`] with a bound of its own (`max_len` bytes).
pub(crate) fn read_input_up_to(path: &Path, max_len: u64) -> Result<Vec<u8>, ImportError> {
    clipforge_base::fsio::read_regular(path, max_len)
        .map_err(|e| ImportError::new(path, None, format!("cannot read file: {e}")))
}

fn format_of(path: &Path) -> Result<ClipFormat, ImportError> {
    ClipFormat::from_path(path).ok_or_else(|| {
        ImportError::new(
            path,
            None,
            format!(
                "unknown clip format: expected a file name ending in {}",
                clip_extension_list(" or ")
            ),
        )
    })
}

fn load_bytes(
    bytes: &[u8],
    path: &Path,
    format: ClipFormat,
    options: &ImportOptions,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    // Said once here for every format: each parser alone would name the first thing it misses
    // (e.g. "missing 'version = N'"), which sends the user looking for a typo in a file with no text.
    if bytes.trim_ascii().is_empty() {
        let message = if bytes.is_empty() {
            "empty file"
        } else {
            "empty file (only whitespace)"
        };
        return Err(ImportError::new(path, None, message));
    }
    (format.info().load_bytes)(bytes, path, options)
}

fn utf8<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a str, ImportError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        ImportError::new(path, Some(line), "file is not valid UTF-8 text")
    })
}

/// Writes a clip in ACL's clip format (version 5, decimal floats that read back bit for bit;
/// see [`write_acl_clip_with`] for hexadecimal binary-exact output).
pub fn write_acl_clip(clip: &RawClip) -> String {
    write_acl_clip_with(clip, &AclWriteOptions::default())
}

/// Rotation from f64 components (x, y, z, w): kept bit for bit when its f32 version already has
/// unit length to f32 precision, else normalized in f64 and rounded to f32. Zero or non-finite
/// input is returned as is for [`RawClip::new`] to refuse.
pub(crate) fn quat_from_f64(q: [f64; 4]) -> Quat {
    let q32 = Quat::from_xyzw(q[0] as f32, q[1] as f32, q[2] as f32, q[3] as f32);
    let l32 = {
        let [x, y, z, w] = q32.to_array().map(|c| c as f64);
        (x * x + y * y + z * z + w * w).sqrt()
    };
    if (l32 - 1.0).abs() <= 1e-6 {
        return q32;
    }
    let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if !(len.is_finite() && len > 1e-12) {
        return q32;
    }
    Quat::from_xyzw(
        (q[0] / len) as f32,
        (q[1] / len) as f32,
        (q[2] / len) as f32,
        (q[3] / len) as f32,
    )
}

/// Builds the clip with [`RawClip::new`] (which validates every value) and turns its error into an
/// [`ImportError`] naming the file, and the line when `line_of(bone, sample, what)` knows it.
/// The importer's rotations (normalized by [`quat_from_f64`]) are kept exactly afterwards.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_clip(
    path: &Path,
    name: String,
    skeleton: Skeleton,
    sample_rate: f32,
    num_samples: usize,
    rotations: Vec<Quat>,
    translations: Vec<Vec3>,
    scales: Vec<Vec3>,
    line_of: &dyn Fn(usize, usize, &str) -> Option<usize>,
) -> Result<RawClip, ImportError> {
    let kept = rotations.clone();
    match RawClip::new(
        name,
        skeleton.clone(),
        sample_rate,
        num_samples,
        rotations,
        translations,
        scales,
    ) {
        Ok(mut clip) => {
            clip.rotations = kept;
            Ok(clip)
        }
        Err(e) => {
            let line = match &e {
                ClipError::NonFinite { bone, sample, what } => skeleton
                    .names
                    .iter()
                    .position(|n| n == bone)
                    .and_then(|b| line_of(b, *sample, what)),
                ClipError::ZeroRotation { bone, sample } => skeleton
                    .names
                    .iter()
                    .position(|n| n == bone)
                    .and_then(|b| line_of(b, *sample, "rotation")),
                _ => None,
            };
            Err(ImportError::new(
                path,
                line,
                format!("invalid clip data: {e}"),
            ))
        }
    }
}

/// [`Skeleton::from_ordered`], keeping the importer's bind rotations bit for bit when they are
/// already unit length (the skeleton renormalizes with f32 arithmetic, which is not idempotent
/// and would break exact write → read round trips).
pub(crate) fn skeleton_ordered(descs: Vec<BoneDesc>) -> Result<Skeleton, SkeletonError> {
    let kept: Vec<Quat> = descs.iter().map(|d| d.bind_rotation).collect();
    let mut s = Skeleton::from_ordered(descs)?;
    restore_bind_rotations(&mut s, |b| kept[b]);
    Ok(s)
}

/// [`Skeleton::from_unordered`] with the same bind-rotation rule as [`skeleton_ordered`].
pub(crate) fn skeleton_unordered(
    descs: Vec<BoneDesc>,
) -> Result<(Skeleton, Vec<usize>), SkeletonError> {
    let kept: Vec<Quat> = descs.iter().map(|d| d.bind_rotation).collect();
    let (mut s, order) = Skeleton::from_unordered(descs)?;
    restore_bind_rotations(&mut s, |b| kept[order[b]]);
    Ok((s, order))
}

fn restore_bind_rotations(s: &mut Skeleton, original: impl Fn(usize) -> Quat) {
    for (b, r) in s.bind_rotations.iter_mut().enumerate() {
        let q = original(b);
        if q.is_finite() && (q.as_dquat().length() - 1.0).abs() <= 1e-6 {
            *r = q;
        }
    }
}

pub use crate::limits::MAX_TOTAL_SAMPLES;

/// Refuses, before anything is allocated for it, a clip whose bones × samples exceeds
/// [`MAX_TOTAL_SAMPLES`] or whose import and compression would need more memory than an input of
/// `input_len` bytes may use ([`limits::budget_for_input`]).
pub(crate) fn check_size(
    path: &Path,
    line: Option<usize>,
    bones: usize,
    samples: usize,
    input_len: usize,
) -> Result<(), ImportError> {
    if bones.saturating_mul(samples) > MAX_TOTAL_SAMPLES {
        return Err(ImportError::new(
            path,
            line,
            format!(
                "{bones} bones x {samples} samples is more than the {MAX_TOTAL_SAMPLES} supported"
            ),
        ));
    }
    check_budget(
        path,
        line,
        &format!("{bones} bones x {samples} samples"),
        limits::clip_memory_estimate(bones, samples),
        input_len,
    )
}

/// Refuses `needed` bytes (what importing and compressing `what` takes) when it is over the
/// budget of an input of `input_len` bytes ([`ImportErrorKind::OverBudget`]).
pub(crate) fn check_budget(
    path: &Path,
    line: Option<usize>,
    what: &str,
    needed: u64,
    input_len: usize,
) -> Result<(), ImportError> {
    let budget = limits::budget_for_input(input_len as u64);
    if needed > budget {
        return Err(ImportError::new(
            path,
            line,
            limits::over_budget_message(what, needed, budget),
        )
        .with_kind(ImportErrorKind::OverBudget {
            needed: Some(needed),
            budget,
        }));
    }
    Ok(())
}

/// Runs `f`, turning a panic into `None` without printing anything: importers call
/// dependencies (the gltf crate) that can panic on hostile data, and no panic text or backtrace
/// may reach a user.
///
/// Silencing works through a thread-local flag read by a panic hook installed once per process
/// that chains to the hook found at installation: swapping the process-wide hook around each
/// call would race between rayon workers (one thread restoring the default hook while another
/// is inside its call, or a real panic elsewhere being swallowed), whereas the flag only ever
/// affects panics raised on the thread that set it, inside `f`.
pub(crate) fn catch_quietly<T>(f: impl FnOnce() -> T) -> Option<T> {
    use std::cell::Cell;
    use std::sync::Once;
    thread_local! {
        static QUIET: Cell<bool> = const { Cell::new(false) };
    }
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    result.ok()
}

/// `f`, a `reader` (`"glTF"`, `"FBX"`) at work on a file's `data` (`"data"`, `"mesh data"`),
/// under [`catch_quietly`]: a panic left in the reader becomes an import error saying so.
pub(crate) fn read_quietly<T>(
    path: &Path,
    (reader, data): (&str, &str),
    f: impl FnOnce() -> Result<T, ImportError>,
) -> Result<T, ImportError> {
    catch_quietly(f).unwrap_or_else(|| {
        Err(ImportError::new(
            path,
            None,
            format!("malformed {reader}: the {reader} reader failed on this file's {data}"),
        ))
    })
}

/// The file name without its clip extension: `walk.bvh` → `walk`, `x.acl.sjson` → `x` (a clip's
/// name when its file gives none, the output file's stem, the app's row label). A name that is
/// only an extension (`.bvh`) stays whole, so no stem is empty. The one extension-stripping rule.
pub fn file_stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match strip_clip_extension(&name) {
        Some(stem) if !stem.is_empty() => stem.to_string(),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_rate_and_reader_panic_texts() {
        assert_eq!(check_sample_rate(30.0), Ok(30.0));
        assert_eq!(
            check_sample_rate(0.5).unwrap_err().to_string(),
            "sample rate 0.5 Hz is not supported (expected 1-1000 Hz)"
        );
        assert_eq!(
            check_sample_rate(f64::NAN).unwrap_err().to_string(),
            "sample rate NaN Hz is not supported (expected 1-1000 Hz)"
        );
        let path = Path::new("x.glb");
        let e = read_quietly(
            path,
            ("glTF", "mesh data"),
            || -> Result<(), ImportError> { panic!("hostile input") },
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.glb: malformed glTF: the glTF reader failed on this file's mesh data"
        );
        assert_eq!(read_quietly(path, ("FBX", "data"), || Ok(3)), Ok(3));
    }

    #[test]
    fn unknown_extension_is_a_clear_error() {
        let e = load_clips(Path::new("clip.obj")).unwrap_err();
        assert!(e.message.contains("unknown clip format"), "{e}");
        let e = load_clips_from_bytes(b"", Path::new("x.txt")).unwrap_err();
        assert!(e.message.contains("unknown clip format"), "{e}");
    }

    #[test]
    fn missing_file_is_an_error_not_a_panic() {
        let e = load_clips(Path::new("/nonexistent/dir/a.bvh")).unwrap_err();
        assert!(e.message.contains("cannot read"), "{e}");
        assert!(load_clips(Path::new("/nonexistent/dir/a.gltf")).is_err());
    }

    #[test]
    fn garbage_never_panics() {
        // Deterministic pseudo-random bytes, truncations of valid files, empty input.
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let valid_acl = write_acl_clip(&crate::generate::generate(&Default::default()));
        let valid_bvh = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
                         JOINT b\n{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n}\n\
                         MOTION\nFrames: 2\nFrame Time: 0.0333333\n0 0 0 0 0 0 1 2 3\n1 1 1 10 20 30 4 5 6\n";
        for name in ["a.acl.sjson", "a.bvh", "a.gltf", "a.glb"] {
            let p = Path::new(name);
            assert!(
                load_clips_from_bytes(b"", p).is_err(),
                "{name}: empty file must be refused"
            );
            for len in [1usize, 7, 64, 1000] {
                let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                let _ = load_clips_from_bytes(&bytes, p);
            }
            let text = if name.ends_with(".bvh") {
                valid_bvh
            } else {
                valid_acl.as_str()
            };
            for cut in (0..text.len()).step_by(text.len() / 97 + 1) {
                let _ = load_clips_from_bytes(&text.as_bytes()[..cut], p);
            }
        }
        // Random byte mutations of valid files.
        const ALPHABET: &[u8] = b" 0123456789.-e{}[]=,\"\n\rxXjJ/*";
        for (name, text) in [("m.bvh", valid_bvh), ("m.acl.sjson", valid_acl.as_str())] {
            for _ in 0..300 {
                let mut bytes = text.as_bytes().to_vec();
                for _ in 0..1 + next() % 4 {
                    let at = next() as usize % bytes.len();
                    bytes[at] = ALPHABET[next() as usize % ALPHABET.len()];
                }
                let _ = load_clips_from_bytes(&bytes, Path::new(name));
            }
        }
        assert_eq!(
            load_clips_from_bytes(valid_bvh.as_bytes(), Path::new("x.bvh"))
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn quiet_catch_turns_a_panic_into_none_and_keeps_the_hook_for_others() {
        assert_eq!(catch_quietly(|| 7), Some(7));
        assert_eq!(catch_quietly(|| -> i32 { panic!("hostile input") }), None);
        // Nested and repeated calls restore the flag.
        assert_eq!(
            catch_quietly(|| catch_quietly(|| -> u8 { panic!("inner") })),
            Some(None)
        );
        // Other threads' panics still reach the previous hook and are still caught as panics.
        let r = std::thread::spawn(|| std::panic::catch_unwind(|| panic!("elsewhere"))).join();
        assert!(r.unwrap().is_err());
    }

    #[test]
    fn quat_from_f64_keeps_unit_f32_bits() {
        let q = Quat::from_xyzw(0.1, 0.2, 0.3, 0.4).normalize();
        let back = quat_from_f64(q.to_array().map(|c| c as f64));
        assert_eq!(
            back.to_array().map(f32::to_bits),
            q.to_array().map(f32::to_bits)
        );
        let n = quat_from_f64([0.0, 0.0, 2.0, 0.0]);
        assert_eq!(n, Quat::from_xyzw(0.0, 0.0, 1.0, 0.0));
    }

    #[test]
    fn file_stem_strips_format_extension() {
        assert_eq!(file_stem(Path::new("/a/b/09_02.acl.sjson")), "09_02");
        assert_eq!(file_stem(Path::new("walk.BVH")), "walk");
        assert_eq!(file_stem(Path::new("d/.bvh")), ".bvh");
        assert_eq!(file_stem(Path::new("notes.txt")), "notes.txt");
    }

    #[test]
    fn the_formats_table_is_one_consistent_source() {
        for f in ClipFormat::ALL {
            let info = f.info();
            assert_eq!(info.format, f, "row of {f:?}");
            for ext in info.extensions {
                assert!(
                    ext.starts_with('.') && *ext == ext.to_ascii_lowercase(),
                    "{ext}"
                );
                let name = format!("Walk{}", ext.to_ascii_uppercase());
                assert_eq!(ClipFormat::from_path(Path::new(&name)), Some(f), "{name}");
                assert_eq!(strip_clip_extension(&name), Some("Walk"));
            }
            assert_eq!(info.sampled_from_curves, f.is_sampled_from_curves());
        }
        assert_eq!(
            clip_extension_list(" or "),
            ".acl.sjson, .bvh, .gltf, .glb or .fbx"
        );
        assert_eq!(clip_format_names(), "ACL, BVH, glTF/GLB or FBX");
        assert_eq!(strip_clip_extension("notes.txt"), None);
        assert_eq!(strip_clip_extension(".bvh"), Some(""));
    }

    #[test]
    fn refusals_for_memory_and_scalar_lists_are_told_by_kind() {
        let p = Path::new("bomb.acl.sjson");
        let e = check_size(p, Some(3), 1, 49_999_999, 300).unwrap_err();
        assert!(
            matches!(e.kind, ImportErrorKind::OverBudget { needed: Some(n), budget } if n > budget)
        );
        assert_eq!(e.limit(), Some(limits::Limit::Memory));
        assert_eq!(e.to_string(), format!("bomb.acl.sjson:3: {}", e.message));
        let list = "version = 4\ntrack_list = { name = \"l\" num_samples = 1 sample_rate = 24 }\n\
                    tracks = [\n{ name = \"t\" type = \"float3f\" data = [ [1,2,3] ] }\n]\n";
        let e = load_clips_from_bytes(list.as_bytes(), Path::new("l.acl.sjson")).unwrap_err();
        assert_eq!(e.kind, ImportErrorKind::ScalarTrackList, "{e}");
        assert_eq!(e.limit(), None);
    }
}
