//! Scan orchestration: find translation units, set up per-TU search paths and macro tables,
//! preprocess TUs in parallel (rayon) with progress and cancellation, build the Header Hero
//! "all branches" graph, and turn both into reports. A [`Scanner`] keeps the previous scan in
//! memory (and on disk through `cache`) so a rescan re-reads only changed files and re-evaluates
//! only TUs whose files changed their directives.
//!
//! [`Scanner::scan`] runs the phases in order, one module each: [`compilers`] (phase 0, asking
//! the compiler early, and 3, settling each language's environment), [`walk`] (1, the TUs and
//! their flags), [`files`] (2, re-reading changed files), [`prepare`] (3a, search paths and base
//! macro tables per TU), [`evaluate`] (4, preprocessing the TUs), [`reports`] (5a, the
//! preprocessed report) and [`all_branches`] (5b, Header Hero's graph and report), [`exact`]
//! (6, the cuts' exact check), [`remember`] (7, what the next scan reuses).

mod all_branches;
mod compilers;
mod evaluate;
mod exact;
mod files;
mod prepare;
mod remember;
mod reports;
mod walk;

use crate::compdb::TuFlags;
use crate::compiler::{CompilerEnv, Lang};
use crate::eval::{self, TuResult};
use crate::pp::Syms;
use crate::report::{Report, ScanStats};
use crate::state::{HhGraph, Prev};
use crate::store::{self, FileId, Store};
use crate::util::{FxMap, FxSet, Interner};
use crate::{Mode, Progress, Project, ScanOptions};
use all_branches::{cuts_hh, hh_graph, report_hh};
use compilers::{EarlyAnswers, settle_compilers};
use evaluate::{EvalContext, evaluate_tus};
use exact::ExactCheck;
use files::FileChecks;
use prepare::{DefPool, Prepared, prepare_tus};
use remember::{remember_scan, stamp_dirs};
use reports::{ReportInputs, report_pre};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;
use walk::Walk;

/// Both modes' reports, side by side. `primary` is the mode asked for.
pub struct ScanResult {
    pub primary: Report,
    pub secondary: Option<Report>,
}

/// Errors that stop a scan (bad input); problems inside the tree are report entries instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScanError {
    #[error("{}: source root does not exist", .0.display())]
    NoRoot(PathBuf),
    #[error("configuration name {0:?} given twice")]
    ConfigTwice(String),
    #[error(transparent)]
    CompDb(#[from] crate::compdb::CompDbError),
    /// The app could not start the thread a scan runs on.
    #[error("cannot start the scan thread: {0}")]
    NoThread(String),
    /// The compiler asked for predefined macros and system dirs could not be run or refused.
    #[error(transparent)]
    Compiler(#[from] crate::compiler::CompilerError),
    #[error("scan cancelled")]
    Cancelled,
}

pub const TU_EXTS: &[&str] = &["c", "cc", "cpp", "cxx", "m", "mm"];

/// A translation unit with everything that decides what it includes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TuSpec {
    pub file: PathBuf,
    pub lang: Lang,
    /// Shared by the TUs that have the same flags (all of them without a compilation database):
    /// per-flags work is then done once per distinct `Arc`, not once per TU.
    pub flags: Arc<TuFlags>,
    /// Index of its configuration in [`Project::configs`] (0 without configurations).
    pub config: u32,
}

/// The distinct flag sets of `specs`, by identity (TUs sharing an `Arc` count once).
fn distinct_flags(specs: &[TuSpec]) -> Vec<&Arc<TuFlags>> {
    let mut seen: FxSet<*const TuFlags> = FxSet::default();
    specs
        .iter()
        .map(|s| &s.flags)
        .filter(|f| seen.insert(Arc::as_ptr(f)))
        .collect()
}

