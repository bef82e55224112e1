//! The HTTP/1.1 side of a client connection: request heads encoded with the connection's
//! [`RequestPrelude`] (Host and default-port decision made once), responses read in order from
//! the read buffer with the shared head parser, framing rules and body decoder (RFC 9112).
//! No I/O here: the connection hands in its buffers.

use std::collections::VecDeque;
use std::mem::MaybeUninit;

use super::event::{FieldSpan, RequestId};
use super::template::{Reuse, Template};
use super::{Ready, Step};
use crate::Method;
use crate::client::error::{Error, Kind};
use crate::http1::body_decoder::{BodyDecodeError, BodyDecoder};
use crate::http1::chunked;
use crate::http1::encode::{
    EncodeError, RequestPrelude, check_target, encode_request, encode_request_extension,
};
use crate::http1::framing::BodyLength;
use crate::http1::{HeadScanner, Header, LastResponseHead, Limits, ParseError, Status};

/// Header slots of one parse (the head limits cap the count below this).
const MAX_FIELDS: usize = 128;

/// A request whose response has not ended.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    id: RequestId,
    method: Method,
}

/// What the response being read is at.
#[derive(Debug)]
enum Phase {
    Head,
    Body(BodyDecoder),
}

/// A request body being sent by [`H1::send_data`].
#[derive(Clone, Copy, Debug)]
enum Sending {
    Length { id: RequestId, left: u64 },
    Chunked { id: RequestId },
}

/// The HTTP/1.1 state of one client connection.
#[derive(Debug)]
pub(crate) struct H1 {
    prelude: RequestPrelude,
    in_flight: VecDeque<InFlight>,
    /// How many of `in_flight` have a non-idempotent method (kept so `can_send` does not walk
    /// the queue on every pipelined request).
    unsafe_in_flight: usize,
    next_id: u32,
    scanner: HeadScanner,
    phase: Phase,
    /// The fields of the last head, as spans of the read buffer.
    pub(super) spans: Vec<FieldSpan>,
    limits: Limits,
    max_body: u64,
    /// The connection may carry another request (no `Connection: close`, no HTTP/1.0 without
    /// keep-alive, no close-delimited body, no error).
    reusable: bool,
    sending: Option<Sending>,
    /// Bytes of the front response received so far (0: the server may not have seen it).
    received: u64,
    /// The last request head encoded, resent by copy when the next is identical.
    template: Template,
    /// The last response head parsed, answering the heads that repeat it byte for byte (a
    /// server's responses do while their Date does). Boxed: 1.6 KiB the connection's other
    /// moves need not copy.
    last_head: Box<LastResponseHead>,
}

fn encode_error(e: EncodeError) -> Error {
    let what = match e {
        EncodeError::InvalidMethod => "the method is not a token",
        EncodeError::InvalidTarget => {
            "the target is empty, has a byte RFC 3986 forbids, or a form the method cannot use"
        }
        EncodeError::InvalidHeaderName => "a field name is not a token",
        EncodeError::InvalidHeaderValue => {
            "a field value holds CR, LF, NUL or another control byte"
        }
        EncodeError::FramingHeader => {
            "Content-Length or Transfer-Encoding among the fields (the client writes framing)"
        }
        EncodeError::HostHeader => "Host among the fields (the client writes it from the URL)",
        EncodeError::BodyNotAllowed => "a body on CONNECT or TRACE",
        _ => "the request cannot be encoded",
    };
    Error::new(Kind::Request, what)
}

pub(crate) fn parse_error(e: ParseError) -> Error {
    let what = match e {
        ParseError::InvalidStatusLine => "malformed status line",
        ParseError::InvalidStatus => "invalid status code",
        ParseError::InvalidVersion | ParseError::UnsupportedVersion => "not an HTTP/1.x response",
        ParseError::HeadTooLarge => "response head too large",
        ParseError::TooManyHeaders => "too many response header fields",
        ParseError::InvalidContentLength | ParseError::ConflictingContentLength => {
            "invalid or conflicting Content-Length"
        }
        ParseError::TransferEncodingWithContentLength => "Transfer-Encoding with Content-Length",
        ParseError::ChunkedNotFinal
        | ParseError::UnknownTransferCoding
        | ParseError::InvalidTransferEncoding
        | ParseError::TransferEncodingInHttp10 => "unusable Transfer-Encoding",
        ParseError::ObsFold => "obsolete line folding in the response head",
        ParseError::BareCr | ParseError::BareLf => "a line not ended by CRLF in the response head",
        _ => "malformed response header field",
    };
    Error::with_source(Kind::Protocol, what, e)
}

