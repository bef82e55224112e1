//! One borrowed view of a received head's header fields, the same for a server's `Request`
//! and a client's `ResponseHead`, over HTTP/1.1 and HTTP/2.
//!
//! The view reads the bytes where the parser left them: nothing is copied or allocated per
//! request. Its API follows [`http::HeaderMap`]'s names (`get`, `get_all`, `contains_key`,
//! `keys`, `iter`, `len`), takes names as `&str` or [`http::HeaderName`] (anything
//! `AsRef<str>`, compared case-insensitively, RFC 9110 §5.1) and gives values as bytes, what
//! [`http::HeaderValue::as_bytes`] gives. [`Headers::to_header_map`] converts at the edge when
//! an owned `HeaderMap` is wanted.

use std::ops::Range;

use http::{HeaderMap, HeaderName, HeaderValue};

use crate::http2::FieldSection;

/// The header fields of a received head, in the order received.
///
/// Names are as sent (HTTP/2's are lowercase); values are without surrounding whitespace.
///
/// | `http` | peregrine |
/// |---|---|
/// | `HeaderMap::get(name) -> Option<&HeaderValue>` | [`Headers::get`]`(name) -> Option<&[u8]>` |
/// | `HeaderValue::to_str()` | [`Headers::get_str`] |
/// | `HeaderMap::get_all(name)` | [`Headers::get_all`] |
/// | `HeaderMap::contains_key(name)` | [`Headers::contains_key`] |
/// | `HeaderMap::iter() -> (&HeaderName, &HeaderValue)` | [`Headers::iter`] `-> (&str, &[u8])` |
/// | `HeaderMap::keys()` | [`Headers::keys`] (one per field line, repeats kept) |
/// | `HeaderMap::len()` | [`Headers::len`] (field lines) |
/// | an owned `HeaderMap` | [`Headers::to_header_map`] (allocates) |
///
/// # Examples
/// ```
/// use http::header::CONTENT_TYPE;
/// # fn f(req: &peregrine::Request) {
/// let h = req.headers();
/// if h.get(CONTENT_TYPE) == Some(&b"application/json"[..]) {
///     // ...
/// }
/// let accept = h.get_str("accept").unwrap_or("*/*");
/// for (name, value) in h {
///     println!("{name}: {}", String::from_utf8_lossy(value));
/// }
/// # let _ = accept; }
/// ```
#[derive(Clone, Copy)]
pub struct Headers<'a> {
    source: Source<'a>,
}

/// Where a head's fields are.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// A request head's field lines as received (`name: value` CRLF each), and how many.
    Lines { lines: &'a [u8], count: u16 },
    /// An HTTP/1.1 response head: spans of the client's read buffer.
    Spans { buf: &'a [u8], spans: &'a [FieldSpan] },
    /// An HTTP/2 head: the connection's decoded section.
    Section(&'a FieldSection),
}

/// One field of an HTTP/1.1 head: offsets into the read buffer.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FieldSpan {
    pub(crate) name: (u32, u32),
    pub(crate) value: (u32, u32),
}

impl FieldSpan {
    fn range(part: (u32, u32)) -> Range<usize> {
        part.0 as usize..part.0 as usize + part.1 as usize
    }
}

impl<'a> Headers<'a> {
    pub(crate) fn new(source: Source<'a>) -> Headers<'a> {
        Headers { source }
    }

    /// The number of field lines (a name sent twice counts twice).
    pub fn len(&self) -> usize {
        match self.source {
            Source::Lines { count, .. } => usize::from(count),
            Source::Spans { spans, .. } => spans.len(),
            Source::Section(section) => section.len(),
        }
    }

    /// Whether there are no fields.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fields in order as (name as sent, value).
    pub fn iter(&self) -> HeadersIter<'a> {
        HeadersIter {
            inner: match self.source {
                Source::Lines { lines, .. } => IterInner::Lines(FieldLines { rest: lines }),
                Source::Spans { buf, spans } => IterInner::Spans { buf, spans: spans.iter() },
                Source::Section(section) => IterInner::Section { section, next: 0 },
            },
        }
    }

    /// The value of the first field named `name` (case-insensitive), a `&str` or a
    /// [`HeaderName`].
    pub fn get(&self, name: impl AsRef<str>) -> Option<&'a [u8]> {
        let name = name.as_ref();
        self.iter().find(|(n, _)| same_name(n, name)).map(|(_, v)| v)
    }

    /// The value of the first field named `name` if it is valid UTF-8 (as
    /// [`HeaderValue::to_str`], which also refuses obs-text).
    pub fn get_str(&self, name: impl AsRef<str>) -> Option<&'a str> {
        self.get(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// Every value of `name` in order (RFC 9110 §5.3: a list may be split over several lines).
    pub fn get_all<N: AsRef<str>>(&self, name: N) -> impl Iterator<Item = &'a [u8]> + use<'a, N> {
        self.iter().filter(move |(n, _)| same_name(n, name.as_ref())).map(|(_, v)| v)
    }

    /// Whether a field named `name` is present.
    pub fn contains_key(&self, name: impl AsRef<str>) -> bool {
        self.get(name).is_some()
    }

    /// The names in order, one per field line.
    pub fn keys(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        self.iter().map(|(n, _)| n)
    }

    /// The fields as an owned [`HeaderMap`] (lowercase names, repeats kept in order).
    /// Allocates; for code written against `http`'s types.
    ///
    /// # Errors
    /// A field `http` cannot hold; the parsers already refuse what RFC 9110 §5 forbids, so
    /// only a head built by hand can fail here.
    pub fn to_header_map(&self) -> Result<HeaderMap, http::Error> {
        let mut map = HeaderMap::with_capacity(self.len());
        for (name, value) in self.iter() {
            map.append(HeaderName::from_bytes(name.as_bytes())?, HeaderValue::from_bytes(value)?);
        }
        Ok(map)
    }
}

