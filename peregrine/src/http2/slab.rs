//! Stream storage: a slab with a free list and intrusive queues, so streams cost no allocation
//! once the slab has grown to the connection's peak (RFC 9113 §5.1.2 bounds that peak).

/// "No slot": the end of a list.
const NIL: u32 = u32::MAX;

/// How many intrusive queues every slot can be linked into.
pub const QUEUES: usize = 1;

/// A slot index. Stable while the value lives; reused after [`Slab::remove`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key(u32);

impl Key {
    /// The slot index.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Names one of the [`QUEUES`] intrusive queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queue(pub usize);

#[derive(Clone, Copy, Debug)]
struct Link {
    prev: u32,
    next: u32,
    linked: bool,
}

const UNLINKED: Link = Link { prev: NIL, next: NIL, linked: false };

#[derive(Debug)]
struct Slot<T> {
    value: Option<T>,
    next_free: u32,
    links: [Link; QUEUES],
}

#[derive(Clone, Copy, Debug)]
struct Ends {
    head: u32,
    tail: u32,
    len: usize,
}

/// A slab of `T` with a free list and [`QUEUES`] doubly linked intrusive FIFO queues over its
/// slots (O(1) push, pop and unlink; a value is in a queue at most once).
///
/// # Examples
/// ```
/// use peregrine::http2::slab::{Queue, Slab};
/// let mut s = Slab::with_capacity(4);
/// let a = s.insert("a");
/// let b = s.insert("b");
/// s.push_back(Queue(0), b);
/// s.push_back(Queue(0), a);
/// assert_eq!(s.pop_front(Queue(0)), Some(b));
/// assert_eq!(s.remove(a), Some("a")); // unlinked from every queue
/// assert_eq!(s.pop_front(Queue(0)), None);
/// let c = s.insert("c"); // reuses a's slot
/// assert_eq!(c, a);
/// ```
#[derive(Debug)]
pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: u32,
    len: usize,
    queues: [Ends; QUEUES],
}

impl<T> Slab<T> {
    /// An empty slab with room for `n` values before it allocates.
    pub fn with_capacity(n: usize) -> Slab<T> {
        Slab {
            slots: Vec::with_capacity(n),
            free: NIL,
            len: 0,
            queues: [Ends { head: NIL, tail: NIL, len: 0 }; QUEUES],
        }
    }

    /// Stores `value` in a free slot (reusing one when there is one) and returns its key.
    pub fn insert(&mut self, value: T) -> Key {
        self.len += 1;
        if self.free != NIL {
            let i = self.free;
            let slot = &mut self.slots[i as usize];
            self.free = slot.next_free;
            slot.value = Some(value);
            slot.next_free = NIL;
            return Key(i);
        }
        let i = self.slots.len() as u32;
        self.slots.push(Slot { value: Some(value), next_free: NIL, links: [UNLINKED; QUEUES] });
        Key(i)
    }

    /// Removes the value at `key`, unlinking it from every queue.
    pub fn remove(&mut self, key: Key) -> Option<T> {
        let value = self.slots.get_mut(key.index())?.value.take()?;
        for q in 0..QUEUES {
            self.unlink(Queue(q), key);
        }
        self.slots[key.index()].next_free = self.free;
        self.free = key.0;
        self.len -= 1;
        Some(value)
    }

    /// The value at `key`.
    pub fn get(&self, key: Key) -> Option<&T> {
        self.slots.get(key.index())?.value.as_ref()
    }

