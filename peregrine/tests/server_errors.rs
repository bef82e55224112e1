//! Malformed requests get their status, a short body and `Connection: close`; a panicking
//! handler gets a 500 and the server keeps serving.

mod support;

use std::time::{Duration, Instant};

use support::{RawClient, app, get, spawn};

struct Case {
    name: &'static str,
    input: Vec<u8>,
    status: u16,
}

/// With h2c on, a first line naming no HTTP version may be an HTTP/2 client's broken preface:
/// closed unanswered (RFC 9113 §3.4), as h2spec checks. Lines that name a version still get
/// their status.
#[test]
fn garbage_on_an_h2c_port_is_closed_unanswered() {
    let server = spawn(app);
    for input in [&b"HELLO\r\n\r\n"[..], b"INVALID CONNECTION PREFACE\r\n\r\n"] {
        let mut c = RawClient::connect(server.local_addr());
        let _ = c.try_send(input);
        assert!(c.closed_within(Duration::from_secs(3)));
        assert!(c.buffered().is_empty(), "{:?}", c.buffered());
    }
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(c.response().status, 400);
}

/// Regression: on an h2c port, `GET /plaintext HTTX/1.1` was closed unanswered (its line
/// names no `HTTP/` version) though it plainly begins an HTTP/1 request line. Only bytes that
/// cannot begin one (a mangled HTTP/2 preface, TLS) are closed unanswered.
#[test]
fn a_bad_version_on_an_h2c_port_gets_400() {
    let server = spawn(app);
    for input in [&b"GET /plaintext HTTX/1.1\r\nHost: t\r\n\r\n"[..], b"GET /a HTTP/1.x\r\n\r\n"] {
        let mut c = RawClient::connect(server.local_addr());
        c.send(input);
        let res = c.response();
        assert_eq!(res.status, 400, "{:?}", String::from_utf8_lossy(input));
        assert_eq!(res.header("connection"), Some("close"));
    }
    for input in [&b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n"[..], b"\x16\x03\x01\x00\x05hello"] {
        let mut c = RawClient::connect(server.local_addr());
        let _ = c.try_send(input);
        assert!(c.closed_within(Duration::from_secs(3)));
        assert!(c.buffered().is_empty(), "{:?}", c.buffered());
    }
}

/// Regression: a request line of 70,000 bytes (a path past the head limit before its version
/// arrives) got a connection reset; nginx answers 414, and so do we, as soon as the target is
/// past its limit, whether or not h2c is on.
#[test]
fn a_request_line_past_the_head_limit_gets_414() {
    let line = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(70_000));
    for h2c in [true, false] {
        let config = peregrine::server::Config { h2c, ..support::test_config() };
        let server = support::spawn_with(config, app);
        let mut c = RawClient::connect(server.local_addr());
        // The server may answer and stop reading before all of it is written.
        let _ = c.try_send(line.as_bytes());
        let res = c.response();
        assert_eq!(res.status, 414, "h2c {h2c}");
        assert_eq!(res.header("connection"), Some("close"));
    }
}

