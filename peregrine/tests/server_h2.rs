//! The HTTP/2 server over loopback with a real client (the `h2` crate): prior knowledge,
//! request and response bodies both ways under flow control, concurrent streams, trailers,
//! HEAD, cancellation, connection-specific fields dropped, graceful shutdown; and h2c by
//! `Upgrade` with raw frames.

mod support;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode};
use peregrine::{Body, IntoResponse, Request, Response, Server};
use support::{RawClient, app, test_config};
use tokio::net::TcpStream;

type SendRequest = h2::client::SendRequest<Bytes>;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// A prior-knowledge HTTP/2 client connection to `addr`.
async fn connect(addr: std::net::SocketAddr) -> SendRequest {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (send, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    send.ready().await.unwrap()
}

/// Sends a request and reads the whole response: status, fields, body, trailers.
async fn request(
    send: &mut SendRequest,
    method: Method,
    path: &str,
    body: Option<Bytes>,
) -> (http::response::Parts, Vec<u8>, Option<http::HeaderMap>) {
    let req = http::Request::builder()
        .method(method)
        .uri(format!("http://localhost{path}"))
        .body(())
        .unwrap();
    let (fut, mut stream) = send.send_request(req, body.is_none()).unwrap();
    if let Some(body) = body {
        send_all(&mut stream, body).await;
    }
    let res = fut.await.unwrap();
    let (parts, mut recv) = res.into_parts();
    let mut out = Vec::new();
    while let Some(chunk) = recv.data().await {
        let chunk = chunk.unwrap();
        out.extend_from_slice(&chunk);
        recv.flow_control().release_capacity(chunk.len()).unwrap();
    }
    let trailers = recv.trailers().await.unwrap();
    (parts, out, trailers)
}

/// Sends `body` on `stream` as the peer's window allows, then ends it.
async fn send_all(stream: &mut h2::SendStream<Bytes>, mut body: Bytes) {
    while !body.is_empty() {
        stream.reserve_capacity(body.len());
        let cap = std::future::poll_fn(|cx| stream.poll_capacity(cx)).await.unwrap().unwrap();
        let chunk = body.split_to(cap.min(body.len()));
        stream.send_data(chunk, false).unwrap();
    }
    stream.send_data(Bytes::new(), true).unwrap();
}

fn serve<H: peregrine::Handler>(handler: H) -> peregrine::ServerHandle {
    Server::bind("127.0.0.1:0").workers(1).config(test_config()).spawn(handler).unwrap()
}

#[test]
fn prior_knowledge_requests_reach_the_same_handler() {
    let server = serve(app);
    rt().block_on(async {
        let mut send = connect(server.local_addr()).await;
        let (parts, body, _) = request(&mut send, Method::GET, "/info?x=1", None).await;
        assert_eq!(parts.status, StatusCode::OK);
        assert_eq!(parts.version, http::Version::HTTP_2);
        assert_eq!(body, b"GET /info x=1 Http2");
        assert!(parts.headers.contains_key("date"));
        assert_eq!(parts.headers["content-length"], "19");
        let (parts, body, _) = request(&mut send, Method::GET, "/missing", None).await;
        assert_eq!((parts.status, body.len()), (StatusCode::NOT_FOUND, 0));
        // Many requests on one connection, one after the other.
        for _ in 0..50 {
            let (parts, body, _) = request(&mut send, Method::GET, "/", None).await;
            assert_eq!((parts.status, body.as_slice()), (StatusCode::OK, &b"hello"[..]));
        }
    });
}

#[test]
fn bodies_flow_both_ways_past_the_windows() {
    let server = serve(app);
    rt().block_on(async {
        let mut send = connect(server.local_addr()).await;
        // 3 MiB: past the server's stream window (256 KiB) and connection window (1 MiB), and
        // the client's default window (64 KiB) on the way back.
        let payload: Bytes = (0..3 << 20).map(|i| (i % 251) as u8).collect::<Vec<u8>>().into();
        let (parts, body, _) =
            request(&mut send, Method::POST, "/echo", Some(payload.clone())).await;
        assert_eq!(parts.status, StatusCode::OK);
        assert_eq!(body.len(), payload.len());
        assert!(body == payload, "echoed body differs");
    });
}

#[test]
fn concurrent_streams_on_one_connection() {
    let server = serve(app);
    rt().block_on(async {
        let send = connect(server.local_addr()).await;
        let mut tasks = Vec::new();
        for i in 0..60 {
            let mut send = send.clone();
            tasks.push(tokio::spawn(async move {
                // Some wait on a timer, so many streams are open at once.
                let path = if i % 3 == 0 { "/slow?50".to_owned() } else { format!("/info?{i}") };
                let (parts, body, _) = request(&mut send, Method::GET, &path, None).await;
                (i, parts.status, body)
            }));
        }
        for task in tasks {
            let (i, status, body) = task.await.unwrap();
            assert_eq!(status, StatusCode::OK);
            let expect =
                if i % 3 == 0 { "slept".to_owned() } else { format!("GET /info {i} Http2") };
            assert_eq!(String::from_utf8(body).unwrap(), expect);
        }
    });
}

#[test]
fn request_trailers_reach_the_handler() {
    let server = serve(app);
    rt().block_on(async {
        let mut send = connect(server.local_addr()).await;
        let req = http::Request::post("http://localhost/trailers").body(()).unwrap();
        let (fut, mut stream) = send.send_request(req, false).unwrap();
        stream.send_data(Bytes::from_static(b"abcdef"), false).unwrap();
        let mut trailers = http::HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from_static("0"));
        stream.send_trailers(trailers).unwrap();
        let res = fut.await.unwrap();
        let mut recv = res.into_body();
        let mut out = Vec::new();
        while let Some(chunk) = recv.data().await {
            out.extend_from_slice(&chunk.unwrap());
        }
        assert_eq!(String::from_utf8(out).unwrap(), "6\ngrpc-status=0\n");
    });
}

