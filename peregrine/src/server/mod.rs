//! The server: a builder, worker threads, and a handle to stop them.
//!
//! - `runtime`: thread per core, one current-thread tokio runtime and one `SO_REUSEPORT`
//!   listener per worker (or a socket systemd passed, shared), the accept loop with back-off
//!   and the global connection limit; `connections`: the worker's one task that polls all of
//!   its connections; `worker`: what a worker's connections share.
//! - `conn`: setting up a connection: the PROXY protocol header, the TLS handshake, the
//!   protocol choice.
//! - `h1`: one HTTP/1.1 connection, a driver of [`http1::conn::Conn`](crate::http1::conn::Conn)
//!   (which keeps the wire rules: keep-alive, pipelining, framing, deadlines): it moves the
//!   bytes, runs the handler, reads request bodies for it and encodes its response; `h2`: one
//!   HTTP/2 connection, a driver of [`http2::Conn`](crate::http2::Conn).
//! - `call`: polling a handler, a panic answered with 500.
//!
//! Every socket call (binding, accepting, reading, writing) is in the crate's `net` module;
//! the server keeps the policy (whom to admit, what to answer, which errors pause accepting).
//! - [`Config`]: every limit and timeout, with its default; [`TlsConfig`]: certificates.
//! - [`LogEntry`]: what the access log hook ([`Server::access_log`]) receives.
//!
//! # Examples
//! ```no_run
//! use peregrine::{Request, Server};
//!
//! fn main() -> std::io::Result<()> {
//!     Server::bind("127.0.0.1:8080")
//!         .workers(2)
//!         .run(|_req: Request| async { "Hello, World!" })
//! }
//! ```

mod access_log;
#[cfg(feature = "http3")]
mod alt_svc;
mod buffers;
mod call;
mod clock;
mod config;
mod conn;
mod connections;
mod fixed;
mod h1;
mod h2;
#[cfg(feature = "http3")]
mod h3;
mod idle;
mod listen_fds;
mod metrics;
mod ops;
mod proxy;
mod runtime;
mod service;
#[cfg(target_os = "linux")]
mod shutdown;
mod trim;
mod worker;

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use crate::net::{TlsConfig, TlsError};
pub use access_log::LogEntry;
pub(crate) use access_log::note_upstream;
pub use config::Config;
pub use listen_fds::listen_fds;
pub use proxy::{InvalidNetwork, Network, ProxyProtocol};

use crate::handler::Handler;
use access_log::AccessLog;
use shutdown::ShutdownSignal;

/// The protocols ALPN offers on a TLS listener, in order of preference (RFC 7301; RFC 9113
/// §3.2: `h2` is HTTP/2 over TLS).
const ALPN: &[&[u8]] = &[b"h2", b"http/1.1"];
const ALPN_HTTP1: &[&[u8]] = &[b"http/1.1"];

/// Whether a listener speaks TLS.
#[derive(Debug, Clone)]
enum ListenTls {
    /// As [`Server::tls`] says (plain when it was not called).
    Default,
    /// TLS with this configuration.
    Tls(TlsConfig),
}

/// Builds and starts a server.
///
/// Binds every address once per worker with `SO_REUSEPORT`; each worker is one thread with a
/// current-thread tokio runtime. [`Server::run`] blocks until SIGINT or SIGTERM;
/// [`Server::spawn`] returns a [`ServerHandle`]. Listeners speak plain HTTP unless given TLS
/// ([`Server::tls`], [`Server::and_bind_tls`]).
#[derive(Debug)]
pub struct Server {
    addrs: Vec<(SocketAddr, ListenTls)>,
    /// Listening sockets made elsewhere (systemd socket activation).
    inherited: Vec<(std::net::TcpListener, ListenTls)>,
    reuse_port: bool,
    bind_error: Option<io::Error>,
    workers: usize,
    config: Config,
    tls: Option<TlsConfig>,
    access_log: Option<AccessLog>,
    proxy: Option<Arc<ProxyProtocol>>,
    health: Option<Box<str>>,
    metrics: Option<Box<str>>,
    metrics_extra: Option<MetricsExtra>,
    fixed: Vec<(String, crate::Response)>,
    /// HTTP/3 on UDP beside every TLS listener.
    #[cfg(feature = "http3")]
    http3: bool,
}

