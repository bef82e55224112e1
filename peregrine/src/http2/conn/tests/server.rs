//! Server conversations: the preface, requests and their validation, responses.

use std::time::Duration;

use super::wire::*;
use crate::http2::config::Config;
use crate::http2::conn::{Conn, HeaderBlock, HeadersKind, PREFACE, Role, SendError};
use crate::http2::error::Reason;
use crate::http2::frame::settings::SettingId;
use crate::http2::frame::{Kind, Settings, flags};
use crate::http2::stream_id::StreamId;

#[test]
fn a_server_sends_its_settings_and_grows_the_connection_window_at_once() {
    let peer = Peer::new();
    let mut conn = Conn::new(Role::Server, Config::default(), peer.now);
    let out = drain(&mut conn);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].kind(), Kind::SETTINGS);
    let s = Settings::decode(out[0].head, &out[0].payload).unwrap();
    let entries: Vec<_> = s.iter().collect();
    assert!(entries.contains(&(SettingId::MAX_CONCURRENT_STREAMS, 100)));
    assert!(entries.contains(&(SettingId::INITIAL_WINDOW_SIZE, 256 * 1024)));
    assert!(!entries.iter().any(|e| e.0 == SettingId::ENABLE_PUSH), "a server omits ENABLE_PUSH");
    assert_eq!(out[1].kind(), Kind::WINDOW_UPDATE);
    assert_eq!(out[1].payload, (1024 * 1024 - 65_535u32).to_be_bytes());
}

#[test]
fn the_preface_is_matched_in_any_split_and_its_settings_acknowledged() {
    let mut input = PREFACE.to_vec();
    input.extend(settings_frame(&[(SettingId::MAX_FRAME_SIZE, 20_000), (SettingId(0x99), 7)]));
    for cut in 0..input.len() {
        let peer = Peer::new();
        let mut conn = Conn::new(Role::Server, Config::default(), peer.now);
        drain(&mut conn);
        let evs = feed_pieces(&mut conn, &[&input[..cut], &input[cut..]], peer.now);
        assert_eq!(evs, [Ev::Settings], "cut {cut}");
        assert_eq!(conn.peer_settings().max_frame_size, 20_000);
        let out = drain(&mut conn);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].kind(), out[0].head.flags), (Kind::SETTINGS, flags::ACK));
    }
}

#[test]
fn a_bad_preface_or_a_first_frame_other_than_settings_is_a_protocol_error() {
    let cases: [Vec<u8>; 4] = [
        b"GET / HTTP/1.1\r\n\r\n".to_vec(),
        b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".to_vec(),
        [PREFACE.to_vec(), ping(false, [0; 8])].concat(),
        [PREFACE.to_vec(), settings_ack()].concat(),
    ];
    for input in cases {
        let peer = Peer::new();
        let mut conn = Conn::new(Role::Server, Config::default(), peer.now);
        drain(&mut conn);
        let evs = feed(&mut conn, &input, peer.now);
        assert_eq!(evs, [closed(Reason::PROTOCOL_ERROR)], "{input:?}");
        assert_eq!(errors(&drain(&mut conn)), [goaway(Reason::PROTOCOL_ERROR)]);
        assert!(conn.is_closed());
        // Input after the end is consumed and ignored.
        assert_eq!(conn.recv(b"anything", peer.now).0, 8);
    }
}

#[test]
fn unacknowledged_settings_time_out() {
    let peer = Peer::new();
    let mut conn = Conn::new(Role::Server, Config::default(), peer.now);
    let deadline = conn.poll_timeout().unwrap();
    assert_eq!(deadline, peer.now + Duration::from_secs(10));
    conn.handle_timeout(deadline - Duration::from_millis(1));
    assert!(!conn.is_closed());
    conn.handle_timeout(deadline);
    assert_eq!(feed(&mut conn, &[], deadline), [closed(Reason::SETTINGS_TIMEOUT)]);
    assert_eq!(errors(&drain(&mut conn)), [goaway(Reason::SETTINGS_TIMEOUT)]);
    // Acknowledged: no timer.
    let (conn, _) = server();
    assert_eq!(conn.poll_timeout(), None);
}

