//! [`Transmit`]: frames queued for the wire as octets (headers, short payloads, control frames)
//! with large payloads spliced in as shared [`Bytes`], so that a server echoing a message it
//! received sends the receive buffer's own bytes instead of copying them into an output
//! buffer. A driver writes it with one vectored write (`writev(2)`), or copies it where its
//! transport takes only one buffer (TLS encrypts into its own records anyway, HTTP/2 DATA).
//!
//! Sans-I/O: it is a [`bytes::Buf`], written by whoever drives the connection.

use std::collections::VecDeque;
use std::io::IoSlice;

use bytes::{Buf, Bytes};

/// A shared payload: it goes on the wire right after `octets[..at]`.
#[derive(Clone, Debug)]
struct Shared {
    at: usize,
    payload: Bytes,
}

/// Frames in order, ready to write: frame octets with shared payloads spliced in, and how far
/// they were written. A [`Buf`]: [`Buf::chunks_vectored`] gives the segments in wire order,
/// [`Buf::advance`] consumes what a write took (any part of a header or payload).
///
/// Filled by [`Conn::poll_transmit_vectored`](crate::ws::Conn::poll_transmit_vectored).
/// Once written whole it keeps its capacity (no allocation per message in a steady state).
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use std::time::Instant;
/// use bytes::{Buf, Bytes};
/// use peregrine::ws::{Config, Conn, Role, Transmit};
///
/// let config = Arc::new(Config::default());
/// let mut server = Conn::new(Role::Server, config, None, [0; 32], Instant::now());
/// let payload = Bytes::from(vec![7u8; 4096]);
/// server.send_binary_bytes(payload.clone()).unwrap();
/// let mut out = Transmit::default();
/// server.poll_transmit_vectored(&mut out);
/// assert_eq!(out.remaining(), 4 + 4096);
/// // The header's octets, then the payload itself, not a copy.
/// assert_eq!(out.chunk(), &[0x82, 126, 0x10, 0x00]);
/// out.advance(4);
/// assert_eq!(out.chunk().as_ptr(), payload.as_ptr());
/// out.advance(4096);
/// assert!(out.is_empty());
/// ```
#[derive(Debug, Default)]
pub struct Transmit {
    /// Frame octets; `octets[..pos]` are written.
    octets: Vec<u8>,
    pos: usize,
    /// Shared payloads in wire order (`at` never decreasing, never below `pos`); the front's
    /// written part is advanced off it.
    shared: VecDeque<Shared>,
    /// Octets of `shared` not written.
    shared_len: usize,
}

impl Transmit {
    /// Nothing queued.
    pub fn new() -> Transmit {
        Transmit::default()
    }

    /// Octets not written yet.
    #[inline]
    pub fn len(&self) -> usize {
        self.octets.len() - self.pos + self.shared_len
    }

    /// Whether everything was written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops what is queued; the capacity stays.
    pub fn clear(&mut self) {
        self.octets.clear();
        self.pos = 0;
        self.shared.clear();
        self.shared_len = 0;
    }

    /// The frame octets, to append a frame's header or whole frame to (after the last shared
    /// payload).
    #[inline]
    pub(super) fn octets_mut(&mut self) -> &mut Vec<u8> {
        &mut self.octets
    }

    /// Appends `payload` as it is, after the octets queued so far.
    pub(super) fn push_shared(&mut self, payload: Bytes) {
        if payload.is_empty() {
            return;
        }
        self.shared_len += payload.len();
        self.shared.push_back(Shared { at: self.octets.len(), payload });
    }

