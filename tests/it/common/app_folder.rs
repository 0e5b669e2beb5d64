//! The app's usual set-ups over a folder of clips, shared by the GUI tests (review finding D2:
//! each test file had written them again): an app state on an input and an output folder,
//! typing the input folder, compressing it, opening a clip's detail, finding a row.

use super::gui::{harness, wait_idle, write_clips};
use clipforge::anim::RawClip;
use clipforge::anim::formats::write_acl_clip;
use clipforge::gui::{AppState, Persisted, RowKey};
use eframe::egui;
use egui_kittest::{Harness, kittest::Queryable};
use std::path::Path;

/// A fresh app state with `input` (may be empty: none typed yet) and `output` as its folders.
pub fn state_on(input: &Path, output: &Path) -> AppState {
    AppState::new(Persisted {
        input_dir: input.display().to_string(),
        output_dir: output.display().to_string(),
        ..Default::default()
    })
}

/// A fresh app state with only its output folder set (the input is typed by the test).
pub fn state_with_output(out: &Path) -> AppState {
    state_on(Path::new(""), out)
}

/// The app ([`harness`]) on `input` and `output`, not yet drawn.
pub fn harness_on(input: &Path, output: &Path) -> Harness<'static, AppState> {
    harness(state_on(input, output))
}

/// Types `dir` into the input folder field, as a user would.
pub fn type_input_folder(h: &mut Harness<'_, AppState>, dir: &Path) {
    let field = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Input folder:");
    field.focus();
    field.type_text(&dir.display().to_string());
    h.run();
}

/// A fresh input folder holding `n` generated clips ([`write_clips`]) and an empty output
/// folder.
pub fn clip_folders(n: usize, samples: usize) -> (tempfile::TempDir, tempfile::TempDir) {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    write_clips(input.path(), n, samples);
    (input, out)
}

/// The app on the output folder `out` with `input` typed into its folder field, as a user
/// would (no Enter: not scanned yet).
pub fn typed(input: &Path, out: &Path) -> Harness<'static, AppState> {
    let mut h = harness(state_with_output(out));
    h.run();
    type_input_folder(&mut h, input);
    h
}

/// [`typed`], then **Scan** pressed and waited for.
pub fn scanned(input: &Path, out: &Path) -> Harness<'static, AppState> {
    let mut h = typed(input, out);
    h.get_by_label("Scan").click();
    wait_idle(&mut h);
    h
}

/// The app with `input` typed into its folder field and every clip compressed into `out` by
/// "Compress all" (waited for).
pub fn compressed(input: &Path, out: &Path) -> Harness<'static, AppState> {
    let mut h = typed(input, out);
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    h
}

/// Opens `clip` in the detail view (a click on its row) and waits until it is loaded.
pub fn open_clip_detail(h: &mut Harness<'_, AppState>, clip: &str) {
    h.get_by_label(clip).click();
    wait_idle(h);
    assert!(h.state().detail.data.is_some(), "detail of {clip} loaded");
}

/// Writes `clip` as `dir/NAME.acl.sjson` (its own name).
pub fn write_clip(dir: &Path, clip: &RawClip) {
    std::fs::write(
        dir.join(format!("{}.acl.sjson", clip.name)),
        write_acl_clip(clip),
    )
    .unwrap();
}

/// The key of the row labelled `label`.
pub fn row_key(h: &Harness<'_, AppState>, label: &str) -> RowKey {
    h.state()
        .library
        .rows
        .iter()
        .find(|r| r.label == label)
        .unwrap_or_else(|| panic!("no row {label}"))
        .key
        .clone()
}

/// A fresh input folder holding a copy of the real file `data/rel` (under its own name) and an
/// empty output folder.
pub fn folders_with_real_file(data: &Path, rel: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let src = data.join(rel);
    std::fs::copy(&src, input.path().join(src.file_name().unwrap())).unwrap();
    (input, out)
}
