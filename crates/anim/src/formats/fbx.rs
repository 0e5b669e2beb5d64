//! FBX (6.1 and 7.x, binary and ASCII) animation importer, built on the `ufbx` crate (the
//! single-file C library ufbx, compiled with `cc`). ufbx evaluates animation with every FBX
//! transform rule applied (pivots and offsets, pre/post-rotation, rotation order, inherit types,
//! unit scale, axis systems, layers); this module only chooses the skeleton and samples it.
//!
//! Each animation stack (take) of a file becomes one clip, named after the stack:
//! - Skeleton: the joints — nodes ufbx types as bones (`LimbNode`, `Limb`, `Root`) and nodes a
//!   skin cluster binds — plus every ancestor of a joint up to the scene root (armature nulls,
//!   groups, the nodes between joints), so object space is the FBX scene's world space. Several
//!   roots are kept. A file with no joints imports its *animated nodes* (any node with an animated
//!   translation, rotation or scale) and their ancestors instead, like glTF node animation: a user
//!   opening an animated-objects file expects to see those objects move.
//! - Transforms: for every sample ufbx evaluates each needed node's local transform (helper-node
//!   mode, in which "ignore parent scale" — Maya segment scale compensate — and componentwise
//!   scale become plain matrix inheritance through synthetic scale-helper nodes); they are
//!   composed as matrices into world transforms, and each bone's local transform is then derived
//!   from its world transform and its parent bone's so that ACL's composition (rotation,
//!   translation, componentwise scale: [`crate::pose::local_to_object`]) gives every joint's
//!   world position back exactly, whatever the inherit type or the non-uniform scale. Scale helpers
//!   and the scene root are folded into the bones; shear (which no TRS can hold) is dropped from
//!   rotations only.
//! - Units and axes: ufbx converts to 1 unit = 1 cm and right-handed Y-up (the app's space, as
//!   for glTF) by adjusting the top-level nodes' transforms, so translations are in centimetres
//!   whatever the file's UnitScaleFactor and up axis.
//! - Bind pose: the static scene (each node's property values in the file, ufbx's
//!   `node_to_world`), made local the same way; not the skin's BindPose matrices (skinning data).
//! - Sampling: uniformly at the file's frame rate (GlobalSettings TimeMode / CustomFrameRate,
//!   as ufbx reports it; 30 Hz with a warning when absent or out of 1–1000 Hz), over the stack's
//!   time span: `round((end − begin) × fps) + 1` samples, sample `k` at `begin + k / fps`.
//!   Rotations keep one hemisphere from sample to sample.
//! - Safety: the file is read with [`clipforge_base::fsio::read_regular`] and parsed from memory
//!   (`ufbx::load_memory`): external files (textures, caches, `.fbm` folders) are never opened.
//!   ufbx's result and temporary allocators are each bounded by half the per-input memory budget
//!   ([`crate::limits::budget_for_input`]: a compressed array inflating past it is refused
//!   inside ufbx, "over the memory budget"), the node hierarchy depth is bounded, geometry is
//!   not loaded, and the sample count is checked against the budget and
//!   [`super::check_size`] before anything is sampled.
//! - Skinned meshes: [`load_fbx_meshes`] (`fbx/skin_mesh.rs`) reads the file again with geometry
//!   and binds each skin deformer to this skeleton by bone name.
//! - Errors name the file: ufbx's parse errors (broken or truncated files, unsupported versions),
//!   files without an animation stack, stacks that animate nothing. ufbx's warnings (e.g. strings
//!   that are not valid UTF-8) are returned as import warnings. Stacks that animate none of the
//!   skeleton's nodes are skipped with a warning.

use super::{
    ImportError, ImportErrorKind, ImportWarning, build_clip, check_size, quat_from_f64,
    skeleton_unordered,
};
use crate::clip::RawClip;
use crate::limits;
use crate::skeleton::{BoneDesc, Skeleton};
use glam::{DAffine3, DMat3, DQuat, DVec3, Quat, Vec3};
use std::collections::HashSet;
use std::path::Path;

/// Rate used when the file's frame rate is missing or unusable.
pub(crate) const FALLBACK_RATE: f64 = 30.0;
/// Deepest node hierarchy accepted (ufbx refuses deeper files with an error).
pub(crate) const MAX_NODE_DEPTH: u32 = 1024;
/// Bytes of clip memory per bone and sample while importing: rotation, translation and scale
/// (40 bytes), twice (the importer's vectors and the validated clip).
const BYTES_PER_SAMPLE: u64 = 80;

