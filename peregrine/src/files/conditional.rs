//! Validators (strong ETag, Last-Modified) and the evaluation of preconditions
//! (RFC 9110 §8.8, §13).

use std::fs::Metadata;
use std::time::{Duration, UNIX_EPOCH};

use http::HeaderValue;

use super::encoding::Coding;
use crate::http1::field_syntax::trim_ows;
use crate::text::Text;

/// The validators of one selected representation (the file, or its precompressed sibling).
///
/// Held as ready header values: a cached file answers without formatting anything.
#[derive(Clone, Debug)]
pub(crate) struct Validators {
    /// A strong entity-tag, quotes included (RFC 9110 §8.8.3).
    pub(crate) etag: HeaderValue,
    /// The modification time in whole seconds since the epoch; `None` before 1970.
    pub(crate) last_modified: Option<u64>,
    /// `last_modified` as an IMF-fixdate (RFC 9110 §8.8.2, §5.6.7).
    pub(crate) last_modified_value: Option<HeaderValue>,
}

impl Validators {
    /// Validators from file metadata.
    ///
    /// RFC 9110 §8.8.3: a strong validator changes whenever the representation data changes.
    /// Inode, size and the modification time in nanoseconds together change on every write
    /// or replacement we can observe; the content coding is appended so the gzip and brotli
    /// siblings never share a tag with the identity file (RFC 9110 §8.8.3.3: a tag is
    /// per representation, and a content coding makes a different representation).
    pub(crate) fn from_meta(meta: &Metadata, coding: Option<Coding>) -> Validators {
        let mtime = meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
        let nanos = mtime.map_or(0, |d| d.as_nanos());
        let mut etag = Text::<72>::new();
        let _ = std::fmt::Write::write_fmt(
            &mut etag,
            format_args!(
                "\"{:x}-{:x}-{:x}{}\"",
                inode(meta),
                meta.len(),
                nanos,
                coding.map_or("", Coding::tag_suffix)
            ),
        );
        let last_modified = mtime.map(|d| d.as_secs());
        Validators {
            // Hex digits, dashes and quotes: always a valid field value.
            etag: HeaderValue::from_bytes(etag.as_bytes())
                .unwrap_or(HeaderValue::from_static("\"\"")),
            last_modified,
            last_modified_value: last_modified
                .and_then(|secs| HeaderValue::from_str(format_http_date(secs).as_str()).ok()),
        }
    }
}

#[cfg(unix)]
fn inode(meta: &Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &Metadata) -> u64 {
    0
}

/// Formats seconds since the epoch as an IMF-fixdate (always 29 bytes).
pub(crate) fn format_http_date(secs: u64) -> crate::date::ImfFixdate {
    crate::date::format_imf_fixdate(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Parses an HTTP-date in any of the three forms a recipient must accept (RFC 9110 §5.6.7),
/// as whole seconds since the epoch.
fn parse_http_date(value: &[u8]) -> Option<u64> {
    let t = crate::date::parse_http_date(trim_ows(value))?;
    t.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs())
}

/// What the preconditions say about a GET or HEAD request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Precondition {
    /// No precondition failed: answer 200 (or 206).
    Proceed,
    /// `If-None-Match` or `If-Modified-Since` evaluated false: answer 304.
    NotModified,
    /// `If-Match` or `If-Unmodified-Since` evaluated false: answer 412.
    Failed,
}

/// The four precondition header values, as received.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Conditions<'a> {
    pub(crate) if_match: Option<&'a [u8]>,
    pub(crate) if_unmodified_since: Option<&'a [u8]>,
    pub(crate) if_none_match: Option<&'a [u8]>,
    pub(crate) if_modified_since: Option<&'a [u8]>,
}

/// Evaluates the preconditions of a GET or HEAD in the order of RFC 9110 §13.2.2.
pub(crate) fn evaluate(c: &Conditions<'_>, v: &Validators) -> Precondition {
    // §13.2.2 step 1: If-Match, strong comparison (§13.1.1); false → 412.
    if let Some(im) = c.if_match {
        if !list_matches(im, v.etag.as_bytes(), Comparison::Strong) {
            return Precondition::Failed;
        }
    } else if let (Some(ius), Some(lm)) = (c.if_unmodified_since, v.last_modified) {
        // Step 2: If-Unmodified-Since only without If-Match; an invalid date is ignored
        // (§13.1.4). False when the representation was modified after the date → 412.
        if parse_http_date(ius).is_some_and(|date| lm > date) {
            return Precondition::Failed;
        }
    }
    // Step 3: If-None-Match, weak comparison (§13.1.2); false → 304 for GET and HEAD.
    if let Some(inm) = c.if_none_match {
        if list_matches(inm, v.etag.as_bytes(), Comparison::Weak) {
            return Precondition::NotModified;
        }
    } else if let (Some(ims), Some(lm)) = (c.if_modified_since, v.last_modified) {
        // Step 4: If-Modified-Since only without If-None-Match, GET/HEAD only, invalid date
        // ignored (§13.1.3). False when not modified since the date → 304.
        if parse_http_date(ims).is_some_and(|date| lm <= date) {
            return Precondition::NotModified;
        }
    }
    Precondition::Proceed
}