    /// Moves everything `other` has not written to the end of this one. When this one is
    /// empty the two swap their buffers: nothing is copied, and both keep their capacity.
    pub fn append(&mut self, other: &mut Transmit) {
        if self.is_empty() {
            // Empty means no octets and no shared payload left (`advance` clears them once
            // written): `other` gets the empty buffers back.
            std::mem::swap(&mut self.octets, &mut other.octets);
            std::mem::swap(&mut self.shared, &mut other.shared);
            self.pos = std::mem::take(&mut other.pos);
            self.shared_len = std::mem::take(&mut other.shared_len);
            return;
        }
        let base = self.octets.len();
        self.octets.extend_from_slice(&other.octets[other.pos..]);
        for s in other.shared.drain(..) {
            self.shared.push_back(Shared { at: base + (s.at - other.pos), payload: s.payload });
        }
        self.shared_len += other.shared_len;
        other.clear();
    }

    /// Appends everything not written to `dst` as one run of octets (shared payloads copied)
    /// and empties this one. When `dst` is empty and nothing is shared, the buffers are
    /// swapped instead.
    pub fn copy_into(&mut self, dst: &mut Vec<u8>) {
        if dst.is_empty() && self.shared.is_empty() && self.pos == 0 {
            std::mem::swap(dst, &mut self.octets);
            return;
        }
        dst.reserve(self.len());
        while self.has_remaining() {
            let n = self.chunk().len();
            dst.extend_from_slice(self.chunk());
            self.advance(n);
        }
    }

    /// Everything not written as one [`Bytes`] (for a transport that takes whole buffers,
    /// an HTTP/2 stream's DATA), leaving this one empty: the octets without a copy when
    /// nothing is shared.
    pub fn take_bytes(&mut self) -> Bytes {
        let mut v = Vec::new();
        self.copy_into(&mut v);
        Bytes::from(v)
    }

    /// The buffers' capacity: octets, and slots for shared payloads.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.octets.capacity() + self.shared.capacity()
    }

    /// Returns the buffers' memory if nothing is queued.
    pub fn shrink(&mut self) {
        if self.is_empty() {
            *self = Transmit::default();
        }
    }
}

impl Buf for Transmit {
    #[inline]
    fn remaining(&self) -> usize {
        self.len()
    }

