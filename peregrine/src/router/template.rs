//! Parsing route templates into segments (the grammar is specified in the module docs).

use std::borrow::Cow;

use super::error::{InsertError, Malformed};
use crate::http1::uri_syntax::{is_sub_delim, is_unreserved};

/// The most segments a template may have. Bounds the depth of the tree, and with it the depth
/// of the matcher's backtracking recursion.
pub const MAX_SEGMENTS: usize = 256;

/// One `/`-separated piece of a parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Segment<'a> {
    /// Literal text (braces unescaped); may be empty (`/a//b`, `/a/`, `/`).
    Static(Cow<'a, str>),
    /// `{name}`: one non-empty segment.
    Param(&'a str),
    /// `{*name}`: the non-empty rest of the path, slashes included.
    CatchAll(&'a str),
}

/// Parses `template` into its segments, enforcing every grammar rule.
pub(crate) fn parse(template: &str) -> Result<Vec<Segment<'_>>, InsertError> {
    let err = |at: usize, reason| Err(InsertError::malformed_at(template, at, reason));
    let Some(rest) = template.strip_prefix('/') else {
        return err(0, Malformed::MissingLeadingSlash);
    };
    let mut segments = Vec::new();
    let mut start = 1;
    for piece in rest.split('/') {
        if segments.len() == MAX_SEGMENTS {
            return err(start, Malformed::TooManySegments);
        }
        let segment = parse_segment(template, piece, start)?;
        if matches!(segments.last(), Some(Segment::CatchAll(_))) {
            // The previous segment was a catch-all but another one follows.
            return err(start - 1, Malformed::CatchAllNotLast);
        }
        if let Segment::Param(name) | Segment::CatchAll(name) = segment {
            let taken = segments
                .iter()
                .any(|s| matches!(s, Segment::Param(n) | Segment::CatchAll(n) if *n == name));
            if taken {
                return err(start + 1, Malformed::DuplicateName);
            }
        }
        segments.push(segment);
        start += piece.len() + 1;
    }
    Ok(segments)
}

fn parse_segment<'a>(
    template: &str,
    piece: &'a str,
    start: usize,
) -> Result<Segment<'a>, InsertError> {
    let err = |at: usize, reason| Err(InsertError::malformed_at(template, start + at, reason));
    let bytes = piece.as_bytes();
    if bytes.first() == Some(&b'{') && bytes.get(1) != Some(&b'{') {
        let Some(close) = piece.find('}') else {
            return err(0, Malformed::UnclosedBrace);
        };
        if close + 1 != piece.len() {
            return err(close + 1, Malformed::PartialSegment);
        }
        let inner = &piece[1..close];
        let (catch_all, name) = match inner.strip_prefix('*') {
            Some(name) => (true, name),
            None => (false, inner),
        };
        if name.is_empty() {
            return err(1, Malformed::EmptyName);
        }
        if let Some(i) = name.bytes().position(|b| !is_name_byte(b)) {
            return err(1 + usize::from(catch_all) + i, Malformed::InvalidName);
        }
        return Ok(if catch_all { Segment::CatchAll(name) } else { Segment::Param(name) });
    }
    // A static segment: `{{` and `}}` stand for literal braces; everything else must be a
    // byte a conforming client can put in a path, or the route could never match.
    let mut out: Option<String> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'{' | b'}' => {
                if bytes.get(i + 1) != Some(&b) {
                    return if b == b'}' {
                        err(i, Malformed::UnmatchedClosingBrace)
                    } else if piece[i..].contains('}') {
                        err(i, Malformed::PartialSegment)
                    } else {
                        err(i, Malformed::UnclosedBrace)
                    };
                }
                let buf = out.get_or_insert_with(|| piece[..i].to_owned());
                buf.push(char::from(b));
                i += 2;
                continue;
            }
            // RFC 3986 §2.1: pct-encoded = "%" HEXDIG HEXDIG.
            b'%' => {
                let hex = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_hexdigit);
                if !(hex(i + 1) && hex(i + 2)) {
                    return err(i, Malformed::InvalidByte);
                }
            }
            _ if is_pchar(b) => {}
            _ => return err(i, Malformed::InvalidByte),
        }
        if let Some(buf) = out.as_mut() {
            buf.push(char::from(b));
        }
        i += 1;
    }
    Ok(Segment::Static(match out {
        Some(s) => Cow::Owned(s),
        None => Cow::Borrowed(piece),
    }))
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// RFC 3986 §3.3: `pchar = unreserved / pct-encoded / sub-delims / ":" / "@"` (the `%` of
/// pct-encoded is checked by the caller).
fn is_pchar(b: u8) -> bool {
    is_unreserved(b) || is_sub_delim(b) || matches!(b, b':' | b'@')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(s: &str) -> Segment<'_> {
        Segment::Static(Cow::Borrowed(s))
    }

    #[test]
    fn grammar_accepts() {
        struct Case {
            input: &'static str,
            expect: Vec<Segment<'static>>,
        }
        let cases = [
            Case { input: "/", expect: vec![st("")] },
            Case { input: "/a/b", expect: vec![st("a"), st("b")] },
            Case { input: "/a/", expect: vec![st("a"), st("")] },
            Case { input: "/a//b", expect: vec![st("a"), st(""), st("b")] },
            Case { input: "/u/{id}", expect: vec![st("u"), Segment::Param("id")] },
            Case { input: "/f/{*rest}", expect: vec![st("f"), Segment::CatchAll("rest")] },
            Case { input: "/{{x}}", expect: vec![st("{x}")] },
            Case { input: "/a{{b", expect: vec![st("a{b")] },
            Case { input: "/%2F:@!$&'()*+,;=~._-", expect: vec![st("%2F:@!$&'()*+,;=~._-")] },
            Case { input: "/{a.b-c_9}", expect: vec![Segment::Param("a.b-c_9")] },
        ];
        for c in cases {
            assert_eq!(parse(c.input).unwrap(), c.expect, "{}", c.input);
        }
    }

    #[test]
    fn grammar_rejects() {
        struct Case {
            input: &'static str,
            at: usize,
            reason: Malformed,
        }
        let cases = [
            Case { input: "", at: 0, reason: Malformed::MissingLeadingSlash },
            Case { input: "a/b", at: 0, reason: Malformed::MissingLeadingSlash },
            Case { input: "/{id", at: 1, reason: Malformed::UnclosedBrace },
            Case { input: "/{a/b}", at: 1, reason: Malformed::UnclosedBrace },
            Case { input: "/a{", at: 2, reason: Malformed::UnclosedBrace },
            Case { input: "/a}", at: 2, reason: Malformed::UnmatchedClosingBrace },
            Case { input: "/{{x}", at: 4, reason: Malformed::UnmatchedClosingBrace },
            Case { input: "/{}", at: 2, reason: Malformed::EmptyName },
            Case { input: "/{*}", at: 2, reason: Malformed::EmptyName },
            Case { input: "/{a b}", at: 3, reason: Malformed::InvalidName },
            Case { input: "/{*a*}", at: 4, reason: Malformed::InvalidName },
            Case { input: "/{id}.json", at: 5, reason: Malformed::PartialSegment },
            Case { input: "/v{n}", at: 2, reason: Malformed::PartialSegment },
            Case { input: "/{*a}/b", at: 5, reason: Malformed::CatchAllNotLast },
            Case { input: "/{*a}/", at: 5, reason: Malformed::CatchAllNotLast },
            Case { input: "/{a}/{a}", at: 6, reason: Malformed::DuplicateName },
            Case { input: "/{a}/{*a}", at: 6, reason: Malformed::DuplicateName },
            // RFC 3986 §3.3: no space, `?`, `#`, `"`, controls or non-ASCII in a path.
            Case { input: "/a b", at: 2, reason: Malformed::InvalidByte },
            Case { input: "/a?b", at: 2, reason: Malformed::InvalidByte },
            Case { input: "/a#", at: 2, reason: Malformed::InvalidByte },
            Case { input: "/caf\u{e9}", at: 4, reason: Malformed::InvalidByte },
            // RFC 3986 §2.1: `%` needs two hex digits.
            Case { input: "/%zz", at: 1, reason: Malformed::InvalidByte },
            Case { input: "/%4", at: 1, reason: Malformed::InvalidByte },
        ];
        for c in cases {
            let e = parse(c.input).unwrap_err();
            assert_eq!(
                e,
                InsertError::Malformed { template: c.input.into(), at: c.at, reason: c.reason },
                "{}",
                c.input
            );
        }
        let deep = "/a".repeat(MAX_SEGMENTS + 1);
        assert_eq!(parse(&deep).unwrap_err().malformed(), Some(Malformed::TooManySegments));
        assert!(parse(&"/a".repeat(MAX_SEGMENTS)).is_ok());
    }
}
