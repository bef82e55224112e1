//! Message framing: how long a body is and whether the connection stays open (RFC 9112 §6,
//! §9.3; RFC 9110 §8.6). The one owner of these rules: the server calls [`request_framing`], the
//! client [`response_framing`].
//!
//! Every refusal and its status is listed in `docs/STRICTNESS.md` ("Framing, chunked and
//! encoder"). After any error the framing is in doubt: the connection must close.

use super::content_length;
use super::field_syntax::{is_tchar, list_elements, trim_ows};
pub use super::host::HostMemo;
use super::host::{host_matches_target, parse_host_port};
use super::{Header, HeaderId, KnownHeaders, ParseError, RequestHead, TargetForm, Version};
use crate::Method;

pub use content_length::parse_content_length;

/// How a message body is delimited (RFC 9112 §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyLength {
    /// Exactly this many bytes follow (0: no body).
    Length(u64),
    /// The chunked transfer coding delimits the body.
    Chunked,
    /// The body runs until the connection closes (responses only).
    CloseDelimited,
}

/// What the head of a request says about its body and its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestFraming {
    /// How the body is delimited: never [`BodyLength::CloseDelimited`] for a request.
    pub body: BodyLength,
    /// Whether the connection may carry another request after this one (RFC 9112 §9.3).
    pub keep_alive: bool,
    /// The client waits for `100 Continue` before sending the body: `Expect: 100-continue` on an
    /// HTTP/1.1 request that has a body (RFC 9110 §10.1.1; ignored in HTTP/1.0 as required).
    pub expect_continue: bool,
    /// The request asks for a protocol upgrade: an `Upgrade` field and the `upgrade` connection
    /// option, in HTTP/1.1 (RFC 9110 §7.8; ignored in HTTP/1.0 as required).
    pub upgrade: bool,
}

/// What the head of a response says about its body and its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseFraming {
    /// How the body is delimited.
    pub body: BodyLength,
    /// Whether the connection may carry another request after this response (RFC 9112 §9.3).
    pub keep_alive: bool,
    /// The connection turns into a tunnel or another protocol after this head: a 2xx to CONNECT
    /// or a 101 (RFC 9110 §9.3.6, §15.2.2).
    pub tunnel: bool,
}

/// Applies the framing rules to a parsed request head.
///
/// Rules, in the order they are checked (first failure wins):
/// 1. Transfer-Encoding in HTTP/1.0 → [`ParseError::TransferEncodingInHttp10`] (RFC 9112 §6.1).
/// 2. Transfer-Encoding with Content-Length → [`ParseError::TransferEncodingWithContentLength`]
///    (RFC 9112 §6.1 lets a server reject; we do).
/// 3. Transfer-Encoding: a case-insensitive list over all its field lines, empty elements
///    ignored; `chunked` must be last ([`ParseError::ChunkedNotFinal`], RFC 9112 §6.3), appear
///    once and without parameters ([`ParseError::InvalidTransferEncoding`]); any other coding
///    is not implemented ([`ParseError::UnknownTransferCoding`], 501).
/// 4. Content-Length: every element of every field line is `1*DIGIT`
///    ([`ParseError::InvalidContentLength`]); repeated identical values (`5, 5` or two lines)
///    count once, different ones are [`ParseError::ConflictingContentLength`] (RFC 9110 §8.6).
/// 5. Host (RFC 9112 §3.2): HTTP/1.1 needs one ([`ParseError::MissingHost`]); more than one is
///    [`ParseError::DuplicateHost`] in any version; the value must be a non-empty
///    `uri-host [":" port]` and, for an absolute-form target, name the target's authority
///    ([`ParseError::InvalidHost`]).
/// 6. CONNECT with a body (Transfer-Encoding or Content-Length > 0) →
///    [`ParseError::InvalidFraming`] (RFC 9110 §9.3.6: a CONNECT request has no content).
/// 7. Expect in HTTP/1.1: `100-continue` (any case) is the only expectation we meet; any other
///    → [`ParseError::ExpectationFailed`] (417, RFC 9110 §10.1.1).
///
/// No Content-Length and no Transfer-Encoding means no body: `Length(0)` (RFC 9112 §6.3 rule 7).
///
/// # Errors
/// The [`ParseError`] of the first rule broken, as listed above.
///
/// # Examples
/// ```
/// use peregrine::http1::framing::{request_framing, BodyLength};
/// use peregrine::http1::{parse_request, Limits, Status, EMPTY_HEADER};
/// let mut headers = [EMPTY_HEADER; 8];
/// let buf = b"POST /up HTTP/1.1\r\nHost: a.example\r\nContent-Length: 5\r\n\r\nhello";
/// let Status::Complete(head) = parse_request(buf, &mut headers, &Limits::default())? else {
///     unreachable!("the head is complete");
/// };
/// let framing = request_framing(&head)?;
/// assert_eq!(framing.body, BodyLength::Length(5));
/// assert!(framing.keep_alive);
/// # Ok::<(), peregrine::http1::ParseError>(())
/// ```
pub fn request_framing(head: &RequestHead<'_, '_>) -> Result<RequestFraming, ParseError> {
    request_framing_remembering(head, &mut HostMemo::default())
}

