//! The request head encoder, for the client (RFC 9112 §3, §5, §6; RFC 9110 §7.2, §8.6).
//!
//! Split in two so the per-request path copies bytes and formats nothing it could format
//! once: [`RequestPrelude`] holds everything a connection's requests share (the end of the
//! request line, the `Host` field line, fields sent on every request), built and validated once
//! at connect time; [`encode_request`] appends the method's constant bytes, the target, the
//! caller's fields and the framing field. Once the buffer has room it allocates nothing
//! (`tests/http1_encode_alloc.rs`).

use super::{EncodeError, check_field, write_content_length};
use crate::Method;
use crate::decimal::Decimal;
use crate::http1::field_syntax::is_token;
use crate::http1::framing::BodyLength;
use crate::http1::host::parse_host_port;
use crate::http1::parse::target_form;
use crate::http1::simd::{CLASS, TARGET};

/// The scheme of the origin a connection talks to: it decides the default port, which the
/// `Host` field leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// `http`, default port 80 (RFC 9110 §4.2.1).
    Http,
    /// `https`, default port 443 (RFC 9110 §4.2.2).
    Https,
}

impl Scheme {
    /// The scheme's default port.
    pub const fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// What every request head on one connection shares, prepared once at connect time: the end of
/// the request line (` HTTP/1.1` CRLF), the `Host` field line, and any fields added with
/// [`RequestPrelude::with_field`] (a `User-Agent`, say), all validated here so the per-request
/// call only copies them.
///
/// # Examples
/// ```
/// use peregrine::Method;
/// use peregrine::http1::encode::{encode_request, RequestPrelude, Scheme};
/// use peregrine::http1::framing::BodyLength;
///
/// let prelude = RequestPrelude::new(Scheme::Http, "example.com", 8080)?
///     .with_field("User-Agent", b"peregrine")?;
/// let mut out = Vec::with_capacity(256);
/// encode_request(&prelude, Method::Get, "/a?b", &[("Accept", b"*/*")], BodyLength::Length(0), &mut out)?;
/// assert_eq!(
///     out,
///     b"GET /a?b HTTP/1.1\r\nhost: example.com:8080\r\nUser-Agent: peregrine\r\nAccept: */*\r\n\r\n"
/// );
/// # Ok::<(), peregrine::http1::encode::EncodeError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestPrelude {
    /// ` HTTP/1.1` CRLF `host: ` value CRLF, then the connection's own fields.
    bytes: Vec<u8>,
}

/// The bytes before the Host value.
const LINE_END_AND_HOST: &[u8] = b" HTTP/1.1\r\nhost: ";

impl RequestPrelude {
    /// The prelude for a connection to `host`:`port` over `scheme`.
    ///
    /// `host` is a registered name, an IPv4 address or an IPv6 address (with or without its
    /// brackets). The `Host` value is `host`, with brackets around an IPv6 address, followed by
    /// `:port` unless `port` is the scheme's default (RFC 9110 §7.2: Host carries the target
    /// URI's authority; RFC 3986 §6.2.3: the normal form omits a default port). RFC 9110 §7.2:
    /// "A user agent that sends Host SHOULD send it as the first field in the field section":
    /// it is.
    ///
    /// # Errors
    /// [`EncodeError::InvalidHost`] when the value is not `uri-host [ ":" port ]` (RFC 3986
    /// §3.2.2: an empty host, a byte a host cannot hold, a malformed IP literal): the same rule
    /// the server applies to the Host it receives.
    pub fn new(scheme: Scheme, host: &str, port: u16) -> Result<Self, EncodeError> {
        let mut bytes = Vec::with_capacity(LINE_END_AND_HOST.len() + host.len() + 10);
        bytes.extend_from_slice(LINE_END_AND_HOST);
        let start = bytes.len();
        // An IPv6 address is an IP-literal in a URI authority (RFC 3986 §3.2.2).
        let bracket = host.contains(':') && !host.starts_with('[');
        if bracket {
            bytes.push(b'[');
        }
        bytes.extend_from_slice(host.as_bytes());
        if bracket {
            bytes.push(b']');
        }
        if port != scheme.default_port() {
            bytes.push(b':');
            bytes.extend_from_slice(Decimal::new(u64::from(port)).as_bytes());
        }
        match bytes.get(start..).and_then(parse_host_port) {
            Some(hp) if !hp.host.is_empty() => {}
            _ => return Err(EncodeError::InvalidHost),
        }
        bytes.extend_from_slice(b"\r\n");
        Ok(RequestPrelude { bytes })
    }

