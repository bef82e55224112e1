//! Linear-time completeness check for a request head that arrives in pieces.
//!
//! [`parse_request`] is stateless: called again after every read of a head trickled one byte
//! at a time it would re-validate the whole prefix each time, quadratic work an attacker can
//! ask for. [`HeadScanner`] is the small per-connection state that prevents it: after a first
//! `Partial`, it only looks for the end of the head in the bytes it has not seen yet, and calls
//! the validating parser again once the head is complete (or the size limit is reached).

use super::parse::parse_request_uninit;
use super::{Header, Limits, ParseError, RequestHead, Status, parse_request};
use std::mem::MaybeUninit;

/// Per-connection state that makes repeated parse attempts over a growing buffer linear.
///
/// The buffer passed to successive calls must be the same byte sequence, only longer (the
/// connection's read buffer with new bytes appended). Call [`HeadScanner::reset`] when a new
/// head starts (this happens on its own after `Complete` or an error).
///
/// # Examples
/// ```
/// use peregrine::http1::{HeadScanner, Limits, Status, EMPTY_HEADER};
///
/// let req = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
/// let mut scanner = HeadScanner::new();
/// let mut headers = [EMPTY_HEADER; 8];
/// for n in 1..req.len() {
///     assert!(scanner.parse(&req[..n], &mut headers, &Limits::default())?.is_partial());
/// }
/// let head = scanner.parse(req, &mut headers, &Limits::default())?.complete().unwrap();
/// assert_eq!(head.len, req.len());
/// # Ok::<(), peregrine::http1::ParseError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct HeadScanner {
    /// A parse attempt returned `Partial`; later calls scan before parsing.
    pending: bool,
    /// Bytes already searched for the end of the head.
    scanned: usize,
    /// Start of the line the scan is in.
    line_start: usize,
    /// A non-empty line (the request line) has been seen; empty lines before it are ignored
    /// (RFC 9112 §2.2).
    started: bool,
    /// Bytes examined by scans and parses since [`HeadScanner::new`] (work accounting).
    work: u64,
}

impl HeadScanner {
    /// A scanner for a fresh connection.
    pub fn new() -> Self {
        HeadScanner::default()
    }

    /// Forgets the head in progress (call when the next head starts at a new buffer offset).
    pub fn reset(&mut self) {
        let work = self.work;
        *self = HeadScanner { work, ..HeadScanner::default() };
    }

    /// Total bytes examined by this scanner's scans and parse attempts: the quantity that
    /// stays linear in the head's size however the head is split.
    pub fn work(&self) -> u64 {
        self.work
    }

