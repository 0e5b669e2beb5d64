//! The on-disk cache: per file size + mtime + content hash (CRC-32) + extracted directives, per
//! TU its last result, the directory stamps that guard resolution, the compiler queries and the
//! last walk of the roots. A compact hand-rolled binary format: the warm-rescan budget (≤ 10% of
//! a cold scan) leaves no room for JSON parsing of hundreds of thousands of tokens. Four sections
//! (strings, files, TU results, the rest) are encoded and decoded in parallel; a file's
//! directives and the existence answers stay encoded until used. A checksum covers the whole file; any mismatch or corruption simply
//! discards the cache.

use super::Project;
use super::compiler::CompilerEnv;
use super::eval::TuResult;
use super::lazy::CacheBytes;
use super::lex::{DKind, Directive, Directives, HhInclude, IncSpec, Lexed, MacroDef, TK, Tok};
use super::state::{HhCached, Prev, WalkCache};
use super::store::{Answers, FileData};
use super::util::{FxMap, Interner, absolutize, fx_hash};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"CFHDRC12";

/// Where the cache of a project lives: next to the project file when one is given, else in the
/// user cache dir (`$XDG_CACHE_HOME` or `~/.cache`) under a name derived from the inputs.
pub fn cache_path(p: &Project) -> Option<PathBuf> {
    if let Some(c) = &p.cache_file {
        return Some(c.clone());
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let mut key = fx_hash(&(
        p.roots.iter().map(|r| absolutize(r)).collect::<Vec<_>>(),
        p.include_dirs
            .iter()
            .map(|r| absolutize(r))
            .collect::<Vec<_>>(),
        p.compile_commands.as_ref().map(|c| absolutize(c)),
    ));
    // Configurations get their own file (a project without keeps the name it always had).
    if !p.configs.is_empty() {
        let cs: Vec<(&str, PathBuf)> = p
            .configs
            .iter()
            .map(|c| (c.name.as_str(), absolutize(&c.compile_commands)))
            .collect();
        key = fx_hash(&(key, cs));
    }
    Some(
        base.join("clipforge")
            .join("headers")
            .join(format!("{key:016x}.cache")),
    )
}

struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v)
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes())
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes())
    }
    /// LEB128: TU results are millions of small file ids and line numbers.
    fn v(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8)
    }
    /// Ids as fixed-width little-endian numbers (2 bytes when they all fit, else 4): TU results
    /// are about a million of them, and a fixed width decodes at memory speed.
    fn ids(&mut self, ids: &[u32]) {
        let wide = ids.iter().any(|&x| x > u16::MAX as u32);
        self.u8(if wide { 4 } else { 2 });
        for &x in ids {
            if wide {
                self.0.extend_from_slice(&x.to_le_bytes());
            } else {
                self.0.extend_from_slice(&(x as u16).to_le_bytes());
            }
        }
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b)
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes())
    }
    fn path(&mut self, p: &Path) {
        self.str(&p.to_string_lossy())
    }
    fn toks(&mut self, t: &[Tok]) {
        self.u32(t.len() as u32);
        for k in t {
            self.u8(k.kind as u8 | if k.ws { 0x80 } else { 0 });
            self.v(k.sym);
        }
    }
    fn lexed(&mut self, l: &Lexed) {
        self.u32(l.lines);
        // The directives as a length-prefixed blob: a load keeps it encoded until it is needed,
        // and a save copies a still-encoded one as it is.
        match l.directives.encoded() {
            Some(b) => self.bytes(b),
            None => {
                let mut d = W(Vec::new());
                d.directives(&l.directives);
                self.bytes(&d.0);
            }
        }
        self.hh(l);
    }
    fn directives(&mut self, ds: &[Directive]) {
        self.u32(ds.len() as u32);
        for d in ds {
            self.v(d.line);
            match &d.kind {
                DKind::Include { next, import, spec } => {
                    self.u8(0);
                    self.u8(*next as u8 | (*import as u8) << 1);
                    match spec {
                        IncSpec::Quoted(s) => {
                            self.u8(0);
                            self.u32(*s)
                        }
                        IncSpec::Angle(s) => {
                            self.u8(1);
                            self.u32(*s)
                        }
                        IncSpec::Macro(t) => {
                            self.u8(2);
                            self.toks(t)
                        }
                    }
                }
                DKind::If(t) => {
                    self.u8(1);
                    self.toks(t)
                }
                DKind::Ifdef(s) => {
                    self.u8(2);
                    self.u32(*s)
                }
                DKind::Ifndef(s) => {
                    self.u8(3);
                    self.u32(*s)
                }
                DKind::Elif(t) => {
                    self.u8(4);
                    self.toks(t)
                }
                DKind::Elifdef(s) => {
                    self.u8(5);
                    self.u32(*s)
                }
                DKind::Elifndef(s) => {
                    self.u8(6);
                    self.u32(*s)
                }
                DKind::Else => self.u8(7),
                DKind::Endif => self.u8(8),
                DKind::Define(m) => {
                    self.u8(9);
                    self.u32(m.name);
                    match &m.params {
                        None => self.u32(u32::MAX),
                        Some(p) => {
                            self.u32(p.len() as u32);
                            for s in p {
                                self.u32(*s);
                            }
                        }
                    }
                    self.u8(m.variadic as u8);
                    self.toks(&m.body);
                }
                DKind::Undef(s) => {
                    self.u8(10);
                    self.u32(*s)
                }
                DKind::PragmaOnce => self.u8(11),
                DKind::PushMacro(s) => {
                    self.u8(12);
                    self.u32(*s)
                }
                DKind::PopMacro(s) => {
                    self.u8(13);
                    self.u32(*s)
                }
                DKind::Error(m) => {
                    self.u8(14);
                    self.str(m)
                }
                DKind::Bad(m) => {
                    self.u8(15);
                    self.str(m)
                }
            }
        }
    }
    fn hh(&mut self, l: &Lexed) {
        self.u32(l.hh_includes.len() as u32);
        for h in &l.hh_includes {
            self.u32(h.line);
            self.u8(h.quoted as u8);
            self.str(&h.name);
        }
        self.u32(l.hh_errors.len() as u32);
        for &e in &l.hh_errors {
            self.u32(e);
        }
        self.u32(l.errors.len() as u32);
        for (line, m) in &l.errors {
            self.u32(*line);
            self.str(m);
        }
        self.u32(l.guard.unwrap_or(u32::MAX));
        self.u8(l.pragma_once as u8);
    }
}

