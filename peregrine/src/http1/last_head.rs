//! The last complete head, request or response, remembered so that a head repeating it byte
//! for byte is answered without being parsed again.
//!
//! A parse is a function of the head's bytes and the limits alone (the fuzz target
//! `http1_head` checks that a head complete in a prefix is the same head in any longer input),
//! so bytes equal to a head that passed every rule get that head again: the same method,
//! target, fields, identified fields and length, with every span cut from the new bytes. Many
//! clients send the very same head again and again on a connection, and across connections:
//! load balancers' health checks, pollers, benchmark tools. One memo per server worker serves
//! all its connections (idle connections carry none); a client keeps one per connection for
//! the responses, which repeat while their Date does.
//!
//! Unsafe lives here for one reason: the remembered spans of the method, the target and the
//! field names were proven ASCII by the parse that produced them, and the same spans of equal
//! bytes are turned into `&str` without validating them again ([`ascii`]).
#![allow(unsafe_code)]

use super::head::storage::HeaderStorage;
use super::{
    HeadScanner, Header, HeaderId, KnownHeaders, Limits, ParseError, RequestHead, ResponseHead,
    Status, TargetForm, Version,
};
use crate::Method;
use std::mem::MaybeUninit;
use std::ops::Range;

/// Longest head remembered, in bytes. Longer heads are parsed every time.
pub const LAST_HEAD_BYTES: usize = 1024;
/// Most fields a remembered head may have.
pub const LAST_HEAD_FIELDS: usize = 32;
/// Parse attempts without a repeat of the remembered head before a new head replaces it.
const REPLACE_AFTER: u16 = 16;

/// A span of the remembered head, as offsets from its start.
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    start: u16,
    end: u16,
}

impl Span {
    /// The span of `part` inside `head`, if it lies there.
    fn of(head: &[u8], part: &[u8]) -> Option<Span> {
        let start = (part.as_ptr() as usize).checked_sub(head.as_ptr() as usize)?;
        let end = start.checked_add(part.len())?;
        (end <= head.len()).then_some(Span { start: start as u16, end: end as u16 })
    }

    #[inline(always)]
    fn range(self) -> Range<usize> {
        usize::from(self.start)..usize::from(self.end)
    }
}

/// A remembered field: where its name and value are, and its kind.
#[derive(Clone, Copy, Debug)]
struct Field {
    name: Span,
    value: Span,
    id: HeaderId,
}

const NO_SPAN: Span = Span { start: 0, end: 0 };
const NO_FIELD: Field = Field { name: NO_SPAN, value: NO_SPAN, id: HeaderId::Other };

/// The last complete request head parsed through it, and the parse of any head that repeats
/// it byte for byte.
///
/// [`LastHead::parse_uninit`] is [`HeadScanner::parse_uninit`] with a memo in front: when the
/// input starts with exactly the bytes of the remembered head, parsed under the same
/// [`Limits`], the head is rebuilt from the remembered layout (one compare of the bytes and a
/// store per field) instead of being scanned and validated again. Any other input is parsed,
/// and a complete head of at most [`LAST_HEAD_BYTES`] bytes and [`LAST_HEAD_FIELDS`] fields
/// is remembered when nothing is, or when the remembered head has not been repeated for 16
/// heads (remembering costs a copy; a head that changes every time is not copied every time).
/// The outcome is always the one the parser gives. [`LastResponseHead`] does the same for
/// response heads.
///
/// # Examples
/// ```
/// use std::mem::MaybeUninit;
/// use peregrine::http1::{HeadScanner, LastHead, Limits, Status};
///
/// let mut last = LastHead::new();
/// let mut scanner = HeadScanner::new();
/// let limits = Limits::default();
/// let buf = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n";
/// let mut headers = [const { MaybeUninit::uninit() }; 8];
/// let first = last.parse_uninit(&mut scanner, buf, &mut headers, &limits)?;
/// let Status::Complete(head) = first else { unreachable!("complete") };
/// // The second head repeats the first: it is rebuilt, with spans in the second copy.
/// let rest = &buf[head.len..];
/// assert!(last.repeats(rest));
/// let mut headers = [const { MaybeUninit::uninit() }; 8];
/// let second = last.parse_uninit(&mut scanner, rest, &mut headers, &limits)?;
/// let Status::Complete(head) = second else { unreachable!("complete") };
/// assert_eq!(head.target, "/a");
/// assert_eq!(head.target.as_ptr(), rest[4..].as_ptr());
/// # Ok::<(), peregrine::http1::ParseError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct LastHead(Remembered<RequestLine>);