/// More metrics, rendered at each scrape ([`Server::metrics_extra`]).
#[derive(Clone)]
pub(crate) struct MetricsExtra(pub(crate) Arc<dyn Fn() -> String + Send + Sync>);

impl std::fmt::Debug for MetricsExtra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsExtra(..)")
    }
}

impl Server {
    /// A server that will listen on `addr` (resolved now; an error surfaces when starting).
    pub fn bind(addr: impl ToSocketAddrs) -> Server {
        Server::empty().and_bind(addr)
    }

    /// A server that will accept on `listener`, a listening socket made elsewhere: the one
    /// [`listen_fds`] returns under systemd socket activation, say. Every worker accepts from
    /// it (the socket is shared, not bound again per worker).
    ///
    /// # Examples
    /// ```
    /// use peregrine::{Request, Server};
    /// let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// let server = Server::from_listener(listener).workers(1).spawn(|_req: Request| async { "hi" });
    /// # drop(server);
    /// ```
    pub fn from_listener(listener: std::net::TcpListener) -> Server {
        Server::empty().and_listener(listener)
    }

    /// Also accepts on `listener` (with TLS when [`Server::tls`] is set); see
    /// [`Server::from_listener`].
    pub fn and_listener(mut self, listener: std::net::TcpListener) -> Server {
        self.inherited.push((listener, ListenTls::Default));
        self
    }

    /// Joins the `SO_REUSEPORT` group of a port another process of the same user listens on,
    /// instead of refusing it: a new instance starts beside the old one, the kernel spreads new
    /// connections over both, and the old one drains ([`ServerHandle::shutdown`]) and exits.
    /// Default off, so that a port in use is an error rather than silently shared.
    ///
    /// Connections already queued on the old instance's sockets when they close are reset by
    /// the kernel; for restarts that lose none, inherit the socket instead ([`listen_fds`]).
    pub fn reuse_port(mut self, on: bool) -> Server {
        self.reuse_port = on;
        self
    }

    fn empty() -> Server {
        Server {
            addrs: Vec::new(),
            inherited: Vec::new(),
            reuse_port: false,
            bind_error: None,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            config: Config::default(),
            tls: None,
            access_log: None,
            proxy: None,
            health: None,
            metrics: None,
            metrics_extra: None,
            fixed: Vec::new(),
            #[cfg(feature = "http3")]
            http3: false,
        }
    }

    /// Also listens on `addr` (with TLS when [`Server::tls`] is set).
    pub fn and_bind(self, addr: impl ToSocketAddrs) -> Server {
        self.listen(addr, ListenTls::Default)
    }

