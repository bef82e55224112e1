//! Routes: which requests go to which upstream pool (by host and path prefix), and what is
//! changed on the way (the path, the Host, header fields, the body limit).

use http::{HeaderName, HeaderValue};

use super::upstream::Upstreams;

/// How the path is rewritten before the request goes upstream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PathRewrite {
    /// As received (the default).
    #[default]
    Keep,
    /// The route's prefix removed (`/api/users` on prefix `/api` → `/users`; `/api` → `/`).
    StripPrefix,
    /// The route's prefix replaced with this path (`/api/users` on prefix `/api` with `/v2`
    /// → `/v2/users`).
    ReplacePrefix(String),
}

/// The `Host` (HTTP/2 `:authority`) the upstream receives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum HostHeader {
    /// The client's, as received (HAProxy's and Caddy's default; virtual hosts behind the
    /// proxy see the name the client asked for). The default.
    #[default]
    Keep,
    /// The upstream server's own `host:port` (nginx's default, `$proxy_host`).
    Upstream,
    /// This value.
    Set(String),
}

/// Header fields set, added and removed on the way (nginx's `proxy_set_header`, HAProxy's
/// `http-request set-header`). Removals apply first, then sets (which replace every field of
/// the name), then additions.
///
/// # Examples
/// ```
/// use peregrine::proxy::HeaderOps;
/// let ops = HeaderOps::default()
///     .set("x-env", "prod")
///     .add("x-tag", "a")
///     .remove("x-debug");
/// assert!(!ops.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeaderOps {
    pub(crate) set: Vec<(HeaderName, HeaderValue)>,
    pub(crate) add: Vec<(HeaderName, HeaderValue)>,
    pub(crate) remove: Vec<HeaderName>,
}

impl HeaderOps {
    /// Sets `name` to `value`, replacing what was received.
    ///
    /// # Panics
    /// When `name` is not a field name or `value` not a field value (CR, LF, NUL).
    pub fn set(mut self, name: &str, value: &str) -> HeaderOps {
        self.set.push(field(name, value));
        self
    }

    /// Adds a `name: value` field, keeping those received.
    ///
    /// # Panics
    /// As [`HeaderOps::set`].
    pub fn add(mut self, name: &str, value: &str) -> HeaderOps {
        self.add.push(field(name, value));
        self
    }

    /// Removes every `name` field received.
    ///
    /// # Panics
    /// When `name` is not a field name.
    pub fn remove(mut self, name: &str) -> HeaderOps {
        self.remove.push(HeaderName::from_bytes(name.as_bytes()).expect("a header field name"));
        self
    }

    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.add.is_empty() && self.remove.is_empty()
    }

    /// Whether a received field named `name` is dropped (removed, or replaced by a set).
    #[inline]
    pub(crate) fn drops(&self, name: &str) -> bool {
        !self.is_empty()
            && (self.remove.iter().any(|n| name.eq_ignore_ascii_case(n.as_str()))
                || self.set.iter().any(|(n, _)| name.eq_ignore_ascii_case(n.as_str())))
    }

    /// The fields this adds, sets first.
    pub(crate) fn added(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.set.iter().chain(&self.add).map(|(n, v)| (n.as_str(), v.as_bytes()))
    }
}

fn field(name: &str, value: &str) -> (HeaderName, HeaderValue) {
    (
        HeaderName::from_bytes(name.as_bytes()).expect("a header field name"),
        HeaderValue::from_str(value).expect("a header field value without CR, LF or NUL"),
    )
}

/// A route: the requests it takes (a host, a path prefix), where they go (an upstream pool),
/// and what changes on the way.
///
/// A request goes to the route whose host matches it (a route without one matches every
/// host) with the longest matching path prefix; a prefix matches at a segment boundary
/// (`/api` takes `/api`, `/api/x` and `/api?q`, not `/apix`). Routes with a host come before
/// routes without one.
///
/// # Examples
/// ```
/// use peregrine::proxy::{PathRewrite, Route, Upstreams};
/// let api = Route::new(Upstreams::new(["http://127.0.0.1:9001"])?)
///     .host("api.example.com")
///     .prefix("/v1")
///     .rewrite(PathRewrite::StripPrefix)
///     .max_body_bytes(1 << 20);
/// # drop(api);
/// # Ok::<(), peregrine::client::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Route {
    pub(crate) host: Option<String>,
    pub(crate) prefix: String,
    pub(crate) rewrite: PathRewrite,
    pub(crate) host_header: HostHeader,
    pub(crate) request_headers: HeaderOps,
    pub(crate) response_headers: HeaderOps,
    pub(crate) max_body_bytes: Option<u64>,
    pub(crate) target: Target,
}

/// Where a route's requests go.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    /// An upstream pool.
    Upstreams(Upstreams),
    /// Files, served as [`ServeDir`](crate::files::ServeDir) serves them.
    Files(crate::files::ServeDir),
}