/// Why a cache file was not used or not written; the scan goes on without it (a note).
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a cache file of this version", .0.display())]
    Version(PathBuf),
    #[error("{}: {corrupt}", path.display())]
    Corrupt { path: PathBuf, corrupt: Corrupt },
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A cache save that failed: the scan's result stands, the CLI prints this as a note.
#[derive(Debug, thiserror::Error)]
#[error("cache not saved: {0}")]
pub struct CacheNotSaved(pub CacheError);

/// What is wrong inside a cache file's bytes (the file is then rebuilt).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Corrupt {
    #[error("truncated cache file")]
    Truncated,
    /// The part whose encoding is impossible (a length past the end, an unknown tag, ...).
    #[error("corrupt cache file ({0})")]
    Part(&'static str),
}

struct R<'a> {
    b: &'a [u8],
    i: usize,
}

type Res<T> = Result<T, Corrupt>;

impl<'b> R<'b> {
    fn take(&mut self, n: usize) -> Res<&'b [u8]> {
        if self.i + n > self.b.len() {
            return Err(Corrupt::Truncated);
        }
        let s = &self.b[self.i..self.i + n];
        self.i += n;
        Ok(s)
    }
    fn u8(&mut self) -> Res<u8> {
        Ok(self.take(1)?[0])
    }
    /// A length-prefixed byte string, borrowed.
    fn take_len(&mut self) -> Res<&'b [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// The next section (a byte length, then that many bytes) as its own reader.
    fn section(&mut self) -> Res<R<'b>> {
        let n = usize::try_from(self.u64()?).map_err(|_| Corrupt::Part("section"))?;
        Ok(R {
            b: self.take(n)?,
            i: 0,
        })
    }
    fn u32(&mut self) -> Res<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Res<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    #[inline]
    fn v(&mut self) -> Res<u32> {
        let mut v = 0u32;
        let mut shift = 0;
        loop {
            let Some(&b) = self.b.get(self.i) else {
                return Err(Corrupt::Truncated);
            };
            self.i += 1;
            v |= ((b & 0x7f) as u32) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
            if shift > 28 {
                return Err(Corrupt::Part("varint"));
            }
        }
    }
    /// `k` ids written by [`W::ids`].
    fn ids(&mut self, k: usize) -> Res<Vec<u32>> {
        let width = self.u8()? as usize;
        let b = match width {
            2 | 4 => self.take(k.checked_mul(width).ok_or(Corrupt::Part("ids"))?)?,
            _ => return Err(Corrupt::Part("ids")),
        };
        Ok(if width == 2 {
            b.chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
                .collect()
        } else {
            b.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
    }
    /// A varint count, bounded by the bytes left (each item takes at least one).
    fn vlen(&mut self) -> Res<usize> {
        let n = self.v()? as usize;
        if n > self.b.len() - self.i {
            return Err(Corrupt::Part("bad length"));
        }
        Ok(n)
    }
    fn str(&mut self) -> Res<String> {
        // Checked in place: one copy, not a `Vec` and then a `String` (paths are most of a load).
        let b = self.take_len()?;
        Ok(match std::str::from_utf8(b) {
            Ok(s) => s.to_owned(),
            Err(_) => String::from_utf8_lossy(b).into_owned(),
        })
    }
    fn path(&mut self) -> Res<PathBuf> {
        Ok(PathBuf::from(self.str()?))
    }
    fn len(&mut self) -> Res<usize> {
        let n = self.u32()? as usize;
        if n > self.b.len() {
            return Err(Corrupt::Part("bad length"));
        }
        Ok(n)
    }
    fn toks(&mut self) -> Res<Vec<Tok>> {
        let n = self.len()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            let k = self.u8()?;
            let sym = self.v()?;
            let kind = match k & 0x7f {
                0 => TK::Ident,
                1 => TK::Num,
                2 => TK::Str,
                3 => TK::Chr,
                4 => TK::Punct,
                5 => TK::Other,
                _ => return Err(Corrupt::Part("token")),
            };
            v.push(Tok {
                kind,
                ws: k & 0x80 != 0,
                sym,
            });
        }
        Ok(v)
    }
    /// A file's extracted data; its directives stay encoded (see [`Directives`]), as the range
    /// of `buf`, the whole cache file, this reader's bytes start at `off` in.
    fn lexed(&mut self, buf: &Arc<CacheBytes>, off: usize) -> Res<Lexed> {
        let lines = self.u32()?;
        let n = self.u32()? as usize;
        let start = off + self.i;
        self.take(n)?;
        let directives =
            Directives::lazy(buf.clone(), start, start + n, |b| decode_directives(b).ok());
        let mut l = self.hh()?;
        l.lines = lines;
        l.directives = directives;
        Ok(l)
    }
    fn directives(&mut self) -> Res<Vec<Directive>> {
        let n = self.len()?;
        let mut directives = Vec::with_capacity(n);
        for _ in 0..n {
            let line = self.v()?;
            let kind = match self.u8()? {
                0 => {
                    let f = self.u8()?;
                    let spec = match self.u8()? {
                        0 => IncSpec::Quoted(self.u32()?),
                        1 => IncSpec::Angle(self.u32()?),
                        _ => IncSpec::Macro(self.toks()?),
                    };
                    DKind::Include {
                        next: f & 1 != 0,
                        import: f & 2 != 0,
                        spec,
                    }
                }
                1 => DKind::If(self.toks()?),
                2 => DKind::Ifdef(self.u32()?),
                3 => DKind::Ifndef(self.u32()?),
                4 => DKind::Elif(self.toks()?),
                5 => DKind::Elifdef(self.u32()?),
                6 => DKind::Elifndef(self.u32()?),
                7 => DKind::Else,
                8 => DKind::Endif,
                9 => {
                    let name = self.u32()?;
                    let np = self.u32()?;
                    let params = if np == u32::MAX {
                        None
                    } else {
                        let mut p = Vec::with_capacity(np as usize);
                        for _ in 0..np {
                            p.push(self.u32()?);
                        }
                        Some(p)
                    };
                    let variadic = self.u8()? != 0;
                    let body = self.toks()?;
                    DKind::Define(Arc::new(MacroDef::new(name, params, variadic, body)))
                }
                10 => DKind::Undef(self.u32()?),
                11 => DKind::PragmaOnce,
                12 => DKind::PushMacro(self.u32()?),
                13 => DKind::PopMacro(self.u32()?),
                14 => DKind::Error(self.str()?),
                15 => DKind::Bad(self.str()?),
                _ => return Err(Corrupt::Part("directive")),
            };
            directives.push(Directive { line, kind });
        }
        Ok(directives)
    }
    /// The rest of a file's extracted data (Header Hero's view, errors, guard).
    fn hh(&mut self) -> Res<Lexed> {
        let n = self.len()?;
        let mut hh_includes = Vec::with_capacity(n);
        for _ in 0..n {
            let line = self.u32()?;
            let quoted = self.u8()? != 0;
            let name = self.str()?;
            hh_includes.push(HhInclude { line, quoted, name });
        }
        let n = self.len()?;
        let mut hh_errors = Vec::with_capacity(n);
        for _ in 0..n {
            hh_errors.push(self.u32()?);
        }
        let n = self.len()?;
        let mut errors = Vec::with_capacity(n);
        for _ in 0..n {
            let l = self.u32()?;
            errors.push((l, self.str()?));
        }
        let g = self.u32()?;
        let pragma_once = self.u8()? != 0;
        Ok(Lexed {
            hh_includes,
            hh_errors,
            errors,
            guard: (g != u32::MAX).then_some(g),
            pragma_once,
            ..Default::default()
        })
    }
}

