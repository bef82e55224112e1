//! The response a handler returns, and the conversions into it.

use bytes::Bytes;
use http::{HeaderName, HeaderValue, StatusCode};

use crate::Version;
use crate::body::{Body, BodyError};
use crate::websocket::OnUpgrade;

mod header_list;

pub use header_list::HeaderList;

/// An HTTP response: status, header fields and body.
///
/// The server adds `Date`, the framing (`Content-Length` or `Transfer-Encoding: chunked`) and
/// `Connection` itself; a handler sets everything else. Header fields use the `http` crate's
/// [`HeaderName`] and [`HeaderValue`], in a [`HeaderList`] whose storage is recycled per
/// thread, so a response built from static parts allocates nothing once a thread has served a
/// few, and the response itself stays small (it is moved out of the handler and encoded).
///
/// # Examples
/// ```
/// use http::{StatusCode, header};
/// use peregrine::Response;
/// let res = Response::new("Hello, World!")
///     .with_header(header::CONTENT_TYPE, header::HeaderValue::from_static("text/plain"));
/// assert_eq!(res.status(), StatusCode::OK);
/// assert_eq!(res.headers().get(&header::CONTENT_TYPE).unwrap(), "text/plain");
/// ```
#[derive(Debug)]
pub struct Response {
    status: StatusCode,
    headers: HeaderList,
    body: Body,
    /// What runs on the connection (or stream) once this response accepted a protocol
    /// upgrade ([`WebSocketUpgrade::on_upgrade`](crate::websocket::WebSocketUpgrade::on_upgrade));
    /// boxed, so a response stays one pointer larger for it.
    upgrade: Option<Box<OnUpgrade>>,
    /// The version a client received it in (a byte beside the status: no larger response).
    version: Version,
}

impl Response {
    /// A `200 OK` response with `body`.
    #[inline]
    pub fn new(body: impl Into<Body>) -> Response {
        Response {
            status: StatusCode::OK,
            headers: HeaderList::new(),
            body: body.into(),
            upgrade: None,
            version: Version::Http11,
        }
    }

    /// A response with `status` and `body`.
    #[inline]
    pub fn with_status(status: StatusCode, body: impl Into<Body>) -> Response {
        Response {
            status,
            headers: HeaderList::new(),
            body: body.into(),
            upgrade: None,
            version: Version::Http11,
        }
    }

    /// Adds a header field (keeping any others of the same name) and returns the response.
    ///
    /// Inline so that a chain of calls builds the response in place: out of line, each call
    /// moved the response in and out.
    #[inline(always)]
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Response {
        self.headers.append(name, value);
        self
    }

    /// Attaches what runs once this response, accepting an upgrade, is sent.
    pub(crate) fn with_upgrade(mut self, upgrade: OnUpgrade) -> Response {
        self.upgrade = Some(Box::new(upgrade));
        self
    }

    /// [`Response::with_upgrade`] for an upgrade already boxed.
    #[cfg(feature = "tower")]
    pub(crate) fn with_boxed_upgrade(mut self, upgrade: Box<OnUpgrade>) -> Response {
        self.upgrade = Some(upgrade);
        self
    }

