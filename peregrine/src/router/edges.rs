//! The node arena, and the static children of each node stored together in one block of it.
//!
//! A node's static children are not referenced from it one by one: they *are* the slots of a
//! block of the arena that the node points to. One child is a block of one slot, compared
//! directly. More children make a block of 2^b slots, an open-addressed hash table of the
//! child nodes themselves (linear probing, at most half full). So one step of a lookup reads
//! the probed slot, which holds the child's label and everything the next step needs: one
//! cache line per static segment, where a table of edges and then the child node cost two. A
//! node with 32,768 static children still costs one probe, like a node with two.
//!
//! A block that would pass half full moves to a block twice its size; the block it leaves goes
//! to a free list for the next block of that size. Only the parent points into a block, so a
//! move rewrites one pointer. Single slots (a first static child, a parameter or catch-all
//! child, the root) are always appended, never reused: the nodes one insert adds then sit one
//! after the other, and a route's own chain of nodes shares cache lines.

use super::segment::{hash_label, slot_of};

/// "No such child / no route here".
pub(crate) const NONE: u32 = u32::MAX;
/// `Node::statics`: no static child.
pub(crate) const NO_STATICS: u32 = u32::MAX;
/// `Node::statics` is `start | bits << START_BITS`: the block's first slot and log2 size.
const START_BITS: u32 = 27;
const START_MASK: u32 = (1 << START_BITS) - 1;
/// The most slots the arena may hold (a block's start must fit in [`START_BITS`]).
pub(crate) const MAX_SLOTS: usize = 1 << START_BITS;
/// `Node::len` of a vacant slot (no label is that long: paths are shorter than `u32::MAX`).
const VACANT: u32 = u32::MAX;

/// What a lookup reads at each node: 32 bytes, two to a cache line.
///
/// Aligned to its size, so that no node straddles two cache lines: the allocator aligns a
/// large buffer to 16 bytes only, and half the nodes of a 16-mod-64 buffer would then cost two
/// lines (their label in one, their links in the next).
#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
pub(crate) struct Node {
    /// First 8 bytes of the label of the static edge into this node (zero-padded). For a
    /// parameter or catch-all node, unused.
    pub word: u64,
    /// Length of that label; for a parameter or catch-all node, the length of its name.
    pub len: u32,
    /// Offset in `Tree::tails` of that label's bytes `8..`; for a parameter or catch-all node,
    /// the offset of its name in `Tree::text`.
    pub tail: u32,
    pub param: u32,
    pub catch: u32,
    pub route: u32,
    /// [`NO_STATICS`], or this node's block of static children (see [`Arena::static_child`]).
    pub statics: u32,
}

/// A node with no children and no route.
pub(crate) const NODE: Node =
    Node { word: 0, len: 0, tail: 0, param: NONE, catch: NONE, route: NONE, statics: NO_STATICS };
const HOLE: Node = Node { len: VACANT, ..NODE };

#[inline(always)]
fn block(statics: u32) -> (usize, u32) {
    ((statics & START_MASK) as usize, statics >> START_BITS)
}

/// The arena: nodes in blocks, with free lists of vacated blocks.
#[derive(Clone, Debug, Default)]
pub(crate) struct Arena {
    pub nodes: Vec<Node>,
    /// Parallel to `nodes`: how many static children the node in that slot has (insert time
    /// only; moves with its node).
    counts: Vec<u32>,
    /// `free[b]`: first slots of vacant blocks of 2^b slots.
    free: Vec<Vec<u32>>,
}

impl Arena {
    /// The static child of `n` whose label is `path[start..end]` (first word `word`), given
    /// `tails` for labels longer than 8 bytes.
    #[inline(always)]
    pub(crate) fn static_child(
        &self,
        statics: u32,
        tails: &[u8],
        path: &[u8],
        start: usize,
        end: usize,
        word: u64,
    ) -> Option<u32> {
        let (first, bits) = block(statics);
        if bits == 0 {
            let c = self.nodes.get(first)?;
            return is_label(c, tails, path, start, end, word).then_some(first as u32);
        }
        // `start` is one past the end for the empty segment after a virtual trailing slash.
        let hash = hash_label(word, path.get(start..end).unwrap_or_default());
        let mask = (1usize << bits) - 1;
        let mut i = slot_of(hash, bits);
        loop {
            let c = self.nodes.get(first + i)?;
            if c.len == VACANT {
                return None;
            }
            if is_label(c, tails, path, start, end, word) {
                return Some((first + i) as u32);
            }
            i = (i + 1) & mask;
        }
    }

