//! The endpoints the server answers itself: health (503 from the moment a drain begins) and
//! Prometheus metrics (connections, requests by status class, bytes, in flight).

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use peregrine::server::Config;
use peregrine::{Request, Server, ServerHandle};
use support::{RawClient, get, test_config};

async fn app(req: Request) -> peregrine::Response {
    match req.path() {
        "/wait" => {
            tokio::time::sleep(Duration::from_millis(400)).await;
            peregrine::Response::new("waited")
        }
        "/" | "/healthz" => peregrine::Response::new(format!("app {}", req.method_str())),
        _ => peregrine::Response::with_status(http::StatusCode::NOT_FOUND, "nope"),
    }
}

fn server(config: Config) -> (ServerHandle, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    let server = Server::bind("127.0.0.1:0")
        .workers(2)
        .config(config)
        .health("/healthz")
        .metrics("/metrics")
        .access_log(move |e| sink.lock().unwrap().push(format!("{} {}", e.target, e.status)))
        .spawn(app)
        .unwrap();
    (server, log)
}

/// The value of an unlabelled or labelled series in a scrape.
fn value(text: &str, series: &str) -> u64 {
    let line = text.lines().find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '));
    line.and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{series}:\n{text}"))
}

fn scrape(c: &mut RawClient) -> String {
    c.send(&get("/metrics"));
    let res = c.response();
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
    String::from_utf8(res.body).unwrap()
}

#[test]
fn health_answers_200_then_503_once_the_drain_begins() {
    let config = Config { drain_grace: Duration::from_millis(600), ..test_config() };
    let (server, log) = server(config);
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/healthz"));
    let res = c.response();
    assert_eq!((res.status, res.body.as_slice()), (200, &b"ok\n"[..]));
    assert_eq!(res.header("connection"), None);
    c.send(b"HEAD /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.head_response().status, 200);
    // A query does not change the path; other methods and paths go to the handler.
    c.send(&get("/healthz?full"));
    assert_eq!(c.response().status, 200);
    c.send(b"POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(c.response().body, b"app POST");
    c.send(&get("/healthz/"));
    assert_eq!(c.response().status, 404);

    server.shutdown();
    std::thread::sleep(Duration::from_millis(50));
    // During the grace period, on a new connection: 503, and the connection closes.
    let mut during = RawClient::connect(server.local_addr());
    during.send(&get("/healthz"));
    let res = during.response();
    assert_eq!((res.status, res.body.as_slice()), (503, &b"draining\n"[..]));
    assert_eq!(res.header("connection"), Some("close"));
    assert_eq!(res.header("cache-control"), Some("no-store"));
    assert!(during.closed_within(Duration::from_secs(1)));
    server.join().unwrap();
    let lines = log.lock().unwrap().clone();
    // GET, HEAD, the POST the handler answered, and the 503.
    assert_eq!(lines.iter().filter(|l| l.starts_with("/healthz ")).count(), 4, "{lines:?}");
    assert!(lines.contains(&"/healthz 503".to_owned()), "{lines:?}");
}

#[test]
fn metrics_count_connections_requests_bytes_and_in_flight() {
    let (server, _log) = server(test_config());
    let addr = server.local_addr();
    let mut probe = RawClient::connect(addr);
    let before = scrape(&mut probe);
    assert_eq!(value(&before, "peregrine_connections_open"), 1);
    assert_eq!(value(&before, "peregrine_draining"), 0);

    let mut c = RawClient::connect(addr);
    for _ in 0..3 {
        c.send(&get("/"));
        assert_eq!(c.response().body, b"app GET");
    }
    c.send(&get("/missing"));
    assert_eq!(c.response().status, 404);
    // A request in flight while we scrape.
    let mut waiting = RawClient::connect(addr);
    waiting.send(&get("/wait"));
    std::thread::sleep(Duration::from_millis(150));
    let during = scrape(&mut probe);
    assert_eq!(value(&during, "peregrine_requests_in_flight"), 1, "{during}");
    assert_eq!(value(&during, "peregrine_connections_open"), 3);
    assert_eq!(waiting.response().body, b"waited");
    // A refused request counts as 4xx.
    let mut bad = RawClient::connect(addr);
    bad.send(b"GET / HTTP/1.1\r\nHost: t\r\nHost: u\r\n\r\n");
    assert_eq!(bad.response().status, 400);
    assert!(bad.closed_within(Duration::from_secs(2)));
    drop((c, waiting, bad));
    std::thread::sleep(Duration::from_millis(100));

    let after = scrape(&mut probe);
    let delta = |series| value(&after, series) - value(&before, series);
    // The first scrape (counted once rendered), 3 × "app GET", "waited", the second scrape.
    assert_eq!(delta("peregrine_requests_total{class=\"2xx\"}"), 1 + 3 + 1 + 1);
    assert_eq!(delta("peregrine_requests_total{class=\"4xx\"}"), 2);
    assert_eq!(delta("peregrine_requests_total{class=\"5xx\"}"), 0);
    let bad_len = value(&after, "peregrine_response_body_bytes_total")
        - value(&before, "peregrine_response_body_bytes_total")
        - (3 * 7 + 4 + 6 + before.len() as u64 + during.len() as u64);
    assert!(bad_len > 0 && bad_len < 64, "{bad_len}");
    assert_eq!(delta("peregrine_connections_total"), 3);
    assert_eq!(value(&after, "peregrine_connections_open"), 1);
    assert_eq!(value(&after, "peregrine_requests_in_flight"), 0);
    server.shutdown();
    server.join().unwrap();
}
