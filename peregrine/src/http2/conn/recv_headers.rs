//! Receiving header sections: HEADERS + CONTINUATION assembled into one block (RFC 9113 §4.3,
//! §6.2, §6.10) within the budgets, decoded by HPACK, then opening a stream or continuing one
//! by the stream-state (§5.1, §5.1.1-§5.1.2) and message (§8.1-§8.3) rules.

use super::event::{HeadersKind, Ready};
use super::lifecycle::Spend;
use super::streams::{Past, Phase, Stream};
use super::validate::Section;
use super::{Conn, Role};
use crate::http2::error::{Error, Reason};
use crate::http2::frame::{Continuation, Headers, RstStream, headers as headers_frame};
use crate::http2::slab::Key;
use crate::http2::stream::{Closed, State};
use crate::http2::stream_id::StreamId;

/// What to do with a field block once decoded (decided from its first frame, so connection
/// errors end the connection before the block is even complete).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Disposition {
    /// A request opening a new stream (server role).
    Open,
    /// More headers on a live stream: a response, or trailers.
    Existing(Key),
    /// A stream error with this code, once the block is decoded (HPACK must still see it).
    Refuse(Reason),
    /// Decode (for HPACK's sake) and drop: a stream we reset, or one above our GOAWAY.
    Ignore,
}

/// A field block being assembled from HEADERS and CONTINUATION frames.
#[derive(Debug)]
pub(super) struct Block {
    /// A HEADERS without END_HEADERS arrived; CONTINUATION must follow.
    pub active: bool,
    pub stream: StreamId,
    pub end_stream: bool,
    /// CONTINUATION frames so far.
    pub frames: u32,
    pub disposition: Disposition,
    /// The fragments so far (at most `Limits::max_header_block_bytes`).
    pub buf: Vec<u8>,
}

impl Block {
    pub fn new() -> Block {
        Block {
            active: false,
            stream: StreamId::ZERO,
            end_stream: false,
            frames: 0,
            disposition: Disposition::Ignore,
            buf: Vec::new(),
        }
    }
}

impl Conn {
    /// A HEADERS frame: decides the block's fate, then decodes it now (END_HEADERS) or starts
    /// collecting CONTINUATIONs.
    pub(super) fn on_headers(&mut self, h: Headers<'_>) -> Option<Ready> {
        let mut disposition = match self.disposition(h.stream) {
            Ok(d) => d,
            Err(e) => {
                self.fail(e);
                return None;
            }
        };
        // RFC 7540 §5.3.1 "A stream cannot depend on itself. An endpoint MUST treat this as a
        // stream error (Section 5.4.2) of type PROTOCOL_ERROR."
        if h.depends_on_itself() && disposition != Disposition::Ignore {
            disposition = Disposition::Refuse(Reason::PROTOCOL_ERROR);
        }
        if h.fragment.len() > self.config.limits.max_header_block_bytes {
            self.fail(Error::connection(Reason::ENHANCE_YOUR_CALM, "field block too large"));
            return None;
        }
        if h.end_headers {
            return self.decode_block(h.stream, h.end_stream, disposition, h.fragment);
        }
        let b = &mut self.block;
        b.active = true;
        b.stream = h.stream;
        b.end_stream = h.end_stream;
        b.frames = 0;
        b.disposition = disposition;
        b.buf.clear();
        b.buf.extend_from_slice(h.fragment);
        None
    }

    /// A CONTINUATION frame (its place already checked): appends its fragment within the
    /// budgets, and decodes the block at END_HEADERS.
    pub(super) fn on_continuation(&mut self, c: Continuation<'_>) -> Option<Ready> {
        let limits = &self.config.limits;
        self.block.frames += 1;
        if self.block.frames > limits.max_continuation_frames {
            self.fail(Error::connection(Reason::ENHANCE_YOUR_CALM, "too many CONTINUATION frames"));
            return None;
        }
        if self.block.buf.len() + c.fragment.len() > limits.max_header_block_bytes {
            self.fail(Error::connection(Reason::ENHANCE_YOUR_CALM, "field block too large"));
            return None;
        }
        self.block.buf.extend_from_slice(c.fragment);
        if !c.end_headers {
            return None;
        }
        self.block.active = false;
        let buf = std::mem::take(&mut self.block.buf);
        let ready = self.decode_block(
            self.block.stream,
            self.block.end_stream,
            self.block.disposition,
            &buf,
        );
        self.block.buf = buf;
        ready
    }

