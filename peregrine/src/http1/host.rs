//! The Host value rules: `Host = uri-host [ ":" port ]` (RFC 9112 §3.2, RFC 9110 §7.2) with
//! `uri-host` and `port` from RFC 3986 §3.2.2–§3.2.3, and the authority of an absolute-form
//! target (RFC 9112 §3.2.2).

use std::net::Ipv6Addr;

/// A validated `uri-host [ ":" port ]`, split in two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HostPort<'a> {
    /// The host: a reg-name or IPv4 address, or an IP-literal with its brackets.
    pub host: &'a [u8],
    /// The port digits; `None` when there is no colon, `Some(b"")` for `host:`.
    pub port: Option<&'a [u8]>,
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
        let colon = v.iter().position(|&b| b == b':').unwrap_or(v.len());
        let (host, rest) = v.split_at(colon);
        if host.is_empty() || !is_reg_name(host) {
            return None;
        }
        (host, rest)
    };
    let port = match rest.split_first() {
        None => None,
        Some((b':', port)) if is_port(port) => Some(port),
        Some(_) => return None,
    };
    Some(HostPort { host, port })
}

/// `reg-name = *( unreserved / pct-encoded / sub-delims )`; IPv4address is a subset.
fn is_reg_name(s: &[u8]) -> bool {
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if b == b'%' {
            // pct-encoded = "%" HEXDIG HEXDIG
            match s.get(i + 1..i + 3) {
                Some([h, l]) if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() => i += 3,
                _ => return false,
            }
        } else if is_unreserved(b) || is_sub_delim(b) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_sub_delim(b: u8) -> bool {
    matches!(b, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=')
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
    p.len() <= 5
        && p.iter().all(u8::is_ascii_digit)
        && p.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')) <= 65535
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
