//! The stream-state rules (RFC 9113 §5.1, §5.1.1, §5.1.2), frame placement (§4.3, §6.10),
//! frame sizes and unknown frames (§4.1, §4.2, §5.5): h2spec's cases and their neighbours.

use super::wire::*;
use crate::http2::config::Config;
use crate::http2::error::Reason;
use crate::http2::frame::settings::SettingId;
use crate::http2::frame::{Kind, flags};

/// Feeds `input` to a fresh server and returns the errors it sent.
fn server_errors(build: impl FnOnce(&mut Peer) -> Vec<u8>) -> Vec<(Kind, u32, Reason)> {
    let (mut conn, mut peer) = server();
    let input = build(&mut peer);
    feed(&mut conn, &input, peer.now);
    errors(&drain(&mut conn))
}

#[test]
fn frames_on_idle_streams_other_than_headers_and_priority_are_connection_errors() {
    let cases: [fn(&mut Peer) -> Vec<u8>; 5] = [
        |_| data(1, true, b"test"),
        |_| rst_stream(1, Reason::CANCEL),
        |_| window_update(1, 100),
        |p| raw(Kind::CONTINUATION, flags::END_HEADERS, 1, &p.block(&GET)),
        // A stream the server would open (even): idle too.
        |_| window_update(2, 1),
    ];
    for build in cases {
        assert_eq!(server_errors(build), [goaway(Reason::PROTOCOL_ERROR)]);
    }
    // PRIORITY on an idle stream is accepted, and so is HEADERS on a lower id afterwards.
    let (mut conn, mut peer) = server();
    let mut input = priority(3, 0);
    input.extend(peer.get(1));
    let evs = feed(&mut conn, &input, peer.now);
    assert!(matches!(&evs[..], [Ev::Headers { stream: 1, .. }]), "{evs:?}");
}

#[test]
fn stream_identifier_rules() {
    // Even-numbered from a client.
    assert_eq!(server_errors(|p| p.get(2)), [goaway(Reason::PROTOCOL_ERROR)]);
    // Lower than a previous one.
    assert_eq!(server_errors(|p| [p.get(5), p.get(3)].concat()), [goaway(Reason::PROTOCOL_ERROR)]);
}

#[test]
fn half_closed_remote_accepts_only_window_update_priority_and_rst_stream() {
    // DATA and HEADERS: stream error STREAM_CLOSED.
    assert_eq!(
        server_errors(|p| [p.get(1), data(1, true, b"test")].concat()),
        [rst(1, Reason::STREAM_CLOSED)]
    );
    assert_eq!(server_errors(|p| [p.get(1), p.get(1)].concat()), [rst(1, Reason::STREAM_CLOSED)]);
    // CONTINUATION without an open block: connection PROTOCOL_ERROR.
    assert_eq!(
        server_errors(|p| {
            let h = p.get(1);
            let b = p.block(&GET);
            [h, raw(Kind::CONTINUATION, flags::END_HEADERS, 1, &b)].concat()
        }),
        [goaway(Reason::PROTOCOL_ERROR)]
    );
    // WINDOW_UPDATE, PRIORITY, RST_STREAM: fine.
    let (mut conn, mut peer) = server();
    let input =
        [peer.get(1), window_update(1, 1), priority(1, 0), rst_stream(1, Reason::CANCEL)].concat();
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(evs.len(), 2, "{evs:?}");
    assert!(errors(&drain(&mut conn)).is_empty());
}

#[test]
fn closed_by_the_peers_reset_answers_frames_with_stream_closed() {
    let open =
        |p: &mut Peer| [p.headers(1, false, &post(None)), rst_stream(1, Reason::CANCEL)].concat();
    assert_eq!(
        server_errors(|p| [open(p), data(1, true, b"test")].concat()),
        [rst(1, Reason::STREAM_CLOSED)]
    );
    assert_eq!(server_errors(|p| [open(p), p.get(1)].concat()), [rst(1, Reason::STREAM_CLOSED)]);
    assert_eq!(
        server_errors(|p| [open(p), window_update(1, 5)].concat()),
        [rst(1, Reason::STREAM_CLOSED)]
    );
    // PRIORITY is allowed; RST_STREAM is never answered with RST_STREAM (§5.4.2).
    assert_eq!(
        server_errors(|p| [open(p), priority(1, 0), rst_stream(1, Reason::CANCEL)].concat()),
        []
    );
}

