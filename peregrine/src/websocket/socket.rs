//! [`WebSocket`]: one open WebSocket connection, driven by its owner's `recv` and `send`.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::rc::Rc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::BytesMut;

use super::io::{BufferPool, Drain, Io};
use super::message::{CloseFrame, Message};
use super::text::Utf8Bytes;
use crate::body::{Body, BodySender};
use crate::net::{Timer, Transport, WriteStall};
use crate::ws::{self, CloseCode, Conn, Event, Role, SendError, Timeout, Transmit};

/// Output queued beyond this is written before anything more is read: a peer that sends but
/// does not read cannot make the connection buffer its Pongs and echoes without bound.
const HIGH_WATER: usize = 256 * 1024;

/// Read at least this much room at a time.
const MIN_READ: usize = 4 * 1024;

/// The most room made for one read: a frame larger than this is read in pieces of this size.
const MAX_READ: usize = 64 * 1024 + 14;

/// How long a client waits for the server to close the TCP connection after the closing
/// handshake (RFC 6455 §7.1.1: the server closes first).
const CLIENT_LINGER: Duration = Duration::from_secs(1);

/// Why a WebSocket operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The peer broke the protocol (RFC 6455 §7.1.7): our Close with the error's code was
    /// sent, and the connection is closed.
    Protocol(ws::Error),
    /// The connection is closed or closing: nothing more can be sent.
    Closed,
    /// The peer went away without a closing handshake (RFC 6455 §7.1.5: code 1006).
    Abnormal,
    /// No message within the idle timeout (a Close with 1001 was sent), the peer's Close did
    /// not come within the close timeout, or a write stalled past the write timeout.
    TimedOut,
    /// A Ping, Pong or Close payload that does not fit a control frame, or a close code not
    /// allowed on the wire: nothing was sent.
    Invalid(SendError),
    /// The transport failed.
    Io(io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Protocol(e) => write!(f, "websocket: the peer broke the protocol: {e}"),
            Error::Closed => f.write_str("websocket: the connection is closed"),
            Error::Abnormal => f.write_str("websocket: the peer went away without a Close"),
            Error::TimedOut => f.write_str("websocket: timed out"),
            Error::Invalid(e) => write!(f, "{e}"),
            Error::Io(e) => write!(f, "websocket: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<SendError> for Error {
    fn from(e: SendError) -> Error {
        match e {
            SendError::Closed => Error::Closed,
            e => Error::Invalid(e),
        }
    }
}

/// What a wait for input ended with.
enum Woke {
    /// Bytes arrived (in the input buffer).
    Input,
    /// The peer's end of the stream.
    End,
    /// A deadline of the connection passed.
    Deadline,
    /// The server began to drain.
    Drain,
}

/// An open WebSocket connection (RFC 6455), server or client side: [`WebSocket::recv`] the
/// peer's messages, [`WebSocket::send`] yours.
///
/// Pings are answered as they are received (a Pong is sent before `recv` returns the Ping),
/// the closing handshake is answered and completed, and the limits of
/// [`ws::Limits`](crate::ws::Limits) hold: a peer that breaks the protocol or a limit gets the
/// RFC's close code and `recv` returns the [`Error`]. A peer that does not read cannot make
/// the connection buffer without bound: `send` waits until its message is written, and
/// `recv` writes what is queued before it reads past a high-water mark. A server's
/// connection says goodbye (1001) when the server begins to drain.
///
/// `recv` is cancel safe (nothing received is lost when it is dropped before it returns), so
/// it can sit in a `tokio::select!` beside other events; a `send` that is dropped may still
/// have queued its message, which leaves with the next write.
///
/// # Examples
/// An echo handler (see [`WebSocketUpgrade`](super::WebSocketUpgrade)):
/// ```no_run
/// use peregrine::websocket::{Message, WebSocket};
///
/// async fn echo(mut ws: WebSocket) {
///     while let Some(Ok(msg)) = ws.recv().await {
///         if matches!(msg, Message::Text(_) | Message::Binary(_)) && ws.send(msg).await.is_err() {
///             break;
///         }
///     }
/// }
/// ```
pub struct WebSocket {
    conn: Conn,
    io: Io,
    input: BytesMut,
    /// Frames to write: octets, and large payloads shared (an echo's are the read buffer's).
    output: Transmit,
    /// The connection's deadlines (its own, and a stalled write's); made when first needed.
    timer: Option<Timer>,
    drain: Option<Drain>,
    write_timeout: Duration,
    protocol: Option<Utf8Bytes>,
    /// `recv` has reported the end: it returns `None` from now on.
    finished: bool,
    /// A failure to report once, then the end.
    failed: Option<Error>,
    /// Octets of frames read and written so far.
    read_bytes: u64,
    written_bytes: u64,
    /// The room to make before a read when no frame is under way: the size of the largest
    /// frame lately read in pieces (at least [`MIN_READ`], at most [`MAX_READ`]), so that the
    /// next such frame is read whole, without the copy a buffer's regrowth makes of a part.
    read_room: usize,
    /// An instant passed to the connection when its time does not matter
    /// ([`Conn::uses_time`]): no clock read per message without timers.
    epoch: Instant,
    /// When `recv` last looked at the input: the start of its wait, for the timers (one
    /// clock read per pass rather than two).
    wait_from: Instant,
    /// The worker's pool that lends the read buffer while the connection is busy.
    buffers: Option<Rc<dyn BufferPool>>,
    /// This connection keeps its read buffer while idle ([`BufferPool::hold`]).
    held: bool,
}

impl Drop for WebSocket {
    fn drop(&mut self) {
        if let (Some(pool), true) = (&self.buffers, self.held) {
            pool.unhold();
        }
    }
}

impl fmt::Debug for WebSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSocket")
            .field("role", &self.conn.role())
            .field("state", &self.conn.state())
            .field("protocol", &self.protocol)
            .finish()
    }
}

