//! The last complete request head, remembered so that a head repeating it byte for byte is
//! answered without being parsed again.
//!
//! A parse is a function of the head's bytes and the limits alone (the fuzz target
//! `http1_head` checks that a head complete in a prefix is the same head in any longer input),
//! so bytes equal to a head that passed every rule get that head again: the same method,
//! target, fields, identified fields and length, with every span cut from the new bytes. Many
//! clients send the very same head again and again on a connection, and across connections:
//! load balancers' health checks, pollers, benchmark tools. One memo per server worker serves
//! all its connections (idle connections carry none).
//!
//! Unsafe lives here for one reason: the remembered spans of the method, the target and the
//! field names were proven ASCII by the parse that produced them, and the same spans of equal
//! bytes are turned into `&str` without validating them again ([`ascii`]).
#![allow(unsafe_code)]

use super::head::slots::Slots;
use super::{
    HeadScanner, Header, HeaderId, KnownHeaders, Limits, ParseError, RequestHead, Status,
    TargetForm, Version,
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
/// The outcome is always the one the parser gives.
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
#[derive(Clone)]
pub struct LastHead {
    /// Bytes of the remembered head; 0 when none is.
    len: u16,
    /// Parse attempts since the remembered head was last repeated.
    misses: u16,
    /// How many of `fields` are the head's.
    count: u16,
    /// The limits it was parsed under.
    limits: Limits,
    method: Method,
    /// The method token's span; `None` for a standard method (its text is static).
    method_token: Option<Span>,
    target: Span,
    form: TargetForm,
    version: Version,
    known: KnownHeaders,
    fields: [Field; LAST_HEAD_FIELDS],
    bytes: [u8; LAST_HEAD_BYTES],
}

impl Default for LastHead {
    fn default() -> Self {
        LastHead::new()
    }
}

impl std::fmt::Debug for LastHead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LastHead")
            .field("head", &String::from_utf8_lossy(&self.bytes[..usize::from(self.len)]))
            .finish_non_exhaustive()
    }
}

impl LastHead {
    /// Nothing remembered yet.
    pub fn new() -> Self {
        LastHead {
            len: 0,
            misses: 0,
            count: 0,
            limits: Limits::default(),
            method: Method::Get,
            method_token: None,
            target: Span::default(),
            form: TargetForm::Origin,
            version: Version::Http11,
            known: KnownHeaders::EMPTY,
            fields: [NO_FIELD; LAST_HEAD_FIELDS],
            bytes: [0; LAST_HEAD_BYTES],
        }
    }

    /// Whether `buf` starts with the remembered head.
    #[inline(always)]
    pub fn repeats(&self, buf: &[u8]) -> bool {
        let len = usize::from(self.len);
        len != 0 && buf.get(..len) == self.bytes.get(..len)
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
        if self.holds(buf, headers.len(), limits) {
            self.misses = 0;
            scanner.repeated(usize::from(self.len));
            return Ok(Status::Complete(self.rebuild(buf, headers)));
        }
        // Remembering costs about as much as a third of a short head's parse, so a head that
        // keeps changing is not remembered each time: only when nothing is, or when the
        // remembered one has not come back for `REPLACE_AFTER` heads.
        if self.len != 0 && self.misses < REPLACE_AFTER {
            self.misses += 1;
            return scanner.parse_uninit(buf, headers, limits);
        }
        let parsed = scanner.parse_uninit(buf, headers, limits);
        if let Ok(Status::Complete(head)) = &parsed {
            self.remember(buf, head, limits);
        }
        parsed
    }

    /// Whether the remembered head answers `buf`: the same bytes, the same limits, and room for
    /// its fields in `slots` slots (with fewer the parser's verdict is `TooManyHeaders`).
    #[inline(always)]
    fn holds(&self, buf: &[u8], slots: usize, limits: &Limits) -> bool {
        // The bytes first: a head that differs is turned away by them alone.
        self.repeats(buf) && usize::from(self.count) <= slots && self.limits == *limits
    }

    /// The remembered head, its spans cut from `buf` (which [`LastHead::holds`]).
    #[inline(always)]
    fn rebuild<'b, 'h>(
        &self,
        buf: &'b [u8],
        headers: &'h mut [MaybeUninit<Header<'b>>],
    ) -> RequestHead<'b, 'h> {
        let len = usize::from(self.len);
        let head = buf.get(..len).unwrap_or_default();
        let mut slots = Slots::uninit(headers);
        for f in self.fields.get(..usize::from(self.count)).unwrap_or_default() {
            let value = head.get(f.value.range()).unwrap_or_default();
            slots.push(Header { name: ascii(head, f.name), value, id: f.id });
        }
        let method_token = match self.method_token {
            Some(span) => ascii(head, span),
            None => self.method.as_str().unwrap_or_default(),
        };
        RequestHead {
            method: self.method,
            method_token,
            target: ascii(head, self.target),
            form: self.form,
            version: self.version,
            headers: slots.into_filled(),
            known: self.known,
            len,
        }
    }

    /// Remembers `head`, parsed from the start of `buf` under `limits`, if it is short enough.
    #[inline(never)]
    fn remember(&mut self, buf: &[u8], head: &RequestHead<'_, '_>, limits: &Limits) {
        self.len = 0;
        self.misses = 0;
        let (Some(bytes), true) = (buf.get(..head.len), head.headers.len() <= LAST_HEAD_FIELDS)
        else {
            return;
        };
        if bytes.len() > LAST_HEAD_BYTES {
            return;
        }
        // A standard method's token is the method's own static text, not a span of the head.
        let method_token = match Span::of(bytes, head.method_token.as_bytes()) {
            Some(span) => Some(span),
            None if head.method.as_str() == Some(head.method_token) => None,
            None => return,
        };
        let Some(target) = Span::of(bytes, head.target.as_bytes()) else { return };
        for (slot, h) in self.fields.iter_mut().zip(head.headers) {
            let (Some(name), Some(value)) =
                (Span::of(bytes, h.name.as_bytes()), Span::of(bytes, h.value))
            else {
                return;
            };
            *slot = Field { name, value, id: h.id };
        }
        self.bytes[..bytes.len()].copy_from_slice(bytes);
        self.count = head.headers.len() as u16;
        self.limits = *limits;
        self.method = head.method;
        self.method_token = method_token;
        self.target = target;
        self.form = head.form;
        self.version = head.version;
        self.known = head.known;
        self.len = bytes.len() as u16;
    }
}

/// The text of `span` in `head`, whose bytes equal those of the remembered head.
#[inline(always)]
fn ascii(head: &[u8], span: Span) -> &str {
    let bytes = head.get(span.range()).unwrap_or_default();
    debug_assert!(bytes.is_ascii());
    // SAFETY: `span` is exactly the extent of a `&str` of the parsed head it remembers (a
    // method token, the target or a field name: `Span::of` in `remember`), and `head` holds
    // the same bytes as that head (`LastHead::holds` compared them), so these bytes are that
    // `&str`'s bytes: valid UTF-8 (ASCII, as the parser's kernels proved). An out-of-range
    // span gives the empty slice.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

#[cfg(test)]
mod tests;
