//! Request bodies on HTTP/1.1: the connection reads and decodes (`http1::body_decoder`), the
//! handler's [`Body`](crate::Body) asks ([`Receive`]).
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
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};
use http::HeaderMap;

use crate::body::{BodyError, BodyErrorKind, Receive};
use crate::http1::body_decoder::{BodyDecodeError, BodyDecoder};
use crate::http1::framing::BodyLength;

/// The request-body source of one connection.
#[derive(Debug)]
pub(crate) struct RequestBody {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The body being received; a handle with another id is stale.
    id: u32,
    decoder: BodyDecoder,
    /// A chunk delivered and not taken yet.
    chunk: Option<Bytes>,
    /// The body failed: its framing is lost, the connection closes after the response.
    error: Option<BodyErrorKind>,
    /// The reader asked for more and found nothing: the connection reads on its behalf.
    wants: bool,
    /// The reader's waker, when it may wait in another task than the connection's.
    reader: Option<Waker>,
    /// The connection's waker while it waits for the handler.
    driver: Option<Waker>,
    /// When the body first waited for the socket: the minimum data rate is averaged from
    /// there (Kestrel's MinRequestBodyDataRate).
    waiting_since: Option<Instant>,
}

/// What [`RequestBody::feed`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fed {
    /// A chunk, the end, or an error is there for the reader.
    Delivered,
    /// The buffer held only framing (or nothing): more bytes are needed.
    NeedMore,
}

