//! One HTTP/1.1 connection: read, parse, dispatch, encode, write, until it closes.
//!
//! Requests are handled one at a time in arrival order (RFC 9112 §9.3.2: responses to
//! pipelined requests go out in the same order). Their responses collect in one write buffer
//! that is flushed only when no complete request is left in the read buffer, so a pipelined
//! batch read at once is answered with one write.
//!
//! The handler's future is polled inline, inside this connection's future (which is generic
//! over the handler): no allocation per request. While waiting for the next request the
//! connection hands its empty buffers back to the worker's pool, so an idle connection holds
//! only its task and socket.

use std::future::{Future, poll_fn};
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http::StatusCode;
use tokio::io::Interest;
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::incoming::ConnIo;
use super::runtime::{Admitted, Worker};
use crate::Method;
use crate::body::{Body, BodyErrorKind};
use crate::date::ImfFixdate;
use crate::handler::Handler;
use crate::http1::chunked::{CRLF, encode_chunk, encode_chunk_head, encode_last_chunk};
use crate::http1::encode::{ResponseHead, encode_head};
use crate::http1::framing::{BodyLength, RequestFraming, request_framing};
use crate::http1::{EMPTY_HEADER, HeadScanner, Limits, ParseError, RequestHead, Status, Version};
use crate::request::{HeadSpans, Request};
use crate::response::{HeaderList, IntoResponse, Response};

/// Header slots on the stack for the first parse attempt; a head with more fields (up to
/// `Limits::max_headers`) is parsed again into a heap array.
const STACK_HEADERS: usize = 32;

/// Flush the write buffer once it holds this much, even mid-batch.
const FLUSH_AT: usize = 64 * 1024;

/// Body chunks at least this large are written straight from their `Bytes`, not copied.
const COPY_MAX: usize = 16 * 1024;

/// Upper bound on the lingering close (reading what the client still sends after our last
/// response, so the kernel does not answer it with a reset that destroys that response).
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 64 * 1024;

/// Why the connection stops; the socket closes either way.
#[derive(Debug)]
enum Close {
    /// Orderly: the response said `Connection: close`, or a timeout, or shutdown.
    Done,
    /// The peer went away or the socket failed.
    Io,
}

impl From<io::Error> for Close {
    fn from(_: io::Error) -> Close {
        Close::Io
    }
}

/// The result of running the handler.
// Boxing the large variant would allocate per request; these values live on the stack.
#[allow(clippy::large_enum_variant)]
enum Outcome {
    Response(Response),
    Panicked,
    BodyTimedOut,
}

/// A parsed head, or what stops it.
#[allow(clippy::large_enum_variant)]
enum Next {
    Request { spans: HeadSpans, framing: RequestFraming, len: usize },
    Partial,
    Error(ParseError),
}

/// Serves one accepted connection until it closes.
pub(crate) async fn serve<H: Handler>(stream: TcpStream, handler: Rc<H>, admitted: Admitted) {
    let worker = admitted.0.clone();
    let limits = worker.config.parser_limits();
    let mut conn = Conn {
        io: Rc::new(ConnIo::new(stream)),
        worker,
        handler,
        limits,
        scanner: HeadScanner::new(),
        wbuf: Vec::new(),
        wpos: 0,
        date: None,
    };
    let started = Instant::now();
    let mut sleep =
        pin!(tokio::time::sleep_until(started + conn.worker.config.header_read_timeout));
    match conn.run(&mut sleep, started).await {
        // The last response said `Connection: close`.
        Ok(()) => {
            if conn.flush(&mut sleep).await.is_ok() {
                conn.linger(&mut sleep).await;
            }
        }
        // Cut short (a timeout, a failed response body, shutdown): send what is queued.
        Err(Close::Done) => {
            let _ = conn.flush(&mut sleep).await;
        }
        Err(Close::Io) => {}
    }
    conn.release_buffers();
    drop(admitted);
}

