//! `peregrine load` end to end: the real binary against a server in this process (peregrine's,
//! on 127.0.0.1, one worker) whose handler counts the requests it receives and answers after
//! a fixed service time, or stalls once. Every run is bounded (`-d` or `-n`, and a wall-clock
//! limit here); the tests take turns so that their timings do not disturb each other.

use std::net::{SocketAddr, TcpListener};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use peregrine::server::TlsConfig;
use peregrine::{Body, Request, Response, Server, ServerHandle};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_peregrine");

/// One test at a time: latency figures must not include another test's load.
static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// The server under load: counts requests, sleeps `service` in each, and sleeps 1 s instead
/// in request number `stall_at`.
struct TestServer {
    handle: Option<ServerHandle>,
    addr: SocketAddr,
    received: Arc<AtomicU64>,
}

impl TestServer {
    fn start(service: Duration, stall_at: Option<u64>, tls: Option<TlsConfig>) -> TestServer {
        let received = Arc::new(AtomicU64::new(0));
        let count = received.clone();
        let handler = move |_req: Request| {
            let count = count.clone();
            async move {
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                if Some(n) == stall_at {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                } else if !service.is_zero() {
                    tokio::time::sleep(service).await;
                }
                Response::new(Body::from_static(b"hello"))
            }
        };
        let mut server = Server::bind("127.0.0.1:0").workers(1);
        if let Some(tls) = tls {
            server = server.tls(tls);
        }
        let handle = server.spawn(handler).expect("start the test server");
        let addr = handle.local_addr();
        TestServer { handle: Some(handle), addr, received }
    }

    fn url(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}/", self.addr.port())
    }

    fn received(&self) -> u64 {
        self.received.load(Ordering::SeqCst)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            h.shutdown_now();
            let _ = h.join();
        }
    }
}

/// Runs the binary (killed past `limit`) and returns its output.
fn run(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(BIN)
        .arg("load")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start peregrine load");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("{args:?} ran past {limit:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Runs with `--json -` and returns the report.
fn run_json(args: &[&str], limit: Duration) -> Value {
    let mut all = args.to_vec();
    all.extend(["--json", "-", "--no-progress"]);
    let out = run(&all, limit);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    })
}

fn n(v: &Value, path: &[&str]) -> f64 {
    let mut v = v;
    for p in path {
        v = &v[*p];
    }
    v.as_f64().unwrap_or_else(|| panic!("{path:?} is not a number in {v}"))
}

fn no_errors(report: &Value) {
    assert_eq!(n(report, &["errors_total"]), 0.0, "{}", report["errors"]);
}

/// A 10 ms service time shows as a 10 ms (and a little) latency at every percentile, and
/// the counts agree with what the server received.
#[test]
fn fixed_service_time_http1_percentiles_and_counts() {
    let _turn = turn();
    let server = TestServer::start(Duration::from_millis(10), None, None);
    let report = run_json(
        &[&server.url("http"), "-c", "4", "-t", "1", "-d", "2s", "--http1"],
        Duration::from_secs(15),
    );
    no_errors(&report);
    assert_eq!(report["protocol"], "HTTP/1.1");
    let requests = n(&report, &["requests"]);
    // 4 connections, 10-11 ms each: about 360 per second.
    assert!(requests > 300.0, "{requests}");
    for p in ["min", "p50"] {
        let us = n(&report, &["latency_us", p]);
        assert!((10_000.0..14_000.0).contains(&us), "{p} = {us} µs");
    }
    // p90 catches the scheduling delays of a busy machine (seen at 14+ ms with a build running
    // beside the test), still far from what a wrong measurement would give.
    let p90 = n(&report, &["latency_us", "p90"]);
    assert!((10_000.0..20_000.0).contains(&p90), "p90 = {p90} µs");
    let p99 = n(&report, &["latency_us", "p99"]);
    assert!((10_000.0..40_000.0).contains(&p99), "p99 = {p99} µs");
    assert_eq!(report["status"]["200"].as_f64(), Some(requests));
    // The server saw every completed request, and at most one more per connection (in flight
    // when the run stopped).
    let received = server.received() as f64;
    assert!(received >= requests && received <= requests + 4.0, "{received} vs {requests}");
    assert_eq!(n(&report, &["bytes"]), requests * 5.0);
}

