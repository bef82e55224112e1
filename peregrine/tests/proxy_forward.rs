//! The proxy over real loopback sockets, with peregrine servers as backends: what a backend
//! that echoes its request sees (hop-by-hop fields gone, forwarding fields added, Host kept),
//! bodies and trailers both ways, keep-alive reuse, a backend's bad framing answered 502, a
//! dead backend's requests retried elsewhere, a stalled one answered 504, HTTP/2 clients in
//! front of an HTTP/1.1 backend.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use peregrine::client::Client;
use peregrine::proxy::{
    Eject, Forwarding, HeaderOps, HostHeader, PathRewrite, Proxy, Retries, Route, Timeouts, Trust,
    UpstreamProtocol, Upstreams,
};
use peregrine::{Body, Request, Response, ServerHandle};
use support::{RawClient, spawn};

/// A backend answering with what it received: the request line, every field (names in lower
/// case), the body's length and its trailers, one per line.
async fn echo(mut req: Request) -> Response {
    let mut out = format!("{} {}\n", req.method_str(), req.target());
    for (n, v) in req.headers().iter() {
        out += &format!("{}: {}\n", n.to_ascii_lowercase(), String::from_utf8_lossy(v));
    }
    let mut body = req.take_body();
    let mut len = 0;
    while let Some(chunk) = body.chunk().await {
        len += chunk.expect("the body reaches the backend whole").len();
    }
    out += &format!("body-length: {len}\n");
    if let Some(t) = body.take_trailers() {
        for (n, v) in &t {
            out += &format!("trailer {}: {}\n", n, v.to_str().unwrap());
        }
    }
    Response::new(out)
}

fn proxy_to(backends: &[SocketAddr]) -> Upstreams {
    Upstreams::new(backends.iter().map(|a| format!("http://{a}"))).unwrap()
}

fn spawn_proxy(proxy: Proxy) -> ServerHandle {
    spawn(proxy)
}

fn lines(body: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(body).lines().map(str::to_owned).collect()
}

fn has(lines: &[String], line: &str) -> bool {
    lines.iter().any(|l| l == line)
}

fn field<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    let prefix = format!("{name}: ");
    lines.iter().find_map(|l| l.strip_prefix(prefix.as_str()))
}

#[test]
fn hop_by_hop_fields_removed_and_forwarding_fields_added() {
    let backend = spawn(echo);
    let proxy = spawn_proxy(Proxy::new(proxy_to(&[backend.local_addr()])));
    let mut c = RawClient::connect(proxy.local_addr());
    c.send(
        b"GET /a/b?c=d HTTP/1.1\r\nHost: example.com:8080\r\nConnection: keep-alive, X-Secret\r\n\
          X-Secret: hop\r\nKeep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\nTE: gzip\r\n\
          Upgrade: foo\r\nX-Forwarded-For: 6.6.6.6\r\nX-End: to-end\r\nAccept: */*\r\n\r\n",
    );
    let res = c.response();
    assert_eq!(res.status, 200);
    let seen = lines(&res.body);
    assert!(has(&seen, "GET /a/b?c=d"), "{seen:?}");
    assert_eq!(field(&seen, "host"), Some("example.com:8080"), "Host kept by default");
    for gone in ["connection", "x-secret", "keep-alive", "proxy-connection", "te", "upgrade"] {
        assert_eq!(field(&seen, gone), None, "{gone} reached the backend: {seen:?}");
    }
    assert_eq!(field(&seen, "x-end"), Some("to-end"));
    assert_eq!(field(&seen, "accept"), Some("*/*"));
    assert_eq!(field(&seen, "via"), Some("1.1 peregrine"));
    // The client's own X-Forwarded-For is not trusted: replaced.
    assert_eq!(field(&seen, "x-forwarded-for"), Some("127.0.0.1"));
    assert_eq!(field(&seen, "x-forwarded-proto"), Some("http"));
    assert_eq!(field(&seen, "x-forwarded-host"), Some("example.com:8080"));
    assert!(res.header("date").is_some());
    proxy.shutdown_now();
    backend.shutdown_now();
}

