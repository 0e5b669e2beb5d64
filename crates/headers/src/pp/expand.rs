//! Macro expansion for directives (`#if`, `#include MACRO`): object- and function-like
//! macros, `#`, `##`, variadics, GNU `, ## __VA_ARGS__`, `__VA_OPT__`, blue paint via Prosser's
//! hide sets, within the work budget of [`super::EXPANSION_BUDGET_FLOOR`].

use super::*;

pub(super) struct Exp<'c, 'a, H: Host> {
    pub(super) c: &'c mut Ctx<'a, H>,
    pub(super) hs: Vec<Vec<Sym>>,
    pub(super) in_if: bool,
    pub(super) err: Option<PpError>,
    /// Work units left (see [`EXPANSION_BUDGET_FLOOR`]).
    pub(super) budget: usize,
    /// The whole budget, for the error message.
    pub(super) budget_total: usize,
    /// Current nesting of [`Exp::expand`] calls.
    pub(super) depth: u32,
}

impl<'c, 'a, H: Host> Exp<'c, 'a, H> {
    /// An expander for a directive of `ntoks` tokens.
    pub(super) fn new(c: &'c mut Ctx<'a, H>, in_if: bool, ntoks: usize) -> Self {
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

    /// A directive's tokens (`in_if`: an `#if`'s, else an `#include`'s) fully expanded, or the
    /// expansion's error; the expander comes back too, for the context it borrows.
    pub(super) fn expand_directive(
        c: &'c mut Ctx<'a, H>,
        in_if: bool,
        toks: &[Tok],
    ) -> Result<(Self, Vec<ET>), PpError> {
        let mut e = Exp::new(c, in_if, toks.len());
        let input: Vec<ET> = toks
            .iter()
            .map(|&t| ET {
                t,
                hs: 0,
                blue: false,
            })
            .collect();
        let out = e.expand(input);
        match e.err.take() {
            Some(err) => Err(err),
            None => Ok((e, out)),
        }
    }

    /// Spends `n` work units; false (and the error set) once the budget is exhausted.
    #[inline]
    pub(super) fn charge(&mut self, n: usize) -> bool {
        if self.budget >= n {
            self.budget -= n;
            return true;
        }
        self.budget = 0;
        if self.err.is_none() {
            self.err = Some(PpError::ExpansionTooLarge {
                budget: self.budget_total,
            });
        }
        false
    }
}

/// Expands `#include MACRO...` to a header name.
pub fn include_name<H: Host>(c: &mut Ctx<'_, H>, toks: &[Tok]) -> Result<HeaderName, PpError> {
    let (e, out) = Exp::expand_directive(c, false, toks)?;
    header_name_from(&out.iter().map(|e| e.t).collect::<Vec<_>>(), e.c.interner)
        .ok_or(PpError::IncludeExpects)
}

pub(super) fn header_name_from(t: &[Tok], interner: &Interner) -> Option<HeaderName> {
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

pub(super) fn is_punct(t: &Tok, p: u32) -> bool {
    t.kind == TK::Punct && t.sym == p
}

impl<H: Host> Exp<'_, '_, H> {
    pub(super) fn hs_contains(&self, h: u32, s: Sym) -> bool {
        self.hs[h as usize].binary_search(&s).is_ok()
    }
    pub(super) fn hs_add(&mut self, h: u32, s: Sym) -> u32 {
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
    pub(super) fn hs_union(&mut self, a: u32, b: u32) -> u32 {
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
    pub(super) fn hs_intersect(&mut self, a: u32, b: u32) -> u32 {
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

    pub(super) fn num_tok(&self, v: u64, ws: bool) -> ET {
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

    pub(super) fn expand(&mut self, input: Vec<ET>) -> Vec<ET> {
        if self.depth >= MAX_EXPANSION_DEPTH {
            if self.err.is_none() {
                self.err = Some(PpError::ArgumentsTooDeep);
            }
            return Vec::new();
        }
        self.depth += 1;
        let out = self.expand_level(input);
        self.depth -= 1;
        out
    }

    pub(super) fn expand_level(&mut self, input: Vec<ET>) -> Vec<ET> {
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
                        self.err = Some(PpError::Unterminated(self.c.interner.string(name)));
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
                        self.err = Some(PpError::ArgumentCount {
                            name: self.c.interner.string(name),
                            given: args.len(),
                            takes: params.len(),
                        });
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
    pub(super) fn builtin(&mut self, name: Sym, stack: &mut Vec<ET>, ws: bool) -> Option<ET> {
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
                self.err = Some(PpError::MissingParenAfter(self.c.interner.string(name)));
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
                    self.err = Some(PpError::HasIncludeNeedsHeader);
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
    pub(super) fn take_defined(&mut self, stack: &mut Vec<ET>) -> bool {
        let paren = matches!(stack.last(), Some(x) if is_punct(&x.t, P::LPAREN));
        if paren {
            stack.pop();
        }
        let Some(id) = stack.pop() else {
            self.err = Some(PpError::DefinedNeedsIdentifier);
            return false;
        };
        if id.t.kind != TK::Ident {
            self.err = Some(PpError::DefinedNeedsIdentifier);
            return false;
        }
        if paren {
            match stack.pop() {
                Some(x) if is_punct(&x.t, P::RPAREN) => {}
                _ => {
                    self.err = Some(PpError::MissingParenAfter("defined".into()));
                    return false;
                }
            }
        }
        is_defined(self.c.macros, self.c.syms, self.c.clang, id.t.sym)
    }

    /// Arguments after the `(` (already consumed). Returns the arguments and the hide set of `)`.
    pub(super) fn collect_args(
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

    pub(super) fn glue(&mut self, lhs: ET, rhs: ET) -> Vec<ET> {
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

    pub(super) fn stringize(&mut self, arg: &[ET], ws: bool) -> ET {
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

    pub(super) fn subst(&mut self, m: &MacroDef, args: &[Vec<ET>], hs: u32, ws: bool) -> Vec<ET> {
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
    pub(super) fn apply_va_opt(&mut self, m: &MacroDef, args: &[Vec<ET>]) -> Vec<Tok> {
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
