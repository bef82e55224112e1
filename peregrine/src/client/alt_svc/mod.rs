//! What the [`Client`](super::Client) learned from `Alt-Svc` (RFC 7838): per `https` origin,
//! the HTTP/3 alternative its HTTP/1.1 and HTTP/2 responses advertised, until when it is
//! fresh, and whether it is broken (a QUIC attempt failed) and until when.
//!
//! - Learning replaces (RFC 7838 §3): a field naming an `h3` alternative sets it, one naming
//!   none or saying `clear` removes the origin's entry; a malformed field changes nothing.
//!   Only `h3` counts (RFC 9114 §3.1), drafts' `h3-NN` do not.
//! - An alternative on another host is used too: the connection to it names and verifies
//!   the origin's host (SNI and certificate, RFC 7838 §2.1), as to the origin itself.
//! - Broken: after a failed attempt the alternative is left alone for 5 minutes, doubling
//!   with each failure in a row up to 5 × 2^8 minutes (about 21 hours); a connection that
//!   works resets it. A newly advertised alternative (another host or port) starts unbroken.
//! - Bounded: at most [`MAX_ORIGINS`] origins; a new one past that evicts the entry that
//!   expires first (stale ones first of all), so no bookkeeping is written per request.
//! - `persist` is read but changes nothing: the client does not watch for network changes,
//!   so every entry lives until its `ma` runs out (RFC 7838 §3.1 allows clearing on a change,
//!   it does not require watching).
//!
//! The clock is the caller's: every method takes `now`.

pub(crate) mod field;

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::origin::{Origin, UrlParts};
use field::{Choice, choose};

/// Origins remembered at once.
pub(crate) const MAX_ORIGINS: usize = 256;

/// How long a failed alternative is left alone the first time.
const BROKEN_FIRST: Duration = Duration::from_secs(5 * 60);

/// Doublings of [`BROKEN_FIRST`] at most.
const BROKEN_MAX_DOUBLINGS: u32 = 8;

/// How a request to an origin goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// To the origin over TCP: no alternative known.
    Origin,
    /// Over an alternative connection already open, if there is one; else to the origin: the
    /// alternative is stale or broken, and RFC 7838 §3.1 lets a client keep using a connection
    /// it has ("Clients with existing connections to an alternative service do not need to
    /// stop using it when its freshness lifetime ends").
    Existing,
    /// Over the alternative, connecting if there is no connection to it yet.
    Alternative,
}

/// Where to connect for an origin's alternative.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    /// `None`: the origin's host.
    pub(crate) host: Option<Box<str>>,
    pub(crate) port: u16,
}

#[derive(Debug)]
struct Entry {
    origin: Origin,
    target: Target,
    expires: Instant,
    /// Until when the alternative is not tried (a QUIC attempt failed).
    broken_until: Option<Instant>,
    /// Failed attempts in a row.
    failures: u32,
}

/// The cache; see the [module docs](self).
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: Mutex<Vec<Entry>>,
}

impl Cache {
    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How a request to `parts`'s origin goes at `now` (no allocation).
    pub(crate) fn route(&self, parts: &UrlParts<'_>, now: Instant) -> Route {
        let entries = self.lock();
        match entries.iter().find(|e| e.origin.matches(parts)) {
            None => Route::Origin,
            Some(e) if now < e.expires && e.broken_until.is_none_or(|t| t <= now) => {
                Route::Alternative
            }
            Some(_) => Route::Existing,
        }
    }

    /// Where to connect for `parts`'s alternative, if it is fresh and not broken at `now`.
    pub(crate) fn target(&self, parts: &UrlParts<'_>, now: Instant) -> Option<Target> {
        if self.route(parts, now) != Route::Alternative {
            return None;
        }
        let entries = self.lock();
        entries.iter().find(|e| e.origin.matches(parts)).map(|e| e.target.clone())
    }

