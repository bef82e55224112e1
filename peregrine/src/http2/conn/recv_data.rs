//! Receiving DATA (RFC 9113 §6.1): flow control (§6.9), the stream-state rules (§5.1), the
//! message rules (§8.1: no body before the head, content-length), and releasing capacity.

use super::Conn;
use super::event::Ready;
use super::inbound::Inbound;
use super::lifecycle::Spend;
use super::streams::{Past, Phase};
use crate::http2::error::{Error, Reason};
use crate::http2::frame::{Head, WindowUpdate, flags, padding};
use crate::http2::slab::Key;
use crate::http2::stream::{Closed, State};
use crate::http2::stream_id::StreamId;

impl Conn {
    /// A DATA frame's header (and Pad Length octet, `pad`, when PADDED) arrived: every check
    /// is made now, before any octet is handed out, so an error never follows partial data.
    pub(super) fn begin_data(&mut self, head: Head, pad: Option<u8>) -> Option<Ready> {
        let data_len = match pad {
            Some(p) => match padding::content_len(head.len, p) {
                Ok(n) => n,
                Err(e) => {
                    self.fail(e);
                    return None;
                }
            },
            None => head.len,
        };
        let rest = Conn::data_rest(head);
        let pad_len = rest - data_len;
        let end_stream = head.has(flags::END_STREAM);
        // RFC 9113 §6.9: "A receiver that receives a flow-controlled frame MUST always account
        // for its contribution to the connection flow-control window, unless the receiver
        // treats this as a connection error". The entire payload counts, padding included.
        if self.recv_window.recv(head.len).is_err() {
            self.fail(Error::connection(
                Reason::FLOW_CONTROL_ERROR,
                "DATA beyond the connection window",
            ));
            return None;
        }
        let Some(key) = self.data_stream(head.stream, head.len, data_len, end_stream) else {
            // Not delivered: the octets go straight back to the connection window.
            self.release_conn(head.len);
            self.inbound = if rest == 0 { Inbound::Head } else { Inbound::Skip(rest) };
            return None;
        };
        // Padding never reaches the application: it is released at once.
        let padding = head.len - data_len;
        if padding > 0 {
            self.release_stream(key, padding);
        }
        self.settle(key);
        if data_len == 0 {
            self.inbound = if pad_len == 0 { Inbound::Head } else { Inbound::Skip(pad_len) };
            // An empty DATA frame matters only when it ends the stream.
            return end_stream.then_some(Ready::Data {
                stream: head.stream,
                data: 0..0,
                end_stream,
            });
        }
        self.inbound = Inbound::Data {
            stream: head.stream,
            deliver: true,
            left: data_len,
            pad: pad_len,
            end_stream,
        };
        None
    }

    /// The live stream DATA may be delivered to, or `None` after applying the rules for the
    /// frame (a stream or connection error, or silently ignoring it).
    fn data_stream(
        &mut self,
        id: StreamId,
        flow: u32,
        data_len: u32,
        end_stream: bool,
    ) -> Option<Key> {
        let Some(key) = self.streams.key(id) else {
            self.data_without_stream(id);
            return None;
        };
        let s = self.streams.get(key)?;
        match s.state {
            State::Open | State::HalfClosedLocal => {}
            // RFC 9113 §5.1 half-closed (remote): "If an endpoint receives additional frames,
            // other than WINDOW_UPDATE, PRIORITY, or RST_STREAM, for a stream that is in this
            // state, it MUST respond with a stream error (Section 5.4.2) of type STREAM_CLOSED."
            State::HalfClosedRemote => {
                self.stream_error(id, Reason::STREAM_CLOSED);
                return None;
            }
            State::Closed(how) => {
                self.data_on_closed(id, how);
                return None;
            }
            State::Idle => return None,
        }
        // RFC 9113 §8.1: DATA only after the header section that opens the message (a client
        // waiting for its final response may not receive DATA).
        if s.recv_phase != Phase::Body {
            self.stream_error(id, Reason::PROTOCOL_ERROR);
            return None;
        }
        // RFC 9113 §8.1.1: "A request or response is also malformed if the value of a
        // content-length header field does not equal the sum of the DATA frame payload lengths
        // that form the content".
        let total = s.received + u64::from(data_len);
        if s.content_length.is_some_and(|cl| total > cl || end_stream && total != cl) {
            self.stream_error(id, Reason::PROTOCOL_ERROR);
            return None;
        }
        // RFC 9113 §6.9.1: "A receiver MAY respond with a stream error ... of type
        // FLOW_CONTROL_ERROR if it is unable to accept a frame" beyond the stream's window.
        if s.recv.recv(flow).is_err() {
            self.stream_error(id, Reason::FLOW_CONTROL_ERROR);
            return None;
        }
        s.received = total;
        if end_stream {
            s.state.recv_end();
        }
        if !end_stream
            && data_len < self.config.limits.tiny_data_bytes
            && !self.spend(Spend::TinyData)
        {
            return None;
        }
        Some(key)
    }

