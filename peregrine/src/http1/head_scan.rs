//! Linear-time completeness check for a head that arrives in pieces, for both roles.
//!
//! [`parse_request`] and [`parse_response`] are stateless: called again after every read of a
//! head trickled one byte at a time they would re-validate the whole prefix each time,
//! quadratic work a peer can ask for. [`HeadScanner`] is the small per-connection state that
//! prevents it: after a first `Partial`, it only looks for the end of the head in the bytes it
//! has not seen yet, and calls the validating parser again once the head is complete (or the
//! size limit is reached). Lines completed meanwhile are checked as they arrive (each once), so
//! a client that sends a bad line and then stalls gets its 400 at once, not a 408 when the
//! header timeout fires. The scan is the same for requests and responses (a start-line after
//! optional empty lines, then field lines); only the parser that judges a line differs.

use super::field_syntax::{is_tchar, is_value_ctl};
use super::parse::{parse_request_uninit, parse_response_uninit};
use super::{
    Header, Limits, ParseError, RequestHead, ResponseHead, Status, parse_request, parse_response,
};
use std::mem::MaybeUninit;

/// Room for the method, the two SPs and the version beside a request-target of
/// `Limits::max_target_bytes`: a request line not ended past that size may already have a target
/// over the limit, and is judged once (414 then, not 431 when the head limit is reached: nginx
/// answers such a line 414 too).
const LONG_LINE_SLACK: usize = 64;

