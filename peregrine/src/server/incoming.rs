//! Request bodies, read from the connection only when the handler asks.
//!
//! The connection's socket and read buffer live in a [`ConnIo`] shared (by `Rc`, one per
//! connection) between the connection loop and the [`Incoming`] body of the request being
//! handled. The handler's future is polled inside the connection's future, so the two never
//! run at once; the `RefCell`s are only borrowed within one synchronous step.

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue};
use tokio::net::TcpStream;

use super::limits::Config;
use crate::body::{BodyError, BodyErrorKind};
use crate::http1::chunked::{ChunkedDecoder, ChunkedError, trailer_fields};
use crate::http1::framing::BodyLength;

/// Spare room the read buffer must have before a read; less and it is reserved (reclaiming
/// the consumed front of the buffer when nothing else shares it).
pub(crate) const MIN_READ: usize = 1024;

/// The interim response for `Expect: 100-continue` (RFC 9110 §15.2.1).
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// A connection's socket and read buffer, and the state of the current request's body.
#[derive(Debug)]
pub(crate) struct ConnIo {
    pub(crate) stream: TcpStream,
    /// The client's address, as accepted.
    pub(crate) peer: SocketAddr,
    pub(crate) rbuf: RefCell<BytesMut>,
    body: RefCell<BodyState>,
}

#[derive(Debug)]
struct BodyState {
    /// Which request the body belongs to; an [`Incoming`] with another number is stale.
    seq: u32,
    framing: Framing,
    /// Body bytes delivered so far.
    received: u64,
    /// Largest body accepted (→ 413).
    max: u64,
    /// `Expect: 100-continue` progress: bytes of [`CONTINUE`] written, or `None`.
    cont: Option<usize>,
    /// The last poll is waiting for socket data (the connection then enforces the data rate).
    waiting: bool,
    /// When the body first waited for data: the data-rate clock starts there.
    started: Option<Instant>,
    /// A failure: framing is lost, the connection must close.
    error: Option<BodyErrorKind>,
    /// Trailer field lines of a chunked body read so far (no capacity unless a body had
    /// trailers; bounded by the decoder's trailer limit).
    trailer_bytes: Vec<u8>,
    /// The trailer fields, once the chunked body has ended, until the handler takes them.
    /// Boxed: every connection carries this slot, few requests fill it.
    trailers: Option<Box<HeaderMap>>,
}

#[derive(Debug)]
enum Framing {
    Done,
    Length(u64),
    Chunked(ChunkedDecoder),
}

impl ConnIo {
    pub(crate) fn new(stream: TcpStream, peer: SocketAddr) -> ConnIo {
        ConnIo {
            stream,
            peer,
            rbuf: RefCell::new(BytesMut::new()),
            body: RefCell::new(BodyState {
                seq: 0,
                framing: Framing::Done,
                received: 0,
                max: 0,
                cont: None,
                waiting: false,
                started: None,
                error: None,
                trailer_bytes: Vec::new(),
                trailers: None,
            }),
        }
    }

