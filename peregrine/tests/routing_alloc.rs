//! Zero allocations per request through the router: a counting global allocator counts the
//! server's allocations over thousands of keep-alive requests after a warm-up, with requests
//! that hit a static route, a parameter route (the handler reads its parameter), a nested
//! route, `HEAD` via `GET`, a 405 with `Allow`, the router's `OPTIONS` answer and the fallback.
//!
//! Only allocations on the server's worker thread are counted (a thread-local flag set by the
//! first request the worker handles), so the test client's own allocations do not count.

use std::io::{Read, Write};
use std::net::TcpStream;

use http::StatusCode;
use http::header::{self, HeaderValue};
use peregrine::routing::get;
use peregrine::{Request, Response, Router, Server};

#[path = "support/counting.rs"]
mod counting;

use counting::mark_server_thread;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

async fn plaintext(_req: Request) -> Response {
    mark_server_thread();
    Response::new("Hello, World!")
        .with_header(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))
}

async fn user(req: Request) -> Response {
    mark_server_thread();
    // Reading parameters, raw and decoded (no `%`: borrowed), allocates nothing.
    let ok = req.param("id") == Some("42")
        && req.params().len() == 1
        && req.param_decoded("id").is_ok_and(|v| v == "42")
        && req.matched_route() == Some("/users/{id}");
    if ok { Response::new("user ok") } else { Response::new(format!("bad {:?}", req.param("id"))) }
}

async fn item(req: Request) -> Response {
    mark_server_thread();
    let ok = req.param("v") == Some("v1") && req.param("id") == Some("9");
    if ok { Response::new("item ok") } else { Response::new(format!("bad {}", req.path())) }
}

fn router() -> Router {
    let api = Router::new().route("/items/{id}", get(item));
    Router::new()
        .route("/plaintext", get(plaintext))
        .route("/users/new", get(plaintext))
        .route("/users/{id}", get(user).put(plaintext))
        .route("/files/{*path}", get(plaintext))
        .nest("/api/{v}", api)
        .fallback(|_req: Request| async {
            mark_server_thread();
            (StatusCode::NOT_FOUND, "no such thing")
        })
}

/// Sends `batch` and reads until `per_batch` responses arrived (counted by status line).
fn round_trip(stream: &mut TcpStream, batch: &[u8], per_batch: usize, buf: &mut [u8]) {
    stream.write_all(batch).unwrap();
    let mut seen = 0;
    while seen < per_batch {
        let n = stream.read(buf).unwrap();
        assert!(n > 0, "server closed");
        seen += buf[..n].windows(9).filter(|w| w == b"HTTP/1.1 ").count();
        assert!(
            !buf[..n].windows(4).any(|w| w == b"bad "),
            "a handler saw wrong parameters: {}",
            String::from_utf8_lossy(&buf[..n])
        );
    }
}

#[test]
fn steady_state_routed_requests_allocate_nothing() {
    let server = Server::bind("127.0.0.1:0").workers(1).spawn(router()).unwrap();
    let mut stream = TcpStream::connect(server.local_addr()).unwrap();
    stream.set_nodelay(true).unwrap();
    let requests: [&[u8]; 8] = [
        b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /users/42 HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"HEAD /users/42 HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /api/v1/items/9?x=y HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /files/a/b/c HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"DELETE /users/42 HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"OPTIONS /users/42 HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /nothing/here HTTP/1.1\r\nHost: localhost\r\n\r\n",
    ];
    let batch: Vec<u8> = requests.concat();
    let mut buf = vec![0u8; 64 * 1024];

    // Warm up: buffers, pool, timers, Date cache, the worker's `Allow` values.
    for _ in 0..200 {
        for one in requests {
            round_trip(&mut stream, one, 1, &mut buf);
        }
        round_trip(&mut stream, &batch, requests.len(), &mut buf);
    }

    let before = counting::allocs();
    let mut count = 0;
    for _ in 0..500 {
        for one in requests {
            round_trip(&mut stream, one, 1, &mut buf);
        }
        round_trip(&mut stream, &batch, requests.len(), &mut buf);
        count += 2 * requests.len();
    }
    let allocs = counting::allocs() - before;
    assert_eq!(allocs, 0, "{allocs} allocations over {count} routed requests");

    // The counter is live: a handler that allocates is seen.
    let before = counting::allocs();
    stream.write_all(b"GET /users/7 HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let n = stream.read(&mut buf).unwrap();
    assert!(buf[..n].ends_with(b"bad Some(\"7\")"), "{}", String::from_utf8_lossy(&buf[..n]));
    assert!(counting::allocs() > before, "the counter sees server allocations");
}
