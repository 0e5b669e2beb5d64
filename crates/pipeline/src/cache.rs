//! The skip cache: `.clipforge-cache.json` in the output root, one entry per input file (keyed by
//! its path relative to the scanned root, `/`-separated), holding the input content hash, the
//! settings + codec key, the outputs made (with their sizes) and the report rows. A clip is
//! skipped when all of it matches and every output is still there with its recorded size. A clip
//! refused as below float32 precision is recorded too (its row, no output): the same bytes at the
//! same settings are refused again, so the search is not run again, and the skipped row still
//! says the refusal and its floor.
//! Written atomically; a missing or unreadable cache is an empty one (everything recompresses).
//! Several processes may write into one output folder at once (two `compress` runs, a watch and
//! a run): a save takes an exclusive lock on `.clipforge-cache.lock` beside the cache, re-reads
//! the file and applies only this process's own changes since its last save, so no run loses
//! another's rows.

use crate::report::ClipReport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

// The hash and the path key live below the cache (folder settings read them too); their public
// paths stay here.
pub(crate) use crate::fingerprint::content_hash;
pub(crate) use crate::naming::cache_key;

/// File name of the skip cache, kept in the output root.
pub const CACHE_FILE_NAME: &str = ".clipforge-cache.json";

const CACHE_VERSION: u32 = 1;

/// A larger cache file is ignored (everything recompresses) rather than read: about 2 KB per
/// input, so 1 GiB is far beyond any real tree.
const MAX_CACHE_FILE_BYTES: u64 = 1 << 30;

/// One output file of an input.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CachedOutput {
    /// Relative to the output root, `/`-separated.
    pub path: String,
    pub file_bytes: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// Content hash of the input file; empty when the entry only tracks outputs (never "up to date").
    pub input_hash: String,
    /// [`crate::fingerprint::settings_key`] of the run that made the outputs.
    pub settings_key: String,
    /// Output base (relative, without extension) the outputs were named from.
    #[serde(default)]
    pub base: String,
    pub outputs: Vec<CachedOutput>,
    pub reports: Vec<ClipReport>,
    /// Canonical input root the key is relative to. The watcher only ever deletes outputs of
    /// entries made from the folder it watches.
    #[serde(default)]
    pub input_root: String,
}

impl CacheEntry {
    /// Every output exists with the size recorded (and there is at least one).
    /// Same input content, same settings and codec, same output base, outputs unchanged: the
    /// skip cache's rule for "nothing to do".
    pub(crate) fn is_up_to_date(
        &self,
        input_hash: &str,
        settings_key: &str,
        base: &Path,
        output_root: &Path,
    ) -> bool {
        self.input_hash == input_hash && self.matches_run(settings_key, base, output_root)
    }

    /// [`Self::is_up_to_date`] without the input's hash: what can be checked before reading it.
    /// `settings_key` is the clip key of the settings that apply to the file; an entry of a
    /// scalar track list is held to [`crate::fingerprint::scalar_list_key`] instead, since such
    /// a list reads none of them (the input hash, checked too, says the file is still that list).
    pub(crate) fn matches_run(&self, settings_key: &str, base: &Path, output_root: &Path) -> bool {
        let wanted = if self.is_scalar_list() {
            std::borrow::Cow::Owned(crate::fingerprint::scalar_list_key())
        } else {
            std::borrow::Cow::Borrowed(settings_key)
        };
        !self.input_hash.is_empty()
            && self.settings_key == *wanted
            && self.base == cache_key(base)
            && self.made_everything(output_root)
            && !self.mixes_units()
    }

    /// [`Self::matches_run`] but for the settings: made by this codec with other settings that
    /// every row records (`ClipReport::settings`), its outputs still there. The app shows such
    /// rows as stale (what they were made with against what applies now), as it did before a
    /// restart, rather than as never compressed.
    pub(crate) fn made_with_other_settings(
        &self,
        settings_key: &str,
        base: &Path,
        output_root: &Path,
    ) -> bool {
        let codec = |k: &str| k.rsplit_once(";codec=").map(|(_, c)| c.to_string());
        !self.input_hash.is_empty()
            && !self.is_scalar_list()
            && self.settings_key != settings_key
            && codec(&self.settings_key).is_some()
            && codec(&self.settings_key) == codec(settings_key)
            && self.reports.iter().all(|r| r.settings.is_some())
            && self.base == cache_key(base)
            && self.made_everything(output_root)
    }

    /// Every output is intact, and the rows without one are refusals: a file whose only clip
    /// was refused as below float32 precision has no output and is still settled.
    fn made_everything(&self, output_root: &Path) -> bool {
        let refused = self
            .reports
            .iter()
            .filter(|r| r.status() == crate::report::ClipStatus::BelowPrecision)
            .count();
        if self.outputs.is_empty() {
            refused > 0 && refused == self.reports.len()
        } else {
            self.outputs_intact(output_root)
        }
    }

