//! Table-driven tests: one row per rule, each naming its RFC section.

use super::fields::{KNOWN_NAMES, identify};
use super::*;
use crate::http1::{EMPTY_HEADER, HeaderId, KNOWN_HEADERS, parse_request, parse_request_uninit};

type Outcome = Result<Option<usize>, ParseError>;

/// Parses through both entry points (initialised and uninitialised header storage), which
/// must agree on everything, and returns the outcome.
fn run(input: &[u8], limits: &Limits) -> Outcome {
    let mut headers = [EMPTY_HEADER; 32];
    let init = parse_request(input, &mut headers, limits);
    let mut storage = [const { MaybeUninit::uninit() }; 32];
    let uninit = parse_request_uninit(input, &mut storage, limits);
    assert_eq!(init, uninit, "{:?}", String::from_utf8_lossy(input));
    init.map(|s| s.complete().map(|h| h.len))
}

struct Reject {
    input: &'static [u8],
    expect: ParseError,
    rfc: &'static str,
}

#[test]
fn rejects_with_the_precise_error() {
    use ParseError::*;
    let cases = [
        // Request line (RFC 9112 §3)
        Reject {
            input: b"G(T / HTTP/1.1\r\n\r\n",
            expect: InvalidMethod,
            rfc: "9110 9.1, 5.6.2 method = token",
        },
        Reject { input: b"\x00GET / HTTP/1.1\r\n\r\n", expect: InvalidMethod, rfc: "9110 9.1" },
        Reject {
            input: b" GET / HTTP/1.1\r\n\r\n",
            expect: InvalidMethod,
            rfc: "9112 3 no leading SP",
        },
        Reject {
            input: b"G\xc3\x89T / HTTP/1.1\r\n\r\n",
            expect: InvalidMethod,
            rfc: "9110 5.6.2",
        },
        Reject {
            input: b"GET  / HTTP/1.1\r\n\r\n",
            expect: InvalidRequestLine,
            rfc: "9112 3 single SP",
        },
        Reject {
            input: b"GET\t/ HTTP/1.1\r\n\r\n",
            expect: InvalidRequestLine,
            rfc: "9112 3 SP, not HTAB",
        },
        Reject {
            input: b"PROPFIND\t/ HTTP/1.1\r\n\r\n",
            expect: InvalidRequestLine,
            rfc: "9112 3",
        },
        Reject { input: b"GET /\tHTTP/1.1\r\n\r\n", expect: InvalidRequestLine, rfc: "9112 3" },
        Reject { input: b"GET / \r\n\r\n", expect: InvalidVersion, rfc: "9112 2.3" },
        Reject { input: b"GET /\r\n\r\n", expect: InvalidRequestLine, rfc: "9112 3 (no HTTP/0.9)" },
        Reject { input: b"GET\r\n\r\n", expect: InvalidRequestLine, rfc: "9112 3" },
        Reject {
            input: b"GET / HTTP/1.1 \r\n\r\n",
            expect: InvalidRequestLine,
            rfc: "9112 3 no trailing SP",
        },
        // Target bytes (RFC 3986 §2, RFC 9112 §3.2)
        Reject {
            input: b"GET /a b HTTP/1.1\r\n\r\n",
            expect: InvalidVersion,
            rfc: "9112 3.2 no SP in target",
        },
        Reject {
            input: b"GET /a\x00 HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "3986 2 no NUL",
        },
        Reject {
            input: b"GET /a\x7f HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "3986 2 no DEL",
        },
        Reject {
            input: b"GET /\x01 HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "3986 2 no CTL",
        },
        Reject {
            input: b"GET /\xc3\xa9 HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "3986 2 no bytes >= 0x80",
        },
        Reject {
            input: b"GET /a#frag HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "9112 3.2 no fragment",
        },
        Reject { input: b"GET /a\"b HTTP/1.1\r\n\r\n", expect: InvalidTarget, rfc: "3986 2" },
        Reject { input: b"GET /{x} HTTP/1.1\r\n\r\n", expect: InvalidTarget, rfc: "3986 2" },
        Reject { input: b"GET /a|b HTTP/1.1\r\n\r\n", expect: InvalidTarget, rfc: "3986 2" },
        Reject { input: b"GET /a\\b HTTP/1.1\r\n\r\n", expect: InvalidTarget, rfc: "3986 2" },
        Reject { input: b"GET /<a> HTTP/1.1\r\n\r\n", expect: InvalidTarget, rfc: "3986 2" },
        // Target forms (RFC 9112 §3.2.1-§3.2.4)
        Reject {
            input: b"GET * HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "9112 3.2.4 * only for OPTIONS",
        },
        Reject {
            input: b"GET example.com:80 HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "9112 3.2.3 authority only for CONNECT",
        },
        Reject {
            input: b"CONNECT / HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "9112 3.2.3 CONNECT needs authority-form",
        },
        Reject {
            input: b"CONNECT http://a/ HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "9112 3.2.3",
        },
        Reject {
            input: b"CONNECT example.com HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "9112 3.2.3 port required",
        },
        Reject {
            input: b"CONNECT u@example.com:443 HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "9112 3.2.3 no userinfo",
        },
        Reject {
            input: b"CONNECT :443 HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "9112 3.2.3 host required",
        },
        Reject {
            input: b"GET http:///x HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "9110 4.2.1 empty host",
        },
        Reject {
            input: b"GET 1http://a/ HTTP/1.1\r\n\r\n",
            expect: InvalidTarget,
            rfc: "3986 3.1 scheme",
        },
        Reject { input: b"GET ?q HTTP/1.1\r\n\r\n", expect: InvalidTarget, rfc: "9112 3.2" },
        // Version (RFC 9112 §2.3, RFC 9110 §15.6.6)
        Reject { input: b"GET / HTTP/2.0\r\n\r\n", expect: UnsupportedVersion, rfc: "9110 15.6.6" },
        Reject { input: b"GET / HTTP/0.9\r\n\r\n", expect: UnsupportedVersion, rfc: "9110 15.6.6" },
        Reject { input: b"GET / HTTP/1.2\r\n\r\n", expect: UnsupportedVersion, rfc: "9110 15.6.6" },
        Reject {
            input: b"GET / http/1.1\r\n\r\n",
            expect: InvalidVersion,
            rfc: "9112 2.3 HTTP-name is case-sensitive",
        },
        Reject {
            input: b"GET / HTTP/1.10\r\n\r\n",
            expect: InvalidVersion,
            rfc: "9112 2.3 one DIGIT",
        },
        Reject { input: b"GET / HTTP/11\r\n\r\n", expect: InvalidVersion, rfc: "9112 2.3" },
        Reject { input: b"GET / HTTP/1\r\n\r\n", expect: InvalidVersion, rfc: "9112 2.3" },
        Reject { input: b"GET / RTSP/1.0\r\n\r\n", expect: InvalidVersion, rfc: "9112 2.3" },
        Reject { input: b"GET / HTTP/a.b\r\n\r\n", expect: InvalidVersion, rfc: "9112 2.3" },
        Reject {
            input: b"GET / XT",
            expect: InvalidVersion,
            rfc: "9112 2.3 (early, partial input)",
        },
        // Line ends (RFC 9112 §2.2)
        Reject {
            input: b"GET / HTTP/1.1\n\n",
            expect: BareLf,
            rfc: "9112 2.2 (strict: bare LF refused)",
        },
        Reject { input: b"GET / HTTP/1.1\r\nHost: a\n\r\n", expect: BareLf, rfc: "9112 2.2" },
        Reject { input: b"GET / HTTP/1.1\r\nHost: a\r\n\n", expect: BareLf, rfc: "9112 2.2" },
        Reject { input: b"GET / HTTP/1.1\rHost: a\r\n\r\n", expect: BareCr, rfc: "9112 2.2" },
        Reject { input: b"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", expect: BareCr, rfc: "9112 2.2" },
        Reject { input: b"GET / HTTP/1.1\r\nHost: a\r\n\rX", expect: BareCr, rfc: "9112 2.2" },
        Reject { input: b"\rGET / HTTP/1.1\r\n\r\n", expect: BareCr, rfc: "9112 2.2" },
        Reject { input: b"\nGET / HTTP/1.1\r\n\r\n", expect: BareLf, rfc: "9112 2.2" },
        // Field lines (RFC 9112 §5, RFC 9110 §5)
        Reject {
            input: b"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
            expect: WhitespaceBeforeColon,
            rfc: "9112 5.1",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\nHost\t: a\r\n\r\n",
            expect: WhitespaceBeforeColon,
            rfc: "9112 5.1",
        },
        Reject { input: b"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", expect: ObsFold, rfc: "9112 5.2" },
        Reject {
            input: b"GET / HTTP/1.1\r\nA: b\r\n\tc\r\n\r\n",
            expect: ObsFold,
            rfc: "9112 5.2",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\n Host: a\r\n\r\n",
            expect: InvalidHeaderName,
            rfc: "9112 2.2 whitespace after start-line",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\n: a\r\n\r\n",
            expect: InvalidHeaderName,
            rfc: "9110 5.1 empty name",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\nNo colon\r\n\r\n",
            expect: WhitespaceBeforeColon,
            rfc: "9112 5.1",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\nNocolon\r\n\r\n",
            expect: InvalidHeaderName,
            rfc: "9110 5.1",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\nA(b): c\r\n\r\n",
            expect: InvalidHeaderName,
            rfc: "9110 5.6.2",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\nA\xc3\xa9: c\r\n\r\n",
            expect: InvalidHeaderName,
            rfc: "9110 5.6.2",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\nA\x00: c\r\n\r\n",
            expect: InvalidHeaderName,
            rfc: "9110 5.6.2",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\nA: b\x00c\r\n\r\n",
            expect: InvalidHeaderValue,
            rfc: "9110 5.5 no NUL",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\nA: b\x7fc\r\n\r\n",
            expect: InvalidHeaderValue,
            rfc: "9110 5.5 no DEL",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\nA: b\x01c\r\n\r\n",
            expect: InvalidHeaderValue,
            rfc: "9110 5.5 no CTL",
        },
        Reject {
            input: b"GET / HTTP/1.1\r\nA: b\x1bc\r\n\r\n",
            expect: InvalidHeaderValue,
            rfc: "9110 5.5",
        },
    ];
    for c in cases {
        assert_eq!(
            run(c.input, &Limits::default()),
            Err(c.expect),
            "RFC {}: {:?}",
            c.rfc,
            String::from_utf8_lossy(c.input)
        );
    }
}

