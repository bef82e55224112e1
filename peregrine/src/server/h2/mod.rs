//! One HTTP/2 connection (RFC 9113): the sans-I/O `http2::Conn` driven over the connection's
//! transport, each stream's request handed to the same `Handler` HTTP/1.1 uses.
//!
//! The connection is one task, written as a hand-made future: every poll reads what the
//! socket has and feeds it to the state machine, starts a handler per new request stream,
//! polls the handlers and response bodies that were woken (each task has its own waker,
//! so a wake-up polls one stream, not all), releases the flow-control window of request body
//! bytes the handlers consumed, sends what the windows allow, and writes the frames queued.
//! Requests are views over a per-connection arena of head bytes, response heads are
//! HPACK-encoded straight into the send buffer: a kept-open connection serving a static
//! response allocates nothing per request.

mod body;
mod head_cache;
pub(super) mod respond;
mod tasks;

use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant as StdInstant;

use bytes::{Buf, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue};
use tokio::time::{Instant, Sleep};

use super::call::{Panicked, poll_handler};
use super::service::Service;
use super::worker::{Admitted, Worker};
use crate::body::{Body, BodyErrorKind};
use crate::date::ImfFixdate;
use crate::handler::Handler;
use crate::http2::{self, Event, HeadersKind, Reason, Role, StreamId};
use crate::net::Transport;
use crate::net::WriteStall;
use crate::request::{H2Head, Peer, Request};
use crate::response::IntoResponse;
use crate::websocket::Handoff;
use body::Bodies;
use head_cache::HeadCache;
use tasks::{Out, ReadyQueue, Tasks};

/// Read-buffer room kept before each read.
const MIN_READ: usize = 16 * 1024;

/// Frames waiting for the socket beyond which no more input is read: a peer that does not read
/// stops being served until it does.
const MAX_PENDING_OUTPUT: usize = 1024 * 1024;

/// Frames waiting for the socket below which more are taken from the connection. Above it the
/// frames stay queued in `http2::Conn`, whose `max_send_buffer` then stops response bodies:
/// what a peer that reads nothing costs is bounded by the two buffers, not by the responses.
const REFILL_BELOW: usize = 64 * 1024;

/// Input octets one poll of the connection may read and process before it yields to the
/// worker's other connections: a peer that keeps the socket full, or sends frames that are
/// costly to process (an HPACK bomb), delays them by about one such share.
const FAIR_SHARE: usize = 64 * 1024;

/// Bytes of each request-head arena; heads are split off it as shared `Bytes`.
const ARENA: usize = 16 * 1024;

/// Room an arena must have left for the next head; less and the other arena takes over.
const ARENA_MIN: usize = 2 * 1024;

/// A request that arrived over HTTP/1.1 with `Upgrade: h2c` (RFC 7540 §3.2): stream 1.
pub(crate) struct Upgraded {
    /// The request, answered on stream 1.
    pub(crate) request: Request,
    /// The decoded `HTTP2-Settings` payload.
    pub(crate) settings: Vec<u8>,
}

/// The HTTP/2 settings of the server's connections, from its `Config`.
pub(crate) fn h2_config(config: &super::Config) -> http2::Config {
    http2::Config {
        max_concurrent_streams: config.h2_max_concurrent_streams,
        initial_window_size: config.h2_stream_window,
        connection_window_size: config.h2_connection_window,
        max_header_list_size: u32::try_from(config.head.max_head_bytes).unwrap_or(u32::MAX),
        // RFC 8441 §3: WebSockets (and any other protocol a handler accepts) over streams.
        enable_connect_protocol: true,
        ..http2::Config::default()
    }
}

