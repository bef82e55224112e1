//! A client and a server back to back: every message arrives as sent, in every combination
//! of compression parameters and fragmenting, with pings between, the bytes cut at random.

use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};

use super::harness::{Split, XorShift, pieces};
use crate::ws::close_code::CloseCode;
use crate::ws::config::Config;
use crate::ws::conn::{Conn, Event, Role, State};
use crate::ws::extension::{DeflateConfig, DeflateParams};

struct Peer {
    conn: Conn,
    input: BytesMut,
    events: Vec<Event>,
}

impl Peer {
    fn new(role: Role, config: Config, deflate: Option<DeflateParams>, now: Instant) -> Peer {
        let conn = Conn::new(role, Arc::new(config), deflate, [role as u8; 32], now);
        Peer { conn, input: BytesMut::new(), events: Vec::new() }
    }
}

/// Moves what `from` queued to `to`, in random pieces.
fn pump(from: &mut Peer, to: &mut Peer, seed: u64, now: Instant) {
    let mut wire = Vec::new();
    from.conn.poll_transmit(&mut wire);
    for piece in pieces(&wire, Split::Random(seed | 1, 300)) {
        to.input.extend_from_slice(piece);
        while let Some(e) = to.conn.recv(&mut to.input, now) {
            to.events.push(e);
        }
    }
}

fn message(rng: &mut XorShift, len: usize, text: bool) -> Vec<u8> {
    // Compressible: words from a small vocabulary, with some noise.
    let words: [&[u8]; 6] = [
        b"alpha ",
        b"beta ",
        b"gamma ",
        b"\xce\xb4\xce\xad\xce\xbb\xcf\x84\xce\xb1 ",
        b"{\"k\":1} ",
        b"\xe2\x82\xac ",
    ];
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        if !text && rng.below(4) == 0 {
            out.push(rng.next() as u8);
        } else {
            out.extend_from_slice(words[rng.below(words.len())]);
        }
    }
    if !text {
        out.truncate(len);
    }
    out
}

fn exchange(
    deflate: Option<DeflateParams>,
    dconfig: DeflateConfig,
    fragment: Option<usize>,
    seed: u64,
) {
    let now = Instant::now();
    let config = Config { fragment_size: fragment, deflate: Some(dconfig), ..Config::default() };
    let mut client = Peer::new(Role::Client, config.clone(), deflate, now);
    let mut server = Peer::new(Role::Server, config, deflate, now);
    let mut rng = XorShift(seed);
    let mut sent_by_client = Vec::new();
    let mut sent_by_server = Vec::new();
    let lens = [0usize, 1, 40, 300, 5000, 70_000];
    for round in 0..24 {
        let len = lens[rng.below(lens.len())];
        let text = rng.below(2) == 0;
        let body = message(&mut rng, len, text);
        let (from, to, log) = if round % 3 == 2 {
            (&mut server, &mut client, &mut sent_by_server)
        } else {
            (&mut client, &mut server, &mut sent_by_client)
        };
        if let Some(e) = to.events.iter().chain(&from.events).find(|e| matches!(e, Event::Error(_)))
        {
            panic!("round {round}: {e:?}");
        }
        if text {
            from.conn.send_text(std::str::from_utf8(&body).unwrap()).unwrap();
            log.push(Event::Text(Bytes::from(body)));
        } else {
            from.conn.send_binary(&body).unwrap();
            log.push(Event::Binary(Bytes::from(body)));
        }
        if rng.below(3) == 0 {
            from.conn.send_ping(&[round as u8; 3]).unwrap();
        }
        // Sometimes two messages travel together.
        if rng.below(2) == 0 {
            pump(from, to, rng.next(), now);
            pump(to, from, rng.next(), now);
        }
    }
    pump(&mut client, &mut server, rng.next(), now);
    pump(&mut server, &mut client, rng.next(), now);
    pump(&mut client, &mut server, rng.next(), now);
    let data = |events: &[Event]| -> Vec<Event> {
        events.iter().filter(|e| matches!(e, Event::Text(_) | Event::Binary(_))).cloned().collect()
    };
    let label = format!("{deflate:?} {fragment:?} {seed}");
    assert_eq!(data(&server.events), sent_by_client, "{label}");
    assert_eq!(data(&client.events), sent_by_server, "{label}");
    // Every ping got its pong (coalesced ones aside), and nothing failed.
    for p in [&server, &client] {
        assert!(
            p.events.iter().all(|e| !matches!(e, Event::Error(_) | Event::Close { .. })),
            "{label}"
        );
    }
    // The closing handshake, the client first.
    client.conn.close(CloseCode::NORMAL, "done").unwrap();
    assert_eq!(client.conn.state(), State::CloseSent);
    assert!(client.conn.send_text("late").is_err());
    pump(&mut client, &mut server, 5, now);
    assert_eq!(
        server.events.last(),
        Some(&Event::Close { code: CloseCode::NORMAL, reason: Bytes::from_static(b"done") })
    );
    assert!(server.conn.is_closed());
    pump(&mut server, &mut client, 6, now);
    assert_eq!(
        client.events.last(),
        Some(&Event::Close { code: CloseCode::NORMAL, reason: Bytes::new() })
    );
    assert!(client.conn.is_closed());
}

