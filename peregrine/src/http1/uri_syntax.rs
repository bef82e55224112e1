//! Byte classes of RFC 3986 shared by the request-target check, the Host rules and the
//! router's template syntax.

/// `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"` (RFC 3986 §2.3).
#[inline(always)]
pub(crate) const fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// `sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="`
/// (RFC 3986 §2.2).
#[inline(always)]
pub(crate) const fn is_sub_delim(b: u8) -> bool {
    matches!(b, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3986 §2.2–§2.3: the two sets, spelled out, over all 256 byte values.
    #[test]
    fn classes_match_the_rfc_sets() {
        let unreserved = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
        let sub_delims = b"!$&'()*+,;=";
        for b in 0..=255u8 {
            assert_eq!(is_unreserved(b), unreserved.contains(&b), "{b:#04x}");
            assert_eq!(is_sub_delim(b), sub_delims.contains(&b), "{b:#04x}");
        }
    }
}
