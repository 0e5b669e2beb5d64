//! The clip detail's mesh view, driven headless with egui_kittest: a skinned glTF opens with
//! the mesh (skinned on the mesh worker), the legend with the threshold and the worst vertex
//! named; play/scrub is shared with the skeleton view; the report row carries
//! `max_vertex_error_cm`. On a generated 3,000-vertex tube, and on the Fox when
//! `CLIPFORGE_DATA` is set.
#![cfg(feature = "gui")]

use crate::common;

use crate::common::gui::{harness, wait_idle, wait_until};
use clipforge::gui::{AppState, Persisted};
use eframe::egui;
use egui_kittest::{Harness, kittest::Queryable};
use std::path::Path;

fn open(input: &Path, out: &Path, row: &str) -> Harness<'static, AppState> {
    open_in(input, out, row, None)
}

/// [`open`] in a window of `size` (None: the shared harness's).
fn open_in(
    input: &Path,
    out: &Path,
    row: &str,
    size: Option<egui::Vec2>,
) -> Harness<'static, AppState> {
    let state = AppState::new(Persisted {
        input_dir: String::new(),
        output_dir: out.display().to_string(),
        ..Default::default()
    });
    let mut h = match size {
        None => harness(state),
        Some(size) => Harness::builder()
            .with_size(size)
            .with_max_steps(200)
            .build_ui_state(|ui, s: &mut AppState| s.ui(ui), state),
    };
    h.run();
    let field = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Input folder:");
    field.focus();
    field.type_text(&input.display().to_string());
    h.run();
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    // A row of a file whose clip is named otherwise reads "file · clip".
    h.get_by_value(row).click();
    wait_idle(&mut h);
    // The first skinned frame comes from the mesh worker.
    wait_until(&mut h, 3000, "the mesh frame", |s| {
        s.detail.mesh.frame.is_some()
    });
    h
}

/// The mesh, the legend and the worst vertex are on screen, and agree with the report.
fn check_mesh_view(h: &mut Harness<'_, AppState>, vertices: usize) {
    let s = h.state();
    let d = s.detail.data.clone().expect("detail loaded");
    let mesh = d
        .mesh
        .as_ref()
        .expect("the clip has a mesh")
        .as_ref()
        .expect("the mesh was read")
        .clone();
    assert_eq!(mesh.mesh.num_vertices(), vertices);
    let stats = mesh.error_cm.as_ref().expect("measured against the .cfa");
    assert!(stats.max > 0.0 && stats.max.is_finite());
    // Drawn: the decompressed mesh (overlay mode), every vertex, inside the window.
    assert_eq!(s.detail.mesh.vertices_drawn, vertices);
    let rect = s.detail.mesh.view_rect;
    assert!(rect.width() > 100.0 && rect.height() > 100.0, "{rect:?}");
    // The report's figure is the one the view names (same metric, same poses).
    let row = s
        .library
        .rows
        .iter()
        .find(|r| r.key == *s.detail.selected.as_ref().unwrap())
        .unwrap();
    let reported = row.good_report().unwrap().max_vertex_error_cm;
    let reported = reported.expect("the report has max_vertex_error_cm");
    assert!(
        (reported - stats.max).abs() <= 1e-9 * stats.max.max(1.0),
        "report {reported} vs view {}",
        stats.max
    );
    h.get_by_label("Mesh");
    h.get_by_label("vertex error (cm):");
    let threshold = row
        .good_report()
        .unwrap()
        .settings
        .as_ref()
        .unwrap()
        .error_threshold_cm;
    h.get_by_label_contains(&format!("threshold {threshold} cm (mark)"));
    h.get_by_label_contains(&format!(
        "Worst vertex: #{} ({}) · {:.4} cm",
        stats.worst_vertex,
        mesh.worst_bone.as_deref().unwrap(),
        stats.max
    ));

    // "go to" scrubs the shared clock to the worst vertex's sample; the skeleton view shows it.
    h.get_by_label("go to").click();
    h.run();
    assert_eq!(h.state().detail.viewer.sample as usize, stats.worst_sample);
    wait_until(h, 3000, "the worst sample's frame", |s| {
        s.detail
            .mesh
            .frame
            .as_ref()
            .is_some_and(|f| f.sample == stats.worst_sample)
    });
    let f = h.state().detail.mesh.frame.clone().unwrap();
    // The view skins in float32 (as a game): it rounds by ~1e-7 of the mesh's size.
    let shown = f.error_cm[stats.worst_vertex] as f64;
    assert!(
        (shown - stats.max).abs() <= 1e-4 + 5e-6 * mesh.radius as f64,
        "{shown} vs {} (mesh radius {})",
        stats.max,
        mesh.radius
    );
    h.get_by_label("side by side").click();
    h.run();
    assert_eq!(h.state().detail.mesh.vertices_drawn, 2 * vertices);
    h.get_by_label("Skeleton").click();
    h.run();
    assert_eq!(
        h.state().detail.viewer.sample as usize,
        stats.worst_sample,
        "one clock for both views"
    );
    h.get_by_label_contains("Play");
}