#[test]
fn a_response_block_resent_by_copy_decodes_as_the_encoded_one() {
    let (mut conn, mut peer) = server();
    feed(&mut conn, &[peer.get(1), peer.get(3), peer.get(5)].concat(), peer.now);
    let fields = [(&b"content-type"[..], &b"text/plain"[..])];
    // The first encoding inserts content-type into the table: its block is not reusable.
    conn.send_response(StreamId::new(1), 200, fields, true).unwrap();
    let mut block = HeaderBlock::new();
    assert!(!conn.keep_response_block(&mut block));
    assert!(!block.is_kept());
    // The second changes nothing: its bytes may be resent while the table holds.
    conn.send_response(StreamId::new(3), 200, fields, true).unwrap();
    assert!(conn.keep_response_block(&mut block));
    assert!(conn.can_send_block(&block));
    assert_eq!(conn.send_response_block(StreamId::new(5), &block, false), Ok(()));
    // A stream whose head went: no second head, by block or not.
    let again = conn.send_response_block(StreamId::new(5), &block, true);
    assert_eq!(again, Err(SendError::InvalidState));
    assert_eq!(conn.send_data(StreamId::new(5), b"hi", true), Ok(2));
    let out = drain(&mut conn);
    let expect: Vec<(String, String)> =
        vec![(":status".into(), "200".into()), ("content-type".into(), "text/plain".into())];
    for (i, flag) in [(0, flags::END_STREAM), (1, flags::END_STREAM), (2, 0)] {
        assert_eq!(out[i].kind(), Kind::HEADERS);
        assert_eq!(out[i].head.flags, flags::END_HEADERS | flag, "frame {i}");
        assert_eq!(peer.fields(&out[i]), expect, "frame {i}");
    }
    assert_eq!(out[1].payload, out[2].payload);
    assert_eq!(conn.active_streams(), (0, 0));
}

/// RFC 7541 §2.3.2: a block's bytes name entries of the table they were encoded against. The
/// connection refuses a kept block once its table changed, or one kept from another connection
/// at the same generation, and queues nothing: the head is then encoded again.
#[test]
fn a_stale_response_block_is_refused() {
    let (mut conn, mut peer) = server();
    feed(&mut conn, &[peer.get(1), peer.get(3), peer.get(5)].concat(), peer.now);
    let (mut other, mut other_peer) = server();
    feed(&mut other, &other_peer.get(1), other_peer.now);
    drain(&mut conn);
    // Fields the encoder does not index: the block changes no table and is kept.
    let plain = [(&b"etag"[..], &b"\"v1\""[..])];
    conn.send_response(StreamId::new(1), 200, plain, true).unwrap();
    let mut block = HeaderBlock::new();
    assert!(conn.keep_response_block(&mut block));
    // The same head on another connection, at the same generation: still not its block.
    other.send_response(StreamId::new(1), 200, plain, true).unwrap();
    assert_eq!(other.encoder_generation(), conn.encoder_generation());
    assert!(!other.can_send_block(&block));
    // A field the encoder indexes changes the table.
    conn.send_response(StreamId::new(3), 200, [(&b"content-type"[..], &b"text/plain"[..])], true)
        .unwrap();
    let queued = conn.buffered();
    assert!(!conn.can_send_block(&block));
    assert_eq!(
        conn.send_response_block(StreamId::new(5), &block, true),
        Err(SendError::StaleBlock)
    );
    assert_eq!(conn.buffered(), queued, "nothing queued");
    // The stream still takes its head, encoded again.
    conn.send_response(StreamId::new(5), 200, plain, true).unwrap();
    let out = drain(&mut conn);
    let expect: Vec<(String, String)> =
        vec![(":status".into(), "200".into()), ("etag".into(), "\"v1\"".into())];
    assert_eq!(peer.fields(&out[0]), expect);
    peer.fields(&out[1]);
    assert_eq!(peer.fields(&out[2]), expect);
}

