//! The test peer: builds frames, feeds them to a [`Conn`] in any split, and reads back events
//! and output frames as owned values.

use std::time::Instant;

use crate::http2::config::Config;
use crate::http2::conn::{Conn, Event, HeadersKind, PREFACE, Role};
use crate::http2::error::Reason;
use crate::http2::frame::settings::{self, SettingId};
use crate::http2::frame::{self, Frame, HEAD_LEN, Head, Kind, flags};
use crate::http2::hpack::{Decoder, Encoder, FieldList};
use crate::http2::stream_id::StreamId;

/// An event, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    Headers { stream: u32, kind: HeadersKind, end: bool, fields: Vec<(String, String)> },
    Data { stream: u32, data: Vec<u8>, end: bool },
    Reset { stream: u32, reason: Reason, by_peer: bool, retryable: bool },
    Writable(u32),
    Settings,
    SettingsAcked,
    Ping([u8; 8]),
    PingAck([u8; 8]),
    GoAway { last: u32, reason: Reason, debug: Vec<u8> },
    Closed { reason: Reason, by_peer: bool },
}

impl Ev {
    pub fn of(e: &Event<'_>) -> Ev {
        match e {
            Event::Headers { stream, kind, end_stream, section } => Ev::Headers {
                stream: stream.get(),
                kind: *kind,
                end: *end_stream,
                fields: section
                    .list()
                    .iter()
                    .map(|f| {
                        (
                            String::from_utf8_lossy(f.name).into_owned(),
                            String::from_utf8_lossy(f.value).into_owned(),
                        )
                    })
                    .collect(),
            },
            Event::Data { stream, data, end_stream } => {
                Ev::Data { stream: stream.get(), data: data.to_vec(), end: *end_stream }
            }
            Event::Reset { stream, reason, by_peer, retryable } => Ev::Reset {
                stream: stream.get(),
                reason: *reason,
                by_peer: *by_peer,
                retryable: *retryable,
            },
            Event::Writable { stream } => Ev::Writable(stream.get()),
            Event::Settings(_) => Ev::Settings,
            Event::SettingsAcked => Ev::SettingsAcked,
            Event::Ping { payload } => Ev::Ping(*payload),
            Event::PingAck { payload } => Ev::PingAck(*payload),
            Event::GoAway { last_stream_id, reason, debug_data } => Ev::GoAway {
                last: last_stream_id.get(),
                reason: *reason,
                debug: debug_data.to_vec(),
            },
            Event::Closed(c) => Ev::Closed { reason: c.reason, by_peer: c.by_peer },
        }
    }
}

/// Feeds `input` whole and returns every event, consecutive DATA pieces of one stream merged.
pub fn feed(conn: &mut Conn, input: &[u8], now: Instant) -> Vec<Ev> {
    feed_pieces(conn, &[input], now)
}

/// Feeds `pieces` one after another (the driver keeps unconsumed octets), merging DATA pieces.
pub fn feed_pieces(conn: &mut Conn, pieces: &[&[u8]], now: Instant) -> Vec<Ev> {
    let mut evs: Vec<Ev> = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    for piece in pieces {
        buf.extend_from_slice(piece);
        let mut pos = 0;
        loop {
            let (used, ev) = conn.recv(&buf[pos..], now);
            pos += used;
            match ev {
                Some(e) => push(&mut evs, Ev::of(&e)),
                None if used == 0 => break,
                None => {}
            }
        }
        buf.drain(..pos);
    }
    while let Some(e) = conn.poll_event() {
        push(&mut evs, Ev::of(&e));
    }
    evs
}

pub fn push(evs: &mut Vec<Ev>, e: Ev) {
    if let (Some(Ev::Data { stream: s0, data: d0, end: end0 }), Ev::Data { stream, data, end }) =
        (evs.last_mut(), &e)
    {
        if *s0 == *stream && !*end0 {
            d0.extend_from_slice(data);
            *end0 = *end;
            return;
        }
    }
    evs.push(e);
}

/// A frame read back from the connection's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Out {
    pub head: Head,
    pub payload: Vec<u8>,
}

impl Out {
    pub fn kind(&self) -> Kind {
        self.head.kind
    }
    /// RST_STREAM or GOAWAY error code.
    pub fn reason(&self) -> Reason {
        match frame::decode(self.head, &self.payload).unwrap() {
            Frame::RstStream(r) => r.reason,
            Frame::GoAway(g) => g.reason,
            f => panic!("no reason in {f:?}"),
        }
    }
}

/// Everything the connection has queued, as frames (a client's preface magic skipped).
pub fn drain(conn: &mut Conn) -> Vec<Out> {
    let mut bytes = Vec::new();
    conn.poll_transmit(&mut bytes);
    let mut rest = bytes.strip_prefix(&PREFACE[..]).unwrap_or(&bytes);
    let mut v = Vec::new();
    while !rest.is_empty() {
        let head = Head::parse(rest[..HEAD_LEN].try_into().unwrap());
        let end = HEAD_LEN + head.len as usize;
        v.push(Out { head, payload: rest[HEAD_LEN..end].to_vec() });
        rest = &rest[end..];
    }
    v
}

/// The single RST_STREAM / GOAWAY in `out`, as (kind, stream, reason).
pub fn errors(out: &[Out]) -> Vec<(Kind, u32, Reason)> {
    out.iter()
        .filter(|o| o.kind() == Kind::RST_STREAM || o.kind() == Kind::GOAWAY)
        .map(|o| (o.kind(), o.head.stream.get(), o.reason()))
        .collect()
}

