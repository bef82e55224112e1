//! Fixed answers ([`Server::fixed`](super::Server::fixed)): a response set once, at start, that
//! the server sends itself to every `GET` or `HEAD` of one path, as nginx's `return` or
//! HAProxy's `http-request return` do: a liveness probe, a `robots.txt`, a fixed JSON status.
//!
//! Over HTTP/1.1 the common case (an HTTP/1.1 keep-alive request, with neither access log nor
//! metrics on) is answered from bytes prepared here once, head and body, with only the Date
//! written in: no `Request` built, no handler future, no `Response` to encode and drop. Every
//! other case (HTTP/1.0, `Connection: close`, a drain, HTTP/2, a logged or counted request)
//! sends the same response through the general encoder, so both paths answer the same bytes.

use bytes::Bytes;
use http::StatusCode;

use super::h1::last_response::written;
use crate::Version;
use crate::body::Body;
use crate::date::ImfFixdate;
use crate::http1::encode::{ResponseHeadOut, encode_head_typed};
use crate::http1::framing::response_body;
use crate::response::{HeaderList, Response};

/// Bodies up to this size are prepared with their head and copied per answer (or, for a
/// pipelined run of answers, written from the worker's repeated copy: `h1::fixed_run`); larger
/// ones go through the general encoder, which writes them from their `Bytes` without a copy.
const PREPARED_BODY_MAX: usize = 16 * 1024;

/// The `date` line the prepared head is encoded with; its 29-byte value is overwritten per
/// answer. Looked for only when the caller set no `date` field, so this line is the server's.
const DATE_LINE: &[u8] = b"\r\ndate: ";

/// One fixed answer: the path it answers and the response.
#[derive(Debug)]
pub(crate) struct Fixed {
    path: Box<str>,
    status: StatusCode,
    headers: HeaderList,
    body: Bytes,
    /// The HTTP/1.1 keep-alive answer, when the body is small and the server writes the Date.
    h1: Option<Prepared>,
}

/// An HTTP/1.1 answer to a keep-alive request, as bytes: the head, then the body.
#[derive(Debug)]
struct Prepared {
    bytes: Box<[u8]>,
    /// Where the body starts (a `HEAD` gets the bytes before it: the same head, RFC 9110
    /// §9.3.2).
    head_len: usize,
    /// Where the Date value (29 bytes) starts.
    date_at: usize,
}

impl Fixed {
    /// Prepares `response` as the answer to `path`.
    ///
    /// # Errors
    /// A path that does not start with `/`; a body that is not complete bytes (a stream, a
    /// file, trailers); a status that cannot answer a `GET` (1xx) or a 204 with content; a
    /// response the HTTP/1.1 encoder refuses.
    pub(crate) fn new(path: &str, response: Response) -> Result<Fixed, String> {
        if !path.starts_with('/') {
            return Err(format!("fixed answer for {path:?}: the path must start with '/'"));
        }
        let (status, headers, body) = response.into_parts();
        if status.is_informational() {
            return Err(format!("fixed answer for {path}: a {status} cannot answer a GET"));
        }
        let complete = if body.may_have_trailers() { Err(body) } else { body.into_full() };
        let body = complete.map_err(|_| {
            format!(
                "fixed answer for {path}: the body must be bytes, not a stream, a file or a body \
                 with trailers"
            )
        })?;
        // RFC 9110 §15.3.5: a 204 has no content; a body given for one is a mistake to report.
        if status == StatusCode::NO_CONTENT && !body.is_empty() {
            return Err(format!("fixed answer for {path}: a 204 cannot have content"));
        }
        let mut fixed = Fixed { path: path.into(), status, headers, body: Bytes::new(), h1: None };
        // Encoded once now, with the epoch as its Date: what the encoder refuses is refused here,
        // not at the first request.
        let date = crate::date::format_imf_fixdate(std::time::UNIX_EPOCH);
        let mut bytes = Vec::new();
        fixed
            .encode_h1_head(body.len(), &date, &mut bytes)
            .map_err(|e| format!("fixed answer for {path}: cannot be sent: {e}"))?;
        let head_len = bytes.len();
        // A caller's own Date is sent as set: the answer is then left to the general encoder.
        let own_date = fixed.headers.contains_key(&http::header::DATE);
        let date_at = match own_date {
            true => None,
            false => bytes
                .windows(DATE_LINE.len() + 29)
                .position(|w| w.starts_with(DATE_LINE) && w.ends_with(date.as_bytes()))
                .map(|i| i + DATE_LINE.len()),
        };
        if let (Some(date_at), true) = (date_at, body.len() <= PREPARED_BODY_MAX) {
            if response_body(status.as_u16(), false, Version::Http11, None).send {
                bytes.extend_from_slice(&body);
            }
            fixed.h1 = Some(Prepared { bytes: bytes.into(), head_len, date_at });
        }
        fixed.body = body;
        Ok(fixed)
    }

