use super::*;
use crate::http1::parse_request_uninit;

/// The outcome as text, so heads over different buffers compare by content.
fn shown(r: &Result<Status<RequestHead<'_, '_>>, ParseError>) -> String {
    format!("{r:?}")
}

/// Parses `buf` through `last` and checks the outcome against a stateless parse.
fn check(last: &mut LastHead, buf: &[u8], limits: &Limits, room: usize) -> String {
    let mut scanner = HeadScanner::new();
    let mut a = [const { MaybeUninit::uninit() }; 40];
    let mut b = [const { MaybeUninit::uninit() }; 40];
    let memo = last.parse_uninit(&mut scanner, buf, &mut a[..room], limits);
    let plain = parse_request_uninit(buf, &mut b[..room], limits);
    assert_eq!(shown(&memo), shown(&plain), "{}", String::from_utf8_lossy(buf));
    if let (Ok(Status::Complete(m)), Ok(Status::Complete(p))) = (&memo, &plain) {
        // Every span is cut from this input, where the parser would cut it.
        assert_eq!(m.target.as_ptr(), p.target.as_ptr());
        for (x, y) in m.headers.iter().zip(p.headers) {
            assert_eq!(x.name.as_ptr(), y.name.as_ptr());
            assert_eq!(x.value.as_ptr(), y.value.as_ptr());
        }
    }
    shown(&memo)
}

const HEADS: &[&[u8]] = &[
    b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"HEAD / HTTP/1.0\r\n\r\n",
    b"\r\nGET /a?b=c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"PURGE /cache HTTP/1.1\r\nHost: x\r\n\r\n",
    b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
    b"CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n",
    b"GET http://a.example/p HTTP/1.1\r\nHost: a.example\r\n\r\n",
    b"POST /f HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nX-Empty:\r\nX-Ows: \t v \t\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: \xff obs-text\r\nTE: trailers\r\nte: x\r\n\r\n",
];

#[test]
fn a_repeat_gets_the_parsers_head_with_spans_in_the_new_bytes() {
    let limits = Limits::default();
    for &head in HEADS {
        let mut last = LastHead::new();
        let first = check(&mut last, head, &limits, 40);
        assert!(first.starts_with("Ok(Complete("), "{first}");
        assert!(last.repeats(head), "{}", String::from_utf8_lossy(head));
        // The same head again, at another address and followed by other bytes (the next
        // pipelined head, or garbage): the same outcome, every span in the new copy.
        for tail in [&b""[..], b"GET / HTTP/1.1\r\n\r\n", b"\x00\r\n\r\n"] {
            let buf = [head, tail].concat();
            assert_eq!(check(&mut last, &buf, &limits, 40), first);
            assert!(last.repeats(&buf));
        }
    }
}

#[test]
fn any_other_bytes_get_the_parsers_outcome() {
    let limits = Limits::default();
    let mut last = LastHead::new();
    let a: &[u8] = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
    check(&mut last, a, &limits, 40);
    // One byte changed anywhere: a different head, or the parser's precise error.
    for i in 0..a.len() {
        for byte in [b'\n', b' ', b'b', 0x7f, b':'] {
            let mut other = a.to_vec();
            other[i] = byte;
            let mut again = LastHead::new();
            check(&mut again, a, &limits, 40);
            check(&mut again, &other, &limits, 40);
            // Whatever it remembers now answers both inputs as the parser does.
            check(&mut again, a, &limits, 40);
            check(&mut again, &other, &limits, 40);
        }
    }
    // A prefix of the remembered head is incomplete, not a repeat.
    assert!(!last.repeats(&a[..a.len() - 1]));
    assert_eq!(check(&mut last, &a[..a.len() - 1], &limits, 40), "Ok(Partial)");
    // An error does not replace the memo.
    check(&mut last, b"GET /a HTTP/1.1\r\nHost : x\r\n\r\n", &limits, 40);
    assert!(last.repeats(a));
}

#[test]
fn other_limits_or_less_storage_get_the_parsers_verdict() {
    let head: &[u8] = b"GET /abcdef HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\n\r\n";
    let mut last = LastHead::new();
    check(&mut last, head, &Limits::default(), 40);
    let tight = [
        Limits { max_headers: 2, ..Limits::default() },
        Limits { max_target_bytes: 4, ..Limits::default() },
        Limits { max_head_bytes: 20, ..Limits::default() },
    ];
    for limits in tight {
        assert!(check(&mut last, head, &limits, 40).starts_with("Err("), "{limits:?}");
        // Remembered under the default limits, the head is not answered under these.
        assert!(last.repeats(head));
    }
    assert_eq!(check(&mut last, head, &Limits::default(), 2), "Err(TooManyHeaders)");
    assert!(check(&mut last, head, &Limits::default(), 3).starts_with("Ok(Complete("));
}

