//! glTF 2.0 (`.gltf` with embedded or external buffers, `.glb`) animation importer, built on the
//! `gltf` crate (buffers only; images are never decoded).
//!
//! Each animation of a file becomes one clip:
//! - Skeleton: the joints of the skin the animation targets (the skin holding most of the
//!   animated nodes), plus any node lying between two joints so the hierarchy stays exact; for a
//!   node animation without a skin, the animated nodes and all their ancestors. Parents come from
//!   the node tree; bones are sorted parent-first ([`Skeleton::from_unordered`]). Bone names are
//!   node names (`node{index}` when unnamed, `name#index` when a name repeats).
//! - Bind pose: each node's rest TRS. Joints the animation does not touch keep their rest TRS in
//!   every sample; so do the paths (translation/rotation/scale) of a node without a channel.
//! - Sampling: from the animation's first keyframe time to its last, at a uniform rate. When the
//!   keyframe times of the animation (all channels together) lie on a uniform grid (at least three
//!   distinct times, 1–1000 Hz) that grid's rate is used, multiplied by the smallest integer
//!   that brings it to 24 Hz or more (2 Hz keys → 24 Hz: keys stay on samples, and curves
//!   between sparse keys are captured), rounded when within 0.01 of an integer; else 30 Hz.
//!   [`ImportOptions::sample_rate`] (`--sample-rate`) replaces that rate; the span is the same
//!   (`round(span × rate) + 1` samples from the first key).
//!   Interpolation per the glTF spec: STEP; LINEAR (slerp, shortest path, for rotations; lerp
//!   otherwise); CUBICSPLINE (Hermite with the in/out tangents scaled by the key interval,
//!   rotations normalized). Before the first / after the last key: clamped. A sample within
//!   1e-6 s (relative) of a key takes that key's value exactly.
//! - Units: glTF is in metres, while our error threshold is in centimetres (as ACL assumes), so
//!   **translations (animated and bind pose) are multiplied by 100 on import**. Shell distance 3 cm.
//! - Object space is the space of the skeleton's roots' parent: transforms of non-joint nodes
//!   above the skin (an armature node, the scene root) are not part of the clip.
//! - Clip name: the animation's name, or `anim{index}` when it has none.
//! - Morph-target weight channels, and channels on nodes outside the chosen skeleton, are ignored
//!   with a warning. Animations with nothing to import are skipped with a warning.
//! - Buffers: the GLB binary chunk, base64 `data:` URIs, or a relative path inside the `.gltf`
//!   file's folder (see [`buffers`]); images are never read. Channels and accessors are checked
//!   before the gltf crate's readers run (they panic on a target node out of range, an unknown
//!   target path or an integer rotation type they do not expect).

use super::{
    ImportError, ImportOptions, ImportWarning, build_clip, check_budget, check_size, quat_from_f64,
    read_input, read_quietly, skeleton_unordered,
};
use crate::clip::RawClip;
use crate::limits;
use crate::skeleton::{BoneDesc, Skeleton};
use glam::Vec3;
use gltf::accessor::{DataType, Dimensions};
use gltf::animation::util::ReadOutputs;
use gltf::animation::{Interpolation, Property};
use std::collections::BTreeSet;
use std::path::Path;

mod skin_mesh;
pub use skin_mesh::load_gltf_meshes;
pub(crate) use skin_mesh::load_gltf_meshes_file;

/// Metres → centimetres.
pub(crate) const GLTF_TO_CM: f64 = 100.0;
/// Resampling rate when keyframes are not uniformly spaced.
pub(crate) const FALLBACK_RATE: f64 = 30.0;
/// Uniform key grids slower than this are upsampled by an integer factor to reach it.
pub(crate) const MIN_GRID_RATE: f64 = 24.0;

/// What is wrong with a glTF file's accessors, keyframes, mesh primitives or buffers: the
/// specifics an [`ImportError`] names after the place it found them in (animation and channel,
/// skin and primitive, buffer and URI).
#[derive(Debug, thiserror::Error)]
pub(crate) enum GltfError {
    // Accessors ([`check_accessor`]).
    #[error("accessor has no elements")]
    NoElements,
    #[error("byte stride {stride} is smaller than an element ({size})")]
    StrideBelowElement { stride: usize, size: usize },
    #[error("{count} elements do not fit in buffer view {view}")]
    PastView { count: usize, view: usize },
    #[error("accessor has neither a buffer view nor sparse data")]
    NoData,
    #[error("{sparse} sparse elements for an accessor of {count}")]
    SparseCount { sparse: usize, count: usize },
    #[error("{sparse} sparse elements do not fit in buffer view {view}")]
    SparsePastView { sparse: usize, view: usize },
    // Channels ([`check_channel_types`], [`check_keys`]).
    #[error("keyframe times are {dims:?} of {data_type:?}, expected float scalars")]
    TimesType {
        dims: Dimensions,
        data_type: DataType,
    },
    #[error("keyframe values are {dims:?} of {data_type:?}, not allowed for {property:?}")]
    ValuesType {
        dims: Dimensions,
        data_type: DataType,
        property: Property,
    },
    #[error("no keyframes")]
    NoKeyframes,
    #[error("keyframe time {time} at key {key} is not finite or goes backwards")]
    KeyTime { time: f64, key: usize },
    #[error("{values} output values for {keys} keyframes, expected {expected} ({interpolation:?})")]
    ValueCount {
        values: usize,
        keys: usize,
        expected: usize,
        interpolation: Interpolation,
    },
    #[error("non-finite keyframe value {0}")]
    KeyValue(f64),
    // Mesh primitives ([`skin_mesh`]).
    #[error("a mesh accessor without a buffer view is not read")]
    MeshWithoutView,
    #[error("{dims:?} of {data_type:?} where {expected_dims:?} of {expected_types:?} is expected")]
    ElementType {
        dims: Dimensions,
        data_type: DataType,
        expected_dims: Dimensions,
        expected_types: &'static [DataType],
    },
    /// A problem of one attribute (`POSITION`, `JOINTS_0`, …) of a primitive.
    #[error("{attribute}: {problem}")]
    Attribute {
        attribute: &'static str,
        problem: Box<GltfError>,
    },
    #[error("{positions} positions, {joints} joints and {weights} weights")]
    InfluenceCount {
        positions: usize,
        joints: usize,
        weights: usize,
    },
    #[error("{normals} normals for {vertices} vertices")]
    NormalCount { normals: usize, vertices: usize },
    #[error("more than 2^32 vertices")]
    TooManyVertices,
    #[error("{0} cannot be read")]
    Unreadable(&'static str),
    #[error("index {index} past the {vertices} vertices")]
    IndexPast { index: u32, vertices: usize },
    #[error("attributes shorter than their count")]
    ShortAttributes,
    // Buffers ([`buffers`]).
    #[error("only base64 data: URIs are supported")]
    NotBase64,
    #[error("only a relative path inside the glTF file's folder (or a data: URI) is accepted")]
    NotRelative,
    #[error("external buffers cannot be resolved for glTF data given in memory")]
    NoFolder,
    #[error(transparent)]
    Uri(#[from] UriError),
    #[error("the glTF file's folder cannot be resolved")]
    FolderUnresolved,
    #[error("the buffer file does not exist or cannot be opened")]
    Missing,
    #[error("the path leads outside the glTF file's folder")]
    Outside,
    #[error("absolute paths are not accepted")]
    Absolute,
    #[error("the path names no file")]
    NoFile,
    /// Not a regular file (a folder, a device, a FIFO).
    #[error("cannot read: {0}")]
    NotRegular(std::io::Error),
    #[error("the buffer file cannot be opened")]
    CannotOpen,
    #[error("the buffer file cannot be read or is too large")]
    CannotRead,
    #[error("invalid base64 in a data: URI")]
    Base64,
}

impl GltfError {
    /// The problem, as one of a primitive's `attribute`.
    fn of(attribute: &'static str) -> impl Fn(GltfError) -> GltfError {
        move |problem| GltfError::Attribute {
            attribute,
            problem: Box::new(problem),
        }
    }
}

/// Why a relative glTF URI does not decode ([`decode_uri`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    #[error("invalid percent-encoding")]
    Percent,
    #[error("the path contains a NUL byte")]
    Nul,
    #[error("the decoded path is not UTF-8")]
    NotUtf8,
}

/// Loads every animation of a glTF/GLB file (external buffers resolve next to it), returning
/// the warnings; `options.sample_rate` replaces the keyframe grid's rate.
pub(crate) fn load_gltf_file_with_options(
    path: &Path,
    options: &ImportOptions,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    let bytes = read_input(path)?;
    load(&bytes, path, folder_of(path), options)
}

/// [`load_gltf_file_with_options`] on bytes in memory; external buffer files cannot be
/// resolved.
pub(crate) fn load_gltf_slice_with_options(
    bytes: &[u8],
    path: &Path,
    options: &ImportOptions,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    load(bytes, path, None, options)
}

/// The folder a glTF file's relative buffer URIs resolve in: the file's own (`.` for a bare
/// file name).
fn folder_of(path: &Path) -> Option<&Path> {
    path.parent().map(|p| {
        if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        }
    })
}

