//! Table-driven tests of the response head parser: one row per rule, each naming its RFC
//! section.

use super::*;
use crate::Method;
use crate::http1::encode::{ResponseHeadOut, encode_head};
use crate::http1::framing::{BodyLength, response_framing};
use crate::http1::{EMPTY_HEADER, HeaderId};

/// What a parse says: the head's (version, status, reason, fields, len), `None` for partial.
type Parsed = (Version, u16, Vec<u8>, Vec<(String, Vec<u8>)>, usize);
type Outcome = Result<Option<Parsed>, ParseError>;

/// Parses through both entry points (initialised and uninitialised header storage), which must
/// agree on everything, and returns the outcome.
fn run(input: &[u8], limits: &Limits) -> Outcome {
    let mut headers = [EMPTY_HEADER; 32];
    let init = parse_response(input, &mut headers, limits);
    let mut storage = [const { MaybeUninit::uninit() }; 32];
    let uninit = parse_response_uninit(input, &mut storage, limits);
    assert_eq!(init, uninit, "{:?}", String::from_utf8_lossy(input));
    init.map(|s| {
        s.complete().map(|h| {
            let fields = h.headers.iter().map(|h| (h.name.to_string(), h.value.to_vec())).collect();
            (h.version, h.status, h.reason.to_vec(), fields, h.len)
        })
    })
}

fn err(input: &[u8]) -> Option<ParseError> {
    run(input, &Limits::default()).err()
}

struct Accept {
    input: &'static [u8],
    version: Version,
    status: u16,
    reason: &'static [u8],
    headers: &'static [(&'static str, &'static [u8])],
    rfc: &'static str,
}

#[test]
fn status_lines_accepted_rfc9112_4() {
    use Version::*;
    let a = |input, version, status, reason, rfc| Accept {
        input,
        version,
        status,
        reason,
        headers: &[],
        rfc,
    };
    let cases = [
        a(b"HTTP/1.1 200 OK\r\n\r\n", Http11, 200, b"OK", "9112 4"),
        a(b"HTTP/1.0 404 Not Found\r\n\r\n", Http10, 404, b"Not Found", "9112 4, 2.3"),
        // Near misses of the one-compare `200 OK` line take the general path.
        a(b"HTTP/1.1 200 OKAY\r\n\r\n", Http11, 200, b"OKAY", "9112 4"),
        a(b"HTTP/1.1 200 OK \r\n\r\n", Http11, 200, b"OK ", "9112 4"),
        a(b"HTTP/1.0 200 OK\r\n\r\n", Http10, 200, b"OK", "9112 4"),
        a(b"HTTP/1.1 201 OK\r\n\r\n", Http11, 201, b"OK", "9112 4"),
        a(b"HTTP/1.1 100 Continue\r\n\r\n", Http11, 100, b"Continue", "9110 15 lowest"),
        a(b"HTTP/1.1 599 \r\n\r\n", Http11, 599, b"", "9110 15 highest; empty reason"),
        a(b"HTTP/1.1 204 \r\n\r\n", Http11, 204, b"", "9112 4 [ reason-phrase ]"),
        a(b"HTTP/1.1 301\r\n\r\n", Http11, 301, b"", "9112 4 (policy: missing SP accepted)"),
        a(b"HTTP/1.1 200  OK \r\n\r\n", Http11, 200, b" OK ", "9112 4 reason kept as sent"),
        a(b"HTTP/1.1 200 \tA\tB\r\n\r\n", Http11, 200, b"\tA\tB", "9112 4 HTAB"),
        a(
            b"HTTP/1.1 500 Ori\xc3\xabntatieprobleem\r\n\r\n",
            Http11,
            500,
            b"Ori\xc3\xabntatieprobleem",
            "9112 4 obs-text",
        ),
        a(
            b"HTTP/1.1 200 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\x80\xff\r\n\r\n",
            Http11,
            200,
            b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\x80\xff",
            "9112 4 every VCHAR class",
        ),
        a(b"HTTP/1.1 418 I'm a teapot: short and stout\r\n\r\n", Http11, 418, b"I'm a teapot: short and stout", "9112 4 colon in reason"),
        a(b"\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", Http11, 200, b"OK", "9112 2.2 (policy: leading CRLF ignored)"),
        Accept {
            input: b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX:\r\nY:  a b \t\r\nZ: \x80\r\n\r\n",
            version: Http11,
            status: 200,
            reason: b"OK",
            headers: &[("Content-Length", b"5"), ("X", b""), ("Y", b"a b"), ("Z", b"\x80")],
            rfc: "9112 5.1 OWS trimmed; 9110 5.5 obs-text",
        },
        Accept {
            input: b"HTTP/1.1 200 A reason phrase well beyond thirty-two bytes, so the kernel's block loop runs\r\nA-Field-Name-Beyond-Thirty-Two-Bytes-Long: and its value, also beyond thirty-two bytes\r\n\r\n",
            version: Http11,
            status: 200,
            reason: b"A reason phrase well beyond thirty-two bytes, so the kernel's block loop runs",
            headers: &[(
                "A-Field-Name-Beyond-Thirty-Two-Bytes-Long",
                b"and its value, also beyond thirty-two bytes",
            )],
            rfc: "9112 4, 5 long lines",
        },
    ];
    for c in cases {
        let fields = c.headers.iter().map(|&(n, v)| (n.to_string(), v.to_vec())).collect();
        let want = (c.version, c.status, c.reason.to_vec(), fields, c.input.len());
        assert_eq!(run(c.input, &Limits::default()), Ok(Some(want)), "RFC {}", c.rfc);
        // Zero copy: the reason and every field point into the input.
        let mut headers = [EMPTY_HEADER; 8];
        let head = parse_response(c.input, &mut headers, &Limits::default());
        let head = head.unwrap().complete().unwrap();
        let range = c.input.as_ptr_range();
        assert!(head.reason.is_empty() || range.contains(&head.reason.as_ptr()), "{}", c.rfc);
        assert!(head.headers.iter().all(|h| range.contains(&h.name.as_ptr())), "{}", c.rfc);
    }
}

