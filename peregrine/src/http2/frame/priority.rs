//! PRIORITY frames (RFC 9113 §6.3), parsed and otherwise ignored: RFC 9113 §5.3.2 deprecates
//! the RFC 7540 priority scheme, and its signals "MAY be ignored".
//!
//! ```text
//! PRIORITY Frame {
//!   Length (24) = 0x05, Type (8) = 0x02,
//!   Unused Flags (8),
//!   Reserved (1), Stream Identifier (31),
//!   Exclusive (1), Stream Dependency (31), Weight (8),
//! }
//! ```

use super::head::{Head, Kind};
use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// The priority fields of PRIORITY and of HEADERS with the PRIORITY flag (5 octets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrioritySpec {
    /// The stream this one depends on.
    pub dependency: StreamId,
    /// The exclusive flag.
    pub exclusive: bool,
    /// Weight minus one (0..=255 stands for 1..=256).
    pub weight: u8,
}

impl PrioritySpec {
    /// Decodes the 5 octets.
    pub const fn parse(b: &[u8; 5]) -> PrioritySpec {
        let dep = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        PrioritySpec { dependency: StreamId::new(dep), exclusive: dep >> 31 == 1, weight: b[4] }
    }

    /// The 5 octets.
    pub const fn to_bytes(self) -> [u8; 5] {
        let d = (self.dependency.get() | (self.exclusive as u32) << 31).to_be_bytes();
        [d[0], d[1], d[2], d[3], self.weight]
    }
}

/// A decoded PRIORITY frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priority {
    /// The stream being prioritised (any state, idle included).
    pub stream: StreamId,
    /// Its priority.
    pub spec: PrioritySpec,
}

impl Priority {
    /// Decodes a PRIORITY payload.
    ///
    /// # Errors
    /// - RFC 9113 §6.3: "If a PRIORITY frame is received with a stream identifier of 0x00, the
    ///   recipient MUST respond with a connection error (Section 5.4.1) of type PROTOCOL_ERROR."
    /// - "A PRIORITY frame with a length other than 5 octets MUST be treated as a stream error
    ///   (Section 5.4.2) of type FRAME_SIZE_ERROR."
    /// - RFC 7540 §5.3.1 "A stream cannot depend on itself. An endpoint MUST treat this as a
    ///   stream error (Section 5.4.2) of type PROTOCOL_ERROR." (h2spec checks it.)
    pub fn decode(head: Head, payload: &[u8]) -> Result<Priority, Error> {
        if head.stream.is_zero() {
            return Err(Error::connection(Reason::PROTOCOL_ERROR, "PRIORITY on stream 0"));
        }
        let Ok(fields) = <&[u8; 5]>::try_from(payload) else {
            return Err(Error::stream(head.stream, Reason::FRAME_SIZE_ERROR));
        };
        let spec = PrioritySpec::parse(fields);
        if spec.dependency == head.stream {
            return Err(Error::stream(head.stream, Reason::PROTOCOL_ERROR));
        }
        Ok(Priority { stream: head.stream, spec })
    }

    /// Appends this PRIORITY frame.
    pub fn encode(self, dst: &mut Vec<u8>) {
        Head::new(Kind::PRIORITY, 0, self.stream, 5).encode(dst);
        dst.extend_from_slice(&self.spec.to_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::{Priority, PrioritySpec};
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{HEAD_LEN, Head, Kind};
    use crate::http2::stream_id::StreamId;

    #[test]
    fn decode_rules() {
        struct Case {
            stream: u32,
            payload: &'static [u8],
            expect: Result<PrioritySpec, (bool, Reason)>,
        }
        let spec = |dep, exclusive, weight| PrioritySpec {
            dependency: StreamId::new(dep),
            exclusive,
            weight,
        };
        let cases = [
            Case { stream: 1, payload: b"\x00\x00\x00\x00\xff", expect: Ok(spec(0, false, 255)) },
            Case { stream: 3, payload: b"\x80\x00\x00\x01\x0f", expect: Ok(spec(1, true, 15)) },
            Case {
                stream: 0,
                payload: b"\x00\x00\x00\x01\x0f",
                expect: Err((true, Reason::PROTOCOL_ERROR)),
            },
            Case {
                stream: 1,
                payload: b"\x80\x00\x00\x01",
                expect: Err((false, Reason::FRAME_SIZE_ERROR)),
            },
            Case {
                stream: 1,
                payload: b"\x80\x00\x00\x01\x00\x00",
                expect: Err((false, Reason::FRAME_SIZE_ERROR)),
            },
            // Depends on itself, exclusive bit or not.
            Case {
                stream: 1,
                payload: b"\x00\x00\x00\x01\x0f",
                expect: Err((false, Reason::PROTOCOL_ERROR)),
            },
            Case {
                stream: 1,
                payload: b"\x80\x00\x00\x01\x0f",
                expect: Err((false, Reason::PROTOCOL_ERROR)),
            },
        ];
        for c in cases {
            let head =
                Head::new(Kind::PRIORITY, 0, StreamId::new(c.stream), c.payload.len() as u32);
            match (Priority::decode(head, c.payload), c.expect) {
                (Ok(p), Ok(s)) => assert_eq!(p.spec, s),
                (Err(e), Err((conn, r))) => assert_eq!((e.is_connection(), e.reason()), (conn, r)),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }

    #[test]
    fn encode_then_decode() {
        let p = Priority {
            stream: StreamId::new(7),
            spec: PrioritySpec { dependency: StreamId::new(3), exclusive: true, weight: 9 },
        };
        let mut out = Vec::new();
        p.encode(&mut out);
        let h = Head::parse(out[..HEAD_LEN].try_into().unwrap());
        assert_eq!(Priority::decode(h, &out[HEAD_LEN..]), Ok(p));
    }
}
