//! HTTP/1.1 wire format, sans-I/O: bytes in, values and bytes out (RFC 9112).
//!
//! - [`parse_request`] reads a request head from a byte slice without copying or allocating;
//!   [`HeadScanner`] keeps repeated attempts on a trickled head linear; [`LastHead`] answers a
//!   head that repeats the last one byte for byte without parsing it again.
//! - [`parse_response`] reads a response head the same way, with the same header rules.
//! - [`framing`] decides how a message body is delimited (Content-Length, chunked, none), in one
//!   place shared by the server and the client.
//! - [`body_decoder`] reads a message body (Content-Length, chunked or close-delimited) with a
//!   size limit and trailers; [`chunked`] decodes and encodes the chunked coding incrementally.
//! - [`encode`] writes response heads into a reusable buffer.

pub mod body_decoder;
pub mod chunked;
pub mod conn;
mod content_length;
pub mod encode;
mod error;
pub(crate) mod field_syntax;
pub mod framing;
mod head;
mod head_scan;
mod host;
mod last_head;
mod limits;
mod line_start;
mod parse;
mod simd;
pub(crate) mod uri_syntax;

pub use error::ParseError;
pub use head::{
    EMPTY_HEADER, Header, HeaderId, KNOWN_HEADERS, KnownHeaders, RequestHead, ResponseHead, Status,
    TargetForm, Version,
};
pub use head_scan::HeadScanner;
pub use last_head::{LAST_HEAD_BYTES, LAST_HEAD_FIELDS, LastHead, LastResponseHead};
pub use limits::Limits;
pub(crate) use line_start::may_start_request_line;
pub use parse::{parse_request, parse_request_uninit, parse_response, parse_response_uninit};
#[cfg(any(fuzzing, feature = "unstable"))]
pub use simd::kernel_name;
