//! Listening sockets inherited from systemd socket activation (`sd_listen_fds(3)`): the
//! socket outlives the process, so a restart loses no connection (they wait in its backlog).
//! The descriptors are taken over by `net::listen`.

use std::io;
use std::net::TcpListener;

/// The listening TCP sockets systemd passed to this process (socket activation), in the order
/// of the socket unit's `ListenStream=` lines; empty when the process was not socket-activated.
///
/// As `sd_listen_fds(3)`: the sockets are the descriptors from 3 on, `LISTEN_FDS` of them,
/// when `LISTEN_PID` is this process's id (so a child does not take its parent's); each is
/// marked close-on-exec. The variables are left in the environment (changing it is not
/// thread-safe); a child process sees a `LISTEN_PID` that is not its own and ignores them.
/// Only the first call returns the sockets; later ones return none.
///
/// Give them to [`Server::from_listener`](crate::Server::from_listener). With several
/// workers, every worker accepts from the same inherited socket.
///
/// # Errors
/// `InvalidData` when `LISTEN_FDS` is not a number; `InvalidInput` when a descriptor is not a
/// listening TCP (IPv4 or IPv6 stream) socket; the system's error when one cannot be queried.
///
/// # Examples
/// ```no_run
/// use peregrine::server::listen_fds;
/// use peregrine::{Request, Server};
///
/// # fn main() -> std::io::Result<()> {
/// let mut sockets = listen_fds()?.into_iter();
/// let server = match sockets.next() {
///     Some(socket) => Server::from_listener(socket),
///     None => Server::bind("127.0.0.1:8080"),
/// };
/// server.run(|_req: Request| async { "hello" })
/// # }
/// ```
pub fn listen_fds() -> io::Result<Vec<TcpListener>> {
    crate::net::listen::inherited()
}
