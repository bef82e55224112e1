//! Where a request goes: a URL split into its origin (scheme, host, port; the pool's key) and
//! its target (path and query), without allocating (RFC 3986 §3, RFC 9110 §4.2).

use super::error::{Error, Kind};
use crate::http1::encode::Scheme;

/// The origin of an `http` or `https` URL: what one connection talks to (RFC 6454 §4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    scheme: Scheme,
    /// The host as written in the URL, brackets removed from an IPv6 literal.
    host: Box<str>,
    port: u16,
}

impl Origin {
    /// An origin from its parts. `host` is a registered name or an IP address (an IPv6 address
    /// without brackets).
    ///
    /// # Examples
    /// ```
    /// use peregrine::client::Origin;
    /// use peregrine::http1::encode::Scheme;
    /// let o = Origin::new(Scheme::Https, "example.com", 443);
    /// assert_eq!(o.to_string(), "https://example.com");
    /// ```
    pub fn new(scheme: Scheme, host: &str, port: u16) -> Origin {
        Origin { scheme, host: host.into(), port }
    }

    /// The origin and target of `url` (`http://` or `https://`, any case).
    ///
    /// # Errors
    /// [`Error::is_request`] for another scheme, userinfo, an empty host, a port that is not a
    /// number up to 65535, or a target byte outside RFC 3986.
    ///
    /// # Examples
    /// ```
    /// use peregrine::client::Origin;
    /// let (origin, target) = Origin::parse("http://[::1]:8080/a?b#frag")?;
    /// assert_eq!((origin.host(), origin.port(), target), ("::1", 8080, "/a?b"));
    /// # Ok::<(), peregrine::client::Error>(())
    /// ```
    pub fn parse(url: &str) -> Result<(Origin, &str), Error> {
        let parts = UrlParts::parse(url)?;
        Ok((Origin::new(parts.scheme, parts.host, parts.port), parts.target))
    }

