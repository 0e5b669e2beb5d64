//! Skinned meshes that come with a clip (glTF/GLB skins, FBX skin deformers) and the vertex
//! error metric on them: the mesh skinned by the raw pose and by the decompressed pose, every
//! vertex's distance between the two, at every sample ([`mesh_error`]).
//!
//! The app's view skins through the runtime's jobs exactly as a game runs them ([`Skinner`]:
//! local → object with `LocalToObjectJob`, the palette with `SkinningPaletteJob`, vertices with
//! `SkinJob`); the report's figure is measured in float64 ([`mesh_error`]). The importers
//! ([`crate::formats::gltf::load_gltf_meshes`], [`crate::formats::fbx::load_fbx_meshes`]) build
//! [`SkinnedMesh`]es in the clip's units; [`load_clip_meshes`] picks the importer by extension.

use crate::clip::RawClip;
use crate::formats::{ClipFormat, ImportError};
use crate::pose::Pose;
use crate::runtime::jobs::{
    JobError, LocalToObjectJob, PaletteOut, PoseRef, SkinJob, SkinningPaletteJob,
};
use crate::skeleton::Skeleton;
use glam::{DMat4, DVec3, Mat4, Quat};
use std::path::Path;
use std::sync::Arc;

/// Influences per vertex the meshes are stored with (glTF's `JOINTS_0`/`WEIGHTS_0`; FBX
/// vertices keep their four largest weights).
pub const INFLUENCES: usize = 4;

/// A skinned mesh in the clip's units: vertices in bind space, four influences per vertex
/// (weights summing to 1), one palette entry per skin joint (its bone's name and inverse bind
/// matrix), triangles for drawing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedMesh {
    /// The mesh (or meshes, merged) as the file names it.
    pub name: String,
    pub positions: Vec<[f32; 3]>,
    /// Empty, or one unit normal per vertex.
    pub normals: Vec<[f32; 3]>,
    /// [`INFLUENCES`] palette indices per vertex.
    pub joints: Vec<u16>,
    /// [`INFLUENCES`] weights per vertex, summing to 1.
    pub weights: Vec<f32>,
    pub triangles: Vec<[u32; 3]>,
    /// Per palette entry: the clip bone it follows (by name) and its inverse bind matrix.
    pub joint_names: Vec<String>,
    pub inverse_bind: Vec<Mat4>,
    /// How the file's scene turns the clip's object space: the rotation of the nodes above the
    /// skeleton's roots (a glTF exporter's Z-up → Y-up node; identity for FBX, whose importer
    /// folds the scene root into the bones). For drawing only: the clip, and the vertex error
    /// measured on it, stay in object space.
    pub scene_rotation: Quat,
    /// What the reader could not honour and the user should know (e.g. a dual-quaternion skin
    /// skinned linearly); the batch adds them to the clip's warnings, the app shows them.
    pub warnings: Vec<String>,
}

/// A mesh of a file, and the clip (by name) it is skinned with.
#[derive(Clone, Debug)]
pub struct ClipMesh {
    pub clip: String,
    pub mesh: Arc<SkinnedMesh>,
}

/// Why a mesh cannot be skinned with a clip.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// A palette joint's bone is not in the clip's skeleton.
    #[error("mesh '{mesh}': joint '{joint}' is not a bone of clip '{clip}'")]
    MissingBone {
        mesh: String,
        joint: String,
        clip: String,
    },
    /// The raw and decompressed clips do not line up (bones or samples).
    #[error("the decompressed clip has {got} where the raw clip has {expected}")]
    Mismatch { expected: String, got: String },
    /// An additive clip's mesh error needs its base pose, which is not measured here.
    #[error("clip '{0}' is additive: its mesh error is not measured")]
    Additive(String),
    /// A runtime job refused the inputs (a mesh the importer let through inconsistent).
    #[error("mesh '{mesh}': {error}")]
    Job { mesh: String, error: JobError },
}

