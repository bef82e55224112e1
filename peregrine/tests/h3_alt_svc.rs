//! The pooled client switching to HTTP/3 through `Alt-Svc` (RFC 7838, RFC 9114 §3.1.1) over
//! loopback: a peregrine server serving HTTP/3 advertises it on its TCP responses, and the
//! client's next requests go over QUIC; an alternative that does not answer (nothing on its
//! UDP port) or whose certificate is not valid for the origin is given up for TCP without an
//! error and marked broken. Discovery adds no allocation to a request (a counting
//! allocator).

mod support;

#[path = "support/counting.rs"]
mod counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use http::header::{ALT_SVC, HeaderValue};
use peregrine::client::{Client, TlsConfig};
use peregrine::server::{Server, ServerHandle, TlsConfig as ServerTls};
use peregrine::{Request, Response, Version};
use support::tls::TestCert;

/// The test server's echo of the request's `Alt-Used`.
static X_ALT_USED: http::HeaderName = http::HeaderName::from_static("x-alt-used");

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn trust(certs: &[&TestCert]) -> TlsConfig {
    certs.iter().fold(TlsConfig::empty(), |t, c| t.add_ca_pem(c.cert_pem.as_bytes()).unwrap())
}

/// A TLS server on 127.0.0.1 whose handler answers with the version the request came in, and
/// with `alt_svc` as its `Alt-Svc` field when given; with `h3`, it serves HTTP/3 on the same
/// port and advertises it itself.
fn server(cert: &TestCert, h3: bool, alt_svc: Option<String>) -> ServerHandle {
    let tls = ServerTls::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    let value = alt_svc.map(|v| HeaderValue::try_from(v).unwrap());
    Server::bind("127.0.0.1:0")
        .tls(tls)
        .http3(h3)
        .workers(1)
        .spawn(move |req: Request| {
            let mut res = Response::new(req.version().as_str());
            // RFC 7838 §5: echoed at /alt-used, so tests see what the client said.
            let used = req.headers().get("alt-used").filter(|_| req.path() == "/alt-used");
            if let Some(used) = used {
                res = res.with_header(X_ALT_USED.clone(), HeaderValue::from_bytes(used).unwrap());
            }
            if let Some(v) = &value {
                res = res.with_header(ALT_SVC, v.clone());
            }
            async move { res }
        })
        .unwrap()
}

/// GET `url`: the response's version and body.
async fn get(client: &Client, url: &str) -> (Version, String) {
    let mut res = client.get(url).await.unwrap();
    assert_eq!(res.status(), 200, "{url}");
    let body = std::mem::take(res.body_mut()).to_bytes(1 << 16).await.unwrap();
    (res.version(), String::from_utf8(body.to_vec()).unwrap())
}

#[test]
fn alt_svc_moves_later_requests_to_http3() {
    let cert = support::tls::self_signed(&["127.0.0.1"]);
    let server = server(&cert, true, None);
    let url = format!("https://127.0.0.1:{}/", server.local_addr().port());
    rt().block_on(async {
        let client = Client::builder().tls(trust(&[&cert])).http3_alt_svc(true).build();
        // The first request goes over TCP (ALPN: HTTP/2) and brings `Alt-Svc: h3=":PORT"`.
        assert_eq!(get(&client, &url).await, (Version::Http2, "HTTP/2".to_owned()));
        // The next ones over HTTP/3, concurrent ones on one connection beside the HTTP/2 one.
        assert_eq!(get(&client, &url).await, (Version::Http3, "HTTP/3".to_owned()));
        let gets = (0..8).map(|_| {
            let (client, url) = (client.clone(), url.clone());
            tokio::spawn(async move { get(&client, &url).await })
        });
        for got in futures_util::future::join_all(gets).await {
            assert_eq!(got.unwrap(), (Version::Http3, "HTTP/3".to_owned()));
        }
        assert_eq!(client.pool_size().1, 2, "the HTTP/2 connection and the HTTP/3 one");
        // Over the alternative, each request says which it used (RFC 7838 §5); not over TCP,
        // nor on a client that asked for HTTP/3 itself.
        let port = server.local_addr().port();
        let echo = format!("{url}alt-used");
        let res = client.get(&echo).await.unwrap();
        assert_eq!(res.version(), Version::Http3);
        let used = res.headers().get(&X_ALT_USED).map(|v| v.as_bytes().to_vec());
        assert_eq!(used, Some(format!("127.0.0.1:{port}").into_bytes()));
        assert_eq!(client.alt_svc_broken_until(&url), None);

        // Without the setting the client stays on TCP.
        let plain = Client::builder().tls(trust(&[&cert])).build();
        for _ in 0..2 {
            let res = plain.get(&echo).await.unwrap();
            assert_eq!(res.version(), Version::Http2);
            assert!(res.headers().get(&X_ALT_USED).is_none());
        }
        let only = Client::builder().tls(trust(&[&cert])).http3_only().build();
        let res = only.get(&echo).await.unwrap();
        assert_eq!(res.version(), Version::Http3);
        assert!(res.headers().get(&X_ALT_USED).is_none());
    });
    server.shutdown_now();
}

