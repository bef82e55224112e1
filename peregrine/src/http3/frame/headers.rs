//! HEADERS frames (RFC 9114 §7.2.2): one encoded field section (RFC 9204 §4.5), collected
//! whole by the connection before QPACK decodes it.
//!
//! ```text
//! HEADERS Frame {
//!   Type (i) = 0x01,
//!   Length (i),
//!   Encoded Field Section (..),
//! }
//! ```
//!
//! "If a HEADERS frame is received on a control stream, the recipient MUST respond with a
//! connection error of type H3_FRAME_UNEXPECTED" ([`check_placement`](super::check_placement)).

use super::{Head, Kind};

/// Appends a HEADERS frame carrying `section`.
///
/// # Examples
/// ```
/// use peregrine::http3::frame::headers;
/// let mut out = Vec::new();
/// headers::encode(b"\x00\x00\xd9", &mut out); // :status 200 (QPACK static 25)
/// assert_eq!(out, b"\x01\x03\x00\x00\xd9");
/// ```
pub fn encode(section: &[u8], dst: &mut Vec<u8>) {
    Head { kind: Kind::HEADERS, len: section.len() as u64 }.encode(dst);
    dst.extend_from_slice(section);
}