#[test]
fn head_has_the_fields_and_no_content() {
    let server = serve(app);
    rt().block_on(async {
        let mut send = connect(server.local_addr()).await;
        let (parts, body, _) = request(&mut send, Method::HEAD, "/", None).await;
        assert_eq!(parts.status, StatusCode::OK);
        assert_eq!(parts.headers["content-length"], "5");
        assert!(body.is_empty());
    });
}

#[test]
fn streamed_responses_and_connection_specific_fields() {
    async fn handler(req: Request) -> Response {
        match req.path() {
            "/stream" => {
                let mut n = 0;
                Response::new(Body::from_poll_fn(move |_| {
                    n += 1;
                    std::task::Poll::Ready((n <= 100).then(|| Ok(Bytes::from(format!("{n:04};")))))
                }))
            }
            // A handler copying HTTP/1.1 habits: these fields must not reach an HTTP/2 client
            // (RFC 9113 §8.2.2; the h2 crate refuses a response that carries them).
            _ => Response::new("ok")
                .with_header(http::header::CONNECTION, HeaderValue::from_static("keep-alive"))
                .with_header(http::header::TRANSFER_ENCODING, HeaderValue::from_static("chunked"))
                .with_header(
                    http::HeaderName::from_static("keep-alive"),
                    HeaderValue::from_static("timeout=5"),
                )
                .with_header(http::header::UPGRADE, HeaderValue::from_static("h2c")),
        }
    }
    let server = serve(handler);
    rt().block_on(async {
        let mut send = connect(server.local_addr()).await;
        let (parts, body, _) = request(&mut send, Method::GET, "/stream", None).await;
        assert_eq!(parts.status, StatusCode::OK);
        assert!(!parts.headers.contains_key("content-length"));
        assert_eq!(body.len(), 500);
        assert!(body.starts_with(b"0001;0002;") && body.ends_with(b"0100;"));
        let (parts, body, _) = request(&mut send, Method::GET, "/fields", None).await;
        assert_eq!((parts.status, body.as_slice()), (StatusCode::OK, &b"ok"[..]));
        for name in ["connection", "transfer-encoding", "keep-alive", "upgrade"] {
            assert!(!parts.headers.contains_key(name), "{name} was sent");
        }
    });
}

