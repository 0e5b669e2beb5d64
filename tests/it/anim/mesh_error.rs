//! The mesh vertex error (`anim::mesh::mesh_error`, the report's `max_vertex_error_cm`) on every
//! skinned glTF of the real data (`CLIPFORGE_DATA=../shared/data`): the largest vertex error
//! equals an independent float64 computation on the same mesh and poses (local → object,
//! palette and linear-blend skinning written here with glam's float64 types), the batch report
//! carries it for clips with a mesh only, and broken mesh data gives a clear error, never a
//! panic.

use crate::common;
use crate::common::mesh_f64::check_file;

use clipforge::anim::mesh::load_clip_meshes;
use std::path::{Path, PathBuf};

/// The skinned glTF files of the real data.
fn skinned_files(data: &Path) -> Vec<PathBuf> {
    let g = data.join("gltf");
    [
        "fox-via-bevy/Fox.glb",
        "fox-via-bevy/SimpleSkin.gltf",
        "khronos-via-ozz/cesium_man.gltf",
        "khronos-via-ozz/rigged_simple.gltf",
        "raylib-cc0/greenman.glb",
        "raylib-cc0/robot.glb",
    ]
    .iter()
    .map(|f| g.join(f))
    .collect()
}

#[test]
fn largest_vertex_error_equals_a_float64_computation_on_a_generated_mesh() {
    let dir = tempfile::tempdir().unwrap();
    common::skinned::write_skinned_gltf(dir.path(), "tube", 120, 8, 61);
    assert_eq!(check_file(&dir.path().join("tube.gltf")), 1);
    let meshes = load_clip_meshes(&dir.path().join("tube.gltf")).unwrap();
    let m = &meshes[0].mesh;
    assert_eq!((meshes[0].clip.as_str(), m.num_vertices()), ("bend", 3000));
    assert_eq!(m.triangles.len(), 119 * common::skinned::RING * 2);
}

#[test]
fn largest_vertex_error_equals_a_float64_computation() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let measured: usize = skinned_files(&data).iter().map(|f| check_file(f)).sum();
    assert!(measured >= 8, "{measured} clips measured");
}

#[test]
fn the_report_gives_max_vertex_error_for_clips_with_a_mesh_only() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    // box_animated: node animation, no skin: no mesh.
    let (report, errors) = common::mesh_f64::batch_vertex_errors(
        &data.join("gltf/fox-via-bevy/Fox.glb"),
        &data.join("gltf/khronos-via-ozz/box_animated.gltf"),
    );
    assert_eq!(errors.len(), 3, "Survey, Walk and Run");
    let json = report.to_json();
    assert!(json.contains("\"max_vertex_error_cm\""));
    let csv = report.to_csv();
    // A column of its own (the report's later columns, e.g. `status`, come after it).
    let header = csv.lines().next().unwrap();
    assert!(
        header.split(',').any(|c| c == "max_vertex_error_cm"),
        "{header}"
    );
}

/// A broken copy of SimpleSkin (embedded buffers) with `edit` applied to its JSON.
fn broken_simple_skin(data: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let text = std::fs::read(data.join("gltf/fox-via-bevy/SimpleSkin.gltf")).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&text).unwrap();
    edit(&mut v);
    serde_json::to_vec(&v).unwrap()
}

#[test]
fn broken_mesh_data_is_a_clear_error() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "joints",
            // A skin of the animated node alone: the vertices' joint 1 is past its one joint.
            broken_simple_skin(&data, |v| v["skins"][0]["joints"] = serde_json::json!([2])),
            "outside the 1 joints",
        ),
        (
            "count",
            broken_simple_skin(&data, |v| {
                v["accessors"][1]["count"] = serde_json::json!(1_000_000_000u64)
            }),
            "do not fit in buffer view",
        ),
        (
            "type",
            broken_simple_skin(&data, |v| {
                v["accessors"][1]["type"] = serde_json::json!("VEC2")
            }),
            "POSITION",
        ),
        (
            "ibm",
            broken_simple_skin(&data, |v| v["accessors"][4]["count"] = serde_json::json!(1)),
            "inverse bind matrices",
        ),
    ];
    for (name, bytes, expect) in cases {
        let path = dir.path().join(format!("{name}.gltf"));
        std::fs::write(&path, bytes).unwrap();
        let e = load_clip_meshes(&path).expect_err(name).to_string();
        assert!(
            e.contains(&path.display().to_string()) && e.contains(expect),
            "{name}: {e}"
        );
    }
    // Truncated GLB files: an error at every cut, never a panic.
    let fox = std::fs::read(data.join("gltf/fox-via-bevy/Fox.glb")).unwrap();
    for cut in [0, 12, 20, 100, fox.len() / 2, fox.len() - 1] {
        let path = dir.path().join("cut.glb");
        std::fs::write(&path, &fox[..cut]).unwrap();
        assert!(load_clip_meshes(&path).is_err(), "cut at {cut}");
    }
    // Not a regular file.
    let not_file = dir.path().join("folder.glb");
    std::fs::create_dir(&not_file).unwrap();
    assert!(load_clip_meshes(&not_file).is_err());
}
