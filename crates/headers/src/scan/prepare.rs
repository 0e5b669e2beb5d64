//! Phase 3a of a scan: each TU set up for evaluation (GCC's search-path chain, the base macro
//! table built lazily and shared, forced includes), once per distinct (language, flags).

use super::TuSpec;
use crate::compdb::{MacroOpt, TuFlags};
use crate::compiler::{CompilerEnv, Lang};
use crate::eval::{self, TuInput};
use crate::lex::MacroDef;
use crate::lex::{self, DKind};
use crate::pp::{Macros, Syms};
use crate::store::{FileId, SearchPath, Store};
use crate::util::Sym;
use crate::util::{FxMap, Interner, fx_hash, normalize};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

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
pub(super) struct Prepared {
    pub(super) tu: FileId,
    pub(super) sp: Arc<SearchPath>,
    pub(super) sp_id: u32,
    pub(super) base: Arc<LazyBase>,
    pub(super) forced: Vec<FileId>,
    pub(super) key: u64,
    pub(super) config: u32,
}
impl Prepared {
    /// The evaluator's input for this TU over its built base macros; `skip` is the
    /// exact check's edit (`None` for a scan).
    pub(super) fn input<'a>(
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

/// Phase 3a, set up the TUs for evaluation: search paths, base macro tables and forced includes
/// per TU.
pub(super) fn prepare_tus(
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

/// A TU setup's base macro table: the compiler's predefined macros, then the `-D`/`-U` options.
/// Built the first time a TU with that setup is evaluated: a rescan that reuses every TU never
/// needs it (lexing and applying the predefined macros was most of a rescan's setup step).
pub(super) struct LazyBase {
    /// The predefined `#define`s, then the options as `#define`/`#undef` lines.
    text: [String; 2],
    built: OnceLock<BuiltBase>,
}

pub(super) struct BuiltBase {
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
pub(super) struct DefPool(std::sync::Mutex<FxMap<Sym, Vec<Arc<MacroDef>>>>);

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
    pub(super) fn get(&self, interner: &Interner, syms: &Syms, pool: &DefPool) -> &BuiltBase {
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

/// GCC's chain: quote dirs, then -I, -isystem, the compiler's system dirs, -idirafter. Like GCC,
/// a non-system dir that duplicates a system dir is dropped (the system one keeps its place),
/// later duplicates are dropped, and nonexistent dirs are ignored.
fn build_search_path(f: &TuFlags, env: &CompilerEnv) -> SearchPath {
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
