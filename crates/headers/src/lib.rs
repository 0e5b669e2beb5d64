//! The C/C++ header profiler, with no UI: Header Hero's report ("which headers get parsed over
//! and over"), computed two ways side by side:
//!
//! - **all branches**: Header Hero 2011's exact definition (every `#include` line, every `#if`
//!   branch, no macros), with true reachability instead of its include-cycle artefact;
//! - **preprocessed**: each translation unit preprocessed for real (conditionals, macros,
//!   guards, `#pragma once`, `#include_next`, `#include MACRO`, `__has_include`), using the
//!   compiler's predefined macros and system dirs, aiming at the closure `g++ -M` reports.
//!
//! Layout: [`lex`] (directive extraction; punctuators are [`lex::Punct`]), [`pp`] (macros and `#if`: the unsafe table in
//! `pp::macro_table`, expansion in `pp::expand`, `#if` evaluation in `pp::cond`), [`store`]
//! (files and resolution), [`eval`] (per-TU preprocessing), [`scan`] (orchestration in named
//! phases: walk, check files, settle compilers, prepare and evaluate TUs, build reports,
//! remember; the [`Scanner`] session), [`state`] (what a scan leaves for the next one), [`lazy`] (data kept
//! encoded until used), [`report`] (numbers, detail view, why-chains, what-if, JSON/CSV/dot),
//! [`cache`] (on-disk cache of a [`state::Prev`]), [`watch`] (rescan on change), [`cuts`] (the
//! saving of every `#include`), [`churn`] (rebuild cost from history), [`timing`] (measured
//! seconds per header, the whole build predicted), [`pch`] (the precompiled-header advisor),
//! [`compiler`], [`compdb`], [`cli`].
//! Public modules are only those the binary, tests, benches and fuzz targets use (`cli`, `cuts`,
//! `eval`, `lex`, `pp`, `util`, `watch`) plus the re-exports below; the rest is `pub(crate)`.
//!
//! Module dependencies form no cycle: `util` and `lazy` are leaves; `lex` → `lazy`; `pp` →
//! `lex`; `store` → `lex`, `lazy`; `eval` → `pp`, `store`; `state` → `eval`, `store`,
//! `compiler`; `cache` → `state`; `scan` → `state`, `eval`, `report`, `cuts`, …; `cuts` →
//! `report` (which holds the [`report::Cut`] type it fills); `watch` → `scan`.
//!
//! For a UI: build a [`Project`] and [`ScanOptions`], run [`scan`] (or keep a [`Scanner`] for
//! cheap rescans) on a worker thread while polling the shared [`Progress`] (set its cancel flag
//! to stop), then read the [`Report`]: `headers`, `hubs`, `cycles`, `missing`, `errors`,
//! [`Report::detail`], [`Report::why_chain`], [`Report::what_if`].
//!
//! JSON keys (stable, scripts read them): `mode`, `files`, `translation_units`, `total_lines`,
//! `total_parsed`, `blowup`, `scan_seconds`, `headers[]` (`path`, `lines`, `tu`, `tu_count`,
//! `contributed`, `transitive_includes`, `transitive_lines`, `included_by_count`, `hub_score`,
//! `includes`, `included_by`), `hubs`, `cycles`, `missing`, `errors`, `skipped_special`
//! (`path`, `kind`), `skipped_special_count`, `notes`, `other_mode`, `stats`; with `--cuts`,
//! `cuts[]` (see [`cuts`]).
//!
//! Hostile input is bounded: `#if` expressions nest at most [`pp::MAX_EXPRESSION_DEPTH`] levels,
//! macro arguments [`pp::MAX_EXPANSION_DEPTH`], and one directive's macro expansion spends at
//! most [`pp::EXPANSION_BUDGET_FLOOR`] + [`pp::EXPANSION_UNITS_PER_TOKEN`] units per token of
//! the directive; past a limit the directive gets an error entry and the scan goes on. Files are
//! opened only when they are regular files (checked on the handle, see
//! [`clipforge_base::fsio::open_regular`]); FIFOs, devices and sockets named like a TU are listed in
//! `skipped_special`.

