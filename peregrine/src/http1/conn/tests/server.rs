//! The server role's rules, each a row fed in every split.

use std::time::Instant;

use super::harness::{Answer, Server, Transcript, ok, refusal, response, splits};
use crate::http1::Limits;
use crate::http1::conn::Config;

struct Case {
    name: &'static str,
    config: Config,
    answer: Answer,
    input: &'static [u8],
    /// The client closes its side after the input.
    eof: bool,
    log: &'static [&'static str],
    out: String,
    closed: bool,
}

fn config() -> Config {
    Config::default()
}

fn run(case: &Case, pieces: &[&[u8]]) -> Transcript {
    let mut server = Server::new(case.config.clone(), case.answer, Instant::now());
    for piece in pieces {
        server.feed(piece);
    }
    if case.eof {
        server.eof();
    }
    server.transcript()
}

fn check(cases: &[Case]) {
    for case in cases {
        let whole = run(case, &[case.input]);
        for pieces in splits(case.input) {
            let got = run(case, &pieces);
            assert_eq!(got, whole, "{}: split {:?}", case.name, pieces.len());
        }
        assert_eq!(whole.log, case.log, "{}", case.name);
        assert_eq!(whole.out, case.out, "{}", case.name);
        assert_eq!(whole.closed, case.closed, "{}", case.name);
    }
}

#[test]
fn keep_alive_pipelining_and_close() {
    check(&[
        Case {
            name: "one GET, kept alive (RFC 9112 §9.3)",
            config: config(),
            answer: Answer::Read,
            input: b"GET /a HTTP/1.1\r\nHost: t\r\n\r\n",
            eof: false,
            log: &["> GET /a", "< 200"],
            out: ok(false),
            closed: false,
        },
        Case {
            name: "pipelined requests answered in order (RFC 9112 §9.3.2)",
            config: config(),
            answer: Answer::Read,
            input: b"GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n\
                     HEAD /c HTTP/1.1\r\nHost: t\r\n\r\n",
            eof: false,
            log: &["> GET /a", "< 200", "> GET /b", "< 200", "> HEAD /c", "< 200"],
            out: [ok(false), ok(false), response(200, "", false).replace("length: 0", "length: 2")]
                .concat(),
            closed: false,
        },
        Case {
            name: "Connection: close ends the connection after its response (RFC 9112 §9.6)",
            config: config(),
            answer: Answer::Read,
            input:
                b"GET /a HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\n\r\n",
            eof: false,
            log: &["> GET /a", "< 200 close"],
            out: ok(true),
            closed: true,
        },
        Case {
            name: "HTTP/1.0 persists only when it asks (RFC 9112 §9.3)",
            config: config(),
            answer: Answer::Read,
            input: b"GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.0\r\n\r\n",
            eof: false,
            log: &["> GET /a", "< 200", "> GET /b", "< 200 close"],
            out: [
                ok(false).replace("\r\n\r\nok", "\r\nconnection: keep-alive\r\n\r\nok"),
                ok(true),
            ]
            .concat(),
            closed: true,
        },
        Case {
            name: "the client's end between requests closes quietly",
            config: config(),
            answer: Answer::Read,
            input: b"GET /a HTTP/1.1\r\nHost: t\r\n\r\n",
            eof: true,
            log: &["> GET /a", "< 200"],
            out: ok(false),
            closed: true,
        },
        Case {
            name: "the client's end inside a head: nobody to answer",
            config: config(),
            answer: Answer::Read,
            input: b"GET /a HTTP/1.1\r\nHost",
            eof: true,
            log: &[],
            out: String::new(),
            closed: true,
        },
    ]);
}

