//! Client conversations: requests, 1xx and final responses, HEAD and no-content rules, the
//! peer's stream limit, GOAWAY mid-request, push refused.

use super::wire::*;
use crate::http2::config::Config;
use crate::http2::conn::{Conn, HeadersKind, PREFACE, RequestHead, Role, SendError};
use crate::http2::error::Reason;
use crate::http2::frame::settings::SettingId;
use crate::http2::frame::{Kind, PushPromise, Settings, flags};
use crate::http2::stream_id::StreamId;

const HEAD: RequestHead<'static> = RequestHead {
    method: b"GET",
    scheme: b"https",
    authority: b"example.com",
    path: b"/index.html",
    protocol: None,
};

#[test]
fn a_client_starts_with_the_magic_and_settings_disabling_push() {
    let mut conn = Conn::new(Role::Client, Config::default(), Peer::new().now);
    let mut bytes = Vec::new();
    conn.poll_transmit(&mut bytes);
    assert!(bytes.starts_with(PREFACE));
    let head = crate::http2::frame::Head::parse(bytes[24..33].try_into().unwrap());
    let s = Settings::decode(head, &bytes[33..33 + head.len as usize]).unwrap();
    assert!(s.iter().any(|e| e == (SettingId::ENABLE_PUSH, 0)));
}

#[test]
fn request_then_informational_then_response_then_body() {
    let (mut conn, mut peer) = client();
    let id = conn.send_request(&HEAD, [(&b"accept"[..], &b"text/html"[..])], true).unwrap();
    assert_eq!(id, StreamId::new(1));
    let out = drain(&mut conn);
    assert_eq!(out[0].head.flags, flags::END_HEADERS | flags::END_STREAM);
    assert_eq!(
        peer.fields(&out[0]),
        [
            (":method".into(), "GET".into()),
            (":scheme".into(), "https".into()),
            (":authority".into(), "example.com".into()),
            (":path".into(), "/index.html".into()),
            ("accept".into(), "text/html".into())
        ]
    );
    let input = [
        peer.headers(1, false, &[(":status", "103"), ("link", "</s.css>")]),
        peer.headers(1, false, &[(":status", "200"), ("content-length", "5")]),
        data(1, true, b"hello"),
    ]
    .concat();
    let evs = feed(&mut conn, &input, peer.now);
    assert!(matches!(
        &evs[0],
        Ev::Headers { stream: 1, kind: HeadersKind::Informational, end: false, .. }
    ));
    assert!(matches!(
        &evs[1],
        Ev::Headers { stream: 1, kind: HeadersKind::Response, end: false, .. }
    ));
    assert_eq!(evs[2], Ev::Data { stream: 1, data: b"hello".to_vec(), end: true });
    assert_eq!(conn.active_streams(), (0, 0));
    assert_eq!(conn.send_request(&HEAD, [], true), Ok(StreamId::new(3)));
}

#[test]
fn response_message_rules() {
    // (request method, frames after the request, expected error)
    type Build = fn(&mut Peer) -> Vec<u8>;
    let cases: [(&[u8], Build, Option<Reason>); 7] = [
        // HEAD: a content-length without content is fine...
        (b"HEAD", |p| p.headers(1, true, &[(":status", "200"), ("content-length", "1234")]), None),
        // ...DATA with content is not.
        (
            b"HEAD",
            |p| {
                [
                    p.headers(1, false, &[(":status", "200"), ("content-length", "4")]),
                    data(1, true, b"body"),
                ]
                .concat()
            },
            Some(Reason::PROTOCOL_ERROR),
        ),
        (
            b"GET",
            |p| [p.headers(1, false, &[(":status", "204")]), data(1, true, b"x")].concat(),
            Some(Reason::PROTOCOL_ERROR),
        ),
        // 1xx with END_STREAM.
        (b"GET", |p| p.headers(1, true, &[(":status", "100")]), Some(Reason::PROTOCOL_ERROR)),
        // DATA before any response head.
        (b"GET", |_| data(1, true, b"x"), Some(Reason::PROTOCOL_ERROR)),
        // 101 is not HTTP/2.
        (b"GET", |p| p.headers(1, false, &[(":status", "101")]), Some(Reason::PROTOCOL_ERROR)),
        // Request pseudo-headers in a response.
        (
            b"GET",
            |p| p.headers(1, true, &[(":status", "200"), (":path", "/")]),
            Some(Reason::PROTOCOL_ERROR),
        ),
    ];
    for (method, build, expect) in cases {
        let (mut conn, mut peer) = client();
        let head = RequestHead { method, ..HEAD };
        conn.send_request(&head, [], true).unwrap();
        drain(&mut conn);
        let input = build(&mut peer);
        let evs = feed(&mut conn, &input, peer.now);
        let errs = errors(&drain(&mut conn));
        match expect {
            None => assert!(
                errs.is_empty() && matches!(evs.last(), Some(Ev::Headers { end: true, .. }))
            ),
            Some(r) => {
                assert_eq!(errs, [rst(1, r)], "{evs:?}");
                assert!(matches!(evs.last(), Some(Ev::Reset { stream: 1, by_peer: false, .. })));
            }
        }
    }
}

