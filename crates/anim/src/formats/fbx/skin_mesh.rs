//! FBX skinned meshes (through ufbx): every mesh whose skin deformer binds the clips' skeleton,
//! merged into one [`SkinnedMesh`], given to every clip of the file (an FBX file's stacks share
//! one skeleton, [`super::Rig`]).
//!
//! - The skeleton is the clip importer's own choice ([`super::Rig::choose`] on the same scene),
//!   and palette joints are named as it names the bones, so the mesh binds to the clips by name.
//! - Palette: one entry per cluster of each mesh's skin deformer, its inverse bind matrix the
//!   cluster's `geometry_to_bone` (mesh vertices → the bone's space at bind time, the geometric
//!   transform included). Skinned by the clip's object-space bone transforms, a vertex lands in
//!   the FBX scene's world space in centimetres, as ufbx skins it (`geometry_to_world`): the
//!   clip's object space is that world space ([`super`]: ufbx's unit and axis conversion sits
//!   in the top nodes' transforms, which the clip holds).
//! - Weights: a vertex keeps its [`INFLUENCES`] largest weights, renormalised (ufbx's own
//!   skinning normalises by the total too). Vertices no cluster weighs are left out with the
//!   triangles using them: they do not move with the skeleton. Faces are triangulated by ufbx;
//!   normals are not read (the app derives them from the triangles). Linear blend only: a
//!   dual-quaternion skin is skinned linearly, with a warning ([`SkinnedMesh::warnings`]).
//! - Only each mesh's first skin deformer is read (ufbx skins a vertex by one deformer too),
//!   with a warning when a mesh has more; blend shapes are not applied.
//! - Hostile input: ufbx parses with the importer's bounded allocators; each mesh's size counts
//!   against the input's memory budget before its vertices are read; every index (face corner,
//!   cluster, weight range) is checked; errors name the file, the mesh and the cluster.

use super::{Rig, ferr, load_scene_with, read_fbx_file, stack_name, ufbx_load_options};
use crate::formats::{ImportError, check_budget, read_quietly};
use crate::mesh::{ClipMesh, INFLUENCES, MeshDataError, SkinnedMesh, check_mesh, mesh_bytes};
use glam::{DMat4, DVec4};
use std::path::Path;
use std::sync::Arc;

/// Reads an FBX file (regular files only, size bounded as for its clips) and returns its
/// skinned mesh once per clip (none when no mesh is skinned by the clips' skeleton).
pub(crate) fn load_fbx_meshes_file(path: &Path) -> Result<Vec<ClipMesh>, ImportError> {
    load_fbx_meshes(&read_fbx_file(path)?, path)
}

/// [`load_fbx_meshes_file`] on bytes in memory; `path` names the data in errors.
pub fn load_fbx_meshes(bytes: &[u8], path: &Path) -> Result<Vec<ClipMesh>, ImportError> {
    // As for clips: a panic in the binding becomes an import error, never reaches the user.
    read_quietly(path, ("FBX", "mesh data"), || load_inner(bytes, path))
}

fn load_inner(bytes: &[u8], path: &Path) -> Result<Vec<ClipMesh>, ImportError> {
    let mut opts = ufbx_load_options(bytes.len());
    opts.ignore_geometry = false;
    let scene = load_scene_with(bytes, path, opts)?;
    if scene.anim_stacks.is_empty() {
        return Ok(Vec::new()); // no clip (the clip importer says why)
    }
    let rig = Rig::choose(&scene, path, &mut Vec::new())?;
    let clips: Vec<String> = (0..scene.anim_stacks.len())
        .filter(|&si| rig.animates(si))
        .map(|si| stack_name(&scene.anim_stacks[si], si))
        .collect();
    if clips.is_empty() {
        return Ok(Vec::new());
    }
    let reader = MeshReader {
        path,
        input_len: bytes.len(),
        nodes: &scene.nodes,
        bone_names: rig.bone_names(&scene.nodes),
        rig: &rig,
    };
    let Some(mesh) = reader.read(&scene)? else {
        return Ok(Vec::new());
    };
    let mesh = Arc::new(mesh);
    Ok(clips
        .into_iter()
        .map(|clip| ClipMesh {
            clip,
            mesh: mesh.clone(),
        })
        .collect())
}

struct MeshReader<'a> {
    path: &'a Path,
    input_len: usize,
    nodes: &'a [ufbx::Ref<ufbx::Node>],
    rig: &'a Rig,
    /// The clip importer's name of each bone (`rig.members` order).
    bone_names: Vec<String>,
}

/// A mesh's name: its first instance node's, else its own, else `mesh{index}`.
fn mesh_label(mesh: &ufbx::Mesh, index: usize) -> String {
    let node = mesh
        .element
        .instances
        .iter()
        .map(|n| n.element.name.to_string());
    node.chain(std::iter::once(mesh.element.name.to_string()))
        .find(|n| !n.is_empty())
        .unwrap_or_else(|| format!("mesh{index}"))
}

