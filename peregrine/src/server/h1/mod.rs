//! One HTTP/1.1 connection of the server: the driver of an [`http1::conn::Conn`] over the
//! connection's transport, as a hand-written future.
//!
//! The wire rules (pipelining order, keep-alive, framing, 100-continue, refusals, the drain of an
//! unread body, the deadlines) are the `Conn`'s; this driver moves bytes between it and the
//! transport, runs the handler, and keeps the worker's books (buffers, idle connections,
//! access log, metrics). Its phases:
//!
//! ```text
//! Requests ─(a request for a handler)→ Handler ─(response with a body to stream)→ Body
//!    ▲  │                                  │                                         │
//!    │  └─(answered by the server itself)  └──────────(response queued)──────────────┤
//!    └──────────────────────────────────────────────────────────────────────────────┘
//! any ─(Conn closed, or an error)→ Closing ─→ Linger ─→ Done;  Requests ─(h2c)→ HTTP/2
//! ```
//!
//! Requests are handled one at a time in arrival order (RFC 9112 §9.3.2). Their responses
//! collect in one write buffer that is written when no complete request is left in the read
//! buffer (or it passes [`FLUSH_AT`]), so a pipelined batch read at once is answered with one
//! write. The handler's future is polled in place (in a box from the worker's pool), so a request
//! allocates nothing. While it waits for the next request the connection hands its empty buffers
//! back to the worker's pool, so an idle connection holds only its task and socket (the first
//! 64 connections of a worker keep theirs: `BufPool::hold`). Every read and write goes through
//! the connection's [`Transport`] and `net`'s write path.

mod body;
pub(super) mod fixed_run;
mod handler;
pub(super) mod last_response;
mod ops;
pub(super) mod repeats;
mod requests;
mod respond;
mod stream;

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::BytesMut;
use tokio::time::Instant;

use super::access_log::LogState;
use super::h2::Upgraded;
use super::service::{HandlerBox, Service};
use super::worker::{Admitted, Worker};
use crate::date::ImfFixdate;
use crate::handler::Handler;
use crate::http1;
use crate::http1::conn::Timeout;
use crate::net::{Timer, Transport, WriteStall};
use crate::request::Peer;
use crate::websocket::{Handoff, OnUpgrade};
use body::RequestBody;
use fixed_run::FixedRun;
use stream::Streaming;

/// Flush the write buffer once it holds this much, even mid-batch.
pub(super) const FLUSH_AT: usize = 64 * 1024;

/// Spare room the read buffer must have before a read; less and it is reserved (reclaiming
/// the consumed front of the buffer when nothing else shares it).
const MIN_READ: usize = 1024;

/// Why the connection stops early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Close {
    /// Orderly but cut short (a timeout, a failed response body, shutdown): what is queued is
    /// written, then the connection closes.
    Done,
    /// The peer went away or the socket failed: nothing more is written.
    Io,
}

impl From<io::Error> for Close {
    fn from(_: io::Error) -> Close {
        Close::Io
    }
}

/// How the connection's HTTP/1.1 life ended.
pub(crate) enum Exit {
    /// The connection is closed.
    Done,
    /// The connection switches to HTTP/2: the client preface arrived (prior knowledge), or a
    /// request asked `Upgrade: h2c` and its `101` is written.
    Http2(Option<Box<Upgraded>>),
    /// A handler accepted an upgrade (a WebSocket) and its `101` is written: the connection is
    /// the session's.
    Upgrade(Box<OnUpgrade>),
}

/// What the driver does now. `Copy`: a step from one phase to the next is a store, with no
/// old value to drop (the hand-overs' payloads wait in `H1Conn::switch`).
#[derive(Clone, Copy)]
enum Phase {
    /// Parsing requests from the read buffer and answering those the server answers itself;
    /// when none is complete, writing the answers and waiting for bytes.
    Requests,
    /// A handler runs (`running`).
    Handler,
    /// A response body is streamed (`stream`).
    Body,
    /// Writing what is queued before the close; `linger`: an orderly end (a response said
    /// `Connection: close`), with TLS's close_notify and the lingering close after it.
    Closing {
        linger: bool,
    },
    /// The lingering close (see `net::linger`): until the client's end, `LINGER_BYTES` or the
    /// deadline.
    Linger {
        discarded: usize,
        deadline: Instant,
    },
    /// Writing the `101` (or nothing, for the HTTP/2 preface) before the hand-over in `switch`.
    Switch,
    Done,
}

