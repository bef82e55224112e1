//! Which fields a proxy passes on: the hop-by-hop fields it removes (RFC 9110 §7.6.1), those a
//! message's own `Connection` field names, the framing it writes itself, and the forwarding
//! fields it adds (`Via`, RFC 9110 §7.6.3; `Forwarded`, RFC 7239; the `X-Forwarded-*` family).
//!
//! Sans-I/O: names and values in, a verdict or bytes out. Table-tested below, row by row
//! against the RFCs' sentences.

use std::net::{IpAddr, SocketAddr};

use crate::server::Network;

/// The connection options a `Connection` field can name that this module remembers per
/// message; a message naming more has the rest removed too (see [`ConnectionOptions`]).
const MAX_OPTIONS: usize = 8;

/// RFC 9110 §7.6.1: "a proxy or gateway MUST remove any received connection options before
/// forwarding the message" — the `Connection` field itself, and the fields it is known to
/// carry hop-by-hop: `Proxy-Connection`, `Keep-Alive`, `TE`, `Transfer-Encoding` and
/// `Upgrade` ("Intermediaries SHOULD also remove other fields that are only intended for a
/// single hop ... even if they are not listed in Connection"). `Trailer` is no longer among
/// them (RFC 9110 §6.6.2 makes it end-to-end).
pub(crate) const HOP_BY_HOP: [&str; 6] =
    ["connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade"];

/// Whether `name` is a hop-by-hop field by RFC 9110 §7.6.1, whatever `Connection` says.
#[inline]
pub(crate) fn is_hop_by_hop(name: &str) -> bool {
    // Lengths 2, 7, 10, 16, 17: one compare for most other names.
    match name.len() {
        2 | 7 | 10 | 16 | 17 => HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h)),
        _ => false,
    }
}

/// The options named by a message's `Connection` fields (RFC 9110 §7.6.1: `Connection =
/// #connection-option`, case-insensitive tokens), each field they name to be removed.
#[derive(Debug, Default)]
pub(crate) struct ConnectionOptions<'a> {
    names: [&'a [u8]; MAX_OPTIONS],
    len: usize,
    /// More options than `names` holds: every field that is not end-to-end by name is
    /// dropped (none is then forwarded on a list we could not keep).
    overflow: bool,
}

impl<'a> ConnectionOptions<'a> {
    /// Reads every `Connection` value in `fields`.
    pub(crate) fn of<I>(fields: I) -> ConnectionOptions<'a>
    where
        I: IntoIterator<Item = (&'a str, &'a [u8])>,
    {
        let mut options = ConnectionOptions::default();
        for (name, value) in fields {
            if name.len() != 10 || !name.eq_ignore_ascii_case("connection") {
                continue;
            }
            for option in value.split(|&b| b == b',') {
                let option = crate::http1::field_syntax::trim_ows(option);
                if option.is_empty() {
                    continue;
                }
                match options.names.get_mut(options.len) {
                    Some(slot) => {
                        *slot = option;
                        options.len += 1;
                    }
                    None => options.overflow = true,
                }
            }
        }
        options
    }

    /// Whether `name` is named by the message's `Connection` field (and so is hop-by-hop).
    #[inline]
    pub(crate) fn names(&self, name: &str) -> bool {
        if self.len == 0 {
            return false;
        }
        self.names[..self.len].iter().any(|o| o.eq_ignore_ascii_case(name.as_bytes()))
            || (self.overflow && !is_well_known_end_to_end(name))
    }
}

impl ConnectionOptions<'_> {
    /// Whether the option `name` is among those kept (a list too long to keep names none
    /// for sure).
    fn lists(&self, name: &str) -> bool {
        self.names[..self.len].iter().any(|o| o.eq_ignore_ascii_case(name.as_bytes()))
    }
}

