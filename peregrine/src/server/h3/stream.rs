//! One request stream: its message read through the connection's state, the handler run,
//! the response written (RFC 9114 §4.1).

use std::future::poll_fn;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use bytes::Bytes;

use super::Shared;
use crate::body::{Body, BodySender};
use crate::decimal::Decimal;
use crate::handler::Handler;
use crate::http3::conn::{Conn, Message, MessageEvent};
use crate::http3::{Code, Error, StreamId};
use crate::request::{H2Head, Peer, Request};
use crate::response::IntoResponse;
use crate::server::access_log::LogState;
use crate::server::call::poll_handler;
use crate::server::h2::respond::{dropped, internal_error};
use crate::server::service::Service;
use crate::server::worker::Worker;

/// Request body chunks queued for the handler before the stream stops being read.
const BODY_QUEUE: usize = 8;
/// The most octets read from the stream at once.
const READ_CHUNK: usize = 64 * 1024;

/// Why a stream ended early.
enum Stop {
    /// The stream failed with this error (stream: reset it; connection: close).
    Error(Error),
    /// The peer cancelled the request (RESET_STREAM on it, RFC 9114 §4.1.1): nothing to
    /// answer, and the rapid-reset budget pays for it.
    Cancelled,
    /// The peer went away: nothing to answer.
    Gone,
}

/// Serves the request on stream `id`.
pub(super) async fn serve<H: Handler>(
    shared: Rc<Shared>,
    service: Rc<Service<H>>,
    worker: Rc<Worker>,
    id: StreamId,
    mut send: quinn::SendStream,
    mut recv: quinn::RecvStream,
) {
    let mut msg = shared.conn.borrow().message(id);
    let read = tokio::time::timeout(
        worker.config.header_read_timeout,
        read_head(&shared, &mut msg, &mut recv),
    );
    let outcome = match read.await {
        Ok(r) => r,
        // The head did not come in time: the request is cancelled (§4.1.1).
        Err(_) => Err(Stop::Error(Error::stream(id, Code::H3_REQUEST_REJECTED))),
    };
    let (request, declared, rest, fin) = match outcome {
        Ok(head) => head,
        Err(stop) => {
            fail(&shared, &mut msg, stop, &mut send, &mut recv);
            return finish(&shared);
        }
    };
    let mut request = request;
    request.remote_addr = Some(Peer::Direct(shared.quic.remote_address()));
    request.secure = true;
    let is_head = request.method() == crate::Method::Head;
    let mut log = worker.access_log.as_ref().map(|_| {
        let mut state = LogState::default();
        state.start(request.raw_head(), request.spans());
        state
    });
    // The body: empty when the stream ended with the head; else pumped from the stream
    // while the handler runs.
    let pump = if fin {
        None
    } else {
        let (tx, body) = Body::channel(BODY_QUEUE);
        *request.body_mut() = body;
        Some((tx, rest))
    };
    // The health and metrics endpoints and the fixed answers answer `GET` and `HEAD` without a
    // body before any handler, as over HTTP/1.1 and HTTP/2.
    let ops = worker
        .ops
        .as_deref()
        .filter(|_| fin && matches!(request.method(), crate::Method::Get | crate::Method::Head));
    let mut fixed = ops.and_then(|ops| ops.answer(request.path().as_bytes()));
    // RFC 9110 §15.5.14: a declared body past the limit is refused before the handler runs.
    let limit = worker.config.max_body_bytes;
    if declared.is_some_and(|n| n > limit) {
        fixed =
            Some(crate::Response::with_status(http::StatusCode::PAYLOAD_TOO_LARGE, Body::empty()));
    }
    let handler = async {
        match fixed {
            Some(response) => response,
            None => run_handler(&service, request).await,
        }
    };
    // STOP_SENDING on the response while the handler runs: the request is cancelled (RFC
    // 9114 §4.1.1), and the handler is dropped as over HTTP/2 (quinn answers with
    // RESET_STREAM, RFC 9000 §3.5).
    let mut stopped = pin!(peer_stopped(send.stopped()));
    let response = match pump {
        None => {
            tokio::select! {
                response = handler => response,
                () = &mut stopped => {
                    cancelled(&shared, &mut msg);
                    return finish(&shared);
                }
            }
        }
        Some((tx, rest)) => {
            let mut handler = pin!(handler);
            let limit = worker.config.max_body_bytes;
            let ended = {
                let mut pumping = pin!(pump_body(&shared, &mut msg, &mut recv, tx, rest, limit));
                let mut pumped = false;
                loop {
                    tokio::select! {
                        response = &mut handler => break Ok(response),
                        () = &mut stopped => break Err(Stop::Cancelled),
                        stop = &mut pumping, if !pumped => {
                            pumped = true;
                            match stop {
                                // A malformed body, or one that will never end: the handler
                                // is dropped.
                                Err(e @ (Stop::Error(_) | Stop::Cancelled)) => break Err(e),
                                Ok(()) | Err(Stop::Gone) => {}
                            }
                        }
                    }
                }
            };
            match ended {
                Ok(response) => response,
                Err(Stop::Error(e)) => {
                    reset(&shared, e, &mut send);
                    return finish(&shared);
                }
                Err(_) => {
                    cancelled(&shared, &mut msg);
                    let _ = send.reset(varint(Code::H3_REQUEST_CANCELLED));
                    return finish(&shared);
                }
            }
        }
    };
    if !msg.is_done() {
        // The handler answered before the request's end: we stop reading (§4.1.1: "a server
        // can send a complete response prior to the client sending an entire request ...
        // [and] request that the client abort transmission of a request without error by
        // sending a STOP_SENDING with error code H3_NO_ERROR").
        shared.conn.borrow_mut().cancel_message(&mut msg);
        let _ = recv.stop(varint(Code::H3_NO_ERROR));
        shared.out.notify_one();
    }
    let status = response.status().as_u16();
    if let Some(state) = &mut log {
        state.responded(status);
    }
    let sent = match respond(&shared, &worker, id, response, is_head, &mut send).await {
        Ok(sent) => Some(sent),
        Err(Unsent::Stopped) => {
            cancelled(&shared, &mut msg);
            None
        }
        Err(Unsent::Failed) => None,
    };
    if let (Some(state), Some(access)) = (&mut log, &worker.access_log) {
        state.bytes = sent.unwrap_or(0);
        state.emit(access, shared.quic.remote_address());
    }
    finish(&shared);
}

