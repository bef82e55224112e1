//! One transport under every connection: plain TCP or TLS (rustls), behind the one set of read,
//! write, flush and shutdown calls the drivers use. Readiness-based, like tokio's `try_read` /
//! `try_write`: a call that cannot go on returns `WouldBlock`, and the caller waits with the
//! matching `poll_*_ready`, which for TLS also accounts for bytes rustls already holds.
//!
//! TLS runs rustls's buffered connection directly over the socket (no tokio-rustls layer): the
//! drivers already own a readiness loop, so ciphertext goes from the socket into rustls and
//! plaintext from rustls into the driver's read buffer with no extra task or buffer between.

use std::io::{self, BufRead, Read, Write};
use std::net::Shutdown;
use std::task::{Context, Poll, ready};

use bytes::BytesMut;
use tokio::io::Interest;
use tokio::net::TcpStream;

/// A connection's byte stream: plain TCP, or TLS over TCP.
#[derive(Debug)]
pub(crate) enum Transport {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS: boxed, as a rustls connection is a few hundred bytes and idle plain connections
    /// should not pay for it.
    Tls(Box<TlsStream>),
}

/// A TLS session over a TCP stream, either role (the server's accepted connections, the
/// client's).
#[derive(Debug)]
pub(crate) struct TlsStream {
    pub(crate) tcp: TcpStream,
    pub(crate) tls: rustls::Connection,
    /// Decrypted bytes rustls holds, not yet read.
    plaintext: usize,
    /// The peer sent `close_notify`, or its end of the stream closed.
    eof: bool,
    /// Our `close_notify` goes after the bytes the next flush sends, in the same write.
    close_on_flush: bool,
    /// A short socket read clears the readiness (see `SyncTcp`): only for the server, whose
    /// connections run on current-thread runtimes; the client may run on a multi-threaded one.
    clear_readiness: bool,
}

impl TlsStream {
    pub(crate) fn new(tcp: TcpStream, tls: impl Into<rustls::Connection>) -> TlsStream {
        let tls = tls.into();
        let clear_readiness = matches!(tls, rustls::Connection::Server(_));
        TlsStream { tcp, tls, plaintext: 0, eof: false, close_on_flush: false, clear_readiness }
    }

    /// Reads what the socket has into rustls and processes it. `Ok(false)` at end of stream.
    fn read_tls(&mut self) -> io::Result<bool> {
        let n = self.tls.read_tls(&mut SyncTcp(&self.tcp, self.clear_readiness))?;
        if n == 0 {
            self.eof = true;
            return Ok(false);
        }
        match self.tls.process_new_packets() {
            Ok(state) => {
                self.plaintext = state.plaintext_bytes_to_read();
                self.eof |= state.peer_has_closed();
                Ok(true)
            }
            Err(e) => {
                // Send the alert rustls queued for this error, best effort, then fail.
                let _ = self.tls.write_tls(&mut SyncTcp(&self.tcp, self.clear_readiness));
                Err(io::Error::new(io::ErrorKind::InvalidData, e))
            }
        }
    }

    /// Hands rustls bytes of the peer's read off the socket before TLS started (what followed
    /// a PROXY protocol header), as if they had just been read.
    pub(crate) fn feed(&mut self, mut early: &[u8]) -> io::Result<()> {
        while !early.is_empty() {
            if self.tls.read_tls(&mut early)? == 0 {
                return Err(io::ErrorKind::InvalidData.into());
            }
            match self.tls.process_new_packets() {
                Ok(state) => self.plaintext = state.plaintext_bytes_to_read(),
                Err(e) => {
                    let _ = self.tls.write_tls(&mut SyncTcp(&self.tcp, self.clear_readiness));
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                }
            }
        }
        Ok(())
    }

    /// Writes what rustls has for the socket. `WouldBlock` when the socket is full.
    fn write_tls(&mut self) -> io::Result<()> {
        while self.tls.wants_write() {
            self.tls.write_tls(&mut SyncTcp(&self.tcp, self.clear_readiness))?;
        }
        Ok(())
    }

    /// Runs the handshake as far as the socket allows: `Ready(Ok)` once it is done.
    ///
    /// Over TLS 1.3 the records rustls queues on the client's Finished are the session tickets
    /// (RFC 8446 §4.6.1), which the client does not wait for: they stay queued and leave in the
    /// write of the first response (or before the connection first waits to read), saving a
    /// write. TLS 1.2 ends with our Finished, which the client does wait for: it goes at once.
    pub(crate) fn poll_handshake(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let done = !self.tls.is_handshaking();
            if done && self.tls.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3) {
                return Poll::Ready(Ok(()));
            }
            if self.tls.wants_write() {
                match self.write_tls() {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        ready!(self.tcp.poll_write_ready(cx))?;
                        continue;
                    }
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
            if done {
                return Poll::Ready(Ok(()));
            }
            match self.read_tls() {
                Ok(true) => {}
                Ok(false) => return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into())),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(self.tcp.poll_read_ready(cx))?;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

/// `std::io` over a tokio socket's non-blocking calls, for rustls's `read_tls` / `write_tls`; the
/// flag says whether a short read clears the readiness (`TlsStream::clear_readiness`).
struct SyncTcp<'a>(&'a TcpStream, bool);

