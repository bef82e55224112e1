//! The Host value rules: `Host = uri-host [ ":" port ]` (RFC 9112 §3.2, RFC 9110 §7.2) with
//! `uri-host` and `port` from RFC 3986 §3.2.2–§3.2.3, and the authority of an absolute-form
//! target (RFC 9112 §3.2.2).

use super::uri_syntax::{is_sub_delim, is_unreserved};
use std::net::Ipv6Addr;

/// A validated `uri-host [ ":" port ]`, split in two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HostPort<'a> {
    /// The host: a reg-name or IPv4 address, or an IP-literal with its brackets.
    pub host: &'a [u8],
    /// The port digits; `None` when there is no colon, `Some(b"")` for `host:`.
    pub port: Option<&'a [u8]>,
}

/// The last Host value a connection found valid, for `request_framing_remembering` (beside
/// it in `http1::framing`, which re-exports this type).
///
/// A client sends the same Host on every request of a connection, so its syntax is checked
/// once per connection, not per request (about 100 instructions for `localhost`; the
/// comparison costs a fifth of that). Values longer than 31 bytes are checked every time.
/// Keep one per connection; `default()` remembers nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostMemo {
    len: u8,
    bytes: [u8; HOST_MEMO_CAP],
}

const HOST_MEMO_CAP: usize = 31;

impl HostMemo {
    /// Whether `v` is the value last remembered (never true for an empty value).
    #[inline]
    pub(crate) fn holds(&self, v: &[u8]) -> bool {
        usize::from(self.len) == v.len()
            && self
                .bytes
                .get(..v.len())
                .is_some_and(|kept| !v.is_empty() && crate::byte_word::same_short(kept, v))
    }

    /// Remembers `v`, which the caller found valid (too long a value is not kept).
    #[inline]
    pub(crate) fn remember(&mut self, v: &[u8]) {
        if let (Some(dst), Ok(len)) = (self.bytes.get_mut(..v.len()), u8::try_from(v.len())) {
            dst.copy_from_slice(v);
            self.len = len;
        }
    }
}

/// Splits and validates a Host value (or an authority without userinfo).
///
/// Policy (documented in docs/STRICTNESS.md): the host must not be empty — every target this
/// server accepts has an authority once reconstructed, and RFC 9110 §4.2.1 forbids an `http`
/// URI with an empty host; the port is at most five digits and at most 65535.
pub(crate) fn parse_host_port(v: &[u8]) -> Option<HostPort<'_>> {
    let (host, rest) = if v.first() == Some(&b'[') {
        // IP-literal = "[" ( IPv6address / IPvFuture ) "]"  (RFC 3986 §3.2.2)
        let close = v.iter().position(|&b| b == b']')?;
        let (lit, rest) = v.split_at(close + 1);
        if !is_ip_literal(&lit[1..close]) {
            return None;
        }
        (lit, rest)
    } else {
        // One pass over the reg-name up to the first colon: a table look-up per byte instead of
        // a search for the colon and then a chain of range tests per byte (the Host of nearly
        // every request takes this path; ~230 instructions for `localhost` before).
        let end = reg_name_end(v)?;
        if end == 0 {
            return None;
        }
        v.split_at(end)
    };
    let port = match rest.split_first() {
        None => None,
        Some((b':', port)) if is_port(port) => Some(port),
        Some(_) => return None,
    };
    Some(HostPort { host, port })
}

/// Byte classes for the Host rules (RFC 3986 §2.2–§2.3, §3.2.2).
const REG: u8 = 1; // unreserved / sub-delims: stands for itself in a reg-name
const HEX: u8 = 2; // HEXDIG, after "%" in pct-encoded
const DIGIT: u8 = 4; // DIGIT, in a port

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut k = 0;
        if is_unreserved(c) || is_sub_delim(c) {
            k |= REG;
        }
        if c.is_ascii_hexdigit() {
            k |= HEX;
        }
        if c.is_ascii_digit() {
            k |= DIGIT;
        }
        t[b] = k;
        b += 1;
    }
    t
};