/// Where the connection goes after the HTTP/1.1 part.
enum Switch {
    /// HTTP/2: the client preface, or an `Upgrade: h2c` whose `101` is queued.
    Http2(Option<Box<Upgraded>>),
    /// The session a handler accepted (a WebSocket), its `101` queued.
    Session(Box<OnUpgrade>),
}

/// A request whose handler runs.
struct Running<F> {
    future: HandlerBox<F>,
    /// The request has a body (its reader may wait for the socket).
    has_body: bool,
}

/// Serves one HTTP/1.1 connection until it closes, or hands it over to HTTP/2 (the client
/// preface, or an `Upgrade: h2c`). `rbuf`: bytes already read (after a PROXY protocol
/// header), usually empty; `accepted`: when the connection's first head's clock starts.
pub(crate) fn serve<H: Handler>(
    io: Transport,
    peer: Peer,
    rbuf: BytesMut,
    service: Rc<Service<H>>,
    admitted: Admitted,
    accepted: Instant,
) -> Serve<H> {
    Serve::H1(H1Conn::new(io, peer, rbuf, service, admitted, accepted))
}

/// The connection's task: HTTP/1.1, then possibly HTTP/2 or an upgraded session (boxed: a
/// plain connection's task carries a pointer for it, not its state). The HTTP/1.1 state is the
/// task's own, inline.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Serve<H: Handler> {
    H1(H1Conn<H>),
    /// HTTP/2, or the session of an upgrade.
    Handed(Pin<Box<dyn Future<Output = ()>>>),
    Done,
}

impl<H: Handler> Future for Serve<H> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        loop {
            match this {
                Serve::H1(h1) => match ready!(h1.poll_conn(cx)) {
                    Exit::Done => {
                        *this = Serve::Done;
                        return Poll::Ready(());
                    }
                    Exit::Http2(upgraded) => {
                        let Serve::H1(h1) = std::mem::replace(this, Serve::Done) else {
                            unreachable!("matched above");
                        };
                        *this = Serve::Handed(Box::pin(h1.into_http2(upgraded)));
                    }
                    Exit::Upgrade(on_upgrade) => {
                        let Serve::H1(h1) = std::mem::replace(this, Serve::Done) else {
                            unreachable!("matched above");
                        };
                        *this = Serve::Handed(h1.into_session(*on_upgrade));
                    }
                },
                Serve::Handed(next) => return next.as_mut().poll(cx),
                Serve::Done => return Poll::Ready(()),
            }
        }
    }
}

/// One connection's state, inside its task's future.
///
/// `repr(C)`, in this order: what every batch of requests touches first (the socket, the
/// buffers, the wire state, the wait; about five cache lines), then what a handler's requests
/// and rarer paths need. With hundreds of connections a connection's lines are out of the L1
/// cache each time its turn comes, so each line the hot path spans is a miss per batch.
#[repr(C)]
pub(crate) struct H1Conn<H: Handler> {
    io: Transport,
    wbuf: Vec<u8>,
    rbuf: BytesMut,
    worker: Rc<Worker>,
    wpos: usize,
    conn: http1::conn::Conn,
    phase: Phase,
    /// Fixed answers counted and not yet written (only while `wbuf` has nothing left to
    /// write): the flush writes them, and anything queued after them copies them in first.
    run: FixedRun,
    timer: Timer,
    /// The deadline of the wait under way, once it pended (then the connection is idle in the
    /// worker's books, if it is between requests); `None` while it has not.
    wait: Option<Instant>,
    /// The connection went idle in the worker's books during the wait under way.
    went_idle: bool,
    /// This connection keeps its buffers while idle.
    holding: Holding,
    stall: WriteStall,
    /// The request being answered asked to end the connection: after it the client sends
    /// nothing more, so the close needs no linger.
    client_close: bool,
    /// The Date of the responses to the current batch.
    date: Option<ImfFixdate>,
    service: Rc<Service<H>>,
    running: Option<Running<H::Future>>,
    /// A response body being streamed.
    stream: Option<Box<Streaming>>,
    /// The request-body source, made at the first request with a body.
    body: Option<Arc<RequestBody>>,
    /// The access log's record of the current request, when logging is on.
    log: Option<Box<LogState>>,
    /// The hand-over the `Switch` phase makes (boxed: rare, and the connection stays small).
    switch: Option<Box<Switch>>,
    /// The client: the TCP peer, or whom the balancer's PROXY header named.
    peer: Peer,
    /// This connection's idle-table entry in the worker; released when the connection ends.
    admitted: Admitted,
}

