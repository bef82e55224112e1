//! The HTTP/3 server against hostile clients over real loopback UDP: quinn as the client's
//! QUIC, this crate's sans-I/O `http3::conn::Conn` in the client role to frame requests.
//!
//! | Behaviour | Test | Reaction |
//! |---|---|---|
//! | requests cancelled as soon as sent (rapid reset, CVE-2023-44487 over QUIC) | `a_rapid_reset_flood_closes_the_connection` | H3_EXCESSIVE_LOAD past the budget (burst 200, 100/s) |
//! | a few requests cancelled now and then | `a_few_cancelled_requests_are_not_punished` | none: the connection serves on |
//! | a cancelled request's handler | `a_cancelled_request_drops_its_handler` | dropped, as over HTTP/2 |
//! | a QPACK bomb: one large entry duplicated over and over on the encoder stream | `a_qpack_bomb_closes_the_connection` | H3_EXCESSIVE_LOAD (the table churn budget); other connections served |
//! | a client that never reads its response (no stream credit) | `a_response_never_read_is_reset_after_the_write_timeout` | stream H3_INTERNAL_ERROR after `write_timeout`; the connection serves on |
//! | a client that never reads our QPACK decoder stream while its table is in use and each request is answered before its end (a Stream Cancellation each) | `an_unread_qpack_decoder_stream_closes_the_connection` | H3_EXCESSIVE_LOAD once 64 KiB wait unsent (`qpack::MAX_DECODER_BACKLOG`), not a buffer grown without bound |
//! | a client that grants a large window and then acknowledges nothing | `a_client_that_acknowledges_nothing_costs_at_most_the_send_window` | the server takes at most `h3_send_window` of the response (quinn's send window), not quinn's default 10 MB |
//! | QUIC datagrams, which no HTTP/3 handler reads | `quic_datagrams_are_not_offered` | not offered (RFC 9221 §3): the client cannot send one; one sent anyway is a PROTOCOL_VIOLATION |
//! | a flood of handshakes that never complete (Initial packets from addresses that receive nothing) | `a_flood_of_handshakes_is_answered_with_retry` | past 128 handshakes under way, a client not yet validated gets a Retry (RFC 9000 §8.1.2) and is served after it; once they time out, no Retry |
//! | request bodies no handler reads, on many streams at once | `unread_request_bodies_are_bounded_by_the_connection_window` | the client's writes stall at `h2_connection_window` (1 MiB) over all the streams, as over HTTP/2 |

mod support;

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use peregrine::http3::conn::{Config as H3Config, Conn, MessageEvent, RequestPseudo};
use peregrine::http3::{Code, Role, StreamId};
use peregrine::server::{Server, ServerHandle, TlsConfig};
use peregrine::{Body, Request, Response};

/// Handlers started and handlers that ran to their end (a dropped one never does).
#[derive(Default)]
struct Counts {
    started: AtomicUsize,
    finished: AtomicUsize,
}