    /// The value at `key`, mutably.
    pub fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        self.slots.get_mut(key.index())?.value.as_mut()
    }

    /// Whether `key` is linked into `q`.
    pub fn is_queued(&self, q: Queue, key: Key) -> bool {
        self.slots.get(key.index()).is_some_and(|s| s.value.is_some() && s.links[q.0].linked)
    }

    /// Appends `key` to `q` unless it is already there or holds no value.
    pub fn push_back(&mut self, q: Queue, key: Key) {
        if self.get(key).is_none() || self.is_queued(q, key) {
            return;
        }
        let tail = self.queues[q.0].tail;
        self.slots[key.index()].links[q.0] = Link { prev: tail, next: NIL, linked: true };
        if tail == NIL {
            self.queues[q.0].head = key.0;
        } else {
            self.slots[tail as usize].links[q.0].next = key.0;
        }
        self.queues[q.0].tail = key.0;
        self.queues[q.0].len += 1;
    }

    /// How many keys `q` holds.
    pub const fn queue_len(&self, q: Queue) -> usize {
        self.queues[q.0].len
    }

    /// How many slots exist (live or free): keys are below this.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The key of slot `i` if it holds a value (to visit slots while mutating the slab).
    pub fn key_at(&self, i: usize) -> Option<Key> {
        let slot = self.slots.get(i)?;
        slot.value.as_ref().map(|_| Key(i as u32))
    }

    /// Takes the first key of `q`.
    pub fn pop_front(&mut self, q: Queue) -> Option<Key> {
        let head = self.queues[q.0].head;
        if head == NIL {
            return None;
        }
        self.unlink(q, Key(head));
        Some(Key(head))
    }

    /// Removes `key` from `q` if it is there.
    pub fn unlink(&mut self, q: Queue, key: Key) {
        let Some(slot) = self.slots.get(key.index()) else { return };
        let link = slot.links[q.0];
        if !link.linked {
            return;
        }
        if link.prev == NIL {
            self.queues[q.0].head = link.next;
        } else {
            self.slots[link.prev as usize].links[q.0].next = link.next;
        }
        if link.next == NIL {
            self.queues[q.0].tail = link.prev;
        } else {
            self.slots[link.next as usize].links[q.0].prev = link.prev;
        }
        self.slots[key.index()].links[q.0] = UNLINKED;
        self.queues[q.0].len -= 1;
    }
}

/// Views the connection does not use: for the tests and the `unstable` API.
#[cfg_attr(not(any(test, fuzzing, feature = "unstable")), allow(dead_code))]
impl<T> Slab<T> {
    /// How many values are stored.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether no value is stored.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every stored value with its key, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (Key, &T)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| Some((Key(i as u32), s.value.as_ref()?)))
    }

    /// The first key of `q`, left in place.
    pub fn front(&self, q: Queue) -> Option<Key> {
        let head = self.queues[q.0].head;
        (head != NIL).then_some(Key(head))
    }
}

#[cfg(test)]
mod tests {
    use super::{Key, Queue, Slab};

    #[test]
    fn slots_are_reused_last_freed_first() {
        let mut s = Slab::with_capacity(0);
        let keys: Vec<Key> = (0..5).map(|i| s.insert(i)).collect();
        assert_eq!(s.len(), 5);
        assert_eq!(s.remove(keys[1]), Some(1));
        assert_eq!(s.remove(keys[3]), Some(3));
        assert_eq!(s.remove(keys[3]), None, "double remove");
        assert_eq!(s.insert(30), keys[3]);
        assert_eq!(s.insert(10), keys[1]);
        assert_eq!(s.insert(5).index(), 5);
        assert_eq!(s.iter().map(|(_, v)| *v).collect::<Vec<_>>(), [0, 10, 2, 30, 4, 5]);
    }

    #[test]
    fn queues_are_fifo_dedup_and_survive_unlink_anywhere() {
        let mut s = Slab::with_capacity(8);
        let k: Vec<Key> = (0..6).map(|i| s.insert(i)).collect();
        let q = Queue(0);
        for &key in &k {
            s.push_back(q, key);
        }
        s.push_back(q, k[0]); // already queued: no duplicate
        assert_eq!(s.queue_len(q), 6);
        s.unlink(q, k[0]); // head
        s.unlink(q, k[5]); // tail
        s.unlink(q, k[2]); // middle
        s.remove(k[3]); // removal unlinks
        assert!(!s.is_queued(q, k[3]));
        let mut order = Vec::new();
        while let Some(key) = s.pop_front(q) {
            order.push(*s.get(key).unwrap());
        }
        assert_eq!(order, [1, 4]);
        assert_eq!(s.queue_len(q), 0);
        // The queue works again after emptying.
        s.push_back(q, k[4]);
        assert_eq!(s.front(q), Some(k[4]));
        assert_eq!(s.pop_front(q), Some(k[4]));
        assert_eq!(s.front(q), None);
    }

    #[test]
    fn steady_churn_does_not_grow_the_slab() {
        let mut s = Slab::with_capacity(4);
        let mut live: Vec<Key> = (0..4).map(|i| s.insert(i)).collect();
        for i in 0..10_000 {
            let k = live.remove(i % live.len());
            s.remove(k);
            let k = s.insert(i);
            s.push_back(Queue(0), k);
            live.push(k);
        }
        assert!(s.slots.capacity() <= 4 && s.len() == 4);
    }
}
