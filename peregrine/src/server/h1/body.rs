//! Request bodies on HTTP/1.1: the connection reads and decodes them (the wire state's body
//! events), the handler's [`Body`](crate::Body) asks ([`Receive`]).
//!
//! One [`RequestBody`] per connection, made at its first request with a body and reused for
//! the next ones (each request's body gets a new id; a handle with an old id gets an error).
//! The connection polls the handler itself, so when the handler waits for body bytes the
//! connection sees [`RequestBody::wants`] right after the poll and reads for it: no wake-up, no
//! second task. A body read from another task (the handler spawned one) wakes the connection
//! instead. The state sits behind a mutex because a `Body` is `Send`; on a worker only its own
//! thread takes it, so the lock is never contended.

use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http::HeaderMap;

use crate::body::{BodyError, BodyErrorKind, Receive};
use crate::http1::body_decoder::BodyDecodeError;

/// The request-body source of one connection.
#[derive(Debug)]
pub(crate) struct RequestBody {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The body being received; a handle with another id is stale.
    id: u32,
    /// A chunk delivered and not taken yet.
    chunk: Option<Bytes>,
    /// The body ended on the wire.
    done: bool,
    /// Its trailer fields, until taken.
    trailers: Option<HeaderMap>,
    /// The body failed: its framing is lost, the connection closes after the response.
    error: Option<BodyErrorKind>,
    /// The reader asked for more and found nothing: the connection reads on its behalf.
    wants: bool,
    /// The reader's waker, when it may wait in another task than the connection's.
    reader: Option<Waker>,
    /// The connection's waker while it waits for the handler.
    driver: Option<Waker>,
    /// Data bytes still to come off the wire, when known.
    remaining: Option<u64>,
}

