//! The 9-octet frame header (RFC 9113 §4.1): length, type, flags, stream identifier.
//!
//! ```text
//! HTTP Frame {
//!   Length (24),
//!   Type (8),
//!   Flags (8),
//!   Reserved (1),
//!   Stream Identifier (31),
//!   Frame Payload (..),
//! }
//! ```

use std::fmt;

use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// Length of the frame header in octets.
pub const HEAD_LEN: usize = 9;

/// The smallest SETTINGS_MAX_FRAME_SIZE, and its initial value: 2^14 (RFC 9113 §4.2).
pub const DEFAULT_MAX_FRAME_SIZE: u32 = 1 << 14;

/// The largest frame payload the 24-bit length field allows, 2^24-1 (RFC 9113 §4.2).
pub const MAX_MAX_FRAME_SIZE: u32 = (1 << 24) - 1;

/// A frame type (RFC 9113 §6, §11.2). Open: RFC 9113 §4.1 "Implementations MUST ignore and
/// discard frames of unknown types", so any octet is a `Kind`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kind(pub u8);

impl Kind {
    /// DATA (§6.1).
    pub const DATA: Kind = Kind(0x0);
    /// HEADERS (§6.2).
    pub const HEADERS: Kind = Kind(0x1);
    /// PRIORITY (§6.3).
    pub const PRIORITY: Kind = Kind(0x2);
    /// RST_STREAM (§6.4).
    pub const RST_STREAM: Kind = Kind(0x3);
    /// SETTINGS (§6.5).
    pub const SETTINGS: Kind = Kind(0x4);
    /// PUSH_PROMISE (§6.6).
    pub const PUSH_PROMISE: Kind = Kind(0x5);
    /// PING (§6.7).
    pub const PING: Kind = Kind(0x6);
    /// GOAWAY (§6.8).
    pub const GOAWAY: Kind = Kind(0x7);
    /// WINDOW_UPDATE (§6.9).
    pub const WINDOW_UPDATE: Kind = Kind(0x8);
    /// CONTINUATION (§6.10).
    pub const CONTINUATION: Kind = Kind(0x9);

    /// The type's name, or `None` for a type RFC 9113 does not define.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x0 => "DATA",
            0x1 => "HEADERS",
            0x2 => "PRIORITY",
            0x3 => "RST_STREAM",
            0x4 => "SETTINGS",
            0x5 => "PUSH_PROMISE",
            0x6 => "PING",
            0x7 => "GOAWAY",
            0x8 => "WINDOW_UPDATE",
            0x9 => "CONTINUATION",
            _ => return None,
        })
    }
}

impl fmt::Debug for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "Kind({:#x})", self.0),
        }
    }
}

/// Frame flags (RFC 9113 §6). A flag's meaning depends on the frame type; RFC 9113 §4.1
/// "Flags that have no defined semantics for a particular frame type MUST be ignored".
pub mod flags {
    /// DATA, HEADERS: the last frame the sender sends on this stream.
    pub const END_STREAM: u8 = 0x1;
    /// SETTINGS, PING: this frame acknowledges the peer's.
    pub const ACK: u8 = 0x1;
    /// HEADERS, PUSH_PROMISE, CONTINUATION: the field block ends in this frame.
    pub const END_HEADERS: u8 = 0x4;
    /// DATA, HEADERS, PUSH_PROMISE: a Pad Length octet and padding are present.
    pub const PADDED: u8 = 0x8;
    /// HEADERS: the exclusive flag, stream dependency and weight are present.
    pub const PRIORITY: u8 = 0x20;
}

/// A decoded frame header.
///
/// # Examples
/// ```
/// use peregrine::http2::StreamId;
/// use peregrine::http2::frame::{Head, Kind, flags};
/// let head = Head::parse(&[0, 0, 4, 0x8, 0, 0x80, 0, 0, 1]);
/// assert_eq!(head, Head { len: 4, kind: Kind::WINDOW_UPDATE, flags: 0, stream: StreamId::new(1) });
/// let mut out = Vec::new();
/// Head::new(Kind::DATA, flags::END_STREAM, StreamId::new(1), 5).encode(&mut out);
/// assert_eq!(out, [0, 0, 5, 0, 1, 0, 0, 0, 1]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// Payload length (24 bits).
    pub len: u32,
    /// Frame type.
    pub kind: Kind,
    /// Flag octet, as received (unknown flags included; decoders ignore them).
    pub flags: u8,
    /// Stream identifier, reserved bit cleared.
    pub stream: StreamId,
}