/// A server with `/small`, `/slow` (a handler that waits 2 s before answering) and `/large`
/// (8 MiB), whose writes time out after 500 ms without progress.
fn start(counts: Arc<Counts>) -> (ServerHandle, support::tls::TestCert) {
    let config = peregrine::server::Config {
        write_timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let large = bytes::Bytes::from(vec![b'x'; 8 << 20]);
    serve_h3(config, move |req: Request| {
        let counts = counts.clone();
        let large = large.clone();
        async move {
            match req.path() {
                "/slow" => {
                    counts.started.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    counts.finished.fetch_add(1, Ordering::SeqCst);
                    Response::new("served")
                }
                "/large" => Response::new(large),
                _ => Response::new("served"),
            }
        }
    })
}

/// A one-worker HTTP/3 (and HTTPS) server on a self-signed certificate for `localhost`.
fn serve_h3(
    config: peregrine::server::Config,
    handler: impl peregrine::Handler,
) -> (ServerHandle, support::tls::TestCert) {
    let cert = support::tls::self_signed(&["localhost"]);
    let tls = TlsConfig::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    let server = Server::bind("127.0.0.1:0")
        .tls(tls)
        .http3(true)
        .workers(1)
        .config(config)
        .spawn(handler)
        .unwrap();
    (server, cert)
}

/// A server whose HTTP/3 connections may hold `send_window` octets of response, serving one
/// response: 300 ms after the request, 32 MiB in chunks of `CHUNK`, counting in `taken` the
/// octets the server took from the body. Writes time out after 500 ms without progress.
fn start_streaming(
    send_window: u32,
    taken: Arc<AtomicUsize>,
) -> (ServerHandle, support::tls::TestCert) {
    let config = peregrine::server::Config {
        h3_send_window: send_window,
        write_timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let chunk = bytes::Bytes::from(vec![b'x'; CHUNK]);
    serve_h3(config, move |_req: Request| {
        let (taken, chunk) = (taken.clone(), chunk.clone());
        async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let mut left = 512;
            Response::new(Body::from_poll_fn(move |_cx| {
                if left == 0 {
                    return Poll::Ready(None);
                }
                left -= 1;
                taken.fetch_add(CHUNK, Ordering::SeqCst);
                Poll::Ready(Some(Ok(chunk.clone())))
            }))
        }
    })
}

/// The chunk size of `start_streaming`'s response.
const CHUNK: usize = 64 * 1024;

/// The client's receive windows, per stream and over the connection: small, so a response
/// the client does not read stalls the server soon.
const STREAM_WINDOW: u32 = 64 * 1024;
const CONNECTION_WINDOW: u32 = 256 * 1024;

/// A QUIC connection to `server` with our control stream open, and the HTTP/3 state.
async fn connect(
    server: &ServerHandle,
    cert: &support::tls::TestCert,
) -> (quinn::Endpoint, quinn::Connection, quinn::SendStream, Conn) {
    connect_to(server.local_addr(), cert).await
}

/// [`connect`] to `addr` (a relay in front of the server).
async fn connect_to(
    addr: SocketAddr,
    cert: &support::tls::TestCert,
) -> (quinn::Endpoint, quinn::Connection, quinn::SendStream, Conn) {
    connect_with_windows(addr, cert, STREAM_WINDOW, CONNECTION_WINDOW).await
}

/// A quinn client endpoint trusting `cert`, with `stream_window` octets of receive window on
/// each stream and `connection_window` over all of them.
fn client_endpoint(
    cert: &support::tls::TestCert,
    stream_window: u32,
    connection_window: u32,
) -> quinn::Endpoint {
    let tls = support::tls::client_config(&[cert], &[b"h3"]);
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls).unwrap();
    let mut endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
    let mut transport = quinn::TransportConfig::default();
    transport.stream_receive_window(quinn::VarInt::from_u32(stream_window));
    transport.receive_window(quinn::VarInt::from_u32(connection_window));
    let mut client = quinn::ClientConfig::new(Arc::new(crypto));
    client.transport_config(Arc::new(transport));
    endpoint.set_default_client_config(client);
    endpoint
}

/// [`connect`] to `addr` with the windows of [`client_endpoint`].
async fn connect_with_windows(
    addr: SocketAddr,
    cert: &support::tls::TestCert,
    stream_window: u32,
    connection_window: u32,
) -> (quinn::Endpoint, quinn::Connection, quinn::SendStream, Conn) {
    let endpoint = client_endpoint(cert, stream_window, connection_window);
    let quic = endpoint.connect(addr, "localhost").unwrap().await.unwrap();
    // No dynamic table for the server's encoder: responses decode without reading its
    // encoder stream.
    let config =
        H3Config { qpack_max_table_capacity: 0, qpack_blocked_streams: 0, ..H3Config::default() };
    let mut conn = Conn::new(Role::Client, config);
    let mut control = quic.open_uni().await.unwrap();
    let mut bytes = Vec::new();
    conn.poll_control(&mut bytes);
    control.write_all(&bytes).await.unwrap();
    (endpoint, quic, control, conn)
}

/// A GET for `path` on a new request stream, the stream's send side finished.
async fn send_get(
    quic: &quinn::Connection,
    conn: &mut Conn,
    path: &str,
) -> Result<(quinn::SendStream, quinn::RecvStream), quinn::ConnectionError> {
    let (mut send, recv) = open_get(quic, conn, path).await?;
    let _ = send.finish();
    Ok((send, recv))
}