/// A scanning session: reuse it for rescans (the GUI keeps one; the CLI loads it from the cache).
pub struct Scanner {
    pub interner: Arc<Interner>,
    pub prev: Prev,
    /// The last scan changed something worth saving to the disk cache.
    pub dirty: bool,
    /// Map the disk cache file instead of reading it (see `cache::cache_bytes`): for a
    /// short-lived process, which the file cannot change under.
    pub map_cache_file: bool,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

impl Scanner {
    pub fn new() -> Self {
        Scanner {
            interner: Arc::new(Interner::new()),
            prev: Prev::default(),
            dirty: true,
            map_cache_file: false,
        }
    }

    /// Runs a scan. Reuses the previous scan held by this session unless `opts.clean`.
    pub fn scan(
        &mut self,
        project: &Project,
        opts: &ScanOptions,
        progress: &Progress,
    ) -> Result<ScanResult, ScanError> {
        let t0 = Instant::now();
        if opts.clean {
            self.prev = Prev::default();
        }
        let want_pre = opts.mode == Mode::Preprocessed || opts.both_modes;
        let early_answers = self.ask_compiler_early(project, want_pre);
        let walk = self.walk(project, progress)?;
        progress
            .tus_total
            .store(walk.specs.len(), Ordering::Relaxed);

        let mut checks = self.check_files(opts, progress);
        if progress.cancelled() {
            return Err(ScanError::Cancelled);
        }

        // Compiler environments per (lang, std).
        let syms = Syms::new(&self.interner);
        let plan = HhPlan::new(project, opts, &walk.specs, &mut checks);
        let run = Run {
            project,
            opts,
            progress,
            t0,
            want_pre,
        };
        self.evaluate_and_report(&run, walk, checks, plan, early_answers, syms)
    }