/// A handler whose future counts how many of its instances were dropped: a reset stream
/// drops the handler's future.
#[test]
fn a_reset_stream_drops_its_handler() {
    struct Guard(Arc<AtomicUsize>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let seen = dropped.clone();
    let handler = move |_req: Request| -> std::pin::Pin<Box<dyn Future<Output = Response>>> {
        let guard = Guard(seen.clone());
        Box::pin(async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            drop(guard);
            Response::new("late")
        })
    };
    let server = serve(handler);
    rt().block_on(async {
        let mut send = connect(server.local_addr()).await;
        let req = http::Request::get("http://localhost/").body(()).unwrap();
        let (fut, mut stream) = send.send_request(req, true).unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        stream.send_reset(h2::Reason::CANCEL);
        drop(fut);
        for _ in 0..100 {
            if dropped.load(Ordering::SeqCst) == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(dropped.load(Ordering::SeqCst), 1, "the handler was not dropped");
        // The connection goes on.
        let req = http::Request::get("http://localhost/").body(()).unwrap();
        let (fut, _) = send.send_request(req, true).unwrap();
        let res = tokio::time::timeout(Duration::from_millis(200), fut).await;
        // That handler sleeps 30 s: no answer yet, but no connection error either.
        assert!(res.is_err(), "{res:?}");
    });
}

#[test]
fn graceful_shutdown_finishes_streams_in_flight() {
    let config = peregrine::server::Config { drain_grace: Duration::ZERO, ..test_config() };
    let server = Server::bind("127.0.0.1:0").workers(1).config(config).spawn(app).unwrap();
    rt().block_on(async {
        let mut send = connect(server.local_addr()).await;
        let req = http::Request::get("http://localhost/slow?300").body(()).unwrap();
        let (fut, _) = send.send_request(req, true).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        server.shutdown();
        let res = fut.await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let mut body = res.into_body();
        let chunk = body.data().await.unwrap().unwrap();
        assert_eq!(&chunk[..], b"slept");
    });
    server.join().unwrap();
}

/// `Upgrade: h2c` (RFC 7540 §3.2), as `curl --http2` sends it on `http://`: `101`, then the
/// response to the upgraded request on stream 1 in HTTP/2 frames.
#[test]
fn h2c_upgrade_answers_stream_1() {
    let server = serve(app);
    let mut c = RawClient::connect(server.local_addr());
    // HTTP2-Settings: MAX_CONCURRENT_STREAMS 100, INITIAL_WINDOW_SIZE 65535 — base64url.
    c.send(
        b"GET /info?up HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\n\
          Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n",
    );
    let res = c.head_response();
    assert_eq!(res.status, 101);
    assert_eq!(res.header("upgrade"), Some("h2c"));
    // The client preface follows the 101 (with its SETTINGS).
    c.send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0");
    let frames = support::h2frames::read_until_end_stream(&mut c, 1);
    let data: Vec<u8> = frames
        .iter()
        .filter(|f| f.kind == 0 && f.stream == 1)
        .flat_map(|f| f.payload.clone())
        .collect();
    assert_eq!(String::from_utf8(data).unwrap(), "GET /info up Http11");
    assert!(frames.iter().any(|f| f.kind == 1 && f.stream == 1), "no HEADERS on stream 1");
}

/// An `Upgrade: h2c` without `HTTP2-Settings` as a connection option is served as HTTP/1.1
/// (RFC 7540 §3.2.1), as are upgrades with HTTP/2 off.
#[test]
fn improper_or_disabled_upgrades_stay_http11() {
    let server = serve(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\
          HTTP2-Settings: AAMAAABk\r\n\r\n",
    );
    assert_eq!(c.response().body, b"hello");
    let config = peregrine::server::Config { h2c: false, ..test_config() };
    let server = support::spawn_with(config, app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n\
          HTTP2-Settings: AAMAAABk\r\n\r\n",
    );
    assert_eq!(c.response().body, b"hello");
    // Nor does the preface switch: an HTTP/1.1-only server refuses `PRI * HTTP/2.0`.
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    assert_eq!(c.response().status, 505);
}

#[test]
fn the_handler_sees_http2_and_the_authority() {
    async fn who(req: Request) -> Response {
        format!("{:?} {:?} {}", req.version(), req.authority(), req.target()).into_response()
    }
    let server = serve(who);
    rt().block_on(async {
        let mut send = connect(server.local_addr()).await;
        let (_, body, _) = request(&mut send, Method::GET, "/a/b?c", None).await;
        assert_eq!(String::from_utf8(body).unwrap(), "Http2 Some(\"localhost\") /a/b?c");
    });
}

#[test]
fn response_trailers_end_the_stream() {
    async fn handler(req: Request) -> Response {
        let mut trailers = http::HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from_static("0"));
        trailers.insert("grpc-message", HeaderValue::from_static("ok"));
        trailers.insert("connection", HeaderValue::from_static("close"));
        match req.path() {
            "/channel" => {
                let (tx, body) = Body::channel(2);
                tokio::task::spawn_local(async move {
                    tx.send(Bytes::from_static(b"abc")).await.unwrap();
                    tx.finish(trailers).await.unwrap();
                });
                Response::new(body)
            }
            _ => Response::new(Body::from("full").with_trailers(trailers)),
        }
    }
    let server = serve(handler);
    rt().block_on(async {
        let mut send = connect(server.local_addr()).await;
        for (path, expect) in [("/", &b"full"[..]), ("/channel", b"abc")] {
            let (parts, body, trailers) = request(&mut send, Method::GET, path, None).await;
            assert_eq!(parts.status, StatusCode::OK);
            assert_eq!(body, expect, "{path}");
            let trailers = trailers.expect("trailers");
            assert_eq!(trailers["grpc-status"], "0", "{path}");
            assert_eq!(trailers["grpc-message"], "ok", "{path}");
            assert!(!trailers.contains_key("connection"), "{path}");
        }
    });
}

