//! Skinned meshes in the pipeline: a batch row's `max_vertex_error_cm` ([`measure_row`]), the
//! clip detail's mesh data ([`MeshDetail`], measured on the detail job's thread), and the app's
//! mesh playback worker ([`MeshPlayer`]: one thread that skins the requested sample by the raw
//! and the decompressed pose with the runtime's `SkinJob`, so the app's UI thread never skins).
//! The clip detail's meshes come through a small cache of parsed files ([`cached_clip_meshes`]).

use crate::ClipFile;
use crate::report::ClipReport;
use clipforge_anim::formats::ClipFormat;
use clipforge_anim::formats::ImportError;
use clipforge_anim::mesh::{
    ClipMesh, MeshError, MeshErrorStats, SkinnedMesh, Skinner, load_clip_meshes, mesh_error,
    mesh_for_clip, vertex_distance,
};
use clipforge_anim::{Pose, RawClip};
use glam::Vec3;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Why the clip detail shows no mesh, or the mesh worker no frame (the texts the app prints).
#[derive(Debug, thiserror::Error)]
pub enum MeshViewError {
    /// The file's meshes cannot be read.
    #[error("mesh not shown: {0}")]
    Read(#[from] ImportError),
    /// The mesh cannot be skinned with this clip.
    #[error(transparent)]
    Skin(#[from] MeshError),
    /// The worker thread ended (it only ends when dropped, or on a panic).
    #[error("the mesh worker stopped")]
    WorkerStopped,
}

/// Whether a batch input may hold skinned meshes (glTF/GLB, FBX).
pub(crate) fn has_meshes(file: &ClipFile) -> bool {
    matches!(file.format, ClipFormat::Gltf | ClipFormat::Fbx)
}

/// A batch input's skinned meshes, read on first use and then kept for the file's other clips
/// (one parse per file, not one per clip: an FBX scene is parsed whole each time).
pub(crate) struct FileMeshes<'a> {
    file: &'a ClipFile,
    loaded: std::cell::OnceCell<Result<Vec<ClipMesh>, ImportError>>,
}

impl<'a> FileMeshes<'a> {
    pub(crate) fn new(file: &'a ClipFile) -> Self {
        Self {
            file,
            loaded: std::cell::OnceCell::new(),
        }
    }

