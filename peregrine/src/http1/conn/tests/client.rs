//! The client role's rules, each a row fed in every split.

use std::mem::MaybeUninit;
use std::sync::Arc;
use std::time::Instant;

use super::harness::{Client, splits};
use crate::Method;
use crate::http1::conn::{Config, Conn, Error, Event, Role, SendError};

struct Case {
    name: &'static str,
    requests: &'static [Method],
    input: &'static [u8],
    eof: bool,
    log: &'static [&'static str],
    reusable: bool,
}

fn run(case: &Case, pieces: &[&[u8]], response_only: bool) -> (Vec<String>, bool) {
    let mut client = Client::new(Config::default(), Instant::now());
    client.response_only = response_only;
    for &method in case.requests {
        client.send(method, Some(0), b"");
    }
    for piece in pieces {
        client.feed(piece);
    }
    if case.eof {
        client.eof();
    }
    (client.log().to_vec(), client.conn.is_reusable())
}

#[test]
fn responses() {
    let cases = [
        Case {
            name: "a Content-Length body (RFC 9112 §6.3 rule 6)",
            requests: &[Method::Get],
            input: b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            eof: false,
            log: &["> 200", "data hello", "end"],
            reusable: true,
        },
        Case {
            name: "a chunked body with trailers (RFC 9112 §7.1)",
            requests: &[Method::Get],
            input: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-A: 1\r\n\r\n",
            eof: false,
            log: &["> 200", "data hello", "end x-a=1"],
            reusable: true,
        },
        Case {
            name: "a close-delimited body ends with the input (RFC 9112 §6.3 rule 8)",
            requests: &[Method::Get],
            input: b"HTTP/1.1 200 OK\r\n\r\nuntil the end",
            eof: true,
            log: &["> 200", "data until the end", "end"],
            reusable: false,
        },
        Case {
            name: "interim responses are skipped (RFC 9110 §15.2)",
            requests: &[Method::Get],
            input: b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
                     HTTP/1.1 204 No Content\r\n\r\n",
            eof: false,
            log: &["> 204", "end"],
            reusable: true,
        },
        Case {
            name: "HEAD: no body whatever Content-Length says (RFC 9110 §9.3.2)",
            requests: &[Method::Head, Method::Get],
            input: b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            eof: false,
            log: &["> 200", "end", "> 200", "data ok", "end"],
            reusable: true,
        },
        Case {
            name: "Connection: close: no further request (RFC 9112 §9.6)",
            requests: &[Method::Get],
            input: b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
            eof: false,
            log: &["> 200", "data ok", "end"],
            reusable: false,
        },
        Case {
            name: "pipelined responses in order, the second cut by the close",
            requests: &[Method::Get, Method::Get],
            input: b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nContent-Len",
            eof: true,
            log: &["> 200", "data a", "end", "error 400"],
            reusable: false,
        },
        Case {
            name: "a malformed head fails the connection (502 for a gateway)",
            requests: &[Method::Get],
            input: b"HTTP/1.1 20 OK\r\n\r\n",
            eof: false,
            log: &["error 502"],
            reusable: false,
        },
        Case {
            name: "bytes with no request in flight",
            requests: &[],
            input: b"HTTP/1.1 200 OK\r\n\r\n",
            eof: false,
            log: &["error 400"],
            reusable: false,
        },
    ];
    for case in &cases {
        let whole = run(case, &[case.input], false);
        for pieces in splits(case.input) {
            assert_eq!(run(case, &pieces, false), whole, "{}: {} pieces", case.name, pieces.len());
            // `recv_response`, the client's reading alone, reads the same.
            assert_eq!(run(case, &pieces, true), whole, "{}: {} pieces", case.name, pieces.len());
        }
        assert_eq!(whole.0, case.log, "{}", case.name);
        assert_eq!(whole.1, case.reusable, "{}", case.name);
    }
}

