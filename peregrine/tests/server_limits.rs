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

#[test]
fn connection_limit_refuses_cleanly() {
    let config = Config { max_connections: 2, ..test_config() };
    let server = spawn_with(config, app);
    let mut a = RawClient::connect(server.local_addr());
    let mut b = RawClient::connect(server.local_addr());
    for c in [&mut a, &mut b] {
        c.send(&get("/"));
        assert_eq!(c.response().status, 200);
    }
    let mut refused = RawClient::connect(server.local_addr());
    let res = refused.response();
    assert_eq!(res.status, 503);
    assert_eq!(res.header("connection"), Some("close"));
    assert!(refused.closed_within(Duration::from_secs(2)));

    // Freeing a slot lets the next connection in.
    drop(a);
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let mut c = RawClient::connect(server.local_addr());
        if let Some(res) = c.response_to(false).filter(|r| r.status == 503) {
            assert!(Instant::now() < deadline, "slot never freed: {res:?}");
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        break;
    }
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/"));
    assert_eq!(c.response().status, 200);
}
