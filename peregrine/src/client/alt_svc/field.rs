//! The `Alt-Svc` response field (RFC 7838 §3) read by hand, without allocating: the client
//! needs one thing from it, the first alternative for one protocol, or whether the origin
//! cleared its alternatives.
//!
//! ```text
//! Alt-Svc       = clear / 1#alt-value
//! clear         = %s"clear"
//! alt-value     = alternative *( OWS ";" OWS parameter )
//! alternative   = protocol-id "=" alt-authority
//! protocol-id   = token                 ; percent-encoded ALPN protocol name
//! alt-authority = quoted-string         ; [ uri-host ] ":" port
//! parameter     = token "=" ( token / quoted-string )
//! ```
//!
//! Strict: a value that breaks this grammar anywhere is malformed as a whole, and the caller
//! ignores the field (the response itself is unaffected). Unknown protocol ids and unknown
//! parameters are skipped. Two restrictions go beyond the grammar, both on the authority,
//! which the client dials: its host is an IPv6 literal (in brackets), an IPv4 address or a
//! registered name of unreserved and sub-delims characters (RFC 3986 §3.2.2), with no
//! percent-encoding and so no quoted-pair (no valid host needs either); and its port is
//! 1 to 65535.

use crate::http1::field_syntax::{is_ows, is_tchar};

/// How long an alternative stays fresh when the field gives no `ma` (RFC 7838 §3.1: 24 hours).
pub(crate) const DEFAULT_MAX_AGE: u64 = 86_400;

/// The largest `ma` kept: delta-seconds past it mean this much (RFC 9111 §1.2.2, 2^31).
const MAX_DELTA_SECONDS: u64 = 1 << 31;

/// An `Alt-Svc` value that breaks RFC 7838 §3's grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Malformed;

/// One alternative service, borrowed from the field value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Alternative<'a> {
    /// The ALPN protocol id as written (RFC 7838 §3: percent-encoded where needed).
    pub(crate) protocol: &'a [u8],
    /// The host to connect to, brackets removed from an IPv6 literal; empty: the origin's.
    pub(crate) host: &'a str,
    pub(crate) port: u16,
    /// Seconds the alternative stays fresh (`ma`, RFC 7838 §3.1).
    pub(crate) max_age: u64,
    /// `persist=1`: usable across network changes (RFC 7838 §3.1).
    #[cfg_attr(not(test), allow(dead_code, reason = "the cache is not kept across changes"))]
    pub(crate) persist: bool,
}

/// What the field says for one protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Choice<'a> {
    /// `clear`: every alternative of the origin is invalidated.
    Clear,
    /// The first alternative for the protocol (the list is in the server's order of
    /// preference, RFC 7838 §3), or none: either way the field replaces what was cached.
    Use(Option<Alternative<'a>>),
}

/// One element of the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Element<'a> {
    Clear,
    Alternative(Alternative<'a>),
}

/// What the field's lines (one value when the field came once) say for `protocol`.
///
/// # Errors
/// [`Malformed`] when any element of any line breaks the grammar; then nothing in the field
/// counts.
pub(crate) fn choose<'a, I>(lines: I, protocol: &[u8]) -> Result<Choice<'a>, Malformed>
where
    I: IntoIterator<Item = &'a [u8]>,
{
    let mut first = None;
    let mut clear = false;
    for line in lines {
        for element in Elements::new(line) {
            match element? {
                // RFC 7838 §3: "clear" invalidates all alternatives, "including those
                // specified in the same response, in case of an invalid reply containing both".
                Element::Clear => clear = true,
                Element::Alternative(a) if first.is_none() && a.protocol == protocol => {
                    first = Some(a);
                }
                Element::Alternative(_) => {}
            }
        }
    }
    Ok(if clear { Choice::Clear } else { Choice::Use(first) })
}

/// The elements of one field line, in order.
pub(crate) struct Elements<'a> {
    rest: &'a [u8],
    /// An element was read: the next must follow a comma.
    need_comma: bool,
    /// Some element was read (`1#alt-value`: a list of none is malformed).
    any: bool,
    failed: bool,
}

