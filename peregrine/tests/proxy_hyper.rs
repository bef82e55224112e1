//! The proxy in front of a hyper 1 server, over loopback: the fields hyper receives, chunked
//! and streamed bodies both ways (hyper's trailers reach the client when it asked for them on
//! its hop, RFC 9110 §10.1.4), and a 256 MiB upload to a backend that reads slowly, through
//! which the process's live heap stays bounded.
//!
//! The heap is counted by a global allocator over the whole process (proxy, hyper and the
//! test's client alike), so every test here takes [`ALONE`].

#[path = "support/live_bytes.rs"]
mod live_bytes;
mod support;

#[global_allocator]
static GLOBAL: live_bytes::Tracking = live_bytes::Tracking;

use std::convert::Infallible;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use peregrine::proxy::{Proxy, Upstreams};
use support::{RawClient, spawn_with, test_config};

static ALONE: Mutex<()> = Mutex::new(());

type Out = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// The backend's answers: `/echo` the request line, fields (lower case), body length and
/// trailers, one per line; `/stream` 64 chunks of 16 KiB, each the chunk's index, then the
/// trailer `x-sum: 64` (announced in `Trailer`); `/sink` reads the body pausing 20 ms after every MiB and answers its
/// length.
async fn backend(req: hyper::Request<Incoming>) -> Result<hyper::Response<Out>, Infallible> {
    let path = req.uri().path().to_owned();
    if path == "/stream" {
        let frames = async_stream(64);
        // hyper sends only the trailer fields its response's Trailer field announces.
        let mut res = hyper::Response::new(StreamBody::new(frames).boxed());
        res.headers_mut().insert("trailer", http::HeaderValue::from_static("x-sum"));
        return Ok(res);
    }
    let mut out = format!("{} {}\n", req.method(), req.uri());
    for (n, v) in req.headers() {
        out += &format!("{}: {}\n", n, v.to_str().unwrap_or("?"));
    }
    let mut body = req.into_body();
    let (mut len, mut paused_at) = (0usize, 0usize);
    let mut trailers = String::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.expect("the body reaches hyper whole");
        if let Some(data) = frame.data_ref() {
            len += data.len();
            if path == "/sink" && len - paused_at >= 1 << 20 {
                paused_at = len;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        } else if let Some(t) = frame.trailers_ref() {
            for (n, v) in t {
                trailers += &format!("trailer {}: {}\n", n, v.to_str().unwrap());
            }
        }
    }
    out += &format!("body-length: {len}\n{trailers}");
    Ok(hyper::Response::new(http_body_util::Full::new(Bytes::from(out)).boxed()))
}

/// `n` frames of 16 KiB, a millisecond apart, then the trailers.
fn async_stream(
    n: u8,
) -> impl futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + 'static {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tokio::spawn(async move {
        for i in 0..n {
            tokio::time::sleep(Duration::from_millis(1)).await;
            if tx.send(Ok(Frame::data(Bytes::from(vec![i; 16 * 1024])))).await.is_err() {
                return;
            }
        }
        let mut t = http::HeaderMap::new();
        t.insert("x-sum", n.to_string().parse().unwrap());
        let _ = tx.send(Ok(Frame::trailers(t))).await;
    });
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|f| (f, rx)) })
}

/// A hyper HTTP/1.1 server on its own thread and runtime.
fn spawn_hyper() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service_fn(backend))
                        .await;
                });
            }
        });
    });
    addr
}

/// The proxy, taking request bodies up to 1 GiB (the server's default limit is 2 MiB).
fn spawn_proxy(to: SocketAddr) -> peregrine::ServerHandle {
    let config = peregrine::server::Config { max_body_bytes: 1 << 30, ..test_config() };
    spawn_with(config, Proxy::new(Upstreams::new([format!("http://{to}")]).unwrap()))
}

fn lines(body: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(body).lines().map(str::to_owned).collect()
}

fn field<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    let prefix = format!("{name}: ");
    lines.iter().find_map(|l| l.strip_prefix(prefix.as_str()))
}