/// HTTP/2 by prior knowledge, streams multiplexed: exactly the count asked for, each request
/// answered once, latency still the service time.
#[test]
fn h2c_streams_send_exactly_the_count() {
    let _turn = turn();
    let server = TestServer::start(Duration::from_millis(10), None, None);
    let report = run_json(
        &[&server.url("http"), "--http2-prior-knowledge", "-c", "2", "-m", "8", "-n", "400"],
        Duration::from_secs(15),
    );
    no_errors(&report);
    assert_eq!(report["protocol"], "HTTP/2");
    assert_eq!(n(&report, &["requests"]), 400.0);
    assert_eq!(server.received(), 400);
    let p50 = n(&report, &["latency_us", "p50"]);
    assert!((10_000.0..16_000.0).contains(&p50), "p50 = {p50} µs");
    // 16 in flight, ~10 ms each: far faster than one at a time.
    assert!(n(&report, &["duration_s"]) < 2.0, "{report}");
}

/// HTTP/1.1 pipelining: several requests in flight per connection, answered in order.
#[test]
fn http1_pipelining_sends_exactly_the_count() {
    let _turn = turn();
    let server = TestServer::start(Duration::ZERO, None, None);
    let report = run_json(
        &[&server.url("http"), "-c", "2", "--pipeline", "8", "-n", "2000"],
        Duration::from_secs(15),
    );
    no_errors(&report);
    assert_eq!(n(&report, &["requests"]), 2000.0);
    assert_eq!(server.received(), 2000);
    assert_eq!(report["pipeline"], 8);
}

fn self_signed() -> TlsConfig {
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    let cert = rcgen::generate_simple_self_signed(names).unwrap();
    TlsConfig::from_pem(cert.cert.pem().as_bytes(), cert.signing_key.serialize_pem().as_bytes())
        .unwrap()
}

/// HTTPS with a self-signed certificate: refused without --insecure (one line, status 2,
/// nothing sent), loaded with it; ALPN chooses h2, or http/1.1 with --http1.
#[test]
fn https_alpn_and_insecure() {
    let _turn = turn();
    let server = TestServer::start(Duration::ZERO, None, Some(self_signed()));
    let url = server.url("https");

    let out = run(&[&url, "-n", "10"], Duration::from_secs(15));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("TLS"), "{err}");
    assert_eq!(server.received(), 0);

    let report = run_json(&[&url, "--insecure", "-c", "2", "-n", "300"], Duration::from_secs(15));
    no_errors(&report);
    assert_eq!(report["protocol"], "HTTP/2");
    assert_eq!(n(&report, &["requests"]), 300.0);
    assert_eq!(n(&report, &["connect_us", "count"]), 2.0);

    let report =
        run_json(&[&url, "--insecure", "--http1", "-c", "2", "-n", "300"], Duration::from_secs(15));
    no_errors(&report);
    assert_eq!(report["protocol"], "HTTP/1.1");
    assert_eq!(n(&report, &["requests"]), 300.0);
    assert_eq!(server.received(), 600);
}

/// A server that stalls once for 1 s: an open loop charges the wait to every request that was
/// due meanwhile (p99 shows the stall, they are reported late), while in a closed loop the
/// mean latency and the throughput keep Little's law (connections = rate × mean latency).
#[test]
fn one_stall_shows_in_the_open_loop_percentiles_and_closed_loop_keeps_littles_law() {
    let _turn = turn();
    let server = TestServer::start(Duration::from_millis(1), Some(20), None);
    // 4 connections at 50 requests per second each: a 1 s stall holds back about 50.
    let report = run_json(
        &[&server.url("http"), "-c", "4", "-t", "1", "--rate", "200", "-d", "3s"],
        Duration::from_secs(15),
    );
    no_errors(&report);
    assert_eq!(report["mode"], "open");
    let requests = n(&report, &["requests"]);
    assert!((500.0..=610.0).contains(&requests), "{requests}");
    let p99 = n(&report, &["latency_us", "p99"]);
    assert!(p99 >= 800_000.0, "the stall is missing from p99: {}", report["latency_us"]);
    let p50 = n(&report, &["latency_us", "p50"]);
    assert!(p50 < 20_000.0, "p50 = {p50} µs");
    let late = n(&report, &["late"]);
    // At least the requests held back by the stall; more when this busy machine leaves the
    // generator behind its schedule (also late, by definition).
    assert!((30.0..=requests / 2.0).contains(&late), "late = {late} of {requests}");

    let server = TestServer::start(Duration::from_millis(1), Some(20), None);
    let report =
        run_json(&[&server.url("http"), "-c", "4", "-t", "1", "-d", "3s"], Duration::from_secs(15));
    no_errors(&report);
    let mean_s = n(&report, &["latency_us", "mean"]) / 1e6;
    let rate = n(&report, &["req_per_s"]);
    let in_flight = mean_s * rate;
    assert!((3.6..=4.4).contains(&in_flight), "mean {mean_s} s × {rate} req/s = {in_flight}");
    // The closed loop hides the stall from its percentiles: one request in thousands.
    assert!(n(&report, &["latency_us", "p99"]) < 100_000.0, "{}", report["latency_us"]);
}

