//! The access log hook: every request, refused ones included, with what is known of it.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use peregrine::Server;
use support::{RawClient, app, get, test_config};

/// What a test keeps of a log entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    method: String,
    target: String,
    version: Option<peregrine::Version>,
    status: u16,
    bytes: u64,
    user_agent: Option<String>,
    refused: bool,
}

fn logged_server() -> (peregrine::ServerHandle, Arc<Mutex<Vec<Line>>>) {
    logged_server_with(test_config())
}

fn logged_server_with(
    config: peregrine::server::Config,
) -> (peregrine::ServerHandle, Arc<Mutex<Vec<Line>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    let server = Server::bind("127.0.0.1:0")
        .workers(1)
        .config(config)
        .access_log(move |e| {
            sink.lock().unwrap().push(Line {
                method: e.method.to_owned(),
                target: e.target.to_owned(),
                version: e.version,
                status: e.status,
                bytes: e.body_bytes,
                user_agent: e.user_agent.map(|u| String::from_utf8_lossy(u).into_owned()),
                refused: e.refused,
            });
        })
        .spawn(app)
        .unwrap();
    (server, lines)
}

fn wait_for(lines: &Mutex<Vec<Line>>, n: usize) -> Vec<Line> {
    for _ in 0..200 {
        let got = lines.lock().unwrap().clone();
        if got.len() >= n {
            return got;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    lines.lock().unwrap().clone()
}

#[test]
fn served_requests_are_logged_with_their_fields() {
    let (server, lines) = logged_server();
    let mut c = RawClient::connect(server.local_addr());
    c.send(b"GET /info?x HTTP/1.1\r\nHost: t\r\nUser-Agent: probe/1.0\r\n\r\n");
    c.response();
    c.send(&get("/stream"));
    c.response();
    c.send(&get("/nope"));
    c.response();
    let got = wait_for(&lines, 3);
    let v11 = Some(peregrine::Version::Http11);
    let line = |target: &str, status, bytes, ua: Option<&str>| Line {
        method: "GET".into(),
        target: target.into(),
        version: v11,
        status,
        bytes,
        user_agent: ua.map(str::to_owned),
        refused: false,
    };
    assert_eq!(
        got,
        [
            line("/info?x", 200, "GET /info x Http11".len() as u64, Some("probe/1.0")),
            line("/stream", 200, "part1;part2;part3;".len() as u64, None),
            line("/nope", 404, got[2].bytes, None),
        ]
    );
}

/// Regression: requests the parser refused (400/413/414/431/505) were missing from the log.
#[test]
fn refused_requests_are_logged() {
    struct Case {
        request: &'static [u8],
        method: &'static str,
        target: &'static str,
        version: Option<peregrine::Version>,
        status: u16,
    }
    let v11 = Some(peregrine::Version::Http11);
    let cases = [
        Case {
            request: b"GET / HTTP/1.1\r\n\r\n",
            method: "GET",
            target: "/",
            version: v11,
            status: 400,
        },
        Case {
            request: b"GET /x HTTP/3.0\r\nHost: t\r\n\r\n",
            method: "GET",
            target: "/x",
            version: None,
            status: 505,
        },
        Case {
            request: b"POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 999999999\r\n\r\n",
            method: "POST",
            target: "/up",
            version: v11,
            status: 413,
        },
        Case {
            request: b"G\x01T / HTTP/1.1\r\nHost: t\r\n\r\n",
            method: "G\\x01T",
            target: "/",
            version: v11,
            status: 400,
        },
    ];
    for case in cases {
        let (server, lines) = logged_server();
        let mut c = RawClient::connect(server.local_addr());
        c.send(case.request);
        assert_eq!(c.response().status, case.status);
        let got = wait_for(&lines, 1);
        assert_eq!(got.len(), 1, "{:?}", case.request);
        let line = &got[0];
        assert!(line.refused, "{line:?}");
        assert_eq!(
            (line.method.as_str(), line.target.as_str(), line.version, line.status),
            (case.method, case.target, case.version, case.status),
            "{:?}",
            case.request
        );
    }
}

/// A head that times out (a slowloris) gets no answer, but leaves a 408 in the log, as nginx's
/// does; a connection that sent nothing leaves no line.
#[test]
fn a_timed_out_head_is_logged_as_408() {
    let config = peregrine::server::Config {
        header_read_timeout: std::time::Duration::from_millis(300),
        ..test_config()
    };
    let (server, lines) = logged_server_with(config);
    let mut silent = RawClient::connect(server.local_addr());
    let mut slow = RawClient::connect(server.local_addr());
    slow.send(b"GET /slow HTTP/1.1\r\nHost: t\r\nX-A: ");
    assert!(slow.closed_within(std::time::Duration::from_secs(3)));
    assert!(slow.buffered().is_empty(), "nothing is answered");
    assert!(silent.closed_within(std::time::Duration::from_secs(3)));
    let got = wait_for(&lines, 1);
    assert_eq!(got.len(), 1, "{got:?}");
    let line = &got[0];
    assert!(line.refused, "{line:?}");
    assert_eq!((line.method.as_str(), line.target.as_str(), line.status), ("GET", "/slow", 408));
}
