//! Per-translation-unit preprocessing ("preprocessed" mode): walks the TU's directives in order,
//! keeps the macro table, evaluates conditionals, follows active `#include`s (guards, `#pragma
//! once`, `#import`, `#include_next`, `#include MACRO`, `__has_include`) exactly like `g++ -M -MG`
//! decides which files a TU opens. Missing files are recorded and not descended, as `-MG` does.

use super::lex::{DKind, IncSpec, Lexed};
use super::pp::{self, Ctx, Effect, Entry, HeaderName, Host, Macros, Syms};
use super::store::{FileData, FileId, SearchPath, Store};
use super::util::{FxMap, FxSet, Sym, fx_hash};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

/// Key of a memoised inclusion: (file, chain index it was found at, search path, language).
type MemoKey = (FileId, u32, u32, usize);

const MEMO_SHARDS: usize = 32;
const MAX_VARIANTS: usize = 16;

/// Inclusions recorded across all translation units of a scan. Including `<vector>` or a project
/// header with the same relevant macros as a previous TU replays the recorded effects instead of
/// re-evaluating every directive: that is what makes per-TU preprocessing cost close to a scan.
pub(crate) struct Memo {
    shards: Vec<RwLock<FxMap<MemoKey, Vec<Arc<Entry>>>>>,
    /// Largest macro table and edge count of a TU so far: later TUs size their tables up front
    /// instead of rehashing as they grow.
    hint_macros: AtomicUsize,
    hint_edges: AtomicUsize,
}

impl Default for Memo {
    fn default() -> Self {
        Memo {
            shards: (0..MEMO_SHARDS)
                .map(|_| RwLock::new(FxMap::default()))
                .collect(),
            hint_macros: AtomicUsize::new(0),
            hint_edges: AtomicUsize::new(0),
        }
    }
}

impl Memo {
    fn shard(&self, k: &MemoKey) -> &RwLock<FxMap<MemoKey, Vec<Arc<Entry>>>> {
        &self.shards[fx_hash(k) as usize % MEMO_SHARDS]
    }
    fn find(&self, k: &MemoKey, ok: impl Fn(&Entry) -> bool) -> Option<Arc<Entry>> {
        self.shard(k)
            .read()
            .unwrap()
            .get(k)?
            .iter()
            .find(|e| ok(e))
            .cloned()
    }
    fn insert(&self, k: MemoKey, e: Arc<Entry>) {
        let mut g = self.shard(&k).write().unwrap();
        let v = g.entry(k).or_default();
        if v.len() < MAX_VARIANTS {
            v.push(e);
        }
    }
}

/// GCC's limit (`#include nested depth 200 exceeds maximum of 200`).
const MAX_DEPTH: u32 = 200;

/// Inclusions one TU may take (entered, skipped by a guard, or replayed from the memo). Real TUs
/// take a few thousand (the most measured: 10,505, a TU of Boost's top-level `boost/*.hpp`;
/// gRPC's worst 6,025, RocksDB's 2,933), so 100,000 is ten times real code while a hostile
/// tree stops in well under a second; headers that include each other twice without a guard double it at
/// every level (2^200 within GCC's depth limit), which no depth limit stops.
pub const MAX_TU_INCLUSIONS: u64 = 100_000;

/// The inclusion budget in force: [`MAX_TU_INCLUSIONS`] unless lowered for the process.
static TU_INCLUSION_BUDGET: AtomicU64 = AtomicU64::new(MAX_TU_INCLUSIONS);

/// Lowers (or restores) the per-TU inclusion budget for this process. Only the fuzz harness
/// calls it: an input that fans includes out spends its whole budget, so a budget of a few
/// thousand keeps each execution in milliseconds while the budget's path is taken as often.
#[doc(hidden)]
pub fn set_tu_inclusion_budget(n: u64) {
    TU_INCLUSION_BUDGET.store(n.max(1), Ordering::Relaxed);
}

/// What one TU reached. Every list uses store file ids; `closure` includes the TU itself and every
/// file it opened (system headers too; the report decides what is counted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TuResult {
    pub tu: FileId,
    pub closure: Vec<FileId>,
    /// Active include edges, in encounter order, as ids into the scan's [`EdgeTable`] (TUs share
    /// most of their edges; ids keep results, the cache and reports small). Deduplicated by
    /// (includer, included).
    pub edges: Arc<[u32]>,
    /// Unresolved includes: (includer, line, name as written, angle?).
    pub missing: Vec<(FileId, u32, String, bool)>,
    /// Errors met while preprocessing: (file, line, message).
    pub errors: Vec<(FileId, u32, String)>,
}

