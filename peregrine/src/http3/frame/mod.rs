//! HTTP/3 frames (RFC 9114 §7): the frame header, one file per frame type with its payload's
//! rules beside the RFC sentence, where each type may appear, and encoders appending to a
//! `Vec<u8>`.
//!
//! ```text
//! HTTP/3 Frame Format {
//!   Type (i),
//!   Length (i),
//!   Frame Payload (..),
//! }
//! ```
//!
//! [`Head::parse`] reads a header from any prefix of a stream (partial input is `None`, not an
//! error). [`decode`] reads a whole payload, borrowing it. DATA and HEADERS payloads are the
//! connection's to stream or collect; the others are small and decoded whole.
//!
//! # Examples
//! ```
//! use peregrine::http3::frame::{self, Frame, Head, Kind};
//! let bytes = b"\x07\x01\x08"; // GOAWAY, 1 octet: stream 8
//! let (head, used) = Head::parse(bytes).unwrap();
//! assert_eq!((head.kind, head.len, used), (Kind::GOAWAY, 1, 2));
//! assert_eq!(frame::decode(head.kind, &bytes[used..]), Ok(Frame::GoAway(8)));
//! ```

pub mod cancel_push;
pub mod data;
pub mod goaway;
pub mod headers;
pub mod max_push_id;
pub mod push_promise;
pub mod settings;

use std::fmt;

pub use settings::{SettingId, Settings};

use super::error::{Code, Error, is_reserved};
use super::varint;

/// A frame type (RFC 9114 §7.2, §11.2.1). Open: RFC 9114 §9 "Implementations MUST discard
/// frames ... that have unknown or unsupported types", so any integer is a `Kind`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kind(pub u64);

impl Kind {
    /// DATA (§7.2.1).
    pub const DATA: Kind = Kind(0x0);
    /// HEADERS (§7.2.2).
    pub const HEADERS: Kind = Kind(0x1);
    /// CANCEL_PUSH (§7.2.3).
    pub const CANCEL_PUSH: Kind = Kind(0x3);
    /// SETTINGS (§7.2.4).
    pub const SETTINGS: Kind = Kind(0x4);
    /// PUSH_PROMISE (§7.2.5).
    pub const PUSH_PROMISE: Kind = Kind(0x5);
    /// GOAWAY (§7.2.6).
    pub const GOAWAY: Kind = Kind(0x7);
    /// MAX_PUSH_ID (§7.2.7).
    pub const MAX_PUSH_ID: Kind = Kind(0xd);

    /// The type's name, or `None` for a type RFC 9114 does not define.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x0 => "DATA",
            0x1 => "HEADERS",
            0x3 => "CANCEL_PUSH",
            0x4 => "SETTINGS",
            0x5 => "PUSH_PROMISE",
            0x7 => "GOAWAY",
            0xd => "MAX_PUSH_ID",
            _ => return None,
        })
    }

    /// An HTTP/2 frame type without an HTTP/3 counterpart: PRIORITY (0x02), PING (0x06),
    /// WINDOW_UPDATE (0x08), CONTINUATION (0x09). RFC 9114 §7.2.8: "These frame types MUST NOT
    /// be sent, and their receipt MUST be treated as a connection error of type
    /// H3_FRAME_UNEXPECTED."
    pub const fn is_http2_only(self) -> bool {
        matches!(self.0, 0x2 | 0x6 | 0x8 | 0x9)
    }

    /// A reserved type, `0x1f * N + 0x21` (RFC 9114 §7.2.8): meaningless, ignored like any
    /// unknown type ("Endpoints MUST NOT consider these frames to have any meaning upon
    /// receipt").
    pub const fn is_reserved(self) -> bool {
        is_reserved(self.0)
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

/// A frame header: the type and the payload length.
///
/// # Examples
/// ```
/// use peregrine::http3::frame::{Head, Kind};
/// let mut out = Vec::new();
/// Head { kind: Kind::DATA, len: 300 }.encode(&mut out);
/// assert_eq!(out, [0x00, 0x41, 0x2c]);
/// assert_eq!(Head::parse(&out), Some((Head { kind: Kind::DATA, len: 300 }, 3)));
/// assert_eq!(Head::parse(&out[..2]), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// Frame type.
    pub kind: Kind,
    /// Payload length in octets.
    pub len: u64,
}

impl Head {
    /// The longest header: two 8-octet integers.
    pub const MAX_LEN: usize = 16;

    /// Reads a header from the start of `buf`: the header and its length in octets, or `None`
    /// when `buf` ends inside it. Never fails: any two integers are a header (what they
    /// announce is checked by the caller, who knows the stream).
    #[inline]
    pub fn parse(buf: &[u8]) -> Option<(Head, usize)> {
        let (kind, a) = varint::decode(buf)?;
        let (len, b) = varint::decode(&buf[a..])?;
        Some((Head { kind: Kind(kind), len }, a + b))
    }

