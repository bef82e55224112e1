//! One HTTP/1.1 connection's rules, either role, sans-I/O (RFC 9112 §6, §9; RFC 9110 §7.8,
//! §10.1.1, §15.2): bytes in, [`Event`]s out, heads and bodies queued by the caller into its
//! output buffer, time passed in by the caller.
//!
//! The connection owns what makes a byte stream a sequence of HTTP/1.1 exchanges: the order
//! of pipelined messages, keep-alive and `Connection: close`, the framing of bodies in and out
//! (through [`framing`](crate::http1::framing), [`body_decoder`](crate::http1::body_decoder),
//! [`chunked`](crate::http1::chunked) and [`encode`](crate::http1::encode)), `100 Continue`,
//! the draining of a request body the server did not read, the refusals of bad heads with
//! their status, the switch to another protocol after `101`, and the deadlines of a head, an
//! idle connection, a slow body and a response awaited. It reads no socket and no clock.
//!
//! # The driver's contract
//!
//! A driver (the server's connection task, the client's connection) owns one [`Conn`], a
//! transport, a read buffer and a write buffer:
//!
//! 1. Create it with [`Conn::new`], at `now`: a server's first head is timed from there.
//! 2. When it waits for a head (server) or a response (client), or when the server's handler
//!    wants request body bytes, call [`Conn::recv`] with the unread input and act on the
//!    [`Event`]; then drop the bytes it reported used from the front of the input (an event
//!    may borrow them: the server splits a request head off as the request's own bytes).
//!    `(0, None)` means it needs more input (or, for a server answering a request, nothing
//!    more is read until the response is finished). Any split of the input is accepted.
//! 3. Send with [`Conn::send_response`] (server; first [`Conn::settle`] when the request body
//!    was not read to its end) or [`Conn::send_request`] (client), then [`Conn::send_data`] or
//!    [`Conn::send_payload`], and [`Conn::finish`]. Each appends to the caller's output
//!    buffer, after what is there, and writes what the connection queued itself before
//!    (`100 Continue`). Before writing the output to the transport, call
//!    [`Conn::poll_transmit`]: it appends what the connection queued since (a refusal).
//! 4. Before waiting for input, call [`Conn::poll_timeout`] with the time the wait starts and
//!    arm a timer; when it fires call [`Conn::handle_timeout`].
//! 5. At the end of the input call [`Conn::recv_eof`]. Once [`Conn::is_closed`], write the
//!    output and close the transport; once [`Conn::is_upgraded`], the bytes after the `101`'s
//!    head (or the tunnel's) belong to the new protocol.
//!
//! # Examples
//!
//! A request and its response across a client and a server, back to back:
//! ```
//! use std::mem::MaybeUninit;
//! use std::sync::Arc;
//! use std::time::Instant;
//! use peregrine::Method;
//! use peregrine::date::format_imf_fixdate;
//! use peregrine::http1::conn::{Config, Conn, Event, Role};
//! use peregrine::http1::encode::{ResponseHeadOut, encode_head};
//!
//! let now = Instant::now();
//! let config = Arc::new(Config::default());
//! let mut client = Conn::new(Role::Client, config.clone(), now);
//! let mut server = Conn::new(Role::Server, config, now);
//!
//! let mut wire = Vec::new();
//! client.send_request(Method::Get, Some(0), b"", &mut wire, |_, out| {
//!     out.extend_from_slice(b"GET /hello HTTP/1.1\r\nHost: example.com\r\n\r\n");
//!     Ok(())
//! })?;
//!
//! let mut storage = [const { MaybeUninit::uninit() }; 16];
//! let (used, event) = server.recv(&wire, &mut storage, None);
//! let Some(Event::Request { head, .. }) = event else { panic!("a request") };
//! assert_eq!(head.target, "/hello");
//! assert_eq!(used, wire.len());
//!
//! let mut reply = Vec::new();
//! let date = format_imf_fixdate(std::time::UNIX_EPOCH);
//! server.send_response(200, Some(2), false, &mut reply, |plan, out| {
//!     let head = ResponseHeadOut { close: plan.close, date: Some(&date), ..ResponseHeadOut::new(200, &[]) };
//!     encode_head(&head, plan.length, out)?;
//!     out.extend_from_slice(b"hi");
//!     Ok(2)
//! })?;
//!
//! let mut storage = [const { MaybeUninit::uninit() }; 16];
//! let (used, event) = client.recv(&reply, &mut storage, None);
//! let Some(Event::Response { head, .. }) = event else { panic!("a response") };
//! assert_eq!(head.status, 200);
//! let (_, event) = client.recv(&reply[used..], &mut storage, None);
//! assert!(matches!(event, Some(Event::Data { data: b"hi", .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod event;
mod recv;
mod send;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::role::Role;
pub use event::{Error, Event, RequestId, ResponsePlan, SendError, Timeout};

