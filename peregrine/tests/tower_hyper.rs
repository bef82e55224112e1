//! peregrine's `Router` as a tower service: under hyper's server (HTTP/1.1 and HTTP/2, driven
//! by reqwest), with path parameters, a streamed body and its trailers, and the client's
//! address from the request's extensions; and inside a tower-http stack that peregrine's
//! server serves again.

mod support;

use std::io::Read;
use std::net::SocketAddr;

use bytes::Bytes;
use http::HeaderValue;
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use peregrine::routing::{get, post};
use peregrine::tower::RemoteAddr;
use peregrine::{Body, BodyError, Request, Response, Router};
use support::RawClient;
use tower::ServiceBuilder;
use tower_http::compression::CompressionLayer;

async fn user(req: Request) -> String {
    format!("user {}", req.param("id").unwrap_or_default())
}

/// The body back, with its `x-checksum` trailer and the request's authority as fields.
async fn echo(mut req: Request) -> Result<Response, BodyError> {
    let host = req.authority().unwrap_or("-").to_owned();
    let body = req.body_mut();
    let mut data = Vec::new();
    while let Some(chunk) = body.chunk().await {
        data.extend_from_slice(&chunk?);
    }
    let trailer = body
        .take_trailers()
        .and_then(|t| t.get("x-checksum").cloned())
        .unwrap_or(HeaderValue::from_static("none"));
    Ok(Response::new(data)
        .with_header("x-checksum".parse().unwrap(), trailer)
        .with_header("x-host".parse().unwrap(), HeaderValue::from_str(&host).unwrap()))
}

async fn who(req: Request) -> String {
    format!("{:?}", req.remote_addr())
}

fn router() -> Router {
    Router::new().route("/users/{id}", get(user)).route("/echo", post(echo)).route("/who", get(who))
}

/// Runs futures that are not `Send` (the router's) on the current thread, for hyper's HTTP/2.
#[derive(Clone, Copy)]
struct LocalExec;

impl<F: std::future::Future + 'static> hyper::rt::Executor<F> for LocalExec {
    fn execute(&self, fut: F) {
        tokio::task::spawn_local(fut);
    }
}

/// Serves the router with hyper (HTTP/2 by prior knowledge when `h2`), each request told its
/// client in a `RemoteAddr`.
async fn serve_with_hyper(listener: tokio::net::TcpListener, h2: bool) {
    loop {
        let (stream, peer) = listener.accept().await.unwrap();
        let router = router();
        let svc =
            hyper::service::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(RemoteAddr::new(peer));
                tower::ServiceExt::oneshot(router.clone(), req)
            });
        tokio::task::spawn_local(async move {
            let io = TokioIo::new(stream);
            let _ = if h2 {
                hyper::server::conn::http2::Builder::new(LocalExec).serve_connection(io, svc).await
            } else {
                hyper::server::conn::http1::Builder::new().serve_connection(io, svc).await
            };
        });
    }
}

/// A streamed request body of `a` then `b`, ended by an `x-checksum` trailer.
fn body_with_trailers(a: &'static str, b: &'static str) -> Body {
    let (tx, body) = Body::channel(1);
    tokio::task::spawn_local(async move {
        tx.send(Bytes::from_static(a.as_bytes())).await.unwrap();
        tx.send(Bytes::from_static(b.as_bytes())).await.unwrap();
        let mut trailers = http::HeaderMap::new();
        trailers.insert("x-checksum", HeaderValue::from_static("f00d"));
        tx.finish(trailers).await.unwrap();
    });
    body
}

#[test]
fn the_router_under_hyper_over_http1_and_http2() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        for h2 in [false, true] {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr: SocketAddr = listener.local_addr().unwrap();
            let server = tokio::task::spawn_local(serve_with_hyper(listener, h2));
            let client = if h2 {
                reqwest::Client::builder().http2_prior_knowledge().build().unwrap()
            } else {
                reqwest::Client::builder().http1_only().build().unwrap()
            };
            let version = if h2 { http::Version::HTTP_2 } else { http::Version::HTTP_11 };

            let res = client.get(format!("http://{addr}/users/42")).send().await.unwrap();
            assert_eq!(res.version(), version);
            assert_eq!(res.text().await.unwrap(), "user 42");

            // hyper's HTTP/1.1 client sends the trailers a Trailer field announced.
            let res = client
                .post(format!("http://{addr}/echo"))
                .header("trailer", "x-checksum")
                .body(reqwest::Body::wrap(body_with_trailers("streamed ", "both ways")))
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 200, "h2: {h2}");
            assert_eq!(res.headers()["x-checksum"], "f00d", "h2: {h2}");
            // HTTP/2's authority is in hyper's Uri; the handler reads it as Host.
            assert_eq!(res.headers()["x-host"], addr.to_string(), "h2: {h2}");
            assert_eq!(res.text().await.unwrap(), "streamed both ways");

            let res = client.get(format!("http://{addr}/who")).send().await.unwrap();
            let text = res.text().await.unwrap();
            assert!(text.starts_with("Some(127.0.0.1:"), "{text}");

            let res = client.get(format!("http://{addr}/nowhere")).send().await.unwrap();
            assert_eq!(res.status(), 404);
            server.abort();
        }
    });
}

/// Router → tower-http's compression and tower's `map_response` → peregrine's server: the
/// body comes back compressed, and the client's address goes through the stack to the
/// router's handler.
#[test]
fn the_router_inside_a_tower_stack_on_peregrine() {
    let stack = ServiceBuilder::new()
        .layer(CompressionLayer::new())
        .map_response(|mut res: http::Response<_>| {
            res.headers_mut().insert("x-stack", HeaderValue::from_static("tower"));
            res
        })
        .service(router());
    let server = support::spawn(peregrine::tower::service(stack));
    let mut c = RawClient::connect(server.local_addr());
    let text = "compress me ".repeat(100);
    c.send(
        format!(
            "POST /echo HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nContent-Length: {}\r\n\r\n{text}",
            text.len()
        )
        .as_bytes(),
    );
    let res = c.response();
    assert_eq!(res.header("x-stack"), Some("tower"));
    assert_eq!(res.header("content-encoding"), Some("gzip"));
    assert_eq!(res.header("x-host"), Some("t"));
    let mut plain = String::new();
    flate2::read::GzDecoder::new(&res.body[..]).read_to_string(&mut plain).unwrap();
    assert_eq!(plain, text);

    c.send(&support::get("/who"));
    let res = c.response();
    let me = c.tcp().local_addr().unwrap();
    assert_eq!(String::from_utf8(res.body).unwrap(), format!("Some({me})"));
}

/// A `Body` through the stack and back is the same body: its frames, trailers last.
#[test]
fn a_body_through_http_body_keeps_its_trailers() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let collected = body_with_trailers("a", "b").collect().await.unwrap();
        assert_eq!(collected.trailers().unwrap()["x-checksum"], "f00d");
        assert_eq!(collected.to_bytes(), "ab");
    });
}
