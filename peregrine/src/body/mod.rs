//! Message bodies: one type for bodies read from a connection (a request's on the server, a
//! response's on the client) and bodies to send (empty, static or owned bytes, streamed chunks
//! or a span of a file).
//!
//! A body read from a connection reaches [`Body`] through the small [`Receive`] trait, which
//! each driver implements; this module knows no driver.

use std::fmt;
use std::future::poll_fn;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;

mod error;
mod file_read;
mod file_span;
mod frames;
mod receive;

pub use error::BodyError;
pub(crate) use error::BodyErrorKind;
pub use file_span::FileSpan;
pub(crate) use receive::{Incoming, Receive};

/// A message body: a stream of [`Bytes`] chunks.
///
/// `Send` and `Sync`, so a body can cross threads and a request holding one can be borrowed
/// across an `.await` in a `Send` future (a client used from a multi-threaded runtime); handler
/// futures need not be `Send`.
///
/// A request's body reads from the connection only when polled, so a handler that never looks
/// at it costs nothing (the server drains or closes afterwards). A response body is sent with
/// `Content-Length` when its size is known ([`Body::size_hint`]) and chunked otherwise.
///
/// It is an [`http_body::Body`] (data frames, then its trailers as a trailers frame), so it
/// goes wherever hyper, axum or tower-http take a body; any `http_body::Body` of `Bytes`
/// becomes one with [`Body::from_http_body`].
///
/// # Examples
/// ```
/// use peregrine::Body;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let body = Body::from("hello");
/// assert_eq!(body.size_hint(), Some(5));
/// assert_eq!(body.to_bytes(1024).await.unwrap(), "hello");
/// # });
/// ```
pub struct Body {
    kind: Kind,
    /// Trailer fields to send after the last byte (see [`Body::with_trailers`]), or those a
    /// channel's sender ended the body with.
    trailers: Option<Box<http::HeaderMap>>,
}