fn finish(shared: &Shared) {
    shared.live.set(shared.live.get().saturating_sub(1));
    if shared.live.get() == 0 {
        shared.idle.notify_waiters();
    }
}

fn varint(code: Code) -> quinn::VarInt {
    quinn::VarInt::from_u64(u64::from(code)).unwrap_or(quinn::VarInt::MAX)
}

fn reset(shared: &Shared, e: Error, send: &mut quinn::SendStream) {
    match e {
        Error::Stream { code, .. } => {
            let _ = send.reset(varint(code));
        }
        e => shared.fail(e),
    }
}

fn fail(
    shared: &Shared,
    msg: &mut Message,
    stop: Stop,
    send: &mut quinn::SendStream,
    recv: &mut quinn::RecvStream,
) {
    match stop {
        Stop::Error(e) => {
            shared.conn.borrow_mut().cancel_message(msg);
            shared.out.notify_one();
            if let Error::Stream { code, .. } = e {
                let _ = recv.stop(varint(code));
            }
            reset(shared, e, send);
        }
        Stop::Cancelled => {
            cancelled(shared, msg);
            let _ = send.reset(varint(Code::H3_REQUEST_CANCELLED));
        }
        Stop::Gone => {
            shared.conn.borrow_mut().cancel_message(msg);
            shared.out.notify_one();
        }
    }
}

/// The peer cancelled the request before our response was complete: the message is
/// forgotten, and the rapid-reset budget pays; spent, the connection closes.
fn cancelled(shared: &Shared, msg: &mut Message) {
    let r = {
        let mut conn = shared.conn.borrow_mut();
        conn.cancel_message(msg);
        conn.peer_cancelled(std::time::Instant::now())
    };
    shared.out.notify_one();
    if let Err(e) = r {
        shared.fail(e);
    }
}

/// Completes when the peer asks us to stop sending the response (STOP_SENDING); never when
/// the stream ends otherwise or the connection goes (nothing to cancel then).
async fn peer_stopped(
    stopped: impl Future<Output = Result<Option<quinn::VarInt>, quinn::StoppedError>>,
) {
    if let Ok(Some(_)) = stopped.await {
        return;
    }
    std::future::pending().await
}

/// The next piece of the stream: bytes, and whether the stream ended after them.
async fn next_chunk(recv: &mut quinn::RecvStream) -> Result<(Bytes, bool), Stop> {
    match recv.read_chunk(READ_CHUNK, true).await {
        Ok(Some(chunk)) => Ok((chunk.bytes, false)),
        Ok(None) => Ok((Bytes::new(), true)),
        Err(quinn::ReadError::Reset(_)) => Err(Stop::Cancelled),
        Err(_) => Err(Stop::Gone),
    }
}

