//! glTF skinned meshes: for each animation, the skin it drives (the skeleton loader's choice,
//! [`super::animated_skin`]) and every mesh node skinned by it, merged into one
//! [`SkinnedMesh`] in centimetres (positions and the inverse bind matrices' translations × 100,
//! as the clip's translations).
//!
//! - Triangle primitives with `POSITION`, `JOINTS_0` and `WEIGHTS_0` are read (other primitives
//!   are left out); `NORMAL` is kept when every primitive has it. Weights are normalised.
//! - As the glTF specification says, the skinned mesh node's own transform is not applied; the
//!   vertices land in the clip's object space (the space of the skeleton's roots' parent).
//! - Palette joints are named as the skeleton loader names their bones ([`super::member_names`]),
//!   so the mesh binds to the clip by name.
//! - Hostile input: every accessor is checked before the gltf crate reads it (element types, a
//!   buffer view behind every element: no count without data), the mesh's size counts against
//!   the input's memory budget before anything is read, indices and joints are range-checked,
//!   and a panic left in the gltf crate's readers becomes an import error.

use super::{
    GLTF_TO_CM, GltfError, Opened, animated_skin, check_accessor, folder_of, gerr, member_names,
    node_name, nodes_between, open, parents,
};
use crate::formats::{ImportError, check_budget, read_input, read_quietly};
use crate::mesh::{ClipMesh, INFLUENCES, SkinnedMesh, check_mesh, mesh_bytes};
use glam::{DMat4, Mat4, Quat};
use gltf::accessor::{DataType, Dimensions};
use gltf::animation::Property;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

/// Reads a glTF/GLB file (external buffers resolve next to it) and returns each animation's
/// skinned mesh (animations without a skinned mesh have none).
pub(crate) fn load_gltf_meshes_file(path: &Path) -> Result<Vec<ClipMesh>, ImportError> {
    let bytes = read_input(path)?;
    load_gltf_meshes(&bytes, path, folder_of(path))
}

/// [`load_gltf_meshes_file`] on bytes in memory; `base`: the folder external buffers resolve
/// in (`None`: they cannot be read).
pub fn load_gltf_meshes(
    bytes: &[u8],
    path: &Path,
    base: Option<&Path>,
) -> Result<Vec<ClipMesh>, ImportError> {
    read_quietly(path, ("glTF", "mesh data"), || {
        load_inner(bytes, path, base)
    })
}

fn load_inner(
    bytes: &[u8],
    path: &Path,
    base: Option<&Path>,
) -> Result<Vec<ClipMesh>, ImportError> {
    let Opened {
        doc,
        buffers,
        input_len,
    } = open(bytes, path, base)?;
    let nodes: Vec<gltf::Node> = doc.nodes().collect();
    let parent_of = parents(&nodes);
    let name_of = |i: usize| node_name(&nodes, i);
    let ctx = Ctx {
        path,
        buffers: &buffers,
        input_len,
    };
    let mut by_skin: HashMap<usize, Option<Arc<SkinnedMesh>>> = HashMap::new();
    let mut spent = 0u64;
    let mut out = Vec::new();
    for anim in doc.animations() {
        let animated: BTreeSet<usize> = anim
            .channels()
            .filter(|c| c.target().property() != Property::MorphTargetWeights)
            .map(|c| c.target().node().index())
            .collect();
        let Some(skin) = animated_skin(&doc, &animated) else {
            continue;
        };
        let mesh = match by_skin.get(&skin.index()) {
            Some(m) => m.clone(),
            None => {
                let mut joints: BTreeSet<usize> = skin.joints().map(|j| j.index()).collect();
                joints.extend(nodes_between(&joints, &parent_of));
                let members: Vec<usize> = joints.into_iter().collect();
                let names = member_names(&members, name_of);
                let joint_names = skin
                    .joints()
                    .map(|j| names[members.binary_search(&j.index()).unwrap_or(0)].clone())
                    .collect();
                let scene_rotation = scene_rotation(&nodes, &parent_of, &members);
                let m = ctx
                    .skin_mesh(&doc, &skin, joint_names, &mut spent)?
                    .map(|m| {
                        Arc::new(SkinnedMesh {
                            scene_rotation,
                            ..m
                        })
                    });
                by_skin.insert(skin.index(), m.clone());
                m
            }
        };
        if let Some(mesh) = mesh {
            out.push(ClipMesh {
                clip: super::clip_name(&anim),
                mesh,
            });
        }
    }
    Ok(out)
}