pub fn rst(stream: u32, reason: Reason) -> (Kind, u32, Reason) {
    (Kind::RST_STREAM, stream, reason)
}

pub fn goaway(reason: Reason) -> (Kind, u32, Reason) {
    (Kind::GOAWAY, 0, reason)
}

/// The hand-driven peer: its own HPACK contexts and frame builders.
pub struct Peer {
    pub enc: Encoder,
    pub dec: Decoder,
    pub list: FieldList,
    pub now: Instant,
}

impl Peer {
    pub fn new() -> Peer {
        Peer {
            enc: Encoder::new(),
            dec: Decoder::new(4096),
            list: FieldList::new(1 << 20),
            now: Instant::now(),
        }
    }

    pub fn block(&mut self, fields: &[(&str, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        self.enc.encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())), &mut b);
        b
    }

    /// Decodes a HEADERS payload we received (unpadded, END_HEADERS).
    pub fn fields(&mut self, out: &Out) -> Vec<(String, String)> {
        assert_eq!(out.kind(), Kind::HEADERS);
        self.dec.decode(&out.payload, &mut self.list).unwrap();
        self.list
            .iter()
            .map(|f| {
                (
                    String::from_utf8_lossy(f.name).into_owned(),
                    String::from_utf8_lossy(f.value).into_owned(),
                )
            })
            .collect()
    }

    /// A HEADERS frame with END_HEADERS (and END_STREAM if `end`).
    pub fn headers(&mut self, stream: u32, end: bool, fields: &[(&str, &str)]) -> Vec<u8> {
        let b = self.block(fields);
        let f = flags::END_HEADERS | if end { flags::END_STREAM } else { 0 };
        raw(Kind::HEADERS, f, stream, &b)
    }

    /// A GET request on `stream`.
    pub fn get(&mut self, stream: u32) -> Vec<u8> {
        self.headers(stream, true, &GET)
    }
}

pub const GET: [(&str, &str); 4] =
    [(":method", "GET"), (":scheme", "https"), (":path", "/"), (":authority", "example.com")];

pub fn post(cl: Option<&'static str>) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![
        (":method", "POST"),
        (":scheme", "https"),
        (":path", "/upload"),
        (":authority", "example.com"),
    ];
    if let Some(cl) = cl {
        v.push(("content-length", cl));
    }
    v
}

/// Any frame, from raw parts.
pub fn raw(kind: Kind, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    Head::new(kind, flags, StreamId::new(stream), payload.len() as u32).encode(&mut v);
    v.extend_from_slice(payload);
    v
}

pub fn data(stream: u32, end: bool, payload: &[u8]) -> Vec<u8> {
    raw(Kind::DATA, if end { flags::END_STREAM } else { 0 }, stream, payload)
}

pub fn settings_frame(entries: &[(SettingId, u32)]) -> Vec<u8> {
    let mut v = Vec::new();
    settings::encode(entries, &mut v);
    v
}

pub fn settings_ack() -> Vec<u8> {
    raw(Kind::SETTINGS, flags::ACK, 0, &[])
}

pub fn window_update(stream: u32, inc: u32) -> Vec<u8> {
    raw(Kind::WINDOW_UPDATE, 0, stream, &inc.to_be_bytes())
}

pub fn rst_stream(stream: u32, reason: Reason) -> Vec<u8> {
    raw(Kind::RST_STREAM, 0, stream, &u32::from(reason).to_be_bytes())
}

pub fn ping(ack: bool, payload: [u8; 8]) -> Vec<u8> {
    raw(Kind::PING, if ack { flags::ACK } else { 0 }, 0, &payload)
}

pub fn goaway_frame(last: u32, reason: Reason, debug: &[u8]) -> Vec<u8> {
    let mut p = last.to_be_bytes().to_vec();
    p.extend_from_slice(&u32::from(reason).to_be_bytes());
    p.extend_from_slice(debug);
    raw(Kind::GOAWAY, 0, 0, &p)
}

pub fn priority(stream: u32, dep: u32) -> Vec<u8> {
    let mut p = dep.to_be_bytes().to_vec();
    p.push(15);
    raw(Kind::PRIORITY, 0, stream, &p)
}

/// A server past the preface exchange: the client's preface, SETTINGS (`entries`) and our
/// SETTINGS acknowledged; output drained.
pub fn server_with(config: Config, entries: &[(SettingId, u32)]) -> (Conn, Peer) {
    let peer = Peer::new();
    let mut conn = Conn::new(Role::Server, config, peer.now);
    let mut input = PREFACE.to_vec();
    input.extend(settings_frame(entries));
    input.extend(settings_ack());
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(evs, [Ev::Settings, Ev::SettingsAcked]);
    drain(&mut conn);
    (conn, peer)
}

pub fn server() -> (Conn, Peer) {
    server_with(Config::default(), &[])
}

/// A client past the preface exchange with a server sending `entries`.
pub fn client_with(config: Config, entries: &[(SettingId, u32)]) -> (Conn, Peer) {
    let peer = Peer::new();
    let mut conn = Conn::new(Role::Client, config, peer.now);
    let mut input = settings_frame(entries);
    input.extend(settings_ack());
    let evs = feed(&mut conn, &input, peer.now);
    assert_eq!(evs, [Ev::Settings, Ev::SettingsAcked]);
    drain(&mut conn);
    (conn, peer)
}

pub fn client() -> (Conn, Peer) {
    client_with(Config::default(), &[])
}

/// A closed event with our error.
pub fn closed(reason: Reason) -> Ev {
    Ev::Closed { reason, by_peer: false }
}
