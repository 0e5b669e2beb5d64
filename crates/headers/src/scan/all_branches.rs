//! Phase 5b of a scan: Header Hero's "all branches" graph (every `#include` line, no macros)
//! built breadth-first from the TUs, its report with true reachability, and its cuts.

use super::reports::{
    NOTE_ALL_BRANCHES, NOTE_HH_SYSTEM, NodeMap, ReportInputs, add_walk_errors, finish_graph,
    skipped_files,
};
use crate::cuts;
use crate::report::{ModeData, Report, TuReach};
use crate::state::HhGraph;
use crate::store::{FileData, FileId, Store};
use crate::util::{FxMap, FxSet, normalize};
use crate::{Mode, Progress};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Breadth-first scan from the TUs, exactly as `Scanner.cs` resolves (see notes §2): `"x"` tries
/// the includer's directory, then the include dirs in order; `<x>` only the include dirs; results
/// cached per include string. Files are read in parallel per wave.
pub(super) fn hh_graph(
    store: &Store,
    tus: &[FileId],
    inc_dirs: &[PathBuf],
    progress: &Progress,
) -> HhGraph {
    let mut g = HhGraph::default();
    // The TUs in the order the walk of the roots lists them (not by file id: a TU new since the
    // last scan has the highest id, and the report's node order follows this one).
    let mut queued: FxSet<FileId> = FxSet::default();
    let wave: Vec<FileId> = tus.iter().copied().filter(|&t| queued.insert(t)).collect();
    let mut wave = wave;
    g.order = wave.clone();
    let mut sys_cache: FxMap<String, Option<FileId>> = FxMap::default();
    let resolve_angle = |s: &str, cache: &mut FxMap<String, Option<FileId>>| -> Option<FileId> {
        if let Some(r) = cache.get(s) {
            return *r;
        }
        let mut r = None;
        for d in inc_dirs {
            let q = normalize(&d.join(s));
            if store.is_file(&q) {
                r = Some(store.id_of(&q));
                break;
            }
        }
        // Misses too: existence answers are fixed for the whole scan.
        cache.insert(s.to_string(), r);
        r
    };
    while !wave.is_empty() && !progress.cancelled() {
        // Read, lex and resolve the includer-relative `"x"` includes in parallel (path joins and
        // existence checks are most of a rescan's all-branches time); ids are then assigned
        // serially in the same order as before, so the graph is the same on every run.
        let datas: Vec<(Arc<FileData>, Vec<Option<PathBuf>>)> = wave
            .par_iter()
            .map(|&f| {
                let data = store.data(f);
                let dir = store.path(f).parent().map(|p| p.to_path_buf());
                let dir = dir.unwrap_or_default();
                let local = data
                    .lex
                    .hh_includes
                    .iter()
                    .map(|inc| {
                        inc.quoted
                            .then(|| normalize(&dir.join(&inc.name)))
                            .filter(|q| store.is_file(q))
                    })
                    .collect();
                (data, local)
            })
            .collect();
        let mut next = Vec::new();
        for (&f, (data, local)) in wave.iter().zip(&datas) {
            let mut out: Vec<(u32, FileId)> = Vec::new();
            // (line, name, written with <>)
            let mut sysi: Vec<(u32, String, bool)> = Vec::new();
            for l in &data.lex.hh_errors {
                g.errors
                    .push((f, *l, "could not parse line (Header Hero 2011 rule)".into()));
            }
            for (inc, found) in data.lex.hh_includes.iter().zip(local) {
                if inc.quoted {
                    if let Some(q) = found {
                        out.push((inc.line, store.id_of(q)));
                    } else if !sysi.iter().any(|s| s.1 == inc.name) {
                        sysi.push((inc.line, inc.name.clone(), false));
                    }
                }
            }
            for inc in &data.lex.hh_includes {
                if !inc.quoted {
                    sysi.push((inc.line, inc.name.clone(), true));
                }
            }
            // HH resolves quoted fallbacks and angle includes in that list order.
            let mut ordered = sysi;
            ordered.sort_by_key(|s| s.0);
            for (line, name, angle) in ordered {
                match resolve_angle(&name, &mut sys_cache) {
                    Some(t) => out.push((line, t)),
                    None => g.missing.push((f, line, name, angle)),
                }
            }
            for &(_, t) in &out {
                if queued.insert(t) {
                    g.order.push(t);
                    next.push(t);
                }
            }
            out.sort();
            g.edges.insert(f, out);
        }
        wave = next;
    }
    g
}

