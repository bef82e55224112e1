//! [`Client`](super::Client) requests over a shared HTTP/2 connection: the connection sits
//! behind a mutex with an exchange per request (what its response has brought so far); a task
//! spawned on the runtime that opened it reads the socket and files each event in its
//! request's exchange, waking whoever waits there. A request encodes itself into the
//! connection under the lock (no channel, no copy of the request), streams its own body, and
//! waits on its exchange for the head; its response body reads from the exchange.
//!
//! Backpressure: body bytes wait in their exchanges up to [`MAX_BUFFERED`] per connection; past
//! that the task stops reading the socket until readers catch up, so a slow reader slows the
//! connection's other streams too (the windows are released as bytes are filed).

use std::collections::VecDeque;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;
use tokio::time::{Instant, Sleep};

use super::conn::{Connection, Event, RequestId};
use super::error::{Error, Kind};
use super::request::{OutBody, Outgoing};
use super::response;
use crate::body::{Body, BodyError, BodyErrorKind, Receive};
use crate::response::Response;

/// Body bytes filed in exchanges beyond which the task stops reading.
pub(crate) const MAX_BUFFERED: usize = 4 * 1024 * 1024;

/// One HTTP/2 connection shared by the client's requests.
pub(crate) struct Shared {
    state: Mutex<State>,
}

struct State {
    conn: Connection,
    exchanges: Vec<Exchange>,
    free: Vec<u16>,
    /// Requests using the connection (an exchange each).
    active: usize,
    task: Option<Waker>,
    closed: Option<Error>,
    buffered: usize,
    throttled: bool,
    /// The connection carries one extended CONNECT stream (a WebSocket's own connection): it
    /// ends when that stream's exchange does.
    tunnel: bool,
}

/// One request's exchange: its response's head, body and trailers as they arrive, and who
/// waits for them.
#[derive(Default)]
struct Exchange {
    generation: u16,
    used: bool,
    id: Option<RequestId>,
    head: Option<Result<Response, Error>>,
    chunks: VecDeque<Bytes>,
    ended: bool,
    trailers: Option<HeaderMap>,
    error: Option<BodyErrorKind>,
    /// The request waiting for its head, or the body reader.
    waker: Option<Waker>,
    /// The request streaming its body, waiting for window.
    writer: Option<Waker>,
    writable: bool,
    /// The head was taken: the response (and its body) own the exchange now.
    delivered: bool,
}

impl Exchange {
    fn wake(&mut self) {
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }
}

