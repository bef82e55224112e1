//! What fails a WebSocket connection (RFC 6455 §7.1.7), each with the close code sent for it,
//! and what refuses a send.

use std::fmt;

use super::close_code::CloseCode;

/// A violation by the peer that fails the connection (RFC 6455 §7.1.7: "_Fail the WebSocket
/// Connection_"): a Close frame with [`Error::close_code`] is queued and nothing more is read.
///
/// # Examples
/// ```
/// use peregrine::ws::{CloseCode, Error};
/// assert_eq!(Error::InvalidUtf8.close_code(), CloseCode::INVALID_PAYLOAD);
/// assert_eq!(Error::MessageTooBig.close_code(), CloseCode::TOO_BIG);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// RSV2 or RSV3 set, or RSV1 where no extension gave it a meaning: without
    /// permessage-deflate, on a control frame, on a continuation frame (RFC 6455 §5.2,
    /// RFC 7692 §6.1).
    ReservedBits,
    /// An opcode RFC 6455 §5.2 reserves (0x3-0x7, 0xB-0xF).
    UnknownOpcode,
    /// A control frame without FIN (RFC 6455 §5.5: "Control frames MUST NOT be fragmented").
    FragmentedControl,
    /// A control frame's payload over 125 octets (RFC 6455 §5.5).
    ControlTooLong,
    /// A client's frame not masked, at a server (RFC 6455 §5.1).
    Unmasked,
    /// A server's frame masked, at a client (RFC 6455 §5.1).
    Masked,
    /// A 64-bit payload length with its most significant bit set (RFC 6455 §5.2).
    BadLength,
    /// A frame's payload longer than [`Limits::max_frame_size`](super::Limits::max_frame_size).
    FrameTooBig,
    /// A message longer than [`Limits::max_message_size`](super::Limits::max_message_size) (after inflation, for a
    /// compressed one).
    MessageTooBig,
    /// A message in more fragments than [`Limits::max_fragments`](super::Limits::max_fragments).
    TooManyFragments,
    /// A continuation frame with no fragmented message begun (RFC 6455 §5.4).
    UnexpectedContinuation,
    /// A new text or binary frame while a fragmented message was unfinished (RFC 6455 §5.4).
    ExpectedContinuation,
    /// A text message, or a close reason, that is not UTF-8 (RFC 6455 §8.1).
    InvalidUtf8,
    /// A Close payload of one octet (RFC 6455 §5.5.1).
    BadClosePayload,
    /// A Close frame's code not allowed on the wire (RFC 6455 §7.4).
    InvalidCloseCode,
    /// A compressed message that does not inflate (RFC 7692 §7.2.2).
    Inflate,
}

impl Error {
    /// The status code of the Close frame sent for this error (RFC 6455 §7.4.1): 1002 for
    /// framing violations, 1007 for data inconsistent with its type, 1008 for a policy limit,
    /// 1009 for sizes.
    pub const fn close_code(self) -> CloseCode {
        match self {
            Error::InvalidUtf8 | Error::Inflate => CloseCode::INVALID_PAYLOAD,
            Error::FrameTooBig | Error::MessageTooBig => CloseCode::TOO_BIG,
            // A count of fragments is a policy, not a size the endpoint cannot hold.
            Error::TooManyFragments => CloseCode::POLICY,
            _ => CloseCode::PROTOCOL_ERROR,
        }
    }

    /// A short reason, sent in the Close frame.
    pub const fn reason(self) -> &'static str {
        match self {
            Error::ReservedBits => "reserved bits set",
            Error::UnknownOpcode => "unknown opcode",
            Error::FragmentedControl => "fragmented control frame",
            Error::ControlTooLong => "control frame over 125 bytes",
            Error::Unmasked => "unmasked client frame",
            Error::Masked => "masked server frame",
            Error::BadLength => "bad payload length",
            Error::FrameTooBig => "frame too big",
            Error::MessageTooBig => "message too big",
            Error::TooManyFragments => "too many fragments",
            Error::UnexpectedContinuation => "continuation without a message",
            Error::ExpectedContinuation => "new message inside a fragmented one",
            Error::InvalidUtf8 => "invalid UTF-8",
            Error::BadClosePayload => "close payload of one byte",
            Error::InvalidCloseCode => "invalid close code",
            Error::Inflate => "invalid compressed data",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "websocket: {} (close {})", self.reason(), self.close_code().get())
    }
}

impl std::error::Error for Error {}

/// Why a send was refused; nothing was queued.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use std::time::Instant;
/// use peregrine::ws::{Config, Conn, Role, SendError};
/// let mut conn = Conn::new(Role::Server, Arc::new(Config::default()), None, [0; 32], Instant::now());
/// assert_eq!(conn.send_ping(&[0; 126]), Err(SendError::ControlTooLong));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SendError {
    /// We sent a Close frame, or the connection is closed: no more frames (RFC 6455 §5.5.1).
    Closed,
    /// A ping or pong payload over 125 octets (RFC 6455 §5.5).
    ControlTooLong,
    /// A close reason over 123 octets (RFC 6455 §5.5: the code and reason fit in 125).
    ReasonTooLong,
    /// A close code not allowed on the wire ([`CloseCode::is_allowed_on_wire`]).
    InvalidCloseCode,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SendError::Closed => "websocket: closing or closed",
            SendError::ControlTooLong => "websocket: control payload over 125 bytes",
            SendError::ReasonTooLong => "websocket: close reason over 123 bytes",
            SendError::InvalidCloseCode => "websocket: close code not allowed on the wire",
        })
    }
}

impl std::error::Error for SendError {}
