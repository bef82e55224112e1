//! `Body` and the `http-body` crate's trait, both ways: a [`Body`] is an [`http_body::Body`]
//! (data frames, then its trailers as a trailers frame), and any `http_body::Body` of [`Bytes`]
//! becomes a `Body` ([`Body::from_http_body`]) that streams its data frames as chunks and keeps
//! its trailers frame as the body's trailers, for the drivers to send (HTTP/2's trailing
//! HEADERS, the chunked coding's trailer section).

use std::any::Any;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use pin_project_lite::pin_project;
use sync_wrapper::SyncWrapper;

use super::{Body, BodyError, BodyErrorKind, Kind};

/// An error a foreign body may fail with (the `http-body` ecosystem's boxed error).
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A foreign body behind `Body`, its type erased.
pub(super) trait FrameSource: Send + Sync {
    /// The next frame: data, or the trailers that end the body.
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>>;

    /// Bytes still to come, when known.
    fn size_hint(&self) -> Option<u64>;

    /// Whether trailers may end the body: the drivers then keep a way open for them (chunked
    /// on HTTP/1.1, no END_STREAM on the last DATA frame of HTTP/2).
    fn may_have_trailers(&self) -> bool;

    /// Polls a body of known length without trailers once: its bytes when that first frame
    /// holds all of them. Whatever else came (a part, trailers, the end, an error) is kept for
    /// `poll_frame` to give out first. Only the first call polls.
    #[cfg(feature = "tower")]
    fn poll_whole(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Option<Bytes>;
}

/// What the first poll of [`FrameSource::poll_whole`] got and did not use: a frame, an error,
/// or the end (`None`).
type Polled = Option<Result<Frame<Bytes>, BodyError>>;

pin_project! {
    /// A foreign body and what `Body` must answer about it without polling it.
    struct Source<B> {
        // Data bytes still to come, when known: the length the body declared (an exact size
        // hint) or its message announced (Content-Length), less what it has yielded.
        left: Option<u64>,
        trailers: bool,
        // `poll_whole` ran: `Some` with what it got, if it did not use it.
        polled: Option<Option<Polled>>,
        // The body is only `Send` (axum's is a boxed `dyn Body + Send`); `Body` is `Sync`,
        // which `SyncWrapper` grants soundly by never giving out a shared reference. So what
        // `Body` reads through `&self` is kept beside it, above.
        #[pin]
        body: SyncWrapper<B>,
    }
}

impl<B> FrameSource for Source<B>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.project();
        let polled = match this.polled.as_mut().and_then(Option::take) {
            Some(polled) => polled,
            None => ready!(poll_mapped(this.body, cx)),
        };
        if let (Some(Ok(frame)), Some(left)) = (&polled, this.left.as_mut()) {
            if let Some(data) = frame.data_ref() {
                *left = left.saturating_sub(data.len() as u64);
            }
        }
        Poll::Ready(polled)
    }

    #[cfg(feature = "tower")]
    fn poll_whole(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Option<Bytes> {
        let this = self.project();
        let len = this.left.filter(|_| !*this.trailers && this.polled.is_none())?;
        let polled = match poll_mapped(this.body, cx) {
            Poll::Pending => return None,
            Poll::Ready(polled) => polled,
        };
        let polled = match polled {
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) if data.len() as u64 == len => {
                    *this.polled = Some(None);
                    *this.left = Some(0);
                    return Some(data);
                }
                Ok(data) => Some(Ok(Frame::data(data))),
                Err(frame) => Some(Ok(frame)),
            },
            None if len == 0 => {
                *this.polled = Some(None);
                return Some(Bytes::new());
            }
            other => other,
        };
        *this.polled = Some(Some(polled));
        None
    }

    fn size_hint(&self) -> Option<u64> {
        self.left
    }

    fn may_have_trailers(&self) -> bool {
        self.trailers
    }
}

/// Polls `body` for a frame, its error made a [`BodyError`].
fn poll_mapped<B>(body: Pin<&mut SyncWrapper<B>>, cx: &mut Context<'_>) -> Poll<Polled>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    match ready!(body.get_pin_mut().poll_frame(cx)) {
        Some(Ok(frame)) => Poll::Ready(Some(Ok(frame))),
        Some(Err(e)) => {
            // `BodyError` is a small `Copy` value: the source's error is logged here and read
            // as an abort (the server closes the connection mid-message).
            let e: BoxError = e.into();
            tracing::debug!("peregrine: a body's source failed: {e}");
            Poll::Ready(Some(Err(BodyError::new(BodyErrorKind::Aborted))))
        }
        None => Poll::Ready(None),
    }
}

