//! An unmodified axum 0.8 app behind a tower-http stack, served by peregrine
//! (`peregrine::tower::service`) on a plain port (HTTP/1.1 and h2c) and a TLS port (HTTP/2 by
//! ALPN), driven by reqwest, curl and peregrine's own client: extractors (`State`, `Path`,
//! `Query`, `Json`, `ConnectInfo`), a streamed upload read as it arrives, a streamed download,
//! server-sent events, trailers both ways, the stack's layers (compression, trace, timeout,
//! CORS, request id), HEAD's length, and a panicking handler answered 500 on a connection
//! that goes on.

mod support;

use std::convert::Infallible;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Body as AxumBody;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response as AxumResponse};
use axum::routing::{any, get, post};
use bytes::Bytes;
use futures_util::Stream;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, TRAILER};
use http::{HeaderMap, HeaderValue, StatusCode};
use http_body_util::BodyExt;
use peregrine::websocket::{CloseCode, Message};
use peregrine::{Server, ServerHandle};
use serde::{Deserialize, Serialize};
use support::RawClient;
use support::tls::{TestCert, self_signed};
use tokio::sync::Notify;
use tower::ServiceBuilder;
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

// ---- The app ----

#[derive(Clone)]
struct AppState {
    greeting: &'static str,
    /// Notified by `/upload` when its first chunk arrived.
    upload_first: Arc<Notify>,
    /// Notified by the client once it read `/download`'s first chunk.
    download_go: Arc<Notify>,
}

#[derive(Deserialize)]
struct Times {
    times: Option<usize>,
}

/// `State`, `Path` and `Query`.
async fn hello(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(q): Query<Times>,
) -> String {
    vec![format!("{}, {name}!", state.greeting); q.times.unwrap_or(1)].join(" ")
}

#[derive(Deserialize)]
struct Terms {
    a: i64,
    b: i64,
}

#[derive(Serialize)]
struct Total {
    total: i64,
}

async fn sum(Json(terms): Json<Terms>) -> Json<Total> {
    Json(Total { total: terms.a + terms.b })
}

/// Reads the body frame by frame: tells the test when the first chunk is in (the client holds
/// the rest back until then), and answers with the count, its trailers echoed in its own
/// (announced with `Trailer`, as the body's size is known).
async fn upload(State(state): State<AppState>, mut body: AxumBody) -> AxumResponse {
    let mut bytes = 0usize;
    let mut request_trailers = HeaderMap::new();
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(frame) => frame,
            Err(e) => return (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
        };
        match frame.into_data() {
            Ok(data) => {
                if bytes == 0 && !data.is_empty() {
                    state.upload_first.notify_one();
                }
                bytes += data.len();
            }
            Err(frame) => request_trailers = frame.into_trailers().unwrap_or_default(),
        }
    }
    let mut trailers = HeaderMap::new();
    trailers.insert("x-bytes", HeaderValue::from(bytes));
    if let Some(sum) = request_trailers.get("x-checksum") {
        trailers.insert("x-checksum", sum.clone());
    }
    let body = peregrine::Body::from(format!("{bytes} bytes")).with_trailers(trailers);
    ([(TRAILER, HeaderValue::from_static("x-bytes, x-checksum"))], AxumBody::new(body))
        .into_response()
}

#[derive(Deserialize)]
struct Chunks {
    n: usize,
}

/// `n` chunks of 1000 bytes and an `x-chunks` trailer, from a task: after the first, it waits
/// for the client to have read it, so a body buffered whole would never end.
async fn download(State(state): State<AppState>, Query(q): Query<Chunks>) -> AxumResponse {
    let (tx, body) = peregrine::Body::channel(1);
    tokio::spawn(async move {
        let chunk = Bytes::from(vec![b'x'; 1000]);
        if tx.send(chunk.clone()).await.is_err() {
            return;
        }
        let go = tokio::time::timeout(Duration::from_secs(10), state.download_go.notified());
        if go.await.is_err() {
            tx.abort().await;
            return;
        }
        for _ in 1..q.n {
            if tx.send(chunk.clone()).await.is_err() {
                return;
            }
        }
        let mut trailers = HeaderMap::new();
        trailers.insert("x-chunks", HeaderValue::from(q.n));
        let _ = tx.finish(trailers).await;
    });
    ([(CONTENT_TYPE, "application/octet-stream")], AxumBody::new(body)).into_response()
}

