//! Setting up an accepted connection: the TLS handshake on a TLS listener (bounded by
//! `Config::tls_handshake_timeout`, so a client that stalls mid-handshake is cut like a
//! slowloris), then the protocol the connection speaks, then its loop.

use std::future::{Future, poll_fn};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use tokio::net::TcpStream;
use tokio::time::Instant;

use super::h1;
use super::slots::Service;
use super::worker::Admitted;
use crate::handler::Handler;
use crate::net::{TlsStream, Transport};

/// Serves one accepted connection until it closes.
pub(crate) fn serve<H: Handler>(
    stream: TcpStream,
    peer: SocketAddr,
    tls: Option<Arc<rustls::ServerConfig>>,
    service: Rc<Service<H>>,
    admitted: Admitted,
) -> impl Future<Output = ()> {
    let accepted = Instant::now();
    async move {
        let io = match tls {
            None => Transport::Plain(stream),
            Some(config) => {
                let timeout = admitted.worker.config.tls_handshake_timeout;
                // Boxed: only TLS connections carry the handshake's state, and only while it
                // runs.
                match Box::pin(handshake(stream, config, accepted + timeout)).await {
                    Some(io) => io,
                    None => return,
                }
            }
        };
        // ALPN offers only `http/1.1` for now; a TLS client that chose none speaks it too.
        h1::serve(io, peer, service, admitted, accepted).await;
    }
}

/// Runs the TLS handshake until `deadline`. `None`: it failed or timed out, and the connection
/// is dropped (rustls has sent its alert, if it had one: plain HTTP on a TLS port gets one at
/// once, and the connection closes).
async fn handshake(
    stream: TcpStream,
    config: Arc<rustls::ServerConfig>,
    deadline: Instant,
) -> Option<Transport> {
    let session = rustls::ServerConnection::new(config).ok()?;
    let mut tls = Box::new(TlsStream::new(stream, session));
    let done = tokio::time::timeout_at(deadline, poll_fn(|cx| tls.poll_handshake(cx))).await;
    match done {
        Ok(Ok(())) => Some(Transport::Tls(tls)),
        Ok(Err(e)) => {
            tracing::debug!("peregrine: TLS handshake failed: {e}");
            None
        }
        Err(_) => {
            tracing::debug!("peregrine: TLS handshake timed out");
            None
        }
    }
}
