//! Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2): the integer every
//! unidirectional stream starts with.
//!
//! ```text
//! Unidirectional Stream Header {
//!   Stream Type (i),
//! }
//! ```

use std::fmt;

use super::error::is_reserved;

/// A unidirectional stream type. Open: §6.2 "Recipients of unknown stream types MUST either
/// abort reading of the stream or discard incoming data without further processing."
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamType(pub u64);

impl StreamType {
    /// 0x00: the control stream (RFC 9114 §6.2.1), one per endpoint.
    pub const CONTROL: StreamType = StreamType(0x00);
    /// 0x01: a push stream (RFC 9114 §6.2.2), server to client.
    pub const PUSH: StreamType = StreamType(0x01);
    /// 0x02: the QPACK encoder stream (RFC 9204 §4.2), one per endpoint.
    pub const ENCODER: StreamType = StreamType(0x02);
    /// 0x03: the QPACK decoder stream (RFC 9204 §4.2), one per endpoint.
    pub const DECODER: StreamType = StreamType(0x03);

    /// The type's name, or `None` for one this crate does not know.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x00 => "CONTROL",
            0x01 => "PUSH",
            0x02 => "ENCODER",
            0x03 => "DECODER",
            _ => return None,
        })
    }

    /// A reserved type, `0x1f * N + 0x21` (§6.2.3), treated as unknown.
    pub const fn is_reserved(self) -> bool {
        is_reserved(self.0)
    }
}

impl fmt::Debug for StreamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "StreamType({:#x})", self.0),
        }
    }
}
