//! How streams and the connection end: stream errors (RST_STREAM), connection errors
//! (GOAWAY), graceful shutdown (RFC 9113 §6.8's two GOAWAYs), and the bookkeeping that goes
//! with them (budgets, returned flow-control credit, wakeups).

use super::Conn;
use super::event::{Closed as ConnClosed, Pending};
use super::streams::{BLOCKED, Past};
use crate::http2::budget::Bucket;
use crate::http2::error::{Error, Reason};
use crate::http2::frame::{GoAway, HEAD_LEN, Ping, RstStream, WindowUpdate};
use crate::http2::slab::Key;
use crate::http2::stream::Closed;
use crate::http2::stream_id::StreamId;

/// The payload of the PING a graceful shutdown sends between its two GOAWAYs.
pub(super) const SHUTDOWN_PING: [u8; 8] = *b"h2-drain";

/// Which budget a peer action spends.
#[derive(Clone, Copy, Debug)]
pub(super) enum Spend {
    RapidReset,
    ProvokedReset,
    TinyData,
    Control,
}

impl Conn {
    /// Spends one token of a budget; when it is spent, ends the connection with
    /// GOAWAY(ENHANCE_YOUR_CALM) and returns `false`.
    pub(super) fn spend(&mut self, what: Spend) -> bool {
        let (bucket, why): (&mut Bucket, _) = match what {
            Spend::RapidReset => (&mut self.budgets.rapid_reset, "rapid reset budget spent"),
            Spend::ProvokedReset => {
                (&mut self.budgets.provoked_reset, "provoked reset budget spent")
            }
            Spend::TinyData => (&mut self.budgets.tiny_data, "tiny DATA frame budget spent"),
            Spend::Control => (&mut self.budgets.control, "control frame budget spent"),
        };
        if bucket.take(self.now) {
            return true;
        }
        self.fail(Error::connection(Reason::ENHANCE_YOUR_CALM, why));
        false
    }

    /// Handles an error from frame decoding or a rule: a stream error resets the stream, a
    /// connection error ends the connection.
    pub(super) fn error(&mut self, e: Error) {
        match e {
            Error::Stream { stream, reason } => self.stream_error(stream, reason),
            Error::Connection { .. } => self.fail(e),
        }
    }

    /// RFC 9113 §5.4.2: "An endpoint that detects a stream error sends a RST_STREAM frame".
    /// On an idle stream there is nothing to reset ("RST_STREAM frames MUST NOT be sent for a
    /// stream in the "idle" state"), so the error becomes a connection error, as §5.4 allows.
    /// Every such reset spends the provoked-reset budget (CVE-2025-8671).
    pub(super) fn stream_error(&mut self, id: StreamId, reason: Reason) {
        if self.closed {
            return;
        }
        let key = self.streams.key(id);
        if key.is_none() && self.streams.past(id) == Past::Idle {
            self.fail(Error::connection(reason, "stream error on an idle stream"));
            return;
        }
        if !self.spend(Spend::ProvokedReset) {
            return;
        }
        RstStream { stream: id, reason }.encode(&mut self.out);
        match key {
            Some(key) => self.end_stream(key, Closed::ResetLocally(reason), false),
            None => self.streams.remember(id, Closed::ResetLocally(reason)),
        }
    }

    /// Closes a live stream abnormally: its unreleased octets go back to the connection window
    /// (the application will not release them), it leaves the blocked queue, and the
    /// application hears of it if it knew the stream.
    pub(super) fn end_stream(&mut self, key: Key, how: Closed, retryable: bool) {
        let Some(s) = self.streams.get(key) else { return };
        s.state.reset(how);
        let unreleased = s.recv.unreleased();
        s.recv.release_all();
        let (id, announced) = (s.id, s.announced);
        self.streams.slab.unlink(BLOCKED, key);
        self.release_conn(unreleased);
        if announced {
            let (reason, by_peer) = match how {
                Closed::ResetByPeer(r) => (r, true),
                Closed::ResetLocally(r) => (r, false),
                Closed::EndStream => (Reason::NO_ERROR, false),
            };
            self.pending.push_back(Pending::Reset { stream: id, reason, by_peer, retryable });
        }
        self.settle(key);
    }

    /// Updates counters after a stream's state changed, frees it when done, and checks
    /// whether the connection is finished.
    pub(super) fn settle(&mut self, key: Key) {
        if self.streams.settle(key).is_some() {
            self.check_done();
        }
    }

    /// Returns `n` received octets to the connection window, queueing a WINDOW_UPDATE when
    /// half the window has been consumed.
    pub(super) fn release_conn(&mut self, n: u32) {
        if let Some(increment) = self.recv_window.release(n) {
            WindowUpdate { stream: StreamId::ZERO, increment }.encode(&mut self.ctrl);
        }
    }

    /// RFC 9113 §5.4.1: "An endpoint that encounters a connection error SHOULD first send a
    /// GOAWAY frame (Section 6.8) with the stream identifier of the last stream that it
    /// successfully received from its peer. The GOAWAY frame includes an error code ... After
    /// sending the GOAWAY frame for an error condition, the endpoint MUST close the TCP
    /// connection."
    pub(super) fn fail(&mut self, e: Error) {
        if self.closed {
            return;
        }
        let (reason, why) = match e {
            Error::Connection { reason, why } => (reason, why),
            Error::Stream { reason, .. } => (reason, "stream error"),
        };
        let last = self.streams.last_peer;
        GoAway { last_stream_id: last, reason, debug_data: why.as_bytes() }.encode(&mut self.ctrl);
        self.goaway_sent = Some(last);
        self.close(ConnClosed { reason, by_peer: false, why });
    }

