#![no_main]
//! The client's response path: arbitrary bytes as a server's, through the decoding a client
//! connection runs (HTTP/1.1: `parse_response`, the framing rules and the body decoder, with
//! requests pipelined; HTTP/2: the connection in the client role with streams open), via
//! `client::conn::ResponseReader`. Checks: no panic; bodies never pass the limit; feeding the
//! input whole or in pieces (the first bytes choose the split) gives the same events (DATA
//! pieces of a request merged), the same error or none.
use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use peregrine::client::conn::{Event, Protocol, ResponseReader};
use peregrine::http1::Limits;

const MAX_BODY: u64 = 4096;

/// An HTTP/2 server preface: an empty SETTINGS frame, so the fuzzer starts past it.
const SETTINGS: &[u8] = &[0, 0, 0, 4, 0, 0, 0, 0, 0];

#[derive(Debug, PartialEq, Eq)]
enum Ev {
    Head(u32, u16, Vec<(String, Vec<u8>)>),
    End(u32, Option<usize>),
    Failed(u32, String),
    Writable(u32),
}

/// Feeds `input` in pieces of `step` bytes (then the end of input); returns the events, the
/// bodies per request, and the final error.
fn run(
    protocol: Protocol,
    methods: &[&str],
    input: &[u8],
    step: usize,
) -> (Vec<Ev>, HashMap<u32, Vec<u8>>, Option<String>) {
    let limits = Limits { max_head_bytes: 1024, max_headers: 16, max_target_bytes: 0 };
    let mut reader = ResponseReader::new(protocol, methods[0], limits, MAX_BODY);
    for m in &methods[1..] {
        let _ = reader.send(m);
    }
    let (mut events, mut bodies) = (Vec::new(), HashMap::<u32, Vec<u8>>::new());
    let mut fed = 0;
    loop {
        let event = match reader.next_event() {
            Ok(e) => e,
            Err(e) => return (events, bodies, Some(format!("{e}"))),
        };
        match event {
            Some(Event::Head { id, head }) => {
                let fields = head.headers().iter().map(|(n, v)| (n.to_owned(), v.to_vec())).collect();
                events.push(Ev::Head(id.get(), head.status(), fields));
            }
            Some(Event::Data { id, data }) => {
                let body = bodies.entry(id.get()).or_default();
                body.extend_from_slice(data);
                assert!(body.len() as u64 <= MAX_BODY, "a body past the limit");
            }
            Some(Event::End { id, trailers }) => events.push(Ev::End(id.get(), trailers.map(|t| t.len()))),
            Some(Event::Failed { id, error }) => events.push(Ev::Failed(id.get(), format!("{error}"))),
            Some(Event::Writable { id }) => events.push(Ev::Writable(id.get())),
            None if fed < input.len() => {
                let end = fed.saturating_add(step).min(input.len());
                reader.feed(&input[fed..end]);
                fed = end;
            }
            None => {
                reader.finish();
                // After the end of input the reader reports an error or more events; a second
                // `None` would mean it ignored the end.
                if let Ok(None) = reader.next_event() {
                    panic!("the end of input went unreported");
                }
            }
        }
        assert!(events.len() < 10_000, "events without progress");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let protocol = if mode & 1 == 0 { Protocol::Http1 } else { Protocol::Http2 };
    let methods: &[&str] = match (mode >> 1) & 3 {
        0 => &["GET"],
        1 => &["HEAD", "GET"],
        2 => &["GET", "GET", "HEAD"],
        _ => &["POST"],
    };
    let step = usize::from(mode >> 3) + 1;
    let mut input = Vec::with_capacity(rest.len() + SETTINGS.len());
    if protocol == Protocol::Http2 {
        input.extend_from_slice(SETTINGS);
    }
    input.extend_from_slice(rest);
    let whole = run(protocol, methods, &input, usize::MAX);
    let split = run(protocol, methods, &input, step);
    // HTTP/1.1 decodes the same at every split; HTTP/2 too, but a frame split across pieces
    // may surface an error in a different word (the same failure), so compare its events.
    if protocol == Protocol::Http1 {
        assert_eq!(whole, split, "split at {step}");
    } else {
        assert_eq!((&whole.0, &whole.1), (&split.0, &split.1), "split at {step}");
        assert_eq!(whole.2.is_some(), split.2.is_some(), "split at {step}");
    }
});
