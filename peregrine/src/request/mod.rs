//! The request a handler receives: zero-copy views over the received head, and a body stream.
//!
//! The head arrives in the connection's read buffer; the server splits it off as a shared
//! [`Bytes`] (a reference count, no copy) and keeps the positions of the method, target and
//! header section as `u16` offsets. Reading a header walks the section's field lines (the
//! parser validated them: each `name: value` CRLF) and compares names case-insensitively;
//! nothing is copied or allocated per request. A request is then about 150 bytes, whatever its
//! field count: it is moved into the handler's future and that future into its box, and each
//! move of the 376 bytes it had with a span per field was a `memcpy` on every request.

pub(crate) mod params;

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};

use crate::Method;
use crate::Version;
use crate::body::Body;
use crate::headers::{FieldLines, Headers, Source};
use crate::http1::{HeaderId, RequestHead, TargetForm};
use crate::proxy_protocol::ProxyInfo;

/// A byte range of the head: offset and length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    off: u16,
    len: u16,
}

impl Span {
    fn of(base: &[u8], part: &[u8]) -> Span {
        // Offsets of sub-slices of the head; the head is at most u16::MAX bytes (Config caps it).
        let off = (part.as_ptr() as usize).wrapping_sub(base.as_ptr() as usize);
        Span { off: off as u16, len: part.len() as u16 }
    }

    fn range(self) -> std::ops::Range<usize> {
        usize::from(self.off)..usize::from(self.off) + usize::from(self.len)
    }
}

/// A [`Span`] that may be absent, in the span's own four bytes: `Option<Span>` takes six, and
/// three of them took the spans past 32 bytes, which a request's head moves on every request.
/// None is a span that cannot be (65,535 bytes at offset 65,535: past any head).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OptSpan(Span);

impl OptSpan {
    const NONE: OptSpan = OptSpan(Span { off: u16::MAX, len: u16::MAX });

    #[inline]
    fn new(span: Option<Span>) -> OptSpan {
        span.map_or(OptSpan::NONE, OptSpan)
    }

    #[inline]
    fn get(self) -> Option<Span> {
        (self != OptSpan::NONE).then_some(self.0)
    }
}

/// Where the parts of a request head are; built from a parsed head before the buffer is split.
#[derive(Clone, Debug)]
pub(crate) struct HeadSpans {
    method: Method,
    version: Version,
    method_token: Span,
    target: Span,
    path: Span,
    query: OptSpan,
    /// The request's authority: the Host field (HTTP/1.1) or `:authority` (HTTP/2).
    authority: OptSpan,
    /// `:protocol`, of an HTTP/2 extended CONNECT (RFC 8441 §4).
    protocol: OptSpan,
    /// The header section: its field lines, each ending with CRLF.
    fields: Span,
    /// How many field lines it holds.
    field_count: u16,
    /// An HTTP/1.1 request asking to switch protocols: an `Upgrade` field, and `upgrade`
    /// among its `Connection` options (RFC 9110 §7.8), as the framing found them.
    upgrade: bool,
}

impl HeadSpans {
    /// Records the positions of `head`'s parts relative to `base`, the buffer it was parsed
    /// from; `upgrade` is its framing's verdict (see [`RequestFraming`](crate::http1::RequestFraming)).
    #[inline]
    pub(crate) fn from_head(base: &[u8], head: &RequestHead<'_, '_>, upgrade: bool) -> HeadSpans {
        // The field lines run from the first field's name to the final empty line, which is
        // the last two bytes of the head (RFC 9112 §2.1).
        let fields = match head.headers.first() {
            Some(first) => {
                let start = Span::of(base, first.name.as_bytes()).off;
                let end = head.len.saturating_sub(2) as u16;
                Span { off: start, len: end.saturating_sub(start) }
            }
            None => Span::default(),
        };
        let target = Span::of(base, head.target.as_bytes());
        let (path, query) = split_target(head.target, head.form);
        let authority = head.known(HeaderId::Host).map(|h| Span::of(base, h.value));
        HeadSpans {
            method: head.method,
            version: head.version,
            method_token: Span::of(base, head.method_token.as_bytes()),
            target,
            path: Span::of(base, path.as_bytes()),
            query: OptSpan::new(query.map(|q| Span::of(base, q.as_bytes()))),
            authority: OptSpan::new(authority),
            protocol: OptSpan::NONE,
            fields,
            field_count: head.headers.len() as u16,
            upgrade,
        }
    }