type PollChunk =
    dyn FnMut(&mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>> + Send + Sync;

/// What a [`BodySender`] sends.
#[derive(Debug)]
enum Msg {
    Data(Bytes),
    /// The end of the body, with trailer fields.
    Trailers(http::HeaderMap),
    Error(BodyError),
}

enum Kind {
    Empty,
    Full(Bytes),
    Incoming(Incoming),
    Channel(mpsc::Receiver<Msg>),
    Stream(Box<PollChunk>),
    /// A stream of known length: the bytes still to come, and the poll function.
    SizedStream(u64, Box<PollChunk>),
    /// A span of an open file: sent with `sendfile(2)` by the server on Linux, read in chunks
    /// anywhere else.
    File(FileSpan),
    /// A foreign `http_body::Body` (see [`Body::from_http_body`]), whose trailers frame ends
    /// the body.
    Frames(std::pin::Pin<Box<dyn frames::FrameSource>>),
}

/// Bytes read per chunk when a file body is polled rather than sent with `sendfile(2)`.
const FILE_CHUNK: usize = 64 * 1024;

impl Body {
    /// An empty body.
    pub const fn empty() -> Body {
        Body { kind: Kind::Empty, trailers: None }
    }

    /// A body of static bytes; no allocation.
    pub const fn from_static(bytes: &'static [u8]) -> Body {
        Body { kind: Kind::Full(Bytes::from_static(bytes)), trailers: None }
    }

    /// A body produced by a poll function, called until it returns `Ready(None)`.
    ///
    /// The function must be `Send` and `Sync`, as the body is: a client sends bodies from any
    /// thread.
    ///
    /// # Examples
    /// ```
    /// use std::task::Poll;
    /// use bytes::Bytes;
    /// let mut left = 3;
    /// let body = peregrine::Body::from_poll_fn(move |_cx| {
    ///     if left == 0 { return Poll::Ready(None) }
    ///     left -= 1;
    ///     Poll::Ready(Some(Ok(Bytes::from_static(b"chunk\n"))))
    /// });
    /// assert_eq!(body.size_hint(), None);
    /// ```
    pub fn from_poll_fn<F>(f: F) -> Body
    where
        F: FnMut(&mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>>
            + Send
            + Sync
            + 'static,
    {
        Body { kind: Kind::Stream(Box::new(f)), trailers: None }
    }

    /// A body of exactly `len` bytes produced by a poll function, sent with `Content-Length`
    /// (where [`Body::from_poll_fn`] is sent chunked). For a HEAD request the server sends the
    /// length and never polls.
    ///
    /// The function must yield exactly `len` bytes in all; if it yields more or fewer, or an
    /// error, the server closes the connection instead of finishing the message.
    ///
    /// # Examples
    /// ```
    /// use std::task::Poll;
    /// use bytes::Bytes;
    /// let mut sent = false;
    /// let body = peregrine::Body::from_poll_fn_sized(5, move |_cx| {
    ///     if std::mem::replace(&mut sent, true) { return Poll::Ready(None) }
    ///     Poll::Ready(Some(Ok(Bytes::from_static(b"hello"))))
    /// });
    /// assert_eq!(body.size_hint(), Some(5));
    /// ```
    pub fn from_poll_fn_sized<F>(len: u64, f: F) -> Body
    where
        F: FnMut(&mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>>
            + Send
            + Sync
            + 'static,
    {
        Body { kind: Kind::SizedStream(len, Box::new(f)), trailers: None }
    }

    /// The file span of a file body, for the server's `sendfile(2)` path.
    pub(crate) fn file_span_mut(&mut self) -> Option<&mut FileSpan> {
        match &mut self.kind {
            Kind::File(span) => Some(span),
            _ => None,
        }
    }

    /// A streamed body fed through a channel holding up to `capacity` chunks.
    ///
    /// # Examples
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let (tx, body) = peregrine::Body::channel(4);
    /// tokio::spawn(async move {
    ///     tx.send("a".into()).await.unwrap();
    ///     tx.send("b".into()).await.unwrap();
    /// });
    /// assert_eq!(body.to_bytes(16).await.unwrap(), "ab");
    /// # });
    /// ```
    pub fn channel(capacity: usize) -> (BodySender, Body) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (BodySender { tx }, Body { kind: Kind::Channel(rx), trailers: None })
    }

    /// The bytes of a complete body (empty, static or owned), or the body back if it streams.
    #[inline]
    pub(crate) fn into_full(self) -> Result<Bytes, Body> {
        if self.trailers.is_some() {
            return Err(self);
        }
        match self.kind {
            Kind::Empty => Ok(Bytes::new()),
            Kind::Full(b) => Ok(b),
            kind => Err(Body { kind, trailers: None }),
        }
    }

    /// Sends `trailers` after the body's last byte (RFC 9110 §6.5): on HTTP/2 a final HEADERS
    /// frame; on HTTP/1.1 the chunked coding's trailer section (the response is then sent
    /// chunked). An HTTP/1.0 client, which knows no trailers, gets the body without them.
    /// Fields that frame the message (Content-Length, Transfer-Encoding) or are
    /// connection-specific are not sent.
    ///
    /// # Examples
    /// ```
    /// use http::{HeaderMap, HeaderValue};
    /// let mut trailers = HeaderMap::new();
    /// trailers.insert("grpc-status", HeaderValue::from_static("0"));
    /// let body = peregrine::Body::from("payload").with_trailers(trailers);
    /// assert_eq!(body.size_hint(), Some(7));
    /// ```
    pub fn with_trailers(mut self, trailers: http::HeaderMap) -> Body {
        self.trailers = Some(Box::new(trailers));
        self
    }

    /// Whether trailer fields may follow this body: set with [`Body::with_trailers`], a
    /// channel body (its sender may end it with trailers), or a foreign body that may end
    /// with a trailers frame.
    pub(crate) fn may_have_trailers(&self) -> bool {
        self.trailers.is_some()
            || match &self.kind {
                Kind::Channel(_) => true,
                Kind::Frames(source) => source.may_have_trailers(),
                _ => false,
            }
    }

    /// A body a driver receives through `source`, as its body `id`.
    pub(crate) fn incoming(source: std::sync::Arc<dyn Receive>, id: u32) -> Body {
        Body { kind: Kind::Incoming(Incoming::new(source, id)), trailers: None }
    }

    /// The exact number of bytes left, when known.
    pub fn size_hint(&self) -> Option<u64> {
        match &self.kind {
            Kind::Empty => Some(0),
            Kind::Full(b) => Some(b.len() as u64),
            Kind::Incoming(i) => i.size_hint(),
            Kind::Channel(_) | Kind::Stream(_) => None,
            Kind::SizedStream(left, _) => Some(*left),
            Kind::File(span) => Some(span.remaining()),
            Kind::Frames(source) => source.size_hint(),
        }
    }

    /// Whether the body is known to hold no more bytes.
    pub fn is_end(&self) -> bool {
        self.size_hint() == Some(0)
    }

    /// Polls for the next chunk; `Ready(None)` at the end.
    ///
    /// # Errors
    /// See [`Body::chunk`].
    pub fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BodyError>>> {
        match &mut self.kind {
            Kind::Empty => Poll::Ready(None),
            Kind::Full(b) => {
                let b = std::mem::take(b);
                self.kind = Kind::Empty;
                if b.is_empty() { Poll::Ready(None) } else { Poll::Ready(Some(Ok(b))) }
            }
            Kind::Incoming(i) => i.poll_chunk(cx),
            Kind::Channel(rx) => match rx.poll_recv(cx) {
                Poll::Ready(Some(Msg::Data(b))) => Poll::Ready(Some(Ok(b))),
                Poll::Ready(Some(Msg::Error(e))) => Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Msg::Trailers(t))) => {
                    self.trailers = Some(Box::new(t));
                    self.kind = Kind::Empty;
                    Poll::Ready(None)
                }
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            },
            Kind::Stream(f) => f(cx),
            // A positioned read of at most one chunk: blocking, and brief on a local disk.
            Kind::File(span) => Poll::Ready(match span.read_chunk(FILE_CHUNK) {
                Ok(chunk) => chunk.map(Ok),
                Err(e) => Some(Err(BodyError::new(BodyErrorKind::Io(e.kind())))),
            }),
            Kind::SizedStream(left, f) => {
                let polled = f(cx);
                if let Poll::Ready(Some(Ok(chunk))) = &polled {
                    *left = left.saturating_sub(chunk.len() as u64);
                }
                polled
            }
            Kind::Frames(source) => {
                let polled = frames::poll_source(source, &mut self.trailers, cx);
                if self.trailers.is_some() {
                    // The trailers frame ended it: the source is done.
                    self.kind = Kind::Empty;
                }
                polled
            }
        }
    }

    /// The next chunk of the body, or `None` at its end.
    ///
    /// For a request body this reads from the connection; on HTTP/1.1 the first call answers
    /// `Expect: 100-continue` with `100 Continue` (RFC 9110 §10.1.1).
    ///
    /// # Errors
    /// A request body fails when it passes the server's body size limit
    /// ([`BodyError::is_too_large`]), when the connection ends before the body does
    /// ([`BodyError::is_incomplete`]), on malformed chunked framing
    /// ([`BodyError::is_invalid`]), or when read after its request was answered.
    ///
    /// # Cancel safety
    /// Cancel safe: a chunk is either returned or left in the connection's buffer.
    pub async fn chunk(&mut self) -> Option<Result<Bytes, BodyError>> {
        poll_fn(|cx| self.poll_chunk(cx)).await
    }

    /// The trailer fields of a body, once it has been read to its end ([`Body::chunk`] returned
    /// `None`): a request's (a chunked HTTP/1.1 body's trailer section, RFC 9112 §7.1.2, or
    /// HTTP/2's trailing HEADERS), those set with [`Body::with_trailers`] or sent with
    /// [`BodySender::finish`], or the trailers frame of a [`Body::from_http_body`]. Taken, so
    /// a second call gets `None`.
    ///
    /// `None` too for a body without trailers, and a received body not read to its end. Trailer fields are kept apart from the header fields (RFC 9110
    /// §6.5.1): the server never merges them into [`Request::headers`](crate::Request::headers).
    /// [`Body::to_bytes`] consumes the body and its trailers with it: read with
    /// [`Body::chunk`] to keep them.
    ///
    /// # Examples
    /// ```no_run
    /// use peregrine::{Body, Request};
    /// async fn handler(req: Request) -> Body {
    ///     let mut body = req.into_body();
    ///     let mut len = 0;
    ///     while let Some(Ok(chunk)) = body.chunk().await {
    ///         len += chunk.len();
    ///     }
    ///     let status = body.take_trailers().and_then(|t| t.get("grpc-status").cloned());
    ///     Body::from(format!("{len} bytes, status {status:?}"))
    /// }
    /// ```
    pub fn take_trailers(&mut self) -> Option<http::HeaderMap> {
        match &mut self.kind {
            Kind::Incoming(i) => i.take_trailers(),
            _ => self.trailers.take().map(|t| *t),
        }
    }

    /// Reads the whole body into one [`Bytes`], failing once it passes `limit` bytes.
    ///
    /// A body that arrives as one chunk is returned without copying.
    ///
    /// # Errors
    /// [`BodyError::is_too_large`] when the body is longer than `limit`; any error of
    /// [`Body::chunk`].
    pub async fn to_bytes(mut self, limit: usize) -> Result<Bytes, BodyError> {
        if self.size_hint().is_some_and(|n| n > limit as u64) {
            return Err(BodyError::new(BodyErrorKind::TooLarge));
        }
        let Some(first) = self.chunk().await.transpose()? else {
            return Ok(Bytes::new());
        };
        if first.len() > limit {
            return Err(BodyError::new(BodyErrorKind::TooLarge));
        }
        let Some(second) = self.chunk().await.transpose()? else {
            return Ok(first);
        };
        let mut all = BytesMut::with_capacity(first.len() + second.len());
        all.extend_from_slice(&first);
        let mut next = Some(second);
        while let Some(chunk) = next {
            if all.len() + chunk.len() > limit {
                return Err(BodyError::new(BodyErrorKind::TooLarge));
            }
            all.extend_from_slice(&chunk);
            next = self.chunk().await.transpose()?;
        }
        Ok(all.freeze())
    }
}

