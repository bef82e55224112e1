//! A handler's response onto an HTTP/2 stream: the head (HPACK-encoded straight into the
//! connection's send buffer), then the body as the flow-control windows allow.

use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http::StatusCode;

use super::head_cache::HeadCache;
use super::tasks::Out;
use crate::body::FileSpan;
use crate::date::ImfFixdate;
use crate::decimal::Decimal;
use crate::http2::{Conn, StreamId};
use crate::response::Response;

/// Field names that are connection-specific in HTTP/1.1 and must not appear in an HTTP/2
/// message (RFC 9113 §8.2.2): a handler that sets them has them dropped, not sent.
/// `content-length` is dropped too: the server writes it from the body.
pub(in crate::server) fn dropped(name: &http::HeaderName) -> bool {
    use http::header::{CONNECTION, CONTENT_LENGTH, TE, TRANSFER_ENCODING, UPGRADE};
    name == CONNECTION
        || name == TRANSFER_ENCODING
        || name == UPGRADE
        || name == TE
        || name == CONTENT_LENGTH
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
}

/// The answer to a handler that panicked.
pub(in crate::server) fn internal_error() -> Response {
    Response::with_status(
        StatusCode::INTERNAL_SERVER_ERROR,
        Bytes::from_static(b"internal server error"),
    )
}

/// Sends the response head on `stream` (a handler's invalid status becomes 500 in `res`);
/// returns the body still to send (`Out::None`: the head
/// ended the stream). `head_only`: the request was HEAD.
///
/// # Errors
/// The stream is gone (the peer reset it): nothing to send.
pub(super) fn send_head(
    conn: &mut Conn,
    stream: StreamId,
    res: &mut Response,
    head_only: bool,
    date: &ImfFixdate,
    cache: &mut HeadCache,
) -> Result<Out, ()> {
    let mut status = res.status().as_u16();
    // A final response has a status of 200..=599 (RFC 9113 §8.1; 1xx are interim, and 101 does
    // not exist in HTTP/2, §8.6): a handler's other status is answered 500.
    if !(200..=599).contains(&status) {
        *res = internal_error();
        status = 500;
    }
    let body = std::mem::take(res.body_mut());
    let size = body.size_hint();
    // RFC 9110 §6.4.1, §9.3.2: no content for 204 and 304, nor in the answer to HEAD; HEAD and
    // 304 still announce the length the content would have had (§8.6).
    let send_body = !(head_only || status == 204 || status == 304);
    let digits = size.filter(|_| status != 204).map(Decimal::new);
    let length = digits.as_ref().map(Decimal::as_bytes);
    let fields = || {
        res.headers()
            .iter()
            .filter(|(n, _)| !dropped(n))
            .map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes()))
            .chain(std::iter::once((&b"date"[..], &date.as_bytes()[..])))
            .chain(length.map(|l| (&b"content-length"[..], l)))
    };
    let end = !send_body || size == Some(0);
    // The same head as the last one, the table unchanged: the same bytes (see `HeadCache`).
    match cache.get(status, fields(), conn) {
        Some(block) => conn.send_response_block(stream, block, end).map_err(|_| ())?,
        None => {
            conn.send_response(stream, status, fields(), end).map_err(|_| ())?;
            cache.keep(status, fields(), conn);
        }
    }
    if end {
        return Ok(Out::None);
    }
    // A body with trailers goes the streamed way, which ends with them.
    Ok(match body.into_full() {
        Ok(bytes) => Out::Bytes(bytes),
        Err(body) => Out::Body(body, Bytes::new(), size),
    })
}

/// Octets of a file read per positioned read batch: the driver does blocking reads on its
/// own thread, so each is kept brief (as `Body::poll_chunk` does for other drivers).
const FILE_CHUNK: usize = 64 * 1024;

/// What [`send_more`] did.
pub(super) enum Sent {
    /// Bytes went; more may follow.
    Progress,
    /// The windows are shut: the stream waits for `Writable`.
    Blocked,
    /// The body has nothing yet: its waker will call.
    Waiting,
    /// The response is complete (END_STREAM sent).
    Done,
    /// The body failed, or broke its declared length: the stream must be reset.
    Failed,
}

