//! Table rows: a server fed a client's frames (and a client fed a server's), every split.

use bytes::Bytes;

use super::harness::{Out, c, close_out, conn, frame, out, run_all};
use crate::ws::close_code::CloseCode;
use crate::ws::config::Config;
use crate::ws::conn::{Event, Role, State};
use crate::ws::error::Error;
use crate::ws::frame::Opcode;
use crate::ws::limits::Limits;

fn cat(frames: &[Vec<u8>]) -> Vec<u8> {
    frames.concat()
}

fn text(s: &str) -> Event {
    Event::Text(Bytes::copy_from_slice(s.as_bytes()))
}

fn binary(b: &[u8]) -> Event {
    Event::Binary(Bytes::copy_from_slice(b))
}

fn ping(b: &[u8]) -> Event {
    Event::Ping(Bytes::copy_from_slice(b))
}

fn closed(code: u16, reason: &str) -> Event {
    Event::Close { code: CloseCode::from(code), reason: Bytes::copy_from_slice(reason.as_bytes()) }
}

fn failed(e: Error) -> (Vec<Event>, Vec<Out>, State) {
    (vec![Event::Error(e)], vec![close_out(e.close_code().get(), e.reason())], State::Closed)
}

struct Case {
    name: &'static str,
    input: Vec<u8>,
    expect: (Vec<Event>, Vec<Out>, State),
}

fn check(cases: Vec<Case>, make: impl Fn() -> crate::ws::Conn) {
    for case in cases {
        let t = run_all(&make, &case.input);
        let got = (t.events, t.written, t.state);
        assert_eq!(got, case.expect, "{}", case.name);
    }
}

/// RFC 6455 §5: what a server accepts and refuses from a client.
#[test]
fn a_server_reads_a_clients_frames() {
    let open = State::Open;
    let big_ping = vec![b'p'; 125];
    let cases = vec![
        Case {
            name: "text",
            input: c(1, true, b"Hello"),
            expect: (vec![text("Hello")], vec![], open),
        },
        Case {
            name: "binary",
            input: c(2, true, &[0, 1, 2, 255]),
            expect: (vec![binary(&[0, 1, 2, 255])], vec![], open),
        },
        Case { name: "empty text", input: c(1, true, b""), expect: (vec![text("")], vec![], open) },
        Case {
            name: "two messages",
            input: cat(&[c(1, true, b"a"), c(2, true, b"b")]),
            expect: (vec![text("a"), binary(b"b")], vec![], open),
        },
        Case {
            name: "fragmented text (RFC 6455 §5.7)",
            input: cat(&[c(1, false, b"Hel"), c(0, true, b"lo")]),
            expect: (vec![text("Hello")], vec![], open),
        },
        Case {
            name: "fragments with empty ones",
            input: cat(&[c(2, false, b""), c(0, false, b"ab"), c(0, false, b""), c(0, true, b"")]),
            expect: (vec![binary(b"ab")], vec![], open),
        },
        Case {
            name: "a ping inside a fragmented message, answered at once",
            input: cat(&[c(1, false, b"Hel"), c(9, true, b"x"), c(0, true, b"lo")]),
            expect: (vec![ping(b"x"), text("Hello")], vec![out(Opcode::Pong, b"x")], open),
        },
        Case {
            name: "a 125-octet ping",
            input: c(9, true, &big_ping),
            expect: (vec![ping(&big_ping)], vec![out(Opcode::Pong, &big_ping)], open),
        },
        Case {
            name: "pings coalesced: only the latest is answered (§5.5.3)",
            input: cat(&[c(9, true, b"1"), c(9, true, b"2")]),
            expect: (vec![ping(b"1"), ping(b"2")], vec![out(Opcode::Pong, b"2")], open),
        },
        Case {
            name: "a pong",
            input: c(10, true, b"p"),
            expect: (vec![Event::Pong(Bytes::from_static(b"p"))], vec![], open),
        },
        Case {
            name: "a code point split across fragments",
            input: cat(&[c(1, false, b"\xe2\x82"), c(0, true, b"\xac")]),
            expect: (vec![text("\u{20ac}")], vec![], open),
        },
        // The closing handshake.
        Case {
            name: "close with code and reason, echoed",
            input: c(8, true, b"\x03\xe8bye"),
            expect: (vec![closed(1000, "bye")], vec![close_out(1000, "")], State::Closed),
        },
        Case {
            name: "close without payload, echoed without",
            input: c(8, true, b""),
            expect: (
                vec![closed(1005, "")],
                vec![Out { opcode: Opcode::Close, fin: true, rsv1: false, payload: vec![] }],
                State::Closed,
            ),
        },
        Case {
            name: "nothing is read after the close",
            input: cat(&[c(8, true, b"\x0f\xa0"), c(1, true, b"late"), b"\xff\xff".to_vec()]),
            expect: (vec![closed(4000, "")], vec![close_out(4000, "")], State::Closed),
        },
        Case {
            name: "a close inside a fragmented message",
            input: cat(&[c(1, false, b"Hel"), c(8, true, b"\x03\xe9")]),
            expect: (vec![closed(1001, "")], vec![close_out(1001, "")], State::Closed),
        },
        Case {
            name: "a 1-octet close payload",
            input: c(8, true, b"\x03"),
            expect: failed(Error::BadClosePayload),
        },
        Case {
            name: "close code 1005 on the wire",
            input: c(8, true, b"\x03\xed"),
            expect: failed(Error::InvalidCloseCode),
        },
        Case {
            name: "close code 999",
            input: c(8, true, b"\x03\xe7"),
            expect: failed(Error::InvalidCloseCode),
        },
        Case {
            name: "close reason not UTF-8",
            input: c(8, true, b"\x03\xe8\xc0\xaf"),
            expect: failed(Error::InvalidUtf8),
        },
        // Framing violations (1002).
        Case {
            name: "unmasked client frame",
            input: frame(Role::Server, 1, true, false, b"hi"),
            expect: failed(Error::Unmasked),
        },
        Case {
            name: "reserved opcode",
            input: c(3, true, b""),
            expect: failed(Error::UnknownOpcode),
        },
        Case {
            name: "RSV1 without deflate",
            input: frame(Role::Client, 1, true, true, b"x"),
            expect: failed(Error::ReservedBits),
        },
        Case {
            name: "fragmented ping",
            input: c(9, false, b""),
            expect: failed(Error::FragmentedControl),
        },
        Case {
            name: "126-octet ping",
            input: c(9, true, &[b'p'; 126]),
            expect: failed(Error::ControlTooLong),
        },
        Case {
            name: "continuation without a message",
            input: c(0, true, b"x"),
            expect: failed(Error::UnexpectedContinuation),
        },
        Case {
            name: "a new message inside a fragmented one",
            input: cat(&[c(1, false, b"a"), c(1, true, b"b")]),
            expect: failed(Error::ExpectedContinuation),
        },
        Case {
            name: "2^63 length",
            input: b"\x82\xff\x80\x00\x00\x00\x00\x00\x00\x00".to_vec(),
            expect: failed(Error::BadLength),
        },
        Case {
            name: "2^62 length, over the frame limit (1009), before any payload",
            input: b"\x82\xff\x40\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03\x04".to_vec(),
            expect: failed(Error::FrameTooBig),
        },
        // Text that is not UTF-8 (1007).
        Case {
            name: "invalid text",
            input: c(1, true, b"\xce\xba\xff"),
            expect: failed(Error::InvalidUtf8),
        },
        Case {
            name: "text ending inside a code point",
            input: c(1, true, b"a\xe2\x82"),
            expect: failed(Error::InvalidUtf8),
        },
        Case {
            name: "a surrogate split across fragments fails before the message ends",
            input: cat(&[c(1, false, b"ok\xed"), c(0, false, b"\xa0\x80 and more")]),
            expect: failed(Error::InvalidUtf8),
        },
        Case {
            name: "a message ending inside a code point",
            input: cat(&[c(1, false, b"ok\xe2"), c(0, true, b"\x82")]),
            expect: failed(Error::InvalidUtf8),
        },
    ];
    check(cases, || conn(Role::Server, Config::default(), None));
}

