//! Plain tower services on peregrine's server (`peregrine::tower::service`): readiness holds
//! requests back without losing them and `call` never comes before `Ready`; errors are 500 on
//! a connection that goes on; the PROXY protocol's client reaches `ConnectInfo` and
//! `RemoteAddr`; an inherited listener; graceful shutdown; futures that are not `Send`.

mod support;

use std::convert::Infallible;
use std::future::Ready;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use peregrine::server::ProxyProtocol;
use peregrine::tower::RemoteAddr;
use peregrine::{Body, Server};
use support::{RawClient, get};
use tower::Service;

/// A service that is not ready until the gate opens; it answers with the request's path.
/// `readied` is this clone's own: `call` checks that `poll_ready` said `Ready` first.
#[derive(Clone, Default)]
struct Gate {
    open: Arc<AtomicBool>,
    waiting: Arc<Mutex<Vec<Waker>>>,
    calls: Arc<AtomicUsize>,
    readied: bool,
}

impl Gate {
    fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
        for waker in self.waiting.lock().unwrap().drain(..) {
            waker.wake();
        }
    }
}

impl Service<http::Request<Body>> for Gate {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Ready<Result<http::Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        if !self.open.load(Ordering::SeqCst) {
            self.waiting.lock().unwrap().push(cx.waker().clone());
            // Opened between the check and the registration: its wake may have been missed.
            if !self.open.load(Ordering::SeqCst) {
                return Poll::Pending;
            }
        }
        self.readied = true;
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        assert!(std::mem::take(&mut self.readied), "called without Ready from poll_ready");
        self.calls.fetch_add(1, Ordering::SeqCst);
        std::future::ready(Ok(http::Response::new(Body::from(req.uri().path().to_owned()))))
    }
}

#[test]
fn a_service_not_ready_holds_requests_until_it_is() {
    let gate = Gate::default();
    let server = support::spawn(peregrine::tower::service(gate.clone()));
    let mut a = RawClient::connect(server.local_addr());
    a.send(&[get("/one"), get("/two")].concat());
    let mut b = RawClient::connect(server.local_addr());
    b.send(&get("/three"));
    // Nothing comes while the service is not ready, and nothing is lost.
    for c in [&mut a, &mut b] {
        c.tcp().set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        let err = c.fill().expect_err("no response while the service is not ready");
        assert!(matches!(
            err.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ));
        c.tcp().set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    }
    assert_eq!(gate.calls.load(Ordering::SeqCst), 0);
    gate.open();
    assert_eq!(a.response().body, b"/one");
    assert_eq!(a.response().body, b"/two");
    assert_eq!(b.response().body, b"/three");
    assert_eq!(gate.calls.load(Ordering::SeqCst), 3);
}

#[test]
fn service_errors_answer_500_and_the_connection_goes_on() {
    let svc = tower::service_fn(|req: http::Request<Body>| async move {
        match req.uri().path() {
            "/fail" => Err("the service failed (expected by the test)"),
            path => Ok(http::Response::new(Body::from(path.to_owned()))),
        }
    });
    let server = support::spawn(peregrine::tower::service(svc));
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/fail"));
    let res = c.response();
    assert_eq!(res.status, 500);
    assert_eq!(res.body, b"internal server error");
    c.send(&get("/ok"));
    assert_eq!(c.response().body, b"/ok");
}

/// A service whose `poll_ready` fails: the request is answered 500, never called.
#[test]
fn a_readiness_error_answers_500() {
    #[derive(Clone)]
    struct Broken;
    impl Service<http::Request<Body>> for Broken {
        type Response = http::Response<Body>;
        type Error = std::io::Error;
        type Future = Ready<Result<http::Response<Body>, std::io::Error>>;
        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), std::io::Error>> {
            Poll::Ready(Err(std::io::Error::other("overloaded (expected by the test)")))
        }
        fn call(&mut self, _: http::Request<Body>) -> Self::Future {
            panic!("called after poll_ready failed")
        }
    }
    let server = support::spawn(peregrine::tower::service(Broken));
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/"));
    assert_eq!(c.response().status, 500);
}

