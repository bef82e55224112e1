//! One client connection, HTTP/1.1 or HTTP/2: the API the [`Client`](super::Client)'s pool and
//! the load generator build on, in the shape of hyper's `client::conn` — open a connection,
//! send requests on it, drive it for their responses — with the two halves joined: the task
//! that owns a [`Connection`] drives it by asking for its next [`Event`], so nothing passes
//! through a channel or another task, and a request costs no allocation.
//!
//! - [`Connection::connect`] opens one to a URL's origin (DNS, TCP, TLS with ALPN choosing
//!   `h2` or `http/1.1`, or h2c by prior knowledge), with the connect and handshake timeouts
//!   of its [`Config`]; [`Connection::handshake`] takes a TCP stream the caller opened.
//! - [`Connection::send_request`] encodes a request into the connection's send buffer: for
//!   HTTP/1.1 with the `Host` line, default-port decision and request-line end prepared when
//!   the connection was made; for HTTP/2 with `:scheme` and `:authority` prepared the same way
//!   and HPACK straight into the frame buffer. Several may be sent before reading: HTTP/2
//!   multiplexes them (up to the server's SETTINGS_MAX_CONCURRENT_STREAMS), HTTP/1.1
//!   pipelines them (idempotent methods only, RFC 9112 §9.3.2).
//! - [`Connection::next_event`] writes what is queued, reads, and reports the next thing that
//!   happened: a response head (a view over the connection's buffers), body bytes (a slice of
//!   its read buffer: copy them into your own buffer), the end of a response, a failed stream.
//!   What it lends is valid until the next call.
//!
//! # Examples
//! ```no_run
//! use peregrine::Method;
//! use peregrine::client::conn::{Config, Connection, Event};
//!
//! # async fn run() -> Result<(), peregrine::client::Error> {
//! let config = Config::default();
//! let mut conn = Connection::connect("http://127.0.0.1:8080", &config).await?;
//! let mut body = [0u8; 4096];
//! let mut len = 0;
//! for _ in 0..1000 {
//!     conn.send_request(Method::Get, "/plaintext", &[("accept", b"*/*")], &[])?;
//!     loop {
//!         match conn.next_event().await? {
//!             Event::Head { head, .. } => assert_eq!(head.status(), 200),
//!             Event::Data { data, .. } => {
//!                 body[len..len + data.len()].copy_from_slice(data);
//!                 len += data.len();
//!             }
//!             Event::End { .. } => break,
//!             Event::Failed { error, .. } => return Err(error),
//!             Event::Writable { .. } => {}
//!         }
//!     }
//!     len = 0;
//! }
//! # Ok(()) }
//! ```
//!
//! # Cancel safety
//! [`Connection::next_event`] is cancel safe: bytes read are kept in the connection and the
//! event is produced by the next call.

mod event;
mod h1;
mod h2;
#[cfg(feature = "http3")]
mod h3;
mod last_request;
#[cfg(any(fuzzing, feature = "unstable"))]
mod reader;
mod timer;

use std::future::poll_fn;
use std::io;
use std::ops::Range;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use http::HeaderMap;
use tokio::net::TcpStream;
use tokio::time::Instant;

pub use event::{Event, RequestId, ResponseHead};
#[cfg(any(fuzzing, feature = "unstable"))]
pub use reader::ResponseReader;

use super::error::{Deadline, Error, Kind};
use super::origin::Origin;
use super::tls::{Alpn, TlsConfig};
use crate::Version;
use crate::headers::Source;
use crate::http1;
use crate::http1::Limits;
use crate::http1::encode::{RequestPrelude, Scheme};
use crate::net::{TlsError, Transport, WriteStall};
use crate::{AsMethod, Method};
use h1::H1;
use h2::H2;
#[cfg(feature = "http3")]
use h3::H3;
use timer::Timer;

/// Room kept in the read buffer before each read.
const MIN_READ: usize = 16 * 1024;

/// The protocol a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1 (RFC 9112).
    Http1,
    /// HTTP/2 (RFC 9113).
    Http2,
    /// HTTP/3 (RFC 9114) over QUIC.
    Http3,
}

/// Which protocols a connection may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Versions {
    /// `https`: ALPN offers `h2` and `http/1.1` and the server chooses; `http`: HTTP/1.1.
    #[default]
    Auto,
    /// HTTP/1.1 only (ALPN offers only `http/1.1`).
    Http1Only,
    /// HTTP/2 only: `http` speaks h2c by prior knowledge (RFC 9113 §3.3), `https` offers only
    /// `h2`.
    Http2Only,
    /// HTTP/3 over QUIC (RFC 9114), `https` only, with ALPN `h3`: the server is known to speak
    /// it (RFC 9114 §3.1; the pooled client can discover it through `Alt-Svc` instead:
    /// [`ClientBuilder::http3_alt_svc`](super::ClientBuilder::http3_alt_svc)). Needs the
    /// crate's `http3` feature.
    Http3Only,
}

/// How connections are made and what they accept; shared by every connection a
/// [`Client`](super::Client) opens.
///
/// | Setting | Default |
/// |---|---|
/// | `connect_timeout` (DNS and TCP) | 10 s |
/// | `tls_handshake_timeout` | 10 s |
/// | `read_timeout` (no byte for that long while a response is awaited) | 30 s |
/// | `max_body_bytes` (response body) | 64 MiB |
/// | `head_limits` (response head) | 64 KiB, 100 fields |
/// | `versions` | [`Versions::Auto`] |
/// | `tls` | [`TlsConfig::webpki_roots`] |
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use peregrine::client::conn::{Config, Versions};
/// let config = Config::default()
///     .read_timeout(Some(Duration::from_secs(5)))
///     .versions(Versions::Http2Only);
/// assert_eq!(config.max_body(), 64 * 1024 * 1024);
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    connect_timeout: Duration,
    tls_handshake_timeout: Duration,
    read_timeout: Option<Duration>,
    max_body_bytes: u64,
    head_limits: Limits,
    versions: Versions,
    http2: crate::http2::Config,
    tls: TlsConfig,
    /// The rustls configuration, built at the first `https` connection and shared after
    /// (its session cache resumes later handshakes).
    rustls: Arc<OnceLock<Result<Arc<rustls::ClientConfig>, TlsError>>>,
    /// The QUIC configuration over `rustls`, built at the first HTTP/3 connection.
    #[cfg(feature = "http3")]
    quic: Arc<OnceLock<Result<quinn::ClientConfig, String>>>,
    /// The HTTP/1.1 connections' rules, built at the first and shared by all (a pointer per
    /// connection, not a copy).
    h1: Arc<OnceLock<Arc<http1::conn::Config>>>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            connect_timeout: Duration::from_secs(10),
            tls_handshake_timeout: Duration::from_secs(10),
            read_timeout: Some(Duration::from_secs(30)),
            max_body_bytes: 64 * 1024 * 1024,
            head_limits: Limits { max_head_bytes: 64 * 1024, ..Limits::default() },
            versions: Versions::Auto,
            http2: crate::http2::Config { max_concurrent_streams: 0, ..Default::default() },
            tls: TlsConfig::default(),
            rustls: Arc::default(),
            #[cfg(feature = "http3")]
            quic: Arc::default(),
            h1: Arc::default(),
        }
    }
}

