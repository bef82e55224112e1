//! One WebSocket connection after its opening handshake, either role, sans-I/O (RFC 6455 §5,
//! §7; RFC 7692 §6-§7): bytes in, [`Event`]s out, frames queued for the driver to write, time
//! passed in by the caller.
//!
//! # The driver's contract
//!
//! A driver (the server's connection task after its `101` or extended CONNECT, the client's
//! after the response) owns one [`Conn`], a transport, an input buffer ([`BytesMut`]) and an
//! output buffer (`Vec<u8>`):
//!
//! 1. Create it with [`Conn::new`] with what the handshake agreed ([`Accept::deflate`],
//!    [`Accepted::deflate`]); the bytes that followed the handshake's head are the start of
//!    the input buffer (over HTTP/2, the extended CONNECT stream's DATA is the input).
//! 2. When bytes arrive, append them to the input buffer and call [`Conn::recv`] until it
//!    returns `None`, acting on each [`Event`]. The connection consumes octets from the front
//!    of the buffer and unmasks a frame's payload in place there: leave the rest as it is and
//!    append the next read to it. Any split of the input is accepted.
//! 3. Send with [`Conn::send_text`], [`Conn::send_binary`], [`Conn::send_ping`] and
//!    [`Conn::close`] ([`Conn::send_binary_bytes`] and [`Conn::send_text_bytes`] take shared
//!    bytes: a server queues a large payload without copying it). Whenever frames may be
//!    queued (after those, after `recv`, after [`Conn::handle_timeout`]) and the transport can
//!    take bytes, call [`Conn::poll_transmit`] and write what it appended, or
//!    [`Conn::poll_transmit_vectored`] into a [`Transmit`] and write its pieces with a
//!    vectored write (each write may stop anywhere: advance by what it took).
//!    [`Conn::buffered`] says how much is queued: stop reading from a peer while it (and what
//!    the driver holds unwritten) is over a high-water mark, so a peer that does not read
//!    cannot grow it (a Ping flood's Pongs are coalesced into one).
//! 4. Before waiting, call [`Conn::poll_timeout`] with the time and arm a timer; when it fires
//!    call [`Conn::handle_timeout`].
//! 5. Once [`Conn::is_closed`], write what `poll_transmit` gives and close the transport: a
//!    server at once, a client after the server closed it or a short wait (RFC 6455 §7.1.1).
//!    End of input before that is an abnormal closure (1006): drop the connection.
//! 6. While idle (nothing buffered, nothing in flight), [`Conn::shrink`] returns the buffers'
//!    memory.
//!
//! [`Transmit`]: crate::ws::Transmit
//! [`Accept::deflate`]: crate::ws::handshake::Accept::deflate
//! [`Accepted::deflate`]: crate::ws::handshake::Accepted::deflate
//!
//! # Examples
//!
//! A client and a server back to back:
//! ```
//! use std::sync::Arc;
//! use std::time::Instant;
//! use bytes::BytesMut;
//! use peregrine::ws::{CloseCode, Config, Conn, Event, Role};
//!
//! let now = Instant::now();
//! let config = Arc::new(Config::default());
//! let mut client = Conn::new(Role::Client, config.clone(), None, [42; 32], now);
//! let mut server = Conn::new(Role::Server, config, None, [0; 32], now);
//!
//! client.send_text("hello").unwrap();
//! let mut wire = Vec::new();
//! client.poll_transmit(&mut wire);
//! let mut input = BytesMut::from(&wire[..]);
//! assert_eq!(server.recv(&mut input, now), Some(Event::Text("hello".into())));
//! assert_eq!(server.recv(&mut input, now), None);
//!
//! server.close(CloseCode::NORMAL, "bye").unwrap();
//! wire.clear();
//! server.poll_transmit(&mut wire);
//! let mut input = BytesMut::from(&wire[..]);
//! let Some(Event::Close { code, reason }) = client.recv(&mut input, now) else { panic!() };
//! assert_eq!((code, &reason[..]), (CloseCode::NORMAL, &b"bye"[..]));
//! assert!(client.is_closed());
//! ```

mod event;
mod recv;
mod send;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;

pub use crate::role::Role;
pub use event::{Event, Timeout};
pub use send::SHARE_MIN;

use crate::ws::close_code::CloseCode;
use crate::ws::config::Config;
use crate::ws::extension::DeflateParams;
use crate::ws::frame::{MAX_CONTROL_PAYLOAD, Opcode};
use crate::ws::mask::MaskKeys;
use crate::ws::transmit::Transmit;
use crate::ws::utf8::Utf8;

