//! The parsed request and response heads: borrowed views over the input, plus the headers the
//! server and the client need, identified during the parse so no later stage scans the list
//! again.

use crate::Method;
pub use crate::Version;

pub(crate) mod storage;

/// The outcome of a parse over input that may still be incomplete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status<T> {
    /// A whole item was parsed.
    Complete(T),
    /// More input is needed; nothing was consumed.
    Partial,
}

impl<T> Status<T> {
    /// The complete value, if any.
    pub fn complete(self) -> Option<T> {
        match self {
            Status::Complete(t) => Some(t),
            Status::Partial => None,
        }
    }

    /// Whether more input is needed.
    pub fn is_partial(&self) -> bool {
        matches!(self, Status::Partial)
    }
}

/// The form of a request-target (RFC 9112 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetForm {
    /// `/path?query` (§3.2.1).
    Origin,
    /// `http://host/path` (§3.2.2).
    Absolute,
    /// `host:port`, only with CONNECT (§3.2.3).
    Authority,
    /// `*`, only with OPTIONS (§3.2.4).
    Asterisk,
}

/// Headers identified while parsing, so framing and the server find them without a re-scan.
///
/// Names are compared case-insensitively (RFC 9110 §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum HeaderId {
    /// `Host` (RFC 9112 §3.2).
    Host,
    /// `Content-Length` (RFC 9110 §8.6).
    ContentLength,
    /// `Transfer-Encoding` (RFC 9112 §6.1).
    TransferEncoding,
    /// `Connection` (RFC 9110 §7.6.1).
    Connection,
    /// `Expect` (RFC 9110 §10.1.1).
    Expect,
    /// `Upgrade` (RFC 9110 §7.8).
    Upgrade,
    /// `TE` (RFC 9110 §10.1.4).
    Te,
    /// `Trailer` (RFC 9110 §6.6.2).
    Trailer,
    /// `Accept-Encoding` (RFC 9110 §12.5.3).
    AcceptEncoding,
    /// `Range` (RFC 9110 §14.2).
    Range,
    /// `If-Range` (RFC 9110 §13.1.5).
    IfRange,
    /// `If-Match` (RFC 9110 §13.1.1).
    IfMatch,
    /// `If-None-Match` (RFC 9110 §13.1.2).
    IfNoneMatch,
    /// `If-Modified-Since` (RFC 9110 §13.1.3).
    IfModifiedSince,
    /// `If-Unmodified-Since` (RFC 9110 §13.1.4).
    IfUnmodifiedSince,
    /// Any other header.
    Other,
}

/// Number of identified header kinds (every [`HeaderId`] but `Other`).
pub const KNOWN_HEADERS: usize = HeaderId::Other as usize;

/// One header field: a borrowed name and value (surrounding whitespace trimmed) and its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header<'b> {
    /// The field name, a token (RFC 9110 §5.1), as sent.
    pub name: &'b str,
    /// The field value without leading or trailing whitespace; may hold HTAB and obs-text.
    pub value: &'b [u8],
    /// The identified header kind.
    pub id: HeaderId,
}

/// An unused header, for building the array handed to the parser.
pub const EMPTY_HEADER: Header<'static> = Header { name: "", value: b"", id: HeaderId::Other };

/// Where the identified headers sit in the header list: the first index and how many there are.
///
/// Two arrays of sixteen `u16` lanes, one lane per kind. The parser records through its
/// scanning kernel (`simd::Kernel::record_known`), which with AVX2 updates each array as one
/// 32-byte vector: storing one `u16` lane and then copying the whole table into the parsed
/// head made the copy's wide loads wait for the narrow stores to leave the store buffer
/// (store-to-load forwarding cannot merge them), ~6 ns per parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KnownHeaders {
    first: [u16; 16],
    count: [u16; 16],
}

impl Default for KnownHeaders {
    fn default() -> Self {
        KnownHeaders::EMPTY
    }
}

const _: () = assert!(KNOWN_HEADERS < 16, "one array entry per kind, `Other` left out");

impl KnownHeaders {
    /// No header identified (the same as `default()`, usable in constants).
    pub const EMPTY: KnownHeaders = KnownHeaders { first: [0; 16], count: [0; 16] };

    unstable_pub! {
        /// Records that header `index` has kind `id` (counts saturate at `u16::MAX`; `Other`
        /// records nothing). The parser fills the table; public (the `unstable` feature) only
        /// for benches and tests that build heads by hand.
        #[inline(always)]
        pub fn record(&mut self, id: HeaderId, index: usize) {
            let k = id as usize % 16;
            if k >= KNOWN_HEADERS {
                return;
            }
            let c = self.count[k];
            if c == 0 {
                self.first[k] = index as u16;
            }
            self.count[k] = c.saturating_add(1);
        }
    }

