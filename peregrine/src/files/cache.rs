//! Resolved files, and a short-lived cache of them (the idea of nginx's `open_file_cache`).
//!
//! Resolving a request path costs several system calls (`open`, `fstat`, `readlink`, the same
//! for each precompressed sibling). For a small file that is most of the work of answering,
//! so a [`FileCache`] keeps the outcome for a short time-to-live, keyed by the raw request
//! path: a hit answers with no system call at all. Only successful resolutions of regular
//! files are kept; they were checked (root containment, dotfiles) when they were made.
//!
//! The price is staleness bounded by the time-to-live: a file replaced within it (a new file
//! renamed over it) is still answered from the old snapshot, consistently: contents, length
//! and validators belong together. A file changed in place is not: an answer from an open
//! descriptor checks it first (one `fstat`, see `ServeDir::answer`), so it goes out with its
//! current length and validators, and its entry is dropped.

use std::collections::HashMap;
use std::fs::File;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::HeaderValue;

use super::conditional::Validators;
use super::encoding::Coding;

/// Files up to this size are kept in memory by the cache instead of as an open descriptor.
pub(crate) const INLINE_MAX: u64 = 32 * 1024;

/// One representation of a file: the identity file or a precompressed sibling.
#[derive(Debug)]
pub(crate) struct Repr {
    /// The open file; `None` when `contents` holds all of it.
    pub(crate) file: Option<Arc<File>>,
    pub(crate) len: u64,
    /// The modification time the length and validators were taken at.
    pub(crate) modified: Option<SystemTime>,
    pub(crate) validators: Validators,
    /// The whole contents, for small files held by the cache.
    pub(crate) contents: Option<Bytes>,
}

/// A regular file resolved beneath the root, with its precompressed siblings.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// From the original file name (RFC 9110 §8.3), whichever representation is sent.
    pub(crate) content_type: HeaderValue,
    pub(crate) identity: Repr,
    /// Indexed like [`Coding::ALL`].
    pub(crate) siblings: [Option<Repr>; 3],
    /// Whether the media type is worth compressing on the fly (text, scripts, JSON, SVG,
    /// wasm: see `compress::compressible`).
    pub(crate) compressible: bool,
    /// Where the file really is (the key of compressed copies).
    pub(crate) real: std::path::PathBuf,
}

impl Resolved {
    /// The representation for `coding`, if that sibling exists.
    pub(crate) fn sibling(&self, coding: Coding) -> Option<&Repr> {
        self.siblings[coding.index()].as_ref()
    }

    /// Whether any sibling exists: then the answer depends on Accept-Encoding.
    pub(crate) fn has_siblings(&self) -> bool {
        self.siblings.iter().any(Option::is_some)
    }
}

/// Resolved files by raw request path, each kept for a time-to-live.
#[derive(Debug)]
pub(crate) struct FileCache {
    ttl: Duration,
    max_entries: usize,
    map: RwLock<HashMap<Box<[u8]>, Entry>>,
}

/// When a resolution was made, and the resolution.
type Entry = (Instant, Arc<Resolved>);

impl FileCache {
    pub(crate) fn new(ttl: Duration, max_entries: usize) -> FileCache {
        FileCache { ttl, max_entries, map: RwLock::new(HashMap::new()) }
    }

    /// A new, empty cache with the same settings.
    pub(crate) fn emptied(&self) -> FileCache {
        FileCache::new(self.ttl, self.max_entries)
    }

    /// The resolution of `key` if it was made less than the time-to-live before `now`.
    pub(crate) fn get(&self, key: &[u8], now: Instant) -> Option<Arc<Resolved>> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        match map.get(key) {
            Some((made, r)) if now.saturating_duration_since(*made) < self.ttl => Some(r.clone()),
            _ => None,
        }
    }

    /// Keeps `resolved` for `key`. When full, expired entries are dropped first; if the cache
    /// is still full the new entry is not kept (a flood of distinct paths cannot evict the
    /// working set, and memory and descriptors stay bounded by `max_entries`).
    pub(crate) fn insert(&self, key: &[u8], resolved: Arc<Resolved>, now: Instant) {
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= self.max_entries && !map.contains_key(key) {
            map.retain(|_, (made, _)| now.saturating_duration_since(*made) < self.ttl);
            if map.len() >= self.max_entries {
                return;
            }
        }
        map.insert(key.into(), (now, resolved));
    }

    /// Drops the resolution of `key` (the file changed since it was made).
    pub(crate) fn remove(&self, key: &[u8]) {
        self.map.write().unwrap_or_else(PoisonError::into_inner).remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved() -> Arc<Resolved> {
        let validators = Validators {
            etag: HeaderValue::from_static("\"x\""),
            last_modified: None,
            last_modified_value: None,
        };
        Arc::new(Resolved {
            content_type: HeaderValue::from_static("text/plain"),
            identity: Repr {
                file: None,
                len: 1,
                modified: None,
                validators,
                contents: Some(Bytes::from_static(b"x")),
            },
            siblings: [None, None, None],
            compressible: false,
            real: std::path::PathBuf::new(),
        })
    }

    #[test]
    fn ttl_and_capacity() {
        struct Case {
            name: &'static str,
            key: &'static [u8],
            after: Duration,
            expect: bool,
        }
        let t0 = Instant::now();
        let cache = FileCache::new(Duration::from_secs(1), 2);
        cache.insert(b"/a", resolved(), t0);
        cache.insert(b"/b", resolved(), t0);
        // Full: a third path is not kept while the others are fresh.
        cache.insert(b"/c", resolved(), t0);
        let cases = [
            Case { name: "fresh", key: b"/a", after: Duration::ZERO, expect: true },
            Case {
                name: "just fresh",
                key: b"/b",
                after: Duration::from_millis(999),
                expect: true,
            },
            Case { name: "expired", key: b"/a", after: Duration::from_secs(1), expect: false },
            Case { name: "not kept when full", key: b"/c", after: Duration::ZERO, expect: false },
            Case { name: "never inserted", key: b"/d", after: Duration::ZERO, expect: false },
        ];
        for c in cases {
            assert_eq!(cache.get(c.key, t0 + c.after).is_some(), c.expect, "{}", c.name);
        }
        // Once the others expired, a new path replaces them.
        let later = t0 + Duration::from_secs(2);
        cache.insert(b"/c", resolved(), later);
        assert!(cache.get(b"/c", later).is_some());
        assert!(cache.get(b"/a", later).is_none());
    }
}
