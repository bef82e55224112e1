//! An upstream pool: its servers, how one is chosen ([`Balance`]), how each is judged healthy
//! (active checks, [`HealthCheck`]; passive ejection, [`Eject`]), the retry budget, the
//! timeouts, and the connection settings its connections share.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::balance::{self, Balance, Ring, Rng};
use super::retry::Budget;
use crate::client::conn::{Config, Versions};
use crate::client::{Error, Origin, TlsConfig};

/// The protocol spoken to the upstream servers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UpstreamProtocol {
    /// HTTP/1.1 (with `https`, ALPN offers `http/1.1` alone), as nginx speaks to upstreams.
    #[default]
    Http1,
    /// HTTP/2: h2c by prior knowledge for `http://` (RFC 9113 §3.3), ALPN `h2` for
    /// `https://`.
    Http2,
}

/// Timeouts of the exchange with an upstream; each one passed is answered 504 (the connect
/// and TLS ones 502 after the retries), with the reason in the log.
///
/// | Timeout | Default | nginx | HAProxy |
/// |---|---|---|---|
/// | `connect` (DNS and TCP) | 5 s | `proxy_connect_timeout` 60 s | `timeout connect` |
/// | `tls` (handshake) | 10 s | (in connect) | (in connect) |
/// | `response_head` (from the request sent to the response head) | 60 s | `proxy_read_timeout` | `timeout server` |
/// | `idle` (no byte from the upstream while a response or its body is awaited) | 60 s | `proxy_read_timeout` 60 s | `timeout server` |
/// | `total` (the request until the response head, retries included) | none | — | — |
/// | `pool_idle` (an idle kept-alive connection is closed) | 60 s | `keepalive_timeout` | `timeout server` |
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use peregrine::proxy::Timeouts;
/// let t = Timeouts { connect: Duration::from_secs(1), ..Timeouts::default() };
/// assert_eq!(t.idle, Duration::from_secs(60));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// DNS and the TCP connection.
    pub connect: Duration,
    /// The TLS handshake.
    pub tls: Duration,
    /// From the request written to the response head.
    pub response_head: Duration,
    /// No byte from the upstream for this long while a response is awaited.
    pub idle: Duration,
    /// The request until its response head, every attempt included (`None`: no limit).
    pub total: Option<Duration>,
    /// How long an idle kept-alive upstream connection is kept.
    pub pool_idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(5),
            tls: Duration::from_secs(10),
            response_head: Duration::from_secs(60),
            idle: Duration::from_secs(60),
            total: None,
            pool_idle: Duration::from_secs(60),
        }
    }
}

/// Active health checks: a `GET` of `path` on every upstream each `interval`; `fall`
/// consecutive failures (no answer within `timeout`, or a status other than 2xx and 3xx) take
/// an upstream out, `rise` consecutive successes put it back (HAProxy's `check inter rise
/// fall`). Every upstream starts in.
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use peregrine::proxy::HealthCheck;
/// let check = HealthCheck::new("/healthz").interval(Duration::from_secs(2)).fall(2);
/// # drop(check);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthCheck {
    pub(crate) path: String,
    pub(crate) interval: Duration,
    pub(crate) timeout: Duration,
    pub(crate) rise: u32,
    pub(crate) fall: u32,
}

impl HealthCheck {
    /// Checks of `path` every 5 s (timeout 2 s), out after 3 failures, back after 2 successes.
    pub fn new(path: impl Into<String>) -> HealthCheck {
        HealthCheck {
            path: path.into(),
            interval: Duration::from_secs(5),
            timeout: Duration::from_secs(2),
            rise: 2,
            fall: 3,
        }
    }

    /// Time between two checks of an upstream.
    pub fn interval(mut self, d: Duration) -> HealthCheck {
        self.interval = d;
        self
    }

    /// Longest wait for a check's answer.
    pub fn timeout(mut self, d: Duration) -> HealthCheck {
        self.timeout = d;
        self
    }

    /// Consecutive successes that put an upstream back (at least 1).
    pub fn rise(mut self, n: u32) -> HealthCheck {
        self.rise = n.max(1);
        self
    }

    /// Consecutive failures that take an upstream out (at least 1).
    pub fn fall(mut self, n: u32) -> HealthCheck {
        self.fall = n.max(1);
        self
    }
}

/// Passive health: an upstream whose requests fail `after` times in a row (no connection, a
/// broken response, a timeout) is taken out for `duration`; then one request probes it, and
/// it is back when that succeeds (out again for `duration` when it fails). Envoy's outlier
/// detection, nginx's `max_fails`/`fail_timeout`. `after: 0` turns it off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eject {
    /// Consecutive failures that take an upstream out (default 5; 0: never).
    pub after: u32,
    /// How long it stays out before a probe (default 10 s).
    pub duration: Duration,
}