    /// The head of the HTTP/1.1 keep-alive answer, as the general encoder
    /// (`h1::respond::encode_response`) writes it.
    fn encode_h1_head(
        &self,
        len: usize,
        date: &ImfFixdate,
        out: &mut Vec<u8>,
    ) -> Result<(), crate::http1::encode::EncodeError> {
        let code = self.status.as_u16();
        let length = response_body(code, false, Version::Http11, Some(len as u64)).length;
        let head = ResponseHeadOut { date: Some(date), ..ResponseHeadOut::new(code, &[]) };
        let fields = self.headers.iter().filter(|(n, _)| written(n));
        encode_head_typed(&head, fields.map(|(n, v)| (n.as_str(), v.as_bytes())), length, out)
    }

    /// The path answered (compared with the request's path as sent, without its query).
    /// The answer's status code.
    #[inline]
    pub(crate) fn status(&self) -> u16 {
        self.status.as_u16()
    }

    /// The length of the answer's body.
    #[inline]
    pub(crate) fn body_len(&self) -> u64 {
        self.body.len() as u64
    }

    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// Whether `target`, an origin-form request-target (RFC 9112 §3.2.1), names this path:
    /// the path itself, or the path and a query.
    #[inline]
    pub(crate) fn answers_target(&self, target: &[u8]) -> bool {
        let path = self.path.as_bytes();
        let named = target.get(..path.len()).is_some_and(|t| crate::byte_word::same_short(t, path));
        named && matches!(target.get(path.len()), None | Some(b'?'))
    }

    /// Whether [`Fixed::write_h1`] can answer.
    #[inline]
    pub(crate) fn is_prepared(&self) -> bool {
        self.h1.is_some()
    }

    /// Appends the answer to an HTTP/1.1 keep-alive `GET` (or `HEAD`: the head alone) to `out`
    /// with `date`; false, and nothing appended, when it is not prepared.
    #[inline]
    pub(crate) fn write_h1(&self, is_head: bool, date: &ImfFixdate, out: &mut Vec<u8>) -> bool {
        let Some(p) = &self.h1 else {
            return false;
        };
        let start = out.len();
        out.extend_from_slice(if is_head { &p.bytes[..p.head_len] } else { &p.bytes });
        let at = start + p.date_at;
        if let Some(slot) = out.get_mut(at..at + 29) {
            slot.copy_from_slice(date.as_bytes());
        }
        true
    }

    /// The length of what [`Fixed::write_h1`] appends, when it is prepared.
    #[inline]
    pub(crate) fn h1_len(&self, is_head: bool) -> Option<usize> {
        self.h1.as_ref().map(|p| if is_head { p.head_len } else { p.bytes.len() })
    }

    /// The answer as a [`Response`], for the general encoders (HTTP/2, HTTP/1.0, a close, a
    /// logged request). Allocates nothing for up to four fields; the body is shared.
    pub(crate) fn response(&self) -> Response {
        let mut res = Response::with_status(self.status, Body::from(self.body.clone()));
        *res.headers_mut() = self.headers.clone();
        res
    }
}