/// Import options (`sample_rate`: `None` samples at the file's frame rate).
pub(crate) type FbxOptions = super::ImportOptions;

/// Reads an FBX file (regular files only, size bounded by the memory budget) and imports every
/// animation stack.
pub(crate) fn load_fbx_file_with_warnings(
    path: &Path,
    options: &FbxOptions,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    read_fbx(&read_fbx_file(path)?, path, options)
}

/// An FBX file's bytes (regular files only), at most half the memory budget: ufbx's scene
/// takes memory of its own on top of them.
pub(crate) fn read_fbx_file(path: &Path) -> Result<Vec<u8>, ImportError> {
    super::read_input_up_to(path, limits::max_memory_bytes() / 2)
}

/// Imports every animation stack of FBX bytes; `path` names the data in errors.
pub(crate) fn read_fbx(
    bytes: &[u8],
    path: &Path,
    options: &FbxOptions,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    // ufbx itself never unwinds; the binding has a few `unwrap`s on text ufbx produces. A panic
    // there must surface as an import error, with no panic text reaching the user.
    super::read_quietly(path, ("FBX", "data"), || read_inner(bytes, path, options))
}

fn ferr(path: &Path, msg: impl Into<String>) -> ImportError {
    ImportError::new(path, None, msg)
}

/// A refusal for memory: `(needed, budget)` (needed when known).
fn budget_err(path: &Path, (needed, budget): (Option<u64>, u64), msg: String) -> ImportError {
    ferr(path, msg).with_kind(ImportErrorKind::OverBudget { needed, budget })
}

/// The refusal of an animation stack whose sampled tracks alone would need `need` bytes.
fn samples_over_budget(
    path: &Path,
    nb: usize,
    samples: usize,
    need: u64,
    budget: u64,
) -> ImportError {
    let msg = format!(
        "{nb} bones x {samples} samples need {}, more than the memory budget of {}",
        limits::format_bytes(need),
        limits::format_bytes(budget)
    );
    budget_err(path, (Some(need), budget), msg)
}

/// ufbx's own description of a load error (type, message and the parser's context), as text.
fn describe_error(e: &ufbx::Error) -> String {
    let mut buf = [0u8; 1024];
    let n = ufbx::format_error(&mut buf, e).min(buf.len());
    let text = String::from_utf8_lossy(&buf[..n]);
    let text = text.trim();
    let first = text.lines().next().unwrap_or("").trim();
    if first.is_empty() {
        format!("{:?}", e.type_)
    } else {
        // ufbx's first line is "ufbx v0.x.y error: <what>"; the rest is its internal call stack.
        first
            .split_once("error: ")
            .map(|(_, m)| m.to_string())
            .unwrap_or_else(|| first.to_string())
    }
}

/// The ufbx options the importer loads with (public so tests can evaluate the same scene with
/// ufbx directly).
pub fn ufbx_load_options<'a>(bytes_len: usize) -> ufbx::LoadOpts<'a> {
    // The per-input budget, as the other importers: a compressed array (FBX arrays are zlib
    // streams) inflates inside ufbx's parser, before any of our checks, so ufbx's own
    // allocators must stop it. Their two heaps share the budget.
    let budget = usize::try_from(limits::budget_for_input(bytes_len as u64)).unwrap_or(usize::MAX);
    let half = (budget / 2).max(1 << 20);
    ufbx::LoadOpts {
        temp_allocator: ufbx::AllocatorOpts {
            memory_limit: half,
            ..Default::default()
        },
        result_allocator: ufbx::AllocatorOpts {
            memory_limit: half,
            ..Default::default()
        },
        // Only used with a thread pool (none is given: parsing is single-threaded), bounded
        // all the same should one ever be.
        thread_opts: ufbx::ThreadOpts {
            memory_limit: (budget / 4).max(1 << 20),
            ..Default::default()
        },
        // Meshes, skin weights and embedded media are not needed for clips.
        ignore_geometry: true,
        ignore_embedded: true,
        load_external_files: false,
        node_depth_limit: MAX_NODE_DEPTH,
        file_size_estimate: bytes_len as u64,
        inherit_mode_handling: ufbx::InheritModeHandling::HelperNodes,
        space_conversion: ufbx::SpaceConversion::AdjustTransforms,
        target_axes: ufbx::CoordinateAxes::right_handed_y_up(),
        target_unit_meters: 0.01,
        ..Default::default()
    }
}

