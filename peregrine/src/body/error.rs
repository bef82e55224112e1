//! Why reading a body failed: one opaque error with predicates and the status a server answers.

use std::fmt;
use std::io;

/// Why reading a body failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodyError {
    kind: BodyErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyErrorKind {
    /// Longer than the limit.
    TooLarge,
    /// The connection ended before the body did.
    Incomplete,
    /// Malformed chunked framing (RFC 9112 §7.1).
    Invalid,
    /// The client sent too slowly (minimum data rate).
    TimedOut,
    /// Read after the request was answered.
    Detached,
    /// The producer aborted a streamed body.
    Aborted,
    /// A socket error.
    Io(io::ErrorKind),
}

impl BodyError {
    pub(crate) const fn new(kind: BodyErrorKind) -> BodyError {
        BodyError { kind }
    }

    pub(crate) const fn kind(&self) -> BodyErrorKind {
        self.kind
    }

    /// The body is longer than the allowed size (→ 413).
    pub fn is_too_large(&self) -> bool {
        self.kind == BodyErrorKind::TooLarge
    }

    /// The connection ended (or failed) before the body was complete.
    pub fn is_incomplete(&self) -> bool {
        matches!(self.kind, BodyErrorKind::Incomplete | BodyErrorKind::Io(_))
    }

    /// The chunked framing of the body is malformed (→ 400).
    pub fn is_invalid(&self) -> bool {
        self.kind == BodyErrorKind::Invalid
    }

    /// The client sent the body slower than the minimum data rate (→ 408).
    pub fn is_timeout(&self) -> bool {
        self.kind == BodyErrorKind::TimedOut
    }

    /// The status a server answers this error with.
    pub fn status(&self) -> http::StatusCode {
        match self.kind {
            BodyErrorKind::TooLarge => http::StatusCode::PAYLOAD_TOO_LARGE,
            BodyErrorKind::TimedOut => http::StatusCode::REQUEST_TIMEOUT,
            BodyErrorKind::Aborted => http::StatusCode::INTERNAL_SERVER_ERROR,
            _ => http::StatusCode::BAD_REQUEST,
        }
    }

    fn message(&self) -> &'static str {
        match self.kind {
            BodyErrorKind::TooLarge => "body too large",
            BodyErrorKind::Incomplete => "connection closed before the end of the body",
            BodyErrorKind::Invalid => "invalid chunked body",
            BodyErrorKind::TimedOut => "body data rate below the minimum",
            BodyErrorKind::Detached => "body read after its request was answered",
            BodyErrorKind::Aborted => "body aborted by its producer",
            BodyErrorKind::Io(_) => "socket error while reading the body",
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())?;
        if let BodyErrorKind::Io(kind) = self.kind {
            write!(f, " ({kind})")?;
        }
        Ok(())
    }
}

impl std::error::Error for BodyError {}

impl From<BodyError> for io::Error {
    fn from(e: BodyError) -> io::Error {
        let kind = match e.kind {
            BodyErrorKind::Io(kind) => kind,
            BodyErrorKind::Incomplete => io::ErrorKind::UnexpectedEof,
            BodyErrorKind::TimedOut => io::ErrorKind::TimedOut,
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, e)
    }
}
