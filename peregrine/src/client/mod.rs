//! The HTTP client: [`Client`] (a pool, cheap to clone) for everyday use, and [`conn`], one
//! HTTP/1.1, HTTP/2 or HTTP/3 connection driven by its owner, which the pool and the load generator
//! build on. Both share the server's wire code (`http1`, `http2`, HPACK): no second copy of
//! any rule.
//!
//! ```no_run
//! use peregrine::client::Client;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new();
//! let response = client.get("https://example.com/").await?;
//! println!("{}", response.status());
//! let mut response = response;
//! let body = std::mem::take(response.body_mut()).to_bytes(1 << 20).await?;
//! println!("{} bytes", body.len());
//!
//! // Any `http::Request` (absolute URI), with a body.
//! let request = http::Request::post("http://127.0.0.1:8080/orders")
//!     .header("content-type", "application/json")
//!     .body(r#"{"id":1}"#)?;
//! let response = client.send(request).await?;
//! # Ok(()) }
//! ```
//!
//! # Per-connection work is done once
//!
//! When a connection is made, the client settles what all its requests share: the scheme,
//! the `Host` line (HTTP/1.1) or the `:scheme` and `:authority` values (HTTP/2), and whether
//! the port is the scheme's default (left out of both). A request then copies bytes: its method
//! from a constant (methods are compared, never upper-cased), its target, its fields, the
//! framing. On a kept-alive HTTP/1.1 connection and on an HTTP/2 connection a request through
//! [`conn::Connection`] allocates nothing (`tests/client_alloc.rs`).
//!
//! # Threads: how the client fits a thread-per-core server
//!
//! The server runs one single-threaded runtime per core and its handler futures need not be
//! `Send`. A client is used differently: from multi-threaded runtimes, inside `Send` futures
//! (a handler calling another service from a work-stealing runtime), shared by every task of a
//! program. So the client is built to be `Send` and `Sync` throughout:
//!
//! - [`Client`] is `Send + Sync + Clone` (an `Arc`), and the futures of [`Client::send`] and
//!   [`Client::get`] are `Send`; the response [`Body`](crate::Body) is `Send`.
//! - An HTTP/1.1 request drives the connection it checked out itself, on whatever thread polls
//!   it, then its response body does; no task is spawned and nothing is shared while the
//!   request runs, so the only cross-thread cost is the pool's mutex at check-out and
//!   check-in.
//! - An HTTP/2 connection is shared by concurrent requests: it sits behind a mutex, and a task
//!   spawned (with `tokio::spawn`) on the runtime that opened it reads the socket and files
//!   events per request; a request encodes itself into the connection under the lock and
//!   waits on its exchange. **The cost**: the mutex (uncontended: a few tens of nanoseconds),
//!   and two task wake-ups per request (the connection task's, then the requester's), which
//!   cross threads when the requester runs on another runtime thread; and the connection
//!   lives on the runtime that opened it (if that runtime shuts down, the connection ends and
//!   its requests fail with [`Error::is_closed`]).
//! - An HTTP/3 connection is shared the same way, with quinn's own tasks (the endpoint's
//!   and the connection's) under it: the connection task reads its QUIC streams.
//! - [`conn::Connection`] is `Send` but not shared: one task drives it, with no lock, no
//!   channel and no task switch. That is what a thread-per-core caller (the load generator:
//!   one current-thread runtime per core, each with its own connections) uses, and it pays
//!   none of the costs above.
//!
//! Compile-time `Send`/`Sync` assertions pin these: on the types at the end of this file, on
//! the futures (`Client::get`, `Client::send`, `Connection::connect`, `next_event`) in
//! `tests/client_send.rs`.
//!
//! # Timeouts and errors
//!
//! Connect (DNS and TCP), TLS handshake, the request until its response head (the
//! [`ClientBuilder::request_timeout`]), and the read timeout (no byte for that long while a
//! response, or the rest of its body, is awaited). Every failure is an [`Error`] whose
//! predicates say what happened; nothing panics on what a server sends.
//!
//! # HTTP/3
//!
//! With the `http3` feature, a client speaks HTTP/3 to every origin when built with
//! [`ClientBuilder::http3_only`], or to the `https` origins that advertise it with `Alt-Svc`
//! when built with [`ClientBuilder::http3_alt_svc`]: the first request goes over TCP, the next
//! over QUIC to the advertised alternative, and back to TCP, silently, when QUIC cannot be
//! reached. Either way an HTTP/3 connection is pooled and shared as an HTTP/2 one is.
//!
//! # Retries
//!
//! A request is sent again, once, on a new connection when the server cannot have processed
//! it: an idempotent request (RFC 9110 §9.2.2) on a pooled HTTP/1.1 connection that the server
//! closed before any byte of the response (the keep-alive race: the server closed the idle
//! connection as the request went out), or any request HTTP/2 refused (REFUSED_STREAM, or
//! above a GOAWAY's last stream id: RFC 9113 §8.7). A streamed request body is never replayed.