    /// Marks the connection over and queues [`Event::Closed`](super::Event::Closed).
    pub(super) fn close(&mut self, c: ConnClosed) {
        self.closed = true;
        self.settings_deadline = None;
        self.graceful = None;
        self.pending.push_back(Pending::Closed(c));
    }

    /// Ends the connection once GOAWAY has been exchanged and no stream is left.
    pub(super) fn check_done(&mut self) {
        if self.closed || self.graceful.is_some() {
            return;
        }
        let going_away = self.goaway_sent.is_some() || self.goaway_recv.is_some();
        if going_away && self.streams.local_active + self.streams.peer_active == 0 {
            let by_peer = self.goaway_sent.is_none();
            self.close(ConnClosed { reason: self.goaway_reason, by_peer, why: "" });
        }
    }

    /// Queues [`Event::Writable`](super::Event::Writable) for blocked streams that can send
    /// again (`only`: just that stream, after its own WINDOW_UPDATE).
    pub(super) fn wake_blocked(&mut self, only: Option<Key>) {
        if self.conn_capacity() == 0 {
            return;
        }
        if let Some(key) = only {
            if self.streams.slab.is_queued(BLOCKED, key) && self.stream_capacity(key) > 0 {
                self.streams.slab.unlink(BLOCKED, key);
                if let Some(s) = self.streams.slab.get(key) {
                    self.pending.push_back(Pending::Writable(s.id));
                }
            }
            return;
        }
        for _ in 0..self.streams.slab.queue_len(BLOCKED) {
            let Some(key) = self.streams.slab.pop_front(BLOCKED) else { break };
            if self.stream_capacity(key) == 0 {
                self.streams.slab.push_back(BLOCKED, key);
            } else if let Some(s) = self.streams.slab.get(key) {
                self.pending.push_back(Pending::Writable(s.id));
            }
        }
    }

    /// What any stream may send now, connection-wide: the connection window and the room
    /// left in the send buffer (less the DATA frame headers that room must also hold).
    pub(super) fn conn_capacity(&self) -> usize {
        let room = self.config.max_send_buffer.saturating_sub(self.buffered());
        let frames = room.div_ceil(self.peer.max_frame_size as usize + HEAD_LEN);
        room.saturating_sub(frames * HEAD_LEN).min(self.send_window.available() as usize)
    }

    /// What stream `key` may send now.
    pub(super) fn stream_capacity(&self, key: Key) -> usize {
        self.streams
            .slab
            .get(key)
            .map_or(0, |s| (s.send.available() as usize).min(self.conn_capacity()))
    }

    /// Begins a graceful shutdown (RFC 9113 §6.8): no new streams, existing ones finish, then
    /// [`Event::Closed`](super::Event::Closed).
    ///
    /// A server sends GOAWAY with last-stream-id 2^31-1 and a PING: "A server that is
    /// attempting to gracefully shut down a connection SHOULD send an initial GOAWAY frame
    /// with the last stream identifier set to 2^31-1 and a NO_ERROR code. ... After allowing
    /// time for any in-flight stream creation (at least one round-trip time), the server MAY
    /// send another GOAWAY frame with an updated last stream identifier." The PING's
    /// acknowledgement measures that round trip; [`Config::shutdown_timeout`](crate::http2::Config)
    /// bounds it. A client has no peer-opened streams and sends one GOAWAY at once.
    ///
    /// The driver calls it when it wants to drain the connection, then keeps driving it until
    /// [`Event::Closed`](super::Event::Closed).
    pub fn shutdown(&mut self, now: std::time::Instant) {
        self.now = now;
        if self.closed || self.graceful.is_some() || self.goaway_sent.is_some() {
            return;
        }
        if self.role == super::Role::Server {
            GoAway { last_stream_id: StreamId::MAX, reason: Reason::NO_ERROR, debug_data: b"" }
                .encode(&mut self.ctrl);
            self.goaway_sent = Some(StreamId::MAX);
            Ping { ack: false, payload: SHUTDOWN_PING }.encode(&mut self.ctrl);
            self.graceful = Some(now + self.config.shutdown_timeout);
            return;
        }
        let last = self.streams.last_peer;
        GoAway { last_stream_id: last, reason: Reason::NO_ERROR, debug_data: b"" }
            .encode(&mut self.ctrl);
        self.goaway_sent = Some(last);
        self.check_done();
    }

    /// The second GOAWAY of a graceful shutdown, with the streams actually accepted.
    pub(super) fn finish_graceful(&mut self) {
        if self.graceful.take().is_none() {
            return;
        }
        let last = self.streams.last_peer;
        GoAway { last_stream_id: last, reason: Reason::NO_ERROR, debug_data: b"" }
            .encode(&mut self.ctrl);
        self.goaway_sent = Some(last);
        self.check_done();
    }

    /// Ends the connection now: GOAWAY(`reason`, `debug_data`) with the last stream the peer
    /// opened, then [`Event::Closed`](super::Event::Closed). Streams still open are abandoned.
    ///
    /// The driver calls it for an immediate close (a fatal application error, an idle
    /// timeout, a peer that stopped reading), then flushes [`Conn::poll_transmit`].
    pub fn go_away(&mut self, reason: Reason, debug_data: &[u8]) {
        if self.closed {
            return;
        }
        let last = self.streams.last_peer;
        GoAway { last_stream_id: last, reason, debug_data }.encode(&mut self.ctrl);
        self.goaway_sent = Some(last);
        self.close(ConnClosed { reason, by_peer: false, why: "" });
    }
}
