//! QUIC variable-length integers (RFC 9000 §16), the integers of every HTTP/3 frame header,
//! frame field and unidirectional stream type (RFC 9114 §1.3 "x (i)").
//!
//! ```text
//! +------+--------+-------------+-----------------------+
//! | 2MSB | Length | Usable Bits | Range                 |
//! +------+--------+-------------+-----------------------+
//! | 00   | 1      | 6           | 0-63                  |
//! | 01   | 2      | 14          | 0-16383               |
//! | 10   | 4      | 30          | 0-1073741823          |
//! | 11   | 8      | 62          | 0-4611686018427387903 |
//! +------+--------+-------------+-----------------------+
//! ```
//!
//! RFC 9000 §16: "values do not need to be encoded on the minimum number of bytes necessary",
//! so a longer encoding than needed is accepted; ours are always the shortest.

/// The largest value a variable-length integer holds, 2^62 - 1.
pub const MAX: u64 = (1 << 62) - 1;

/// The length in octets of the integer whose first octet is `first`: the two most significant
/// bits give its base-2 logarithm. A completeness check before a parse costs one octet.
#[inline]
pub const fn len_of(first: u8) -> usize {
    1 << (first >> 6)
}

/// Decodes the integer at the start of `buf`: its value and length, or `None` when `buf` ends
/// inside it (partial input, not an error: every octet string long enough is an integer).
///
/// # Examples
/// ```
/// use peregrine::http3::varint;
/// // RFC 9000 Appendix A.1's examples.
/// assert_eq!(varint::decode(&[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c]), Some((151_288_809_941_952_652, 8)));
/// assert_eq!(varint::decode(&[0x9d, 0x7f, 0x3e, 0x7d]), Some((494_878_333, 4)));
/// assert_eq!(varint::decode(&[0x7b, 0xbd]), Some((15_293, 2)));
/// assert_eq!(varint::decode(&[0x25]), Some((37, 1)));
/// assert_eq!(varint::decode(&[0x40, 0x25]), Some((37, 2)));
/// assert_eq!(varint::decode(&[0x7b]), None);
/// ```
#[inline]
pub fn decode(buf: &[u8]) -> Option<(u64, usize)> {
    let &first = buf.first()?;
    let len = len_of(first);
    let bytes = buf.get(..len)?;
    let mut v = u64::from(first & 0x3f);
    for &b in &bytes[1..] {
        v = v << 8 | u64::from(b);
    }
    Some((v, len))
}

/// The length in octets of `v`'s shortest encoding (8 for anything above 2^30 - 1).
#[inline]
pub const fn encoded_len(v: u64) -> usize {
    if v < 1 << 6 {
        1
    } else if v < 1 << 14 {
        2
    } else if v < 1 << 30 {
        4
    } else {
        8
    }
}

/// Appends `v`'s shortest encoding to `dst`.
///
/// # Panics
/// If `v` is above [`MAX`] (debug builds; release builds drop the two high bits).
///
/// # Examples
/// ```
/// use peregrine::http3::varint;
/// let mut out = Vec::new();
/// varint::encode(15_293, &mut out);
/// assert_eq!(out, [0x7b, 0xbd]);
/// ```
#[inline]
pub fn encode(v: u64, dst: &mut Vec<u8>) {
    debug_assert!(v <= MAX, "varint above 2^62 - 1");
    match encoded_len(v) {
        1 => dst.push(v as u8),
        2 => dst.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        4 => dst.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
        _ => dst.extend_from_slice(&((v & MAX) | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_cases() {
        struct Case {
            bytes: &'static [u8],
            expect: Option<(u64, usize)>,
        }
        let cases = [
            Case { bytes: &[], expect: None },
            Case { bytes: &[0x00], expect: Some((0, 1)) },
            Case { bytes: &[0x3f, 0xff], expect: Some((63, 1)) },
            Case { bytes: &[0x40], expect: None },
            Case { bytes: &[0x40, 0x00], expect: Some((0, 2)) },
            Case { bytes: &[0x7f, 0xff], expect: Some((16_383, 2)) },
            Case { bytes: &[0x80, 0x00, 0x40], expect: None },
            Case { bytes: &[0x80, 0x00, 0x40, 0x00], expect: Some((16_384, 4)) },
            Case { bytes: &[0xbf, 0xff, 0xff, 0xff], expect: Some(((1 << 30) - 1, 4)) },
            Case { bytes: &[0xc0, 0, 0, 0, 0x40, 0, 0], expect: None },
            Case { bytes: &[0xc0, 0, 0, 0, 0x40, 0, 0, 0], expect: Some((1 << 30, 8)) },
            Case { bytes: &[0xff; 8], expect: Some((MAX, 8)) },
            // Non-minimal encodings are values like any other (RFC 9000 §16).
            Case { bytes: &[0xc0, 0, 0, 0, 0, 0, 0, 0x05], expect: Some((5, 8)) },
        ];
        for c in cases {
            assert_eq!(decode(c.bytes), c.expect, "{:02x?}", c.bytes);
        }
    }

    #[test]
    fn encode_is_shortest_and_round_trips() {
        let values = [0, 1, 63, 64, 16_383, 16_384, (1 << 30) - 1, 1 << 30, MAX - 1, MAX];
        for v in values {
            let mut out = Vec::new();
            encode(v, &mut out);
            assert_eq!(out.len(), encoded_len(v), "{v}");
            assert_eq!(len_of(out[0]), out.len());
            assert_eq!(decode(&out), Some((v, out.len())), "{v}");
            // Every proper prefix is partial.
            for n in 0..out.len() {
                assert_eq!(decode(&out[..n]), None);
            }
        }
    }
}
