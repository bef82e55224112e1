//! The HTTP/2 connection state machine, both roles, sans-I/O (RFC 9113 §3-§8): bytes in,
//! [`Event`]s and bytes out, time passed in by the caller.
//!
//! # The driver's contract
//!
//! A driver (the server's or the client's connection task) owns one [`Conn`] and a transport:
//!
//! 1. Create it with [`Conn::new`] (or [`Conn::upgraded`] after an `Upgrade: h2c`); it has
//!    already queued our preface (and, for a client, the connection preface magic).
//! 2. When bytes arrive, call [`Conn::recv`] with them until it has consumed them all and
//!    returns no event; act on each [`Event`] as it comes (it may borrow the input or the
//!    connection, so handle it before the next call). Any split of the input is accepted.
//! 3. Whenever frames may be queued (after `recv`, after any `send_*` call, after
//!    [`Conn::handle_timeout`]) and the transport can take bytes, call [`Conn::poll_transmit`]
//!    and write what it appended.
//! 4. Arm a timer for [`Conn::poll_timeout`]; when it fires call [`Conn::handle_timeout`], then
//!    drain [`Conn::poll_event`] (also after `poll_transmit`, which can make streams writable).
//! 5. On [`Event::Closed`], flush `poll_transmit` and close the transport. On end of input
//!    from the transport, drop the connection.
//!
//! The application side: a server answers [`Event::Headers`] of kind `Request` with
//! [`Conn::send_response`] (after any [`Conn::send_informational`]), then [`Conn::send_data`]
//! and [`Conn::send_trailers`]; a client opens streams with [`Conn::send_request`] while
//! [`Conn::can_open_stream`]. Received body octets count against the peer's windows until
//! [`Conn::release_capacity`] gives them back: that is how backpressure reaches the peer.
//!
//! # Examples
//!
//! A client and a server wired back to back:
//! ```
//! use std::time::Instant;
//! use peregrine::http2::{Config, Conn, Event, HeadersKind, RequestHead, Role};
//! let now = Instant::now();
//! let mut client = Conn::new(Role::Client, Config::default(), now);
//! let mut server = Conn::new(Role::Server, Config::default(), now);
//! let head = RequestHead { method: b"GET", scheme: b"https", authority: b"example.com", path: b"/", protocol: None };
//! let id = client.send_request(&head, [(&b"accept"[..], &b"*/*"[..])], true).unwrap();
//!
//! let mut wire = Vec::new();
//! client.poll_transmit(&mut wire);
//! let mut input = &wire[..];
//! let mut requests = 0;
//! loop {
//!     let (used, event) = server.recv(input, now);
//!     if let Some(Event::Headers { kind: HeadersKind::Request, section, .. }) = &event {
//!         assert_eq!(section.path(), Some(&b"/"[..]));
//!         requests += 1;
//!     }
//!     let done = event.is_none() && used == input.len();
//!     input = &input[used..];
//!     if done { break; }
//! }
//! assert_eq!(requests, 1);
//! server.send_response(id, 200, [(&b"content-type"[..], &b"text/plain"[..])], true).unwrap();
//! ```

mod event;
mod header_block;
mod inbound;
mod lifecycle;
mod peer;
mod recv_control;
mod recv_data;
mod recv_headers;
mod repeat;
mod section;
mod send;
mod streams;
mod validate;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::time::Instant;

pub use event::{Closed, Event, HeadersKind};
pub use header_block::HeaderBlock;
pub use peer::PeerSettings;
pub use section::FieldSection;
pub use send::{RequestHead, SendError};
pub(crate) use validate::{Section as Rules, check as check_section};

use event::{Pending, Ready};
use inbound::Inbound;
use recv_headers::Block;
use streams::{Phase, Stream, Streams};

pub use crate::role::Role;

