//! A worker's pool of connection buffers, so idle connections hold none.
//!
//! A connection gives its (empty) read and write buffers back while it waits for the next
//! request and takes them again when the socket is readable. On a current-thread runtime only
//! one connection runs at a time, so a handful of pooled buffers serves thousands of kept-alive
//! connections: steady-state requests allocate nothing, and an idle connection holds no buffer
//! (but for at most [`HOLD_MAX`] connections per worker, which keep theirs).

use std::cell::{Cell, RefCell};

use bytes::BytesMut;

/// Capacity of a fresh buffer. A typical request head (browsers send 300 to 800 bytes) and a
/// 16-deep pipelined batch of small requests fit.
pub(crate) const BUF_CAPACITY: usize = 4096;

/// Buffers kept per worker; more are freed. 64 × 4 KiB = 256 KiB per worker at most.
const POOL_MAX: usize = 64;

/// Connections per worker that keep their buffers while idle (see [`BufPool::hold`]): at
/// most 64 × 8 KiB = 512 KiB per worker, the same order as the pool itself.
const HOLD_MAX: usize = 64;

/// Buffers larger than this (grown for a large head) are freed rather than pooled.
const POOL_MAX_CAPACITY: usize = 64 * 1024;

/// LIFOs of empty buffers, per worker thread: read buffers (`BytesMut`, so request heads and
/// bodies can be split off as shared `Bytes`) and write buffers (`Vec<u8>`, what the encoder
/// appends to).
#[derive(Debug, Default)]
pub(crate) struct BufPool {
    free: RefCell<Vec<BytesMut>>,
    free_write: RefCell<Vec<Vec<u8>>>,
    /// Connections currently allowed to keep their buffers while idle.
    held: Cell<usize>,
}

impl BufPool {
    /// Lets one more connection keep its buffers while it waits for its next request, if
    /// fewer than [`HOLD_MAX`] do; the connection calls [`BufPool::unhold`] when it ends.
    ///
    /// Handing buffers back and taking them again costs ~200 instructions per request for a
    /// connection that waits between requests; the first few connections of a worker skip
    /// that, while with thousands of idle connections all but these few hold no buffer.
    pub(crate) fn hold(&self) -> bool {
        let held = self.held.get();
        if held < HOLD_MAX {
            self.held.set(held + 1);
            true
        } else {
            false
        }
    }

    /// Ends a [`BufPool::hold`].
    pub(crate) fn unhold(&self) {
        self.held.set(self.held.get().saturating_sub(1));
    }

    /// An empty read buffer with at least [`BUF_CAPACITY`] bytes of room.
    pub(crate) fn take(&self) -> BytesMut {
        self.free.borrow_mut().pop().unwrap_or_else(|| BytesMut::with_capacity(BUF_CAPACITY))
    }

    /// An empty write buffer with at least [`BUF_CAPACITY`] bytes of room.
    pub(crate) fn take_write(&self) -> Vec<u8> {
        self.free_write.borrow_mut().pop().unwrap_or_else(|| Vec::with_capacity(BUF_CAPACITY))
    }

    /// Returns a write buffer; kept when of a reasonable size.
    pub(crate) fn put_write(&self, mut buf: Vec<u8>) {
        if buf.capacity() < BUF_CAPACITY || buf.capacity() > POOL_MAX_CAPACITY {
            return;
        }
        buf.clear();
        let mut free = self.free_write.borrow_mut();
        if free.len() < POOL_MAX {
            free.push(buf);
        }
    }

    /// Returns a buffer; it is kept only if empty, not shared with a live `Bytes`, and of a
    /// reasonable size.
    pub(crate) fn put(&self, mut buf: BytesMut) {
        if !buf.is_empty() || buf.capacity() > POOL_MAX_CAPACITY {
            return;
        }
        // Reclaims the whole allocation when no `Bytes` split off it is alive; otherwise the
        // buffer is still shared (a handler kept its request) and is dropped instead.
        if !buf.try_reclaim(BUF_CAPACITY) {
            return;
        }
        let mut free = self.free.borrow_mut();
        if free.len() < POOL_MAX {
            free.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recycles_only_reclaimable_buffers() {
        let pool = BufPool::default();
        let mut a = pool.take();
        a.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        let head = a.split_to(a.len()).freeze();
        pool.put(a);
        // `head` still shares the allocation: the buffer was not pooled.
        assert!(pool.free.borrow().is_empty());
        drop(head);

        let mut b = pool.take();
        b.extend_from_slice(b"xyz");
        let part = b.split_to(3).freeze();
        drop(part);
        pool.put(b);
        assert_eq!(pool.free.borrow().len(), 1);
        let c = pool.take();
        assert!(c.capacity() >= BUF_CAPACITY);
    }

    #[test]
    fn holds_are_capped() {
        let pool = BufPool::default();
        assert!((0..HOLD_MAX).all(|_| pool.hold()));
        assert!(!pool.hold());
        pool.unhold();
        assert!(pool.hold());
        assert!(!pool.hold());
    }
}