mod skin_mesh;
pub use skin_mesh::load_fbx_meshes;
pub(crate) use skin_mesh::load_fbx_meshes_file;

const TRANSFORM_PROPS: [&str; 3] = ["Lcl Translation", "Lcl Rotation", "Lcl Scaling"];

/// A warning about the file (FBX warnings have no line).
fn fwarn(path: &Path, message: String) -> ImportWarning {
    ImportWarning {
        path: path.to_path_buf(),
        line: None,
        message,
    }
}

fn read_inner(
    bytes: &[u8],
    path: &Path,
    options: &FbxOptions,
) -> Result<(Vec<RawClip>, Vec<ImportWarning>), ImportError> {
    let scene = load_scene(bytes, path)?;
    let mut warnings = scene_warnings(&scene, path);
    if scene.anim_stacks.is_empty() {
        return Err(ferr(
            path,
            "no animation in this file (it has no animation stack / take)",
        ));
    }
    let rig = Rig::choose(&scene, path, &mut warnings)?;
    let (skeleton, order) = rig.skeleton(&scene.nodes, path)?;
    let rate = sample_rate(&scene, options, path, &mut warnings)?;

    let mut clips = Vec::new();
    let mut sampler = StackSampler {
        path,
        input_len: bytes.len(),
        nodes: &scene.nodes,
        rig: &rig,
        skeleton: &skeleton,
        order: &order,
        rate,
        world: vec![DAffine3::IDENTITY; scene.nodes.len()],
        bone_world: vec![Qvv::IDENTITY; rig.members.len()],
    };
    for (si, stack) in scene.anim_stacks.iter().enumerate() {
        let name = stack_name(stack, si);
        if !rig.animates(si) {
            warnings.push(fwarn(
                path,
                format!("animation stack '{name}' animates none of the skeleton's nodes; skipped"),
            ));
            continue;
        }
        clips.push(sampler.sample(stack, name)?);
    }
    if clips.is_empty() {
        return Err(ferr(
            path,
            "no animation in this file: no animation stack animates a bone or node",
        ));
    }
    Ok((clips, warnings))
}

/// Parses the bytes with ufbx ([`ufbx_load_options`]); a memory-limit failure becomes a typed
/// over-budget error.
pub(crate) fn load_scene(bytes: &[u8], path: &Path) -> Result<ufbx::SceneRoot, ImportError> {
    load_scene_with(bytes, path, ufbx_load_options(bytes.len()))
}

/// [`load_scene`] with the given options (the mesh loader's keep the geometry).
pub(crate) fn load_scene_with(
    bytes: &[u8],
    path: &Path,
    opts: ufbx::LoadOpts,
) -> Result<ufbx::SceneRoot, ImportError> {
    if bytes.is_empty() {
        return Err(ferr(path, "empty file"));
    }
    ufbx::load_memory(bytes, opts).map_err(|e| {
        if matches!(
            e.type_,
            ufbx::ErrorType::MemoryLimit | ufbx::ErrorType::AllocationLimit
        ) {
            // Typically a compressed array that inflates far beyond the file's size.
            let budget = limits::budget_for_input(bytes.len() as u64);
            budget_err(
                path,
                (None, budget),
                format!(
                    "cannot read FBX: its data (compressed arrays inflated) is {} of {} for \
                     this {} file (see --max-memory)",
                    limits::OVER_BUDGET,
                    limits::format_bytes(budget),
                    limits::format_bytes(bytes.len() as u64)
                ),
            )
        } else {
            ferr(path, format!("cannot read FBX: {}", describe_error(&e)))
        }
    })
}

/// ufbx's warnings as import warnings: ufbx lists a warning once per place (8-11 identical
/// "Bad UTF-8 string" on MotionBuilder files), so one line per distinct text, with the total
/// count, in first-seen order.
fn scene_warnings(scene: &ufbx::Scene, path: &Path) -> Vec<ImportWarning> {
    let mut distinct: Vec<(String, usize)> = Vec::new();
    for w in scene.metadata.warnings.iter() {
        let text = w.description.to_string();
        let n = w.count.max(1);
        match distinct.iter_mut().find(|(t, _)| *t == text) {
            Some((_, c)) => *c += n,
            None => distinct.push((text, n)),
        }
    }
    distinct
        .into_iter()
        .map(|(text, n)| {
            let times = if n > 1 {
                format!(" ({n} times)")
            } else {
                String::new()
            };
            fwarn(path, format!("ufbx: {text}{times}"))
        })
        .collect()
}

