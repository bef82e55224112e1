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

    /// Closes the listener, first taking every connection the kernel has completed in its
    /// backlog: closing a listening socket resets those, and their clients, whose connect
    /// succeeded and who may have sent a request, would see the reset instead of an answer.
    /// The accept calls are made on the socket itself rather than through the reactor, whose
    /// readiness may not have seen the last arrivals yet. A connection that completes after
    /// the last call, in the moment before the close, is still reset (the kernel's doing).
    pub(crate) fn close(self) -> Vec<(TcpStream, SocketAddr)> {
        let mut taken = Vec::new();
        let Ok(listener) = self.0.into_std() else { return taken };
        loop {
            match listener.accept() {
                Ok((stream, peer)) => {
                    // Accepted sockets do not inherit the listener's non-blocking mode.
                    let registered =
                        stream.set_nonblocking(true).and_then(|()| TcpStream::from_std(stream));
                    if let Ok(stream) = registered {
                        taken.push((stream, peer));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // The peer went away between its SYN and this accept, or a signal.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionAborted | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => break,
            }
        }
        taken
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[tokio::test]
    async fn close_takes_the_connections_waiting_in_the_backlog() {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let addr = std_listener.local_addr().unwrap();
        let listener = Listener::register(std_listener).unwrap();
        // Connected and written to, never accepted: they wait in the kernel's backlog.
        let mut clients: Vec<std::net::TcpStream> = (0..3)
            .map(|i| {
                let mut c = std::net::TcpStream::connect(addr).unwrap();
                c.write_all(&[b'a' + i]).unwrap();
                c
            })
            .collect();
        let taken = listener.close();
        assert_eq!(taken.len(), 3);
        // Each is registered and readable: its client's byte is there, in order.
        let mut seen = Vec::new();
        for (stream, _) in &taken {
            let mut buf = BytesMut::new();
            assert_eq!(read_some(stream, &mut buf).await.unwrap(), 1);
            seen.push(buf[0]);
        }
        assert_eq!(seen, b"abc");
        // The listener is closed: a new connect is refused, and the taken ones still work.
        assert!(std::net::TcpStream::connect(addr).is_err());
        taken[0].0.try_write(b"z").unwrap();
        let mut byte = [0u8; 1];
        clients[0].read_exact(&mut byte).unwrap();
        assert_eq!(&byte, b"z");
    }
}
