//! Zero allocations per request on a kept-open HTTP/2 connection with a static response: a
//! counting global allocator counts the server worker's allocations over thousands of requests
//! after a warm-up (hyper's HTTP/2 server allocates 5 per request here).
//!
//! The client is this crate's own `http2::Conn` in the client role, on the test thread, whose
//! allocations do not count (see `support/counting.rs`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use http::header::{self, HeaderValue};
use peregrine::http2::{Config, Conn, Event, HeadersKind, RequestHead, Role};
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

/// An HTTP/2 client over a blocking socket.
struct Client {
    tcp: TcpStream,
    conn: Conn,
    out: Vec<u8>,
    buf: Vec<u8>,
}

impl Client {
    fn connect(addr: std::net::SocketAddr) -> Client {
        let tcp = TcpStream::connect(addr).unwrap();
        tcp.set_nodelay(true).unwrap();
        let conn = Conn::new(Role::Client, Config::default(), Instant::now());
        Client { tcp, conn, out: Vec::new(), buf: vec![0; 64 * 1024] }
    }

    /// Sends `n` GETs of `path` at once and reads until all `n` responses ended; returns the
    /// bodies' total length.
    fn batch(&mut self, path: &[u8], n: usize) -> usize {
        for _ in 0..n {
            let head = RequestHead {
                method: b"GET",
                scheme: b"http",
                authority: b"localhost",
                path,
                protocol: None,
            };
            self.conn.send_request(&head, [(&b"accept"[..], &b"text/plain"[..])], true).unwrap();
        }
        self.flush();
        let (mut ended, mut body) = (0, 0);
        while ended < n {
            let got = self.tcp.read(&mut self.buf).unwrap();
            assert!(got > 0, "server closed");
            let mut input = &self.buf[..got];
            loop {
                let (used, event) = self.conn.recv(input, Instant::now());
                match event {
                    Some(Event::Data { data, end_stream, stream }) => {
                        body += data.len();
                        let len = data.len();
                        ended += usize::from(end_stream);
                        self.conn.release_capacity(stream, len);
                    }
                    Some(Event::Headers { kind: HeadersKind::Response, end_stream, .. }) => {
                        ended += usize::from(end_stream);
                    }
                    Some(Event::Closed(c)) => panic!("closed: {c:?}"),
                    Some(Event::Reset { stream, reason, .. }) => panic!("{stream:?} {reason:?}"),
                    _ => {}
                }
                input = &input[used..];
                if used == 0 && input.is_empty() {
                    break;
                }
                if input.is_empty() && self.conn.poll_event().is_none() {
                    break;
                }
            }
            self.flush();
        }
        body
    }

    fn flush(&mut self) {
        self.out.clear();
        self.conn.poll_transmit(&mut self.out);
        self.tcp.write_all(&self.out).unwrap();
    }
}

#[test]
fn steady_state_http2_requests_allocate_nothing() {
    let server = Server::bind("127.0.0.1:0").workers(1).spawn(plaintext).unwrap();
    let mut client = Client::connect(server.local_addr());

    // Warm up: buffers, tasks and their wakers, HPACK tables, the Date cache.
    for _ in 0..200 {
        assert_eq!(client.batch(b"/plaintext", 1), 13);
        assert_eq!(client.batch(b"/plaintext", 16), 16 * 13);
    }

    let before = counting::allocs();
    let (rounds, per) = (500, 1 + 16);
    for _ in 0..rounds {
        client.batch(b"/plaintext", 1);
        client.batch(b"/plaintext", 16);
    }
    let after = counting::allocs();
    let requests = (rounds * per) as u64;
    println!("{} allocations over {requests} HTTP/2 requests", after - before);
    assert_eq!(after - before, 0, "allocations per request: {}", (after - before) / requests);

    // The counter does see the server: a handler that allocates is counted.
    let before = counting::allocs();
    client.batch(b"/other", 4);
    assert!(counting::allocs() > before, "the counter missed the server's allocations");
    server.shutdown_now();
    server.join().unwrap();
}