use crate::http1::body_decoder::BodyDecoder;
use crate::http1::framing::{BodyLength, HostMemo};
use crate::http1::{HeadScanner, LastResponseHead, Limits};
use crate::{Method, Version};

/// What one connection enforces: head limits, body limits and deadlines. Shared by the
/// connections of a server worker or a client (an `Arc`), so a connection holds a pointer, not
/// a copy.
///
/// | Setting | Role | Default |
/// |---|---|---|
/// | `limits` | both | [`Limits::default`] (32 KiB head, 100 fields, 8 KiB target) |
/// | `max_body_bytes` | both | 2 MiB |
/// | `max_drain_bytes` | server | 64 KiB |
/// | `header_read_timeout` | server | 10 s |
/// | `keep_alive_timeout` | server | 75 s |
/// | `min_body_rate` / `min_body_rate_grace` | server | 240 B/s after 5 s |
/// | `read_timeout` | client | 30 s |
/// | `http2_preface` | server | off |
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use peregrine::http1::conn::Config;
/// let config = Config { keep_alive_timeout: Duration::from_secs(5), ..Config::default() };
/// assert_eq!(config.max_drain_bytes, 64 * 1024);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Limits on a received head (bytes, fields, target).
    pub limits: Limits,
    /// Largest received body: a server refuses a larger declared one with 413 before reading
    /// it and fails a longer chunked one; a client fails a longer response body.
    pub max_body_bytes: u64,
    /// Server: how much of a request body the handler did not read is read and discarded
    /// after the response to keep the connection; more and the connection closes instead.
    pub max_drain_bytes: u64,
    /// Server: a whole request head must arrive within this time from its first byte (from the
    /// connection's start, for the first): the slowloris defence.
    pub header_read_timeout: Duration,
    /// Server: how long the connection may sit idle between requests.
    pub keep_alive_timeout: Duration,
    /// Server: the least average rate, in bytes per second, of a request body the handler
    /// waits for, once `min_body_rate_grace` has passed since it first waited (Kestrel's
    /// `MinRequestBodyDataRate`); 0 turns the check off. A drained body is held to it too.
    pub min_body_rate: u64,
    /// Server: the grace period before `min_body_rate` applies.
    pub min_body_rate_grace: Duration,
    /// Client: the longest wait for the next byte while a response is awaited (`None`: no
    /// limit).
    pub read_timeout: Option<Duration>,
    /// Server: the HTTP/2 connection preface at the start of the input is reported
    /// ([`Event::Http2Preface`]), and first bytes that cannot begin an HTTP/1 request line
    /// are closed unanswered ([`Error::NotHttp1`]): an HTTP/2 client (prior knowledge, RFC 9113
    /// §3.3) may be on the other end.
    pub http2_preface: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            limits: Limits::default(),
            max_body_bytes: 2 * 1024 * 1024,
            max_drain_bytes: 64 * 1024,
            header_read_timeout: Duration::from_secs(10),
            keep_alive_timeout: Duration::from_secs(75),
            min_body_rate: 240,
            min_body_rate_grace: Duration::from_secs(5),
            read_timeout: Some(Duration::from_secs(30)),
            http2_preface: false,
        }
    }
}

