//! The HTTP/2 side of a client connection: the shared `http2::Conn` in the client role, with
//! what every request of the connection shares prepared once (`:scheme`, `:authority`), request
//! fields checked against RFC 9113 §8.2 without allocating, and the events turned into the
//! connection's [`Ready`] steps. No I/O here.

use std::time::Instant;

use http::{HeaderMap, HeaderName, HeaderValue};

use super::event::RequestId;
use super::last_request::{LastRequest, Reuse};
use super::{Ready, Step};
use crate::Version;
use crate::client::error::{Error, Kind};
use crate::decimal::Decimal;
use crate::http1::field_syntax::{has_value_ctl, is_target, is_tchar};
use crate::http2::{
    self, Conn, Event, HeadersKind, Reason, RequestHead, Role, SendError, StreamId,
};

/// A request body the send windows did not take in full (bodies given whole to
/// `send_request`): the rest, sent as the windows open.
#[derive(Debug)]
struct Rest {
    stream: StreamId,
    bytes: Vec<u8>,
    at: usize,
}

/// The HTTP/2 state of one client connection.
#[derive(Debug)]
pub(crate) struct H2 {
    pub(super) conn: Conn,
    scheme: &'static [u8],
    /// The `:authority` value: the same bytes HTTP/1.1 sends as Host.
    authority: Box<[u8]>,
    /// Response body octets received per open stream, against `max_body`.
    received: Vec<(StreamId, u64)>,
    max_body: u64,
    /// Lowercased field names, for callers that gave mixed case.
    scratch: Vec<u8>,
    /// An End to report after the Head or Data that carried END_STREAM.
    pending_end: Option<RequestId>,
    /// Octets of the last Data event, released to the peer once the caller moved past it.
    release: Option<(StreamId, usize)>,
    rests: Vec<Rest>,
    going_away: bool,
    /// The server's first SETTINGS were applied (RFC 8441 §3: extended CONNECT waits for them).
    settings: bool,
    /// The last request's header block, resent by copy when the next is identical.
    last_request: LastRequest,
}

fn send_error(e: SendError) -> Error {
    match e {
        SendError::Closed => {
            Error::new(Kind::Closed, "the HTTP/2 connection is closed").unprocessed()
        }
        SendError::GoingAway => {
            Error::new(Kind::Closed, "the HTTP/2 connection is going away").unprocessed()
        }
        SendError::StreamLimit => Error::new(
            Kind::Request,
            "the server's SETTINGS_MAX_CONCURRENT_STREAMS is reached on this connection",
        )
        .unprocessed(),
        SendError::StreamIdsExhausted => {
            Error::new(Kind::Closed, "the connection's stream ids are used up").unprocessed()
        }
        _ => Error::new(Kind::Request, "no request body being sent with this id"),
    }
}

/// RFC 9113 §8.2.2: connection-specific fields are not sent in HTTP/2 (`te` only as
/// `trailers`); the connection writes `:authority` instead of Host and frames the body itself.
fn forbidden(name: &[u8], value: &[u8]) -> Option<&'static str> {
    let lower = |s: &str| name.eq_ignore_ascii_case(s.as_bytes());
    if lower("connection")
        || lower("keep-alive")
        || lower("proxy-connection")
        || lower("transfer-encoding")
        || lower("upgrade")
    {
        return Some("a connection-specific field (RFC 9113 §8.2.2)");
    }
    if lower("te") && !value.eq_ignore_ascii_case(b"trailers") {
        return Some("TE other than \"trailers\" (RFC 9113 §8.2.2)");
    }
    if lower("host") {
        return Some("Host among the fields (the client writes :authority from the URL)");
    }
    if lower("content-length") {
        return Some("Content-Length among the fields (the client writes framing)");
    }
    None
}

/// Checks a request's target and fields against RFC 9113 §8.2 and §8.3 (which RFC 9114
/// §4.2 and §4.3.1 repeat for HTTP/3); says whether a field name needs lowercasing.
pub(super) fn check_request(
    method: &[u8],
    target: &str,
    fields: &[(&str, &[u8])],
) -> Result<bool, Error> {
    check_path(method, target.as_bytes())?;
    let mut lowercase = false;
    for &(name, value) in fields {
        let n = name.as_bytes();
        if n.is_empty() || !n.iter().all(|&b| is_tchar(b)) {
            return Err(Error::new(Kind::Request, "a field name is not a token"));
        }
        lowercase |= n.iter().any(u8::is_ascii_uppercase);
        // RFC 9113 §8.2.1: no NUL, CR, LF (nor another CTL, as HTTP/1.1), and no
        // leading or trailing whitespace.
        let ws = |b: Option<&u8>| matches!(b, Some(b' ' | b'\t'));
        if has_value_ctl(value) || ws(value.first()) || ws(value.last()) {
            return Err(Error::new(Kind::Request, "a field value is not valid in HTTP/2"));
        }
        if let Some(what) = forbidden(n, value) {
            return Err(Error::new(Kind::Request, what));
        }
    }
    Ok(lowercase)
}

