//! The lingering close every server connection ends with (nginx's `lingering_close`): once our
//! last bytes are written and the write side is shut, read and drop what the client still sends
//! for a moment before closing. Closing a socket with unread input makes the kernel send a
//! reset at once, which discards what it has not yet delivered of our last response or GOAWAY
//! (and a peer busy writing may not have taken it in yet): a flood ended by
//! GOAWAY(ENHANCE_YOUR_CALM) lost that GOAWAY now and then before the HTTP/2 driver lingered
//! too.

use std::io;
use std::task::{Context, Poll};
use std::time::Duration;

use super::transport::Transport;

/// Upper bound on the time a lingering close waits for the client's end of stream, outside a
/// drain (during one it waits until the drain's deadline: `server::worker`'s `linger_deadline`).
pub(crate) const LINGER: Duration = Duration::from_secs(1);

/// Upper bound on what a lingering close reads and drops; past it the connection waits
/// without reading (the client's writes then stall) until the deadline.
pub(crate) const LINGER_BYTES: usize = 64 * 1024;

impl Transport {
    /// Reads and drops what the socket has, raw (after our TLS close_notify, whatever records
    /// follow are dropped unread), counting into `discarded`. Ready at the client's end of
    /// stream or an error (the close may go ahead), Pending while it waits for more or once
    /// [`LINGER_BYTES`] have been dropped (the caller's deadline ends the wait).
    pub(crate) fn poll_discard(&self, cx: &mut Context<'_>, discarded: &mut usize) -> Poll<()> {
        let stream = self.tcp();
        let mut scratch = [0u8; 4096];
        while *discarded < LINGER_BYTES {
            match stream.poll_read_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(_)) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
            match stream.try_read(&mut scratch) {
                Ok(0) => return Poll::Ready(()),
                Ok(n) => *discarded += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return Poll::Ready(()),
            }
        }
        Poll::Pending
    }

    /// Whether the socket is marked readable (bytes or the end arrived and are not read yet),
    /// asked without waiting: with a no-op waker, as nothing waits on this socket after it.
    pub(crate) fn read_signalled(&self) -> bool {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        self.tcp().poll_read_ready(&mut cx).is_ready()
    }
}
