//! One test per abuse budget: flood the machine, check the reaction (GOAWAY
//! ENHANCE_YOUR_CALM, at the documented default) and that work and memory stayed bounded; and
//! where the budget is a rate, that a peer doing the same thing at a legitimate pace is not
//! punished.

use std::time::{Duration, Instant};

use super::wire::*;
use crate::http2::conn::Conn;
use crate::http2::error::Reason;
use crate::http2::frame::settings::SettingId;
use crate::http2::frame::{Kind, flags};
use crate::http2::stream_id::StreamId;

const CALM: Reason = Reason::ENHANCE_YOUR_CALM;

/// Feeds `frames` one `feed` at a time; returns how many went in before the connection closed
/// (all of them if it did not) and the closing reason.
fn flood(
    conn: &mut Conn,
    frames: impl Iterator<Item = (Vec<u8>, Instant)>,
) -> (usize, Option<Reason>) {
    for (i, (f, now)) in frames.enumerate() {
        for e in feed(conn, &f, now) {
            if let Ev::Closed { reason, .. } = e {
                return (i, Some(reason));
            }
        }
    }
    (usize::MAX, None)
}

/// What the connection holds after a flood: queued output octets and live streams.
fn footprint(conn: &Conn) -> (usize, usize) {
    (conn.buffered(), conn.streams.slab.len())
}

#[test]
fn rapid_reset_floods_end_the_connection_and_legitimate_cancels_do_not() {
    let (mut conn, mut peer) = server();
    let now = peer.now;
    let frames = (0..10_000u32).map(|i| {
        let id = 2 * i + 1;
        ([peer.headers(id, false, &post(None)), rst_stream(id, Reason::CANCEL)].concat(), now)
    });
    let (n, reason) = flood(&mut conn, frames);
    assert_eq!((n, reason), (200, Some(CALM)), "the burst is 200");
    // Only the stream whose reset spent the budget is left.
    let (bytes, streams) = footprint(&conn);
    assert!(bytes < 1024 && streams <= 1, "{bytes} {streams}");
    // A browser that navigates away from 150 images at once, then cancels 50 a second (below
    // the 100/s rate) for a minute, is never punished.
    let (mut conn, mut peer) = server();
    let start = peer.now;
    let mut id = 1;
    let mut frames = Vec::new();
    for second in 0..61u64 {
        let count = if second == 0 { 150 } else { 50 };
        for k in 0..count {
            let t = start + Duration::from_secs(second) + Duration::from_millis(k * 1000 / count);
            frames.push((
                [peer.headers(id, false, &post(None)), rst_stream(id, Reason::CANCEL)].concat(),
                t,
            ));
            id += 2;
        }
    }
    assert_eq!(flood(&mut conn, frames.into_iter()), (usize::MAX, None));
}

#[test]
fn resets_the_peer_provokes_are_budgeted() {
    // CVE-2025-8671 (MadeYouReset): malformed requests each make us send RST_STREAM.
    let (mut conn, mut peer) = server();
    let now = peer.now;
    let frames =
        (0..10_000u32).map(|i| (peer.headers(2 * i + 1, true, &[(":method", "GET")]), now));
    let (n, reason) = flood(&mut conn, frames);
    assert_eq!((n, reason), (200, Some(CALM)));
    // The RST_STREAM frames queued meanwhile are bounded by the budget.
    assert!(conn.buffered() < 200 * 13 + 1024, "{}", conn.buffered());
    // WINDOW_UPDATE of 0 on an open stream, the same way.
    let (mut conn, mut peer) = server();
    let frames = (0..10_000u32).map(|i| {
        let id = 2 * i + 1;
        ([peer.headers(id, false, &post(None)), window_update(id, 0)].concat(), now)
    });
    assert_eq!(flood(&mut conn, frames).1, Some(CALM));
}

