//! Padding of DATA, HEADERS and PUSH_PROMISE frames (RFC 9113 §6.1, §6.2, §6.6).
//!
//! ```text
//! Pad Length (8),   -- present when PADDED is set
//! ..content..,
//! Padding (..2040), -- Pad Length octets, which a receiver does not check
//! ```

use super::head::{Head, flags};
use crate::http2::error::{Error, Reason};

/// How many payload octets precede the content: 1 when PADDED is set, else 0.
pub const fn prefix_len(head: Head) -> u32 {
    head.has(flags::PADDED) as u32
}

/// The content length of a frame of `len` payload octets whose Pad Length octet is `pad`
/// (PADDED set).
///
/// # Errors
/// RFC 9113 §6.1: "If the length of the padding is the length of the frame payload or greater,
/// the recipient MUST treat this as a connection error (Section 5.4.1) of type PROTOCOL_ERROR."
pub const fn content_len(len: u32, pad: u8) -> Result<u32, Error> {
    if pad as u32 >= len {
        return Err(Error::connection(Reason::PROTOCOL_ERROR, "padding longer than the payload"));
    }
    Ok(len - 1 - pad as u32)
}

/// The content of a whole payload: without the Pad Length octet and the padding.
///
/// # Errors
/// Connection FRAME_SIZE_ERROR for a PADDED frame without room for its Pad Length octet
/// (RFC 9113 §4.2 "too small to contain mandatory frame data"); connection PROTOCOL_ERROR for
/// padding as long as the payload or longer (§6.1).
pub fn strip(head: Head, payload: &[u8]) -> Result<&[u8], Error> {
    if !head.has(flags::PADDED) {
        return Ok(payload);
    }
    let Some((&pad, rest)) = payload.split_first() else {
        return Err(Error::connection(Reason::FRAME_SIZE_ERROR, "padded frame without Pad Length"));
    };
    // `payload.len()` is at most 2^24-1: it came from a 24-bit length.
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    let content = content_len(len, pad)? as usize;
    Ok(&rest[..content])
}

#[cfg(test)]
mod tests {
    use super::strip;
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{Head, Kind, flags};
    use crate::http2::stream_id::StreamId;

    #[test]
    fn padding_rules() {
        struct Case {
            padded: bool,
            payload: &'static [u8],
            expect: Result<&'static [u8], Reason>,
        }
        let cases = [
            Case { padded: false, payload: b"abc", expect: Ok(b"abc") },
            Case { padded: false, payload: b"", expect: Ok(b"") },
            Case { padded: true, payload: b"\x00abc", expect: Ok(b"abc") },
            Case { padded: true, payload: b"\x02abc", expect: Ok(b"a") },
            // All padding, no content: allowed (pad length = payload length - 1).
            Case { padded: true, payload: b"\x03abc", expect: Ok(b"") },
            Case { padded: true, payload: b"\x00", expect: Ok(b"") },
            // Padding as long as the payload: PROTOCOL_ERROR.
            Case { padded: true, payload: b"\x04abc", expect: Err(Reason::PROTOCOL_ERROR) },
            Case { padded: true, payload: b"\xffabc", expect: Err(Reason::PROTOCOL_ERROR) },
            // No room for the Pad Length octet.
            Case { padded: true, payload: b"", expect: Err(Reason::FRAME_SIZE_ERROR) },
        ];
        for c in cases {
            let f = if c.padded { flags::PADDED } else { 0 };
            let head = Head::new(Kind::DATA, f, StreamId::new(1), c.payload.len() as u32);
            let got = strip(head, c.payload);
            match (got, c.expect) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{:?}", c.payload),
                (Err(e), Err(r)) => {
                    assert!(e.is_connection());
                    assert_eq!(e.reason(), r, "{:?}", c.payload);
                }
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }
}
