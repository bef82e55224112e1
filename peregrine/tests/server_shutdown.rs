//! Graceful shutdown: requests in flight complete, idle connections close, no new ones.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use peregrine::{Request, Response};
use support::{RawClient, get, spawn};

#[test]
fn requests_in_flight_at_shutdown_all_complete() {
    let started = Arc::new(AtomicUsize::new(0));
    let handler = {
        let started = started.clone();
        move |req: Request| {
            let started = started.clone();
            async move {
                if req.path() == "/slow" {
                    started.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    return Response::new("done");
                }
                Response::new("quick")
            }
        }
    };
    let server = spawn(handler);
    let addr = server.local_addr();

    // An idle kept-alive connection.
    let mut idle = RawClient::connect(addr);
    idle.send(&get("/"));
    assert_eq!(idle.response().body, b"quick");

    // Five requests in flight, plus a pipelined request behind one of them.
    let mut busy: Vec<RawClient> = (0..5).map(|_| RawClient::connect(addr)).collect();
    for (i, c) in busy.iter_mut().enumerate() {
        let mut req = get("/slow");
        if i == 0 {
            req.extend_from_slice(&get("/"));
        }
        c.send(&req);
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while started.load(Ordering::SeqCst) < 5 {
        assert!(Instant::now() < deadline, "handlers did not start");
        std::thread::sleep(Duration::from_millis(5));
    }

    server.shutdown();

    // The idle connection is closed without a response.
    assert!(idle.closed_within(Duration::from_secs(2)));
    assert!(idle.buffered().is_empty());
    // Every in-flight request completes, told that the connection closes.
    for (i, c) in busy.iter_mut().enumerate() {
        let res = c.response();
        assert_eq!(res.status, 200);
        assert_eq!(res.body, b"done");
        assert_eq!(res.header("connection"), Some("close"), "connection {i}");
        assert!(c.closed_within(Duration::from_secs(2)));
    }
    // The server's closes wait for the clients' end of stream (or the drain's deadline).
    drop(busy);
    server.join().unwrap();
    // Nothing listens any more.
    assert!(std::net::TcpStream::connect(addr).is_err());
}

#[test]
fn shutdown_deadline_bounds_a_stuck_handler() {
    let config = peregrine::server::Config {
        shutdown_timeout: Duration::from_millis(200),
        ..support::test_config()
    };
    let server = support::spawn_with(config, |_req: Request| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        "never"
    });
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/"));
    std::thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    server.shutdown();
    server.join().unwrap();
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(c.closed_within(Duration::from_secs(1)));
}
