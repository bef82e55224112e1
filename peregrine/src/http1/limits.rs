//! Size limits for request heads, with the defaults a public server can live with.

/// Limits the HTTP/1 parser enforces; each has its own error and status.
///
/// # Examples
/// ```
/// let limits = peregrine::http1::Limits { max_headers: 50, ..Default::default() };
/// assert_eq!(limits.max_head_bytes, 16 * 1024);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest request head (request line, headers, final CRLF) in bytes → 431 when exceeded.
    /// Default 16 KiB (nginx accepts 1 KiB + 4 × 8 KiB; hyper ~400 KiB).
    pub max_head_bytes: usize,
    /// Largest number of header fields → 431 when exceeded. Default 100.
    pub max_headers: usize,
    /// Longest request-target in bytes → 414 when exceeded. Default 8 KiB.
    pub max_target_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_head_bytes: 16 * 1024, max_headers: 100, max_target_bytes: 8 * 1024 }
    }
}