impl RequestBody {
    pub(crate) fn new() -> Arc<RequestBody> {
        Arc::new(RequestBody { state: Mutex::new(State::default()) })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held (a handler's, caught by the connection) leaves the
        // state consistent: every update below is a plain assignment.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts the body of a new request, `remaining` data bytes long when known; returns its
    /// id.
    pub(crate) fn start(&self, remaining: Option<u64>) -> u32 {
        let mut st = self.lock();
        let id = st.id.wrapping_add(1);
        let driver = st.driver.take();
        *st = State { id, remaining, driver, ..State::default() };
        id
    }

    /// The handler is done with the body: a handle it kept gets an error from now on.
    pub(crate) fn detach(&self) {
        let mut st = self.lock();
        st.id = st.id.wrapping_add(1);
        st.chunk = None;
        st.trailers = None;
        st.wants = false;
        st.reader = None;
        st.driver = None;
    }

    /// Whether the reader waits for bytes the connection must read.
    #[inline]
    pub(crate) fn wants(&self) -> bool {
        let st = self.lock();
        st.wants && st.chunk.is_none() && st.error.is_none() && !st.done
    }

    /// Registers the connection's waker, for a reader in another task to wake it.
    pub(crate) fn watch(&self, waker: &Waker) {
        let mut st = self.lock();
        match &st.driver {
            Some(w) if w.will_wake(waker) => {}
            _ => st.driver = Some(waker.clone()),
        }
    }

    /// Fails the body (a socket error, the connection closing, the data rate, bad framing):
    /// the reader gets the error.
    pub(crate) fn fail(&self, kind: BodyErrorKind) {
        let mut st = self.lock();
        st.error = Some(kind);
        wake_reader(&mut st);
    }

    /// Hands the reader a chunk; `remaining`: data bytes still to come, when known.
    pub(crate) fn deliver(&self, chunk: Bytes, remaining: Option<u64>) {
        let mut st = self.lock();
        st.chunk = Some(chunk);
        st.remaining = remaining;
        wake_reader(&mut st);
    }

    /// The body ended, with its trailer fields if it had some.
    pub(crate) fn end(&self, trailers: Option<HeaderMap>) {
        let mut st = self.lock();
        st.done = true;
        st.trailers = trailers;
        st.remaining = Some(0);
        wake_reader(&mut st);
    }
}

/// Wakes a reader that waits in another task (the connection polls its own handler anyway).
fn wake_reader(st: &mut State) {
    st.wants = false;
    if let Some(reader) = st.reader.take() {
        if !st.driver.as_ref().is_some_and(|d| d.will_wake(&reader)) {
            reader.wake();
        }
    }
}

/// What a body that failed to decode reads as.
pub(super) fn error_kind(e: BodyDecodeError) -> BodyErrorKind {
    match e {
        BodyDecodeError::TooLarge => BodyErrorKind::TooLarge,
        BodyDecodeError::Incomplete => BodyErrorKind::Incomplete,
        // The chunked coding's own limits (extensions, trailers) read as "too large" (413,
        // 431), its grammar errors as invalid (400).
        BodyDecodeError::Chunked(e) => match e.status() {
            413 | 431 => BodyErrorKind::TooLarge,
            _ => BodyErrorKind::Invalid,
        },
    }
}

impl Receive for RequestBody {
    fn poll_chunk(&self, id: u32, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>> {
        let mut st = self.lock();
        if st.id != id {
            return Poll::Ready(Some(Err(BodyError::new(BodyErrorKind::Detached))));
        }
        if let Some(chunk) = st.chunk.take() {
            return Poll::Ready(Some(Ok(chunk)));
        }
        if let Some(kind) = st.error {
            return Poll::Ready(Some(Err(BodyError::new(kind))));
        }
        if st.done {
            return Poll::Ready(None);
        }
        st.wants = true;
        let is_driver = st.driver.as_ref().is_some_and(|d| d.will_wake(cx.waker()));
        if !is_driver {
            // Read from another task: keep its waker, and wake the connection to read.
            match &st.reader {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => st.reader = Some(cx.waker().clone()),
            }
            if let Some(driver) = &st.driver {
                driver.wake_by_ref();
            }
        }
        Poll::Pending
    }

    fn size_hint(&self, id: u32) -> Option<u64> {
        let st = self.lock();
        if st.id != id {
            return Some(0);
        }
        let buffered = st.chunk.as_ref().map_or(0, |c| c.len() as u64);
        st.remaining.map(|n| n + buffered)
    }

    fn take_trailers(&self, id: u32) -> Option<HeaderMap> {
        let mut st = self.lock();
        if st.id != id || st.chunk.is_some() {
            return None;
        }
        st.trailers.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Waker;

    fn poll(body: &RequestBody, id: u32) -> Poll<Option<Result<Bytes, BodyError>>> {
        body.poll_chunk(id, &mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn chunks_then_the_end_then_trailers() {
        let body = RequestBody::new();
        let id = body.start(None);
        assert!(poll(&body, id).is_pending());
        assert!(body.wants());
        body.deliver(Bytes::from_static(b"abc"), None);
        assert!(!body.wants());
        assert_eq!(body.size_hint(id), None);
        match poll(&body, id) {
            Poll::Ready(Some(Ok(chunk))) => assert_eq!(chunk, "abc"),
            other => panic!("{other:?}"),
        }
        let mut trailers = HeaderMap::new();
        trailers.insert("x", http::HeaderValue::from_static("1"));
        body.end(Some(trailers));
        assert!(matches!(poll(&body, id), Poll::Ready(None)));
        assert_eq!(body.take_trailers(id).map(|t| t.len()), Some(1));
        assert_eq!(body.take_trailers(id), None);
    }

    #[test]
    fn a_detached_handle_gets_an_error() {
        let body = RequestBody::new();
        let id = body.start(Some(4));
        assert_eq!(body.size_hint(id), Some(4));
        body.detach();
        match poll(&body, id) {
            Poll::Ready(Some(Err(e))) => assert!(!e.is_too_large()),
            other => panic!("{other:?}"),
        }
        assert_eq!(body.size_hint(id), Some(0));
        let next = body.start(None);
        assert_ne!(next, id);
        assert!(poll(&body, next).is_pending());
    }

    #[test]
    fn a_failure_is_delivered_as_an_error() {
        let body = RequestBody::new();
        let id = body.start(None);
        body.fail(error_kind(BodyDecodeError::Chunked(
            crate::http1::chunked::ChunkedError::MissingCrlfAfterData,
        )));
        match poll(&body, id) {
            Poll::Ready(Some(Err(e))) => assert!(e.is_invalid()),
            other => panic!("{other:?}"),
        }
    }
}
