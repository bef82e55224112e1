//! What an HTTP/1.1 [`Conn`](super::Conn) reports, what it decided for a message it sends,
//! and its errors.

use std::fmt;

use http::HeaderMap;

use crate::Version;
use crate::http1::body_decoder::BodyDecodeError;
use crate::http1::encode::EncodeError;
use crate::http1::framing::{BodyLength, RequestFraming, ResponseFraming};
use crate::http1::{ParseError, RequestHead, ResponseHead};

/// A message exchange on a connection: requests are numbered in order from 1, in both roles
/// (the client's request and the response to it share the number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub(crate) u32);

impl RequestId {
    /// The request's position on its connection, from 1.
    pub fn get(self) -> u32 {
        self.0
    }
}

/// Something [`Conn::recv`](super::Conn::recv) found in the input. It may borrow the input and
/// the header storage the driver lent: act on it before the next call.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event<'b, 'h> {
    /// Server: a request head, the whole of the bytes `recv` reported used (the driver splits
    /// them off). Its body, if it has one, follows through [`Event::Data`] when the driver asks
    /// for it; the next head only after the response to this one is finished.
    Request {
        /// The exchange's number.
        id: RequestId,
        /// The parsed head (spans of the input).
        head: RequestHead<'b, 'h>,
        /// What the head says of its body and the connection.
        framing: RequestFraming,
    },
    /// Client: the final response head to request `id` (interim 1xx heads other than `101` are
    /// consumed and skipped, RFC 9110 §15.2), the whole of the bytes `recv` reported used.
    Response {
        /// The request it answers.
        id: RequestId,
        /// The parsed head.
        head: ResponseHead<'b, 'h>,
        /// What the head says of its body and the connection.
        framing: ResponseFraming,
    },
    /// Bytes of the current message's body: a slice of the input, within the bytes `recv`
    /// reported used (which also count the framing around them).
    Data {
        /// The exchange.
        id: RequestId,
        /// The body bytes.
        data: &'b [u8],
    },
    /// The current message's body is complete.
    End {
        /// The exchange.
        id: RequestId,
        /// Its trailer fields (RFC 9110 §6.5), when it had some.
        trailers: Option<HeaderMap>,
    },
    /// Server: the input starts with the HTTP/2 connection preface (RFC 9113 §3.4): the client
    /// speaks HTTP/2 by prior knowledge. Nothing was used; the input goes to HTTP/2 whole.
    Http2Preface,
    /// The head needs more header storage than the driver lent: call again with room for at
    /// least this many headers. Nothing was used.
    NeedSlots(usize),
    /// The input broke the rules. Server: for a head, its refusal is queued (see
    /// [`Conn::poll_transmit`](super::Conn::poll_transmit)) unless [`Error::answered`] says
    /// the bytes get none, and the connection closes after it; for a body, the connection
    /// closes after the response. Client: the connection is unusable. The bytes of a refused
    /// head are not used, so the driver can log its request line.
    Error(Error),
}

/// Why the connection cannot go on reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A head the rules refuse (its status: [`ParseError::status`]).
    Head(ParseError),
    /// A body whose framing is malformed, over a limit, or cut short.
    Body(BodyDecodeError),
    /// Server: a declared body longer than [`Config::max_body_bytes`](super::Config) (RFC 9110
    /// §15.5.14), refused before any of it is read.
    TooLarge,
    /// Server: the connection's first bytes cannot begin an HTTP/1 request line (a mangled
    /// HTTP/2 preface, TLS on a plain port): closed unanswered.
    NotHttp1,
    /// Client: bytes arrived with no request in flight.
    Unsolicited,
    /// Client: the server closed the connection; `unprocessed`: before any byte of the response
    /// to the request in flight (or with none in flight), so the request may be retried.
    Closed {
        /// Nothing of the front response arrived.
        unprocessed: bool,
    },
}

