//! The preprocessor core used in "preprocessed" mode: the macro table, macro expansion (object-
//! and function-like macros, `#`, `##`, variadics, GNU `, ## __VA_ARGS__`, `__VA_OPT__`, blue
//! paint via Prosser's hide sets) and `#if` expression evaluation (`defined`, `__has_include`,
//! integer arithmetic with C's signed/unsigned rules). Also builds the header name of
//! `#include MACRO`.
//!
//! Only what decides which files get included is modelled; tokens outside directives are never
//! expanded (the compiler's answer for `-M` does not depend on them).

use super::lex::{MacroDef, P, PUNCTS, TK, Tok, spell};
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
pub fn def_id(m: Option<&MacroDef>) -> u32 {
    m.map_or(0, |m| m.id)
}

/// Clock of the last event on `i` in `last`, growing it as needed.
#[inline]
pub fn stamp(last: &mut Vec<u32>, i: u32) -> &mut u32 {
    let i = i as usize;
    if i >= last.len() {
        last.resize((i + 1).max(last.len() * 2).max(1024), 0);
    }
    &mut last[i]
}

/// Records a first read by every open recorder that has not seen `i` since it started: those
/// are a suffix of the stack, since recorders nest and start in stack order.
#[inline]
pub fn note_first_read<T: Copy>(
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

/// Macro definitions by name, dense by symbol id: replaying an inclusion defines thousands of
/// macros per TU, and an index costs less than hashing each one.
///
/// Slots hold pointers to definitions that live in `Arc`s elsewhere, not `Arc`s: replaying an
/// inclusion sets thousands of slots per TU, and an `Arc` per slot meant an atomic increment and
/// decrement each, on counts both worker threads touch (a twentieth of a cold scan). A table
/// made with [`MacroMap::default`] keeps its own `Arc` of each definition it is given; one made
/// with [`MacroMap::borrowing`] does not, and whoever fills it keeps the definitions alive.
pub struct MacroMap {
    v: Vec<*const MacroDef>,
    len: usize,
    /// Slots set since the last [`MacroMap::reset`]: clearing those is how a worker thread
    /// reuses one table for TU after TU, instead of allocating and zeroing a fresh one each time
    /// (tens of thousands of slots: a tenth of a cold scan went to page faults and zeroing).
    touched: Vec<Sym>,
    /// The definitions an owning table keeps alive; `None` for a borrowing table.
    owned: Option<Vec<Arc<MacroDef>>>,
}

// SAFETY: the pointers are to `MacroDef`s, which are immutable and `Send + Sync`, kept alive as
// the type's contract says (by `owned`, or by whoever fills a borrowing table).
unsafe impl Send for MacroMap {}
unsafe impl Sync for MacroMap {}

impl Default for MacroMap {
    fn default() -> Self {
        MacroMap {
            v: Vec::new(),
            len: 0,
            touched: Vec::new(),
            owned: Some(Vec::new()),
        }
    }
}

/// A clone owns its definitions, whichever kind of table it was made from: a borrowing table's
/// contract covers only the table it was made for.
impl Clone for MacroMap {
    fn clone(&self) -> Self {
        let mut m = MacroMap::default();
        m.copy_from(self);
        m
    }
}

impl MacroMap {
    /// A table that does not keep its definitions alive.
    ///
    /// # Safety
    /// Every definition inserted (or copied in with [`MacroMap::copy_from`]) must stay alive,
    /// in the `Arc` it was given in, until the table is [`reset`](MacroMap::reset) or dropped.
    /// A TU's table meets this: its definitions come from the scan's base tables, its files'
    /// directives and the memo's recorded effects, all kept until the scan ends, and the table
    /// is reset at the end of each TU.
    pub unsafe fn borrowing() -> Self {
        MacroMap {
            owned: None,
            ..Default::default()
        }
    }
    #[inline]
    pub fn get(&self, s: &Sym) -> Option<&MacroDef> {
        let p = *self.v.get(*s as usize)?;
        // SAFETY: non-null slots point to live definitions (the type's contract).
        (!p.is_null()).then(|| unsafe { &*p })
    }
    /// The definition's own `Arc` (the expander keeps definitions while it changes the table).
    pub fn get_arc(&self, s: &Sym) -> Option<Arc<MacroDef>> {
        let p = *self.v.get(*s as usize)?;
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` came from `Arc::as_ptr` of an `Arc` that is still alive (the type's
        // contract), so taking one more strong reference to it is sound.
        unsafe {
            Arc::increment_strong_count(p);
            Some(Arc::from_raw(p))
        }
    }
    #[inline]
    pub fn contains_key(&self, s: &Sym) -> bool {
        self.get(s).is_some()
    }
    #[inline]
    pub fn insert(&mut self, s: Sym, m: &Arc<MacroDef>) {
        if let Some(o) = &mut self.owned {
            o.push(m.clone());
        }
        self.set(s, Arc::as_ptr(m));
    }
    #[inline]
    fn set(&mut self, s: Sym, p: *const MacroDef) {
        let i = s as usize;
        if i >= self.v.len() {
            self.v
                .resize((i + 1).max(self.v.len() * 2), std::ptr::null());
        }
        if std::mem::replace(&mut self.v[i], p).is_null() {
            self.len += 1;
            self.touched.push(s);
        }
    }
    /// Sets every macro `other` defines, as `other` defines it.
    pub fn copy_from(&mut self, other: &MacroMap) {
        // Through `touched` (every slot set since the last reset): the slots themselves span
        // every symbol id up to the highest defined, tens of thousands, for a few hundred set.
        for &s in &other.touched {
            let (i, p) = (s as usize, other.v[s as usize]);
            if !p.is_null() {
                if let Some(o) = &mut self.owned {
                    // SAFETY: `p` is alive in `other` (its contract); one more reference keeps
                    // it alive in this owning table too.
                    o.push(unsafe {
                        Arc::increment_strong_count(p);
                        Arc::from_raw(p)
                    });
                }
                self.set(i as Sym, p);
            }
        }
    }
    /// Empties the table, keeping its allocation.
    pub fn reset(&mut self) {
        for &s in &self.touched {
            self.v[s as usize] = std::ptr::null();
        }
        self.touched.clear();
        self.len = 0;
        if let Some(o) = &mut self.owned {
            o.clear();
        }
    }
    #[inline]
    pub fn remove(&mut self, s: &Sym) {
        if let Some(x) = self.v.get_mut(*s as usize)
            && !std::mem::replace(x, std::ptr::null()).is_null()
        {
            self.len -= 1;
        }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Highest symbol id + 1 the table has room for.
    pub fn span(&self) -> usize {
        self.v.len()
    }
    /// Makes room for symbol ids below `n` up front.
    pub fn reserve_span(&mut self, n: usize) {
        if n > self.v.len() {
            self.v.resize(n, std::ptr::null());
        }
    }
}

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
    pub fn note_read(&mut self, s: Sym, p: u32) {
        note_first_read(&mut self.rec, &mut self.last, &mut self.clock, s, p, |r| {
            &mut r.reads
        });
    }
    /// Marks `s` written (seen) by every open recorder.
    #[inline]
    pub fn note_written(&mut self, s: Sym) {
        if !self.rec.is_empty() {
            self.clock += 1;
            *stamp(&mut self.last, s) = self.clock;
        }
    }
    /// Opens a recorder for an inclusion.
    pub fn begin_rec(&mut self) {
        self.clock += 1;
        self.rec.push(Rec {
            start: self.clock,
            ..Default::default()
        });
    }
    /// Looks a macro up (recorded).
    pub fn lookup(&mut self, s: Sym) -> Option<Arc<MacroDef>> {
        let m = self.map.get_arc(&s);
        self.note_read(s, def_id(m.as_deref()));
        m
    }
    /// Is it defined (recorded)?
    pub fn contains(&mut self, s: Sym) -> bool {
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
    pub fn poison(&mut self) {
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

struct Exp<'c, 'a, H: Host> {
    c: &'c mut Ctx<'a, H>,
    hs: Vec<Vec<Sym>>,
    in_if: bool,
    err: Option<String>,
    /// Work units left (see [`EXPANSION_BUDGET_FLOOR`]).
    budget: usize,
    /// The whole budget, for the error message.
    budget_total: usize,
    /// Current nesting of [`Exp::expand`] calls.
    depth: u32,
}

impl<'c, 'a, H: Host> Exp<'c, 'a, H> {
    /// An expander for a directive of `ntoks` tokens.
    fn new(c: &'c mut Ctx<'a, H>, in_if: bool, ntoks: usize) -> Self {
        let budget =
            EXPANSION_BUDGET_FLOOR.saturating_add(ntoks.saturating_mul(EXPANSION_UNITS_PER_TOKEN));
        Exp {
            c,
            hs: vec![Vec::new()],
            in_if,
            err: None,
            budget,
            budget_total: budget,
            depth: 0,
        }
    }

    /// Spends `n` work units; false (and the error set) once the budget is exhausted.
    #[inline]
    fn charge(&mut self, n: usize) -> bool {
        if self.budget >= n {
            self.budget -= n;
            return true;
        }
        self.budget = 0;
        if self.err.is_none() {
            self.err = Some(format!(
                "macro expansion too large: more than {} units of work for this directive \
                 (limit {} + {} per token of the directive; a macro bomb or a runaway macro chain)",
                self.budget_total, EXPANSION_BUDGET_FLOOR, EXPANSION_UNITS_PER_TOKEN
            ));
        }
        false
    }
}

/// Evaluates an `#if`/`#elif` expression. `Err` carries GCC-like messages; GCC treats such a
/// condition as false, and so do we.
pub fn eval_if<H: Host>(c: &mut Ctx<'_, H>, toks: &[Tok]) -> Result<bool, String> {
    if toks.is_empty() {
        return Err("#if with no expression".into());
    }
    let mut e = Exp::new(c, true, toks.len());
    let input: Vec<ET> = toks
        .iter()
        .map(|&t| ET {
            t,
            hs: 0,
            blue: false,
        })
        .collect();
    let out = e.expand(input);
    if let Some(err) = e.err.take() {
        return Err(err);
    }
    let mut ev = Eval {
        t: &out,
        i: 0,
        c: e.c,
        err: None,
        depth: 0,
    };
    let v = ev.comma(false);
    if let Some(err) = ev.err {
        return Err(err);
    }
    if ev.i < out.len() {
        let mut s = Vec::new();
        spell(&out[ev.i].t, ev.c.interner, &mut s);
        return Err(format!(
            "missing binary operator before token \"{}\"",
            String::from_utf8_lossy(&s)
        ));
    }
    Ok(v.v != 0)
}

/// Expands `#include MACRO...` to a header name.
pub fn include_name<H: Host>(c: &mut Ctx<'_, H>, toks: &[Tok]) -> Result<HeaderName, String> {
    let mut e = Exp::new(c, false, toks.len());
    let input: Vec<ET> = toks
        .iter()
        .map(|&t| ET {
            t,
            hs: 0,
            blue: false,
        })
        .collect();
    let out = e.expand(input);
    if let Some(err) = e.err.take() {
        return Err(err);
    }
    header_name_from(&out.iter().map(|e| e.t).collect::<Vec<_>>(), e.c.interner)
        .ok_or_else(|| "#include expects \"FILENAME\" or <FILENAME>".to_string())
}

fn header_name_from(t: &[Tok], interner: &Interner) -> Option<HeaderName> {
    let first = t.first()?;
    if first.kind == TK::Str {
        let s = interner.bytes(first.sym);
        if s.len() >= 2 && s[0] == b'"' {
            return Some(HeaderName::Quoted(s[1..s.len() - 1].to_vec()));
        }
        return None;
    }
    if first.kind == TK::Punct && first.sym == P::LT {
        let mut out = Vec::new();
        for (k, tk) in t[1..].iter().enumerate() {
            if tk.kind == TK::Punct && tk.sym == P::GT {
                return Some(HeaderName::Angle(out));
            }
            if tk.ws && k > 0 {
                out.push(b' ');
            }
            spell(tk, interner, &mut out);
        }
    }
    None
}

fn is_punct(t: &Tok, p: u32) -> bool {
    t.kind == TK::Punct && t.sym == p
}

impl<H: Host> Exp<'_, '_, H> {
    fn hs_contains(&self, h: u32, s: Sym) -> bool {
        self.hs[h as usize].binary_search(&s).is_ok()
    }
    fn hs_add(&mut self, h: u32, s: Sym) -> u32 {
        let v = &self.hs[h as usize];
        match v.binary_search(&s) {
            Ok(_) => h,
            Err(pos) => {
                let mut n = Vec::with_capacity(v.len() + 1);
                n.extend_from_slice(&v[..pos]);
                n.push(s);
                n.extend_from_slice(&v[pos..]);
                self.charge(n.len() + 2);
                self.hs.push(n);
                (self.hs.len() - 1) as u32
            }
        }
    }
    fn hs_union(&mut self, a: u32, b: u32) -> u32 {
        if a == b || b == 0 {
            return a;
        }
        if a == 0 {
            return b;
        }
        let mut n = self.hs[a as usize].clone();
        n.extend_from_slice(&self.hs[b as usize]);
        n.sort_unstable();
        n.dedup();
        self.charge(n.len() + 2);
        self.hs.push(n);
        (self.hs.len() - 1) as u32
    }
    fn hs_intersect(&mut self, a: u32, b: u32) -> u32 {
        if a == b {
            return a;
        }
        if a == 0 || b == 0 {
            return 0;
        }
        let bb = &self.hs[b as usize];
        let n: Vec<Sym> = self.hs[a as usize]
            .iter()
            .copied()
            .filter(|s| bb.binary_search(s).is_ok())
            .collect();
        self.charge(n.len() + 2);
        self.hs.push(n);
        (self.hs.len() - 1) as u32
    }

    fn num_tok(&self, v: u64, ws: bool) -> ET {
        // `defined` and `__has_include` produce 0/1 all the time: skip the interner for those.
        let sym = match v {
            0 => self.c.syms.zero,
            1 => self.c.syms.one,
            _ => self.c.interner.intern(v.to_string().as_bytes()),
        };
        ET {
            t: Tok {
                kind: TK::Num,
                ws,
                sym,
            },
            hs: 0,
            blue: false,
        }
    }

    fn expand(&mut self, input: Vec<ET>) -> Vec<ET> {
        if self.depth >= MAX_EXPANSION_DEPTH {
            if self.err.is_none() {
                self.err = Some(format!(
                    "macro arguments nested too deeply (more than {MAX_EXPANSION_DEPTH} levels)"
                ));
            }
            return Vec::new();
        }
        self.depth += 1;
        let out = self.expand_level(input);
        self.depth -= 1;
        out
    }

    fn expand_level(&mut self, input: Vec<ET>) -> Vec<ET> {
        let mut stack: Vec<ET> = input.into_iter().rev().collect();
        let mut out = Vec::with_capacity(stack.len());
        while let Some(t) = stack.pop() {
            if self.err.is_some() || !self.charge(1) {
                break;
            }
            if t.t.kind != TK::Ident || t.blue {
                out.push(t);
                continue;
            }
            let name = t.t.sym;
            let s = self.c.syms;
            if self.in_if && name == s.defined {
                let r = self.take_defined(&mut stack);
                let v = self.num_tok(r as u64, t.t.ws);
                out.push(v);
                continue;
            }
            let m = self.c.macros.lookup(name);
            let Some(m) = m else {
                if let Some(v) = self.builtin(name, &mut stack, t.t.ws) {
                    out.push(v);
                } else {
                    out.push(t);
                }
                continue;
            };
            if self.hs_contains(t.hs, name) {
                out.push(ET { blue: true, ..t });
                continue;
            }
            let res = if let Some(params) = &m.params {
                if !matches!(stack.last(), Some(x) if is_punct(&x.t, P::LPAREN)) {
                    out.push(t);
                    continue;
                }
                stack.pop();
                let Some((args, rp_hs)) = self.collect_args(&mut stack, params.len(), m.variadic)
                else {
                    // Out of budget while collecting, or truly unterminated.
                    if self.err.is_none() {
                        self.err = Some(format!(
                            "unterminated argument list invoking macro \"{}\"",
                            self.c.interner.string(name)
                        ));
                    }
                    break;
                };
                let mut args = args;
                if args.len() != params.len() {
                    if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                        args.clear();
                    } else if m.variadic && args.len() + 1 == params.len() {
                        args.push(Vec::new());
                    } else {
                        self.err = Some(format!(
                            "macro \"{}\" passed {} arguments, but takes {}",
                            self.c.interner.string(name),
                            args.len(),
                            params.len()
                        ));
                        break;
                    }
                }
                let ih = self.hs_intersect(t.hs, rp_hs);
                let hs = self.hs_add(ih, name);
                self.subst(&m, &args, hs, t.t.ws)
            } else {
                let hs = self.hs_add(t.hs, name);
                self.subst(&m, &[], hs, t.t.ws)
            };
            stack.extend(res.into_iter().rev());
        }
        out
    }

    /// Dynamic and "has" builtins that are not in the macro table.
    fn builtin(&mut self, name: Sym, stack: &mut Vec<ET>, ws: bool) -> Option<ET> {
        let s = self.c.syms;
        if name == s.line {
            let l = self.c.host.line() as u64;
            return Some(self.num_tok(l, ws));
        }
        if name == s.counter {
            self.c.macros.poison();
            let v = self.c.macros.counter;
            self.c.macros.counter += 1;
            return Some(self.num_tok(v, ws));
        }
        if name == s.include_level {
            self.c.macros.poison();
            let l = self.c.host.include_level() as u64;
            return Some(self.num_tok(l, ws));
        }
        if name == s.file || name == s.base_file {
            if name == s.base_file {
                self.c.macros.poison();
            }
            let f = if name == s.file {
                self.c.host.file_name()
            } else {
                self.c.host.base_file()
            };
            let mut lit = vec![b'"'];
            for &b in &f {
                if b == b'"' || b == b'\\' {
                    lit.push(b'\\');
                }
                lit.push(b);
            }
            lit.push(b'"');
            let sym = self.c.interner.intern(&lit);
            return Some(ET {
                t: Tok {
                    kind: TK::Str,
                    ws,
                    sym,
                },
                hs: 0,
                blue: false,
            });
        }
        if !self.in_if {
            return None;
        }
        let is_has = name == s.has_include
            || name == s.has_include_next
            || name == s.has_attribute
            || name == s.has_cpp_attribute
            || name == s.has_builtin
            || (self.c.clang
                && (name == s.has_feature || name == s.has_extension || name == s.is_identifier));
        if !is_has || !matches!(stack.last(), Some(x) if is_punct(&x.t, P::LPAREN)) {
            return None;
        }
        stack.pop();
        let mut inner = Vec::new();
        let mut depth = 0;
        loop {
            let Some(t) = stack.pop() else {
                self.err = Some(format!(
                    "missing ')' after \"{}\"",
                    self.c.interner.string(name)
                ));
                return Some(self.num_tok(0, ws));
            };
            if is_punct(&t.t, P::LPAREN) {
                depth += 1;
            } else if is_punct(&t.t, P::RPAREN) {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            }
            inner.push(t);
        }
        let v: u64 = if name == s.has_include || name == s.has_include_next {
            let next = name == s.has_include_next;
            let toks: Vec<Tok> = inner.iter().map(|e| e.t).collect();
            let hn = match header_name_from(&toks, self.c.interner) {
                Some(h) => Some(h),
                None => {
                    let was = self.in_if;
                    self.in_if = false;
                    let ex = self.expand(inner);
                    self.in_if = was;
                    header_name_from(&ex.iter().map(|e| e.t).collect::<Vec<_>>(), self.c.interner)
                }
            };
            match hn {
                Some(HeaderName::Quoted(n)) => self.c.host.has_include(&n, false, next) as u64,
                Some(HeaderName::Angle(n)) => self.c.host.has_include(&n, true, next) as u64,
                None => {
                    self.err = Some("operator \"__has_include\" requires a header-name".into());
                    0
                }
            }
        } else {
            let mut sp = Vec::new();
            for e in &inner {
                spell(&e.t, self.c.interner, &mut sp);
            }
            let sp = String::from_utf8_lossy(&sp).into_owned();
            if name == s.has_cpp_attribute {
                cpp_attribute_value(&sp)
            } else if name == s.has_builtin {
                (sp.starts_with("__builtin_")
                    || sp.starts_with("__sync_")
                    || sp.starts_with("__atomic_")
                    || sp.starts_with("__is_")
                    || sp.starts_with("__has_")) as u64
            } else if name == s.has_attribute || name == s.is_identifier {
                1
            } else {
                0 // clang __has_feature/__has_extension: conservatively "no"
            }
        };
        Some(self.num_tok(v, ws))
    }

    /// `defined X` / `defined ( X )` with the tokens after `defined` on the stack.
    fn take_defined(&mut self, stack: &mut Vec<ET>) -> bool {
        let paren = matches!(stack.last(), Some(x) if is_punct(&x.t, P::LPAREN));
        if paren {
            stack.pop();
        }
        let Some(id) = stack.pop() else {
            self.err = Some("operator \"defined\" requires an identifier".into());
            return false;
        };
        if id.t.kind != TK::Ident {
            self.err = Some("operator \"defined\" requires an identifier".into());
            return false;
        }
        if paren {
            match stack.pop() {
                Some(x) if is_punct(&x.t, P::RPAREN) => {}
                _ => {
                    self.err = Some("missing ')' after \"defined\"".into());
                    return false;
                }
            }
        }
        is_defined(self.c.macros, self.c.syms, self.c.clang, id.t.sym)
    }

    /// Arguments after the `(` (already consumed). Returns the arguments and the hide set of `)`.
    fn collect_args(
        &mut self,
        stack: &mut Vec<ET>,
        nparams: usize,
        variadic: bool,
    ) -> Option<(Vec<Vec<ET>>, u32)> {
        let mut args: Vec<Vec<ET>> = vec![Vec::new()];
        let mut depth = 0;
        loop {
            let t = stack.pop()?;
            if !self.charge(1) {
                return None;
            }
            if t.t.kind == TK::Punct {
                match t.t.sym {
                    P::LPAREN => depth += 1,
                    P::RPAREN => {
                        if depth == 0 {
                            return Some((args, t.hs));
                        }
                        depth -= 1;
                    }
                    P::COMMA if depth == 0 && !(variadic && args.len() >= nparams) => {
                        args.push(Vec::new());
                        continue;
                    }
                    _ => {}
                }
            }
            args.last_mut().unwrap().push(t);
        }
    }

    fn glue(&mut self, lhs: ET, rhs: ET) -> Vec<ET> {
        if lhs.t.kind == TK::Placemarker {
            return vec![rhs];
        }
        if rhs.t.kind == TK::Placemarker {
            return vec![lhs];
        }
        let mut s = Vec::new();
        spell(&lhs.t, self.c.interner, &mut s);
        spell(&rhs.t, self.c.interner, &mut s);
        if !self.charge(s.len()) {
            return vec![lhs];
        }
        let kind = if s
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80)
        {
            if s[0].is_ascii_digit() {
                TK::Num
            } else {
                TK::Ident
            }
        } else if s[0].is_ascii_digit() || (s[0] == b'.' && s.len() > 1 && s[1].is_ascii_digit()) {
            TK::Num
        } else if let Some(p) = PUNCTS.iter().position(|p| p.as_bytes() == s.as_slice()) {
            return vec![ET {
                t: Tok {
                    kind: TK::Punct,
                    ws: lhs.t.ws,
                    sym: p as u32,
                },
                hs: lhs.hs,
                blue: false,
            }];
        } else if s.last() == Some(&b'"') {
            TK::Str
        } else {
            // Not a valid token (GCC: "pasting does not give a valid preprocessing token"): keep both.
            return vec![lhs, rhs];
        };
        let sym = self.c.interner.intern(&s);
        vec![ET {
            t: Tok {
                kind,
                ws: lhs.t.ws,
                sym,
            },
            hs: lhs.hs,
            blue: false,
        }]
    }

    fn stringize(&mut self, arg: &[ET], ws: bool) -> ET {
        let mut s = vec![b'"'];
        for (k, e) in arg.iter().enumerate() {
            if k > 0 && e.t.ws {
                s.push(b' ');
            }
            let mut sp = Vec::new();
            spell(&e.t, self.c.interner, &mut sp);
            if matches!(e.t.kind, TK::Str | TK::Chr) {
                for b in sp {
                    if b == b'"' || b == b'\\' {
                        s.push(b'\\');
                    }
                    s.push(b);
                }
            } else {
                s.extend_from_slice(&sp);
            }
        }
        s.push(b'"');
        // Escaping doubles backslashes: stringizing stringized text grows exponentially.
        let sym = if self.charge(s.len()) {
            self.c.interner.intern(&s)
        } else {
            self.c.syms.zero
        };
        ET {
            t: Tok {
                kind: TK::Str,
                ws,
                sym,
            },
            hs: 0,
            blue: false,
        }
    }

    fn subst(&mut self, m: &MacroDef, args: &[Vec<ET>], hs: u32, ws: bool) -> Vec<ET> {
        let params: &[Sym] = m.params.as_deref().unwrap_or(&[]);
        let fnlike = m.params.is_some();
        let pidx = |t: &Tok| -> Option<usize> {
            if t.kind == TK::Ident {
                params.iter().position(|p| *p == t.sym)
            } else {
                None
            }
        };
        let body: std::borrow::Cow<[Tok]> = if m.variadic
            && m.body
                .iter()
                .any(|t| t.kind == TK::Ident && t.sym == self.c.syms.va_opt)
        {
            std::borrow::Cow::Owned(self.apply_va_opt(m, args))
        } else {
            std::borrow::Cow::Borrowed(&m.body)
        };
        let mut expanded: Vec<Option<Vec<ET>>> = vec![None; args.len()];
        let mut os: Vec<ET> = Vec::with_capacity(body.len());
        // Tokens produced are charged as they come: a body that uses a long argument many
        // times multiplies two sizes of the input.
        let mut charged = 0;
        let mut i = 0;
        while i < body.len() {
            if os.len() > charged {
                if !self.charge(os.len() - charged) {
                    return Vec::new();
                }
                charged = os.len();
            }
            let t = body[i];
            if fnlike
                && is_punct(&t, P::HASH)
                && i + 1 < body.len()
                && let Some(p) = pidx(&body[i + 1])
            {
                let st = self.stringize(&args[p], t.ws);
                os.push(st);
                i += 2;
                continue;
            }
            if is_punct(&t, P::HASHHASH) && i + 1 < body.len() && !os.is_empty() {
                let rhs = body[i + 1];
                if let Some(p) = pidx(&rhs) {
                    let arg = &args[p];
                    if m.variadic
                        && p == params.len() - 1
                        && os.last().is_some_and(|l| is_punct(&l.t, P::COMMA))
                    {
                        // GNU: `, ## __VA_ARGS__` drops the comma when the variable part is empty.
                        if arg.is_empty() {
                            os.pop();
                        } else {
                            os.extend(arg.iter().copied());
                        }
                        i += 2;
                        continue;
                    }
                    if arg.is_empty() {
                        i += 2;
                        continue;
                    }
                    let lhs = os.pop().unwrap();
                    let g = self.glue(lhs, arg[0]);
                    os.extend(g);
                    os.extend(arg[1..].iter().copied());
                } else {
                    let lhs = os.pop().unwrap();
                    let g = self.glue(
                        lhs,
                        ET {
                            t: rhs,
                            hs: 0,
                            blue: false,
                        },
                    );
                    os.extend(g);
                }
                i += 2;
                continue;
            }
            if let Some(p) = pidx(&t) {
                let before_paste = i + 1 < body.len() && is_punct(&body[i + 1], P::HASHHASH);
                let start = os.len();
                if before_paste {
                    if args[p].is_empty() {
                        os.push(ET {
                            t: Tok {
                                kind: TK::Placemarker,
                                ws: t.ws,
                                sym: 0,
                            },
                            hs: 0,
                            blue: false,
                        });
                    } else {
                        os.extend(args[p].iter().copied());
                    }
                } else {
                    if expanded[p].is_none() {
                        let e = if self.charge(args[p].len()) {
                            self.expand(args[p].clone())
                        } else {
                            Vec::new()
                        };
                        expanded[p] = Some(e);
                    }
                    os.extend(expanded[p].as_ref().unwrap().iter().copied());
                }
                if os.len() > start {
                    os[start].t.ws = t.ws;
                }
                i += 1;
                continue;
            }
            os.push(ET {
                t,
                hs: 0,
                blue: false,
            });
            i += 1;
        }
        if os.len() > charged && !self.charge(os.len() - charged) {
            return Vec::new();
        }
        os.retain(|e| e.t.kind != TK::Placemarker);
        let mut out = Vec::with_capacity(os.len());
        for mut e in os {
            e.hs = self.hs_union(e.hs, hs);
            out.push(e);
        }
        if let Some(f) = out.first_mut() {
            f.t.ws = ws;
        }
        out
    }

    /// Rewrites `__VA_OPT__(x)` to `x` or nothing, depending on whether the variable argument is
    /// non-empty (C++20 / GCC 12).
    fn apply_va_opt(&mut self, m: &MacroDef, args: &[Vec<ET>]) -> Vec<Tok> {
        let va = args.last().map(|a| !a.is_empty()).unwrap_or(false);
        let mut out = Vec::with_capacity(m.body.len());
        let b = &m.body;
        let mut i = 0;
        while i < b.len() {
            if b[i].kind == TK::Ident
                && b[i].sym == self.c.syms.va_opt
                && i + 1 < b.len()
                && is_punct(&b[i + 1], P::LPAREN)
            {
                let mut depth = 0;
                let mut j = i + 2;
                let start = j;
                while j < b.len() {
                    if is_punct(&b[j], P::LPAREN) {
                        depth += 1;
                    } else if is_punct(&b[j], P::RPAREN) {
                        if depth == 0 {
                            break;
                        }
                        depth -= 1;
                    }
                    j += 1;
                }
                if va {
                    out.extend_from_slice(&b[start..j.min(b.len())]);
                }
                i = j + 1;
                continue;
            }
            out.push(b[i]);
            i += 1;
        }
        out
    }
}

/// `defined(X)` / `#ifdef X`: a macro, or one of the compiler's built-in operators and dynamic
/// macros (`#ifdef __has_builtin` is true on GCC 10+).
pub fn is_defined(macros: &mut Macros, s: &Syms, clang: bool, n: Sym) -> bool {
    macros.contains(n)
        || n == s.has_include
        || n == s.has_include_next
        || n == s.has_attribute
        || n == s.has_cpp_attribute
        || n == s.has_builtin
        || n == s.line
        || n == s.file
        || n == s.counter
        || n == s.include_level
        || n == s.base_file
        || (clang && (n == s.has_feature || n == s.has_extension || n == s.is_identifier))
}

fn cpp_attribute_value(s: &str) -> u64 {
    let s = s.trim();
    if s.starts_with("gnu::") || s.starts_with("__gnu__::") {
        return 1;
    }
    match s.trim_start_matches("__").trim_end_matches("__") {
        "noreturn" | "carries_dependency" => 200809,
        "deprecated" => 201309,
        "fallthrough" | "maybe_unused" => 201603,
        "nodiscard" => 201907,
        "likely" | "unlikely" | "no_unique_address" => 201803,
        "assume" => 0,
        _ => 0,
    }
}

#[derive(Clone, Copy, Debug)]
struct V {
    v: u64,
    uns: bool,
}

impl V {
    fn s(v: i64) -> V {
        V {
            v: v as u64,
            uns: false,
        }
    }
    fn truth(self) -> bool {
        self.v != 0
    }
}

struct Eval<'t, 'c, 'a, H: Host> {
    t: &'t [ET],
    i: usize,
    c: &'c mut Ctx<'a, H>,
    err: Option<String>,
    /// Current nesting of sub-expressions (see [`MAX_EXPRESSION_DEPTH`]).
    depth: u32,
}

