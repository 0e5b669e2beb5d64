//! Output naming: where an input's `.cfa` files go under the output root (the stem, the collision
//! rule, one file per clip of a multi-clip input), and the `/`-separated key of a relative path
//! that the skip cache and folder settings match on. The rules are in `docs/PIPELINE.md`.

use crate::input::ClipFile;
use clipforge_anim::formats::ClipFormat;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// Extension of compressed clips.
pub(crate) const OUTPUT_EXTENSION: &str = "cfa";

/// The input file name without its clip extension: `walk.bvh` → `walk`, `x.acl.sjson` → `x`.
pub use clipforge_anim::formats::file_stem as clip_stem;

/// Makes an animation name safe as part of a file name: ASCII letters, digits, `-` and `_` kept,
/// anything else becomes `_`, at most 64 characters, `anim` when nothing is left.
pub fn sanitize_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    while s.ends_with('_') && s.len() > 1 {
        s.pop();
    }
    if s.is_empty() || s.chars().all(|c| c == '_') {
        s = "anim".into();
    }
    s
}

/// Output path base (without extension) for an input, relative to the output root: the relative
/// input path with the clip extension removed, or with it kept (`walk.bvh` → `walk.bvh`) when
/// `keep_extension` is set, which the batch does when two inputs of one folder share a stem.
pub fn output_base(relative: &Path, keep_extension: bool) -> PathBuf {
    let stem = if keep_extension {
        relative
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        clip_stem(relative)
    };
    match relative.parent() {
        Some(p) => p.join(stem),
        None => PathBuf::from(stem),
    }
}

/// File name of clip `index` out of `count` clips of one input: `base.cfa` for a single clip,
/// `base.<index>_<sanitised name>.cfa` otherwise.
pub fn clip_output_path(base: &Path, index: usize, count: usize, clip_name: &str) -> PathBuf {
    let file = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = if count == 1 {
        format!("{file}.{OUTPUT_EXTENSION}")
    } else {
        format!(
            "{file}.{index}_{}.{OUTPUT_EXTENSION}",
            sanitize_name(clip_name)
        )
    };
    base.with_file_name(name)
}

/// Output bases (relative to the output root) of a set of files, with the stem collision rule
/// applied: inputs of one folder that share a stem (`walk.bvh`, `walk.glb`) keep their extension.
pub fn plan_outputs(files: &[ClipFile]) -> Vec<PathBuf> {
    let mut count: HashMap<PathBuf, usize> = HashMap::new();
    for f in files {
        *count.entry(output_base(&f.relative, false)).or_default() += 1;
    }
    files
        .iter()
        .map(|f| {
            let b = output_base(&f.relative, false);
            if count[&b] > 1 {
                output_base(&f.relative, true)
            } else {
                b
            }
        })
        .collect()
}

/// Output base for one file judged against what is on disk next to it (used by the watcher,
/// which sees files one by one): the extension is kept when another supported clip file of the
/// same folder has the same stem.
pub(crate) fn output_base_on_disk(file: &ClipFile) -> PathBuf {
    let stem = clip_stem(&file.path);
    let clash = file
        .path
        .parent()
        .and_then(|d| std::fs::read_dir(d).ok())
        .map(|rd| {
            rd.filter_map(Result::ok).any(|e| {
                let p = e.path();
                p != file.path && ClipFormat::from_path(&p).is_some() && clip_stem(&p) == stem
            })
        })
        .unwrap_or(false);
    output_base(&file.relative, clash)
}

/// A relative path as a cache key: components joined with `/`.
pub(crate) fn cache_key(relative: &Path) -> String {
    relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}
