//! The HTTP/3 driver (RFC 9114): QUIC connections from quinn's endpoint, each with its
//! `http3::conn::Conn` (control and QPACK streams, request streams' messages), running the
//! same handler as HTTP/1.1 and HTTP/2.
//!
//! One task per connection accepts its streams, and one task per stream reads it; all run on
//! the worker's thread, so the connection's state is a `RefCell` never borrowed across an
//! await. A writer task owns our three unidirectional streams (control, QPACK encoder and
//! decoder) and writes whatever the state queued for them when woken. Request bodies reach
//! the handler through a bounded channel (QUIC flow control holds the client back while the
//! handler does not read); response bodies are written chunk by chunk as quinn takes them
//! (its stream window holds us back while the client does not read).

mod stream;

use std::cell::{Cell, RefCell};
use std::pin::pin;
use std::rc::Rc;

use bytes::BytesMut;
use tokio::sync::Notify;

use super::service::Service;
use super::worker::Worker;
use crate::handler::Handler;
use crate::http3::conn::{Config as H3Config, Conn, Event};
use crate::http3::{Code, Error, Role, StreamId};
use crate::net::linger::LINGER;
use crate::net::quic::QuicLimits;

/// The QUIC limits of `config`'s connections.
fn quic_limits(config: &super::Config) -> QuicLimits {
    QuicLimits {
        max_streams: config.h2_max_concurrent_streams,
        idle_timeout: config.keep_alive_timeout,
        stream_window: config.h2_stream_window,
        connection_window: config.h2_connection_window,
        send_window: config.h3_send_window,
    }
}

/// Binds UDP at the address of every TLS listener (`addrs` and `tls` in the same order) with
/// its QUIC configuration.
///
/// # Errors
/// A bind failure; a TLS configuration QUIC cannot use (`InvalidInput`).
pub(crate) fn bind_quic(
    addrs: &[std::net::SocketAddr],
    tls: &[Option<std::sync::Arc<rustls::ServerConfig>>],
    config: &super::Config,
) -> std::io::Result<Vec<(std::net::UdpSocket, quinn::ServerConfig)>> {
    let mut out = Vec::new();
    for (addr, tls) in addrs.iter().zip(tls) {
        let Some(tls) = tls else { continue };
        let quic = crate::net::quic::server_config(tls, quic_limits(config))?;
        out.push((crate::net::quic::bind(*addr)?, quic));
    }
    Ok(out)
}

/// The HTTP/3 settings and budgets of `config`'s connections.
fn h3_config(config: &super::Config) -> H3Config {
    H3Config { max_field_section_size: config.head.max_head_bytes as u64, ..H3Config::default() }
}

/// Handshakes an endpoint runs at once before a client whose address is not yet validated
/// must first prove it receives at that address with a Retry (RFC 9000 §8.1.2). Without it a
/// flood of Initial packets from spoofed addresses, each costing the flooder one datagram,
/// would hold connection slots for `tls_handshake_timeout` and make the server send three
/// times its volume to the spoofed addresses (RFC 9000 §8.1); below it, clients pay no extra
/// round trip (quic-go's `MaxUnvalidatedHandshakes` works the same way).
const RETRY_ABOVE_HANDSHAKES: usize = 128;

/// Accepts QUIC connections on `endpoint` until the worker stops accepting.
pub(crate) async fn accept_loop<H: Handler>(
    endpoint: quinn::Endpoint,
    service: Rc<Service<H>>,
    worker: Rc<Worker>,
) {
    let handshakes = Rc::new(Cell::new(0usize));
    loop {
        let incoming = tokio::select! {
            () = worker.stopped() => break,
            incoming = endpoint.accept() => incoming,
        };
        let Some(incoming) = incoming else { break };
        if handshakes.get() >= RETRY_ABOVE_HANDSHAKES && !incoming.remote_address_validated() {
            // Cannot fail: an unvalidated Incoming may always be retried.
            let _ = incoming.retry();
            continue;
        }
        if !worker.admit() {
            incoming.refuse();
            continue;
        }
        let admitted = super::worker::Admitted::new(worker.clone());
        let service = service.clone();
        let handshaking = Handshaking::new(&handshakes);
        tokio::task::spawn_local(async move {
            let handshake =
                tokio::time::timeout(admitted.worker.config.tls_handshake_timeout, async move {
                    incoming.await
                });
            let handshake = handshake.await;
            drop(handshaking);
            if let Ok(Ok(quic)) = handshake {
                serve(quic, service, admitted).await;
            }
        });
    }
    // Busy connections finish their streams (drain); then the endpoint closes.
    endpoint.wait_idle().await;
}

