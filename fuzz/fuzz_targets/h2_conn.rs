#![no_main]
//! The HTTP/2 connection state machine, both roles, fed arbitrary bytes as the peer's: never
//! panics, memory stays bounded (queued output, live streams), and feeding the input whole or
//! split at arbitrary points (the first bytes choose them) gives the same events (DATA pieces
//! of one stream merged).
//!
//! A server gets a valid client preface and SETTINGS first (unless the seed says not to), so
//! the fuzzer spends its time past the handshake; a client has sent a request. The driver plays
//! a simple application: it answers requests with a body, sends more on `Writable`, and
//! releases a stream's received octets when the stream's message ends (a point that is the
//! same in both runs, unlike the arrival of each DATA piece).
use std::collections::HashMap;
use std::time::Instant;

use libfuzzer_sys::fuzz_target;
use peregrine::http2::{Config, Conn, Event, HeadersKind, RequestHead, Role, StreamId};

/// An event, owned; DATA pieces merged.
#[derive(Debug, PartialEq, Eq)]
enum Ev {
    Headers(u32, HeadersKind, bool, Vec<(Vec<u8>, Vec<u8>)>),
    Data(u32, Vec<u8>, bool),
    Other(String),
}

const BODY: [u8; 40_000] = [b'b'; 40_000];

/// What the application has seen and owes, apart from the connection (so an event, which
/// borrows the connection, can be recorded).
#[derive(Default)]
struct Record {
    events: Vec<Ev>,
    /// Octets received per stream, released at the end of its message.
    received: HashMap<u32, usize>,
    /// Response body octets sent so far, per stream still sending.
    sending: HashMap<u32, usize>,
}

struct Driver {
    conn: Conn,
    now: Instant,
    rec: Record,
    wire: Vec<u8>,
}

impl Driver {
    fn new(role: Role, config: Config, now: Instant) -> Driver {
        let mut conn = Conn::new(role, config, now);
        if role == Role::Client {
            let head = RequestHead {
                method: b"POST",
                scheme: b"https",
                authority: b"a",
                path: b"/",
                protocol: None,
            };
            let id = conn.send_request(&head, [(&b"x"[..], &b"y"[..])], false).unwrap();
            conn.send_data(id, b"request body", true).unwrap();
        }
        Driver { conn, now, rec: Record::default(), wire: Vec::new() }
    }

    fn check_bounds(&self) {
        let (local, peer) = self.conn.active_streams();
        assert!(local <= 1 && peer <= 100, "{local} {peer}");
        assert!(self.conn.buffered() <= 2 * 1024 * 1024, "{}", self.conn.buffered());
    }

    fn act(&mut self, stream: StreamId, act: Act) {
        match act {
            Act::Release => {
                let n = self.rec.received.remove(&stream.get()).unwrap_or(0);
                self.conn.release_capacity(stream, n);
            }
            Act::Respond { end } => {
                if end {
                    self.conn.release_capacity(stream, 0);
                }
                if self
                    .conn
                    .send_response(stream, 200, [(&b"server"[..], &b"fuzz"[..])], false)
                    .is_ok()
                {
                    self.rec.sending.insert(stream.get(), 0);
                    self.act(stream, Act::Send);
                }
            }
            Act::Send => {
                let Some(&sent) = self.rec.sending.get(&stream.get()) else { return };
                if let Ok(n) = self.conn.send_data(stream, &BODY[sent..], true) {
                    if sent + n == BODY.len() {
                        self.rec.sending.remove(&stream.get());
                    } else {
                        self.rec.sending.insert(stream.get(), sent + n);
                    }
                }
            }
        }
    }

    /// After every event but DATA (whose pieces differ between runs): what a driver does
    /// when it writes, so the acknowledgement and send-buffer budgets see the same calls.
    fn transmit(&mut self) {
        self.wire.clear();
        self.conn.poll_transmit(&mut self.wire);
        while let Some(ev) = self.conn.poll_event() {
            let todo = self.rec.record(&ev);
            if let Some((stream, act)) = todo {
                self.act(stream, act);
            }
        }
    }

