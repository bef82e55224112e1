//! The client's one error type: opaque, with predicates that say what happened. The message
//! text is for people, not API.

use std::error::Error as StdError;
use std::fmt;

/// Which deadline passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deadline {
    /// Resolving the host and opening the TCP connection.
    Connect,
    /// The TLS handshake.
    Tls,
    /// The whole request, from the call until the response body's end.
    Request,
    /// No byte arrived for the read timeout while a response was awaited.
    Read,
}

/// What went wrong, for the predicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The request (URL, method, target, a field) cannot be sent as given; nothing was sent.
    Request,
    /// The host did not resolve, or no TCP connection could be opened.
    Connect,
    /// The TLS handshake failed (a certificate error, no common protocol, a bad name).
    Tls,
    /// A deadline passed.
    Timeout(Deadline),
    /// The server broke HTTP: a malformed response head, ambiguous framing, an HTTP/2
    /// connection or stream error.
    Protocol,
    /// A message body failed: the response body is over the limit, shorter than announced, or
    /// its chunked framing is malformed; or the request body failed.
    Body,
    /// The response body passed the size limit (a [`Kind::Body`] error).
    TooLarge,
    /// The connection closed (or failed to write) before the response was complete.
    Closed,
    /// The server reset the HTTP/2 stream (RST_STREAM) with this error code.
    Reset(u32),
}

/// Why a client request failed: an opaque error whose predicates say what happened
/// ([`is_connect`](Error::is_connect), [`is_timeout`](Error::is_timeout),
/// [`is_tls`](Error::is_tls), [`is_protocol`](Error::is_protocol), [`is_body`](Error::is_body),
/// ...). The message is for people and may change.
///
/// # Examples
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let client = peregrine::client::Client::new();
/// let err = client.get("ftp://example.com/").await.unwrap_err();
/// assert!(err.is_request());
/// assert!(!err.is_connect() && !err.is_timeout());
/// # });
/// ```
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: Kind,
    what: &'static str,
    source: Option<Box<dyn StdError + Send + Sync>>,
    /// The server did not process the request (nothing of it was written, or the connection
    /// closed before any byte of the response, or an HTTP/2 refusal): a retry cannot repeat it.
    unprocessed: bool,
}

impl Error {
    pub(crate) fn new(kind: Kind, what: &'static str) -> Error {
        Error { inner: Box::new(Inner { kind, what, source: None, unprocessed: false }) }
    }

    pub(crate) fn with_source(
        kind: Kind,
        what: &'static str,
        source: impl Into<Box<dyn StdError + Send + Sync>>,
    ) -> Error {
        let mut e = Error::new(kind, what);
        e.inner.source = Some(source.into());
        e
    }

    /// Marks the request as not processed by the server (safe to retry).
    pub(crate) fn unprocessed(mut self) -> Error {
        self.inner.unprocessed = true;
        self
    }

    /// Clears the "not processed" mark: the server may have processed the request.
    pub(crate) fn maybe_processed(mut self) -> Error {
        self.inner.unprocessed = false;
        self
    }

    pub(crate) fn kind(&self) -> Kind {
        self.inner.kind
    }

    /// Whether the server cannot have processed the request.
    pub(crate) fn is_unprocessed(&self) -> bool {
        self.inner.unprocessed
    }

    /// A copy of the error's kind and message without its source (errors a connection keeps
    /// reporting after it failed).
    pub(crate) fn shallow_clone(&self) -> Error {
        let mut e = Error::new(self.inner.kind, self.inner.what);
        e.inner.unprocessed = self.inner.unprocessed;
        e
    }

    /// The request could not be sent as given (an unsupported scheme, a malformed URL, target
    /// or field); nothing was sent.
    pub fn is_request(&self) -> bool {
        self.inner.kind == Kind::Request
    }

    /// The host did not resolve, or the TCP connection could not be opened.
    pub fn is_connect(&self) -> bool {
        matches!(self.inner.kind, Kind::Connect | Kind::Timeout(Deadline::Connect))
    }

    /// The TLS handshake failed: an invalid or untrusted certificate, a name mismatch, no
    /// common version or cipher (or it timed out).
    pub fn is_tls(&self) -> bool {
        matches!(self.inner.kind, Kind::Tls | Kind::Timeout(Deadline::Tls))
    }