impl Config {
    /// Time allowed for resolving the host and opening the TCP connection.
    pub fn connect_timeout(mut self, d: Duration) -> Config {
        self.connect_timeout = d;
        self
    }

    /// Time allowed for the TLS handshake.
    pub fn tls_handshake_timeout(mut self, d: Duration) -> Config {
        self.tls_handshake_timeout = d;
        self
    }

    /// The read timeout set.
    pub(crate) fn read_timeout_value(&self) -> Option<Duration> {
        self.read_timeout
    }

    /// Longest wait for the next byte while a response is awaited (`None`: no limit), counted
    /// from the last bytes received or, when later, the last request sent.
    pub fn read_timeout(mut self, d: Option<Duration>) -> Config {
        self.read_timeout = d;
        self.h1 = Arc::default();
        #[cfg(feature = "http3")]
        {
            self.quic = Arc::default();
        }
        self
    }

    /// Largest response body accepted; a longer one fails with [`Error::is_body`].
    pub fn max_body_bytes(mut self, n: u64) -> Config {
        self.max_body_bytes = n;
        self.h1 = Arc::default();
        self
    }

    /// The response body limit.
    pub fn max_body(&self) -> u64 {
        self.max_body_bytes
    }

    /// Limits on a response head (bytes, fields); a larger one fails with
    /// [`Error::is_protocol`]. HTTP/2 advertises the byte limit as
    /// SETTINGS_MAX_HEADER_LIST_SIZE.
    pub fn head_limits(mut self, limits: Limits) -> Config {
        self.head_limits = limits;
        self.h1 = Arc::default();
        self
    }

    /// Which protocol versions to use.
    pub fn versions(mut self, v: Versions) -> Config {
        self.versions = v;
        self.rustls = Arc::default();
        #[cfg(feature = "http3")]
        {
            self.quic = Arc::default();
        }
        self
    }

    pub(crate) fn versions_value(&self) -> Versions {
        self.versions
    }

    /// HTTP/2 settings (windows, frame size); `max_concurrent_streams` is what the server may
    /// open, which is none: servers do not push to this client.
    pub fn http2(mut self, config: crate::http2::Config) -> Config {
        self.http2 = config;
        self
    }

    /// What TLS trusts.
    pub fn tls(mut self, tls: TlsConfig) -> Config {
        self.tls = tls;
        self.rustls = Arc::default();
        #[cfg(feature = "http3")]
        {
            self.quic = Arc::default();
        }
        self
    }

    fn rustls(&self) -> Result<Arc<rustls::ClientConfig>, Error> {
        let alpn = match self.versions {
            Versions::Auto => Alpn::Both,
            Versions::Http1Only => Alpn::Http1,
            Versions::Http2Only => Alpn::Http2,
            #[cfg(feature = "http3")]
            Versions::Http3Only => Alpn::Http3,
            #[cfg(not(feature = "http3"))]
            Versions::Http3Only => Alpn::Http2,
        };
        let built = self.rustls.get_or_init(|| self.tls.rustls_config(alpn));
        built.clone().map_err(|e| Error::with_source(Kind::Tls, "TLS configuration", e))
    }

    /// The QUIC configuration for HTTP/3 connections: a rustls configuration of its own
    /// (ALPN `h3` alone, whatever [`Config::versions`] offers over TCP: an alternative service
    /// is reached over QUIC while the origin speaks HTTP/2) and the idle timeout, built once.
    #[cfg(feature = "http3")]
    fn quic(&self) -> Result<quinn::ClientConfig, Error> {
        let built = self.quic.get_or_init(|| {
            let tls = self.tls.rustls_config(Alpn::Http3).map_err(|e| e.to_string())?;
            crate::net::quic_connect::client_config(tls, self.read_timeout)
        });
        built.clone().map_err(|e| Error::with_source(Kind::Tls, "QUIC's TLS configuration", e))
    }

    /// What an HTTP/1.1 connection enforces: the response head limits, the body limit and the
    /// read timeout.
    fn h1_config(&self) -> Arc<http1::conn::Config> {
        let built = self.h1.get_or_init(|| {
            Arc::new(h1_config(self.head_limits, self.max_body_bytes, self.read_timeout))
        });
        built.clone()
    }

    fn h2_config(&self) -> crate::http2::Config {
        let max = u32::try_from(self.head_limits.max_head_bytes).unwrap_or(u32::MAX);
        crate::http2::Config { max_header_list_size: max, ..self.http2.clone() }
    }
}

/// An HTTP/1.1 client connection's rules from the client's settings (the server's are left at
/// their defaults: a client's `Conn` does not use them).
fn h1_config(
    limits: Limits,
    max_body_bytes: u64,
    read_timeout: Option<Duration>,
) -> http1::conn::Config {
    http1::conn::Config { limits, max_body_bytes, read_timeout, ..http1::conn::Config::default() }
}

/// A step of decoding, from a protocol state to the connection.
#[derive(Debug)]
pub(crate) enum Step {
    /// Something to report, and how many bytes of input it consumed (applied once the caller
    /// moves past the event, which may borrow them).
    Ready(Ready, usize),
    /// Input consumed with nothing to report.
    Consumed(usize),
    /// More input is needed.
    NeedInput,
}