#[test]
fn limits_have_their_own_errors() {
    use ParseError::*;
    struct Case {
        input: Vec<u8>,
        limits: Limits,
        expect: Outcome,
        rfc: &'static str,
    }
    let long_target = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(99)).into_bytes();
    let many = |n: usize| {
        let mut r = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..n {
            r.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        r.extend_from_slice(b"\r\n");
        r
    };
    let l = |max_head_bytes, max_headers, max_target_bytes| Limits {
        max_head_bytes,
        max_headers,
        max_target_bytes,
    };
    let cases = [
        Case {
            input: long_target.clone(),
            limits: l(1000, 10, 100),
            expect: Ok(Some(long_target.len())),
            rfc: "9112 3 at the limit",
        },
        Case {
            input: long_target.clone(),
            limits: l(1000, 10, 99),
            expect: Err(TargetTooLong),
            rfc: "9112 3, 9110 15.5.15 (414)",
        },
        Case {
            input: long_target[..60].to_vec(),
            limits: l(1000, 10, 50),
            expect: Err(TargetTooLong),
            rfc: "9110 15.5.15 early",
        },
        Case {
            input: many(10),
            limits: l(1000, 10, 100),
            expect: Ok(Some(many(10).len())),
            rfc: "6585 5 at the limit",
        },
        Case {
            input: many(11),
            limits: l(1000, 10, 100),
            expect: Err(TooManyHeaders),
            rfc: "6585 5 (431)",
        },
        Case {
            input: many(33),
            limits: l(1000, 100, 100),
            expect: Err(TooManyHeaders),
            rfc: "6585 5 (array of 32)",
        },
        Case {
            input: many(3),
            limits: l(many(3).len(), 10, 100),
            expect: Ok(Some(many(3).len())),
            rfc: "6585 5 head at the limit",
        },
        Case {
            input: many(3),
            limits: l(many(3).len() - 1, 10, 100),
            expect: Err(HeadTooLarge),
            rfc: "6585 5 (431)",
        },
        Case {
            input: b"GET / HTTP/1.1\r\nA: b\x00cdef".to_vec(),
            limits: l(21, 10, 100),
            expect: Err(InvalidHeaderValue),
            rfc: "precise error inside the limit",
        },
        Case {
            input: b"GET / HTTP/1.1\r\nA: bcdefgh".to_vec(),
            limits: l(20, 10, 100),
            expect: Err(HeadTooLarge),
            rfc: "6585 5 incomplete beyond the limit",
        },
    ];
    for c in cases {
        assert_eq!(run(&c.input, &c.limits), c.expect, "RFC {}", c.rfc);
    }
}