/// A checked request's fields with their names in lower case (RFC 9113 §8.2.1, RFC 9114
/// §4.2), copied into `scratch` only when [`check_request`] said one needs it.
pub(super) fn lowercase_names<'a>(
    fields: &'a [(&'a str, &'a [u8])],
    lowercase: bool,
    scratch: &'a mut Vec<u8>,
) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + Clone + 'a {
    if lowercase {
        scratch.clear();
        for (name, _) in fields {
            scratch.extend(name.bytes().map(|b| b.to_ascii_lowercase()));
        }
    }
    let scratch: &'a [u8] = scratch;
    let mut at = 0;
    fields.iter().map(move |&(name, value)| {
        let n = if lowercase {
            let s = scratch.get(at..at + name.len()).unwrap_or_default();
            at += name.len();
            s
        } else {
            name.as_bytes()
        };
        (n, value)
    })
}

/// Whether a trailer field may be sent (RFC 9113 §8.1, §8.2.2; RFC 9114 §4.2): a lowercase
/// token for a name, no control byte in the value, not connection-specific.
pub(super) fn trailer_allowed(name: &str, value: &[u8]) -> bool {
    let n = name.as_bytes();
    !n.is_empty()
        && n.iter().all(|&b| is_tchar(b) && !b.is_ascii_uppercase())
        && !has_value_ctl(value)
        && !matches!(
            name,
            "connection"
                | "keep-alive"
                | "proxy-connection"
                | "transfer-encoding"
                | "upgrade"
                | "te"
        )
}

/// RFC 9113 §8.3.1: `:path` is origin-form, or `*` for OPTIONS. CONNECT (§8.5) tunnels, which
/// this client does not offer, but for the extended CONNECT of RFC 8441, whose `:path` is
/// origin-form too.
fn check_path(method: &[u8], t: &[u8]) -> Result<(), Error> {
    let asterisk = t == b"*" && method == b"OPTIONS";
    if !(asterisk || t.first() == Some(&b'/')) || !is_target(t) {
        return Err(Error::new(Kind::Request, "the target is not an origin-form path"));
    }
    Ok(())
}

impl H2 {
    /// `authority` is the `Host` value of the connection's prelude (default port left out).
    pub(crate) fn new(
        https: bool,
        authority: &[u8],
        config: http2::Config,
        max_body: u64,
        now: Instant,
    ) -> H2 {
        H2 {
            conn: Conn::new(Role::Client, config, now),
            scheme: if https { b"https" } else { b"http" },
            authority: authority.into(),
            received: Vec::with_capacity(16),
            max_body,
            scratch: Vec::new(),
            pending_end: None,
            release: None,
            rests: Vec::new(),
            going_away: false,
            settings: false,
            last_request: LastRequest::default(),
        }
    }

    /// Whether a new stream can open now.
    pub(crate) fn can_send(&self) -> bool {
        self.conn.can_open_stream()
    }

    /// Whether the connection can carry new requests later (no GOAWAY, not closed).
    pub(crate) fn is_reusable(&self) -> bool {
        !self.going_away && !self.conn.is_closed()
    }

    /// Whether the server allows extended CONNECT (RFC 8441 §3): `None` until its first
    /// SETTINGS were applied, then whether they carried SETTINGS_ENABLE_CONNECT_PROTOCOL = 1.
    pub(crate) fn extended_connect(&self) -> Option<bool> {
        self.settings.then(|| self.conn.peer_settings().enable_connect_protocol)
    }

