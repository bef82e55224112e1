//! SETTINGS frames (RFC 9113 §6.5): the parameter identifiers and their value ranges.
//!
//! ```text
//! SETTINGS Frame {
//!   Length (24), Type (8) = 0x04,
//!   Unused Flags (7), ACK Flag (1),
//!   Reserved (1), Stream Identifier (31) = 0,
//!   Setting (48) ...,            -- Identifier (16), Value (32)
//! }
//! ```

use std::fmt;

use super::head::{DEFAULT_MAX_FRAME_SIZE, Head, Kind, MAX_MAX_FRAME_SIZE, flags};
use super::window_update::MAX_INCREMENT;
use crate::http2::error::{Error, Reason};
use crate::http2::stream_id::StreamId;

/// A SETTINGS parameter identifier (RFC 9113 §6.5.2, §11.3). Open: §6.5.2 "An endpoint that
/// receives a SETTINGS frame with any unknown or unsupported identifier MUST ignore that
/// setting."
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SettingId(pub u16);

impl SettingId {
    /// 0x1: the HPACK dynamic table size the sender's decoder allows. Initial 4096.
    pub const HEADER_TABLE_SIZE: SettingId = SettingId(0x1);
    /// 0x2: whether server push is permitted (0 or 1). Initial 1.
    pub const ENABLE_PUSH: SettingId = SettingId(0x2);
    /// 0x3: the most streams the sender permits the receiver to open. Initially unlimited.
    pub const MAX_CONCURRENT_STREAMS: SettingId = SettingId(0x3);
    /// 0x4: the sender's initial stream flow-control window. Initial 65,535.
    pub const INITIAL_WINDOW_SIZE: SettingId = SettingId(0x4);
    /// 0x5: the largest frame payload the sender accepts. Initial 16,384.
    pub const MAX_FRAME_SIZE: SettingId = SettingId(0x5);
    /// 0x6: the largest field section (decoded, RFC 9113 §6.5.2 sizes) the sender accepts.
    /// Initially unlimited; advisory.
    pub const MAX_HEADER_LIST_SIZE: SettingId = SettingId(0x6);
    /// 0x8: extended CONNECT (RFC 8441 §3), 0 or 1.
    pub const ENABLE_CONNECT_PROTOCOL: SettingId = SettingId(0x8);
    /// 0x9: the sender ignores RFC 7540 priorities (RFC 9218 §2.1), 0 or 1.
    pub const NO_RFC7540_PRIORITIES: SettingId = SettingId(0x9);

    /// The parameter's name, or `None` for an identifier this crate does not know.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x1 => "HEADER_TABLE_SIZE",
            0x2 => "ENABLE_PUSH",
            0x3 => "MAX_CONCURRENT_STREAMS",
            0x4 => "INITIAL_WINDOW_SIZE",
            0x5 => "MAX_FRAME_SIZE",
            0x6 => "MAX_HEADER_LIST_SIZE",
            0x8 => "ENABLE_CONNECT_PROTOCOL",
            0x9 => "NO_RFC7540_PRIORITIES",
            _ => return None,
        })
    }
}

impl fmt::Debug for SettingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "SettingId({:#x})", self.0),
        }
    }
}

/// Checks one value against its parameter's range.
///
/// # Errors
/// - RFC 9113 §6.5.2 SETTINGS_ENABLE_PUSH: "Any value other than 0 or 1 MUST be treated as a
///   connection error (Section 5.4.1) of type PROTOCOL_ERROR."
/// - SETTINGS_INITIAL_WINDOW_SIZE: "Values above the maximum flow-control window size of
///   2^31-1 MUST be treated as a connection error (Section 5.4.1) of type FLOW_CONTROL_ERROR."
/// - SETTINGS_MAX_FRAME_SIZE: "Values outside this range [2^14, 2^24-1] MUST be treated as a
///   connection error (Section 5.4.1) of type PROTOCOL_ERROR."
/// - ENABLE_CONNECT_PROTOCOL (RFC 8441 §3) and NO_RFC7540_PRIORITIES (RFC 9218 §2.1) other
///   than 0 or 1: connection PROTOCOL_ERROR.
pub const fn check_value(id: SettingId, value: u32) -> Result<(), Error> {
    let bad = match id {
        SettingId::ENABLE_PUSH => value > 1,
        SettingId::ENABLE_CONNECT_PROTOCOL | SettingId::NO_RFC7540_PRIORITIES => value > 1,
        SettingId::INITIAL_WINDOW_SIZE if value > MAX_INCREMENT => {
            return Err(Error::connection(
                Reason::FLOW_CONTROL_ERROR,
                "INITIAL_WINDOW_SIZE above 2^31-1",
            ));
        }
        SettingId::MAX_FRAME_SIZE => value < DEFAULT_MAX_FRAME_SIZE || value > MAX_MAX_FRAME_SIZE,
        _ => false,
    };
    if bad {
        return Err(Error::connection(Reason::PROTOCOL_ERROR, "SETTINGS value out of range"));
    }
    Ok(())
}

