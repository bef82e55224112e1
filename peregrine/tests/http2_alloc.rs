//! Proves the HTTP/2 connection's zero-allocation claim: once a client and a server
//! connection have warmed up on one kept-open connection, a whole exchange (a request with
//! four fields and a body, a response with a body, trailers on every other one, HPACK
//! included, both directions, WINDOW_UPDATEs) allocates nothing, in either role.

#[path = "support/thread_allocs.rs"]
mod thread_allocs;

use std::time::Instant;
use thread_allocs::allocations;

use peregrine::http2::{Config, Conn, Event, HeadersKind, RequestHead, Role};

#[global_allocator]
static GLOBAL: thread_allocs::Counting = thread_allocs::Counting;

const HEAD: RequestHead<'static> = RequestHead {
    method: b"POST",
    scheme: b"https",
    authority: b"example.com",
    path: b"/api/items?page=2",
    protocol: None,
};

const FIELDS: [(&[u8], &[u8]); 4] = [
    (b"user-agent", b"peregrine-test/1.0"),
    (b"accept", b"application/json"),
    (b"content-type", b"application/json"),
    (b"x-request-id", b"3f2a9c"),
];

/// What one side saw of one exchange, without allocating: counts only.
#[derive(Default, Debug, PartialEq, Eq)]
struct Seen {
    heads: u32,
    trailers: u32,
    body: usize,
    ended: u32,
    last: u32,
}

/// Runs `conn` over `wire` and records what arrived; releases DATA as it is consumed.
fn drive(conn: &mut Conn, wire: &[u8], now: Instant, seen: &mut Seen) {
    let mut pos = 0;
    loop {
        let (used, ev) = conn.recv(&wire[pos..], now);
        pos += used;
        let Some(ev) = ev else {
            if used == 0 {
                break;
            }
            continue;
        };
        let release = match ev {
            Event::Headers { stream, kind, end_stream, section } => {
                match kind {
                    HeadersKind::Trailers => seen.trailers += 1,
                    _ => seen.heads += 1,
                }
                assert!(!section.is_empty());
                seen.last = stream.get();
                seen.ended += u32::from(end_stream);
                None
            }
            Event::Data { stream, data, end_stream } => {
                seen.body += data.len();
                seen.ended += u32::from(end_stream);
                seen.last = stream.get();
                Some((stream, data.len()))
            }
            Event::Settings(_) | Event::SettingsAcked | Event::Writable { .. } => None,
            e => panic!("unexpected {e:?}"),
        };
        if let Some((stream, n)) = release {
            conn.release_capacity(stream, n);
        }
    }
    assert_eq!(pos, wire.len());
}

/// One exchange over the connected pair: request with body, response with body, and
/// trailers when `trailers`.
fn exchange(
    client: &mut Conn,
    server: &mut Conn,
    wire: &mut Vec<u8>,
    now: Instant,
    trailers: bool,
) {
    let body = [b'r'; 300];
    let reply = [b's'; 2000];
    let id = client.send_request(&HEAD, FIELDS, false).unwrap();
    assert_eq!(client.send_data(id, &body, !trailers), Ok(body.len()));
    if trailers {
        client.send_trailers(id, [(&b"x-checksum"[..], &b"abc"[..])]).unwrap();
    }
    wire.clear();
    client.poll_transmit(wire);
    let mut seen = Seen::default();
    drive(server, wire, now, &mut seen);
    assert_eq!(
        (seen.heads, seen.trailers, seen.body, seen.ended),
        (1, u32::from(trailers), 300, 1)
    );
    server
        .send_response(
            id,
            200,
            [
                (&b"content-type"[..], &b"application/json"[..]),
                (&b"cache-control"[..], &b"no-store"[..]),
            ],
            false,
        )
        .unwrap();
    assert_eq!(server.send_data(id, &reply, !trailers), Ok(reply.len()));
    if trailers {
        server.send_trailers(id, [(&b"grpc-status"[..], &b"0"[..])]).unwrap();
    }
    wire.clear();
    server.poll_transmit(wire);
    let mut seen = Seen::default();
    drive(client, wire, now, &mut seen);
    assert_eq!(
        (seen.heads, seen.trailers, seen.body, seen.ended),
        (1, u32::from(trailers), 2000, 1)
    );
    assert_eq!(client.active_streams(), (0, 0));
    assert_eq!(server.active_streams(), (0, 0));
}

#[test]
fn a_kept_open_connection_allocates_nothing_per_exchange_in_either_role() {
    let now = Instant::now();
    let start = allocations();
    let mut client = Conn::new(Role::Client, Config::default(), now);
    let mut server = Conn::new(Role::Server, Config::default(), now);
    assert!(allocations() > start, "the counter sees the connections' buffers");
    let mut wire = Vec::with_capacity(64 * 1024);
    // Prefaces and settings both ways.
    for _ in 0..2 {
        wire.clear();
        client.poll_transmit(&mut wire);
        drive(&mut server, &wire, now, &mut Seen::default());
        wire.clear();
        server.poll_transmit(&mut wire);
        drive(&mut client, &wire, now, &mut Seen::default());
    }
    // Warm-up: buffers grow to their working size, HPACK tables fill, WINDOW_UPDATEs start.
    for i in 0..2000 {
        exchange(&mut client, &mut server, &mut wire, now, i % 2 == 0);
    }
    let before = allocations();
    for i in 0..2000 {
        exchange(&mut client, &mut server, &mut wire, now, i % 2 == 0);
    }
    assert_eq!(allocations() - before, 0, "allocations in 2000 exchanges after warm-up");
}