#[test]
fn the_peers_concurrency_limit_is_respected() {
    let (mut conn, _) = client_with(Config::default(), &[(SettingId::MAX_CONCURRENT_STREAMS, 2)]);
    assert!(conn.can_open_stream());
    conn.send_request(&HEAD, [], false).unwrap();
    conn.send_request(&HEAD, [], false).unwrap();
    assert!(!conn.can_open_stream());
    assert_eq!(conn.send_request(&HEAD, [], false), Err(SendError::StreamLimit));
    conn.reset(StreamId::new(1), Reason::CANCEL);
    assert!(conn.can_open_stream());
    assert_eq!(conn.send_request(&HEAD, [], false), Ok(StreamId::new(5)));
}

#[test]
fn goaway_mid_request_marks_the_unprocessed_streams_retryable() {
    let (mut conn, mut peer) = client();
    for _ in 0..3 {
        conn.send_request(&HEAD, [], true).unwrap();
    }
    drain(&mut conn);
    let input =
        [goaway_frame(1, Reason::NO_ERROR, b"bye"), peer.headers(1, true, &[(":status", "200")])]
            .concat();
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(evs[0], Ev::GoAway { last: 1, reason: Reason::NO_ERROR, debug: b"bye".to_vec() });
    let retry =
        Ev::Reset { stream: 3, reason: Reason::REFUSED_STREAM, by_peer: true, retryable: true };
    assert_eq!(evs[1], retry);
    assert_eq!(
        evs[2],
        Ev::Reset { stream: 5, reason: Reason::REFUSED_STREAM, by_peer: true, retryable: true }
    );
    assert!(matches!(
        &evs[3],
        Ev::Headers { stream: 1, kind: HeadersKind::Response, end: true, .. }
    ));
    // Stream 1 done and the peer going away: the connection is over.
    assert_eq!(evs[4], Ev::Closed { reason: Reason::NO_ERROR, by_peer: true });
    assert_eq!(evs.len(), 5);
    assert!(!conn.can_open_stream());
    assert_eq!(conn.send_request(&HEAD, [], true), Err(SendError::Closed));
}

#[test]
fn a_refused_stream_reset_is_retryable() {
    let (mut conn, peer) = client();
    conn.send_request(&HEAD, [], true).unwrap();
    let evs = feed(&mut conn, &rst_stream(1, Reason::REFUSED_STREAM), peer.now);
    assert_eq!(
        evs,
        [Ev::Reset { stream: 1, reason: Reason::REFUSED_STREAM, by_peer: true, retryable: true }]
    );
}

#[test]
fn push_and_server_initiated_streams_are_refused() {
    let (mut conn, mut peer) = client();
    conn.send_request(&HEAD, [], true).unwrap();
    drain(&mut conn);
    let mut pp = Vec::new();
    PushPromise {
        stream: StreamId::new(1),
        promised: StreamId::new(2),
        fragment: &peer.block(&GET),
        end_headers: true,
    }
    .encode(&mut pp);
    assert_eq!(feed(&mut conn, &pp, peer.now), [closed(Reason::PROTOCOL_ERROR)]);
    // HEADERS on an even stream, or ENABLE_PUSH=1 from a server.
    let (mut conn, mut peer) = client();
    assert_eq!(
        feed(&mut conn, &peer.headers(2, true, &[(":status", "200")]), peer.now),
        [closed(Reason::PROTOCOL_ERROR)]
    );
    let (mut conn, peer) = client();
    assert_eq!(
        feed(&mut conn, &settings_frame(&[(SettingId::ENABLE_PUSH, 1)]), peer.now),
        [closed(Reason::PROTOCOL_ERROR)]
    );
    // A server may not be the one to receive requests on a client connection.
    let (mut conn, _) = client();
    assert_eq!(conn.send_response(StreamId::new(1), 200, [], true), Err(SendError::WrongRole));
}