async fn events() -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let ticks = futures_util::stream::unfold(1, |i| async move {
        if i > 3 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        Some((Ok(Event::default().event("tick").data(i.to_string())), i + 1))
    });
    Sse::new(ticks)
}

async fn whoami(ConnectInfo(client): ConnectInfo<SocketAddr>) -> String {
    client.to_string()
}

async fn slow() -> &'static str {
    tokio::time::sleep(Duration::from_secs(10)).await;
    "too late"
}

async fn panics() -> &'static str {
    panic!("a handler panics (expected by the test)")
}

/// peregrine's WebSocket extractor: the HTTP version first, then every message echoed.
async fn ws_echo(version: http::Version, ws: peregrine::tower::WebSocketUpgrade) -> AxumResponse {
    ws.deflate(true)
        .on_upgrade(move |mut ws| async move {
            let _ = ws.send(Message::text(format!("{version:?}"))).await;
            while let Some(Ok(msg)) = ws.recv().await {
                if ws.send(msg).await.is_err() {
                    break;
                }
            }
        })
        .into_response()
}

fn app(state: AppState) -> axum::Router {
    let stack = ServiceBuilder::new()
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .layer(TraceLayer::new_for_http())
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(CorsLayer::permissive())
        .layer(CompressionLayer::new())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_millis(300),
        ));
    axum::Router::new()
        .route("/hello/{name}", get(hello))
        .route("/sum", post(sum))
        .route("/upload", post(upload))
        .route("/download", get(download))
        .route("/events", get(events))
        .route("/whoami", get(whoami))
        .route("/slow", get(slow))
        .route("/panic", get(panics))
        // RFC 8441: over HTTP/2 the handshake is a CONNECT, so the route takes any method.
        .route("/ws", any(ws_echo))
        .with_state(state)
        .layer(stack)
}

// ---- The server and the clients ----

struct Fixture {
    server: ServerHandle,
    state: AppState,
    cert: TestCert,
}

impl Fixture {
    /// The app on a plain port (HTTP/1.1, h2c) and a TLS port (ALPN h2), one worker.
    fn new() -> Fixture {
        let cert = self_signed(&["127.0.0.1"]);
        let tls = peregrine::server::TlsConfig::from_pem(
            cert.cert_pem.as_bytes(),
            cert.key_pem.as_bytes(),
        )
        .unwrap();
        let state = AppState {
            greeting: "Hi",
            upload_first: Arc::new(Notify::new()),
            download_go: Arc::new(Notify::new()),
        };
        let server = Server::bind("127.0.0.1:0")
            .and_bind_tls("127.0.0.1:0", tls)
            .workers(1)
            .config(support::test_config())
            .spawn(peregrine::tower::service(app(state.clone())))
            .expect("spawn");
        Fixture { server, state, cert }
    }

    fn url(&self, proto: Proto, path: &str) -> String {
        match proto {
            Proto::H1 | Proto::H2c => format!("http://{}{path}", self.server.local_addrs()[0]),
            Proto::H2Tls => format!("https://{}{path}", self.server.local_addrs()[1]),
        }
    }

    fn reqwest(&self, proto: Proto) -> reqwest::Client {
        let builder = reqwest::Client::builder();
        let builder = match proto {
            Proto::H1 => builder.http1_only(),
            Proto::H2c => builder.http2_prior_knowledge(),
            Proto::H2Tls => builder
                .tls_certs_only([
                    reqwest::Certificate::from_pem(self.cert.cert_pem.as_bytes()).unwrap()
                ]),
        };
        builder.build().unwrap()
    }

