//! MAX_PUSH_ID frames (RFC 9114 §7.2.7): a client's permission for server push. We never send
//! one (push is never enabled). §7.2.7: "A server MUST NOT send a MAX_PUSH_ID frame. A client
//! MUST treat the receipt of a MAX_PUSH_ID frame as a connection error of type
//! H3_FRAME_UNEXPECTED", and "a server that receives a MAX_PUSH_ID frame that contains a smaller
//! value than previously received MUST treat this as a connection error of type H3_ID_ERROR"
//! (the connection's rules).
//!
//! ```text
//! MAX_PUSH_ID Frame {
//!   Type (i) = 0x0d,
//!   Length (i),
//!   Push ID (i),
//! }
//! ```

use super::{Kind, encode_one_integer, one_integer};
use crate::http3::error::Error;

/// Decodes the payload: the largest push ID the client allows.
///
/// # Errors
/// Connection H3_FRAME_ERROR unless the payload is exactly one integer (§7.1).
pub fn decode(payload: &[u8]) -> Result<u64, Error> {
    one_integer(payload, "MAX_PUSH_ID payload is not one integer")
}

/// Appends a MAX_PUSH_ID frame.
pub fn encode(push_id: u64, dst: &mut Vec<u8>) {
    encode_one_integer(Kind::MAX_PUSH_ID, push_id, dst);
}
