//! Stream identifiers (RFC 9113 §5.1.1).

use std::fmt;

/// A 31-bit stream identifier (RFC 9113 §5.1.1). Stream 0 is the connection itself.
///
/// Clients open odd-numbered streams, servers even-numbered ones; identifiers only grow.
///
/// # Examples
/// ```
/// use peregrine::http2::StreamId;
/// let id = StreamId::new(0x8000_0003); // the reserved high bit is dropped (§4.1)
/// assert_eq!(id.get(), 3);
/// assert!(id.is_client_initiated());
/// assert!(StreamId::ZERO.is_zero());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId(u32);

impl StreamId {
    /// Stream 0: frames about the whole connection (SETTINGS, PING, GOAWAY, its WINDOW_UPDATE).
    pub const ZERO: StreamId = StreamId(0);
    /// The largest identifier, 2^31-1.
    pub const MAX: StreamId = StreamId(0x7fff_ffff);

    /// The identifier `id` with the reserved high bit cleared: RFC 9113 §4.1 "The semantics of
    /// this bit are undefined, and the bit MUST remain unset (0x0) when sending and MUST be
    /// ignored when receiving."
    pub const fn new(id: u32) -> StreamId {
        StreamId(id & 0x7fff_ffff)
    }

    /// The identifier as a number.
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Whether this is stream 0.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Whether a client opens this stream: RFC 9113 §5.1.1 "Streams initiated by a client MUST
    /// use odd-numbered stream identifiers".
    pub const fn is_client_initiated(self) -> bool {
        self.0 & 1 == 1
    }

    /// The next identifier of the same parity, or `None` past 2^31-1.
    pub const fn next(self) -> Option<StreamId> {
        match self.0.checked_add(2) {
            Some(n) if n <= StreamId::MAX.0 => Some(StreamId(n)),
            _ => None,
        }
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

impl From<StreamId> for u32 {
    fn from(id: StreamId) -> u32 {
        id.0
    }
}

#[cfg(test)]
mod tests {
    use super::StreamId;

    #[test]
    fn reserved_bit_is_dropped_and_parity_is_read() {
        struct Case {
            raw: u32,
            id: u32,
            client: bool,
        }
        let cases = [
            Case { raw: 0, id: 0, client: false },
            Case { raw: 1, id: 1, client: true },
            Case { raw: 2, id: 2, client: false },
            Case { raw: 0x8000_0000, id: 0, client: false },
            Case { raw: 0xffff_ffff, id: 0x7fff_ffff, client: true },
        ];
        for c in cases {
            let id = StreamId::new(c.raw);
            assert_eq!(id.get(), c.id, "{:#x}", c.raw);
            assert_eq!(id.is_client_initiated(), c.client, "{:#x}", c.raw);
        }
    }

    #[test]
    fn next_stops_at_the_largest_identifier() {
        assert_eq!(StreamId::new(1).next(), Some(StreamId::new(3)));
        assert_eq!(StreamId::new(0x7fff_fffd).next(), Some(StreamId::MAX));
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::new(0x7fff_fffe).next(), None);
    }
}
