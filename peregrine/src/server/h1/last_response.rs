//! The worker's last response head: the last head it encoded, kept as bytes and written again,
//! with only its Date refreshed, while responses repeat it (same status, fields, framing and
//! connection signal). A server answering one route with the same few static fields then
//! copies one block per response instead of encoding a status line, each field, Date,
//! Content-Length and the connection signal.
//!
//! Fields are compared as the handler built them: names as `HeaderName`s (a standard name is a
//! one-byte tag, compared without spelling it), values byte for byte against the kept head. A
//! head whose fields carry their own Date (a proxy passes its upstream's on) has no Date of the
//! server's to refresh: it is written again while that Date is the same, a second at least.

use http::HeaderName;

use crate::Version;
use crate::date::ImfFixdate;
use crate::http1::framing::BodyLength;
use crate::response::HeaderList;

/// Heads longer than this are not kept (the kept head's memory stays bounded).
const MAX_KEPT: usize = 1024;

/// `date: ` before the 29-byte IMF-fixdate (RFC 9110 §6.6.1), as the encoder writes it.
const DATE_PREFIX: &[u8] = b"date: ";

/// What decides a head's bytes besides its fields and the Date: the status, how persistence
/// is signalled (the request's version, `close`) and the framing field: the wire state's plan.
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

impl HeadKey {
    /// The key of the head `plan` calls for.
    #[inline]
    pub(crate) fn of(plan: &crate::http1::conn::ResponsePlan) -> HeadKey {
        HeadKey {
            status: plan.status,
            version: plan.version,
            close: plan.close,
            length: plan.length,
        }
    }
}

/// The last encoded response head and what it was encoded from.
#[derive(Debug, Default)]
pub(crate) struct LastResponse {
    /// The head's bytes, from the status line to the empty line; empty when none is kept.
    bytes: Vec<u8>,
    key: Option<HeadKey>,
    /// The fields written, in order: each name, and where its value lies in `bytes`.
    fields: Vec<(HeaderName, usize, usize)>,
    /// Where the server's `date: ` line starts in `bytes`, after the fields; `None` when the
    /// fields carry their own Date (compared with the rest).
    date_line: Option<usize>,
}

/// Whether the encoder writes this field: the framing fields are the server's own.
#[inline(always)]
pub(crate) fn written(name: &HeaderName) -> bool {
    *name != http::header::CONTENT_LENGTH && *name != http::header::TRANSFER_ENCODING
}

impl LastResponse {
    /// Appends the kept head to `out` with `date` in its Date line, when it was encoded from
    /// `key` and exactly these fields, in order. False, and nothing appended, otherwise.
    #[inline]
    pub(crate) fn write(
        &self,
        key: HeadKey,
        headers: &HeaderList,
        date: &ImfFixdate,
        out: &mut Vec<u8>,
    ) -> bool {
        if self.key != Some(key) {
            return false;
        }
        let mut kept = self.fields.iter();
        // A framing field in `headers` is never among the kept names (the encoder leaves it
        // out), so it reads as a difference: the encoder then handles it.
        for (name, value) in headers.iter() {
            let Some((kept_name, from, to)) = kept.next() else {
                return false;
            };
            if name != kept_name || !same(self.bytes.get(*from..*to), value.as_bytes()) {
                return false;
            }
        }
        if kept.next().is_some() {
            return false;
        }
        let start = out.len();
        out.extend_from_slice(&self.bytes);
        if let Some(line) = self.date_line {
            let at = start + line + DATE_PREFIX.len();
            if let Some(value) = out.get_mut(at..at + 29) {
                value.copy_from_slice(date.as_bytes());
            }
        }
        true
    }

