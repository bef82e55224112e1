//! What a load thread's connection tasks share, HTTP and WebSocket alike: the plan, the
//! figures, the count budget, and the pacing constants.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;

use peregrine::client::conn::{Config, Connection};
use tokio::time::Instant;

use super::args::Plan;
use super::stats::{ErrorKind, Live, Stats, micros};

/// How late a timer may wake without the delay being charged to the server (tokio's timer
/// has a 1 ms granularity).
pub(super) const TIMER_SLACK: Duration = Duration::from_millis(2);

/// Pause after a failed connect before the next attempt.
pub(super) const RECONNECT_PAUSE: Duration = Duration::from_millis(10);

/// What every thread shares.
pub struct Shared {
    pub plan: Plan,
    pub config: Config,
}

/// The state a thread's connection tasks share (one thread: `Rc`, `Cell`, `RefCell`).
pub(super) struct Thread {
    pub(super) shared: Arc<Shared>,
    pub(super) stats: RefCell<Stats>,
    pub(super) live: Arc<Live>,
    budget: Cell<Option<u64>>,
}

impl Thread {
    /// A thread's state, with `budget` requests to send in count mode.
    pub(super) fn new(shared: Arc<Shared>, live: Arc<Live>, budget: Option<u64>) -> Thread {
        Thread { shared, stats: RefCell::new(Stats::new()), live, budget: Cell::new(budget) }
    }

    /// Takes one request from the count budget; false when it is spent.
    pub(super) fn take(&self) -> bool {
        match self.budget.get() {
            None => true,
            Some(0) => false,
            Some(n) => {
                self.budget.set(Some(n - 1));
                true
            }
        }
    }

    pub(super) fn spent(&self) -> bool {
        self.budget.get() == Some(0)
    }

    pub(super) fn error(&self, kind: ErrorKind, n: u64) {
        self.stats.borrow_mut().error(kind, n);
        Live::bump(&self.live.errors, n);
    }

    pub(super) async fn connect(&self) -> Option<Connection> {
        let started = Instant::now();
        match Connection::connect(&self.shared.plan.url, &self.shared.config).await {
            Ok(conn) => {
                let mut stats = self.stats.borrow_mut();
                let _ = stats.connect.record(micros(started.elapsed()));
                stats.connects += 1;
                Some(conn)
            }
            Err(e) => {
                self.error(ErrorKind::of(&e), 1);
                None
            }
        }
    }
}