struct Conn<H> {
    io: Rc<ConnIo>,
    worker: Rc<Worker>,
    handler: Rc<H>,
    limits: Limits,
    scanner: HeadScanner,
    wbuf: Vec<u8>,
    wpos: usize,
    /// The Date of the responses to the current batch.
    date: Option<ImfFixdate>,
}

impl<H: Handler> Conn<H> {
    /// The request loop. `Ok` carries the timer back for a lingering close after an orderly end.
    async fn run(&mut self, sleep: &mut Pin<&mut Sleep>, accepted: Instant) -> Result<(), Close> {
        // The first head is timed from the accept; later ones from their first bytes.
        let mut head_started = Some(accepted);
        let mut first = true;
        loop {
            let (spans, framing, len) = match self.parse_next() {
                Next::Request { spans, framing, len } => (spans, framing, len),
                Next::Error(e) => {
                    let status =
                        StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
                    let res = Response::with_status(status, e.reason());
                    self.queue_final(res, false)?;
                    return Ok(());
                }
                Next::Partial => {
                    let partial = !self.io.rbuf.borrow().is_empty();
                    let deadline = if partial || first {
                        // Slowloris defence: the whole head within header_read_timeout.
                        let since = *head_started.get_or_insert_with(Instant::now);
                        since + self.worker.config.header_read_timeout
                    } else {
                        Instant::now() + self.worker.config.keep_alive_timeout
                    };
                    self.wait_readable(sleep, deadline, partial).await?;
                    if !self.read()? {
                        // End of stream: between requests the client is done; inside a head
                        // there is nobody left to answer.
                        return Err(Close::Io);
                    }
                    continue;
                }
            };
            first = false;
            head_started = None;
            let head = self.io.rbuf.borrow_mut().split_to(len).freeze();
            if !self.dispatch(head, spans, framing, sleep).await? {
                return Ok(());
            }
        }
    }

    /// Parses the next head from the read buffer.
    fn parse_next(&mut self) -> Next {
        let buf = self.io.rbuf.borrow();
        if buf.is_empty() {
            return Next::Partial;
        }
        let limits = self.limits;
        let mut slots = [EMPTY_HEADER; STACK_HEADERS];
        let n = limits.max_headers.min(STACK_HEADERS);
        match self.scanner.parse(&buf, &mut slots[..n], &limits) {
            Err(ParseError::TooManyHeaders) if limits.max_headers > STACK_HEADERS => {
                let mut heap = vec![EMPTY_HEADER; limits.max_headers];
                next_of(&buf, self.scanner.parse(&buf, &mut heap, &limits))
            }
            parsed => next_of(&buf, parsed),
        }
    }