/// A client that ends its side of the TCP connection after its request (`shutdown(SHUT_WR)`)
/// and reads slowly still gets the whole response: the server's close waits until the last
/// frames have left its buffers (RFC 9113 §6.8: the streams it accepted are answered). The body
/// is larger than what the connection queues (1 MiB) plus what the sockets hold, so its end is
/// still in the server's write buffer when the stream completes.
#[test]
fn a_half_closed_client_reading_slowly_gets_the_whole_response() {
    const LEN: usize = 8 << 20;
    let body = || -> Vec<u8> { (0..LEN).map(|i| (i % 253) as u8).collect() };
    let server = serve(move |_req: Request| async move { body() });
    let mut c = RawClient::connect(server.local_addr());
    use support::h2frames::{self, DATA, SETTINGS_INITIAL_WINDOW_SIZE};
    h2frames::handshake(&mut c, &[(SETTINGS_INITIAL_WINDOW_SIZE, 1 << 30)]);
    c.send(&h2frames::window_update(0, 1 << 30));
    let mut encoder = peregrine::http2::hpack::Encoder::new();
    let block = h2frames::request_block(&mut encoder, "GET", "/", &[]);
    c.send(&h2frames::headers(1, &block, true));
    c.tcp().shutdown(std::net::Shutdown::Write).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let (mut got, mut ended) = (Vec::new(), false);
    while let Some(f) = h2frames::try_read(&mut c) {
        if f.kind == DATA && f.stream == 1 {
            got.extend_from_slice(&f.payload);
            ended |= f.ends_stream();
        }
    }
    assert_eq!((got.len(), ended), (LEN, true), "the response was cut");
    assert!(got == body(), "the response's bytes differ");
}
