//! The server's side of the opening handshake: the request's checks (RFC 6455 §4.2.1; RFC 8441
//! §4, §5 over HTTP/2) and the response's fields (RFC 6455 §4.2.2).

use crate::Version;
use crate::http1::field_syntax::{is_token, list_elements, trim_ows};
use crate::ws::deflate;
use crate::ws::extension::{self, DeflateConfig, DeflateParams, ExtensionValue};

use super::{VERSION, accept_key, has_token, is_valid_key};

/// The most field lines of `Sec-WebSocket-Protocol`, and of `Sec-WebSocket-Extensions`, a
/// request may carry (each line a list: clients send one).
const MAX_LINES: usize = 8;

/// Up to [`MAX_LINES`] field values of one name, kept without allocating.
#[derive(Clone, Copy, Debug, Default)]
struct Lines<'a> {
    items: [&'a [u8]; MAX_LINES],
    len: usize,
}

impl<'a> Lines<'a> {
    fn push(&mut self, v: &'a [u8]) -> Result<(), RequestError> {
        *self.items.get_mut(self.len).ok_or(RequestError::TooManyLines)? = v;
        self.len += 1;
        Ok(())
    }

    fn iter(&self) -> impl Iterator<Item = &'a [u8]> + Clone + use<'a> {
        let items = self.items;
        items.into_iter().take(self.len)
    }
}

/// Why a request is not a WebSocket handshake we accept, and the response that says so.
///
/// # Examples
/// ```
/// use peregrine::Version;
/// use peregrine::ws::handshake::{RequestError, check_request};
/// let fields: [(&[u8], &[u8]); 4] = [
///     (b"Upgrade", b"websocket"),
///     (b"Connection", b"Upgrade"),
///     (b"Sec-WebSocket-Key", b"dGhlIHNhbXBsZSBub25jZQ=="),
///     (b"Sec-WebSocket-Version", b"8"),
/// ];
/// let err = check_request(b"GET", Version::Http11, fields).unwrap_err();
/// assert_eq!(err, RequestError::Version);
/// assert_eq!(err.status(), 426);
/// assert_eq!(err.fields(), [("sec-websocket-version", "13")]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestError {
    /// HTTP/1.1: the method is not GET; HTTP/2: not CONNECT.
    Method,
    /// HTTP/1.0 (RFC 6455 §4.1: "The method of the request MUST be GET, and the HTTP version
    /// MUST be at least 1.1").
    HttpVersion,
    /// No `Upgrade` field with the `websocket` token.
    Upgrade,
    /// No `Connection` field with the `upgrade` token.
    Connection,
    /// HTTP/2: `:protocol` missing or not `websocket`.
    Protocol,
    /// `Sec-WebSocket-Key` missing, repeated, or not the base64 of 16 octets.
    Key,
    /// `Sec-WebSocket-Version` missing or not 13: answered 426 with the version we speak
    /// (RFC 6455 §4.2.2, §4.4).
    Version,
    /// A `Sec-WebSocket-Protocol` element that is not a token (RFC 6455 §4.1).
    ProtocolList,
    /// More `Sec-WebSocket-Protocol` or `Sec-WebSocket-Extensions` lines than we keep (8).
    TooManyLines,
}

impl RequestError {
    /// The response's status: 426 for [`RequestError::Version`], 400 otherwise (RFC 6455
    /// §4.2.1: "an appropriate error code (such as 400 Bad Request)").
    pub const fn status(self) -> u16 {
        match self {
            RequestError::Version => 426,
            _ => 400,
        }
    }

    /// The fields the refusal carries: `Sec-WebSocket-Version: 13` with a 426.
    pub const fn fields(self) -> &'static [(&'static str, &'static str)] {
        match self {
            RequestError::Version => &[("sec-websocket-version", VERSION)],
            _ => &[],
        }
    }

    /// A short reason, for a log or the refusal's body.
    pub const fn reason(self) -> &'static str {
        match self {
            RequestError::Method => "websocket handshake: wrong method",
            RequestError::HttpVersion => "websocket handshake: HTTP/1.1 or later required",
            RequestError::Upgrade => "websocket handshake: no Upgrade: websocket",
            RequestError::Connection => "websocket handshake: no Connection: upgrade",
            RequestError::Protocol => "websocket handshake: :protocol is not websocket",
            RequestError::Key => "websocket handshake: bad Sec-WebSocket-Key",
            RequestError::Version => "websocket handshake: Sec-WebSocket-Version 13 required",
            RequestError::ProtocolList => "websocket handshake: bad Sec-WebSocket-Protocol",
            RequestError::TooManyLines => "websocket handshake: too many field lines",
        }
    }
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.reason())
    }
}

impl std::error::Error for RequestError {}

/// A request found to be a valid WebSocket handshake: what the server decides on.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// HTTP/1.1's `Sec-WebSocket-Key` (trimmed); none over HTTP/2.
    key: Option<&'a [u8]>,
    origin: Option<&'a [u8]>,
    protocols: Lines<'a>,
    extensions: Lines<'a>,
}

