//! The timers: the peer's Close after ours, keep-alive pings, the idle limit; and sends after
//! a Close.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;

use super::harness::{c, close_out, decode, out};
use crate::ws::close_code::CloseCode;
use crate::ws::config::Config;
use crate::ws::conn::{Conn, Event, Role, State, Timeout};
use crate::ws::error::SendError;
use crate::ws::frame::Opcode;
use crate::ws::limits::Limits;

fn server(limits: Limits, now: Instant) -> Conn {
    Conn::new(Role::Server, Arc::new(Config { limits, ..Config::default() }), None, [0; 32], now)
}

fn written(conn: &mut Conn) -> Vec<super::harness::Out> {
    let mut wire = Vec::new();
    conn.poll_transmit(&mut wire);
    decode(&wire, conn.role())
}

/// RFC 6455 §7.1.1: after our Close, the peer has `close_timeout` to answer, counted from the
/// driver's next wait.
#[test]
fn the_peers_close_is_awaited_for_close_timeout() {
    let t0 = Instant::now();
    let mut conn = server(Limits::default(), t0);
    assert_eq!(conn.poll_timeout(t0), None);
    conn.send_text("last words").unwrap();
    conn.close(CloseCode::GOING_AWAY, "shutting down").unwrap();
    assert_eq!(conn.close(CloseCode::NORMAL, ""), Err(SendError::Closed));
    assert_eq!(conn.send_binary(b"x"), Err(SendError::Closed));
    assert_eq!(conn.send_ping(b"x"), Err(SendError::Closed));
    assert_eq!(
        written(&mut conn),
        [out(Opcode::Text, b"last words"), close_out(1001, "shutting down")]
    );
    let t1 = t0 + Duration::from_secs(1);
    let deadline = conn.poll_timeout(t1).unwrap();
    assert_eq!(deadline, t1 + Duration::from_secs(5));
    // Messages still arrive until the peer's Close; its pings are not answered.
    let mut input = BytesMut::from(&[c(1, true, b"still"), c(9, true, b"p")].concat()[..]);
    assert_eq!(conn.recv(&mut input, t1), Some(Event::Text("still".into())));
    assert_eq!(conn.recv(&mut input, t1), Some(Event::Ping("p".into())));
    assert!(written(&mut conn).is_empty());
    assert_eq!(conn.handle_timeout(deadline - Duration::from_millis(1)), None);
    assert_eq!(conn.handle_timeout(deadline), Some(Timeout::Close));
    assert!(conn.is_closed());
    assert_eq!(conn.poll_timeout(deadline), None);
}

/// The peer's Close ends our wait: no timeout, nothing more written.
#[test]
fn the_peers_close_completes_the_handshake() {
    let t0 = Instant::now();
    let mut conn = server(Limits::default(), t0);
    conn.close(CloseCode::NORMAL, "").unwrap();
    written(&mut conn);
    conn.poll_timeout(t0);
    let mut input = BytesMut::from(&c(8, true, b"\x03\xe8")[..]);
    assert!(matches!(conn.recv(&mut input, t0), Some(Event::Close { .. })));
    assert!(conn.is_closed());
    assert!(written(&mut conn).is_empty(), "no second Close");
    assert_eq!(conn.handle_timeout(t0 + Duration::from_secs(60)), None);
}

/// Keep-alive: a Ping after each `ping_interval` of silence; received bytes restart the
/// count; `idle_timeout` of silence fails the connection with 1001.
#[test]
fn keep_alive_pings_and_the_idle_limit() {
    let t0 = Instant::now();
    let s = Duration::from_secs;
    let limits =
        Limits { ping_interval: Some(s(10)), idle_timeout: Some(s(25)), ..Limits::default() };
    let mut conn = server(limits, t0);
    assert_eq!(conn.poll_timeout(t0), Some(t0 + s(10)));
    assert_eq!(conn.handle_timeout(t0 + s(10)), None);
    assert_eq!(written(&mut conn), [out(Opcode::Ping, b"")]);
    assert_eq!(conn.poll_timeout(t0 + s(10)), Some(t0 + s(20)));
    // The pong (any input) restarts the silence.
    let mut input = BytesMut::from(&c(10, true, b"")[..]);
    assert_eq!(conn.recv(&mut input, t0 + s(12)), Some(Event::Pong("".into())));
    assert_eq!(conn.poll_timeout(t0 + s(12)), Some(t0 + s(22)));
    assert_eq!(conn.handle_timeout(t0 + s(22)), None);
    assert_eq!(conn.handle_timeout(t0 + s(32)), None);
    assert_eq!(written(&mut conn), [out(Opcode::Ping, b"")], "one ping per interval");
    assert_eq!(conn.poll_timeout(t0 + s(32)), Some(t0 + s(37)));
    assert_eq!(conn.handle_timeout(t0 + s(37)), Some(Timeout::Idle));
    assert_eq!(written(&mut conn), [close_out(1001, "idle")]);
    assert_eq!(conn.state(), State::Closed);
}

