//! Proves the zero-allocation claims of the response path: once the output buffer has
//! capacity, encoding heads and chunks, reading the cached Date, decoding a chunked body and
//! applying the framing rules allocate nothing. The client's path too: encoding a request head
//! from its per-connection prelude, and parsing and framing the response head.

#[path = "support/thread_allocs.rs"]
mod thread_allocs;

use peregrine::Method;
use peregrine::http1::chunked::{ChunkedDecoder, encode_chunk, encode_last_chunk};
use peregrine::http1::encode::{
    RequestPrelude, ResponseHeadOut, Scheme, encode_head, encode_request, encode_request_extension,
};
use peregrine::http1::framing::{
    BodyLength, parse_content_length, request_framing, response_framing,
};
use peregrine::http1::{
    HeadScanner, Header, HeaderId, KnownHeaders, Limits, RequestHead, Status, TargetForm, Version,
    parse_response_uninit,
};
use std::mem::MaybeUninit;
use thread_allocs::allocations;

#[global_allocator]
static GLOBAL: thread_allocs::Counting = thread_allocs::Counting;

#[test]
fn response_path_allocates_nothing_in_steady_state() {
    let headers = [
        Header { name: "Host", value: b"example.com", id: HeaderId::Host },
        Header { name: "Transfer-Encoding", value: b"chunked", id: HeaderId::TransferEncoding },
        Header { name: "Connection", value: b"keep-alive", id: HeaderId::Connection },
    ];
    let mut known = KnownHeaders::default();
    for (i, h) in headers.iter().enumerate() {
        known.record(h.id, i);
    }
    let req = RequestHead {
        method: Method::Post,
        method_token: "POST",
        target: "/upload",
        form: TargetForm::Origin,
        version: Version::Http11,
        headers: &headers,
        known,
        len: 0,
    };
    let fields: &[(&str, &[u8])] =
        &[("Content-Type", b"text/plain"), ("Cache-Control", b"no-store")];
    let body = b"5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n";

    let mut out = Vec::with_capacity(4096);
    let run = |out: &mut Vec<u8>| {
        out.clear();
        let framing = request_framing(&req).unwrap();
        assert_eq!(framing.body, BodyLength::Chunked);
        let mut dec = ChunkedDecoder::new();
        let mut input: &[u8] = body;
        let mut total = 0;
        while !dec.is_done() {
            let d = dec.decode(input).unwrap();
            total += d.data.len();
            input = &input[d.consumed..];
        }
        assert_eq!(total, 11);
        assert_eq!(parse_content_length(b"18446744073709551615"), Some(u64::MAX));
        let date = peregrine::date::now();
        let head = ResponseHeadOut {
            date: Some(&date),
            server: Some(b"peregrine"),
            ..ResponseHeadOut::new(200, fields)
        };
        encode_head(&head, BodyLength::Length(1_234_567), out).unwrap();
        encode_head(&head, BodyLength::Chunked, out).unwrap();
        encode_chunk(b"some body bytes", out);
        encode_last_chunk(&[("X-Sum", b"1")], out).unwrap();
    };
    // Warm-up: the thread-local Date cache and the buffer.
    run(&mut out);
    let before = allocations();
    for _ in 0..10_000 {
        run(&mut out);
    }
    assert_eq!(allocations() - before, 0, "allocations in 10,000 responses");
    assert!(out.starts_with(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"));

    // The counter works: a growing buffer is seen.
    let before = allocations();
    let mut small = Vec::new();
    encode_chunk(b"x", &mut small);
    assert!(allocations() > before);
}

#[test]
fn client_path_allocates_nothing_in_steady_state() {
    // Connect time: the prelude is built (and allocates) once.
    let prelude = RequestPrelude::new(Scheme::Http, "api.example.com", 8080)
        .unwrap()
        .with_field("User-Agent", b"peregrine")
        .unwrap();
    let fields: &[(&str, &[u8])] = &[
        ("Accept", b"application/json"),
        ("Content-Type", b"application/json; charset=utf-8"),
        ("Authorization", b"Bearer abcdef0123456789"),
        ("X-Request-Id", b"8f14e45fceea167a"),
    ];
    let response = b"HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
Content-Type: application/json\r\nContent-Length: 47\r\nConnection: keep-alive\r\n\r\n";
    let limits = Limits::default();
    let mut scanner = HeadScanner::new();
    let mut out = Vec::with_capacity(4096);
    let run = |out: &mut Vec<u8>, scanner: &mut HeadScanner| {
        out.clear();
        encode_request(
            &prelude,
            Method::Post,
            "/api/v1/orders",
            fields,
            BodyLength::Length(47),
            out,
        )
        .unwrap();
        encode_request(&prelude, Method::Get, "/", &[], BodyLength::Length(0), out).unwrap();
        encode_request_extension(&prelude, "PROPFIND", "/d", fields, BodyLength::Chunked, out)
            .unwrap();
        let mut storage = [const { MaybeUninit::uninit() }; 16];
        let Ok(Status::Complete(head)) = parse_response_uninit(response, &mut storage, &limits)
        else {
            panic!("response head");
        };
        let framing = response_framing(Method::Post, head.status, head.version, head.headers);
        assert_eq!(framing.map(|f| f.body), Ok(BodyLength::Length(47)));
        // The trickle path: a first partial attempt, then the whole head.
        let mut storage = [const { MaybeUninit::uninit() }; 16];
        let partial = scanner.parse_response_uninit(&response[..40], &mut storage, &limits);
        assert!(partial.unwrap().is_partial());
        let mut storage = [const { MaybeUninit::uninit() }; 16];
        let whole = scanner.parse_response_uninit(response, &mut storage, &limits);
        assert_eq!(whole.unwrap().complete().map(|h| h.len), Some(response.len()));
    };
    run(&mut out, &mut scanner);
    let before = allocations();
    for _ in 0..10_000 {
        run(&mut out, &mut scanner);
    }
    assert_eq!(allocations() - before, 0, "allocations in 10,000 request/response heads");
    assert!(out.starts_with(b"POST /api/v1/orders HTTP/1.1\r\nhost: api.example.com:8080\r\n"));
}
