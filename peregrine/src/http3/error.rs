//! HTTP/3 and QPACK error codes (RFC 9114 §8.1, RFC 9204 §6) and the scope of an error (RFC
//! 9114 §8: "Stream errors ... abruptly terminate the stream"; connection errors close it).

use std::fmt;

use super::stream_id::StreamId;

/// An HTTP/3 application error code (RFC 9114 §8.1, RFC 9204 §6), carried by QUIC's
/// RESET_STREAM, STOP_SENDING and CONNECTION_CLOSE frames.
///
/// An open newtype: RFC 9114 §9 "Implementations MUST ignore unknown or unsupported values in
/// all extensible protocol elements", so a code this crate does not name round-trips unchanged.
/// Codes of the form `0x1f * N + 0x21` are reserved for greasing (RFC 9114 §8.1), and
/// [`Code::is_reserved`] says so.
///
/// # Examples
/// ```
/// use peregrine::http3::Code;
/// assert_eq!(Code::from(0x10c), Code::H3_REQUEST_CANCELLED);
/// assert_eq!(format!("{:?}", Code::QPACK_DECOMPRESSION_FAILED), "QPACK_DECOMPRESSION_FAILED");
/// assert_eq!(format!("{:?}", Code::from(0x21)), "Code(0x21)");
/// assert!(Code::from(0x21).is_reserved());
/// assert_eq!(u64::from(Code::from(0x1234)), 0x1234);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Code(u64);

impl Code {
    /// 0x100: no error; closing a connection or stream that is no longer needed.
    pub const H3_NO_ERROR: Code = Code(0x100);
    /// 0x101: a protocol violation no more specific code covers.
    pub const H3_GENERAL_PROTOCOL_ERROR: Code = Code(0x101);
    /// 0x102: an internal error in the HTTP stack.
    pub const H3_INTERNAL_ERROR: Code = Code(0x102);
    /// 0x103: the peer created a stream that will not be accepted.
    pub const H3_STREAM_CREATION_ERROR: Code = Code(0x103);
    /// 0x104: a stream required by the HTTP/3 connection was closed or reset.
    pub const H3_CLOSED_CRITICAL_STREAM: Code = Code(0x104);
    /// 0x105: a frame not permitted in the current state or on the current stream.
    pub const H3_FRAME_UNEXPECTED: Code = Code(0x105);
    /// 0x106: a frame that fails its layout requirements or has an invalid size.
    pub const H3_FRAME_ERROR: Code = Code(0x106);
    /// 0x107: the peer exhibits behaviour that might be generating excessive load.
    pub const H3_EXCESSIVE_LOAD: Code = Code(0x107);
    /// 0x108: a stream ID or push ID used incorrectly.
    pub const H3_ID_ERROR: Code = Code(0x108);
    /// 0x109: an error in the payload of a SETTINGS frame.
    pub const H3_SETTINGS_ERROR: Code = Code(0x109);
    /// 0x10a: no SETTINGS frame at the beginning of the control stream.
    pub const H3_MISSING_SETTINGS: Code = Code(0x10a);
    /// 0x10b: a server rejected a request without performing any application processing.
    pub const H3_REQUEST_REJECTED: Code = Code(0x10b);
    /// 0x10c: the request or its response (including pushed response) is cancelled.
    pub const H3_REQUEST_CANCELLED: Code = Code(0x10c);
    /// 0x10d: the client's stream terminated without containing a fully formed request.
    pub const H3_REQUEST_INCOMPLETE: Code = Code(0x10d);
    /// 0x10e: an HTTP message was malformed and cannot be processed.
    pub const H3_MESSAGE_ERROR: Code = Code(0x10e);
    /// 0x10f: the TCP connection of a CONNECT request was reset or abnormally closed.
    pub const H3_CONNECT_ERROR: Code = Code(0x10f);
    /// 0x110: the requested operation cannot be served over HTTP/3; retry over HTTP/1.1.
    pub const H3_VERSION_FALLBACK: Code = Code(0x110);
    /// 0x200: the decoder failed to interpret an encoded field section (RFC 9204 §6).
    pub const QPACK_DECOMPRESSION_FAILED: Code = Code(0x200);
    /// 0x201: the decoder failed to interpret an encoder instruction (RFC 9204 §6).
    pub const QPACK_ENCODER_STREAM_ERROR: Code = Code(0x201);
    /// 0x202: the encoder failed to interpret a decoder instruction (RFC 9204 §6).
    pub const QPACK_DECODER_STREAM_ERROR: Code = Code(0x202);