    /// The field lines, in `head` (the bytes these spans index).
    fn field_lines<'h>(&self, head: &'h [u8]) -> FieldLines<'h> {
        FieldLines { rest: self.field_bytes(head) }
    }

    /// The header section's bytes in `head`.
    fn field_bytes<'h>(&self, head: &'h [u8]) -> &'h [u8] {
        head.get(self.fields.range()).unwrap_or_default()
    }
}

/// The parts of an HTTP/2 or HTTP/3 request head (RFC 9113 §8.3.1, RFC 9114 §4.3.1),
/// validated by the connection.
pub(crate) struct H2Head<'a, I> {
    /// [`Version::Http2`] or [`Version::Http3`].
    pub(crate) version: Version,
    /// `:method`, a token.
    pub(crate) method: &'a [u8],
    /// `:path` (origin form, or `*`); `None` for CONNECT.
    pub(crate) path: Option<&'a [u8]>,
    /// `:authority`.
    pub(crate) authority: Option<&'a [u8]>,
    /// `:protocol` (extended CONNECT, RFC 8441 §4).
    pub(crate) protocol: Option<&'a [u8]>,
    /// The regular fields: lowercase names.
    pub(crate) fields: I,
}

impl Request {
    /// A request from an HTTP/2 header section: its bytes are copied into `arena` (the
    /// connection's, reused: the head is split off it as shared `Bytes`), and the request is a
    /// view over them like an HTTP/1.1 request over its read buffer. A head longer than
    /// `u16::MAX` bytes is cut there (the connection's header list limit is far below it).
    pub(crate) fn from_h2<'a, I>(arena: &mut BytesMut, head: H2Head<'a, I>, body: Body) -> Request
    where
        I: Iterator<Item = (&'a [u8], &'a [u8])>,
    {
        // Offsets are u16 (the head's size bound, which keeps a Request small).
        const MAX: usize = u16::MAX as usize;
        let room = |buf: &BytesMut, n: usize| buf.len() + n <= MAX;
        let push_span = |buf: &mut BytesMut, bytes: &[u8]| -> Span {
            if !room(buf, bytes.len()) {
                return Span::default();
            }
            push(buf, bytes)
        };
        arena.clear();
        let method_token = push_span(arena, head.method);
        let path_bytes = head.path.unwrap_or_default();
        let target = push_span(arena, path_bytes);
        let authority = head.authority.map(|a| push_span(arena, a));
        let protocol = head.protocol.map(|p| push_span(arena, p));
        // The fields as HTTP/1.1 field lines (their values hold no CR, LF or NUL and no
        // whitespace at either end: RFC 9113 §8.2.1), read as a parsed head's are.
        let fields_start = arena.len() as u16;
        let mut field_count = 0u16;
        for (name, value) in head.fields {
            if !room(arena, name.len() + value.len() + 4) {
                break;
            }
            arena.put_slice(name);
            arena.put_slice(b": ");
            arena.put_slice(value);
            arena.put_slice(b"\r\n");
            field_count += 1;
        }
        let fields = Span { off: fields_start, len: arena.len() as u16 - fields_start };
        let (form, target_text) = match (head.path, crate::ascii::as_str(path_bytes)) {
            (None, _) => (TargetForm::Authority, ""),
            (Some(b"*"), _) => (TargetForm::Asterisk, "*"),
            (Some(_), Some(text)) => (TargetForm::Origin, text),
            (Some(_), None) => (TargetForm::Origin, ""),
        };
        let (path, query) = split_target(target_text, form);
        // `path` and `query` are sub-slices of `target_text`, which sits at `target` in the arena.
        let base = target_text.as_ptr() as usize;
        let sub = |s: &str| Span {
            off: target.off + (s.as_ptr() as usize).wrapping_sub(base) as u16,
            len: s.len() as u16,
        };
        let path = if form == TargetForm::Authority { Span::default() } else { sub(path) };
        let query = query.map(sub);
        let spans = HeadSpans {
            method: Method::from_token(head.method),
            version: head.version,
            method_token,
            target,
            path,
            query: OptSpan::new(query),
            authority: OptSpan::new(authority),
            protocol: OptSpan::new(protocol),
            fields,
            field_count,
            // RFC 9113 §8.2.2: HTTP/2 has no Upgrade (extended CONNECT is its way).
            upgrade: false,
        };
        Request::from_parts(arena.split().freeze(), spans, body)
    }
}

