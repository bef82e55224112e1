//! The unidirectional streams and the control stream: table rows of what the peer sends (at
//! every split) and what we answer.

use super::*;
use crate::http2::hpack::FieldList;
use crate::http3::qpack::Section;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

struct Case {
    why: &'static str,
    role: Role,
    /// `(stream, bytes, fin)`; a stream of `u64::MAX - n` means "reset stream n".
    steps: &'static [(u64, &'static str, bool)],
    expect: Result<Vec<Event>, Code>,
}

const RESET: u64 = 1 << 63;

fn run(c: &Case, config: Config, split: usize) -> Result<Vec<Event>, Code> {
    let mut conn = Conn::new(c.role, config);
    let mut events = Vec::new();
    for &(stream, bytes, fin) in c.steps {
        let r = if stream & RESET != 0 {
            conn.reset_uni(StreamId::new(stream & !RESET))
        } else {
            let bytes = hex(bytes);
            let chunks: Vec<&[u8]> =
                if bytes.is_empty() { vec![&[]] } else { bytes.chunks(split).collect() };
            let last = chunks.len() - 1;
            chunks
                .iter()
                .enumerate()
                .try_for_each(|(k, b)| conn.recv_uni(StreamId::new(stream), b, fin && k == last))
        };
        while let Some(e) = conn.poll_event() {
            events.push(e);
        }
        r.map_err(|e| {
            assert!(e.is_connection());
            e.code()
        })?;
    }
    Ok(events)
}