impl Config {
    /// When a body that has received `received` bytes since it first waited must have received
    /// more: grace + received / rate, averaged from the start.
    fn rate_allowance(&self, received: u64) -> Option<Duration> {
        if self.min_body_rate == 0 {
            return None;
        }
        let secs = received as f64 / self.min_body_rate as f64;
        Some(self.min_body_rate_grace + Duration::from_secs_f64(secs))
    }
}

/// Where the receiving side is.
///
/// ```text
/// server: Head ─(request)→ Body ─(end)→ Waiting ─(response finished)→ Head
///                           └──(response finished, body unread)→ Drain ─(end)→ Head
/// client: Head ─(response)→ Body ─(end)→ Head (next in flight)
/// either: ─(101, tunnel)→ Upgraded;  ─(error, close, timeout)→ Closed
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recv {
    /// A head is awaited (the decoder is done).
    Head,
    /// The current message's body is being read (the decoder is active).
    Body,
    /// Server: the request is complete; the next head waits for the response to end.
    Waiting,
    /// Server: after the response, the rest of an unread body is discarded.
    Drain,
    /// The connection switched protocols: nothing more is HTTP/1.1.
    Upgraded,
    /// Nothing more is read.
    Closed,
}

/// Where the sending side is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Send {
    /// No body is being sent: a server has not begun its response, a client may send.
    Idle,
    /// A body is being sent with `length`'s framing; `left`: bytes still due for a
    /// Content-Length body; `crlf`: the CRLF after a chunk the driver wrote itself is due.
    Body { length: BodyLength, left: u64, crlf: bool },
    /// The connection switched protocols after our head.
    Upgraded,
    /// Nothing more is sent (after a close was announced, or a refusal).
    Closed,
}

/// What the server knows of the request being answered.
#[derive(Clone, Copy, Debug)]
struct Exchange {
    id: u32,
    is_head: bool,
    version: Version,
    /// The request allows the connection to go on (RFC 9112 §9.3).
    keep_alive: bool,
    /// The request asked to upgrade (RFC 9110 §7.8): a `101` may answer it.
    upgrade: bool,
    /// The response head was written.
    responded: bool,
    /// The connection closes after this response (a body error, a body left unread that
    /// cannot be drained, a slow body).
    close: bool,
    /// [`Conn::settle`] ran: a body not yet read is drained after the response.
    settled: bool,
}

impl Exchange {
    const NONE: Exchange = Exchange {
        id: 0,
        is_head: false,
        version: Version::Http11,
        keep_alive: false,
        upgrade: false,
        responded: true,
        close: false,
        settled: false,
    };
}

/// A clock that starts at an event whose time the connection learns later: the driver's next
/// [`Conn::poll_timeout`] (called as it starts to wait, right after the bytes that started
/// it) gives the time. `recv` then needs no clock read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clock {
    Off,
    /// Started; the time is the next `poll_timeout`'s `now`.
    Started,
    At(Instant),
}

impl Clock {
    /// The start, fixed at `now` if it was not yet.
    fn fix(&mut self, now: Instant) {
        if *self == Clock::Started {
            *self = Clock::At(now);
        }
    }

    fn at(self) -> Option<Instant> {
        match self {
            Clock::At(t) => Some(t),
            _ => None,
        }
    }

    /// Starts the clock unless it runs.
    fn start(&mut self) {
        if *self == Clock::Off {
            *self = Clock::Started;
        }
    }
}

/// What the connection wrote or will write itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    Nothing,
    /// `100 Continue` goes out before anything appended next (RFC 9110 §10.1.1).
    Continue,
    /// The refusal of a head: its status and reason, then the close.
    Refusal {
        status: u16,
        reason: &'static str,
        is_head: bool,
    },
}

/// A client's request whose response has not ended.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    id: u32,
    method: Method,
}

