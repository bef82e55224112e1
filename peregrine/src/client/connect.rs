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
