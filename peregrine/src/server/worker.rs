//! What every connection of one worker shares: the config, the buffer pool, the connection
//! count and the drain state; and the entry each connection holds in the idle table while it is
//! open.
//!
//! At the connection limit a new connection is admitted by closing the longest-idle
//! keep-alive connection, of this worker or, when this one has none idle, of another (which
//! is asked through [`Load`]); it is refused only when every connection is busy.

use std::cell::{Cell, RefCell};
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Waker;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::access_log::AccessLog;
use super::buffers::BufPool;
use super::config::Config;
use super::fixed::Fixed;
use super::h1::last_response::LastResponse;
use super::h1::repeats::Repeats;
use super::idle::IdleTable;
use super::metrics::WorkerMetrics;
use super::ops::Ops;
use super::proxy::ProxyProtocol;
use super::shutdown::ShutdownSignal;
use crate::http1::{self, LastHead};
use crate::net::linger::LINGER;
use crate::websocket::{BufferPool, Drain};

/// A worker gives freed memory back to the kernel when its connections fall to a quarter of a
/// peak of at least this many.
const TRIM_PEAK: usize = 1024;

/// What the workers share: the connection count, and per worker how many connections are idle
/// and how many evictions others asked of it.
#[derive(Debug)]
pub(crate) struct Load {
    /// Connections open over all workers (the global limit).
    open: AtomicUsize,
    workers: Box<[WorkerLoad]>,
}

#[derive(Debug, Default)]
struct WorkerLoad {
    idle: AtomicUsize,
    evict: AtomicUsize,
    wake: Notify,
}

impl Load {
    pub(crate) fn new(workers: usize) -> Load {
        Load {
            open: AtomicUsize::new(0),
            workers: (0..workers).map(|_| Default::default()).collect(),
        }
    }
}

/// A WebSocket session's read buffer comes from the worker's pool while it is busy.
impl BufferPool for Worker {
    fn hold(&self) -> bool {
        self.buffers.hold()
    }

    fn unhold(&self) {
        self.buffers.unhold();
    }

    fn take(&self) -> bytes::BytesMut {
        self.buffers.take()
    }

    fn put(&self, buf: bytes::BytesMut) {
        self.buffers.put(buf);
    }
}

/// What every connection of one worker shares: the config, the shutdown state, the buffer pool.
#[derive(Debug)]
pub(crate) struct Worker {
    pub(crate) config: Config,
    /// The HTTP/1.1 connections' limits and deadlines (from `Config`), shared by all of them:
    /// for plain TCP (where an HTTP/2 client may come with its preface) and for TLS.
    pub(crate) h1_config: Arc<http1::conn::Config>,
    pub(crate) h1_config_tls: Arc<http1::conn::Config>,
    pub(crate) buffers: BufPool,
    /// The access log function, if any.
    pub(crate) access_log: Option<AccessLog>,
    /// Whether connections start with a PROXY protocol header, and from whom.
    pub(crate) proxy: Option<Arc<ProxyProtocol>>,
    /// The endpoints the server answers itself (health, metrics), if any.
    pub(crate) ops: Option<Arc<Ops>>,
    /// This worker's counters, when metrics are on.
    pub(crate) metrics: Option<Arc<WorkerMetrics>>,
    /// The last HTTP/1.1 response head this worker encoded, written again while responses
    /// repeat it (one per worker, not per connection: idle connections carry none).
    pub(crate) last_response: RefCell<LastResponse>,
    /// The last HTTP/1.1 request head this worker parsed, answering the heads that repeat it
    /// byte for byte without a parse (one per worker, shared by its connections).
    pub(crate) last_head: RefCell<LastHead>,
    /// The fixed answers, repeated: what a run of them on a connection is written from.
    pub(crate) repeats: RefCell<Repeats>,
    index: usize,
    load: Arc<Load>,
    /// Connections open on this worker.
    active: Cell<usize>,
    /// The most connections open on this worker since memory was last given back.
    peak: Cell<usize>,
    /// Set once the drain begins: responses say `Connection: close`.
    draining: Cell<bool>,
    /// Set once the drain's grace period is over: stop accepting, close idle connections.
    stopping: Cell<bool>,
    /// During a drain: when the worker stops waiting for its connections and drops them.
    drain_deadline: Cell<Option<Instant>>,
    /// Wakes the accept loops when accepting stops.
    stop_notify: Notify,
    /// The connections' entries, the idle ones in idle order (see [`IdleTable`]).
    idle_table: RefCell<IdleTable>,
    /// Wakes the worker when its last connection closes during a drain.
    idle_notify: Notify,
    /// The server's shutdown signals (set by the runtime): what an upgraded connection's
    /// session watches to say goodbye when the drain begins.
    pub(crate) shutdown: Option<Arc<ShutdownSignal>>,
}

