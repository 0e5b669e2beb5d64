//! The file store and include resolution. Files get a dense [`FileId`] on first sight and are
//! read + lexed lazily, at most once per scan, from any thread (a `OnceLock` per slot). A file
//! whose size and modification time match the previous scan (in memory or from the cache) is not
//! read at all; one whose content hash matches keeps its extracted directives.
//!
//! Resolution follows GCC (libcpp `search_path_head` / `find_file`): `"x"` tries the includer's
//! own directory, then the quote chain (`-iquote`), then the bracket chain (`-I`, `-isystem`,
//! system dirs); `<x>` starts at the bracket chain; `#include_next` continues after the directory
//! the current file was found in. Existence checks and lookups are memoised.

use super::lazy::{CacheBytes, Decode, Lazy};
use super::lex::{self, Lexed};
use super::util::{FxMap, Interner, Sym, fx_hash, normalize};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::UNIX_EPOCH;

pub type FileId = u32;

/// Existence answers (path, is a regular file), shared between a scan and the next. Loaded from
/// the cache they stay encoded until first used: a rescan in which nothing changed never reads
/// them (decoding gRPC's 26,000 took a third of loading its cache).
#[derive(Clone, Default)]
pub struct Answers(Arc<Lazy<Vec<(PathBuf, bool)>>>);

impl Answers {
    pub fn new(v: Vec<(PathBuf, bool)>) -> Self {
        Answers(Arc::new(Lazy::new(v)))
    }

    /// Answers encoded in `buf[start..end]`, as `cache::save` wrote them.
    pub fn lazy(
        buf: Arc<CacheBytes>,
        start: usize,
        end: usize,
        decode: Decode<Vec<(PathBuf, bool)>>,
    ) -> Self {
        Answers(Arc::new(Lazy::encoded_in(buf, start, end, decode)))
    }

    /// The encoded form, while it has not been decoded (a cache save copies it as is).
    pub fn encoded(&self) -> Option<&[u8]> {
        self.0.encoded()
    }
}

impl std::ops::Deref for Answers {
    type Target = [(PathBuf, bool)];
    fn deref(&self) -> &[(PathBuf, bool)] {
        self.0.get()
    }
}

/// What we know about one file's content.
#[derive(Debug, Clone)]
pub struct FileData {
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime: i64,
    pub hash: u32,
    pub lex: Arc<Lexed>,
    /// Unreadable file, symlink loop, directory...: the message (the file then has no content).
    pub error: Option<String>,
}

pub struct Slot {
    pub path: PathBuf,
    pub dir: u32,
    pub data: OnceLock<Arc<FileData>>,
}

/// An ordered include search path: `dirs[..bracket_start]` is the quote-only chain (`-iquote`),
/// `dirs[bracket_start..]` the bracket chain.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SearchPath {
    pub dirs: Vec<PathBuf>,
    pub bracket_start: usize,
    /// `dirs[system_start..]` are system dirs (`-isystem`, the compiler's, `-idirafter`).
    pub system_start: usize,
}

const SHARDS: usize = 16;

type Shard<K, V> = RwLock<FxMap<K, V>>;

/// (search path id, start index, include name).
type ChainKey = (u32, u32, Sym);

fn shards<K, V>() -> Vec<Shard<K, V>> {
    (0..SHARDS).map(|_| RwLock::new(FxMap::default())).collect()
}

pub struct Store {
    pub interner: Arc<Interner>,
    // Path-keyed maps hash the path's bytes (`OsString`): `Path`'s own `Hash` walks components,
    // which was a tenth of a rescan. Paths here are normalised, so bytes equal means same path.
    index: Mutex<FxMap<OsString, FileId>>,
    slots: RwLock<Vec<Arc<Slot>>>,
    dirs: Mutex<(FxMap<OsString, u32>, Vec<PathBuf>)>,
    exists: Vec<Shard<OsString, bool>>,
    /// Answers of the previous scan not yet moved into `exists` (see [`Store::seed_exists`]).
    seed: Mutex<Option<Answers>>,
    listings: Vec<Shard<OsString, Option<Arc<Listing>>>>,
    realdirs: Vec<Shard<OsString, Option<PathBuf>>>,
    rel_cache: Vec<Shard<(u32, Sym), Option<FileId>>>,
    chain_cache: Vec<Shard<ChainKey, Option<(FileId, u32)>>>,
    search_paths: Mutex<Vec<SearchPath>>,
    /// Previous content by file id, reused when size + mtime (or the hash) match.
    pub prev: Vec<Option<Arc<FileData>>>,
    pub files_read: AtomicUsize,
    pub files_reused: AtomicUsize,
    pub files_stat: AtomicUsize,
}

