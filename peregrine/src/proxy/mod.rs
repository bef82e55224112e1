//! A reverse proxy: [`Proxy`] is a [`Handler`](crate::Handler) that forwards each request to
//! an upstream server chosen from a pool, over the client's connections, so it runs on every
//! listener a [`Server`](crate::Server) has (HTTP/1.1, HTTP/2, TLS, PROXY protocol).
//!
//! ```no_run
//! use peregrine::Server;
//! use peregrine::proxy::{Balance, Proxy, Upstreams};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let pool = Upstreams::new(["http://127.0.0.1:9001", "http://127.0.0.1:9002"])?
//!         .balance(Balance::LeastRequests);
//!     Server::bind("0.0.0.0:8080").run(Proxy::new(pool))?;
//!     Ok(())
//! }
//! ```
//!
//! # What is forwarded
//!
//! - The request's method, target (rewritten by the [`Route`]: [`PathRewrite`]), fields and
//!   body; the response's status, fields and body. Bodies stream both ways with backpressure:
//!   the client's body is read only as fast as the upstream takes it, the upstream's only as
//!   fast as the client does, with a chunk in flight each way. Trailers go both ways. A client's
//!   `Expect: 100-continue` is answered once the upstream connection is ready and the body is
//!   first read (the server's rule), and not passed on.
//! - Not the hop-by-hop fields (RFC 9110 §7.6.1: `Connection` and the fields it names,
//!   `Keep-Alive`, `Proxy-Connection`, `TE`, `Transfer-Encoding`, `Upgrade`; a client that
//!   asked for trailers on its hop — `TE: trailers` with `Connection: TE`, or HTTP/2's `te:
//!   trailers`, RFC 9110 §10.1.4 — has them asked for on the upstream's), nor the framing (each side's connection writes its own Content-Length or
//!   chunked coding; a `Content-Length` that disagrees with the body ends the upstream
//!   connection before its message is whole).
//! - `Host`: the client's (the default), the upstream's, or a set value ([`HostHeader`]).
//! - WebSockets: a client's opening (HTTP/1.1 `Upgrade`, or HTTP/2 extended CONNECT) is made
//!   to the upstream over HTTP/1.1 first, accepted for the client with the subprotocol the
//!   upstream chose, and its messages relayed both ways, each side's frames checked by its own
//!   connection.
//! - Added: `Via`, `X-Forwarded-For`, `-Proto`, `-Host`, optionally `Forwarded` (RFC 7239),
//!   the received ones appended to from a trusted sender and replaced otherwise
//!   ([`Forwarding`], [`Trust`]); the client address is the PROXY protocol's where the server
//!   trusted a balancer's header. Per route, fields set, added and removed ([`HeaderOps`]).
//! - Nothing peregrine's server would refuse reaches an upstream: the request was parsed by
//!   it, and what came over HTTP/2 is checked again before it becomes HTTP/1.1 (no CR, LF or
//!   NUL in a value, an origin-form target). A response the client's parser refuses (bad
//!   framing, a malformed head) becomes a 502 and is never passed on; a body that breaks after
//!   its head was sent ends the client's connection (or stream) without completing the
//!   message, so the client sees it cut short.
//!
//! # Upstream pools
//!
//! [`Upstreams`]: servers chosen by [`Balance`] (round-robin, least requests by the power of
//! two choices, consistent hashing of a header, cookie or client address), checked actively
//! ([`HealthCheck`]) and passively ([`Eject`]); failed requests retried elsewhere within a
//! budget ([`Retries`]); each [`Timeouts`] passed answered 504, each failure 502, with the
//! reason logged (`tracing`, at `warn`).
//!
//! Each worker thread keeps its own idle connections per upstream server (up to
//! [`Upstreams::max_idle`]), kept alive by default: a request takes one, sends on it and gives
//! it back when the response ends, with no lock shared between workers. The connection's
//! `Host` line is made once per connection: with [`HostHeader::Keep`] an idle connection is
//! reused by requests with the same Host value. An HTTP/2 upstream (h2c or `h2` by ALPN:
//! [`UpstreamProtocol::Http2`]) is pooled the same way, one request at a time per connection.

mod answer;
mod balance;
mod body;
mod field_array;
mod forward;
mod health;
mod hop;
mod local;
mod request_head;
mod retry;
mod route;
mod translate;
mod upstream;
mod value_buffer;
mod websocket;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

pub use balance::{Balance, HashKey};
pub use hop::{Forwarding, Trust};
pub use route::{HeaderOps, HostHeader, PathRewrite, Route};
pub use upstream::{Eject, HealthCheck, Retries, Timeouts, UpstreamProtocol, Upstreams};

use crate::request::Request;
use crate::response::Response;
use crate::routing::RouteFuture;
use local::Local;
use upstream::Pool;