    fn get(&self) -> &Result<Vec<ClipMesh>, ImportError> {
        self.loaded
            .get_or_init(|| load_clip_meshes(&self.file.path))
    }
}

/// Fills `row.max_vertex_error_cm` when `meshes`' file has a skinned mesh for clip `raw`
/// (`lossy`: the decompressed clip at the raw sample times; `k`: cm per clip unit). A mesh that
/// cannot be read or skinned leaves it empty with a warning (the batch puts the file's importer
/// warnings before it); the clip's row is otherwise unchanged. What the mesh's reader noted
/// (e.g. an FBX dual-quaternion skin skinned linearly) is added to the row's warnings.
pub(crate) fn measure_row(
    row: &mut ClipReport,
    meshes: &FileMeshes,
    raw: &RawClip,
    lossy: Option<RawClip>,
    k: f64,
) {
    let mesh = match meshes.get() {
        Ok(m) => mesh_for_clip(m, &raw.name),
        Err(e) => {
            row.warnings.push(format!("mesh not measured: {e}"));
            return;
        }
    };
    let Some(mesh) = mesh else {
        return;
    };
    let Some(lossy) = lossy else {
        row.warnings.push(
            "mesh not measured: the decompressed clip does not match the raw one".to_string(),
        );
        return;
    };
    row.warnings
        .extend(mesh.warnings.iter().map(|w| format!("mesh: {w}")));
    match mesh_error(raw, &lossy, &mesh) {
        Ok(s) => row.max_vertex_error_cm = Some(s.max * k),
        Err(e) => row.warnings.push(format!("mesh not measured: {e}")),
    }
}

/// What the clip detail shows of a clip's skinned mesh: the mesh, the two clips it is skinned
/// by, and the measured vertex error (cm).
pub struct MeshDetail {
    pub mesh: Arc<SkinnedMesh>,
    pub raw: Arc<RawClip>,
    /// The decompressed clip at the raw clip's sample times (None before compression).
    pub lossy: Option<Arc<RawClip>>,
    /// Vertex error over every vertex and sample, in cm (None before compression).
    pub error_cm: Option<MeshErrorStats>,
    /// Name of the bone that moves the worst vertex most.
    pub worst_bone: Option<String>,
    /// Centre of the raw mesh at the first sample, and the largest radius of the raw mesh at
    /// any sample (the body's size).
    pub center: Vec3,
    pub radius: f32,
    /// The largest half size of the raw mesh's box along each axis (clip units) at any sample:
    /// what the view fits to its rectangle.
    pub half_extents: Vec3,
}

impl MeshDetail {
    /// Measures `mesh` on `raw` and `lossy` (`k`: cm per clip unit). Errors say why the mesh
    /// cannot be skinned with this clip.
    pub fn measure(
        mesh: Arc<SkinnedMesh>,
        raw: Arc<RawClip>,
        lossy: Option<Arc<RawClip>>,
        k: f64,
    ) -> Result<Self, MeshError> {
        let error_cm = match &lossy {
            Some(l) => {
                let mut s = mesh_error(&raw, l, &mesh)?;
                s.max *= k;
                s.per_sample_max.iter_mut().for_each(|e| *e *= k);
                Some(s)
            }
            None => None,
        };
        // Framing: the body's size (the largest box half-diagonal of the raw mesh over every
        // 8th sample and the last); the view centres each frame on its own box, so a walk
        // stays large.
        let mut skinner = Skinner::new(mesh.clone(), &raw)?;
        let mut pose = Pose::new(raw.num_bones());
        let (mut center, mut radius, mut half_extents) = (Vec3::ZERO, 1e-3f32, Vec3::ZERO);
        let ns = raw.num_samples;
        for s in (0..ns).step_by(8).chain(ns.checked_sub(1)) {
            skinner.skin_sample(&raw, s, &mut pose)?;
            let (c, half) = mesh_bounds(&skinner.positions);
            if s == 0 {
                center = c;
            }
            radius = radius.max(half.length());
            half_extents = half_extents.max(half);
        }
        let worst_bone = error_cm
            .as_ref()
            .and_then(|s| mesh.main_bone_name(s.worst_vertex))
            .map(str::to_string);
        Ok(Self {
            mesh,
            raw,
            lossy,
            error_cm,
            worst_bone,
            center,
            radius,
            half_extents,
        })
    }
}

/// How many files' parsed meshes [`cached_clip_meshes`] keeps: the file of the clip on show and
/// a few it was switched from (an FBX scene is parsed whole, seconds for a large one).
const MESH_CACHE_FILES: usize = 4;

/// One file's parsed meshes and the file's state when it was parsed.
struct CachedMeshes {
    path: PathBuf,
    modified: SystemTime,
    len: u64,
    meshes: Arc<Vec<ClipMesh>>,
}

/// The last [`MESH_CACHE_FILES`] files parsed, newest first.
static MESH_CACHE: Mutex<VecDeque<CachedMeshes>> = Mutex::new(VecDeque::new());

/// The skinned meshes of `path`, parsed once while the file keeps its modification time and
/// size: the clip detail asks again for every clip of the file it opens, and for the same clip
/// after each compression. A file that cannot be read is not kept (its error comes back each
/// time, as the file may be mended); nor one whose time the file system does not give. The
/// stamp is the named file's: a glTF's external `.bin` rewritten alone is not noticed.
pub fn cached_clip_meshes(path: &Path) -> Result<Arc<Vec<ClipMesh>>, ImportError> {
    let stamp = std::fs::metadata(path)
        .ok()
        .and_then(|m| Some((m.modified().ok()?, m.len())));
    // A panic elsewhere while holding the lock leaves a list that is still whole.
    let lock = || MESH_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((modified, len)) = stamp {
        let mut cache = lock();
        let hit = cache
            .iter()
            .position(|e| e.path == path && e.modified == modified && e.len == len);
        if let Some(e) = hit.and_then(|i| cache.remove(i)) {
            let meshes = e.meshes.clone();
            cache.push_front(e);
            return Ok(meshes);
        }
    }
    let meshes = Arc::new(load_clip_meshes(path)?);
    if let Some((modified, len)) = stamp {
        let mut cache = lock();
        cache.retain(|e| e.path != path);
        cache.push_front(CachedMeshes {
            path: path.to_path_buf(),
            modified,
            len,
            meshes: meshes.clone(),
        });
        cache.truncate(MESH_CACHE_FILES);
    }
    Ok(meshes)
}

/// The meshes of `key`'s file, and the one for `clip`, measured: `None` when the file has no
/// skinned mesh for it, `Some(Err)` when it has one that cannot be read or skinned.
pub fn detail_for(
    path: &Path,
    raw: &RawClip,
    lossy: Option<&RawClip>,
    k: f64,
) -> Option<Result<MeshDetail, MeshViewError>> {
    let meshes = match cached_clip_meshes(path) {
        Ok(m) => m,
        Err(e) => return Some(Err(e.into())),
    };
    let mesh = mesh_for_clip(&meshes, &raw.name)
        .or_else(|| (meshes.len() == 1).then(|| meshes[0].mesh.clone()))?;
    Some(
        MeshDetail::measure(
            mesh,
            Arc::new(raw.clone()),
            lossy.map(|l| Arc::new(l.clone())),
            k,
        )
        .map_err(MeshViewError::from),
    )
}

/// One sample of the mesh, skinned by the raw and the decompressed pose (clip units), with
/// each vertex's distance between the two (cm) and vertex normals of the raw skinning.
pub struct MeshFrame {
    pub sample: usize,
    pub raw: Vec<[f32; 3]>,
    pub lossy: Option<Vec<[f32; 3]>>,
    pub normals: Vec<[f32; 3]>,
    /// Per vertex (cm); empty before compression.
    pub error_cm: Vec<f32>,
    /// Centre of the raw mesh's box (where the view follows the body).
    pub center: Vec3,
}

/// The mesh playback worker: skins the latest requested sample on its own thread. Dropping
/// it ends the thread.
pub struct MeshPlayer {
    requests: Sender<usize>,
    frames: Receiver<Result<Arc<MeshFrame>, MeshError>>,
    /// The sample last asked for (not asked again while it is being skinned).
    pub requested: Option<usize>,
}

impl MeshPlayer {
    /// Starts the worker for `detail`; `done` runs after each frame (the app asks for a repaint);
    /// `k`: cm per clip unit.
    pub fn start(detail: Arc<MeshDetail>, k: f64, done: impl Fn() + Send + 'static) -> Self {
        let (req_tx, req_rx) = mpsc::channel::<usize>();
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("clipforge-mesh".into())
            .spawn(move || {
                let mut w = match Worker::new(&detail) {
                    Ok(w) => w,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        done();
                        return;
                    }
                };
                while let Ok(mut s) = req_rx.recv() {
                    // Only the newest request matters (playback outruns a slow skinning).
                    while let Ok(n) = req_rx.try_recv() {
                        s = n;
                    }
                    let frame = w.frame(&detail, s, k).map(Arc::new);
                    if tx.send(frame).is_err() {
                        return;
                    }
                    done();
                }
            })
            .expect("spawn the mesh thread");
        Self {
            requests: req_tx,
            frames: rx,
            requested: None,
        }
    }