/// A directory entry's type, as its listing reports it.
#[derive(Clone, Copy)]
enum Entry {
    File,
    Dir,
    /// Symlink or unknown: needs a `stat`.
    Other,
    Absent,
}

/// A directory's entries and its modification time when listed (`None`: it does not exist).
#[derive(Default)]
struct Listing {
    entries: FxMap<OsString, Entry>,
    mtime: Option<i64>,
}

/// Regular file (after following symlinks)? A symlink loop or an unreadable entry makes
/// `metadata` fail; then the name exists, and reporting it found turns the loop into an error
/// entry instead of a silent miss.
pub(crate) fn stat_is_file(p: &Path) -> bool {
    match std::fs::metadata(p) {
        Ok(m) => m.is_file(),
        Err(e) => {
            e.raw_os_error() == Some(40) /* ELOOP */ || e.kind() == std::io::ErrorKind::PermissionDenied
        }
    }
}

/// The whole content of a regular file (refused without blocking otherwise).
fn read_whole(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = clipforge_base::fsio::open_regular(path)?;
    let len = f.metadata().map_or(0, |m| m.len());
    let mut b = Vec::with_capacity(len as usize + 1);
    std::io::Read::read_to_end(&mut f, &mut b)?;
    Ok(b)
}

fn mtime_ns(m: &std::fs::Metadata) -> i64 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

impl Store {
    pub fn new(interner: Arc<Interner>) -> Self {
        Store {
            interner,
            index: Mutex::new(FxMap::default()),
            slots: RwLock::new(Vec::new()),
            dirs: Mutex::new((FxMap::default(), Vec::new())),
            exists: shards(),
            seed: Mutex::new(None),
            listings: shards(),
            realdirs: shards(),
            rel_cache: shards(),
            chain_cache: shards(),
            search_paths: Mutex::new(Vec::new()),
            prev: Vec::new(),
            files_read: AtomicUsize::new(0),
            files_reused: AtomicUsize::new(0),
            files_stat: AtomicUsize::new(0),
        }
    }

    pub fn len(&self) -> usize {
        self.slots.read().unwrap().len()
    }

    pub fn slot(&self, id: FileId) -> Arc<Slot> {
        self.slots.read().unwrap()[id as usize].clone()
    }

    pub fn path(&self, id: FileId) -> PathBuf {
        self.slots.read().unwrap()[id as usize].path.clone()
    }

    /// Id of a (normalised, absolute) path, creating the slot if needed.
    pub fn id_of(&self, path: &Path) -> FileId {
        let mut idx = self.index.lock().unwrap();
        if let Some(&id) = idx.get(path.as_os_str()) {
            return id;
        }
        let dir = self.dir_id(path.parent().unwrap_or(Path::new("/")));
        let mut slots = self.slots.write().unwrap();
        let id = slots.len() as FileId;
        slots.push(Arc::new(Slot {
            path: path.to_path_buf(),
            dir,
            data: OnceLock::new(),
        }));
        idx.insert(path.as_os_str().to_owned(), id);
        id
    }

    pub fn dir_id(&self, d: &Path) -> u32 {
        let mut g = self.dirs.lock().unwrap();
        if let Some(&i) = g.0.get(d.as_os_str()) {
            return i;
        }
        let i = g.1.len() as u32;
        g.1.push(d.to_path_buf());
        g.0.insert(d.as_os_str().to_owned(), i);
        i
    }

    fn dir_path(&self, i: u32) -> PathBuf {
        self.dirs.lock().unwrap().1[i as usize].clone()
    }

    pub fn search_path_id(&self, sp: &SearchPath) -> u32 {
        let mut g = self.search_paths.lock().unwrap();
        if let Some(i) = g.iter().position(|s| s == sp) {
            return i as u32;
        }
        g.push(sp.clone());
        (g.len() - 1) as u32
    }

