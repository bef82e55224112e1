//! The `HTTP2-Settings` field of an `Upgrade: h2c` request (RFC 7540 §3.2.1, kept for
//! existing deployments by RFC 9113 §3.1): a SETTINGS payload in base64url without padding.

use crate::base64::{self, Alphabet, PadBits, Padding};

/// Decodes an `HTTP2-Settings` value (`token68` of base64url characters, RFC 4648 §5, padding
/// omitted) into the SETTINGS frame payload it carries; `None` when it is not valid base64url
/// or not a whole number of settings (6 octets each).
///
/// # Examples
/// ```
/// use peregrine::http2::upgrade::decode_settings_field;
/// // SETTINGS_MAX_CONCURRENT_STREAMS (0x3) = 100
/// assert_eq!(decode_settings_field(b"AAMAAABk"), Some(vec![0, 3, 0, 0, 0, 100]));
/// assert_eq!(decode_settings_field(b""), Some(vec![]));
/// assert_eq!(decode_settings_field(b"AAMAAAB"), None);
/// ```
pub fn decode_settings_field(value: &[u8]) -> Option<Vec<u8>> {
    // Padding is tolerated (some clients pad) where it belongs: at the end, completing the
    // last group of four. Unused bits of the last character must be zero (RFC 4648 §3.5,
    // canonical encoding).
    let out = base64::decode(value, Alphabet::UrlSafe, Padding::Optional, PadBits::Zero)?;
    (out.len() % 6 == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_base64url_settings() {
        struct Case {
            input: &'static [u8],
            expect: Option<&'static [u8]>,
        }
        let cases = [
            Case { input: b"", expect: Some(b"") },
            Case { input: b"AAMAAABk", expect: Some(&[0, 3, 0, 0, 0, 100]) },
            // Two settings: ENABLE_PUSH 0, INITIAL_WINDOW_SIZE 65535 — as curl sends them.
            Case {
                input: b"AAIAAAAAAAQAAP__",
                expect: Some(&[0, 2, 0, 0, 0, 0, 0, 4, 0, 0, 0xff, 0xff]),
            },
            Case { input: b"AAMAAABk=", expect: None },
            Case { input: b"AAMAAA+k", expect: None },
            Case { input: b"AAMAA", expect: None },
            Case { input: b"AAMAAABkAA", expect: None },
            Case { input: b"AAMA AABk", expect: None },
        ];
        for case in cases {
            assert_eq!(
                decode_settings_field(case.input).as_deref(),
                case.expect,
                "{:?}",
                String::from_utf8_lossy(case.input)
            );
        }
    }
}
