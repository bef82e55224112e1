//! Setting up an accepted connection: the TLS handshake on a TLS listener (bounded by
//! `Config::tls_handshake_timeout`, so a client that stalls mid-handshake is cut like a
//! slowloris), then the protocol the connection speaks, then its loop.

use std::future::poll_fn;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use tokio::net::TcpStream;
use tokio::time::Instant;

use bytes::BytesMut;

use super::slots::Service;
use super::worker::Admitted;
use super::{h1, h2};
use crate::handler::Handler;
use crate::net::{TlsStream, Transport};

/// Starts serving one accepted connection, as a task of the worker, until it closes.
///
/// Plain TCP runs the HTTP/1.1 loop's future directly as the task, so an idle plain
/// connection carries nothing more; a TLS connection's task runs the handshake first.
pub(crate) fn start<H: Handler>(
    stream: TcpStream,
    peer: SocketAddr,
    tls: Option<Arc<rustls::ServerConfig>>,
    service: Rc<Service<H>>,
    admitted: Admitted,
) {
    let accepted = Instant::now();
    match tls {
        None => {
            // HTTP/1.1, which hands the connection over to HTTP/2 if the client asks.
            let io = Transport::Plain(stream);
            tokio::task::spawn_local(h1::serve(io, peer, service, admitted, accepted));
        }
        Some(config) => {
            tokio::task::spawn_local(serve_tls(stream, peer, config, service, admitted, accepted));
        }
    }
}

/// A TLS connection: the handshake, bounded by `Config::tls_handshake_timeout` from the
/// accept, then the protocol ALPN chose (RFC 7301; RFC 9113 §3.2): `h2`, or HTTP/1.1 (also
/// for a client that chose none).
async fn serve_tls<H: Handler>(
    stream: TcpStream,
    peer: SocketAddr,
    config: Arc<rustls::ServerConfig>,
    service: Rc<Service<H>>,
    admitted: Admitted,
    accepted: Instant,
) {
    let deadline = accepted + admitted.worker.config.tls_handshake_timeout;
    // Boxed: the handshake's state is not kept beside the connection's for its whole life.
    let Some(io) = Box::pin(handshake(stream, config, deadline)).await else {
        return;
    };
    if io.alpn() == Some(b"h2") {
        h2::serve(io, peer, service, admitted, BytesMut::new(), None).await;
        return;
    }
    // A TLS connection never switches to HTTP/2 by preface or Upgrade (RFC 9113 §3.2: ALPN
    // decides): the HTTP/1.1 loop only does so on plain TCP.
    h1::serve(io, peer, service, admitted, Instant::now()).await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Request;
    use crate::server::worker::tests_support::worker;

    /// An idle connection's memory is mostly its task, which is as large as this future's
    /// largest state; keep it in check.
    #[test]
    fn connection_future_stays_small() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let stream = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
            let peer = stream.local_addr().unwrap();
            let service = Rc::new(Service::new(|_req: Request| async { "Hello, World!" }));
            let io = Transport::Plain(stream);
            let fut = h1::serve(io, peer, service, Admitted::new(worker()), Instant::now());
            let size = std::mem::size_of_val(&fut);
            eprintln!("connection future: {size} bytes");
            // 3,160 bytes first, 1,752 after the poll-fn rewrites, 920 since the handler's
            // future runs in a pooled slot and `dispatch` takes no head spans, 712 since no
            // parsed head lives across an await and `flush` is a poll function, 728 with the
            // timer's registered deadline (`timer_at`); 776 once the socket and read buffer
            // moved in from a separately allocated per-connection struct (about 250 bytes of
            // heap) when the transport became the connection's own; 800 with the hand-over to
            // HTTP/2 (its connection boxed).
            assert!(size <= 800, "connection future grew to {size} bytes");
        });
    }
}
