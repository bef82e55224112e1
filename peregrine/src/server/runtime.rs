//! Thread per core: each worker is one OS thread running a current-thread tokio runtime with its
//! own `SO_REUSEPORT` listener, so the kernel spreads connections over workers and nothing is
//! shared between them on the request path but the connection counter.

use std::cell::{Cell, RefCell};
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Waker;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::LocalSet;

use super::buffers::BufPool;
use super::conn;
use super::limits::Config;
use super::shutdown::ShutdownSignal;
use super::slots::Service;
use crate::handler::Handler;

/// Pending connections per listener (the kernel caps it at `net.core.somaxconn`).
const BACKLOG: i32 = 4096;

/// Binds one listening socket with `SO_REUSEPORT`, non-blocking, ready for tokio.
pub(crate) fn bind_listener(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    // Every worker binds the same address; the kernel balances accepted connections between
    // the sockets by a hash of the 4-tuple.
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// Binds `workers` listeners for each address. A port 0 address is bound once to let the kernel
/// pick a port, then every other listener binds that port.
pub(crate) fn bind_all(
    addrs: &[SocketAddr],
    workers: usize,
) -> io::Result<(Vec<Vec<std::net::TcpListener>>, Vec<SocketAddr>)> {
    let mut per_worker: Vec<Vec<std::net::TcpListener>> =
        (0..workers).map(|_| Vec::new()).collect();
    let mut bound = Vec::with_capacity(addrs.len());
    for &addr in addrs {
        // Linux lets any socket of the same user join a SO_REUSEPORT group, so a port another
        // server listens on would be shared silently. A plain bind fails on a port anyone
        // listens on; the probe is closed at once. Port 0 needs none: the kernel picks a free one.
        if addr.port() != 0 {
            drop(std::net::TcpListener::bind(addr)?);
        }
        let first = bind_listener(addr)?;
        let local = first.local_addr()?;
        bound.push(local);
        per_worker[0].push(first);
        for listeners in per_worker.iter_mut().skip(1) {
            listeners.push(bind_listener(local)?);
        }
    }
    Ok((per_worker, bound))
}

/// What every connection of one worker shares: the config, the shutdown state, the buffer pool.
#[derive(Debug)]
pub(crate) struct Worker {
    pub(crate) config: Config,
    pub(crate) buffers: BufPool,
    /// Connections open over all workers (the global limit).
    open: Arc<AtomicUsize>,
    /// Connections open on this worker.
    active: Cell<usize>,
    /// Set once shutdown begins: stop accepting, close idle connections, answer with close.
    draining: Cell<bool>,
    /// Wakes the accept loops when draining starts.
    drain_notify: Notify,
    /// Wakes idle connections when draining starts (see [`IdleWakers`]).
    idle: RefCell<IdleWakers>,
    /// Wakes the worker when its last connection closes during a drain.
    idle_notify: Notify,
}

impl Worker {
    /// Whether shutdown has begun.
    #[inline]
    pub(crate) fn draining(&self) -> bool {
        self.draining.get()
    }

    /// Waits until shutdown begins.
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub(crate) async fn drained(&self) {
        let mut notified = pin!(self.drain_notify.notified());
        notified.as_mut().enable();
        if !self.draining.get() {
            notified.await;
        }
    }

    fn begin_drain(&self) {
        self.draining.set(true);
        self.drain_notify.notify_waiters();
        let wakers: Vec<Waker> =
            self.idle.borrow_mut().slots.iter_mut().flat_map(Option::take).collect();
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Registers the waker of connection `slot`, waiting between requests, to be woken when
    /// draining starts. Call [`Worker::draining`] first.
    #[inline]
    pub(crate) fn watch_drain(&self, slot: u32, waker: &Waker) {
        let mut idle = self.idle.borrow_mut();
        if let Some(w) = idle.slots.get_mut(slot as usize) {
            match w {
                Some(w) if w.will_wake(waker) => {}
                _ => *w = Some(waker.clone()),
            }
        }
    }

    /// Counts a new connection against the global limit; false when at the limit.
    fn admit(&self) -> bool {
        let before = self.open.fetch_add(1, Ordering::AcqRel);
        if before >= self.config.max_connections {
            self.open.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        self.active.set(self.active.get() + 1);
        true
    }

    /// Releases a connection admitted by [`Worker::admit`].
    pub(crate) fn release(&self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
        let left = self.active.get().saturating_sub(1);
        self.active.set(left);
        if left == 0 {
            self.idle_notify.notify_waiters();
        }
    }

    async fn all_closed(&self) {
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

/// The wakers of a worker's connections, one slot per open connection, woken when draining
/// starts.
///
/// Each wait between requests used to register with a [`Notify`] (a lock and a list insert,
/// then a removal: about 260 instructions per request at one request per wait); re-registering
/// here is a waker compare.
#[derive(Debug, Default)]
pub(crate) struct IdleWakers {
    slots: Vec<Option<Waker>>,
    free: Vec<u32>,
}

/// Releases a connection slot when the connection's task ends, however it ends.
pub(crate) struct Admitted {
    pub(crate) worker: Rc<Worker>,
    /// The connection's slot in [`Worker::watch_drain`].
    pub(crate) idle: u32,
}

impl Admitted {
    /// Takes an idle-waker slot for a new connection of `worker` (already counted by `admit`).
    pub(crate) fn new(worker: Rc<Worker>) -> Admitted {
        let idle = {
            let mut idle = worker.idle.borrow_mut();
            match idle.free.pop() {
                Some(i) => i,
                None => {
                    idle.slots.push(None);
                    (idle.slots.len() - 1) as u32
                }
            }
        };
        Admitted { worker, idle }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        {
            let mut idle = self.worker.idle.borrow_mut();
            if let Some(w) = idle.slots.get_mut(self.idle as usize) {
                *w = None;
                idle.free.push(self.idle);
            }
        }
        self.worker.release();
    }
}

/// Starts one worker thread serving `listeners` until `shutdown` triggers and its connections
/// finish (or `config.shutdown_timeout` passes).
pub(crate) fn spawn_worker<H: Handler>(
    index: usize,
    listeners: Vec<std::net::TcpListener>,
    handler: H,
    config: Config,
    open: Arc<AtomicUsize>,
    shutdown: Arc<ShutdownSignal>,
) -> io::Result<std::thread::JoinHandle<()>> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    std::thread::Builder::new().name(format!("peregrine-{index}")).spawn(move || {
        let worker = Rc::new(Worker {
            config,
            buffers: BufPool::default(),
            open,
            active: Cell::new(0),
            draining: Cell::new(false),
            drain_notify: Notify::new(),
            idle: RefCell::default(),
            idle_notify: Notify::new(),
        });
        let handler = Rc::new(Service::new(handler));
        let local = LocalSet::new();
        local.block_on(&runtime, async move {
            for listener in listeners {
                match TcpListener::from_std(listener) {
                    Ok(listener) => {
                        tokio::task::spawn_local(accept_loop(
                            listener,
                            handler.clone(),
                            worker.clone(),
                        ));
                    }
                    Err(e) => tracing::error!("peregrine: cannot register listener: {e}"),
                }
            }
            shutdown.wait().await;
            worker.begin_drain();
            // In-flight requests finish; connections close as they become idle.
            let _ = tokio::time::timeout(worker.config.shutdown_timeout, worker.all_closed()).await;
        });
        // Dropping the LocalSet and the runtime drops any connection still open past the
        // deadline, closing its socket.
    })
}

/// How long to pause accepting after an error that more accepting cannot fix right away.
fn accept_backoff(e: &io::Error) -> Option<Duration> {
    match e.raw_os_error() {
        // Out of descriptors or memory: accepting again at once would spin. Connections that
        // close free descriptors; the pending ones wait in the backlog meanwhile.
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => {
            Some(Duration::from_millis(50))
        }
        // The peer went away between SYN and accept, or a signal: just go on.
        Some(libc::ECONNABORTED | libc::EINTR | libc::EPROTO | libc::ECONNRESET | libc::EPERM) => {
            None
        }
        _ => Some(Duration::from_millis(10)),
    }
}

/// The answer to a connection over the global limit (RFC 9110 §15.6.4).
const REFUSED: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

async fn accept_loop<H: Handler>(
    listener: TcpListener,
    handler: Rc<Service<H>>,
    worker: Rc<Worker>,
) {
    loop {
        let accepted = tokio::select! {
            biased;
            () = worker.drained() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                if !worker.admit() {
                    refuse(stream);
                    continue;
                }
                // Responses are written whole; Nagle would hold back pipelined ones.
                let _ = stream.set_nodelay(true);
                let admitted = Admitted::new(worker.clone());
                tokio::task::spawn_local(conn::serve(stream, peer, handler.clone(), admitted));
            }
            Err(e) => {
                if let Some(pause) = accept_backoff(&e) {
                    tracing::warn!("peregrine: accept failed ({e}); pausing {pause:?}");
                    tokio::select! {
                        () = worker.drained() => return,
                        () = tokio::time::sleep(pause) => {}
                    }
                }
            }
        }
    }
}

/// Answers 503 without reading and closes: best effort, never waits.
fn refuse(stream: TcpStream) {
    let _ = stream.try_write(REFUSED);
    drop(stream);
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// A worker for unit tests that need one.
    pub(crate) fn worker() -> Rc<Worker> {
        Rc::new(Worker {
            config: Config::default(),
            buffers: BufPool::default(),
            open: Arc::new(AtomicUsize::new(1)),
            active: Cell::new(1),
            draining: Cell::new(false),
            drain_notify: Notify::new(),
            idle: RefCell::default(),
            idle_notify: Notify::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_backoff_by_errno() {
        struct Case {
            errno: i32,
            expect: bool,
        }
        let cases = [
            Case { errno: libc::EMFILE, expect: true },
            Case { errno: libc::ENFILE, expect: true },
            Case { errno: libc::ECONNABORTED, expect: false },
            Case { errno: libc::EINTR, expect: false },
            Case { errno: libc::EINVAL, expect: true },
        ];
        for case in cases {
            let e = io::Error::from_raw_os_error(case.errno);
            assert_eq!(accept_backoff(&e).is_some(), case.expect, "errno {}", case.errno);
        }
    }

    #[test]
    fn port_zero_binds_every_worker_to_one_port() {
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let (listeners, bound) = bind_all(&[addr], 3).unwrap();
        assert_eq!(listeners.len(), 3);
        assert_ne!(bound[0].port(), 0);
        for l in listeners.iter().flatten() {
            assert_eq!(l.local_addr().unwrap(), bound[0]);
        }
    }
}
