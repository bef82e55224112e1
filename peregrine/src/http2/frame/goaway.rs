//! GOAWAY frames (RFC 9113 §6.8).
//!
//! ```text
//! GOAWAY Frame {
//!   Length (24), Type (8) = 0x07,
//!   Unused Flags (8),
//!   Reserved (1), Stream Identifier (31) = 0,
//!   Reserved (1), Last-Stream-ID (31),
//!   Error Code (32),
//!   Additional Debug Data (..),
//! }
//! ```

use super::head::{Head, Kind};
use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// A decoded GOAWAY frame, borrowing its debug data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoAway<'a> {
    /// The highest-numbered stream the sender might have acted on.
    pub last_stream_id: StreamId,
    /// Why the connection is closing.
    pub reason: Reason,
    /// Opaque diagnostic data.
    pub debug_data: &'a [u8],
}

impl<'a> GoAway<'a> {
    /// Decodes a GOAWAY payload.
    ///
    /// # Errors
    /// - RFC 9113 §6.8: "An endpoint MUST treat a GOAWAY frame with a stream identifier other
    ///   than 0x00 as a connection error (Section 5.4.1) of type PROTOCOL_ERROR."
    /// - Shorter than 8 octets: connection FRAME_SIZE_ERROR (§4.2, mandatory fields missing).
    pub fn decode(head: Head, payload: &'a [u8]) -> Result<GoAway<'a>, Error> {
        if !head.stream.is_zero() {
            return Err(Error::connection(Reason::PROTOCOL_ERROR, "GOAWAY on a stream"));
        }
        let Some((fixed, debug_data)) = payload.split_first_chunk::<8>() else {
            return Err(Error::connection(Reason::FRAME_SIZE_ERROR, "GOAWAY shorter than 8"));
        };
        let last = u32::from_be_bytes([fixed[0], fixed[1], fixed[2], fixed[3]]);
        let code = u32::from_be_bytes([fixed[4], fixed[5], fixed[6], fixed[7]]);
        Ok(GoAway { last_stream_id: StreamId::new(last), reason: Reason::from(code), debug_data })
    }

    /// Appends this GOAWAY frame.
    ///
    /// # Examples
    /// ```
    /// use peregrine::http2::{Reason, StreamId};
    /// use peregrine::http2::frame::GoAway;
    /// let mut out = Vec::new();
    /// GoAway { last_stream_id: StreamId::new(3), reason: Reason::NO_ERROR, debug_data: b"" }.encode(&mut out);
    /// assert_eq!(out, b"\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00");
    /// ```
    pub fn encode(self, dst: &mut Vec<u8>) {
        Head::new(Kind::GOAWAY, 0, StreamId::ZERO, 8 + self.debug_data.len() as u32).encode(dst);
        dst.extend_from_slice(&self.last_stream_id.get().to_be_bytes());
        dst.extend_from_slice(&u32::from(self.reason).to_be_bytes());
        dst.extend_from_slice(self.debug_data);
    }
}

#[cfg(test)]
mod tests {
    use super::GoAway;
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{Head, Kind};
    use crate::http2::stream_id::StreamId;

    #[test]
    fn decode_rules() {
        struct Case {
            stream: u32,
            payload: &'static [u8],
            expect: Result<(u32, Reason, &'static [u8]), Reason>,
        }
        let cases = [
            Case {
                stream: 0,
                payload: b"\x00\x00\x00\x05\x00\x00\x00\x00",
                expect: Ok((5, Reason::NO_ERROR, b"")),
            },
            // Reserved bit of Last-Stream-ID ignored; debug data kept.
            Case {
                stream: 0,
                payload: b"\x80\x00\x00\x07\x00\x00\x00\x0bcalm",
                expect: Ok((7, Reason::ENHANCE_YOUR_CALM, b"calm")),
            },
            Case {
                stream: 1,
                payload: b"\x00\x00\x00\x05\x00\x00\x00\x00",
                expect: Err(Reason::PROTOCOL_ERROR),
            },
            Case {
                stream: 0,
                payload: b"\x00\x00\x00\x05\x00\x00\x00",
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
            Case { stream: 0, payload: b"", expect: Err(Reason::FRAME_SIZE_ERROR) },
        ];
        for c in cases {
            let head = Head::new(Kind::GOAWAY, 0, StreamId::new(c.stream), c.payload.len() as u32);
            match (GoAway::decode(head, c.payload), c.expect) {
                (Ok(g), Ok((last, r, d))) => {
                    assert_eq!((g.last_stream_id.get(), g.reason, g.debug_data), (last, r, d))
                }
                (Err(e), Err(r)) => assert!(e.is_connection() && e.reason() == r),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }
}