#[test]
fn a_get_request_and_its_response() {
    let (mut conn, mut peer) = server();
    let evs = feed(&mut conn, &peer.get(1), peer.now);
    let [Ev::Headers { stream: 1, kind: HeadersKind::Request, end: true, fields }] = &evs[..]
    else {
        panic!("{evs:?}")
    };
    assert_eq!(fields[0], (":method".into(), "GET".into()));
    conn.send_response(StreamId::new(1), 200, [(&b"content-type"[..], &b"text/plain"[..])], false)
        .unwrap();
    assert_eq!(conn.send_data(StreamId::new(1), b"hello", true), Ok(5));
    let out = drain(&mut conn);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].head.flags, flags::END_HEADERS);
    assert_eq!(
        peer.fields(&out[0]),
        [(":status".into(), "200".into()), ("content-type".into(), "text/plain".into())]
    );
    assert_eq!(
        (out[1].kind(), out[1].head.flags, &out[1].payload[..]),
        (Kind::DATA, flags::END_STREAM, &b"hello"[..])
    );
    assert_eq!(conn.active_streams(), (0, 0));
}

#[test]
fn the_section_picks_out_pseudo_headers_and_regular_fields() {
    let (mut conn, mut peer) = server();
    let input = peer.headers(
        1,
        true,
        &[
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "a.example"),
            (":path", "/x?y"),
            ("accept", "*/*"),
        ],
    );
    let mut seen = false;
    let (_, ev) = conn.recv(&input, peer.now);
    if let Some(crate::http2::conn::Event::Headers { section, .. }) = ev {
        assert_eq!(section.method(), Some(&b"GET"[..]));
        assert_eq!(section.scheme(), Some(&b"https"[..]));
        assert_eq!(section.authority(), Some(&b"a.example"[..]));
        assert_eq!(section.path(), Some(&b"/x?y"[..]));
        assert_eq!(
            (section.protocol(), section.status(), section.content_length()),
            (None, None, None)
        );
        assert_eq!(section.fields().map(|f| f.name).collect::<Vec<_>>(), [&b"accept"[..]]);
        assert_eq!(section.len(), 1);
        seen = true;
    }
    assert!(seen);
}

#[test]
fn a_body_arrives_in_pieces_and_its_content_length_is_checked() {
    struct Case {
        cl: Option<&'static str>,
        frames: Vec<Vec<u8>>,
        ok: bool,
    }
    let cases = [
        Case {
            cl: Some("8"),
            frames: vec![data(1, false, b"abcd"), data(1, true, b"efgh")],
            ok: true,
        },
        Case { cl: None, frames: vec![data(1, false, b"abcd"), data(1, true, b"")], ok: true },
        Case { cl: Some("0"), frames: vec![data(1, true, b"")], ok: true },
        // h2spec 8.1.2.6: content-length differs from the DATA sum, one frame or several.
        Case { cl: Some("1"), frames: vec![data(1, true, b"test")], ok: false },
        Case {
            cl: Some("1"),
            frames: vec![data(1, false, b"test"), data(1, true, b"test")],
            ok: false,
        },
        Case {
            cl: Some("9"),
            frames: vec![data(1, false, b"abcd"), data(1, true, b"efgh")],
            ok: false,
        },
    ];
    for case in cases {
        let (mut conn, mut peer) = server();
        let mut input = peer.headers(1, false, &post(case.cl));
        for f in &case.frames {
            input.extend(f);
        }
        // Whole and byte by byte: the same events.
        let evs = feed(&mut conn, &input, peer.now);
        let (mut conn2, _) = server();
        let pieces: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(feed_pieces(&mut conn2, &pieces, peer.now), evs, "split");
        let out = drain(&mut conn);
        if case.ok {
            let body: Vec<u8> = case.frames.iter().flat_map(|f| f[9..].to_vec()).collect();
            assert_eq!(evs[1..], [Ev::Data { stream: 1, data: body, end: true }]);
            assert!(errors(&out).is_empty());
        } else {
            assert_eq!(errors(&out), [rst(1, Reason::PROTOCOL_ERROR)], "{:?}", case.cl);
            assert!(matches!(
                evs.last(),
                Some(Ev::Reset { stream: 1, reason: Reason::PROTOCOL_ERROR, by_peer: false, .. })
            ));
            // No DATA event carries octets past the error.
            let delivered: usize = evs
                .iter()
                .map(|e| if let Ev::Data { data, .. } = e { data.len() } else { 0 })
                .sum();
            assert!(delivered <= 4);
        }
    }
}