/// RFC 9110 §10.1.4: `TE: trailers` is asked for on the backend's hop (with `Connection: TE`)
/// only when the client asked for it on its own — `Connection` naming `TE` over HTTP/1.1, or
/// HTTP/2's `te: trailers` — and no other TE is passed on.
#[test]
fn te_trailers_follows_the_connection_option() {
    let backend = spawn(echo);
    let h1_pool = proxy_to(&[backend.local_addr()]);
    let h2_pool = proxy_to(&[backend.local_addr()]).protocol(UpstreamProtocol::Http2);
    for (pool, http2) in [(h1_pool, false), (h2_pool, true)] {
        let proxy = spawn_proxy(Proxy::new(pool));
        struct Case {
            fields: &'static str,
            te: Option<&'static str>,
        }
        let cases = [
            Case { fields: "Connection: TE\r\nTE: trailers\r\n", te: Some("trailers") },
            Case {
                fields: "Connection: close, te\r\nTE: gzip, trailers\r\n",
                te: Some("trailers"),
            },
            Case { fields: "TE: trailers\r\n", te: None },
            Case { fields: "Connection: keep-alive\r\nTE: trailers\r\n", te: None },
            Case { fields: "Connection: TE\r\nTE: gzip\r\n", te: None },
        ];
        for case in cases {
            let mut c = RawClient::connect(proxy.local_addr());
            c.send(format!("GET /te HTTP/1.1\r\nHost: h\r\n{}\r\n", case.fields).as_bytes());
            let res = c.response();
            assert_eq!(res.status, 200);
            let seen = lines(&res.body);
            assert_eq!(
                field(&seen, "te"),
                case.te,
                "{} (h2 upstream: {http2}): {seen:?}",
                case.fields
            );
            // HTTP/1.1 names TE in Connection; HTTP/2 has no Connection field.
            let connection = case.te.filter(|_| !http2).map(|_| "te");
            assert_eq!(field(&seen, "connection"), connection, "{}: {seen:?}", case.fields);
        }
        proxy.shutdown_now();
    }
    // An HTTP/2 client's `te: trailers` needs no Connection (RFC 9113 §8.2.2).
    let proxy = spawn_proxy(Proxy::new(proxy_to(&[backend.local_addr()])));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let client = Client::builder().http2_prior_knowledge().build();
        let url = format!("http://{}/te", proxy.local_addr());
        let req = http::Request::get(&url).header("te", "trailers").body(()).unwrap();
        let mut res = client.send(req).await.unwrap();
        let body = std::mem::take(res.body_mut()).to_bytes(1 << 20).await.unwrap();
        let seen = lines(&body);
        assert_eq!(field(&seen, "te"), Some("trailers"), "{seen:?}");
        assert_eq!(field(&seen, "connection"), Some("te"), "{seen:?}");
    });
    proxy.shutdown_now();
    backend.shutdown_now();
}

#[test]
fn routes_rewrite_paths_hosts_and_fields() {
    let api = spawn(echo);
    let web = spawn(echo);
    let proxy = Proxy::builder()
        .route(
            Route::new(proxy_to(&[api.local_addr()]))
                .prefix("/api")
                .rewrite(PathRewrite::StripPrefix)
                .host_header(HostHeader::Upstream)
                .request_headers(HeaderOps::default().set("x-env", "test").remove("x-debug"))
                .response_headers(HeaderOps::default().add("x-route", "api")),
        )
        .route(
            Route::new(proxy_to(&[web.local_addr()]))
                .host_header(HostHeader::Set("web.internal".into())),
        )
        .forwarding(Forwarding::default().forwarded(true).trust(Trust::Everyone))
        .build();
    let proxy = spawn_proxy(proxy);
    let mut c = RawClient::connect(proxy.local_addr());
    c.send(b"GET /api/users?x=1 HTTP/1.1\r\nHost: h\r\nX-Debug: 1\r\nX-Env: prod\r\nX-Forwarded-For: 10.9.9.9\r\n\r\n");
    let res = c.response();
    let seen = lines(&res.body);
    assert!(has(&seen, "GET /users?x=1"), "{seen:?}");
    assert_eq!(field(&seen, "host"), Some(api.local_addr().to_string().as_str()));
    assert_eq!(field(&seen, "x-env"), Some("test"));
    assert_eq!(field(&seen, "x-debug"), None);
    assert_eq!(field(&seen, "x-forwarded-for"), Some("10.9.9.9, 127.0.0.1"), "trusted: appended");
    assert_eq!(field(&seen, "forwarded"), Some("for=127.0.0.1;proto=http;host=h"));
    assert_eq!(res.header("x-route"), Some("api"));
    c.send(b"GET /apix HTTP/1.1\r\nHost: h\r\n\r\n");
    let res = c.response();
    let seen = lines(&res.body);
    assert!(has(&seen, "GET /apix"), "not the api route: {seen:?}");
    assert_eq!(field(&seen, "host"), Some("web.internal"));
    assert_eq!(res.header("x-route"), None);
    proxy.shutdown_now();
    api.shutdown_now();
    web.shutdown_now();
}