/// The nodes a file's clips are made of (module doc, "Skeleton"). Nodes are indexed by
/// `typed_id` (their position in `scene.nodes`).
pub(crate) struct Rig {
    /// Each node's parent in ufbx's hierarchy (scene root and scale helpers included).
    up: Vec<Option<usize>>,
    /// Nodes whose world transforms are composed: joints, their ancestors, bones' scale helpers.
    needed: Vec<bool>,
    /// The bones: needed nodes that can be bones, ascending node ids.
    pub(crate) members: Vec<usize>,
    /// The node whose world transform is each bone's (its scale helper when it has one).
    world_node: Vec<usize>,
    /// The needed nodes, parents first (ufbx's depth), then by id for determinism.
    eval_order: Vec<usize>,
    /// Each bone's parent bone (an index into `members`): its nearest ancestor that is a bone.
    pub(crate) parents: Vec<Option<usize>>,
    /// The nodes (owners) each animation stack animates.
    stack_animated: Vec<HashSet<usize>>,
}

fn id_of(n: &ufbx::Node) -> usize {
    n.element.typed_id as usize
}

/// The node standing for node `i`, if it can be a bone: scene root and scale helpers are never
/// bones, and a helper stands for its parent node (ufbx moves the node's scale, bone attribute
/// and scale animation to it, so the node's own world transform is the helper's).
fn owner(nodes: &[ufbx::Ref<ufbx::Node>], up: &[Option<usize>], i: usize) -> Option<usize> {
    let o = if nodes[i].is_scale_helper { up[i]? } else { i };
    (!nodes[o].is_root && !nodes[o].is_scale_helper).then_some(o)
}

impl Rig {
    pub(crate) fn choose(
        scene: &ufbx::Scene,
        path: &Path,
        warnings: &mut Vec<ImportWarning>,
    ) -> Result<Self, ImportError> {
        let nodes = &scene.nodes;
        let n_nodes = nodes.len();
        let up: Vec<Option<usize>> = nodes
            .iter()
            .map(|n| n.parent.as_ref().map(|p| id_of(p)).filter(|&p| p < n_nodes))
            .collect();
        let stack_animated: Vec<HashSet<usize>> = scene
            .anim_stacks
            .iter()
            .map(|s| animated_in(s, nodes, &up))
            .collect();
        let joints = find_joints(scene, &up, &stack_animated, path, warnings)?;
        // `needed`: joints and all their ufbx ancestors (world transforms are composed over
        // them). The walk is bounded by the node count (ufbx also bounds the depth,
        // `MAX_NODE_DEPTH`).
        let mut needed = vec![false; n_nodes];
        for i in 0..n_nodes {
            if !joints[i] {
                continue;
            }
            let mut cur = Some(i);
            let mut guard = 0;
            while let Some(c) = cur {
                guard += 1;
                if needed[c] || guard > n_nodes {
                    break;
                }
                needed[c] = true;
                cur = up[c];
            }
        }
        let members: Vec<usize> = (0..n_nodes)
            .filter(|&i| needed[i] && owner(nodes, &up, i) == Some(i))
            .collect();
        let world_node: Vec<usize> = members
            .iter()
            .map(|&i| {
                let helper = nodes[i].scale_helper.as_ref().map(|h| id_of(h));
                helper
                    .filter(|&h| h < n_nodes && up[h] == Some(i))
                    .unwrap_or(i)
            })
            .collect();
        for &w in &world_node {
            needed[w] = true;
        }
        let mut eval_order: Vec<usize> = (0..n_nodes).filter(|&i| needed[i]).collect();
        eval_order.sort_by_key(|&i| (nodes[i].node_depth, i));
        let parents = bone_parents(&members, &up);
        Ok(Self {
            up,
            needed,
            members,
            world_node,
            eval_order,
            parents,
            stack_animated,
        })
    }

