//! Scan orchestration: find translation units, set up per-TU search paths and macro tables,
//! preprocess TUs in parallel (rayon) with progress and cancellation, build the Header Hero
//! "all branches" graph, and turn both into reports. A [`Scanner`] keeps the previous scan in
//! memory (and on disk through `cache`) so a rescan re-reads only changed files and re-evaluates
//! only TUs whose files changed their directives.

use super::compdb::{self, MacroOpt, TuFlags};
use super::compiler::{self, CompilerEnv, Lang};
use super::cuts;
use super::eval::{self, TuInput, TuResult};
use super::lex::MacroDef;
use super::lex::{self, DKind};
use super::pp::{Macros, Syms};
use super::report::{Graph, ModeData, Node, Report, ScanStats, TuReach};
pub use super::state::{HhCached, HhGraph, Prev, WalkCache};
use super::store::{self, FileData, FileId, SearchPath, Store};
use super::util::Sym;
use super::util::{FxMap, FxSet, Interner, absolutize, fx_hash, normalize, relative_to};
use super::{CompilerChoice, Mode, Progress, Project, ScanOptions};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Both modes' reports, side by side. `primary` is the mode asked for.
pub struct ScanResult {
    pub primary: Report,
    pub secondary: Option<Report>,
}

/// Errors that stop a scan (bad input); problems inside the tree are report entries instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScanError {
    #[error("{0}")]
    Input(String),
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

