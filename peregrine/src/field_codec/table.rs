//! The dynamic table (RFC 7541 §2.3.2, §4; RFC 9204 §3.2): a FIFO of entries, newest first,
//! evicted from the oldest end to keep the sum of entry sizes (name + value + 32, RFC 7541 §4.1,
//! RFC 9204 §3.2.1) within the maximum.
//!
//! Storage allocates nothing once warm: the entries' bytes (name then value, contiguous, so one
//! copy serves a lookup) sit in one ring buffer of at least twice the maximum size, and their
//! descriptors in a power-of-two ring addressed by absolute insertion number. With twice the
//! room, an entry that does not fit at the write position always fits at the start of the
//! buffer: the live bytes, at most the maximum size less the new entry's, lie past the maximum
//! size there (the proof is in `place`). A layout that would not fit (only after the maximum
//! grew) is repaired by copying the live entries into a larger buffer.

/// One entry's descriptor; `X` is per-entry data the owner keeps (the decoder: the entry's
/// field error; the encoder: hash chain links).
#[derive(Clone, Copy, Default)]
pub(crate) struct Entry<X> {
    /// Where the name starts in the byte ring; the value follows it.
    pub off: usize,
    pub name_len: usize,
    pub value_len: usize,
    /// The static name id of the name (0: not a static name).
    pub known: u8,
    pub extra: X,
}

impl<X> Entry<X> {
    /// The entry's size as RFC 7541 §4.1 counts it.
    #[inline]
    pub fn size(&self) -> usize {
        self.name_len + self.value_len + 32
    }

    /// Bytes the entry occupies in the ring: at least one, so entries have distinct offsets
    /// and the oldest and newest order the ring even for an empty name and value.
    #[inline]
    fn stored(&self) -> usize {
        (self.name_len + self.value_len).max(1)
    }
}

/// The dynamic table.
pub(crate) struct Table<X> {
    bytes: Vec<u8>,
    /// Descriptor of absolute entry `id` at `ring[id & (ring.len() - 1)]`.
    ring: Vec<Entry<X>>,
    /// Absolute number of the next entry inserted.
    inserted: u64,
    count: usize,
    size: usize,
    max_size: usize,
}

impl<X: Copy + Default> Table<X> {
    /// An empty table with maximum size `max_size`; allocates nothing until the first insert.
    pub fn new(max_size: usize) -> Self {
        Table { bytes: Vec::new(), ring: Vec::new(), inserted: 0, count: 0, size: 0, max_size }
    }

    /// The maximum size (RFC 7541 §4.2).
    #[inline]
    pub fn max_size(&self) -> usize {
        self.max_size
    }

    /// The current size (§4.1).
    #[cfg_attr(not(test), allow(dead_code))]
    #[inline]
    pub fn size(&self) -> usize {
        self.size
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.count
    }

    /// How many entries were ever inserted: the absolute id of the next one (QPACK's Insert
    /// Count, RFC 9204 §3.2.4).
    #[inline]
    pub fn inserted(&self) -> u64 {
        self.inserted
    }

    /// The absolute id of the oldest live entry (`inserted()` when empty).
    #[inline]
    pub fn oldest(&self) -> u64 {
        self.inserted - self.count as u64
    }

    /// Sets the maximum size, evicting entries until the table fits (§4.3).
    pub fn set_max_size(&mut self, max_size: usize) {
        self.max_size = max_size;
        while self.size > max_size {
            self.evict();
        }
    }

    /// Entry at 0-based dynamic position `i` (0 = newest; HPACK index `62 + i`).
    #[inline]
    pub fn get(&self, i: usize) -> Option<&Entry<X>> {
        if i >= self.count {
            return None;
        }
        Some(&self.ring[(self.inserted - 1 - i as u64) as usize & (self.ring.len() - 1)])
    }

    /// The live entry with absolute id `id`, if it is still in the table.
    #[inline]
    pub fn by_id(&self, id: u64) -> Option<&Entry<X>> {
        if id >= self.inserted || self.inserted - id > self.count as u64 {
            return None;
        }
        Some(&self.ring[id as usize & (self.ring.len() - 1)])
    }

    /// The dynamic position (0 = newest) of live entry `id`.
    #[inline]
    pub fn position(&self, id: u64) -> usize {
        (self.inserted - 1 - id) as usize
    }

    /// Name then value of `e`, contiguous.
    #[inline]
    pub fn bytes(&self, e: &Entry<X>) -> &[u8] {
        &self.bytes[e.off..e.off + e.name_len + e.value_len]
    }

