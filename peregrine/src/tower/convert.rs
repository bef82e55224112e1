//! Requests and responses between peregrine's types and the `http` crate's, with what the
//! conversions in `request` and `response` leave out: who sent the request, the authority of
//! an HTTP/2 request, and a response body's framing.

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HOST, TRAILER};

use super::websocket::{AcceptedUpgrade, PendingUpgrade};
use super::{BoxError, RemoteAddr};
use crate::body::Body;
use crate::request::{Peer, Request};
use crate::response::Response;
use crate::{Method, Version};

/// The `http::Request` a service gets for `req` (see the module docs' table); `None` for a
/// target the `http` crate cannot hold in a `Uri` (which it refuses bytes our parser allows,
/// such as `{` or `"`): read as another target it would reach the wrong resource.
pub(super) fn to_http_request(mut req: Request) -> Option<http::Request<Body>> {
    let head = req.raw_head();
    // RFC 9113 §8.5: an HTTP/2 CONNECT has no :path; its target is the :authority.
    let target = match req.target() {
        "" => req.authority().unwrap_or_default(),
        target => target,
    };
    // Zero copy: the Uri, like the field values, shares the head's bytes.
    let uri = http::Uri::from_maybe_shared(head.slice_ref(target.as_bytes())).ok()?;
    let mut out = http::Request::new(Body::empty());
    *out.method_mut() = crate::request::to_http_method(&req);
    *out.uri_mut() = uri;
    *out.version_mut() = req.version().into();
    let headers = out.headers_mut();
    headers.reserve(req.headers().len());
    let mut asks_upgrade = false;
    for (name, value) in req.headers().iter() {
        asks_upgrade |= name.len() == 7 && name.eq_ignore_ascii_case("upgrade");
        // A field the `http` crate refuses (it is stricter about some obs-text) is left out,
        // as `From<Request> for http::Request` does.
        let Ok(name) = http::HeaderName::from_bytes(name.as_bytes()) else { continue };
        if let Ok(value) = http::HeaderValue::from_maybe_shared(head.slice_ref(value)) {
            headers.append(name, value);
        }
    }
    // RFC 9113 §8.3.1, RFC 9114 §4.3.1: an HTTP/2 or HTTP/3 request carries its authority
    // in `:authority`; read as HTTP/1.1 semantics, which tower services expect, it is the
    // Host field.
    if req.version() >= Version::Http2 && !headers.contains_key(HOST) {
        let authority = req.authority().map(|a| head.slice_ref(a.as_bytes()));
        if let Some(Ok(value)) = authority.map(http::HeaderValue::from_maybe_shared) {
            headers.insert(HOST, value);
        }
    }
    // A WebSocket handshake is checked here, where the server's request still is (over
    // HTTP/2 its body is the WebSocket's input, not the service's).
    if let Some(pending) = PendingUpgrade::of(&mut req, asks_upgrade) {
        out.extensions_mut().insert(pending);
    }
    if let Some(peer) = &req.remote_addr {
        #[cfg(feature = "axum")]
        out.extensions_mut().insert(axum::extract::ConnectInfo(peer.addr()));
        out.extensions_mut().insert(RemoteAddr(peer.clone()));
    }
    *out.body_mut() = req.into_body();
    Some(out)
}

/// The [`Request`] a handler gets for `req`, made by a server other than ours (hyper) or by
/// a tower stack: its head written in HTTP/1.1 form, its body streamed, its client taken
/// from [`RemoteAddr`] (or axum's `ConnectInfo<SocketAddr>`) when the extensions hold it.
pub(super) fn from_http_request<B>(req: http::Request<B>) -> Request
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let (mut parts, body) = req.into_parts();
    let peer = match parts.extensions.get::<RemoteAddr>() {
        Some(remote) => Some(remote.0.clone()),
        None => connect_info(&parts.extensions).map(Peer::Direct),
    };
    // HTTP/2 under hyper: the authority is in the URI, and a handler reads it from Host
    // (RFC 9113 §8.3.1), as it does for our own HTTP/2 requests.
    if !parts.headers.contains_key(HOST) {
        let authority = parts.uri.authority().map(|a| http::HeaderValue::from_str(a.as_str()));
        if let Some(Ok(value)) = authority {
            parts.headers.insert(HOST, value);
        }
    }
    let mut out = Request::from(http::Request::from_parts(parts, Body::from_http_body(body)));
    out.remote_addr = peer;
    out
}

#[cfg(feature = "axum")]
fn connect_info(extensions: &http::Extensions) -> Option<std::net::SocketAddr> {
    extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0)
}

#[cfg(not(feature = "axum"))]
fn connect_info(_: &http::Extensions) -> Option<std::net::SocketAddr> {
    None
}

/// The [`Response`] for a service's `res` to a request with `method`: the status and fields as
/// they are, the body streamed with the framing the module docs describe.
pub(super) fn from_http_response<B>(
    res: http::Response<B>,
    method: Method,
    cx: &mut std::task::Context<'_>,
) -> Response
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let (mut parts, body) = res.into_parts();
    let upgrade = parts.extensions.remove::<AcceptedUpgrade>().and_then(|a| a.take());
    let declared = || {
        let mut values = parts.headers.get_all(CONTENT_LENGTH).iter();
        // One value only: a list, even of equal lengths, is left to the body's own size.
        match (values.next(), values.next()) {
            (Some(v), None) => crate::http1::framing::parse_content_length(v.as_bytes()),
            _ => None,
        }
    };
    // RFC 9110 §8.6: the answer to HEAD, and a 304, announce the length of the content they
    // do not carry; their body is empty, so the field is the only word on it. Otherwise the
    // body's exact size makes a message that ends where it says, and the field serves a body
    // that does not know its size.
    let no_content = method == Method::Head || parts.status == http::StatusCode::NOT_MODIFIED;
    let exact = http_body::Body::size_hint(&body).exact();
    let length = if no_content { declared().or(exact) } else { exact.or_else(declared) };
    // RFC 9110 §6.6.2: a Trailer field announces trailers, which need a way to follow even a
    // body of known size; a body of unknown size may end with them anyway.
    let trailers = length.is_none() || parts.headers.contains_key(TRAILER);
    let mut body = Body::from_http_body_framed(body, length, trailers);
    // A body the response carries (RFC 9110 §6.4.1: not for HEAD, 1xx, 204 or 304), of known
    // length and complete at once (`String`, `Json`), is written with the head like a
    // handler's bytes, rather than streamed after it.
    let status = parts.status.as_u16();
    if !no_content && status >= 200 && status != 204 {
        body.poll_whole(cx);
    }
    let mut out = Response::with_status(parts.status, body);
    *out.headers_mut() = parts.headers.into();
    match upgrade {
        Some(upgrade) => out.with_boxed_upgrade(upgrade),
        None => out,
    }
}