/// What every worker's copy of a proxy shares.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Each route with its pool (none for a route to files).
    routes: Vec<(Route, Option<Arc<Pool>>)>,
    forwarding: Forwarding,
    /// Stops the health checks when the last copy goes.
    _health: Option<health::Checker>,
}

impl Shared {
    /// The route for a request to `host` (without port) and `path`.
    fn route(&self, host: Option<&str>, path: &str) -> Option<usize> {
        let mut best: Option<(usize, (bool, usize))> = None;
        for (i, (route, _)) in self.routes.iter().enumerate() {
            if let Some(rank) = route.rank(host, path) {
                if best.is_none_or(|(_, b)| rank > b) {
                    best = Some((i, rank));
                }
            }
        }
        best.map(|(i, _)| i)
    }
}

/// A reverse proxy handler; see the [module docs](self).
///
/// Cloning it (the server does, once per worker thread) shares the routes, pools and their
/// health, and gives the clone its own idle connections.
///
/// # Examples
/// ```
/// use peregrine::proxy::{PathRewrite, Proxy, Route, Upstreams};
/// use peregrine::Server;
///
/// let api = Upstreams::new(["http://127.0.0.1:9001"])?;
/// let web = Upstreams::new(["http://127.0.0.1:9002"])?;
/// let proxy = Proxy::builder()
///     .route(Route::new(api).prefix("/api").rewrite(PathRewrite::StripPrefix))
///     .route(Route::new(web))
///     .build();
/// let server = Server::bind("127.0.0.1:0").workers(1).spawn(proxy)?;
/// server.shutdown();
/// server.join()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Proxy {
    current: Arc<Current>,
    local: Arc<Local>,
}

/// The routes in force, replaced whole by [`Proxy::reload`]; each worker keeps the ones it
/// last saw with their generation, and looks again only when the generation moved.
#[derive(Debug)]
struct Current {
    shared: std::sync::Mutex<Arc<Shared>>,
    generation: AtomicU64,
}

impl Current {
    fn get(&self) -> Arc<Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Clone for Proxy {
    fn clone(&self) -> Proxy {
        let shared = self.current.get();
        let local =
            Local::new(seed(&shared), self.current.generation.load(Ordering::Acquire), shared);
        Proxy { current: self.current.clone(), local: Arc::new(local) }
    }
}

/// A worker's seed for its random choices: the pools' own, or the clock's.
fn seed(shared: &Shared) -> u64 {
    match shared.routes.iter().find_map(|(_, p)| p.as_ref()?.seed) {
        Some(seed) => seed,
        None => {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            let nanos = t.map_or(0, |d| d.as_nanos() as u64);
            balance::hash(&nanos.to_le_bytes())
        }
    }
}

impl Proxy {
    /// A proxy sending every request to `upstreams`.
    pub fn new(upstreams: Upstreams) -> Proxy {
        Proxy::builder().route(Route::new(upstreams)).build()
    }

    /// A proxy with routes and settings.
    pub fn builder() -> ProxyBuilder {
        ProxyBuilder { routes: Vec::new(), forwarding: Forwarding::default() }
    }

    /// Replaces the routes, pools and forwarding settings with `builder`'s, for every copy of
    /// this proxy (every worker): requests that start from now on use them, requests under way
    /// finish with the old ones, and no connection is dropped. The old pools' health checks
    /// stop once every worker has moved on to the new routes (at its next request); their
    /// idle connections close after their idle timeout.
    ///
    /// # Examples
    /// ```
    /// use peregrine::proxy::{Proxy, Upstreams};
    /// let proxy = Proxy::new(Upstreams::new(["http://127.0.0.1:9001"])?);
    /// proxy.reload(Proxy::builder().route(peregrine::proxy::Route::new(Upstreams::new(["http://127.0.0.1:9002"])?)));
    /// assert!(proxy.metrics().contains("127.0.0.1:9002"));
    /// # Ok::<(), peregrine::client::Error>(())
    /// ```
    pub fn reload(&self, builder: ProxyBuilder) {
        let shared = Arc::new(builder.shared());
        *self.current.shared.lock().unwrap_or_else(|e| e.into_inner()) = shared;
        self.current.generation.fetch_add(1, Ordering::Release);
    }

    /// The routes in force for this copy's next request.
    fn shared(&self) -> Arc<Shared> {
        let generation = self.current.generation.load(Ordering::Acquire);
        let mut cached = self.local.shared.lock().unwrap_or_else(|e| e.into_inner());
        if cached.0 != generation {
            *cached = (generation, self.current.get());
        }
        cached.1.clone()
    }