    /// Opens a stream with an extended CONNECT for `protocol` (RFC 8441 §4: `:method`
    /// CONNECT with `:protocol`, `:scheme`, `:path` and `:authority`); the caller streams its
    /// DATA with `send_data`.
    ///
    /// # Errors
    /// [`Error::is_request`] before the server's SETTINGS allowed it (RFC 8441 §3: "If a
    /// client were to use the provisions of the extended CONNECT method defined in this
    /// document without first receiving an ENABLE_CONNECT_PROTOCOL parameter, a non-supporting
    /// peer would detect a malformed request"), for a protocol that is not a token, and for
    /// fields as [`H2::send_request`]'s.
    pub(crate) fn send_connect(
        &mut self,
        protocol: &str,
        target: &str,
        fields: &[(&str, &[u8])],
    ) -> Result<RequestId, Error> {
        if self.extended_connect() != Some(true) {
            return Err(Error::new(
                Kind::Request,
                "the server's SETTINGS do not allow extended CONNECT (RFC 8441 §3)",
            ));
        }
        let p = protocol.as_bytes();
        if p.is_empty() || !p.iter().all(|&b| is_tchar(b)) {
            return Err(Error::new(Kind::Request, "the :protocol is not a token"));
        }
        let stream = self.encode_request(b"CONNECT", target, fields, None, Some(p))?;
        // Its DATA is a tunnel's, not a response body: no body limit (`max_body` is for
        // responses; the tunnel's user keeps its own).
        Ok(RequestId(stream.get()))
    }

    /// Streams opened and not ended.
    pub(crate) fn in_flight(&self) -> usize {
        self.conn.active_streams().0 as usize
    }

    /// Opens a stream with the request head; `body` follows when `length` is `Some` (the
    /// whole body given), else the caller streams it with `send_data`.
    pub(crate) fn send_request(
        &mut self,
        method: &[u8],
        target: &str,
        fields: &[(&str, &[u8])],
        body: &[u8],
        length: Option<u64>,
    ) -> Result<RequestId, Error> {
        let end_stream = length == Some(0);
        let generation = self.conn.encoder_generation();
        let head = method == b"HEAD";
        let reused = match self.last_request.get(method, target, fields, length, generation) {
            // The same request as the last one, the table unchanged: the same bytes.
            Some(Reuse::Whole(block)) => {
                match self.conn.send_request_block(block, head, end_stream) {
                    Ok(stream) => Some(stream),
                    // Bigger than the peer's frame size now: encoded in full below.
                    Err(SendError::InvalidState) => None,
                    Err(e) => return Err(send_error(e)),
                }
            }
            // The same but for its path: the same bytes around the new path's encoding.
            Some(Reuse::Around(before, after)) => {
                check_path(method, target.as_bytes())?;
                let t = target.as_bytes();
                match self.conn.send_request_with_path(before, t, after, head, end_stream) {
                    Ok(stream) => {
                        match (self.conn.last_request_block(), self.conn.last_request_path()) {
                            (Some((block, _, _)), Some(at)) => match block.get(at) {
                                Some(path) => self.last_request.retarget(target, path),
                                None => {
                                    self.last_request.keep(method, target, fields, length, None)
                                }
                            },
                            _ => self.last_request.keep(method, target, fields, length, None),
                        }
                        Some(stream)
                    }
                    // Too big for one frame: encoded in full below.
                    Err(SendError::InvalidState) => None,
                    Err(e) => return Err(send_error(e)),
                }
            }
            None => None,
        };
        let stream = match reused {
            Some(stream) => stream,
            None => {
                let stream = self.encode_request(method, target, fields, length, None)?;
                let kept = match (self.conn.last_request_block(), self.conn.last_request_path()) {
                    (Some((block, before, after)), Some(at)) if before == after => {
                        Some((block, after, at))
                    }
                    _ => None,
                };
                self.last_request.keep(method, target, fields, length, kept);
                stream
            }
        };
        self.received.push((stream, 0));
        if let Some(n) = length {
            if n > 0 && body.len() as u64 == n {
                let took = self.conn.send_data(stream, body, true).map_err(send_error)?;
                if took < body.len() {
                    let bytes = body[took..].to_vec();
                    self.rests.push(Rest { stream, bytes, at: 0 });
                }
            } else if body.len() as u64 > n {
                self.conn.reset(stream, Reason::CANCEL);
                return Err(Error::new(Kind::Body, "the body is longer than its length"));
            } else if !body.is_empty() {
                let took = self.conn.send_data(stream, body, false).map_err(send_error)?;
                if took < body.len() {
                    self.rests.push(Rest { stream, bytes: body[took..].to_vec(), at: 0 });
                }
            }
        }
        Ok(RequestId(stream.get()))
    }

