//! Flow control through the connection (RFC 9113 §5.2, §6.9): both windows on receipt, the
//! release policy, sending under the peer's windows, SETTINGS_INITIAL_WINDOW_SIZE changes.

use super::wire::*;
use crate::http2::config::Config;
use crate::http2::error::Reason;
use crate::http2::frame::settings::SettingId;
use crate::http2::frame::{Kind, flags};
use crate::http2::stream_id::StreamId;

fn window_updates(out: &[Out]) -> Vec<(u32, u32)> {
    out.iter()
        .filter(|o| o.kind() == Kind::WINDOW_UPDATE)
        .map(|o| (o.head.stream.get(), u32::from_be_bytes(o.payload[..4].try_into().unwrap())))
        .collect()
}

#[test]
fn released_data_is_announced_at_half_the_window() {
    // Stream windows of 40,000 (announced from 20,000 released), the connection at 65,535
    // (from 32,768).
    let config =
        Config { initial_window_size: 40_000, connection_window_size: 65_535, ..Config::default() };
    let (mut conn, mut peer) = server_with(config, &[]);
    let id = StreamId::new(1);
    let mut input = peer.headers(1, false, &post(None));
    input.extend(data(1, false, &[7; 15_000]));
    feed(&mut conn, &input, peer.now);
    conn.release_capacity(id, 10_000);
    assert_eq!(window_updates(&drain(&mut conn)), [], "10,000 < 20,000");
    conn.release_capacity(id, 100_000);
    assert_eq!(window_updates(&drain(&mut conn)), [], "release capped at the 15,000 received");
    feed(&mut conn, &data(1, false, &[7; 5_000]), peer.now);
    conn.release_capacity(id, 5_000);
    assert_eq!(window_updates(&drain(&mut conn)), [(1, 20_000)]);
    // Padding counts, and is released at once, without the application.
    let mut padded = vec![255];
    padded.extend([0; 255]);
    for _ in 0..40 {
        feed(&mut conn, &raw(Kind::DATA, flags::PADDED, 1, &padded), peer.now);
    }
    // 20,000 + 40 * 256 = 30,240 released at the connection; 2,528 more make 32,768.
    feed(&mut conn, &data(1, false, &[1; 2_528]), peer.now);
    conn.release_capacity(id, 2_528);
    assert_eq!(window_updates(&drain(&mut conn)), [(0, 32_768)]);
}

#[test]
fn data_beyond_a_window_is_a_flow_control_error() {
    let config =
        Config { initial_window_size: 100, connection_window_size: 150, ..Config::default() };
    // Beyond the stream's window: stream error.
    let (mut conn, mut peer) = server_with(config.clone(), &[]);
    let input = [peer.headers(1, false, &post(None)), data(1, false, &[0; 101])].concat();
    let evs = feed(&mut conn, &input, peer.now);
    assert!(matches!(
        evs.last(),
        Some(Ev::Reset { stream: 1, reason: Reason::FLOW_CONTROL_ERROR, .. })
    ));
    assert_eq!(errors(&drain(&mut conn)), [rst(1, Reason::FLOW_CONTROL_ERROR)]);
    // Beyond the connection's: connection error. The connection window cannot start below
    // the 65,535 RFC 9113 §6.9.2 fixes; streams get 100,000 each here.
    let config = Config {
        initial_window_size: 100_000,
        connection_window_size: 65_535,
        ..Config::default()
    };
    let (mut conn, mut peer) = server_with(config, &[]);
    let mut input = peer.headers(1, false, &post(None));
    for _ in 0..4 {
        input.extend(data(1, false, &[0; 16_384]));
    }
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(evs.last(), Some(&closed(Reason::FLOW_CONTROL_ERROR)));
    // Three frames' octets were delivered before the fourth broke the window.
    let delivered: usize =
        evs.iter().map(|e| if let Ev::Data { data, .. } = e { data.len() } else { 0 }).sum();
    assert_eq!(delivered, 3 * 16_384);
}

