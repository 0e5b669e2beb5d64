//! `#if` / `#elif` evaluation: the expanded tokens parsed and evaluated as a C constant
//! expression (`defined`, `__has_include`, `__has_attribute` and friends, integer arithmetic
//! with C's signed/unsigned rules), nesting bounded by [`super::MAX_EXPRESSION_DEPTH`].

use super::*;

/// Evaluates an `#if`/`#elif` expression. `Err` carries GCC-like messages; GCC treats such a
/// condition as false, and so do we.
pub fn eval_if<H: Host>(c: &mut Ctx<'_, H>, toks: &[Tok]) -> Result<bool, PpError> {
    if toks.is_empty() {
        return Err(PpError::NoExpression);
    }
    let (e, out) = Exp::expand_directive(c, true, toks)?;
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
        return Err(PpError::MissingOperator(
            String::from_utf8_lossy(&s).into_owned(),
        ));
    }
    Ok(v.v != 0)
}

/// `defined(X)` / `#ifdef X`: a macro, or one of the compiler's built-in operators and dynamic
/// macros (`#ifdef __has_builtin` is true on GCC 10+).
pub(crate) fn is_defined(macros: &mut Macros, s: &Syms, clang: bool, n: Sym) -> bool {
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

pub(super) fn cpp_attribute_value(s: &str) -> u64 {
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
pub(super) struct V {
    pub(super) v: u64,
    pub(super) uns: bool,
}

impl V {
    pub(super) fn s(v: i64) -> V {
        V {
            v: v as u64,
            uns: false,
        }
    }
    pub(super) fn truth(self) -> bool {
        self.v != 0
    }
}

pub(super) struct Eval<'t, 'c, 'a, H: Host> {
    pub(super) t: &'t [ET],
    pub(super) i: usize,
    pub(super) c: &'c mut Ctx<'a, H>,
    pub(super) err: Option<PpError>,
    /// Current nesting of sub-expressions (see [`MAX_EXPRESSION_DEPTH`]).
    pub(super) depth: u32,
}

impl<H: Host> Eval<'_, '_, '_, H> {
    pub(super) fn peek_punct(&self) -> Option<u32> {
        self.t
            .get(self.i)
            .filter(|e| e.t.kind == TK::Punct)
            .map(|e| e.t.sym)
    }
    pub(super) fn fail(&mut self, m: PpError) -> V {
        if self.err.is_none() {
            self.err = Some(m);
        }
        V::s(0)
    }
    pub(super) fn comma(&mut self, skip: bool) -> V {
        let mut v = self.cond(skip);
        while self.peek_punct() == Some(P::COMMA) {
            self.i += 1;
            v = self.cond(skip);
        }
        v
    }
    /// Enters one more level of nesting; false (and the error set) past the limit. Every cycle
    /// of the recursive descent goes through [`Eval::cond`] or [`Eval::unary`], which call this.
    pub(super) fn enter(&mut self) -> bool {
        if self.depth >= MAX_EXPRESSION_DEPTH {
            self.fail(PpError::NestedTooDeeply);
            return false;
        }
        self.depth += 1;
        true
    }
    pub(super) fn cond(&mut self, skip: bool) -> V {
        if !self.enter() {
            return V::s(0);
        }
        let v = self.cond_inner(skip);
        self.depth -= 1;
        v
    }
    pub(super) fn cond_inner(&mut self, skip: bool) -> V {
        let c = self.binary(0, skip);
        if self.peek_punct() == Some(PQ) {
            self.i += 1;
            let t = c.truth();
            let a = self.comma(skip || !t);
            if self.peek_punct() != Some(PCOLON) {
                return self.fail(PpError::QuestionWithoutColon);
            }
            self.i += 1;
            let b = self.cond(skip || t);
            let uns = a.uns || b.uns;
            let r = if t { a } else { b };
            return V { v: r.v, uns };
        }
        c
    }
    pub(super) fn binary(&mut self, min_prec: u8, skip: bool) -> V {
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
    pub(super) fn apply(&mut self, op: u32, a: V, b: V, skip: bool) -> V {
        let uns = a.uns || b.uns;
        let Some(p) = Punct::from_id(op) else {
            return self.fail(PpError::InvalidToken);
        };
        let (x, y) = (a.v, b.v);
        let (sx, sy) = (a.v as i64, b.v as i64);

        match p {
            Punct::Star => V {
                v: if uns {
                    x.wrapping_mul(y)
                } else {
                    sx.wrapping_mul(sy) as u64
                },
                uns,
            },
            Punct::Slash | Punct::Percent => {
                if y == 0 {
                    if skip {
                        return V { v: 0, uns };
                    }
                    return self.fail(PpError::DivisionByZero);
                }
                let v = if uns {
                    if p == Punct::Slash { x / y } else { x % y }
                } else if p == Punct::Slash {
                    sx.wrapping_div(sy) as u64
                } else {
                    sx.wrapping_rem(sy) as u64
                };
                V { v, uns }
            }
            Punct::Plus => V {
                v: x.wrapping_add(y),
                uns,
            },
            Punct::Minus => V {
                v: x.wrapping_sub(y),
                uns,
            },
            Punct::Shl => V {
                v: if y >= 64 { 0 } else { x << y },
                uns: a.uns,
            },
            Punct::Shr => V {
                v: if a.uns {
                    if y >= 64 { 0 } else { x >> y }
                } else if y >= 64 {
                    if sx < 0 { u64::MAX } else { 0 }
                } else {
                    (sx >> y) as u64
                },
                uns: a.uns,
            },
            Punct::Lt => V::s(if uns { x < y } else { sx < sy } as i64),
            Punct::Gt => V::s(if uns { x > y } else { sx > sy } as i64),
            Punct::Le => V::s(if uns { x <= y } else { sx <= sy } as i64),
            Punct::Ge => V::s(if uns { x >= y } else { sx >= sy } as i64),
            Punct::EqEq => V::s((x == y) as i64),
            Punct::Ne => V::s((x != y) as i64),
            Punct::And => V { v: x & y, uns },
            Punct::Caret => V { v: x ^ y, uns },
            Punct::Or => V { v: x | y, uns },
            _ => self.fail(PpError::NotValid(p.spelling())),
        }
    }
    pub(super) fn unary(&mut self, skip: bool) -> V {
        if !self.enter() {
            return V::s(0);
        }
        let v = self.unary_inner(skip);
        self.depth -= 1;
        v
    }
    pub(super) fn unary_inner(&mut self, skip: bool) -> V {
        let Some(e) = self.t.get(self.i).copied() else {
            return self.fail(PpError::NoExpression);
        };
        self.i += 1;
        match e.t.kind {
            TK::Punct => match Punct::from_id(e.t.sym) {
                Some(Punct::LParen) => {
                    let v = self.comma(skip);
                    if self.peek_punct() != Some(P::RPAREN) {
                        return self.fail(PpError::MissingParen);
                    }
                    self.i += 1;
                    v
                }
                Some(Punct::Not) => V::s(!self.unary(skip).truth() as i64),
                Some(Punct::Minus) => {
                    let v = self.unary(skip);
                    V {
                        v: (v.v as i64).wrapping_neg() as u64,
                        uns: v.uns,
                    }
                }
                Some(Punct::Plus) => self.unary(skip),
                Some(Punct::Tilde) => {
                    let v = self.unary(skip);
                    V {
                        v: !v.v,
                        uns: v.uns,
                    }
                }
                Some(p) => self.fail(PpError::NotValid(p.spelling())),
                None => self.fail(PpError::InvalidToken),
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
            TK::Str => self.fail(PpError::StringLiteral),
            _ => self.fail(PpError::InvalidToken),
        }
    }
}

pub(super) const PQ: u32 = Punct::Question as u32;
pub(super) const PCOLON: u32 = Punct::Colon as u32;
pub(super) const POROR: u32 = Punct::OrOr as u32;
pub(super) const PANDAND: u32 = Punct::AndAnd as u32;

pub(super) fn prec_of(op: u32) -> Option<u8> {
    Some(match Punct::from_id(op)? {
        Punct::OrOr => 1,
        Punct::AndAnd => 2,
        Punct::Or => 3,
        Punct::Caret => 4,
        Punct::And => 5,
        Punct::EqEq | Punct::Ne => 6,
        Punct::Lt | Punct::Gt | Punct::Le | Punct::Ge => 7,
        Punct::Shl | Punct::Shr => 8,
        Punct::Plus | Punct::Minus => 9,
        Punct::Star | Punct::Slash | Punct::Percent => 10,
        _ => return None,
    })
}

pub(super) fn parse_number(s: &[u8]) -> Result<V, PpError> {
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
    let bad = || PpError::BadInteger(String::from_utf8_lossy(s).into_owned());
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
        return Err(PpError::Floating);
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
        return Err(PpError::TooLarge);
    }
    if v > i64::MAX as u64 {
        uns = true;
    }
    Ok(V { v, uns })
}

pub(super) fn char_value(s: &[u8]) -> i64 {
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
