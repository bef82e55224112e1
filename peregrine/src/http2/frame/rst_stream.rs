//! RST_STREAM frames (RFC 9113 §6.4).
//!
//! ```text
//! RST_STREAM Frame {
//!   Length (24) = 0x04, Type (8) = 0x03,
//!   Unused Flags (8),
//!   Reserved (1), Stream Identifier (31),
//!   Error Code (32),
//! }
//! ```

use super::head::{Head, Kind};
use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// A decoded RST_STREAM frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RstStream {
    /// The stream reset.
    pub stream: StreamId,
    /// Why.
    pub reason: Reason,
}

impl RstStream {
    /// Decodes a RST_STREAM payload.
    ///
    /// # Errors
    /// - RFC 9113 §6.4: "If a RST_STREAM frame is received with a stream identifier of 0x00,
    ///   the recipient MUST treat this as a connection error (Section 5.4.1) of type
    ///   PROTOCOL_ERROR."
    /// - "A RST_STREAM frame with a length other than 4 octets MUST be treated as a connection
    ///   error (Section 5.4.1) of type FRAME_SIZE_ERROR."
    pub fn decode(head: Head, payload: &[u8]) -> Result<RstStream, Error> {
        if head.stream.is_zero() {
            return Err(Error::connection(Reason::PROTOCOL_ERROR, "RST_STREAM on stream 0"));
        }
        let Ok(code) = <[u8; 4]>::try_from(payload) else {
            return Err(Error::connection(Reason::FRAME_SIZE_ERROR, "RST_STREAM length not 4"));
        };
        Ok(RstStream { stream: head.stream, reason: Reason::from(u32::from_be_bytes(code)) })
    }

    /// Appends this RST_STREAM frame.
    ///
    /// # Examples
    /// ```
    /// use peregrine::http2::{Reason, StreamId};
    /// use peregrine::http2::frame::RstStream;
    /// let mut out = Vec::new();
    /// RstStream { stream: StreamId::new(1), reason: Reason::CANCEL }.encode(&mut out);
    /// assert_eq!(out, b"\x00\x00\x04\x03\x00\x00\x00\x00\x01\x00\x00\x00\x08");
    /// ```
    pub fn encode(self, dst: &mut Vec<u8>) {
        Head::new(Kind::RST_STREAM, 0, self.stream, 4).encode(dst);
        dst.extend_from_slice(&u32::from(self.reason).to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::RstStream;
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{Head, Kind};
    use crate::http2::stream_id::StreamId;

    #[test]
    fn decode_rules() {
        struct Case {
            stream: u32,
            payload: &'static [u8],
            expect: Result<Reason, Reason>,
        }
        let cases = [
            Case { stream: 1, payload: b"\x00\x00\x00\x08", expect: Ok(Reason::CANCEL) },
            // Unknown codes round-trip (§7).
            Case { stream: 1, payload: b"\xde\xad\xbe\xef", expect: Ok(Reason::from(0xdead_beef)) },
            Case { stream: 0, payload: b"\x00\x00\x00\x08", expect: Err(Reason::PROTOCOL_ERROR) },
            Case { stream: 1, payload: b"\x00\x00\x08", expect: Err(Reason::FRAME_SIZE_ERROR) },
            Case {
                stream: 1,
                payload: b"\x00\x00\x00\x00\x08",
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
        ];
        for c in cases {
            let head =
                Head::new(Kind::RST_STREAM, 0xff, StreamId::new(c.stream), c.payload.len() as u32);
            match (RstStream::decode(head, c.payload), c.expect) {
                (Ok(f), Ok(r)) => assert_eq!(f.reason, r),
                (Err(e), Err(r)) => assert!(e.is_connection() && e.reason() == r),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }
}