impl std::fmt::Debug for Headers<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|(n, v)| (n, String::from_utf8_lossy(v)))).finish()
    }
}

impl<'a> IntoIterator for Headers<'a> {
    type Item = (&'a str, &'a [u8]);
    type IntoIter = HeadersIter<'a>;

    fn into_iter(self) -> HeadersIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Headers<'a> {
    type Item = (&'a str, &'a [u8]);
    type IntoIter = HeadersIter<'a>;

    fn into_iter(self) -> HeadersIter<'a> {
        self.iter()
    }
}

/// RFC 9110 §5.1: field names are case-insensitive.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.eq_ignore_ascii_case(b)
}

/// The fields of a [`Headers`] view in order.
pub struct HeadersIter<'a> {
    inner: IterInner<'a>,
}

enum IterInner<'a> {
    Lines(FieldLines<'a>),
    Spans { buf: &'a [u8], spans: std::slice::Iter<'a, FieldSpan> },
    Section { section: &'a FieldSection, next: usize },
}

impl<'a> Iterator for HeadersIter<'a> {
    type Item = (&'a str, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (name, value) = match &mut self.inner {
            IterInner::Lines(lines) => lines.next()?,
            IterInner::Spans { buf, spans } => {
                let s = spans.next()?;
                let name = buf.get(FieldSpan::range(s.name)).unwrap_or_default();
                (name, buf.get(FieldSpan::range(s.value)).unwrap_or_default())
            }
            IterInner::Section { section, next } => {
                let f = section.field(*next)?;
                *next += 1;
                (f.name, f.value)
            }
        };
        // Names are tokens (the parsers' check, or `HeaderName`'s): ASCII.
        Some((crate::ascii::as_str(name).unwrap_or_default(), value))
    }
}

/// The field lines of a header section, in order: `(name, value)` with the value's surrounding
/// whitespace left out (RFC 9112 §5.1). The section holds lines the parser validated (a token,
/// a colon, a value without CR, LF or NUL, CRLF) or that this crate wrote the same way.
#[derive(Clone, Debug)]
pub(crate) struct FieldLines<'a> {
    pub(crate) rest: &'a [u8],
}

impl<'a> Iterator for FieldLines<'a> {
    type Item = (&'a [u8], &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let end = memchr::memchr(b'\n', self.rest).unwrap_or(self.rest.len());
        let line = &self.rest[..end];
        self.rest = self.rest.get(end + 1..).unwrap_or_default();
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let colon = memchr::memchr(b':', line).unwrap_or(line.len());
        let value = line.get(colon + 1..).unwrap_or_default();
        Some((&line[..colon], crate::http1::field_syntax::trim_ows(value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: &[u8] = b"Host: a\r\nAccept: x\r\nX-List: 1\r\nx-list:  2 \r\n";

    fn lines() -> Headers<'static> {
        Headers::new(Source::Lines { lines: LINES, count: 4 })
    }

    #[test]
    fn lookups_follow_header_map() {
        let h = lines();
        let cases: &[(&str, Option<&[u8]>)] = &[
            ("host", Some(b"a")),
            ("HOST", Some(b"a")),
            ("accept", Some(b"x")),
            ("x-list", Some(b"1")),
            ("x-lis", None),
            ("x-listt", None),
            ("", None),
        ];
        for (name, want) in cases {
            assert_eq!(h.get(name), *want, "{name}");
            assert_eq!(h.contains_key(name), want.is_some(), "{name}");
        }
        assert_eq!(h.get(http::header::ACCEPT), Some(&b"x"[..]));
        assert_eq!(h.get_all("X-LIST").collect::<Vec<_>>(), [b"1", b"2"]);
        assert_eq!(h.keys().collect::<Vec<_>>(), ["Host", "Accept", "X-List", "x-list"]);
        assert_eq!(h.len(), 4);
        assert_eq!(h.get_str("host"), Some("a"));
    }

    #[test]
    fn spans_read_the_buffer() {
        let buf = b"HTTP/1.1 200 OK\r\nServer: p\r\n";
        let spans = [FieldSpan { name: (17, 6), value: (25, 1) }];
        let h = Headers::new(Source::Spans { buf, spans: &spans });
        assert_eq!(h.iter().collect::<Vec<_>>(), [("Server", &b"p"[..])]);
        assert_eq!(h.get("server"), Some(&b"p"[..]));
    }

    #[test]
    fn converts_to_a_header_map() {
        let map = lines().to_header_map().unwrap();
        assert_eq!(map.len(), 4);
        assert_eq!(map.get_all("x-list").iter().collect::<Vec<_>>(), ["1", "2"]);
        let bad = Headers::new(Source::Lines { lines: b"a b: c\r\n", count: 1 });
        assert!(bad.to_header_map().is_err());
    }
}
