//! [`Message`]: one request stream's message, its frames joined to QPACK and to HTTP's rules
//! (RFC 9114 §4.1-§4.3), for both roles: a server reads requests and writes responses, a
//! client writes requests and reads responses. Field sections are decoded into the
//! connection's reused [`FieldSection`] (the same type and validation HTTP/2 uses, RFC 9114
//! §4.2 stating RFC 9113 §8.2's rules), DATA is handed over as ranges of the caller's input.

use super::request::{RequestFrames, Step};
use super::uni::Conn;
use crate::http2::conn::{FieldSection, Rules, check_section};
use crate::http3::error::{Code, Error};
use crate::http3::frame::{Head, Kind, data};
use crate::http3::qpack::{Encoder, Section};
use crate::http3::stream_id::StreamId;
use crate::role::Role;

/// What [`Conn::recv_message`] and [`Conn::resume_message`] found on a request stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MessageEvent {
    /// The head (a request on a server, the final response on a client), decoded and
    /// validated: in [`Conn::section`] until the next call on any message.
    Head,
    /// An informational (1xx) response, client only: in [`Conn::section`]; the final
    /// response follows.
    Informational(u16),
    /// Body octets: this range of the input given (zero copy).
    Data(std::ops::Range<usize>),
    /// The trailers, decoded and validated: in [`Conn::section`].
    Trailers,
    /// The stream ended after a whole message.
    End,
    /// A field section waits for the peer's encoder stream (RFC 9204 §2.1.2): stop reading
    /// this stream and call [`Conn::resume_message`] after [`Event::Unblocked`] names it.
    ///
    /// [`Event::Unblocked`]: super::Event::Unblocked
    Blocked,
}

/// A request's pseudo-header fields (RFC 9114 §4.3.1), for [`Conn::encode_request`].
#[derive(Clone, Copy, Debug)]
pub struct RequestPseudo<'a> {
    /// `:method`.
    pub method: &'a [u8],
    /// `:scheme`.
    pub scheme: &'a [u8],
    /// `:authority`.
    pub authority: &'a [u8],
    /// `:path`.
    pub path: &'a [u8],
}

/// Where a message's sections are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Head,
    Body,
    Trailers,
    /// Ended, failed or cancelled: nothing more is read.
    Done,
}

/// The inbound half of one request stream: a request on a server, a response on a client.
/// Made by [`Conn::message`]; reusable for another stream with [`Conn::reuse_message`]
/// (its buffers kept, so a connection's streams allocate nothing once grown).
pub struct Message {
    frames: RequestFrames,
    phase: Phase,
    /// A blocked section's octets, kept until the encoder stream brings its entries.
    blocked: Vec<u8>,
    is_blocked: bool,
    /// The content-length the DATA must add up to (RFC 9114 §4.1.2).
    content_length: Option<u64>,
    received: u64,
    /// The response cannot have content (a response to HEAD, RFC 9110 §6.4.1).
    no_content: bool,
}

impl Message {
    /// The stream.
    pub fn stream(&self) -> StreamId {
        self.frames.stream()
    }

    /// Whether a section waits for the encoder stream.
    pub fn is_blocked(&self) -> bool {
        self.is_blocked
    }

    /// Whether the message ended, failed or was cancelled.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// The message is the response to a HEAD request (client): its content-length describes
    /// what a GET would carry, not the DATA (RFC 9114 §4.1.2, RFC 9110 §6.4.1).
    pub fn set_no_content(&mut self, no_content: bool) {
        self.no_content = no_content;
    }
}

impl Conn {
    /// The reader of the message arriving on request stream `stream`: a request (server) or
    /// a response (client).
    pub fn message(&self, stream: StreamId) -> Message {
        Message {
            frames: RequestFrames::new(
                stream,
                self.role,
                self.config.max_field_section_size,
                self.config.max_ignored_frames,
            ),
            phase: Phase::Head,
            blocked: Vec::new(),
            is_blocked: false,
            content_length: None,
            received: 0,
            no_content: false,
        }
    }

