//! Phase 4 of a scan: the TUs preprocessed in parallel (module `eval`), or their previous
//! result taken when it still holds.

use super::prepare::{DefPool, Prepared};
use crate::Progress;
use crate::eval::{self, TuResult};
use crate::pp::Syms;
use crate::store::Store;
use crate::util::Interner;
use rayon::prelude::*;
use std::sync::atomic::Ordering;

/// What evaluating a TU needs besides the TU itself (shared by the scan and the exact checks).
#[derive(Clone, Copy)]
pub(super) struct EvalContext<'a> {
    pub(super) store: &'a Store,
    pub(super) syms: &'a Syms,
    pub(super) interner: &'a Interner,
    pub(super) def_pool: &'a DefPool,
    /// `None` with `--no-memo`.
    pub(super) memo: Option<&'a eval::Memo>,
    pub(super) edge_table: &'a eval::EdgeTable,
}

/// Phase 4, evaluate the TUs (in parallel): a TU whose previous result still holds takes it
/// (`true` beside it), the others are run through the evaluator.
pub(super) fn evaluate_tus(
    prepared: &[Prepared],
    reusable: Vec<Option<TuResult>>,
    ctx: &EvalContext<'_>,
    progress: &Progress,
) -> Vec<(TuResult, bool)> {
    let EvalContext {
        store,
        syms,
        interner,
        def_pool,
        memo,
        edge_table,
    } = *ctx;
    prepared
        .par_iter()
        .zip(reusable)
        .map(|(p, reused)| {
            if progress.cancelled() {
                return (TuResult::default(), false);
            }
            let r = match reused {
                Some(r) => (r, true),
                None => {
                    let base = p.base.get(interner, syms, def_pool);
                    let input = p.input(base, memo, edge_table, None);
                    (eval::run_tu(store, syms, &input), false)
                }
            };
            progress.tus_done.fetch_add(1, Ordering::Relaxed);
            r
        })
        .collect()
}