    /// Also listens on `addr` with TLS, whatever [`Server::tls`] says: for a server with a
    /// plain and a TLS port.
    ///
    /// # Examples
    /// ```no_run
    /// use peregrine::{Request, Server};
    /// use peregrine::server::TlsConfig;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let tls = TlsConfig::from_pem_files("cert.pem", "key.pem")?;
    /// Server::bind("0.0.0.0:80")
    ///     .and_bind_tls("0.0.0.0:443", tls)
    ///     .run(|_req: Request| async { "hello" })?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn and_bind_tls(self, addr: impl ToSocketAddrs, tls: TlsConfig) -> Server {
        self.listen(addr, ListenTls::Tls(tls))
    }

    fn listen(mut self, addr: impl ToSocketAddrs, tls: ListenTls) -> Server {
        match addr.to_socket_addrs() {
            Ok(addrs) => self.addrs.extend(addrs.map(|a| (a, tls.clone()))),
            Err(e) => self.bind_error = Some(e),
        }
        self
    }

    /// Serves TLS (HTTPS) on the addresses given to [`Server::bind`] and
    /// [`Server::and_bind`]. ALPN offers `http/1.1`.
    ///
    /// # Examples
    /// ```no_run
    /// use peregrine::{Request, Server};
    /// use peregrine::server::TlsConfig;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let tls = TlsConfig::from_pem_files("cert.pem", "key.pem")?;
    /// Server::bind("0.0.0.0:8443").tls(tls).run(|_req: Request| async { "hello" })?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn tls(mut self, tls: TlsConfig) -> Server {
        self.tls = Some(tls);
        self
    }

    /// Calls `log` once per request after its response is written, including the requests
    /// the server refused before any handler ran (see [`LogEntry`]). It runs on the worker
    /// thread that served the request: keep it short (format and hand off).
    ///
    /// # Examples
    /// ```
    /// use peregrine::{Request, Server};
    /// let server = Server::bind("127.0.0.1:0").access_log(|e| {
    ///     eprintln!("{} {} {} {}", e.remote_addr.ip(), e.method, e.target, e.status);
    /// });
    /// # let _ = server;
    /// ```
    pub fn access_log(mut self, log: impl Fn(&LogEntry<'_>) + Send + Sync + 'static) -> Server {
        self.access_log = Some(AccessLog(Arc::new(log)));
        self
    }

    /// Reads the PROXY protocol (versions 1 and 2) on every listener, from the trusted networks
    /// `proxy` names: each connection must start with the header a load balancer such as
    /// HAProxy sends (`send-proxy` / `send-proxy-v2`), before TLS and before any HTTP byte.
    /// Requests and the access log then see the client the balancer reports
    /// ([`Request::remote_addr`](crate::Request::remote_addr)), and handlers the TLVs it sent
    /// ([`Request::proxy`](crate::Request::proxy)). A connection from elsewhere, or without a
    /// valid header within [`Config::header_read_timeout`], is closed unserved.
    ///
    /// Without this option a PROXY header is not special: it is refused like any other bad
    /// request line (400).
    ///
    /// # Examples
    /// ```
    /// use peregrine::server::ProxyProtocol;
    /// use peregrine::{Request, Server};
    ///
    /// let balancers = ProxyProtocol::new().trust("10.1.0.0/16".parse().unwrap());
    /// let server = Server::bind("0.0.0.0:8080").proxy_protocol(balancers);
    /// # let _ = server;
    /// ```
    pub fn proxy_protocol(mut self, proxy: ProxyProtocol) -> Server {
        self.proxy = Some(Arc::new(proxy));
        self
    }

    /// Answers `GET` and `HEAD` of `path` itself, before the handler: `200 ok` while serving,
    /// `503 draining` from the moment a drain begins ([`ServerHandle::shutdown`], SIGTERM), so
    /// a load balancer's health check takes the instance out before its listeners close (see
    /// [`Config::drain_grace`]). `path` is compared with the request's path as sent, without
    /// its query.
    ///
    /// # Examples
    /// ```
    /// use peregrine::{Request, Server};
    /// let server = Server::bind("0.0.0.0:8080").health("/healthz");
    /// # let _ = server;
    /// ```
    pub fn health(mut self, path: impl Into<String>) -> Server {
        self.health = Some(path.into().into_boxed_str());
        self
    }

    /// Answers `GET` and `HEAD` of `path` itself with the server's counters in the Prometheus
    /// text format: `peregrine_connections_open`, `peregrine_connections_total`,
    /// `peregrine_requests_in_flight`, `peregrine_requests_total{class="2xx"}` (one series per
    /// status class, refused requests included), `peregrine_response_body_bytes_total` and
    /// `peregrine_draining`.
    ///
    /// Each worker counts in its own cache lines with plain stores, and a scrape sums them:
    /// the request path takes no lock and no shared atomic. Without this option nothing is
    /// counted.
    ///
    /// # Examples
    /// ```
    /// use peregrine::{Request, Server};
    /// let server = Server::bind("0.0.0.0:8080").metrics("/metrics");
    /// # let _ = server;
    /// ```
    pub fn metrics(mut self, path: impl Into<String>) -> Server {
        self.metrics = Some(path.into().into_boxed_str());
        self
    }

    /// Appends the series `render` writes (Prometheus text, each with its `# TYPE` line) to
    /// what [`Server::metrics`] answers, at each scrape: a handler's own counters, such as a
    /// proxy's per-upstream ones ([`Proxy::metrics`](crate::proxy::Proxy::metrics)).
    ///
    /// # Examples
    /// ```
    /// use peregrine::proxy::{Proxy, Upstreams};
    /// use peregrine::Server;
    /// let proxy = Proxy::new(Upstreams::new(["http://127.0.0.1:9001"])?);
    /// let p = proxy.clone();
    /// let server = Server::bind("127.0.0.1:0").metrics("/metrics").metrics_extra(move || p.metrics());
    /// # let _ = (server, proxy);
    /// # Ok::<(), peregrine::client::Error>(())
    /// ```
    pub fn metrics_extra(mut self, render: impl Fn() -> String + Send + Sync + 'static) -> Server {
        self.metrics_extra = Some(MetricsExtra(Arc::new(render)));
        self
    }

    /// Answers `GET` and `HEAD` of `path` itself with `response`, before the handler, as
    /// nginx's `return` does: for a liveness probe, a `robots.txt`, a fixed status document.
    /// `path` is compared with the request's path as sent, without its query; other methods,
    /// and requests with a body, go to the handler. The server adds Date, the framing and the
    /// connection signal, as for any response; a `HEAD` gets the head alone.
    ///
    /// The response is prepared once, at start: over HTTP/1.1 a kept-alive request is answered
    /// by copying its bytes with a fresh Date, without building a [`Request`](crate::Request)
    /// or calling a handler: about a third of the instructions of a handler answering the same
    /// bytes (BENCHMARKS.md). Meant for a few paths; they are compared in turn.
    ///
    /// A pipelined run of requests for fixed answers on one connection is answered from the
    /// worker's copy of the answer repeated, without copying each answer. Timeouts and the
    /// connection limit apply to these connections as to any other.
    ///
    /// # Errors
    /// Starting the server ([`Server::spawn`], [`Server::run`]) fails with `InvalidInput` when
    /// `path` does not start with `/`, is answered already (twice here, or by
    /// [`Server::health`] or [`Server::metrics`]), when the body is not complete bytes (a
    /// stream, a file, trailers), or when the status cannot answer a `GET` (1xx, or a 204 with
    /// content).
    ///
    /// # Examples
    /// ```
    /// use http::header::{CONTENT_TYPE, HeaderValue};
    /// use peregrine::{Request, Response, Server};
    ///
    /// let robots = Response::new("User-agent: *\nDisallow: /private/\n")
    ///     .with_header(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    /// let server = Server::bind("127.0.0.1:0")
    ///     .fixed("/robots.txt", robots)
    ///     .spawn(|_req: Request| async { "from the handler" })
    ///     .unwrap();
    /// # server.shutdown_now();
    /// ```
    pub fn fixed(mut self, path: impl Into<String>, response: crate::Response) -> Server {
        self.fixed.push((path.into(), response));
        self
    }

    /// Also serves HTTP/3 (RFC 9114) over QUIC on UDP at the port of every TLS listener, with
    /// the same certificates (ALPN `h3`) and the same handler, and advertises it on HTTP/1.1
    /// and HTTP/2 responses with `Alt-Svc: h3=":PORT"; ma=86400` (RFC 7838). One worker
    /// serves the QUIC endpoint. 0-RTT is off (early data can be replayed). Default: off.
    ///
    /// # Examples
    /// ```no_run
    /// use peregrine::server::{Server, TlsConfig};
    /// use peregrine::Request;
    /// let tls = TlsConfig::from_pem_files("cert.pem", "key.pem").unwrap();
    /// Server::bind("127.0.0.1:8443").tls(tls).http3(true).run(|_req: Request| async { "hi" })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[cfg(feature = "http3")]
    pub fn http3(mut self, on: bool) -> Server {
        self.http3 = on;
        self
    }

    /// Number of worker threads. Default: `std::thread::available_parallelism()`.
    pub fn workers(mut self, n: usize) -> Server {
        self.workers = n.max(1);
        self
    }

    /// Replaces every limit and timeout.
    pub fn config(mut self, config: Config) -> Server {
        self.config = config;
        self
    }

    /// Connections open at once over all workers; see [`Config::max_connections`].
    pub fn max_connections(mut self, n: usize) -> Server {
        self.config.max_connections = n;
        self
    }

    /// See [`Config::header_read_timeout`].
    pub fn header_read_timeout(mut self, t: Duration) -> Server {
        self.config.header_read_timeout = t;
        self
    }

    /// See [`Config::keep_alive_timeout`].
    pub fn keep_alive_timeout(mut self, t: Duration) -> Server {
        self.config.keep_alive_timeout = t;
        self
    }

    /// See [`Config::drain_grace`]: how long the listeners keep accepting once a drain begins.
    pub fn drain_grace(mut self, t: Duration) -> Server {
        self.config.drain_grace = t;
        self
    }

    /// See [`Config::shutdown_timeout`].
    pub fn shutdown_timeout(mut self, t: Duration) -> Server {
        self.config.shutdown_timeout = t;
        self
    }

    /// Binds the listeners and starts the workers, returning at once.
    ///
    /// # Errors
    /// Address resolution, bind or runtime creation failures; a TLS configuration rustls
    /// refuses (`InvalidInput`).
    pub fn spawn<H: Handler>(self, handler: H) -> io::Result<ServerHandle> {
        if let Some(e) = self.bind_error {
            return Err(e);
        }
        if self.addrs.is_empty() && self.inherited.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no address to bind"));
        }
        let fixed = prepare_fixed(self.fixed, [&self.health, &self.metrics])?;
        let mut tls = Vec::with_capacity(self.addrs.len() + self.inherited.len());
        let listens =
            self.addrs.iter().map(|(_, l)| l).chain(self.inherited.iter().map(|(_, l)| l));
        for listen in listens {
            let config = match listen {
                ListenTls::Tls(config) => Some(config),
                ListenTls::Default => self.tls.as_ref(),
            };
            let alpn = if self.config.http2 { ALPN } else { ALPN_HTTP1 };
            let built = config.map(|c| c.server_config(alpn)).transpose();
            tls.push(built.map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?);
        }
        let addrs: Vec<SocketAddr> = self.addrs.iter().map(|(a, _)| *a).collect();
        let (mut listeners, mut addrs) = runtime::bind_all(&addrs, self.workers, self.reuse_port)?;
        for (listener, _) in self.inherited {
            addrs.push(runtime::share_listener(listener, &mut listeners)?);
        }
        #[cfg(feature = "http3")]
        let mut quic =
            if self.http3 { h3::bind_quic(&addrs, &tls, &self.config)? } else { Vec::new() };
        #[cfg(feature = "http3")]
        let alt_svc = match quic.first().map(|(s, _)| s.local_addr()) {
            Some(addr) => Some(alt_svc::value(addr?.port())),
            None => None,
        };
        let shutdown = Arc::new(ShutdownSignal::default());
        let load = Arc::new(worker::Load::new(listeners.len()));
        let counters =
            self.metrics.as_ref().map(|_| Arc::new(metrics::Metrics::new(listeners.len())));
        let ops =
            (self.health.is_some() || self.metrics.is_some() || !fixed.is_empty()).then(|| {
                Arc::new(ops::Ops {
                    health: self.health.clone(),
                    metrics: self.metrics.clone().zip(counters.clone()),
                    metrics_extra: self.metrics_extra.clone(),
                    shutdown: shutdown.clone(),
                    fixed_h1: !fixed.is_empty() && self.access_log.is_none() && counters.is_none(),
                    fixed,
                })
            });
        let mut threads = Vec::with_capacity(listeners.len());
        for (index, listeners) in listeners.into_iter().enumerate() {
            let listeners = listeners.into_iter().zip(tls.iter().cloned()).collect();
            let shared = runtime::Shared {
                config: self.config,
                access_log: self.access_log.clone(),
                load: load.clone(),
                shutdown: shutdown.clone(),
                proxy: self.proxy.clone(),
                ops: ops.clone(),
                metrics: counters.as_ref().and_then(|m| m.worker(index)),
                // The first worker serves QUIC.
                #[cfg(feature = "http3")]
                quic: std::mem::take(&mut quic),
            };
            #[cfg(feature = "http3")]
            let spawned = match &alt_svc {
                Some(value) => {
                    let handler = alt_svc::AltSvc { inner: handler.clone(), value: value.clone() };
                    runtime::spawn_worker(index, listeners, handler, shared)
                }
                None => runtime::spawn_worker(index, listeners, handler.clone(), shared),
            };
            #[cfg(not(feature = "http3"))]
            let spawned = runtime::spawn_worker(index, listeners, handler.clone(), shared);
            match spawned {
                Ok(thread) => threads.push(thread),
                Err(e) => {
                    shutdown.trigger();
                    return Err(e);
                }
            }
        }
        Ok(ServerHandle { addrs, shutdown, threads })
    }

    /// Starts the server and blocks until SIGINT or SIGTERM, then shuts down gracefully (see
    /// [`ServerHandle::shutdown`]); a second SIGINT or SIGTERM during the drain ends it at once
    /// ([`ServerHandle::shutdown_now`]).
    ///
    /// # Errors
    /// As [`Server::spawn`], or when the signal handlers cannot be installed.
    pub fn run<H: Handler>(self, handler: H) -> io::Result<()> {
        let handle = self.spawn(handler)?;
        let signals = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        signals.block_on(async {
            use tokio::signal::unix::{SignalKind, signal};
            let mut interrupt = signal(SignalKind::interrupt())?;
            let mut terminate = signal(SignalKind::terminate())?;
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
                () = handle.shutdown.wait() => {}
            }
            handle.shutdown();
            tokio::select! {
                _ = interrupt.recv() => handle.shutdown_now(),
                _ = terminate.recv() => handle.shutdown_now(),
                () = handle.stopped() => {}
            }
            io::Result::Ok(())
        })?;
        handle.join()
    }
}

