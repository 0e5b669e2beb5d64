//! Float64 skinning written independently of `anim::mesh` (local → object, palette and
//! linear-blend skinning with glam's float64 types), and the check that the largest vertex
//! error `mesh_error` reports equals it on every clip of a file with a mesh (the glTF and FBX
//! mesh tests).

// Poses are parallel arrays indexed by bone.
#![allow(clippy::needless_range_loop)]

use clipforge::anim::formats::load_clips;
use clipforge::anim::mesh::{INFLUENCES, SkinnedMesh, load_clip_meshes, mesh_error, mesh_for_clip};
use clipforge::anim::{ClipReader, CompressionSettings, NO_PARENT, RawClip, compress};
use clipforge::pipeline::clip_detail::resample;
use glam::{DMat4, DQuat, DVec3, DVec4};
use std::path::Path;

/// Object-space transforms of sample `s` in float64: rotation, translation, scale composed as
/// ACL's qvv (what the runtime's local → object job computes in float32).
pub fn object_f64(clip: &RawClip, s: usize) -> Vec<DMat4> {
    let nb = clip.num_bones();
    let mut r = vec![DQuat::IDENTITY; nb];
    let mut t = vec![DVec3::ZERO; nb];
    let mut sc = vec![DVec3::ONE; nb];
    for b in 0..nb {
        let i = clip.index(b, s);
        let q = clip.rotations[i].as_dquat().normalize();
        let lt = clip.translations[i].as_dvec3();
        let ls = clip.scales[i].as_dvec3();
        let p = clip.skeleton.parents[b];
        if p == NO_PARENT {
            (r[b], t[b], sc[b]) = (q, lt, ls);
        } else {
            let p = p as usize;
            r[b] = (r[p] * q).normalize();
            t[b] = r[p] * (lt * sc[p]) + t[p];
            sc[b] = ls * sc[p];
        }
    }
    (0..nb)
        .map(|b| DMat4::from_scale_rotation_translation(sc[b], r[b], t[b]))
        .collect()
}

/// Every vertex of `mesh` skinned by sample `s` of `clip`, in float64 (weights as stored).
pub fn skin_f64(mesh: &SkinnedMesh, clip: &RawClip, s: usize) -> Vec<DVec3> {
    let object = object_f64(clip, s);
    let palette: Vec<DMat4> = mesh
        .joint_names
        .iter()
        .zip(&mesh.inverse_bind)
        .map(|(n, ib)| {
            let b = clip.skeleton.names.iter().position(|x| x == n).unwrap();
            object[b] * ib.as_dmat4()
        })
        .collect();
    (0..mesh.num_vertices())
        .map(|v| {
            let p = DVec4::from((DVec3::from(mesh.positions[v].map(f64::from)), 1.0));
            let mut acc = DVec3::ZERO;
            for k in 0..INFLUENCES {
                let j = mesh.joints[v * INFLUENCES + k] as usize;
                let w = mesh.weights[v * INFLUENCES + k] as f64;
                acc += w * (palette[j] * p).truncate();
            }
            acc
        })
        .collect()
}