#[test]
fn a_request_head_with_end_stream_and_a_nonzero_content_length_is_malformed() {
    let (mut conn, mut peer) = server();
    let evs = feed(&mut conn, &peer.headers(1, true, &post(Some("3"))), peer.now);
    assert!(evs.is_empty());
    assert_eq!(errors(&drain(&mut conn)), [rst(1, Reason::PROTOCOL_ERROR)]);
}

#[test]
fn trailers_end_the_request_and_a_second_head_without_end_stream_is_malformed() {
    let (mut conn, mut peer) = server();
    let mut input = peer.headers(1, false, &post(Some("4")));
    input.extend(data(1, false, b"test"));
    input.extend(peer.headers(1, true, &[("x-checksum", "1")]));
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(evs.len(), 3);
    assert!(
        matches!(&evs[2], Ev::Headers { stream: 1, kind: HeadersKind::Trailers, end: true, fields } if fields[0].0 == "x-checksum")
    );
    // h2spec 8.1: a second HEADERS without END_STREAM.
    let (mut conn, mut peer) = server();
    let mut input = peer.headers(1, false, &post(None));
    input.extend(data(1, false, b"test"));
    input.extend(peer.headers(1, false, &[("x-test", "ok")]));
    feed(&mut conn, &input, peer.now);
    assert_eq!(errors(&drain(&mut conn)), [rst(1, Reason::PROTOCOL_ERROR)]);
    // Trailers with a pseudo-header, or short of the content-length.
    for (cl, trailers) in [(None, vec![(":path", "/")]), (Some("5"), vec![("x", "y")])] {
        let (mut conn, mut peer) = server();
        let mut input = peer.headers(1, false, &post(cl));
        input.extend(data(1, false, b"test"));
        input.extend(peer.headers(1, true, &trailers));
        feed(&mut conn, &input, peer.now);
        assert_eq!(errors(&drain(&mut conn)), [rst(1, Reason::PROTOCOL_ERROR)], "{trailers:?}");
    }
}

#[test]
fn malformed_requests_are_stream_errors_and_the_connection_goes_on() {
    let cases: Vec<Vec<(&str, &str)>> = vec![
        vec![(":scheme", "https"), (":path", "/")],
        vec![(":method", "GET"), (":scheme", "https"), (":path", "")],
        vec![(":method", "GET"), (":method", "GET"), (":scheme", "https"), (":path", "/")],
        vec![(":method", "GET"), (":scheme", "https"), (":path", "/"), ("X-TEST", "ok")],
        vec![(":method", "GET"), (":scheme", "https"), (":path", "/"), ("connection", "close")],
        vec![(":method", "GET"), (":scheme", "https"), (":path", "/"), ("te", "gzip")],
        vec![(":method", "GET"), (":scheme", "https"), (":path", "/"), (":status", "200")],
        vec![(":method", "GET"), ("x", "1"), (":scheme", "https"), (":path", "/")],
        vec![(":method", "GET"), (":scheme", "https"), (":path", "/"), (":undefined", "x")],
    ];
    for fields in cases {
        let (mut conn, mut peer) = server();
        let evs = feed(&mut conn, &peer.headers(1, true, &fields), peer.now);
        assert!(evs.is_empty(), "{fields:?}: {evs:?}");
        assert_eq!(errors(&drain(&mut conn)), [rst(1, Reason::PROTOCOL_ERROR)], "{fields:?}");
        // The connection works on: HPACK stayed in step.
        let evs = feed(&mut conn, &peer.get(3), peer.now);
        assert!(matches!(&evs[..], [Ev::Headers { stream: 3, .. }]), "{fields:?}: {evs:?}");
    }
}

