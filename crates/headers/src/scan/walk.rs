//! Phase 1 of a scan, the walk: the translation units and their flags, from a compilation
//! database (per configuration) or by walking the roots (the walk kept for the next scan).

use super::files::dir_mtime;
use super::{ScanError, Scanner, TU_EXTS, TuSpec};
use crate::compdb::{self, TuFlags};
use crate::compiler::Lang;
use crate::state::WalkCache;
use crate::util::{FxSet, absolutize, normalize};
use crate::{Progress, Project};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
struct Walked {
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
fn find_tus_cached(roots: &[PathBuf], prev: Option<WalkCache>) -> Walked {
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
    let entries = compdb::load(&absolutize(cc))?;
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
            flags.std = if Lang::of_path(&e.file) == Lang::Cxx {
                project.std.clone()
            } else {
                project.cstd.clone()
            };
        }
        v.push(TuSpec {
            lang: Lang::of_path(&e.file),
            file: e.file,
            flags: Arc::new(flags),
            config,
        });
    }
    Ok(v)
}

/// What the walk phase found: the TUs to evaluate and what the reports say about the walk.
pub(super) struct Walk {
    pub(super) roots: Vec<PathBuf>,
    pub(super) notes: Vec<String>,
    pub(super) walk_errors: Vec<(PathBuf, String)>,
    pub(super) skipped: Vec<(PathBuf, &'static str)>,
    pub(super) new_walk: Option<WalkCache>,
    pub(super) specs: Vec<TuSpec>,
}

impl Scanner {
    /// The project's translation units with the flags the scan evaluates them with (module
    /// `timing` runs a compiler on some of them): phase 1 alone, on a fresh walk.
    pub(crate) fn tu_specs(project: &Project) -> Result<Vec<TuSpec>, ScanError> {
        Ok(Scanner::new().walk(project, &Progress::default())?.specs)
    }

    /// Phase 1, walk: the TUs and their flags, from the configurations' or the project's
    /// compilation database, or by walking the roots (reusing the previous walk).
    pub(super) fn walk(
        &mut self,
        project: &Project,
        progress: &Progress,
    ) -> Result<Walk, ScanError> {
        progress.set_phase("finding translation units");
        let roots: Vec<PathBuf> = project.roots.iter().map(|r| absolutize(r)).collect();
        for r in &roots {
            if !r.exists() {
                return Err(ScanError::NoRoot(r.clone()));
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
                    return Err(ScanError::ConfigTwice(c.name.clone()));
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
                    let lang = Lang::of_path(&f);
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
}
