//! Message framing (RFC 9112 §6, RFC 9110 §8.6). PLACEHOLDER: interface fixed, body being written.

use super::{ParseError, RequestHead};

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
    /// How the body is delimited.
    pub body: BodyLength,
    /// Whether the connection may carry another request after this one (RFC 9112 §9.3).
    pub keep_alive: bool,
    /// `Expect: 100-continue` was sent (RFC 9110 §10.1.1).
    pub expect_continue: bool,
    /// The request asks for a protocol upgrade (RFC 9110 §7.8).
    pub upgrade: bool,
}

/// Applies the framing rules to a parsed request head.
///
/// # Errors
/// Content-Length / Transfer-Encoding / Host violations, each with its own [`ParseError`].
pub fn request_framing(head: &RequestHead<'_, '_>) -> Result<RequestFraming, ParseError> {
    let _ = head;
    todo!("request_framing")
}

/// Parses a Content-Length value by hand: `1*DIGIT`, overflow checked (RFC 9110 §8.6).
pub fn parse_content_length(value: &[u8]) -> Option<u64> {
    // PLACEHOLDER: simple loop; the fast hand parser replaces it.
    if value.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &b in value {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}