fn cluster_label(c: &ufbx::SkinCluster, index: usize) -> String {
    if c.element.name.is_empty() {
        format!("cluster {index}")
    } else {
        format!("cluster '{}'", c.element.name)
    }
}

impl MeshReader<'_> {
    /// The bone a cluster binds (an index into `rig.members`), if it binds one of the skeleton.
    fn cluster_bone(&self, c: &ufbx::SkinCluster) -> Option<usize> {
        let node = c.bone_node.as_ref()?;
        let i = node.element.typed_id as usize;
        (i < self.nodes.len()).then_some(())?;
        self.rig.bone_of(self.nodes, i)
    }

    /// Every mesh skinned by the skeleton, merged; `None` when there is none.
    fn read(&self, scene: &ufbx::Scene) -> Result<Option<SkinnedMesh>, ImportError> {
        let mut m = SkinnedMesh::default();
        let mut names = Vec::new();
        let mut spent = 0u64;
        for (mi, mesh) in scene.meshes.iter().enumerate() {
            let Some(skin) = mesh.skin_deformers.first() else {
                continue;
            };
            if !skin.clusters.iter().any(|c| self.cluster_bone(c).is_some()) {
                continue; // a skin of another skeleton (or of none)
            }
            let label = mesh_label(mesh, mi);
            let what = format!("mesh '{label}'");
            // Counted before reading (vertices and triangles as stored; fewer are kept).
            spent = spent.saturating_add(mesh_bytes(
                mesh.num_vertices as u64,
                mesh.num_triangles as u64,
            ));
            check_budget(
                self.path,
                None,
                &format!("{what}: {} vertices", mesh.num_vertices),
                spent,
                self.input_len,
            )?;
            if self.read_mesh(mesh, skin, &mut m, &what)? {
                // What this reader does not do, said rather than shown silently wrong.
                if mesh.skin_deformers.len() > 1 {
                    m.warnings.push(format!(
                        "{what} has {} skin deformers: only the first is used",
                        mesh.skin_deformers.len()
                    ));
                }
                if matches!(
                    skin.skinning_method,
                    ufbx::SkinningMethod::DualQuaternion | ufbx::SkinningMethod::BlendedDqLinear
                ) {
                    m.warnings.push(format!(
                        "{what}: its skin is dual-quaternion, skinned linearly here (near \
                         twisting joints the mesh and its vertex error differ from the DCC's)"
                    ));
                }
                names.push(label);
            }
        }
        if m.positions.is_empty() {
            return Ok(None);
        }
        m.name = names.join(" + ");
        check_mesh(&mut m).map_err(|e| ferr(self.path, format!("mesh '{}': {e}", m.name)))?;
        Ok(Some(m))
    }

    /// Appends one mesh's weighted vertices, its triangles among them and its clusters'
    /// palette entries to `m` (false: no vertex is weighted); `what` names the mesh.
    fn read_mesh(
        &self,
        mesh: &ufbx::Mesh,
        skin: &ufbx::SkinDeformer,
        m: &mut SkinnedMesh,
        what: &str,
    ) -> Result<bool, ImportError> {
        let err = |msg: String| ferr(self.path, format!("{what}: {msg}"));
        let base = m.joint_names.len();
        let clusters = skin.clusters.len();
        if base + clusters > u16::MAX as usize + 1 {
            return Err(err(format!(
                "{} skin clusters: a mesh is skinned by at most 65536",
                base + clusters
            )));
        }
        for (ci, c) in skin.clusters.iter().enumerate() {
            let cwhat = cluster_label(c, ci);
            let bone = self.cluster_bone(c).ok_or_else(|| {
                let bone = c.bone_node.as_ref().map(|n| n.element.name.to_string());
                err(match bone {
                    Some(b) => format!("{cwhat}: its bone '{b}' is not in the clips' skeleton"),
                    None => format!("{cwhat} binds no bone"),
                })
            })?;
            m.joint_names.push(self.bone_names[bone].clone());
            m.inverse_bind.push(mat4_of(&c.geometry_to_bone));
        }
        let nv = mesh.vertices.len();
        let first = m.positions.len();
        if first.saturating_add(nv) > u32::MAX as usize {
            return Err(err("more than 2^32 vertices".into()));
        }
        // New index of each of the mesh's vertices (None: no weight, left out).
        let mut kept: Vec<Option<u32>> = vec![None; nv];
        let mut influences: Vec<(u32, f64)> = Vec::new();
        for (v, slot) in kept.iter_mut().enumerate() {
            let Some(sv) = skin.vertices.get(v) else {
                continue;
            };
            let begin = sv.weight_begin as usize;
            let range = begin..begin.saturating_add(sv.num_weights as usize);
            let weights = skin.weights.get(range).ok_or_else(|| {
                err(format!(
                    "vertex {v}: its skin weights lie past the weight list"
                ))
            })?;
            influences.clear();
            for w in weights {
                if w.cluster_index as usize >= clusters {
                    return Err(err(format!(
                        "vertex {v}: skin cluster {} outside the {clusters} clusters",
                        w.cluster_index
                    )));
                }
                if !w.weight.is_finite() || w.weight < 0.0 {
                    return Err(err(format!(
                        "vertex {v}, {}: weight {} is negative or not finite",
                        cluster_label(
                            &skin.clusters[w.cluster_index as usize],
                            w.cluster_index as usize
                        ),
                        w.weight
                    )));
                }
                if w.weight > 0.0 {
                    influences.push((w.cluster_index, w.weight));
                }
            }
            if influences.is_empty() {
                continue;
            }
            // The largest first (ties: the lower cluster), so the kept four are the same
            // whatever order the file lists them in.
            influences.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            influences.truncate(INFLUENCES);
            *slot = Some(m.positions.len() as u32);
            let p = mesh.vertices[v];
            m.positions.push([p.x as f32, p.y as f32, p.z as f32]);
            for k in 0..INFLUENCES {
                let (c, w) = influences.get(k).copied().unwrap_or((0, 0.0));
                m.joints.push((base + c as usize) as u16);
                m.weights.push(w as f32);
            }
        }
        if m.positions.len() == first {
            return Ok(false);
        }
        self.triangles(mesh, &kept, m)
            .map_err(|e| err(e.to_string()))?;
        Ok(true)
    }

    /// The mesh's faces triangulated by ufbx, those whose three vertices are all kept.
    fn triangles(
        &self,
        mesh: &ufbx::Mesh,
        kept: &[Option<u32>],
        m: &mut SkinnedMesh,
    ) -> Result<(), MeshDataError> {
        let mut tri = vec![0u32; mesh.max_face_triangles.saturating_mul(3)];
        for (fi, face) in mesh.faces.iter().enumerate() {
            if face.num_indices < 3 {
                continue; // points and lines
            }
            let n = face.num_indices as usize - 2;
            if n * 3 > tri.len() {
                return Err(MeshDataError::FaceTriangles(fi));
            }
            let n = ufbx::triangulate_face(&mut tri[..n * 3], mesh, *face) as usize;
            for t in tri[..n.min(tri.len() / 3) * 3].chunks_exact(3) {
                let mut out = [0u32; 3];
                let mut all = true;
                for (o, &corner) in out.iter_mut().zip(t) {
                    let v = mesh
                        .vertex_indices
                        .get(corner as usize)
                        .copied()
                        .ok_or(MeshDataError::CornerIndex { face: fi, corner })?;
                    match kept.get(v as usize) {
                        Some(Some(k)) => *o = *k,
                        Some(None) => all = false,
                        None => {
                            return Err(MeshDataError::FaceVertex {
                                face: fi,
                                vertex: v,
                            });
                        }
                    }
                }
                if all {
                    m.triangles.push(out);
                }
            }
        }
        Ok(())
    }
}