use crate::http2::budget::Bucket;
use crate::http2::config::Config;
use crate::http2::error::{Error, Reason};
use crate::http2::flow::{DEFAULT_WINDOW, RecvWindow, SendWindow};
use crate::http2::frame::settings::{self as settings_frame, SettingId, Settings};
use crate::http2::frame::{HEAD_LEN, Head, Kind, WindowUpdate};
use crate::http2::hpack::{Decoder, Encoder};
use crate::http2::stream::State;
use crate::http2::stream_id::StreamId;

/// The client connection preface (RFC 9113 §3.4): "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The abuse budgets' token buckets.
#[derive(Debug)]
struct Budgets {
    rapid_reset: Bucket,
    provoked_reset: Bucket,
    tiny_data: Bucket,
    control: Bucket,
}

/// One HTTP/2 connection, either role: all its state (streams, windows, HPACK contexts,
/// queued frames) owned here, no locks, no I/O. See the [module docs](self) for the driver's
/// contract.
pub struct Conn {
    role: Role,
    config: Config,
    now: Instant,
    inbound: Inbound,
    head_buf: [u8; HEAD_LEN],
    head_got: usize,
    /// A payload that arrived split across `recv` calls.
    payload: Vec<u8>,
    /// The peer's first SETTINGS arrived (it must be its first frame, §3.4).
    seen_settings: bool,
    block: Block,
    decoder: Decoder,
    section: FieldSection,
    /// The block `section` was decoded from, while a repeat of it can reuse the section.
    repeat: repeat::Repeat,
    encoder: Encoder,
    /// This connection's encoder among all of the process, for the blocks it keeps
    /// ([`HeaderBlock`]).
    encoder_stamp: u64,
    /// Urgent frames (SETTINGS, PING, WINDOW_UPDATE, GOAWAY), sent before `out`.
    ctrl: Vec<u8>,
    /// HEADERS, DATA and RST_STREAM frames in the order they were made.
    out: Vec<u8>,
    /// Where the last request's header block sits in `out` (see `Conn::last_request_block`).
    last_block: Option<send::LastBlock>,
    queued_acks: u32,
    streams: Streams,
    send_window: SendWindow,
    recv_window: RecvWindow,
    peer: PeerSettings,
    settings_deadline: Option<Instant>,
    /// Graceful shutdown in progress: the deadline of its second GOAWAY.
    graceful: Option<Instant>,
    /// The last-stream-id of the last GOAWAY we sent.
    goaway_sent: Option<StreamId>,
    /// The last-stream-id of the peer's GOAWAY.
    goaway_recv: Option<StreamId>,
    /// The peer's GOAWAY error code (NO_ERROR until it sends one).
    goaway_reason: Reason,
    /// The peer acknowledged our SETTINGS.
    settings_acked: bool,
    /// The Closed event is queued: input is ignored from now on.
    closed: bool,
    pending: VecDeque<Pending>,
    budgets: Budgets,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("role", &self.role)
            .field("inbound", &self.inbound)
            .field("active_streams", &self.active_streams())
            .field("send_window", &self.send_window)
            .field("recv_window", &self.recv_window)
            .field("peer", &self.peer)
            .field("goaway_sent", &self.goaway_sent)
            .field("goaway_recv", &self.goaway_recv)
            .field("closed", &self.closed)
            .field("buffered", &self.buffered())
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// A connection in `role` at `now`, with our preface queued: for a client the preface
    /// magic, then (both roles) our SETTINGS and the connection WINDOW_UPDATE that grows its
    /// window to [`Config::connection_window_size`]. A server then expects the client's magic.
    ///
    /// Allocates its buffers here (the stream table sized for
    /// [`Config::max_concurrent_streams`]), so streams cost no allocation later.
    ///
    /// # Panics
    /// If `config.max_frame_size` is outside 16,384..=16,777,215 (RFC 9113 §6.5.2).
    pub fn new(role: Role, config: Config, now: Instant) -> Conn {
        assert!(
            settings_frame::check_value(SettingId::MAX_FRAME_SIZE, config.max_frame_size).is_ok(),
            "max_frame_size outside 16384..=16777215"
        );
        let client = role == Role::Client;
        let capacity = config.max_concurrent_streams.min(1024) as usize + 8;
        let (recv_window, grow) = RecvWindow::grown(DEFAULT_WINDOW, config.connection_window_size);
        let l = &config.limits;
        let budgets = Budgets {
            rapid_reset: Bucket::new(l.rapid_reset),
            provoked_reset: Bucket::new(l.provoked_reset),
            tiny_data: Bucket::new(l.tiny_data),
            control: Bucket::new(l.control_frames),
        };
        let mut conn = Conn {
            role,
            now,
            inbound: if client { Inbound::Head } else { Inbound::Preface { matched: 0 } },
            head_buf: [0; HEAD_LEN],
            head_got: 0,
            payload: Vec::new(),
            seen_settings: false,
            block: Block::new(),
            // Until the peer acknowledges a smaller table it may use the default 4,096.
            decoder: Decoder::new(config.header_table_size.max(4096) as usize),
            section: FieldSection::new(config.max_header_list_size as usize),
            repeat: repeat::Repeat::new(),
            encoder: Encoder::new(),
            encoder_stamp: header_block::new_encoder_stamp(),
            ctrl: Vec::with_capacity(256),
            out: Vec::with_capacity(16 * 1024),
            last_block: None,
            queued_acks: 0,
            streams: Streams::new(client, capacity, l.closed_streams_remembered),
            send_window: SendWindow::new(DEFAULT_WINDOW),
            recv_window,
            peer: PeerSettings::default(),
            settings_deadline: Some(now + config.settings_timeout),
            graceful: None,
            goaway_sent: None,
            goaway_recv: None,
            goaway_reason: Reason::NO_ERROR,
            settings_acked: false,
            closed: false,
            pending: VecDeque::with_capacity(capacity * 2),
            budgets,
            config,
        };
        if client {
            conn.ctrl.extend_from_slice(PREFACE);
        }
        conn.write_settings();
        if let Some(inc) = grow {
            WindowUpdate { stream: StreamId::ZERO, increment: inc }.encode(&mut conn.ctrl);
        }
        conn
    }