struct Accept {
    input: &'static [u8],
    method: Method,
    token: &'static str,
    target: &'static str,
    form: TargetForm,
    version: Version,
    headers: &'static [(&'static str, &'static [u8])],
    rfc: &'static str,
}

#[test]
fn accepts_and_borrows_every_part() {
    use TargetForm::*;
    use Version::*;
    let cases = [
        Accept {
            input: b"GET / HTTP/1.1\r\n\r\n",
            method: Method::Get,
            token: "GET",
            target: "/",
            form: Origin,
            version: Http11,
            headers: &[],
            rfc: "9112 3",
        },
        Accept {
            input: b"GET /a?b=c&d=%20;x HTTP/1.0\r\nHost: h\r\n\r\n",
            method: Method::Get,
            token: "GET",
            target: "/a?b=c&d=%20;x",
            form: Origin,
            version: Http10,
            headers: &[("Host", b"h")],
            rfc: "9112 3.2.1",
        },
        Accept {
            input: b"GET http://ex.com:80/p?q HTTP/1.1\r\n\r\n",
            method: Method::Get,
            token: "GET",
            target: "http://ex.com:80/p?q",
            form: Absolute,
            version: Http11,
            headers: &[],
            rfc: "9112 3.2.2",
        },
        Accept {
            input: b"CONNECT ex.com:443 HTTP/1.1\r\n\r\n",
            method: Method::Connect,
            token: "CONNECT",
            target: "ex.com:443",
            form: Authority,
            version: Http11,
            headers: &[],
            rfc: "9112 3.2.3",
        },
        Accept {
            input: b"CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
            method: Method::Connect,
            token: "CONNECT",
            target: "[::1]:443",
            form: Authority,
            version: Http11,
            headers: &[],
            rfc: "9112 3.2.3, 3986 3.2.2",
        },
        Accept {
            input: b"OPTIONS * HTTP/1.1\r\n\r\n",
            method: Method::Options,
            token: "OPTIONS",
            target: "*",
            form: Asterisk,
            version: Http11,
            headers: &[],
            rfc: "9112 3.2.4",
        },
        Accept {
            input: b"OPTIONS /x HTTP/1.1\r\n\r\n",
            method: Method::Options,
            token: "OPTIONS",
            target: "/x",
            form: Origin,
            version: Http11,
            headers: &[],
            rfc: "9112 3.2.1",
        },
        Accept {
            input: b"PROPFIND /d HTTP/1.1\r\n\r\n",
            method: Method::Extension,
            token: "PROPFIND",
            target: "/d",
            form: Origin,
            version: Http11,
            headers: &[],
            rfc: "9110 9.1 extension method",
        },
        Accept {
            input: b"get / HTTP/1.1\r\n\r\n",
            method: Method::Extension,
            token: "get",
            target: "/",
            form: Origin,
            version: Http11,
            headers: &[],
            rfc: "9110 9.1 case-sensitive",
        },
        Accept {
            input: b"M-SEARCH * HTTP/1.1\r\n\r\n",
            method: Method::Extension,
            token: "M-SEARCH",
            target: "*",
            form: Origin,
            version: Http11,
            headers: &[],
            rfc: "placeholder",
        },
        Accept {
            input: b"\r\n\r\nGET / HTTP/1.1\r\n\r\n",
            method: Method::Get,
            token: "GET",
            target: "/",
            form: Origin,
            version: Http11,
            headers: &[],
            rfc: "9112 2.2 leading CRLF ignored",
        },
        Accept {
            input:
                b"PUT /x HTTP/1.1\r\nA:b\r\nC:  d e \t\r\nE:\r\nF: \t \r\nG: \x80\xff\t\"x\r\n\r\n",
            method: Method::Put,
            token: "PUT",
            target: "/x",
            form: Origin,
            version: Http11,
            headers: &[("A", b"b"), ("C", b"d e"), ("E", b""), ("F", b""), ("G", b"\x80\xff\t\"x")],
            rfc: "9112 5.1 OWS trimmed; 9110 5.5 obs-text, HTAB",
        },
        Accept {
            input: b"GET /x HTTP/1.1\r\nH:\tv\t\r\nI: \t v\r\nJ: v \r\nK: v\r\nL:  \r\n\r\n",
            method: Method::Get,
            token: "GET",
            target: "/x",
            form: Origin,
            version: Http11,
            headers: &[("H", b"v"), ("I", b"v"), ("J", b"v"), ("K", b"v"), ("L", b"")],
            rfc: "9112 5.1 OWS trimmed: HTAB only, SP then HTAB, trailing SP, none, SPs only",
        },
        Accept {
            input: b"GET / HTTP/1.1\r\n!#$%&'*+-.^_`|~09azAZ: v\r\n\r\n",
            method: Method::Get,
            token: "GET",
            target: "/",
            form: Origin,
            version: Http11,
            headers: &[("!#$%&'*+-.^_`|~09azAZ", b"v")],
            rfc: "9110 5.6.2 tchar",
        },
    ];
    for c in cases {
        // M-SEARCH * is asterisk-form only for OPTIONS: the row above checks it is refused.
        if c.token == "M-SEARCH" {
            assert_eq!(run(c.input, &Limits::default()), Err(ParseError::InvalidTarget));
            continue;
        }
        let mut headers = [EMPTY_HEADER; 8];
        let head = parse_request(c.input, &mut headers, &Limits::default())
            .unwrap_or_else(|e| panic!("RFC {}: {e}", c.rfc))
            .complete()
            .unwrap_or_else(|| panic!("RFC {}: partial", c.rfc));
        // Uninitialised storage gives the same head, borrowing the same input.
        let mut storage = [const { MaybeUninit::uninit() }; 8];
        let same = parse_request_uninit(c.input, &mut storage, &Limits::default());
        assert_eq!(same, Ok(Status::Complete(head)), "{}", c.rfc);
        assert_eq!(head.method, c.method, "{}", c.rfc);
        assert_eq!(head.method_token, c.token, "{}", c.rfc);
        assert_eq!(head.target, c.target, "{}", c.rfc);
        assert_eq!(head.form, c.form, "{}", c.rfc);
        assert_eq!(head.version, c.version, "{}", c.rfc);
        assert_eq!(head.len, c.input.len(), "{}", c.rfc);
        let got: Vec<(&str, &[u8])> = head.headers.iter().map(|h| (h.name, h.value)).collect();
        assert_eq!(got, c.headers, "{}", c.rfc);
        // Zero copy: every part points into the input.
        let range = c.input.as_ptr_range();
        assert!(range.contains(&head.target.as_ptr()));
        for h in head.headers {
            assert!(range.contains(&h.name.as_ptr()));
        }
    }
}

