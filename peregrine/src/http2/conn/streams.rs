//! The connection's streams: a slab of [`Stream`]s indexed by stream id, the counters RFC 9113
//! §5.1.1-§5.1.2 need (highest ids, active streams per initiator), and a bounded memory of how
//! recently closed streams closed.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::http2::flow::{RecvWindow, SendWindow};
use crate::http2::slab::{Key, Queue, Slab};
use crate::http2::stream::{Closed, State};
use crate::http2::stream_id::StreamId;

/// Streams that had DATA refused for lack of capacity (window or send buffer): each gets a
/// `Writable` event when capacity returns.
pub(super) const BLOCKED: Queue = Queue(0);

/// Where one direction of a stream is in its HTTP message (RFC 9113 §8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// No final header section yet (a client may still receive 1xx responses).
    Head,
    /// The final header section was sent or received: DATA and trailers may follow.
    Body,
}

/// One stream's state; lives in the slab while open, and after closing until the application
/// released every octet it received.
#[derive(Debug)]
pub(super) struct Stream {
    pub id: StreamId,
    pub state: State,
    /// What we receive: request body for a server, response for a client.
    pub recv_phase: Phase,
    /// What we send.
    pub send_phase: Phase,
    pub send: SendWindow,
    pub recv: RecvWindow,
    /// The content-length of the message we receive, when it has one (RFC 9113 §8.1.1).
    pub content_length: Option<u64>,
    /// DATA octets received so far (padding excluded).
    pub received: u64,
    /// We opened it (client requests); else the peer did.
    pub local: bool,
    /// Our request was HEAD: the response has no content whatever its content-length.
    pub head_request: bool,
    /// The application knows the stream (it saw its request, or opened it), so its end is
    /// reported as an event.
    pub announced: bool,
    /// Counted in `peer_active` / `local_active`.
    counted: bool,
}

impl Stream {
    /// A stream in the idle state.
    pub fn new(id: StreamId, local: bool, send_window: u32, recv_window: u32) -> Stream {
        Stream {
            id,
            state: State::Idle,
            recv_phase: Phase::Head,
            send_phase: Phase::Head,
            send: SendWindow::new(send_window),
            recv: RecvWindow::new(recv_window),
            content_length: None,
            received: 0,
            local,
            head_request: false,
            announced: false,
            counted: false,
        }
    }
}

/// A multiplicative hash for stream ids: ids are small integers the peer chooses within
/// monotonic and concurrency limits, so a strong hash buys nothing, and at most
/// `max_concurrent_streams` entries live at once.
#[derive(Default)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        let h = u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 32);
    }
}

/// How recently closed streams closed, newest overwriting oldest: fixed size, allocated once.
#[derive(Debug)]
struct Ring {
    entries: Vec<(StreamId, Closed)>,
    next: usize,
}

impl Ring {
    /// The newest record for `id`: entries before `next` are newer than those from it on
    /// once the ring has wrapped.
    fn find(&self, id: StreamId) -> Option<Closed> {
        let (newer, older) = self.entries.split_at(self.next);
        newer.iter().rev().chain(older.iter().rev()).find(|e| e.0 == id).map(|e| e.1)
    }

    fn push(&mut self, id: StreamId, how: Closed) {
        let cap = self.entries.capacity();
        if cap == 0 {
            return;
        }
        if self.entries.len() < cap {
            self.entries.push((id, how));
        } else {
            self.entries[self.next] = (id, how);
            self.next = (self.next + 1) % cap;
        }
    }
}

/// What the connection knows about a stream id that has no live stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Past {
    /// Never opened (RFC 9113 §5.1 "idle").
    Idle,
    /// Closed, and how.
    Closed(Closed),
    /// Closed long ago (or implicitly, §5.1.1: skipped ids close when a higher one opens):
    /// how is forgotten.
    Forgotten,
}

/// The stream table.
#[derive(Debug)]
pub(super) struct Streams {
    pub slab: Slab<Stream>,
    ids: HashMap<u32, Key, BuildHasherDefault<IdHasher>>,
    ring: Ring,
    /// The highest stream id the peer opened (or tried to).
    pub last_peer: StreamId,
    /// The id our next stream gets; `None` once ids are exhausted.
    pub next_local: Option<StreamId>,
    /// Streams the peer opened that are open or half-closed.
    pub peer_active: u32,
    /// Streams we opened that are open or half-closed.
    pub local_active: u32,
    /// Whether we are the client (odd ids are ours).
    client: bool,
}

impl Streams {
    /// An empty table with room for `capacity` live streams before it allocates.
    pub fn new(client: bool, capacity: usize, remembered: usize) -> Streams {
        let mut ids = HashMap::default();
        // Twice the live streams: removals leave tombstones, and the table then rehashes in
        // place instead of growing (hashbrown grows only above half full on rehash).
        ids.reserve(capacity * 2);
        Streams {
            slab: Slab::with_capacity(capacity),
            ids,
            ring: Ring { entries: Vec::with_capacity(remembered), next: 0 },
            last_peer: StreamId::ZERO,
            next_local: Some(StreamId::new(if client { 1 } else { 2 })),
            peer_active: 0,
            local_active: 0,
            client,
        }
    }

    /// Whether `id` is one the peer opens (odd for a server's peer).
    pub fn is_peer_id(&self, id: StreamId) -> bool {
        id.is_client_initiated() != self.client
    }

    /// The live stream with this id.
    pub fn key(&self, id: StreamId) -> Option<Key> {
        self.ids.get(&id.get()).copied()
    }

