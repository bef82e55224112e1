//! The server's side of a new connection before a [`Transport`](super::Transport) wraps it: a
//! worker's listener registered with its runtime and accepting, the accepted socket's set-up,
//! the best-effort answer written to a connection refused unread, and reads of the raw socket
//! (a PROXY protocol header comes before anything else, TLS included). Whom to admit, what to
//! answer a refused one and which accept errors pause the loop are the server's
//! (`server::runtime`).

use std::io;
use std::net::SocketAddr;

use bytes::BytesMut;
use tokio::net::TcpStream;

/// A worker's listening socket, registered with the worker's runtime.
#[derive(Debug)]
pub(crate) struct Listener(tokio::net::TcpListener);

impl Listener {
    /// Registers `listener` (non-blocking already: see [`listen`](super::listen)) with the
    /// current runtime's reactor.
    ///
    /// # Errors
    /// The reactor's, when the socket cannot be registered.
    pub(crate) fn register(listener: std::net::TcpListener) -> io::Result<Listener> {
        tokio::net::TcpListener::from_std(listener).map(Listener)
    }

    /// The next connection and its peer's address.
    ///
    /// # Cancel safety
    /// Cancel safe, as tokio's `accept`: a connection is either returned or left in the
    /// backlog.
    pub(crate) async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        self.0.accept().await
    }
}

/// Sets up an accepted socket to be served: `TCP_NODELAY`, since responses are written whole
/// and Nagle would hold back pipelined ones. Best effort: a socket that refuses the option
/// still works, only slower.
pub(crate) fn set_up(stream: &TcpStream) {
    let _ = stream.set_nodelay(true);
}

/// Writes `answer` without waiting (what the socket's send buffer takes of it) and closes the
/// connection, its input unread: best effort, never blocks.
pub(crate) fn refuse(stream: TcpStream, answer: &[u8]) {
    let _ = stream.try_write(answer);
    drop(stream);
}

/// Reads what `stream` holds into `buf`, after its length, once the socket is readable;
/// returns how many bytes were read, 0 at the end of the stream.
///
/// # Cancel safety
/// Cancel safe: the bytes of a read that completed are in `buf`.
pub(crate) async fn read_some(stream: &TcpStream, buf: &mut BytesMut) -> io::Result<usize> {
    loop {
        stream.readable().await?;
        match stream.try_read_buf(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            read => return read,
        }
    }
}