    /// Handles one request whose head was split off the buffer. `Ok(true)`: keep going.
    async fn dispatch(
        &mut self,
        head: Bytes,
        spans: HeadSpans,
        framing: RequestFraming,
        sleep: &mut Pin<&mut Sleep>,
    ) -> Result<bool, Close> {
        // Layout note: whatever is live across an `.await` here is part of every connection's
        // future, idle or not; the rare paths (pipelined requests with bodies, draining,
        // streamed bodies) box their futures instead.
        let version = spans.version();
        let is_head = spans.method() == Method::Head;
        let body_len = match framing.body {
            // RFC 9110 §15.5.14: refuse a declared length over the limit before reading it.
            BodyLength::Length(n) if n > self.worker.config.max_body_bytes => {
                let res = Response::with_status(StatusCode::PAYLOAD_TOO_LARGE, "body too large");
                self.queue_final(res, is_head)?;
                return Ok(false);
            }
            // Only responses may be delimited by close (RFC 9112 §6.3).
            BodyLength::CloseDelimited => {
                let res = Response::with_status(StatusCode::BAD_REQUEST, "invalid framing");
                self.queue_final(res, is_head)?;
                return Ok(false);
            }
            other => other,
        };
        let mut req = Request::from_parts(head, spans, Body::empty());
        let has_body = body_len != BodyLength::Length(0);
        if has_body && self.wpos < self.wbuf.len() {
            // `100 Continue` goes straight to the socket; earlier responses must precede it.
            Box::pin(self.flush(sleep)).await?;
        }
        // RFC 9110 §10.1.1: ignore 100-continue from an HTTP/1.0 client.
        let expect = framing.expect_continue && version == Version::Http11;
        if let Some(incoming) = self.io.start_body(body_len, expect, &self.worker.config) {
            *req.body_mut() = Body::incoming(incoming);
        }
        let (res, mut keep_alive) = match self.call(req, sleep).await {
            Outcome::Response(res) => (res, framing.keep_alive),
            Outcome::Panicked => (internal_error(), false),
            Outcome::BodyTimedOut => {
                self.io.fail_body(BodyErrorKind::TimedOut);
                (Response::with_status(StatusCode::REQUEST_TIMEOUT, "body too slow"), false)
            }
        };
        if self.io.body_error().is_some() || self.worker.draining() {
            keep_alive = false;
        }
        if keep_alive && !self.io.body_done() {
            // An unread body: read and drop it to reach the next request, unless the client
            // still waits for 100 (it may never send the body) or it is too large.
            keep_alive = !self.io.continue_unsent() && Box::pin(self.drain(sleep)).await;
        }
        self.io.end_body();
        if let Some((mut body, length)) = self.encode_response(res, is_head, version, keep_alive)? {
            Box::pin(self.write_body(&mut body, length, sleep)).await?;
            if length == BodyLength::CloseDelimited {
                return Err(Close::Done);
            }
        }
        if !keep_alive {
            self.flush(sleep).await?;
            return Ok(false);
        }
        if self.wbuf.len() >= FLUSH_AT {
            self.flush(sleep).await?;
        }
        Ok(true)
    }

    /// Encodes a response that ends the connection; its body must be complete (error
    /// responses carry a short reason).
    fn queue_final(&mut self, res: Response, is_head: bool) -> Result<(), Close> {
        match self.encode_response(res, is_head, Version::Http11, false)? {
            None => Ok(()),
            // A long body would need streaming; error responses never have one.
            Some(_) => Err(Close::Done),
        }
    }

    /// Runs the handler to completion, catching panics and enforcing the body data rate.
    async fn call(&mut self, req: Request, sleep: &mut Pin<&mut Sleep>) -> Outcome {
        let config = &self.worker.config;
        let io = &self.io;
        let date = &mut self.date;
        let mut fut = pin!(self.handler.call(req));
        poll_fn(|cx| {
            // A panic in the handler answers 500; this connection closes, the worker lives on.
            let polled = catch_unwind(AssertUnwindSafe(|| match fut.as_mut().poll(cx) {
                Poll::Ready(out) => Poll::Ready(out.into_response()),
                Poll::Pending => Poll::Pending,
            }));
            match polled {
                Ok(Poll::Ready(res)) => return Poll::Ready(Outcome::Response(res)),
                Err(_) => return Poll::Ready(Outcome::Panicked),
                Ok(Poll::Pending) => {}
            }
            // Time passes while the handler waits: its response gets a fresh Date.
            *date = None;
            if body_rate_expired(io, config, sleep, cx) {
                return Poll::Ready(Outcome::BodyTimedOut);
            }
            Poll::Pending
        })
        .await
    }