impl<'a> Elements<'a> {
    pub(crate) fn new(line: &'a [u8]) -> Elements<'a> {
        Elements { rest: line, need_comma: false, any: false, failed: false }
    }

    fn fail(&mut self) -> Option<Result<Element<'a>, Malformed>> {
        self.failed = true;
        Some(Err(Malformed))
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<Element<'a>, Malformed>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        // RFC 9110 §5.6.1: a recipient accepts empty list elements (", ,").
        loop {
            self.rest = skip_ows(self.rest);
            match self.rest.first() {
                None if self.any => return None,
                None => return self.fail(),
                Some(b',') => {
                    self.rest = &self.rest[1..];
                    self.need_comma = false;
                }
                Some(_) if self.need_comma => return self.fail(),
                Some(_) => break,
            }
        }
        match element(self.rest) {
            Ok((e, rest)) => {
                self.rest = rest;
                self.need_comma = true;
                self.any = true;
                Some(Ok(e))
            }
            Err(Malformed) => self.fail(),
        }
    }
}

fn skip_ows(s: &[u8]) -> &[u8] {
    let n = s.iter().position(|&b| !is_ows(b)).unwrap_or(s.len());
    &s[n..]
}

/// A `token` at the start of `s` (possibly empty) and what follows it.
fn token(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().position(|&b| !is_tchar(b)).unwrap_or(s.len());
    s.split_at(n)
}

/// A `quoted-string` at the start of `s` (RFC 9110 §5.6.4): its content with any quoted-pair
/// still escaped, and what follows the closing quote.
fn quoted(s: &[u8]) -> Result<(&[u8], &[u8]), Malformed> {
    let Some((b'"', body)) = s.split_first() else { return Err(Malformed) };
    let mut i = 0;
    while let Some(&b) = body.get(i) {
        match b {
            b'"' => return Ok((&body[..i], &body[i + 1..])),
            // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
            b'\\' => match body.get(i + 1) {
                Some(&c) if c == b'\t' || c >= b' ' && c != 0x7f => i += 2,
                _ => return Err(Malformed),
            },
            // qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
            b'\t' | b' '..=0x7e | 0x80..=0xff => i += 1,
            _ => return Err(Malformed),
        }
    }
    Err(Malformed)
}

/// One element at the start of `s` (not empty, no leading OWS), and the rest of the line.
fn element(s: &[u8]) -> Result<(Element<'_>, &[u8]), Malformed> {
    let (name, rest) = token(s);
    let Some((b'=', rest)) = rest.split_first() else {
        // RFC 7838 §3: `clear` is case-sensitive and stands alone.
        return match name {
            b"clear" => Ok((Element::Clear, rest)),
            _ => Err(Malformed),
        };
    };
    if !is_protocol_id(name) {
        return Err(Malformed);
    }
    let (authority, mut rest) = quoted(rest)?;
    let (host, port) = alt_authority(authority)?;
    let mut alt =
        Alternative { protocol: name, host, port, max_age: DEFAULT_MAX_AGE, persist: false };
    let mut have_ma = false;
    // *( OWS ";" OWS parameter )
    loop {
        let after = skip_ows(rest);
        let Some((b';', after)) = after.split_first() else { break };
        let after = skip_ows(after);
        let (name, after) = token(after);
        let Some((b'=', after)) = after.split_first() else { return Err(Malformed) };
        if name.is_empty() {
            return Err(Malformed);
        }
        let (value, after) = match after.first() {
            Some(b'"') => quoted(after)?,
            _ => match token(after) {
                ([], _) => return Err(Malformed),
                pair => pair,
            },
        };
        rest = after;
        // RFC 9110 §5.6.6: parameter names are case-insensitive; RFC 7838 §3: unknown
        // parameters are ignored.
        if name.eq_ignore_ascii_case(b"ma") && !have_ma {
            alt.max_age = delta_seconds(value)?;
            have_ma = true;
        } else if name.eq_ignore_ascii_case(b"persist") {
            // RFC 7838 §3.1: "persist" values other than "1" are ignored.
            alt.persist |= value == b"1";
        }
    }
    Ok((Element::Alternative(alt), rest))
}

/// RFC 7838 §3: a token whose `%` starts a percent-encoded octet in uppercase hex.
fn is_protocol_id(id: &[u8]) -> bool {
    let hex = |b: Option<&u8>| b.is_some_and(|b| matches!(b, b'0'..=b'9' | b'A'..=b'F'));
    !id.is_empty()
        && id
            .iter()
            .enumerate()
            .all(|(i, &b)| b != b'%' || hex(id.get(i + 1)) && hex(id.get(i + 2)))
}

/// `delta-seconds = 1*DIGIT` (RFC 9111 §1.2.2), saturating at 2^31.
fn delta_seconds(v: &[u8]) -> Result<u64, Malformed> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return Err(Malformed);
    }
    let n = v.iter().fold(0u64, |n, &d| (n * 10 + u64::from(d - b'0')).min(MAX_DELTA_SECONDS));
    Ok(n)
}