/// A GET for `path` on a new request stream, the stream left open (the request not ended).
async fn open_get(
    quic: &quinn::Connection,
    conn: &mut Conn,
    path: &str,
) -> Result<(quinn::SendStream, quinn::RecvStream), quinn::ConnectionError> {
    let (mut send, recv) = quic.open_bi().await?;
    let id = StreamId::new(send.id().index() * 4);
    let mut req = Vec::new();
    let pseudo = RequestPseudo {
        method: b"GET",
        scheme: b"https",
        authority: b"localhost",
        path: path.as_bytes(),
    };
    conn.encode_request(id, pseudo, [], &mut req);
    // A write may fail once the connection closes under the flood.
    let _ = send.write_all(&req).await;
    Ok((send, recv))
}

/// Cancels a request as a client does (RFC 9114 §4.1.1): RESET_STREAM on the request and
/// STOP_SENDING on the response, both H3_REQUEST_CANCELLED.
fn cancel(send: &mut quinn::SendStream, recv: &mut quinn::RecvStream) {
    let code = quinn::VarInt::from_u64(u64::from(Code::H3_REQUEST_CANCELLED)).unwrap();
    let _ = send.reset(code);
    let _ = recv.stop(code);
}

/// Reads a response to its end and returns its status and body.
async fn response(conn: &mut Conn, id: StreamId, recv: &mut quinn::RecvStream) -> (u16, Vec<u8>) {
    let bytes = recv.read_to_end(1 << 20).await.unwrap();
    let mut msg = conn.message(id);
    let (mut at, mut status, mut body) = (0, 0, Vec::new());
    loop {
        let (n, event) = conn.recv_message(&mut msg, &bytes[at..], true).unwrap();
        match event {
            Some(MessageEvent::Head) => status = conn.section().status().unwrap(),
            Some(MessageEvent::Data(r)) => body.extend_from_slice(&bytes[at..][r]),
            Some(MessageEvent::End) => return (status, body),
            other => panic!("{other:?}"),
        }
        at += n;
    }
}

/// A GET of `/small` on `quic` is answered 200 `served` within 10 s.
async fn assert_served(quic: &quinn::Connection, conn: &mut Conn) {
    let (send, mut recv) = send_get(quic, conn, "/small").await.unwrap();
    let id = StreamId::new(send.id().index() * 4);
    let got = tokio::time::timeout(Duration::from_secs(10), response(conn, id, &mut recv))
        .await
        .expect("answered within 10 s");
    assert_eq!(got, (200, b"served".to_vec()));
}

/// The response on `recv` ends within 10 s, reset with H3_INTERNAL_ERROR (a write that made
/// no progress for `write_timeout`), after whatever part of it had come.
async fn assert_reset_by_write_timeout(recv: &mut quinn::RecvStream) {
    let read = tokio::time::timeout(Duration::from_secs(10), recv.read_to_end(64 << 20))
        .await
        .expect("the stalled stream ended within 10 s");
    match read {
        Err(quinn::ReadToEndError::Read(quinn::ReadError::Reset(code))) => {
            assert_eq!(u64::from(code), u64::from(Code::H3_INTERNAL_ERROR));
        }
        Ok(body) => panic!("the whole response came ({} octets): nothing stalled", body.len()),
        Err(e) => panic!("{e}"),
    }
}

