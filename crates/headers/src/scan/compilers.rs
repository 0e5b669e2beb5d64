//! Phases 0 and 3 of a scan: the compiler's predefined macros and system dirs per (language,
//! standard), asked for early on a thread when the languages are known up front, else when the
//! TUs are known; the note saying where they came from.

use super::{ScanError, Scanner, TuSpec};
use crate::compiler::{self, CompilerEnv, CompilerError, Lang};
use crate::util::FxMap;
use crate::{CompilerChoice, Progress, Project};

/// The compiler's answers asked for before the walk: (compiler name, answers per key).
pub(super) type EarlyAnswers = std::thread::JoinHandle<(
    Option<String>,
    Vec<(String, Result<CompilerEnv, CompilerError>)>,
)>;

impl Scanner {
    /// Phase 0: the compiler's answers asked for on a thread while the roots are walked, when
    /// the languages and standards are known up front (see the comment inside).
    pub(super) fn ask_compiler_early(
        &self,
        project: &Project,
        want_pre: bool,
    ) -> Option<EarlyAnswers> {
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
}

/// Phase 3, the compiler environment per (language, standard) the TUs need: the answers asked
/// for early, the previous scan's, or a query now (the built-in environment without a compiler);
/// the note saying where they came from.
#[allow(clippy::too_many_arguments)]
pub(super) fn settle_compilers(
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
    let mut failed: FxMap<String, CompilerError> = FxMap::default();
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
                        return Err(ScanError::Compiler(e));
                    }
                    match compilers.get(&ck) {
                        Some(e) => e.clone(),
                        None => {
                            let e = compiler::query(c, k.0, k.1.as_deref())?;
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
) -> (
    Option<String>,
    Vec<(String, Result<CompilerEnv, CompilerError>)>,
) {
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

const NOTE_BUILTIN: &str = "predefined macros: built-in GCC 12 x86-64 Linux set (--compiler none); no system include dirs, so system headers are unresolved";
const NOTE_COUNTED: &str = "system headers are followed for their macros, only files under the roots and the given include dirs are counted";
const NOTE_NO_COMPILER: &str =
    "no C++ compiler found on PATH: built-in GCC macro set, no system include dirs";
