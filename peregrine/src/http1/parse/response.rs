//! Response head parser (RFC 9112 §4 status line; §2, §5 header section): the client's side of
//! the head parser. The status line is its own; the empty lines before it, the version and the
//! whole header section (the kernel's field-line scan, known-header identification, limits) are
//! the request parser's own code, so both roles refuse exactly the same field lines.
//! `docs/STRICTNESS.md` ("Response head") lists every refusal.
//!
//! Framing is not decided here: duplicate or invalid Content-Length, Transfer-Encoding with
//! Content-Length and the rest are [`response_framing`](crate::http1::framing::response_framing)'s
//! (one owner per fact), which the client calls on the parsed head with the request's method.

use super::fields::fields;
use super::{Stop, skip_empty_lines, version};
use crate::http1::head::storage::HeaderStorage;
use crate::http1::simd::{self, CLASS, Job, Kernel, VALUE};
use crate::http1::{Header, KnownHeaders, Limits, ParseError, ResponseHead, Status, Version};
use std::mem::MaybeUninit;

/// Parses a response head from the start of `buf`.
///
/// Returns `Complete(head)` with `head.len` bytes consumed, `Partial` when `buf` holds no whole
/// head yet (and is within `limits.max_head_bytes`), or the precise error, reported as soon as
/// the bytes present prove it. Header fields are written into `headers`; at most
/// `min(headers.len(), limits.max_headers)` are accepted (`limits.max_target_bytes` does not
/// apply to responses).
///
/// A 1xx head is complete like any other: the final response follows it on the connection, and
/// the caller parses again after `head.len` bytes. How long the body is, and whether the head's
/// Content-Length and Transfer-Encoding fields make sense, is
/// [`response_framing`](crate::http1::framing::response_framing)'s to decide. A client reading
/// a trickled head keeps a [`HeadScanner`](crate::http1::HeadScanner) to keep retries linear.
///
/// # Examples
/// ```
/// use peregrine::Method;
/// use peregrine::http1::framing::{response_framing, BodyLength};
/// use peregrine::http1::{parse_response, HeaderId, Limits, Status, Version, EMPTY_HEADER};
///
/// let mut headers = [EMPTY_HEADER; 8];
/// let buf = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
/// let Status::Complete(head) = parse_response(buf, &mut headers, &Limits::default())? else {
///     unreachable!("the head is complete");
/// };
/// assert_eq!((head.version, head.status, head.reason), (Version::Http11, 200, &b"OK"[..]));
/// assert_eq!(head.known(HeaderId::ContentLength).map(|h| h.value), Some(&b"5"[..]));
/// let framing = response_framing(Method::Get, head.status, head.version, head.headers)?;
/// assert_eq!(framing.body, BodyLength::Length(5));
/// assert_eq!(&buf[head.len..], b"hello");
///
/// assert!(parse_response(b"HTTP/1.1 20", &mut headers, &Limits::default())?.is_partial());
/// # Ok::<(), peregrine::http1::ParseError>(())
/// ```
///
/// # Errors
/// Every [`ParseError`] the status-line and header-section rules can produce; see
/// `docs/STRICTNESS.md`.
pub fn parse_response<'b, 'h>(
    buf: &'b [u8],
    headers: &'h mut [Header<'b>],
    limits: &Limits,
) -> Result<Status<ResponseHead<'b, 'h>>, ParseError> {
    simd::dispatch(ResponseJob { buf, storage: HeaderStorage::init(headers), limits })
}

/// [`parse_response`] into uninitialised header storage: the same parse, without first filling
/// the array with placeholders (the client's per-response path). The parsed head's `headers`
/// are the written prefix of `headers`.
///
/// # Examples
/// ```
/// use std::mem::MaybeUninit;
/// use peregrine::http1::{parse_response_uninit, Limits, Status};
///
/// let mut headers = [const { MaybeUninit::uninit() }; 16];
/// let buf = b"HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n";
/// let Status::Complete(head) = parse_response_uninit(buf, &mut headers, &Limits::default())?
/// else {
///     unreachable!("the head is complete");
/// };
/// assert_eq!((head.status, head.headers.len()), (204, 1));
/// # Ok::<(), peregrine::http1::ParseError>(())
/// ```
///
/// # Errors
/// As [`parse_response`].
pub fn parse_response_uninit<'b, 'h>(
    buf: &'b [u8],
    headers: &'h mut [MaybeUninit<Header<'b>>],
    limits: &Limits,
) -> Result<Status<ResponseHead<'b, 'h>>, ParseError> {
    simd::dispatch(ResponseJob { buf, storage: HeaderStorage::uninit(headers), limits })
}

struct ResponseJob<'b, 'h, 'l> {
    buf: &'b [u8],
    storage: HeaderStorage<'b, 'h>,
    limits: &'l Limits,
}

impl<'b, 'h> Job for ResponseJob<'b, 'h, '_> {
    type Out = Result<Status<ResponseHead<'b, 'h>>, ParseError>;

    #[inline(always)]
    fn run<K: Kernel>(self, k: K) -> Self::Out {
        let limits = self.limits;
        // As for requests: only the first `max_head_bytes` may hold the head.
        let over = self.buf.len() > limits.max_head_bytes;
        let buf = if over { &self.buf[..limits.max_head_bytes] } else { self.buf };
        let mut storage = self.storage.limit(limits.max_headers);
        match parts(k, buf, &mut storage) {
            Ok((line, (len, known))) => Ok(Status::Complete(ResponseHead {
                version: line.version,
                status: line.status,
                reason: line.reason,
                headers: storage.into_filled(),
                known,
                len,
            })),
            // The head does not end within `max_head_bytes`.
            Err(Stop::Partial) if over => Err(ParseError::HeadTooLarge),
            Err(Stop::Partial) => Ok(Status::Partial),
            Err(Stop::Fail(e)) => Err(e),
        }
    }
}