impl<H: Host> Eval<'_, '_, '_, H> {
    fn peek_punct(&self) -> Option<u32> {
        self.t
            .get(self.i)
            .filter(|e| e.t.kind == TK::Punct)
            .map(|e| e.t.sym)
    }
    fn fail(&mut self, m: String) -> V {
        if self.err.is_none() {
            self.err = Some(m);
        }
        V::s(0)
    }
    fn comma(&mut self, skip: bool) -> V {
        let mut v = self.cond(skip);
        while self.peek_punct() == Some(P::COMMA) {
            self.i += 1;
            v = self.cond(skip);
        }
        v
    }
    /// Enters one more level of nesting; false (and the error set) past the limit. Every cycle
    /// of the recursive descent goes through [`Eval::cond`] or [`Eval::unary`], which call this.
    fn enter(&mut self) -> bool {
        if self.depth >= MAX_EXPRESSION_DEPTH {
            self.fail(format!(
                "#if expression nested too deeply (more than {MAX_EXPRESSION_DEPTH} levels)"
            ));
            return false;
        }
        self.depth += 1;
        true
    }
    fn cond(&mut self, skip: bool) -> V {
        if !self.enter() {
            return V::s(0);
        }
        let v = self.cond_inner(skip);
        self.depth -= 1;
        v
    }
    fn cond_inner(&mut self, skip: bool) -> V {
        let c = self.binary(0, skip);
        if self.peek_punct() == Some(PQ) {
            self.i += 1;
            let t = c.truth();
            let a = self.comma(skip || !t);
            if self.peek_punct() != Some(PCOLON) {
                return self.fail("'?' without following ':'".into());
            }
            self.i += 1;
            let b = self.cond(skip || t);
            let uns = a.uns || b.uns;
            let r = if t { a } else { b };
            return V { v: r.v, uns };
        }
        c
    }
    fn binary(&mut self, min_prec: u8, skip: bool) -> V {
        let mut lhs = self.unary(skip);
        while let Some(op) = self.peek_punct() {
            let Some(prec) = prec_of(op) else { break };
            if prec < min_prec {
                break;
            }
            self.i += 1;
            if op == POROR {
                let short = lhs.truth();
                let rhs = self.binary(prec + 1, skip || short);
                lhs = V::s((lhs.truth() || rhs.truth()) as i64);
                continue;
            }
            if op == PANDAND {
                let short = !lhs.truth();
                let rhs = self.binary(prec + 1, skip || short);
                lhs = V::s((lhs.truth() && rhs.truth()) as i64);
                continue;
            }
            let rhs = self.binary(prec + 1, skip);
            lhs = self.apply(op, lhs, rhs, skip);
        }
        lhs
    }
    fn apply(&mut self, op: u32, a: V, b: V, skip: bool) -> V {
        let uns = a.uns || b.uns;
        let p = PUNCTS[op as usize];
        let (x, y) = (a.v, b.v);
        let (sx, sy) = (a.v as i64, b.v as i64);

        match p {
            "*" => V {
                v: if uns {
                    x.wrapping_mul(y)
                } else {
                    sx.wrapping_mul(sy) as u64
                },
                uns,
            },
            "/" | "%" => {
                if y == 0 {
                    if skip {
                        return V { v: 0, uns };
                    }
                    return self.fail("division by zero in #if".into());
                }
                let v = if uns {
                    if p == "/" { x / y } else { x % y }
                } else if p == "/" {
                    sx.wrapping_div(sy) as u64
                } else {
                    sx.wrapping_rem(sy) as u64
                };
                V { v, uns }
            }
            "+" => V {
                v: x.wrapping_add(y),
                uns,
            },
            "-" => V {
                v: x.wrapping_sub(y),
                uns,
            },
            "<<" => V {
                v: if y >= 64 { 0 } else { x << y },
                uns: a.uns,
            },
            ">>" => V {
                v: if a.uns {
                    if y >= 64 { 0 } else { x >> y }
                } else if y >= 64 {
                    if sx < 0 { u64::MAX } else { 0 }
                } else {
                    (sx >> y) as u64
                },
                uns: a.uns,
            },
            "<" => V::s(if uns { x < y } else { sx < sy } as i64),
            ">" => V::s(if uns { x > y } else { sx > sy } as i64),
            "<=" => V::s(if uns { x <= y } else { sx <= sy } as i64),
            ">=" => V::s(if uns { x >= y } else { sx >= sy } as i64),
            "==" => V::s((x == y) as i64),
            "!=" => V::s((x != y) as i64),
            "&" => V { v: x & y, uns },
            "^" => V { v: x ^ y, uns },
            "|" => V { v: x | y, uns },
            _ => self.fail(format!(
                "token \"{p}\" is not valid in preprocessor expressions"
            )),
        }
    }
    fn unary(&mut self, skip: bool) -> V {
        if !self.enter() {
            return V::s(0);
        }
        let v = self.unary_inner(skip);
        self.depth -= 1;
        v
    }
    fn unary_inner(&mut self, skip: bool) -> V {
        let Some(e) = self.t.get(self.i).copied() else {
            return self.fail("#if with no expression".into());
        };
        self.i += 1;
        match e.t.kind {
            TK::Punct => match PUNCTS[e.t.sym as usize] {
                "(" => {
                    let v = self.comma(skip);
                    if self.peek_punct() != Some(P::RPAREN) {
                        return self.fail("missing ')' in expression".into());
                    }
                    self.i += 1;
                    v
                }
                "!" => V::s(!self.unary(skip).truth() as i64),
                "-" => {
                    let v = self.unary(skip);
                    V {
                        v: (v.v as i64).wrapping_neg() as u64,
                        uns: v.uns,
                    }
                }
                "+" => self.unary(skip),
                "~" => {
                    let v = self.unary(skip);
                    V {
                        v: !v.v,
                        uns: v.uns,
                    }
                }
                p => self.fail(format!(
                    "token \"{p}\" is not valid in preprocessor expressions"
                )),
            },
            TK::Num => {
                let r = if e.t.sym == self.c.syms.zero {
                    Ok(V::s(0))
                } else if e.t.sym == self.c.syms.one {
                    Ok(V::s(1))
                } else {
                    self.c.interner.with(e.t.sym, parse_number)
                };
                match r {
                    Ok(v) => v,
                    Err(m) => self.fail(m),
                }
            }
            TK::Chr => {
                let s = self.c.interner.bytes(e.t.sym);
                V::s(char_value(&s))
            }
            TK::Ident => {
                if self.c.cplusplus && e.t.sym == self.c.syms.true_ {
                    V::s(1)
                } else {
                    // Any identifier left after expansion is 0 (C++ `false` included).
                    V::s(0)
                }
            }
            TK::Str => {
                self.fail("token is not valid in preprocessor expressions (string literal)".into())
            }
            _ => self.fail("invalid token in preprocessor expression".into()),
        }
    }
}

