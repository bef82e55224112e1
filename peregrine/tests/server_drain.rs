//! The drain: after `shutdown()` the listeners keep accepting for the grace period with every
//! response saying `Connection: close`, then close; `shutdown_now()` ends at once. A connection
//! the drain closes is not reset under a client slow to read: its last responses (and HTTP/2's
//! GOAWAY) all arrive.

mod support;

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use peregrine::Request;
use peregrine::http2::hpack::Encoder;
use peregrine::server::Config;
use support::h2frames::{self, DATA, GOAWAY, HEADERS, PING};
use support::{RawClient, get, spawn_with, test_config};

/// A body larger than a client that reads nothing takes in: most of it still waits in the
/// server's send queue when the server is done with the connection.
const BIG: usize = 512 * 1024;

async fn app(req: Request) -> peregrine::Response {
    use peregrine::IntoResponse;
    match req.path() {
        "/slow" => tokio::time::sleep(Duration::from_secs(30)).await,
        "/big" => return big_body().into_response(),
        _ => {}
    }
    "ok".into_response()
}

fn big_body() -> Vec<u8> {
    (0..BIG).map(|i| (i % 251) as u8).collect()
}

/// A connection whose receive buffer is as small as the kernel allows (set before the connect,
/// so the window it offers stays small): the client of a loaded machine, slow to read.
fn slow_reader(addr: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&addr.into()).unwrap();
    let stream = TcpStream::from(socket);
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// How long the slow client reads nothing: longer than the lingering close after an ordinary
/// close (`net::linger::LINGER`, 1 s).
const BUSY: Duration = Duration::from_millis(1500);

#[test]
fn the_grace_period_keeps_accepting_and_every_response_closes() {
    let config = Config { drain_grace: Duration::from_millis(800), ..test_config() };
    let server = spawn_with(config, app);
    let addr = server.local_addr();
    // A kept-alive connection opened before the drain.
    let mut before = RawClient::connect(addr);
    before.send(&get("/"));
    assert_eq!(before.response().header("connection"), None);

    let start = Instant::now();
    server.shutdown();
    std::thread::sleep(Duration::from_millis(100));
    // Within the grace period: the idle connection is still open and answered, with close.
    before.send(&get("/"));
    let res = before.response();
    assert_eq!((res.status, res.header("connection")), (200, Some("close")));
    assert!(before.closed_within(Duration::from_secs(1)));
    // New connections are accepted and answered, with close.
    let mut during = RawClient::connect(addr);
    during.send(&get("/"));
    let res = during.response();
    assert_eq!((res.status, res.header("connection")), (200, Some("close")));
    assert!(start.elapsed() < Duration::from_millis(800), "the test was too slow to tell");
    assert!(during.closed_within(Duration::from_secs(1)));
    // After it: nothing listens. (The closes waited for the clients' end of stream.)
    drop((before, during));
    server.join().unwrap();
    assert!(start.elapsed() >= Duration::from_millis(800));
    assert!(std::net::TcpStream::connect(addr).is_err());
}

#[test]
fn idle_connections_close_when_the_grace_period_ends() {
    let config = Config { drain_grace: Duration::from_millis(300), ..test_config() };
    let server = spawn_with(config, app);
    let mut idle = RawClient::connect(server.local_addr());
    idle.send(&get("/"));
    assert_eq!(idle.response().status, 200);
    let start = Instant::now();
    server.shutdown();
    assert!(idle.closed_within(Duration::from_secs(2)));
    assert!(idle.buffered().is_empty());
    assert!(start.elapsed() >= Duration::from_millis(250), "{:?}", start.elapsed());
    server.join().unwrap();
}

/// The second signal's way out: during the grace period or while a handler is stuck.
#[test]
fn shutdown_now_ends_at_once() {
    for grace in [Duration::from_secs(30), Duration::ZERO] {
        let config = Config {
            drain_grace: grace,
            shutdown_timeout: Duration::from_secs(30),
            ..test_config()
        };
        let server = spawn_with(config, app);
        let mut stuck = RawClient::connect(server.local_addr());
        stuck.send(&get("/slow"));
        std::thread::sleep(Duration::from_millis(100));
        server.shutdown();
        std::thread::sleep(Duration::from_millis(100));
        let start = Instant::now();
        server.shutdown_now();
        server.join().unwrap();
        assert!(start.elapsed() < Duration::from_secs(2), "{grace:?}: {:?}", start.elapsed());
        assert!(stuck.closed_within(Duration::from_secs(1)));
        assert!(stuck.buffered().is_empty());
    }
}

#[test]
fn stopped_resolves_once_the_workers_are_gone() {
    let server = spawn_with(test_config(), app);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let waited = rt.block_on(async {
        tokio::time::timeout(Duration::from_millis(200), server.stopped()).await.is_ok()
    });
    assert!(!waited, "stopped before any shutdown");
    server.shutdown();
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(5), server.stopped()).await.expect("stopped");
    });
    server.join().unwrap();
}