/// Where the reg-name at the start of `v` ends: the index of the first `:` or `v.len()`;
/// `None` when a byte before that is not allowed in a reg-name.
///
/// `reg-name = *( unreserved / pct-encoded / sub-delims )`; IPv4address is a subset.
#[inline]
fn reg_name_end(v: &[u8]) -> Option<usize> {
    let mut i = 0;
    loop {
        // The run of bytes that stand for themselves: a tight load-test loop.
        let rest = v.get(i..).unwrap_or_default();
        i += rest.iter().position(|&b| CLASS[usize::from(b)] & REG == 0).unwrap_or(rest.len());
        match v.get(i) {
            None | Some(b':') => return Some(i),
            // pct-encoded = "%" HEXDIG HEXDIG
            Some(b'%') => match v.get(i + 1..i + 3) {
                Some(&[h, l]) if CLASS[usize::from(h)] & CLASS[usize::from(l)] & HEX != 0 => i += 3,
                _ => return None,
            },
            Some(_) => return None,
        }
    }
}

/// The inside of `[...]`: an IPv6 address (std's parser is RFC 4291 text form) or
/// `IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`.
fn is_ip_literal(s: &[u8]) -> bool {
    if let Some((b'v' | b'V', rest)) = s.split_first() {
        let Some(dot) = rest.iter().position(|&b| b == b'.') else {
            return false;
        };
        let (ver, tail) = (&rest[..dot], &rest[dot + 1..]);
        return !ver.is_empty()
            && ver.iter().all(u8::is_ascii_hexdigit)
            && !tail.is_empty()
            && tail.iter().all(|&b| is_unreserved(b) || is_sub_delim(b) || b == b':');
    }
    std::str::from_utf8(s).is_ok_and(|s| s.parse::<Ipv6Addr>().is_ok())
}

/// `port = *DIGIT`, capped at five digits and 65535 (policy).
fn is_port(p: &[u8]) -> bool {
    if p.len() > 5 {
        return false;
    }
    let mut n = 0u32;
    for &d in p {
        if CLASS[usize::from(d)] & DIGIT == 0 {
            return false;
        }
        n = n * 10 + u32::from(d - b'0');
    }
    n <= 65535
}