/// The distinct include edges (includer, line, included) of a session, numbered densely, and
/// the distinct (includer, included) pairs of a scan: a TU keeps the first edge of each pair.
/// Both are numbered when an inclusion is first evaluated and travel in its recorded effects,
/// so replaying one marks edges in a dense array instead of hashing them.
#[derive(Default)]
pub struct EdgeTable {
    ids: RwLock<FxMap<(FileId, u32, FileId), u32>>,
    tab: RwLock<Vec<(FileId, u32, FileId)>>,
    pairs: RwLock<FxMap<(FileId, FileId), u32>>,
}

impl EdgeTable {
    pub(crate) fn from_vec(tab: Vec<(FileId, u32, FileId)>) -> Self {
        let ids = tab
            .iter()
            .enumerate()
            .map(|(i, &e)| (e, i as u32))
            .collect();
        EdgeTable {
            ids: RwLock::new(ids),
            tab: RwLock::new(tab),
            pairs: RwLock::new(FxMap::default()),
        }
    }

    /// Ids of the edge (a, l, b) and of the pair (a, b), numbering them if new.
    pub fn edge(&self, a: FileId, l: u32, b: FileId) -> (u32, u32) {
        let e = self.ids.read().unwrap().get(&(a, l, b)).copied();
        let e = e.unwrap_or_else(|| {
            let mut ids = self.ids.write().unwrap();
            let mut tab = self.tab.write().unwrap();
            *ids.entry((a, l, b)).or_insert_with(|| {
                tab.push((a, l, b));
                (tab.len() - 1) as u32
            })
        });
        let p = self.pairs.read().unwrap().get(&(a, b)).copied();
        let p = p.unwrap_or_else(|| {
            let mut pairs = self.pairs.write().unwrap();
            let n = pairs.len() as u32;
            *pairs.entry((a, b)).or_insert(n)
        });
        (e, p)
    }

    pub fn snapshot(&self) -> Vec<(FileId, u32, FileId)> {
        self.tab.read().unwrap().clone()
    }
}

#[derive(Clone, Copy)]
pub(crate) struct TuInput<'a> {
    pub tu: FileId,
    pub sp: &'a SearchPath,
    pub sp_id: u32,
    pub base: &'a Macros,
    pub forced: &'a [FileId],
    pub clang: bool,
    pub cplusplus: bool,
    pub memo: Option<&'a Memo>,
    pub edges: &'a EdgeTable,
    /// Evaluate as if one directive were deleted or one file were empty (the exact check of
    /// `headers::cuts`); `None` for a normal scan.
    pub skip: Option<&'a Skip>,
}

/// A hypothetical edit evaluated for real: an `#include` directive removed (`line: Some`), or a
/// file made empty (`line: None`: none of its directives run). Memoised inclusions that took the
/// removed directive (or included the emptied file) are not replayed; every other inclusion
/// is, and inclusions recorded under the edit that never met it are valid for normal
/// evaluation too, so they go into the scan's memo like any other.
pub struct Skip {
    pub file: FileId,
    pub line: Option<u32>,
    /// Edge ids of the session's [`EdgeTable`] the edit removes: `file`'s edges at `line`, or
    /// every edge into `file` when it is emptied (a guard-skipped inclusion of it may be taken
    /// for real once its guard is never defined). A bitset: every TU's edges are tested.
    edges: Vec<u64>,
    /// Per recorded entry (by address; the memo keeps them alive), does it contain one of `edges`?
    tainted: RwLock<FxMap<usize, bool>>,
    /// Inclusions recorded under the edit that met it: valid for the other TUs evaluated with
    /// the same edit (the path from a TU down to the removed directive is evaluated once).
    overlay: Memo,
}

