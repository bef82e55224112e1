//! Sending a file span to a socket with `sendfile(2)`: the kernel moves the bytes from the page
//! cache to the socket without a pass through user space (nginx's `sendfile on`). Measured on
//! a 1 MiB file (bench/static.sh, loaded 2-core VM): server CPU per response fell from
//! 550-880 µs (64 KiB `pread` + `write` chunks) to 110-140 µs (nginx: 145-185 µs). The caller
//! corks the socket around head and file (nginx's `tcp_nopush`, [`Transport::set_cork`]), so
//! the head does not leave as a small segment of its own: without it, 1 MiB req/s stayed at
//! 0.5-0.75x nginx's.
//!
//! Not run under Miri: the unsafe block is the `sendfile(2)` system call, which Miri does not
//! emulate (it moves bytes between two kernel descriptors); it has no unit test of its own, and
//! the integration tests over loopback exercise it natively.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{Context, Poll};

use tokio::io::Interest;

use super::transport::Transport;
use super::write::WriteStall;
use crate::body::FileSpan;

/// Linux transfers at most this many bytes per call (`MAX_RW_COUNT`).
const MAX_PER_CALL: u64 = 0x7fff_f000;

impl Transport {
    /// Sends the rest of `span` on a plain TCP transport, advancing it; `Pending` while the
    /// socket is full (its stall recorded in `stall`, as for
    /// [`Transport::poll_write_all`](super::Transport::poll_write_all)).
    ///
    /// # Errors
    /// A socket or file error; `UnexpectedEof` when the file ends before the span does (its
    /// length was promised, so the caller must close the connection); `Unsupported` over TLS.
    pub(crate) fn poll_sendfile(
        &mut self,
        cx: &mut Context<'_>,
        span: &mut FileSpan,
        stall: &mut WriteStall,
    ) -> Poll<io::Result<()>> {
        let Transport::Plain(tcp) = self else {
            return Poll::Ready(Err(io::ErrorKind::Unsupported.into()));
        };
        while span.remaining() > 0 {
            match tcp.try_io(Interest::WRITABLE, || sendfile_once(tcp.as_raw_fd(), span)) {
                Ok(0) => {
                    let e = io::Error::new(io::ErrorKind::UnexpectedEof, "file shrank while sent");
                    return Poll::Ready(Err(e));
                }
                Ok(n) => {
                    span.advance(n as u64);
                    stall.progressed();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => match tcp.poll_write_ready(cx) {
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => {
                        stall.stalled();
                        return Poll::Pending;
                    }
                },
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Corks a plain TCP socket (`TCP_CORK`, nginx's `tcp_nopush`) so what is written next
    /// leaves in full segments, or uncorks it to send the rest. Best effort; nothing over TLS.
    pub(crate) fn set_cork(&self, on: bool) {
        if let Transport::Plain(tcp) = self {
            let _ = socket2::SockRef::from(tcp).set_tcp_cork(on);
        }
    }
}

/// One `sendfile(2)` call from the span's offset; the span is advanced by the caller.
fn sendfile_once(socket: RawFd, span: &FileSpan) -> io::Result<usize> {
    let mut offset = libc::off_t::try_from(span.offset())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // Bounded by MAX_PER_CALL, so it fits usize on every target.
    let count = span.remaining().min(MAX_PER_CALL) as usize;
    // SAFETY: both descriptors stay open for the call (`socket` belongs to a live TcpStream
    // borrowed by the caller, the file to the span's `Arc<File>`), and `offset` points to a
    // local the kernel may write for the duration of the call only.
    let n = unsafe { libc::sendfile(socket, span.file().as_raw_fd(), &mut offset, count) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}