#[test]
fn closed_by_end_stream_both_ways_makes_late_data_and_headers_connection_errors() {
    for headers in [false, true] {
        let (mut conn, mut peer) = server();
        feed(&mut conn, &peer.get(1), peer.now);
        conn.send_response(crate::http2::StreamId::new(1), 204, [], true).unwrap();
        drain(&mut conn);
        // WINDOW_UPDATE and RST_STREAM right after our END_STREAM are tolerated.
        feed(
            &mut conn,
            &[window_update(1, 10), rst_stream(1, Reason::NO_ERROR)].concat(),
            peer.now,
        );
        assert!(errors(&drain(&mut conn)).is_empty());
        let late = if headers { peer.get(1) } else { data(1, true, b"test") };
        let evs = feed(&mut conn, &late, peer.now);
        assert_eq!(evs, [closed(Reason::STREAM_CLOSED)]);
        assert_eq!(errors(&drain(&mut conn)), [goaway(Reason::STREAM_CLOSED)]);
    }
}

#[test]
fn frames_after_our_reset_are_ignored_but_data_still_counts_in_the_connection_window() {
    let (mut conn, mut peer) = server();
    feed(&mut conn, &peer.headers(1, false, &post(None)), peer.now);
    conn.reset(crate::http2::StreamId::new(1), Reason::CANCEL);
    drain(&mut conn);
    let body = vec![0u8; 16_000];
    let mut input = Vec::new();
    for _ in 0..40 {
        input.extend(data(1, false, &body));
    }
    input.extend(window_update(1, 1));
    input.extend(peer.headers(1, true, &[("x", "trailer")]));
    let evs = feed(&mut conn, &input, peer.now);
    assert!(evs.is_empty(), "{evs:?}");
    let out = drain(&mut conn);
    assert!(errors(&out).is_empty());
    // 640,000 octets > the 1 MiB window's half: the ignored DATA was given back.
    let wu: Vec<_> = out
        .iter()
        .filter(|o| o.kind() == Kind::WINDOW_UPDATE)
        .map(|o| o.head.stream.get())
        .collect();
    assert_eq!(wu, [0]);
}

#[test]
fn concurrent_streams_beyond_our_limit_are_refused() {
    let config = Config { max_concurrent_streams: 3, ..Config::default() };
    let (mut conn, mut peer) = server_with(config, &[(SettingId::INITIAL_WINDOW_SIZE, 0)]);
    let mut input = Vec::new();
    for id in [1, 3, 5, 7] {
        input.extend(peer.get(id));
    }
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(evs.len(), 3);
    assert_eq!(errors(&drain(&mut conn)), [rst(7, Reason::REFUSED_STREAM)]);
    // Finishing one makes room.
    conn.send_response(crate::http2::StreamId::new(1), 204, [], true).unwrap();
    let evs = feed(&mut conn, &peer.get(9), peer.now);
    assert!(matches!(&evs[..], [Ev::Headers { stream: 9, .. }]));
}

#[test]
fn priority_rules() {
    // Depends on itself: HEADERS and PRIORITY (on an open stream) are stream errors.
    assert_eq!(
        server_errors(|p| {
            let b = p.block(&GET);
            let mut payload = vec![0, 0, 0, 1, 15];
            payload.extend(b);
            raw(
                Kind::HEADERS,
                flags::END_HEADERS | flags::END_STREAM | flags::PRIORITY,
                1,
                &payload,
            )
        }),
        [rst(1, Reason::PROTOCOL_ERROR)]
    );
    assert_eq!(
        server_errors(|p| [p.get(1), priority(1, 1)].concat()),
        [rst(1, Reason::PROTOCOL_ERROR)]
    );
    // On an idle stream there is nothing to reset: a connection error.
    assert_eq!(server_errors(|_| priority(1, 1)), [goaway(Reason::PROTOCOL_ERROR)]);
    // Wrong length: stream FRAME_SIZE_ERROR; stream 0: connection PROTOCOL_ERROR.
    assert_eq!(
        server_errors(|p| [p.get(1), raw(Kind::PRIORITY, 0, 1, &[0x80, 0, 0, 1])].concat()),
        [rst(1, Reason::FRAME_SIZE_ERROR)]
    );
    assert_eq!(server_errors(|_| priority(0, 1)), [goaway(Reason::PROTOCOL_ERROR)]);
}