#[test]
fn an_oversized_header_list_gets_431_and_the_stream_never_reaches_the_application() {
    let config = Config { max_header_list_size: 200, ..Config::default() };
    let (mut conn, mut peer) = server_with(config, &[]);
    let big = "x".repeat(300);
    let mut fields = post(None);
    fields.push(("x-big", big.as_str()));
    let mut input = peer.headers(1, false, &fields);
    input.extend(data(1, true, b"late"));
    let evs = feed(&mut conn, &input, peer.now);
    assert!(evs.is_empty(), "{evs:?}");
    let out = drain(&mut conn);
    assert_eq!(peer.fields(&out[0]), [(":status".into(), "431".into())]);
    assert_eq!(out[0].head.flags, flags::END_HEADERS | flags::END_STREAM);
    assert_eq!(errors(&out), [rst(1, Reason::NO_ERROR)]);
    // The late DATA was ignored (not an error), and the next request works.
    let evs = feed(&mut conn, &peer.get(3), peer.now);
    assert!(matches!(&evs[..], [Ev::Headers { stream: 3, .. }]));
}

#[test]
fn informational_then_final_response_then_trailers() {
    let (mut conn, mut peer) = server();
    feed(&mut conn, &peer.headers(1, false, &post(None)), peer.now);
    let id = StreamId::new(1);
    conn.send_informational(id, 100, []).unwrap();
    assert_eq!(conn.send_informational(id, 101, []), Err(crate::http2::SendError::InvalidStatus));
    assert_eq!(conn.send_response(id, 99, [], false), Err(crate::http2::SendError::InvalidStatus));
    assert_eq!(conn.send_data(id, b"x", false), Err(crate::http2::SendError::InvalidState));
    conn.send_response(id, 200, [], false).unwrap();
    assert_eq!(conn.send_response(id, 200, [], false), Err(crate::http2::SendError::InvalidState));
    conn.send_data(id, b"body", false).unwrap();
    conn.send_trailers(id, [(&b"grpc-status"[..], &b"0"[..])]).unwrap();
    assert_eq!(conn.send_data(id, b"x", false), Err(crate::http2::SendError::InvalidState));
    let out = drain(&mut conn);
    let kinds: Vec<_> = out.iter().map(|o| (o.kind(), o.head.flags)).collect();
    assert_eq!(
        kinds,
        [
            (Kind::HEADERS, flags::END_HEADERS),
            (Kind::HEADERS, flags::END_HEADERS),
            (Kind::DATA, 0),
            (Kind::HEADERS, flags::END_HEADERS | flags::END_STREAM)
        ]
    );
    assert_eq!(peer.fields(&out[0]), [(":status".into(), "100".into())]);
    assert_eq!(peer.fields(&out[3]), [("grpc-status".into(), "0".into())]);
    // The request is still open on the peer's side: the stream is half-closed (local).
    assert_eq!(conn.active_streams(), (0, 1));
    let evs = feed(&mut conn, &data(1, true, b""), peer.now);
    assert_eq!(evs, [Ev::Data { stream: 1, data: vec![], end: true }]);
    assert_eq!(conn.active_streams(), (0, 0));
}

#[test]
fn a_large_response_head_is_split_into_continuations() {
    let (mut conn, mut peer) = server();
    feed(&mut conn, &peer.get(1), peer.now);
    let big = "v".repeat(40_000);
    conn.send_response(StreamId::new(1), 200, [(&b"x-big"[..], big.as_bytes())], true).unwrap();
    let out = drain(&mut conn);
    assert_eq!(
        out.iter().map(|o| o.kind()).collect::<Vec<_>>(),
        [Kind::HEADERS, Kind::CONTINUATION, Kind::CONTINUATION]
    );
    assert!(out.iter().all(|o| o.payload.len() <= 16_384));
    let block: Vec<u8> = out.iter().flat_map(|o| o.payload.clone()).collect();
    peer.dec.decode(&block, &mut peer.list).unwrap();
    assert_eq!(peer.list.iter().nth(1).unwrap().value, big.as_bytes());
}

