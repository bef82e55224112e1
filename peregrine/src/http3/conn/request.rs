//! [`RequestFrames`]: the frames of one request stream (RFC 9114 §4.1), from any split: a
//! HEADERS frame, DATA frames, optionally a trailing HEADERS frame, and nothing after.
//! Field sections are whole when handed out (for QPACK); DATA payloads are handed out as
//! they arrive, never buffered.

use crate::http3::error::{Code, Error};
use crate::http3::frame::{self, Head, Kind, On};
use crate::http3::stream_id::StreamId;
use crate::role::Role;

/// A piece of a request or response, as [`RequestFrames::recv`] hands it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part<'a> {
    /// A whole field section: the head first, then (after DATA) the trailers.
    Headers(&'a [u8]),
    /// Body octets: some or all of a DATA frame's payload.
    Data(&'a [u8]),
    /// The stream ended after a whole message.
    End,
}

/// What one [`RequestFrames::step`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A whole field section, in [`RequestFrames::section`] until the next step.
    Headers,
    /// Body octets: this range of the input given to the step (zero copy).
    Data(std::ops::Range<usize>),
    /// The stream ended after a whole message.
    End,
}

/// Where the message is (§4.1: "HEADERS frame, zero or more DATA frames, optionally one
/// HEADERS frame containing the trailer section").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Head,
    Body,
    Trailers,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reading {
    Head,
    /// A HEADERS payload of this length, buffered.
    Section(u64),
    /// A whole section in `buf`, handed out by the last step.
    Ready,
    /// Octets of DATA payload still to come.
    Data(u64),
    /// Octets of an ignored frame still to skip.
    Skip(u64),
    /// The stream ended.
    Ended,
}

/// The frame reader of one request stream (either role: requests on a server, responses on
/// a client).
pub struct RequestFrames {
    stream: StreamId,
    role: Role,
    phase: Phase,
    reading: Reading,
    buf: Vec<u8>,
    max_section: u64,
    ignored: u32,
    max_ignored: u32,
}

impl RequestFrames {
    /// The reader for `stream` in `role`, refusing field sections longer than
    /// `max_section` octets (our SETTINGS_MAX_FIELD_SECTION_SIZE bounds the decoded size;
    /// the encoded one is bounded by it too) and more than `max_ignored` ignored or empty
    /// frames.
    pub fn new(stream: StreamId, role: Role, max_section: u64, max_ignored: u32) -> Self {
        RequestFrames {
            stream,
            role,
            phase: Phase::Head,
            reading: Reading::Head,
            buf: Vec::new(),
            max_section,
            ignored: 0,
            max_ignored,
        }
    }

    /// Starts over for a new stream, keeping the buffer (a connection reuses readers).
    pub fn reset(&mut self, stream: StreamId) {
        self.stream = stream;
        self.phase = Phase::Head;
        self.reading = Reading::Head;
        self.buf.clear();
        self.ignored = 0;
    }

    /// The stream read.
    pub fn stream(&self) -> StreamId {
        self.stream
    }

    /// The field section of the last [`Step::Headers`].
    pub fn section(&self) -> &[u8] {
        if self.reading == Reading::Ready { &self.buf } else { &[] }
    }

    /// Swaps the buffer holding the last [`Step::Headers`]' section with `other` (to keep a
    /// blocked section without copying it).
    pub fn swap_section(&mut self, other: &mut Vec<u8>) {
        std::mem::swap(&mut self.buf, other);
        self.buf.clear();
    }

    /// The last section was an informational response (RFC 9114 §4.1: "one or more
    /// informational responses" may precede the final one): a HEADERS frame with the head
    /// comes next, not trailers.
    pub fn informational(&mut self) {
        self.phase = Phase::Head;
    }

    fn ignore(&mut self) -> Result<(), Error> {
        self.ignored += 1;
        if self.ignored > self.max_ignored {
            return Err(Error::connection(
                Code::H3_EXCESSIVE_LOAD,
                "too many empty or unknown frames",
            ));
        }
        Ok(())
    }