    /// Checks a request against RFC 9113 §8.2 and §8.3 and encodes it; `protocol` is an
    /// extended CONNECT's `:protocol` (RFC 8441 §4).
    fn encode_request(
        &mut self,
        method: &[u8],
        target: &str,
        fields: &[(&str, &[u8])],
        length: Option<u64>,
        protocol: Option<&[u8]>,
    ) -> Result<StreamId, Error> {
        let t = target.as_bytes();
        if method == b"CONNECT" && protocol.is_none() {
            return Err(Error::new(Kind::Request, "CONNECT is not supported"));
        }
        let lowercase = check_request(method, target, fields)?;
        let head = RequestHead {
            method,
            scheme: self.scheme,
            authority: &self.authority,
            path: t,
            protocol,
        };
        // RFC 9110 §8.6 as HTTP/1.1 does: a length when there is content, or when the method
        // anticipates some (POST, PUT, PATCH, extensions).
        let digits = match length {
            Some(0) if !anticipates_content(method) => None,
            n => n.map(Decimal::new),
        };
        let cl = digits.as_ref().map(Decimal::as_bytes);
        let named = lowercase_names(fields, lowercase, &mut self.scratch);
        let all = named.chain(cl.map(|d| (&b"content-length"[..], d)));
        self.conn.send_request(&head, all, length == Some(0)).map_err(send_error)
    }

    /// Ends a request's body with trailers (RFC 9113 §8.1): fields whose names are not
    /// lowercase tokens, whose values hold a control byte, or that are connection-specific
    /// (§8.2.2) are left out.
    pub(crate) fn send_trailers(
        &mut self,
        id: RequestId,
        fields: &[(&str, &[u8])],
    ) -> Result<(), Error> {
        let allowed = |(name, value): &&(&str, &[u8])| trailer_allowed(name, value);
        let fields = fields.iter().filter(allowed).map(|(n, v)| (n.as_bytes(), *v));
        self.conn.send_trailers(StreamId::new(id.0), fields).map_err(send_error)
    }

    /// Sends body octets as the windows allow; returns how many were taken.
    pub(crate) fn send_data(
        &mut self,
        id: RequestId,
        data: &[u8],
        end: bool,
    ) -> Result<usize, Error> {
        self.conn.send_data(StreamId::new(id.0), data, end).map_err(send_error)
    }

    /// Gives back the octets of the last Data event (the caller has moved past it).
    pub(crate) fn release(&mut self) {
        if let Some((stream, n)) = self.release.take() {
            self.conn.release_capacity(stream, n);
        }
    }

    /// Resets a request's stream (the caller gave up on it).
    pub(crate) fn cancel(&mut self, id: RequestId) {
        let stream = StreamId::new(id.0);
        self.conn.reset(stream, Reason::CANCEL);
        self.forget(stream);
    }

    fn forget(&mut self, stream: StreamId) {
        if let Some(i) = self.received.iter().position(|(s, _)| *s == stream) {
            self.received.swap_remove(i);
        }
        self.rests.retain(|r| r.stream != stream);
    }

    /// Sends more of a body the windows held back.
    fn push_rest(&mut self, stream: StreamId) -> bool {
        let Some(i) = self.rests.iter().position(|r| r.stream == stream) else { return false };
        let r = &mut self.rests[i];
        let took = self.conn.send_data(stream, &r.bytes[r.at..], true).unwrap_or(usize::MAX);
        if took == usize::MAX || r.at + took >= r.bytes.len() {
            self.rests.swap_remove(i);
        } else {
            r.at += took;
        }
        true
    }

