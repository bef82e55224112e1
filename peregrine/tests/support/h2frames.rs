//! Raw HTTP/2 frames for the tests that speak to the server byte by byte: a reader, and the
//! few builders those tests need. Frames are read off a [`RawClient`](super::RawClient).

use super::RawClient;

/// One frame as read off the wire (RFC 9113 §4.1).
#[derive(Debug, Clone)]
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

/// END_STREAM, on DATA and HEADERS.
pub const END_STREAM: u8 = 0x1;

/// Reads one frame.
pub fn read(c: &mut RawClient) -> Frame {
    let head = c.take(9);
    let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
    let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    Frame { kind: head[3], flags: head[4], stream, payload: c.take(len) }
}

/// Reads frames until one ends `stream` (DATA or HEADERS with END_STREAM, or RST_STREAM);
/// returns them all.
pub fn read_until_end_stream(c: &mut RawClient, stream: u32) -> Vec<Frame> {
    let mut frames = Vec::new();
    loop {
        let f = read(c);
        let end = f.stream == stream
            && ((matches!(f.kind, 0 | 1) && f.flags & END_STREAM != 0) || f.kind == 3);
        frames.push(f);
        if end {
            return frames;
        }
    }
}

/// A frame's bytes.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut out = len.to_be_bytes()[1..].to_vec();
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}
