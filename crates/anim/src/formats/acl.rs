//! ACL's `.acl.sjson` clip format (versions 1–5): reader for transform clips and `qvvf` track
//! lists, writer for transform clips.
//!
//! Reading follows ACL's own reader (`acl/io/clip_reader.h`) where it matters and is more tolerant
//! where ACL's reader is only picky about key order:
//! - `clip` files: `clip` header, optional `settings` (ignored: compression settings are ours to
//!   choose), `bones` (parents listed before children, several roots allowed), `tracks`. A missing
//!   `rotations`/`translations`/`scales` array means identity for every sample (not the bind
//!   pose); a bone without a `tracks` entry is identity throughout. `vertex_distance` becomes the
//!   shell distance (default 3.0 when absent, as ACL's tools use).
//! - Binary exact (`is_binary_exact = true`): numbers are strings of hex digits holding IEEE bits,
//!   f64 in clip files, f32 in track lists (leading zeros may be omitted). Plain decimal numbers are
//!   accepted too (ACL's format reference mixes them).
//! - Additive clips (`additive_format` relative, additive0 or additive1): the deltas load as the
//!   clip's samples and `base_tracks` (same layout, `additive_base_num_samples` samples at
//!   `additive_base_sample_rate`, ACL's defaults 1 and 30; a bone without a base track is
//!   identity) as its [`RawClip::additive`] base. `base_tracks` of a non-additive clip are ignored,
//!   as ACL ignores them. The writer writes both back.
//! - `track_list` files: only `qvvf` tracks (what ACL's `write_track_list` emits for transforms):
//!   rows `[ [x,y,z,w], [x,y,z], [x,y,z] ]`, `parent_index` (−1 or 0xFFFFFFFF = root; parents
//!   first), `shell_distance`, `precision` (the bone's own error threshold), bind pose;
//!   `output_index` and thresholds are read past. Scalar track lists (float1f…vector4f) are read
//!   by [`read_acl_file`] into a [`RawScalarList`] (per-track `precision`, `output_index` incl.
//!   stripped tracks) and written back by [`write_acl_scalar_list`]; [`read_acl_clip`] refuses
//!   them with a clear message.
//!
//! Writing emits version 5 with keys in the order ACL's reader expects; floats are written so
//! that they read back bit for bit (shortest round-trip text of the f32 widened to f64, or the
//! f64 bits in hex with [`AclWriteOptions::binary_exact`]).

use super::sjson::{self, Node, Value};
use super::{
    ImportError, ImportErrorKind, build_clip, check_size, file_stem, quat_from_f64,
    skeleton_ordered,
};
use crate::additive::{AdditiveBase, AdditiveFormat};
use crate::clip::RawClip;
use crate::scalar::{DEFAULT_SCALAR_PRECISION, RawScalarList, RawScalarTrack, ScalarType};
use crate::skeleton::{BoneDesc, SkeletonError};
use clipforge_base::text::cut_token;
use glam::{Quat, Vec3};
use std::path::Path;

/// Options for [`write_acl_clip_with`].
#[derive(Clone, Debug, PartialEq)]
pub struct AclWriteOptions {
    /// Write every bind pose and sample value as the hex of its f64 bits (ACL's
    /// `is_binary_exact`); otherwise shortest round-trip decimals (also exact, more readable).
    pub binary_exact: bool,
    /// Leave out a bone's `scales` array when every sample is exactly 1 (readers then use 1).
    pub omit_unit_scales: bool,
}

impl Default for AclWriteOptions {
    fn default() -> Self {
        Self {
            binary_exact: false,
            omit_unit_scales: true,
        }
    }
}

struct Reader<'p> {
    path: &'p Path,
    exact: bool,
    /// 64 for clip files, 32 for track lists (binary-exact width).
    bits: u32,
    /// Size of the file's text: the memory budget scales with it.
    input_len: usize,
}

type R<T> = Result<T, ImportError>;

impl<'p> Reader<'p> {
    fn err<T>(&self, line: usize, msg: impl Into<String>) -> R<T> {
        Err(ImportError::new(self.path, Some(line), msg))
    }

