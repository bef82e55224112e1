//! Request head parser (RFC 9112 §2–§5): one validating pass over the bytes, no copies, no
//! allocation. `docs/STRICTNESS.md` lists every refusal with its error, status and RFC section.
//! The response head parser ([`response`]) shares its header section ([`fields`]), the empty
//! lines before the start-line and the version.
//!
//! The parse is monomorphised per scanning kernel ([`simd::dispatch`]), so the request line and
//! the header loop are compiled with the kernel's target features and the kernel inlines into
//! them.

use super::head::storage::HeaderStorage;
use super::simd::{self, Job, Kernel};
use super::{Header, KnownHeaders, Limits, ParseError, RequestHead, Status, TargetForm, Version};
use crate::Method;
use fields::fields;
use std::mem::MaybeUninit;

mod fields;
mod response;

pub use response::{parse_response, parse_response_uninit};

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
    simd::dispatch(ParseJob { buf, storage: HeaderStorage::init(headers), limits })
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
    simd::dispatch(ParseJob { buf, storage: HeaderStorage::uninit(headers), limits })
}

struct ParseJob<'b, 'h, 'l> {
    buf: &'b [u8],
    storage: HeaderStorage<'b, 'h>,
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
        head(k, buf, self.storage.limit(limits.max_headers), limits, over)
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
    mut storage: HeaderStorage<'b, 'h>,
    limits: &Limits,
    over: bool,
) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
    match parts(k, buf, &mut storage, limits) {
        Ok((line, (len, known))) => {
            // One aggregate built from values in registers, written straight into the caller's
            // return place. Building the head in memory during the parse and moving it out cost
            // store-forwarding stalls (see `KnownHeaders`).
            Ok(Status::Complete(RequestHead {
                method: line.method,
                method_token: line.method_token,
                target: line.target,
                form: line.form,
                version: line.version,
                headers: storage.into_filled(),
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
    storage: &mut HeaderStorage<'b, '_>,
    limits: &Limits,
) -> Result<(Line<'b>, (usize, KnownHeaders)), Stop> {
    let pos = skip_empty_lines(buf)?;
    let (line, end) = request_line(k, buf, pos, limits)?;
    Ok((line, fields(k, buf, end, storage)?))
}

/// Where the start-line begins: after the empty lines that may precede it.
#[inline(always)]
fn skip_empty_lines(buf: &[u8]) -> Result<usize, Stop> {
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
            Some(_) => return Ok(pos),
        }
    }
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
pub(in crate::http1) fn target_form(method: Method, t: &[u8]) -> Result<TargetForm, ParseError> {
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

#[cfg(test)]
mod tests;
