//! The worker's loop for plain HTTP/1.1 connections while they ask only for fixed answers
//! (`Server::fixed`): no task per connection.
//!
//! On a task of its own, each wake-up of a connection goes through the runtime's scheduling:
//! the reactor wakes the task, the `LocalSet` queues and polls it, the task's future walks its
//! states back to the read, and the wait for the next request arms its timer and joins the idle
//! list again (about 900 instructions per wake-up, and a dozen cache lines read cold with
//! hundreds of connections: BENCHMARKS.md). Here the sockets stay registered with tokio's
//! reactor as they are, but each one's waker only queues the connection's index for the
//! worker's loop: one task, which serves every connection queued from a compact record
//! (`Plain`), reading into a buffer all its connections share.
//!
//! A connection stays here while its requests are answered by fixed answers, with every rule
//! of the general path (the same parser, framing and Host checks, through `parse_head`).
//! Anything else hands it over, with the bytes read and the answers due, to a task running
//! [`serve`], which parses the head again and does the rest: another request, a head in error
//! (its error answer), an answer the socket does not take whole (the flush's write timeout),
//! the HTTP/2 preface, and the start of a drain (every connection at once).
//!
//! Timeouts are kept by a sweep every `period` (an eighth of the shorter of the keep-alive and
//! header timeouts, between 10 ms and 1 s): a connection's deadline is checked in whole
//! periods, so it closes between its timeout and a period later, without a clock read or a
//! timer per request.

use std::cell::RefCell;
use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::fixed_run::FixedRun;
use super::write::{FLUSH_AT, queue_only, write_run};
use super::{Next, Opening, parse_head, serve};
use crate::date::ImfFixdate;
use crate::handler::Handler;
use crate::http1::HeadScanner;
use crate::http1::framing::HostMemo;
use crate::net::Transport;
use crate::net::transport::try_read_plain;
use crate::request::Peer;
use crate::server::slots::Service;
use crate::server::worker::{Admitted, Worker};

/// The loop's read buffer: each `recv` takes up to this much.
const READ_BYTES: usize = 16 * 1024;

/// Reads of one connection in one turn: a client that keeps its socket full of pipelined
/// requests is queued again after these, so the others get their turn.
const READS_PER_TURN: usize = 8;

/// Rounds of the ready queue served in one poll of the loop's task before it lets the
/// worker's other tasks run.
const ROUNDS: usize = 4;

/// The worker's loop for plain connections answered by fixed answers; see the module.
pub(crate) struct FixedLoop<H: Handler> {
    worker: Rc<Worker>,
    service: Rc<Service<H>>,
    queue: Arc<Queue>,
    /// The sweep's period, and the timeouts in whole periods.
    period: Duration,
    keep_alive_ticks: u32,
    header_ticks: u32,
    state: RefCell<State>,
}

struct State {
    conns: Vec<Option<Plain>>,
    /// Free indices of `conns` (some may lie past its end, after it shrank).
    free: Vec<usize>,
    /// The indices taken from the queue, being served.
    ready: Vec<u32>,
    rbuf: Box<[u8]>,
    /// The answers of the connection being served (a run that cannot be sent from the
    /// worker's repeated copy alone).
    wbuf: Vec<u8>,
    /// Sweeps so far.
    tick: u32,
    /// The sweep's timer polled since it was last reset: this task's waker is registered.
    armed: bool,
    /// The drain began and every connection was handed over: new ones go to tasks.
    closed: bool,
}

/// One connection in the loop: about 200 bytes, where a task's future is 800.
struct Plain {
    stream: TcpStream,
    /// Queues this connection for the loop: what the reactor and the worker's slots hold.
    waker: Waker,
    /// The first bytes of a head not complete yet; empty (and without a buffer) otherwise.
    partial: BytesMut,
    scanner: HeadScanner,
    host: HostMemo,
    admitted: Admitted,
    peer: SocketAddr,
    accepted: Instant,
    /// The tick when the connection's current wait began: the accept, the first bytes of a
    /// head, or the end of the last answers.
    since: u32,
    /// In the worker's idle list (it may be evicted).
    idle: bool,
    /// A request was answered: heads from now on are not the first.
    answered: bool,
}

