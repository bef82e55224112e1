//! What the connection tells its driver: [`Event`]s, one per [`Conn::recv`](super::Conn::recv)
//! or [`Conn::poll_event`](super::Conn::poll_event) call.

use std::ops::Range;

use super::peer::PeerSettings;
use super::section::FieldSection;
use crate::http2::error::Reason;
use crate::http2::stream_id::StreamId;

/// Which header section of a message arrived (RFC 9113 §8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadersKind {
    /// A request head (server role): it opened the stream.
    Request,
    /// A final response head (client role).
    Response,
    /// An interim 1xx response head (client role); the final one follows.
    Informational,
    /// Trailers: the last section, after the body; `end_stream` is always true.
    Trailers,
}

/// Why the connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Closed {
    /// The error code: NO_ERROR after a graceful end.
    pub reason: Reason,
    /// The peer ended it (its GOAWAY), rather than us.
    pub by_peer: bool,
    /// A few words on why, when we ended it for an error (also sent as GOAWAY debug data).
    pub why: &'static str,
}

/// Something the peer did, or a consequence of it, for the driver to act on.
///
/// Events borrow from the connection (a decoded header section) or from the input passed to
/// [`Conn::recv`](super::Conn::recv) (DATA payloads, zero copy): handle one, drop it, call again.
#[derive(Debug)]
pub enum Event<'a> {
    /// A header section arrived, validated (RFC 9113 §8.1-§8.3).
    Headers {
        /// The stream.
        stream: StreamId,
        /// Request, response, informational or trailers.
        kind: HeadersKind,
        /// No DATA follows: the peer finished its message.
        end_stream: bool,
        /// The fields, with the pseudo-headers picked out.
        section: &'a FieldSection,
    },
    /// Body octets. One DATA frame can arrive as several events when the input split it;
    /// `end_stream` is set on the last. Call [`Conn::release_capacity`](super::Conn::release_capacity)
    /// once the octets are consumed: until then they count against the peer's windows.
    Data {
        /// The stream.
        stream: StreamId,
        /// The octets (possibly empty, only with `end_stream`).
        data: &'a [u8],
        /// The peer finished its message.
        end_stream: bool,
    },
    /// A stream the application knows ended before completing: the peer reset it, or we did
    /// because of the peer's frames (a malformed message, a flow-control or state error), or
    /// the peer's GOAWAY excluded it.
    Reset {
        /// The stream.
        stream: StreamId,
        /// The RST_STREAM code, sent or received.
        reason: Reason,
        /// The peer reset it (RST_STREAM or GOAWAY); else we did.
        by_peer: bool,
        /// The peer did not process the request (REFUSED_STREAM, or above a GOAWAY's
        /// last-stream-id, RFC 9113 §8.7): safe to retry on another connection.
        retryable: bool,
    },
    /// A stream that had DATA refused (see [`Conn::send_data`](super::Conn::send_data)) can take
    /// more now.
    Writable {
        /// The stream.
        stream: StreamId,
    },
    /// The peer's SETTINGS were applied (and acknowledged).
    Settings(&'a PeerSettings),
    /// The peer acknowledged our SETTINGS.
    SettingsAcked,
    /// The peer sent a PING; the acknowledgement is already queued.
    Ping {
        /// Its payload.
        payload: [u8; 8],
    },
    /// The peer answered a PING of ours.
    PingAck {
        /// The payload we sent.
        payload: [u8; 8],
    },
    /// The peer sent GOAWAY: no new streams; ours above `last_stream_id` were not processed
    /// (each gets a retryable `Reset`).
    GoAway {
        /// The highest stream the peer may have processed.
        last_stream_id: StreamId,
        /// Its error code (NO_ERROR for a graceful shutdown).
        reason: Reason,
        /// Its diagnostic data.
        debug_data: &'a [u8],
    },
    /// The connection is over: flush [`Conn::poll_transmit`](super::Conn::poll_transmit), then
    /// close the transport. Reported once; afterwards input is ignored.
    Closed(Closed),
}

/// An event whose data is not borrowed, queued until the driver asks.
#[derive(Clone, Copy, Debug)]
pub(super) enum Pending {
    Reset { stream: StreamId, reason: Reason, by_peer: bool, retryable: bool },
    Writable(StreamId),
    Settings,
    SettingsAcked,
    Ping([u8; 8]),
    PingAck([u8; 8]),
    Closed(Closed),
}

/// Where borrowed payload bytes are.
#[derive(Clone, Debug)]
pub(super) enum Src {
    /// In the caller's input.
    Input(Range<usize>),
    /// In the connection's frame buffer.
    Buffer(Range<usize>),
}

/// An event decided while the connection was borrowed mutably, built once the borrow ends.
#[derive(Clone, Debug)]
pub(super) enum Ready {
    Pending(Pending),
    Headers { stream: StreamId, kind: HeadersKind, end_stream: bool },
    Data { stream: StreamId, data: Range<usize>, end_stream: bool },
    GoAway { last_stream_id: StreamId, reason: Reason, debug_data: Src },
}