/// Requests cancelled as soon as they are sent, as fast as the client can: each cancel gives
/// the stream's credit back at once, so without a budget this would cost the server a
/// handler's start per round trip forever. The connection is closed with H3_EXCESSIVE_LOAD
/// once the budget (a burst of 200) is spent, and every handler started was dropped.
#[test]
fn a_rapid_reset_flood_closes_the_connection() {
    let counts = Arc::new(Counts::default());
    let (server, cert) = start(counts.clone());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (_endpoint, quic, _control, mut conn) = connect(&server, &cert).await;
        let flood = async {
            let mut sent = 0usize;
            while let Ok((mut send, mut recv)) = send_get(&quic, &mut conn, "/slow").await {
                cancel(&mut send, &mut recv);
                sent += 1;
                assert!(sent < 100_000, "the flood was never stopped");
                // Let the packets go out now and then (a real flood paces on the network).
                if sent % 16 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            sent
        };
        let sent = tokio::time::timeout(Duration::from_secs(20), flood)
            .await
            .expect("the connection closed within 20 s");
        let reason = quic.close_reason().expect("closed");
        let quinn::ConnectionError::ApplicationClosed(close) = reason else {
            panic!("closed by {reason:?}, not by the server's HTTP/3 layer");
        };
        assert_eq!(u64::from(close.error_code), u64::from(Code::H3_EXCESSIVE_LOAD));
        // The budget's burst (200) and its refill over the flood, plus the streams in flight
        // when it closed (at most the concurrent-stream limit).
        assert!(sent > 200, "closed after {sent} requests: before the budget was spent");
    });
    // No handler of a cancelled request ran to its end (most never start: the cancel arrives
    // with the head).
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(counts.finished.load(Ordering::SeqCst), 0, "a cancelled handler ran on");
    server.shutdown();
}

/// A client that cancels a few requests (a user navigating away) keeps its connection: the
/// next request on it is served.
#[test]
fn a_few_cancelled_requests_are_not_punished() {
    let (server, cert) = start(Arc::new(Counts::default()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (_endpoint, quic, _control, mut conn) = connect(&server, &cert).await;
        for _ in 0..50 {
            let (mut send, mut recv) = send_get(&quic, &mut conn, "/slow").await.unwrap();
            cancel(&mut send, &mut recv);
        }
        assert_served(&quic, &mut conn).await;
        assert!(quic.close_reason().is_none(), "closed: {:?}", quic.close_reason());
    });
    server.shutdown();
}

/// A request cancelled while its handler runs (STOP_SENDING on the response): the handler is
/// dropped rather than run to its end for nobody, as over HTTP/2.
#[test]
fn a_cancelled_request_drops_its_handler() {
    let counts = Arc::new(Counts::default());
    let (server, cert) = start(counts.clone());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (_endpoint, quic, _control, mut conn) = connect(&server, &cert).await;
        let (_send, mut recv) = send_get(&quic, &mut conn, "/slow").await.unwrap();
        // The handler is running (it waits 2 s) before the client gives up.
        let begun = async {
            while counts.started.load(Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(5), begun).await.expect("handler started");
        let code = quinn::VarInt::from_u64(u64::from(Code::H3_REQUEST_CANCELLED)).unwrap();
        recv.stop(code).unwrap();
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert_eq!(counts.finished.load(Ordering::SeqCst), 0, "the handler ran on");
        // The connection serves on.
        assert_served(&quic, &mut conn).await;
    });
    server.shutdown();
}

/// A client that asks for 8 MiB and never reads: QUIC flow control stops the server after the
/// client's window (64 KiB), its buffered output stays bounded, and after `write_timeout`
/// (500 ms here) without progress the response is reset (H3_INTERNAL_ERROR) and its memory
/// freed; the connection goes on serving the client's other requests.
#[test]
fn a_response_never_read_is_reset_after_the_write_timeout() {
    let (server, cert) = start(Arc::new(Counts::default()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (_endpoint, quic, _control, mut conn) = connect(&server, &cert).await;
        let (_send, mut stalled) = send_get(&quic, &mut conn, "/large").await.unwrap();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        // Another request on the same connection is served meanwhile.
        assert_served(&quic, &mut conn).await;
        // The stalled response: what fitted the window, then the reset.
        assert_reset_by_write_timeout(&mut stalled).await;
    });
    server.shutdown();
}