    /// The skeleton, its bind pose the static scene's world transforms made local (see
    /// [`local_qvv`]), and the member index of each skeleton bone.
    pub(crate) fn skeleton(
        &self,
        nodes: &[ufbx::Ref<ufbx::Node>],
        path: &Path,
    ) -> Result<(Skeleton, Vec<usize>), ImportError> {
        let static_world: Vec<Qvv> = self
            .world_node
            .iter()
            .map(|&i| Qvv::from_affine(&affine_of(&nodes[i].node_to_world)))
            .collect();
        let descs: Vec<BoneDesc> = self
            .bone_names(nodes)
            .into_iter()
            .enumerate()
            .map(|(b, name)| {
                let mut d = BoneDesc::new(name, self.parents[b]);
                let l = local_qvv(self.parents[b].map(|p| &static_world[p]), &static_world[b]);
                let (r, t, s) = l.to_f32();
                d.bind_rotation = r;
                d.bind_translation = t;
                d.bind_scale = s;
                d
            })
            .collect();
        skeleton_unordered(descs).map_err(|e| ferr(path, format!("invalid node hierarchy: {e}")))
    }
}

impl Rig {
    /// Each bone's name (in `members` order): the node's name (`node{id}` when it has none),
    /// `name#id` when an earlier bone has it.
    pub(crate) fn bone_names(&self, nodes: &[ufbx::Ref<ufbx::Node>]) -> Vec<String> {
        let mut used_names = HashSet::new();
        self.members
            .iter()
            .map(|&i| {
                let mut name = node_name(&nodes[i], i);
                if !used_names.insert(name.clone()) {
                    name = format!("{name}#{i}");
                    used_names.insert(name.clone());
                }
                name
            })
            .collect()
    }

    /// Whether stack `si` becomes a clip: it animates a bone (else it is skipped).
    pub(crate) fn animates(&self, si: usize) -> bool {
        self.members
            .iter()
            .any(|m| self.stack_animated[si].contains(m))
    }

    /// The bone (index into `members`) node `i` stands for, if any.
    pub(crate) fn bone_of(&self, nodes: &[ufbx::Ref<ufbx::Node>], i: usize) -> Option<usize> {
        let o = owner(nodes, &self.up, i)?;
        self.members.binary_search(&o).ok()
    }
}

/// A stack's clip name: its own, or `stack{index}`.
pub(crate) fn stack_name(stack: &ufbx::AnimStack, si: usize) -> String {
    if stack.element.name.is_empty() {
        format!("stack{si}")
    } else {
        stack.element.name.to_string()
    }
}

/// The nodes (owners) a stack animates: transform properties only.
fn animated_in(
    stack: &ufbx::AnimStack,
    nodes: &[ufbx::Ref<ufbx::Node>],
    up: &[Option<usize>],
) -> HashSet<usize> {
    let mut set = HashSet::new();
    for layer in stack.layers.iter() {
        for ap in layer.anim_props.iter() {
            if ap.element.type_ == ufbx::ElementType::Node
                && TRANSFORM_PROPS.contains(&&*ap.prop_name)
            {
                let i = ap.element.typed_id as usize;
                if i < nodes.len()
                    && let Some(o) = owner(nodes, up, i)
                {
                    set.insert(o);
                }
            }
        }
    }
    set
}