    /// The live stream at `key`.
    pub fn get(&mut self, key: Key) -> Option<&mut Stream> {
        self.slab.get_mut(key)
    }

    /// What is known of an id without a live stream.
    pub fn past(&self, id: StreamId) -> Past {
        let idle = if self.is_peer_id(id) {
            id > self.last_peer
        } else {
            self.next_local.is_none_or(|next| id >= next)
        };
        if idle {
            return Past::Idle;
        }
        self.ring.find(id).map_or(Past::Forgotten, Past::Closed)
    }

    /// Stores a new stream (its state already moved out of idle) and counts it.
    pub fn insert(&mut self, stream: Stream) -> Key {
        let id = stream.id;
        let key = self.slab.insert(stream);
        self.ids.insert(id.get(), key);
        self.settle(key);
        key
    }

    /// Records a stream that was refused or ignored without ever being stored.
    pub fn remember(&mut self, id: StreamId, how: Closed) {
        self.ring.push(id, how);
    }

    /// Brings the counters up to date after `key`'s state changed, and frees the stream once
    /// it is closed and the application has released all it received. Returns the
    /// stream if it was freed.
    pub fn settle(&mut self, key: Key) -> Option<Stream> {
        let s = self.slab.get_mut(key)?;
        let active = s.state.is_active();
        if active != s.counted {
            s.counted = active;
            let counter = if s.local { &mut self.local_active } else { &mut self.peer_active };
            if active {
                *counter += 1;
            } else {
                *counter -= 1;
            }
        }
        let State::Closed(how) = s.state else { return None };
        if s.recv.unreleased() != 0 {
            return None;
        }
        let s = self.slab.remove(key)?;
        self.ids.remove(&s.id.get());
        self.ring.push(s.id, how);
        Some(s)
    }

    /// Takes the next id for a stream we open.
    pub fn take_local_id(&mut self) -> Option<StreamId> {
        let id = self.next_local?;
        self.next_local = id.next();
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::{Past, Stream, Streams};
    use crate::http2::error::Reason;
    use crate::http2::stream::{Closed, State};
    use crate::http2::stream_id::StreamId;

    fn open(t: &mut Streams, id: u32, local: bool) -> crate::http2::slab::Key {
        let mut s = Stream::new(StreamId::new(id), local, 100, 100);
        assert!(s.state.recv_open(false));
        t.insert(s)
    }

    #[test]
    fn counts_follow_states_and_closed_streams_are_remembered() {
        let mut t = Streams::new(false, 4, 2);
        let a = open(&mut t, 1, false);
        let b = open(&mut t, 3, false);
        t.last_peer = StreamId::new(3);
        assert_eq!(t.peer_active, 2);
        t.get(a).unwrap().state.reset(Closed::ResetByPeer(Reason::CANCEL));
        assert!(t.settle(a).is_some());
        assert_eq!(t.peer_active, 1);
        assert_eq!(t.key(StreamId::new(1)), None);
        assert_eq!(t.past(StreamId::new(1)), Past::Closed(Closed::ResetByPeer(Reason::CANCEL)));
        assert_eq!(t.past(StreamId::new(5)), Past::Idle);
        // Unreleased data keeps a closed stream stored, but no longer counted.
        let s = t.get(b).unwrap();
        s.recv.recv(10).unwrap();
        s.state = State::Closed(Closed::EndStream);
        assert!(t.settle(b).is_none());
        assert_eq!(t.peer_active, 0);
        t.get(b).unwrap().recv.release(10);
        assert!(t.settle(b).is_some());
        // The ring forgets the oldest.
        t.remember(StreamId::new(7), Closed::EndStream);
        t.last_peer = StreamId::new(7);
        assert_eq!(t.past(StreamId::new(1)), Past::Forgotten);
        assert_eq!(t.past(StreamId::new(3)), Past::Closed(Closed::EndStream));
    }

    #[test]
    fn the_newest_record_of_a_stream_wins_after_the_ring_wraps() {
        let mut t = Streams::new(false, 1, 3);
        t.last_peer = StreamId::new(99);
        let id = StreamId::new(5);
        t.remember(StreamId::new(1), Closed::EndStream);
        t.remember(StreamId::new(3), Closed::EndStream);
        t.remember(id, Closed::ResetByPeer(Reason::CANCEL));
        // Wraps: overwrites stream 1's record with 5's newer one.
        t.remember(id, Closed::ResetLocally(Reason::STREAM_CLOSED));
        assert_eq!(t.past(id), Past::Closed(Closed::ResetLocally(Reason::STREAM_CLOSED)));
        t.remember(StreamId::new(7), Closed::EndStream);
        t.remember(StreamId::new(9), Closed::EndStream);
        assert_eq!(t.past(id), Past::Closed(Closed::ResetLocally(Reason::STREAM_CLOSED)));
        t.remember(StreamId::new(11), Closed::EndStream);
        assert_eq!(t.past(id), Past::Forgotten);
    }

    #[test]
    fn local_ids_run_out() {
        let mut t = Streams::new(true, 1, 1);
        assert_eq!(t.take_local_id(), Some(StreamId::new(1)));
        assert_eq!(t.past(StreamId::new(3)), Past::Idle);
        assert_eq!(t.past(StreamId::new(1)), Past::Forgotten);
        t.next_local = Some(StreamId::MAX);
        assert_eq!(t.take_local_id(), Some(StreamId::MAX));
        assert_eq!(t.take_local_id(), None);
        assert!(t.is_peer_id(StreamId::new(2)) && !t.is_peer_id(StreamId::new(1)));
    }
}