/// hyper sees the client's fields without the hop-by-hop ones, the proxy's forwarding fields,
/// a chunked request body and its trailers; its streamed response comes back whole, with its
/// trailers when the client asked for them on its hop (`Connection: TE`), which hyper only
/// sends then.
#[test]
fn hyper_behind_the_proxy_bodies_and_trailers_both_ways() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let hyper = spawn_hyper();
    let proxy = spawn_proxy(hyper);
    let mut c = RawClient::connect(proxy.local_addr());
    c.send(
        b"POST /echo?q=1 HTTP/1.1\r\nHost: app.example\r\nConnection: keep-alive, X-Hop\r\n\
          X-Hop: secret\r\nKeep-Alive: timeout=5\r\nX-End: kept\r\nTransfer-Encoding: chunked\r\n\
          \r\n5\r\nhello\r\n6\r\n world\r\n0\r\nx-sum: 11\r\n\r\n",
    );
    let res = c.response();
    assert_eq!(res.status, 200);
    let seen = lines(&res.body);
    assert_eq!(seen[0], "POST /echo?q=1");
    assert_eq!(field(&seen, "host"), Some("app.example"));
    assert_eq!(field(&seen, "x-end"), Some("kept"));
    assert_eq!(field(&seen, "via"), Some("1.1 peregrine"));
    assert_eq!(field(&seen, "x-forwarded-for"), Some("127.0.0.1"));
    assert_eq!(field(&seen, "transfer-encoding"), Some("chunked"), "{seen:?}");
    for hop in ["x-hop", "keep-alive", "connection", "te"] {
        assert_eq!(field(&seen, hop), None, "{hop}: {seen:?}");
    }
    assert!(seen.contains(&"body-length: 11".to_owned()), "{seen:?}");
    assert!(seen.contains(&"trailer x-sum: 11".to_owned()), "{seen:?}");
    // A request body streamed in uneven chunks, 4 MiB in all.
    let mut wire = b"PUT /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    let mut sent = 0;
    for size in (1..).map(|i| (i * 7919) % 65_536 + 1) {
        let size = size.min((4 << 20) - sent);
        wire.extend_from_slice(format!("{size:x}\r\n").as_bytes());
        wire.extend(std::iter::repeat_n(b'z', size));
        wire.extend_from_slice(b"\r\n");
        sent += size;
        if sent == 4 << 20 {
            break;
        }
    }
    wire.extend_from_slice(b"0\r\n\r\n");
    c.send(&wire);
    let res = c.response();
    assert!(lines(&res.body).contains(&format!("body-length: {}", 4 << 20)));
    // The streamed response, with and without the client asking for trailers on its hop.
    for (ask, trailers) in [
        ("Connection: TE\r\nTE: trailers\r\n", vec!["x-sum: 64".to_owned()]),
        ("TE: trailers\r\n", vec![]),
    ] {
        c.send(format!("GET /stream HTTP/1.1\r\nHost: h\r\n{ask}\r\n").as_bytes());
        let res = c.response();
        assert_eq!(res.status, 200);
        assert_eq!(res.body.len(), 64 * 16 * 1024);
        assert!(
            res.body.chunks(16 * 1024).enumerate().all(|(i, c)| c.iter().all(|&b| b == i as u8))
        );
        assert_eq!(res.trailers, trailers, "{ask:?}");
    }
    proxy.shutdown_now();
}

/// 256 MiB uploaded with a Content-Length, as fast as the client can, through the proxy to a
/// hyper backend that reads it at about 50 MiB/s: the upload completes, and the process's live
/// heap (proxy, hyper and client together) never grows more than 4 MiB above where it started.
///
/// The bound: the proxy keeps one read buffer and one chunk in flight each way, hyper's read
/// buffer is at most ~400 KB; 4 MiB leaves room for those and the runtimes' own growth, and is
/// 1/64 of the body — a proxy that buffered ahead of the slow reader would pass it within the
/// first few hundred milliseconds.
#[test]
fn a_256_mib_upload_to_a_slow_backend_holds_bounded_memory() {
    const TOTAL: u64 = 256 << 20;
    const BOUND: usize = 4 << 20;
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let hyper = spawn_hyper();
    let proxy = spawn_proxy(hyper);
    // Warm up: the connections and buffers a request needs exist before the peak is reset.
    let mut warm = RawClient::connect(proxy.local_addr());
    warm.send(b"POST /sink HTTP/1.1\r\nHost: h\r\nContent-Length: 65536\r\n\r\n");
    warm.send(&[b'w'; 65_536]);
    assert_eq!(warm.response().status, 200);
    drop(warm);
    std::thread::sleep(Duration::from_millis(100));
    let mut stream = TcpStream::connect(proxy.local_addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let before = live_bytes::reset_peak();
    let started = Instant::now();
    stream
        .write_all(
            format!("POST /sink HTTP/1.1\r\nHost: h\r\nContent-Length: {TOTAL}\r\n\r\n").as_bytes(),
        )
        .unwrap();
    let block = [b'u'; 64 * 1024];
    let mut sent = 0u64;
    let mut highest = 0usize;
    while sent < TOTAL {
        stream.write_all(&block).unwrap();
        sent += block.len() as u64;
        highest = highest.max(live_bytes::live().saturating_sub(before));
        assert!(started.elapsed() < Duration::from_secs(120), "upload too slow: {sent} bytes");
    }
    let mut response = Vec::new();
    let mut buf = [0; 4096];
    while !String::from_utf8_lossy(&response).contains("body-length") {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&response));
        response.extend_from_slice(&buf[..n]);
    }
    let took = started.elapsed();
    let peak = live_bytes::peak().saturating_sub(before);
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains(&format!("body-length: {TOTAL}")), "{text}");
    eprintln!(
        "256 MiB in {took:?}: live heap peak {peak} bytes above the start (sampled while \
         writing: {highest})"
    );
    // The slow reader set the pace: the proxy held the client back instead of buffering.
    assert!(took >= Duration::from_secs(4), "the backend paused over 4 s in all: {took:?}");
    assert!(peak <= BOUND, "live heap grew {peak} bytes (bound {BOUND})");
    proxy.shutdown_now();
}