#[cfg(test)]
mod tests {
    use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, SERVER};

    use super::*;

    fn hello() -> Response {
        Response::new("Hello, World!")
            .with_header(CONTENT_TYPE, HeaderValue::from_static("text/plain"))
            .with_header(SERVER, HeaderValue::from_static("peregrine"))
    }

    #[test]
    fn the_prepared_answer_is_the_encoders_with_the_date_written_in() {
        let fixed = Fixed::new("/plaintext", hello()).unwrap();
        let date = crate::date::format_imf_fixdate(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000),
        );
        let mut want = Vec::new();
        fixed.encode_h1_head(13, &date, &mut want).unwrap();
        let head_len = want.len();
        want.extend_from_slice(b"Hello, World!");
        let mut out = b"before".to_vec();
        assert!(fixed.write_h1(false, &date, &mut out));
        assert_eq!(&out[6..], &want[..]);
        let mut head = Vec::new();
        assert!(fixed.write_h1(true, &date, &mut head));
        assert_eq!(head, &want[..head_len]);
        assert!(
            head.ends_with(b"content-length: 13\r\n\r\n"),
            "{}",
            String::from_utf8_lossy(&head)
        );
    }

    #[test]
    fn targets_match_the_path_with_or_without_a_query() {
        let fixed = Fixed::new("/ping", hello()).unwrap();
        let rows: &[(&[u8], bool)] = &[
            (b"/ping", true),
            (b"/ping?x=1", true),
            (b"/ping?", true),
            (b"/ping/", false),
            (b"/pingx", false),
            (b"/pin", false),
            (b"/PING", false),
            (b"/", false),
        ];
        for (target, want) in rows {
            assert_eq!(fixed.answers_target(target), *want, "{}", String::from_utf8_lossy(target));
        }
    }

    #[test]
    fn what_cannot_be_a_fixed_answer_is_refused_when_set() {
        let (tx, stream) = Body::channel(1);
        drop(tx);
        let rows: Vec<(&str, Response, &str)> = vec![
            ("ping", hello(), "must start with '/'"),
            ("/s", Response::new(stream), "not a stream"),
            ("/i", Response::with_status(StatusCode::CONTINUE, ""), "cannot answer a GET"),
            ("/n", Response::with_status(StatusCode::NO_CONTENT, "x"), "cannot have content"),
        ];
        for (path, res, want) in rows {
            let err = Fixed::new(path, res).unwrap_err();
            assert!(err.contains(want), "{path}: {err}");
        }
    }

    #[test]
    fn a_callers_date_or_a_large_body_leaves_the_answer_to_the_general_encoder() {
        let dated = hello().with_header(http::header::DATE, HeaderValue::from_static("x"));
        assert!(!Fixed::new("/d", dated).unwrap().is_prepared());
        // Even one that looks like the date the head is prepared with.
        let epoch = HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT");
        let dated = hello().with_header(http::header::DATE, epoch);
        assert!(!Fixed::new("/d", dated).unwrap().is_prepared());
        let large = Response::new(vec![b'x'; PREPARED_BODY_MAX + 1]);
        assert!(!Fixed::new("/l", large).unwrap().is_prepared());
        assert!(
            Fixed::new("/s", Response::new(vec![b'x'; PREPARED_BODY_MAX])).unwrap().is_prepared()
        );
        // The server owns framing: a Content-Length the caller set is not written twice.
        let framed = hello().with_header(CONTENT_LENGTH, HeaderValue::from_static("99"));
        let fixed = Fixed::new("/f", framed).unwrap();
        let mut out = Vec::new();
        assert!(fixed.write_h1(true, &crate::date::now(), &mut out));
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("content-length").count(), 1, "{text}");
        assert!(!text.contains("99"), "{text}");
    }

    #[test]
    fn a_304_or_a_head_sends_no_body() {
        let not_modified = Response::with_status(StatusCode::NOT_MODIFIED, "");
        let fixed = Fixed::new("/n", not_modified).unwrap();
        let (mut get, mut head) = (Vec::new(), Vec::new());
        let date = crate::date::now();
        assert!(fixed.write_h1(false, &date, &mut get) && fixed.write_h1(true, &date, &mut head));
        assert_eq!(get, head);
        assert!(get.starts_with(b"HTTP/1.1 304 ") && get.ends_with(b"\r\n\r\n"));
    }
}