fn body_error(e: BodyDecodeError) -> Error {
    if e == BodyDecodeError::TooLarge {
        return Error::with_source(Kind::TooLarge, "response body larger than the limit", e);
    }
    let what = match e {
        BodyDecodeError::TooLarge => "response body larger than the limit",
        BodyDecodeError::Incomplete => "the connection closed before the end of the response body",
        BodyDecodeError::Chunked(_) => "malformed chunked response body",
    };
    Error::with_source(Kind::Body, what, e)
}

impl H1 {
    pub(crate) fn new(prelude: RequestPrelude, limits: Limits, max_body: u64) -> H1 {
        H1 {
            prelude,
            in_flight: VecDeque::with_capacity(4),
            unsafe_in_flight: 0,
            next_id: 1,
            scanner: HeadScanner::new(),
            phase: Phase::Head,
            spans: Vec::with_capacity(32),
            limits,
            max_body,
            reusable: true,
            sending: None,
            received: 0,
            template: Template::default(),
            last_head: Box::default(),
        }
    }

    /// Requests sent whose response has not ended.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Whether another request may be sent now: the connection is reusable, no request body
    /// is being sent, and pipelining behind the requests in flight is safe (RFC 9112 §9.3.2:
    /// "A user agent SHOULD NOT pipeline requests after a non-idempotent method").
    pub(crate) fn can_send(&self, method: Method) -> bool {
        self.reusable
            && self.sending.is_none()
            && (self.in_flight.is_empty() || (method.is_idempotent() && self.unsafe_in_flight == 0))
    }

    /// Whether the connection can carry more requests once the ones in flight end.
    pub(crate) fn is_reusable(&self) -> bool {
        self.reusable
    }

    /// Encodes a request head, and `body` after it when `length` is `Some(len)` with the
    /// whole body given; `None` length sends the body chunked through `send_data`.
    #[allow(clippy::too_many_arguments)] // the request's parts, passed through as they are
    pub(crate) fn send_request(
        &mut self,
        method: Method,
        token: &str,
        target: &str,
        fields: &[(&str, &[u8])],
        body: &[u8],
        length: Option<u64>,
        out: &mut Vec<u8>,
    ) -> Result<RequestId, Error> {
        if !self.can_send(method) {
            return Err(Error::new(
                Kind::Request,
                "the HTTP/1.1 connection cannot take this request now",
            ));
        }
        let framing = match length {
            Some(n) => BodyLength::Length(n),
            None => BodyLength::Chunked,
        };
        let start = out.len();
        match self.template.get(token.as_bytes(), target, fields, length, 0) {
            Some(Reuse::Whole(head)) => out.extend_from_slice(head),
            Some(Reuse::Around(before, after)) => {
                // The method, fields and framing passed before; only the target is new.
                check_target(method, target).map_err(encode_error)?;
                out.extend_from_slice(before);
                out.extend_from_slice(target.as_bytes());
                out.extend_from_slice(after);
                self.template.retarget(target, target.as_bytes());
            }
            None => {
                let r = if method == Method::Extension {
                    encode_request_extension(&self.prelude, token, target, fields, framing, out)
                } else {
                    encode_request(&self.prelude, method, target, fields, framing, out)
                };
                r.map_err(encode_error)?;
                let head = out.get(start..).unwrap_or_default();
                // The request line starts with the method's token and a space.
                let at = token.len() + 1..token.len() + 1 + target.len();
                self.template.keep(token.as_bytes(), target, fields, length, Some((head, 0, at)));
            }
        }
        let id = RequestId(self.next_id);
        self.next_id = self.next_id.wrapping_add(1).max(1);
        let given = body.len() as u64;
        out.extend_from_slice(body);
        self.sending = match length {
            Some(n) if n > given => Some(Sending::Length { id, left: n - given }),
            Some(_) => None,
            None => Some(Sending::Chunked { id }),
        };
        self.in_flight.push_back(InFlight { id, method });
        self.unsafe_in_flight += usize::from(!method.is_idempotent());
        Ok(id)
    }

    /// Appends request body bytes (chunked framing when the length was not given).
    pub(crate) fn send_data(
        &mut self,
        id: RequestId,
        data: &[u8],
        end: bool,
        out: &mut Vec<u8>,
    ) -> Result<usize, Error> {
        match &mut self.sending {
            Some(Sending::Length { id: sid, left }) if *sid == id => {
                let n = data.len() as u64;
                if n > *left || (end && n != *left) {
                    return Err(Error::new(
                        Kind::Body,
                        "request body length differs from the one announced",
                    ));
                }
                *left -= n;
                out.extend_from_slice(data);
                if *left == 0 {
                    self.sending = None;
                }
            }
            Some(Sending::Chunked { id: sid }) if *sid == id => {
                if !data.is_empty() {
                    chunked::encode_chunk(data, out);
                }
                if end {
                    out.extend_from_slice(b"0\r\n\r\n");
                    self.sending = None;
                }
            }
            _ => return Err(Error::new(Kind::Request, "no request body being sent with this id")),
        }
        Ok(data.len())
    }