/// A decoded SETTINGS frame borrowing its entries, every value already range-checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings<'a> {
    /// ACK: acknowledges the peer's SETTINGS; carries no entries.
    pub ack: bool,
    entries: &'a [u8],
}

impl<'a> Settings<'a> {
    /// Decodes a SETTINGS payload and checks every value ([`check_value`]).
    ///
    /// # Errors
    /// - RFC 9113 §6.5: "If an endpoint receives a SETTINGS frame whose Stream Identifier field
    ///   is anything other than 0x00, the endpoint MUST respond with a connection error (Section
    ///   5.4.1) of type PROTOCOL_ERROR."
    /// - "Receipt of a SETTINGS frame with the ACK flag set and a length field value other than
    ///   0 MUST be treated as a connection error (Section 5.4.1) of type FRAME_SIZE_ERROR."
    /// - "A SETTINGS frame with a length other than a multiple of 6 octets MUST be treated as a
    ///   connection error (Section 5.4.1) of type FRAME_SIZE_ERROR."
    /// - The value errors of [`check_value`].
    pub fn decode(head: Head, payload: &'a [u8]) -> Result<Settings<'a>, Error> {
        if !head.stream.is_zero() {
            return Err(Error::connection(Reason::PROTOCOL_ERROR, "SETTINGS on a stream"));
        }
        let ack = head.has(flags::ACK);
        if ack && !payload.is_empty() {
            return Err(Error::connection(Reason::FRAME_SIZE_ERROR, "SETTINGS ACK with a payload"));
        }
        if payload.len() % 6 != 0 {
            return Err(Error::connection(
                Reason::FRAME_SIZE_ERROR,
                "SETTINGS length not a multiple of 6",
            ));
        }
        let settings = Settings { ack, entries: payload };
        for (id, value) in settings.iter() {
            check_value(id, value)?;
        }
        Ok(settings)
    }

    /// The entries in order (RFC 9113 §6.5.3 "The values in the SETTINGS frame MUST be
    /// processed in the order they appear"), unknown identifiers included.
    pub fn iter(&self) -> impl Iterator<Item = (SettingId, u32)> + use<'a> {
        self.entries.chunks_exact(6).map(|e| {
            (
                SettingId(u16::from_be_bytes([e[0], e[1]])),
                u32::from_be_bytes([e[2], e[3], e[4], e[5]]),
            )
        })
    }

    /// How many entries the frame carries.
    pub fn len(&self) -> usize {
        self.entries.len() / 6
    }

    /// Whether the frame carries no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Appends a SETTINGS frame carrying `entries`.
///
/// # Examples
/// ```
/// use peregrine::http2::frame::settings::{self, SettingId};
/// let mut out = Vec::new();
/// settings::encode(&[(SettingId::ENABLE_PUSH, 0)], &mut out);
/// assert_eq!(out, b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00");
/// ```
pub fn encode(entries: &[(SettingId, u32)], dst: &mut Vec<u8>) {
    Head::new(Kind::SETTINGS, 0, StreamId::ZERO, 6 * entries.len() as u32).encode(dst);
    for &(id, value) in entries {
        dst.extend_from_slice(&id.0.to_be_bytes());
        dst.extend_from_slice(&value.to_be_bytes());
    }
}

/// Appends a SETTINGS frame with ACK and no entries.
pub fn encode_ack(dst: &mut Vec<u8>) {
    Head::new(Kind::SETTINGS, flags::ACK, StreamId::ZERO, 0).encode(dst);
}

#[cfg(test)]
mod tests {
    use super::{SettingId, Settings, encode, encode_ack};
    use crate::http2::error::Reason;
    use crate::http2::frame::head::{HEAD_LEN, Head, Kind, flags};
    use crate::http2::stream_id::StreamId;

    fn entry(id: u16, v: u32) -> Vec<u8> {
        let mut e = id.to_be_bytes().to_vec();
        e.extend_from_slice(&v.to_be_bytes());
        e
    }

