//! The header fields of a response: an ordered list whose storage comes from, and goes back
//! to, a small per-thread pool.
//!
//! A response is moved out of the handler's future and handed to the encoder on every request;
//! with its fields inline (four of them, 312 bytes) each move was a `memcpy`. The list is now a
//! vector (24 bytes) whose buffer is taken from the thread's pool at the first field and given
//! back when the list is dropped, so a steady stream of responses allocates nothing.

use std::cell::{Cell, RefCell};
use std::fmt;

use http::{HeaderName, HeaderValue};

/// Field buffers kept per thread; more are freed.
const POOL_MAX: usize = 64;

/// The capacity of a fresh buffer: most responses carry fewer fields.
const FIELDS: usize = 8;

/// Buffers larger than this (a response with many fields) are freed, not kept.
const KEEP_MAX: usize = 64;

type Fields = Vec<(HeaderName, HeaderValue)>;

thread_local! {
    /// The buffer given back last: the next list takes it without touching the pool (a
    /// handler's response is usually dropped before the next one is built).
    static SPARE: Cell<Option<Fields>> = const { Cell::new(None) };
    static POOL: RefCell<Vec<Fields>> = const { RefCell::new(Vec::new()) };
}

/// A buffer for fields: the thread's spare one, else one from its pool, else a new one. Out
/// of line: a list takes one once, and `append` stays small enough to inline into a handler.
#[inline(never)]
fn take() -> Fields {
    if let Ok(Some(fields)) = SPARE.try_with(Cell::take) {
        return fields;
    }
    let pooled = POOL.try_with(|pool| pool.try_borrow_mut().ok().and_then(|mut p| p.pop()));
    pooled.ok().flatten().unwrap_or_else(|| Vec::with_capacity(FIELDS))
}

/// Gives an empty buffer back: as the thread's spare, or to its pool when the spare is taken
/// (freed if the pool is full or gone).
#[inline(never)]
fn give(fields: Fields) {
    debug_assert!(fields.is_empty());
    if fields.capacity() > KEEP_MAX {
        return;
    }
    let Ok(Some(fields)) = SPARE.try_with(|spare| spare.replace(Some(fields))) else {
        return;
    };
    let _ = POOL.try_with(|pool| {
        if let Ok(mut pool) = pool.try_borrow_mut() {
            if pool.len() < POOL_MAX {
                pool.push(fields);
            }
        }
    });
}

/// The header fields of a [`Response`](super::Response): an ordered list.
///
/// Lookups compare names exactly (a [`HeaderName`] is already lowercase), so a list of a few
/// fields needs no hash map. Its storage is recycled per thread (see the module docs). Its
/// methods carry [`http::HeaderMap`]'s names (`get`, `get_all`, `contains_key`, `insert`,
/// `append`, `iter`; `remove` answers whether a field went).
#[derive(Default)]
pub struct HeaderList {
    fields: Fields,
}

impl HeaderList {
    /// An empty list; no allocation.
    pub const fn new() -> HeaderList {
        HeaderList { fields: Vec::new() }
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Adds a field after the others.
    #[inline(always)]
    pub fn append(&mut self, name: HeaderName, value: HeaderValue) {
        if self.fields.capacity() == 0 {
            self.fields = take();
        }
        self.fields.push((name, value));
    }

    /// Sets `name` to `value`, removing other fields of that name.
    pub fn insert(&mut self, name: HeaderName, value: HeaderValue) {
        self.remove(&name);
        self.append(name, value);
    }

    /// Removes every field named `name`; returns whether there was one.
    pub fn remove(&mut self, name: &HeaderName) -> bool {
        let before = self.fields.len();
        self.fields.retain(|(n, _)| n != name);
        before != self.fields.len()
    }

    /// The first value of `name`.
    pub fn get(&self, name: &HeaderName) -> Option<&HeaderValue> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every value of `name`, in order.
    pub fn get_all<'a>(&'a self, name: &'a HeaderName) -> impl Iterator<Item = &'a HeaderValue> {
        self.iter().filter(move |(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Whether a field named `name` is present.
    pub fn contains_key(&self, name: &HeaderName) -> bool {
        self.get(name).is_some()
    }

    /// The fields in order.
    pub fn iter(&self) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> + Clone {
        self.fields.iter().map(|(n, v)| (n, v))
    }
}

impl Drop for HeaderList {
    #[inline]
    fn drop(&mut self) {
        if self.fields.capacity() != 0 {
            let mut fields = std::mem::take(&mut self.fields);
            fields.clear();
            give(fields);
        }
    }
}

impl Clone for HeaderList {
    fn clone(&self) -> Self {
        let mut list = HeaderList::new();
        for (name, value) in self.iter() {
            list.append(name.clone(), value.clone());
        }
        list
    }
}

impl fmt::Debug for HeaderList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl IntoIterator for HeaderList {
    type Item = (HeaderName, HeaderValue);
    type IntoIter = std::vec::IntoIter<(HeaderName, HeaderValue)>;

    /// The fields by value, in order (their buffer is not recycled).
    fn into_iter(mut self) -> Self::IntoIter {
        std::mem::take(&mut self.fields).into_iter()
    }
}

impl From<http::HeaderMap> for HeaderList {
    fn from(map: http::HeaderMap) -> Self {
        let mut list = HeaderList::new();
        let mut last = None;
        for (name, value) in map {
            // `HeaderMap`'s iterator names only the first value of each run of equal names.
            if let Some(name) = name {
                last = Some(name);
            }
            if let Some(name) = &last {
                list.append(name.clone(), value);
            }
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list's buffer goes back to its thread's pool and serves the next list.
    #[test]
    fn buffers_are_recycled() {
        std::thread::spawn(|| {
            let mut a = HeaderList::new();
            a.append(HeaderName::from_static("x-a"), HeaderValue::from_static("1"));
            let ptr = a.fields.as_ptr();
            drop(a);
            let mut b = HeaderList::new();
            assert_eq!(b.fields.capacity(), 0, "no buffer before the first field");
            b.append(HeaderName::from_static("x-b"), HeaderValue::from_static("2"));
            assert_eq!(b.fields.as_ptr(), ptr, "the same buffer");
            assert_eq!(b.len(), 1);
        })
        .join()
        .unwrap();
    }
}