impl RequestBody {
    pub(crate) fn new() -> Arc<RequestBody> {
        Arc::new(RequestBody {
            state: Mutex::new(State {
                id: 0,
                decoder: BodyDecoder::new(BodyLength::Length(0), 0),
                chunk: None,
                error: None,
                wants: false,
                reader: None,
                driver: None,
                waiting_since: None,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held (a handler's, caught by the connection) leaves the
        // state consistent: every update below is a plain assignment.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts the body of a new request; returns its id.
    pub(crate) fn start(&self, length: BodyLength, max_bytes: u64) -> u32 {
        let mut st = self.lock();
        st.id = st.id.wrapping_add(1);
        st.decoder = BodyDecoder::new(length, max_bytes);
        st.chunk = None;
        st.error = None;
        st.wants = false;
        st.reader = None;
        st.waiting_since = None;
        st.id
    }

    /// The handler is done with the body: a handle it kept gets an error from now on. The
    /// decoder stays, so the connection can drain what is left.
    pub(crate) fn detach(&self) {
        let mut st = self.lock();
        st.id = st.id.wrapping_add(1);
        st.chunk = None;
        st.wants = false;
        st.reader = None;
        st.driver = None;
    }

    /// Whether the reader waits for bytes the connection must read.
    #[inline]
    pub(crate) fn wants(&self) -> bool {
        let st = self.lock();
        st.wants && st.chunk.is_none() && st.error.is_none()
    }

    /// Registers the connection's waker, for a reader in another task to wake it.
    pub(crate) fn watch(&self, waker: &Waker) {
        let mut st = self.lock();
        match &st.driver {
            Some(w) if w.will_wake(waker) => {}
            _ => st.driver = Some(waker.clone()),
        }
    }

    /// The body has been read off the wire to its end (whether or not the handler took it).
    pub(crate) fn wire_done(&self) -> bool {
        self.lock().decoder.is_done()
    }

    /// Data bytes still to come off the wire, when known.
    pub(crate) fn remaining(&self) -> Option<u64> {
        self.lock().decoder.remaining()
    }

    /// When the body first waited for the socket (now, if this is the first time).
    pub(crate) fn waiting_since(&self) -> Instant {
        *self.lock().waiting_since.get_or_insert_with(Instant::now)
    }

    /// Data bytes read off the wire so far.
    pub(crate) fn received(&self) -> u64 {
        self.lock().decoder.received()
    }

    /// The body failed.
    pub(crate) fn error(&self) -> Option<BodyErrorKind> {
        self.lock().error
    }

    /// Fails the body (a socket error, the connection closing, the data rate): the reader gets
    /// the error.
    pub(crate) fn fail(&self, kind: BodyErrorKind) {
        let mut st = self.lock();
        st.error = Some(kind);
        wake_reader(&mut st);
    }

    /// Decodes the next chunk from the front of `buf` (zero-copy: the chunk shares the read
    /// buffer) for the reader, unless one is waiting for it already.
    pub(crate) fn feed(&self, buf: &mut BytesMut) -> Fed {
        let mut st = self.lock();
        if st.chunk.is_some() || st.error.is_some() {
            return Fed::Delivered;
        }
        loop {
            if st.decoder.is_done() {
                wake_reader(&mut st);
                return Fed::Delivered;
            }
            if buf.is_empty() {
                return Fed::NeedMore;
            }
            match st.decoder.decode(buf) {
                Err(e) => {
                    st.error = Some(error_kind(e));
                    wake_reader(&mut st);
                    return Fed::Delivered;
                }
                Ok(out) if out.data.is_empty() => {
                    buf.advance(out.consumed);
                    if out.consumed == 0 && !out.done {
                        return Fed::NeedMore;
                    }
                }
                Ok(out) => {
                    let taken = buf.split_to(out.consumed).freeze();
                    st.chunk = Some(taken.slice(out.data));
                    wake_reader(&mut st);
                    return Fed::Delivered;
                }
            }
        }
    }

    /// Reads and drops what `buf` holds of the body, at most `max` data bytes: `Ok(true)` once
    /// the body has ended, `Ok(false)` when more is to come (or `max` was reached).
    ///
    /// # Errors
    /// The body's framing is malformed (or over a limit): the connection must not go on.
    pub(crate) fn discard(&self, buf: &mut BytesMut, max: u64) -> Result<bool, BodyDecodeError> {
        let mut st = self.lock();
        st.chunk = None;
        let start = st.decoder.received();
        while !st.decoder.is_done() && !buf.is_empty() {
            if st.decoder.received() - start >= max {
                return Ok(false);
            }
            let out = st.decoder.decode(buf)?;
            buf.advance(out.consumed);
            if out.consumed == 0 {
                break;
            }
        }
        Ok(st.decoder.is_done())
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

fn error_kind(e: BodyDecodeError) -> BodyErrorKind {
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
        if st.decoder.is_done() {
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
        st.decoder.remaining().map(|n| n + buffered)
    }

    fn take_trailers(&self, id: u32) -> Option<HeaderMap> {
        let mut st = self.lock();
        if st.id != id || st.chunk.is_some() {
            return None;
        }
        st.decoder.take_trailers()
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
    fn feeds_chunks_until_the_end_then_trailers() {
        let body = RequestBody::new();
        let id = body.start(BodyLength::Chunked, 100);
        assert!(poll(&body, id).is_pending());
        assert!(body.wants());
        let mut buf = BytesMut::from(&b"3\r\nabc\r\n0\r\nX: 1\r\n\r\nGET"[..]);
        assert_eq!(body.feed(&mut buf), Fed::Delivered);
        assert!(!body.wants());
        match poll(&body, id) {
            Poll::Ready(Some(Ok(chunk))) => assert_eq!(chunk, "abc"),
            other => panic!("{other:?}"),
        }
        assert_eq!(body.feed(&mut buf), Fed::Delivered);
        assert!(matches!(poll(&body, id), Poll::Ready(None)));
        assert_eq!(&buf[..], b"GET");
        assert_eq!(body.take_trailers(id).map(|t| t.len()), Some(1));
    }

    #[test]
    fn a_detached_handle_gets_an_error() {
        let body = RequestBody::new();
        let id = body.start(BodyLength::Length(4), 100);
        body.detach();
        match poll(&body, id) {
            Poll::Ready(Some(Err(e))) => assert!(!e.is_too_large()),
            other => panic!("{other:?}"),
        }
        assert_eq!(body.size_hint(id), Some(0));
    }

    #[test]
    fn malformed_framing_is_delivered_as_an_error() {
        let body = RequestBody::new();
        let id = body.start(BodyLength::Chunked, 100);
        let mut buf = BytesMut::from(&b"zz\r\n"[..]);
        assert_eq!(body.feed(&mut buf), Fed::Delivered);
        match poll(&body, id) {
            Poll::Ready(Some(Err(e))) => assert!(e.is_invalid()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn discard_validates_what_is_buffered() {
        struct Case {
            length: BodyLength,
            input: &'static [u8],
            expect: Result<bool, BodyDecodeError>,
            rest: &'static [u8],
        }
        let cases = [
            Case {
                length: BodyLength::Length(3),
                input: b"abcGET",
                expect: Ok(true),
                rest: b"GET",
            },
            Case { length: BodyLength::Length(9), input: b"abc", expect: Ok(false), rest: b"" },
            Case {
                length: BodyLength::Chunked,
                input: b"1\r\na\r\n0\r\n\r\nGET",
                expect: Ok(true),
                rest: b"GET",
            },
            Case {
                length: BodyLength::Chunked,
                input: b"1\r\na\r\n",
                expect: Ok(false),
                rest: b"",
            },
            Case {
                length: BodyLength::Chunked,
                input: b"1\r\nab\r\n",
                expect: Err(BodyDecodeError::Chunked(
                    crate::http1::chunked::ChunkedError::MissingCrlfAfterData,
                )),
                rest: b"",
            },
        ];
        for case in cases {
            let body = RequestBody::new();
            body.start(case.length, 100);
            let mut buf = BytesMut::from(case.input);
            let got = body.discard(&mut buf, 64);
            assert_eq!(got, case.expect, "{:?}", case.input);
            if got.is_ok() {
                assert_eq!(&buf[..], case.rest, "{:?}", case.input);
            }
        }
    }
}
