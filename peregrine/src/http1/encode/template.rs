//! A prepared response head: the last head encoded, kept as bytes and written again, with only
//! its Date refreshed, while responses repeat it (same status, fields, framing and connection
//! signal). A server answering one route with the same few static fields then copies one
//! block per response instead of encoding a status line, each field, Date, Content-Length and
//! the connection signal (measured on the plaintext example: ~300 instructions per response).
//!
//! Sans-I/O like the encoder: the caller passes the Date.

use super::super::Version;
use super::super::framing::BodyLength;
use crate::date::ImfFixdate;

/// Heads longer than this are not kept (the template's memory stays bounded).
const MAX_TEMPLATE: usize = 1024;

/// `Date: ` before the 29-byte IMF-fixdate (RFC 9110 §6.6.1).
const DATE_PREFIX: &[u8] = b"Date: ";

/// What decides a head's bytes besides its fields and the Date: the status, how persistence
/// is signalled (the request's version, `close`) and the framing field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeadKey {
    /// The status code.
    pub(crate) status: u16,
    /// The version of the request answered.
    pub(crate) version: Version,
    /// `Connection: close` is sent.
    pub(crate) close: bool,
    /// The framing the head announces.
    pub(crate) length: BodyLength,
}

/// The last encoded response head and what it was encoded from.
#[derive(Debug, Default)]
pub(crate) struct HeadTemplate {
    /// The head's bytes, from the status line to the empty line; empty when none is kept.
    bytes: Vec<u8>,
    key: Option<HeadKey>,
    /// Where the caller's fields start in `bytes` (after the status line).
    fields_at: usize,
    /// Where they end: the `Date: ` line starts there.
    fields_end: usize,
}

impl HeadTemplate {
    /// Appends the kept head to `out` with `date` in its Date line, when it was encoded from
    /// `key` and exactly these fields (names and values compared byte for byte, in order).
    /// False, and nothing appended, otherwise.
    #[inline]
    pub(crate) fn write<'f>(
        &self,
        key: HeadKey,
        fields: impl Iterator<Item = (&'f str, &'f [u8])>,
        date: &ImfFixdate,
        out: &mut Vec<u8>,
    ) -> bool {
        if self.key != Some(key) {
            return false;
        }
        let Some(kept) = self.bytes.get(..self.fields_end) else {
            return false;
        };
        let mut pos = self.fields_at;
        for (name, value) in fields {
            // `name: value` CRLF, as `write_field` wrote it. A name is a token and a value
            // holds no CR or LF, so equal bytes at equal positions mean equal fields.
            let (n, v) = (name.len(), value.len());
            let Some(line) = kept.get(pos..pos + n + v + 4) else {
                return false;
            };
            if !same(&line[..n], name.as_bytes())
                || line[n..n + 2] != *b": "
                || !same(&line[n + 2..n + 2 + v], value)
                || line[n + 2 + v..] != *b"\r\n"
            {
                return false;
            }
            pos += line.len();
        }
        if pos != self.fields_end {
            return false;
        }
        let start = out.len();
        out.extend_from_slice(&self.bytes);
        let at = start + self.fields_end + DATE_PREFIX.len();
        if let Some(slot) = out.get_mut(at..at + 29) {
            slot.copy_from_slice(date.as_bytes());
        }
        true
    }

    /// Keeps `head`, just encoded from `key` and `fields` by [`super::encode_head_typed`] with
    /// a Date: the next head with the same key and fields is written from it. A head with its
    /// own Date field among `fields`, or too long, is not kept (the old one is dropped).
    pub(crate) fn keep<'f>(
        &mut self,
        key: HeadKey,
        fields: impl Iterator<Item = (&'f str, &'f [u8])>,
        head: &[u8],
    ) {
        self.key = None;
        self.bytes.clear();
        let Some(fields_at) = head.iter().position(|&b| b == b'\n').map(|i| i + 1) else {
            return;
        };
        let fields_end = fields.fold(fields_at, |pos, (n, v)| pos + n.len() + v.len() + 4);
        let date_end = fields_end + DATE_PREFIX.len() + 29;
        if head.len() > MAX_TEMPLATE
            || head.get(fields_end..fields_end + DATE_PREFIX.len()) != Some(DATE_PREFIX)
            || head.get(date_end..date_end + 2) != Some(b"\r\n")
        {
            return;
        }
        self.bytes.extend_from_slice(head);
        self.key = Some(key);
        self.fields_at = fields_at;
        self.fields_end = fields_end;
    }
}