/// Decodes existence answers kept encoded by a cache load.
pub fn decode_answers(b: &[u8]) -> Res<Vec<(PathBuf, bool)>> {
    let mut r = R { b, i: 0 };
    let n = r.len()?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let d = r.path()?;
        v.push((d, r.u8()? != 0));
    }
    Ok(v)
}

/// Decodes a file's directives kept encoded by a cache load.
pub fn decode_directives(b: &[u8]) -> Res<Vec<Directive>> {
    R { b, i: 0 }.directives()
}

/// Writes a scan's saved state (`prev`, whose symbols `interner` spells).
pub fn save(path: &Path, prev: &Prev, interner: &Interner) -> Result<(), CacheError> {
    // The four sections are encoded on both cores; all but the last come with their byte
    // lengths, so a load decodes the four on separate threads too.
    let ((sw, fw), (tw, rw)) = rayon::join(
        || rayon::join(|| encode_strings(interner), || encode_files(prev)),
        || rayon::join(|| encode_tus(prev), || encode_rest(prev)),
    );
    // Written in parts, not joined into one more buffer of the whole size.
    let len = |b: &Vec<u8>| (b.len() as u64).to_le_bytes();
    let (sl, fl, tl) = (len(&sw), len(&fw), len(&tw));
    let mut parts: Vec<&[u8]> = vec![MAGIC, &sl, &sw, &fl, &fw, &tl, &tw, &rw];
    // A checksum of everything: directives are decoded lazily, long after the load, when a
    // corrupt file could no longer just be discarded.
    let mut crc = crc32fast::Hasher::new();
    for p in &parts {
        crc.update(p);
    }
    let crc = crc.finalize().to_le_bytes();
    parts.push(&crc);
    // Temporary file then rename: never half a cache, and the CLI and the app saving the same
    // cache at once do not share a temporary name. No flush to disk: a damaged cache fails its
    // checksum and is rebuilt.
    clipforge_base::fsio::replace_file_parts(path, &parts, false).map_err(|source| {
        CacheError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// The string table: every symbol's spelling, in id order.
fn encode_strings(interner: &Interner) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(1 << 20));
    let strs = interner.snapshot();
    w.u32(strs.len() as u32);
    for x in &strs {
        w.bytes(x);
    }
    w.0
}

/// The file table: per file its path and, when it was read, size, time, hash, error and lexed
/// directives.
fn encode_files(p: &Prev) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(4 << 20));
    w.u32(p.paths.len() as u32);
    for (path, f) in p.paths.iter().zip(&p.files) {
        w.path(path);
        match f {
            None => w.u8(0),
            Some(f) => {
                w.u8(1);
                w.u64(f.size);
                w.u64(f.mtime as u64);
                w.u32(f.hash);
                match &f.error {
                    None => w.u8(0),
                    Some(e) => {
                        w.u8(1);
                        w.str(e)
                    }
                }
                w.lexed(&f.lex);
            }
        }
    }
    w.0
}

