//! The opening handshake, both ends, over HTTP/1.1 (RFC 6455 §4.1, §4.2) and HTTP/2's
//! extended CONNECT (RFC 8441 §4, §5).
//!
//! Plain functions over field values: the caller has parsed the head (a server its request's
//! `(name, value)` pairs, a client its response's) and writes the fields returned here into
//! its own head. Nothing allocates on the server's path.
//!
//! # Examples
//!
//! A client's request checked by a server, and the server's response by the client:
//! ```
//! use peregrine::Version;
//! use peregrine::ws::DeflateConfig;
//! use peregrine::ws::handshake::{ClientHandshake, check_request};
//!
//! let client = ClientHandshake::new([7; 16]).protocols(&["chat"]).deflate(DeflateConfig::default());
//! let mut request: Vec<(&[u8], &[u8])> = vec![(b"host", b"example.com")];
//! request.extend(client.fields(Version::Http11).map(|(n, v)| (n.as_bytes(), v)));
//!
//! let upgrade = check_request(b"GET", Version::Http11, request.iter().copied()).unwrap();
//! let accept = upgrade.accept(&["superchat", "chat"], Some(&DeflateConfig::default()));
//! assert_eq!(accept.status(), 101);
//! assert_eq!(accept.protocol(), Some("chat"));
//!
//! let response: Vec<(&[u8], &[u8])> = accept.fields().map(|(n, v)| (n.as_bytes(), v)).collect();
//! let accepted = client.check_response(101, response.iter().copied()).unwrap();
//! assert_eq!(accepted.protocol, Some("chat"));
//! assert_eq!(accepted.deflate, accept.deflate());
//! ```

mod client;
mod server;

pub use client::{Accepted, ClientHandshake, ResponseError};
pub use server::{Accept, Request, RequestError, check_connect, check_request};

use sha1::{Digest, Sha1};

use crate::base64;
use crate::http1::field_syntax::list_elements;

/// The GUID appended to the key (RFC 6455 §1.3, §4.2.2).
pub const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The protocol version this crate speaks, `Sec-WebSocket-Version: 13` (RFC 6455 §4.1).
pub const VERSION: &str = "13";

/// The `Sec-WebSocket-Accept` value for a `Sec-WebSocket-Key` (RFC 6455 §4.2.2): the base64 of
/// the SHA-1 of the key (as sent, trimmed) followed by the GUID.
///
/// # Examples
/// ```
/// use peregrine::ws::handshake::accept_key;
/// // RFC 6455 §1.3's example.
/// assert_eq!(&accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="), b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
/// ```
pub fn accept_key(key: &[u8]) -> [u8; 28] {
    let mut h = Sha1::new();
    h.update(key);
    h.update(GUID.as_bytes());
    let digest: [u8; 20] = h.finalize().into();
    base64::encode_padded(&digest)
}

/// Whether `key` is a valid `Sec-WebSocket-Key` (RFC 6455 §4.1: "a randomly selected 16-byte
/// value that has been base64-encoded"): 24 characters of the standard alphabet, the last
/// two `=`, the unused bits of the 22nd zero (the canonical encoding).
pub(crate) fn is_valid_key(key: &[u8]) -> bool {
    let Some((body, pad)) = key.split_at_checked(22) else { return false };
    let alphabet = |b: &u8| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/';
    // The 22nd character carries 2 bits of the 16th octet and 4 zero bits: A, Q, g or w.
    pad == b"==" && body.iter().all(alphabet) && matches!(body[21], b'A' | b'Q' | b'g' | b'w')
}

/// Whether a comma-separated field's lines hold `token`, case-insensitively.
fn has_token<'a, I>(lines: I, token: &str) -> bool
where
    I: Iterator<Item = &'a [u8]>,
{
    list_elements(lines).any(|e| e.eq_ignore_ascii_case(token.as_bytes()))
}

/// The values of the fields named `name` (case-insensitively).
fn lines<'a, I>(fields: I, name: &'static str) -> impl Iterator<Item = &'a [u8]> + Clone
where
    I: Iterator<Item = (&'a [u8], &'a [u8])> + Clone,
{
    fields.filter(move |(n, _)| n.eq_ignore_ascii_case(name.as_bytes())).map(|(_, v)| v)
}

#[cfg(test)]
mod tests;