#[cfg(feature = "http3")]
mod alt_svc;
#[cfg(feature = "http3")]
mod alternative;
pub mod conn;
mod connect;
pub(crate) mod error;
mod h1;
mod h2;
mod origin;
mod pool;
mod request;
pub(crate) mod response;
mod tls;
mod ws;

use std::sync::Arc;
use std::time::Duration;

pub use crate::net::TlsError;
pub use error::Error;
pub use origin::Origin;
pub use tls::TlsConfig;
pub use ws::WebSocketRequest;

use crate::http1::encode::Scheme;
use conn::{Config, Connection, Protocol, Versions};
use error::{Deadline, Kind};
use pool::{Checkout, Pool, Pooled, Share};
use request::{OutBody, Outgoing};

use crate::request::Request;
use crate::response::Response;

/// An HTTP client with a connection pool: cheap to clone (clones share the pool), `Send` and
/// `Sync`; see the [module docs](self).
///
/// # Examples
/// ```no_run
/// # async fn run() -> Result<(), peregrine::client::Error> {
/// let client = peregrine::client::Client::new();
/// let response = client.get("http://127.0.0.1:8080/").await?;
/// assert!(response.status().is_success());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    pool: Arc<Pool>,
    request_timeout: Option<Duration>,
    /// `Alt-Svc` discovery, when turned on ([`ClientBuilder::http3_alt_svc`]).
    #[cfg(feature = "http3")]
    alt_svc: Option<alternative::AltSvc>,
    /// `config` for WebSockets, each made at its first use: HTTP/1.1 only; HTTP/2 where the
    /// server allows (ALPN offering both on `https`, h2c by prior knowledge on `http`).
    ws_config: std::sync::OnceLock<Config>,
    ws_h2_config: std::sync::OnceLock<Config>,
    ws_h2c_config: std::sync::OnceLock<Config>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (idle, h2) = self.inner.pool.counts();
        f.debug_struct("Client").field("idle_http1", &idle).field("http2", &h2).finish()
    }
}

impl Default for Client {
    fn default() -> Self {
        Client::new()
    }
}

/// Builds a [`Client`].
///
/// | Setting | Default |
/// |---|---|
/// | connect timeout (DNS and TCP) | 10 s |
/// | TLS handshake timeout | 10 s |
/// | request timeout (until the response head) | none |
/// | read timeout | 30 s |
/// | response body limit | 64 MiB |
/// | idle HTTP/1.1 connections per origin | 32 |
/// | pool idle timeout | 90 s |
/// | versions | HTTP/1.1, and HTTP/2 where `https` ALPN chooses it |
/// | HTTP/3 through `Alt-Svc` | off ([`ClientBuilder::http3_alt_svc`]) |
/// | TLS roots | Mozilla's (`webpki-roots`) |
///
/// # Examples
/// ```
/// use std::time::Duration;
/// let client = peregrine::client::Client::builder()
///     .request_timeout(Duration::from_secs(5))
///     .pool_max_idle_per_origin(8)
///     .build();
/// # drop(client);
/// ```
#[derive(Clone, Debug)]
pub struct ClientBuilder {
    config: Config,
    max_idle: usize,
    idle_timeout: Duration,
    request_timeout: Option<Duration>,
    alt_svc: bool,
    alt_svc_timeout: Duration,
}