impl Body {
    /// A body that streams `body`, any [`http_body::Body`] of [`Bytes`] (hyper's `Incoming`,
    /// axum's body, `http-body-util`'s bodies): its data frames are the chunks, its trailers
    /// frame the trailers ([`Body::take_trailers`]; sent as [`Body::with_trailers`] says).
    ///
    /// A body with an exact size hint is sent with `Content-Length`; trailers it might end
    /// with then have no place on HTTP/1.1 and are not sent. A `Body` is returned as it is.
    /// An error of `body` reads as [`BodyError`] (logged at debug level): the server closes
    /// the connection instead of finishing the message.
    ///
    /// # Examples
    /// ```
    /// use bytes::Bytes;
    /// use http_body_util::Full;
    /// use peregrine::Body;
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let body = Body::from_http_body(Full::new(Bytes::from_static(b"hello")));
    /// assert_eq!(body.size_hint(), Some(5));
    /// assert_eq!(body.to_bytes(16).await.unwrap(), "hello");
    /// # });
    /// ```
    pub fn from_http_body<B>(body: B) -> Body
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let exact = body.size_hint().exact();
        Body::from_http_body_framed(body, exact, exact.is_none())
    }

    /// As [`Body::from_http_body`], with its length (`None`: unknown) and whether trailers
    /// may follow decided by the caller: the tower adapter takes them from the response's
    /// Content-Length and Trailer fields.
    pub(crate) fn from_http_body_framed<B>(body: B, length: Option<u64>, trailers: bool) -> Body
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        // A `Body` that went through a tower stack and back keeps its own kind (a file span
        // stays a span, sent with sendfile(2)) rather than being wrapped in itself.
        let mut slot = Some(body);
        if let Some(own) = (&mut slot as &mut dyn Any).downcast_mut::<Option<Body>>() {
            return own.take().unwrap_or_default();
        }
        let Some(body) = slot else { return Body::empty() };
        let source = Source { left: length, trailers, polled: None, body: SyncWrapper::new(body) };
        Body { kind: Kind::Frames(Box::pin(source)), trailers: None }
    }

    /// For a foreign body of known length without trailers (a handler's `String`, a JSON
    /// document): polls it once, and when that first frame holds all of it, the body becomes
    /// those bytes, which the server writes with the head (one copy, no stream to drive)
    /// instead of streaming them in a second step. Nothing is lost otherwise: what the poll
    /// got is given out first. Only the first call polls; `cx` is the task that will poll the
    /// body, or its waker's.
    #[cfg(feature = "tower")]
    pub(crate) fn poll_whole(&mut self, cx: &mut Context<'_>) {
        if let Kind::Frames(source) = &mut self.kind {
            if let Some(bytes) = source.as_mut().poll_whole(cx) {
                self.kind = Kind::Full(bytes);
            }
        }
    }
}

