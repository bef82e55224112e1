//! Per-thread cached IMF-fixdate for the Date header (RFC 9110 §5.6.7). PLACEHOLDER.