/// Close codes and reasons we refuse to send.
#[test]
fn close_arguments_are_checked() {
    let mut conn = server(Limits::default(), Instant::now());
    assert_eq!(conn.close(CloseCode::ABNORMAL, ""), Err(SendError::InvalidCloseCode));
    assert_eq!(conn.close(CloseCode::from(999), ""), Err(SendError::InvalidCloseCode));
    assert_eq!(conn.close(CloseCode::NORMAL, &"x".repeat(124)), Err(SendError::ReasonTooLong));
    assert_eq!(conn.send_ping(&[0; 126]), Err(SendError::ControlTooLong));
    assert_eq!(conn.state(), State::Open);
    conn.close(CloseCode::NO_STATUS, "").unwrap();
    assert_eq!(written(&mut conn)[0].payload, b"");
}

/// The queue: control frames jump ahead of messages, never into one; `buffered` counts it
/// all; `shrink` frees the buffers of an idle connection.
#[test]
fn control_frames_go_between_messages_and_buffers_shrink() {
    let config = Config { fragment_size: Some(4), ..Config::default() };
    let mut conn = Conn::new(Role::Server, Arc::new(config), None, [0; 32], Instant::now());
    conn.send_text("fragmented").unwrap();
    conn.send_ping(b"p").unwrap();
    assert_eq!(conn.buffered(), 3 * 2 + 10 + 2 + 1);
    let got = written(&mut conn);
    let ops: Vec<(Opcode, bool)> = got.iter().map(|f| (f.opcode, f.fin)).collect();
    assert_eq!(
        ops,
        [
            (Opcode::Ping, true),
            (Opcode::Text, false),
            (Opcode::Continuation, false),
            (Opcode::Continuation, true)
        ]
    );
    assert_eq!(conn.buffered(), 0);
    conn.shrink();
    assert_eq!(conn.out.capacity(), 0);
    assert_eq!(conn.buf.capacity(), 0);
}

/// `uses_time`: the clock matters only with a timer configured or our Close awaiting its
/// answer; a driver may skip the clock read otherwise.
#[test]
fn time_is_used_only_by_timers_and_the_closing_handshake() {
    let t0 = Instant::now();
    let mut plain = server(Limits::default(), t0);
    assert!(!plain.uses_time());
    plain.close(CloseCode::NORMAL, "").unwrap();
    assert!(plain.uses_time());
    let idle = Limits { idle_timeout: Some(Duration::from_secs(1)), ..Limits::default() };
    assert!(server(idle, t0).uses_time());
    let ping = Limits { ping_interval: Some(Duration::from_secs(1)), ..Limits::default() };
    assert!(server(ping, t0).uses_time());
}

/// `frame_in_progress`: a frame's length and the octets of it still to come, in whichever
/// pieces it arrives; `None` between frames.
#[test]
fn a_frame_under_way_says_what_is_left() {
    let t0 = Instant::now();
    let mut conn = server(Limits::default(), t0);
    assert_eq!(conn.frame_in_progress(), None);
    let payload = vec![b'x'; 1000];
    let wire = c(2, true, &payload);
    let header = wire.len() - 1000;
    let mut input = BytesMut::from(&wire[..header + 100]);
    assert_eq!(conn.recv(&mut input, t0), None);
    assert_eq!(conn.frame_in_progress(), Some((1000, 900)));
    input.extend_from_slice(&wire[header + 100..header + 400]);
    assert_eq!(conn.recv(&mut input, t0), None);
    assert_eq!(conn.frame_in_progress(), Some((1000, 600)));
    input.extend_from_slice(&wire[header + 400..]);
    assert_eq!(conn.recv(&mut input, t0), Some(Event::Binary(payload.into())));
    assert_eq!(conn.frame_in_progress(), None);
    // Nothing more: an empty input gives nothing.
    assert_eq!(conn.recv(&mut input, t0), None);
}