/// [`request_framing`] for a connection that remembers the last Host value it found valid in
/// `memo`: the Host syntax is checked once per connection rather than per request (an
/// absolute-form target is still compared with Host every time). The verdict is always the
/// same as [`request_framing`]'s.
///
/// # Errors
/// As [`request_framing`].
///
/// # Examples
/// ```
/// use peregrine::http1::framing::{request_framing_remembering, HostMemo};
/// use peregrine::http1::{parse_request, Limits, Status, EMPTY_HEADER};
/// let mut memo = HostMemo::default(); // one per connection
/// for _ in 0..2 {
///     let mut headers = [EMPTY_HEADER; 8];
///     let buf = b"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n";
///     let Status::Complete(head) = parse_request(buf, &mut headers, &Limits::default())? else {
///         unreachable!("the head is complete");
///     };
///     assert!(request_framing_remembering(&head, &mut memo)?.keep_alive);
/// }
/// # Ok::<(), peregrine::http1::ParseError>(())
/// ```
#[inline]
pub fn request_framing_remembering(
    head: &RequestHead<'_, '_>,
    memo: &mut HostMemo,
) -> Result<RequestFraming, ParseError> {
    let known = &head.known;
    // Fast path: no field that bears on framing but Host, the shape of most requests (a GET).
    // Rules 1–4, 6 and 7 have nothing to check; what remains is the Host rule and the default
    // persistence. `framing_fast_path_matches_general` checks both paths agree on every row.
    if known.count(HeaderId::TransferEncoding)
        + known.count(HeaderId::ContentLength)
        + known.count(HeaderId::Connection)
        + known.count(HeaderId::Expect)
        == 0
    {
        check_host(head, memo)?;
        // RFC 9112 §6.3 rule 7: no body; RFC 9112 §9.3: HTTP/1.1 persists by default, HTTP/1.0
        // only with a `keep-alive` option, which needs a Connection field; no Upgrade without
        // the `upgrade` connection option (RFC 9110 §7.8).
        return Ok(RequestFraming {
            body: BodyLength::Length(0),
            keep_alive: head.version == Version::Http11,
            expect_continue: false,
            upgrade: false,
        });
    }
    request_framing_general(head, memo)
}

