//! Zero allocations per request: a counting global allocator counts the server's allocations
//! over thousands of keep-alive requests after a warm-up.
//!
//! Only allocations made on the server's worker threads are counted (a thread-local flag set by
//! the first request the worker handles), so the test client's own allocations do not count.

use std::io::{Read, Write};
use std::net::TcpStream;

use http::header::{self, HeaderValue};
use peregrine::server::ProxyProtocol;
use peregrine::{Request, Response, Server};

#[path = "support/counting.rs"]
mod counting;

use counting::mark_server_thread;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

async fn plaintext(req: Request) -> Response {
    mark_server_thread();
    if req.path() == "/plaintext" {
        Response::new("Hello, World!")
            .with_header(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))
            .with_header(header::SERVER, HeaderValue::from_static("peregrine"))
    } else {
        // Allocates on purpose: shows the counter sees the server's allocations.
        Response::new(format!("{} allocates", req.path()))
    }
}

/// Sends `batch` (`per_batch` requests) and reads until `per_batch` responses arrived.
fn round_trip(stream: &mut TcpStream, batch: &[u8], per_batch: usize, buf: &mut [u8]) {
    stream.write_all(batch).unwrap();
    let mut seen = 0;
    while seen < per_batch {
        let n = stream.read(buf).unwrap();
        assert!(n > 0, "server closed");
        seen += buf[..n].windows(13).filter(|w| w == b"Hello, World!").count();
    }
}

#[test]
fn steady_state_requests_allocate_nothing() {
    let server = Server::bind("127.0.0.1:0").workers(1).spawn(plaintext).unwrap();
    requests_allocate_nothing(&server, b"");
    server.shutdown_now();
    server.join().unwrap();

    // With metrics counted, a health endpoint checked, and the client named by a PROXY header
    // (one `Arc` per connection, cloned per request), requests still allocate nothing. (In the
    // same test: the counter counts every server thread of the process.)
    let proxy = ProxyProtocol::new().trust("127.0.0.1".parse().unwrap());
    let server = Server::bind("127.0.0.1:0")
        .workers(1)
        .metrics("/metrics")
        .health("/healthz")
        .proxy_protocol(proxy)
        .spawn(plaintext)
        .unwrap();
    requests_allocate_nothing(&server, b"PROXY TCP4 203.0.113.7 192.0.2.1 40000 80\r\n");
    server.shutdown_now();
    server.join().unwrap();

    // Fixed answers (the prepared HTTP/1.1 path, which calls no handler: one request to the
    // handler first marks the worker thread as the server's).
    let hello = Response::new("Hello, World!")
        .with_header(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    let server =
        Server::bind("127.0.0.1:0").workers(1).fixed("/plaintext", hello).spawn(plaintext).unwrap();
    let mut mark = TcpStream::connect(server.local_addr()).unwrap();
    mark.write_all(b"GET /mark HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    assert!(mark.read(&mut [0u8; 1024]).unwrap() > 0);
    requests_allocate_nothing(&server, b"");
}

fn requests_allocate_nothing(server: &peregrine::ServerHandle, preface: &[u8]) {
    let mut stream = TcpStream::connect(server.local_addr()).unwrap();
    stream.set_nodelay(true).unwrap();
    stream.write_all(preface).unwrap();
    let one = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\nAccept: text/plain\r\n\r\n";
    let sixteen: Vec<u8> = one.repeat(16);
    let mut buf = vec![0u8; 64 * 1024];

    // Warm up: buffers, pool, timers, Date cache.
    for _ in 0..200 {
        round_trip(&mut stream, one, 1, &mut buf);
        round_trip(&mut stream, &sixteen, 16, &mut buf);
    }

    let before = counting::allocs();
    let mut requests = 0;
    for _ in 0..2000 {
        round_trip(&mut stream, one, 1, &mut buf);
        round_trip(&mut stream, &sixteen, 16, &mut buf);
        requests += 17;
    }
    let allocs = counting::allocs() - before;
    assert_eq!(allocs, 0, "{allocs} allocations over {requests} requests");

    // The counter is live: a handler that allocates is seen.
    let before = counting::allocs();
    stream.write_all(b"GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let n = stream.read(&mut buf).unwrap();
    assert!(n > 0);
    assert!(counting::allocs() > before, "the counter sees server allocations");
}