struct Reject {
    input: &'static [u8],
    expect: ParseError,
    rfc: &'static str,
}

#[test]
fn status_lines_rejected_with_the_precise_error() {
    use ParseError::*;
    let r = |input, expect, rfc| Reject { input, expect, rfc };
    let cases = [
        // HTTP-version (RFC 9112 §2.3)
        r(b"HTTP/2.0 200 OK\r\n\r\n", UnsupportedVersion, "9112 2.3, 9110 6.2 (we speak 1.x)"),
        r(b"HTTP/0.9 200 OK\r\n\r\n", UnsupportedVersion, "9112 2.3"),
        r(b"HTTP/1.2 200 OK\r\n\r\n", UnsupportedVersion, "9110 6.2 (policy: no 1.2)"),
        r(b"HTTP/5.6 200 OK\r\n\r\n", UnsupportedVersion, "9112 2.3"),
        r(b"HTP/1.1 200 OK\r\n\r\n", InvalidVersion, "9112 2.3 HTTP-name"),
        r(b"http/1.1 200 OK\r\n\r\n", InvalidVersion, "9112 2.3 case-sensitive"),
        r(b"HTTPER/1.1 200 OK\r\n\r\n", InvalidVersion, "9112 2.3"),
        r(b"RTSP/1.1 200 OK\r\n\r\n", InvalidVersion, "9112 2.3 (not HTTP)"),
        r(b"ICE/1.1 200 OK\r\n\r\n", InvalidVersion, "9112 2.3 (not HTTP)"),
        r(b"HTTP/01.1 200 OK\r\n\r\n", InvalidVersion, "9112 2.3 one DIGIT"),
        r(b"HTTP/1.01 200 OK\r\n\r\n", InvalidVersion, "9112 2.3 one DIGIT"),
        r(b"HTTP/1.10 200 OK\r\n\r\n", InvalidVersion, "9112 2.3 one DIGIT"),
        r(b"HTTP/1 200 OK\r\n\r\n", InvalidVersion, "9112 2.3"),
        r(b"XTTP", InvalidVersion, "9112 2.3 (early, partial input)"),
        // Separators (RFC 9112 §4)
        r(b"HTTP/1.1\t200 OK\r\n\r\n", InvalidStatusLine, "9112 4 SP, not HTAB"),
        r(b"HTTP/1.1\r\n\r\n", InvalidStatusLine, "9112 4 no status code"),
        r(b"HTTP/1.1  200 OK\r\n\r\n", InvalidStatus, "9112 4 one SP"),
        r(b"HTTP/1.1 200\tOK\r\n\r\n", InvalidStatusLine, "9112 4 SP, not HTAB"),
        r(b"HTTP/1.1 200OK\r\n\r\n", InvalidStatusLine, "9112 4 SP after the code"),
        r(b"HTTP/1.1 200:\r\n\r\n", InvalidStatusLine, "9112 4 SP after the code"),
        // status-code = 3DIGIT, 100..599 (RFC 9112 §4, RFC 9110 §15)
        r(b"HTTP/1.1 2 OK\r\n\r\n", InvalidStatus, "9112 4 3DIGIT"),
        r(b"HTTP/1.1 20 OK\r\n\r\n", InvalidStatus, "9112 4 3DIGIT"),
        r(b"HTTP/1.1 2000 OK\r\n\r\n", InvalidStatus, "9112 4 3DIGIT"),
        r(b"HTTP/1.1 20x OK\r\n\r\n", InvalidStatus, "9112 4 DIGIT"),
        r(b"HTTP/1.1 -20 OK\r\n\r\n", InvalidStatus, "9112 4 DIGIT"),
        r(b"HTTP/1.1 OK\r\n\r\n", InvalidStatus, "9112 4 no code"),
        r(b"HTTP/1.1 000 OK\r\n\r\n", InvalidStatus, "9110 15 range"),
        r(b"HTTP/1.1 099 OK\r\n\r\n", InvalidStatus, "9110 15 range"),
        r(b"HTTP/1.1 600 OK\r\n\r\n", InvalidStatus, "9110 15 range"),
        r(b"HTTP/1.1 999 OK\r\n\r\n", InvalidStatus, "9110 15 range"),
        r(b"HTTP/1.1 2x", InvalidStatus, "9112 4 (early, partial input)"),
        // reason-phrase = 1*( HTAB / SP / VCHAR / obs-text )
        r(b"HTTP/1.1 200 O\x00K\r\n\r\n", InvalidStatusLine, "9112 4 no NUL"),
        r(b"HTTP/1.1 200 O\x7fK\r\n\r\n", InvalidStatusLine, "9112 4 no DEL"),
        r(b"HTTP/1.1 200 O\x01K\r\n\r\n", InvalidStatusLine, "9112 4 no CTL"),
        r(b"HTTP/1.1 200 O\x0bK\r\n\r\n", InvalidStatusLine, "9112 4 no CTL"),
        // Line ends (RFC 9112 §2.2)
        r(b"HTTP/1.1 200 OK\n\r\n", BareLf, "9112 2.2 (strict)"),
        r(b"HTTP/1.1 200 OK\r\r\n", BareCr, "9112 2.2"),
        r(b"HTTP/1.1 200\n\r\n", BareLf, "9112 2.2"),
        r(b"HTTP/1.1 200 OK\nContent-Length: 0\n\n", BareLf, "9112 2.2"),
        r(b"HTTP/1.1 200 OK\rContent-Length: 0\r\n\r\n", BareCr, "9112 2.2"),
        r(b"HTTP/1.1 200 OK\r\rContent-Length: 4\r\n\r\nEvil", BareCr, "9112 2.2"),
        r(b"HTTP/1.1 200\r\r\n\r\n", BareCr, "9112 2.2"),
        r(b"\rHTTP/1.1 200 OK\r\n\r\n", BareCr, "9112 2.2"),
        r(b"\nHTTP/1.1 200 OK\r\n\r\n", BareLf, "9112 2.2"),
        r(b" HTTP/1.1 200 OK\r\n\r\n", InvalidVersion, "9112 4 no leading SP"),
    ];
    for c in cases {
        assert_eq!(
            err(c.input),
            Some(c.expect),
            "RFC {}: {:?}",
            c.rfc,
            String::from_utf8_lossy(c.input)
        );
    }
}