    /// A server connection taking over from an HTTP/1.1 request that asked for
    /// `Upgrade: h2c` (RFC 7540 §3.2, kept by RFC 9113 §3.1 for existing deployments).
    ///
    /// `http2_settings` is the request's `HTTP2-Settings` field decoded from base64url: the
    /// payload of a SETTINGS frame, applied as the client's settings (the 101 response
    /// acknowledges it; no SETTINGS ACK is sent). Stream 1 exists, carrying the upgraded
    /// request, half-closed (remote): the server answers it with [`Conn::send_response`] like
    /// any other stream. The driver writes the 101 response itself, then this connection's
    /// [`Conn::poll_transmit`] output; the client's preface magic is expected next.
    ///
    /// # Errors
    /// The connection errors of a SETTINGS frame with that payload (length not a multiple of
    /// 6, values out of range).
    pub fn upgraded(config: Config, http2_settings: &[u8], now: Instant) -> Result<Conn, Error> {
        let mut conn = Conn::new(Role::Server, config, now);
        let len = u32::try_from(http2_settings.len()).unwrap_or(u32::MAX);
        let head = Head::new(Kind::SETTINGS, 0, StreamId::ZERO, len);
        let settings = Settings::decode(head, http2_settings)?;
        for (id, value) in settings.iter() {
            conn.apply_peer_setting(id, value)?;
        }
        let id = StreamId::new(1);
        let mut s =
            Stream::new(id, false, conn.peer.initial_window_size, conn.config.initial_window_size);
        s.state = State::HalfClosedRemote;
        s.recv_phase = Phase::Body;
        s.announced = true;
        conn.streams.insert(s);
        conn.streams.last_peer = id;
        Ok(conn)
    }

