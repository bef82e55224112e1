//! The worker's connections, every one of them polled by one task.
//!
//! A connection on a task of its own pays tokio's scheduling on every wake-up: the reactor
//! wakes the task, the `LocalSet` queues it, its state moves through atomic transitions as it
//! is polled and parked again. Here each connection's future is polled by the worker's one
//! connection task, with a waker of its own that only queues the connection's index: a wake-up
//! is a flag, a push and a poll. The sockets, timers and handler futures register that waker as
//! they would a task's, so timeouts keep their precision and nothing waits on a sweep.
//!
//! Every connection runs here, whatever the listener or the configuration: plain HTTP/1.1 (and
//! the HTTP/2 it may become) inline in its entry, a PROXY-protocol or TLS connection's set-up
//! boxed. A connection whose poll panics (a bug: handlers' panics are caught and answered) is
//! dropped alone, as a task of its own would be.

use std::cell::RefCell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use super::h1;
use crate::handler::Handler;

/// Rounds of the ready queue served in one poll of the task before it lets the worker's other
/// tasks (the accept loops, tasks handlers spawn) and the reactor run.
const ROUNDS: usize = 4;

/// A connection's future. Each lives in its own boxed entry, so the plain one is inline there.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Conn<H: Handler> {
    /// Plain TCP: the HTTP/1.1 connection, inline.
    Plain(h1::Serve<H>),
    /// A set-up first (the PROXY protocol header, the TLS handshake): boxed.
    Boxed(Pin<Box<dyn Future<Output = ()>>>),
}

impl<H: Handler> Conn<H> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self {
            Conn::Plain(serve) => Pin::new(serve).poll(cx),
            Conn::Boxed(fut) => fut.as_mut().poll(cx),
        }
    }
}

/// One entry: the connection and its waker.
struct Entry<H: Handler> {
    conn: Conn<H>,
    wake: Arc<ConnWaker>,
    waker: Waker,
}

/// The worker's connections; see the module docs.
pub(crate) struct Connections<H: Handler> {
    queue: Arc<Queue>,
    state: RefCell<State<H>>,
}

struct State<H: Handler> {
    /// Boxed: a connection's state is allocated once, as a task's would be, and an entry
    /// moves nothing when the table grows.
    entries: Vec<Option<Box<Entry<H>>>>,
    free: Vec<u32>,
    /// The indices taken from the queue, being served.
    ready: Vec<u32>,
}

/// The connections woken since the task last looked, and the task to wake.
///
/// Wakers must be `Send` and `Sync`, hence the lock; it is only ever taken on the worker's
/// thread (the reactor of a current-thread runtime runs there), so it is never contended.
#[derive(Default)]
struct Queue {
    inner: Mutex<Woken>,
}

#[derive(Default)]
struct Woken {
    ready: Vec<u32>,
    task: Option<Waker>,
    /// The task is serving the queue: a push needs no wake-up.
    serving: bool,
}

impl Queue {
    /// The queue, locked. Nothing panics while holding it; were it poisoned, its state (a list
    /// of indices, a waker) would still be whole.
    fn lock(&self) -> MutexGuard<'_, Woken> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, index: u32) {
        let task = {
            let mut woken = self.lock();
            woken.ready.push(index);
            let first = woken.ready.len() == 1 && !woken.serving;
            if first { woken.task.clone() } else { None }
        };
        if let Some(task) = task {
            task.wake();
        }
    }
}

/// A connection's waker: queues its index once until it is polled.
struct ConnWaker {
    index: u32,
    queued: AtomicBool,
    queue: Arc<Queue>,
}

impl Wake for ConnWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.queue.push(self.index);
        }
    }
}

impl<H: Handler> Connections<H> {
    pub(crate) fn new() -> Connections<H> {
        Connections {
            queue: Arc::default(),
            state: RefCell::new(State { entries: Vec::new(), free: Vec::new(), ready: Vec::new() }),
        }
    }

    /// Serves the connections until the worker's runtime is dropped.
    pub(crate) async fn run(self: std::rc::Rc<Self>) {
        std::future::poll_fn(|cx| self.poll(cx)).await;
    }

    /// Takes a connection just accepted: it is polled at once (its request may be there).
    pub(crate) fn insert(&self, conn: Conn<H>) {
        let mut state = self.state.borrow_mut();
        let index = match state.free.pop() {
            Some(index) => index,
            None => {
                let Ok(index) = u32::try_from(state.entries.len()) else {
                    // More connections than a u32 counts: refused by dropping it.
                    return;
                };
                state.entries.push(None);
                index
            }
        };
        let wake = Arc::new(ConnWaker {
            index,
            queued: AtomicBool::new(false),
            queue: self.queue.clone(),
        });
        let waker = Waker::from(wake.clone());
        waker.wake_by_ref();
        state.entries[index as usize] = Some(Box::new(Entry { conn, wake, waker }));
    }

    fn poll(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        for _ in 0..ROUNDS {
            {
                let mut woken = self.queue.lock();
                match &woken.task {
                    Some(task) if task.will_wake(cx.waker()) => {}
                    _ => woken.task = Some(cx.waker().clone()),
                }
                std::mem::swap(&mut woken.ready, &mut state.ready);
                woken.serving = !state.ready.is_empty();
            }
            if state.ready.is_empty() {
                return Poll::Pending;
            }
            for i in 0..state.ready.len() {
                let index = state.ready[i] as usize;
                let Some(entry) = state.entries.get_mut(index).and_then(Option::as_mut) else {
                    continue;
                };
                // Wake-ups during this poll queue it again.
                entry.wake.queued.store(false, Ordering::Release);
                let mut cx = Context::from_waker(&entry.waker);
                let done = match catch_unwind(AssertUnwindSafe(|| entry.conn.poll(&mut cx))) {
                    Ok(Poll::Pending) => false,
                    Ok(Poll::Ready(())) => true,
                    Err(_) => {
                        tracing::error!("peregrine: a connection panicked; it is closed");
                        true
                    }
                };
                if done {
                    // Dropped here: its socket closes, its idle-table entry is released.
                    state.entries[index] = None;
                    state.free.push(index as u32);
                }
            }
            state.ready.clear();
            self.queue.lock().serving = false;
        }
        // Still busy: let the rest of the worker run, then go on.
        if !self.queue.lock().ready.is_empty() {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}
