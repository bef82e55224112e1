//! [`Conn`]: the unidirectional streams and the control stream (RFC 9114 §6.2, §7.2; RFC 9204
//! §4.2).

use std::collections::VecDeque;
use std::time::Instant;

use super::{Config, MAX_SETTINGS_LEN};
use crate::http2::budget::Bucket;
use crate::http2::conn::FieldSection;
use crate::http3::error::{Code, Error};
use crate::http3::frame::settings::{self, SettingId, Settings};
use crate::http3::frame::{self, Head, Kind, On, goaway};
use crate::http3::qpack;
use crate::http3::stream_id::StreamId;
use crate::http3::stream_type::StreamType;
use crate::http3::varint;
use crate::role::Role;

/// What the peer's SETTINGS said (RFC 9114 §7.2.4.1 defaults until they arrive).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerSettings {
    /// SETTINGS_QPACK_MAX_TABLE_CAPACITY (default 0).
    pub qpack_max_table_capacity: u64,
    /// SETTINGS_QPACK_BLOCKED_STREAMS (default 0).
    pub qpack_blocked_streams: u64,
    /// SETTINGS_MAX_FIELD_SECTION_SIZE (default unlimited: `None`).
    pub max_field_section_size: Option<u64>,
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 9220).
    pub enable_connect_protocol: bool,
}

/// What happened, for the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The peer's SETTINGS arrived (see [`Conn::peer_settings`]).
    Settings,
    /// The peer sent GOAWAY with this stream ID (from a server) or push ID (from a client).
    GoAway(u64),
    /// Stop reading this stream and ask the peer to stop sending with this code (an unknown
    /// stream type, §6.2).
    StopSending(StreamId, Code),
    /// A request stream's field section that was blocked can now be decoded (RFC 9204
    /// §2.1.2): call [`Conn::resume_message`] with its [`Message`](super::Message).
    Unblocked(StreamId),
}

/// What an inbound unidirectional stream is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UniKind {
    /// Its type has not fully arrived.
    Typing,
    Control,
    Encoder,
    Decoder,
}

/// One inbound unidirectional stream.
struct Uni {
    id: StreamId,
    kind: UniKind,
    /// Octets of an integer or frame header cut short.
    buf: Vec<u8>,
}

/// The control stream's reading state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reading {
    /// A frame header.
    Head,
    /// The payload of a frame we parse: its type and length (buffered in `Uni::buf`).
    Payload(Kind, u64),
    /// Octets of an ignored frame still to skip.
    Skip(u64),
}

/// One HTTP/3 connection's unidirectional streams, control stream and QPACK state.
///
/// # Examples
/// ```
/// use peregrine::http3::conn::{Config, Conn, Event};
/// use peregrine::http3::{Role, StreamId};
///
/// let mut server = Conn::new(Role::Server, Config::default());
/// let mut client = Conn::new(Role::Client, Config::default());
/// // The client's control stream (its type, then SETTINGS) reaches the server.
/// let mut bytes = Vec::new();
/// client.poll_control(&mut bytes);
/// server.recv_uni(StreamId::new(2), &bytes, false)?;
/// assert_eq!(server.poll_event(), Some(Event::Settings));
/// assert_eq!(server.peer_settings().unwrap().qpack_max_table_capacity, 4096);
/// # Ok::<(), peregrine::http3::Error>(())
/// ```
pub struct Conn {
    pub(super) role: Role,
    pub(super) config: Config,
    /// Our QPACK encoder (requests or responses we send).
    pub encoder: qpack::Encoder,
    /// Our QPACK decoder (what the peer sends).
    pub decoder: qpack::Decoder,
    uni: Vec<Uni>,
    reading: Reading,
    peer: Option<PeerSettings>,
    goaway: Option<u64>,
    ignored: u32,
    unknown_streams: u32,
    /// Request streams the peer cancelled (see [`Conn::peer_cancelled`]).
    cancelled: Bucket,
    events: VecDeque<Event>,
    control_out: Vec<u8>,
    encoder_started: bool,
    decoder_started: bool,
    /// The last field section decoded on a request stream (reused: no allocation per
    /// message once grown).
    pub(super) section: FieldSection,
    /// An encoded field section before its frame header (reused).
    pub(super) scratch: Vec<u8>,
}

