//! The worker's memo of the last request head (`http1::LastHead`) over real connections: a head
//! that repeats it, on any connection of the worker, is answered as the parser would have it,
//! and a head one byte away from it gets its own verdict.

mod support;

use std::time::Duration;

use support::{RawClient, app, spawn};

const GOOD: &[u8] = b"GET /info?a=1 HTTP/1.1\r\nHost: t\r\n\r\n";

#[test]
fn a_repeated_head_is_answered_on_every_connection_and_a_near_one_is_judged_anew() {
    let server = spawn(app);
    // One connection sends the head, pipelined, several times: the later ones repeat it.
    let mut first = RawClient::connect(server.local_addr());
    first.send(&GOOD.repeat(5));
    for _ in 0..5 {
        let r = first.response();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"GET /info a=1 Http11"[..]));
    }
    // Another connection of the same worker, the same bytes: the same answer.
    let mut second = RawClient::connect(server.local_addr());
    second.send(GOOD);
    let r = second.response();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"GET /info a=1 Http11"[..]));

    // The same length, one byte changed: each is parsed and judged on its own.
    let near: [(&[u8], u16); 4] = [
        // RFC 9110 §5.5: a CTL in a field value.
        (b"GET /info?a=1 HTTP/1.1\r\nHost:\x01t\r\n\r\n", 400),
        // RFC 9112 §5.1: whitespace between the field name and the colon.
        (b"GET /info?a=1 HTTP/1.1\r\nHost :t\r\n\r\n", 400),
        // RFC 9110 §15.6.6: a version the server does not speak.
        (b"GET /info?a=1 HTTP/1.2\r\nHost: t\r\n\r\n", 505),
        // Another query: answered, with its own target.
        (b"GET /info?a=2 HTTP/1.1\r\nHost: t\r\n\r\n", 200),
    ];
    for (head, status) in near {
        assert_eq!(head.len(), GOOD.len());
        let mut c = RawClient::connect(server.local_addr());
        c.send(head);
        let r = c.response();
        assert_eq!(r.status, status, "{}", String::from_utf8_lossy(head));
        if status == 200 {
            assert_eq!(r.body, b"GET /info a=2 Http11");
        } else {
            assert!(c.closed_within(Duration::from_secs(3)));
        }
    }
    // And the remembered head still gets its answer after them.
    first.send(GOOD);
    let r = first.response();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"GET /info a=1 Http11"[..]));
}