#[test]
fn bodies_read_settled_and_drained() {
    check(&[
        Case {
            name: "a Content-Length body, read (RFC 9112 §6.2)",
            config: config(),
            answer: Answer::Read,
            input: b"POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\nHost: t\r\n\r\n",
            eof: false,
            log: &["> POST /a", "data hello", "end", "< 200", "> GET /b", "< 200"],
            out: [ok(false), ok(false)].concat(),
            closed: false,
        },
        Case {
            name: "a chunked body with trailers, read (RFC 9112 §7.1)",
            config: config(),
            answer: Answer::Read,
            input: b"POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
                     3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nX-Sum: 5\r\n\r\n",
            eof: false,
            log: &["> POST /a", "data abcde", "end x-sum=5", "< 200"],
            out: ok(false),
            closed: false,
        },
        Case {
            name: "an unread body, all buffered: settled, the connection goes on",
            config: config(),
            answer: Answer::Ignore,
            input: b"POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\nHost: t\r\n\r\n",
            eof: false,
            log: &["> POST /a", "< 200", "> GET /b", "< 200"],
            out: [ok(false), ok(false)].concat(),
            closed: false,
        },
        Case {
            name: "an unread body declared past max_drain_bytes: close after the response",
            config: Config { max_drain_bytes: 4, ..config() },
            answer: Answer::Ignore,
            input: b"POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello",
            eof: false,
            log: &["> POST /a", "< 200 close"],
            out: ok(true),
            closed: true,
        },
        Case {
            name: "a read body cut by the client's end: the handler's error, then close",
            config: config(),
            answer: Answer::Read,
            input: b"POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 9\r\n\r\nhello",
            eof: true,
            log: &["> POST /a", "data hello", "error 400", "< 400 close"],
            out: response(400, "bad", true),
            closed: true,
        },
        Case {
            name: "a body over max_body_bytes by its declared length: 413 before it is read",
            config: Config { max_body_bytes: 4, ..config() },
            answer: Answer::Read,
            input: b"POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello",
            eof: false,
            log: &["error 413"],
            out: refusal(413, "body too large"),
            closed: true,
        },
    ]);
}

/// The malformed chunk of an unread body found by `settle` when it is buffered: whether it is
/// depends on the split, so this row is fed whole only.
#[test]
fn a_malformed_unread_body_gets_its_status() {
    let case = Case {
        name: "settle finds the bad chunk",
        config: config(),
        answer: Answer::Ignore,
        input: b"POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        eof: false,
        log: &[],
        out: String::new(),
        closed: true,
    };
    let mut server = Server::new(case.config.clone(), case.answer, Instant::now());
    server.feed(&case.input[..case.input.len() - 4]);
    let t = server.transcript();
    assert_eq!(t.log, ["> POST /a", "< 200"]);
    // Whole: the chunk is buffered when the handler answers.
    let got = run(&case, &[case.input]);
    assert_eq!(got.log, ["> POST /a", "settle error 400", "< 400 close"]);
    assert_eq!(got.out, response(400, "bad", true));
    assert!(got.closed);
}