impl HeadSpans {
    /// The method tag.
    pub(crate) fn method(&self) -> Method {
        self.method
    }

    /// Where the target's path lies in the buffer the head was parsed from.
    pub(crate) fn path_range(&self) -> std::ops::Range<usize> {
        self.path.range()
    }
}

/// What an access log reads of a request head: ranges of the head's bytes.
#[derive(Clone, Debug)]
pub(crate) struct LogSpans {
    /// The method tag; the token's range is meaningful for [`Method::Extension`] only.
    pub(crate) method: Method,
    pub(crate) method_token: std::ops::Range<usize>,
    pub(crate) target: std::ops::Range<usize>,
    pub(crate) version: Version,
    pub(crate) user_agent: Option<std::ops::Range<usize>>,
    pub(crate) referer: Option<std::ops::Range<usize>>,
}

impl HeadSpans {
    /// Where the parts an access log shows sit in `head`, the bytes these spans index.
    pub(crate) fn log_spans(&self, head: &[u8]) -> LogSpans {
        let base = head.as_ptr() as usize;
        let find = |name: &str| {
            self.field_lines(head).find_map(|(n, v)| {
                let at = (v.as_ptr() as usize).wrapping_sub(base);
                n.eq_ignore_ascii_case(name.as_bytes()).then(|| at..at + v.len())
            })
        };
        LogSpans {
            method: self.method,
            method_token: self.method_token.range(),
            target: self.target.range(),
            version: self.version,
            user_agent: find("user-agent"),
            referer: find("referer"),
        }
    }
}

impl LogSpans {
    /// The method as sent, from `head` (the bytes these ranges index).
    pub(crate) fn method_str<'h>(&self, head: &'h [u8]) -> &'h str {
        match self.method.as_str() {
            Some(standard) => standard,
            None => {
                head.get(self.method_token.clone()).and_then(crate::ascii::as_str).unwrap_or("-")
            }
        }
    }
}

/// Splits a request-target into path and query (RFC 9112 §3.2).
///
/// Origin form `/p?q` gives (`/p`, `q`); absolute form `http://h/p?q` drops scheme and
/// authority (§3.2.2), with an empty path read as `/`; authority form (CONNECT, §3.2.3) has no
/// path; asterisk form (OPTIONS, §3.2.4) has the path `*`.
fn split_target(target: &str, form: TargetForm) -> (&str, Option<&str>) {
    let path_and_query = match form {
        TargetForm::Origin | TargetForm::Asterisk => target,
        TargetForm::Authority => return ("", None),
        TargetForm::Absolute => {
            let after_scheme = target.find("://").map_or(target, |i| &target[i + 3..]);
            match after_scheme.find(['/', '?']) {
                Some(i) => &after_scheme[i..],
                None => "",
            }
        }
    };
    let (path, query) = match find_question_mark(path_and_query.as_bytes()) {
        Some(i) => (&path_and_query[..i], Some(&path_and_query[i + 1..])),
        None => (path_and_query, None),
    };
    if path.is_empty() && form == TargetForm::Absolute {
        // Absolute form with an empty path: "/" (RFC 9112 §3.2.2 via RFC 3986 §6.2.3).
        return ("/", query);
    }
    (path, query)
}

/// The first `?` in `s`, eight bytes per step (SWAR). Targets are short: `str::find`'s setup
/// costs more than the scan, and a byte loop spends ~8 instructions per byte (`/plaintext`:
/// 87 instructions for the whole split with the byte loop).
#[inline]
fn find_question_mark(s: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(word) = s.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
        let k = crate::byte_word::first_byte(u64::from_le_bytes(word), b'?');
        if k < 8 {
            return Some(i + k as usize);
        }
        i += 8;
    }
    let tail = s.get(i..).unwrap_or_default();
    tail.iter().position(|&b| b == b'?').map(|p| i + p)
}