    /// Whether `buf` holds a whole header: two octets of look-up, so a peer trickling a header
    /// octet by octet costs no re-parse.
    #[inline]
    pub fn complete(buf: &[u8]) -> bool {
        let Some(&first) = buf.first() else { return false };
        let a = varint::len_of(first);
        buf.get(a).is_some_and(|&second| buf.len() >= a + varint::len_of(second))
    }

    /// Appends the header.
    pub fn encode(self, dst: &mut Vec<u8>) {
        varint::encode(self.kind.0, dst);
        varint::encode(self.len, dst);
    }
}

/// Which stream a frame arrived on, for the placement rules of RFC 9114 §7.2 (its Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    /// The peer's control stream.
    Control,
    /// A request stream.
    Request,
}

/// Checks that a frame of `kind` may appear on a stream of this kind (RFC 9114 §7.2, Table 1):
///
/// | Frame | Control | Request |
/// |---|---|---|
/// | DATA, HEADERS, PUSH_PROMISE | no | yes |
/// | CANCEL_PUSH, SETTINGS, GOAWAY, MAX_PUSH_ID | yes | no |
/// | reserved, unknown | yes | yes |
///
/// # Errors
/// Connection H3_FRAME_UNEXPECTED: a frame on a stream where the table says no (§7.2.1 "If a
/// DATA frame is received on a control stream, the recipient MUST respond with a connection
/// error of type H3_FRAME_UNEXPECTED", and the same sentence for each type), and HTTP/2-only
/// types anywhere (§7.2.8).
pub const fn check_placement(kind: Kind, on: On) -> Result<(), Error> {
    let ok = match kind {
        Kind::DATA | Kind::HEADERS | Kind::PUSH_PROMISE => matches!(on, On::Request),
        Kind::CANCEL_PUSH | Kind::SETTINGS | Kind::GOAWAY | Kind::MAX_PUSH_ID => {
            matches!(on, On::Control)
        }
        k => !k.is_http2_only(),
    };
    if ok {
        Ok(())
    } else if kind.is_http2_only() {
        Err(Error::connection(Code::H3_FRAME_UNEXPECTED, "HTTP/2 frame type (§7.2.8)"))
    } else if matches!(on, On::Control) {
        Err(Error::connection(Code::H3_FRAME_UNEXPECTED, "request frame on the control stream"))
    } else {
        Err(Error::connection(Code::H3_FRAME_UNEXPECTED, "control frame on a request stream"))
    }
}

