//! The app's per-bone table, driven headless with egui_kittest: type a finger's threshold in a
//! clip's detail, save it into the folder's `clipforge.toml`, compress again, and the clip is
//! held to it (the report's per-bone threshold, the error within it, the plot's own limits);
//! reopening the clip shows the saved value.
#![cfg(feature = "gui")]

use crate::common;

use crate::common::app_folder::{harness_on, state_with_output, type_input_folder};
use crate::common::gui::{harness, wait_idle};
use clipforge::anim::formats::write_acl_clip;
use clipforge::anim::generate::{GenerateOptions, generate};
use clipforge::gui::{AppState, RowStatus};
use clipforge::pipeline::folder_settings::{FILE_NAME, FolderSettings};
use eframe::egui;
use egui_kittest::kittest::Queryable;

/// In the open clip's detail: opens the per-bone table, chooses "this folder", types 0.001 cm
/// for `l_finger` and saves.
fn save_finger_threshold(h: &mut egui_kittest::Harness<'_, AppState>) {
    h.get_by_label("Per-bone thresholds").click();
    h.run();
    // Saving for the whole folder is a choice (issue 26: "this clip" is the default).
    h.get_by_label("this folder").click();
    h.run();
    let f = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "l_finger");
    f.focus();
    f.type_text("0.001");
    h.run();
    h.get_by_label("Save to clipforge.toml").click();
    h.run();
}

/// The generated clip the tests compress (`clip_00`, 50 samples).
fn clip_00() -> clipforge::anim::RawClip {
    generate(&GenerateOptions {
        name: "clip_00".into(),
        num_samples: 50,
        seed: 3,
        ..Default::default()
    })
}

/// Writes `clip` as `clip_00.acl.sjson` into `input` beside a `clipforge.toml` of the user's own
/// (`error_threshold = 0.02`), compresses the folder in the app and opens the clip's detail.
fn compress_and_open(
    clip: &clipforge::anim::RawClip,
    input: &std::path::Path,
    out: &std::path::Path,
) -> egui_kittest::Harness<'static, AppState> {
    std::fs::write(input.join("clip_00.acl.sjson"), write_acl_clip(clip)).unwrap();
    std::fs::write(input.join(FILE_NAME), "error_threshold = 0.02\n").unwrap();
    let mut h = harness(state_with_output(out));
    h.run();
    type_input_folder(&mut h, input);
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    h.get_by_label("clip_00").click();
    wait_idle(&mut h);
    h
}

#[test]
fn a_bone_threshold_typed_in_the_detail_is_saved_and_applied() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let clip = clip_00();
    // A file of the user's own: kept as it is.
    let mut h = compress_and_open(&clip, input.path(), out.path());

    save_finger_threshold(&mut h);
    let file = input.path().join(FILE_NAME);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("error_threshold = 0.02\n"), "{text}");
    let settings = FolderSettings::parse(&file, &text).unwrap();
    assert_eq!(settings.bones.len(), 1, "{text}");
    assert_eq!(settings.bones[0].pattern, "l_finger");
    assert_eq!(settings.bones[0].error_threshold, Some(0.001));

    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    let s = h.state();
    let key = s.detail.selected.clone().expect("still selected");
    let report = s
        .library
        .row(&key)
        .and_then(|r| r.report())
        .expect("compressed again");
    assert!(report.error.is_none(), "{:?}", report.error);
    let finger = clip
        .skeleton
        .names
        .iter()
        .position(|n| n == "l_finger")
        .unwrap();
    let nb = clip.num_bones();
    assert_eq!(report.per_bone_threshold_cm.len(), nb);
    for b in 0..nb {
        let want = if b == finger { 0.001 } else { 0.02 };
        assert_eq!(report.per_bone_threshold_cm[b], want);
        assert!(report.per_bone_max_error_cm[b] <= want as f64);
    }
    // The plot draws each bone's own limit.
    let d = s.detail.data.as_ref().expect("detail reloaded");
    assert_eq!(d.per_bone_limit.len(), nb);
    assert_eq!(d.per_bone_limit[finger], 0.001f32 as f64);

    // Reopened, the table shows what was saved.
    h.get_by_label("Close").click();
    h.run();
    h.get_by_label("clip_00").click();
    wait_idle(&mut h);
    let t = h.state().detail.bones.as_ref().expect("table loaded");
    let row = t.rows.iter().find(|r| r.0 == "l_finger").unwrap();
    assert_eq!(row.1, "0.001");
    assert!(
        t.rows
            .iter()
            .filter(|r| r.0 != "l_finger")
            .all(|r| r.1.is_empty())
    );
}

