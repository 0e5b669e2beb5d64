//! Directive extraction: one pass over a file's bytes that yields its line count, every
//! preprocessor directive (tokenised, with its physical line number), Header Hero 2011's
//! line-based include list for "all branches" mode, include-guard / `#pragma once` detection and
//! lexical errors. Works on raw bytes, so CRLF, lone CR and non-UTF-8 content are fine.
//!
//! The scanner follows translation phases 1–3 closely enough for directives: line splices,
//! `//` and `/* */` comments (which are whitespace, also inside `#if 0` blocks, as in GCC), string,
//! character and raw-string literals (so `"#include"` in a string is never a directive) and
//! pp-numbers with digit separators.

use super::lazy::{CacheBytes, Decode, Lazy};
use super::util::{FxMap, Interner, Sym, count_lines};
use std::sync::Arc;

/// Token kinds inside directives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TK {
    Ident = 0,
    Num = 1,
    Str = 2,
    Chr = 3,
    Punct = 4,
    Other = 5,
    /// Used only during macro expansion (`##` with an empty argument).
    Placemarker = 6,
}

/// A directive token. `sym` is the interned spelling, except for `Punct` where it is the index in
/// [`PUNCTS`]. `ws` = whitespace preceded the token (needed for stringizing and `#include MACRO`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tok {
    pub kind: TK,
    pub ws: bool,
    pub sym: u32,
}

/// Declares [`Punct`] and its spelling table [`PUNCTS`] from one list, so a punctuator's id (its
/// index, stored in [`Tok::sym`] and in the cache) and its spelling cannot drift apart.
macro_rules! punctuators {
    ($($name:ident = $spelling:literal),* $(,)?) => {
        /// A punctuator. `Punct::X as u32` is its id in [`Tok::sym`] and its index in [`PUNCTS`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub(crate) enum Punct {
            $($name),*
        }

        /// Punctuators' spellings by id, longest first so a greedy match works.
        pub(crate) const PUNCTS: &[&str] = &[$($spelling),*];

        impl Punct {
            /// Every punctuator, by id.
            pub const ALL: &[Punct] = &[$(Punct::$name),*];
        }
    };
}

punctuators! {
    DigraphHashHash = "%:%:", Ellipsis = "...", ShlEq = "<<=", ShrEq = ">>=", ArrowStar = "->*",
    HashHash = "##", Le = "<=", Ge = ">=", EqEq = "==", Ne = "!=", AndAnd = "&&", OrOr = "||",
    Shl = "<<", Shr = ">>", Arrow = "->", PlusPlus = "++", MinusMinus = "--", PlusEq = "+=",
    MinusEq = "-=", StarEq = "*=", SlashEq = "/=", PercentEq = "%=", AndEq = "&=", OrEq = "|=",
    CaretEq = "^=", ColonColon = "::", DotStar = ".*", DigraphHash = "%:", Hash = "#",
    LParen = "(", RParen = ")", Comma = ",", Lt = "<", Gt = ">", Plus = "+", Minus = "-",
    Star = "*", Slash = "/", Percent = "%", And = "&", Or = "|", Caret = "^", Tilde = "~",
    Not = "!", Question = "?", Colon = ":", Semi = ";", Dot = ".", LBracket = "[",
    RBracket = "]", LBrace = "{", RBrace = "}", Eq = "=", At = "@", Dollar = "$",
    Backtick = "`", Backslash = "\\",
}

impl Punct {
    /// The punctuator with id `id` (a [`Tok::sym`] of a `Punct` token).
    pub(crate) fn from_id(id: u32) -> Option<Punct> {
        Punct::ALL.get(id as usize).copied()
    }

    pub fn spelling(self) -> &'static str {
        PUNCTS[self as usize]
    }
}

/// Frequently compared punctuator ids (`Punct::X as u32`, for comparing with [`Tok::sym`]).
pub struct P;
impl P {
    pub(crate) const HASHHASH: u32 = Punct::HashHash as u32;
    pub(crate) const HASH: u32 = Punct::Hash as u32;
    pub(crate) const LPAREN: u32 = Punct::LParen as u32;
    pub(crate) const RPAREN: u32 = Punct::RParen as u32;
    pub(crate) const COMMA: u32 = Punct::Comma as u32;
    pub(crate) const LT: u32 = Punct::Lt as u32;
    pub(crate) const GT: u32 = Punct::Gt as u32;
    pub const ELLIPSIS: u32 = Punct::Ellipsis as u32;
}

/// One `#define`.
#[derive(Debug, Clone)]
pub struct MacroDef {
    pub name: Sym,
    /// `None` for object-like macros.
    pub params: Option<Vec<Sym>>,
    pub variadic: bool,
    pub body: Vec<Tok>,
    /// Tells this definition apart from every other one made in the process (never 0): the
    /// memo records "macro X had definition N" in 8 bytes instead of 16 with a pointer, and
    /// those records are most of a cold scan's memory. (Wrapping would take 2^32 definitions.)
    pub id: u32,
}

static NEXT_DEF_ID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