fn load(
    bytes: &[u8],
    path: &Path,
    base: Option<&Path>,
    options: &ImportOptions,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    // Everything the gltf crate would panic on is checked first ([`check_document`],
    // [`check_accessor`]); as a last line, a panic left in its readers becomes an import error,
    // with no panic text printed.
    let rate = options
        .sample_rate
        .map(super::check_sample_rate)
        .transpose()
        .map_err(|e| gerr(path, e.to_string()))?;
    read_quietly(path, ("glTF", "data"), || {
        load_inner(bytes, path, base, rate)
    })
}

fn gerr(path: &Path, msg: impl Into<String>) -> ImportError {
    ImportError::new(path, None, msg)
}

/// A parsed and checked document with its buffers, as both loaders (clips, skinned meshes)
/// start.
struct Opened {
    doc: gltf::Document,
    buffers: Vec<Vec<u8>>,
    /// The file's and its buffers' bytes: the memory budget grows with the input.
    input_len: usize,
}

/// Parses `bytes`, checks what the gltf crate would panic on ([`check_document`]) and loads
/// the buffers ([`buffers`]; `base`: the folder relative URIs resolve in).
fn open(bytes: &[u8], path: &Path, base: Option<&Path>) -> Result<Opened, ImportError> {
    if bytes.is_empty() {
        return Err(gerr(path, "empty file"));
    }
    let gltf = parse(bytes, path)?;
    let doc = gltf.document;
    check_document(&doc, path)?;
    let buffers = buffers::load(&doc, gltf.blob, path, base)?;
    let input_len = bytes
        .len()
        .saturating_add(buffers.iter().map(Vec::len).sum::<usize>());
    Ok(Opened {
        doc,
        buffers,
        input_len,
    })
}

/// Each node's parent (`None`: a scene root), from the node tree.
fn parents(nodes: &[gltf::Node]) -> Vec<Option<usize>> {
    let mut parent_of = vec![None; nodes.len()];
    for n in nodes {
        for c in n.children() {
            parent_of[c.index()] = Some(n.index());
        }
    }
    parent_of
}

/// A node's name, `node{index}` when it has none (before [`member_names`] makes them unique).
fn node_name(nodes: &[gltf::Node], i: usize) -> String {
    nodes[i]
        .name()
        .map(str::to_string)
        .unwrap_or_else(|| format!("node{i}"))
}

/// The gltf crate's parse; its error gains what the GLB header says of the file's size, since
/// the crate's own message gives no place ("Io error: failed to fill whole buffer" for a cut).
fn parse(bytes: &[u8], path: &Path) -> Result<gltf::Gltf, ImportError> {
    gltf::Gltf::from_slice(bytes).map_err(|e| {
        let place = glb_size_note(bytes).map_or(String::new(), |n| format!(" ({n})"));
        gerr(path, format!("invalid glTF: {e}{place}"))
    })
}

/// For GLB bytes (the `glTF` magic): the file's size against the length its header declares,
/// and which chunk the end of the file cuts.
fn glb_size_note(bytes: &[u8]) -> Option<String> {
    if !bytes.starts_with(b"glTF") {
        return None;
    }
    let n = bytes.len();
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let Some(declared) = word(8) else {
        return Some(format!(
            "the file is {n} bytes, shorter than the 12-byte GLB header"
        ));
    };
    let mut note = format!("the file is {n} bytes, its GLB header declares {declared}");
    // Chunks: 8-byte header (length, type) then data, from byte 12.
    let mut at = 12usize;
    while let Some(len) = word(at) {
        let end = at.saturating_add(8).saturating_add(len);
        if end > n {
            let kind = match bytes.get(at + 4..at + 8) {
                Some(b"JSON") => "JSON",
                Some(b"BIN\0") => "BIN",
                _ => "a",
            };
            note.push_str(&format!(
                "; {kind} chunk of {len} bytes at byte {at} ends at byte {end}, past the end"
            ));
            break;
        }
        at = end;
    }
    Some(note)
}

/// One channel, read and checked: times, and values (4 per key for rotations, 3 otherwise; ×3
/// keys' worth for CUBICSPLINE: in-tangent, value, out-tangent).
struct Track {
    node: usize,
    property: Property,
    interpolation: Interpolation,
    times: Vec<f64>,
    values: Vec<f64>,
}

/// `sample_rate`: the rate asked for (checked), else the keyframe grid's ([`detect_rate`]).
fn load_inner(
    bytes: &[u8],
    path: &Path,
    base: Option<&Path>,
    sample_rate: Option<f64>,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    let Opened {
        doc,
        buffers,
        input_len,
    } = open(bytes, path, base)?;
    let ctx = Ctx::new(path, &doc, &buffers, input_len);
    // What the animations imported so far need (all their clips stay in memory together).
    let mut spent: u64 = 0;
    let mut warnings = Vec::new();
    let mut clips = Vec::new();
    for anim in doc.animations() {
        let clip_name = clip_name(&anim);
        let mut tracks = Vec::new();
        for ch in anim.channels() {
            if let Some(t) = ctx.read_channel(&ch, &clip_name, &mut spent, &mut warnings)? {
                tracks.push(t);
            }
        }
        if tracks.is_empty() {
            warnings.push(ctx.warning(format!(
                "animation '{clip_name}' has no translation/rotation/scale channel; skipped"
            )));
            continue;
        }
        let (skeleton, order, members) = ctx.skeleton(&tracks, &clip_name, &mut warnings)?;
        let clip = ctx.sample_clip(
            &tracks,
            clip_name,
            skeleton,
            (&order, &members),
            sample_rate,
            (&mut spent, clips.len()),
        )?;
        clips.push(clip);
    }
    if clips.is_empty() {
        return Err(gerr(
            path,
            "no importable animation in this file (a glTF file needs at least one animation with translation, rotation or scale channels)",
        ));
    }
    Ok((clips, warnings))
}

/// A loaded document, its buffers and node tree, as the animation importer reads them.
struct Ctx<'a> {
    path: &'a Path,
    doc: &'a gltf::Document,
    buffers: &'a [Vec<u8>],
    /// The file's and its buffers' bytes (the memory budget grows with them).
    input_len: usize,
    nodes: Vec<gltf::Node<'a>>,
    parent_of: Vec<Option<usize>>,
}