#[test]
fn control_and_uni_streams() {
    let goaway = Event::GoAway;
    let stop = |s| Event::StopSending(StreamId::new(s), Code::H3_STREAM_CREATION_ERROR);
    let cases = [
        Case {
            why: "empty SETTINGS",
            role: Role::Server,
            steps: &[(2, "00 0400", false)],
            expect: Ok(vec![Event::Settings]),
        },
        Case {
            why: "first frame GOAWAY",
            role: Role::Server,
            steps: &[(2, "00 0701 00", false)],
            expect: Err(Code::H3_MISSING_SETTINGS),
        },
        Case {
            why: "first frame unknown",
            role: Role::Server,
            steps: &[(2, "00 2100", false)],
            expect: Err(Code::H3_MISSING_SETTINGS),
        },
        Case {
            why: "second SETTINGS",
            role: Role::Server,
            steps: &[(2, "00 0400 0400", false)],
            expect: Err(Code::H3_FRAME_UNEXPECTED),
        },
        Case {
            why: "DATA on control",
            role: Role::Server,
            steps: &[(2, "00 0400 0000", false)],
            expect: Err(Code::H3_FRAME_UNEXPECTED),
        },
        Case {
            why: "HEADERS on control",
            role: Role::Server,
            steps: &[(2, "00 0400 0100", false)],
            expect: Err(Code::H3_FRAME_UNEXPECTED),
        },
        Case {
            why: "HTTP/2 PRIORITY",
            role: Role::Server,
            steps: &[(2, "00 0400 0200", false)],
            expect: Err(Code::H3_FRAME_UNEXPECTED),
        },
        Case {
            why: "HTTP/2 setting",
            role: Role::Server,
            steps: &[(2, "00 0402 0205", false)],
            expect: Err(Code::H3_SETTINGS_ERROR),
        },
        Case {
            why: "duplicate setting",
            role: Role::Server,
            steps: &[(2, "00 0404 0100 0100", false)],
            expect: Err(Code::H3_SETTINGS_ERROR),
        },
        Case {
            why: "SETTINGS cut short",
            role: Role::Server,
            steps: &[(2, "00 0401 01", false)],
            expect: Err(Code::H3_FRAME_ERROR),
        },
        Case {
            why: "SETTINGS too long",
            role: Role::Server,
            steps: &[(2, "00 04 4401", false)],
            expect: Err(Code::H3_EXCESSIVE_LOAD),
        },
        Case {
            why: "second control stream",
            role: Role::Server,
            steps: &[(2, "00 0400", false), (6, "00", false)],
            expect: Err(Code::H3_STREAM_CREATION_ERROR),
        },
        Case {
            why: "second encoder stream",
            role: Role::Server,
            steps: &[(2, "02", false), (6, "02", false)],
            expect: Err(Code::H3_STREAM_CREATION_ERROR),
        },
        Case {
            why: "second decoder stream",
            role: Role::Server,
            steps: &[(2, "03", false), (6, "03", false)],
            expect: Err(Code::H3_STREAM_CREATION_ERROR),
        },
        Case {
            why: "control stream ends",
            role: Role::Server,
            steps: &[(2, "00 0400", true)],
            expect: Err(Code::H3_CLOSED_CRITICAL_STREAM),
        },
        Case {
            why: "encoder stream ends",
            role: Role::Server,
            steps: &[(2, "02", true)],
            expect: Err(Code::H3_CLOSED_CRITICAL_STREAM),
        },
        Case {
            why: "control stream reset",
            role: Role::Server,
            steps: &[(2, "00", false), (RESET | 2, "", false)],
            expect: Err(Code::H3_CLOSED_CRITICAL_STREAM),
        },
        Case {
            why: "untyped stream reset",
            role: Role::Server,
            steps: &[(2, "40", false), (RESET | 2, "", false)],
            expect: Ok(vec![]),
        },
        Case {
            why: "untyped stream ends",
            role: Role::Server,
            steps: &[(2, "40", true), (6, "00 0400", false)],
            expect: Ok(vec![Event::Settings]),
        },
        Case {
            why: "push stream to a server",
            role: Role::Server,
            steps: &[(2, "01", false)],
            expect: Err(Code::H3_STREAM_CREATION_ERROR),
        },
        Case {
            why: "push stream to a client",
            role: Role::Client,
            steps: &[(3, "01 00", false)],
            expect: Err(Code::H3_ID_ERROR),
        },
        Case {
            why: "reserved stream type",
            role: Role::Server,
            steps: &[(2, "21 ffff", false), (6, "4041", false)],
            expect: Ok(vec![stop(2), stop(6)]),
        },
        Case {
            why: "GOAWAY to a client",
            role: Role::Client,
            steps: &[(3, "00 0400 0701 08 0701 04", false)],
            expect: Ok(vec![Event::Settings, goaway(8), goaway(4)]),
        },
        Case {
            why: "GOAWAY increases",
            role: Role::Client,
            steps: &[(3, "00 0400 0701 04 0701 08", false)],
            expect: Err(Code::H3_ID_ERROR),
        },
        Case {
            why: "GOAWAY not a request stream",
            role: Role::Client,
            steps: &[(3, "00 0400 0701 02", false)],
            expect: Err(Code::H3_ID_ERROR),
        },
        Case {
            why: "GOAWAY with a push ID",
            role: Role::Server,
            steps: &[(2, "00 0400 0701 03", false)],
            expect: Ok(vec![Event::Settings, goaway(3)]),
        },
        Case {
            why: "GOAWAY too long",
            role: Role::Server,
            steps: &[(2, "00 0400 0709", false)],
            expect: Err(Code::H3_FRAME_ERROR),
        },
        Case {
            why: "GOAWAY with two integers",
            role: Role::Server,
            steps: &[(2, "00 0400 0702 0000", false)],
            expect: Err(Code::H3_FRAME_ERROR),
        },
        Case {
            why: "MAX_PUSH_ID to a server",
            role: Role::Server,
            steps: &[(2, "00 0400 0d01 05", false)],
            expect: Ok(vec![Event::Settings]),
        },
        Case {
            why: "MAX_PUSH_ID to a client",
            role: Role::Client,
            steps: &[(3, "00 0400 0d01 05", false)],
            expect: Err(Code::H3_FRAME_UNEXPECTED),
        },
        Case {
            why: "CANCEL_PUSH",
            role: Role::Server,
            steps: &[(2, "00 0400 0301 00", false)],
            expect: Err(Code::H3_ID_ERROR),
        },
        Case {
            why: "ignored frames",
            role: Role::Server,
            steps: &[(2, "00 0400 2103 aabbcc 4040 00 21 00", false)],
            expect: Ok(vec![Event::Settings]),
        },
        Case {
            why: "ignored frames past the budget",
            role: Role::Server,
            steps: &[(2, "00 0400 2100 2100 2100 2100", false)],
            expect: Err(Code::H3_EXCESSIVE_LOAD),
        },
        Case {
            why: "bad encoder stream",
            role: Role::Server,
            steps: &[(2, "02 3fe13f", false)],
            expect: Err(Code::QPACK_ENCODER_STREAM_ERROR),
        },
        Case {
            why: "bad decoder stream",
            role: Role::Server,
            steps: &[(2, "03 00", false)],
            expect: Err(Code::QPACK_DECODER_STREAM_ERROR),
        },
    ];
    let config = Config { max_ignored_frames: 3, ..Config::default() };
    for c in &cases {
        let expect = c.expect.clone();
        for split in [usize::MAX, 1, 2, 3] {
            assert_eq!(run(c, config, split), expect, "{} (split {split})", c.why);
        }
    }
}