    /// Reads and discards the rest of the body, up to `max_drain_bytes`. True on success.
    async fn drain(&mut self, sleep: &mut Pin<&mut Sleep>) -> bool {
        let config = self.worker.config;
        if self.io.body_remaining().is_some_and(|n| n > config.max_drain_bytes) {
            return false;
        }
        let io = self.io.clone();
        let mut body = match io.current_body() {
            Some(incoming) => Body::incoming(incoming),
            None => return true,
        };
        let mut drained = 0u64;
        poll_fn(|cx| {
            loop {
                match body.poll_chunk(cx) {
                    Poll::Ready(None) => return Poll::Ready(true),
                    Poll::Ready(Some(Ok(chunk))) => {
                        drained += chunk.len() as u64;
                        if drained > config.max_drain_bytes {
                            return Poll::Ready(false);
                        }
                    }
                    Poll::Ready(Some(Err(_))) => return Poll::Ready(false),
                    Poll::Pending => {
                        if body_rate_expired(&io, &config, sleep, cx) {
                            return Poll::Ready(false);
                        }
                        return Poll::Pending;
                    }
                }
            }
        })
        .await
    }

    /// Encodes `res` into the write buffer, with its body when it is complete and small.
    /// Returns the body still to be streamed, if any.
    ///
    /// Synchronous on purpose: the response (a few hundred bytes) is consumed here and never
    /// held across an `.await`, which keeps the connection's future (and an idle connection's
    /// memory) small.
    fn encode_response(
        &mut self,
        res: Response,
        is_head: bool,
        version: Version,
        keep_alive: bool,
    ) -> Result<Option<(Body, BodyLength)>, Close> {
        let (status, headers, body) = res.into_parts();
        let code = status.as_u16();
        if self.wbuf.capacity() == 0 {
            self.wbuf = self.worker.buffers.take_write();
        }
        // RFC 9110 §6.4.1: 1xx, 204 and 304 responses have no content; HEAD gets the header
        // fields a GET would have had, Content-Length included, without the content (§9.3.2).
        let bodiless = status.is_informational() || code == 204 || code == 304;
        let length = match body.size_hint() {
            _ if status.is_informational() || code == 204 => BodyLength::Length(0),
            Some(n) => BodyLength::Length(n),
            None if version == Version::Http11 => BodyLength::Chunked,
            // An HTTP/1.0 client knows no chunked coding: the body ends with the connection.
            None => BodyLength::CloseDelimited,
        };
        let date = self.date();
        let encoded = with_fields(&headers, |fields| {
            let head = ResponseHead {
                status: code,
                request_version: version,
                headers: fields,
                close: !keep_alive,
                date: Some(&date),
                server: None,
            };
            encode_head(&head, length, &mut self.wbuf)
        });
        drop(headers);
        if encoded.is_err() {
            // The handler built a response that cannot be sent (a bad status, or content on a
            // 1xx/204): answer 500 instead, and close.
            let head = ResponseHead {
                request_version: version,
                close: true,
                date: Some(&date),
                ..ResponseHead::new(500, &[])
            };
            let _ = encode_head(&head, BodyLength::Length(0), &mut self.wbuf);
            return Err(Close::Done);
        }
        if is_head || bodiless {
            return Ok(None);
        }
        match body.into_full() {
            // The common case: static or owned bytes, copied after the head.
            Ok(bytes) if bytes.len() < COPY_MAX => {
                self.wbuf.extend_from_slice(&bytes);
                Ok(None)
            }
            Ok(bytes) => Ok(Some((Body::from(bytes), length))),
            Err(body) => Ok(Some((body, length))),
        }
    }

    /// The Date for the next response: read once per batch of requests (the thread's cache
    /// still costs a clock read per call), refreshed after every read and every handler that
    /// had to wait.
    fn date(&mut self) -> ImfFixdate {
        *self.date.get_or_insert_with(crate::date::now)
    }

