//! The client against hostile servers that write raw bytes: malformed status lines, heads too
//! large, ambiguous framing, bodies shorter than their Content-Length, bad chunk sizes,
//! connections dropped under a request (the keep-alive race, retried once for idempotent
//! methods only); and over h2c: endless CONTINUATION, RST_STREAM, GOAWAY before the response
//! (retried on a new connection). Each gives its error (never a panic), and the client's pool
//! stays healthy: the next request to the same origin succeeds.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use peregrine::Method;
use peregrine::client::Client;
use peregrine::client::conn::{Config, Connection, Event, Versions};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Counters a raw server keeps.
#[derive(Default)]
struct Seen {
    connections: AtomicUsize,
    drops: AtomicUsize,
}

/// Reads one request head (and a Content-Length body); `None` at end of input.
fn read_request(s: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let len = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned())
        })
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    s.read_exact(&mut body).ok()?;
    Some(head)
}

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// An HTTP/1.1 server answering by path: `/ok` well; others with their hostile bytes, then
/// closing; `/drop-once` closes without answering the first time.
fn h1_server() -> (SocketAddr, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let s2 = seen.clone();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { return };
            s2.connections.fetch_add(1, Ordering::SeqCst);
            let seen = s2.clone();
            thread::spawn(move || {
                while let Some(head) = read_request(&mut s) {
                    let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                    let reply: Vec<u8> = match path.as_str() {
                        "/ok" | "/ok-then-close" => OK.to_vec(),
                        "/status" => b"HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n".to_vec(),
                        "/huge" => {
                            let mut r = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
                            r.extend(std::iter::repeat_n(b'a', 80 * 1024));
                            r.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
                            r
                        }
                        "/te-cl" => b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".to_vec(),
                        "/cl-dup" => b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!".to_vec(),
                        "/short" => b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".to_vec(),
                        "/chunk" => b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n".to_vec(),
                        "/drop-once" | "/drop-post" => {
                            if seen.drops.fetch_add(1, Ordering::SeqCst) == 0 {
                                return;
                            }
                            OK.to_vec()
                        }
                        _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
                    };
                    if s.write_all(&reply).is_err() || path != "/ok" && !path.starts_with("/drop") {
                        // `/ok-then-close`: a whole keep-alive response, then the end of input.
                        return;
                    }
                }
            });
        }
    });
    (addr, seen)
}

async fn body_of(client: &Client, url: &str) -> Result<Vec<u8>, String> {
    let mut res = client.get(url).await.map_err(|e| format!("request: {e}"))?;
    let body = std::mem::take(res.body_mut()).to_bytes(1 << 20).await;
    body.map(|b| b.to_vec()).map_err(|e| format!("body: {e}"))
}

#[test]
fn malformed_http1_responses_are_errors_and_the_pool_stays_healthy() {
    let (addr, _) = h1_server();
    let base = format!("http://{addr}");
    rt().block_on(async {
        let client = Client::new();
        struct Case {
            path: &'static str,
            check: fn(&peregrine::client::Error) -> bool,
        }
        let cases = [
            Case { path: "/status", check: |e| e.is_protocol() },
            Case { path: "/huge", check: |e| e.is_protocol() },
            Case { path: "/te-cl", check: |e| e.is_protocol() },
            Case { path: "/cl-dup", check: |e| e.is_protocol() },
        ];
        for case in cases {
            assert_eq!(body_of(&client, &format!("{base}/ok")).await.unwrap(), b"ok");
            let err = client.get(&format!("{base}{}", case.path)).await.unwrap_err();
            assert!((case.check)(&err), "{}: {err}", case.path);
            // The broken connection is not pooled; the next request works.
            assert_eq!(client.pool_size(), (0, 0), "{}", case.path);
            assert_eq!(body_of(&client, &format!("{base}/ok")).await.unwrap(), b"ok");
        }
        // Bodies: the head is fine, reading the body fails.
        for (path, want) in [("/short", "incomplete"), ("/chunk", "invalid")] {
            let mut res = client.get(&format!("{base}{path}")).await.unwrap();
            let err = std::mem::take(res.body_mut()).to_bytes(1 << 20).await.unwrap_err();
            let ok = if want == "incomplete" { err.is_incomplete() } else { err.is_invalid() };
            assert!(ok, "{path}: {err}");
            assert_eq!(body_of(&client, &format!("{base}/ok")).await.unwrap(), b"ok");
        }
    });
}