    /// Makes `message` the reader of a new stream, keeping its buffers.
    pub fn reuse_message(&self, message: &mut Message, stream: StreamId) {
        message.frames.reset(stream);
        message.phase = Phase::Head;
        message.blocked.clear();
        message.is_blocked = false;
        message.content_length = None;
        message.received = 0;
        message.no_content = false;
    }

    /// The last field section decoded by [`Conn::recv_message`] or [`Conn::resume_message`].
    pub fn section(&self) -> &FieldSection {
        &self.section
    }

    /// Reads `bytes` of `message`'s stream (any split; `fin`: the stream ends after them) up
    /// to the first event they complete. Returns the octets consumed and the event; with
    /// `None` every octet was consumed and more are needed. Call again with the rest (after
    /// [`MessageEvent::Blocked`], not before [`Conn::resume_message`] succeeded).
    ///
    /// After a field section, poll the decoder stream ([`Conn::poll_decoder_stream`]): it may
    /// hold a Section Acknowledgment.
    ///
    /// # Errors
    /// The frame errors of [`RequestFrames::step`]; stream H3_MESSAGE_ERROR for a malformed
    /// message (RFC 9114 §4.1.2: field syntax, pseudo-headers, content-length against DATA);
    /// stream H3_EXCESSIVE_LOAD for a field section past our SETTINGS_MAX_FIELD_SECTION_SIZE;
    /// QPACK's connection errors. After a stream error the message is done (its QPACK state
    /// cancelled, RFC 9204 §4.4.2): reset the stream with the code.
    pub fn recv_message(
        &mut self,
        message: &mut Message,
        bytes: &[u8],
        fin: bool,
    ) -> Result<(usize, Option<MessageEvent>), Error> {
        if message.phase == Phase::Done {
            return Ok((bytes.len(), None));
        }
        if message.is_blocked {
            return Ok((0, Some(MessageEvent::Blocked)));
        }
        let r = self.step(message, bytes, fin);
        if r.is_err() {
            self.cancel_message(message);
        }
        r
    }

    fn step(
        &mut self,
        message: &mut Message,
        bytes: &[u8],
        fin: bool,
    ) -> Result<(usize, Option<MessageEvent>), Error> {
        let (n, step) = message.frames.step(bytes, fin)?;
        let event = match step {
            None => None,
            Some(Step::Headers) => Some(self.decode(message)?),
            Some(Step::Data(range)) => {
                message.received += range.len() as u64;
                if message.content_length.is_some_and(|c| message.received > c) {
                    return Err(malformed(message));
                }
                Some(MessageEvent::Data(range))
            }
            Some(Step::End) => {
                self.check_length(message)?;
                message.phase = Phase::Done;
                Some(MessageEvent::End)
            }
        };
        Ok((n, event))
    }

    /// Decodes a blocked section again, once [`Event::Unblocked`](super::Event::Unblocked)
    /// named the stream. `None` when the message was not blocked.
    ///
    /// # Errors
    /// As [`Conn::recv_message`].
    pub fn resume_message(&mut self, message: &mut Message) -> Result<Option<MessageEvent>, Error> {
        if !message.is_blocked || message.phase == Phase::Done {
            return Ok(None);
        }
        let r = self.decode(message);
        if r.is_err() {
            self.cancel_message(message);
        }
        r.map(Some)
    }

    /// The peer reset the stream, or we stop reading it, before its message ended: forgets
    /// a blocked section and tells the peer's encoder (RFC 9204 §4.4.2: "When an endpoint
    /// receives a stream reset before the end of a stream or before all encoded field
    /// sections are processed on that stream, or when it abandons reading of a stream, it
    /// generates a Stream Cancellation instruction").
    pub fn cancel_message(&mut self, message: &mut Message) {
        if message.phase != Phase::Done {
            message.phase = Phase::Done;
            message.is_blocked = false;
            self.decoder.cancel_stream(message.stream());
        }
    }