    /// What a HEADERS frame on `id` means (RFC 9113 §5.1, §5.1.1, §5.1.2).
    fn disposition(&mut self, id: StreamId) -> Result<Disposition, Error> {
        if let Some(key) = self.streams.key(id) {
            let state = self.streams.get(key).map_or(State::Idle, |s| s.state);
            return match state {
                State::Open | State::HalfClosedLocal => Ok(Disposition::Existing(key)),
                // half-closed (remote): frames other than WINDOW_UPDATE, PRIORITY, RST_STREAM
                // are a stream error STREAM_CLOSED.
                State::HalfClosedRemote | State::Idle => {
                    Ok(Disposition::Refuse(Reason::STREAM_CLOSED))
                }
                State::Closed(how) => closed(how),
            };
        }
        match self.streams.past(id) {
            Past::Idle if self.role == Role::Server && self.streams.is_peer_id(id) => {
                // §5.1.1: "The first use of a new stream identifier implicitly closes all
                // streams in the "idle" state that might have been initiated by that peer with
                // a lower-valued stream identifier."
                self.streams.last_peer = id;
                // §6.8: after our GOAWAY, streams above its last-stream-id are not processed.
                if self.goaway_sent.is_some_and(|last| id > last) {
                    self.streams.remember(id, Closed::ResetLocally(Reason::REFUSED_STREAM));
                    return Ok(Disposition::Ignore);
                }
                // §5.1.2: "An endpoint that receives a HEADERS frame that causes its advertised
                // concurrent stream limit to be exceeded MUST treat this as a stream error
                // (Section 5.4.2) of type PROTOCOL_ERROR or REFUSED_STREAM."
                if self.streams.peer_active >= self.config.max_concurrent_streams {
                    return Ok(Disposition::Refuse(Reason::REFUSED_STREAM));
                }
                Ok(Disposition::Open)
            }
            // §5.1.1: "Streams initiated by a client MUST use odd-numbered stream identifiers;
            // those initiated by the server MUST use even-numbered stream identifiers. ... An
            // endpoint that receives an unexpected stream identifier MUST respond with a
            // connection error (Section 5.4.1) of type PROTOCOL_ERROR." (A server cannot open
            // streams either: we never enable push.)
            Past::Idle => Err(Error::connection(
                Reason::PROTOCOL_ERROR,
                "HEADERS on a stream the peer may not open",
            )),
            Past::Closed(how) => closed(how),
            // A lower id than one already used, never opened (or long closed): §5.1.1 "The
            // identifier of a newly established stream MUST be numerically greater than all
            // streams that the initiating endpoint has opened or reserved."
            Past::Forgotten if self.goaway_sent.is_some() => Ok(Disposition::Ignore),
            Past::Forgotten => Err(Error::connection(
                Reason::PROTOCOL_ERROR,
                "HEADERS on a closed or skipped stream",
            )),
        }
    }

    /// Decodes a complete field block (RFC 9113 §4.3: a decoding error is a connection error
    /// COMPRESSION_ERROR) and acts on it.
    fn decode_block(
        &mut self,
        id: StreamId,
        end_stream: bool,
        d: Disposition,
        block: &[u8],
    ) -> Option<Ready> {
        // A repeat of the last block can decode to the list the section still holds (see
        // `repeat.rs`).
        let generation = self.decoder.generation();
        let list = self.section.decode_into();
        if !self.repeat.take_again(block, &mut self.decoder, list) {
            if self.decoder.decode(block, list).is_err() {
                self.repeat.forget();
                self.fail(Error::connection(
                    Reason::COMPRESSION_ERROR,
                    "field block does not decode",
                ));
                return None;
            }
            self.repeat.decoded(block, generation, &self.decoder);
        }
        match d {
            // Decoded for HPACK's sake and dropped; the work still costs the control budget.
            Disposition::Ignore => {
                self.spend(Spend::Control);
                None
            }
            Disposition::Refuse(reason) => {
                self.stream_error(id, reason);
                None
            }
            Disposition::Open => self.open_request(id, end_stream),
            Disposition::Existing(key) => self.more_headers(key, end_stream),
        }
    }

    /// A request head on a new stream (server role).
    fn open_request(&mut self, id: StreamId, end_stream: bool) -> Option<Ready> {
        if self.section.list.too_large() {
            self.refuse_too_large(id, end_stream);
            return None;
        }
        let section = Section::Request { connect_protocol: self.config.enable_connect_protocol };
        let info = match self.repeat.check(&self.section.list, section) {
            // RFC 9113 §8.1.1: END_STREAM on the head means no content, so a non-zero
            // content-length cannot match.
            Ok(info) if !(end_stream && info.content_length.is_some_and(|n| n != 0)) => info,
            _ => {
                self.stream_error(id, Reason::PROTOCOL_ERROR);
                return None;
            }
        };
        self.section.info = info;
        let mut s =
            Stream::new(id, false, self.peer.initial_window_size, self.config.initial_window_size);
        s.state.recv_open(end_stream);
        s.recv_phase = Phase::Body;
        s.content_length = info.content_length;
        s.announced = true;
        self.streams.insert(s);
        Some(Ready::Headers { stream: id, kind: HeadersKind::Request, end_stream })
    }

