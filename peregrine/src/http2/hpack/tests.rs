//! Decoder and encoder tests: RFC 7541 Appendix C, size updates, errors, field checks.

mod appendix_c;
mod decoding;
mod encoding;