/// A chunked body growing past the limit fails when it passes it (how much of it was
/// delivered first depends on the split).
#[test]
fn a_chunked_body_past_max_body_bytes_fails() {
    let config = Config { max_body_bytes: 4, ..config() };
    let mut server = Server::new(config, Answer::Read, Instant::now());
    server.feed(b"POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
    let t = server.transcript();
    assert_eq!(t.log, ["> POST /a", "error 413", "< 413 close"]);
    assert_eq!(t.out, response(413, "bad", true));
    assert!(t.closed);
}

#[test]
fn expect_100_continue() {
    // RFC 9110 §10.1.1: the 100 goes when the body is first asked for and none has come.
    let input = b"POST /a HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n";
    let mut server = Server::new(config(), Answer::Read, Instant::now());
    server.feed(input);
    server.feed(b"hello");
    let t = server.transcript();
    assert_eq!(t.log, ["> POST /a", "data hello", "end", "< 200"]);
    assert_eq!(t.out, ["HTTP/1.1 100 Continue\r\n\r\n".to_owned(), ok(false)].concat());

    // The body came with the head: no 100 ("a server MAY omit sending a 100 response if it
    // has already received some or all of the content").
    let mut server = Server::new(config(), Answer::Read, Instant::now());
    server.feed(&[&input[..], b"hello"].concat());
    assert_eq!(server.transcript().out, ok(false));

    // Answered without asking for the body: no 100, and the client may be holding the body
    // back, so the connection closes after the response.
    let mut server = Server::new(config(), Answer::Ignore, Instant::now());
    server.feed(input);
    let t = server.transcript();
    assert_eq!(t.log, ["> POST /a", "< 200 close"]);
    assert_eq!(t.out, ok(true));
    assert!(t.closed);

    // HTTP/1.0 ignores the expectation (RFC 9110 §10.1.1).
    let mut server = Server::new(config(), Answer::Read, Instant::now());
    server.feed(b"POST /a HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n");
    server.feed(b"x");
    assert!(!server.transcript().out.contains("100 Continue"));
}

#[test]
fn an_unread_body_is_drained_after_the_response() {
    // The body arrives after the response: it is discarded, then the next request is served.
    let mut server = Server::new(config(), Answer::Ignore, Instant::now());
    server.feed(b"POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 12\r\n\r\nhel");
    server.feed(b"lo, worl");
    server.feed(b"dGET /b HTTP/1.1\r\nHost: t\r\n\r\n");
    let t = server.transcript();
    assert_eq!(t.log, ["> POST /a", "< 200", "> GET /b", "< 200"]);
    assert_eq!(t.out, [ok(false), ok(false)].concat());

    // More than max_drain_bytes after the response: the connection closes.
    let config = Config { max_drain_bytes: 6, ..config() };
    let mut server = Server::new(config, Answer::Ignore, Instant::now());
    server.feed(b"POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
    server.feed(b"4\r\nabcd\r\n4\r\nefgh\r\n");
    assert!(server.transcript().closed);
}

#[test]
fn refusals_of_bad_heads() {
    let long = Limits { max_target_bytes: 8, ..Limits::default() };
    check(&[
        Case {
            name: "a malformed head: its status, its reason, close (RFC 9112 §3)",
            config: config(),
            answer: Answer::Read,
            input: b"GET / HTTP/1.1\r\nBad(Name: x\r\n\r\n",
            eof: false,
            log: &["error 400"],
            out: refusal(400, "invalid header name"),
            closed: true,
        },
        Case {
            name: "after a good pipelined request, the good one is answered first",
            config: config(),
            answer: Answer::Read,
            input: b"GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\n\r\n",
            eof: false,
            log: &["> GET /a", "< 200", "error 400"],
            out: [ok(false), refusal(400, "missing Host")].concat(),
            closed: true,
        },
        Case {
            name: "a target over the limit: 414 (RFC 9112 §3)",
            config: Config { limits: long, ..config() },
            answer: Answer::Read,
            input: b"GET /abcdefghijk HTTP/1.1\r\nHost: t\r\n\r\n",
            eof: false,
            log: &["error 414"],
            out: refusal(414, "request-target too long"),
            closed: true,
        },
        Case {
            name: "an unsupported version: 505 (RFC 9110 §15.6.6)",
            config: config(),
            answer: Answer::Read,
            input: b"GET / HTTP/2.0\r\nHost: t\r\n\r\n",
            eof: false,
            log: &["error 505"],
            out: refusal(505, "HTTP version not supported"),
            closed: true,
        },
        Case {
            name: "an unknown transfer coding: 501 (RFC 9112 §6.1)",
            config: config(),
            answer: Answer::Read,
            input: b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            eof: false,
            log: &["error 501"],
            out: refusal(501, "transfer coding not implemented"),
            closed: true,
        },
        Case {
            name: "garbage answered 400 when no HTTP/2 client may come",
            config: config(),
            answer: Answer::Read,
            input: b"HELLO\r\n\r\n",
            eof: false,
            log: &["error 400"],
            out: refusal(400, "invalid request line"),
            closed: true,
        },
    ]);
}

#[test]
fn the_http2_preface_and_bytes_that_are_not_http1() {
    let h2 = Config { http2_preface: true, ..config() };
    check(&[
        Case {
            name: "the preface (RFC 9113 §3.4) is reported whole, nothing used",
            config: h2.clone(),
            answer: Answer::Read,
            input: b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04",
            eof: false,
            log: &["h2 preface"],
            out: String::new(),
            closed: false,
        },
        Case {
            name: "a mangled preface is closed unanswered",
            config: h2.clone(),
            answer: Answer::Read,
            input: b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n",
            eof: false,
            log: &["error 400 unanswered"],
            out: String::new(),
            closed: true,
        },
        Case {
            name: "h2spec's invalid preface is closed unanswered",
            config: h2.clone(),
            answer: Answer::Read,
            input: b"INVALID CONNECTION PREFACE\r\n\r\n",
            eof: false,
            log: &["error 400 unanswered"],
            out: String::new(),
            closed: true,
        },
        Case {
            name: "a bad version on a line that begins HTTP/1 is answered",
            config: h2.clone(),
            answer: Answer::Read,
            input: b"GET /plaintext HTTX/1.1\r\nHost: t\r\n\r\n",
            eof: false,
            log: &["error 400"],
            out: refusal(400, "invalid HTTP version"),
            closed: true,
        },
        Case {
            name: "the preface after a request is an HTTP/1 line: 505",
            config: h2,
            answer: Answer::Read,
            input: b"GET / HTTP/1.1\r\nHost: t\r\n\r\nPRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            eof: false,
            log: &["> GET /", "< 200", "error 505"],
            out: [ok(false), refusal(505, "HTTP version not supported")].concat(),
            closed: true,
        },
    ]);
}

#[test]
fn upgrade_hands_off_after_the_101() {
    // RFC 9110 §7.8, §15.2.2: the bytes after the request's head are the new protocol's.
    let case = Case {
        name: "101 to an upgrade request",
        config: config(),
        answer: Answer::Switch,
        input:
            b"GET /ws HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n\x81\x00",
        eof: false,
        log: &["> GET /ws", "< 101"],
        out: "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\
              date: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\n"
            .into(),
        closed: false,
    };
    check(std::slice::from_ref(&case));
    let t = run(&case, &[case.input]);
    assert!(t.upgraded);
    assert_eq!(t.rest, b"\x81\x00");

    // A 101 the request did not ask for is refused (nothing written).
    let mut server = Server::new(config(), Answer::Switch, Instant::now());
    server.feed(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(server.transcript().log, ["> GET /", "send error InvalidStatus"]);
    assert_eq!(server.transcript().out, "");
}

#[test]
fn a_shutdown_closes_after_the_next_response() {
    let mut server = Server::new(config(), Answer::Read, Instant::now());
    server.feed(b"GET /a HTTP/1.1\r\nHost: t\r\n\r\n");
    assert!(server.conn.is_idle());
    server.conn.shutdown();
    server.feed(b"GET /b HTTP/1.1\r\nHost: t\r\n\r\n");
    let t = server.transcript();
    assert_eq!(t.log, ["> GET /a", "< 200", "> GET /b", "< 200 close"]);
    assert!(t.closed);
}

#[test]
fn more_fields_than_storage_asks_for_more() {
    let mut input = b"GET / HTTP/1.1\r\nHost: t\r\n".to_vec();
    for i in 0..12 {
        input.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    input.extend_from_slice(b"\r\n");
    let mut server = Server::new(config(), Answer::Read, Instant::now());
    server.feed(&input);
    assert_eq!(server.transcript().log, ["need 100 slots", "> GET /", "< 200"]);
}
