//! The encoded field section prefix (RFC 9204 §4.5.1): the Required Insert Count, encoded
//! modulo twice the most entries the table can hold, and the Base, as a signed delta from it.
//!
//! ```text
//!   0   1   2   3   4   5   6   7
//! +---+---+---+---+---+---+---+---+
//! |   Required Insert Count (8+)  |
//! +---+---------------------------+
//! | S |      Delta Base (7+)      |
//! +---+---------------------------+
//! ```

use super::Cause;
use super::integer::{self, IntError};

/// The most entries a table of `max_capacity` octets holds (§4.5.1.1: "MaxEntries =
/// floor( MaxTableCapacity / 32 )"), from the decoder's SETTINGS_QPACK_MAX_TABLE_CAPACITY.
pub(crate) const fn max_entries(max_capacity: u64) -> u64 {
    max_capacity / 32
}

/// §4.5.1.1: "If the encoder has no dynamic table references, ... 0; otherwise
/// EncodedInsertCount = (ReqInsertCount mod (2 * MaxEntries)) + 1".
pub(crate) const fn encode_ric(ric: u64, max_entries: u64) -> u64 {
    if ric == 0 { 0 } else { ric % (2 * max_entries) + 1 }
}

/// The inverse, given the decoder's Insert Count (§4.5.1.1's algorithm).
///
/// # Errors
/// [`Cause::RequiredInsertCount`] for an encoded value no Required Insert Count produces.
pub(crate) fn decode_ric(encoded: u64, max_entries: u64, total_inserts: u64) -> Result<u64, Cause> {
    if encoded == 0 {
        return Ok(0);
    }
    let full_range = 2 * max_entries;
    // "if EncodedInsertCount > FullRange: Error" (and no table at all: any nonzero value).
    if encoded > full_range {
        return Err(Cause::RequiredInsertCount);
    }
    let max_value = total_inserts + max_entries;
    let max_wrapped = max_value / full_range * full_range;
    let mut ric = max_wrapped + encoded - 1;
    // "If ReqInsertCount exceeds MaxValue, the Encoder's value must have wrapped one fewer time"
    if ric > max_value {
        if ric <= full_range {
            return Err(Cause::RequiredInsertCount);
        }
        ric -= full_range;
    }
    // "Note that ... a Required Insert Count of 0 is encoded as 0": any other value decoding
    // to 0 is an error.
    if ric == 0 {
        return Err(Cause::RequiredInsertCount);
    }
    Ok(ric)
}

/// A decoded prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Prefix {
    /// Required Insert Count.
    pub ric: u64,
    /// Base.
    pub base: u64,
}

fn int(block: &[u8], p: &mut usize, n: u32) -> Result<u64, Cause> {
    integer::decode(block, p, n).map_err(|e| match e {
        IntError::Truncated => Cause::Truncated,
        IntError::Overflow => Cause::IntegerOverflow,
    })
}

/// Reads the prefix at the start of `block`, advancing `*p` past it.
///
/// # Errors
/// [`Cause::Truncated`], [`Cause::IntegerOverflow`], [`Cause::RequiredInsertCount`], and
/// [`Cause::Base`]: §4.5.1.2 "If S is 1, Base = ReqInsertCount - DeltaBase - 1", which
/// cannot go below zero: "the value of Base MUST NOT be negative ... treat as a connection
/// error of type QPACK_DECOMPRESSION_FAILED".
pub(crate) fn parse(
    block: &[u8],
    p: &mut usize,
    max_entries: u64,
    total_inserts: u64,
) -> Result<Prefix, Cause> {
    let encoded = int(block, p, 8)?;
    let ric = decode_ric(encoded, max_entries, total_inserts)?;
    let Some(&b) = block.get(*p) else { return Err(Cause::Truncated) };
    let delta = int(block, p, 7)?;
    let base = if b & 0x80 == 0 {
        ric.checked_add(delta).ok_or(Cause::Base)?
    } else {
        ric.checked_sub(delta + 1).ok_or(Cause::Base)?
    };
    Ok(Prefix { ric, base })
}