impl Worker {
    /// The fixed answer `index` (`Server::fixed`), when the server has it.
    #[inline]
    pub(crate) fn fixed(&self, index: usize) -> Option<&Fixed> {
        self.ops.as_deref().and_then(|ops| ops.fixed.get(index))
    }

    /// Worker `index` of those sharing `load`, with no connection yet.
    pub(crate) fn new(
        config: Config,
        access_log: Option<AccessLog>,
        index: usize,
        load: Arc<Load>,
    ) -> Worker {
        Worker {
            h1_config: Arc::new(config.h1_config()),
            h1_config_tls: Arc::new(http1::conn::Config {
                http2_preface: false,
                ..config.h1_config()
            }),
            config,
            buffers: BufPool::default(),
            access_log,
            proxy: None,
            ops: None,
            metrics: None,
            last_response: RefCell::default(),
            last_head: RefCell::default(),
            repeats: RefCell::default(),
            index,
            load,
            active: Cell::new(0),
            peak: Cell::new(0),
            draining: Cell::new(false),
            stopping: Cell::new(false),
            drain_deadline: Cell::new(None),
            stop_notify: Notify::new(),
            idle_table: RefCell::default(),
            idle_notify: Notify::new(),
            shutdown: None,
        }
    }

    /// Whether the drain has begun: responses close their connections.
    #[inline]
    pub(crate) fn draining(&self) -> bool {
        self.draining.get()
    }

    /// Until when a lingering close that begins now waits for the client's end of stream
    /// (see `net::linger`).
    ///
    /// Ordinarily [`LINGER`] (at most the head timeout). During a drain, until the drain's
    /// deadline: the worker waits for its connections then anyway, and a close before the
    /// client's end may meet a request the client sent before it read our last bytes (a
    /// client slow to read, on a loaded machine); the reset that request draws discards what
    /// our send queue still held of the last responses and GOAWAY (RFC 9113 §6.8, RFC 9112
    /// §9.6).
    pub(crate) fn linger_deadline(&self) -> Instant {
        let now = Instant::now();
        let short = now + LINGER.min(self.config.header_read_timeout);
        match self.drain_deadline.get() {
            Some(drain) if self.draining() => drain.max(short),
            _ => short,
        }
    }

    /// Whether accepting has stopped: connections close as soon as they are idle.
    #[inline]
    pub(crate) fn stopping(&self) -> bool {
        self.stopping.get()
    }

    /// Waits until accepting stops.
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub(crate) async fn stopped(&self) {
        let mut notified = pin!(self.stop_notify.notified());
        notified.as_mut().enable();
        if !self.stopping.get() {
            notified.await;
        }
    }

    /// A future that completes when the server's drain begins, for a session that outlives
    /// HTTP (an upgraded connection); `None` for a worker made without the signals (tests).
    pub(crate) fn drain_signal(&self) -> Option<Drain> {
        let shutdown = self.shutdown.clone()?;
        let flag = shutdown.clone();
        Some(Drain::new(Box::pin(async move { shutdown.drain.wait().await }), move || {
            flag.drain.is_set()
        }))
    }

    /// The drain begins: from now on every HTTP/1.1 response says `Connection: close` (its
    /// connection closes after it), while the listeners keep accepting until
    /// [`Worker::stop_accepting`] and idle connections stay open until then, so a load balancer
    /// that still sends during its detection delay is answered.
    ///
    /// HTTP/2 connections send GOAWAY now (RFC 9113 §6.8: the last stream id they will
    /// process, then no new streams): every connection waiting is woken to look.
    pub(crate) fn begin_drain(&self) {
        self.draining.set(true);
        let config = &self.config;
        self.drain_deadline
            .set(Some(Instant::now() + config.drain_grace + config.shutdown_timeout));
        let wakers = self.idle_table.borrow_mut().take_wakers();
        wakers.into_iter().for_each(Waker::wake);
    }