/// An unended status line is judged while it holds at most this many bytes: `HTTP/1.1 200 `.
const EARLY_BYTES: usize = 13;

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
    /// A non-empty line (the start-line) has been seen; empty lines before it are ignored
    /// (RFC 9112 §2.2).
    started: bool,
    /// The request line, still unended, was judged once for its length (see
    /// [`LONG_LINE_SLACK`]).
    line_judged: bool,
    /// The line not ended yet was judged once for a control byte in it.
    tail_judged: bool,
    /// The field line not ended yet has its colon, or a byte that cannot be in its name was
    /// judged once.
    name_judged: bool,
    /// The unended status line's first [`EARLY_BYTES`] were judged.
    early_judged: bool,
    /// Field lines ended so far.
    fields: usize,
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

    /// A head of `len` bytes was answered without a parse (a byte-identical repeat, see
    /// [`LastHead`](super::LastHead)): its comparison counts as work, and the next head starts
    /// fresh.
    #[inline(always)]
    pub(crate) fn repeated(&mut self, len: usize) {
        if self.pending {
            self.reset();
        }
        self.work += len as u64;
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
    /// reported by the first call, or by the call that receives the end of the bad line.
    ///
    /// # Errors
    /// As [`parse_request`].
    pub fn parse<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        headers: &'h mut [Header<'b>],
        limits: &Limits,
    ) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
        let fields = headers.len();
        self.attempt(buf, limits, fields, Role::Request, |buf| parse_request(buf, headers, limits))
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
        let fields = headers.len();
        self.attempt(buf, limits, fields, Role::Request, |buf| {
            parse_request_uninit(buf, headers, limits)
        })
    }

    /// [`HeadScanner::parse`] for a response head (the client's side), through
    /// [`parse_response`].
    ///
    /// # Examples
    /// ```
    /// use peregrine::http1::{HeadScanner, Limits, EMPTY_HEADER};
    ///
    /// let resp = b"HTTP/1.1 204 No Content\r\nServer: a\r\n\r\n";
    /// let mut scanner = HeadScanner::new();
    /// let mut headers = [EMPTY_HEADER; 8];
    /// for n in 1..resp.len() {
    ///     let partial = scanner.parse_response(&resp[..n], &mut headers, &Limits::default())?;
    ///     assert!(partial.is_partial());
    /// }
    /// let head = scanner.parse_response(resp, &mut headers, &Limits::default())?;
    /// assert_eq!(head.complete().map(|h| h.status), Some(204));
    /// # Ok::<(), peregrine::http1::ParseError>(())
    /// ```
    ///
    /// # Errors
    /// As [`parse_response`].
    pub fn parse_response<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        headers: &'h mut [Header<'b>],
        limits: &Limits,
    ) -> Result<Status<ResponseHead<'b, 'h>>, ParseError> {
        let fields = headers.len();
        self.attempt(buf, limits, fields, Role::Response, |buf| {
            parse_response(buf, headers, limits)
        })
    }

    /// [`HeadScanner::parse_response`] into uninitialised header storage (see
    /// [`parse_response_uninit`]).
    ///
    /// # Errors
    /// As [`parse_response`].
    pub fn parse_response_uninit<'b, 'h>(
        &mut self,
        buf: &'b [u8],
        headers: &'h mut [MaybeUninit<Header<'b>>],
        limits: &Limits,
    ) -> Result<Status<ResponseHead<'b, 'h>>, ParseError> {
        let fields = headers.len();
        self.attempt(buf, limits, fields, Role::Response, |buf| {
            parse_response_uninit(buf, headers, limits)
        })
    }

    /// One attempt: scan the new bytes if a head is pending, then `parse` if it may be
    /// complete. `storage` is the number of headers `parse` has room for.
    #[inline(always)]
    fn attempt<'b, T>(
        &mut self,
        buf: &'b [u8],
        limits: &Limits,
        storage: usize,
        role: Role,
        parse: impl FnOnce(&'b [u8]) -> Result<Status<T>, ParseError>,
    ) -> Result<Status<T>, ParseError> {
        if self.pending {
            let max_fields = storage.min(limits.max_headers);
            match self.may_be_complete(buf, limits, max_fields, role) {
                Ok(true) => {}
                Ok(false) => return Ok(Status::Partial),
                Err(e) => {
                    self.reset();
                    return Err(e);
                }
            }
        }
        self.work += buf.len().min(limits.max_head_bytes.saturating_add(1)) as u64;
        let result = parse(buf);
        match result {
            Ok(Status::Partial) if !self.pending => {
                // Scans start afresh from the buffer's start, every line unjudged.
                self.reset();
                self.pending = true;
            }
            // A `Partial` after the scan said complete cannot happen (the scan and the parse
            // agree on line ends); stay pending to be safe.
            Ok(Status::Partial) => {}
            _ => self.reset(),
        }
        result
    }

    /// Scans the bytes not seen yet for an empty line after the start-line. Counts bare LF
    /// as a line end too, so a head using them completes and the parser reports `BareLf`.
    ///
    /// Each line that ends here is checked once: the start-line by the parser itself (its
    /// bytes only), a field line by a plain byte-class test. A line that fails is handed to
    /// the parser with everything before it, and the parser's verdict is returned: the same
    /// error the complete head would get, as the parser stops at the first bad line.
    ///
    /// `max_fields` is how many field lines the parser takes (its storage, at most
    /// `limits.max_headers`): the line past them is judged when it ends.
    fn may_be_complete(
        &mut self,
        buf: &[u8],
        limits: &Limits,
        max_fields: usize,
        role: Role,
    ) -> Result<bool, ParseError> {
        let limit = buf.len().min(limits.max_head_bytes);
        let round = self.scanned;
        while self.scanned < limit {
            let from = self.scanned;
            let Some(at) = memchr::memchr(b'\n', &buf[from..limit]) else {
                self.work += (limit - from) as u64;
                self.scanned = limit;
                self.refuse_bare_cr(buf, from, limit, role, limits)?;
                break;
            };
            let lf = from + at;
            self.work += (at + 1) as u64;
            self.scanned = lf + 1;
            self.refuse_bare_cr(buf, from, lf + 1, role, limits)?;
            let line = &buf[self.line_start..lf];
            let line_start = std::mem::replace(&mut self.line_start, lf + 1);
            self.tail_judged = false;
            self.name_judged = false;
            if line.is_empty() || line == b"\r" {
                if self.started {
                    return Ok(true);
                }
                // RFC 9112 §2.2: empty lines before the start-line are ignored when they are
                // CRLF; a bare LF there is refused as everywhere (the parser says so at once).
                if line.is_empty() {
                    prefix_verdict(role, &buf[..=lf], 0, limits)?;
                }
            } else if !self.started {
                self.started = true;
                // The start-line: leading empty lines and the line itself, no fields yet.
                self.work += (lf + 1 - line_start) as u64;
                prefix_verdict(role, &buf[..=lf], 0, limits)?;
            } else {
                self.work += line.len() as u64;
                self.fields += 1;
                // A field line past the parser's room fails the head (431 for a request) when
                // it ends, as the same bytes given whole do, rather than when the head's end
                // comes (found by the client_response fuzz target: 21 field lines against a
                // limit of 16, unended, fed two bytes at a time, then the end of input read as
                // a head cut short; whole: too many header fields). Asked once per head.
                if !plausible_field_line(line) || self.fields == max_fields + 1 {
                    self.work += (lf + 1) as u64;
                    prefix_verdict(role, &buf[..=lf], max_fields, limits)?;
                }
            }
        }
        // RFC 9112 §3, §4, §5.1, RFC 9110 §5.5: no line of a head holds a control byte other
        // than HTAB (and the CR before its LF). One in a line that has not ended is judged as
        // it arrives, as the same bytes given whole are, rather than when a line end that may
        // never come arrives (found by the client_response fuzz target: `HTTP/1.1 200 \0` fed
        // one byte at a time waited for the end of the status line, and the end of input then
        // read as a head cut short). The class test looks at the new bytes the LF search just
        // passed; the parser is asked once per line (it stops at the byte).
        let tail = round.max(self.line_start);
        if !self.tail_judged
            && tail < limit
            && buf[tail..limit].iter().any(|&b| b != b'\r' && is_value_ctl(b))
        {
            self.tail_judged = true;
            self.work += limit as u64;
            let fields = if self.started { limits.max_headers } else { 0 };
            prefix_verdict(role, &buf[..limit], fields, limits)?;
        }
        // RFC 9112 §5.1, RFC 9110 §5.1: a field line's name is a token ended by its colon. A
        // byte that cannot be in a name (or a colon starting the line), in a field line that has
        // not ended, is judged as it arrives, as the same bytes given whole are, rather than when
        // a line end that may never come arrives (found by the client_response fuzz target:
        // `Connect\xfbion: N…` unended, fed two bytes at a time, then the end of input read as a
        // head cut short). Only the new bytes are looked at, and the parser is asked once per
        // line. A CR starting the line is left to the line-end and bare-CR checks; leading
        // whitespace to the check below.
        if self.started && !self.name_judged && tail < limit {
            if let Some(i) = buf[tail..limit].iter().position(|&b| !is_tchar(b)) {
                let at = tail + i;
                match buf[at] {
                    b':' if at > self.line_start => self.name_judged = true,
                    b' ' | b'\t' if at == self.line_start => {}
                    // At the line's start, the empty line ending the head (or a bare CR, judged
                    // when its next byte comes); after name octets, a line with no colon (found
                    // by the client_response fuzz target: `Transfer-EncodinJ0u\r` unended).
                    b'\r' if at == self.line_start => {}
                    _ => {
                        self.name_judged = true;
                        self.work += (at + 1) as u64;
                        prefix_verdict(role, &buf[..=at], limits.max_headers, limits)?;
                    }
                }
            }
        }
        // RFC 9112 §3, RFC 9110 §15.5.15: a request line still unended past the longest a
        // line with an acceptable target can be: the parser is asked once whether the target is
        // already over the limit (it stops there, so this costs the line's length once).
        let long_line = limits.max_target_bytes.saturating_add(LONG_LINE_SLACK);
        if matches!(role, Role::Request) && !self.started && !self.line_judged && limit > long_line
        {
            self.line_judged = true;
            self.work += limit as u64;
            prefix_verdict(role, &buf[..limit], 0, limits)?;
        }
        // A status line's first bytes, before its end: judged as they come until
        // `EARLY_BYTES` of them (the version and status code) have been, so bytes that can
        // never begin a response fail now, as the same bytes given whole do, rather than wait
        // for a line end that may never come (RFC 9112 §4: a status line begins with `HTTP/`,
        // its code is three digits and a SP). A piece that carries the line past
        // `EARLY_BYTES` still has them judged (found by the client_response fuzz target:
        // `HTTP/1.1 404rrr…` fed two bytes at a time went from 12 bytes to 14 unjudged, and
        // the end of input read as a head cut short; whole: invalid status line).
        if matches!(role, Role::Response)
            && !self.started
            && !self.early_judged
            && self.line_start < limit
        {
            let line = &buf[self.line_start..limit];
            let early = &line[..line.len().min(EARLY_BYTES)];
            self.early_judged = early.len() == EARLY_BYTES;
            self.work += early.len() as u64;
            prefix_verdict(role, early, 0, limits)?;
        }
        // RFC 9112 §2.2, §5.2: a line after the start-line that begins with whitespace (before
        // the first field, or obs-fold) is refused by that first byte, as the same bytes given
        // whole are, rather than when its end comes (found by the client_response fuzz target:
        // `HTTP/1.1 200 OK\r\n Host: foo` then the end of input read as a head cut short).
        if self.started && self.line_start < limit && matches!(buf[self.line_start], b' ' | b'\t') {
            self.work += (self.line_start + 1) as u64;
            prefix_verdict(role, &buf[..=self.line_start], limits.max_headers, limits)?;
        }
        // At the limit without the end: the parser reports the precise error or 431.
        Ok(buf.len() > limits.max_head_bytes)
    }

    /// RFC 9112 §2.2: a CR not followed by LF is refused. A line end is searched by its LF
    /// alone, so a bare CR is judged here, once the byte after it has arrived: the parser gets
    /// the head up to that byte and returns the error the same bytes get whole, rather than
    /// the scan waiting for a LF that may never come (found by the client_response fuzz target:
    /// `HTTP/1.1 404\r.` fed two bytes at a time, then the end of input read as a head cut
    /// short). Looks at the CRs among `buf[from - 1..to]` (the byte before `from` is a CR
    /// whose follower had not arrived at the last scan) whose next byte is before `to`.
    fn refuse_bare_cr(
        &mut self,
        buf: &[u8],
        from: usize,
        to: usize,
        role: Role,
        limits: &Limits,
    ) -> Result<(), ParseError> {
        let mut at = from.saturating_sub(1);
        while let Some(i) = memchr::memchr(b'\r', &buf[at..to]) {
            let cr = at + i;
            if cr + 1 >= to {
                break;
            }
            if buf[cr + 1] != b'\n' {
                self.work += (cr + 2) as u64;
                let fields = if self.started { limits.max_headers } else { 0 };
                return prefix_verdict(role, &buf[..cr + 2], fields, limits);
            }
            at = cr + 1;
        }
        Ok(())
    }
}

