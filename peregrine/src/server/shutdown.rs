//! The shutdown signals shared by the handle, the signal listener and every worker: the drain
//! (graceful: stop taking work), the forced end (drop everything now), and the workers' exit.

use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

/// A one-way flag: once set it stays set, and every waiter wakes.
#[derive(Debug, Default)]
pub(crate) struct Flag {
    set: AtomicBool,
    notify: Notify,
}

impl Flag {
    /// Sets the flag and wakes every waiter (on any thread).
    pub(crate) fn set(&self) {
        self.set.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// Whether the flag is set.
    pub(crate) fn is_set(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// Waits until the flag is set.
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub(crate) async fn wait(&self) {
        loop {
            let mut notified = pin!(self.notify.notified());
            // Register before checking the flag, so a set between the check and the await
            // is not lost (`notify_waiters` only wakes registered waiters).
            notified.as_mut().enable();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}

/// How a server stops: first a drain, maybe then a forced end; and when its workers are gone.
#[derive(Debug, Default)]
pub(crate) struct ShutdownSignal {
    /// Set when the drain begins (`ServerHandle::shutdown`, the first SIGTERM or SIGINT).
    pub(crate) drain: Flag,
    /// Set to end at once (`ServerHandle::shutdown_now`, the second signal).
    pub(crate) force: Flag,
    /// Set when the last worker thread has finished.
    pub(crate) stopped: Flag,
    /// Worker threads not finished yet.
    running: AtomicUsize,
}

impl ShutdownSignal {
    /// Starts the drain.
    pub(crate) fn trigger(&self) {
        self.drain.set();
    }

    /// Ends at once: the drain, and then the forced end.
    pub(crate) fn force(&self) {
        self.drain.set();
        self.force.set();
    }

    /// Whether the drain has begun.
    pub(crate) fn is_triggered(&self) -> bool {
        self.drain.is_set()
    }

    /// Waits until the drain begins.
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub(crate) async fn wait(&self) {
        self.drain.wait().await;
    }

    /// Counts a worker thread that is about to start; it reports its end through the guard.
    pub(crate) fn worker_started(self: &std::sync::Arc<Self>) -> WorkerRunning {
        self.running.fetch_add(1, Ordering::AcqRel);
        WorkerRunning(self.clone())
    }
}

/// Held by a worker thread for its life: the last one to go sets [`ShutdownSignal::stopped`].
#[derive(Debug)]
pub(crate) struct WorkerRunning(std::sync::Arc<ShutdownSignal>);

impl Drop for WorkerRunning {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.stopped.set();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn wakes_a_waiter_on_another_thread() {
        let signal = Arc::new(ShutdownSignal::default());
        let waiter = {
            let signal = signal.clone();
            std::thread::spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap()
                    .block_on(signal.wait());
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        signal.trigger();
        waiter.join().unwrap();
        assert!(signal.is_triggered());
        assert!(!signal.force.is_set());
    }

    #[test]
    fn the_last_worker_sets_stopped_and_force_implies_drain() {
        let signal = Arc::new(ShutdownSignal::default());
        let (a, b) = (signal.worker_started(), signal.worker_started());
        drop(a);
        assert!(!signal.stopped.is_set());
        drop(b);
        assert!(signal.stopped.is_set());
        signal.force();
        assert!(signal.is_triggered() && signal.force.is_set());
    }
}
