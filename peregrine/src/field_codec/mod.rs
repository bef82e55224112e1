//! What HPACK (`http2::hpack`, RFC 7541) and QPACK (`http3::qpack`, RFC 9204) share: the
//! Huffman code (QPACK reuses HPACK's, RFC 9204 §4.1.2), the prefixed integers' encoding (RFC 9204 §4.1.1), the byte classes of valid field names
//! and values (RFC 9113 §8.2.1 and RFC 9114 §4.2 state the same rules), and the dynamic table's
//! storage (a FIFO of entries evicted from the oldest end, RFC 7541 §2.3.2 and RFC 9204 §3.2)
//! with the hash its encoders index it by.

pub(crate) mod field_bytes;
pub(crate) mod field_hash;
pub(crate) mod huffman;
pub(crate) mod prefixed_int;
pub(crate) mod table;

pub use field_bytes::FieldError;