    /// Phases 3 to 7 over the walk's TUs and the checked files, with the all-branches graph
    /// built on a thread of its own beside them.
    fn evaluate_and_report(
        &mut self,
        run: &Run<'_>,
        walk: Walk,
        checks: FileChecks,
        plan: HhPlan,
        early_answers: Option<EarlyAnswers>,
        syms: Syms,
    ) -> Result<ScanResult, ScanError> {
        let (project, opts, progress) = (run.project, run.opts, run.progress);
        let Walk {
            roots,
            mut notes,
            walk_errors,
            skipped,
            new_walk,
            specs,
        } = walk;
        let FileChecks {
            store,
            mut prev,
            changed_dirs,
            moved_dirs,
            start_times,
            file_changes,
        } = checks;
        let mut compilers = std::mem::take(&mut prev.compilers);
        let mut envs: FxMap<(Lang, Option<String>), CompilerEnv> = FxMap::default();
        let out = std::thread::scope(|sc| {
            // The all-branches walk runs on its own thread through the whole preprocessed pass:
            // neither waits at the other's barriers (both use the pool), serial steps overlap.
            let hh_job = (plan.want && plan.kept.is_none())
                .then(|| sc.spawn(|| hh_graph(&store, &plan.hh_tu_ids, &plan.hh_dirs, progress)));
            settle_compilers(
                project,
                &specs,
                run.want_pre,
                early_answers,
                &mut compilers,
                &mut envs,
                &mut notes,
                progress,
            )?;
            if progress.cancelled() {
                return Err(ScanError::Cancelled);
            }

            let def_pool = DefPool::default();
            let prepared: Vec<Prepared> = if run.want_pre {
                prepare_tus(&specs, &plan.tu_ids, &envs, &store)
            } else {
                Vec::new()
            };

            // Preprocess TUs (reusing unchanged ones).
            progress.set_phase("preprocessing translation units");
            let prev_tu_count = prev.tus.len();
            let reusable = take_reusable(
                &prepared,
                std::mem::take(&mut prev.tus),
                changed_dirs || opts.clean,
                &file_changes,
            );
            let interner = self.interner.clone();
            let memo = eval::Memo::default();
            let edge_table = eval::EdgeTable::from_vec(std::mem::take(&mut prev.edge_tab));
            let ctx = EvalContext {
                store: &store,
                syms: &syms,
                interner: &interner,
                def_pool: &def_pool,
                memo: (!opts.no_memo).then_some(&memo),
                edge_table: &edge_table,
            };
            let results = evaluate_tus(&prepared, reusable, &ctx, progress);
            if progress.cancelled() {
                return Err(ScanError::Cancelled);
            }

            let hh = hh_job
                .map(|j| j.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .or(plan.kept);
            // The walk stops early when cancelled: its graph must not be reported or kept.
            if progress.cancelled() {
                return Err(ScanError::Cancelled);
            }
            // Build the reports (a file's data is loaded where a report needs its line count).
            progress.set_phase("building report");
            let counted_prefixes = counted_prefixes(&roots, &specs);
            let stats = scan_stats(&store, &results, !prev.paths.is_empty());
            let secs = run.t0.elapsed().as_secs_f64();
            let edge_tab = edge_table.snapshot();
            progress.set_phase("building reports");
            let kept = kept_probes(&mut prev, &store, changed_dirs || moved_dirs || opts.clean);
            let inputs = ReportInputs {
                project,
                opts,
                store: &store,
                roots: &roots,
                counted_prefixes: &counted_prefixes,
                walk_errors: &walk_errors,
                skipped: &skipped,
                notes: &notes,
                stats: &stats,
                secs,
            };
            let pre = run
                .want_pre
                .then_some((&results[..], &prepared[..], &edge_tab[..]));
            let hh_in = hh.as_ref().map(|h| (h, &plan.hh_tu_ids[..]));
            let (mut pre_report, mut hh_report, probes) =
                build_reports(&inputs, pre, hh_in, kept, &start_times);
            if let Some(top) = opts.cuts {
                progress.set_phase("computing cuts");
                let check = ExactCheck::new(&inputs, &ctx, &prepared, &results, progress);
                let reports = (pre_report.as_mut(), hh_report.as_mut());
                add_cuts(opts.mode, top, reports, &check, &edge_tab, hh.as_ref())?;
            }

            // Remember this scan.
            progress.set_phase("remembering the scan");
            let new_prev = remember_scan(
                &store,
                probes.dir_stamps,
                compilers,
                probes.exists,
                edge_tab,
                new_walk,
                hh,
                &plan.hh_tu_ids,
                &plan.hh_dirs,
                &prepared,
                results,
            );
            self.dirty = stats.files_read > 0
                || stats.tus_evaluated > 0
                || moved_dirs
                || new_prev.paths.len() != prev.paths.len()
                || new_prev.tus.len() != prev_tu_count;
            self.prev = new_prev;

            let result = pair_reports(opts.mode, pre_report, hh_report, run.t0.elapsed());
            progress.set_phase("done");
            drop_in_background(memo);
            Ok(result)
        });
        drop_in_background((store, prev));
        out
    }
}

/// What a scan was asked, for the phases after the walk.
#[derive(Clone, Copy)]
struct Run<'a> {
    project: &'a Project,
    opts: &'a ScanOptions,
    progress: &'a Progress,
    t0: Instant,
    /// The preprocessed report is wanted.
    want_pre: bool,
}

/// The report's counters of what the scan read and evaluated; `cache_used`: the scan started
/// from a previous one.
fn scan_stats(store: &Store, results: &[(TuResult, bool)], cache_used: bool) -> ScanStats {
    ScanStats {
        files_read: store.files_read.load(Ordering::Relaxed),
        files_reused: store.files_reused.load(Ordering::Relaxed),
        tus_evaluated: results.iter().filter(|r| !r.1).count(),
        tus_reused: results.iter().filter(|r| r.1).count(),
        cache_used,
    }
}

/// The previous scan's probe answers and directory stamps, kept when they are still exact:
/// nothing probed beyond them, in unchanged directories (`moved`: some directory changed, or
/// the scan is clean).
#[allow(clippy::type_complexity)]
fn kept_probes(
    prev: &mut Prev,
    store: &Store,
    moved: bool,
) -> Probes<Option<store::Answers>, Option<Vec<(PathBuf, Option<i64>)>>> {
    let same_probes =
        !moved && !prev.paths.is_empty() && store.files_stat.load(Ordering::Relaxed) == 0;
    Probes {
        exists: same_probes.then(|| prev.exists.clone()),
        dir_stamps: same_probes.then(|| std::mem::take(&mut prev.dir_stamps)),
    }
}

/// What the all-branches report is built from, settled before the TUs are evaluated. The
/// all-branches graph (Header Hero: global include dirs only, its line parser) needs no
/// compiler: it is built, reading and lexing the project's files, while the compiler is asked
/// (a cold scan's longest serial step).
struct HhPlan {
    /// Every TU's file id, in the walk's order.
    tu_ids: Vec<FileId>,
    /// The TUs of the all-branches graph: all branches ignores macros, so each file is one TU
    /// there, whatever its configurations.
    hh_tu_ids: Vec<FileId>,
    /// The include dirs of every flag set, each once, in order.
    hh_dirs: Vec<PathBuf>,
    /// The all-branches report is wanted.
    want: bool,
    /// The previous all-branches graph, when nothing it was built from changed.
    kept: Option<HhGraph>,
}

impl HhPlan {
    fn new(
        project: &Project,
        opts: &ScanOptions,
        specs: &[TuSpec],
        checks: &mut FileChecks,
    ) -> Self {
        let tu_ids: Vec<FileId> = specs.iter().map(|s| checks.store.id_of(&s.file)).collect();
        let hh_tu_ids: Vec<FileId> = if project.configs.len() > 1 {
            let mut seen = FxSet::default();
            tu_ids.iter().copied().filter(|&t| seen.insert(t)).collect()
        } else {
            tu_ids.clone()
        };
        let want = opts.mode == Mode::AllBranches || opts.both_modes;
        let mut hh_dirs: Vec<PathBuf> = Vec::new();
        for f in distinct_flags(specs) {
            for d in f.include_dirs.iter() {
                if !hh_dirs.contains(d) {
                    hh_dirs.push(d.clone());
                }
            }
        }
        let (changed_dirs, file_changes) = (checks.changed_dirs, &checks.file_changes);
        let kept: Option<HhGraph> = checks
            .prev
            .hh
            .take()
            .filter(|c| {
                want && !opts.clean
                    && !changed_dirs
                    && c.tus == hh_tu_ids
                    && c.dirs == hh_dirs
                    && c.graph
                        .edges
                        .keys()
                        .all(|&f| !file_changes.get(f as usize).is_none_or(|c| c.1))
            })
            .map(|c| c.graph);
        HhPlan {
            tu_ids,
            hh_tu_ids,
            hh_dirs,
            want,
            kept,
        }
    }
}

/// The previous results the TUs of `prepared` can take (moved, not copied: a result holds every
/// edge): none when everything is evaluated again (`fresh`), else each TU whose closure holds
/// no file whose directives changed (`file_changes`, per file id).
fn take_reusable(
    prepared: &[Prepared],
    mut prev_tus: FxMap<(FileId, u64), TuResult>,
    fresh: bool,
    file_changes: &[(bool, bool)],
) -> Vec<Option<TuResult>> {
    prepared
        .iter()
        .map(|p| {
            if fresh {
                return None;
            }
            let r = prev_tus.get(&(p.tu, p.key))?;
            if r.closure
                .iter()
                .any(|&f| file_changes.get(f as usize).is_none_or(|c| c.0))
            {
                return None;
            }
            prev_tus.remove(&(p.tu, p.key))
        })
        .collect()
}

/// The directories whose files are counted: the roots and every flag set's include and quote
/// dirs, each once.
fn counted_prefixes(roots: &[PathBuf], specs: &[TuSpec]) -> Vec<PathBuf> {
    roots
        .iter()
        .cloned()
        .chain(
            distinct_flags(specs)
                .into_iter()
                .flat_map(|f| f.include_dirs.iter().chain(f.quote_dirs.iter()).cloned()),
        )
        .collect::<FxSet<_>>()
        .into_iter()
        .collect()
}

/// The probe answers and directory stamps the next rescan starts from (`None` while not yet
/// known).
struct Probes<E, S> {
    exists: E,
    dir_stamps: S,
}

/// Phase 5, both modes' reports (each when its inputs are given), built on both cores while
/// what the next rescan needs (existence answers, directory stamps) is collected beside them.
/// `kept`: the previous scan's answers and stamps where they still hold; `start_times`: the
/// stamped directories' times read when the scan started.
#[allow(clippy::type_complexity)]
fn build_reports(
    x: &ReportInputs<'_>,
    pre: Option<(&[(TuResult, bool)], &[Prepared], &[(FileId, u32, FileId)])>,
    hh: Option<(&HhGraph, &[FileId])>,
    kept: Probes<Option<store::Answers>, Option<Vec<(PathBuf, Option<i64>)>>>,
    start_times: &[(PathBuf, Option<i64>)],
) -> (
    Option<Report>,
    Option<Report>,
    Probes<store::Answers, Vec<(PathBuf, Option<i64>)>>,
) {
    let store = x.store;
    let reports = || {
        rayon::join(
            || pre.map(|(results, prepared, edge_tab)| report_pre(x, results, prepared, edge_tab)),
            || hh.map(|(h, tus)| report_hh(x, h, tus)),
        )
    };
    let remember = || {
        let exists = kept
            .exists
            .unwrap_or_else(|| store::Answers::new(store.exists_snapshot()));
        let dir_stamps = kept.dir_stamps.unwrap_or_else(|| {
            let mut times = store.listed_dir_times();
            // A directory stamped before keeps the time read at the start of this scan:
            // answers carried over were checked against that state, not a later one.
            times.extend(start_times.iter().cloned());
            stamp_dirs(store.probed_parent_dirs(), times)
        });
        Probes { exists, dir_stamps }
    };
    let ((pre_report, hh_report), probes) = rayon::join(reports, remember);
    (pre_report, hh_report, probes)
}

/// Phase 6, the `top` cuts of the report of `mode`: exact-checked in preprocessed mode, exact
/// by construction in all-branches mode (`hh`: its graph).
fn add_cuts(
    mode: Mode,
    top: usize,
    (pre_report, hh_report): (Option<&mut Report>, Option<&mut Report>),
    check: &ExactCheck<'_>,
    edge_tab: &[(FileId, u32, FileId)],
    hh: Option<&HhGraph>,
) -> Result<(), ScanError> {
    match mode {
        Mode::Preprocessed => {
            if let Some(r) = pre_report {
                r.cuts = Some(check.cuts(r, edge_tab, top)?);
            }
        }
        Mode::AllBranches => {
            if let (Some(r), Some(h)) = (hh_report, hh) {
                r.cuts = Some(cuts_hh(r, check.ctx.store, h));
            }
        }
    }
    Ok(())
}

/// The mode asked for first, the other beside it, each with the whole scan's time and a summary
/// of the other.
fn pair_reports(
    mode: Mode,
    pre_report: Option<Report>,
    hh_report: Option<Report>,
    elapsed: std::time::Duration,
) -> ScanResult {
    let secs = elapsed.as_secs_f64();
    let (mut primary, mut secondary) = match mode {
        Mode::Preprocessed => (pre_report.expect("pre"), hh_report),
        Mode::AllBranches => (hh_report.expect("hh"), pre_report),
    };
    primary.scan_seconds = secs;
    if let Some(s) = &mut secondary {
        s.scan_seconds = secs;
        primary.other_mode = Some(s.summary());
        s.other_mode = Some(primary.summary());
    }
    ScanResult { primary, secondary }
}

/// Frees a scan's working data (the memo's recorded inclusions, the store's maps) on another
/// thread: that is millions of small allocations, 25 ms at the end of a cold gRPC scan that
/// nothing needs to wait for.
fn drop_in_background<T: Send + 'static>(t: T) {
    // If no thread can be started, the closure and `t` are dropped right here instead.
    let _ = std::thread::Builder::new().spawn(move || drop(t));
}
