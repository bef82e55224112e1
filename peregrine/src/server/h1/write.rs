//! The write side of an HTTP/1.1 connection: flushing the batched responses, streaming bodies
//! (`sendfile(2)` for files on plain TCP), and the lingering close.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::time::{Instant, Sleep};

use super::fixed_run::FixedRun;
use super::response::COPY_MAX;
use super::{Close, Conn};
use crate::body::Body;
use crate::date::ImfFixdate;
use crate::handler::Handler;
use crate::http1::chunked::{CRLF, encode_chunk, encode_chunk_head, encode_last_chunk};
use crate::http1::framing::BodyLength;
use crate::net::Transport;
use crate::server::linger::{LINGER, LINGER_BYTES, poll_discard};
use crate::server::worker::Worker;

/// Flush the write buffer once it holds this much, even mid-batch.
pub(super) const FLUSH_AT: usize = 64 * 1024;

impl<H: Handler> Conn<H> {
    /// Writes the whole write buffer, and whatever the transport still holds (TLS records).
    ///
    /// A poll function rather than an `async fn` (here and in `write_all`): it holds two
    /// references and a flag, where the async version held its arguments, a copy of them in an
    /// inner future and that future's closure (152 bytes, inside every waiting connection).
    pub(super) fn flush<'a>(
        &'a mut self,
        sleep: &'a mut Pin<&mut Sleep>,
    ) -> impl Future<Output = Result<(), Close>> + 'a {
        let mut armed = false;
        poll_fn(move |cx| self.poll_flush_all(sleep, &mut armed, cx))
    }

    /// The flush as a poll function: a run of fixed answers, the write buffer, then what the
    /// transport holds.
    pub(super) fn poll_flush_all(
        &mut self,
        sleep: &mut Pin<&mut Sleep>,
        armed: &mut bool,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Close>> {
        let Conn { io, worker, wbuf, wpos, run, date, .. } = &mut *self;
        if run.is_pending() {
            write_run(run, |bytes| io.try_write(bytes), worker, date, wbuf)?;
        }
        poll_flush(io, wbuf, wpos, worker, sleep, armed, cx)
    }

    fn write_all<'a>(
        &'a mut self,
        data: &'a [u8],
        sleep: &'a mut Pin<&mut Sleep>,
    ) -> impl Future<Output = Result<(), Close>> + 'a {
        let (mut pos, mut armed) = (0, false);
        poll_fn(move |cx| {
            let Conn { io, worker, .. } = &mut *self;
            ready!(poll_write(io, data, &mut pos, worker, sleep, &mut armed, cx))?;
            poll_transport_flush(io, worker, sleep, &mut armed, cx)
        })
    }

    /// Streams a body after its head, with the framing the head announced. Returns the content
    /// bytes written.
    pub(super) async fn write_body(
        &mut self,
        body: &mut Body,
        length: BodyLength,
        sleep: &mut Pin<&mut Sleep>,
    ) -> Result<u64, Close> {
        // A file body of known length goes out with sendfile(2), skipping user space; over TLS
        // it is read in chunks like any body.
        #[cfg(target_os = "linux")]
        if let (BodyLength::Length(n), Some(span), true) =
            (length, body.file_span_mut(), self.io.is_plain())
        {
            // Corked, the head and the file leave in full segments (nginx's tcp_nopush).
            let sock = socket2::SockRef::from(self.io.tcp());
            let _ = sock.set_tcp_cork(true);
            let sent = match self.flush(sleep).await {
                Ok(()) => {
                    let timeout = self.worker.config.write_timeout;
                    crate::server::sendfile::send_file(self.io.tcp(), span, timeout)
                        .await
                        .map_err(|_| Close::Io)
                }
                Err(e) => Err(e),
            };
            let _ = socket2::SockRef::from(self.io.tcp()).set_tcp_cork(false);
            return sent.map(|()| n);
        }
        let mut left = match length {
            BodyLength::Length(n) => n,
            _ => u64::MAX,
        };
        let mut sent = 0;
        loop {
            let chunk = match poll_fn(|cx| body.poll_chunk(cx)).await {
                None => break,
                Some(Ok(chunk)) => chunk,
                // The body failed mid-response: the message cannot be completed, so the
                // connection closes and the client sees it truncated.
                Some(Err(_)) => return Err(Close::Done),
            };
            if chunk.is_empty() {
                continue;
            }
            let chunked = length == BodyLength::Chunked;
            if !chunked {
                // A body longer than its declared length would corrupt the framing.
                left = left.checked_sub(chunk.len() as u64).ok_or(Close::Done)?;
            }
            sent += chunk.len() as u64;
            if chunk.len() >= COPY_MAX {
                // Large chunks go out from their own buffer, not copied.
                if chunked {
                    encode_chunk_head(chunk.len() as u64, &mut self.wbuf);
                }
                self.flush(sleep).await?;
                self.write_all(&chunk, sleep).await?;
                if chunked {
                    self.wbuf.extend_from_slice(CRLF);
                }
                continue;
            }
            if chunked {
                encode_chunk(&chunk, &mut self.wbuf);
            } else {
                self.wbuf.extend_from_slice(&chunk);
            }
            if self.wbuf.len() >= FLUSH_AT {
                self.flush(sleep).await?;
            }
        }
        match length {
            BodyLength::Chunked => {
                let trailers = body.take_trailers();
                let fields: Vec<(&str, &[u8])> = trailers
                    .iter()
                    .flatten()
                    .filter(|(name, _)| trailer_allowed(name))
                    .map(|(name, value)| (name.as_str(), value.as_bytes()))
                    .collect();
                // The fields are `HeaderName`s and `HeaderValue`s, and the framing ones are
                // left out: the encoder has nothing to refuse.
                let _ = encode_last_chunk(&fields, &mut self.wbuf);
            }
            BodyLength::Length(_) if left != 0 => return Err(Close::Done),
            _ => {}
        }
        Ok(sent)
    }

    /// Lingering close (as nginx's `lingering_close`): stop sending, then read and drop what
    /// the client still sends for a moment, so our last response is not destroyed by a reset.
    ///
    /// As nginx's default (`lingering_close on`), only when the client may still be sending:
    /// not after a request that itself asked to close (RFC 9112 §9.6: its client sends no
    /// further request) when nothing of it is left unread, in our buffers or signalled on the
    /// socket. Waiting for that client's FIN cost a wake-up, a timer and a `recv` per
    /// connection (bench/tls.sh, a handshake per request).
    pub(super) async fn linger(&mut self, sleep: &mut Pin<&mut Sleep>) {
        if self.io.shutdown_write().is_err() {
            return;
        }
        if self.client_close
            && self.rbuf.is_empty()
            && !self.io.has_buffered_read()
            && !read_signalled(self.io.tcp())
        {
            return;
        }
        let deadline = Instant::now() + LINGER.min(self.worker.config.header_read_timeout);
        sleep.as_mut().reset(deadline);
        let stream = self.io.tcp();
        let mut discarded = 0;
        poll_fn(|cx| {
            if poll_discard(stream, cx, &mut discarded).is_ready() {
                return Poll::Ready(());
            }
            // The bytes' bound: close now, as before (the HTTP/2 driver waits out the
            // deadline instead, see `linger`).
            if discarded >= LINGER_BYTES {
                return Poll::Ready(());
            }
            sleep.as_mut().poll(cx)
        })
        .await
    }
}

