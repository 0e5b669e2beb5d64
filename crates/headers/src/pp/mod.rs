//! The preprocessor core used in "preprocessed" mode: the macro table, macro expansion (object-
//! and function-like macros, `#`, `##`, variadics, GNU `, ## __VA_ARGS__`, `__VA_OPT__`, blue
//! paint via Prosser's hide sets) and `#if` expression evaluation (`defined`, `__has_include`,
//! integer arithmetic with C's signed/unsigned rules). Also builds the header name of
//! `#include MACRO`.
//!
//! Layout: [`macro_table`] (the unsafe dense table), `expand` (macro expansion), `cond`
//! (`#if` evaluation); here the recorded effects the memo replays, the [`Macros`] table with its
//! recorders, and the limits.
//!
//! Only what decides which files get included is modelled; tokens outside directives are never
//! expanded (the compiler's answer for `-M` does not depend on them).

use super::lex::{MacroDef, P, PUNCTS, Punct, TK, Tok, spell};
use super::util::{FxMap, Interner, Sym};
use std::sync::Arc;

/// Interned names the evaluator compares against.
pub struct Syms {
    pub defined: Sym,
    pub has_include: Sym,
    pub has_include_next: Sym,
    pub has_attribute: Sym,
    pub has_cpp_attribute: Sym,
    pub has_builtin: Sym,
    pub has_feature: Sym,
    pub has_extension: Sym,
    pub is_identifier: Sym,
    pub va_args: Sym,
    pub va_opt: Sym,
    pub line: Sym,
    pub file: Sym,
    pub counter: Sym,
    pub include_level: Sym,
    pub base_file: Sym,
    pub true_: Sym,
    pub false_: Sym,
    pub clang: Sym,
    pub cplusplus: Sym,
    pub zero: Sym,
    pub one: Sym,
}

impl Syms {
    pub fn new(i: &Interner) -> Self {
        Syms {
            defined: i.intern(b"defined"),
            has_include: i.intern(b"__has_include"),
            has_include_next: i.intern(b"__has_include_next"),
            has_attribute: i.intern(b"__has_attribute"),
            has_cpp_attribute: i.intern(b"__has_cpp_attribute"),
            has_builtin: i.intern(b"__has_builtin"),
            has_feature: i.intern(b"__has_feature"),
            has_extension: i.intern(b"__has_extension"),
            is_identifier: i.intern(b"__is_identifier"),
            va_args: i.intern(b"__VA_ARGS__"),
            va_opt: i.intern(b"__VA_OPT__"),
            line: i.intern(b"__LINE__"),
            file: i.intern(b"__FILE__"),
            counter: i.intern(b"__COUNTER__"),
            include_level: i.intern(b"__INCLUDE_LEVEL__"),
            base_file: i.intern(b"__BASE_FILE__"),
            true_: i.intern(b"true"),
            false_: i.intern(b"false"),
            clang: i.intern(b"__clang__"),
            cplusplus: i.intern(b"__cplusplus"),
            zero: i.intern(b"0"),
            one: i.intern(b"1"),
        }
    }
}

/// A side effect of preprocessing a header, recorded so the same inclusion can be replayed in
/// another translation unit without re-evaluating it (see `eval`'s memo). Kept to 16 bytes (the
/// rare cases boxed): replaying walks millions of them.
#[derive(Clone, Debug)]
pub enum Effect {
    Define(Arc<MacroDef>),
    Undef(Sym),
    Once(u32),
    /// An `#include` taken: (edge id, (includer, included) pair id, included file), ids from the
    /// scan's `eval::EdgeTable`: an edge of the TU (the first per pair) and a closure entry.
    Include(u32, u32, u32),
    Missing(Box<(u32, u32, String, bool)>),
    Error(Box<(u32, u32, String)>),
    /// A nested inclusion's recorded effects.
    Sub(Arc<Entry>),
}

