//! What routing adds per request, for instruction counting: serves `N` keep-alive requests
//! (pipelined 16 deep) over loopback, in one process, either with a plain handler or through a
//! [`Router`] with a few routes, so the difference between two runs is the router's cost.
//!
//! ```text
//! cargo build --release -p peregrine --example routing_cost
//! for mode in plain router; do for n in 20000 40000; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/routing_cost $mode $n 2>&1 | grep 'Collected'
//! done; done
//! ```
//! Per request: (Ir at 40,000 − Ir at 20,000) / 20,000, for each mode; the router's cost is the
//! difference between the two modes. Not a timing: timings belong in `benches/`.
//!
//! Measured (callgrind 3.19, x86-64, release, client and server together, n = 16,000 and
//! 32,000): plain 4,502 Ir/request, router 5,909: the router adds about 1,400 instructions per
//! request, of which about 380 are the route lookup (`MethodRouter::resolve`), 260 four copies
//! of the 330-byte `Request` through the type-erased call, 135 re-validating the path as UTF-8
//! (each `Request::path` call), 90 the handler's `param("id")`, the rest the erased poll, the
//! future buffers' free list and the connection loop.

use std::io::{Read, Write};
use std::net::TcpStream;

use peregrine::routing::get;
use peregrine::{Request, Router, Server, ServerHandle};

async fn hello(_req: Request) -> &'static str {
    "Hello, World!"
}

async fn user(req: Request) -> &'static str {
    // Reads its parameter, as a real handler would.
    if req.param("id").is_some() { "Hello, World!" } else { "missing" }
}

fn router() -> Router {
    Router::new()
        .route("/", get(hello))
        .route("/plaintext", get(hello))
        .route("/users/new", get(hello))
        .route("/users/{id}", get(user).put(hello))
        .route("/users/{id}/posts/{post}", get(hello))
        .route("/files/{*path}", get(hello))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "router".into());
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let server: ServerHandle = match mode.as_str() {
        "plain" => Server::bind("127.0.0.1:0").workers(1).spawn(hello),
        _ => Server::bind("127.0.0.1:0").workers(1).spawn(router()),
    }
    .expect("spawn");
    let mut stream = TcpStream::connect(server.local_addr()).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let batch = b"GET /users/42 HTTP/1.1\r\nHost: localhost\r\n\r\n".repeat(16);
    let mut buf = vec![0u8; 64 * 1024];
    for _ in 0..n / 16 {
        stream.write_all(&batch).expect("write");
        let mut seen = 0;
        while seen < 16 {
            let got = stream.read(&mut buf).expect("read");
            assert!(got > 0, "server closed");
            seen += buf[..got].windows(13).filter(|w| w == b"Hello, World!").count();
        }
    }
    server.shutdown();
    server.join().expect("join");
    println!("{mode}: {n} requests");
}