/// Whether a trailer field may be sent (RFC 9110 §6.5.1): not the fields that frame the
/// message or belong to the connection.
pub(crate) fn trailer_allowed(name: &http::HeaderName) -> bool {
    use http::header::{CONNECTION, CONTENT_LENGTH, TE, TRAILER, TRANSFER_ENCODING, UPGRADE};
    ![CONTENT_LENGTH, TRANSFER_ENCODING, CONNECTION, TE, TRAILER, UPGRADE].contains(name)
        && name.as_str() != "keep-alive"
        && name.as_str() != "proxy-connection"
}

/// Whether the socket is marked readable (bytes or the end arrived and are not read yet),
/// asked without waiting: with a no-op waker, as nothing waits on this socket after it.
fn read_signalled(stream: &tokio::net::TcpStream) -> bool {
    let mut cx = Context::from_waker(std::task::Waker::noop());
    stream.poll_read_ready(&mut cx).is_ready()
}

/// Writes `run` straight from the worker's repeated copy of its answer (with the batch's
/// `date`), as one call of `send` (a socket's write: the bytes it took, `WouldBlock` for none);
/// what it does not take is copied into `wbuf`, for a flush to finish with its write timeout.
/// With [`queue_only`] as `send` the whole run is copied into `wbuf`: something else is about
/// to be queued after it.
pub(super) fn write_run(
    run: &mut FixedRun,
    send: impl FnOnce(&[u8]) -> io::Result<usize>,
    worker: &Worker,
    date: &mut Option<ImfFixdate>,
    wbuf: &mut Vec<u8>,
) -> Result<(), Close> {
    let Some((index, is_head, count)) = run.take() else {
        return Ok(());
    };
    let Some(fixed) = worker.fixed(index) else {
        return Err(Close::Done);
    };
    let date = date.get_or_insert_with(crate::server::clock::date);
    let mut repeats = worker.repeats.borrow_mut();
    let Some(bytes) = repeats.get(index, fixed, is_head, date, count) else {
        return Err(Close::Done);
    };
    let sent = match send(bytes) {
        Ok(n) => n,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
        Err(_) => return Err(Close::Io),
    };
    if let Some(rest) = bytes.get(sent..).filter(|rest| !rest.is_empty()) {
        if wbuf.capacity() == 0 {
            *wbuf = worker.buffers.take_write();
        }
        wbuf.extend_from_slice(rest);
    }
    Ok(())
}