/// An event before it borrows the connection.
#[derive(Debug)]
pub(crate) enum Ready {
    Head {
        id: RequestId,
        status: u16,
        version: Version,
    },
    Data {
        id: RequestId,
        range: Range<usize>,
    },
    /// Trailers boxed: most ends have none, and this enum moves through every layer of the
    /// decoding loop, where an inline `HeaderMap` made each move of every event 100 bytes.
    End {
        id: RequestId,
        trailers: Option<Box<HeaderMap>>,
    },
    Failed {
        id: RequestId,
        error: Error,
    },
    Writable {
        id: RequestId,
    },
}

// One per connection, never moved per request: HTTP/1.1's state inline keeps its path one
// pointer shorter; HTTP/2's and HTTP/3's much larger states are boxed.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Proto {
    H1(H1),
    H2(Box<H2>),
    #[cfg(feature = "http3")]
    H3(Box<H3>),
}

/// One HTTP/1.1 or HTTP/2 connection to an origin, driven by the task that owns it; see the
/// [module docs](self).
///
/// `Send`, so it can live in a future spawned on a multi-threaded runtime; not shared: one task
/// drives it (the [`Client`](super::Client) shares HTTP/2 connections between tasks on top).
#[derive(Debug)]
pub struct Connection {
    /// The TCP or TLS stream; `None` over QUIC, whose streams the HTTP/3 state holds.
    io: Option<Transport>,
    rbuf: BytesMut,
    wbuf: Vec<u8>,
    wpos: usize,
    proto: Proto,
    /// Input the last event borrowed, consumed when the caller comes back.
    consume: usize,
    eof: bool,
    failed: Option<Error>,
    read_timeout: Option<Duration>,
    /// For the deadline of a wait (see `poll_timer`).
    timer: Option<Timer>,
    /// When the wait for the response times out (`None`: no response is awaited): set at the
    /// first wait after a read or a request (`armed`).
    deadline: Option<Instant>,
    armed: bool,
    /// When the awaited response's head must have come by (see `expect_head_by`), and why.
    head_by: Option<(Instant, &'static str)>,
    /// Since when the write under way has made no progress.
    stall: WriteStall,
    /// Waits for the server have no deadline (a WebSocket's connection: its own timers rule);
    /// a stalled write still has one.
    untimed: bool,
    /// When the last read returned bytes: the arrival time of every event decoded from them.
    read_at: std::time::Instant,
    /// When the last request was queued.
    sent_at: std::time::Instant,
    origin: Origin,
    /// Made on a current-thread runtime: a short read may clear the socket's readiness (one
    /// `recv` saved per response), which would race with the reactor on other runtimes.
    single_thread: bool,
}

/// Which of a wait's deadlines passed (see `Connection::poll_timer`).
#[derive(Clone, Copy)]
enum Passed {
    /// A write made no progress for the read timeout.
    Stall,
    /// The response head did not come by the time `Connection::expect_head_by` set.
    Head,
    /// No response bytes for the read timeout.
    Read,
}

fn io_error(e: io::Error) -> Error {
    let what = match e.kind() {
        io::ErrorKind::InvalidData => "the TLS session failed",
        _ => "the connection failed",
    };
    let kind = if e.kind() == io::ErrorKind::InvalidData { Kind::Tls } else { Kind::Closed };
    Error::with_source(kind, what, e)
}

impl Connection {
    /// Opens a connection to the origin of `url` (`http://` or `https://`; the path is
    /// ignored): resolves the host, connects over TCP, and for `https` runs the TLS handshake,
    /// where ALPN chooses HTTP/2 or HTTP/1.1 (see [`Config::versions`]).
    ///
    /// # Errors
    /// [`Error::is_request`] for a URL that is not `http` or `https`; [`Error::is_connect`]
    /// when the host does not resolve or refuses; [`Error::is_tls`] when the handshake fails
    /// (an untrusted or mismatched certificate); [`Error::is_timeout`] too when a deadline
    /// passes.
    pub async fn connect(url: &str, config: &Config) -> Result<Connection, Error> {
        let (origin, _) = Origin::parse(url)?;
        Connection::connect_origin(&origin, config).await
    }

    /// [`Connection::connect`] to an [`Origin`].
    ///
    /// # Errors
    /// As [`Connection::connect`].
    pub async fn connect_origin(origin: &Origin, config: &Config) -> Result<Connection, Error> {
        Connection::connect_prelude(origin, prelude(origin)?, config).await
    }

    /// [`Connection::connect_origin`], its requests carrying `authority` as their `Host` (or
    /// HTTP/2 `:authority`) instead of the origin's: a reverse proxy keeping its client's Host.
    /// TLS still names and verifies the origin's host.
    ///
    /// # Errors
    /// As [`Connection::connect`]; [`Error::is_request`] when `authority` is not a valid Host
    /// value.
    pub async fn connect_with_authority(
        origin: &Origin,
        authority: &[u8],
        config: &Config,
    ) -> Result<Connection, Error> {
        let prelude = RequestPrelude::with_authority(authority)
            .map_err(|_| Error::new(Kind::Request, "the authority is not a valid Host value"))?;
        Connection::connect_prelude(origin, prelude, config).await
    }

    async fn connect_prelude(
        origin: &Origin,
        prelude: RequestPrelude,
        config: &Config,
    ) -> Result<Connection, Error> {
        if config.versions == Versions::Http3Only {
            return Connection::connect_h3(origin, prelude, config).await;
        }
        let tcp = super::connect::tcp(origin, config.connect_timeout).await?;
        match origin.scheme() {
            Scheme::Http => {
                let protocol = match config.versions {
                    Versions::Http2Only => Protocol::Http2,
                    _ => Protocol::Http1,
                };
                Ok(Connection::new(
                    Some(Transport::Plain(tcp)),
                    origin.clone(),
                    prelude,
                    protocol,
                    config,
                ))
            }
            Scheme::Https => {
                let tls = config.rustls()?;
                let (io, alpn) =
                    super::connect::tls(tcp, origin, tls, config.tls_handshake_timeout).await?;
                let protocol = match (alpn, config.versions) {
                    (_, Versions::Http2Only) => Protocol::Http2,
                    (Some(b"h2"), Versions::Auto) => Protocol::Http2,
                    _ => Protocol::Http1,
                };
                Ok(Connection::new(Some(io), origin.clone(), prelude, protocol, config))
            }
        }
    }