#[test]
fn sending_respects_the_peers_windows_and_max_frame_size() {
    let (mut conn, mut peer) =
        server_with(Config::default(), &[(SettingId::INITIAL_WINDOW_SIZE, 1)]);
    feed(&mut conn, &peer.get(1), peer.now);
    let id = StreamId::new(1);
    conn.send_response(id, 200, [], false).unwrap();
    // h2spec 6.9.1: a window of 1 lets one octet through.
    assert_eq!(conn.send_data(id, b"hello", true), Ok(1));
    assert_eq!(conn.send_capacity(id), 0);
    assert_eq!(conn.send_data(id, b"ello", true), Ok(0));
    let out = drain(&mut conn);
    assert_eq!((out[1].kind(), out[1].head.flags, out[1].payload.len()), (Kind::DATA, 0, 1));
    assert!(conn.poll_event().is_none());
    // A WINDOW_UPDATE on the stream makes it writable.
    let evs = feed(&mut conn, &window_update(1, 100_000), peer.now);
    assert_eq!(evs, [Ev::Writable(1)]);
    // The connection window has 65,534 left; frames stop at 16,384.
    let body = vec![b'x'; 70_000];
    assert_eq!(conn.send_data(id, &body, true), Ok(65_534));
    let sizes: Vec<_> = drain(&mut conn).iter().map(|o| o.payload.len()).collect();
    assert_eq!(sizes, [16_384, 16_384, 16_384, 16_382]);
    let evs = feed(&mut conn, &window_update(0, 10_000), peer.now);
    assert_eq!(evs, [Ev::Writable(1)]);
    assert_eq!(conn.send_data(id, &body[65_534..], true), Ok(70_000 - 65_534));
    let out = drain(&mut conn);
    assert_eq!(out.last().unwrap().head.flags, flags::END_STREAM);
    assert_eq!(conn.active_streams(), (0, 0));
}

#[test]
fn data_written_in_place_frames_and_counts_as_copied_data_does() {
    // `send_data_with` (a file read straight into the frames) must put the same frames on the
    // wire as `send_data` with the same octets, under the same windows and frame size.
    struct Case {
        window: u32,
        len: usize,
        end_stream: bool,
        expect: usize,
    }
    let cases = [
        Case { window: 1, len: 5, end_stream: true, expect: 1 },
        Case { window: 100_000, len: 40_000, end_stream: true, expect: 40_000 },
        Case { window: 100_000, len: 40_000, end_stream: false, expect: 40_000 },
        // The connection window (65,535) stops it, in 16,384-octet frames.
        Case { window: 100_000, len: 70_000, end_stream: true, expect: 65_535 },
        Case { window: 100_000, len: 0, end_stream: true, expect: 0 },
    ];
    let body: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    for c in cases {
        let mut outs = Vec::new();
        for in_place in [false, true] {
            let (mut conn, mut peer) =
                server_with(Config::default(), &[(SettingId::INITIAL_WINDOW_SIZE, c.window)]);
            feed(&mut conn, &peer.get(1), peer.now);
            let id = StreamId::new(1);
            conn.send_response(id, 200, [], false).unwrap();
            drain(&mut conn);
            let sent = if in_place {
                let mut at = 0;
                conn.send_data_with(id, c.len, c.end_stream, |payload| {
                    payload.copy_from_slice(&body[at..at + payload.len()]);
                    at += payload.len();
                    true
                })
            } else {
                conn.send_data(id, &body[..c.len], c.end_stream)
            };
            assert_eq!(sent, Ok(c.expect), "len {} in place {in_place}", c.len);
            let frames: Vec<_> =
                drain(&mut conn).iter().map(|o| (o.head.flags, o.payload.clone())).collect();
            outs.push((frames, conn.send_capacity(id), conn.active_streams()));
        }
        assert!(outs[0] == outs[1], "len {}", c.len);
    }
    // A fill that fails queues nothing and uses no window.
    let (mut conn, mut peer) = server_with(Config::default(), &[]);
    feed(&mut conn, &peer.get(1), peer.now);
    let id = StreamId::new(1);
    conn.send_response(id, 200, [], false).unwrap();
    drain(&mut conn);
    let before = conn.send_capacity(id);
    let mut calls = 0;
    let failed = conn.send_data_with(id, 40_000, true, |_| {
        calls += 1;
        calls < 2
    });
    assert_eq!(failed, Err(crate::http2::SendError::FillFailed));
    assert!(drain(&mut conn).is_empty());
    assert_eq!(conn.send_capacity(id), before);
    assert_eq!(conn.send_data(id, b"still open", true), Ok(10));
}