impl ClientBuilder {
    /// Time allowed for resolving the host and opening the TCP connection.
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.config = self.config.connect_timeout(d);
        self
    }

    /// Time allowed for the TLS handshake.
    pub fn tls_handshake_timeout(mut self, d: Duration) -> Self {
        self.config = self.config.tls_handshake_timeout(d);
        self
    }

    /// Time allowed from the call until the response head ([`Error::is_timeout`] after).
    pub fn request_timeout(mut self, d: Duration) -> Self {
        self.request_timeout = Some(d);
        self
    }

    /// Longest wait for the next byte while a response is awaited (`None`: no limit).
    pub fn read_timeout(mut self, d: Option<Duration>) -> Self {
        self.config = self.config.read_timeout(d);
        self
    }

    /// Largest response body accepted ([`Error::is_body`] / a body error past it).
    pub fn max_body_bytes(mut self, n: u64) -> Self {
        self.config = self.config.max_body_bytes(n);
        self
    }

    /// Idle HTTP/1.1 connections kept per origin (0: none are kept).
    pub fn pool_max_idle_per_origin(mut self, n: usize) -> Self {
        self.max_idle = n;
        self
    }

    /// How long an idle connection is kept.
    pub fn pool_idle_timeout(mut self, d: Duration) -> Self {
        self.idle_timeout = d;
        self
    }

    /// Speak HTTP/1.1 only.
    pub fn http1_only(mut self) -> Self {
        self.config = self.config.versions(Versions::Http1Only);
        self
    }

    /// Speak HTTP/2 only: h2c by prior knowledge for `http` (RFC 9113 §3.3), ALPN `h2` alone
    /// for `https`.
    pub fn http2_prior_knowledge(mut self) -> Self {
        self.config = self.config.versions(Versions::Http2Only);
        self
    }

    /// Speak HTTP/3 only (RFC 9114): QUIC to the `https` origin's UDP port with ALPN `h3`,
    /// one connection per origin carrying concurrent requests as HTTP/2's does (the server
    /// is known to speak it; [`http3_alt_svc`](Self::http3_alt_svc) discovers it instead).
    /// `http` URLs fail with [`Error::is_request`]: HTTP/3 has no cleartext form. Needs the
    /// `http3` feature.
    ///
    /// # Examples
    /// ```
    /// let client = peregrine::client::Client::builder().http3_only().build();
    /// # drop(client);
    /// ```
    pub fn http3_only(mut self) -> Self {
        self.config = self.config.versions(Versions::Http3Only);
        self
    }

    /// Switch to HTTP/3 where an `https` origin advertises it with `Alt-Svc` (RFC 7838, RFC
    /// 9114 §3.1.1), as browsers and `curl --alt-svc` do. Off by default. Needs the `http3`
    /// feature (without it the setting does nothing), and applies with the default versions
    /// (not with [`http1_only`](Self::http1_only) and the like).
    ///
    /// - The client reads `Alt-Svc` on the HTTP/1.1 and HTTP/2 responses of `https` origins
    ///   and keeps, per origin, the first `h3` alternative with its expiry (`ma`, 24 hours
    ///   when absent, less the response's `Age`); `clear`, or a field with no `h3`, forgets
    ///   the origin; a malformed field is ignored (the response is unaffected).
    /// - The next requests to that origin go over HTTP/3 to the alternative (which may be
    ///   another port or host: TLS still names and verifies the origin's host, RFC 7838
    ///   §2.1), on one pooled connection carrying concurrent requests; the response's
    ///   [`version`](crate::Response::version) says HTTP/3.
    /// - When the QUIC connection cannot be made within
    ///   [`http3_alt_svc_timeout`](Self::http3_alt_svc_timeout) (UDP blocked, nothing
    ///   listening, a failed handshake), the request goes over TCP as if nothing happened,
    ///   and the alternative is left alone for 5 minutes, doubling with each failure in a
    ///   row (to about 21 hours); a connection that works resets that.
    /// - At most 256 origins are remembered, in memory; past that a new one evicts the entry
    ///   that expires first. `persist` is read but not acted on: the client does not watch
    ///   for network changes, so an entry lasts until its `ma` runs out.
    /// - Requests over an alternative carry `Alt-Used` with its host and port (RFC 7838 §5),
    ///   so the server can tell them apart.
    ///
    /// # Examples
    /// ```
    /// let client = peregrine::client::Client::builder().http3_alt_svc(true).build();
    /// # drop(client);
    /// ```
    pub fn http3_alt_svc(mut self, enabled: bool) -> Self {
        self.alt_svc = enabled;
        self
    }

    /// How long a QUIC connection attempt to an `Alt-Svc` alternative may take (handshake
    /// included) before the request goes over TCP instead (default 3 s): a network that
    /// drops UDP shows only as silence, so this is what that costs one request.
    pub fn http3_alt_svc_timeout(mut self, d: Duration) -> Self {
        self.alt_svc_timeout = d;
        self
    }

    /// What TLS trusts.
    pub fn tls(mut self, tls: TlsConfig) -> Self {
        self.config = self.config.tls(tls);
        self
    }

    /// Every connection setting at once.
    pub fn connection_config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The client.
    pub fn build(self) -> Client {
        let pool = Arc::new(Pool::new(self.max_idle, self.idle_timeout));
        #[cfg(feature = "http3")]
        let alt_svc = (self.alt_svc && self.config.versions_value() == Versions::Auto)
            .then(|| alternative::AltSvc::new(self.alt_svc_timeout));
        #[cfg(not(feature = "http3"))]
        let _ = (self.alt_svc, self.alt_svc_timeout);
        let inner = Inner {
            config: self.config,
            pool,
            request_timeout: self.request_timeout,
            #[cfg(feature = "http3")]
            alt_svc,
            ws_config: std::sync::OnceLock::new(),
            ws_h2_config: std::sync::OnceLock::new(),
            ws_h2c_config: std::sync::OnceLock::new(),
        };
        Client { inner: Arc::new(inner) }
    }
}

