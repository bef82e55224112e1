//! One timer per connection, for whichever of its deadlines comes first.
//!
//! A connection's deadlines mostly move forward (the keep-alive deadline after every request),
//! and re-registering a tokio timer is a timer-wheel removal and insertion each time. So the
//! timer is only ever pulled in: a later deadline leaves it where it is, and when it fires
//! before the real deadline the driver checks, finds time left, and it is re-armed then.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::time::{Instant, Sleep};

/// A connection's timer; see the module docs.
#[derive(Debug)]
pub(crate) struct Timer {
    sleep: Pin<Box<Sleep>>,
    /// The deadline the task's waker is registered for: the sleep was polled with budget to
    /// spare and has not fired since, so a wait for it need not poll it again (~120
    /// instructions per wait).
    registered: Option<Instant>,
}

impl Timer {
    /// A timer set for `deadline`, not yet polled.
    pub(crate) fn new(deadline: Instant) -> Timer {
        Timer { sleep: Box::pin(tokio::time::sleep_until(deadline)), registered: None }
    }

    /// Makes the timer fire no later than `deadline`: a later one is pulled in, an earlier one
    /// left (its firing re-checks the real deadline).
    #[inline]
    pub(crate) fn arm(&mut self, deadline: Instant) {
        if self.sleep.deadline() > deadline || self.sleep.is_elapsed() {
            self.sleep.as_mut().reset(deadline);
            self.registered = None;
        }
    }

    /// Sets the timer for exactly `deadline`.
    pub(crate) fn set(&mut self, deadline: Instant) {
        if self.sleep.deadline() != deadline || self.sleep.is_elapsed() {
            self.sleep.as_mut().reset(deadline);
            self.registered = None;
        }
    }

    /// Waits for `deadline`, which the timer was armed for: `Ready` once it has passed. A
    /// timer that fires early (armed earlier, for a deadline since moved) is moved to
    /// `deadline` and waited again.
    #[inline]
    pub(crate) fn poll_until(&mut self, cx: &mut Context<'_>, deadline: Instant) -> Poll<()> {
        self.arm(deadline);
        if self.registered == Some(self.sleep.deadline()) && !self.sleep.is_elapsed() {
            return Poll::Pending;
        }
        // tokio's coop budget can make a poll return early without registering the waker.
        let budget = tokio::task::coop::has_budget_remaining();
        while self.sleep.as_mut().poll(cx).is_ready() {
            if Instant::now() >= deadline {
                self.registered = None;
                return Poll::Ready(());
            }
            self.sleep.as_mut().reset(deadline);
        }
        self.registered = budget.then(|| self.sleep.deadline());
        Poll::Pending
    }
}
