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
//!
//! Every read and write goes through the connection's [`Transport`] (plain TCP or TLS); a
//! request body is read by this loop on the handler's behalf (`body.rs`).

mod body;
pub(super) mod fixed_loop;
pub(super) mod fixed_run;
mod ops;
mod response;
pub(super) mod template;
mod write;

use std::future::{Future, poll_fn};
use std::io;
use std::mem::MaybeUninit;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes, BytesMut};
use http::StatusCode;
use tokio::time::{Instant, Sleep};

use super::access_log::{LogEntry, LogState, refused_request_line};
use super::call::{Panicked, poll_handler};
use super::h2::Upgraded;
use super::metrics::WorkerMetrics;
use super::ops::Ops;
use super::slots::{Service, Slot};
use super::worker::{Admitted, Worker};
use crate::body::{Body, BodyErrorKind};
use crate::date::ImfFixdate;
use crate::handler::Handler;
use crate::http1::encode::CONTINUE;
use crate::http1::framing::{BodyLength, HostMemo, RequestFraming, request_framing_remembering};
use crate::http1::{
    EMPTY_HEADER, HeadScanner, ParseError, RequestHead, Status, TargetForm, may_start_request_line,
};
use crate::http2::conn::PREFACE;
use crate::http2::upgrade::decode_settings_field;
use crate::net::Transport;
use crate::request::{HeadSpans, Peer, Request};
use crate::response::{IntoResponse, Response};
use crate::{Method, Version};
use body::{Fed, RequestBody};
use fixed_run::FixedRun;
use response::{Rest, encode_response, error_response};
use write::{FLUSH_AT, poll_flush};

/// Header slots on the stack for the first parse attempt; a head with more fields (up to
/// `Limits::max_headers`) is parsed again into a heap array.
const STACK_HEADERS: usize = 32;

/// Spare room the read buffer must have before a read; less and it is reserved (reclaiming
/// the consumed front of the buffer when nothing else shares it).
const MIN_READ: usize = 1024;

