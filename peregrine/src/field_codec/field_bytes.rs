//! Which bytes a field name or value may hold in HTTP/2 and HTTP/3 (RFC 9113 §8.2.1, RFC 9114
//! §4.2, RFC 9110 §5.1, §5.5), as one 256-entry class table the decoders (HPACK's and QPACK's) OR
//! over every byte they copy or Huffman-decode, so validation rides along with the copy.

use crate::http1::field_syntax::{is_tchar_by_grammar, is_value_ctl};

/// A decoded field that breaks RFC 9113 §8.2.1 (HTTP/2) or RFC 9114 §4.2 (HTTP/3), the same
/// rules: the message is malformed, a stream error of type PROTOCOL_ERROR (RFC 9113 §8.1.1)
/// or H3_MESSAGE_ERROR (RFC 9114 §4.1.2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FieldError {
    /// An empty name (RFC 9110 §5.1: a name is a non-empty `token`).
    EmptyName,
    /// An uppercase letter in a name (RFC 9113 §8.2.1: "MUST NOT contain characters in the
    /// ranges ... 0x41-0x5a").
    UppercaseName,
    /// A name byte outside `token` (CTL, SP, DEL, non-ASCII, separators), or a colon other
    /// than a pseudo-header's leading one (RFC 9113 §8.2.1, RFC 9110 §5.1).
    InvalidNameByte,
    /// NUL, CR or LF in a value (RFC 9113 §8.2.1), or another control byte or DEL (RFC 9110
    /// §5.5, as our HTTP/1.1 parser refuses them).
    InvalidValueByte,
    /// A value starting or ending with SP or HTAB (RFC 9113 §8.2.1).
    ValueWhitespace,
}

impl FieldError {
    /// A one-byte code for table entries (0 = no error).
    pub(crate) fn code(e: Option<FieldError>) -> u8 {
        match e {
            None => 0,
            Some(e) => e as u8 + 1,
        }
    }

    /// The inverse of [`FieldError::code`].
    pub(crate) fn from_code(c: u8) -> Option<FieldError> {
        Some(match c {
            1 => FieldError::EmptyName,
            2 => FieldError::UppercaseName,
            3 => FieldError::InvalidNameByte,
            4 => FieldError::InvalidValueByte,
            5 => FieldError::ValueWhitespace,
            _ => return None,
        })
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed field: {self:?}")
    }
}

impl std::error::Error for FieldError {}

/// Class bit: the byte may not appear in a field name (except a pseudo-header's leading ':').
pub(crate) const NAME_BAD: u8 = 1;
/// Class bit: the byte may not appear in a field value.
pub(crate) const VALUE_BAD: u8 = 2;

/// `CLASS[b]`: the class bits of byte `b`.
///
/// Names: RFC 9113 §8.2.1 "A field name MUST NOT contain characters in the ranges 0x00-0x20,
/// 0x41-0x5a, or 0x7f-0xff" and no colon outside a pseudo-header's first byte; RFC 9110 §5.1
/// makes a name a `token`, which also rules out `"(),/;<=>?@[\]{}` (RFC 9113 §8.2.1: "SHOULD
/// validate field names ... according to their definitions in Sections 5.1 and 5.5 of
/// [HTTP]"). Values: §8.2.1 forbids NUL, CR and LF; RFC 9110 §5.5 (`field-vchar`, obs-text,
/// SP, HTAB) also rules out the other control bytes and DEL, as our HTTP/1.1 parser does.
pub(crate) const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        // A name is a token without uppercase (§8.2.1); a value holds no CTL but HTAB.
        let token = is_tchar_by_grammar(c) && !c.is_ascii_uppercase();
        let value_ok = !is_value_ctl(c);
        t[b] = (if token { 0 } else { NAME_BAD }) | (if value_ok { 0 } else { VALUE_BAD });
        b += 1;
    }
    t
};

/// The OR of the class bits of `bytes`.
#[inline]
pub(crate) fn classify(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0, |acc, &b| acc | CLASS[b as usize])
}

