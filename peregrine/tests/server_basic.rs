//! Keep-alive, close, HTTP/1.0, HEAD, pipelining and split reads over a real loopback socket.

mod support;

use std::time::Duration;

use support::{RawClient, app, get, spawn};

#[test]
fn keep_alive_serves_many_requests_on_one_connection() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    for _ in 0..3 {
        c.send(&get("/"));
        let res = c.response();
        assert_eq!(res.status, 200);
        assert_eq!(res.body, b"hello");
        assert_eq!(res.header("content-length"), Some("5"));
        assert!(res.header("date").is_some(), "RFC 9110 §6.6.1: Date on 2xx");
        assert_eq!(res.header("connection"), None);
    }
}

#[test]
fn handler_sees_the_client_address() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    let me = c.tcp().local_addr().unwrap();
    c.send(&get("/peer"));
    assert_eq!(String::from_utf8(c.response().body).unwrap(), format!("Some({me})"));
}

#[test]
fn connection_close_is_honoured() {
    // RFC 9112 §9.6: after a request with "close" the server closes after its response.
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let res = c.response();
    assert_eq!(res.status, 200);
    assert_eq!(res.header("connection"), Some("close"));
    assert!(c.closed_within(Duration::from_secs(2)));
}

#[test]
fn http10_closes_by_default_and_keeps_alive_on_request() {
    let server = spawn(app);
    // RFC 9112 §9.3: HTTP/1.0 without keep-alive: close after the response.
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"GET /info HTTP/1.0\r\n\r\n");
    let res = c.response();
    assert_eq!(res.body, b"GET /info - Http10");
    assert_eq!(res.header("connection"), Some("close"));
    assert!(c.closed_within(Duration::from_secs(2)));

    // RFC 9112 §9.3 / RFC 7230 §A.1.2: "Connection: keep-alive" keeps an HTTP/1.0 connection.
    let mut c = RawClient::connect(server.local_addr());
    for _ in 0..2 {
        c.send(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let res = c.response();
        assert_eq!(res.status, 200);
        assert_eq!(res.header("connection"), Some("keep-alive"));
    }
}

#[test]
fn head_has_the_get_headers_and_no_body() {
    // RFC 9110 §9.3.2: same header fields as GET, no content.
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"HEAD / HTTP/1.1\r\nHost: t\r\n\r\n");
    let res = c.head_response();
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-length"), Some("5"));
    // A body would show up ahead of this response.
    c.send(&get("/info"));
    assert_eq!(c.response().body, b"GET /info - Http11");
}

#[test]
fn pipelined_requests_answered_in_order() {
    // RFC 9112 §9.3.2: responses in the order of the requests.
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    let mut batch = Vec::new();
    for i in 0..20 {
        batch.extend_from_slice(&get(&format!("/info?{i}")));
    }
    batch.extend_from_slice(b"HEAD / HTTP/1.1\r\nHost: t\r\n\r\n");
    batch.extend_from_slice(&get("/stream"));
    c.send(&batch);
    for i in 0..20 {
        assert_eq!(c.response().body, format!("GET /info {i} Http11").as_bytes());
    }
    assert_eq!(c.head_response().header("content-length"), Some("5"));
    let res = c.response();
    assert_eq!(res.header("transfer-encoding"), Some("chunked"));
    assert_eq!(res.body, b"part1;part2;part3;");
}

#[test]
fn pipelined_slow_handler_keeps_order() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    let mut batch = get("/slow?50");
    batch.extend_from_slice(&get("/info?after"));
    c.send(&batch);
    assert_eq!(c.response().body, b"slept");
    assert_eq!(c.response().body, b"GET /info after Http11");
}

#[test]
fn split_at_every_byte_boundary() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    let mut two = b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nabcde".to_vec();
    two.extend_from_slice(b"GET /info?x HTTP/1.1\r\nHost: t\r\n\r\n");
    for i in 1..two.len() {
        c.send(&two[..i]);
        std::thread::sleep(Duration::from_millis(1));
        c.send(&two[i..]);
        assert_eq!(c.response().body, b"abcde", "split at {i}");
        assert_eq!(c.response().body, b"GET /info x Http11", "split at {i}");
    }
}

#[test]
fn streamed_response_to_http10_is_close_delimited() {
    // RFC 9112 §6.3: without chunked (unknown to HTTP/1.0) the body ends with the connection.
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let res = c.response();
    assert_eq!(res.header("connection"), Some("close"));
    assert_eq!(res.header("transfer-encoding"), None);
    assert_eq!(res.body, b"part1;part2;part3;");
}

#[test]
fn unknown_path_is_404_and_connection_lives() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/nope"));
    let res = c.response();
    assert_eq!(res.status, 404);
    assert_eq!(res.header("content-length"), Some("0"));
    c.send(&get("/"));
    assert_eq!(c.response().status, 200);
}

#[test]
fn several_workers_share_the_port() {
    let server = peregrine::Server::bind("127.0.0.1:0")
        .workers(3)
        .config(support::test_config())
        .spawn(app)
        .unwrap();
    for _ in 0..12 {
        let mut c = RawClient::connect(server.local_addr());
        c.send(&get("/"));
        assert_eq!(c.response().body, b"hello");
    }
}

#[test]
fn binding_a_port_another_server_listens_on_fails() {
    // Both servers use SO_REUSEPORT, which would let the second join the first one's group and
    // silently take a share of its connections; the second must fail to bind instead.
    let first = spawn(app);
    let err = peregrine::Server::bind(first.local_addr()).workers(2).spawn(app).err();
    assert_eq!(err.map(|e| e.kind()), Some(std::io::ErrorKind::AddrInUse));
    // A plain listener on the port is refused too.
    let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let err = peregrine::Server::bind(plain.local_addr().unwrap()).spawn(app).err();
    assert_eq!(err.map(|e| e.kind()), Some(std::io::ErrorKind::AddrInUse));
}

/// Pins when the lingering close is skipped: after a request that itself asked to close, with
/// nothing of it left unread, the server closes its socket at once instead of reading until
/// the client's FIN (as nginx's `lingering_close on`). Bytes the client sends afterwards
/// (against RFC 9112 §9.6) meet a closed socket: the reset makes the next write fail.
#[test]
fn no_lingering_after_a_request_that_asked_to_close() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let got = c.read_to_close();
    assert!(got.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&got));
    assert_eq!(late_writes(&mut c).err().map(|e| e.kind()), Some(std::io::ErrorKind::BrokenPipe));
}

/// The other side of the rule above: when the server decides to close while the client may
/// still be sending (here a body over the limit, refused with 413 before it is read), it
/// lingers, reading and dropping what comes, so the client's late bytes cause no reset that
/// could destroy the response.
#[test]
fn the_server_lingers_when_the_client_may_still_send() {
    let config = peregrine::server::Config { max_body_bytes: 1000, ..support::test_config() };
    let server = support::spawn_with(config, app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n");
    assert_eq!(c.response().status, 413);
    assert!(late_writes(&mut c).is_ok(), "the late bytes were refused: no lingering");
}

/// Two writes 50 ms apart after the server has closed its side: the second fails if the
/// first met a closed socket (which answers with a reset).
fn late_writes(c: &mut RawClient) -> std::io::Result<()> {
    std::thread::sleep(Duration::from_millis(50));
    c.try_send(&[b'x'; 512])?;
    std::thread::sleep(Duration::from_millis(50));
    c.try_send(&[b'x'; 512])
}
