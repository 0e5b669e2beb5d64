//! Phase 5a of a scan: the preprocessed report, from the TUs' results mapped onto report
//! nodes; also the node map and graph assembly the all-branches report shares.

use super::prepare::Prepared;
use crate::eval::TuResult;
use crate::report::{Graph, ModeData, Node, Report, ScanStats, TuReach};
use crate::store::{FileId, Store};
use crate::util::{FxMap, FxSet, relative_to};
use crate::{Mode, Project, ScanOptions};
use std::path::{Path, PathBuf};

const NOTE_PREPROCESSED: &str = "preprocessed: conditionals, macros, include guards, #pragma once, #include_next and #include MACRO evaluated per translation unit (the closure `g++ -M` reports)";
pub(super) const NOTE_ALL_BRANCHES: &str = "all branches: Header Hero's definition (every #include line, all #if branches, no macros, no #include_next), with true reachability";
pub(super) const NOTE_HH_SYSTEM: &str =
    "system headers are unresolved unless their directories are given with -I";

pub(super) fn skipped_files(
    skipped: &[(PathBuf, &'static str)],
    roots: &[PathBuf],
) -> Vec<crate::report::SkippedFile> {
    skipped
        .iter()
        .map(|(p, kind)| crate::report::SkippedFile {
            path: display_path(p, roots),
            kind: kind.to_string(),
        })
        .collect()
}

fn display_path(p: &Path, roots: &[PathBuf]) -> String {
    for r in roots {
        if let Some(rel) = relative_to(p, r)
            && !rel.is_empty()
        {
            return String::from_utf8_lossy(rel).into_owned();
        }
    }
    p.to_string_lossy().into_owned()
}

pub(super) struct NodeMap<'a> {
    pub(super) store: &'a Store,
    pub(super) roots: &'a [PathBuf],
    /// Node per file id (dense: reports map millions of closure and edge entries).
    pub(super) idx: Vec<u32>,
    pub(super) nodes: Vec<Node>,
    pub(super) ids: Vec<FileId>,
}

impl<'a> NodeMap<'a> {
    pub(super) fn new(store: &'a Store, roots: &'a [PathBuf]) -> Self {
        NodeMap {
            store,
            roots,
            idx: vec![u32::MAX; store.len()],
            nodes: Vec::new(),
            ids: Vec::new(),
        }
    }

    #[inline]
    pub(super) fn get(&mut self, f: FileId, counted: &dyn Fn(&Path) -> bool) -> u32 {
        match self.idx.get(f as usize) {
            Some(&i) if i != u32::MAX => i,
            _ => self.add(f, counted),
        }
    }

    fn add(&mut self, f: FileId, counted: &dyn Fn(&Path) -> bool) -> u32 {
        if f as usize >= self.idx.len() {
            self.idx.resize(f as usize + 1, u32::MAX);
        }
        let path = self.store.path(f);
        let data = self.store.data(f);
        let i = self.nodes.len() as u32;
        self.nodes.push(Node {
            path: display_path(&path, self.roots),
            counted: counted(&path),
            lines: data.lex.lines,
            is_tu: false,
            abs: path,
        });
        self.ids.push(f);
        self.idx[f as usize] = i;
        i
    }
}

pub(super) fn finish_graph(
    nodes: Vec<Node>,
    edges: Vec<(u32, u32, u32)>,
    tus: Vec<TuReach>,
) -> Graph {
    let n = nodes.len();
    let mut out: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    let mut inc: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    for (a, l, b) in edges {
        out[a as usize].push((b, l));
    }
    for (a, o) in out.iter_mut().enumerate() {
        // Keep the first (lowest-line) edge per target.
        o.sort_by_key(|e| (e.0, e.1));
        o.dedup_by_key(|e| e.0);
        for &(b, l) in o.iter() {
            inc[b as usize].push((a as u32, l));
        }
    }
    Graph {
        nodes,
        out,
        inc,
        tus,
        edge_tab: Vec::new(),
    }
}

fn mode_data_pre(
    store: &Store,
    results: &[(&TuResult, u32)],
    edge_tab: &[(FileId, u32, FileId)],
    roots: &[PathBuf],
    counted_prefixes: &[PathBuf],
    count_system: bool,
    walk_errors: &[(PathBuf, String)],
) -> ModeData {
    let counted =
        |p: &Path| count_system || counted_prefixes.iter().any(|r| relative_to(p, r).is_some());
    let mut nm = NodeMap::new(store, roots);
    // The session's edge table in node space; only the edges some TU took get mapped (the
    // others may name files no TU reached).
    let mut node_tab: Vec<(u32, u32, u32)> = vec![(u32::MAX, 0, u32::MAX); edge_tab.len()];
    let mut edges: Vec<(u32, u32, u32)> = Vec::new();
    let mut tus = Vec::new();
    let mut missing = Vec::new();
    let mut missing_tus: FxMap<(String, bool), u32> = FxMap::default();
    let mut errors = Vec::new();
    for &(r, config) in results {
        let tn = nm.get(r.tu, &counted);
        nm.nodes[tn as usize].is_tu = true;
        let closure: Vec<u32> = r.closure.iter().map(|&f| nm.get(f, &counted)).collect();
        for &i in r.edges.iter() {
            let Some(&(a, l, b)) = edge_tab.get(i as usize) else {
                continue;
            };
            let e = &mut node_tab[i as usize];
            if e.0 == u32::MAX {
                *e = (nm.get(a, &counted), l, nm.get(b, &counted));
                edges.push(*e);
            }
        }
        tus.push(TuReach {
            node: tn,
            closure,
            edges: Some(r.edges.clone()),
            config,
        });
        let mut hit: FxSet<(String, bool)> = FxSet::default();
        for (f, l, n, a) in &r.missing {
            let fi = nm.get(*f, &counted);
            missing.push((fi, *l, n.clone(), *a));
            hit.insert((n.clone(), *a));
        }
        for k in hit {
            *missing_tus.entry(k).or_default() += 1;
        }
        for (f, l, m) in &r.errors {
            let fi = nm.get(*f, &counted);
            errors.push((fi, *l, m.clone()));
        }
    }
    // Lexical errors of files that were read (unterminated comments etc.).
    for i in 0..nm.nodes.len() {
        let d = store.data(nm.ids[i]);
        for (l, m) in &d.lex.errors {
            errors.push((i as u32, *l, m.clone()));
        }
    }
    add_walk_errors(&mut nm, walk_errors, &mut errors, &counted);
    missing.sort();
    missing.dedup();
    let mut graph = finish_graph(nm.nodes, edges, tus);
    graph.edge_tab = node_tab;
    ModeData {
        mode: Mode::Preprocessed,
        configs: Vec::new(),
        graph,
        missing,
        missing_tus,
        errors,
        skipped: Vec::new(),
    }
}

/// What both modes' reports are built from, besides their own graphs.
pub(super) struct ReportInputs<'a> {
    pub(super) project: &'a Project,
    pub(super) opts: &'a ScanOptions,
    pub(super) store: &'a Store,
    pub(super) roots: &'a [PathBuf],
    /// Files under these count (with `opts.count_system`, every file does).
    pub(super) counted_prefixes: &'a [PathBuf],
    pub(super) walk_errors: &'a [(PathBuf, String)],
    pub(super) skipped: &'a [(PathBuf, &'static str)],
    pub(super) notes: &'a [String],
    pub(super) stats: &'a ScanStats,
    pub(super) secs: f64,
}

