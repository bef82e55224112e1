//! GOAWAY frames (RFC 9114 §7.2.6, §5.2): the start of a graceful shutdown.
//!
//! ```text
//! GOAWAY Frame {
//!   Type (i) = 0x07,
//!   Length (i),
//!   Stream ID/Push ID (i),
//! }
//! ```
//!
//! From a server the integer is a client-initiated bidirectional stream ID: requests on it and
//! above were not and will not be processed. From a client it is a push ID. Which one, and
//! that it never increases, is the connection's rule (§5.2).

use super::{Kind, encode_one_integer, one_integer};
use crate::http3::error::Error;

/// Decodes the payload: the stream or push ID.
///
/// # Errors
/// Connection H3_FRAME_ERROR unless the payload is exactly one integer (§7.1).
pub fn decode(payload: &[u8]) -> Result<u64, Error> {
    one_integer(payload, "GOAWAY payload is not one integer")
}

/// Appends a GOAWAY frame.
///
/// # Examples
/// ```
/// use peregrine::http3::frame::goaway;
/// let mut out = Vec::new();
/// goaway::encode(4, &mut out);
/// assert_eq!(out, b"\x07\x01\x04");
/// ```
pub fn encode(id: u64, dst: &mut Vec<u8>) {
    encode_one_integer(Kind::GOAWAY, id, dst);
}
