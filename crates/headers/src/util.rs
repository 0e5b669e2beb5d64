//! Small shared helpers for the header profiler: a fast hasher for integer keys, the string
//! interner every directive token goes through, lexical path normalisation (as `os.path.normpath`
//! and compilers do: no symlink resolution) and line counting with .NET `ReadAllLines` rules.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, RwLock};

/// FxHash (rustc's hasher): keys here are small integers and short strings, where SipHash's
/// DoS resistance buys nothing and costs a lot in the per-TU macro tables.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.hash = (self.hash.rotate_left(5) ^ w).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf) ^ (rest.len() as u64) << 56);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64)
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64)
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64)
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i)
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64)
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;
pub(crate) type FxMap<K, V> = HashMap<K, V, FxBuild>;
pub(crate) type FxSet<K> = HashSet<K, FxBuild>;

/// A normalised path as a map key compared and hashed by its bytes: `Path`'s own `Hash` and
/// `Ord` walk components, which on the timing work's ~50,000 trace paths cost more than the
/// rest of it. Only for paths from [`normalize`], whose bytes are equal exactly when the paths
/// are. Borrows as `[u8]`, so a map of them is looked up with a path's bytes.
#[derive(Clone, Debug)]
pub(crate) struct PathKey(pub PathBuf);

impl PartialEq for PathKey {
    fn eq(&self, o: &PathKey) -> bool {
        self.bytes() == o.bytes()
    }
}

impl Eq for PathKey {}

impl PathKey {
    pub(crate) fn bytes(&self) -> &[u8] {
        self.0.as_os_str().as_encoded_bytes()
    }
}

impl std::hash::Hash for PathKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.bytes().hash(h)
    }
}

impl std::borrow::Borrow<[u8]> for PathKey {
    fn borrow(&self) -> &[u8] {
        self.bytes()
    }
}

pub(crate) fn fx_hash<T: std::hash::Hash + ?Sized>(t: &T) -> u64 {
    let mut h = FxHasher::default();
    t.hash(&mut h);
    h.finish()
}

/// Interned string id. Ids are dense and stable for the life of an [`Interner`]; the cache stores
/// the table in id order so a fresh process gets the same ids back.
pub(crate) type Sym = u32;

/// Thread-safe string interner. The lexer batches a whole file's strings under one lock, so
/// contention stays low while files are lexed in parallel.
#[derive(Default)]
pub struct Interner {
    map: RwLock<FxMap<Box<[u8]>, Sym>>,
    strs: RwLock<Vec<Box<[u8]>>>,
    // Serialises inserts so `map` and `strs` stay in step.
    insert_lock: Mutex<()>,
}

impl Interner {
    pub fn new() -> Self {
        let i = Self::default();
        // Id 0 is the empty string, so `Sym::default()` is always valid.
        i.intern(b"");
        i
    }

    pub(crate) fn intern(&self, s: &[u8]) -> Sym {
        if let Some(&id) = self.map.read().unwrap().get(s) {
            return id;
        }
        let _g = self.insert_lock.lock().unwrap();
        if let Some(&id) = self.map.read().unwrap().get(s) {
            return id;
        }
        let mut strs = self.strs.write().unwrap();
        let id = strs.len() as Sym;
        strs.push(s.into());
        self.map.write().unwrap().insert(s.into(), id);
        id
    }

    /// An interner holding exactly `strs`, in id order (`strs[0]` must be the empty string, no
    /// duplicates): a cache load gets its ids back without a lock round per string.
    pub(crate) fn from_strings(strs: Vec<Box<[u8]>>) -> Option<Self> {
        if strs.first().is_none_or(|s| !s.is_empty()) {
            return None;
        }
        let mut map: FxMap<Box<[u8]>, Sym> = FxMap::default();
        map.reserve(strs.len());
        for (i, s) in strs.iter().enumerate() {
            if map.insert(s.clone(), i as Sym).is_some() {
                return None;
            }
        }
        Some(Interner {
            map: RwLock::new(map),
            strs: RwLock::new(strs),
            insert_lock: Mutex::new(()),
        })
    }

    /// Interns many strings with one lock round; returns their ids in order.
    pub(crate) fn intern_many(&self, items: &[&[u8]]) -> Vec<Sym> {
        let mut out = Vec::with_capacity(items.len());
        let mut missing = Vec::new();
        {
            let map = self.map.read().unwrap();
            for (i, s) in items.iter().enumerate() {
                match map.get(*s) {
                    Some(&id) => out.push(id),
                    None => {
                        out.push(u32::MAX);
                        missing.push(i);
                    }
                }
            }
        }
        if !missing.is_empty() {
            let _g = self.insert_lock.lock().unwrap();
            let mut map = self.map.write().unwrap();
            let mut strs = self.strs.write().unwrap();
            for i in missing {
                let s = items[i];
                let id = *map.entry(s.into()).or_insert_with(|| {
                    strs.push(s.into());
                    (strs.len() - 1) as Sym
                });
                out[i] = id;
            }
        }
        out
    }

    pub fn get(&self, s: &[u8]) -> Option<Sym> {
        self.map.read().unwrap().get(s).copied()
    }

    pub fn bytes(&self, id: Sym) -> Vec<u8> {
        self.strs.read().unwrap()[id as usize].to_vec()
    }

    pub fn string(&self, id: Sym) -> String {
        String::from_utf8_lossy(&self.strs.read().unwrap()[id as usize]).into_owned()
    }

