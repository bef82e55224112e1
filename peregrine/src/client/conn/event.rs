//! What a [`Connection`](super::Connection) reports: response heads as views over its own
//! buffers, body bytes borrowed from its read buffer, the end of each response.

use http::HeaderMap;

use crate::Version;
use crate::client::Error;
use crate::headers::{Headers, Source};

/// A request on a connection: HTTP/1.1 numbers its requests in order, HTTP/2 uses the stream
/// id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub(crate) u32);

impl RequestId {
    /// The number: the request's position on an HTTP/1.1 connection (from 1), or its HTTP/2
    /// stream id.
    pub fn get(self) -> u32 {
        self.0
    }
}

/// Something that happened to a request on a connection; borrows the connection until the
/// next call.
#[derive(Debug)]
pub enum Event<'a> {
    /// The final response head (interim 1xx heads are skipped).
    Head {
        /// The request it answers.
        id: RequestId,
        /// The status and fields.
        head: ResponseHead<'a>,
    },
    /// Bytes of the response body (zero copy: a slice of the connection's read buffer, valid
    /// until the next call).
    Data {
        /// The request.
        id: RequestId,
        /// The bytes.
        data: &'a [u8],
    },
    /// The response is complete.
    End {
        /// The request.
        id: RequestId,
        /// Its trailer fields (RFC 9110 §6.5), when it had some.
        trailers: Option<HeaderMap>,
    },
    /// This request failed; the connection goes on (an HTTP/2 stream reset, a body over the
    /// limit). [`Error::is_reset`] and the like say why.
    Failed {
        /// The request.
        id: RequestId,
        /// Why.
        error: Error,
    },
    /// An HTTP/2 request whose body [`Connection::send_data`](super::Connection::send_data)
    /// could not take in full can take more now.
    Writable {
        /// The request.
        id: RequestId,
    },
}

/// A response head: a view over the connection's buffers (no copy, no allocation), valid until
/// the next call into the connection.
///
/// # Examples
/// ```no_run
/// use peregrine::client::conn::{Connection, Event};
/// use peregrine::Method;
/// # async fn run(conn: &mut Connection) -> Result<(), peregrine::client::Error> {
/// let id = conn.send_request(Method::Get, "/", &[], &[])?;
/// if let Event::Head { head, .. } = conn.next_event().await? {
///     println!("{} {:?}", head.status(), head.header("content-type"));
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct ResponseHead<'a> {
    pub(crate) status: u16,
    pub(crate) version: Version,
    pub(crate) fields: Source<'a>,
}

impl std::fmt::Debug for ResponseHead<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseHead")
            .field("status", &self.status)
            .field("version", &self.version)
            .field("fields", &self.headers().len())
            .finish()
    }
}

impl<'a> ResponseHead<'a> {
    /// The status code (200..=599, or 101 for an upgrade).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The protocol version of the response.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The header fields in order: names as sent (HTTP/2's are lowercase), values without
    /// surrounding whitespace; the same view as a server's [`Request::headers`](crate::Request::headers).
    pub fn headers(&self) -> Headers<'a> {
        Headers::new(self.fields)
    }

    /// The first value of the field `name` (case-insensitive), a `&str` or an
    /// [`http::HeaderName`].
    pub fn header(&self, name: impl AsRef<str>) -> Option<&'a [u8]> {
        self.headers().get(name)
    }
}