    /// Reads `bytes` of the stream (`fin`: the stream ends after them), handing each piece to
    /// `on` in order. [`RequestFrames::step`] without the bookkeeping.
    ///
    /// # Errors
    /// As [`RequestFrames::step`].
    pub fn recv(
        &mut self,
        mut bytes: &[u8],
        fin: bool,
        mut on: impl FnMut(Part<'_>),
    ) -> Result<(), Error> {
        loop {
            let (n, step) = self.step(bytes, fin)?;
            match step {
                None => return Ok(()),
                Some(Step::Headers) => on(Part::Headers(&self.buf)),
                Some(Step::Data(r)) => on(Part::Data(&bytes[r])),
                Some(Step::End) => on(Part::End),
            }
            bytes = &bytes[n..];
        }
    }

    /// Reads `bytes` of the stream (any split; `fin`: the stream ends after them) up to the
    /// first piece of the message they complete. Returns the octets consumed and that piece;
    /// with `None`, every octet was consumed and more are needed. Call again with the rest.
    ///
    /// # Errors
    /// - §4.1: "Receipt of an invalid sequence of frames MUST be treated as a connection error
    ///   of type H3_FRAME_UNEXPECTED" (DATA before HEADERS, anything after the trailers), and
    ///   control frames on a request stream (§7.2).
    /// - §7.1: a stream that ends inside a frame, connection H3_FRAME_ERROR.
    /// - A stream that ends before its HEADERS: stream H3_REQUEST_INCOMPLETE (§4.1.2).
    /// - PUSH_PROMISE: to a server H3_FRAME_UNEXPECTED (§7.2.5), to a client H3_ID_ERROR (we
    ///   send no MAX_PUSH_ID, §4.6).
    /// - A field section longer than allowed: stream H3_EXCESSIVE_LOAD; too many empty or
    ///   unknown frames: connection H3_EXCESSIVE_LOAD.
    pub fn step(&mut self, bytes: &[u8], fin: bool) -> Result<(usize, Option<Step>), Error> {
        if self.reading == Reading::Ready {
            self.buf.clear();
            self.reading = Reading::Head;
        }
        let mut at = 0;
        while at < bytes.len() {
            let rest = &bytes[at..];
            match self.reading {
                Reading::Head => {
                    let take = rest.len().min(Head::MAX_LEN - self.buf.len());
                    self.buf.extend_from_slice(&rest[..take]);
                    let Some((head, n)) = Head::parse(&self.buf) else {
                        at += take;
                        continue;
                    };
                    at += take - (self.buf.len() - n);
                    self.buf.clear();
                    self.head(head)?;
                    if self.reading == Reading::Section(0) {
                        self.reading = Reading::Ready;
                        return Ok((at, Some(Step::Headers)));
                    }
                }
                Reading::Section(len) => {
                    let want = (len - self.buf.len() as u64) as usize;
                    let take = rest.len().min(want);
                    self.buf.extend_from_slice(&rest[..take]);
                    at += take;
                    if take == want {
                        self.reading = Reading::Ready;
                        return Ok((at, Some(Step::Headers)));
                    }
                }
                Reading::Data(left) => {
                    let k = (rest.len() as u64).min(left) as usize;
                    self.reading = if k as u64 == left {
                        Reading::Head
                    } else {
                        Reading::Data(left - k as u64)
                    };
                    if k > 0 {
                        return Ok((at + k, Some(Step::Data(at..at + k))));
                    }
                }
                Reading::Skip(left) => {
                    let k = (rest.len() as u64).min(left);
                    at += k as usize;
                    self.reading = if k == left { Reading::Head } else { Reading::Skip(left - k) };
                }
                Reading::Ended => {
                    return Err(Error::connection(Code::H3_FRAME_ERROR, "data after the end"));
                }
                Reading::Ready => unreachable!("cleared above"),
            }
        }
        if fin && self.reading != Reading::Ended {
            if self.reading != Reading::Head || !self.buf.is_empty() {
                return Err(Error::connection(Code::H3_FRAME_ERROR, "stream ends inside a frame"));
            }
            if self.phase == Phase::Head {
                return Err(Error::stream(self.stream, Code::H3_REQUEST_INCOMPLETE));
            }
            self.reading = Reading::Ended;
            return Ok((at, Some(Step::End)));
        }
        Ok((at, None))
    }

    fn head(&mut self, head: Head) -> Result<(), Error> {
        frame::check_placement(head.kind, On::Request)?;
        let unexpected = |why| Error::connection(Code::H3_FRAME_UNEXPECTED, why);
        self.reading = match head.kind {
            Kind::HEADERS => {
                self.phase = match self.phase {
                    Phase::Head => Phase::Body,
                    Phase::Body => Phase::Trailers,
                    Phase::Trailers => return Err(unexpected("HEADERS after the trailers")),
                };
                if head.len > self.max_section {
                    return Err(Error::stream(self.stream, Code::H3_EXCESSIVE_LOAD));
                }
                Reading::Section(head.len)
            }
            Kind::DATA => {
                match self.phase {
                    Phase::Head => return Err(unexpected("DATA before HEADERS")),
                    Phase::Trailers => return Err(unexpected("DATA after the trailers")),
                    Phase::Body => {}
                }
                if head.len == 0 {
                    self.ignore()?;
                }
                if head.len == 0 { Reading::Head } else { Reading::Data(head.len) }
            }
            Kind::PUSH_PROMISE => {
                return Err(match self.role {
                    Role::Server => unexpected("PUSH_PROMISE from a client"),
                    Role::Client => {
                        Error::connection(Code::H3_ID_ERROR, "push without MAX_PUSH_ID")
                    }
                });
            }
            _ => {
                self.ignore()?;
                if head.len == 0 { Reading::Head } else { Reading::Skip(head.len) }
            }
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// What a stream's bytes read as: `H<hex>` a section, `D<hex>` body octets (joined),
    /// `E` the end; or the error's code.
    fn read(role: Role, bytes: &[u8], split: usize) -> Result<Vec<String>, Code> {
        let mut r = RequestFrames::new(StreamId::new(0), role, 16, 3);
        let mut got: Vec<String> = Vec::new();
        let chunks: Vec<&[u8]> =
            if bytes.is_empty() { vec![&[]] } else { bytes.chunks(split).collect() };
        let last = chunks.len() - 1;
        for (k, c) in chunks.iter().enumerate() {
            r.recv(c, k == last, |p| match p {
                Part::Headers(h) => got
                    .push(format!("H{}", h.iter().map(|b| format!("{b:02x}")).collect::<String>())),
                Part::Data(d) => {
                    let s: String = d.iter().map(|b| format!("{b:02x}")).collect();
                    match got.last_mut() {
                        Some(l) if l.starts_with('D') => l.push_str(&s),
                        _ => got.push(format!("D{s}")),
                    }
                }
                Part::End => got.push("E".into()),
            })
            .map_err(|e| e.code())?;
        }
        Ok(got)
    }

    /// A row: why, our role, the stream's bytes, what they read as.
    type Row = (&'static str, Role, &'static str, Result<&'static [&'static str], Code>);

    #[test]
    fn request_stream_frames() {
        let cases: [Row; 16] = [
            ("headers only", Role::Server, "0102 0000", Ok(&["H0000", "E"])),
            (
                "headers, data, trailers",
                Role::Server,
                "0102 0000 0003 aabbcc 0001 dd 0101 ff",
                Ok(&["H0000", "Daabbccdd", "Hff", "E"]),
            ),
            ("empty section", Role::Server, "0100", Ok(&["H", "E"])),
            (
                "unknown frame skipped",
                Role::Server,
                "0101 00 2102 ffff 0001 aa",
                Ok(&["H00", "Daa", "E"]),
            ),
            ("DATA first", Role::Server, "0001 aa", Err(Code::H3_FRAME_UNEXPECTED)),
            (
                "DATA after trailers",
                Role::Server,
                "0100 0100 0001 aa",
                Err(Code::H3_FRAME_UNEXPECTED),
            ),
            ("third HEADERS", Role::Server, "0100 0100 0100", Err(Code::H3_FRAME_UNEXPECTED)),
            ("SETTINGS", Role::Server, "0100 0400", Err(Code::H3_FRAME_UNEXPECTED)),
            ("GOAWAY", Role::Client, "0701 00", Err(Code::H3_FRAME_UNEXPECTED)),
            ("HTTP/2 frame", Role::Server, "0100 0900", Err(Code::H3_FRAME_UNEXPECTED)),
            (
                "PUSH_PROMISE to a server",
                Role::Server,
                "0100 0501 00",
                Err(Code::H3_FRAME_UNEXPECTED),
            ),
            ("PUSH_PROMISE to a client", Role::Client, "0100 0501 00", Err(Code::H3_ID_ERROR)),
            ("ends inside a frame", Role::Server, "0102 00", Err(Code::H3_FRAME_ERROR)),
            ("ends without HEADERS", Role::Server, "", Err(Code::H3_REQUEST_INCOMPLETE)),
            ("section past 16 octets", Role::Server, "0111", Err(Code::H3_EXCESSIVE_LOAD)),
            (
                "empty DATA flood",
                Role::Server,
                "0100 0000 0000 0000 0000",
                Err(Code::H3_EXCESSIVE_LOAD),
            ),
        ];
        for (why, role, bytes, expect) in cases {
            let bytes = hex(bytes);
            let expect = expect.map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            for split in [usize::MAX, 1, 2, 3, 5] {
                assert_eq!(read(role, &bytes, split), expect, "{why} (split {split})");
            }
        }
    }
}
