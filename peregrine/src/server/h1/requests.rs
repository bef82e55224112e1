//! The `Requests` phase: parse what the read buffer holds, answer what the server answers
//! itself (fixed answers, health, metrics, refusals), start a handler for the rest, and wait for
//! bytes when no complete request is left.

use std::mem::MaybeUninit;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes};

use super::body::RequestBody;
use super::{Close, H1Conn, Phase, Running, Switch};
use crate::body::Body;
use crate::handler::Handler;
use crate::http1::conn::{Error as WireError, Event};
use crate::http1::framing::{BodyLength, RequestFraming};
use crate::http1::{Header, RequestHead, TargetForm};
use crate::http2::upgrade::decode_settings_field;
use crate::request::{HeadSpans, Request};
use crate::server::access_log::{LogEntry, refused_request_line};
use crate::server::h2::Upgraded;
use crate::server::ops::Ops;
use crate::{Method, Version};

/// Headers on the stack for the first parse attempt; a head with more fields (up to
/// `Limits::max_headers`) is parsed again into a heap array.
const STACK_HEADERS: usize = 32;

/// The answer to an accepted `Upgrade: h2c` (RFC 7540 §3.2).
const SWITCHING_TO_H2C: &[u8] =
    b"HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: h2c\r\n\r\n";

/// What `recv` found, owned: the parsed head (~280 bytes as a `RequestHead`) must not be alive
/// across the rest of the step.
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
    /// Bytes used with nothing to report (a drained body's).
    Used(usize),
    Wait,
    Error(WireError),
    Http2Preface,
    NeedSlots(usize),
}

/// What the requests phase does next.
pub(super) enum Step {
    /// A handler was started.
    Run,
    /// A request was answered by the server itself: parse the next one.
    Next,
    /// No complete request is buffered.
    Wait,
    /// The connection ends after what is queued.
    Close,
    /// The connection switches to HTTP/2.
    Http2(Option<Box<Upgraded>>),
}

impl<H: Handler> H1Conn<H> {
    /// Parses and answers what the read buffer holds; when no complete request is left,
    /// writes the answers and waits for bytes.
    pub(super) fn poll_requests(&mut self, cx: &mut Context<'_>) -> Poll<Phase> {
        loop {
            // A wait under way (it pended before) found no complete request: the bytes are
            // read before anything is parsed again.
            if !self.waiting() {
                // A long pipelined batch of answers the server wrote itself is written as it
                // grows, as handlers' responses are.
                if self.wbuf.len() >= super::FLUSH_AT {
                    if let Err(close) = ready!(self.poll_flush(cx)) {
                        return Poll::Ready(self.closed(close));
                    }
                }
                match self.step() {
                    // The handler runs at once: most answer in their first poll, and the next
                    // request is then parsed here, without a round through the phase loop.
                    Ok(Step::Run) => match self.poll_handler(cx) {
                        Poll::Ready(Phase::Requests) => continue,
                        Poll::Ready(next) => return Poll::Ready(next),
                        Poll::Pending => {
                            self.phase = Phase::Handler;
                            return Poll::Pending;
                        }
                    },
                    Ok(Step::Next) => continue,
                    Ok(Step::Wait) => {}
                    Ok(Step::Close) => return Poll::Ready(Phase::Closing { linger: true }),
                    Ok(Step::Http2(upgraded)) => {
                        self.switch = Some(Box::new(Switch::Http2(upgraded)));
                        return Poll::Ready(Phase::Switch);
                    }
                    Err(close) => return Poll::Ready(self.closed(close)),
                }
                if self.conn.is_closed() {
                    return Poll::Ready(Phase::Closing { linger: true });
                }
            }
            match ready!(self.poll_read(cx)) {
                Ok(true) => {}
                // End of stream: between requests the client is done; inside a head there is
                // nobody left to answer.
                Ok(false) => {
                    let _ = self.conn.recv_eof();
                    return Poll::Ready(Phase::Done);
                }
                Err(close) => return Poll::Ready(self.closed(close)),
            }
        }
    }

