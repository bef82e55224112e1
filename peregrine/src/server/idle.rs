//! A worker's idle table: an entry per open connection; the ones waiting between requests are
//! linked in the order they went idle, so the longest-idle one is found at once
//! when the connection limit is reached, and every waiting one is woken when a drain begins.
//!
//! Each wait between requests used to register with a `Notify` (a lock and a list insert,
//! then a removal: about 260 instructions per request at one request per wait); here going
//! idle is a waker compare and a list push, going busy an unlink.

use std::task::Waker;

/// No entry.
const NIL: u32 = u32::MAX;

#[derive(Debug)]
struct IdleEntry {
    /// The connection's waker while it waits (between requests, or inside a head).
    waker: Option<Waker>,
    /// Neighbours in the idle list (older, newer).
    prev: u32,
    next: u32,
    /// In the idle list: waiting for its next request.
    idle: bool,
    /// Chosen to be closed to make room for a new connection.
    evict: bool,
    /// Held by an open connection.
    used: bool,
}

/// The idle table of one worker: an entry per open connection.
#[derive(Debug)]
pub(crate) struct IdleTable {
    entries: Vec<IdleEntry>,
    free: Vec<u32>,
    /// The longest-idle connection, and the most recently idle one.
    oldest: u32,
    newest: u32,
    idle: usize,
}

impl Default for IdleTable {
    fn default() -> Self {
        IdleTable { entries: Vec::new(), free: Vec::new(), oldest: NIL, newest: NIL, idle: 0 }
    }
}

impl IdleTable {
    /// An entry for a new connection: its index.
    pub(crate) fn take(&mut self) -> u32 {
        let fresh =
            IdleEntry { waker: None, prev: NIL, next: NIL, idle: false, evict: false, used: true };
        // Free indices past the end were dropped with the entries they named.
        while let Some(i) = self.free.pop() {
            if let Some(entry) = self.entries.get_mut(i as usize) {
                *entry = fresh;
                return i;
            }
        }
        self.entries.push(fresh);
        (self.entries.len() - 1) as u32
    }

    /// Gives back the entry of a closed connection.
    pub(crate) fn put(&mut self, i: u32) {
        self.busy(i);
        let Some(entry) = self.entries.get_mut(i as usize) else { return };
        entry.waker = None;
        entry.used = false;
        self.free.push(i);
        // Unused entries at the end go, and after a burst of connections the memory they held
        // (a quarter used: halve the capacity; amortised, as a vector grows).
        while self.entries.last().is_some_and(|s| !s.used) {
            self.entries.pop();
        }
        if self.entries.capacity() > 64 && self.entries.len() < self.entries.capacity() / 4 {
            let len = self.entries.len();
            self.entries.shrink_to(len * 2);
            self.free.retain(|&i| (i as usize) < len);
            self.free.shrink_to(self.free.len() * 2);
        }
    }

    /// Registers the waker of connection `i`, waiting (see [`IdleTable::idle`]).
    #[inline]
    pub(crate) fn watch(&mut self, i: u32, waker: &Waker) {
        if let Some(entry) = self.entries.get_mut(i as usize) {
            match &entry.waker {
                Some(w) if w.will_wake(waker) => {}
                _ => entry.waker = Some(waker.clone()),
            }
        }
    }

    /// Connection `i` waits for its next request: it joins the idle list as the newest.
    pub(crate) fn idle(&mut self, i: u32) {
        let Some(entry) = self.entries.get_mut(i as usize) else { return };
        if entry.idle || entry.evict {
            return;
        }
        entry.idle = true;
        entry.prev = self.newest;
        entry.next = NIL;
        match self.entries.get_mut(self.newest as usize) {
            Some(newest) => newest.next = i,
            None => self.oldest = i,
        }
        self.newest = i;
        self.idle += 1;
    }

    /// Connection `i` has a request to serve: it leaves the idle list.
    #[inline]
    pub(crate) fn busy(&mut self, i: u32) {
        let Some(entry) = self.entries.get_mut(i as usize) else { return };
        if !entry.idle {
            return;
        }
        entry.idle = false;
        let (prev, next) = (entry.prev, entry.next);
        match self.entries.get_mut(prev as usize) {
            Some(p) => p.next = next,
            None => self.oldest = next,
        }
        match self.entries.get_mut(next as usize) {
            Some(n) => n.prev = prev,
            None => self.newest = prev,
        }
        self.idle -= 1;
    }

    /// Connections waiting for their next request.
    pub(crate) fn idle_count(&self) -> usize {
        self.idle
    }

    /// Marks the longest-idle connection for closing and wakes it; false when none is idle.
    pub(crate) fn evict_oldest(&mut self) -> bool {
        let i = self.oldest;
        if i == NIL {
            return false;
        }
        self.busy(i);
        let entry = &mut self.entries[i as usize];
        entry.evict = true;
        if let Some(w) = entry.waker.take() {
            w.wake();
        }
        true
    }

    /// Whether connection `i` was chosen to be closed.
    #[inline]
    pub(crate) fn evicted(&self, i: u32) -> bool {
        self.entries.get(i as usize).is_some_and(|s| s.evict)
    }

    /// The wakers of every waiting connection (to wake them all at once).
    pub(crate) fn take_wakers(&mut self) -> Vec<Waker> {
        self.entries.iter_mut().filter_map(|s| s.waker.take()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_idle_connection_is_evicted_first() {
        let mut s = IdleTable::default();
        let [a, b, c] = [s.take(), s.take(), s.take()];
        s.idle(a);
        s.idle(b);
        s.idle(c);
        // `a` serves a request, then waits again: now the newest.
        s.busy(a);
        s.idle(a);
        assert_eq!(s.idle_count(), 3);
        assert!(s.evict_oldest());
        assert!(s.evicted(b));
        assert!(s.evict_oldest());
        assert!(s.evicted(c));
        assert!(s.evict_oldest());
        assert!(s.evicted(a));
        assert!(!s.evict_oldest());
        assert_eq!(s.idle_count(), 0);
    }

    #[test]
    fn busy_and_closed_connections_are_never_evicted() {
        let mut s = IdleTable::default();
        let [a, b] = [s.take(), s.take()];
        s.idle(a);
        s.idle(b);
        s.busy(a);
        s.put(b);
        assert_eq!(s.idle_count(), 0);
        assert!(!s.evict_oldest());
        // A reused entry starts clean.
        let c = s.take();
        assert_eq!(c, b);
        assert!(!s.evicted(c));
    }

    #[test]
    fn entries_shrink_after_a_burst() {
        let mut s = IdleTable::default();
        let taken: Vec<u32> = (0..5000).map(|_| s.take()).collect();
        for &i in &taken[10..] {
            s.put(i);
        }
        assert!(s.entries.len() < 5000, "{} entries kept", s.entries.len());
        for &i in &taken[..10] {
            s.idle(i);
        }
        assert_eq!(s.idle_count(), 10);
    }
}
