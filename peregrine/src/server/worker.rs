//! What every connection of one worker shares: the config, the buffer pool, the connection
//! count and the drain state; and the slot each connection holds while it is open.

use std::cell::{Cell, RefCell};
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Waker;

use tokio::sync::Notify;

use super::access_log::AccessLog;
use super::buffers::BufPool;
use super::config::Config;

/// What every connection of one worker shares: the config, the shutdown state, the buffer pool.
#[derive(Debug)]
pub(crate) struct Worker {
    pub(crate) config: Config,
    pub(crate) buffers: BufPool,
    /// The access log function, if any.
    pub(crate) access_log: Option<AccessLog>,
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
    /// A worker with no connection yet; `open` counts connections over all workers.
    pub(crate) fn new(
        config: Config,
        access_log: Option<AccessLog>,
        open: Arc<AtomicUsize>,
    ) -> Worker {
        Worker {
            config,
            buffers: BufPool::default(),
            access_log,
            open,
            active: Cell::new(0),
            draining: Cell::new(false),
            drain_notify: Notify::new(),
            idle: RefCell::default(),
            idle_notify: Notify::new(),
        }
    }

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

    pub(crate) fn begin_drain(&self) {
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
    pub(crate) fn admit(&self) -> bool {
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

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// A worker for unit tests that need one, counting one open connection.
    pub(crate) fn worker() -> Rc<Worker> {
        let worker = Worker::new(Config::default(), None, Arc::new(AtomicUsize::new(1)));
        worker.active.set(1);
        Rc::new(worker)
    }
}
