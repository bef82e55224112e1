//! The HTTP/1.1 side of a client connection: a driver of an [`http1::conn::Conn`] in the client
//! role, which owns the wire rules (pipelining order and safety, keep-alive, the framing of
//! bodies both ways, interim responses, the switch after a `101`, the end of input, the read
//! timeout). Here: request heads encoded with the connection's [`RequestPrelude`] (Host and
//! default-port decision made once) or copied from the last one ([`LastRequest`]), the `Conn`'s
//! events turned into the connection's [`Ready`] steps, and its errors into the client's.
//! No I/O here: the connection hands in its buffers.

use std::mem::MaybeUninit;
use std::sync::Arc;
use std::time::Instant;

use super::event::RequestId;
use super::last_request::{LastRequest, Reuse};
use super::{Ready, Step};
use crate::Method;
use crate::client::error::{Error, Kind};
use crate::headers::FieldSpan;
use crate::http1::body_decoder::BodyDecodeError;
use crate::http1::conn::{self as h1conn, Conn, Role, SendError};
use crate::http1::encode::{
    EncodeError, RequestPrelude, check_target, encode_request, encode_request_extension,
};
use crate::http1::{Header, ParseError};

/// Headers lent to one parse, on the stack; a head with more fields than this (and than
/// the head limits allow) gets a larger loan ([`h1conn::Event::NeedSlots`]).
const MAX_FIELDS: usize = 128;