impl Default for Eject {
    fn default() -> Eject {
        Eject { after: 5, duration: Duration::from_secs(10) }
    }
}

/// Retries of a request that failed before any byte of its response came back: on another
/// upstream, for idempotent requests (RFC 9110 §9.2.2) whose body is empty, up to `attempts`
/// more times, within a budget of `budget_percent` percent of the pool's requests (plus a
/// reserve of 10). A connection that could not be opened is always tried elsewhere (nothing
/// was sent), within the same budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retries {
    /// More attempts after the first (default 2; 0: no retry).
    pub attempts: u32,
    /// Retries as a share of requests, in percent (default 20).
    pub budget_percent: u32,
}

impl Default for Retries {
    fn default() -> Retries {
        Retries { attempts: 2, budget_percent: 20 }
    }
}

/// A pool of upstream servers and how requests reach them; see the [module docs](super).
///
/// # Examples
/// ```
/// use peregrine::proxy::{Balance, Upstreams};
/// let pool = Upstreams::new(["http://127.0.0.1:9001", "http://127.0.0.1:9002"])?
///     .balance(Balance::LeastRequests);
/// assert_eq!(pool.len(), 2);
/// # Ok::<(), peregrine::client::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Upstreams {
    pub(crate) servers: Vec<(Origin, String)>,
    pub(crate) balance: Balance,
    pub(crate) protocol: UpstreamProtocol,
    pub(crate) timeouts: Timeouts,
    pub(crate) health: Option<HealthCheck>,
    pub(crate) eject: Eject,
    pub(crate) retries: Retries,
    pub(crate) max_idle: usize,
    pub(crate) tls: Option<TlsConfig>,
    pub(crate) max_response_head: usize,
    pub(crate) seed: Option<u64>,
}

impl Upstreams {
    /// A pool of the servers at `urls` (`http://host:port` or `https://host:port`; a path is
    /// ignored), round-robin, HTTP/1.1, with the default timeouts, passive ejection and
    /// retries, and up to 64 idle connections per server per worker.
    ///
    /// # Errors
    /// [`Error::is_request`] for a URL that is not `http` or `https`, or an empty list.
    pub fn new<I, S>(urls: I) -> Result<Upstreams, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut servers = Vec::new();
        for url in urls {
            let (origin, _) = Origin::parse(url.as_ref())?;
            let name = origin.to_string();
            servers.push((origin, name));
        }
        if servers.is_empty() {
            return Err(Error::new(crate::client::error::Kind::Request, "no upstream server"));
        }
        Ok(Upstreams {
            servers,
            balance: Balance::RoundRobin,
            protocol: UpstreamProtocol::Http1,
            timeouts: Timeouts::default(),
            health: None,
            eject: Eject::default(),
            retries: Retries::default(),
            max_idle: 64,
            tls: None,
            max_response_head: 64 * 1024,
            seed: None,
        })
    }

    /// The number of servers.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Whether there are none (never: [`Upstreams::new`] refuses an empty list).
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// How a server is chosen for each request.
    pub fn balance(mut self, balance: Balance) -> Upstreams {
        self.balance = balance;
        self
    }

    /// The protocol spoken to the servers.
    pub fn protocol(mut self, protocol: UpstreamProtocol) -> Upstreams {
        self.protocol = protocol;
        self
    }

    /// The timeouts.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Upstreams {
        self.timeouts = timeouts;
        self
    }

    /// Active health checks.
    pub fn health_check(mut self, check: HealthCheck) -> Upstreams {
        self.health = Some(check);
        self
    }

    /// Passive ejection.
    pub fn eject(mut self, eject: Eject) -> Upstreams {
        self.eject = eject;
        self
    }

    /// Retries.
    pub fn retries(mut self, retries: Retries) -> Upstreams {
        self.retries = retries;
        self
    }

    /// Idle connections kept per server by each worker thread (nginx's `keepalive`; 0: a
    /// connection per request).
    pub fn max_idle(mut self, n: usize) -> Upstreams {
        self.max_idle = n;
        self
    }

    /// What TLS trusts for `https` servers (default: Mozilla's roots).
    pub fn tls(mut self, tls: TlsConfig) -> Upstreams {
        self.tls = Some(tls);
        self
    }

    /// The seed of the random choices of [`Balance::LeastRequests`] (by default each worker
    /// seeds from the clock): for tests that want the same choices every run.
    pub fn seed(mut self, seed: u64) -> Upstreams {
        self.seed = Some(seed);
        self
    }

    /// The connection settings every connection of the pool shares.
    fn connection_config(&self) -> Config {
        let versions = match self.protocol {
            UpstreamProtocol::Http1 => Versions::Http1Only,
            UpstreamProtocol::Http2 => Versions::Http2Only,
        };
        let limits = crate::http1::Limits {
            max_head_bytes: self.max_response_head,
            ..crate::http1::Limits::default()
        };
        let mut config = Config::default()
            .connect_timeout(self.timeouts.connect)
            .tls_handshake_timeout(self.timeouts.tls)
            .read_timeout(Some(self.timeouts.idle))
            .max_body_bytes(u64::MAX)
            .head_limits(limits)
            .versions(versions);
        if let Some(tls) = &self.tls {
            config = config.tls(tls.clone());
        }
        config
    }
}