/// [`LastHead`] for response heads (a client's side: a server sends the same head again and
/// again, its Date changing once a second).
///
/// # Examples
/// ```
/// use std::mem::MaybeUninit;
/// use peregrine::http1::{HeadScanner, LastResponseHead, Limits, Status};
///
/// let mut last = LastResponseHead::new();
/// let mut scanner = HeadScanner::new();
/// let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
/// for _ in 0..2 {
///     let mut headers = [const { MaybeUninit::uninit() }; 8];
///     let parsed = last.parse_uninit(&mut scanner, resp, &mut headers, &Limits::default())?;
///     let Status::Complete(head) = parsed else { unreachable!("complete") };
///     assert_eq!((head.status, head.reason, head.len), (200, &b"OK"[..], resp.len()));
///     assert!(last.repeats(resp));
/// }
/// # Ok::<(), peregrine::http1::ParseError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct LastResponseHead(Remembered<StatusLine>);

impl LastHead {
    /// Nothing remembered yet.
    pub fn new() -> Self {
        LastHead::default()
    }

    /// Whether `buf` starts with the remembered head.
    #[inline(always)]
    pub fn repeats(&self, buf: &[u8]) -> bool {
        self.0.memo.repeats(buf)
    }

    /// Parses the request head at the start of `buf` as `scanner.parse_uninit` does, answering
    /// a repeat of the remembered head from memory and remembering a new complete one.
    ///
    /// # Errors
    /// As [`parse_request`](super::parse_request).
    #[inline]
    pub fn parse_uninit<'b, 'h>(
        &mut self,
        scanner: &mut HeadScanner,
        buf: &'b [u8],
        headers: &'h mut [MaybeUninit<Header<'b>>],
        limits: &Limits,
    ) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
        self.0.parse(scanner, buf, headers, limits)
    }
}

impl LastResponseHead {
    /// Nothing remembered yet.
    pub fn new() -> Self {
        LastResponseHead::default()
    }

    /// Whether `buf` starts with the remembered head.
    #[inline(always)]
    pub fn repeats(&self, buf: &[u8]) -> bool {
        self.0.memo.repeats(buf)
    }

    /// Parses the response head at the start of `buf` as `scanner.parse_response_uninit`
    /// does, answering a repeat of the remembered head from memory and remembering a new
    /// complete one.
    ///
    /// # Errors
    /// As [`parse_response`](super::parse_response).
    #[inline]
    pub fn parse_uninit<'b, 'h>(
        &mut self,
        scanner: &mut HeadScanner,
        buf: &'b [u8],
        headers: &'h mut [MaybeUninit<Header<'b>>],
        limits: &Limits,
    ) -> Result<Status<ResponseHead<'b, 'h>>, ParseError> {
        self.0.parse(scanner, buf, headers, limits)
    }
}

/// A role's start-line, remembered as spans, and its parse.
trait Line: Copy + Default {
    /// The parsed head.
    type Head<'b, 'h>
    where
        'b: 'h;
    /// The role's parse, through the scanner.
    fn parse<'b, 'h>(
        scanner: &mut HeadScanner,
        buf: &'b [u8],
        headers: &'h mut [MaybeUninit<Header<'b>>],
        limits: &Limits,
    ) -> Result<Status<Self::Head<'b, 'h>>, ParseError>;
    /// The head's fields, identified fields and length.
    fn parts<'a>(head: &'a Self::Head<'_, '_>) -> (&'a [Header<'a>], KnownHeaders, usize);
    /// The start-line of `head`, parsed from the start of `bytes`, as spans of `bytes`.
    fn of(bytes: &[u8], head: &Self::Head<'_, '_>) -> Option<Self>;
    /// The head again from bytes equal to those it was parsed from.
    fn rebuild<'b, 'h>(
        &self,
        bytes: &'b [u8],
        headers: &'h [Header<'b>],
        known: KnownHeaders,
    ) -> Self::Head<'b, 'h>;
}

/// A remembered request line.
#[derive(Clone, Copy)]
struct RequestLine {
    method: Method,
    /// The method token's span; `None` for a standard method (its text is static).
    method_token: Option<Span>,
    target: Span,
    form: TargetForm,
    version: Version,
}

impl Default for RequestLine {
    fn default() -> Self {
        RequestLine {
            method: Method::Get,
            method_token: None,
            target: NO_SPAN,
            form: TargetForm::Origin,
            version: Version::Http11,
        }
    }
}

impl Line for RequestLine {
    type Head<'b, 'h>
        = RequestHead<'b, 'h>
    where
        'b: 'h;