/// Why a mesh an importer built is refused ([`check_mesh`]); the importer names the file and
/// the mesh around it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MeshDataError {
    #[error("{matrices} inverse bind matrices for {joints} joints")]
    InverseBindCount { matrices: usize, joints: usize },
    #[error("{0} joints: a mesh is skinned by at most 65536")]
    TooManyJoints(usize),
    #[error("joints or weights do not match the vertex count")]
    InfluenceCount,
    #[error("{normals} normals for {vertices} vertices")]
    NormalCount { normals: usize, vertices: usize },
    /// A position or normal (vertex index) with a NaN or infinite coordinate.
    #[error("vertex {0} is not finite")]
    NotFinite(usize),
    #[error("an inverse bind matrix is not finite")]
    InverseBindNotFinite,
    #[error("triangle {triangle} indexes past the {vertices} vertices")]
    TriangleIndex { triangle: usize, vertices: usize },
    #[error("vertex {vertex}: joint {joint} outside the {joints} joints")]
    JointIndex {
        vertex: usize,
        joint: u16,
        joints: usize,
    },
    #[error("vertex {0}: a weight is negative or not finite")]
    BadWeight(usize),
    #[error("vertex {0} has no skin weight")]
    NoWeight(usize),
    /// A face the importer's triangulation (ufbx) says has more triangles than the mesh's
    /// largest face.
    #[error("face {0} has more triangles than the mesh says")]
    FaceTriangles(usize),
    #[error("face {face}: corner {corner} past the indices")]
    CornerIndex { face: usize, corner: u32 },
    #[error("face {face}: vertex {vertex} past the vertices")]
    FaceVertex { face: usize, vertex: u32 },
}

impl SkinnedMesh {
    pub fn num_vertices(&self) -> usize {
        self.positions.len()
    }

    /// The palette entry (joint) with the largest weight on vertex `v`.
    pub(crate) fn main_joint(&self, v: usize) -> Option<usize> {
        let w = self.weights.get(v * INFLUENCES..(v + 1) * INFLUENCES)?;
        let k = (0..INFLUENCES).max_by(|&a, &b| w[a].total_cmp(&w[b]))?;
        Some(self.joints[v * INFLUENCES + k] as usize)
    }

    /// The name of the bone that moves vertex `v` most (what the app names the worst vertex by).
    pub fn main_bone_name(&self, v: usize) -> Option<&str> {
        self.main_joint(v)
            .and_then(|j| self.joint_names.get(j))
            .map(String::as_str)
    }

    /// Each palette entry's bone in `skeleton` (by name).
    pub fn bind(&self, skeleton: &Skeleton, clip: &str) -> Result<Vec<u16>, MeshError> {
        self.joint_names
            .iter()
            .map(|n| {
                skeleton
                    .names
                    .iter()
                    .position(|b| b == n)
                    .and_then(|b| u16::try_from(b).ok())
                    .ok_or_else(|| MeshError::MissingBone {
                        mesh: self.name.clone(),
                        joint: n.clone(),
                        clip: clip.to_string(),
                    })
            })
            .collect()
    }
}

/// Skins one mesh with poses of one skeleton through the runtime's jobs, reusing its buffers
/// (no allocation per pose).
pub struct Skinner {
    mesh: Arc<SkinnedMesh>,
    parents: Vec<u32>,
    joint_bones: Vec<u16>,
    object: Pose,
    palette: Vec<Mat4>,
    pub positions: Vec<[f32; 3]>,
    pub normals: Vec<[f32; 3]>,
}

impl Skinner {
    /// A skinner of `mesh` for the skeleton of `clip` (every joint must be one of its bones).
    pub fn new(mesh: Arc<SkinnedMesh>, clip: &RawClip) -> Result<Self, MeshError> {
        let joint_bones = mesh.bind(&clip.skeleton, &clip.name)?;
        let nb = clip.num_bones();
        let (nv, nn) = (mesh.positions.len(), mesh.normals.len());
        Ok(Self {
            palette: vec![Mat4::IDENTITY; mesh.inverse_bind.len()],
            parents: clip.skeleton.parents.clone(),
            joint_bones,
            object: Pose::new(nb),
            positions: vec![[0.0; 3]; nv],
            normals: vec![[0.0; 3]; nn],
            mesh,
        })
    }

    pub fn mesh(&self) -> &Arc<SkinnedMesh> {
        &self.mesh
    }

    /// Skins the mesh by the local pose `local` into [`Self::positions`] and [`Self::normals`].
    pub fn skin(&mut self, local: &Pose) -> Result<(), MeshError> {
        let job_err = |error| MeshError::Job {
            mesh: self.mesh.name.clone(),
            error,
        };
        let o = &mut self.object;
        LocalToObjectJob::new(
            &self.parents,
            PoseRef::from(local),
            &mut o.rotations,
            &mut o.translations,
            &mut o.scales,
        )
        .run()
        .map_err(job_err)?;
        SkinningPaletteJob {
            object: PoseRef::from(&*o),
            inverse_bind: &self.mesh.inverse_bind,
            joints: Some(&self.joint_bones),
            out: PaletteOut::Mat4(&mut self.palette),
        }
        .run()
        .map_err(job_err)?;
        let m = &self.mesh;
        SkinJob {
            palette: &self.palette,
            influences: INFLUENCES,
            joints: &m.joints,
            weights: &m.weights,
            positions: &m.positions,
            normals: &m.normals,
            out_positions: &mut self.positions,
            out_normals: &mut self.normals,
        }
        .run()
        .map_err(job_err)
    }

