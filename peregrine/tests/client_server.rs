//! The client against this crate's server over loopback, HTTP/1.1 and h2c: the pooled
//! `Client` on a multi-threaded runtime (inside spawned, so `Send`, tasks) and the
//! one-connection API (pipelining, multiplexing, streamed bodies, trailers, HEAD, limits).

mod support;

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue};
use peregrine::client::conn::{Config, Connection, Event, Protocol, Versions};
use peregrine::client::{Client, Origin};
use peregrine::{Body, Method, Request, Response};

/// Echoes the request: method, path, a header, the body; trailers on `/trailers`; a large body
/// on `/big/N`.
async fn app(req: Request) -> Response {
    let path = req.path().to_owned();
    let method = req.method_str().to_owned();
    let x = req.header("x-test").map(|v| String::from_utf8_lossy(v).into_owned());
    if let Some(n) = path.strip_prefix("/big/") {
        let n: usize = n.parse().unwrap_or(0);
        return Response::new(vec![b'b'; n]);
    }
    if path == "/trailers" {
        let mut t = HeaderMap::new();
        t.insert("x-sum", HeaderValue::from_static("42"));
        return Response::new(Body::from("with trailers").with_trailers(t));
    }
    let body = req.into_body().to_bytes(64 << 20).await.unwrap_or_default();
    let text = format!("{method} {path} x={} len={}", x.unwrap_or_default(), body.len());
    Response::new(text).with_header(http::header::SERVER, HeaderValue::from_static("peregrine"))
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

async fn text(mut res: Response) -> String {
    let body = std::mem::take(res.body_mut()).to_bytes(1 << 30).await.unwrap();
    String::from_utf8(body.to_vec()).unwrap()
}

fn clients() -> [(&'static str, Client); 2] {
    [
        ("http/1.1", Client::builder().http1_only().build()),
        ("h2c", Client::builder().http2_prior_knowledge().build()),
    ]
}

#[test]
fn client_get_post_and_reuse_over_both_protocols() {
    let server = support::spawn(app);
    let base = format!("http://127.0.0.1:{}", server.local_addr().port());
    rt().block_on(async {
        for (name, client) in clients() {
            for i in 0..5 {
                let res = client.get(&format!("{base}/get/{i}")).await.unwrap();
                assert_eq!(res.status(), 200, "{name}");
                assert_eq!(res.headers().get(&http::header::SERVER).unwrap(), "peregrine");
                assert_eq!(text(res).await, format!("GET /get/{i} x= len=0"), "{name}");
            }
            let req = http::Request::post(format!("{base}/post"))
                .header("x-test", "yes")
                .body(Bytes::from(vec![7u8; 100_000]))
                .unwrap();
            let res = client.send(req).await.unwrap();
            assert_eq!(text(res).await, "POST /post x=yes len=100000", "{name}");
            // One connection served everything.
            let (idle, h2) = client.pool_size();
            assert_eq!(idle + h2, 1, "{name}: pool {idle} idle HTTP/1.1, {h2} HTTP/2");
        }
    });
    server.shutdown();
}

#[test]
fn client_streams_bodies_both_ways_with_trailers() {
    let server = support::spawn(app);
    let base = format!("http://127.0.0.1:{}", server.local_addr().port());
    rt().block_on(async {
        for (name, client) in clients() {
            // A streamed request body of unknown length (chunked / DATA until END_STREAM).
            let (tx, body) = Body::channel(4);
            tokio::spawn(async move {
                for _ in 0..10 {
                    tx.send(Bytes::from(vec![1u8; 50_000])).await.unwrap();
                }
            });
            let req = http::Request::put(format!("{base}/upload")).body(body).unwrap();
            let res = client.send(req).await.unwrap();
            assert_eq!(text(res).await, "PUT /upload x= len=500000", "{name}");

            // A response body past the flow-control windows and the eager read.
            let res = client.get(&format!("{base}/big/3000000")).await.unwrap();
            let body = text(res).await;
            assert_eq!(body.len(), 3_000_000, "{name}");

            let mut res = client.get(&format!("{base}/trailers")).await.unwrap();
            let mut body = std::mem::take(res.body_mut());
            let mut got = Vec::new();
            while let Some(chunk) = body.chunk().await {
                got.extend_from_slice(&chunk.unwrap());
            }
            assert_eq!(got, b"with trailers", "{name}");
            let trailers = body.take_trailers().expect("trailers");
            assert_eq!(trailers["x-sum"], "42", "{name}");

            // HEAD: the length of the GET, no body.
            let req = http::Request::head(format!("{base}/big/10")).body(()).unwrap();
            let res = client.send(req).await.unwrap();
            assert_eq!(res.headers().get(&http::header::CONTENT_LENGTH).unwrap(), "10");
            assert_eq!(text(res).await, "", "{name}");
        }
    });
    server.shutdown();
}

#[test]
fn client_concurrent_requests_from_spawned_tasks() {
    let server = support::spawn(app);
    let base = format!("http://127.0.0.1:{}", server.local_addr().port());
    rt().block_on(async {
        for (name, client) in clients() {
            let mut tasks = Vec::new();
            for i in 0..40 {
                let (client, url) = (client.clone(), format!("{base}/c/{i}"));
                tasks
                    .push(tokio::spawn(async move { text(client.get(&url).await.unwrap()).await }));
            }
            for (i, t) in tasks.into_iter().enumerate() {
                assert_eq!(t.await.unwrap(), format!("GET /c/{i} x= len=0"), "{name}");
            }
            let (idle, h2) = client.pool_size();
            if name == "h2c" {
                assert_eq!((idle, h2), (0, 1), "{name}: one multiplexed connection");
            } else {
                assert!(idle >= 1 && h2 == 0, "{name}: {idle} idle");
            }
        }
    });
    server.shutdown();
}

#[test]
fn client_body_limit_and_timeouts() {
    let server = support::spawn(app);
    let base = format!("http://127.0.0.1:{}", server.local_addr().port());
    rt().block_on(async {
        for versions in [Versions::Http1Only, Versions::Http2Only] {
            let config = Config::default().max_body_bytes(1000).versions(versions);
            let client = Client::builder().connection_config(config).build();
            let mut res = client.get(&format!("{base}/big/5000")).await.unwrap();
            let err = std::mem::take(res.body_mut()).to_bytes(1 << 20).await.unwrap_err();
            assert!(err.is_too_large(), "{versions:?}: {err}");
            // Under the limit is fine, on the same client.
            let res = client.get(&format!("{base}/big/900")).await.unwrap();
            assert_eq!(text(res).await.len(), 900);
        }
        // Nothing listens: a connect error, not a panic.
        let err = Client::new().get("http://127.0.0.1:1/").await.unwrap_err();
        assert!(err.is_connect(), "{err}");
        let err = Client::new().get("http://127.0.0.1:1/\u{7f}").await.unwrap_err();
        assert!(err.is_request(), "{err}");
    });
    server.shutdown();
}

/// Reads one whole response from a connection: (status, body, trailers).
async fn read_response(conn: &mut Connection, buf: &mut Vec<u8>) -> (u16, Option<HeaderMap>) {
    let mut status = 0;
    loop {
        match conn.next_event().await.unwrap() {
            Event::Head { head, .. } => status = head.status(),
            Event::Data { data, .. } => buf.extend_from_slice(data),
            Event::End { trailers, .. } => return (status, trailers),
            Event::Failed { error, .. } => panic!("{error}"),
            Event::Writable { .. } => {}
        }
    }
}

#[test]
fn connection_pipelines_and_multiplexes() {
    let server = support::spawn(app);
    let addr = server.local_addr();
    rt().block_on(async {
        for versions in [Versions::Http1Only, Versions::Http2Only] {
            let config = Config::default().versions(versions);
            let url = format!("http://{addr}");
            let mut conn = Connection::connect(&url, &config).await.unwrap();
            let want =
                if versions == Versions::Http2Only { Protocol::Http2 } else { Protocol::Http1 };
            assert_eq!(conn.protocol(), want);
            // Ten requests at once: pipelined (HTTP/1.1) or multiplexed (HTTP/2).
            let mut ids = Vec::new();
            for i in 0..10 {
                let target = format!("/p/{i}");
                ids.push(
                    conn.send_request(Method::Get, &target, &[("x-test", b"v")], &[]).unwrap(),
                );
            }
            assert_eq!(conn.in_flight(), 10);
            let mut bodies = std::collections::HashMap::new();
            let mut ended = 0;
            while ended < 10 {
                match conn.next_event().await.unwrap() {
                    Event::Data { id, data } => {
                        bodies.entry(id).or_insert_with(Vec::new).extend_from_slice(data)
                    }
                    Event::End { .. } => ended += 1,
                    Event::Failed { error, .. } => panic!("{error}"),
                    _ => {}
                }
            }
            for (i, id) in ids.iter().enumerate() {
                assert_eq!(bodies[id], format!("GET /p/{i} x=v len=0").as_bytes());
            }
            // A POST is not pipelined behind others, nor others behind it.
            if versions == Versions::Http1Only {
                conn.send_request(Method::Get, "/a", &[], &[]).unwrap();
                assert!(conn.send_request(Method::Post, "/b", &[], b"x").unwrap_err().is_request());
                read_response(&mut conn, &mut Vec::new()).await;
            }
            // A streamed body of known length.
            let id = conn.send_request_streaming("POST", "/s", &[], Some(6)).unwrap();
            assert_eq!(conn.send_data(id, b"abc", false).unwrap(), 3);
            assert_eq!(conn.send_data(id, b"def", true).unwrap(), 3);
            let mut body = Vec::new();
            let (status, _) = read_response(&mut conn, &mut body).await;
            assert_eq!((status, &body[..]), (200, &b"POST /s x= len=6"[..]));
            // Trailers.
            conn.send_request(Method::Get, "/trailers", &[], &[]).unwrap();
            let (_, trailers) = read_response(&mut conn, &mut Vec::new()).await;
            assert_eq!(trailers.unwrap()["x-sum"], "42");
            assert!(conn.is_reusable());
        }
    });
    server.shutdown();
}

/// The path of a target, as the app echoes it (without the query).
fn path_of(target: &str) -> &str {
    target.split('?').next().unwrap_or(target)
}

/// Regression for the reuse of a kept request encoding around a new target: requests that
/// differ only in their target (paths HPACK indexes statically, Huffman-codes or sends as
/// they are, repeats, a refused target in between) and requests that differ in a field or
/// the method reach the server as sent, pipelined and one at a time.
#[test]
fn connection_reuses_the_encoding_around_a_new_target() {
    let server = support::spawn(app);
    let addr = server.local_addr();
    let long = format!("/{}", "z9".repeat(1500));
    let steps: Vec<(Method, String, &[u8])> = vec![
        (Method::Get, "/".into(), b"v"),
        (Method::Get, "/index.html".into(), b"v"),
        (Method::Get, "/a?q=1".into(), b"v"),
        (Method::Get, "/a?q=1".into(), b"v"),
        (Method::Get, "/%7E~".into(), b"v"),
        (Method::Get, long.clone(), b"v"),
        (Method::Get, "/b".into(), b"w"),
        (Method::Head, "/c".into(), b"w"),
        (Method::Get, "/c".into(), b"w"),
        (Method::Get, "/".into(), b"w"),
    ];
    rt().block_on(async {
        for versions in [Versions::Http1Only, Versions::Http2Only] {
            let config = Config::default().versions(versions);
            let mut conn = Connection::connect(&format!("http://{addr}"), &config).await.unwrap();
            for pipelined in [false, true] {
                let mut ids = Vec::new();
                for (method, target, x) in &steps {
                    // A target the encoder refuses, between valid ones, queues nothing.
                    let bad = conn.send_request(*method, "/a b", &[("x-test", x)], &[]);
                    assert!(bad.unwrap_err().is_request());
                    let id = conn.send_request(*method, target, &[("x-test", x)], &[]).unwrap();
                    ids.push(id);
                    if !pipelined {
                        let mut body = Vec::new();
                        let (status, _) = read_response(&mut conn, &mut body).await;
                        assert_eq!(status, 200);
                        let x = std::str::from_utf8(x).unwrap();
                        let want = match method {
                            Method::Head => String::new(),
                            _ => format!("GET {} x={x} len=0", path_of(target)),
                        };
                        assert_eq!(String::from_utf8(body).unwrap(), want, "{versions:?}");
                    }
                }
                if pipelined {
                    let mut bodies = std::collections::HashMap::new();
                    let mut ended = 0;
                    while ended < steps.len() {
                        match conn.next_event().await.unwrap() {
                            Event::Data { id, data } => {
                                bodies.entry(id).or_insert_with(Vec::new).extend_from_slice(data)
                            }
                            Event::End { .. } => ended += 1,
                            Event::Failed { error, .. } => panic!("{error}"),
                            _ => {}
                        }
                    }
                    for ((method, target, x), id) in steps.iter().zip(&ids) {
                        let x = std::str::from_utf8(x).unwrap();
                        let want = match method {
                            Method::Head => String::new(),
                            _ => format!("GET {} x={x} len=0", path_of(target)),
                        };
                        let got = bodies.get(id).map(|b| String::from_utf8_lossy(b).into_owned());
                        assert_eq!(got.unwrap_or_default(), want, "{versions:?}");
                    }
                }
            }
        }
    });
    server.shutdown();
}

#[test]
fn connection_refuses_what_it_cannot_send() {
    let server = support::spawn(app);
    let addr = server.local_addr();
    rt().block_on(async {
        let origin = Origin::new(peregrine::http1::encode::Scheme::Http, "127.0.0.1", addr.port());
        for protocol in [Protocol::Http1, Protocol::Http2] {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            let mut conn =
                Connection::handshake(tcp, &origin, protocol, &Config::default()).await.unwrap();
            type Fields<'a> = &'a [(&'a str, &'a [u8])];
            let bad: [(&str, Fields<'_>); 5] = [
                ("/a b", &[]),
                ("/", &[("bad name", b"v")]),
                ("/", &[("x", b"a\r\nb")]),
                ("/", &[("host", b"other")]),
                ("/", &[("content-length", b"3")]),
            ];
            for (target, fields) in bad {
                let err = conn.send_request(Method::Get, target, fields, &[]).unwrap_err();
                assert!(err.is_request(), "{protocol:?} {target} {fields:?}");
            }
            if protocol == Protocol::Http2 {
                let err = conn.send_request(Method::Get, "/", &[("connection", b"close")], &[]);
                assert!(err.unwrap_err().is_request());
            }
            // Mixed-case names are fine (lowercased for HTTP/2); the connection still works.
            conn.send_request(Method::Get, "/ok", &[("X-Test", b"Mixed")], &[]).unwrap();
            let mut body = Vec::new();
            read_response(&mut conn, &mut body).await;
            assert_eq!(body, b"GET /ok x=Mixed len=0", "{protocol:?}");
        }
    });
    server.shutdown();
}

#[test]
fn read_timeout_fires() {
    async fn slow(_req: Request) -> Response {
        tokio::time::sleep(Duration::from_secs(3)).await;
        Response::new("late")
    }
    let server = support::spawn(slow);
    let base = format!("http://127.0.0.1:{}", server.local_addr().port());
    rt().block_on(async {
        let client = Client::builder().read_timeout(Some(Duration::from_millis(200))).build();
        let err = client.get(&base).await.unwrap_err();
        assert!(err.is_timeout(), "{err}");
        let client = Client::builder().request_timeout(Duration::from_millis(200)).build();
        let err = client.get(&base).await.unwrap_err();
        assert!(err.is_timeout() && !err.is_connect(), "{err}");
    });
    server.shutdown_now();
}

/// Reads events until a request or the connection fails, and returns that error.
async fn next_failure(conn: &mut Connection) -> peregrine::client::Error {
    loop {
        match conn.next_event().await {
            Err(e) => return e,
            Ok(Event::Failed { error, .. }) => return error,
            Ok(_) => {}
        }
    }
}

/// Answers `/slow/MS` after sleeping MS milliseconds, anything else at once.
async fn paced(req: Request) -> Response {
    if let Some(ms) = req.path().strip_prefix("/slow/").and_then(|n| n.parse().ok()) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    Response::new("ok")
}

/// The read timeout is re-armed lazily (the timer moves only when it fires before the real
/// deadline): each wait must still get the whole timeout, counted from when it starts — not
/// from the last read, nor from the first wait — and a wait with no answer must still end.
#[test]
fn read_timeout_counts_from_each_wait() {
    let server = support::spawn(paced);
    let url = format!("http://{}", server.local_addr());
    rt().block_on(async {
        for versions in [Versions::Http1Only, Versions::Http2Only] {
            let timeout = Duration::from_millis(300);
            let config = Config::default().versions(versions).read_timeout(Some(timeout));
            let mut conn = Connection::connect(&url, &config).await.unwrap();
            let mut body = Vec::new();
            conn.send_request(Method::Get, "/fast", &[], &[]).unwrap();
            assert_eq!(read_response(&mut conn, &mut body).await.0, 200, "{versions:?}");
            // Idle longer than the timeout without polling: the next wait starts afresh.
            tokio::time::sleep(Duration::from_millis(500)).await;
            conn.send_request(Method::Get, "/slow/150", &[], &[]).unwrap();
            assert_eq!(read_response(&mut conn, &mut body).await.0, 200, "{versions:?}");
            // Five answers 100 ms apart: 500 ms in all, each wait well within the timeout.
            for _ in 0..5 {
                conn.send_request(Method::Get, "/slow/100", &[], &[]).unwrap();
                assert_eq!(read_response(&mut conn, &mut body).await.0, 200, "{versions:?}");
            }
            conn.send_request(Method::Get, "/slow/2000", &[], &[]).unwrap();
            let waited = std::time::Instant::now();
            let err = next_failure(&mut conn).await;
            let waited = waited.elapsed();
            assert!(err.is_timeout(), "{versions:?}: {err}");
            assert!(waited >= timeout && waited < Duration::from_millis(1500), "{waited:?}");
        }
    });
    server.shutdown_now();
}

/// The read timeout counts from the request: a new request starts a new wait even when the last
/// wait was abandoned (its future dropped) with its deadline armed, and a caller that polls
/// late finds the time since the request already spent.
#[test]
fn read_timeout_counts_from_the_request() {
    let server = support::spawn(paced);
    let url = format!("http://{}", server.local_addr());
    let timeout = Duration::from_millis(300);
    let config = Config::default().versions(Versions::Http2Only).read_timeout(Some(timeout));
    rt().block_on(async {
        let mut conn = Connection::connect(&url, &config).await.unwrap();
        // One exchange first, so the connection's own frames (SETTINGS and its
        // acknowledgement) are read before the waits measured below.
        let mut body = Vec::new();
        conn.send_request(Method::Get, "/fast", &[], &[]).unwrap();
        assert_eq!(read_response(&mut conn, &mut body).await.0, 200);
        let stalled = conn.send_request(Method::Get, "/slow/5000", &[], &[]).unwrap();
        // A wait given up after 100 ms leaves its deadline armed...
        let gave_up = tokio::time::timeout(Duration::from_millis(100), conn.next_event()).await;
        assert!(gave_up.is_err(), "no event was due yet");
        tokio::time::sleep(Duration::from_millis(400)).await;
        // ...and a request sent past that deadline still gets the whole timeout.
        let fresh = conn.send_request(Method::Get, "/slow/100", &[], &[]).unwrap();
        loop {
            match conn.next_event().await {
                Ok(Event::End { id, .. }) if id == fresh => break,
                Ok(Event::Failed { error, .. }) => panic!("{error}"),
                Err(e) => panic!("the fresh request timed out: {e}"),
                Ok(_) => {}
            }
        }
        assert_ne!(stalled, fresh);

        // Polled only after the timeout has passed since the request: nothing came, so the
        // first wait fails at once. Over HTTP/1.1, where no control frame (an HTTP/2 SETTINGS
        // acknowledgement read late) counts as bytes received.
        let config = config.versions(Versions::Http1Only);
        let mut conn = Connection::connect(&url, &config).await.unwrap();
        conn.send_request(Method::Get, "/slow/5000", &[], &[]).unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        let waited = std::time::Instant::now();
        let err = next_failure(&mut conn).await;
        assert!(err.is_timeout(), "{err}");
        assert!(waited.elapsed() < Duration::from_millis(200), "{:?}", waited.elapsed());
    });
    server.shutdown_now();
}
