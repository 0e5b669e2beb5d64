//! The macro table's storage: definitions dense by symbol id, with the unsafe code that makes
//! copying a base table and resetting it cheap kept alone here (see the `SAFETY` notes).

use super::*;

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
    pub(crate) fn get_arc(&self, s: &Sym) -> Option<Arc<MacroDef>> {
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
    // `always`: since this table moved to its own module the compiler stopped inlining it into
    // the evaluator's replay of memoised `#define`s, its hottest caller (+3% instructions in a
    // cold gRPC scan, 2,115 M -> 2,181 M; back to 2,106 M with it).
    #[inline(always)]
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
    pub(crate) fn reserve_span(&mut self, n: usize) {
        if n > self.v.len() {
            self.v.resize(n, std::ptr::null());
        }
    }
}
