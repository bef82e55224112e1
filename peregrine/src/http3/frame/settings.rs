//! SETTINGS frames (RFC 9114 §7.2.4): the parameters of the peer, sent once, first, on its
//! control stream.
//!
//! ```text
//! Setting {
//!   Identifier (i),
//!   Value (i),
//! }
//!
//! SETTINGS Frame {
//!   Type (i) = 0x04,
//!   Length (i),
//!   Setting (..) ...,
//! }
//! ```

use std::fmt;

use super::{Head, Kind};
use crate::http3::error::{Code, Error, is_reserved};
use crate::http3::varint;

/// Entries a SETTINGS frame may carry when the caller states no budget.
pub const DEFAULT_MAX_ENTRIES: usize = 32;

/// A setting identifier (RFC 9114 §7.2.4.1, §11.2.2). Open: §7.2.4 "An implementation MUST
/// ignore any parameter with an identifier it does not understand."
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SettingId(pub u64);

impl SettingId {
    /// 0x01: the QPACK dynamic table capacity the sender's decoder allows (RFC 9204 §5).
    /// Default 0.
    pub const QPACK_MAX_TABLE_CAPACITY: SettingId = SettingId(0x01);
    /// 0x06: the largest field section (RFC 9114 §4.2.2 sizes) the sender accepts. Default
    /// unlimited; advisory.
    pub const MAX_FIELD_SECTION_SIZE: SettingId = SettingId(0x06);
    /// 0x07: how many streams may be blocked on the sender's QPACK decoder (RFC 9204 §5).
    /// Default 0.
    pub const QPACK_BLOCKED_STREAMS: SettingId = SettingId(0x07);
    /// 0x08: extended CONNECT (RFC 9220 §3), 0 or 1.
    pub const ENABLE_CONNECT_PROTOCOL: SettingId = SettingId(0x08);
    /// 0x33: HTTP datagrams (RFC 9297 §2.1.1), 0 or 1.
    pub const H3_DATAGRAM: SettingId = SettingId(0x33);

    /// The identifier's name, or `None` for one this crate does not know.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x01 => "QPACK_MAX_TABLE_CAPACITY",
            0x06 => "MAX_FIELD_SECTION_SIZE",
            0x07 => "QPACK_BLOCKED_STREAMS",
            0x08 => "ENABLE_CONNECT_PROTOCOL",
            0x33 => "H3_DATAGRAM",
            _ => return None,
        })
    }

    /// An HTTP/2 setting without an HTTP/3 counterpart (0x02 ENABLE_PUSH, 0x03
    /// MAX_CONCURRENT_STREAMS, 0x04 INITIAL_WINDOW_SIZE, 0x05 MAX_FRAME_SIZE).
    pub const fn is_http2_only(self) -> bool {
        matches!(self.0, 0x02..=0x05)
    }

    /// A reserved identifier, `0x1f * N + 0x21` (§7.2.4.1): ignored like any unknown one.
    pub const fn is_reserved(self) -> bool {
        is_reserved(self.0)
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

/// Checks one entry.
///
/// # Errors
/// - RFC 9114 §7.2.4.1: "Setting identifiers that were defined in [HTTP/2] where there is no
///   corresponding HTTP/3 setting have also been reserved. These reserved settings MUST NOT be
///   sent, and their receipt MUST be treated as a connection error of type H3_SETTINGS_ERROR."
/// - ENABLE_CONNECT_PROTOCOL (RFC 9220 §3, RFC 8441 §3) and H3_DATAGRAM (RFC 9297 §2.1.1:
///   "Any value other than 0 or 1 MUST be treated as a connection error of type
///   H3_SETTINGS_ERROR") other than 0 or 1.
pub const fn check_entry(id: SettingId, value: u64) -> Result<(), Error> {
    if id.is_http2_only() {
        return Err(Error::connection(Code::H3_SETTINGS_ERROR, "HTTP/2 setting (§7.2.4.1)"));
    }
    if matches!(id, SettingId::ENABLE_CONNECT_PROTOCOL | SettingId::H3_DATAGRAM) && value > 1 {
        return Err(Error::connection(Code::H3_SETTINGS_ERROR, "setting not 0 or 1"));
    }
    Ok(())
}

/// A decoded SETTINGS frame borrowing its entries, every entry already checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings<'a> {
    payload: &'a [u8],
    count: usize,
}

impl<'a> Settings<'a> {
    /// Decodes a SETTINGS payload of at most `max_entries` entries and checks each
    /// ([`check_entry`]).
    ///
    /// # Errors
    /// - RFC 9114 §7.1: a payload that ends inside an entry, connection H3_FRAME_ERROR.
    /// - §7.2.4: "The same setting identifier MUST NOT occur more than once in the SETTINGS
    ///   frame. A receiver MAY treat the presence of duplicate setting identifiers as a
    ///   connection error of type H3_SETTINGS_ERROR." We do.
    /// - More than `max_entries` entries: connection H3_EXCESSIVE_LOAD (the duplicate check is
    ///   quadratic in the entries, so their number is bounded first).
    /// - The entry errors of [`check_entry`].
    pub fn decode(payload: &'a [u8], max_entries: usize) -> Result<Settings<'a>, Error> {
        let mut rest = payload;
        let mut count = 0;
        while !rest.is_empty() {
            let Some((id, n)) = varint::decode(rest) else { return Err(truncated()) };
            let Some((value, m)) = varint::decode(&rest[n..]) else { return Err(truncated()) };
            count += 1;
            if count > max_entries {
                return Err(Error::connection(Code::H3_EXCESSIVE_LOAD, "too many SETTINGS"));
            }
            check_entry(SettingId(id), value)?;
            let earlier = Settings { payload: &payload[..payload.len() - rest.len()], count };
            if earlier.iter().any(|(e, _)| e.0 == id) {
                return Err(Error::connection(Code::H3_SETTINGS_ERROR, "duplicate setting"));
            }
            rest = &rest[n + m..];
        }
        Ok(Settings { payload, count })
    }

    /// The entries in order, unknown and reserved identifiers included.
    pub fn iter(&self) -> impl Iterator<Item = (SettingId, u64)> + use<'a> {
        let mut rest = self.payload;
        std::iter::from_fn(move || {
            let (id, n) = varint::decode(rest)?;
            let (value, m) = varint::decode(&rest[n..])?;
            rest = &rest[n + m..];
            Some((SettingId(id), value))
        })
    }