/// Serves one HTTP/2 connection until it closes. `input` holds bytes already read (the client
/// preface, found by the HTTP/1.1 loop on a plain connection); `upgraded`, the request of an
/// `Upgrade: h2c`.
pub(crate) fn serve<H: Handler>(
    io: Transport,
    peer: Peer,
    service: Rc<Service<H>>,
    admitted: Admitted,
    input: BytesMut,
    upgraded: Option<Box<Upgraded>>,
) -> impl Future<Output = ()> {
    let worker = admitted.worker.clone();
    let config = h2_config(&worker.config);
    let now = StdInstant::now();
    let (conn, first) = match upgraded {
        None => (Ok(http2::Conn::new(Role::Server, config, now)), None),
        Some(up) => (http2::Conn::upgraded(config, &up.settings, now), Some(up.request)),
    };
    let started = Instant::now();
    let deadline = started + worker.config.header_read_timeout;
    let worker_draining = worker.draining();
    let mut task = H2Conn {
        io,
        peer,
        conn: conn.ok(),
        rbuf: input,
        wbuf: Vec::new(),
        wpos: 0,
        worker,
        service,
        admitted,
        tasks: Tasks::new(),
        ready: Arc::new(ReadyQueue::default()),
        bodies: Arc::new(Bodies::default()),
        arena: BytesMut::new(),
        spare_arena: BytesMut::new(),
        polled: Vec::new(),
        released: Vec::new(),
        timer: Box::pin(tokio::time::sleep_until(deadline)),
        date: None,
        head_cache: HeadCache::default(),
        read_closed: false,
        draining: false,
        opened_in_drain: worker_draining,
        idle_since: Some(started),
        served: 0,
        stall: WriteStall::default(),
        share: FAIR_SHARE,
        linger: None,
        io_failed: false,
    };
    if let Some(request) = first {
        task.start_request(StreamId::new(1), request, false, false);
    }
    task
}

/// The connection task.
struct H2Conn<H: Handler> {
    io: Transport,
    peer: Peer,
    /// `None` when an upgrade's settings were invalid: the connection just closes.
    conn: Option<http2::Conn>,
    rbuf: BytesMut,
    wbuf: Vec<u8>,
    wpos: usize,
    worker: Rc<Worker>,
    service: Rc<Service<H>>,
    admitted: Admitted,
    tasks: Tasks<H::Future>,
    ready: Arc<ReadyQueue>,
    bodies: Arc<Bodies>,
    /// Request heads are written here and split off (see `Request::from_h2`).
    arena: BytesMut,
    /// The other arena: when one fills, the other is reclaimed (its heads' requests are long
    /// done by then), so a steady stream of requests allocates no head memory.
    spare_arena: BytesMut,
    /// Scratch: the tasks woken since the last poll.
    polled: Vec<u16>,
    /// Scratch: request body octets handlers consumed.
    released: Vec<(u16, u32)>,
    timer: Pin<Box<Sleep>>,
    /// The Date of the responses of this poll.
    date: Option<ImfFixdate>,
    /// The last response head and its header block, resent when the next is the same.
    head_cache: HeadCache,
    read_closed: bool,
    /// Graceful shutdown has begun (the worker drains, or the connection idled out).
    draining: bool,
    /// The connection was accepted during the drain's grace period: it begins its graceful
    /// shutdown after its first request, not at once (see `turn`).
    opened_in_drain: bool,
    /// Since when no stream is open (the keep-alive timeout runs from there).
    idle_since: Option<Instant>,
    /// Requests started on this connection.
    served: u64,
    /// Since when the socket takes none of the bytes queued for it.
    stall: WriteStall,
    /// Input octets this poll may still read (see `FAIR_SHARE`).
    share: usize,
    /// The connection is over, its write side shut: the lingering close's deadline and the
    /// octets dropped so far (see `net::linger`).
    linger: Option<(Instant, usize)>,
    /// The socket failed: nothing more to read or write.
    io_failed: bool,
}

impl<H: Handler> Future for H2Conn<H> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if this.linger.is_some() {
            return this.poll_linger(cx);
        }
        if this.conn.is_none() {
            return Poll::Ready(());
        }
        this.ready.watch(cx.waker());
        this.bodies.watch(cx.waker());
        this.worker.watch(this.admitted.idle, cx.waker());
        this.share = FAIR_SHARE;
        loop {
            match this.turn(cx) {
                Turn::Again if this.share == 0 => {
                    // Its share is spent: the other connections get a turn first. Through
                    // tokio's `yield_now`, whose wake-up is deferred until the runtime has
                    // polled the sockets: with a plain self-wake the worker only looks at the
                    // sockets every few dozen task polls, so a flood kept the others waiting.
                    let _ = pin!(tokio::task::yield_now()).poll(cx);
                    return Poll::Pending;
                }
                Turn::Again => continue,
                Turn::Done => {
                    this.finish();
                    // After our GOAWAY, with the client possibly still sending: linger, so
                    // the GOAWAY is not destroyed by the reset a close with unread input
                    // sends.
                    if this.io_failed || this.read_closed {
                        return Poll::Ready(());
                    }
                    let deadline = this.worker.linger_deadline();
                    this.linger = Some((deadline, 0));
                    this.release_memory();
                    return this.poll_linger(cx);
                }
                Turn::Wait => {}
            }
            // Wait for the socket, a handler, or a deadline; any of them may be ready already.
            if !this.read_closed && this.input_allowed() && this.io.poll_read_ready(cx).is_ready() {
                continue;
            }
            if this.arm_timer(cx) {
                continue;
            }
            return Poll::Pending;
        }
    }
}