impl Skip {
    pub fn new(file: FileId, line: Option<u32>, table: &EdgeTable) -> Skip {
        let tab = table.tab.read().unwrap();
        let mut edges = vec![0u64; tab.len().div_ceil(64)];
        for (i, (a, l, b)) in tab.iter().enumerate() {
            let hit = match line {
                Some(x) => *a == file && *l == x,
                None => *b == file,
            };
            if hit {
                edges[i / 64] |= 1 << (i % 64);
            }
        }
        Skip {
            file,
            line,
            edges,
            tainted: RwLock::new(FxMap::default()),
            overlay: Memo::default(),
        }
    }

    /// Is `e` one of the edges the edit removes (a TU that took it is affected)?
    #[inline]
    pub fn removes(&self, e: u32) -> bool {
        let i = e as usize;
        self.edges
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Does the directive at (`fid`, `line`) not run under this edit?
    #[inline]
    fn skips(&self, fid: FileId, line: u32) -> bool {
        fid == self.file && self.line.is_none_or(|l| l == line)
    }

    fn tainted(&self, e: &Entry) -> bool {
        let k = e as *const Entry as usize;
        if let Some(&t) = self.tainted.read().unwrap().get(&k) {
            return t;
        }
        let t = e.effects.iter().any(|eff| match eff {
            Effect::Include(id, _, _) => self.removes(*id),
            Effect::Sub(x) => self.tainted(x),
            _ => false,
        });
        self.tainted.write().unwrap().insert(k, t);
        t
    }
}

struct HostState<'a> {
    store: &'a Store,
    sp: &'a SearchPath,
    sp_id: u32,
    tu: FileId,
    cur: FileId,
    cur_found: Option<u32>,
    line: u32,
    depth: u32,
}

impl HostState<'_> {
    /// Resolution per libcpp `search_path_head`. Returns the file and the chain index it was
    /// found at (`None`: the includer's directory or an absolute path).
    fn resolve(&self, name: Sym, angle: bool, next: bool) -> Option<(FileId, Option<u32>)> {
        let primary = self.cur == self.tu && self.depth == 0;
        if next && !primary {
            let start = match self.cur_found {
                Some(i) if i != u32::MAX => i as usize + 1,
                _ => 0,
            };
            return self
                .store
                .resolve_chain(self.sp_id, self.sp, start, name)
                .map(|(f, i)| (f, Some(i)));
        }
        if !angle {
            let dir = self.store.slot(self.cur).dir;
            if let Some(f) = self.store.resolve_relative(dir, name) {
                return Some((f, None));
            }
            return self
                .store
                .resolve_chain(self.sp_id, self.sp, 0, name)
                .map(|(f, i)| (f, Some(i)));
        }
        self.store
            .resolve_chain(self.sp_id, self.sp, self.sp.bracket_start, name)
            .map(|(f, i)| (f, Some(i)))
    }
}

impl Host for HostState<'_> {
    fn has_include(&mut self, name: &[u8], angle: bool, next: bool) -> bool {
        let s = self.store.interner.intern(name);
        self.resolve(s, angle, next).is_some()
    }
    fn line(&self) -> u32 {
        self.line
    }
    fn file_name(&self) -> Vec<u8> {
        self.store
            .path(self.cur)
            .to_string_lossy()
            .as_bytes()
            .to_vec()
    }
    fn base_file(&self) -> Vec<u8> {
        self.store
            .path(self.tu)
            .to_string_lossy()
            .as_bytes()
            .to_vec()
    }
    fn include_level(&self) -> u32 {
        self.depth
    }
}

