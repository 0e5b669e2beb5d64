//! Data kept in its encoded form until first used: a part of a loaded cache file (a file's
//! directives, the existence answers) that a rescan where nothing changed never decodes and a
//! save copies as it is. A leaf module: the decoder is given with the bytes, so the types that
//! hold lazy data (`lex`, `store`) do not depend on the cache that encodes them.

use std::sync::{Arc, OnceLock};

/// A part of a loaded cache file kept encoded until first used: a rescan in which nothing
/// changed never decodes it, and a save copies the encoding as it is.
pub struct Lazy<T> {
    value: OnceLock<T>,
    /// The encoding: the whole cache file, where in it, and how to decode it.
    raw: Option<Encoded<T>>,
}

/// Decodes a value from its encoding (the cache's format, which this module does not know);
/// `None`: the encoding is damaged (why is the cache's business: [`Lazy::get`] only falls back).
pub type Decode<T> = fn(&[u8]) -> Option<T>;

struct Encoded<T> {
    buf: Arc<CacheBytes>,
    start: usize,
    end: usize,
    decode: Decode<T>,
}

impl<T> Clone for Encoded<T> {
    fn clone(&self) -> Self {
        Encoded {
            buf: self.buf.clone(),
            start: self.start,
            end: self.end,
            decode: self.decode,
        }
    }
}

impl<T> Lazy<T> {
    pub fn new(v: T) -> Self {
        Lazy {
            value: OnceLock::from(v),
            raw: None,
        }
    }

    pub fn encoded_in(buf: Arc<CacheBytes>, start: usize, end: usize, decode: Decode<T>) -> Self {
        Lazy {
            value: OnceLock::new(),
            raw: Some(Encoded {
                buf,
                start,
                end,
                decode,
            }),
        }
    }

    /// The encoded form, while it has not been decoded.
    pub fn encoded(&self) -> Option<&[u8]> {
        match (&self.raw, self.value.get()) {
            (Some(r), None) => r.buf.get(r.start..r.end),
            _ => None,
        }
    }

    /// The value, decoded on first use. The cache file's checksum was verified when it was
    /// loaded, so decoding cannot fail short of a bug; the empty value is then the safe answer.
    pub fn get(&self) -> &T
    where
        T: Default,
    {
        self.value.get_or_init(|| {
            self.raw
                .as_ref()
                .and_then(|r| r.buf.get(r.start..r.end).and_then(|b| (r.decode)(b)))
                .unwrap_or_default()
        })
    }
}

impl<T: Default> Default for Lazy<T> {
    fn default() -> Self {
        Lazy::new(T::default())
    }
}

impl<T: Clone> Clone for Lazy<T> {
    fn clone(&self) -> Self {
        match self.value.get() {
            Some(v) => Lazy::new(v.clone()),
            None => Lazy {
                value: OnceLock::new(),
                raw: self.raw.clone(),
            },
        }
    }
}

/// A loaded cache file's bytes: read into memory, or mapped (`Scanner::map_cache_file`).
pub enum CacheBytes {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for CacheBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            CacheBytes::Read(v) => v,
            CacheBytes::Mapped(m) => m,
        }
    }
}