/// The TU results: the distinct include edges once, then per TU its closure, edges (indices
/// into that table), missing includes and errors.
fn encode_tus(p: &Prev) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(4 << 20));
    let mut tus: Vec<(&(u32, u64), &TuResult)> = p.tus.iter().collect();
    tus.sort_by_key(|t| *t.0);
    // TUs share most include edges: one table of distinct edges, per TU indices into it.
    w.v(p.edge_tab.len() as u32);
    for &(a, l, b) in &p.edge_tab {
        w.v(a);
        w.v(l);
        w.v(b);
    }
    w.v(tus.len() as u32);
    for ((id, key), r) in tus {
        w.v(*id);
        w.u64(*key);
        w.v(r.closure.len() as u32);
        w.ids(&r.closure);
        w.v(r.edges.len() as u32);
        w.ids(&r.edges);
        w.u32(r.missing.len() as u32);
        for (a, l, n, ang) in &r.missing {
            w.u32(*a);
            w.u32(*l);
            w.str(n);
            w.u8(*ang as u8);
        }
        w.u32(r.errors.len() as u32);
        for (a, l, m) in &r.errors {
            w.u32(*a);
            w.u32(*l);
            w.str(m);
        }
    }
    w.0
}

/// The rest: directory stamps, existence answers, compiler answers, the walk and the
/// all-branches graph.
fn encode_rest(p: &Prev) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(1 << 20));
    w.u32(p.dir_stamps.len() as u32);
    for (d, m) in &p.dir_stamps {
        w.path(d);
        match m {
            None => w.u8(0),
            Some(t) => {
                w.u8(1);
                w.u64(*t as u64)
            }
        }
    }
    if let Some(raw) = p.exists.encoded() {
        w.0.extend_from_slice(raw);
    } else {
        w.u32(p.exists.len() as u32);
        for (d, b) in p.exists.iter() {
            w.path(d);
            w.u8(*b as u8);
        }
    }
    w.compilers(&p.compilers);
    w.walk(&p.walk);
    w.hh_cached(&p.hh);
    w.0
}