/// Whether a Host value names the same authority as an absolute-form target
/// (`scheme "://" authority path-abempty [ "?" query ]`, RFC 9112 §3.2.2).
///
/// Policy: the hosts are equal ignoring ASCII case (RFC 3986 §6.2.2.1) and the ports are equal
/// once an absent or empty port is replaced by the scheme's default (80 for `http`, 443 for
/// `https`, RFC 9110 §4.2.1–§4.2.2). A target with userinfo or without `//` never matches.
pub(crate) fn host_matches_target<'a>(host: HostPort<'a>, target: &'a [u8]) -> bool {
    let Some(colon) = target.iter().position(|&b| b == b':') else {
        return false;
    };
    let (scheme, rest) = (&target[..colon], &target[colon + 1..]);
    let Some(after) = rest.strip_prefix(b"//") else {
        return false;
    };
    let end = after.iter().position(|&b| matches!(b, b'/' | b'?' | b'#')).unwrap_or(after.len());
    let Some(auth) = parse_host_port(&after[..end]) else {
        return false;
    };
    let default: &'a [u8] = if scheme.eq_ignore_ascii_case(b"https") {
        b"443"
    } else if scheme.eq_ignore_ascii_case(b"http") {
        b"80"
    } else {
        b""
    };
    let norm = |p: Option<&'a [u8]>| match p {
        Some(p) if !p.is_empty() => p,
        _ => default,
    };
    host.host.eq_ignore_ascii_case(auth.host) && norm(host.port) == norm(auth.port)
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_memo_holds_only_what_it_remembered() {
        struct Case {
            remember: &'static [u8],
            ask: &'static [u8],
            expect: bool,
        }
        let long = &[b'a'; HOST_MEMO_CAP + 1][..];
        let full = &[b'a'; HOST_MEMO_CAP][..];
        let cases = [
            Case { remember: b"localhost", ask: b"localhost", expect: true },
            Case { remember: b"localhost", ask: b"localhost:80", expect: false },
            Case { remember: b"localhost", ask: b"localhosT", expect: false },
            Case { remember: b"localhost", ask: b"", expect: false },
            Case { remember: b"", ask: b"", expect: false },
            Case { remember: full, ask: full, expect: true },
            Case { remember: long, ask: long, expect: false },
        ];
        for c in cases {
            let mut memo = HostMemo::default();
            assert!(!memo.holds(c.ask));
            memo.remember(c.remember);
            assert_eq!(memo.holds(c.ask), c.expect, "{:?} / {:?}", c.remember, c.ask);
        }
        // A value too long to keep leaves the previous one in place.
        let mut memo = HostMemo::default();
        memo.remember(b"a.example");
        memo.remember(long);
        assert!(memo.holds(b"a.example") && !memo.holds(long));
    }

    use super::*;
    use proptest::prelude::*;

    /// The previous two-pass implementation, kept as the reference the table-driven pass must
    /// agree with.
    fn reference(v: &[u8]) -> Option<HostPort<'_>> {
        let (host, rest) = if v.first() == Some(&b'[') {
            let close = v.iter().position(|&b| b == b']')?;
            let (lit, rest) = v.split_at(close + 1);
            if !is_ip_literal(&lit[1..close]) {
                return None;
            }
            (lit, rest)
        } else {
            let colon = v.iter().position(|&b| b == b':').unwrap_or(v.len());
            let (host, rest) = v.split_at(colon);
            let mut i = 0;
            while i < host.len() {
                let b = host[i];
                if b == b'%' {
                    match host.get(i + 1..i + 3) {
                        Some([h, l]) if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() => i += 3,
                        _ => return None,
                    }
                } else if is_unreserved(b) || is_sub_delim(b) {
                    i += 1;
                } else {
                    return None;
                }
            }
            if host.is_empty() {
                return None;
            }
            (host, rest)
        };
        let port = match rest.split_first() {
            None => None,
            Some((b':', port))
                if port.len() <= 5
                    && port.iter().all(u8::is_ascii_digit)
                    && port.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')) <= 65535 =>
            {
                Some(port)
            }
            Some(_) => return None,
        };
        Some(HostPort { host, port })
    }

    struct Case {
        input: &'static [u8],
        expect: Option<(&'static [u8], Option<&'static [u8]>)>,
    }

    /// RFC 9112 §3.2, RFC 3986 §3.2.2–§3.2.3.
    #[test]
    fn host_port_rfc3986_3_2_2() {
        let cases = [
            Case { input: b"localhost", expect: Some((b"localhost", None)) },
            Case { input: b"localhost:8080", expect: Some((b"localhost", Some(b"8080"))) },
            Case { input: b"a:", expect: Some((b"a", Some(b""))) },
            Case { input: b"a%41b:1", expect: Some((b"a%41b", Some(b"1"))) },
            Case { input: b"[::1]:443", expect: Some((b"[::1]", Some(b"443"))) },
            Case { input: b"1.2.3.4:65535", expect: Some((b"1.2.3.4", Some(b"65535"))) },
            Case { input: b"a:65536", expect: None },
            Case { input: b"a:000001", expect: None },
            Case { input: b"a%4", expect: None },
            Case { input: b"a%4:1", expect: None },
            Case { input: b"a%g1", expect: None },
            Case { input: b"", expect: None },
            Case { input: b":1", expect: None },
            Case { input: b"a:1:2", expect: None },
            Case { input: b"a b", expect: None },
            Case { input: b"a@b", expect: None },
            Case { input: b"\xc3\xa9", expect: None },
        ];
        for c in &cases {
            let got = parse_host_port(c.input).map(|h| (h.host, h.port));
            assert_eq!(got, c.expect, "{:?}", String::from_utf8_lossy(c.input));
            assert_eq!(parse_host_port(c.input), reference(c.input));
        }
    }

    /// Every byte in every position of short values, and around a colon and a `%`.
    #[test]
    fn table_pass_matches_reference_exhaustive() {
        for b in 0..=255u8 {
            for v in [
                &[b][..],
                &[b'a', b],
                &[b, b'a'],
                &[b'a', b':', b],
                &[b'a', b'%', b, b'0'],
                &[b'a', b'%', b'0', b],
                &[b'a', b':', b'1', b],
            ] {
                assert_eq!(parse_host_port(v), reference(v), "{v:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn table_pass_matches_reference(v in proptest::collection::vec(
            prop_oneof![
                Just(b'a'), Just(b'Z'), Just(b'7'), Just(b':'), Just(b'%'), Just(b'['),
                Just(b']'), Just(b'.'), Just(b'F'), any::<u8>()
            ],
            0..12,
        )) {
            prop_assert_eq!(parse_host_port(&v), reference(&v));
        }
    }
}