    /// Learns from the `Alt-Svc` field lines of a response of `parts`'s origin received at
    /// `now`, whose `Age` was `age` seconds (RFC 7838 §3.1: freshness counts from when the
    /// response was generated). Allocates only for an origin or a host not known before.
    pub(crate) fn learn<'a, I>(&self, parts: &UrlParts<'_>, lines: I, age: u64, now: Instant)
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let alt = match choose(lines, b"h3") {
            Ok(Choice::Use(Some(alt))) => alt,
            Ok(Choice::Clear | Choice::Use(None)) => return self.forget(parts),
            Err(_) => {
                tracing::debug!(origin = parts.host, "a malformed Alt-Svc field ignored");
                return;
            }
        };
        let lifetime = Duration::from_secs(alt.max_age.saturating_sub(age));
        let Some(expires) = now.checked_add(lifetime).filter(|_| !lifetime.is_zero()) else {
            return self.forget(parts);
        };
        let same_host = alt.host.is_empty() || alt.host.eq_ignore_ascii_case(parts.host);
        let mut entries = self.lock();
        if let Some(e) = entries.iter_mut().find(|e| e.origin.matches(parts)) {
            let target_host = e.target.host.as_deref();
            let unchanged = e.target.port == alt.port
                && match target_host {
                    None => same_host,
                    Some(h) => !same_host && h.eq_ignore_ascii_case(alt.host),
                };
            if !unchanged {
                e.target = target(same_host, alt.host, alt.port);
                e.broken_until = None;
                e.failures = 0;
            }
            e.expires = expires;
            return;
        }
        if entries.len() >= MAX_ORIGINS {
            let first = entries.iter().enumerate().min_by_key(|(_, e)| e.expires).map(|(i, _)| i);
            if let Some(i) = first {
                entries.swap_remove(i);
            }
        }
        entries.push(Entry {
            origin: Origin::new(parts.scheme, parts.host, parts.port),
            target: target(same_host, alt.host, alt.port),
            expires,
            broken_until: None,
            failures: 0,
        });
    }

    /// Removes `parts`'s origin.
    fn forget(&self, parts: &UrlParts<'_>) {
        self.lock().retain(|e| !e.origin.matches(parts));
    }

    /// A QUIC attempt to `parts`'s alternative failed at `now`: it is left alone for a while.
    pub(crate) fn broken(&self, parts: &UrlParts<'_>, now: Instant) {
        if let Some(e) = self.lock().iter_mut().find(|e| e.origin.matches(parts)) {
            let doublings = e.failures.min(BROKEN_MAX_DOUBLINGS);
            e.broken_until = Some(now + BROKEN_FIRST * (1 << doublings));
            e.failures = e.failures.saturating_add(1);
        }
    }

    /// A connection to `parts`'s alternative works: failures before it are forgotten.
    pub(crate) fn confirmed(&self, parts: &UrlParts<'_>) {
        if let Some(e) = self.lock().iter_mut().find(|e| e.origin.matches(parts)) {
            e.broken_until = None;
            e.failures = 0;
        }
    }

    /// Until when `parts`'s alternative is left alone (tests and stats).
    pub(crate) fn broken_until(&self, parts: &UrlParts<'_>) -> Option<Instant> {
        let entries = self.lock();
        entries.iter().find(|e| e.origin.matches(parts)).and_then(|e| e.broken_until)
    }

    /// Origins remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