struct Run<'a> {
    // Shared across TUs; None disables memoisation.
    h: HostState<'a>,
    syms: &'a Syms,
    macros: Macros,
    once: FxSet<FileId>,
    /// Files entered (not skipped by a guard or `once`), kept when the memo is off: `#import` of
    /// a file entered before skips it (libcpp's `stack_count`).
    entered: FxSet<FileId>,
    /// An `#import` was met while using the memo: the TU is evaluated again without it. Without
    /// `#import`, only files with a `#pragma once` can be in `once`, so recorded inclusions
    /// check only those (most headers use guards; checking every included file was a tenth of
    /// the memo), and replays cannot tell which files were entered.
    restart: bool,
    /// Per file, the recorder clock of the last `#pragma once` check or mark (see `pp::Rec`).
    once_last: Vec<u32>,
    /// Files already in the closure, by id.
    seen: Vec<bool>,
    /// Per pair id, the stamp of the last TU on this thread that took an edge of that pair.
    pair_seen: Vec<u32>,
    /// This TU's stamp in `pair_seen`.
    pair_stamp: u32,
    clang: bool,
    cplusplus: bool,
    out: TuResult,
    /// Edge ids, the first per pair, in encounter order.
    edges: Vec<u32>,
    edge_table: &'a EdgeTable,
    memo: Option<&'a Memo>,
    skip: Option<&'a Skip>,
    /// The open recorders below this index met the edit of `skip` (directly or by replaying an
    /// inclusion that did): what they record goes to the edit's overlay memo.
    skip_dep: usize,
    /// The language flags evaluation depends on beyond the macros (`true` in a C++ `#if`,
    /// clang's `__has_*`): the memo keeps each language's inclusions apart. Base tables are
    /// not: an entry's macro reads decide where it replays (their definitions are shared
    /// across bases, see `scan::DefPool`).
    lang_id: usize,
    /// Inclusions taken so far (see [`MAX_TU_INCLUSIONS`]); past `inclusion_budget` the TU stops.
    inclusions: u64,
    inclusion_budget: u64,
    over_budget: bool,
}

/// What a worker thread reuses from one TU to the next instead of allocating and zeroing it
/// again: the macro table (see [`pp::MacroMap::reset`]), the per-macro clock stamps with the
/// clock value they were left at, and the per-pair stamps (see [`Run::pair_seen`]) with the
/// last TU stamp used.
struct Tables {
    map: pp::MacroMap,
    last: Vec<u32>,
    clock: u32,
    pair_seen: Vec<u32>,
    pair_stamp: u32,
}

thread_local! {
    static TABLES: std::cell::RefCell<Option<Tables>> = const { std::cell::RefCell::new(None) };
}

pub(crate) fn run_tu(store: &Store, syms: &Syms, input: &TuInput) -> TuResult {
    match run_tu_once(store, syms, input) {
        Some(r) => r,
        None => run_tu_once(
            store,
            syms,
            &TuInput {
                memo: None,
                ..*input
            },
        )
        .expect("no memo"),
    }
}

/// One evaluation of a TU; `None` when it met an `#import` while using the memo (see
/// [`Run::restart`]).
fn run_tu_once(store: &Store, syms: &Syms, input: &TuInput) -> Option<TuResult> {
    let Tables {
        mut map,
        last,
        clock,
        mut pair_seen,
        mut pair_stamp,
    } = TABLES
        .with(|t| t.borrow_mut().take())
        .unwrap_or_else(|| Tables {
            // SAFETY: this TU's definitions come from the base table (`input.base`), the files'
            // directives (held by `store`) and the memo's effects (`input.memo`): all outlive
            // this call, and the table is reset before it returns (or dropped, if evaluation
            // panics).
            map: unsafe { pp::MacroMap::borrowing() },
            last: Vec::new(),
            clock: 0,
            pair_seen: Vec::new(),
            pair_stamp: 0,
        });
    map.copy_from(&input.base.map);
    pair_stamp = pair_stamp.wrapping_add(1);
    if pair_stamp == 0 {
        // After 2^32 TUs on this thread: old stamps could match again.
        pair_seen.iter_mut().for_each(|s| *s = 0);
        pair_stamp = 1;
    }
    // The clock goes on from the previous TU: its stamps are then all older than this TU's
    // recorders, which is what "not seen yet" means, without zeroing them.
    let macros = Macros {
        map,
        pushed: input.base.pushed.clone(),
        counter: input.base.counter,
        rec: Vec::new(),
        clock,
        last,
    };
    let mut r = Run {
        h: HostState {
            store,
            sp: input.sp,
            sp_id: input.sp_id,
            tu: input.tu,
            cur: input.tu,
            cur_found: None,
            line: 0,
            depth: 0,
        },
        syms,
        macros,
        once: FxSet::default(),
        entered: FxSet::default(),
        restart: false,
        once_last: Vec::new(),
        seen: vec![false; store.len()],
        pair_seen,
        pair_stamp,
        clang: input.clang,
        cplusplus: input.cplusplus,
        out: TuResult {
            tu: input.tu,
            ..Default::default()
        },
        edges: Vec::new(),
        edge_table: input.edges,
        memo: input.memo,
        skip: input.skip,
        skip_dep: 0,
        lang_id: input.clang as usize | (input.cplusplus as usize) << 1,
        inclusions: 0,
        inclusion_budget: TU_INCLUSION_BUDGET.load(Ordering::Relaxed),
        over_budget: false,
    };
    if let Some(m) = input.memo {
        let n = m.hint_macros.load(Ordering::Relaxed);
        r.macros.map.reserve_span(n);
        r.edges.reserve(m.hint_edges.load(Ordering::Relaxed));
    }
    r.add_closure(input.tu);
    r.entered.insert(input.tu);
    for &f in input.forced {
        r.enter(input.tu, 0, f, None, false);
    }
    let tu_data = r.h.store.data(input.tu);
    r.file(input.tu, None, tu_data);
    if let Some(m) = input.memo {
        m.hint_macros
            .fetch_max(r.macros.map.span(), Ordering::Relaxed);
        m.hint_edges.fetch_max(r.edges.len(), Ordering::Relaxed);
    }
    let restart = r.restart;
    if !restart {
        r.out.edges = std::mem::take(&mut r.edges).into();
    }
    let mut m = std::mem::take(&mut r.macros);
    m.map.reset();
    let (last, clock) = if m.clock > u32::MAX / 2 {
        (Vec::new(), 0)
    } else {
        (m.last, m.clock)
    };
    TABLES.with(|t| {
        *t.borrow_mut() = Some(Tables {
            map: m.map,
            last,
            clock,
            pair_seen: std::mem::take(&mut r.pair_seen),
            pair_stamp: r.pair_stamp,
        })
    });
    (!restart).then_some(r.out)
}

