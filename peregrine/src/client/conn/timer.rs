//! A client connection's one timer, for the deadline of its wait (the read timeout, a stalled
//! write's, the response head's).
//!
//! The deadline moves at every wait, but the timer is moved only when it is later than the
//! deadline or fires before it: re-arming it per response (a timer-wheel removal and insertion)
//! cost more than the rest of the wait. A timer registered at an earlier deadline wakes the
//! task once per read timeout at most, and is then moved to the real one.
//!
//! Unlike the server's `net::Timer`, a client connection changes tasks (a pooled connection is
//! driven by each request's future and then by its response body's reader), so a wait skips
//! polling the sleep only when the task waiting is the one whose waker it registered.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// See the module docs.
#[derive(Debug)]
pub(super) struct Timer {
    sleep: Pin<Box<Sleep>>,
    /// The deadline `waker` is registered for: the sleep was polled with budget to spare and
    /// has not fired since, so a wait by the same task need not poll it again (a hundred
    /// instructions per wait).
    registered: Option<Instant>,
    waker: Option<Waker>,
}

impl Timer {
    /// A timer that has not been waited for.
    pub(super) fn new() -> Timer {
        Timer { sleep: Box::pin(tokio::time::sleep(Duration::ZERO)), registered: None, waker: None }
    }

    /// `Ready` once `at` has passed; otherwise the task is woken no later than `at`.
    #[inline]
    pub(super) fn poll_until(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        if self.sleep.deadline() > at {
            self.sleep.as_mut().reset(at);
            self.registered = None;
        }
        let same_task = self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
        if same_task && self.registered == Some(self.sleep.deadline()) && !self.sleep.is_elapsed() {
            return Poll::Pending;
        }
        // tokio's coop budget can make a poll return early without registering the waker.
        let budget = tokio::task::coop::has_budget_remaining();
        while self.sleep.as_mut().poll(cx).is_ready() {
            if self.sleep.deadline() >= at {
                self.registered = None;
                return Poll::Ready(());
            }
            self.sleep.as_mut().reset(at);
        }
        self.registered = budget.then(|| self.sleep.deadline());
        if budget && !same_task {
            self.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}
