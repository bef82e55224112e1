//! The one write path of every connection (the HTTP/1.1 and HTTP/2 servers, the client): write
//! all of a buffer, then what the transport holds, with a deadline on stalls.
//!
//! A socket write that returns `Ok(0)` for a non-empty buffer means the connection can take no
//! more bytes ever: it is an error (`WriteZero`), never a reason to try again. `WouldBlock`
//! waits for writability; a stall longer than the write timeout fails with `TimedOut`.

use std::io::{self, IoSlice};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Buf;

use super::transport::Transport;

/// The most pieces one vectored write is given: a WebSocket echo's queue is a few frames
/// (header, payload, header, payload...); more wait for the next write.
const MAX_SLICES: usize = 16;

/// When the current write stall began: the write timeout counts from there, and any progress
/// clears it. The driver arms its timer for [`WriteStall::deadline`] while a write pends.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WriteStall {
    since: Option<Instant>,
}

impl WriteStall {
    /// When the stall under way times out, if a write is stalled.
    #[inline]
    pub(crate) fn deadline(&self, timeout: Duration) -> Option<Instant> {
        self.since.map(|since| since + timeout)
    }

    /// A write made progress.
    #[inline]
    pub(super) fn progressed(&mut self) {
        self.since = None;
    }

    /// A write could not go on: the stall starts now unless it already had.
    pub(super) fn stalled(&mut self) {
        self.since.get_or_insert_with(Instant::now);
    }
}

/// The error of a write that could take no byte: the peer is gone.
pub(crate) fn write_zero() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "the connection takes no more bytes")
}

impl Transport {
    /// Writes `data[*pos..]`, advancing `pos`, then sends what the transport holds (TLS
    /// records). `Pending` when the socket is full (its writability is registered, and
    /// `stall` records since when); `Ready(Ok)` once everything is out.
    ///
    /// # Errors
    /// The socket's error; `WriteZero` when it takes no byte (see the module docs).
    #[inline]
    pub(crate) fn poll_write_all(
        &mut self,
        cx: &mut Context<'_>,
        data: &[u8],
        pos: &mut usize,
        stall: &mut WriteStall,
    ) -> Poll<io::Result<()>> {
        // One piece: `poll_write_buf`'s loop, with a plain write each time.
        let mut rest = data.get(*pos..).unwrap_or_default();
        let polled = self.poll_write_buf(cx, &mut rest, stall);
        *pos = data.len() - rest.len();
        polled
    }

    /// Writes all of `buf`, advancing it, then sends what the transport holds (TLS records):
    /// as [`Transport::poll_write_all`], with a buffer made of several pieces (frame octets and
    /// shared payloads) written by vectored writes on plain TCP, a write that ends inside a
    /// piece resuming there.
    ///
    /// # Errors
    /// As [`Transport::poll_write_all`].
    #[inline]
    pub(crate) fn poll_write_buf(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut impl Buf,
        stall: &mut WriteStall,
    ) -> Poll<io::Result<()>> {
        while buf.has_remaining() {
            let chunk = buf.chunk();
            let written = if chunk.len() == buf.remaining() {
                // One piece (short frames only): a plain write.
                self.try_write(chunk)
            } else {
                let mut slices = [IoSlice::new(&[]); MAX_SLICES];
                let n = buf.chunks_vectored(&mut slices);
                self.try_write_vectored(&slices[..n])
            };
            match written {
                Ok(0) => return Poll::Ready(Err(write_zero())),
                Ok(n) => {
                    buf.advance(n);
                    stall.progressed();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match self.poll_write_ready(cx) {
                        Poll::Ready(Ok(())) => continue,
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                        Poll::Pending => {
                            stall.stalled();
                            return Poll::Pending;
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        self.poll_flush_held(cx, stall)
    }

    /// Sends what the transport holds (TLS records not yet written), with the stall recorded
    /// as for [`Transport::poll_write_all`].
    ///
    /// # Errors
    /// The socket's error.
    #[inline]
    pub(crate) fn poll_flush_held(
        &mut self,
        cx: &mut Context<'_>,
        stall: &mut WriteStall,
    ) -> Poll<io::Result<()>> {
        if !self.has_pending() {
            return Poll::Ready(Ok(()));
        }
        match self.poll_flush(cx) {
            Poll::Ready(r) => {
                stall.progressed();
                Poll::Ready(r)
            }
            Poll::Pending => {
                stall.stalled();
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// A peer that reads nothing: the write stalls with the stall recorded; once it reads,
    /// the rest goes and the stall clears. Every byte arrives in order.
    #[test]
    fn a_stalled_write_resumes_and_records_the_stall() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let mut peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (stream, _) = listener.accept().await.unwrap();
            socket2::SockRef::from(&stream).set_send_buffer_size(4096).unwrap();
            let mut io = Transport::Plain(stream);
            let data: Vec<u8> = (0..4 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
            let (mut pos, mut stall) = (0, WriteStall::default());
            let mut cx = Context::from_waker(std::task::Waker::noop());
            assert!(io.poll_write_all(&mut cx, &data, &mut pos, &mut stall).is_pending());
            assert!(pos < data.len());
            let timeout = Duration::from_secs(30);
            assert!(stall.deadline(timeout).is_some_and(|at| at > Instant::now()));
            let want = data.clone();
            let reader = std::thread::spawn(move || {
                let mut got = vec![0; want.len()];
                peer.read_exact(&mut got).unwrap();
                assert!(got == want, "bytes out of order");
            });
            std::future::poll_fn(|cx| io.poll_write_all(cx, &data, &mut pos, &mut stall))
                .await
                .unwrap();
            assert_eq!(pos, data.len());
            assert!(stall.deadline(timeout).is_none(), "progress clears the stall");
            reader.join().unwrap();
        });
    }

    /// A buffer of several pieces to a peer that reads nothing, then reads: the vectored
    /// writes stop inside pieces and resume there; every byte arrives in order.
    #[test]
    fn a_stalled_vectored_write_resumes_inside_a_piece() {
        use bytes::{Buf, Bytes};
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let mut peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (stream, _) = listener.accept().await.unwrap();
            socket2::SockRef::from(&stream).set_send_buffer_size(4096).unwrap();
            let mut io = Transport::Plain(stream);
            let piece = |len: usize, salt: usize| -> Bytes {
                (0..len).map(|i| ((i + salt) % 251) as u8).collect::<Vec<u8>>().into()
            };
            let (a, b, c) = (piece(3, 1), piece(3 * 1024 * 1024 + 5, 2), piece(10, 3));
            let want = [&a[..], &b[..], &c[..]].concat();
            let mut buf = a.chain(b).chain(c);
            let mut stall = WriteStall::default();
            let mut cx = Context::from_waker(std::task::Waker::noop());
            assert!(io.poll_write_buf(&mut cx, &mut buf, &mut stall).is_pending());
            assert!(buf.has_remaining() && buf.remaining() < want.len());
            assert!(stall.deadline(Duration::from_secs(30)).is_some());
            let reader = std::thread::spawn(move || {
                let mut got = vec![0; want.len()];
                peer.read_exact(&mut got).unwrap();
                assert!(got == want, "bytes out of order");
            });
            std::future::poll_fn(|cx| io.poll_write_buf(cx, &mut buf, &mut stall)).await.unwrap();
            assert!(!buf.has_remaining());
            assert!(stall.deadline(Duration::from_secs(30)).is_none());
            reader.join().unwrap();
        });
    }
}
