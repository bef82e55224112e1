//! HTTP/2 error codes (RFC 9113 §7) and the scope of an error (RFC 9113 §5.4).

use std::fmt;

use super::stream_id::StreamId;

/// An HTTP/2 error code (RFC 9113 §7), carried by RST_STREAM and GOAWAY.
///
/// An open newtype: RFC 9113 §7 "Unknown or unsupported error codes MUST NOT trigger any
/// special behavior", so a code this crate does not name round-trips unchanged.
///
/// # Examples
/// ```
/// use peregrine::http2::Reason;
/// assert_eq!(Reason::from(0xb), Reason::ENHANCE_YOUR_CALM);
/// assert_eq!(format!("{:?}", Reason::CANCEL), "CANCEL");
/// assert_eq!(format!("{:?}", Reason::from(0x1234)), "Reason(0x1234)");
/// assert_eq!(u32::from(Reason::from(0x1234)), 0x1234);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reason(u32);

impl Reason {
    /// 0x0: graceful shutdown, or a stream no longer needed.
    pub const NO_ERROR: Reason = Reason(0x0);
    /// 0x1: an unspecific protocol error.
    pub const PROTOCOL_ERROR: Reason = Reason(0x1);
    /// 0x2: an unexpected internal error.
    pub const INTERNAL_ERROR: Reason = Reason(0x2);
    /// 0x3: the flow-control protocol was violated.
    pub const FLOW_CONTROL_ERROR: Reason = Reason(0x3);
    /// 0x4: a SETTINGS frame was not acknowledged in time.
    pub const SETTINGS_TIMEOUT: Reason = Reason(0x4);
    /// 0x5: a frame arrived after the stream was half-closed.
    pub const STREAM_CLOSED: Reason = Reason(0x5);
    /// 0x6: a frame with an invalid size.
    pub const FRAME_SIZE_ERROR: Reason = Reason(0x6);
    /// 0x7: the stream was refused before any application processing.
    pub const REFUSED_STREAM: Reason = Reason(0x7);
    /// 0x8: the stream is no longer needed.
    pub const CANCEL: Reason = Reason(0x8);
    /// 0x9: the field-section compression context cannot be maintained.
    pub const COMPRESSION_ERROR: Reason = Reason(0x9);
    /// 0xa: a CONNECT tunnel was reset or closed abnormally.
    pub const CONNECT_ERROR: Reason = Reason(0xa);
    /// 0xb: the peer behaves in a way that might be generating excessive load.
    pub const ENHANCE_YOUR_CALM: Reason = Reason(0xb);
    /// 0xc: the transport does not meet minimum security requirements.
    pub const INADEQUATE_SECURITY: Reason = Reason(0xc);
    /// 0xd: the request must be retried over HTTP/1.1.
    pub const HTTP_1_1_REQUIRED: Reason = Reason(0xd);

    /// The code as RFC 9113 §7 names it, or `None` for a code it does not define.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x0 => "NO_ERROR",
            0x1 => "PROTOCOL_ERROR",
            0x2 => "INTERNAL_ERROR",
            0x3 => "FLOW_CONTROL_ERROR",
            0x4 => "SETTINGS_TIMEOUT",
            0x5 => "STREAM_CLOSED",
            0x6 => "FRAME_SIZE_ERROR",
            0x7 => "REFUSED_STREAM",
            0x8 => "CANCEL",
            0x9 => "COMPRESSION_ERROR",
            0xa => "CONNECT_ERROR",
            0xb => "ENHANCE_YOUR_CALM",
            0xc => "INADEQUATE_SECURITY",
            0xd => "HTTP_1_1_REQUIRED",
            _ => return None,
        })
    }
}

impl From<u32> for Reason {
    fn from(code: u32) -> Reason {
        Reason(code)
    }
}

impl From<Reason> for u32 {
    fn from(r: Reason) -> u32 {
        r.0
    }
}

impl fmt::Debug for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "Reason({:#x})", self.0),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// An HTTP/2 protocol error and how far it reaches (RFC 9113 §5.4).
///
/// Frame decoding and the connection state machine report these; the connection turns a
/// [`Error::Stream`] into RST_STREAM and a [`Error::Connection`] into GOAWAY followed by the
/// end of the connection.
///
/// # Examples
/// ```
/// use peregrine::http2::{Error, Reason, StreamId};
/// let e = Error::stream(StreamId::new(1), Reason::STREAM_CLOSED);
/// assert!(!e.is_connection());
/// assert_eq!(e.reason(), Reason::STREAM_CLOSED);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Error {
    /// RFC 9113 §5.4.2: an error about one stream. The stream ends with RST_STREAM(`reason`);
    /// the connection goes on.
    Stream {
        /// The stream in error.
        stream: StreamId,
        /// The code sent in RST_STREAM.
        reason: Reason,
    },
    /// RFC 9113 §5.4.1: an error that ends the connection: GOAWAY(`reason`), then close.
    Connection {
        /// The code sent in GOAWAY.
        reason: Reason,
        /// What went wrong, in a few words; sent as GOAWAY's debug data.
        why: &'static str,
    },
}

impl Error {
    /// A stream error (RFC 9113 §5.4.2).
    pub const fn stream(stream: StreamId, reason: Reason) -> Error {
        Error::Stream { stream, reason }
    }

    /// A connection error (RFC 9113 §5.4.1) with a short explanation for GOAWAY's debug data.
    pub const fn connection(reason: Reason, why: &'static str) -> Error {
        Error::Connection { reason, why }
    }

    /// The error code.
    pub const fn reason(self) -> Reason {
        match self {
            Error::Stream { reason, .. } | Error::Connection { reason, .. } => reason,
        }
    }

    /// Whether the error ends the connection rather than one stream.
    pub const fn is_connection(self) -> bool {
        matches!(self, Error::Connection { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Stream { stream, reason } => write!(f, "stream {stream} error: {reason}"),
            Error::Connection { reason, why } => write!(f, "connection error: {reason} ({why})"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::{Error, Reason};
    use crate::http2::stream_id::StreamId;

    #[test]
    fn every_defined_code_has_its_name_and_unknown_codes_round_trip() {
        let names = [
            "NO_ERROR",
            "PROTOCOL_ERROR",
            "INTERNAL_ERROR",
            "FLOW_CONTROL_ERROR",
            "SETTINGS_TIMEOUT",
            "STREAM_CLOSED",
            "FRAME_SIZE_ERROR",
            "REFUSED_STREAM",
            "CANCEL",
            "COMPRESSION_ERROR",
            "CONNECT_ERROR",
            "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY",
            "HTTP_1_1_REQUIRED",
        ];
        for (code, name) in names.iter().enumerate() {
            let r = Reason::from(code as u32);
            assert_eq!(r.name(), Some(*name));
            assert_eq!(format!("{r:?}"), *name);
        }
        for code in [0xe, 0xff, 0xdead_beef, u32::MAX] {
            let r = Reason::from(code);
            assert_eq!(r.name(), None);
            assert_eq!(u32::from(r), code);
        }
    }

    #[test]
    fn errors_say_their_scope() {
        let s = Error::stream(StreamId::new(3), Reason::CANCEL);
        let c = Error::connection(Reason::PROTOCOL_ERROR, "bad");
        assert!(!s.is_connection() && c.is_connection());
        assert_eq!(s.reason(), Reason::CANCEL);
        assert_eq!(c.reason(), Reason::PROTOCOL_ERROR);
        assert_eq!(s.to_string(), "stream 3 error: CANCEL");
        assert_eq!(c.to_string(), "connection error: PROTOCOL_ERROR (bad)");
    }
}
