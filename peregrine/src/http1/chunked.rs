//! Chunked transfer coding (RFC 9112 §7.1). PLACEHOLDER.
