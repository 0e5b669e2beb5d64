//! Phase 6 of a scan (`--cuts N`, preprocessed mode): every directive's estimated saving,
//! then the top ones confirmed by evaluating the affected TUs again with the edit.

use super::ScanError;
use super::evaluate::EvalContext;
use super::prepare::Prepared;
use super::reports::ReportInputs;
use crate::Progress;
use crate::cuts;
use crate::eval::{self, TuResult};
use crate::lex::{self, DKind};
use crate::report::Report;
use crate::store::{FileId, Store};
use crate::util::Sym;
use crate::util::{FxMap, FxSet, relative_to};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Phase 6, the cuts' exact check (`--cuts N`, preprocessed mode): the TUs a cut affects are
/// evaluated again with its directive removed (or its header emptied), over the scan's own
/// evaluation context (memo, edge table, base macros), so the top of the list is the compiler's
/// truth.
pub(super) struct ExactCheck<'a> {
    pub(super) ctx: &'a EvalContext<'a>,
    pub(super) prepared: &'a [Prepared],
    /// The scan's TU results, in `prepared`'s order.
    pub(super) results: &'a [(TuResult, bool)],
    pub(super) counted_prefixes: &'a [PathBuf],
    pub(super) count_system: bool,
    pub(super) progress: &'a Progress,
}

impl<'a> ExactCheck<'a> {
    /// The check over the scan's evaluation context and TU results (in `prepared`'s order).
    pub(super) fn new(
        x: &ReportInputs<'a>,
        ctx: &'a EvalContext<'a>,
        prepared: &'a [Prepared],
        results: &'a [(TuResult, bool)],
        progress: &'a Progress,
    ) -> Self {
        ExactCheck {
            ctx,
            prepared,
            results,
            counted_prefixes: x.counted_prefixes,
            count_system: x.opts.count_system,
            progress,
        }
    }
}

/// The report's graph nodes seen from the store: what a closure of store files weighs.
struct NodeWeights {
    /// The store file of each graph node.
    ids: Vec<FileId>,
    node_of: FxMap<FileId, u32>,
    /// Per store file: its counted lines when it is a graph node.
    weight: Vec<Option<u64>>,
}

impl ExactCheck<'_> {
    /// Every directive's saving in the preprocessed report `r`, estimated, then the top `top`
    /// confirmed exactly; if exact figures reorder the top, the newcomers too (at most twice
    /// `top` checks).
    pub(super) fn cuts(
        &self,
        r: &Report,
        edge_tab: &[(FileId, u32, FileId)],
        top: usize,
    ) -> Result<Vec<cuts::Cut>, ScanError> {
        let store = self.ctx.store;
        let ids: Vec<FileId> = r.graph.nodes.iter().map(|n| store.id_of(&n.abs)).collect();
        let mut cuts = cuts_pre(r, store, &ids, edge_tab);
        let node_of: FxMap<FileId, u32> = ids
            .iter()
            .enumerate()
            .map(|(i, &f)| (f, i as u32))
            .collect();
        let mut weight: Vec<Option<u64>> = vec![None; store.len()];
        for (v, n) in r.graph.nodes.iter().enumerate() {
            weight[ids[v] as usize] = Some(if n.counted || n.is_tu {
                n.lines as u64
            } else {
                0
            });
        }
        let nodes = NodeWeights {
            ids,
            node_of,
            weight,
        };
        let mut confirmed = 0;
        while confirmed < 2 * top && !self.progress.cancelled() {
            let todo: Vec<usize> = (0..cuts.len().min(top))
                .filter(|&i| !cuts[i].exact)
                .take(2 * top - confirmed)
                .collect();
            if todo.is_empty() {
                break;
            }
            for i in todo {
                let t = Instant::now();
                let (saved, tus) = self.confirm(&cuts[i], &nodes);
                let tus_affected = tus.len() as u32;
                if std::env::var_os("CLIPFORGE_HEADERS_TIMING").is_some() {
                    eprintln!(
                        "[headers]   exact check of {}:{} -> {}: {:.3} s",
                        cuts[i].includer,
                        cuts[i].line,
                        cuts[i].included,
                        t.elapsed().as_secs_f64()
                    );
                }
                let c = cuts[i].clone().with_tus(tus);
                cuts[i] = cuts::Cut {
                    lines_saved: saved,
                    tus_affected,
                    exact: true,
                    ..c
                };
                confirmed += 1;
            }
            cuts::sort_cuts(&mut cuts);
        }
        // A check stopped halfway has no exact figure to report.
        if self.progress.cancelled() {
            return Err(ScanError::Cancelled);
        }
        Ok(cuts)
    }

    /// The counted lines of a closure, without `empty` (the header a cut empties).
    fn lines_of(&self, nodes: &NodeWeights, closure: &[FileId], empty: Option<FileId>) -> u64 {
        let store = self.ctx.store;
        let counted = |p: &Path| {
            self.count_system
                || self
                    .counted_prefixes
                    .iter()
                    .any(|r| relative_to(p, r).is_some())
        };
        closure
            .iter()
            .filter(|&&f| Some(f) != empty)
            .map(|&f| match nodes.weight.get(f as usize) {
                Some(Some(w)) => *w,
                _ if counted(&store.path(f)) => store.data(f).lex.lines as u64,
                _ => 0,
            })
            .sum()
    }

    /// One cut's exact saving and the (graph node, configuration) of the TUs whose closure it
    /// changes: the TUs that took the directive (or opened the header) evaluated again with the
    /// edit.
    fn confirm(&self, c: &cuts::Cut, nodes: &NodeWeights) -> (i64, Vec<(u32, u32)>) {
        let ctx = self.ctx;
        let f = nodes.ids[c.from as usize];
        let empty = c.kind == cuts::CutKind::EmptyHeader;
        let skip = eval::Skip::new(f, (!empty).then_some(c.line), ctx.edge_table);
        let changed: Vec<(i64, FileId, u32)> = self
            .prepared
            .par_iter()
            .zip(self.results)
            .filter(|(_, (r, _))| {
                if empty || c.other_directives {
                    r.closure.contains(&f)
                } else {
                    r.edges.iter().any(|&e| skip.removes(e))
                }
            })
            .filter_map(|(p, (r, _))| {
                if self.progress.cancelled() {
                    return None;
                }
                let base = p.base.get(ctx.interner, ctx.syms, ctx.def_pool);
                let input = p.input(base, ctx.memo, ctx.edge_table, Some(&skip));
                let nr = eval::run_tu(ctx.store, ctx.syms, &input);
                let old = self.lines_of(nodes, &r.closure, None) as i64;
                let new = self.lines_of(nodes, &nr.closure, empty.then_some(f)) as i64;
                (old != new).then_some((old - new, p.tu, p.config))
            })
            .collect();
        let saved = changed.iter().map(|c| c.0).sum();
        let tus = changed
            .iter()
            .filter_map(|c| nodes.node_of.get(&c.1).map(|&n| (n, c.2)))
            .collect();
        (saved, tus)
    }
}