/// What the service sees of the request: method, URI, version, fields, who sent it.
async fn describe(req: http::Request<Body>) -> Result<http::Response<Body>, Infallible> {
    let remote = req.extensions().get::<RemoteAddr>().cloned();
    let connect_info =
        req.extensions().get::<axum::extract::ConnectInfo<SocketAddr>>().map(|c| c.0);
    let text = format!(
        "{} {} {:?} host={:?} x-a={:?} remote={:?} proxied={} connect_info={:?}",
        req.method(),
        req.uri(),
        req.version(),
        req.headers().get("host"),
        req.headers().get_all("x-a").iter().collect::<Vec<_>>(),
        remote.as_ref().map(RemoteAddr::addr),
        remote.as_ref().is_some_and(|r| r.proxy().is_some()),
        connect_info,
    );
    Ok(http::Response::new(Body::from(text)))
}

#[test]
fn the_request_as_a_service_sees_it() {
    let server = support::spawn(peregrine::tower::service(tower::service_fn(describe)));
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"PROPFIND /a/b?c=d HTTP/1.1\r\nHost: example.com\r\nX-A: 1\r\nx-a: 2\r\n\r\n");
    let me = c.tcp().local_addr().unwrap();
    let body = String::from_utf8(c.response().body).unwrap();
    assert_eq!(
        body,
        format!(
            "PROPFIND /a/b?c=d HTTP/1.1 host=Some(\"example.com\") x-a=[\"1\", \"2\"] \
             remote=Some({me}) proxied=false connect_info=Some({me})"
        )
    );
}

/// The target reaches the service as sent, in each form (RFC 9112 §3.2), its bytes shared
/// with the head; the service sees the method it was sent.
#[test]
fn targets_reach_the_service_as_sent() {
    let server = support::spawn(peregrine::tower::service(tower::service_fn(describe)));
    let cases = [
        ("GET", "/a/b?c=d&e", "example.com"),
        ("GET", "//double", "example.com"),
        ("GET", "http://example.com/abs?q", "example.com"),
        ("OPTIONS", "*", "example.com"),
        ("DELETE", "/%7Euser", "example.com"),
    ];
    for (method, target, host) in cases {
        let mut c = RawClient::connect(server.local_addr());
        c.send(format!("{method} {target} HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes());
        let res = c.response();
        let body = String::from_utf8(res.body).unwrap();
        assert!(body.starts_with(&format!("{method} {target} HTTP/1.1 ")), "{target}: {body}");
    }
}

/// Behind a trusted balancer, the client its PROXY header names is the service's
/// `ConnectInfo` and `RemoteAddr`, with what the header said.
#[test]
fn the_proxy_protocol_client_is_connect_info() {
    let server = Server::bind("127.0.0.1:0")
        .workers(1)
        .config(support::test_config())
        .proxy_protocol(ProxyProtocol::new().trust("127.0.0.0/8".parse().unwrap()))
        .spawn(peregrine::tower::service(tower::service_fn(describe)))
        .unwrap();
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"PROXY TCP4 198.51.100.9 192.0.2.1 51000 80\r\n");
    c.send(&get("/"));
    let body = String::from_utf8(c.response().body).unwrap();
    assert!(
        body.ends_with(
            "remote=Some(198.51.100.9:51000) proxied=true connect_info=Some(198.51.100.9:51000)"
        ),
        "{body}"
    );
}

/// A listening socket made elsewhere (as systemd passes them) serves a service too.
#[test]
fn an_inherited_listener_serves_a_service() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().route("/", axum::routing::get(|| async { "inherited" }));
    let server = Server::from_listener(listener)
        .workers(1)
        .config(support::test_config())
        .spawn(peregrine::tower::service(app))
        .unwrap();
    let mut c = RawClient::connect(addr);
    c.send(&get("/"));
    assert_eq!(c.response().body, b"inherited");
    server.shutdown();
    server.join().unwrap();
}

