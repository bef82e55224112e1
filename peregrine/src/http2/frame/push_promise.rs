//! PUSH_PROMISE frames (RFC 9113 §6.6). Decoded so a client can refuse them exactly: this crate
//! never pushes and always advertises SETTINGS_ENABLE_PUSH = 0.
//!
//! ```text
//! PUSH_PROMISE Frame {
//!   Length (24), Type (8) = 0x05,
//!   Unused Flags (4), PADDED Flag (1), END_HEADERS Flag (1), Unused Flags (2),
//!   Reserved (1), Stream Identifier (31),
//!   [Pad Length (8)],
//!   Reserved (1), Promised Stream ID (31),
//!   Field Block Fragment (..),
//!   Padding (..2040),
//! }
//! ```

use super::head::{Head, Kind, flags};
use super::padding;
use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// A decoded PUSH_PROMISE frame, borrowing its fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PushPromise<'a> {
    /// The stream the promise is associated with.
    pub stream: StreamId,
    /// The stream the server reserves.
    pub promised: StreamId,
    /// The field block fragment (the promised request's head).
    pub fragment: &'a [u8],
    /// END_HEADERS.
    pub end_headers: bool,
}

impl<'a> PushPromise<'a> {
    /// Decodes a PUSH_PROMISE payload.
    ///
    /// # Errors
    /// - RFC 9113 §6.6: "If the Stream Identifier field specifies the value 0x00, a recipient
    ///   MUST respond with a connection error (Section 5.4.1) of type PROTOCOL_ERROR."
    /// - Padding as long as the payload: connection PROTOCOL_ERROR; no room for the promised
    ///   stream id: connection FRAME_SIZE_ERROR.
    pub fn decode(head: Head, payload: &'a [u8]) -> Result<PushPromise<'a>, Error> {
        if head.stream.is_zero() {
            return Err(Error::connection(Reason::PROTOCOL_ERROR, "PUSH_PROMISE on stream 0"));
        }
        let content = padding::strip(head, payload)?;
        let Some((id, fragment)) = content.split_first_chunk::<4>() else {
            return Err(Error::connection(Reason::FRAME_SIZE_ERROR, "PUSH_PROMISE too short"));
        };
        Ok(PushPromise {
            stream: head.stream,
            promised: StreamId::new(u32::from_be_bytes(*id)),
            fragment,
            end_headers: head.has(flags::END_HEADERS),
        })
    }

    /// Appends this PUSH_PROMISE frame (for tests that play a pushing server).
    pub fn encode(self, dst: &mut Vec<u8>) {
        let f = if self.end_headers { flags::END_HEADERS } else { 0 };
        Head::new(Kind::PUSH_PROMISE, f, self.stream, 4 + self.fragment.len() as u32).encode(dst);
        dst.extend_from_slice(&self.promised.get().to_be_bytes());
        dst.extend_from_slice(self.fragment);
    }
}

#[cfg(test)]
mod tests {
    use super::PushPromise;
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{HEAD_LEN, Head, Kind, flags};
    use crate::http2::stream_id::StreamId;

    #[test]
    fn decode_rules() {
        struct Case {
            stream: u32,
            flags: u8,
            payload: &'static [u8],
            expect: Result<(u32, &'static [u8]), Reason>,
        }
        let cases = [
            Case {
                stream: 1,
                flags: flags::END_HEADERS,
                payload: b"\x00\x00\x00\x02\x82",
                expect: Ok((2, b"\x82")),
            },
            Case {
                stream: 1,
                flags: flags::PADDED,
                payload: b"\x01\x00\x00\x00\x04\x82\x00",
                expect: Ok((4, b"\x82")),
            },
            Case {
                stream: 1,
                flags: 0,
                payload: b"\x00\x00\x02",
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
            Case {
                stream: 1,
                flags: flags::PADDED,
                payload: b"\x07\x00\x00\x00\x04\x82\x00",
                expect: Err(Reason::PROTOCOL_ERROR),
            },
            Case {
                stream: 0,
                flags: 0,
                payload: b"\x00\x00\x00\x02",
                expect: Err(Reason::PROTOCOL_ERROR),
            },
        ];
        for c in cases {
            let head = Head::new(
                Kind::PUSH_PROMISE,
                c.flags,
                StreamId::new(c.stream),
                c.payload.len() as u32,
            );
            match (PushPromise::decode(head, c.payload), c.expect) {
                (Ok(p), Ok((promised, frag))) => {
                    assert_eq!((p.promised.get(), p.fragment), (promised, frag))
                }
                (Err(e), Err(r)) => assert!(e.is_connection() && e.reason() == r),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }

    #[test]
    fn encode_then_decode() {
        let p = PushPromise {
            stream: StreamId::new(1),
            promised: StreamId::new(2),
            fragment: b"\x82",
            end_headers: true,
        };
        let mut out = Vec::new();
        p.encode(&mut out);
        let h = Head::parse(out[..HEAD_LEN].try_into().unwrap());
        assert_eq!(PushPromise::decode(h, &out[HEAD_LEN..]), Ok(p));
    }
}