impl Default for Body {
    fn default() -> Self {
        Body::empty()
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            Kind::Empty => "Empty",
            Kind::Full(_) => "Full",
            Kind::Incoming(_) => "Incoming",
            Kind::Channel(_) => "Channel",
            Kind::Stream(_) => "Stream",
            Kind::SizedStream(..) => "SizedStream",
            Kind::File(_) => "File",
            Kind::Frames(_) => "Frames",
        };
        f.debug_struct("Body").field("kind", &kind).field("size_hint", &self.size_hint()).finish()
    }
}

impl From<()> for Body {
    fn from((): ()) -> Self {
        Body::empty()
    }
}

impl From<Bytes> for Body {
    fn from(b: Bytes) -> Self {
        Body { kind: Kind::Full(b), trailers: None }
    }
}

impl From<&'static str> for Body {
    fn from(s: &'static str) -> Self {
        Body::from_static(s.as_bytes())
    }
}

impl From<&'static [u8]> for Body {
    fn from(s: &'static [u8]) -> Self {
        Body::from_static(s)
    }
}

/// A span of an open file, sent with `Content-Length`; the server sends it with `sendfile(2)`
/// on Linux (no copy through user space) and reads it in 64 KiB chunks elsewhere.
impl From<FileSpan> for Body {
    fn from(span: FileSpan) -> Self {
        Body { kind: Kind::File(span), trailers: None }
    }
}

