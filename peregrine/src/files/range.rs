//! `Range: bytes=…` evaluation against a representation length (RFC 9110 §14).

use crate::http1::field_syntax::trim_ows;

/// What to send for a Range request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RangeOutcome {
    /// Ignore the Range field and send the whole representation with 200.
    Full,
    /// Send bytes `start..=end` with 206 and `Content-Range: bytes start-end/len`.
    Partial {
        /// First byte offset.
        start: u64,
        /// Last byte offset, inclusive.
        end: u64,
    },
    /// Answer 416 with `Content-Range: bytes */len` (RFC 9110 §15.5.17).
    Unsatisfiable,
}

/// Evaluates a `Range` field value for a representation of `len` bytes.
///
/// Decisions, each allowed by RFC 9110 §14.2 ("A server MAY ignore the Range header field"):
/// - A unit other than `bytes` (compared case-insensitively, §14.1), or a syntactically
///   invalid range set, is ignored: the whole representation is sent.
/// - More than one range is answered with the whole representation (200) rather than
///   `multipart/byteranges`: simpler, and it defeats the many-small-ranges amplification the
///   RFC warns about (§14.2, §17.15).
/// - On an empty representation, a suffix range (the only satisfiable form there) is answered
///   with the empty whole: there is no byte to name in `Content-Range`.
/// - Numbers too large for `u64` saturate, which gives the right answer: a huge first-pos is
///   unsatisfiable, a huge last-pos or suffix-length covers the rest.
pub(crate) fn evaluate(field: &[u8], len: u64) -> RangeOutcome {
    let Some(eq) = field.iter().position(|&b| b == b'=') else {
        return RangeOutcome::Full;
    };
    let (unit, set) = (&field[..eq], &field[eq + 1..]);
    if !unit.eq_ignore_ascii_case(b"bytes") {
        return RangeOutcome::Full;
    }
    // range-set = 1#range-spec; empty list elements are allowed by the list syntax (§5.6.1.2).
    let mut specs = set.split(|&b| b == b',').map(trim_ows).filter(|s| !s.is_empty());
    let Some(spec) = specs.next() else {
        return RangeOutcome::Full;
    };
    let Some(spec) = parse_spec(spec) else {
        return RangeOutcome::Full;
    };
    if specs.next().is_some() {
        return RangeOutcome::Full;
    }
    match spec {
        // §14.1.2 int-range: satisfiable when first-pos < length; last-pos clamps to length-1.
        Spec::Int { first, last } => {
            if first >= len {
                RangeOutcome::Unsatisfiable
            } else {
                RangeOutcome::Partial {
                    start: first,
                    end: last.map_or(len - 1, |l| l.min(len - 1)),
                }
            }
        }
        // §14.1.2 suffix-range: the last n bytes; n = 0 is unsatisfiable; n > length is all.
        Spec::Suffix(0) => RangeOutcome::Unsatisfiable,
        // §14.1.1: on an empty representation a non-zero suffix is satisfiable, yet there is
        // no byte to name in Content-Range, so the (empty) whole is sent.
        Spec::Suffix(_) if len == 0 => RangeOutcome::Full,
        Spec::Suffix(n) => RangeOutcome::Partial { start: len.saturating_sub(n), end: len - 1 },
    }
}

enum Spec {
    Int { first: u64, last: Option<u64> },
    Suffix(u64),
}

/// `int-range = first-pos "-" [ last-pos ]` / `suffix-range = "-" suffix-length` (§14.1.1).
fn parse_spec(s: &[u8]) -> Option<Spec> {
    let dash = s.iter().position(|&b| b == b'-')?;
    let (a, b) = (&s[..dash], &s[dash + 1..]);
    if a.is_empty() {
        return Some(Spec::Suffix(digits(b)?));
    }
    let first = digits(a)?;
    if b.is_empty() {
        return Some(Spec::Int { first, last: None });
    }
    let last = digits(b)?;
    // §14.1.1: an int-range with last-pos < first-pos is invalid.
    if last < first {
        return None;
    }
    Some(Spec::Int { first, last: Some(last) })
}