/// Compresses every clip of `file` that has a mesh (every third of a file with many) and
/// checks its largest vertex error against float64; how many clips were checked.
pub fn check_file(file: &Path) -> usize {
    let clips = load_clips(file).unwrap();
    let meshes = load_clip_meshes(file).unwrap();
    assert!(!meshes.is_empty(), "{}: no skinned mesh", file.display());
    let mut measured = 0;
    // The robot's 14 clips take long in float64: a third of them.
    for raw in clips.iter().step_by(if clips.len() > 6 { 3 } else { 1 }) {
        let Some(mesh) = mesh_for_clip(&meshes, &raw.name) else {
            continue;
        };
        let c = compress(raw, &CompressionSettings::default()).unwrap();
        let reader = ClipReader::new(&c.bytes).unwrap();
        let lossy = resample(raw, &reader).unwrap();
        let stats = mesh_error(raw, &lossy, &mesh).unwrap();

        let (mut max, mut at) = (0.0f64, (0, 0));
        for s in 0..raw.num_samples {
            let a = skin_f64(&mesh, raw, s);
            let b = skin_f64(&mesh, &lossy, s);
            for (v, (p, q)) in a.iter().zip(&b).enumerate() {
                let d = p.distance(*q);
                if d > max {
                    (max, at) = (d, (v, s));
                }
            }
        }
        // Both in float64: equal up to the order of the operations.
        let tol = 1e-9 + 1e-9 * max;
        println!(
            "{} '{}': {} vertices × {} samples: max vertex error {:.6} cm (float64 {:.6} cm at vertex {} sample {}; ours at vertex {} sample {})",
            file.file_name().unwrap().to_string_lossy(),
            raw.name,
            mesh.num_vertices(),
            raw.num_samples,
            stats.max,
            max,
            at.0,
            at.1,
            stats.worst_vertex,
            stats.worst_sample
        );
        assert!(
            (stats.max - max).abs() <= tol,
            "{} '{}': {} vs float64 {}",
            file.display(),
            raw.name,
            stats.max,
            max
        );
        assert!(stats.max > 0.0, "a lossy clip moves some vertex");
        // The worst vertex named is one whose float64 error is the maximum (up to rounding).
        let a = skin_f64(&mesh, raw, stats.worst_sample);
        let b = skin_f64(&mesh, &lossy, stats.worst_sample);
        let d = a[stats.worst_vertex].distance(b[stats.worst_vertex]);
        assert!(
            (d - max).abs() <= tol,
            "worst vertex's own error {d} vs {max}"
        );
        measured += 1;
    }
    measured
}

/// One batch over two real files, `skinned` (clips with a mesh) and `skinless` (clips without),
/// copied into a fresh folder: every row compressed; each row of `skinned` reports the largest
/// vertex error `mesh_error` gives for its clip against the written `.cfa`, every other row none.
/// Returns the report and the errors of the rows with a mesh.
pub fn batch_vertex_errors(
    skinned: &Path,
    skinless: &Path,
) -> (clipforge::pipeline::report::BatchReport, Vec<f64>) {
    use clipforge::pipeline::{BatchOptions, CancelToken, Progress, run_batch, scan};
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let name = skinned.file_name().unwrap().to_str().unwrap();
    let file = dir.path().join(name);
    std::fs::copy(skinned, &file).unwrap();
    std::fs::copy(skinless, dir.path().join(skinless.file_name().unwrap())).unwrap();
    let options = BatchOptions {
        settings: Default::default(),
        output_root: out.path().to_path_buf(),
        jobs: 1,
        use_skip_cache: false,
    };
    let report = run_batch(
        &scan(dir.path()),
        &options,
        &Progress::default(),
        &CancelToken::default(),
    );
    let clips = load_clips(&file).unwrap();
    let meshes = load_clip_meshes(&file).unwrap();
    let mut errors = Vec::new();
    for row in &report.clips {
        assert!(row.error.is_none(), "{:?}", row.error);
        if row.input.ends_with(name) {
            let raw = clips.iter().find(|c| c.name == row.clip).unwrap();
            let mesh = mesh_for_clip(&meshes, &raw.name).unwrap();
            let bytes = std::fs::read(row.output.as_ref().unwrap()).unwrap();
            let lossy = resample(raw, &ClipReader::new(&bytes).unwrap()).unwrap();
            let expected = mesh_error(raw, &lossy, &mesh).unwrap().max;
            assert_eq!(row.max_vertex_error_cm, Some(expected), "{}", row.clip);
            errors.push(expected);
        } else {
            assert_eq!(row.max_vertex_error_cm, None, "{}", row.clip);
        }
    }
    (report, errors)
}