/// Whether the client asked for trailers on its hop, which the proxy then asks for on the
/// next (it passes trailers on). RFC 9110 §10.1.4: TE "only applies to the immediate
/// connection", and "a sender of TE MUST also send a \"TE\" connection option within the
/// Connection header field" — over HTTP/1.x a TE that `Connection` does not name came through
/// an intermediary that did not know it, and is not this hop's. RFC 9113 §8.2.2: HTTP/2 has no
/// `Connection`, and its TE holds nothing but "trailers". `TE = #t-codings`, `t-codings =
/// "trailers" / ( transfer-coding [ weight ] )`: "trailers" is one member of the list.
pub(crate) fn asks_for_trailers<'a>(
    version: crate::Version,
    te: impl Iterator<Item = &'a [u8]>,
    options: &ConnectionOptions<'_>,
) -> bool {
    let this_hop = version == crate::Version::Http2 || options.lists("te");
    this_hop
        && te.flat_map(|v| v.split(|&b| b == b',')).any(|member| {
            crate::http1::field_syntax::trim_ows(member).eq_ignore_ascii_case(b"trailers")
        })
}

/// The fields that ask the next hop for trailers (RFC 9110 §10.1.4): over HTTP/1.1 `TE:
/// trailers` and the `TE` connection option that makes it this hop's; over HTTP/2 `te:
/// trailers` alone (RFC 9113 §8.2.2: no `Connection` there).
pub(crate) fn trailers_asked(upstream_http2: bool) -> &'static [(&'static str, &'static [u8])] {
    if upstream_http2 {
        &[("te", b"trailers")]
    } else {
        &[("te", b"trailers"), ("connection", b"te")]
    }
}

/// Fields no `Connection` option may remove, even from a list too long to keep: the ones a
/// request cannot be understood without.
fn is_well_known_end_to_end(name: &str) -> bool {
    ["host", "content-type", "content-length", "authorization", "accept", "cookie"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
}

/// Whether a received field is passed on: not hop-by-hop (by RFC 9110 §7.6.1 or by the
/// message's `Connection`), and not one the sending side writes itself (`Host`, the framing
/// fields `Content-Length` and `Transfer-Encoding`: RFC 9112 §6.1, RFC 9110 §8.6).
#[inline]
pub(crate) fn forwards(name: &str, options: &ConnectionOptions<'_>) -> bool {
    !(is_hop_by_hop(name)
        || name.eq_ignore_ascii_case("content-length")
        || name.eq_ignore_ascii_case("host")
        || options.names(name))
}

/// Whose word on the client's address is taken: the `X-Forwarded-For` and `Forwarded` a
/// request arrives with are kept and appended to only when its sender is trusted (another
/// proxy of ours), and replaced otherwise, so a client cannot forge the address the backend
/// sees.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Trust {
    /// No one: the forwarding fields received are replaced (the default; nginx's
    /// `$remote_addr`, HAProxy's `option forwardfor` without `if-none`).
    #[default]
    Nobody,
    /// Every sender: the fields are appended to (nginx's `$proxy_add_x_forwarded_for`).
    Everyone,
    /// Senders in these networks.
    Networks(Vec<Network>),
}

impl Trust {
    /// Whether a request from `ip` has its forwarding fields kept.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        match self {
            Trust::Nobody => false,
            Trust::Everyone => true,
            Trust::Networks(nets) => nets.iter().any(|n| n.contains(ip)),
        }
    }
}

/// Which forwarding fields a proxy adds to the requests it passes on, and whose it keeps.
///
/// | Field | Default | Rule |
/// |---|---|---|
/// | `Via: 1.1 peregrine` (the received version, then the pseudonym) | on | RFC 9110 §7.6.3 |
/// | `X-Forwarded-For` (the client's address, appended or replaced by [`Trust`]) | on | de facto |
/// | `X-Forwarded-Proto` (`http` or `https`, as received) | on | de facto |
/// | `X-Forwarded-Host` (the Host received) | on | de facto |
/// | `Forwarded: for=...;proto=...;host=...` | off | RFC 7239 §4, §5 |
///
/// # Examples
/// ```
/// use peregrine::proxy::{Forwarding, Trust};
/// let f = Forwarding::default().forwarded(true).trust(Trust::Networks(vec!["10.0.0.0/8".parse().unwrap()]));
/// assert!(f.trust_value().trusts("10.1.2.3".parse().unwrap()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forwarding {
    via: bool,
    x_forwarded: bool,
    forwarded: bool,
    trust: Trust,
    pseudonym: Box<str>,
}