    /// The entry is a compressed scalar track list (its one row says so).
    fn is_scalar_list(&self) -> bool {
        self.reports.iter().any(|r| r.is_scalar_list())
    }

    /// A scalar track list's row recorded before such rows had their own `scalar` errors (its
    /// `*_cm` fields held the tracks' units): compressed again to get a report that does not.
    fn mixes_units(&self) -> bool {
        self.reports
            .iter()
            .any(|r| r.is_scalar_list() && r.scalar.is_none())
    }

    /// The recorded rows as rows of a skipped file.
    pub(crate) fn skipped_rows(&self, input: &Path) -> Vec<ClipReport> {
        self.reports
            .iter()
            .map(|r| ClipReport {
                skipped: true,
                input: input.display().to_string(),
                ..r.clone()
            })
            .collect()
    }

    pub(crate) fn outputs_intact(&self, output_root: &Path) -> bool {
        !self.outputs.is_empty()
            && self.outputs.iter().all(|o| {
                std::fs::metadata(output_root.join(&o.path))
                    .is_ok_and(|m| m.is_file() && m.len() == o.file_bytes)
            })
    }
}

#[derive(Default, Serialize, Deserialize)]
struct CacheFile<E> {
    version: u32,
    entries: BTreeMap<String, E>,
}

/// The in-memory cache, shared by the worker threads.
#[derive(Default, Debug)]
pub struct SkipCache {
    entries: Mutex<BTreeMap<String, CacheEntry>>,
    /// This process's changes since its last save (`None`: removed), merged into the file on save.
    changes: Mutex<BTreeMap<String, Option<CacheEntry>>>,
    dirty: AtomicBool,
}

/// The lock file beside the cache (never removed: removing a lock file races with its users).
pub(crate) const CACHE_LOCK_NAME: &str = ".clipforge-cache.lock";

/// The skip cache's hash of an input: its content hash, plus, for a text `.gltf`, the hash of
/// each external buffer file it names (`buffers[].uri`), because the animation data lives there:
/// a re-exported `.bin` beside an unchanged `.gltf` must recompress. A missing or unreadable
/// buffer, or one that is not a regular file, hashes as "missing" (the import then fails and
/// reports it).
pub(crate) fn input_hash(path: &Path, content: &[u8]) -> String {
    let mut hash = content_hash(content);
    for buffer in gltf_external_buffers(path, content) {
        hash.push('+');
        // A regular file of at most the per-clip budget: a FIFO named as a buffer must not
        // block the batch (the import then refuses it with the reason).
        match clipforge_base::fsio::read_regular(
            &buffer,
            clipforge_anim::limits::max_memory_bytes(),
        ) {
            Ok(bytes) => hash.push_str(&content_hash(&bytes)),
            Err(_) => hash.push_str("missing"),
        }
    }
    hash
}