/// This connection keeps its buffers while idle ([`super::buffers::BufPool::hold`]); the hold
/// ends with the connection, however it ends.
struct Holding(Option<Rc<Worker>>);

impl Drop for Holding {
    fn drop(&mut self) {
        if let Some(worker) = self.0.take() {
            worker.buffers.unhold();
        }
    }
}

impl<H: Handler> H1Conn<H> {
    fn new(
        io: Transport,
        peer: Peer,
        rbuf: BytesMut,
        service: Rc<Service<H>>,
        admitted: Admitted,
        accepted: Instant,
    ) -> H1Conn<H> {
        let worker = admitted.worker.clone();
        // RFC 9113 §3.2: over TLS, ALPN chose HTTP/1.1; no HTTP/2 preface is looked for.
        let config = if io.is_plain() { &worker.h1_config } else { &worker.h1_config_tls };
        let conn =
            http1::conn::Conn::new(http1::conn::Role::Server, config.clone(), accepted.into_std());
        let first_deadline = accepted + worker.config.header_read_timeout;
        H1Conn {
            io,
            wbuf: Vec::new(),
            rbuf,
            worker,
            wpos: 0,
            conn,
            phase: Phase::Requests,
            run: FixedRun::default(),
            timer: Timer::new(first_deadline),
            wait: None,
            went_idle: false,
            holding: Holding(None),
            stall: WriteStall::default(),
            client_close: false,
            date: None,
            service,
            running: None,
            stream: None,
            body: None,
            log: None,
            switch: None,
            peer,
            admitted,
        }
    }

    /// Drives the connection until it ends or switches to HTTP/2.
    fn poll_conn(&mut self, cx: &mut Context<'_>) -> Poll<Exit> {
        loop {
            let next = match self.phase {
                Phase::Requests => ready!(self.poll_requests(cx)),
                Phase::Handler => ready!(self.poll_handler(cx)),
                Phase::Body => ready!(self.poll_stream(cx)),
                Phase::Closing { linger } => ready!(self.poll_closing(linger, cx)),
                Phase::Linger { mut discarded, deadline } => {
                    let pending = self.io.poll_discard(cx, &mut discarded).is_pending();
                    self.phase = Phase::Linger { discarded, deadline };
                    if pending && self.timer.poll_until(cx, deadline).is_pending() {
                        return Poll::Pending;
                    }
                    Phase::Done
                }
                Phase::Switch => {
                    if ready!(self.poll_flush(cx)).is_err() {
                        Phase::Done
                    } else {
                        match self.switch.take().map(|s| *s) {
                            Some(Switch::Http2(upgraded)) => {
                                return Poll::Ready(Exit::Http2(upgraded));
                            }
                            Some(Switch::Session(on_upgrade)) => {
                                return Poll::Ready(Exit::Upgrade(on_upgrade));
                            }
                            // Set with the phase, always.
                            None => Phase::Done,
                        }
                    }
                }
                Phase::Done => {
                    self.release_buffers();
                    return Poll::Ready(Exit::Done);
                }
            };
            self.phase = next;
        }
    }

    /// The phase that ends the connection for `close`.
    fn closed(&mut self, close: Close) -> Phase {
        match close {
            Close::Done => Phase::Closing { linger: false },
            Close::Io => Phase::Done,
        }
    }

    /// The phase after a response was queued whole: the next requests, or the close the
    /// connection decided.
    fn after_response(&mut self) -> Phase {
        self.log_response();
        if self.conn.is_closed() { Phase::Closing { linger: true } } else { Phase::Requests }
    }

    /// Writes what is queued, then (for an orderly end) shuts our side and lingers.
    fn poll_closing(&mut self, linger: bool, cx: &mut Context<'_>) -> Poll<Phase> {
        if linger {
            // Over TLS our close_notify leaves with the last response, in one write.
            self.io.close_notify_on_flush();
        }
        if ready!(self.poll_flush(cx)).is_err() || !linger {
            return Poll::Ready(Phase::Done);
        }
        // Lingering close (as nginx's `lingering_close`): stop sending, then read and drop
        // what the client still sends for a moment, so our last response is not destroyed by
        // a reset. As nginx's default (`lingering_close on`), only when the client may still
        // be sending: not after a request that itself asked to close (RFC 9112 §9.6: its
        // client sends no further request) when nothing of it is left unread, in our buffers
        // or signalled on the socket.
        if self.io.shutdown_write().is_err()
            || (self.client_close
                && self.rbuf.is_empty()
                && !self.io.has_buffered_read()
                && !self.io.read_signalled())
        {
            return Poll::Ready(Phase::Done);
        }
        self.release_buffers();
        let deadline = self.worker.linger_deadline();
        self.timer.set(deadline);
        Poll::Ready(Phase::Linger { discarded: 0, deadline })
    }