    /// Some static child of `node` (used only to name a conflicting route).
    pub(crate) fn any_static(&self, node: u32) -> Option<u32> {
        let statics = self.nodes.get(node as usize)?.statics;
        if statics == NO_STATICS {
            return None;
        }
        let (first, bits) = block(statics);
        (first..first + (1 << bits)).find(|&i| self.nodes[i].len != VACANT).map(|i| i as u32)
    }

    /// A new single slot holding `node` (the root, or a parameter or catch-all child).
    pub(crate) fn push(&mut self, node: Node) -> u32 {
        let at = self.alloc(0);
        self.nodes[at] = node;
        at as u32
    }

    /// Adds `child` (label hash `hash`, a label `parent` does not have yet) to the static
    /// children of `parent`; returns its slot.
    pub(crate) fn attach_static(
        &mut self,
        parent: u32,
        child: Node,
        hash: u32,
        tails: &[u8],
    ) -> u32 {
        let p = parent as usize;
        let (statics, count) = (self.nodes[p].statics, self.counts[p]);
        if statics == NO_STATICS {
            let at = self.alloc(0);
            self.nodes[at] = child;
            self.nodes[p].statics = at as u32;
            self.counts[p] = 1;
            return at as u32;
        }
        let (mut first, mut bits) = block(statics);
        if (count as usize + 1) * 2 > 1 << bits {
            // Move to a block twice the size (a single child goes to a block of 4).
            let new_bits = (bits + 1).max(2);
            let new_first = self.alloc(new_bits);
            for i in first..first + (1 << bits) {
                let moved = self.nodes[i];
                if moved.len != VACANT {
                    let h = label_hash(&moved, tails);
                    let at = place(&self.nodes, new_first, new_bits, h);
                    self.nodes[at] = moved;
                    self.counts[at] = self.counts[i];
                    self.nodes[i] = HOLE;
                    self.counts[i] = 0;
                }
            }
            if bits > 0 {
                // Single slots are never reused (see `alloc`).
                self.release(first, bits);
            }
            (first, bits) = (new_first, new_bits);
            self.nodes[p].statics = first as u32 | bits << START_BITS;
        }
        let at = place(&self.nodes, first, bits, hash);
        self.nodes[at] = child;
        self.counts[p] = count + 1;
        at as u32
    }

    /// First slot of a vacant block of 2^bits slots.
    fn alloc(&mut self, bits: u32) -> usize {
        // Single slots are always appended (see the module docs).
        if bits > 0
            && let Some(at) = self.free.get_mut(bits as usize).and_then(Vec::pop)
        {
            return at as usize;
        }
        let at = self.nodes.len();
        self.nodes.resize(at + (1 << bits), HOLE);
        self.counts.resize(at + (1 << bits), 0);
        at
    }

    fn release(&mut self, first: usize, bits: u32) {
        let b = bits as usize;
        if self.free.len() <= b {
            self.free.resize(b + 1, Vec::new());
        }
        self.free[b].push(first as u32);
    }
}

/// Whether the label of node `c` is `path[start..end]`.
#[inline(always)]
fn is_label(c: &Node, tails: &[u8], path: &[u8], start: usize, end: usize, word: u64) -> bool {
    let len = end - start;
    if c.word != word || c.len as usize != len {
        return false;
    }
    len <= 8 || {
        let t = c.tail as usize;
        tails.get(t..t + len - 8) == path.get(start + 8..end)
    }
}

/// The hash of a static node's label, as [`hash_label`] gives it for the path segment.
fn label_hash(n: &Node, tails: &[u8]) -> u32 {
    let (t, l) = (n.tail as usize, n.len as usize);
    let mut label = n.word.to_le_bytes()[..l.min(8)].to_vec();
    label.extend_from_slice(tails.get(t..t + l.saturating_sub(8)).unwrap_or_default());
    hash_label(n.word, &label)
}

