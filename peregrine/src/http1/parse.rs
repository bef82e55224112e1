//! Request head parser (RFC 9112 §2–§5): one validating pass over the bytes, no copies, no
//! allocation. `docs/STRICTNESS.md` lists every refusal with its error, status and RFC section.
//!
//! The parse is monomorphised per scanning kernel ([`simd::dispatch`]), so the request line and
//! the header loop are compiled with the kernel's target features and the kernel inlines into
//! them.

use super::head::slots::Slots;
use super::simd::{self, Job, Kernel};
use super::{
    Header, HeaderId, KNOWN_HEADERS, KnownHeaders, Limits, ParseError, RequestHead, Status,
    TargetForm, Version,
};
use crate::Method;
use std::mem::MaybeUninit;

/// Parses a request head from the start of `buf`.
///
/// Returns `Complete(head)` with `head.len` bytes consumed, `Partial` when `buf` holds no whole
/// head yet (and is within the limits), or the precise error. Header fields are written into
/// `headers`; at most `min(headers.len(), limits.max_headers)` are accepted.
///
/// Errors are reported as soon as the bytes present prove them, even before the head is
/// complete. Calling this again on every read of a slowly arriving head repeats the work; a
/// server keeps a [`HeadScanner`](super::HeadScanner) per connection to make that linear.
///
/// # Examples
/// ```
/// use peregrine::Method;
/// use peregrine::http1::{parse_request, HeaderId, Limits, Status, Version, EMPTY_HEADER};
///
/// let mut headers = [EMPTY_HEADER; 8];
/// let buf = b"POST /submit HTTP/1.1\r\nHost: a.example\r\nContent-Length: 2\r\n\r\nhi";
/// let Status::Complete(head) = parse_request(buf, &mut headers, &Limits::default())? else {
///     unreachable!("the head is complete");
/// };
/// assert_eq!(head.method, Method::Post);
/// assert_eq!(head.version, Version::Http11);
/// assert_eq!(head.known(HeaderId::ContentLength).map(|h| h.value), Some(&b"2"[..]));
/// assert_eq!(&buf[head.len..], b"hi");
///
/// let partial = parse_request(b"GET / HTTP/1.1\r\nHo", &mut headers, &Limits::default())?;
/// assert!(partial.is_partial());
/// # Ok::<(), peregrine::http1::ParseError>(())
/// ```
///
/// # Errors
/// Every [`ParseError`] the head rules can produce; see `docs/STRICTNESS.md`.
pub fn parse_request<'b, 'h>(
    buf: &'b [u8],
    headers: &'h mut [Header<'b>],
    limits: &Limits,
) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
    simd::dispatch(ParseJob { buf, slots: Slots::init(headers), limits })
}

/// [`parse_request`] into uninitialised header storage: the same parse, without first
/// filling the array with placeholders (a fresh `[EMPTY_HEADER; 32]` is 1.25 KiB of stores
/// per request). The parsed head's `headers` are the written prefix of `headers`.
///
/// # Examples
/// ```
/// use std::mem::MaybeUninit;
/// use peregrine::http1::{parse_request_uninit, HeaderId, Limits, Status};
///
/// let mut headers = [const { MaybeUninit::uninit() }; 16];
/// let buf = b"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n";
/// let Status::Complete(head) = parse_request_uninit(buf, &mut headers, &Limits::default())?
/// else {
///     unreachable!("the head is complete");
/// };
/// assert_eq!(head.headers.len(), 1);
/// assert_eq!(head.known(HeaderId::Host).map(|h| h.value), Some(&b"a.example"[..]));
/// # Ok::<(), peregrine::http1::ParseError>(())
/// ```
///
/// # Errors
/// As [`parse_request`].
pub fn parse_request_uninit<'b, 'h>(
    buf: &'b [u8],
    headers: &'h mut [MaybeUninit<Header<'b>>],
    limits: &Limits,
) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
    simd::dispatch(ParseJob { buf, slots: Slots::uninit(headers), limits })
}

