//! The HTTP/3 side of a client connection (RFC 9114): quinn's streams under the sans-I/O
//! `http3::conn::Conn` in the client role. Our control and QPACK streams are opened once at
//! connect; each request takes a bidirectional stream, writes its HEADERS (and DATA) frames,
//! and reads its response through a reused `Message`; the peer's unidirectional streams feed
//! the `Conn`. What every request shares (`:scheme`, `:authority`) is settled once.
//!
//! Polling: one task drives the connection; every quinn read, write and accept registers that
//! task's waker, so a wake-up comes from whichever stream moved.

use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};

use super::Ready;
use super::event::RequestId;
use super::h2::{anticipates_content, check_request, lowercase_names};
use crate::Version;
use crate::client::error::{Error, Kind};
use crate::decimal::Decimal;
use crate::http3::conn::{
    Config as H3Config, Conn, Event as ConnEvent, Message, MessageEvent, RequestPseudo,
};
use crate::http3::{Code, Role, StreamId};

/// Request bytes queued on one stream beyond which a streamed body waits
/// ([`Event::Writable`](super::Event::Writable)).
const MAX_QUEUED: usize = 256 * 1024;

/// One of our unidirectional streams (control, QPACK encoder, QPACK decoder) and its bytes
/// not yet taken by quinn.
#[derive(Debug)]
struct Uni {
    stream: quinn::SendStream,
    buf: Vec<u8>,
    at: usize,
}

impl Uni {
    /// Writes what is queued; `Err` when the stream cannot be written (the connection is
    /// closing: its error comes from quinn's close reason).
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Result<(), ()> {
        while self.at < self.buf.len() {
            match Pin::new(&mut self.stream).poll_write(cx, &self.buf[self.at..]) {
                Poll::Ready(Ok(n)) => self.at += n,
                Poll::Ready(Err(_)) => return Err(()),
                Poll::Pending => return Ok(()),
            }
        }
        self.buf.clear();
        self.at = 0;
        Ok(())
    }
}

/// One request's stream.
struct Stream {
    id: RequestId,
    send: Option<quinn::SendStream>,
    recv: Option<quinn::RecvStream>,
    /// Frames not yet taken by quinn.
    out: Vec<u8>,
    at: usize,
    /// The request ends after `out`: FIN once it is written.
    finish: bool,
    /// A streamed body waits for `out` to drain ([`MAX_QUEUED`]).
    wants_writable: bool,
    /// Whether the request's body is still being given (`send_data` / `send_trailers`).
    sending: bool,
    message: Message,
    /// Read and not yet given to the message.
    chunk: Bytes,
    /// The stream's end was read (after `chunk`).
    fin: bool,
    /// A section waits for the peer's encoder stream.
    blocked: bool,
    unblocked: bool,
    received: u64,
    trailers: Option<Box<HeaderMap>>,
    head: bool,
}

/// The HTTP/3 state of one client connection.
pub(crate) struct H3 {
    /// The UDP socket's endpoint: kept as long as the connection.
    _endpoint: quinn::Endpoint,
    quic: quinn::Connection,
    pub(super) conn: Conn,
    scheme: &'static [u8],
    authority: Box<[u8]>,
    /// `Alt-Used` (RFC 7838 §5: the alternative's host and port) on a connection to an
    /// `Alt-Svc` alternative, sent with every request.
    alt_used: Option<Box<[u8]>>,
    max_body: u64,
    control: Uni,
    encoder: Uni,
    decoder: Uni,
    /// The peer's unidirectional streams (control, QPACK), read as they arrive.
    peer_uni: Vec<(StreamId, quinn::RecvStream)>,
    streams: Vec<Stream>,
    /// Streams ended, kept for their buffers.
    spare: Vec<Stream>,
    /// A bidirectional stream opened while probing for credit, for the next request.
    ready_stream: Option<(quinn::SendStream, quinn::RecvStream)>,
    /// No stream credit at the last try: `poll` waits for it.
    starved: bool,
    /// The body bytes of the last Data event.
    lent: Bytes,
    going_away: bool,
    /// The last poll returned `Pending`.
    waited: bool,
    /// Where the next poll starts among the streams (fairness).
    cursor: usize,
    /// Lowercased field names, for callers that gave mixed case.
    scratch: Vec<u8>,
}

impl std::fmt::Debug for H3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H3").field("streams", &self.streams.len()).finish()
    }
}