/// One server's state, shared by every worker.
#[derive(Debug)]
pub(crate) struct Server {
    pub(crate) origin: Origin,
    /// Its URL, for the log and the metrics.
    pub(crate) name: Arc<str>,
    /// Requests sent and not yet answered in full (for least-requests).
    pub(crate) in_flight: AtomicUsize,
    /// Consecutive failed requests (passive health).
    fails: AtomicU32,
    /// Milliseconds since the pool's start until which it is out (0: in).
    ejected_until: AtomicU64,
    /// What the active checks say (true when there are none).
    pub(crate) healthy: AtomicBool,
    /// Requests sent, failures, for the metrics.
    pub(crate) requests: AtomicU64,
    pub(crate) failures: AtomicU64,
}

/// An upstream pool as requests use it: the configuration, the servers' state, the budget.
#[derive(Debug)]
pub(crate) struct Pool {
    /// A number for this pool, unique in the process (the workers' idle lists are keyed by it).
    pub(crate) id: usize,
    pub(crate) servers: Vec<Server>,
    pub(crate) balance: Balance,
    ring: Option<Ring>,
    rr: AtomicUsize,
    pub(crate) config: Config,
    pub(crate) timeouts: Timeouts,
    pub(crate) eject: Eject,
    pub(crate) retries: Retries,
    pub(crate) budget: Budget,
    pub(crate) max_idle: usize,
    pub(crate) health: Option<HealthCheck>,
    pub(crate) seed: Option<u64>,
    start: Instant,
}

static POOL_IDS: AtomicUsize = AtomicUsize::new(1);

impl Pool {
    pub(crate) fn new(u: &Upstreams) -> Arc<Pool> {
        let servers = u
            .servers
            .iter()
            .map(|(origin, name)| Server {
                origin: origin.clone(),
                name: name.as_str().into(),
                in_flight: AtomicUsize::new(0),
                fails: AtomicU32::new(0),
                ejected_until: AtomicU64::new(0),
                healthy: AtomicBool::new(true),
                requests: AtomicU64::new(0),
                failures: AtomicU64::new(0),
            })
            .collect::<Vec<_>>();
        let ring = match u.balance {
            Balance::Hash(_) => Some(Ring::new(u.servers.iter().map(|(_, n)| n.as_str()))),
            _ => None,
        };
        Arc::new(Pool {
            id: POOL_IDS.fetch_add(1, Ordering::Relaxed),
            servers,
            balance: u.balance.clone(),
            ring,
            rr: AtomicUsize::new(0),
            config: u.connection_config(),
            timeouts: u.timeouts,
            eject: u.eject,
            retries: u.retries,
            budget: Budget::new(u.retries.budget_percent, 10),
            max_idle: u.max_idle,
            health: u.health.clone(),
            seed: u.seed,
            start: Instant::now(),
        })
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64 + 1
    }