/// An HTTP request as a handler sees it.
///
/// Method, target, path, query, version and headers are views over the received head (one
/// shared [`Bytes`]); the body is a stream read from the connection on demand.
///
/// # Examples
/// ```
/// use peregrine::{Method, Request};
/// let req: Request = http::Request::get("/hello?name=x")
///     .header("Accept", "text/plain")
///     .body(())
///     .unwrap()
///     .into();
/// assert_eq!(req.method(), Method::Get);
/// assert_eq!(req.path(), "/hello");
/// assert_eq!(req.query(), Some("name=x"));
/// assert_eq!(req.header("accept"), Some(&b"text/plain"[..]));
/// ```
#[derive(Debug)]
pub struct Request {
    head: Bytes,
    spans: HeadSpans,
    body: Body,
    /// Set by [`Router`](crate::Router) when it matches a route (see `routing::params`).
    pub(crate) route_params: params::RouteParams,
    /// Set by the server: who sent the request.
    pub(crate) remote_addr: Option<Peer>,
    /// Set by the server: the request came over TLS.
    pub(crate) secure: bool,
}

/// Who sent a request: the connection's peer, or the client a trusted load balancer's PROXY
/// protocol header named (one `Arc` per connection, shared by its requests). As large as a
/// bare `SocketAddr`, so a request does not grow with the PROXY protocol.
#[derive(Clone, Debug)]
pub(crate) enum Peer {
    /// No PROXY protocol: the TCP peer.
    Direct(SocketAddr),
    /// What the balancer's header said (the client's address, TLVs).
    Proxied(Arc<ProxyInfo>),
}

impl Peer {
    /// The client's address.
    #[inline]
    pub(crate) fn addr(&self) -> SocketAddr {
        match self {
            Peer::Direct(addr) => *addr,
            Peer::Proxied(info) => info.client_addr(),
        }
    }
}

impl Request {
    /// Assembles a request from a head split off the read buffer and its spans.
    pub(crate) fn from_parts(head: Bytes, spans: HeadSpans, body: Body) -> Request {
        Request {
            head,
            spans,
            body,
            route_params: Default::default(),
            remote_addr: None,
            secure: false,
        }
    }

    fn text(&self, span: Span) -> &str {
        // The parser validated these spans as ASCII (method token, target, field names), and
        // `from_http` writes them from `str`s; an invalid span would read as empty, not panic.
        self.head.get(span.range()).and_then(crate::ascii::as_str).unwrap_or("")
    }

    /// The method tag; [`Method::Extension`] for a method outside RFC 9110 (see
    /// [`method_str`](Self::method_str)).
    #[inline]
    pub fn method(&self) -> Method {
        self.spans.method
    }

    /// The method as an [`http::Method`] (an extension method's token copied into it).
    pub fn http_method(&self) -> http::Method {
        to_http_method(self)
    }

    /// The method token as sent, e.g. `"GET"` or an extension method like `"PROPFIND"`.
    pub fn method_str(&self) -> &str {
        match self.spans.method {
            Method::Extension => self.text(self.spans.method_token),
            standard => standard.as_str().unwrap_or(""),
        }
    }

    /// The request-target exactly as sent (RFC 9112 §3.2), e.g. `/a/b?c=d`.
    pub fn target(&self) -> &str {
        self.text(self.spans.target)
    }

    /// The path of the target without the query, still percent-encoded.
    pub fn path(&self) -> &str {
        self.text(self.spans.path)
    }

    /// The query after `?`, if the target has one (possibly empty).
    pub fn query(&self) -> Option<&str> {
        self.spans.query.get().map(|q| self.text(q))
    }

    /// The client's address: the peer of the connection the request came on. `None` for a
    /// request not received by the server (built from an `http::Request`, as in tests).
    ///
    /// On a listener with the PROXY protocol on
    /// ([`Server::proxy_protocol`](crate::Server::proxy_protocol)) it is the client address
    /// the trusted balancer reported (or the balancer's own, for its health checks). Behind
    /// another proxy this is the proxy's address; the client's is then in a header the proxy
    /// sets (`Forwarded`, RFC 7239), which only a trusted proxy's word makes meaningful.
    #[inline]
    pub fn remote_addr(&self) -> Option<SocketAddr> {
        self.remote_addr.as_ref().map(Peer::addr)
    }

    /// Whether the request came over TLS (`https`): false for plain HTTP/1.1 and h2c, and for
    /// a request not received by the server.
    ///
    /// # Examples
    /// ```
    /// let req: peregrine::Request = http::Request::get("/").body(()).unwrap().into();
    /// assert!(!req.is_secure());
    /// ```
    #[inline]
    pub fn is_secure(&self) -> bool {
        self.secure
    }