/// Waits until the stream's blocked section can be decoded, and decodes it.
async fn resume(shared: &Shared, msg: &mut Message) -> Result<MessageEvent, Stop> {
    loop {
        let mut woken = pin!(shared.unblocked.notified());
        woken.as_mut().enable();
        let r = shared.conn.borrow_mut().resume_message(msg);
        shared.out.notify_one();
        match r {
            Ok(Some(MessageEvent::Blocked)) | Ok(None) => {}
            Ok(Some(event)) => return Ok(event),
            Err(e) => return Err(Stop::Error(e)),
        }
        tokio::select! {
            () = woken => {}
            _ = shared.quic.closed() => return Err(Stop::Gone),
        }
    }
}

/// Reads the stream up to its head and builds the request. Returns it, its content-length,
/// the bytes read past the head, and whether the stream ended with them.
async fn read_head(
    shared: &Shared,
    msg: &mut Message,
    recv: &mut quinn::RecvStream,
) -> Result<(Request, Option<u64>, Bytes, bool), Stop> {
    loop {
        let (mut bytes, fin) = next_chunk(recv).await?;
        loop {
            let r = shared.conn.borrow_mut().recv_message(msg, &bytes, fin);
            let (n, event) = r.map_err(Stop::Error)?;
            bytes = bytes.slice(n..);
            let event = match event {
                None => break,
                Some(MessageEvent::Blocked) => resume(shared, msg).await?,
                Some(event) => event,
            };
            if event == MessageEvent::Head {
                let request = build_request(shared);
                let declared = shared.conn.borrow().section().content_length();
                shared.out.notify_one();
                // Whether the stream ends with the head: the rest of this chunk, or a
                // next chunk that is already here, says so.
                let mut fin = fin && bytes.is_empty();
                if !fin && bytes.is_empty() {
                    let mut peek = pin!(next_chunk(recv));
                    if let Poll::Ready(r) = poll_fn(|cx| Poll::Ready(peek.as_mut().poll(cx))).await
                    {
                        let (more, end) = r?;
                        bytes = more;
                        fin = end && bytes.is_empty();
                        if end && !bytes.is_empty() {
                            // Bytes and the end: the pump sees the end after them.
                            return Ok((request, declared, bytes, false));
                        }
                    }
                }
                if fin {
                    // The message's End event (content-length checked).
                    let r = shared.conn.borrow_mut().recv_message(msg, &[], true);
                    r.map_err(Stop::Error)?;
                }
                return Ok((request, declared, bytes, fin));
            }
            // Nothing else precedes a request's head (a server never sees 1xx).
        }
        if fin {
            return Err(Stop::Gone);
        }
    }
}

/// A request from the head in the connection's section.
fn build_request(shared: &Shared) -> Request {
    let conn = shared.conn.borrow();
    let section = conn.section();
    let head = H2Head {
        version: crate::Version::Http3,
        method: section.method().unwrap_or_default(),
        path: section.path(),
        authority: section
            .authority()
            .or_else(|| section.fields().find(|f| f.name == b"host").map(|f| f.value)),
        protocol: None,
        fields: section.fields().map(|f| (f.name, f.value)),
    };
    let mut arena = shared.arena.borrow_mut();
    if arena.capacity() - arena.len() < 4096 {
        // The split-off heads of earlier requests keep the old buffer alive while used.
        *arena = bytes::BytesMut::with_capacity(64 * 1024);
    }
    Request::from_h2(&mut arena, head, Body::empty())
}

/// Moves the rest of the request body from the stream to the handler's channel.
async fn pump_body(
    shared: &Shared,
    msg: &mut Message,
    recv: &mut quinn::RecvStream,
    tx: BodySender,
    mut bytes: Bytes,
    limit: u64,
) -> Result<(), Stop> {
    let mut fin = false;
    let mut received = 0u64;
    loop {
        loop {
            let r = shared.conn.borrow_mut().recv_message(msg, &bytes, fin);
            let (n, event) = r.map_err(Stop::Error)?;
            let event = match event {
                None => break,
                Some(MessageEvent::Blocked) => resume(shared, msg).await?,
                Some(event) => event,
            };
            match event {
                MessageEvent::Data(range) => {
                    received += range.len() as u64;
                    if received > limit {
                        // Past the body limit: the handler sees the body fail, the client a
                        // reset asking it to stop (our budget, not its mistake).
                        tx.abort().await;
                        return Err(Stop::Error(Error::stream(
                            msg.stream(),
                            Code::H3_EXCESSIVE_LOAD,
                        )));
                    }
                    // Zero copy: the chunk shares quinn's buffer.
                    let sent = tx.send(bytes.slice(range)).await;
                    if sent.is_err() {
                        return Err(Stop::Gone);
                    }
                }
                MessageEvent::Trailers => {
                    let trailers = trailers(&shared.conn.borrow());
                    shared.out.notify_one();
                    bytes = bytes.slice(n..);
                    let r = shared.conn.borrow_mut().recv_message(msg, &bytes, fin);
                    r.map_err(Stop::Error)?;
                    if !msg.is_done() {
                        // The end has not come yet: read to it first.
                        continue;
                    }
                    let _ = tx.finish(trailers).await;
                    return Ok(());
                }
                MessageEvent::End => return Ok(()),
                _ => {}
            }
            bytes = bytes.slice(n..);
        }
        if fin {
            return Ok(());
        }
        (bytes, fin) = next_chunk(recv).await?;
    }
}