    /// Keeps `head`, just encoded from `key` and `headers` (less the framing fields) with a
    /// Date (the server's, or one of `headers`): the next head with the same key and fields is
    /// written from it. A head too long is not kept (the old one is dropped either way).
    ///
    /// Cloning a name allocates nothing for standard and static names; a custom name built
    /// at run time may allocate once here, when a head is kept, never when one is written.
    pub(crate) fn keep(&mut self, key: HeadKey, headers: &HeaderList, head: &[u8]) {
        self.key = None;
        self.bytes.clear();
        self.fields.clear();
        if head.len() > MAX_KEPT {
            return;
        }
        let Some(mut pos) = head.iter().position(|&b| b == b'\n').map(|i| i + 1) else {
            return;
        };
        let mut own_date = false;
        for (name, value) in headers.iter().filter(|(n, _)| written(n)) {
            let from = pos + name.as_str().len() + 2;
            let to = from + value.len();
            own_date |= *name == http::header::DATE;
            self.fields.push((name.clone(), from, to));
            pos = to + 2;
        }
        // The encoder writes its own Date line after the fields unless they carry one.
        let date_end = pos + DATE_PREFIX.len() + 29;
        let server_date = head.get(pos..pos + DATE_PREFIX.len()) == Some(DATE_PREFIX)
            && head.get(date_end..date_end + 2) == Some(b"\r\n");
        if own_date == server_date {
            self.fields.clear();
            return;
        }
        self.bytes.extend_from_slice(head);
        self.key = Some(key);
        self.date_line = server_date.then_some(pos);
    }
}

