//! Opening a connection: the host resolved and each address tried in turn within the connect
//! timeout, then for `https` the TLS handshake within its own timeout (SNI and certificate
//! verification by rustls, the protocol chosen by ALPN).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;

use super::error::{Deadline, Error, Kind};
use super::origin::Origin;
use super::tls::server_name;
use crate::net::connect::ConnectError;
use crate::net::{self, TlsStream, Transport};

/// A TCP connection to `origin` (the host resolved, each address tried in turn) within
/// `timeout`.
pub(crate) async fn tcp(origin: &Origin, timeout: Duration) -> Result<TcpStream, Error> {
    let attempt = net::connect::tcp(origin.host(), origin.port());
    match tokio::time::timeout(timeout, attempt).await {
        Ok(Ok(tcp)) => Ok(tcp),
        Ok(Err(ConnectError::Resolve(e))) => {
            Err(Error::with_source(Kind::Connect, "the host did not resolve", e))
        }
        Ok(Err(ConnectError::NoAddress)) => {
            Err(Error::new(Kind::Connect, "the host resolved to no address"))
        }
        Ok(Err(ConnectError::Connect(e))) => {
            Err(Error::with_source(Kind::Connect, "the TCP connection failed", e))
        }
        Err(_) => Err(Error::new(
            Kind::Timeout(Deadline::Connect),
            "no TCP connection within the connect timeout",
        )),
    }
}

/// The TLS handshake over `tcp`; returns the transport and the protocol ALPN chose.
pub(crate) async fn tls(
    tcp: TcpStream,
    origin: &Origin,
    config: Arc<rustls::ClientConfig>,
    timeout: Duration,
) -> Result<(Transport, Option<&'static [u8]>), Error> {
    let name = server_name(origin.host())
        .ok_or_else(|| Error::new(Kind::Request, "the host is not a valid TLS server name"))?;
    let session = rustls::ClientConnection::new(config, name)
        .map_err(|e| Error::with_source(Kind::Tls, "the TLS session could not start", e))?;
    let mut stream = Box::new(TlsStream::new(tcp, session));
    let handshake = std::future::poll_fn(|cx| stream.poll_handshake(cx));
    match tokio::time::timeout(timeout, handshake).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(handshake_error(e)),
        Err(_) => {
            return Err(Error::new(
                Kind::Timeout(Deadline::Tls),
                "no TLS handshake within the timeout",
            ));
        }
    }
    let alpn = match stream.tls.alpn_protocol() {
        Some(b"h2") => Some(&b"h2"[..]),
        Some(b"http/1.1") => Some(&b"http/1.1"[..]),
        _ => None,
    };
    Ok((Transport::Tls(stream), alpn))
}

fn handshake_error(e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::InvalidData {
        // rustls's error (a certificate it does not trust, a name mismatch, an alert).
        return Error::with_source(Kind::Tls, "the TLS handshake failed", e);
    }
    Error::with_source(Kind::Tls, "the connection failed during the TLS handshake", e)
}

/// A QUIC connection for `origin` to `host:port` (the origin's own, or its alternative
/// service's: the host resolved, each address tried in turn, the TLS handshake inside) within
/// `timeout`. TLS names and verifies the origin's host either way (RFC 7838 §2.1).
#[cfg(feature = "http3")]
pub(crate) async fn quic(
    origin: &Origin,
    (host, port): (&str, u16),
    config: &quinn::ClientConfig,
    timeout: Duration,
) -> Result<(quinn::Endpoint, quinn::Connection), Error> {
    use crate::net::quic_connect::{self, QuicConnectError as E};
    if server_name(origin.host()).is_none() {
        return Err(Error::new(Kind::Request, "the host is not a valid TLS server name"));
    }
    let attempt = quic_connect::connect(host, port, origin.host(), config);
    match tokio::time::timeout(timeout, attempt).await {
        Ok(Ok(pair)) => Ok(pair),
        Ok(Err(E::Resolve(e))) => {
            Err(Error::with_source(Kind::Connect, "the host did not resolve", e))
        }
        Ok(Err(E::NoAddress)) => Err(Error::new(Kind::Connect, "the host resolved to no address")),
        Ok(Err(E::Bind(e))) => {
            Err(Error::with_source(Kind::Connect, "no UDP socket could be opened", e))
        }
        Ok(Err(E::Start(e))) => {
            Err(Error::with_source(Kind::Connect, "the QUIC connection could not start", e))
        }
        Ok(Err(E::Handshake(e))) => Err(handshake_error_quic(e)),
        // Nothing answering on UDP looks like this too: a connect timeout.
        Err(_) => Err(Error::new(
            Kind::Timeout(Deadline::Connect),
            "no QUIC handshake within the connect and TLS timeouts",
        )),
    }
}

/// A failed QUIC handshake: a TLS alert (RFC 9001 §4.8: CRYPTO_ERROR, 0x100 + the alert) is
/// a TLS error; no answer at all is a connect error (nothing listens on that UDP port).
#[cfg(feature = "http3")]
fn handshake_error_quic(e: quinn::ConnectionError) -> Error {
    use quinn::ConnectionError as C;
    match &e {
        C::TransportError(t) if t.code.to_string().contains("crypto") => {
            Error::with_source(Kind::Tls, "the TLS handshake failed", e)
        }
        C::ConnectionClosed(c) if (0x100..0x200).contains(&u64::from(c.error_code)) => {
            Error::with_source(Kind::Tls, "the server refused the TLS handshake", e)
        }
        C::TimedOut => Error::with_source(Kind::Connect, "no QUIC answer from the server", e),
        _ => Error::with_source(Kind::Connect, "the QUIC handshake failed", e),
    }
}
