//! What a connection reports to its driver.

use bytes::Bytes;

use crate::ws::close_code::CloseCode;
use crate::ws::error::Error;

/// What [`Conn::recv`](super::Conn::recv) found in the input.
///
/// Payloads are [`Bytes`]: a message that arrived in one uncompressed frame is the input's
/// own octets, unmasked in place and split off (no copy); a fragmented or compressed one is
/// assembled in the connection's buffer and split off it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A whole text message, valid UTF-8 (checked as it arrived: `std::str::from_utf8` on it
    /// succeeds).
    Text(Bytes),
    /// A whole binary message.
    Binary(Bytes),
    /// A Ping (RFC 6455 §5.5.2); the Pong with the same payload is queued, ahead of queued
    /// messages (after a Close of ours, none is: we send nothing after our Close).
    Ping(Bytes),
    /// A Pong (RFC 6455 §5.5.3), solicited or not.
    Pong(Bytes),
    /// The peer's Close (RFC 6455 §5.5.1): its code ([`CloseCode::NO_STATUS`] when it had
    /// none) and reason (UTF-8). If we had not sent a Close, the echo (the same code) is
    /// queued. The connection is closed: flush [`Conn::poll_transmit`](super::Conn::poll_transmit), then close
    /// the transport (a server first; RFC 6455 §7.1.1: a client waits for the server to, for
    /// a while).
    Close {
        /// The peer's status code.
        code: CloseCode,
        /// The peer's reason.
        reason: Bytes,
    },
    /// The peer broke the protocol (RFC 6455 §7.1.7): a Close with [`Error::close_code`] is
    /// queued (unless we had sent ours) and the connection is closed: flush, then close the
    /// transport. Nothing more is read.
    Error(Error),
}

/// A deadline that passed, from [`Conn::handle_timeout`](super::Conn::handle_timeout).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timeout {
    /// We sent a Close and the peer's did not come within
    /// [`Limits::close_timeout`](crate::ws::Limits::close_timeout): the connection is closed.
    Close,
    /// Nothing was received for [`Limits::idle_timeout`](crate::ws::Limits::idle_timeout): a Close with 1001
    /// (going away) is queued and the connection is closed.
    Idle,
}