/// One HTTP/1.1 connection, either role: its state, no I/O. See the [module docs](self) for
/// the driver's contract.
#[derive(Debug)]
pub struct Conn {
    config: Arc<Config>,
    role: Role,
    recv: Recv,
    send: Send,
    /// The body being received (done between messages).
    decoder: BodyDecoder,
    scanner: HeadScanner,
    /// Server: the request being answered.
    exchange: Exchange,
    pending: Pending,
    /// Server: `100 Continue` is owed to the request being answered: sent when its body is
    /// first asked for and none of it has arrived.
    cont: bool,
    /// Server: no head has been received yet (the preface and first-bytes rules apply, and the
    /// head clock runs from the start).
    first: bool,
    /// Server: from now on every response closes the connection (a graceful shutdown).
    shutdown: bool,
    /// Exchanges begun: the next one's number.
    next_id: u32,
    /// Server: the last Host value found valid on this connection (checked once).
    host: HostMemo,
    /// Server: the head being received: its clock runs from its first byte (from the
    /// connection's start for the first head).
    head_clock: Clock,
    /// When the current wait began, for the deadlines counted from it (the idle connection,
    /// the drain, the client's response); set by `poll_timeout`, cleared by activity.
    wait_since: Option<Instant>,
    /// Server: the rate clock of the body the handler reads, from when it first waited.
    body_clock: Clock,
    /// Server: data bytes of an unread body discarded so far.
    drained: u64,
    /// Client: requests sent whose responses have not ended, oldest first.
    in_flight: VecDeque<InFlight>,
    /// Client: how many of `in_flight` are not idempotent.
    unsafe_in_flight: u32,
    /// Client: bytes of the front response received (0: the server may not have seen the
    /// request).
    received: u64,
    /// Client: bytes of the incomplete response head seen at the last look (more are new
    /// bytes, which start a new wait). A `u32` fits in the struct's padding: a server's
    /// connection does not grow for it.
    head_seen: u32,
    /// Client: the connection may carry requests after those in flight.
    reusable: bool,
    /// Client: the response being received turns the connection into a tunnel (a 101, a 2xx
    /// to CONNECT).
    tunnel: bool,
    /// Client: the last response head parsed, answering the heads that repeat it byte for byte
    /// (a server's do while their Date does). Boxed: 1.6 KiB only a client connection holds.
    last_response: Option<Box<LastResponseHead>>,
}

impl Conn {
    /// A connection in `role`, started at `now` (a server's first head is timed from it).
    pub fn new(role: Role, config: Arc<Config>, now: Instant) -> Conn {
        let server = role == Role::Server;
        Conn {
            config,
            role,
            recv: Recv::Head,
            send: Send::Idle,
            decoder: BodyDecoder::new(BodyLength::Length(0), 0),
            scanner: HeadScanner::new(),
            exchange: Exchange::NONE,
            pending: Pending::Nothing,
            cont: false,
            first: server,
            shutdown: false,
            next_id: 1,
            host: HostMemo::default(),
            head_clock: if server { Clock::At(now) } else { Clock::Off },
            wait_since: None,
            body_clock: Clock::Off,
            drained: 0,
            in_flight: VecDeque::new(),
            unsafe_in_flight: 0,
            received: 0,
            head_seen: 0,
            reusable: true,
            tunnel: false,
            last_response: None,
        }
    }

    /// Which end of the connection this is.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The connection's limits and deadlines.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether nothing more is read or sent: write the output, then close the transport.
    pub fn is_closed(&self) -> bool {
        self.recv == Recv::Closed
            && match self.role {
                Role::Server => self.send == Send::Closed && self.pending == Pending::Nothing,
                Role::Client => true,
            }
    }

    /// Whether the connection switched protocols: after the `101` (or, for a client, the 2xx
    /// to CONNECT) the input belongs to the new protocol.
    pub fn is_upgraded(&self) -> bool {
        self.recv == Recv::Upgraded
    }

    /// Server: whether the connection is between requests, no byte of the next one read (it
    /// may be closed without cutting a request short).
    pub fn is_idle(&self) -> bool {
        self.role == Role::Server && self.recv == Recv::Head && self.head_clock == Clock::Off
    }

    /// Whether a message's body is still being received: a server's current request's (the
    /// handler may ask for it), a client's front response's.
    pub fn is_receiving_body(&self) -> bool {
        self.recv == Recv::Body
    }

    /// Server: graceful shutdown. From now on every response says `Connection: close` and the
    /// connection ends after it. Client: no more requests are sent.
    pub fn shutdown(&mut self) {
        self.shutdown = true;
        self.reusable = false;
    }

