//! Hostile peers: what they cost stays bounded, and each is stopped as early as the octets
//! allow.

use std::time::Instant;

use bytes::BytesMut;

use super::harness::{c, conn, frame};
use crate::ws::config::Config;
use crate::ws::conn::{Event, Role, State};
use crate::ws::error::Error;

/// A 64 MiB message sent in 1-octet fragments meets the fragment limit (65,536 by default,
/// 1008) after 64 KiB: the assembly buffer never holds more.
#[test]
fn one_octet_fragments_meet_the_fragment_limit() {
    let mut conn = conn(Role::Server, Config::default(), None);
    let now = Instant::now();
    let mut input = BytesMut::new();
    input.extend_from_slice(&c(2, false, b"x"));
    let one = c(0, false, b"x");
    let mut sent = 1u64;
    let event = loop {
        input.extend_from_slice(&one);
        sent += 1;
        if let Some(e) = conn.recv(&mut input, now) {
            break e;
        }
        assert!(conn.buf.len() <= 65_536 && sent < 1 << 26);
    };
    assert_eq!(event, Event::Error(Error::TooManyFragments));
    assert_eq!(sent, 65_537);
    assert!(conn.is_closed());
}

/// A frame declaring 1 MiB of text whose first octets are not UTF-8 fails on them, before the
/// rest arrives; the same across fragments: a surrogate's second octet fails at once.
#[test]
fn invalid_text_fails_before_the_rest_arrives() {
    let now = Instant::now();
    let mut conn = conn(Role::Server, Config::default(), None);
    let whole = c(1, true, &[0xff; 1 << 20]);
    let mut input = BytesMut::from(&whole[..20]);
    assert_eq!(conn.recv(&mut input, now), Some(Event::Error(Error::InvalidUtf8)));

    let mut conn = super::harness::conn(Role::Server, Config::default(), None);
    let mut input = BytesMut::from(&c(1, false, b"abc\xed")[..]);
    assert_eq!(conn.recv(&mut input, now), None);
    let next = c(0, true, &[0xa0; 1000]);
    input.extend_from_slice(&next[..9]); // header (8) and one payload octet
    assert_eq!(conn.recv(&mut input, now), Some(Event::Error(Error::InvalidUtf8)));
}

/// A message in one frame is split off the caller's buffer: no copy.
#[test]
fn a_single_frame_message_is_the_inputs_own_octets() {
    let mut conn = conn(Role::Server, Config::default(), None);
    let mut input = BytesMut::from(&c(2, true, &[7; 1000])[..]);
    let base = input.as_ptr() as usize;
    let Some(Event::Binary(b)) = conn.recv(&mut input, Instant::now()) else { panic!() };
    assert_eq!(b.as_ptr() as usize, base + 8, "split off the input, after its header");
    assert!(input.is_empty());
}

/// The connection is small, and allocates nothing until a message needs a buffer.
#[test]
fn the_connection_is_small() {
    fn send<T: Send + Sync>() {}
    send::<crate::ws::Conn>();
    let size = std::mem::size_of::<crate::ws::Conn>();
    assert!(size <= 512, "{size}");
}

/// 100 MB of zeros compressed into one message: inflation stops at `max_message_size`
/// (1009), the assembly buffer within twice of it.
#[cfg(feature = "ws-deflate")]
#[test]
fn a_deflate_bomb_is_stopped_while_inflating() {
    use crate::ws::deflate::Compressor;
    use crate::ws::extension::DeflateParams;
    use crate::ws::limits::Limits;

    let mut comp = Compressor::new(9, 15, false);
    let zeros = vec![0u8; 1 << 20];
    let mut payload = Vec::new();
    for _ in 0..100 {
        payload.extend_from_slice(comp.compress(&zeros));
        payload.extend_from_slice(&[0, 0, 0xff, 0xff]);
    }
    let limits = Limits { max_message_size: 4 << 20, ..Limits::default() };
    let config = Config { limits, ..Config::default() };
    let mut conn = conn(Role::Server, config, Some(DeflateParams::default()));
    let wire = frame(Role::Client, 2, true, true, &payload);
    let mut input = BytesMut::new();
    let now = Instant::now();
    let mut got = None;
    for piece in wire.chunks(16 * 1024) {
        input.extend_from_slice(piece);
        if let Some(e) = conn.recv(&mut input, now) {
            got = Some(e);
            break;
        }
        assert!(conn.buf.capacity() <= 8 << 20, "{}", conn.buf.capacity());
    }
    assert_eq!(got, Some(Event::Error(Error::MessageTooBig)));
    assert_eq!(conn.state(), State::Closed);
}

/// RSV1 on a continuation frame, and on a control frame, with deflate in force (RFC 7692
/// §6.1); garbage that does not inflate (1007).
#[cfg(feature = "ws-deflate")]
#[test]
fn rsv1_only_on_a_messages_first_frame() {
    use crate::ws::extension::DeflateParams;
    let now = Instant::now();
    let run = |input: Vec<u8>| {
        let mut conn = conn(Role::Server, Config::default(), Some(DeflateParams::default()));
        let mut buf = BytesMut::from(&input[..]);
        let mut events = Vec::new();
        while let Some(e) = conn.recv(&mut buf, now) {
            events.push(e);
        }
        events
    };
    let cont = [
        frame(Role::Client, 2, false, true, b"\xf2\x48"),
        frame(Role::Client, 0, true, true, b"\xcd"),
    ];
    assert_eq!(run(cont.concat()), [Event::Error(Error::ReservedBits)]);
    assert_eq!(run(frame(Role::Client, 9, true, true, b"")), [Event::Error(Error::ReservedBits)]);
    assert_eq!(
        run(frame(Role::Client, 2, true, true, b"\xff\xff\xff")),
        [Event::Error(Error::Inflate)]
    );
    // RFC 7692 §7.2.3.1 and §7.2.3.2: "Hello" twice, the second a back-reference.
    let two = [
        frame(Role::Client, 1, true, true, b"\xf2\x48\xcd\xc9\xc9\x07\x00"),
        frame(Role::Client, 1, true, true, b"\xf2\x00\x11\x00\x00"),
    ];
    assert_eq!(run(two.concat()), [Event::Text("Hello".into()), Event::Text("Hello".into())]);
}

/// Fuzzer regression (`ws_conn`): a compressed text message whose inflated octets are not
/// UTF-8, followed by data that does not inflate, failed with 1007 `InvalidUtf8` when its
/// octets came in pieces but `Inflate` when whole: the output inflated before the error went
/// unvalidated. Every split now gives `InvalidUtf8`.
#[cfg(feature = "ws-deflate")]
#[test]
fn fuzz_the_error_of_a_compressed_text_does_not_depend_on_the_split() {
    use crate::ws::extension::DeflateParams;
    let input = b"\xc1\x87\x37\xfa\x21\x34\x3d\xcd\xcd\xcd\x01\x00\x00\x09\x37\xfa\x21\xfb\x01\xfd\x21\xc1\x85\x37\xfa\x21\xfb\x3d\xc5\xfa\x30\x3d\x37";
    let make = || conn(Role::Server, Config::default(), Some(DeflateParams::default()));
    let t = super::harness::run_all(make, input);
    assert_eq!(t.events, [Event::Error(Error::InvalidUtf8)]);
}
