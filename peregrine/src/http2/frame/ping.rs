//! PING frames (RFC 9113 §6.7).
//!
//! ```text
//! PING Frame {
//!   Length (24) = 0x08, Type (8) = 0x06,
//!   Unused Flags (7), ACK Flag (1),
//!   Reserved (1), Stream Identifier (31) = 0,
//!   Opaque Data (64),
//! }
//! ```

use super::head::{Head, Kind, flags};
use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// A decoded PING frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ping {
    /// ACK: this answers our PING with the same payload.
    pub ack: bool,
    /// The 8 opaque octets.
    pub payload: [u8; 8],
}

impl Ping {
    /// Decodes a PING payload.
    ///
    /// # Errors
    /// - RFC 9113 §6.7: "If a PING frame is received with a Stream Identifier field value other
    ///   than 0x00, the recipient MUST respond with a connection error (Section 5.4.1) of type
    ///   PROTOCOL_ERROR."
    /// - "Receipt of a PING frame with a length field value other than 8 MUST be treated as a
    ///   connection error (Section 5.4.1) of type FRAME_SIZE_ERROR."
    pub fn decode(head: Head, payload: &[u8]) -> Result<Ping, Error> {
        if !head.stream.is_zero() {
            return Err(Error::connection(Reason::PROTOCOL_ERROR, "PING on a stream"));
        }
        let Ok(payload) = <[u8; 8]>::try_from(payload) else {
            return Err(Error::connection(Reason::FRAME_SIZE_ERROR, "PING length not 8"));
        };
        Ok(Ping { ack: head.has(flags::ACK), payload })
    }

    /// Appends this PING frame.
    ///
    /// # Examples
    /// ```
    /// use peregrine::http2::frame::Ping;
    /// let mut out = Vec::new();
    /// Ping { ack: true, payload: *b"12345678" }.encode(&mut out);
    /// assert_eq!(out, b"\x00\x00\x08\x06\x01\x00\x00\x00\x0012345678");
    /// ```
    pub fn encode(self, dst: &mut Vec<u8>) {
        let f = if self.ack { flags::ACK } else { 0 };
        Head::new(Kind::PING, f, StreamId::ZERO, 8).encode(dst);
        dst.extend_from_slice(&self.payload);
    }
}

#[cfg(test)]
mod tests {
    use super::Ping;
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{Head, Kind, flags};
    use crate::http2::stream_id::StreamId;

    #[test]
    fn decode_rules() {
        struct Case {
            flags: u8,
            stream: u32,
            payload: &'static [u8],
            expect: Result<bool, Reason>,
        }
        let cases = [
            Case { flags: 0, stream: 0, payload: b"abcdefgh", expect: Ok(false) },
            Case { flags: flags::ACK, stream: 0, payload: b"abcdefgh", expect: Ok(true) },
            // Unknown flags ignored.
            Case { flags: 0xfe, stream: 0, payload: b"abcdefgh", expect: Ok(false) },
            Case { flags: 0, stream: 3, payload: b"abcdefgh", expect: Err(Reason::PROTOCOL_ERROR) },
            Case {
                flags: 0,
                stream: 0,
                payload: b"abcdefg",
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
            Case {
                flags: 0,
                stream: 0,
                payload: b"abcdefghi",
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
        ];
        for c in cases {
            let head =
                Head::new(Kind::PING, c.flags, StreamId::new(c.stream), c.payload.len() as u32);
            match (Ping::decode(head, c.payload), c.expect) {
                (Ok(p), Ok(ack)) => assert_eq!((p.ack, &p.payload[..]), (ack, c.payload)),
                (Err(e), Err(r)) => assert!(e.is_connection() && e.reason() == r),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }
}