impl WebSocket {
    /// A connection over a whole transport (after an HTTP/1.1 `101`), `input` holding the
    /// bytes that followed the handshake's head.
    pub(crate) fn over_stream(
        conn: Conn,
        transport: Transport,
        input: BytesMut,
        keep_ready: bool,
        write_timeout: Duration,
    ) -> WebSocket {
        let io = Io::Stream { transport, stall: WriteStall::default(), keep_ready, shut: false };
        WebSocket::new(conn, io, input, write_timeout)
    }

    /// A connection over an HTTP/2 stream (extended CONNECT): DATA in through `incoming`, out
    /// through `outgoing`.
    pub(crate) fn over_http2(
        conn: Conn,
        incoming: Body,
        outgoing: BodySender,
        write_timeout: Duration,
    ) -> WebSocket {
        let io = Io::Http2 { incoming, outgoing: Some(outgoing) };
        WebSocket::new(conn, io, BytesMut::new(), write_timeout)
    }

    fn new(conn: Conn, io: Io, input: BytesMut, write_timeout: Duration) -> WebSocket {
        let now = Instant::now();
        WebSocket {
            conn,
            io,
            input,
            output: Transmit::new(),
            timer: None,
            drain: None,
            write_timeout,
            protocol: None,
            finished: false,
            failed: None,
            read_bytes: 0,
            written_bytes: 0,
            read_room: MIN_READ,
            epoch: now,
            wait_from: now,
            buffers: None,
            held: false,
        }
    }

    /// Borrows the read buffer from `buffers` while busy, unless this is one of the few
    /// connections of the worker that keep theirs.
    pub(crate) fn with_buffers(mut self, buffers: Option<Rc<dyn BufferPool>>) -> WebSocket {
        self.held = buffers.as_ref().is_some_and(|pool| pool.hold());
        self.buffers = buffers;
        self
    }

    /// The time to pass to the connection: the clock only when the connection uses it.
    #[inline]
    fn now(&self) -> Instant {
        if self.conn.uses_time() { Instant::now() } else { self.epoch }
    }

