//! A response body streamed from an upstream connection to the client: the server's writer
//! polls it, which reads the upstream connection, so the upstream is read no faster than the
//! client takes the bytes (backpressure both ways: a request body is read from the client only
//! as the upstream takes it, in `forward`). At its end the connection goes back to the
//! worker's idle list.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::HeaderMap;

use super::local::{Leased, Local};
use super::upstream::Pool;
use crate::body::{BodyError, BodyErrorKind, Receive};
use crate::client::conn::{Event, RequestId};

/// Room kept in a stream's chunk buffer: chunks are copied out of the connection's read
/// buffer into it and split off, so a body streams without an allocation per chunk once the
/// previous chunks were written.
const CHUNK_ROOM: usize = 16 * 1024;

/// A response body still arriving from an upstream.
pub(crate) struct Stream {
    state: Mutex<State>,
    local: Arc<Local>,
    pool: Arc<Pool>,
}

struct State {
    /// The connection, until the body ends (then back to the idle list) or fails.
    leased: Option<Leased>,
    id: RequestId,
    /// Bytes read with the head, handed out first.
    first: Bytes,
    chunks: BytesMut,
    /// Bytes still to come when the length is known.
    remaining: Option<u64>,
    trailers: Option<HeaderMap>,
    error: Option<BodyErrorKind>,
    /// The server's in-flight count is released once.
    counted: bool,
}

impl Stream {
    pub(crate) fn new(
        leased: Leased,
        id: RequestId,
        first: Bytes,
        remaining: Option<u64>,
        local: Arc<Local>,
        pool: Arc<Pool>,
    ) -> Stream {
        let remaining = remaining.map(|r| r.saturating_sub(first.len() as u64));
        let state = State {
            leased: Some(leased),
            id,
            first,
            chunks: BytesMut::new(),
            remaining,
            trailers: None,
            error: None,
            counted: true,
        };
        Stream { state: Mutex::new(state), local, pool }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The request is over for the server's in-flight count.
    fn release(&self, st: &mut State) {
        if std::mem::take(&mut st.counted) {
            if let Some(l) = &st.leased {
                self.pool.servers[l.server].in_flight.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    fn fail(&self, st: &mut State, kind: BodyErrorKind, why: &crate::client::Error) -> BodyError {
        if let Some(l) = &st.leased {
            let server = &self.pool.servers[l.server];
            tracing::warn!(upstream = %server.name, "the upstream response body failed: {why}");
            self.pool.failed(l.server);
        }
        self.release(st);
        st.leased = None;
        st.error = Some(kind);
        BodyError::new(kind)
    }
}

impl Receive for Stream {
    fn poll_chunk(&self, _id: u32, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if !st.first.is_empty() {
            return Poll::Ready(Some(Ok(std::mem::take(&mut st.first))));
        }
        if let Some(kind) = st.error {
            return Poll::Ready(Some(Err(BodyError::new(kind))));
        }
        loop {
            let Some(leased) = st.leased.as_mut() else { return Poll::Ready(None) };
            match leased.conn.poll_event(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(Event::Data { data, .. })) => {
                    if st.chunks.capacity() - st.chunks.len() < data.len() {
                        st.chunks.reserve(data.len().max(CHUNK_ROOM));
                    }
                    st.chunks.extend_from_slice(data);
                    if let Some(r) = &mut st.remaining {
                        *r = r.saturating_sub(data.len() as u64);
                    }
                    return Poll::Ready(Some(Ok(st.chunks.split().freeze())));
                }
                Poll::Ready(Ok(Event::End { id, trailers })) if id == st.id => {
                    st.trailers = trailers;
                    st.remaining = Some(0);
                    self.release(st);
                    if let Some(leased) = st.leased.take() {
                        let pool = &self.pool;
                        pool.succeeded(leased.server);
                        self.local.checkin(leased, pool.max_idle, pool.timeouts.pool_idle);
                    }
                    return Poll::Ready(None);
                }
                Poll::Ready(Ok(Event::Failed { error, .. })) | Poll::Ready(Err(error)) => {
                    let kind = crate::client::response::body_error(&error).kind();
                    return Poll::Ready(Some(Err(self.fail(st, kind, &error))));
                }
                Poll::Ready(Ok(_)) => {}
            }
        }
    }

    fn size_hint(&self, _id: u32) -> Option<u64> {
        let st = self.lock();
        st.remaining.map(|r| r + st.first.len() as u64)
    }

    fn take_trailers(&self, _id: u32) -> Option<HeaderMap> {
        self.lock().trailers.take()
    }

    fn dropped(&self, _id: u32) {
        // The client went away before the end: the connection cannot be reused (its response
        // is unread), and the request is over.
        let mut st = self.lock();
        self.release(&mut st);
        st.leased = None;
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let mut st = self.lock();
        let st = &mut *st;
        self.release(st);
    }
}
