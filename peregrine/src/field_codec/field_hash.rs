//! The encoders' dynamic-table index (HPACK's and QPACK's): a field's name, and its name and
//! value, hashed into chains that run from the newest entry of a bucket to older ones, so the
//! newest entry holding them is found without walking the table.

use super::table::{Entry, Table};

/// Chain heads per index.
const BUCKETS: usize = 128;

/// Hash chain links of one dynamic entry (absolute ids + 1; 0 ends a chain): the next older
/// entry in the same bucket.
#[derive(Clone, Copy, Default)]
pub(crate) struct Links {
    nv_hash: u32,
    name_hash: u32,
    nv_next: u64,
    name_next: u64,
}

/// Which chain a lookup follows.
#[derive(Clone, Copy)]
pub(crate) enum Chain {
    /// Entries with the name (its hash given).
    Name(u64),
    /// Entries with the name and the value (their hash given).
    NameValue(u64),
}

/// The newest entry (id + 1) of each (name, value) bucket and of each name bucket.
pub(crate) struct Chains {
    nv_heads: [u64; BUCKETS],
    name_heads: [u64; BUCKETS],
}

impl Chains {
    pub(crate) const fn new() -> Chains {
        Chains { nv_heads: [0; BUCKETS], name_heads: [0; BUCKETS] }
    }

    /// Inserts `(name, value)` into `table` (see [`Table::insert`]) and links it at the head
    /// of its two chains. Returns its absolute id.
    pub(crate) fn insert(
        &mut self,
        table: &mut Table<Links>,
        name: &[u8],
        value: &[u8],
        known: u8,
        name_hash: u64,
        nv_hash: u64,
    ) -> Option<u64> {
        let (nb, vb) = (name_hash as usize % BUCKETS, nv_hash as usize % BUCKETS);
        let links = Links {
            nv_hash: nv_hash as u32,
            name_hash: name_hash as u32,
            nv_next: self.nv_heads[vb],
            name_next: self.name_heads[nb],
        };
        let new = table.insert(name, value, known, links)?;
        self.nv_heads[vb] = new + 1;
        self.name_heads[nb] = new + 1;
        Some(new)
    }

    /// The absolute id of the newest live entry on `chain` whose stored hash matches and that
    /// `accept` takes (the caller compares the bytes). A chain runs from newer to older
    /// entries, so the first evicted one ends it.
    #[inline]
    pub(crate) fn find(
        &self,
        table: &Table<Links>,
        chain: Chain,
        accept: impl Fn(u64, &Entry<Links>) -> bool,
    ) -> Option<u64> {
        let mut link = match chain {
            Chain::Name(h) => self.name_heads[h as usize % BUCKETS],
            Chain::NameValue(h) => self.nv_heads[h as usize % BUCKETS],
        };
        while link != 0 {
            let id = link - 1;
            let e = table.by_id(id)?;
            let (same_hash, next) = match chain {
                Chain::Name(h) => (e.extra.name_hash == h as u32, e.extra.name_next),
                Chain::NameValue(h) => (e.extra.nv_hash == h as u32, e.extra.nv_next),
            };
            if same_hash && accept(id, e) {
                return Some(id);
            }
            link = next;
        }
        None
    }
}

/// A fast 64-bit hash of `bytes` (eight bytes per multiply), seeded so the name's hash
/// seeds the (name, value) hash.
#[inline]
pub(crate) fn hash(seed: u64, bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (seed ^ bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    h ^ (h >> 32)
}
