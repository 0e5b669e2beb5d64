//! FBX skinned meshes (`anim::formats::fbx::load_fbx_meshes`) on the real FBX files
//! (`CLIPFORGE_DATA=../shared/data`, `fbx/README.md` says what each covers):
//! - the imported mesh skinned by the imported clip lands where ufbx's own skinning puts it
//!   (`evaluate_scene` + `get_skin_vertex_matrix`, float64, every weighted vertex with at most
//!   four influences) at several samples of every clip: binding by name, inverse bind matrices,
//!   weights, units and axes, geometric transforms;
//! - the largest vertex error `mesh_error` reports equals an independent float64 computation
//!   ([`common::mesh_f64::check_file`], as for glTF), and the batch report carries it;
//! - hostile FBX mesh data is refused with an error naming the file, the mesh and the cluster.

use crate::common;
use crate::common::mesh_f64::{check_file, skin_f64};

use clipforge::anim::Pose;
use clipforge::anim::formats::{fbx, load_clips};
use clipforge::anim::mesh::{Skinner, load_clip_meshes, mesh_for_clip};
use glam::DVec3;
use std::path::{Path, PathBuf};

/// The FBX files of the real data with a skin deformer on their animated skeleton.
const SKINNED: &[&str] = &[
    "magnum-plugins/skinning.fbx",
    "ufbx/maya_game_sausage_6100_ascii_combined.fbx",
    "ufbx/maya_game_sausage_6100_binary_wiggle.fbx",
    "ufbx/maya_game_sausage_7500_binary_combined.fbx",
    "ufbx/motionbuilder_sausage_rrss_7700_binary.fbx",
    "ufbx/max_transformed_skin_6100_ascii.fbx",
    "ufbx/max_transformed_skin_6100_binary.fbx",
    "ufbx/max_transformed_skin_7500_binary.fbx",
    "ufbx/maya_axes_anim_7700_ascii.fbx",
    "ufbx/blender_293_barbarian_7400_binary.fbx",
    "ufbx/maya_kenney_character_7700_binary.fbx",
    "assimp/animation_with_skeleton.fbx",
];

fn skinned_files(data: &Path) -> Vec<PathBuf> {
    SKINNED.iter().map(|f| data.join("fbx").join(f)).collect()
}

/// ufbx's own skinning of every weighted vertex with at most four influences, in the order
/// the importer keeps vertices (meshes in scene order, vertices in mesh order); `None` for a
/// vertex with more influences (the importer keeps its four largest).
fn ufbx_skinned(scene: &ufbx::Scene) -> Vec<Option<DVec3>> {
    let mut out = Vec::new();
    for mesh in scene.meshes.iter() {
        let Some(skin) = mesh.skin_deformers.first() else {
            continue;
        };
        for v in 0..mesh.vertices.len() {
            let Some(sv) = skin.vertices.get(v) else {
                continue;
            };
            let b = sv.weight_begin as usize;
            let ws = skin.weights.get(b..b + sv.num_weights as usize).unwrap();
            let n = ws.iter().filter(|w| w.weight > 0.0).count();
            if n == 0 {
                continue;
            }
            if n > 4 {
                out.push(None);
                continue;
            }
            let m = ufbx::get_skin_vertex_matrix(skin, v, &ufbx::Matrix::default());
            let p = ufbx::transform_position(&m, mesh.vertices[v]);
            out.push(Some(DVec3::new(p.x, p.y, p.z)));
        }
    }
    out
}

#[test]
fn fbx_meshes_skin_as_ufbx_skins_them() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let mut compared = 0usize;
    let mut worst = 0.0f64;
    for file in skinned_files(&data) {
        let bytes = std::fs::read(&file).unwrap();
        let clips = load_clips(&file).unwrap();
        let meshes = load_clip_meshes(&file).unwrap();
        assert_eq!(
            meshes.len(),
            clips.len(),
            "{}: a mesh per clip",
            file.display()
        );
        let mut opts = fbx::ufbx_load_options(bytes.len());
        opts.ignore_geometry = false;
        let scene = ufbx::load_memory(&bytes, opts).unwrap();
        for clip in &clips {
            let mesh = mesh_for_clip(&meshes, &clip.name).unwrap();
            assert!(!mesh.triangles.is_empty(), "{}: triangles", file.display());
            // The runtime's float32 jobs take it too.
            let mut skinner = Skinner::new(mesh.clone(), clip).unwrap();
            skinner
                .skin_sample(clip, 0, &mut Pose::new(clip.num_bones()))
                .unwrap();
            let stack = scene
                .anim_stacks
                .iter()
                .find(|s| *s.element.name == *clip.name)
                .unwrap();
            let n = clip.num_samples;
            for k in [0, n / 2, n - 1] {
                let time = if k + 1 == n && n > 1 {
                    stack.time_end
                } else {
                    stack.time_begin + k as f64 / clip.sample_rate as f64
                };
                let evaluated =
                    ufbx::evaluate_scene(&scene, &stack.anim, time, Default::default()).unwrap();
                let theirs = ufbx_skinned(&evaluated);
                let ours = skin_f64(&mesh, clip, k);
                assert_eq!(ours.len(), theirs.len(), "{}: vertices", file.display());
                for (v, (o, t)) in ours.iter().zip(&theirs).enumerate() {
                    let Some(t) = t else { continue };
                    let d = o.distance(*t);
                    // f32 local transforms and inverse bind matrices, down the chain.
                    let tol = 1e-3 + 1e-5 * t.length();
                    assert!(
                        d <= tol,
                        "{} '{}' sample {k} vertex {v}: ours {o} vs ufbx {t} ({d} cm)",
                        file.display(),
                        clip.name
                    );
                    worst = worst.max(d);
                    compared += 1;
                }
            }
        }
    }
    eprintln!("{compared} skinned vertices compared; largest difference to ufbx {worst:.2e} cm");
    assert!(compared > 1000, "{compared}");
}