impl From<String> for Body {
    fn from(s: String) -> Self {
        Body::from(Bytes::from(s))
    }
}

impl From<Vec<u8>> for Body {
    fn from(v: Vec<u8>) -> Self {
        Body::from(Bytes::from(v))
    }
}

/// The sending half of [`Body::channel`].
#[derive(Debug, Clone)]
pub struct BodySender {
    tx: mpsc::Sender<Msg>,
}

impl BodySender {
    /// Sends a chunk, waiting for room in the channel.
    ///
    /// # Errors
    /// Gives the chunk back when the body was dropped (the client went away).
    pub async fn send(&self, chunk: Bytes) -> Result<(), Bytes> {
        self.tx.send(Msg::Data(chunk)).await.map_err(|e| match e.0 {
            Msg::Data(chunk) => chunk,
            _ => Bytes::new(),
        })
    }

    /// Ends the body with trailer fields (see [`Body::with_trailers`] for how they are sent).
    ///
    /// # Errors
    /// Gives the trailers back when the body was dropped (the client went away).
    pub async fn finish(self, trailers: http::HeaderMap) -> Result<(), http::HeaderMap> {
        self.tx.send(Msg::Trailers(trailers)).await.map_err(|e| match e.0 {
            Msg::Trailers(t) => t,
            _ => http::HeaderMap::new(),
        })
    }

    /// Ends the body with an error: the server closes the connection without finishing the
    /// response, so the client sees a truncated message rather than a complete one.
    pub async fn abort(self) {
        let _ = self.tx.send(Msg::Error(BodyError::new(BodyErrorKind::Aborted))).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    #[test]
    fn full_body_yields_once() {
        block_on(async {
            let mut body = Body::from("abc");
            assert_eq!(body.chunk().await.unwrap().unwrap(), "abc");
            assert!(body.chunk().await.is_none());
            assert!(body.is_end());
        });
    }

    #[test]
    fn to_bytes_limits() {
        struct Case {
            chunks: &'static [&'static str],
            limit: usize,
            expect: Result<&'static str, ()>,
        }
        let cases = [
            Case { chunks: &[], limit: 0, expect: Ok("") },
            Case { chunks: &["ab"], limit: 2, expect: Ok("ab") },
            Case { chunks: &["ab"], limit: 1, expect: Err(()) },
            Case { chunks: &["ab", "cd", "e"], limit: 5, expect: Ok("abcde") },
            Case { chunks: &["ab", "cd", "e"], limit: 4, expect: Err(()) },
        ];
        for case in cases {
            let mut it = case.chunks.iter();
            let body = Body::from_poll_fn(move |_| {
                Poll::Ready(it.next().map(|c| Ok(Bytes::from_static(c.as_bytes()))))
            });
            let got = block_on(body.to_bytes(case.limit));
            match case.expect {
                Ok(s) => assert_eq!(got.unwrap(), s),
                Err(()) => assert!(got.unwrap_err().is_too_large()),
            }
        }
    }

    #[test]
    fn channel_abort_is_an_error() {
        block_on(async {
            let (tx, body) = Body::channel(1);
            tokio::spawn(async move {
                tx.send("x".into()).await.unwrap();
                tx.abort().await;
            });
            let err = body.to_bytes(10).await.unwrap_err();
            assert_eq!(err.status(), http::StatusCode::INTERNAL_SERVER_ERROR);
        });
    }
}