/// Bad input or an unreachable host: one line on stderr, status 2, nothing on stdout.
#[test]
fn bad_url_and_unreachable_host_exit_2_with_one_line() {
    let _turn = turn();
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let unreachable = format!("http://127.0.0.1:{closed}/");
    let server = TestServer::start(Duration::ZERO, None, None);
    let h2c = server.url("http");
    let cases: [&[&str]; 5] = [
        &["htp://example.com/"],
        &["http://"],
        &[&unreachable, "-n", "10"],
        &["http://127.0.0.1:1/", "--pipeline", "2", "-X", "POST"],
        // HTTP/2 forbids connection-specific fields (RFC 9113 §8.2.2): refused before load.
        &[&h2c, "--http2-prior-knowledge", "-H", "Connection: close"],
    ];
    for args in cases {
        let out = run(args, Duration::from_secs(15));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(server.received(), 0);
}

/// Ctrl-C (SIGINT) stops a long run early and the report is still printed.
#[test]
fn interrupt_stops_early_and_still_reports() {
    let _turn = turn();
    let server = TestServer::start(Duration::from_millis(1), None, None);
    let child = Command::new(BIN)
        .args(["load", &server.url("http"), "-c", "2", "-d", "60s", "--json", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let started = Instant::now();
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["interrupted"], true);
    assert!(n(&report, &["requests"]) > 0.0);
    assert!(n(&report, &["duration_s"]) < 5.0);
}

/// A method, a header field and a body from a file reach the server on every request, over
/// HTTP/1.1 and HTTP/2; the server counts the requests that carried all three.
#[test]
fn method_header_and_body_reach_the_server() {
    let _turn = turn();
    let body = std::env::temp_dir().join(format!("peregrine-load-body-{}", std::process::id()));
    std::fs::write(&body, b"0123456789").unwrap();
    let matched = Arc::new(AtomicU64::new(0));
    let count = matched.clone();
    let handler = move |req: Request| {
        let count = count.clone();
        async move {
            let ok = req.method_str() == "PUT" && req.header("x-load") == Some(b"yes".as_slice());
            let got = req.into_body().to_bytes(1024).await.unwrap_or_default();
            if ok && got.as_ref() == b"0123456789" {
                count.fetch_add(1, Ordering::SeqCst);
            }
            Response::new(Body::from_static(b"ok"))
        }
    };
    let server = Server::bind("127.0.0.1:0").workers(1).spawn(handler).unwrap();
    let url = format!("http://{}/put", server.local_addr());
    let file = body.to_str().unwrap();
    for proto in ["--http1", "--http2-prior-knowledge"] {
        let args = [&url, proto, "-X", "PUT", "-H", "X-Load: yes", "--body", file, "-n", "100"];
        let report = run_json(&args, Duration::from_secs(15));
        no_errors(&report);
        assert_eq!(n(&report, &["requests"]), 100.0);
    }
    assert_eq!(matched.load(Ordering::SeqCst), 200);
    let _ = std::fs::remove_file(&body);
    server.shutdown_now();
    let _ = server.join();
}

/// A stdout closed before the report (`| head`, a reader that gave up) is a failure to report,
/// said on stderr in one line with status 2, not a panic.
#[test]
fn a_closed_stdout_fails_in_one_line() {
    let _turn = turn();
    let server = TestServer::start(Duration::ZERO, None, None);
    let mut child = Command::new(BIN)
        .args(["load", &server.url("http"), "-c", "1", "-n", "20", "--no-progress"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot write the report to stdout"), "{err}");
    assert_eq!(server.received(), 20);
}

/// What the WebSocket test server does with each message.
#[derive(Clone, Copy)]
enum Echo {
    /// Sends it back.
    Same,
    /// Sends it back with its first byte changed.
    Corrupt,
    /// Sends back this many on each connection, then closes it (1000).
    CloseAfter(u64),
    /// Reads and never answers.
    Never,
}

/// A WebSocket echo server (peregrine's, one worker, permessage-deflate accepted) counting the
/// messages it receives; any other request gets a 404.
fn ws_server(echo: Echo) -> (ServerHandle, Arc<AtomicU64>) {
    use peregrine::IntoResponse;
    use peregrine::websocket::{CloseCode, Message, WebSocketUpgrade};
    let received = Arc::new(AtomicU64::new(0));
    let count = received.clone();
    let handler = move |mut req: Request| {
        let count = count.clone();
        async move {
            if req.header("upgrade").is_none() {
                return Response::with_status(http::StatusCode::NOT_FOUND, "not here");
            }
            let up = match WebSocketUpgrade::from_request(&mut req) {
                Ok(up) => up,
                Err(refused) => return refused.into_response(),
            };
            up.deflate(true).on_upgrade(move |mut ws| async move {
                let mut n = 0;
                while let Some(Ok(msg)) = ws.recv().await {
                    let data = match msg {
                        Message::Text(_) | Message::Binary(_) => msg,
                        _ => continue,
                    };
                    count.fetch_add(1, Ordering::SeqCst);
                    n += 1;
                    if matches!(echo, Echo::Never) {
                        continue;
                    }
                    let reply = match (echo, data) {
                        (Echo::Corrupt, Message::Binary(b)) => {
                            let mut v = b.to_vec();
                            v[0] ^= 1;
                            Message::binary(v)
                        }
                        (_, data) => data,
                    };
                    if ws.send(reply).await.is_err() {
                        break;
                    }
                    if matches!(echo, Echo::CloseAfter(max) if n >= max) {
                        let _ = ws.close(CloseCode::NORMAL, "enough").await;
                        break;
                    }
                }
            })
        }
    };
    let server = Server::bind("127.0.0.1:0").workers(1).spawn(handler).expect("start the server");
    (server, received)
}

fn stop(server: ServerHandle) {
    server.shutdown_now();
    let _ = server.join();
}

/// A WebSocket run: exactly the count asked for, every echo checked, the server saw each
/// message once; text, compressed and pipelined runs too.
#[test]
fn websocket_echo_sends_exactly_the_count() {
    let _turn = turn();
    let (server, received) = ws_server(Echo::Same);
    let url = format!("ws://{}/echo", server.local_addr());
    let report = run_json(&[&url, "-c", "4", "-n", "2000"], Duration::from_secs(15));
    no_errors(&report);
    assert_eq!(report["protocol"], "WebSocket");
    assert_eq!(report["message_type"], "binary");
    assert_eq!(report["deflate"], false);
    assert_eq!(n(&report, &["messages"]), 2000.0);
    assert_eq!(n(&report, &["bytes"]), 2000.0 * 20.0);
    assert_eq!(received.load(Ordering::SeqCst), 2000);
    assert_eq!(n(&report, &["connect_us", "count"]), 4.0);
    let p50 = n(&report, &["latency_us", "p50"]);
    assert!(p50 > 0.0 && p50 < 50_000.0, "p50 = {p50} µs");

    // http:// with --ws is the same; text, permessage-deflate, 4 in flight.
    let http_url = format!("http://{}/echo", server.local_addr());
    let args =
        [&http_url, "--ws", "-c", "2", "--pipeline", "4", "--text", "--deflate", "--size", "1KiB"];
    let report = run_json(&[&args[..], &["-n", "500"]].concat(), Duration::from_secs(15));
    no_errors(&report);
    assert_eq!(report["url"], format!("ws://{}/echo", server.local_addr()));
    assert_eq!((&report["message_type"], &report["deflate"]), (&"text".into(), &true.into()));
    assert_eq!((n(&report, &["messages"]), n(&report, &["in_flight"])), (500.0, 4.0));
    assert_eq!(n(&report, &["bytes"]), 500.0 * 1024.0);
    assert_eq!(received.load(Ordering::SeqCst), 2500);
    stop(server);
}

/// An open loop schedules messages as it does requests.
#[test]
fn websocket_open_loop_keeps_its_rate() {
    let _turn = turn();
    let (server, _) = ws_server(Echo::Same);
    let url = format!("ws://{}/", server.local_addr());
    let report = run_json(
        &[&url, "-c", "4", "--rate", "1000", "-d", "2s", "-t", "1"],
        Duration::from_secs(15),
    );
    no_errors(&report);
    assert_eq!(report["mode"], "open");
    let messages = n(&report, &["messages"]);
    assert!((1800.0..=2100.0).contains(&messages), "{messages}");
    stop(server);
}

/// Errors by kind: echoes that differ are mismatches; a server that closes the WebSocket
/// loses the messages in flight (closed) and the run goes on over new ones; a server that
/// does not accept the handshake stops the command before any load.
#[test]
fn websocket_errors_by_kind() {
    let _turn = turn();
    let (server, _) = ws_server(Echo::Corrupt);
    let url = format!("ws://{}/", server.local_addr());
    let report = run_json(&[&url, "-c", "2", "-n", "100"], Duration::from_secs(15));
    assert_eq!(n(&report, &["errors", "mismatch"]), 100.0, "{}", report["errors"]);
    assert_eq!(n(&report, &["messages"]), 0.0);
    stop(server);

    let (server, received) = ws_server(Echo::CloseAfter(50));
    let url = format!("ws://{}/", server.local_addr());
    let report =
        run_json(&[&url, "-c", "2", "--pipeline", "4", "-n", "1000"], Duration::from_secs(15));
    let closed = n(&report, &["errors", "closed"]);
    assert!(closed > 0.0, "{}", report["errors"]);
    assert_eq!(n(&report, &["errors_total"]), closed, "{}", report["errors"]);
    assert_eq!(n(&report, &["messages"]) + closed, 1000.0);
    assert!(n(&report, &["connect_us", "count"]) >= 20.0, "{}", report["connect_us"]);
    // Every echo counted was received; the messages lost were in flight when the server
    // stopped reading.
    assert!(received.load(Ordering::SeqCst) as f64 >= n(&report, &["messages"]));

    // A server that never answers: each message times out after --timeout, its connection
    // is given up and the next message goes over a new one.
    let (silent, received) = ws_server(Echo::Never);
    let url = format!("ws://{}/", silent.local_addr());
    let started = Instant::now();
    let report =
        run_json(&[&url, "-c", "1", "-n", "3", "--timeout", "300ms"], Duration::from_secs(15));
    assert_eq!(n(&report, &["errors", "timeout"]), 3.0, "{}", report["errors"]);
    assert_eq!(n(&report, &["messages"]), 0.0);
    assert_eq!(received.load(Ordering::SeqCst), 3);
    assert!(started.elapsed() >= Duration::from_millis(900), "{:?}", started.elapsed());
    stop(silent);

    // Not a WebSocket endpoint: a 200 to the upgrade.
    let plain = TestServer::start(Duration::ZERO, None, None);
    let out = run(&[&plain.url("ws"), "-n", "10"], Duration::from_secs(15));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("handshake refused"), "{err}");
    stop(server);
}

/// WebSocket flags without a WebSocket, and HTTP-only flags with one: refused in one line.
#[test]
fn websocket_flags_are_checked() {
    let _turn = turn();
    let cases: [&[&str]; 5] = [
        &["http://127.0.0.1:1/", "--size", "100"],
        &["http://127.0.0.1:1/", "--deflate"],
        &["ws://127.0.0.1:1/", "-m", "4"],
        &["ws://127.0.0.1:1/", "--body", "Cargo.toml"],
        &["ws://127.0.0.1:1/", "--size", "1GiB"],
    ];
    for args in cases {
        let out = run(args, Duration::from_secs(15));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}
