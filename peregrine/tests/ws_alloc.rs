//! Proves the WebSocket connection's zero-allocation claim without compression: once a client
//! and a server connection have warmed up, messages both ways (text and binary, in one frame
//! and fragmented, with pings and their pongs between) allocate nothing in either role. The
//! driver here does what a real one does: appends reads to one `BytesMut`, swaps its output
//! `Vec` with the connection's, and drops each message before the next read.

#[path = "support/thread_allocs.rs"]
mod thread_allocs;

use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;
use thread_allocs::allocations;

use peregrine::ws::{Config, Conn, Event, Role};

#[global_allocator]
static GLOBAL: thread_allocs::Counting = thread_allocs::Counting;

struct Side {
    conn: Conn,
    input: BytesMut,
}

/// Moves `from`'s queued frames into `to`'s input and reads them; returns the data octets.
fn deliver(from: &mut Side, to: &mut Side, wire: &mut Vec<u8>, now: Instant) -> usize {
    wire.clear();
    from.conn.poll_transmit(wire);
    to.input.extend_from_slice(wire);
    let mut got = 0;
    while let Some(event) = to.conn.recv(&mut to.input, now) {
        match event {
            Event::Text(b) | Event::Binary(b) => got += b.len(),
            Event::Ping(_) | Event::Pong(_) => {}
            e => panic!("unexpected {e:?}"),
        }
    }
    got
}

fn round(client: &mut Side, server: &mut Side, wire: &mut Vec<u8>, now: Instant, i: usize) {
    let text = "a text message of some sixty octets, like a chat line or JSON";
    let binary = [7u8; 1500];
    client.conn.send_text(text).unwrap();
    client.conn.send_binary(&binary[..200 + i % 1300]).unwrap();
    if i % 7 == 0 {
        client.conn.send_ping(b"are you there").unwrap();
    }
    let got = deliver(client, server, wire, now);
    assert_eq!(got, text.len() + 200 + i % 1300);
    server.conn.send_binary(&binary[..100 + i % 1400]).unwrap();
    server.conn.send_text(text).unwrap();
    let got = deliver(server, client, wire, now);
    assert_eq!(got, text.len() + 100 + i % 1400);
}

#[test]
fn messages_allocate_nothing_in_either_role_after_warm_up() {
    let now = Instant::now();
    // Fragments of 512: the longer messages are assembled, the shorter split off the input.
    let config = Arc::new(Config { fragment_size: Some(512), ..Config::default() });
    let mut client = Side {
        conn: Conn::new(Role::Client, config.clone(), None, [5; 32], now),
        input: BytesMut::with_capacity(16 * 1024),
    };
    let mut server = Side {
        conn: Conn::new(Role::Server, config, None, [0; 32], now),
        input: BytesMut::with_capacity(16 * 1024),
    };
    let mut wire = Vec::with_capacity(16 * 1024);
    // Warm-up over every message size the measured rounds use: buffers reach their size.
    for i in 0..1500 {
        round(&mut client, &mut server, &mut wire, now, i);
    }
    let before = allocations();
    for i in 0..2000 {
        round(&mut client, &mut server, &mut wire, now, i);
    }
    assert_eq!(allocations() - before, 0, "allocations in 2000 rounds after warm-up");
}

#[test]
fn an_idle_connection_is_small() {
    let now = Instant::now();
    let config = Arc::new(Config::default());
    let before = allocations();
    let conn = Conn::new(Role::Server, config, None, [0; 32], now);
    assert_eq!(allocations() - before, 0, "a new connection allocates nothing");
    assert!(std::mem::size_of_val(&conn) <= 512, "{}", std::mem::size_of_val(&conn));
}
