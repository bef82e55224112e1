//! Proves the zero-allocation claims of the response path: once the output buffer has
//! capacity, encoding heads and chunks, reading the cached Date, decoding a chunked body and
//! applying the framing rules allocate nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use peregrine::Method;
use peregrine::http1::chunked::{ChunkedDecoder, encode_chunk, encode_last_chunk};
use peregrine::http1::encode::{ResponseHeadOut, encode_head};
use peregrine::http1::framing::{BodyLength, parse_content_length, request_framing};
use peregrine::http1::{Header, HeaderId, KnownHeaders, RequestHead, TargetForm, Version};

/// Counts allocations made by the current thread, so parallel tests cannot disturb the count.
struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|a| a.set(a.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.with(|a| a.set(a.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCS.with(Cell::get)
}

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