/// The QPACK bomb (RFC 9204 §7.1.2 warns of it): the client's encoder stream sets the table to
/// 4 KiB, inserts a 3,000-octet entry and then duplicates it with one-octet instructions, each
/// of which would copy 3,000 octets. The server's decoder earns insertion credit only per octet
/// received, so the connection is closed with H3_EXCESSIVE_LOAD within the first few hundred
/// octets of duplicates, while another connection is served as usual.
#[test]
fn a_qpack_bomb_closes_the_connection() {
    let (server, cert) = start(Arc::new(Counts::default()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (_endpoint, quic, _control, _conn) = connect(&server, &cert).await;
        let mut encoder = quic.open_uni().await.unwrap();
        // Stream type 0x02 (encoder), Set Dynamic Table Capacity 4096 (§4.3.1: 001 + 5-bit
        // prefix integer), Insert with Literal Name "x" (§4.3.3: 01, H=0, 5-bit length) and a
        // 3,000-octet value (H=0, 7-bit prefix length).
        let mut bomb = vec![0x02, 0x3f, 0xe1, 0x1f, 0x41, b'x', 0x7f, 0xb9, 0x16];
        bomb.resize(bomb.len() + 3000, b'a');
        // Then Duplicate of relative index 0 (§4.3.4: 000 + 5-bit prefix), 100,000 times: 300 MB
        // of copying for 100 KB sent, were it not bounded.
        bomb.resize(bomb.len() + 100_000, 0x00);
        let _ = encoder.write_all(&bomb).await;
        let closed = tokio::time::timeout(Duration::from_secs(10), quic.closed())
            .await
            .expect("closed within 10 s");
        let quinn::ConnectionError::ApplicationClosed(close) = closed else {
            panic!("closed by {closed:?}, not by the server's HTTP/3 layer");
        };
        assert_eq!(u64::from(close.error_code), u64::from(Code::H3_EXCESSIVE_LOAD), "{close:?}");
        assert_eq!(&close.reason[..], b"qpack: table churn budget exceeded");
        // Another client is served.
        let (_endpoint, quic, _control, mut conn) = connect(&server, &cert).await;
        assert_served(&quic, &mut conn).await;
    });
    server.shutdown();
}

/// Request bodies that no handler reads yet, sent on 8 streams at once: each stream may hold
/// its window (`h2_stream_window`, 256 KiB), but all of them together only the connection's
/// (`h2_connection_window`, 1 MiB, as over HTTP/2; QUIC's connection-level MAX_DATA, RFC 9000
/// §4.1). The client's writes stall there; with no connection window they would stall only at
/// 8 x 256 KiB, and a client could make the server hold 100 streams' windows (25 MiB) per
/// connection.
#[test]
fn unread_request_bodies_are_bounded_by_the_connection_window() {
    const BODY: usize = 320 * 1024;
    let (server, cert) = start(Arc::new(Counts::default()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (_endpoint, quic, _control, mut conn) = connect(&server, &cert).await;
        let sent = Arc::new(AtomicUsize::new(0));
        let mut writers = Vec::new();
        for _ in 0..8 {
            let (mut send, recv) = quic.open_bi().await.unwrap();
            let id = StreamId::new(send.id().index() * 4);
            let length = BODY.to_string();
            let pseudo = RequestPseudo {
                method: b"POST",
                scheme: b"https",
                authority: b"localhost",
                path: b"/slow",
            };
            let mut head = Vec::new();
            conn.encode_request(
                id,
                pseudo,
                [(&b"content-length"[..], length.as_bytes())],
                &mut head,
            );
            Conn::encode_data_head(BODY, &mut head);
            send.write_all(&head).await.unwrap();
            let sent = sent.clone();
            // `/slow` waits 2 s before answering and never reads the body.
            writers.push(async move {
                let chunk = vec![b'b'; 16 * 1024];
                let mut left = BODY;
                while left > 0 {
                    let n = send.write(&chunk[..left.min(chunk.len())]).await.unwrap();
                    sent.fetch_add(n, Ordering::SeqCst);
                    left -= n;
                }
                drop(recv);
            });
        }
        let all = futures_util::future::join_all(writers);
        let stalled = tokio::time::timeout(Duration::from_millis(1500), all).await.is_err();
        let total = sent.load(Ordering::SeqCst);
        assert!(stalled, "all {total} octets were taken: nothing stalled");
        // The connection window, plus what the server read ahead into each stream's body
        // queue (a few packets' worth).
        assert!(
            (768 << 10..=1280 << 10).contains(&total),
            "{total} octets taken before the writes stalled, against a 1 MiB window"
        );
    });
    server.shutdown();
}