/// The rotation of the nodes above the skeleton (the first root's non-joint ancestors, e.g. an
/// exporter's Z-up → Y-up node): where the file's scene turns the clip's object space, for
/// drawing ([`SkinnedMesh::scene_rotation`]). Identity when a matrix there has no rotation to
/// take (singular or not finite).
fn scene_rotation(nodes: &[gltf::Node], parent_of: &[Option<usize>], members: &[usize]) -> Quat {
    let Some(root) = members
        .iter()
        .find(|&&m| parent_of[m].is_none_or(|p| members.binary_search(&p).is_err()))
    else {
        return Quat::IDENTITY;
    };
    let mut world = DMat4::IDENTITY;
    // Ancestors, nearest first; a node graph with a cycle (refused by check_document) would
    // otherwise never end, so the walk is bounded by the node count.
    let mut at = parent_of[*root];
    for _ in 0..nodes.len() {
        let Some(n) = at else { break };
        world = Mat4::from_cols_array_2d(&nodes[n].transform().matrix()).as_dmat4() * world;
        at = parent_of[n];
    }
    let (_, r, _) = world.to_scale_rotation_translation();
    let r = r.as_quat();
    if r.is_finite() && (r.length() - 1.0).abs() < 1e-3 {
        r.normalize()
    } else {
        Quat::IDENTITY
    }
}

/// Why a primitive was refused: its data (the caller names the primitive), or the memory budget.
enum PrimError {
    Data(GltfError),
    Budget(ImportError),
}

struct Ctx<'a> {
    path: &'a Path,
    buffers: &'a [Vec<u8>],
    input_len: usize,
}

/// The element types an attribute may have (what the gltf crate's readers handle).
fn check_type(
    acc: &gltf::Accessor,
    dims: Dimensions,
    types: &'static [DataType],
) -> Result<(), GltfError> {
    if acc.dimensions() != dims || !types.contains(&acc.data_type()) {
        return Err(GltfError::ElementType {
            dims: acc.dimensions(),
            data_type: acc.data_type(),
            expected_dims: dims,
            expected_types: types,
        });
    }
    Ok(())
}