    /// HTTP/3: a QUIC connection (TLS 1.3 inside, ALPN `h3`) within the connect and handshake
    /// timeouts together, then our control and QPACK streams.
    async fn connect_h3(
        origin: &Origin,
        prelude: RequestPrelude,
        config: &Config,
    ) -> Result<Connection, Error> {
        let timeout = config.connect_timeout + config.tls_handshake_timeout;
        let dial = (origin.host(), origin.port());
        Connection::connect_quic(origin, dial, None, prelude, config, timeout).await
    }

    /// An HTTP/3 connection to `origin`'s alternative service at `host:port` (RFC 7838 §2):
    /// QUIC to there, within `timeout`, with TLS naming and verifying the origin's host (SNI
    /// and certificate, RFC 7838 §2.1) and requests carrying the origin as `:authority`; the
    /// connection belongs to the origin.
    ///
    /// # Errors
    /// As [`Connection::connect`].
    #[cfg(feature = "http3")]
    pub(crate) async fn connect_alternative(
        origin: &Origin,
        (host, port): (&str, u16),
        config: &Config,
        timeout: Duration,
    ) -> Result<Connection, Error> {
        // RFC 7838 §5: requests over an alternative say which (uri-host, so an IPv6 address
        // in brackets, and port), computed once for the connection.
        let bracket = host.contains(':') && !host.starts_with('[');
        let alt_used = if bracket { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
        let alt_used = Some(alt_used.into_bytes().into_boxed_slice());
        Connection::connect_quic(origin, (host, port), alt_used, prelude(origin)?, config, timeout)
            .await
    }

    #[cfg(feature = "http3")]
    async fn connect_quic(
        origin: &Origin,
        dial: (&str, u16),
        alt_used: Option<Box<[u8]>>,
        prelude: RequestPrelude,
        config: &Config,
        timeout: Duration,
    ) -> Result<Connection, Error> {
        if origin.scheme() != Scheme::Https {
            return Err(Error::new(Kind::Request, "HTTP/3 needs an https URL (RFC 9114 §3.1)"));
        }
        let quic = config.quic()?;
        let (endpoint, conn) = super::connect::quic(origin, dial, &quic, timeout).await?;
        let h3 = H3::new(
            endpoint,
            conn,
            prelude.host(),
            alt_used,
            crate::http3::conn::Config::default(),
            config.max_body_bytes,
        )
        .await?;
        let mut c = Connection::new(None, origin.clone(), prelude, Protocol::Http1, config);
        c.proto = Proto::H3(Box::new(h3));
        Ok(c)
    }

    #[cfg(not(feature = "http3"))]
    async fn connect_quic(
        _: &Origin,
        _: (&str, u16),
        _: Option<Box<[u8]>>,
        _: RequestPrelude,
        _: &Config,
        _: Duration,
    ) -> Result<Connection, Error> {
        Err(Error::new(Kind::Request, "built without the http3 feature"))
    }

    /// A connection over a TCP stream the caller opened to `origin` (plain `http`): HTTP/1.1,
    /// or HTTP/2 by prior knowledge (h2c, RFC 9113 §3.3).
    ///
    /// # Errors
    /// [`Error::is_request`] when the origin's host cannot be a `Host` value.
    pub async fn handshake(
        tcp: TcpStream,
        origin: &Origin,
        protocol: Protocol,
        config: &Config,
    ) -> Result<Connection, Error> {
        let prelude = prelude(origin)?;
        crate::net::connect::set_up(&tcp);
        Ok(Connection::new(Some(Transport::Plain(tcp)), origin.clone(), prelude, protocol, config))
    }

    fn new(
        io: Option<Transport>,
        origin: Origin,
        prelude: RequestPrelude,
        protocol: Protocol,
        config: &Config,
    ) -> Connection {
        let now = std::time::Instant::now();
        let proto = match protocol {
            Protocol::Http1 => Proto::H1(H1::new(prelude, config.h1_config(), now)),
            Protocol::Http2 | Protocol::Http3 => Proto::H2(Box::new(H2::new(
                origin.scheme() == Scheme::Https,
                prelude.host(),
                config.h2_config(),
                config.max_body_bytes,
                now,
            ))),
        };
        let timer = config.read_timeout.map(|_| Timer::new());
        Connection {
            io,
            rbuf: BytesMut::with_capacity(MIN_READ * 2),
            wbuf: Vec::with_capacity(4096),
            wpos: 0,
            proto,
            consume: 0,
            eof: false,
            failed: None,
            read_timeout: config.read_timeout,
            timer,
            deadline: None,
            armed: false,
            head_by: None,
            stall: WriteStall::default(),
            untimed: false,
            read_at: now,
            sent_at: now,
            origin,
            single_thread: matches!(
                tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()),
                Ok(tokio::runtime::RuntimeFlavor::CurrentThread)
            ),
        }
    }

    /// After a `101 Switching Protocols` (HTTP/1.1, RFC 9110 §15.2.2): the transport, the
    /// bytes read past the response's head (the new protocol's first), and whether the
    /// connection was made on a current-thread runtime. `None` when the connection did not
    /// switch.
    pub(crate) fn into_upgraded(mut self) -> Option<(Transport, BytesMut, bool)> {
        self.settle();
        match &self.proto {
            Proto::H1(h) if h.conn.is_upgraded() && self.failed.is_none() => {}
            _ => return None,
        }
        Some((self.io?, self.rbuf, self.single_thread))
    }

    /// HTTP/2: waits for the server's first SETTINGS (within the read timeout) and says
    /// whether they allow extended CONNECT (RFC 8441 §3: SETTINGS_ENABLE_CONNECT_PROTOCOL =
    /// 1); HTTP/1.1: `false`. Call before any request: it reports no event.
    pub(crate) async fn extended_connect(&mut self) -> Result<bool, Error> {
        poll_fn(|cx| {
            let Proto::H2(h) = &self.proto else { return Poll::Ready(Ok(false)) };
            if let Some(allowed) = h.extended_connect() {
                return Poll::Ready(Ok(allowed));
            }
            match self.poll_ready(cx) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                // With no stream open, no event concerns a request.
                Poll::Ready(Ok(_)) => Poll::Ready(Err(self.fail(Error::new(
                    Kind::Protocol,
                    "a stream event before the server's SETTINGS",
                )))),
                Poll::Pending => match &self.proto {
                    Proto::H2(h) => {
                        h.extended_connect().map_or(Poll::Pending, |a| Poll::Ready(Ok(a)))
                    }
                    _ => Poll::Ready(Ok(false)),
                },
            }
        })
        .await
    }

