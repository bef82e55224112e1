//! Opening a TCP connection for a client: the host resolved, each of its addresses tried in
//! turn, and the socket set up as every connection of ours wants it.

use std::io;

use tokio::net::TcpStream;

/// Why no TCP connection could be opened.
#[derive(Debug)]
pub(crate) enum ConnectError {
    /// The host did not resolve.
    Resolve(io::Error),
    /// The host resolved to no address.
    NoAddress,
    /// No address took the connection: the last attempt's error.
    Connect(io::Error),
}

/// A TCP connection to `host:port`: its addresses tried in the resolver's order, the first that
/// accepts kept, set up by [`set_up`].
///
/// # Errors
/// See [`ConnectError`].
pub(crate) async fn tcp(host: &str, port: u16) -> Result<TcpStream, ConnectError> {
    let addrs = tokio::net::lookup_host((host, port)).await.map_err(ConnectError::Resolve)?;
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(tcp) => {
                set_up(&tcp);
                return Ok(tcp);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.map_or(ConnectError::NoAddress, ConnectError::Connect))
}

/// Sets up a client's TCP stream, opened here or by the caller: TCP_NODELAY, so requests go out
/// as soon as they are written (pipelined HTTP/1.1 requests and HTTP/2 frames need no Nagle
/// delay). Best effort: a socket that refuses the option still works, only slower.
pub(crate) fn set_up(tcp: &TcpStream) {
    let _ = tcp.set_nodelay(true);
}