/// [`request_framing`] without its fast path: every rule, in order.
fn request_framing_general(
    head: &RequestHead<'_, '_>,
    memo: &mut HostMemo,
) -> Result<RequestFraming, ParseError> {
    let known = &head.known;
    let http11 = head.version == Version::Http11;
    let values = |id| head.all(id).map(|h: &Header<'_>| h.value);

    let body = if known.count(HeaderId::TransferEncoding) > 0 {
        // RFC 9112 §6.1: "A server or client that receives an HTTP/1.0 message containing a
        // Transfer-Encoding header field MUST treat the message as if the framing is faulty".
        if !http11 {
            return Err(ParseError::TransferEncodingInHttp10);
        }
        // RFC 9112 §6.1: "A server MAY reject a request that contains both Content-Length and
        // Transfer-Encoding or process such a request in accordance with the Transfer-Encoding
        // alone." Both at once is the shape of request smuggling: we reject.
        if known.count(HeaderId::ContentLength) > 0 {
            return Err(ParseError::TransferEncodingWithContentLength);
        }
        transfer_coding(values(HeaderId::TransferEncoding))?;
        BodyLength::Chunked
    } else if known.count(HeaderId::ContentLength) > 0 {
        BodyLength::Length(content_length(values(HeaderId::ContentLength))?)
    } else {
        // RFC 9112 §6.3 rule 7: neither field → the request has no content.
        BodyLength::Length(0)
    };

    check_host(head, memo)?;

    // RFC 9110 §9.3.6: "A CONNECT request message does not have content."
    if head.method == Method::Connect && body != BodyLength::Length(0) {
        return Err(ParseError::InvalidFraming);
    }

    let conn = connection_options(values(HeaderId::Connection));
    // RFC 9110 §10.1.1: "A server that receives a 100-continue expectation in an HTTP/1.0
    // request MUST ignore that expectation." HTTP/1.0 predates Expect: we ignore it entirely.
    let expect_continue = http11
        && known.count(HeaderId::Expect) > 0
        && expects_continue(values(HeaderId::Expect))?
        && body != BodyLength::Length(0);
    Ok(RequestFraming {
        body,
        keep_alive: conn.keep_alive(http11),
        expect_continue,
        // RFC 9110 §7.8: "A server MUST ignore an Upgrade header field that is received in an
        // HTTP/1.0 request", and the sender MUST list "upgrade" in Connection.
        upgrade: http11 && conn.upgrade && known.count(HeaderId::Upgrade) > 0,
    })
}

/// Applies the framing rules of RFC 9112 §6.3 to a response head, for the client.
///
/// `request_method` is the method of the request this response answers; `headers` the
/// response's fields with their [`HeaderId`]s set.
/// 1. A response to HEAD, and every 1xx, 204 and 304, has no body, whatever its fields say.
/// 2. A 2xx to CONNECT, and a 101, turn the connection into a tunnel: no body, `tunnel` set.
/// 3. Transfer-Encoding: the same checks as for a request (HTTP/1.0, with Content-Length,
///    `chunked` final and alone); any coding but `chunked` is refused because this crate cannot
///    decode it ([`ParseError::UnknownTransferCoding`]), where RFC 9112 §6.3 rule 4 would read
///    until close.
/// 4. Content-Length: the same value rules as for a request.
/// 5. Otherwise the body runs until the server closes the connection.
///
/// # Errors
/// The [`ParseError`] of the Transfer-Encoding or Content-Length rule broken.
///
/// # Examples
/// ```
/// use peregrine::http1::framing::{response_framing, BodyLength};
/// use peregrine::http1::{Header, HeaderId, Version};
/// use peregrine::Method;
/// let headers = [Header { name: "Content-Length", value: b"12", id: HeaderId::ContentLength }];
/// let f = response_framing(Method::Get, 200, Version::Http11, &headers).unwrap();
/// assert_eq!(f.body, BodyLength::Length(12));
/// let f = response_framing(Method::Head, 200, Version::Http11, &headers).unwrap();
/// assert_eq!(f.body, BodyLength::Length(0));
/// ```
pub fn response_framing(
    request_method: Method,
    status: u16,
    version: Version,
    headers: &[Header<'_>],
) -> Result<ResponseFraming, ParseError> {
    let mut known = KnownHeaders::EMPTY;
    for (i, h) in headers.iter().enumerate() {
        known.record(h.id, i);
    }
    response_framing_known(request_method, status, version, headers, &known)
}

/// [`response_framing`] for a head whose parser already located the identified fields
/// (`known`, as [`ResponseHead::known`](super::ResponseHead::known)): each rule looks at its
/// own fields instead of scanning every field per rule (four scans of a head with eight
/// fields cost more than parsing two of them).
#[inline]
pub(crate) fn response_framing_known(
    request_method: Method,
    status: u16,
    version: Version,
    headers: &[Header<'_>],
    known: &KnownHeaders,
) -> Result<ResponseFraming, ParseError> {
    let http11 = version == Version::Http11;
    let values = |id| known.all(headers, id).map(|h| h.value);
    let present = |id| known.count(id) > 0;
    let keep_alive = connection_options(values(HeaderId::Connection)).keep_alive(http11);
    let none = |keep_alive: bool, tunnel: bool| ResponseFraming {
        body: BodyLength::Length(0),
        keep_alive: keep_alive && !tunnel,
        tunnel,
    };

    // RFC 9112 §6.3 rule 2: a 2xx to CONNECT switches to tunnel mode; RFC 9110 §15.2.2: after a
    // 101 the connection speaks the protocol named in Upgrade.
    if (request_method == Method::Connect && (200..300).contains(&status)) || status == 101 {
        return Ok(none(keep_alive, true));
    }
    // RFC 9112 §6.3 rule 1: HEAD responses, 1xx, 204 and 304 end at the empty line.
    if request_method == Method::Head || (100..200).contains(&status) || matches!(status, 204 | 304)
    {
        return Ok(none(keep_alive, false));
    }
    let body = if present(HeaderId::TransferEncoding) {
        if !http11 {
            return Err(ParseError::TransferEncodingInHttp10);
        }
        // RFC 9112 §6.3 rule 3: "ought to be handled as an error".
        if present(HeaderId::ContentLength) {
            return Err(ParseError::TransferEncodingWithContentLength);
        }
        transfer_coding(values(HeaderId::TransferEncoding))?;
        BodyLength::Chunked
    } else if present(HeaderId::ContentLength) {
        BodyLength::Length(content_length(values(HeaderId::ContentLength))?)
    } else {
        // RFC 9112 §6.3 rule 8: read until the server closes.
        BodyLength::CloseDelimited
    };
    Ok(ResponseFraming {
        body,
        keep_alive: keep_alive && body != BodyLength::CloseDelimited,
        tunnel: false,
    })
}

/// How a server sends a response body: the framing its head announces, and whether body
/// bytes follow the head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutgoingBody {
    /// The framing the head announces (what `encode::encode_head` writes).
    pub length: BodyLength,
    /// Whether body bytes follow the head: false for HEAD, 1xx, 204 and 304.
    pub send: bool,
}

/// The outgoing-framing rule for a response: from its status, the request's method and
/// version, and the body's size when known.
///
/// - 1xx and 204 have no content and announce none (RFC 9110 §6.4.1, §8.6).
/// - 304 and the answer to HEAD announce the length the content would have had, and send none
///   (RFC 9110 §8.6, §9.3.2, §15.4.5).
/// - Otherwise a known size is sent with `Content-Length`; an unknown one chunked to an
///   HTTP/1.1 client, and delimited by closing the connection to an HTTP/1.0 client, which knows
///   no chunked coding (RFC 9112 §6.1, §6.3 rule 8).
///
/// # Examples
/// ```
/// use peregrine::Version;
/// use peregrine::http1::framing::{BodyLength, OutgoingBody, response_body};
/// assert_eq!(
///     response_body(200, false, Version::Http11, None),
///     OutgoingBody { length: BodyLength::Chunked, send: true }
/// );
/// assert_eq!(
///     response_body(200, true, Version::Http11, Some(12)),
///     OutgoingBody { length: BodyLength::Length(12), send: false }
/// );
/// assert_eq!(response_body(200, false, Version::Http10, None).length, BodyLength::CloseDelimited);
/// ```
#[inline]
pub fn response_body(
    status: u16,
    request_is_head: bool,
    request_version: Version,
    size: Option<u64>,
) -> OutgoingBody {
    let no_content = status < 200 || status == 204;
    let length = match size {
        _ if no_content => BodyLength::Length(0),
        Some(n) => BodyLength::Length(n),
        None if request_version == Version::Http10 => BodyLength::CloseDelimited,
        None => BodyLength::Chunked,
    };
    OutgoingBody { length, send: !(no_content || status == 304 || request_is_head) }
}

/// The Content-Length of a message from all its field lines (RFC 9110 §8.6). Shared with
/// HTTP/2, whose content-length rules are the same (RFC 9113 §8.1.1).
pub(crate) fn content_length<'a>(
    mut values: impl Iterator<Item = &'a [u8]>,
) -> Result<u64, ParseError> {
    let first = values.next().unwrap_or_default();
    let second = values.next();
    // Fast path: one field line holding one number, the shape of nearly every request.
    if second.is_none() {
        if let Some(n) = parse_content_length(first) {
            return Ok(n);
        }
    }
    // RFC 9110 §8.6: a list of the same value repeated MAY be replaced by one instance; we do.
    // Different values, an empty element or a non-number cannot be repaired.
    let mut found = None;
    for elem in list_elements(std::iter::once(first).chain(second).chain(values)) {
        let n = parse_content_length(elem).ok_or(ParseError::InvalidContentLength)?;
        match found {
            Some(m) if m != n => return Err(ParseError::ConflictingContentLength),
            _ => found = Some(n),
        }
    }
    found.ok_or(ParseError::InvalidContentLength)
}

/// Checks a Transfer-Encoding list; `Ok` means the body is chunked (RFC 9112 §6.1, §7).
///
/// Elements are split at commas before quoted strings are read, so a comma inside a quoted
/// parameter of an unknown coding makes the value invalid (400) instead of unknown (501).
fn transfer_coding<'a>(values: impl Iterator<Item = &'a [u8]>) -> Result<(), ParseError> {
    let (mut chunked, mut last_chunked, mut unknown) = (false, false, false);
    for elem in list_elements(values) {
        // RFC 9110 §5.6.1: a recipient MUST parse and ignore a reasonable number of empty
        // list elements.
        if elem.is_empty() {
            continue;
        }
        let (name, has_params) = split_coding(elem).ok_or(ParseError::InvalidTransferEncoding)?;
        // RFC 9112 §7: transfer-coding names are case-insensitive.
        if name.eq_ignore_ascii_case(b"chunked") {
            // RFC 9112 §6.1: "A sender MUST NOT apply the chunked transfer coding more than once
            // to a message body"; chunked defines no parameters (RFC 9112 §7.1).
            if chunked || has_params {
                return Err(ParseError::InvalidTransferEncoding);
            }
            (chunked, last_chunked) = (true, true);
        } else {
            (last_chunked, unknown) = (false, true);
        }
    }
    // RFC 9112 §6.3 rule 4: "If a Transfer-Encoding header field is present in a request and
    // the chunked transfer coding is not the final encoding, ... the server MUST respond with
    // the 400 (Bad Request) status code and then close the connection."
    if !last_chunked {
        return Err(ParseError::ChunkedNotFinal);
    }
    // RFC 9112 §6.1: "A server that receives a request message with a transfer coding it does
    // not understand SHOULD respond with 501 (Not Implemented)." We implement only chunked.
    if unknown {
        return Err(ParseError::UnknownTransferCoding);
    }
    Ok(())
}