/// Where the closing handshake is (RFC 6455 §7).
///
/// ```text
/// Open ──close()──▶ CloseSent ──peer's Close──▶ Closed
///   │                   └──close_timeout──────▶ Closed
///   ├──peer's Close (our echo queued at once)──▶ Closed
///   └──peer's protocol error, idle timeout (our Close queued)──▶ Closed
/// ```
///
/// A peer's Close is answered at once (we send whole messages, so none is half sent): the
/// state RFC 6455 calls "the closing handshake is started" by the peer lasts no longer than
/// the `recv` call that sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Messages flow both ways.
    Open,
    /// We sent a Close (or queued it): nothing more is sent; messages are still received until
    /// the peer's Close.
    CloseSent,
    /// Nothing more is received or sent: flush the output and close the transport.
    Closed,
}

/// A clock whose start the connection learns later: [`Conn::close`] takes no time, the next
/// call that does (`poll_timeout`, `handle_timeout`, `recv`) fixes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clock {
    Off,
    Started,
    At(Instant),
}

impl Clock {
    fn fix(&mut self, now: Instant) {
        if *self == Clock::Started {
            *self = Clock::At(now);
        }
    }
}

/// A control frame's payload waiting to be sent, on the stack.
#[derive(Clone, Copy, Debug)]
struct Control {
    buf: [u8; MAX_CONTROL_PAYLOAD],
    len: u8,
}

impl Control {
    /// `None` if `payload` is longer than a control frame's.
    fn new(payload: &[u8]) -> Option<Control> {
        let mut c = Control { buf: [0; MAX_CONTROL_PAYLOAD], len: 0 };
        c.buf.get_mut(..payload.len())?.copy_from_slice(payload);
        c.len = payload.len() as u8;
        Some(c)
    }

    fn payload(&self) -> &[u8] {
        &self.buf[..usize::from(self.len)]
    }
}

/// The frame being received.
#[derive(Clone, Copy, Debug)]
struct Frame {
    opcode: Opcode,
    fin: bool,
    key: Option<[u8; 4]>,
    len: u64,
    /// Payload octets handled so far (unmasked in place, or consumed).
    done: u64,
    sink: Sink,
}

/// Where a frame's payload goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sink {
    /// A control frame, or a message in one uncompressed frame: the payload stays in the
    /// input, unmasked (and validated) in place as it arrives, and is split off whole.
    Whole,
    /// A fragment of an uncompressed message: appended to the assembly buffer.
    Append,
    /// A frame of a compressed message: inflated into the assembly buffer.
    Inflate,
}

/// A message being assembled from fragments or inflated.
#[derive(Clone, Copy, Debug)]
struct Message {
    text: bool,
    compressed: bool,
    fragments: u32,
    /// Payload octets received (before inflation).
    size: u64,
}

/// permessage-deflate as agreed, and each direction's state (made on first use).
#[cfg(feature = "ws-deflate")]
struct Deflate {
    params: DeflateParams,
    level: u32,
    min_size: usize,
    /// Our compressor's window (8: we send uncompressed) and context takeover.
    own_bits: u8,
    own_reset: bool,
    peer_bits: u8,
    peer_reset: bool,
    compressor: Option<crate::ws::deflate::Compressor>,
    inflater: Option<crate::ws::deflate::Inflater>,
}

