//! The header storage the parser fills, initialised or not.
//!
//! A caller may hand the parser `MaybeUninit` headers, so a request does not first pay for writing
//! placeholder headers it will overwrite (the server's stack array of 32 headers is 1.25 KiB of
//! stores per request otherwise). Unsafe lives here because turning the written prefix back into
//! `&[Header]` needs it; the parser never sees a `MaybeUninit`.
#![allow(unsafe_code)]

use super::Header;
use std::mem::MaybeUninit;

/// Header storage being filled in order: `headers[..filled]` hold written headers.
pub(crate) struct HeaderStorage<'b, 'h> {
    headers: &'h mut [MaybeUninit<Header<'b>>],
    filled: usize,
}

impl<'b, 'h> HeaderStorage<'b, 'h> {
    /// Fills uninitialised storage.
    #[inline(always)]
    pub(crate) fn uninit(headers: &'h mut [MaybeUninit<Header<'b>>]) -> Self {
        HeaderStorage { headers, filled: 0 }
    }

    /// Fills initialised storage (overwriting its headers in place).
    #[inline(always)]
    pub(crate) fn init(headers: &'h mut [Header<'b>]) -> Self {
        let len = headers.len();
        let ptr = headers.as_mut_ptr().cast::<MaybeUninit<Header<'b>>>();
        // SAFETY: `MaybeUninit<T>` has the layout of `T`, and `ptr` covers `len` elements of
        // the exclusively borrowed slice for `'h`. The view is only ever written with whole,
        // initialised `Header`s (`push`), so the caller's slice stays initialised.
        let headers = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        HeaderStorage { headers, filled: 0 }
    }

    /// Keeps room for at most `max` headers (the rest are never written).
    #[inline(always)]
    pub(crate) fn limit(self, max: usize) -> Self {
        let HeaderStorage { headers, filled } = self;
        let max = max.min(headers.len());
        HeaderStorage { headers: &mut headers[..max], filled }
    }

    /// Appends `h`; `false` when the storage is full.
    #[inline(always)]
    pub(crate) fn push(&mut self, h: Header<'b>) -> bool {
        match self.headers.get_mut(self.filled) {
            Some(free) => {
                free.write(h);
                self.filled += 1;
                true
            }
            None => false,
        }
    }

    /// How many headers were pushed.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.filled
    }

    /// The pushed headers.
    #[inline(always)]
    pub(crate) fn into_filled(self) -> &'h [Header<'b>] {
        let filled = self.filled.min(self.headers.len());
        let (written, _) = self.headers.split_at(filled);
        let ptr = written.as_ptr().cast::<Header<'b>>();
        // SAFETY: `push` wrote an initialised `Header` into each of the first `filled` elements
        // (and `filled` never exceeds the slice), `MaybeUninit<T>` has the layout of `T`, and
        // the shared borrow keeps the `'h` exclusive borrow alive, so nothing can write them.
        unsafe { std::slice::from_raw_parts(ptr, filled) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::{EMPTY_HEADER, HeaderId};

    fn h(name: &'static str) -> Header<'static> {
        Header { name, value: b"v", id: HeaderId::Other }
    }

    #[test]
    fn uninit_storage_fills_in_order_and_stops_when_full() {
        let mut storage = [const { MaybeUninit::uninit() }; 4];
        let mut s = HeaderStorage::uninit(&mut storage).limit(2);
        assert!(s.push(h("a")));
        assert!(s.push(h("b")));
        assert!(!s.push(h("c")));
        assert_eq!(s.len(), 2);
        let names: Vec<_> = s.into_filled().iter().map(|h| h.name).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn init_storage_is_overwritten_in_place() {
        let mut storage = [EMPTY_HEADER; 3];
        let mut s = HeaderStorage::init(&mut storage);
        assert!(s.push(h("x")));
        assert_eq!(s.into_filled(), &[h("x")]);
        assert_eq!(storage[0], h("x"));
        assert_eq!(storage[1], EMPTY_HEADER);
    }
}
