//! Compressed copies of files, kept under a memory cap so a hot file is compressed once.
//!
//! Keyed by the file's real path, then by (identity entity-tag, coding, level): the entity-tag
//! is built from the inode, size and modification time in nanoseconds, taken when the answer
//! was decided (a cached descriptor is checked with one `fstat` first), so a changed file has a
//! new key and is never answered with the old copy. Inserting a copy for a new tag drops the
//! path's copies for older tags. When the total passes the cap, the least recently used copies
//! go until a quarter of the cap is free.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use bytes::Bytes;
use http::HeaderValue;

use super::super::Coding;

/// One compressed copy.
#[derive(Debug)]
struct Entry {
    identity_tag: HeaderValue,
    coding: Coding,
    level: u32,
    bytes: Bytes,
    /// The compressed representation's own entity-tag.
    tag: HeaderValue,
    last_used: AtomicU64,
}

#[derive(Debug, Default)]
struct Map {
    by_path: HashMap<PathBuf, Vec<Entry>>,
    total: usize,
}

/// The cache; shared by clones of a `ServeDir` and by every worker.
#[derive(Debug)]
pub(crate) struct CompressedCache {
    cap: usize,
    map: RwLock<Map>,
    clock: AtomicU64,
}

/// A hit: the compressed bytes and their entity-tag.
pub(crate) type Hit = (Bytes, HeaderValue);

impl CompressedCache {
    pub(crate) fn new(cap: usize) -> CompressedCache {
        CompressedCache { cap, map: RwLock::default(), clock: AtomicU64::new(0) }
    }

    pub(crate) fn get(
        &self,
        path: &Path,
        identity_tag: &HeaderValue,
        coding: Coding,
        level: u32,
    ) -> Option<Hit> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        let e =
            map.by_path.get(path)?.iter().find(|e| {
                e.coding == coding && e.level == level && e.identity_tag == identity_tag
            })?;
        e.last_used.store(self.clock.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        Some((e.bytes.clone(), e.tag.clone()))
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert(
        &self,
        path: &Path,
        identity_tag: &HeaderValue,
        coding: Coding,
        level: u32,
        bytes: Bytes,
        tag: HeaderValue,
    ) {
        if bytes.len() > self.cap {
            return;
        }
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        let Map { by_path, total } = &mut *map;
        let list = by_path.entry(path.to_owned()).or_default();
        // Copies of an older version of the file are dead: free them now.
        list.retain(|e| {
            let keep = e.identity_tag == identity_tag && !(e.coding == coding && e.level == level);
            if !keep {
                *total -= e.bytes.len();
            }
            keep
        });
        *total += bytes.len();
        list.push(Entry {
            identity_tag: identity_tag.clone(),
            coding,
            level,
            bytes,
            tag,
            last_used: AtomicU64::new(self.clock.fetch_add(1, Ordering::Relaxed)),
        });
        if *total > self.cap {
            evict(&mut map, self.cap - self.cap / 4);
        }
    }

    /// Bytes held, for tests.
    #[cfg(test)]
    pub(crate) fn total(&self) -> usize {
        self.map.read().unwrap_or_else(PoisonError::into_inner).total
    }
}

/// Drops the least recently used copies until at most `target` bytes are held.
fn evict(map: &mut Map, target: usize) {
    let mut ages: Vec<(u64, PathBuf, usize)> = Vec::new();
    for (path, list) in &map.by_path {
        for e in list {
            ages.push((e.last_used.load(Ordering::Relaxed), path.clone(), e.bytes.len()));
        }
    }
    ages.sort_unstable_by_key(|a| a.0);
    for (age, path, _) in ages {
        if map.total <= target {
            break;
        }
        if let Some(list) = map.by_path.get_mut(&path) {
            if let Some(i) = list.iter().position(|e| e.last_used.load(Ordering::Relaxed) == age) {
                map.total -= list.swap_remove(i).bytes.len();
            }
            if list.is_empty() {
                map.by_path.remove(&path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_by_version_and_capped() {
        let cache = CompressedCache::new(1000);
        let v1 = HeaderValue::from_static("\"1\"");
        let v2 = HeaderValue::from_static("\"2\"");
        let tag = HeaderValue::from_static("\"t\"");
        let a = Path::new("/a");
        let bytes = |n: usize| Bytes::from(vec![b'x'; n]);
        cache.insert(a, &v1, Coding::Gzip, 6, bytes(100), tag.clone());
        cache.insert(a, &v1, Coding::Brotli, 5, bytes(100), tag.clone());
        struct Case {
            name: &'static str,
            tag: &'static HeaderValue,
            coding: Coding,
            level: u32,
            expect: bool,
        }
        let (v1s, v2s): (&'static HeaderValue, &'static HeaderValue) =
            (Box::leak(Box::new(v1.clone())), Box::leak(Box::new(v2.clone())));
        let cases = [
            Case { name: "hit", tag: v1s, coding: Coding::Gzip, level: 6, expect: true },
            Case { name: "other coding", tag: v1s, coding: Coding::Zstd, level: 6, expect: false },
            Case { name: "other level", tag: v1s, coding: Coding::Gzip, level: 9, expect: false },
            Case { name: "changed file", tag: v2s, coding: Coding::Gzip, level: 6, expect: false },
        ];
        for c in cases {
            assert_eq!(cache.get(a, c.tag, c.coding, c.level).is_some(), c.expect, "{}", c.name);
        }
        assert_eq!(cache.total(), 200);
        // A new version drops the old copies.
        cache.insert(a, &v2, Coding::Gzip, 6, bytes(50), tag.clone());
        assert_eq!(cache.total(), 50);
        assert!(cache.get(a, &v1, Coding::Brotli, 5).is_none());
        // Past the cap the least recently used go, down to three quarters of it.
        for i in 0..10 {
            let p = PathBuf::from(format!("/f{i}"));
            cache.insert(&p, &v1, Coding::Gzip, 6, bytes(300), tag.clone());
            assert!(cache.total() <= 1000, "{}", cache.total());
        }
        assert!(cache.get(Path::new("/f9"), &v1, Coding::Gzip, 6).is_some());
        assert!(cache.get(Path::new("/f0"), &v1, Coding::Gzip, 6).is_none());
        // Larger than the whole cap: not kept.
        cache.insert(Path::new("/huge"), &v1, Coding::Gzip, 6, bytes(2000), tag);
        assert!(cache.get(Path::new("/huge"), &v1, Coding::Gzip, 6).is_none());
    }
}