impl MacroDef {
    pub fn new(name: Sym, params: Option<Vec<Sym>>, variadic: bool, body: Vec<Tok>) -> Self {
        let mut id = NEXT_DEF_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if id == 0 {
            id = NEXT_DEF_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        MacroDef {
            name,
            params,
            variadic,
            body,
            id,
        }
    }
}

/// Two definitions are the same when they read the same (a re-read file's unchanged `#define`s
/// are unchanged directives), whatever their ids.
impl PartialEq for MacroDef {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
            && self.params == o.params
            && self.variadic == o.variadic
            && self.body == o.body
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum IncSpec {
    Quoted(Sym),
    Angle(Sym),
    /// `#include MACRO...`: resolved per translation unit after expansion.
    Macro(Vec<Tok>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum DKind {
    Include {
        next: bool,
        import: bool,
        spec: IncSpec,
    },
    If(Vec<Tok>),
    Ifdef(Sym),
    Ifndef(Sym),
    Elif(Vec<Tok>),
    Elifdef(Sym),
    Elifndef(Sym),
    Else,
    Endif,
    Define(Arc<MacroDef>),
    Undef(Sym),
    PragmaOnce,
    PushMacro(Sym),
    PopMacro(Sym),
    Error(String),
    /// Unknown directive name or malformed directive: an error only when in an active region.
    Bad(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Directive {
    pub line: u32,
    pub kind: DKind,
}

/// An include as Header Hero 2011's line parser sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct HhInclude {
    pub line: u32,
    pub quoted: bool,
    pub name: String,
}

/// A file's directives. Loaded from the cache, they stay encoded until first used: a rescan in
/// which nothing changed never looks at them (decoding them all was most of loading the cache).
#[derive(Clone, Default)]
pub struct Directives(Lazy<Vec<Directive>>);

impl Directives {
    pub fn new(v: Vec<Directive>) -> Self {
        Directives(Lazy::new(v))
    }

    /// Directives encoded in `buf[start..end]`, the whole cache file.
    pub(crate) fn lazy(
        buf: Arc<CacheBytes>,
        start: usize,
        end: usize,
        decode: Decode<Vec<Directive>>,
    ) -> Self {
        Directives(Lazy::encoded_in(buf, start, end, decode))
    }

    /// The encoded form, while it has not been decoded (a cache save copies it as is).
    pub fn encoded(&self) -> Option<&[u8]> {
        self.0.encoded()
    }
}

impl std::ops::Deref for Directives {
    type Target = [Directive];
    fn deref(&self) -> &[Directive] {
        self.0.get()
    }
}

impl PartialEq for Directives {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Directives {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Everything extracted from one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lexed {
    pub lines: u32,
    pub directives: Directives,
    pub hh_includes: Vec<HhInclude>,
    /// Lines Header Hero 2011 logs as "Could not parse line".
    pub hh_errors: Vec<u32>,
    /// Lexical problems (unterminated comment, bad `#include` syntax...): (line, message).
    pub errors: Vec<(u32, String)>,
    /// Include-guard macro when the whole file is `#ifndef G ... #endif` with nothing outside.
    pub guard: Option<Sym>,
    pub pragma_once: bool,
}

/// File-local string table, interned in one batch at the end.
struct Strs<'a> {
    map: FxMap<&'a [u8], u32>,
    list: Vec<&'a [u8]>,
    owned: Vec<Vec<u8>>, // spliced spellings (rare) live here; referenced by index | OWNED_BIT
}

const OWNED_BIT: u32 = 1 << 31;

impl<'a> Strs<'a> {
    fn id(&mut self, s: &'a [u8]) -> u32 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(s);
        self.map.insert(s, i);
        i
    }
    fn owned(&mut self, s: Vec<u8>) -> u32 {
        self.owned.push(s);
        (self.owned.len() as u32 - 1) | OWNED_BIT
    }
}

#[inline]
fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

/// Bytes [`Lexer::skip_code`] stops at.
static CODE_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let stops = b"\n\r\\/\"'.0123456789";
    let mut i = 0;
    while i < stops.len() {
        t[stops[i] as usize] = true;
        i += 1;
    }
    t
};

#[inline]
fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// Lexes a whole file.
pub fn lex(bytes: &[u8], interner: &Interner) -> Lexed {
    let mut lx = Lexer {
        b: bytes,
        pos: 0,
        line: 1,
        strs: Strs {
            map: FxMap::default(),
            list: Vec::new(),
            owned: Vec::new(),
        },
        out: Lexed {
            lines: count_lines(bytes),
            ..Default::default()
        },
        dirs: Vec::new(),
        code_before_first: false,
        code_after_last: false,
    };
    lx.run();
    hh_scan(bytes, &mut lx.out);
    // Intern the local table in one lock round, then rewrite local ids to global ones.
    let mut all: Vec<&[u8]> = lx.strs.list.clone();
    let nlocal = all.len();
    for o in &lx.strs.owned {
        all.push(o.as_slice());
    }
    let ids = interner.intern_many(&all);
    let map = |s: u32| -> u32 {
        if s & OWNED_BIT != 0 {
            ids[nlocal + (s & !OWNED_BIT) as usize]
        } else {
            ids[s as usize]
        }
    };
    let code_before_first = lx.code_before_first;
    let code_after_last = lx.code_after_last;
    let mut out = lx.out;
    let mut dirs = lx.dirs;
    for d in &mut dirs {
        remap_directive(&mut d.kind, &map);
    }
    out.guard = detect_guard(&dirs, code_before_first, code_after_last);
    out.directives = Directives::new(dirs);
    out
}

fn remap_toks(v: &mut [Tok], map: &impl Fn(u32) -> u32) {
    for t in v {
        if t.kind != TK::Punct {
            t.sym = map(t.sym);
        }
    }
}

fn remap_directive(k: &mut DKind, map: &impl Fn(u32) -> u32) {
    match k {
        DKind::Include { spec, .. } => match spec {
            IncSpec::Quoted(s) | IncSpec::Angle(s) => *s = map(*s),
            IncSpec::Macro(v) => remap_toks(v, map),
        },
        DKind::If(v) | DKind::Elif(v) => remap_toks(v, map),
        DKind::Ifdef(s)
        | DKind::Ifndef(s)
        | DKind::Elifdef(s)
        | DKind::Elifndef(s)
        | DKind::Undef(s)
        | DKind::PushMacro(s)
        | DKind::PopMacro(s) => *s = map(*s),
        DKind::Define(m) => {
            let m = Arc::get_mut(m).expect("fresh macro");
            m.name = map(m.name);
            if let Some(p) = &mut m.params {
                for s in p {
                    *s = map(*s);
                }
            }
            remap_toks(&mut m.body, map);
        }
        _ => {}
    }
}

/// `#ifndef G` / `#if !defined(G)` first, its `#endif` last, nothing but comments outside.
fn detect_guard(ds: &[Directive], code_before: bool, code_after: bool) -> Option<Sym> {
    if code_before || code_after || ds.is_empty() {
        return None;
    }
    let g = match &ds[0].kind {
        DKind::Ifndef(s) => *s,
        DKind::If(t) => {
            // ! defined ( X )  or  ! defined X
            let t: Vec<&Tok> = t.iter().collect();
            let bang = Punct::Not as u32;
            if t.len() >= 3 && t[0].kind == TK::Punct && t[0].sym == bang && t[1].kind == TK::Ident
            {
                if t.len() == 3 && t[2].kind == TK::Ident {
                    t[2].sym
                } else if t.len() == 5
                    && t[2].kind == TK::Punct
                    && t[2].sym == P::LPAREN
                    && t[3].kind == TK::Ident
                    && t[4].kind == TK::Punct
                    && t[4].sym == P::RPAREN
                {
                    t[3].sym
                } else {
                    return None;
                }
            } else {
                return None;
            }
        }
        _ => return None,
    };
    // The #endif matching the first directive must be the last directive.
    let mut depth = 0i32;
    for (i, d) in ds.iter().enumerate() {
        match d.kind {
            DKind::If(_) | DKind::Ifdef(_) | DKind::Ifndef(_) => depth += 1,
            DKind::Endif => {
                depth -= 1;
                if depth == 0 {
                    return if i == ds.len() - 1 { Some(g) } else { None };
                }
            }
            DKind::Elif(_) | DKind::Elifdef(_) | DKind::Elifndef(_) | DKind::Else if depth == 1 => {
                return None;
            }
            _ => {}
        }
    }
    None
}

/// A directive's logical line longer than this is not tokenised ([`Lexer::too_long_directive`]):
/// its tokens and their macro expansion take ~25 bytes per byte of text. Real directives are a
/// few KiB at most (the largest generated `#define` bodies a few hundred).
pub(crate) const MAX_DIRECTIVE_BYTES: usize = 8 << 20;
/// What a too-long line keeps: enough for the directive's name.
const DIRECTIVE_NAME_KEEP: usize = 64;

struct Lexer<'a> {
    b: &'a [u8],
    pos: usize,
    line: u32,
    strs: Strs<'a>,
    out: Lexed,
    dirs: Vec<Directive>,
    code_before_first: bool,
    code_after_last: bool,
}

impl<'a> Lexer<'a> {
    #[inline]
    fn at(&self, i: usize) -> u8 {
        if i < self.b.len() { self.b[i] } else { 0 }
    }

    /// Length of a newline sequence at `i` (0 if none).
    #[inline]
    fn nl_len(&self, i: usize) -> usize {
        match self.at(i) {
            b'\n' => 1,
            b'\r' => {
                if self.at(i + 1) == b'\n' {
                    2
                } else {
                    1
                }
            }
            _ => 0,
        }
    }

    /// Backslash-newline at `i`? Returns its length (GCC also allows spaces before the newline).
    #[inline]
    fn splice_len(&self, i: usize) -> usize {
        if self.at(i) != b'\\' {
            return 0;
        }
        let mut j = i + 1;
        while matches!(self.at(j), b' ' | b'\t') {
            j += 1;
        }
        let n = self.nl_len(j);
        if n == 0 { 0 } else { j + n - i }
    }

    fn saw_code(&mut self) {
        if self.dirs.is_empty() {
            self.code_before_first = true;
        }
        self.code_after_last = true;
    }

    fn run(&mut self) {
        let n = self.b.len();
        let mut bol = true;
        while self.pos < n {
            let c = self.b[self.pos];
            match c {
                b'\n' | b'\r' => {
                    self.pos += self.nl_len(self.pos);
                    self.line += 1;
                    bol = true;
                }
                b' ' | b'\t' | 0x0b | 0x0c => self.pos += 1,
                b'\\' => {
                    let s = self.splice_len(self.pos);
                    if s > 0 {
                        self.pos += s;
                        self.line += 1;
                    } else {
                        self.pos += 1;
                        bol = false;
                        self.saw_code();
                    }
                }
                b'/' if self.at(self.pos + 1) == b'/' => self.skip_line_comment(),
                b'/' if self.at(self.pos + 1) == b'*' => self.skip_block_comment(),
                b'#' if bol => {
                    self.pos += 1;
                    self.directive();
                    bol = false;
                }
                b'%' if bol && self.at(self.pos + 1) == b':' => {
                    self.pos += 2;
                    self.directive();
                    bol = false;
                }
                b'"' | b'\'' => {
                    self.saw_code();
                    bol = false;
                    self.skip_quoted(c);
                }
                _ if c.is_ascii_digit()
                    || (c == b'.' && self.at(self.pos + 1).is_ascii_digit()) =>
                {
                    self.saw_code();
                    bol = false;
                    self.skip_number();
                }
                _ if is_ident_start(c) => {
                    self.saw_code();
                    bol = false;
                    let start = self.pos;
                    while self.pos < n && is_ident_char(self.b[self.pos]) {
                        self.pos += 1;
                    }
                    let id = &self.b[start..self.pos];
                    if self.at(self.pos) == b'"'
                        && matches!(id, b"R" | b"LR" | b"uR" | b"UR" | b"u8R")
                    {
                        self.skip_raw_string();
                    }
                    self.skip_code();
                }
                _ => {
                    self.saw_code();
                    bol = false;
                    self.pos += 1;
                    self.skip_code();
                }
            }
        }
    }

    /// Inside a line of code (not a directive, code already seen): only newlines, splices,
    /// comments, literals and numbers (whose digit separators look like quotes) can change what
    /// follows, so the bytes in between are skipped with one table check each instead of being
    /// dispatched one by one (code lines are most of a header's bytes). Returns at a newline or
    /// splice, or at the start of a comment, for `run` to handle.
    fn skip_code(&mut self) {
        let n = self.b.len();
        loop {
            while self.pos < n && !CODE_STOP[self.b[self.pos] as usize] {
                self.pos += 1;
            }
            if self.pos >= n {
                return;
            }
            let c = self.b[self.pos];
            match c {
                b'\n' | b'\r' | b'\\' => return,
                b'/' => {
                    if matches!(self.at(self.pos + 1), b'/' | b'*') {
                        return;
                    }
                    self.pos += 1;
                }
                b'"' => {
                    // A raw string's prefix is the identifier right before the quote (`run`
                    // checks the same when it meets the identifier).
                    let mut start = self.pos;
                    while start > 0 && is_ident_char(self.b[start - 1]) {
                        start -= 1;
                    }
                    if matches!(
                        &self.b[start..self.pos],
                        b"R" | b"LR" | b"uR" | b"UR" | b"u8R"
                    ) {
                        self.skip_raw_string();
                    } else {
                        self.skip_quoted(b'"');
                    }
                }
                b'\'' => self.skip_quoted(b'\''),
                b'.' => {
                    if self.at(self.pos + 1).is_ascii_digit() {
                        self.skip_number();
                    } else {
                        self.pos += 1;
                    }
                }
                // A digit: inside an identifier when an identifier character comes right before
                // (an identifier runs on through digits); otherwise a number starts here.
                _ => {
                    if self.pos > 0 && is_ident_char(self.b[self.pos - 1]) {
                        self.pos += 1;
                    } else {
                        self.skip_number();
                    }
                }
            }
        }
    }

    fn skip_line_comment(&mut self) {
        // A `//` comment runs to the end of the line, continued by line splices. Comments are a
        // large share of a header's bytes: jump between the only bytes that matter (memchr).
        let n = self.b.len();
        self.pos += 2;
        while let Some(k) = memchr::memchr3(b'\n', b'\r', b'\\', &self.b[self.pos..]) {
            self.pos += k;
            if self.b[self.pos] != b'\\' {
                return;
            }
            let s = self.splice_len(self.pos);
            if s > 0 {
                self.pos += s;
                self.line += 1;
            } else {
                self.pos += 1;
            }
        }
        self.pos = n;
    }

    fn skip_block_comment(&mut self) {
        let start_line = self.line;
        let n = self.b.len();
        self.pos += 2;
        while let Some(k) = memchr::memchr3(b'*', b'\n', b'\r', &self.b[self.pos..]) {
            self.pos += k;
            match self.b[self.pos] {
                b'*' if self.at(self.pos + 1) == b'/' => {
                    self.pos += 2;
                    return;
                }
                b'\n' | b'\r' => {
                    self.pos += self.nl_len(self.pos);
                    self.line += 1;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = n;
        self.out
            .errors
            .push((start_line, "unterminated comment".into()));
    }

    /// Skips a "..." or '...' literal; stops (without consuming) at an unescaped newline.
    fn skip_quoted(&mut self, q: u8) {
        let n = self.b.len();
        self.pos += 1;
        while self.pos < n {
            let c = self.b[self.pos];
            if c == q {
                self.pos += 1;
                return;
            }
            if c == b'\\' {
                let s = self.splice_len(self.pos);
                if s > 0 {
                    self.pos += s;
                    self.line += 1;
                    continue;
                }
                // An escape; a backslash that ends the file escapes nothing.
                self.pos = (self.pos + 2).min(n);
                continue;
            }
            if c == b'\n' || c == b'\r' {
                return;
            }
            self.pos += 1;
        }
    }

    fn skip_raw_string(&mut self) {
        // R"delim( ... )delim"
        let n = self.b.len();
        let open = self.pos + 1;
        let mut p = open;
        while p < n && p - open <= 16 && self.b[p] != b'(' {
            if matches!(
                self.b[p],
                b' ' | b')' | b'\\' | b'\n' | b'\r' | b'\t' | b'"'
            ) {
                // Not a valid raw string: treat as an ordinary string.
                self.skip_quoted(b'"');
                return;
            }
            p += 1;
        }
        if p >= n || self.b[p] != b'(' {
            self.skip_quoted(b'"');
            return;
        }
        let delim = &self.b[open..p];
        let mut i = p + 1;
        while i < n {
            let c = self.b[i];
            if c == b')'
                && self.b[i + 1..].starts_with(delim)
                && self.at(i + 1 + delim.len()) == b'"'
            {
                self.pos = i + 2 + delim.len();
                return;
            }
            if c == b'\n' || (c == b'\r' && self.at(i + 1) != b'\n') {
                self.line += 1;
            }
            i += 1;
        }
        self.pos = n;
    }

    fn skip_number(&mut self) {
        let n = self.b.len();
        self.pos += 1;
        while self.pos < n {
            let c = self.b[self.pos];
            if (c == b'+' || c == b'-') && matches!(self.b[self.pos - 1], b'e' | b'E' | b'p' | b'P')
            {
                self.pos += 1;
            } else if c == b'\'' && is_ident_char(self.at(self.pos + 1)) {
                self.pos += 2;
            } else if is_ident_char(c) || c == b'.' {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// Collects the logical line of a directive starting at `self.pos` (just after `#`): splices
    /// removed, comments replaced by one space. Leaves `pos` at the terminating newline.
    /// The rest of the logical line (splices joined, comments as spaces), and whether it was
    /// longer than [`MAX_DIRECTIVE_BYTES`]: then only its first bytes are kept (enough for the
    /// directive's name), so a huge line never costs more than a few MiB here.
    fn logical_line(&mut self) -> (Vec<u8>, bool) {
        let n = self.b.len();
        let mut buf = Vec::with_capacity(64);
        let mut too_long = false;
        while self.pos < n {
            if buf.len() > MAX_DIRECTIVE_BYTES {
                too_long = true;
                buf.truncate(DIRECTIVE_NAME_KEEP);
            }
            let c = self.b[self.pos];
            match c {
                b'\n' | b'\r' => break,
                b'\\' => {
                    let s = self.splice_len(self.pos);
                    if s > 0 {
                        self.pos += s;
                        self.line += 1;
                    } else {
                        buf.push(c);
                        self.pos += 1;
                    }
                }
                b'/' if self.at(self.pos + 1) == b'/' => {
                    self.skip_line_comment();
                    buf.push(b' ');
                }
                b'/' if self.at(self.pos + 1) == b'*' => {
                    self.skip_block_comment();
                    buf.push(b' ');
                }
                b'"' | b'\'' => {
                    let start = self.pos;
                    self.skip_quoted(c);
                    // Literals may contain splices; copy without them.
                    let lit = &self.b[start..self.pos];
                    if lit.len() > MAX_DIRECTIVE_BYTES {
                        too_long = true;
                    } else if lit.contains(&b'\\') {
                        let mut j = 0;
                        while j < lit.len() {
                            let s = self.splice_len(start + j);
                            if s > 0 {
                                j += s;
                            } else {
                                buf.push(lit[j]);
                                j += 1;
                            }
                        }
                    } else {
                        buf.extend_from_slice(lit);
                    }
                }
                _ => {
                    buf.push(c);
                    self.pos += 1;
                }
            }
        }
        if buf.len() > MAX_DIRECTIVE_BYTES {
            too_long = true;
            buf.truncate(DIRECTIVE_NAME_KEEP);
        }
        (buf, too_long)
    }

    fn directive(&mut self) {
        let line = self.line;
        let start = self.pos;
        let (text, too_long) = self.logical_line();
        if too_long {
            self.too_long_directive(line, &text);
            return;
        }
        // Fast path: when the line had no splice/comment, tokens can borrow the file bytes.
        let borrowed = self.pos - start == text.len() && self.b[start..self.pos] == text[..];
        let mut t = Tokenizer { s: &text, i: 0 };
        // Directive name.
        t.skip_ws();
        let name_start = t.i;
        while t.i < text.len() && is_ident_char(text[t.i]) {
            t.i += 1;
        }
        let name: Vec<u8> = text[name_start..t.i].to_vec();
        let kind = match name.as_slice() {
            b"" => {
                if t.at_end() {
                    return; // null directive
                }
                DKind::Bad("invalid preprocessing directive".into())
            }
            b"include" | b"include_next" | b"import" => {
                let next = name == b"include_next";
                let import = name == b"import";
                t.skip_ws();
                match t.peek() {
                    Some(q @ (b'<' | b'"')) => {
                        let close = if q == b'<' { b'>' } else { b'"' };
                        let s = t.i + 1;
                        match text[s..].iter().position(|&c| c == close) {
                            Some(len) => {
                                let nm = &text[s..s + len];
                                let id = if borrowed {
                                    self.strs.id(&self.b[start + s..start + s + len])
                                } else {
                                    self.strs.owned(nm.to_vec())
                                };
                                let spec = if q == b'<' {
                                    IncSpec::Angle(id)
                                } else {
                                    IncSpec::Quoted(id)
                                };
                                DKind::Include { next, import, spec }
                            }
                            None => DKind::Bad(format!(
                                "missing terminating {} character in #{}",
                                close as char,
                                String::from_utf8_lossy(&name)
                            )),
                        }
                    }
                    None => DKind::Bad(format!(
                        "#{} expects \"FILENAME\" or <FILENAME>",
                        String::from_utf8_lossy(&name)
                    )),
                    Some(_) => {
                        let toks = self.tokens(&text, t.i, borrowed, start);
                        DKind::Include {
                            next,
                            import,
                            spec: IncSpec::Macro(toks),
                        }
                    }
                }
            }
            b"define" => self.define(&text, t.i, borrowed, start),
            b"undef" | b"ifdef" | b"ifndef" | b"elifdef" | b"elifndef" => {
                let v = self.tokens(&text, t.i, borrowed, start);
                match v.first() {
                    Some(tk) if tk.kind == TK::Ident => match name.as_slice() {
                        b"undef" => DKind::Undef(tk.sym),
                        b"ifdef" => DKind::Ifdef(tk.sym),
                        b"ifndef" => DKind::Ifndef(tk.sym),
                        b"elifdef" => DKind::Elifdef(tk.sym),
                        _ => DKind::Elifndef(tk.sym),
                    },
                    _ => {
                        // A conditional with a bad operand still opens a block; keep nesting right.
                        let msg = format!(
                            "no macro name given in #{} directive",
                            String::from_utf8_lossy(&name)
                        );
                        match name.as_slice() {
                            b"ifdef" | b"ifndef" => DKind::If(vec![]),
                            b"elifdef" | b"elifndef" => DKind::Elif(vec![]),
                            _ => DKind::Bad(msg),
                        }
                    }
                }
            }
            b"if" => DKind::If(self.tokens(&text, t.i, borrowed, start)),
            b"elif" => DKind::Elif(self.tokens(&text, t.i, borrowed, start)),
            b"else" => DKind::Else,
            b"endif" => DKind::Endif,
            b"pragma" => {
                let v = self.tokens(&text, t.i, borrowed, start);
                match self.pragma(&v) {
                    Some(k) => k,
                    None => return,
                }
            }
            b"error" => {
                DKind::Error(String::from_utf8_lossy(text[t.i..].trim_ascii()).into_owned())
            }
            b"warning" | b"line" | b"ident" | b"sccs" | b"assert" | b"unassert" => return,
            _ => {
                if name[0].is_ascii_digit() {
                    return; // `# 33 "file"` line markers
                }
                DKind::Bad(format!(
                    "invalid preprocessing directive #{}",
                    String::from_utf8_lossy(&name)
                ))
            }
        };
        if matches!(kind, DKind::PragmaOnce) {
            self.out.pragma_once = true;
        }
        self.dirs.push(Directive { line, kind });
        self.code_after_last = false;
    }

    /// A directive longer than [`MAX_DIRECTIVE_BYTES`] (`head`: its first bytes): an error entry
    /// at its line, never its tokens (a 300 MB `#if 1 + 1 + ...` would need gigabytes). A
    /// conditional still opens (or continues) its block, as false, so the nesting stays right.
    fn too_long_directive(&mut self, line: u32, head: &[u8]) {
        let mut t = Tokenizer { s: head, i: 0 };
        t.skip_ws();
        let name_start = t.i;
        while t.i < head.len() && is_ident_char(head[t.i]) {
            t.i += 1;
        }
        let name = String::from_utf8_lossy(&head[name_start..t.i]).into_owned();
        let msg = format!(
            "#{name} directive longer than {} MiB: not evaluated{}",
            MAX_DIRECTIVE_BYTES >> 20,
            match name.as_str() {
                "if" | "ifdef" | "ifndef" | "elif" | "elifdef" | "elifndef" => " (taken as false)",
                _ => " (ignored)",
            }
        );
        let kind = match name.as_str() {
            "if" | "ifdef" | "ifndef" => DKind::If(self.tokens(b"0", 0, false, 0)),
            "elif" | "elifdef" | "elifndef" => DKind::Elif(self.tokens(b"0", 0, false, 0)),
            "else" => DKind::Else,
            "endif" => DKind::Endif,
            _ => DKind::Bad(msg.clone()),
        };
        if matches!(
            kind,
            DKind::If(_) | DKind::Elif(_) | DKind::Else | DKind::Endif
        ) {
            self.out.errors.push((line, msg));
        }
        self.dirs.push(Directive { line, kind });
        self.code_after_last = false;
    }

    /// `#pragma once` and `push_macro`/`pop_macro` matter for includes; other pragmas are dropped.
    fn pragma(&mut self, v: &[Tok]) -> Option<DKind> {
        let sp = |t: &Tok, s: &Strs| -> Vec<u8> {
            if t.sym & OWNED_BIT != 0 {
                s.owned[(t.sym & !OWNED_BIT) as usize].clone()
            } else {
                s.list[t.sym as usize].to_vec()
            }
        };
        let first = v.first()?;
        if first.kind != TK::Ident {
            return None;
        }
        let w = sp(first, &self.strs);
        if w == b"once" {
            return Some(DKind::PragmaOnce);
        }
        if (w == b"push_macro" || w == b"pop_macro") && v.len() >= 4 && v[2].kind == TK::Str {
            let lit = sp(&v[2], &self.strs);
            let inner = lit
                .iter()
                .position(|&c| c == b'"')
                .map(|p| &lit[p + 1..lit.len().saturating_sub(1)]);
            if let Some(inner) = inner {
                let id = self.strs.owned(inner.to_vec());
                return Some(if w == b"push_macro" {
                    DKind::PushMacro(id)
                } else {
                    DKind::PopMacro(id)
                });
            }
        }
        None
    }

    fn define(&mut self, text: &[u8], from: usize, borrowed: bool, start: usize) -> DKind {
        let mut t = Tokenizer { s: text, i: from };
        t.skip_ws();
        let ns = t.i;
        if !t.peek().is_some_and(is_ident_start) {
            return DKind::Bad("macro names must be identifiers".into());
        }
        while t.i < text.len() && is_ident_char(text[t.i]) {
            t.i += 1;
        }
        let name = self.sym(text, ns, t.i, borrowed, start);
        let mut params = None;
        let mut variadic = false;
        if t.peek() == Some(b'(') {
            t.i += 1;
            let mut ps = Vec::new();
            loop {
                t.skip_ws();
                match t.peek() {
                    Some(b')') => {
                        t.i += 1;
                        break;
                    }
                    Some(b',') => t.i += 1,
                    Some(b'.') if text[t.i..].starts_with(b"...") => {
                        t.i += 3;
                        variadic = true;
                        ps.push((self.strs.owned(b"__VA_ARGS__".to_vec()), true));
                    }
                    Some(c) if is_ident_start(c) => {
                        let s = t.i;
                        while t.i < text.len() && is_ident_char(text[t.i]) {
                            t.i += 1;
                        }
                        let id = self.sym(text, s, t.i, borrowed, start);
                        // GNU named variadic `args...`
                        t.skip_ws();
                        if text[t.i..].starts_with(b"...") {
                            t.i += 3;
                            variadic = true;
                            ps.push((id, true));
                        } else {
                            ps.push((id, false));
                        }
                    }
                    _ => return DKind::Bad("malformed macro parameter list".into()),
                }
            }
            params = Some(ps.into_iter().map(|(s, _)| s).collect());
        }
        let mut body = self.tokens(text, t.i, borrowed, start);
        if let Some(f) = body.first_mut() {
            f.ws = false;
        }
        DKind::Define(Arc::new(MacroDef::new(name, params, variadic, body)))
    }

    fn sym(&mut self, text: &[u8], s: usize, e: usize, borrowed: bool, start: usize) -> u32 {
        if borrowed {
            self.strs.id(&self.b[start + s..start + e])
        } else {
            self.strs.owned(text[s..e].to_vec())
        }
    }

    /// Tokenises `text[from..]`.
    fn tokens(&mut self, text: &[u8], from: usize, borrowed: bool, start: usize) -> Vec<Tok> {
        let mut out = Vec::new();
        let mut t = Tokenizer { s: text, i: from };
        loop {
            let ws = t.skip_ws();
            let Some(c) = t.peek() else { break };
            let s = t.i;
            let kind;
            if c.is_ascii_digit() || (c == b'.' && t.at(t.i + 1).is_ascii_digit()) {
                t.i += 1;
                while t.i < text.len() {
                    let c = text[t.i];
                    if (c == b'+' || c == b'-')
                        && matches!(text[t.i - 1], b'e' | b'E' | b'p' | b'P')
                    {
                        t.i += 1;
                    } else if c == b'\'' && is_ident_char(t.at(t.i + 1)) {
                        t.i += 2;
                    } else if is_ident_char(c) || c == b'.' {
                        t.i += 1;
                    } else {
                        break;
                    }
                }
                kind = TK::Num;
            } else if is_ident_start(c) {
                while t.i < text.len() && is_ident_char(text[t.i]) {
                    t.i += 1;
                }
                let id = &text[s..t.i];
                match t.peek() {
                    Some(q @ (b'"' | b'\'')) if matches!(id, b"L" | b"u" | b"U" | b"u8") => {
                        t.skip_lit(q);
                        kind = if q == b'"' { TK::Str } else { TK::Chr };
                    }
                    Some(b'"') if matches!(id, b"R" | b"LR" | b"uR" | b"UR" | b"u8R") => {
                        t.skip_lit(b'"');
                        kind = TK::Str;
                    }
                    _ => kind = TK::Ident,
                }
            } else if c == b'"' || c == b'\'' {
                t.skip_lit(c);
                kind = if c == b'"' { TK::Str } else { TK::Chr };
            } else {
                let rest = &text[t.i..];
                if let Some(pi) = PUNCTS.iter().position(|p| rest.starts_with(p.as_bytes())) {
                    let p = PUNCTS[pi];
                    t.i += p.len();
                    // Digraphs map to their primary spelling.
                    let pi = match p {
                        "%:" => P::HASH as usize,
                        "%:%:" => P::HASHHASH as usize,
                        _ => pi,
                    };
                    out.push(Tok {
                        kind: TK::Punct,
                        ws,
                        sym: pi as u32,
                    });
                    continue;
                }
                t.i += 1;
                kind = TK::Other;
            }
            let sym = self.sym(text, s, t.i, borrowed, start);
            out.push(Tok { kind, ws, sym });
        }
        out
    }
}

struct Tokenizer<'t> {
    s: &'t [u8],
    i: usize,
}

impl Tokenizer<'_> {
    fn at(&self, i: usize) -> u8 {
        if i < self.s.len() { self.s[i] } else { 0 }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.i >= self.s.len()
    }
    fn skip_ws(&mut self) -> bool {
        let s = self.i;
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | 0x0b | 0x0c) {
            self.i += 1;
        }
        self.i > s
    }
    fn skip_lit(&mut self, q: u8) {
        self.i += 1;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            if c == b'\\' {
                self.i += 2;
                continue;
            }
            self.i += 1;
            if c == q {
                return;
            }
        }
        self.i = self.s.len();
    }
}

/// Header Hero 2011's parser (aras-p/header_hero @0bcebb9b `Parser.cs`): only lines containing both
/// `#` and `include` are looked at; a small state machine accepts `# include "x"` / `<x>`, a `//`
/// line comment is fine, anything else is an error and the line is ignored. No comments, no
/// conditionals, no macros: that is the "all branches" definition.
pub fn hh_scan(bytes: &[u8], out: &mut Lexed) {
    // Only lines with a `#` can hold an include. Without `\r` line ends (nearly every file),
    // jump from `#` to `#` and count the `\n`s in between, instead of walking every line.
    if memchr::memchr(b'\r', bytes).is_none() {
        let n = bytes.len();
        let (mut counted_to, mut newlines, mut next_line) = (0usize, 0u32, 0usize);
        for h in memchr::memchr_iter(b'#', bytes) {
            if h < next_line {
                continue;
            }
            let start = memchr::memrchr(b'\n', &bytes[..h]).map_or(0, |k| k + 1);
            let end = memchr::memchr(b'\n', &bytes[h..]).map_or(n, |k| h + k);
            newlines += memchr::memchr_iter(b'\n', &bytes[counted_to..start]).count() as u32;
            counted_to = start;
            next_line = end + 1;
            hh_line(&bytes[start..end], newlines + 1, out);
        }
        return;
    }
    let mut line_no = 0u32;
    let mut i = 0;
    let n = bytes.len();
    while i < n {
        let s = i;
        while i < n && bytes[i] != b'\n' && bytes[i] != b'\r' {
            i += 1;
        }
        let line = &bytes[s..i];
        if i < n {
            if bytes[i] == b'\r' && i + 1 < n && bytes[i + 1] == b'\n' {
                i += 2;
            } else {
                i += 1;
            }
        }
        line_no += 1;
        if line.contains(&b'#') {
            hh_line(line, line_no, out);
        }
    }
}

/// One line that has a `#`, through Header Hero's line parser.
fn hh_line(line: &[u8], line_no: u32, out: &mut Lexed) {
    if !contains(line, b"include") {
        return;
    }
    match hh_parse_line(line) {
        Ok(Some((quoted, name))) => out.hh_includes.push(HhInclude {
            line: line_no,
            quoted,
            name: String::from_utf8_lossy(name).into_owned(),
        }),
        Ok(None) => {}
        Err(()) => out.hh_errors.push(line_no),
    }
}

fn contains(h: &[u8], n: &[u8]) -> bool {
    h.windows(n.len()).any(|w| w == n)
}

/// Exact port of the 2011 state machine (see `hh_emul.py parse_line`).
fn hh_parse_line(line: &[u8]) -> Result<Option<(bool, &[u8])>, ()> {
    #[derive(PartialEq)]
    enum St {
        S,
        H,
        I,
        A,
        Q,
    }
    let mut i = 0;
    let mut st = St::S;
    let mut ps = 0;
    let n = line.len();
    loop {
        if i >= n {
            return Err(());
        }
        let c = line[i];
        i += 1;
        if c == b' ' || c == b'\t' {
            continue;
        }
        match st {
            St::S => {
                if c == b'#' {
                    st = St::H;
                } else if c == b'/' {
                    if i >= n {
                        return Err(());
                    }
                    if line[i] == b'/' {
                        return Ok(None);
                    }
                    // hh_emul.py: `/x` keeps the state machine in S at the next char.
                } else {
                    return Err(());
                }
            }
            St::H => {
                i -= 1;
                if line[i..].starts_with(b"include") {
                    i += 7;
                    st = St::I;
                } else {
                    return Ok(None);
                }
            }
            St::I => {
                if c == b'<' {
                    ps = i;
                    st = St::A;
                } else if c == b'"' {
                    ps = i;
                    st = St::Q;
                } else {
                    return Err(());
                }
            }
            St::A => {
                if c == b'>' {
                    return Ok(Some((false, &line[ps..i - 1])));
                }
            }
            St::Q => {
                if c == b'"' {
                    return Ok(Some((true, &line[ps..i - 1])));
                }
            }
        }
    }
}

/// Spelling of a token.
pub fn spell(t: &Tok, interner: &Interner, out: &mut Vec<u8>) {
    match t.kind {
        TK::Punct => out.extend_from_slice(PUNCTS[t.sym as usize].as_bytes()),
        TK::Placemarker => {}
        _ => interner.with(t.sym, |s| out.extend_from_slice(s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing (`headers_lex`, `headers_if`): a literal whose last byte is a backslash
    /// at the end of the file read past the end of the buffer.
    #[test]
    fn a_backslash_ending_the_file_inside_a_literal() {
        let i = Interner::new();
        for src in [
            &b"#if \"\\"[..],
            b"#define X '\\",
            b"#include \"a.h\\",
            b"int x = '\\",
            b"#if 1 '000 == 10 \\\\\\\\\\",
        ] {
            let mut l = lex(src, &i);
            hh_scan(src, &mut l);
            assert_eq!(l.lines, 1, "{:?}", String::from_utf8_lossy(src));
        }
    }
}