// Parallel arrays indexed by position read best as index loops.
#![allow(clippy::needless_range_loop)]

pub(crate) mod cache;
pub mod churn;

pub(crate) mod compdb;
pub(crate) mod compiler;
pub mod cuts;
pub mod eval;
pub(crate) mod lazy;
pub mod lex;
pub mod pch;
pub mod pp;
pub mod report;
pub(crate) mod scan;
pub(crate) mod state;
pub(crate) mod store;
pub mod timing;
pub(crate) mod tracesum;
pub mod util;
pub mod watch;

pub use cache::{CacheError, CacheNotSaved, Corrupt};
pub use compdb::{CompDbError, EntryProblem, MacroOpt};
pub use report::{ChainStep, Detail, FileEntry, Report, WhatIf, WhatIfResult, WhyError};
pub use scan::{ScanError, ScanResult, Scanner};

use serde::Serialize;
use std::path::{Path, PathBuf};

/// Which of the two definitions a report follows (see the module doc). A domain type: the
/// CLI maps its own `--mode` value onto it (`cli::ModeArg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    AllBranches,
    Preprocessed,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::AllBranches => "all-branches",
            Mode::Preprocessed => "preprocessed",
        })
    }
}

/// Which compiler to ask for predefined macros and system include dirs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum CompilerChoice {
    /// `c++`, `g++`, then `clang++` on PATH.
    #[default]
    Auto,
    Named(String),
    /// Built-in GCC x86-64 Linux macro set, no system dirs.
    None,
}

/// What to scan.
#[derive(Clone, Debug, Default)]
pub struct Project {
    /// Scanned recursively for translation units (dot-directories skipped).
    pub roots: Vec<PathBuf>,
    /// `-I` dirs, in order (as the scan uses them: see [`Project::resolve_dir`] for relative
    /// ones, which the CLI and the app apply before building a project).
    pub include_dirs: Vec<PathBuf>,
    /// `-iquote` dirs.
    pub quote_dirs: Vec<PathBuf>,
    /// `-isystem` dirs.
    pub system_dirs: Vec<PathBuf>,
    /// `-D` / `-U`, in order.
    pub defines: Vec<MacroOpt>,
    /// When set, TUs and their flags come from this compilation database.
    pub compile_commands: Option<PathBuf>,
    /// Several build configurations scanned in one run (each its own compilation database; the
    /// `-D`/`-I` above apply to all of them). When non-empty, `compile_commands` is not used:
    /// the reports then carry per-configuration figures (see [`report::ConfigSummary`]).
    pub configs: Vec<Configuration>,
    /// C++ standard (`-std=` value) for C++ TUs; C TUs use `cstd`.
    pub std: Option<String>,
    pub cstd: Option<String>,
    pub compiler: CompilerChoice,
    /// Where the cache lives; `None`: the user cache dir, keyed by the roots.
    pub cache_file: Option<PathBuf>,
}

impl Project {
    /// The folders whose git history `--churn` (module `churn`) reads: the roots, or the
    /// compilation databases' folders.
    pub fn history_dirs(&self) -> Vec<PathBuf> {
        if !self.roots.is_empty() {
            return self.roots.iter().map(|r| util::absolutize(r)).collect();
        }
        self.compile_commands
            .iter()
            .chain(self.configs.iter().map(|c| &c.compile_commands))
            .map(|c| {
                let c = util::absolutize(c);
                c.parent().map(|p| p.to_path_buf()).unwrap_or(c)
            })
            .collect()
    }

    /// The one rule for a relative include dir (`-I`, `-iquote`, `-isystem`), the same in the
    /// CLI and the app: it is taken from the first source root (the app has no meaningful
    /// current directory, and a command must not give another answer when run from another
    /// folder); without roots (a compilation database only), from the current directory.
    pub fn resolve_dir(roots: &[PathBuf], dir: &Path) -> PathBuf {
        match roots.first() {
            Some(base) if dir.is_relative() => base.join(dir),
            _ => dir.to_path_buf(),
        }
    }