impl<'a> Ctx<'a> {
    fn new(
        path: &'a Path,
        doc: &'a gltf::Document,
        buffers: &'a [Vec<u8>],
        input_len: usize,
    ) -> Self {
        let nodes: Vec<gltf::Node> = doc.nodes().collect();
        let parent_of = parents(&nodes);
        Self {
            path,
            doc,
            buffers,
            input_len,
            nodes,
            parent_of,
        }
    }

    fn node_name(&self, i: usize) -> String {
        node_name(&self.nodes, i)
    }

    fn warning(&self, message: String) -> ImportWarning {
        ImportWarning {
            path: self.path.to_path_buf(),
            line: None,
            message,
        }
    }

    /// One channel read and checked (`None`: a morph-target weight channel, warned about).
    /// Its keyframes count against the budget (`spent`) before they are read.
    fn read_channel(
        &self,
        ch: &gltf::animation::Channel,
        clip_name: &str,
        spent: &mut u64,
        warnings: &mut Vec<ImportWarning>,
    ) -> Result<Option<Track>, ImportError> {
        let path = self.path;
        let target = ch.target();
        let node = target.node().index();
        let property = target.property();
        if property == Property::MorphTargetWeights {
            warnings.push(self.warning(format!(
                "animation '{clip_name}': morph-target weight channel on node '{}' ignored",
                self.node_name(node)
            )));
            return Ok(None);
        }
        let sampler = ch.sampler();
        let interpolation = sampler.interpolation();
        let what = format!(
            "animation '{clip_name}', channel {} ({:?} of node '{}')",
            ch.index(),
            property,
            self.node_name(node)
        );
        // Keyframes are read into f64 vectors: their size counts against the budget before
        // they are read (a sparse accessor can declare any count without data behind it).
        let (input, output) = (sampler.input(), sampler.output());
        for (acc, role) in [(&input, "keyframe times"), (&output, "keyframe values")] {
            check_accessor(acc, self.buffers)
                .map_err(|m| gerr(path, format!("{what}: {role}: {m}")))?;
        }
        check_channel_types(&input, &output, property)
            .map_err(|m| gerr(path, format!("{what}: {m}")))?;
        let key_bytes = (input.count() as u64)
            .saturating_add((output.count() as u64).saturating_mul(4))
            .saturating_mul(8);
        *spent = spent.saturating_add(key_bytes);
        check_budget(
            path,
            None,
            &format!("{what}: {} keyframes", input.count()),
            *spent,
            self.input_len,
        )?;
        let reader = ch.reader(|b| self.buffers.get(b.index()).map(|d| &d[..]));
        let times: Vec<f64> = reader
            .read_inputs()
            .ok_or_else(|| gerr(path, format!("{what}: keyframe times cannot be read")))?
            .map(f64::from)
            .collect();
        let values: Vec<f64> = match reader.read_outputs() {
            Some(ReadOutputs::Translations(it)) => {
                it.flat_map(|v| v.map(|c| c as f64 * GLTF_TO_CM)).collect()
            }
            Some(ReadOutputs::Scales(it)) => it.flat_map(|v| v.map(f64::from)).collect(),
            Some(ReadOutputs::Rotations(r)) => {
                r.into_f32().flat_map(|v| v.map(f64::from)).collect()
            }
            _ => {
                return Err(gerr(
                    path,
                    format!("{what}: keyframe values cannot be read"),
                ));
            }
        };
        check_keys(&times, &values, property, interpolation)
            .map_err(|m| gerr(path, format!("{what}: {m}")))?;
        Ok(Some(Track {
            node,
            property,
            interpolation,
            times,
            values,
        }))
    }

    /// The animation's skeleton (module doc, "Skeleton"), the member index of each skeleton
    /// bone, and the members (node indices, ascending).
    fn skeleton(
        &self,
        tracks: &[Track],
        clip_name: &str,
        warnings: &mut Vec<ImportWarning>,
    ) -> Result<(Skeleton, Vec<usize>, Vec<usize>), ImportError> {
        let (nodes, parent_of) = (&self.nodes, &self.parent_of);
        let animated: BTreeSet<usize> = tracks.iter().map(|t| t.node).collect();
        let skin = animated_skin(self.doc, &animated);
        let mut set: BTreeSet<usize> = BTreeSet::new();
        match &skin {
            Some(s) => {
                set.extend(s.joints().map(|j| j.index()));
                // Close gaps: nodes between a joint and an ancestor joint join the skeleton.
                set.extend(nodes_between(&set, parent_of));
            }
            None => {
                for &n in &animated {
                    let mut p = Some(n);
                    let mut guard = 0;
                    while let Some(a) = p {
                        guard += 1;
                        if guard > nodes.len() || !set.insert(a) {
                            break;
                        }
                        p = parent_of[a];
                    }
                }
            }
        }
        for t in tracks {
            if !set.contains(&t.node) {
                warnings.push(self.warning(format!(
                    "animation '{clip_name}': channel on node '{}' ignored (not part of the animated skin)",
                    self.node_name(t.node)
                )));
            }
        }
        let members: Vec<usize> = set.iter().copied().collect();
        let local = |node: usize| members.binary_search(&node).ok();
        let names = member_names(&members, |i| self.node_name(i));
        let descs: Vec<BoneDesc> = members
            .iter()
            .zip(names)
            .map(|(&n, name)| {
                let mut d = BoneDesc::new(name, parent_of[n].and_then(local));
                let (t, r, s) = nodes[n].transform().decomposed();
                d.bind_translation = Vec3::new(
                    (t[0] as f64 * GLTF_TO_CM) as f32,
                    (t[1] as f64 * GLTF_TO_CM) as f32,
                    (t[2] as f64 * GLTF_TO_CM) as f32,
                );
                d.bind_rotation = quat_from_f64(r.map(f64::from));
                d.bind_scale = Vec3::from(s);
                d
            })
            .collect();
        let (skeleton, order) = skeleton_unordered(descs).map_err(|e| {
            gerr(
                self.path,
                format!("animation '{clip_name}': invalid node hierarchy: {e}"),
            )
        })?;
        Ok((skeleton, order, members))
    }