/// Appends the prefix for a section with Required Insert Count `ric` and Base `base`.
pub(crate) fn write(dst: &mut Vec<u8>, ric: u64, base: u64, max_entries: u64) {
    integer::encode(dst, 0, 8, encode_ric(ric, max_entries));
    if ric == 0 {
        dst.push(0);
    } else if base >= ric {
        integer::encode(dst, 0x00, 7, base - ric);
    } else {
        integer::encode(dst, 0x80, 7, ric - base - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appendix_b_prefixes() {
        // Capacity 220: MaxEntries 6, FullRange 12.
        let cases: [(&[u8], u64, Prefix); 3] = [
            (b"\x00\x00", 0, Prefix { ric: 0, base: 0 }),
            // B.2: Required Insert Count = 2, Base = 0 (S=1, Delta Base 1).
            (b"\x03\x81", 2, Prefix { ric: 2, base: 0 }),
            // B.4: Required Insert Count = 4, Base = 4.
            (b"\x05\x00", 4, Prefix { ric: 4, base: 4 }),
        ];
        for (bytes, inserts, expect) in cases {
            let mut p = 0;
            assert_eq!(parse(bytes, &mut p, 6, inserts), Ok(expect));
            assert_eq!(p, 2);
            let mut out = Vec::new();
            write(&mut out, expect.ric, expect.base, 6);
            assert_eq!(out, bytes);
        }
    }

    /// §4.5.1.1's wrap-around: every Required Insert Count the decoder can be asked for, at
    /// every Insert Count it can have, round-trips; the encoder's view may lead by at most
    /// MaxEntries (it never references more than the table holds beyond what was received).
    #[test]
    fn required_insert_count_wraps_around() {
        for max_entries in [1u64, 2, 3, 6, 128] {
            for inserts in 0..(10 * max_entries + 20) {
                // The range §4.5.1.1 decodes: (inserts - MaxEntries, inserts + MaxEntries]; an
                // older reference names an entry the decoder must have evicted.
                let lo = (inserts + 1).saturating_sub(max_entries).max(1);
                for ric in lo..=inserts + max_entries {
                    let enc = encode_ric(ric, max_entries);
                    assert!(enc >= 1 && enc <= 2 * max_entries);
                    assert_eq!(
                        decode_ric(enc, max_entries, inserts),
                        Ok(ric),
                        "{ric} at {inserts}/{max_entries}"
                    );
                }
            }
        }
    }

    #[test]
    fn invalid_prefixes() {
        struct Case {
            bytes: &'static [u8],
            max_entries: u64,
            inserts: u64,
            expect: Cause,
        }
        let cases = [
            // No dynamic table: any nonzero Required Insert Count.
            Case {
                bytes: b"\x01\x00",
                max_entries: 0,
                inserts: 0,
                expect: Cause::RequiredInsertCount,
            },
            // Above FullRange (12).
            Case {
                bytes: b"\x0d\x00",
                max_entries: 6,
                inserts: 0,
                expect: Cause::RequiredInsertCount,
            },
            // Decodes past MaxValue with nothing to unwrap: at 0 inserts, encoded 8 is 7 > 6.
            Case {
                bytes: b"\x08\x00",
                max_entries: 6,
                inserts: 0,
                expect: Cause::RequiredInsertCount,
            },
            // Base below zero.
            Case { bytes: b"\x02\x81", max_entries: 6, inserts: 1, expect: Cause::Base },
            Case { bytes: b"\x02", max_entries: 6, inserts: 1, expect: Cause::Truncated },
            Case { bytes: b"", max_entries: 6, inserts: 1, expect: Cause::Truncated },
        ];
        for c in cases {
            let mut p = 0;
            assert_eq!(
                parse(c.bytes, &mut p, c.max_entries, c.inserts),
                Err(c.expect),
                "{:02x?}",
                c.bytes
            );
        }
    }
}