    /// The name of `e`.
    #[inline]
    pub fn name(&self, e: &Entry<X>) -> &[u8] {
        &self.bytes[e.off..e.off + e.name_len]
    }

    /// The value of `e`.
    #[inline]
    pub fn value(&self, e: &Entry<X>) -> &[u8] {
        &self.bytes[e.off + e.name_len..e.off + e.name_len + e.value_len]
    }

    /// Inserts `(name, value)` as the newest entry, evicting as §4.4 says. Returns the new
    /// entry's absolute id, or `None` when the entry is larger than the maximum size: then
    /// the table is left empty ("an attempt to add an entry larger than the maximum size
    /// causes the table to be emptied of all existing entries and results in an empty
    /// table"). `name` and `value` must not borrow from the table (an entry about to be
    /// evicted may be the one they name: §4.4; callers copy first).
    pub fn insert(&mut self, name: &[u8], value: &[u8], known: u8, extra: X) -> Option<u64> {
        let size = name.len() + value.len() + 32;
        if size > self.max_size {
            self.clear();
            return None;
        }
        while self.size + size > self.max_size {
            self.evict();
        }
        let n = name.len() + value.len();
        let off = self.place(n.max(1));
        self.bytes[off..off + name.len()].copy_from_slice(name);
        self.bytes[off + name.len()..off + n].copy_from_slice(value);
        if self.count == self.ring.len() {
            self.grow_ring();
        }
        let id = self.inserted;
        let mask = self.ring.len() - 1;
        self.ring[id as usize & mask] =
            Entry { off, name_len: name.len(), value_len: value.len(), known, extra };
        self.inserted += 1;
        self.count += 1;
        self.size += size;
        Some(id)
    }

    /// Drops every entry.
    pub fn clear(&mut self) {
        self.count = 0;
        self.size = 0;
    }

    /// Drops the oldest entry.
    fn evict(&mut self) {
        if self.count == 0 {
            return;
        }
        let mask = self.ring.len() - 1;
        let oldest = self.ring[(self.inserted - self.count as u64) as usize & mask];
        self.size -= oldest.size();
        self.count -= 1;
    }

    /// The offset for `need` new bytes (after eviction).
    ///
    /// Why twice the maximum size `S` suffices: let the new entry store `n` bytes; after
    /// eviction the live entries store at most `S - n`. Unwrapped (live bytes in
    /// `[tail, write)`): if `write + n > 2S` then `write > 2S - n >= S` and
    /// `tail >= write - (S - n) > S >= n`, so `[0, n)` is free. Wrapped (live in
    /// `[tail, gap) ∪ [0, write)`, where the wrap happened because an entry of at most `S`
    /// did not fit before `2S`, so `gap > S`): `write + (gap - tail) <= S - n`, hence
    /// `write + n <= S - gap + tail < tail`, so `[write, write + n)` is free.
    fn place(&mut self, need: usize) -> usize {
        if self.count > 0 {
            let mask = self.ring.len() - 1;
            let oldest = &self.ring[(self.inserted - self.count as u64) as usize & mask];
            let newest = &self.ring[(self.inserted - 1) as usize & mask];
            let (tail, write) = (oldest.off, newest.off + newest.stored());
            if newest.off >= tail {
                if write + need <= self.bytes.len() {
                    return write;
                }
                if need <= tail {
                    return 0;
                }
            } else if write + need <= tail {
                return write;
            }
        } else if need <= self.bytes.len() {
            return 0;
        }
        self.relayout(need)
    }

    /// Copies the live entries, oldest first, to the start of a buffer of at least twice
    /// the maximum size and room for `need` more bytes; returns the offset after them. Only
    /// reached while the table warms up or after its maximum size grew.
    #[cold]
    fn relayout(&mut self, need: usize) -> usize {
        let mask = self.ring.len().wrapping_sub(1);
        let live: usize = (0..self.count)
            .map(|i| self.ring[(self.inserted - 1 - i as u64) as usize & mask].stored())
            .sum();
        let cap = (2 * self.max_size).max(live + need).max(self.bytes.len());
        let mut bytes = vec![0u8; cap];
        let mut at = 0;
        for k in (0..self.count).rev() {
            let e = &mut self.ring[(self.inserted - 1 - k as u64) as usize & mask];
            let n = e.stored();
            bytes[at..at + n].copy_from_slice(&self.bytes[e.off..e.off + n]);
            e.off = at;
            at += n;
        }
        self.bytes = bytes;
        at
    }

