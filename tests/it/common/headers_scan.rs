//! Set-ups shared by the header profiler's tests (library and app): a tree written file by file,
//! a project over its `src/` that asks no compiler, its scan, and a compilation database per
//! configuration.

use clipforge::headers::{self, CompilerChoice, Mode, Progress, Project, Report, ScanOptions};
use std::fs;
use std::path::{Path, PathBuf};

/// Writes `text` to `root/rel`, creating its folders.
pub fn write(root: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// The TUs under `root/src`, with `root/<inc>` as `-I` dirs in order, no compiler asked
/// (`CompilerChoice::None`: the built-in macro set).
pub fn project(root: &Path, inc: &[&str]) -> Project {
    Project {
        roots: vec![root.join("src")],
        include_dirs: inc.iter().map(|d| root.join(d)).collect(),
        compiler: CompilerChoice::None,
        ..Default::default()
    }
}

/// A scan in `mode` that neither reads nor writes the disk cache.
pub fn opts(mode: Mode) -> ScanOptions {
    ScanOptions {
        mode,
        use_disk_cache: false,
        ..Default::default()
    }
}

/// The report of `p` in `mode` (see [`opts`]).
pub fn scan(p: &Project, mode: Mode) -> Report {
    headers::scan(p, &opts(mode), &Progress::default())
        .unwrap()
        .primary
}

/// Writes `root/name`, a compilation database of `tus` (files in `root`), each compiled as
/// `cc -I. {extra} -c TU`; returns its path.
pub fn compdb(root: &Path, name: &str, tus: &[&str], extra: &str) -> PathBuf {
    let entries: Vec<serde_json::Value> = tus
        .iter()
        .map(|t| {
            serde_json::json!({"directory": root, "file": t, "command": format!("cc -I. {extra} -c {t}")})
        })
        .collect();
    let p = root.join(name);
    fs::write(&p, serde_json::Value::Array(entries).to_string()).unwrap();
    p
}