impl Shared {
    /// Shares `conn` and spawns the task that drives it.
    pub(crate) fn spawn(conn: Connection, idle_timeout: Duration) -> Arc<Shared> {
        let state = State {
            conn,
            exchanges: Vec::new(),
            free: Vec::new(),
            active: 0,
            task: None,
            closed: None,
            buffered: 0,
            throttled: false,
            tunnel: false,
        };
        let shared = Arc::new(Shared { state: Mutex::new(state) });
        tokio::spawn(drive(shared.clone(), idle_timeout));
        shared
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a new request can go on this connection now.
    pub(crate) fn has_room(&self) -> bool {
        let st = self.lock();
        st.closed.is_none() && st.conn.is_reusable() && st.active < st.conn.max_in_flight()
    }

    /// Whether the connection is over for new requests (closed, GOAWAY).
    pub(crate) fn is_done(&self) -> bool {
        let st = self.lock();
        st.closed.is_some() || !st.conn.is_reusable()
    }

    /// Sends `out` and waits for the response head.
    pub(crate) async fn send(
        self: &Arc<Shared>,
        out: &Outgoing,
        body: OutBody,
    ) -> Result<Response, Error> {
        let fields = out.fields(true);
        let (key, id, stream_body) = {
            let mut st = self.lock();
            if let Some(e) = &st.closed {
                return Err(e.shallow_clone().unprocessed());
            }
            let (id, stream_body) = match body {
                OutBody::Full(bytes) => {
                    (st.conn.send_request(out.method(), out.target(), &fields, &bytes)?, None)
                }
                OutBody::Stream(b) => {
                    let len = b.size_hint();
                    let id =
                        st.conn.send_request_streaming(out.method(), out.target(), &fields, len)?;
                    (id, Some(b))
                }
            };
            let key = st.open(id);
            if let Some(w) = &st.task {
                w.wake_by_ref();
            }
            (key, id, stream_body)
        };
        drop(fields);
        let mut guard = Guard { shared: self, key, armed: true };
        if let Some(body) = stream_body {
            self.upload(key, id, body).await?;
        }
        let mut response = self.head(key).await?;
        guard.armed = false;
        *response.body_mut() = Body::incoming(self.clone(), key);
        Ok(response)
    }

    /// Opens a stream with an extended CONNECT for `protocol` (RFC 8441 §4) and waits for the
    /// response head. On a 2xx the stream is a tunnel both ways: the response's body is the
    /// server's DATA, and `outgoing` is sent as ours, by a task of its own (spawned on the
    /// current runtime), as the windows allow, until it ends (END_STREAM) or the stream fails.
    ///
    /// # Errors
    /// As [`Shared::send`]; [`Error::is_request`] when the server's SETTINGS do not allow
    /// extended CONNECT.
    pub(crate) async fn connect(
        self: &Arc<Shared>,
        protocol: &str,
        target: &str,
        fields: &[(&str, &[u8])],
        outgoing: Body,
    ) -> Result<Response, Error> {
        let (key, id) = {
            let mut st = self.lock();
            if let Some(e) = &st.closed {
                return Err(e.shallow_clone());
            }
            let id = st.conn.send_extended_connect(protocol, target, fields)?;
            let key = st.open(id);
            st.tunnel = true;
            if let Some(w) = &st.task {
                w.wake_by_ref();
            }
            (key, id)
        };
        let mut guard = Guard { shared: self, key, armed: true };
        let mut response = self.head(key).await?;
        guard.armed = false;
        *response.body_mut() = Body::incoming(self.clone(), key);
        if response.status().is_success() {
            let shared = self.clone();
            // A failure ends the task and drops `outgoing`: its sender sees the channel closed.
            tokio::spawn(async move { shared.upload(key, id, outgoing).await });
        }
        Ok(response)
    }

    /// Waits for the response head of exchange `key`.
    async fn head(&self, key: u32) -> Result<Response, Error> {
        poll_fn(|cx| {
            let mut st = self.lock();
            let Some(ex) = st.exchange(key) else {
                return Poll::Ready(Err(Error::new(Kind::Closed, "the request was dropped")));
            };
            match ex.head.take() {
                Some(r) => {
                    ex.delivered = true;
                    Poll::Ready(r)
                }
                None => {
                    ex.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// Streams a request body on stream `id` as the windows allow.
    async fn upload(&self, key: u32, id: RequestId, mut body: Body) -> Result<(), Error> {
        loop {
            let chunk = match body.chunk().await {
                Some(Ok(c)) => c,
                Some(Err(e)) => {
                    return Err(Error::with_source(Kind::Body, "the request body failed", e));
                }
                None => Bytes::new(),
            };
            let end = chunk.is_empty();
            let mut at = 0;
            loop {
                let done = poll_fn(|cx| {
                    let mut st = self.lock();
                    let n = match st.conn.send_data(id, &chunk[at..], end) {
                        Ok(n) => n,
                        Err(e) => return Poll::Ready(Err(e)),
                    };
                    at += n;
                    if let Some(w) = &st.task {
                        w.wake_by_ref();
                    }
                    if at == chunk.len() {
                        return Poll::Ready(Ok(true));
                    }
                    match st.exchange(key) {
                        Some(ex) if ex.writable => {
                            ex.writable = false;
                            Poll::Ready(Ok(false))
                        }
                        Some(ex) => {
                            ex.writer = Some(cx.waker().clone());
                            Poll::Pending
                        }
                        None => Poll::Ready(Err(Error::new(Kind::Closed, "the connection closed"))),
                    }
                })
                .await?;
                if done {
                    break;
                }
            }
            if end {
                return Ok(());
            }
        }
    }
}

/// Frees a request's exchange (and resets its stream) if its future is dropped before the head.
struct Guard<'a> {
    shared: &'a Arc<Shared>,
    key: u32,
    armed: bool,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.release(self.key);
        }
    }
}

impl State {
    fn open(&mut self, id: RequestId) -> u32 {
        let index = match self.free.pop() {
            Some(i) => usize::from(i),
            None => {
                self.exchanges.push(Exchange::default());
                self.exchanges.len() - 1
            }
        };
        let ex = &mut self.exchanges[index];
        let generation = ex.generation.wrapping_add(1);
        *ex = Exchange { generation, used: true, id: Some(id), ..Exchange::default() };
        self.active += 1;
        (u32::from(generation) << 16) | index as u32
    }

    fn exchange(&mut self, key: u32) -> Option<&mut Exchange> {
        let index = (key & 0xffff) as usize;
        let generation = (key >> 16) as u16;
        self.exchanges.get_mut(index).filter(|s| s.used && s.generation == generation)
    }

    fn close(&mut self, key: u32) {
        let index = key & 0xffff;
        let Some(ex) = self.exchange(key) else { return };
        let unfinished = ex.id.filter(|_| !ex.ended && ex.error.is_none());
        let queued: usize = ex.chunks.iter().map(Bytes::len).sum();
        *ex = Exchange { generation: ex.generation, ..Exchange::default() };
        self.buffered -= queued.min(self.buffered);
        if let Some(id) = unfinished {
            self.conn.cancel(id);
        }
        self.active -= 1;
        self.free.push(index as u16);
        if let Some(w) = &self.task {
            w.wake_by_ref();
        }
    }
}

impl Exchange {
    fn fail(&mut self, error: Error) {
        if self.delivered || self.head.is_some() {
            self.error = Some(response::body_error(&error).kind());
        } else {
            self.head = Some(Err(error));
        }
        self.wake();
        if let Some(w) = self.writer.take() {
            w.wake();
        }
    }
}

/// The connection's task: reads, files events, writes, until the connection ends or has been
/// idle (no request) for `idle_timeout`, or the client and every response let go of it, or
/// its tunnel ended.
async fn drive(shared: Arc<Shared>, idle_timeout: Duration) {
    let mut idle: Pin<Box<Sleep>> = Box::pin(tokio::time::sleep(idle_timeout));
    let mut idle_armed = false;
    poll_fn(|cx| {
        let mut guard = shared.lock();
        let st = &mut *guard;
        st.task = Some(cx.waker().clone());
        if st.closed.is_some() {
            return Poll::Ready(());
        }
        // A tunnel's connection ends with its stream, whoever still holds the connection (the
        // upload's task, ending too).
        if st.active == 0 && (st.tunnel || Arc::strong_count(&shared) == 1) {
            return Poll::Ready(());
        }
        loop {
            if st.throttled {
                // Keep writing (resets, window updates) while reads wait for the readers.
                if let Poll::Ready(Err(e)) = st.conn.poll_flush(cx) {
                    st.fail_all(e);
                    return Poll::Ready(());
                }
                break;
            }
            match st.conn.poll_event(cx) {
                Poll::Pending => break,
                Poll::Ready(Ok(event)) => {
                    // Split borrows: the event borrows `conn`, the exchanges are apart.
                    let State { exchanges, buffered, .. } = st;
                    file_into(exchanges, buffered, event);
                    if st.buffered > MAX_BUFFERED {
                        st.throttled = true;
                    }
                }
                Poll::Ready(Err(e)) => {
                    st.fail_all(e);
                    return Poll::Ready(());
                }
            }
        }
        if st.active == 0 {
            if !idle_armed {
                idle.as_mut().reset(Instant::now() + idle_timeout);
                idle_armed = true;
            }
            if idle.as_mut().poll(cx).is_ready() {
                st.closed = Some(Error::new(Kind::Closed, "the idle connection was closed"));
                return Poll::Ready(());
            }
        } else {
            idle_armed = false;
        }
        Poll::Pending
    })
    .await;
}

/// [`State::file`] over the exchanges alone (the connection is borrowed by the event).
fn file_into(exchanges: &mut [Exchange], buffered: &mut usize, event: Event<'_>) {
    let mut tmp = Filing { exchanges, buffered };
    tmp.file(event);
}

struct Filing<'a> {
    exchanges: &'a mut [Exchange],
    buffered: &'a mut usize,
}

impl Filing<'_> {
    fn by_id(&mut self, id: RequestId) -> Option<&mut Exchange> {
        self.exchanges.iter_mut().find(|s| s.used && s.id == Some(id))
    }

    fn file(&mut self, event: Event<'_>) {
        match event {
            Event::Head { id, head } => {
                let r = response::owned(&head, Body::empty());
                if let Some(ex) = self.by_id(id) {
                    ex.head = Some(r);
                    ex.wake();
                }
            }
            Event::Data { id, data } => {
                let n = data.len();
                if let Some(ex) = self.by_id(id) {
                    ex.chunks.push_back(Bytes::copy_from_slice(data));
                    ex.wake();
                    *self.buffered += n;
                }
            }
            Event::End { id, trailers } => {
                if let Some(ex) = self.by_id(id) {
                    ex.ended = true;
                    ex.trailers = trailers;
                    ex.wake();
                }
            }
            Event::Failed { id, error } => {
                if let Some(ex) = self.by_id(id) {
                    ex.fail(error);
                }
            }
            Event::Writable { id } => {
                if let Some(ex) = self.by_id(id) {
                    ex.writable = true;
                    if let Some(w) = ex.writer.take() {
                        w.wake();
                    }
                }
            }
        }
    }
}

impl State {
    /// The connection failed: every request still waiting gets the error.
    fn fail_all(&mut self, e: Error) {
        for ex in self.exchanges.iter_mut().filter(|s| s.used && !s.ended) {
            ex.fail(e.shallow_clone().maybe_processed());
        }
        self.closed = Some(e);
    }
}

impl Shared {
    fn release(&self, key: u32) {
        self.lock().close(key);
    }
}

impl Receive for Shared {
    fn poll_chunk(&self, key: u32, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let Some(ex) = st.exchange(key) else {
            return Poll::Ready(Some(Err(BodyError::new(BodyErrorKind::Detached))));
        };
        if let Some(chunk) = ex.chunks.pop_front() {
            st.buffered -= chunk.len().min(st.buffered);
            if st.throttled && st.buffered <= MAX_BUFFERED / 2 {
                st.throttled = false;
                if let Some(w) = &st.task {
                    w.wake_by_ref();
                }
            }
            return Poll::Ready(Some(Ok(chunk)));
        }
        if let Some(kind) = ex.error {
            return Poll::Ready(Some(Err(BodyError::new(kind))));
        }
        if ex.ended {
            return Poll::Ready(None);
        }
        ex.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    fn size_hint(&self, key: u32) -> Option<u64> {
        let mut st = self.lock();
        let ex = st.exchange(key)?;
        (ex.ended && ex.chunks.is_empty()).then_some(0)
    }

    fn take_trailers(&self, key: u32) -> Option<HeaderMap> {
        let mut st = self.lock();
        let ex = st.exchange(key)?;
        if ex.ended && ex.chunks.is_empty() { ex.trailers.take() } else { None }
    }

    fn dropped(&self, key: u32) {
        self.lock().close(key);
    }
}
