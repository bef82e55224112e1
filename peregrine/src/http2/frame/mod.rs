//! HTTP/2 frames (RFC 9113 §4, §6): one file per frame type.
