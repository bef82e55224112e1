//! The inbound byte machine: connection preface, frame headers, payloads, in any split
//! (nghttp2's session shape). Whole payloads are decoded from the caller's input when they
//! arrived whole, else from a buffer of at most SETTINGS_MAX_FRAME_SIZE octets; DATA is never
//! buffered, its octets are handed out as they arrive.

use super::event::{Ready, Src};
use super::lifecycle::Spend;
use super::{Conn, PREFACE};
use crate::http2::error::{Error, Reason};
use crate::http2::frame::{self, Frame, HEAD_LEN, Head, Kind, data, flags, padding};
use crate::http2::stream_id::StreamId;

/// Where the inbound machine is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Inbound {
    /// Server: matching the client's connection preface magic (RFC 9113 §3.4).
    Preface { matched: usize },
    /// Reading a 9-octet frame header.
    Head,
    /// Reading a payload to decode whole.
    Payload(Head),
    /// Reading a padded DATA frame's Pad Length octet.
    DataPad(Head),
    /// Handing out (or dropping) a DATA frame's octets, then skipping its padding.
    Data { stream: StreamId, deliver: bool, left: u32, pad: u32, end_stream: bool },
    /// Discarding payload octets.
    Skip(u32),
}

/// One step's outcome: octets consumed, an event, and whether anything changed.
type Step = (usize, Option<Ready>, bool);

const STALLED: Step = (0, None, false);

impl Conn {
    /// Runs the machine over `input` until it yields an event or needs more input. Once the
    /// connection is closed all input is consumed and ignored.
    pub(super) fn recv_frames(&mut self, input: &[u8]) -> (usize, Option<Ready>) {
        let mut pos = 0;
        loop {
            if self.closed {
                return (input.len(), self.pending.pop_front().map(Ready::Pending));
            }
            let (used, ready, progress) = self.step(&input[pos..], pos);
            pos += used;
            if ready.is_some() {
                return (pos, ready);
            }
            if let Some(p) = self.pending.pop_front() {
                return (pos, Some(Ready::Pending(p)));
            }
            if !progress {
                return (pos, None);
            }
        }
    }

    fn step(&mut self, input: &[u8], base: usize) -> Step {
        match self.inbound {
            Inbound::Preface { matched } => {
                let n = (PREFACE.len() - matched).min(input.len());
                if n == 0 {
                    return STALLED;
                }
                // RFC 9113 §3.4: "Clients and servers MUST treat an invalid connection preface
                // as a connection error (Section 5.4.1) of type PROTOCOL_ERROR."
                if input[..n] != PREFACE[matched..matched + n] {
                    self.fail(Error::connection(
                        Reason::PROTOCOL_ERROR,
                        "invalid connection preface",
                    ));
                    return (n, None, true);
                }
                let matched = matched + n;
                self.inbound = if matched == PREFACE.len() {
                    Inbound::Head
                } else {
                    Inbound::Preface { matched }
                };
                (n, None, true)
            }
            Inbound::Head => {
                let n = (HEAD_LEN - self.head_got).min(input.len());
                if n == 0 {
                    return STALLED;
                }
                self.head_buf[self.head_got..self.head_got + n].copy_from_slice(&input[..n]);
                self.head_got += n;
                if self.head_got < HEAD_LEN {
                    return (n, None, true);
                }
                self.head_got = 0;
                let ready = self.on_head(Head::parse(&self.head_buf));
                (n, ready, true)
            }
            Inbound::Payload(head) => self.payload_step(head, input, base),
            Inbound::DataPad(head) => {
                let Some(&pad) = input.first() else { return STALLED };
                let ready = self.begin_data(head, Some(pad));
                (1, ready, true)
            }
            Inbound::Data { stream, deliver, left, pad, end_stream } => {
                let n = (left as usize).min(input.len());
                if n == 0 {
                    return STALLED;
                }
                let left = left - n as u32;
                self.inbound = match (left, pad) {
                    (0, 0) => Inbound::Head,
                    (0, pad) => Inbound::Skip(pad),
                    (left, pad) => Inbound::Data { stream, deliver, left, pad, end_stream },
                };
                let ready = deliver.then(|| Ready::Data {
                    stream,
                    data: base..base + n,
                    end_stream: end_stream && left == 0,
                });
                (n, ready, true)
            }
            Inbound::Skip(left) => {
                let n = (left as usize).min(input.len());
                if n == 0 {
                    return STALLED;
                }
                let left = left - n as u32;
                self.inbound = if left == 0 { Inbound::Head } else { Inbound::Skip(left) };
                (n, None, true)
            }
        }
    }

    /// A payload to decode whole: from the input when it is all there, else buffered.
    fn payload_step(&mut self, head: Head, input: &[u8], base: usize) -> Step {
        let len = head.len as usize;
        if self.payload.is_empty() && input.len() >= len {
            self.inbound = Inbound::Head;
            let ready = self.on_frame(head, &input[..len], Some(base));
            return (len, ready, true);
        }
        let n = (len - self.payload.len()).min(input.len());
        if n == 0 {
            return STALLED;
        }
        self.payload.extend_from_slice(&input[..n]);
        if self.payload.len() < len {
            return (n, None, true);
        }
        self.inbound = Inbound::Head;
        let buf = std::mem::take(&mut self.payload);
        let ready = self.on_frame(head, &buf, None);
        // Kept until the next frame: a GOAWAY event borrows its debug data from here.
        self.payload = buf;
        (n, ready, true)
    }