    /// Takes what runs once this response is sent, if it accepted an upgrade.
    #[inline]
    pub(crate) fn take_upgrade(&mut self) -> Option<Box<OnUpgrade>> {
        self.upgrade.take()
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// Sets the status code.
    pub fn set_status(&mut self, status: StatusCode) {
        self.status = status;
    }

    /// The protocol version of a response the client received: the one it came in (HTTP/3
    /// after an `Alt-Svc` switch, say). A response a handler builds says HTTP/1.1; the server
    /// sends it in its connection's version whatever this says.
    ///
    /// # Examples
    /// ```
    /// use peregrine::{Response, Version};
    /// assert_eq!(Response::new("hi").version(), Version::Http11);
    /// ```
    pub fn version(&self) -> Version {
        self.version
    }

    /// Sets the version a client received the response in.
    pub(crate) fn set_version(&mut self, version: Version) {
        self.version = version;
    }

    /// The header fields.
    pub fn headers(&self) -> &HeaderList {
        &self.headers
    }

    /// The header fields, to change.
    pub fn headers_mut(&mut self) -> &mut HeaderList {
        &mut self.headers
    }

    /// The body.
    pub fn body_mut(&mut self) -> &mut Body {
        &mut self.body
    }

    /// Splits the response into status, header fields and body.
    pub fn into_parts(self) -> (StatusCode, HeaderList, Body) {
        (self.status, self.headers, self.body)
    }
}

/// Converts into anything a handler may return.
///
/// Implemented for [`Response`], `http::Response<B>`, bodies (`&'static str`, `String`,
/// `Bytes`, `Vec<u8>`, [`Body`]: status 200), [`StatusCode`] (empty body), `(StatusCode, T)`,
/// `()` (200, empty) and `Result<T, E>` where both sides convert.
pub trait IntoResponse {
    /// Performs the conversion.
    fn into_response(self) -> Response;
}

impl IntoResponse for Response {
    #[inline]
    fn into_response(self) -> Response {
        self
    }
}

macro_rules! body_into_response {
    ($($t:ty),*) => {$(
        impl IntoResponse for $t {
            #[inline]
            fn into_response(self) -> Response {
                Response::new(self)
            }
        }
    )*};
}

body_into_response!(&'static str, &'static [u8], String, Vec<u8>, Bytes, Body, ());

impl IntoResponse for StatusCode {
    fn into_response(self) -> Response {
        Response::with_status(self, Body::empty())
    }
}

impl<T: IntoResponse> IntoResponse for (StatusCode, T) {
    fn into_response(self) -> Response {
        let mut res = self.1.into_response();
        res.set_status(self.0);
        res
    }
}

impl<T: IntoResponse, E: IntoResponse> IntoResponse for Result<T, E> {
    fn into_response(self) -> Response {
        match self {
            Ok(t) => t.into_response(),
            Err(e) => e.into_response(),
        }
    }
}

/// A body error answers with its status and a one-line reason, so `?` works on body reads.
impl IntoResponse for BodyError {
    fn into_response(self) -> Response {
        Response::with_status(self.status(), self.to_string())
    }
}

impl<B: Into<Body>> IntoResponse for http::Response<B> {
    fn into_response(self) -> Response {
        Response::from(self)
    }
}

impl<B: Into<Body>> From<http::Response<B>> for Response {
    fn from(res: http::Response<B>) -> Self {
        let (parts, body) = res.into_parts();
        Response {
            status: parts.status,
            headers: parts.headers.into(),
            body: body.into(),
            upgrade: None,
            version: Version::Http11,
        }
    }
}

impl From<Response> for http::Response<Body> {
    fn from(res: Response) -> Self {
        let mut out = http::Response::new(res.body);
        *out.status_mut() = res.status;
        *out.version_mut() = res.version.into();
        let map = out.headers_mut();
        for (name, value) in res.headers {
            map.append(name, value);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header;

    fn names(list: &HeaderList) -> Vec<&str> {
        list.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn header_list_keeps_order_and_spills() {
        let mut list = HeaderList::new();
        for i in 0..6 {
            list.append(
                HeaderName::from_bytes(format!("x-{i}").as_bytes()).unwrap(),
                HeaderValue::from(i),
            );
        }
        assert_eq!(names(&list), ["x-0", "x-1", "x-2", "x-3", "x-4", "x-5"]);
        assert!(list.remove(&HeaderName::from_static("x-1")));
        assert_eq!(names(&list), ["x-0", "x-2", "x-3", "x-4", "x-5"]);
        list.insert(HeaderName::from_static("x-0"), HeaderValue::from_static("new"));
        assert_eq!(names(&list), ["x-2", "x-3", "x-4", "x-5", "x-0"]);
        assert_eq!(list.get(&HeaderName::from_static("x-0")).unwrap(), "new");
        assert_eq!(list.len(), 5);
    }

    #[test]
    fn into_response_conversions() {
        struct Case {
            res: Response,
            status: u16,
            body_len: Option<u64>,
        }
        let cases = [
            Case { res: "hi".into_response(), status: 200, body_len: Some(2) },
            Case { res: StatusCode::NO_CONTENT.into_response(), status: 204, body_len: Some(0) },
            Case {
                res: (StatusCode::CREATED, String::from("abc")).into_response(),
                status: 201,
                body_len: Some(3),
            },
            Case {
                res: Err::<&str, _>(StatusCode::NOT_FOUND).into_response(),
                status: 404,
                body_len: Some(0),
            },
        ];
        for case in cases {
            assert_eq!(case.res.status().as_u16(), case.status);
            assert_eq!(case.res.body.size_hint(), case.body_len);
        }
    }

    #[test]
    fn http_response_round_trip() {
        let res = http::Response::builder()
            .status(418)
            .header(header::CONTENT_TYPE, "text/plain")
            .header("x-a", "1")
            .header("x-a", "2")
            .body("tea")
            .unwrap();
        let ours = Response::from(res);
        assert_eq!(ours.status().as_u16(), 418);
        assert_eq!(ours.headers().len(), 3);
        let back: http::Response<Body> = ours.into();
        assert_eq!(back.headers().get_all("x-a").iter().count(), 2);
    }
}