const PQ: u32 = 44; // "?"
const PCOLON: u32 = 45; // ":"
const POROR: u32 = 11;
const PANDAND: u32 = 10;

fn prec_of(op: u32) -> Option<u8> {
    Some(match PUNCTS[op as usize] {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

fn parse_number(s: &[u8]) -> Result<V, String> {
    let owned;
    let s: &[u8] = if s.contains(&b'\'') {
        owned = s
            .iter()
            .copied()
            .filter(|&c| c != b'\'')
            .collect::<Vec<u8>>();
        &owned
    } else {
        s
    };
    let mut end = s.len();
    let mut uns = false;
    while end > 0 && matches!(s[end - 1], b'u' | b'U' | b'l' | b'L' | b'z' | b'Z') {
        if matches!(s[end - 1], b'u' | b'U') {
            uns = true;
        }
        end -= 1;
    }
    let body = &s[..end];
    let bad = || {
        format!(
            "invalid integer constant \"{}\" in #if",
            String::from_utf8_lossy(s)
        )
    };
    let (digits, radix) = if body.len() > 2 && (body.starts_with(b"0x") || body.starts_with(b"0X"))
    {
        (&body[2..], 16)
    } else if body.len() > 2 && (body.starts_with(b"0b") || body.starts_with(b"0B")) {
        (&body[2..], 2)
    } else if body.len() > 1 && body[0] == b'0' {
        (&body[1..], 8)
    } else {
        (body, 10)
    };
    if radix == 10 && body.iter().any(|&c| c == b'.' || c == b'e' || c == b'E') {
        return Err("floating constant in preprocessor expression".into());
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    for &c in digits {
        let d = (c as char).to_digit(radix).ok_or_else(bad)? as u64;
        match v.checked_mul(radix as u64).and_then(|x| x.checked_add(d)) {
            Some(n) => v = n,
            None => overflow = true,
        }
    }
    if overflow {
        return Err("integer constant is too large for its type".into());
    }
    if v > i64::MAX as u64 {
        uns = true;
    }
    Ok(V { v, uns })
}

fn char_value(s: &[u8]) -> i64 {
    let Some(q) = s.iter().position(|&c| c == b'\'') else {
        return 0;
    };
    let wide = q > 0;
    // An unterminated literal (`'` alone at the end of a directive) has no closing quote.
    let inner = s.get(q + 1..s.len().saturating_sub(1)).unwrap_or(&[]);
    let mut vals = Vec::new();
    let mut i = 0;
    while i < inner.len() {
        let c = inner[i];
        if c == b'\\' && i + 1 < inner.len() {
            i += 1;
            let e = inner[i];
            let v = match e {
                b'n' => 10,
                b't' => 9,
                b'r' => 13,
                b'a' => 7,
                b'b' => 8,
                b'f' => 12,
                b'v' => 11,
                b'x' => {
                    let mut v = 0i64;
                    while i + 1 < inner.len() && inner[i + 1].is_ascii_hexdigit() {
                        i += 1;
                        v = v * 16 + (inner[i] as char).to_digit(16).unwrap() as i64;
                    }
                    v
                }
                b'0'..=b'7' => {
                    let mut v = (e - b'0') as i64;
                    let mut k = 0;
                    while k < 2 && i + 1 < inner.len() && (b'0'..=b'7').contains(&inner[i + 1]) {
                        i += 1;
                        k += 1;
                        v = v * 8 + (inner[i] - b'0') as i64;
                    }
                    v
                }
                other => other as i64,
            };
            vals.push(v);
        } else {
            vals.push(c as i64);
        }
        i += 1;
    }
    if wide {
        return vals.last().copied().unwrap_or(0);
    }
    if vals.len() == 1 {
        // Plain char is signed on x86-64.
        return vals[0] as u8 as i8 as i64;
    }
    vals.iter().fold(0i64, |a, &v| (a << 8) | (v & 0xff))
}

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

    fn run(src: &str) -> Vec<Result<bool, String>> {
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
            r[0].as_ref().unwrap_err().contains("nested too deeply"),
            "{r:?}"
        );
        assert!(
            r[1].as_ref().unwrap_err().contains("nested too deeply"),
            "{r:?}"
        );
        assert!(
            r[2].as_ref().unwrap_err().contains("nested too deeply"),
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