    /// Says goodbye (1001) when `drain` completes.
    pub(crate) fn with_drain(mut self, drain: Option<Drain>) -> WebSocket {
        self.drain = drain;
        self
    }

    /// The subprotocol the handshake agreed.
    pub(crate) fn with_protocol(mut self, protocol: Option<Utf8Bytes>) -> WebSocket {
        self.protocol = protocol;
        self
    }

    /// The subprotocol the opening handshake agreed (`Sec-WebSocket-Protocol`), if any.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// Whether permessage-deflate (RFC 7692) was agreed.
    pub fn is_compressed(&self) -> bool {
        self.conn.deflate().is_some()
    }

    /// Octets of WebSocket frames read from and written to the connection so far: frame
    /// headers included, payloads as they went over the wire (compressed, masked); the
    /// opening handshake and TLS records not.
    ///
    /// # Examples
    /// ```no_run
    /// # async fn f(ws: peregrine::websocket::WebSocket) {
    /// let (read, written) = ws.wire_bytes();
    /// println!("{read} octets in, {written} out");
    /// # }
    /// ```
    pub fn wire_bytes(&self) -> (u64, u64) {
        (self.read_bytes, self.written_bytes)
    }

    /// Whether the connection is closed or closing: no more messages can be sent.
    pub fn is_closed(&self) -> bool {
        self.conn.state() != ws::State::Open
    }

    /// The peer's next message: `None` once the connection is over (after the peer's Close,
    /// reported as a [`Message::Close`], or after an error).
    ///
    /// Text and binary messages are whole (fragments assembled, permessage-deflate
    /// inflated). A Ping was already answered when it is returned; a Close was answered, and
    /// the connection is over.
    ///
    /// # Errors
    /// A protocol violation or limit ([`Error::Protocol`], whose Close was sent), a timeout,
    /// the peer going away without a Close ([`Error::Abnormal`]), or the transport's failure.
    /// After an error the next call returns `None`.
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub async fn recv(&mut self) -> Option<Result<Message, Error>> {
        loop {
            if let Some(failed) = self.failed.take() {
                self.finished = true;
                return Some(Err(failed));
            }
            if self.finished {
                return None;
            }
            let now = self.now();
            self.wait_from = now;
            match self.conn.recv(&mut self.input, now) {
                // Messages go out at once, without `on_event`'s future (~80 instructions).
                Some(Event::Binary(bytes)) => return Some(Ok(Message::Binary(bytes))),
                Some(Event::Text(bytes)) => {
                    return Some(Ok(Message::Text(Utf8Bytes::from_validated(bytes))));
                }
                Some(event) => match self.on_event(event).await {
                    Some(message) => return Some(message),
                    None => continue,
                },
                None => {}
            }
            if self.conn.is_closed() {
                // Closed by a deadline or by our own Close answered: write the rest and end.
                let _ = self.flush_all().await;
                self.shut_down().await;
                self.finished = true;
                return None;
            }
            // Queued output (Pongs, a Close) leaves before the wait; a peer that does not read
            // holds up reading only past the high-water mark.
            if let Err(e) = self.write_some().await {
                self.fail(e);
                continue;
            }
            match poll_fn(|cx| self.poll_wait(cx)).await {
                Ok(Woke::Input) => {}
                Ok(Woke::End) => {
                    // RFC 6455 §7.1.5: the connection closed without a Close frame.
                    self.finished = true;
                    return Some(Err(Error::Abnormal));
                }
                Ok(Woke::Deadline) => match self.conn.handle_timeout(Instant::now()) {
                    Some(Timeout::Idle | Timeout::Close) => {
                        let _ = self.flush_all().await;
                        self.shut_down().await;
                        self.fail(Error::TimedOut);
                    }
                    None => {}
                },
                Ok(Woke::Drain) => {
                    // RFC 6455 §7.4.1: 1001, the endpoint is going away (a server going down).
                    let _ = self.conn.close(CloseCode::GOING_AWAY, "");
                }
                Err(e) => self.fail(e),
            }
        }
    }

