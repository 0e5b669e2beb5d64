//! Files and folders dropped on the window: what each drop means ([`plan_drop`], no UI types)
//! as a [`super::Command::Drop`] value, which `AppState::handle` carries out.
//!
//! - a folder opens as the Clips tab's input folder (scanned), or, on the Headers tab, becomes
//!   the source root (scanned);
//! - a clip file opens its folder and selects the clip once the scan has listed it;
//! - anything else gets a message naming it and saying what can be dropped.

use super::headers_tab::HeadersSettings;
use crate::anim::formats::ClipFormat;
use eframe::egui;
use std::path::{Path, PathBuf};

/// What a drop does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DropAction {
    /// Open this folder in the Clips tab (scan it).
    OpenInput(PathBuf),
    /// Open the clip's folder and select the clip.
    OpenClip { folder: PathBuf, clip: PathBuf },
    /// Make this folder the Headers tab's source root (and scan it).
    HeadersRoot(PathBuf),
    /// Nothing to do; the message says why.
    Unsupported(String),
}

const HEADER_EXTENSIONS: [&str; 10] = [
    "h", "hh", "hpp", "hxx", "inl", "c", "cc", "cpp", "cxx", "ipp",
];

fn is_header_or_source(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| HEADER_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

pub fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// What dropping `paths` on the window does when `headers_tab` is (or is not) the open tab.
/// Only the first usable path acts (one folder can be open at a time); the message of an
/// unusable drop names the first path.
pub fn plan_drop(paths: &[PathBuf], headers_tab: bool) -> DropAction {
    if paths.is_empty() {
        return DropAction::Unsupported("Nothing was dropped (no file path)".into());
    }
    for p in paths {
        if p.is_dir() {
            return if headers_tab {
                DropAction::HeadersRoot(p.clone())
            } else {
                DropAction::OpenInput(p.clone())
            };
        }
    }
    for p in paths {
        if !p.is_file() {
            continue;
        }
        if headers_tab {
            if is_header_or_source(p)
                && let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty())
            {
                return DropAction::HeadersRoot(dir.to_path_buf());
            }
        } else if ClipFormat::from_path(p).is_some()
            && let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty())
        {
            return DropAction::OpenClip {
                folder: dir.to_path_buf(),
                clip: p.clone(),
            };
        }
    }
    let first = &paths[0];
    let what = if !first.exists() {
        format!("{}: not found", first.display())
    } else if first.is_file() {
        format!("{}: not a supported file", name_of(first))
    } else {
        format!("{}: neither a file nor a folder", name_of(first))
    };
    let expected = if headers_tab {
        "drop a source folder (or a .h / .cpp file of it) on the Headers tab".to_string()
    } else {
        format!(
            "drop a folder of clips, or a clip ({})",
            crate::anim::formats::clip_extension_list(", ")
        )
    };
    DropAction::Unsupported(format!("{what}: {expected}"))
}

/// The paths of this frame's dropped files.
pub fn dropped_paths(ctx: &egui::Context) -> Vec<PathBuf> {
    ctx.input(|i| {
        i.raw
            .dropped_files
            .iter()
            .map(|f| f.path().to_path_buf())
            .filter(|p| !p.as_os_str().is_empty())
            .collect()
    })
}

/// A clip to select once its folder's scan has listed it.
#[derive(Default)]
pub struct DropState {
    pub pending_clip: Option<PathBuf>,
    /// A dropped source root waits for the running header scan to stop.
    pub pending_headers_scan: bool,
}

/// Makes `dir` the Headers tab's only source root; include dirs of the previous tree (outside
/// `dir`) are removed, since they would resolve its headers, not this one's. Returns the message.
pub fn set_headers_root(headers: &mut HeadersSettings, dir: &Path) -> String {
    let project = &mut headers.project;
    project.roots = vec![dir.display().to_string()];
    let before = project.include_dirs.len();
    project
        .include_dirs
        .retain(|d| Path::new(d.trim()).starts_with(dir));
    let dropped = before - project.include_dirs.len();
    let mut msg = format!("Source root: {}", dir.display());
    if dropped > 0 {
        msg.push_str(&format!(
            " ({} outside it removed)",
            crate::pipeline::report::count(dropped, "include dir", "include dirs")
        ));
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_clips_sources_and_other_files() {
        let d = tempfile::tempdir().unwrap();
        let clip = d.path().join("walk.BVH");
        let header = d.path().join("a.hpp");
        let text = d.path().join("notes.txt");
        for f in [&clip, &header, &text] {
            std::fs::write(f, "x").unwrap();
        }
        let dir = d.path().to_path_buf();
        assert_eq!(
            plan_drop(std::slice::from_ref(&dir), false),
            DropAction::OpenInput(dir.clone())
        );
        assert_eq!(
            plan_drop(std::slice::from_ref(&dir), true),
            DropAction::HeadersRoot(dir.clone())
        );
        assert_eq!(
            plan_drop(&[text.clone(), clip.clone()], false),
            DropAction::OpenClip {
                folder: dir.clone(),
                clip: clip.clone()
            }
        );
        assert_eq!(
            plan_drop(std::slice::from_ref(&header), true),
            DropAction::HeadersRoot(dir.clone())
        );
        let DropAction::Unsupported(m) = plan_drop(std::slice::from_ref(&text), false) else {
            panic!()
        };
        assert!(
            m.starts_with("notes.txt: not a supported file: drop a folder"),
            "{m}"
        );
        let DropAction::Unsupported(m) = plan_drop(std::slice::from_ref(&clip), true) else {
            panic!()
        };
        assert!(m.contains("Headers tab"), "{m}");
        let DropAction::Unsupported(m) = plan_drop(&[d.path().join("gone")], false) else {
            panic!()
        };
        assert!(m.ends_with("gone: not found: drop a folder of clips, or a clip (.acl.sjson, .bvh, .gltf, .glb, .fbx)"), "{m}");
    }
}
