//! Table-driven tests of the request head encoder, each row naming its RFC section.

use super::*;
use crate::http1::{EMPTY_HEADER, Limits, Status, parse_request};

fn prelude() -> RequestPrelude {
    RequestPrelude::new(Scheme::Http, "example.com", 80).unwrap()
}

#[test]
fn host_line_and_default_port_rfc9110_7_2() {
    struct Case {
        scheme: Scheme,
        host: &'static str,
        port: u16,
        expect: Result<&'static [u8], EncodeError>,
        rfc: &'static str,
    }
    let c = |scheme, host, port, expect, rfc| Case { scheme, host, port, expect, rfc };
    use Scheme::*;
    let cases = [
        c(Http, "example.com", 80, Ok(&b"example.com"[..]), "9110 4.2.1 default port omitted"),
        c(Http, "example.com", 443, Ok(b"example.com:443"), "9110 7.2"),
        c(Https, "example.com", 443, Ok(b"example.com"), "9110 4.2.2 default port omitted"),
        c(Https, "example.com", 80, Ok(b"example.com:80"), "9110 7.2"),
        c(Http, "127.0.0.1", 8080, Ok(b"127.0.0.1:8080"), "3986 3.2.2 IPv4"),
        c(Http, "::1", 8080, Ok(b"[::1]:8080"), "3986 3.2.2 IP-literal"),
        c(Https, "[2001:db8::7]", 443, Ok(b"[2001:db8::7]"), "3986 3.2.2 bracketed"),
        c(Http, "xn--bcher-kva.example", 80, Ok(b"xn--bcher-kva.example"), "3986 3.2.2"),
        c(Http, "", 80, Err(EncodeError::InvalidHost), "9110 4.2.1 empty host"),
        c(Http, "a b", 80, Err(EncodeError::InvalidHost), "3986 3.2.2"),
        c(Http, "a\r\nX: y", 80, Err(EncodeError::InvalidHost), "9110 5.5 no splitting"),
        c(Http, "user@host", 80, Err(EncodeError::InvalidHost), "9110 4.2.4 no userinfo"),
        c(Http, "a/b", 80, Err(EncodeError::InvalidHost), "3986 3.2.2"),
        c(Http, "[::1", 80, Err(EncodeError::InvalidHost), "3986 3.2.2"),
        c(Http, "1::2::3", 80, Err(EncodeError::InvalidHost), "3986 3.2.2"),
        c(
            Http,
            "b\u{fc}cher.example",
            80,
            Err(EncodeError::InvalidHost),
            "3986 3.2.2 (IDNA is the caller's)",
        ),
    ];
    for c in cases {
        let got = RequestPrelude::new(c.scheme, c.host, c.port);
        assert_eq!(
            got.as_ref().map(|p| p.host()).map_err(|e| *e),
            c.expect,
            "RFC {}: {}",
            c.rfc,
            c.host
        );
    }
}