/// Whether `line` (without its LF) has the shape of a valid field line: a token, a colon,
/// value bytes, CR (RFC 9112 §5, RFC 9110 §5.1, §5.5). A line that fails may still be judged
/// by the parser; one that passes has nothing the parser would refuse.
fn plausible_field_line(line: &[u8]) -> bool {
    let Some(line) = line.strip_suffix(b"\r") else {
        return false;
    };
    let name = line.iter().position(|&b| !is_tchar(b)).unwrap_or(line.len());
    name > 0 && line.get(name) == Some(&b':') && !line[name + 1..].iter().any(|&b| is_value_ctl(b))
}

/// Which parser judges the head.
#[derive(Clone, Copy)]
enum Role {
    /// [`parse_request`]: the server reads requests.
    Request,
    /// [`parse_response`]: the client reads responses.
    Response,
}

/// The parser's verdict on `prefix`, a head cut after a complete line: its error, if any.
/// `fields` is how many headers the parse may need room for (storage is only allocated for a
/// line already found suspicious, never on the way of a valid head).
fn prefix_verdict(
    role: Role,
    prefix: &[u8],
    fields: usize,
    limits: &Limits,
) -> Result<(), ParseError> {
    let mut storage = Vec::new();
    storage.resize_with(fields, MaybeUninit::uninit);
    match role {
        Role::Request => parse_request_uninit(prefix, &mut storage, limits).map(drop),
        Role::Response => parse_response_uninit(prefix, &mut storage, limits).map(drop),
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
            // First parse (1 byte) + one scan over every byte + one check of every line as it
            // ends + the final parse.
            assert!(work <= 3 * n + 1, "{fields} fields: {work} bytes examined for {n}");
            assert!(work < n * n / 8, "quadratic: {work} for {n}");
        }
    }

    /// A request line that has not ended is judged once it is longer than any line with an
    /// acceptable target: a target over the limit gets 414 there, not 431 (or nothing) at the
    /// head limit, and trickling it stays linear.
    #[test]
    fn an_unended_long_target_is_refused_early() {
        let limits = Limits::default();
        let mut req = b"GET /".to_vec();
        req.extend(std::iter::repeat_n(b'a', 70_000));
        let mut scanner = HeadScanner::new();
        let mut headers = [EMPTY_HEADER; 8];
        let mut refused = None;
        for n in (1024..=req.len()).step_by(1024) {
            match scanner.parse(&req[..n], &mut headers, &limits) {
                Ok(Status::Partial) => {}
                Ok(Status::Complete(_)) => panic!("no head ends here"),
                Err(e) => {
                    refused = Some((n, e));
                    break;
                }
            }
        }
        let (n, e) = refused.expect("refused before the end");
        assert_eq!(e, ParseError::TargetTooLong);
        assert!(n <= limits.max_target_bytes + LONG_LINE_SLACK + 1024, "refused at {n}");
        let (got, work) = trickle(&req[..20_000], 1, &limits);
        assert_eq!(got, Err(ParseError::TargetTooLong));
        assert!(work <= 3 * 20_000, "{work} bytes examined");
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
            let mut storage = [const { MaybeUninit::uninit() }; 16];
            assert!(scanner.parse_uninit(&req[..n], &mut storage, &limits).unwrap().is_partial());
        }
        let mut storage = [const { MaybeUninit::uninit() }; 16];
        let got = scanner.parse_uninit(&req, &mut storage, &limits).unwrap().complete().unwrap();
        assert_eq!(got, want);
        assert!(scanner.work() <= 3 * req.len() as u64 + 1, "{}", scanner.work());
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
                input: b"\r\n\nGET / HTTP/1.1\r\n\r\n",
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

    /// A bad line is reported when its LF arrives (one starting with whitespace at its first
    /// byte, one with a control byte or a bad name byte at that byte), before the head ends,
    /// with the error the complete head gets; valid lines never stop the scan.
    #[test]
    fn bad_lines_are_reported_as_they_end() {
        struct Case {
            /// Sent first, then the rest one byte at a time; the head never ends. A bad line
            /// is the first line `rest` ends.
            first: &'static [u8],
            rest: &'static [u8],
            expect: Option<ParseError>,
            rfc: &'static str,
        }
        let cases = [
            Case {
                first: b"GET / HTTP/1.1\r\nHost: a\r\n",
                rest: b"Bad(Name: x\r\nMore: y\r\n",
                expect: Some(ParseError::InvalidHeaderName),
                rfc: "9110 5.1",
            },
            Case {
                first: b"GET / HTTP/1.1\r\n",
                rest: b"Host : a\r\n",
                expect: Some(ParseError::WhitespaceBeforeColon),
                rfc: "9112 5.1",
            },
            Case {
                first: b"GET / HTTP/1.1\r\nA: b\r\n",
                rest: b" folded\r\n",
                expect: Some(ParseError::ObsFold),
                rfc: "9112 5.2",
            },
            Case {
                first: b"GET / HTTP/1.1\r\n",
                rest: b"A: \x01\r\n",
                expect: Some(ParseError::InvalidHeaderValue),
                rfc: "9110 5.5",
            },
            Case {
                first: b"GET / HTTP/1.1\r\n",
                rest: b"A: b\n",
                expect: Some(ParseError::BareLf),
                rfc: "9112 2.2",
            },
            Case {
                first: b"GET",
                rest: b" /a b HTTP/1.1\r\n",
                expect: Some(ParseError::InvalidVersion),
                rfc: "9112 3",
            },
            Case {
                first: b"GET / ",
                rest: b"HTTP/2.0\r\n",
                expect: Some(ParseError::UnsupportedVersion),
                rfc: "9112 2.3",
            },
            Case {
                first: b"GET / HTTP/1.1\r\n",
                rest: b"A: b\r\nC-D: \t\xff e \r\nX:\r\n",
                expect: None,
                rfc: "9110 5.5 (valid: obs-text, HTAB, empty value)",
            },
        ];
        for c in cases {
            let limits = Limits::default();
            let mut scanner = HeadScanner::new();
            let mut headers = [EMPTY_HEADER; 16];
            assert!(scanner.parse(c.first, &mut headers, &limits).unwrap().is_partial());
            let mut buf = c.first.to_vec();
            let mut got = None;
            for (i, &b) in c.rest.iter().enumerate() {
                buf.push(b);
                let mut headers = [EMPTY_HEADER; 16];
                match scanner.parse(&buf, &mut headers, &limits) {
                    Ok(Status::Partial) => {}
                    Ok(Status::Complete(_)) => panic!("RFC {}: complete", c.rfc),
                    Err(e) => {
                        // At the LF that ends the bad line (the first line of `rest`), at
                        // its first byte when that is whitespace (obs-fold), at a control
                        // byte before its end, or at a byte of a field name that cannot be in
                        // one.
                        let lf = c.rest.iter().position(|&b| b == b'\n');
                        let field = c.first.ends_with(b"\n");
                        let folded = field && matches!(c.rest[0], b' ' | b'\t');
                        let ctl = c.rest.iter().position(|&b| b != b'\r' && is_value_ctl(b));
                        let name = c.rest.iter().position(|&b| !is_tchar(b));
                        let name = name.filter(|&n| {
                            field && c.rest[n] != b'\r' && (c.rest[n] != b':' || n == 0)
                        });
                        let early = [ctl, name].into_iter().flatten().min();
                        let at = if folded {
                            Some(0)
                        } else {
                            early.filter(|&c| lf.is_none_or(|lf| c < lf)).or(lf)
                        };
                        assert_eq!(Some(i), at, "RFC {}: at {i}", c.rfc);
                        got = Some(e);
                        break;
                    }
                }
            }
            assert_eq!(got, c.expect, "RFC {}", c.rfc);
            if let Some(e) = c.expect {
                // The complete head gets the same verdict.
                let mut whole = buf.clone();
                whole.extend_from_slice(b"\r\n");
                let mut headers = [EMPTY_HEADER; 16];
                assert_eq!(parse_request(&whole, &mut headers, &limits).err(), Some(e));
            }
        }
    }

    /// `input` through the one-shot parser, and through a scanner in pieces of `step` bytes
    /// (the first error, or `Ok` if every prefix was partial or the head completed).
    fn whole_and_pieces(input: &[u8], response: bool, step: usize) -> [Result<(), ParseError>; 2] {
        let limits = Limits::default();
        let parse = |scanner: Option<&mut HeadScanner>, bytes: &[u8]| {
            let mut headers = [EMPTY_HEADER; 16];
            match (scanner, response) {
                (None, true) => parse_response(bytes, &mut headers, &limits).map(drop),
                (None, false) => parse_request(bytes, &mut headers, &limits).map(drop),
                (Some(s), true) => s.parse_response(bytes, &mut headers, &limits).map(drop),
                (Some(s), false) => s.parse(bytes, &mut headers, &limits).map(drop),
            }
        };
        let whole = parse(None, input);
        let mut scanner = HeadScanner::new();
        let mut pieces = Ok(());
        for n in (step..input.len() + step).step_by(step) {
            if let Err(e) = parse(Some(&mut scanner), &input[..n.min(input.len())]) {
                pieces = Err(e);
                break;
            }
        }
        [whole, pieces]
    }

    /// RFC 9112 §3, §4, §5.1, RFC 9110 §5.5: a control byte (other than HTAB, and the CR
    /// before a LF) in a line that has not ended is refused when it arrives, in either role,
    /// with the error the same bytes get whole. Found by the client_response fuzz target:
    /// `HTTP/1.1 200 \0` fed one byte at a time waited for the end of the status line, and
    /// the end of input then read as a head cut short (whole: invalid status line); first
    /// seen as a NUL in an unended `Upgrade` field value.
    #[test]
    fn a_control_byte_in_an_unended_line_is_refused_when_it_arrives() {
        use ParseError::*;
        let cases: [(&[u8], bool, ParseError); 5] = [
            (b"HTTP/1.1 200 \0", true, InvalidStatusLine),
            (b"HTTP/1.1 200 OK\r\nConnection: upgrade\r\nUpgrade: h2\0", true, InvalidHeaderValue),
            (b"HTTP/1.1 200 OK\r\nA: b\x7f", true, InvalidHeaderValue),
            (b"GET / HTTP/1.1\r\nA: \x01", false, InvalidHeaderValue),
            (b"GET / HTTP/1.1\r\nHost: a\r\nB: c\x1b", false, InvalidHeaderValue),
        ];
        for (input, response, expect) in cases {
            for step in [1, 2, 3] {
                let got = whole_and_pieces(input, response, step);
                assert_eq!(got, [Err(expect); 2], "{input:?} in pieces of {step}");
            }
        }
    }

    /// RFC 9112 §4: an unended status line's first 13 bytes (version, code, SP) are judged
    /// even when one piece carries the line past them. Found by the client_response fuzz
    /// target: `HTTP/1.1 404rrr…` fed two bytes at a time went from 12 bytes to 14 unjudged,
    /// and the end of input then read as a head cut short (whole: invalid status line).
    #[test]
    fn a_status_line_is_judged_when_a_piece_passes_its_first_bytes() {
        let cases: [&[u8]; 4] = [
            b"HTTP/1.1 404rrrrrrrrrrrrrrrrrrrrrrr Not",
            b"\r\nHTTP/1.1 2000 OK",
            b"HTTP/1.1 20x OK and more",
            b"HTTP/1.1 200 OK\r\nA: b",
        ];
        for input in cases {
            let name = String::from_utf8_lossy(input);
            for step in [1, 2, 3, 5, 14, 20] {
                let [whole, pieces] = whole_and_pieces(input, true, step);
                assert_eq!(whole, pieces, "{name:?} in pieces of {step}");
            }
        }
        // The valid line among them stays partial, the bad ones fail.
        assert_eq!(whole_and_pieces(cases[3], true, 2), [Ok(()), Ok(())]);
        assert!(whole_and_pieces(cases[0], true, 2)[1].is_err());
    }

    /// RFC 9112 §5.1, RFC 9110 §5.1: a byte that cannot be in a field name, in a field line
    /// that has not ended, is refused when it arrives, in either role, with the error the same
    /// bytes get whole. Found by the client_response fuzz target: `Connect\xfbion: N…` (unended)
    /// fed two bytes at a time waited for the end of the line, and the end of input then read
    /// as a head cut short (whole: invalid header name).
    #[test]
    fn a_bad_name_byte_in_an_unended_field_line_is_refused_when_it_arrives() {
        let cases: [(&[u8], bool); 8] = [
            (b"HTTP/1.0 200 OK\r\nConnect\xfbion: NNNNNNNNHTTP/1.0 200 OK", true),
            (b"HTTP/1.1 200 OK\r\nHost: localhost\r\nTransfer-EncodinJ0u\r", true),
            (b"GET / HTTP/1.1\r\nHost\r", false),
            (b"HTTP/1.1 200 OK\r\nA: b\r\nC(d", true),
            (b"HTTP/1.1 200 OK\r\n:x", true),
            (b"HTTP/1.1 200 OK\r\nHost : a", true),
            (b"GET / HTTP/1.1\r\nHo\"st: a", false),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX-\x80", false),
        ];
        for (input, response) in cases {
            let name = String::from_utf8_lossy(input);
            for step in [1, 2, 3, 7] {
                let [whole, pieces] = whole_and_pieces(input, response, step);
                assert!(whole.is_err(), "{name:?} whole: {whole:?}");
                assert_eq!(whole, pieces, "{name:?} in pieces of {step}");
            }
        }
        // Valid names and values trickled in any pieces stay partial until the head ends.
        let fine: &[u8] = b"HTTP/1.1 200 OK\r\nX-A_b.c~!#$%&'*+^`|: v: w\r\nB:\tc\r\n";
        for step in [1, 2, 3] {
            assert_eq!(whole_and_pieces(fine, true, step), [Ok(()), Ok(())], "pieces of {step}");
        }
    }

    /// A head with more field lines than the parser takes fails when the line past them
    /// ends, in either role, with the error the same bytes get whole (too many header fields:
    /// 431 for a request), not when its end comes. Found by the client_response fuzz target:
    /// 21 field lines against a limit of 16, the last unended, fed two bytes at a time, then
    /// the end of input read as a head cut short.
    #[test]
    fn a_field_line_past_the_limit_is_refused_when_it_ends() {
        let lines: String = (0..17).map(|i| format!("X-{i}: v\r\n")).collect();
        let cases = [
            (format!("HTTP/1.1 301 Moved\r\n{lines}Date: Sun"), true),
            (format!("GET / HTTP/1.1\r\n{lines}"), false),
        ];
        for (input, response) in &cases {
            for step in [1, 2, 3, 7, 40] {
                let got = whole_and_pieces(input.as_bytes(), *response, step);
                assert_eq!(got, [Err(ParseError::TooManyHeaders); 2], "{input:?} in {step}");
            }
        }
        // Sixteen lines (the storage's room) stay partial.
        let sixteen: String = (0..16).map(|i| format!("X-{i}: v\r\n")).collect();
        let input = format!("HTTP/1.1 200 OK\r\n{sixteen}Date: Sun");
        for step in [1, 2, 5] {
            assert_eq!(whole_and_pieces(input.as_bytes(), true, step), [Ok(()), Ok(())]);
        }
    }

    /// RFC 9112 §2.2: a CR not followed by LF is refused when the byte after it arrives, in
    /// either role, with the error the same bytes get whole, rather than when a LF that may
    /// never come arrives. Found by the client_response fuzz target: `HTTP/1.1 404\r.` fed
    /// two bytes at a time waited for a line end, and the end of input then read as a head cut
    /// short (the whole input: bare CR).
    #[test]
    fn a_bare_cr_is_refused_when_the_next_byte_arrives() {
        struct Case {
            input: &'static [u8],
            response: bool,
            expect: ParseError,
        }
        let cases = [
            Case { input: b"HTTP/1.1 404\r.", response: true, expect: ParseError::BareCr },
            Case {
                input: b"HTTP/1.1 404 NotFound\r\n\r.",
                response: true,
                expect: ParseError::BareCr,
            },
            Case {
                input: b"HTTP/1.1 200 OK\r\nA: b\rc",
                response: true,
                expect: ParseError::BareCr,
            },
            Case { input: b"\r.", response: true, expect: ParseError::BareCr },
            Case { input: b"GET / HTTP/1.1\r.", response: false, expect: ParseError::BareCr },
            Case {
                input: b"GET / HTTP/1.1\r\nA: b\rc",
                response: false,
                expect: ParseError::BareCr,
            },
            Case {
                input: b"GET / HTTP/1.1\r\nA: b\r\n\rX",
                response: false,
                expect: ParseError::BareCr,
            },
        ];
        let limits = Limits::default();
        for c in cases {
            let name = String::from_utf8_lossy(c.input);
            let mut headers = [EMPTY_HEADER; 16];
            let whole = if c.response {
                parse_response(c.input, &mut headers, &limits).map(drop)
            } else {
                parse_request(c.input, &mut headers, &limits).map(drop)
            };
            assert_eq!(whole, Err(c.expect), "{name:?} whole");
            for step in [1, 2, 3] {
                let mut scanner = HeadScanner::new();
                let mut got = Ok(());
                for n in (step..c.input.len() + step).step_by(step) {
                    let prefix = &c.input[..n.min(c.input.len())];
                    let mut headers = [EMPTY_HEADER; 16];
                    let r = if c.response {
                        scanner.parse_response(prefix, &mut headers, &limits).map(drop)
                    } else {
                        scanner.parse(prefix, &mut headers, &limits).map(drop)
                    };
                    if let Err(e) = r {
                        got = Err(e);
                        break;
                    }
                }
                assert_eq!(got, Err(c.expect), "{name:?} in pieces of {step}");
            }
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

    /// A response trickled one byte at a time through the scanner: its verdict and the work.
    fn trickle_response(
        resp: &[u8],
        step: usize,
        limits: &Limits,
    ) -> (Result<u16, ParseError>, u64) {
        let mut scanner = HeadScanner::new();
        let mut n = 0;
        loop {
            n = (n + step).min(resp.len());
            let mut headers = [const { MaybeUninit::uninit() }; 128];
            match scanner.parse_response_uninit(&resp[..n], &mut headers, limits) {
                Ok(Status::Complete(h)) => {
                    assert_eq!(h.len, resp.len());
                    return (Ok(h.status), scanner.work());
                }
                Ok(Status::Partial) if n < resp.len() => {}
                Ok(Status::Partial) => panic!("partial at the end"),
                Err(e) => return (Err(e), scanner.work()),
            }
        }
    }

    /// The response side of the trickle defence: linear work for a head sent one byte at a
    /// time, the same head for any split, and the errors the one-shot parse reports.
    #[test]
    fn responses_trickle_linearly_with_the_same_verdict() {
        let limits = Limits { max_head_bytes: 64 * 1024, max_headers: 200, ..Limits::default() };
        let mut resp = b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n".to_vec();
        for i in 0..100 {
            resp.extend_from_slice(format!("X-Field-{i}: some value {i}\r\n").as_bytes());
        }
        resp.extend_from_slice(b"\r\n");
        let n = resp.len() as u64;
        for step in [1, 2, 7, 64, resp.len()] {
            let (status, work) = trickle_response(&resp, step, &limits);
            assert_eq!(status, Ok(200), "step {step}");
            assert!(work <= 3 * n + 1, "step {step}: {work} bytes examined for {n}");
        }
        let cases: [(&[u8], ParseError, &str); 5] = [
            (b"HTTP/1.1 200 OK\nA: b\n\n", ParseError::BareLf, "9112 2.2"),
            (b"HTTP/1.1 2000 OK\r\n\r\n", ParseError::InvalidStatus, "9112 4"),
            (b"HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", ParseError::ObsFold, "9112 5.2"),
            (b"HTTP/1.1 200 OK\r\nA : b\r\n\r\n", ParseError::WhitespaceBeforeColon, "9112 5.1"),
            (b"HTTP/2.0 200 OK\r\n\r\n", ParseError::UnsupportedVersion, "9112 2.3"),
        ];
        for (input, expect, rfc) in cases {
            let mut headers = [EMPTY_HEADER; 16];
            assert_eq!(parse_response(input, &mut headers, &limits), Err(expect), "RFC {rfc}");
            assert_eq!(trickle_response(input, 1, &limits).0, Err(expect), "RFC {rfc}");
        }
        // Bytes that cannot begin a status line fail as they arrive, as they do whole: found by
        // the client_response fuzz target (`\r\n*****` fed two bytes at a time waited for a
        // line end, and the end of input then read as a head cut short).
        let never: [(&[u8], ParseError); 6] = [
            (b"\r\n*****", ParseError::InvalidVersion),
            (b"HTTP/1.1 200 OK\r\n Host: foo", ParseError::InvalidHeaderName),
            (b"HTTP/1.1 200 OK\r\nA: b\r\n\tc", ParseError::ObsFold),
            (b"HTTX/1.1 200 OK", ParseError::InvalidVersion),
            (b"HTTP/1.1 2x0", ParseError::InvalidStatus),
            (b"HTTP/1.1\t200", ParseError::InvalidStatusLine),
        ];
        for (input, expect) in never {
            let mut headers = [EMPTY_HEADER; 16];
            assert_eq!(parse_response(input, &mut headers, &limits), Err(expect), "{input:?}");
            for step in [1, 2, 3] {
                let mut scanner = HeadScanner::new();
                let mut got = Ok(());
                for n in (step..input.len() + step).step_by(step) {
                    let mut headers = [EMPTY_HEADER; 16];
                    let prefix = &input[..n.min(input.len())];
                    if let Err(e) = scanner.parse_response(prefix, &mut headers, &limits) {
                        got = Err(e);
                        break;
                    }
                }
                assert_eq!(got, Err(expect), "{input:?} in pieces of {step}");
            }
        }
        // A bad field line is reported when its LF arrives, before the head ends.
        let mut scanner = HeadScanner::new();
        let mut headers = [EMPTY_HEADER; 16];
        let first = b"HTTP/1.1 200 OK\r\n";
        assert!(scanner.parse_response(first, &mut headers, &limits).unwrap().is_partial());
        let bad = b"HTTP/1.1 200 OK\r\nBad(Name: x\r\n";
        let mut headers = [EMPTY_HEADER; 16];
        let got = scanner.parse_response(bad, &mut headers, &limits);
        assert_eq!(got, Err(ParseError::InvalidHeaderName), "RFC 9110 5.1");
    }
}