/// A clip in a subfolder of a folder whose `clipforge.toml` applies to it: the table is saved
/// into that file (no new file in the clip's folder, which would take its place there), so its
/// threshold keeps applying to the clip's other bones.
#[test]
fn a_bone_table_saves_into_the_parent_file_that_applies() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let sub = input.path().join("hero");
    std::fs::create_dir(&sub).unwrap();
    let clip = clip_00();
    std::fs::write(sub.join("clip_00.acl.sjson"), write_acl_clip(&clip)).unwrap();
    let parent = input.path().join(FILE_NAME);
    std::fs::write(&parent, "error_threshold = 0.02\n").unwrap();
    let mut h = harness_on(input.path(), out.path());
    h.state_mut().handle(clipforge::gui::Command::Scan);
    wait_idle(&mut h);
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    // Held to the folder's 0.02 cm, the clip is within its threshold though over the tab's
    // 0.01: its status, its error cell and the footer's worst error say so (no red).
    {
        let s = h.state();
        let row = &s.library.rows[0];
        let err = row.report().unwrap().max_error_cm;
        assert!(err > 0.01 && err <= 0.02, "{err}");
        assert_eq!(row.status, clipforge::gui::RowStatus::Ok);
        assert!(!s.library.summary.worst_over);
    }
    h.get_by_label("clip_00").click();
    wait_idle(&mut h);
    save_finger_threshold(&mut h);
    assert!(
        !sub.join(FILE_NAME).exists(),
        "a new file took the parent's place"
    );
    let text = std::fs::read_to_string(&parent).unwrap();
    assert!(text.starts_with("error_threshold = 0.02\n"), "{text}");
    assert_eq!(
        FolderSettings::parse(&parent, &text).unwrap().bones.len(),
        1
    );
    // The detail says where it saved.
    assert!(
        h.query_all_by_label_contains(&format!("to {}", parent.display()))
            .next()
            .is_some()
    );

    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    let s = h.state();
    let key = s.detail.selected.clone().expect("still selected");
    let report = s.library.row(&key).and_then(|r| r.report()).unwrap();
    let finger = clip
        .skeleton
        .names
        .iter()
        .position(|n| n == "l_finger")
        .unwrap();
    for (b, &t) in report.per_bone_threshold_cm.iter().enumerate() {
        assert_eq!(t, if b == finger { 0.001 } else { 0.02 }, "bone {b}");
    }
    assert_eq!(report.per_bone_threshold_cm.len(), clip.num_bones());
}