    /// Parses the head at the start of `buf` if it may be complete.
    ///
    /// The first call parses directly (most heads arrive in one read). After a `Partial`, each
    /// call only scans the new bytes for the empty line ending the head, and parses again once
    /// it is there or `limits.max_head_bytes` is reached. Errors in an incomplete head are
    /// therefore reported by the first call, or once the head completes.
    ///
    /// # Errors
    /// As [`parse_request`].
    pub fn parse<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        headers: &'h mut [Header<'b>],
        limits: &Limits,
    ) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
        self.attempt(buf, limits, |buf| parse_request(buf, headers, limits))
    }

    /// [`HeadScanner::parse`] into uninitialised header storage (see
    /// [`parse_request_uninit`]).
    ///
    /// # Errors
    /// As [`parse_request`].
    pub fn parse_uninit<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        headers: &'h mut [MaybeUninit<Header<'b>>],
        limits: &Limits,
    ) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
        self.attempt(buf, limits, |buf| parse_request_uninit(buf, headers, limits))
    }

    /// One attempt: scan the new bytes if a head is pending, then `parse` if it may be
    /// complete.
    #[inline(always)]
    fn attempt<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        limits: &Limits,
        parse: impl FnOnce(&'b [u8]) -> Result<Status<RequestHead<'b, 'h>>, ParseError>,
    ) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
        if self.pending && !self.may_be_complete(buf, limits) {
            return Ok(Status::Partial);
        }
        self.work += buf.len().min(limits.max_head_bytes.saturating_add(1)) as u64;
        let result = parse(buf);
        match result {
            Ok(Status::Partial) if !self.pending => {
                self.pending = true;
                self.scanned = 0;
                self.line_start = 0;
                self.started = false;
            }
            // A `Partial` after the scan said complete cannot happen (the scan and the parse
            // agree on line ends); stay pending to be safe.
            Ok(Status::Partial) => {}
            _ => self.reset(),
        }
        result
    }

    /// Scans the bytes not seen yet for an empty line after the request line. Counts bare LF
    /// as a line end too, so a head using them completes and the parser reports `BareLf`.
    fn may_be_complete(&mut self, buf: &[u8], limits: &Limits) -> bool {
        let limit = buf.len().min(limits.max_head_bytes);
        while self.scanned < limit {
            let from = self.scanned;
            let Some(at) = memchr::memchr(b'\n', &buf[from..limit]) else {
                self.work += (limit - from) as u64;
                self.scanned = limit;
                break;
            };
            let lf = from + at;
            self.work += (at + 1) as u64;
            self.scanned = lf + 1;
            let line = &buf[self.line_start..lf];
            self.line_start = lf + 1;
            if line.is_empty() || line == b"\r" {
                if self.started {
                    return true;
                }
            } else {
                self.started = true;
            }
        }
        // At the limit without the end: the parser reports the precise error or 431.
        buf.len() > limits.max_head_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::EMPTY_HEADER;

    fn trickle(req: &[u8], step: usize, limits: &Limits) -> (Result<usize, ParseError>, u64) {
        let mut scanner = HeadScanner::new();
        let mut headers = [EMPTY_HEADER; 128];
        let mut n = 0;
        loop {
            n = (n + step).min(req.len());
            match scanner.parse(&req[..n], &mut headers, limits) {
                Ok(Status::Complete(h)) => return (Ok(h.len), scanner.work()),
                Ok(Status::Partial) if n < req.len() => {}
                Ok(Status::Partial) => panic!("partial at the end"),
                Err(e) => return (Err(e), scanner.work()),
            }
        }
    }

    fn big_head(fields: usize) -> Vec<u8> {
        let mut req = b"GET /trickle HTTP/1.1\r\nHost: example.com\r\n".to_vec();
        for i in 0..fields {
            req.extend_from_slice(format!("X-Field-{i}: some value {i}\r\n").as_bytes());
        }
        req.extend_from_slice(b"\r\n");
        req
    }

    /// Trickling one byte at a time costs linear work (RFC-independent DoS defence): the
    /// scanner examines each byte a bounded number of times, where re-parsing every prefix
    /// would examine about n²/2 bytes.
    #[test]
    fn one_byte_at_a_time_is_linear() {
        let limits = Limits { max_head_bytes: 64 * 1024, max_headers: 200, ..Limits::default() };
        for fields in [10, 50, 100] {
            let req = big_head(fields);
            let n = req.len() as u64;
            let (len, work) = trickle(&req, 1, &limits);
            assert_eq!(len, Ok(req.len()));
            // First parse (1 byte) + one scan over every byte + the final parse.
            assert!(work <= 2 * n + 1, "{fields} fields: {work} bytes examined for {n}");
            assert!(work < n * n / 8, "quadratic: {work} for {n}");
        }
    }

    #[test]
    fn any_split_gives_the_same_head() {
        let req = big_head(5);
        let limits = Limits::default();
        for step in [1, 2, 3, 7, 16, 64, req.len()] {
            assert_eq!(trickle(&req, step, &limits).0, Ok(req.len()), "step {step}");
        }
    }

    #[test]
    fn uninit_storage_trickles_to_the_same_head() {
        let req = big_head(5);
        let limits = Limits::default();
        let mut init = [EMPTY_HEADER; 16];
        let want = parse_request(&req, &mut init, &limits).unwrap().complete().unwrap();
        let mut scanner = HeadScanner::new();
        for n in 1..req.len() {
            let mut slots = [const { MaybeUninit::uninit() }; 16];
            assert!(scanner.parse_uninit(&req[..n], &mut slots, &limits).unwrap().is_partial());
        }
        let mut slots = [const { MaybeUninit::uninit() }; 16];
        let got = scanner.parse_uninit(&req, &mut slots, &limits).unwrap().complete().unwrap();
        assert_eq!(got, want);
        assert!(scanner.work() <= 2 * req.len() as u64 + 1, "{}", scanner.work());
    }

    #[test]
    fn trickled_errors_still_surface() {
        struct Case {
            input: &'static [u8],
            expect: ParseError,
            rfc: &'static str,
        }
        let cases = [
            Case {
                input: b"GET / HTTP/1.1\nHost: a\n\n",
                expect: ParseError::BareLf,
                rfc: "9112 2.2",
            },
            Case {
                input: b"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
                expect: ParseError::WhitespaceBeforeColon,
                rfc: "9112 5.1",
            },
            Case {
                input: b"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n",
                expect: ParseError::ObsFold,
                rfc: "9112 5.2",
            },
            Case {
                input: b"\r\n\r\nGET / HTTP/1.1\r\nA: \x00\r\n\r\n",
                expect: ParseError::InvalidHeaderValue,
                rfc: "9110 5.5",
            },
        ];
        for c in cases {
            assert_eq!(trickle(c.input, 1, &Limits::default()).0, Err(c.expect), "RFC {}", c.rfc);
        }
    }

    #[test]
    fn trickled_head_beyond_the_limit_is_431() {
        // RFC 6585 §5
        let limits = Limits { max_head_bytes: 256, ..Limits::default() };
        let req = big_head(20);
        assert!(req.len() > 256);
        assert_eq!(trickle(&req, 1, &limits).0, Err(ParseError::HeadTooLarge));
        let (_, work) = trickle(&req, 1, &limits);
        assert!(work < 4 * 256, "{work}");
    }
}
