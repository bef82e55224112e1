//! Prefixed integers (RFC 9204 §4.1.1, which reuses RFC 7541 §5.1) up to 62 bits.
//!
//! RFC 9204 §4.1.1: "QPACK implementations MUST be able to decode integers up to and
//! including 62 bits long." HPACK's decoder stops at 32 bits; QPACK's stream IDs and insert
//! counts need the full range, so this is its own decoder; the encoder is HPACK's
//! (`field_codec::prefixed_int`).

/// The largest integer accepted, 2^62 - 1.
pub(crate) const MAX: u64 = (1 << 62) - 1;

/// Why an integer could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntError {
    /// The input ends inside the integer: partial on an instruction stream, an error in a
    /// field section.
    Truncated,
    /// Above 2^62 - 1, or longer than such an integer needs.
    Overflow,
}

/// Decodes an integer with an `n`-bit prefix (1..=8) at `buf[*pos]` and advances `*pos` past
/// it. The bits above the prefix in the first octet are the caller's.
#[inline]
pub(crate) fn decode(buf: &[u8], pos: &mut usize, n: u32) -> Result<u64, IntError> {
    let mask = ((1u16 << n) - 1) as u8;
    let Some(&first) = buf.get(*pos) else { return Err(IntError::Truncated) };
    let prefix = first & mask;
    if prefix < mask {
        *pos += 1;
        return Ok(u64::from(prefix));
    }
    let mut p = *pos + 1;
    let mut value = u64::from(mask);
    // 62 bits take at most 9 groups of 7 after the prefix; a tenth octet could only carry
    // zeros or overflow, so it is refused.
    for shift in (0..63).step_by(7) {
        let Some(&b) = buf.get(p) else { return Err(IntError::Truncated) };
        p += 1;
        // `value` <= 2^62 - 1 and the addend < 2^63 (shift <= 56): no wrap-around.
        value += u64::from(b & 0x7f) << shift;
        if value > MAX {
            return Err(IntError::Overflow);
        }
        if b & 0x80 == 0 {
            *pos = p;
            return Ok(value);
        }
    }
    Err(IntError::Overflow)
}

pub(crate) use crate::field_codec::prefixed_int::encode;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_cases() {
        struct Case {
            bytes: &'static [u8],
            prefix: u32,
            expect: Result<u64, IntError>,
            used: usize,
        }
        let cases = [
            // RFC 7541 C.1.1-C.1.3.
            Case { bytes: &[0b000_01010], prefix: 5, expect: Ok(10), used: 1 },
            Case { bytes: &[0x1f, 0x9a, 0x0a], prefix: 5, expect: Ok(1337), used: 3 },
            Case { bytes: &[42], prefix: 8, expect: Ok(42), used: 1 },
            Case { bytes: &[0xff, 0x00], prefix: 8, expect: Ok(255), used: 2 },
            // RFC 9204 B.2: Set Dynamic Table Capacity = 220 (5-bit prefix, pattern 001).
            Case { bytes: &[0x3f, 0xbd, 0x01], prefix: 5, expect: Ok(220), used: 3 },
            Case { bytes: &[0xc5], prefix: 6, expect: Ok(5), used: 1 },
            // 2^62 - 1: the largest.
            Case {
                bytes: &[0x7f, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f],
                prefix: 7,
                expect: Ok(MAX),
                used: 10,
            },
            // 2^62: overflow.
            Case {
                bytes: &[0x7f, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f],
                prefix: 7,
                expect: Err(IntError::Overflow),
                used: 0,
            },
            // A tenth continuation octet.
            Case {
                bytes: &[0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00],
                prefix: 1,
                expect: Err(IntError::Overflow),
                used: 0,
            },
            Case { bytes: &[], prefix: 5, expect: Err(IntError::Truncated), used: 0 },
            Case { bytes: &[0x1f], prefix: 5, expect: Err(IntError::Truncated), used: 0 },
            Case { bytes: &[0x7f, 0x80], prefix: 7, expect: Err(IntError::Truncated), used: 0 },
        ];
        for c in &cases {
            let mut pos = 0;
            assert_eq!(decode(c.bytes, &mut pos, c.prefix), c.expect, "{:02x?}", c.bytes);
            assert_eq!(pos, c.used, "{:02x?}", c.bytes);
        }
    }

    #[test]
    fn encode_round_trips_every_prefix() {
        let values =
            [0, 1, 6, 7, 14, 15, 30, 31, 62, 63, 126, 127, 254, 255, 256, 1337, 1 << 32, MAX];
        for n in 1..=8 {
            for &v in &values {
                let mut out = vec![];
                encode(&mut out, 0, n, v);
                let mut pos = 0;
                assert_eq!(decode(&out, &mut pos, n), Ok(v), "{v} prefix {n}");
                assert_eq!(pos, out.len());
                for cut in 0..out.len() {
                    let mut pos = 0;
                    assert_eq!(decode(&out[..cut], &mut pos, n), Err(IntError::Truncated));
                }
            }
        }
    }
}