struct ParseJob<'b, 'h, 'l> {
    buf: &'b [u8],
    slots: Slots<'b, 'h>,
    limits: &'l Limits,
}

impl<'b, 'h> Job for ParseJob<'b, 'h, '_> {
    type Out = Result<Status<RequestHead<'b, 'h>>, ParseError>;

    #[inline(always)]
    fn run<K: Kernel>(self, k: K) -> Self::Out {
        let limits = self.limits;
        // RFC 6585 §5 (431): only the first `max_head_bytes` may hold the head. Parsing the
        // truncated view keeps errors inside it precise; running out of it means too large.
        let over = self.buf.len() > limits.max_head_bytes;
        let buf = if over { &self.buf[..limits.max_head_bytes] } else { self.buf };
        head(k, buf, self.slots.limit(limits.max_headers), limits, over)
    }
}

/// Why an inner step stopped. Kept apart from the public result so the steps pass only
/// scalars around and the head is built once, in place (moving a half-built `RequestHead`
/// through nested `Result`s cost store-forwarding stalls, measured ~20 ns per request).
#[derive(Clone, Copy)]
enum Stop {
    /// The input ends before the head does.
    Partial,
    /// The head is invalid.
    Fail(ParseError),
}

#[inline(always)]
fn head<'b, 'h, K: Kernel>(
    k: K,
    buf: &'b [u8],
    mut slots: Slots<'b, 'h>,
    limits: &Limits,
    over: bool,
) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
    match parts(k, buf, &mut slots, limits) {
        Ok((line, (len, known))) => {
            // One aggregate built from values in registers, written straight into the caller's
            // return slot. Building the head in memory during the parse and moving it out cost
            // store-forwarding stalls (see `KnownHeaders`).
            Ok(Status::Complete(RequestHead {
                method: line.method,
                method_token: line.method_token,
                target: line.target,
                form: line.form,
                version: line.version,
                headers: slots.into_filled(),
                known,
                len,
            }))
        }
        // RFC 6585 §5 (431): the head does not end within `max_head_bytes`.
        Err(Stop::Partial) if over => Err(ParseError::HeadTooLarge),
        Err(Stop::Partial) => Ok(Status::Partial),
        Err(Stop::Fail(e)) => Err(e),
    }
}

/// The request line's parts (RFC 9112 §3).
#[derive(Clone, Copy)]
struct Line<'b> {
    method: Method,
    method_token: &'b str,
    target: &'b str,
    form: TargetForm,
    version: Version,
}

/// Parses the whole head: the request line, and the number of fields, the head's length and
/// the identified fields.
#[inline(always)]
fn parts<'b, K: Kernel>(
    k: K,
    buf: &'b [u8],
    slots: &mut Slots<'b, '_>,
    limits: &Limits,
) -> Result<(Line<'b>, (usize, KnownHeaders)), Stop> {
    // RFC 9112 §2.2: "a server that is expecting to receive and parse a request-line SHOULD
    // ignore at least one empty line (CRLF) received prior to the request-line." We ignore
    // CRLF pairs (they count towards the head size); a bare LF or CR is still refused.
    let mut pos = 0;
    loop {
        match buf.get(pos) {
            None => return Err(Stop::Partial),
            Some(b'\r') => match buf.get(pos + 1) {
                None => return Err(Stop::Partial),
                Some(b'\n') => pos += 2,
                Some(_) => return Err(Stop::Fail(ParseError::BareCr)),
            },
            Some(b'\n') => return Err(Stop::Fail(ParseError::BareLf)),
            Some(_) => break,
        }
    }
    let (line, end) = request_line(k, buf, pos, limits)?;
    Ok((line, fields(k, buf, end, slots)?))
}

