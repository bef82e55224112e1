//! The HTTP rules of a received header section (RFC 9113 §8.1-§8.3). A violation makes the
//! message malformed: RFC 9113 §8.1.1 "Malformed requests or responses that are detected MUST
//! be treated as a stream error (Section 5.4.2) of type PROTOCOL_ERROR." Each check returns the
//! rule it broke, for tests and diagnostics.

use super::section::{Info, NONE};
use crate::http1::field_syntax::{is_target, is_token};
use crate::http1::framing::content_length;
use crate::http2::hpack::{Field, FieldList, StaticName};

/// Which section is being checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Section {
    Request { connect_protocol: bool },
    Response,
    Trailers,
}

/// Checks a decoded list and says where its pseudo-headers are.
pub(crate) fn check(list: &FieldList, section: Section) -> Result<Info, &'static str> {
    // RFC 9113 §8.2.1: names lowercase and tokens, values without NUL/CR/LF or surrounding
    // whitespace (checked by the decoder as it stored each field).
    if list.malformed().is_some() {
        return Err("field syntax (§8.2.1)");
    }
    let mut info = Info::EMPTY;
    let mut regular = false;
    let mut host = None;
    for (i, f) in list.iter().enumerate() {
        if f.name.first() == Some(&b':') {
            // RFC 9113 §8.3: "All pseudo-header fields MUST appear in a field block before all
            // regular field lines."
            if regular {
                return Err("pseudo-header after a regular field (§8.3)");
            }
            pseudo(&mut info, i, f, section)?;
            info.pseudo += 1;
            continue;
        }
        regular = true;
        connection_specific(f, section)?;
        if f.known == Some(StaticName::CONTENT_LENGTH) && section != Section::Trailers {
            // RFC 9110 §8.6: one number, possibly repeated; shared with HTTP/1.1.
            let n =
                content_length(std::iter::once(f.value)).map_err(|_| "content-length (§8.1.1)")?;
            if info.content_length.is_some_and(|m| m != n) {
                return Err("conflicting content-length (§8.1.1)");
            }
            info.content_length = Some(n);
        }
        if f.known == Some(StaticName::HOST) {
            if host.is_some() {
                return Err("several host fields");
            }
            host = Some(f.value);
        }
    }
    match section {
        Section::Request { .. } => request(list, &info, host)?,
        Section::Response if info.status == 0 => return Err(":status missing (§8.3.2)"),
        _ => {}
    }
    Ok(info)
}

/// One pseudo-header: known for this section, not repeated (RFC 9113 §8.3: "Pseudo-header
/// fields defined for requests MUST NOT appear in responses; pseudo-header fields defined for
/// responses MUST NOT appear in requests", "Endpoints MUST NOT generate pseudo-header fields
/// other than those defined", "The same pseudo-header field name MUST NOT appear more than
/// once in a field block").
fn pseudo(info: &mut Info, i: usize, f: Field<'_>, section: Section) -> Result<(), &'static str> {
    // At most five distinct pseudo-headers pass, so `i` fits in u8.
    let i = u8::try_from(i).map_err(|_| "too many pseudo-headers")?;
    let slot = match (section, f.known) {
        // RFC 9113 §8.1: "Trailers MUST NOT include pseudo-header fields".
        (Section::Trailers, _) => return Err("pseudo-header in trailers (§8.1)"),
        (Section::Request { .. }, Some(StaticName::METHOD)) => &mut info.method,
        (Section::Request { .. }, Some(StaticName::SCHEME)) => &mut info.scheme,
        (Section::Request { .. }, Some(StaticName::AUTHORITY)) => &mut info.authority,
        (Section::Request { .. }, Some(StaticName::PATH)) => &mut info.path,
        // RFC 8441 §4: `:protocol` only where the server enabled extended CONNECT.
        (Section::Request { connect_protocol: true }, None) if f.name == b":protocol" => {
            &mut info.protocol
        }
        (Section::Response, Some(StaticName::STATUS)) => {
            if info.status != 0 {
                return Err("duplicate :status");
            }
            info.status = status(f.value)?;
            return Ok(());
        }
        _ => return Err("unknown or misplaced pseudo-header (§8.3)"),
    };
    if *slot != NONE {
        return Err("duplicate pseudo-header (§8.3)");
    }
    *slot = i;
    Ok(())
}

/// `:status`: three digits (RFC 9110 §15), and not 101, which HTTP/2 does not support (RFC
/// 9113 §8.6: "HTTP/2 removes support for the 101 (Switching Protocols) informational status
/// code").
fn status(v: &[u8]) -> Result<u16, &'static str> {
    let &[a, b, c] = v else { return Err(":status not three digits") };
    if ![a, b, c].iter().all(u8::is_ascii_digit) || a == b'0' {
        return Err(":status not three digits");
    }
    let n = u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0');
    if n == 101 {
        return Err(":status 101 (§8.6)");
    }
    Ok(n)
}