    async fn write_body(
        &mut self,
        body: &mut Body,
        length: BodyLength,
        sleep: &mut Pin<&mut Sleep>,
    ) -> Result<(), Close> {
        // A file body of known length goes out with sendfile(2), skipping user space.
        #[cfg(target_os = "linux")]
        if let (BodyLength::Length(_), Some(span)) = (length, body.file_span_mut()) {
            // Corked, the head and the file leave in full segments (nginx's tcp_nopush).
            let io = self.io.clone();
            let sock = socket2::SockRef::from(&io.stream);
            let _ = sock.set_tcp_cork(true);
            let sent = match self.flush(sleep).await {
                Ok(()) => {
                    let timeout = self.worker.config.write_timeout;
                    super::sendfile::send_file(&self.io.stream, span, timeout)
                        .await
                        .map_err(|_| Close::Io)
                }
                Err(e) => Err(e),
            };
            let _ = sock.set_tcp_cork(false);
            return sent;
        }
        let mut left = match length {
            BodyLength::Length(n) => n,
            _ => u64::MAX,
        };
        loop {
            let chunk = match poll_fn(|cx| body.poll_chunk(cx)).await {
                None => break,
                Some(Ok(chunk)) => chunk,
                // The body failed mid-response: the message cannot be completed, so the
                // connection closes and the client sees it truncated.
                Some(Err(_)) => return Err(Close::Done),
            };
            if chunk.is_empty() {
                continue;
            }
            let chunked = length == BodyLength::Chunked;
            if !chunked {
                // A body longer than its declared length would corrupt the framing.
                left = left.checked_sub(chunk.len() as u64).ok_or(Close::Done)?;
            }
            if chunk.len() >= COPY_MAX {
                // Large chunks go out from their own buffer, not copied.
                if chunked {
                    encode_chunk_head(chunk.len() as u64, &mut self.wbuf);
                }
                self.flush(sleep).await?;
                self.write_all(&chunk, sleep).await?;
                if chunked {
                    self.wbuf.extend_from_slice(CRLF);
                }
                continue;
            }
            if chunked {
                encode_chunk(&chunk, &mut self.wbuf);
            } else {
                self.wbuf.extend_from_slice(&chunk);
            }
            if self.wbuf.len() >= FLUSH_AT {
                self.flush(sleep).await?;
            }
        }
        match length {
            BodyLength::Chunked => {
                // No trailers: cannot fail.
                let _ = encode_last_chunk(&[], &mut self.wbuf);
            }
            BodyLength::Length(_) if left != 0 => return Err(Close::Done),
            _ => {}
        }
        Ok(())
    }

    /// Writes the whole write buffer.
    async fn flush(&mut self, sleep: &mut Pin<&mut Sleep>) -> Result<(), Close> {
        let mut wpos = self.wpos;
        let result = write_from(&self.io.stream, &self.wbuf, &mut wpos, &self.worker, sleep).await;
        self.wpos = wpos;
        if result.is_ok() {
            self.wbuf.clear();
            self.wpos = 0;
        }
        result
    }

    async fn write_all(&mut self, data: &[u8], sleep: &mut Pin<&mut Sleep>) -> Result<(), Close> {
        let mut pos = 0;
        write_from(&self.io.stream, data, &mut pos, &self.worker, sleep).await
    }