    /// HTTP/2: opens a stream with an extended CONNECT for `protocol` (RFC 8441 §4), once
    /// [`Connection::extended_connect`] said the server allows it; its DATA goes with
    /// [`Connection::send_data`] and comes as the response's body, which no body limit
    /// bounds.
    ///
    /// # Errors
    /// [`Error::is_request`] over HTTP/1.1, before the server allowed it, or for fields HTTP/2
    /// does not carry.
    pub(crate) fn send_extended_connect(
        &mut self,
        protocol: &str,
        target: &str,
        fields: &[(&str, &[u8])],
    ) -> Result<RequestId, Error> {
        if let Some(e) = &self.failed {
            return Err(e.shallow_clone());
        }
        let Proto::H2(h) = &mut self.proto else {
            return Err(Error::new(Kind::Request, "extended CONNECT is HTTP/2's (RFC 8441)"));
        };
        let id = h.send_connect(protocol, target, fields)?;
        self.sent_at = std::time::Instant::now();
        self.armed = false;
        Ok(id)
    }

    /// From now on a wait for the server has no deadline, while a stalled write still fails
    /// after the read timeout: for a connection that carries a WebSocket, which may be quiet
    /// for as long as its application likes and has timers of its own.
    pub(crate) fn untimed_reads(&mut self) {
        self.untimed = true;
        self.deadline = None;
        self.armed = false;
    }

    /// The protocol the connection speaks.
    pub fn protocol(&self) -> Protocol {
        match self.proto {
            Proto::H1(_) => Protocol::Http1,
            Proto::H2(_) => Protocol::Http2,
            #[cfg(feature = "http3")]
            Proto::H3(_) => Protocol::Http3,
        }
    }

    /// The origin it talks to.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Whether a request with `method` can be sent now: HTTP/1.1 with nothing in flight (or
    /// only idempotent requests, for pipelining an idempotent one), HTTP/2 below the server's
    /// concurrent-stream limit; neither after the connection failed or is closing.
    pub fn can_send(&mut self, method: Method) -> bool {
        self.failed.is_none()
            && match &mut self.proto {
                Proto::H1(h) => h.conn.can_send(method),
                Proto::H2(h) => h.can_send(),
                #[cfg(feature = "http3")]
                Proto::H3(h) => h.can_send(),
            }
    }

    /// Whether the connection may carry requests after the ones in flight (no
    /// `Connection: close`, GOAWAY, end of input or error seen).
    pub fn is_reusable(&self) -> bool {
        self.failed.is_none()
            && !self.eof
            && match &self.proto {
                Proto::H1(h) => h.conn.is_reusable(),
                Proto::H2(h) => h.is_reusable(),
                #[cfg(feature = "http3")]
                Proto::H3(h) => h.is_reusable(),
            }
    }

    /// How many requests may be in flight at once: 1 for HTTP/1.1 (more only by pipelining),
    /// the server's SETTINGS_MAX_CONCURRENT_STREAMS for HTTP/2 (unlimited until it says).
    pub fn max_in_flight(&self) -> usize {
        match &self.proto {
            Proto::H1(_) => 1,
            Proto::H2(h) => {
                h.conn.peer_settings().max_concurrent_streams.map_or(usize::MAX, |n| n as usize)
            }
            // QUIC's stream credit (RFC 9000 §4.6) bounds it: `can_send` says when it runs out.
            #[cfg(feature = "http3")]
            Proto::H3(_) => usize::MAX,
        }
    }

    /// Requests sent whose response has not ended.
    pub fn in_flight(&self) -> usize {
        match &self.proto {
            Proto::H1(h) => h.conn.in_flight(),
            Proto::H2(h) => h.in_flight(),
            #[cfg(feature = "http3")]
            Proto::H3(h) => h.in_flight(),
        }
    }

    /// When the bytes of the last event arrived: the time the read that brought them returned
    /// (before they were decoded). Events decoded from one read share it, so a caller timing
    /// responses needs no clock read of its own per event; before the first read, the time the
    /// connection was made.
    ///
    /// # Examples
    /// ```no_run
    /// # async fn run(c: &mut peregrine::client::conn::Connection) -> Result<(), peregrine::client::Error> {
    /// let sent = std::time::Instant::now();
    /// let _event = c.next_event().await?;
    /// let latency = c.received_at().saturating_duration_since(sent);
    /// # let _ = latency; Ok(()) }
    /// ```
    pub fn received_at(&self) -> std::time::Instant {
        self.read_at
    }

    /// When the last request was queued: the time its `send_request*` call returned. A caller
    /// timing responses can count from it instead of reading the clock itself; before the
    /// first request, the time the connection was made.
    ///
    /// # Examples
    /// ```no_run
    /// # async fn run(c: &mut peregrine::client::conn::Connection) -> Result<(), peregrine::client::Error> {
    /// use peregrine::Method;
    /// c.send_request(Method::Get, "/", &[], &[])?;
    /// let sent = c.sent_at();
    /// let _event = c.next_event().await?;
    /// let latency = c.received_at().saturating_duration_since(sent);
    /// # let _ = latency; Ok(()) }
    /// ```
    pub fn sent_at(&self) -> std::time::Instant {
        self.sent_at
    }