/// RFC 9113 §8.2.2: "An endpoint MUST NOT generate an HTTP/2 message containing
/// connection-specific header fields. ... Any message containing connection-specific header
/// fields MUST be treated as malformed". "The only exception to this is the TE header field,
/// which MAY be present in an HTTP/2 request; when it is, it MUST NOT contain any value other
/// than "trailers"."
fn connection_specific(f: Field<'_>, section: Section) -> Result<(), &'static str> {
    if f.known == Some(StaticName::TRANSFER_ENCODING) {
        return Err("transfer-encoding (§8.2.2)");
    }
    if f.known.is_some() {
        return Ok(());
    }
    match f.name {
        b"connection" | b"proxy-connection" | b"keep-alive" | b"upgrade" => {
            Err("connection-specific field (§8.2.2)")
        }
        b"te" if !matches!(section, Section::Request { .. }) => {
            Err("te outside a request (§8.2.2)")
        }
        b"te" if !f.value.eq_ignore_ascii_case(b"trailers") => {
            Err("te other than trailers (§8.2.2)")
        }
        _ => Ok(()),
    }
}

/// The request pseudo-header rules of RFC 9113 §8.3.1 and §8.5.
fn request(list: &FieldList, info: &Info, host: Option<&[u8]>) -> Result<(), &'static str> {
    // By index: each pseudo-header's place was noted as the fields were checked.
    let get = |i: u8| (i != NONE).then(|| list.get(usize::from(i)).map_or(&b""[..], |f| f.value));
    let Some(method) = get(info.method) else { return Err(":method missing (§8.3.1)") };
    // RFC 9110 §9.1: a method is a token.
    if !is_token(method) {
        return Err(":method not a token");
    }
    let connect = method == b"CONNECT";
    if info.protocol != NONE && !connect {
        return Err(":protocol without CONNECT (RFC 8441 §4)");
    }
    let authority = get(info.authority);
    if connect && info.protocol == NONE {
        // RFC 9113 §8.5: "The ":scheme" and ":path" pseudo-header fields MUST be omitted.
        // The ":authority" pseudo-header field contains the host and port to connect to".
        if info.scheme != NONE || info.path != NONE {
            return Err("CONNECT with :scheme or :path (§8.5)");
        }
        return match authority {
            Some(a) if !a.is_empty() => Ok(()),
            _ => Err("CONNECT without :authority (§8.5)"),
        };
    }
    // RFC 9113 §8.3.1: "All HTTP/2 requests MUST include exactly one valid value for the
    // ":method", ":scheme", and ":path" pseudo-header fields, unless they are CONNECT requests".
    let (Some(scheme), Some(path)) = (get(info.scheme), get(info.path)) else {
        return Err(":scheme or :path missing (§8.3.1)");
    };
    if !valid_scheme(scheme) {
        return Err(":scheme not a URI scheme");
    }
    let http = scheme.eq_ignore_ascii_case(b"http") || scheme.eq_ignore_ascii_case(b"https");
    // ":path ... MUST NOT be empty for "http" or "https" URIs; ... The exceptions to this rule
    // are: an OPTIONS request for an "http" or "https" URI that does not include a path
    // component; these MUST include a ":path" pseudo-header field with a value of '*'".
    if path.is_empty() {
        return Err("empty :path (§8.3.1)");
    }
    if http {
        let asterisk = path == b"*";
        if asterisk && method != b"OPTIONS" {
            return Err(":path * without OPTIONS (§8.3.1)");
        }
        if !asterisk && path[0] != b'/' {
            return Err(":path not absolute (§8.3.1)");
        }
        // ":authority ... MUST NOT include the deprecated userinfo subcomponent for "http" or
        // "https" schemed URIs."
        if authority.is_some_and(|a| a.contains(&b'@')) {
            return Err(":authority with userinfo (§8.3.1)");
        }
    }
    if !is_target(path) {
        return Err(":path byte outside RFC 3986");
    }
    // "A server SHOULD treat a request as malformed if it contains a Host header field that
    // identifies an entity that differs from the entity in the ":authority" pseudo-header field."
    if let (Some(a), Some(h)) = (authority, host) {
        if !a.eq_ignore_ascii_case(h) {
            return Err("host differs from :authority (§8.3.1)");
        }
    }
    Ok(())
}