    /// [`Project::resolve_dir`], and a missing folder is an error (a typo would otherwise show
    /// up only as hundreds of missing includes and a wrong blowup): the message names the flag,
    /// what was typed, the folder looked for and the rule for relative dirs.
    pub fn resolve_existing_dir(
        roots: &[PathBuf],
        flag: &str,
        given: &Path,
    ) -> Result<PathBuf, ProjectError> {
        let resolved = Self::resolve_dir(roots, given);
        if resolved.is_dir() {
            return Ok(resolved);
        }
        let from_root = (given.is_relative() && !roots.is_empty()).then(|| roots[0].clone());
        Err(ProjectError::DirNotFound {
            flag: flag.to_string(),
            given: given.to_path_buf(),
            looked: (resolved != given).then_some(resolved),
            under_cwd: (from_root.is_some() && given.is_dir()).then(|| util::absolutize(given)),
            from_root,
        })
    }
}

/// A project description that cannot be scanned: the message names the flag (or field), what
/// was given and what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProjectError {
    /// An include dir that is not a folder (`-I`, the app's "Include dir", ...).
    #[error(
        "{flag} {}: folder not found{}",
        given.display(),
        dir_hint(looked.as_deref(), from_root.as_deref(), under_cwd.as_deref())
    )]
    DirNotFound {
        flag: String,
        given: PathBuf,
        /// The folder looked for, when the rule for relative dirs made it another path.
        looked: Option<PathBuf>,
        /// The first source root a relative dir was taken from.
        from_root: Option<PathBuf>,
        /// The folder `given` names from the current directory, when that one exists.
        under_cwd: Option<PathBuf>,
    },
    #[error("--config {0:?}: expected NAME=path/to/compile_commands.json")]
    BadConfig(String),
}

/// The tail of [`ProjectError::DirNotFound`]'s message: the folder looked for and the rule for
/// relative dirs.
fn dir_hint(looked: Option<&Path>, from_root: Option<&Path>, under_cwd: Option<&Path>) -> String {
    let mut s = String::new();
    if let Some(l) = looked {
        s.push_str(&format!(" (looked for {})", l.display()));
    }
    if let Some(r) = from_root {
        s.push_str(&format!(
            " (a relative include dir is taken from the first source root, {})",
            r.display()
        ));
        if let Some(c) = under_cwd {
            s.push_str(&format!(
                "; it exists under the current directory: give it as {}",
                c.display()
            ));
        }
    }
    s
}

/// One build configuration of a [`Project`] (debug / release, Linux / Windows, ...).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Configuration {
    /// Shown in the reports (the JSON's `configs[].name`).
    pub name: String,
    /// Its translation units and their flags.
    pub compile_commands: PathBuf,
}

impl Configuration {
    /// `NAME=path/to/compile_commands.json`, as given to `--config`.
    pub fn parse(s: &str) -> Result<Configuration, ProjectError> {
        match s.split_once('=') {
            Some((n, p)) if !n.trim().is_empty() && !p.is_empty() => Ok(Configuration {
                name: n.trim().to_string(),
                compile_commands: PathBuf::from(p),
            }),
            _ => Err(ProjectError::BadConfig(s.to_string())),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// The primary mode (the other one is computed too when `both_modes`).
    pub mode: Mode,
    pub both_modes: bool,
    /// Ignore the cache and the previous scan ("Clean rescan").
    pub clean: bool,
    /// Count system headers too (compiler-agreement tests compare whole closures).
    pub count_system: bool,
    /// Load/save the on-disk cache (the free function [`scan`] only).
    pub use_disk_cache: bool,
    /// Disable cross-TU memoisation of inclusions (for testing it: results must not change).
    pub no_memo: bool,
    /// The other mode's report carries only what the CLI prints of it: its summary numbers,
    /// missing includes, cycles and errors, not its per-file table (see [`Report::build`]).
    pub other_mode_summary_only: bool,
    /// Compute every directive's saving (the primary report's `cuts`, see [`cuts`]) and confirm
    /// this many of the best by evaluating their TUs again with the edit; `None`: no cuts.
    pub cuts: Option<usize>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            mode: Mode::Preprocessed,
            both_modes: true,
            clean: false,
            count_system: false,
            use_disk_cache: true,
            no_memo: false,
            other_mode_summary_only: false,
            cuts: None,
        }
    }
}