/// Byte equality of two short slices without a call to `bcmp`: names and values of response
/// fields are mostly under 16 bytes, compared as two overlapping 8-byte words.
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_ne_bytes(w)
    };
    match n {
        0 => true,
        1..8 => a.iter().zip(b).all(|(x, y)| x == y),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::encode::{ResponseHeadOut, encode_head_typed};

    fn date(s: &str) -> ImfFixdate {
        let secs: u64 = s.parse().unwrap();
        crate::date::format_imf_fixdate(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
        )
    }

    const KEY: HeadKey = HeadKey {
        status: 200,
        version: Version::Http11,
        close: false,
        length: BodyLength::Length(13),
    };

    /// Encodes like the server does; returns the bytes.
    fn encode(key: HeadKey, fields: &[(&str, &[u8])], d: &ImfFixdate) -> Vec<u8> {
        let head = ResponseHeadOut {
            request_version: key.version,
            close: key.close,
            date: Some(d),
            ..ResponseHeadOut::new(key.status, &[])
        };
        let mut out = Vec::new();
        encode_head_typed(&head, fields.iter().copied(), key.length, &mut out).unwrap();
        out
    }

    struct Case {
        name: &'static str,
        key: HeadKey,
        fields: &'static [(&'static str, &'static [u8])],
        hit: bool,
    }

    const KEPT: &[(&str, &[u8])] = &[("content-type", b"text/plain"), ("server", b"peregrine")];

    #[test]
    fn writes_the_same_bytes_as_the_encoder_or_nothing() {
        let cases = [
            Case { name: "same", key: KEY, fields: KEPT, hit: true },
            Case { name: "status", key: HeadKey { status: 404, ..KEY }, fields: KEPT, hit: false },
            Case { name: "close", key: HeadKey { close: true, ..KEY }, fields: KEPT, hit: false },
            Case {
                name: "http/1.0",
                key: HeadKey { version: Version::Http10, ..KEY },
                fields: KEPT,
                hit: false,
            },
            Case {
                name: "length",
                key: HeadKey { length: BodyLength::Length(14), ..KEY },
                fields: KEPT,
                hit: false,
            },
            Case {
                name: "chunked",
                key: HeadKey { length: BodyLength::Chunked, ..KEY },
                fields: KEPT,
                hit: false,
            },
            Case { name: "one field fewer", key: KEY, fields: &KEPT[..1], hit: false },
            Case {
                name: "one field more",
                key: KEY,
                fields: &[("content-type", b"text/plain"), ("server", b"peregrine"), ("x", b"y")],
                hit: false,
            },
            Case {
                name: "value differs in its last byte",
                key: KEY,
                fields: &[("content-type", b"text/plaio"), ("server", b"peregrine")],
                hit: false,
            },
            Case {
                name: "value shorter, next name longer (same total)",
                key: KEY,
                fields: &[("content-type", b"text/plai"), ("xserver", b"peregrine")],
                hit: false,
            },
            Case {
                name: "boundary moved between name and value",
                key: KEY,
                fields: &[("content-type", b"text/plain"), ("serve", b"rperegrine")],
                hit: false,
            },
            Case {
                name: "order",
                key: KEY,
                fields: &[("server", b"peregrine"), ("content-type", b"text/plain")],
                hit: false,
            },
            Case { name: "no fields", key: KEY, fields: &[], hit: false },
        ];
        let first = date("784111777");
        let later = date("784111999");
        for case in &cases {
            let mut t = HeadTemplate::default();
            t.keep(KEY, KEPT.iter().copied(), &encode(KEY, KEPT, &first));
            let mut out = b"before".to_vec();
            let hit = t.write(case.key, case.fields.iter().copied(), &later, &mut out);
            assert_eq!(hit, case.hit, "{}", case.name);
            let mut expect = b"before".to_vec();
            if hit {
                expect.extend_from_slice(&encode(case.key, case.fields, &later));
            }
            assert_eq!(out, expect, "{}", case.name);
        }
    }

    #[test]
    fn keeps_no_head_with_its_own_date_or_too_long() {
        let d = date("784111777");
        let own: &[(&str, &[u8])] = &[("date", b"Sun, 06 Nov 1994 08:49:37 GMT")];
        let long_value = vec![b'a'; MAX_TEMPLATE];
        let long: &[(&str, &[u8])] = &[("x", &long_value)];
        for fields in [own, long] {
            let mut t = HeadTemplate::default();
            t.keep(KEY, KEPT.iter().copied(), &encode(KEY, KEPT, &d));
            t.keep(KEY, fields.iter().copied(), &encode(KEY, fields, &d));
            let mut out = Vec::new();
            assert!(!t.write(KEY, fields.iter().copied(), &d, &mut out));
            assert!(!t.write(KEY, KEPT.iter().copied(), &d, &mut out), "the old head is dropped");
            assert!(out.is_empty());
        }
    }

    #[test]
    fn same_matches_slice_equality() {
        let a = b"0123456789abcdefghijklmnopqrstuvwxyz";
        for n in 0..a.len() {
            for i in 0..n {
                let mut b = a[..n].to_vec();
                assert!(same(&a[..n], &b));
                b[i] ^= 0x20;
                assert!(!same(&a[..n], &b), "{n} {i}");
            }
            assert!(!same(&a[..n], &a[..n.saturating_sub(1)]) || n == 0);
        }
    }
}