    /// What the load balancer's PROXY protocol header said about the connection: the
    /// balancer's own address, the client's, and the TLVs it sent (authority, ALPN, TLS).
    /// `None` unless the server reads the PROXY protocol
    /// ([`Server::proxy_protocol`](crate::Server::proxy_protocol)).
    ///
    /// # Examples
    /// ```
    /// use peregrine::Request;
    ///
    /// async fn handler(req: Request) -> String {
    ///     match req.proxy().and_then(|p| p.authority()) {
    ///         Some(host) => format!("the balancer saw SNI {host}"),
    ///         None => "no PROXY header authority".to_owned(),
    ///     }
    /// }
    /// # let _ = handler;
    /// ```
    #[inline]
    pub fn proxy(&self) -> Option<&ProxyInfo> {
        match &self.remote_addr {
            Some(Peer::Proxied(info)) => Some(info),
            _ => None,
        }
    }

    /// Where the parts of the head are (for the access log).
    pub(crate) fn spans(&self) -> &HeadSpans {
        &self.spans
    }

    /// The request's authority (RFC 9110 §7.2): the `Host` field of an HTTP/1.1 request, the
    /// `:authority` of an HTTP/2 one; `None` when the request has none.
    ///
    /// # Examples
    /// ```
    /// let req: peregrine::Request =
    ///     http::Request::get("/").header("host", "example.com:8080").body(()).unwrap().into();
    /// assert_eq!(req.authority(), Some("example.com:8080"));
    /// ```
    pub fn authority(&self) -> Option<&str> {
        self.spans.authority.get().map(|span| self.text(span))
    }

    /// A request with this one's head (shared, not copied) and no body.
    pub(crate) fn head_only(&self) -> Request {
        let mut req = Request::from_parts(self.head.clone(), self.spans.clone(), Body::empty());
        req.remote_addr = self.remote_addr.clone();
        req.secure = self.secure;
        req
    }

    /// Whether the request asks to switch protocols (HTTP/1.1: an `Upgrade` field, and
    /// `upgrade` among the `Connection` options, RFC 9110 §7.8), as its framing found when it
    /// was parsed.
    #[inline]
    pub(crate) fn asks_upgrade(&self) -> bool {
        self.spans.upgrade
    }

    /// The protocol of an HTTP/2 extended CONNECT (`:protocol`, RFC 8441 §4), such as
    /// `websocket`; `None` for every other request.
    pub fn protocol(&self) -> Option<&str> {
        self.spans.protocol.get().map(|span| self.text(span))
    }

    /// The protocol version of the request.
    #[inline]
    pub fn version(&self) -> Version {
        self.spans.version
    }

    /// The value of the first header named `name`, compared case-insensitively (RFC 9110 §5.1).
    ///
    /// Accepts a `&str` or an [`http::HeaderName`].
    pub fn header(&self, name: impl AsRef<str>) -> Option<&[u8]> {
        self.headers().get(name)
    }

    /// The header fields in the order received: a view with [`http::HeaderMap`]'s lookups
    /// (see [`Headers`] for how it maps to `http`'s types).
    pub fn headers(&self) -> Headers<'_> {
        Headers::new(Source::Lines {
            lines: self.spans.field_bytes(&self.head),
            count: self.spans.field_count,
        })
    }

    /// The request body.
    pub fn body_mut(&mut self) -> &mut Body {
        &mut self.body
    }

    /// Takes the body out, leaving an empty one.
    pub fn take_body(&mut self) -> Body {
        std::mem::take(&mut self.body)
    }

    /// Consumes the request, returning its body.
    pub fn into_body(self) -> Body {
        self.body
    }

    /// The raw request head as received (request line, header fields, final empty line).
    pub fn raw_head(&self) -> &Bytes {
        &self.head
    }
}

pub(crate) fn to_http_method(req: &Request) -> http::Method {
    match req.method() {
        Method::Get => http::Method::GET,
        Method::Head => http::Method::HEAD,
        Method::Post => http::Method::POST,
        Method::Put => http::Method::PUT,
        Method::Delete => http::Method::DELETE,
        Method::Connect => http::Method::CONNECT,
        Method::Options => http::Method::OPTIONS,
        Method::Trace => http::Method::TRACE,
        Method::Patch => http::Method::PATCH,
        // The parser validated the token; http's own check agrees on `token` (RFC 9110 §5.6.2).
        Method::Extension => {
            http::Method::from_bytes(req.method_str().as_bytes()).unwrap_or(http::Method::GET)
        }
    }
}