#[derive(Clone, Copy)]
struct Cond {
    parent_active: bool,
    taken: bool,
    active: bool,
    line: u32,
    else_seen: bool,
}

impl Run<'_> {
    fn err(&mut self, file: FileId, line: u32, msg: String) {
        if !self.macros.rec.is_empty() {
            self.effect(Effect::Error(Box::new((file, line, msg.clone()))));
        }
        self.out.errors.push((file, line, msg));
    }

    fn effect(&mut self, e: Effect) {
        if let Some(r) = self.macros.rec.last_mut() {
            r.effects.push(e);
        }
    }

    /// Is `f` in `once`? `may_be_once`: `f` has a `#pragma once` (see [`Run::restart`]).
    fn once_has(&mut self, f: FileId, may_be_once: bool) -> bool {
        let b = self.once.contains(&f);
        if may_be_once {
            self.note_once_read(f, b);
        }
        b
    }

    fn note_once_read(&mut self, f: FileId, b: bool) {
        pp::note_first_read(
            &mut self.macros.rec,
            &mut self.once_last,
            &mut self.macros.clock,
            f,
            b,
            |r| &mut r.once_reads,
        );
    }

    fn note_once_written(&mut self, f: FileId) {
        if !self.macros.rec.is_empty() {
            self.macros.clock += 1;
            *pp::stamp(&mut self.once_last, f) = self.macros.clock;
        }
    }

    fn once_add(&mut self, f: FileId) {
        self.once.insert(f);
        self.note_once_written(f);
        if let Some(r) = self.macros.rec.last_mut() {
            r.effects.push(Effect::Once(f));
        }
    }

    fn add_closure(&mut self, f: FileId) {
        let i = f as usize;
        if i >= self.seen.len() {
            self.seen.resize(i + 1 + i / 2, false);
        }
        if !self.seen[i] {
            self.seen[i] = true;
            self.out.closure.push(f);
        }
    }

    /// Counts one more inclusion, from `from` at `line`; false once the TU is over
    /// [`MAX_TU_INCLUSIONS`] (an error entry the first time; nothing it does is memoised).
    fn count_inclusion(&mut self, from: FileId, line: u32) -> bool {
        self.inclusions += 1;
        if self.inclusions <= self.inclusion_budget {
            return true;
        }
        if !self.over_budget {
            self.over_budget = true;
            self.err(
                from,
                line,
                format!(
                    "more than {} inclusions in one translation unit (headers \
                     that include each other repeatedly without a guard): the rest of the TU is skipped",
                    self.inclusion_budget
                ),
            );
        }
        self.macros.poison();
        false
    }

    /// Takes edge `e` unless this TU took an edge of its pair `p` before.
    #[inline]
    fn add_edge(&mut self, e: u32, p: u32) {
        let i = p as usize;
        if i >= self.pair_seen.len() {
            self.pair_seen
                .resize((i + 1).max(self.pair_seen.len() * 2), 0);
        }
        if self.pair_seen[i] != self.pair_stamp {
            self.pair_seen[i] = self.pair_stamp;
            self.edges.push(e);
        }
    }

    /// Replays a memoised inclusion: its first reads become first reads of the open recorders
    /// that had not seen them (before its writes mark them seen), then its effects are applied
    /// and it becomes a nested effect of the enclosing recorder.
    fn replay(&mut self, e: &Arc<Entry>) {
        let recording = !self.macros.rec.is_empty();
        if recording {
            for &(s, v) in &e.reads {
                self.macros.note_read(s, v);
            }
            for &(f, b) in &e.once_reads {
                self.note_once_read(f, b);
            }
        }
        self.apply(e, recording);
        if let Some(p) = self.macros.rec.last_mut() {
            p.effects.push(Effect::Sub(e.clone()));
        }
    }

    fn valid(&self, e: &Entry) -> bool {
        e.reads
            .iter()
            .all(|&(s, v)| pp::def_id(self.macros.map.get(&s)) == v)
            && e.once_reads
                .iter()
                .all(|&(f, b)| self.once.contains(&f) == b)
    }

    /// Applies recorded effects to the TU state; when `recording`, marks what they write as
    /// seen by the open recorders (the caller records the entry itself).
    fn apply(&mut self, e: &Entry, recording: bool) {
        for eff in &e.effects {
            if self.over_budget {
                return;
            }
            match eff {
                Effect::Define(m) => {
                    if recording {
                        self.macros.note_written(m.name);
                    }
                    self.macros.map.insert(m.name, m);
                }
                Effect::Undef(s) => {
                    if recording {
                        self.macros.note_written(*s);
                    }
                    self.macros.map.remove(s);
                }
                Effect::Once(f) => {
                    if recording {
                        self.note_once_written(*f);
                    }
                    self.once.insert(*f);
                }
                Effect::Include(e, p, b) => {
                    if self.inclusions >= self.inclusion_budget {
                        let (from, line, _) = self.edge_table.tab.read().unwrap()[*e as usize];
                        if !self.count_inclusion(from, line) {
                            return;
                        }
                    } else {
                        self.inclusions += 1;
                    }
                    self.add_edge(*e, *p);
                    self.add_closure(*b);
                }
                Effect::Missing(m) => self.out.missing.push((**m).clone()),
                Effect::Error(m) => self.out.errors.push((**m).clone()),
                Effect::Sub(x) => self.apply(x, recording),
            }
        }
    }

    /// Records the edge and the file, then preprocesses it unless a guard / once skips it.
    fn enter(&mut self, from: FileId, line: u32, to: FileId, found: Option<u32>, import: bool) {
        if import && self.memo.is_some() {
            self.restart = true;
            return;
        }
        if !self.count_inclusion(from, line) {
            return;
        }
        let (e, p) = self.edge_table.edge(from, line, to);
        self.add_edge(e, p);
        self.add_closure(to);
        self.effect(Effect::Include(e, p, to));
        if self.h.depth + 1 > MAX_DEPTH {
            self.macros.poison();
            self.err(
                from,
                line,
                format!("#include nested depth {MAX_DEPTH} exceeds maximum of {MAX_DEPTH}"),
            );
            return;
        }
        let data = self.h.store.data(to);
        if self.once_has(to, data.lex.pragma_once) {
            return;
        }
        if import {
            self.once_add(to);
            if self.entered.contains(&to) {
                return;
            }
        }
        // libcpp knows a file's guard only after reading it once: a first inclusion is stacked
        // even when the guard is already defined, so it counts as entered; a file it cannot read
        // is not.
        if self.memo.is_none() && data.error.is_none() {
            self.entered.insert(to);
        }
        if let Some(g) = data.lex.guard
            && self.macros.contains(g)
        {
            return;
        }
        let key: MemoKey = (
            to,
            found.unwrap_or(u32::MAX - 1),
            self.h.sp_id,
            self.lang_id,
        );
        if let Some(memo) = self.memo {
            let found = match self.skip {
                None => memo.find(&key, |e| self.valid(e)),
                Some(sk) => match sk.overlay.find(&key, |e| self.valid(e)) {
                    Some(e) => {
                        self.met_skip();
                        Some(e)
                    }
                    // The emptied file's own recorded inclusion is its content.
                    None if sk.line.is_none() && sk.file == to => None,
                    None => memo.find(&key, |e| self.valid(e) && !sk.tainted(e)),
                },
            };
            if let Some(e) = found {
                self.replay(&e);
                return;
            }
            self.macros.begin_rec();
        }
        let (pc, pf, pl) = (self.h.cur, self.h.cur_found, self.h.line);
        self.h.depth += 1;
        self.file(to, found, data);
        self.h.depth -= 1;
        self.h.cur = pc;
        self.h.cur_found = pf;
        self.h.line = pl;
        if let Some(memo) = self.memo {
            let rec = self.macros.rec.pop().expect("recorder");
            if self.restart {
                return;
            }
            if rec.poisoned {
                self.skip_dep = self.skip_dep.min(self.macros.rec.len());
                self.macros.poison();
                if let Some(p) = self.macros.rec.last_mut() {
                    // The parent saw these effects happen; it cannot be replayed either.
                    p.effects.extend(rec.effects);
                }
                return;
            }
            // Its first reads and writes already reached the enclosing recorders as they happened.
            // Kept for the whole scan: trimmed to size, so the rest of a grown list is reused
            // instead of the kernel zeroing fresh pages for later allocations.
            let (mut reads, mut effects) = (rec.reads, rec.effects);
            reads.shrink_to_fit();
            effects.shrink_to_fit();
            let e = Arc::new(Entry {
                reads,
                once_reads: rec.once_reads,
                effects,
            });
            let depth = self.macros.rec.len();
            match self.skip {
                Some(sk) if depth < self.skip_dep => {
                    self.skip_dep = depth;
                    sk.overlay.insert(key, e.clone())
                }
                _ => memo.insert(key, e.clone()),
            }
            if let Some(p) = self.macros.rec.last_mut() {
                p.effects.push(Effect::Sub(e));
            }
        }
    }

    /// Preprocesses file `fid` (its `data`, already fetched by the caller).
    fn file(&mut self, fid: FileId, found: Option<u32>, data: Arc<FileData>) {
        if let Some(e) = &data.error {
            self.err(fid, 0, e.clone());
            return;
        }
        if let Some(sk) = self.skip
            && sk.line.is_none()
            && sk.file == fid
        {
            // The emptied file: what encloses it must not be recorded as if it were whole.
            self.met_skip();
            return;
        }
        let lex: Arc<Lexed> = data.lex.clone();
        self.h.cur = fid;
        self.h.cur_found = found;
        let mut conds: Vec<Cond> = Vec::new();
        for d in lex.directives.iter() {
            if self.restart || self.over_budget {
                return;
            }
            let active = conds.last().is_none_or(|c| c.active);
            self.h.line = d.line;
            match &d.kind {
                DKind::If(t) => {
                    if active {
                        let v = self.eval(fid, d.line, t);
                        conds.push(Cond {
                            parent_active: true,
                            taken: v,
                            active: v,
                            line: d.line,
                            else_seen: false,
                        });
                    } else {
                        conds.push(Cond {
                            parent_active: false,
                            taken: true,
                            active: false,
                            line: d.line,
                            else_seen: false,
                        });
                    }
                }
                DKind::Ifdef(s) | DKind::Ifndef(s) => {
                    let v = active && (self.is_defined(*s) == matches!(d.kind, DKind::Ifdef(_)));
                    conds.push(Cond {
                        parent_active: active,
                        taken: v || !active,
                        active: v,
                        line: d.line,
                        else_seen: false,
                    });
                }
                DKind::Elif(_) | DKind::Elifdef(_) | DKind::Elifndef(_) => {
                    let Some(c) = conds.last().copied() else {
                        self.err(fid, d.line, "#elif without #if".into());
                        continue;
                    };
                    if c.else_seen {
                        self.err(fid, d.line, "#elif after #else".into());
                    }
                    let v = if c.parent_active && !c.taken {
                        match &d.kind {
                            DKind::Elif(t) => self.eval(fid, d.line, t),
                            DKind::Elifdef(s) => self.is_defined(*s),
                            DKind::Elifndef(s) => !self.is_defined(*s),
                            _ => unreachable!(),
                        }
                    } else {
                        false
                    };
                    let c = conds.last_mut().unwrap();
                    c.active = v;
                    c.taken |= v;
                }
                DKind::Else => {
                    let Some(c) = conds.last_mut() else {
                        self.err(fid, d.line, "#else without #if".into());
                        continue;
                    };
                    if c.else_seen {
                        let l = d.line;
                        self.err(fid, l, "#else after #else".into());
                        continue;
                    }
                    c.else_seen = true;
                    c.active = c.parent_active && !c.taken;
                    c.taken = true;
                }
                DKind::Endif => {
                    if conds.pop().is_none() {
                        self.err(fid, d.line, "#endif without #if".into());
                    }
                }
                _ if !active => {}
                DKind::Define(m) => self.macros.define(m),
                DKind::Undef(s) => self.macros.undef(*s),
                DKind::PushMacro(s) => self.macros.push(*s),
                DKind::PopMacro(s) => self.macros.pop(*s),
                DKind::PragmaOnce => self.once_add(fid),
                DKind::Error(m) => self.err(fid, d.line, format!("#error {m}")),
                DKind::Bad(m) => {
                    if !m.is_empty() {
                        self.err(fid, d.line, m.clone())
                    }
                }
                DKind::Include { .. } if self.skip.is_some_and(|sk| sk.skips(fid, d.line)) => {
                    self.met_skip();
                }
                DKind::Include { next, import, spec } => {
                    self.include(fid, found, d.line, spec, *next, *import)
                }
            }
        }
        if let Some(c) = conds.first() {
            self.err(fid, c.line, "unterminated conditional directive".into());
        }
    }

    /// An active `#include` (`#include_next` with `next`, `#import` with `import`) at `line` of
    /// file `fid`: its name (expanded when written as a macro), then the file entered or the
    /// include recorded as missing.
    fn include(
        &mut self,
        fid: FileId,
        found: Option<u32>,
        line: u32,
        spec: &IncSpec,
        next: bool,
        import: bool,
    ) {
        let (name, angle) = match spec {
            IncSpec::Quoted(s) => (*s, false),
            IncSpec::Angle(s) => (*s, true),
            IncSpec::Macro(t) => {
                let mut ctx = Ctx {
                    macros: &mut self.macros,
                    syms: self.syms,
                    interner: &self.h.store.interner,
                    host: &mut self.h,
                    clang: self.clang,
                    cplusplus: self.cplusplus,
                };
                match pp::include_name(&mut ctx, t) {
                    Ok(HeaderName::Quoted(n)) => (self.h.store.interner.intern(&n), false),
                    Ok(HeaderName::Angle(n)) => (self.h.store.interner.intern(&n), true),
                    Err(e) => {
                        self.err(fid, line, e.to_string());
                        return;
                    }
                }
            }
        };
        if name == 0 {
            self.err(fid, line, "empty filename in #include".into());
            return;
        }
        match self.h.resolve(name, angle, next) {
            Some((to, found)) => self.enter(fid, line, to, found, import),
            None => {
                let n = self.h.store.interner.string(name);
                if !self.macros.rec.is_empty() {
                    self.effect(Effect::Missing(Box::new((fid, line, n.clone(), angle))));
                }
                self.out.missing.push((fid, line, n, angle));
            }
        }
        self.h.cur = fid;
        self.h.cur_found = found;
    }

    /// Every open recorder now depends on the edit being evaluated.
    fn met_skip(&mut self) {
        self.skip_dep = self.macros.rec.len();
    }

    fn is_defined(&mut self, s: Sym) -> bool {
        pp::is_defined(&mut self.macros, self.syms, self.clang, s)
    }

    fn eval(&mut self, fid: FileId, line: u32, t: &[super::lex::Tok]) -> bool {
        let mut ctx = Ctx {
            macros: &mut self.macros,
            syms: self.syms,
            interner: &self.h.store.interner,
            host: &mut self.h,
            clang: self.clang,
            cplusplus: self.cplusplus,
        };
        match pp::eval_if(&mut ctx, t) {
            Ok(v) => v,
            Err(e) => {
                self.err(fid, line, e.to_string());
                false
            }
        }
    }
}