#[test]
fn a_request_body_and_trailers() {
    let (mut conn, mut peer) = client();
    let head = RequestHead { method: b"POST", ..HEAD };
    let id = conn.send_request(&head, [(&b"te"[..], &b"trailers"[..])], false).unwrap();
    assert_eq!(conn.send_data(id, b"part", false), Ok(4));
    conn.send_trailers(id, [(&b"x-sum"[..], &b"4"[..])]).unwrap();
    let out = drain(&mut conn);
    let kinds: Vec<_> = out.iter().map(|o| (o.kind(), o.head.flags)).collect();
    assert_eq!(
        kinds,
        [
            (Kind::HEADERS, flags::END_HEADERS),
            (Kind::DATA, 0),
            (Kind::HEADERS, flags::END_HEADERS | flags::END_STREAM)
        ]
    );
    assert_eq!(peer.fields(&out[0])[0], (":method".into(), "POST".into()));
    // CONNECT carries no :scheme or :path.
    let (mut conn, mut peer) = client();
    let connect = RequestHead { method: b"CONNECT", authority: b"example.com:443", ..HEAD };
    conn.send_request(&connect, [], false).unwrap();
    let out = drain(&mut conn);
    assert_eq!(
        peer.fields(&out[0]),
        [(":method".into(), "CONNECT".into()), (":authority".into(), "example.com:443".into())]
    );
}

#[test]
fn a_server_connection_and_a_client_connection_talk_in_any_split() {
    let now = Peer::new().now;
    let mut client = Conn::new(Role::Client, Config::default(), now);
    let mut server = Conn::new(Role::Server, Config::default(), now);
    let body = vec![b'z'; 100_000];
    let id = client.send_request(&RequestHead { method: b"POST", ..HEAD }, [], false).unwrap();
    let mut sent = client.send_data(id, &body, true).unwrap();
    let mut got = Vec::new();
    let mut done = false;
    for round in 0..50 {
        let mut wire = Vec::new();
        client.poll_transmit(&mut wire);
        let pieces: Vec<&[u8]> = wire.chunks(7 + round).collect();
        for ev in feed_pieces(&mut server, &pieces, now) {
            match ev {
                Ev::Data { stream, data, end } => {
                    server.release_capacity(StreamId::new(stream), data.len());
                    got.extend(data);
                    if end {
                        server.send_response(StreamId::new(stream), 200, [], true).unwrap();
                    }
                }
                Ev::Headers { kind: HeadersKind::Request, .. }
                | Ev::Settings
                | Ev::SettingsAcked => {}
                e => panic!("{e:?}"),
            }
        }
        let mut wire = Vec::new();
        server.poll_transmit(&mut wire);
        for ev in feed(&mut client, &wire, now) {
            match ev {
                Ev::Writable(_) => sent += client.send_data(id, &body[sent..], true).unwrap(),
                Ev::Headers { kind: HeadersKind::Response, end: true, .. } => done = true,
                Ev::Settings | Ev::SettingsAcked => {}
                e => panic!("{e:?}"),
            }
        }
        if done {
            break;
        }
    }
    assert!(done && got == body, "{} of {}", got.len(), body.len());
}

#[test]
fn a_connection_moves_between_threads() {
    fn send<T: Send>() {}
    send::<Conn>();
}

#[test]
fn repeated_blocks_decode_as_if_decoded_again() {
    let (mut conn, _) = client();
    for _ in 0..7 {
        conn.send_request(&HEAD, [], true).unwrap();
    }
    drain(&mut conn);
    let end = flags::END_HEADERS | flags::END_STREAM;
    // :status 200 and "x-a: 1" with incremental indexing: the same bytes twice insert twice
    // (the second time replayed from the list, not decoded).
    let inserting: &[u8] = b"\x88\x40\x03x-a\x011";
    let input = [
        raw(Kind::HEADERS, end, 1, inserting),
        raw(Kind::HEADERS, end, 3, inserting),
        // Index 63, the first insertion: there only if the repeat was decoded again.
        raw(Kind::HEADERS, end, 5, b"\x88\xbf"),
        // Indexed only: the second is a repeat, with the same fields.
        raw(Kind::HEADERS, end, 7, b"\x88\xbe"),
        raw(Kind::HEADERS, end, 9, b"\x88\xbe"),
        // Two :status fields: malformed, and malformed again when repeated.
        raw(Kind::HEADERS, end, 11, b"\x88\x88"),
        raw(Kind::HEADERS, end, 13, b"\x88\x88"),
    ]
    .concat();
    let evs = feed(&mut conn, &input, Peer::new().now);
    let heads: Vec<_> = evs
        .iter()
        .filter_map(|e| match e {
            Ev::Headers { stream, kind: HeadersKind::Response, fields, .. } => {
                Some((*stream, fields.clone()))
            }
            _ => None,
        })
        .collect();
    let ok = vec![(":status".to_owned(), "200".to_owned()), ("x-a".to_owned(), "1".to_owned())];
    let want: Vec<_> = [1, 3, 5, 7, 9].into_iter().map(|s| (s, ok.clone())).collect();
    assert_eq!(heads, want, "{evs:?}");
    assert_eq!(
        errors(&drain(&mut conn)),
        [rst(11, Reason::PROTOCOL_ERROR), rst(13, Reason::PROTOCOL_ERROR)]
    );
}
