//! Listening sockets inherited from systemd socket activation (`sd_listen_fds(3)`): the
//! socket outlives the process, so a restart loses no connection (they wait in its backlog).
#![allow(unsafe_code)]

use std::io;
use std::net::TcpListener;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use socket2::{Domain, Socket, Type};

/// The first inherited descriptor (`SD_LISTEN_FDS_START`).
const FIRST_FD: RawFd = 3;

/// Set once the descriptors have been taken: a second call must not own them again.
static TAKEN: AtomicBool = AtomicBool::new(false);

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
    let pid = std::env::var("LISTEN_PID").ok();
    let fds = std::env::var("LISTEN_FDS").ok();
    let n = count(pid.as_deref(), fds.as_deref(), std::process::id())?;
    if n == 0 || TAKEN.swap(true, Ordering::AcqRel) {
        return Ok(Vec::new());
    }
    let mut listeners = Vec::with_capacity(n);
    for fd in (FIRST_FD..).take(n) {
        // SAFETY: `LISTEN_PID` names this process, so systemd (or whoever activated it the
        // same way) opened descriptors 3..3+LISTEN_FDS for it, and nothing else in the process
        // owns them; `TAKEN` makes this the only place that takes ownership, once.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        let socket = Socket::from(owned);
        socket.set_cloexec(true)?;
        let tcp = matches!(socket.domain()?, Domain::IPV4 | Domain::IPV6);
        if !tcp || socket.r#type()? != Type::STREAM || !socket.is_listener()? {
            let msg = format!("inherited descriptor {fd} is not a listening TCP socket");
            return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
        }
        listeners.push(socket.into());
    }
    Ok(listeners)
}

/// How many descriptors `LISTEN_PID` / `LISTEN_FDS` give process `me`: 0 when they are
/// unset or meant for another process.
fn count(pid: Option<&str>, fds: Option<&str>, me: u32) -> io::Result<usize> {
    if pid.and_then(|p| p.parse::<u32>().ok()) != Some(me) {
        return Ok(0);
    }
    let Some(fds) = fds else {
        return Ok(0);
    };
    // Bounded: descriptors are ints, and systemd passes at most a few hundred.
    match fds.parse::<u16>() {
        Ok(n) => Ok(usize::from(n)),
        Err(_) => Err(io::Error::new(io::ErrorKind::InvalidData, "LISTEN_FDS is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_descriptors_meant_for_this_process() {
        struct Case {
            pid: Option<&'static str>,
            fds: Option<&'static str>,
            expect: Option<usize>,
        }
        let cases = [
            Case { pid: None, fds: None, expect: Some(0) },
            Case { pid: Some("42"), fds: Some("2"), expect: Some(2) },
            Case { pid: Some("43"), fds: Some("2"), expect: Some(0) },
            Case { pid: Some("x"), fds: Some("2"), expect: Some(0) },
            Case { pid: None, fds: Some("2"), expect: Some(0) },
            Case { pid: Some("42"), fds: None, expect: Some(0) },
            Case { pid: Some("42"), fds: Some("0"), expect: Some(0) },
            Case { pid: Some("42"), fds: Some("two"), expect: None },
            Case { pid: Some("42"), fds: Some("-1"), expect: None },
            Case { pid: Some("42"), fds: Some("99999"), expect: None },
        ];
        for case in cases {
            let got = count(case.pid, case.fds, 42).ok();
            assert_eq!(got, case.expect, "{:?} {:?}", case.pid, case.fds);
        }
    }
}
