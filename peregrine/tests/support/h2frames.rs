//! Raw HTTP/2 frames for the tests that speak to the server byte by byte: a reader, and
//! builders for every frame type a client sends (RFC 9113 §6), so a test reads like the
//! conversation it checks. Frames are read off a [`RawClient`](super::RawClient).
//!
//! Builders append to a caller's buffer (`*_into`) so a flood reuses one buffer, or return a
//! fresh `Vec` for one-off frames. Header blocks are HPACK-encoded with the crate's own
//! [`Encoder`](peregrine::http2::hpack::Encoder) or written by hand where a test needs exact
//! bytes (an HPACK bomb).

use std::io;

use peregrine::http2::hpack::Encoder;

use super::RawClient;

/// Frame types (RFC 9113 §6).
pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

/// END_STREAM, on DATA and HEADERS.
pub const END_STREAM: u8 = 0x1;
/// ACK, on SETTINGS and PING.
pub const ACK: u8 = 0x1;
/// END_HEADERS, on HEADERS and CONTINUATION.
pub const END_HEADERS: u8 = 0x4;

/// Error codes (RFC 9113 §7).
pub const NO_ERROR: u32 = 0x0;
pub const PROTOCOL_ERROR: u32 = 0x1;
pub const FLOW_CONTROL_ERROR: u32 = 0x3;
pub const STREAM_CLOSED: u32 = 0x5;
pub const REFUSED_STREAM: u32 = 0x7;
pub const CANCEL: u32 = 0x8;
pub const ENHANCE_YOUR_CALM: u32 = 0xb;

/// SETTINGS identifiers (RFC 9113 §6.5.2).
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;

/// The client connection preface magic (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// One frame as read off the wire (RFC 9113 §4.1).
#[derive(Debug, Clone)]
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

impl Frame {
    /// A GOAWAY's last-stream-id and error code.
    pub fn goaway(&self) -> Option<(u32, u32)> {
        (self.kind == GOAWAY && self.payload.len() >= 8).then(|| {
            let last = u32::from_be_bytes(self.payload[..4].try_into().unwrap()) & 0x7fff_ffff;
            (last, u32::from_be_bytes(self.payload[4..8].try_into().unwrap()))
        })
    }

    /// A RST_STREAM's error code.
    pub fn rst_code(&self) -> Option<u32> {
        (self.kind == RST_STREAM && self.payload.len() == 4)
            .then(|| u32::from_be_bytes(self.payload[..4].try_into().unwrap()))
    }

    /// Whether the frame ends its stream (DATA or HEADERS with END_STREAM, or RST_STREAM).
    pub fn ends_stream(&self) -> bool {
        (matches!(self.kind, DATA | HEADERS) && self.flags & END_STREAM != 0)
            || self.kind == RST_STREAM
    }
}

/// Reads one frame.
pub fn read(c: &mut RawClient) -> Frame {
    let head = c.take(9);
    let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
    let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    Frame { kind: head[3], flags: head[4], stream, payload: c.take(len) }
}

/// Reads one frame; `None` when the connection ends first (EOF, a reset, a read timeout).
pub fn try_read(c: &mut RawClient) -> Option<Frame> {
    let head = try_take(c, 9)?;
    let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
    let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    Some(Frame { kind: head[3], flags: head[4], stream, payload: try_take(c, len)? })
}

fn try_take(c: &mut RawClient, n: usize) -> Option<Vec<u8>> {
    while c.buffered().len() < n {
        match c.fill() {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(c.take(n))
}

/// Reads frames until one ends `stream` (DATA or HEADERS with END_STREAM, or RST_STREAM);
/// returns them all.
pub fn read_until_end_stream(c: &mut RawClient, stream: u32) -> Vec<Frame> {
    let mut frames = Vec::new();
    loop {
        let f = read(c);
        let end = f.stream == stream && f.ends_stream();
        frames.push(f);
        if end {
            return frames;
        }
    }
}

/// What the server sent until the connection ended: counts per frame type, and the GOAWAY.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Frames per type (index = type, 0..=9).
    pub kinds: [usize; 10],
    /// RST_STREAM frames per error code (0..=0xd).
    pub resets: [usize; 14],
    /// The first GOAWAY's last-stream-id and code.
    pub goaway: Option<(u32, u32)>,
    /// HEADERS frames that ended their stream (a response with no body, e.g. 431).
    pub ended_by_headers: usize,
}

impl Tally {
    pub fn count(&self, kind: u8) -> usize {
        self.kinds[usize::from(kind)]
    }

    pub fn resets(&self, code: u32) -> usize {
        self.resets.get(code as usize).copied().unwrap_or(0)
    }

    fn add(&mut self, f: &Frame) {
        if let Some(n) = self.kinds.get_mut(usize::from(f.kind)) {
            *n += 1;
        }
        if let Some(code) = f.rst_code() {
            if let Some(n) = self.resets.get_mut(code as usize) {
                *n += 1;
            }
        }
        if self.goaway.is_none() {
            self.goaway = f.goaway();
        }
        if f.kind == HEADERS && f.flags & END_STREAM != 0 {
            self.ended_by_headers += 1;
        }
    }
}

/// Reads and counts frames until the server closes the connection (or the read times out).
pub fn tally_to_close(c: &mut RawClient) -> Tally {
    let mut tally = Tally::default();
    while let Some(f) = try_read(c) {
        tally.add(&f);
    }
    tally
}

/// Reads and counts frames until `done` says so (given the tally so far) or the connection
/// ends.
pub fn tally_until(c: &mut RawClient, mut done: impl FnMut(&Tally) -> bool) -> Tally {
    let mut tally = Tally::default();
    while !done(&tally) {
        let Some(f) = try_read(c) else { break };
        tally.add(&f);
    }
    tally
}

/// Appends a frame (RFC 9113 §4.1: 24-bit length, type, flags, stream id).
pub fn frame_into(dst: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    let len = payload.len() as u32;
    dst.extend_from_slice(&len.to_be_bytes()[1..]);
    dst.extend_from_slice(&[kind, flags]);
    dst.extend_from_slice(&stream.to_be_bytes());
    dst.extend_from_slice(payload);
}

/// A frame's bytes.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + payload.len());
    frame_into(&mut out, kind, flags, stream, payload);
    out
}