/// `1*DIGIT`, saturating at `u64::MAX`.
fn digits(s: &[u8]) -> Option<u64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0u64, |n, &d| n.saturating_mul(10).saturating_add(u64::from(d - b'0'))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use RangeOutcome::*;

    #[test]
    fn byte_ranges_rfc9110_14_1_2() {
        struct Case {
            input: &'static [u8],
            len: u64,
            expect: RangeOutcome,
        }
        let cases = [
            Case { input: b"bytes=0-499", len: 1000, expect: Partial { start: 0, end: 499 } },
            Case { input: b"bytes=500-999", len: 1000, expect: Partial { start: 500, end: 999 } },
            Case { input: b"bytes=500-", len: 1000, expect: Partial { start: 500, end: 999 } },
            Case { input: b"bytes=-500", len: 1000, expect: Partial { start: 500, end: 999 } },
            Case { input: b"bytes=0-0", len: 1000, expect: Partial { start: 0, end: 0 } },
            Case { input: b"bytes=-1", len: 1000, expect: Partial { start: 999, end: 999 } },
            // last-pos past the end clamps; a suffix longer than the file is the whole file.
            Case { input: b"bytes=0-5000", len: 1000, expect: Partial { start: 0, end: 999 } },
            Case { input: b"bytes=-5000", len: 1000, expect: Partial { start: 0, end: 999 } },
            Case {
                input: b"bytes=0-99999999999999999999999",
                len: 10,
                expect: Partial { start: 0, end: 9 },
            },
            // §14.1.1: units are case-insensitive; list elements may carry OWS.
            Case { input: b"BYTES=1-2", len: 10, expect: Partial { start: 1, end: 2 } },
            Case { input: b"bytes= 1-2 ,", len: 10, expect: Partial { start: 1, end: 2 } },
            // Unsatisfiable (§14.1.1, §15.5.17).
            Case { input: b"bytes=1000-", len: 1000, expect: Unsatisfiable },
            Case { input: b"bytes=1000-2000", len: 1000, expect: Unsatisfiable },
            Case { input: b"bytes=-0", len: 1000, expect: Unsatisfiable },
            Case { input: b"bytes=99999999999999999999999-", len: 1000, expect: Unsatisfiable },
            // Invalid or unsupported: ignored (§14.2).
            Case { input: b"bytes=500-499", len: 1000, expect: Full },
            Case { input: b"bytes=abc", len: 1000, expect: Full },
            Case { input: b"bytes=1-2-3", len: 1000, expect: Full },
            Case { input: b"bytes=", len: 1000, expect: Full },
            Case { input: b"bytes=-", len: 1000, expect: Full },
            Case { input: b"bytes=+1-2", len: 1000, expect: Full },
            Case { input: b"items=0-1", len: 1000, expect: Full },
            Case { input: b"bytes 0-1", len: 1000, expect: Full },
            // Multiple ranges: the whole representation (documented choice, §14.2).
            Case { input: b"bytes=0-1,5-6", len: 1000, expect: Full },
            Case { input: b"bytes=2000-3000,4000-", len: 1000, expect: Full },
            // Empty representation: nothing to name in Content-Range.
            Case { input: b"bytes=-5", len: 0, expect: Full },
            Case { input: b"bytes=0-", len: 0, expect: Unsatisfiable },
        ];
        for c in cases {
            assert_eq!(
                evaluate(c.input, c.len),
                c.expect,
                "{:?}",
                String::from_utf8_lossy(c.input)
            );
        }
    }

    proptest::proptest! {
        /// No input panics, and a part always lies inside the representation (RFC 9110 §14.1.2).
        #[test]
        fn parts_lie_inside(field in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..32),
                            digits in "bytes=[0-9]{0,21}-[0-9]{0,21}", len in 0u64..5000) {
            for f in [field.as_slice(), digits.as_bytes()] {
                if let Partial { start, end } = evaluate(f, len) {
                    proptest::prop_assert!(start <= end && end < len);
                }
            }
        }
    }
}