/// A client whose encoder gave its table a capacity (so its sections may refer to it) and that
/// never reads our QPACK decoder stream, while each of its requests is answered before its end:
/// the server stops reading each (STOP_SENDING H3_NO_ERROR) and queues a Stream Cancellation
/// (RFC 9204 §4.4.2). Once the stream's window (4 KiB here) is full, they wait in the decoder,
/// and past `MAX_DECODER_BACKLOG` (64 KiB) the connection is closed with H3_EXCESSIVE_LOAD:
/// before, the buffer grew by a few octets a request for as long as the connection lived.
#[test]
fn an_unread_qpack_decoder_stream_closes_the_connection() {
    let (server, cert) = start(Arc::new(Counts::default()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (_endpoint, quic, _control, mut conn) =
            connect_with_windows(server.local_addr(), &cert, 4096, CONNECTION_WINDOW).await;
        // Our encoder stream: its type, then Set Dynamic Table Capacity 100 (§4.3.1).
        let mut encoder = quic.open_uni().await.unwrap();
        encoder.write_all(&[0x02, 0x3f, 0x45]).await.unwrap();
        let flood = async {
            let mut sent = 0usize;
            loop {
                // 32 at a time; each stream's request is never finished (the send side is
                // kept until its response is read).
                let mut batch = Vec::new();
                for _ in 0..32 {
                    let Ok((send, mut recv)) = open_get(&quic, &mut conn, "/small").await else {
                        return sent;
                    };
                    batch.push(async move {
                        let _ = recv.read_to_end(1 << 16).await;
                        drop(send);
                    });
                }
                futures_util::future::join_all(batch).await;
                sent += 32;
                assert!(sent < 200_000, "the connection was never closed");
            }
        };
        let sent = tokio::time::timeout(Duration::from_secs(60), flood)
            .await
            .expect("the connection closed within 60 s");
        let reason = quic.close_reason().expect("closed");
        let quinn::ConnectionError::ApplicationClosed(close) = reason else {
            panic!("closed by {reason:?}, not by the server's HTTP/3 layer");
        };
        assert_eq!(u64::from(close.error_code), u64::from(Code::H3_EXCESSIVE_LOAD));
        // The window and the budget: at most 5 octets a cancellation.
        assert!(sent > (4096 + 65536) / 5, "closed after {sent} requests");
    });
    server.shutdown();
}

/// A client that grants 64 MiB of credit and then acknowledges nothing (its runtime stops, so
/// its socket is not read): QUIC's flow control would let the server send 32 MiB, and quinn
/// keeps every octet until it is acknowledged. The server takes at most its `h3_send_window`
/// (512 KiB here) from the handler's body; with quinn's default it would take 10 MB.
#[test]
fn a_client_that_acknowledges_nothing_costs_at_most_the_send_window() {
    const WINDOW: usize = 512 * 1024;
    let taken = Arc::new(AtomicUsize::new(0));
    let (server, cert) = start_streaming(WINDOW as u32, taken.clone());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (_endpoint, quic, _control, mut conn) =
            connect_with_windows(server.local_addr(), &cert, 64 << 20, 64 << 20).await;
        let (_send, mut recv) = send_get(&quic, &mut conn, "/stream").await.unwrap();
        // The request goes out; the handler answers 300 ms after it arrives.
        tokio::time::sleep(Duration::from_millis(100)).await;
        // The client's only thread blocks: nothing is read from its socket or acknowledged.
        std::thread::sleep(Duration::from_secs(2));
        let held = taken.load(Ordering::SeqCst);
        // The window, plus the chunk the server holds while quinn has no room for it.
        assert!(
            (WINDOW / 2..=WINDOW + 2 * CHUNK).contains(&held),
            "the server took {held} octets of the response against a {WINDOW}-octet window"
        );
        // The stalled response was reset after `write_timeout`, which frees what it held.
        assert_reset_by_write_timeout(&mut recv).await;
        quic.close(0u32.into(), b"done");
    });
    server.shutdown();
}