    pub fn with<R>(&self, id: Sym, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&self.strs.read().unwrap()[id as usize])
    }

    pub fn len(&self) -> usize {
        self.strs.read().unwrap().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// All strings in id order (for the cache).
    pub fn snapshot(&self) -> Vec<Box<[u8]>> {
        self.strs.read().unwrap().clone()
    }
}

/// Whether [`normalize`] returns this path (as bytes) unchanged: not empty, and no `.`, `..` or
/// empty segment (a leading `/` aside).
pub(crate) fn is_normal(bytes: &[u8]) -> bool {
    bytes == b"/"
        || (!bytes.is_empty()
            && bytes
                .split(|&b| b == b'/')
                .enumerate()
                .all(|(i, seg)| match seg {
                    b"" => i == 0,
                    b"." | b".." => false,
                    _ => true,
                }))
}

/// Lexical normalisation, like Python's `os.path.normpath` and like the paths `g++ -M` reports
/// once normalised: `.` dropped, `a/..` collapsed, symlinks untouched.
pub fn normalize(p: &Path) -> PathBuf {
    // Most paths are already normal (no `.`, `..` or empty segment): copy them as they are
    // instead of splitting into components and joining again (a rescan normalises ~100k paths).
    if is_normal(p.as_os_str().as_encoded_bytes()) {
        return p.to_path_buf();
    }
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            other => out.push(other),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

/// `p` relative to `dir` when `p` is `dir` or under it (`Some("")` for `dir` itself), for
/// normalised absolute paths: then comparing bytes is comparing components, without
/// `Path::strip_prefix`'s component walk (reports ask this for every file and root).
pub(crate) fn relative_to<'a>(p: &'a Path, dir: &Path) -> Option<&'a [u8]> {
    let (p, d) = (
        p.as_os_str().as_encoded_bytes(),
        dir.as_os_str().as_encoded_bytes(),
    );
    let d = if d.len() > 1 {
        d.strip_suffix(b"/").unwrap_or(d)
    } else {
        d
    };
    let rest = p.strip_prefix(d)?;
    if rest.is_empty() || d == b"/" {
        Some(rest)
    } else {
        rest.strip_prefix(b"/")
    }
}

/// Absolute, normalised form of a user-given path (relative to the current directory, as for a compiler).
pub(crate) fn absolutize(p: &Path) -> PathBuf {
    if p.is_absolute() {
        normalize(p)
    } else {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        normalize(&cwd.join(p))
    }
}

/// Number of lines as .NET `File.ReadAllLines` / Python `bytes.splitlines()` count them:
/// split on `\n`, `\r\n` and `\r`; a trailing newline adds no line; an empty file has 0.
pub fn count_lines(b: &[u8]) -> u32 {
    if b.is_empty() {
        return 0;
    }
    let len = b.len();
    let last = b[len - 1];
    // Without `\r` (nearly every file) the count is the number of `\n`s, which memchr counts
    // many bytes at a time.
    if memchr::memchr(b'\r', b).is_none() {
        return memchr::memchr_iter(b'\n', b).count() as u32 + (last != b'\n') as u32;
    }
    let mut n = 0u32;
    let mut i = 0;
    while i < len {
        match b[i] {
            b'\n' => n += 1,
            b'\r' => {
                n += 1;
                if i + 1 < len && b[i + 1] == b'\n' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if last != b'\n' && last != b'\r' {
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_fast_path_agrees_with_components() {
        for (p, want) in [
            ("/a/b/c.h", "/a/b/c.h"),
            ("a/b", "a/b"),
            ("/a/./b", "/a/b"),
            ("/a/../b", "/b"),
            ("a/b/", "a/b"),
            ("/a//b", "/a/b"),
            ("./a", "a"),
            ("../a", "../a"),
            ("/", "/"),
            ("", "."),
            (".", "."),
            ("/..", "/"),
            ("a/..", "."),
        ] {
            assert_eq!(normalize(Path::new(p)), PathBuf::from(want), "{p:?}");
        }
    }

    #[test]
    fn relative_to_agrees_with_strip_prefix() {
        let paths = [
            "/",
            "/a",
            "/a/b",
            "/a/b/c.h",
            "/ab/c.h",
            "/a/bc/d.h",
            "/a/b/",
        ];
        for p in paths {
            for d in paths {
                let (p, d) = (Path::new(p), Path::new(d));
                let want = p
                    .strip_prefix(d)
                    .ok()
                    .map(|r| r.as_os_str().to_string_lossy().into_owned());
                let got = relative_to(p, d).map(|r| String::from_utf8_lossy(r).into_owned());
                // Trailing slashes aside (normalised paths have none), the same answer.
                let got = got.map(|g| g.trim_end_matches('/').to_string());
                assert_eq!(got, want, "{p:?} under {d:?}");
            }
        }
    }

    #[test]
    fn lines_like_splitlines() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\r\nb\r\n"), 2);
        assert_eq!(count_lines(b"a\rb"), 2);
        assert_eq!(count_lines(b"\n\n"), 2);
        assert_eq!(count_lines(b"a\n\rb"), 3);
    }

    #[test]
    fn normpath() {
        assert_eq!(
            normalize(Path::new("/a/b/../c/./d")),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(normalize(Path::new("/../a")), PathBuf::from("/a"));
        assert_eq!(normalize(Path::new("../a")), PathBuf::from("../a"));
    }

    #[test]
    fn interner_roundtrip() {
        let i = Interner::new();
        let a = i.intern(b"foo");
        let ids = i.intern_many(&[b"bar", b"foo", b"bar"]);
        assert_eq!(ids[1], a);
        assert_eq!(ids[0], ids[2]);
        assert_eq!(i.string(ids[0]), "bar");
    }
}