/// Whether an `If-Range` value lets a Range request be answered with a part (RFC 9110 §13.1.5).
///
/// An entity-tag must match strongly (a weak tag never does); a date must equal the
/// Last-Modified exactly. Anything else, including a malformed value, means "send it all".
pub(crate) fn if_range_holds(value: &[u8], v: &Validators) -> bool {
    let value = trim_ows(value);
    // §13.1.5: an entity-tag is told from a date by its first characters (DQUOTE or "W/").
    if value.first() == Some(&b'"') || value.starts_with(b"W/") {
        return match parse_tag(value) {
            Some((false, tag, [])) => tag == v.etag.as_bytes(),
            _ => false,
        };
    }
    match (parse_http_date(value), v.last_modified) {
        (Some(date), Some(lm)) => date == lm,
        _ => false,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Comparison {
    /// RFC 9110 §8.8.3.2: both tags strong and their opaque-tags equal.
    Strong,
    /// Opaque-tags equal, weakness ignored.
    Weak,
}

/// Whether `current` (a strong tag, quotes included) matches a `"*" / #entity-tag` field.
///
/// A malformed list matches nothing: for If-Match that fails safe (412), for If-None-Match it
/// just sends the representation.
fn list_matches(field: &[u8], current: &[u8], cmp: Comparison) -> bool {
    let field = trim_ows(field);
    // "*" matches any current representation (§13.1.1, §13.1.2); we always have one here.
    if field == b"*" {
        return true;
    }
    let mut rest = field;
    let mut matched = false;
    loop {
        rest = skip_list_separators(rest);
        if rest.is_empty() {
            return matched;
        }
        let Some((weak, tag, after)) = parse_tag(rest) else {
            return false;
        };
        if tag == current && (cmp == Comparison::Weak || !weak) {
            matched = true;
        }
        let after = trim_ows(after);
        if !(after.is_empty() || after[0] == b',') {
            return false;
        }
        rest = after;
    }
}

/// Parses one `entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE` (RFC 9110 §8.8.3) at the start of
/// `s`; returns (weak, the tag with its quotes, the rest).
fn parse_tag(s: &[u8]) -> Option<(bool, &[u8], &[u8])> {
    let (weak, s) = match s.strip_prefix(b"W/") {
        Some(r) => (true, r),
        None => (false, s),
    };
    if s.first() != Some(&b'"') {
        return None;
    }
    // etagc = %x21 / %x23-7E / obs-text
    let len = s[1..].iter().position(|&b| b == b'"')?;
    let body = &s[1..1 + len];
    if body.iter().any(|&b| b < 0x21 || b == 0x7f) {
        return None;
    }
    Some((weak, &s[..len + 2], &s[len + 2..]))
}

fn skip_list_separators(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b',', rest @ ..] = s {
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAG: &str = "\"abc\"";
    // 1994-11-06T08:49:37Z, the RFC's own example date.
    const LM: u64 = 784_111_777;
    const LM_TEXT: &[u8] = b"Sun, 06 Nov 1994 08:49:37 GMT";

    fn validators() -> Validators {
        Validators {
            etag: HeaderValue::from_static(TAG),
            last_modified: Some(LM),
            last_modified_value: None,
        }
    }

    #[test]
    fn date_round_trip_rfc9110_5_6_7() {
        assert_eq!(format_http_date(LM).as_str().as_bytes(), LM_TEXT);
        assert_eq!(parse_http_date(LM_TEXT), Some(LM));
        // The obsolete forms must be accepted too.
        assert_eq!(parse_http_date(b"Sunday, 06-Nov-94 08:49:37 GMT"), Some(LM));
        assert_eq!(parse_http_date(b"Sun Nov  6 08:49:37 1994"), Some(LM));
        assert_eq!(parse_http_date(b"yesterday"), None);
        assert_eq!(parse_http_date(b"\xff"), None);
    }

    #[test]
    fn preconditions_rfc9110_13_2_2() {
        struct Case {
            name: &'static str,
            c: Conditions<'static>,
            expect: Precondition,
        }
        use Precondition::*;
        let none = Conditions::default();
        let cases = [
            Case { name: "no conditions", c: none, expect: Proceed },
            // §13.1.2 If-None-Match, weak comparison, lists, "*".
            Case {
                name: "INM match",
                c: Conditions { if_none_match: Some(b"\"abc\""), ..none },
                expect: NotModified,
            },
            Case {
                name: "INM weak match",
                c: Conditions { if_none_match: Some(b"W/\"abc\""), ..none },
                expect: NotModified,
            },
            Case {
                name: "INM list",
                c: Conditions { if_none_match: Some(b"\"x\" , W/\"abc\""), ..none },
                expect: NotModified,
            },
            Case {
                name: "INM star",
                c: Conditions { if_none_match: Some(b"*"), ..none },
                expect: NotModified,
            },
            Case {
                name: "INM other",
                c: Conditions { if_none_match: Some(b"\"x\", \"y\""), ..none },
                expect: Proceed,
            },
            Case {
                name: "INM unquoted",
                c: Conditions { if_none_match: Some(b"abc"), ..none },
                expect: Proceed,
            },
            Case {
                name: "INM garbage after",
                c: Conditions { if_none_match: Some(b"\"abc\" x"), ..none },
                expect: Proceed,
            },
            // §13.1.3 If-Modified-Since.
            Case {
                name: "IMS equal",
                c: Conditions { if_modified_since: Some(LM_TEXT), ..none },
                expect: NotModified,
            },
            Case {
                name: "IMS later",
                c: Conditions { if_modified_since: Some(b"Mon, 07 Nov 1994 08:49:37 GMT"), ..none },
                expect: NotModified,
            },
            Case {
                name: "IMS earlier",
                c: Conditions { if_modified_since: Some(b"Sun, 06 Nov 1994 08:49:36 GMT"), ..none },
                expect: Proceed,
            },
            Case {
                name: "IMS invalid ignored",
                c: Conditions { if_modified_since: Some(b"nope"), ..none },
                expect: Proceed,
            },
            // §13.2.2 step 3 before 4: If-None-Match wins over If-Modified-Since.
            Case {
                name: "INM mismatch beats IMS",
                c: Conditions {
                    if_none_match: Some(b"\"x\""),
                    if_modified_since: Some(LM_TEXT),
                    ..none
                },
                expect: Proceed,
            },
            // §13.1.1 If-Match, strong comparison.
            Case {
                name: "IM match",
                c: Conditions { if_match: Some(b"\"abc\""), ..none },
                expect: Proceed,
            },
            Case {
                name: "IM star",
                c: Conditions { if_match: Some(b"*"), ..none },
                expect: Proceed,
            },
            Case {
                name: "IM weak never matches",
                c: Conditions { if_match: Some(b"W/\"abc\""), ..none },
                expect: Failed,
            },
            Case {
                name: "IM other",
                c: Conditions { if_match: Some(b"\"x\""), ..none },
                expect: Failed,
            },
            Case {
                name: "IM list",
                c: Conditions { if_match: Some(b"\"x\",\"abc\""), ..none },
                expect: Proceed,
            },
            Case {
                name: "IM malformed",
                c: Conditions { if_match: Some(b"\"abc"), ..none },
                expect: Failed,
            },
            // §13.1.4 If-Unmodified-Since.
            Case {
                name: "IUS earlier fails",
                c: Conditions {
                    if_unmodified_since: Some(b"Sat, 05 Nov 1994 08:49:37 GMT"),
                    ..none
                },
                expect: Failed,
            },
            Case {
                name: "IUS equal",
                c: Conditions { if_unmodified_since: Some(LM_TEXT), ..none },
                expect: Proceed,
            },
            Case {
                name: "IUS invalid ignored",
                c: Conditions { if_unmodified_since: Some(b"x"), ..none },
                expect: Proceed,
            },
            // §13.2.2 step 2: If-Unmodified-Since is ignored when If-Match is present.
            Case {
                name: "IM beats IUS",
                c: Conditions {
                    if_match: Some(b"\"abc\""),
                    if_unmodified_since: Some(b"Sat, 05 Nov 1994 08:49:37 GMT"),
                    ..none
                },
                expect: Proceed,
            },
            // Step 1 before step 3: a failed If-Match is 412 even when INM would say 304.
            Case {
                name: "IM fail before INM",
                c: Conditions { if_match: Some(b"\"x\""), if_none_match: Some(b"*"), ..none },
                expect: Failed,
            },
        ];
        let v = validators();
        for c in cases {
            assert_eq!(evaluate(&c.c, &v), c.expect, "{}", c.name);
        }
    }

    #[test]
    fn if_range_rfc9110_13_1_5() {
        struct Case {
            input: &'static [u8],
            expect: bool,
        }
        let cases = [
            Case { input: b"\"abc\"", expect: true },
            Case { input: b" \"abc\" ", expect: true },
            Case { input: b"W/\"abc\"", expect: false },
            Case { input: b"\"abd\"", expect: false },
            Case { input: b"\"abc\", \"x\"", expect: false },
            Case { input: LM_TEXT, expect: true },
            Case { input: b"Sun, 06 Nov 1994 08:49:38 GMT", expect: false },
            Case { input: b"garbage", expect: false },
            Case { input: b"", expect: false },
        ];
        let v = validators();
        for c in cases {
            assert_eq!(
                if_range_holds(c.input, &v),
                c.expect,
                "{:?}",
                String::from_utf8_lossy(c.input)
            );
        }
        let no_date = Validators { last_modified: None, ..v };
        assert!(!if_range_holds(LM_TEXT, &no_date));
    }
}