    /// Queues our SETTINGS: every value that differs from the RFC's initial one, push
    /// disabled.
    fn write_settings(&mut self) {
        let c = &self.config;
        let mut entries = [(SettingId(0), 0); 8];
        let mut n = 0;
        let mut add = |id, v| {
            entries[n] = (id, v);
            n += 1;
        };
        if c.header_table_size != 4096 {
            add(SettingId::HEADER_TABLE_SIZE, c.header_table_size);
        }
        // RFC 9113 §6.5.2: a server "MAY choose to omit this setting", a client disables push.
        if self.role == Role::Client {
            add(SettingId::ENABLE_PUSH, 0);
        }
        add(SettingId::MAX_CONCURRENT_STREAMS, c.max_concurrent_streams);
        if c.initial_window_size != DEFAULT_WINDOW {
            add(
                SettingId::INITIAL_WINDOW_SIZE,
                c.initial_window_size.min(crate::http2::flow::MAX_WINDOW),
            );
        }
        if c.max_frame_size != crate::http2::frame::DEFAULT_MAX_FRAME_SIZE {
            add(SettingId::MAX_FRAME_SIZE, c.max_frame_size);
        }
        add(SettingId::MAX_HEADER_LIST_SIZE, c.max_header_list_size);
        if c.enable_connect_protocol && self.role == Role::Server {
            add(SettingId::ENABLE_CONNECT_PROTOCOL, 1);
        }
        // RFC 9218 §2.1: we ignore RFC 7540 priority signals.
        add(SettingId::NO_RFC7540_PRIORITIES, 1);
        settings_frame::encode(&entries[..n], &mut self.ctrl);
    }

    /// Our role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The peer's settings as last applied.
    pub fn peer_settings(&self) -> &PeerSettings {
        &self.peer
    }

    /// Whether the connection is over ([`Event::Closed`] was queued).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Streams open or half-closed: (opened by us, opened by the peer).
    pub fn active_streams(&self) -> (u32, u32) {
        (self.streams.local_active, self.streams.peer_active)
    }

    /// The header section of the last [`Event::Headers`], still readable after the event
    /// was dropped (until the next call to [`Conn::recv`]): a driver that turned the event into
    /// its own type reads the fields here.
    pub fn last_section(&self) -> &FieldSection {
        &self.section
    }

    /// Octets of frames queued for [`Conn::poll_transmit`].
    pub fn buffered(&self) -> usize {
        self.ctrl.len() + self.out.len()
    }