/// A recorded inclusion: valid wherever the macros it read (and the `#pragma once` files it
/// checked) have the same values; then its effects are the same too.
#[derive(Debug, Default)]
pub struct Entry {
    /// (macro, definition id or 0 when undefined) as first read from outside the header.
    pub reads: Vec<(Sym, u32)>,
    pub once_reads: Vec<(u32, bool)>,
    pub effects: Vec<Effect>,
}

/// The recorder of one inclusion in progress. What it has "seen" (read or written) is not kept
/// per recorder: a macro was seen by a recorder iff its last event in [`Macros::last`] is later
/// than the recorder's `start` (recorders nest, so they all end "now"). That makes a read one
/// array check instead of hash-set merges up the include stack.
#[derive(Default)]
pub struct Rec {
    /// Clock value when this recorder started.
    pub start: u32,
    pub reads: Vec<(Sym, u32)>,
    pub once_reads: Vec<(u32, bool)>,
    pub effects: Vec<Effect>,
    /// Depends on something beyond macros (`__COUNTER__`, `__INCLUDE_LEVEL__`, push/pop_macro...).
    pub poisoned: bool,
}

/// The definition's id ([`MacroDef::id`]), 0 when undefined.
pub(crate) fn def_id(m: Option<&MacroDef>) -> u32 {
    m.map_or(0, |m| m.id)
}

/// Clock of the last event on `i` in `last`, growing it as needed.
#[inline]
pub(crate) fn stamp(last: &mut Vec<u32>, i: u32) -> &mut u32 {
    let i = i as usize;
    if i >= last.len() {
        last.resize((i + 1).max(last.len() * 2).max(1024), 0);
    }
    &mut last[i]
}

/// Records a first read by every open recorder that has not seen `i` since it started: those
/// are a suffix of the stack, since recorders nest and start in stack order.
#[inline]
pub(crate) fn note_first_read<T: Copy>(
    rec: &mut [Rec],
    last: &mut Vec<u32>,
    clock: &mut u32,
    i: u32,
    v: T,
    list: impl Fn(&mut Rec) -> &mut Vec<(u32, T)>,
) {
    if rec.is_empty() {
        return;
    }
    let l = stamp(last, i);
    for r in rec.iter_mut().rev() {
        if *l > r.start {
            break;
        }
        list(r).push((i, v));
    }
    *clock += 1;
    *l = *clock;
}

mod cond;
mod expand;
mod macro_table;

/// Why an `#if` could not be evaluated or an `#include MACRO` named no header: GCC's message,
/// which becomes the directive's error entry (GCC takes such a condition as false, so do we).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PpError {
    #[error("#if with no expression")]
    NoExpression,
    #[error("missing binary operator before token \"{0}\"")]
    MissingOperator(String),
    #[error(
        "#if expression nested too deeply (more than {} levels)",
        MAX_EXPRESSION_DEPTH
    )]
    NestedTooDeeply,
    #[error("'?' without following ':'")]
    QuestionWithoutColon,
    #[error("invalid token in preprocessor expression")]
    InvalidToken,
    #[error("division by zero in #if")]
    DivisionByZero,
    /// A punctuator that has no meaning in `#if` (its spelling).
    #[error("token \"{0}\" is not valid in preprocessor expressions")]
    NotValid(&'static str),
    #[error("missing ')' in expression")]
    MissingParen,
    #[error("token is not valid in preprocessor expressions (string literal)")]
    StringLiteral,
    #[error("invalid integer constant \"{0}\" in #if")]
    BadInteger(String),
    #[error("floating constant in preprocessor expression")]
    Floating,
    #[error("integer constant is too large for its type")]
    TooLarge,
    /// The directive's expansion ran out of its budget (`budget`: the units it had).
    #[error(
        "macro expansion too large: more than {budget} units of work for this directive \
         (limit {} + {} per token of the directive; a macro bomb or a runaway macro chain)",
        EXPANSION_BUDGET_FLOOR,
        EXPANSION_UNITS_PER_TOKEN
    )]
    ExpansionTooLarge { budget: usize },
    #[error(
        "macro arguments nested too deeply (more than {} levels)",
        MAX_EXPANSION_DEPTH
    )]
    ArgumentsTooDeep,
    #[error("unterminated argument list invoking macro \"{0}\"")]
    Unterminated(String),
    #[error("macro \"{name}\" passed {given} arguments, but takes {takes}")]
    ArgumentCount {
        name: String,
        given: usize,
        takes: usize,
    },
    /// `__has_include(…`, `defined (X` and the like without their `)` (the operator's name).
    #[error("missing ')' after \"{0}\"")]
    MissingParenAfter(String),
    #[error("operator \"__has_include\" requires a header-name")]
    HasIncludeNeedsHeader,
    #[error("operator \"defined\" requires an identifier")]
    DefinedNeedsIdentifier,
    #[error("#include expects \"FILENAME\" or <FILENAME>")]
    IncludeExpects,
}

