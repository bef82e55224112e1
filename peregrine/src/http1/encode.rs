//! The response head encoder (RFC 9112 §4, §5, §6; RFC 9110 §5.5, §8.6): status line, fields,
//! the framing fields and the connection signal, appended to a reusable buffer. The request head
//! encoder, the client's, is [`encode_request`] with its per-connection [`RequestPrelude`].
//!
//! Field names on the wire: the caller's are written as given (an `http::HeaderName` is lower
//! case), and the fields the encoders write themselves (a response's `date`, `server`,
//! `content-length`, `transfer-encoding` and `connection`; a request's `host` and framing
//! field) are written in lower case too, as hyper does, so one head is in one style. Field
//! names are case-insensitive (RFC 9110 §5.1), HTTP/2 and HTTP/3 require lower case (RFC 9113
//! §8.2.1, RFC 9114 §4.2), and a peer that needed title case would already fail on the
//! handler's fields, which the `http` crate keeps in lower case. Hand-written heads elsewhere
//! (the server's canned 503 and `101`, its prepared answers) follow the same rule. Names read
//! from a peer are another matter: the parser matches them case-insensitively.
//!
//! Sans-I/O: the caller passes the Date value (see [`crate::date::now`]), so this module reads
//! no clock. Once the buffer has capacity, encoding a head allocates nothing
//! (`tests/http1_encode_alloc.rs` proves it with a counting allocator).

use std::fmt;

use super::Version;
use super::field_syntax::{has_value_ctl, is_token};
use super::framing::BodyLength;
use crate::date::ImfFixdate;
use crate::decimal;

mod request;

pub use request::{
    RequestPrelude, Scheme, check_method, check_request_field, check_target, encode_request,
    encode_request_extension,
};

/// Why a response or request head was not encoded. Each is a bug in the code building the
/// message, not in a peer's input; nothing is appended to the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EncodeError {
    /// A status code outside 100..=999 (RFC 9110 §15: three digits).
    InvalidStatus,
    /// A field name that is empty or not a token: it could hold CR, LF, `:` or SP and inject
    /// fields (RFC 9110 §5.1).
    InvalidHeaderName,
    /// A field value holding CR, LF, NUL or another control byte: response splitting
    /// (RFC 9110 §5.5: "Field values containing CR, LF, or NUL characters are invalid and
    /// dangerous").
    InvalidHeaderValue,
    /// A Content-Length or Transfer-Encoding field among the caller's fields: framing is the
    /// encoder's job, from the [`BodyLength`] given, so the two can never disagree.
    FramingHeader,
    /// A body on a 1xx or 204 response (RFC 9110 §15.2, §15.3.5: they end at the empty line),
    /// or on a CONNECT or TRACE request (RFC 9110 §9.3.6, §9.3.8).
    BodyNotAllowed,
    /// Chunked framing for an HTTP/1.0 request (RFC 9112 §6.1: "A server MUST NOT send a
    /// response containing Transfer-Encoding unless the corresponding request indicates
    /// HTTP/1.1"); use [`BodyLength::CloseDelimited`] or a length.
    ChunkedInHttp10,
    /// A Host field among a request's fields: the [`RequestPrelude`] writes Host, once
    /// (RFC 9112 §3.2: two Host fields are a 400).
    HostHeader,
    /// A [`RequestPrelude`]'s host that is not a `uri-host` (RFC 3986 §3.2.2, RFC 9110 §7.2).
    InvalidHost,
    /// [`Method::Extension`](crate::Method::Extension) given to [`encode_request`] (it has no
    /// text: use [`encode_request_extension`]), or an extension method that is not a token
    /// (RFC 9110 §9.1).
    InvalidMethod,
    /// A request-target that is empty, holds a byte outside RFC 3986 or has a form the method
    /// cannot use (RFC 9112 §3.2): request splitting, or a request every server refuses.
    InvalidTarget,
    /// A request body delimited by closing the connection: only responses can be (RFC 9112
    /// §6.3 rule 7).
    CloseDelimitedRequest,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EncodeError::InvalidStatus => "status code outside 100..=999",
            EncodeError::InvalidHeaderName => "header name is not a token",
            EncodeError::InvalidHeaderValue => "header value holds a control byte",
            EncodeError::FramingHeader => "Content-Length/Transfer-Encoding set by hand",
            EncodeError::BodyNotAllowed => {
                "body on a 1xx or 204 response or a CONNECT or TRACE request"
            }
            EncodeError::ChunkedInHttp10 => "chunked response to an HTTP/1.0 request",
            EncodeError::HostHeader => "Host set by hand",
            EncodeError::InvalidHost => "host is not a URI host",
            EncodeError::InvalidMethod => "method is not a token",
            EncodeError::InvalidTarget => "invalid request-target",
            EncodeError::CloseDelimitedRequest => "close-delimited request body",
        })
    }
}

