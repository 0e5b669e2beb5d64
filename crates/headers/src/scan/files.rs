//! Phase 2 of a scan, checking files: every file the previous scan knew re-stat'ed (re-read if
//! changed) and the directories it stamped checked, to tell what changed since.

use super::Scanner;
use crate::state::Prev;
use crate::store::{self, FileData, FileId, Store};
use crate::{Progress, ScanOptions};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(super) fn dir_mtime(p: &Path) -> Option<i64> {
    let m = std::fs::metadata(p).ok()?;
    if !m.is_dir() {
        return None;
    }
    m.modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_nanos() as i64)
}

/// Does the directory hold a symlink (or cannot it be listed)?
fn has_symlink(d: &Path) -> bool {
    match std::fs::read_dir(d) {
        Ok(rd) => rd
            .flatten()
            .any(|e| e.file_type().map_or(true, |t| t.is_symlink())),
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// What the file-check phase leaves: the store, the previous scan (taken from the session) and
/// what changed since it.
pub(super) struct FileChecks {
    pub(super) store: Store,
    pub(super) prev: Prev,
    /// Some existence answer changed under a directory whose time moved.
    pub(super) changed_dirs: bool,
    /// Some stamped directory's time moved.
    pub(super) moved_dirs: bool,
    /// The stamped directories' times read at the start of the checks.
    pub(super) start_times: Vec<(PathBuf, Option<i64>)>,
    /// Per file id: (directives changed, Header Hero include lines changed).
    pub(super) file_changes: Vec<(bool, bool)>,
}

impl Scanner {
    /// Phase 2, read / lex: the store seeded with the previous scan's files (stable ids, data
    /// reused), every known file re-stat'ed and re-read if changed, and the directories stamped
    /// by the previous scan checked, in parallel.
    pub(super) fn check_files(&mut self, opts: &ScanOptions, progress: &Progress) -> FileChecks {
        // Store, with previous content for reuse and stable ids.
        let prev = std::mem::take(&mut self.prev);
        let mut store = Store::new(self.interner.clone());
        let mut prev_files: Vec<Option<Arc<FileData>>> = vec![None; prev.paths.len()];
        for (p, f) in prev.paths.iter().zip(&prev.files) {
            let id = store.id_of(p) as usize;
            if id >= prev_files.len() {
                prev_files.resize(id + 1, None);
            }
            prev_files[id] = f.clone();
        }
        store.prev = prev_files;
        // Re-stat (and re-read if changed) every previously known file, in parallel.
        progress.set_phase("checking files");
        // Directories and files are checked at once (the file checks do not use the seeded answers).
        // (an existence answer changed, a directory's time changed)
        // The stamped directories' times now, read before anything is checked: they become the
        // next stamps of the answers carried over, so a file created while this scan runs is
        // seen by the next one.
        let dirs_check = || {
            let start_times: Vec<(PathBuf, Option<i64>)> = prev
                .dir_stamps
                .par_iter()
                .map(|(d, _)| (d.clone(), dir_mtime(d)))
                .collect();
            let moved: Vec<&PathBuf> = prev
                .dir_stamps
                .iter()
                .zip(&start_times)
                .filter(|((_, old), (_, now))| old != now)
                .map(|((d, _), _)| d)
                .collect();
            // A directory's time also changes when a file in it is replaced through a rename (how
            // many editors save, and `sed -i`). Resolution only depends on which probed names
            // exist, so those under a changed directory are checked again: the same answers mean
            // the same resolution. A symlink in it may have been re-pointed, which changes a
            // system header's reported path (its realpath) without changing any answer: then
            // everything is re-resolved, as before.
            let changed = !moved.is_empty()
                && (moved.par_iter().any(|d| has_symlink(d))
                    || prev.exists.par_iter().any(|(p, b)| {
                        moved.iter().any(|d| p.starts_with(d)) && store::stat_is_file(p) != *b
                    }));
            if !changed && !opts.clean {
                // Every earlier "is there a file X?" answer still holds.
                store.seed_exists(prev.exists.clone());
            }
            (changed, !moved.is_empty(), start_times)
        };
        // Per file: (directives changed, Header Hero include lines changed).
        let files_check = || -> Vec<(bool, bool)> {
            (0..prev.paths.len() as FileId)
                .into_par_iter()
                .map(|id| {
                    if progress.cancelled() {
                        return (true, true);
                    }
                    // Files the previous scan only probed (e.g. `__has_include`) were never read:
                    // they are in no closure, so there is nothing to compare.
                    let Some(old) = &prev.files[id as usize] else {
                        return (false, false);
                    };
                    let new = store.data(id);
                    if Arc::ptr_eq(&old.lex, &new.lex) {
                        return (false, false);
                    }
                    let (o, n) = (&old.lex, &new.lex);
                    (
                        !(old.error == new.error
                            && o.directives == n.directives
                            && o.guard == n.guard
                            && o.pragma_once == n.pragma_once),
                        !(old.error == new.error
                            && o.hh_includes == n.hh_includes
                            && o.hh_errors == n.hh_errors),
                    )
                })
                .collect()
        };
        let ((changed_dirs, moved_dirs, start_times), file_changes) =
            rayon::join(dirs_check, files_check);
        FileChecks {
            store,
            prev,
            changed_dirs,
            moved_dirs,
            start_times,
            file_changes,
        }
    }
}
