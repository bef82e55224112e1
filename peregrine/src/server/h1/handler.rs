//! The `Handler` phase: the handler's future polled in place, its request body read on its
//! behalf, panics and slow bodies answered, and its response settled and encoded.

use std::io;
use std::task::{Context, Poll};

use bytes::Buf;
use http::StatusCode;

use super::body::error_kind;
use super::respond::error_response;
use super::stream::Streaming;
use super::{H1Conn, Phase, Switch};
use crate::body::BodyErrorKind;
use crate::handler::Handler;
use crate::http1::conn::{Error as WireError, Event, Timeout};
use crate::response::{IntoResponse, Response};
use crate::server::call::{Panicked, poll_handler};

/// What the body's wire state gave, owned.
enum Fed {
    /// A chunk at this range of the bytes used.
    Data(std::ops::Range<usize>),
    End(Option<http::HeaderMap>),
    Failed(BodyErrorKind),
    /// Framing alone.
    Used,
    /// More bytes are needed.
    Starved,
}

impl<H: Handler> H1Conn<H> {
    /// Runs the handler: polls it, reads its request body when it waits for one, enforces
    /// the body's data rate; on its response, settles the request body and encodes the
    /// response.
    pub(super) fn poll_handler(&mut self, cx: &mut Context<'_>) -> Poll<Phase> {
        let Some(mut running) = self.running.take() else {
            return Poll::Ready(Phase::Requests);
        };
        let has_body = running.has_body;
        if has_body {
            if let Some(body) = &self.body {
                body.watch(cx.waker());
            }
        }
        loop {
            let polled = poll_handler(&mut running.future, cx, |out| {
                let mut res = out.into_response();
                self.finish(&mut res, has_body)
            });
            match polled {
                Poll::Ready(Ok(next)) => {
                    self.end_running(running.future);
                    return Poll::Ready(next);
                }
                Poll::Ready(Err(Panicked)) => {
                    if let Some(body) = self.body.as_ref().filter(|_| has_body) {
                        body.detach();
                    }
                    self.end_running(running.future);
                    let mut res =
                        error_response(StatusCode::INTERNAL_SERVER_ERROR, "internal server error");
                    return Poll::Ready(self.answer_and_close(&mut res));
                }
                Poll::Pending => {}
            }
            // Time passes while the handler waits: its response gets a fresh Date.
            self.date = None;
            if !has_body {
                self.running = Some(running);
                return Poll::Pending;
            }
            if self.pump(cx).is_ready() {
                // Something for the reader: poll the handler again.
                continue;
            }
            if self.body_too_slow(cx) {
                if let Some(body) = &self.body {
                    body.fail(BodyErrorKind::TimedOut);
                    body.detach();
                }
                self.end_running(running.future);
                let mut res = error_response(StatusCode::REQUEST_TIMEOUT, "body too slow");
                return Poll::Ready(self.answer_and_close(&mut res));
            }
            self.running = Some(running);
            return Poll::Pending;
        }
    }

    /// The handler's box goes back to the pool.
    fn end_running(&mut self, future: crate::server::service::HandlerBox<H::Future>) {
        self.service.put(future);
        if let Some(metrics) = &self.worker.metrics {
            metrics.request_finished();
        }
    }

    /// Answers with `res` and ends the connection after it (a panic, a slow body).
    fn answer_and_close(&mut self, res: &mut Response) -> Phase {
        self.conn.shutdown();
        if let Some(log) = &mut self.log {
            log.status = res.status().as_u16();
        }
        match self.encode_response(res) {
            Ok(_) => {
                self.log_response();
                Phase::Closing { linger: false }
            }
            Err(close) => self.closed(close),
        }
    }