/// One handshake under way, counted in the accept loop's total until dropped.
struct Handshaking(Rc<Cell<usize>>);

impl Handshaking {
    fn new(count: &Rc<Cell<usize>>) -> Handshaking {
        count.set(count.get() + 1);
        Handshaking(count.clone())
    }
}

impl Drop for Handshaking {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

/// One connection's state, shared by its tasks (all on this thread).
pub(super) struct Shared {
    pub(super) conn: RefCell<Conn>,
    pub(super) quic: quinn::Connection,
    /// Wakes the writer: bytes may be queued for our control or QPACK streams.
    pub(super) out: Notify,
    /// Wakes streams blocked on the QPACK encoder stream.
    pub(super) unblocked: Notify,
    /// Request heads are copied here and split off (as HTTP/2's, `Request::from_h2`).
    pub(super) arena: RefCell<BytesMut>,
    /// Streams being served.
    pub(super) live: Cell<usize>,
    pub(super) idle: Notify,
}

impl Shared {
    /// Closes the connection with a connection error's code (RFC 9114 §8).
    pub(super) fn fail(&self, e: Error) {
        if let Error::Connection { code, why } = e {
            close(&self.quic, code, why);
        }
    }
}

fn close(quic: &quinn::Connection, code: Code, why: &str) {
    let code = quinn::VarInt::from_u64(u64::from(code)).unwrap_or(quinn::VarInt::MAX);
    quic.close(code, why.as_bytes());
}

async fn serve<H: Handler>(
    quic: quinn::Connection,
    service: Rc<Service<H>>,
    admitted: super::worker::Admitted,
) {
    let worker = admitted.worker.clone();
    let shared = Rc::new(Shared {
        conn: RefCell::new(Conn::new(Role::Server, h3_config(&worker.config))),
        quic: quic.clone(),
        out: Notify::new(),
        unblocked: Notify::new(),
        arena: RefCell::new(BytesMut::new()),
        live: Cell::new(0),
        idle: Notify::new(),
    });
    tokio::task::spawn_local(writer(shared.clone()));
    tokio::task::spawn_local(uni_streams(shared.clone()));
    let mut next = 0u64;
    let mut drain = pin!(drain_begins(worker.clone()));
    // A connection accepted during the drain's grace period first takes a request, as an
    // HTTP/1.1 one answers one with `Connection: close`: a GOAWAY at once would refuse all its
    // requests (RFC 9114 §5.2), and the grace is there to answer what a balancer still sends.
    let opened_in_drain = worker.draining();
    let mut stopped = pin!(worker.stopped());
    loop {
        let accepted = tokio::select! {
            // Streams the client has opened already are taken before the GOAWAY, not refused.
            biased;
            accepted = quic.accept_bi() => accepted,
            () = &mut stopped, if opened_in_drain && next == 0 => {
                shared.conn.borrow_mut().send_goaway(next);
                shared.out.notify_one();
                break;
            }
            () = &mut drain, if !opened_in_drain || next > 0 => {
                // §5.2: GOAWAY with the first request stream ID we will not process; the
                // streams below it are served to their end.
                shared.conn.borrow_mut().send_goaway(next);
                shared.out.notify_one();
                break;
            }
        };
        let Ok((send, recv)) = accepted else { return };
        let id = StreamId::new(recv.id().index() * 4);
        next = id.get() + 4;
        shared.live.set(shared.live.get() + 1);
        // Boxed: a stream's future is about 3 KiB (the request, the response, the reads and
        // writes it waits on), and a task spawned by value has its whole future copied into the
        // task and its stage written back when it ends: three copies per request, about 1,800
        // instructions (callgrind), where the box costs one copy and an allocation.
        tokio::task::spawn_local(Box::pin(stream::serve(
            shared.clone(),
            service.clone(),
            worker.clone(),
            id,
            send,
            recv,
        )));
    }
    // Drain: the streams under way end; the connection stays open (GOAWAY delivered, the
    // client moving elsewhere) until the client closes it or the worker stops accepting,
    // then closes with H3_NO_ERROR.
    let streams_done = async {
        while shared.live.get() > 0 {
            let mut idle = pin!(shared.idle.notified());
            idle.as_mut().enable();
            if shared.live.get() == 0 {
                break;
            }
            idle.await;
        }
        worker.stopped().await;
        // A lingering close, as over TCP (`net::linger`): closing abandons the stream data
        // not yet acknowledged (RFC 9000 §10.2: after CONNECTION_CLOSE nothing else is sent),
        // so the last responses, handed to QUIC whole, get a moment to arrive and be
        // acknowledged, unless the client closes first (the soak's drain lost the ends of
        // three bodies, written but not yet delivered, to an immediate close).
        tokio::time::sleep(LINGER).await;
    };
    tokio::select! {
        () = streams_done => {}
        _ = quic.closed() => {}
        () = tokio::time::sleep(worker.config.drain_grace + worker.config.shutdown_timeout) => {}
    }
    close(&quic, Code::H3_NO_ERROR, "");
    drop(admitted);
}

/// Completes when the worker begins to drain.
async fn drain_begins(worker: Rc<Worker>) {
    match worker.drain_signal() {
        Some(mut drain) => std::future::poll_fn(|cx| drain.poll(cx)).await,
        None => std::future::pending().await,
    }
}

/// Opens our control and QPACK streams and writes what the state queues on them, each stream
/// on its own: a peer that does not read one of them (its flow control stops our writes there)
/// holds back none of the others, the control stream's GOAWAY above all. A stream's bytes are
/// taken from the state only once the last ones are written, so what a stalled stream has not
/// sent stays where the state's budgets count it (the QPACK decoder stream's backlog).
async fn writer(shared: Rc<Shared>) {
    let open = async {
        let control = shared.quic.open_uni().await?;
        let encoder = shared.quic.open_uni().await?;
        let decoder = shared.quic.open_uni().await?;
        Ok::<_, quinn::ConnectionError>([control, encoder, decoder])
    };
    let Ok([mut control, mut encoder, mut decoder]) = open.await else { return };
    let (mut c, mut e, mut d) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        let mut woken = pin!(shared.out.notified());
        woken.as_mut().enable();
        {
            let mut conn = shared.conn.borrow_mut();
            if c.is_empty() {
                conn.poll_control(&mut c);
            }
            if e.is_empty() {
                conn.poll_encoder_stream(&mut e);
            }
            if d.is_empty() {
                conn.poll_decoder_stream(&mut d);
            }
        }
        // quinn's `write` is cancel-safe: a write not chosen here wrote nothing.
        let written = tokio::select! {
            r = control.write(&c), if !c.is_empty() => r.map(|n| drop(c.drain(..n))),
            r = encoder.write(&e), if !e.is_empty() => r.map(|n| drop(e.drain(..n))),
            r = decoder.write(&d), if !d.is_empty() => r.map(|n| drop(d.drain(..n))),
            () = &mut woken => Ok(()),
            _ = shared.quic.closed() => return,
        };
        if written.is_err() {
            return;
        }
    }
}