/// One WebSocket connection, either role: its state, no I/O. See the [module docs](self) for
/// the driver's contract.
///
/// Small when idle: no buffer is allocated until a message needs one, and
/// [`Conn::shrink`] gives them back.
pub struct Conn {
    config: Arc<Config>,
    role: Role,
    state: State,
    /// The frame being received; `None` between frames.
    frame: Option<Frame>,
    /// The fragmented or compressed message being assembled.
    msg: Option<Message>,
    /// The assembly buffer of fragmented and compressed messages.
    buf: BytesMut,
    utf8: Utf8,
    /// Frames queued in order: messages (a server's large ones as their shared payloads), and
    /// our Close last.
    out: Transmit,
    /// The Pong owed for the latest Ping (RFC 6455 §5.5.3: only the latest needs one).
    pong: Option<Control>,
    /// A Ping to send.
    ping: Option<Control>,
    /// Client: the masking keys (boxed: a server has none, and its connection stays small).
    masks: Option<Box<MaskKeys>>,
    #[cfg(feature = "ws-deflate")]
    deflate: Option<Box<Deflate>>,
    /// When bytes last arrived.
    last_recv: Instant,
    /// When a keep-alive Ping was last sent.
    last_ping: Option<Instant>,
    /// Since our Close.
    close_clock: Clock,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("role", &self.role)
            .field("state", &self.state)
            .field("frame", &self.frame)
            .field("msg", &self.msg)
            .field("deflate", &self.deflate())
            .field("buffered", &self.buffered())
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// A connection in `role` at `now`, right after the opening handshake.
    ///
    /// - `config`: limits, fragmenting, compression level (an `Arc` shared by connections).
    /// - `deflate`: the permessage-deflate parameters the handshake agreed, if it did
    ///   ([`Accept::deflate`](crate::ws::handshake::Accept::deflate),
    ///   [`Accepted::deflate`](crate::ws::handshake::Accepted::deflate)); ignored in a build
    ///   without the `ws-deflate` feature, whose handshake never agrees to it.
    /// - `mask_seed`: client, 32 octets from a strong random source (the operating system's):
    ///   the seed of its frames' masking keys (RFC 6455 §5.3). A server never masks: any
    ///   value.
    ///
    /// Allocates nothing for a server (a client: one small box for its masking keys; with
    /// deflate: one small box).
    pub fn new(
        role: Role,
        config: Arc<Config>,
        deflate: Option<DeflateParams>,
        mask_seed: [u8; 32],
        now: Instant,
    ) -> Conn {
        #[cfg(feature = "ws-deflate")]
        let deflate = deflate.map(|params| {
            let defaults = crate::ws::extension::DeflateConfig::default();
            let c = config.deflate.as_ref().unwrap_or(&defaults);
            let (s, c_) = (
                (params.server_max_window_bits, params.server_no_context_takeover),
                (params.client_max_window_bits, params.client_no_context_takeover),
            );
            let (own, peer) = match role {
                Role::Server => (s, c_),
                Role::Client => (c_, s),
            };
            Box::new(Deflate {
                params,
                level: c.level,
                min_size: c.min_size,
                own_bits: own.0,
                own_reset: own.1,
                peer_bits: peer.0,
                peer_reset: peer.1,
                compressor: None,
                inflater: None,
            })
        });
        #[cfg(not(feature = "ws-deflate"))]
        let _ = deflate;
        Conn {
            config,
            role,
            state: State::Open,
            frame: None,
            msg: None,
            buf: BytesMut::new(),
            utf8: Utf8::new(),
            out: Transmit::new(),
            pong: None,
            ping: None,
            masks: (role == Role::Client).then(|| Box::new(MaskKeys::new(mask_seed))),
            #[cfg(feature = "ws-deflate")]
            deflate,
            last_recv: now,
            last_ping: None,
            close_clock: Clock::Off,
        }
    }

    /// Our role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Where the closing handshake is.
    pub fn state(&self) -> State {
        self.state
    }

    /// Whether nothing more is received or sent: write what [`Conn::poll_transmit`] gives,
    /// then close the transport.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// The permessage-deflate parameters in force, if any.
    pub fn deflate(&self) -> Option<DeflateParams> {
        #[cfg(feature = "ws-deflate")]
        return self.deflate.as_ref().map(|d| d.params);
        #[cfg(not(feature = "ws-deflate"))]
        None
    }

    /// The frame being received, if one is under way: its payload length and the octets of it
    /// still to come. A driver sizes its next read with it (room for the rest of the frame: a
    /// large frame is read whole rather than piece by piece).
    pub fn frame_in_progress(&self) -> Option<(u64, u64)> {
        self.frame.map(|f| (f.len, f.len - f.done))
    }

    /// Whether the time passed to [`Conn::recv`], [`Conn::poll_timeout`] and
    /// [`Conn::handle_timeout`] matters now: a keep-alive or idle timer is configured, or our
    /// Close waits for its answer. When it does not, a driver may pass any earlier instant
    /// instead of reading the clock (about 25 ns a read).
    pub fn uses_time(&self) -> bool {
        let l = &self.config.limits;
        match self.state {
            State::Open => l.ping_interval.is_some() || l.idle_timeout.is_some(),
            State::CloseSent => true,
            State::Closed => false,
        }
    }

    /// Octets queued for [`Conn::poll_transmit`], shared payloads included: the driver's
    /// backpressure signal.
    pub fn buffered(&self) -> usize {
        let header = if self.role == Role::Client { 6 } else { 2 };
        let control = |c: &Option<Control>| c.map_or(0, |c| header + usize::from(c.len));
        self.out.len() + control(&self.pong) + control(&self.ping)
    }

    /// Appends every queued frame to `dst` and returns how many octets it appended: a Pong
    /// owed and a Ping asked for first (control frames go between messages, never inside one:
    /// every message is queued whole), then messages and our Close in the order they were
    /// made. Payloads queued shared ([`Conn::send_binary_bytes`]) are copied in: a driver
    /// that can write several buffers at once takes [`Conn::poll_transmit_vectored`] instead.
    ///
    /// The driver calls it whenever the transport can take bytes and writes all of `dst`.
    /// When `dst` is empty and no control frame is owed, the buffers are swapped instead of
    /// copied (both keep their capacity: no allocation in a steady state).
    pub fn poll_transmit(&mut self, dst: &mut Vec<u8>) -> usize {
        let n = self.buffered();
        self.transmit_control(dst);
        self.out.copy_into(dst);
        n
    }

