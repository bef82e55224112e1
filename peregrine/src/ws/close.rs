//! Close codes and the Close frame's payload (RFC 6455 §5.5.1, §7.4).
//!
//! ```text
//! Close payload = "" / ( Status Code (16, network order), Reason (UTF-8, 0..=123 octets) )
//! ```

use std::fmt;

use super::error::Error;
use super::frame::MAX_CONTROL_PAYLOAD;
use super::utf8;

/// The longest close reason: a control payload (125 octets) less the status code.
pub const MAX_REASON: usize = MAX_CONTROL_PAYLOAD - 2;

/// A close status code (RFC 6455 §7.4).
///
/// An open newtype: codes this crate does not name (an application's 4000-4999, a library's
/// 3000-3999) round-trip unchanged. [`CloseCode::is_allowed_on_wire`] says which codes a Close
/// frame may carry.
///
/// # Examples
/// ```
/// use peregrine::ws::CloseCode;
/// assert_eq!(CloseCode::from(1009), CloseCode::TOO_BIG);
/// assert_eq!(format!("{:?}", CloseCode::NORMAL), "NORMAL");
/// assert_eq!(format!("{:?}", CloseCode::from(4321)), "CloseCode(4321)");
/// assert!(CloseCode::from(4321).is_allowed_on_wire());
/// assert!(!CloseCode::NO_STATUS.is_allowed_on_wire());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CloseCode(u16);

impl CloseCode {
    /// 1000: the purpose of the connection was fulfilled.
    pub const NORMAL: CloseCode = CloseCode(1000);
    /// 1001: the endpoint is going away (a server shutting down, a page navigated away).
    pub const GOING_AWAY: CloseCode = CloseCode(1001);
    /// 1002: a protocol error.
    pub const PROTOCOL_ERROR: CloseCode = CloseCode(1002);
    /// 1003: a data type the endpoint cannot accept (text to a binary-only endpoint).
    pub const UNSUPPORTED_DATA: CloseCode = CloseCode(1003);
    /// 1004: reserved, meaning undefined; never sent.
    pub const RESERVED: CloseCode = CloseCode(1004);
    /// 1005: no status code was present (an empty Close payload); never sent.
    pub const NO_STATUS: CloseCode = CloseCode(1005);
    /// 1006: the connection closed without a Close frame; never sent.
    pub const ABNORMAL: CloseCode = CloseCode(1006);
    /// 1007: message data inconsistent with its type (text that is not UTF-8).
    pub const INVALID_PAYLOAD: CloseCode = CloseCode(1007);
    /// 1008: a message violates the endpoint's policy.
    pub const POLICY: CloseCode = CloseCode(1008);
    /// 1009: a message too big to process.
    pub const TOO_BIG: CloseCode = CloseCode(1009);
    /// 1010 (client): the server did not negotiate an extension the client requires.
    pub const MANDATORY_EXTENSION: CloseCode = CloseCode(1010);
    /// 1011 (server): an unexpected condition prevented it from fulfilling the request.
    pub const INTERNAL: CloseCode = CloseCode(1011);
    /// 1012 (IANA registry): the service is restarting.
    pub const SERVICE_RESTART: CloseCode = CloseCode(1012);
    /// 1013 (IANA registry): try again later (temporary overload).
    pub const TRY_AGAIN_LATER: CloseCode = CloseCode(1013);
    /// 1014 (IANA registry): a gateway received an invalid response from upstream.
    pub const BAD_GATEWAY: CloseCode = CloseCode(1014);
    /// 1015: the TLS handshake failed; never sent.
    pub const TLS_HANDSHAKE: CloseCode = CloseCode(1015);

    /// The numeric code.
    pub const fn get(self) -> u16 {
        self.0
    }

    /// Whether a Close frame may carry this code, sent or received (RFC 6455 §7.4.1, §7.4.2,
    /// and the IANA registry's 1012-1014).
    ///
    /// - 0-999: "not used".
    /// - 1000-2999: "reserved for definition by this protocol, its future revisions, and
    ///   extensions": only the defined ones; 1004 is reserved, and 1005, 1006 and 1015 "MUST
    ///   NOT be set as a status code in a Close control frame by an endpoint".
    /// - 3000-3999 (registered by libraries and frameworks) and 4000-4999 (private use):
    ///   allowed.
    /// - 5000 and above: undefined.
    pub const fn is_allowed_on_wire(self) -> bool {
        matches!(self.0, 1000..=1003 | 1007..=1014 | 3000..=4999)
    }

    /// The name RFC 6455 §7.4.1 (or the IANA registry) gives the code, if any.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            1000 => "NORMAL",
            1001 => "GOING_AWAY",
            1002 => "PROTOCOL_ERROR",
            1003 => "UNSUPPORTED_DATA",
            1004 => "RESERVED",
            1005 => "NO_STATUS",
            1006 => "ABNORMAL",
            1007 => "INVALID_PAYLOAD",
            1008 => "POLICY",
            1009 => "TOO_BIG",
            1010 => "MANDATORY_EXTENSION",
            1011 => "INTERNAL",
            1012 => "SERVICE_RESTART",
            1013 => "TRY_AGAIN_LATER",
            1014 => "BAD_GATEWAY",
            1015 => "TLS_HANDSHAKE",
            _ => return None,
        })
    }
}

impl From<u16> for CloseCode {
    fn from(code: u16) -> CloseCode {
        CloseCode(code)
    }
}

impl From<CloseCode> for u16 {
    fn from(code: CloseCode) -> u16 {
        code.0
    }
}

impl fmt::Debug for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "CloseCode({})", self.0),
        }
    }
}

