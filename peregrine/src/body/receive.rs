//! The receiving side of a body read from a connection: a small trait each driver implements
//! (the HTTP/1.1 server for request bodies; the HTTP/2 server and the client next), so
//! [`Body`](super::Body) knows no driver.
//!
//! A driver owns the connection and pumps it: a body only asks. `poll_chunk` hands out what the
//! driver has delivered, or records that the reader wants more and returns `Pending`; the
//! driver notices (it polls the handler itself, or is woken), reads the socket, delivers, and
//! wakes the reader. Every socket read and write stays in the driver.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::HeaderMap;

use super::BodyError;

/// A source of received bodies, shared by a driver and the bodies it hands out.
///
/// One source serves many bodies over its life (the requests of a connection, the streams of
/// an HTTP/2 connection); `id` says which one a call is about. A call about a body the driver
/// has moved past (its request was answered) gets an error or nothing, never another body's
/// bytes.
pub(crate) trait Receive: Send + Sync {
    /// The next chunk of body `id`: `Ready(None)` at its end.
    fn poll_chunk(&self, id: u32, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>>;

    /// Bytes of body `id` still to come, when known; `Some(0)` for a body the driver has moved
    /// past.
    fn size_hint(&self, id: u32) -> Option<u64>;

    /// The trailer fields of body `id`, once it has been read to its end; taken once.
    fn take_trailers(&self, id: u32) -> Option<HeaderMap>;

    /// The handle on body `id` was dropped: the driver may stop delivering it (an HTTP/2
    /// stream is reset, an HTTP/1.1 body drained).
    fn dropped(&self, id: u32) {
        let _ = id;
    }
}

/// A body being received: its source and its number there.
pub(crate) struct Incoming {
    source: Arc<dyn Receive>,
    id: u32,
}

impl Incoming {
    pub(crate) fn new(source: Arc<dyn Receive>, id: u32) -> Incoming {
        Incoming { source, id }
    }

    pub(crate) fn poll_chunk(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, BodyError>>> {
        self.source.poll_chunk(self.id, cx)
    }

    pub(crate) fn size_hint(&self) -> Option<u64> {
        self.source.size_hint(self.id)
    }

    pub(crate) fn take_trailers(&mut self) -> Option<HeaderMap> {
        self.source.take_trailers(self.id)
    }
}

impl Drop for Incoming {
    fn drop(&mut self) {
        self.source.dropped(self.id);
    }
}

impl fmt::Debug for Incoming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Incoming").field("id", &self.id).finish_non_exhaustive()
    }
}
