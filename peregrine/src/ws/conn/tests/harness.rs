//! Frame builders, a decoder of what a connection wrote, and a driver that feeds input in
//! every split.

use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;

use crate::ws::config::Config;
use crate::ws::conn::{Conn, Event, Role, State};
use crate::ws::extension::DeflateParams;
use crate::ws::frame::{Header, Opcode, Rules};
use crate::ws::mask;

/// A frame as a peer in `from` role sends it: masked by a client (with a fixed key).
pub(crate) fn frame(from: Role, opcode: u8, fin: bool, rsv1: bool, payload: &[u8]) -> Vec<u8> {
    let mut b0 = opcode;
    if fin {
        b0 |= 0x80;
    }
    if rsv1 {
        b0 |= 0x40;
    }
    let masked = from == Role::Client;
    let m = if masked { 0x80 } else { 0 };
    let mut out = vec![b0];
    match payload.len() {
        n @ 0..=125 => out.push(m | n as u8),
        n @ 126..=0xffff => {
            out.push(m | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(m | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    let key = [0x37, 0xfa, 0x21, 0x3d];
    if masked {
        out.extend_from_slice(&key);
    }
    let start = out.len();
    out.extend_from_slice(payload);
    if masked {
        mask::apply(&mut out[start..], key, 0);
    }
    out
}

/// A client's frame (masked), as a server receives it.
pub(crate) fn c(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    frame(Role::Client, opcode, fin, false, payload)
}

/// A frame as the connection wrote it, unmasked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Out {
    pub opcode: Opcode,
    pub fin: bool,
    pub rsv1: bool,
    pub payload: Vec<u8>,
}

/// A Close frame as we expect it written.
pub(crate) fn close_out(code: u16, reason: &str) -> Out {
    let mut payload = code.to_be_bytes().to_vec();
    payload.extend_from_slice(reason.as_bytes());
    Out { opcode: Opcode::Close, fin: true, rsv1: false, payload }
}

/// A whole, unfragmented frame as we expect it written.
pub(crate) fn out(opcode: Opcode, payload: &[u8]) -> Out {
    Out { opcode, fin: true, rsv1: false, payload: payload.to_vec() }
}

/// Decodes what a connection in role `by` wrote: masked iff `by` is a client, and every
/// frame well-formed.
pub(crate) fn decode(mut wire: &[u8], by: Role) -> Vec<Out> {
    let rules = Rules { masked: by == Role::Client, rsv1: true, max_len: u64::MAX };
    let mut frames = Vec::new();
    while !wire.is_empty() {
        let (h, n): (Header, usize) =
            Header::decode(wire, rules).expect("a valid frame").expect("a whole frame");
        let len = h.len as usize;
        let mut payload = wire[n..n + len].to_vec();
        if let Some(key) = h.mask {
            mask::apply(&mut payload, key, 0);
        }
        frames.push(Out { opcode: h.opcode, fin: h.fin, rsv1: h.rsv1, payload });
        wire = &wire[n + len..];
    }
    frames
}

/// How a row's input is cut into reads.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Split {
    Whole,
    Bytes,
    /// Random pieces of 1..=`max` octets from a xorshift seeded with the value.
    Random(u64, usize),
}

/// The splits every row is fed in.
pub(crate) const SPLITS: [Split; 6] = [
    Split::Whole,
    Split::Bytes,
    Split::Random(1, 7),
    Split::Random(2, 3),
    Split::Random(0xdead_beef, 40),
    Split::Random(42, 200),
];

/// A tiny xorshift: reproducible pieces without a dependency.
pub(crate) struct XorShift(pub u64);

impl XorShift {
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Cuts `input` into pieces per `split`.
pub(crate) fn pieces(input: &[u8], split: Split) -> Vec<&[u8]> {
    match split {
        Split::Whole => vec![input],
        Split::Bytes => input.chunks(1).collect(),
        Split::Random(seed, max) => {
            let mut rng = XorShift(seed);
            let mut out = Vec::new();
            let mut rest = input;
            while !rest.is_empty() {
                let n = (1 + rng.below(max)).min(rest.len());
                out.push(&rest[..n]);
                rest = &rest[n..];
            }
            out
        }
    }
}

/// What a run shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Transcript {
    pub events: Vec<Event>,
    pub written: Vec<Out>,
    pub state: State,
}

pub(crate) fn conn(role: Role, config: Config, deflate: Option<DeflateParams>) -> Conn {
    Conn::new(role, Arc::new(config), deflate, [9; 32], Instant::now())
}

/// Feeds `input` to `conn` in `split`'s pieces, as a driver does: each read appended to the
/// input buffer, `recv` called until `None`. Then everything it queued.
pub(crate) fn run(mut conn: Conn, input: &[u8], split: Split) -> Transcript {
    let now = Instant::now();
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    for piece in pieces(input, split) {
        buf.extend_from_slice(piece);
        while let Some(e) = conn.recv(&mut buf, now) {
            events.push(e);
        }
    }
    let mut wire = Vec::new();
    conn.poll_transmit(&mut wire);
    Transcript { events, written: decode(&wire, conn.role()), state: conn.state() }
}

/// Runs every split and checks they agree; returns the transcript.
pub(crate) fn run_all(make: impl Fn() -> Conn, input: &[u8]) -> Transcript {
    let whole = run(make(), input, Split::Whole);
    for split in SPLITS {
        assert_eq!(run(make(), input, split), whole, "{split:?}");
    }
    whole
}