/// Splits `transfer-coding = token *( OWS ";" OWS transfer-parameter )` into its name and
/// whether parameters follow; `None` when the syntax is broken (RFC 9112 §7,
/// `transfer-parameter = token BWS "=" BWS ( token / quoted-string )`).
fn split_coding(elem: &[u8]) -> Option<(&[u8], bool)> {
    let name_len = elem.iter().position(|&b| !is_tchar(b)).unwrap_or(elem.len());
    let (name, mut rest) = elem.split_at(name_len);
    if name.is_empty() {
        return None;
    }
    let has_params = !rest.is_empty();
    while !rest.is_empty() {
        rest = trim_ows(rest).strip_prefix(b";")?;
        rest = trim_ows(rest);
        let n = rest.iter().position(|&b| !is_tchar(b)).unwrap_or(rest.len());
        if n == 0 {
            return None;
        }
        rest = trim_ows(&rest[n..]).strip_prefix(b"=")?;
        rest = trim_ows(rest);
        rest = skip_token_or_quoted(rest)?;
    }
    Some((name, has_params))
}

/// Skips a token or a quoted-string (RFC 9110 §5.6.2, §5.6.4) at the start of `s`.
fn skip_token_or_quoted(s: &[u8]) -> Option<&[u8]> {
    if let Some(mut q) = s.strip_prefix(b"\"") {
        loop {
            match q.split_first()? {
                (b'"', rest) => return Some(rest),
                // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
                (b'\\', rest) => {
                    let (&c, rest) = rest.split_first()?;
                    if c != b'\t' && (c < 0x20 || c == 0x7f) {
                        return None;
                    }
                    q = rest;
                }
                // qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
                (&c, rest) if c == b'\t' || (c >= 0x20 && c != 0x7f) => q = rest,
                _ => return None,
            }
        }
    }
    let n = s.iter().position(|&b| !is_tchar(b)).unwrap_or(s.len());
    (n > 0).then(|| &s[n..])
}

/// The connection options this layer acts on (RFC 9110 §7.6.1), from all Connection lines.
#[derive(Clone, Copy, Default)]
struct ConnectionOptions {
    close: bool,
    keep_alive: bool,
    upgrade: bool,
}

impl ConnectionOptions {
    /// RFC 9112 §9.3: HTTP/1.1 persists unless `close`; HTTP/1.0 persists only with
    /// `keep-alive` (and not `close`).
    fn keep_alive(self, http11: bool) -> bool {
        !self.close && (http11 || self.keep_alive)
    }
}

/// Reads the Connection list case-insensitively; options other than `close`, `keep-alive` and
/// `upgrade` (including non-tokens) name hop-by-hop fields and are ignored here.
fn connection_options<'a>(values: impl Iterator<Item = &'a [u8]>) -> ConnectionOptions {
    let mut o = ConnectionOptions::default();
    for opt in list_elements(values) {
        if opt.eq_ignore_ascii_case(b"close") {
            o.close = true;
        } else if opt.eq_ignore_ascii_case(b"keep-alive") {
            o.keep_alive = true;
        } else if opt.eq_ignore_ascii_case(b"upgrade") {
            o.upgrade = true;
        }
    }
    o
}

/// Whether the Expect list asks for 100-continue; any other expectation is refused
/// (RFC 9110 §10.1.1: "A server that receives an Expect field value containing a member other
/// than 100-continue MAY respond with a 417 (Expectation Failed)"). Empty elements are ignored.
fn expects_continue<'a>(values: impl Iterator<Item = &'a [u8]>) -> Result<bool, ParseError> {
    let mut cont = false;
    for e in list_elements(values) {
        if e.eq_ignore_ascii_case(b"100-continue") {
            cont = true;
        } else if !e.is_empty() {
            return Err(ParseError::ExpectationFailed);
        }
    }
    Ok(cont)
}

/// RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
/// request message that lacks a Host header field and to any request message that contains
/// more than one Host header field line or a Host header field with an invalid field value."
fn check_host(head: &RequestHead<'_, '_>, memo: &mut HostMemo) -> Result<(), ParseError> {
    match head.known.count(HeaderId::Host) {
        0 if head.version == Version::Http11 => Err(ParseError::MissingHost),
        0 => Ok(()),
        1 => {
            let value = head.known(HeaderId::Host).map_or(&b""[..], |h| h.value);
            let absolute = head.form == TargetForm::Absolute;
            if !absolute && memo.holds(value) {
                return Ok(());
            }
            let host = parse_host_port(value).ok_or(ParseError::InvalidHost)?;
            // RFC 9112 §3.2.2: with an absolute-form target the server ignores Host in favour
            // of the target's authority. Policy: a Host naming another authority is refused, so
            // no component downstream can route by one and authorize by the other.
            if absolute && !host_matches_target(host, head.target.as_bytes()) {
                return Err(ParseError::InvalidHost);
            }
            memo.remember(value);
            Ok(())
        }
        _ => Err(ParseError::DuplicateHost),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::KnownHeaders;
    use BodyLength::{Chunked, CloseDelimited, Length};
    use ParseError as E;

    /// Test-only stand-in for the parser's header identification.
    fn id_of(name: &str) -> HeaderId {
        [
            ("host", HeaderId::Host),
            ("content-length", HeaderId::ContentLength),
            ("transfer-encoding", HeaderId::TransferEncoding),
            ("connection", HeaderId::Connection),
            ("expect", HeaderId::Expect),
            ("upgrade", HeaderId::Upgrade),
        ]
        .into_iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map_or(HeaderId::Other, |(_, id)| id)
    }

    fn headers<'a>(fields: &[(&'a str, &'a [u8])]) -> Vec<Header<'a>> {
        fields.iter().map(|&(name, value)| Header { name, value, id: id_of(name) }).collect()
    }

    fn head<'b, 'h>(
        method: Method,
        target: &'b str,
        version: Version,
        headers: &'h [Header<'b>],
    ) -> RequestHead<'b, 'h> {
        let mut known = KnownHeaders::default();
        for (i, h) in headers.iter().enumerate() {
            known.record(h.id, i);
        }
        let form = match (method, target.as_bytes().first()) {
            (Method::Connect, _) => TargetForm::Authority,
            (_, Some(b'/')) => TargetForm::Origin,
            (_, Some(b'*')) => TargetForm::Asterisk,
            _ => TargetForm::Absolute,
        };
        let token = method.as_str().unwrap_or("EXT");
        RequestHead { method, method_token: token, target, form, version, headers, known, len: 0 }
    }

    const V11: Version = Version::Http11;
    const V10: Version = Version::Http10;
    const H: (&str, &[u8]) = ("Host", b"example.com");

    /// body, keep_alive, expect_continue, upgrade
    type Out = Result<(BodyLength, bool, bool, bool), ParseError>;

    struct Case<'a> {
        rfc: &'a str,
        method: Method,
        target: &'a str,
        version: Version,
        fields: &'a [(&'a str, &'a [u8])],
        expect: Out,
    }

    fn run(cases: &[Case<'_>]) {
        // One memo across the rows, as one connection's requests: a remembered Host changes
        // no verdict.
        let mut memo = HostMemo::default();
        for c in cases {
            let hs = headers(c.fields);
            let h = head(c.method, c.target, c.version, &hs);
            let got =
                request_framing(&h).map(|f| (f.body, f.keep_alive, f.expect_continue, f.upgrade));
            assert_eq!(got, c.expect, "{}: {:?} {:?} {:?}", c.rfc, c.method, c.target, c.fields);
            // The fast path and the general one agree on every row.
            assert_eq!(
                request_framing(&h),
                request_framing_general(&h, &mut HostMemo::default()),
                "{}",
                c.rfc
            );
            let remembered = request_framing_remembering(&h, &mut memo);
            assert_eq!(remembered, request_framing(&h), "{} (remembered Host)", c.rfc);
        }
    }

    fn get<'a>(version: Version, fields: &'a [(&'a str, &'a [u8])], expect: Out) -> Case<'a> {
        Case { rfc: "", method: Method::Post, target: "/", version, fields, expect }
    }

    #[test]
    fn content_length_rfc9110_8_6() {
        let rfc = "RFC 9110 §8.6";
        let cases = [
            get(V11, &[H], Ok((Length(0), true, false, false))),
            get(V11, &[H, ("Content-Length", b"0")], Ok((Length(0), true, false, false))),
            get(V11, &[H, ("Content-Length", b"42")], Ok((Length(42), true, false, false))),
            get(V11, &[H, ("content-LENGTH", b"0042")], Ok((Length(42), true, false, false))),
            get(
                V11,
                &[H, ("Content-Length", b"18446744073709551615")],
                Ok((Length(u64::MAX), true, false, false)),
            ),
            get(
                V11,
                &[H, ("Content-Length", b"18446744073709551616")],
                Err(E::InvalidContentLength),
            ),
            get(V11, &[H, ("Content-Length", b"")], Err(E::InvalidContentLength)),
            get(V11, &[H, ("Content-Length", b"+5")], Err(E::InvalidContentLength)),
            get(V11, &[H, ("Content-Length", b"-5")], Err(E::InvalidContentLength)),
            get(V11, &[H, ("Content-Length", b"0x10")], Err(E::InvalidContentLength)),
            get(V11, &[H, ("Content-Length", b"5 5")], Err(E::InvalidContentLength)),
            // OWS around a list element is not part of it (the parser trims field values too).
            get(V11, &[H, ("Content-Length", b"5\t")], Ok((Length(5), true, false, false))),
            get(V11, &[H, ("Content-Length", b"5\x0b")], Err(E::InvalidContentLength)),
            get(V11, &[H, ("Content-Length", b"1e3")], Err(E::InvalidContentLength)),
            // Identical repeats count once; a comma list of one value too.
            get(
                V11,
                &[H, ("Content-Length", b"5"), ("Content-Length", b"5")],
                Ok((Length(5), true, false, false)),
            ),
            get(V11, &[H, ("Content-Length", b"5, 5")], Ok((Length(5), true, false, false))),
            get(V11, &[H, ("Content-Length", b"5,5 ,\t5")], Ok((Length(5), true, false, false))),
            get(V11, &[H, ("Content-Length", b"5, 05")], Ok((Length(5), true, false, false))),
            get(
                V11,
                &[H, ("Content-Length", b"5"), ("Content-Length", b"6")],
                Err(E::ConflictingContentLength),
            ),
            get(V11, &[H, ("Content-Length", b"5, 6")], Err(E::ConflictingContentLength)),
            get(V11, &[H, ("Content-Length", b"5,")], Err(E::InvalidContentLength)),
            get(V11, &[H, ("Content-Length", b",5")], Err(E::InvalidContentLength)),
            get(V11, &[H, ("Content-Length", b"5,,5")], Err(E::InvalidContentLength)),
            get(
                V11,
                &[H, ("Content-Length", b"5"), ("Content-Length", b"")],
                Err(E::InvalidContentLength),
            ),
            get(V11, &[H, ("Content-Length", b"5, x")], Err(E::InvalidContentLength)),
            get(V10, &[("Content-Length", b"3")], Ok((Length(3), false, false, false))),
        ];
        run(&cases.map(|c| Case { rfc, ..c }));
    }

    #[test]
    fn transfer_encoding_rfc9112_6_1_and_6_3() {
        let rfc = "RFC 9112 §6.1, §6.3, §7";
        let te = |v: &'static [u8]| -> &'static [(&'static str, &'static [u8])] {
            Box::leak(Box::new([H, ("Transfer-Encoding", v)]))
        };
        let ok = Ok((Chunked, true, false, false));
        let cases = [
            get(V11, te(b"chunked"), ok),
            get(V11, te(b"Chunked"), ok),
            get(V11, te(b"CHUNKED"), ok),
            get(V11, te(b" , chunked ,"), ok),
            get(V11, &[H, ("Transfer-Encoding", b""), ("Transfer-Encoding", b"chunked")], ok),
            get(V11, te(b"gzip, chunked"), Err(E::UnknownTransferCoding)),
            get(V11, te(b"identity, chunked"), Err(E::UnknownTransferCoding)),
            get(V11, te(b"x;a=1;b=\"q,\" , chunked"), Err(E::InvalidTransferEncoding)),
            get(V11, te(b"x;a=1;b=\"q\\\"\" , chunked"), Err(E::UnknownTransferCoding)),
            get(V11, te(b"x ; a = 1, chunked"), Err(E::UnknownTransferCoding)),
            get(
                V11,
                &[H, ("Transfer-Encoding", b"gzip"), ("Transfer-Encoding", b"chunked")],
                Err(E::UnknownTransferCoding),
            ),
            get(V11, te(b"chunked, gzip"), Err(E::ChunkedNotFinal)),
            get(V11, te(b"gzip"), Err(E::ChunkedNotFinal)),
            get(V11, te(b"identity"), Err(E::ChunkedNotFinal)),
            get(V11, te(b""), Err(E::ChunkedNotFinal)),
            get(
                V11,
                &[H, ("Transfer-Encoding", b"chunked"), ("Transfer-Encoding", b"gzip")],
                Err(E::ChunkedNotFinal),
            ),
            get(V11, te(b"chunked, chunked"), Err(E::InvalidTransferEncoding)),
            get(
                V11,
                &[H, ("Transfer-Encoding", b"chunked"), ("Transfer-Encoding", b"chunked")],
                Err(E::InvalidTransferEncoding),
            ),
            get(V11, te(b"chunked;x=1"), Err(E::InvalidTransferEncoding)),
            get(V11, te(b"chunked x"), Err(E::InvalidTransferEncoding)),
            get(V11, te(b"chunked\x0b"), Err(E::InvalidTransferEncoding)),
            get(V11, te(b"\"chunked\""), Err(E::InvalidTransferEncoding)),
            get(V11, te(b"x;=1, chunked"), Err(E::InvalidTransferEncoding)),
            get(V11, te(b"x;a=, chunked"), Err(E::InvalidTransferEncoding)),
            get(V11, te(b"x;a=\"open, chunked"), Err(E::InvalidTransferEncoding)),
            get(V11, te(b"chunkedx"), Err(E::ChunkedNotFinal)),
            get(
                V11,
                &[H, ("Transfer-Encoding", b"chunked"), ("Content-Length", b"5")],
                Err(E::TransferEncodingWithContentLength),
            ),
            get(
                V11,
                &[H, ("Content-Length", b"5"), ("Transfer-Encoding", b"chunked")],
                Err(E::TransferEncodingWithContentLength),
            ),
            get(
                V11,
                &[H, ("Content-Length", b"x"), ("Transfer-Encoding", b"gzip")],
                Err(E::TransferEncodingWithContentLength),
            ),
            get(V10, &[("Transfer-Encoding", b"chunked")], Err(E::TransferEncodingInHttp10)),
            get(
                V10,
                &[("Transfer-Encoding", b"chunked"), ("Content-Length", b"1")],
                Err(E::TransferEncodingInHttp10),
            ),
        ];
        run(&cases.map(|c| Case { rfc, ..c }));
    }

    #[test]
    fn host_rfc9112_3_2() {
        let rfc = "RFC 9112 §3.2, RFC 3986 §3.2.2";
        let host = |v: &'static [u8]| -> &'static [(&'static str, &'static [u8])] {
            Box::leak(Box::new([("Host", v)]))
        };
        let ok = Ok((Length(0), true, false, false));
        let bad = Err(E::InvalidHost);
        let cases = [
            get(V11, &[], Err(E::MissingHost)),
            get(V11, &[H, H], Err(E::DuplicateHost)),
            get(V10, &[H, H], Err(E::DuplicateHost)),
            get(V10, &[], Ok((Length(0), false, false, false))),
            get(V10, host(b"a b"), Err(E::InvalidHost)),
            get(V11, host(b"example.com"), ok),
            get(V11, host(b"EXAMPLE.com:8080"), ok),
            get(V11, host(b"example.com:"), ok),
            get(V11, host(b"127.0.0.1:80"), ok),
            get(V11, host(b"[::1]"), ok),
            get(V11, host(b"[2001:db8::7]:443"), ok),
            get(V11, host(b"[v1.fe80::a+en1]"), ok),
            get(V11, host(b"a-b_c~d.%41!$&'()*+,;="), ok),
            get(V11, host(b"localhost:65535"), ok),
            get(V11, host(b""), bad),
            get(V11, host(b":80"), bad),
            get(V11, host(b"localhost:65536"), bad),
            get(V11, host(b"localhost:000080"), bad),
            get(V11, host(b"localhost:8a"), bad),
            get(V11, host(b"a:1:2"), bad),
            get(V11, host(b"user@host"), bad),
            get(V11, host(b"a/b"), bad),
            get(V11, host(b"a b"), bad),
            get(V11, host(b"a%4"), bad),
            get(V11, host(b"a%zz"), bad),
            get(V11, host(b"[::1"), bad),
            get(V11, host(b"[::1]x"), bad),
            get(V11, host(b"[1::2::3]"), bad),
            get(V11, host(b"[127.0.0.1]"), bad),
            get(V11, host(b"[v.x]"), bad),
            get(V11, host(b"[vz.x]"), bad),
            get(V11, host(b"\xc3\xa9.example"), bad),
        ];
        run(&cases.map(|c| Case { rfc, ..c }));
    }

    #[test]
    fn absolute_form_host_policy_rfc9112_3_2_2() {
        let rfc = "RFC 9112 §3.2.2 (policy: Host must name the target's authority)";
        let abs = |target: &'static str, host: &'static [u8], ok: bool| Case {
            rfc,
            method: Method::Get,
            target,
            version: V11,
            fields: Box::leak(Box::new([("Host", host)])),
            expect: if ok { Ok((Length(0), true, false, false)) } else { Err(E::InvalidHost) },
        };
        run(&[
            abs("http://example.com/x", b"example.com", true),
            abs("http://Example.COM/x", b"example.com", true),
            abs("http://example.com:80/x", b"example.com", true),
            abs("http://example.com/x", b"example.com:80", true),
            abs("http://example.com:/x", b"example.com", true),
            abs("https://example.com?q", b"example.com:443", true),
            abs("http://[::1]:8080/", b"[::1]:8080", true),
            abs("http://example.com/x", b"other.com", false),
            abs("http://example.com/x", b"example.com:8080", false),
            abs("https://example.com/x", b"example.com:80", false),
            abs("http://user@example.com/x", b"example.com", false),
            abs("urn:example", b"example", false),
        ]);
        // HTTP/1.0 absolute-form without Host is fine; with a wrong one it is not.
        run(&[
            Case { version: V10, fields: &[], ..abs("http://a.example/", b"", true) },
            Case {
                version: V10,
                fields: &[("Host", b"b.example")],
                ..abs("http://a.example/", b"", false)
            },
        ]
        .map(|c| Case { expect: c.expect.map(|(b, _, e, u)| (b, false, e, u)), ..c }));
        // CONNECT's authority-form target is not compared with Host, only validated.
        run(&[Case {
            rfc,
            method: Method::Connect,
            target: "a.example:443",
            version: V11,
            fields: &[("Host", b"b.example:443")],
            expect: Ok((Length(0), true, false, false)),
        }]);
    }

    #[test]
    fn connection_rfc9112_9_3() {
        let rfc = "RFC 9112 §9.3, RFC 9110 §7.6.1";
        let ok = |ka| Ok((Length(0), ka, false, false));
        run(&[
            get(V11, &[H], ok(true)),
            get(V11, &[H, ("Connection", b"close")], ok(false)),
            get(V11, &[H, ("Connection", b"CLOSE")], ok(false)),
            get(V11, &[H, ("Connection", b"keep-alive, Close")], ok(false)),
            get(V11, &[H, ("Connection", b"foo"), ("Connection", b" ,close")], ok(false)),
            get(V11, &[H, ("Connection", b"closed")], ok(true)),
            get(V11, &[H, ("Connection", b"keep-alive")], ok(true)),
            get(V10, &[], ok(false)),
            get(V10, &[("Connection", b"keep-alive")], ok(true)),
            get(V10, &[("Connection", b"Keep-Alive")], ok(true)),
            get(V10, &[("Connection", b"keep-alive, close")], ok(false)),
            get(V10, &[("Connection", b"keep-alive"), ("Connection", b"close")], ok(false)),
        ]
        .map(|c| Case { rfc, ..c }));
    }

    #[test]
    fn expect_rfc9110_10_1_1() {
        let rfc = "RFC 9110 §10.1.1";
        const CL3: (&str, &[u8]) = ("Content-Length", b"3");
        run(&[
            get(V11, &[H, CL3, ("Expect", b"100-continue")], Ok((Length(3), true, true, false))),
            get(V11, &[H, CL3, ("Expect", b"100-Continue")], Ok((Length(3), true, true, false))),
            get(
                V11,
                &[H, ("Transfer-Encoding", b"chunked"), ("Expect", b"100-continue")],
                Ok((Chunked, true, true, false)),
            ),
            // No body: nothing to wait for.
            get(V11, &[H, ("Expect", b"100-continue")], Ok((Length(0), true, false, false))),
            get(V11, &[H, CL3, ("Expect", b"")], Ok((Length(3), true, false, false))),
            get(V11, &[H, CL3, ("Expect", b"200-ok")], Err(E::ExpectationFailed)),
            get(V11, &[H, CL3, ("Expect", b"100-continue, foo")], Err(E::ExpectationFailed)),
            get(V11, &[H, CL3, ("Expect", b"100-continue;x=1")], Err(E::ExpectationFailed)),
            // HTTP/1.0: the expectation is ignored (MUST ignore 100-continue).
            get(V10, &[CL3, ("Expect", b"100-continue")], Ok((Length(3), false, false, false))),
            get(V10, &[CL3, ("Expect", b"foo")], Ok((Length(3), false, false, false))),
        ]
        .map(|c| Case { rfc, ..c }));
    }

    #[test]
    fn upgrade_rfc9110_7_8() {
        let rfc = "RFC 9110 §7.8";
        const UP: (&str, &[u8]) = ("Upgrade", b"websocket");
        run(&[
            get(V11, &[H, UP, ("Connection", b"Upgrade")], Ok((Length(0), true, false, true))),
            get(
                V11,
                &[H, UP, ("Connection", b"keep-alive, upgrade")],
                Ok((Length(0), true, false, true)),
            ),
            get(V11, &[H, UP], Ok((Length(0), true, false, false))),
            get(V11, &[H, ("Connection", b"upgrade")], Ok((Length(0), true, false, false))),
            get(V10, &[UP, ("Connection", b"upgrade")], Ok((Length(0), false, false, false))),
        ]
        .map(|c| Case { rfc, ..c }));
    }

    #[test]
    fn connect_has_no_body_rfc9110_9_3_6() {
        let rfc = "RFC 9110 §9.3.6";
        let connect = |fields: &'static [(&'static str, &'static [u8])], expect| Case {
            rfc,
            method: Method::Connect,
            target: "example.com:443",
            version: V11,
            fields,
            expect,
        };
        run(&[
            connect(&[H], Ok((Length(0), true, false, false))),
            connect(&[H, ("Content-Length", b"0")], Ok((Length(0), true, false, false))),
            connect(&[H, ("Content-Length", b"1")], Err(E::InvalidFraming)),
            connect(&[H, ("Transfer-Encoding", b"chunked")], Err(E::InvalidFraming)),
        ]);
    }

    /// RFC 9112 §6.3, §9.3, §3.2: the fast path (no framing field but Host) and the general
    /// path give the same result on every combination of version, method, target and the
    /// fields the fast path skips over.
    #[test]
    fn framing_fast_path_matches_general() {
        let methods = [Method::Get, Method::Post, Method::Head, Method::Connect];
        let targets = ["/", "*", "http://a.example/x", "a.example:443"];
        let hosts: [&[(&str, &[u8])]; 6] = [
            &[],
            &[("Host", b"a.example")],
            &[("Host", b"a.example:443")],
            &[("Host", b"a b")],
            &[("Host", b"a.example"), ("Host", b"a.example")],
            &[("Host", b"[::1]")],
        ];
        let extras: [&[(&str, &[u8])]; 5] = [
            &[],
            &[("Upgrade", b"websocket")],
            &[("Accept", b"*/*")],
            &[("Connection", b"close")],
            &[("Content-Length", b"0")],
        ];
        let mut fast = 0;
        let mut memo = HostMemo::default();
        for version in [V10, V11] {
            for &method in &methods {
                for target in targets {
                    for host in hosts {
                        for extra in extras {
                            let fields: Vec<_> = host.iter().chain(extra).copied().collect();
                            let hs = headers(&fields);
                            let h = head(method, target, version, &hs);
                            fast += usize::from(h.known.count(HeaderId::Connection) == 0);
                            assert_eq!(
                                request_framing(&h),
                                request_framing_general(&h, &mut HostMemo::default()),
                                "{version:?} {method:?} {target} {fields:?}"
                            );
                            assert_eq!(
                                request_framing_remembering(&h, &mut memo),
                                request_framing(&h),
                                "remembered Host: {version:?} {method:?} {target} {fields:?}"
                            );
                        }
                    }
                }
            }
        }
        assert!(fast > 0);
    }

    #[test]
    fn response_framing_rfc9112_6_3() {
        struct R<'a> {
            method: Method,
            status: u16,
            version: Version,
            fields: &'a [(&'a str, &'a [u8])],
            expect: Result<ResponseFraming, ParseError>,
        }
        let f = |body, keep_alive, tunnel| Ok(ResponseFraming { body, keep_alive, tunnel });
        let r = |method, status, fields, expect| R { method, status, version: V11, fields, expect };
        const CL: (&str, &[u8]) = ("Content-Length", b"10");
        const TE: (&str, &[u8]) = ("Transfer-Encoding", b"chunked");
        let cases = [
            // Rule 1: HEAD, 1xx, 204, 304 end at the empty line, whatever their fields say.
            r(Method::Head, 200, &[CL], f(Length(0), true, false)),
            r(Method::Head, 200, &[TE, CL], f(Length(0), true, false)),
            r(Method::Get, 100, &[], f(Length(0), true, false)),
            r(Method::Get, 204, &[("Content-Length", b"x")], f(Length(0), true, false)),
            r(Method::Get, 304, &[CL], f(Length(0), true, false)),
            // Rule 2: CONNECT 2xx, and 101, become a tunnel.
            r(Method::Connect, 200, &[CL], f(Length(0), false, true)),
            r(Method::Connect, 407, &[CL], f(Length(10), true, false)),
            r(Method::Get, 101, &[], f(Length(0), false, true)),
            // Rules 3-4: Transfer-Encoding, then Content-Length.
            r(Method::Get, 200, &[TE], f(Chunked, true, false)),
            r(Method::Get, 200, &[TE, CL], Err(E::TransferEncodingWithContentLength)),
            r(
                Method::Get,
                200,
                &[("Transfer-Encoding", b"gzip, chunked")],
                Err(E::UnknownTransferCoding),
            ),
            r(Method::Get, 200, &[("Transfer-Encoding", b"gzip")], Err(E::ChunkedNotFinal)),
            r(Method::Get, 200, &[CL], f(Length(10), true, false)),
            r(Method::Get, 200, &[CL, ("Content-Length", b"11")], Err(E::ConflictingContentLength)),
            r(Method::Get, 200, &[("Content-Length", b"-1")], Err(E::InvalidContentLength)),
            // Rule 8: neither → until close; the connection cannot be reused.
            r(Method::Get, 200, &[], f(CloseDelimited, false, false)),
            r(Method::Get, 200, &[CL, ("Connection", b"close")], f(Length(10), false, false)),
            R { version: V10, ..r(Method::Get, 200, &[CL], f(Length(10), false, false)) },
            R {
                version: V10,
                ..r(
                    Method::Get,
                    200,
                    &[CL, ("Connection", b"keep-alive")],
                    f(Length(10), true, false),
                )
            },
            R { version: V10, ..r(Method::Get, 200, &[TE], Err(E::TransferEncodingInHttp10)) },
        ];
        for c in cases {
            let hs = headers(c.fields);
            let got = response_framing(c.method, c.status, c.version, &hs);
            assert_eq!(got, c.expect, "RFC 9112 §6.3: {:?} {} {:?}", c.method, c.status, c.fields);
        }
    }
}
