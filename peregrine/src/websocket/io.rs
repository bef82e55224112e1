//! What a [`WebSocket`](super::WebSocket) runs over: the connection's own transport after an
//! HTTP/1.1 `101`, or an HTTP/2 stream's bodies after an extended CONNECT (RFC 8441), and how
//! a driver hands either over.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use bytes::BytesMut;

use crate::body::{Body, BodySender};
use crate::net::{Transport, WriteStall};

/// A future that completes when the server begins to drain: the session then says goodbye
/// (1001, RFC 6455 §7.4.1).
pub(crate) type Drain = Pin<Box<dyn Future<Output = ()> + Send>>;

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
        /// Written so far of the output buffer.
        wpos: usize,
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