    #[test]
    fn value_ranges() {
        struct Case {
            id: u16,
            value: u32,
            expect: Result<(), Reason>,
        }
        let cases = [
            Case { id: 1, value: u32::MAX, expect: Ok(()) },
            Case { id: 2, value: 0, expect: Ok(()) },
            Case { id: 2, value: 1, expect: Ok(()) },
            Case { id: 2, value: 2, expect: Err(Reason::PROTOCOL_ERROR) },
            Case { id: 3, value: 0, expect: Ok(()) },
            Case { id: 4, value: 0x7fff_ffff, expect: Ok(()) },
            Case { id: 4, value: 0x8000_0000, expect: Err(Reason::FLOW_CONTROL_ERROR) },
            Case { id: 5, value: 16_383, expect: Err(Reason::PROTOCOL_ERROR) },
            Case { id: 5, value: 16_384, expect: Ok(()) },
            Case { id: 5, value: 16_777_215, expect: Ok(()) },
            Case { id: 5, value: 16_777_216, expect: Err(Reason::PROTOCOL_ERROR) },
            Case { id: 6, value: 0, expect: Ok(()) },
            Case { id: 8, value: 1, expect: Ok(()) },
            Case { id: 8, value: 2, expect: Err(Reason::PROTOCOL_ERROR) },
            Case { id: 9, value: 2, expect: Err(Reason::PROTOCOL_ERROR) },
            // Unknown identifiers are ignored, whatever their value.
            Case { id: 0, value: u32::MAX, expect: Ok(()) },
            Case { id: 7, value: u32::MAX, expect: Ok(()) },
            Case { id: 0xffff, value: u32::MAX, expect: Ok(()) },
        ];
        for c in cases {
            let payload = entry(c.id, c.value);
            let head = Head::new(Kind::SETTINGS, 0, StreamId::ZERO, 6);
            match (Settings::decode(head, &payload), c.expect) {
                (Ok(s), Ok(())) => {
                    assert_eq!(s.iter().collect::<Vec<_>>(), [(SettingId(c.id), c.value)])
                }
                (Err(e), Err(r)) => {
                    assert!(e.is_connection() && e.reason() == r, "{:#x}={}", c.id, c.value)
                }
                (got, want) => panic!("{:#x}={}: got {got:?}, want {want:?}", c.id, c.value),
            }
        }
    }

    #[test]
    fn frame_rules() {
        struct Case {
            flags: u8,
            stream: u32,
            payload: Vec<u8>,
            expect: Result<usize, Reason>,
        }
        let two = [entry(3, 100), entry(4, 1)].concat();
        let cases = [
            Case { flags: 0, stream: 0, payload: vec![], expect: Ok(0) },
            Case { flags: 0, stream: 0, payload: two.clone(), expect: Ok(2) },
            Case { flags: flags::ACK, stream: 0, payload: vec![], expect: Ok(0) },
            Case {
                flags: flags::ACK,
                stream: 0,
                payload: two.clone(),
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
            Case { flags: 0, stream: 1, payload: two.clone(), expect: Err(Reason::PROTOCOL_ERROR) },
            Case {
                flags: 0,
                stream: 0,
                payload: two[..5].to_vec(),
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
            Case {
                flags: 0,
                stream: 0,
                payload: two[..11].to_vec(),
                expect: Err(Reason::FRAME_SIZE_ERROR),
            },
            // A bad value after a good one fails the whole frame.
            Case {
                flags: 0,
                stream: 0,
                payload: [entry(3, 1), entry(5, 1)].concat(),
                expect: Err(Reason::PROTOCOL_ERROR),
            },
        ];
        for c in cases {
            let head =
                Head::new(Kind::SETTINGS, c.flags, StreamId::new(c.stream), c.payload.len() as u32);
            match (Settings::decode(head, &c.payload), c.expect) {
                (Ok(s), Ok(n)) => assert_eq!((s.len(), s.ack), (n, c.flags & flags::ACK != 0)),
                (Err(e), Err(r)) => assert!(e.is_connection() && e.reason() == r),
                (got, want) => panic!("{:?}: got {got:?}, want {want:?}", c.payload),
            }
        }
    }

    #[test]
    fn encode_then_decode() {
        let entries = [(SettingId::MAX_CONCURRENT_STREAMS, 100), (SettingId(0x77), 5)];
        let mut out = Vec::new();
        encode(&entries, &mut out);
        let h = Head::parse(out[..HEAD_LEN].try_into().unwrap());
        let s = Settings::decode(h, &out[HEAD_LEN..]).unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), entries);
        let mut ack = Vec::new();
        encode_ack(&mut ack);
        let h = Head::parse(ack[..HEAD_LEN].try_into().unwrap());
        assert!(Settings::decode(h, &[]).unwrap().ack);
    }
}