    #[inline]
    fn chunk(&self) -> &[u8] {
        match self.shared.front() {
            Some(s) if self.pos < s.at => &self.octets[self.pos..s.at],
            Some(s) => &s.payload[..],
            None => &self.octets[self.pos..],
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        let mut pos = self.pos;
        for s in &self.shared {
            if pos < s.at {
                let Some(slot) = dst.get_mut(n) else { return n };
                *slot = IoSlice::new(&self.octets[pos..s.at]);
                n += 1;
                pos = s.at;
            }
            let Some(slot) = dst.get_mut(n) else { return n };
            *slot = IoSlice::new(&s.payload);
            n += 1;
        }
        if pos < self.octets.len() {
            if let Some(slot) = dst.get_mut(n) {
                *slot = IoSlice::new(&self.octets[pos..]);
                n += 1;
            }
        }
        n
    }

    /// Consumes `cnt` octets written: any part of a header, a payload or several.
    ///
    /// # Panics
    /// If `cnt` is more than [`Transmit::len`] (a driver that reports more written than it
    /// was given).
    #[inline]
    fn advance(&mut self, cnt: usize) {
        assert!(cnt <= self.len(), "advanced past the queued octets");
        if self.shared.is_empty() {
            // Octets only (short frames): the common case, kept small.
            self.pos += cnt;
            if self.pos == self.octets.len() {
                self.octets.clear();
                self.pos = 0;
            }
            return;
        }
        self.advance_shared(cnt);
    }
}

impl Transmit {
    /// [`Buf::advance`] with shared payloads queued.
    fn advance_shared(&mut self, mut cnt: usize) {
        while cnt > 0 {
            match self.shared.front_mut() {
                Some(s) if self.pos < s.at => {
                    let n = cnt.min(s.at - self.pos);
                    self.pos += n;
                    cnt -= n;
                }
                Some(s) => {
                    let n = cnt.min(s.payload.len());
                    s.payload.advance(n);
                    self.shared_len -= n;
                    cnt -= n;
                    if s.payload.is_empty() {
                        self.shared.pop_front();
                    }
                }
                None => {
                    self.pos += cnt;
                    cnt = 0;
                }
            }
        }
        if self.shared.is_empty() && self.pos == self.octets.len() {
            self.octets.clear();
            self.pos = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Octets `a`, payload `P`, octets `b`, payload `Q`, octets `c`.
    fn sample() -> (Transmit, Vec<u8>) {
        let mut t = Transmit::new();
        let mut want = Vec::new();
        for (octets, payload) in
            [(&b"ab"[..], &b"PPPP"[..]), (&b"c"[..], &b"QQ"[..]), (&b"de"[..], &b""[..])]
        {
            t.octets_mut().extend_from_slice(octets);
            want.extend_from_slice(octets);
            t.push_shared(Bytes::copy_from_slice(payload));
            want.extend_from_slice(payload);
        }
        (t, want)
    }

    fn vectored(t: &Transmit, max: usize) -> Vec<Vec<u8>> {
        let mut slots = vec![IoSlice::new(&[]); max];
        let n = t.chunks_vectored(&mut slots);
        slots[..n].iter().map(|s| s.to_vec()).collect()
    }

    #[test]
    fn segments_come_in_wire_order() {
        let (t, want) = sample();
        assert_eq!(t.len(), want.len());
        let segments = vectored(&t, 16);
        let want_segments: Vec<&[u8]> =
            vec![&b"ab"[..], &b"PPPP"[..], &b"c"[..], &b"QQ"[..], &b"de"[..]];
        assert_eq!(segments, want_segments);
        // Fewer slots than segments: the first ones.
        assert_eq!(vectored(&t, 3), &want_segments[..3]);
        assert_eq!(vectored(&t, 0), Vec::<Vec<u8>>::new());
    }

    /// Every split of the queue into writes, at every step a vectored or a one-chunk write,
    /// gives the same octets.
    #[test]
    fn any_partial_write_resumes_where_it_stopped() {
        let (_, want) = sample();
        for step in 1..=want.len() {
            for slots in [1, 2, 16] {
                let (mut t, _) = sample();
                let mut got = Vec::new();
                while t.has_remaining() {
                    let flat: Vec<u8> = vectored(&t, slots).concat();
                    let n = step.min(flat.len());
                    got.extend_from_slice(&flat[..n]);
                    t.advance(n);
                }
                assert_eq!(got, want, "step {step}, {slots} slots");
                assert!(t.is_empty());
                assert_eq!(vectored(&t, 4), Vec::<Vec<u8>>::new());
            }
        }
    }

    #[test]
    fn append_keeps_order_after_a_partial_write() {
        let (_, want) = sample();
        for written in 0..=want.len() {
            let (mut a, _) = sample();
            a.advance(written);
            let (mut b, _) = sample();
            b.advance(3);
            a.append(&mut b);
            assert!(b.is_empty());
            let mut got = Vec::new();
            a.copy_into(&mut got);
            let mut expect = want[written..].to_vec();
            expect.extend_from_slice(&want[3..]);
            assert_eq!(got, expect, "written {written}");
            assert!(a.is_empty());
        }
    }

    #[test]
    fn an_empty_queue_swaps_instead_of_copying() {
        let mut a = Transmit::new();
        a.octets_mut().reserve(100);
        let (mut b, want) = sample();
        let ptr = b.octets.as_ptr();
        a.append(&mut b);
        assert_eq!(a.octets.as_ptr(), ptr);
        assert!(b.is_empty() && b.octets.capacity() >= 100);
        assert_eq!(a.take_bytes(), want);
        let mut c = Transmit::new();
        c.octets_mut().extend_from_slice(b"xyz");
        let ptr = c.octets.as_ptr();
        assert_eq!(c.take_bytes().as_ptr(), ptr, "nothing shared: the octets themselves");
    }

    #[test]
    #[should_panic(expected = "advanced past")]
    fn advancing_past_the_end_is_a_driver_bug() {
        let (mut t, want) = sample();
        t.advance(want.len() + 1);
    }
}