/// A chunked request body with trailers reaches the backend whole, trailers apart; a large
/// streamed response comes back whole; the upstream connection is kept alive and reused.
#[test]
fn bodies_and_trailers_both_ways_over_kept_alive_connections() {
    let peers = Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
    let seen_peers = peers.clone();
    let backend = spawn(move |req: Request| {
        seen_peers.lock().unwrap().insert(req.remote_addr().unwrap());
        async move {
            if req.path() == "/big" {
                let (tx, body) = Body::channel(2);
                tokio::task::spawn_local(async move {
                    for i in 0..64u8 {
                        if tx.send(Bytes::from(vec![i; 16 * 1024])).await.is_err() {
                            return;
                        }
                    }
                    let mut t = http::HeaderMap::new();
                    t.insert("x-checksum", "64".parse().unwrap());
                    let _ = tx.finish(t).await;
                });
                return Response::new(body);
            }
            echo(req).await
        }
    });
    let proxy = spawn_proxy(Proxy::new(proxy_to(&[backend.local_addr()])));
    let mut c = RawClient::connect(proxy.local_addr());
    c.send(
        b"POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: x-sum\r\n\r\n\
          5\r\nhello\r\n6\r\n world\r\n0\r\nx-sum: 11\r\n\r\n",
    );
    let res = c.response();
    let seen = lines(&res.body);
    assert!(has(&seen, "body-length: 11"), "{seen:?}");
    assert!(has(&seen, "trailer x-sum: 11"), "{seen:?}");
    // The proxy's own framing: the length was not known.
    assert_eq!(field(&seen, "transfer-encoding"), Some("chunked"));
    for _ in 0..3 {
        c.send(b"GET /big HTTP/1.1\r\nHost: h\r\n\r\n");
        let res = c.response();
        assert_eq!(res.status, 200);
        assert_eq!(res.body.len(), 64 * 16 * 1024);
        assert!(
            res.body.chunks(16 * 1024).enumerate().all(|(i, c)| c.iter().all(|&b| b == i as u8))
        );
        assert_eq!(res.trailers, ["x-checksum: 64"]);
    }
    for i in 0..20 {
        c.send(
            format!("POST /n HTTP/1.1\r\nHost: h\r\nContent-Length: {i}\r\n\r\n{}", "x".repeat(i))
                .as_bytes(),
        );
        let res = c.response();
        assert!(has(&lines(&res.body), &format!("body-length: {i}")));
    }
    assert_eq!(peers.lock().unwrap().len(), 1, "one upstream connection, kept alive");
    proxy.shutdown_now();
    backend.shutdown_now();
}

/// A backend whose response has two different Content-Lengths: the client sees a 502, never
/// the response.
#[test]
fn bad_framing_from_the_backend_becomes_502() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let mut s = stream.unwrap();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
            );
        }
    });
    let pool = proxy_to(&[addr]).retries(Retries { attempts: 0, budget_percent: 20 });
    let proxy = spawn_proxy(Proxy::new(pool));
    let mut c = RawClient::connect(proxy.local_addr());
    c.send(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    let res = c.response();
    assert_eq!(res.status, 502);
    assert!(!String::from_utf8_lossy(&res.body).contains("hello"));
    proxy.shutdown_now();
}

