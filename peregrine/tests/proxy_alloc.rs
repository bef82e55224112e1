//! Zero allocations per proxied request after warm-up (issue 30): `Proxy` in front of a
//! peregrine backend over real loopback connections, a raw client sending GETs one at a time
//! and pipelined, and POSTs with a small body; a counting global allocator counts what the
//! proxy's worker thread allocates meanwhile: nothing. The backend's and the client's threads
//! are not marked, so their allocations do not count.

use std::io::{Read, Write};
use std::net::TcpStream;

use http::header::{self, HeaderValue};
use peregrine::proxy::{Proxy, ProxyFuture, Upstreams};
use peregrine::{Handler, Request, Response, Server};

#[path = "support/counting.rs"]
mod counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// The proxy, marking its worker thread on each request.
#[derive(Clone)]
struct Marked(Proxy);

impl Handler for Marked {
    type Output = Response;
    type Future = ProxyFuture;

    fn call(&self, req: Request) -> ProxyFuture {
        counting::mark_server_thread();
        self.0.call(req)
    }
}

async fn backend(mut req: Request) -> Response {
    let mut body = req.take_body();
    while let Some(chunk) = body.chunk().await {
        chunk.unwrap();
    }
    Response::new("Hello, World!")
        .with_header(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))
}

fn round_trip(stream: &mut TcpStream, batch: &[u8], per_batch: usize, buf: &mut [u8]) {
    stream.write_all(batch).unwrap();
    let mut seen = 0;
    while seen < per_batch {
        let n = stream.read(buf).unwrap();
        assert!(n > 0, "proxy closed");
        seen += buf[..n].windows(13).filter(|w| w == b"Hello, World!").count();
    }
}

#[test]
fn steady_state_proxied_requests_allocate_nothing() {
    let backend = Server::bind("127.0.0.1:0").workers(1).spawn(backend).unwrap();
    let upstreams = Upstreams::new([format!("http://{}", backend.local_addr())]).unwrap();
    let proxy =
        Server::bind("127.0.0.1:0").workers(1).spawn(Marked(Proxy::new(upstreams))).unwrap();

    let mut stream = TcpStream::connect(proxy.local_addr()).unwrap();
    stream.set_nodelay(true).unwrap();
    let get = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\nAccept: text/plain\r\n\
                User-Agent: proxy_alloc\r\nAccept-Encoding: gzip, br\r\n\r\n";
    let sixteen: Vec<u8> = get.repeat(16);
    let mut post = b"POST /form HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n\
                     Content-Length: 100\r\n\r\n"
        .to_vec();
    post.extend_from_slice(&[b'x'; 100]);
    let mut buf = vec![0u8; 64 * 1024];

    let mut round = |stream: &mut TcpStream| {
        round_trip(stream, get, 1, &mut buf);
        round_trip(stream, &sixteen, 16, &mut buf);
        round_trip(stream, &post, 1, &mut buf);
    };
    for _ in 0..200 {
        round(&mut stream);
    }
    let before = counting::allocs();
    let mut requests = 0;
    for _ in 0..500 {
        round(&mut stream);
        requests += 18;
    }
    let allocs = counting::allocs() - before;
    assert_eq!(allocs, 0, "{allocs} allocations over {requests} proxied requests");

    // The counter does see the proxy's worker: a new client connection allocates.
    let before = counting::allocs();
    let mut other = TcpStream::connect(proxy.local_addr()).unwrap();
    round_trip(&mut other, get, 1, &mut buf);
    assert!(counting::allocs() > before, "the counter sees the proxy's allocations");

    proxy.shutdown_now();
    proxy.join().unwrap();
    backend.shutdown_now();
    backend.join().unwrap();
}