/// Issue 26, finding 3: a per-bone table is saved for "this clip" (a `[[clip]]` table) or "this
/// folder" (`[[bone]]` tables), the user sees which clips a save changes, and those rows (only
/// those) turn stale at once.
#[test]
fn a_bone_table_is_saved_for_this_clip_or_this_folder_and_its_rows_turn_stale() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    common::gui::write_clips(input.path(), 3, 40);
    let mut h = harness_on(input.path(), out.path());
    h.state_mut().handle(clipforge::gui::Command::Scan);
    wait_idle(&mut h);
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    let status = |h: &egui_kittest::Harness<'_, AppState>, label: &str| {
        h.state()
            .library
            .rows
            .iter()
            .find(|r| r.label == label)
            .unwrap()
            .status
            .clone()
    };
    h.get_by_label("clip_01").click();
    wait_idle(&mut h);
    h.get_by_label("Per-bone thresholds").click();
    h.run();
    // "This clip" unless chosen otherwise, and the table says which clips a save changes.
    h.get_by_label_contains("A save changes 1 clip: clip_01");
    // Units in the titles; the caption names the file (it once began "cm; …", a cut sentence).
    h.get_by_label("threshold (cm)");
    h.get_by_label("shell (cm)");
    h.get_by_label(&format!(
        "Empty: the clip's own. Saved into {}",
        input.path().join(FILE_NAME).display()
    ));
    let f = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "l_finger");
    f.focus();
    f.type_text("0.001");
    h.run();
    h.get_by_label("Save to clipforge.toml").click();
    h.run_steps(3);
    let file = input.path().join(FILE_NAME);
    let text = std::fs::read_to_string(&file).unwrap();
    let settings = FolderSettings::parse(&file, &text).unwrap();
    assert!(settings.bones.is_empty(), "nothing for the folder: {text}");
    assert_eq!(settings.clips.len(), 1, "{text}");
    assert_eq!(settings.clips[0].pattern, "clip_01.acl.sjson");
    assert_eq!(settings.clips[0].bones[0].pattern, "l_finger");
    assert_eq!(settings.clips[0].bones[0].error_threshold, Some(0.001));
    // At once: the saved clip is stale, the others are not.
    assert_eq!(status(&h, "clip_01"), RowStatus::Stale);
    assert_eq!(status(&h, "clip_00"), RowStatus::Ok);
    assert_eq!(status(&h, "clip_02"), RowStatus::Ok);
    h.get_by_label_contains("1 clip now stale");

    // For the folder: all three, listed before saving, stale after.
    h.get_by_label("this folder").click();
    h.run();
    h.get_by_label_contains("A save changes 3 clips");
    let f = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "l_finger");
    f.focus();
    f.type_text("0.002");
    h.run();
    h.get_by_label("Save to clipforge.toml").click();
    h.run_steps(3);
    for l in ["clip_00", "clip_01", "clip_02"] {
        assert_eq!(status(&h, l), RowStatus::Stale, "{l}");
    }
    // Compressed again, each clip is held to what applies to it: clip_01's own 0.001 wins
    // over the folder's 0.002; nothing is stale any more.
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    let s = h.state();
    assert_eq!(s.library.summary.stale, 0);
    for r in &s.library.rows {
        let rep = r.good_report().unwrap();
        let finger = rep
            .per_bone_threshold_cm
            .iter()
            .copied()
            .fold(f32::INFINITY, f32::min);
        let want = if r.label == "clip_01" { 0.001 } else { 0.002 };
        assert_eq!(finger, want, "{}", r.label);
        assert!(
            matches!(r.status, RowStatus::Ok),
            "{}: {:?}",
            r.label,
            r.status
        );
    }
}