    /// A frame header arrived: checks what it alone can prove, then picks how to read the
    /// payload.
    fn on_head(&mut self, head: Head) -> Option<Ready> {
        self.payload.clear();
        if let Err(e) = head.check_len(self.config.max_frame_size) {
            self.fail(e);
            return None;
        }
        // RFC 9113 §3.4: the preface is "followed by a SETTINGS frame"; "Clients and servers
        // MUST treat an invalid connection preface as a connection error".
        if !self.seen_settings {
            if head.kind != Kind::SETTINGS || head.has(flags::ACK) {
                self.fail(Error::connection(
                    Reason::PROTOCOL_ERROR,
                    "preface not followed by SETTINGS",
                ));
                return None;
            }
            self.seen_settings = true;
        }
        // RFC 9113 §4.3: "Each field block is transmitted as a contiguous sequence of frames,
        // with no interleaved frames of any other type or from any other stream. ... A
        // receiver MUST treat the receipt of any other type of frame or a frame on a different
        // stream as a connection error (Section 5.4.1) of type PROTOCOL_ERROR." §6.10: "A
        // CONTINUATION frame MUST be preceded by a HEADERS, PUSH_PROMISE or CONTINUATION frame
        // without the END_HEADERS flag set."
        let continuation = head.kind == Kind::CONTINUATION;
        if self.block.active && (!continuation || head.stream != self.block.stream) {
            self.fail(Error::connection(Reason::PROTOCOL_ERROR, "frame inside a field block"));
            return None;
        }
        if !self.block.active && continuation {
            self.fail(Error::connection(
                Reason::PROTOCOL_ERROR,
                "CONTINUATION without a field block",
            ));
            return None;
        }
        match head.kind {
            Kind::DATA => {
                if let Err(e) = data::check_head(head) {
                    self.fail(e);
                    return None;
                }
                if head.has(flags::PADDED) {
                    self.inbound = Inbound::DataPad(head);
                    return None;
                }
                self.begin_data(head, None)
            }
            // RFC 9113 §5.5: "Implementations MUST discard frames that have unknown or
            // unsupported types." They still cost work: the control budget.
            Kind(k) if k > Kind::CONTINUATION.0 => {
                if self.spend(Spend::Control) {
                    self.inbound =
                        if head.len == 0 { Inbound::Head } else { Inbound::Skip(head.len) };
                }
                None
            }
            _ => {
                self.inbound = Inbound::Payload(head);
                None
            }
        }
    }

    /// A whole non-DATA payload: decodes it and hands it to its handler. `base` is its offset
    /// in the caller's input, or `None` when it sits in the frame buffer.
    fn on_frame(&mut self, head: Head, payload: &[u8], base: Option<usize>) -> Option<Ready> {
        let frame = match frame::decode(head, payload) {
            Ok(f) => f,
            Err(e) => {
                // A bad PRIORITY still spends the control budget a good one would.
                if head.kind != Kind::PRIORITY || self.spend(Spend::Control) {
                    self.error(e);
                }
                return None;
            }
        };
        match frame {
            Frame::Headers(h) => self.on_headers(h),
            Frame::Continuation(c) => self.on_continuation(c),
            Frame::Priority(_) => {
                // RFC 9113 §5.3.2: priority signals "MAY be ignored"; the frame is parsed (its
                // errors above are real) and dropped.
                self.spend(Spend::Control);
                None
            }
            Frame::RstStream(r) => self.on_rst_stream(r),
            Frame::Settings(s) => self.on_settings(s),
            // RFC 9113 §8.4: "A client cannot push. Thus, servers MUST treat the receipt of a
            // PUSH_PROMISE frame as a connection error (Section 5.4.1) of type
            // PROTOCOL_ERROR." Clients advertised SETTINGS_ENABLE_PUSH = 0 in their first
            // frame, which the server reads before any request: §6.5.2 makes a PUSH_PROMISE a
            // connection error PROTOCOL_ERROR then too.
            Frame::PushPromise(_) => {
                self.fail(Error::connection(
                    Reason::PROTOCOL_ERROR,
                    "PUSH_PROMISE with push disabled",
                ));
                None
            }
            Frame::Ping(p) => self.on_ping(p),
            Frame::GoAway(g) => {
                let debug = match base {
                    Some(b) => Src::Input(b + 8..b + payload.len()),
                    None => Src::Buffer(8..payload.len()),
                };
                self.on_goaway(g, debug)
            }
            Frame::WindowUpdate(w) => self.on_window_update(w),
            // DATA and unknown types never reach here (on_head routes them).
            Frame::Data(_) | Frame::Unknown(_) => None,
        }
    }

    /// The octets of a DATA frame after its Pad Length octet, if any.
    pub(super) fn data_rest(head: Head) -> u32 {
        head.len - padding::prefix_len(head)
    }
}