#[test]
fn frame_size_rules() {
    // Larger than our MAX_FRAME_SIZE: DATA or HEADERS.
    assert_eq!(
        server_errors(|p| [p.headers(1, false, &post(None)), data(1, true, &[0; 16_385])].concat()),
        [goaway(Reason::FRAME_SIZE_ERROR)]
    );
    assert_eq!(
        server_errors(|p| {
            let mut b = p.block(&GET);
            b.resize(16_385, 0);
            raw(Kind::HEADERS, flags::END_HEADERS, 1, &b)
        }),
        [goaway(Reason::FRAME_SIZE_ERROR)]
    );
    // Exactly MAX_FRAME_SIZE is fine.
    assert_eq!(
        server_errors(|p| [p.headers(1, false, &post(None)), data(1, true, &[0; 16_384])].concat()),
        []
    );
    // Fixed-size frames of the wrong size.
    for f in [
        raw(Kind::PING, 0, 0, &[0; 7]),
        raw(Kind::RST_STREAM, 0, 1, &[0; 3]),
        raw(Kind::WINDOW_UPDATE, 0, 0, &[0; 5]),
        raw(Kind::SETTINGS, 0, 0, &[0; 5]),
    ] {
        assert_eq!(server_errors(|_| f.clone()), [goaway(Reason::FRAME_SIZE_ERROR)], "{f:?}");
    }
    assert_eq!(
        server_errors(|_| raw(Kind::SETTINGS, flags::ACK, 0, &[0; 6])),
        [goaway(Reason::FRAME_SIZE_ERROR)]
    );
}

#[test]
fn unknown_frames_are_ignored_except_inside_a_field_block() {
    let (mut conn, peer) = server();
    let evs = feed(
        &mut conn,
        &[raw(Kind(0x16), 0xff, 0, &[0; 8]), raw(Kind(0xfe), 0, 7, b""), ping(false, [1; 8])]
            .concat(),
        peer.now,
    );
    assert_eq!(evs, [Ev::Ping([1; 8])]);
    assert_eq!(
        drain(&mut conn).iter().map(|o| (o.kind(), o.head.flags)).collect::<Vec<_>>(),
        [(Kind::PING, flags::ACK)]
    );
    // h2spec 5.5: an unknown frame in the middle of a field block.
    assert_eq!(
        server_errors(|p| {
            let b = p.block(&GET);
            [raw(Kind::HEADERS, flags::END_STREAM, 1, &b), raw(Kind(0x16), 0, 0, &[0; 8])].concat()
        }),
        [goaway(Reason::PROTOCOL_ERROR)]
    );
}

#[test]
fn continuation_rules() {
    let dummy = [("x-dummy", "0")];
    // Several CONTINUATIONs after HEADERS: accepted.
    let (mut conn, mut peer) = server();
    let input = {
        let b = peer.block(&GET);
        let c1 = peer.block(&dummy);
        let c2 = peer.block(&dummy);
        [
            raw(Kind::HEADERS, flags::END_STREAM, 1, &b),
            raw(Kind::CONTINUATION, 0, 1, &c1),
            raw(Kind::CONTINUATION, flags::END_HEADERS, 1, &c2),
        ]
        .concat()
    };
    let evs = feed(&mut conn, &input, peer.now);
    assert!(
        matches!(&evs[..], [Ev::Headers { stream: 1, fields, .. }] if fields.len() == 6),
        "{evs:?}"
    );
    let open = |p: &mut Peer, end_headers: bool| {
        let b = p.block(&post(None));
        raw(Kind::HEADERS, if end_headers { flags::END_HEADERS } else { 0 }, 1, &b)
    };
    type Build = fn(&mut Peer, Vec<u8>) -> Vec<u8>;
    let cases: [Build; 5] = [
        // Followed by another frame type.
        |p, h| {
            let c = p.block(&[("x", "0")]);
            [h, raw(Kind::CONTINUATION, 0, 1, &c), data(1, true, b"test")].concat()
        },
        // On stream 0.
        |p, h| {
            [h, raw(Kind::CONTINUATION, flags::END_HEADERS, 0, &p.block(&[("x", "0")]))].concat()
        },
        // On another stream.
        |p, h| {
            [h, raw(Kind::CONTINUATION, flags::END_HEADERS, 3, &p.block(&[("x", "0")]))].concat()
        },
        // A PING in the middle.
        |_, h| [h, ping(false, [0; 8])].concat(),
        |_, h| [h, settings_frame(&[])].concat(),
    ];
    for build in cases {
        assert_eq!(
            server_errors(|p| {
                let h = open(p, false);
                build(p, h)
            }),
            [goaway(Reason::PROTOCOL_ERROR)]
        );
    }
    // After END_HEADERS, whether on HEADERS or on a CONTINUATION.
    assert_eq!(
        server_errors(|p| {
            let h = open(p, true);
            [h, raw(Kind::CONTINUATION, flags::END_HEADERS, 1, &p.block(&[("x", "0")]))].concat()
        }),
        [goaway(Reason::PROTOCOL_ERROR)]
    );
    assert_eq!(
        server_errors(|p| {
            let h = open(p, false);
            let c = p.block(&[("x", "0")]);
            [
                h,
                raw(Kind::CONTINUATION, flags::END_HEADERS, 1, &c),
                raw(Kind::CONTINUATION, flags::END_HEADERS, 1, &c),
            ]
            .concat()
        }),
        [goaway(Reason::PROTOCOL_ERROR)]
    );
}