/// A bone whose name holds glob characters (`l_finger[1]`, beside a bone named `l_finger1`
/// that the unescaped name would match as a class): the table saves a glob matching that bone
/// alone, the compressor holds only it to the value, and the reopened table shows it.
#[test]
fn a_bone_named_with_glob_characters_is_saved_for_that_bone_alone() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut clip = generate(&GenerateOptions {
        name: "clip_00".into(),
        num_samples: 50,
        seed: 3,
        ..Default::default()
    });
    let names = &mut clip.skeleton.names;
    let finger = names.iter().position(|n| n == "l_finger").unwrap();
    let other = (0..names.len()).find(|&b| b != finger).unwrap();
    names[finger] = "l_finger[1]".into();
    names[other] = "l_finger1".into();
    let mut h = compress_and_open(&clip, input.path(), out.path());

    h.get_by_label("Per-bone thresholds").click();
    h.run();
    h.get_by_label("this folder").click();
    h.run();
    let f = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "l_finger[1]");
    f.focus();
    f.type_text("0.001");
    h.run();
    h.get_by_label("Save to clipforge.toml").click();
    h.run();
    let file = input.path().join(FILE_NAME);
    let text = std::fs::read_to_string(&file).unwrap();
    let settings = FolderSettings::parse(&file, &text).unwrap();
    assert_eq!(settings.bones.len(), 1, "{text}");
    assert_eq!(settings.bones[0].pattern, "l_finger\\[1\\]");

    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    let s = h.state();
    let key = s.detail.selected.clone().expect("still selected");
    let report = s
        .library
        .row(&key)
        .and_then(|r| r.report())
        .expect("compressed again");
    assert!(report.error.is_none(), "{:?}", report.error);
    assert_eq!(report.per_bone_threshold_cm[finger], 0.001);
    assert_eq!(report.per_bone_threshold_cm[other], 0.02);

    h.get_by_label("Close").click();
    h.run();
    h.get_by_label("clip_00").click();
    wait_idle(&mut h);
    let t = h.state().detail.bones.as_ref().expect("table loaded");
    assert_eq!(
        t.rows.iter().find(|r| r.0 == "l_finger[1]").unwrap().1,
        "0.001"
    );
    assert!(
        t.rows
            .iter()
            .find(|r| r.0 == "l_finger1")
            .unwrap()
            .1
            .is_empty()
    );
}

/// A hand-written `[[clip.bone]]` table whose `match` selects no bone (`Head` for `head`) is not
/// applied, and the clip's detail says so under its settings line, naming the bone it missed;
/// once the user saves `head` from the table and recompresses, the warning about `Head` stays
/// (the table is still in the file) but the bone is held to the saved value.
#[test]
fn a_clip_bone_table_that_selects_no_bone_is_said_in_the_detail() {
    let input = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let clip = clip_00();
    std::fs::write(
        input.path().join("clip_00.acl.sjson"),
        write_acl_clip(&clip),
    )
    .unwrap();
    std::fs::write(
        input.path().join(FILE_NAME),
        "[[clip]]\nmatch = \"clip_00.acl.sjson\"\n[[clip.bone]]\nmatch = \"Head\"\nerror_threshold = 0.002\n",
    )
    .unwrap();
    let mut h = harness_on(input.path(), out.path());
    h.state_mut().handle(clipforge::gui::Command::Scan);
    wait_idle(&mut h);
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    h.get_by_label("clip_00").click();
    wait_idle(&mut h);
    h.get_by_label(&format!(
        "Warning: {}: [[clip.bone]] match \"Head\" selects no bone of this clip, so its settings \
         were not applied (bone names are case-sensitive: the clip has \"head\")",
        input.path().join(FILE_NAME).display()
    ));
    let head = clip
        .skeleton
        .names
        .iter()
        .position(|n| n == "head")
        .unwrap();
    let threshold = |h: &egui_kittest::Harness<'_, AppState>| {
        let s = h.state();
        let key = s.detail.selected.clone().expect("selected");
        s.library
            .row(&key)
            .and_then(|r| r.report())
            .unwrap()
            .per_bone_threshold_cm
            .get(head)
            .copied()
    };
    // Not applied: no per-bone thresholds at all (the list is empty when none differ).
    assert_eq!(threshold(&h), None);
    h.get_by_label("Per-bone thresholds").click();
    h.run();
    let f = h.get_by_role_and_label(egui::accesskit::Role::TextInput, "head");
    f.focus();
    f.type_text("0.002");
    h.run();
    h.get_by_label("Save to clipforge.toml").click();
    h.run();
    h.get_by_label("Compress all").click();
    wait_idle(&mut h);
    assert_eq!(threshold(&h), Some(0.002));
    assert_eq!(
        h.query_all_by_label_contains("selects no bone of this clip")
            .count(),
        1
    );
}