/// `request-line = method SP request-target SP HTTP-version CRLF` (RFC 9112 §3).
#[inline(always)]
fn request_line<'b, K: Kernel>(
    k: K,
    buf: &'b [u8],
    start: usize,
    limits: &Limits,
) -> Result<(Line<'b>, usize), Stop> {
    // RFC 9110 §9.1: method = token, case-sensitive. The nine standard methods followed by SP
    // are one masked 8-byte compare each; anything else is scanned as a token.
    let (method, method_token, sp) = match Method::recognize_prefix(&buf[start..]) {
        Some((m, n)) => (m, m.as_str().unwrap_or_default(), start + n),
        None => {
            let (token, end) = simd::token(k, buf, start);
            match buf.get(end) {
                None => return Err(Stop::Partial),
                Some(b' ') if end > start => (Method::from_token(token.as_bytes()), token, end),
                // RFC 9112 §3: single SP separators; no HTAB, no missing parts.
                Some(b'\t' | b'\r' | b'\n') if end > start => {
                    return Err(Stop::Fail(ParseError::InvalidRequestLine));
                }
                Some(_) => return Err(Stop::Fail(ParseError::InvalidMethod)),
            }
        }
    };

    // RFC 9112 §3.2 + RFC 3986 §2: the target's bytes; RFC 9112 §3 / RFC 9110 §15.5.15: a
    // target longer than we accept is 414.
    let ts = sp + 1;
    let (target, te) = simd::target(k, buf, ts);
    if te - ts > limits.max_target_bytes {
        return Err(Stop::Fail(ParseError::TargetTooLong));
    }

    // The usual ending in one compare: SP "HTTP/1.1" CRLF after an origin-form target
    // (RFC 9112 §3.2.1: it starts with "/", so it is not empty; CONNECT needs authority-form).
    if buf.get(te..te + 11) == Some(&b" HTTP/1.1\r\n"[..])
        && method != Method::Connect
        && target.as_bytes().first() == Some(&b'/')
    {
        let form = TargetForm::Origin;
        return Ok((
            Line { method, method_token, target, form, version: Version::Http11 },
            te + 11,
        ));
    }
    match buf.get(te) {
        None => return Err(Stop::Partial),
        Some(b' ') if te > ts => {}
        // An empty target, a doubled SP, a missing version (HTTP/0.9 style) or HTAB.
        Some(b' ' | b'\t' | b'\r' | b'\n') => {
            return Err(Stop::Fail(ParseError::InvalidRequestLine));
        }
        Some(_) => return Err(Stop::Fail(ParseError::InvalidTarget)),
    }

    let vs = te + 1;
    let version = version(buf, vs)?;
    // RFC 9112 §2.2: lines end with CRLF; a bare CR is refused, and we refuse a bare LF too
    // (the RFC lets a recipient accept it; a strict server does not).
    let end = match buf.get(vs + 8) {
        None => return Err(Stop::Partial),
        Some(b'\r') => match buf.get(vs + 9) {
            None => return Err(Stop::Partial),
            Some(b'\n') => vs + 10,
            Some(_) => return Err(Stop::Fail(ParseError::BareCr)),
        },
        Some(b'\n') => return Err(Stop::Fail(ParseError::BareLf)),
        // "HTTP/1.10": more digits make a malformed version (RFC 9112 §2.3: one DIGIT each).
        Some(b'0'..=b'9') => return Err(Stop::Fail(ParseError::InvalidVersion)),
        Some(_) => return Err(Stop::Fail(ParseError::InvalidRequestLine)),
    };
    let form = target_form(method, target.as_bytes()).map_err(Stop::Fail)?;
    Ok((Line { method, method_token, target, form, version }, end))
}

const HTTP_11: u64 = u64::from_le_bytes(*b"HTTP/1.1");
const HTTP_10: u64 = u64::from_le_bytes(*b"HTTP/1.0");

/// `HTTP-version = HTTP-name "/" DIGIT "." DIGIT`, `HTTP-name = %s"HTTP"` (RFC 9112 §2.3).
#[inline(always)]
fn version(buf: &[u8], at: usize) -> Result<Version, Stop> {
    let Some(bytes) = buf.get(at..at + 8) else {
        // Fewer than eight bytes: refuse early only when they cannot start a version.
        let have = buf.get(at..).unwrap_or_default();
        return Err(if version_shape(have) {
            Stop::Partial
        } else {
            Stop::Fail(ParseError::InvalidVersion)
        });
    };
    let mut word = [0u8; 8];
    word.copy_from_slice(bytes);
    // One 8-byte compare per known version.
    match u64::from_le_bytes(word) {
        HTTP_11 => Ok(Version::Http11),
        HTTP_10 => Ok(Version::Http10),
        // RFC 9110 §15.6.6: a well-formed version we do not speak is 505.
        _ if version_shape(bytes) => Err(Stop::Fail(ParseError::UnsupportedVersion)),
        _ => Err(Stop::Fail(ParseError::InvalidVersion)),
    }
}