fn closed(what: &'static str) -> Error {
    Error::new(Kind::Closed, what)
}

/// A connection-level error from quinn (`None`: still open).
fn quic_error(e: &quinn::ConnectionError) -> Error {
    use quinn::ConnectionError as C;
    match e {
        C::ApplicationClosed(c) if c.error_code.into_inner() == u64::from(Code::H3_NO_ERROR) => {
            closed("the server closed the HTTP/3 connection")
        }
        C::TimedOut => Error::new(
            Kind::Timeout(super::Deadline::Read),
            "the QUIC connection timed out (no packet within its idle timeout)",
        ),
        C::ApplicationClosed(_) | C::ConnectionClosed(_) => Error::with_source(
            Kind::Protocol,
            "the server ended the HTTP/3 connection with an error",
            e.clone(),
        ),
        _ => Error::with_source(Kind::Closed, "the QUIC connection failed", e.clone()),
    }
}

fn h3_error(e: crate::http3::Error) -> Error {
    Error::with_source(Kind::Protocol, "the server broke HTTP/3", e)
}

impl H3 {
    /// Takes over a QUIC connection whose handshake chose `h3`: opens our control and QPACK
    /// streams (RFC 9114 §6.2.1, RFC 9204 §4.2), their first bytes queued.
    pub(crate) async fn new(
        endpoint: quinn::Endpoint,
        quic: quinn::Connection,
        https_authority: &[u8],
        alt_used: Option<Box<[u8]>>,
        config: H3Config,
        max_body: u64,
    ) -> Result<H3, Error> {
        let open = |quic: &quinn::Connection| {
            let quic = quic.clone();
            async move {
                let s = quic.open_uni().await.map_err(|e| quic_error(&e))?;
                Ok::<_, Error>(Uni { stream: s, buf: Vec::new(), at: 0 })
            }
        };
        let mut control = open(&quic).await?;
        let mut encoder = open(&quic).await?;
        let mut decoder = open(&quic).await?;
        let mut conn = Conn::new(Role::Client, config);
        conn.poll_control(&mut control.buf);
        conn.poll_encoder_stream(&mut encoder.buf);
        conn.poll_decoder_stream(&mut decoder.buf);
        Ok(H3 {
            _endpoint: endpoint,
            quic,
            conn,
            scheme: b"https",
            authority: https_authority.into(),
            alt_used,
            max_body,
            control,
            encoder,
            decoder,
            peer_uni: Vec::new(),
            streams: Vec::with_capacity(16),
            spare: Vec::new(),
            ready_stream: None,
            starved: false,
            lent: Bytes::new(),
            going_away: false,
            waited: true,
            cursor: 0,
            scratch: Vec::new(),
        })
    }

    /// Whether a new request can go now: not going away, and a stream to open.
    pub(crate) fn can_send(&mut self) -> bool {
        !self.going_away && self.take_credit()
    }

    /// Opens a bidirectional stream into `ready_stream` if credit allows (RFC 9000 §4.6).
    fn take_credit(&mut self) -> bool {
        if self.ready_stream.is_some() {
            return true;
        }
        let mut cx = Context::from_waker(Waker::noop());
        match pin!(self.quic.open_bi()).poll(&mut cx) {
            Poll::Ready(Ok(pair)) => {
                self.ready_stream = Some(pair);
                self.starved = false;
                true
            }
            _ => {
                self.starved = true;
                false
            }
        }
    }

    pub(crate) fn is_reusable(&self) -> bool {
        !self.going_away && self.quic.close_reason().is_none()
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.streams.len()
    }