/// Sends what the windows allow of a response body, polling a streamed body for more.
pub(super) fn send_more(
    conn: &mut Conn,
    stream: StreamId,
    out: &mut Out,
    cx: &mut Context<'_>,
    sent: &mut u64,
) -> Sent {
    let mut progress = false;
    loop {
        match out {
            Out::None => return Sent::Done,
            Out::Bytes(bytes) => {
                let Ok(n) = conn.send_data(stream, bytes, true) else { return Sent::Failed };
                bytes.advance(n);
                *sent += n as u64;
                if bytes.is_empty() {
                    *out = Out::None;
                    return Sent::Done;
                }
                return if n > 0 { Sent::Progress } else { Sent::Blocked };
            }
            Out::Body(body, rest, left) => {
                if !rest.is_empty() {
                    // The chunk that completes a declared length ends the stream with it,
                    // unless trailers are to follow.
                    let last = *left == Some(0) && !body.may_have_trailers();
                    let Ok(n) = conn.send_data(stream, rest, last) else { return Sent::Failed };
                    rest.advance(n);
                    *sent += n as u64;
                    progress |= n > 0;
                    if !rest.is_empty() {
                        return if progress { Sent::Progress } else { Sent::Blocked };
                    }
                    if last {
                        *out = Out::None;
                        return Sent::Done;
                    }
                }
                let trailers = body.may_have_trailers();
                if let Some(span) = body.file_span_mut().filter(|s| s.remaining() > 0) {
                    match send_file(conn, stream, span, trailers, left, sent) {
                        Sent::Done => *out = Out::None,
                        Sent::Blocked if progress => return Sent::Progress,
                        other => return other,
                    }
                    return Sent::Done;
                }
                match body.poll_chunk(cx) {
                    Poll::Ready(Some(Ok(chunk))) => {
                        if let Some(left) = left {
                            // More than the declared length would break the framing the
                            // content-length announced.
                            let Some(l) = left.checked_sub(chunk.len() as u64) else {
                                return Sent::Failed;
                            };
                            *left = l;
                        }
                        *rest = chunk;
                    }
                    Poll::Ready(None) => {
                        // Fewer bytes than declared: the message cannot be completed.
                        if left.is_some_and(|l| l != 0) {
                            return Sent::Failed;
                        }
                        // RFC 9113 §8.1: trailers, if any, end the stream in a HEADERS frame.
                        let sent = match body.take_trailers() {
                            Some(trailers) => {
                                let fields = trailers
                                    .iter()
                                    .filter(|(n, _)| !dropped(n) && **n != http::header::TRAILER)
                                    .map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes()));
                                conn.send_trailers(stream, fields).is_ok()
                            }
                            None => conn.send_data(stream, &[], true).is_ok(),
                        };
                        if !sent {
                            return Sent::Failed;
                        }
                        *out = Out::None;
                        return Sent::Done;
                    }
                    Poll::Ready(Some(Err(_))) => return Sent::Failed,
                    Poll::Pending => {
                        return if progress { Sent::Progress } else { Sent::Waiting };
                    }
                }
            }
        }
    }
}

/// Sends what the windows allow of a file body, read straight into the DATA frames in the
/// connection's send buffer: no chunk is allocated, filled and then copied into frames (a
/// copy that was 16 % of the server's CPU serving a 1 MiB file over h2c). The last octets end
/// the stream unless trailers follow (then `send_more` sends them once the span is done).
fn send_file(
    conn: &mut Conn,
    stream: StreamId,
    span: &mut FileSpan,
    trailers: bool,
    left: &mut Option<u64>,
    sent: &mut u64,
) -> Sent {
    let mut progress = false;
    while span.remaining() > 0 {
        let remaining = span.remaining();
        let want = usize::try_from(remaining).unwrap_or(usize::MAX).min(FILE_CHUNK);
        let last = want as u64 == remaining && !trailers;
        let Ok(n) =
            conn.send_data_with(stream, want, last, |payload| span.read_into(payload).is_ok())
        else {
            return Sent::Failed;
        };
        *sent += n as u64;
        if let Some(left) = left {
            *left = left.saturating_sub(n as u64);
        }
        progress |= n > 0;
        if n < want {
            return if progress { Sent::Progress } else { Sent::Blocked };
        }
        if last {
            return Sent::Done;
        }
    }
    // The span is done but trailers are owed: `send_more` sends them next.
    Sent::Progress
}
