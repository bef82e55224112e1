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
use crate::net::{TlsStream, Transport};

/// A TCP connection to `origin`, with TCP_NODELAY (requests go out as soon as they are
/// written; RFC 9112 pipelining and HTTP/2 need no Nagle delay).
pub(crate) async fn tcp(origin: &Origin, timeout: Duration) -> Result<TcpStream, Error> {
    let attempt = async {
        let addrs = tokio::net::lookup_host((origin.host(), origin.port()))
            .await
            .map_err(|e| Error::with_source(Kind::Connect, "the host did not resolve", e))?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect(addr).await {
                Ok(tcp) => {
                    let _ = tcp.set_nodelay(true);
                    return Ok(tcp);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => Error::with_source(Kind::Connect, "the TCP connection failed", e),
            None => Error::new(Kind::Connect, "the host resolved to no address"),
        })
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(r) => r,
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
