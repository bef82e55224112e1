//! Timeouts and the connection limit.

mod support;

use std::time::{Duration, Instant};

use peregrine::server::Config;
use support::{RawClient, app, get, spawn_with, test_config};

#[test]
fn slowloris_is_closed_by_the_header_timeout() {
    let config = Config { header_read_timeout: Duration::from_millis(300), ..test_config() };
    let server = spawn_with(config, app);
    let mut c = RawClient::connect(server.local_addr());
    let start = Instant::now();
    // One byte every 50 ms: the head would take seconds to complete.
    let head =
        b"GET / HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let mut closed = false;
    for &b in head.iter() {
        if c.try_send(&[b]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        if start.elapsed() > Duration::from_secs(2) {
            break;
        }
    }
    assert!(closed || c.closed_within(Duration::from_secs(2)), "slowloris connection still open");
    assert!(c.buffered().is_empty(), "no response to an incomplete head");
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn silent_connection_is_closed_by_the_header_timeout() {
    let config = Config { header_read_timeout: Duration::from_millis(200), ..test_config() };
    let server = spawn_with(config, app);
    let mut c = RawClient::connect(server.local_addr());
    assert!(c.closed_within(Duration::from_secs(2)));
}

#[test]
fn idle_keep_alive_connection_is_closed() {
    let config = Config { keep_alive_timeout: Duration::from_millis(200), ..test_config() };
    let server = spawn_with(config, app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/"));
    assert_eq!(c.response().status, 200);
    let start = Instant::now();
    assert!(c.closed_within(Duration::from_secs(2)));
    assert!(start.elapsed() >= Duration::from_millis(150));
}

#[test]
fn keep_alive_timer_restarts_with_each_request() {
    let config = Config { keep_alive_timeout: Duration::from_millis(300), ..test_config() };
    let server = spawn_with(config, app);
    let mut c = RawClient::connect(server.local_addr());
    // Eight requests 100 ms apart: 800 ms in all, never 300 ms idle.
    for _ in 0..8 {
        c.send(&get("/"));
        assert_eq!(c.response().status, 200);
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Regression: at the connection limit, new clients got 503 for as long as idle keep-alive
/// connections lasted (75 s). The longest-idle one is closed to admit the new one now.
#[test]
fn at_the_limit_the_longest_idle_connection_makes_room() {
    let config = Config { max_connections: 2, ..test_config() };
    let server = spawn_with(config, app);
    let mut a = RawClient::connect(server.local_addr());
    let mut b = RawClient::connect(server.local_addr());
    for c in [&mut a, &mut b] {
        c.send(&get("/"));
        assert_eq!(c.response().status, 200);
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/"));
    assert_eq!(c.response().status, 200);
    // `a` waited longest: it was closed; `b` lives on.
    assert!(a.closed_within(Duration::from_secs(2)));
    b.send(&get("/"));
    assert_eq!(b.response().status, 200);
}

#[test]
fn at_the_limit_with_every_connection_busy_new_ones_get_503() {
    let config = Config { max_connections: 2, ..test_config() };
    let server = spawn_with(config, app);
    let mut a = RawClient::connect(server.local_addr());
    let mut b = RawClient::connect(server.local_addr());
    for c in [&mut a, &mut b] {
        c.send(&get("/slow?1500"));
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut refused = RawClient::connect(server.local_addr());
    let res = refused.response();
    assert_eq!(res.status, 503);
    assert_eq!(res.header("connection"), Some("close"));
    assert!(refused.closed_within(Duration::from_secs(2)));
    // The busy ones finish; then idle, they make room for the next.
    for c in [&mut a, &mut b] {
        assert_eq!(c.response().body, b"slept");
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut c = loop {
        let mut c = RawClient::connect(server.local_addr());
        c.send(&get("/"));
        match c.response_to(false) {
            Some(res) if res.status == 200 => break c,
            other => {
                assert!(Instant::now() < deadline, "never admitted: {other:?}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    c.send(&get("/"));
    assert_eq!(c.response().status, 200);
}

/// A browser's largest cookies (~8 KB in one `Cookie` field) next to a long target and
/// Referer fit the default head limit (32 KiB, as Kestrel's total and about nginx's
/// `large_client_header_buffers 4 8k`); a head past the limit is still 431.
#[test]
fn an_8_kb_cookie_fits_the_default_head_limit() {
    let server = support::spawn(app);
    let cookie: String = (0..100).map(|i| format!("c{i:03}={}; ", "v".repeat(73))).collect();
    assert!(cookie.len() >= 8_000, "{}", cookie.len());
    let long = "p".repeat(4_000);
    struct Case {
        name: &'static str,
        extra: String,
        expect: u16,
    }
    let cases = [
        Case { name: "8 KB cookie", extra: format!("Cookie: {cookie}\r\n"), expect: 200 },
        Case {
            name: "8 KB cookie, 4 KB referer, 4 KB user-agent",
            extra: format!(
                "Cookie: {cookie}\r\nReferer: http://t/{long}\r\nUser-Agent: {long}\r\n"
            ),
            expect: 200,
        },
        Case {
            name: "four 8 KB cookies",
            extra: format!("Cookie: {cookie}\r\n").repeat(4),
            expect: 200,
        },
        Case { name: "past 32 KiB", extra: format!("Cookie: {cookie}\r\n").repeat(5), expect: 431 },
    ];
    for c in cases {
        let mut client = RawClient::connect(server.local_addr());
        let req = format!("GET / HTTP/1.1\r\nHost: t\r\n{}\r\n", c.extra);
        let _ = client.try_send(req.as_bytes());
        assert_eq!(client.response().status, c.expect, "{}", c.name);
    }
}

/// A client that stops reading: once the server's writes make no progress for
/// `write_timeout`, the connection is closed, whether the body is one buffer or a stream.
#[test]
fn a_client_that_stops_reading_is_closed_by_the_write_timeout() {
    use peregrine::{Body, Request, Response};
    const BIG: usize = 64 << 20;
    async fn big(req: Request) -> Response {
        if req.path() == "/stream" {
            // Endless: only the write timeout ends it.
            let chunk = bytes::Bytes::from(vec![b's'; 64 << 10]);
            Response::new(Body::from_poll_fn(move |_| {
                std::task::Poll::Ready(Some(Ok(chunk.clone())))
            }))
        } else {
            Response::new(vec![b'x'; BIG])
        }
    }
    let config = Config { write_timeout: Duration::from_millis(300), ..test_config() };
    let server = spawn_with(config, big);
    for path in ["/", "/stream"] {
        let mut c = RawClient::connect(server.local_addr());
        c.send(&get(path));
        // Far longer than the timeout, reading nothing.
        std::thread::sleep(Duration::from_millis(1500));
        let start = Instant::now();
        assert!(c.closed_within(Duration::from_secs(5)), "{path}: still open");
        // What the socket buffers held came at once; no more was written after the stall.
        assert!(start.elapsed() < Duration::from_secs(2), "{path}: {:?}", start.elapsed());
        assert!(c.buffered().len() < BIG, "{path}: {} bytes", c.buffered().len());
    }
}
