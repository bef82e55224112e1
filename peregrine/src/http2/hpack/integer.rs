//! Prefix-coded integers (RFC 7541 §5.1).
//!
//! ```text
//!   0   1   2   3   4   5   6   7
//! +---+---+---+---+---+---+---+---+
//! | ? | ? | ? | 1   1   1   1   1 |   value >= 2^N - 1: the prefix is all ones,
//! +---+---+---+-------------------+   then 7 bits per octet, least significant first,
//! | 1 |    Value-(2^N-1) LSB      |   the top bit saying "more follows"
//! +---+---------------------------+
//! ```

use super::DecodeError;

/// The largest integer we accept. RFC 7541 §5.1: "Integer encodings that exceed
/// implementation limits ... MUST be treated as decoding errors." Every integer in a header
/// block is an index, a string length or a table size; none can usefully exceed 2^32 - 1 (a
/// length is also bounded by the block, a size by our SETTINGS value).
pub(crate) const MAX_INT: u64 = u32::MAX as u64;

/// Decodes an integer with an `n`-bit prefix (1..=8) starting at `block[*pos]` and advances
/// `*pos` past it. The bits above the prefix in the first octet are the caller's.
///
/// # Errors
///
/// [`DecodeError::Truncated`] when the block ends inside the integer;
/// [`DecodeError::IntegerOverflow`] when it exceeds [`MAX_INT`] or uses more continuation
/// octets than a 32-bit value needs (RFC 7541 §5.1, implementation limit).
#[inline]
pub(crate) fn decode(block: &[u8], pos: &mut usize, n: u32) -> Result<usize, DecodeError> {
    let mask = (1u32 << n) - 1;
    let Some(&first) = block.get(*pos) else { return Err(DecodeError::Truncated) };
    *pos += 1;
    let prefix = u32::from(first) & mask;
    if prefix < mask {
        return Ok(prefix as usize);
    }
    decode_continuation(block, pos, u64::from(mask))
}

/// The multi-octet tail of [`decode`], out of line: indexes and lengths below the prefix
/// limit (the common case) never reach it.
#[cold]
fn decode_continuation(block: &[u8], pos: &mut usize, base: u64) -> Result<usize, DecodeError> {
    let mut value = base;
    // 2^32 needs 5 groups of 7 bits; a sixth continuation octet can only carry zeros or
    // overflow, so it is refused either way (a zero-padded integer is an attack on our time,
    // not a value anyone needs).
    for shift in (0..35).step_by(7) {
        let Some(&b) = block.get(*pos) else { return Err(DecodeError::Truncated) };
        *pos += 1;
        value += u64::from(b & 0x7f) << shift;
        if value > MAX_INT {
            return Err(DecodeError::IntegerOverflow);
        }
        if b & 0x80 == 0 {
            return Ok(value as usize);
        }
    }
    Err(DecodeError::IntegerOverflow)
}

/// Appends `value` with an `n`-bit prefix (1..=8); `high` carries the representation's
/// pattern bits above the prefix (e.g. `0x80` for an indexed field).
#[inline]
pub(crate) fn encode(dst: &mut Vec<u8>, high: u8, n: u32, value: usize) {
    crate::field_codec::prefixed_int::encode(dst, high, n, value as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        bytes: &'static [u8],
        prefix: u32,
        expect: Result<usize, DecodeError>,
        used: usize,
    }

    #[test]
    fn decode_cases() {
        let cases = [
            // RFC 7541 C.1.1: 10 with a 5-bit prefix.
            Case { bytes: &[0b000_01010], prefix: 5, expect: Ok(10), used: 1 },
            // C.1.2: 1337 with a 5-bit prefix.
            Case {
                bytes: &[0b000_11111, 0b1001_1010, 0b0000_1010],
                prefix: 5,
                expect: Ok(1337),
                used: 3,
            },
            // C.1.3: 42 at an octet boundary (8-bit prefix).
            Case { bytes: &[42], prefix: 8, expect: Ok(42), used: 1 },
            // Bits above the prefix belong to the representation, not the value.
            Case { bytes: &[0xff, 0x00], prefix: 7, expect: Ok(127), used: 2 },
            Case { bytes: &[0xc5], prefix: 6, expect: Ok(5), used: 1 },
            Case { bytes: &[0x3e], prefix: 6, expect: Ok(62), used: 1 },
            Case { bytes: &[0x3f, 0x00], prefix: 6, expect: Ok(63), used: 2 },
            Case { bytes: &[0x1f, 0x01], prefix: 5, expect: Ok(32), used: 2 },
            Case { bytes: &[0x0f, 0x80, 0x01], prefix: 4, expect: Ok(15 + 128), used: 3 },
            Case { bytes: &[0x00], prefix: 1, expect: Ok(0), used: 1 },
            Case { bytes: &[0x01, 0x00], prefix: 1, expect: Ok(1), used: 2 },
            Case { bytes: &[0xff, 0x7f], prefix: 8, expect: Ok(255 + 127), used: 2 },
            // The largest accepted value: 2^32 - 1.
            Case {
                bytes: &[0x7f, 0x80, 0xff, 0xff, 0xff, 0x0f],
                prefix: 7,
                expect: Ok((1 << 32) - 1),
                used: 6,
            },
            // 2^32: overflow.
            Case {
                bytes: &[0x7f, 0x81, 0xff, 0xff, 0xff, 0x0f],
                prefix: 7,
                expect: Err(DecodeError::IntegerOverflow),
                used: 6,
            },
            // Five 7-bit groups of all ones: far above the limit.
            Case {
                bytes: &[0x1f, 0xff, 0xff, 0xff, 0xff, 0x7f],
                prefix: 5,
                expect: Err(DecodeError::IntegerOverflow),
                used: 6,
            },
            // Zero-padded continuation beyond five octets.
            Case {
                bytes: &[0x1f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00],
                prefix: 5,
                expect: Err(DecodeError::IntegerOverflow),
                used: 6,
            },
            // Truncated: no octet, or a continuation bit with nothing after it.
            Case { bytes: &[], prefix: 5, expect: Err(DecodeError::Truncated), used: 0 },
            Case { bytes: &[0x1f], prefix: 5, expect: Err(DecodeError::Truncated), used: 1 },
            Case { bytes: &[0x7f, 0x80], prefix: 7, expect: Err(DecodeError::Truncated), used: 2 },
        ];
        for c in &cases {
            let mut pos = 0;
            let got = decode(c.bytes, &mut pos, c.prefix);
            assert_eq!(got, c.expect, "{:02x?} prefix {}", c.bytes, c.prefix);
            assert_eq!(pos, c.used, "{:02x?} prefix {}", c.bytes, c.prefix);
        }
    }

    #[test]
    fn encode_round_trips_every_prefix() {
        let values = [
            0,
            1,
            2,
            14,
            15,
            16,
            30,
            31,
            32,
            62,
            63,
            64,
            126,
            127,
            128,
            254,
            255,
            256,
            1337,
            16_383,
            16_384,
            1 << 21,
            (1 << 32) - 1,
        ];
        for n in 1..=8 {
            for &v in &values {
                let mut out = vec![];
                encode(&mut out, 0, n, v);
                let mut pos = 0;
                assert_eq!(decode(&out, &mut pos, n), Ok(v), "{v} prefix {n}");
                assert_eq!(pos, out.len());
            }
        }
        let mut out = vec![];
        encode(&mut out, 0, 5, 1337);
        assert_eq!(out, [0x1f, 0x9a, 0x0a]);
        let mut out = vec![];
        encode(&mut out, 0x80, 7, 62);
        assert_eq!(out, [0xbe]);
    }
}
