//! Request bodies on HTTP/2: the connection delivers each stream's DATA (zero-copy slices of
//! its read buffer), the handler's [`Body`](crate::Body) takes them ([`Receive`]), and what it
//! takes is released to the peer's flow-control windows (RFC 9113 §6.9) — so a handler that
//! reads slowly slows the client down instead of making the server buffer.
//!
//! One [`Bodies`] per connection, with a [`StreamBody`] per stream task; a body's id is its task's
//! index and the body's generation, so a handle kept after its stream ended reads an error, never
//! another stream's bytes. The state sits behind a mutex because a `Body` is `Send`; only the
//! worker's own thread takes it, so the lock is never contended.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http::HeaderMap;

use crate::body::{BodyError, BodyErrorKind, Receive};

/// Task index bits of a body id; the rest is the body's generation.
const INDEX_BITS: u32 = 12;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;

/// The request bodies of one connection.
#[derive(Debug, Default)]
pub(crate) struct Bodies {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    bodies: Vec<StreamBody>,
    /// Octets readers took, per task index, not yet released to the peer (the driver releases
    /// them).
    taken: Vec<(u16, u32)>,
    /// The connection's waker, for readers in other tasks.
    driver: Option<Waker>,
}

/// The request body of the stream a task serves, as the connection delivers it.
#[derive(Debug, Default)]
struct StreamBody {
    generation: u32,
    /// The stream's body is being received (or waits in `queue`).
    open: bool,
    queue: VecDeque<Bytes>,
    /// The peer ended the body (END_STREAM).
    ended: bool,
    error: Option<BodyErrorKind>,
    trailers: Option<HeaderMap>,
    /// Octets still to come by the request's content-length.
    remaining: Option<u64>,
    /// The reader asked and found nothing.
    wants: bool,
    reader: Option<Waker>,
    /// The handle was dropped: whatever arrives is released at once.
    dropped: bool,
}

impl Bodies {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update below is a plain assignment: a panic while locked leaves it usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens the body of the stream of task `index`; returns its id.
    pub(crate) fn open(&self, index: usize, content_length: Option<u64>) -> u32 {
        let mut st = self.lock();
        if st.bodies.len() <= index {
            st.bodies.resize_with(index + 1, StreamBody::default);
        }
        let body = &mut st.bodies[index];
        body.generation = body.generation.wrapping_add(1) & (u32::MAX >> INDEX_BITS);
        body.open = true;
        body.queue.clear();
        body.ended = false;
        body.error = None;
        body.trailers = None;
        body.remaining = content_length;
        body.wants = false;
        body.reader = None;
        body.dropped = false;
        (body.generation << INDEX_BITS) | index as u32
    }

    /// Registers the connection's waker, for readers in other tasks to wake it.
    pub(crate) fn watch(&self, waker: &Waker) {
        let mut st = self.lock();
        match &st.driver {
            Some(w) if w.will_wake(waker) => {}
            _ => st.driver = Some(waker.clone()),
        }
    }

    /// Body octets for task `index`; false when nobody will read them (the handle was
    /// dropped, or the body already closed): the caller releases them to the peer at once.
    pub(crate) fn push(&self, index: usize, data: Bytes) -> bool {
        let mut st = self.lock();
        let Some(body) = st.bodies.get_mut(index) else { return false };
        if !body.open || body.dropped {
            return false;
        }
        if let Some(left) = &mut body.remaining {
            *left = left.saturating_sub(data.len() as u64);
        }
        body.queue.push_back(data);
        wake(body);
        true
    }

    /// The peer ended the body, with its trailer fields if it sent any.
    pub(crate) fn end(&self, index: usize, trailers: Option<HeaderMap>) {
        let mut st = self.lock();
        if let Some(body) = st.bodies.get_mut(index).filter(|s| s.open) {
            body.ended = true;
            body.remaining = Some(0);
            body.trailers = trailers;
            wake(body);
        }
    }

    /// The body failed (the stream was reset, the connection ended).
    pub(crate) fn fail(&self, index: usize, kind: BodyErrorKind) {
        let mut st = self.lock();
        if let Some(body) = st.bodies.get_mut(index).filter(|s| s.open && !s.ended) {
            body.error = Some(kind);
            wake(body);
        }
    }

    /// The stream is done: a handle still held reads an error from now on. Returns the octets
    /// it had not taken (to release) and whether the peer had ended the body.
    pub(crate) fn close(&self, index: usize) -> (u32, bool) {
        let mut st = self.lock();
        let Some(body) = st.bodies.get_mut(index) else { return (0, true) };
        body.open = false;
        body.generation = body.generation.wrapping_add(1) & (u32::MAX >> INDEX_BITS);
        let unread: usize = body.queue.drain(..).map(|b| b.len()).sum();
        body.reader = None;
        body.trailers = None;
        (unread as u32, body.ended || body.error.is_some())
    }

    /// Whether the reader of task `index` waits for bytes (for `100 Continue`).
    pub(crate) fn wants(&self, index: usize) -> bool {
        self.lock().bodies.get(index).is_some_and(|s| s.open && s.wants && s.queue.is_empty())
    }

    /// Takes the octets readers consumed since the last call: (task index, octets).
    pub(crate) fn take_released(&self, out: &mut Vec<(u16, u32)>) {
        let mut st = self.lock();
        out.append(&mut st.taken);
    }

    fn body_of(st: &mut State, id: u32) -> Option<&mut StreamBody> {
        let index = (id & INDEX_MASK) as usize;
        st.bodies.get_mut(index).filter(|s| s.open && s.generation == id >> INDEX_BITS)
    }
}