impl Default for Forwarding {
    fn default() -> Forwarding {
        Forwarding {
            via: true,
            x_forwarded: true,
            forwarded: false,
            trust: Trust::Nobody,
            pseudonym: "peregrine".into(),
        }
    }
}

impl Forwarding {
    /// Adds `Via` (RFC 9110 §7.6.3) or not.
    pub fn via(mut self, on: bool) -> Forwarding {
        self.via = on;
        self
    }

    /// The name this proxy gives itself in `Via` (a token; default `peregrine`).
    ///
    /// # Panics
    /// When `name` is empty or not a token (RFC 9110 §7.6.3: `received-by = pseudonym [ ":"
    /// port ]`).
    pub fn pseudonym(mut self, name: &str) -> Forwarding {
        assert!(
            !name.is_empty() && name.bytes().all(crate::http1::field_syntax::is_tchar),
            "a Via pseudonym is a token"
        );
        self.pseudonym = name.into();
        self
    }

    /// Adds `X-Forwarded-For`, `-Proto` and `-Host`, or not.
    pub fn x_forwarded(mut self, on: bool) -> Forwarding {
        self.x_forwarded = on;
        self
    }

    /// Adds `Forwarded` (RFC 7239), or not.
    pub fn forwarded(mut self, on: bool) -> Forwarding {
        self.forwarded = on;
        self
    }

    /// Whose forwarding fields are kept and appended to.
    pub fn trust(mut self, trust: Trust) -> Forwarding {
        self.trust = trust;
        self
    }

    /// The trust setting.
    pub fn trust_value(&self) -> &Trust {
        &self.trust
    }

    /// Whether a received field is left out because this proxy writes its own in its place
    /// (with the received values first, for `Via` always and for `X-Forwarded-For` and
    /// `Forwarded` from a trusted sender: see [`Forwarding::added`]).
    #[inline]
    pub(crate) fn replaces(&self, name: &str) -> bool {
        match name.len() {
            3 => self.via && name.eq_ignore_ascii_case("via"),
            9 => self.forwarded && name.eq_ignore_ascii_case("forwarded"),
            15 => self.x_forwarded && name.eq_ignore_ascii_case("x-forwarded-for"),
            16 => self.x_forwarded && name.eq_ignore_ascii_case("x-forwarded-host"),
            17 => self.x_forwarded && name.eq_ignore_ascii_case("x-forwarded-proto"),
            _ => false,
        }
    }
}

/// What a forwarded request says about where it came from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Origin<'a> {
    /// The client's address (the PROXY protocol's, when a trusted balancer sent one).
    pub(crate) client: Option<SocketAddr>,
    /// `https` rather than `http`.
    pub(crate) secure: bool,
    /// The Host (or `:authority`) received.
    pub(crate) host: Option<&'a str>,
    /// The version received, for `Via`.
    pub(crate) version: crate::Version,
}

/// Where the values of the added fields lie in the scratch buffer.
#[derive(Clone, Debug, Default)]
pub(crate) struct Added {
    pub(crate) via: Option<std::ops::Range<usize>>,
    pub(crate) x_forwarded_for: Option<std::ops::Range<usize>>,
    pub(crate) x_forwarded_host: Option<std::ops::Range<usize>>,
    pub(crate) x_forwarded_proto: Option<&'static [u8]>,
    pub(crate) forwarded: Option<std::ops::Range<usize>>,
}