    /// Reads the next step of the front response from `buf` (the unconsumed read buffer).
    pub(crate) fn decode(&mut self, buf: &[u8]) -> Result<Step, Error> {
        let Some(front) = self.in_flight.front().copied() else {
            if buf.is_empty() {
                return Ok(Step::NeedInput);
            }
            self.reusable = false;
            return Err(Error::new(
                Kind::Protocol,
                "bytes from the server with no request in flight",
            ));
        };
        match &mut self.phase {
            Phase::Head => self.decode_head(front, buf),
            Phase::Body(dec) => {
                if dec.is_done() {
                    let trailers = dec.take_trailers();
                    self.finish_response();
                    return Ok(Step::Ready(Ready::End { id: front.id, trailers }, 0));
                }
                let chunk = dec.decode(buf).map_err(|e| {
                    self.reusable = false;
                    body_error(e)
                })?;
                self.received += chunk.consumed as u64;
                if !chunk.data.is_empty() {
                    return Ok(Step::Ready(
                        Ready::Data { id: front.id, range: chunk.data },
                        chunk.consumed,
                    ));
                }
                if chunk.consumed > 0 || chunk.done {
                    return Ok(Step::Consumed(chunk.consumed));
                }
                Ok(Step::NeedInput)
            }
        }
    }

    fn decode_head(&mut self, front: InFlight, buf: &[u8]) -> Result<Step, Error> {
        // Nothing read yet (the connection looks before its first read of a response): a
        // parse would answer `Partial` and leave the scanner pending, so the complete head
        // would then be scanned line by line before being parsed, twice the work.
        if buf.is_empty() {
            return Ok(Step::NeedInput);
        }
        let mut slots = [const { MaybeUninit::<Header<'_>>::uninit() }; MAX_FIELDS];
        let parsed = self.last_head.parse_uninit(&mut self.scanner, buf, &mut slots, &self.limits);
        let head = match parsed {
            Ok(Status::Complete(head)) => head,
            Ok(Status::Partial) => {
                self.received = buf.len() as u64;
                return Ok(Step::NeedInput);
            }
            Err(e) => {
                self.reusable = false;
                return Err(parse_error(e));
            }
        };
        self.received = head.len as u64;
        // RFC 9110 §15.2: a client MUST be able to parse 1xx responses before the final one
        // and MAY ignore them (101 switches protocols, below).
        if (100..200).contains(&head.status) && head.status != 101 {
            return Ok(Step::Consumed(head.len));
        }
        let framing = head.framing(front.method).map_err(|e| {
            self.reusable = false;
            parse_error(e)
        })?;
        let base = buf.as_ptr() as usize;
        let off = |p: *const u8| (p as usize).wrapping_sub(base) as u32;
        self.spans.clear();
        for h in head.headers {
            self.spans.push(FieldSpan {
                name: (off(h.name.as_ptr()), h.name.len() as u32),
                value: (off(h.value.as_ptr()), h.value.len() as u32),
            });
        }
        // A tunnel (101, or 2xx to CONNECT) ends HTTP on this connection.
        if !framing.keep_alive || framing.tunnel {
            self.reusable = false;
        }
        self.phase = Phase::Body(BodyDecoder::new(framing.body, self.max_body));
        let ready = Ready::Head { id: front.id, status: head.status, version: head.version };
        Ok(Step::Ready(ready, head.len))
    }

    fn finish_response(&mut self) {
        if let Some(done) = self.in_flight.pop_front() {
            self.unsafe_in_flight =
                self.unsafe_in_flight.saturating_sub(usize::from(!done.method.is_idempotent()));
        }
        self.phase = Phase::Head;
        self.received = 0;
        if !self.reusable {
            // Requests pipelined behind a response that closes the connection are not
            // answered; the connection reports them when it sees the end of input.
        }
    }

    /// The server closed its end: completes a close-delimited body, or fails the front
    /// request (its error says whether the server could have processed it).
    pub(crate) fn eof(&mut self) -> Result<Ready, Error> {
        self.reusable = false;
        let Some(front) = self.in_flight.front().copied() else {
            return Err(Error::new(Kind::Closed, "the server closed the connection").unprocessed());
        };
        match &mut self.phase {
            Phase::Body(dec) => match dec.finish() {
                Ok(()) => {
                    let trailers = dec.take_trailers();
                    self.finish_response();
                    Ok(Ready::End { id: front.id, trailers })
                }
                Err(e) => Err(body_error(e)),
            },
            Phase::Head if self.received == 0 => {
                // Nothing of the response arrived: the classic keep-alive race (the server
                // closed an idle connection as the request went out).
                Err(Error::new(Kind::Closed, "the server closed the connection before responding")
                    .unprocessed())
            }
            Phase::Head => {
                Err(Error::new(Kind::Closed, "the connection closed inside the response head"))
            }
        }
    }
}