impl Route {
    /// Every request (prefix `/`, any host) to `upstreams`, unchanged.
    pub fn new(upstreams: Upstreams) -> Route {
        Route::to(Target::Upstreams(upstreams))
    }

    /// Every request (prefix `/`, any host) answered from the files of `dir`, as `peregrine
    /// serve` answers (the path after the prefix, with [`PathRewrite::StripPrefix`], or the
    /// whole path); the header and Host settings do not apply.
    ///
    /// # Examples
    /// ```no_run
    /// use peregrine::files::ServeDir;
    /// use peregrine::proxy::{PathRewrite, Route};
    /// let assets = Route::files(ServeDir::new("./public")?).prefix("/static").rewrite(PathRewrite::StripPrefix);
    /// # drop(assets);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn files(dir: crate::files::ServeDir) -> Route {
        Route::to(Target::Files(dir))
    }

    fn to(target: Target) -> Route {
        Route {
            host: None,
            prefix: "/".to_owned(),
            rewrite: PathRewrite::Keep,
            host_header: HostHeader::Keep,
            request_headers: HeaderOps::default(),
            response_headers: HeaderOps::default(),
            max_body_bytes: None,
            target,
        }
    }

    /// Only requests for this host (compared without the port, case-insensitively; a leading
    /// `*.` matches any subdomain).
    pub fn host(mut self, host: &str) -> Route {
        self.host = Some(host.to_ascii_lowercase());
        self
    }

    /// Only requests whose path starts with `prefix` (at a segment boundary).
    ///
    /// # Panics
    /// When `prefix` does not start with `/`.
    pub fn prefix(mut self, prefix: &str) -> Route {
        assert!(prefix.starts_with('/'), "a path prefix starts with '/'");
        self.prefix = prefix.to_owned();
        self
    }

    /// How the path is rewritten.
    pub fn rewrite(mut self, rewrite: PathRewrite) -> Route {
        self.rewrite = rewrite;
        self
    }

    /// The Host the upstream receives.
    pub fn host_header(mut self, host: HostHeader) -> Route {
        self.host_header = host;
        self
    }

    /// Fields set, added or removed on requests.
    pub fn request_headers(mut self, ops: HeaderOps) -> Route {
        self.request_headers = ops;
        self
    }

    /// Fields set, added or removed on responses.
    pub fn response_headers(mut self, ops: HeaderOps) -> Route {
        self.response_headers = ops;
        self
    }

    /// The largest request body taken on this route (413 beyond; the server's own limit
    /// applies first).
    pub fn max_body_bytes(mut self, n: u64) -> Route {
        self.max_body_bytes = Some(n);
        self
    }

    /// Whether the route takes a request for `host` (without port) and `path`; its rank when
    /// it does (longer prefixes, and routes with a host, rank higher).
    pub(crate) fn rank(&self, host: Option<&str>, path: &str) -> Option<(bool, usize)> {
        if let Some(want) = &self.host {
            let host = host?;
            let ok = match want.strip_prefix("*.") {
                Some(suffix) => {
                    host.len() > suffix.len() + 1
                        && host[host.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
                        && host.as_bytes()[host.len() - suffix.len() - 1] == b'.'
                }
                None => host.eq_ignore_ascii_case(want),
            };
            if !ok {
                return None;
            }
        }
        prefix_matches(&self.prefix, path).then_some((self.host.is_some(), self.prefix.len()))
    }

    /// Appends the target sent upstream for `path` and `query` to `out`.
    pub(crate) fn target(&self, path: &str, query: Option<&str>, out: &mut Vec<u8>) {
        let rest = || path.get(self.prefix.trim_end_matches('/').len()..).unwrap_or("");
        match &self.rewrite {
            PathRewrite::Keep => out.extend_from_slice(path.as_bytes()),
            PathRewrite::StripPrefix => {
                let rest = rest();
                if !rest.starts_with('/') {
                    out.push(b'/');
                }
                out.extend_from_slice(rest.as_bytes());
            }
            PathRewrite::ReplacePrefix(with) => {
                let rest = rest();
                let with = if rest.starts_with('/') { with.trim_end_matches('/') } else { with };
                out.extend_from_slice(with.as_bytes());
                if with.is_empty() && !rest.starts_with('/') {
                    out.push(b'/');
                }
                out.extend_from_slice(rest.as_bytes());
            }
        }
        if let Some(q) = query {
            out.push(b'?');
            out.extend_from_slice(q.as_bytes());
        }
    }
}

/// Whether `prefix` matches `path` at a segment boundary.
fn prefix_matches(prefix: &str, path: &str) -> bool {
    if prefix == "/" || prefix.ends_with('/') {
        return path.starts_with(prefix) || path == prefix.trim_end_matches('/');
    }
    path.starts_with(prefix) && matches!(path.as_bytes().get(prefix.len()), None | Some(b'/'))
}