/// RFC 9221 §3: the server reads no QUIC datagrams (HTTP/3 without RFC 9297's datagrams), so it
/// does not offer them, and a client cannot make a connection keep datagrams nothing reads
/// (quinn's default offers them and keeps up to 1.25 MB per connection). The connection serves
/// on as usual.
#[test]
fn quic_datagrams_are_not_offered() {
    let (server, cert) = start(Arc::new(Counts::default()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (_endpoint, quic, _control, mut conn) = connect(&server, &cert).await;
        assert_eq!(quic.max_datagram_size(), None);
        let sent = quic.send_datagram(bytes::Bytes::from_static(b"unread"));
        assert!(matches!(sent, Err(quinn::SendDatagramError::UnsupportedByPeer)), "{sent:?}");
        assert_served(&quic, &mut conn).await;
    });
    server.shutdown();
}

/// A UDP relay on 127.0.0.1 between one client and `server`, on two threads: the client's
/// datagrams go to the server and, unless `drop_replies`, the server's back to the client. It
/// notes a Retry from the server: a long header of type 3 (RFC 9000 §17.2.5), whose first
/// four bits header protection leaves clear (RFC 9001 §5.4.1).
struct Relay {
    addr: SocketAddr,
    saw_retry: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Relay {
    fn new(server: SocketAddr, drop_replies: bool) -> Relay {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        back.connect(server).unwrap();
        for socket in [&front, &back] {
            socket.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        }
        let relay = Relay {
            addr: front.local_addr().unwrap(),
            saw_retry: Arc::new(AtomicBool::new(false)),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let client = Arc::new(Mutex::new(None::<SocketAddr>));
        let (front2, back2) = (front.try_clone().unwrap(), back.try_clone().unwrap());
        let (stop, client2) = (relay.stop.clone(), client.clone());
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            while !stop.load(Ordering::SeqCst) {
                if let Ok((n, from)) = front2.recv_from(&mut buf) {
                    *client2.lock().unwrap() = Some(from);
                    let _ = back2.send(&buf[..n]);
                }
            }
        });
        let (stop, saw_retry) = (relay.stop.clone(), relay.saw_retry.clone());
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            while !stop.load(Ordering::SeqCst) {
                let Ok(n) = back.recv(&mut buf) else { continue };
                if n > 0 && buf[0] & 0xf0 == 0xf0 {
                    saw_retry.store(true, Ordering::SeqCst);
                }
                let to = *client.lock().unwrap();
                if let (false, Some(to)) = (drop_replies, to) {
                    let _ = front.send_to(&buf[..n], to);
                }
            }
        });
        relay
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Handshakes that never complete, as from Initial packets with spoofed source addresses: 160
/// connection attempts whose every reply is dropped, so the server waits on each until its
/// `tls_handshake_timeout` (3 s here). Past 128 under way, a client whose address is not yet
/// validated gets a Retry and is served once it proves its address; once the stalled ones
/// time out, a new client is served without one.
#[test]
fn a_flood_of_handshakes_is_answered_with_retry() {
    let config = peregrine::server::Config {
        tls_handshake_timeout: Duration::from_secs(3),
        ..Default::default()
    };
    let (server, cert) = serve_h3(config, |_req: Request| async { "served" });
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let stall = Relay::new(server.local_addr(), true);
        let flood = client_endpoint(&cert, STREAM_WINDOW, CONNECTION_WINDOW);
        // Ten at a time, so that no burst overflows a socket's receive buffer.
        let mut pending = Vec::new();
        for _ in 0..16 {
            pending.extend((0..10).map(|_| flood.connect(stall.addr, "localhost").unwrap()));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The Initials have gone out and been taken; no reply comes back.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let watched = Relay::new(server.local_addr(), false);
        let (_endpoint, quic, _control, mut conn) = connect_to(watched.addr, &cert).await;
        assert!(watched.saw_retry.load(Ordering::SeqCst), "no Retry with 160 handshakes under way");
        assert_served(&quic, &mut conn).await;
        // The stalled handshakes time out; a new client needs no Retry.
        tokio::time::sleep(Duration::from_secs(4)).await;
        let calm = Relay::new(server.local_addr(), false);
        let (_endpoint, quic, _control, mut conn) = connect_to(calm.addr, &cert).await;
        assert!(!calm.saw_retry.load(Ordering::SeqCst), "a Retry with no handshake under way");
        assert_served(&quic, &mut conn).await;
        drop(pending);
    });
    server.shutdown();
}