/// RFC 3986 §3.1: `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
fn valid_scheme(s: &[u8]) -> bool {
    s.first().is_some_and(u8::is_ascii_alphabetic)
        && s.iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::{Section, check};
    use crate::http2::hpack::{Decoder, Encoder, FieldList};

    fn list(fields: &[(&str, &str)]) -> FieldList {
        let mut block = Vec::new();
        Encoder::new().encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())), &mut block);
        let mut out = FieldList::new(1 << 16);
        Decoder::new(4096).decode(&block, &mut out).unwrap();
        out
    }

    const GET: [(&str, &str); 4] =
        [(":method", "GET"), (":scheme", "https"), (":path", "/"), (":authority", "a.example")];

    fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        GET.iter().chain(extra).copied().collect()
    }

    #[test]
    fn requests() {
        let req = Section::Request { connect_protocol: false };
        let ext = Section::Request { connect_protocol: true };
        struct Case {
            fields: Vec<(&'static str, &'static str)>,
            section: Section,
            ok: bool,
        }
        let c = |fields: Vec<(&'static str, &'static str)>, ok| Case { fields, section: req, ok };
        let cases = [
            c(GET.to_vec(), true),
            c(with(&[("accept", "*/*"), ("te", "trailers")]), true),
            c(with(&[("te", "Trailers")]), true),
            c(with(&[("content-length", "0")]), true),
            c(with(&[("content-length", "5"), ("content-length", "5")]), true),
            c(with(&[("host", "A.example")]), true),
            c(vec![(":method", "OPTIONS"), (":scheme", "http"), (":path", "*")], true),
            c(vec![(":method", "GET"), (":scheme", "foo"), (":path", "bar")], true),
            c(vec![(":method", "CONNECT"), (":authority", "a.example:443")], true),
            // Missing, empty, duplicate, unknown, misplaced pseudo-headers.
            c(vec![(":scheme", "https"), (":path", "/")], false),
            c(vec![(":method", "GET"), (":path", "/")], false),
            c(vec![(":method", "GET"), (":scheme", "https")], false),
            c(vec![(":method", "GET"), (":scheme", "https"), (":path", "")], false),
            c(with(&[(":method", "GET")]), false),
            c(with(&[(":path", "/x")]), false),
            c(with(&[(":status", "200")]), false),
            c(with(&[(":foo", "x")]), false),
            c(with(&[(":protocol", "websocket")]), false),
            c(
                vec![(":method", "GET"), ("accept", "*/*"), (":scheme", "https"), (":path", "/")],
                false,
            ),
            // :path rules for http(s).
            c(vec![(":method", "GET"), (":scheme", "https"), (":path", "*")], false),
            c(vec![(":method", "GET"), (":scheme", "https"), (":path", "a/b")], false),
            c(vec![(":method", "GET"), (":scheme", "https"), (":path", "/a b")], false),
            c(vec![(":method", "GET"), (":scheme", "https"), (":path", "/a#b")], false),
            c(vec![(":method", "G T"), (":scheme", "https"), (":path", "/")], false),
            c(vec![(":method", "GET"), (":scheme", "1ttp"), (":path", "/")], false),
            c(
                vec![
                    (":method", "GET"),
                    (":scheme", "https"),
                    (":path", "/"),
                    (":authority", "u@a"),
                ],
                false,
            ),
            // CONNECT rules.
            c(vec![(":method", "CONNECT"), (":authority", "a:1"), (":path", "/")], false),
            c(vec![(":method", "CONNECT"), (":scheme", "https")], false),
            // Connection-specific fields, te, content-length, host.
            c(with(&[("connection", "keep-alive")]), false),
            c(with(&[("keep-alive", "5")]), false),
            c(with(&[("proxy-connection", "x")]), false),
            c(with(&[("upgrade", "h2c")]), false),
            c(with(&[("transfer-encoding", "chunked")]), false),
            c(with(&[("te", "gzip")]), false),
            c(with(&[("te", "trailers, gzip")]), false),
            c(with(&[("content-length", "x")]), false),
            c(with(&[("content-length", "+5")]), false),
            c(with(&[("content-length", "5"), ("content-length", "6")]), false),
            c(with(&[("host", "b.example")]), false),
            c(with(&[("host", "a.example"), ("host", "a.example")]), false),
            // §8.2.1 syntax, from the decoder.
            c(with(&[("X-Upper", "1")]), false),
            c(with(&[("x", " lead")]), false),
            // Extended CONNECT (RFC 8441).
            Case {
                fields: vec![
                    (":method", "CONNECT"),
                    (":protocol", "websocket"),
                    (":scheme", "https"),
                    (":path", "/c"),
                    (":authority", "a"),
                ],
                section: ext,
                ok: true,
            },
            Case { fields: with(&[(":protocol", "websocket")]), section: ext, ok: false },
            Case {
                fields: vec![
                    (":method", "CONNECT"),
                    (":protocol", "websocket"),
                    (":authority", "a"),
                ],
                section: ext,
                ok: false,
            },
        ];
        for case in cases {
            let got = check(&list(&case.fields), case.section);
            assert_eq!(got.is_ok(), case.ok, "{:?}: {got:?}", case.fields);
        }
    }

    #[test]
    fn responses_and_trailers() {
        type Case = (&'static [(&'static str, &'static str)], Section, Result<u16, ()>);
        let cases: [Case; 13] = [
            (&[(":status", "200")], Section::Response, Ok(200)),
            (&[(":status", "103"), ("link", "</a>")], Section::Response, Ok(103)),
            (&[(":status", "599")], Section::Response, Ok(599)),
            (&[(":status", "101")], Section::Response, Err(())),
            (&[(":status", "20")], Section::Response, Err(())),
            (&[(":status", "2000")], Section::Response, Err(())),
            (&[(":status", "099")], Section::Response, Err(())),
            (&[("server", "x")], Section::Response, Err(())),
            (&[(":status", "200"), (":status", "200")], Section::Response, Err(())),
            (&[(":status", "200"), (":path", "/")], Section::Response, Err(())),
            (&[(":status", "200"), ("te", "trailers")], Section::Response, Err(())),
            (&[("grpc-status", "0")], Section::Trailers, Ok(0)),
            (&[(":status", "200")], Section::Trailers, Err(())),
        ];
        for (fields, section, expect) in cases {
            let got = check(&list(fields), section).map(|i| i.status).map_err(|_| ());
            assert_eq!(got, expect, "{fields:?}");
        }
    }

    #[test]
    fn pseudo_headers_are_located() {
        let l = list(&with(&[("content-length", "12"), ("x", "y")]));
        let info = check(&l, Section::Request { connect_protocol: false }).unwrap();
        assert_eq!(
            (info.method, info.scheme, info.path, info.authority, info.pseudo),
            (0, 1, 2, 3, 4)
        );
        assert_eq!(info.content_length, Some(12));
    }
}