    /// Opens a stream with the request head (and `body` when it is whole: `length` is its
    /// size); else the caller streams the body with `send_data`.
    pub(crate) fn send_request(
        &mut self,
        method: &[u8],
        target: &str,
        fields: &[(&str, &[u8])],
        body: &[u8],
        length: Option<u64>,
    ) -> Result<RequestId, Error> {
        if let Some(e) = self.quic.close_reason() {
            return Err(quic_error(&e).unprocessed());
        }
        if self.going_away {
            return Err(closed("the HTTP/3 connection is going away").unprocessed());
        }
        let lowercase = check_request(method, target, fields)?;
        if let Some(n) = length {
            if body.len() as u64 > n {
                return Err(Error::new(Kind::Body, "the body is longer than its length"));
            }
        }
        if !self.take_credit() {
            return Err(Error::new(Kind::Request, "no HTTP/3 stream can open now").unprocessed());
        }
        let (send, recv) = self.ready_stream.take().expect("credit taken");
        let quic_id = send.id().index() << 2;
        let stream_id = StreamId::new(quic_id);
        let id = RequestId(u32::try_from(quic_id >> 2).unwrap_or(u32::MAX));
        let mut s = match self.spare.pop() {
            Some(mut s) => {
                self.conn.reuse_message(&mut s.message, stream_id);
                s.out.clear();
                s
            }
            None => Stream {
                id,
                send: None,
                recv: None,
                out: Vec::new(),
                at: 0,
                finish: false,
                wants_writable: false,
                sending: false,
                message: self.conn.message(stream_id),
                chunk: Bytes::new(),
                fin: false,
                blocked: false,
                unblocked: false,
                received: 0,
                trailers: None,
                head: false,
            },
        };
        s.id = id;
        s.send = Some(send);
        s.recv = Some(recv);
        s.at = 0;
        s.wants_writable = false;
        s.chunk = Bytes::new();
        s.fin = false;
        s.blocked = false;
        s.unblocked = false;
        s.received = 0;
        s.trailers = None;
        s.head = method == b"HEAD";
        s.message.set_no_content(s.head);
        // RFC 9110 §8.6 as HTTP/1.1 and HTTP/2 do: a length when there is content, or when
        // the method anticipates some.
        let digits = match length {
            Some(0) if !anticipates_content(method) => None,
            n => n.map(Decimal::new),
        };
        let cl = digits.as_ref().map(Decimal::as_bytes);
        let named = lowercase_names(fields, lowercase, &mut self.scratch);
        let alt_used = self.alt_used.as_deref().map(|v| (&b"alt-used"[..], v));
        let all = named.chain(cl.map(|d| (&b"content-length"[..], d))).chain(alt_used);
        let pseudo = RequestPseudo {
            method,
            scheme: self.scheme,
            authority: &self.authority,
            path: target.as_bytes(),
        };
        self.conn.encode_request(stream_id, pseudo, all, &mut s.out);
        self.conn.poll_encoder_stream(&mut self.encoder.buf);
        if !body.is_empty() {
            Conn::encode_data_head(body.len(), &mut s.out);
            s.out.extend_from_slice(body);
        }
        let whole = length.is_some_and(|n| body.len() as u64 == n);
        s.finish = whole;
        s.sending = !whole;
        self.streams.push(s);
        Ok(id)
    }

    fn stream_mut(&mut self, id: RequestId) -> Result<&mut Stream, Error> {
        self.streams
            .iter_mut()
            .find(|s| s.id == id && s.sending)
            .ok_or_else(|| Error::new(Kind::Request, "no request body being sent with this id"))
    }

    /// Queues body octets of a streamed request: all of them while the stream's queue is
    /// below [`MAX_QUEUED`], none past it (an [`Event::Writable`](super::Event::Writable)
    /// follows when it drains).
    pub(crate) fn send_data(
        &mut self,
        id: RequestId,
        data: &[u8],
        end: bool,
    ) -> Result<usize, Error> {
        let s = self.stream_mut(id)?;
        if s.out.len() - s.at > MAX_QUEUED {
            s.wants_writable = true;
            return Ok(0);
        }
        if !data.is_empty() {
            Conn::encode_data_head(data.len(), &mut s.out);
            s.out.extend_from_slice(data);
        }
        if end {
            s.sending = false;
            s.finish = true;
        }
        Ok(data.len())
    }

    /// Ends a streamed request with trailers (RFC 9114 §4.1: a HEADERS frame after the DATA);
    /// fields that are not lowercase tokens, hold a control byte or are connection-specific
    /// are left out, as over HTTP/2.
    pub(crate) fn send_trailers(
        &mut self,
        id: RequestId,
        fields: &[(&str, &[u8])],
    ) -> Result<(), Error> {
        let allowed = |(name, value): &&(&str, &[u8])| super::h2::trailer_allowed(name, value);
        let i =
            self.streams.iter().position(|s| s.id == id && s.sending).ok_or_else(|| {
                Error::new(Kind::Request, "no request body being sent with this id")
            })?;
        let s = &mut self.streams[i];
        let stream = s.message.stream();
        let fields = fields.iter().filter(allowed).map(|(n, v)| (n.as_bytes(), *v));
        self.conn.encode_trailers(stream, fields, &mut s.out);
        s.sending = false;
        s.finish = true;
        self.conn.poll_encoder_stream(&mut self.encoder.buf);
        Ok(())
    }

