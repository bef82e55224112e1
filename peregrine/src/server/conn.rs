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
//! only its task and socket; only the first 64 connections of a worker keep theirs
//! (`BufPool::hold`), which saves the handback and retake per request for them.

use std::future::{Future, poll_fn};
use std::io;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http::StatusCode;
use tokio::io::Interest;
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::incoming::ConnIo;
use super::runtime::{Admitted, Worker};
use super::slots::{Service, Slot};
use crate::Method;
use crate::body::{Body, BodyErrorKind};
use crate::date::ImfFixdate;
use crate::handler::Handler;
use crate::http1::chunked::{CRLF, encode_chunk, encode_chunk_head, encode_last_chunk};
use crate::http1::encode::{ResponseHeadOut, encode_head, encode_head_typed};
use crate::http1::framing::{BodyLength, RequestFraming, request_framing};
use crate::http1::{EMPTY_HEADER, HeadScanner, Limits, ParseError, RequestHead, Status, Version};
use crate::request::{HeadSpans, Request};
use crate::response::{IntoResponse, Response};

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
///
/// The response is encoded as soon as the handler returns it, inside the poll that saw it
/// ready, rather than moved out through the poll function, the panic guard and this enum (each
/// move of a `Response` copies a few hundred bytes: about 400 instructions per request).
enum Outcome {
    /// The response is in the write buffer; `rest` is its body still to stream, if any.
    Encoded {
        keep_alive: bool,
        rest: Result<Option<(Body, BodyLength)>, Close>,
    },
    /// The request body is not read to its end: whether the connection stays open depends on
    /// draining it first. Boxed: a rare path, which the drain already allocates on.
    Unread(Box<Response>),
    Panicked,
    BodyTimedOut,
}

/// A request whose handler is started, with what its response needs to know.
struct Job<F> {
    slot: Slot<F>,
    keep_alive: bool,
    is_head: bool,
    version: Version,
    has_body: bool,
}

/// A parsed head, or what stops it.
#[allow(clippy::large_enum_variant)]
enum Next {
    Request { spans: HeadSpans, framing: RequestFraming, len: usize },
    Partial,
    Error(ParseError),
}

/// What the request loop does next.
enum Step<F> {
    /// Run a started request.
    Run(Job<F>),
    /// Wait for more bytes.
    Wait,
    /// A final response is queued: the connection ends after it.
    Stop,
}