#[test]
fn initial_window_size_changes_apply_to_open_streams_even_below_zero() {
    // h2spec 6.9.2: window 3, 3 octets sent, then the setting drops to 2 (window -1), then
    // WINDOW_UPDATE 2 lets exactly one octet through.
    let (mut conn, mut peer) =
        server_with(Config::default(), &[(SettingId::INITIAL_WINDOW_SIZE, 3)]);
    feed(&mut conn, &peer.get(1), peer.now);
    let id = StreamId::new(1);
    conn.send_response(id, 200, [], false).unwrap();
    assert_eq!(conn.send_data(id, b"hello", true), Ok(3));
    drain(&mut conn);
    feed(&mut conn, &settings_frame(&[(SettingId::INITIAL_WINDOW_SIZE, 2)]), peer.now);
    assert_eq!(conn.send_capacity(id), 0);
    let evs = feed(&mut conn, &window_update(1, 2), peer.now);
    assert_eq!(evs, [Ev::Writable(1)]);
    assert_eq!(conn.send_data(id, b"lo", true), Ok(1));
    // Raising the setting wakes blocked streams.
    let evs = feed(&mut conn, &settings_frame(&[(SettingId::INITIAL_WINDOW_SIZE, 100)]), peer.now);
    assert_eq!(evs, [Ev::Writable(1), Ev::Settings]);
    // A change that overflows a window: connection FLOW_CONTROL_ERROR.
    let (mut conn, mut peer) = server();
    feed(&mut conn, &[peer.get(1), window_update(1, 0x7fff_ffff - 65_535)].concat(), peer.now);
    let evs =
        feed(&mut conn, &settings_frame(&[(SettingId::INITIAL_WINDOW_SIZE, 65_536)]), peer.now);
    assert_eq!(evs, [closed(Reason::FLOW_CONTROL_ERROR)]);
}

#[test]
fn window_updates_past_two_to_the_31_are_errors_of_their_scope() {
    // h2spec 6.9.1: connection → GOAWAY FLOW_CONTROL_ERROR; stream → RST_STREAM.
    let (mut conn, peer) = server();
    feed(
        &mut conn,
        &[window_update(0, 0x7fff_ffff), window_update(0, 0x7fff_ffff)].concat(),
        peer.now,
    );
    assert_eq!(errors(&drain(&mut conn)), [goaway(Reason::FLOW_CONTROL_ERROR)]);
    let (mut conn, mut peer) = server();
    let input = [
        peer.headers(1, false, &post(None)),
        window_update(1, 0x7fff_ffff),
        window_update(1, 0x7fff_ffff),
    ]
    .concat();
    feed(&mut conn, &input, peer.now);
    assert_eq!(errors(&drain(&mut conn)), [rst(1, Reason::FLOW_CONTROL_ERROR)]);
    // Zero increments: stream error on a stream, connection error on stream 0.
    let (mut conn, mut peer) = server();
    feed(&mut conn, &[peer.get(1), window_update(1, 0)].concat(), peer.now);
    assert_eq!(errors(&drain(&mut conn)), [rst(1, Reason::PROTOCOL_ERROR)]);
    let (mut conn, peer) = server();
    feed(&mut conn, &window_update(0, 0), peer.now);
    assert_eq!(errors(&drain(&mut conn)), [goaway(Reason::PROTOCOL_ERROR)]);
}

#[test]
fn the_send_buffer_bound_blocks_streams_until_poll_transmit_drains_it() {
    let config = Config { max_send_buffer: 10_000, ..Config::default() };
    let (mut conn, mut peer) = server_with(config, &[]);
    feed(&mut conn, &[peer.get(1), peer.get(3)].concat(), peer.now);
    for id in [1, 3] {
        conn.send_response(StreamId::new(id), 200, [], false).unwrap();
    }
    let body = vec![0u8; 30_000];
    let a = conn.send_data(StreamId::new(1), &body, true).unwrap();
    assert!(a < 10_000, "{a}");
    assert_eq!(conn.send_data(StreamId::new(3), &body, true), Ok(0));
    assert!(conn.buffered() <= 10_000);
    drain(&mut conn);
    let mut woken = Vec::new();
    while let Some(e) = conn.poll_event() {
        woken.push(Ev::of(&e));
    }
    assert_eq!(woken, [Ev::Writable(1), Ev::Writable(3)]);
}
