//! The worker's buffers that proxied responses' field values and first body bytes are copied
//! into and split off from as shared `Bytes`: one copy, and no allocation per response.
//!
//! Two buffers take turns: when the current one has no room left, the other is taken up
//! again, and by then the responses that shared it have almost always been written, so
//! `BytesMut::reserve` reclaims its allocation in place. A response still held (a slow
//! client) keeps its slices valid: the buffer then gets a new allocation, and the old one
//! goes when its last slice does.

use bytes::{Bytes, BytesMut};

/// Bytes per buffer: about a hundred small responses' values between turns.
const CHUNK: usize = 16 * 1024;

pub(super) struct ValueBuffer {
    bufs: [BytesMut; 2],
    at: usize,
}

impl ValueBuffer {
    pub(super) fn new() -> ValueBuffer {
        ValueBuffer { bufs: [BytesMut::new(), BytesMut::new()], at: 0 }
    }

    /// The buffer to write about `len` bytes into (empty), which [`ValueBuffer::split`] then
    /// hands out.
    pub(super) fn start(&mut self, len: usize) -> &mut BytesMut {
        if self.bufs[self.at].capacity() < len {
            self.at ^= 1;
            let buf = &mut self.bufs[self.at];
            buf.clear();
            buf.reserve(len.max(CHUNK));
        }
        let buf = &mut self.bufs[self.at];
        buf.clear();
        buf
    }

    /// What was written since [`ValueBuffer::start`].
    pub(super) fn split(&mut self) -> Bytes {
        self.bufs[self.at].split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The buffers' allocations are used again once their slices are gone; a slice still
    /// held stays intact.
    #[test]
    fn reuses_its_two_allocations_and_keeps_slices_intact() {
        let mut values = ValueBuffer::new();
        let mut held = Vec::new();
        let mut first_ptrs = std::collections::HashSet::new();
        let mut later_ptrs = std::collections::HashSet::new();
        for i in 0..10_000usize {
            let len = 1 + i % 300;
            let fill = (i % 251) as u8;
            values.start(len).extend(std::iter::repeat_n(fill, len));
            let bytes = values.split();
            assert_eq!(bytes.len(), len);
            let base = bytes.as_ptr() as usize & !(CHUNK - 1);
            if i < 1_000 {
                first_ptrs.insert(base);
            } else {
                later_ptrs.insert(base);
            }
            // Keep the last few, as responses in flight are.
            held.push((fill, bytes));
            if held.len() > 8 {
                held.remove(0);
            }
            assert!(held.iter().all(|(f, b)| b.iter().all(|x| x == f)));
        }
        // Two allocations in turn (each may span two aligned blocks), not one per turn.
        assert!(later_ptrs.len() <= 4, "{} blocks", later_ptrs.len());
    }
}