/// Phase 5a, the preprocessed report: each TU's result (in `prepared`'s order) over the
/// session's edge table.
pub(super) fn report_pre(
    x: &ReportInputs<'_>,
    results: &[(TuResult, bool)],
    prepared: &[Prepared],
    edge_tab: &[(FileId, u32, FileId)],
) -> Report {
    let trs: Vec<(&TuResult, u32)> = results
        .iter()
        .zip(prepared)
        .map(|(r, p)| (&r.0, p.config))
        .collect();
    let mut md = mode_data_pre(
        x.store,
        &trs,
        edge_tab,
        x.roots,
        x.counted_prefixes,
        x.opts.count_system,
        x.walk_errors,
    );
    md.skipped = skipped_files(x.skipped, x.roots);
    md.configs = x.project.configs.iter().map(|c| c.name.clone()).collect();
    let mut notes = x.notes.to_vec();
    notes.push(NOTE_PREPROCESSED.into());
    let full = x.opts.mode == Mode::Preprocessed || !x.opts.other_mode_summary_only;
    Report::build(md, x.secs, notes, x.stats.clone(), full)
}

pub(super) fn add_walk_errors(
    nm: &mut NodeMap,
    walk_errors: &[(PathBuf, String)],
    errors: &mut Vec<(u32, u32, String)>,
    counted: &dyn Fn(&Path) -> bool,
) {
    for (p, m) in walk_errors {
        let id = nm.store.id_of(p);
        let i = nm.get(id, counted);
        errors.push((i, 0, m.clone()));
    }
}