/// What happens to a connection after it was served.
enum Fate {
    Keep,
    Close,
    /// To a task, with its partial bytes and the loop's `wbuf`.
    HandOver,
}

/// The connections woken since the loop last looked, and the loop's task to wake.
///
/// Wakers must be `Send` and `Sync`, hence the lock; it is only ever taken on the worker's
/// thread (the reactor of a current-thread runtime runs there), so it is never contended.
#[derive(Default)]
struct Queue {
    inner: Mutex<Woken>,
}

impl Queue {
    /// The queue, locked. Nothing panics while holding it; were it poisoned, its state (a
    /// list of indices, a waker) would still be whole.
    fn lock(&self) -> std::sync::MutexGuard<'_, Woken> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[derive(Default)]
struct Woken {
    ready: Vec<u32>,
    task: Option<Waker>,
}

/// A connection's waker: queues its index and wakes the loop's task when the queue was empty.
struct ConnWaker {
    index: u32,
    queue: Arc<Queue>,
}

impl Wake for ConnWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let task = {
            let mut woken = self.queue.lock();
            woken.ready.push(self.index);
            if woken.ready.len() == 1 { woken.task.clone() } else { None }
        };
        if let Some(task) = task {
            task.wake();
        }
    }
}

impl<H: Handler> FixedLoop<H> {
    /// A loop for `worker`'s connections.
    pub(crate) fn new(worker: Rc<Worker>, service: Rc<Service<H>>) -> FixedLoop<H> {
        let config = &worker.config;
        let shorter = config.keep_alive_timeout.min(config.header_read_timeout);
        let period = (shorter / 8).clamp(Duration::from_millis(10), Duration::from_secs(1));
        let ticks = |timeout: Duration| {
            u32::try_from(timeout.as_nanos().div_ceil(period.as_nanos())).unwrap_or(u32::MAX)
        };
        FixedLoop {
            keep_alive_ticks: ticks(config.keep_alive_timeout),
            header_ticks: ticks(config.header_read_timeout),
            period,
            queue: Arc::default(),
            state: RefCell::new(State {
                conns: Vec::new(),
                free: Vec::new(),
                ready: Vec::new(),
                rbuf: vec![0; READ_BYTES].into_boxed_slice(),
                wbuf: Vec::new(),
                tick: 0,
                armed: false,
                closed: false,
            }),
            worker,
            service,
        }
    }

    /// Serves the loop's connections until a drain hands them all over.
    pub(crate) async fn run(self: Rc<Self>) {
        let mut sleep = pin!(tokio::time::sleep(self.period));
        poll_fn(|cx| self.poll(cx, &mut sleep)).await;
    }

    /// Takes a connection just accepted (and admitted), or starts its task when the loop has
    /// closed.
    pub(crate) fn insert(
        &self,
        stream: TcpStream,
        peer: SocketAddr,
        admitted: Admitted,
        accepted: Instant,
    ) {
        let mut state = self.state.borrow_mut();
        let State { conns, free, tick, closed, .. } = &mut *state;
        if *closed || self.worker.draining() {
            drop(state);
            self.spawn_task(stream, peer, BytesMut::new(), admitted, Opening::fresh(accepted));
            return;
        }
        let i = take_index(conns, free);
        let Ok(index) = u32::try_from(i) else {
            free.push(i);
            return;
        };
        let waker = Waker::from(Arc::new(ConnWaker { index, queue: self.queue.clone() }));
        self.worker.watch(admitted.idle, &waker);
        // Served at once: the request may be there already.
        waker.wake_by_ref();
        conns[i] = Some(Plain {
            stream,
            waker,
            partial: BytesMut::new(),
            scanner: HeadScanner::new(),
            host: HostMemo::default(),
            admitted,
            peer,
            accepted,
            since: *tick,
            idle: false,
            answered: false,
        });
    }

