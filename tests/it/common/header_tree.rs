//! Header trees for the header profiler's tests: files written under a temporary root, and a copy
//! of this machine's libstdc++ (a real tree nobody here wrote) to scan.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `text` to `root/rel`, creating its folders.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// The newest `/usr/include/c++/<version>` holding `<vector>`, when g++ is installed too (the
/// scans ask it for its predefined macros and system dirs).
pub fn libstdcxx() -> Option<PathBuf> {
    let have_gxx = Command::new("g++")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_gxx {
        return None;
    }
    let mut v: Vec<PathBuf> = fs::read_dir("/usr/include/c++")
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("vector").is_file())
        .collect();
    v.sort();
    v.pop()
}

/// Copies the regular files and folders under `from` to `to` (symlinks are left out).
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let t = e.file_type().unwrap();
        let dst = to.join(e.file_name());
        if t.is_dir() {
            copy_dir(&e.path(), &dst);
        } else if t.is_file() {
            fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// Copies libstdc++ to `root/inc` (a tree the test may edit); `None`, with the reason printed,
/// when this machine has no g++ or no libstdc++ headers: the test then skips.
pub fn copy_libstdcxx(root: &Path) -> Option<PathBuf> {
    let Some(lib) = libstdcxx() else {
        eprintln!("skipped: no g++ or no /usr/include/c++/<version>/vector");
        return None;
    };
    let inc = root.join("inc");
    copy_dir(&lib, &inc);
    Some(inc)
}