/// Which connection an attempt used, for the retry rule.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Via {
    PooledH1,
    FreshH1,
    H2,
    Connect,
}

impl Client {
    /// A client with the default settings ([`ClientBuilder`]).
    pub fn new() -> Client {
        Client::builder().build()
    }

    /// A builder for a client with other settings.
    pub fn builder() -> ClientBuilder {
        ClientBuilder {
            config: Config::default(),
            max_idle: 32,
            idle_timeout: Duration::from_secs(90),
            request_timeout: None,
            alt_svc: false,
            alt_svc_timeout: Duration::from_secs(3),
        }
    }

    /// A GET of `url`.
    ///
    /// # Errors
    /// As [`Client::send`].
    pub async fn get(&self, url: &str) -> Result<Response, Error> {
        let req = http::Request::get(url)
            .body(())
            .map_err(|e| Error::with_source(Kind::Request, "the URL is not valid", e))?;
        self.send(req).await
    }

    /// Sends `request` (its URI absolute: `http://` or `https://`) and returns the response
    /// once its head arrived; the body streams after (read it with
    /// [`Body::chunk`](crate::Body::chunk) or [`Body::to_bytes`](crate::Body::to_bytes)).
    ///
    /// # Errors
    /// An [`Error`]: [`Error::is_request`] for a request that cannot be sent as given,
    /// [`Error::is_connect`], [`Error::is_tls`], [`Error::is_timeout`],
    /// [`Error::is_protocol`] for a malformed or ambiguous response, [`Error::is_closed`],
    /// [`Error::is_reset`], [`Error::is_body`].
    pub async fn send(&self, request: impl Into<Request>) -> Result<Response, Error> {
        let (out, body) = Outgoing::new(request.into())?;
        let attempts = self.attempts(out, body);
        match self.inner.request_timeout {
            None => attempts.await,
            Some(d) => match tokio::time::timeout(d, attempts).await {
                Ok(r) => r,
                Err(_) => Err(Error::new(
                    Kind::Timeout(Deadline::Request),
                    "no response within the request timeout",
                )),
            },
        }
    }

    async fn attempts(&self, out: Outgoing, body: OutBody) -> Result<Response, Error> {
        let replay = body.replay();
        let (e, via) = match self.attempt(&out, body, false).await {
            Ok(r) => return Ok(r),
            Err(failed) => failed,
        };
        let retry = e.is_unprocessed()
            && match via {
                Via::PooledH1 => out.idempotent(),
                Via::H2 => true,
                Via::FreshH1 | Via::Connect => false,
            };
        match replay {
            Some(body) if retry => {
                self.attempt(&out, body, via == Via::PooledH1).await.map_err(|(e, _)| e)
            }
            _ => Err(e),
        }
    }