#[test]
fn every_prefix_of_a_valid_head_is_partial() {
    let inputs: [&[u8]; 4] = [
        b"GET /index.html HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n",
        b"\r\nPROPFIND /a HTTP/1.0\r\nX: \r\n\r\n",
        b"CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n",
        b"OPTIONS * HTTP/1.1\r\nA-Very-Long-Header-Name-Beyond-Thirty-Two-Bytes: and a value that is also rather long, over thirty-two bytes\r\n\r\n",
    ];
    for input in inputs {
        for n in 0..input.len() {
            assert_eq!(
                run(&input[..n], &Limits::default()),
                Ok(None),
                "{n}: {:?}",
                String::from_utf8_lossy(&input[..n])
            );
        }
        assert_eq!(run(input, &Limits::default()), Ok(Some(input.len())));
        // Trailing bytes (a body, the next request) are not part of the head.
        let mut more = input.to_vec();
        more.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        assert_eq!(run(&more, &Limits::default()), Ok(Some(input.len())));
    }
}

#[test]
fn known_headers_are_identified_in_the_same_pass() {
    // RFC 9110 §5.1: field names are case-insensitive.
    struct Case {
        name: &'static str,
        id: HeaderId,
    }
    let cases = [
        Case { name: "Host", id: HeaderId::Host },
        Case { name: "HOST", id: HeaderId::Host },
        Case { name: "content-length", id: HeaderId::ContentLength },
        Case { name: "Content-Length", id: HeaderId::ContentLength },
        Case { name: "Transfer-Encoding", id: HeaderId::TransferEncoding },
        Case { name: "connection", id: HeaderId::Connection },
        Case { name: "Expect", id: HeaderId::Expect },
        Case { name: "Upgrade", id: HeaderId::Upgrade },
        Case { name: "TE", id: HeaderId::Te },
        Case { name: "Trailer", id: HeaderId::Trailer },
        Case { name: "Accept-Encoding", id: HeaderId::AcceptEncoding },
        Case { name: "Range", id: HeaderId::Range },
        Case { name: "If-Range", id: HeaderId::IfRange },
        Case { name: "If-Match", id: HeaderId::IfMatch },
        Case { name: "If-None-Match", id: HeaderId::IfNoneMatch },
        Case { name: "If-Modified-Since", id: HeaderId::IfModifiedSince },
        Case { name: "if-unmodified-since", id: HeaderId::IfUnmodifiedSince },
        // Near misses: same length, one byte off; prefixes; a '-' vs CR-like neighbours.
        Case { name: "Hosts", id: HeaderId::Other },
        Case { name: "Hust", id: HeaderId::Other },
        Case { name: "Content-Lengtx", id: HeaderId::Other },
        Case { name: "Content_Length", id: HeaderId::Other },
        Case { name: "Xontent-Length", id: HeaderId::Other },
        Case { name: "Transfer-Encodinh", id: HeaderId::Other },
        Case { name: "If-Modified-Sincf", id: HeaderId::Other },
        Case { name: "Upgrad3", id: HeaderId::Other },
        Case { name: "If-Natch", id: HeaderId::Other },
        Case { name: "Te", id: HeaderId::Te },
        Case { name: "Tf", id: HeaderId::Other },
        Case { name: "X", id: HeaderId::Other },
    ];
    for c in cases {
        // The name alone, and the name followed by the rest of a line (the fast path).
        assert_eq!(identify(c.name.as_bytes(), c.name.len()), c.id, "{}", c.name);
        let line = format!("{}: some value\r\n", c.name);
        assert_eq!(identify(line.as_bytes(), c.name.len()), c.id, "{}", c.name);
    }
    let input =
        b"POST / HTTP/1.1\r\nhost: a\r\nX: 1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n";
    let mut headers = [EMPTY_HEADER; 8];
    let head = parse_request(input, &mut headers, &Limits::default()).unwrap().complete().unwrap();
    assert_eq!(head.known(HeaderId::Host).map(|h| h.value), Some(&b"a"[..]));
    assert_eq!(head.known.first(HeaderId::ContentLength), Some(2));
    assert_eq!(head.known.count(HeaderId::ContentLength), 2);
    assert_eq!(head.all(HeaderId::ContentLength).count(), 2);
    assert_eq!(head.known.count(HeaderId::TransferEncoding), 0);
    assert_eq!(head.headers[1].id, HeaderId::Other);
}

#[test]
fn every_known_name_passes_the_filter_and_is_identified() {
    // RFC 9110 §5.1: field names are case-insensitive. The `MAY_BE_KNOWN` filter must let
    // every known name through in any case, and the names must cover every kind.
    let mut kinds = Vec::new();
    for name in KNOWN_NAMES {
        for variant in [name.to_vec(), name.to_ascii_uppercase()] {
            let mut line = variant.clone();
            line.extend_from_slice(b": v\r\n\r\n");
            let id = identify(&line, variant.len());
            assert_ne!(id, HeaderId::Other, "{}", String::from_utf8_lossy(&variant));
            kinds.push(id);
        }
    }
    kinds.sort_by_key(|&id| id as u8);
    kinds.dedup();
    assert_eq!(kinds.len(), KNOWN_HEADERS);
    // Same length and first letter as known names, but other names.
    for other in [&b"accept"[..], b"user-agent", b"cookie", b"content-type", b"host2"] {
        let mut line = other.to_vec();
        line.extend_from_slice(b": v\r\n");
        assert_eq!(identify(&line, other.len()), HeaderId::Other);
    }
}