/// A decoded frame, borrowing its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// DATA (§7.2.1): body octets.
    Data(&'a [u8]),
    /// HEADERS (§7.2.2): an encoded field section (QPACK).
    Headers(&'a [u8]),
    /// CANCEL_PUSH (§7.2.3): the push ID.
    CancelPush(u64),
    /// SETTINGS (§7.2.4).
    Settings(Settings<'a>),
    /// PUSH_PROMISE (§7.2.5).
    PushPromise(push_promise::PushPromise<'a>),
    /// GOAWAY (§7.2.6): a stream ID (from a server) or push ID (from a client).
    GoAway(u64),
    /// MAX_PUSH_ID (§7.2.7): the push ID.
    MaxPushId(u64),
    /// A type RFC 9114 does not define (reserved ones included): discarded (§9).
    Unknown(Kind),
}

/// Decodes one whole frame payload of type `kind`.
///
/// SETTINGS are read with [`settings::DEFAULT_MAX_ENTRIES`] entries at most; a connection
/// with another budget calls [`Settings::decode`] itself.
///
/// # Errors
/// Connection H3_FRAME_ERROR when a payload does not hold exactly its fields (§7.1), the
/// SETTINGS rules ([`Settings::decode`]), and H3_FRAME_UNEXPECTED for HTTP/2-only types.
pub fn decode(kind: Kind, payload: &[u8]) -> Result<Frame<'_>, Error> {
    Ok(match kind {
        Kind::DATA => Frame::Data(payload),
        Kind::HEADERS => Frame::Headers(payload),
        Kind::CANCEL_PUSH => Frame::CancelPush(cancel_push::decode(payload)?),
        Kind::SETTINGS => {
            Frame::Settings(Settings::decode(payload, settings::DEFAULT_MAX_ENTRIES)?)
        }
        Kind::PUSH_PROMISE => Frame::PushPromise(push_promise::PushPromise::decode(payload)?),
        Kind::GOAWAY => Frame::GoAway(goaway::decode(payload)?),
        Kind::MAX_PUSH_ID => Frame::MaxPushId(max_push_id::decode(payload)?),
        k if k.is_http2_only() => {
            return Err(Error::connection(Code::H3_FRAME_UNEXPECTED, "HTTP/2 frame type (§7.2.8)"));
        }
        k => Frame::Unknown(k),
    })
}

/// A payload that is exactly one integer (CANCEL_PUSH, GOAWAY, MAX_PUSH_ID).
///
/// RFC 9114 §7.1: "Each frame's payload MUST contain exactly the fields identified in its
/// description. A frame payload that contains additional bytes after the identified fields or
/// a frame payload that terminates before the end of the identified fields MUST be treated as
/// a connection error of type H3_FRAME_ERROR."
pub(crate) fn one_integer(payload: &[u8], why: &'static str) -> Result<u64, Error> {
    match varint::decode(payload) {
        Some((v, n)) if n == payload.len() => Ok(v),
        _ => Err(Error::connection(Code::H3_FRAME_ERROR, why)),
    }
}

/// Appends a frame whose payload is one integer.
pub(crate) fn encode_one_integer(kind: Kind, v: u64, dst: &mut Vec<u8>) {
    Head { kind, len: varint::encoded_len(v) as u64 }.encode(dst);
    varint::encode(v, dst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_from_any_split() {
        let mut bytes = Vec::new();
        Head { kind: Kind(0x1f * 9 + 0x21), len: 70_000 }.encode(&mut bytes);
        assert_eq!(bytes.len(), 2 + 4);
        for n in 0..bytes.len() {
            assert_eq!(Head::parse(&bytes[..n]), None, "{n}");
            assert!(!Head::complete(&bytes[..n]));
        }
        assert!(Head::complete(&bytes));
        let (h, used) = Head::parse(&bytes).unwrap();
        assert_eq!((h.kind.0, h.len, used), (0x1f * 9 + 0x21, 70_000, 6));
        assert!(h.kind.is_reserved() && h.kind.name().is_none());
    }

    #[test]
    fn placement_table() {
        struct Case {
            kind: u64,
            control: bool,
            request: bool,
        }
        let cases = [
            Case { kind: 0x0, control: false, request: true },
            Case { kind: 0x1, control: false, request: true },
            Case { kind: 0x3, control: true, request: false },
            Case { kind: 0x4, control: true, request: false },
            Case { kind: 0x5, control: false, request: true },
            Case { kind: 0x7, control: true, request: false },
            Case { kind: 0xd, control: true, request: false },
            Case { kind: 0x2, control: false, request: false },
            Case { kind: 0x6, control: false, request: false },
            Case { kind: 0x8, control: false, request: false },
            Case { kind: 0x9, control: false, request: false },
            Case { kind: 0x21, control: true, request: true },
            Case { kind: 0x0a, control: true, request: true },
            Case { kind: 0xff_ffff, control: true, request: true },
        ];
        for c in cases {
            for (on, ok) in [(On::Control, c.control), (On::Request, c.request)] {
                let got = check_placement(Kind(c.kind), on);
                assert_eq!(got.is_ok(), ok, "{:?} on {on:?}", Kind(c.kind));
                if let Err(e) = got {
                    assert!(e.is_connection() && e.code() == Code::H3_FRAME_UNEXPECTED);
                }
            }
        }
    }

    #[test]
    fn decode_table() {
        struct Case {
            kind: u64,
            payload: &'static [u8],
            expect: Result<Frame<'static>, Code>,
        }
        let cases = [
            Case { kind: 0x0, payload: b"abc", expect: Ok(Frame::Data(b"abc")) },
            Case { kind: 0x0, payload: b"", expect: Ok(Frame::Data(b"")) },
            Case {
                kind: 0x1,
                payload: b"\x00\x00\xd1",
                expect: Ok(Frame::Headers(b"\x00\x00\xd1")),
            },
            Case { kind: 0x3, payload: b"\x05", expect: Ok(Frame::CancelPush(5)) },
            Case { kind: 0x3, payload: b"", expect: Err(Code::H3_FRAME_ERROR) },
            Case { kind: 0x3, payload: b"\x05\x00", expect: Err(Code::H3_FRAME_ERROR) },
            Case { kind: 0x7, payload: b"\x40\x08", expect: Ok(Frame::GoAway(8)) },
            Case { kind: 0x7, payload: b"\x40", expect: Err(Code::H3_FRAME_ERROR) },
            Case { kind: 0xd, payload: b"\x00", expect: Ok(Frame::MaxPushId(0)) },
            Case { kind: 0xd, payload: b"\x00\x01", expect: Err(Code::H3_FRAME_ERROR) },
            Case { kind: 0x2, payload: b"", expect: Err(Code::H3_FRAME_UNEXPECTED) },
            Case { kind: 0x9, payload: b"x", expect: Err(Code::H3_FRAME_UNEXPECTED) },
            Case { kind: 0x21, payload: b"anything", expect: Ok(Frame::Unknown(Kind(0x21))) },
        ];
        for c in cases {
            let got = decode(Kind(c.kind), c.payload).map_err(|e| {
                assert!(e.is_connection());
                e.code()
            });
            assert_eq!(got, c.expect, "{:?} {:02x?}", Kind(c.kind), c.payload);
        }
    }
}