/// The request after the one that advertised `alt` falls back to TCP without an error, the
/// alternative is marked broken for 5 minutes, and the request after that is not held up by
/// another attempt (the broken mark stays the same: a failure would have doubled it).
fn falls_back_and_marks_broken(cert: &TestCert, trusted: &[&TestCert], alt: String) {
    let server = server(cert, false, Some(alt));
    let url = format!("https://127.0.0.1:{}/", server.local_addr().port());
    rt().block_on(async {
        let client = Client::builder()
            .tls(trust(trusted))
            .http3_alt_svc(true)
            .http3_alt_svc_timeout(Duration::from_millis(300))
            .build();
        assert_eq!(get(&client, &url).await.0, Version::Http2);
        assert_eq!(client.alt_svc_broken_until(&url), None, "not tried yet");
        let before = Instant::now();
        assert_eq!(get(&client, &url).await, (Version::Http2, "HTTP/2".to_owned()));
        let until = client.alt_svc_broken_until(&url).expect("marked broken");
        let span = until.duration_since(before);
        assert!(span > Duration::from_secs(299) && span < Duration::from_secs(310), "{span:?}");
        assert_eq!(get(&client, &url).await.0, Version::Http2);
        assert_eq!(client.alt_svc_broken_until(&url), Some(until), "no second attempt");
    });
    server.shutdown_now();
}

#[test]
fn an_alternative_that_does_not_answer_falls_back_to_tcp() {
    let cert = support::tls::self_signed(&["127.0.0.1"]);
    // A UDP port nothing listens on once this socket is gone.
    let port = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    falls_back_and_marks_broken(&cert, &[&cert], format!("h3=\":{port}\"; ma=600"));
}

#[test]
fn an_alternative_not_valid_for_the_origin_falls_back_to_tcp() {
    // RFC 7838 §2.1: the alternative must hold a certificate for the origin's host. This one
    // serves HTTP/3 with a certificate the client trusts, but for another name.
    let origin_cert = support::tls::self_signed(&["127.0.0.1"]);
    let other_cert = support::tls::self_signed(&["other.example"]);
    let other = server(&other_cert, true, None);
    let alt = format!("h3=\":{}\"", other.local_addr().port());
    falls_back_and_marks_broken(&origin_cert, &[&origin_cert, &other_cert], alt);
    other.shutdown_now();
}

/// The allocation counter is one for the process: tests that read it take turns.
static COUNTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// GETs `url` `n` times on `client` from the calling thread, each answered with `want`; its
/// allocations meanwhile.
async fn allocations(client: &Client, url: &str, n: usize, want: &str) -> u64 {
    counting::mark_server_thread();
    let before = counting::allocs();
    for _ in 0..n {
        let mut res = client.get(url).await.unwrap();
        let body = std::mem::take(res.body_mut()).to_bytes(1 << 16).await.unwrap();
        assert_eq!(body, want);
    }
    counting::allocs() - before
}

/// Discovery costs a request no allocation: with every response carrying `Alt-Svc` (learned
/// again each time, its alternative broken, so each request asks the cache and the pool for
/// it), requests allocate what they do on a client without discovery (16 each, here).
#[test]
fn discovery_adds_no_allocation_per_request() {
    let _turn = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    let cert = support::tls::self_signed(&["127.0.0.1"]);
    let port = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = server(&cert, false, Some(format!("h3=\":{port}\"")));
    let url = format!("https://127.0.0.1:{}/", server.local_addr().port());
    // One thread: the HTTP/2 connection's task runs on it and is counted with the requests.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (with, without) = rt.block_on(async {
        let discovering = Client::builder()
            .tls(trust(&[&cert]))
            .http3_alt_svc(true)
            .http3_alt_svc_timeout(Duration::from_millis(200))
            .build();
        let plain = Client::builder().tls(trust(&[&cert])).build();
        // Warm-up: the alternative learned, tried once and marked broken; buffers grown.
        for client in [&discovering, &plain] {
            allocations(client, &url, 200, "HTTP/2").await;
        }
        assert!(discovering.alt_svc_broken_until(&url).is_some());
        let with = allocations(&discovering, &url, 2000, "HTTP/2").await;
        let without = allocations(&plain, &url, 2000, "HTTP/2").await;
        (with, without)
    });
    server.shutdown_now();
    println!("2000 requests: {with} allocations with discovery, {without} without");
    assert!(without > 0, "the counter missed the client's allocations");
    // A buffer growing once may land in either run; one allocation per request would add 2000.
    assert!(with <= without + 10, "{with} allocations with discovery, {without} without");
}

/// Over HTTP/3, a request through a discovered alternative allocates what one on a client
/// built with `http3_only` does.
#[test]
fn http3_through_alt_svc_allocates_as_http3_only() {
    let _turn = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    let cert = support::tls::self_signed(&["127.0.0.1"]);
    let server = server(&cert, true, None);
    let url = format!("https://127.0.0.1:{}/", server.local_addr().port());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (with, only) = rt.block_on(async {
        let discovering = Client::builder().tls(trust(&[&cert])).http3_alt_svc(true).build();
        let only = Client::builder().tls(trust(&[&cert])).http3_only().build();
        assert_eq!(get(&discovering, &url).await.0, Version::Http2);
        for client in [&discovering, &only] {
            allocations(client, &url, 200, "HTTP/3").await;
        }
        let with = allocations(&discovering, &url, 2000, "HTTP/3").await;
        let only = allocations(&only, &url, 2000, "HTTP/3").await;
        (with, only)
    });
    server.shutdown_now();
    println!("2000 HTTP/3 requests: {with} allocations through Alt-Svc, {only} with http3_only");
    assert!(only > 0, "the counter missed the client's allocations");
    // QUIC's own allocations vary by a few (acknowledgements, timers); one more per request
    // would add 2000.
    assert!(with <= only + 100, "{with} allocations through Alt-Svc, {only} http3_only");
}