pub use cond::eval_if;
pub(crate) use cond::is_defined;
#[allow(unused_imports)]
use cond::*;
pub use expand::include_name;
#[allow(unused_imports)]
use expand::*;
pub use macro_table::MacroMap;

/// The macro table of one translation unit, with the recorder stack used for memoisation.
#[derive(Default)]
pub struct Macros {
    pub map: MacroMap,
    pub pushed: FxMap<Sym, Vec<Option<Arc<MacroDef>>>>,
    pub counter: u64,
    pub rec: Vec<Rec>,
    /// Event clock of the recorders (see [`Rec`]); per macro, the clock of its last read or write.
    pub clock: u32,
    pub last: Vec<u32>,
}

impl Clone for Macros {
    fn clone(&self) -> Self {
        Macros {
            map: self.map.clone(),
            pushed: self.pushed.clone(),
            counter: self.counter,
            rec: Vec::new(),
            clock: 0,
            last: Vec::new(),
        }
    }
}

impl Macros {
    #[inline]
    pub(crate) fn note_read(&mut self, s: Sym, p: u32) {
        note_first_read(&mut self.rec, &mut self.last, &mut self.clock, s, p, |r| {
            &mut r.reads
        });
    }
    /// Marks `s` written (seen) by every open recorder.
    #[inline]
    pub(crate) fn note_written(&mut self, s: Sym) {
        if !self.rec.is_empty() {
            self.clock += 1;
            *stamp(&mut self.last, s) = self.clock;
        }
    }
    /// Opens a recorder for an inclusion.
    pub(crate) fn begin_rec(&mut self) {
        self.clock += 1;
        self.rec.push(Rec {
            start: self.clock,
            ..Default::default()
        });
    }
    /// Looks a macro up (recorded).
    pub(crate) fn lookup(&mut self, s: Sym) -> Option<Arc<MacroDef>> {
        let m = self.map.get_arc(&s);
        self.note_read(s, def_id(m.as_deref()));
        m
    }
    /// Is it defined (recorded)?
    pub(crate) fn contains(&mut self, s: Sym) -> bool {
        let p = def_id(self.map.get(&s));
        self.note_read(s, p);
        p != 0
    }
    fn note_write(&mut self, s: Sym, e: Effect) {
        self.note_written(s);
        if let Some(r) = self.rec.last_mut() {
            r.effects.push(e);
        }
    }
    pub fn define(&mut self, m: &Arc<MacroDef>) {
        if !self.rec.is_empty() {
            self.note_write(m.name, Effect::Define(m.clone()));
        }
        self.map.insert(m.name, m);
    }
    pub fn undef(&mut self, s: Sym) {
        if !self.rec.is_empty() {
            self.note_write(s, Effect::Undef(s));
        }
        self.map.remove(&s);
    }
    pub(crate) fn poison(&mut self) {
        if let Some(r) = self.rec.last_mut() {
            r.poisoned = true;
        }
    }
    pub fn push(&mut self, s: Sym) {
        self.poison();
        let cur = self.map.get_arc(&s);
        self.pushed.entry(s).or_default().push(cur);
    }
    pub fn pop(&mut self, s: Sym) {
        self.poison();
        if let Some(Some(m)) = self.pushed.get_mut(&s).and_then(|v| v.pop()) {
            // It was in the table when pushed: the table's contract already keeps it alive.
            self.map.insert(s, &m);
        } else if self.pushed.contains_key(&s) {
            self.map.remove(&s);
        }
    }
}