#[test]
fn largest_vertex_error_equals_a_float64_computation_on_fbx() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let measured: usize = skinned_files(&data).iter().map(|f| check_file(f)).sum();
    assert!(measured >= SKINNED.len(), "{measured} clips measured");
}

#[test]
fn the_report_gives_max_vertex_error_for_fbx_clips() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    // The Kenney character has a skin; pab's walk has none: no mesh. FBX clips are in
    // centimetres already.
    let (_, errors) = common::mesh_f64::batch_vertex_errors(
        &data.join("fbx/ufbx/maya_kenney_character_7700_binary.fbx"),
        &data.join("fbx/ozz-animation/pab/walk.fbx"),
    );
    assert!(errors.iter().all(|&e| e > 0.0), "{errors:?}");
    assert_eq!(errors.len(), 1);
}

/// The magnum skinning file (FBX 7.7 ASCII) with its first `from` replaced by `to`.
fn edited_skinning(data: &Path, from: &str, to: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(data.join("fbx/magnum-plugins/skinning.fbx")).unwrap();
    assert!(text.contains(from), "{from}");
    text.replacen(from, to, 1).into_bytes()
}

#[test]
fn hostile_fbx_mesh_data_is_a_clear_error() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        (
            "negative-weight",
            edited_skinning(&data, "a: 0.986909676769711,", "a: -2,"),
            vec!["mesh '", "vertex 0", "cluster", "negative or not finite"],
        ),
        (
            "nan-bind",
            edited_skinning(&data, "a: 6.12323399573677e-17,-1,", "a: nan,-1,"),
            vec!["mesh '", "inverse bind matrix is not finite"],
        ),
    ];
    for (name, bytes, expect) in cases {
        let path = dir.path().join(format!("{name}.fbx"));
        std::fs::write(&path, bytes).unwrap();
        let e = load_clip_meshes(&path).expect_err(name).to_string();
        assert!(e.contains(&path.display().to_string()), "{name}: {e}");
        for x in expect {
            assert!(e.contains(x), "{name}: '{x}' not in: {e}");
        }
    }
    // Truncated binary files: an error naming the file at every cut, never a panic.
    let kenney =
        std::fs::read(data.join("fbx/ufbx/maya_kenney_character_7700_binary.fbx")).unwrap();
    let path = dir.path().join("cut.fbx");
    for cut in [0, 20, 27, 1000, kenney.len() / 2, kenney.len() - 200] {
        std::fs::write(&path, &kenney[..cut]).unwrap();
        let e = load_clip_meshes(&path).expect_err("cut").to_string();
        assert!(e.contains("cut.fbx"), "cut at {cut}: {e}");
    }
    // Not a regular file.
    let not_file = dir.path().join("folder.fbx");
    std::fs::create_dir(&not_file).unwrap();
    assert!(load_clip_meshes(&not_file).is_err());
}

/// The generated two-bone skin (`fuzz/seeds/fbx/two-bone-skin.fbx`: two quads, the upper row
/// of vertices on bone `tip`, the middle row shared half and half, `tip` turning 45° about Z
/// over one second), checked against positions worked out by hand.
#[test]
fn a_generated_two_bone_skin_bends_as_worked_out_by_hand() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/fbx/two-bone-skin.fbx");
    let clips = load_clips(&path).unwrap();
    let meshes = load_clip_meshes(&path).unwrap();
    assert_eq!(clips.len(), 1);
    assert_eq!(meshes.len(), 1);
    let (clip, m) = (&clips[0], &meshes[0].mesh);
    assert_eq!((meshes[0].clip.as_str(), m.name.as_str()), ("bend", "quad"));
    assert_eq!(m.joint_names, ["root", "tip"]);
    assert_eq!(m.num_vertices(), 6);
    assert_eq!(m.triangles.len(), 4);
    // Middle row: half and half.
    assert_eq!(&m.weights[2 * 4..2 * 4 + 2], &[0.5, 0.5]);
    let last = clip.num_samples - 1;
    let p = skin_f64(m, clip, last);
    let h = std::f64::consts::FRAC_1_SQRT_2;
    // Bone `tip` sits at (0, 1, 0) turned 45° about Z: (0, 2, 0) is 1 above it.
    let expected = [
        DVec3::new(0.0, 0.0, 0.0),
        DVec3::new(1.0, 0.0, 0.0),
        DVec3::new(0.0, 1.0, 0.0),
        (DVec3::new(1.0, 1.0, 0.0) + DVec3::new(h, 1.0 + h, 0.0)) / 2.0,
        DVec3::new(-h, 1.0 + h, 0.0),
        DVec3::new(1.0 * h - h, 1.0 + h + h, 0.0),
    ];
    for (v, (got, want)) in p.iter().zip(&expected).enumerate() {
        assert!(got.distance(*want) < 1e-5, "vertex {v}: {got} vs {want}");
    }
    let p0 = skin_f64(m, clip, 0);
    for (v, q) in p0.iter().enumerate() {
        let rest = DVec3::from(m.positions[v].map(f64::from));
        assert!(q.distance(rest) < 1e-6, "vertex {v} at rest: {q} vs {rest}");
    }
}
