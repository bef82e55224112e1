//! What a [`WebSocket`](super::WebSocket) runs over: the connection's own transport after an
//! HTTP/1.1 `101`, or an HTTP/2 stream's bodies after an extended CONNECT (RFC 8441), and how
//! a driver hands either over.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::BytesMut;

use crate::body::{Body, BodySender};
use crate::net::{Transport, WriteStall};

/// The server's drain as a session sees it: ready when the drain begins, the session then says
/// goodbye (1001, RFC 6455 §7.4.1).
///
/// Polling the wait itself (a `Notify` registration) costs ~240 instructions, and a session
/// waits once per message; so it is polled when the task's waker changes (the first wait, a
/// session moved to another task) and otherwise only once the flag says the drain began.
pub(crate) struct Drain {
    wait: Pin<Box<dyn Future<Output = ()> + Send>>,
    begun: Box<dyn Fn() -> bool + Send>,
    /// The waker `wait` is registered with.
    waker: Option<Waker>,
}

impl Drain {
    /// `wait` completes when the drain begins; `begun` says whether it has (a load).
    pub(crate) fn new(
        wait: Pin<Box<dyn Future<Output = ()> + Send>>,
        begun: impl Fn() -> bool + Send + 'static,
    ) -> Drain {
        Drain { wait, begun: Box::new(begun), waker: None }
    }

    /// `Ready` once the drain has begun; otherwise the task is woken when it does.
    #[inline]
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let registered = self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
        if registered && !(self.begun)() {
            return Poll::Pending;
        }
        // tokio's coop budget may make a poll return early without registering the waker.
        let budget = tokio::task::coop::has_budget_remaining();
        match self.wait.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(()),
            Poll::Pending => {
                self.waker = budget.then(|| cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// A worker's pool of read buffers, lent to the sessions it runs: an idle WebSocket gives its
/// (empty) read buffer back while it waits, so thousands of idle ones hold none
/// (`server::buffers`, the HTTP/1.1 connections' pool).
pub(crate) trait BufferPool {
    /// Lets one more session keep its buffer while idle (a few per worker do, sparing them
    /// the hand-back per message); false when that many already do.
    fn hold(&self) -> bool;
    /// Ends a [`BufferPool::hold`].
    fn unhold(&self);
    /// An empty buffer.
    fn take(&self) -> BytesMut;
    /// Returns an empty buffer (dropped when still shared or too large).
    fn put(&self, buf: BytesMut);
}

/// What a driver gives the session after the upgrade.
pub(crate) struct Handoff {
    /// HTTP/1.1: the transport, and the bytes read past the request's head (the start of the
    /// WebSocket stream). `None` over HTTP/2, where the session's streams were made with the
    /// response.
    pub(crate) connection: Option<(Transport, BytesMut)>,
    /// The server's drain, if the session should see it.
    pub(crate) drain: Option<Drain>,
    /// How long a write may stall before the connection is given up.
    pub(crate) write_timeout: Duration,
    /// The worker's buffer pool (HTTP/1.1), for the session's read buffer while idle.
    pub(crate) buffers: Option<Rc<dyn BufferPool>>,
}

/// A session's future, run by the driver (on the connection's task over HTTP/1.1, as a task
/// of the worker over HTTP/2).
pub(crate) type Session = Pin<Box<dyn Future<Output = ()>>>;

/// What the server calls with the [`Handoff`] once the response that accepted the upgrade is
/// written. In a mutex only so that a [`Response`](crate::Response) stays `Sync`: it is taken
/// once, by the driver that wrote the response.
pub(crate) struct OnUpgrade(Mutex<Option<StartSession>>);

/// The function that starts a session.
type StartSession = Box<dyn FnOnce(Handoff) -> Session + Send>;

impl OnUpgrade {
    pub(crate) fn new(f: impl FnOnce(Handoff) -> Session + Send + 'static) -> OnUpgrade {
        OnUpgrade(Mutex::new(Some(Box::new(f))))
    }

    /// Starts the session with `handoff`.
    pub(crate) fn start(self, handoff: Handoff) -> Session {
        let f = self.0.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        match f {
            Some(f) => f(handoff),
            None => Box::pin(async {}),
        }
    }
}

impl std::fmt::Debug for OnUpgrade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnUpgrade")
    }
}

/// The bytes' way in and out.
pub(crate) enum Io {
    /// A whole connection: every read and write through the transport.
    Stream {
        transport: Transport,
        stall: WriteStall,
        /// Keep the socket's read readiness after a short read (a client on a multi-threaded
        /// runtime; see `Transport::try_read_buf_keep_ready`).
        keep_ready: bool,
        /// Our side is shut (after the closing handshake).
        shut: bool,
    },
    /// An HTTP/2 stream: DATA in through `incoming`, out through `outgoing` (dropped to end the
    /// stream).
    Http2 { incoming: Body, outgoing: Option<BodySender> },
}