/// Round-robin over two backends, one of them dead: every request is answered (the dead one's
/// retried on the live one), and the dead one is ejected after its failures.
#[test]
fn a_dead_backend_is_retried_elsewhere_and_ejected() {
    let live_hits = Arc::new(AtomicUsize::new(0));
    let hits = live_hits.clone();
    let live = spawn(move |_req: Request| {
        hits.fetch_add(1, Ordering::Relaxed);
        async { "live" }
    });
    let dead = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let pool = proxy_to(&[dead, live.local_addr()])
        .eject(Eject { after: 2, duration: Duration::from_secs(60) });
    let proxy = Proxy::new(pool);
    let handle = spawn_proxy(proxy.clone());
    let mut c = RawClient::connect(handle.local_addr());
    for _ in 0..10 {
        c.send(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
        let res = c.response();
        assert_eq!(res.status, 200);
        assert_eq!(res.body, b"live");
    }
    assert_eq!(live_hits.load(Ordering::Relaxed), 10);
    let metrics = proxy.metrics();
    assert!(
        metrics.contains(&format!("peregrine_upstream_up{{upstream=\"http://{dead}\"}} 0")),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "peregrine_upstream_failures_total{{upstream=\"http://{dead}\"}} 2"
        )),
        "{metrics}"
    );
    // A POST with a body to a dead server is still retried: nothing was sent.
    c.send(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi");
    assert_eq!(c.response().status, 200);
    handle.shutdown_now();
    live.shutdown_now();
}

/// A backend that never answers: 504 once the response-head timeout passes, while the other
/// backend keeps answering at once.
#[test]
fn a_stalled_backend_times_out_with_504_and_slows_no_other() {
    let stall = TcpListener::bind("127.0.0.1:0").unwrap();
    let stall_addr = stall.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in stall.incoming().take(8) {
            held.push(s);
        }
    });
    let fast = spawn(|_req: Request| async { "fast" });
    let timeouts = Timeouts { response_head: Duration::from_millis(300), ..Timeouts::default() };
    let slow_pool = proxy_to(&[stall_addr])
        .timeouts(timeouts)
        .retries(Retries { attempts: 0, budget_percent: 0 });
    let proxy = Proxy::builder()
        .route(Route::new(slow_pool).prefix("/slow"))
        .route(Route::new(proxy_to(&[fast.local_addr()])))
        .build();
    let handle = spawn_proxy(proxy);
    let addr = handle.local_addr();
    let slow = std::thread::spawn(move || {
        let mut c = RawClient::connect(addr);
        c.send(b"GET /slow HTTP/1.1\r\nHost: h\r\n\r\n");
        let started = std::time::Instant::now();
        let res = c.response();
        (res.status, started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(50));
    let mut c = RawClient::connect(addr);
    let started = std::time::Instant::now();
    c.send(b"GET /fast HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(c.response().body, b"fast");
    assert!(started.elapsed() < Duration::from_millis(200));
    let (status, took) = slow.join().unwrap();
    assert_eq!(status, 504);
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(5), "{took:?}");
    handle.shutdown_now();
    fast.shutdown_now();
}

/// HTTP/2 clients (h2c by prior knowledge) through the proxy to an HTTP/1.1 backend, and the
/// proxy to an h2c backend.
#[test]
fn http2_in_front_and_behind() {
    let backend = spawn(echo);
    let h1_proxy = spawn_proxy(Proxy::new(proxy_to(&[backend.local_addr()])));
    let h2_pool = proxy_to(&[backend.local_addr()]).protocol(UpstreamProtocol::Http2);
    let h2_proxy = spawn_proxy(Proxy::new(h2_pool));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let client = Client::builder().http2_prior_knowledge().build();
        for proxy in [&h1_proxy, &h2_proxy] {
            let url = format!("http://{}/x?y", proxy.local_addr());
            let req = http::Request::post(&url).header("x-a", "1").body("payload").unwrap();
            let mut res = client.send(req).await.unwrap();
            assert_eq!(res.status(), 200);
            let body = std::mem::take(res.body_mut()).to_bytes(1 << 20).await.unwrap();
            let seen = lines(&body);
            assert!(has(&seen, "POST /x?y"), "{seen:?}");
            assert!(has(&seen, "body-length: 7"), "{seen:?}");
            assert_eq!(field(&seen, "x-a"), Some("1"));
            assert_eq!(field(&seen, "via"), Some("2 peregrine"));
        }
    });
    h1_proxy.shutdown_now();
    h2_proxy.shutdown_now();
    backend.shutdown_now();
}