/// The drain's HTTP/2 close under a client that reads late (issue 32's soak: an h2c batch reset
/// with neither responses nor GOAWAY). The server answers the stream it accepted, sends its
/// last GOAWAY and shuts its side while most of the response still waits in its send queue;
/// the client, busy, reads nothing for a while and then sends its next request, as a client
/// that has not read the GOAWAY yet does. Had the server closed the socket by then, that
/// request would be answered with a reset, which discards the send queue: the rest of the
/// response and the GOAWAY never arrive (RFC 9113 §6.8: every stream up to the GOAWAY's last
/// stream id is answered before the close).
#[test]
fn a_drained_h2_connection_answers_a_client_slow_to_read() {
    let server = spawn_with(test_config(), app);
    let mut c = RawClient::over(slow_reader(server.local_addr()));
    // Windows wide open: only the sockets hold the response back.
    h2frames::handshake(&mut c, &[(h2frames::SETTINGS_INITIAL_WINDOW_SIZE, 1 << 30)]);
    c.send(&h2frames::window_update(0, 1 << 30));
    server.shutdown();
    // The first GOAWAY (2^31-1) and its PING. The request was on its way before them: it
    // goes before the PING's acknowledgement, so the server accepts it (RFC 9113 §6.8).
    let ping = loop {
        let f = h2frames::read(&mut c);
        if f.kind == PING {
            break f;
        }
    };
    let mut encoder = Encoder::new();
    let mut batch = Vec::new();
    let block = h2frames::request_block(&mut encoder, "GET", "/big", &[]);
    h2frames::headers_into(&mut batch, 1, &block, true, true);
    h2frames::ping_into(&mut batch, ping.payload.try_into().unwrap(), true);
    c.send(&batch);
    std::thread::sleep(BUSY);
    let block = h2frames::request_block(&mut encoder, "GET", "/big", &[]);
    let _ = c.try_send(&h2frames::headers(3, &block, true));
    let (mut body, mut ended, mut last) = (Vec::new(), false, None);
    while let Some(f) = h2frames::try_read(&mut c) {
        match f.kind {
            DATA if f.stream == 1 => {
                body.extend_from_slice(&f.payload);
                ended |= f.ends_stream();
            }
            HEADERS if f.stream == 3 => panic!("stream 3 came after the last GOAWAY"),
            GOAWAY => last = f.goaway().map(|(id, _)| id),
            _ => {}
        }
    }
    assert_eq!((body.len(), ended), (BIG, true), "the response on stream 1 was cut");
    assert!(body == big_body(), "the response's bytes differ");
    assert_eq!(last, Some(1), "no GOAWAY naming stream 1 the last");
    // The server waits for the client's end of stream (or the drain's deadline).
    drop(c);
    server.join().unwrap();
}

/// The same for an HTTP/1.1 keep-alive connection the drain closes (RFC 9112 §9.6): its last
/// response says `Connection: close`, and the close waits for the client, so the request it
/// sends next (pipelined, or sent before it read the response) does not reset the connection
/// before the response is read.
#[test]
fn a_drained_http1_connection_answers_a_client_slow_to_read() {
    let config = Config { drain_grace: Duration::from_secs(2), ..test_config() };
    let server = spawn_with(config, app);
    let mut c = RawClient::over(slow_reader(server.local_addr()));
    c.send(&get("/"));
    assert_eq!(c.response().header("connection"), None);
    server.shutdown();
    std::thread::sleep(Duration::from_millis(100));
    // Within the grace period: answered, with `Connection: close`.
    c.send(&get("/big"));
    std::thread::sleep(BUSY);
    let _ = c.try_send(&get("/"));
    // Everything until the server's end of stream (or a reset): the response, and nothing for
    // the request after it.
    let got = c.read_to_close();
    let head_len = got.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head") + 4;
    let head = String::from_utf8_lossy(&got[..head_len]).to_ascii_lowercase();
    assert!(
        head.starts_with("http/1.1 200 ") && head.contains("\r\nconnection: close\r\n"),
        "{head}"
    );
    let body = &got[head_len..];
    assert!(body == big_body(), "the response was cut: {} of {BIG} bytes", body.len());
    drop(c);
    server.join().unwrap();
}

/// An HTTP/2 connection opened during the grace period is answered like an HTTP/1.1 one (its
/// request served, then the close): its GOAWAY comes after its first request, not at once,
/// or a client that reads it before sending would have every stream refused (RFC 9113 §6.8)
/// on every connection until the listeners close. The streams sent with the first are served.
#[test]
fn an_h2_connection_opened_during_the_grace_period_is_answered() {
    let config = Config { drain_grace: Duration::from_secs(3), ..test_config() };
    let server = spawn_with(config, app);
    let addr = server.local_addr();
    server.shutdown();
    std::thread::sleep(Duration::from_millis(100));
    let mut c = RawClient::connect(addr);
    c.tcp().set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    h2frames::handshake(&mut c, &[]);
    while let Some(f) = h2frames::try_read(&mut c) {
        assert_ne!(f.kind, GOAWAY, "GOAWAY before the connection's first request");
    }
    c.tcp().set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut encoder = Encoder::new();
    let mut batch = Vec::new();
    for stream in [1, 3] {
        let block = h2frames::request_block(&mut encoder, "GET", "/", &[]);
        h2frames::headers_into(&mut batch, stream, &block, true, true);
    }
    c.send(&batch);
    let (mut bodies, mut last) = ([Vec::new(), Vec::new()], None);
    while let Some(f) = h2frames::try_read(&mut c) {
        match f.kind {
            DATA if f.stream == 1 || f.stream == 3 => {
                bodies[(f.stream / 2) as usize].extend_from_slice(&f.payload)
            }
            PING if f.flags & h2frames::ACK == 0 => {
                let mut ack = Vec::new();
                h2frames::ping_into(&mut ack, f.payload.try_into().unwrap(), true);
                let _ = c.try_send(&ack);
            }
            GOAWAY => last = f.goaway().map(|(id, _)| id),
            _ => {}
        }
        if last == Some(3) {
            break;
        }
    }
    assert_eq!(bodies, [b"ok".to_vec(), b"ok".to_vec()], "both streams answered");
    assert_eq!(last, Some(3), "the last GOAWAY names stream 3 the last");
    drop(c);
    server.join().unwrap();
}