    fn object<'a, 'n>(&self, node: &'n Node<'a>, what: &str) -> R<&'n [sjson::Entry<'a>]> {
        match node.as_object() {
            Some(o) => Ok(o),
            None => self.err(
                node.line,
                format!(
                    "{what} must be an object {{ ... }}, found {}",
                    node.value.kind()
                ),
            ),
        }
    }

    fn array<'a, 'n>(&self, node: &'n Node<'a>, what: &str) -> R<&'n [Node<'a>]> {
        match node.as_array() {
            Some(a) => Ok(a),
            None => self.err(
                node.line,
                format!(
                    "{what} must be an array [ ... ], found {}",
                    node.value.kind()
                ),
            ),
        }
    }

    fn string<'n>(&self, node: &'n Node<'_>, what: &str) -> R<&'n str> {
        match node.as_str() {
            Some(s) => Ok(s),
            None => self.err(
                node.line,
                format!("{what} must be a string, found {}", node.value.kind()),
            ),
        }
    }

    fn boolean(&self, node: &Node<'_>, what: &str) -> R<bool> {
        match node.as_bool() {
            Some(b) => Ok(b),
            None => self.err(
                node.line,
                format!("{what} must be true or false, found {}", node.value.kind()),
            ),
        }
    }

    /// A plain number (never hex), e.g. counts and rates.
    fn plain_number(&self, node: &Node<'_>, what: &str) -> R<f64> {
        match &node.value {
            Value::Number(text) => match node.as_f64() {
                Some(v) => Ok(v),
                None => self.err(
                    node.line,
                    format!("bad number '{}' for {what}", cut_token(text, 80)),
                ),
            },
            v => self.err(
                node.line,
                format!("{what} must be a number, found {}", v.kind()),
            ),
        }
    }

    /// A float value: a number, or in binary-exact mode a string of hex digits holding the bits.
    fn float(&self, node: &Node<'_>, what: &str) -> R<f64> {
        match &node.value {
            Value::String(s) if self.exact => {
                let max = if self.bits == 64 { 16 } else { 8 };
                let ok = !s.is_empty() && s.len() <= max && s.bytes().all(|c| c.is_ascii_hexdigit());
                if !ok {
                    return self.err(
                        node.line,
                        format!("bad binary-exact value \"{s}\" for {what}: expected 1 to {max} hex digits"),
                    );
                }
                let bits = u64::from_str_radix(s, 16).unwrap_or(0);
                Ok(if self.bits == 64 { f64::from_bits(bits) } else { f32::from_bits(bits as u32) as f64 })
            }
            Value::String(s) => self.err(
                node.line,
                format!("{what}: found the string \"{s}\" where a number belongs (hex values need is_binary_exact = true)"),
            ),
            _ => self.plain_number(node, what),
        }
    }

    /// A row of exactly `N` floats.
    fn row<const N: usize>(&self, node: &Node<'_>, what: &str) -> R<[f64; N]> {
        let items = self.array(node, what)?;
        if items.len() != N {
            return self.err(
                node.line,
                format!("{what}: expected {N} components, found {}", items.len()),
            );
        }
        let mut out = [0.0; N];
        for (o, item) in out.iter_mut().zip(items) {
            *o = self.float(item, what)?;
        }
        Ok(out)
    }

    fn count(&self, node: &Node<'_>, what: &str) -> R<usize> {
        let v = self.plain_number(node, what)?;
        if !(v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64) {
            return self.err(
                node.line,
                format!("{what} must be a non-negative integer, found {v}"),
            );
        }
        Ok(v as usize)
    }

    fn sample_rate(&self, node: &Node<'_>) -> R<f32> {
        let v = self.plain_number(node, "sample_rate")?;
        let r = v as f32;
        if !(r.is_finite() && r > 0.0) {
            return self.err(
                node.line,
                format!("sample_rate must be a positive number, found {v}"),
            );
        }
        Ok(r)
    }

    /// Bind pose keys of a bone or qvvf track.
    fn bind_pose(&self, entries: &[sjson::Entry<'_>], desc: &mut BoneDesc) -> R<()> {
        for e in entries {
            match e.key.as_ref() {
                "bind_rotation" => {
                    let q = self.row::<4>(&e.value, "bind_rotation")?;
                    let q32 = quat_from_f64(q);
                    if !q32.is_finite() || q32.length() < 1e-6 {
                        return self.err(e.value.line, "bind_rotation is zero or not finite");
                    }
                    desc.bind_rotation = q32;
                }
                "bind_translation" | "bind_scale" => {
                    let v = self.row::<3>(&e.value, &e.key)?;
                    let v = Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32);
                    if !v.is_finite() {
                        return self.err(
                            e.value.line,
                            format!("{} is not finite (in float32)", e.key),
                        );
                    }
                    if e.key == "bind_scale" {
                        desc.bind_scale = v;
                    } else {
                        desc.bind_translation = v;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn shell_distance(&self, node: &Node<'_>, what: &str) -> R<f32> {
        let d = self.float(node, what)? as f32;
        if !(d.is_finite() && d >= 0.0) {
            return self.err(
                node.line,
                format!("{what} must be a finite number >= 0, found {d}"),
            );
        }
        Ok(d)
    }

    /// A bone's or track's own `precision` (`owner`: "bone 'x'" / "track 'x'" for the message).
    fn precision(&self, node: &Node<'_>, owner: &str) -> R<f32> {
        let v = self.float(node, "precision")? as f32;
        if !(v.is_finite() && v > 0.0) {
            return self.err(
                node.line,
                format!("{owner}: precision must be a positive number, found {v}"),
            );
        }
        Ok(v)
    }
}

fn get<'n, 'a>(entries: &'n [sjson::Entry<'a>], key: &str) -> Option<&'n Node<'a>> {
    entries.iter().find(|e| e.key == key).map(|e| &e.value)
}

/// What an `.acl.sjson` file holds: a transform clip (a `clip` file or a `qvvf` track list) or a
/// scalar track list.
// One value per file read, moved once into its compressor: boxing the clip would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum AclFile {
    Clip(RawClip),
    Scalars(RawScalarList),
}

/// Reads one clip from the text of an `.acl.sjson` file; `path` is for names and errors. A scalar
/// track list is refused with a clear message (read it with [`read_acl_file`]).
pub(crate) fn read_acl_clip(text: &str, path: &Path) -> Result<RawClip, ImportError> {
    match read_acl_any(text, path, false)? {
        AclFile::Clip(c) => Ok(c),
        AclFile::Scalars(_) => Err(
            ImportError::new(path, None, "a scalar track list, not a clip")
                .with_kind(ImportErrorKind::ScalarTrackList),
        ),
    }
}

/// Reads an `.acl.sjson` file of either kind: a transform clip or a scalar track list.
pub fn read_acl_file(text: &str, path: &Path) -> Result<AclFile, ImportError> {
    read_acl_any(text, path, true)
}

fn read_acl_any(text: &str, path: &Path, scalars: bool) -> Result<AclFile, ImportError> {
    let doc = sjson::parse(text).map_err(|e| {
        ImportError::new(path, Some(e.line), format!("SJSON syntax: {}", e.message))
    })?;
    let top = doc.as_object().unwrap_or(&[]);
    let mut rd = Reader {
        path,
        exact: false,
        bits: 64,
        input_len: text.len(),
    };

    let Some(version) = get(top, "version") else {
        return Err(ImportError::new(
            path,
            Some(1),
            "missing 'version = N' (not an ACL clip file?)",
        ));
    };
    let v = rd.plain_number(version, "version")?;
    if !(v.fract() == 0.0 && (1.0..=5.0).contains(&v)) {
        return rd.err(
            version.line,
            format!("unsupported version {v}: this reader knows versions 1 to 5"),
        );
    }

    match (get(top, "clip"), get(top, "track_list")) {
        (Some(c), Some(t)) => rd.err(
            c.line.max(t.line),
            format!(
                "file has both a 'clip' (line {}) and a 'track_list' (line {}) section; an ACL file holds one or the other (is this the commented format reference?)",
                c.line, t.line
            ),
        ),
        (Some(clip), None) => read_clip(&mut rd, top, clip).map(AclFile::Clip),
        (None, Some(list)) => {
            rd.bits = 32;
            read_track_list(&mut rd, top, list, scalars)
        }
        (None, None) => rd.err(1, "neither a 'clip' nor a 'track_list' section: not an ACL clip file"),
    }
}

struct Header {
    name: String,
    num_samples: usize,
    sample_rate: f32,
}

fn read_header(rd: &mut Reader<'_>, node: &Node<'_>, what: &str) -> R<Header> {
    let entries = rd.object(node, what)?;
    let name = match get(entries, "name") {
        Some(n) => rd.string(n, "name")?.to_string(),
        None => String::new(),
    };
    let Some(ns) = get(entries, "num_samples") else {
        return rd.err(node.line, format!("'{what}' has no num_samples"));
    };
    let num_samples = rd.count(ns, "num_samples")?;
    let Some(sr) = get(entries, "sample_rate") else {
        return rd.err(node.line, format!("'{what}' has no sample_rate"));
    };
    let sample_rate = rd.sample_rate(sr)?;
    if let Some(b) = get(entries, "is_binary_exact") {
        rd.exact = rd.boolean(b, "is_binary_exact")?;
    }
    let name = if name.is_empty() {
        file_stem(rd.path)
    } else {
        name
    };
    Ok(Header {
        name,
        num_samples,
        sample_rate,
    })
}

fn read_clip<'a>(rd: &mut Reader<'_>, top: &[sjson::Entry<'a>], clip: &Node<'a>) -> R<RawClip> {
    let header = read_header(rd, clip, "clip")?;
    let entries = rd.object(clip, "clip")?;
    let additive = read_additive_header(rd, entries)?;
    if let Some(s) = get(top, "settings") {
        rd.object(s, "settings")?;
    }
    let n = header.num_samples;

    // Bones.
    let Some(bones_node) = get(top, "bones") else {
        return rd.err(clip.line, "missing 'bones = [ ... ]'");
    };
    let bone_nodes = rd.array(bones_node, "bones")?;
    let mut descs: Vec<BoneDesc> = Vec::with_capacity(bone_nodes.len());
    let mut index: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(bone_nodes.len());
    for b in bone_nodes {
        let e = rd.object(b, "a bone")?;
        let Some(name_node) = get(e, "name") else {
            return rd.err(b.line, "bone has no name");
        };
        let name = rd.string(name_node, "bone name")?;
        if let Some(&prev) = index.get(name) {
            let prev_line = bone_nodes[prev].line;
            return rd.err(
                name_node.line,
                format!("duplicate bone '{name}' (first defined on line {prev_line})"),
            );
        }
        let parent = match get(e, "parent") {
            None => None,
            Some(p) => {
                let pname = rd.string(p, "parent")?;
                if pname.is_empty() {
                    None
                } else {
                    match index.get(pname) {
                        Some(&i) => Some(i),
                        None if bone_nodes
                            .iter()
                            .any(|o| o.get("name").and_then(|x| x.as_str()) == Some(pname)) =>
                        {
                            return rd.err(p.line, format!("bone '{name}': parent '{pname}' is listed after it (parents must come first)"));
                        }
                        None => {
                            return rd
                                .err(p.line, format!("bone '{name}': unknown parent '{pname}'"));
                        }
                    }
                }
            }
        };
        let mut desc = BoneDesc::new(name, parent);
        if let Some(d) = get(e, "vertex_distance") {
            desc.shell_distance = rd.shell_distance(d, "vertex_distance")?;
        }
        // ClipForge's writer keeps a bone's own threshold here (ACL keeps it per track in track
        // lists only; its clip reader skips the key).
        if let Some(p) = get(e, "precision") {
            desc.precision = Some(rd.precision(p, &format!("bone '{name}'"))?);
        }
        rd.bind_pose(e, &mut desc)?;
        index.insert(name, descs.len());
        descs.push(desc);
    }
    let skeleton = skeleton_ordered(descs).map_err(|e| skeleton_error(rd, bones_node, e))?;
    let nb = skeleton.num_bones();
    check_size(rd.path, Some(clip.line), nb, n, rd.input_len)?;

    // Tracks.
    let track_nodes: &[Node<'a>] = match get(top, "tracks") {
        Some(t) => rd.array(t, "tracks")?,
        None => &[],
    };
    let (rotations, translations, scales, track_of_bone) =
        read_tracks(rd, track_nodes, &index, nb, n)?;
    // Additive base (ACL reads `base_tracks` only for an additive clip).
    let base = match additive {
        None => None,
        Some(h) => {
            check_size(rd.path, Some(clip.line), nb, h.num_samples, rd.input_len)?;
            let base_nodes: &[Node<'a>] = match get(top, "base_tracks") {
                Some(t) => rd.array(t, "base_tracks")?,
                None => &[],
            };
            let (r, t, s, base_track_of_bone) =
                read_tracks(rd, base_nodes, &index, nb, h.num_samples)?;
            let line_of = |bone: usize, sample: usize, what: &str| {
                sample_line(&base_track_of_bone, bone, sample, what)
            };
            let base = build_clip(
                rd.path,
                h.name,
                skeleton.clone(),
                h.sample_rate,
                h.num_samples,
                r,
                t,
                s,
                &line_of,
            )?;
            Some(Box::new(AdditiveBase {
                format: h.format,
                base,
            }))
        }
    };
    let line_of =
        |bone: usize, sample: usize, what: &str| sample_line(&track_of_bone, bone, sample, what);
    let mut clip = build_clip(
        rd.path,
        header.name,
        skeleton,
        header.sample_rate,
        n,
        rotations,
        translations,
        scales,
        &line_of,
    )?;
    clip.additive = base;
    Ok(clip)
}

/// Line of the row holding `what` (rotation, translation or scale) of `bone` at `sample`.
fn sample_line(
    track_of_bone: &[Option<&Node<'_>>],
    bone: usize,
    sample: usize,
    what: &str,
) -> Option<usize> {
    let t = track_of_bone.get(bone).copied().flatten()?;
    let key = ["rotation", "translation", "scale"]
        .into_iter()
        .find(|k| what.starts_with(k))?;
    let rows = t.get(&format!("{key}s"))?.as_array()?;
    rows.get(sample).map(|r| r.line)
}

/// What the `clip` header says about an additive clip.
struct AdditiveHeader {
    format: AdditiveFormat,
    name: String,
    num_samples: usize,
    sample_rate: f32,
}

/// `additive_format` and the `additive_base_*` keys; `None` for a plain clip ("none" or absent).
fn read_additive_header(
    rd: &mut Reader<'_>,
    entries: &[sjson::Entry<'_>],
) -> R<Option<AdditiveHeader>> {
    let Some(f) = get(entries, "additive_format") else {
        return Ok(None);
    };
    let format = match rd.string(f, "additive_format")? {
        "none" => return Ok(None),
        name => match AdditiveFormat::from_acl_name(name) {
            Some(format) => format,
            None => {
                return rd.err(
                    f.line,
                    format!("unknown additive_format \"{name}\" (expected none, relative, additive0 or additive1)"),
                );
            }
        },
    };
    let name = match get(entries, "additive_base_name") {
        Some(n) => rd.string(n, "additive_base_name")?.to_string(),
        None => String::new(),
    };
    // ACL's defaults: one base sample at 30 Hz.
    let num_samples = match get(entries, "additive_base_num_samples") {
        Some(n) => rd.count(n, "additive_base_num_samples")?,
        None => 1,
    };
    let sample_rate = match get(entries, "additive_base_sample_rate") {
        Some(r) => rd.sample_rate(r)?,
        None => 30.0,
    };
    Ok(Some(AdditiveHeader {
        format,
        name,
        num_samples,
        sample_rate,
    }))
}

type Tracks<'n, 'a> = (Vec<Quat>, Vec<Vec3>, Vec<Vec3>, Vec<Option<&'n Node<'a>>>);

/// Samples of `tracks` (or `base_tracks`): `n` rows per present sub-track, identity for a missing
/// one; also each bone's track node (for error lines).
fn read_tracks<'n, 'a>(
    rd: &Reader<'_>,
    track_nodes: &'n [Node<'a>],
    index: &std::collections::HashMap<&str, usize>,
    nb: usize,
    n: usize,
) -> R<Tracks<'n, 'a>> {
    let mut rotations = vec![Quat::IDENTITY; nb * n];
    let mut translations = vec![Vec3::ZERO; nb * n];
    let mut scales = vec![Vec3::ONE; nb * n];
    let mut track_of_bone: Vec<Option<&'n Node<'a>>> = vec![None; nb];
    for t in track_nodes {
        let e = rd.object(t, "a track")?;
        let Some(name_node) = get(e, "name") else {
            return rd.err(t.line, "track has no name");
        };
        let name = rd.string(name_node, "track name")?;
        let Some(&b) = index.get(name) else {
            return rd.err(name_node.line, format!("track '{name}' names no bone"));
        };
        if let Some(prev) = track_of_bone[b] {
            return rd.err(
                name_node.line,
                format!(
                    "second track for bone '{name}' (first on line {})",
                    prev.line
                ),
            );
        }
        track_of_bone[b] = Some(t);
        let out = b * n..(b + 1) * n;
        if let Some(rows) = get(e, "rotations") {
            let rows = sub_track_rows(rd, rows, n, name, "rotations")?;
            for (dst, row) in rotations[out.clone()].iter_mut().zip(rows) {
                *dst = quat_from_f64(rd.row::<4>(row, "rotation")?);
            }
        }
        for (key, dst) in [("translations", &mut translations), ("scales", &mut scales)] {
            if let Some(rows) = get(e, key) {
                let rows = sub_track_rows(rd, rows, n, name, key)?;
                for (d, row) in dst[out.clone()].iter_mut().zip(rows) {
                    let v = rd.row::<3>(row, &key[..key.len() - 1])?;
                    *d = Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32);
                }
            }
        }
    }
    Ok((rotations, translations, scales, track_of_bone))
}

fn sub_track_rows<'n, 'a>(
    rd: &Reader<'_>,
    node: &'n Node<'a>,
    n: usize,
    bone: &str,
    key: &str,
) -> R<&'n [Node<'a>]> {
    let rows = rd.array(node, key)?;
    if rows.len() != n {
        return rd.err(
            node.line,
            format!(
                "bone '{bone}': {key} has {} rows, expected num_samples = {n}",
                rows.len()
            ),
        );
    }
    Ok(rows)
}

fn skeleton_error(rd: &Reader<'_>, node: &Node<'_>, e: SkeletonError) -> ImportError {
    ImportError::new(rd.path, Some(node.line), format!("invalid skeleton: {e}"))
}

fn read_track_list<'a>(
    rd: &mut Reader<'_>,
    top: &[sjson::Entry<'a>],
    list: &Node<'a>,
    scalars: bool,
) -> R<AclFile> {
    let header = read_header(rd, list, "track_list")?;
    if let Some(s) = get(top, "settings") {
        rd.object(s, "settings")?;
    }
    let n = header.num_samples;
    let track_nodes: &[Node<'a>] = match get(top, "tracks") {
        Some(t) => rd.array(t, "tracks")?,
        None => &[],
    };
    // All tracks share one type (as ACL requires); only qvvf is a transform clip.
    let mut first_type: Option<(String, usize)> = None;
    for t in track_nodes {
        let e = rd.object(t, "a track")?;
        let Some(ty) = get(e, "type") else {
            return rd.err(t.line, "track has no type");
        };
        let ty_s = rd.string(ty, "type")?;
        if ![
            "float1f", "float2f", "float3f", "float4f", "vector4f", "qvvf",
        ]
        .contains(&ty_s)
        {
            return rd.err(ty.line, format!("unknown track type \"{ty_s}\""));
        }
        match &first_type {
            None => first_type = Some((ty_s.to_string(), ty.line)),
            Some((f, l)) if f != ty_s => {
                return rd.err(ty.line, format!("track type \"{ty_s}\" differs from \"{f}\" on line {l}; all tracks of a list share one type"));
            }
            _ => {}
        }
    }
    if let Some((ty, line)) = &first_type
        && ty != "qvvf"
    {
        if scalars {
            return read_scalar_tracks(rd, header, track_nodes, ty, list).map(AclFile::Scalars);
        }
        return rd
            .err(
                *line,
                format!("a scalar track list (tracks of type \"{ty}\"), not a transform clip: `clipforge compress` compresses it as a scalar list (.cfs)"),
            )
            .map_err(|e| e.with_kind(ImportErrorKind::ScalarTrackList));
    }

    let nb = track_nodes.len();
    check_size(rd.path, Some(list.line), nb, n, rd.input_len)?;
    let mut descs = Vec::with_capacity(nb);
    let mut rotations = Vec::with_capacity(nb * n);
    let mut translations = Vec::with_capacity(nb * n);
    let mut scales = Vec::with_capacity(nb * n);
    for (i, t) in track_nodes.iter().enumerate() {
        let e = rd.object(t, "a track")?;
        let name = match get(e, "name") {
            Some(nm) => rd.string(nm, "track name")?.to_string(),
            None => format!("track_{i}"),
        };
        let parent = match get(e, "parent_index") {
            None => None,
            Some(p) => {
                let v = rd.plain_number(p, "parent_index")?;
                if v == -1.0 || v == u32::MAX as f64 {
                    None
                } else if v.fract() == 0.0 && v >= 0.0 && (v as usize) < i {
                    Some(v as usize)
                } else {
                    return rd.err(p.line, format!("track '{name}': parent_index {v} must name an earlier track (0..{i}) or be -1"));
                }
            }
        };
        let mut desc = BoneDesc::new(name.clone(), parent);
        if let Some(d) = get(e, "shell_distance") {
            desc.shell_distance = rd.shell_distance(d, "shell_distance")?;
        }
        // The track's own error threshold: the compressor holds this bone to it unless the
        // folder's settings or the app override it.
        if let Some(p) = get(e, "precision") {
            desc.precision = Some(rd.precision(p, &format!("track '{name}'"))?);
        }
        rd.bind_pose(e, &mut desc)?;
        descs.push(desc);
        let Some(data) = get(e, "data") else {
            return rd.err(t.line, format!("track '{name}' has no data"));
        };
        let rows = sub_track_rows(rd, data, n, &name, "data")?;
        for row in rows {
            let parts = rd.array(row, "a qvvf sample")?;
            if parts.len() != 3 {
                return rd.err(
                    row.line,
                    format!("track '{name}': a qvvf sample is [ [rotation], [translation], [scale] ], found {} parts", parts.len()),
                );
            }
            rotations.push(quat_from_f64(rd.row::<4>(&parts[0], "rotation")?));
            let tr = rd.row::<3>(&parts[1], "translation")?;
            translations.push(Vec3::new(tr[0] as f32, tr[1] as f32, tr[2] as f32));
            let sc = rd.row::<3>(&parts[2], "scale")?;
            scales.push(Vec3::new(sc[0] as f32, sc[1] as f32, sc[2] as f32));
        }
    }
    let list_node = get(top, "tracks").unwrap_or(list);
    let skeleton = skeleton_ordered(descs).map_err(|e| skeleton_error(rd, list_node, e))?;
    let line_of = |bone: usize, sample: usize, _what: &str| -> Option<usize> {
        track_nodes
            .get(bone)?
            .get("data")?
            .as_array()?
            .get(sample)
            .map(|r| r.line)
    };
    build_clip(
        rd.path,
        header.name,
        skeleton,
        header.sample_rate,
        n,
        rotations,
        translations,
        scales,
        &line_of,
    )
    .map(AclFile::Clip)
}

// ---------------------------------------------------------------------------------------------
// Scalar track lists

/// The tracks of a scalar track list (`float1f`…`vector4f`, type already checked to be shared):
/// `name`, `precision` (negative or absent: ACL's default), `output_index` (absent: the track's
/// position; 0xFFFFFFFF or -1: stripped; the others unique and contiguous from 0), `data` rows of
/// exactly the type's width, finite in float32.
fn read_scalar_tracks<'a>(
    rd: &Reader<'_>,
    header: Header,
    track_nodes: &[Node<'a>],
    ty: &str,
    list: &Node<'a>,
) -> R<RawScalarList> {
    let Some(track_type) = ScalarType::from_acl_name(ty) else {
        return rd.err(list.line, format!("unknown scalar track type \"{ty}\""));
    };
    let w = track_type.width();
    let n = header.num_samples;
    // Bounded before allocating: the same budget as a clip of as many bones.
    check_size(rd.path, Some(list.line), track_nodes.len(), n, rd.input_len)?;
    let mut tracks = Vec::with_capacity(track_nodes.len());
    let mut outputs: Vec<(u32, usize)> = Vec::new();
    for (i, t) in track_nodes.iter().enumerate() {
        let e = rd.object(t, "a track")?;
        let name = match get(e, "name") {
            Some(nm) => rd.string(nm, "track name")?.to_string(),
            None => String::new(),
        };
        let precision = match get(e, "precision") {
            None => DEFAULT_SCALAR_PRECISION,
            Some(p) => {
                let v = rd.float(p, "precision")? as f32;
                if v.is_nan() || v.is_infinite() {
                    return rd.err(
                        p.line,
                        format!("precision must be a finite number, found {v}"),
                    );
                }
                if v < 0.0 { DEFAULT_SCALAR_PRECISION } else { v }
            }
        };
        let output_index = match get(e, "output_index") {
            None => Some(i as u32),
            Some(o) => {
                let v = rd.plain_number(o, "output_index")?;
                if v == -1.0 || v == u32::MAX as f64 {
                    None
                } else if v.fract() == 0.0 && v >= 0.0 && v < track_nodes.len() as f64 {
                    outputs.push((v as u32, o.line));
                    Some(v as u32)
                } else {
                    return rd.err(o.line, format!("track {i}: output_index {v} must be below the number of tracks ({}) or 0xFFFFFFFF (stripped)", track_nodes.len()));
                }
            }
        };
        if get(e, "output_index").is_none() {
            outputs.push((i as u32, t.line));
        }
        let Some(data) = get(e, "data") else {
            return rd.err(t.line, format!("track {i} ('{name}') has no data"));
        };
        let rows = sub_track_rows(rd, data, n, &name, "data")?;
        let mut values = Vec::with_capacity(n * w);
        for row in rows {
            let items = rd.array(row, "a sample")?;
            if items.len() != w {
                return rd.err(
                    row.line,
                    format!(
                        "track {i} ('{name}'): a {ty} sample has {w} components, found {}",
                        items.len()
                    ),
                );
            }
            for item in items {
                let v = rd.float(item, "a sample value")? as f32;
                if !v.is_finite() {
                    return rd.err(
                        item.line,
                        format!("track {i} ('{name}'): sample value is not finite in float32"),
                    );
                }
                values.push(v);
            }
        }
        tracks.push(RawScalarTrack {
            name,
            precision,
            output_index,
            values,
        });
    }
    // Outputs unique and contiguous (ACL's track_array::is_valid).
    outputs.sort_unstable();
    for pair in outputs.windows(2) {
        if pair[0].0 == pair[1].0 {
            let (o, line) = pair[1];
            return rd.err(
                line,
                format!(
                    "output_index {o} is used twice (also on line {})",
                    pair[0].1
                ),
            );
        }
    }
    for (k, &(o, line)) in outputs.iter().enumerate() {
        if o as usize != k {
            return rd.err(line, format!("output_index {o}: no track has output {k}, and outputs must be contiguous from 0"));
        }
    }
    Ok(RawScalarList {
        name: header.name,
        track_type,
        sample_rate: header.sample_rate,
        num_samples: n,
        tracks,
    })
}

/// Writes a scalar track list in ACL's format, version 5 (decimal floats that read back bit for
/// bit): the list's tracks in their order with their `output_index` (0xFFFFFFFF when stripped).
pub fn write_acl_scalar_list(list: &RawScalarList) -> String {
    let w = list.width();
    let n = list.num_samples;
    let mut out = String::with_capacity(256 + list.tracks.len() * (128 + n * w * 24));
    out.push_str("version = 5\n\ntrack_list =\n{\n\tname = ");
    sjson::write_string(&mut out, &list.name);
    out.push_str(&format!("\n\tnum_samples = {n}\n\tsample_rate = "));
    sjson::write_f32(&mut out, list.sample_rate);
    out.push_str("\n\tis_binary_exact = false\n}\n\ntracks =\n[\n");
    for t in &list.tracks {
        out.push_str("\t{\n\t\tname = ");
        sjson::write_string(&mut out, &t.name);
        out.push_str("\n\t\ttype = \"");
        out.push_str(list.track_type.acl_name());
        out.push_str("\"\n\t\tprecision = ");
        sjson::write_f32(&mut out, t.precision);
        match t.output_index {
            Some(o) => out.push_str(&format!("\n\t\toutput_index = {o}")),
            None => out.push_str("\n\t\toutput_index = 0xFFFFFFFF"),
        }
        out.push_str("\n\t\tdata =\n\t\t[\n");
        for s in 0..n {
            out.push_str("\t\t\t[ ");
            for c in 0..w {
                if c > 0 {
                    out.push_str(", ");
                }
                sjson::write_f32(&mut out, t.values[s * w + c]);
            }
            out.push_str(" ]\n");
        }
        out.push_str("\t\t]\n\t}\n");
    }
    out.push_str("]\n");
    out
}

// ---------------------------------------------------------------------------------------------
// Writer

/// Writes a transform clip in ACL's clip format, version 5.
///
/// Layout and key order follow ACL's reader: `clip { name num_samples sample_rate is_binary_exact }`,
/// `bones [ { name parent vertex_distance bind_rotation bind_translation bind_scale } ]`,
/// `tracks [ { name rotations translations scales } ]`. `vertex_distance` is always a plain number
/// (ACL reads it as one even in binary-exact files).
pub fn write_acl_clip_with(clip: &RawClip, opts: &AclWriteOptions) -> String {
    let layer = clip.additive.as_ref().map(|a| (a.format, Some(&a.base)));
    write_clip(clip, layer, opts)
}

/// Writes an additive clip whose base is unknown (a `.cfa` stores the layer alone):
/// `additive_format` is set and `base_tracks` and the `additive_base_*` keys are left out, so
/// a reader takes ACL's default base (one identity sample). `clip.additive`, if any, is ignored.
pub fn write_acl_additive_without_base(
    clip: &RawClip,
    format: AdditiveFormat,
    opts: &AclWriteOptions,
) -> String {
    write_clip(clip, Some((format, None)), opts)
}

/// The clip writer; `layer` is the additive format and, when known, the base to write as
/// `base_tracks`.
fn write_clip(
    clip: &RawClip,
    layer: Option<(AdditiveFormat, Option<&RawClip>)>,
    opts: &AclWriteOptions,
) -> String {
    let s = &clip.skeleton;
    let n = clip.num_samples;
    let nb = s.num_bones();
    // ~30 bytes per decimal float, 18 per hex float; 10 floats per bone-sample.
    let mut out = String::with_capacity(
        512 + nb * 256 + nb * n * 10 * if opts.binary_exact { 20 } else { 24 },
    );
    let num = |out: &mut String, v: f32| {
        if opts.binary_exact {
            sjson::write_hex_f64(out, v as f64)
        } else {
            sjson::write_f32(out, v)
        }
    };
    let row = |out: &mut String, indent: &str, vals: &[f32]| {
        out.push_str(indent);
        out.push_str("[ ");
        for (i, &v) in vals.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            num(out, v);
        }
        out.push_str(" ]\n");
    };

    out.push_str("version = 5\n\nclip =\n{\n\tname = ");
    sjson::write_string(&mut out, &clip.name);
    out.push_str(&format!("\n\tnum_samples = {n}\n\tsample_rate = "));
    sjson::write_f32(&mut out, clip.sample_rate);
    out.push_str(&format!("\n\tis_binary_exact = {}\n", opts.binary_exact));
    if let Some((format, base)) = layer {
        out.push_str("\tadditive_format = ");
        sjson::write_string(&mut out, format.acl_name());
        out.push('\n');
        if let Some(base) = base {
            out.push_str("\tadditive_base_name = ");
            sjson::write_string(&mut out, &base.name);
            out.push_str(&format!(
                "\n\tadditive_base_num_samples = {}\n\tadditive_base_sample_rate = ",
                base.num_samples
            ));
            sjson::write_f32(&mut out, base.sample_rate);
            out.push('\n');
        }
    }
    out.push_str("}\n\nbones =\n[\n");
    for b in 0..nb {
        out.push_str("\t{\n\t\tname = ");
        sjson::write_string(&mut out, &s.names[b]);
        out.push_str("\n\t\tparent = ");
        sjson::write_string(&mut out, s.parent(b).map_or("", |p| s.names[p].as_str()));
        out.push_str("\n\t\tvertex_distance = ");
        sjson::write_f32(&mut out, s.shell_distances[b]);
        out.push('\n');
        if let Some(p) = s.precisions[b] {
            out.push_str("\t\tprecision = ");
            sjson::write_f32(&mut out, p);
            out.push('\n');
        }
        row(
            &mut out,
            "\t\tbind_rotation = ",
            &s.bind_rotations[b].to_array(),
        );
        row(
            &mut out,
            "\t\tbind_translation = ",
            &s.bind_translations[b].to_array(),
        );
        row(&mut out, "\t\tbind_scale = ", &s.bind_scales[b].to_array());
        out.push_str("\t}\n");
    }
    // An additive clip's base goes before its tracks, with the same layout (ACL's order).
    let write_tracks = |out: &mut String, section: &str, c: &RawClip| {
        out.push_str(&format!("]\n\n{section} =\n[\n"));
        for b in 0..nb {
            let (rot, trans, scale) = c.track(b);
            out.push_str("\t{\n\t\tname = ");
            sjson::write_string(out, &s.names[b]);
            out.push_str("\n\t\trotations =\n\t\t[\n");
            for q in rot {
                row(out, "\t\t\t", &q.to_array());
            }
            out.push_str("\t\t]\n\t\ttranslations =\n\t\t[\n");
            for t in trans {
                row(out, "\t\t\t", &t.to_array());
            }
            out.push_str("\t\t]\n");
            let unit = |v: &Vec3| v.to_array().iter().all(|c| c.to_bits() == 1.0f32.to_bits());
            if !(opts.omit_unit_scales && scale.iter().all(unit)) {
                out.push_str("\t\tscales =\n\t\t[\n");
                for v in scale {
                    row(out, "\t\t\t", &v.to_array());
                }
                out.push_str("\t\t]\n");
            }
            out.push_str("\t}\n");
        }
    };
    if let Some((_, Some(base))) = layer {
        write_tracks(&mut out, "base_tracks", base);
    }
    write_tracks(&mut out, "tracks", clip);
    out.push_str("]\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::write_acl_clip;
    use crate::generate::{GenerateOptions, generate};

    fn p() -> &'static Path {
        Path::new("t.acl.sjson")
    }

    const TINY: &str = r#"version = 1
clip =
{
	name = "example"
	num_samples = 2
	sample_rate = 30
	error_threshold = 0.01
}
bones =
[
	{
		name = "root"
		parent = ""
		vertex_distance = 3.0
		bind_rotation = [ 0.0, 0.0, 0.0, 1.0 ]
	}
	{
		name = "child"
		parent = "root"
		vertex_distance = 2.5
		bind_translation = [ 0.0, 10.0, 0.0 ]
	}
	{
		name = "still"
		parent = "child"
		vertex_distance = 3.0
		bind_translation = [ 1.0, 2.0, 3.0 ]
	}
]
tracks =
[
	{
		name = "root"
		rotations = [ [ 0.0, 0.0, 0.0, 1.0 ] [ 0.0, 0.0, 0.7071, 0.7071 ] ]
		translations = [ [ 0.0, 0.0, 0.0 ] [ 1.0, 0.0, 0.0 ] ]
	}
	{
		name = "child"
		translations = [ [ 0.0, 10.0, 0.0 ] [ 0.0, 10.0, 0.0 ] ]
		scales = [ [ 1, 2, 3 ], [ 4, 5, 6 ] ]
	}
]
"#;

    #[test]
    fn reads_the_tiny_example() {
        let c = read_acl_clip(TINY, p()).unwrap();
        assert_eq!(c.name, "example");
        assert_eq!((c.num_bones(), c.num_samples, c.sample_rate), (3, 2, 30.0));
        assert_eq!(c.skeleton.parents, [crate::NO_PARENT, 0, 1]);
        assert_eq!(c.skeleton.shell_distances, [3.0, 2.5, 3.0]);
        assert_eq!(c.skeleton.bind_translations[2], Vec3::new(1.0, 2.0, 3.0));
        let r = c.rotations[1];
        assert!(
            (r.z - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6 && (r.length() - 1.0).abs() < 1e-6
        );
        assert_eq!(c.translations[1], Vec3::X);
        // Missing sub-track: identity, not the bind pose.
        assert_eq!(c.rotations[2], Quat::IDENTITY);
        assert_eq!(c.scales[3], Vec3::new(4.0, 5.0, 6.0));
        // Bone without a track: identity, not the bind pose (1,2,3).
        assert_eq!(c.translations[4], Vec3::ZERO);
        assert_eq!(c.rotations[5], Quat::IDENTITY);
    }

    fn expect_err(text: &str, line: usize, needle: &str) {
        let e = read_acl_clip(text, p()).unwrap_err();
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.message.contains(needle), "expected {needle:?} in: {e}");
        assert_eq!(e.path, p());
    }

    #[test]
    fn errors_name_line_and_problem() {
        expect_err(
            &TINY.replace("parent = \"root\"", "parent = \"rooot\""),
            19,
            "unknown parent 'rooot'",
        );
        expect_err(
            &TINY.replace("name = \"still\"", "name = \"child\""),
            24,
            "duplicate bone 'child'",
        );
        expect_err(
            &TINY.replace("[ 1.0, 0.0, 0.0 ] ]", "]"),
            35,
            "translations has 1 rows, expected num_samples = 2",
        );
        expect_err(
            &TINY.replace("[ 4, 5, 6 ]", "[ 4, 5 ]"),
            40,
            "expected 3 components, found 2",
        );
        expect_err(
            &TINY.replace("[ 4, 5, 6 ]", "[ 4, 5, 1.2.3 ]"),
            40,
            "bad number '1.2.3'",
        );
        expect_err(
            &TINY.replace(
                "name = \"child\"\n\t\ttrans",
                "name = \"nobody\"\n\t\ttrans",
            ),
            38,
            "track 'nobody' names no bone",
        );
        expect_err(
            &TINY.replace("version = 1", "version = 6"),
            1,
            "unsupported version 6",
        );
        expect_err(
            &TINY.replace("num_samples = 2", "num_samples = 2.5"),
            5,
            "non-negative integer",
        );
        expect_err(
            &TINY.replace("sample_rate = 30", "sample_rate = 0"),
            6,
            "sample_rate must be a positive",
        );
        expect_err(
            &TINY.replace("[ 4, 5, 6 ]", "[ 4, \"5\", 6 ]"),
            40,
            "is_binary_exact",
        );
        expect_err(
            &TINY.replace("[ 4, 5, 6 ]", "[ 4, nan, 6 ]"),
            40,
            "bone 'child' sample 1: scale",
        );
        expect_err(
            &TINY.replace("[ 1.0, 0.0, 0.0 ] ]", "[ 1e25, 0.0, 0.0 ] ]"),
            35,
            "bone 'root' sample 1: translation",
        );
        expect_err(
            &TINY.replace("\t{\n\t\tname = \"child\"\n\t\tparent", "\t{\n\t\tname = \"child2\"\n\t\tparent = \"still\"\n\t}\n\t{\n\t\tname = \"child\"\n\t\tparent"),
            19,
            "listed after it",
        );
        expect_err(
            &TINY.replace("error_threshold = 0.01", "additive_format = \"additive9\""),
            7,
            "unknown additive_format \"additive9\"",
        );
        expect_err("", 1, "missing 'version");
        expect_err(
            "version = 4\nfoo = 1",
            1,
            "neither a 'clip' nor a 'track_list'",
        );
        expect_err("version = 4\nclip = {\n", 3, "SJSON syntax");
    }

    #[test]
    fn absurd_sizes_are_refused_before_allocating() {
        let e = read_acl_clip(
            &TINY.replace("num_samples = 2", "num_samples = 4000000000"),
            p(),
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("3 bones x 4000000000 samples is more than"),
            "{e}"
        );
    }

    #[test]
    fn binary_exact_hex_values() {
        let text = TINY
            .replace("error_threshold = 0.01", "is_binary_exact = true")
            .replace("[ 1, 2, 3 ], [ 4, 5, 6 ]", "[ \"3FF0000000000000\", \"4000000000000000\", \"0\" ], [ \"3FB999999999999A\", 5, \"4018000000000000\" ]");
        let c = read_acl_clip(&text, p()).unwrap();
        assert_eq!(c.scales[2], Vec3::new(1.0, 2.0, 0.0));
        assert_eq!(c.scales[3], Vec3::new(0.1, 5.0, 6.0));
        let bad = TINY
            .replace("error_threshold = 0.01", "is_binary_exact = true")
            .replace("[ 4, 5, 6 ]", "[ 4, \"12345678901234567\", 6 ]");
        let e = read_acl_clip(&bad, p()).unwrap_err();
        assert!(
            e.message.contains("1 to 16 hex digits") && e.line == Some(40),
            "{e}"
        );
    }

    const QVVF: &str = r#"version = 5
track_list = { name = "dump" num_samples = 2 sample_rate = 24 is_binary_exact = true }
tracks =
[
	{
		name = "root" type = "qvvf" precision = "3C23D70A" output_index = 0 parent_index = 0xFFFFFFFF shell_distance = "40400000"
		bind_translation = [ "3F800000", "0", "0" ]
		data =
		[
			[ [ "0", "0", "0", "3F800000" ], [ "3F800000", "40000000", "40400000" ], [ "3F800000", "3F800000", "3F800000" ] ]
			[ [ "0", "0", "3F800000", "0" ], [ "0", "0", "0" ], [ "3F800000", "3F800000", "3F800000" ] ]
		]
	}
	{
		name = "kid" type = "qvvf" parent_index = 0 shell_distance = "3F800000"
		data =
		[
			[ [ "0", "0", "0", "3F800000" ], [ "0", "0", "0" ], [ "3F800000", "3F800000", "3F800000" ] ]
			[ [ "0", "0", "0", "3F800000" ], [ "0", "0", "0" ], [ "40000000", "3F800000", "3F800000" ] ]
		]
	}
]
"#;

    #[test]
    fn qvvf_track_lists_load_as_clips() {
        let c = read_acl_clip(QVVF, p()).unwrap();
        assert_eq!(c.name, "dump");
        assert_eq!(c.skeleton.names, ["root", "kid"]);
        assert_eq!(c.skeleton.parents, [crate::NO_PARENT, 0]);
        assert_eq!(c.skeleton.shell_distances, [3.0, 1.0]);
        assert_eq!(c.skeleton.bind_translations[0], Vec3::X);
        assert_eq!(c.translations[0], Vec3::new(1.0, 2.0, 3.0));
        assert_eq!(c.rotations[1], Quat::from_xyzw(0.0, 0.0, 1.0, 0.0));
        assert_eq!(c.scales[3], Vec3::new(2.0, 1.0, 1.0));
        let e = read_acl_clip(
            &QVVF.replace("[ \"0\", \"0\", \"0\" ], [ \"40000000\"", "[ \"40000000\""),
            p(),
        )
        .unwrap_err();
        assert!(
            e.message.contains("found 2 parts") && e.line == Some(19),
            "{e}"
        );
        let e = read_acl_clip(&QVVF.replace("parent_index = 0 ", "parent_index = 1 "), p())
            .unwrap_err();
        assert!(
            e.message.contains("earlier track") && e.line == Some(15),
            "{e}"
        );
    }

    #[test]
    fn scalar_track_lists_are_refused_as_clips_and_read_as_lists() {
        let text = "version = 4\ntrack_list = { name = \"l\" num_samples = 1 sample_rate = 24 }\ntracks = [\n{ name = \"t\" type = \"float3f\" data = [ [1,2,3] ] }\n]\n";
        let e = read_acl_clip(text, p()).unwrap_err();
        assert!(
            e.message.contains("a scalar track list") && e.message.contains("float3f"),
            "{e}"
        );
        assert_eq!(e.line, Some(4));
        let Ok(AclFile::Scalars(l)) = read_acl_file(text, p()) else {
            panic!("not read as a scalar list");
        };
        assert_eq!((l.name.as_str(), l.num_samples, l.width()), ("l", 1, 3));
        assert_eq!(l.tracks[0].values, [1.0, 2.0, 3.0]);
        assert_eq!(l.tracks[0].precision, DEFAULT_SCALAR_PRECISION);
        assert_eq!(l.tracks[0].output_index, Some(0));
        // Written back and read again: the same list.
        let Ok(AclFile::Scalars(back)) = read_acl_file(&write_acl_scalar_list(&l), p()) else {
            panic!("written list not read back");
        };
        assert_eq!(back, l);
    }

    #[test]
    fn clip_and_track_list_together_is_refused() {
        let text = "version = 5\nclip = { num_samples = 1 sample_rate = 30 }\ntrack_list = { num_samples = 1 sample_rate = 30 }\nbones = []\n";
        let e = read_acl_clip(text, p()).unwrap_err();
        assert!(e.message.contains("both a 'clip'"), "{e}");
    }

    fn assert_bit_exact(a: &RawClip, b: &RawClip) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.skeleton.names, b.skeleton.names);
        assert_eq!(a.skeleton.parents, b.skeleton.parents);
        assert_eq!(a.sample_rate.to_bits(), b.sample_rate.to_bits());
        assert_eq!(a.num_samples, b.num_samples);
        let bits4 = |q: &[Quat]| {
            q.iter()
                .flat_map(|q| q.to_array())
                .map(f32::to_bits)
                .collect::<Vec<_>>()
        };
        let bits3 = |v: &[Vec3]| {
            v.iter()
                .flat_map(|v| v.to_array())
                .map(f32::to_bits)
                .collect::<Vec<_>>()
        };
        assert_eq!(bits4(&a.rotations), bits4(&b.rotations));
        assert_eq!(bits3(&a.translations), bits3(&b.translations));
        assert_eq!(bits3(&a.scales), bits3(&b.scales));
        assert_eq!(
            bits4(&a.skeleton.bind_rotations),
            bits4(&b.skeleton.bind_rotations)
        );
        assert_eq!(
            bits3(&a.skeleton.bind_translations),
            bits3(&b.skeleton.bind_translations)
        );
        assert_eq!(
            bits3(&a.skeleton.bind_scales),
            bits3(&b.skeleton.bind_scales)
        );
        let sd = |s: &[f32]| s.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            sd(&a.skeleton.shell_distances),
            sd(&b.skeleton.shell_distances)
        );
    }

    #[test]
    fn generated_clips_round_trip_bit_exactly() {
        for (seed, with_scale) in [(1, false), (7, true), (42, true)] {
            let clip = generate(&GenerateOptions {
                seed,
                with_scale,
                num_samples: 37,
                sample_rate: 29.97,
                ..Default::default()
            });
            for binary_exact in [false, true] {
                let text = write_acl_clip_with(
                    &clip,
                    &AclWriteOptions {
                        binary_exact,
                        ..Default::default()
                    },
                );
                let back = read_acl_clip(&text, p()).unwrap();
                assert_bit_exact(&clip, &back);
                // Writing the re-read clip gives the same text (a fixed point).
                assert_eq!(
                    write_acl_clip_with(
                        &back,
                        &AclWriteOptions {
                            binary_exact,
                            ..Default::default()
                        }
                    ),
                    text
                );
            }
        }
    }

    #[test]
    fn awkward_values_round_trip() {
        let mut clip = generate(&GenerateOptions {
            num_samples: 3,
            with_scale: true,
            ..Default::default()
        });
        clip.name = "we\"ird\\name\n".into();
        clip.translations[0] = Vec3::new(-0.0, f32::MIN_POSITIVE, 1e-45);
        clip.translations[1] = Vec3::new(9_999_999.0, -1e-38, 0.1);
        clip.scales[2] = Vec3::new(0.0, -1.0, 3.3333333);
        clip.skeleton.shell_distances[0] = 0.1;
        for binary_exact in [false, true] {
            let text = write_acl_clip_with(
                &clip,
                &AclWriteOptions {
                    binary_exact,
                    omit_unit_scales: false,
                },
            );
            assert_bit_exact(&clip, &read_acl_clip(&text, p()).unwrap());
        }
    }

    #[test]
    fn zero_bone_and_zero_sample_clips() {
        let c = read_acl_clip("version = 1\nclip = { name = \"e\" num_samples = 5 sample_rate = 24 error_threshold = 0.01 }\nbones = [ ]\ntracks = [ ]\n", p()).unwrap();
        assert_eq!((c.num_bones(), c.num_samples), (0, 5));
        let text = write_acl_clip(&c);
        assert_eq!(read_acl_clip(&text, p()).unwrap(), c);
    }

    #[test]
    fn additive_clips_read_their_base_and_round_trip() {
        let text = TINY.replace(
            "error_threshold = 0.01",
            "additive_format = \"relative\"\n\tadditive_base_num_samples = 2\n\tadditive_base_sample_rate = 10\n\tadditive_base_name = \"b\"",
        )
        .replace(
            "tracks =\n[",
            "base_tracks =\n[\n\t{\n\t\tname = \"child\"\n\t\ttranslations = [ [ 1.0, 2.0, 3.0 ] [ 4.0, 5.0, 6.0 ] ]\n\t}\n]\ntracks =\n[",
        );
        let c = read_acl_clip(&text, p()).unwrap();
        let add = c.additive.as_ref().expect("an additive clip");
        assert_eq!(add.format, AdditiveFormat::Relative);
        assert_eq!((add.base.num_samples, add.base.sample_rate), (2, 10.0));
        assert_eq!(add.base.name, "b");
        // The root has no base track: identity; the child's second sample is its second row.
        assert_eq!(add.base.translations[add.base.index(0, 1)], Vec3::ZERO);
        assert_eq!(
            add.base.translations[add.base.index(1, 1)],
            Vec3::new(4.0, 5.0, 6.0)
        );
        for exact in [false, true] {
            let opts = AclWriteOptions {
                binary_exact: exact,
                ..Default::default()
            };
            let back = read_acl_clip(&write_acl_clip_with(&c, &opts), p()).unwrap();
            assert_eq!(back, c);
        }
        // Wrong base sample count: the error names the line.
        let bad = text.replace(
            "additive_base_num_samples = 2",
            "additive_base_num_samples = 3",
        );
        let e = read_acl_clip(&bad, p()).unwrap_err().to_string();
        assert!(e.contains("translations"), "{e}");
        // Without base_tracks: one identity base sample.
        let plain = TINY.replace("error_threshold = 0.01", "additive_format = \"additive1\"");
        let c = read_acl_clip(&plain, p()).unwrap();
        let add = c.additive.as_ref().unwrap();
        assert_eq!(
            (add.format, add.base.num_samples),
            (AdditiveFormat::Additive1, 1)
        );
        assert!(add.base.rotations.iter().all(|q| *q == Quat::IDENTITY));
    }
}
