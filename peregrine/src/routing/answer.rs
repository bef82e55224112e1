//! The responses the router gives itself: 404, 405, `OPTIONS`, the trailing-slash redirect.

use std::cell::RefCell;
use std::fmt::Write as _;

use http::StatusCode;
use http::header::{self, HeaderValue};

use crate::response::Response;
use crate::router::{AllowSet, Location};
use crate::text::Text;

const TEXT_PLAIN: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");

/// A response the router gives itself, built when its future is polled (this keeps the
/// [`RouteFuture`](super::RouteFuture) small: a [`Response`] is several hundred bytes).
#[derive(Debug)]
pub(super) enum Answer {
    /// `404 Not Found` (RFC 9110 §15.5.5).
    NotFound,
    /// `405 Method Not Allowed`: "The origin server MUST generate an Allow header field in a
    /// 405 response containing a list of the target resource's currently supported methods"
    /// (RFC 9110 §15.5.6).
    MethodNotAllowed(HeaderValue),
    /// `OPTIONS` on a resource: "A server generating a successful response to OPTIONS SHOULD
    /// send any header that might indicate optional features implemented by the server and
    /// applicable to the target resource (e.g., Allow)" (RFC 9110 §9.3.7); no content, so 204.
    Options(HeaderValue),
    /// `204 No Content`: `OPTIONS *`, about the server itself (RFC 9110 §9.3.7).
    NoContent,
    /// `308 Permanent Redirect` to the `Location` (RFC 9110 §15.4.9: the client repeats the
    /// method and content, unlike with 301).
    Redirect(HeaderValue),
}

impl Answer {
    /// The redirect to `location` with the request's query.
    pub(super) fn redirect(location: Location<'_>, query: Option<&str>) -> Answer {
        let len = location.base().len() + 2 + query.map_or(0, str::len);
        let mut target = String::with_capacity(len);
        // Writing to a String cannot fail.
        let _ = write!(target, "{location}");
        if let Some(q) = query {
            target.push('?');
            target.push_str(q);
        }
        // The path and query come from a parsed request target: visible ASCII, a valid value.
        // Should that ever not hold, a 404 is the honest answer (the path matched nothing).
        match HeaderValue::try_from(target) {
            Ok(value) => Answer::Redirect(value),
            Err(_) => Answer::NotFound,
        }
    }

    pub(super) fn into_response(self) -> Response {
        match self {
            Answer::NotFound => Response::with_status(StatusCode::NOT_FOUND, "Not Found")
                .with_header(header::CONTENT_TYPE, TEXT_PLAIN),
            Answer::MethodNotAllowed(allow) => {
                Response::with_status(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed")
                    .with_header(header::CONTENT_TYPE, TEXT_PLAIN)
                    .with_header(header::ALLOW, allow)
            }
            Answer::Options(allow) => {
                Response::with_status(StatusCode::NO_CONTENT, ()).with_header(header::ALLOW, allow)
            }
            Answer::NoContent => Response::with_status(StatusCode::NO_CONTENT, ()),
            Answer::Redirect(location) => Response::with_status(StatusCode::PERMANENT_REDIRECT, ())
                .with_header(header::LOCATION, location),
        }
    }
}

/// The `Allow` header values this router has sent, built once each and then shared (cloning a
/// `HeaderValue` made from bytes is a reference count): a worker answers 405 and `OPTIONS`
/// without allocating once it has seen each route's set.
///
/// Per clone of the router, so per worker thread: no lock.
#[derive(Debug, Default)]
pub(super) struct AllowCache {
    values: RefCell<Vec<HeaderValue>>,
}

/// Distinct `Allow` values kept; a router with more distinct method sets than this allocates
/// for the rest.
const ALLOW_CACHE_MAX: usize = 64;

impl AllowCache {
    /// The header value for `allow`.
    pub(super) fn value(&self, allow: AllowSet<'_>) -> HeaderValue {
        let mut buf = Text::<128>::new();
        if write!(buf, "{allow}").is_err() {
            // Longer than the stack buffer (many extension methods): build it directly.
            return HeaderValue::try_from(allow.to_string())
                .unwrap_or(HeaderValue::from_static("OPTIONS"));
        }
        let text = buf.as_bytes();
        let mut values = self.values.borrow_mut();
        if let Some(v) = values.iter().find(|v| v.as_bytes() == text) {
            return v.clone();
        }
        // Method names are tokens (RFC 9110 §5.6.2): always a valid field value.
        let value = HeaderValue::from_bytes(text).unwrap_or(HeaderValue::from_static("OPTIONS"));
        if values.len() < ALLOW_CACHE_MAX {
            values.push(value.clone());
        }
        value
    }
}