    /// Feeds the pieces in order, the unconsumed tail carried over.
    fn feed(&mut self, pieces: &[&[u8]]) {
        let mut buf = Vec::new();
        for piece in pieces {
            buf.extend_from_slice(piece);
            let mut pos = 0;
            loop {
                let (used, ev) = self.conn.recv(&buf[pos..], self.now);
                assert!(used <= buf.len() - pos);
                pos += used;
                let Some(ev) = ev else {
                    if used == 0 {
                        break;
                    }
                    continue;
                };
                let data = matches!(ev, Event::Data { .. });
                let todo = self.rec.record(&ev);
                if let Some((stream, act)) = todo {
                    self.act(stream, act);
                }
                if !data {
                    self.transmit();
                }
                self.check_bounds();
            }
            buf.drain(..pos);
        }
        self.transmit();
        self.check_bounds();
    }
}

impl Record {
    /// Records an event; returns the stream to act on and what to do.
    fn record(&mut self, ev: &Event<'_>) -> Option<(StreamId, Act)> {
        match ev {
            Event::Headers { stream, kind, end_stream, section } => {
                let fields =
                    section.list().iter().map(|f| (f.name.to_vec(), f.value.to_vec())).collect();
                self.events.push(Ev::Headers(stream.get(), *kind, *end_stream, fields));
                match (kind, end_stream) {
                    (HeadersKind::Request, end) => Some((*stream, Act::Respond { end: *end })),
                    (_, true) => Some((*stream, Act::Release)),
                    _ => None,
                }
            }
            Event::Data { stream, data, end_stream } => {
                *self.received.entry(stream.get()).or_default() += data.len();
                match self.events.last_mut() {
                    Some(Ev::Data(s, d, end)) if *s == stream.get() && !*end => {
                        d.extend_from_slice(data);
                        *end = *end_stream;
                    }
                    _ => self.events.push(Ev::Data(stream.get(), data.to_vec(), *end_stream)),
                }
                end_stream.then_some((*stream, Act::Release))
            }
            Event::Writable { stream } => {
                self.events.push(Ev::Other(format!("{ev:?}")));
                Some((*stream, Act::Send))
            }
            Event::Reset { stream, .. } => {
                self.events.push(Ev::Other(format!("{ev:?}")));
                self.received.remove(&stream.get());
                self.sending.remove(&stream.get());
                None
            }
            _ => {
                self.events.push(Ev::Other(format!("{ev:?}")));
                None
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Act {
    Release,
    Respond { end: bool },
    Send,
}

fn run(seed: u8, input: &[u8], pieces: &[&[u8]]) -> Vec<Ev> {
    let now = Instant::now();
    let role = if seed & 1 == 0 { Role::Server } else { Role::Client };
    // Small windows and limits on some seeds, so flow control and budgets are reached.
    let config = if seed & 2 == 0 {
        Config::default()
    } else {
        let mut c = Config {
            max_concurrent_streams: 4,
            initial_window_size: 1000,
            max_header_list_size: 300,
            ..Config::default()
        };
        c.limits.max_continuation_frames = 2;
        c.limits.max_header_block_bytes = 2000;
        c.limits.tiny_data.burst = 20;
        c.limits.control_frames.burst = 50;
        c.limits.rapid_reset.burst = 5;
        c.limits.provoked_reset.burst = 5;
        c.limits.max_queued_acks = 4;
        c.limits.closed_streams_remembered = 4;
        c
    };
    let mut d = Driver::new(role, config, now);
    d.transmit();
    let mut prefix = Vec::new();
    if seed & 4 == 0 {
        if role == Role::Server {
            prefix.extend_from_slice(peregrine::http2::conn::PREFACE);
        }
        prefix.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    }
    d.feed(&[&prefix]);
    let _ = input;
    d.feed(pieces);
    d.rec.events
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, input)) = data.split_first() else { return };
    let whole = run(seed, input, &[input]);
    // Cut points from the seed and the length: a few pieces of varying sizes.
    let mut pieces = Vec::new();
    let mut rest = input;
    let mut step = usize::from(seed >> 3) % 7 + 1;
    while !rest.is_empty() {
        let n = step.min(rest.len());
        pieces.push(&rest[..n]);
        rest = &rest[n..];
        step = step * 5 % 13 + 1;
    }
    assert_eq!(run(seed, input, &pieces), whole);
    if input.len() < 2048 {
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(seed, input, &bytes), whole);
    }
});