    /// The handler returned `res`: settles the request body, then encodes the response.
    ///
    /// A body the handler did not read to its end is dealt with here, before the response is
    /// written but without waiting for bytes: what is already buffered is read and checked
    /// (so a malformed chunk gets its 400 rather than a 200 and a closed connection), and what
    /// has not arrived is drained after the response, or the connection closes after it (the
    /// wire state's `settle`).
    fn finish(&mut self, res: &mut Response, has_body: bool) -> Phase {
        if let Some(body) = self.body.as_ref().filter(|_| has_body) {
            body.detach();
        }
        if self.conn.is_receiving_body() {
            let (used, settled) = self.conn.settle(&self.rbuf);
            self.rbuf.advance(used);
            if let Err(e) = settled {
                let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
                *res = error_response(status, "invalid request body");
            }
        }
        if self.worker.draining() {
            self.conn.shutdown();
        }
        if let Some(log) = &mut self.log {
            log.responded(res.status().as_u16());
        }
        let upgrade = res.take_upgrade();
        match self.encode_response(res) {
            Ok((None, n)) => {
                if let Some(log) = &mut self.log {
                    log.bytes = n;
                }
                if self.conn.is_upgraded() {
                    // The 101 is queued: what follows on the connection is the new protocol's
                    // (RFC 9110 §15.2.2), run by the session the handler accepted; a 101 without
                    // one leaves nobody to speak it, so the connection closes.
                    self.log_response();
                    return match upgrade {
                        Some(upgrade) => {
                            self.switch = Some(Box::new(Switch::Session(upgrade)));
                            Phase::Switch
                        }
                        None => Phase::Closing { linger: false },
                    };
                }
                self.after_response()
            }
            Ok((Some((body, length)), _)) => {
                self.stream = Some(Box::new(Streaming::new(body, length)));
                Phase::Body
            }
            Err(close) => self.closed(close),
        }
    }

    /// Reads the request body on the handler's behalf, when it waits for bytes: what the read
    /// buffer holds, else the socket, after the `100 Continue` the wire state may have queued
    /// (after the responses queued before it). `Ready`: the reader has something (a chunk, the
    /// end, an error); `Pending`: waiting for the socket.
    fn pump(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(body) = self.body.clone() else {
            return Poll::Pending;
        };
        if !body.wants() {
            return Poll::Pending;
        }
        loop {
            let (used, fed) = {
                let input = &self.rbuf[..];
                let (used, event) = self.conn.recv(input, &mut [], None);
                let fed = match event {
                    Some(Event::Data { data, .. }) => {
                        let at = data.as_ptr() as usize - input.as_ptr() as usize;
                        Fed::Data(at..at + data.len())
                    }
                    Some(Event::End { trailers, .. }) => Fed::End(trailers),
                    Some(Event::Error(WireError::Body(e))) => Fed::Failed(error_kind(e)),
                    Some(_) => Fed::Failed(BodyErrorKind::Invalid),
                    None if used > 0 => Fed::Used,
                    None => Fed::Starved,
                };
                (used, fed)
            };
            match fed {
                Fed::Data(range) => {
                    // Zero copy: the chunk shares the read buffer.
                    let taken = self.rbuf.split_to(used).freeze();
                    body.deliver(taken.slice(range), self.conn.body_remaining());
                    return Poll::Ready(());
                }
                Fed::End(trailers) => {
                    self.rbuf.advance(used);
                    body.end(trailers);
                    return Poll::Ready(());
                }
                Fed::Failed(kind) => {
                    body.fail(kind);
                    return Poll::Ready(());
                }
                Fed::Used => {
                    self.rbuf.advance(used);
                    continue;
                }
                Fed::Starved => {}
            }
            // RFC 9110 §10.1.1: a `100 Continue` the wire state queued goes out now.
            let date = *self.date.get_or_insert_with(crate::server::clock::date);
            if self.wbuf.capacity() == 0 {
                self.wbuf = self.worker.buffers.take_write();
            }
            self.conn.poll_transmit(&mut self.wbuf, &date);
            if self.has_output() {
                match self.poll_flush(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(_)) => {
                        body.fail(BodyErrorKind::Io(io::ErrorKind::BrokenPipe));
                        return Poll::Ready(());
                    }
                    Poll::Ready(Ok(())) => {}
                }
            }
            if self.rbuf.capacity() - self.rbuf.len() < super::MIN_READ {
                self.rbuf.reserve(super::MIN_READ);
            }
            match self.io.poll_read_buf(cx, &mut self.rbuf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(0)) => {
                    let _ = self.conn.recv_eof();
                    body.fail(BodyErrorKind::Incomplete);
                    return Poll::Ready(());
                }
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(e)) => {
                    body.fail(BodyErrorKind::Io(e.kind()));
                    return Poll::Ready(());
                }
            }
        }
    }

    /// Whether the body the handler waits on has fallen below the minimum data rate; arms the
    /// timer for it otherwise. Its clock started when the body first waited for the socket.
    fn body_too_slow(&mut self, cx: &mut Context<'_>) -> bool {
        if !self.body.as_ref().is_some_and(|b| b.wants()) {
            return false;
        }
        let now = std::time::Instant::now();
        let Some(deadline) = self.conn.poll_timeout(now) else {
            return false;
        };
        let deadline = tokio::time::Instant::from_std(deadline);
        if self.timer.poll_until(cx, deadline).is_pending() {
            return false;
        }
        self.conn.handle_timeout(std::time::Instant::now()) == Some(Timeout::BodyRate)
    }
}