fn dir_mtime(p: &Path) -> Option<i64> {
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

/// Modification times of the directories probes looked in. A missing directory is stamped
/// through its deepest existing ancestor instead: creating it, or anything between, changes that
/// ancestor's time. Thousands of missing probe directories (every `-I` dir × `sub/dir/x.h`) then
/// cost a few stats on the next rescan instead of one each.
/// `listed` holds the times to use where known: taken when a directory was listed during the
/// scan, or at its start for directories stamped before.
/// Does the directory hold a symlink (or cannot it be listed)?
fn has_symlink(d: &Path) -> bool {
    match std::fs::read_dir(d) {
        Ok(rd) => rd
            .flatten()
            .any(|e| e.file_type().map_or(true, |t| t.is_symlink())),
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

fn stamp_dirs(
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

/// What a symlink named like a TU leads to.
enum LinkTarget {
    /// A regular file, or a loop (kept so that it becomes an error entry).
    Tu,
    /// A FIFO, device or socket: skipped and reported.
    Special(&'static str),
    /// A folder, or nothing.
    Ignored,
}

fn link_target(p: &Path) -> LinkTarget {
    match std::fs::metadata(p) {
        Ok(m) if m.is_file() => LinkTarget::Tu,
        Ok(m) if m.is_dir() => LinkTarget::Ignored,
        Ok(m) => LinkTarget::Special(clipforge_base::fsio::file_kind(&m.file_type())),
        Err(er) if er.raw_os_error() == Some(40) => LinkTarget::Tu,
        Err(_) => LinkTarget::Ignored,
    }
}

/// What a walk of the roots found.
#[derive(Debug, Default)]
pub struct Walked {
    /// Translation units, sorted.
    pub tus: Vec<PathBuf>,
    /// Unreadable directories: (path, message).
    pub errors: Vec<(PathBuf, String)>,
    /// FIFOs, devices and sockets named like a TU (directly or through a symlink): never opened.
    pub skipped: Vec<(PathBuf, &'static str)>,
    /// What to keep for the next scan (`None` when the walk met errors, special files, or a root
    /// is a file).
    pub cache: Option<WalkCache>,
}

/// Finds translation units under the roots (dot-directories skipped, as Header Hero does),
/// reusing `prev` when none of its directories changed. Unreadable directories become error
/// entries.
pub fn find_tus_cached(roots: &[PathBuf], prev: Option<WalkCache>) -> Walked {
    let finish = |w: &WalkCache, skipped: &mut Vec<(PathBuf, &'static str)>| {
        let mut out: Vec<PathBuf> = w.files.clone();
        for p in &w.links {
            match link_target(p) {
                LinkTarget::Tu => out.push(p.clone()),
                LinkTarget::Special(kind) => skipped.push((p.clone(), kind)),
                LinkTarget::Ignored => {}
            }
        }
        // A walk sorted by file name already yields paths in `Path` order (comparing paths
        // walks their components: a rescan's sort of 886 paths took a millisecond).
        if !out.is_sorted() {
            out.sort();
        }
        out.dedup();
        out
    };
    if let Some(w) = prev
        && w.roots == roots
        && w.dirs.par_iter().all(|(d, m)| dir_mtime(d) == Some(*m))
    {
        let mut skipped = Vec::new();
        let tus = finish(&w, &mut skipped);
        return Walked {
            tus,
            errors: Vec::new(),
            skipped,
            cache: Some(w),
        };
    }
    let mut walk = WalkCache {
        roots: roots.to_vec(),
        ..Default::default()
    };
    let mut cacheable = true;
    let mut errs = Vec::new();
    let mut skipped = Vec::new();
    for r in roots {
        match std::fs::metadata(r) {
            Ok(m) if m.is_file() => {
                walk.files.push(r.clone());
                cacheable = false;
                continue;
            }
            Ok(m) if !m.is_dir() => {
                skipped.push((r.clone(), clipforge_base::fsio::file_kind(&m.file_type())));
                cacheable = false;
                continue;
            }
            _ => {}
        }
        let walker = walkdir::WalkDir::new(r)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter();
        for e in walker
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        {
            let e = match e {
                Ok(e) => e,
                Err(err) => {
                    let p = err
                        .path()
                        .map(|p| p.to_path_buf())
                        .unwrap_or_else(|| r.clone());
                    errs.push((p, format!("cannot read directory: {err}")));
                    cacheable = false;
                    continue;
                }
            };
            let ft = e.file_type();
            if ft.is_dir() {
                match dir_mtime(e.path()) {
                    Some(m) => walk.dirs.push((e.path().to_path_buf(), m)),
                    None => cacheable = false,
                }
                continue;
            }
            let p = e.path();
            let Some(ext) = p.extension().and_then(|x| x.to_str()) else {
                continue;
            };
            if !TU_EXTS.contains(&ext) {
                continue;
            }
            if ft.is_symlink() {
                walk.links.push(normalize(p));
            } else if ft.is_file() {
                walk.files.push(normalize(p));
            } else {
                // Opening a FIFO blocks; a device reads forever. Reported, never opened, and
                // the walk is not kept (the next scan must report it again).
                skipped.push((normalize(p), clipforge_base::fsio::file_kind(&ft)));
                cacheable = false;
            }
        }
    }
    let tus = finish(&walk, &mut skipped);
    Walked {
        tus,
        errors: errs,
        skipped,
        cache: cacheable.then_some(walk),
    }
}

/// The translation units of a compilation database (configuration `config`), with the
/// project's global `-I` and `-D` added; special files named by an entry go to `skipped`.
fn specs_from_compdb(
    cc: &Path,
    project: &Project,
    g_inc: &[PathBuf],
    config: u32,
    skipped: &mut Vec<(PathBuf, &'static str)>,
) -> Result<Vec<TuSpec>, ScanError> {
    let entries = compdb::load(&absolutize(cc)).map_err(ScanError::Input)?;
    let mut seen = FxSet::default();
    let mut v = Vec::new();
    for e in entries {
        if !TU_EXTS.contains(&e.file.extension().and_then(|x| x.to_str()).unwrap_or(""))
            || !seen.insert(e.file.clone())
        {
            continue;
        }
        if let Ok(m) = std::fs::metadata(&e.file)
            && !m.is_file()
            && !m.is_dir()
        {
            skipped.push((
                e.file.clone(),
                clipforge_base::fsio::file_kind(&m.file_type()),
            ));
            continue;
        }
        let mut flags = e.flags;
        flags.include_dirs.extend(g_inc.iter().cloned());
        flags.macros.splice(0..0, project.defines.iter().cloned());
        if flags.std.is_none() {
            flags.std = if lang_of(&e.file) == Lang::Cxx {
                project.std.clone()
            } else {
                project.cstd.clone()
            };
        }
        v.push(TuSpec {
            lang: lang_of(&e.file),
            file: e.file,
            flags: Arc::new(flags),
            config,
        });
    }
    Ok(v)
}

fn lang_of(p: &Path) -> Lang {
    match p.extension().and_then(|x| x.to_str()) {
        Some("c") | Some("m") => Lang::C,
        _ => Lang::Cxx,
    }
}

/// `-D`/`-U` options as a directive text, lexed like a file.
fn macro_text(opts: &[MacroOpt]) -> String {
    let mut s = String::new();
    for o in opts {
        match o {
            MacroOpt::Define(n, v) => {
                let (name, params) = match n.find('(') {
                    Some(i) => (&n[..i], &n[i..]),
                    None => (n.as_str(), ""),
                };
                s.push_str(&format!(
                    "#define {name}{params} {}\n",
                    v.as_deref().unwrap_or("1")
                ));
            }
            MacroOpt::Undef(n) => s.push_str(&format!("#undef {n}\n")),
        }
    }
    s
}

/// One TU set up for evaluation (shared parts behind `Arc`s).
struct Prepared {
    tu: FileId,
    sp: Arc<SearchPath>,
    sp_id: u32,
    base: Arc<LazyBase>,
    forced: Vec<FileId>,
    key: u64,
    config: u32,
}
impl Prepared {
    /// The evaluator's input for this TU over its built base macros; `skip` is the
    /// exact check's edit (`None` for a scan).
    fn input<'a>(
        &'a self,
        base: &'a BuiltBase,
        memo: Option<&'a eval::Memo>,
        edges: &'a eval::EdgeTable,
        skip: Option<&'a eval::Skip>,
    ) -> TuInput<'a> {
        TuInput {
            tu: self.tu,
            sp: &self.sp,
            sp_id: self.sp_id,
            base: &base.macros,
            forced: &self.forced,
            clang: base.clang,
            cplusplus: base.cplusplus,
            memo,
            edges,
            skip,
        }
    }
}

/// The compiler's answers asked for before the walk: (compiler name, answers per key).
type EarlyAnswers =
    std::thread::JoinHandle<(Option<String>, Vec<(String, Result<CompilerEnv, String>)>)>;

/// What the file-check phase leaves: the store, the previous scan (taken from the session) and
/// what changed since it.
struct FileChecks {
    store: Store,
    prev: Prev,
    /// Some existence answer changed under a directory whose time moved.
    changed_dirs: bool,
    /// Some stamped directory's time moved.
    moved_dirs: bool,
    /// The stamped directories' times read at the start of the checks.
    start_times: Vec<(PathBuf, Option<i64>)>,
    /// Per file id: (directives changed, Header Hero include lines changed).
    file_changes: Vec<(bool, bool)>,
}

/// What the walk phase found: the TUs to evaluate and what the reports say about the walk.
struct Walk {
    roots: Vec<PathBuf>,
    notes: Vec<String>,
    walk_errors: Vec<(PathBuf, String)>,
    skipped: Vec<(PathBuf, &'static str)>,
    new_walk: Option<WalkCache>,
    specs: Vec<TuSpec>,
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

    /// Phase 0: the compiler's answers asked for on a thread while the roots are walked, when
    /// the languages and standards are known up front (see the comment inside).
    fn ask_compiler_early(&self, project: &Project, want_pre: bool) -> Option<EarlyAnswers> {
        // Asking the compiler (one process per query, two queries per language) is a cold scan's
        // longest serial step, and its answers are only needed once TUs are preprocessed: when
        // the languages and standards are known up front (no compilation database: C++ and C with
        // the project's standards), it is asked now, while the roots are walked and files
        // checked. A language the tree turns out not to have costs one unused query.
        // A rescan usually has every answer already: then no thread is started (a new thread
        // gets its own malloc arena, whose first page costs more than the detection).
        let keys = vec![
            (Lang::Cxx, project.std.clone()),
            (Lang::C, project.cstd.clone()),
        ];
        let answered = |c: &str| {
            keys.iter()
                .all(|(l, s)| self.prev.compilers.contains_key(&compiler_key(c, *l, s)))
        };
        let all_known = match &project.compiler {
            CompilerChoice::Named(c) => answered(c),
            _ => compiler::CANDIDATES.into_iter().any(answered),
        };
        (want_pre
            && !all_known
            && project.compile_commands.is_none()
            && project.configs.is_empty()
            && project.compiler != CompilerChoice::None)
            .then(|| {
                let known: Vec<String> = self.prev.compilers.keys().cloned().collect();
                let choice = project.compiler.clone();
                std::thread::spawn(move || ask_compiler(&choice, &known, &keys))
            })
    }

    /// The project's translation units with the flags the scan evaluates them with (module
    /// `timing` runs a compiler on some of them): phase 1 alone, on a fresh walk.
    pub(crate) fn tu_specs(project: &Project) -> Result<Vec<TuSpec>, ScanError> {
        Ok(Scanner::new().walk(project, &Progress::default())?.specs)
    }

    /// Phase 1, walk: the TUs and their flags, from the configurations' or the project's
    /// compilation database, or by walking the roots (reusing the previous walk).
    fn walk(&mut self, project: &Project, progress: &Progress) -> Result<Walk, ScanError> {
        progress.set_phase("finding translation units");
        let roots: Vec<PathBuf> = project.roots.iter().map(|r| absolutize(r)).collect();
        for r in &roots {
            if !r.exists() {
                return Err(ScanError::Input(format!(
                    "{}: source root does not exist",
                    r.display()
                )));
            }
        }
        let user_dirs =
            |v: &[PathBuf]| -> Vec<PathBuf> { v.iter().map(|d| absolutize(d)).collect() };
        let g_inc = user_dirs(&project.include_dirs);
        let g_quote = user_dirs(&project.quote_dirs);
        let g_sys = user_dirs(&project.system_dirs);
        let mut notes = Vec::new();
        let mut walk_errors = Vec::new();
        let mut skipped: Vec<(PathBuf, &'static str)> = Vec::new();
        let mut new_walk = None;
        // TUs: from the compilation database or by walking the roots.
        let specs: Vec<TuSpec> = if !project.configs.is_empty() {
            let mut v = Vec::new();
            for (i, c) in project.configs.iter().enumerate() {
                if project.configs[..i].iter().any(|o| o.name == c.name) {
                    return Err(ScanError::Input(format!(
                        "configuration name {:?} given twice",
                        c.name
                    )));
                }
                v.extend(specs_from_compdb(
                    &c.compile_commands,
                    project,
                    &g_inc,
                    i as u32,
                    &mut skipped,
                )?);
                notes.push(format!(
                    "configuration {}: translation units, include dirs and defines taken per TU from {}",
                    c.name,
                    c.compile_commands.display()
                ));
            }
            v
        } else if let Some(cc) = &project.compile_commands {
            let v = specs_from_compdb(cc, project, &g_inc, 0, &mut skipped)?;
            notes.push(format!(
                "translation units, include dirs and defines taken per TU from {}",
                cc.display()
            ));
            v
        } else {
            let w = find_tus_cached(&roots, self.prev.walk.take());
            walk_errors = w.errors;
            skipped = w.skipped;
            new_walk = w.cache;
            let tus = w.tus;
            let flags_for = |lang: Lang| {
                Arc::new(TuFlags {
                    quote_dirs: g_quote.clone(),
                    include_dirs: g_inc.clone(),
                    system_dirs: g_sys.clone(),
                    after_dirs: Vec::new(),
                    macros: project.defines.clone(),
                    forced_includes: Vec::new(),
                    std: if lang == Lang::Cxx {
                        project.std.clone()
                    } else {
                        project.cstd.clone()
                    },
                })
            };
            let (cxx_flags, c_flags) = (flags_for(Lang::Cxx), flags_for(Lang::C));
            tus.into_iter()
                .map(|f| {
                    let lang = lang_of(&f);
                    TuSpec {
                        flags: if lang == Lang::Cxx {
                            cxx_flags.clone()
                        } else {
                            c_flags.clone()
                        },
                        lang,
                        file: f,
                        config: 0,
                    }
                })
                .collect()
        };
        Ok(Walk {
            roots,
            notes,
            walk_errors,
            skipped,
            new_walk,
            specs,
        })
    }

    /// Phase 2, read / lex: the store seeded with the previous scan's files (stable ids, data
    /// reused), every known file re-stat'ed and re-read if changed, and the directories stamped
    /// by the previous scan checked, in parallel.
    fn check_files(&mut self, opts: &ScanOptions, progress: &Progress) -> FileChecks {
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
        let Walk {
            roots,
            mut notes,
            walk_errors,
            skipped,
            new_walk,
            specs,
        } = self.walk(project, progress)?;
        progress.tus_total.store(specs.len(), Ordering::Relaxed);

        let FileChecks {
            store,
            mut prev,
            changed_dirs,
            moved_dirs,
            start_times,
            file_changes,
        } = self.check_files(opts, progress);
        let directive_changed: Vec<bool> = file_changes.iter().map(|c| c.0).collect();
        if progress.cancelled() {
            return Err(ScanError::Cancelled);
        }

        // Compiler environments per (lang, std).
        let syms = Syms::new(&self.interner);
        let mut compilers = std::mem::take(&mut prev.compilers);
        let mut envs: FxMap<(Lang, Option<String>), CompilerEnv> = FxMap::default();
        // The all-branches graph (Header Hero: global include dirs only, its line parser) needs
        // no compiler: it runs, reading and lexing the project's files, while the compiler is
        // asked (a cold scan's longest serial step).
        let tu_ids: Vec<FileId> = specs.iter().map(|s| store.id_of(&s.file)).collect();
        // All branches ignores macros: each file is one TU there, whatever its configurations.
        let hh_tu_ids: Vec<FileId> = if project.configs.len() > 1 {
            let mut seen = FxSet::default();
            tu_ids.iter().copied().filter(|&t| seen.insert(t)).collect()
        } else {
            tu_ids.clone()
        };
        let want_hh = opts.mode == Mode::AllBranches || opts.both_modes;
        let mut hh_dirs: Vec<PathBuf> = Vec::new();
        for f in distinct_flags(&specs) {
            for d in f.include_dirs.iter() {
                if !hh_dirs.contains(d) {
                    hh_dirs.push(d.clone());
                }
            }
        }
        // The all-branches walk runs on its own thread through the whole preprocessed pass (its
        // own parallel waves and the TU evaluation share the pool): neither waits at the other's
        // barriers, and the walk's serial resolution steps overlap TU work.
        // The previous all-branches graph still holds when nothing it was built from changed.
        let hh_kept: Option<HhGraph> = prev
            .hh
            .take()
            .filter(|c| {
                want_hh
                    && !opts.clean
                    && !changed_dirs
                    && c.tus == hh_tu_ids
                    && c.dirs == hh_dirs
                    && c.graph
                        .edges
                        .keys()
                        .all(|&f| !file_changes.get(f as usize).is_none_or(|c| c.1))
            })
            .map(|c| c.graph);
        let out = std::thread::scope(|sc| {
            let hh_job = (want_hh && hh_kept.is_none())
                .then(|| sc.spawn(|| hh_graph(&store, &hh_tu_ids, &hh_dirs, progress)));
            settle_compilers(
                project,
                &specs,
                want_pre,
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
            let prepared: Vec<Prepared> = if want_pre {
                prepare_tus(&specs, &tu_ids, &envs, &store)
            } else {
                Vec::new()
            };

            // Preprocess TUs (reusing unchanged ones).
            progress.set_phase("preprocessing translation units");
            // Unchanged TUs take their previous result (moved, not copied: it holds every edge).
            let mut prev_tus = std::mem::take(&mut prev.tus);
            let prev_tu_count = prev_tus.len();
            let reusable: Vec<Option<TuResult>> = prepared
                .iter()
                .map(|p| {
                    if changed_dirs || opts.clean {
                        return None;
                    }
                    let r = prev_tus.get(&(p.tu, p.key))?;
                    if r.closure
                        .iter()
                        .any(|&f| directive_changed.get(f as usize).copied().unwrap_or(true))
                    {
                        return None;
                    }
                    prev_tus.remove(&(p.tu, p.key))
                })
                .collect();
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
                .or(hh_kept);
            // The walk stops early when cancelled: its graph must not be reported or kept.
            if progress.cancelled() {
                return Err(ScanError::Cancelled);
            }
            // Build the reports (a file's data is loaded where a report needs its line count).
            progress.set_phase("building report");
            let counted_prefixes: Vec<PathBuf> = roots
                .iter()
                .cloned()
                .chain(
                    distinct_flags(&specs)
                        .into_iter()
                        .flat_map(|f| f.include_dirs.iter().chain(f.quote_dirs.iter()).cloned()),
                )
                .collect::<FxSet<_>>()
                .into_iter()
                .collect();
            let stats = ScanStats {
                files_read: store.files_read.load(Ordering::Relaxed),
                files_reused: store.files_reused.load(Ordering::Relaxed),
                tus_evaluated: results.iter().filter(|r| !r.1).count(),
                tus_reused: results.iter().filter(|r| r.1).count(),
                cache_used: !prev.paths.is_empty(),
            };
            let secs = t0.elapsed().as_secs_f64();
            let edge_tab = edge_table.snapshot();
            progress.set_phase("building reports");
            // Nothing probed beyond the previous scan's answers, in unchanged directories: those
            // answers and directory stamps are still exact.
            let same_probes = !changed_dirs
                && !moved_dirs
                && !opts.clean
                && !prev.paths.is_empty()
                && store.files_stat.load(Ordering::Relaxed) == 0;
            let kept_exists = same_probes.then(|| prev.exists.clone());
            let kept_stamps = same_probes.then(|| std::mem::take(&mut prev.dir_stamps));
            // The two modes' reports are independent: build them on both cores, and meanwhile
            // collect what the next rescan needs (existence answers, directory stamps).
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
            let reports = || {
                rayon::join(
                    || want_pre.then(|| report_pre(&inputs, &results, &prepared, &edge_tab)),
                    || hh.as_ref().map(|h| report_hh(&inputs, h, &hh_tu_ids)),
                )
            };
            let remember = || {
                let exists =
                    kept_exists.unwrap_or_else(|| store::Answers::new(store.exists_snapshot()));
                let dir_stamps = kept_stamps.unwrap_or_else(|| {
                    let mut times = store.listed_dir_times();
                    // A directory stamped before keeps the time read at the start of this scan:
                    // answers carried over were checked against that state, not a later one.
                    times.extend(start_times.iter().cloned());
                    stamp_dirs(store.probed_parent_dirs(), times)
                });
                (exists, dir_stamps)
            };
            let ((mut pre_report, mut hh_report), (exists, dir_stamps)) =
                rayon::join(reports, remember);
            if let Some(top) = opts.cuts {
                progress.set_phase("computing cuts");
                match opts.mode {
                    Mode::Preprocessed => {
                        if let Some(r) = pre_report.as_mut() {
                            let check = ExactCheck {
                                ctx: &ctx,
                                prepared: &prepared,
                                results: &results,
                                counted_prefixes: &counted_prefixes,
                                count_system: opts.count_system,
                                progress,
                            };
                            r.cuts = Some(check.cuts(r, &edge_tab, top)?);
                        }
                    }
                    Mode::AllBranches => {
                        if let (Some(r), Some(h)) = (hh_report.as_mut(), hh.as_ref()) {
                            r.cuts = Some(cuts_hh(r, &store, h));
                        }
                    }
                }
            }

            // Remember this scan.
            progress.set_phase("remembering the scan");
            let new_prev = remember_scan(
                &store, dir_stamps, compilers, exists, edge_tab, new_walk, hh, &hh_tu_ids,
                &hh_dirs, &prepared, results,
            );
            self.dirty = stats.files_read > 0
                || stats.tus_evaluated > 0
                || moved_dirs
                || new_prev.paths.len() != prev.paths.len()
                || new_prev.tus.len() != prev_tu_count;
            self.prev = new_prev;

            let secs = t0.elapsed().as_secs_f64();
            let (mut primary, mut secondary) = match opts.mode {
                Mode::Preprocessed => (pre_report.expect("pre"), hh_report),
                Mode::AllBranches => (hh_report.expect("hh"), pre_report),
            };
            primary.scan_seconds = secs;
            if let Some(s) = &mut secondary {
                s.scan_seconds = secs;
                primary.other_mode = Some(s.summary());
                s.other_mode = Some(primary.summary());
            }
            progress.set_phase("done");
            drop_in_background(memo);
            Ok(ScanResult { primary, secondary })
        });
        drop_in_background((store, prev));
        out
    }
}

/// Phase 3, the compiler environment per (language, standard) the TUs need: the answers asked
/// for early, the previous scan's, or a query now (the built-in environment without a compiler);
/// the note saying where they came from.
#[allow(clippy::too_many_arguments)]
fn settle_compilers(
    project: &Project,
    specs: &[TuSpec],
    want_pre: bool,
    early_answers: Option<EarlyAnswers>,
    compilers: &mut FxMap<String, CompilerEnv>,
    envs: &mut FxMap<(Lang, Option<String>), CompilerEnv>,
    notes: &mut Vec<String>,
    progress: &Progress,
) -> Result<(), ScanError> {
    // Answers asked for early; a failed query is an error only if its key is needed.
    let mut failed: FxMap<String, String> = FxMap::default();
    let compiler_name = match early_answers {
        Some(h) => {
            let (name, answers) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            for (k, r) in answers {
                match r {
                    Ok(e) => {
                        compilers.insert(k, e);
                    }
                    Err(e) => {
                        failed.insert(k, e);
                    }
                }
            }
            name
        }
        None => detect_compiler(&project.compiler, compilers.keys()),
    };
    if want_pre {
        progress.set_phase("asking the compiler");
        let mut keys: Vec<(Lang, Option<String>)> = specs
            .iter()
            .map(|s| (s.lang, s.flags.std.clone()))
            .collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let env = match &compiler_name {
                Some(c) => {
                    let ck = compiler_key(c, k.0, &k.1);
                    if let Some(e) = failed.remove(&ck) {
                        return Err(ScanError::Input(e));
                    }
                    match compilers.get(&ck) {
                        Some(e) => e.clone(),
                        None => {
                            let e = compiler::query(c, k.0, k.1.as_deref())
                                .map_err(ScanError::Input)?;
                            compilers.insert(ck, e.clone());
                            e
                        }
                    }
                }
                None => compiler::builtin(k.0, k.1.as_deref()),
            };
            envs.insert(k, env);
        }
        notes.push(match (&project.compiler, &compiler_name) {
            (CompilerChoice::None, _) => NOTE_BUILTIN.into(),
            (_, Some(c)) => format!(
                "predefined macros and system include dirs from `{c}` ({}); {NOTE_COUNTED}",
                envs.values()
                    .map(|e| e.origin.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (_, None) => NOTE_NO_COMPILER.into(),
        });
    }
    Ok(())
}

/// What evaluating a TU needs besides the TU itself (shared by the scan and the exact checks).
#[derive(Clone, Copy)]
struct EvalContext<'a> {
    store: &'a Store,
    syms: &'a Syms,
    interner: &'a Interner,
    def_pool: &'a DefPool,
    /// `None` with `--no-memo`.
    memo: Option<&'a eval::Memo>,
    edge_table: &'a eval::EdgeTable,
}

/// Phase 4, evaluate the TUs (in parallel): a TU whose previous result still holds takes it
/// (`true` beside it), the others are run through the evaluator.
fn evaluate_tus(
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

/// Phase 7, remember: what the next scan of this session reuses (files by id, TU results by
/// (TU, setup key), probe answers and directory stamps, the walk, the all-branches graph).
#[allow(clippy::too_many_arguments)]
fn remember_scan(
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

/// Phase 3a, set up the TUs for evaluation: search paths, base macro tables and forced includes
/// per TU.
fn prepare_tus(
    specs: &[TuSpec],
    tu_ids: &[FileId],
    envs: &FxMap<(Lang, Option<String>), CompilerEnv>,
    store: &Store,
) -> Vec<Prepared> {
    // Search paths, base macro tables and forced includes per TU.
    let mut sp_ids: FxMap<SearchPath, u32> = FxMap::default();
    let mut bases: FxMap<u64, Arc<LazyBase>> = FxMap::default();
    let mut sps: Vec<Arc<SearchPath>> = Vec::new();
    let mut prepared: Vec<Prepared> = Vec::new();
    // TUs mostly share their flags: set each distinct (language, flags) up once (search
    // path directories are stat'ed, forced includes checked).
    type Setup = (Arc<SearchPath>, u32, Arc<LazyBase>, Vec<FileId>, u64);
    let mut setups: FxMap<(Lang, &TuFlags), Setup> = FxMap::default();
    // By identity first: hashing a TU's flags means hashing all its include dirs.
    let mut by_ptr: FxMap<(Lang, *const TuFlags), Setup> = FxMap::default();
    for (s, &tu) in specs.iter().zip(tu_ids) {
        let (sp, sp_id, base, forced, key) = by_ptr
            .entry((s.lang, Arc::as_ptr(&s.flags)))
            .or_insert_with(|| {
                setups
                    .entry((s.lang, &*s.flags))
                    .or_insert_with(|| {
                        let env = &envs[&(s.lang, s.flags.std.clone())];
                        let sp = build_search_path(&s.flags, env);
                        let sp_id = *sp_ids.entry(sp.clone()).or_insert_with(|| {
                            let id = store.search_path_id(&sp);
                            sps.push(Arc::new(sp.clone()));
                            id
                        });
                        let bkey = fx_hash(&(s.lang, &s.flags.std, &s.flags.macros));
                        let base = bases
                            .entry(bkey)
                            .or_insert_with(|| {
                                Arc::new(LazyBase {
                                    text: [env.predefined.clone(), macro_text(&s.flags.macros)],
                                    built: OnceLock::new(),
                                })
                            })
                            .clone();
                        // The driver's implicit pre-includes, then `-include` files, as GCC
                        // orders them.
                        let forced: Vec<FileId> = env
                            .preincludes
                            .iter()
                            .chain(s.flags.forced_includes.iter())
                            .filter(|f| f.is_file())
                            .map(|f| store.id_of(&normalize(f)))
                            .collect();
                        let key = fx_hash(&(&sp, bkey, &forced));
                        (sps[sp_id as usize].clone(), sp_id, base, forced, key)
                    })
                    .clone()
            });
        prepared.push(Prepared {
            tu,
            sp: sp.clone(),
            sp_id: *sp_id,
            base: base.clone(),
            forced: forced.clone(),
            key: *key,
            config: s.config,
        });
    }
    prepared
}

/// The compiler a scan uses: the named one, or the first of `c++`, `g++`, `clang++` on PATH (one
/// that answered before, per the keys of its earlier answers, is taken without running it).
fn detect_compiler<'a>(
    choice: &CompilerChoice,
    known: impl Iterator<Item = &'a String> + Clone,
) -> Option<String> {
    match choice {
        CompilerChoice::Auto => {
            compiler::detect_known(|c| known.clone().any(|k| k.split('|').next() == Some(c)))
        }
        CompilerChoice::Named(n) => Some(n.clone()),
        CompilerChoice::None => None,
    }
}

/// The key of a compiler's answers for one language and standard, in [`Prev::compilers`].
fn compiler_key(compiler: &str, lang: Lang, std: &Option<String>) -> String {
    format!("{compiler}|{lang:?}|{std:?}")
}

/// Detects the compiler and asks it, all languages at once, for each of `keys` it has not
/// answered before (`known`: the keys of earlier answers). Returns the compiler's name and the
/// new answers by key.
#[allow(clippy::type_complexity)]
fn ask_compiler(
    choice: &CompilerChoice,
    known: &[String],
    keys: &[(Lang, Option<String>)],
) -> (Option<String>, Vec<(String, Result<CompilerEnv, String>)>) {
    let Some(name) = detect_compiler(choice, known.iter()) else {
        return (None, Vec::new());
    };
    let answers = std::thread::scope(|sc| {
        let jobs: Vec<_> = keys
            .iter()
            .map(|(lang, std)| (compiler_key(&name, *lang, std), *lang, std))
            .filter(|(k, _, _)| !known.contains(k))
            .map(|(k, lang, std)| {
                let name = &name;
                (
                    k,
                    sc.spawn(move || compiler::query(name, lang, std.as_deref())),
                )
            })
            .collect();
        jobs.into_iter()
            .map(|(k, j)| (k, j.join().unwrap_or_else(|e| std::panic::resume_unwind(e))))
            .collect()
    });
    (Some(name), answers)
}

/// A TU setup's base macro table: the compiler's predefined macros, then the `-D`/`-U` options.
/// Built the first time a TU with that setup is evaluated: a rescan that reuses every TU never
/// needs it (lexing and applying the predefined macros was most of a rescan's setup step).
struct LazyBase {
    /// The predefined `#define`s, then the options as `#define`/`#undef` lines.
    text: [String; 2],
    built: OnceLock<BuiltBase>,
}

struct BuiltBase {
    macros: Macros,
    clang: bool,
    cplusplus: bool,
}

/// The base tables' definitions, shared: a definition that reads the same in two base tables
/// (the compiler's predefined macros, a `-D` two flag sets have in common) is one `MacroDef`
/// with one id, so an inclusion recorded in the memo under one base replays under another
/// wherever it read only what they share (several configurations, or a compilation database
/// whose TUs differ by a define, evaluate most headers once).
#[derive(Default)]
struct DefPool(std::sync::Mutex<FxMap<Sym, Vec<Arc<MacroDef>>>>);

impl DefPool {
    fn share(&self, md: &Arc<MacroDef>) -> Arc<MacroDef> {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let v = g.entry(md.name).or_default();
        match v.iter().find(|d| ***d == **md) {
            Some(d) => d.clone(),
            None => {
                v.push(md.clone());
                md.clone()
            }
        }
    }
}

impl LazyBase {
    fn get(&self, interner: &Interner, syms: &Syms, pool: &DefPool) -> &BuiltBase {
        self.built.get_or_init(|| {
            let mut macros = Macros::default();
            for t in &self.text {
                for d in lex::lex(t.as_bytes(), interner).directives.iter() {
                    match &d.kind {
                        DKind::Define(md) => macros.define(&pool.share(md)),
                        DKind::Undef(s) => macros.undef(*s),
                        _ => {}
                    }
                }
            }
            BuiltBase {
                clang: macros.map.contains_key(&syms.clang),
                cplusplus: macros.map.contains_key(&syms.cplusplus),
                macros,
            }
        })
    }
}

/// Frees a scan's working data (the memo's recorded inclusions, the store's maps) on another
/// thread: that is millions of small allocations, 25 ms at the end of a cold gRPC scan that
/// nothing needs to wait for.
fn drop_in_background<T: Send + 'static>(t: T) {
    // If no thread can be started, the closure and `t` are dropped right here instead.
    let _ = std::thread::Builder::new().spawn(move || drop(t));
}

const NOTE_PREPROCESSED: &str = "preprocessed: conditionals, macros, include guards, #pragma once, #include_next and #include MACRO evaluated per translation unit (the closure `g++ -M` reports)";
const NOTE_ALL_BRANCHES: &str = "all branches: Header Hero's definition (every #include line, all #if branches, no macros, no #include_next), with true reachability";
const NOTE_HH_SYSTEM: &str =
    "system headers are unresolved unless their directories are given with -I";
const NOTE_BUILTIN: &str = "predefined macros: built-in GCC 12 x86-64 Linux set (--compiler none); no system include dirs, so system headers are unresolved";
const NOTE_COUNTED: &str = "system headers are followed for their macros, only files under the roots and the given include dirs are counted";
const NOTE_NO_COMPILER: &str =
    "no C++ compiler found on PATH: built-in GCC macro set, no system include dirs";

/// GCC's chain: quote dirs, then -I, -isystem, the compiler's system dirs, -idirafter. Like GCC,
/// a non-system dir that duplicates a system dir is dropped (the system one keeps its place),
/// later duplicates are dropped, and nonexistent dirs are ignored.
pub fn build_search_path(f: &TuFlags, env: &CompilerEnv) -> SearchPath {
    let exists = |d: &PathBuf| d.is_dir();
    let sys: Vec<PathBuf> = f
        .system_dirs
        .iter()
        .chain(env.system_dirs.iter())
        .cloned()
        .collect();
    let mut bracket: Vec<PathBuf> = Vec::new();
    for d in f.include_dirs.iter() {
        if exists(d) && !sys.contains(d) && !bracket.contains(d) {
            bracket.push(d.clone());
        }
    }
    let n_user = bracket.len();
    for d in sys.iter().chain(f.after_dirs.iter()) {
        if exists(d) && !bracket.contains(d) {
            bracket.push(d.clone());
        }
    }
    let mut quote: Vec<PathBuf> = Vec::new();
    for d in f.quote_dirs.iter().chain(env.quote_dirs.iter()) {
        if exists(d) && !quote.contains(d) {
            quote.push(d.clone());
        }
    }
    let bracket_start = quote.len();
    quote.extend(bracket);
    SearchPath {
        dirs: quote,
        bracket_start,
        system_start: bracket_start + n_user,
    }
}

/// Breadth-first scan from the TUs, exactly as `Scanner.cs` resolves (see notes §2): `"x"` tries
/// the includer's directory, then the include dirs in order; `<x>` only the include dirs; results
/// cached per include string. Files are read in parallel per wave.
pub fn hh_graph(
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

fn skipped_files(
    skipped: &[(PathBuf, &'static str)],
    roots: &[PathBuf],
) -> Vec<super::report::SkippedFile> {
    skipped
        .iter()
        .map(|(p, kind)| super::report::SkippedFile {
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

struct NodeMap<'a> {
    store: &'a Store,
    roots: &'a [PathBuf],
    /// Node per file id (dense: reports map millions of closure and edge entries).
    idx: Vec<u32>,
    nodes: Vec<Node>,
    ids: Vec<FileId>,
}

impl<'a> NodeMap<'a> {
    fn new(store: &'a Store, roots: &'a [PathBuf]) -> Self {
        NodeMap {
            store,
            roots,
            idx: vec![u32::MAX; store.len()],
            nodes: Vec::new(),
            ids: Vec::new(),
        }
    }

    #[inline]
    fn get(&mut self, f: FileId, counted: &dyn Fn(&Path) -> bool) -> u32 {
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

fn finish_graph(nodes: Vec<Node>, edges: Vec<(u32, u32, u32)>, tus: Vec<TuReach>) -> Graph {
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
struct ReportInputs<'a> {
    project: &'a Project,
    opts: &'a ScanOptions,
    store: &'a Store,
    roots: &'a [PathBuf],
    /// Files under these count (with `opts.count_system`, every file does).
    counted_prefixes: &'a [PathBuf],
    walk_errors: &'a [(PathBuf, String)],
    skipped: &'a [(PathBuf, &'static str)],
    notes: &'a [String],
    stats: &'a ScanStats,
    secs: f64,
}

/// Phase 5a, the preprocessed report: each TU's result (in `prepared`'s order) over the
/// session's edge table.
fn report_pre(
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

/// Phase 5b, the all-branches report from its graph `h` over the TUs `tus`.
fn report_hh(x: &ReportInputs<'_>, h: &HhGraph, tus: &[FileId]) -> Report {
    let mut notes = vec![NOTE_ALL_BRANCHES.to_string()];
    if !h.missing.is_empty() {
        notes.push(NOTE_HH_SYSTEM.into());
    }
    let mut md = mode_data_hh(x.store, h, tus, x.roots, x.walk_errors);
    md.skipped = skipped_files(x.skipped, x.roots);
    let full = x.opts.mode == Mode::AllBranches || !x.opts.other_mode_summary_only;
    Report::build(md, x.secs, notes, x.stats.clone(), full)
}

/// Phase 6, the cuts' exact check (`--cuts N`, preprocessed mode): the TUs a cut affects are
/// evaluated again with its directive removed (or its header emptied), over the scan's own
/// evaluation context (memo, edge table, base macros), so the top of the list is the compiler's
/// truth.
struct ExactCheck<'a> {
    ctx: &'a EvalContext<'a>,
    prepared: &'a [Prepared],
    /// The scan's TU results, in `prepared`'s order.
    results: &'a [(TuResult, bool)],
    counted_prefixes: &'a [PathBuf],
    count_system: bool,
    progress: &'a Progress,
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
    fn cuts(
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

/// Every directive's saving in the all-branches report `r`: exact (no macros).
fn cuts_hh(r: &Report, store: &Store, h: &HhGraph) -> Vec<cuts::Cut> {
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

fn add_walk_errors(
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