/// The client preface: the magic and a SETTINGS frame with `settings`.
pub fn preface(settings_entries: &[(u16, u32)]) -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    out.extend_from_slice(&settings(settings_entries));
    out
}

/// SETTINGS with these entries (RFC 9113 §6.5.1).
pub fn settings(entries: &[(u16, u32)]) -> Vec<u8> {
    let payload: Vec<u8> = entries
        .iter()
        .flat_map(|&(id, v)| id.to_be_bytes().into_iter().chain(v.to_be_bytes()))
        .collect();
    frame(SETTINGS, 0, 0, &payload)
}

/// SETTINGS with ACK.
pub fn settings_ack() -> Vec<u8> {
    frame(SETTINGS, ACK, 0, &[])
}

/// HEADERS carrying (a first fragment of) a header block.
pub fn headers_into(
    dst: &mut Vec<u8>,
    stream: u32,
    block: &[u8],
    end_stream: bool,
    end_headers: bool,
) {
    let flags = if end_stream { END_STREAM } else { 0 } | if end_headers { END_HEADERS } else { 0 };
    frame_into(dst, HEADERS, flags, stream, block);
}

/// A whole header block in one HEADERS frame.
pub fn headers(stream: u32, block: &[u8], end_stream: bool) -> Vec<u8> {
    let mut out = Vec::new();
    headers_into(&mut out, stream, block, end_stream, true);
    out
}

/// CONTINUATION with a fragment of a header block (RFC 9113 §6.10).
pub fn continuation_into(dst: &mut Vec<u8>, stream: u32, fragment: &[u8], end_headers: bool) {
    frame_into(dst, CONTINUATION, if end_headers { END_HEADERS } else { 0 }, stream, fragment);
}

/// DATA (RFC 9113 §6.1).
pub fn data_into(dst: &mut Vec<u8>, stream: u32, bytes: &[u8], end_stream: bool) {
    frame_into(dst, DATA, if end_stream { END_STREAM } else { 0 }, stream, bytes);
}

/// DATA as its own buffer.
pub fn data(stream: u32, bytes: &[u8], end_stream: bool) -> Vec<u8> {
    let mut out = Vec::new();
    data_into(&mut out, stream, bytes, end_stream);
    out
}

/// RST_STREAM with an error code (RFC 9113 §6.4).
pub fn rst_stream_into(dst: &mut Vec<u8>, stream: u32, code: u32) {
    frame_into(dst, RST_STREAM, 0, stream, &code.to_be_bytes());
}

/// PING (RFC 9113 §6.7).
pub fn ping_into(dst: &mut Vec<u8>, payload: [u8; 8], ack: bool) {
    frame_into(dst, PING, if ack { ACK } else { 0 }, 0, &payload);
}

/// WINDOW_UPDATE (RFC 9113 §6.9); stream 0 is the connection.
pub fn window_update_into(dst: &mut Vec<u8>, stream: u32, increment: u32) {
    frame_into(dst, WINDOW_UPDATE, 0, stream, &increment.to_be_bytes());
}

/// WINDOW_UPDATE as its own buffer.
pub fn window_update(stream: u32, increment: u32) -> Vec<u8> {
    let mut out = Vec::new();
    window_update_into(&mut out, stream, increment);
    out
}

/// PRIORITY (RFC 9113 §6.3, deprecated but still parsed): exclusive bit clear.
pub fn priority_into(dst: &mut Vec<u8>, stream: u32, depends_on: u32, weight: u8) {
    let mut payload = depends_on.to_be_bytes().to_vec();
    payload.push(weight);
    frame_into(dst, PRIORITY, 0, stream, &payload);
}

/// A request header block: `:method`, `:scheme http`, `:authority localhost`, `:path`, then
/// `fields`, encoded with `encoder` (whose dynamic table follows the connection).
pub fn request_block(
    encoder: &mut Encoder,
    method: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> Vec<u8> {
    let mut block = Vec::new();
    let pseudo =
        [(":method", method), (":scheme", "http"), (":authority", "localhost"), (":path", path)];
    encoder
        .encode(pseudo.iter().chain(fields).map(|(n, v)| (n.as_bytes(), v.as_bytes())), &mut block);
    block
}

/// Sends the preface with `settings_entries`, reads the server's SETTINGS and acknowledges
/// it. Returns the frames read on the way (the server's SETTINGS, its WINDOW_UPDATE...).
pub fn handshake(c: &mut RawClient, settings_entries: &[(u16, u32)]) -> Vec<Frame> {
    c.send(&preface(settings_entries));
    let mut frames = Vec::new();
    loop {
        let f = read(c);
        let theirs = f.kind == SETTINGS && f.flags & ACK == 0;
        frames.push(f);
        if theirs {
            c.send(&settings_ack());
            return frames;
        }
    }
}