/// The status line's parts (RFC 9112 §4).
#[derive(Clone, Copy)]
struct Line<'b> {
    version: Version,
    status: u16,
    reason: &'b [u8],
}

/// Parses the whole head: the status line, and the head's length and the identified fields.
#[inline(always)]
fn parts<'b, K: Kernel>(
    k: K,
    buf: &'b [u8],
    storage: &mut HeaderStorage<'b, '_>,
) -> Result<(Line<'b>, (usize, KnownHeaders)), Stop> {
    // RFC 9112 §2.2 asks a server to ignore empty lines before a request-line; we ignore them
    // before a status line too (some servers send a CRLF too many after a body or after an
    // interim response, and the line is unambiguous). A bare CR or LF is still refused.
    let pos = skip_empty_lines(buf)?;
    let (line, end) = status_line(buf, pos)?;
    Ok((line, fields(k, buf, end, storage)?))
}

/// `status-line = HTTP-version SP status-code SP [ reason-phrase ]` CRLF (RFC 9112 §4).
#[inline(always)]
fn status_line(buf: &[u8], start: usize) -> Result<(Line<'_>, usize), Stop> {
    // The usual line in one compare.
    const OK: &[u8; 17] = b"HTTP/1.1 200 OK\r\n";
    if let Some(line) = buf.get(start..start + OK.len()) {
        if line == OK {
            let reason = line.get(13..15).unwrap_or_default();
            let line = Line { version: Version::Http11, status: 200, reason };
            return Ok((line, start + OK.len()));
        }
    }
    // RFC 9112 §2.3: HTTP/1.0 and HTTP/1.1 are spoken; another well-formed version is
    // `UnsupportedVersion`, anything else `InvalidVersion` (the request line's rules).
    let version = version(buf, start)?;
    match buf.get(start + 8) {
        None => return Err(Stop::Partial),
        Some(b' ') => {}
        // "HTTP/1.10": RFC 9112 §2.3 allows one DIGIT each.
        Some(b'0'..=b'9') => return Err(Stop::Fail(ParseError::InvalidVersion)),
        // HTAB or anything else where the one SP must be.
        Some(_) => return Err(Stop::Fail(ParseError::InvalidStatusLine)),
    }

    // status-code = 3DIGIT
    let code = start + 9;
    let digit = |at: usize| match buf.get(at) {
        None => Err(Stop::Partial),
        Some(&d @ b'0'..=b'9') => Ok(u16::from(d - b'0')),
        Some(_) => Err(Stop::Fail(ParseError::InvalidStatus)),
    };
    let status = digit(code)? * 100 + digit(code + 1)? * 10 + digit(code + 2)?;
    // RFC 9110 §15: "Values outside the range 100..599 are invalid." The RFC lets a client
    // treat such a response as a 5xx; we refuse it, because the code's class decides the
    // framing (1xx, 204, 304 have no body) and an invalid one leaves it in doubt.
    if !(100..=599).contains(&status) {
        return Err(Stop::Fail(ParseError::InvalidStatus));
    }

    let after = code + 3;
    let reason_end = match buf.get(after) {
        None => return Err(Stop::Partial),
        // reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ): the field-value bytes of the
        // scanning tables. A byte loop: reason phrases are short, and the kernel's line scan
        // cost 85 instructions more on `404 Not Found` (its block set-up outweighs the bytes).
        Some(b' ') => {
            let mut e = after + 1;
            while buf.get(e).is_some_and(|&b| CLASS[usize::from(b)] & VALUE != 0) {
                e += 1;
            }
            e
        }
        // RFC 9112 §4: "A server MUST send the space that separates the status-code from the
        // reason-phrase even when the reason-phrase is absent". Servers that omit it exist;
        // the line is unambiguous without it, so we accept `HTTP/1.1 200` CRLF (as
        // picohttpparser, httparse, curl and browsers do).
        Some(b'\r') => after,
        Some(b'\n') => return Err(Stop::Fail(ParseError::BareLf)),
        // A fourth digit: the code is not 3DIGIT.
        Some(b'0'..=b'9') => return Err(Stop::Fail(ParseError::InvalidStatus)),
        Some(_) => return Err(Stop::Fail(ParseError::InvalidStatusLine)),
    };
    // RFC 9112 §2.2: the line ends with CRLF; a bare CR is refused, and so is a bare LF.
    let end = match buf.get(reason_end) {
        None => return Err(Stop::Partial),
        Some(b'\r') => match buf.get(reason_end + 1) {
            None => return Err(Stop::Partial),
            Some(b'\n') => reason_end + 2,
            Some(_) => return Err(Stop::Fail(ParseError::BareCr)),
        },
        Some(b'\n') => return Err(Stop::Fail(ParseError::BareLf)),
        // NUL, DEL or another CTL in the reason-phrase.
        Some(_) => return Err(Stop::Fail(ParseError::InvalidStatusLine)),
    };
    let reason = buf.get(after + 1..reason_end).unwrap_or_default();
    Ok((Line { version, status, reason }, end))
}

#[cfg(test)]
mod tests;
