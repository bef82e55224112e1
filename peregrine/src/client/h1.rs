//! A [`Client`](super::Client) request over HTTP/1.1: the request future drives the
//! connection it checked out of the pool (no task, no channel), and the response body drives
//! it after that, giving it back to the pool at the body's end. A response that is complete
//! when its head is read (most small ones) returns the connection at once.

use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::HeaderMap;

use super::conn::{Connection, Event, RequestId};
use super::error::{Error, Kind};
use super::pool::Pool;
use super::request::{OutBody, Outgoing};
use super::response;
use crate::body::{Body, BodyError, BodyErrorKind, Receive};
use crate::response::Response;

/// Body bytes collected before the response is returned, when they are already there.
const EAGER: usize = 64 * 1024;

/// Sends `out` on `conn` and reads the response head.
///
/// # Errors
/// The request's error; the connection is dropped with it.
pub(crate) async fn send(
    mut conn: Connection,
    out: &Outgoing,
    body: OutBody,
    pool: &Arc<Pool>,
) -> Result<Response, Error> {
    let fields = out.fields(false);
    let id = match body {
        OutBody::Full(bytes) => conn.send_request(out.method(), out.target(), &fields, &bytes)?,
        OutBody::Stream(mut body) => {
            let id =
                conn.send_request_streaming(out.method(), out.target(), &fields, body.size_hint())?;
            drop(fields);
            loop {
                match body.chunk().await {
                    Some(Ok(chunk)) => {
                        conn.send_data(id, &chunk, false)?;
                    }
                    Some(Err(e)) => {
                        return Err(Error::with_source(Kind::Body, "the request body failed", e));
                    }
                    None => {
                        conn.send_data(id, &[], true)?;
                        break;
                    }
                }
                conn.flush().await?;
            }
            id
        }
    };
    let mut response = loop {
        match conn.next_event().await? {
            Event::Head { head, .. } => break response::owned(&head, Body::empty())?,
            Event::Failed { error, .. } => return Err(error),
            _ => {}
        }
    };
    // Take what is already there: a complete response frees the connection now.
    let mut first = BytesMut::new();
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut error = None;
    let ended = loop {
        match conn.poll_event(&mut cx) {
            Poll::Pending => break None,
            Poll::Ready(Ok(Event::Data { data, .. })) => {
                first.extend_from_slice(data);
                if first.len() >= EAGER {
                    break None;
                }
            }
            Poll::Ready(Ok(Event::End { trailers, .. })) => break Some(trailers),
            Poll::Ready(Ok(Event::Failed { error: e, .. })) | Poll::Ready(Err(e)) => {
                // The head is good: the body fails when it is read.
                error = Some(response::body_error(&e).kind());
                break None;
            }
            Poll::Ready(Ok(_)) => {}
        }
    };
    *response.body_mut() = match ended {
        Some(trailers) => {
            pool.checkin(conn);
            let body = Body::from(first.freeze());
            match trailers {
                Some(t) => body.with_trailers(t),
                None => body,
            }
        }
        None => {
            let conn = if error.is_some() { None } else { Some(conn) };
            let state = State { conn, first: first.freeze(), trailers: None, error, id };
            let incoming = Arc::new(Incoming { state: Mutex::new(state), pool: pool.clone() });
            Body::incoming(incoming, 0)
        }
    };
    Ok(response)
}

/// A response body still arriving on an HTTP/1.1 connection.
struct Incoming {
    state: Mutex<State>,
    pool: Arc<Pool>,
}

struct State {
    /// The connection, until the body ends (then back to the pool) or fails.
    conn: Option<Connection>,
    first: Bytes,
    trailers: Option<HeaderMap>,
    error: Option<BodyErrorKind>,
    id: RequestId,
}

impl Incoming {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Receive for Incoming {
    fn poll_chunk(&self, _id: u32, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>> {
        let mut st = self.lock();
        if !st.first.is_empty() {
            return Poll::Ready(Some(Ok(std::mem::take(&mut st.first))));
        }
        if let Some(kind) = st.error {
            return Poll::Ready(Some(Err(BodyError::new(kind))));
        }
        let st = &mut *st;
        let Some(conn) = st.conn.as_mut() else { return Poll::Ready(None) };
        loop {
            match conn.poll_event(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(Event::Data { data, .. })) => {
                    return Poll::Ready(Some(Ok(Bytes::copy_from_slice(data))));
                }
                Poll::Ready(Ok(Event::End { id, trailers })) if id == st.id => {
                    st.trailers = trailers;
                    if let Some(conn) = st.conn.take() {
                        self.pool.checkin(conn);
                    }
                    return Poll::Ready(None);
                }
                Poll::Ready(Ok(Event::Failed { error, .. })) | Poll::Ready(Err(error)) => {
                    let e = response::body_error(&error);
                    st.error = Some(e.kind());
                    st.conn = None;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(Ok(_)) => {}
            }
        }
    }

    fn size_hint(&self, _id: u32) -> Option<u64> {
        let st = self.lock();
        (st.conn.is_none() && st.error.is_none() && st.first.is_empty()).then_some(0)
    }

    fn take_trailers(&self, _id: u32) -> Option<HeaderMap> {
        self.lock().trailers.take()
    }
}