impl Forwarding {
    /// Writes the values of the fields to add into `scratch` (cleared first): `received` are
    /// the request's fields (the `Via`, `X-Forwarded-For` and `Forwarded` values kept are
    /// taken from them when the sender is trusted).
    pub(crate) fn added<'a, F, I>(
        &self,
        origin: &Origin<'_>,
        received: F,
        scratch: &mut Vec<u8>,
    ) -> Added
    where
        F: Fn() -> I,
        I: Iterator<Item = (&'a str, &'a [u8])>,
    {
        use std::io::Write;
        scratch.clear();
        let mut added = Added::default();
        let trusted = origin.client.is_some_and(|c| self.trust.trusts(c.ip()));
        let list = |scratch: &mut Vec<u8>, name: &str| {
            for (_, v) in received().filter(|(n, _)| n.eq_ignore_ascii_case(name)) {
                if !v.is_empty() {
                    scratch.extend_from_slice(v);
                    scratch.extend_from_slice(b", ");
                }
            }
        };
        if self.via {
            // RFC 9110 §7.6.3: "Via = #( received-protocol RWS received-by [ RWS comment ] )",
            // appended to the Via received; the protocol name is omitted for HTTP.
            let start = scratch.len();
            list(scratch, "via");
            let version: &[u8] = match origin.version {
                crate::Version::Http10 => b"1.0 ",
                crate::Version::Http2 => b"2 ",
                crate::Version::Http3 => b"3 ",
                _ => b"1.1 ",
            };
            scratch.extend_from_slice(version);
            scratch.extend_from_slice(self.pseudonym.as_bytes());
            added.via = Some(start..scratch.len());
        }
        if self.x_forwarded {
            if let Some(client) = origin.client {
                let start = scratch.len();
                if trusted {
                    list(scratch, "x-forwarded-for");
                }
                write_ip(scratch, client.ip());
                added.x_forwarded_for = Some(start..scratch.len());
            }
            added.x_forwarded_proto = Some(if origin.secure { b"https" } else { b"http" });
            if let Some(host) = origin.host {
                let start = scratch.len();
                scratch.extend_from_slice(host.as_bytes());
                added.x_forwarded_host = Some(start..scratch.len());
            }
        }
        if self.forwarded {
            let start = scratch.len();
            if trusted {
                list(scratch, "forwarded");
            }
            // RFC 7239 §4: forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] );
            // §6: an IPv6 address is quoted and bracketed, so is any value with a ':'.
            match origin.client.map(|c| c.ip()) {
                Some(ip @ IpAddr::V4(_)) => {
                    scratch.extend_from_slice(b"for=");
                    write_ip(scratch, ip);
                }
                Some(IpAddr::V6(ip)) => {
                    let _ = write!(scratch, "for=\"[{ip}]\"");
                }
                None => scratch.extend_from_slice(b"for=unknown"),
            }
            scratch.extend_from_slice(if origin.secure { b";proto=https" } else { b";proto=http" });
            // §5.3: host = the Host received; a value that is not a token is quoted.
            if let Some(host) = origin.host {
                if host.bytes().all(crate::http1::field_syntax::is_tchar) {
                    let _ = write!(scratch, ";host={host}");
                } else {
                    let _ = write!(scratch, ";host=\"{host}\"");
                }
            }
            added.forwarded = Some(start..scratch.len());
        }
        added
    }
}