    /// Waits until the socket is readable. Flushes pending responses first and, when no
    /// partial head is buffered, returns the buffers to the pool while waiting. Fails on the
    /// deadline, and (between requests) on shutdown.
    async fn wait_readable(
        &mut self,
        sleep: &mut Pin<&mut Sleep>,
        deadline: Instant,
        partial: bool,
    ) -> Result<(), Close> {
        self.flush(sleep).await?;
        if !partial {
            self.release_buffers();
        }
        arm(sleep, deadline);
        let stream = &self.io.stream;
        // Poll functions rather than the `readable()` future: no waiter stored in this
        // connection's future, which every idle connection carries.
        let mut drained = pin!(self.worker.drained());
        poll_fn(|cx| {
            if let Poll::Ready(ready) = stream.poll_read_ready(cx) {
                return Poll::Ready(ready.map_err(Close::from));
            }
            while sleep.as_mut().poll(cx).is_ready() {
                if Instant::now() >= deadline {
                    return Poll::Ready(Err(Close::Done));
                }
                // The timer fired early (it is only ever pulled in, see `arm`): re-arm.
                sleep.as_mut().reset(deadline);
            }
            // Between requests, shutdown closes the connection; inside a head it waits.
            if !partial && drained.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(Close::Done));
            }
            Poll::Pending
        })
        .await
    }

    /// Reads what the socket has. `Ok(false)` at end of stream.
    fn read(&mut self) -> Result<bool, Close> {
        let mut buf = self.io.rbuf.borrow_mut();
        if buf.capacity() == 0 {
            *buf = self.worker.buffers.take();
        }
        if buf.capacity() - buf.len() < super::incoming::MIN_READ {
            buf.reserve(super::incoming::MIN_READ);
        }
        let spare = buf.capacity() - buf.len();
        // A new batch of requests: their responses get a fresh Date.
        self.date = None;
        match self.io.stream.try_read_buf(&mut *buf) {
            Ok(0) => Ok(false),
            Ok(n) => {
                if n < spare {
                    // A short read drained the socket: clear tokio's readiness now rather than
                    // learn it from one more `recv` returning EAGAIN (one syscall less per
                    // batch). Safe with edge-triggered epoll: bytes arriving after this read
                    // raise a new event, which sets readiness again.
                    let _ = self.io.stream.try_io(Interest::READABLE, || {
                        Err::<(), _>(io::Error::from(io::ErrorKind::WouldBlock))
                    });
                }
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(true),
            Err(_) => Err(Close::Io),
        }
    }

    /// Hands empty buffers back to the worker's pool.
    fn release_buffers(&mut self) {
        let mut rbuf = self.io.rbuf.borrow_mut();
        if rbuf.is_empty() && rbuf.capacity() != 0 {
            self.worker.buffers.put(std::mem::take(&mut *rbuf));
        }
        if self.wpos >= self.wbuf.len() && self.wbuf.capacity() != 0 {
            self.wpos = 0;
            self.worker.buffers.put_write(std::mem::take(&mut self.wbuf));
        }
    }

    /// Lingering close (as nginx's `lingering_close`): stop sending, then read and drop what
    /// the client still sends for a moment, so our last response is not destroyed by a reset.
    async fn linger(&mut self, sleep: &mut Pin<&mut Sleep>) {
        let sock = socket2::SockRef::from(&self.io.stream);
        if sock.shutdown(std::net::Shutdown::Write).is_err() {
            return;
        }
        let deadline = Instant::now() + LINGER.min(self.worker.config.header_read_timeout);
        sleep.as_mut().reset(deadline);
        let stream = &self.io.stream;
        let mut discarded = 0;
        poll_fn(|cx| {
            let mut scratch = [0u8; 256];
            while discarded < LINGER_BYTES {
                match stream.poll_read_ready(cx) {
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(_)) => return Poll::Ready(()),
                    Poll::Pending => {
                        return if sleep.as_mut().poll(cx).is_ready() {
                            Poll::Ready(())
                        } else {
                            Poll::Pending
                        };
                    }
                }
                match stream.try_read(&mut scratch) {
                    Ok(0) => return Poll::Ready(()),
                    Ok(n) => discarded += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(_) => return Poll::Ready(()),
                }
            }
            Poll::Ready(())
        })
        .await
    }
}

/// Turns a parse result into [`Next`], applying the framing rules to a complete head.
fn next_of(buf: &[u8], parsed: Result<Status<RequestHead<'_, '_>>, ParseError>) -> Next {
    match parsed {
        Ok(Status::Complete(head)) => match request_framing(&head) {
            Ok(framing) => {
                Next::Request { spans: HeadSpans::from_head(buf, &head), framing, len: head.len }
            }
            Err(e) => Next::Error(e),
        },
        Ok(Status::Partial) => Next::Partial,
        Err(e) => Next::Error(e),
    }
}