/// What one turn of the connection's loop found.
enum Turn {
    /// Something moved: go round again.
    Again,
    /// Nothing to do until woken.
    Wait,
    /// The connection is over.
    Done,
}

impl<H: Handler> H2Conn<H> {
    fn conn(&mut self) -> &mut http2::Conn {
        // `poll` returns at once when there is none.
        self.conn.as_mut().expect("connection state")
    }

    /// Reads, feeds, runs handlers, sends, writes. Returns whether anything moved.
    fn turn(&mut self, cx: &mut Context<'_>) -> Turn {
        let mut moved = false;
        if !self.read_closed && self.input_allowed() {
            match self.read() {
                Ok(true) => moved = true,
                Ok(false) => {}
                Err(()) => {
                    self.io_failed = true;
                    return Turn::Done;
                }
            }
        }
        self.date = None;
        if !self.rbuf.is_empty() || moved {
            moved |= self.feed();
        }
        moved |= self.events();
        moved |= self.run_ready();
        self.release();
        moved |= self.send_bodies();
        if self.read_closed {
            moved |= self.cancel_hopeless();
        }
        // A connection accepted during the grace period first takes a request, as an HTTP/1.1
        // one answers one with `Connection: close`: a GOAWAY at once would refuse every stream
        // of a client that reads it before it sends (RFC 9113 §6.8), and the grace is there to
        // answer what a balancer still sends. The streams sent with the first arrive before
        // the PING that ends the graceful shutdown's first step comes back, and are answered.
        let drains = self.worker.draining()
            && (!self.opened_in_drain || self.served > 0 || self.worker.stopping());
        if drains || self.worker.evicted(self.admitted.idle) {
            self.drain();
        }
        match self.transmit(cx) {
            Ok(wrote) => moved |= wrote,
            Err(()) => {
                self.io_failed = true;
                return Turn::Done;
            }
        }
        if self.conn().is_closed() && self.wpos >= self.wbuf.len() {
            return Turn::Done;
        }
        // The client's end of stream: done once every response is complete and written
        // (RFC 9113 §6.8: the streams the server took are answered); a client that ended its
        // side may still be reading.
        if self.read_closed && self.tasks.live() == 0 && !self.has_output() {
            return Turn::Done;
        }
        if moved { Turn::Again } else { Turn::Wait }
    }

    /// Whether frames wait for the socket, in the write buffer or in the connection.
    fn has_output(&mut self) -> bool {
        self.wpos < self.wbuf.len() || self.conn().buffered() > 0
    }

    /// New input is read only while the peer reads our output.
    fn input_allowed(&self) -> bool {
        self.wbuf.len() - self.wpos < MAX_PENDING_OUTPUT
    }