/// The §8.2.1 verdict on a name that is empty or has a byte with [`NAME_BAD`] set (callers
/// check that first). Out of line: valid names never come here.
#[cold]
pub(crate) fn check_name(name: &[u8]) -> Option<FieldError> {
    let rest = match name {
        [] => return Some(FieldError::EmptyName),
        // RFC 9113 §8.3: pseudo-header names start with a single ':'; the rest is a token.
        [b':', rest @ ..] if !rest.is_empty() => rest,
        _ => name,
    };
    if rest.iter().any(u8::is_ascii_uppercase) {
        return Some(FieldError::UppercaseName);
    }
    if classify(rest) & NAME_BAD != 0 {
        return Some(FieldError::InvalidNameByte);
    }
    None
}

/// The §8.2.1 verdict on a value whose class bits are `class`.
#[inline]
pub(crate) fn check_value(value: &[u8], class: u8) -> Option<FieldError> {
    if class & VALUE_BAD != 0 {
        return Some(FieldError::InvalidValueByte);
    }
    // RFC 9113 §8.2.1: "A field value MUST NOT start or end with an ASCII whitespace
    // character (ASCII SP or HTAB, 0x20 or 0x09)."
    match (value.first(), value.last()) {
        (Some(b' ' | b'\t'), _) | (_, Some(b' ' | b'\t')) => Some(FieldError::ValueWhitespace),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_table_agrees_with_the_rules_for_all_256_bytes() {
        for b in 0..=255u8 {
            let name_ok = b"abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~".contains(&b);
            let value_ok = b == b'\t' || (0x20..=0x7e).contains(&b) || b >= 0x80;
            assert_eq!(CLASS[b as usize] & NAME_BAD == 0, name_ok, "name byte {b:#04x}");
            assert_eq!(CLASS[b as usize] & VALUE_BAD == 0, value_ok, "value byte {b:#04x}");
        }
    }

    struct Case {
        input: &'static [u8],
        expect: Option<FieldError>,
    }

    #[test]
    fn names() {
        let cases = [
            Case { input: b"content-type", expect: None },
            Case { input: b":path", expect: None },
            Case { input: b"x-a_b.c~1", expect: None },
            Case { input: b"", expect: Some(FieldError::EmptyName) },
            Case { input: b":", expect: Some(FieldError::InvalidNameByte) },
            Case { input: b"::path", expect: Some(FieldError::InvalidNameByte) },
            Case { input: b"a:b", expect: Some(FieldError::InvalidNameByte) },
            Case { input: b"Host", expect: Some(FieldError::UppercaseName) },
            Case { input: b":Path", expect: Some(FieldError::UppercaseName) },
            Case { input: b"a b", expect: Some(FieldError::InvalidNameByte) },
            Case { input: b"a\0", expect: Some(FieldError::InvalidNameByte) },
            Case { input: b"a\xc3\xa9", expect: Some(FieldError::InvalidNameByte) },
            Case { input: b"a(b)", expect: Some(FieldError::InvalidNameByte) },
            Case { input: b"a\x7f", expect: Some(FieldError::InvalidNameByte) },
        ];
        for c in &cases {
            let got = if classify(c.input) & NAME_BAD == 0 && !c.input.is_empty() {
                None
            } else {
                check_name(c.input)
            };
            assert_eq!(got, c.expect, "{:?}", String::from_utf8_lossy(c.input));
        }
    }

    #[test]
    fn values() {
        let cases = [
            Case { input: b"", expect: None },
            Case { input: b"text/html; q=0.9", expect: None },
            Case { input: b"a\tb", expect: None },
            Case { input: b"caf\xc3\xa9", expect: None },
            Case { input: b"a\0b", expect: Some(FieldError::InvalidValueByte) },
            Case { input: b"a\rb", expect: Some(FieldError::InvalidValueByte) },
            Case { input: b"a\nb", expect: Some(FieldError::InvalidValueByte) },
            Case { input: b"a\x01", expect: Some(FieldError::InvalidValueByte) },
            Case { input: b"a\x7f", expect: Some(FieldError::InvalidValueByte) },
            Case { input: b" a", expect: Some(FieldError::ValueWhitespace) },
            Case { input: b"a ", expect: Some(FieldError::ValueWhitespace) },
            Case { input: b"\ta", expect: Some(FieldError::ValueWhitespace) },
            Case { input: b"a\t", expect: Some(FieldError::ValueWhitespace) },
            Case { input: b" ", expect: Some(FieldError::ValueWhitespace) },
        ];
        for c in &cases {
            assert_eq!(check_value(c.input, classify(c.input)), c.expect, "{:?}", c.input);
        }
    }
}