/// Makes `sleep` fire no later than `deadline`. A later timer is pulled in; an earlier one is
/// left alone (its expiry re-checks the real deadline), so a deadline that only moves forward,
/// like the keep-alive one, costs no timer update per request.
fn arm(sleep: &mut Pin<&mut Sleep>, deadline: Instant) {
    if sleep.deadline() > deadline || sleep.is_elapsed() {
        sleep.as_mut().reset(deadline);
    }
}

/// Whether the body the handler waits on has fallen below the minimum data rate; arms the timer
/// for it otherwise.
fn body_rate_expired(
    io: &ConnIo,
    config: &super::Config,
    sleep: &mut Pin<&mut Sleep>,
    cx: &mut std::task::Context<'_>,
) -> bool {
    let Some(deadline) = io.body_rate_deadline(config) else {
        return false;
    };
    let deadline = Instant::from_std(deadline);
    if sleep.deadline() != deadline {
        sleep.as_mut().reset(deadline);
    }
    sleep.as_mut().poll(cx).is_ready()
}

/// Writes `data[*pos..]`, advancing `pos`; a write making no progress for `write_timeout`
/// fails.
async fn write_from(
    stream: &TcpStream,
    data: &[u8],
    pos: &mut usize,
    worker: &Worker,
    sleep: &mut Pin<&mut Sleep>,
) -> Result<(), Close> {
    let mut armed = false;
    poll_fn(|cx| {
        while *pos < data.len() {
            match stream.try_write(&data[*pos..]) {
                Ok(0) => return Poll::Ready(Err(Close::Io)),
                Ok(n) => {
                    *pos += n;
                    armed = false;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !armed {
                        // Progress restarts the write timeout.
                        sleep.as_mut().reset(Instant::now() + worker.config.write_timeout);
                        armed = true;
                    }
                    match stream.poll_write_ready(cx) {
                        Poll::Ready(Ok(())) => continue,
                        Poll::Ready(Err(_)) => return Poll::Ready(Err(Close::Io)),
                        Poll::Pending => {}
                    }
                    if sleep.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Err(Close::Done));
                    }
                    return Poll::Pending;
                }
                Err(_) => return Poll::Ready(Err(Close::Io)),
            }
        }
        Poll::Ready(Ok(()))
    })
    .await
}

fn internal_error() -> Response {
    Response::with_status(StatusCode::INTERNAL_SERVER_ERROR, "internal server error")
}

/// Most responses carry a few fields; this many are borrowed on the stack for the encoder.
const STACK_FIELDS: usize = 16;

/// Calls `f` with the response's fields as the encoder takes them, leaving out framing fields
/// (the server owns framing: Content-Length and Transfer-Encoding follow from the body).
fn with_fields<R>(headers: &HeaderList, f: impl FnOnce(&[(&str, &[u8])]) -> R) -> R {
    let framing = |name: &http::HeaderName| {
        name == http::header::CONTENT_LENGTH || name == http::header::TRANSFER_ENCODING
    };
    let fields =
        || headers.iter().filter(|(n, _)| !framing(n)).map(|(n, v)| (n.as_str(), v.as_bytes()));
    let mut stack: [(&str, &[u8]); STACK_FIELDS] = [("", b""); STACK_FIELDS];
    let mut n = 0;
    for field in fields() {
        if n == STACK_FIELDS {
            let heap: Vec<(&str, &[u8])> = fields().collect();
            return f(&heap);
        }
        stack[n] = field;
        n += 1;
    }
    f(&stack[..n])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::runtime::tests_support::worker;

    /// An idle connection's memory is mostly its task, which is as large as this future's
    /// largest state; keep it in check.
    #[test]
    fn connection_future_stays_small() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let stream = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
            let handler = Rc::new(|_req: Request| async { "Hello, World!" });
            let fut = serve(stream, handler, Admitted(worker()));
            let size = std::mem::size_of_val(&fut);
            eprintln!("connection future: {size} bytes");
            // 1,752 bytes when written (down from 3,160 before the poll-fn rewrites).
            assert!(size <= 2048, "connection future grew to {size} bytes");
        });
    }
}