/// The fields of a request the checks read, gathered in one pass.
#[derive(Default)]
struct Gathered<'a> {
    upgrade: bool,
    connection: bool,
    keys: usize,
    key: Option<&'a [u8]>,
    versions: usize,
    version_13: bool,
    origin: Option<&'a [u8]>,
    protocols: Lines<'a>,
    extensions: Lines<'a>,
}

fn gather<'a, I>(fields: I) -> Result<Gathered<'a>, RequestError>
where
    I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
{
    let mut g = Gathered::default();
    for (name, value) in fields {
        let is = |s: &str| name.eq_ignore_ascii_case(s.as_bytes());
        if is("upgrade") {
            g.upgrade |= has_token(std::iter::once(value), "websocket");
        } else if is("connection") {
            g.connection |= has_token(std::iter::once(value), "upgrade");
        } else if is("sec-websocket-key") {
            g.keys += 1;
            g.key = Some(trim_ows(value));
        } else if is("sec-websocket-version") {
            g.versions += 1;
            g.version_13 = trim_ows(value) == VERSION.as_bytes();
        } else if is("origin") {
            g.origin = Some(trim_ows(value));
        } else if is("sec-websocket-protocol") {
            // RFC 6455 §4.1: each element "MUST be ... characters in the range U+0021 to
            // U+007E not including separator characters": a token.
            if list_elements(std::iter::once(value)).any(|e| !e.is_empty() && !is_token(e)) {
                return Err(RequestError::ProtocolList);
            }
            g.protocols.push(value)?;
        } else if is("sec-websocket-extensions") {
            g.extensions.push(value)?;
        }
    }
    Ok(g)
}

/// Checks an HTTP/1.1 request as a WebSocket opening handshake (RFC 6455 §4.2.1), from its
/// method, version and fields (any case, any order; each value as received).
///
/// `Host` is the HTTP layer's to check (RFC 9112 §3.2 makes it required of every HTTP/1.1
/// request); `Origin`, when present, is the application's ([`Request::origin`]).
///
/// # Errors
/// The first rule broken, in the order of §4.2.1 (see [`RequestError`] for the response).
///
/// # Examples
/// ```
/// use peregrine::Version;
/// use peregrine::ws::handshake::check_request;
/// let fields: [(&[u8], &[u8]); 4] = [
///     (b"upgrade", b"websocket"),
///     (b"connection", b"keep-alive, Upgrade"),
///     (b"sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZQ=="),
///     (b"sec-websocket-version", b"13"),
/// ];
/// let request = check_request(b"GET", Version::Http11, fields).unwrap();
/// assert_eq!(request.key(), Some(&b"dGhlIHNhbXBsZSBub25jZQ=="[..]));
/// ```
pub fn check_request<'a, I>(
    method: &[u8],
    version: Version,
    fields: I,
) -> Result<Request<'a>, RequestError>
where
    I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
{
    if method != b"GET" {
        return Err(RequestError::Method);
    }
    if version < Version::Http11 {
        return Err(RequestError::HttpVersion);
    }
    let g = gather(fields)?;
    // §4.2.1 3. "An |Upgrade| header field containing the value "websocket", treated as an
    // ASCII case-insensitive value."
    if !g.upgrade {
        return Err(RequestError::Upgrade);
    }
    // 4. "A |Connection| header field that includes the token "Upgrade", treated as an ASCII
    // case-insensitive value."
    if !g.connection {
        return Err(RequestError::Connection);
    }
    // 5. "A |Sec-WebSocket-Key| header field with a base64-encoded value that, when decoded,
    // is 16 bytes in length."
    let key = g.key.filter(|k| g.keys == 1 && is_valid_key(k)).ok_or(RequestError::Key)?;
    // 6. "A |Sec-WebSocket-Version| header field, with a value of 13."
    if g.versions != 1 || !g.version_13 {
        return Err(RequestError::Version);
    }
    Ok(Request {
        key: Some(key),
        origin: g.origin,
        protocols: g.protocols,
        extensions: g.extensions,
    })
}