    /// The prelude for a connection whose requests carry `authority` as their `Host` value, as
    /// received (`host[:port]`): a reverse proxy that keeps the client's Host (RFC 9110 §7.2)
    /// makes its upstream connection's prelude from it once, and reuses the connection for
    /// requests with the same value.
    ///
    /// # Errors
    /// [`EncodeError::InvalidHost`] when `authority` is not `uri-host [ ":" port ]`.
    ///
    /// # Examples
    /// ```
    /// use peregrine::http1::encode::RequestPrelude;
    /// let prelude = RequestPrelude::with_authority(b"example.com:8080")?;
    /// assert_eq!(prelude.host(), b"example.com:8080");
    /// assert!(RequestPrelude::with_authority(b"a b").is_err());
    /// # Ok::<(), peregrine::http1::encode::EncodeError>(())
    /// ```
    pub fn with_authority(authority: &[u8]) -> Result<Self, EncodeError> {
        match parse_host_port(authority) {
            Some(hp) if !hp.host.is_empty() => {}
            _ => return Err(EncodeError::InvalidHost),
        }
        let mut bytes = Vec::with_capacity(LINE_END_AND_HOST.len() + authority.len() + 2);
        bytes.extend_from_slice(LINE_END_AND_HOST);
        bytes.extend_from_slice(authority);
        bytes.extend_from_slice(b"\r\n");
        Ok(RequestPrelude { bytes })
    }

    /// Adds a field sent on every request of the connection, after `Host`.
    ///
    /// # Errors
    /// As for the per-request fields of [`encode_request`]: [`EncodeError::InvalidHeaderName`],
    /// [`EncodeError::InvalidHeaderValue`], [`EncodeError::FramingHeader`],
    /// [`EncodeError::HostHeader`].
    pub fn with_field(mut self, name: &str, value: &[u8]) -> Result<Self, EncodeError> {
        check_request_field(name, value)?;
        super::write_field(name.as_bytes(), value, &mut self.bytes);
        Ok(self)
    }

    /// The `Host` value this prelude sends.
    pub fn host(&self) -> &[u8] {
        let value = self.bytes.get(LINE_END_AND_HOST.len()..).unwrap_or_default();
        let end = value.iter().position(|&b| b == b'\r').unwrap_or(value.len());
        value.get(..end).unwrap_or_default()
    }
}