/// The header section is the request parser's own loop; a few rows show the response side
/// goes through it (the request tests hold the full table).
#[test]
fn header_section_rules_are_the_requests() {
    use ParseError::*;
    let r = |input, expect, rfc| Reject { input, expect, rfc };
    let cases = [
        r(b"HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", ObsFold, "9112 5.2"),
        r(b"HTTP/1.1 200 OK\r\nA: b\r\n\tc\r\n\r\n", ObsFold, "9112 5.2"),
        r(b"HTTP/1.1 200 OK\r\n Host: foo", InvalidHeaderName, "9112 2.2 SP after start-line"),
        r(b"HTTP/1.1 200 OK\r\nA : b\r\n\r\n", WhitespaceBeforeColon, "9112 5.1"),
        r(b"HTTP/1.1 200 OK\r\nA(b): c\r\n\r\n", InvalidHeaderName, "9110 5.6.2"),
        r(b"HTTP/1.1 200 OK\r\nen-US Content-Type: x\r\n\r\n", WhitespaceBeforeColon, "9112 5.1"),
        r(b"HTTP/1.1 200 OK\r\n: b\r\n\r\n", InvalidHeaderName, "9110 5.1 empty name"),
        r(b"HTTP/1.1 200 OK\r\nA: b\x00\r\n\r\n", InvalidHeaderValue, "9110 5.5"),
        r(b"HTTP/1.1 200 OK\r\nFoo: 1\rBar: 2\r\n\r\n", BareCr, "9112 2.2"),
        r(b"HTTP/1.1 200 OK\r\nFoo: 1\nBar: 2\r\n\r\n", BareLf, "9112 2.2"),
        r(b"HTTP/1.1 200 OK\r\nFoo: 1\r\n\n", BareLf, "9112 2.2"),
    ];
    for c in cases {
        assert_eq!(err(c.input), Some(c.expect), "RFC {}", c.rfc);
        // The request parser gives the same verdict on the same field lines.
        let line = c.input.iter().position(|&b| b == b'\r').unwrap_or(0);
        let request = [&b"GET / HTTP/1.1"[..], &c.input[line..]].concat();
        let mut headers = [EMPTY_HEADER; 8];
        let same = crate::http1::parse_request(&request, &mut headers, &Limits::default());
        assert_eq!(same.err(), Some(c.expect), "request side, RFC {}", c.rfc);
    }
    // Known headers are identified for responses too.
    let input = b"HTTP/1.1 200 OK\r\nconnection: close\r\nX: 1\r\nContent-Length: 5\r\n\r\n";
    let mut headers = [EMPTY_HEADER; 8];
    let head = parse_response(input, &mut headers, &Limits::default());
    let head = head.unwrap().complete().unwrap();
    assert_eq!(head.known(HeaderId::Connection).map(|h| h.value), Some(&b"close"[..]));
    assert_eq!(head.known.first(HeaderId::ContentLength), Some(2));
    assert_eq!(head.all(HeaderId::ContentLength).count(), 1);
    assert_eq!(head.all(HeaderId::TransferEncoding).count(), 0);
}

