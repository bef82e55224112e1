//! Close codes and the Close frame's payload (RFC 6455 §5.5.1, §7.4).
//!
//! ```text
//! Close payload = "" / ( Status Code (16, network order), Reason (UTF-8, 0..=123 octets) )
//! ```

use super::close_code::CloseCode;
use super::error::Error;
use super::frame::MAX_CONTROL_PAYLOAD;
use super::utf8;

/// The longest close reason: a control payload (125 octets) less the status code.
pub const MAX_REASON: usize = MAX_CONTROL_PAYLOAD - 2;

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
        [hi, lo, reason @ ..] => (CloseCode::from(u16::from_be_bytes([*hi, *lo])), reason),
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
        p.buf[..2].copy_from_slice(&u16::from(code).to_be_bytes());
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