#[test]
fn the_one_connection_api_reports_the_same_errors() {
    let (addr, _) = h1_server();
    rt().block_on(async {
        let url = format!("http://{addr}");
        for (path, body_error) in
            [("/status", false), ("/te-cl", false), ("/short", true), ("/chunk", true)]
        {
            let mut conn = Connection::connect(&url, &Config::default()).await.unwrap();
            conn.send_request(Method::Get, path, &[], &[]).unwrap();
            let err = loop {
                match conn.next_event().await {
                    Ok(Event::End { .. }) => panic!("{path}: a whole response"),
                    Ok(_) => {}
                    Err(e) => break e,
                }
            };
            if body_error {
                assert!(err.is_body(), "{path}: {err}");
            } else {
                assert!(err.is_protocol(), "{path}: {err}");
            }
            // Every later call fails the same way; nothing is sent on a failed connection.
            assert!(conn.next_event().await.is_err());
            assert!(conn.send_request(Method::Get, "/ok", &[], &[]).is_err());
        }
    });
}

/// A server that accepts and never reads: the request's bytes fill the socket, and the write
/// fails at the read timeout instead of waiting forever.
#[test]
fn a_server_that_takes_no_bytes_fails_the_write_at_the_read_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let server = thread::spawn(move || {
        let (_held, _) = listener.accept().unwrap();
        let _ = wait.recv();
    });
    rt().block_on(async {
        let timeout = std::time::Duration::from_millis(300);
        let config = Config::default().versions(Versions::Http1Only).read_timeout(Some(timeout));
        let mut conn = Connection::connect(&format!("http://{addr}"), &config).await.unwrap();
        // More than loopback's send and receive buffers hold together.
        let body = vec![b'x'; 64 * 1024 * 1024];
        let len = Some(body.len() as u64);
        let id = conn.send_request_streaming("POST", "/", &[], len).unwrap();
        conn.send_data(id, &body, true).unwrap();
        let started = std::time::Instant::now();
        let flushed = tokio::time::timeout(std::time::Duration::from_secs(10), conn.flush()).await;
        let err = flushed.expect("the write stalls for the read timeout, not forever").unwrap_err();
        assert!(err.is_timeout(), "{err}");
        assert!(started.elapsed() >= timeout, "{:?}", started.elapsed());
        // The connection failed with it.
        assert!(conn.next_event().await.unwrap_err().is_timeout());
    });
    done.send(()).unwrap();
    server.join().unwrap();
}

#[test]
fn a_pooled_connection_the_server_closed_is_never_handed_out() {
    let (addr, seen) = h1_server();
    let base = format!("http://{addr}");
    rt().block_on(async {
        let client = Client::new();
        assert_eq!(body_of(&client, &format!("{base}/ok-then-close")).await.unwrap(), b"ok");
        assert_eq!(client.pool_size(), (1, 0), "kept: the response allowed it");
        // The server's FIN arrives; the pool sees it when the connection is taken.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert_eq!(body_of(&client, &format!("{base}/ok")).await.unwrap(), b"ok");
        assert_eq!(seen.connections.load(Ordering::SeqCst), 2);
        assert_eq!(seen.drops.load(Ordering::SeqCst), 0, "no request was lost and retried");
    });
}

#[test]
fn a_pooled_connection_closed_under_a_request_is_retried_once_for_idempotent_methods() {
    let (addr, seen) = h1_server();
    let base = format!("http://{addr}");
    rt().block_on(async {
        let client = Client::new();
        assert_eq!(body_of(&client, &format!("{base}/ok")).await.unwrap(), b"ok");
        // The pooled connection is dropped without an answer: retried on a new one.
        assert_eq!(body_of(&client, &format!("{base}/drop-once")).await.unwrap(), b"ok");
        assert_eq!(seen.connections.load(Ordering::SeqCst), 2);

        // A POST is not retried.
        seen.drops.store(0, Ordering::SeqCst);
        let req = http::Request::post(format!("{base}/drop-post")).body("x").unwrap();
        let err = client.send(req).await.unwrap_err();
        assert!(err.is_closed(), "{err}");
        assert_eq!(seen.drops.load(Ordering::SeqCst), 1, "the POST was sent once");
        assert_eq!(body_of(&client, &format!("{base}/ok")).await.unwrap(), b"ok");
    });
}

// ---- HTTP/2 ----

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// `:status 200`, then END_STREAM with `ok` in a DATA frame.
fn good(stream: u32) -> Vec<u8> {
    let mut out = frame(1, 0x4, stream, &[0x88]);
    out.extend(frame(0, 0x1, stream, b"ok"));
    out
}