    /// Reads what the socket has. `Ok(true)` when bytes (or the end) came.
    fn read(&mut self) -> Result<bool, ()> {
        if self.rbuf.capacity() - self.rbuf.len() < MIN_READ {
            self.rbuf.reserve(MIN_READ);
        }
        match self.io.try_read_buf(&mut self.rbuf) {
            Ok(0) => {
                self.read_closed = true;
                Ok(true)
            }
            Ok(n) => {
                self.share = self.share.saturating_sub(n);
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(_) => Err(()),
        }
    }

    /// Feeds the read buffer to the state machine and acts on its events. True when it took
    /// input.
    fn feed(&mut self) -> bool {
        let now = StdInstant::now();
        let mut took = false;
        loop {
            let conn = self.conn.as_mut().expect("connection state");
            let (used, event) = conn.recv(&self.rbuf, now);
            took |= used > 0;
            match event {
                Some(Event::Data { stream, data, end_stream }) => {
                    let base = self.rbuf.as_ptr() as usize;
                    let start = (data.as_ptr() as usize).wrapping_sub(base);
                    let len = data.len();
                    let in_input = start.checked_add(len).is_some_and(|end| end <= used);
                    let copied =
                        if in_input { None } else { Some(bytes::Bytes::copy_from_slice(data)) };
                    // Zero copy: the chunk shares the read buffer.
                    let taken = self.rbuf.split_to(used).freeze();
                    let chunk = copied.unwrap_or_else(|| taken.slice(start..start + len));
                    self.on_data(stream, chunk, end_stream);
                }
                Some(Event::Headers { stream, kind, end_stream, section }) => {
                    match kind {
                        HeadersKind::Request => {
                            let expect = section.fields().any(|f| {
                                f.name == b"expect" && f.value.eq_ignore_ascii_case(b"100-continue")
                            });
                            let head = H2Head {
                                version: crate::Version::Http2,
                                method: section.method().unwrap_or_default(),
                                path: section.path(),
                                authority: section.authority(),
                                protocol: section.protocol(),
                                fields: section.fields().map(|f| (f.name, f.value)),
                            };
                            arena_room(&mut self.arena, &mut self.spare_arena);
                            let is_head = section.method() == Some(b"HEAD");
                            let content_length = section.content_length();
                            let index = self.tasks.open(stream, &self.ready);
                            let body = if end_stream {
                                Body::empty()
                            } else {
                                let id = self.bodies.open(usize::from(index), content_length);
                                self.tasks.list[usize::from(index)].body_open = true;
                                Body::incoming(self.bodies.clone(), id)
                            };
                            let request = Request::from_h2(&mut self.arena, head, body);
                            self.rbuf.advance(used);
                            self.start_task(index, request, is_head, expect && !end_stream);
                        }
                        HeadersKind::Trailers => {
                            let mut map = HeaderMap::new();
                            for f in section.fields() {
                                if let (Ok(n), Ok(v)) = (
                                    HeaderName::from_bytes(f.name),
                                    HeaderValue::from_bytes(f.value),
                                ) {
                                    map.append(n, v);
                                }
                            }
                            self.rbuf.advance(used);
                            if let Some(index) = self.tasks.find(stream) {
                                if !self.drained(index, 0, true) {
                                    self.bodies.end(usize::from(index), Some(map));
                                }
                            }
                        }
                        // Never for a server: the connection refuses them.
                        HeadersKind::Response | HeadersKind::Informational => {
                            self.rbuf.advance(used);
                        }
                    }
                }
                Some(other) => {
                    let action = Action::of(&other);
                    self.rbuf.advance(used);
                    self.act(action);
                }
                None => {
                    self.rbuf.advance(used);
                    if used == 0 || self.rbuf.is_empty() {
                        return took;
                    }
                }
            }
        }
    }

    /// Acts on the events queued without input (after timeouts and transmits).
    fn events(&mut self) -> bool {
        let mut any = false;
        loop {
            let Some(event) = self.conn().poll_event() else { return any };
            any = true;
            let action = Action::of(&event);
            self.act(action);
        }
    }

    fn act(&mut self, action: Action) {
        match action {
            Action::Reset(stream) => {
                if let Some(index) = self.tasks.find(stream) {
                    self.cancel(index);
                }
            }
            Action::Writable(stream) => {
                if let Some(index) = self.tasks.find(stream) {
                    self.ready.push(index);
                }
            }
            Action::None => {}
        }
    }

    fn on_data(&mut self, stream: StreamId, chunk: bytes::Bytes, end_stream: bool) {
        let len = chunk.len();
        let Some(index) = self.tasks.find(stream) else {
            // A stream we no longer serve: give the window back.
            self.conn().release_capacity(stream, len);
            return;
        };
        if self.drained(index, len, end_stream) {
            return;
        }
        let i = usize::from(index);
        if len > 0 && !self.bodies.push(i, chunk) {
            self.conn().release_capacity(stream, len);
        }
        if end_stream {
            self.bodies.end(i, None);
        }
    }

    /// Starts the handler of a new request stream in task `index`.
    fn start_task(&mut self, index: u16, mut request: Request, is_head: bool, cont: bool) {
        request.remote_addr = Some(self.peer.clone());
        request.secure = !self.io.is_plain();
        if self.tasks.live() == 1 {
            self.idle_since = None;
            self.worker.go_busy(self.admitted.idle);
        }
        self.served += 1;
        let log = self.worker.access_log.is_some();
        let t = &mut self.tasks.list[usize::from(index)];
        t.head = is_head;
        t.cont = cont;
        t.status = 0;
        t.sent = 0;
        if log {
            let state = t.log.get_or_insert_with(Default::default);
            state.start(request.raw_head(), request.spans());
        }
        if let Some(metrics) = &self.worker.metrics {
            metrics.request_started();
        }
        // The health and metrics endpoints and the fixed answers answer `GET` and `HEAD`
        // without a body before any handler, as over HTTP/1.1.
        let bodyless = !self.tasks.list[usize::from(index)].body_open;
        let ops = self.worker.ops.as_deref().filter(|_| {
            bodyless && matches!(request.method(), crate::Method::Get | crate::Method::Head)
        });
        if let Some(response) = ops.and_then(|ops| ops.answer(request.path().as_bytes())) {
            self.tasks.list[usize::from(index)].handler = None;
            self.respond(index, response);
            return;
        }
        let t = &mut self.tasks.list[usize::from(index)];
        t.handler = Some(self.service.call(request));
        self.ready.push(index);
    }

    /// The stream of an `Upgrade: h2c` request, or one started outside `feed`.
    fn start_request(&mut self, stream: StreamId, request: Request, is_head: bool, cont: bool) {
        let index = self.tasks.open(stream, &self.ready);
        self.start_task(index, request, is_head, cont);
    }

    /// Polls the handlers and response bodies that were woken.
    fn run_ready(&mut self) -> bool {
        let mut polled = std::mem::take(&mut self.polled);
        self.ready.take(&mut polled);
        let any = !polled.is_empty();
        for &index in &polled {
            self.run(index);
        }
        self.polled = polled;
        any
    }

    /// Polls task `index`: its handler until it answers, then its response body.
    fn run(&mut self, index: u16) {
        let i = usize::from(index);
        let Some(t) = self.tasks.list.get_mut(i).filter(|t| t.live) else { return };
        // `100 Continue` when the handler first wants the body (RFC 9110 §10.1.1).
        if t.cont && self.bodies.wants(i) {
            t.cont = false;
            let stream = t.stream;
            let _ = self.conn().send_informational(stream, 100, std::iter::empty());
        }
        let t = &mut self.tasks.list[i];
        if let Some(handler) = &mut t.handler {
            let waker = t.waker.clone();
            let mut cx = Context::from_waker(&waker);
            match poll_handler(handler, &mut cx, |out| out.into_response()) {
                Poll::Pending => {
                    if t.cont && self.bodies.wants(i) {
                        // The 100 goes out on the next turn.
                        self.ready.push(index);
                    }
                    return;
                }
                Poll::Ready(result) => {
                    if let Some(handler) = t.handler.take() {
                        self.service.put(handler);
                    }
                    let response = result.unwrap_or_else(|Panicked| respond::internal_error());
                    self.respond(index, response);
                }
            }
        }
        self.send_body(index);
    }

    /// Sends a handler's response head, and its body when it is complete.
    fn respond(&mut self, index: u16, mut response: crate::Response) {
        let i = usize::from(index);
        // A response that accepted an extended CONNECT (RFC 8441): its session runs as a task of
        // the worker beside the connection, over the stream's bodies.
        if let Some(upgrade) = response.take_upgrade() {
            if response.status().is_success() {
                let handoff = Handoff {
                    connection: None,
                    drain: self.worker.drain_signal(),
                    write_timeout: self.worker.config.write_timeout,
                    // The stream's DATA arrives in chunks of its own: no read buffer to lend.
                    buffers: None,
                };
                tokio::task::spawn_local(upgrade.start(handoff));
            }
        }
        let date = *self.date.get_or_insert_with(crate::server::clock::date);
        let conn = self.conn.as_mut().expect("connection state");
        let t = &mut self.tasks.list[i];
        let out =
            respond::send_head(conn, t.stream, &mut response, t.head, &date, &mut self.head_cache);
        t.status = response.status().as_u16();
        if let Some(log) = &mut t.log {
            log.responded(t.status);
        }
        match out {
            Ok(out) => {
                t.out = out;
                if matches!(t.out, Out::None) {
                    self.complete(index);
                }
            }
            Err(()) => {
                let stream = t.stream;
                self.conn().reset(stream, Reason::INTERNAL_ERROR);
                self.cancel(index);
            }
        }
    }

    /// Sends what the windows allow of every response body waiting to go.
    fn send_bodies(&mut self) -> bool {
        let mut any = false;
        for index in 0..self.tasks.list.len() as u16 {
            let t = &self.tasks.list[usize::from(index)];
            if t.live && t.handler.is_none() && !matches!(t.out, Out::None) {
                any |= self.send_body(index);
            }
        }
        any
    }

    /// Sends what it can of task `index`'s response body. True when bytes went.
    fn send_body(&mut self, index: u16) -> bool {
        let i = usize::from(index);
        let conn = self.conn.as_mut().expect("connection state");
        let t = &mut self.tasks.list[i];
        // Nothing to send: the handler runs, or the response is complete (a drained body).
        if !t.live || t.handler.is_some() || matches!(t.out, Out::None) {
            return false;
        }
        let waker = t.waker.clone();
        let mut cx = Context::from_waker(&waker);
        let before = t.sent;
        let sent = respond::send_more(conn, t.stream, &mut t.out, &mut cx, &mut t.sent);
        if let Some(log) = &mut t.log {
            log.bytes += t.sent - before;
        }
        match sent {
            respond::Sent::Progress => {
                t.stalled_since = None;
                true
            }
            respond::Sent::Blocked => {
                t.stalled_since.get_or_insert_with(Instant::now);
                false
            }
            respond::Sent::Waiting => false,
            respond::Sent::Done => {
                self.complete(index);
                true
            }
            respond::Sent::Failed => {
                let stream = t.stream;
                self.conn().reset(stream, Reason::INTERNAL_ERROR);
                self.cancel(index);
                true
            }
        }
    }

    /// The response on task `index` is complete (END_STREAM sent).
    ///
    /// A request body the handler left unread is drained rather than reset: its octets are
    /// released as they come, and the stream stays until the client ends it, so the client's
    /// frames on it are still checked (a DATA beyond its content-length is a PROTOCOL_ERROR,
    /// RFC 9113 §8.1.1). Past `max_drain_bytes`, or `header_read_timeout`, it is reset with
    /// NO_ERROR, which asks the client to stop sending (§8.1).
    fn complete(&mut self, index: u16) {
        let i = usize::from(index);
        let t = &mut self.tasks.list[i];
        let stream = t.stream;
        if let (Some(log), Some(state)) = (&self.worker.access_log, &mut t.log) {
            state.emit(log, self.peer.addr());
        }
        if let Some(metrics) = &self.worker.metrics {
            metrics.response(t.status, t.sent);
            metrics.request_finished();
        }
        if t.body_open {
            t.body_open = false;
            let (unread, ended) = self.bodies.close(i);
            if !ended {
                t.drain = Some((Instant::now(), 0));
            }
            self.conn().release_capacity(stream, unread as usize);
            if !ended {
                return;
            }
        }
        self.close_task(index);
    }

    /// Request body octets arrived for a stream whose response is complete: released and
    /// dropped. True when the stream is done with (ended, or reset for draining too much).
    fn drained(&mut self, index: u16, len: usize, end_stream: bool) -> bool {
        let t = &mut self.tasks.list[usize::from(index)];
        let Some((_, drained)) = &mut t.drain else { return false };
        *drained += len as u64;
        let over = *drained > self.worker.config.max_drain_bytes;
        let stream = t.stream;
        self.conn().release_capacity(stream, len);
        if over && !end_stream {
            self.conn().reset(stream, Reason::NO_ERROR);
        }
        if over || end_stream {
            self.close_task(index);
        }
        true
    }

    /// Task `index` ends without completing its response (reset by the peer, or by us).
    fn cancel(&mut self, index: u16) {
        let i = usize::from(index);
        let t = &mut self.tasks.list[i];
        if let Some(handler) = t.handler.take() {
            self.service.put(handler);
        }
        if t.body_open {
            t.body_open = false;
            self.bodies.fail(i, BodyErrorKind::Incomplete);
            self.bodies.close(i);
        }
        if let Some(state) = &mut t.log {
            state.spans = None;
        }
        if let Some(metrics) = &self.worker.metrics {
            metrics.request_finished();
        }
        self.close_task(index);
    }

    fn close_task(&mut self, index: u16) {
        self.tasks.close(index);
        if self.tasks.live() == 0 {
            self.idle_since = Some(Instant::now());
            self.worker.go_idle(self.admitted.idle);
        }
    }

    /// Gives back the window of request body octets handlers consumed.
    fn release(&mut self) {
        let mut released = std::mem::take(&mut self.released);
        self.bodies.take_released(&mut released);
        for &(index, n) in &released {
            if let Some(t) = self.tasks.list.get(usize::from(index)).filter(|t| t.live) {
                let stream = t.stream;
                self.conn().release_capacity(stream, n as usize);
            }
        }
        released.clear();
        self.released = released;
    }

    /// Begins a graceful shutdown (RFC 9113 §6.8), once.
    fn drain(&mut self) {
        if !self.draining {
            self.draining = true;
            self.conn().shutdown(StdInstant::now());
        }
    }

    /// Writes the frames the connection queued. `Err` when the socket failed.
    fn transmit(&mut self, cx: &mut Context<'_>) -> Result<bool, ()> {
        if self.wpos >= self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        }
        if self.wbuf.len() - self.wpos < REFILL_BELOW {
            let conn = self.conn.as_mut().expect("connection state");
            conn.poll_transmit(&mut self.wbuf);
        }
        let before = self.wpos;
        let written = self.io.poll_write_all(cx, &self.wbuf, &mut self.wpos, &mut self.stall);
        let wrote = self.wpos != before;
        match written {
            Poll::Ready(Ok(())) => {
                self.wbuf.clear();
                self.wpos = 0;
            }
            Poll::Ready(Err(_)) => return Err(()),
            Poll::Pending => {}
        }
        Ok(wrote)
    }