#[test]
fn parse_errors_map_to_their_status_and_close() {
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(9000));
    let big_head = format!("GET / HTTP/1.1\r\nHost: t\r\nX-Big: {}\r\n\r\n", "b".repeat(33_000));
    let many: String = (0..101).map(|i| format!("X-{i}: v\r\n")).collect();
    let many_headers = format!("GET / HTTP/1.1\r\nHost: t\r\n{many}\r\n");
    let cases = [
        Case { name: "garbage (RFC 9112 §3)", input: b"HELLO\r\n\r\n".to_vec(), status: 400 },
        Case {
            name: "HTTP/2.0 on HTTP/1 (RFC 9110 §15.6.6)",
            input: b"GET / HTTP/2.0\r\nHost: t\r\n\r\n".to_vec(),
            status: 505,
        },
        Case {
            name: "unknown transfer coding (RFC 9112 §6.1)",
            input: b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                .to_vec(),
            status: 501,
        },
        Case {
            name: "missing Host (RFC 9112 §3.2)",
            input: b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            status: 400,
        },
        Case {
            name: "CL and TE (RFC 9112 §6.1)",
            input: b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
                .to_vec(),
            status: 400,
        },
        Case { name: "target too long (RFC 9112 §3)", input: long_target.into_bytes(), status: 414 },
        Case { name: "head too large (RFC 6585 §5)", input: big_head.into_bytes(), status: 431 },
        Case { name: "too many fields (RFC 6585 §5)", input: many_headers.into_bytes(), status: 431 },
    ];
    // HTTP/2 off: garbage is answered as HTTP/1.1 (with it on, see below).
    let config = peregrine::server::Config { h2c: false, ..support::test_config() };
    let server = support::spawn_with(config, app);
    for case in cases {
        let mut c = RawClient::connect(server.local_addr());
        let _ = c.try_send(&case.input);
        let res = c.response();
        assert_eq!(res.status, case.status, "{}", case.name);
        assert_eq!(res.header("connection"), Some("close"), "{}", case.name);
        assert!(!res.body.is_empty(), "{}: short reason body", case.name);
        assert!(c.closed_within(Duration::from_secs(3)), "{}", case.name);
    }
}

#[test]
fn a_bad_line_in_a_slow_head_is_answered_at_once() {
    // RFC 9112 §5.1 / RFC 9110 §5.1: the bad field line arrives in a later read and the head
    // never ends; the 400 comes when the line does, not a 408 when the 5 s header timeout fires.
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"GET / HTTP/1.1\r\nHost: t\r\n");
    std::thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    c.send(b"Bad(Name: x\r\n");
    let res = c.response();
    assert_eq!(res.status, 400);
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
}

#[test]
fn error_after_a_good_pipelined_request_keeps_the_first_response() {
    let server = spawn(app);
    let mut c = RawClient::connect(server.local_addr());
    let mut batch = get("/");
    batch.extend_from_slice(b"GET / HTTP/1.1\r\nHost: t\r\nBad Name: x\r\n\r\n");
    c.send(&batch);
    assert_eq!(c.response().body, b"hello");
    assert_eq!(c.response().status, 400);
    assert!(c.closed_within(Duration::from_secs(3)));
}

/// The connection remembers the last Host it found valid and skips the syntax check when the
/// next request repeats it: a different Host on the same connection is still checked, and an
/// absolute-form target that names another authority is still refused.
#[test]
fn a_remembered_host_does_not_let_a_bad_one_through() {
    let server = spawn(app);
    let cases: [(&[u8], u16); 3] = [
        (b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: t:99999\r\n\r\n", 400),
        (b"GET http://other/ HTTP/1.1\r\nHost: t\r\n\r\n", 400),
    ];
    for (second, status) in cases {
        let mut c = RawClient::connect(server.local_addr());
        let mut batch = get("/");
        batch.extend_from_slice(&get("/"));
        batch.extend_from_slice(second);
        c.send(&batch);
        assert_eq!(c.response().status, 200);
        assert_eq!(c.response().status, 200);
        assert_eq!(c.response().status, status, "{}", String::from_utf8_lossy(second));
        assert!(c.closed_within(Duration::from_secs(3)));
    }
}

#[test]
fn panicking_handler_gets_500_and_the_server_lives() {
    let server = spawn(app);
    let mut other = RawClient::connect(server.local_addr());
    other.send(&get("/"));
    assert_eq!(other.response().status, 200);

    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/panic"));
    let res = c.response();
    assert_eq!(res.status, 500);
    assert_eq!(res.header("connection"), Some("close"));

    // The other connection on the same (only) worker still works, and new ones too.
    other.send(&get("/"));
    assert_eq!(other.response().body, b"hello");
    let mut fresh = RawClient::connect(server.local_addr());
    fresh.send(&get("/"));
    assert_eq!(fresh.response().body, b"hello");
}