    /// Regular file (after following symlinks)? Directories do not count, as in GCC.
    pub fn is_file(&self, p: &Path) -> bool {
        let sh = &self.exists[(fx_hash(p.as_os_str()) as usize) % SHARDS];
        if let Some(&b) = sh.read().unwrap().get(p.as_os_str()) {
            return b;
        }
        if self.apply_seed()
            && let Some(&b) = sh.read().unwrap().get(p.as_os_str())
        {
            return b;
        }
        self.files_stat.fetch_add(1, Ordering::Relaxed);
        // Answered from the directory's listing when it says "regular file", "directory" or
        // "absent"; symlinks and unknown types are stat'ed like before.
        // Only when the name really is the path's last component: `Path` drops a trailing `/`
        // or `/.`, and `x.h/` is no file (stat says so; the listing would say "x.h exists").
        let last_is_name = |name: &std::ffi::OsStr| {
            let (b, n) = (p.as_os_str().as_encoded_bytes(), name.as_encoded_bytes());
            b.len() > n.len() && b.ends_with(n) && b[b.len() - n.len() - 1] == b'/'
        };
        let listed = match (p.parent(), p.file_name()) {
            (Some(dir), Some(name)) if !dir.as_os_str().is_empty() && last_is_name(name) => self
                .listing(dir)
                .map(|l| l.entries.get(name).copied().unwrap_or(Entry::Absent)),
            _ => None,
        };
        let b = match listed {
            Some(Entry::File) => true,
            Some(Entry::Dir | Entry::Absent) => false,
            Some(Entry::Other) | None => stat_is_file(p),
        };
        sh.write().unwrap().insert(p.as_os_str().to_owned(), b);
        b
    }