/// Joints: bones, and nodes a skin cluster binds (a joint may be typed Null); without any,
/// the animated nodes (with a warning).
fn find_joints(
    scene: &ufbx::Scene,
    up: &[Option<usize>],
    stack_animated: &[HashSet<usize>],
    path: &Path,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Vec<bool>, ImportError> {
    let nodes = &scene.nodes;
    let n_nodes = nodes.len();
    let mut joints = vec![false; n_nodes];
    for i in 0..n_nodes {
        if nodes[i].bone.is_some()
            && let Some(o) = owner(nodes, up, i)
        {
            joints[o] = true;
        }
    }
    for c in scene.skin_clusters.iter() {
        if let Some(b) = &c.bone_node {
            let i = id_of(b);
            if i < n_nodes
                && let Some(o) = owner(nodes, up, i)
            {
                joints[o] = true;
            }
        }
    }
    if !joints.iter().any(|&j| j) {
        for set in stack_animated {
            for &i in set {
                joints[i] = true;
            }
        }
        if joints.iter().any(|&j| j) {
            warnings.push(fwarn(
                path,
                "no bones in this file: its animated nodes (and their parents) are imported as the skeleton".into(),
            ));
        } else {
            return Err(ferr(
                path,
                "no animation in this file: no bone and no animated node",
            ));
        }
    }
    Ok(joints)
}

/// Each bone's parent: its nearest ancestor that is a bone (walks bounded by the node count).
fn bone_parents(members: &[usize], up: &[Option<usize>]) -> Vec<Option<usize>> {
    let n_nodes = up.len();
    let local = |node: usize| members.binary_search(&node).ok();
    let bone_parent = |i: usize| -> Option<usize> {
        let mut cur = up[i];
        let mut guard = 0;
        while let Some(c) = cur {
            guard += 1;
            if guard > n_nodes {
                return None;
            }
            if let Some(b) = local(c) {
                return Some(b);
            }
            cur = up[c];
        }
        None
    };
    members.iter().map(|&i| bone_parent(i)).collect()
}

/// The sampling rate: the one asked for (checked), else the file's frame rate, else
/// [`FALLBACK_RATE`] with a warning.
fn sample_rate(
    scene: &ufbx::Scene,
    options: &FbxOptions,
    path: &Path,
    warnings: &mut Vec<ImportWarning>,
) -> Result<f64, ImportError> {
    if let Some(r) = options.sample_rate {
        return super::check_sample_rate(r).map_err(|e| ferr(path, e.to_string()));
    }
    let fps = scene.settings.frames_per_second;
    if fps.is_finite() && (1.0..=1000.0).contains(&fps) {
        return Ok(fps);
    }
    warnings.push(fwarn(
        path,
        format!("frame rate {fps} is missing or out of range; sampled at {FALLBACK_RATE} Hz"),
    ));
    Ok(FALLBACK_RATE)
}

/// Samples animation stacks over a rig, reusing its world-transform buffers stack to stack.
struct StackSampler<'a> {
    path: &'a Path,
    input_len: usize,
    nodes: &'a [ufbx::Ref<ufbx::Node>],
    rig: &'a Rig,
    skeleton: &'a Skeleton,
    order: &'a [usize],
    rate: f64,
    world: Vec<DAffine3>,
    bone_world: Vec<Qvv>,
}

impl StackSampler<'_> {
    /// One stack as a clip: its size checked against the budget before anything is sampled.
    fn sample(&mut self, stack: &ufbx::AnimStack, name: String) -> Result<RawClip, ImportError> {
        let (path, rate) = (self.path, self.rate);
        let nb = self.skeleton.num_bones();
        let (begin, end) = (stack.time_begin, stack.time_end);
        if !(begin.is_finite() && end.is_finite() && end >= begin) {
            return Err(ferr(
                path,
                format!("animation stack '{name}': invalid time span {begin}..{end} s"),
            ));
        }
        // `as usize` saturates for absurd spans; the size checks below then refuse.
        let num_samples = (((end - begin) * rate).round() as usize).saturating_add(1);
        let in_stack = |mut e: ImportError| {
            e.message = format!("animation stack '{name}': {}", e.message);
            e
        };
        check_size(path, None, nb, num_samples, self.input_len).map_err(in_stack)?;
        let need = (nb as u64)
            .saturating_mul(num_samples as u64)
            .saturating_mul(BYTES_PER_SAMPLE);
        let budget = limits::max_memory_bytes();
        if need > budget {
            return Err(in_stack(samples_over_budget(
                path,
                nb,
                num_samples,
                need,
                budget,
            )));
        }
        let total = nb * num_samples;
        let mut rotations = vec![Quat::IDENTITY; total];
        let mut translations = vec![Vec3::ZERO; total];
        let mut scales = vec![Vec3::ONE; total];
        // Skeleton bone index of each member.
        let members = &self.rig.members;
        let mut slot = vec![0usize; members.len()];
        for (b, &m) in self.order.iter().enumerate() {
            slot[m] = b;
        }
        for k in 0..num_samples {
            let time = if k + 1 == num_samples && num_samples > 1 {
                end
            } else {
                begin + k as f64 / rate
            };
            self.evaluate(&stack.anim, time);
            for b in 0..members.len() {
                let parent = self.rig.parents[b].map(|p| &self.bone_world[p]);
                let l = local_qvv(parent, &self.bone_world[b]);
                let (mut r, t, s) = l.to_f32();
                let at = slot[b] * num_samples + k;
                if k > 0 && rotations[at - 1].dot(r) < 0.0 {
                    r = -r; // one hemisphere from sample to sample
                }
                rotations[at] = r;
                translations[at] = t;
                scales[at] = s;
            }
        }
        build_clip(
            path,
            name.clone(),
            self.skeleton.clone(),
            rate as f32,
            num_samples,
            rotations,
            translations,
            scales,
            &|_, _, _| None,
        )
        .map_err(in_stack)
    }

    /// Each bone's world transform at `time` (into `bone_world`): ufbx's local transforms
    /// composed as matrices. In helper-node mode this is exactly ufbx's node_to_world (checked
    /// in tests/it/anim/fbx_real.rs).
    fn evaluate(&mut self, anim: &ufbx::Anim, time: f64) {
        let rig = self.rig;
        for &i in &rig.eval_order {
            let l = affine_of_transform(&ufbx::evaluate_transform(anim, &self.nodes[i], time));
            self.world[i] = match rig.up[i] {
                Some(p) if rig.needed[p] => self.world[p] * l,
                _ => l,
            };
        }
        for (b, &i) in rig.world_node.iter().enumerate() {
            self.bone_world[b] = Qvv::from_affine(&self.world[i]);
        }
    }
}

