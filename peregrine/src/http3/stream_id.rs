//! QUIC stream identifiers (RFC 9000 §2.1) as HTTP/3 reads them: who opened the stream and in
//! which directions it carries data decide what it is (RFC 9114 §6).

use std::fmt;

use crate::role::Role;

/// A QUIC stream identifier, 0..=2^62-1 (RFC 9000 §2.1).
///
/// "The least significant bit (0x01) of the stream ID identifies the initiator of the stream.
/// Client-initiated streams have even-numbered stream IDs (with the bit set to 0), and
/// server-initiated streams have odd-numbered stream IDs" and "The second least significant bit
/// (0x02) of the stream ID distinguishes between bidirectional streams (with the bit set to 0)
/// and unidirectional streams".
///
/// # Examples
/// ```
/// use peregrine::http3::StreamId;
/// use peregrine::http3::Role;
/// let request = StreamId::new(4);
/// assert!(request.is_bidi() && request.initiator() == Role::Client);
/// let control = StreamId::new(3);
/// assert!(control.is_uni() && control.initiator() == Role::Server);
/// assert_eq!(u64::from(control), 3);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId(u64);

impl StreamId {
    /// The largest stream identifier, 2^62 - 1.
    pub const MAX: StreamId = StreamId(crate::http3::varint::MAX);

    /// Wraps a stream identifier (the caller's QUIC layer gave it, so it is below 2^62).
    pub const fn new(id: u64) -> StreamId {
        StreamId(id)
    }

    /// The identifier.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// Whether data flows one way only (bit 0x02).
    pub const fn is_uni(self) -> bool {
        self.0 & 0x2 != 0
    }

    /// Whether data flows both ways (bit 0x02 clear): a request stream in HTTP/3.
    pub const fn is_bidi(self) -> bool {
        !self.is_uni()
    }

    /// Which end opened the stream (bit 0x01).
    pub const fn initiator(self) -> Role {
        if self.0 & 0x1 == 0 { Role::Client } else { Role::Server }
    }

    /// The next stream of the same kind (4 more), or `None` past 2^62 - 1.
    pub const fn next(self) -> Option<StreamId> {
        if self.0 + 4 > crate::http3::varint::MAX { None } else { Some(StreamId(self.0 + 4)) }
    }
}

impl From<u64> for StreamId {
    fn from(id: u64) -> StreamId {
        StreamId(id)
    }
}

impl From<StreamId> for u64 {
    fn from(id: StreamId) -> u64 {
        id.0
    }
}

impl fmt::Debug for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StreamId({})", self.0)
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::{Role, StreamId};

    #[test]
    fn the_two_low_bits() {
        let cases = [
            (0, Role::Client, false),
            (1, Role::Server, false),
            (2, Role::Client, true),
            (3, Role::Server, true),
            (4, Role::Client, false),
            (11, Role::Server, true),
        ];
        for (id, initiator, uni) in cases {
            let s = StreamId::new(id);
            assert_eq!((s.initiator(), s.is_uni(), s.is_bidi()), (initiator, uni, !uni), "{id}");
        }
        assert_eq!(StreamId::new(8).next(), Some(StreamId::new(12)));
        assert_eq!(StreamId::MAX.next(), None);
    }
}