    /// Asks for `sample` unless it is the one last asked for.
    pub fn request(&mut self, sample: usize) {
        if self.requested != Some(sample) {
            self.requested = Some(sample);
            let _ = self.requests.send(sample);
        }
    }

    /// The newest finished frame, if one arrived since the last call.
    pub fn poll(&self) -> Option<Result<Arc<MeshFrame>, MeshViewError>> {
        let mut last = None;
        loop {
            match self.frames.try_recv() {
                Ok(f) => last = Some(f.map_err(MeshViewError::from)),
                Err(TryRecvError::Empty) => return last,
                Err(TryRecvError::Disconnected) => {
                    return last.or(Some(Err(MeshViewError::WorkerStopped)));
                }
            }
        }
    }
}

struct Worker {
    raw: Skinner,
    lossy: Skinner,
    pose: Pose,
}

impl Worker {
    fn new(d: &MeshDetail) -> Result<Self, MeshError> {
        Ok(Self {
            raw: Skinner::new(d.mesh.clone(), &d.raw)?,
            lossy: Skinner::new(d.mesh.clone(), &d.raw)?,
            pose: Pose::new(d.raw.num_bones()),
        })
    }

    fn frame(&mut self, d: &MeshDetail, sample: usize, k: f64) -> Result<MeshFrame, MeshError> {
        let sample = sample.min(d.raw.num_samples.saturating_sub(1));
        self.raw.skin_sample(&d.raw, sample, &mut self.pose)?;
        let lossy = match &d.lossy {
            Some(l) => {
                self.lossy.skin_sample(l, sample, &mut self.pose)?;
                Some(self.lossy.positions.clone())
            }
            None => None,
        };
        let error_cm = lossy
            .as_ref()
            .map(|l| {
                l.iter()
                    .zip(&self.raw.positions)
                    .map(|(a, b)| (vertex_distance(a, b) * k) as f32)
                    .collect()
            })
            .unwrap_or_default();
        let normals = if self.raw.normals.is_empty() {
            face_normals(&self.raw.positions, &d.mesh.triangles)
        } else {
            self.raw.normals.clone()
        };
        Ok(MeshFrame {
            center: mesh_box(&self.raw.positions).0,
            sample,
            raw: self.raw.positions.clone(),
            lossy,
            normals,
            error_cm,
        })
    }
}

/// Centre and half-diagonal of the box around the finite points (origin and 0 without any).
pub fn mesh_box(points: &[[f32; 3]]) -> (Vec3, f32) {
    let (c, half) = mesh_bounds(points);
    (c, half.length())
}

/// Centre and half size of the box around the finite points (origin and zero without any).
pub fn mesh_bounds(points: &[[f32; 3]]) -> (Vec3, Vec3) {
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for p in points
        .iter()
        .map(|p| Vec3::from(*p))
        .filter(|p| p.is_finite())
    {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if lo.x <= hi.x {
        ((lo + hi) / 2.0, (hi - lo) / 2.0)
    } else {
        (Vec3::ZERO, Vec3::ZERO)
    }
}

/// Vertex normals from the triangles (area-weighted), for meshes that store none.
fn face_normals(p: &[[f32; 3]], tris: &[[u32; 3]]) -> Vec<[f32; 3]> {
    let mut n = vec![Vec3::ZERO; p.len()];
    for t in tris {
        let [a, b, c] = t.map(|i| Vec3::from(p[i as usize]));
        let f = (b - a).cross(c - a);
        for &i in t {
            n[i as usize] += f;
        }
    }
    n.iter().map(|v| v.normalize_or_zero().to_array()).collect()
}