    /// The servers of every route's pool, with their state, in the Prometheus text format:
    /// `peregrine_upstream_requests_total`, `peregrine_upstream_failures_total`,
    /// `peregrine_upstream_in_flight` and `peregrine_upstream_up` (0 while a health check or
    /// an ejection keeps it out), each labelled `upstream="URL"`.
    ///
    /// # Examples
    /// ```
    /// use peregrine::proxy::{Proxy, Upstreams};
    /// let proxy = Proxy::new(Upstreams::new(["http://127.0.0.1:9001"])?);
    /// assert!(proxy.metrics().contains("peregrine_upstream_up{upstream=\"http://127.0.0.1:9001\"} 1"));
    /// # Ok::<(), peregrine::client::Error>(())
    /// ```
    pub fn metrics(&self) -> String {
        use std::fmt::Write;
        use std::sync::atomic::Ordering::Relaxed;
        let mut out = String::new();
        type Read = fn(&Pool, usize) -> u64;
        let series: [(&str, &str, Read); 4] = [
            ("peregrine_upstream_requests_total", "counter", |p, i| {
                p.servers[i].requests.load(Relaxed)
            }),
            ("peregrine_upstream_failures_total", "counter", |p, i| {
                p.servers[i].failures.load(Relaxed)
            }),
            ("peregrine_upstream_in_flight", "gauge", |p, i| {
                p.servers[i].in_flight.load(Relaxed) as u64
            }),
            ("peregrine_upstream_up", "gauge", |p, i| u64::from(p.is_up(i))),
        ];
        let shared = self.current.get();
        for (name, kind, value) in series {
            let _ = writeln!(out, "# TYPE {name} {kind}");
            for pool in shared.routes.iter().filter_map(|(_, p)| p.as_ref()) {
                for (i, s) in pool.servers.iter().enumerate() {
                    let _ = writeln!(out, "{name}{{upstream=\"{}\"}} {}", s.name, value(pool, i));
                }
            }
        }
        out
    }
}

/// Builds a [`Proxy`].
#[derive(Debug)]
pub struct ProxyBuilder {
    routes: Vec<Route>,
    forwarding: Forwarding,
}

impl ProxyBuilder {
    /// Adds a route (see [`Route`] for how one is chosen).
    pub fn route(mut self, route: Route) -> ProxyBuilder {
        self.routes.push(route);
        self
    }

    /// The forwarding fields added to requests.
    pub fn forwarding(mut self, forwarding: Forwarding) -> ProxyBuilder {
        self.forwarding = forwarding;
        self
    }

    /// The proxy; its health checks (if any pool has them) start now, on a thread of their
    /// own, and stop when the last copy of the proxy is dropped.
    pub fn build(self) -> Proxy {
        let shared = Arc::new(self.shared());
        let local = Local::new(seed(&shared), 0, shared.clone());
        let current =
            Current { shared: std::sync::Mutex::new(shared), generation: AtomicU64::new(0) };
        Proxy { current: Arc::new(current), local: Arc::new(local) }
    }

    fn shared(self) -> Shared {
        let routes: Vec<(Route, Option<Arc<Pool>>)> = self
            .routes
            .into_iter()
            .map(|r| {
                let pool = match &r.target {
                    route::Target::Upstreams(u) => Some(Pool::new(u)),
                    route::Target::Files(_) => None,
                };
                (r, pool)
            })
            .collect();
        let pools: Vec<Arc<Pool>> =
            routes.iter().filter_map(|(_, p)| p.clone()).filter(|p| p.health.is_some()).collect();
        let checker = health::Checker::start(pools);
        Shared { routes, forwarding: self.forwarding, _health: checker }
    }
}

/// The future of a proxied request: the exchange, in a reusable pooled buffer of the worker
/// (no allocation per request once it is warm).
#[must_use = "futures do nothing unless polled"]
pub struct ProxyFuture(RouteFuture);

impl std::fmt::Debug for ProxyFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProxyFuture")
    }
}

impl Future for ProxyFuture {
    type Output = Response;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        Pin::new(&mut self.get_mut().0).poll(cx)
    }
}

impl crate::Handler for Proxy {
    type Output = Response;
    type Future = ProxyFuture;

    fn call(&self, req: Request) -> ProxyFuture {
        let (shared, local) = (self.shared(), self.local.clone());
        ProxyFuture(RouteFuture::new(forward::forward(shared, local, req)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::POOLED_FUTURE_BYTES;

    /// A proxied request's future lives in the worker's pooled buffer, not a fresh box: it
    /// must fit one (the kept-alive connection it carries is boxed once per connection).
    #[test]
    fn a_proxied_request_fits_a_pooled_buffer() {
        let proxy = Proxy::new(Upstreams::new(["http://127.0.0.1:9"]).unwrap());
        let req: Request = http::Request::get("/").body(()).unwrap().into();
        let future = forward::forward(proxy.shared(), proxy.local.clone(), req);
        let size = std::mem::size_of_val(&future);
        assert!(size <= POOLED_FUTURE_BYTES, "{size} bytes > {POOLED_FUTURE_BYTES}");
    }
}