/// Converts to the `http` crate's request, copying the head into its types; the body moves.
///
/// A header field that the `http` crate refuses (it is stricter about some obs-text) is left
/// out; the target of an asterisk- or authority-form request becomes the equivalent `Uri`.
impl From<Request> for http::Request<Body> {
    fn from(req: Request) -> Self {
        let mut out = http::Request::new(Body::empty());
        *out.method_mut() = to_http_method(&req);
        *out.uri_mut() = req.target().parse().unwrap_or_default();
        *out.version_mut() = req.version().into();
        let headers = out.headers_mut();
        for (name, value) in req.spans.field_lines(&req.head) {
            let Ok(name) = http::HeaderName::from_bytes(name) else {
                continue;
            };
            // Zero copy: the value shares the head's bytes.
            if let Ok(value) = http::HeaderValue::from_maybe_shared(req.head.slice_ref(value)) {
                headers.append(name, value);
            }
        }
        *out.body_mut() = req.body;
        out
    }
}

/// Converts from the `http` crate's request by writing its head in HTTP/1.1 form.
///
/// Useful to call a handler directly in a test. The version is kept (HTTP/0.9 reads as
/// HTTP/1.0).
impl<B: Into<Body>> From<http::Request<B>> for Request {
    fn from(req: http::Request<B>) -> Self {
        let (parts, body) = req.into_parts();
        let target = if parts.uri.scheme().is_some() {
            parts.uri.to_string()
        } else {
            parts.uri.path_and_query().map_or("/", |pq| pq.as_str()).to_owned()
        };
        let version = match parts.version {
            http::Version::HTTP_09 | http::Version::HTTP_10 => Version::Http10,
            http::Version::HTTP_11 => Version::Http11,
            http::Version::HTTP_3 => Version::Http3,
            _ => Version::Http2,
        };
        let mut buf = BytesMut::new();
        let method_token = push(&mut buf, parts.method.as_str().as_bytes());
        buf.put_u8(b' ');
        let target_span = push(&mut buf, target.as_bytes());
        buf.put_u8(b' ');
        buf.put_slice(version.as_str().as_bytes());
        buf.put_slice(b"\r\n");
        let mut authority = None;
        let fields_start = buf.len() as u16;
        for (name, value) in &parts.headers {
            let is_host = name == http::header::HOST;
            buf.put_slice(name.as_str().as_bytes());
            buf.put_slice(b": ");
            let value = push(&mut buf, value.as_bytes());
            buf.put_slice(b"\r\n");
            if is_host && authority.is_none() {
                authority = Some(value);
            }
        }
        let fields = Span { off: fields_start, len: buf.len() as u16 - fields_start };
        let field_count = parts.headers.len() as u16;
        buf.put_slice(b"\r\n");
        let form = if parts.uri.scheme().is_some() {
            TargetForm::Absolute
        } else if target == "*" {
            TargetForm::Asterisk
        } else {
            TargetForm::Origin
        };
        let (path, query) = split_target(&target, form);
        let base = target.as_ptr() as usize;
        let sub = |s: &str| (s.as_ptr() as usize).wrapping_sub(base) as u16;
        let path = Span { off: target_span.off + sub(path), len: path.len() as u16 };
        let query = query.map(|q| Span { off: target_span.off + sub(q), len: q.len() as u16 });
        let spans = HeadSpans {
            method: Method::from_token(parts.method.as_str().as_bytes()),
            version,
            method_token,
            target: target_span,
            path,
            query: OptSpan::new(query),
            authority: OptSpan::new(authority),
            protocol: OptSpan::NONE,
            fields,
            field_count,
            upgrade: asks_upgrade(version, &parts.headers),
        };
        Request {
            head: buf.freeze(),
            spans,
            body: body.into(),
            route_params: Default::default(),
            remote_addr: None,
            secure: false,
        }
    }
}

/// Whether a request with `headers` asks to switch protocols, by the framing's rule: HTTP/1.1,
/// an `Upgrade` field, and `upgrade` among the `Connection` options (RFC 9110 §7.8).
fn asks_upgrade(version: Version, headers: &http::HeaderMap) -> bool {
    let lists_upgrade = |v: &http::HeaderValue| {
        v.as_bytes().split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(b"upgrade"))
    };
    version == Version::Http11
        && headers.contains_key(http::header::UPGRADE)
        && headers.get_all(http::header::CONNECTION).iter().any(lists_upgrade)
}