    /// One step of input: `buf` is the unconsumed read buffer.
    pub(crate) fn decode(&mut self, buf: &[u8], now: Instant) -> Result<Step, Error> {
        if let Some(id) = self.pending_end.take() {
            self.forget(StreamId::new(id.0));
            return Ok(Step::Ready(Ready::End { id, trailers: None }, 0));
        }
        let base = buf.as_ptr() as usize;
        let (used, got) = {
            let (used, event) = self.conn.recv(buf, now);
            let got = event.map(|e| Got::of(e, base));
            (used, got)
        };
        let Some(got) = got else {
            return Ok(if used > 0 { Step::Consumed(used) } else { Step::NeedInput });
        };
        let ready = match got {
            Got::Head { stream, status, end } => {
                let id = RequestId(stream.get());
                if end {
                    self.pending_end = Some(id);
                }
                Ready::Head { id, status, version: Version::Http2 }
            }
            Got::Trailers { stream, map } => {
                self.forget(stream);
                Ready::End { id: RequestId(stream.get()), trailers: Some(Box::new(map)) }
            }
            Got::Data { stream, range, end } => {
                let id = RequestId(stream.get());
                let len = range.len();
                let over = match self.received.iter_mut().find(|(s, _)| *s == stream) {
                    Some((_, n)) => {
                        *n += len as u64;
                        *n > self.max_body
                    }
                    None => false,
                };
                if over {
                    self.conn.release_capacity(stream, len);
                    self.cancel(id);
                    let e = Error::new(Kind::TooLarge, "response body larger than the limit");
                    Ready::Failed { id, error: e }
                } else if len == 0 {
                    if !end {
                        return Ok(Step::Consumed(used));
                    }
                    self.forget(stream);
                    Ready::End { id, trailers: None }
                } else {
                    self.release = Some((stream, len));
                    if end {
                        self.pending_end = Some(id);
                    }
                    Ready::Data { id, range }
                }
            }
            Got::Reset { stream, reason, by_peer, retryable } => {
                self.forget(stream);
                let mut error = if by_peer {
                    Error::new(Kind::Reset(reason.into()), "the server reset the stream")
                } else {
                    Error::new(Kind::Protocol, "malformed response (stream reset by the client)")
                };
                if retryable {
                    error = error.unprocessed();
                }
                Ready::Failed { id: RequestId(stream.get()), error }
            }
            Got::Writable(stream) => {
                if self.push_rest(stream) {
                    return Ok(Step::Consumed(used));
                }
                Ready::Writable { id: RequestId(stream.get()) }
            }
            Got::GoAway => {
                self.going_away = true;
                return Ok(Step::Consumed(used));
            }
            Got::Settings => {
                self.settings = true;
                return Ok(Step::Consumed(used));
            }
            Got::Closed { graceful, why } => {
                self.going_away = true;
                return Err(if graceful {
                    Error::new(Kind::Closed, "the server closed the HTTP/2 connection")
                        .unprocessed()
                } else {
                    Error::new(Kind::Protocol, why)
                });
            }
            Got::Other => return Ok(Step::Consumed(used)),
        };
        Ok(Step::Ready(ready, used))
    }

    /// The end of input from the server.
    pub(crate) fn eof(&mut self) -> Error {
        self.going_away = true;
        let e = Error::new(Kind::Closed, "the server closed the HTTP/2 connection");
        if self.in_flight() == 0 { e.unprocessed() } else { e }
    }
}

/// An event with what it borrowed copied out or turned into ranges of the input.
enum Got {
    Head { stream: StreamId, status: u16, end: bool },
    Trailers { stream: StreamId, map: HeaderMap },
    Data { stream: StreamId, range: std::ops::Range<usize>, end: bool },
    Reset { stream: StreamId, reason: Reason, by_peer: bool, retryable: bool },
    Writable(StreamId),
    GoAway,
    Settings,
    Closed { graceful: bool, why: &'static str },
    Other,
}

impl Got {
    fn of(event: Event<'_>, base: usize) -> Got {
        match event {
            Event::Headers { stream, kind: HeadersKind::Response, end_stream, section } => {
                Got::Head { stream, status: section.status().unwrap_or(0), end: end_stream }
            }
            Event::Headers { stream, kind: HeadersKind::Trailers, section, .. } => {
                let mut map = HeaderMap::new();
                for f in section.fields() {
                    if let (Ok(n), Ok(v)) =
                        (HeaderName::from_bytes(f.name), HeaderValue::from_bytes(f.value))
                    {
                        map.append(n, v);
                    }
                }
                Got::Trailers { stream, map }
            }
            Event::Data { stream, data, end_stream } => {
                let start = (data.as_ptr() as usize).wrapping_sub(base);
                Got::Data { stream, range: start..start + data.len(), end: end_stream }
            }
            Event::Reset { stream, reason, by_peer, retryable } => {
                Got::Reset { stream, reason, by_peer, retryable }
            }
            Event::Writable { stream } => Got::Writable(stream),
            Event::GoAway { .. } => Got::GoAway,
            Event::Settings(_) => Got::Settings,
            Event::Closed(c) => Got::Closed {
                graceful: c.by_peer && c.reason == Reason::NO_ERROR,
                why: if c.by_peer {
                    "the server ended the connection with an error"
                } else {
                    c.why
                },
            },
            _ => Got::Other,
        }
    }
}

/// RFC 9110 §9.3: POST, PUT, PATCH and extension methods may carry content.
pub(super) fn anticipates_content(method: &[u8]) -> bool {
    !matches!(method, b"GET" | b"HEAD" | b"DELETE" | b"OPTIONS" | b"TRACE" | b"CONNECT")
}