/// Every directive's saving in the preprocessed report `r` (module [`cuts`]); `ids`: the store
/// file of each graph node; `edge_tab`: the session's edges (every directive line ever taken).
fn cuts_pre(
    r: &Report,
    store: &Store,
    ids: &[FileId],
    edge_tab: &[(FileId, u32, FileId)],
) -> Vec<cuts::Cut> {
    let node_of: FxMap<FileId, u32> = ids
        .iter()
        .enumerate()
        .map(|(i, &f)| (f, i as u32))
        .collect();
    let mut lines: FxMap<(u32, u32), FxSet<u32>> = FxMap::default();
    for &(a, l, b) in edge_tab {
        if let (Some(&x), Some(&y)) = (node_of.get(&a), node_of.get(&b)) {
            lines.entry((x, y)).or_default().insert(l);
        }
    }
    let multi: FxSet<(u32, u32)> = lines
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(k, _)| k)
        .collect();
    let (defs, tests): (Vec<Vec<Sym>>, Vec<Vec<Sym>>) = ids
        .par_iter()
        .map(|&f| {
            let d = store.data(f);
            let (mut defs, mut tests) = (Vec::new(), Vec::new());
            let idents = |t: &[lex::Tok], out: &mut Vec<Sym>| {
                out.extend(t.iter().filter(|t| t.kind == lex::TK::Ident).map(|t| t.sym))
            };
            for x in d.lex.directives.iter() {
                match &x.kind {
                    DKind::Define(m) => defs.push(m.name),
                    DKind::Undef(s) => defs.push(*s),
                    DKind::If(t) | DKind::Elif(t) => idents(t, &mut tests),
                    DKind::Ifdef(s) | DKind::Ifndef(s) | DKind::Elifdef(s) | DKind::Elifndef(s) => {
                        tests.push(*s)
                    }
                    DKind::Include {
                        spec: lex::IncSpec::Macro(t),
                        ..
                    } => idents(t, &mut tests),
                    _ => {}
                }
            }
            for v in [&mut defs, &mut tests] {
                v.sort_unstable();
                v.dedup();
            }
            (defs, tests)
        })
        .unzip();
    cuts::estimate(r, &multi, &cuts::MacroUse { defs, tests })
}