#[test]
fn continuation_frames_per_block_are_capped_at_eight() {
    let build = |peer: &mut Peer, continuations: usize| {
        let b = peer.block(&GET);
        let mut v = raw(Kind::HEADERS, flags::END_STREAM, 1, &b);
        for i in 0..continuations {
            let end = if i + 1 == continuations { flags::END_HEADERS } else { 0 };
            v.extend(raw(Kind::CONTINUATION, end, 1, b""));
        }
        v
    };
    let (mut conn, mut peer) = server();
    let evs = feed(&mut conn, &build(&mut peer, 8), peer.now);
    assert!(matches!(&evs[..], [Ev::Headers { stream: 1, .. }]));
    let (mut conn, mut peer) = server();
    let evs = feed(&mut conn, &build(&mut peer, 9), peer.now);
    assert_eq!(evs, [closed(CALM)]);
    // An endless stream of empty CONTINUATIONs stops after the ninth: the rest is ignored.
    let (mut conn, mut peer) = server();
    let mut input = build(&mut peer, 0);
    for _ in 0..100_000 {
        input.extend(raw(Kind::CONTINUATION, 0, 1, b""));
    }
    assert_eq!(feed(&mut conn, &input, peer.now), [closed(CALM)]);
    assert!(conn.block.buf.capacity() < 1024);
}

#[test]
fn field_block_octets_are_capped() {
    // 64 KiB: HEADERS + three full CONTINUATIONs fit, a fourth does not.
    let (mut conn, peer) = server();
    let mut input = raw(Kind::HEADERS, 0, 1, &[0; 16_384]);
    for _ in 0..4 {
        input.extend(raw(Kind::CONTINUATION, 0, 1, &[0; 16_384]));
    }
    assert_eq!(feed(&mut conn, &input, peer.now), [closed(CALM)]);
    assert!(conn.block.buf.capacity() <= 64 * 1024 * 2, "{}", conn.block.buf.capacity());
    assert!(conn.block.buf.len() <= 64 * 1024);
}

#[test]
fn a_hostile_server_cannot_send_endless_continuations_to_a_client() {
    let (mut conn, mut peer) = client();
    let head = crate::http2::RequestHead {
        method: b"GET",
        scheme: b"https",
        authority: b"a",
        path: b"/",
        protocol: None,
    };
    conn.send_request(&head, [], true).unwrap();
    let b = peer.block(&[(":status", "200")]);
    let mut input = raw(Kind::HEADERS, 0, 1, &b);
    for _ in 0..1000 {
        input.extend(raw(Kind::CONTINUATION, 0, 1, &[0x40; 100]));
    }
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(evs, [closed(CALM)]);
    assert!(conn.block.buf.len() < 1024);
}

#[test]
fn tiny_data_frames_are_budgeted() {
    let (mut conn, mut peer) = server();
    let now = peer.now;
    feed(&mut conn, &peer.headers(1, false, &post(None)), now);
    let frames = (0..100_000).map(|i| (data(1, false, if i % 2 == 0 { b"" } else { b"x" }), now));
    let (n, reason) = flood(&mut conn, frames);
    assert_eq!((n, reason), (1000, Some(CALM)));
    // Tiny frames at 400 a second (below 500/s) go on for a minute; empty ones make no event.
    let (mut conn, mut peer) = server();
    feed(&mut conn, &peer.headers(1, false, &post(None)), now);
    let frames =
        (0..24_000u64).map(|i| (data(1, false, b"abc"), now + Duration::from_micros(i * 2500)));
    assert_eq!(flood(&mut conn, frames), (usize::MAX, None));
    // Frames of 8 octets and more are not tiny.
    let (mut conn, mut peer) = server();
    feed(&mut conn, &peer.headers(1, false, &post(None)), now);
    let frames = (0..5000).map(|_| (data(1, false, b"12345678"), now));
    let mut released = 0;
    for (f, t) in frames {
        for e in feed(&mut conn, &f, t) {
            assert!(matches!(e, Ev::Data { .. }), "{e:?}");
            released += 8;
        }
        conn.release_capacity(StreamId::new(1), released);
        released = 0;
    }
}

