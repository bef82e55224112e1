//! The header section, shared by the request and the response parsers: `*( field-line CRLF )
//! CRLF` (RFC 9112 §2.1, §5), each line settled by the scanning kernel, and the known fields
//! identified in the same pass.

use super::Stop;
use crate::http1::head::storage::HeaderStorage;
use crate::http1::simd::{self, Kernel};
use crate::http1::{Header, HeaderId, KNOWN_HEADERS, KnownHeaders, ParseError};

/// The header section: `*( field-line CRLF ) CRLF` (RFC 9112 §2.1, §5), its fields pushed to
/// `storage` (already limited to `max_headers`). Returns the head length and the identified
/// fields.
#[inline(always)]
pub(super) fn fields<'b, K: Kernel>(
    k: K,
    buf: &'b [u8],
    mut pos: usize,
    storage: &mut HeaderStorage<'b, '_>,
) -> Result<(usize, KnownHeaders), Stop> {
    let mut known = KnownHeaders::EMPTY;
    loop {
        let n = storage.len();
        // field-line = field-name ":" OWS field-value OWS (RFC 9112 §5)
        // The usual line is settled by the kernel in one step; anything else (the empty line
        // ending the head, an error, an incomplete line) gets its verdict out of line.
        let (name, line, raw_value, next) = match simd::field_line(k, buf, pos) {
            Some(line) => line,
            // The empty line that ends the head.
            None if buf.get(pos..pos.wrapping_add(2)) == Some(&b"\r\n"[..]) => {
                return Ok((pos + 2, known));
            }
            None => match unusual_line(k, buf, pos, n) {
                Ok(Some((name, value, next))) => {
                    (name, buf.get(pos..).unwrap_or_default(), value, next)
                }
                Ok(None) => return Ok((pos + 2, known)),
                Err(stop) => return Err(stop),
            },
        };
        // RFC 9112 §5.1: OWS around the value is not part of it.
        // The bytes between the colon and CR are proven value bytes, so slice patterns trim
        // them without an index check per byte.
        // Most values have exactly one SP before them and no OWS after: one test each, and
        // the loops only when there is more.
        let mut value = raw_value;
        if let [b' ', rest @ ..] = value {
            value = rest;
        }
        // Among value bytes only SP and HTAB are <= SP.
        if value.first().is_some_and(|&b| b <= b' ') || value.last().is_some_and(|&b| b <= b' ') {
            while let [b' ' | b'\t', rest @ ..] = value {
                value = rest;
            }
            while let [rest @ .., b' ' | b'\t'] = value {
                value = rest;
            }
        }
        let id = identify(line, name.len());
        // RFC 6585 §5 (431): too many fields.
        if !storage.push(Header { name, value, id }) {
            return Err(Stop::Fail(ParseError::TooManyHeaders));
        }
        // Taken together with identification's own branches (most names leave it early as
        // `Other`), so unknown names skip the bookkeeping.
        if id != HeaderId::Other {
            k.record_known(&mut known, id, n);
        }
        pos = next;
    }
}

/// A usual field line: its name, its value with OWS not yet trimmed, and where the next line
/// starts.
type UsualLine<'b> = (&'b str, &'b [u8], usize);

/// The line at `pos` when [`Kernel::field_line`] did not settle it: `Ok(None)` for the empty
/// line ending the head, `Ok(Some(line))` for a usual field line, else why it stops.
#[inline(never)]
fn unusual_line<K: Kernel>(
    k: K,
    buf: &[u8],
    pos: usize,
    n: usize,
) -> Result<Option<UsualLine<'_>>, Stop> {
    match buf.get(pos) {
        None => return Err(Stop::Partial),
        // The empty line that ends the head.
        Some(b'\r') => {
            return match buf.get(pos + 1) {
                None => Err(Stop::Partial),
                Some(b'\n') => Ok(None),
                Some(_) => Err(Stop::Fail(ParseError::BareCr)),
            };
        }
        Some(b'\n') => return Err(Stop::Fail(ParseError::BareLf)),
        // RFC 9112 §5.2: obs-fold (a line starting with SP or HTAB continuing the previous
        // field) is refused. Before the first field it is whitespace after the start-line,
        // which §2.2 also says to reject.
        Some(b' ' | b'\t') if n == 0 => return Err(Stop::Fail(ParseError::InvalidHeaderName)),
        Some(b' ' | b'\t') => return Err(Stop::Fail(ParseError::ObsFold)),
        Some(_) => {}
    }
    let (name, colon, end) = simd::header_line(k, buf, pos);
    let usual = colon > pos
        && buf.get(colon) == Some(&b':')
        && buf.get(end..end.wrapping_add(2)) == Some(&b"\r\n"[..]);
    if usual {
        Ok(Some((name, buf.get(colon + 1..end).unwrap_or_default(), end + 2)))
    } else {
        Err(field_line_error(buf, pos, colon, end))
    }
}

/// Why the field line at `pos` is not a usual one (see [`fields`]), from the kernel's `colon`
/// (the first non-`tchar`) and `end` (the first non-value byte after it).
#[cold]
#[inline(never)]
fn field_line_error(buf: &[u8], pos: usize, colon: usize, end: usize) -> Stop {
    match buf.get(colon) {
        None => return Stop::Partial,
        Some(b':') if colon > pos => {}
        // RFC 9112 §5.1: "No whitespace is allowed between the field name and colon ...
        // a server MUST reject ... with a response status code of 400".
        Some(b' ' | b'\t') if colon > pos => {
            return Stop::Fail(ParseError::WhitespaceBeforeColon);
        }
        // An empty name, a non-token byte in the name, or a line without a colon
        // (RFC 9110 §5.1: field-name = token).
        Some(_) => return Stop::Fail(ParseError::InvalidHeaderName),
    }
    match buf.get(end) {
        None => Stop::Partial,
        Some(b'\r') => match buf.get(end + 1) {
            None => Stop::Partial,
            // (Not reached: CR LF makes the line usual.)
            Some(b'\n') => Stop::Fail(ParseError::InvalidHeaderValue),
            // RFC 9112 §2.2: a CR not followed by LF is invalid.
            Some(_) => Stop::Fail(ParseError::BareCr),
        },
        Some(b'\n') => Stop::Fail(ParseError::BareLf),
        // RFC 9110 §5.5: NUL, DEL and CTLs other than HTAB never appear in a value.
        Some(_) => Stop::Fail(ParseError::InvalidHeaderValue),
    }
}

