//! The HTTP protocol versions this crate speaks.

/// An HTTP protocol version: the one a request arrived in, or a connection speaks.
///
/// HTTP/1.0 and HTTP/1.1 share the message syntax of RFC 9112; HTTP/2 (RFC 9113) frames the
/// same semantics (RFC 9110) in binary, HTTP/3 (RFC 9114) over QUIC.
///
/// # Examples
/// ```
/// use peregrine::Version;
/// assert_eq!(Version::Http11.as_str(), "HTTP/1.1");
/// assert!(Version::Http10 < Version::Http2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// `HTTP/1.0` (RFC 1945; RFC 9112 §2.3).
    Http10,
    /// `HTTP/1.1` (RFC 9112).
    Http11,
    /// `HTTP/2` (RFC 9113).
    Http2,
    /// `HTTP/3` (RFC 9114): HTTP/2's semantics mapped onto QUIC streams.
    Http3,
}

impl Version {
    /// The version as HTTP/1.x writes it in a start line, and as access logs show it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
            Version::Http2 => "HTTP/2",
            Version::Http3 => "HTTP/3",
        }
    }
}

impl From<Version> for http::Version {
    fn from(v: Version) -> http::Version {
        match v {
            Version::Http10 => http::Version::HTTP_10,
            Version::Http11 => http::Version::HTTP_11,
            Version::Http2 => http::Version::HTTP_2,
            Version::Http3 => http::Version::HTTP_3,
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