/// Whether `kept` is `b`, for short slices without a call to `bcmp`: values of response fields
/// are mostly under 16 bytes, compared as two overlapping 8-byte words.
#[inline(always)]
fn same(kept: Option<&[u8]>, b: &[u8]) -> bool {
    let Some(a) = kept else {
        return false;
    };
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
    use http::HeaderValue;
    use http::header::{CONTENT_LENGTH, CONTENT_TYPE, DATE, SERVER};

    fn date(secs: u64) -> ImfFixdate {
        crate::date::at_secs(secs)
    }

    const KEY: HeadKey = HeadKey {
        status: 200,
        version: Version::Http11,
        close: false,
        length: BodyLength::Length(13),
    };

    fn list(fields: &[(HeaderName, &'static str)]) -> HeaderList {
        let mut l = HeaderList::new();
        for (n, v) in fields {
            l.append(n.clone(), HeaderValue::from_static(v));
        }
        l
    }

    /// Encodes as the server does; returns the bytes.
    fn encode(key: HeadKey, headers: &HeaderList, d: &ImfFixdate) -> Vec<u8> {
        let head = ResponseHeadOut {
            request_version: key.version,
            close: key.close,
            date: Some(d),
            ..ResponseHeadOut::new(key.status, &[])
        };
        let fields =
            headers.iter().filter(|(n, _)| written(n)).map(|(n, v)| (n.as_str(), v.as_bytes()));
        let mut out = Vec::new();
        encode_head_typed(&head, fields, key.length, &mut out).unwrap();
        out
    }

    struct Case {
        name: &'static str,
        key: HeadKey,
        fields: Vec<(HeaderName, &'static str)>,
        hit: bool,
    }

    fn kept() -> Vec<(HeaderName, &'static str)> {
        vec![(CONTENT_TYPE, "text/plain"), (SERVER, "peregrine")]
    }

    #[test]
    fn writes_the_same_bytes_as_the_encoder_or_nothing() {
        let x = HeaderName::from_static("x-custom");
        let cases = [
            Case { name: "same", key: KEY, fields: kept(), hit: true },
            Case {
                name: "status",
                key: HeadKey { status: 404, ..KEY },
                fields: kept(),
                hit: false,
            },
            Case { name: "close", key: HeadKey { close: true, ..KEY }, fields: kept(), hit: false },
            Case {
                name: "http/1.0",
                key: HeadKey { version: Version::Http10, ..KEY },
                fields: kept(),
                hit: false,
            },
            Case {
                name: "length",
                key: HeadKey { length: BodyLength::Length(14), ..KEY },
                fields: kept(),
                hit: false,
            },
            Case {
                name: "chunked",
                key: HeadKey { length: BodyLength::Chunked, ..KEY },
                fields: kept(),
                hit: false,
            },
            Case { name: "one field fewer", key: KEY, fields: kept()[..1].to_vec(), hit: false },
            Case {
                name: "one field more",
                key: KEY,
                fields: [kept(), vec![(x.clone(), "y")]].concat(),
                hit: false,
            },
            Case {
                name: "a framing field more (the encoder drops it)",
                key: KEY,
                fields: [kept(), vec![(CONTENT_LENGTH, "13")]].concat(),
                hit: false,
            },
            Case {
                name: "value differs in its last byte",
                key: KEY,
                fields: vec![(CONTENT_TYPE, "text/plaio"), (SERVER, "peregrine")],
                hit: false,
            },
            Case {
                name: "value shorter",
                key: KEY,
                fields: vec![(CONTENT_TYPE, "text/plai"), (SERVER, "peregrine")],
                hit: false,
            },
            Case {
                name: "name differs",
                key: KEY,
                fields: vec![(CONTENT_TYPE, "text/plain"), (x.clone(), "peregrine")],
                hit: false,
            },
            Case {
                name: "order",
                key: KEY,
                fields: vec![(SERVER, "peregrine"), (CONTENT_TYPE, "text/plain")],
                hit: false,
            },
            Case { name: "no fields", key: KEY, fields: vec![], hit: false },
        ];
        let first = date(784_111_777);
        let later = date(784_111_999);
        for case in &cases {
            let mut t = LastResponse::default();
            let kept = list(&kept());
            t.keep(KEY, &kept, &encode(KEY, &kept, &first));
            let headers = list(&case.fields);
            let mut out = b"before".to_vec();
            let hit = t.write(case.key, &headers, &later, &mut out);
            assert_eq!(hit, case.hit, "{}", case.name);
            let mut expect = b"before".to_vec();
            if hit {
                expect.extend_from_slice(&encode(case.key, &headers, &later));
            }
            assert_eq!(out, expect, "{}", case.name);
        }
    }

    #[test]
    fn a_head_kept_from_fields_with_a_framing_one_is_written_for_the_same_fields() {
        let d = date(784_111_777);
        let with_cl = list(&[(CONTENT_TYPE, "text/plain"), (CONTENT_LENGTH, "99")]);
        let mut t = LastResponse::default();
        t.keep(KEY, &with_cl, &encode(KEY, &with_cl, &d));
        let mut out = Vec::new();
        // Kept without the framing field: the same list then misses (safe), the list without
        // it hits with the same bytes.
        assert!(!t.write(KEY, &with_cl, &d, &mut out));
        let without = list(&[(CONTENT_TYPE, "text/plain")]);
        assert!(t.write(KEY, &without, &d, &mut out));
        assert_eq!(out, encode(KEY, &without, &d));
    }

    #[test]
    fn keeps_no_head_too_long() {
        let d = date(784_111_777);
        let long_value: &'static str = "a".repeat(MAX_KEPT).leak();
        let long = list(&[(HeaderName::from_static("x"), long_value)]);
        let kept = list(&kept());
        let mut t = LastResponse::default();
        t.keep(KEY, &kept, &encode(KEY, &kept, &d));
        t.keep(KEY, &long, &encode(KEY, &long, &d));
        let mut out = Vec::new();
        assert!(!t.write(KEY, &long, &d, &mut out));
        assert!(!t.write(KEY, &kept, &d, &mut out), "the old head is dropped");
        assert!(out.is_empty());
    }

    /// A head with its own Date (a proxied response's) is written again, unchanged, for the
    /// same fields with the same Date, whatever the server's clock says; another Date misses.
    #[test]
    fn a_head_with_its_own_date_is_written_while_that_date_holds() {
        let theirs = "Sun, 06 Nov 1994 08:49:37 GMT";
        let own = list(&[(CONTENT_TYPE, "text/plain"), (DATE, theirs), (SERVER, "peregrine")]);
        let mut t = LastResponse::default();
        t.keep(KEY, &own, &encode(KEY, &own, &date(1)));
        let mut out = Vec::new();
        assert!(t.write(KEY, &own, &date(999_999), &mut out));
        assert_eq!(out, encode(KEY, &own, &date(999_999)));
        assert_eq!(out.windows(theirs.len()).filter(|w| *w == theirs.as_bytes()).count(), 1);
        let next = "Sun, 06 Nov 1994 08:49:38 GMT";
        let moved = list(&[(CONTENT_TYPE, "text/plain"), (DATE, next), (SERVER, "peregrine")]);
        let mut out = Vec::new();
        assert!(!t.write(KEY, &moved, &date(1), &mut out));
        assert!(out.is_empty());
    }

    #[test]
    fn same_matches_slice_equality() {
        let a = b"0123456789abcdefghijklmnopqrstuvwxyz";
        for n in 0..a.len() {
            for i in 0..n {
                let mut b = a[..n].to_vec();
                assert!(same(Some(&a[..n]), &b));
                b[i] ^= 0x20;
                assert!(!same(Some(&a[..n]), &b), "{n} {i}");
            }
            if n > 0 {
                assert!(!same(Some(&a[..n]), &a[..n - 1]));
            }
        }
        assert!(!same(None, b""));
    }
}