/// Identifies the headers the server needs by a perfect hash on (length, one byte) and one
/// case-insensitive compare (RFC 9110 §5.1: field names are case-insensitive).
///
/// `line` starts with the name (a validated token of `len` bytes) and may run on past it: the
/// compare then loads whole 8-byte words without a variable-length copy.
#[inline(always)]
pub(crate) fn identify(line: &[u8], len: usize) -> HeaderId {
    let Some(name) = line.get(..len) else {
        return HeaderId::Other;
    };
    let first = name.first().map_or(0, |b| b | 0x20);
    // Most names are not known ones; (first letter, length) pairs rule most of them out with
    // one table lookup before the switch.
    if len >= 32 || (MAY_BE_KNOWN[usize::from(first & 31)] >> len) & 1 == 0 {
        return HeaderId::Other;
    }
    match len {
        2 => is(line, b"te", HeaderId::Te),
        4 => is(line, b"host", HeaderId::Host),
        5 => is(line, b"range", HeaderId::Range),
        6 => is(line, b"expect", HeaderId::Expect),
        7 if first == b'u' => is(line, b"upgrade", HeaderId::Upgrade),
        7 => is(line, b"trailer", HeaderId::Trailer),
        8 if name.get(3).map_or(0, |b| b | 0x20) == b'm' => {
            is(line, b"if-match", HeaderId::IfMatch)
        }
        8 => is(line, b"if-range", HeaderId::IfRange),
        10 => is(line, b"connection", HeaderId::Connection),
        13 => is(line, b"if-none-match", HeaderId::IfNoneMatch),
        14 => is(line, b"content-length", HeaderId::ContentLength),
        15 => is(line, b"accept-encoding", HeaderId::AcceptEncoding),
        17 if first == b't' => is(line, b"transfer-encoding", HeaderId::TransferEncoding),
        17 => is(line, b"if-modified-since", HeaderId::IfModifiedSince),
        19 => is(line, b"if-unmodified-since", HeaderId::IfUnmodifiedSince),
        _ => HeaderId::Other,
    }
}

/// The known field names (the arms of [`identify`]).
pub(super) const KNOWN_NAMES: [&[u8]; KNOWN_HEADERS] = [
    b"te",
    b"host",
    b"range",
    b"expect",
    b"upgrade",
    b"trailer",
    b"if-match",
    b"if-range",
    b"connection",
    b"if-none-match",
    b"content-length",
    b"accept-encoding",
    b"transfer-encoding",
    b"if-modified-since",
    b"if-unmodified-since",
];

/// Bit `len` of entry `first & 31` is set when a known name of `len` bytes starts with the
/// (lowercased) byte `first`. A filter: other bytes share entries, which only lets more names
/// through to the exact compare.
static MAY_BE_KNOWN: [u32; 32] = {
    let mut t = [0u32; 32];
    let mut k = 0;
    while k < KNOWN_NAMES.len() {
        let name = KNOWN_NAMES[k];
        assert!(name.len() < 32);
        t[(name[0] & 31) as usize] |= 1 << name.len();
        k += 1;
    }
    t
};

/// `id` if the first `lower.len()` bytes of `line` equal `lower` ignoring ASCII case.
///
/// Those bytes are a token: OR-ing 0x20 lowercases letters and leaves every other `tchar` that
/// can match `lower` (digits, `-`) unchanged; the only other byte it could map onto `-` is CR,
/// which no token holds.
#[inline(always)]
fn is(line: &[u8], lower: &'static [u8], id: HeaderId) -> HeaderId {
    const CASE: u64 = 0x2020_2020_2020_2020;
    #[inline(always)]
    fn load(b: &[u8], at: usize) -> u64 {
        match b.get(at..at + 8) {
            Some(w) => {
                let mut a = [0u8; 8];
                a.copy_from_slice(w);
                u64::from_le_bytes(a)
            }
            None => 0,
        }
    }
    /// The constant word of `lower` at `at`, zero-padded.
    #[inline(always)]
    fn word(lower: &[u8], at: usize) -> u64 {
        let mut w = 0u64;
        let mut i = 0;
        while i < 8 && at + i < lower.len() {
            w |= u64::from(lower[at + i]) << (8 * i);
            i += 1;
        }
        w
    }
    let n = lower.len();
    let equal = if n < 8 {
        if line.len() >= 8 {
            let keep = (1u64 << (8 * n)) - 1;
            (load(line, 0) | CASE) & keep == word(lower, 0)
        } else {
            line.iter().zip(lower).all(|(&a, &b)| a | 0x20 == b) && line.len() >= n
        }
    } else {
        // Eight bytes at a time; the last word overlaps the one before it.
        let mut i = 0;
        let mut eq = true;
        while i + 8 < n {
            eq &= load(line, i) | CASE == word(lower, i);
            i += 8;
        }
        eq && load(line, n - 8) | CASE == word(lower, n - 8)
    };
    if equal { id } else { HeaderId::Other }
}