#[test]
fn request_heads_rfc9112_3_rfc9110_8_6() {
    use BodyLength::*;
    struct Case {
        method: Method,
        target: &'static str,
        fields: &'static [(&'static str, &'static [u8])],
        body: BodyLength,
        expect: Result<&'static [u8], EncodeError>,
        rfc: &'static str,
    }
    let c = |method, target, fields, body, expect, rfc| Case {
        method,
        target,
        fields,
        body,
        expect,
        rfc,
    };
    let cases = [
        c(Method::Get, "/", &[], Length(0), Ok(&b"GET / HTTP/1.1\r\nhost: example.com\r\n\r\n"[..]), "9110 8.6 no CL without content"),
        c(Method::Head, "/x?y=1", &[("Accept", b"*/*")], Length(0), Ok(b"HEAD /x?y=1 HTTP/1.1\r\nhost: example.com\r\nAccept: */*\r\n\r\n"), "9112 3"),
        c(Method::Post, "/p", &[], Length(0), Ok(b"POST /p HTTP/1.1\r\nhost: example.com\r\ncontent-length: 0\r\n\r\n"), "9110 8.6 POST sends CL: 0"),
        c(Method::Put, "/p", &[], Length(0), Ok(b"PUT /p HTTP/1.1\r\nhost: example.com\r\ncontent-length: 0\r\n\r\n"), "9110 8.6"),
        c(Method::Patch, "/p", &[], Length(0), Ok(b"PATCH /p HTTP/1.1\r\nhost: example.com\r\ncontent-length: 0\r\n\r\n"), "9110 8.6"),
        c(Method::Delete, "/p", &[], Length(0), Ok(b"DELETE /p HTTP/1.1\r\nhost: example.com\r\n\r\n"), "9110 8.6"),
        c(Method::Post, "/p", &[("X", b"\t\x80 y")], Length(u64::MAX), Ok(b"POST /p HTTP/1.1\r\nhost: example.com\r\nX: \t\x80 y\r\ncontent-length: 18446744073709551615\r\n\r\n"), "9110 8.6, 5.5"),
        c(Method::Get, "/p", &[], Length(3), Ok(b"GET /p HTTP/1.1\r\nhost: example.com\r\ncontent-length: 3\r\n\r\n"), "9110 9.3.1 (content allowed, caller's choice)"),
        c(Method::Post, "/p", &[("Expect", b"100-continue")], Chunked, Ok(b"POST /p HTTP/1.1\r\nhost: example.com\r\nExpect: 100-continue\r\ntransfer-encoding: chunked\r\n\r\n"), "9112 6.1"),
        c(Method::Options, "*", &[], Length(0), Ok(b"OPTIONS * HTTP/1.1\r\nhost: example.com\r\n\r\n"), "9112 3.2.4"),
        c(Method::Connect, "example.com:443", &[], Length(0), Ok(b"CONNECT example.com:443 HTTP/1.1\r\nhost: example.com\r\n\r\n"), "9112 3.2.3"),
        c(Method::Get, "http://example.com/x", &[], Length(0), Ok(b"GET http://example.com/x HTTP/1.1\r\nhost: example.com\r\n\r\n"), "9112 3.2.2 (to a proxy)"),
        // Refusals: nothing appended.
        c(Method::Extension, "/", &[], Length(0), Err(EncodeError::InvalidMethod), "9110 9.1 no text"),
        c(Method::Get, "", &[], Length(0), Err(EncodeError::InvalidTarget), "9112 3.2"),
        c(Method::Get, "/a b", &[], Length(0), Err(EncodeError::InvalidTarget), "9112 3.2 no SP"),
        c(Method::Get, "/a\r\nX: y", &[], Length(0), Err(EncodeError::InvalidTarget), "9112 3.2 no splitting"),
        c(Method::Get, "/a#frag", &[], Length(0), Err(EncodeError::InvalidTarget), "9112 3.2 no fragment"),
        c(Method::Get, "/\u{e9}", &[], Length(0), Err(EncodeError::InvalidTarget), "3986 2 (percent-encode first)"),
        c(Method::Get, "*", &[], Length(0), Err(EncodeError::InvalidTarget), "9112 3.2.4"),
        c(Method::Get, "a", &[], Length(0), Err(EncodeError::InvalidTarget), "9112 3.2.1"),
        c(Method::Connect, "/", &[], Length(0), Err(EncodeError::InvalidTarget), "9112 3.2.3"),
        c(Method::Get, "/", &[("Host", b"x")], Length(0), Err(EncodeError::HostHeader), "9112 3.2 one Host"),
        c(Method::Get, "/", &[("HOST", b"x")], Length(0), Err(EncodeError::HostHeader), "9110 5.1 case-insensitive"),
        c(Method::Post, "/", &[("content-length", b"1")], Length(1), Err(EncodeError::FramingHeader), "9112 6"),
        c(Method::Post, "/", &[("Transfer-Encoding", b"chunked")], Chunked, Err(EncodeError::FramingHeader), "9112 6"),
        c(Method::Get, "/", &[("X", b"a\r\nHost: evil")], Length(0), Err(EncodeError::InvalidHeaderValue), "9110 5.5"),
        c(Method::Get, "/", &[("X", b"a\0")], Length(0), Err(EncodeError::InvalidHeaderValue), "9110 5.5"),
        c(Method::Get, "/", &[("X Y", b"a")], Length(0), Err(EncodeError::InvalidHeaderName), "9110 5.1"),
        c(Method::Get, "/", &[("", b"a")], Length(0), Err(EncodeError::InvalidHeaderName), "9110 5.1"),
        c(Method::Connect, "a:443", &[], Length(1), Err(EncodeError::BodyNotAllowed), "9110 9.3.6"),
        c(Method::Trace, "/", &[], Chunked, Err(EncodeError::BodyNotAllowed), "9110 9.3.8"),
        c(Method::Post, "/", &[], CloseDelimited, Err(EncodeError::CloseDelimitedRequest), "9112 6.3"),
    ];
    let p = prelude();
    for c in cases {
        let mut out = b"prev".to_vec();
        let got = encode_request(&p, c.method, c.target, c.fields, c.body, &mut out);
        match c.expect {
            Ok(bytes) => {
                assert_eq!(got, Ok(()), "RFC {}", c.rfc);
                assert_eq!(
                    out[4..].escape_ascii().to_string(),
                    bytes.escape_ascii().to_string(),
                    "RFC {}",
                    c.rfc
                );
            }
            Err(e) => {
                assert_eq!(got, Err(e), "RFC {}", c.rfc);
                assert_eq!(out, b"prev", "RFC {}: nothing appended on error", c.rfc);
            }
        }
    }
}