/// The host of a Host value, without its port (an IPv6 literal keeps its brackets).
pub(crate) fn host_only(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.find(']').map_or(authority, |i| &authority[..=i]);
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route() -> Route {
        Route::new(Upstreams::new(["http://127.0.0.1:1"]).unwrap())
    }

    #[test]
    fn prefixes_match_at_segment_boundaries() {
        struct Case {
            prefix: &'static str,
            path: &'static str,
            matches: bool,
        }
        let cases = [
            Case { prefix: "/", path: "/", matches: true },
            Case { prefix: "/", path: "/anything", matches: true },
            Case { prefix: "/api", path: "/api", matches: true },
            Case { prefix: "/api", path: "/api/", matches: true },
            Case { prefix: "/api", path: "/api/x/y", matches: true },
            Case { prefix: "/api", path: "/apix", matches: false },
            Case { prefix: "/api", path: "/ap", matches: false },
            Case { prefix: "/api/", path: "/api", matches: true },
            Case { prefix: "/api/", path: "/api/x", matches: true },
            Case { prefix: "/api/", path: "/apix", matches: false },
        ];
        for case in cases {
            assert_eq!(
                prefix_matches(case.prefix, case.path),
                case.matches,
                "{} {}",
                case.prefix,
                case.path
            );
        }
    }

    #[test]
    fn hosts_and_ranks() {
        let r = route().host("Example.COM").prefix("/a");
        assert_eq!(r.rank(Some("example.com"), "/a/b"), Some((true, 2)));
        assert_eq!(r.rank(Some("other.com"), "/a/b"), None);
        assert_eq!(r.rank(None, "/a/b"), None);
        let w = route().host("*.example.com");
        assert!(w.rank(Some("api.example.com"), "/").is_some());
        assert!(w.rank(Some("example.com"), "/").is_none());
        assert!(w.rank(Some("xexample.com"), "/").is_none());
        assert_eq!(route().rank(Some("any"), "/x"), Some((false, 1)));
        assert_eq!(host_only("example.com:8080"), "example.com");
        assert_eq!(host_only("[::1]:8080"), "[::1]");
        assert_eq!(host_only("[::1]"), "[::1]");
        assert_eq!(host_only("h"), "h");
    }

    #[test]
    fn targets_rewritten() {
        struct Case {
            prefix: &'static str,
            rewrite: PathRewrite,
            path: &'static str,
            query: Option<&'static str>,
            expect: &'static str,
        }
        let replace = |s: &str| PathRewrite::ReplacePrefix(s.to_owned());
        let cases = [
            Case {
                prefix: "/api",
                rewrite: PathRewrite::Keep,
                path: "/api/x",
                query: Some("q=1"),
                expect: "/api/x?q=1",
            },
            Case {
                prefix: "/api",
                rewrite: PathRewrite::StripPrefix,
                path: "/api/x",
                query: None,
                expect: "/x",
            },
            Case {
                prefix: "/api",
                rewrite: PathRewrite::StripPrefix,
                path: "/api",
                query: Some(""),
                expect: "/?",
            },
            Case {
                prefix: "/api/",
                rewrite: PathRewrite::StripPrefix,
                path: "/api/x",
                query: None,
                expect: "/x",
            },
            Case {
                prefix: "/",
                rewrite: PathRewrite::StripPrefix,
                path: "/x",
                query: None,
                expect: "/x",
            },
            Case {
                prefix: "/api",
                rewrite: replace("/v2"),
                path: "/api/x",
                query: None,
                expect: "/v2/x",
            },
            Case {
                prefix: "/api",
                rewrite: replace("/v2/"),
                path: "/api/x",
                query: None,
                expect: "/v2/x",
            },
            Case {
                prefix: "/api",
                rewrite: replace("/v2"),
                path: "/api",
                query: None,
                expect: "/v2",
            },
            Case {
                prefix: "/api",
                rewrite: replace("/"),
                path: "/api/x",
                query: Some("a"),
                expect: "/x?a",
            },
            Case {
                prefix: "/",
                rewrite: replace("/base"),
                path: "/x",
                query: None,
                expect: "/base/x",
            },
        ];
        for case in cases {
            let r = route().prefix(case.prefix).rewrite(case.rewrite);
            let mut out = Vec::new();
            r.target(case.path, case.query, &mut out);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                case.expect,
                "{} {}",
                case.prefix,
                case.path
            );
        }
    }

    #[test]
    fn header_ops_drop_what_they_replace() {
        let ops = HeaderOps::default().set("X-A", "1").remove("x-b").add("x-c", "2");
        assert!(ops.drops("x-a") && ops.drops("X-B") && !ops.drops("x-c"));
        let added: Vec<_> = ops.added().collect();
        assert_eq!(added, [("x-a", &b"1"[..]), ("x-c", &b"2"[..])]);
    }
}