    /// DATA on a stream id with no live stream (RFC 9113 §5.1).
    fn data_without_stream(&mut self, id: StreamId) {
        match self.streams.past(id) {
            // idle: "Receiving any frame other than HEADERS or PRIORITY on a stream in this
            // state MUST be treated as a connection error (Section 5.4.1) of type
            // PROTOCOL_ERROR."
            Past::Idle => {
                self.fail(Error::connection(Reason::PROTOCOL_ERROR, "DATA on an idle stream"))
            }
            Past::Closed(how) => self.data_on_closed(id, how),
            // Closed so long ago that how is forgotten: treated as reset by us (ignored). Ignored
            // frames still cost work: the control budget.
            Past::Forgotten => {
                self.spend(Spend::Control);
            }
        }
    }

    /// DATA on a closed stream, by how it closed (RFC 9113 §5.1 "closed").
    fn data_on_closed(&mut self, id: StreamId, how: Closed) {
        match how {
            // "An endpoint that receives any frames after receiving a frame with the
            // END_STREAM flag set MUST treat that as a connection error (Section 6.4.1) of
            // type STREAM_CLOSED" (RFC 7540 §5.1 wording, which h2spec checks).
            Closed::EndStream => {
                self.fail(Error::connection(Reason::STREAM_CLOSED, "DATA on a closed stream"))
            }
            // "An endpoint that receives any frame other than PRIORITY after receiving a
            // RST_STREAM MUST treat that as a stream error (Section 5.4.2) of type
            // STREAM_CLOSED."
            Closed::ResetByPeer(_) => self.stream_error(id, Reason::STREAM_CLOSED),
            // "An endpoint MUST ignore frames that it receives on closed streams after it has
            // sent a RST_STREAM frame." Ignored frames still cost work: the control budget.
            Closed::ResetLocally(_) => {
                self.spend(Spend::Control);
            }
        }
    }

    /// Releases `n` received octets of a stream at both levels, announcing window as due.
    fn release_stream(&mut self, key: Key, n: u32) {
        let Some(s) = self.streams.get(key) else { return };
        let n = n.min(s.recv.unreleased());
        let open = s.state.can_recv();
        let id = s.id;
        if let Some(increment) = s.recv.release(n) {
            // A stream the peer finished sending on needs no more window.
            if open {
                WindowUpdate { stream: id, increment }.encode(&mut self.ctrl);
            }
        }
        self.release_conn(n);
    }

    /// Gives back `n` octets of `stream`'s received DATA: the application consumed them, so
    /// the peer may send that much more. WINDOW_UPDATEs are queued once half a window has been
    /// released (stream and connection separately).
    ///
    /// The driver calls it as the application consumes each [`Event::Data`](super::Event::Data)
    /// (all of it, or as it drains a buffer). Octets of a stream that was reset are released
    /// by the connection itself; releasing for an unknown or reset stream does nothing, and
    /// `n` is capped at what the stream received and has not released.
    pub fn release_capacity(&mut self, stream: StreamId, n: usize) {
        let Some(key) = self.streams.key(stream) else { return };
        self.release_stream(key, u32::try_from(n).unwrap_or(u32::MAX));
        self.settle(key);
    }
}