    /// The lanes (`first`, `count`; lane `k` is kind `k`), for a scanning kernel that
    /// records with vector operations (see `simd::Kernel::record_known`).
    #[inline(always)]
    pub(crate) fn lanes_mut(&mut self) -> (&mut [u16; 16], &mut [u16; 16]) {
        (&mut self.first, &mut self.count)
    }

    /// Index of the first header of kind `id`, if present.
    #[inline]
    pub fn first(&self, id: HeaderId) -> Option<usize> {
        let k = id as usize % 16;
        (k < KNOWN_HEADERS && self.count[k] > 0).then(|| usize::from(self.first[k]))
    }

    /// How many headers of kind `id` were seen (0 for `Other`).
    #[inline]
    pub fn count(&self, id: HeaderId) -> usize {
        let k = id as usize % 16;
        if k < KNOWN_HEADERS { usize::from(self.count[k]) } else { 0 }
    }

    /// Every header of kind `id` in `headers` (the list this table was recorded from), in
    /// order: the scan starts at the first and stops after the last.
    #[inline]
    pub(crate) fn all<'h, 'b>(
        &self,
        headers: &'h [Header<'b>],
        id: HeaderId,
    ) -> impl Iterator<Item = &'h Header<'b>> {
        let start = self.first(id).unwrap_or(headers.len());
        let rest = headers.get(start..).unwrap_or_default();
        rest.iter().filter(move |h| h.id == id).take(self.count(id))
    }
}

/// A parsed request head, borrowing from the input buffer (`'b`) and the header array (`'h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestHead<'b, 'h> {
    /// The method tag.
    pub method: Method,
    /// The method token as sent (equal to the tag's text for standard methods).
    pub method_token: &'b str,
    /// The request-target, validated per RFC 3986 / RFC 9112 §3.2.
    pub target: &'b str,
    /// Which of the four forms the target has.
    pub form: TargetForm,
    /// The protocol version.
    pub version: Version,
    /// The header fields in order.
    pub headers: &'h [Header<'b>],
    /// Where the identified headers are in `headers`.
    pub known: KnownHeaders,
    /// Bytes of input taken by the head, including the final empty line.
    pub len: usize,
}

impl<'b> RequestHead<'b, '_> {
    /// The first header of kind `id`.
    #[inline]
    pub fn known(&self, id: HeaderId) -> Option<&Header<'b>> {
        self.known.first(id).and_then(|i| self.headers.get(i))
    }

    /// Every header of kind `id`, in order.
    pub fn all(&self, id: HeaderId) -> impl Iterator<Item = &Header<'b>> {
        self.known.all(self.headers, id)
    }
}

/// A parsed response head, borrowing from the input buffer (`'b`) and the header array (`'h`).
///
/// The client's counterpart of [`RequestHead`], built by [`parse_response`](super::parse_response).
/// How long the body is follows from [`response_framing`](super::framing::response_framing),
/// which also needs the request's method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseHead<'b, 'h> {
    /// The protocol version of the status line.
    pub version: Version,
    /// The status code, 100..=599.
    pub status: u16,
    /// The reason-phrase as sent, without the SP before it; may be empty and may hold HTAB and
    /// obs-text (RFC 9112 §4: a client SHOULD ignore it).
    pub reason: &'b [u8],
    /// The header fields in order.
    pub headers: &'h [Header<'b>],
    /// Where the identified headers are in `headers`.
    pub known: KnownHeaders,
    /// Bytes of input taken by the head, including the final empty line.
    pub len: usize,
}

impl<'b> ResponseHead<'b, '_> {
    /// The first header of kind `id`.
    #[inline]
    pub fn known(&self, id: HeaderId) -> Option<&Header<'b>> {
        self.known.first(id).and_then(|i| self.headers.get(i))
    }

    /// Every header of kind `id`, in order.
    pub fn all(&self, id: HeaderId) -> impl Iterator<Item = &Header<'b>> {
        self.known.all(self.headers, id)
    }

    /// [`response_framing`](super::framing::response_framing) of this head, using the fields
    /// the parser identified instead of scanning them again.
    ///
    /// # Errors
    /// As [`response_framing`](super::framing::response_framing).
    #[inline]
    pub fn framing(
        &self,
        request_method: crate::Method,
    ) -> Result<super::framing::ResponseFraming, super::ParseError> {
        super::framing::response_framing_known(
            request_method,
            self.status,
            self.version,
            self.headers,
            &self.known,
        )
    }
}