    /// Arms the timer for the nearest deadline; true when one has passed (and was handled).
    fn arm_timer(&mut self, cx: &mut Context<'_>) -> bool {
        let config = self.worker.config;
        let now = Instant::now();
        let conn_deadline = self.conn().poll_timeout().map(Instant::from_std);
        // Before the first request: the preface and first request within the head timeout;
        // afterwards, the keep-alive timeout while no stream is open.
        let idle_deadline = self.idle_since.map(|since| {
            since
                + if self.served == 0 {
                    config.header_read_timeout
                } else {
                    config.keep_alive_timeout
                }
        });
        let write_deadline = self.stall.deadline(config.write_timeout).map(Instant::from_std);
        // A response that finds no window for this long (a peer holding streams open at zero
        // window) is reset.
        let stall_deadline = self
            .tasks
            .list
            .iter()
            .filter(|t| t.live)
            .filter_map(|t| t.stalled_since)
            .min()
            .map(|since| since + config.write_timeout);
        // A drained request body must end within the head timeout of its response.
        let drain_deadline = self
            .tasks
            .list
            .iter()
            .filter(|t| t.live)
            .filter_map(|t| t.drain.map(|(since, _)| since + config.header_read_timeout))
            .min();
        let stall_deadline = match (stall_deadline, drain_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let deadline = [conn_deadline, idle_deadline, write_deadline, stall_deadline]
            .into_iter()
            .flatten()
            .min();
        let Some(deadline) = deadline else { return false };
        if deadline <= now {
            return self.expire(now, conn_deadline, idle_deadline, write_deadline, stall_deadline);
        }
        if self.timer.deadline() != deadline {
            self.timer.as_mut().reset(deadline);
        }
        if self.timer.as_mut().poll(cx).is_ready() {
            return self.expire(
                Instant::now(),
                conn_deadline,
                idle_deadline,
                write_deadline,
                stall_deadline,
            );
        }
        false
    }

    /// Handles the deadlines that have passed. True when one did.
    fn expire(
        &mut self,
        now: Instant,
        conn_deadline: Option<Instant>,
        idle_deadline: Option<Instant>,
        write_deadline: Option<Instant>,
        stall_deadline: Option<Instant>,
    ) -> bool {
        let passed = |d: Option<Instant>| d.is_some_and(|d| d <= now);
        let mut any = false;
        if passed(conn_deadline) {
            self.conn().handle_timeout(now.into_std());
            any = true;
        }
        if passed(idle_deadline) {
            // Idle: close gracefully (no stream is open, so this is quick).
            self.idle_since = None;
            if self.served == 0 {
                self.conn().go_away(Reason::NO_ERROR, b"idle");
            } else {
                self.drain();
            }
            any = true;
        }
        if passed(write_deadline) {
            // The peer reads nothing: give up on it.
            self.read_closed = true;
            self.wbuf.clear();
            self.wpos = 0;
            self.conn().go_away(Reason::NO_ERROR, b"write timeout");
            self.stall = WriteStall::default();
            any = true;
        }
        if passed(stall_deadline) {
            let (limit, drain_limit) =
                (self.worker.config.write_timeout, self.worker.config.header_read_timeout);
            let stale: Vec<u16> = (0..self.tasks.list.len() as u16)
                .filter(|&i| {
                    let t = &self.tasks.list[usize::from(i)];
                    t.live
                        && (t.stalled_since.is_some_and(|s| s + limit <= now)
                            || t.drain.is_some_and(|(s, _)| s + drain_limit <= now))
                })
                .collect();
            for index in stale {
                let stream = self.tasks.list[usize::from(index)].stream;
                self.conn().reset(stream, Reason::CANCEL);
                self.cancel(index);
            }
            any = true;
        }
        any
    }

    /// After the client's end of stream: resets the responses blocked on flow control, which
    /// no WINDOW_UPDATE can unblock any more (RFC 9113 §6.9), and the request bodies being
    /// drained, which can no longer end. Without this a client that closed (or was killed)
    /// mid-response kept its streams until the stall timeout. A response that waits for room
    /// in the send buffer, its windows open, goes on: a client that ended its side may still
    /// read. True when one was reset.
    ///
    /// A request body still being read cannot end either: it fails (incomplete), so its reader
    /// (a handler, or an extended CONNECT's WebSocket session, which would otherwise wait for
    /// ever) learns the client is gone.
    fn cancel_hopeless(&mut self) -> bool {
        let mut any = false;
        for index in 0..self.tasks.list.len() as u16 {
            let t = &self.tasks.list[usize::from(index)];
            if t.live && t.body_open {
                // Ignored for a body that ended; the same error again for one that failed.
                self.bodies.fail(usize::from(index), BodyErrorKind::Incomplete);
            }
            let shut = t.stalled_since.is_some()
                && self.conn.as_ref().is_some_and(|c| c.send_window(t.stream) == 0);
            if t.live && (shut || t.drain.is_some()) {
                let stream = t.stream;
                self.conn().reset(stream, Reason::CANCEL);
                self.cancel(index);
                any = true;
            }
        }
        any
    }

    /// The lingering close: drops what the client still sends until its end of stream or the
    /// deadline (see `net::linger`).
    fn poll_linger(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some((deadline, discarded)) = &mut self.linger else { return Poll::Ready(()) };
        let deadline = *deadline;
        // Past `LINGER_BYTES` it waits out the deadline without reading: closing then would
        // send the reset the linger is there to hold back (the tests saw GOAWAY lost so).
        if self.io.poll_discard(cx, discarded).is_ready() {
            return Poll::Ready(());
        }
        if self.timer.deadline() != deadline {
            self.timer.as_mut().reset(deadline);
        }
        self.timer.as_mut().poll(cx)
    }

    /// Frees what a lingering connection no longer needs.
    fn release_memory(&mut self) {
        self.conn = None;
        self.rbuf = BytesMut::new();
        self.wbuf = Vec::new();
        self.arena = BytesMut::new();
        self.spare_arena = BytesMut::new();
    }

    /// The connection is over: handlers still running are dropped, the write side is shut.
    fn finish(&mut self) {
        for index in 0..self.tasks.list.len() as u16 {
            if self.tasks.list[usize::from(index)].live {
                self.cancel(index);
            }
        }
        let _ = self.io.shutdown_write();
    }
}

/// Makes sure the head arena has room for a head: the current one, else the spare one
/// reclaimed whole (no allocation when the requests of its heads are done), else a new one
/// (while many requests are in flight at once).
fn arena_room(arena: &mut BytesMut, spare: &mut BytesMut) {
    if arena.capacity() - arena.len() >= ARENA_MIN {
        return;
    }
    std::mem::swap(arena, spare);
    arena.clear();
    if !arena.try_reclaim(ARENA) {
        *arena = BytesMut::with_capacity(ARENA);
    }
}

/// What the driver does about an event that borrows nothing it needs.
enum Action {
    Reset(StreamId),
    Writable(StreamId),
    None,
}

impl Action {
    fn of(event: &Event<'_>) -> Action {
        match event {
            Event::Reset { stream, .. } => Action::Reset(*stream),
            Event::Writable { stream } => Action::Writable(*stream),
            _ => Action::None,
        }
    }
}