    /// How many entries the frame carries.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the frame carries no entries.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

fn truncated() -> Error {
    Error::connection(Code::H3_FRAME_ERROR, "SETTINGS ends inside an entry")
}

/// Appends a SETTINGS frame carrying `entries`.
///
/// # Examples
/// ```
/// use peregrine::http3::frame::settings::{self, SettingId};
/// let mut out = Vec::new();
/// settings::encode(&[(SettingId::QPACK_MAX_TABLE_CAPACITY, 4096), (SettingId::QPACK_BLOCKED_STREAMS, 16)], &mut out);
/// assert_eq!(out, b"\x04\x05\x01\x50\x00\x07\x10");
/// ```
pub fn encode(entries: &[(SettingId, u64)], dst: &mut Vec<u8>) {
    let len: usize =
        entries.iter().map(|&(id, v)| varint::encoded_len(id.0) + varint::encoded_len(v)).sum();
    Head { kind: Kind::SETTINGS, len: len as u64 }.encode(dst);
    for &(id, value) in entries {
        varint::encode(id.0, dst);
        varint::encode(value, dst);
    }
}

#[cfg(test)]
mod tests {
    use super::{SettingId, Settings, encode};
    use crate::http3::error::Code;
    use crate::http3::frame::Head;

    #[test]
    fn decode_rules() {
        struct Case {
            payload: &'static [u8],
            expect: Result<&'static [(u64, u64)], Code>,
        }
        let cases = [
            Case { payload: b"", expect: Ok(&[]) },
            Case { payload: b"\x01\x00", expect: Ok(&[(1, 0)]) },
            Case {
                payload: b"\x01\x50\x00\x07\x10\x06\x80\x01\x00\x00",
                expect: Ok(&[(1, 4096), (7, 16), (6, 65536)]),
            },
            Case { payload: b"\x08\x01\x33\x00", expect: Ok(&[(8, 1), (0x33, 0)]) },
            // Unknown and reserved identifiers are kept for the caller to ignore.
            Case {
                payload: b"\x21\x05\x00\x00\x3f\x3f",
                expect: Ok(&[(0x21, 5), (0, 0), (0x3f, 0x3f)]),
            },
            // Truncated: inside an identifier, a value, or between them.
            Case { payload: b"\x01", expect: Err(Code::H3_FRAME_ERROR) },
            Case { payload: b"\x01\x40", expect: Err(Code::H3_FRAME_ERROR) },
            Case { payload: b"\x01\x00\x41", expect: Err(Code::H3_FRAME_ERROR) },
            // HTTP/2 settings, duplicates, values out of range.
            Case { payload: b"\x02\x00", expect: Err(Code::H3_SETTINGS_ERROR) },
            Case { payload: b"\x03\x24", expect: Err(Code::H3_SETTINGS_ERROR) },
            Case { payload: b"\x04\x00", expect: Err(Code::H3_SETTINGS_ERROR) },
            Case { payload: b"\x05\x40\x00", expect: Err(Code::H3_SETTINGS_ERROR) },
            Case { payload: b"\x01\x00\x01\x00", expect: Err(Code::H3_SETTINGS_ERROR) },
            Case { payload: b"\x21\x00\x07\x00\x21\x01", expect: Err(Code::H3_SETTINGS_ERROR) },
            // A longer encoding of the same identifier is the same identifier.
            Case { payload: b"\x07\x00\x40\x07\x00", expect: Err(Code::H3_SETTINGS_ERROR) },
            Case { payload: b"\x08\x02", expect: Err(Code::H3_SETTINGS_ERROR) },
            Case { payload: b"\x33\x02", expect: Err(Code::H3_SETTINGS_ERROR) },
        ];
        for c in cases {
            let got = Settings::decode(c.payload, 8)
                .map(|s| s.iter().map(|(id, v)| (id.0, v)).collect::<Vec<_>>())
                .map_err(|e| {
                    assert!(e.is_connection());
                    e.code()
                });
            assert_eq!(got, c.expect.map(<[_]>::to_vec), "{:02x?}", c.payload);
        }
    }

    #[test]
    fn entries_are_bounded() {
        let payload: Vec<u8> = (0..9u8).flat_map(|i| [0x20 + i, 0]).collect();
        assert_eq!(Settings::decode(&payload[..16], 8).map(|s| s.len()), Ok(8));
        assert_eq!(Settings::decode(&payload, 8).unwrap_err().code(), Code::H3_EXCESSIVE_LOAD);
    }

    #[test]
    fn encode_then_decode() {
        let entries = [
            (SettingId::QPACK_MAX_TABLE_CAPACITY, 1 << 20),
            (SettingId::MAX_FIELD_SECTION_SIZE, 16_384),
            (SettingId(0x1f * 3 + 0x21), 7),
        ];
        let mut out = Vec::new();
        encode(&entries, &mut out);
        let (h, n) = Head::parse(&out).unwrap();
        assert_eq!(h.len as usize, out.len() - n);
        let s = Settings::decode(&out[n..], 8).unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), entries);
        assert!(!s.is_empty());
    }
}
