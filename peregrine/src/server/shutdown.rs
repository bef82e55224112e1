//! The shutdown signal shared by the handle, the signal listener and every worker.

use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// A one-way flag: once triggered it stays set, and every waiter wakes.
#[derive(Debug, Default)]
pub(crate) struct ShutdownSignal {
    triggered: AtomicBool,
    notify: Notify,
}

impl ShutdownSignal {
    /// Sets the flag and wakes every waiter (on any thread).
    pub(crate) fn trigger(&self) {
        self.triggered.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// Whether the flag is set.
    pub(crate) fn is_triggered(&self) -> bool {
        self.triggered.load(Ordering::Acquire)
    }

    /// Waits until the flag is set.
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub(crate) async fn wait(&self) {
        loop {
            let mut notified = pin!(self.notify.notified());
            // Register before checking the flag, so a trigger between the check and the await
            // is not lost (`notify_waiters` only wakes registered waiters).
            notified.as_mut().enable();
            if self.is_triggered() {
                return;
            }
            notified.await;
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
    }
}