#[test]
fn recv_response_reads_nothing_on_a_server_connection() {
    let mut server = Conn::new(Role::Server, Arc::new(Config::default()), Instant::now());
    let mut storage = [const { MaybeUninit::uninit() }; 8];
    let (used, event) = server.recv_response(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n", &mut storage);
    assert_eq!((used, event.is_none()), (0, true));
}

#[test]
fn the_end_of_input_says_whether_the_request_may_be_retried() {
    let mut c = Client::new(Config::default(), Instant::now());
    c.send(Method::Get, Some(0), b"");
    assert_eq!(
        c.conn.recv_eof().map(|e| format!("{e:?}")),
        Some(format!("{:?}", Event::Error(Error::Closed { unprocessed: true })))
    );

    let mut c = Client::new(Config::default(), Instant::now());
    c.send(Method::Get, Some(0), b"");
    c.feed(b"HTTP/1.1 200");
    let Some(Event::Error(Error::Closed { unprocessed })) = c.conn.recv_eof() else { panic!() };
    assert!(!unprocessed);
}

#[test]
fn a_101_hands_the_connection_over() {
    let mut c = Client::new(Config::default(), Instant::now());
    c.send(Method::Get, Some(0), b"");
    c.feed(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n\x81\x00",
    );
    assert_eq!(c.log(), ["> 101", "end"]);
    assert!(c.conn.is_upgraded());
    assert_eq!(c.rest(), b"\x81\x00");
}

#[test]
fn pipelining_only_behind_idempotent_requests() {
    // RFC 9112 §9.3.2: "A user agent SHOULD NOT pipeline requests after a non-idempotent
    // method, until the final response status code for that method has been received".
    let mut c = Client::new(Config::default(), Instant::now());
    assert!(c.conn.can_send(Method::Get));
    c.send(Method::Get, Some(0), b"");
    assert!(c.conn.can_send(Method::Put), "PUT is idempotent (RFC 9110 §9.2.2)");
    assert!(!c.conn.can_send(Method::Post));
    c.send(Method::Post, Some(0), b"");
    assert_eq!(c.log(), ["send error NotReady"]);
    c.feed(b"HTTP/1.1 204 No Content\r\n\r\n");
    c.send(Method::Post, Some(0), b"");
    assert!(!c.conn.can_send(Method::Get), "nothing behind a POST");
    assert_eq!(c.conn.in_flight(), 1);
    c.feed(b"HTTP/1.1 204 No Content\r\n\r\n");
    assert!(c.conn.can_send(Method::Post));
}

#[test]
fn request_bodies_are_framed() {
    let mut c = Client::new(Config::default(), Instant::now());
    c.send(Method::Post, None, b"ab");
    let mut out = std::mem::take(&mut c.out);
    assert!(!c.conn.can_send(Method::Get), "a body is being sent");
    c.conn.send_data(b"cde", &mut out).unwrap();
    c.conn.send_payload(4, &mut out).unwrap();
    out.extend_from_slice(b"fghi");
    c.conn.finish(&[("X-Sum", b"9"), ("Content-Length", b"9")], &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.ends_with("\r\n\r\n2\r\nab\r\n3\r\ncde\r\n4\r\nfghi\r\n0\r\nX-Sum: 9\r\n\r\n"),
        "{text}"
    );
    c.feed(b"HTTP/1.1 204 No Content\r\n\r\n");
    assert!(c.conn.can_send(Method::Get), "the body and its response are done");

    let mut c = Client::new(Config::default(), Instant::now());
    c.send(Method::Post, Some(5), b"ab");
    let mut out = Vec::new();
    assert_eq!(c.conn.send_data(b"cdef", &mut out), Err(SendError::TooLong));
    c.conn.send_data(b"cd", &mut out).unwrap();
    assert_eq!(c.conn.finish(&[], &mut out), Err(SendError::TooShort));
    assert!(!c.conn.is_reusable());

    let mut c = Client::new(Config::default(), Instant::now());
    c.send(Method::Post, Some(1), b"ab");
    assert_eq!(c.log(), ["send error TooLong"]);
}