    /// Reads into `buf`, waiting for readiness: `Ready(Ok(0))` at end of stream.
    pub(crate) fn poll_fill(
        &self,
        buf: &mut BytesMut,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<usize>> {
        if buf.capacity() - buf.len() < MIN_READ {
            buf.reserve(MIN_READ);
        }
        loop {
            ready!(self.stream.poll_read_ready(cx))?;
            match self.stream.try_read_buf(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                r => return Poll::Ready(r),
            }
        }
    }

    /// Sets up the body of a new request; `None` when it has none.
    ///
    /// `expect_continue` must already exclude HTTP/1.0 (RFC 9110 §10.1.1: ignored there).
    pub(crate) fn start_body(
        self: &Rc<Self>,
        length: BodyLength,
        expect_continue: bool,
        config: &Config,
    ) -> Option<Incoming> {
        let mut st = self.body.borrow_mut();
        st.seq = st.seq.wrapping_add(1);
        st.received = 0;
        st.max = config.max_body_bytes;
        st.waiting = false;
        st.started = None;
        st.error = None;
        st.trailer_bytes.clear();
        st.trailers = None;
        st.framing = match length {
            BodyLength::Length(0) => Framing::Done,
            BodyLength::Length(n) => Framing::Length(n),
            BodyLength::Chunked => Framing::Chunked(ChunkedDecoder::new()),
            // Never for a request (RFC 9112 §6.3); the connection refuses it before this.
            BodyLength::CloseDelimited => Framing::Done,
        };
        if matches!(st.framing, Framing::Done) {
            st.cont = None;
            return None;
        }
        st.cont = expect_continue.then_some(0);
        Some(Incoming { io: self.clone(), seq: st.seq })
    }

    /// A handle on the current body, unless it is finished.
    pub(crate) fn current_body(self: &Rc<Self>) -> Option<Incoming> {
        let st = self.body.borrow();
        match st.framing {
            Framing::Done => None,
            _ => Some(Incoming { io: self.clone(), seq: st.seq }),
        }
    }

    /// Detaches the current body: a handler that kept it gets an error from now on.
    pub(crate) fn end_body(&self) {
        let mut st = self.body.borrow_mut();
        st.seq = st.seq.wrapping_add(1);
        st.framing = Framing::Done;
        st.waiting = false;
        // Trailers nobody took, or bytes of a failed trailer section: an idle connection
        // keeps no memory for them.
        st.trailers = None;
        st.trailer_bytes = Vec::new();
    }

    /// Whether the current body has been read to its end.
    pub(crate) fn body_done(&self) -> bool {
        matches!(self.body.borrow().framing, Framing::Done)
    }

    /// The body failed; its framing is lost.
    pub(crate) fn body_error(&self) -> Option<BodyErrorKind> {
        self.body.borrow().error
    }

    /// `100 Continue` is still owed: the client may be holding the body back.
    pub(crate) fn continue_unsent(&self) -> bool {
        self.body.borrow().cont.is_some()
    }

    /// Bytes of body left when known.
    pub(crate) fn body_remaining(&self) -> Option<u64> {
        match self.body.borrow().framing {
            Framing::Done => Some(0),
            Framing::Length(n) => Some(n),
            Framing::Chunked(_) => None,
        }
    }

    /// When the body, now waiting for data, falls below the minimum data rate.
    pub(crate) fn body_rate_deadline(&self, config: &Config) -> Option<Instant> {
        let st = self.body.borrow();
        if !st.waiting {
            return None;
        }
        Some(st.started? + config.body_rate_allowance(st.received)?)
    }

    /// Marks the body timed out (the connection answers 408 and closes).
    pub(crate) fn fail_body(&self, kind: BodyErrorKind) {
        let mut st = self.body.borrow_mut();
        st.error = Some(kind);
        st.framing = Framing::Done;
        st.waiting = false;
    }

    fn poll_body(&self, seq: u32, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>> {
        let mut st = self.body.borrow_mut();
        if st.seq != seq {
            return Poll::Ready(Some(Err(BodyError::new(BodyErrorKind::Detached))));
        }
        if let Some(kind) = st.error {
            return Poll::Ready(Some(Err(BodyError::new(kind))));
        }
        let mut buf = self.rbuf.borrow_mut();
        // RFC 9110 §10.1.1: send 100 when the handler first reads the body; a server may skip it
        // when body bytes have already arrived.
        if let Some(written) = st.cont {
            if !buf.is_empty() {
                st.cont = None;
            } else if let Err(kind) = ready!(self.poll_continue(&mut st, written, cx)) {
                return Poll::Ready(Some(Err(self.fail(&mut st, kind))));
            }
        }
        loop {
            let chunk = match &mut st.framing {
                Framing::Done => return Poll::Ready(None),
                Framing::Length(left) if !buf.is_empty() => {
                    let n = (*left).min(buf.len() as u64);
                    let rest = *left - n;
                    st.framing = if rest == 0 { Framing::Done } else { Framing::Length(rest) };
                    buf.split_to(n as usize).freeze()
                }
                Framing::Chunked(decoder) if !buf.is_empty() => {
                    let decoded = match decoder.decode(&buf) {
                        Ok(decoded) => decoded,
                        Err(e) => {
                            let kind = chunked_error_kind(e);
                            return Poll::Ready(Some(Err(self.fail(&mut st, kind))));
                        }
                    };
                    if decoded.consumed == 0 && decoded.data.is_empty() && !decoded.done {
                        // The decoder always makes progress on non-empty input; never spin.
                        let e = self.fail(&mut st, BodyErrorKind::Invalid);
                        return Poll::Ready(Some(Err(e)));
                    }
                    if !decoded.trailers.is_empty() {
                        st.trailer_bytes.extend_from_slice(&buf[decoded.trailers.clone()]);
                    }
                    if decoded.done {
                        st.framing = Framing::Done;
                        if !st.trailer_bytes.is_empty() {
                            let bytes = std::mem::take(&mut st.trailer_bytes);
                            st.trailers = Some(Box::new(trailer_map(&bytes)));
                        }
                    }
                    let consumed = decoded.consumed.min(buf.len());
                    let taken = buf.split_to(consumed);
                    if decoded.data.is_empty() {
                        // Framing bytes only (a size line, a CRLF, trailers): go on.
                        continue;
                    }
                    // Zero-copy: the chunk shares the read buffer.
                    taken.freeze().slice(decoded.data)
                }
                Framing::Length(_) | Framing::Chunked(_) => match self.poll_fill(&mut buf, cx) {
                    Poll::Pending => {
                        st.waiting = true;
                        if st.started.is_none() {
                            st.started = Some(Instant::now());
                        }
                        return Poll::Pending;
                    }
                    Poll::Ready(Ok(0)) => {
                        let e = self.fail(&mut st, BodyErrorKind::Incomplete);
                        return Poll::Ready(Some(Err(e)));
                    }
                    Poll::Ready(Ok(_)) => continue,
                    Poll::Ready(Err(e)) => {
                        let e = self.fail(&mut st, BodyErrorKind::Io(e.kind()));
                        return Poll::Ready(Some(Err(e)));
                    }
                },
            };
            st.waiting = false;
            st.received += chunk.len() as u64;
            if st.received > st.max {
                return Poll::Ready(Some(Err(self.fail(&mut st, BodyErrorKind::TooLarge))));
            }
            return Poll::Ready(Some(Ok(chunk)));
        }
    }

    fn fail(&self, st: &mut BodyState, kind: BodyErrorKind) -> BodyError {
        st.error = Some(kind);
        st.framing = Framing::Done;
        st.waiting = false;
        BodyError::new(kind)
    }

    /// Writes the rest of `100 Continue`. The connection flushed its responses before
    /// dispatching a request with a body, so nothing is queued ahead of it.
    fn poll_continue(
        &self,
        st: &mut BodyState,
        mut written: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), BodyErrorKind>> {
        while written < CONTINUE.len() {
            match self.stream.try_write(&CONTINUE[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    st.cont = Some(written);
                    if let Err(e) = ready!(self.stream.poll_write_ready(cx)) {
                        return Poll::Ready(Err(BodyErrorKind::Io(e.kind())));
                    }
                }
                Err(e) => return Poll::Ready(Err(BodyErrorKind::Io(e.kind()))),
            }
        }
        st.cont = None;
        Poll::Ready(Ok(()))
    }
}

/// The body of a request being handled: a handle on its connection.
#[derive(Debug)]
pub(crate) struct Incoming {
    io: Rc<ConnIo>,
    seq: u32,
}

impl Incoming {
    pub(crate) fn poll_chunk(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, BodyError>>> {
        self.io.poll_body(self.seq, cx)
    }

    /// The trailer fields, once the body has been read to its end; taken once.
    pub(crate) fn take_trailers(&mut self) -> Option<HeaderMap> {
        let mut st = self.io.body.borrow_mut();
        if st.seq != self.seq {
            return None;
        }
        st.trailers.take().map(|map| *map)
    }

    pub(crate) fn size_hint(&self) -> Option<u64> {
        if self.io.body.borrow().seq != self.seq {
            return Some(0);
        }
        self.io.body_remaining()
    }
}

/// The fields of a trailer section the decoder has validated (RFC 9112 §7.1.2). They stay
/// apart from the header section: a recipient must not merge them into it unless the field
/// is defined as mergeable (RFC 9110 §6.5.1), and the handler decides what to trust.
fn trailer_map(bytes: &[u8]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in trailer_fields(bytes) {
        // Both were checked with the header rules (token name, no CTL in the value), which
        // is what these constructors check too.
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
        {
            map.append(name, value);
        }
    }
    map
}

/// A chunked-framing error as a body error: the limits (413, 431) read as "too large",
/// grammar errors as invalid (400).
fn chunked_error_kind(e: ChunkedError) -> BodyErrorKind {
    match e.status() {
        413 | 431 => BodyErrorKind::TooLarge,
        _ => BodyErrorKind::Invalid,
    }
}