    /// Writes the whole write buffer (first a run of fixed answers counted), and whatever the
    /// transport still holds (TLS records), with the write timeout.
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Close>> {
        if self.run.is_pending() {
            let H1Conn { io, worker, wbuf, run, date, .. } = &mut *self;
            fixed_run::write_run(run, |bytes| io.try_write(bytes), worker, date, wbuf)?;
        }
        let H1Conn { io, wbuf, wpos, stall, .. } = &mut *self;
        match io.poll_write_all(cx, wbuf, wpos, stall) {
            Poll::Ready(Ok(())) => {
                wbuf.clear();
                *wpos = 0;
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(_)) => Poll::Ready(Err(Close::Io)),
            Poll::Pending => {
                let timeout = self.worker.config.write_timeout;
                let deadline = self.stall.deadline(timeout).map(Instant::from_std);
                match deadline.map(|at| self.timer.poll_until(cx, at)) {
                    Some(Poll::Ready(())) => Poll::Ready(Err(Close::Done)),
                    _ => Poll::Pending,
                }
            }
        }
    }

    /// Whether bytes are queued to be written.
    fn has_output(&self) -> bool {
        self.wpos < self.wbuf.len() || self.run.is_pending() || self.io.has_pending()
    }

    /// Reads more bytes, having written what is queued first: `Ok(false)` at the end of the
    /// stream. Fails on the connection's deadline (a head's, the keep-alive's, a drain's), and,
    /// between requests, when the worker stops accepting or chooses this connection to make
    /// room.
    ///
    /// The read is tried before the socket's readiness is polled: after a wake-up the bytes
    /// are there, and a socket whose last read was short is known not readable without a
    /// system call. Only a wait that pends makes the connection idle: then, when no partial
    /// head is buffered, its buffers go back to the pool, and the timer is armed. When bytes
    /// are already readable, neither buffers nor timer nor clock are touched.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Result<bool, Close>> {
        // Bytes TLS already decrypted mean no wait: what is queued (responses, the session
        // tickets) leaves with the answers to them, in one write.
        if !self.io.has_buffered_read() && self.has_output() {
            ready!(self.poll_flush(cx))?;
        }
        loop {
            if let Some(more) = self.read()? {
                self.wait = None;
                if std::mem::take(&mut self.went_idle) {
                    self.worker.go_busy(self.admitted.idle);
                }
                return Poll::Ready(Ok(more));
            }
            // Ready: bytes came since the read (or the socket failed, which the read reports).
            if self.io.poll_read_ready(cx).is_ready() {
                continue;
            }
            let deadline = match self.wait {
                // Woken during the wait (a timer set for a deadline since moved): the read took
                // a buffer back, which an idle connection that holds none returns again.
                Some(deadline) => {
                    if self.went_idle && self.holding.0.is_none() {
                        self.release_buffers();
                    }
                    deadline
                }
                None => self.start_wait(),
            };
            if self.timer.poll_until(cx, deadline).is_pending() {
                break;
            }
            let now = std::time::Instant::now();
            match self.conn.handle_timeout(now) {
                Some(timeout) => {
                    if timeout == Timeout::Head {
                        self.log_timeout();
                    }
                    return Poll::Ready(Err(Close::Done));
                }
                // Early (the deadline moved): wait again for the one in force.
                None => self.wait = self.conn.poll_timeout(now).map(Instant::from_std),
            }
            if self.wait.is_none() {
                break;
            }
        }
        // Between requests, the end of a drain's grace period closes the connection, and so
        // does an eviction; inside a head it waits.
        if self.conn.is_idle() {
            if self.worker.stopping() || self.worker.evicted(self.admitted.idle) {
                return Poll::Ready(Err(Close::Done));
            }
            self.worker.watch(self.admitted.idle, cx.waker());
        }
        Poll::Pending
    }

    /// A wait for bytes has pended and not ended yet.
    #[inline]
    fn waiting(&self) -> bool {
        self.wait.is_some()
    }

    /// The wait pends for the first time: the connection goes idle (buffers, idle order), and
    /// its deadline is read from the wire state with the time now.
    fn start_wait(&mut self) -> Instant {
        if self.conn.is_idle() {
            // A few connections per worker keep their buffers (a bounded amount of memory);
            // the others hand them back, so idle connections cost no buffer.
            if self.holding.0.is_none() && !self.worker.buffers.hold() {
                self.release_buffers();
            } else if self.holding.0.is_none() {
                self.holding.0 = Some(self.worker.clone());
            }
            self.worker.go_idle(self.admitted.idle);
            self.went_idle = true;
        }
        let now = Instant::now();
        let deadline = self.conn.poll_timeout(now.into_std()).map(Instant::from_std);
        // No deadline in force (a body the handler does not read): wake up once a keep-alive
        // period later to look again.
        let deadline = deadline.unwrap_or(now + self.worker.config.keep_alive_timeout);
        self.wait = Some(deadline);
        deadline
    }

    /// Reads what the socket has: `Some(false)` at the end of the stream, `None` when
    /// nothing is there yet.
    fn read(&mut self) -> Result<Option<bool>, Close> {
        let buf = &mut self.rbuf;
        if buf.capacity() == 0 {
            *buf = self.worker.buffers.take();
        }
        if buf.capacity() - buf.len() < MIN_READ {
            buf.reserve(MIN_READ);
        }
        match self.io.try_read_buf(buf) {
            Ok(0) => Ok(Some(false)),
            Ok(_) => {
                // A new batch of requests: their responses get a fresh Date.
                self.date = None;
                Ok(Some(true))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(_) => Err(Close::Io),
        }
    }

    /// Hands empty buffers back to the worker's pool.
    fn release_buffers(&mut self) {
        let H1Conn { rbuf, worker, wbuf, wpos, run, .. } = self;
        if rbuf.is_empty() && rbuf.capacity() != 0 {
            worker.buffers.put(std::mem::take(rbuf));
        }
        if *wpos >= wbuf.len() && wbuf.capacity() != 0 && !run.is_pending() {
            *wpos = 0;
            worker.buffers.put_write(std::mem::take(wbuf));
        }
    }

    /// Hands the connection to the session a handler accepted, with what was read past the
    /// request's head (RFC 6455 §4.1: the WebSocket's first frames may follow it at once). The
    /// connection stays counted (its admission lives as long as the session) but is never
    /// idle: no eviction picks it.
    fn into_session(mut self, on_upgrade: OnUpgrade) -> Pin<Box<dyn Future<Output = ()>>> {
        let input = std::mem::take(&mut self.rbuf);
        self.release_buffers();
        let handoff = Handoff {
            connection: None,
            drain: self.worker.drain_signal(),
            write_timeout: self.worker.config.write_timeout,
            buffers: Some(self.worker.clone()),
        };
        let H1Conn { io, admitted, .. } = self;
        let session = on_upgrade.start(Handoff { connection: Some((io, input)), ..handoff });
        Box::pin(async move {
            let _admitted = admitted;
            session.await;
        })
    }

    /// Hands the connection over to HTTP/2, with what was read past the HTTP/1.1 part.
    fn into_http2(mut self, upgraded: Option<Box<Upgraded>>) -> impl Future<Output = ()> {
        let input = std::mem::take(&mut self.rbuf);
        self.release_buffers();
        let H1Conn { io, peer, service, admitted, .. } = self;
        super::h2::serve(io, peer, service, admitted, input, upgraded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Request;
    use crate::server::worker::tests_support::worker;

    /// An idle connection's memory is mostly its task, which is as large as this future; keep
    /// it in check.
    #[test]
    fn connection_future_stays_small() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let stream =
                tokio::net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
            let peer = stream.local_addr().unwrap();
            let service = Rc::new(Service::new(|_req: Request| async { "Hello, World!" }));
            let (io, peer) = (Transport::Plain(stream), Peer::Direct(peer));
            let admitted = Admitted::new(worker());
            let fut = serve(io, peer, BytesMut::new(), service, admitted, Instant::now());
            let size = std::mem::size_of_val(&fut);
            eprintln!("connection future: {size} bytes");
            assert!(size <= 800, "connection future grew to {size} bytes");
        });
    }
}