#[test]
fn without_compression() {
    for (fragment, seed) in [(None, 1), (Some(2), 2), (Some(7), 3), (Some(1000), 4)] {
        exchange(None, DeflateConfig::default(), fragment, seed);
    }
}

/// Every combination of context takeover on either side, several windows (8: that side sends
/// uncompressed), fragmented or not, every message compressed or only the longer ones.
#[cfg(feature = "ws-deflate")]
#[test]
fn with_permessage_deflate() {
    let mut seed = 10;
    for server_no_context_takeover in [false, true] {
        for client_no_context_takeover in [false, true] {
            for (server_bits, client_bits) in [(15, 15), (9, 12), (8, 8)] {
                for fragment in [None, Some(100)] {
                    let params = DeflateParams {
                        server_no_context_takeover,
                        client_no_context_takeover,
                        server_max_window_bits: server_bits,
                        client_max_window_bits: client_bits,
                    };
                    for min_size in [0, 64] {
                        seed += 1;
                        let dconfig =
                            DeflateConfig { min_size, level: 6, ..DeflateConfig::default() };
                        exchange(Some(params), dconfig, fragment, seed);
                    }
                }
            }
        }
    }
}

/// The handshake's agreement feeds both connections: what a server negotiates from a client's
/// offer, and the client reads from the response, works end to end.
#[cfg(feature = "ws-deflate")]
#[test]
fn negotiated_by_the_handshake() {
    use crate::Version;
    use crate::ws::handshake::{ClientHandshake, check_request};
    let ours = DeflateConfig {
        client_no_context_takeover: true,
        server_max_window_bits: 10,
        ..DeflateConfig::default()
    };
    let theirs = DeflateConfig { server_no_context_takeover: true, ..DeflateConfig::default() };
    let client = ClientHandshake::new([1; 16]).deflate(ours.clone());
    let request: Vec<(&[u8], &[u8])> =
        client.fields(Version::Http11).map(|(n, v)| (n.as_bytes(), v)).collect();
    let accept = check_request(b"GET", Version::Http11, request.iter().copied())
        .unwrap()
        .accept(&[], Some(&theirs));
    let response: Vec<(&[u8], &[u8])> = accept.fields().map(|(n, v)| (n.as_bytes(), v)).collect();
    let accepted = client.check_response(101, response.iter().copied()).unwrap();
    let params = accepted.deflate.unwrap();
    assert_eq!(Some(params), accept.deflate());
    assert_eq!(
        params,
        DeflateParams {
            server_no_context_takeover: true,
            client_no_context_takeover: true,
            server_max_window_bits: 10,
            client_max_window_bits: 15,
        }
    );
    exchange(Some(params), DeflateConfig::default(), None, 99);
}