/// Wakes a reader waiting in another task (the connection polls its own handlers anyway).
fn wake(body: &mut StreamBody) {
    body.wants = false;
    if let Some(reader) = body.reader.take() {
        reader.wake();
    }
}

impl Receive for Bodies {
    fn poll_chunk(&self, id: u32, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>> {
        let mut guard = self.lock();
        let State { bodies, taken, driver } = &mut *guard;
        let index = (id & INDEX_MASK) as u16;
        let Some(body) = bodies
            .get_mut(usize::from(index))
            .filter(|s| s.open && s.generation == id >> INDEX_BITS)
        else {
            return Poll::Ready(Some(Err(BodyError::new(BodyErrorKind::Detached))));
        };
        if let Some(chunk) = body.queue.pop_front() {
            let n = chunk.len() as u32;
            match taken.last_mut() {
                Some((i, total)) if *i == index => *total += n,
                _ => taken.push((index, n)),
            }
            return Poll::Ready(Some(Ok(chunk)));
        }
        if let Some(kind) = body.error {
            return Poll::Ready(Some(Err(BodyError::new(kind))));
        }
        if body.ended {
            return Poll::Ready(None);
        }
        body.wants = true;
        let is_driver = driver.as_ref().is_some_and(|d| d.will_wake(cx.waker()));
        if !is_driver {
            match &body.reader {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => body.reader = Some(cx.waker().clone()),
            }
            // The connection may owe `100 Continue` now that the body is wanted.
            if let Some(driver) = driver {
                driver.wake_by_ref();
            }
        }
        Poll::Pending
    }

    fn size_hint(&self, id: u32) -> Option<u64> {
        let mut st = self.lock();
        let body = Bodies::body_of(&mut st, id)?;
        let queued: u64 = body.queue.iter().map(|b| b.len() as u64).sum();
        body.remaining.map(|n| n + queued)
    }

    fn take_trailers(&self, id: u32) -> Option<HeaderMap> {
        let mut st = self.lock();
        let body = Bodies::body_of(&mut st, id)?;
        if !body.ended || !body.queue.is_empty() {
            return None;
        }
        body.trailers.take()
    }

    fn dropped(&self, id: u32) {
        let mut guard = self.lock();
        let st = &mut *guard;
        let index = (id & INDEX_MASK) as u16;
        let Some(body) = Bodies::body_of(st, id) else { return };
        body.dropped = true;
        body.reader = None;
        // What was queued will never be read: give it back to the peer's windows.
        let unread: usize = body.queue.drain(..).map(|b| b.len()).sum();
        if unread > 0 {
            st.taken.push((index, unread as u32));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll(bodies: &Bodies, id: u32) -> Poll<Option<Result<Bytes, BodyError>>> {
        bodies.poll_chunk(id, &mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn chunks_in_order_then_the_end_and_trailers() {
        let bodies = Bodies::default();
        let id = bodies.open(3, Some(6));
        assert!(poll(&bodies, id).is_pending());
        assert!(bodies.wants(3));
        assert!(bodies.push(3, Bytes::from_static(b"abc")));
        assert!(bodies.push(3, Bytes::from_static(b"def")));
        assert_eq!(bodies.size_hint(id), Some(6));
        let mut trailers = HeaderMap::new();
        trailers.insert("x-sum", "6".parse().unwrap());
        bodies.end(3, Some(trailers));
        assert!(matches!(poll(&bodies, id), Poll::Ready(Some(Ok(c))) if c == "abc"));
        assert!(bodies.take_trailers(id).is_none(), "not before the body is read");
        assert!(matches!(poll(&bodies, id), Poll::Ready(Some(Ok(c))) if c == "def"));
        assert!(matches!(poll(&bodies, id), Poll::Ready(None)));
        assert_eq!(bodies.take_trailers(id).map(|t| t.len()), Some(1));
        let mut released = Vec::new();
        bodies.take_released(&mut released);
        assert_eq!(released, [(3, 6)]);
    }

    #[test]
    fn a_handle_outliving_its_stream_reads_an_error() {
        let bodies = Bodies::default();
        let id = bodies.open(0, None);
        assert!(bodies.push(0, Bytes::from_static(b"xy")));
        assert_eq!(bodies.close(0), (2, false));
        assert!(matches!(poll(&bodies, id), Poll::Ready(Some(Err(_)))));
        // The task's next stream gets a new id; the old handle still reads an error.
        let next = bodies.open(0, None);
        assert_ne!(next, id);
        assert!(matches!(poll(&bodies, id), Poll::Ready(Some(Err(_)))));
        assert!(poll(&bodies, next).is_pending());
    }

    #[test]
    fn a_dropped_handle_releases_what_it_left() {
        let bodies = Bodies::default();
        let id = bodies.open(1, None);
        assert!(bodies.push(1, Bytes::from_static(b"12345")));
        bodies.dropped(id);
        assert!(!bodies.push(1, Bytes::from_static(b"678")), "nobody reads it now");
        let mut released = Vec::new();
        bodies.take_released(&mut released);
        assert_eq!(released, [(1, 5)]);
    }

    #[test]
    fn a_failed_body_reports_its_error() {
        let bodies = Bodies::default();
        let id = bodies.open(2, None);
        bodies.fail(2, BodyErrorKind::Incomplete);
        match poll(&bodies, id) {
            Poll::Ready(Some(Err(e))) => assert!(e.is_incomplete()),
            other => panic!("{other:?}"),
        }
    }
}