#[test]
fn limits_have_their_own_errors_rfc6585_5() {
    use ParseError::*;
    let many = |n: usize| {
        let mut r = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..n {
            r.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        r.extend_from_slice(b"\r\n");
        r
    };
    let l =
        |max_head_bytes, max_headers| Limits { max_head_bytes, max_headers, max_target_bytes: 1 };
    struct Case {
        input: Vec<u8>,
        limits: Limits,
        expect: Result<Option<usize>, ParseError>,
        rfc: &'static str,
    }
    let long_reason = format!("HTTP/1.1 200 {}\r\n\r\n", "r".repeat(200)).into_bytes();
    let cases = [
        Case {
            input: many(10),
            limits: l(1000, 10),
            expect: Ok(Some(many(10).len())),
            rfc: "at the limit",
        },
        Case { input: many(11), limits: l(1000, 10), expect: Err(TooManyHeaders), rfc: "431" },
        Case {
            input: many(33),
            limits: l(1000, 100),
            expect: Err(TooManyHeaders),
            rfc: "array of 32",
        },
        Case {
            input: many(3),
            limits: l(many(3).len(), 10),
            expect: Ok(Some(many(3).len())),
            rfc: "head at the limit",
        },
        Case {
            input: many(3),
            limits: l(many(3).len() - 1, 10),
            expect: Err(HeadTooLarge),
            rfc: "431",
        },
        Case {
            input: long_reason.clone(),
            limits: l(100, 10),
            expect: Err(HeadTooLarge),
            rfc: "long reason",
        },
        // max_target_bytes (1 here) does not apply to responses.
        Case {
            input: long_reason.clone(),
            limits: l(1000, 10),
            expect: Ok(Some(long_reason.len())),
            rfc: "no target limit",
        },
        Case {
            input: b"HTTP/1.1 200 OK\r\nA: b\x00cdef".to_vec(),
            limits: l(24, 10),
            expect: Err(InvalidHeaderValue),
            rfc: "precise error inside the limit",
        },
        Case {
            input: b"HTTP/1.1 200 OK\r\nA: bcdefgh".to_vec(),
            limits: l(20, 10),
            expect: Err(HeadTooLarge),
            rfc: "incomplete beyond the limit",
        },
    ];
    for c in cases {
        let got = run(&c.input, &c.limits).map(|h| h.map(|h| h.4));
        assert_eq!(got, c.expect, "RFC 6585 §5: {}", c.rfc);
    }
}

/// Every prefix of a head is `Partial` or already the head's own error (never another
/// error, never a different head), and bytes after the head are not part of it.
#[test]
fn every_prefix_is_partial_or_the_same_verdict() {
    let inputs: [&[u8]; 7] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\n",
        b"\r\nHTTP/1.0 301\r\nLocation: /x\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.1 404 A rather long reason phrase, beyond one 32-byte block\r\nA-Very-Long-Header-Name-Beyond-Thirty-Two-Bytes: and a value that is also rather long\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n",
        b"HTTP/1.1 20x OK\r\n\r\n",
        b"HTTP/1.1 200 O\x01K\r\n\r\n",
    ];
    for input in inputs {
        let whole = run(input, &Limits::default());
        for n in 0..input.len() {
            let got = run(&input[..n], &Limits::default());
            assert!(
                got == Ok(None) || (whole.is_err() && got == whole),
                "{n}: {:?} gives {got:?}, the whole {whole:?}",
                String::from_utf8_lossy(&input[..n])
            );
        }
        if let Ok(Some(head)) = &whole {
            assert_eq!(head.4, input.len());
            let mut more = input.to_vec();
            more.extend_from_slice(b"body bytes\r\nHTTP/1.1 200 OK\r\n\r\n");
            assert_eq!(run(&more, &Limits::default()), whole);
        }
    }
}