    /// Decodes and checks the section the reader (or the blocked buffer) holds.
    fn decode(&mut self, message: &mut Message) -> Result<MessageEvent, Error> {
        let stream = message.stream();
        let block =
            if message.is_blocked { &message.blocked[..] } else { message.frames.section() };
        let list = self.section.decode_into();
        if self.decoder.decode_section(stream, block, list)? == Section::Blocked {
            if !message.is_blocked {
                message.frames.swap_section(&mut message.blocked);
                message.is_blocked = true;
            }
            return Ok(MessageEvent::Blocked);
        }
        message.is_blocked = false;
        if self.section.list.too_large() {
            // §4.2.2: past our SETTINGS_MAX_FIELD_SECTION_SIZE.
            return Err(Error::stream(stream, Code::H3_EXCESSIVE_LOAD));
        }
        let rules = match (message.phase, self.role) {
            (Phase::Head, Role::Server) => Rules::Request { connect_protocol: false },
            (Phase::Head, Role::Client) => Rules::Response,
            _ => Rules::Trailers,
        };
        // §4.1.2: "Malformed requests or responses that are detected MUST be treated as a
        // stream error of type H3_MESSAGE_ERROR."
        self.section.info =
            check_section(&self.section.list, rules).map_err(|_| malformed(message))?;
        if rules == (Rules::Request { connect_protocol: false }) && !authority_rule(&self.section) {
            return Err(malformed(message));
        }
        match message.phase {
            Phase::Head => {
                let status = self.section.status();
                if let Some(s @ 100..=199) = status {
                    message.frames.informational();
                    return Ok(MessageEvent::Informational(s));
                }
                message.phase = Phase::Body;
                // §4.1.2: a response defined to have no content "MAY have a nonzero
                // content-length header field, even though no content is included in DATA
                // frames" (RFC 9110 §6.4.1: to HEAD, 204 and 304).
                let no_content = message.no_content || matches!(status, Some(204 | 304));
                message.content_length =
                    if no_content { Some(0) } else { self.section.content_length() };
                Ok(MessageEvent::Head)
            }
            _ => {
                self.check_length(message)?;
                message.phase = Phase::Trailers;
                Ok(MessageEvent::Trailers)
            }
        }
    }

    /// §4.1.2: "A request or response that is defined as having content when it contains a
    /// Content-Length header field is malformed if the value of the Content-Length header
    /// field does not equal the sum of the DATA frame lengths received."
    fn check_length(&self, message: &Message) -> Result<(), Error> {
        match message.content_length {
            Some(c) if c != message.received => Err(malformed(message)),
            _ => Ok(()),
        }
    }