    /// Gives up on a request: its stream reset and its reading stopped with
    /// H3_REQUEST_CANCELLED (RFC 9114 §4.1.1), its QPACK state cancelled.
    pub(crate) fn cancel(&mut self, id: RequestId) {
        if let Some(i) = self.streams.iter().position(|s| s.id == id) {
            let mut s = self.streams.swap_remove(i);
            self.abandon(&mut s, Code::H3_REQUEST_CANCELLED);
            self.spare.push(s);
        }
    }

    fn abandon(&mut self, s: &mut Stream, code: Code) {
        let code = quinn::VarInt::from_u64(u64::from(code)).unwrap_or(quinn::VarInt::MAX);
        if let Some(mut send) = s.send.take() {
            let _ = send.reset(code);
        }
        if let Some(mut recv) = s.recv.take() {
            let _ = recv.stop(code);
        }
        self.conn.cancel_message(&mut s.message);
        self.conn.poll_decoder_stream(&mut self.decoder.buf);
    }

    /// Whether the last poll found nothing (the next event's bytes arrived after it); clears
    /// it.
    pub(crate) fn take_waited(&mut self) -> bool {
        std::mem::take(&mut self.waited)
    }

    /// The next event, or `Pending` with every stream's waker registered.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<Ready, Error>> {
        if let Some(e) = self.quic.close_reason() {
            self.going_away = true;
            return Poll::Ready(Err(quic_error(&e)));
        }
        self.conn.poll_control(&mut self.control.buf);
        self.conn.poll_encoder_stream(&mut self.encoder.buf);
        self.conn.poll_decoder_stream(&mut self.decoder.buf);
        let flushed = [&mut self.control, &mut self.encoder, &mut self.decoder]
            .into_iter()
            .all(|uni| uni.poll_flush(cx).is_ok());
        if !flushed {
            return Poll::Ready(Err(self.closed_error()));
        }
        if let Err(e) = self.poll_peer_uni(cx) {
            return Poll::Ready(Err(e));
        }
        if self.starved && self.ready_stream.is_none() {
            if let Poll::Ready(Ok(pair)) = pin!(self.quic.open_bi()).poll(cx) {
                self.ready_stream = Some(pair);
                self.starved = false;
                return Poll::Ready(Ok(Ready::Writable { id: RequestId(u32::MAX) }));
            }
        }
        let n = self.streams.len();
        for k in 0..n {
            let i = (self.cursor + k) % n;
            match self.poll_stream(i, cx) {
                Ok(None) => {}
                Ok(Some(ready)) => {
                    self.cursor = i + 1;
                    return Poll::Ready(Ok(ready));
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        self.waited = true;
        Poll::Pending
    }

    /// The error of a connection that cannot be written.
    fn closed_error(&mut self) -> Error {
        self.going_away = true;
        match self.quic.close_reason() {
            Some(e) => quic_error(&e),
            None => closed("an HTTP/3 control stream could not be written"),
        }
    }

    /// Accepts and reads the peer's unidirectional streams, and acts on what the `Conn`
    /// reports.
    fn poll_peer_uni(&mut self, cx: &mut Context<'_>) -> Result<(), Error> {
        while let Poll::Ready(r) = pin!(self.quic.accept_uni()).poll(cx) {
            match r {
                Ok(s) => {
                    let id = StreamId::new((s.id().index() << 2) | 3);
                    self.peer_uni.push((id, s));
                }
                Err(e) => return Err(quic_error(&e)),
            }
        }
        let mut i = 0;
        while i < self.peer_uni.len() {
            let (id, read) = {
                let (id, s) = &mut self.peer_uni[i];
                (*id, pin!(s.read_chunk(usize::MAX, true)).poll(cx))
            };
            match read {
                Poll::Pending => i += 1,
                Poll::Ready(Ok(Some(chunk))) => {
                    self.conn.recv_uni(id, &chunk.bytes, false).map_err(|e| self.fail(e))?;
                }
                Poll::Ready(Ok(None)) => {
                    self.conn.recv_uni(id, &[], true).map_err(|e| self.fail(e))?;
                    self.peer_uni.swap_remove(i);
                }
                Poll::Ready(Err(_)) => {
                    self.conn.reset_uni(id).map_err(|e| self.fail(e))?;
                    self.peer_uni.swap_remove(i);
                }
            }
            self.conn_events();
        }
        self.conn.poll_decoder_stream(&mut self.decoder.buf);
        self.conn.poll_encoder_stream(&mut self.encoder.buf);
        let flushed = [&mut self.encoder, &mut self.decoder]
            .into_iter()
            .all(|uni| uni.poll_flush(cx).is_ok());
        if !flushed {
            return Err(self.closed_error());
        }
        Ok(())
    }

    fn conn_events(&mut self) {
        while let Some(event) = self.conn.poll_event() {
            match event {
                ConnEvent::GoAway(_) => self.going_away = true,
                ConnEvent::StopSending(id, code) => {
                    let code =
                        quinn::VarInt::from_u64(u64::from(code)).unwrap_or(quinn::VarInt::MAX);
                    if let Some(i) = self.peer_uni.iter().position(|(s, _)| *s == id) {
                        let (_, mut s) = self.peer_uni.swap_remove(i);
                        let _ = s.stop(code);
                    }
                }
                ConnEvent::Unblocked(id) => {
                    if let Some(s) = self.streams.iter_mut().find(|s| s.message.stream() == id) {
                        s.unblocked = true;
                    }
                }
                _ => {}
            }
        }
    }

    /// A connection error of ours: the connection closed with its code (RFC 9114 §8).
    fn fail(&mut self, e: crate::http3::Error) -> Error {
        let code = quinn::VarInt::from_u64(u64::from(e.code())).unwrap_or(quinn::VarInt::MAX);
        self.quic.close(code, b"");
        self.going_away = true;
        h3_error(e)
    }

    /// Writes stream `i`'s frames and reads its response up to the next event.
    fn poll_stream(&mut self, i: usize, cx: &mut Context<'_>) -> Result<Option<Ready>, Error> {
        let s = &mut self.streams[i];
        if let Some(send) = s.send.as_mut() {
            let mut stopped = false;
            while s.at < s.out.len() {
                match Pin::new(&mut *send).poll_write(cx, &s.out[s.at..]) {
                    Poll::Ready(Ok(n)) => s.at += n,
                    Poll::Ready(Err(_)) => {
                        // The server stopped reading the request (STOP_SENDING): its response
                        // still comes (RFC 9114 §4.1.1 lets a server answer early).
                        stopped = true;
                        break;
                    }
                    Poll::Pending => break,
                }
            }
            if stopped || s.at == s.out.len() {
                s.out.clear();
                s.at = 0;
                if stopped {
                    s.send = None;
                } else if s.finish {
                    let _ = send.finish();
                    s.send = None;
                }
                if s.wants_writable {
                    s.wants_writable = false;
                    return Ok(Some(Ready::Writable { id: s.id }));
                }
            }
        }
        loop {
            let s = &mut self.streams[i];
            let id = s.id;
            let event = if s.unblocked {
                s.unblocked = false;
                s.blocked = false;
                match self.conn.resume_message(&mut s.message) {
                    Ok(e) => e,
                    Err(e) => return self.stream_error(i, e),
                }
            } else if s.blocked {
                return Ok(None);
            } else {
                if s.chunk.is_empty() && !s.fin {
                    let Some(recv) = s.recv.as_mut() else { return Ok(None) };
                    let read = pin!(recv.read_chunk(usize::MAX, true)).poll(cx);
                    match read {
                        Poll::Pending => return Ok(None),
                        Poll::Ready(Ok(Some(chunk))) => s.chunk = chunk.bytes,
                        Poll::Ready(Ok(None)) => s.fin = true,
                        Poll::Ready(Err(e)) => return Ok(Some(self.read_failed(i, e))),
                    }
                }
                let s = &mut self.streams[i];
                let (n, event) = match self.conn.recv_message(&mut s.message, &s.chunk, s.fin) {
                    Ok(r) => r,
                    Err(e) => return self.stream_error(i, e),
                };
                if let Some(MessageEvent::Data(range)) = event {
                    self.lent = s.chunk.slice(range);
                    use bytes::Buf;
                    s.chunk.advance(n);
                    let len = self.lent.len() as u64;
                    s.received += len;
                    if s.received > self.max_body {
                        let mut s = self.streams.swap_remove(i);
                        self.abandon(&mut s, Code::H3_REQUEST_CANCELLED);
                        self.spare.push(s);
                        let e = Error::new(Kind::TooLarge, "response body larger than the limit");
                        return Ok(Some(Ready::Failed { id, error: e }));
                    }
                    return Ok(Some(Ready::Data { id, range: 0..len as usize }));
                }
                {
                    use bytes::Buf;
                    s.chunk.advance(n);
                }
                if event.is_none() && s.chunk.is_empty() && s.fin {
                    // Every octet read, the end given: the message has nothing more to say.
                    return Ok(None);
                }
                event
            };
            // A section decoded may have an acknowledgment to send.
            self.conn.poll_decoder_stream(&mut self.decoder.buf);
            let Some(event) = event else { continue };
            let s = &mut self.streams[i];
            match event {
                MessageEvent::Head => {
                    let status = self.conn.section().status().unwrap_or(0);
                    return Ok(Some(Ready::Head { id, status, version: Version::Http3 }));
                }
                MessageEvent::Informational(_) => {}
                MessageEvent::Data(_) => unreachable!("returned above"),
                MessageEvent::Trailers => {
                    let mut map = HeaderMap::new();
                    for f in self.conn.section().fields() {
                        if let (Ok(n), Ok(v)) =
                            (HeaderName::from_bytes(f.name), HeaderValue::from_bytes(f.value))
                        {
                            map.append(n, v);
                        }
                    }
                    s.trailers = Some(Box::new(map));
                }
                MessageEvent::End => {
                    let mut s = self.streams.swap_remove(i);
                    let trailers = s.trailers.take();
                    // The request may still be sending (a server that answered early): stop.
                    if let Some(mut send) = s.send.take() {
                        if s.at < s.out.len() || s.sending {
                            let code = quinn::VarInt::from_u64(u64::from(Code::H3_NO_ERROR))
                                .unwrap_or(quinn::VarInt::MAX);
                            let _ = send.reset(code);
                        }
                    }
                    s.recv = None;
                    self.spare.push(s);
                    return Ok(Some(Ready::End { id, trailers }));
                }
                MessageEvent::Blocked => {
                    s.blocked = true;
                    return Ok(None);
                }
            }
        }
    }

    /// A stream error from the message layer ends the request (the stream reset with its
    /// code); a connection error ends the connection.
    fn stream_error(&mut self, i: usize, e: crate::http3::Error) -> Result<Option<Ready>, Error> {
        if e.is_connection() {
            return Err(self.fail(e));
        }
        let mut s = self.streams.swap_remove(i);
        self.abandon(&mut s, e.code());
        let id = s.id;
        self.spare.push(s);
        Ok(Some(Ready::Failed { id, error: h3_error(e) }))
    }

    /// The response stream could not be read: reset by the server (RFC 9114 §4.1.1:
    /// H3_REQUEST_REJECTED means it was not processed), or the connection failed.
    fn read_failed(&mut self, i: usize, e: quinn::ReadError) -> Ready {
        let mut s = self.streams.swap_remove(i);
        let id = s.id;
        let error = match e {
            quinn::ReadError::Reset(code) => {
                let code = code.into_inner();
                let e = Error::new(
                    Kind::Reset(u32::try_from(code).unwrap_or(u32::MAX)),
                    "the server reset the HTTP/3 stream",
                );
                if code == u64::from(Code::H3_REQUEST_REJECTED) { e.unprocessed() } else { e }
            }
            quinn::ReadError::ConnectionLost(c) => quic_error(&c),
            _ => closed("the HTTP/3 stream failed"),
        };
        self.abandon(&mut s, Code::H3_REQUEST_CANCELLED);
        self.spare.push(s);
        Ready::Failed { id, error }
    }

    /// The body bytes of the last Data event.
    pub(crate) fn lent(&self) -> &[u8] {
        &self.lent
    }

    /// Closes the connection (H3_NO_ERROR, RFC 9114 §5.2) when it is dropped.
    pub(crate) fn close(&self) {
        let code =
            quinn::VarInt::from_u64(u64::from(Code::H3_NO_ERROR)).unwrap_or(quinn::VarInt::MAX);
        self.quic.close(code, b"");
    }
}

impl Drop for H3 {
    fn drop(&mut self) {
        self.close();
    }
}
