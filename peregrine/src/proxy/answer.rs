//! The answers the proxy gives itself, rather than an upstream's.

use http::StatusCode;

use crate::body::Body;
use crate::client::Error;
use crate::response::Response;

/// A response the proxy gives itself.
pub(super) fn answer(status: StatusCode, why: &'static str) -> Response {
    Response::with_status(status, Body::from_static(why.as_bytes()))
}

/// The answer to a request whose upstream failed: 504 for a timeout, 502 otherwise (RFC 9110
/// §15.6.3, §15.6.5).
pub(super) fn failed(e: &Error) -> Response {
    if e.is_timeout() {
        answer(StatusCode::GATEWAY_TIMEOUT, "the upstream server did not answer in time")
    } else {
        answer(StatusCode::BAD_GATEWAY, "the upstream server failed")
    }
}