/// What the evaluator needs from the translation unit being preprocessed.
pub trait Host {
    fn has_include(&mut self, name: &[u8], angle: bool, next: bool) -> bool;
    fn line(&self) -> u32;
    fn file_name(&self) -> Vec<u8>;
    fn base_file(&self) -> Vec<u8>;
    fn include_level(&self) -> u32;
}

#[derive(Clone, Copy, Debug)]
struct ET {
    t: Tok,
    hs: u32,
    blue: bool,
}

/// A header name produced by `#include MACRO`.
pub enum HeaderName {
    Quoted(Vec<u8>),
    Angle(Vec<u8>),
}

pub struct Ctx<'a, H: Host> {
    pub macros: &'a mut Macros,
    pub syms: &'a Syms,
    pub interner: &'a Interner,
    pub host: &'a mut H,
    pub clang: bool,
    pub cplusplus: bool,
}

/// Work units one directive's macro expansion may use: this floor plus
/// [`EXPANSION_UNITS_PER_TOKEN`] per token of the directive. A unit is a token handled (popped,
/// collected as an argument, copied for pre-expansion, produced by a substitution), a hide-set
/// element allocated or a byte of a spelling built by `#` or `##`: everything expansion
/// allocates is counted, so its memory is bounded by the budget (about 16 bytes a unit at most)
/// and the whole scan's expansion work is linear in the input. Real headers (libstdc++, glibc,
/// gRPC, RocksDB) stay orders of magnitude below it; macro chains and nestings that grow
/// quadratically, and exponential bombs, stop at it with an error entry.
pub const EXPANSION_BUDGET_FLOOR: usize = 8_000_000;
pub const EXPANSION_UNITS_PER_TOKEN: usize = 16;
/// Macro arguments pre-expanded inside macro arguments, deepest nesting allowed (each level is a
/// recursion of the expander: the limit keeps it far from a worker thread's stack size).
pub const MAX_EXPANSION_DEPTH: u32 = 256;
/// `#if` sub-expressions nested inside each other (parentheses, unary operators, `?:`), deepest
/// allowed: the evaluator recurses per level (two levels per parenthesis). The C standard asks
/// for 63 levels of parentheses.
pub const MAX_EXPRESSION_DEPTH: u32 = 512;

#[cfg(test)]
mod tests {
    use super::super::lex::{self, DKind};
    use super::*;

    struct NoHost;
    impl Host for NoHost {
        fn has_include(&mut self, name: &[u8], _angle: bool, _next: bool) -> bool {
            name == b"yes.h"
        }
        fn line(&self) -> u32 {
            7
        }
        fn file_name(&self) -> Vec<u8> {
            b"f.c".to_vec()
        }
        fn base_file(&self) -> Vec<u8> {
            b"f.c".to_vec()
        }
        fn include_level(&self) -> u32 {
            0
        }
    }

    fn run(src: &str) -> Vec<Result<bool, PpError>> {
        let i = Interner::new();
        let syms = Syms::new(&i);
        let lx = lex::lex(src.as_bytes(), &i);
        let mut macros = Macros::default();
        let mut host = NoHost;
        let mut out = Vec::new();
        for d in lx.directives.iter() {
            match &d.kind {
                DKind::Define(m) => macros.define(m),
                DKind::If(t) => {
                    let mut c = Ctx {
                        macros: &mut macros,
                        syms: &syms,
                        interner: &i,
                        host: &mut host,
                        clang: false,
                        cplusplus: true,
                    };
                    out.push(eval_if(&mut c, t));
                }
                _ => {}
            }
        }
        out
    }