    /// `realpath` of an existing file: its directory's realpath (once per directory) joined with
    /// its name, unless the listing says the file itself is a symlink (or cannot tell).
    fn realpath(&self, p: &Path) -> Option<PathBuf> {
        let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
            return std::fs::canonicalize(p).ok();
        };
        let plain = self
            .listing(dir)
            .is_some_and(|l| matches!(l.entries.get(name), Some(Entry::File)));
        if !plain {
            return std::fs::canonicalize(p).ok();
        }
        let sh = &self.realdirs[(fx_hash(dir.as_os_str()) as usize) % SHARDS];
        if let Some(r) = sh.read().unwrap().get(dir.as_os_str()) {
            return r.as_ref().map(|d| d.join(name));
        }
        let r = std::fs::canonicalize(dir).ok();
        sh.write()
            .unwrap()
            .insert(dir.as_os_str().to_owned(), r.clone());
        r.map(|d| d.join(name))
    }

    /// The directory's entries, listed once per scan (`None`: it cannot be listed). One listing
    /// answers every probe in that directory: with a dozen include dirs, most probes are misses
    /// in directories that do not even exist, and a failed `opendir` answers them all at once.
    fn listing(&self, dir: &Path) -> Option<Arc<Listing>> {
        let sh = &self.listings[(fx_hash(dir.as_os_str()) as usize) % SHARDS];
        if let Some(l) = sh.read().unwrap().get(dir.as_os_str()) {
            return l.clone();
        }
        // Absent from its parent's listing (or a file there): missing, without a syscall. Most
        // probed directories are `-I dir` + a subdirectory of some other include dir.
        if let (Some(parent), Some(name)) = (dir.parent(), dir.file_name())
            && !parent.as_os_str().is_empty()
            && let Some(pl) = self.listing(parent)
            && matches!(pl.entries.get(name), None | Some(Entry::File))
        {
            let l = Some(Arc::new(Listing::default()));
            sh.write()
                .unwrap()
                .insert(dir.as_os_str().to_owned(), l.clone());
            return l;
        }
        // The directory's time is taken before it is listed: a file added after this point
        // changes it, so the next rescan sees the change (the stamps come from here).
        let l = match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => std::fs::read_dir(dir).ok().map(|rd| {
                let mut entries = FxMap::default();
                for e in rd.flatten() {
                    let kind = match e.file_type() {
                        Ok(t) if t.is_file() => Entry::File,
                        Ok(t) if t.is_dir() => Entry::Dir,
                        _ => Entry::Other,
                    };
                    entries.insert(e.file_name(), kind);
                }
                Arc::new(Listing {
                    entries,
                    mtime: Some(mtime_ns(&m)),
                })
            }),
            // Missing, or not a directory: nothing below it exists.
            Ok(_) => Some(Arc::new(Listing::default())),
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(20) /* ENOTDIR */ =>
            {
                Some(Arc::new(Listing::default()))
            }
            Err(_) => None,
        };
        sh.write()
            .unwrap()
            .insert(dir.as_os_str().to_owned(), l.clone());
        l
    }

    /// Modification times (`None`: missing) of the directories listed so far.
    pub fn listed_dir_times(&self) -> FxMap<PathBuf, Option<i64>> {
        let mut m = FxMap::default();
        for sh in &self.listings {
            for (d, l) in sh.read().unwrap().iter() {
                if let Some(l) = l {
                    m.insert(PathBuf::from(d), l.mtime);
                }
            }
        }
        m
    }

    /// The file's data, reading and lexing it on first use.
    pub fn data(&self, id: FileId) -> Arc<FileData> {
        let slot = self.slot(id);
        slot.data
            .get_or_init(|| Arc::new(self.load(id, &slot.path)))
            .clone()
    }

    fn load(&self, id: FileId, path: &Path) -> FileData {
        let err = |msg: String| FileData {
            size: 0,
            mtime: 0,
            hash: 0,
            lex: Arc::new(Lexed::default()),
            error: Some(msg),
        };
        let stat_err = |e: std::io::Error| {
            err(if e.raw_os_error() == Some(40) {
                "symlink loop (too many levels of symbolic links)".to_string()
            } else {
                format!("cannot stat: {e}")
            })
        };
        let prev = self.prev.get(id as usize).and_then(|p| p.as_ref());
        // With a previous version, a `stat` decides whether to read at all; without one, the file
        // is opened first and its times come from the open file (one path lookup, not two).
        let (mtime, bytes) = if let Some(p) = prev {
            let meta = match std::fs::metadata(path) {
                Ok(m) => m,
                Err(e) => return stat_err(e),
            };
            let mtime = mtime_ns(&meta);
            if p.error.is_none() && p.size == meta.len() && p.mtime == mtime {
                self.files_reused.fetch_add(1, Ordering::Relaxed);
                return (**p).clone();
            }
            match read_whole(path) {
                Ok(b) => (mtime, b),
                Err(e) => return err(format!("cannot read: {e}")),
            }
        } else {
            // A regular file only, checked on the handle: a FIFO named like a TU or a header
            // would block a plain `open` (see `fsio::open_regular`).
            let mut f = match clipforge_base::fsio::open_regular(path) {
                Ok(f) => f,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::InvalidInput
                    ) =>
                {
                    return err(format!("cannot read: {e}"));
                }
                Err(e) => return stat_err(e),
            };
            let meta = match f.metadata() {
                Ok(m) => m,
                Err(e) => return stat_err(e),
            };
            let mut b = Vec::with_capacity(meta.len() as usize + 1);
            if let Err(e) = std::io::Read::read_to_end(&mut f, &mut b) {
                return err(format!("cannot read: {e}"));
            }
            (mtime_ns(&meta), b)
        };
        self.files_read.fetch_add(1, Ordering::Relaxed);
        if prev.is_some() && std::env::var_os("CLIPFORGE_HEADERS_TIMING").is_some() {
            eprintln!("[headers] re-read changed file {}", path.display());
        }
        let hash = crc32fast::hash(&bytes);
        if let Some(p) = prev
            && p.error.is_none()
            && p.hash == hash
            && p.size == bytes.len() as u64
        {
            return FileData {
                size: p.size,
                mtime,
                hash,
                lex: p.lex.clone(),
                error: None,
            };
        }
        let lex = lex::lex(&bytes, &self.interner);
        FileData {
            size: bytes.len() as u64,
            mtime,
            hash,
            lex: Arc::new(lex),
            error: None,
        }
    }

    /// `"name"` relative to the includer's directory.
    pub fn resolve_relative(&self, dir: u32, name: Sym) -> Option<FileId> {
        let key = (dir, name);
        let sh = &self.rel_cache[(fx_hash(&key) as usize) % SHARDS];
        if let Some(&r) = sh.read().unwrap().get(&key) {
            return r;
        }
        let n = self.interner.string(name);
        let joined = self.dir_path(dir).join(&n);
        let r = if self.is_file(&joined) {
            Some(self.id_of(&normalize(&joined)))
        } else {
            None
        };
        sh.write().unwrap().insert(key, r);
        r
    }

    /// Searches `sp.dirs[start..]` in order; returns the file and the index of its directory.
    pub fn resolve_chain(
        &self,
        sp_id: u32,
        sp: &SearchPath,
        start: usize,
        name: Sym,
    ) -> Option<(FileId, u32)> {
        let key = (sp_id, start as u32, name);
        let sh = &self.chain_cache[(fx_hash(&key) as usize) % SHARDS];
        if let Some(&r) = sh.read().unwrap().get(&key) {
            return r;
        }
        let n = self.interner.string(name);
        let mut r = None;
        if Path::new(&n).is_absolute() {
            let p = PathBuf::from(&n);
            if self.is_file(&p) {
                r = Some((self.id_of(&normalize(&p)), u32::MAX));
            }
        } else {
            for (i, d) in sp.dirs.iter().enumerate().skip(start) {
                let joined = d.join(&n);
                if self.is_file(&joined) {
                    let mut p = normalize(&joined);
                    // GCC's -fcanonical-system-headers (on by default): a system header's path is
                    // replaced by its realpath when that is shorter (`ncurses.h` -> `curses.h`).
                    if i >= sp.system_start
                        && let Some(c) = self.realpath(&joined)
                        && c.as_os_str().len() < joined.as_os_str().len()
                    {
                        p = c;
                    }
                    r = Some((self.id_of(&p), i as u32));
                    break;
                }
            }
        }
        sh.write().unwrap().insert(key, r);
        r
    }

    /// All slots (for the cache and reports).
    pub fn all_slots(&self) -> Vec<Arc<Slot>> {
        self.slots.read().unwrap().clone()
    }

    /// Known existence results (kept between scans while no probed directory changed).
    pub fn exists_snapshot(&self) -> Vec<(PathBuf, bool)> {
        self.apply_seed();
        let mut v = Vec::new();
        for sh in &self.exists {
            v.extend(
                sh.read()
                    .unwrap()
                    .iter()
                    .map(|(p, b)| (PathBuf::from(p), *b)),
            );
        }
        v
    }

    /// Earlier existence answers, still valid: applied on the first probe the map cannot answer
    /// (a rescan in which nothing changed probes nothing, and then never pays for them).
    pub fn seed_exists(&self, v: Answers) {
        *self.seed.lock().unwrap() = Some(v);
    }

    /// Moves the seeded answers into the map (false: there were none left to apply).
    fn apply_seed(&self) -> bool {
        let Some(v) = self.seed.lock().unwrap().take() else {
            return false;
        };
        // One lock per shard, not per answer.
        let mut by_shard: Vec<Vec<(&OsStr, bool)>> = vec![Vec::new(); SHARDS];
        for (p, b) in v.iter() {
            by_shard[fx_hash(p.as_os_str()) as usize % SHARDS].push((p.as_os_str(), *b));
        }
        for (sh, items) in self.exists.iter().zip(by_shard) {
            let mut g = sh.write().unwrap();
            g.reserve(items.len());
            for (p, b) in items {
                g.entry(p.to_owned()).or_insert(b);
            }
        }
        true
    }

    /// Directories probed so far (for change detection): each with whether it existed.
    pub fn probed_parent_dirs(&self) -> Vec<PathBuf> {
        self.apply_seed();
        // Deduplicated by bytes before anything is allocated or sorted: 26,000 answers on gRPC
        // name a few hundred directories, and sorting them all as `Path`s (component by
        // component) was 2% of a cold scan.
        let mut seen: FxMap<&[u8], &Path> = FxMap::default();
        let shards: Vec<_> = self.exists.iter().map(|sh| sh.read().unwrap()).collect();
        for g in &shards {
            for p in g.keys() {
                if let Some(d) = Path::new(p).parent() {
                    seen.insert(d.as_os_str().as_encoded_bytes(), d);
                }
            }
        }
        let mut v: Vec<(&[u8], &Path)> = seen.into_iter().collect();
        v.sort_unstable_by_key(|e| e.0);
        v.into_iter().map(|(_, d)| d.to_path_buf()).collect()
    }
}
