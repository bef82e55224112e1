//! The receiving side: heads (a server's requests, a client's responses), bodies, the drain of
//! a body the server did not read, and the end of the input.

use std::mem::MaybeUninit;

use super::{Clock, Conn, Error, Event, Exchange, InFlight, Pending, Recv, RequestId, Role};
use crate::Method;
use crate::http1::body_decoder::{BodyDecodeError, BodyDecoder};
use crate::http1::framing::{BodyLength, request_framing_remembering};
use crate::http1::{Header, LastHead, ParseError, Status, may_start_request_line};
use crate::http2::conn::PREFACE;

impl Conn {
    /// Reads what `input` (the unread bytes, oldest first) holds for the connection's current
    /// state; see the [module docs](super) for the loop around it. Returns how many bytes of
    /// `input` it used and what it found; `(0, None)` when it needs more input or reads
    /// nothing now (a server answering a request reads its body only when asked, and the next
    /// head only after the response).
    ///
    /// A head is parsed into `storage` (uninitialised header storage the caller lends, on its
    /// stack: at most `min(storage.len(), limits.max_headers)` fields; a head with more asks for
    /// more through [`Event::NeedSlots`]). `last`: a server's memory of the last request
    /// head its connections parsed (shared per worker), so a byte-identical head is not parsed
    /// again. No clock is read: a head's first bytes and a body's first wait start clocks whose
    /// time the next [`Conn::poll_timeout`] gives.
    ///
    /// Inlined: the event (a parsed head, ~200 bytes) is then built in the caller's frame,
    /// where its parts stay in registers; returned out of line it was copied twice per request.
    #[inline(always)]
    pub fn recv<'b, 'h>(
        &mut self,
        input: &'b [u8],
        storage: &'h mut [MaybeUninit<Header<'b>>],
        last: Option<&mut LastHead>,
    ) -> (usize, Option<Event<'b, 'h>>) {
        match self.recv {
            Recv::Head => match self.role {
                Role::Server => self.recv_request_head(input, storage, last),
                Role::Client => self.recv_response_head(input, storage),
            },
            Recv::Body => self.recv_body(input),
            Recv::Drain => (self.recv_drain(input), None),
            Recv::Waiting | Recv::Upgraded | Recv::Closed => (0, None),
        }
    }

    /// Client: [`Conn::recv`] for a client's states alone (a response head, its body); on a
    /// server connection it reads nothing. The client's driver then carries neither the
    /// server's request-head path nor an out-of-line body read where it reads: with both, the
    /// events of its loop cost it a tenth more instructions per response.
    #[inline(always)]
    pub fn recv_response<'b, 'h>(
        &mut self,
        input: &'b [u8],
        storage: &'h mut [MaybeUninit<Header<'b>>],
    ) -> (usize, Option<Event<'b, 'h>>) {
        match (self.role, self.recv) {
            (Role::Client, Recv::Head) => self.recv_response_head(input, storage),
            (Role::Client, Recv::Body) => self.read_body(input),
            _ => (0, None),
        }
    }

    /// The request head at the front of `input`, and the framing rules on it.
    #[inline(always)]
    fn recv_request_head<'b, 'h>(
        &mut self,
        input: &'b [u8],
        storage: &'h mut [MaybeUninit<Header<'b>>],
        last: Option<&mut LastHead>,
    ) -> (usize, Option<Event<'b, 'h>>) {
        if input.is_empty() {
            return (0, None);
        }
        // RFC 9113 §3.3: a client that knows the server speaks HTTP/2 starts with the
        // connection preface; it can only come first.
        if self.first && self.config.http2_preface {
            let n = input.len().min(PREFACE.len());
            if input[..n] == PREFACE[..n] {
                return (0, (n == PREFACE.len()).then_some(Event::Http2Preface));
            }
        }
        let limits = &self.config.limits;
        let n = limits.max_headers.min(storage.len());
        let parsed = match last {
            Some(last) => last.parse_uninit(&mut self.scanner, input, &mut storage[..n], limits),
            None => self.scanner.parse_uninit(input, &mut storage[..n], limits),
        };
        let head = match parsed {
            Ok(Status::Complete(head)) => head,
            Ok(Status::Partial) => {
                // Slowloris defence: the whole head within header_read_timeout of its first
                // byte.
                self.head_clock.start();
                return (0, None);
            }
            Err(ParseError::TooManyHeaders) if n < limits.max_headers => {
                return (0, Some(Event::NeedSlots(limits.max_headers)));
            }
            Err(e) => return (0, Some(self.refuse(input, Error::Head(e), false))),
        };
        let framing = match request_framing_remembering(&head, &mut self.host) {
            Ok(framing) => framing,
            Err(e) => return (0, Some(self.refuse(input, Error::Head(e), false))),
        };
        let is_head = head.method == Method::Head;
        match framing.body {
            // RFC 9110 §15.5.14: a declared length over the limit is refused before it is read.
            BodyLength::Length(n) if n > self.config.max_body_bytes => {
                return (0, Some(self.refuse(input, Error::TooLarge, is_head)));
            }
            // Only a response may be delimited by the close (RFC 9112 §6.3); the framing
            // rules never give it for a request.
            BodyLength::CloseDelimited => {
                return (
                    0,
                    Some(self.refuse(input, Error::Head(ParseError::InvalidFraming), is_head)),
                );
            }
            _ => {}
        }
        self.first = false;
        self.head_clock = Clock::Off;
        self.wait_since = None;
        let id = self.next_id;
        self.next_id = id.wrapping_add(1);
        self.exchange = Exchange {
            id,
            is_head,
            version: head.version,
            keep_alive: framing.keep_alive,
            upgrade: framing.upgrade,
            responded: false,
            close: false,
            settled: false,
        };
        // RFC 9110 §10.1.1 (the framing rules ignore the expectation in HTTP/1.0).
        self.cont = framing.expect_continue;
        if framing.body == BodyLength::Length(0) {
            self.recv = Recv::Waiting;
        } else {
            self.decoder = BodyDecoder::new(framing.body, self.config.max_body_bytes);
            self.body_clock = Clock::Off;
            self.drained = 0;
            self.recv = Recv::Body;
        }
        (head.len, Some(Event::Request { id: RequestId(id), head, framing }))
    }

    /// Refuses the head at the front of `input`: its answer is queued, unless its bytes are
    /// not HTTP/1 at all, and nothing more is read.
    #[cold]
    fn refuse<'b, 'h>(&mut self, input: &[u8], error: Error, is_head: bool) -> Event<'b, 'h> {
        let first = std::mem::take(&mut self.first);
        // On a port where an HTTP/2 client may connect, first bytes that cannot begin an
        // HTTP/1 request line are an HTTP/2 client with a broken preface (RFC 9113 §3.4: a
        // connection error) or not HTTP at all: an HTTP/1.1 400 would be noise to it.
        let error = match error {
            Error::Head(_) if first && self.config.http2_preface => {
                if may_start_request_line(input) { error } else { Error::NotHttp1 }
            }
            other => other,
        };
        if error.answered() {
            self.pending =
                Pending::Refusal { status: error.status(), reason: error.reason(), is_head };
        }
        self.close();
        self.head_clock = Clock::Off;
        Event::Error(error)
    }

    /// The response head at the front of `input`, for the request in flight first.
    #[inline(always)]
    fn recv_response_head<'b, 'h>(
        &mut self,
        input: &'b [u8],
        storage: &'h mut [MaybeUninit<Header<'b>>],
    ) -> (usize, Option<Event<'b, 'h>>) {
        let Some(front) = self.in_flight.front().copied() else {
            if input.is_empty() {
                return (0, None);
            }
            self.recv = Recv::Closed;
            self.reusable = false;
            return (0, Some(Event::Error(Error::Unsolicited)));
        };
        // Nothing read yet: a parse would answer `Partial` and leave the scanner pending, so
        // the complete head would then be scanned line by line before being parsed.
        if input.is_empty() {
            return (0, None);
        }
        let limits = &self.config.limits;
        let n = limits.max_headers.min(storage.len());
        let last = self.last_response.get_or_insert_with(Box::default);
        let head = match last.parse_uninit(&mut self.scanner, input, &mut storage[..n], limits) {
            Ok(Status::Complete(head)) => head,
            Ok(Status::Partial) => {
                self.received = input.len() as u64;
                // The read timeout is a wait for the next byte: new bytes of a head still
                // incomplete start a new wait.
                let seen = u32::try_from(input.len()).unwrap_or(u32::MAX);
                if seen > self.head_seen {
                    self.head_seen = seen;
                    self.wait_since = None;
                }
                return (0, None);
            }
            Err(ParseError::TooManyHeaders) if n < limits.max_headers => {
                return (0, Some(Event::NeedSlots(limits.max_headers)));
            }
            Err(e) => return (0, Some(self.fail(Error::Head(e)))),
        };
        self.received = head.len as u64;
        self.head_seen = 0;
        self.wait_since = None;
        // RFC 9110 §15.2: a client MUST be able to parse 1xx responses before the final one and
        // MAY ignore them (a 101 switches protocols, below).
        if (100..200).contains(&head.status) && head.status != 101 {
            return (head.len, None);
        }
        let framing = match head.framing(front.method) {
            Ok(framing) => framing,
            Err(e) => return (0, Some(self.fail(Error::Head(e)))),
        };
        // RFC 9112 §9.6, RFC 9110 §9.3.6, §15.2.2: after `close`, a tunnel or a 101 the
        // connection carries no further request.
        if !framing.keep_alive || framing.tunnel {
            self.reusable = false;
        }
        self.tunnel = framing.tunnel;
        self.decoder = BodyDecoder::new(framing.body, self.config.max_body_bytes);
        self.recv = Recv::Body;
        (head.len, Some(Event::Response { id: RequestId(front.id), head, framing }))
    }

    /// The client's connection cannot go on.
    #[cold]
    fn fail<'b, 'h>(&mut self, error: Error) -> Event<'b, 'h> {
        self.recv = Recv::Closed;
        self.reusable = false;
        Event::Error(error)
    }

    /// The body of the current message (out of line where [`Conn::recv`] is inlined).
    #[inline]
    fn recv_body<'b, 'h>(&mut self, input: &'b [u8]) -> (usize, Option<Event<'b, 'h>>) {
        self.read_body(input)
    }

    /// [`Conn::recv_body`], inlined.
    #[inline(always)]
    fn read_body<'b, 'h>(&mut self, input: &'b [u8]) -> (usize, Option<Event<'b, 'h>>) {
        // RFC 9110 §10.1.1: the client waits for `100 Continue` before it sends the body; it is
        // sent when the body is first asked for and none of it has come ("a server MAY omit
        // sending a 100 response if it has already received some or all of the content").
        if std::mem::take(&mut self.cont) && input.is_empty() {
            self.pending = Pending::Continue;
        }
        let id = RequestId(self.current_id());
        if self.decoder.is_done() {
            return self.end_body(id, 0);
        }
        if input.is_empty() {
            // Kestrel's MinRequestBodyDataRate: averaged from when the body first waits.
            self.body_clock.start();
            return (0, None);
        }
        let chunk = match self.decoder.decode(input) {
            Ok(chunk) => chunk,
            Err(e) => {
                // The body's framing is lost: the connection closes after the response.
                self.exchange.close = true;
                return (0, Some(self.fail(Error::Body(e))));
            }
        };
        self.received += chunk.consumed as u64;
        self.wait_since = None;
        if !chunk.data.is_empty() {
            let data = &input[chunk.data];
            return (chunk.consumed, Some(Event::Data { id, data }));
        }
        if chunk.done {
            return self.end_body(id, chunk.consumed);
        }
        // Framing alone: all of the input went into it.
        self.body_clock.start();
        (chunk.consumed, None)
    }

    /// The number of the exchange whose message is being received.
    fn current_id(&self) -> u32 {
        match self.role {
            Role::Server => self.exchange.id,
            Role::Client => self.in_flight.front().map_or(0, |f| f.id),
        }
    }

    /// The body ended after `used` more bytes of input.
    fn end_body<'b, 'h>(&mut self, id: RequestId, used: usize) -> (usize, Option<Event<'b, 'h>>) {
        let trailers = self.decoder.take_trailers();
        match self.role {
            Role::Server => {
                self.recv = Recv::Waiting;
                self.cont = false;
            }
            Role::Client => {
                if let Some(done) = self.in_flight.pop_front() {
                    self.unsafe_in_flight -= u32::from(!done.method.is_idempotent());
                }
                self.received = 0;
                // Requests pipelined behind a response that closes the connection get no
                // response; the end of the input reports them.
                self.recv = if self.tunnel { Recv::Upgraded } else { Recv::Head };
            }
        }
        (used, Some(Event::End { id, trailers }))
    }

    /// Discards what `input` holds of a body the server did not read, after its response, up
    /// to `max_drain_bytes` in all; closes the connection past that or on bad framing.
    fn recv_drain(&mut self, input: &[u8]) -> usize {
        let mut at = 0;
        while !self.decoder.is_done() && at < input.len() {
            let Ok(chunk) = self.decoder.decode(&input[at..]) else {
                self.close();
                return at;
            };
            at += chunk.consumed;
            self.drained += chunk.data.len() as u64;
            if self.drained > self.config.max_drain_bytes {
                self.close();
                return at;
            }
            if chunk.consumed == 0 {
                break;
            }
        }
        if self.decoder.is_done() {
            self.recv = Recv::Head;
            self.wait_since = None;
        }
        at
    }

    /// Server, before answering a request whose body was not read to its end: reads what
    /// `input` (the unread bytes) holds of it, without waiting for more, so a malformed body
    /// gets its error (its status answers the request instead, and the connection closes)
    /// rather than a success and a closed connection. What has not arrived is drained after the
    /// response, up to `max_drain_bytes`; a body declared longer, or one the client may be
    /// holding back until `100 Continue`, closes the connection after the response instead.
    /// Returns the bytes used.
    ///
    /// # Errors
    /// The body's framing error ([`Error::Body`]): answer [`Error::status`].
    pub fn settle(&mut self, input: &[u8]) -> (usize, Result<(), Error>) {
        if self.role != Role::Server || self.recv != Recv::Body {
            return (0, Ok(()));
        }
        self.exchange.settled = true;
        let max = self.config.max_drain_bytes;
        if self.decoder.remaining().is_some_and(|n| n > max) {
            self.exchange.close = true;
            self.cont = false;
            return (0, Ok(()));
        }
        let before = self.decoder.received();
        let mut at = 0;
        while !self.decoder.is_done() && at < input.len() && self.decoder.received() - before < max
        {
            match self.decoder.decode(&input[at..]) {
                Ok(chunk) if chunk.consumed == 0 => break,
                Ok(chunk) => at += chunk.consumed,
                Err(e) => {
                    self.exchange.close = true;
                    self.recv = Recv::Closed;
                    self.cont = false;
                    return (at, Err(Error::Body(e)));
                }
            }
        }
        self.drained = self.decoder.received() - before;
        if self.decoder.is_done() {
            self.recv = Recv::Waiting;
        } else if (self.cont && at == input.len()) || self.drained >= max {
            // The client may wait for `100 Continue` and never send the body.
            self.exchange.close = true;
        }
        self.cont = false;
        (at, Ok(()))
    }

    /// The input ended (the peer closed its side). A client's close-delimited body ends here
    /// ([`Event::End`]); a body or head cut short is an error; between messages, nothing.
    /// Nothing more is read afterwards.
    pub fn recv_eof(&mut self) -> Option<Event<'static, 'static>> {
        match (self.role, self.recv) {
            (_, Recv::Closed | Recv::Upgraded) => None,
            (Role::Server, Recv::Head | Recv::Drain) => {
                // Between requests the client is done; inside a head there is nobody left to
                // answer.
                self.close();
                None
            }
            (Role::Server, Recv::Body) => {
                self.exchange.close = true;
                self.recv = Recv::Closed;
                Some(Event::Error(Error::Body(BodyDecodeError::Incomplete)))
            }
            (Role::Server, Recv::Waiting) => {
                // A client that half-closed after its request still gets the response.
                self.exchange.close = true;
                self.recv = Recv::Closed;
                None
            }
            (Role::Client, _) => {
                self.reusable = false;
                let Some(InFlight { id, .. }) = self.in_flight.front().copied() else {
                    self.recv = Recv::Closed;
                    return Some(Event::Error(Error::Closed { unprocessed: true }));
                };
                if self.recv == Recv::Body {
                    return Some(match self.decoder.finish() {
                        Ok(()) => {
                            let (_, event) = self.end_body(RequestId(id), 0);
                            self.recv = Recv::Closed;
                            return event;
                        }
                        Err(e) => self.fail(Error::Body(e)),
                    });
                }
                // Nothing of the response: the classic keep-alive race (the server closed an
                // idle connection as the request went out), which a retry may survive.
                let unprocessed = self.received == 0;
                Some(self.fail(Error::Closed { unprocessed }))
            }
        }
    }
}
