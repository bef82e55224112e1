//! Bytes as `&str`, fast when they are ASCII.
//!
//! The request's views (path, target, header names) are ASCII: the parser allows nothing else
//! there. `std::str::from_utf8` still costs about 100 instructions on a 10-byte path (it is
//! built for long, mixed input); a word-at-a-time ASCII check costs a fraction of that.
#![allow(unsafe_code)]

/// `bytes` as a `&str` if they are valid UTF-8; checked as ASCII first.
#[inline]
pub(crate) fn as_str(bytes: &[u8]) -> Option<&str> {
    if bytes.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        input: &'static [u8],
        expect: Option<&'static str>,
    }

    /// RFC 3629 §4: ASCII and well-formed UTF-8 convert; anything else does not.
    #[test]
    fn converts_only_valid_utf8() {
        let cases = [
            Case { input: b"", expect: Some("") },
            Case { input: b"/plaintext?x=1", expect: Some("/plaintext?x=1") },
            Case { input: "/caf\u{e9}".as_bytes(), expect: Some("/caf\u{e9}") },
            Case { input: b"/\xff", expect: None },
            Case { input: b"/\xc3", expect: None },
        ];
        for case in cases {
            assert_eq!(as_str(case.input), case.expect, "{:?}", case.input);
        }
    }
}