impl Ctx<'_> {
    /// Checks an accessor before the gltf crate reads it: bounds, types, and a buffer view
    /// behind every element (a sparse-only accessor can declare any count with no data).
    fn check(
        &self,
        acc: &gltf::Accessor,
        dims: Dimensions,
        types: &'static [DataType],
    ) -> Result<(), GltfError> {
        check_accessor(acc, self.buffers)?;
        if acc.view().is_none() {
            return Err(GltfError::MeshWithoutView);
        }
        check_type(acc, dims, types)
    }

    /// Every triangle primitive of the mesh nodes skinned by `skin`, merged; `None` when no
    /// node is skinned by it.
    fn skin_mesh(
        &self,
        doc: &gltf::Document,
        skin: &gltf::Skin,
        joint_names: Vec<String>,
        spent: &mut u64,
    ) -> Result<Option<SkinnedMesh>, ImportError> {
        let path = self.path;
        let what = format!("skin {}", skin.index());
        let err = |m: String| gerr(path, format!("{what}: {m}"));
        let nj = joint_names.len();
        let mut m = SkinnedMesh {
            joint_names,
            inverse_bind: vec![Mat4::IDENTITY; nj],
            ..Default::default()
        };
        if let Some(acc) = skin.inverse_bind_matrices() {
            self.check(&acc, Dimensions::Mat4, &[DataType::F32])
                .map_err(|e| err(format!("inverse bind matrices: {e}")))?;
            if acc.count() < nj {
                return Err(err(format!(
                    "{} inverse bind matrices for {nj} joints",
                    acc.count()
                )));
            }
            let reader = skin.reader(|b| self.buffers.get(b.index()).map(|d| &d[..]));
            let ibm = reader
                .read_inverse_bind_matrices()
                .ok_or_else(|| err("inverse bind matrices cannot be read".into()))?;
            for (slot, cols) in m.inverse_bind.iter_mut().zip(ibm) {
                let mut c = cols;
                for x in &mut c[3][..3] {
                    *x = (*x as f64 * GLTF_TO_CM) as f32;
                }
                *slot = Mat4::from_cols_array_2d(&c);
            }
        }
        let mut names = Vec::new();
        let mut all_normals = true;
        for node in doc.nodes() {
            if node.skin().map(|s| s.index()) != Some(skin.index()) {
                continue;
            }
            let Some(mesh) = node.mesh() else { continue };
            let mesh_name = mesh
                .name()
                .map(str::to_string)
                .unwrap_or_else(|| format!("mesh{}", mesh.index()));
            let mut used = false;
            for prim in mesh.primitives() {
                let pwhat = format!("mesh '{mesh_name}', primitive {}", prim.index());
                let perr = |e: GltfError| err(format!("{pwhat}: {e}"));
                used |= self
                    .read_primitive(&prim, &mut m, &mut all_normals, spent)
                    .map_err(|e| match e {
                        PrimError::Data(e) => perr(e),
                        PrimError::Budget(mut b) => {
                            b.message = format!("{what}: {pwhat}: {}", b.message);
                            b
                        }
                    })?;
            }
            if used {
                names.push(mesh_name);
            }
        }
        if m.positions.is_empty() {
            return Ok(None);
        }
        if !all_normals {
            m.normals.clear();
        }
        m.name = names.join(" + ");
        check_mesh(&mut m).map_err(|e| err(format!("mesh '{}': {e}", m.name)))?;
        Ok(Some(m))
    }

    /// Reads one triangle primitive with positions, joints and weights into `m` (false: not
    /// such a primitive, left out); the caller names the primitive in its errors.
    fn read_primitive(
        &self,
        prim: &gltf::Primitive,
        m: &mut SkinnedMesh,
        all_normals: &mut bool,
        spent: &mut u64,
    ) -> Result<bool, PrimError> {
        if prim.mode() != gltf::mesh::Mode::Triangles {
            return Ok(false);
        }
        let attr = |s| prim.get(&s);
        let (Some(pos), Some(joints), Some(weights)) = (
            attr(gltf::Semantic::Positions),
            attr(gltf::Semantic::Joints(0)),
            attr(gltf::Semantic::Weights(0)),
        ) else {
            return Ok(false);
        };
        let perr = PrimError::Data;
        let of = |a| move |e| perr(GltfError::of(a)(e));
        self.check(&pos, Dimensions::Vec3, &[DataType::F32])
            .map_err(of("POSITION"))?;
        self.check(&joints, Dimensions::Vec4, &[DataType::U8, DataType::U16])
            .map_err(of("JOINTS_0"))?;
        self.check(
            &weights,
            Dimensions::Vec4,
            &[DataType::F32, DataType::U8, DataType::U16],
        )
        .map_err(of("WEIGHTS_0"))?;
        let nv = pos.count();
        if joints.count() != nv || weights.count() != nv {
            return Err(perr(GltfError::InfluenceCount {
                positions: nv,
                joints: joints.count(),
                weights: weights.count(),
            }));
        }
        let normals = attr(gltf::Semantic::Normals);
        if let Some(n) = &normals {
            self.check(n, Dimensions::Vec3, &[DataType::F32])
                .map_err(of("NORMAL"))?;
            if n.count() != nv {
                return Err(perr(GltfError::NormalCount {
                    normals: n.count(),
                    vertices: nv,
                }));
            }
        }
        let indices = prim.indices();
        if let Some(i) = &indices {
            self.check(
                i,
                Dimensions::Scalar,
                &[DataType::U8, DataType::U16, DataType::U32],
            )
            .map_err(of("indices"))?;
        }
        let ni = indices.as_ref().map_or(nv, |i| i.count());
        // Counted before reading: a file may reuse one large accessor in many primitives.
        *spent = spent.saturating_add(mesh_bytes(nv as u64, ni as u64 / 3));
        check_budget(
            self.path,
            None,
            &format!("{nv} vertices"),
            *spent,
            self.input_len,
        )
        .map_err(PrimError::Budget)?;
        let first = m.positions.len();
        if first.saturating_add(nv) > u32::MAX as usize {
            return Err(perr(GltfError::TooManyVertices));
        }
        let reader = prim.reader(|b| self.buffers.get(b.index()).map(|d| &d[..]));
        let unreadable = |a| perr(GltfError::Unreadable(a));
        let k = GLTF_TO_CM as f32;
        m.positions.extend(
            reader
                .read_positions()
                .ok_or_else(|| unreadable("POSITION"))?
                .map(|p| p.map(|c| c * k)),
        );
        m.joints.extend(
            reader
                .read_joints(0)
                .ok_or_else(|| unreadable("JOINTS_0"))?
                .into_u16()
                .flatten(),
        );
        m.weights.extend(
            reader
                .read_weights(0)
                .ok_or_else(|| unreadable("WEIGHTS_0"))?
                .into_f32()
                .flatten(),
        );
        match reader.read_normals() {
            Some(n) if *all_normals => m.normals.extend(n),
            _ => *all_normals = false,
        }
        let base = first as u32;
        let idx: Vec<u32> = match reader.read_indices() {
            Some(i) => i.into_u32().collect(),
            None => (0..nv as u32).collect(),
        };
        if let Some(&bad) = idx.iter().find(|&&i| i as usize >= nv) {
            return Err(perr(GltfError::IndexPast {
                index: bad,
                vertices: nv,
            }));
        }
        m.triangles.extend(
            idx.chunks_exact(3)
                .map(|t| [t[0] + base, t[1] + base, t[2] + base]),
        );
        if m.positions.len() != first + nv
            || m.joints.len() != (first + nv) * INFLUENCES
            || m.weights.len() != (first + nv) * INFLUENCES
        {
            return Err(perr(GltfError::ShortAttributes));
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CesiumMan's skeleton hangs under a node turning Z-up into glTF's Y-up (not part of the
    /// clip, as in ozz's importer): the mesh carries that rotation for drawing.
    #[test]
    fn cesium_man_carries_its_z_up_node_as_the_scene_rotation() {
        let Some(data) = std::env::var_os("CLIPFORGE_DATA") else {
            eprintln!("CLIPFORGE_DATA not set: skipped");
            return;
        };
        let path = Path::new(&data).join("gltf/khronos-via-ozz/cesium_man.gltf");
        let meshes = load_gltf_meshes_file(&path).unwrap();
        let r = meshes[0].mesh.scene_rotation;
        // The file's matrix maps +Z to +Y (and +Y to −Z).
        assert!((r * glam::Vec3::Z - glam::Vec3::Y).length() < 1e-6, "{r:?}");
        assert!((r * glam::Vec3::Y + glam::Vec3::Z).length() < 1e-6, "{r:?}");
        // A skeleton directly under the scene: no rotation.
        let path = Path::new(&data).join("gltf/khronos-via-ozz/rigged_simple.gltf");
        for m in load_gltf_meshes_file(&path).unwrap() {
            let r = m.mesh.scene_rotation;
            assert!(r.is_finite() && (r.length() - 1.0).abs() < 1e-6, "{r:?}");
        }
    }
}