    /// The animation sampled on its time grid (module doc, "Sampling"), its size checked first:
    /// alone, and with the `before` clips already imported (`spent`, updated).
    fn sample_clip(
        &self,
        tracks: &[Track],
        clip_name: String,
        skeleton: Skeleton,
        (order, members): (&[usize], &[usize]),
        sample_rate: Option<f64>,
        (spent, before): (&mut u64, usize),
    ) -> Result<RawClip, ImportError> {
        let path = self.path;
        let start = tracks
            .iter()
            .map(|t| t.times[0])
            .fold(f64::INFINITY, f64::min);
        let end = tracks
            .iter()
            .map(|t| *t.times.last().unwrap_or(&0.0))
            .fold(f64::NEG_INFINITY, f64::max);
        let rate = sample_rate.unwrap_or_else(|| detect_rate(tracks, start, end));
        // `as usize` saturates for absurd (but finite) key times; check_size then refuses.
        let num_samples = (((end - start) * rate).round() as usize).saturating_add(1);

        let nb = skeleton.num_bones();
        let tag = |mut e: ImportError| {
            e.message = format!("animation '{clip_name}': {}", e.message);
            e
        };
        check_size(path, None, nb, num_samples, self.input_len).map_err(tag)?;
        // All the file's clips are held together: their sum must fit the input's budget too.
        *spent = spent.saturating_add(limits::clip_memory_estimate(nb, num_samples));
        if before > 0 {
            check_budget(
                path,
                None,
                &format!(
                    "{nb} bones x {num_samples} samples with the {before} animation(s) before it"
                ),
                *spent,
                self.input_len,
            )
            .map_err(tag)?;
        }
        // First channel of each (node, property), as the search over all tracks found it,
        // without searching every track for every bone (quadratic with thousands of animated
        // nodes).
        let mut first_track: std::collections::HashMap<(usize, u8), usize> =
            std::collections::HashMap::with_capacity(tracks.len());
        for (i, t) in tracks.iter().enumerate() {
            first_track
                .entry((t.node, property_key(t.property)))
                .or_insert(i);
        }
        let mut rotations = Vec::with_capacity(nb * num_samples);
        let mut translations = Vec::with_capacity(nb * num_samples);
        let mut scales = Vec::with_capacity(nb * num_samples);
        for &node in order {
            let node = members[node];
            let (t0, r0, s0) = self.nodes[node].transform().decomposed();
            let find = |p: Property| {
                first_track
                    .get(&(node, property_key(p)))
                    .map(|&i| &tracks[i])
            };
            let (tt, rt, st) = (
                find(Property::Translation),
                find(Property::Rotation),
                find(Property::Scale),
            );
            for k in 0..num_samples {
                let time = start + k as f64 / rate;
                rotations.push(match rt {
                    Some(t) => {
                        let v = sample(t, time, 4);
                        quat_from_f64([v[0], v[1], v[2], v[3]])
                    }
                    None => quat_from_f64(r0.map(f64::from)),
                });
                translations.push(match tt {
                    Some(t) => {
                        let v = sample(t, time, 3);
                        Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32)
                    }
                    None => Vec3::new(
                        (t0[0] as f64 * GLTF_TO_CM) as f32,
                        (t0[1] as f64 * GLTF_TO_CM) as f32,
                        (t0[2] as f64 * GLTF_TO_CM) as f32,
                    ),
                });
                scales.push(match st {
                    Some(t) => {
                        let v = sample(t, time, 3);
                        Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32)
                    }
                    None => Vec3::from(s0),
                });
            }
        }
        build_clip(
            path,
            clip_name.clone(),
            skeleton,
            rate as f32,
            num_samples,
            rotations,
            translations,
            scales,
            &|_, _, _| None,
        )
        .map_err(tag)
    }
}

/// A channel's keys: at least one, times finite and not going backwards, as many finite values
/// as the interpolation needs.
fn check_keys(
    times: &[f64],
    values: &[f64],
    property: Property,
    interpolation: Interpolation,
) -> Result<(), GltfError> {
    if times.is_empty() {
        return Err(GltfError::NoKeyframes);
    }
    if let Some(k) =
        (0..times.len()).find(|&k| !times[k].is_finite() || (k > 0 && times[k] < times[k - 1]))
    {
        return Err(GltfError::KeyTime {
            time: times[k],
            key: k,
        });
    }
    let width = if property == Property::Rotation { 4 } else { 3 };
    let per_key = if interpolation == Interpolation::CubicSpline {
        3 * width
    } else {
        width
    };
    if values.len() != times.len() * per_key {
        return Err(GltfError::ValueCount {
            values: values.len(),
            keys: times.len(),
            expected: times.len() * per_key,
            interpolation,
        });
    }
    if let Some(&v) = values.iter().find(|v| !v.is_finite()) {
        return Err(GltfError::KeyValue(v));
    }
    Ok(())
}

/// A clip's name: the animation's, or `anim{index}` when it has none.
fn clip_name(anim: &gltf::Animation) -> String {
    anim.name()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("anim{}", anim.index()))
}

/// The skin an animation drives: the one holding most of its animated nodes (the first on a
/// tie), none when no skin holds any.
fn animated_skin<'a>(
    doc: &'a gltf::Document,
    animated: &BTreeSet<usize>,
) -> Option<gltf::Skin<'a>> {
    doc.skins()
        .map(|s| {
            (
                s.joints().filter(|j| animated.contains(&j.index())).count(),
                s,
            )
        })
        .filter(|(c, _)| *c > 0)
        .max_by_key(|(c, s)| (*c, std::cmp::Reverse(s.index())))
        .map(|(_, s)| s)
}

/// Bone names of the skeleton's nodes (sorted node indices): the node's name, `name#index`
/// when a name repeats (the mesh loader names a skin's joints the same way).
fn member_names(members: &[usize], node_name: impl Fn(usize) -> String) -> Vec<String> {
    let mut used = std::collections::HashSet::new();
    members
        .iter()
        .map(|&n| {
            let mut name = node_name(n);
            if !used.insert(name.clone()) {
                name = format!("{name}#{n}");
                used.insert(name.clone());
            }
            name
        })
        .collect()
}

fn property_key(p: Property) -> u8 {
    match p {
        Property::Translation => 0,
        Property::Rotation => 1,
        Property::Scale => 2,
        Property::MorphTargetWeights => 3,
    }
}

/// The nodes that are not in `joints` but lie between a joint and one of its ancestor joints,
/// in time linear in the number of nodes (a 20,000-node chain must not walk up 20,000 times).
/// `parent_of` may hold cycles (glTF validation does not refuse them): a node on a cycle has no
/// joint ancestor here, and the skeleton builder then reports the cycle.
fn nodes_between(joints: &BTreeSet<usize>, parent_of: &[Option<usize>]) -> Vec<usize> {
    let n = parent_of.len();
    let is_joint = |i: usize| joints.contains(&i);
    // Has a joint strictly above it: 0 unknown, 1 in progress, 2 no, 3 yes.
    let mut above = vec![0u8; n];
    let mut path = Vec::new();
    for start in 0..n {
        if above[start] != 0 {
            continue;
        }
        path.clear();
        path.push(start);
        above[start] = 1;
        let mut x = start;
        let value = loop {
            match parent_of[x] {
                None => break 2,
                Some(p) if is_joint(p) => break 3,
                Some(p) if above[p] >= 2 => break above[p],
                Some(p) if above[p] == 1 => break 2, // a cycle
                Some(p) => {
                    above[p] = 1;
                    path.push(p);
                    x = p;
                }
            }
        };
        // Every node on the walk except the start is a non-joint, so they all share the answer.
        for &q in &path {
            above[q] = value;
        }
    }
    // Has a joint strictly below it: marked walking up from every joint, stopping at the first
    // node already marked (so each node is marked once).
    let mut below = vec![false; n];
    for &j in joints {
        let mut p = parent_of.get(j).copied().flatten();
        while let Some(a) = p {
            if below[a] {
                break;
            }
            below[a] = true;
            p = parent_of[a];
        }
    }
    (0..n)
        .filter(|&i| !is_joint(i) && above[i] == 3 && below[i])
        .collect()
}