    /// Client: requests sent whose response has not ended.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Client: whether a request with `method` can be sent now: the connection is reusable,
    /// no request body is being sent, and pipelining behind the requests in flight is safe
    /// (RFC 9112 §9.3.2: "A user agent SHOULD NOT pipeline requests after a non-idempotent
    /// method").
    pub fn can_send(&self, method: Method) -> bool {
        self.role == Role::Client
            && self.reusable
            && self.send == Send::Idle
            && matches!(self.recv, Recv::Head | Recv::Body)
            && (self.in_flight.is_empty() || (method.is_idempotent() && self.unsafe_in_flight == 0))
    }

    /// Client: whether the connection can carry requests after those in flight (no
    /// `Connection: close`, tunnel, error or end of input seen).
    pub fn is_reusable(&self) -> bool {
        self.reusable && matches!(self.recv, Recv::Head | Recv::Body)
    }

    /// Data bytes of the body being received, or last received.
    pub fn body_received(&self) -> u64 {
        self.decoder.received()
    }

    /// Data bytes still to come of the body being received, when its length is known.
    pub fn body_remaining(&self) -> Option<u64> {
        self.decoder.remaining()
    }

    /// The next deadline: call [`Conn::handle_timeout`] when it passes. `now` is when the
    /// driver starts waiting for input: the clocks of what it waits for start there if they have
    /// not (a head's from its first bytes, an idle server connection's keep-alive, a body's
    /// rate, a drain's, a client's wait for its response), so reading input needs no clock.
    pub fn poll_timeout(&mut self, now: Instant) -> Option<Instant> {
        self.head_clock.fix(now);
        self.body_clock.fix(now);
        let waits = match self.role {
            Role::Server => {
                self.recv == Recv::Drain || self.recv == Recv::Head && self.head_clock == Clock::Off
            }
            Role::Client => !self.in_flight.is_empty() && self.config.read_timeout.is_some(),
        };
        if waits {
            self.wait_since.get_or_insert(now);
        }
        self.deadline().map(|(at, _)| at)
    }

    /// The deadline in force and what passing it means.
    #[inline]
    fn deadline(&self) -> Option<(Instant, Timeout)> {
        let c = &self.config;
        match (self.role, self.recv) {
            (Role::Server, Recv::Head) => match self.head_clock {
                Clock::At(since) => Some((since + c.header_read_timeout, Timeout::Head)),
                Clock::Started => None,
                Clock::Off => {
                    self.wait_since.map(|since| (since + c.keep_alive_timeout, Timeout::Idle))
                }
            },
            (Role::Server, Recv::Body) => {
                let allowance = c.rate_allowance(self.decoder.received())?;
                self.body_clock.at().map(|since| (since + allowance, Timeout::BodyRate))
            }
            (Role::Server, Recv::Drain) => {
                let allowance = c.rate_allowance(self.drained).unwrap_or(c.header_read_timeout);
                self.wait_since.map(|since| (since + allowance, Timeout::Drain))
            }
            (Role::Client, Recv::Head | Recv::Body) if !self.in_flight.is_empty() => {
                let d = c.read_timeout?;
                self.wait_since.map(|since| (since + d, Timeout::Read))
            }
            _ => None,
        }
    }

    /// A deadline may have passed: what passed, if one did, and the connection acts on it
    /// (see [`Timeout`]; all but `BodyRate` close it).
    pub fn handle_timeout(&mut self, now: Instant) -> Option<Timeout> {
        let (at, timeout) = self.deadline()?;
        if now < at {
            return None;
        }
        match timeout {
            Timeout::BodyRate => {
                // The body fails; its framing is lost, so the response closes the connection.
                self.recv = Recv::Closed;
                self.exchange.close = true;
                self.cont = false;
            }
            Timeout::Head | Timeout::Idle | Timeout::Drain => self.close(),
            Timeout::Read => {
                self.recv = Recv::Closed;
                self.reusable = false;
            }
        }
        Some(timeout)
    }

    /// Nothing more is read or sent.
    fn close(&mut self) {
        self.recv = Recv::Closed;
        self.send = Send::Closed;
        self.reusable = false;
    }
}