/// The `send` of [`write_run`] that sends nothing: the run is queued whole.
pub(super) fn queue_only(_: &[u8]) -> io::Result<usize> {
    Ok(0)
}

/// Writes `wbuf[*wpos..]` and then what the transport holds; clears the buffer once written.
pub(super) fn poll_flush(
    io: &mut Transport,
    wbuf: &mut Vec<u8>,
    wpos: &mut usize,
    worker: &Worker,
    sleep: &mut Pin<&mut Sleep>,
    armed: &mut bool,
    cx: &mut Context<'_>,
) -> Poll<Result<(), Close>> {
    ready!(poll_write(io, wbuf, wpos, worker, sleep, armed, cx))?;
    wbuf.clear();
    *wpos = 0;
    poll_transport_flush(io, worker, sleep, armed, cx)
}

/// Sends what the transport still holds (TLS records), with the write timeout.
fn poll_transport_flush(
    io: &mut Transport,
    worker: &Worker,
    sleep: &mut Pin<&mut Sleep>,
    armed: &mut bool,
    cx: &mut Context<'_>,
) -> Poll<Result<(), Close>> {
    if !io.has_pending() {
        return Poll::Ready(Ok(()));
    }
    match io.poll_flush(cx) {
        Poll::Ready(Ok(())) => Poll::Ready(Ok(())),
        Poll::Ready(Err(_)) => Poll::Ready(Err(Close::Io)),
        Poll::Pending => stalled(worker, sleep, armed, cx),
    }
}

