//! Phase 7 of a scan, remembering: the directory stamps and the [`Prev`] the next scan of the
//! session (or the disk cache) starts from.

use super::files::dir_mtime;
use super::prepare::Prepared;
use crate::compiler::CompilerEnv;
use crate::eval::TuResult;
use crate::state::{HhCached, HhGraph, Prev, WalkCache};
use crate::store::{self, FileId, Store};
use crate::util::FxMap;
use rayon::prelude::*;
use std::path::PathBuf;

/// Modification times of the directories probes looked in. A missing directory is stamped
/// through its deepest existing ancestor instead: creating it, or anything between, changes that
/// ancestor's time. Thousands of missing probe directories (every `-I` dir × `sub/dir/x.h`) then
/// cost a few stats on the next rescan instead of one each.
/// `listed` holds the times to use where known: taken when a directory was listed during the
/// scan, or at its start for directories stamped before.
pub(super) fn stamp_dirs(
    probed: Vec<PathBuf>,
    mut listed: FxMap<PathBuf, Option<i64>>,
) -> Vec<(PathBuf, Option<i64>)> {
    let stamped: Vec<(PathBuf, Option<i64>)> = probed
        .into_par_iter()
        .map(|d| {
            let m = listed.get(&d).copied().unwrap_or_else(|| dir_mtime(&d));
            (d, m)
        })
        .collect();
    let mut known: FxMap<PathBuf, Option<i64>> = FxMap::default();
    let mut missing: Vec<PathBuf> = Vec::new();
    for (d, m) in stamped {
        match m {
            Some(_) => {
                known.insert(d, m);
            }
            None => missing.push(d),
        }
    }
    for d in missing {
        let mut a = d.parent();
        while let Some(x) = a {
            if let Some(m) = known.get(x) {
                if m.is_some() {
                    break;
                }
            } else {
                let m = listed.remove(x).unwrap_or_else(|| dir_mtime(x));
                known.insert(x.to_path_buf(), m);
                if m.is_some() {
                    break;
                }
            }
            a = x.parent();
        }
    }
    let mut v: Vec<(PathBuf, Option<i64>)> =
        known.into_iter().filter(|(_, m)| m.is_some()).collect();
    v.sort();
    v
}

/// Phase 7, remember: what the next scan of this session reuses (files by id, TU results by
/// (TU, setup key), probe answers and directory stamps, the walk, the all-branches graph).
#[allow(clippy::too_many_arguments)]
pub(super) fn remember_scan(
    store: &Store,
    dir_stamps: Vec<(PathBuf, Option<i64>)>,
    compilers: FxMap<String, CompilerEnv>,
    exists: store::Answers,
    edge_tab: Vec<(FileId, u32, FileId)>,
    new_walk: Option<WalkCache>,
    hh: Option<HhGraph>,
    hh_tu_ids: &[FileId],
    hh_dirs: &[PathBuf],
    prepared: &[Prepared],
    results: Vec<(TuResult, bool)>,
) -> Prev {
    let slots = store.all_slots();
    let mut new_prev = Prev {
        paths: slots.iter().map(|s| s.path.clone()).collect(),
        files: slots.iter().map(|s| s.data.get().cloned()).collect(),
        tus: FxMap::default(),
        dir_stamps,
        compilers,
        exists,
        edge_tab,
        walk: new_walk,
        hh: hh.map(|graph| HhCached {
            tus: hh_tu_ids.to_vec(),
            dirs: hh_dirs.to_vec(),
            graph,
        }),
    };
    for (p, (r, _)) in prepared.iter().zip(results) {
        new_prev.tus.insert((p.tu, p.key), r);
    }
    new_prev
}