    /// Queues `message` and writes everything queued, waiting while the peer does not read
    /// (up to the write timeout). A [`Message::Close`] starts the closing handshake (see
    /// [`WebSocket::close`] to also wait for its answer).
    ///
    /// # Errors
    /// [`Error::Closed`] once the connection is closing; [`Error::Invalid`] for a control
    /// payload that does not fit; the transport's failure or [`Error::TimedOut`].
    ///
    /// # Cancel safety
    /// Not cancel safe: if dropped before it returns, the message may or may not be sent (it
    /// leaves with the next write when it was queued).
    pub async fn send(&mut self, message: Message) -> Result<(), Error> {
        self.queue(message)?;
        self.flush().await
    }

    /// Queues `message` without writing it; [`WebSocket::flush`] writes. Messages fed in a
    /// batch leave in one write.
    ///
    /// # Errors
    /// As [`WebSocket::send`]'s queueing.
    pub fn queue(&mut self, message: Message) -> Result<(), Error> {
        // Text and binary go as the message's own bytes: a server writes a large one without
        // copying it (`Conn::send_binary_bytes`).
        match message {
            Message::Text(text) => self.conn.send_text_bytes(text.into_bytes())?,
            Message::Binary(data) => self.conn.send_binary_bytes(data)?,
            Message::Ping(data) => self.conn.send_ping(&data)?,
            Message::Pong(data) => self.conn.send_pong(&data)?,
            Message::Close(None) => self.conn.close(CloseCode::NO_STATUS, "")?,
            Message::Close(Some(frame)) => self.conn.close(frame.code, &frame.reason)?,
        }
        Ok(())
    }

    /// Writes everything queued, waiting while the peer does not read (up to the write
    /// timeout).
    ///
    /// # Errors
    /// The transport's failure, or [`Error::TimedOut`].
    pub async fn flush(&mut self) -> Result<(), Error> {
        self.flush_all().await
    }