    /// The grace period is over: the accept loops end (closing the listeners), and idle
    /// connections close; busy ones close after their response.
    pub(crate) fn stop_accepting(&self) {
        self.draining.set(true);
        self.stopping.set(true);
        self.drain_deadline.set(Some(Instant::now() + self.config.shutdown_timeout));
        self.stop_notify.notify_waiters();
        let wakers = self.idle_table.borrow_mut().take_wakers();
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Registers the waker of connection `index` while it waits, to be woken when accepting
    /// stops or when it is chosen to close. Call [`Worker::stopping`] first.
    #[inline]
    pub(crate) fn watch(&self, index: u32, waker: &Waker) {
        self.idle_table.borrow_mut().watch(index, waker);
    }

    /// Connection `index` waits for its next request (it may be closed to admit another).
    pub(crate) fn go_idle(&self, index: u32) {
        let mut table = self.idle_table.borrow_mut();
        table.idle(index);
        self.publish_idle(table.idle_count());
    }

    /// Publishes this worker's idle count for the others' `make_room`: a plain store (the
    /// count is this worker's alone to change), not a read-modify-write per idle transition.
    #[inline]
    fn publish_idle(&self, idle: usize) {
        self.load.workers[self.index].idle.store(idle, Ordering::Relaxed);
    }

    /// Connection `index` has a request again (after [`Worker::go_idle`]).
    pub(crate) fn go_busy(&self, index: u32) {
        let mut table = self.idle_table.borrow_mut();
        let before = table.idle_count();
        table.busy(index);
        if table.idle_count() < before {
            self.publish_idle(table.idle_count());
        }
    }

    /// Whether connection `index` was chosen to close to admit a new one.
    #[inline]
    pub(crate) fn evicted(&self, index: u32) -> bool {
        self.idle_table.borrow().evicted(index)
    }

    /// Closes up to `n` of this worker's longest-idle connections; how many it closed.
    pub(crate) fn evict(&self, n: usize) -> usize {
        let mut done = 0;
        while done < n && self.idle_table.borrow_mut().evict_oldest() {
            done += 1;
        }
        if done > 0 {
            self.publish_idle(self.idle_table.borrow().idle_count());
        }
        done
    }

    /// Counts a new connection against the global limit. At the limit, makes room by closing
    /// the longest-idle keep-alive connection (this worker's, else another's); false when
    /// every connection is busy.
    ///
    /// While an evicted connection closes, the count may pass the limit by the evictions
    /// under way: at most one per connection admitted this way, each closing at its next poll.
    pub(crate) fn admit(&self) -> bool {
        let before = self.load.open.fetch_add(1, Ordering::AcqRel);
        if before >= self.config.max_connections && !self.make_room() {
            self.load.open.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        let active = self.active.get() + 1;
        self.active.set(active);
        self.peak.set(self.peak.get().max(active));
        if let Some(metrics) = &self.metrics {
            metrics.connection_opened(active);
        }
        true
    }

    fn make_room(&self) -> bool {
        if self.evict(1) == 1 {
            return true;
        }
        // Another worker's idle connection: ask it, it closes one when it next runs.
        let others = self.load.workers.iter().enumerate().filter(|(i, _)| *i != self.index);
        for (_, other) in others {
            let idle = other.idle.load(Ordering::Relaxed);
            let asked = other.evict.load(Ordering::Relaxed);
            if idle > asked {
                other.evict.fetch_add(1, Ordering::Relaxed);
                other.wake.notify_one();
                return true;
            }
        }
        false
    }

    /// Serves the evictions other workers ask of this one, until the worker stops.
    pub(crate) async fn serve_evictions(&self) {
        let mine = &self.load.workers[self.index];
        loop {
            mine.wake.notified().await;
            let asked = mine.evict.swap(0, Ordering::Relaxed);
            self.evict(asked);
        }
    }

    /// Releases a connection admitted by [`Worker::admit`].
    fn release(&self) {
        self.load.open.fetch_sub(1, Ordering::AcqRel);
        let left = self.active.get().saturating_sub(1);
        self.active.set(left);
        if let Some(metrics) = &self.metrics {
            metrics.connection_closed(left);
        }
        if left == 0 {
            self.idle_notify.notify_waiters();
        }
        // A burst of connections has mostly closed: give their memory back (see `trim`).
        let peak = self.peak.get();
        if peak >= TRIM_PEAK && left <= peak / 4 {
            self.peak.set(left);
            super::trim::release_free_memory();
        }
    }

    pub(crate) async fn all_closed(&self) {
        loop {
            let mut notified = pin!(self.idle_notify.notified());
            notified.as_mut().enable();
            if self.active.get() == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// Releases a connection's idle-table entry and count when the connection's task ends, however
/// it ends.
pub(crate) struct Admitted {
    pub(crate) worker: Rc<Worker>,
    /// The connection's index in the idle table (see [`Worker::watch`]).
    pub(crate) idle: u32,
}

impl Admitted {
    /// Takes an idle-table entry for a new connection of `worker` (already counted by `admit`).
    pub(crate) fn new(worker: Rc<Worker>) -> Admitted {
        let idle = worker.idle_table.borrow_mut().take();
        Admitted { worker, idle }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.worker.go_busy(self.idle);
        self.worker.idle_table.borrow_mut().put(self.idle);
        self.worker.release();
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// A worker for unit tests that need one, counting one open connection.
    pub(crate) fn worker() -> Rc<Worker> {
        let worker = Worker::new(Config::default(), None, 0, Arc::new(Load::new(1)));
        worker.load.open.store(1, Ordering::Relaxed);
        worker.active.set(1);
        Rc::new(worker)
    }
}