    /// [`Conn::poll_transmit`] into a [`Transmit`]: shared payloads stay shared, for the
    /// driver to write with the octets around them in one vectored write (no copy of the
    /// payload). Control frames go after what `dst` still holds (a message partly written
    /// is finished first) and before the messages queued here.
    pub fn poll_transmit_vectored(&mut self, dst: &mut Transmit) -> usize {
        let n = self.buffered();
        self.transmit_control(dst.octets_mut());
        dst.append(&mut self.out);
        n
    }

    /// Appends the Pong owed and the Ping asked for, if any.
    fn transmit_control(&mut self, dst: &mut Vec<u8>) {
        let mut masks = self.masks.as_deref_mut();
        if let Some(p) = self.pong.take() {
            send::write_frame(dst, masks.as_deref_mut(), Opcode::Pong, false, true, p.payload());
        }
        if let Some(p) = self.ping.take() {
            send::write_frame(dst, masks, Opcode::Ping, false, true, p.payload());
        }
    }

    /// The next instant [`Conn::handle_timeout`] has work, `None` if none: the peer's Close
    /// due after ours, the next keep-alive Ping, the idle limit. `now` is when the driver
    /// starts waiting: the close clock starts there if [`Conn::close`] started it since.
    pub fn poll_timeout(&mut self, now: Instant) -> Option<Instant> {
        self.close_clock.fix(now);
        let l = &self.config.limits;
        match self.state {
            State::Open => {
                let since = self.last_ping.map_or(self.last_recv, |p| p.max(self.last_recv));
                let ping = l.ping_interval.map(|i| since + i);
                let idle = l.idle_timeout.map(|t| self.last_recv + t);
                match (ping, idle) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
            State::CloseSent => match self.close_clock {
                Clock::At(t) => Some(t + l.close_timeout),
                _ => None,
            },
            State::Closed => None,
        }
    }

    /// Runs what is due at `now`: a keep-alive Ping is queued, or the idle limit fails the
    /// connection ([`Timeout::Idle`]), or the peer's Close is overdue ([`Timeout::Close`]).
    /// The driver calls it when the [`Conn::poll_timeout`] instant passes, then drains
    /// [`Conn::poll_transmit`] and checks [`Conn::is_closed`].
    pub fn handle_timeout(&mut self, now: Instant) -> Option<Timeout> {
        self.close_clock.fix(now);
        let l = &self.config.limits;
        match self.state {
            State::Open => {
                if l.idle_timeout.is_some_and(|t| now >= self.last_recv + t) {
                    self.queue_close(CloseCode::GOING_AWAY, "idle");
                    self.set_closed();
                    return Some(Timeout::Idle);
                }
                let since = self.last_ping.map_or(self.last_recv, |p| p.max(self.last_recv));
                if l.ping_interval.is_some_and(|i| now >= since + i) {
                    self.ping = Control::new(&[]);
                    self.last_ping = Some(now);
                }
                None
            }
            State::CloseSent => match self.close_clock {
                Clock::At(t) if now >= t + l.close_timeout => {
                    self.set_closed();
                    Some(Timeout::Close)
                }
                _ => None,
            },
            State::Closed => None,
        }
    }

    /// Returns the memory of buffers not in use: call while the connection is idle. The
    /// output buffer if empty, the assembly buffer between messages, a compressor or inflater
    /// without context takeover (made again when next needed).
    pub fn shrink(&mut self) {
        self.out.shrink();
        if self.msg.is_none() && self.buf.is_empty() {
            self.buf = BytesMut::new();
        }
        #[cfg(feature = "ws-deflate")]
        if let Some(d) = self.deflate.as_mut() {
            if d.own_reset {
                d.compressor = None;
            } else if let Some(c) = d.compressor.as_mut() {
                c.shrink();
            }
            if d.peer_reset && self.msg.is_none() {
                d.inflater = None;
            }
        }
    }

    /// Nothing more is received or sent; what is queued stays to be written.
    fn set_closed(&mut self) {
        self.state = State::Closed;
        self.frame = None;
        self.msg = None;
        self.buf = BytesMut::new();
        self.ping = None;
        #[cfg(feature = "ws-deflate")]
        if let Some(d) = self.deflate.as_mut() {
            d.compressor = None;
            d.inflater = None;
        }
    }
}
