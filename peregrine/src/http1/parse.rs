//! Request head parser (RFC 9112 §2–§5). PLACEHOLDER: the interface is fixed, the body is being written.

use super::{Header, Limits, ParseError, RequestHead, Status};

/// Parses a request head from the start of `buf`.
///
/// Returns `Complete(head)` with `head.len` bytes consumed, `Partial` when `buf` holds no whole
/// head yet (and is within the limits), or the precise error. Header fields are written into
/// `headers`; at most `min(headers.len(), limits.max_headers)` are accepted.
///
/// # Errors
/// Every [`ParseError`] the head rules can produce; see `docs/STRICTNESS.md`.
pub fn parse_request<'b, 'h>(
    buf: &'b [u8],
    headers: &'h mut [Header<'b>],
    limits: &Limits,
) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
    let _ = (buf, headers, limits);
    todo!("parse_request")
}
