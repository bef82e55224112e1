//! Static children of nodes with two or more of them, in one open-addressed hash table keyed
//! by (parent, label hash).
//!
//! One table for the whole tree instead of a child list per node: a node with 32,768 static
//! children costs the same single probe as a node with two, insertion never moves other
//! nodes' children, and there is one allocation instead of one per node. A slot holds only a
//! 32-bit hash tag, the parent and the child (12 bytes); the label itself is stored once, in
//! the child node, and compared there only when tag and parent agree. Linear probing at a load
//! factor of at most 1/2 keeps a miss (a segment with no static child, which then falls back
//! to a parameter) to about 2.5 slots. Nodes with a single static child never touch this table
//! (see `Node::statics` in the tree).

use super::segment::slot_of;

/// Marks an empty slot (`child`); node indexes never reach it.
const VACANT: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Slot {
    hash: u32,
    parent: u32,
    child: u32,
}

const EMPTY: Slot = Slot { hash: 0, parent: 0, child: VACANT };

/// The static-child table.
#[derive(Clone, Debug, Default)]
pub(crate) struct Edges {
    slots: Vec<Slot>,
    used: usize,
    bits: u32,
}

impl Edges {
    /// The child of `parent` with label hash `hash` for which `is_label` holds.
    #[inline]
    pub(crate) fn find(
        &self,
        parent: u32,
        hash: u32,
        is_label: impl Fn(u32) -> bool,
    ) -> Option<u32> {
        if self.bits == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = slot_of(hash, parent, self.bits);
        loop {
            let s = self.slots.get(i)?;
            if s.child == VACANT {
                return None;
            }
            if s.hash == hash && s.parent == parent && is_label(s.child) {
                return Some(s.child);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `parent --label--> child`; the caller has checked that the label is new.
    pub(crate) fn insert(&mut self, parent: u32, hash: u32, child: u32) {
        if (self.used + 1) * 2 > self.slots.len() {
            self.grow();
        }
        self.place(Slot { hash, parent, child });
        self.used += 1;
    }

    fn place(&mut self, slot: Slot) {
        let mask = self.slots.len() - 1;
        let mut i = slot_of(slot.hash, slot.parent, self.bits);
        while self.slots[i].child != VACANT {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let bits = (self.bits + 1).max(3);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; 1 << bits]);
        self.bits = bits;
        for s in old.into_iter().filter(|s| s.child != VACANT) {
            self.place(s);
        }
    }

    /// Some child of `parent` (used only to name a conflicting route).
    pub(crate) fn any_child(&self, parent: u32) -> Option<u32> {
        self.slots.iter().find(|s| s.child != VACANT && s.parent == parent).map(|s| s.child)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_child_through_growth_despite_equal_hashes() {
        let mut e = Edges::default();
        // Hash 7 for every third child: the label check must tell them apart.
        let hash = |i: u32| {
            if i % 3 == 0 { 7 } else { i.wrapping_mul(0x9E37_79B9) }
        };
        for i in 1..3000u32 {
            assert!(e.find(i % 5, hash(i), |c| c == i).is_none());
            e.insert(i % 5, hash(i), i);
        }
        for i in 1..3000u32 {
            assert_eq!(e.find(i % 5, hash(i), |c| c == i), Some(i), "{i}");
            assert_eq!(e.find(i % 5 + 1, hash(i), |c| c == i), None, "{i}");
        }
        assert!(e.slots.len() >= 6000);
        assert_eq!(e.any_child(3).map(|c| c % 5), Some(3));
    }
}