/// Appends a request head to `out`: the request line, the prelude's `Host` and fields, the
/// caller's `fields` in order, the framing field for `body`, and the empty line.
///
/// `method` is written from its constant text ([`Method::Extension`] has none: use
/// [`encode_request_extension`]). The version is always `HTTP/1.1` (RFC 9110 §6.2: a client
/// sends the highest version it conforms to).
///
/// Framing by `body` (RFC 9110 §8.6, RFC 9112 §6):
/// - `Length(n)`, `n > 0`: `content-length: n`.
/// - `Length(0)`: `content-length: 0` for POST, PUT, PATCH and extension methods, whose
///   semantics anticipate content; nothing for the others (RFC 9110 §8.6: a user agent "SHOULD
///   NOT send a Content-Length header field when the request message does not contain content
///   and the method semantics do not anticipate such data"; a request without framing fields
///   has no content, RFC 9112 §6.3 rule 7).
/// - `Chunked`: `transfer-encoding: chunked`.
/// - `CloseDelimited`: refused; only a response can be delimited by closing the connection.
///
/// # Errors
/// Nothing is appended on error.
/// - [`EncodeError::InvalidMethod`] for [`Method::Extension`].
/// - [`EncodeError::InvalidTarget`]: `target` is empty, holds a byte outside RFC 3986 (SP, CR,
///   LF, `#`, ...), or has a form the method cannot use (RFC 9112 §3.2: `*` only with OPTIONS,
///   authority-form only and always with CONNECT): the rules the server applies.
/// - [`EncodeError::InvalidHeaderName`] / [`EncodeError::InvalidHeaderValue`]: a field name
///   that is not a token, a value with CR, LF, NUL or another control byte (RFC 9110 §5.1,
///   §5.5: request splitting).
/// - [`EncodeError::FramingHeader`] / [`EncodeError::HostHeader`]: a Content-Length,
///   Transfer-Encoding or Host field among `fields`; the encoder writes those.
/// - [`EncodeError::BodyNotAllowed`]: content on CONNECT (RFC 9110 §9.3.6) or TRACE (§9.3.8).
/// - [`EncodeError::CloseDelimitedRequest`].
///
/// # Examples
/// ```
/// use peregrine::Method;
/// use peregrine::http1::encode::{encode_request, RequestPrelude, Scheme};
/// use peregrine::http1::framing::BodyLength;
///
/// let prelude = RequestPrelude::new(Scheme::Https, "api.example", 443)?;
/// let mut out = Vec::new();
/// let fields: &[(&str, &[u8])] = &[("Content-Type", b"application/json")];
/// encode_request(&prelude, Method::Post, "/orders", fields, BodyLength::Length(47), &mut out)?;
/// assert_eq!(
///     out,
///     &b"POST /orders HTTP/1.1\r\nhost: api.example\r\nContent-Type: application/json\r\n\
///        content-length: 47\r\n\r\n"[..]
/// );
/// # Ok::<(), peregrine::http1::encode::EncodeError>(())
/// ```
pub fn encode_request(
    prelude: &RequestPrelude,
    method: Method,
    target: &str,
    fields: &[(&str, &[u8])],
    body: BodyLength,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let token = method.as_str().ok_or(EncodeError::InvalidMethod)?;
    write_request(prelude, method, token, target, fields, body, out)
}

/// [`encode_request`] for an extension method, given by its token (`PROPFIND`, `M-SEARCH`);
/// a standard method's exact text is encoded as that method.
///
/// # Errors
/// [`EncodeError::InvalidMethod`] when `method` is not a token (RFC 9110 §9.1, §5.6.2); else as
/// [`encode_request`].
pub fn encode_request_extension(
    prelude: &RequestPrelude,
    method: &str,
    target: &str,
    fields: &[(&str, &[u8])],
    body: BodyLength,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    check_method(method)?;
    let tag = Method::from_token(method.as_bytes());
    write_request(prelude, tag, method, target, fields, body, out)
}

