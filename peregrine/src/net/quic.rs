//! The server's QUIC endpoint (RFC 9000) for HTTP/3: a UDP socket bound here, quinn's
//! endpoint on it with the same rustls certificates and keys as HTTPS, ALPN `h3` (RFC 9114
//! §3.1), and GSO/GRO where quinn-udp finds them in the kernel. 0-RTT is off: early data can
//! be replayed (RFC 9001 §9.2), and the handlers do not say which requests are safe to replay.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use quinn::crypto::rustls::QuicServerConfig;

/// The ALPN token of HTTP/3 (RFC 9114 §3.1).
pub(crate) const ALPN_H3: &[u8] = b"h3";

/// Limits of the QUIC connections, from the server's `Config`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuicLimits {
    /// Request streams a client may have open at once (QUIC MAX_STREAMS, RFC 9000 §4.6).
    pub(crate) max_streams: u32,
    /// A connection idle this long is closed (RFC 9000 §10.1).
    pub(crate) idle_timeout: Duration,
    /// Octets a client may send on one stream before we read them (flow control).
    pub(crate) stream_window: u32,
    /// Octets a client may send on all its streams together before we read them.
    pub(crate) connection_window: u32,
    /// Response octets a connection may hold unacknowledged or unsent, over all its streams.
    pub(crate) send_window: u32,
}

/// Binds a UDP socket on `addr` (the port of the HTTPS listener).
///
/// # Errors
/// The bind's.
pub(crate) fn bind(addr: SocketAddr) -> io::Result<UdpSocket> {
    UdpSocket::bind(addr)
}

/// quinn's server configuration from our rustls configuration: ALPN `h3` only, no early data.
///
/// # Errors
/// `InvalidInput` when rustls' configuration cannot run QUIC (no TLS 1.3 suite).
pub(crate) fn server_config(
    tls: &rustls::ServerConfig,
    limits: QuicLimits,
) -> io::Result<quinn::ServerConfig> {
    let mut tls = tls.clone();
    tls.alpn_protocols = vec![ALPN_H3.to_vec()];
    // RFC 9001 §4.6.1: a server accepts 0-RTT only with max_early_data_size 0xffffffff; 0
    // refuses it.
    tls.max_early_data_size = 0;
    let crypto = QuicServerConfig::try_from(Arc::new(tls))
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_bidi_streams(limits.max_streams.into());
    // RFC 9114 §6.2: the peer opens its control and two QPACK streams, and may open
    // unknown ones (refused within a budget); a few more than three.
    transport.max_concurrent_uni_streams(8u32.into());
    transport.stream_receive_window(limits.stream_window.into());
    // RFC 9000 §4.1: the connection's MAX_DATA bounds what all the streams together may hold
    // unread (quinn's default is unbounded, so a client could fill every stream's window:
    // 100 x 256 KiB per connection). The same budget as HTTP/2's connection window.
    transport.receive_window(limits.connection_window.into());
    // RFC 9000 §4.1 leaves the sender's memory to the sender: a client may grant any credit
    // and be slow to acknowledge, and quinn keeps what it accepted until it is acknowledged
    // (its default allows 10 MB per connection).
    transport.send_window(limits.send_window.into());
    // RFC 9221 §3: QUIC datagrams are offered only by an endpoint that will read them; we read
    // none (no HTTP datagrams, RFC 9297). quinn's default offers them and keeps 1.25 MB of
    // unread ones per connection; without the offer a peer's DATAGRAM frame is a
    // PROTOCOL_VIOLATION.
    transport.datagram_receive_buffer_size(None);
    let idle = quinn::IdleTimeout::try_from(limits.idle_timeout)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    transport.max_idle_timeout(Some(idle));
    config.transport_config(Arc::new(transport));
    Ok(config)
}

/// quinn's endpoint serving `config` on `socket`; to be made inside the worker's `LocalSet`,
/// which then drives it and its connections (`WorkerRuntime`).
///
/// # Errors
/// quinn's (the socket's options).
pub(crate) fn endpoint(
    socket: UdpSocket,
    config: quinn::ServerConfig,
) -> io::Result<quinn::Endpoint> {
    let runtime = Arc::new(WorkerRuntime(quinn::TokioRuntime));
    quinn::Endpoint::new(quinn::EndpointConfig::default(), Some(config), socket, runtime)
}

/// quinn on tokio, with its endpoint and connection drivers spawned on the worker's `LocalSet`
/// beside the request streams' tasks, not on the runtime's own queue. A connection driver
/// woken by a stream's write then runs after the streams woken before it (one FIFO queue),
/// so the responses of one burst leave in one `sendmsg`. On the runtime's queue it would run
/// between the `LocalSet`'s turns of at most 61 tasks and send each turn's responses apart:
/// 26% more `sendmsg` and 3x the `recvmmsg` per request at 16 connections x 32 streams
/// (BENCHMARKS.md, HTTP/3).
#[derive(Debug)]
struct WorkerRuntime(quinn::TokioRuntime);

impl quinn::Runtime for WorkerRuntime {
    fn new_timer(&self, at: std::time::Instant) -> std::pin::Pin<Box<dyn quinn::AsyncTimer>> {
        self.0.new_timer(at)
    }

    fn spawn(&self, future: std::pin::Pin<Box<dyn Future<Output = ()> + Send>>) {
        // quinn spawns from the endpoint and from accepting, both on the worker's thread
        // inside its `LocalSet`.
        tokio::task::spawn_local(future);
    }

    fn wrap_udp_socket(&self, socket: UdpSocket) -> io::Result<Arc<dyn quinn::AsyncUdpSocket>> {
        self.0.wrap_udp_socket(socket)
    }

    fn now(&self) -> std::time::Instant {
        self.0.now()
    }
}
