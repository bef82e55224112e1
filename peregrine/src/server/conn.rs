//! Setting up an accepted connection: the PROXY protocol header on a listener that reads it
//! (before anything else, within `Config::header_read_timeout`), the TLS handshake on a TLS
//! listener (bounded by `Config::tls_handshake_timeout`, so a client that stalls mid-handshake
//! is cut like a slowloris), then the protocol the connection speaks, then its loop.

use std::future::poll_fn;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use bytes::BytesMut;
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::connections::{Conn, Connections};
use super::proxy::{ProxyProtocol, ReadError, read_header};
use super::service::Service;
use super::worker::Admitted;
use super::{h1, h2};
use crate::handler::Handler;
use crate::net::{TlsStream, Transport};
use crate::request::Peer;

/// Starts serving one accepted connection among the worker's `connections`, until it closes.
///
/// Plain TCP runs the HTTP/1.1 connection's future inline in its entry, so an idle plain
/// connection carries nothing more; a TLS connection's future runs the handshake first.
pub(crate) fn start<H: Handler>(
    stream: TcpStream,
    peer: SocketAddr,
    tls: Option<Arc<rustls::ServerConfig>>,
    service: &Rc<Service<H>>,
    admitted: Admitted,
    connections: &Connections<H>,
) {
    let accepted = Instant::now();
    let service = service.clone();
    if let Some(proxy) = admitted.worker.proxy.clone() {
        let conn = serve_proxied(stream, peer, proxy, tls, service, admitted, accepted);
        connections.insert(Conn::Boxed(Box::pin(conn)));
        return;
    }
    let peer = Peer::Direct(peer);
    match tls {
        None => {
            // HTTP/1.1, which hands the connection over to HTTP/2 if the client asks.
            let io = Transport::Plain(stream);
            let input = BytesMut::new();
            let conn = h1::serve(io, peer, input, service, admitted, accepted);
            connections.insert(Conn::Plain(conn));
        }
        Some(config) => {
            let early = BytesMut::new();
            let conn = serve_tls(stream, peer, early, config, service, admitted, accepted);
            connections.insert(Conn::Boxed(Box::pin(conn)));
        }
    }
}

/// A connection on a listener with the PROXY protocol on: a peer outside the trusted networks
/// is closed at once; the others must send a valid header within `header_read_timeout` of the
/// accept, else they are closed unserved. The bytes read past the header go on to TLS or to
/// the HTTP/1.1 loop, whose requests see the client the header names.
async fn serve_proxied<H: Handler>(
    stream: TcpStream,
    peer: SocketAddr,
    proxy: Arc<ProxyProtocol>,
    tls: Option<Arc<rustls::ServerConfig>>,
    service: Rc<Service<H>>,
    admitted: Admitted,
    accepted: Instant,
) {
    if !proxy.is_trusted(peer.ip()) {
        tracing::debug!("peregrine: {peer}: PROXY protocol from an untrusted address; closed");
        return;
    }
    let worker = admitted.worker.clone();
    let mut buf = worker.buffers.take();
    let deadline = accepted + worker.config.header_read_timeout;
    let info = match tokio::time::timeout_at(deadline, read_header(&stream, &mut buf, peer)).await {
        Ok(Ok(info)) => info,
        Ok(Err(ReadError::Proxy(e))) => {
            tracing::debug!("peregrine: {peer}: {e}; closed");
            return;
        }
        Ok(Err(ReadError::Io(e))) => {
            tracing::debug!("peregrine: {peer}: {e} before the PROXY protocol header ended");
            return;
        }
        Err(_) => {
            tracing::debug!("peregrine: {peer}: no PROXY protocol header in time; closed");
            return;
        }
    };
    let peer = Peer::Proxied(Arc::new(info));
    match tls {
        None => {
            let io = Transport::Plain(stream);
            h1::serve(io, peer, buf, service, admitted, accepted).await;
        }
        Some(config) => serve_tls(stream, peer, buf, config, service, admitted, accepted).await,
    }
}

/// A TLS connection: the handshake, bounded by `Config::tls_handshake_timeout` from the
/// accept, then the protocol ALPN chose (RFC 7301; RFC 9113 §3.2): `h2`, or HTTP/1.1 (also
/// for a client that chose none). `early`: bytes of the handshake already read (after a PROXY
/// header); the buffer goes back to the worker's pool.
async fn serve_tls<H: Handler>(
    stream: TcpStream,
    peer: Peer,
    mut early: BytesMut,
    config: Arc<rustls::ServerConfig>,
    service: Rc<Service<H>>,
    admitted: Admitted,
    accepted: Instant,
) {
    let deadline = accepted + admitted.worker.config.tls_handshake_timeout;
    // Boxed: the handshake's state is not kept beside the connection's for its whole life.
    let io = Box::pin(handshake(stream, &early, config, deadline)).await;
    if early.capacity() != 0 {
        early.clear();
        admitted.worker.buffers.put(early);
    }
    let Some(io) = io else {
        return;
    };
    if io.alpn() == Some(b"h2") {
        h2::serve(io, peer, service, admitted, BytesMut::new(), None).await;
        return;
    }
    // A TLS connection never switches to HTTP/2 by preface or Upgrade (RFC 9113 §3.2: ALPN
    // decides): the HTTP/1.1 loop only does so on plain TCP.
    let (buf, now) = (BytesMut::new(), Instant::now());
    h1::serve(io, peer, buf, service, admitted, now).await;
}

/// Runs the TLS handshake until `deadline`. `None`: it failed or timed out, and the connection
/// is dropped (rustls has sent its alert, if it had one: plain HTTP on a TLS port gets one at
/// once, and the connection closes).
async fn handshake(
    stream: TcpStream,
    early: &[u8],
    config: Arc<rustls::ServerConfig>,
    deadline: Instant,
) -> Option<Transport> {
    let session = rustls::ServerConnection::new(config).ok()?;
    let mut tls = Box::new(TlsStream::new(stream, session));
    if let Err(e) = tls.feed(early) {
        tracing::debug!("peregrine: TLS handshake failed: {e}");
        return None;
    }
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