impl W {
    fn compilers(&mut self, compilers: &FxMap<String, CompilerEnv>) {
        let w = self;
        let mut comps: Vec<(&String, &CompilerEnv)> = compilers.iter().collect();
        comps.sort_by_key(|c| c.0);
        w.u32(comps.len() as u32);
        for (k, e) in comps {
            w.str(k);
            w.str(&e.predefined);
            w.u32(e.quote_dirs.len() as u32);
            for d in &e.quote_dirs {
                w.path(d);
            }
            w.u32(e.system_dirs.len() as u32);
            for d in &e.system_dirs {
                w.path(d);
            }
            w.u32(e.preincludes.len() as u32);
            for d in &e.preincludes {
                w.path(d);
            }
            w.str(&e.origin);
        }
    }

    fn walk(&mut self, walk: &Option<WalkCache>) {
        let w = self;
        match walk {
            None => w.u8(0),
            Some(k) => {
                w.u8(1);
                for list in [&k.roots, &k.files, &k.links] {
                    w.u32(list.len() as u32);
                    for d in list {
                        w.path(d);
                    }
                }
                w.u32(k.dirs.len() as u32);
                for (d, m) in &k.dirs {
                    w.path(d);
                    w.u64(*m as u64);
                }
            }
        }
    }

    fn hh_cached(&mut self, hh: &Option<HhCached>) {
        let w = self;
        match hh {
            None => w.u8(0),
            Some(h) => {
                w.u8(1);
                w.u32(h.tus.len() as u32);
                for &t in &h.tus {
                    w.v(t);
                }
                w.u32(h.dirs.len() as u32);
                for d in &h.dirs {
                    w.path(d);
                }
                // In the walk's order, which the report keeps.
                let keys: Vec<&u32> = h
                    .graph
                    .order
                    .iter()
                    .filter(|f| h.graph.edges.contains_key(f))
                    .collect();
                w.u32(keys.len() as u32);
                for f in keys {
                    let e = &h.graph.edges[f];
                    w.v(*f);
                    w.u32(e.len() as u32);
                    for &(l, t) in e {
                        w.v(l);
                        w.v(t);
                    }
                }
                w.u32(h.graph.missing.len() as u32);
                for (f, l, n, a) in &h.graph.missing {
                    w.v(*f);
                    w.v(*l);
                    w.str(n);
                    w.u8(*a as u8);
                }
                w.u32(h.graph.errors.len() as u32);
                for (f, l, m) in &h.graph.errors {
                    w.v(*f);
                    w.v(*l);
                    w.str(m);
                }
            }
        }
    }
}