fn mat4_of(m: &ufbx::Matrix) -> glam::Mat4 {
    DMat4::from_cols(
        DVec4::new(m.m00, m.m10, m.m20, 0.0),
        DVec4::new(m.m01, m.m11, m.m21, 0.0),
        DVec4::new(m.m02, m.m12, m.m22, 0.0),
        DVec4::new(m.m03, m.m13, m.m23, 1.0),
    )
    .as_mat4()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3ds Max skin set to blended dual-quaternion ("Blend") is skinned linearly here, and
    /// the mesh says so; a linear skin carries no warning.
    #[test]
    fn a_dual_quaternion_skin_is_skinned_linearly_with_a_warning() {
        let Some(data) = std::env::var_os("CLIPFORGE_DATA") else {
            eprintln!("CLIPFORGE_DATA not set: skipped");
            return;
        };
        let ufbx = Path::new(&data).join("fbx/ufbx");
        let dq = load_fbx_meshes_file(&ufbx.join("max_transformed_skin_7500_binary.fbx")).unwrap();
        let w = &dq[0].mesh.warnings;
        assert!(
            w.iter()
                .any(|w| w.contains("dual-quaternion, skinned linearly")),
            "{w:?}"
        );
        let linear =
            load_fbx_meshes_file(&ufbx.join("maya_kenney_character_7700_binary.fbx")).unwrap();
        assert!(
            linear[0].mesh.warnings.is_empty(),
            "{:?}",
            linear[0].mesh.warnings
        );
    }
}