    /// Whether this origin is the one `parts` names (no allocation).
    pub(crate) fn matches(&self, parts: &UrlParts<'_>) -> bool {
        self.scheme == parts.scheme && self.port == parts.port && *self.host == *parts.host
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host, without brackets.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port (the scheme's default when the URL has none).
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = match self.scheme {
            Scheme::Http => "http",
            Scheme::Https => "https",
        };
        let bracket = self.host.contains(':');
        let (open, close) = if bracket { ("[", "]") } else { ("", "") };
        write!(f, "{scheme}://{open}{}{close}", self.host)?;
        if self.port != self.scheme.default_port() {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

/// A URL's parts, borrowed from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UrlParts<'a> {
    pub(crate) scheme: Scheme,
    pub(crate) host: &'a str,
    pub(crate) port: u16,
    /// Path and query; `/` when the URL has no path (RFC 9112 §3.2.1).
    pub(crate) target: &'a str,
}

fn bad(what: &'static str) -> Error {
    Error::new(Kind::Request, what)
}

impl<'a> UrlParts<'a> {
    pub(crate) fn parse(url: &'a str) -> Result<UrlParts<'a>, Error> {
        // RFC 3986 §3.1: schemes are case-insensitive.
        let (scheme, rest) = match url.find("://") {
            Some(i) if url[..i].eq_ignore_ascii_case("http") => (Scheme::Http, &url[i + 3..]),
            Some(i) if url[..i].eq_ignore_ascii_case("https") => (Scheme::Https, &url[i + 3..]),
            _ => return Err(bad("the URL's scheme is not http or https")),
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, after) = rest.split_at(end);
        // RFC 9110 §4.2.4: a sender MUST NOT generate userinfo in an http(s) URI.
        if authority.contains('@') {
            return Err(bad("userinfo in the URL"));
        }
        let (host, port) = split_host_port(authority)?;
        if host.is_empty() {
            return Err(bad("empty host in the URL"));
        }
        let port = match port {
            None => scheme.default_port(),
            // RFC 3986 §3.2.3: an empty port means the default.
            Some("") => scheme.default_port(),
            Some(p) if p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
                p.parse().map_err(|_| bad("port out of range"))?
            }
            Some(_) => return Err(bad("invalid port in the URL")),
        };
        // RFC 3986 §3.5: the fragment is not sent.
        let target = after.split('#').next().unwrap_or_default();
        let target = match target.as_bytes().first() {
            None => "/",
            // "http://h?q" has an empty path: "/" with the query (RFC 9112 §3.2.1 via RFC
            // 3986 §6.2.3) would need an allocation; refused instead.
            Some(b'?') => return Err(bad("a query without a path; write http://host/?query")),
            Some(_) => target,
        };
        if !crate::http1::field_syntax::is_target(target.as_bytes()) {
            return Err(bad("a byte in the URL's path or query that RFC 3986 does not allow"));
        }
        Ok(UrlParts { scheme, host, port, target })
    }
}

/// `host [ ":" port ]`, an IPv6 literal in brackets (RFC 3986 §3.2.2).
fn split_host_port(authority: &str) -> Result<(&str, Option<&str>), Error> {
    if let Some(inner) = authority.strip_prefix('[') {
        let close = inner.find(']').ok_or_else(|| bad("unclosed IPv6 literal in the URL"))?;
        let (host, rest) = inner.split_at(close);
        let rest = &rest[1..];
        return match rest.strip_prefix(':') {
            Some(port) => Ok((host, Some(port))),
            None if rest.is_empty() => Ok((host, None)),
            None => Err(bad("bytes after the IPv6 literal in the URL")),
        };
    }
    Ok(match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        url: &'static str,
        expect: Option<(Scheme, &'static str, u16, &'static str)>,
    }

    #[test]
    fn urls_split_into_origin_and_target() {
        use Scheme::{Http, Https};
        let cases = [
            Case { url: "http://example.com", expect: Some((Http, "example.com", 80, "/")) },
            Case { url: "HTTPS://example.com/", expect: Some((Https, "example.com", 443, "/")) },
            Case { url: "http://a:8080/p?q", expect: Some((Http, "a", 8080, "/p?q")) },
            Case { url: "http://a:/p", expect: Some((Http, "a", 80, "/p")) },
            Case { url: "http://a/p#frag", expect: Some((Http, "a", 80, "/p")) },
            Case { url: "http://a#frag", expect: Some((Http, "a", 80, "/")) },
            Case { url: "http://[::1]:9/x", expect: Some((Http, "::1", 9, "/x")) },
            Case { url: "https://[::1]", expect: Some((Https, "::1", 443, "/")) },
            Case { url: "http://127.0.0.1:65535/", expect: Some((Http, "127.0.0.1", 65535, "/")) },
            Case { url: "ftp://a/", expect: None },
            Case { url: "example.com/", expect: None },
            Case { url: "http://user@a/", expect: None },
            Case { url: "http:///p", expect: None },
            Case { url: "http://a:65536/", expect: None },
            Case { url: "http://a:8x/", expect: None },
            Case { url: "http://[::1/", expect: None },
            Case { url: "http://[::1]x/", expect: None },
            Case { url: "http://a/p q", expect: None },
            Case { url: "http://a?q", expect: None },
        ];
        for case in cases {
            let got = UrlParts::parse(case.url).ok().map(|p| (p.scheme, p.host, p.port, p.target));
            assert_eq!(got, case.expect, "{}", case.url);
        }
    }

    #[test]
    fn an_origin_prints_without_its_default_port() {
        assert_eq!(Origin::new(Scheme::Http, "a", 80).to_string(), "http://a");
        assert_eq!(Origin::new(Scheme::Http, "::1", 8080).to_string(), "http://[::1]:8080");
        let (o, _) = Origin::parse("https://a:443/").unwrap();
        assert!(o.matches(&UrlParts::parse("https://a/x").unwrap()));
        assert!(!o.matches(&UrlParts::parse("http://a:443/x").unwrap()));
    }
}
