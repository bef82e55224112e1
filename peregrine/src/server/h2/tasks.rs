//! The streams an HTTP/2 connection serves, as tasks: per stream, the handler's future and the
//! response being sent; and the ready queue that says which handlers to poll.
//!
//! Each task has a waker of its own (made once per task index, reused by every stream the task
//! serves), so a wake-up polls only the handler that asked, not all of them, and a steady
//! stream of requests allocates nothing for wakers.

use std::sync::{Arc, Mutex};
use std::task::{Wake, Waker};
use tokio::time::Instant;

use bytes::Bytes;

use crate::body::Body;
use crate::http2::StreamId;
use crate::server::access_log::LogState;
use crate::server::service::HandlerBox;

/// Which tasks have a handler or a response body to poll, and the connection's waker.
#[derive(Debug, Default)]
pub(super) struct ReadyQueue {
    inner: Mutex<Ready>,
}

#[derive(Debug, Default)]
struct Ready {
    queue: Vec<u16>,
    queued: Vec<bool>,
    conn: Option<Waker>,
}

impl ReadyQueue {
    /// Registers the connection task's waker.
    pub(super) fn watch(&self, waker: &Waker) {
        let mut r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        match &r.conn {
            Some(w) if w.will_wake(waker) => {}
            _ => r.conn = Some(waker.clone()),
        }
    }

    /// Queues task `index` to be polled (once, however often it is woken).
    pub(super) fn push(&self, index: u16) {
        let mut r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let i = usize::from(index);
        if r.queued.len() <= i {
            r.queued.resize(i + 1, false);
        }
        if !r.queued[i] {
            r.queued[i] = true;
            r.queue.push(index);
        }
    }

    /// Moves the queued task indices into `out` (emptied first), clearing their marks.
    pub(super) fn take(&self, out: &mut Vec<u16>) {
        out.clear();
        let mut r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let Ready { queue, queued, .. } = &mut *r;
        for &i in queue.iter() {
            if let Some(q) = queued.get_mut(usize::from(i)) {
                *q = false;
            }
        }
        std::mem::swap(queue, out);
    }

    fn wake(&self, index: u16) {
        self.push(index);
        let r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(conn) = &r.conn {
            conn.wake_by_ref();
        }
    }
}

/// The waker of one task: wakes the connection with that task queued.
struct TaskWaker {
    ready: Arc<ReadyQueue>,
    index: u16,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.ready.wake(self.index);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.ready.wake(self.index);
    }
}

/// What is left to send of a response.
#[derive(Debug)]
pub(super) enum Out {
    /// Nothing yet (the handler runs) or nothing more.
    None,
    /// The rest of a complete body.
    Bytes(Bytes),
    /// A streamed body, the part of its last chunk the windows did not take yet, and the
    /// bytes its declared length still promises.
    Body(Body, Bytes, Option<u64>),
}

/// One stream being served.
pub(super) struct Task<F> {
    /// The stream; meaningful while `live`.
    pub(super) stream: StreamId,
    pub(super) live: bool,
    /// The handler, until it returns the response.
    pub(super) handler: Option<HandlerBox<F>>,
    /// The request body's entry in `Bodies` is open.
    pub(super) body_open: bool,
    /// The request asked `Expect: 100-continue` and the 100 is not sent yet.
    pub(super) cont: bool,
    /// A HEAD request: the response goes without content.
    pub(super) head: bool,
    pub(super) out: Out,
    /// Since when the response waits for flow-control window with nothing sent.
    pub(super) stalled_since: Option<Instant>,
    /// The response is complete and the unread request body is being drained: since when,
    /// and how many octets so far.
    pub(super) drain: Option<(Instant, u64)>,
    /// The response's status, once its head is sent.
    pub(super) status: u16,
    /// Content bytes sent.
    pub(super) sent: u64,
    /// The access log's record, when logging is on.
    pub(super) log: Option<Box<LogState>>,
    pub(super) waker: Waker,
}

/// The tasks of one connection, by index (reused once a stream ends).
pub(super) struct Tasks<F> {
    pub(super) list: Vec<Task<F>>,
    free: Vec<u16>,
    live: usize,
}

impl<F> Tasks<F> {
    pub(super) fn new() -> Tasks<F> {
        Tasks { list: Vec::new(), free: Vec::new(), live: 0 }
    }

    /// A task for `stream`; its index.
    pub(super) fn open(&mut self, stream: StreamId, ready: &Arc<ReadyQueue>) -> u16 {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                let index = self.list.len() as u16;
                let waker = Waker::from(Arc::new(TaskWaker { ready: ready.clone(), index }));
                self.list.push(Task {
                    stream,
                    live: false,
                    handler: None,
                    body_open: false,
                    cont: false,
                    head: false,
                    out: Out::None,
                    stalled_since: None,
                    drain: None,
                    status: 0,
                    sent: 0,
                    log: None,
                    waker,
                });
                index
            }
        };
        let t = &mut self.list[usize::from(index)];
        t.stream = stream;
        t.live = true;
        t.body_open = false;
        t.cont = false;
        t.head = false;
        t.out = Out::None;
        t.stalled_since = None;
        t.drain = None;
        self.live += 1;
        index
    }

    /// Frees task `index` (its handler, if still there, is handed back by the caller first).
    pub(super) fn close(&mut self, index: u16) {
        let Some(t) = self.list.get_mut(usize::from(index)) else { return };
        if !t.live {
            return;
        }
        t.live = false;
        t.out = Out::None;
        self.free.push(index);
        self.live -= 1;
    }

    /// The task serving `stream`.
    pub(super) fn find(&self, stream: StreamId) -> Option<u16> {
        self.list.iter().position(|t| t.live && t.stream == stream).map(|i| i as u16)
    }

    /// Streams being served.
    pub(super) fn live(&self) -> usize {
        self.live
    }
}