    /// Parses the next head and starts its request, or says why not.
    fn step(&mut self) -> Result<Step, Close> {
        // Fixed answers are written here and the next head parsed at once, without a round
        // through the phase loop. Their heads are consumed from the read buffer in one step on
        // the way out: `skip` bytes.
        let mut skip = 0;
        let (spans, framing, len) = loop {
            let next = self.recv_next(skip);
            match next {
                Next::Fixed { index, is_head, len } => {
                    skip += len;
                    match self.answer_fixed(index, is_head)? {
                        Step::Next if self.wbuf.len() < super::FLUSH_AT => continue,
                        step => {
                            self.rbuf.advance(skip);
                            return Ok(step);
                        }
                    }
                }
                Next::Used(n) => {
                    skip += n;
                    continue;
                }
                _ => {}
            }
            if skip > 0 {
                self.rbuf.advance(skip);
                skip = 0;
            }
            // A run of fixed answers stays counted only while the connection waits for more
            // bytes (the flush before the wait writes it); whatever else is queued goes after.
            if !matches!(next, Next::Wait) {
                self.queue_fixed_run()?;
            }
            match next {
                Next::Request { spans, framing, len } => break (spans, framing, len),
                Next::Wait => return Ok(Step::Wait),
                Next::Http2Preface => return Ok(Step::Http2(None)),
                Next::Error(e) => return self.refused(e),
                Next::NeedSlots(n) => {
                    let next = self.recv_heap(n);
                    match next {
                        Next::Request { spans, framing, len } => break (spans, framing, len),
                        Next::Error(e) => return self.refused(e),
                        _ => return Ok(Step::Wait),
                    }
                }
                Next::Fixed { .. } | Next::Used(_) => unreachable!("handled above"),
            }
        };
        let _ = skip;
        if self.worker.draining() {
            self.conn.shutdown();
        }
        if self.worker.ops.is_some() {
            if let Some(step) = self.answer_ops(&spans, &framing, len)? {
                return Ok(step);
            }
        }
        let head = self.rbuf.split_to(len).freeze();
        Ok(self.start(head, spans, framing))
    }

