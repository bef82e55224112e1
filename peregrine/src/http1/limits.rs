//! Size limits for request heads, with the defaults a public server can live with.

/// Limits the HTTP/1 parser enforces; each has its own error and status.
///
/// # Examples
/// ```
/// let limits = peregrine::http1::Limits { max_headers: 50, ..Default::default() };
/// assert_eq!(limits.max_head_bytes, 32 * 1024);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest request head (request line, headers, final CRLF) in bytes → 431 when exceeded.
    /// Default 32 KiB: Kestrel's `MaxRequestHeadersTotalSize` (32 KB), and about what nginx
    /// accepts (`client_header_buffer_size 1k` plus `large_client_header_buffers 4 8k`: a
    /// request line and each field line up to 8 KiB, 33 KiB in all). Browsers send up to ~8 KB
    /// of cookies in one `Cookie` field; with a long target or Referer beside it a head passes
    /// 16 KiB. The read buffer only grows to this size for a head that needs it (4 KiB
    /// otherwise), so the default costs nothing per connection.
    pub max_head_bytes: usize,
    /// Largest number of header fields → 431 when exceeded. Default 100.
    pub max_headers: usize,
    /// Longest request-target in bytes → 414 when exceeded. Default 8 KiB.
    pub max_target_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_head_bytes: 32 * 1024, max_headers: 100, max_target_bytes: 8 * 1024 }
    }
}
