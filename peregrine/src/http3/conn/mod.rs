//! One HTTP/3 connection's state above QUIC, sans-I/O: so far the unidirectional streams
//! (RFC 9114 §6.2: control, QPACK encoder and decoder, push, unknown) and the control
//! stream's frames (SETTINGS first and once, GOAWAY, MAX_PUSH_ID, CANCEL_PUSH, unknown frames),
//! with QPACK's encoder and decoder owned here so SETTINGS configure them; and
//! [`RequestFrames`], the frame sequence of one request stream (§4.1); and [`Message`], a
//! request stream's message joined to QPACK and to HTTP's rules (§4.1-§4.3), both roles.
//!
//! # Contract with the driver
//!
//! - At start, write [`Conn::poll_control`], [`Conn::poll_encoder_stream`] and
//!   [`Conn::poll_decoder_stream`] on three unidirectional streams we open (their stream type
//!   and, on the control stream, our SETTINGS come first); poll them again after anything
//!   that may queue bytes (the QPACK streams after every field section encoded or decoded,
//!   the control stream after [`Conn::send_goaway`]).
//! - Give every unidirectional stream the peer opens to [`Conn::recv_uni`] as its bytes
//!   arrive (any split), with `fin` when the stream ends, and [`Conn::reset_uni`] when the
//!   peer resets it.
//! - Give each request stream's bytes to [`Conn::recv_message`] with its [`Message`] (made
//!   by [`Conn::message`]) until it returns no event; after [`MessageEvent::Blocked`] wait for
//!   [`Event::Unblocked`] and call [`Conn::resume_message`]; when the peer resets a request
//!   stream or we stop reading it early, [`Conn::cancel_message`]. Send heads and trailers
//!   with [`Conn::encode_response`] / [`Conn::encode_request`] / [`Conn::encode_trailers`]
//!   and DATA with [`Conn::encode_data_head`] before the payload.
//! - After each call, drain [`Conn::poll_event`].
//! - An `Err` is a connection error: close the connection with its code
//!   ([`Error::code`](super::Error::code)).
//!
//! # Budgets (floods and their reactions)
//!
//! - Ignored frames (unknown and reserved types, RFC 9114 §9) on the control stream: at most
//!   [`Config::max_ignored_frames`]; past it, H3_EXCESSIVE_LOAD. Their payloads are skipped
//!   as they arrive, never buffered.
//! - Unknown unidirectional stream types: each is refused at once
//!   ([`Event::StopSending`] with H3_STREAM_CREATION_ERROR, §6.2) and forgotten; past
//!   [`Config::max_unknown_streams`] of them, H3_EXCESSIVE_LOAD.
//! - Control frames we parse are bounded: SETTINGS by [`MAX_SETTINGS_LEN`] octets
//!   (H3_EXCESSIVE_LOAD past it), the one-integer frames by 8 octets (H3_FRAME_ERROR).
//! - Request streams ([`RequestFrames`]): field sections up to the size given (stream
//!   H3_EXCESSIVE_LOAD past it), DATA passed through unbuffered, empty DATA and unknown
//!   frames within a count (connection H3_EXCESSIVE_LOAD past it).
//! - Request streams the peer cancels (RESET_STREAM on its request or STOP_SENDING on our
//!   response) before our response is complete: [`Conn::peer_cancelled`] spends
//!   [`Config::rapid_reset`] (a token bucket: a burst, then a rate); past it,
//!   H3_EXCESSIVE_LOAD. QUIC gives a cancelled stream's credit back at once, so the
//!   concurrent-stream limit alone does not bound this work (HTTP/2's rapid reset,
//!   CVE-2023-44487, in HTTP/3's clothes).
//! - QPACK streams: the budgets of [`qpack`](super::qpack).

mod message;
mod request;
mod uni;

pub use message::{Message, MessageEvent, RequestPseudo};
pub use request::{Part, RequestFrames, Step};
pub use uni::{Conn, Event, PeerSettings};

use crate::http2::Rate;

/// The largest SETTINGS payload parsed: [`DEFAULT_MAX_ENTRIES`] entries of two 8-octet
/// integers.
///
/// [`DEFAULT_MAX_ENTRIES`]: super::frame::settings::DEFAULT_MAX_ENTRIES
pub const MAX_SETTINGS_LEN: u64 = super::frame::settings::DEFAULT_MAX_ENTRIES as u64 * 16;

/// A connection's settings and budgets, with documented defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Our SETTINGS_QPACK_MAX_TABLE_CAPACITY: the table the peer's encoder may fill in our
    /// decoder. Default 4,096.
    pub qpack_max_table_capacity: u64,
    /// Our SETTINGS_QPACK_BLOCKED_STREAMS. Default 16.
    pub qpack_blocked_streams: u64,
    /// The most table we keep for the peer's decoder (its setting caps it). Default 4,096.
    pub qpack_encoder_capacity: u64,
    /// Our SETTINGS_MAX_FIELD_SECTION_SIZE. Default 64 KiB.
    pub max_field_section_size: u64,
    /// Ignored frames allowed on the peer's control stream. Default 1,000.
    pub max_ignored_frames: u32,
    /// Unknown unidirectional streams allowed. Default 100.
    pub max_unknown_streams: u32,
    /// Request streams the peer may cancel before our response is complete (a server's
    /// budget; see the module's budgets). Default a burst of 200, then 100 per second, as
    /// HTTP/2's [`Limits::rapid_reset`](crate::http2::Limits::rapid_reset).
    pub rapid_reset: Rate,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            qpack_max_table_capacity: 4096,
            qpack_blocked_streams: 16,
            qpack_encoder_capacity: 4096,
            max_field_section_size: 64 * 1024,
            max_ignored_frames: 1000,
            max_unknown_streams: 100,
            rapid_reset: Rate { burst: 200, per_second: 100 },
        }
    }
}
