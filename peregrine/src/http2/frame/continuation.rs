//! CONTINUATION frames (RFC 9113 §6.10).
//!
//! ```text
//! CONTINUATION Frame {
//!   Length (24), Type (8) = 0x09,
//!   Unused Flags (5), END_HEADERS Flag (1), Unused Flags (2),
//!   Reserved (1), Stream Identifier (31),
//!   Field Block Fragment (..),
//! }
//! ```
//!
//! Where a CONTINUATION may appear (only right after HEADERS or PUSH_PROMISE or CONTINUATION
//! without END_HEADERS, on the same stream) is the connection's rule, not the frame's.

use super::head::{Head, Kind, flags};
use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// A decoded CONTINUATION frame, borrowing its fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Continuation<'a> {
    /// The stream.
    pub stream: StreamId,
    /// The next piece of the field block.
    pub fragment: &'a [u8],
    /// END_HEADERS: the block ends here.
    pub end_headers: bool,
}

impl<'a> Continuation<'a> {
    /// Decodes a CONTINUATION payload.
    ///
    /// # Errors
    /// RFC 9113 §6.10: "If a CONTINUATION frame is received with a Stream Identifier field of
    /// 0x00, the recipient MUST respond with a connection error (Section 5.4.1) of type
    /// PROTOCOL_ERROR."
    pub fn decode(head: Head, payload: &'a [u8]) -> Result<Continuation<'a>, Error> {
        if head.stream.is_zero() {
            return Err(Error::connection(Reason::PROTOCOL_ERROR, "CONTINUATION on stream 0"));
        }
        Ok(Continuation {
            stream: head.stream,
            fragment: payload,
            end_headers: head.has(flags::END_HEADERS),
        })
    }

    /// Appends this CONTINUATION frame.
    pub fn encode(self, dst: &mut Vec<u8>) {
        let f = if self.end_headers { flags::END_HEADERS } else { 0 };
        Head::new(Kind::CONTINUATION, f, self.stream, self.fragment.len() as u32).encode(dst);
        dst.extend_from_slice(self.fragment);
    }
}

#[cfg(test)]
mod tests {
    use super::Continuation;
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{HEAD_LEN, Head, Kind, flags};
    use crate::http2::stream_id::StreamId;

    #[test]
    fn decode_rules() {
        struct Case {
            stream: u32,
            flags: u8,
            payload: &'static [u8],
            expect: Result<bool, Reason>,
        }
        let cases = [
            Case { stream: 1, flags: flags::END_HEADERS, payload: b"\x82", expect: Ok(true) },
            Case { stream: 1, flags: 0, payload: b"", expect: Ok(false) },
            // PADDED has no meaning on CONTINUATION: ignored, the octet stays in the fragment.
            Case {
                stream: 1,
                flags: flags::PADDED | flags::END_HEADERS,
                payload: b"\x05ab",
                expect: Ok(true),
            },
            Case {
                stream: 0,
                flags: flags::END_HEADERS,
                payload: b"\x82",
                expect: Err(Reason::PROTOCOL_ERROR),
            },
        ];
        for c in cases {
            let head = Head::new(
                Kind::CONTINUATION,
                c.flags,
                StreamId::new(c.stream),
                c.payload.len() as u32,
            );
            match (Continuation::decode(head, c.payload), c.expect) {
                (Ok(f), Ok(end)) => assert_eq!((f.fragment, f.end_headers), (c.payload, end)),
                (Err(e), Err(r)) => assert!(e.is_connection() && e.reason() == r),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }

    #[test]
    fn encode_then_decode() {
        let c = Continuation { stream: StreamId::new(3), fragment: b"\x84\x86", end_headers: true };
        let mut out = Vec::new();
        c.encode(&mut out);
        let h = Head::parse(out[..HEAD_LEN].try_into().unwrap());
        assert_eq!(Continuation::decode(h, &out[HEAD_LEN..]), Ok(c));
    }
}
