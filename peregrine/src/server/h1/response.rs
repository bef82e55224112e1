//! A handler's response into HTTP/1.1 bytes: the head (with the framing `http1::framing`
//! decides), and the body when it is complete and small.

use bytes::Bytes;

use super::Close;
use super::template::{HeadKey, written};
use crate::Version;
use crate::body::Body;
use crate::date::ImfFixdate;
use crate::http1::encode::{ResponseHeadOut, encode_head, encode_head_typed};
use crate::http1::framing::{BodyLength, response_body};
use crate::response::Response;
use crate::server::worker::Worker;

/// Body chunks at least this large are written straight from their `Bytes`, not copied.
pub(super) const COPY_MAX: usize = 16 * 1024;

/// A body still to be written after its head: its framing, and the body.
pub(super) type Rest = Option<(Body, BodyLength)>;

/// Encodes `res` into the write buffer, with its body when it is complete and small.
/// Returns the body still to be streamed, if any, and the content bytes written now.
///
/// Synchronous on purpose: the response is consumed here and never held across an `.await`,
/// which keeps the connection's future (and an idle connection's memory) small. Taken by
/// reference so the caller's response is not copied in.
///
/// The Date is read once per batch of requests (the thread's cache still costs a clock read
/// per call): `date` is cleared after every read and every handler that had to wait.
pub(super) fn encode_response(
    wbuf: &mut Vec<u8>,
    date: &mut Option<ImfFixdate>,
    worker: &Worker,
    res: &mut Response,
    is_head: bool,
    version: Version,
    keep_alive: bool,
) -> Result<(Rest, u64), Close> {
    let code = res.status().as_u16();
    if wbuf.capacity() == 0 {
        *wbuf = worker.buffers.take_write();
    }
    let body = std::mem::take(res.body_mut());
    // Trailers travel only in the chunked coding's trailer section (RFC 9112 §7.1.2): a body
    // that may have them goes chunked to an HTTP/1.1 client, whatever its length.
    let size = match body.may_have_trailers() && version == Version::Http11 {
        true => None,
        false => body.size_hint(),
    };
    let outgoing = response_body(code, is_head, version, size);
    let date = *date.get_or_insert_with(crate::server::clock::date);
    let key = HeadKey { status: code, version, close: !keep_alive, length: outgoing.length };
    // A head like the last one this worker encoded is copied from it, with a fresh Date.
    let mut template = worker.head_template.borrow_mut();
    if !template.write(key, res.headers(), &date, wbuf) {
        let head = ResponseHeadOut {
            request_version: version,
            close: !keep_alive,
            date: Some(&date),
            ..ResponseHeadOut::new(code, &[])
        };
        // The server owns framing: Content-Length and Transfer-Encoding follow from the body.
        // `HeaderName` and `HeaderValue` guarantee the fields' syntax, so the encoder does not
        // check them again.
        let fields = res
            .headers()
            .iter()
            .filter(|(n, _)| written(n))
            .map(|(n, v)| (n.as_str(), v.as_bytes()));
        let start = wbuf.len();
        if encode_head_typed(&head, fields, outgoing.length, wbuf).is_err() {
            // The handler built a response that cannot be sent (a bad status, or content on a
            // 1xx/204): answer 500 instead, and close.
            let head = ResponseHeadOut { close: true, ..ResponseHeadOut::new(500, &[]) };
            let head = ResponseHeadOut { request_version: version, date: Some(&date), ..head };
            let _ = encode_head(&head, BodyLength::Length(0), wbuf);
            return Err(Close::Done);
        }
        template.keep(key, res.headers(), &wbuf[start..]);
    }
    drop(template);
    if !outgoing.send {
        return Ok((None, 0));
    }
    match body.into_full() {
        // The common case: static or owned bytes, copied after the head.
        Ok(bytes) if bytes.len() < COPY_MAX => {
            wbuf.extend_from_slice(&bytes);
            Ok((None, bytes.len() as u64))
        }
        Ok(bytes) => Ok((Some((Body::from(bytes), outgoing.length)), 0)),
        Err(body) => Ok((Some((body, outgoing.length)), 0)),
    }
}

/// An error response's body, as bytes for the write buffer: a short reason.
pub(super) fn error_response(status: http::StatusCode, reason: &'static str) -> Response {
    Response::with_status(status, Bytes::from_static(reason.as_bytes()))
}