/// Opens the cache file and takes its bytes. Mapped, they are the page cache's own pages: no
/// copy, and no fresh memory for the kernel to zero first, which was half of loading gRPC's
/// 8.6 MB cache in a rescan where nothing changed.
fn cache_bytes(path: &Path, map: bool) -> std::io::Result<CacheBytes> {
    // `--cache FILE` may name anything: a FIFO must not block the scan.
    let mut f = clipforge_base::fsio::open_regular(path)?;
    let len = f.metadata()?.len();
    if map && len >= 12 {
        // SAFETY: the mapping is only valid while nobody truncates or rewrites the file in
        // place. This program never does: it replaces the file through a rename
        // (`fsio::replace_file`), which leaves the mapped inode as it was. Only the one-shot CLI
        // maps it (a long-lived GUI reads it), so another program truncating the file would have
        // to do it within that one scan.
        if let Ok(m) = unsafe { memmap2::Mmap::map(&f) } {
            return Ok(CacheBytes::Mapped(m));
        }
    }
    let mut v = Vec::with_capacity(len as usize);
    std::io::Read::read_to_end(&mut f, &mut v)?;
    Ok(CacheBytes::Read(v))
}

/// Reads a saved state: the interner that spells its symbols and the state (`None` when there
/// is no such file). `map`: map the file instead of reading it (see [`cache_bytes`]).
pub fn load(path: &Path, map: bool) -> Result<Option<(Interner, Prev)>, CacheError> {
    let whole: Arc<CacheBytes> = match cache_bytes(path, map) {
        Ok(b) => Arc::new(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(CacheError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if whole.len() < 12 || &whole[..8] != MAGIC.as_slice() {
        return Err(CacheError::Version(path.to_path_buf()));
    }
    let (b, crc) = whole.split_at(whole.len() - 4);
    if crc32fast::hash(b).to_le_bytes() != crc {
        return Err(CacheError::Corrupt {
            path: path.to_path_buf(),
            corrupt: Corrupt::Part("checksum"),
        });
    }
    let mut r = R { b, i: 8 };
    let (interner, prev) = decode(&mut r, &whole).map_err(|corrupt| CacheError::Corrupt {
        path: path.to_path_buf(),
        corrupt,
    })?;
    Ok(Some((interner, prev)))
}

/// The four sections, decoded on both cores, put together into one state.
fn decode(r: &mut R, whole: &Arc<CacheBytes>) -> Res<(Interner, Prev)> {
    let mut sr = r.section()?;
    let files_off = r.i + 8;
    let mut fr = r.section()?;
    let mut tr = r.section()?;
    // Four sections, decoded on both cores.
    let ((interner, prev), (tus, more)) = rayon::join(
        || {
            rayon::join(
                || decode_strings(&mut sr),
                || decode_files(&mut fr, whole, files_off),
            )
        },
        || {
            rayon::join(
                || decode_tus(&mut tr),
                || {
                    let mut more = Prev::default();
                    decode_rest(r, &mut more, whole).map(|_| more)
                },
            )
        },
    );
    let (interner, mut prev, (edge_tab, tus), more) = (interner?, prev?, tus?, more?);
    prev.tus = tus;
    prev.edge_tab = edge_tab;
    prev.dir_stamps = more.dir_stamps;
    prev.exists = more.exists;
    prev.compilers = more.compilers;
    prev.walk = more.walk;
    prev.hh = more.hh;
    check_hh_ids(&prev)?;
    Ok((interner, prev))
}

/// Ids the all-branches graph names must exist in the cache's file table.
fn check_hh_ids(prev: &Prev) -> Res<()> {
    let n = prev.paths.len() as u32;
    if let Some(h) = &prev.hh
        && (h.tus.iter().any(|&t| t >= n)
            || h.graph
                .edges
                .iter()
                .any(|(&f, e)| f >= n || e.iter().any(|&(_, t)| t >= n))
            || h.graph.missing.iter().any(|m| m.0 >= n)
            || h.graph.errors.iter().any(|m| m.0 >= n))
    {
        return Err(Corrupt::Part("all-branches graph"));
    }
    Ok(())
}

fn decode_strings(r: &mut R) -> Res<Interner> {
    let n = r.len()?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(r.take_len()?.into());
    }
    Interner::from_strings(v).ok_or(Corrupt::Part("string table"))
}

fn decode_files(r: &mut R, buf: &Arc<CacheBytes>, off: usize) -> Res<Prev> {
    let mut prev = Prev::default();
    let n = r.len()?;
    for _ in 0..n {
        prev.paths.push(r.path()?);
        if r.u8()? == 0 {
            prev.files.push(None);
            continue;
        }
        let size = r.u64()?;
        let mtime = r.u64()? as i64;
        let hash = r.u32()?;
        let error = if r.u8()? != 0 { Some(r.str()?) } else { None };
        let lex = r.lexed(buf, off)?;
        prev.files.push(Some(Arc::new(FileData {
            size,
            mtime,
            hash,
            lex: Arc::new(lex),
            error,
        })));
    }
    Ok(prev)
}

type EdgeTab = Vec<(u32, u32, u32)>;
type TuTable = FxMap<(u32, u64), TuResult>;

fn decode_tus(r: &mut R) -> Res<(EdgeTab, TuTable)> {
    let n = r.vlen()?;
    let mut edge_tab = Vec::with_capacity(n);
    for _ in 0..n {
        edge_tab.push((r.v()?, r.v()?, r.v()?));
    }
    let n = r.vlen()?;
    let mut tus = FxMap::default();
    tus.reserve(n);
    for _ in 0..n {
        let id = r.v()?;
        let key = r.u64()?;
        let mut t = TuResult {
            tu: id,
            ..Default::default()
        };
        let k = r.vlen()?;
        t.closure = r.ids(k)?;
        let k = r.vlen()?;
        let edges = r.ids(k)?;
        if edges.iter().any(|&i| i as usize >= edge_tab.len()) {
            return Err(Corrupt::Part("edge"));
        }
        t.edges = edges.into();
        let k = r.len()?;
        for _ in 0..k {
            let a = r.u32()?;
            let l = r.u32()?;
            let nm = r.str()?;
            let ang = r.u8()? != 0;
            t.missing.push((a, l, nm, ang));
        }
        let k = r.len()?;
        for _ in 0..k {
            let a = r.u32()?;
            let l = r.u32()?;
            t.errors.push((a, l, r.str()?));
        }
        tus.insert((id, key), t);
    }
    Ok((edge_tab, tus))
}

fn decode_rest(r: &mut R, prev: &mut Prev, buf: &Arc<CacheBytes>) -> Res<()> {
    let n = r.len()?;
    for _ in 0..n {
        let d = r.path()?;
        let m = if r.u8()? != 0 {
            Some(r.u64()? as i64)
        } else {
            None
        };
        prev.dir_stamps.push((d, m));
    }
    // Only stepped over here (see `store::Answers`).
    let start = r.i;
    let n = r.len()?;
    for _ in 0..n {
        r.take_len()?;
        r.u8()?;
    }
    prev.exists = Answers::lazy(buf.clone(), start, r.i, |b| decode_answers(b).ok());
    prev.compilers = r.compilers()?;
    prev.walk = r.walk()?;
    prev.hh = r.hh_cached()?;
    Ok(())
}

impl R<'_> {
    fn compilers(&mut self) -> Res<FxMap<String, CompilerEnv>> {
        let r = self;
        let mut compilers = FxMap::default();
        let n = r.len()?;
        for _ in 0..n {
            let k = r.str()?;
            let predefined = r.str()?;
            let mut quote_dirs = Vec::new();
            for _ in 0..r.len()? {
                quote_dirs.push(r.path()?);
            }
            let mut system_dirs = Vec::new();
            for _ in 0..r.len()? {
                system_dirs.push(r.path()?);
            }
            let mut preincludes = Vec::new();
            for _ in 0..r.len()? {
                preincludes.push(r.path()?);
            }
            let origin = r.str()?;
            compilers.insert(
                k,
                CompilerEnv {
                    predefined,
                    quote_dirs,
                    system_dirs,
                    preincludes,
                    origin,
                },
            );
        }
        Ok(compilers)
    }

    fn walk(&mut self) -> Res<Option<WalkCache>> {
        let r = self;
        if r.u8()? != 0 {
            let mut k = WalkCache::default();
            for list in [&mut k.roots, &mut k.files, &mut k.links] {
                for _ in 0..r.len()? {
                    list.push(r.path()?);
                }
            }
            for _ in 0..r.len()? {
                let d = r.path()?;
                k.dirs.push((d, r.u64()? as i64));
            }
            return Ok(Some(k));
        }
        Ok(None)
    }

    fn hh_cached(&mut self) -> Res<Option<HhCached>> {
        let r = self;
        if r.u8()? != 0 {
            let mut h = HhCached::default();
            for _ in 0..r.len()? {
                h.tus.push(r.v()?);
            }
            for _ in 0..r.len()? {
                h.dirs.push(r.path()?);
            }
            for _ in 0..r.len()? {
                let f = r.v()?;
                let n = r.len()?;
                let mut e = Vec::with_capacity(n);
                for _ in 0..n {
                    e.push((r.v()?, r.v()?));
                }
                h.graph.order.push(f);
                h.graph.edges.insert(f, e);
            }
            for _ in 0..r.len()? {
                let (f, l, n) = (r.v()?, r.v()?, r.str()?);
                h.graph.missing.push((f, l, n, r.u8()? != 0));
            }
            for _ in 0..r.len()? {
                let (f, l) = (r.v()?, r.v()?);
                h.graph.errors.push((f, l, r.str()?));
            }
            return Ok(Some(h));
        }
        Ok(None)
    }
}