/// Writes `data[*pos..]`, advancing `pos`; a write making no progress for `write_timeout`
/// fails (`armed`: the timer is set for the current stall).
pub(super) fn poll_write(
    io: &mut Transport,
    data: &[u8],
    pos: &mut usize,
    worker: &Worker,
    sleep: &mut Pin<&mut Sleep>,
    armed: &mut bool,
    cx: &mut Context<'_>,
) -> Poll<Result<(), Close>> {
    while *pos < data.len() {
        match io.try_write(&data[*pos..]) {
            Ok(0) => return Poll::Ready(Err(Close::Io)),
            Ok(n) => {
                *pos += n;
                *armed = false;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                match io.poll_write_ready(cx) {
                    Poll::Ready(Ok(())) => continue,
                    Poll::Ready(Err(_)) => return Poll::Ready(Err(Close::Io)),
                    Poll::Pending => {}
                }
                return stalled(worker, sleep, armed, cx);
            }
            Err(_) => return Poll::Ready(Err(Close::Io)),
        }
    }
    Poll::Ready(Ok(()))
}

/// A write that cannot go on: arms the write timeout for this stall (progress restarts it) and
/// fails once it fires.
fn stalled(
    worker: &Worker,
    sleep: &mut Pin<&mut Sleep>,
    armed: &mut bool,
    cx: &mut Context<'_>,
) -> Poll<Result<(), Close>> {
    if !*armed {
        sleep.as_mut().reset(Instant::now() + worker.config.write_timeout);
        *armed = true;
    }
    if sleep.as_mut().poll(cx).is_ready() {
        return Poll::Ready(Err(Close::Done));
    }
    Poll::Pending
}

#[cfg(test)]
mod tests {
    use super::super::fixed_run::tests::{fixed, one_by_one};
    use super::*;

    /// Runs written to a socket whose send buffer is small and whose peer reads nothing, until
    /// one is taken only in part (or not at all): the rest is queued in `wbuf`, and the peer
    /// then reads every answer of every run, in order.
    #[test]
    fn what_the_socket_does_not_take_is_queued() {
        use std::io::Read;
        use std::sync::Arc;

        use crate::server::ops::Ops;
        use crate::server::shutdown::ShutdownSignal;

        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let mut peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            peer.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
            let (stream, _) = listener.accept().await.unwrap();
            socket2::SockRef::from(&stream).set_send_buffer_size(4096).unwrap();
            let mut io = Transport::Plain(stream);
            let mut worker = crate::server::worker::tests_support::worker();
            let fixed = fixed("Hello, World!".into());
            let len = fixed.h1_len(false).unwrap();
            std::rc::Rc::get_mut(&mut worker).unwrap().ops = Some(Arc::new(Ops {
                health: None,
                metrics: None,
                shutdown: Arc::new(ShutdownSignal::default()),
                fixed: vec![fixed],
                fixed_h1: true,
            }));
            let (mut date, mut wbuf, mut runs) = (None, Vec::new(), 0);
            while wbuf.is_empty() {
                assert!(runs < 100_000, "the socket never filled");
                let mut run = FixedRun::default();
                for _ in 0..16 {
                    assert!(run.extend(0, false, len));
                }
                write_run(&mut run, |b| io.try_write(b), &worker, &mut date, &mut wbuf).unwrap();
                assert!(!run.is_pending());
                runs += 1;
            }
            assert!(wbuf.len() <= 16 * len);
            // One more run on the full socket (as after a flush that just finished): it is
            // most likely refused whole (`WouldBlock`), and queued after the rest.
            let mut run = FixedRun::default();
            for _ in 0..16 {
                assert!(run.extend(0, false, len));
            }
            let mut more = Vec::new();
            write_run(&mut run, |b| io.try_write(b), &worker, &mut date, &mut more).unwrap();
            wbuf.extend_from_slice(&more);
            runs += 1;
            let total = runs * 16 * len;
            let reader = std::thread::spawn(move || {
                let mut got = vec![0; total];
                peer.read_exact(&mut got).map(|()| got)
            });
            let mut pos = 0;
            while pos < wbuf.len() {
                match io.try_write(&wbuf[pos..]) {
                    Ok(n) => pos += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            let got = reader.join().unwrap().unwrap();
            let fixed = &worker.ops.as_ref().unwrap().fixed[0];
            let want = one_by_one(fixed, false, date.as_ref().unwrap(), runs * 16);
            assert!(got == want, "the answers differ from the one-by-one answers");
        });
    }
}