impl Head {
    /// A header for a payload of `len` octets.
    pub const fn new(kind: Kind, flags: u8, stream: StreamId, len: u32) -> Head {
        Head { len, kind, flags, stream }
    }

    /// Decodes the 9 octets of a frame header. Never fails: every octet string is a header;
    /// the reserved bit is ignored (§4.1).
    pub const fn parse(b: &[u8; HEAD_LEN]) -> Head {
        let len = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        let stream = u32::from_be_bytes([b[5], b[6], b[7], b[8]]);
        Head { len, kind: Kind(b[3]), flags: b[4], stream: StreamId::new(stream) }
    }

    /// The 9 octets of this header (the reserved bit unset, the length's top byte dropped
    /// beyond 24 bits: callers never pass a longer length).
    pub const fn to_bytes(self) -> [u8; HEAD_LEN] {
        let l = self.len.to_be_bytes();
        let s = self.stream.get().to_be_bytes();
        [l[1], l[2], l[3], self.kind.0, self.flags, s[0], s[1], s[2], s[3]]
    }

    /// Appends the 9 octets of this header to `dst`.
    pub fn encode(self, dst: &mut Vec<u8>) {
        dst.extend_from_slice(&self.to_bytes());
    }

    /// Whether `flag` is set.
    pub const fn has(self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// Checks the payload length against our SETTINGS_MAX_FRAME_SIZE before any payload is
    /// read.
    ///
    /// RFC 9113 §4.2: "An endpoint MUST send an error code of FRAME_SIZE_ERROR if a frame
    /// exceeds the size defined in SETTINGS_MAX_FRAME_SIZE". A frame size error in a frame that
    /// could alter the state of the connection must be a connection error; for the rest (DATA,
    /// PRIORITY, RST_STREAM on a stream) the RFC allows either, and we choose the connection:
    /// the frame is not buffered, so skipping it would still cost reading it.
    ///
    /// # Errors
    /// Connection FRAME_SIZE_ERROR when `len > max_frame_size`.
    pub const fn check_len(self, max_frame_size: u32) -> Result<(), Error> {
        if self.len > max_frame_size {
            return Err(Error::connection(
                Reason::FRAME_SIZE_ERROR,
                "frame larger than MAX_FRAME_SIZE",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{HEAD_LEN, Head, Kind, flags};
    use crate::http2::error::Reason;
    use crate::http2::stream_id::StreamId;

    #[test]
    fn parse_and_encode_round_trip() {
        struct Case {
            bytes: [u8; HEAD_LEN],
            head: Head,
        }
        let cases = [
            Case {
                bytes: [0, 0, 0, 4, 1, 0, 0, 0, 0],
                head: Head::new(Kind::SETTINGS, flags::ACK, StreamId::ZERO, 0),
            },
            Case {
                bytes: [0xff, 0xff, 0xff, 0, 0x29, 0x7f, 0xff, 0xff, 0xff],
                head: Head::new(Kind::DATA, 0x29, StreamId::MAX, 0xff_ffff),
            },
            Case {
                bytes: [0, 0x40, 0, 0xfe, 0xff, 0, 0, 0, 7],
                head: Head::new(Kind(0xfe), 0xff, StreamId::new(7), 0x4000),
            },
        ];
        for c in cases {
            assert_eq!(Head::parse(&c.bytes), c.head);
            assert_eq!(c.head.to_bytes(), c.bytes);
        }
    }

    #[test]
    fn the_reserved_bit_is_ignored_on_receipt() {
        let h = Head::parse(&[0, 0, 0, 1, 0, 0x80, 0, 0, 5]);
        assert_eq!(h.stream, StreamId::new(5));
        assert_eq!(h.to_bytes()[5], 0, "reserved bit left unset when sending");
    }

    #[test]
    fn length_above_max_frame_size_is_a_connection_frame_size_error() {
        let h = Head::new(Kind::DATA, 0, StreamId::new(1), 16_385);
        let e = h.check_len(16_384).unwrap_err();
        assert!(e.is_connection());
        assert_eq!(e.reason(), Reason::FRAME_SIZE_ERROR);
        assert!(h.check_len(16_385).is_ok());
    }

    #[test]
    fn kinds_have_names_and_unknown_kinds_are_open() {
        assert_eq!(format!("{:?}", Kind::CONTINUATION), "CONTINUATION");
        assert_eq!(format!("{:?}", Kind(0x16)), "Kind(0x16)");
        assert_eq!(Kind(0xa).name(), None);
    }
}