impl Read for SyncTcp<'_> {
    /// A short read also clears the socket's readiness, as plain TCP does in
    /// [`Transport::try_read_buf`]: rustls offers room for a whole read (4 KiB and more), so a
    /// request that fits in a short read leaves nothing behind, and the `recv` that would only
    /// return `EAGAIN` before the next wait is saved (one per request on a keep-alive
    /// connection, two per handshake: `strace -c` under bench/tls.sh).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.try_read(buf)?;
        if self.1 && n != 0 && n < buf.len() {
            clear_read_readiness(self.0);
        }
        Ok(n)
    }
}

/// Marks the socket not readable until the next readiness event (safe with edge-triggered
/// epoll: bytes arriving after the read raise a new event, and tokio keeps a read-closed state).
#[inline]
fn clear_read_readiness(tcp: &TcpStream) {
    let _ =
        tcp.try_io(Interest::READABLE, || Err::<(), _>(io::Error::from(io::ErrorKind::WouldBlock)));
}

impl Write for SyncTcp<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.0.try_write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Transport {
    /// The TCP socket under the transport (socket options, `sendfile(2)` on plain TCP).
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            Transport::Plain(tcp) => tcp,
            Transport::Tls(tls) => &tls.tcp,
        }
    }

    /// Whether bytes go to the socket as they are (no TLS): `sendfile(2)` may be used.
    pub(crate) fn is_plain(&self) -> bool {
        matches!(self, Transport::Plain(_))
    }

    /// The protocol ALPN chose, for TLS (RFC 7301).
    pub(crate) fn alpn(&self) -> Option<&[u8]> {
        match self {
            Transport::Plain(_) => None,
            Transport::Tls(tls) => tls.tls.alpn_protocol(),
        }
    }

    /// Ready when [`Transport::try_read_buf`] may make progress: bytes (or the end) wait.
    #[inline]
    pub(crate) fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Transport::Plain(tcp) => tcp.poll_read_ready(cx),
            Transport::Tls(tls) if tls.plaintext > 0 || tls.eof => Poll::Ready(Ok(())),
            Transport::Tls(tls) => tls.tcp.poll_read_ready(cx),
        }
    }

    /// Reads into `buf`'s spare capacity: `Ok(0)` at end of stream, `WouldBlock` when nothing
    /// is there yet. The caller reserves room first.
    ///
    /// A short read on plain TCP also clears the socket's readiness, saving the `recv` that
    /// would only return `EAGAIN` (safe with edge-triggered epoll: bytes arriving later raise a
    /// new event).
    #[inline]
    pub(crate) fn try_read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        match self {
            Transport::Plain(tcp) => {
                let spare = buf.capacity() - buf.len();
                let n = tcp.try_read_buf(buf)?;
                if n != 0 && n < spare {
                    clear_read_readiness(tcp);
                }
                Ok(n)
            }
            Transport::Tls(tls) => tls_read_buf(tls, buf),
        }
    }

    /// [`Transport::try_read_buf`] without clearing the readiness after a short read, for a
    /// driver on a multi-threaded runtime: there the reactor may record new bytes between the
    /// read and the clear, and the clear would lose their wake-up. (On a current-thread
    /// runtime the reactor only runs while the thread waits, so the clear is safe.)
    #[inline]
    pub(crate) fn try_read_buf_keep_ready(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        match self {
            Transport::Plain(tcp) => tcp.try_read_buf(buf),
            Transport::Tls(tls) => tls_read_buf(tls, buf),
        }
    }

    /// Waits for bytes and reads them into `buf` (see [`Transport::try_read_buf`]).
    pub(crate) fn poll_read_buf(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut BytesMut,
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.poll_read_ready(cx))?;
            match self.try_read_buf(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                r => return Poll::Ready(r),
            }
        }
    }

    /// Writes from `data`: how many bytes were taken, or `WouldBlock`. Over TLS the bytes are
    /// taken into rustls, which encrypts them, and stay there until [`Transport::poll_flush`]
    /// (or a write that finds rustls full) sends them: records queued before (session tickets)
    /// and after (`close_notify`) leave in the same `writev`.
    #[inline]
    pub(crate) fn try_write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(tcp) => tcp.try_write(data),
            Transport::Tls(tls) => {
                // rustls takes plaintext while its buffer of unsent records is under its limit
                // (`set_buffer_limit`, 64 KiB by default), so a peer that does not read cannot
                // make us buffer more. Full: push records out, then offer the bytes again.
                let n = tls.tls.writer().write(data)?;
                if n != 0 || data.is_empty() {
                    return Ok(n);
                }
                flush_tls(tls)?;
                match tls.tls.writer().write(data)? {
                    0 => Err(io::ErrorKind::WouldBlock.into()),
                    n => Ok(n),
                }
            }
        }
    }

    /// Writes from several buffers in order with one `writev(2)` on plain TCP: how many bytes
    /// were taken (possibly ending inside any of them), or `WouldBlock`. Over TLS the first
    /// non-empty buffer is taken as [`Transport::try_write`] takes it: its bytes are copied
    /// into records anyway, and rustls's own vectored write allocates a list per call.
    #[inline]
    pub(crate) fn try_write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Transport::Plain(tcp) => tcp.try_write_vectored(bufs),
            Transport::Tls(_) => match bufs.iter().find(|b| !b.is_empty()) {
                Some(b) => self.try_write(b),
                None => Ok(0),
            },
        }
    }

    /// Ready when [`Transport::try_write`] may take bytes.
    #[inline]
    pub(crate) fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.tcp().poll_write_ready(cx)
    }

    /// Sends every byte the transport holds (TLS records rustls has not written yet).
    pub(crate) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Transport::Plain(_) => Poll::Ready(Ok(())),
            Transport::Tls(tls) => loop {
                if std::mem::take(&mut tls.close_on_flush) {
                    tls.tls.send_close_notify();
                }
                match flush_tls(tls) {
                    Ok(()) => return Poll::Ready(Ok(())),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        ready!(tls.tcp.poll_write_ready(cx))?;
                    }
                    Err(e) => return Poll::Ready(Err(e)),
                }
            },
        }
    }

    /// The response being flushed is the connection's last: over TLS, `close_notify` goes
    /// after it in the same write, when [`Transport::poll_flush`] has something to send
    /// (else [`Transport::shutdown_write`] sends it on its own).
    pub(crate) fn close_notify_on_flush(&mut self) {
        if let Transport::Tls(tls) = self {
            tls.close_on_flush = true;
        }
    }

    /// Whether decrypted bytes already wait to be read (TLS plaintext rustls holds), so the
    /// next read returns data without waiting. The end of the stream does not count: before
    /// it is read, what is queued must be sent.
    pub(crate) fn has_buffered_read(&self) -> bool {
        match self {
            Transport::Plain(_) => false,
            Transport::Tls(tls) => tls.plaintext > 0,
        }
    }

    /// Whether bytes wait in the transport for [`Transport::poll_flush`].
    pub(crate) fn has_pending(&self) -> bool {
        match self {
            Transport::Plain(_) => false,
            Transport::Tls(tls) => tls.tls.wants_write(),
        }
    }

    /// Ends our direction of the stream: TLS sends `close_notify` first (best effort, unless
    /// it went with the last flush), then the socket's write half is shut (RFC 8446 §6.1;
    /// RFC 9112 §9.6).
    pub(crate) fn shutdown_write(&mut self) -> io::Result<()> {
        if let Transport::Tls(tls) = self {
            // Sent once: rustls ignores a second call.
            tls.tls.send_close_notify();
            let _ = flush_tls(tls);
        }
        socket2::SockRef::from(self.tcp()).shutdown(Shutdown::Write)
    }
}

/// Writes what rustls holds for the socket.
fn flush_tls(tls: &mut TlsStream) -> io::Result<()> {
    tls.write_tls()
}

/// Reads decrypted bytes into `buf`, pulling ciphertext from the socket as needed.
fn tls_read_buf(tls: &mut TlsStream, buf: &mut BytesMut) -> io::Result<usize> {
    loop {
        if tls.plaintext > 0 {
            let mut copied = 0;
            let mut reader = tls.tls.reader();
            while tls.plaintext > 0 && buf.len() < buf.capacity() {
                let chunk = reader.fill_buf()?;
                let n = chunk.len().min(buf.capacity() - buf.len());
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
                reader.consume(n);
                tls.plaintext -= n.min(tls.plaintext);
                copied += n;
            }
            if copied > 0 {
                return Ok(copied);
            }
        }
        if tls.eof {
            return Ok(0);
        }
        if !tls.read_tls()? {
            return Ok(0);
        }
        // Key updates and session tickets may have queued records: send them along.
        if tls.tls.wants_write() {
            let _ = flush_tls(tls);
        }
    }
}