    /// Headers on a live stream: a response head (client role), or trailers.
    fn more_headers(&mut self, key: Key, end_stream: bool) -> Option<Ready> {
        let s = self.streams.get(key)?;
        let (id, phase, head_request, received, expected) =
            (s.id, s.recv_phase, s.head_request, s.received, s.content_length);
        // A list past our SETTINGS_MAX_HEADER_LIST_SIZE: the message is dropped (RFC 9113
        // §6.5.2 "A client can discard responses that it cannot process").
        if self.section.list.too_large() {
            self.stream_error(id, Reason::CANCEL);
            return None;
        }
        let response = self.role == Role::Client && phase == Phase::Head;
        let section = if response { Section::Response } else { Section::Trailers };
        let Ok(info) = self.repeat.check(&self.section.list, section) else {
            self.stream_error(id, Reason::PROTOCOL_ERROR);
            return None;
        };
        let kind = match (response, info.status) {
            // RFC 9113 §8.1: "An endpoint that receives a HEADERS frame with the END_STREAM
            // flag set that carries an informational status code MUST treat the corresponding
            // request or response as malformed".
            (true, 100..=199) if end_stream => None,
            (true, 100..=199) => Some(HeadersKind::Informational),
            (true, status) => {
                // RFC 9113 §8.1.1: responses to HEAD and 204/304 responses have no content,
                // whatever their content-length says.
                let no_content = head_request || status == 204 || status == 304;
                let cl = if no_content { Some(0) } else { info.content_length };
                (!(end_stream && cl.is_some_and(|n| n != 0))).then(|| {
                    if let Some(s) = self.streams.get(key) {
                        s.recv_phase = Phase::Body;
                        s.content_length = cl;
                    }
                    HeadersKind::Response
                })
            }
            // RFC 9113 §8.1: "An endpoint that receives a HEADERS frame without the END_STREAM
            // flag set after receiving the HEADERS frame that opens a request or after
            // receiving a final (non-informational) status code MUST treat the corresponding
            // request or response as malformed". Trailers end the content: it must match its
            // content-length (§8.1.1).
            (false, _) => (end_stream && expected.is_none_or(|cl| cl == received))
                .then_some(HeadersKind::Trailers),
        };
        let Some(kind) = kind else {
            self.stream_error(id, Reason::PROTOCOL_ERROR);
            return None;
        };
        self.section.info = info;
        if end_stream {
            if let Some(s) = self.streams.get(key) {
                s.state.recv_end();
            }
            self.settle(key);
        }
        Some(Ready::Headers { stream: id, kind, end_stream })
    }

    /// A request whose header list is past our SETTINGS_MAX_HEADER_LIST_SIZE: answered with
    /// 431 (RFC 9113 §10.5.1: "A server that receives a larger field block than it is willing
    /// to handle can send an HTTP 431 (Request Header Fields Too Large) status code"), and the
    /// rest of the request refused with RST_STREAM(NO_ERROR) (§8.1: "the server MAY request
    /// that the client abort transmission of a request without error by sending a RST_STREAM
    /// with an error code of NO_ERROR after sending a complete response"). The application
    /// never sees the stream.
    fn refuse_too_large(&mut self, id: StreamId, end_stream: bool) {
        if !self.spend(Spend::ProvokedReset) {
            return;
        }
        let start = headers_frame::begin_block(&mut self.out);
        self.encoder.block(&mut self.out).status(431);
        headers_frame::finish_block(&mut self.out, start, id, true, self.peer.max_frame_size);
        if end_stream {
            self.streams.remember(id, Closed::EndStream);
        } else {
            RstStream { stream: id, reason: Reason::NO_ERROR }.encode(&mut self.out);
            self.streams.remember(id, Closed::ResetLocally(Reason::NO_ERROR));
        }
    }
}

/// HEADERS on a closed stream, by how it closed (RFC 9113 §5.1 "closed").
fn closed(how: Closed) -> Result<Disposition, Error> {
    match how {
        // "An endpoint that receives any frames after receiving a frame with the END_STREAM
        // flag set MUST treat that as a connection error (Section 6.4.1) of type STREAM_CLOSED."
        Closed::EndStream => {
            Err(Error::connection(Reason::STREAM_CLOSED, "HEADERS on a closed stream"))
        }
        // "...after receiving a RST_STREAM MUST treat that as a stream error (Section 5.4.2)
        // of type STREAM_CLOSED."
        Closed::ResetByPeer(_) => Ok(Disposition::Refuse(Reason::STREAM_CLOSED)),
        // "An endpoint MUST ignore frames that it receives on closed streams after it has sent
        // a RST_STREAM frame."
        Closed::ResetLocally(_) => Ok(Disposition::Ignore),
    }
}