    /// Whether server `i` may take a request now, and whether it is a probe after an
    /// ejection (`Some(true)`); `None` when it is out. Claiming a probe moves the ejection on,
    /// so one request probes per period.
    fn usable(&self, i: usize, claim: bool) -> bool {
        let s = &self.servers[i];
        if !s.healthy.load(Ordering::Relaxed) {
            return false;
        }
        let until = s.ejected_until.load(Ordering::Relaxed);
        if until == 0 {
            return true;
        }
        let now = self.now_ms();
        if now < until {
            return false;
        }
        if !claim {
            return true;
        }
        let next = now + self.eject.duration.as_millis() as u64;
        s.ejected_until.compare_exchange(until, next, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }

    /// Whether server `i` is in: healthy by the active checks, and not ejected.
    pub(crate) fn is_up(&self, i: usize) -> bool {
        let s = &self.servers[i];
        s.healthy.load(Ordering::Relaxed) && s.ejected_until.load(Ordering::Relaxed) == 0
    }

    /// Chooses a server for a request with hash `key` (for [`Balance::Hash`]), avoiding those
    /// in `tried`; `None` when none is usable.
    pub(crate) fn pick(&self, key: Option<u64>, tried: u64, rng: &mut Rng) -> Option<usize> {
        let n = self.servers.len();
        let fresh = |i: usize| i >= 64 || tried & (1 << i) == 0;
        let usable = |i: usize| fresh(i) && self.usable(i, false);
        let chosen = match (&self.balance, &self.ring, key) {
            (Balance::Hash(_), Some(ring), Some(key)) => ring.pick(key, usable),
            (Balance::LeastRequests, _, _) => balance::least_requests(rng, n, usable, |i| {
                self.servers[i].in_flight.load(Ordering::Relaxed)
            }),
            _ => balance::round_robin(&self.rr, n, usable),
        }?;
        // A server past its ejection is claimed as the probe; another request that raced for
        // the same probe goes elsewhere.
        if self.servers[chosen].ejected_until.load(Ordering::Relaxed) != 0
            && !self.usable(chosen, true)
        {
            return balance::round_robin(&self.rr, n, |i| {
                usable(i) && self.servers[i].ejected_until.load(Ordering::Relaxed) == 0
            });
        }
        Some(chosen)
    }

    /// A request to server `i` succeeded: its failures are forgotten (a probe brings it back).
    pub(crate) fn succeeded(&self, i: usize) {
        let s = &self.servers[i];
        if s.fails.load(Ordering::Relaxed) != 0 {
            s.fails.store(0, Ordering::Relaxed);
        }
        if s.ejected_until.load(Ordering::Relaxed) != 0 {
            s.ejected_until.store(0, Ordering::Relaxed);
            tracing::info!(upstream = %s.name, "upstream back after a successful probe");
        }
    }

    /// A request to server `i` failed; `after` of them in a row eject it.
    pub(crate) fn failed(&self, i: usize) {
        let s = &self.servers[i];
        s.failures.fetch_add(1, Ordering::Relaxed);
        let fails = s.fails.fetch_add(1, Ordering::Relaxed) + 1;
        let probing = s.ejected_until.load(Ordering::Relaxed) != 0;
        if self.eject.after > 0 && (fails >= self.eject.after || probing) {
            let until = self.now_ms() + self.eject.duration.as_millis() as u64;
            s.ejected_until.store(until, Ordering::Relaxed);
            if !probing {
                tracing::warn!(
                    upstream = %s.name,
                    failures = fails,
                    "upstream ejected for {:?} after consecutive failures",
                    self.eject.duration
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(n: usize, eject: Eject) -> Arc<Pool> {
        let urls: Vec<String> = (0..n).map(|i| format!("http://127.0.0.1:{}", 9000 + i)).collect();
        Pool::new(&Upstreams::new(urls).unwrap().eject(eject))
    }

    /// Passive health: ejected after `after` failures in a row, a probe after `duration`,
    /// back on its success, out again on its failure.
    #[test]
    fn ejection_and_probe() {
        let p = pool(2, Eject { after: 2, duration: Duration::from_millis(50) });
        let mut rng = Rng::new(1);
        p.failed(0);
        assert!(p.usable(0, false));
        p.succeeded(0);
        p.failed(0);
        assert!(p.usable(0, false), "a success in between resets the count");
        p.failed(0);
        assert!(!p.usable(0, false));
        for _ in 0..10 {
            assert_eq!(p.pick(None, 0, &mut rng), Some(1));
        }
        std::thread::sleep(Duration::from_millis(60));
        // One probe goes to it, the next requests go elsewhere until it answers.
        let picks: Vec<_> = (0..4).filter_map(|_| p.pick(None, 0, &mut rng)).collect();
        assert_eq!(picks.iter().filter(|&&i| i == 0).count(), 1, "{picks:?}");
        p.failed(0);
        assert!(!p.usable(0, false), "a failed probe ejects again");
        std::thread::sleep(Duration::from_millis(60));
        assert!(p.usable(0, true));
        p.succeeded(0);
        assert!(p.usable(0, false));
        assert_eq!(p.servers[0].ejected_until.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn tried_servers_are_avoided() {
        let p = pool(3, Eject::default());
        let mut rng = Rng::new(1);
        for _ in 0..6 {
            let i = p.pick(None, 0b101, &mut rng).unwrap();
            assert_eq!(i, 1);
        }
        assert_eq!(p.pick(None, 0b111, &mut rng), None);
        p.servers[1].healthy.store(false, Ordering::Relaxed);
        assert_eq!(p.pick(None, 0b101, &mut rng), None);
    }
}
