//! CANCEL_PUSH frames (RFC 9114 §7.2.3). We never enable server push (no MAX_PUSH_ID is ever
//! sent), so any push ID a peer names is one we never allowed or promised: the connection
//! answers it with H3_ID_ERROR.
//!
//! ```text
//! CANCEL_PUSH Frame {
//!   Type (i) = 0x03,
//!   Length (i),
//!   Push ID (i),
//! }
//! ```

use super::{Kind, encode_one_integer, one_integer};
use crate::http3::error::Error;

/// Decodes the payload: the push ID.
///
/// # Errors
/// Connection H3_FRAME_ERROR unless the payload is exactly one integer (§7.1).
pub fn decode(payload: &[u8]) -> Result<u64, Error> {
    one_integer(payload, "CANCEL_PUSH payload is not one integer")
}

/// Appends a CANCEL_PUSH frame.
pub fn encode(push_id: u64, dst: &mut Vec<u8>) {
    encode_one_integer(Kind::CANCEL_PUSH, push_id, dst);
}