/// A client reads a server's unmasked frames and refuses masked ones.
#[test]
fn a_client_reads_a_servers_frames() {
    let s = |op, fin, p: &[u8]| frame(Role::Server, op, fin, false, p);
    let cases = vec![
        Case {
            name: "text",
            input: s(1, true, b"hi"),
            expect: (vec![text("hi")], vec![], State::Open),
        },
        Case {
            name: "ping answered with a masked pong",
            input: s(9, true, b"x"),
            expect: (vec![ping(b"x")], vec![out(Opcode::Pong, b"x")], State::Open),
        },
        Case {
            name: "close echoed, masked",
            input: s(8, true, b"\x03\xe8"),
            expect: (vec![closed(1000, "")], vec![close_out(1000, "")], State::Closed),
        },
        Case {
            name: "masked server frame",
            input: c(1, true, b"hi"),
            expect: failed(Error::Masked),
        },
    ];
    check(cases, || conn(Role::Client, Config::default(), None));
}

/// The size and count limits, decided as early as the octets allow.
#[test]
fn limits_on_frames_messages_and_fragments() {
    let limits = Limits {
        max_frame_size: 100,
        max_message_size: 150,
        max_fragments: 4,
        ..Limits::default()
    };
    let config = Config { limits, ..Config::default() };
    let cases = vec![
        Case {
            name: "a frame at the limit",
            input: c(2, true, &[0; 100]),
            expect: (vec![binary(&[0; 100])], vec![], State::Open),
        },
        Case {
            name: "a frame over the limit",
            input: c(2, true, &[0; 101]),
            expect: failed(Error::FrameTooBig),
        },
        Case {
            name: "a message over the limit fails at the frame that passes it",
            input: cat(&[c(2, false, &[0; 100]), c(0, false, &[0; 51])]),
            expect: failed(Error::MessageTooBig),
        },
        Case {
            name: "four fragments pass, a fifth does not (1008)",
            input: cat(&[
                c(2, false, b"a"),
                c(0, false, b"b"),
                c(0, false, b"c"),
                c(0, false, b"d"),
                c(0, true, b"e"),
            ]),
            expect: failed(Error::TooManyFragments),
        },
        Case {
            name: "control frames do not count as fragments",
            input: cat(&[
                c(2, false, b"a"),
                c(9, true, b""),
                c(0, false, b"b"),
                c(10, true, b""),
                c(0, false, b"c"),
                c(0, true, b"d"),
            ]),
            expect: (
                vec![ping(b""), Event::Pong(Bytes::new()), binary(b"abcd")],
                vec![out(Opcode::Pong, b"")],
                State::Open,
            ),
        },
    ];
    check(cases, || conn(Role::Server, config.clone(), None));
}