impl Error {
    /// The status a server answers with (the 502 a gateway answers for a response's).
    pub fn status(&self) -> u16 {
        match self {
            Error::Head(e) => e.status(),
            Error::Body(e) => e.status(),
            Error::TooLarge => 413,
            Error::NotHttp1 | Error::Unsolicited | Error::Closed { .. } => 400,
        }
    }

    /// A short reason, the body of the server's refusal.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Head(e) => e.reason(),
            Error::Body(BodyDecodeError::TooLarge) | Error::TooLarge => "body too large",
            Error::Body(_) => "invalid request body",
            Error::NotHttp1 => "not HTTP/1",
            Error::Unsolicited => "bytes with no request in flight",
            Error::Closed { .. } => "connection closed",
        }
    }

    /// Whether a server answers it: false for bytes that are not HTTP/1 at all.
    pub fn answered(&self) -> bool {
        !matches!(self, Error::NotHttp1)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Head(e) => fmt::Display::fmt(e, f),
            Error::Body(e) => fmt::Display::fmt(e, f),
            Error::Closed { .. } => f.write_str("the connection closed"),
            _ => write!(f, "{} ({})", self.reason(), self.status()),
        }
    }
}

impl std::error::Error for Error {}

/// A deadline that passed ([`Conn::handle_timeout`](super::Conn::handle_timeout)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timeout {
    /// Server: a request head did not arrive whole within `header_read_timeout` (the
    /// slowloris defence): the connection closes without an answer (the client may not speak
    /// HTTP). A log records it as a 408, as nginx does.
    Head,
    /// Server: the connection sat idle between requests for `keep_alive_timeout`: it closes.
    Idle,
    /// Server: the request body the handler waits for arrives slower than the minimum rate:
    /// the body fails, the driver answers `408 Request Timeout`, and the connection closes.
    BodyRate,
    /// Server: an unread body being drained after its response arrives too slowly: the
    /// connection closes.
    Drain,
    /// Client: no byte for `read_timeout` while a response was awaited: the connection fails.
    Read,
}

/// What the connection decided for a response it is about to send
/// ([`Conn::send_response`](super::Conn::send_response)): the head is written from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponsePlan {
    /// The status code.
    pub status: u16,
    /// The version of the request answered: it decides how persistence is signalled (RFC 9112
    /// §9.3) and whether chunked framing may be used.
    pub version: Version,
    /// The head says `Connection: close`: the connection ends after this response.
    pub close: bool,
    /// The framing the head announces (RFC 9112 §6.3, RFC 9110 §8.6).
    pub length: BodyLength,
    /// Body bytes follow the head: false for HEAD, 1xx, 204 and 304 (RFC 9110 §6.4.1).
    pub send_body: bool,
}

/// Why a message cannot be sent as asked. Nothing was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SendError {
    /// Not now: server, no request is waiting for this response (or its response began);
    /// client, a request body is being sent, pipelining behind the requests in flight would be
    /// unsafe (RFC 9112 §9.3.2), or the connection will not carry another request.
    NotReady,
    /// A `101` to a request that did not ask to upgrade (RFC 9110 §15.2.2), or an interim
    /// status where a final one is due.
    InvalidStatus,
    /// More body bytes than the framing announced.
    TooLong,
    /// Fewer body bytes than the framing announced, at its end: the connection must close.
    TooShort,
    /// No body is being sent.
    NoBody,
    /// The head could not be encoded.
    Encode(EncodeError),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::NotReady => f.write_str("the connection cannot send this now"),
            SendError::InvalidStatus => f.write_str("a status the exchange does not allow"),
            SendError::TooLong => f.write_str("more body bytes than the framing announced"),
            SendError::TooShort => f.write_str("fewer body bytes than the framing announced"),
            SendError::NoBody => f.write_str("no body is being sent"),
            SendError::Encode(e) => write!(f, "the head cannot be encoded: {e:?}"),
        }
    }
}

impl std::error::Error for SendError {}