/// Our own encoder's heads parse back to what was encoded (RFC 9112 §4, §5), and the pair
/// `parse_response` + `response_framing` recovers the body length the encoder was given.
#[test]
fn encoder_output_round_trips() {
    let fields: &[(&str, &[u8])] =
        &[("Content-Type", b"text/plain"), ("X-Obs", b"\x80 \t x"), ("Set-Cookie", b"a=b")];
    for status in [100, 101, 200, 204, 301, 304, 404, 418, 500, 599] {
        for body in [BodyLength::Length(0), BodyLength::Length(12), BodyLength::Chunked] {
            for close in [false, true] {
                let head = ResponseHeadOut { close, ..ResponseHeadOut::new(status, fields) };
                let mut out = Vec::new();
                if encode_head(&head, body, &mut out).is_err() {
                    // A body on 1xx / 204: refused by the encoder, nothing to parse.
                    assert!(status < 200 || status == 204);
                    continue;
                }
                let mut headers = [EMPTY_HEADER; 16];
                let parsed = parse_response(&out, &mut headers, &Limits::default());
                let parsed = parsed.unwrap().complete().unwrap();
                assert_eq!(parsed.len, out.len());
                assert_eq!(parsed.version, Version::Http11);
                assert_eq!(parsed.status, status);
                assert_eq!(parsed.reason, crate::http1::encode::reason_phrase(status).as_bytes());
                let got: Vec<_> = parsed.headers.iter().map(|h| (h.name, h.value)).collect();
                assert_eq!(&got[..fields.len()], fields, "{status}");
                let framing = response_framing(Method::Get, status, parsed.version, parsed.headers);
                assert_eq!(parsed.framing(Method::Get), framing, "{status}");
                let framing = framing.unwrap();
                if status >= 200 && !matches!(status, 204 | 304) {
                    assert_eq!(framing.body, body, "{status}");
                }
                assert_eq!(framing.keep_alive, !close && status != 101, "{status}");
            }
        }
    }
}

/// Duplicate or invalid Content-Length and Transfer-Encoding with Content-Length parse as a
/// head (the head parser has no opinion on them) and are refused by `response_framing`, the
/// one owner of the framing rules.
#[test]
fn framing_errors_belong_to_response_framing_rfc9112_6_3() {
    use ParseError::*;
    let cases: [(&[u8], ParseError); 5] = [
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            ConflictingContentLength,
        ),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n", ConflictingContentLength),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", InvalidContentLength),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 4 2\r\n\r\n", InvalidContentLength),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
            TransferEncodingWithContentLength,
        ),
    ];
    for (input, expect) in cases {
        let mut headers = [EMPTY_HEADER; 8];
        let head = parse_response(input, &mut headers, &Limits::default());
        let head = head.unwrap().complete().unwrap();
        let framing = response_framing(Method::Get, head.status, head.version, head.headers);
        assert_eq!(framing, Err(expect), "{:?}", String::from_utf8_lossy(input));
        assert_eq!(head.framing(Method::Get), Err(expect), "{:?}", String::from_utf8_lossy(input));
    }
}