    /// Nesting right at the limits evaluates exactly, within a quarter of a worker thread's
    /// 2 MiB stack (the rest is for the include recursion); one level more is an error.
    #[test]
    fn nesting_limits_fit_a_small_stack() {
        let run_small = |src: String| {
            std::thread::Builder::new()
                .stack_size(512 << 10)
                .spawn(move || run(&src))
                .unwrap()
                .join()
                .expect("no stack overflow")
        };
        let parens = (MAX_EXPRESSION_DEPTH / 2 - 1) as usize;
        let nots = MAX_EXPRESSION_DEPTH as usize - 2;
        let calls = MAX_EXPANSION_DEPTH as usize - 1;
        let r = run_small(format!(
            "#if {}1{}\n#endif\n#if {}1\n#endif\n#define G(x) x\n#if {}7{} == 7\n#endif\n",
            "(".repeat(parens),
            ")".repeat(parens),
            "!".repeat(nots),
            "G(".repeat(calls),
            ")".repeat(calls),
        ));
        assert_eq!(r, vec![Ok(true), Ok(true), Ok(true)]);
        let r = run_small(format!(
            "#if {}1{}\n#endif\n#if {}1\n#endif\n#define G(x) x\n#if {}7{} == 7\n#endif\n",
            "(".repeat(parens + 1),
            ")".repeat(parens + 1),
            "!".repeat(nots + 2),
            "G(".repeat(calls + 1),
            ")".repeat(calls + 1),
        ));
        assert!(
            r[0].as_ref()
                .unwrap_err()
                .to_string()
                .contains("nested too deeply"),
            "{r:?}"
        );
        assert!(
            r[1].as_ref()
                .unwrap_err()
                .to_string()
                .contains("nested too deeply"),
            "{r:?}"
        );
        assert!(
            r[2].as_ref()
                .unwrap_err()
                .to_string()
                .contains("nested too deeply"),
            "{r:?}"
        );
    }

    #[test]
    fn expansion_budget_grows_with_the_directive() {
        // A macro chain, and a directive whose expansion needs more than the floor: its own
        // length raises the budget.
        let mut src = String::new();
        for i in 0..400 {
            src.push_str(&format!("#define C{i} C{}\n", i + 1));
        }
        src.push_str("#define C400 5\n#if C0 == 5\n#endif\n");
        // 1.5 M uses of an object-like macro: about 7 units each (the name, its hide set, the
        // substitution, its result, the `+`), past the floor, within the directive's share.
        src.push_str(&format!(
            "#define O 1\n#if {}O\n#endif\n",
            "O + ".repeat(1_500_000)
        ));
        let r = run(&src);
        assert_eq!(r, vec![Ok(true), Ok(true)]);
    }

    /// Found by fuzzing (`headers_if`): a character literal that is only its opening quote.
    #[test]
    fn a_lone_quote_is_no_character_value() {
        assert_eq!(char_value(b"'"), 0);
        assert_eq!(char_value(b"L'"), 0);
        assert_eq!(char_value(b"'a'"), 97);
        let r = run("#if ' == 0\n#endif\n#if 'a\n#endif\n#if u8'\n#endif\n");
        assert_eq!(r.len(), 3);
    }

    #[test]
    fn punct_ids() {
        assert_eq!(PUNCTS[P::HASHHASH as usize], "##");
        assert_eq!(PUNCTS[P::HASH as usize], "#");
        assert_eq!(PUNCTS[P::LPAREN as usize], "(");
        assert_eq!(PUNCTS[P::RPAREN as usize], ")");
        assert_eq!(PUNCTS[P::COMMA as usize], ",");
        assert_eq!(PUNCTS[P::LT as usize], "<");
        assert_eq!(PUNCTS[P::GT as usize], ">");
        assert_eq!(PUNCTS[P::ELLIPSIS as usize], "...");
        assert_eq!(PUNCTS[PQ as usize], "?");
        assert_eq!(PUNCTS[PCOLON as usize], ":");
        assert_eq!(PUNCTS[POROR as usize], "||");
        assert_eq!(PUNCTS[PANDAND as usize], "&&");
        // Ids are the enum's order, and that order lets a greedy match take the longest
        // punctuator: no spelling is preceded by one of its own prefixes.
        for (i, &p) in Punct::ALL.iter().enumerate() {
            assert_eq!(p as usize, i);
            assert_eq!(Punct::from_id(i as u32), Some(p));
            assert!(
                PUNCTS[..i].iter().all(|q| !p.spelling().starts_with(q)),
                "{p:?} after a prefix of it"
            );
        }
        assert_eq!(Punct::from_id(PUNCTS.len() as u32), None);
    }

