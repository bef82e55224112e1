//! The drain: after `shutdown()` the listeners keep accepting for the grace period with every
//! response saying `Connection: close`, then close; `shutdown_now()` ends at once.

mod support;

use std::time::{Duration, Instant};

use peregrine::Request;
use peregrine::server::Config;
use support::{RawClient, get, spawn_with, test_config};

async fn app(req: Request) -> &'static str {
    if req.path() == "/slow" {
        tokio::time::sleep(Duration::from_secs(30)).await;
    }
    "ok"
}

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
    // After it: nothing listens.
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
