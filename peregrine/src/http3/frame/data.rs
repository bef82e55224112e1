//! DATA frames (RFC 9114 §7.2.1): body octets, streamed by the connection as they arrive.
//!
//! ```text
//! DATA Frame {
//!   Type (i) = 0x00,
//!   Length (i),
//!   Data (..),
//! }
//! ```
//!
//! "DATA frames MUST be associated with an HTTP request or response. If a DATA frame is
//! received on a control stream, the recipient MUST respond with a connection error of type
//! H3_FRAME_UNEXPECTED" ([`check_placement`](super::check_placement)).

use super::{Head, Kind};

/// Appends the header of a DATA frame carrying `len` octets; the caller appends them.
///
/// # Examples
/// ```
/// use peregrine::http3::frame::data;
/// let mut out = Vec::new();
/// data::encode_head(5, &mut out);
/// out.extend_from_slice(b"hello");
/// assert_eq!(out, b"\x00\x05hello");
/// ```
pub fn encode_head(len: usize, dst: &mut Vec<u8>) {
    Head { kind: Kind::DATA, len: len as u64 }.encode(dst);
}

/// Appends a whole DATA frame.
pub fn encode(payload: &[u8], dst: &mut Vec<u8>) {
    encode_head(payload.len(), dst);
    dst.extend_from_slice(payload);
}
