//! The parts of a request the static-file decision reads.

use crate::Method;

/// The parts of a request the static-file decision reads.
///
/// Header values are the raw field values; when a field was sent several times, join the
/// values with `", "` (RFC 9110 §5.3) before handing them over.
#[derive(Clone, Copy, Debug)]
pub struct FileRequest<'a> {
    /// The request method; only GET and HEAD are served.
    pub method: Method,
    /// The path beneath the root, still percent-encoded, without the query (e.g. `/a%20b.txt`;
    /// the leading slash is optional, so a router's catch-all capture `a%20b.txt` works too).
    /// Anything from a `?` on is ignored.
    pub path: &'a [u8],
    /// `If-Match` (RFC 9110 §13.1.1).
    pub if_match: Option<&'a [u8]>,
    /// `If-None-Match` (RFC 9110 §13.1.2).
    pub if_none_match: Option<&'a [u8]>,
    /// `If-Modified-Since` (RFC 9110 §13.1.3).
    pub if_modified_since: Option<&'a [u8]>,
    /// `If-Unmodified-Since` (RFC 9110 §13.1.4).
    pub if_unmodified_since: Option<&'a [u8]>,
    /// `Range` (RFC 9110 §14.2).
    pub range: Option<&'a [u8]>,
    /// `If-Range` (RFC 9110 §13.1.5).
    pub if_range: Option<&'a [u8]>,
    /// `Accept-Encoding` (RFC 9110 §12.5.3).
    pub accept_encoding: Option<&'a [u8]>,
    /// `Accept` (RFC 9110 §12.5.1): with [`ServeDir::spa`](crate::files::ServeDir::spa), whether the client wants HTML.
    pub accept: Option<&'a [u8]>,
    /// `Authorization` (RFC 9110 §11.6.2), for [`ServeDir::basic_auth`](crate::files::ServeDir::basic_auth).
    pub authorization: Option<&'a [u8]>,
    /// `Origin` (RFC 6454 §7), for [`ServeDir::cors`](crate::files::ServeDir::cors).
    pub origin: Option<&'a [u8]>,
    /// `Access-Control-Request-Method` (Fetch §3.2.2): an `OPTIONS` with it is a preflight.
    pub access_control_request_method: Option<&'a [u8]>,
    /// `Access-Control-Request-Headers` (Fetch §3.2.2).
    pub access_control_request_headers: Option<&'a [u8]>,
    /// The query (after `?`, without it), which directory listings read (`sort`, `order`,
    /// `page`, `format`). When `None`, whatever follows a `?` in `path` is used.
    pub query: Option<&'a [u8]>,
}

impl<'a> FileRequest<'a> {
    /// A request with no conditional, range or encoding headers.
    ///
    /// # Examples
    /// ```
    /// use peregrine::{Method, files::FileRequest};
    /// let req = FileRequest { range: Some(b"bytes=0-9"), ..FileRequest::new(Method::Get, b"/a.bin") };
    /// assert_eq!(req.path, b"/a.bin");
    /// ```
    pub fn new(method: Method, path: &'a [u8]) -> FileRequest<'a> {
        FileRequest {
            method,
            path,
            if_match: None,
            if_none_match: None,
            if_modified_since: None,
            if_unmodified_since: None,
            range: None,
            if_range: None,
            accept_encoding: None,
            accept: None,
            authorization: None,
            origin: None,
            access_control_request_method: None,
            access_control_request_headers: None,
            query: None,
        }
    }
}