fn target(same_host: bool, host: &str, port: u16) -> Target {
    Target { host: (!same_host).then(|| host.into()), port }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(url: &str) -> UrlParts<'_> {
        UrlParts::parse(url).unwrap()
    }

    /// One step of a conversation with the cache, and what it says after.
    enum Step {
        /// An `Alt-Svc` line on a response of the origin, with its `Age`, at `at` seconds.
        Learn {
            value: &'static str,
            age: u64,
            at: u64,
        },
        Broken {
            at: u64,
        },
        Confirmed,
        /// The route and target at `at` seconds.
        Expect {
            at: u64,
            route: Route,
            target: Option<(Option<&'static str>, u16)>,
        },
    }

    struct Case {
        name: &'static str,
        steps: &'static [Step],
    }

    #[test]
    fn the_cache_follows_rfc7838() {
        use Route::{Alternative, Existing, Origin};
        use Step::*;
        const MIN: u64 = 60;
        let cases = [
            Case {
                name: "default max age is 24 hours",
                steps: &[
                    Expect { at: 0, route: Origin, target: None },
                    Learn { value: r#"h3=":8443""#, age: 0, at: 0 },
                    Expect { at: 1, route: Alternative, target: Some((None, 8443)) },
                    Expect { at: 86_399, route: Alternative, target: Some((None, 8443)) },
                    Expect { at: 86_400, route: Existing, target: None },
                ],
            },
            Case {
                name: "ma and Age",
                steps: &[
                    Learn { value: r#"h3=":1"; ma=100"#, age: 30, at: 0 },
                    Expect { at: 69, route: Alternative, target: Some((None, 1)) },
                    Expect { at: 70, route: Existing, target: None },
                    // Already stale when received: forgotten.
                    Learn { value: r#"h3=":1"; ma=100"#, age: 100, at: 71 },
                    Expect { at: 71, route: Origin, target: None },
                ],
            },
            Case {
                name: "only h3 counts, the first one, the same host dropped",
                steps: &[
                    Learn { value: r#"h3-29=":1", h3="EXAMPLE.com:2", h3=":3""#, age: 0, at: 0 },
                    Expect { at: 0, route: Alternative, target: Some((None, 2)) },
                    Learn { value: r#"h3="other.example:4""#, age: 0, at: 0 },
                    Expect { at: 0, route: Alternative, target: Some((Some("other.example"), 4)) },
                ],
            },
            Case {
                name: "clear, and a field with no h3, remove the entry",
                steps: &[
                    Learn { value: r#"h3=":1""#, age: 0, at: 0 },
                    Learn { value: "clear", age: 0, at: 1 },
                    Expect { at: 1, route: Origin, target: None },
                    Learn { value: r#"h3=":1""#, age: 0, at: 2 },
                    Learn { value: r#"h2=":1""#, age: 0, at: 3 },
                    Expect { at: 3, route: Origin, target: None },
                ],
            },
            Case {
                name: "a malformed field changes nothing",
                steps: &[
                    Learn { value: r#"h3=":1""#, age: 0, at: 0 },
                    Learn { value: r#"h3=":2"; ma=x"#, age: 0, at: 1 },
                    Learn { value: "clear, h3=", age: 0, at: 1 },
                    Expect { at: 1, route: Alternative, target: Some((None, 1)) },
                ],
            },
            Case {
                name: "broken: 5 minutes, doubling; confirmed resets",
                steps: &[
                    Learn { value: r#"h3=":1""#, age: 0, at: 0 },
                    Broken { at: 10 },
                    Expect { at: 11, route: Existing, target: None },
                    Expect { at: 10 + 5 * MIN, route: Alternative, target: Some((None, 1)) },
                    Broken { at: 1000 },
                    Expect { at: 1000 + 10 * MIN - 1, route: Existing, target: None },
                    Expect { at: 1000 + 10 * MIN, route: Alternative, target: Some((None, 1)) },
                    Confirmed,
                    Broken { at: 5000 },
                    Expect { at: 5000 + 5 * MIN, route: Alternative, target: Some((None, 1)) },
                ],
            },
            Case {
                name: "refreshing the same alternative keeps it broken; another one is tried",
                steps: &[
                    Learn { value: r#"h3=":1""#, age: 0, at: 0 },
                    Broken { at: 0 },
                    Learn { value: r#"h3=":1""#, age: 0, at: 1 },
                    Expect { at: 2, route: Existing, target: None },
                    Learn { value: r#"h3=":2""#, age: 0, at: 3 },
                    Expect { at: 3, route: Alternative, target: Some((None, 2)) },
                ],
            },
        ];
        let base = Instant::now();
        let origin = parts("https://example.com/");
        for case in cases {
            let cache = Cache::default();
            for (i, step) in case.steps.iter().enumerate() {
                let s = |secs: u64| base + Duration::from_secs(secs);
                match *step {
                    Learn { value, age, at } => {
                        cache.learn(&origin, [value.as_bytes()], age, s(at))
                    }
                    Broken { at } => cache.broken(&origin, s(at)),
                    Confirmed => cache.confirmed(&origin),
                    Expect { at, route, target } => {
                        assert_eq!(cache.route(&origin, s(at)), route, "{}: step {i}", case.name);
                        let want = target.map(|(h, port)| Target { host: h.map(Into::into), port });
                        assert_eq!(cache.target(&origin, s(at)), want, "{}: step {i}", case.name);
                    }
                }
            }
        }
    }

    #[test]
    fn the_cache_is_bounded_and_evicts_what_expires_first() {
        let cache = Cache::default();
        let now = Instant::now();
        let urls: Vec<String> =
            (0..=MAX_ORIGINS).map(|i| format!("https://h{i}.example/")).collect();
        // h0 expires first (ma=10); the others in a day.
        cache.learn(&parts(&urls[0]), [&br#"h3=":1"; ma=10"#[..]], 0, now);
        for url in &urls[1..MAX_ORIGINS] {
            cache.learn(&parts(url), [&br#"h3=":1""#[..]], 0, now);
        }
        assert_eq!(cache.len(), MAX_ORIGINS);
        cache.learn(&parts(&urls[MAX_ORIGINS]), [&br#"h3=":1""#[..]], 0, now);
        assert_eq!(cache.len(), MAX_ORIGINS);
        assert_eq!(cache.route(&parts(&urls[0]), now), Route::Origin);
        assert_eq!(cache.route(&parts(&urls[1]), now), Route::Alternative);
        assert_eq!(cache.route(&parts(&urls[MAX_ORIGINS]), now), Route::Alternative);
        // Another origin (scheme or port) is another entry.
        assert_eq!(cache.route(&parts("https://h1.example:8443/"), now), Route::Origin);
    }
}