#[test]
fn unknown_streams_have_a_budget() {
    let config = Config { max_unknown_streams: 3, ..Config::default() };
    let mut conn = Conn::new(Role::Server, config);
    for k in 0..3 {
        conn.recv_uni(StreamId::new(2 + 4 * k), &[0x21], false).unwrap();
    }
    let e = conn.recv_uni(StreamId::new(14), &[0x21], false).unwrap_err();
    assert_eq!(e.code(), Code::H3_EXCESSIVE_LOAD);
}

/// Cancelled requests: a burst, then the rate; a budget spent is H3_EXCESSIVE_LOAD, and time
/// earns the peer its allowance back.
#[test]
fn cancelled_requests_have_a_budget() {
    use std::time::{Duration, Instant};

    use crate::http2::Rate;
    let t0 = Instant::now();
    let ms = Duration::from_millis;
    struct Row {
        why: &'static str,
        /// Cancels at each offset from `t0`, in order.
        at: &'static [u64],
        /// How many are allowed before the error (all when `None`).
        fails_at: Option<usize>,
    }
    let rows = [
        Row { why: "the burst at once", at: &[0, 0, 0, 0], fails_at: None },
        Row { why: "one past the burst at once", at: &[0, 0, 0, 0, 0], fails_at: Some(4) },
        Row {
            why: "the rate refills (10/s: one per 100 ms)",
            at: &[0, 0, 0, 0, 100, 200],
            fails_at: None,
        },
        Row { why: "faster than the rate", at: &[0, 0, 0, 0, 100, 150], fails_at: Some(5) },
    ];
    for row in &rows {
        let config = Config { rapid_reset: Rate { burst: 4, per_second: 10 }, ..Config::default() };
        let mut conn = Conn::new(Role::Server, config);
        let failed = row.at.iter().position(|&t| conn.peer_cancelled(t0 + ms(t)).is_err());
        assert_eq!(failed, row.fails_at, "{}", row.why);
        if failed.is_some() {
            let e = conn.peer_cancelled(t0 + ms(*row.at.last().unwrap())).unwrap_err();
            assert!(e.is_connection() && e.code() == Code::H3_EXCESSIVE_LOAD, "{}", row.why);
        }
    }
}

#[test]
fn our_streams_open_with_their_types_and_settings() {
    let mut conn = Conn::new(Role::Client, Config::default());
    let mut out = Vec::new();
    conn.poll_control(&mut out);
    // Control, SETTINGS: capacity 4,096, blocked 16, field section 65,536.
    assert_eq!(out, hex("00 040a 01 5000 07 10 06 80010000"));
    conn.send_goaway(0);
    out.clear();
    conn.poll_control(&mut out);
    assert_eq!(out, hex("0701 00"));
    out.clear();
    conn.poll_encoder_stream(&mut out);
    assert_eq!(out, hex("02"), "no capacity set before the peer's SETTINGS");
    out.clear();
    conn.poll_decoder_stream(&mut out);
    assert_eq!(out, hex("03"));
}

/// Two connections joined stream to stream: SETTINGS both ways, then a request's field
/// section with dynamic-table entries, decoded and acknowledged.
#[test]
fn two_connections_exchange_settings_and_qpack() {
    let mut client = Conn::new(Role::Client, Config::default());
    let mut server = Conn::new(Role::Server, Config::default());
    // Client uni streams 2, 6, 10; server's 3, 7, 11.
    let pump = |from: &mut Conn, to: &mut Conn, base: u64| {
        let mut b = Vec::new();
        from.poll_control(&mut b);
        to.recv_uni(StreamId::new(base), &b, false).unwrap();
        b.clear();
        from.poll_encoder_stream(&mut b);
        to.recv_uni(StreamId::new(base + 4), &b, false).unwrap();
        b.clear();
        from.poll_decoder_stream(&mut b);
        to.recv_uni(StreamId::new(base + 8), &b, false).unwrap();
    };
    pump(&mut client, &mut server, 2);
    pump(&mut server, &mut client, 3);
    assert_eq!(server.poll_event(), Some(Event::Settings));
    assert_eq!(client.poll_event(), Some(Event::Settings));
    let fields: [(&[u8], &[u8], bool); 3] =
        [(b":method", b"GET", false), (b":path", b"/x", false), (b"x-trace", b"abc", false)];
    let mut section = Vec::new();
    client.encoder.encode(StreamId::new(0), fields, &mut section);
    assert!(client.encoder.insert_count() > 0);
    pump(&mut client, &mut server, 2);
    let mut list = FieldList::new(1 << 16);
    assert_eq!(
        server.decoder.decode_section(StreamId::new(0), &section, &mut list),
        Ok(Section::Decoded)
    );
    assert_eq!(list.len(), 3);
    pump(&mut server, &mut client, 3);
    assert_eq!(client.encoder.known_received_count(), client.encoder.insert_count());
}
