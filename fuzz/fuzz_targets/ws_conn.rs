#![no_main]
//! The WebSocket connection state machine, both roles, with and without permessage-deflate,
//! fed arbitrary bytes as the peer's: never panics, memory stays bounded, feeding the input
//! whole or split at arbitrary points gives the same events, and what the connection sends
//! back (it echoes every message) is read without error by a connection in the other role.
//! With the first byte's top bit set, the rest goes to the inflater alone, in pieces, under a
//! small limit.
//!
//! The first byte chooses: the role (bit 0), deflate (bit 1), each side's context takeover
//! (bits 2, 3), the windows (bits 4-5), fragmenting what is sent (bit 6). The next two bytes
//! choose the split points.
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use peregrine::ws::deflate::Inflater;
use peregrine::ws::{Config, Conn, DeflateConfig, DeflateParams, Event, Limits, Role};

const MAX_MESSAGE: usize = 256 * 1024;

fn config(fragment: bool) -> Arc<Config> {
    let limits = Limits {
        max_frame_size: 64 * 1024,
        max_message_size: MAX_MESSAGE,
        max_fragments: 64,
        ping_interval: Some(Duration::from_secs(1)),
        idle_timeout: Some(Duration::from_secs(3)),
        ..Limits::default()
    };
    let deflate = Some(DeflateConfig { min_size: 0, ..DeflateConfig::default() });
    Arc::new(Config { limits, fragment_size: fragment.then_some(100), deflate })
}

/// Feeds `pieces` to a connection, echoing every message; returns the events and what it sent.
fn run(conn: &mut Conn, pieces: &[&[u8]], now: Instant) -> (Vec<Event>, Vec<u8>) {
    let mut input = BytesMut::new();
    let mut events = Vec::new();
    for piece in pieces {
        input.extend_from_slice(piece);
        while let Some(e) = conn.recv(&mut input, now) {
            match &e {
                Event::Text(t) => {
                    let _ = conn.send_text(std::str::from_utf8(t).expect("validated text"));
                }
                Event::Binary(b) => {
                    let _ = conn.send_binary(b);
                }
                _ => {}
            }
            events.push(e);
            assert!(conn.buffered() <= 4 * MAX_MESSAGE + 1024, "{}", conn.buffered());
        }
    }
    let _ = conn.handle_timeout(now + Duration::from_secs(2));
    let mut out = Vec::new();
    conn.poll_transmit(&mut out);
    (events, out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    if flags & 0x80 != 0 {
        let mut inflater = Inflater::new(9 + (flags & 7), flags & 8 != 0);
        let mut out = BytesMut::new();
        let limit = 4096;
        for piece in rest.chunks(1 + usize::from(flags & 0x30)) {
            if inflater.inflate(piece, &mut out, limit).is_err() {
                break;
            }
            assert!(out.len() <= limit + 1);
        }
        let _ = inflater.finish(&mut out, limit);
        assert!(out.len() <= limit + 1);
        return;
    }
    let Some((cuts, input)) = rest.split_at_checked(2) else { return };
    let role = if flags & 1 == 0 { Role::Server } else { Role::Client };
    let peer_role = if role == Role::Server { Role::Client } else { Role::Server };
    let bits = [(15, 15), (9, 15), (8, 12), (12, 8)][usize::from(flags >> 4 & 3)];
    let deflate = (flags & 2 != 0).then_some(DeflateParams {
        server_no_context_takeover: flags & 4 != 0,
        client_no_context_takeover: flags & 8 != 0,
        server_max_window_bits: bits.0,
        client_max_window_bits: bits.1,
    });
    let config = config(flags & 0x40 != 0);
    let now = Instant::now();

    let mut whole = Conn::new(role, config.clone(), deflate, [1; 32], now);
    let (events, out) = run(&mut whole, &[input], now);

    // Split at the two points the cuts choose.
    let a = usize::from(cuts[0]) * input.len() / 256;
    let b = a + (usize::from(cuts[1]) * (input.len() - a) / 256);
    let pieces = [&input[..a], &input[a..b], &input[b..]];
    let mut split = Conn::new(role, config.clone(), deflate, [1; 32], now);
    let (split_events, split_out) = run(&mut split, &pieces, now);
    assert_eq!(events, split_events);
    assert_eq!(out, split_out);

    // What we sent reads cleanly in the other role, and the echoes are the messages.
    let mut peer = Conn::new(peer_role, config, deflate, [2; 32], now);
    let mut wire = BytesMut::from(&out[..]);
    let mut echoed = Vec::new();
    while let Some(e) = peer.recv(&mut wire, now) {
        assert!(!matches!(e, Event::Error(_)), "{e:?}");
        if matches!(e, Event::Text(_) | Event::Binary(_)) {
            echoed.push(e);
        }
    }
    let sent: Vec<&Event> =
        events.iter().filter(|e| matches!(e, Event::Text(_) | Event::Binary(_))).collect();
    assert_eq!(echoed.iter().collect::<Vec<_>>(), sent);
});