#[test]
fn responses_to_a_reset_stream_are_refused() {
    let (mut conn, mut peer) = server();
    let mut input = peer.headers(1, false, &post(None));
    input.extend(rst_stream(1, Reason::CANCEL));
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(
        evs[1],
        Ev::Reset { stream: 1, reason: Reason::CANCEL, by_peer: true, retryable: false }
    );
    assert_eq!(
        conn.send_response(StreamId::new(1), 200, [], true),
        Err(crate::http2::SendError::UnknownStream)
    );
    // Our own reset of a live stream: RST queued, no event.
    feed(&mut conn, &peer.headers(3, false, &post(None)), peer.now);
    conn.reset(StreamId::new(3), Reason::CANCEL);
    assert_eq!(errors(&drain(&mut conn)), [rst(3, Reason::CANCEL)]);
    assert!(conn.poll_event().is_none());
    assert_eq!(conn.active_streams(), (0, 0));
}

#[test]
fn h2c_upgrade_starts_with_stream_one_half_closed_remote() {
    let peer = Peer::new();
    // HTTP2-Settings: INITIAL_WINDOW_SIZE = 10.
    let payload = [0, 4, 0, 0, 0, 10];
    let mut conn = Conn::upgraded(Config::default(), &payload, peer.now).unwrap();
    assert_eq!(conn.peer_settings().initial_window_size, 10);
    assert!(Conn::upgraded(Config::default(), &payload[..5], peer.now).is_err());
    let mut input = PREFACE.to_vec();
    input.extend(settings_frame(&[]));
    assert_eq!(feed(&mut conn, &input, peer.now), [Ev::Settings]);
    drain(&mut conn);
    let one = StreamId::new(1);
    conn.send_response(one, 200, [], false).unwrap();
    assert_eq!(conn.send_data(one, b"0123456789abc", true), Ok(10), "the upgrade's settings apply");
    // Stream 1 is half-closed (remote): more DATA from the client is STREAM_CLOSED.
    let mut p = Peer::new();
    let evs = feed(&mut conn, &data(1, false, b"x"), p.now);
    assert_eq!(errors(&drain(&mut conn)), [rst(1, Reason::STREAM_CLOSED)]);
    assert!(matches!(evs[..], [Ev::Reset { stream: 1, reason: Reason::STREAM_CLOSED, .. }]));
    // The next request must use stream 3 or above.
    let evs = feed(&mut conn, &p.get(3), p.now);
    assert!(matches!(&evs[..], [Ev::Headers { stream: 3, .. }]));
}

#[test]
fn the_rest_of_a_data_frame_for_a_stream_the_application_reset_is_dropped() {
    let (mut conn, mut peer) = server();
    let input = [peer.headers(1, false, &post(None)), data(1, true, &[9; 1000])].concat();
    let (used, _) = conn.recv(&input, peer.now);
    let mut pos = used;
    // The first 100 octets of the DATA frame arrive; the application resets the stream.
    let head_end = input.len() - 1000;
    let (used, ev) = conn.recv(&input[pos..head_end + 100], peer.now);
    assert!(matches!(ev, Some(crate::http2::conn::Event::Data { .. })));
    pos += used;
    conn.reset(StreamId::new(1), Reason::CANCEL);
    let evs = feed(&mut conn, &input[pos..], peer.now);
    assert!(evs.is_empty(), "{evs:?}");
}

/// The GOAWAY frames in `out`, as (last-stream-id, reason).
fn goaways(out: &[Out]) -> Vec<(u32, Reason)> {
    out.iter()
        .filter(|o| o.kind() == Kind::GOAWAY)
        .map(|o| (u32::from_be_bytes(o.payload[..4].try_into().unwrap()), o.reason()))
        .collect()
}

