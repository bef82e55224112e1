//! WINDOW_UPDATE frames (RFC 9113 §6.9).
//!
//! ```text
//! WINDOW_UPDATE Frame {
//!   Length (24) = 0x04, Type (8) = 0x08,
//!   Unused Flags (8),
//!   Reserved (1), Stream Identifier (31),
//!   Reserved (1), Window Size Increment (31),
//! }
//! ```

use super::head::{Head, Kind};
use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// The largest window increment, and the largest window: 2^31-1 (RFC 9113 §6.9).
pub const MAX_INCREMENT: u32 = 0x7fff_ffff;

/// A decoded WINDOW_UPDATE frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowUpdate {
    /// The stream, or 0 for the connection window.
    pub stream: StreamId,
    /// The increment, 1..=2^31-1.
    pub increment: u32,
}

impl WindowUpdate {
    /// Decodes a WINDOW_UPDATE payload.
    ///
    /// # Errors
    /// - RFC 9113 §6.9: "A WINDOW_UPDATE frame with a length other than 4 octets MUST be
    ///   treated as a connection error (Section 5.4.1) of type FRAME_SIZE_ERROR."
    /// - "A receiver MUST treat the receipt of a WINDOW_UPDATE frame with a flow-control window
    ///   increment of 0 as a stream error (Section 5.4.2) of type PROTOCOL_ERROR; errors on the
    ///   connection flow-control window MUST be treated as a connection error".
    pub fn decode(head: Head, payload: &[u8]) -> Result<WindowUpdate, Error> {
        let Ok(raw) = <[u8; 4]>::try_from(payload) else {
            return Err(Error::connection(Reason::FRAME_SIZE_ERROR, "WINDOW_UPDATE length not 4"));
        };
        // The reserved bit is ignored (§6.9 "Reserved (1)", §4.1).
        let increment = u32::from_be_bytes(raw) & MAX_INCREMENT;
        if increment == 0 {
            if head.stream.is_zero() {
                return Err(Error::connection(Reason::PROTOCOL_ERROR, "WINDOW_UPDATE of 0"));
            }
            return Err(Error::stream(head.stream, Reason::PROTOCOL_ERROR));
        }
        Ok(WindowUpdate { stream: head.stream, increment })
    }

    /// Appends this WINDOW_UPDATE frame.
    ///
    /// # Examples
    /// ```
    /// use peregrine::http2::StreamId;
    /// use peregrine::http2::frame::WindowUpdate;
    /// let mut out = Vec::new();
    /// WindowUpdate { stream: StreamId::ZERO, increment: 0x1_0000 }.encode(&mut out);
    /// assert_eq!(out, b"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x01\x00\x00");
    /// ```
    pub fn encode(self, dst: &mut Vec<u8>) {
        Head::new(Kind::WINDOW_UPDATE, 0, self.stream, 4).encode(dst);
        dst.extend_from_slice(&(self.increment & MAX_INCREMENT).to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::WindowUpdate;
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{Head, Kind};
    use crate::http2::stream_id::StreamId;

    #[test]
    fn decode_rules() {
        struct Case {
            stream: u32,
            payload: &'static [u8],
            expect: Result<u32, (bool, Reason)>,
        }
        let cases = [
            Case { stream: 0, payload: b"\x00\x00\x00\x01", expect: Ok(1) },
            Case { stream: 1, payload: b"\x7f\xff\xff\xff", expect: Ok(0x7fff_ffff) },
            Case { stream: 1, payload: b"\xff\xff\xff\xff", expect: Ok(0x7fff_ffff) },
            Case {
                stream: 1,
                payload: b"\x00\x00\x00\x00",
                expect: Err((false, Reason::PROTOCOL_ERROR)),
            },
            // Only the reserved bit set: an increment of 0.
            Case {
                stream: 1,
                payload: b"\x80\x00\x00\x00",
                expect: Err((false, Reason::PROTOCOL_ERROR)),
            },
            Case {
                stream: 0,
                payload: b"\x00\x00\x00\x00",
                expect: Err((true, Reason::PROTOCOL_ERROR)),
            },
            Case {
                stream: 1,
                payload: b"\x00\x00\x01",
                expect: Err((true, Reason::FRAME_SIZE_ERROR)),
            },
            Case {
                stream: 0,
                payload: b"\x00\x00\x00\x00\x01",
                expect: Err((true, Reason::FRAME_SIZE_ERROR)),
            },
        ];
        for c in cases {
            let head =
                Head::new(Kind::WINDOW_UPDATE, 0, StreamId::new(c.stream), c.payload.len() as u32);
            match (WindowUpdate::decode(head, c.payload), c.expect) {
                (Ok(w), Ok(inc)) => assert_eq!(w.increment, inc),
                (Err(e), Err((conn, r))) => assert_eq!((e.is_connection(), e.reason()), (conn, r)),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }
}