    /// One attempt: over the origin's HTTP/3 alternative when [`Client`] uses `Alt-Svc`
    /// and one is known (unless `fresh`), else to the origin; a response from the origin
    /// teaches the `Alt-Svc` cache.
    async fn attempt(
        &self,
        out: &Outgoing,
        body: OutBody,
        fresh: bool,
    ) -> Result<Response, (Error, Via)> {
        #[cfg(feature = "http3")]
        if let Some(alt) = &self.inner.alt_svc {
            let parts = out.parts();
            if parts.scheme != Scheme::Https {
                return self.attempt_origin(out, body, fresh).await;
            }
            let body = if fresh {
                body
            } else {
                let config = &self.inner.config;
                match alt.send(&self.inner.pool, config, &parts, out, body).await {
                    alternative::Outcome::Sent(r) => return r.map_err(|e| (e, Via::H2)),
                    alternative::Outcome::Origin(body) => body,
                }
            };
            let result = self.attempt_origin(out, body, fresh).await;
            if let Ok(response) = &result {
                alt.learn(&parts, response);
            }
            return result;
        }
        self.attempt_origin(out, body, fresh).await
    }

    /// One attempt to the origin: a pooled connection (unless `fresh`) or a new one.
    async fn attempt_origin(
        &self,
        out: &Outgoing,
        body: OutBody,
        fresh: bool,
    ) -> Result<Response, (Error, Via)> {
        let pool = &self.inner.pool;
        let parts = out.parts();
        let share = match (self.inner.config.versions_value(), parts.scheme) {
            (Versions::Http2Only | Versions::Http3Only, _) => Share::Always,
            (Versions::Auto, Scheme::Https) => Share::UnlessHttp1,
            _ => Share::Never,
        };
        let checkout = if fresh { Checkout::Connect(None) } else { pool.get(&parts, share).await };
        match checkout {
            Checkout::Ready(Pooled::H2(shared)) => {
                shared.send(out, body).await.map_err(|e| (e, Via::H2))
            }
            Checkout::Ready(Pooled::H1(conn)) => {
                h1::send(conn, out, body, pool).await.map_err(|e| (e, Via::PooledH1))
            }
            Checkout::Connect(guard) => {
                let origin = Origin::new(parts.scheme, parts.host, parts.port);
                let conn = Connection::connect_origin(&origin, &self.inner.config)
                    .await
                    .map_err(|e| (e, Via::Connect))?;
                match conn.protocol() {
                    // An HTTP/3 connection is shared as an HTTP/2 one is: the same exchanges
                    // over the same `Connection` API, QUIC's streams under it.
                    Protocol::Http2 | Protocol::Http3 => {
                        let shared = h2::Shared::spawn(conn, pool.idle_timeout());
                        pool.add_h2(&origin, shared.clone());
                        drop(guard);
                        shared.send(out, body).await.map_err(|e| (e, Via::H2))
                    }
                    Protocol::Http1 => {
                        if guard.is_some() {
                            pool.note_http1(&origin);
                        }
                        drop(guard);
                        h1::send(conn, out, body, pool).await.map_err(|e| (e, Via::FreshH1))
                    }
                }
            }
        }
    }

    /// Idle HTTP/1.1 connections and open shared (HTTP/2 and HTTP/3) connections in the
    /// pool.
    pub fn pool_size(&self) -> (usize, usize) {
        self.inner.pool.counts()
    }

    /// Until when `url`'s origin's `Alt-Svc` alternative is left alone after a failed
    /// connection attempt ([`ClientBuilder::http3_alt_svc`]); `None` when it is not broken,
    /// not known, or the client does not use `Alt-Svc`.
    pub fn alt_svc_broken_until(&self, url: &str) -> Option<std::time::Instant> {
        #[cfg(feature = "http3")]
        if let (Some(alt), Ok(parts)) = (&self.inner.alt_svc, origin::UrlParts::parse(url)) {
            return alt.cache.broken_until(&parts);
        }
        let _ = url;
        None
    }
}

// The threading decision above, checked at compile time: the client, its futures, its
// connection and its errors cross threads.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Client>();
    send_sync::<Error>();
    send_sync::<Config>();
    send_sync::<TlsConfig>();
    send_sync::<crate::Body>();
    send_sync::<Request>();
    const fn send<T: Send>() {}
    send::<Connection>();
};