#[inline]
fn write_request(
    prelude: &RequestPrelude,
    method: Method,
    token: &str,
    target: &str,
    fields: &[(&str, &[u8])],
    body: BodyLength,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    // Everything is checked before the first byte is written, so an error appends nothing.
    check_target(method, target)?;
    let bytes = target.as_bytes();
    let mut len = token.len() + 1 + bytes.len() + prelude.bytes.len() + FRAMING_MAX + 2;
    for &(name, value) in fields {
        check_request_field(name, value)?;
        len += name.len() + value.len() + 4;
    }
    let framing = match body {
        // RFC 9110 §9.3.6: "A CONNECT request message does not have content"; §9.3.8: "A
        // client MUST NOT send content in a TRACE request".
        BodyLength::Length(0) => Framing::Length(0),
        _ if matches!(method, Method::Connect | Method::Trace) => {
            return Err(EncodeError::BodyNotAllowed);
        }
        BodyLength::Length(n) => Framing::Length(n),
        BodyLength::Chunked => Framing::Chunked,
        // RFC 9112 §6.3 rule 7: a request without framing fields has no content, so a request
        // body cannot run until the connection closes.
        BodyLength::CloseDelimited => return Err(EncodeError::CloseDelimitedRequest),
    };

    out.reserve(len);
    out.extend_from_slice(token.as_bytes());
    out.push(b' ');
    out.extend_from_slice(bytes);
    out.extend_from_slice(&prelude.bytes);
    for &(name, value) in fields {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    match framing {
        // RFC 9110 §8.6: "a user agent normally sends Content-Length in a POST request even
        // when the value is 0"; not for methods that do not anticipate content.
        Framing::Length(0) if !anticipates_content(method) => {}
        Framing::Length(n) => write_content_length(n, out),
        Framing::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
    }
    out.extend_from_slice(b"\r\n");
    Ok(())
}

/// Checks a request target as [`encode_request`] does: RFC 9112 §3.2, the target's bytes and
/// its form for `method`, by the rules the server's parser applies. For a caller that writes
/// a head it encoded before around a new target.
///
/// # Errors
/// [`EncodeError::InvalidTarget`]: `target` is empty, holds a byte outside RFC 3986, or has a
/// form `method` cannot use.
///
/// # Examples
/// ```
/// use peregrine::Method;
/// use peregrine::http1::encode::check_target;
/// assert!(check_target(Method::Get, "/a?b=c").is_ok());
/// assert!(check_target(Method::Get, "/a b").is_err());
/// assert!(check_target(Method::Get, "*").is_err());
/// ```
#[inline]
pub fn check_target(method: Method, target: &str) -> Result<(), EncodeError> {
    let bytes = target.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(|&b| CLASS[usize::from(b)] & TARGET != 0) {
        return Err(EncodeError::InvalidTarget);
    }
    target_form(method, bytes).map_err(|_| EncodeError::InvalidTarget)?;
    Ok(())
}

/// The longest framing line: `content-length: ` 20 digits CRLF.
const FRAMING_MAX: usize = 16 + 20 + 2;

/// The framing field a request gets.
#[derive(Clone, Copy)]
enum Framing {
    Length(u64),
    Chunked,
}

/// Whether the method's semantics anticipate content (RFC 9110 §9.3): POST, PUT and PATCH
/// (RFC 5789) do; an extension method might.
#[inline]
fn anticipates_content(method: Method) -> bool {
    matches!(method, Method::Post | Method::Put | Method::Patch | Method::Extension)
}

/// Checks a method as [`encode_request_extension`] does: a token (RFC 9110 §9.1, §5.6.2). For
/// a caller that takes a method from its user before it encodes any request.
///
/// # Errors
/// [`EncodeError::InvalidMethod`].
///
/// # Examples
/// ```
/// use peregrine::http1::encode::check_method;
/// assert!(check_method("M-SEARCH").is_ok());
/// assert!(check_method("GE T").is_err());
/// assert!(check_method("").is_err());
/// ```
#[inline]
pub fn check_method(method: &str) -> Result<(), EncodeError> {
    if is_token(method.as_bytes()) { Ok(()) } else { Err(EncodeError::InvalidMethod) }
}

/// Checks a request field as [`encode_request`] and [`RequestPrelude::with_field`] do: a token
/// name (RFC 9110 §5.1), a value without control bytes (§5.5), and neither a framing field
/// (Content-Length, Transfer-Encoding: the encoder writes them from the body) nor Host (the
/// prelude writes it). For a caller that takes fields from its user before it encodes any
/// request.
///
/// # Errors
/// [`EncodeError::InvalidHeaderName`], [`EncodeError::FramingHeader`],
/// [`EncodeError::InvalidHeaderValue`], [`EncodeError::HostHeader`].
///
/// # Examples
/// ```
/// use peregrine::http1::encode::{EncodeError, check_request_field};
/// assert!(check_request_field("Accept", b"*/*").is_ok());
/// assert_eq!(check_request_field("bad name", b"v"), Err(EncodeError::InvalidHeaderName));
/// assert_eq!(check_request_field("Host", b"example.com"), Err(EncodeError::HostHeader));
/// assert_eq!(check_request_field("x", b"a\r\nb"), Err(EncodeError::InvalidHeaderValue));
/// ```
#[inline]
pub fn check_request_field(name: &str, value: &[u8]) -> Result<(), EncodeError> {
    check_field(name, value)?;
    // RFC 9110 §7.2 / RFC 9112 §3.2: one Host per request; two would be a 400 at the server.
    if name.eq_ignore_ascii_case("host") {
        return Err(EncodeError::HostHeader);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