impl std::error::Error for EncodeError {}

/// The parts of an outgoing response head, the encoder's input (the parsed, incoming one is
/// [`http1::ResponseHead`](super::ResponseHead)).
///
/// # Examples
/// ```
/// use peregrine::http1::encode::{encode_head, ResponseHeadOut};
/// use peregrine::http1::framing::BodyLength;
/// let mut out = Vec::with_capacity(256);
/// let head = ResponseHeadOut { close: true, ..ResponseHeadOut::new(404, &[("Content-Type", b"text/plain")]) };
/// encode_head(&head, BodyLength::Length(9), &mut out)?;
/// assert_eq!(
///     out,
///     b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\ncontent-length: 9\r\nconnection: close\r\n\r\n"
/// );
/// # Ok::<(), peregrine::http1::encode::EncodeError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ResponseHeadOut<'a> {
    /// The status code, 100..=999.
    pub status: u16,
    /// The version of the request being answered. The status line always says `HTTP/1.1`
    /// (RFC 9110 §6.2: a server sends its own highest conformant version); this only decides
    /// how persistence is signalled: an HTTP/1.0 client needs `connection: keep-alive`
    /// (RFC 9112 §9.3) and cannot take chunked framing.
    pub request_version: Version,
    /// The caller's fields, written in order as `name: value`. Must not hold Content-Length or
    /// Transfer-Encoding; a `Date` or `Server` here replaces the automatic one.
    pub headers: &'a [(&'a str, &'a [u8])],
    /// Close the connection after this response: adds `connection: close` (RFC 9112 §9.6).
    pub close: bool,
    /// The `Date` value, normally [`crate::date::now()`] (RFC 9110 §6.6.1: an origin server
    /// with a clock MUST send Date on 2xx, 3xx and 4xx responses).
    pub date: Option<&'a ImfFixdate>,
    /// The `Server` value, if any (RFC 9110 §10.2.4).
    pub server: Option<&'a [u8]>,
}

impl<'a> ResponseHeadOut<'a> {
    /// A head for an HTTP/1.1 request: keep-alive, no Date, no Server.
    pub const fn new(status: u16, headers: &'a [(&'a str, &'a [u8])]) -> Self {
        ResponseHeadOut {
            status,
            request_version: Version::Http11,
            headers,
            close: false,
            date: None,
            server: None,
        }
    }
}