    #[test]
    fn expressions() {
        let r = run(
            "#if 1 + 2 * 3 == 7\n#endif\n#if (1 ? 2 : 0) && !0\n#endif\n#if -1 < 0u\n#endif\n#if 0x10 == 16 && 010 == 8 && 1'000 == 1000\n#endif\n#if 1 / 0\n#endif\n#if 0 && 1 / 0\n#endif\n#if 'A' == 65\n#endif\n",
        );
        assert_eq!(r[0], Ok(true));
        assert_eq!(r[1], Ok(true));
        assert_eq!(r[2], Ok(false), "-1 converts to unsigned max");
        assert_eq!(r[3], Ok(true));
        assert!(r[4].is_err());
        assert_eq!(r[5], Ok(false));
        assert_eq!(r[6], Ok(true));
    }

    /// Every operator the `#if` evaluator knows (matched as `Punct`s), with C's precedence, and
    /// GCC's message for a punctuator that is not one (checked against `g++ -E`).
    #[test]
    fn every_operator_and_invalid_tokens() {
        let r = run(concat!(
            "#if 7 % 3 == 1 && -7 / 2 == -3 && -7 % 2 == -1\n#endif\n",
            "#if (1 << 3) == 8 && (-16 >> 2) == -4 && (6 & 3) == 2 && (6 ^ 3) == 5 && (6 | 3) == 7 && ~0 == -1\n#endif\n",
            "#if 2 <= 2 && 3 >= 2 && 1 != 2 && 3 > 2 && !(3 < 2) && +1 == 1 && - -1 == 1\n#endif\n",
            "#if 0u - 1 > 0 && (1 | 2 ^ 3 & 4 == 4 << 1 + 1 * 2) == 3 && (1 || 1 / 0)\n#endif\n",
            "#if = 1\n#endif\n#if ;\n#endif\n",
        ));
        assert_eq!(r[..4], [Ok(true), Ok(true), Ok(true), Ok(true)]);
        let text = |r: &Result<bool, PpError>| r.clone().map_err(|e| e.to_string());
        assert_eq!(
            text(&r[4]),
            Err("token \"=\" is not valid in preprocessor expressions".into())
        );
        assert_eq!(
            text(&r[5]),
            Err("token \";\" is not valid in preprocessor expressions".into())
        );
    }

    #[test]
    fn macros_in_conditions() {
        let r = run(concat!(
            "#define A 3\n#define F(x, y) ((x) * (y))\n#if F(A, 2) == 6\n#endif\n",
            "#define CAT(a, b) a ## b\n#define AB 42\n#if CAT(A, B) == 42\n#endif\n",
            "#if defined(A) && defined A && !defined(Z)\n#endif\n",
            "#define V(...) __VA_ARGS__\n#if V(1, 2) == 2\n#endif\n",
            "#define REC REC\n#if REC\n#endif\n",
            "#define HAS defined(A)\n#if HAS\n#endif\n",
            "#if __has_include(<yes.h>) && !__has_include(\"no.h\")\n#endif\n",
            "#if __LINE__ == 7 && true\n#endif\n",
            "#define G(a, ...) a __VA_OPT__(+ 1)\n#if G(1) == 1 && G(1, x) == 2\n#endif\n",
        ));
        assert_eq!(
            r,
            vec![
                Ok(true),
                Ok(true),
                Ok(true),
                Ok(true),
                Ok(false),
                Ok(true),
                Ok(true),
                Ok(true),
                Ok(true)
            ]
        );
    }
}
