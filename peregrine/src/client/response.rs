//! Turning a connection's response head view into the crate's owned [`Response`], and the
//! client's errors into body errors.

use http::{HeaderName, HeaderValue, StatusCode};

use super::conn::ResponseHead;
use super::error::{Deadline, Error, Kind};
use crate::body::{Body, BodyError, BodyErrorKind};
use crate::response::Response;

/// An owned response with `body`: the status and the fields copied out of the view.
///
/// # Errors
/// [`Error::is_protocol`] for a status the `http` crate cannot hold (never for a parsed one).
pub(crate) fn owned(head: &ResponseHead<'_>, body: Body) -> Result<Response, Error> {
    let status = StatusCode::from_u16(head.status())
        .map_err(|_| Error::new(Kind::Protocol, "invalid status code"))?;
    let mut response = Response::with_status(status, body);
    response.set_version(head.version());
    let headers = response.headers_mut();
    for (name, value) in head.headers() {
        // Both were checked by the parser or the HPACK decoder with the rules these
        // constructors apply (token names; no CR, LF, NUL in values).
        if let (Ok(n), Ok(v)) =
            (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_bytes(value))
        {
            headers.append(n, v);
        }
    }
    Ok(response)
}

/// The body error a client error becomes for a reader of the response body.
pub(crate) fn body_error(e: &Error) -> BodyError {
    use crate::http1::body_decoder::BodyDecodeError;
    use std::error::Error as _;
    let decode = e.source().and_then(|s| s.downcast_ref::<BodyDecodeError>());
    let kind = match e.kind() {
        Kind::Body if decode == Some(&BodyDecodeError::Incomplete) => BodyErrorKind::Incomplete,
        Kind::TooLarge => BodyErrorKind::TooLarge,
        Kind::Body | Kind::Protocol => BodyErrorKind::Invalid,
        Kind::Timeout(Deadline::Read | Deadline::Request) => BodyErrorKind::TimedOut,
        _ => BodyErrorKind::Incomplete,
    };
    BodyError::new(kind)
}
