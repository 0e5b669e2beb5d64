//! The state a scan leaves for the next one: what the disk cache saves and loads (module
//! `cache`) and a [`super::Scanner`] holds between rescans. Plain data, no scanning: the cache
//! depends on this module, not on the scanner.

use super::compiler::CompilerEnv;
use super::eval::TuResult;
use super::store::{self, FileData, FileId};
use super::util::FxMap;
use std::path::PathBuf;
use std::sync::Arc;

/// State kept between scans.
#[derive(Default)]
pub struct Prev {
    pub paths: Vec<PathBuf>,
    pub files: Vec<Option<Arc<FileData>>>,
    /// (TU file id, spec hash) -> result: a TU scanned in several configurations (different
    /// flags) has one entry per distinct flag set.
    pub tus: FxMap<(FileId, u64), TuResult>,
    /// Directories whose listings the previous scan depended on, with their mtime (None = absent).
    pub dir_stamps: Vec<(PathBuf, Option<i64>)>,
    pub compilers: FxMap<String, CompilerEnv>,
    /// File existence checks of the previous scan, reused while no probed directory changed.
    pub exists: store::Answers,
    /// The edge table the TU results' edge ids index.
    pub edge_tab: Vec<(FileId, u32, FileId)>,
    /// The last walk of the roots.
    pub walk: Option<WalkCache>,
    /// The last all-branches graph, with the TUs and include dirs it was built from.
    pub hh: Option<HhCached>,
}

/// An all-branches graph kept for the next scan: it depends only on the TUs, the include dirs,
/// the files' Header Hero include lines and which files exist, so a rescan where none of those
/// changed reuses it instead of walking again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HhCached {
    pub tus: Vec<FileId>,
    pub dirs: Vec<PathBuf>,
    pub graph: HhGraph,
}

/// What a walk of the roots found, kept so a rescan can skip the walk: while every directory it
/// listed has the same modification time, their entries are the same (adding, removing or
/// renaming an entry changes its directory's time). Symlinked candidates are re-checked, since
/// their targets can change without that.
#[derive(Clone, Debug, Default)]
pub struct WalkCache {
    pub roots: Vec<PathBuf>,
    /// Every directory listed, with its modification time.
    pub dirs: Vec<(PathBuf, i64)>,
    /// TUs that are regular files.
    pub files: Vec<PathBuf>,
    /// Symlinks with a TU extension (kept or not per their target, at every scan).
    pub links: Vec<PathBuf>,
}

/// Header Hero's include graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HhGraph {
    /// Resolved includes per file: (line, target), in source order, duplicates kept.
    pub edges: FxMap<FileId, Vec<(u32, FileId)>>,
    /// (includer, line, name, angle)
    pub missing: Vec<(FileId, u32, String, bool)>,
    /// (file, line) of lines HH 2011 could not parse.
    pub errors: Vec<(FileId, u32, String)>,
    /// The files in the order the walk reached them. The report numbers its nodes in this
    /// order: file ids are not a stable order, the preprocessed pass creates them concurrently.
    pub order: Vec<FileId>,
}