/// A drain lets a service's request in flight finish, told the connection closes.
#[test]
fn graceful_shutdown_finishes_a_request_in_flight() {
    let svc = tower::service_fn(|_req: http::Request<Body>| async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        Ok::<_, Infallible>(http::Response::new(Body::from("finished")))
    });
    let server = support::spawn(peregrine::tower::service(svc));
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/"));
    std::thread::sleep(Duration::from_millis(100));
    server.shutdown();
    let res = c.response();
    assert_eq!(res.body, b"finished");
    assert_eq!(res.header("connection"), Some("close"));
    server.join().unwrap();
}

/// The service's future runs on the worker thread that took the request: it need not be
/// `Send`.
#[test]
fn a_future_that_is_not_send() {
    let svc = tower::service_fn(|_req: http::Request<Body>| {
        let local = std::rc::Rc::new("not Send");
        async move {
            tokio::task::yield_now().await;
            Ok::<_, Infallible>(http::Response::new(Body::from(*local)))
        }
    });
    let server = support::spawn(peregrine::tower::service(svc));
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/"));
    assert_eq!(c.response().body, b"not Send");
}

/// A body of known length in two frames, the second after a wait: sent with its
/// Content-Length, the first frame (taken early to see whether it was all) not lost.
#[test]
fn a_body_of_known_length_in_parts_keeps_its_length() {
    struct Parts {
        parts: std::collections::VecDeque<bytes::Bytes>,
        waited: bool,
    }
    impl http_body::Body for Parts {
        type Data = bytes::Bytes;
        type Error = Infallible;
        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, Infallible>>> {
            if self.parts.len() == 1 && !std::mem::replace(&mut self.waited, true) {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(self.parts.pop_front().map(|p| Ok(http_body::Frame::data(p))))
        }
        fn size_hint(&self) -> http_body::SizeHint {
            http_body::SizeHint::with_exact(self.parts.iter().map(|p| p.len() as u64).sum())
        }
    }
    let svc = tower::service_fn(|_req: http::Request<Body>| async {
        let parts = [&b"abc"[..], b"def"].map(bytes::Bytes::from_static).into();
        Ok::<_, Infallible>(http::Response::new(Parts { parts, waited: false }))
    });
    let server = support::spawn(peregrine::tower::service(svc));
    let mut c = RawClient::connect(server.local_addr());
    for _ in 0..2 {
        c.send(&get("/"));
        let res = c.response();
        assert_eq!(res.header("content-length"), Some("6"));
        assert_eq!(res.body, b"abcdef");
    }
}

/// Over HTTP/2 the service sees the version, the `:authority` as Host (RFC 9113 §8.3.1), and
/// a CONNECT's authority as its `Uri` (§8.5: it has no `:path`).
#[test]
fn http2_requests_as_a_service_sees_them() {
    let server = support::spawn(peregrine::tower::service(tower::service_fn(describe)));
    let addr = server.local_addr();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (send, conn) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let cases = [
            ("GET", "http://example.com/p?q", "GET /p?q HTTP/2.0 host=Some(\"example.com\")"),
            (
                "CONNECT",
                "example.com:443",
                "CONNECT example.com:443 HTTP/2.0 host=Some(\"example.com:443\")",
            ),
        ];
        for (method, uri, expect) in cases {
            let req = http::Request::builder().method(method).uri(uri).body(()).unwrap();
            let mut send = send.clone().ready().await.unwrap();
            let (fut, _stream) = send.send_request(req, method == "GET").unwrap();
            let res = fut.await.unwrap();
            assert_eq!(res.status(), 200, "{method}");
            let mut body = res.into_body();
            let mut text = Vec::new();
            while let Some(chunk) = body.data().await {
                text.extend_from_slice(&chunk.unwrap());
            }
            let text = String::from_utf8(text).unwrap();
            assert!(text.starts_with(expect), "{text}");
        }
    });
}
