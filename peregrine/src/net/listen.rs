//! Listening sockets: bound here with the options every worker's listener wants
//! (`SO_REUSEPORT`, non-blocking, a deep backlog), or adopted from the descriptors systemd passed
//! the process (socket activation). Which addresses to listen on and how the sockets are spread
//! over the workers is the server's (`server::runtime`).

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use socket2::{Domain, Protocol, Socket, Type};

/// Pending connections per listener (the kernel caps it at `net.core.somaxconn`).
const BACKLOG: i32 = 4096;

/// Binds one listening socket on `addr` with `SO_REUSEADDR` and `SO_REUSEPORT`, non-blocking,
/// ready for tokio; returns it and the address it is bound to (the port the kernel chose for
/// port 0).
///
/// Every worker binds the same address: the kernel balances accepted connections between the
/// sockets by a hash of the 4-tuple.
pub(crate) fn bind_reuse_port(addr: SocketAddr) -> io::Result<(TcpListener, SocketAddr)> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    let listener: TcpListener = socket.into();
    let local = listener.local_addr()?;
    Ok((listener, local))
}

/// Fails when a socket already listens on `addr`: a plain bind (no `SO_REUSEPORT`), closed at
/// once.
///
/// Linux lets any socket of the same user join a `SO_REUSEPORT` group, so a port another server
/// listens on would otherwise be shared silently.
pub(crate) fn check_unused(addr: SocketAddr) -> io::Result<()> {
    drop(TcpListener::bind(addr)?);
    Ok(())
}

/// Makes `listener`, made elsewhere, ready for tokio (non-blocking) and returns `n` handles on
/// it (the socket itself first, then duplicates of its descriptor) and its address.
pub(crate) fn share(listener: TcpListener, n: usize) -> io::Result<(Vec<TcpListener>, SocketAddr)> {
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    let mut handles = Vec::with_capacity(n);
    for _ in 1..n {
        handles.push(listener.try_clone()?);
    }
    if n > 0 {
        handles.insert(0, listener);
    }
    Ok((handles, local))
}

/// The first inherited descriptor (`SD_LISTEN_FDS_START`).
const FIRST_FD: RawFd = 3;

/// Set once the descriptors have been taken: a second call must not own them again.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// The listening TCP sockets systemd passed to this process, as `sd_listen_fds(3)` finds them:
/// the descriptors from 3 on, `LISTEN_FDS` of them, when `LISTEN_PID` is this process's id (so
/// a child does not take its parent's); each is marked close-on-exec. Empty when the process
/// was not socket-activated, and on every call after the first. The variables are left in the
/// environment (changing it is not thread-safe).
///
/// # Errors
/// `InvalidData` when `LISTEN_FDS` is not a number; `InvalidInput` when a descriptor is not a
/// listening TCP (IPv4 or IPv6 stream) socket; the system's error when one cannot be queried.
///
/// Not run under Miri: the unsafe block adopts a descriptor the process inherited, and what
/// follows queries it with `getsockopt`, a socket call Miri does not emulate; the unit tests
/// cover the pure `count` (run under Miri) and a real socket (skipped there).
#[allow(unsafe_code)]
pub(crate) fn inherited() -> io::Result<Vec<TcpListener>> {
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

    #[test]
    #[cfg_attr(miri, ignore = "Miri does not emulate sockets")]
    fn shared_handles_are_one_socket() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (handles, local) = share(listener, 3).unwrap();
        assert_eq!((handles.len(), local), (3, addr));
        for h in &handles {
            assert_eq!(h.local_addr().unwrap(), addr);
        }
    }
}
