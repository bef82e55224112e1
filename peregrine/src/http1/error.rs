//! Why a head (request or response) or its framing was refused, and the status each reason maps
//! to.

use std::fmt;

/// A message head the HTTP/1 layer refuses: a request (server side) or a response (client side).
/// Every variant maps to one response status, the one a server answers a bad request with (for
/// the response-only variants, the 502 a gateway answers a bad response with); after any of them
/// the message framing is in doubt and the connection must close.
///
/// `docs/STRICTNESS.md` lists every variant with the input that triggers it and its RFC section.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseError {
    /// The method is not a token (RFC 9110 §9.1, §5.6.2). → 400
    InvalidMethod,
    /// The request-target holds a byte RFC 3986 forbids, or its form does not fit the method
    /// (RFC 9112 §3.2). → 400
    InvalidTarget,
    /// The request-target is longer than the limit (RFC 9112 §3). → 414
    TargetTooLong,
    /// The request line is malformed: wrong separators, missing parts (RFC 9112 §3). → 400
    InvalidRequestLine,
    /// The version is not `HTTP-name "/" DIGIT "." DIGIT` (RFC 9112 §2.3). → 400
    InvalidVersion,
    /// A well-formed version other than HTTP/1.0 and HTTP/1.1 (RFC 9110 §15.6.6). → 505
    UnsupportedVersion,
    /// A field name is empty or not a token (RFC 9110 §5.1). → 400
    InvalidHeaderName,
    /// Whitespace between a field name and the colon (RFC 9112 §5.1). → 400
    WhitespaceBeforeColon,
    /// A field value holds CR, LF, NUL or another control byte (RFC 9110 §5.5). → 400
    InvalidHeaderValue,
    /// A line folded with obs-fold (RFC 9112 §5.2). → 400
    ObsFold,
    /// A CR not followed by LF (RFC 9112 §2.2). → 400
    BareCr,
    /// A line ended by LF alone; refused by default (RFC 9112 §2.2 permits, we refuse). → 400
    BareLf,
    /// The head is larger than the limit (RFC 6585 §5). → 431
    HeadTooLarge,
    /// More header fields than the limit (RFC 6585 §5). → 431
    TooManyHeaders,
    /// Content-Length is not 1*DIGIT or overflows u64 (RFC 9110 §8.6). → 400
    InvalidContentLength,
    /// Several Content-Length values that differ (RFC 9110 §8.6, RFC 9112 §6.3). → 400
    ConflictingContentLength,
    /// Both Transfer-Encoding and Content-Length (RFC 9112 §6.1, §6.3). → 400
    TransferEncodingWithContentLength,
    /// Transfer-Encoding whose final coding is not `chunked` (RFC 9112 §6.3). → 400
    ChunkedNotFinal,
    /// A transfer coding this server does not implement (RFC 9112 §6.1). → 501
    UnknownTransferCoding,
    /// Transfer-Encoding in an HTTP/1.0 request (RFC 9112 §6.1). → 400
    TransferEncodingInHttp10,
    /// An HTTP/1.1 request without Host (RFC 9112 §3.2). → 400
    MissingHost,
    /// More than one Host field (RFC 9112 §3.2). → 400
    DuplicateHost,
    /// A Host value that is not `uri-host [ ":" port ]`, or that differs from the authority of
    /// an absolute-form target (RFC 9112 §3.2, §3.2.2). → 400
    InvalidHost,
    /// A request the method cannot carry this way, e.g. CONNECT with a body. → 400
    InvalidFraming,
    /// A Transfer-Encoding value that is not a list of transfer-codings, or that applies
    /// `chunked` twice or with parameters (RFC 9112 §6.1, §7). → 400
    InvalidTransferEncoding,
    /// An Expect value other than `100-continue` (RFC 9110 §10.1.1). → 417
    ExpectationFailed,
    /// A response's status line is malformed: not one SP after the version, a byte after the
    /// status code other than SP or CR LF, or a reason-phrase byte that is not HTAB, SP, VCHAR or
    /// obs-text (RFC 9112 §4). Responses only. → 502
    InvalidStatusLine,
    /// A response's status code is not three digits, or is outside 100..=599 (RFC 9112 §4,
    /// RFC 9110 §15). Responses only. → 502
    InvalidStatus,
}

impl ParseError {
    /// The response status this error maps to.
    pub const fn status(self) -> u16 {
        match self {
            ParseError::TargetTooLong => 414,
            ParseError::HeadTooLarge | ParseError::TooManyHeaders => 431,
            ParseError::UnsupportedVersion => 505,
            ParseError::UnknownTransferCoding => 501,
            ParseError::ExpectationFailed => 417,
            // RFC 9110 §15.6.3: what a gateway answers when the response it got is invalid.
            ParseError::InvalidStatusLine | ParseError::InvalidStatus => 502,
            _ => 400,
        }
    }

    /// A short human-readable reason, used as the body of the error response.
    pub const fn reason(self) -> &'static str {
        match self {
            ParseError::InvalidMethod => "invalid method",
            ParseError::InvalidTarget => "invalid request-target",
            ParseError::TargetTooLong => "request-target too long",
            ParseError::InvalidRequestLine => "invalid request line",
            ParseError::InvalidVersion => "invalid HTTP version",
            ParseError::UnsupportedVersion => "HTTP version not supported",
            ParseError::InvalidHeaderName => "invalid header name",
            ParseError::WhitespaceBeforeColon => "whitespace before colon in header",
            ParseError::InvalidHeaderValue => "invalid header value",
            ParseError::ObsFold => "obsolete line folding",
            ParseError::BareCr => "bare CR",
            ParseError::BareLf => "bare LF line ending",
            ParseError::HeadTooLarge => "request header fields too large",
            ParseError::TooManyHeaders => "too many header fields",
            ParseError::InvalidContentLength => "invalid Content-Length",
            ParseError::ConflictingContentLength => "conflicting Content-Length",
            ParseError::TransferEncodingWithContentLength => {
                "Transfer-Encoding with Content-Length"
            }
            ParseError::ChunkedNotFinal => "chunked is not the final transfer coding",
            ParseError::UnknownTransferCoding => "transfer coding not implemented",
            ParseError::TransferEncodingInHttp10 => "Transfer-Encoding in HTTP/1.0",
            ParseError::MissingHost => "missing Host",
            ParseError::DuplicateHost => "duplicate Host",
            ParseError::InvalidHost => "invalid Host",
            ParseError::InvalidFraming => "invalid message framing",
            ParseError::InvalidTransferEncoding => "invalid Transfer-Encoding",
            ParseError::ExpectationFailed => "expectation not supported",
            ParseError::InvalidStatusLine => "invalid status line",
            ParseError::InvalidStatus => "invalid status code",
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.reason(), self.status())
    }
}

impl std::error::Error for ParseError {}
