//! A handler's response into HTTP/1.1 bytes: the head for the plan the wire state decides
//! (framing, persistence), copied from the worker's last response head when it repeats it, and
//! the body when it is complete and small.

use bytes::Bytes;

use super::last_response::{HeadKey, written};
use super::{Close, H1Conn};
use crate::body::Body;
use crate::date::ImfFixdate;
use crate::handler::Handler;
use crate::http1;
use crate::http1::encode::{ResponseHeadOut, encode_head, encode_head_typed};
use crate::http1::framing::BodyLength;
use crate::response::Response;
use crate::server::metrics::WorkerMetrics;
use crate::server::worker::Worker;

/// Body chunks at least this large are written straight from their `Bytes`, not copied.
pub(super) const COPY_MAX: usize = 16 * 1024;

/// A body still to be written after its head: the body, and the framing its head announced.
pub(super) type Rest = Option<(Body, BodyLength)>;

impl<H: Handler> H1Conn<H> {
    /// Encodes `res` into the write buffer; see [`encode_response`]. Counts it when metrics
    /// are on (a response that cannot be sent goes out as a 500).
    pub(super) fn encode_response(&mut self, res: &mut Response) -> Result<(Rest, u64), Close> {
        let status = res.status().as_u16();
        let encoded =
            encode_response(&mut self.conn, &mut self.wbuf, &mut self.date, &self.worker, res);
        if let Some(metrics) = &self.worker.metrics {
            count_response(metrics, status, &encoded);
        }
        encoded
    }
}

/// Encodes `res` into `wbuf` under the wire state's plan, with its body when it is complete
/// and small. Returns the body still to be streamed, if any, and the content bytes written now.
///
/// Synchronous on purpose: the response is consumed here and never held across a wait, which
/// keeps the connection small. Taken by reference so the caller's response is not copied in.
/// The Date is read once per batch of requests: `date` is cleared after every read and every
/// handler that had to wait.
///
/// # Errors
/// `Close::Done` when the handler built a response that cannot be sent (a bad status, a `101`
/// not asked for): a 500 is queued instead, and the connection closes after it.
fn encode_response(
    conn: &mut http1::conn::Conn,
    wbuf: &mut Vec<u8>,
    date: &mut Option<ImfFixdate>,
    worker: &Worker,
    res: &mut Response,
) -> Result<(Rest, u64), Close> {
    let code = res.status().as_u16();
    if wbuf.capacity() == 0 {
        *wbuf = worker.buffers.take_write();
    }
    let body = std::mem::take(res.body_mut());
    // Trailers travel only in the chunked coding's trailer section (RFC 9112 §7.1.2).
    let trailers = body.may_have_trailers();
    let size = body.size_hint();
    let date = *date.get_or_insert_with(crate::server::clock::date);
    let full = body.into_full();
    // The common case: static or owned bytes, copied after the head.
    let small: Option<&Bytes> = full.as_ref().ok().filter(|b| b.len() < COPY_MAX);
    let headers = res.headers();
    let mut copied = 0;
    let sent = conn.send_response(code, size, trailers, wbuf, |plan, out| {
        let key = HeadKey::of(plan);
        // A head like the last one this worker encoded is copied from it, with a fresh Date.
        let mut last = worker.last_response.borrow_mut();
        if !last.write(key, headers, &date, out) {
            let head = ResponseHeadOut {
                request_version: plan.version,
                close: plan.close,
                date: Some(&date),
                ..ResponseHeadOut::new(plan.status, &[])
            };
            // The server owns framing: Content-Length and Transfer-Encoding follow from the
            // body. `HeaderName` and `HeaderValue` guarantee the fields' syntax, so the encoder
            // does not check them again.
            let fields =
                headers.iter().filter(|(n, _)| written(n)).map(|(n, v)| (n.as_str(), v.as_bytes()));
            let start = out.len();
            encode_head_typed(&head, fields, plan.length, out)?;
            last.keep(key, headers, &out[start..]);
        }
        match small {
            Some(bytes) if plan.send_body => {
                out.extend_from_slice(bytes);
                copied = bytes.len() as u64;
                Ok(copied)
            }
            _ => Ok(0),
        }
    });
    let plan = match sent {
        Ok(plan) => plan,
        Err(_) => {
            // The handler built a response that cannot be sent: answer 500 instead, and close.
            conn.shutdown();
            let _ = conn.send_response(500, Some(0), false, wbuf, |plan, out| {
                let head = ResponseHeadOut {
                    request_version: plan.version,
                    close: true,
                    date: Some(&date),
                    ..ResponseHeadOut::new(500, &[])
                };
                encode_head(&head, BodyLength::Length(0), out)?;
                Ok(0)
            });
            return Err(Close::Done);
        }
    };
    if !plan.send_body || small.is_some() {
        return Ok((None, copied));
    }
    let body = match full {
        Ok(bytes) => Body::from(bytes),
        Err(body) => body,
    };
    Ok((Some((body, plan.length)), 0))
}

/// Counts an encoded response. Out of line: the wrapper that calls it is inlined at every
/// place a response is encoded, and without metrics none of this code runs.
#[inline(never)]
fn count_response(metrics: &WorkerMetrics, status: u16, encoded: &Result<(Rest, u64), Close>) {
    match encoded {
        Ok((_, n)) => metrics.response(status, *n),
        Err(_) => metrics.response(500, 0),
    }
}

/// An error response's body, as bytes for the write buffer: a short reason.
pub(super) fn error_response(status: http::StatusCode, reason: &'static str) -> Response {
    Response::with_status(status, Bytes::from_static(reason.as_bytes()))
}