    fn peregrine(&self, proto: Proto) -> peregrine::client::Client {
        let builder = peregrine::client::Client::builder();
        match proto {
            Proto::H1 => builder.http1_only(),
            Proto::H2c => builder.http2_prior_knowledge(),
            Proto::H2Tls => builder.tls(
                peregrine::client::TlsConfig::empty()
                    .add_ca_pem(self.cert.cert_pem.as_bytes())
                    .unwrap(),
            ),
        }
        .build()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proto {
    H1,
    H2c,
    H2Tls,
}

const PROTOS: [Proto; 3] = [Proto::H1, Proto::H2c, Proto::H2Tls];

impl Proto {
    fn http_version(self) -> http::Version {
        match self {
            Proto::H1 => http::Version::HTTP_11,
            Proto::H2c | Proto::H2Tls => http::Version::HTTP_2,
        }
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

/// Waits for `notify`, failing the test after a while rather than hanging.
async fn notified(notify: &Notify, what: &str) {
    tokio::time::timeout(Duration::from_secs(10), notify.notified())
        .await
        .unwrap_or_else(|_| panic!("{what}: timed out"));
}

/// A streamed request body: the first chunk now, the second and the trailers (an
/// `x-checksum`) once the server said it has the first, so the server must read as it
/// arrives.
fn streamed_upload(state: &AppState) -> peregrine::Body {
    let (tx, body) = peregrine::Body::channel(1);
    let first = state.upload_first.clone();
    tokio::spawn(async move {
        tx.send(Bytes::from(vec![b'u'; 3000])).await.unwrap();
        notified(&first, "the server's first upload chunk").await;
        tx.send(Bytes::from(vec![b'v'; 2000])).await.unwrap();
        let mut trailers = HeaderMap::new();
        trailers.insert("x-checksum", HeaderValue::from_static("c0ffee"));
        tx.finish(trailers).await.unwrap();
    });
    body
}

// ---- reqwest ----

#[test]
fn reqwest_extractors_and_head_over_h1_h2c_and_tls() {
    let fx = Fixture::new();
    block_on(async {
        for proto in PROTOS {
            let client = fx.reqwest(proto);
            let res = client.get(fx.url(proto, "/hello/ada?times=2")).send().await.unwrap();
            assert_eq!(res.version(), proto.http_version(), "{proto:?}");
            assert_eq!(res.status(), 200);
            assert_eq!(res.text().await.unwrap(), "Hi, ada! Hi, ada!", "{proto:?}");

            let res = client
                .post(fx.url(proto, "/sum"))
                .header(CONTENT_TYPE, "application/json")
                .body(r#"{"a":2,"b":40}"#)
                .send()
                .await
                .unwrap();
            assert_eq!(res.headers()[CONTENT_TYPE], "application/json", "{proto:?}");
            assert_eq!(res.headers()[CONTENT_LENGTH], "12", "{proto:?}");
            assert_eq!(res.text().await.unwrap(), r#"{"total":42}"#);

            // axum answers HEAD with GET's route, the length announced and the body left out.
            let res = client.head(fx.url(proto, "/hello/ada")).send().await.unwrap();
            assert_eq!(res.status(), 200);
            assert_eq!(res.headers()[CONTENT_LENGTH], "8", "{proto:?}");
            assert_eq!(res.bytes().await.unwrap().len(), 0);

            let res = client.get(fx.url(proto, "/whoami")).send().await.unwrap();
            let client_addr: SocketAddr = res.text().await.unwrap().parse().unwrap();
            assert_eq!(client_addr.ip().to_string(), "127.0.0.1");

            let res = client.get(fx.url(proto, "/hello/ada?times=x")).send().await.unwrap();
            assert_eq!(res.status(), 400, "a Query rejection, {proto:?}");
        }
    });
}

#[test]
fn reqwest_streams_both_ways_with_trailers_and_events() {
    let fx = Fixture::new();
    block_on(async {
        for proto in PROTOS {
            let client = fx.reqwest(proto);
            // hyper's HTTP/1.1 client sends trailers that a Trailer field announced.
            let res = client
                .post(fx.url(proto, "/upload"))
                .header(TRAILER, "x-checksum")
                .body(reqwest::Body::wrap(streamed_upload(&fx.state)))
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 200, "{proto:?}");
            let res = http::Response::<reqwest::Body>::from(res);
            let collected = res.into_body().collect().await.unwrap();
            let trailers = collected.trailers().cloned().expect("response trailers");
            assert_eq!(collected.to_bytes(), "5000 bytes", "{proto:?}");
            assert_eq!(trailers["x-bytes"], "5000", "{proto:?}");
            assert_eq!(trailers["x-checksum"], "c0ffee", "request trailers, {proto:?}");

            let mut res = client.get(fx.url(proto, "/download?n=5")).send().await.unwrap();
            assert_eq!(res.headers().get(CONTENT_LENGTH), None, "{proto:?}");
            let first = res.chunk().await.unwrap().expect("a first chunk");
            fx.state.download_go.notify_one();
            let res = http::Response::<reqwest::Body>::from(res);
            let collected = res.into_body().collect().await.unwrap();
            let trailers = collected.trailers().cloned().expect("download trailers");
            assert_eq!(first.len() + collected.to_bytes().len(), 5000, "{proto:?}");
            assert_eq!(trailers["x-chunks"], "5", "{proto:?}");

            let res = client.get(fx.url(proto, "/events")).send().await.unwrap();
            assert_eq!(res.headers()[CONTENT_TYPE], "text/event-stream");
            let text = res.text().await.unwrap();
            for i in 1..=3 {
                assert!(text.contains(&format!("event: tick\ndata: {i}\n\n")), "{text:?}");
            }
        }
    });
}

#[test]
fn reqwest_through_the_tower_http_stack() {
    let fx = Fixture::new();
    block_on(async {
        for proto in PROTOS {
            let client = fx.reqwest(proto);
            // Compression.
            let res = client
                .get(fx.url(proto, "/hello/grace?times=20"))
                .header("accept-encoding", "gzip")
                .send()
                .await
                .unwrap();
            assert_eq!(res.headers()["content-encoding"], "gzip", "{proto:?}");
            let gz = res.bytes().await.unwrap();
            let mut text = String::new();
            flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut text).unwrap();
            assert_eq!(text, ["Hi, grace!"; 20].join(" "));

            // Request ids: made, or kept.
            let res = client.get(fx.url(proto, "/hello/a")).send().await.unwrap();
            assert!(res.headers().contains_key("x-request-id"), "{proto:?}");
            let res = client
                .get(fx.url(proto, "/hello/a"))
                .header("x-request-id", "req-7")
                .send()
                .await
                .unwrap();
            assert_eq!(res.headers()["x-request-id"], "req-7");

            // CORS: a preflight, and the origin allowed on the request.
            let res = client
                .request(http::Method::OPTIONS, fx.url(proto, "/sum"))
                .header("origin", "https://example.com")
                .header("access-control-request-method", "POST")
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 200, "{proto:?}");
            assert_eq!(res.headers()["access-control-allow-origin"], "*");
            assert!(res.headers().contains_key("access-control-allow-methods"));

            // The timeout.
            let started = std::time::Instant::now();
            let res = client.get(fx.url(proto, "/slow")).send().await.unwrap();
            assert_eq!(res.status(), 408, "{proto:?}");
            assert!(started.elapsed() < Duration::from_secs(5));
        }
    });
}

// ---- curl ----

/// Runs curl with `args`; its stdout (with `-w`'s output at the end).
fn curl(args: &[&str]) -> String {
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .output()
        .expect("run curl");
    assert!(out.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn curl_over_h1_h2c_and_tls() {
    let fx = Fixture::new();
    let dir = std::env::temp_dir().join(format!("peregrine-tower-curl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &fx.cert.cert_pem).unwrap();
    let ca = ca.to_str().unwrap();
    for proto in PROTOS {
        let flags: &[&str] = match proto {
            Proto::H1 => &["--http1.1"],
            Proto::H2c => &["--http2-prior-knowledge"],
            Proto::H2Tls => &["--http2", "--cacert", ca],
        };
        let version = if proto == Proto::H1 { "1.1" } else { "2" };
        let run = |extra: &[&str], path: &str| {
            let url = fx.url(proto, path);
            let mut args: Vec<&str> = flags.to_vec();
            args.extend_from_slice(extra);
            args.push(&url);
            curl(&args)
        };

        let out = run(&["-w", " %{http_version}"], "/hello/curl?times=2");
        assert_eq!(out, format!("Hi, curl! Hi, curl! {version}"), "{proto:?}");

        let out = run(&["-H", "content-type: application/json", "-d", r#"{"a":1,"b":2}"#], "/sum");
        assert_eq!(out, r#"{"total":3}"#, "{proto:?}");

        let out = run(&["--compressed"], "/hello/curl?times=10");
        assert_eq!(out, ["Hi, curl!"; 10].join(" "), "{proto:?}");

        // The download's trailers: curl writes them after the head in its header dump.
        fx.state.download_go.notify_one();
        let out = run(&["-D", "-", "-o", "/dev/null"], "/download?n=3");
        assert!(out.to_ascii_lowercase().contains("x-chunks: 3"), "{proto:?}: {out}");

        let out = run(&["-i"], "/panic");
        assert!(out.starts_with(&format!("HTTP/{version} 500")), "{proto:?}: {out}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

// ---- peregrine's client ----

#[test]
fn peregrine_client_over_h1_h2c_and_tls() {
    let fx = Fixture::new();
    block_on(async {
        for proto in PROTOS {
            let client = fx.peregrine(proto);
            let mut res = client.get(&fx.url(proto, "/hello/bob?times=3")).await.unwrap();
            assert_eq!(res.status(), 200);
            let body = res.body_mut().take_body_bytes().await;
            assert_eq!(body, "Hi, bob! Hi, bob! Hi, bob!", "{proto:?}");

            let req = http::Request::post(fx.url(proto, "/sum"))
                .header(CONTENT_TYPE, "application/json")
                .body(r#"{"a":-1,"b":1}"#)
                .unwrap();
            let mut res = client.send(req).await.unwrap();
            assert_eq!(res.body_mut().take_body_bytes().await, r#"{"total":0}"#, "{proto:?}");

            // The client sends no request trailers: the upload streams, and the response's
            // trailers (the body's length is known; its Trailer field keeps them) come back.
            let req = http::Request::post(fx.url(proto, "/upload"))
                .body(streamed_upload_without_trailers(&fx.state))
                .unwrap();
            let mut res = client.send(req).await.unwrap();
            assert_eq!(res.status(), 200, "{proto:?}");
            let body = res.body_mut();
            let mut text = Vec::new();
            while let Some(chunk) = body.chunk().await {
                text.extend_from_slice(&chunk.unwrap());
            }
            assert_eq!(text, b"5000 bytes", "{proto:?}");
            let trailers = body.take_trailers().expect("response trailers");
            assert_eq!(trailers["x-bytes"], "5000", "{proto:?}");

            let mut res = client.get(&fx.url(proto, "/download?n=4")).await.unwrap();
            let body = res.body_mut();
            let first = body.chunk().await.unwrap().unwrap();
            fx.state.download_go.notify_one();
            let mut len = first.len();
            while let Some(chunk) = body.chunk().await {
                len += chunk.unwrap().len();
            }
            assert_eq!(len, 4000, "{proto:?}");
            assert_eq!(body.take_trailers().expect("trailers")["x-chunks"], "4", "{proto:?}");

            let mut res = client.get(&fx.url(proto, "/events")).await.unwrap();
            let text = res.body_mut().take_body_bytes().await;
            assert!(text.starts_with(b"event: tick\ndata: 1\n\n"), "{proto:?}");
        }
    });
}

fn streamed_upload_without_trailers(state: &AppState) -> peregrine::Body {
    let (tx, body) = peregrine::Body::channel(1);
    let first = state.upload_first.clone();
    tokio::spawn(async move {
        tx.send(Bytes::from(vec![b'u'; 1000])).await.unwrap();
        notified(&first, "the server's first upload chunk").await;
        tx.send(Bytes::from(vec![b'v'; 4000])).await.unwrap();
    });
    body
}

trait TakeBodyBytes {
    async fn take_body_bytes(&mut self) -> Bytes;
}

impl TakeBodyBytes for peregrine::Body {
    async fn take_body_bytes(&mut self) -> Bytes {
        std::mem::take(self).to_bytes(1 << 20).await.unwrap()
    }
}

// ---- raw HTTP/1.1 ----

/// A chunked upload with a trailer section, its second chunk sent only once the handler has
/// the first; then a panic on the same connection, answered 500, and the connection goes on.
#[test]
fn raw_h1_streaming_upload_trailers_and_a_panic_on_one_connection() {
    let fx = Fixture::new();
    let addr = fx.server.local_addrs()[0];
    let mut c = RawClient::connect(addr);
    c.send(b"POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(notified(&fx.state.upload_first, "the first chunk, before the last was sent"));
    c.send(b"6\r\n world\r\n0\r\nx-checksum: abc\r\n\r\n");
    let res = c.response();
    assert_eq!(res.status, 200);
    assert_eq!(res.header("trailer"), Some("x-bytes, x-checksum"));
    assert_eq!(res.body, b"11 bytes");
    assert_eq!(res.trailers, ["x-bytes: 11", "x-checksum: abc"]);

    c.send(&support::get("/panic"));
    let res = c.response();
    assert_eq!(res.status, 500);
    assert_eq!(res.header("connection"), None, "the connection is kept");
    c.send(&support::get("/hello/again"));
    let res = c.response();
    assert_eq!(res.status, 200);
    assert_eq!(res.body, b"Hi, again!");

    // ConnectInfo is this connection's own address.
    c.send(&support::get("/whoami"));
    let res = c.response();
    assert_eq!(String::from_utf8(res.body).unwrap(), c.tcp().local_addr().unwrap().to_string());
}

/// The answer to HEAD announces the length GET's would have, from the Content-Length axum
/// sets before it leaves the body out.
#[test]
fn raw_h1_head_announces_gets_length() {
    let fx = Fixture::new();
    let mut c = RawClient::connect(fx.server.local_addrs()[0]);
    c.send(b"HEAD /hello/ada?times=3 HTTP/1.1\r\nHost: t\r\n\r\n");
    let res = c.head_response();
    assert_eq!(res.header("content-length"), Some("26"));
    c.send(&support::get("/hello/ada?times=3"));
    let res = c.response();
    assert_eq!(res.body.len(), 26);
}

/// An axum handler takes peregrine's `WebSocketUpgrade` as an extractor, through the
/// tower-http stack, over HTTP/1.1 (101), h2c and HTTP/2 over TLS (extended CONNECT, RFC
/// 8441) with permessage-deflate; a request that is not a handshake is refused 400.
#[test]
fn websocket_extractor_over_h1_h2c_and_tls() {
    let fx = Fixture::new();
    block_on(async {
        for proto in PROTOS {
            let url = fx.url(proto, "/ws").replacen("http", "ws", 1);
            let mut ws = fx
                .peregrine(proto)
                .websocket(&url)
                .http2(proto != Proto::H1)
                .deflate(true)
                .connect()
                .await
                .unwrap_or_else(|e| panic!("{proto:?}: {e}"));
            let first = ws.recv().await.expect("the version").unwrap();
            assert_eq!(first, Message::text(format!("{:?}", proto.http_version())), "{proto:?}");
            let big = "é".repeat(40_000);
            for msg in
                [Message::text("hello"), Message::binary(vec![7u8; 70_000]), Message::text(big)]
            {
                ws.send(msg.clone()).await.unwrap();
                assert_eq!(ws.recv().await.expect("an echo").unwrap(), msg, "{proto:?}");
            }
            ws.close(CloseCode::NORMAL, "done").await.unwrap();

            let res = fx.reqwest(proto).get(fx.url(proto, "/ws")).send().await.unwrap();
            assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{proto:?}");
        }
    });
}
