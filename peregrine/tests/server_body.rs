//! Request bodies: Content-Length and chunked, 100-continue, size limit, drain, data rate.

mod support;

use std::time::Duration;

use peregrine::server::Config;
use support::{RawClient, app, get, spawn, spawn_with, test_config};

#[test]
fn content_length_body_reaches_the_handler() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    let body = vec![b'x'; 100_000];
    let mut req =
        format!("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n", body.len())
            .into_bytes();
    req.extend_from_slice(&body);
    c.send(&req);
    let res = c.response();
    assert_eq!(res.status, 200);
    assert_eq!(res.body, body);
    c.send(&get("/"));
    assert_eq!(c.response().body, b"hello");
}

#[test]
fn chunked_body_reaches_the_handler() {
    // RFC 9112 §7.1: chunk sizes in hex, extensions ignored, trailer section allowed.
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
          5\r\nhello\r\n1;ext=1\r\n,\r\nA\r\n 012345678\r\n0\r\nX-Trailer: t\r\n\r\n",
    );
    let res = c.response();
    assert_eq!(res.status, 200);
    assert_eq!(res.body, b"hello, 012345678");
    c.send(&get("/"));
    assert_eq!(c.response().body, b"hello");
}

#[test]
fn chunked_trailers_reach_the_handler_apart_from_the_headers() {
    // RFC 9112 §7.1.2: trailer fields are kept (not lost) and not merged into the header
    // section (RFC 9110 §6.5.1); a body without trailers has none; the next request on the
    // connection starts without the previous one's.
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    let req = b"POST /trailers HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
                5\r\nhello\r\n0\r\nGrpc-Status: 0\r\nX-Sum:  a\tb \r\nx-sum: c\r\n\r\n";
    let want = "5\ngrpc-status=0\nx-sum=a\tb\nx-sum=c\n";
    c.send(req);
    assert_eq!(String::from_utf8(c.response().body).unwrap(), want);
    // Split at every byte: trailers cross reads.
    for i in 1..req.len() {
        c.send(&req[..i]);
        std::thread::sleep(Duration::from_millis(1));
        c.send(&req[i..]);
        assert_eq!(String::from_utf8(c.response().body).unwrap(), want, "split at {i}");
    }
    c.send(
        b"POST /trailers HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
          2\r\nhi\r\n0\r\n\r\n",
    );
    assert_eq!(c.response().body, b"2\n");
    c.send(b"POST /trailers HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc");
    assert_eq!(c.response().body, b"3\n");
}

#[test]
fn chunked_body_split_at_every_byte() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    let req = b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
                3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
    for i in 1..req.len() {
        c.send(&req[..i]);
        std::thread::sleep(Duration::from_millis(1));
        c.send(&req[i..]);
        assert_eq!(c.response().body, b"abcde", "split at {i}");
    }
}

#[test]
fn expect_100_continue_sent_when_the_handler_reads() {
    // RFC 9110 §10.1.1: 100 only once the body is wanted.
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
    let interim = c.response_to(true).unwrap();
    assert_eq!(interim.status, 100);
    c.send(b"ping");
    let res = c.response();
    assert_eq!(res.status, 200);
    assert_eq!(res.body, b"ping");
}

#[test]
fn expect_100_not_sent_when_the_handler_ignores_the_body() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
    let res = c.response();
    assert_eq!(res.status, 200, "final response without 100 first");
    // The body may still come; the server does not wait for it.
    assert_eq!(res.header("connection"), Some("close"));
    assert!(c.closed_within(Duration::from_secs(3)));
}