    /// Appends a HEADERS frame with a request head for `stream`: the pseudo-header fields,
    /// then `fields` (lowercase names, no connection-specific fields: RFC 9114 §4.2).
    /// Entries it inserts go to our encoder stream: poll it ([`Conn::poll_encoder_stream`])
    /// and write those bytes too.
    pub fn encode_request<'f, I>(
        &mut self,
        stream: StreamId,
        pseudo: RequestPseudo<'f>,
        fields: I,
        dst: &mut Vec<u8>,
    ) where
        I: IntoIterator<Item = (&'f [u8], &'f [u8])>,
        I::IntoIter: Clone,
    {
        let p = pseudo;
        let lines: [(&[u8], &[u8]); 4] = [
            (b":method", p.method),
            (b":scheme", p.scheme),
            (b":authority", p.authority),
            (b":path", p.path),
        ];
        self.encode_section(stream, lines.into_iter().chain(fields), dst);
    }

    /// Appends a HEADERS frame with a response head (`:status`, then `fields`) for `stream`.
    /// As [`Conn::encode_request`] for the fields and the encoder stream.
    pub fn encode_response<'f, I>(
        &mut self,
        stream: StreamId,
        status: u16,
        fields: I,
        dst: &mut Vec<u8>,
    ) where
        I: IntoIterator<Item = (&'f [u8], &'f [u8])>,
        I::IntoIter: Clone,
    {
        let digits: &'static [u8] = &STATUS_DIGITS[usize::from(status.min(999))];
        let pseudo: [(&[u8], &[u8]); 1] = [(b":status", digits)];
        self.encode_section(stream, pseudo.into_iter().chain(fields), dst);
    }

    /// Appends a HEADERS frame with trailers for `stream` (no pseudo-headers, §4.1).
    pub fn encode_trailers<'f>(
        &mut self,
        stream: StreamId,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        dst: &mut Vec<u8>,
    ) {
        // Trailers are rarely the same twice: encoded without the last section's copy.
        let fields = fields.into_iter().map(|(n, v)| (n, v, sensitive(n)));
        self.frame_section(dst, |encoder, section| encoder.encode_fresh(stream, fields, section));
    }

    /// Appends the header of a DATA frame of `len` octets; the caller sends them after it
    /// (from its own buffer: no copy here).
    pub fn encode_data_head(len: usize, dst: &mut Vec<u8>) {
        data::encode_head(len, dst);
    }

    fn encode_section<'f, I>(&mut self, stream: StreamId, fields: I, dst: &mut Vec<u8>)
    where
        I: IntoIterator<Item = (&'f [u8], &'f [u8])>,
        I::IntoIter: Clone,
    {
        // Credentials are never inserted into the table, and carry the never-indexed bit
        // (RFC 9204 §7.1.3: a table entry guessed by probing would reveal them).
        let fields = fields.into_iter().map(|(n, v)| (n, v, sensitive(n)));
        self.frame_section(dst, |encoder, section| encoder.encode(stream, fields, section));
    }

    /// Appends a HEADERS frame holding the field section `encode` writes (into the scratch
    /// buffer: its length goes first).
    fn frame_section(
        &mut self,
        dst: &mut Vec<u8>,
        encode: impl FnOnce(&mut Encoder, &mut Vec<u8>),
    ) {
        let mut section = std::mem::take(&mut self.scratch);
        section.clear();
        encode(&mut self.encoder, &mut section);
        Head { kind: Kind::HEADERS, len: section.len() as u64 }.encode(dst);
        dst.extend_from_slice(&section);
        self.scratch = section;
    }
}

/// Every status code's three digits, so a `:status` value lives as long as any field.
static STATUS_DIGITS: [[u8; 3]; 1000] = {
    let mut t = [[0u8; 3]; 1000];
    let mut i = 0;
    while i < 1000 {
        t[i] = [b'0' + (i / 100) as u8, b'0' + (i / 10 % 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// Fields whose values are credentials.
fn sensitive(name: &[u8]) -> bool {
    matches!(name, b"authorization" | b"proxy-authorization")
}

fn malformed(message: &Message) -> Error {
    Error::stream(message.stream(), Code::H3_MESSAGE_ERROR)
}

/// RFC 9114 §4.3.1: "If the :scheme pseudo-header field identifies a scheme that has a
/// mandatory authority component (including "http" and "https"), the request MUST contain
/// either an :authority pseudo-header field or a Host header field. If these fields are
/// present, they MUST NOT be empty. If both fields are present, they MUST contain the same
/// value" (the last rule checked with HTTP/2's).
fn authority_rule(section: &FieldSection) -> bool {
    let Some(scheme) = section.scheme() else { return true };
    if !scheme.eq_ignore_ascii_case(b"http") && !scheme.eq_ignore_ascii_case(b"https") {
        return true;
    }
    let host = section.fields().find(|f| f.name == b"host").map(|f| f.value);
    match (section.authority(), host) {
        (None, None) => false,
        (a, h) => a.is_none_or(|a| !a.is_empty()) && h.is_none_or(|h| !h.is_empty()),
    }
}

#[cfg(test)]
mod tests;