/// `[ uri-host ] ":" port`, the host within the restrictions of the module docs.
fn alt_authority(a: &[u8]) -> Result<(&str, u16), Malformed> {
    let colon = match a.first() {
        Some(b'[') => {
            let close = a.iter().position(|&b| b == b']').ok_or(Malformed)?;
            let inner = &a[1..close];
            // IPv6address (RFC 3986 §3.2.2): hex digits, colons, and dots of an IPv4 tail.
            if !inner.iter().all(|&b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
                || !inner.contains(&b':')
            {
                return Err(Malformed);
            }
            close + 1
        }
        _ => a.iter().rposition(|&b| b == b':').ok_or(Malformed)?,
    };
    let (host, port) = a.split_at(colon);
    let Some((b':', port)) = port.split_first() else { return Err(Malformed) };
    let host = match host.strip_prefix(b"[") {
        Some(inner) => &inner[..inner.len() - 1],
        None if host.iter().all(|&b| is_reg_name_byte(b)) => host,
        None => return Err(Malformed),
    };
    if port.is_empty() || port.len() > 5 || !port.iter().all(u8::is_ascii_digit) {
        return Err(Malformed);
    }
    let port = port.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
    let port = u16::try_from(port).ok().filter(|&p| p != 0).ok_or(Malformed)?;
    let host = std::str::from_utf8(host).map_err(|_| Malformed)?;
    Ok((host, port))
}

/// `unreserved / sub-delims` (RFC 3986 §2.2, §2.3).
fn is_reg_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An element as the table writes it: `Some((protocol, host, port, ma, persist))`, or
    /// `None` for `clear`.
    type Row<'a> = Option<(&'a str, &'a str, u16, u64, bool)>;

    struct Case {
        value: &'static str,
        expect: Result<&'static [Row<'static>], Malformed>,
    }

    fn elements(value: &str) -> Result<Vec<Row<'_>>, Malformed> {
        Elements::new(value.as_bytes())
            .map(|e| {
                e.map(|e| match e {
                    Element::Clear => None,
                    Element::Alternative(a) => {
                        let protocol = std::str::from_utf8(a.protocol).expect("a token");
                        Some((protocol, a.host, a.port, a.max_age, a.persist))
                    }
                })
            })
            .collect()
    }

    const DAY: u64 = DEFAULT_MAX_AGE;

    #[test]
    fn field_values_parse_per_rfc7838_section_3() {
        let cases = [
            // RFC 7838 §3's own examples.
            Case { value: r#"h2=":8000""#, expect: Ok(&[Some(("h2", "", 8000, DAY, false))]) },
            Case {
                value: r#"h2="new.example.org:80""#,
                expect: Ok(&[Some(("h2", "new.example.org", 80, DAY, false))]),
            },
            Case {
                value: r#"h2=":443"; ma=3600; persist=1"#,
                expect: Ok(&[Some(("h2", "", 443, 3600, true))]),
            },
            Case {
                value: r#"h3=":443"; ma=86400, h3-29=":443"; ma=60"#,
                expect: Ok(&[
                    Some(("h3", "", 443, DAY, false)),
                    Some(("h3-29", "", 443, 60, false)),
                ]),
            },
            Case { value: "clear", expect: Ok(&[None]) },
            Case { value: "  clear  ", expect: Ok(&[None]) },
            // Parameters: quoted values, any case of name, unknown ones skipped, first `ma`.
            Case {
                value: r#"h3=":1";MA="7";foo=bar;x="a;b,c";ma=9"#,
                expect: Ok(&[Some(("h3", "", 1, 7, false))]),
            },
            Case { value: r#"h3=":1"; persist=0"#, expect: Ok(&[Some(("h3", "", 1, DAY, false))]) },
            Case {
                value: r#"h3=":1"; ma=99999999999999999999"#,
                expect: Ok(&[Some(("h3", "", 1, 1 << 31, false))]),
            },
            Case { value: r#"h3=":1"; ma=0"#, expect: Ok(&[Some(("h3", "", 1, 0, false))]) },
            // Hosts: IPv6 literal, IPv4, a name with sub-delims; an unknown protocol id kept
            // for the caller to skip; percent-encoding in uppercase.
            Case {
                value: r#"h3="[::1]:8443", h3="127.0.0.1:9", q%3A="a-b.c~d:1""#,
                expect: Ok(&[
                    Some(("h3", "::1", 8443, DAY, false)),
                    Some(("h3", "127.0.0.1", 9, DAY, false)),
                    Some(("q%3A", "a-b.c~d", 1, DAY, false)),
                ]),
            },
            // Empty list elements are accepted (RFC 9110 §5.6.1).
            Case {
                value: r#" , h3=":1" ,, h2=":2",  "#,
                expect: Ok(&[Some(("h3", "", 1, DAY, false)), Some(("h2", "", 2, DAY, false))]),
            },
            // Malformed.
            Case { value: "", expect: Err(Malformed) },
            Case { value: " , ", expect: Err(Malformed) },
            Case { value: "Clear", expect: Err(Malformed) },
            Case { value: "clear;", expect: Err(Malformed) },
            Case { value: r#"h3=:443"#, expect: Err(Malformed) },
            Case { value: r#"h3 = ":443""#, expect: Err(Malformed) },
            Case { value: r#"h3=":443"#, expect: Err(Malformed) },
            Case { value: r#"h3="443""#, expect: Err(Malformed) },
            Case { value: r#"h3=":""#, expect: Err(Malformed) },
            Case { value: r#"h3=":0""#, expect: Err(Malformed) },
            Case { value: r#"h3=":65536""#, expect: Err(Malformed) },
            Case { value: r#"h3=":+1""#, expect: Err(Malformed) },
            Case { value: r#"h3="a b:1""#, expect: Err(Malformed) },
            Case { value: r#"h3="a\.b:1""#, expect: Err(Malformed) },
            Case { value: r#"h3="a%41:1""#, expect: Err(Malformed) },
            Case { value: r#"h3="[::1:1""#, expect: Err(Malformed) },
            Case { value: r#"h3="[x]:1""#, expect: Err(Malformed) },
            Case { value: r#"h3="[::1]1""#, expect: Err(Malformed) },
            Case { value: r#"h%3=":1""#, expect: Err(Malformed) },
            Case { value: r#"h%3a=":1""#, expect: Err(Malformed) },
            Case { value: r#"=":1""#, expect: Err(Malformed) },
            Case { value: r#"h3=":1";"#, expect: Err(Malformed) },
            Case { value: r#"h3=":1"; ma"#, expect: Err(Malformed) },
            Case { value: r#"h3=":1"; ma="#, expect: Err(Malformed) },
            Case { value: r#"h3=":1"; =1"#, expect: Err(Malformed) },
            Case { value: r#"h3=":1"; ma=-1"#, expect: Err(Malformed) },
            Case { value: r#"h3=":1"; ma="1h""#, expect: Err(Malformed) },
            Case { value: r#"h3=":1"; x="unterminated"#, expect: Err(Malformed) },
            Case { value: r#"h3=":1" h2=":2""#, expect: Err(Malformed) },
            Case { value: "h3=\":1\"; x=\"a\u{7f}\"", expect: Err(Malformed) },
        ];
        for case in cases {
            let got = elements(case.value);
            assert_eq!(got.as_deref().map_err(|e| *e), case.expect, "{:?}", case.value);
        }
    }

    #[test]
    fn the_first_alternative_for_the_protocol_is_chosen() {
        struct Choose {
            lines: &'static [&'static str],
            expect: Result<Option<(&'static str, u16)>, Malformed>,
        }
        let cases = [
            Choose { lines: &[r#"h3=":443""#], expect: Ok(Some(("", 443))) },
            Choose { lines: &[r#"h3-29=":1", h3="b:2", h3="c:3""#], expect: Ok(Some(("b", 2))) },
            // Across field lines, as one list (RFC 9110 §5.3).
            Choose { lines: &[r#"h2=":1""#, r#"h3=":2""#], expect: Ok(Some(("", 2))) },
            // No `h3`: the field still replaces what was cached.
            Choose { lines: &[r#"h3-29=":1", h2=":2""#], expect: Ok(None) },
            // Any malformed line spoils the field.
            Choose { lines: &[r#"h3=":2""#, "h3=:3"], expect: Err(Malformed) },
        ];
        for case in cases {
            let lines = case.lines.iter().map(|l| l.as_bytes());
            let got = choose(lines, b"h3").map(|c| match c {
                Choice::Use(a) => a.map(|a| (a.host, a.port)),
                Choice::Clear => panic!("clear"),
            });
            assert_eq!(got, case.expect, "{:?}", case.lines);
        }
        // RFC 7838 §3: "clear" wins even beside alternatives.
        for lines in [&["clear"][..], &[r#"h3=":1""#, "clear"], &[r#"h3=":1", clear"#]] {
            let got = choose(lines.iter().map(|l| l.as_bytes()), b"h3");
            assert_eq!(got, Ok(Choice::Clear), "{lines:?}");
        }
    }
}
