//! Generation-checked handle tables: what a `cf_clip` or `cf_scalars` value refers to.
//!
//! A handle is a 64-bit number, not a pointer: `tag << 56 | generation << 32 | slot`. Freeing
//! bumps the slot's generation, so every copy of the old handle is refused from then on (use
//! after free and double free are errors, never undefined behaviour), and a slot whose
//! generation reaches 2^24 − 1 is retired rather than reused, so a stale handle can never come
//! back to life. The tag keeps a clip handle from being accepted as a scalar handle. 0 is never
//! a handle (generations start at 1).
//!
//! Slots live in chunks that are allocated once and never freed or moved, found through a fixed
//! array of `OnceLock`s: a lookup takes no global lock, only the slot's own `RwLock` for reading,
//! held while the caller's function runs. So many threads may use one reader at once, and
//! `free` (which takes the slot's write lock) waits for the calls in flight on that handle and
//! never pulls a reader out from under one.

use std::sync::{Mutex, OnceLock, PoisonError, RwLock};

/// Slots per chunk and chunks per table: 1,048,576 live handles of each kind at most.
const CHUNK: usize = 256;
const MAX_CHUNKS: usize = 4096;
/// Largest generation; a slot freed at it is retired.
const MAX_GENERATION: u32 = (1 << 24) - 1;

/// A chunk of slots, allocated once, never moved or freed.
type Chunk<T> = Box<[RwLock<Slot<T>>]>;

pub struct Table<T> {
    tag: u8,
    chunks: [OnceLock<Chunk<T>>; MAX_CHUNKS],
    alloc: Mutex<Alloc>,
}

struct Slot<T> {
    /// The generation a handle must carry to reach `value`; 0 for a retired slot.
    generation: u32,
    /// Boxed: a chunk of empty slots stays small whatever `T` is.
    value: Option<Box<T>>,
}

struct Alloc {
    /// Freed slots, reused last in, first out.
    free: Vec<u32>,
    /// Slots never used yet start here.
    next: u32,
}

impl<T> Table<T> {
    pub const fn new(tag: u8) -> Self {
        Self {
            tag,
            chunks: [const { OnceLock::new() }; MAX_CHUNKS],
            alloc: Mutex::new(Alloc {
                free: Vec::new(),
                next: 0,
            }),
        }
    }

    /// (slot, generation) of a handle of this table, if it is well formed.
    fn decode(&self, handle: u64) -> Option<(u32, u32)> {
        let tag = (handle >> 56) as u8;
        let generation = ((handle >> 32) as u32) & MAX_GENERATION;
        let slot = handle as u32;
        (tag == self.tag && generation != 0).then_some((slot, generation))
    }

    fn encode(&self, slot: u32, generation: u32) -> u64 {
        (self.tag as u64) << 56 | (generation as u64) << 32 | slot as u64
    }

    fn slot(&self, index: u32) -> Option<&RwLock<Slot<T>>> {
        let i = index as usize;
        self.chunks.get(i / CHUNK)?.get()?.get(i % CHUNK)
    }

    /// Stores `value` and returns its handle, or gives it back when every slot is taken.
    pub fn insert(&self, value: Box<T>) -> Result<u64, Box<T>> {
        let mut a = self.alloc.lock().unwrap_or_else(PoisonError::into_inner);
        let index = match a.free.pop() {
            Some(i) => i,
            None => {
                let i = a.next as usize;
                let Some(chunk) = self.chunks.get(i / CHUNK) else {
                    return Err(value);
                };
                chunk.get_or_init(|| {
                    (0..CHUNK)
                        .map(|_| {
                            RwLock::new(Slot {
                                generation: 1,
                                value: None,
                            })
                        })
                        .collect()
                });
                a.next += 1;
                i as u32
            }
        };
        let Some(slot) = self.slot(index) else {
            // Unreachable: the chunk of every index handed out exists. Kept total anyway.
            return Err(value);
        };
        let mut s = slot.write().unwrap_or_else(PoisonError::into_inner);
        s.value = Some(value);
        Ok(self.encode(index, s.generation))
    }

    /// Runs `f` on the value of a live handle (holding the slot's read lock), or returns `None`
    /// for a handle that is malformed, freed, or of another table.
    pub fn with<R>(&self, handle: u64, f: impl FnOnce(&T) -> R) -> Option<R> {
        let (index, generation) = self.decode(handle)?;
        let s = self
            .slot(index)?
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        match &s.value {
            Some(v) if s.generation == generation => Some(f(v)),
            _ => None,
        }
    }

    /// Takes the value of a live handle out of the table (waiting for calls in flight on it);
    /// `None` for a handle that is malformed, already freed, or of another table.
    pub fn remove(&self, handle: u64) -> Option<Box<T>> {
        let (index, generation) = self.decode(handle)?;
        let slot = self.slot(index)?;
        let (value, reusable) = {
            let mut s = slot.write().unwrap_or_else(PoisonError::into_inner);
            if s.generation != generation || s.value.is_none() {
                return None;
            }
            let reusable = s.generation < MAX_GENERATION;
            s.generation = if reusable { s.generation + 1 } else { 0 };
            (s.value.take(), reusable)
        };
        if reusable {
            self.alloc
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .free
                .push(index);
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_handles_are_refused_and_slots_reused_with_a_new_generation() {
        let t: Table<u32> = Table::new(0x7A);
        let a = t.insert(Box::new(1)).unwrap();
        assert_eq!(t.with(a, |v| *v), Some(1));
        assert_eq!(t.remove(a).as_deref(), Some(&1));
        assert_eq!(t.with(a, |v| *v), None);
        assert!(t.remove(a).is_none(), "double free refused");
        let b = t.insert(Box::new(2)).unwrap();
        assert_eq!(b as u32, a as u32, "the slot is reused");
        assert_ne!(b, a, "with another generation");
        assert_eq!(t.with(a, |v| *v), None);
        assert_eq!(t.with(b, |v| *v), Some(2));
        // Another table's tag, generation 0, a slot never handed out.
        let other: Table<u32> = Table::new(0x7B);
        assert_eq!(other.with(b, |v| *v), None);
        assert_eq!(t.with(b & !(MAX_GENERATION as u64) << 32, |v| *v), None);
        assert_eq!(t.with(b + 1000, |v| *v), None);
        assert_eq!(t.with(0, |v| *v), None);
        assert_eq!(t.with(u64::MAX, |v| *v), None);
    }

    #[test]
    fn a_slot_at_the_last_generation_is_retired() {
        let t: Table<u32> = Table::new(1);
        let a = t.insert(Box::new(1)).unwrap();
        t.slot(a as u32).unwrap().write().unwrap().generation = MAX_GENERATION;
        let a = t.encode(a as u32, MAX_GENERATION);
        assert!(t.remove(a).is_some());
        let b = t.insert(Box::new(2)).unwrap();
        assert_ne!(b as u32, a as u32, "the retired slot is not reused");
        assert_eq!(t.with(a, |v| *v), None);
        assert_eq!(t.with(t.encode(a as u32, 0), |v| *v), None);
    }
}