    /// Receives from the read buffer past its first `skip` bytes (spans are relative to that
    /// point), applying the framing rules and finding the prepared fixed answers.
    ///
    /// Inlined: out of line, the ~280-byte `Next` went back through memory, +60 instructions per
    /// request on a handler's path.
    #[inline(always)]
    fn recv_next(&mut self, skip: usize) -> Next {
        let buf = self.rbuf.get(skip..).unwrap_or_default();
        // Uninitialised: no placeholder headers written per request (1.25 KiB of stores).
        let mut slots = [const { MaybeUninit::<Header<'_>>::uninit() }; STACK_HEADERS];
        let mut last = self.worker.last_head.borrow_mut();
        // Looked at where it was returned, not moved: the event is ~160 bytes, and each move
        // of it was a `memcpy` per request.
        let received = self.conn.recv(buf, &mut slots, Some(&mut last));
        let fixed = self.worker.ops.as_deref().filter(|ops| ops.fixed_h1);
        next_of(buf, &received, fixed)
    }

    /// [`H1Conn::recv_next`] with `n` header slots on the heap, for a head with more fields
    /// than the stack holds.
    #[cold]
    fn recv_heap(&mut self, n: usize) -> Next {
        let buf = &self.rbuf[..];
        let mut slots = Vec::new();
        slots.resize_with(n, MaybeUninit::uninit);
        let mut last = self.worker.last_head.borrow_mut();
        let received = self.conn.recv(buf, &mut slots, Some(&mut last));
        next_of(buf, &received, None)
    }

    /// A head was refused: its answer is queued (unless the bytes get none), the connection
    /// ends after it, and the refusal is logged, with the request line read from the front of
    /// the read buffer (a refused head was not consumed). Bytes that are not HTTP/1 at all
    /// are closed unanswered and unlogged.
    #[cold]
    fn refused(&mut self, error: WireError) -> Result<Step, Close> {
        if !error.answered() {
            return Err(Close::Io);
        }
        if let Some(log) = self.worker.access_log.clone() {
            let (method, target, version) = refused_request_line(&self.rbuf);
            let mut entry = LogEntry::new(self.peer.addr(), &method, &target, error.status());
            entry.version = version;
            entry.body_bytes = error.reason().len() as u64;
            entry.refused = true;
            (log.0)(&entry);
        }
        if let Some(metrics) = &self.worker.metrics {
            metrics.response(error.status(), error.reason().len() as u64);
        }
        if self.wbuf.capacity() == 0 {
            self.wbuf = self.worker.buffers.take_write();
        }
        let date = *self.date.get_or_insert_with(crate::server::clock::date);
        self.conn.poll_transmit(&mut self.wbuf, &date);
        Ok(Step::Close)
    }

    /// A head timed out (the slowloris defence): nothing is sent, but the log shows a 408 for
    /// a head that had begun, as nginx's does.
    pub(super) fn log_timeout(&mut self) {
        let Some(log) = self.worker.access_log.clone() else { return };
        if self.rbuf.is_empty() {
            return;
        }
        let (method, target, version) = refused_request_line(&self.rbuf);
        let mut entry = LogEntry::new(self.peer.addr(), &method, &target, 408);
        entry.version = version;
        entry.refused = true;
        (log.0)(&entry);
    }

    /// Builds the request whose head was split off the buffer and starts its handler (which
    /// runs only when polled), or the switch to HTTP/2 it asked for.
    fn start(&mut self, head: Bytes, spans: HeadSpans, framing: RequestFraming) -> Step {
        if self.worker.access_log.is_some() {
            self.log.get_or_insert_with(Default::default).start(&head, &spans);
        }
        self.client_close = !framing.keep_alive;
        let mut req = Request::from_parts(head, spans, Body::empty());
        req.remote_addr = Some(self.peer.clone());
        req.secure = !self.io.is_plain();
        let has_body = framing.body != BodyLength::Length(0);
        let config = &self.worker.config;
        if framing.upgrade && !has_body && config.http2 && config.h2c && self.io.is_plain() {
            if let Some(settings) = h2c_upgrade(&req) {
                if self.wbuf.capacity() == 0 {
                    self.wbuf = self.worker.buffers.take_write();
                }
                // RFC 7540 §3.2: "HTTP/1.1 101 Switching Protocols", then the server's
                // connection preface (its SETTINGS), then the response on stream 1.
                let sent =
                    self.conn.send_response(101, Some(0), false, &mut self.wbuf, |_, out| {
                        out.extend_from_slice(SWITCHING_TO_H2C);
                        Ok(0)
                    });
                if sent.is_ok() {
                    return Step::Http2(Some(Box::new(Upgraded { request: req, settings })));
                }
            }
        }
        if has_body {
            let source = self.body.get_or_insert_with(RequestBody::new);
            let id = source.start(self.conn.body_remaining());
            *req.body_mut() = Body::incoming(source.clone(), id);
        }
        if let Some(metrics) = &self.worker.metrics {
            metrics.request_started();
        }
        self.running = Some(Running { future: self.service.call(req), has_body });
        Step::Run
    }

    /// Hands the finished request to the access log.
    pub(super) fn log_response(&mut self) {
        if let (Some(log), Some(state)) = (&self.worker.access_log, &mut self.log) {
            state.emit(log, self.peer.addr());
        }
    }
}

/// Turns what `recv` found into [`Next`]: spans for a request, or the prepared fixed answer
/// to it (from `fixed`, when those may be used).
#[inline(always)]
fn next_of(buf: &[u8], received: &(usize, Option<Event<'_, '_>>), fixed: Option<&Ops>) -> Next {
    let used = received.0;
    match &received.1 {
        Some(Event::Request { head, framing, .. }) => {
            if let Some(index) = fixed.and_then(|ops| fixed_answer(ops, head, framing)) {
                let is_head = head.method == Method::Head;
                return Next::Fixed { index, is_head, len: used };
            }
            let framing = *framing;
            Next::Request {
                spans: HeadSpans::from_head(buf, head, framing.upgrade),
                framing,
                len: used,
            }
        }
        None if used == 0 => Next::Wait,
        None => Next::Used(used),
        Some(Event::Error(e)) => Next::Error(*e),
        Some(Event::Http2Preface) => Next::Http2Preface,
        Some(Event::NeedSlots(n)) => Next::NeedSlots(*n),
        // A body's events come in the handler's phase only.
        Some(_) => Next::Wait,
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