/// The access log names the upstream that answered and its time; the metrics endpoint shows
/// each upstream's counters after the server's own.
#[test]
fn access_log_and_metrics_name_the_upstream() {
    let backend = spawn(|_req: Request| async { "ok" });
    let proxy = Proxy::new(proxy_to(&[backend.local_addr()]));
    let logged = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = logged.clone();
    let p = proxy.clone();
    let handle = peregrine::Server::bind("127.0.0.1:0")
        .workers(1)
        .config(support::test_config())
        .metrics("/metrics")
        .metrics_extra(move || p.metrics())
        .access_log(move |e| {
            sink.lock().unwrap().push((
                e.target.to_owned(),
                e.upstream.map(str::to_owned),
                e.upstream_duration,
            ));
        })
        .spawn(proxy)
        .unwrap();
    let mut c = RawClient::connect(handle.local_addr());
    c.send(b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(c.response().body, b"ok");
    c.send(b"GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n");
    let metrics = String::from_utf8(c.response().body).unwrap();
    let upstream = format!("http://{}", backend.local_addr());
    assert!(metrics.contains("peregrine_requests_total"), "{metrics}");
    assert!(
        metrics
            .contains(&format!("peregrine_upstream_requests_total{{upstream=\"{upstream}\"}} 1")),
        "{metrics}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while logged.lock().unwrap().len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let logged = logged.lock().unwrap();
    assert_eq!(logged[0].0, "/a");
    assert_eq!(logged[0].1.as_deref(), Some(upstream.as_str()));
    assert!(logged[0].2.is_some());
    assert_eq!((logged[1].0.as_str(), logged[1].1.as_deref()), ("/metrics", None));
    handle.shutdown_now();
    backend.shutdown_now();
}

/// A route to a directory beside a route to a pool: `/static/...` from files, the rest
/// proxied.
#[test]
fn a_route_to_files_beside_a_pool() {
    let dir = std::env::temp_dir().join(format!("peregrine-proxy-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), b"from a file").unwrap();
    let backend = spawn(|_req: Request| async { "proxied" });
    let files = peregrine::files::ServeDir::new(&dir).unwrap();
    let proxy = Proxy::builder()
        .route(Route::files(files).prefix("/static").rewrite(PathRewrite::StripPrefix))
        .route(Route::new(proxy_to(&[backend.local_addr()])))
        .build();
    let handle = spawn_proxy(proxy);
    let mut c = RawClient::connect(handle.local_addr());
    c.send(b"GET /static/a.txt HTTP/1.1\r\nHost: h\r\n\r\n");
    let res = c.response();
    assert_eq!((res.status, res.body.as_slice()), (200, &b"from a file"[..]));
    c.send(b"GET /static/missing.txt HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(c.response().status, 404);
    c.send(b"GET /a.txt HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(c.response().body, b"proxied");
    handle.shutdown_now();
    backend.shutdown_now();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reload replaces the routes for the next requests, on a connection that stays open.
#[test]
fn reload_switches_pools_without_dropping_the_connection() {
    let a = spawn(|_req: Request| async { "a" });
    let b = spawn(|_req: Request| async { "b" });
    let proxy = Proxy::new(proxy_to(&[a.local_addr()]));
    let handle = spawn_proxy(proxy.clone());
    let mut c = RawClient::connect(handle.local_addr());
    c.send(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(c.response().body, b"a");
    proxy.reload(Proxy::builder().route(Route::new(proxy_to(&[b.local_addr()]))));
    c.send(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(c.response().body, b"b");
    handle.shutdown_now();
    a.shutdown_now();
    b.shutdown_now();
}