    /// The head of the response awaited must come by `at`: a wait for it past then fails the
    /// connection with a timeout ([`Error::is_timeout`], saying `why`), on the connection's own
    /// timer; `None` lifts it, once the head came. A caller bounding the wait for a head this
    /// way needs no timer of its own per request (a timer-wheel insertion and removal, and a
    /// clock read). Sending a request lifts it too.
    pub(crate) fn expect_head_by(&mut self, at: Option<(Instant, &'static str)>) {
        if at.is_some() && self.timer.is_none() {
            self.timer = Some(Timer::new());
        }
        self.head_by = at;
    }

    /// Sends a request with its whole body (`body` may be empty): queues its bytes, which
    /// [`Connection::next_event`] (or [`Connection::flush`]) writes.
    ///
    /// `method` is a [`Method`], a token such as `"PROPFIND"` or an [`http::Method`]
    /// ([`AsMethod`]). `target` is origin-form (`/path?query`, or `*` for OPTIONS). Field names are sent as
    /// given over HTTP/1.1 and lowercased for HTTP/2; `Host`, `Content-Length`,
    /// `Transfer-Encoding` and, for HTTP/2, connection-specific fields are refused: the
    /// connection writes framing and the authority itself. The body is sent with its length
    /// (`Content-Length: 0` only for methods that anticipate content, RFC 9110 §8.6).
    ///
    /// # Errors
    /// [`Error::is_request`] for a method that is not a token ([`Method::Extension`] has no
    /// text), a malformed target or field, or when the connection cannot
    /// take a request now ([`Connection::can_send`]); nothing is queued then.
    pub fn send_request(
        &mut self,
        method: impl AsMethod,
        target: &str,
        fields: &[(&str, &[u8])],
        body: &[u8],
    ) -> Result<RequestId, Error> {
        self.start(method.as_method(), target, fields, body, Some(body.len() as u64))
    }

    /// Sends a request head whose body follows with [`Connection::send_data`]: `length` is its
    /// size when known (`Content-Length`), `None` for a body of unknown size (chunked over
    /// HTTP/1.1, DATA frames until END_STREAM over HTTP/2).
    ///
    /// # Errors
    /// As [`Connection::send_request`].
    pub fn send_request_streaming(
        &mut self,
        method: impl AsMethod,
        target: &str,
        fields: &[(&str, &[u8])],
        length: Option<u64>,
    ) -> Result<RequestId, Error> {
        self.start(method.as_method(), target, fields, &[], length)
    }

    fn start(
        &mut self,
        (method, token): (Method, &str),
        target: &str,
        fields: &[(&str, &[u8])],
        body: &[u8],
        length: Option<u64>,
    ) -> Result<RequestId, Error> {
        if let Some(e) = &self.failed {
            return Err(e.shallow_clone());
        }
        if token.is_empty() {
            return Err(Error::new(
                Kind::Request,
                "Method::Extension has no text: pass the method's token (a &str or http::Method)",
            ));
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        }
        let id = match &mut self.proto {
            Proto::H1(h) => {
                h.send_request(method, token, target, fields, body, length, &mut self.wbuf)
            }
            Proto::H2(h) => h.send_request(token.as_bytes(), target, fields, body, length),
            #[cfg(feature = "http3")]
            Proto::H3(h) => h.send_request(token.as_bytes(), target, fields, body, length),
        }?;
        // The one clock read per request: the caller's latency and the read timeout count
        // from it (a new wait starts with each request).
        self.sent_at = std::time::Instant::now();
        self.armed = false;
        self.head_by = None;
        Ok(id)
    }

    /// Sends request body bytes for a request started with
    /// [`Connection::send_request_streaming`]; `end` marks the last. Returns how many bytes
    /// were taken: all of them over HTTP/1.1 (call [`Connection::flush`] to bound the
    /// buffer), as many as the flow-control windows allow over HTTP/2 (wait for
    /// [`Event::Writable`] before sending the rest).
    ///
    /// # Errors
    /// [`Error::is_request`] for an id with no body being sent; [`Error::is_body`] when the
    /// bytes overrun the announced length or `end` comes short of it.
    pub fn send_data(&mut self, id: RequestId, data: &[u8], end: bool) -> Result<usize, Error> {
        if let Some(e) = &self.failed {
            return Err(e.shallow_clone());
        }
        match &mut self.proto {
            Proto::H1(h) => match h.send_data(id, data, end, &mut self.wbuf) {
                // A body cut short: the server waits for bytes that will not come.
                Err(e) if h.conn.is_closed() => Err(self.fail(e)),
                r => r,
            },
            Proto::H2(h) => h.send_data(id, data, end),
            #[cfg(feature = "http3")]
            Proto::H3(h) => h.send_data(id, data, end),
        }
    }

    /// Ends the body of a request started with [`Connection::send_request_streaming`] with
    /// trailer fields (RFC 9110 §6.5): over HTTP/1.1 the chunked coding's trailer section (a
    /// body sent with a length has none: the fields are left out), over HTTP/2 a HEADERS frame
    /// with END_STREAM. Fields a trailer may not carry (framing, routing, authentication:
    /// RFC 9110 §6.5.1) are left out over HTTP/1.1.
    ///
    /// # Errors
    /// As [`Connection::send_data`] with `end`.
    pub fn send_trailers(&mut self, id: RequestId, fields: &[(&str, &[u8])]) -> Result<(), Error> {
        if let Some(e) = &self.failed {
            return Err(e.shallow_clone());
        }
        match &mut self.proto {
            Proto::H1(h) => match h.send_trailers(id, fields, &mut self.wbuf) {
                Err(e) if h.conn.is_closed() => Err(self.fail(e)),
                r => r,
            },
            Proto::H2(h) => h.send_trailers(id, fields),
            #[cfg(feature = "http3")]
            Proto::H3(h) => h.send_trailers(id, fields),
        }
    }

    /// Gives up on a request: HTTP/2 resets its stream (CANCEL); HTTP/1.1 cannot skip a
    /// response, so the connection is closed for further requests.
    pub fn cancel(&mut self, id: RequestId) {
        match &mut self.proto {
            Proto::H1(_) => {
                self.failed = Some(Error::new(Kind::Closed, "a request was cancelled"));
            }
            Proto::H2(h) => h.cancel(id),
            #[cfg(feature = "http3")]
            Proto::H3(h) => h.cancel(id),
        }
    }

    /// Writes everything queued.
    ///
    /// # Errors
    /// [`Error::is_closed`] when the connection fails.
    pub async fn flush(&mut self) -> Result<(), Error> {
        poll_fn(|cx| self.poll_flush(cx)).await
    }

    /// Polls [`Connection::flush`].
    ///
    /// # Errors
    /// As [`Connection::flush`].
    pub fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        match self.poll_write(cx) {
            Poll::Ready(r) => Poll::Ready(r.map_err(|e| self.fail(e))),
            Poll::Pending => match self.poll_timer(cx, false) {
                Poll::Ready(e) => Poll::Ready(Err(self.fail(e))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    /// Writes what is queued, reads, and returns the next event. With nothing in flight it
    /// waits for the server to close or misbehave.
    ///
    /// # Errors
    /// A connection-wide failure: [`Error::is_closed`], [`Error::is_protocol`],
    /// [`Error::is_body`], [`Error::is_timeout`] (the read timeout). Every request in flight
    /// is lost with it, and every later call fails the same way. A failure of one HTTP/2
    /// request comes as [`Event::Failed`].
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub async fn next_event(&mut self) -> Result<Event<'_>, Error> {
        let ready = poll_fn(|cx| self.poll_ready(cx)).await?;
        Ok(self.event(ready))
    }

    /// Polls [`Connection::next_event`].
    ///
    /// # Errors
    /// As [`Connection::next_event`].
    pub fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Result<Event<'_>, Error>> {
        match self.poll_ready(cx) {
            Poll::Ready(Ok(r)) => Poll::Ready(Ok(self.event(r))),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    fn event(&self, ready: Ready) -> Event<'_> {
        event(&self.proto, &self.rbuf, ready)
    }

    fn fail(&mut self, e: Error) -> Error {
        self.failed = Some(e.shallow_clone());
        e
    }

    /// Applies what the last event left to do: its input is consumed, its DATA released.
    fn settle(&mut self) {
        settle(&mut self.proto, &mut self.rbuf, &mut self.consume);
    }

    pub(crate) fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<Ready, Error>> {
        if let Some(e) = &self.failed {
            return Poll::Ready(Err(e.shallow_clone()));
        }
        self.settle();
        #[cfg(feature = "http3")]
        if let Proto::H3(h) = &mut self.proto {
            return match h.poll(cx) {
                Poll::Ready(Ok(ready)) => {
                    // One clock read per wake-up: the events it brings share the time.
                    if h.take_waited() {
                        self.read_at = std::time::Instant::now();
                        self.armed = false;
                    }
                    Poll::Ready(Ok(ready))
                }
                Poll::Ready(Err(e)) => Poll::Ready(Err(self.fail(e))),
                Poll::Pending => {
                    let e = ready!(self.poll_timer(cx, true));
                    Poll::Ready(Err(self.fail(e)))
                }
            };
        }
        loop {
            let (proto, rbuf) = (&mut self.proto, &mut self.rbuf);
            match decode(proto, rbuf, &mut self.consume, self.eof, self.read_at) {
                Ok(Some(ready)) => return Poll::Ready(Ok(ready)),
                Ok(None) => {}
                Err(e) => return Poll::Ready(Err(self.fail(e))),
            }
            // Write before waiting for input; a full socket does not stop the read side.
            if let Poll::Ready(Err(e)) = self.poll_write(cx) {
                return Poll::Ready(Err(self.fail(e)));
            }
            // Readiness first: after a request went out the response is rarely there yet, and
            // asking the reactor costs no system call where a read would return EAGAIN.
            let Some(io) = self.io.as_mut() else {
                return Poll::Ready(Err(Error::new(
                    Kind::Closed,
                    "the connection has no transport",
                )));
            };
            match io.poll_read_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => return Poll::Ready(Err(self.fail(io_error(e)))),
                Poll::Pending => {
                    let e = ready!(self.poll_timer(cx, true));
                    return Poll::Ready(Err(self.fail(e)));
                }
            }
            self.rbuf.reserve(MIN_READ);
            let read = if self.single_thread {
                io.try_read_buf(&mut self.rbuf)
            } else {
                io.try_read_buf_keep_ready(&mut self.rbuf)
            };
            match read {
                Ok(0) => self.eof = true,
                Ok(_) => {
                    self.read_at = std::time::Instant::now();
                    self.armed = false;
                }
                // Readiness was stale; the read cleared it, and the next round registers.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(self.fail(io_error(e)))),
            }
        }
    }

    /// Pending until a deadline passes, then its error: with `read`, the read timeout of the
    /// wait for a response (armed at the first wait after a read or a request); and while a
    /// write makes no progress, the same timeout counted from when it stalled; and the time a
    /// response head is expected by (`expect_head_by`), on the same timer.
    ///
    /// With requests in flight a wait counts from the later of the last bytes received and the
    /// last request sent (the wait starts there unless the caller polls late, and then the
    /// server has had that time too), which spares a clock read per response; HTTP/2, with
    /// none in flight, counts from now. Whether a response is awaited, and so whether the wait
    /// has a deadline, is the HTTP/1.1 `Conn`'s rule. The timer moves lazily (see [`Timer`]).
    #[inline]
    fn poll_timer(&mut self, cx: &mut Context<'_>, read: bool) -> Poll<Error> {
        // `timer` exists when `read_timeout` is set (see `new`) or a head is expected by a
        // time (`expect_head_by`).
        let Some(timer) = self.timer.as_mut() else {
            return Poll::Pending;
        };
        let timeout = self.read_timeout;
        if read && !self.armed {
            self.armed = true;
            self.deadline = match &mut self.proto {
                _ if self.untimed || timeout.is_none() => None,
                Proto::H1(h) => {
                    h.conn.poll_timeout(self.sent_at.max(self.read_at)).map(Instant::from_std)
                }
                Proto::H2(h) => {
                    let from = if h.in_flight() > 0 {
                        self.sent_at.max(self.read_at)
                    } else {
                        std::time::Instant::now()
                    };
                    timeout.map(|d| Instant::from_std(from) + d)
                }
                // QUIC's idle timeout ends a silent connection; the read timeout bounds the
                // wait for a response as over HTTP/2.
                #[cfg(feature = "http3")]
                Proto::H3(h) if h.in_flight() > 0 => {
                    timeout.map(|d| Instant::from_std(self.sent_at.max(self.read_at)) + d)
                }
                #[cfg(feature = "http3")]
                Proto::H3(_) => None,
            };
        }
        let (read_at, head_at) = match read {
            true => (self.deadline, self.head_by.map(|(at, _)| at)),
            false => (None, None),
        };
        let stall = timeout.and_then(|d| self.stall.deadline(d)).map(Instant::from_std);
        let Some(at) = [read_at, head_at, stall].into_iter().flatten().min() else {
            return Poll::Pending;
        };
        ready!(timer.poll_until(cx, at));
        let passed = if stall.is_some_and(|w| w <= at) {
            Passed::Stall
        } else if head_at.is_some_and(|h| h <= at) {
            Passed::Head
        } else {
            Passed::Read
        };
        Poll::Ready(self.timed_out(at, passed))
    }

    /// The error of the deadline `at` that passed: the write's stall, the response head's
    /// (`expect_head_by`), or the wait for the response, which the HTTP/1.1 `Conn` is told of.
    #[cold]
    fn timed_out(&mut self, at: Instant, passed: Passed) -> Error {
        match passed {
            Passed::Stall => {
                return Error::new(
                    Kind::Timeout(Deadline::Read),
                    "the server took no request bytes within the read timeout",
                );
            }
            Passed::Head => {
                let why = self.head_by.map_or("no response head in time", |(_, why)| why);
                return Error::new(Kind::Timeout(Deadline::Request), why);
            }
            Passed::Read => {}
        }
        if let Proto::H1(h) = &mut self.proto {
            // The deadline is the `Conn`'s own, so it agrees that it passed.
            let _ = h.conn.handle_timeout(at.into_std());
        }
        Error::new(Kind::Timeout(Deadline::Read), "no response bytes within the read timeout")
    }

    /// Writes the queued bytes (HTTP/2 frames pulled from the state machine first), and what
    /// the transport holds; `Pending` while the socket takes no more (`stall` says since when).
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let Some(io) = self.io.as_mut() else {
            // HTTP/3 writes each stream as it polls the connection.
            return Poll::Ready(Ok(()));
        };
        if let Proto::H2(h) = &mut self.proto {
            if self.wpos == self.wbuf.len() {
                self.wbuf.clear();
                self.wpos = 0;
            }
            h.conn.poll_transmit(&mut self.wbuf);
        }
        match io.poll_write_all(cx, &self.wbuf, &mut self.wpos, &mut self.stall) {
            Poll::Ready(Ok(())) => {
                self.wbuf.clear();
                self.wpos = 0;
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => {
                Poll::Ready(Err(io_error(e).unprocessed_if(self.in_flight() == 0)))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Whether an idle connection is still open: no end of input and no unexpected bytes
    /// (checked without waiting). A pooled connection the server closed is never reused.
    pub(crate) fn check_idle(&mut self) -> bool {
        if self.failed.is_some() || self.eof || !self.is_reusable() {
            return false;
        }
        let mut cx = Context::from_waker(std::task::Waker::noop());
        if let Proto::H2(_) = self.proto {
            // Control frames (PING, SETTINGS, GOAWAY) may be waiting: process them.
            return match self.poll_ready(&mut cx) {
                Poll::Pending => self.is_reusable(),
                Poll::Ready(_) => false,
            };
        }
        let Some(io) = self.io.as_mut() else { return self.is_reusable() };
        match io.poll_read_ready(&mut cx) {
            Poll::Pending => true,
            Poll::Ready(Err(_)) => false,
            Poll::Ready(Ok(())) => {
                self.rbuf.reserve(MIN_READ);
                match io.try_read_buf_keep_ready(&mut self.rbuf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => true,
                    _ => {
                        self.eof = true;
                        false
                    }
                }
            }
        }
    }
}

/// The event `ready` describes, borrowing the protocol state and the read buffer.
fn event<'a>(proto: &'a Proto, rbuf: &'a [u8], ready: Ready) -> Event<'a> {
    match ready {
        Ready::Head { id, status, version } => {
            let fields = match proto {
                Proto::H1(h) => Source::Spans { buf: rbuf, spans: &h.spans },
                Proto::H2(h) => Source::Section(h.conn.last_section()),
                #[cfg(feature = "http3")]
                Proto::H3(h) => Source::Section(h.conn.section()),
            };
            Event::Head { id, head: ResponseHead { status, version, fields } }
        }
        #[cfg(feature = "http3")]
        Ready::Data { id, .. } if matches!(proto, Proto::H3(_)) => {
            let Proto::H3(h) = proto else { unreachable!("matched") };
            Event::Data { id, data: h.lent() }
        }
        Ready::Data { id, range } => Event::Data { id, data: rbuf.get(range).unwrap_or_default() },
        Ready::End { id, trailers } => Event::End { id, trailers: trailers.map(|t| *t) },
        Ready::Failed { id, error } => Event::Failed { id, error },
        Ready::Writable { id } => Event::Writable { id },
    }
}

/// Applies what the last event left to do: its input is consumed, its DATA released.
fn settle(proto: &mut Proto, rbuf: &mut BytesMut, consume: &mut usize) {
    if *consume > 0 {
        rbuf.advance((*consume).min(rbuf.len()));
        *consume = 0;
    }
    if let Proto::H2(h) = proto {
        h.release();
    }
}

/// Decodes the buffered input: the next event (its input consumed at the next [`settle`]),
/// or `None` when more input is needed; at the end of input (`eof`), the protocol's verdict.
/// The one copy of this loop, for the connection and the fuzz target's `ResponseReader`.
///
/// `now` is when the buffered bytes arrived (HTTP/2's flood budgets count by it).
fn decode(
    proto: &mut Proto,
    rbuf: &mut BytesMut,
    consume: &mut usize,
    eof: bool,
    now: std::time::Instant,
) -> Result<Option<Ready>, Error> {
    loop {
        let step = match proto {
            Proto::H1(h) => h.decode(rbuf),
            Proto::H2(h) => h.decode(rbuf, now),
            // HTTP/3 reads its streams itself (`H3::poll`), never this buffer.
            #[cfg(feature = "http3")]
            Proto::H3(_) => Ok(Step::NeedInput),
        }?;
        match step {
            Step::Ready(ready, used) => {
                *consume = used;
                return Ok(Some(ready));
            }
            Step::Consumed(used) => rbuf.advance(used.min(rbuf.len())),
            Step::NeedInput if eof => {
                return match proto {
                    Proto::H1(h) => h.eof().map(Some),
                    Proto::H2(h) => Err(h.eof()),
                    #[cfg(feature = "http3")]
                    Proto::H3(_) => Ok(None),
                };
            }
            Step::NeedInput => return Ok(None),
        }
    }
}

impl Error {
    fn unprocessed_if(self, cond: bool) -> Error {
        if cond { self.unprocessed() } else { self }
    }
}

/// The connection's request prelude: `Host` from the origin, default port left out.
fn prelude(origin: &Origin) -> Result<RequestPrelude, Error> {
    RequestPrelude::new(origin.scheme(), origin.host(), origin.port())
        .map_err(|_| Error::new(Kind::Request, "the URL's host is not a valid host"))
}