/// Checks an HTTP/2 extended CONNECT as a WebSocket handshake (RFC 8441 §4, §5): the method
/// CONNECT, `:protocol` `websocket`, `Sec-WebSocket-Version: 13`. There is no key and no
/// accept value, and no `Upgrade` or `Connection` (HTTP/2 forbids them; its layer refuses
/// them). The pseudo-header fields' syntax is the HTTP/2 layer's to check.
///
/// # Errors
/// As [`check_request`]: [`RequestError::Method`], [`RequestError::Protocol`],
/// [`RequestError::Version`] (426), [`RequestError::ProtocolList`],
/// [`RequestError::TooManyLines`].
///
/// # Examples
/// ```
/// use peregrine::ws::handshake::check_connect;
/// let fields: [(&[u8], &[u8]); 1] = [(b"sec-websocket-version", b"13")];
/// let request = check_connect(b"CONNECT", Some(b"websocket"), fields).unwrap();
/// assert_eq!(request.key(), None);
/// assert_eq!(request.accept(&[], None).status(), 200);
/// ```
pub fn check_connect<'a, I>(
    method: &[u8],
    protocol: Option<&[u8]>,
    fields: I,
) -> Result<Request<'a>, RequestError>
where
    I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
{
    if method != b"CONNECT" {
        return Err(RequestError::Method);
    }
    if !protocol.is_some_and(|p| p.eq_ignore_ascii_case(b"websocket")) {
        return Err(RequestError::Protocol);
    }
    let g = gather(fields)?;
    if g.versions != 1 || !g.version_13 {
        return Err(RequestError::Version);
    }
    Ok(Request { key: None, origin: g.origin, protocols: g.protocols, extensions: g.extensions })
}

impl<'a> Request<'a> {
    /// The `Sec-WebSocket-Key` (HTTP/1.1); `None` over HTTP/2.
    pub fn key(&self) -> Option<&'a [u8]> {
        self.key
    }

    /// The `Origin` field, for the application's check (RFC 6455 §4.2.2, §10.2).
    pub fn origin(&self) -> Option<&'a [u8]> {
        self.origin
    }

    /// The subprotocols the client offered, in its order (`Sec-WebSocket-Protocol`).
    pub fn protocols(&self) -> impl Iterator<Item = &'a [u8]> + use<'a> {
        list_elements(self.protocols.iter()).filter(|e| !e.is_empty())
    }

    /// The `Sec-WebSocket-Extensions` field lines.
    pub fn extension_lines(&self) -> impl Iterator<Item = &'a [u8]> + Clone + use<'a> {
        self.extensions.iter()
    }

    /// The subprotocol to answer with: the first of `supported` (the server's order of
    /// preference) that the client offered, compared exactly (RFC 6455 §4.2.2: "the server
    /// selects one or none of the acceptable protocols").
    pub fn select_protocol<'p>(&self, supported: &[&'p str]) -> Option<&'p str> {
        supported.iter().copied().find(|s| self.protocols().any(|p| p == s.as_bytes()))
    }

    /// Accepts the handshake: the subprotocol from `supported` ([`Request::select_protocol`])
    /// and permessage-deflate negotiated with `deflate` (`None`, or a build without the
    /// `ws-deflate` feature: not offered back). The [`Accept`] gives the response to write
    /// and what the connection needs.
    pub fn accept<'p>(&self, supported: &[&'p str], deflate: Option<&DeflateConfig>) -> Accept<'p> {
        let deflate = deflate
            .filter(|_| deflate::AVAILABLE)
            .and_then(|config| extension::negotiate(config, self.extensions.iter()));
        Accept {
            accept: self.key.map(accept_key),
            protocol: self.select_protocol(supported),
            deflate,
        }
    }
}

/// A handshake accepted: the response's status and fields, and what the connection needs.
#[derive(Clone, Copy, Debug)]
pub struct Accept<'p> {
    /// The `Sec-WebSocket-Accept` value; `None` over HTTP/2.
    accept: Option<[u8; 28]>,
    protocol: Option<&'p str>,
    deflate: Option<(DeflateParams, ExtensionValue)>,
}

impl<'p> Accept<'p> {
    /// The response's status: 101 Switching Protocols over HTTP/1.1 (RFC 6455 §4.2.2), 200
    /// over HTTP/2 (RFC 8441 §5).
    pub fn status(&self) -> u16 {
        if self.accept.is_some() { 101 } else { 200 }
    }

    /// The response's fields, names in lowercase: over HTTP/1.1 `upgrade`, `connection` and
    /// `sec-websocket-accept`; then `sec-websocket-protocol` and `sec-websocket-extensions`
    /// when agreed.
    pub fn fields(&self) -> impl Iterator<Item = (&'static str, &[u8])> {
        let accept = self.accept.as_ref().map(|a| &a[..]);
        [
            accept.map(|_| ("upgrade", &b"websocket"[..])),
            accept.map(|_| ("connection", &b"Upgrade"[..])),
            accept.map(|a| ("sec-websocket-accept", a)),
            self.protocol.map(|p| ("sec-websocket-protocol", p.as_bytes())),
            self.deflate.as_ref().map(|(_, v)| ("sec-websocket-extensions", v.as_bytes())),
        ]
        .into_iter()
        .flatten()
    }

    /// The subprotocol agreed, if any.
    pub fn protocol(&self) -> Option<&'p str> {
        self.protocol
    }

    /// The permessage-deflate parameters agreed, for [`Conn::new`](crate::ws::Conn::new).
    pub fn deflate(&self) -> Option<DeflateParams> {
        self.deflate.map(|(p, _)| p)
    }
}