#[test]
fn a_skinned_gltf_opens_with_the_mesh_the_legend_and_the_worst_vertex() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    common::skinned::write_skinned_gltf(input.path(), "tube", 120, 8, 61);
    let mut h = open(input.path(), out.path(), "tube · bend");
    check_mesh_view(&mut h, 3000);
    // Playing advances the shared clock and the worker follows it.
    h.get_by_label("Mesh").click();
    h.run();
    h.get_by_label("Play").click();
    for _ in 0..20 {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(16));
    }
    assert!(h.state().detail.viewer.playing);
}

#[test]
fn the_fox_opens_with_its_mesh() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (input, out) =
        common::app_folder::folders_with_real_file(&data, "gltf/fox-via-bevy/Fox.glb");
    let mut h = open(input.path(), out.path(), "Fox · Walk");
    check_mesh_view(&mut h, 1728);
}

/// At 1280×800 (the detail panel at its least) the view keeps a usable height and the mesh
/// fills it: its drawn box spans most of the view's height or width (at ~90 px high the mesh
/// was a thumbnail), and stays inside it.
fn check_framing(h: &Harness<'_, AppState>) -> egui::Rect {
    let m = &h.state().detail.mesh;
    let (view, drawn) = (m.view_rect, m.drawn_bounds);
    // The view's least height (the mesh view's MIN_VIEW_HEIGHT): ~90 px before.
    assert!(view.height() >= 149.0, "view {view:?}");
    assert!(
        drawn.height() >= 0.6 * view.height() || drawn.width() >= 0.6 * view.width(),
        "mesh drawn in {drawn:?}, view {view:?}"
    );
    assert!(
        view.expand(1.0).contains_rect(drawn),
        "{drawn:?} outside {view:?}"
    );
    drawn
}

#[test]
fn the_mesh_fills_the_view_at_1280_by_800() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    common::skinned::write_skinned_gltf(input.path(), "tube", 120, 8, 61);
    let h = open_in(
        input.path(),
        out.path(),
        "tube · bend",
        Some(egui::vec2(1280.0, 800.0)),
    );
    check_framing(&h);
}

/// CesiumMan's skeleton hangs under a Z-up → Y-up node (not part of the clip): the view turns
/// the mesh by it, so the man stands (his drawn box taller than wide) instead of lying on his
/// side.
#[test]
fn cesium_man_stands_in_the_mesh_view() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (input, out) =
        common::app_folder::folders_with_real_file(&data, "gltf/khronos-via-ozz/cesium_man.gltf");
    let h = open_in(
        input.path(),
        out.path(),
        "cesium_man · anim0",
        Some(egui::vec2(1280.0, 800.0)),
    );
    let drawn = check_framing(&h);
    assert!(
        drawn.height() > 1.5 * drawn.width(),
        "CesiumMan drawn {} wide, {} high",
        drawn.width(),
        drawn.height()
    );
}

/// The skeleton view turns CesiumMan's skeleton by the same scene rotation as the mesh view
/// (it lay on its side while the mesh stood): his drawn joints are taller than wide.
#[test]
fn cesium_man_stands_in_the_skeleton_view() {
    let Some(data) = real_data_or_skip!() else {
        return;
    };
    let (input, out) =
        common::app_folder::folders_with_real_file(&data, "gltf/khronos-via-ozz/cesium_man.gltf");
    let mut h = open_in(
        input.path(),
        out.path(),
        "cesium_man · anim0",
        Some(egui::vec2(1280.0, 800.0)),
    );
    h.get_by_label("Skeleton").click();
    h.run();
    let v = &h.state().detail.viewer;
    let drawn = v.drawn_bounds;
    assert!(
        drawn.height() > 1.5 * drawn.width(),
        "CesiumMan's skeleton drawn {} wide, {} high",
        drawn.width(),
        drawn.height()
    );
    assert_eq!(
        v.joints_outside_view, 0,
        "framed: {drawn:?} in {:?}",
        v.view_rect
    );
}

/// Opening a clip's detail parses its file's meshes once while the file is unchanged (the app
/// asks again for each clip of the file and after each compression), and again once it changed.
#[test]
fn a_files_meshes_are_parsed_once_until_it_changes() {
    use clipforge_pipeline::mesh::detail_for;
    let dir = tempfile::tempdir().unwrap();
    common::skinned::write_skinned_gltf(dir.path(), "tube", 10, 4, 9);
    let path = dir.path().join("tube.gltf");
    let detail = || {
        let clips = clipforge_anim::formats::load_clips(&path).unwrap();
        let d = detail_for(&path, &clips[0], None, 1.0).expect("a mesh");
        d.expect("read and measured").mesh
    };
    let (a, b) = (detail(), detail());
    assert!(std::sync::Arc::ptr_eq(&a, &b), "parsed twice");
    // Rewritten with another mesh (other size): parsed again, and the new mesh is the one shown.
    common::skinned::write_skinned_gltf(dir.path(), "tube", 12, 4, 9);
    let c = detail();
    assert!(
        !std::sync::Arc::ptr_eq(&a, &c),
        "a changed file was not parsed again"
    );
    assert_eq!(c.num_vertices(), 12 * common::skinned::RING);
    assert_eq!(a.num_vertices(), 10 * common::skinned::RING);
}