    /// Grows the descriptor ring (at first straight to the most entries the maximum size
    /// allows, one per 32 octets, so a warm table never grows it again), keeping every live
    /// entry at `id & mask`.
    #[cold]
    fn grow_ring(&mut self) {
        let new_len =
            (self.ring.len() * 2).max((self.max_size / 32 + 1).next_power_of_two()).max(16);
        let mut ring = vec![Entry::default(); new_len];
        let old_mask = self.ring.len().wrapping_sub(1);
        for k in 0..self.count as u64 {
            let id = self.inserted - 1 - k;
            ring[id as usize & (new_len - 1)] = self.ring[id as usize & old_mask];
        }
        self.ring = ring;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(t: &Table<()>) -> Vec<(String, String)> {
        (0..t.len())
            .map(|i| {
                let e = t.get(i).unwrap();
                (
                    String::from_utf8(t.name(e).to_vec()).unwrap(),
                    String::from_utf8(t.value(e).to_vec()).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn eviction_keeps_the_newest_within_the_maximum() {
        // Each entry: 1 + 1 + 32 = 34 octets; 100 octets hold two.
        let mut t = Table::<()>::new(100);
        for (i, v) in ["a", "b", "c", "d"].iter().enumerate() {
            assert_eq!(t.insert(b"n", v.as_bytes(), 0, ()), Some(i as u64));
        }
        assert_eq!(contents(&t), [("n".into(), "d".into()), ("n".into(), "c".into())]);
        assert_eq!(t.size(), 68);
        assert!(t.get(2).is_none());
        assert!(t.by_id(1).is_none());
        assert!(t.by_id(2).is_some());
        assert_eq!(t.position(3), 0);
        // Shrinking evicts; an entry larger than the maximum empties the table.
        t.set_max_size(40);
        assert_eq!(contents(&t), [("n".into(), "d".into())]);
        assert_eq!(t.insert(b"name", b"too-large-value", 0, ()), None);
        assert_eq!(t.len(), 0);
        assert_eq!(t.size(), 0);
        // Exactly the maximum fits.
        assert!(t.insert(b"12345", b"123", 0, ()).is_some());
        assert_eq!(t.size(), 40);
        t.set_max_size(0);
        assert_eq!(t.len(), 0);
    }

    /// The ring stays consistent over long runs of mixed sizes, including empty entries and
    /// maximum-size changes: every entry reads back as inserted, and the byte buffer stops
    /// growing once warm.
    #[test]
    fn ring_layout_survives_wrapping_and_resizing() {
        let mut t = Table::<()>::new(512);
        let mut model: std::collections::VecDeque<(Vec<u8>, Vec<u8>)> = Default::default();
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut cap_after_warmup = None;
        for round in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if round % 2500 == 1999 {
                let m = [512, 100, 300, 0, 512][(round / 2500) % 5];
                t.set_max_size(m);
                while model.iter().map(|(n, v)| n.len() + v.len() + 32).sum::<usize>() > m {
                    model.pop_back();
                }
            }
            let nl = (seed % 20) as usize;
            let vl = ((seed >> 8) % if seed % 7 == 0 { 600 } else { 90 }) as usize;
            let name: Vec<u8> = (0..nl).map(|i| b'a' + ((round + i) % 26) as u8).collect();
            let value: Vec<u8> = (0..vl).map(|i| (round * 7 + i) as u8).collect();
            let fits = nl + vl + 32 <= t.max_size();
            assert_eq!(t.insert(&name, &value, 0, ()).is_some(), fits);
            if fits {
                model.push_front((name, value));
                while model.iter().map(|(n, v)| n.len() + v.len() + 32).sum::<usize>()
                    > t.max_size()
                {
                    model.pop_back();
                }
            } else {
                model.clear();
            }
            assert_eq!(t.len(), model.len());
            for (i, (n, v)) in model.iter().enumerate() {
                let e = t.get(i).unwrap();
                assert_eq!((t.name(e), t.value(e)), (&n[..], &v[..]), "round {round} entry {i}");
            }
            if round == 1500 {
                cap_after_warmup = Some(t.bytes.capacity());
            }
            if (1500..1999).contains(&round) {
                assert_eq!(
                    Some(t.bytes.capacity()),
                    cap_after_warmup,
                    "no growth at a steady maximum"
                );
            }
        }
    }
}