/// An h2c server: SETTINGS, SETTINGS ACKs; the first request stream it sees gets `bad`, the
/// others `good`.
fn h2_server(bad: fn(u32) -> Vec<u8>) -> (SocketAddr, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let requests = Arc::new(AtomicUsize::new(0));
    let s2 = seen.clone();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { return };
            s2.connections.fetch_add(1, Ordering::SeqCst);
            let requests = requests.clone();
            thread::spawn(move || {
                let mut preface = [0u8; 24];
                if s.read_exact(&mut preface).is_err() {
                    return;
                }
                let _ = s.write_all(&frame(4, 0, 0, &[]));
                loop {
                    let mut head = [0u8; 9];
                    if s.read_exact(&mut head).is_err() {
                        return;
                    }
                    let len = usize::from(head[0]) << 16
                        | usize::from(head[1]) << 8
                        | usize::from(head[2]);
                    let mut payload = vec![0; len];
                    if s.read_exact(&mut payload).is_err() {
                        return;
                    }
                    let stream =
                        u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
                    let reply = match head[3] {
                        4 if head[4] & 1 == 0 => frame(4, 1, 0, &[]),
                        1 if requests.fetch_add(1, Ordering::SeqCst) == 0 => bad(stream),
                        1 => good(stream),
                        _ => continue,
                    };
                    if s.write_all(&reply).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, seen)
}

#[test]
fn hostile_http2_servers() {
    struct Case {
        name: &'static str,
        bad: fn(u32) -> Vec<u8>,
        /// The first request's outcome: `Ok` body, or a check of the error.
        expect: Result<&'static [u8], fn(&peregrine::client::Error) -> bool>,
        connections: usize,
    }
    let cases = [
        Case {
            name: "endless CONTINUATION",
            bad: |s| {
                let mut out = frame(1, 0, s, &[0x88]);
                for _ in 0..100 {
                    out.extend(frame(9, 0, s, &[0x88]));
                }
                out
            },
            expect: Err(|e| e.is_protocol()),
            connections: 2,
        },
        Case {
            name: "RST_STREAM(CANCEL)",
            bad: |s| frame(3, 0, s, &8u32.to_be_bytes()),
            expect: Err(|e| e.is_reset() && e.reset_code() == Some(8)),
            connections: 1,
        },
        Case {
            name: "GOAWAY before the response (retried on a new connection)",
            bad: |_| frame(7, 0, 0, &[0, 0, 0, 0, 0, 0, 0, 0]),
            expect: Ok(b"ok"),
            connections: 2,
        },
        Case {
            name: "a malformed response (uppercase field name)",
            bad: |s| frame(1, 0x5, s, &[0x88, 0x00, 0x01, b'X', 0x01, b'y']),
            expect: Err(|e| e.is_protocol()),
            connections: 1,
        },
    ];
    for case in cases {
        let (addr, seen) = h2_server(case.bad);
        let url = format!("http://{addr}/");
        rt().block_on(async {
            let client = Client::builder().http2_prior_knowledge().build();
            match (client.get(&url).await, case.expect) {
                (Ok(mut res), Ok(want)) => {
                    let body = std::mem::take(res.body_mut()).to_bytes(1 << 20).await.unwrap();
                    assert_eq!(body, want, "{}", case.name);
                }
                (Err(e), Err(check)) => assert!(check(&e), "{}: {e}", case.name),
                (Ok(res), Err(_)) => panic!("{}: {}", case.name, res.status()),
                (Err(e), Ok(_)) => panic!("{}: {e}", case.name),
            }
            // The pool is healthy: the next request works.
            assert_eq!(body_of(&client, &url).await.unwrap(), b"ok", "{}", case.name);
            assert_eq!(seen.connections.load(Ordering::SeqCst), case.connections, "{}", case.name);
        });
    }
}

#[test]
fn hostile_http2_errors_say_what_happened() {
    // As above, the first request's error itself, through the one-connection API too.
    for (bad, check) in [
        (
            (|s| frame(3, 0, s, &8u32.to_be_bytes())) as fn(u32) -> Vec<u8>,
            (|e: &peregrine::client::Error| e.is_reset()) as fn(&peregrine::client::Error) -> bool,
        ),
        (
            |s| {
                let mut out = frame(1, 0, s, &[0x88]);
                for _ in 0..100 {
                    out.extend(frame(9, 0, s, &[0x88]));
                }
                out
            },
            |e| e.is_protocol(),
        ),
    ] {
        let (addr, _) = h2_server(bad);
        rt().block_on(async {
            let client = Client::builder().http2_prior_knowledge().build();
            let err = client.get(&format!("http://{addr}/")).await.unwrap_err();
            assert!(check(&err), "{err}");

            let (addr2, _) = h2_server(bad);
            let config = Config::default().versions(Versions::Http2Only);
            let mut conn = Connection::connect(&format!("http://{addr2}"), &config).await.unwrap();
            conn.send_request(Method::Get, "/", &[], &[]).unwrap();
            let err = loop {
                match conn.next_event().await {
                    Ok(Event::Failed { error, .. }) => break error,
                    Ok(Event::End { .. }) => panic!("a whole response"),
                    Ok(_) => {}
                    Err(e) => break e,
                }
            };
            assert!(check(&err), "{err}");
        });
    }
}