    /// A deadline passed: connect, TLS handshake, the whole request, or the read timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self.inner.kind, Kind::Timeout(_))
    }

    /// The server broke the protocol: a malformed status line or field, ambiguous framing
    /// (duplicate or invalid Content-Length, Transfer-Encoding with Content-Length), a head too
    /// large, an HTTP/2 connection error.
    pub fn is_protocol(&self) -> bool {
        self.inner.kind == Kind::Protocol
    }

    /// A body failed: the response body is larger than the limit, shorter than its
    /// Content-Length, or has malformed chunked framing; or the request body failed.
    pub fn is_body(&self) -> bool {
        matches!(self.inner.kind, Kind::Body | Kind::TooLarge)
    }

    /// The connection closed (or could not be written) before the response was complete.
    pub fn is_closed(&self) -> bool {
        self.inner.kind == Kind::Closed
    }

    /// The server reset the HTTP/2 stream; [`Error::reset_code`] has its error code.
    pub fn is_reset(&self) -> bool {
        matches!(self.inner.kind, Kind::Reset(_))
    }

    /// The RST_STREAM error code (RFC 9113 §7) of a reset stream.
    pub fn reset_code(&self) -> Option<u32> {
        match self.inner.kind {
            Kind::Reset(code) => Some(code),
            _ => None,
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("client::Error");
        d.field("kind", &self.inner.kind).field("what", &self.inner.what);
        if let Some(s) = &self.inner.source {
            d.field("source", s);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scope = match self.inner.kind {
            Kind::Request => "invalid request",
            Kind::Connect => "connect error",
            Kind::Tls => "TLS error",
            Kind::Timeout(Deadline::Connect) => "connect timed out",
            Kind::Timeout(Deadline::Tls) => "TLS handshake timed out",
            Kind::Timeout(Deadline::Request) => "request timed out",
            Kind::Timeout(Deadline::Read) => "read timed out",
            Kind::Protocol => "protocol error",
            Kind::Body | Kind::TooLarge => "body error",
            Kind::Closed => "connection closed",
            Kind::Reset(_) => "stream reset",
        };
        write!(f, "{scope}: {}", self.inner.what)?;
        if let Kind::Reset(code) = self.inner.kind {
            write!(f, " ({})", crate::http2::Reason::from(code))?;
        }
        if let Some(s) = &self.inner.source {
            write!(f, ": {s}")?;
        }
        Ok(())
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner.source.as_deref().map(|s| s as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        kind: Kind,
        expect: [bool; 8],
    }

    /// Each kind answers exactly its predicates: request, connect, tls, timeout, protocol,
    /// body, closed, reset.
    #[test]
    fn predicates_by_kind() {
        let cases = [
            Case {
                kind: Kind::Request,
                expect: [true, false, false, false, false, false, false, false],
            },
            Case {
                kind: Kind::Connect,
                expect: [false, true, false, false, false, false, false, false],
            },
            Case {
                kind: Kind::Tls,
                expect: [false, false, true, false, false, false, false, false],
            },
            Case {
                kind: Kind::Timeout(Deadline::Connect),
                expect: [false, true, false, true, false, false, false, false],
            },
            Case {
                kind: Kind::Timeout(Deadline::Tls),
                expect: [false, false, true, true, false, false, false, false],
            },
            Case {
                kind: Kind::Timeout(Deadline::Read),
                expect: [false, false, false, true, false, false, false, false],
            },
            Case {
                kind: Kind::Protocol,
                expect: [false, false, false, false, true, false, false, false],
            },
            Case {
                kind: Kind::Body,
                expect: [false, false, false, false, false, true, false, false],
            },
            Case {
                kind: Kind::Closed,
                expect: [false, false, false, false, false, false, true, false],
            },
            Case {
                kind: Kind::Reset(8),
                expect: [false, false, false, false, false, false, false, true],
            },
        ];
        for case in cases {
            let e = Error::new(case.kind, "x");
            let got = [
                e.is_request(),
                e.is_connect(),
                e.is_tls(),
                e.is_timeout(),
                e.is_protocol(),
                e.is_body(),
                e.is_closed(),
                e.is_reset(),
            ];
            assert_eq!(got, case.expect, "{:?}", case.kind);
        }
        assert_eq!(Error::new(Kind::Reset(8), "x").reset_code(), Some(8));
        assert_eq!(
            Error::new(Kind::Reset(8), "by the server").to_string(),
            "stream reset: by the server (CANCEL)"
        );
    }

    #[test]
    fn the_error_is_small_and_thread_safe() {
        fn send_sync<T: Send + Sync + 'static>() {}
        send_sync::<Error>();
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }
}