    fn poll(&self, cx: &mut Context<'_>, sleep: &mut Pin<&mut Sleep>) -> Poll<()> {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        // A drain: each connection to a task, which answers with `Connection: close` and
        // closes when idle, as every other connection does.
        if self.worker.draining() {
            state.closed = true;
            for conn in std::mem::take(&mut state.conns).into_iter().flatten() {
                self.hand_over(conn, Vec::new());
            }
            state.free.clear();
            return Poll::Ready(());
        }
        if !state.armed || sleep.is_elapsed() {
            while sleep.as_mut().poll(cx).is_ready() {
                state.tick = state.tick.wrapping_add(1);
                self.sweep(state);
                sleep.as_mut().reset(Instant::now() + self.period);
            }
            state.armed = true;
        }
        let mut date = None;
        for _ in 0..ROUNDS {
            {
                let mut woken = self.queue.lock();
                if woken.ready.is_empty() {
                    if woken.task.as_ref().is_none_or(|t| !t.will_wake(cx.waker())) {
                        woken.task = Some(cx.waker().clone());
                    }
                    return Poll::Pending;
                }
                state.ready.clear();
                std::mem::swap(&mut state.ready, &mut woken.ready);
            }
            for k in 0..state.ready.len() {
                let i = state.ready[k] as usize;
                self.serve_ready(state, i, &mut date);
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Serves connection `i`, woken by the reactor (or by the worker: an eviction).
    fn serve_ready(&self, state: &mut State, i: usize, date: &mut Option<ImfFixdate>) {
        let State { conns, free, rbuf, wbuf, tick, .. } = state;
        let Some(conn) = conns.get_mut(i).and_then(Option::as_mut) else {
            return;
        };
        match self.serve_conn(conn, rbuf, wbuf, date, *tick) {
            Fate::Keep => {}
            Fate::Close => {
                wbuf.clear();
                conns[i] = None;
                free.push(i);
            }
            Fate::HandOver => {
                if let Some(conn) = conns[i].take() {
                    free.push(i);
                    self.hand_over(conn, std::mem::take(wbuf));
                }
            }
        }
    }

    /// Reads what the connection has, answers its fixed requests and sends the answers, then
    /// registers its waker for the next bytes.
    fn serve_conn(
        &self,
        conn: &mut Plain,
        rbuf: &mut [u8],
        wbuf: &mut Vec<u8>,
        date: &mut Option<ImfFixdate>,
        tick: u32,
    ) -> Fate {
        let worker = &*self.worker;
        if conn.idle {
            // Chosen to close to make room for a new connection.
            if worker.evicted(conn.admitted.idle) {
                return Fate::Close;
            }
            worker.go_busy(conn.admitted.idle);
            conn.idle = false;
        }
        let was_partial = !conn.partial.is_empty();
        let mut run = FixedRun::default();
        let mut end = false;
        for reads in 1.. {
            if reads > READS_PER_TURN {
                conn.waker.wake_by_ref();
                break;
            }
            let n = match try_read_plain(&conn.stream, rbuf) {
                Ok(0) => {
                    end = true;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // Wait for the next bytes: the reactor wakes this connection's waker.
                    let mut cx = Context::from_waker(&conn.waker);
                    match conn.stream.poll_read_ready(&mut cx) {
                        Poll::Pending => break,
                        Poll::Ready(Ok(())) => continue,
                        Poll::Ready(Err(_)) => return Fate::Close,
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Fate::Close,
            };
            let carried = !conn.partial.is_empty();
            if carried {
                conn.partial.extend_from_slice(&rbuf[..n]);
            }
            let buf: &[u8] = if carried { &conn.partial } else { &rbuf[..n] };
            let parser = (&mut conn.scanner, &mut conn.host);
            let (used, other) = self.answer_heads(parser, buf, &mut run, wbuf, date);
            conn.answered |= used > 0;
            // What is left of the bytes is kept: a partial head, or what goes to the task.
            if carried {
                conn.partial.advance(used);
            } else if used < n {
                if conn.partial.capacity() == 0 {
                    conn.partial = worker.buffers.take();
                }
                conn.partial.extend_from_slice(&rbuf[used..n]);
            }
            if other {
                return match write_run(&mut run, queue_only, worker, date, wbuf) {
                    Ok(()) => Fate::HandOver,
                    Err(_) => Fate::Close,
                };
            }
            if wbuf.len() >= FLUSH_AT && !self.send(conn, &mut run, wbuf, date) {
                return Fate::HandOver;
            }
        }
        if (run.is_pending() || !wbuf.is_empty()) && !self.send(conn, &mut run, wbuf, date) {
            // The rest goes out with the task's flush and its write timeout.
            return Fate::HandOver;
        }
        if end {
            // The client is done (or gone): between requests, or inside a head nobody is
            // left to answer.
            return Fate::Close;
        }
        if conn.partial.is_empty() {
            if conn.partial.capacity() != 0 {
                worker.buffers.put(std::mem::take(&mut conn.partial));
            }
            if conn.answered {
                // Between requests; it joins the worker's idle list at the next sweep.
                conn.since = tick;
            }
        } else if !was_partial && conn.answered {
            // A new head's first bytes: its header timeout starts.
            conn.since = tick;
        }
        Fate::Keep
    }

    /// Answers the complete heads at the front of `buf` that have fixed answers, counting
    /// them into `run` (and `wbuf`, when the answer changes). Returns the bytes consumed, and
    /// whether a head after them needs the general path.
    fn answer_heads(
        &self,
        (scanner, host): (&mut HeadScanner, &mut HostMemo),
        buf: &[u8],
        run: &mut FixedRun,
        wbuf: &mut Vec<u8>,
        date: &mut Option<ImfFixdate>,
    ) -> (usize, bool) {
        let worker = &*self.worker;
        let mut used = 0;
        loop {
            let rest = buf.get(used..).unwrap_or_default();
            match parse_head(worker, scanner, host, rest) {
                Next::Fixed { index, is_head, len } => {
                    let Some(answer) = worker.fixed(index).and_then(|f| f.h1_len(is_head)) else {
                        return (used, true);
                    };
                    if !run.extend(index, is_head, answer) {
                        // Another answer, or a full run: the run so far is queued first.
                        if write_run(run, queue_only, worker, date, wbuf).is_err()
                            || !run.extend(index, is_head, answer)
                        {
                            return (used, true);
                        }
                    }
                    used += len;
                }
                Next::Partial => return (used, false),
                Next::Request { .. } | Next::Error(_) => return (used, true),
            }
        }
    }

    /// Sends the connection's answers: the run alone from the worker's repeated copy, or
    /// queued after `wbuf`. False when the socket did not take them all (what it left is in
    /// `wbuf`) or failed.
    fn send(
        &self,
        conn: &Plain,
        run: &mut FixedRun,
        wbuf: &mut Vec<u8>,
        date: &mut Option<ImfFixdate>,
    ) -> bool {
        let worker = &*self.worker;
        let stream = &conn.stream;
        if wbuf.is_empty() {
            return write_run(run, |bytes| stream.try_write(bytes), worker, date, wbuf).is_ok()
                && wbuf.is_empty();
        }
        if write_run(run, queue_only, worker, date, wbuf).is_err() {
            return false;
        }
        let mut sent = 0;
        while sent < wbuf.len() {
            match stream.try_write(&wbuf[sent..]) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        wbuf.drain(..sent);
        wbuf.is_empty()
    }

    /// Starts a task for the connection, with its partial bytes and `queued` answers.
    fn hand_over(&self, conn: Plain, queued: Vec<u8>) {
        let Plain { stream, partial, admitted, peer, accepted, answered, idle, .. } = conn;
        if idle {
            self.worker.go_busy(admitted.idle);
        }
        let opening = Opening { first_head: (!answered).then_some(accepted), queued };
        self.spawn_task(stream, peer, partial, admitted, opening);
    }

    /// Serves the connection on a task of its own, from `rbuf` (bytes read, not answered).
    fn spawn_task(
        &self,
        stream: TcpStream,
        peer: SocketAddr,
        rbuf: BytesMut,
        admitted: Admitted,
        opening: Opening,
    ) {
        let (io, peer) = (Transport::Plain(stream), Peer::Direct(peer));
        let conn = serve(io, peer, rbuf, self.service.clone(), admitted, opening);
        tokio::task::spawn_local(conn);
    }

    /// Closes the connections past their deadline, and puts those idle since the last sweep
    /// in the worker's idle list.
    ///
    /// Joining the idle list at each wait and leaving it at each request touched five cache
    /// lines per request (the slots of the list's neighbours, the worker's shared counter),
    /// which the kernel's work between two requests has evicted: a quarter of the loop's user
    /// time in (a). So a connection becomes a candidate for eviction (the longest-idle one is
    /// closed to admit a new connection at the limit) once it has been idle for a whole period.
    fn sweep(&self, state: &mut State) {
        let tick = state.tick;
        for (i, slot) in state.conns.iter_mut().enumerate() {
            let Some(conn) = slot else { continue };
            let between = conn.answered && conn.partial.is_empty();
            // Between requests the keep-alive timeout; in a head (or before the first) the
            // header timeout.
            let limit = if between { self.keep_alive_ticks } else { self.header_ticks };
            let waited = tick.wrapping_sub(conn.since);
            if waited > limit {
                *slot = None;
                state.free.push(i);
            } else if between && !conn.idle && waited > 1 {
                self.worker.go_idle(conn.admitted.idle);
                conn.idle = true;
            }
        }
        shrink(&mut state.conns, &mut state.free);
    }
}

/// A free index of `conns` (a new one at its end when none is free).
fn take_index(conns: &mut Vec<Option<Plain>>, free: &mut Vec<usize>) -> usize {
    while let Some(i) = free.pop() {
        if i < conns.len() {
            return i;
        }
    }
    conns.push(None);
    conns.len() - 1
}

/// Drops the empty entries at the end of `conns`, and gives memory back after a burst.
fn shrink(conns: &mut Vec<Option<Plain>>, free: &mut Vec<usize>) {
    while conns.last().is_some_and(Option::is_none) {
        conns.pop();
    }
    if conns.capacity() > 64 && conns.len() < conns.capacity() / 4 {
        let len = conns.len();
        conns.shrink_to(len * 2);
        free.retain(|&i| i < len);
        free.shrink_to(free.len() * 2);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::super::fixed_run::tests::fixed;
    use super::*;
    use crate::Request;
    use crate::server::ops::Ops;
    use crate::server::shutdown::ShutdownSignal;

    /// The loop's record of a connection stays well under a task's future (800 bytes).
    #[test]
    fn a_connection_in_the_loop_stays_small() {
        let size = std::mem::size_of::<Option<Plain>>();
        eprintln!("a connection in the loop: {size} bytes");
        assert!(size <= 256, "grew to {size} bytes");
    }

    /// Reads one answer: a head, then as many body bytes as its Content-Length says.
    async fn answer(client: &mut TcpStream, buf: &mut Vec<u8>) -> String {
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                let len: usize = head
                    .lines()
                    .find_map(|l| {
                        l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                    })
                    .map_or(0, |(_, v)| v.trim().parse().unwrap());
                if buf.len() >= end + 4 + len {
                    let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + len]).into_owned();
                    buf.drain(..end + 4 + len);
                    return body;
                }
            }
            let mut chunk = [0; 4096];
            let n = tokio::time::timeout(Duration::from_secs(5), client.read(&mut chunk))
                .await
                .expect("an answer in time")
                .unwrap();
            assert_ne!(n, 0, "closed before the answer");
            buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Runs `test` as a worker does: a current-thread runtime and a `LocalSet`.
    fn on_a_worker(test: impl std::future::Future<Output = ()>) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        tokio::task::LocalSet::new().block_on(&rt, test);
    }

    type Handled = fn(Request) -> std::future::Ready<&'static str>;

    fn handler(_: Request) -> std::future::Ready<&'static str> {
        std::future::ready("handler")
    }

    /// A worker answering `/p` with a fixed answer, its loop (running), a client, and the
    /// server side of the client's connection (not in the loop yet), with its peer address.
    async fn setup() -> (Rc<Worker>, Rc<FixedLoop<Handled>>, TcpStream, TcpStream, SocketAddr) {
        let mut worker = crate::server::worker::tests_support::worker();
        std::rc::Rc::get_mut(&mut worker).unwrap().ops = Some(Arc::new(Ops {
            health: None,
            metrics: None,
            shutdown: Arc::new(ShutdownSignal::default()),
            fixed: vec![fixed("fixed".into())],
            fixed_h1: true,
        }));
        let service = Rc::new(Service::new(handler as Handled));
        let fixed_loop = Rc::new(FixedLoop::new(worker.clone(), service));
        tokio::task::spawn_local(fixed_loop.clone().run());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (stream, peer) = listener.accept().await.unwrap();
        (worker, fixed_loop, client, stream, peer)
    }

    /// A client that sends its requests and shuts its side before the loop reads anything:
    /// the loop sees the bytes and the end at once, and answers before it closes.
    #[test]
    fn requests_and_the_end_read_at_once_are_answered_first() {
        on_a_worker(async {
            let (worker, fixed_loop, mut client, stream, peer) = setup().await;
            let get = "GET /p HTTP/1.1\r\nHost: x\r\n\r\n";
            client.write_all(get.repeat(2).as_bytes()).await.unwrap();
            client.shutdown().await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            fixed_loop.insert(stream, peer, Admitted::new(worker), Instant::now());
            let mut buf = Vec::new();
            assert_eq!(answer(&mut client, &mut buf).await, "fixed");
            assert_eq!(answer(&mut client, &mut buf).await, "fixed");
            let mut rest = Vec::new();
            client.read_to_end(&mut rest).await.unwrap();
            assert!(rest.is_empty() && buf.is_empty(), "only the answers");
            assert_eq!(fixed_loop.state.borrow().conns.iter().flatten().count(), 0, "closed");
        });
    }

    /// Fixed answers are given by the loop itself, which keeps the connection; the first
    /// request that is not one hands the connection to a task, which answers it after them.
    #[test]
    fn fixed_requests_stay_in_the_loop_and_the_others_go_to_a_task() {
        on_a_worker(async {
            let (worker, fixed_loop, mut client, stream, peer) = setup().await;
            fixed_loop.insert(stream, peer, Admitted::new(worker), Instant::now());
            let in_loop = || fixed_loop.state.borrow().conns.iter().flatten().count();
            let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
            let mut buf = Vec::new();

            client.write_all(get("/p").repeat(3).as_bytes()).await.unwrap();
            for _ in 0..3 {
                assert_eq!(answer(&mut client, &mut buf).await, "fixed");
            }
            assert_eq!(in_loop(), 1, "answered by the loop");

            // A fixed answer, then another request in the same write: in order.
            client.write_all(format!("{}{}", get("/p"), get("/other")).as_bytes()).await.unwrap();
            assert_eq!(answer(&mut client, &mut buf).await, "fixed");
            assert_eq!(answer(&mut client, &mut buf).await, "handler");
            assert_eq!(in_loop(), 0, "handed over");
            client.write_all(get("/p").as_bytes()).await.unwrap();
            assert_eq!(answer(&mut client, &mut buf).await, "fixed");
        });
    }
}