#[test]
fn graceful_shutdown_sends_two_goaways_around_a_ping_and_ends_when_streams_finish() {
    let (mut conn, mut peer) = server();
    feed(&mut conn, &peer.get(1), peer.now);
    conn.shutdown(peer.now);
    let out = drain(&mut conn);
    assert_eq!(goaways(&out), [(0x7fff_ffff, Reason::NO_ERROR)]);
    let ping = out.iter().find(|o| o.kind() == Kind::PING).unwrap();
    assert_eq!(conn.poll_timeout(), Some(peer.now + Duration::from_secs(5)));
    // A request in flight before the client saw the first GOAWAY is still served.
    let evs = feed(&mut conn, &peer.get(3), peer.now);
    assert!(matches!(&evs[..], [Ev::Headers { stream: 3, .. }]));
    // The PING comes back: the second GOAWAY names the last stream accepted.
    let ack = raw(Kind::PING, flags::ACK, 0, &ping.payload);
    feed(&mut conn, &ack, peer.now);
    assert_eq!(goaways(&drain(&mut conn)), [(3, Reason::NO_ERROR)]);
    assert_eq!(conn.poll_timeout(), None);
    // Later streams are ignored, not answered.
    assert!(feed(&mut conn, &peer.get(5), peer.now).is_empty());
    assert!(errors(&drain(&mut conn)).is_empty());
    conn.send_response(StreamId::new(1), 204, [], true).unwrap();
    assert!(conn.poll_event().is_none());
    conn.send_response(StreamId::new(3), 204, [], true).unwrap();
    assert!(
        matches!(conn.poll_event(), Some(crate::http2::conn::Event::Closed(c)) if c.reason == Reason::NO_ERROR && !c.by_peer)
    );
    // Without the PING's answer, the timeout sends the second GOAWAY.
    let (mut conn, mut peer) = server();
    feed(&mut conn, &peer.get(1), peer.now);
    conn.shutdown(peer.now);
    drain(&mut conn);
    conn.handle_timeout(peer.now + Duration::from_secs(5));
    assert_eq!(goaways(&drain(&mut conn)), [(1, Reason::NO_ERROR)]);
}

#[test]
fn an_idle_server_shutting_down_closes_after_the_round_trip() {
    let (mut conn, peer) = server();
    conn.shutdown(peer.now);
    drain(&mut conn);
    let evs = feed(&mut conn, &ping(true, *b"h2-drain"), peer.now);
    assert_eq!(
        evs,
        [Ev::PingAck(*b"h2-drain"), Ev::Closed { reason: Reason::NO_ERROR, by_peer: false }]
    );
    assert_eq!(goaways(&drain(&mut conn)), [(0, Reason::NO_ERROR)]);
}

#[test]
fn go_away_ends_the_connection_at_once() {
    let (mut conn, mut peer) = server();
    feed(&mut conn, &peer.get(1), peer.now);
    conn.go_away(Reason::INTERNAL_ERROR, b"bye");
    assert_eq!(feed(&mut conn, &peer.get(3), peer.now), [closed(Reason::INTERNAL_ERROR)]);
    let out = drain(&mut conn);
    assert_eq!(goaways(&out), [(1, Reason::INTERNAL_ERROR)]);
    assert_eq!(&out[0].payload[8..], b"bye");
    assert!(conn.is_closed() && conn.poll_timeout().is_none());
}

#[test]
fn a_peer_goaway_without_streams_ends_the_connection() {
    // h2spec generic 3.8: the server must close after a client's GOAWAY.
    let (mut conn, peer) = server();
    let evs = feed(&mut conn, &goaway_frame(0, Reason::NO_ERROR, b"h2spec"), peer.now);
    assert_eq!(
        evs,
        [
            Ev::GoAway { last: 0, reason: Reason::NO_ERROR, debug: b"h2spec".to_vec() },
            Ev::Closed { reason: Reason::NO_ERROR, by_peer: true }
        ]
    );
    // Its debug data is borrowed from the frame buffer when the frame came split.
    let (mut conn, peer) = server();
    let frame = goaway_frame(0, Reason::ENHANCE_YOUR_CALM, b"split debug");
    let evs = feed_pieces(&mut conn, &[&frame[..12], &frame[12..]], peer.now);
    assert_eq!(
        evs[0],
        Ev::GoAway { last: 0, reason: Reason::ENHANCE_YOUR_CALM, debug: b"split debug".to_vec() }
    );
}