    #[inline(always)]
    fn parse<'b, 'h>(
        scanner: &mut HeadScanner,
        buf: &'b [u8],
        headers: &'h mut [MaybeUninit<Header<'b>>],
        limits: &Limits,
    ) -> Result<Status<RequestHead<'b, 'h>>, ParseError> {
        scanner.parse_uninit(buf, headers, limits)
    }

    #[inline(always)]
    fn parts<'a>(head: &'a RequestHead<'_, '_>) -> (&'a [Header<'a>], KnownHeaders, usize) {
        (head.headers, head.known, head.len)
    }

    fn of(bytes: &[u8], head: &RequestHead<'_, '_>) -> Option<Self> {
        // A standard method's token is the method's own static text, not a span of the head.
        let method_token = match Span::of(bytes, head.method_token.as_bytes()) {
            Some(span) => Some(span),
            None if head.method.as_str() == Some(head.method_token) => None,
            None => return None,
        };
        Some(RequestLine {
            method: head.method,
            method_token,
            target: Span::of(bytes, head.target.as_bytes())?,
            form: head.form,
            version: head.version,
        })
    }

    #[inline(always)]
    fn rebuild<'b, 'h>(
        &self,
        bytes: &'b [u8],
        headers: &'h [Header<'b>],
        known: KnownHeaders,
    ) -> RequestHead<'b, 'h> {
        let method_token = match self.method_token {
            Some(span) => ascii(bytes, span),
            None => self.method.as_str().unwrap_or_default(),
        };
        RequestHead {
            method: self.method,
            method_token,
            target: ascii(bytes, self.target),
            form: self.form,
            version: self.version,
            headers,
            known,
            len: bytes.len(),
        }
    }
}

/// A remembered status line.
#[derive(Clone, Copy)]
struct StatusLine {
    version: Version,
    status: u16,
    reason: Span,
}

impl Default for StatusLine {
    fn default() -> Self {
        StatusLine { version: Version::Http11, status: 200, reason: NO_SPAN }
    }
}

impl Line for StatusLine {
    type Head<'b, 'h>
        = ResponseHead<'b, 'h>
    where
        'b: 'h;

    #[inline(always)]
    fn parse<'b, 'h>(
        scanner: &mut HeadScanner,
        buf: &'b [u8],
        headers: &'h mut [MaybeUninit<Header<'b>>],
        limits: &Limits,
    ) -> Result<Status<ResponseHead<'b, 'h>>, ParseError> {
        scanner.parse_response_uninit(buf, headers, limits)
    }

    #[inline(always)]
    fn parts<'a>(head: &'a ResponseHead<'_, '_>) -> (&'a [Header<'a>], KnownHeaders, usize) {
        (head.headers, head.known, head.len)
    }

    fn of(bytes: &[u8], head: &ResponseHead<'_, '_>) -> Option<Self> {
        let reason = Span::of(bytes, head.reason)?;
        Some(StatusLine { version: head.version, status: head.status, reason })
    }

    #[inline(always)]
    fn rebuild<'b, 'h>(
        &self,
        bytes: &'b [u8],
        headers: &'h [Header<'b>],
        known: KnownHeaders,
    ) -> ResponseHead<'b, 'h> {
        ResponseHead {
            version: self.version,
            status: self.status,
            reason: bytes.get(self.reason.range()).unwrap_or_default(),
            headers,
            known,
            len: bytes.len(),
        }
    }
}

/// A remembered head of either role: its start-line and the rest.
#[derive(Clone, Default)]
struct Remembered<L> {
    line: L,
    memo: Memo,
}

impl<L> std::fmt::Debug for Remembered<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.memo.fmt(f)
    }
}

impl<L: Line> Remembered<L> {
    #[inline(always)]
    fn parse<'b, 'h>(
        &mut self,
        scanner: &mut HeadScanner,
        buf: &'b [u8],
        headers: &'h mut [MaybeUninit<Header<'b>>],
        limits: &Limits,
    ) -> Result<Status<L::Head<'b, 'h>>, ParseError> {
        if let Some(bytes) = self.memo.holds(buf, headers.len(), limits) {
            self.memo.misses = 0;
            scanner.repeated(bytes.len());
            let fields = self.memo.fields(bytes, headers);
            return Ok(Status::Complete(self.line.rebuild(bytes, fields, self.memo.known)));
        }
        // Remembering costs about as much as a third of a short head's parse, so a head that
        // keeps changing is not remembered each time: only when nothing is, or when the
        // remembered one has not come back for `REPLACE_AFTER` heads.
        if self.memo.len != 0 && self.memo.misses < REPLACE_AFTER {
            self.memo.misses += 1;
            return L::parse(scanner, buf, headers, limits);
        }
        let parsed = L::parse(scanner, buf, headers, limits);
        if let Ok(Status::Complete(head)) = &parsed {
            self.remember(buf, head, limits);
        }
        parsed
    }

    /// Remembers `head`, parsed from the start of `buf` under `limits`, if it is small enough.
    #[inline(never)]
    fn remember(&mut self, buf: &[u8], head: &L::Head<'_, '_>, limits: &Limits) {
        self.memo.misses = 0;
        let (headers, known, len) = L::parts(head);
        let Some(bytes) = buf.get(..len) else { return };
        if let Some(line) = L::of(bytes, head) {
            if self.memo.store(bytes, headers, known, limits) {
                self.line = line;
            }
        }
    }
}