/// The vacant slot where a label with hash `hash` goes in a block (which has one).
fn place(nodes: &[Node], first: usize, bits: u32, hash: u32) -> usize {
    let mask = (1usize << bits) - 1;
    let mut i = slot_of(hash, bits);
    while nodes[first + i].len != VACANT {
        i = (i + 1) & mask;
    }
    first + i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::segment::first_word;

    fn node(label: &str, tails: &mut Vec<u8>) -> (Node, u32) {
        let b = label.as_bytes();
        let word = first_word(b);
        let n = Node { word, len: b.len() as u32, tail: tails.len() as u32, ..NODE };
        tails.extend_from_slice(b.get(8..).unwrap_or_default());
        (n, hash_label(word, b))
    }

    fn find(a: &Arena, parent: u32, label: &str, tails: &[u8]) -> Option<u32> {
        let statics = a.nodes[parent as usize].statics;
        if statics == NO_STATICS {
            return None;
        }
        let b = label.as_bytes();
        a.static_child(statics, tails, b, 0, b.len(), first_word(b))
    }

    #[test]
    fn finds_every_child_through_block_moves_and_reuses_vacated_blocks() {
        let (mut a, mut tails) = (Arena::default(), Vec::new());
        let root = a.push(NODE);
        // Five parents, children added round-robin so blocks move while others grow; the
        // labels cross the 8-byte word (tails) and share prefixes.
        let parents: Vec<u32> = (0..5)
            .map(|i| {
                let (n, h) = node(&format!("parent{i}"), &mut tails);
                a.attach_static(root, n, h, &tails)
            })
            .collect();
        let label = |i: usize| format!("segment-{i}");
        for i in 0..3000 {
            // Parents move when the root's block grows; look them up again each time.
            let p = find(&a, root, &format!("parent{}", i % 5), &tails).unwrap();
            assert!(find(&a, p, &label(i), &tails).is_none());
            let (n, h) = node(&label(i), &mut tails);
            a.attach_static(p, n, h, &tails);
            if i % 40 == 0 {
                // More root children: the root's block keeps moving, parents populated.
                let (n, h) = node(&format!("filler{i}"), &mut tails);
                a.attach_static(root, n, h, &tails);
            }
        }
        assert_eq!(parents.len(), 5);
        // Each parent's count of children moved with it.
        for k in 0..5 {
            let p = find(&a, root, &format!("parent{k}"), &tails).unwrap() as usize;
            let (first, bits) = block(a.nodes[p].statics);
            let used = a.nodes[first..first + (1 << bits)].iter().filter(|n| n.len != VACANT);
            assert_eq!((a.counts[p], used.count()), (600, 600), "parent{k}");
        }
        for i in 0..3000 {
            let p = find(&a, root, &format!("parent{}", i % 5), &tails).unwrap();
            let c = find(&a, p, &label(i), &tails).unwrap();
            assert_eq!(a.nodes[c as usize].len as usize, label(i).len());
            let other = find(&a, root, &format!("parent{}", (i + 1) % 5), &tails).unwrap();
            assert_eq!(find(&a, other, &label(i), &tails), None, "{i}");
        }
        assert_eq!(find(&a, root, "parent", &tails), None);
        let p0 = find(&a, root, "parent0", &tails).unwrap();
        let any = a.any_static(p0).map(|c| a.nodes[c as usize].len as usize);
        assert!(any.is_some_and(|len| (9..=12).contains(&len)), "{any:?}");
        assert_eq!(a.any_static(find(&a, p0, &label(0), &tails).unwrap()), None);
        // 600 children in each parent's block: 2048 slots, at most half full; the blocks it
        // left behind add at most as much again.
        assert!(a.nodes.len() <= 5 * 4096 + 512, "{}", a.nodes.len());
        // Vacated blocks are reused: a new node's two children go to a block of 4 that some
        // parent left behind (single slots are not reused, so only the node and its first
        // child are new).
        let before = a.nodes.len();
        let fresh = a.push(NODE);
        for label in ["x", "y"] {
            let (n, h) = node(label, &mut tails);
            a.attach_static(fresh, n, h, &tails);
        }
        assert_eq!(a.nodes.len(), before + 2);
        assert!(find(&a, fresh, "x", &tails).is_some() && find(&a, fresh, "y", &tails).is_some());
    }
}
