//! Byte classes of the field grammar shared by framing, chunked trailers and the encoder:
//! `token` (RFC 9110 §5.6.2) and field-value bytes (RFC 9110 §5.5).
//!
//! The grammar itself is [`grammar`]'s, which depends on nothing: the byte-class tables are
//! built from it at compile time (the parser's `CLASS` in `http1::simd`, HPACK's), and the
//! checks here read the parser's table at run time.

pub(super) mod grammar;

pub(crate) use grammar::{is_tchar_by_grammar, is_value_ctl};

use super::simd::{CLASS, TARGET, TOKEN};

/// Whether `b` may appear in a token.
#[inline(always)]
pub(crate) fn is_tchar(b: u8) -> bool {
    // The parser's byte-class table, built from `is_tchar_by_grammar`.
    CLASS[usize::from(b)] & TOKEN != 0
}

/// Whether `s` is a non-empty token (RFC 9110 §5.6.2).
#[inline]
pub(crate) fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| is_tchar(b))
}

/// Whether every byte of `s` may appear in a request-target (RFC 3986 §2, §3, no `#`: the
/// parser's byte-class table), so HTTP/2's `:path` obeys the same grammar as HTTP/1.1's target.
#[inline]
pub(crate) fn is_target(s: &[u8]) -> bool {
    s.iter().all(|&b| CLASS[usize::from(b)] & TARGET != 0)
}

/// Whether `v` holds a control byte (CR, LF, NUL, other CTLs or DEL).
///
/// Sixteen bytes at a time, each block folded without early exit so the compiler turns it into
/// vector compares, and the tail as one more block that overlaps the one before it; only a
/// value shorter than a block is a byte loop. (A fold over the whole slice stayed a byte loop,
/// ~2 instructions per byte: 1,520 → 1,223 instructions per head on the `encode-request` bench,
/// 4 fields of 16-40 bytes.)
#[inline]
pub(crate) fn has_value_ctl(v: &[u8]) -> bool {
    let any = |block: &[u8]| block.iter().fold(false, |bad, &b| bad | is_value_ctl(b));
    let Some(tail) = v.len().checked_sub(16) else {
        return any(v);
    };
    let mut blocks = v.chunks_exact(16);
    for block in &mut blocks {
        if any(block) {
            return true;
        }
    }
    !blocks.remainder().is_empty() && v.get(tail..).is_some_and(any)
}

/// `OWS = *( SP / HTAB )` (RFC 9110 §5.6.3).
#[inline(always)]
pub(crate) fn is_ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// `s` without leading and trailing OWS.
#[inline]
pub(crate) fn trim_ows(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| !is_ows(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|&b| !is_ows(b)).map_or(start, |i| i + 1);
    &s[start..end]
}

/// The elements of a comma-separated list across every field line given (RFC 9110 §5.6.1),
/// trimmed of OWS. Empty elements are yielded too (as empty slices); callers decide.
pub(crate) fn list_elements<'a, I>(lines: I) -> impl Iterator<Item = &'a [u8]>
where
    I: Iterator<Item = &'a [u8]>,
{
    lines.flat_map(|line| line.split(|&b| b == b',')).map(trim_ows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tchar_table_matches_rfc9110_5_6_2() {
        let specials = b"!#$%&'*+-.^_`|~";
        for b in 0..=255u8 {
            let expect = b.is_ascii_alphanumeric() || specials.contains(&b);
            assert_eq!(is_tchar(b), expect, "{b:#x}");
        }
    }

    #[test]
    fn value_ctl_matches_rfc9110_5_5() {
        for b in 0..=255u8 {
            let ok = b == b'\t' || b == b' ' || b.is_ascii_graphic() || b >= 0x80;
            assert_eq!(is_value_ctl(b), !ok, "{b:#x}");
            assert_eq!(has_value_ctl(&[b'a', b, b'z']), !ok);
            // In every position of a block, of the overlapping tail block, and of a short value.
            for len in [1, 15, 16, 17, 31, 33, 40] {
                for at in 0..len {
                    let mut v = vec![b'a'; len];
                    v[at] = b;
                    assert_eq!(has_value_ctl(&v), !ok, "{b:#x} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn list_splitting_rfc9110_5_6_1() {
        let lines: [&[u8]; 2] = [b" a ,\tb,,", b"c"];
        let got: Vec<&[u8]> = list_elements(lines.into_iter()).collect();
        assert_eq!(got, [&b"a"[..], b"b", b"", b"", b"c"]);
        assert_eq!(trim_ows(b" \t "), b"");
    }
}