/// The interim response that asks an `Expect: 100-continue` client for its body
/// (RFC 9110 §10.1.1, §15.2.1).
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Appends a response head to `out`: status line, the caller's fields, `Date`, `Server`, the
/// framing field for `body` and the connection signal, then the empty line.
///
/// Framing by `body`:
/// - `Length(n)`: `content-length: n` (RFC 9110 §8.6); on 1xx and 204 nothing, and `n` must be 0.
/// - `Chunked`: `transfer-encoding: chunked` (RFC 9112 §6.1); only for HTTP/1.1 requests.
/// - `CloseDelimited`: no framing field, and `connection: close` since only the close ends the
///   body (RFC 9112 §6.3 rule 8).
///
/// Then `connection: close` when `head.close` (or close-delimited), else
/// `connection: keep-alive` for an HTTP/1.0 request (RFC 9112 §9.3).
///
/// For HEAD and 304 responses pass the length the body would have had; writing no body bytes
/// is the caller's part (RFC 9110 §8.6).
///
/// # Errors
/// [`EncodeError`] for a bad status, a field name that is not a token, a value with a control
/// byte, a hand-made framing field, a body on 1xx/204, or chunked for HTTP/1.0. On error `out`
/// is left as it was.
pub fn encode_head(
    head: &ResponseHeadOut<'_>,
    body: BodyLength,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let start = out.len();
    let result = write_head(head, body, out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// As [`encode_head`], with the caller's fields (in place of `head.headers`, which must be
/// empty) taken from types that already guarantee their syntax: the `http` crate's
/// `HeaderName` is a token and its `HeaderValue` holds no control byte but HTAB (RFC 9110 §5.1,
/// §5.5), so they are written without being checked again. The caller leaves out
/// Content-Length and Transfer-Encoding (debug builds check all of this).
///
/// Measured on the plaintext example (two fields): about 270 instructions less per response.
pub(crate) fn encode_head_typed<'f>(
    head: &ResponseHeadOut<'_>,
    fields: impl Iterator<Item = (&'f str, &'f [u8])>,
    body: BodyLength,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    debug_assert!(head.headers.is_empty());
    let start = out.len();
    let result = write_head_with(head, fields, false, body, out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

fn write_head(
    head: &ResponseHeadOut<'_>,
    body: BodyLength,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    write_head_with(head, head.headers.iter().copied(), true, body, out)
}

#[inline]
fn write_head_with<'f>(
    head: &ResponseHeadOut<'_>,
    fields: impl Iterator<Item = (&'f str, &'f [u8])>,
    check: bool,
    body: BodyLength,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let status = head.status;
    if !(100..=999).contains(&status) {
        return Err(EncodeError::InvalidStatus);
    }
    write_status_line(status, out);

    let (mut own_date, mut own_server) = (false, false);
    for (name, value) in fields {
        if check {
            check_field(name, value)?;
        } else {
            debug_assert_eq!(check_field(name, value), Ok(()), "{name}");
        }
        own_date |= name.eq_ignore_ascii_case("date");
        own_server |= name.eq_ignore_ascii_case("server");
        write_field(name.as_bytes(), value, out);
    }
    if let (Some(date), false) = (head.date, own_date) {
        write_date(date, out);
    }
    if let (Some(server), false) = (head.server, own_server) {
        if has_value_ctl(server) {
            return Err(EncodeError::InvalidHeaderValue);
        }
        write_field(b"server", server, out);
    }

    // RFC 9110 §8.6: "A server MUST NOT send a Content-Length header field in any response
    // with a status code of 1xx (Informational) or 204 (No Content)"; RFC 9112 §6.1 says the
    // same of Transfer-Encoding.
    let bodiless = status < 200 || status == 204;
    match body {
        BodyLength::Length(0) if bodiless => {}
        _ if bodiless => return Err(EncodeError::BodyNotAllowed),
        BodyLength::Length(n) => write_content_length(n, out),
        BodyLength::Chunked if head.request_version == Version::Http10 => {
            return Err(EncodeError::ChunkedInHttp10);
        }
        BodyLength::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
        BodyLength::CloseDelimited => {}
    }

    if head.close || body == BodyLength::CloseDelimited {
        out.extend_from_slice(b"connection: close\r\n");
    } else if head.request_version == Version::Http10 {
        out.extend_from_slice(b"connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"\r\n");
    Ok(())
}

/// Checks one field the caller supplied (also used for chunked trailers).
pub(crate) fn check_field(name: &str, value: &[u8]) -> Result<(), EncodeError> {
    if !is_token(name.as_bytes()) {
        return Err(EncodeError::InvalidHeaderName);
    }
    if name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding")
    {
        return Err(EncodeError::FramingHeader);
    }
    // RFC 9110 §5.5: CR, LF and NUL are invalid; the other CTLs are outside field-vchar too.
    if has_value_ctl(value) {
        return Err(EncodeError::InvalidHeaderValue);
    }
    Ok(())
}

/// `field-line = field-name ":" OWS field-value OWS` (RFC 9112 §5), with one SP as OWS.
#[inline(always)]
fn write_field(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    // One growth check for the line; the copies below then only move bytes.
    out.reserve(name.len() + value.len() + 4);
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// `date: <IMF-fixdate>` CRLF (RFC 9110 §6.6.1): a fixed 37-byte line built on the stack and
/// appended in one copy of a constant length (which the compiler turns into a few moves).
#[inline(always)]
fn write_date(date: &ImfFixdate, out: &mut Vec<u8>) {
    let mut line = [0u8; 37];
    line[..6].copy_from_slice(b"date: ");
    line[6..35].copy_from_slice(date.as_bytes());
    line[35..].copy_from_slice(b"\r\n");
    out.extend_from_slice(&line);
}

/// `content-length: <n>` CRLF (RFC 9110 §8.6), built on the stack in one array of the longest
/// line's size, appended whole (a constant-length copy) and cut to the real length.
#[inline(always)]
fn write_content_length(n: u64, out: &mut Vec<u8>) {
    const PREFIX: &[u8; 16] = b"content-length: ";
    let mut line = [0u8; 16 + 20 + 2];
    line[..16].copy_from_slice(PREFIX);
    let end = 16 + decimal::len(n);
    decimal::write_ending_at(n, &mut line, end);
    line[end..end + 2].copy_from_slice(b"\r\n");
    let start = out.len();
    out.extend_from_slice(&line);
    out.truncate(start + end + 2);
}

/// `status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF` (RFC 9112 §4).
#[inline(always)]
fn write_status_line(status: u16, out: &mut Vec<u8>) {
    // Every status with a reason phrase has its whole line precomputed: one copy.
    if let Some(line) = status_line(status) {
        out.extend_from_slice(line);
        return;
    }
    out.extend_from_slice(b"HTTP/1.1 ");
    let digits =
        [b'0' + (status / 100) as u8, b'0' + (status / 10 % 10) as u8, b'0' + (status % 10) as u8];
    out.extend_from_slice(&digits);
    out.push(b' ');
    out.extend_from_slice(reason_phrase(status).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Defines [`reason_phrase`] and `status_line` from one list, so the precomputed status
/// lines cannot disagree with the reason phrases.
macro_rules! statuses {
    ($($code:literal => $reason:literal,)*) => {
        /// The canonical reason phrase of a status code (RFC 9110 §15), or `""` for codes it does not
        /// define (the reason phrase is optional, RFC 9112 §4).
        ///
        /// # Examples
        /// ```
        /// assert_eq!(peregrine::http1::encode::reason_phrase(404), "Not Found");
        /// assert_eq!(peregrine::http1::encode::reason_phrase(599), "");
        /// ```
        pub const fn reason_phrase(status: u16) -> &'static str {
            match status {
                $($code => $reason,)*
                _ => "",
            }
        }

        /// The whole status line of a status that has a reason phrase (RFC 9112 §4).
        const fn status_line(status: u16) -> Option<&'static [u8]> {
            match status {
                $($code => Some(concat!("HTTP/1.1 ", $code, " ", $reason, "\r\n").as_bytes()),)*
                _ => None,
            }
        }
    };
}

statuses! {
    100 => "Continue",
    101 => "Switching Protocols",
    200 => "OK",
    201 => "Created",
    202 => "Accepted",
    203 => "Non-Authoritative Information",
    204 => "No Content",
    205 => "Reset Content",
    206 => "Partial Content",
    300 => "Multiple Choices",
    301 => "Moved Permanently",
    302 => "Found",
    303 => "See Other",
    304 => "Not Modified",
    305 => "Use Proxy",
    307 => "Temporary Redirect",
    308 => "Permanent Redirect",
    400 => "Bad Request",
    401 => "Unauthorized",
    402 => "Payment Required",
    403 => "Forbidden",
    404 => "Not Found",
    405 => "Method Not Allowed",
    406 => "Not Acceptable",
    407 => "Proxy Authentication Required",
    408 => "Request Timeout",
    409 => "Conflict",
    410 => "Gone",
    411 => "Length Required",
    412 => "Precondition Failed",
    413 => "Content Too Large",
    414 => "URI Too Long",
    415 => "Unsupported Media Type",
    416 => "Range Not Satisfiable",
    417 => "Expectation Failed",
    421 => "Misdirected Request",
    422 => "Unprocessable Content",
    426 => "Upgrade Required",
    428 => "Precondition Required",
    429 => "Too Many Requests",
    431 => "Request Header Fields Too Large",
    500 => "Internal Server Error",
    501 => "Not Implemented",
    502 => "Bad Gateway",
    503 => "Service Unavailable",
    504 => "Gateway Timeout",
    505 => "HTTP Version Not Supported",
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date::format_imf_fixdate;
    use std::time::{Duration, UNIX_EPOCH};

    struct Case {
        rfc: &'static str,
        head: ResponseHeadOut<'static>,
        body: BodyLength,
        expect: Result<&'static [u8], EncodeError>,
    }

    fn run(cases: &[Case]) {
        for c in cases {
            let mut out = b"prev".to_vec();
            let got = encode_head(&c.head, c.body, &mut out);
            match c.expect {
                Ok(bytes) => {
                    assert_eq!(got, Ok(()), "{}", c.rfc);
                    assert_eq!(
                        out[4..].escape_ascii().to_string(),
                        bytes.escape_ascii().to_string(),
                        "{}",
                        c.rfc
                    );
                }
                Err(e) => {
                    assert_eq!(got, Err(e), "{}", c.rfc);
                    assert_eq!(out, b"prev", "{}: nothing appended on error", c.rfc);
                }
            }
        }
    }

    const H10: ResponseHeadOut<'static> =
        ResponseHeadOut { request_version: Version::Http10, ..ResponseHeadOut::new(200, &[]) };

    #[test]
    fn framing_fields_rfc9112_6() {
        use BodyLength::*;
        let r = |rfc, head, body, expect| Case { rfc, head, body, expect };
        run(&[
            r("RFC 9110 §8.6", ResponseHeadOut::new(200, &[]), Length(0), Ok(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")),
            r(
                "RFC 9110 §8.6",
                ResponseHeadOut::new(200, &[]),
                Length(u64::MAX),
                Ok(b"HTTP/1.1 200 OK\r\ncontent-length: 18446744073709551615\r\n\r\n"),
            ),
            r("RFC 9112 §6.1", ResponseHeadOut::new(200, &[]), Chunked, Ok(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")),
            r("RFC 9112 §6.3", ResponseHeadOut::new(200, &[]), CloseDelimited, Ok(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n")),
            r(
                "RFC 9112 §9.6",
                ResponseHeadOut { close: true, ..ResponseHeadOut::new(500, &[]) },
                Length(2),
                Ok(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 2\r\nconnection: close\r\n\r\n"),
            ),
            r("RFC 9112 §9.3", H10, Length(1), Ok(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: keep-alive\r\n\r\n")),
            r("RFC 9112 §9.3", ResponseHeadOut { close: true, ..H10 }, Length(1), Ok(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: close\r\n\r\n")),
            r("RFC 9112 §6.1", H10, Chunked, Err(EncodeError::ChunkedInHttp10)),
            r("RFC 9112 §6.3", H10, CloseDelimited, Ok(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n")),
            r("RFC 9110 §15.3.5", ResponseHeadOut::new(204, &[]), Length(0), Ok(b"HTTP/1.1 204 No Content\r\n\r\n")),
            r("RFC 9110 §15.2", ResponseHeadOut::new(100, &[]), Length(0), Ok(b"HTTP/1.1 100 Continue\r\n\r\n")),
            r("RFC 9110 §15.3.5", ResponseHeadOut::new(204, &[]), Length(1), Err(EncodeError::BodyNotAllowed)),
            r("RFC 9110 §15.2", ResponseHeadOut::new(101, &[]), Chunked, Err(EncodeError::BodyNotAllowed)),
            r("RFC 9110 §8.6", ResponseHeadOut::new(304, &[]), Length(10), Ok(b"HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\n\r\n")),
            r("RFC 9112 §4", ResponseHeadOut::new(599, &[]), Length(0), Ok(b"HTTP/1.1 599 \r\ncontent-length: 0\r\n\r\n")),
            r("RFC 9110 §15", ResponseHeadOut::new(99, &[]), Length(0), Err(EncodeError::InvalidStatus)),
            r("RFC 9110 §15", ResponseHeadOut::new(1000, &[]), Length(0), Err(EncodeError::InvalidStatus)),
        ]);
    }

    #[test]
    fn fields_are_checked_rfc9110_5_5() {
        use BodyLength::Length;
        let h =
            |headers: &'static [(&'static str, &'static [u8])]| ResponseHeadOut::new(200, headers);
        let r = |head, expect| Case { rfc: "RFC 9110 §5.5, §5.1", head, body: Length(0), expect };
        run(&[
            r(
                h(&[("X-A", b"1"), ("x-b", b"a\tb \xff")]),
                Ok(b"HTTP/1.1 200 OK\r\nX-A: 1\r\nx-b: a\tb \xff\r\ncontent-length: 0\r\n\r\n"),
            ),
            r(h(&[("X", b"")]), Ok(b"HTTP/1.1 200 OK\r\nX: \r\ncontent-length: 0\r\n\r\n")),
            r(h(&[("X", b"a\r\nSet-Cookie: evil")]), Err(EncodeError::InvalidHeaderValue)),
            r(h(&[("X", b"a\nb")]), Err(EncodeError::InvalidHeaderValue)),
            r(h(&[("X", b"a\rb")]), Err(EncodeError::InvalidHeaderValue)),
            r(h(&[("X", b"a\0b")]), Err(EncodeError::InvalidHeaderValue)),
            r(h(&[("X", b"a\x7fb")]), Err(EncodeError::InvalidHeaderValue)),
            r(h(&[("X", b"1"), ("Y", b"\x1b")]), Err(EncodeError::InvalidHeaderValue)),
            r(h(&[("", b"1")]), Err(EncodeError::InvalidHeaderName)),
            r(h(&[("X\r\nY", b"1")]), Err(EncodeError::InvalidHeaderName)),
            r(h(&[("X:", b"1")]), Err(EncodeError::InvalidHeaderName)),
            r(h(&[("X Y", b"1")]), Err(EncodeError::InvalidHeaderName)),
            r(h(&[("X\0", b"1")]), Err(EncodeError::InvalidHeaderName)),
            r(h(&[("content-length", b"1")]), Err(EncodeError::FramingHeader)),
            r(h(&[("Transfer-Encoding", b"chunked")]), Err(EncodeError::FramingHeader)),
            r(
                ResponseHeadOut { server: Some(b"a\r\nb"), ..ResponseHeadOut::new(200, &[]) },
                Err(EncodeError::InvalidHeaderValue),
            ),
        ]);
    }

    #[test]
    fn date_and_server_rfc9110_6_6_1() {
        let date = format_imf_fixdate(UNIX_EPOCH + Duration::from_secs(784_111_777));
        let mut out = Vec::new();
        let head = ResponseHeadOut {
            date: Some(&date),
            server: Some(b"peregrine"),
            ..ResponseHeadOut::new(200, &[("A", b"b")])
        };
        encode_head(&head, BodyLength::Length(3), &mut out).unwrap();
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\nA: b\r\ndate: Sun, 06 Nov 1994 08:49:37 GMT\r\nserver: peregrine\r\ncontent-length: 3\r\n\r\n"
        );
        // The caller's own Date and Server replace the automatic ones.
        let mut out = Vec::new();
        let own: &[(&str, &[u8])] = &[("date", b"x"), ("SERVER", b"y")];
        let head = ResponseHeadOut {
            date: Some(&date),
            server: Some(b"peregrine"),
            ..ResponseHeadOut::new(200, own)
        };
        encode_head(&head, BodyLength::Length(0), &mut out).unwrap();
        assert_eq!(out, b"HTTP/1.1 200 OK\r\ndate: x\r\nSERVER: y\r\ncontent-length: 0\r\n\r\n");
    }

    #[test]
    fn every_status_line_rfc9112_4() {
        for status in 100..=999u16 {
            let mut out = Vec::new();
            encode_head(&ResponseHeadOut::new(status, &[]), BodyLength::Length(0), &mut out)
                .unwrap();
            let line = format!("HTTP/1.1 {status} {}\r\n", reason_phrase(status));
            assert!(out.starts_with(line.as_bytes()), "{status}");
        }
        assert_eq!(reason_phrase(418), "");
        assert_eq!(reason_phrase(413), "Content Too Large");
    }

    #[test]
    fn content_length_line_matches_std_rfc9110_8_6() {
        let mut values: Vec<u64> = (0..2000).collect();
        for e in 0..20 {
            let p = 10u64.pow(e);
            values.extend([p - 1, p, p + 1]);
        }
        values.push(u64::MAX);
        for n in values {
            let mut out = b"x".to_vec();
            write_content_length(n, &mut out);
            assert_eq!(out, format!("xcontent-length: {n}\r\n").as_bytes());
        }
    }
}