#[test]
fn extension_methods_rfc9110_9_1() {
    let p = prelude();
    let mut out = Vec::new();
    encode_request_extension(&p, "PROPFIND", "/d", &[], BodyLength::Length(0), &mut out).unwrap();
    assert_eq!(out, b"PROPFIND /d HTTP/1.1\r\nhost: example.com\r\ncontent-length: 0\r\n\r\n");
    // A standard method's exact text is that method (no Content-Length: 0 for GET).
    out.clear();
    encode_request_extension(&p, "GET", "/", &[], BodyLength::Length(0), &mut out).unwrap();
    assert_eq!(out, b"GET / HTTP/1.1\r\nhost: example.com\r\n\r\n");
    for bad in ["", "G ET", "GET\r\n", "G(T", "\u{e9}"] {
        let got = encode_request_extension(&p, bad, "/", &[], BodyLength::Length(0), &mut out);
        assert_eq!(got, Err(EncodeError::InvalidMethod), "{bad:?}");
    }
}

#[test]
fn prelude_fields_are_checked_and_sent_on_every_request() {
    let p = prelude().with_field("User-Agent", b"peregrine/1").unwrap();
    let mut out = Vec::new();
    encode_request(&p, Method::Get, "/", &[("A", b"b")], BodyLength::Length(0), &mut out).unwrap();
    assert_eq!(
        out,
        b"GET / HTTP/1.1\r\nhost: example.com\r\nUser-Agent: peregrine/1\r\nA: b\r\n\r\n"
    );
    assert_eq!(p.host(), b"example.com");
    assert_eq!(prelude().with_field("Host", b"x"), Err(EncodeError::HostHeader));
    assert_eq!(prelude().with_field("Content-Length", b"1"), Err(EncodeError::FramingHeader));
    assert_eq!(prelude().with_field("X", b"\n"), Err(EncodeError::InvalidHeaderValue));
    assert_eq!(prelude().with_field("X:", b"1"), Err(EncodeError::InvalidHeaderName));
}

/// What the encoder writes, our own parser and framing read back (RFC 9112 §3, §5, §6.3).
#[test]
fn encoded_requests_parse_back() {
    use crate::http1::framing::request_framing;
    let p = RequestPrelude::new(Scheme::Https, "::1", 8443)
        .unwrap()
        .with_field("User-Agent", b"t")
        .unwrap();
    let fields: &[(&str, &[u8])] = &[("Accept", b"*/*"), ("X-Obs", b"\x80\xff")];
    for method in crate::STANDARD_METHODS {
        let target = match method {
            Method::Connect => "[::1]:8443",
            _ => "/a/b?c=d",
        };
        for body in [BodyLength::Length(0), BodyLength::Length(7), BodyLength::Chunked] {
            let mut out = Vec::new();
            if encode_request(&p, method, target, fields, body, &mut out).is_err() {
                assert!(
                    matches!(method, Method::Connect | Method::Trace)
                        && body != BodyLength::Length(0)
                );
                continue;
            }
            let mut headers = [EMPTY_HEADER; 16];
            let Ok(Status::Complete(head)) = parse_request(&out, &mut headers, &Limits::default())
            else {
                panic!("{method:?} {body:?}: {}", out.escape_ascii());
            };
            assert_eq!((head.method, head.target, head.len), (method, target, out.len()));
            let got: Vec<_> = head.headers.iter().map(|h| (h.name, h.value)).collect();
            assert_eq!(got[0], ("host", &b"[::1]:8443"[..]));
            assert_eq!(&got[1..4], &[("User-Agent", &b"t"[..]), fields[0], fields[1]]);
            assert_eq!(request_framing(&head).map(|f| f.body), Ok(body), "{method:?}");
        }
    }
}