/// The HTTP/1.1 state of one client connection.
#[derive(Debug)]
pub(crate) struct H1 {
    pub(super) conn: Conn,
    prelude: RequestPrelude,
    /// The fields of the last head, as spans of the read buffer.
    pub(super) spans: Vec<FieldSpan>,
    /// The request whose body [`H1::send_data`] sends, while it does.
    sending: Option<RequestId>,
    /// The last request head encoded, resent by copy when the next is identical.
    last_request: LastRequest,
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

fn send_error(e: SendError) -> Error {
    match e {
        SendError::Encode(e) => encode_error(e),
        SendError::NotReady => {
            Error::new(Kind::Request, "the HTTP/1.1 connection cannot take this request now")
        }
        SendError::NoBody => Error::new(Kind::Request, "no request body being sent with this id"),
        _ => Error::new(Kind::Body, "request body length differs from the one announced"),
    }
}

fn parse_error(e: ParseError) -> Error {
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

/// The client's error for what made the `Conn` stop reading.
#[cold]
fn conn_error(e: h1conn::Error) -> Error {
    match e {
        h1conn::Error::Head(e) => parse_error(e),
        h1conn::Error::Body(e) => body_error(e),
        h1conn::Error::Unsolicited => {
            Error::new(Kind::Protocol, "bytes from the server with no request in flight")
        }
        // Nothing of the response arrived: the classic keep-alive race (the server closed an
        // idle connection as the request went out), which a retry may survive.
        h1conn::Error::Closed { unprocessed: true } => {
            Error::new(Kind::Closed, "the server closed the connection before responding")
                .unprocessed()
        }
        h1conn::Error::Closed { unprocessed: false } => {
            Error::new(Kind::Closed, "the connection closed inside the response head")
        }
        // The server's errors: a client's `Conn` reports none of them.
        _ => Error::new(Kind::Protocol, "the response broke HTTP/1.1"),
    }
}

/// Records where a head's fields lie in `buf`, the read buffer it was parsed from, so the
/// event can lend them once the parse's storage is gone.
#[inline]
fn spans(spans: &mut Vec<FieldSpan>, buf: &[u8], headers: &[Header<'_>]) {
    let base = buf.as_ptr() as usize;
    let off = |p: *const u8| (p as usize).wrapping_sub(base) as u32;
    spans.clear();
    for h in headers {
        spans.push(FieldSpan {
            name: (off(h.name.as_ptr()), h.name.len() as u32),
            value: (off(h.value.as_ptr()), h.value.len() as u32),
        });
    }
}

/// The error of the end of input once nothing more is read.
#[cold]
fn closed() -> Error {
    Error::new(Kind::Closed, "the server closed the connection").unprocessed()
}

impl H1 {
    pub(crate) fn new(prelude: RequestPrelude, config: Arc<h1conn::Config>, now: Instant) -> H1 {
        H1 {
            conn: Conn::new(Role::Client, config, now),
            prelude,
            spans: Vec::with_capacity(32),
            sending: None,
            last_request: LastRequest::default(),
        }
    }

    /// Encodes a request head, and `body` after it when `length` is `Some(len)` with the
    /// whole body given; `None` length sends the body chunked through `send_data`.
    #[allow(clippy::too_many_arguments)] // the request's parts, passed through as they are
    #[inline]
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
        let H1 { conn, prelude, last_request, .. } = self;
        let sent = conn.send_request(method, length, body, out, |framing, out| {
            let start = out.len();
            match last_request.get(token.as_bytes(), target, fields, length, 0) {
                Some(Reuse::Whole(head)) => out.extend_from_slice(head),
                Some(Reuse::Around(before, after)) => {
                    // The method, fields and framing passed before; only the target is new.
                    check_target(method, target)?;
                    out.extend_from_slice(before);
                    out.extend_from_slice(target.as_bytes());
                    out.extend_from_slice(after);
                    last_request.retarget(target, target.as_bytes());
                }
                None => {
                    if method == Method::Extension {
                        encode_request_extension(prelude, token, target, fields, framing, out)?;
                    } else {
                        encode_request(prelude, method, target, fields, framing, out)?;
                    }
                    let head = out.get(start..).unwrap_or_default();
                    // The request line starts with the method's token and a space.
                    let at = token.len() + 1..token.len() + 1 + target.len();
                    last_request.keep(
                        token.as_bytes(),
                        target,
                        fields,
                        length,
                        Some((head, 0, at)),
                    );
                }
            }
            Ok(())
        });
        let id = RequestId(sent.map_err(send_error)?.get());
        // What the `Conn` does too: a body of unknown length, or longer than the bytes given,
        // goes on through `send_data`.
        let given = body.len() as u64;
        self.sending = match length {
            Some(n) if n <= given => None,
            _ => Some(id),
        };
        Ok(id)
    }

    /// Appends request body bytes (chunked framing when the length was not given); `end`
    /// finishes the body.
    pub(crate) fn send_data(
        &mut self,
        id: RequestId,
        data: &[u8],
        end: bool,
        out: &mut Vec<u8>,
    ) -> Result<usize, Error> {
        if self.sending != Some(id) {
            return Err(send_error(SendError::NoBody));
        }
        // No bytes, no call: once a Content-Length body's last byte is sent the `Conn` takes
        // no more, and the caller's closing call (`end` with nothing) only finishes it.
        if !data.is_empty() {
            self.conn.send_data(data, out).map_err(send_error)?;
        }
        if end {
            self.sending = None;
            self.conn.finish(&[], out).map_err(send_error)?;
        }
        Ok(data.len())
    }

    /// Ends the body being sent with `trailers` (chunked only; see `Conn::finish`).
    pub(crate) fn send_trailers(
        &mut self,
        id: RequestId,
        trailers: &[(&str, &[u8])],
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        if self.sending != Some(id) {
            return Err(send_error(SendError::NoBody));
        }
        self.sending = None;
        self.conn.finish(trailers, out).map_err(send_error)
    }

    /// Reads the next step of the front response from `buf` (the unconsumed read buffer).
    pub(crate) fn decode(&mut self, buf: &[u8]) -> Result<Step, Error> {
        let mut storage = [const { MaybeUninit::<Header<'_>>::uninit() }; MAX_FIELDS];
        // The same call on two paths, a body's and a head's: each path's events are turned
        // into steps on their own, so the head's large event is never merged with a body's
        // (moving every field of one into the other cost more than the rest of the step).
        if self.conn.is_receiving_body() {
            let (used, event) = self.conn.recv_response(buf, &mut storage);
            return self.step(buf, used, event);
        }
        // Between bodies nothing can come of no input: the `Conn` is not asked (twice per
        // response, as the connection looks before and after its wait).
        if buf.is_empty() {
            return self.idle(buf);
        }
        let (used, event) = self.conn.recv_response(buf, &mut storage);
        self.step(buf, used, event)
    }

    /// The step for what the `Conn` found in `buf`, having used `used` bytes of it.
    #[inline(always)]
    fn step(
        &mut self,
        buf: &[u8],
        used: usize,
        event: Option<h1conn::Event<'_, '_>>,
    ) -> Result<Step, Error> {
        let ready = match event {
            None if used > 0 => return Ok(Step::Consumed(used)),
            None => return self.idle(buf),
            Some(h1conn::Event::Response { id, head, .. }) => {
                spans(&mut self.spans, buf, head.headers);
                Ready::Head { id: RequestId(id.get()), status: head.status, version: head.version }
            }
            Some(h1conn::Event::Data { id, data }) => {
                let at = (data.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize);
                Ready::Data { id: RequestId(id.get()), range: at..at + data.len() }
            }
            Some(h1conn::Event::End { id, trailers }) => {
                Ready::End { id: RequestId(id.get()), trailers: trailers.map(Box::new) }
            }
            Some(h1conn::Event::NeedSlots(n)) => return self.decode_large(buf, n),
            Some(h1conn::Event::Error(e)) => return Err(conn_error(e)),
            Some(_) => return Err(conn_error(h1conn::Error::Unsolicited)),
        };
        Ok(Step::Ready(ready, used))
    }

    /// The `Conn` read nothing: it needs more input, or reads no more HTTP/1.1.
    #[inline]
    fn idle(&self, buf: &[u8]) -> Result<Step, Error> {
        if self.conn.is_closed() {
            return Err(closed());
        }
        // RFC 9110 §15.2.2, §9.3.6: after a `101` or a CONNECT's 2xx the bytes belong to
        // another protocol, which this connection does not speak.
        if !buf.is_empty() && self.conn.is_upgraded() {
            return Err(Error::new(Kind::Protocol, "bytes after the switch of protocols"));
        }
        Ok(Step::NeedInput)
    }

    /// A head with more fields than [`MAX_FIELDS`]: parsed again with room for `n`.
    #[cold]
    fn decode_large(&mut self, buf: &[u8], n: usize) -> Result<Step, Error> {
        let mut storage = Vec::new();
        storage.resize_with(n, MaybeUninit::<Header<'_>>::uninit);
        let (used, event) = self.conn.recv_response(buf, &mut storage);
        let Some(h1conn::Event::Response { id, head, .. }) = event else {
            return match event {
                Some(h1conn::Event::Error(e)) => Err(conn_error(e)),
                _ => Err(conn_error(h1conn::Error::Head(ParseError::TooManyHeaders))),
            };
        };
        spans(&mut self.spans, buf, head.headers);
        let ready =
            Ready::Head { id: RequestId(id.get()), status: head.status, version: head.version };
        Ok(Step::Ready(ready, used))
    }

    /// The server closed its end: completes a close-delimited body, or fails the front
    /// request (its error says whether the server could have processed it).
    pub(crate) fn eof(&mut self) -> Result<Ready, Error> {
        match self.conn.recv_eof() {
            Some(h1conn::Event::End { id, trailers }) => {
                Ok(Ready::End { id: RequestId(id.get()), trailers: trailers.map(Box::new) })
            }
            Some(h1conn::Event::Error(h1conn::Error::Closed { unprocessed: true }))
                if self.conn.in_flight() == 0 =>
            {
                Err(closed())
            }
            Some(h1conn::Event::Error(e)) => Err(conn_error(e)),
            // Nothing more is read (the input ended before, or the protocol switched).
            _ => Err(closed()),
        }
    }
}