impl Conn {
    /// A connection in `role`; our control stream's type and SETTINGS are queued.
    pub fn new(role: Role, config: Config) -> Conn {
        let mut control_out = Vec::new();
        varint::encode(StreamType::CONTROL.0, &mut control_out);
        let mut entries = vec![
            (SettingId::QPACK_MAX_TABLE_CAPACITY, config.qpack_max_table_capacity),
            (SettingId::QPACK_BLOCKED_STREAMS, config.qpack_blocked_streams),
            (SettingId::MAX_FIELD_SECTION_SIZE, config.max_field_section_size),
        ];
        entries.retain(|&(_, v)| v != 0);
        settings::encode(&entries, &mut control_out);
        Conn {
            role,
            config,
            encoder: qpack::Encoder::new(config.qpack_encoder_capacity),
            decoder: qpack::Decoder::new(
                config.qpack_max_table_capacity,
                config.qpack_blocked_streams,
            ),
            uni: Vec::new(),
            reading: Reading::Head,
            peer: None,
            goaway: None,
            ignored: 0,
            unknown_streams: 0,
            cancelled: Bucket::new(config.rapid_reset),
            events: VecDeque::new(),
            control_out,
            encoder_started: false,
            decoder_started: false,
            section: FieldSection::new(
                usize::try_from(config.max_field_section_size).unwrap_or(usize::MAX),
            ),
            scratch: Vec::new(),
        }
    }

    /// The peer's SETTINGS, once they arrived.
    pub fn peer_settings(&self) -> Option<PeerSettings> {
        self.peer
    }