/// Whether `bytes` is a prefix of `"HTTP/" DIGIT "." DIGIT`.
fn version_shape(bytes: &[u8]) -> bool {
    bytes.iter().zip(b"HTTP/0.0").all(
        |(&b, &want)| {
            if want == b'0' { b.is_ascii_digit() } else { b == want }
        },
    )
}

/// Which of the four forms the target has, and whether the method allows it (RFC 9112 §3.2).
#[inline(always)]
fn target_form(method: Method, t: &[u8]) -> Result<TargetForm, ParseError> {
    // §3.2.3: "The authority-form is only used for CONNECT requests"; a CONNECT request
    // must use it.
    if method == Method::Connect {
        return if is_authority_form(t) {
            Ok(TargetForm::Authority)
        } else {
            Err(ParseError::InvalidTarget)
        };
    }
    match t {
        // §3.2.1: origin-form = absolute-path [ "?" query ].
        [b'/', ..] => Ok(TargetForm::Origin),
        // §3.2.4: asterisk-form = "*", only for a server-wide OPTIONS.
        [b'*'] if method == Method::Options => Ok(TargetForm::Asterisk),
        [b'*'] => Err(ParseError::InvalidTarget),
        // §3.2.2: absolute-form = absolute-URI.
        _ if is_absolute_form(t) => Ok(TargetForm::Absolute),
        _ => Err(ParseError::InvalidTarget),
    }
}

/// `scheme "://" authority ...` with a non-empty authority (RFC 3986 §3.1, §3.2; an "http"
/// URI with an empty host is invalid, RFC 9110 §4.2.1).
fn is_absolute_form(t: &[u8]) -> bool {
    // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
    let Some(first) = t.first() else { return false };
    if !first.is_ascii_alphabetic() {
        return false;
    }
    let scheme = t
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
        .unwrap_or(t.len());
    match t.get(scheme..scheme + 4) {
        Some([b':', b'/', b'/', host]) => !matches!(host, b'/' | b'?'),
        _ => false,
    }
}

/// `authority-form = uri-host ":" port` (RFC 9112 §3.2.3): no userinfo, no path, a port.
fn is_authority_form(t: &[u8]) -> bool {
    let Some(colon) = t.iter().rposition(|&b| b == b':') else {
        return false;
    };
    let (host, port) = (&t[..colon], &t[colon + 1..]);
    let host_ok = match host {
        [] => false,
        // IP-literal = "[" ... "]" (RFC 3986 §3.2.2)
        [b'[', .., b']'] => true,
        _ => !host.iter().any(|&b| matches!(b, b'/' | b'?' | b'@' | b'[' | b']' | b':')),
    };
    host_ok && !port.is_empty() && port.iter().all(u8::is_ascii_digit)
}

/// The header section: `*( field-line CRLF ) CRLF` (RFC 9112 §2.1, §5), its fields pushed to
/// `slots` (already limited to `max_headers`). Returns the head length and the identified
/// fields.
#[inline(always)]
fn fields<'b, K: Kernel>(
    k: K,
    buf: &'b [u8],
    mut pos: usize,
    slots: &mut Slots<'b, '_>,
) -> Result<(usize, KnownHeaders), Stop> {
    let mut known = KnownHeaders::EMPTY;
    loop {
        let n = slots.len();
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
        if !slots.push(Header { name, value, id }) {
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
const KNOWN_NAMES: [&[u8]; KNOWN_HEADERS] = [
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

#[cfg(test)]
mod tests;