    /// Skins the mesh by sample `sample` of `clip` (the clip this skinner was made for).
    pub fn skin_sample(
        &mut self,
        clip: &RawClip,
        sample: usize,
        pose: &mut Pose,
    ) -> Result<(), MeshError> {
        clip.sample_pose(sample, pose);
        self.skin(pose)
    }
}

/// The mesh error of a decompressed clip against its raw clip, in the clips' units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshErrorStats {
    /// Largest distance between a vertex skinned by the raw pose and by the decompressed one,
    /// over every vertex and sample.
    pub max: f64,
    pub worst_vertex: usize,
    pub worst_sample: usize,
    /// Largest vertex distance at each sample.
    pub per_sample_max: Vec<f64>,
}

/// Skins `mesh` by every sample of `raw` and of `lossy` (the decompressed clip at the raw
/// clip's sample times) and measures every vertex's distance between the two.
///
/// Measured in float64 (object space as the codec's metric composes it,
/// [`crate::metric::object_space_f64`], then the palette and linear-blend skinning), so the
/// figure is the compression's alone: float32 skinning of a large mesh rounds by more than a
/// small compression error (the Fox, ~10 m in clip units, by ~0.01 cm). The app's view skins in
/// float32 through [`Skinner`], as a game does.
pub fn mesh_error(
    raw: &RawClip,
    lossy: &RawClip,
    mesh: &Arc<SkinnedMesh>,
) -> Result<MeshErrorStats, MeshError> {
    if raw.additive.is_some() {
        return Err(MeshError::Additive(raw.name.clone()));
    }
    if lossy.num_bones() != raw.num_bones() || lossy.num_samples != raw.num_samples {
        return Err(MeshError::Mismatch {
            expected: format!("{} bones × {} samples", raw.num_bones(), raw.num_samples),
            got: format!(
                "{} bones × {} samples",
                lossy.num_bones(),
                lossy.num_samples
            ),
        });
    }
    let joint_bones = mesh.bind(&raw.skeleton, &raw.name)?;
    let nb = raw.num_bones();
    let a = crate::metric::object_space_f64(raw);
    let b = crate::metric::object_space_f64(lossy);
    let ibm: Vec<DMat4> = mesh.inverse_bind.iter().map(|m| m.as_dmat4()).collect();
    let palette = |pose: &[crate::metric::DTransform], out: &mut Vec<DMat4>| {
        out.clear();
        out.extend(joint_bones.iter().zip(&ibm).map(|(&bone, ib)| {
            let t = &pose[bone as usize];
            DMat4::from_scale_rotation_translation(t.scale, t.rotation, t.translation) * *ib
        }));
    };
    let (mut pa, mut pb) = (Vec::new(), Vec::new());
    let mut stats = MeshErrorStats {
        per_sample_max: vec![0.0; raw.num_samples],
        ..Default::default()
    };
    for s in 0..raw.num_samples {
        palette(&a[s * nb..(s + 1) * nb], &mut pa);
        palette(&b[s * nb..(s + 1) * nb], &mut pb);
        let mut worst = (0, 0.0f64);
        for v in 0..mesh.num_vertices() {
            let p = DVec3::from(mesh.positions[v].map(f64::from));
            let (mut qa, mut qb) = (DVec3::ZERO, DVec3::ZERO);
            for k in v * INFLUENCES..(v + 1) * INFLUENCES {
                let (j, w) = (mesh.joints[k] as usize, mesh.weights[k] as f64);
                if w != 0.0 {
                    qa += w * pa[j].transform_point3(p);
                    qb += w * pb[j].transform_point3(p);
                }
            }
            let e = qa.distance(qb);
            let e = if e.is_finite() { e } else { f64::INFINITY };
            if e > worst.1 {
                worst = (v, e);
            }
        }
        stats.per_sample_max[s] = worst.1;
        if worst.1 > stats.max {
            stats.max = worst.1;
            stats.worst_vertex = worst.0;
            stats.worst_sample = s;
        }
    }
    Ok(stats)
}