/// What the gltf crate's validation lets through but its accessors would panic on: a channel
/// whose target node does not exist or whose target path is unknown.
fn check_document(doc: &gltf::Document, path: &Path) -> Result<(), ImportError> {
    let json = doc.as_json();
    let num_nodes = json.nodes.len();
    for (a, anim) in json.animations.iter().enumerate() {
        let name = anim
            .name
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| format!("anim{a}"));
        for (c, ch) in anim.channels.iter().enumerate() {
            let node = ch.target.node.value();
            if node >= num_nodes {
                return Err(gerr(
                    path,
                    format!(
                        "animation '{name}', channel {c}: target node {node} does not exist (the file has {num_nodes} nodes)"
                    ),
                ));
            }
            if !matches!(ch.target.path, gltf::json::validation::Checked::Valid(_)) {
                return Err(gerr(
                    path,
                    format!(
                        "animation '{name}', channel {c}: invalid target path (expected translation, rotation, scale or weights)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The accessor types the glTF specification allows for a channel (the gltf crate reaches an
/// `unreachable!()` on other rotation component types): times are float scalars; translations
/// and scales float VEC3; rotations VEC4 of floats or normalized 8/16-bit integers.
fn check_channel_types(
    input: &gltf::Accessor,
    output: &gltf::Accessor,
    property: Property,
) -> Result<(), GltfError> {
    if input.dimensions() != Dimensions::Scalar || input.data_type() != DataType::F32 {
        return Err(GltfError::TimesType {
            dims: input.dimensions(),
            data_type: input.data_type(),
        });
    }
    let rotation = property == Property::Rotation;
    let dims = if rotation {
        Dimensions::Vec4
    } else {
        Dimensions::Vec3
    };
    let type_ok = match output.data_type() {
        DataType::F32 => true,
        DataType::I8 | DataType::U8 | DataType::I16 | DataType::U16 => rotation,
        DataType::U32 => false,
    };
    if output.dimensions() != dims || !type_ok {
        return Err(GltfError::ValuesType {
            dims: output.dimensions(),
            data_type: output.data_type(),
            property,
        });
    }
    Ok(())
}

/// Refuses an accessor the gltf crate's readers would mis-handle: no elements, or a strided
/// extent that overflows or runs past its buffer view (its arithmetic is unchecked).
fn check_accessor(acc: &gltf::Accessor, buffers: &[Vec<u8>]) -> Result<(), GltfError> {
    let count = acc.count();
    if count == 0 {
        return Err(GltfError::NoElements);
    }
    let size = acc.size();
    if let Some(view) = acc.view() {
        let stride = view.stride().unwrap_or(size);
        if stride < size {
            return Err(GltfError::StrideBelowElement { stride, size });
        }
        let end = stride
            .checked_mul(count - 1)
            .and_then(|x| x.checked_add(size))
            .and_then(|x| x.checked_add(acc.offset()));
        let data = buffers.get(view.buffer().index()).map_or(0, Vec::len);
        let view_end = view.offset().checked_add(view.length());
        match (end, view_end) {
            (Some(e), Some(v)) if e <= view.length() && v <= data => {}
            _ => {
                return Err(GltfError::PastView {
                    count,
                    view: view.index(),
                });
            }
        }
    } else if acc.sparse().is_none() {
        return Err(GltfError::NoData);
    }
    if let Some(sparse) = acc.sparse() {
        let n = sparse.count();
        if n == 0 || n > count {
            return Err(GltfError::SparseCount { sparse: n, count });
        }
        let checks = [
            (
                sparse.indices().view(),
                sparse.indices().offset(),
                sparse.indices().index_type().size(),
            ),
            (sparse.values().view(), sparse.values().offset(), size),
        ];
        for (view, offset, item) in checks {
            let stride = view.stride().unwrap_or(item).max(item);
            let end = stride
                .checked_mul(n - 1)
                .and_then(|x| x.checked_add(item))
                .and_then(|x| x.checked_add(offset));
            let data = buffers.get(view.buffer().index()).map_or(0, Vec::len);
            let view_end = view.offset().checked_add(view.length());
            if !matches!((end, view_end), (Some(e), Some(v)) if e <= view.length() && v <= data) {
                return Err(GltfError::SparsePastView {
                    sparse: n,
                    view: view.index(),
                });
            }
        }
    }
    Ok(())
}

/// The uniform rate of the animation's keyframe grid, or [`FALLBACK_RATE`].
fn detect_rate(tracks: &[Track], start: f64, end: f64) -> f64 {
    let mut times: Vec<f64> = tracks
        .iter()
        .flat_map(|t| t.times.iter().copied())
        .collect();
    times.sort_by(f64::total_cmp);
    times.dedup_by(|a, b| (*a - *b).abs() <= 1e-5);
    if times.len() < 3 || end - start <= 0.0 {
        return FALLBACK_RATE;
    }
    let mut rate = (times.len() - 1) as f64 / (end - start);
    if !(1.0..=1000.0).contains(&rate) {
        return FALLBACK_RATE;
    }
    // Keyframes may be a uniform grid with gaps: use the smallest spacing as the candidate.
    let min_dt = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    if min_dt > 0.0 && 1.0 / min_dt <= 1000.0 {
        rate = rate.max(1.0 / min_dt);
    }
    let on_grid = times.iter().all(|&t| {
        let f = (t - start) * rate;
        (f - f.round()).abs() <= 0.01
    });
    if !on_grid {
        return FALLBACK_RATE;
    }
    // Sparse keys (e.g. 2 Hz): upsample by the smallest integer factor reaching MIN_GRID_RATE, so
    // every key stays on a sample and the slerp / cubic curves between keys are captured too
    // (our runtime interpolates linearly between samples).
    let factor = (MIN_GRID_RATE / rate).ceil().max(1.0);
    rate *= factor;
    if (rate - rate.round()).abs() <= 0.01 {
        rate = rate.round();
    }
    rate
}

/// Samples one channel at `time` (clamped to its keys); returns `width` components.
fn sample(t: &Track, time: f64, width: usize) -> [f64; 4] {
    let n = t.times.len();
    let cubic = t.interpolation == Interpolation::CubicSpline;
    let stride = if cubic { 3 * width } else { width };
    let value = |k: usize| -> [f64; 4] {
        let off = k * stride + if cubic { width } else { 0 };
        let mut out = [0.0; 4];
        out[..width].copy_from_slice(&t.values[off..off + width]);
        out
    };
    // Key times are f32 while sample times are computed in f64 (k / rate): a sample within
    // `eps` of a key takes that key's value, so e.g. STEP channels sampled on their own grid
    // never pick the previous key because 0.1f32 > 0.1.
    let eps = 1e-6 * time.abs().max(1.0);
    if n == 1 || time <= t.times[0] + eps {
        return value(0);
    }
    if time >= t.times[n - 1] - eps {
        return value(n - 1);
    }
    // Segment k: times[k] <= time < times[k+1].
    let k = t
        .times
        .partition_point(|&x| x <= time + eps)
        .saturating_sub(1)
        .min(n - 2);
    if (time - t.times[k]).abs() <= eps {
        return value(k);
    }
    let (t0, t1) = (t.times[k], t.times[k + 1]);
    let dt = t1 - t0;
    let u = if dt > 0.0 {
        ((time - t0) / dt).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (a, b) = (value(k), value(k + 1));
    match t.interpolation {
        Interpolation::Step => a,
        Interpolation::Linear => {
            if width == 4 {
                slerp(a, b, u)
            } else {
                std::array::from_fn(|i| a[i] + (b[i] - a[i]) * u)
            }
        }
        Interpolation::CubicSpline => {
            // p(u) = (2u³−3u²+1)·v_k + (u³−2u²+u)·dt·b_k + (−2u³+3u²)·v_k+1 + (u³−u²)·dt·a_k+1
            let out_tangent = &t.values[k * stride + 2 * width..k * stride + 3 * width];
            let in_tangent = &t.values[(k + 1) * stride..(k + 1) * stride + width];
            let (u2, u3) = (u * u, u * u * u);
            let h00 = 2.0 * u3 - 3.0 * u2 + 1.0;
            let h10 = u3 - 2.0 * u2 + u;
            let h01 = -2.0 * u3 + 3.0 * u2;
            let h11 = u3 - u2;
            let mut out = [0.0; 4];
            for i in 0..width {
                out[i] =
                    h00 * a[i] + h10 * dt * out_tangent[i] + h01 * b[i] + h11 * dt * in_tangent[i];
            }
            out // rotations are normalized by the caller (quat_from_f64)
        }
    }
}

/// Spherical linear interpolation along the shorter arc, in f64 (x, y, z, w).
fn slerp(a: [f64; 4], b: [f64; 4], u: f64) -> [f64; 4] {
    let na = (a.iter().map(|c| c * c).sum::<f64>()).sqrt().max(1e-300);
    let nb = (b.iter().map(|c| c * c).sum::<f64>()).sqrt().max(1e-300);
    let a = a.map(|c| c / na);
    let mut b = b.map(|c| c / nb);
    let mut d: f64 = (0..4).map(|i| a[i] * b[i]).sum();
    if d < 0.0 {
        d = -d;
        b = b.map(|c| -c);
    }
    let (wa, wb) = if d > 0.9995 {
        (1.0 - u, u)
    } else {
        let theta = d.min(1.0).acos();
        let s = theta.sin();
        (((1.0 - u) * theta).sin() / s, (u * theta).sin() / s)
    };
    std::array::from_fn(|i| wa * a[i] + wb * b[i])
}

/// A relative glTF URI as a path (`%20` → ` `: relative URIs are percent-encoded, RFC 3986),
/// decoded with the `percent-encoding` crate. Refused when a `%` is not followed by two hex
/// digits, or the result holds a NUL or is not UTF-8. The loader and the skip cache's list of
/// external buffers (`pipeline::cache`) both read URIs through it.
pub fn decode_uri(text: &str) -> Result<String, UriError> {
    let b = text.as_bytes();
    let hex = |i: usize| b.get(i).is_some_and(u8::is_ascii_hexdigit);
    if (0..b.len()).any(|i| b[i] == b'%' && !(hex(i + 1) && hex(i + 2))) {
        return Err(UriError::Percent);
    }
    let out: Vec<u8> = percent_encoding::percent_decode_str(text).collect();
    if out.contains(&0) {
        return Err(UriError::Nul);
    }
    String::from_utf8(out).map_err(|_| UriError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny glTF with one node animated by three samplers (STEP translation, LINEAR rotation,
    /// CUBICSPLINE scale) and a child node without channels, buffers embedded as base64.
    fn tiny_gltf(times: &[f32]) -> String {
        let mut bin: Vec<u8> = Vec::new();
        let push = |bin: &mut Vec<u8>, v: &[f32]| {
            for x in v {
                bin.extend_from_slice(&x.to_le_bytes());
            }
        };
        let n = times.len();
        push(&mut bin, times); // input
        let trans: Vec<f32> = (0..n).flat_map(|k| [k as f32, 0.0, 0.0]).collect();
        let s = std::f32::consts::FRAC_1_SQRT_2;
        let rots: Vec<f32> = (0..n)
            .flat_map(|k| {
                if k % 2 == 0 {
                    [0.0, 0.0, 0.0, 1.0]
                } else {
                    [0.0, 0.0, s, s]
                }
            })
            .collect();
        // Cubic scale: (in-tangent, value, out-tangent) per key; value k+1, tangents 1 (unit slope).
        let scl: Vec<f32> = (0..n)
            .flat_map(|k| [1.0, 1.0, 1.0, k as f32 + 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
            .collect();
        let o_t = bin.len();
        push(&mut bin, &trans);
        let o_r = bin.len();
        push(&mut bin, &rots);
        let o_s = bin.len();
        push(&mut bin, &scl);
        let b64 = base64_encode(&bin);
        let (tmin, tmax) = (times[0], times[n - 1]);
        format!(
            r#"{{"asset":{{"version":"2.0"}},
"nodes":[{{"name":"root","children":[1],"translation":[0,0,0]}},{{"name":"child","translation":[0,0.5,0]}}],
"buffers":[{{"byteLength":{len},"uri":"data:application/octet-stream;base64,{b64}"}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":{li}}},{{"buffer":0,"byteOffset":{o_t},"byteLength":{lt}}},
{{"buffer":0,"byteOffset":{o_r},"byteLength":{lr}}},{{"buffer":0,"byteOffset":{o_s},"byteLength":{ls}}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":{n},"type":"SCALAR","min":[{tmin}],"max":[{tmax}]}},
{{"bufferView":1,"componentType":5126,"count":{n},"type":"VEC3"}},
{{"bufferView":2,"componentType":5126,"count":{n},"type":"VEC4"}},
{{"bufferView":3,"componentType":5126,"count":{n3},"type":"VEC3"}}],
"animations":[{{"name":"mix","samplers":[{{"input":0,"output":1,"interpolation":"STEP"}},{{"input":0,"output":2,"interpolation":"LINEAR"}},{{"input":0,"output":3,"interpolation":"CUBICSPLINE"}}],
"channels":[{{"sampler":0,"target":{{"node":0,"path":"translation"}}}},{{"sampler":1,"target":{{"node":0,"path":"rotation"}}}},{{"sampler":2,"target":{{"node":0,"path":"scale"}}}}]}},
{{"samplers":[{{"input":0,"output":1}}],"channels":[{{"sampler":0,"target":{{"node":1,"path":"translation"}}}}]}}]}}"#,
            len = bin.len(),
            li = 4 * n,
            lt = 12 * n,
            lr = 16 * n,
            ls = 36 * n,
            n3 = 3 * n,
        )
    }

    fn base64_encode(data: &[u8]) -> String {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for c in data.chunks(3) {
            let v = (c[0] as u32) << 16
                | (*c.get(1).unwrap_or(&0) as u32) << 8
                | *c.get(2).unwrap_or(&0) as u32;
            for i in 0..4 {
                if i <= c.len() {
                    out.push(A[(v >> (18 - 6 * i) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    fn load_text(text: &str) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
        load_slice(text.as_bytes(), Path::new("tiny.gltf"))
    }

    fn load_slice(
        bytes: &[u8],
        path: &Path,
    ) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
        load(bytes, path, None, &ImportOptions::default())
    }

    #[test]
    fn uniform_keys_step_linear_cubic() {
        // Keys at 0, 0.5, 1.0 s: uniform → 2 Hz, samples exactly at the keys.
        let (clips, w) = load_text(&tiny_gltf(&[0.0, 0.5, 1.0])).unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(clips.len(), 2);
        let c = &clips[0];
        assert_eq!(c.name, "mix");
        assert_eq!(clips[1].name, "anim1");
        // 2 Hz key grid, upsampled ×12 to 24 Hz.
        assert_eq!((c.sample_rate, c.num_samples), (24.0, 25));
        // Node animation without skin: the animated node (root) and its ancestors only.
        assert_eq!(c.skeleton.names, ["root"]);
        assert_eq!(clips[1].skeleton.names, ["root", "child"]);
        assert_eq!(clips[1].skeleton.parents, [crate::NO_PARENT, 0]);
        // Second animation: the root is not animated and keeps its rest pose; child translation ×100.
        assert_eq!(
            clips[1].translations[clips[1].index(1, 24)],
            Vec3::new(200.0, 0.0, 0.0)
        );
        assert_eq!(
            clips[1].translations[clips[1].index(1, 6)],
            Vec3::new(50.0, 0.0, 0.0)
        );
        assert_eq!(
            clips[1].skeleton.bind_translations[1],
            Vec3::new(0.0, 50.0, 0.0)
        );
        for k in 0..3 {
            assert_eq!(
                c.translations[12 * k],
                Vec3::new(100.0 * k as f32, 0.0, 0.0)
            );
            assert!((c.scales[12 * k].x - (k as f32 + 1.0)).abs() < 1e-6);
        }
        // STEP holds between keys.
        assert_eq!(c.translations[11], Vec3::ZERO);
    }

    #[test]
    fn interpolation_between_keys() {
        // Non-uniform keys (0, 0.13, 1.0: no common grid) → resampled at 30 Hz.
        let t1 = 0.13f32 as f64;
        let (clips, _) = load_text(&tiny_gltf(&[0.0, 0.13, 1.0])).unwrap();
        let c = &clips[0];
        assert_eq!((c.sample_rate, c.num_samples), (30.0, 31));
        // t = 0.5 (sample 15): in segment [t1, 1.0].
        let u = (0.5 - t1) / (1.0 - t1);
        // STEP translation holds key 1 (x = 1 m = 100 cm).
        assert_eq!(c.translations[15], Vec3::new(100.0, 0.0, 0.0));
        // LINEAR rotation: slerp from 90° about Z (key 1) to identity (key 2).
        let angle = std::f64::consts::FRAC_PI_2 * (1.0 - u);
        let q = c.rotations[15];
        assert!(
            (q.z as f64 - (angle / 2.0).sin()).abs() < 1e-6
                && (q.w as f64 - (angle / 2.0).cos()).abs() < 1e-6,
            "{q}"
        );
        // CUBICSPLINE scale: values 2 → 3 with tangents 1 (per second) over dt.
        let dt = 1.0 - t1;
        let (u2, u3) = (u * u, u * u * u);
        let expect = (2.0 * u3 - 3.0 * u2 + 1.0) * 2.0
            + (u3 - 2.0 * u2 + u) * dt
            + (-2.0 * u3 + 3.0 * u2) * 3.0
            + (u3 - u2) * dt;
        assert!(
            (c.scales[15].x as f64 - expect).abs() < 1e-5,
            "{} vs {expect}",
            c.scales[15].x
        );
        // Cubic differs from linear here (tangents 1 vs secant slope 1/dt).
        assert!((expect - (2.0 + u)).abs() > 1e-3);
        // Exactly at the last key: the key values.
        assert_eq!(c.translations[30], Vec3::new(200.0, 0.0, 0.0));
        assert!((c.scales[30].x - 3.0).abs() < 1e-6);
        // t = 1/30 in segment [0, t1]: STEP holds key 0, linear rotation part of the way.
        assert_eq!(c.translations[1], Vec3::ZERO);
        let q = c.rotations[1];
        let angle = std::f64::consts::FRAC_PI_2 * ((1.0 / 30.0) / t1);
        assert!((q.z as f64 - (angle / 2.0).sin()).abs() < 1e-6, "{q}");
    }

    #[test]
    fn keys_on_a_grid_with_gaps_keep_the_grid_rate() {
        // Keys 0, 0.1, 1.0 lie on a 10 Hz grid; ×3 → 30 Hz; key 1 is sample 3 exactly.
        let (clips, _) = load_text(&tiny_gltf(&[0.0, 0.1, 1.0])).unwrap();
        assert_eq!((clips[0].sample_rate, clips[0].num_samples), (30.0, 31));
        assert_eq!(clips[0].translations[3], Vec3::new(100.0, 0.0, 0.0));
        assert_eq!(clips[0].translations[2], Vec3::ZERO);
    }

    #[test]
    fn a_cut_glb_error_says_the_declared_length_and_the_cut_chunk() {
        let mut glb = b"glTF".to_vec();
        for w in [2u32, 100, 60] {
            glb.extend_from_slice(&w.to_le_bytes());
        }
        glb.extend_from_slice(b"JSON{\"asset\":");
        let e = load_slice(&glb, Path::new("cut.glb"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the file is 29 bytes, its GLB header declares 100")
                && e.contains("JSON chunk of 60 bytes at byte 12 ends at byte 80, past the end"),
            "{e}"
        );
        let e = load_slice(b"glTF\x02\0", Path::new("cut.glb"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the file is 6 bytes, shorter than the 12-byte GLB header"),
            "{e}"
        );
        // Not GLB: no note.
        let e = load_slice(b"{\"asset\":", Path::new("a.gltf"))
            .unwrap_err()
            .to_string();
        assert!(!e.contains("GLB header"), "{e}");
    }

    #[test]
    fn malformed_gltf_is_an_error() {
        assert!(load_text("").is_err());
        assert!(load_text("{").unwrap_err().message.contains("invalid glTF"));
        assert!(
            load_text(r#"{"asset":{"version":"2.0"}}"#)
                .unwrap_err()
                .message
                .contains("no importable animation")
        );
        let text = tiny_gltf(&[0.0, 0.5, 1.0]);
        for cut in (0..text.len()).step_by(97) {
            let _ = load_text(&text[..cut]);
        }
        // Keyframe times going backwards.
        let e = load_text(&tiny_gltf(&[0.0, 1.0, 0.5])).unwrap_err();
        assert!(e.message.contains("goes backwards"), "{e}");
    }

    /// The gap-closing rule as it was first written (walk up from every joint), to check the
    /// linear version against.
    fn nodes_between_naive(joints: &BTreeSet<usize>, parent_of: &[Option<usize>]) -> Vec<usize> {
        let mut set = joints.clone();
        for &j in joints {
            let mut path_up = Vec::new();
            let mut p = parent_of[j];
            let mut guard = 0;
            while let Some(a) = p {
                guard += 1;
                if guard > parent_of.len() {
                    break;
                }
                if set.contains(&a) {
                    set.extend(path_up.iter().copied());
                    break;
                }
                path_up.push(a);
                p = parent_of[a];
            }
        }
        set.difference(joints).copied().collect()
    }

    #[test]
    fn linear_gap_closing_matches_the_walk_up_on_random_forests() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..300 {
            let n = 1 + next() as usize % 40;
            let mut parent_of: Vec<Option<usize>> = (0..n)
                .map(|i| (i > 0 && next() % 5 != 0).then(|| next() as usize % i))
                .collect();
            // Shuffle indices so parents are not always earlier.
            let perm: Vec<usize> = {
                let mut p: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    p.swap(i, next() as usize % (i + 1));
                }
                p
            };
            let mut shuffled = vec![None; n];
            for i in 0..n {
                shuffled[perm[i]] = parent_of[i].map(|q| perm[q]);
            }
            parent_of = shuffled;
            let joints: BTreeSet<usize> = (0..n).filter(|_| next() % 3 == 0).collect();
            assert_eq!(
                nodes_between(&joints, &parent_of),
                nodes_between_naive(&joints, &parent_of),
                "{parent_of:?} {joints:?}"
            );
        }
        // A cycle (validation lets it through): no hang, no panic.
        let cyc = vec![Some(1), Some(0), None];
        let joints: BTreeSet<usize> = [0].into_iter().collect();
        let _ = nodes_between(&joints, &cyc);
    }

    /// The texts users read, as they were when these were `String` errors.
    #[test]
    fn error_texts() {
        use GltfError as G;
        let cases: [(GltfError, &str); 12] = [
            (G::NoElements, "accessor has no elements"),
            (
                G::StrideBelowElement {
                    stride: 4,
                    size: 12,
                },
                "byte stride 4 is smaller than an element (12)",
            ),
            (
                G::SparsePastView { sparse: 3, view: 1 },
                "3 sparse elements do not fit in buffer view 1",
            ),
            (
                G::TimesType {
                    dims: Dimensions::Vec2,
                    data_type: DataType::U8,
                },
                "keyframe times are Vec2 of U8, expected float scalars",
            ),
            (
                G::ValuesType {
                    dims: Dimensions::Vec3,
                    data_type: DataType::U16,
                    property: Property::Translation,
                },
                "keyframe values are Vec3 of U16, not allowed for Translation",
            ),
            (
                G::KeyTime { time: 0.5, key: 2 },
                "keyframe time 0.5 at key 2 is not finite or goes backwards",
            ),
            (
                G::ValueCount {
                    values: 5,
                    keys: 2,
                    expected: 6,
                    interpolation: Interpolation::Linear,
                },
                "5 output values for 2 keyframes, expected 6 (Linear)",
            ),
            (G::KeyValue(f64::INFINITY), "non-finite keyframe value inf"),
            (
                G::of("JOINTS_0")(G::ElementType {
                    dims: Dimensions::Vec3,
                    data_type: DataType::F32,
                    expected_dims: Dimensions::Vec4,
                    expected_types: &[DataType::U8, DataType::U16],
                }),
                "JOINTS_0: Vec3 of F32 where Vec4 of [U8, U16] is expected",
            ),
            (
                G::InfluenceCount {
                    positions: 3,
                    joints: 2,
                    weights: 3,
                },
                "3 positions, 2 joints and 3 weights",
            ),
            (G::Uri(UriError::Percent), "invalid percent-encoding"),
            (
                G::IndexPast {
                    index: 9,
                    vertices: 4,
                },
                "index 9 past the 4 vertices",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
        assert_eq!(decode_uri("a%2"), Err(UriError::Percent));
        assert_eq!(decode_uri("a%00"), Err(UriError::Nul));
        assert_eq!(decode_uri("a%FF"), Err(UriError::NotUtf8));
        assert_eq!(decode_uri("a%20b.bin").as_deref(), Ok("a b.bin"));
    }

    #[test]
    fn base64_decoding() {
        assert_eq!(buffers::decode_base64("").unwrap(), b"");
        assert_eq!(buffers::decode_base64("TWFu").unwrap(), b"Man");
        assert_eq!(buffers::decode_base64("TWE=").unwrap(), b"Ma");
        assert_eq!(buffers::decode_base64("TWE").unwrap(), b"Ma");
        assert_eq!(buffers::decode_base64("TQ==").unwrap(), b"M");
        assert!(buffers::decode_base64("T").is_err());
        assert!(buffers::decode_base64("TW E").is_err());
        assert!(buffers::decode_base64("TQ===").is_err());
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(buffers::decode_base64(&base64_encode(&all)).unwrap(), all);
    }

    #[test]
    fn slerp_takes_the_short_way() {
        let a = [0.0, 0.0, 0.0, 1.0];
        let b = [0.0, 0.0, 0.0, -1.0];
        assert_eq!(slerp(a, b, 0.5), [0.0, 0.0, 0.0, 1.0]);
    }
}

/// The buffers of a glTF document, resolved without the gltf crate's importer (which opens any
/// path a `uri` names): the GLB binary chunk; `data:` URIs (base64, decoded size bounded by the
/// text that holds them); relative URIs, percent-decoded, read only when they stay inside the
/// `.gltf` file's folder (no absolute path, no scheme, no `..` above the folder, no symbolic link
/// leading out of it) and are regular files. Images are never read. Errors name the buffer and
/// the URI as the file wrote it, never what another file holds or how big it is.
mod buffers {
    use super::{GltfError, ImportError, gerr};
    use std::path::{Component, Path, PathBuf};

    pub fn load(
        doc: &gltf::Document,
        mut blob: Option<Vec<u8>>,
        path: &Path,
        base: Option<&Path>,
    ) -> Result<Vec<Vec<u8>>, ImportError> {
        let mut out = Vec::new();
        for buffer in doc.buffers() {
            let i = buffer.index();
            let mut data = match buffer.source() {
                gltf::buffer::Source::Bin => blob.take().ok_or_else(|| {
                    gerr(
                        path,
                        format!("buffer {i}: the GLB file has no binary chunk"),
                    )
                })?,
                gltf::buffer::Source::Uri(uri) => read_uri(uri, base)
                    .map_err(|m| gerr(path, format!("buffer {i} (uri '{}'): {m}", shown(uri))))?,
            };
            if data.len() < buffer.length() {
                return Err(gerr(
                    path,
                    format!(
                        "buffer {i}: {} bytes of data for a declared byteLength of {}",
                        data.len(),
                        buffer.length()
                    ),
                ));
            }
            // As the gltf crate does: accessors may read whole 4-byte words at the end.
            while data.len() % 4 != 0 {
                data.push(0);
            }
            out.push(data);
        }
        Ok(out)
    }

    /// The URI as shown in errors: `data:` payloads are cut short.
    fn shown(uri: &str) -> String {
        if uri.len() > 80 {
            let mut end = 60;
            while !uri.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}...", &uri[..end])
        } else {
            uri.to_string()
        }
    }

    fn read_uri(uri: &str, base: Option<&Path>) -> Result<Vec<u8>, GltfError> {
        if let Some(rest) = uri.strip_prefix("data:") {
            let Some((_, payload)) = rest.split_once(";base64,") else {
                return Err(GltfError::NotBase64);
            };
            return decode_base64(payload);
        }
        if uri.contains(':') || uri.starts_with('/') || uri.starts_with('\\') {
            return Err(GltfError::NotRelative);
        }
        let Some(base) = base else {
            return Err(GltfError::NoFolder);
        };
        let relative = super::decode_uri(uri)?;
        let relative = inside(&relative)?;
        let folder = base
            .canonicalize()
            .map_err(|_| GltfError::FolderUnresolved)?;
        let target = folder.join(&relative);
        // A symbolic link inside the folder may lead out of it: compare the resolved paths.
        let resolved = target.canonicalize().map_err(|_| GltfError::Missing)?;
        if !resolved.starts_with(&folder) {
            return Err(GltfError::Outside);
        }
        let file = clipforge_base::fsio::open_regular(&resolved).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => GltfError::NotRegular(e),
            _ => GltfError::CannotOpen,
        })?;
        // A folder swapped for a symbolic link between the check above and the open: what was
        // opened is checked too (Linux names it in /proc).
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let opened = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()));
            if opened.is_ok_and(|p| !p.starts_with(&folder)) {
                return Err(GltfError::Outside);
            }
        }
        read_bounded(file, crate::limits::max_memory_bytes()).ok_or(GltfError::CannotRead)
    }

    /// The whole of an opened regular file of at most `max_len` bytes.
    fn read_bounded(file: std::fs::File, max_len: u64) -> Option<Vec<u8>> {
        use std::io::Read;
        let len = file.metadata().ok()?.len();
        if len > max_len {
            return None;
        }
        let mut bytes = Vec::with_capacity(len as usize);
        file.take(max_len + 1).read_to_end(&mut bytes).ok()?;
        (bytes.len() as u64 <= max_len).then_some(bytes)
    }

    /// `relative` as a path that stays inside the folder (`a/../b.bin` is fine, `../b.bin` not).
    fn inside(relative: &str) -> Result<PathBuf, GltfError> {
        let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
        for c in Path::new(relative).components() {
            match c {
                Component::Normal(p) => parts.push(p),
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(GltfError::Outside);
                    }
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(GltfError::Absolute);
                }
            }
        }
        if parts.is_empty() {
            return Err(GltfError::NoFile);
        }
        Ok(parts.iter().collect())
    }

    /// Standard base64 with optional `=` padding. The output is 3/4 of the text at most, so it is
    /// bounded by the input's size.
    pub(super) fn decode_base64(text: &str) -> Result<Vec<u8>, GltfError> {
        let body = text.trim_end_matches('=');
        if text.len() - body.len() > 2 {
            return Err(GltfError::Base64);
        }
        let mut out = Vec::with_capacity(body.len() / 4 * 3 + 3);
        let mut acc = 0u32;
        let mut nbits = 0;
        for &c in body.as_bytes() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                _ => return Err(GltfError::Base64),
            };
            acc = (acc << 6) | v as u32;
            nbits += 6;
            if nbits >= 8 {
                nbits -= 8;
                out.push((acc >> nbits) as u8);
                acc &= (1 << nbits) - 1;
            }
        }
        if body.len() % 4 == 1 {
            return Err(GltfError::Base64);
        }
        Ok(out)
    }
}
