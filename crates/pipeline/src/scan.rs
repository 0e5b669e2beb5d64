//! Folder scans for clip files: the one walk behind `compress`, `watch` and the app's library.
//!
//! The walk visits each real folder once (by device + inode), so no arrangement of symbolic
//! links can make it loop or repeat: links are followed only after the real tree is walked, so
//! a folder is listed under its real path when it has one. A link is not followed when it leads
//! to another filesystem than the ones the input root reaches without links (a link to `/sys`
//! or `/proc`, whose webs of links are effectively endless) unless
//! [`ScanOptions::other_filesystems`] is set, nor when it leads to a folder holding the input
//! root (`ln -s / in/root`: following it would scan the whole disk). The cancel token is checked
//! at every entry. See `docs/PIPELINE.md` ("Scanning").

use super::{CancelToken, ClipFile};
use clipforge_anim::formats::ClipFormat;
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

/// How a scan walks.
#[derive(Clone, Debug, Default)]
pub struct ScanOptions {
    /// Checked at every entry: once cancelled, the scan returns what it found with
    /// [`ScanResult::cancelled`] set.
    pub cancel: Option<CancelToken>,
    /// Follow symbolic links to folders on other filesystems than the input root's.
    pub other_filesystems: bool,
    /// Set to the number of clip files found so far after every folder (a UI shows "scanning…
    /// N found" while a long scan runs).
    pub found: Option<std::sync::Arc<std::sync::atomic::AtomicUsize>>,
}

/// A file found by a scan that is neither a regular file nor a folder: never opened.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecialFile {
    pub path: PathBuf,
    /// What it is, in words ("a FIFO", "a socket", ...).
    pub kind: &'static str,
    /// Its name is a clip file name (`x.bvh`): it was meant as a clip, so it counts as a failure.
    pub clip_named: bool,
}

impl SpecialFile {
    pub(crate) fn new(path: &Path, file_type: &std::fs::FileType) -> Self {
        Self {
            path: path.to_path_buf(),
            kind: clipforge_base::fsio::file_kind(file_type),
            clip_named: ClipFormat::from_path(path).is_some(),
        }
    }

    /// The line that reports it: `PATH: not a regular file (a FIFO): skipped`.
    pub fn message(&self) -> String {
        format!(
            "{}: not a regular file ({}): skipped",
            self.path.display(),
            self.kind
        )
    }
}

/// Why a symbolic link to a folder was not followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkSkip {
    /// It leads to another filesystem (see [`ScanOptions::other_filesystems`]).
    OtherFilesystem,
    /// It leads to a folder that holds the input root.
    HoldsRoot,
}

/// A symbolic link a scan did not follow.
#[derive(Clone, Debug, PartialEq)]
pub struct SkippedLink {
    pub path: PathBuf,
    /// Where it leads (canonical), when that could be resolved.
    pub target: PathBuf,
    pub why: LinkSkip,
}

impl SkippedLink {
    /// `PATH: link to another filesystem (/sys/class): not followed`.
    pub fn message(&self) -> String {
        let what = match self.why {
            LinkSkip::OtherFilesystem => {
                "link to another filesystem, not followed (--other-filesystems follows it)"
            }
            LinkSkip::HoldsRoot => "link to a folder holding the input folder, not followed",
        };
        format!(
            "{}: {what} ({})",
            self.path.display(),
            self.target.display()
        )
    }
}

/// What a scan found: the clip files, and the special files it skipped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScanResult {
    pub files: Vec<ClipFile>,
    /// Sorted by path.
    pub special: Vec<SpecialFile>,
    /// Links to folders left alone, sorted by path.
    pub skipped_links: Vec<SkippedLink>,
    /// The cancel token stopped the scan: `files` is incomplete.
    pub cancelled: bool,
}

/// Recursively lists every supported clip file under `root` (a file is returned as itself), sorted by path.
///
/// Folders whose name starts with a dot are skipped (`.git`, `.cache`, ...), symbolic links are
/// followed as the module says, unreadable entries are ignored. Special files (FIFOs, devices,
/// sockets) are left out: [`scan_with_special`] lists them.
pub fn scan(root: &Path) -> Vec<ClipFile> {
    scan_with_special(root).files
}

/// [`scan`], also listing the special files (FIFOs, devices, sockets) met on the way, which are
/// never opened (reading a FIFO blocks until someone writes to it).
pub fn scan_with_special(root: &Path) -> ScanResult {
    scan_with(root, &ScanOptions::default())
}