/// Writes `ip` as `Display` does: dotted decimal for IPv4 by hand (the formatter's way cost a
/// proxied request ~500 instructions), IPv6 through the formatter.
fn write_ip(out: &mut Vec<u8>, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            for (i, b) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    out.push(b'.');
                }
                if b >= 100 {
                    out.push(b'0' + b / 100);
                }
                if b >= 10 {
                    out.push(b'0' + b / 10 % 10);
                }
                out.push(b'0' + b % 10);
            }
        }
        IpAddr::V6(v6) => {
            use std::io::Write;
            let _ = write!(out, "{v6}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_written_as_display_writes_it() {
        let mut cases: Vec<IpAddr> =
            (0..=255u8).map(|b| IpAddr::from([b, 255 - b, b / 3, b.wrapping_mul(7)])).collect();
        cases.extend(
            ["::1", "2001:db8::7", "::ffff:192.0.2.1"].map(|s| s.parse::<IpAddr>().unwrap()),
        );
        for ip in cases {
            let mut out = Vec::new();
            write_ip(&mut out, ip);
            assert_eq!(out, ip.to_string().as_bytes(), "{ip}");
        }
    }

    /// RFC 9110 §7.6.1, one row per field: hop-by-hop by name, or end-to-end.
    #[test]
    fn hop_by_hop_fields_rfc9110_7_6_1() {
        struct Case {
            name: &'static str,
            hop: bool,
        }
        let cases = [
            Case { name: "Connection", hop: true },
            Case { name: "connection", hop: true },
            Case { name: "Proxy-Connection", hop: true },
            Case { name: "Keep-Alive", hop: true },
            Case { name: "TE", hop: true },
            Case { name: "Transfer-Encoding", hop: true },
            Case { name: "Upgrade", hop: true },
            // RFC 9110 §6.6.2: Trailer is end-to-end (RFC 2616 listed it).
            Case { name: "Trailer", hop: false },
            Case { name: "Proxy-Authorization", hop: false },
            Case { name: "Accept", hop: false },
            Case { name: "Te-x", hop: false },
            Case { name: "Upgrades", hop: false },
            Case { name: "Content-Length", hop: false },
        ];
        for case in cases {
            assert_eq!(is_hop_by_hop(case.name), case.hop, "{}", case.name);
        }
    }

    /// RFC 9110 §7.6.1: the fields a `Connection` field names are removed, whatever their
    /// name; the framing and Host are written by the next hop's connection.
    #[test]
    fn forwarded_fields_by_connection_options() {
        struct Case {
            connection: &'static [&'static str],
            name: &'static str,
            forwards: bool,
        }
        let cases = [
            Case { connection: &[], name: "x-custom", forwards: true },
            Case { connection: &["x-custom"], name: "X-Custom", forwards: false },
            Case { connection: &["close, X-Custom"], name: "x-custom", forwards: false },
            Case { connection: &["close", "x-a , x-b"], name: "x-b", forwards: false },
            Case { connection: &["x-a"], name: "x-b", forwards: true },
            Case { connection: &[",,, x-a,"], name: "x-a", forwards: false },
            Case { connection: &["keep-alive"], name: "accept", forwards: true },
            Case { connection: &[], name: "Host", forwards: false },
            Case { connection: &[], name: "Content-Length", forwards: false },
            Case { connection: &[], name: "Transfer-Encoding", forwards: false },
            Case { connection: &[], name: "Keep-Alive", forwards: false },
            // More options than kept: every field not needed end to end goes.
            Case { connection: &["a,b,c,d,e,f,g,h,i"], name: "x-z", forwards: false },
            Case { connection: &["a,b,c,d,e,f,g,h,i"], name: "accept", forwards: true },
        ];
        for case in cases {
            let fields: Vec<(&str, &[u8])> =
                case.connection.iter().map(|v| ("Connection", v.as_bytes())).collect();
            let options = ConnectionOptions::of(fields.iter().copied());
            assert_eq!(
                forwards(case.name, &options),
                case.forwards,
                "{:?} {}",
                case.connection,
                case.name
            );
        }
    }

    /// RFC 9110 §10.1.4, §7.6.1; RFC 9113 §8.2.2: which requests ask for trailers on the
    /// client's hop, and so on the proxy's.
    #[test]
    fn te_trailers_only_as_a_connection_option_rfc9110_10_1_4() {
        use crate::Version::{Http2, Http10, Http11};
        struct Case {
            version: crate::Version,
            connection: &'static [&'static str],
            te: &'static [&'static str],
            asks: bool,
        }
        let cases = [
            // HTTP/1.x: TE counts only when Connection names it.
            Case { version: Http11, connection: &["TE"], te: &["trailers"], asks: true },
            Case { version: Http11, connection: &["close, te"], te: &["Trailers"], asks: true },
            Case {
                version: Http11,
                connection: &["keep-alive", "TE"],
                te: &["trailers"],
                asks: true,
            },
            Case { version: Http10, connection: &["te"], te: &["trailers"], asks: true },
            Case { version: Http11, connection: &[], te: &["trailers"], asks: false },
            Case { version: Http11, connection: &["keep-alive"], te: &["trailers"], asks: false },
            Case { version: Http11, connection: &["x-te"], te: &["trailers"], asks: false },
            Case { version: Http10, connection: &[], te: &["trailers"], asks: false },
            // `TE = #t-codings`: trailers is one member of the list, in any field line.
            Case {
                version: Http11,
                connection: &["te"],
                te: &["gzip;q=0.5, trailers"],
                asks: true,
            },
            Case { version: Http11, connection: &["te"], te: &["gzip", " trailers "], asks: true },
            Case {
                version: Http11,
                connection: &["te"],
                te: &["gzip, deflate;q=0.2"],
                asks: false,
            },
            Case { version: Http11, connection: &["te"], te: &["trailersx"], asks: false },
            Case { version: Http11, connection: &["te"], te: &[], asks: false },
            // A list too long to keep names no option for sure.
            Case {
                version: Http11,
                connection: &["a,b,c,d,e,f,g,h,te"],
                te: &["trailers"],
                asks: false,
            },
            // HTTP/2: no Connection field; TE is "trailers" or nothing.
            Case { version: Http2, connection: &[], te: &["trailers"], asks: true },
            Case { version: Http2, connection: &[], te: &[], asks: false },
        ];
        for case in cases {
            let fields: Vec<(&str, &[u8])> =
                case.connection.iter().map(|v| ("Connection", v.as_bytes())).collect();
            let options = ConnectionOptions::of(fields.iter().copied());
            let te = case.te.iter().map(|v| v.as_bytes());
            assert_eq!(
                asks_for_trailers(case.version, te, &options),
                case.asks,
                "{:?} {:?} {:?}",
                case.version,
                case.connection,
                case.te
            );
            // The received TE never goes on as it came: the proxy writes its own.
            assert!(!forwards("te", &options) && !forwards("TE", &options));
        }
        // What the proxy sends for it: HTTP/1.1 names TE in Connection, HTTP/2 cannot.
        assert_eq!(trailers_asked(false), [("te", &b"trailers"[..]), ("connection", &b"te"[..])]);
        assert_eq!(trailers_asked(true), [("te", &b"trailers"[..])]);
    }

    fn added(
        f: &Forwarding,
        origin: Origin<'_>,
        received: &[(&str, &[u8])],
    ) -> Vec<(String, String)> {
        let mut scratch = Vec::new();
        let a = f.added(&origin, || received.iter().copied(), &mut scratch);
        let text = |r: Option<std::ops::Range<usize>>| {
            r.map(|r| String::from_utf8(scratch[r].to_vec()).unwrap())
        };
        let mut out = Vec::new();
        for (name, v) in [
            ("via", text(a.via.clone())),
            ("x-forwarded-for", text(a.x_forwarded_for.clone())),
            (
                "x-forwarded-proto",
                a.x_forwarded_proto.map(|p| String::from_utf8(p.to_vec()).unwrap()),
            ),
            ("x-forwarded-host", text(a.x_forwarded_host.clone())),
            ("forwarded", text(a.forwarded.clone())),
        ] {
            if let Some(v) = v {
                out.push((name.to_owned(), v));
            }
        }
        out
    }

    /// Via (RFC 9110 §7.6.3), X-Forwarded-*, Forwarded (RFC 7239 §4-§6), appended for a
    /// trusted sender and replaced otherwise.
    #[test]
    fn forwarding_fields_appended_or_replaced() {
        let v4: SocketAddr = "192.0.2.7:5000".parse().unwrap();
        let v6: SocketAddr = "[2001:db8::1]:5000".parse().unwrap();
        let origin =
            |client, secure, host, version| Origin { client: Some(client), secure, host, version };
        let received: &[(&str, &[u8])] = &[
            ("Via", b"1.1 edge"),
            ("X-Forwarded-For", b"203.0.113.9"),
            ("Forwarded", b"for=203.0.113.9"),
        ];
        let all = Forwarding::default().forwarded(true);
        struct Case {
            f: Forwarding,
            origin: Origin<'static>,
            expect: &'static [(&'static str, &'static str)],
        }
        let cases = [
            Case {
                f: all.clone(),
                origin: origin(v4, false, Some("example.com"), crate::Version::Http11),
                expect: &[
                    ("via", "1.1 edge, 1.1 peregrine"),
                    ("x-forwarded-for", "192.0.2.7"),
                    ("x-forwarded-proto", "http"),
                    ("x-forwarded-host", "example.com"),
                    ("forwarded", "for=192.0.2.7;proto=http;host=example.com"),
                ],
            },
            Case {
                f: all.clone().trust(Trust::Everyone),
                origin: origin(v6, true, Some("example.com:8443"), crate::Version::Http2),
                expect: &[
                    ("via", "1.1 edge, 2 peregrine"),
                    ("x-forwarded-for", "203.0.113.9, 2001:db8::1"),
                    ("x-forwarded-proto", "https"),
                    ("x-forwarded-host", "example.com:8443"),
                    (
                        "forwarded",
                        "for=203.0.113.9, for=\"[2001:db8::1]\";proto=https;host=\"example.com:8443\"",
                    ),
                ],
            },
            Case {
                f: all.clone().trust(Trust::Networks(vec!["10.0.0.0/8".parse().unwrap()])),
                origin: origin(v4, false, None, crate::Version::Http10),
                expect: &[
                    ("via", "1.1 edge, 1.0 peregrine"),
                    ("x-forwarded-for", "192.0.2.7"),
                    ("x-forwarded-proto", "http"),
                    ("forwarded", "for=192.0.2.7;proto=http"),
                ],
            },
            Case {
                f: Forwarding::default().via(false).x_forwarded(false),
                origin: origin(v4, false, Some("h"), crate::Version::Http11),
                expect: &[],
            },
        ];
        for case in cases {
            let got = added(&case.f, case.origin, received);
            let want: Vec<(String, String)> =
                case.expect.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
            assert_eq!(got, want);
        }
    }

    /// The received forwarding fields never go on as they came: this proxy writes each in
    /// their place (their values first when the sender is trusted, as above).
    #[test]
    fn received_forwarding_fields_are_rewritten() {
        struct Case {
            f: Forwarding,
            name: &'static str,
            replaced: bool,
        }
        let on = Forwarding::default().forwarded(true);
        let off = Forwarding::default().via(false).x_forwarded(false);
        let cases = [
            Case { f: on.clone(), name: "Via", replaced: true },
            Case { f: on.clone(), name: "X-Forwarded-For", replaced: true },
            Case { f: on.clone(), name: "forwarded", replaced: true },
            Case { f: on.clone(), name: "X-Forwarded-Host", replaced: true },
            Case { f: on.clone(), name: "X-Forwarded-Proto", replaced: true },
            Case { f: on.clone(), name: "X-Forwarded-Port", replaced: false },
            Case { f: off.clone(), name: "Via", replaced: false },
            Case { f: off.clone(), name: "X-Forwarded-For", replaced: false },
            Case { f: off, name: "Forwarded", replaced: false },
        ];
        for case in cases {
            assert_eq!(case.f.replaces(case.name), case.replaced, "{}", case.name);
        }
    }
}
