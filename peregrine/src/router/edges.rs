//! Static children of every node in one open-addressed hash table keyed by (parent, label).
//!
//! One table for the whole tree instead of a child list per node: a node with 32,768 static
//! children costs the same single probe as a node with one, insertion never moves other nodes'
//! children, and there is one allocation instead of one per node. Linear probing at a load
//! factor of at most 1/2 keeps a miss (a segment with no static child, which then falls back to
//! a parameter) to about 2.5 slots. The first 8 bytes of each label live in the slot, so labels
//! up to 8 bytes compare without leaving it; longer labels keep their tail in a byte arena.

use super::segment::{Scanned, hash_label, slot_of};

/// Marks an empty slot (`child`); node indexes never reach it.
const VACANT: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Slot {
    word: u64,
    parent: u32,
    child: u32,
    len: u32,
    /// Offset of label bytes `8..` in the tail arena (labels longer than 8 bytes).
    tail: u32,
}

const EMPTY: Slot = Slot {
    word: 0,
    parent: 0,
    child: VACANT,
    len: 0,
    tail: 0,
};

/// The static-child table.
#[derive(Clone, Debug, Default)]
pub(crate) struct Edges {
    slots: Vec<Slot>,
    used: usize,
    bits: u32,
    /// Bytes `8..` of labels longer than 8 bytes.
    tails: Vec<u8>,
}

impl Edges {
    /// The child of `parent` whose label equals `path[start..seg.end]`.
    #[inline]
    pub(crate) fn find(
        &self,
        parent: u32,
        seg: &Scanned,
        path: &[u8],
        start: usize,
    ) -> Option<u32> {
        if self.bits == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let len = seg.end - start;
        let mut i = slot_of(seg.hash, parent, self.bits);
        loop {
            let s = self.slots.get(i)?;
            if s.child == VACANT {
                return None;
            }
            if s.word == seg.word && s.parent == parent && s.len as usize == len {
                if len <= 8 {
                    return Some(s.child);
                }
                let t = s.tail as usize;
                if self.tails.get(t..t + len - 8) == path.get(start + 8..seg.end) {
                    return Some(s.child);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The child of `parent` labelled `label` (insert-time lookup).
    pub(crate) fn find_label(&self, parent: u32, label: &[u8]) -> Option<u32> {
        let (word, hash) = hash_label(label);
        let seg = Scanned {
            end: label.len(),
            word,
            hash,
        };
        self.find(parent, &seg, label, 0)
    }

    /// Adds `parent --label--> child`; the caller has checked that the label is new.
    /// Returns `false` (changing nothing) if the tail arena would outgrow `u32` offsets.
    pub(crate) fn insert(&mut self, parent: u32, label: &[u8], child: u32) -> bool {
        // Offsets are u32: refuse a label whose tail would end past them.
        let (Ok(tail), Ok(len)) = (u32::try_from(self.tails.len()), u32::try_from(label.len()))
        else {
            return false;
        };
        if tail.checked_add(len).is_none() {
            return false;
        }
        if (self.used + 1) * 2 > self.slots.len() {
            self.grow();
        }
        if let Some(rest) = label.get(8..) {
            self.tails.extend_from_slice(rest);
        }
        let (word, hash) = hash_label(label);
        self.place(
            hash,
            Slot {
                word,
                parent,
                child,
                len,
                tail,
            },
        );
        self.used += 1;
        true
    }

    fn place(&mut self, hash: u64, slot: Slot) {
        let mask = self.slots.len() - 1;
        let mut i = slot_of(hash, slot.parent, self.bits);
        while self.slots[i].child != VACANT {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let bits = (self.bits + 1).max(3);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; 1 << bits]);
        self.bits = bits;
        let mut label = Vec::new();
        for s in old.into_iter().filter(|s| s.child != VACANT) {
            label.clear();
            let len = s.len as usize;
            label.extend_from_slice(&s.word.to_le_bytes()[..len.min(8)]);
            if len > 8 {
                let t = s.tail as usize;
                label.extend_from_slice(&self.tails[t..t + len - 8]);
            }
            let (_, hash) = hash_label(&label);
            self.place(hash, s);
        }
    }

    /// Some static child of `parent` (used only to name a conflicting route).
    pub(crate) fn any_child(&self, parent: u32) -> Option<u32> {
        self.slots
            .iter()
            .find(|s| s.child != VACANT && s.parent == parent)
            .map(|s| s.child)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_label_through_growth() {
        let mut e = Edges::default();
        let labels: Vec<String> = (0..2000)
            .map(|i| format!("seg{i}{}", "x".repeat(i % 13)))
            .collect();
        for (i, l) in labels.iter().enumerate() {
            assert!(e.find_label((i % 7) as u32, l.as_bytes()).is_none());
            assert!(e.insert((i % 7) as u32, l.as_bytes(), i as u32));
        }
        for (i, l) in labels.iter().enumerate() {
            assert_eq!(
                e.find_label((i % 7) as u32, l.as_bytes()),
                Some(i as u32),
                "{l}"
            );
            assert_eq!(e.find_label((i % 7) as u32 + 1, l.as_bytes()), None, "{l}");
        }
        assert!(e.slots.len() >= 4000);
    }
}