/// Serves one accepted connection until it closes.
///
/// A plain function returning an `async` block, not an `async fn`: an async function keeps its
/// arguments (the stream, 40 bytes, and the rest) in its future for its whole life, beside the
/// values built from them; the block captures only what it uses.
pub(crate) fn serve<H: Handler>(
    stream: TcpStream,
    peer: SocketAddr,
    service: Rc<Service<H>>,
    admitted: Admitted,
) -> impl Future<Output = ()> {
    let worker = admitted.worker.clone();
    let limits = worker.config.parser_limits();
    let mut conn = Conn {
        io: Rc::new(ConnIo::new(stream, peer)),
        worker,
        service,
        idle: admitted.idle,
        limits,
        scanner: HeadScanner::new(),
        wbuf: Vec::new(),
        wpos: 0,
        date: None,
        timer_at: None,
        holding: false,
    };
    let started = Instant::now();
    async move {
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
}

struct Conn<H: Handler> {
    io: Rc<ConnIo>,
    worker: Rc<Worker>,
    service: Rc<Service<H>>,
    /// This connection's slot for [`Worker::watch_drain`].
    idle: u32,
    limits: Limits,
    scanner: HeadScanner,
    wbuf: Vec<u8>,
    wpos: usize,
    /// The Date of the responses to the current batch.
    date: Option<ImfFixdate>,
    /// The deadline `sleep` had when `wait_readable` last polled it with budget to spare: this
    /// task's waker is registered with the timer for that deadline until it fires, so a wait
    /// for the same deadline need not poll the timer again (~120 instructions per wait).
    timer_at: Option<Instant>,
    /// This connection keeps its buffers while idle ([`super::buffers::BufPool::hold`]).
    holding: bool,
}

impl<H: Handler> Drop for Conn<H> {
    fn drop(&mut self) {
        if self.holding {
            self.worker.buffers.unhold();
        }
    }
}

impl<H: Handler> Conn<H> {
    /// The request loop. `Ok` carries the timer back for a lingering close after an orderly end.
    async fn run(&mut self, sleep: &mut Pin<&mut Sleep>, accepted: Instant) -> Result<(), Close> {
        // The first head is timed from the accept; later ones from their first bytes.
        let mut head_started = Some(accepted);
        let mut first = true;
        loop {
            // The parsed head (`Next`, ~280 bytes) must not be alive across an `.await`, or
            // every idle connection's future holds room for it: `step` parses and starts the
            // request synchronously and hands over only the small `Step`.
            match self.step()? {
                Step::Run(job) => {
                    first = false;
                    head_started = None;
                    if !self.dispatch(job, sleep).await? {
                        return Ok(());
                    }
                }
                Step::Stop => return Ok(()),
                Step::Wait => {
                    let partial = !self.io.rbuf.borrow().is_empty();
                    let deadline = if partial || first {
                        // Slowloris defence: the whole head within header_read_timeout.
                        let since = *head_started.get_or_insert_with(Instant::now);
                        Some(since + self.worker.config.header_read_timeout)
                    } else {
                        // Keep-alive: timed from when the wait pends (see `wait_readable`).
                        None
                    };
                    self.wait_readable(sleep, deadline, partial).await?;
                    if !self.read()? {
                        // End of stream: between requests the client is done; inside a head
                        // there is nobody left to answer.
                        return Err(Close::Io);
                    }
                }
            }
        }
    }

    /// Parses the next head and starts its request, or says why not.
    fn step(&mut self) -> Result<Step<H::Future>, Close> {
        let (spans, framing, len) = match self.parse_next() {
            Next::Request { spans, framing, len } => (spans, framing, len),
            Next::Error(e) => {
                let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
                let res = Response::with_status(status, e.reason());
                self.queue_final(res, false)?;
                return Ok(Step::Stop);
            }
            Next::Partial => return Ok(Step::Wait),
        };
        let head = self.io.rbuf.borrow_mut().split_to(len).freeze();
        Ok(match self.start(head, spans, framing)? {
            Some(job) => Step::Run(job),
            None => Step::Stop,
        })
    }

    /// Parses the next head from the read buffer.
    fn parse_next(&mut self) -> Next {
        let buf = self.io.rbuf.borrow();
        if buf.is_empty() {
            return Next::Partial;
        }
        let limits = self.limits;
        // Uninitialised: no placeholder headers written per request (1.25 KiB of stores).
        let mut slots = [const { MaybeUninit::uninit() }; STACK_HEADERS];
        let n = limits.max_headers.min(STACK_HEADERS);
        match self.scanner.parse_uninit(&buf, &mut slots[..n], &limits) {
            Err(ParseError::TooManyHeaders) if limits.max_headers > STACK_HEADERS => {
                let mut heap = vec![EMPTY_HEADER; limits.max_headers];
                next_of(&buf, self.scanner.parse(&buf, &mut heap, &limits))
            }
            parsed => next_of(&buf, parsed),
        }
    }

    /// Builds the request whose head was split off the buffer and starts its handler (which
    /// runs only when polled). `None`: a final error response is queued instead.
    fn start(
        &mut self,
        head: Bytes,
        spans: HeadSpans,
        framing: RequestFraming,
    ) -> Result<Option<Job<H::Future>>, Close> {
        let version = spans.version();
        let is_head = spans.method() == Method::Head;
        let body_len = match framing.body {
            // RFC 9110 §15.5.14: refuse a declared length over the limit before reading it.
            BodyLength::Length(n) if n > self.worker.config.max_body_bytes => {
                let res = Response::with_status(StatusCode::PAYLOAD_TOO_LARGE, "body too large");
                self.queue_final(res, is_head)?;
                return Ok(None);
            }
            // Only responses may be delimited by close (RFC 9112 §6.3).
            BodyLength::CloseDelimited => {
                let res = Response::with_status(StatusCode::BAD_REQUEST, "invalid framing");
                self.queue_final(res, is_head)?;
                return Ok(None);
            }
            other => other,
        };
        let mut req = Request::from_parts(head, spans, Body::empty());
        req.remote_addr = Some(self.io.peer);
        // RFC 9110 §10.1.1: ignore 100-continue from an HTTP/1.0 client.
        let expect = framing.expect_continue && version == Version::Http11;
        if let Some(incoming) = self.io.start_body(body_len, expect, &self.worker.config) {
            *req.body_mut() = Body::incoming(incoming);
        }
        Ok(Some(Job {
            slot: self.service.call(req),
            keep_alive: framing.keep_alive,
            is_head,
            version,
            has_body: body_len != BodyLength::Length(0),
        }))
    }

    /// Runs a started request and queues its response. `Ok(true)`: keep going.
    async fn dispatch(
        &mut self,
        job: Job<H::Future>,
        sleep: &mut Pin<&mut Sleep>,
    ) -> Result<bool, Close> {
        // Layout note: whatever is live across an `.await` here is part of every connection's
        // future, idle or not; the rare paths (pipelined requests with bodies, draining,
        // streamed bodies) box their futures instead.
        let Job { slot, keep_alive, is_head, version, has_body } = job;
        if has_body && self.wpos < self.wbuf.len() {
            // `100 Continue` goes straight to the socket (when the handler first reads the
            // body); earlier responses must precede it.
            Box::pin(self.flush(sleep)).await?;
        }
        let (keep_alive, rest) = match self.call(slot, keep_alive, is_head, version, sleep).await {
            Outcome::Encoded { keep_alive, rest } => (keep_alive, rest?),
            Outcome::Unread(mut res) => {
                // An unread body: read and drop it to reach the next request, unless the client
                // still waits for 100 (it may never send the body) or it is too large.
                let keep_alive = !self.io.continue_unsent() && Box::pin(self.drain(sleep)).await;
                self.io.end_body();
                (keep_alive, self.encode_response(&mut res, is_head, version, keep_alive)?)
            }
            Outcome::Panicked => {
                self.io.end_body();
                (false, self.encode_response(&mut internal_error(), is_head, version, false)?)
            }
            Outcome::BodyTimedOut => {
                self.io.fail_body(BodyErrorKind::TimedOut);
                self.io.end_body();
                let mut res = Response::with_status(StatusCode::REQUEST_TIMEOUT, "body too slow");
                (false, self.encode_response(&mut res, is_head, version, false)?)
            }
        };
        if let Some((mut body, length)) = rest {
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
    fn queue_final(&mut self, mut res: Response, is_head: bool) -> Result<(), Close> {
        match self.encode_response(&mut res, is_head, Version::Http11, false)? {
            None => Ok(()),
            // A long body would need streaming; error responses never have one.
            Some(_) => Err(Close::Done),
        }
    }

    /// Runs the handler to completion, catching panics and enforcing the body data rate, and
    /// encodes its response unless the request body must be drained first.
    async fn call(
        &mut self,
        mut slot: Slot<H::Future>,
        keep_alive: bool,
        is_head: bool,
        version: Version,
        sleep: &mut Pin<&mut Sleep>,
    ) -> Outcome {
        let Conn { io, worker, service, wbuf, date, .. } = self;
        let outcome = poll_fn(|cx| {
            // A panic in the handler answers 500; this connection closes, the worker lives on.
            let polled = catch_unwind(AssertUnwindSafe(|| {
                let Some(fut) = slot.as_mut().as_pin_mut() else {
                    // Never: the slot is emptied only below, after its future completed.
                    return Poll::Ready(Outcome::Panicked);
                };
                let Poll::Ready(out) = fut.poll(cx) else {
                    return Poll::Pending;
                };
                let mut res = out.into_response();
                let keep_alive = keep_alive && io.body_error().is_none() && !worker.draining();
                if keep_alive && !io.body_done() {
                    return Poll::Ready(Outcome::Unread(Box::new(res)));
                }
                io.end_body();
                let rest =
                    encode_response(wbuf, date, worker, &mut res, is_head, version, keep_alive);
                Poll::Ready(Outcome::Encoded { keep_alive, rest })
            }));
            let config = &worker.config;
            match polled {
                Ok(Poll::Ready(outcome)) => return Poll::Ready(outcome),
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
        .await;
        service.put(slot);
        outcome
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

    /// Encodes `res` into the write buffer; see [`encode_response`].
    fn encode_response(
        &mut self,
        res: &mut Response,
        is_head: bool,
        version: Version,
        keep_alive: bool,
    ) -> Result<Option<(Body, BodyLength)>, Close> {
        encode_response(
            &mut self.wbuf,
            &mut self.date,
            &self.worker,
            res,
            is_head,
            version,
            keep_alive,
        )
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
    ///
    /// A poll function rather than an `async fn` (here and in `write_all`): it holds two
    /// references and a flag, where the async version held its arguments, a copy of them in an
    /// inner future and that future's closure (152 bytes, inside every waiting connection).
    fn flush<'a>(
        &'a mut self,
        sleep: &'a mut Pin<&mut Sleep>,
    ) -> impl Future<Output = Result<(), Close>> + 'a {
        let mut armed = false;
        poll_fn(move |cx| {
            let Conn { io, worker, wbuf, wpos, .. } = &mut *self;
            let result = ready!(poll_write(&io.stream, wbuf, wpos, worker, sleep, &mut armed, cx));
            if result.is_ok() {
                wbuf.clear();
                *wpos = 0;
            }
            Poll::Ready(result)
        })
    }

    fn write_all<'a>(
        &'a self,
        data: &'a [u8],
        sleep: &'a mut Pin<&mut Sleep>,
    ) -> impl Future<Output = Result<(), Close>> + 'a {
        let (mut pos, mut armed) = (0, false);
        poll_fn(move |cx| {
            poll_write(&self.io.stream, data, &mut pos, &self.worker, sleep, &mut armed, cx)
        })
    }

    /// Waits until the socket is readable. Flushes pending responses first. Fails on the
    /// deadline (`None`: the keep-alive timeout from when the wait pends), and (between
    /// requests) on shutdown.
    ///
    /// Only a wait that pends makes the connection idle: then, when no partial head is
    /// buffered, its buffers go back to the pool, and the timer is armed. When bytes are
    /// already readable, neither buffers nor timer nor clock are touched.
    async fn wait_readable(
        &mut self,
        sleep: &mut Pin<&mut Sleep>,
        deadline: Option<Instant>,
        partial: bool,
    ) -> Result<(), Close> {
        self.flush(sleep).await?;
        let Conn { io, worker, wbuf, wpos, idle, timer_at, holding, .. } = self;
        let (io, worker, idle) = (&**io, &**worker, *idle);
        let keep_alive = worker.config.keep_alive_timeout;
        let mut pending: Option<Instant> = None;
        // Poll functions rather than the `readable()` future: no waiter stored in this
        // connection's future, which every idle connection carries.
        poll_fn(|cx| {
            if let Poll::Ready(ready) = io.stream.poll_read_ready(cx) {
                return Poll::Ready(ready.map_err(Close::from));
            }
            let deadline = *pending.get_or_insert_with(|| {
                // A few connections per worker keep their buffers (a bounded amount of memory);
                // the others hand them back, so idle connections cost no buffer.
                if !partial && !*holding && !worker.buffers.hold() {
                    release_buffers(io, worker, wbuf, wpos);
                } else if !partial {
                    *holding = true;
                }
                let deadline = deadline.unwrap_or_else(|| Instant::now() + keep_alive);
                if arm(sleep, deadline) {
                    *timer_at = None;
                }
                deadline
            });
            // This task's waker is registered with the timer once it was polled with budget
            // left (tokio's coop can make a poll return early without registering), and stays
            // so until the timer fires (`is_elapsed`) or is reset (which changes the deadline,
            // or `arm` clears `timer_at`).
            if *timer_at != Some(sleep.deadline()) || sleep.is_elapsed() {
                let budget = tokio::task::coop::has_budget_remaining();
                while sleep.as_mut().poll(cx).is_ready() {
                    if Instant::now() >= deadline {
                        return Poll::Ready(Err(Close::Done));
                    }
                    // The timer fired early (it is only ever pulled in, see `arm`): re-arm.
                    sleep.as_mut().reset(deadline);
                }
                *timer_at = budget.then(|| sleep.deadline());
            }
            // Between requests, shutdown closes the connection; inside a head it waits.
            if !partial {
                if worker.draining() {
                    return Poll::Ready(Err(Close::Done));
                }
                worker.watch_drain(idle, cx.waker());
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
        release_buffers(&self.io, &self.worker, &mut self.wbuf, &mut self.wpos);
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

/// Encodes `res` into the write buffer, with its body when it is complete and small.
/// Returns the body still to be streamed, if any.
///
/// Synchronous on purpose: the response is consumed here and never held across an `.await`,
/// which keeps the connection's future (and an idle connection's memory) small. Taken by
/// reference so the caller's response is not copied in.
///
/// The Date is read once per batch of requests (the thread's cache still costs a clock read
/// per call): `date` is cleared after every read and every handler that had to wait.
fn encode_response(
    wbuf: &mut Vec<u8>,
    date: &mut Option<ImfFixdate>,
    worker: &Worker,
    res: &mut Response,
    is_head: bool,
    version: Version,
    keep_alive: bool,
) -> Result<Option<(Body, BodyLength)>, Close> {
    let status = res.status();
    let code = status.as_u16();
    if wbuf.capacity() == 0 {
        *wbuf = worker.buffers.take_write();
    }
    // RFC 9110 §6.4.1: 1xx, 204 and 304 responses have no content; HEAD gets the header
    // fields a GET would have had, Content-Length included, without the content (§9.3.2).
    let bodiless = status.is_informational() || code == 204 || code == 304;
    let body = std::mem::take(res.body_mut());
    let length = match body.size_hint() {
        _ if status.is_informational() || code == 204 => BodyLength::Length(0),
        Some(n) => BodyLength::Length(n),
        None if version == Version::Http11 => BodyLength::Chunked,
        // An HTTP/1.0 client knows no chunked coding: the body ends with the connection.
        None => BodyLength::CloseDelimited,
    };
    let date = *date.get_or_insert_with(crate::date::now);
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
        .filter(|(n, _)| {
            **n != http::header::CONTENT_LENGTH && **n != http::header::TRANSFER_ENCODING
        })
        .map(|(n, v)| (n.as_str(), v.as_bytes()));
    if encode_head_typed(&head, fields, length, wbuf).is_err() {
        // The handler built a response that cannot be sent (a bad status, or content on a
        // 1xx/204): answer 500 instead, and close.
        let head = ResponseHeadOut { close: true, ..ResponseHeadOut::new(500, &[]) };
        let head = ResponseHeadOut { request_version: version, date: Some(&date), ..head };
        let _ = encode_head(&head, BodyLength::Length(0), wbuf);
        return Err(Close::Done);
    }
    if is_head || bodiless {
        return Ok(None);
    }
    match body.into_full() {
        // The common case: static or owned bytes, copied after the head.
        Ok(bytes) if bytes.len() < COPY_MAX => {
            wbuf.extend_from_slice(&bytes);
            Ok(None)
        }
        Ok(bytes) => Ok(Some((Body::from(bytes), length))),
        Err(body) => Ok(Some((body, length))),
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

/// Hands a connection's empty buffers back to the worker's pool.
fn release_buffers(io: &ConnIo, worker: &Worker, wbuf: &mut Vec<u8>, wpos: &mut usize) {
    let mut rbuf = io.rbuf.borrow_mut();
    if rbuf.is_empty() && rbuf.capacity() != 0 {
        worker.buffers.put(std::mem::take(&mut *rbuf));
    }
    if *wpos >= wbuf.len() && wbuf.capacity() != 0 {
        *wpos = 0;
        worker.buffers.put_write(std::mem::take(wbuf));
    }
}

/// Makes `sleep` fire no later than `deadline`; true when it was reset. A later timer is
/// pulled in; an earlier one is left alone (its expiry re-checks the real deadline), so a
/// deadline that only moves forward, like the keep-alive one, costs no timer update per
/// request.
fn arm(sleep: &mut Pin<&mut Sleep>, deadline: Instant) -> bool {
    if sleep.deadline() > deadline || sleep.is_elapsed() {
        sleep.as_mut().reset(deadline);
        return true;
    }
    false
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
/// fails (`armed`: the timer is set for the current stall).
fn poll_write(
    stream: &TcpStream,
    data: &[u8],
    pos: &mut usize,
    worker: &Worker,
    sleep: &mut Pin<&mut Sleep>,
    armed: &mut bool,
    cx: &mut std::task::Context<'_>,
) -> Poll<Result<(), Close>> {
    while *pos < data.len() {
        match stream.try_write(&data[*pos..]) {
            Ok(0) => return Poll::Ready(Err(Close::Io)),
            Ok(n) => {
                *pos += n;
                *armed = false;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if !*armed {
                    // Progress restarts the write timeout.
                    sleep.as_mut().reset(Instant::now() + worker.config.write_timeout);
                    *armed = true;
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
}

fn internal_error() -> Response {
    Response::with_status(StatusCode::INTERNAL_SERVER_ERROR, "internal server error")
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
            let peer = stream.local_addr().unwrap();
            let service = Rc::new(Service::new(|_req: Request| async { "Hello, World!" }));
            let fut = serve(stream, peer, service, Admitted::new(worker()));
            let size = std::mem::size_of_val(&fut);
            eprintln!("connection future: {size} bytes");
            // 3,160 bytes first, 1,752 after the poll-fn rewrites, 920 since the handler's
            // future runs in a pooled slot and `dispatch` takes no head spans, 712 since no
            // parsed head lives across an await and `flush` is a poll function, 728 with the
            // timer's registered deadline (`timer_at`).
            assert!(size <= 768, "connection future grew to {size} bytes");
        });
    }
}