fn push(buf: &mut BytesMut, bytes: &[u8]) -> Span {
    let off = buf.len() as u16;
    buf.put_slice(bytes);
    Span { off, len: bytes.len() as u16 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PROXY protocol's per-connection `Arc` takes no room a bare address did not.
    #[test]
    fn a_peer_is_as_small_as_an_address() {
        assert_eq!(std::mem::size_of::<Option<Peer>>(), std::mem::size_of::<Option<SocketAddr>>());
    }

    struct Case {
        target: &'static str,
        form: TargetForm,
        expect: (&'static str, Option<&'static str>),
    }

    /// The word-at-a-time search agrees with a byte loop for every byte value at every
    /// position of the word and the tail, with and without an earlier `?`.
    #[test]
    fn question_mark_search_matches_a_byte_loop() {
        let scalar = |s: &[u8]| s.iter().position(|&b| b == b'?');
        for len in 0..=19 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    for earlier in [None, Some(0usize), Some(at / 2)] {
                        let mut s = vec![b'a'; len];
                        s[at] = byte;
                        if let Some(e) = earlier.filter(|&e| e < at) {
                            s[e] = b'?';
                        }
                        assert_eq!(find_question_mark(&s), scalar(&s), "{s:?}");
                    }
                }
            }
        }
        assert_eq!(find_question_mark(b""), None);
    }

    /// RFC 9112 §3.2: the four target forms and where path and query sit in each.
    #[test]
    fn split_target_by_form() {
        let cases = [
            Case { target: "/a/b?c=d", form: TargetForm::Origin, expect: ("/a/b", Some("c=d")) },
            Case { target: "/a?", form: TargetForm::Origin, expect: ("/a", Some("")) },
            Case { target: "/", form: TargetForm::Origin, expect: ("/", None) },
            Case {
                target: "http://h:80/x?y",
                form: TargetForm::Absolute,
                expect: ("/x", Some("y")),
            },
            Case { target: "http://h", form: TargetForm::Absolute, expect: ("/", None) },
            Case { target: "http://h?q", form: TargetForm::Absolute, expect: ("/", Some("q")) },
            Case { target: "h:443", form: TargetForm::Authority, expect: ("", None) },
            Case { target: "*", form: TargetForm::Asterisk, expect: ("*", None) },
        ];
        for case in cases {
            assert_eq!(split_target(case.target, case.form), case.expect, "{}", case.target);
        }
    }

    #[test]
    fn from_http_and_back() {
        let req: Request = http::Request::post("http://example.com/p?q=1")
            .header("X-One", "1")
            .header("x-two", "2")
            .header("x-one", "again")
            .body("hi")
            .unwrap()
            .into();
        assert_eq!(req.method(), Method::Post);
        assert_eq!(req.method_str(), "POST");
        assert_eq!(req.target(), "http://example.com/p?q=1");
        assert_eq!(req.path(), "/p");
        assert_eq!(req.query(), Some("q=1"));
        assert_eq!(req.header("X-ONE"), Some(&b"1"[..]));
        assert_eq!(req.headers().get_all("x-one").count(), 2);
        assert_eq!(req.headers().len(), 3);
        let back: http::Request<Body> = req.into();
        assert_eq!(back.method(), http::Method::POST);
        assert_eq!(back.uri().path(), "/p");
        assert_eq!(back.headers().get_all("x-one").iter().count(), 2);
    }

    #[test]
    fn many_headers_are_all_read() {
        let mut b = http::Request::get("/");
        for i in 0..45 {
            b = b.header(format!("x-h{i}"), i.to_string());
        }
        let req: Request = b.body(()).unwrap().into();
        assert_eq!(req.headers().len(), 45);
        let last = "X-H44";
        assert_eq!(req.header(last), Some(&b"44"[..]));
    }

    #[test]
    fn extension_method() {
        let req: Request =
            http::Request::builder().method("PROPFIND").uri("/dav").body(()).unwrap().into();
        assert_eq!(req.method(), Method::Extension);
        assert_eq!(req.method_str(), "PROPFIND");
        let back: http::Request<Body> = req.into();
        assert_eq!(back.method().as_str(), "PROPFIND");
    }
}