/// A transform as ACL composes them (rotation, translation, componentwise scale), in f64.
#[derive(Clone, Copy, Debug)]
struct Qvv {
    rotation: DQuat,
    translation: DVec3,
    scale: DVec3,
}

impl Qvv {
    const IDENTITY: Self = Self {
        rotation: DQuat::IDENTITY,
        translation: DVec3::ZERO,
        scale: DVec3::ONE,
    };

    /// Decomposes a world matrix: translation exact, scale = column lengths (a mirror goes to
    /// x), rotation = the normalized columns' rotation (shear, which TRS cannot hold, is dropped).
    fn from_affine(m: &DAffine3) -> Self {
        let det = m.matrix3.determinant();
        let sx = m.matrix3.x_axis.length();
        let scale = DVec3::new(
            if det < 0.0 { -sx } else { sx },
            m.matrix3.y_axis.length(),
            m.matrix3.z_axis.length(),
        );
        let inv = scale.recip();
        let rotation = DQuat::from_mat3(&DMat3::from_cols(
            m.matrix3.x_axis * inv.x,
            m.matrix3.y_axis * inv.y,
            m.matrix3.z_axis * inv.z,
        ))
        .normalize();
        Self {
            rotation,
            translation: m.translation,
            scale,
        }
    }

    fn to_f32(self) -> (Quat, Vec3, Vec3) {
        let q = self.rotation;
        (
            quat_from_f64([q.x, q.y, q.z, q.w]),
            self.translation.as_vec3(),
            self.scale.as_vec3(),
        )
    }
}

/// The local transform that, composed ACL's way with the parent's world transform
/// (`crate::pose::local_to_object`), gives `world` back: joint positions exactly, whatever
/// inherit type or non-uniform scale produced them.
fn local_qvv(parent: Option<&Qvv>, world: &Qvv) -> Qvv {
    let Some(p) = parent else {
        return *world;
    };
    let inv = p.rotation.conjugate();
    Qvv {
        rotation: (inv * world.rotation).normalize(),
        translation: (inv * (world.translation - p.translation)) / p.scale,
        scale: world.scale / p.scale,
    }
}

fn affine_of(m: &ufbx::Matrix) -> DAffine3 {
    DAffine3::from_cols(
        DVec3::new(m.m00, m.m10, m.m20),
        DVec3::new(m.m01, m.m11, m.m21),
        DVec3::new(m.m02, m.m12, m.m22),
        DVec3::new(m.m03, m.m13, m.m23),
    )
}

fn affine_of_transform(t: &ufbx::Transform) -> DAffine3 {
    let (r, v, s) = (&t.rotation, &t.translation, &t.scale);
    DAffine3::from_scale_rotation_translation(
        DVec3::new(s.x, s.y, s.z),
        DQuat::from_xyzw(r.x, r.y, r.z, r.w),
        DVec3::new(v.x, v.y, v.z),
    )
}

/// A node's name, or `node{index}` when it has none.
fn node_name(n: &ufbx::Node, index: usize) -> String {
    if n.element.name.is_empty() {
        format!("node{index}")
    } else {
        n.element.name.to_string()
    }
}