impl fmt::Display for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// Reads a received Close frame's payload (unmasked): its code ([`CloseCode::NO_STATUS`] for an
/// empty payload) and its reason (valid UTF-8, possibly empty).
///
/// # Errors
/// - RFC 6455 §5.5.1: a payload, if any, "MUST" start with a 2-byte code: one octet is
///   [`Error::BadClosePayload`] (1002).
/// - §7.4: a code not allowed on the wire ([`CloseCode::is_allowed_on_wire`]) is
///   [`Error::InvalidCloseCode`] (1002).
/// - §5.5.1: the reason is UTF-8; §8.1: invalid UTF-8 is [`Error::InvalidUtf8`] (1007).
///
/// # Examples
/// ```
/// use peregrine::ws::{CloseCode, parse_close};
/// assert_eq!(parse_close(b"\x03\xe8bye"), Ok((CloseCode::NORMAL, &b"bye"[..])));
/// assert_eq!(parse_close(b""), Ok((CloseCode::NO_STATUS, &b""[..])));
/// assert!(parse_close(b"\x03").is_err());
/// ```
pub fn parse_close(payload: &[u8]) -> Result<(CloseCode, &[u8]), Error> {
    let (code, reason) = match payload {
        [] => return Ok((CloseCode::NO_STATUS, &[])),
        [_] => return Err(Error::BadClosePayload),
        [hi, lo, reason @ ..] => (CloseCode(u16::from_be_bytes([*hi, *lo])), reason),
    };
    if !code.is_allowed_on_wire() {
        return Err(Error::InvalidCloseCode);
    }
    if !utf8::is_valid(reason) {
        return Err(Error::InvalidUtf8);
    }
    Ok((code, reason))
}

/// A Close payload we send: the code and the reason, on the stack.
#[derive(Clone, Copy)]
pub(crate) struct ClosePayload {
    buf: [u8; MAX_CONTROL_PAYLOAD],
    len: u8,
}

impl ClosePayload {
    /// The payload for `code` and `reason`; [`CloseCode::NO_STATUS`] is the empty payload
    /// (RFC 6455 §5.5.1: a Close frame "MAY" have no body), which carries no reason. A reason
    /// longer than [`MAX_REASON`] is cut at a character boundary.
    pub(crate) fn new(code: CloseCode, reason: &str) -> ClosePayload {
        let mut p = ClosePayload { buf: [0; MAX_CONTROL_PAYLOAD], len: 0 };
        if code == CloseCode::NO_STATUS {
            return p;
        }
        let mut end = reason.len().min(MAX_REASON);
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        p.buf[..2].copy_from_slice(&code.0.to_be_bytes());
        p.buf[2..2 + end].copy_from_slice(&reason.as_bytes()[..end]);
        p.len = (2 + end) as u8;
        p
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..usize::from(self.len)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        input: &'static [u8],
        expect: Result<(u16, &'static [u8]), Error>,
    }

    #[test]
    fn close_payloads_rfc6455_5_5_1_and_7_4() {
        let cases = [
            Case { input: b"", expect: Ok((1005, b"")) },
            Case { input: b"\x03", expect: Err(Error::BadClosePayload) },
            Case { input: b"\x03\xe8", expect: Ok((1000, b"")) },
            Case { input: b"\x03\xe8ok", expect: Ok((1000, b"ok")) },
            Case { input: b"\x03\xe9", expect: Ok((1001, b"")) },
            Case { input: b"\x03\xf3", expect: Ok((1011, b"")) },
            Case { input: b"\x03\xf6", expect: Ok((1014, b"")) },
            Case { input: b"\x0b\xb8", expect: Ok((3000, b"")) },
            Case { input: b"\x13\x87", expect: Ok((4999, b"")) },
            Case { input: b"\x03\xe8h\xc3\xa9", expect: Ok((1000, "h\u{e9}".as_bytes())) },
            // Codes never on the wire.
            Case { input: b"\x00\x00", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\x03\xe7", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\x03\xec", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\x03\xed", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\x03\xee", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\x03\xf7", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\x03\xf8", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\x04\x4c", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\x07\xd0", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\x0b\xb7", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\x13\x88", expect: Err(Error::InvalidCloseCode) },
            Case { input: b"\xff\xff", expect: Err(Error::InvalidCloseCode) },
            // The reason must be UTF-8.
            Case { input: b"\x03\xe8\xff", expect: Err(Error::InvalidUtf8) },
            Case { input: b"\x03\xe8\xce\xba\xe1\xbd", expect: Err(Error::InvalidUtf8) },
            Case { input: b"\x03\xe8\xed\xa0\x80", expect: Err(Error::InvalidUtf8) },
        ];
        for c in cases {
            let got = parse_close(c.input).map(|(code, reason)| (code.get(), reason));
            assert_eq!(got, c.expect, "{:?}", c.input);
        }
    }

    #[test]
    fn every_code_allowed_on_the_wire_round_trips() {
        for n in 0..=u16::MAX {
            let code = CloseCode::from(n);
            let payload = ClosePayload::new(code, "why");
            if code == CloseCode::NO_STATUS {
                assert!(payload.as_bytes().is_empty());
                continue;
            }
            let parsed = parse_close(payload.as_bytes());
            assert_eq!(parsed.is_ok(), code.is_allowed_on_wire(), "{n}");
            if let Ok((c, reason)) = parsed {
                assert_eq!((c, reason), (code, &b"why"[..]));
            }
        }
    }

    #[test]
    fn a_long_reason_is_cut_at_a_character_boundary() {
        let reason = "\u{e9}".repeat(100);
        let p = ClosePayload::new(CloseCode::NORMAL, &reason);
        assert_eq!(p.as_bytes().len(), 2 + 122);
        assert!(parse_close(p.as_bytes()).is_ok());
    }
}