#[test]
fn long_heads_and_many_fields_are_not_remembered() {
    let limits = Limits::default();
    let long = format!("GET / HTTP/1.1\r\nHost: x\r\nA: {}\r\n\r\n", "v".repeat(LAST_HEAD_BYTES));
    let mut last = LastHead::new();
    check(&mut last, long.as_bytes(), &limits, 40);
    assert!(!last.repeats(long.as_bytes()));
    let fields: String = (0..=LAST_HEAD_FIELDS).map(|i| format!("F{i}: v\r\n")).collect();
    let many = format!("GET / HTTP/1.1\r\n{fields}\r\n");
    check(&mut last, many.as_bytes(), &limits, 40);
    assert!(!last.repeats(many.as_bytes()));
    // The largest remembered: exactly the limits.
    let fields: String = (0..LAST_HEAD_FIELDS).map(|i| format!("F{i}: v\r\n")).collect();
    let most = format!("GET / HTTP/1.1\r\n{fields}\r\n");
    check(&mut last, most.as_bytes(), &limits, 40);
    assert!(last.repeats(most.as_bytes()));
    check(&mut last, most.as_bytes(), &limits, 40);
}

#[test]
fn a_repeat_ends_a_pending_scan_and_counts_as_work() {
    let limits = Limits::default();
    let head: &[u8] = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut last = LastHead::new();
    check(&mut last, head, &limits, 40);
    let mut scanner = HeadScanner::new();
    let mut storage = [const { MaybeUninit::uninit() }; 8];
    // A trickled head leaves the scanner pending; the repeat completes it.
    let partial = last.parse_uninit(&mut scanner, &head[..10], &mut storage, &limits);
    assert!(matches!(partial, Ok(Status::Partial)));
    let before = scanner.work();
    let done = last.parse_uninit(&mut scanner, head, &mut storage, &limits);
    assert!(matches!(done, Ok(Status::Complete(h)) if h.len == head.len()));
    assert_eq!(scanner.work(), before + head.len() as u64);
    // The scanner starts the next head fresh: a bad line is refused at once.
    let next = scanner.parse_uninit(b"GET / HTTP/1.1\r\nBad Name: x\r\n", &mut storage, &limits);
    assert_eq!(next.err(), Some(ParseError::WhitespaceBeforeColon));
}

#[test]
fn a_head_that_stops_repeating_is_replaced_after_sixteen_others() {
    let limits = Limits::default();
    let a: &[u8] = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
    let b: &[u8] = b"GET /b HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut last = LastHead::new();
    check(&mut last, a, &limits, 40);
    // `a` coming back every so often keeps its place.
    for _ in 0..3 {
        for _ in 0..usize::from(REPLACE_AFTER) {
            check(&mut last, b, &limits, 40);
        }
        assert!(last.repeats(a) && !last.repeats(b));
        check(&mut last, a, &limits, 40);
    }
    // Sixteen others in a row: the next complete head takes its place.
    for _ in 0..usize::from(REPLACE_AFTER) {
        check(&mut last, b, &limits, 40);
    }
    assert!(last.repeats(a));
    check(&mut last, b, &limits, 40);
    assert!(last.repeats(b) && !last.repeats(a));
}

/// Parses `buf` through `last` and checks the outcome against a stateless response parse.
fn check_response(last: &mut LastResponseHead, buf: &[u8], limits: &Limits) -> String {
    let mut scanner = HeadScanner::new();
    let mut a = [const { MaybeUninit::uninit() }; 40];
    let mut b = [const { MaybeUninit::uninit() }; 40];
    let memo = last.parse_uninit(&mut scanner, buf, &mut a, limits);
    let plain = crate::http1::parse_response_uninit(buf, &mut b, limits);
    assert_eq!(format!("{memo:?}"), format!("{plain:?}"), "{}", String::from_utf8_lossy(buf));
    if let (Ok(Status::Complete(m)), Ok(Status::Complete(p))) = (&memo, &plain) {
        assert_eq!(m.reason.as_ptr(), p.reason.as_ptr());
        for (x, y) in m.headers.iter().zip(p.headers) {
            assert_eq!(x.name.as_ptr(), y.name.as_ptr());
            assert_eq!(x.value.as_ptr(), y.value.as_ptr());
        }
    }
    format!("{memo:?}")
}

#[test]
fn a_repeated_response_head_gets_the_parsers_head() {
    let limits = Limits::default();
    let heads: &[&[u8]] = &[
        b"HTTP/1.1 200 OK\r\nServer: p\r\nDate: Tue, 24 Nov 2026 21:00:00 GMT\r\nContent-Length: 13\r\n\r\n",
        b"HTTP/1.1 204 \r\n\r\n",
        b"HTTP/1.0 404 Not \xffFound\r\nConnection: close\r\n\r\n",
        b"\r\nHTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n",
    ];
    for &head in heads {
        let mut last = LastResponseHead::new();
        let first = check_response(&mut last, head, &limits);
        assert!(first.starts_with("Ok(Complete("), "{first}");
        assert!(last.repeats(head));
        for tail in [&b""[..], b"Hello, World!", b"HTTP/1.1 200 OK\r\n"] {
            let buf = [head, tail].concat();
            assert_eq!(check_response(&mut last, &buf, &limits), first);
        }
        // A new Date is another head: parsed, then remembered once the old one is stale.
        let mut other = head.to_vec();
        if let Some(b) = other.iter_mut().rev().find(|b| b.is_ascii_digit()) {
            *b = if *b == b'9' { b'0' } else { *b + 1 };
        }
        check_response(&mut last, &other, &limits);
        assert_eq!(check_response(&mut last, b"HTTP/1.1 20", &limits), "Ok(Partial)");
        assert_eq!(
            check_response(&mut last, b"HTTP/1.1 2000 OK\r\n\r\n", &limits),
            "Err(InvalidStatus)"
        );
    }
}
