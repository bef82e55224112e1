//! `HEXDIG` (RFC 5234 Appendix B.1, case-insensitive as RFC 3986 §2.1 and RFC 9112 §7.1 read
//! it): the digits of a chunk size and of a percent-encoded octet.

/// The value of the hexadecimal digit `b`, either case; `None` for any other byte.
#[inline(always)]
pub(crate) fn value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_byte() {
        for b in 0..=255u8 {
            let want = char::from(b).to_digit(16).map(|d| d as u8);
            assert_eq!(super::value(b), want, "{b:#04x}");
        }
    }
}