/// The external buffer files a text `.gltf` (its bytes: `content`) names; empty for anything else.
/// Only relative URIs that stay inside the `.gltf` file's folder are listed: an absolute path,
/// a `file:` (or any other scheme) URI or a `..` is never read through an asset (the importer
/// refuses such a file).
pub(crate) fn gltf_external_buffers(path: &Path, content: &[u8]) -> Vec<PathBuf> {
    let is_text_gltf = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gltf"));
    if !is_text_gltf {
        return Vec::new();
    }
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(content) else {
        return Vec::new();
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    doc["buffers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["uri"].as_str())
        .filter(|uri| !uri.starts_with("data:")) // embedded: already part of the content
        // A URI that does not decode fails the import itself: nothing to hash.
        .filter_map(|uri| clipforge_anim::formats::gltf::decode_uri(uri).ok())
        .filter(|rel| stays_inside(rel))
        .map(|rel| dir.join(rel))
        .collect()
}

/// A relative path with no scheme, no root and no `..`: joined to a folder, it stays inside it.
fn stays_inside(rel: &str) -> bool {
    let has_scheme = rel
        .split_once(':')
        .is_some_and(|(scheme, _)| !scheme.contains('/'));
    !rel.is_empty()
        && !has_scheme
        && !rel.contains('\\')
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// The entries of `output_root/.clipforge-cache.json`; missing or unreadable → none.
fn read_entries(output_root: &Path) -> BTreeMap<String, CacheEntry> {
    let path = output_root.join(CACHE_FILE_NAME);
    // Entries are decoded one by one: one unreadable entry costs one recompression, not all.
    clipforge_base::fsio::read_regular(&path, MAX_CACHE_FILE_BYTES)
        .ok()
        .and_then(|b| serde_json::from_slice::<CacheFile<serde_json::Value>>(&b).ok())
        .filter(|c| c.version == CACHE_VERSION)
        .map(|c| {
            c.entries
                .into_iter()
                .filter_map(|(k, v)| serde_json::from_value::<CacheEntry>(v).ok().map(|e| (k, e)))
                .collect()
        })
        .unwrap_or_default()
}

impl SkipCache {
    /// Loads `output_root/.clipforge-cache.json`; missing or unreadable → empty.
    pub fn load(output_root: &Path) -> Self {
        Self {
            entries: Mutex::new(read_entries(output_root)),
            changes: Mutex::default(),
            dirty: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, CacheEntry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn changes(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Option<CacheEntry>>> {
        self.changes.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, key: &str) -> Option<CacheEntry> {
        self.lock().get(key).cloned()
    }

    pub fn insert(&self, key: String, entry: CacheEntry) {
        self.changes().insert(key.clone(), Some(entry.clone()));
        self.lock().insert(key, entry);
        self.dirty.store(true, Ordering::Relaxed);
    }

    pub fn remove(&self, key: &str) -> Option<CacheEntry> {
        let e = self.lock().remove(key);
        if e.is_some() {
            self.changes().insert(key.to_string(), None);
            self.dirty.store(true, Ordering::Relaxed);
        }
        e
    }

    /// Copies of every entry for `key` or under it (`key/...`); an empty key lists everything.
    pub(crate) fn entries_under(&self, key: &str) -> Vec<(String, CacheEntry)> {
        self.lock()
            .iter()
            .filter(|(k, _)| {
                key.is_empty()
                    || *k == key
                    || k.strip_prefix(key).is_some_and(|r| r.starts_with('/'))
            })
            .map(|(k, e)| (k.clone(), e.clone()))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the cache atomically if anything changed, merged with what other processes saved
    /// meanwhile (under the lock file): their rows are kept, this process's changes win for the
    /// keys it changed. The in-memory cache then holds the merged rows.
    pub fn save(&self, output_root: &Path) -> std::io::Result<()> {
        if !self.dirty.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        let r = self.save_locked(output_root);
        if r.is_err() {
            self.dirty.store(true, Ordering::Relaxed);
        }
        r
    }

    fn save_locked(&self, output_root: &Path) -> std::io::Result<()> {
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(output_root.join(CACHE_LOCK_NAME))?;
        // Blocks while another process saves (a save takes milliseconds); released on drop.
        lock.lock()?;
        let changes = std::mem::take(&mut *self.changes());
        let mut merged = read_entries(output_root);
        for (k, v) in &changes {
            match v {
                Some(e) => merged.insert(k.clone(), e.clone()),
                None => merged.remove(k),
            };
        }
        let file = CacheFile::<CacheEntry> {
            version: CACHE_VERSION,
            entries: merged,
        };
        let r = serde_json::to_vec(&file)
            .map_err(std::io::Error::other)
            .and_then(|json| {
                clipforge_base::fsio::write_atomic(&output_root.join(CACHE_FILE_NAME), &json)
            });
        match r {
            Ok(()) => {
                // Changes made by workers while we wrote stay in `changes` for the next save.
                let mut entries = self.lock();
                let pending = self.changes();
                let mut now = file.entries;
                for (k, v) in pending.iter() {
                    match v {
                        Some(e) => now.insert(k.clone(), e.clone()),
                        None => now.remove(k),
                    };
                }
                *entries = now;
                Ok(())
            }
            Err(e) => {
                // Not written: keep the changes for the next try (newer ones win).
                let mut pending = self.changes();
                for (k, v) in changes {
                    pending.entry(k).or_insert(v);
                }
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_buffers_inside_the_gltf_folder_are_listed() {
        let gltf = Path::new("/assets/hero/walk.gltf");
        let doc = br#"{"buffers":[{"uri":"walk.bin"},{"uri":"sub/a%20b.bin"},{"uri":"./c.bin"},
            {"uri":"/etc/passwd"},{"uri":"file:///etc/passwd"},{"uri":"../../secret.bin"},
            {"uri":"sub/../../x.bin"},{"uri":"data:application/octet-stream;base64,AAAA"},
            {"uri":"C:\\win.bin"},{"uri":""}]}"#;
        let listed = gltf_external_buffers(gltf, doc);
        let dir = Path::new("/assets/hero");
        assert_eq!(
            listed,
            vec![
                dir.join("walk.bin"),
                dir.join("sub/a b.bin"),
                dir.join("./c.bin")
            ]
        );
    }
}
