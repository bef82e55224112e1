//! Percent-decoding of parameter values (RFC 3986 §2.1), on request only.

use std::borrow::Cow;

use super::error::DecodeError;
use crate::hexdig;

/// Decodes `%XX` escapes in `raw` and checks that the result is UTF-8.
///
/// Borrows when there is nothing to decode. `+` stays `+` (form encoding is not path encoding),
/// and `%2F` decodes to `/` inside the value: matching already happened on the raw path.
///
/// # Errors
/// [`DecodeError::InvalidPercent`] when a `%` is not followed by two hex digits (RFC 3986
/// §2.1), [`DecodeError::InvalidUtf8`] when the decoded bytes are not UTF-8.
///
/// # Examples
/// ```
/// use peregrine::router::{percent_decode, DecodeError};
/// assert_eq!(percent_decode("caf%C3%A9").unwrap(), "café");
/// assert_eq!(percent_decode("a+b").unwrap(), "a+b");
/// assert_eq!(percent_decode("100%"), Err(DecodeError::InvalidPercent { at: 3 }));
/// assert_eq!(percent_decode("%FF"), Err(DecodeError::InvalidUtf8));
/// ```
pub fn percent_decode(raw: &str) -> Result<Cow<'_, str>, DecodeError> {
    let bytes = raw.as_bytes();
    let Some(first) = memchr::memchr(b'%', bytes) else {
        return Ok(Cow::Borrowed(raw));
    };
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&bytes[..first]);
    decode_into(&bytes[first..], &mut out)
        .map_err(|at| DecodeError::InvalidPercent { at: first + at })?;
    String::from_utf8(out).map(Cow::Owned).map_err(|_| DecodeError::InvalidUtf8)
}

/// Appends `bytes` to `out` with every `%XX` decoded (RFC 3986 §2.1); `Err` with the index of
/// a `%` not followed by two hex digits. Shared with static-file path resolution.
pub(crate) fn decode_into(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), usize> {
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hi = bytes.get(i + 1).copied().and_then(hexdig::value);
            let lo = bytes.get(i + 2).copied().and_then(hexdig::value);
            let (Some(hi), Some(lo)) = (hi, lo) else {
                return Err(i);
            };
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_rfc3986_2_1() {
        struct Case {
            input: &'static str,
            expect: Result<&'static str, DecodeError>,
        }
        let cases = [
            Case { input: "", expect: Ok("") },
            Case { input: "plain", expect: Ok("plain") },
            Case { input: "a%20b", expect: Ok("a b") },
            Case { input: "%2f%2F", expect: Ok("//") },
            Case { input: "%e2%82%ac", expect: Ok("\u{20ac}") },
            Case { input: "a+b", expect: Ok("a+b") },
            Case { input: "%", expect: Err(DecodeError::InvalidPercent { at: 0 }) },
            Case { input: "ab%4", expect: Err(DecodeError::InvalidPercent { at: 2 }) },
            Case { input: "%g0", expect: Err(DecodeError::InvalidPercent { at: 0 }) },
            Case { input: "%0g", expect: Err(DecodeError::InvalidPercent { at: 0 }) },
            Case { input: "%C3", expect: Err(DecodeError::InvalidUtf8) },
            Case { input: "%C0%80", expect: Err(DecodeError::InvalidUtf8) },
        ];
        for c in cases {
            assert_eq!(percent_decode(c.input).as_deref().map_err(|e| *e), c.expect, "{}", c.input);
        }
        assert!(matches!(percent_decode("plain"), Ok(Cow::Borrowed("plain"))));
    }
}
