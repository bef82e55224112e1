//! Opening a QUIC connection for a client (RFC 9000 §7; TLS inside QUIC, RFC 9001): the host
//! resolved, each of its addresses tried in turn from a UDP socket of its own (one endpoint
//! per connection, as a TCP connection has its own socket), quinn running the handshake with
//! the client's rustls configuration.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use quinn::crypto::rustls::QuicClientConfig;

/// Why no QUIC connection could be opened.
#[derive(Debug)]
pub(crate) enum QuicConnectError {
    /// The host did not resolve.
    Resolve(io::Error),
    /// The host resolved to no address.
    NoAddress,
    /// No UDP socket could be opened.
    Bind(io::Error),
    /// The handshake failed (TLS: an untrusted certificate, no common ALPN) on the last
    /// address tried.
    Handshake(quinn::ConnectionError),
    /// quinn refused to start the connection (a bad server name, an unusable address).
    Start(quinn::ConnectError),
}

/// The quinn client configuration for `tls` (TLS 1.3, ALPN `h3`: RFC 9001 §4.2 requires TLS
/// 1.3 and RFC 9114 §3.1 the token), with the idle timeout the client's read timeout implies.
///
/// # Errors
/// When `tls` cannot carry QUIC (no TLS 1.3, or no TLS_AES_128_GCM_SHA256 for the Initial
/// packets, RFC 9001 §5.2).
pub(crate) fn client_config(
    tls: Arc<rustls::ClientConfig>,
    idle_timeout: Option<Duration>,
) -> Result<quinn::ClientConfig, String> {
    let crypto = QuicClientConfig::try_from(tls).map_err(|e| e.to_string())?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    // RFC 9000 §10.1: the connection closes silently after the idle timeout; keep-alives keep
    // a pooled connection open below it (the pool's own idle timeout closes it).
    let idle = idle_timeout.unwrap_or(Duration::from_secs(30)).max(Duration::from_secs(1));
    transport.max_idle_timeout(quinn::IdleTimeout::try_from(idle).ok());
    transport.keep_alive_interval(Some(idle / 3));
    // RFC 9221 §3: no QUIC datagrams offered, as the client reads none (see the server's
    // `net::quic::server_config`).
    transport.datagram_receive_buffer_size(None);
    config.transport_config(Arc::new(transport));
    Ok(config)
}

/// A QUIC connection to `host:port` named `server_name` (SNI and the certificate check):
/// each resolved address tried in turn until a handshake completes. Returns the endpoint with
/// the connection (the endpoint's socket lives as long as both).
///
/// # Errors
/// See [`QuicConnectError`]; the last address's error when several fail.
pub(crate) async fn connect(
    host: &str,
    port: u16,
    server_name: &str,
    config: &quinn::ClientConfig,
) -> Result<(quinn::Endpoint, quinn::Connection), QuicConnectError> {
    let addrs = tokio::net::lookup_host((host, port)).await.map_err(QuicConnectError::Resolve)?;
    let mut last = QuicConnectError::NoAddress;
    for addr in addrs {
        let local: SocketAddr = match addr {
            SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let endpoint = quinn::Endpoint::client(local).map_err(QuicConnectError::Bind)?;
        let connecting = match endpoint.connect_with(config.clone(), addr, server_name) {
            Ok(c) => c,
            Err(e) => {
                last = QuicConnectError::Start(e);
                continue;
            }
        };
        match connecting.await {
            Ok(conn) => return Ok((endpoint, conn)),
            Err(e) => last = QuicConnectError::Handshake(e),
        }
    }
    Err(last)
}