#[test]
fn padding_is_stripped_and_checked() {
    let (mut conn, mut peer) = server();
    let b = peer.block(&post(None));
    let mut hp = vec![3];
    hp.extend(&b);
    hp.extend([0; 3]);
    let mut input = raw(Kind::HEADERS, flags::END_HEADERS | flags::PADDED, 1, &hp);
    input.extend(raw(Kind::DATA, flags::PADDED | flags::END_STREAM, 1, b"\x02ab\0\0"));
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(evs[1], Ev::Data { stream: 1, data: b"ab".to_vec(), end: true });
    // Pad Length as long as the payload: connection PROTOCOL_ERROR, DATA and HEADERS.
    assert_eq!(
        server_errors(|p| [
            p.headers(1, false, &post(None)),
            raw(Kind::DATA, flags::PADDED, 1, b"\x03ab")
        ]
        .concat()),
        [goaway(Reason::PROTOCOL_ERROR)]
    );
    assert_eq!(
        server_errors(|p| {
            let mut hp = vec![200];
            hp.extend(p.block(&GET));
            raw(Kind::HEADERS, flags::END_HEADERS | flags::PADDED, 1, &hp)
        }),
        [goaway(Reason::PROTOCOL_ERROR)]
    );
}

#[test]
fn an_undecodable_field_block_is_a_compression_error() {
    // Index 99 does not exist.
    assert_eq!(
        server_errors(|_| raw(Kind::HEADERS, flags::END_HEADERS, 1, &[0xff, 0x44])),
        [goaway(Reason::COMPRESSION_ERROR)]
    );
}

#[test]
fn ping_is_answered_with_the_same_payload_and_pong_is_reported() {
    let (mut conn, peer) = server();
    let evs =
        feed(&mut conn, &[ping(false, *b"12345678"), ping(true, *b"abcdefgh")].concat(), peer.now);
    assert_eq!(evs, [Ev::Ping(*b"12345678"), Ev::PingAck(*b"abcdefgh")]);
    let out = drain(&mut conn);
    assert_eq!(
        (out.len(), out[0].head.flags, &out[0].payload[..]),
        (1, flags::ACK, &b"12345678"[..])
    );
    conn.ping(*b"keep1234");
    assert_eq!(drain(&mut conn)[0].payload, b"keep1234");
    assert_eq!(server_errors(|_| raw(Kind::PING, 0, 3, &[0; 8])), [goaway(Reason::PROTOCOL_ERROR)]);
}

#[test]
fn settings_rules() {
    let cases: [(Vec<u8>, Reason); 5] = [
        (settings_frame(&[(SettingId::ENABLE_PUSH, 2)]), Reason::PROTOCOL_ERROR),
        (settings_frame(&[(SettingId::INITIAL_WINDOW_SIZE, 1 << 31)]), Reason::FLOW_CONTROL_ERROR),
        (settings_frame(&[(SettingId::MAX_FRAME_SIZE, 16_383)]), Reason::PROTOCOL_ERROR),
        (settings_frame(&[(SettingId::MAX_FRAME_SIZE, 1 << 24)]), Reason::PROTOCOL_ERROR),
        (raw(Kind::SETTINGS, 0, 1, &[]), Reason::PROTOCOL_ERROR),
    ];
    for (input, reason) in cases {
        assert_eq!(server_errors(|_| input.clone()), [goaway(reason)], "{input:?}");
    }
    // Values are applied in order; unknown ones ignored; an ACK goes back.
    let (mut conn, peer) = server();
    let evs = feed(
        &mut conn,
        &settings_frame(&[
            (SettingId::MAX_FRAME_SIZE, 20_000),
            (SettingId(0xf0), 1),
            (SettingId::MAX_FRAME_SIZE, 30_000),
        ]),
        peer.now,
    );
    assert_eq!(evs, [Ev::Settings]);
    assert_eq!(conn.peer_settings().max_frame_size, 30_000);
    assert_eq!(drain(&mut conn)[0].head.flags, flags::ACK);
}