/// Distance between two skinnings of a vertex (float64 from the float32 positions).
#[inline]
pub fn vertex_distance(a: &[f32; 3], b: &[f32; 3]) -> f64 {
    let d = |i: usize| a[i] as f64 - b[i] as f64;
    (d(0) * d(0) + d(1) * d(1) + d(2) * d(2)).sqrt()
}

/// The skinned meshes of a clip file, each with the clip it goes with: glTF/GLB skins and FBX
/// skin deformers; other formats carry no mesh here (an empty list).
pub fn load_clip_meshes(path: &Path) -> Result<Vec<ClipMesh>, ImportError> {
    match ClipFormat::from_path(path) {
        Some(ClipFormat::Gltf) => crate::formats::gltf::load_gltf_meshes_file(path),
        Some(ClipFormat::Fbx) => crate::formats::fbx::load_fbx_meshes_file(path),
        _ => Ok(Vec::new()),
    }
}

/// The mesh that goes with clip `name` (one per clip at most).
pub fn mesh_for_clip(meshes: &[ClipMesh], name: &str) -> Option<Arc<SkinnedMesh>> {
    meshes
        .iter()
        .find(|m| m.clip == name)
        .map(|m| m.mesh.clone())
}

/// Checks a mesh an importer built (indices, palette size, weights, finite values) and
/// normalises its weights; the message says what is wrong (the caller adds file and mesh).
pub(crate) fn check_mesh(m: &mut SkinnedMesh) -> Result<(), MeshDataError> {
    let nv = m.positions.len();
    let nj = m.joint_names.len();
    if m.inverse_bind.len() != nj {
        return Err(MeshDataError::InverseBindCount {
            matrices: m.inverse_bind.len(),
            joints: nj,
        });
    }
    if nj > u16::MAX as usize + 1 {
        return Err(MeshDataError::TooManyJoints(nj));
    }
    if m.joints.len() != nv * INFLUENCES || m.weights.len() != nv * INFLUENCES {
        return Err(MeshDataError::InfluenceCount);
    }
    if !m.normals.is_empty() && m.normals.len() != nv {
        return Err(MeshDataError::NormalCount {
            normals: m.normals.len(),
            vertices: nv,
        });
    }
    if let Some(v) = m
        .positions
        .iter()
        .chain(&m.normals)
        .position(|p| !p.iter().all(|c| c.is_finite()))
    {
        return Err(MeshDataError::NotFinite(v % nv.max(1)));
    }
    if m.inverse_bind.iter().any(|ib| !ib.is_finite()) {
        return Err(MeshDataError::InverseBindNotFinite);
    }
    if let Some(t) = m
        .triangles
        .iter()
        .position(|t| t.iter().any(|&i| i as usize >= nv))
    {
        return Err(MeshDataError::TriangleIndex {
            triangle: t,
            vertices: nv,
        });
    }
    for v in 0..nv {
        let r = v * INFLUENCES..(v + 1) * INFLUENCES;
        if let Some(&j) = m.joints[r.clone()].iter().find(|&&j| j as usize >= nj) {
            return Err(MeshDataError::JointIndex {
                vertex: v,
                joint: j,
                joints: nj,
            });
        }
        let w = &mut m.weights[r];
        if w.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return Err(MeshDataError::BadWeight(v));
        }
        let sum: f32 = w.iter().sum();
        if sum <= 1e-6 {
            return Err(MeshDataError::NoWeight(v));
        }
        w.iter_mut().for_each(|x| *x /= sum);
    }
    Ok(())
}

/// Bytes a mesh of `vertices` vertices and `triangles` triangles takes while importing (with
/// normals), for the memory budget checks before anything is read.
pub(crate) fn mesh_bytes(vertices: u64, triangles: u64) -> u64 {
    let per_vertex = (12 + 12 + 2 * INFLUENCES + 4 * INFLUENCES) as u64;
    vertices
        .saturating_mul(per_vertex)
        .saturating_add(triangles.saturating_mul(12))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn face_error_texts() {
        assert_eq!(
            MeshDataError::FaceTriangles(4).to_string(),
            "face 4 has more triangles than the mesh says"
        );
        assert_eq!(
            MeshDataError::CornerIndex { face: 1, corner: 9 }.to_string(),
            "face 1: corner 9 past the indices"
        );
        assert_eq!(
            MeshDataError::FaceVertex { face: 2, vertex: 7 }.to_string(),
            "face 2: vertex 7 past the vertices"
        );
    }
}