#[test]
fn declared_body_over_the_limit_is_413() {
    let config = Config { max_body_bytes: 1000, ..test_config() };
    let server = spawn_with(config, app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1001\r\n\r\n");
    let res = c.response();
    assert_eq!(res.status, 413);
    assert_eq!(res.header("connection"), Some("close"));
    assert!(c.closed_within(Duration::from_secs(3)));
}

#[test]
fn chunked_body_over_the_limit_is_413() {
    let config = Config { max_body_bytes: 10, ..test_config() };
    let server = spawn_with(config, app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(
        b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
          8\r\n01234567\r\n8\r\n01234567\r\n0\r\n\r\n",
    );
    let res = c.response();
    assert_eq!(res.status, 413);
    assert_eq!(res.header("connection"), Some("close"));
    assert!(c.closed_within(Duration::from_secs(3)));
}

#[test]
fn unread_body_is_drained_and_the_connection_reused() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    let mut req = b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n".to_vec();
    req.extend_from_slice(&[b'z'; 1000]);
    req.extend_from_slice(b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
    req.extend_from_slice(b"3\r\nabc\r\n0\r\n\r\n");
    req.extend_from_slice(&get("/info"));
    c.send(&req);
    for _ in 0..2 {
        let res = c.response();
        assert_eq!(res.body, b"hello");
        assert_eq!(res.header("connection"), None);
    }
    assert_eq!(c.response().body, b"GET /info - Http11");
}

#[test]
fn unread_body_over_the_drain_limit_closes() {
    let config = Config { max_drain_bytes: 100, ..test_config() };
    let server = spawn_with(config, app);
    let mut c = RawClient::connect(server.local_addr());
    let mut req = b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n".to_vec();
    req.extend_from_slice(&[b'z'; 1000]);
    c.send(&req);
    let res = c.response();
    assert_eq!(res.status, 200);
    assert_eq!(res.header("connection"), Some("close"));
    assert!(c.closed_within(Duration::from_secs(3)));
}

#[test]
fn body_slower_than_the_minimum_rate_is_408() {
    let config = Config {
        min_body_rate: 1000,
        min_body_rate_grace: Duration::from_millis(200),
        ..test_config()
    };
    let server = spawn_with(config, app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nab");
    let res = c.response();
    assert_eq!(res.status, 408);
    assert_eq!(res.header("connection"), Some("close"));
    assert!(c.closed_within(Duration::from_secs(3)));
}

#[test]
fn client_closing_mid_body_does_not_hurt_the_server() {
    let server = spawn(app);
    {
        let mut c = RawClient::connect(server.local_addr());
        c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nab");
    }
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/"));
    assert_eq!(c.response().body, b"hello");
}

/// Regression: a kept-alive request whose body had not fully arrived got its response only
/// when the body came (or after ~5 s) although the handler never read it.
#[test]
fn the_response_does_not_wait_for_an_unread_body() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n0123456789");
    c.tcp().set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let start = std::time::Instant::now();
    let res = c.response();
    assert!(start.elapsed() < Duration::from_millis(900), "waited {:?}", start.elapsed());
    assert_eq!(res.body, b"hello");
    assert_eq!(res.header("connection"), None);
    // The rest of the body arrives later; it is drained and the connection goes on.
    let mut rest = vec![b'z'; 990];
    rest.extend_from_slice(&get("/info"));
    c.send(&rest);
    assert_eq!(c.response().body, b"GET /info - Http11");
}

/// Regression: a malformed chunked body already in the buffer got `200` and then a closed
/// connection; its bytes are now checked before the response is written.
#[test]
fn a_malformed_buffered_body_gets_400_before_any_response() {
    struct Case {
        name: &'static str,
        body: &'static [u8],
    }
    let cases = [
        Case { name: "bad chunk size", body: b"zz\r\nab\r\n0\r\n\r\n" },
        Case { name: "missing CRLF after data", body: b"3\r\nabcd\r\n0\r\n\r\n" },
        Case { name: "bare LF", body: b"3\nabc\r\n0\r\n\r\n" },
        Case { name: "size overflow", body: b"11111111111111111\r\n" },
    ];
    let server = spawn(app);
    for case in cases {
        let mut c = RawClient::connect(server.local_addr());
        let mut req = b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        req.extend_from_slice(case.body);
        c.send(&req);
        let res = c.response();
        assert_eq!(res.status, 400, "{}", case.name);
        assert_eq!(res.header("connection"), Some("close"), "{}", case.name);
        assert!(c.closed_within(Duration::from_secs(3)), "{}", case.name);
    }
}

/// A chunked body that is valid so far but not complete is not waited for either.
#[test]
fn an_incomplete_chunked_body_is_answered_then_drained() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab");
    c.tcp().set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    assert_eq!(c.response().body, b"hello");
    let mut rest = b"c\r\n0\r\n\r\n".to_vec();
    rest.extend_from_slice(&get("/"));
    c.send(&rest);
    assert_eq!(c.response().body, b"hello");
}

/// A handler that reads the body from a task of its own: the connection reads for it.
#[test]
fn a_body_read_from_a_spawned_task() {
    async fn spawned(req: peregrine::Request) -> peregrine::Response {
        let body = req.into_body();
        let read = tokio::task::spawn_local(async move { body.to_bytes(1 << 20).await });
        match read.await {
            Ok(Ok(bytes)) => peregrine::Response::new(bytes),
            _ => peregrine::Response::with_status(http::StatusCode::BAD_REQUEST, "no body"),
        }
    }
    let server = spawn(spawned);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n01234");
    std::thread::sleep(Duration::from_millis(50));
    c.send(b"56789");
    assert_eq!(c.response().body, b"0123456789");
}

/// Response trailers (RFC 9110 §6.5): an HTTP/1.1 response with trailers goes chunked, its
/// trailer section after the last chunk; framing fields among them are not sent; an HTTP/1.0
/// client gets the body alone.
#[test]
fn response_trailers_go_in_the_chunked_trailer_section() {
    async fn handler(req: peregrine::Request) -> peregrine::Response {
        let mut trailers = http::HeaderMap::new();
        trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
        trailers.insert("content-length", http::HeaderValue::from_static("99"));
        match req.path() {
            "/channel" => {
                let (tx, body) = peregrine::Body::channel(2);
                tokio::task::spawn_local(async move {
                    tx.send(bytes::Bytes::from_static(b"abc")).await.unwrap();
                    tx.finish(trailers).await.unwrap();
                });
                peregrine::Response::new(body)
            }
            _ => peregrine::Response::new(peregrine::Body::from("full").with_trailers(trailers)),
        }
    }
    let server = spawn(handler);
    let mut c = RawClient::connect(server.local_addr());
    for (path, body) in [("/", &b"full"[..]), ("/channel", b"abc")] {
        c.send(&get(path));
        let res = c.response();
        assert_eq!(res.header("transfer-encoding"), Some("chunked"), "{path}");
        assert_eq!(res.header("content-length"), None, "{path}");
        assert_eq!(res.body, body, "{path}");
        assert_eq!(res.trailers, ["grpc-status: 0"], "{path}");
    }
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"GET / HTTP/1.0\r\n\r\n");
    let res = c.response();
    assert_eq!(res.body, b"full");
    assert!(res.trailers.is_empty());
}