/// Accepts the peer's unidirectional streams and feeds them to the state.
async fn uni_streams(shared: Rc<Shared>) {
    while let Ok(recv) = shared.quic.accept_uni().await {
        tokio::task::spawn_local(uni_stream(shared.clone(), recv));
    }
}

async fn uni_stream(shared: Rc<Shared>, mut recv: quinn::RecvStream) {
    // Client-initiated unidirectional streams are 2, 6, 10, ... (RFC 9000 §2.1).
    let id = StreamId::new(recv.id().index() * 4 + 2);
    loop {
        let (bytes, fin) = match recv.read_chunk(16 * 1024, true).await {
            Ok(Some(chunk)) => (chunk.bytes, false),
            Ok(None) => (bytes::Bytes::new(), true),
            Err(quinn::ReadError::Reset(_)) => {
                let r = shared.conn.borrow_mut().reset_uni(id);
                if let Err(e) = r {
                    shared.fail(e);
                }
                return;
            }
            Err(_) => return,
        };
        let r = shared.conn.borrow_mut().recv_uni(id, &bytes, fin);
        if let Err(e) = r {
            shared.fail(e);
            return;
        }
        let mut stop = None;
        let mut unblocked = false;
        while let Some(event) = shared.conn.borrow_mut().poll_event() {
            match event {
                Event::StopSending(s, code) if s == id => stop = Some(code),
                Event::Unblocked(_) => unblocked = true,
                _ => {}
            }
        }
        if unblocked {
            shared.unblocked.notify_waiters();
        }
        // Insert Count Increments for the inserts just read.
        shared.out.notify_one();
        if let Some(code) = stop {
            let _ = recv.stop(quinn::VarInt::from_u64(u64::from(code)).unwrap_or_default());
            return;
        }
        if fin {
            return;
        }
    }
}