/// What both roles remember alike: the bytes, the fields, the limits, and how long since the
/// head was last repeated.
#[derive(Clone)]
struct Memo {
    /// Bytes of the remembered head; 0 when none is.
    len: u16,
    /// Parse attempts since the remembered head was last repeated.
    misses: u16,
    /// How many of `fields` are the head's.
    count: u16,
    /// The limits it was parsed under.
    limits: Limits,
    known: KnownHeaders,
    fields: [Field; LAST_HEAD_FIELDS],
    bytes: [u8; LAST_HEAD_BYTES],
}

impl Default for Memo {
    fn default() -> Self {
        Memo {
            len: 0,
            misses: 0,
            count: 0,
            limits: Limits::default(),
            known: KnownHeaders::EMPTY,
            fields: [NO_FIELD; LAST_HEAD_FIELDS],
            bytes: [0; LAST_HEAD_BYTES],
        }
    }
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let head = self.bytes.get(..usize::from(self.len)).unwrap_or_default();
        f.write_str(&String::from_utf8_lossy(head))
    }
}

impl Memo {
    /// The remembered head's bytes at the start of `buf`, if they are there.
    #[inline(always)]
    fn head_in<'b>(&self, buf: &'b [u8]) -> Option<&'b [u8]> {
        let len = usize::from(self.len);
        let bytes = buf.get(..len)?;
        (len != 0 && Some(bytes) == self.bytes.get(..len)).then_some(bytes)
    }

    /// Whether `buf` starts with the remembered head.
    #[inline(always)]
    fn repeats(&self, buf: &[u8]) -> bool {
        self.head_in(buf).is_some()
    }

    /// The head's bytes in `buf` when the remembered head answers it: the same bytes, the same
    /// limits, and room for its fields in storage for `room` headers (with less the parser's
    /// verdict is `TooManyHeaders`). The bytes are compared first: a head that differs is turned
    /// away by them alone.
    #[inline(always)]
    fn holds<'b>(&self, buf: &'b [u8], room: usize, limits: &Limits) -> Option<&'b [u8]> {
        self.head_in(buf).filter(|_| usize::from(self.count) <= room && self.limits == *limits)
    }

    /// The remembered fields, cut from `bytes` (equal to the remembered head's) into `headers`.
    #[inline(always)]
    fn fields<'b, 'h>(
        &self,
        bytes: &'b [u8],
        headers: &'h mut [MaybeUninit<Header<'b>>],
    ) -> &'h [Header<'b>] {
        let mut storage = HeaderStorage::uninit(headers);
        for f in self.fields.get(..usize::from(self.count)).unwrap_or_default() {
            let value = bytes.get(f.value.range()).unwrap_or_default();
            storage.push(Header { name: ascii(bytes, f.name), value, id: f.id });
        }
        storage.into_filled()
    }

    /// Keeps `bytes` (a whole head) and the layout of its `headers`; false, remembering
    /// nothing, when the head is too large or a field lies outside it.
    fn store(
        &mut self,
        bytes: &[u8],
        headers: &[Header<'_>],
        known: KnownHeaders,
        limits: &Limits,
    ) -> bool {
        self.len = 0;
        if bytes.len() > LAST_HEAD_BYTES || headers.len() > LAST_HEAD_FIELDS {
            return false;
        }
        for (kept, h) in self.fields.iter_mut().zip(headers) {
            let (Some(name), Some(value)) =
                (Span::of(bytes, h.name.as_bytes()), Span::of(bytes, h.value))
            else {
                return false;
            };
            *kept = Field { name, value, id: h.id };
        }
        self.bytes[..bytes.len()].copy_from_slice(bytes);
        self.count = headers.len() as u16;
        self.limits = *limits;
        self.known = known;
        self.len = bytes.len() as u16;
        true
    }
}

/// The text of `span` in `head`, whose bytes equal those of the remembered head.
#[inline(always)]
fn ascii(head: &[u8], span: Span) -> &str {
    let bytes = head.get(span.range()).unwrap_or_default();
    debug_assert!(bytes.is_ascii());
    // SAFETY: `span` is exactly the extent of a `&str` of the parsed head it remembers (a
    // method token, the target or a field name: `Span::of` in `RequestLine::of` and
    // `Memo::store`), and `head` holds the same bytes as that head (`Memo::holds` compared
    // them), so these bytes are that `&str`'s bytes: valid UTF-8 (ASCII, as the parser's
    // kernels proved). An out-of-range span gives the empty slice.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

#[cfg(test)]
mod tests;