/// Phase 5b, the all-branches report from its graph `h` over the TUs `tus`.
pub(super) fn report_hh(x: &ReportInputs<'_>, h: &HhGraph, tus: &[FileId]) -> Report {
    let mut notes = vec![NOTE_ALL_BRANCHES.to_string()];
    if !h.missing.is_empty() {
        notes.push(NOTE_HH_SYSTEM.into());
    }
    let mut md = mode_data_hh(x.store, h, tus, x.roots, x.walk_errors);
    md.skipped = skipped_files(x.skipped, x.roots);
    let full = x.opts.mode == Mode::AllBranches || !x.opts.other_mode_summary_only;
    Report::build(md, x.secs, notes, x.stats.clone(), full)
}

/// Every directive's saving in the all-branches report `r`: exact (no macros).
pub(super) fn cuts_hh(r: &Report, store: &Store, h: &HhGraph) -> Vec<cuts::Cut> {
    let node_of: FxMap<FileId, u32> = r
        .graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (store.id_of(&n.abs), i as u32))
        .collect();
    let mut multi: FxSet<(u32, u32)> = FxSet::default();
    for (a, list) in &h.edges {
        let mut seen: FxSet<FileId> = FxSet::default();
        for &(_, b) in list {
            if !seen.insert(b)
                && let (Some(&x), Some(&y)) = (node_of.get(a), node_of.get(&b))
            {
                multi.insert((x, y));
            }
        }
    }
    cuts::estimate(r, &multi, &cuts::MacroUse::default())
}

fn mode_data_hh(
    store: &Store,
    h: &HhGraph,
    tus: &[FileId],
    roots: &[PathBuf],
    walk_errors: &[(PathBuf, String)],
) -> ModeData {
    let counted = |_: &Path| true;
    let mut nm = NodeMap::new(store, roots);
    let mut edges = Vec::new();
    for &f in h.order.iter().filter(|f| h.edges.contains_key(f)) {
        let a = nm.get(f, &counted);
        for &(l, t) in &h.edges[&f] {
            if t == f {
                continue; // HH skips self-includes in its analytics
            }
            let b = nm.get(t, &counted);
            edges.push((a, l, b));
        }
    }
    let mut errors = Vec::new();
    for (f, l, m) in &h.errors {
        let a = nm.get(*f, &counted);
        errors.push((a, *l, m.clone()));
    }
    for (i, &id) in nm.ids.clone().iter().enumerate() {
        if let Some(e) = &store.data(id).error {
            errors.push((i as u32, 0, e.clone()));
        }
    }
    add_walk_errors(&mut nm, walk_errors, &mut errors, &counted);
    let missing: Vec<(u32, u32, String, bool)> = h
        .missing
        .iter()
        .map(|(f, l, n, a)| (nm.get(*f, &counted), *l, n.clone(), *a))
        .collect();
    let tun: Vec<u32> = tus.iter().map(|&t| nm.get(t, &counted)).collect();
    let mut graph = finish_graph(nm.nodes, edges, Vec::new());
    // True reachability per TU (BFS over the union graph).
    let n = graph.nodes.len();
    let mut mark = vec![u32::MAX; n];
    let mut tus_r = Vec::new();
    // Missing includes by distinct (name, angle), numbered: each TU marks the ones it reaches
    // (a TU reaches hundreds of includers of the same few missing names).
    let mut miss_ids: FxMap<(&str, bool), u32> = FxMap::default();
    // By node, dense: the walk below asks it for every node of every TU's closure.
    let mut miss_by: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (f, _, nmx, a) in &missing {
        let n = miss_ids.len() as u32;
        let id = *miss_ids.entry((nmx.as_str(), *a)).or_insert(n);
        miss_by[*f as usize].push(id);
    }
    let mut miss_count = vec![0u32; miss_ids.len()];
    let mut miss_mark = vec![u32::MAX; miss_ids.len()];
    for (k, &t) in tun.iter().enumerate() {
        graph.nodes[t as usize].is_tu = true;
        let mut st = vec![t];
        mark[t as usize] = k as u32;
        let mut closure = Vec::new();
        while let Some(v) = st.pop() {
            closure.push(v);
            for &m in &miss_by[v as usize] {
                if miss_mark[m as usize] != k as u32 {
                    miss_mark[m as usize] = k as u32;
                    miss_count[m as usize] += 1;
                }
            }
            for &(w, _) in &graph.out[v as usize] {
                if mark[w as usize] != k as u32 {
                    mark[w as usize] = k as u32;
                    st.push(w);
                }
            }
        }
        tus_r.push(TuReach {
            node: t,
            closure,
            edges: None,
            config: 0,
        });
    }
    let missing_tus: FxMap<(String, bool), u32> = miss_ids
        .into_iter()
        .filter(|&(_, id)| miss_count[id as usize] > 0)
        .map(|((n, a), id)| ((n.to_string(), a), miss_count[id as usize]))
        .collect();
    graph.tus = tus_r;
    ModeData {
        mode: Mode::AllBranches,
        configs: Vec::new(),
        graph,
        missing,
        missing_tus,
        errors,
        skipped: Vec::new(),
    }
}