#[test]
fn acknowledgements_queued_for_a_peer_that_does_not_read_are_capped() {
    let (mut conn, peer) = server();
    let mut input = Vec::new();
    for _ in 0..500 {
        input.extend(ping(false, [0; 8]));
    }
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(evs.len(), 129, "128 pings answered, then the end");
    assert_eq!(evs.last(), Some(&closed(CALM)));
    assert!(conn.buffered() < 128 * 17 + 200);
    // SETTINGS count too.
    let (mut conn, peer) = server();
    let input: Vec<u8> = (0..500).flat_map(|_| settings_frame(&[])).collect();
    assert_eq!(feed(&mut conn, &input, peer.now).last(), Some(&closed(CALM)));
    // A peer that reads (we drain between batches) is fine.
    let (mut conn, peer) = server();
    for _ in 0..5 {
        let input: Vec<u8> = (0..100).flat_map(|_| ping(false, [1; 8])).collect();
        assert_eq!(feed(&mut conn, &input, peer.now).len(), 100);
        drain(&mut conn);
    }
}

#[test]
fn settings_entries_per_frame_are_capped() {
    let (mut conn, peer) = server();
    let ok: Vec<_> = (0..32).map(|i| (SettingId(0x100 + i), 1)).collect();
    assert_eq!(feed(&mut conn, &settings_frame(&ok), peer.now), [Ev::Settings]);
    let too_many: Vec<_> = (0..33).map(|i| (SettingId(0x100 + i), 1)).collect();
    assert_eq!(feed(&mut conn, &settings_frame(&too_many), peer.now), [closed(CALM)]);
}

#[test]
fn control_frame_floods_are_budgeted() {
    type Build = fn(u32) -> Vec<u8>;
    let floods: [(&str, Build); 4] = [
        ("WINDOW_UPDATE", |_| window_update(0, 1)),
        ("PRIORITY", |i| priority(2 * i + 1, 0)),
        ("unknown", |_| raw(Kind(0x20), 0, 0, b"")),
        ("RST_STREAM on closed streams", |_| rst_stream(1, Reason::CANCEL)),
    ];
    for (name, build) in floods {
        let (mut conn, mut peer) = server();
        let now = peer.now;
        // Stream 1 opened and closed, for the stray RST_STREAM case.
        feed(&mut conn, &peer.get(1), now);
        conn.send_response(StreamId::new(1), 204, [], true).unwrap();
        let (n, reason) = flood(&mut conn, (0..100_000).map(|i| (build(i), now)));
        assert_eq!(reason, Some(CALM), "{name}");
        assert!((990..=1000).contains(&n), "{name}: {n}");
        assert!(conn.buffered() < 1024, "{name}");
    }
}

#[test]
fn window_updates_earned_by_data_we_send_are_not_a_flood() {
    // A client acknowledging each DATA frame with two WINDOW_UPDATEs while downloading far
    // more than the budget's burst is fine.
    let (mut conn, mut peer) = server();
    let now = peer.now;
    feed(&mut conn, &peer.get(1), now);
    let id = StreamId::new(1);
    conn.send_response(id, 200, [], false).unwrap();
    let chunk = vec![0u8; 1000];
    for _ in 0..5000 {
        assert_eq!(conn.send_data(id, &chunk, false), Ok(1000));
        drain(&mut conn);
        let evs = feed(&mut conn, &[window_update(1, 1000), window_update(0, 1000)].concat(), now);
        assert!(!evs.iter().any(|e| matches!(e, Ev::Closed { .. })), "{evs:?}");
    }
}

#[test]
fn frames_ignored_on_streams_we_reset_are_budgeted() {
    let (mut conn, mut peer) = server();
    let now = peer.now;
    feed(&mut conn, &peer.headers(1, false, &post(None)), now);
    conn.reset(StreamId::new(1), Reason::CANCEL);
    let (n, reason) = flood(&mut conn, (0..100_000).map(|_| (data(1, false, b""), now)));
    assert_eq!(reason, Some(CALM));
    assert!((990..=1000).contains(&n), "{n}");
}