/// A body's frames: each chunk as a data frame, then its trailers (if any) as a trailers frame.
/// A request body read this way answers `Expect: 100-continue` as [`Body::chunk`] does.
impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        match this.poll_chunk(cx) {
            Poll::Ready(Some(Ok(chunk))) => Poll::Ready(Some(Ok(Frame::data(chunk)))),
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            // Trailers are taken once: the next poll ends the body.
            Poll::Ready(None) => Poll::Ready(this.take_trailers().map(|t| Ok(Frame::trailers(t)))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// True only when no data and no trailers can follow; a received body is not known to
    /// have ended until it is read to its end (its trailers may still come).
    fn is_end_stream(&self) -> bool {
        if self.trailers.is_some() {
            return false;
        }
        match &self.kind {
            Kind::Empty => true,
            Kind::Full(b) => b.is_empty(),
            Kind::SizedStream(left, _) => *left == 0,
            Kind::File(span) => span.remaining() == 0,
            Kind::Frames(source) => source.size_hint() == Some(0) && !source.may_have_trailers(),
            Kind::Incoming(_) | Kind::Channel(_) | Kind::Stream(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match Body::size_hint(self) {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }
}

/// Polls a foreign body for its next chunk: data frames are the chunks; a trailers frame ends
/// the body and its fields are kept in `trailers`.
pub(super) fn poll_source(
    source: &mut Pin<Box<dyn FrameSource>>,
    trailers: &mut Option<Box<http::HeaderMap>>,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Bytes, BodyError>>> {
    loop {
        let frame = match source.as_mut().poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => return Poll::Pending,
        };
        match frame.into_data() {
            Ok(data) => return Poll::Ready(Some(Ok(data))),
            Err(frame) => {
                if let Ok(fields) = frame.into_trailers() {
                    // RFC 9110 §6.5: trailers come after the content; nothing follows them.
                    *trailers = Some(Box::new(fields));
                    return Poll::Ready(None);
                }
                // A frame kind this crate does not know: skipped.
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    /// A foreign body of two data frames and a trailers frame.
    struct Frames(std::collections::VecDeque<Frame<Bytes>>);

    impl http_body::Body for Frames {
        type Data = Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.0.pop_front().map(Ok))
        }
    }

    fn with_trailers() -> Frames {
        let mut trailers = http::HeaderMap::new();
        trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
        Frames(
            [
                Frame::data(Bytes::from("ab")),
                Frame::data(Bytes::from("c")),
                Frame::trailers(trailers),
            ]
            .into(),
        )
    }

    #[test]
    fn foreign_frames_become_chunks_and_trailers() {
        block_on(async {
            let mut body = Body::from_http_body(with_trailers());
            assert_eq!(body.size_hint(), None);
            assert!(body.may_have_trailers());
            assert_eq!(body.chunk().await.unwrap().unwrap(), "ab");
            assert_eq!(body.chunk().await.unwrap().unwrap(), "c");
            assert!(body.chunk().await.is_none());
            assert_eq!(body.take_trailers().unwrap()["grpc-status"], "0");
        });
    }

    /// Through `Body` and back: the frames come out as they went in.
    #[test]
    fn a_body_is_an_http_body_with_its_trailers() {
        use http_body_util::BodyExt;
        block_on(async {
            let collected = Body::from_http_body(with_trailers()).collect().await.unwrap();
            assert_eq!(collected.trailers().unwrap()["grpc-status"], "0");
            assert_eq!(collected.to_bytes(), "abc");
        });
    }

    #[test]
    fn sizes_and_ends() {
        struct Case {
            body: Body,
            exact: Option<u64>,
            end: bool,
        }
        let full = http_body_util::Full::new(Bytes::from_static(b"hello"));
        let cases = [
            Case { body: Body::empty(), exact: Some(0), end: true },
            Case { body: Body::from("abc"), exact: Some(3), end: false },
            Case {
                body: Body::from("abc").with_trailers(Default::default()),
                exact: Some(3),
                end: false,
            },
            Case { body: Body::from_http_body(full), exact: Some(5), end: false },
            Case {
                body: Body::from_http_body(http_body_util::Empty::<Bytes>::new()),
                exact: Some(0),
                end: true,
            },
            Case { body: Body::channel(1).1, exact: None, end: false },
        ];
        for (i, case) in cases.into_iter().enumerate() {
            assert_eq!(http_body::Body::size_hint(&case.body).exact(), case.exact, "case {i}");
            assert_eq!(case.body.is_end_stream(), case.end, "case {i}");
        }
    }

    /// `poll_whole`: a body whose first frame is all of it becomes bytes; any other keeps
    /// what the poll got for its reader, in order.
    #[cfg(feature = "tower")]
    #[test]
    fn a_body_complete_at_once_becomes_bytes() {
        let cx = &mut Context::from_waker(std::task::Waker::noop());
        let full = http_body_util::Full::new(Bytes::from_static(b"hello"));
        let mut body = Body::from_http_body(full);
        body.poll_whole(cx);
        assert!(matches!(&body.kind, Kind::Full(b) if b == "hello"));

        // Two frames of a known length: the first is kept and read first.
        let mut frames = with_trailers();
        frames.0.pop_back();
        let mut body = Body::from_http_body_framed(frames, Some(3), false);
        body.poll_whole(cx);
        assert!(matches!(body.kind, Kind::Frames(_)));
        assert_eq!(body.size_hint(), Some(3), "the kept frame is still to come");
        assert_eq!(block_on(body.to_bytes(16)).unwrap(), "abc");

        // A known length with trailers to come: not polled, the trailers kept.
        let mut body = Body::from_http_body_framed(with_trailers(), Some(3), true);
        body.poll_whole(cx);
        assert!(matches!(body.kind, Kind::Frames(_)));
        block_on(async { while body.chunk().await.is_some() {} });
        assert_eq!(body.take_trailers().unwrap()["grpc-status"], "0");

        // The end at once, for an empty body; and one short of its length gives out its end.
        let mut body = Body::from_http_body(http_body_util::Empty::<Bytes>::new());
        body.poll_whole(cx);
        assert!(matches!(&body.kind, Kind::Full(b) if b.is_empty()));
        let mut body = Body::from_http_body_framed(Frames(Default::default()), Some(2), false);
        body.poll_whole(cx);
        assert!(block_on(body.chunk()).is_none());
    }

    /// A `Body` given back is not wrapped in itself.
    #[test]
    fn an_own_body_is_kept_as_it_is() {
        let body = Body::from_http_body(Body::from("abc"));
        assert!(matches!(body.kind, Kind::Full(_)));
    }
}