#[cfg(unix)]
fn dev_ino(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn dev_ino(_: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

fn is_dot_name(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().starts_with('.')
}

/// [`scan_with_special`] with explicit options (cancellation, other filesystems).
pub fn scan_with(root: &Path, options: &ScanOptions) -> ScanResult {
    let mut result = ScanResult::default();
    let Ok(root_meta) = std::fs::metadata(root) else {
        return result;
    };
    if root_meta.is_file() {
        result.files.extend(ClipFile::new(root, root));
        return result;
    }
    if !root_meta.is_dir() {
        return result;
    }
    let cancelled = || options.cancel.as_ref().is_some_and(|c| c.is_cancelled());
    let root_canon = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let (root_dev, _) = dev_ino(&root_meta);
    // Filesystems reached without a link (the root's, and real mount points inside it).
    let mut own_devices: HashSet<u64> = HashSet::from([root_dev]);
    let mut visited: HashSet<(u64, u64)> = HashSet::from([dev_ino(&root_meta)]);
    // Real folders first (depth first), links to folders only once the real tree is done, so a
    // folder that has a real path is listed under it.
    let mut stack: Vec<(PathBuf, bool)> = vec![(root.to_path_buf(), false)];
    let mut links: VecDeque<PathBuf> = VecDeque::new();
    'walk: loop {
        let (dir, via_link) = match stack.pop() {
            Some(d) => d,
            None => {
                let Some(link) = links.pop_front() else {
                    break;
                };
                if cancelled() {
                    result.cancelled = true;
                    break;
                }
                let Ok(meta) = std::fs::metadata(&link) else {
                    continue;
                };
                let (dev, _) = dev_ino(&meta);
                let target = || link.canonicalize().unwrap_or_default();
                if !options.other_filesystems && !own_devices.contains(&dev) {
                    result.skipped_links.push(SkippedLink {
                        target: target(),
                        path: link,
                        why: LinkSkip::OtherFilesystem,
                    });
                    continue;
                }
                let t = target();
                if root_canon.starts_with(&t) && t != root_canon {
                    result.skipped_links.push(SkippedLink {
                        target: t,
                        path: link,
                        why: LinkSkip::HoldsRoot,
                    });
                    continue;
                }
                if !visited.insert(dev_ino(&meta)) {
                    continue;
                }
                (link, true)
            }
        };
        if cancelled() {
            result.cancelled = true;
            break;
        }
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in read {
            if cancelled() {
                result.cancelled = true;
                break 'walk;
            }
            let Ok(entry) = entry else { continue };
            let Ok(ft) = entry.file_type() else { continue };
            let path = entry.path();
            if ft.is_symlink() {
                // Where it leads; a broken link is ignored.
                let Ok(meta) = std::fs::metadata(&path) else {
                    continue;
                };
                if meta.is_dir() {
                    if !is_dot_name(&entry.file_name()) {
                        links.push_back(path);
                    }
                } else {
                    add_file(&mut result, root, path, &meta);
                }
                continue;
            }
            if ft.is_dir() {
                if is_dot_name(&entry.file_name()) {
                    continue;
                }
                let Ok(meta) = entry.metadata() else { continue };
                let (dev, _) = dev_ino(&meta);
                if via_link {
                    // Below a followed link, a mount point counts as leaving through the link.
                    if !options.other_filesystems && !own_devices.contains(&dev) {
                        result.skipped_links.push(SkippedLink {
                            target: path.canonicalize().unwrap_or_default(),
                            path,
                            why: LinkSkip::OtherFilesystem,
                        });
                        continue;
                    }
                } else {
                    own_devices.insert(dev);
                }
                if visited.insert(dev_ino(&meta)) {
                    stack.push((path, via_link));
                }
                continue;
            }
            if !ft.is_file() {
                result.special.push(SpecialFile::new(&path, &ft));
            } else if ClipFormat::from_path(&path).is_some() {
                // Only clip files are stat'ed (for their size): most of a tree is other files.
                if let Ok(meta) = entry.metadata() {
                    add_file(&mut result, root, path, &meta);
                }
            }
        }
        if let Some(found) = &options.found {
            found.store(result.files.len(), std::sync::atomic::Ordering::Relaxed);
        }
    }
    result.files.sort_by(|a, b| a.path.cmp(&b.path));
    result.special.sort_by(|a, b| a.path.cmp(&b.path));
    result.skipped_links.sort_by(|a, b| a.path.cmp(&b.path));
    result
}

/// A non-folder entry (`meta` is what it leads to): a clip file, a special file, or ignored.
fn add_file(result: &mut ScanResult, root: &Path, path: PathBuf, meta: &std::fs::Metadata) {
    let t = meta.file_type();
    if !t.is_file() {
        result.special.push(SpecialFile::new(&path, &t));
        return;
    }
    let Some(format) = ClipFormat::from_path(&path) else {
        return;
    };
    let Ok(relative) = path.strip_prefix(root) else {
        return;
    };
    result.files.push(ClipFile {
        relative: relative.to_path_buf(),
        format,
        size_bytes: meta.len(),
        path,
    });
}