    /// Decodes one event for the driver; see [`Conn::recv`].
    ///
    /// Call when `recv` has consumed all input, after [`Conn::handle_timeout`] and after
    /// [`Conn::poll_transmit`], until it returns `None`.
    pub fn poll_event(&mut self) -> Option<Event<'_>> {
        let p = self.pending.pop_front()?;
        Some(self.event(Ready::Pending(p), &[]))
    }

    /// Consumes a prefix of `input` (bytes from the transport, in order, any split) and
    /// returns how many octets it took and the next event, if any.
    ///
    /// The driver calls it again with the rest of the input (and again with an empty slice
    /// to drain queued events) until it returns `(n, None)` having consumed everything: octets
    /// not consumed are needed again with the next input. An event may borrow `input` (DATA,
    /// zero copy) or the connection (a header section), so it is handled before the next
    /// call. After [`Event::Closed`] all input is consumed and ignored.
    ///
    /// Protocol errors are not returned: a stream error resets the stream (RST_STREAM queued,
    /// [`Event::Reset`] if the application knew it), a connection error queues GOAWAY and
    /// yields [`Event::Closed`].
    pub fn recv<'a>(&'a mut self, input: &'a [u8], now: Instant) -> (usize, Option<Event<'a>>) {
        if let Some(p) = self.pending.pop_front() {
            return (0, Some(self.event(Ready::Pending(p), input)));
        }
        self.now = now;
        let (used, ready) = self.recv_frames(input);
        match ready {
            Some(r) => (used, Some(self.event(r, input))),
            None => (used, None),
        }
    }

    /// Builds an event once the mutable work is done, borrowing the input or the connection.
    fn event<'a>(&'a self, ready: Ready, input: &'a [u8]) -> Event<'a> {
        match ready {
            Ready::Headers { stream, kind, end_stream } => {
                Event::Headers { stream, kind, end_stream, section: &self.section }
            }
            Ready::Data { stream, data, end_stream } => {
                Event::Data { stream, data: input.get(data).unwrap_or_default(), end_stream }
            }
            Ready::GoAway { last_stream_id, reason, debug_data } => {
                let debug_data = match debug_data {
                    event::Src::Input(r) => input.get(r),
                    event::Src::Buffer(r) => self.payload.get(r),
                };
                Event::GoAway { last_stream_id, reason, debug_data: debug_data.unwrap_or_default() }
            }
            Ready::Pending(p) => match p {
                Pending::Reset { stream, reason, by_peer, retryable } => {
                    Event::Reset { stream, reason, by_peer, retryable }
                }
                Pending::Writable(stream) => Event::Writable { stream },
                Pending::Settings => Event::Settings(&self.peer),
                Pending::SettingsAcked => Event::SettingsAcked,
                Pending::Ping(payload) => Event::Ping { payload },
                Pending::PingAck(payload) => Event::PingAck { payload },
                Pending::Closed(c) => Event::Closed(c),
            },
        }
    }

    /// Appends every queued frame to `dst`: urgent control frames (SETTINGS and PING
    /// acknowledgements, WINDOW_UPDATE, GOAWAY) first, then HEADERS, DATA and RST_STREAM in
    /// the order they were made. Returns how many octets it appended.
    ///
    /// The driver calls it whenever the transport can take bytes and writes all of `dst`.
    /// When `dst` is empty and no control frame is queued, the buffers are swapped instead of
    /// copied (both keep their capacity). Draining the queue may make streams writable again
    /// ([`Event::Writable`] via [`Conn::poll_event`]).
    pub fn poll_transmit(&mut self, dst: &mut Vec<u8>) -> usize {
        let n = self.ctrl.len() + self.out.len();
        self.last_block = None;
        if dst.is_empty() && self.ctrl.is_empty() {
            std::mem::swap(dst, &mut self.out);
        } else {
            dst.extend_from_slice(&self.ctrl);
            dst.extend_from_slice(&self.out);
            self.out.clear();
        }
        self.ctrl.clear();
        self.queued_acks = 0;
        if n > 0 {
            self.wake_blocked(None);
        }
        n
    }

    /// The next instant [`Conn::handle_timeout`] has work: the deadline for the peer's
    /// acknowledgement of our SETTINGS, or for a graceful shutdown's second GOAWAY. `None`
    /// when nothing is timed. The driver re-reads it after every call into the connection.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.closed {
            return None;
        }
        match (self.settings_deadline, self.graceful) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs what is due at `now`: a SETTINGS acknowledgement overdue is a connection error
    /// SETTINGS_TIMEOUT (RFC 9113 §6.5.3); a graceful shutdown past its deadline sends its
    /// second GOAWAY. The driver calls it when the [`Conn::poll_timeout`] instant passes, then
    /// drains [`Conn::poll_event`] and [`Conn::poll_transmit`].
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        if self.closed {
            return;
        }
        if self.settings_deadline.is_some_and(|d| now >= d) {
            self.settings_deadline = None;
            self.fail(Error::connection(Reason::SETTINGS_TIMEOUT, "SETTINGS not acknowledged"));
            return;
        }
        if self.graceful.is_some_and(|d| now >= d) {
            self.finish_graceful();
        }
    }
}