    /// The code's name, or `None` for a code RFC 9114 and RFC 9204 do not define.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x100 => "H3_NO_ERROR",
            0x101 => "H3_GENERAL_PROTOCOL_ERROR",
            0x102 => "H3_INTERNAL_ERROR",
            0x103 => "H3_STREAM_CREATION_ERROR",
            0x104 => "H3_CLOSED_CRITICAL_STREAM",
            0x105 => "H3_FRAME_UNEXPECTED",
            0x106 => "H3_FRAME_ERROR",
            0x107 => "H3_EXCESSIVE_LOAD",
            0x108 => "H3_ID_ERROR",
            0x109 => "H3_SETTINGS_ERROR",
            0x10a => "H3_MISSING_SETTINGS",
            0x10b => "H3_REQUEST_REJECTED",
            0x10c => "H3_REQUEST_CANCELLED",
            0x10d => "H3_REQUEST_INCOMPLETE",
            0x10e => "H3_MESSAGE_ERROR",
            0x10f => "H3_CONNECT_ERROR",
            0x110 => "H3_VERSION_FALLBACK",
            0x200 => "QPACK_DECOMPRESSION_FAILED",
            0x201 => "QPACK_ENCODER_STREAM_ERROR",
            0x202 => "QPACK_DECODER_STREAM_ERROR",
            _ => return None,
        })
    }

    /// Whether the code is reserved for greasing, `0x1f * N + 0x21` (RFC 9114 §8.1: such codes
    /// "have no meaning" and are treated as unknown).
    pub const fn is_reserved(self) -> bool {
        is_reserved(self.0)
    }
}

/// Whether `v` has the form `0x1f * N + 0x21`, the values RFC 9114 reserves for greasing in
/// each of its code spaces: frame types (§7.2.8), setting identifiers (§7.2.4.1), stream types
/// (§6.2.3) and error codes (§8.1).
pub const fn is_reserved(v: u64) -> bool {
    v >= 0x21 && (v - 0x21) % 0x1f == 0
}

impl From<u64> for Code {
    fn from(code: u64) -> Code {
        Code(code)
    }
}

impl From<Code> for u64 {
    fn from(c: Code) -> u64 {
        c.0
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "Code({:#x})", self.0),
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// An HTTP/3 protocol error and how far it reaches (RFC 9114 §8).
///
/// The connection turns an [`Error::Stream`] into a reset of the stream (QUIC RESET_STREAM
/// and STOP_SENDING with the code, through the driver) and an [`Error::Connection`] into the
/// end of the connection (QUIC CONNECTION_CLOSE with the code).
///
/// # Examples
/// ```
/// use peregrine::http3::{Code, Error, StreamId};
/// let e = Error::stream(StreamId::new(4), Code::H3_MESSAGE_ERROR);
/// assert!(!e.is_connection());
/// let c = Error::connection(Code::H3_FRAME_UNEXPECTED, "DATA on the control stream");
/// assert_eq!(c.code(), Code::H3_FRAME_UNEXPECTED);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Error {
    /// An error about one stream: it is reset with `code`; the connection goes on.
    Stream {
        /// The stream in error.
        stream: StreamId,
        /// The code sent in RESET_STREAM and STOP_SENDING.
        code: Code,
    },
    /// An error that ends the connection: CONNECTION_CLOSE with `code`.
    Connection {
        /// The code the connection is closed with.
        code: Code,
        /// What went wrong, in a few words (a CONNECTION_CLOSE reason phrase).
        why: &'static str,
    },
}

impl Error {
    /// A stream error.
    pub const fn stream(stream: StreamId, code: Code) -> Error {
        Error::Stream { stream, code }
    }

    /// A connection error with a short explanation.
    pub const fn connection(code: Code, why: &'static str) -> Error {
        Error::Connection { code, why }
    }

    /// The error code.
    pub const fn code(self) -> Code {
        match self {
            Error::Stream { code, .. } | Error::Connection { code, .. } => code,
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
            Error::Stream { stream, code } => write!(f, "stream {stream} error: {code}"),
            Error::Connection { code, why } => write!(f, "connection error: {code} ({why})"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::{Code, Error, is_reserved};
    use crate::http3::stream_id::StreamId;

    #[test]
    fn every_defined_code_has_its_name_and_unknown_codes_round_trip() {
        let defined = (0x100..=0x110).chain(0x200..=0x202);
        for code in defined {
            let c = Code::from(code);
            let name = c.name().expect("named");
            assert_eq!(format!("{c:?}"), name);
            assert!(name.starts_with("H3_") || name.starts_with("QPACK_"));
        }
        assert_eq!(Code::H3_VERSION_FALLBACK.name(), Some("H3_VERSION_FALLBACK"));
        for code in [0, 0xff, 0x111, 0x1ff, 0x203, u64::MAX] {
            assert_eq!(Code::from(code).name(), None);
            assert_eq!(u64::from(Code::from(code)), code);
        }
    }

    #[test]
    fn reserved_values() {
        let reserved: Vec<u64> = (0..200).filter(|&v| is_reserved(v)).collect();
        assert_eq!(reserved, [0x21, 0x40, 0x5f, 0x7e, 0x9d, 0xbc]);
        assert!(is_reserved(0x1f * 1_000_000 + 0x21));
        assert!(!Code::H3_NO_ERROR.is_reserved());
    }

    #[test]
    fn errors_say_their_scope() {
        let s = Error::stream(StreamId::new(0), Code::H3_REQUEST_CANCELLED);
        let c = Error::connection(Code::H3_ID_ERROR, "bad");
        assert!(!s.is_connection() && c.is_connection());
        assert_eq!(s.to_string(), "stream 0 error: H3_REQUEST_CANCELLED");
        assert_eq!(c.to_string(), "connection error: H3_ID_ERROR (bad)");
    }
}