    /// The smallest GOAWAY ID the peer sent, if any.
    pub fn peer_goaway(&self) -> Option<u64> {
        self.goaway
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Moves our control stream's pending bytes into `dst`.
    pub fn poll_control(&mut self, dst: &mut Vec<u8>) {
        dst.append(&mut self.control_out);
    }

    /// Moves our QPACK encoder stream's pending bytes into `dst` (its type first).
    pub fn poll_encoder_stream(&mut self, dst: &mut Vec<u8>) {
        if !self.encoder_started {
            self.encoder_started = true;
            varint::encode(StreamType::ENCODER.0, dst);
        }
        self.encoder.poll_encoder_stream(dst);
    }

    /// Moves our QPACK decoder stream's pending bytes into `dst` (its type first).
    pub fn poll_decoder_stream(&mut self, dst: &mut Vec<u8>) {
        if !self.decoder_started {
            self.decoder_started = true;
            varint::encode(StreamType::DECODER.0, dst);
        }
        self.decoder.poll_decoder_stream(dst);
    }

    /// The peer cancelled a request stream at `now` before our response on it was complete:
    /// RESET_STREAM on the request or STOP_SENDING on the response (RFC 9114 §4.1.1). Each
    /// cost us a stream's setup and the start of a handler, and QUIC hands the stream's
    /// credit back at once, so a budget bounds them ([`Config::rapid_reset`]).
    ///
    /// # Errors
    /// H3_EXCESSIVE_LOAD once the budget is spent (§10.5: "An endpoint MAY treat activity
    /// that is suspicious as a connection error of type H3_EXCESSIVE_LOAD").
    pub fn peer_cancelled(&mut self, now: Instant) -> Result<(), Error> {
        if self.cancelled.take(now) {
            return Ok(());
        }
        Err(Error::connection(Code::H3_EXCESSIVE_LOAD, "rapid reset budget spent"))
    }

    /// Queues GOAWAY on our control stream (RFC 9114 §5.2): from a server, the first
    /// client-initiated bidirectional stream ID not processed; from a client, a push ID.
    pub fn send_goaway(&mut self, id: u64) {
        goaway::encode(id, &mut self.control_out);
    }

    /// The peer reset one of its unidirectional streams: §6.2.1 "If either control stream is
    /// closed at any point, this MUST be treated as a connection error of type
    /// H3_CLOSED_CRITICAL_STREAM", and RFC 9204 §4.2 the same for the QPACK streams.
    ///
    /// # Errors
    /// H3_CLOSED_CRITICAL_STREAM for a critical stream.
    pub fn reset_uni(&mut self, stream: StreamId) -> Result<(), Error> {
        let Some(i) = self.uni.iter().position(|u| u.id == stream) else { return Ok(()) };
        if self.uni[i].kind == UniKind::Typing {
            self.uni.remove(i);
            return Ok(());
        }
        Err(closed())
    }

    /// Bytes of a unidirectional stream the peer opened; `fin` when they end it.
    ///
    /// # Errors
    /// Connection errors with their codes (see the module's docs and each rule's RFC text).
    pub fn recv_uni(&mut self, stream: StreamId, bytes: &[u8], fin: bool) -> Result<(), Error> {
        let i = match self.uni.iter().position(|u| u.id == stream) {
            Some(i) => i,
            None => {
                self.uni.push(Uni { id: stream, kind: UniKind::Typing, buf: Vec::new() });
                self.uni.len() - 1
            }
        };
        let mut bytes = bytes;
        if self.uni[i].kind == UniKind::Typing {
            let u = &mut self.uni[i];
            let take = bytes.len().min(8 - u.buf.len());
            u.buf.extend_from_slice(&bytes[..take]);
            let Some((ty, n)) = varint::decode(&u.buf) else {
                if fin {
                    // Ended before its type: nothing to serve (§6.2 lets us ignore it).
                    self.uni.remove(i);
                }
                return Ok(());
            };
            bytes = &bytes[take - (u.buf.len() - n)..];
            u.buf.clear();
            match self.open(i, StreamType(ty))? {
                Some(kind) => self.uni[i].kind = kind,
                None => return Ok(()),
            }
        }
        match self.uni[i].kind {
            UniKind::Encoder => {
                self.decoder.feed_encoder_stream(bytes)?;
                while let Some(s) = self.decoder.poll_unblocked() {
                    self.events.push_back(Event::Unblocked(s));
                }
            }
            UniKind::Decoder => self.encoder.feed_decoder_stream(bytes)?,
            _ => self.control(i, bytes)?,
        }
        if fin { Err(closed()) } else { Ok(()) }
    }

    /// A stream's type arrived: what it becomes (`None`: refused and forgotten).
    fn open(&mut self, i: usize, ty: StreamType) -> Result<Option<UniKind>, Error> {
        let kind = match ty {
            StreamType::CONTROL => UniKind::Control,
            StreamType::ENCODER => UniKind::Encoder,
            StreamType::DECODER => UniKind::Decoder,
            StreamType::PUSH => {
                return Err(match self.role {
                    // §6.2.2: "Only servers can push; if a server receives a client-initiated
                    // push stream, this MUST be treated as a connection error of type
                    // H3_STREAM_CREATION_ERROR."
                    Role::Server => Error::connection(
                        Code::H3_STREAM_CREATION_ERROR,
                        "push stream from a client",
                    ),
                    // §4.6: we never send MAX_PUSH_ID, so every push ID is above the
                    // maximum: "... MUST treat ... as a connection error of type H3_ID_ERROR".
                    Role::Client => {
                        Error::connection(Code::H3_ID_ERROR, "push without MAX_PUSH_ID")
                    }
                });
            }
            _ => {
                // §6.2: "Recipients of unknown stream types MUST either abort reading of the
                // stream or discard incoming data without further processing." We abort,
                // within a budget.
                self.unknown_streams += 1;
                if self.unknown_streams > self.config.max_unknown_streams {
                    return Err(Error::connection(
                        Code::H3_EXCESSIVE_LOAD,
                        "too many unknown unidirectional streams",
                    ));
                }
                let id = self.uni.remove(i).id;
                self.events.push_back(Event::StopSending(id, Code::H3_STREAM_CREATION_ERROR));
                return Ok(None);
            }
        };
        // §6.2.1: "Only one control stream per peer is permitted; receipt of a second stream
        // claiming to be a control stream MUST be treated as a connection error of type
        // H3_STREAM_CREATION_ERROR." RFC 9204 §4.2 says the same of each QPACK stream.
        if self.uni.iter().any(|u| u.kind == kind) {
            return Err(Error::connection(
                Code::H3_STREAM_CREATION_ERROR,
                "second control or QPACK stream",
            ));
        }
        Ok(Some(kind))
    }

    /// Control stream bytes: frames from any split.
    fn control(&mut self, i: usize, mut bytes: &[u8]) -> Result<(), Error> {
        loop {
            match self.reading {
                Reading::Skip(n) => {
                    let k = (bytes.len() as u64).min(n);
                    bytes = &bytes[k as usize..];
                    self.reading = if k == n { Reading::Head } else { Reading::Skip(n - k) };
                    if k < n {
                        return Ok(());
                    }
                }
                Reading::Head => {
                    let buf = &mut self.uni[i].buf;
                    let take = bytes.len().min(Head::MAX_LEN - buf.len());
                    buf.extend_from_slice(&bytes[..take]);
                    let Some((head, n)) = Head::parse(buf) else {
                        return Ok(());
                    };
                    bytes = &bytes[take - (buf.len() - n)..];
                    buf.clear();
                    self.head(head)?;
                }
                Reading::Payload(kind, len) => {
                    let buf = &mut self.uni[i].buf;
                    let take = bytes.len().min((len - buf.len() as u64) as usize);
                    buf.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    if (buf.len() as u64) < len {
                        return Ok(());
                    }
                    let payload = std::mem::take(buf);
                    self.frame(kind, &payload)?;
                    let mut payload = payload;
                    payload.clear();
                    self.uni[i].buf = payload;
                    self.reading = Reading::Head;
                }
            }
            if bytes.is_empty() && self.reading == Reading::Head {
                return Ok(());
            }
        }
    }

    /// A control frame's header: decides how its payload is read.
    fn head(&mut self, head: Head) -> Result<(), Error> {
        frame::check_placement(head.kind, On::Control)?;
        let first = self.peer.is_none();
        // §6.2.1: "If the first frame of the control stream is any other frame type, this MUST
        // be treated as a connection error of type H3_MISSING_SETTINGS."
        if first && head.kind != Kind::SETTINGS {
            return Err(Error::connection(Code::H3_MISSING_SETTINGS, "first frame not SETTINGS"));
        }
        self.reading = match head.kind {
            Kind::SETTINGS if head.len > MAX_SETTINGS_LEN => {
                return Err(Error::connection(Code::H3_EXCESSIVE_LOAD, "SETTINGS too long"));
            }
            Kind::SETTINGS => Reading::Payload(head.kind, head.len),
            Kind::GOAWAY | Kind::MAX_PUSH_ID | Kind::CANCEL_PUSH if head.len > 8 => {
                // §7.1: the payload is exactly one integer, at most 8 octets.
                return Err(Error::connection(Code::H3_FRAME_ERROR, "frame longer than its field"));
            }
            Kind::GOAWAY | Kind::MAX_PUSH_ID | Kind::CANCEL_PUSH => {
                Reading::Payload(head.kind, head.len)
            }
            _ => {
                // §9: "Implementations MUST ignore unknown or unsupported values"; within a
                // budget.
                self.ignored += 1;
                if self.ignored > self.config.max_ignored_frames {
                    return Err(Error::connection(
                        Code::H3_EXCESSIVE_LOAD,
                        "too many ignored frames",
                    ));
                }
                Reading::Skip(head.len)
            }
        };
        if self.reading == Reading::Payload(head.kind, 0) {
            self.frame(head.kind, &[])?;
            self.reading = Reading::Head;
        }
        Ok(())
    }

    /// A whole control frame we parse.
    fn frame(&mut self, kind: Kind, payload: &[u8]) -> Result<(), Error> {
        match kind {
            Kind::SETTINGS => {
                // §7.2.4: "If an endpoint receives a second SETTINGS frame on the control
                // stream, the endpoint MUST respond with a connection error of type
                // H3_FRAME_UNEXPECTED."
                if self.peer.is_some() {
                    return Err(Error::connection(Code::H3_FRAME_UNEXPECTED, "second SETTINGS"));
                }
                let s = Settings::decode(payload, settings::DEFAULT_MAX_ENTRIES)?;
                let mut peer = PeerSettings::default();
                for (id, v) in s.iter() {
                    match id {
                        SettingId::QPACK_MAX_TABLE_CAPACITY => peer.qpack_max_table_capacity = v,
                        SettingId::QPACK_BLOCKED_STREAMS => peer.qpack_blocked_streams = v,
                        SettingId::MAX_FIELD_SECTION_SIZE => peer.max_field_section_size = Some(v),
                        SettingId::ENABLE_CONNECT_PROTOCOL => peer.enable_connect_protocol = v == 1,
                        _ => {}
                    }
                }
                self.encoder
                    .apply_peer_settings(peer.qpack_max_table_capacity, peer.qpack_blocked_streams);
                self.peer = Some(peer);
                self.events.push_back(Event::Settings);
            }
            Kind::GOAWAY => {
                let id = goaway::decode(payload)?;
                // §5.2: from a server, "a client-initiated bidirectional stream"; "An endpoint
                // MAY send multiple GOAWAY frames ... MUST NOT increase the value ... A
                // receiver ... MUST treat [an increase] as a connection error of type
                // H3_ID_ERROR."
                let bidi = StreamId::new(id);
                if self.role == Role::Client
                    && !(bidi.is_bidi() && bidi.initiator() == Role::Client)
                {
                    return Err(Error::connection(
                        Code::H3_ID_ERROR,
                        "GOAWAY not a request stream",
                    ));
                }
                if self.goaway.is_some_and(|g| id > g) {
                    return Err(Error::connection(Code::H3_ID_ERROR, "GOAWAY ID increased"));
                }
                self.goaway = Some(id);
                self.events.push_back(Event::GoAway(id));
            }
            Kind::MAX_PUSH_ID => {
                frame::max_push_id::decode(payload)?;
                // §7.2.7: "Receipt of a MAX_PUSH_ID frame [by a client] MUST be treated as a
                // connection error of type H3_FRAME_UNEXPECTED." A server notes it; we never
                // push.
                if self.role == Role::Client {
                    return Err(Error::connection(
                        Code::H3_FRAME_UNEXPECTED,
                        "MAX_PUSH_ID from a server",
                    ));
                }
            }
            _ => {
                frame::cancel_push::decode(payload)?;
                // §7.2.3: a CANCEL_PUSH for a push ID never promised (a server: we promise
                // none) or above our MAX_PUSH_ID (a client: we send none) is H3_ID_ERROR.
                return Err(Error::connection(Code::H3_ID_ERROR, "CANCEL_PUSH without a push"));
            }
        }
        Ok(())
    }
}

fn closed() -> Error {
    Error::connection(Code::H3_CLOSED_CRITICAL_STREAM, "critical stream closed")
}

#[cfg(test)]
mod tests;