    /// Closes the connection: sends a Close with `code` and `reason` (at most 123 bytes), then
    /// reads and drops the peer's messages until its Close answers (or the close timeout of
    /// [`ws::Limits`](crate::ws::Limits) passes), and closes the transport.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a code not allowed on the wire or a reason too long;
    /// [`Error::Closed`] if the connection was already closing; a failure of the transport.
    pub async fn close(&mut self, code: CloseCode, reason: &str) -> Result<(), Error> {
        self.conn.close(code, reason)?;
        self.flush_all().await?;
        while let Some(next) = self.recv().await {
            match next {
                Ok(_) => {}
                Err(Error::Protocol(_) | Error::Abnormal | Error::Closed) => break,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Acts on an event of the wire state: a message to hand out, or `None` to read on.
    async fn on_event(&mut self, event: Event) -> Option<Result<Message, Error>> {
        Some(Ok(match event {
            Event::Text(bytes) => Message::Text(Utf8Bytes::from_validated(bytes)),
            Event::Binary(bytes) => Message::Binary(bytes),
            Event::Ping(bytes) => {
                // RFC 6455 §5.5.2: the Pong goes "as soon as is practical": now, unless the
                // peer is not reading (then with the next write).
                if let Err(e) = self.write_some().await {
                    self.fail(e);
                    return None;
                }
                Message::Ping(bytes)
            }
            Event::Pong(bytes) => Message::Pong(bytes),
            Event::Close { code, reason } => {
                // Our echo (or our own Close, answered) leaves; the server closes the TCP
                // connection first (RFC 6455 §7.1.1).
                let _ = self.flush_all().await;
                self.shut_down().await;
                self.finished = true;
                let frame = (code != CloseCode::NO_STATUS)
                    .then(|| CloseFrame { code, reason: Utf8Bytes::from_validated(reason) });
                Message::Close(frame)
            }
            Event::Error(e) => {
                let _ = self.flush_all().await;
                self.shut_down().await;
                self.finished = true;
                return Some(Err(Error::Protocol(e)));
            }
        }))
    }

    /// Records a failure for `recv` to report once, then end.
    fn fail(&mut self, e: Error) {
        if self.failed.is_none() && !self.finished {
            self.failed = Some(e);
        }
    }

    /// Writes what is queued without waiting for the peer, unless over the high-water mark.
    async fn write_some(&mut self) -> Result<(), Error> {
        if self.output.is_empty() && self.conn.buffered() == 0 {
            return Ok(());
        }
        if matches!(self.io, Io::Http2 { .. }) {
            return self.flush_all().await;
        }
        self.conn.poll_transmit_vectored(&mut self.output);
        match poll_fn(|cx| Poll::Ready(self.poll_write(cx))).await {
            Poll::Ready(result) => result,
            Poll::Pending if self.pending_output() > HIGH_WATER => self.flush_all().await,
            Poll::Pending => Ok(()),
        }
    }

    /// Bytes queued and not written yet.
    fn pending_output(&self) -> usize {
        self.output.len() + self.conn.buffered()
    }

    /// Writes everything queued, with the write timeout.
    async fn flush_all(&mut self) -> Result<(), Error> {
        self.conn.poll_transmit_vectored(&mut self.output);
        if let Io::Http2 { outgoing, .. } = &mut self.io {
            if self.output.is_empty() {
                return Ok(());
            }
            let Some(sender) = outgoing else { return Err(Error::Closed) };
            // One DATA chunk: shared payloads are copied into it.
            let chunk = self.output.take_bytes();
            self.written_bytes += chunk.len() as u64;
            // A peer that reads nothing opens no window: the stream's channel stays full. Past
            // the write timeout the write has stalled, as a stream's would. The timer is armed
            // only once the channel has no room.
            let mut send = std::pin::pin!(sender.send(chunk));
            let sent = match poll_fn(|cx| Poll::Ready(send.as_mut().poll(cx))).await {
                Poll::Ready(sent) => sent,
                Poll::Pending => match tokio::time::timeout(self.write_timeout, send).await {
                    Ok(sent) => sent,
                    Err(_) => return Err(Error::TimedOut),
                },
            };
            return sent.map_err(|_| Error::Io(io::ErrorKind::BrokenPipe.into()));
        }
        poll_fn(|cx| self.poll_flush(cx)).await
    }

    /// `Ready` once everything queued is written; fails after a stall past the write timeout.
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        match self.poll_write(cx) {
            Poll::Ready(r) => Poll::Ready(r),
            Poll::Pending => {
                let Io::Stream { stall, .. } = &self.io else { return Poll::Pending };
                let Some(deadline) = stall.deadline(self.write_timeout) else {
                    return Poll::Pending;
                };
                let deadline = tokio::time::Instant::from_std(deadline);
                let timer = self.timer.get_or_insert_with(|| Timer::new(deadline));
                ready!(timer.poll_until(cx, deadline));
                Poll::Ready(Err(Error::TimedOut))
            }
        }
    }

    /// One attempt at writing the output over a stream: vectored on plain TCP, so shared
    /// payloads go from where they are; a partial write resumes where it stopped.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let Io::Stream { transport, stall, .. } = &mut self.io else {
            return Poll::Ready(Ok(()));
        };
        let before = self.output.len();
        let result = transport.poll_write_buf(cx, &mut self.output, stall);
        self.written_bytes += (before - self.output.len()) as u64;
        match result {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(Error::Io(e))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Waits for input, a deadline or the drain; reads what came.
    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<Result<Woke, Error>> {
        if let Some(drain) = &mut self.drain {
            if drain.poll(cx).is_ready() {
                self.drain = None;
                return Poll::Ready(Ok(Woke::Drain));
            }
        }
        // Output a write left unfinished (the socket was full) goes on as the socket drains,
        // without waiting for input: a peer that waits for the rest of a message before it
        // answers would otherwise never be answered.
        // (The buffer is cleared once written whole, TLS records the transport held included.)
        if matches!(self.io, Io::Stream { .. }) && !self.output.is_empty() {
            if let Poll::Ready(Err(e)) = self.poll_write(cx) {
                return Poll::Ready(Err(e));
            }
        }
        if self.conn.uses_time() {
            if let Some(deadline) = self.conn.poll_timeout(self.wait_from) {
                let deadline = tokio::time::Instant::from_std(deadline);
                let timer = self.timer.get_or_insert_with(|| Timer::new(deadline));
                if timer.poll_until(cx, deadline).is_ready() {
                    return Poll::Ready(Ok(Woke::Deadline));
                }
            }
        }
        match &mut self.io {
            Io::Stream { transport, keep_ready, .. } => loop {
                if self.input.capacity() == 0 {
                    if let Some(pool) = &self.buffers {
                        // The buffer went back to the pool while idle: take one when there is
                        // something to read.
                        ready!(transport.poll_read_ready(cx)).map_err(Error::Io)?;
                        self.input = pool.take();
                    }
                }
                // Room for the rest of a frame under way, or for the largest frame lately
                // read in pieces: a frame is read whole where it can be.
                let want = match self.conn.frame_in_progress() {
                    Some((len, left)) => {
                        let frame = (len as usize).saturating_add(14).min(MAX_READ);
                        self.read_room = self.read_room.max(frame);
                        (left as usize).clamp(MIN_READ, MAX_READ)
                    }
                    None => self.read_room,
                };
                if self.input.capacity() - self.input.len() < want {
                    self.input.reserve(want);
                }
                let read = if *keep_ready {
                    transport.try_read_buf_keep_ready(&mut self.input)
                } else {
                    transport.try_read_buf(&mut self.input)
                };
                match read {
                    Ok(0) => return Poll::Ready(Ok(Woke::End)),
                    Ok(n) => {
                        self.read_bytes += n as u64;
                        return Poll::Ready(Ok(Woke::Input));
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        if let (Some(pool), false, true) =
                            (&self.buffers, self.held, self.input.is_empty())
                        {
                            // Idle until the peer's next bytes: the buffer goes back.
                            pool.put(std::mem::take(&mut self.input));
                        }
                        ready!(transport.poll_read_ready(cx)).map_err(Error::Io)?;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Poll::Ready(Err(Error::Io(e))),
                }
            },
            Io::Http2 { incoming, .. } => match ready!(incoming.poll_chunk(cx)) {
                Some(Ok(chunk)) => {
                    self.read_bytes += chunk.len() as u64;
                    self.input.extend_from_slice(&chunk);
                    Poll::Ready(Ok(Woke::Input))
                }
                Some(Err(e)) => Poll::Ready(Err(Error::Io(io::Error::other(e)))),
                None => Poll::Ready(Ok(Woke::End)),
            },
        }
    }

    /// Ends our side of the transport once the closing handshake is done: a server closes the
    /// TCP connection at once; a client waits a moment for the server to (RFC 6455 §7.1.1).
    async fn shut_down(&mut self) {
        self.conn.shrink();
        let role = self.conn.role();
        let WebSocket { io, input, .. } = self;
        match io {
            Io::Stream { transport, shut, .. } => {
                if std::mem::replace(shut, true) {
                    return;
                }
                if role == Role::Server {
                    let _ = transport.shutdown_write();
                    return;
                }
                // Read (and drop) until the server's end of the stream, for a moment.
                let until_end = poll_fn(|cx| {
                    loop {
                        input.clear();
                        input.reserve(MIN_READ);
                        match transport.try_read_buf_keep_ready(input) {
                            Ok(0) => return Poll::Ready(()),
                            Ok(_) => {}
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                                if transport.poll_read_ready(cx).is_pending() {
                                    return Poll::Pending;
                                }
                            }
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(_) => return Poll::Ready(()),
                        }
                    }
                });
                let _ = tokio::time::timeout(CLIENT_LINGER, until_end).await;
            }
            Io::Http2 { outgoing, .. } => {
                // The end of our DATA: END_STREAM.
                outgoing.take();
            }
        }
    }
}