fn trailers(conn: &Conn) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    for f in conn.section().fields() {
        if let (Ok(n), Ok(v)) =
            (http::HeaderName::from_bytes(f.name), http::HeaderValue::from_bytes(f.value))
        {
            map.append(n, v);
        }
    }
    map
}

/// Runs the handler on `request`; a panic answers 500.
async fn run_handler<H: Handler>(service: &Service<H>, request: Request) -> crate::Response {
    let mut boxed = service.call(request);
    let out = poll_fn(|cx| poll_handler(&mut boxed, cx, IntoResponse::into_response)).await;
    service.put(boxed);
    out.unwrap_or_else(|_| internal_error())
}

/// Why a response was not sent whole.
enum Unsent {
    /// The peer asked us to stop (STOP_SENDING): it cancelled the request.
    Stopped,
    /// A write timed out, the body failed, or the connection went.
    Failed,
}

impl From<quinn::WriteError> for Unsent {
    fn from(e: quinn::WriteError) -> Unsent {
        match e {
            quinn::WriteError::Stopped(_) => Unsent::Stopped,
            _ => Unsent::Failed,
        }
    }
}

/// Writes `response` on the stream: HEADERS, DATA, trailers. Returns the body octets sent.
async fn respond(
    shared: &Shared,
    worker: &Worker,
    id: StreamId,
    mut response: crate::Response,
    is_head: bool,
    send: &mut quinn::SendStream,
) -> Result<u64, Unsent> {
    let mut status = response.status().as_u16();
    // §4.5 / RFC 9110 §15: a final status is 200..=599 (101 does not exist in HTTP/3).
    if !(200..=599).contains(&status) {
        response = internal_error();
        status = 500;
    }
    let mut body = std::mem::take(response.body_mut());
    let size = body.size_hint();
    // RFC 9110 §6.4.1, §9.3.2: no content for 204 and 304, nor in the answer to HEAD.
    let send_body = !(is_head || status == 204 || status == 304);
    let digits = size.filter(|_| status != 204).map(Decimal::new);
    let date = crate::server::clock::date();
    let mut out = Vec::new();
    {
        let fields = response
            .headers()
            .iter()
            .filter(|(n, _)| !dropped(n))
            .map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes()))
            .chain(std::iter::once((&b"date"[..], &date.as_bytes()[..])))
            .chain(digits.as_ref().map(|d| (&b"content-length"[..], d.as_bytes())));
        shared.conn.borrow_mut().encode_response(id, status, fields, &mut out);
    }
    shared.out.notify_one();
    let timeout = worker.config.write_timeout;
    // Each write must make progress within the write timeout (a client that stops reading).
    let write = async {
        within(timeout, send.write_all(&out)).await?;
        let mut sent = 0u64;
        if send_body {
            while let Some(chunk) = poll_fn(|cx| body.poll_chunk(cx)).await {
                let chunk = chunk.map_err(|_| Unsent::Failed)?;
                if chunk.is_empty() {
                    continue;
                }
                out.clear();
                Conn::encode_data_head(chunk.len(), &mut out);
                sent += chunk.len() as u64;
                // The frame header copied, the payload handed over as it is (no copy).
                within(timeout, send.write_all(&out)).await?;
                within(timeout, send.write_chunk(chunk)).await?;
            }
            if let Some(trailers) = body.take_trailers() {
                out.clear();
                let fields = trailers
                    .iter()
                    .filter(|(n, _)| !dropped(n))
                    .map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes()));
                shared.conn.borrow_mut().encode_trailers(id, fields, &mut out);
                shared.out.notify_one();
                within(timeout, send.write_all(&out)).await?;
            }
        }
        send.finish().map_err(|_| Unsent::Failed)?;
        Ok(sent)
    };
    let r = write.await;
    if let Err(Unsent::Failed) = r {
        let _ = send.reset(varint(Code::H3_INTERNAL_ERROR));
    }
    r
}

/// One write, which must complete within `timeout`.
async fn within(
    timeout: std::time::Duration,
    write: impl Future<Output = Result<(), quinn::WriteError>>,
) -> Result<(), Unsent> {
    match tokio::time::timeout(timeout, write).await {
        Ok(r) => Ok(r?),
        Err(_) => Err(Unsent::Failed),
    }
}