/// Prepares the fixed answers ([`Server::fixed`]); `InvalidInput` names the first one that
/// cannot be, or a path answered twice.
fn prepare_fixed(
    answers: Vec<(String, crate::Response)>,
    ops: [&Option<Box<str>>; 2],
) -> io::Result<Vec<fixed::Fixed>> {
    let invalid = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
    let mut prepared: Vec<fixed::Fixed> = Vec::with_capacity(answers.len());
    for (path, response) in answers {
        let taken = prepared.iter().any(|f| f.path() == path)
            || ops.iter().any(|p| p.as_deref() == Some(path.as_str()));
        if taken {
            return Err(invalid(format!("fixed answer for {path}: the path is answered already")));
        }
        prepared.push(fixed::Fixed::new(&path, response).map_err(invalid)?);
    }
    Ok(prepared)
}

/// A running server: its addresses, and the way to stop it.
///
/// Dropping the handle starts a graceful shutdown without waiting for it.
#[derive(Debug)]
pub struct ServerHandle {
    addrs: Vec<SocketAddr>,
    shutdown: Arc<ShutdownSignal>,
    threads: Vec<JoinHandle<()>>,
}

impl ServerHandle {
    /// The first bound address (with the port the kernel chose, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Every bound address, in the order given to the builder.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Starts a graceful shutdown, a drain: from now on responses carry `Connection: close`
    /// and the health endpoint ([`Server::health`]) answers 503; the listeners keep accepting
    /// for [`Config::drain_grace`] while a load balancer notices, then close; idle connections
    /// close, and in-flight requests finish within [`Config::shutdown_timeout`]. Returns at
    /// once.
    pub fn shutdown(&self) {
        self.shutdown.trigger();
    }

    /// Ends at once: the listeners and every connection, idle or not, are closed without
    /// waiting for requests in flight (what a second SIGTERM does to [`Server::run`]).
    /// Returns at once; [`ServerHandle::join`] then returns promptly.
    pub fn shutdown_now(&self) {
        self.shutdown.force();
    }

    /// Waits until every worker has stopped (after [`ServerHandle::shutdown`] or
    /// [`ServerHandle::shutdown_now`]), without blocking the thread: for a caller that waits
    /// for a signal at the same time. [`ServerHandle::join`] afterwards returns at once.
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub async fn stopped(&self) {
        self.shutdown.stopped.wait().await;
    }

    /// Waits until every worker has stopped (after [`ServerHandle::shutdown`]).
    ///
    /// # Errors
    /// When a worker thread panicked.
    pub fn join(mut self) -> io::Result<()> {
        let mut result = Ok(());
        for thread in self.threads.drain(..) {
            if thread.join().is_err() {
                result = Err(io::Error::other("a worker thread panicked"));
            }
        }
        result
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.shutdown.trigger();
        }
    }
}