/// Live progress a UI polls while a scan runs on another thread (translation units done and
/// total, the phase); `cancel()` stops the scan at the next translation unit. The shared
/// [`clipforge_base::task::Progress`].
pub type Progress = clipforge_base::task::Progress<clipforge_base::task::ScanCounters>;

/// One-shot scan with the on-disk cache: loads it (unless `opts.clean` or disabled), scans,
/// saves it back. Cache problems never fail the scan; they are added to the report's notes.
pub fn scan(
    project: &Project,
    opts: &ScanOptions,
    progress: &Progress,
) -> Result<ScanResult, ScanError> {
    let mut scanner = Scanner::new();
    scan_cached(&mut scanner, project, opts, progress)
}

/// [`scan`] with a caller-owned session (which then holds everything the scan read; the CLI
/// leaks it at exit instead of freeing hundreds of thousands of small allocations).
pub fn scan_cached(
    scanner: &mut Scanner,
    project: &Project,
    opts: &ScanOptions,
    progress: &Progress,
) -> Result<ScanResult, ScanError> {
    let (mut res, (), saved) = scan_cached_then(scanner, project, opts, progress, |_| ())?;
    if let Err(n) = saved {
        let n = n.to_string();
        res.primary.notes.push(n.clone());
        if let Some(s) = &mut res.secondary {
            s.notes.push(n);
        }
    }
    Ok(res)
}

/// [`scan_cached`] that runs `then` on the result (writing the reports, say) while the cache is
/// being saved, instead of after. Returns the result, what `then` returned, and the outcome of
/// the save (a note when it failed; the result's notes cannot carry it, `then` already ran).
pub fn scan_cached_then<T: Send>(
    scanner: &mut Scanner,
    project: &Project,
    opts: &ScanOptions,
    progress: &Progress,
    then: impl FnOnce(&ScanResult) -> T + Send,
) -> Result<(ScanResult, T, Result<(), CacheNotSaved>), ScanError> {
    let cache_path = cache::cache_path(project);
    let mut cache_note = None;
    if opts.use_disk_cache
        && !opts.clean
        && let Some(p) = &cache_path
    {
        progress.set_phase("loading cache");
        match cache::load(p, scanner.map_cache_file) {
            Ok(Some((interner, prev))) => {
                scanner.interner = std::sync::Arc::new(interner);
                scanner.prev = prev;
            }
            Ok(None) => {}
            Err(e) => cache_note = Some(format!("cache not used: {e}")),
        }
    }
    let mut res = scanner.scan(project, opts, progress)?;
    if let Some(n) = cache_note {
        res.primary.notes.push(n.clone());
        if let Some(s) = &mut res.secondary {
            s.notes.push(n);
        }
    }
    let save_to = cache_path.filter(|_| opts.use_disk_cache && scanner.dirty);
    let scanner = &*scanner;
    let (out, saved) = std::thread::scope(|sc| {
        let save = save_to.as_ref().map(|p| {
            sc.spawn(move || {
                progress.set_phase("saving cache");
                let r = cache::save(p, &scanner.prev, &scanner.interner).map_err(CacheNotSaved);
                progress.set_phase("done");
                r
            })
        });
        let out = then(&res);
        let saved = save.map_or(Ok(()), |h| {
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
        });
        (out, saved)
    });
    Ok((res, out, saved))
}
