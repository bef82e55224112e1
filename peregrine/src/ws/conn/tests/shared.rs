//! Messages queued as shared bytes (`send_binary_bytes`, `send_text_bytes`) and written
//! through a [`Transmit`] as a driver writes it, any part at a time: the frames come out in
//! the order they were made, control frames between messages, a server's large payloads
//! without a copy, everything else framed as before.

use std::collections::BTreeSet;
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};

use super::harness::{Out, c, close_out, conn, decode, out};
use crate::ws::config::Config;
use crate::ws::conn::{Conn, Event, Role, SHARE_MIN};
use crate::ws::error::SendError;
use crate::ws::frame::Opcode;
use crate::ws::transmit::Transmit;

#[derive(Clone, Copy, Debug)]
enum Op {
    /// `send_binary_bytes` of this many octets (message `i`: octets `i`, `i + 1`, ...).
    Binary(usize),
    /// `send_text_bytes` of this many ASCII octets.
    Text(usize),
    /// `send_ping` with this payload.
    Ping(&'static [u8]),
    /// The peer's Ping arrives: a Pong is owed.
    PeerPing(&'static [u8]),
    /// `close(1000, "bye")`.
    Close,
    /// The driver takes what is queued and writes this many octets of its output.
    Write(usize),
}

struct Row {
    name: &'static str,
    role: Role,
    config: fn() -> Config,
    ops: &'static [Op],
    /// Frames on the wire, in order.
    frames: fn() -> Vec<Out>,
    /// The messages (by their place among the sent ones) whose payload went out as the
    /// caller's bytes, not a copy.
    shared: &'static [usize],
}

fn payload(i: usize, len: usize, text: bool) -> Bytes {
    let modulo = if text { 26 } else { 251 };
    let base = if text { b'a' } else { 0 };
    (0..len).map(|k| base + ((i + k) % modulo) as u8).collect::<Vec<u8>>().into()
}

fn bin(i: usize, len: usize) -> Out {
    out(Opcode::Binary, &payload(i, len, false))
}

fn txt(i: usize, len: usize) -> Out {
    out(Opcode::Text, &payload(i, len, true))
}

/// Moves up to `n` octets of `t` to `wire`, one chunk at a time (as a write that stops inside
/// any piece), noting which sent payloads were written from their own memory.
fn write(
    t: &mut Transmit,
    mut n: usize,
    wire: &mut Vec<u8>,
    sent: &[Bytes],
    seen: &mut BTreeSet<usize>,
) {
    while n > 0 && t.has_remaining() {
        let chunk = t.chunk();
        let k = chunk.len().min(n);
        let range = chunk.as_ptr_range();
        for (i, p) in sent.iter().enumerate() {
            if p.as_ptr_range().contains(&range.start) {
                seen.insert(i);
            }
        }
        wire.extend_from_slice(&chunk[..k]);
        t.advance(k);
        n -= k;
    }
}

/// Runs a row's operations, then drains the rest `step` octets per write.
fn run(row: &Row, step: usize) -> (Vec<Out>, BTreeSet<usize>) {
    let now = Instant::now();
    let mut conn: Conn = conn(row.role, (row.config)(), None);
    let mut t = Transmit::new();
    let (mut wire, mut sent, mut seen) = (Vec::new(), Vec::new(), BTreeSet::new());
    for (i, op) in row.ops.iter().enumerate() {
        match *op {
            Op::Binary(len) => {
                let p = payload(sent.len(), len, false);
                sent.push(p.clone());
                conn.send_binary_bytes(p).unwrap();
            }
            Op::Text(len) => {
                let p = payload(sent.len(), len, true);
                sent.push(p.clone());
                conn.send_text_bytes(p).unwrap();
            }
            Op::Ping(p) => conn.send_ping(p).unwrap(),
            Op::PeerPing(p) => {
                let from = if row.role == Role::Server { Role::Client } else { Role::Server };
                let frame = super::harness::frame(from, 9, true, false, p);
                let mut input = BytesMut::from(&frame[..]);
                assert!(matches!(conn.recv(&mut input, now), Some(Event::Ping(_))), "{i}");
            }
            Op::Close => conn.close(1000.into(), "bye").unwrap(),
            Op::Write(n) => {
                conn.poll_transmit_vectored(&mut t);
                write(&mut t, n, &mut wire, &sent, &mut seen);
            }
        }
    }
    loop {
        let before = t.len() + conn.buffered();
        conn.poll_transmit_vectored(&mut t);
        assert_eq!(t.len(), before, "{}: octets lost or made", row.name);
        if t.is_empty() {
            break;
        }
        write(&mut t, step, &mut wire, &sent, &mut seen);
    }
    assert_eq!(conn.buffered(), 0);
    (decode(&wire, row.role), seen)
}

fn default() -> Config {
    Config::default()
}

fn fragmented() -> Config {
    Config { fragment_size: Some(1500), ..Config::default() }
}

const BIG: usize = 4096;

#[test]
fn shared_messages_keep_their_order_through_any_partial_write() {
    let rows = [
        Row {
            name: "a server's large binary is written from its own bytes",
            role: Role::Server,
            config: default,
            ops: &[Op::Binary(BIG)],
            frames: || vec![bin(0, BIG)],
            shared: &[0],
        },
        Row {
            name: "a large text too; 64-bit length header",
            role: Role::Server,
            config: default,
            ops: &[Op::Text(70_000), Op::Binary(SHARE_MIN)],
            frames: || vec![txt(0, 70_000), bin(1, SHARE_MIN)],
            shared: &[0, 1],
        },
        Row {
            name: "below the threshold, copied; order kept among shared ones",
            role: Role::Server,
            config: default,
            ops: &[Op::Binary(SHARE_MIN - 1), Op::Binary(BIG), Op::Text(20), Op::Binary(0)],
            frames: || vec![bin(0, SHARE_MIN - 1), bin(1, BIG), txt(2, 20), bin(3, 0)],
            shared: &[1],
        },
        Row {
            name: "a Pong owed goes ahead of messages still queued",
            role: Role::Server,
            config: default,
            ops: &[Op::Binary(BIG), Op::Binary(BIG), Op::PeerPing(b"p")],
            frames: || vec![out(Opcode::Pong, b"p"), bin(0, BIG), bin(1, BIG)],
            shared: &[0, 1],
        },
        Row {
            name: "a message partly written is finished before the Pong and Ping",
            role: Role::Server,
            config: default,
            ops: &[
                Op::Binary(BIG),
                Op::Write(3),
                Op::PeerPing(b"x"),
                Op::Ping(b"k"),
                Op::Binary(BIG),
                Op::Write(BIG),
                Op::Text(BIG),
            ],
            frames: || {
                vec![
                    bin(0, BIG),
                    out(Opcode::Pong, b"x"),
                    out(Opcode::Ping, b"k"),
                    bin(1, BIG),
                    txt(2, BIG),
                ]
            },
            shared: &[0, 1, 2],
        },
        Row {
            name: "a write ending inside the header, then inside the payload",
            role: Role::Server,
            config: default,
            ops: &[Op::Binary(BIG), Op::Write(1), Op::Write(3), Op::Write(1000), Op::Close],
            frames: || vec![bin(0, BIG), close_out(1000, "bye")],
            shared: &[0],
        },
        Row {
            name: "our Close follows the messages queued before it",
            role: Role::Server,
            config: default,
            ops: &[Op::Binary(BIG), Op::Write(2), Op::Close],
            frames: || vec![bin(0, BIG), close_out(1000, "bye")],
            shared: &[0],
        },
        Row {
            name: "fragmenting stays as it is: copied, in frames of fragment_size",
            role: Role::Server,
            config: fragmented,
            ops: &[Op::Binary(BIG), Op::Binary(1500)],
            frames: || {
                let p = payload(0, BIG, false);
                let f = |op, fin, r: std::ops::Range<usize>| Out {
                    opcode: op,
                    fin,
                    rsv1: false,
                    payload: p[r].to_vec(),
                };
                vec![
                    f(Opcode::Binary, false, 0..1500),
                    f(Opcode::Continuation, false, 1500..3000),
                    f(Opcode::Continuation, true, 3000..BIG),
                    bin(1, 1500),
                ]
            },
            shared: &[1],
        },
        Row {
            name: "a client masks, so it copies",
            role: Role::Client,
            config: default,
            ops: &[Op::Binary(BIG), Op::Write(7), Op::PeerPing(b"q"), Op::Text(BIG)],
            frames: || vec![bin(0, BIG), out(Opcode::Pong, b"q"), txt(1, BIG)],
            shared: &[],
        },
    ];
    for row in &rows {
        for step in [1, 2, 5, 1000, usize::MAX] {
            let (frames, seen) = run(row, step);
            assert_eq!(frames, (row.frames)(), "{}, step {step}", row.name);
            let want: BTreeSet<usize> = row.shared.iter().copied().collect();
            assert_eq!(seen, want, "{}, step {step}: shared payloads", row.name);
        }
    }
}

/// `poll_transmit` into one buffer copies shared payloads in: the same frames.
#[test]
fn poll_transmit_copies_shared_payloads_in_order() {
    let mut conn = conn(Role::Server, Config::default(), None);
    conn.send_binary_bytes(payload(0, BIG, false)).unwrap();
    conn.send_text("hi").unwrap();
    conn.send_text_bytes(payload(2, BIG, true)).unwrap();
    let mut input = BytesMut::from(&c(9, true, b"z")[..]);
    assert!(conn.recv(&mut input, Instant::now()).is_some());
    let mut wire = Vec::new();
    assert_eq!(conn.poll_transmit(&mut wire), wire.len());
    let want = vec![out(Opcode::Pong, b"z"), bin(0, BIG), out(Opcode::Text, b"hi"), txt(2, BIG)];
    assert_eq!(decode(&wire, Role::Server), want);
    assert_eq!(conn.buffered(), 0);
}

/// Backpressure counts shared payloads: `buffered` is every octet queued.
#[test]
fn buffered_counts_shared_payloads() {
    let mut conn = conn(Role::Server, Config::default(), None);
    conn.send_binary_bytes(payload(0, BIG, false)).unwrap();
    assert_eq!(conn.buffered(), 4 + BIG);
    conn.send_ping(b"abc").unwrap();
    assert_eq!(conn.buffered(), 4 + BIG + 5);
    let mut t = Transmit::new();
    assert_eq!(conn.poll_transmit_vectored(&mut t), 4 + BIG + 5);
    assert_eq!((t.len(), conn.buffered()), (4 + BIG + 5, 0));
}

#[test]
fn nothing_is_queued_after_our_close() {
    let mut conn = conn(Role::Server, Config::default(), None);
    conn.close(1000.into(), "").unwrap();
    assert_eq!(conn.send_binary_bytes(payload(0, BIG, false)), Err(SendError::Closed));
    assert_eq!(conn.send_text_bytes(payload(0, 10, true)), Err(SendError::Closed));
}
