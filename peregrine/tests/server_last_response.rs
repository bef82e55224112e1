//! The worker's last response head (`server/h1/last_response.rs`) against responses that differ
//! from the last one in one part each — status, a field's value, the body's length, a framing
//! field set by hand, the handler's own Date, HEAD, HTTP/1.0, close — interleaved over two
//! connections of one worker: every head must be the one the encoder would write for it, never
//! the previous response's.

mod support;

use http::header::{CONTENT_LENGTH, CONTENT_TYPE, DATE, HeaderValue, SERVER};
use http::{HeaderName, StatusCode};
use peregrine::{Body, Request, Response};
use support::{RawClient, RawResponse, spawn};

const OWN_DATE: &str = "Sun, 06 Nov 1994 08:49:37 GMT";

async fn varied(req: Request) -> Response {
    let q = req.query().unwrap_or("").to_owned();
    let base = |status, body: Vec<u8>| {
        Response::with_status(status, Body::from(body))
            .with_header(CONTENT_TYPE, HeaderValue::from_static("text/plain"))
            .with_header(SERVER, HeaderValue::from_static("peregrine"))
    };
    match req.path() {
        "/a" => base(StatusCode::OK, b"A".to_vec()),
        "/missing" => base(StatusCode::NOT_FOUND, b"A".to_vec()),
        "/n" => base(StatusCode::OK, b"A".to_vec())
            .with_header(HeaderName::from_static("x-n"), HeaderValue::from_str(&q).unwrap()),
        "/len" => base(StatusCode::OK, vec![b'x'; q.parse().unwrap()]),
        "/cl" => base(StatusCode::OK, b"A".to_vec())
            .with_header(CONTENT_LENGTH, HeaderValue::from_static("99")),
        "/date" => base(StatusCode::OK, b"A".to_vec())
            .with_header(DATE, HeaderValue::from_static(OWN_DATE)),
        _ => Response::with_status(StatusCode::OK, Body::from(b"A".to_vec())),
    }
}

/// One request and what its response must say.
struct Case {
    request: &'static str,
    status: u16,
    /// Content-Type, Server, X-N, Content-Length, Connection (None: absent).
    fields: [Option<&'static str>; 5],
    body: &'static [u8],
    head: bool,
}

const PLAIN: Option<&str> = Some("text/plain");
const SRV: Option<&str> = Some("peregrine");

fn check(case: &Case, res: &RawResponse) {
    let r = case.request;
    assert_eq!(res.status, case.status, "{r}");
    let names = ["content-type", "server", "x-n", "content-length", "connection"];
    for (name, want) in names.iter().zip(case.fields) {
        let all: Vec<&str> = res
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(all, want.into_iter().collect::<Vec<_>>(), "{r}: {name}");
    }
    let dates = res.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("date")).count();
    assert_eq!(dates, 1, "{r}: one Date");
    if r.starts_with("GET /date") {
        assert_eq!(res.header("date"), Some(OWN_DATE), "{r}");
    } else {
        assert_ne!(res.header("date"), Some(OWN_DATE), "{r}: the handler's Date stays its own");
    }
    assert_eq!(res.body, case.body, "{r}");
}

#[test]
fn a_kept_head_is_written_only_for_a_response_that_repeats_it() {
    let cases = [
        Case {
            request: "GET /a HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("1"), None],
            body: b"A",
            head: false,
        },
        Case {
            request: "GET /a HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("1"), None],
            body: b"A",
            head: false,
        },
        Case {
            request: "GET /missing HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 404,
            fields: [PLAIN, SRV, None, Some("1"), None],
            body: b"A",
            head: false,
        },
        Case {
            request: "GET /n?1 HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, Some("1"), Some("1"), None],
            body: b"A",
            head: false,
        },
        Case {
            request: "GET /n?2 HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, Some("2"), Some("1"), None],
            body: b"A",
            head: false,
        },
        Case {
            request: "GET /len?2 HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("2"), None],
            body: b"xx",
            head: false,
        },
        Case {
            request: "GET /len?3 HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("3"), None],
            body: b"xxx",
            head: false,
        },
        Case {
            request: "GET /cl HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("1"), None],
            body: b"A",
            head: false,
        },
        Case {
            request: "GET /cl HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("1"), None],
            body: b"A",
            head: false,
        },
        Case {
            request: "GET /date HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("1"), None],
            body: b"A",
            head: false,
        },
        Case {
            request: "GET /date HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("1"), None],
            body: b"A",
            head: false,
        },
        Case {
            request: "GET /plain HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [None, None, None, Some("1"), None],
            body: b"A",
            head: false,
        },
        Case {
            request: "HEAD /a HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("1"), None],
            body: b"",
            head: true,
        },
        Case {
            request: "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("1"), Some("keep-alive")],
            body: b"A",
            head: false,
        },
        Case {
            request: "GET /a HTTP/1.1\r\nHost: t\r\n\r\n",
            status: 200,
            fields: [PLAIN, SRV, None, Some("1"), None],
            body: b"A",
            head: false,
        },
    ];
    let server = spawn(varied);
    let mut conns =
        [RawClient::connect(server.local_addr()), RawClient::connect(server.local_addr())];
    // One at a time, alternating connections (the last response head is the worker's, shared by
    // both).
    for (i, case) in cases.iter().enumerate() {
        let c = &mut conns[i % 2];
        c.send(case.request.as_bytes());
        let res = if case.head { c.head_response() } else { c.response() };
        check(case, &res);
    }
    // Pipelined on one connection: every head of a batch lands in one write buffer.
    let c = &mut conns[0];
    let batch: Vec<u8> = cases.iter().filter(|c| !c.head).flat_map(|c| c.request.bytes()).collect();
    c.send(&batch);
    for case in cases.iter().filter(|c| !c.head) {
        check(case, &c.response());
    }
    // And a last one that closes.
    c.send(b"GET /a HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let res = c.response();
    check(
        &Case {
            request: "GET /a (close)",
            status: 200,
            fields: [PLAIN, SRV, None, Some("1"), Some("close")],
            body: b"A",
            head: false,
        },
        &res,
    );
}