/// Why the connection stops; the socket closes either way.
#[derive(Debug)]
pub(super) enum Close {
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

/// How the request loop ended without an error.
pub(super) enum Exit {
    /// The last response said `Connection: close` (or the client is done).
    Done,
    /// The connection switches to HTTP/2: the client preface arrived (prior knowledge), or a
    /// request asked `Upgrade: h2c` and got its `101`.
    Http2(Option<Box<Upgraded>>),
}

/// The result of running the handler.
///
/// The response is encoded as soon as the handler returns it, inside the poll that saw it
/// ready, rather than moved out through the poll function, the panic guard and this enum (each
/// move of a `Response` copies a few hundred bytes: about 400 instructions per request).
enum Outcome {
    /// The response is in the write buffer; `rest` is its body still to stream, if any;
    /// `drain`: the request body is to be read and dropped after the response.
    Encoded {
        keep_alive: bool,
        rest: Result<Rest, Close>,
        drain: bool,
    },
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

/// A request started: its handler runs, or the connection switches to HTTP/2 for it.
enum Start<F> {
    Job(Job<F>),
    Upgrade(Box<Upgraded>),
}

/// The answer to an accepted `Upgrade: h2c` (RFC 7540 §3.2).
const SWITCHING_TO_H2C: &[u8] =
    b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n";

/// Whether the read buffer starts with the HTTP/2 client preface.
enum Preface {
    Complete,
    /// A prefix of it: more bytes decide.
    Partial,
    No,
}

fn preface(buf: &[u8]) -> Preface {
    let n = buf.len().min(PREFACE.len());
    if n == 0 || buf[..n] != PREFACE[..n] {
        Preface::No
    } else if n == PREFACE.len() {
        Preface::Complete
    } else {
        Preface::Partial
    }
}

/// The `HTTP2-Settings` payload of a request that asks to upgrade to h2c, when it asks
/// correctly (RFC 7540 §3.2, §3.2.1): `h2c` among the `Upgrade` protocols, one
/// `HTTP2-Settings` field that decodes, and both named as connection options ("a client
/// sending the HTTP2-Settings header field MUST also send HTTP2-Settings as a connection
/// option"). Anything else is served as HTTP/1.1, as RFC 9110 §7.8 lets a server ignore
/// Upgrade.
fn h2c_upgrade(req: &Request) -> Option<Vec<u8>> {
    let headers = req.headers();
    let listed = |name: &str, token: &[u8]| {
        headers
            .get_all(name)
            .any(|v| v.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(token)))
    };
    if !listed("upgrade", b"h2c") || !listed("connection", b"http2-settings") {
        return None;
    }
    let mut fields = headers.get_all("http2-settings");
    let value = fields.next()?;
    if fields.next().is_some() {
        return None;
    }
    decode_settings_field(value.trim_ascii())
}

/// A parsed head, or what stops it.
#[allow(clippy::large_enum_variant)]
enum Next {
    Request {
        spans: HeadSpans,
        framing: RequestFraming,
        len: usize,
    },
    /// An HTTP/1.1 keep-alive `GET` or `HEAD` without a body of a prepared fixed answer
    /// (`server::fixed`), found on the borrowed head: no spans are built for it.
    Fixed {
        index: usize,
        is_head: bool,
        len: usize,
    },
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
    /// A `101 Switching Protocols` to HTTP/2 is queued (boxed: a rare path, kept out of
    /// every connection's future).
    Upgrade(Box<Upgraded>),
    /// A response is queued (the server answered itself): parse the next request.
    Next,
}

/// Where a connection's HTTP/1.1 loop begins.
pub(crate) struct Opening {
    /// When the first head's clock started (the accept), for a connection that has answered
    /// no request yet; `None` for one that has (its next head is timed from its first bytes).
    pub(crate) first_head: Option<Instant>,
    /// Answers already due, written before any other (the fixed-answer loop's).
    pub(crate) queued: Vec<u8>,
}

impl Opening {
    /// A connection accepted at `accepted`, nothing answered yet.
    pub(crate) fn fresh(accepted: Instant) -> Opening {
        Opening { first_head: Some(accepted), queued: Vec::new() }
    }
}

/// Serves one HTTP/1.1 connection until it closes, or hands it over to HTTP/2 (the client
/// preface, or an `Upgrade: h2c`); see [`Opening`]. `rbuf`: bytes already read (after a PROXY
/// protocol header, or by the fixed-answer loop), usually empty.
///
/// A plain function returning an `async` block, not an `async fn`: an async function keeps its
/// arguments (the transport, 40 bytes, and the rest) in its future for its whole life, beside
/// the values built from them; the block captures only what it uses.
pub(crate) fn serve<H: Handler>(
    io: Transport,
    peer: Peer,
    rbuf: BytesMut,
    service: std::rc::Rc<Service<H>>,
    admitted: Admitted,
    opening: Opening,
) -> impl Future<Output = ()> {
    let Opening { first_head, queued } = opening;
    let worker = admitted.worker.clone();
    let mut conn = Conn {
        io,
        peer,
        rbuf,
        worker,
        service,
        idle: admitted.idle,
        scanner: HeadScanner::new(),
        host: HostMemo::default(),
        wbuf: queued,
        wpos: 0,
        run: FixedRun::default(),
        date: None,
        timer_at: None,
        holding: Holding(None),
        cont: false,
        client_close: false,
        body: None,
        log: None,
        answered: false,
    };
    async move {
        // One expression: a `let` for a part would keep its room in the future.
        let mut sleep = pin!(tokio::time::sleep_until(
            first_head.unwrap_or_else(Instant::now) + conn.worker.config.header_read_timeout
        ));
        match conn.run(&mut sleep, first_head).await {
            // The last response said `Connection: close` (or the request was refused): over
            // TLS our close_notify leaves with it, in one write.
            Ok(Exit::Done) => {
                conn.io.close_notify_on_flush();
                if conn.flush(&mut sleep).await.is_ok() {
                    conn.linger(&mut sleep).await;
                }
            }
            Ok(Exit::Http2(upgraded)) => {
                // The `101` (if any) goes before the first HTTP/2 frame.
                if conn.flush(&mut sleep).await.is_err() {
                    return;
                }
                let input = std::mem::take(&mut conn.rbuf);
                conn.release_buffers();
                let Conn { io, peer, service, .. } = conn;
                // Boxed: a plain connection's future carries a pointer for it, not its state.
                let h2 = super::h2::serve(io, peer, service, admitted, input, upgraded);
                return Box::pin(h2).await;
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

/// One connection's state, inside its task's future.
///
/// `repr(C)`, in this order: what every batch of requests touches first (the socket, the
/// buffers, the parse and the wait; about four cache lines), then what a handler's requests
/// and rarer paths need. With hundreds of connections a connection's lines are out of the
/// L1 cache each time its turn comes, so each line the hot path spans is a miss per batch.
#[repr(C)]
struct Conn<H: Handler> {
    io: Transport,
    wbuf: Vec<u8>,
    rbuf: BytesMut,
    worker: std::rc::Rc<Worker>,
    wpos: usize,
    /// The deadline `sleep` had when `wait_readable` last polled it with budget to spare: this
    /// task's waker is registered with the timer for that deadline until it fires, so a wait
    /// for the same deadline need not poll the timer again (~120 instructions per wait).
    timer_at: Option<Instant>,
    /// Fixed answers counted and not yet written (only while `wbuf` has nothing left to
    /// write): the flush writes them, and anything queued after them copies them in first.
    run: FixedRun,
    scanner: HeadScanner,
    /// This connection keeps its buffers while idle.
    holding: Holding,
    /// This connection's slot for [`Worker::watch_drain`].
    idle: u32,
    /// `step` answered a request itself (a fixed answer) before the step it returned: the
    /// request loop's next wait is then between requests (read there, not after every step,
    /// to keep the handlers' path free of it).
    answered: bool,
    /// The request being answered asked to end the connection (`Connection: close`, or
    /// HTTP/1.0 without keep-alive): after it the client sends nothing more.
    client_close: bool,
    /// `100 Continue` is owed: sent when the handler first wants body bytes none of which has
    /// arrived (RFC 9110 §10.1.1).
    cont: bool,
    /// The Date of the responses to the current batch.
    date: Option<ImfFixdate>,
    /// The last Host value found valid on this connection (checked once, not per request).
    host: HostMemo,
    service: std::rc::Rc<Service<H>>,
    /// The client: the TCP peer, or whom the balancer's PROXY header named.
    peer: Peer,
    /// The request-body source, made at the first request with a body.
    body: Option<Arc<RequestBody>>,
    /// The access log's record of the current request, when logging is on.
    log: Option<Box<LogState>>,
}

/// This connection keeps its buffers while idle ([`super::buffers::BufPool::hold`]); the hold
/// ends with the connection, however it ends.
struct Holding(Option<std::rc::Rc<Worker>>);

impl Drop for Holding {
    fn drop(&mut self) {
        if let Some(worker) = self.0.take() {
            worker.buffers.unhold();
        }
    }
}

impl<H: Handler> Conn<H> {
    /// The request loop.
    async fn run(
        &mut self,
        sleep: &mut Pin<&mut Sleep>,
        mut head_started: Option<Instant>,
    ) -> Result<Exit, Close> {
        // The first head is timed from the accept (`head_started` is given for a connection
        // that has answered nothing yet); later ones from their first bytes.
        let mut first = head_started.is_some();
        let h2c = self.worker.config.http2 && self.worker.config.h2c && self.io.is_plain();
        loop {
            // RFC 9113 §3.3: a client that knows the server speaks HTTP/2 starts with the
            // connection preface; it can only come first.
            let step = match first && h2c {
                true => match preface(&self.rbuf) {
                    Preface::Complete => return Ok(Exit::Http2(None)),
                    Preface::Partial => Step::Wait,
                    Preface::No => self.step(true)?,
                },
                false => self.step(false)?,
            };
            // The parsed head (`Next`, ~280 bytes) must not be alive across an `.await`, or
            // every idle connection's future holds room for it: `step` parses and starts the
            // request synchronously and hands over only the small `Step`.
            match step {
                Step::Run(job) => {
                    first = false;
                    head_started = None;
                    if !self.dispatch(job, sleep).await? {
                        return Ok(Exit::Done);
                    }
                }
                Step::Stop => return Ok(Exit::Done),
                Step::Upgrade(upgraded) => return Ok(Exit::Http2(Some(upgraded))),
                Step::Next => {
                    first = false;
                    head_started = None;
                    // Answers the server wrote itself: a long pipelined batch of them is
                    // flushed as it grows, as handlers' responses are in `dispatch`.
                    if self.wbuf.len() >= FLUSH_AT {
                        self.flush(sleep).await?;
                    }
                }
                Step::Wait => {
                    // Requests were answered by `step` itself before this wait.
                    if std::mem::take(&mut self.answered) {
                        first = false;
                        head_started = None;
                    }
                    let partial = !self.rbuf.is_empty();
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
    /// `h2c_first`: this is the first request of a plain connection that may speak HTTP/2.
    fn step(&mut self, mut h2c_first: bool) -> Result<Step<H::Future>, Close> {
        // Fixed answers are written here and the next head parsed at once, without a round
        // through the request loop (`answered` tells it a request was answered; it flushes a
        // write buffer past its mark). Their heads are consumed from the read buffer in one
        // step on the way out: `skip` bytes.
        let mut skip = 0;
        let (spans, framing, len) = loop {
            let next = self.parse_next(skip);
            if let Next::Fixed { index, is_head, len } = next {
                skip += len;
                match self.answer_fixed(index, is_head)? {
                    Step::Next if self.wbuf.len() < FLUSH_AT => {
                        self.answered = true;
                        h2c_first = false;
                        continue;
                    }
                    step => {
                        self.rbuf.advance(skip);
                        return Ok(step);
                    }
                }
            }
            if skip > 0 {
                self.rbuf.advance(skip);
            }
            // A run of fixed answers stays counted only while the connection waits for more
            // bytes (the flush before the wait writes it); whatever else is queued goes after it.
            if !matches!(next, Next::Partial) {
                self.queue_fixed_run()?;
            }
            match next {
                Next::Request { spans, framing, len } => break (spans, framing, len),
                // On a port that speaks HTTP/2 in clear text too, a connection whose first bytes
                // cannot begin an HTTP/1 request line is an HTTP/2 client with a broken preface
                // (RFC 9113 §3.4: a connection error) or not HTTP at all: closed unanswered
                // rather than sent an HTTP/1.1 400 it cannot read.
                Next::Error(_) if h2c_first && !may_start_request_line(&self.rbuf) => {
                    return Err(Close::Io);
                }
                Next::Error(e) => {
                    let status =
                        StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
                    self.refuse(status, e.reason(), false)?;
                    return Ok(Step::Stop);
                }
                // (A fixed answer was written above.)
                Next::Partial | Next::Fixed { .. } => return Ok(Step::Wait),
            }
        };
        if self.worker.ops.is_some() {
            if let Some(step) = self.answer_ops(&spans, &framing, len)? {
                return Ok(step);
            }
        }
        let head = self.rbuf.split_to(len).freeze();
        Ok(match self.start(head, spans, framing)? {
            Some(Start::Job(job)) => Step::Run(job),
            Some(Start::Upgrade(upgraded)) => Step::Upgrade(upgraded),
            None => Step::Stop,
        })
    }

    /// Parses the next head from the read buffer, past its first `skip` bytes (spans are
    /// relative to that point).
    fn parse_next(&mut self, skip: usize) -> Next {
        let buf = self.rbuf.get(skip..).unwrap_or_default();
        parse_head(&self.worker, &mut self.scanner, &mut self.host, buf)
    }

    /// Answers a request the server refuses before any handler runs, and logs it: the
    /// connection ends after the answer. The request line is read from the front of the read
    /// buffer (a refused head was not split off), or from the logged head.
    fn refuse(
        &mut self,
        status: StatusCode,
        reason: &'static str,
        is_head: bool,
    ) -> Result<(), Close> {
        if let Some(log) = self.worker.access_log.clone() {
            let (method, target, version) = match self.log.as_deref() {
                Some(LogState { head, spans: Some(spans), .. }) => {
                    let text = |r: std::ops::Range<usize>| {
                        String::from_utf8_lossy(head.get(r).unwrap_or_default()).into_owned()
                    };
                    let method = spans.method_str(head).to_owned();
                    (method, text(spans.target.clone()), Some(spans.version))
                }
                _ => refused_request_line(&self.rbuf),
            };
            (log.0)(&LogEntry {
                remote_addr: self.peer.addr(),
                method: &method,
                target: &target,
                version,
                status: status.as_u16(),
                body_bytes: reason.len() as u64,
                duration: self
                    .log
                    .as_ref()
                    .and_then(|l| l.started)
                    .map_or_else(Default::default, |s| s.elapsed()),
                user_agent: None,
                referer: None,
                refused: true,
            });
            if let Some(state) = &mut self.log {
                state.spans = None;
            }
        }
        let mut res = error_response(status, reason);
        match self.encode_response(&mut res, is_head, Version::Http11, false)? {
            (None, _) => Ok(()),
            // A long body would need streaming; error responses never have one.
            (Some(_), _) => Err(Close::Done),
        }
    }

    /// Builds the request whose head was split off the buffer and starts its handler (which
    /// runs only when polled). `None`: a final error response is queued instead.
    fn start(
        &mut self,
        head: Bytes,
        spans: HeadSpans,
        framing: RequestFraming,
    ) -> Result<Option<Start<H::Future>>, Close> {
        let version = spans.version();
        let is_head = spans.method() == Method::Head;
        if self.worker.access_log.is_some() {
            self.log.get_or_insert_with(Default::default).start(&head, &spans);
        }
        let body_len = match framing.body {
            // RFC 9110 §15.5.14: refuse a declared length over the limit before reading it.
            BodyLength::Length(n) if n > self.worker.config.max_body_bytes => {
                self.refuse(StatusCode::PAYLOAD_TOO_LARGE, "body too large", is_head)?;
                return Ok(None);
            }
            // Only responses may be delimited by close (RFC 9112 §6.3).
            BodyLength::CloseDelimited => {
                self.refuse(StatusCode::BAD_REQUEST, "invalid framing", is_head)?;
                return Ok(None);
            }
            other => other,
        };
        let mut req = Request::from_parts(head, spans, Body::empty());
        req.remote_addr = Some(self.peer.clone());
        let has_body = body_len != BodyLength::Length(0);
        if framing.upgrade && !has_body && self.worker.config.http2 && self.worker.config.h2c {
            if let Some(settings) = h2c_upgrade(&req).filter(|_| self.io.is_plain()) {
                if self.wbuf.capacity() == 0 {
                    self.wbuf = self.worker.buffers.take_write();
                }
                // RFC 7540 §3.2: "HTTP/1.1 101 Switching Protocols", then the server's
                // connection preface (its SETTINGS), then the response on stream 1.
                self.wbuf.extend_from_slice(SWITCHING_TO_H2C);
                return Ok(Some(Start::Upgrade(Box::new(Upgraded { request: req, settings }))));
            }
        }
        if has_body {
            let source = self.body.get_or_insert_with(RequestBody::new);
            let id = source.start(body_len, self.worker.config.max_body_bytes);
            *req.body_mut() = Body::incoming(source.clone(), id);
            // RFC 9110 §10.1.1: ignore 100-continue from an HTTP/1.0 client.
            self.cont = framing.expect_continue && version == Version::Http11;
        }
        if let Some(metrics) = &self.worker.metrics {
            metrics.request_started();
        }
        Ok(Some(Start::Job(Job {
            slot: self.service.call(req),
            keep_alive: framing.keep_alive,
            is_head,
            version,
            has_body,
        })))
    }

    /// Runs a started request and queues its response. `Ok(true)`: keep going.
    async fn dispatch(
        &mut self,
        job: Job<H::Future>,
        sleep: &mut Pin<&mut Sleep>,
    ) -> Result<bool, Close> {
        // Layout note: whatever is live across an `.await` here is part of every connection's
        // future, idle or not; the rare paths (draining, streamed bodies) box their futures.
        let Job { slot, keep_alive, is_head, version, has_body } = job;
        self.client_close = !keep_alive;
        let (keep_alive, rest, drain) =
            match self.call(slot, keep_alive, is_head, version, has_body, sleep).await {
                Outcome::Encoded { keep_alive, rest, drain } => (keep_alive, rest?, drain),
                Outcome::Panicked => {
                    let mut res =
                        error_response(StatusCode::INTERNAL_SERVER_ERROR, "internal server error");
                    (false, self.encode_response(&mut res, is_head, version, false)?.0, false)
                }
                Outcome::BodyTimedOut => {
                    if let Some(body) = &self.body {
                        body.fail(BodyErrorKind::TimedOut);
                        body.detach();
                    }
                    let mut res = error_response(StatusCode::REQUEST_TIMEOUT, "body too slow");
                    (false, self.encode_response(&mut res, is_head, version, false)?.0, false)
                }
            };
        if let Some((mut body, length)) = rest {
            let sent = Box::pin(self.write_body(&mut body, length, sleep)).await;
            if let (Some(log), Ok(n)) = (&mut self.log, &sent) {
                log.bytes += n;
            }
            if let (Some(metrics), Ok(n)) = (&self.worker.metrics, &sent) {
                metrics.body_bytes(*n);
            }
            sent?;
            if length == BodyLength::CloseDelimited {
                self.log_response();
                return Err(Close::Done);
            }
        }
        self.log_response();
        if drain {
            // The response goes out first; the unread body is dropped after it.
            self.flush(sleep).await?;
            if !Box::pin(self.drain(sleep)).await {
                return Err(Close::Done);
            }
        }
        if !keep_alive {
            // `serve` flushes it, with the TLS close_notify.
            return Ok(false);
        }
        if self.wbuf.len() >= FLUSH_AT {
            self.flush(sleep).await?;
        }
        Ok(true)
    }

    /// Hands the finished request to the access log.
    fn log_response(&mut self) {
        if let (Some(log), Some(state)) = (&self.worker.access_log, &mut self.log) {
            state.emit(log, self.peer.addr());
        }
    }

    /// Runs the handler to completion, reading its request body for it, catching panics and
    /// enforcing the body data rate; encodes its response.
    async fn call(
        &mut self,
        mut slot: Slot<H::Future>,
        keep_alive: bool,
        is_head: bool,
        version: Version,
        has_body: bool,
        sleep: &mut Pin<&mut Sleep>,
    ) -> Outcome {
        let outcome = poll_fn(|cx| {
            if has_body {
                if let Some(body) = &self.body {
                    body.watch(cx.waker());
                }
            }
            loop {
                let polled = poll_handler(&mut slot, cx, |out| {
                    let mut res = out.into_response();
                    self.finish(&mut res, keep_alive, is_head, version, has_body)
                });
                match polled {
                    Poll::Ready(Ok(outcome)) => return Poll::Ready(outcome),
                    Poll::Ready(Err(Panicked)) => {
                        if let Some(body) = self.body.as_ref().filter(|_| has_body) {
                            body.detach();
                        }
                        return Poll::Ready(Outcome::Panicked);
                    }
                    Poll::Pending => {}
                }
                // Time passes while the handler waits: its response gets a fresh Date.
                self.date = None;
                if !has_body {
                    return Poll::Pending;
                }
                match self.pump(sleep, cx) {
                    // Something for the reader: poll the handler again.
                    Poll::Ready(()) => continue,
                    Poll::Pending => {}
                }
                if self.body_rate_expired(sleep, cx) {
                    return Poll::Ready(Outcome::BodyTimedOut);
                }
                return Poll::Pending;
            }
        })
        .await;
        self.service.put(slot);
        if let Some(metrics) = &self.worker.metrics {
            metrics.request_finished();
        }
        outcome
    }

    /// The handler returned `res`: settles the request body, then encodes the response.
    ///
    /// A body the handler did not read to its end is dealt with here, before the response is
    /// written but without waiting for bytes: what is already buffered is read and checked
    /// (so a malformed chunk gets its 400 rather than a 200 and a closed connection), and what
    /// has not arrived is drained after the response, or the connection closes after it.
    fn finish(
        &mut self,
        res: &mut Response,
        keep_alive: bool,
        is_head: bool,
        version: Version,
        has_body: bool,
    ) -> Outcome {
        let mut keep_alive = keep_alive && !self.worker.draining();
        let mut drain = false;
        if let Some(body) = self.body.as_ref().filter(|_| has_body) {
            body.detach();
            if body.error().is_some() {
                // The body failed (too large, malformed, cut): its framing is lost.
                keep_alive = false;
            } else if !body.wire_done() {
                let max = self.worker.config.max_drain_bytes;
                let before = body.received();
                if body.remaining().is_some_and(|n| n > max) {
                    // A declared length past the drain limit: close after the response.
                    keep_alive = false;
                } else {
                    match body.discard(&mut self.rbuf, max) {
                        Err(e) => {
                            let status =
                                StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
                            *res = error_response(status, "invalid request body");
                            keep_alive = false;
                        }
                        Ok(true) => {}
                        Ok(false) => {
                            // The client may wait for `100 Continue` and never send the body.
                            let waiting = self.cont && self.rbuf.is_empty();
                            let spent = body.received() - before >= max;
                            if waiting || spent {
                                keep_alive = false;
                            } else {
                                drain = keep_alive;
                            }
                        }
                    }
                }
            }
            self.cont = false;
        }
        if let Some(log) = &mut self.log {
            log.status = res.status().as_u16();
        }
        let rest = self.encode_response(res, is_head, version, keep_alive).map(|(rest, n)| {
            if let Some(log) = &mut self.log {
                log.bytes = n;
            }
            rest
        });
        Outcome::Encoded { keep_alive, rest, drain }
    }

    /// Reads the request body on the handler's behalf, when it waits for bytes: sends the
    /// `100 Continue` it may be owed (after the responses queued before it), delivers what the
    /// read buffer holds, else reads the socket. `Ready`: the reader has something (a chunk,
    /// the end, an error); `Pending`: waiting for the socket.
    fn pump(&mut self, sleep: &mut Pin<&mut Sleep>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(body) = self.body.clone() else {
            return Poll::Pending;
        };
        if !body.wants() {
            return Poll::Pending;
        }
        loop {
            if self.cont {
                self.cont = false;
                // RFC 9110 §10.1.1: a server may omit 100 when body bytes have already come.
                if self.rbuf.is_empty() {
                    if self.wbuf.capacity() == 0 {
                        self.wbuf = self.worker.buffers.take_write();
                    }
                    self.wbuf.extend_from_slice(CONTINUE);
                }
            }
            if self.wpos < self.wbuf.len() || self.io.has_pending() {
                let mut armed = false;
                let Conn { io, worker, wbuf, wpos, .. } = &mut *self;
                match poll_flush(io, wbuf, wpos, worker, sleep, &mut armed, cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(_)) => {
                        body.fail(BodyErrorKind::Io(io::ErrorKind::BrokenPipe));
                        return Poll::Ready(());
                    }
                    Poll::Ready(Ok(())) => {}
                }
            }
            if body.feed(&mut self.rbuf) == Fed::Delivered {
                return Poll::Ready(());
            }
            if self.rbuf.capacity() - self.rbuf.len() < MIN_READ {
                self.rbuf.reserve(MIN_READ);
            }
            match ready!(self.io.poll_read_buf(cx, &mut self.rbuf)) {
                Ok(0) => {
                    body.fail(BodyErrorKind::Incomplete);
                    return Poll::Ready(());
                }
                Ok(_) => {}
                Err(e) => {
                    body.fail(BodyErrorKind::Io(e.kind()));
                    return Poll::Ready(());
                }
            }
        }
    }

    /// Whether the body the handler waits on has fallen below the minimum data rate; arms the
    /// timer for it otherwise. The rate clock starts when the body first waits for the socket.
    fn body_rate_expired(&mut self, sleep: &mut Pin<&mut Sleep>, cx: &mut Context<'_>) -> bool {
        let Some(body) = self.body.as_ref().filter(|b| b.wants()) else {
            return false;
        };
        let Some(allowance) = self.worker.config.body_rate_allowance(body.received()) else {
            return false;
        };
        let deadline = Instant::from_std(body.waiting_since()) + allowance;
        if sleep.deadline() != deadline {
            sleep.as_mut().reset(deadline);
        }
        sleep.as_mut().poll(cx).is_ready()
    }

    /// Reads and drops the rest of an unread body after its response, up to `max_drain_bytes`
    /// and at the minimum data rate. True when the connection can go on.
    async fn drain(&mut self, sleep: &mut Pin<&mut Sleep>) -> bool {
        let Some(body) = self.body.clone() else {
            return true;
        };
        let config = self.worker.config;
        let started = Instant::now();
        let mut drained = 0u64;
        poll_fn(|cx| {
            loop {
                let before = self.rbuf.len();
                match body.discard(&mut self.rbuf, config.max_drain_bytes - drained) {
                    Err(_) => return Poll::Ready(false),
                    Ok(true) => return Poll::Ready(true),
                    Ok(false) => {}
                }
                drained += (before - self.rbuf.len()) as u64;
                if drained >= config.max_drain_bytes {
                    return Poll::Ready(false);
                }
                if self.rbuf.capacity() - self.rbuf.len() < MIN_READ {
                    self.rbuf.reserve(MIN_READ);
                }
                match self.io.poll_read_buf(cx, &mut self.rbuf) {
                    Poll::Ready(Ok(0) | Err(_)) => return Poll::Ready(false),
                    Poll::Ready(Ok(_)) => continue,
                    Poll::Pending => {
                        let deadline = config
                            .body_rate_allowance(drained)
                            .map_or(started + config.header_read_timeout, |a| started + a);
                        if sleep.deadline() != deadline {
                            sleep.as_mut().reset(deadline);
                        }
                        if sleep.as_mut().poll(cx).is_ready() {
                            return Poll::Ready(false);
                        }
                        return Poll::Pending;
                    }
                }
            }
        })
        .await
    }

    /// Encodes `res` into the write buffer; see [`encode_response`]. Counts it when metrics
    /// are on (a response that cannot be sent goes out as a 500).
    fn encode_response(
        &mut self,
        res: &mut Response,
        is_head: bool,
        version: Version,
        keep_alive: bool,
    ) -> Result<(Rest, u64), Close> {
        let status = res.status().as_u16();
        let encoded = encode_response(
            &mut self.wbuf,
            &mut self.date,
            &self.worker,
            res,
            is_head,
            version,
            keep_alive,
        );
        if let Some(metrics) = &self.worker.metrics {
            count_response(metrics, status, &encoded);
        }
        encoded
    }

    /// Waits until the socket is readable. Flushes pending responses first. Fails on the
    /// deadline (`None`: the keep-alive timeout from when the wait pends), and (between
    /// requests) on shutdown.
    ///
    /// Only a wait that pends makes the connection idle: then, when no partial head is
    /// buffered, its buffers go back to the pool, and the timer is armed. When bytes are
    /// already readable, neither buffers nor timer nor clock are touched.
    ///
    /// One poll function for the flush and the wait, not an `async fn` awaiting two: the
    /// connection's future then keeps one small state for the whole wait, which it reads again
    /// at every wake-up.
    fn wait_readable<'a>(
        &'a mut self,
        sleep: &'a mut Pin<&mut Sleep>,
        deadline: Option<Instant>,
        partial: bool,
    ) -> impl Future<Output = Result<(), Close>> + 'a {
        // Bytes TLS already decrypted mean no wait: what is queued (responses, the session
        // tickets) leaves with the answers to them, in one write.
        let mut flushed = self.io.has_buffered_read();
        let mut armed = false;
        // Between requests (no deadline given) the connection is idle: the longest-idle one
        // may be closed to admit a new connection at the limit.
        let between = deadline.is_none();
        let mut pending: Option<Instant> = None;
        // Poll functions rather than the `readable()` future: no waiter stored in this
        // connection's future, which every idle connection carries. A `move` closure holding
        // one pointer to the connection, not one per field it uses.
        let this = self;
        poll_fn(move |cx| {
            if !flushed {
                ready!(this.poll_flush_all(sleep, &mut armed, cx))?;
                flushed = true;
            }
            let ready = match this.io.poll_read_ready(cx) {
                Poll::Ready(ready) => ready.map_err(Close::from),
                Poll::Pending => match this.poll_wait(sleep, deadline, partial, &mut pending, cx) {
                    Poll::Ready(closed) => Err(closed),
                    Poll::Pending => return Poll::Pending,
                },
            };
            if between && pending.is_some() {
                this.worker.go_busy(this.idle);
            }
            Poll::Ready(ready)
        })
    }

    /// The wait's side when the socket is not readable: the first time, the connection goes
    /// idle (buffers, idle order, timer); then the deadline, the drain and eviction are
    /// checked. `Ready` only to close.
    fn poll_wait(
        &mut self,
        sleep: &mut Pin<&mut Sleep>,
        deadline: Option<Instant>,
        partial: bool,
        pending: &mut Option<Instant>,
        cx: &mut Context<'_>,
    ) -> Poll<Close> {
        let Conn { rbuf, worker, wbuf, wpos, idle, timer_at, holding, .. } = self;
        let (worker, idle) = (&*worker, *idle);
        let between = deadline.is_none();
        let deadline = *pending.get_or_insert_with(|| {
            // A few connections per worker keep their buffers (a bounded amount of memory);
            // the others hand them back, so idle connections cost no buffer.
            if !partial && holding.0.is_none() && !worker.buffers.hold() {
                release_buffers(rbuf, worker, wbuf, wpos);
            } else if !partial && holding.0.is_none() {
                holding.0 = Some(worker.clone());
            }
            if between {
                worker.go_idle(idle);
            }
            let deadline =
                deadline.unwrap_or_else(|| Instant::now() + worker.config.keep_alive_timeout);
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
                    return Poll::Ready(Close::Done);
                }
                // The timer fired early (it is only ever pulled in, see `arm`): re-arm.
                sleep.as_mut().reset(deadline);
            }
            *timer_at = budget.then(|| sleep.deadline());
        }
        // Between requests, the end of a drain's grace period closes the connection, and
        // so does an eviction; inside a head it waits.
        if !partial {
            if worker.stopping() || worker.evicted(idle) {
                return Poll::Ready(Close::Done);
            }
            worker.watch(idle, cx.waker());
        }
        Poll::Pending
    }

    /// Reads what the socket has. `Ok(false)` at end of stream.
    fn read(&mut self) -> Result<bool, Close> {
        let buf = &mut self.rbuf;
        if buf.capacity() == 0 {
            *buf = self.worker.buffers.take();
        }
        if buf.capacity() - buf.len() < MIN_READ {
            buf.reserve(MIN_READ);
        }
        // A new batch of requests: their responses get a fresh Date.
        self.date = None;
        match self.io.try_read_buf(buf) {
            Ok(0) => Ok(false),
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(true),
            Err(_) => Err(Close::Io),
        }
    }

    /// Hands empty buffers back to the worker's pool.
    fn release_buffers(&mut self) {
        release_buffers(&mut self.rbuf, &self.worker, &mut self.wbuf, &mut self.wpos);
    }
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

/// Parses the head at the front of `buf` with the worker's limits and its last head (spans
/// are relative to `buf`), applying the framing rules and finding the fixed answers.
///
/// Inlined into both callers (the connection's `step`, the fixed-answer loop): out of line, the
/// ~280-byte `Next` went back through memory, +60 instructions per request on a handler's path.
#[inline(always)]
fn parse_head(worker: &Worker, scanner: &mut HeadScanner, host: &mut HostMemo, buf: &[u8]) -> Next {
    if buf.is_empty() {
        return Next::Partial;
    }
    let limits = worker.parser_limits;
    let fixed = worker.ops.as_deref().filter(|ops| ops.fixed_h1);
    // Uninitialised: no placeholder headers written per request (1.25 KiB of stores).
    let mut slots = [const { MaybeUninit::uninit() }; STACK_HEADERS];
    let n = limits.max_headers.min(STACK_HEADERS);
    let mut last = worker.last_head.borrow_mut();
    match last.parse_uninit(scanner, buf, &mut slots[..n], &limits) {
        Err(ParseError::TooManyHeaders) if limits.max_headers > STACK_HEADERS => {
            let mut heap = vec![EMPTY_HEADER; limits.max_headers];
            next_of(buf, scanner.parse(buf, &mut heap, &limits), host, fixed)
        }
        parsed => next_of(buf, parsed, host, fixed),
    }
}

/// Turns a parse result into [`Next`], applying the framing rules to a complete head, and
/// finding the prepared fixed answers in `fixed` (when they may be used).
fn next_of(
    buf: &[u8],
    parsed: Result<Status<RequestHead<'_, '_>>, ParseError>,
    host: &mut HostMemo,
    fixed: Option<&Ops>,
) -> Next {
    match parsed {
        Ok(Status::Complete(head)) => match request_framing_remembering(&head, host) {
            Ok(framing) => {
                if let Some(index) = fixed.and_then(|ops| fixed_answer(ops, &head, &framing)) {
                    let is_head = head.method == Method::Head;
                    return Next::Fixed { index, is_head, len: head.len };
                }
                Next::Request { spans: HeadSpans::from_head(buf, &head), framing, len: head.len }
            }
            Err(e) => Next::Error(e),
        },
        Ok(Status::Partial) => Next::Partial,
        Err(e) => Next::Error(e),
    }
}

/// The prepared fixed answer to `head`, if it is an HTTP/1.1 keep-alive `GET` or `HEAD`
/// without a body of its path, in origin form (RFC 9112 §3.2.1; the other forms take the
/// general path, which reads their path from the spans).
#[inline]
fn fixed_answer(ops: &Ops, head: &RequestHead<'_, '_>, framing: &RequestFraming) -> Option<usize> {
    let plain = head.version == Version::Http11
        && framing.keep_alive
        && framing.body == BodyLength::Length(0)
        && matches!(head.method, Method::Get | Method::Head)
        && head.form == TargetForm::Origin;
    if !plain {
        return None;
    }
    let target = head.target.as_bytes();
    ops.fixed.iter().position(|f| f.is_prepared() && f.answers_target(target))
}

/// Hands a connection's empty buffers back to the worker's pool.
fn release_buffers(rbuf: &mut BytesMut, worker: &Worker, wbuf: &mut Vec<u8>, wpos: &mut usize) {
    if rbuf.is_empty() && rbuf.capacity() != 0 {
        worker.buffers.put(std::mem::take(rbuf));
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
