//! The `Body` phase: a response body streamed after its head, framed by the wire state — small
//! chunks copied into the write buffer, large ones written from their own buffer, a file span
//! sent with `sendfile(2)` on plain TCP.

use std::task::{Context, Poll, ready};

use bytes::Bytes;

use super::respond::COPY_MAX;
use super::{Close, FLUSH_AT, H1Conn, Phase};
use crate::body::Body;
use crate::handler::Handler;
use crate::http1::framing::BodyLength;

/// A response body being sent.
#[derive(Debug)]
pub(super) struct Streaming {
    body: Body,
    length: BodyLength,
    /// Content bytes sent so far.
    sent: u64,
    /// A large chunk written from its own buffer once what is queued before it is out, and how
    /// much of it is.
    big: Option<(Bytes, usize)>,
    /// A file span is being sent with `sendfile(2)`, the socket corked.
    file: bool,
}

impl Streaming {
    pub(super) fn new(body: Body, length: BodyLength) -> Streaming {
        Streaming { body, length, sent: 0, big: None, file: false }
    }
}

impl<H: Handler> H1Conn<H> {
    /// Streams the body after its head, with the framing the head announced; then the next
    /// requests, or the close.
    pub(super) fn poll_stream(&mut self, cx: &mut Context<'_>) -> Poll<Phase> {
        let done = ready!(self.poll_body(cx));
        let sent = self.stream.take().map_or(0, |s| s.sent);
        if let Some(log) = &mut self.log {
            log.bytes += sent;
        }
        if let Some(metrics) = &self.worker.metrics {
            metrics.body_bytes(sent);
        }
        Poll::Ready(match done {
            Ok(()) => self.after_response(),
            // The body failed mid-response: the message cannot be completed, so the connection
            // closes and the client sees it truncated.
            Err(close) => self.closed(close),
        })
    }

    fn poll_body(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Close>> {
        let Some(s) = self.stream.as_deref_mut() else {
            return Poll::Ready(Ok(()));
        };
        // A file body of known length goes out with sendfile(2), skipping user space; over TLS
        // it is read in chunks like any body.
        #[cfg(target_os = "linux")]
        if let (BodyLength::Length(n), Some(_), true, false) =
            (s.length, s.body.file_span_mut(), self.io.is_plain(), s.file)
        {
            // Nothing to frame for a Content-Length body; it is counted whole.
            self.conn.send_payload(n, &mut self.wbuf).map_err(|_| Close::Done)?;
            // Corked, the head and the file leave in full segments (nginx's tcp_nopush).
            self.io.set_cork(true);
            s.file = true;
        }
        if s.file {
            let sent = ready!(self.poll_file(cx));
            self.io.set_cork(false);
            return Poll::Ready(sent);
        }
        loop {
            if self.stream.as_ref().is_some_and(|s| s.big.is_some()) {
                ready!(self.poll_big(cx))?;
            }
            let Some(s) = self.stream.as_deref_mut() else {
                return Poll::Ready(Ok(()));
            };
            let chunk = match s.body.poll_chunk(cx) {
                Poll::Pending => {
                    // What is queued goes out while the body waits: an event stream is read as
                    // it is written.
                    if self.has_output() {
                        ready!(self.poll_flush(cx))?;
                    }
                    return Poll::Pending;
                }
                Poll::Ready(None) => {
                    let trailers = s.body.take_trailers();
                    let fields: Vec<(&str, &[u8])> = trailers
                        .iter()
                        .flatten()
                        .map(|(name, value)| (name.as_str(), value.as_bytes()))
                        .collect();
                    // A Content-Length body short of its length cannot end well: close.
                    return Poll::Ready(
                        self.conn.finish(&fields, &mut self.wbuf).map_err(|_| Close::Done),
                    );
                }
                Poll::Ready(Some(Err(_))) => return Poll::Ready(Err(Close::Done)),
                Poll::Ready(Some(Ok(chunk))) => chunk,
            };
            if chunk.is_empty() {
                continue;
            }
            s.sent += chunk.len() as u64;
            // A body longer than its declared length would corrupt the framing: close.
            if chunk.len() >= COPY_MAX {
                // Large chunks go out from their own buffer, not copied.
                self.conn
                    .send_payload(chunk.len() as u64, &mut self.wbuf)
                    .map_err(|_| Close::Done)?;
                s.big = Some((chunk, 0));
                continue;
            }
            self.conn.send_data(&chunk, &mut self.wbuf).map_err(|_| Close::Done)?;
            if self.wbuf.len() >= FLUSH_AT {
                ready!(self.poll_flush(cx))?;
            }
        }
    }

    /// Writes what is queued, then the large chunk from its own buffer.
    fn poll_big(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Close>> {
        ready!(self.poll_flush(cx))?;
        let H1Conn { io, stream, stall, .. } = self;
        let Some((chunk, pos)) = stream.as_mut().and_then(|s| s.big.as_mut()) else {
            return Poll::Ready(Ok(()));
        };
        match io.poll_write_all(cx, chunk, pos, stall) {
            Poll::Ready(Ok(())) => {
                if let Some(s) = stream.as_mut() {
                    s.big = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(_)) => Poll::Ready(Err(Close::Io)),
            Poll::Pending => self.poll_stalled(cx),
        }
    }

    /// Writes what is queued (the head), then the file span with `sendfile(2)`.
    #[cfg(target_os = "linux")]
    fn poll_file(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Close>> {
        ready!(self.poll_flush(cx))?;
        let H1Conn { io, stream, stall, .. } = self;
        let Some(s) = stream.as_deref_mut() else {
            return Poll::Ready(Ok(()));
        };
        let BodyLength::Length(n) = s.length else {
            return Poll::Ready(Err(Close::Done));
        };
        let Some(span) = s.body.file_span_mut() else {
            return Poll::Ready(Err(Close::Done));
        };
        match io.poll_sendfile(cx, span, stall) {
            Poll::Ready(Ok(())) => {
                s.sent = n;
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(_)) => Poll::Ready(Err(Close::Io)),
            Poll::Pending => self.poll_stalled(cx),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn poll_file(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Close>> {
        Poll::Ready(Err(Close::Done))
    }

    /// A write that cannot go on: waits for the write timeout of the stall (the socket's
    /// writability is registered too), and fails once it passes.
    pub(super) fn poll_stalled(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Close>> {
        let timeout = self.worker.config.write_timeout;
        let deadline = self.stall.deadline(timeout).map(tokio::time::Instant::from_std);
        match deadline.map(|at| self.timer.poll_until(cx, at)) {
            Some(Poll::Ready(())) => Poll::Ready(Err(Close::Done)),
            _ => Poll::Pending,
        }
    }
}
