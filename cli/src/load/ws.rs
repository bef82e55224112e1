//! `peregrine load --ws`: one WebSocket per connection (the client's, over HTTP/1.1), messages
//! sent to an echo server and their round trips timed.
//!
//! Per message, in a closed loop: one clock read (the echo's arrival, which is also the next
//! message's send time), a clone of a prepared payload (a reference count), the echo compared
//! whole with what was sent, a histogram record, and a look at the `--timeout` watchdog's
//! state (its timer is not moved per message). Messages are queued with
//! [`WebSocket::queue`]: the socket is written once per wait for the server, when `recv` finds
//! no whole message left in what it read, so echoes that arrive together are answered in one
//! write. Nothing is allocated per message without compression
//! (`cli/src/load/alloc_tests.rs`).

use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use peregrine::client::Client;
use peregrine::client::conn::Config;
use peregrine::websocket::{self, Message, Utf8Bytes, WebSocket};
use tokio::time::{Instant, Sleep, sleep, sleep_until};

use super::args::{Plan, WsPlan};
use super::stats::{ErrorKind, Live, micros};
use super::thread::{RECONNECT_PAUSE, TIMER_SLACK, Thread};

/// Distinct payloads per run, sent in turn: an echo of the wrong message (reordered,
/// duplicated) is a mismatch, and a compressor sees more than one message repeated.
pub const VARIANTS: usize = 16;

/// What a load thread needs to open WebSockets and the messages they send.
pub struct Kit {
    client: Client,
    config: websocket::Config,
    /// The messages, [`VARIANTS`] of them, made once per thread (their clones count
    /// references this thread alone touches).
    messages: Vec<Message>,
}

impl Kit {
    /// The thread's client and messages, from the connection settings and the plan.
    pub fn new(plan: &Plan, ws: &WsPlan, config: &Config) -> Kit {
        let client = Client::builder()
            .connection_config(config.clone())
            .request_timeout(plan.timeout)
            .pool_max_idle_per_origin(0)
            .build();
        Kit { client, config: ws_config(ws), messages: messages(ws) }
    }

    /// Opens one WebSocket to the plan's URL, with its header fields on the handshake.
    async fn open(&self, plan: &Plan) -> Result<WebSocket, peregrine::client::Error> {
        let mut request = self.client.websocket(&plan.url).config(self.config.clone());
        for (name, value) in &plan.headers {
            if let (Ok(n), Ok(v)) = (
                http::HeaderName::from_bytes(name.as_bytes()),
                http::HeaderValue::from_bytes(value),
            ) {
                request = request.header(n, v);
            }
        }
        request.connect().await
    }

    /// Opens one WebSocket, its time recorded as a connect time; a failure counted.
    pub async fn connect(&self, thread: &Thread) -> Option<WebSocket> {
        let started = Instant::now();
        match self.open(&thread.shared.plan).await {
            Ok(ws) => {
                let mut stats = thread.stats.borrow_mut();
                let _ = stats.connect.record(micros(started.elapsed()));
                stats.connects += 1;
                Some(ws)
            }
            Err(e) => {
                thread.error(ErrorKind::of_handshake(&e), 1);
                None
            }
        }
    }
}

/// Opens one WebSocket before the run (the URL, the host, TLS and the handshake checked) and
/// closes it; returns whether permessage-deflate was agreed, or the failure in a line.
pub async fn probe(plan: &Plan, ws: &WsPlan, config: &Config) -> Result<bool, String> {
    let kit = Kit::new(plan, ws, config);
    let mut socket = kit.open(plan).await.map_err(|e| match ErrorKind::of_handshake(&e) {
        ErrorKind::Handshake => format!("{e} (handshake refused)"),
        _ => e.to_string(),
    })?;
    let deflate = socket.is_compressed();
    let bye = socket.close(websocket::CloseCode::NORMAL, "");
    let _ = tokio::time::timeout(Duration::from_secs(1), bye).await;
    Ok(deflate)
}

/// The WebSocket settings of a run: permessage-deflate offered with `--deflate`, messages as
/// large as the run's. No timer of the WebSocket's own: `--timeout` is the [`Watchdog`]'s.
pub fn ws_config(ws: &WsPlan) -> websocket::Config {
    let limits = websocket::Limits {
        max_message_size: ws.size.max(1 << 20),
        ..websocket::Limits::default()
    };
    websocket::Config {
        limits,
        deflate: ws.deflate.then(websocket::DeflateConfig::default),
        ..websocket::Config::default()
    }
}

/// A small, fast generator (xorshift64*): payloads differ between variants and look random to
/// a compressor.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// One payload of `size` bytes:
/// - binary: pseudo-random bytes (incompressible);
/// - text, and anything with `--deflate`: JSON-like records,
///   `[{"id":1234,"user":"user-1234","active":true,"score":56.78,"tags":["red","blue"]},...`
///   with varying numbers and words, cut at `size` (ASCII: valid UTF-8; compressible as real
///   JSON is, about 3x alone and more with the previous messages in the window).
pub fn payload(ws: &WsPlan, variant: usize) -> Vec<u8> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (variant as u64 + 1).wrapping_mul(0x1000_0001));
    let mut out = Vec::with_capacity(ws.size + 160);
    if ws.text || ws.deflate {
        const WORDS: [&str; 8] = ["red", "blue", "green", "admin", "beta", "eu", "us", "mobile"];
        out.push(b'[');
        while out.len() < ws.size {
            let r = rng.next();
            let id = r % 100_000;
            let record = format!(
                "{{\"id\":{id},\"user\":\"user-{id}\",\"active\":{},\"score\":{}.{:02},\
                 \"tags\":[\"{}\",\"{}\"]}},",
                r >> 63 == 1,
                (r >> 20) % 1000,
                (r >> 30) % 100,
                WORDS[(r >> 40) as usize % 8],
                WORDS[(r >> 44) as usize % 8],
            );
            out.extend_from_slice(record.as_bytes());
        }
    } else {
        while out.len() < ws.size {
            out.extend_from_slice(&rng.next().to_le_bytes());
        }
    }
    out.truncate(ws.size);
    out
}

/// The run's messages, [`VARIANTS`] of them.
fn messages(ws: &WsPlan) -> Vec<Message> {
    (0..VARIANTS)
        .map(|v| {
            let bytes = payload(ws, v);
            if ws.text {
                // ASCII: valid UTF-8.
                Message::Text(Utf8Bytes::from(String::from_utf8(bytes).unwrap_or_default()))
            } else {
                Message::Binary(bytes.into())
            }
        })
        .collect()
}

/// `--timeout` for the messages in flight: ready once no echo came for that long since the
/// last progress (an echo, or a message sent when none was in flight).
///
/// The timer is never moved per message: when it fires before the real deadline it is moved
/// there, and a wait checks only whether it has fired (a load); the WebSocket's own idle limit
/// read the clock and its timer at every wait, about 200 instructions per message.
struct Watchdog {
    sleep: Pin<Box<Sleep>>,
    timeout: Duration,
    /// The task's waker is registered with the timer, which has not fired since.
    registered: bool,
}

impl Watchdog {
    fn new(timeout: Duration, now: Instant) -> Watchdog {
        Watchdog { sleep: Box::pin(sleep_until(now + timeout)), timeout, registered: false }
    }

    /// `Ready` once `since + timeout` has passed.
    fn poll(&mut self, cx: &mut Context<'_>, since: Instant) -> Poll<()> {
        if self.registered && !self.sleep.is_elapsed() {
            return Poll::Pending;
        }
        loop {
            // tokio's coop budget may make a poll return early without registering the waker.
            let budget = tokio::task::coop::has_budget_remaining();
            if self.sleep.as_mut().poll(cx).is_pending() {
                self.registered = budget;
                return Poll::Pending;
            }
            let due = since + self.timeout;
            if Instant::now() >= due {
                self.registered = false;
                return Poll::Ready(());
            }
            self.sleep.as_mut().reset(due);
        }
    }
}

/// What a wait for the server ended with.
enum Wake {
    Got(Option<Result<Message, websocket::Error>>),
    /// The open loop's next message is due.
    Due,
    /// `--timeout` passed with messages in flight.
    TimedOut,
}

/// A message in flight.
struct Sent {
    /// Where its round trip counts from: when it was queued, or in an open loop when it was
    /// due.
    start: Instant,
    variant: u8,
    /// Sent after the warm-up.
    recording: bool,
}

/// Drives one WebSocket for the whole run: queues messages while it has room (closed loop) or
/// when one is due (open loop), checks and times each echo, reopens the WebSocket when it
/// fails or the server closes it.
pub async fn drive(
    thread: Rc<Thread>,
    kit: Rc<Kit>,
    mut ws: Option<WebSocket>,
    index: u32,
    t0: Instant,
    measure_from: Instant,
) {
    let plan = &thread.shared.plan;
    let depth = plan.pipeline as usize;
    let mut in_flight: VecDeque<Sent> = VecDeque::with_capacity(depth);
    let conns = f64::from(plan.connections);
    let interval = plan.rate.map(|r| Duration::from_secs_f64(conns / r));
    let mut due = interval.map(|i| t0 + i.mul_f64(f64::from(index) / conns));
    let mut due_late = false;
    let mut variant = index as usize % VARIANTS;
    let mut dog = Watchdog::new(plan.timeout, Instant::now());
    // The last echo, or the last message sent with none in flight: the watchdog counts from it.
    let mut progress = Instant::now();
    // The WebSocket's frame octets (read, written) when last looked at.
    let mut wire = (0, 0);
    // The time of the last event (an echo, a wake-up): an echo's arrival and, in a closed
    // loop, the next message's send time, one clock read for both.
    let mut now = Instant::now();
    loop {
        let Some(w) = ws.as_mut() else {
            if thread.spent() {
                return;
            }
            ws = kit.connect(&thread).await;
            wire = (0, 0);
            if ws.is_none() {
                // In count mode a failed connect loses a message, so a run always ends.
                let _ = thread.take();
                sleep(RECONNECT_PAUSE).await;
            }
            now = Instant::now();
            continue;
        };
        // Queue what may go now; the next wait for the server writes it.
        let mut failed = None;
        loop {
            let room = in_flight.len() < depth;
            let (due_start, late) = match due {
                None if !room => break,
                None => (None, false),
                Some(d) if d > now => break,
                Some(d) => {
                    let late = due_late || now - d > TIMER_SLACK;
                    (late.then_some(d), late)
                }
            };
            if !room {
                // Due with its depth in flight: late, whenever it goes.
                due_late = true;
                break;
            }
            let start = due_start.unwrap_or(now);
            let recording = match due {
                Some(d) => d >= measure_from,
                None => now >= measure_from,
            };
            if recording && !thread.take() {
                break;
            }
            if let (Some(d), Some(i)) = (due.as_mut(), interval) {
                *d += i;
                due_late = false;
            }
            match w.queue(kit.messages[variant].clone()) {
                Ok(()) => {
                    if in_flight.is_empty() {
                        progress = now;
                    }
                    in_flight.push_back(Sent { start, variant: variant as u8, recording });
                    variant = (variant + 1) % VARIANTS;
                    if recording {
                        let mut stats = thread.stats.borrow_mut();
                        stats.sent += 1;
                        stats.late += u64::from(late);
                    }
                }
                Err(e) => {
                    failed = Some((e, recording));
                    break;
                }
            }
        }
        if let Some((e, recording)) = failed {
            // Not even queued: the WebSocket is closing.
            if recording {
                thread.error(ErrorKind::of_ws(&e), 1);
            }
            lose(&thread, &mut in_flight, ErrorKind::of_ws(&e));
            ws = None;
            continue;
        }
        if in_flight.is_empty() {
            if thread.spent() {
                return;
            }
            match due {
                // Not due yet: wait for the schedule.
                Some(d) => sleep_until(d).await,
                // Nothing in flight and nothing could be sent (cannot happen with room):
                // start over on a new WebSocket.
                None => ws = None,
            }
            now = Instant::now();
            continue;
        }
        // Wait for an echo, or in an open loop with room in flight, for the next due time.
        let woke = match due {
            Some(d) if in_flight.len() < depth && !thread.spent() => {
                tokio::select! {
                    biased;
                    got = w.recv() => Wake::Got(got),
                    _ = sleep_until(d) => Wake::Due,
                    _ = poll_fn(|cx| dog.poll(cx, progress)) => Wake::TimedOut,
                }
            }
            _ => {
                let mut recv = pin!(w.recv());
                poll_fn(|cx| {
                    if let Poll::Ready(got) = recv.as_mut().poll(cx) {
                        return Poll::Ready(Wake::Got(got));
                    }
                    dog.poll(cx, progress).map(|()| Wake::TimedOut)
                })
                .await
            }
        };
        now = Instant::now();
        let got = match woke {
            Wake::Got(got) => got,
            Wake::Due => continue,
            Wake::TimedOut => {
                // No echo for --timeout: the connection is given up, its messages lost.
                lose(&thread, &mut in_flight, ErrorKind::Timeout);
                ws = None;
                continue;
            }
        };
        progress = now;
        let echo = match &got {
            Some(Ok(Message::Binary(b))) => b.as_ref(),
            Some(Ok(Message::Text(t))) => t.as_bytes().as_ref(),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Close(_))) | None => {
                // The server closed the WebSocket (or its connection).
                lose(&thread, &mut in_flight, ErrorKind::Closed);
                ws = None;
                continue;
            }
            Some(Err(e)) => {
                lose(&thread, &mut in_flight, ErrorKind::of_ws(e));
                ws = None;
                continue;
            }
        };
        let Some(sent) = in_flight.pop_front() else {
            // A message nobody sent.
            thread.error(ErrorKind::Mismatch, 1);
            continue;
        };
        if !sent.recording {
            wire = w.wire_bytes();
            continue;
        }
        if echo != kit.messages[usize::from(sent.variant)].as_payload() {
            thread.error(ErrorKind::Mismatch, 1);
            continue;
        }
        let (read, written) = w.wire_bytes();
        let mut stats = thread.stats.borrow_mut();
        let _ = stats.latency.record(micros(now.saturating_duration_since(sent.start)));
        stats.bytes += echo.len() as u64;
        stats.wire_received += read - wire.0;
        stats.wire_sent += written - wire.1;
        wire = (read, written);
        drop(stats);
        Live::bump(&thread.live.completed, 1);
    }
}

/// The payload of a text or binary message.
trait AsPayload {
    fn as_payload(&self) -> &[u8];
}

impl AsPayload for Message {
    fn as_payload(&self) -> &[u8] {
        match self {
            Message::Text(t) => t.as_bytes().as_ref(),
            Message::Binary(b) => b.as_ref(),
            _ => &[],
        }
    }
}

/// Counts the messages in flight on a failed WebSocket as errors of `kind`.
fn lose(thread: &Thread, in_flight: &mut VecDeque<Sent>, kind: ErrorKind) {
    let n = in_flight.iter().filter(|s| s.recording).count() as u64;
    if n > 0 {
        thread.error(kind, n);
    }
    in_flight.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(size: usize, text: bool, deflate: bool) -> WsPlan {
        WsPlan { size, text, deflate }
    }

    #[test]
    fn payloads_have_the_size_and_kind_asked_for() {
        struct Case {
            plan: WsPlan,
            ascii: bool,
        }
        let cases = [
            Case { plan: plan(0, false, false), ascii: true },
            Case { plan: plan(20, false, false), ascii: false },
            Case { plan: plan(16 << 10, false, false), ascii: false },
            Case { plan: plan(20, true, false), ascii: true },
            Case { plan: plan(1 << 10, true, true), ascii: true },
            Case { plan: plan(1 << 10, false, true), ascii: true },
        ];
        for c in cases {
            let a = payload(&c.plan, 0);
            let b = payload(&c.plan, 1);
            assert_eq!(a.len(), c.plan.size, "{:?}", c.plan);
            assert_eq!(a.is_ascii(), c.ascii || a.is_empty(), "{:?}", c.plan);
            if c.plan.size >= 20 {
                assert_ne!(a, b, "variants differ: {:?}", c.plan);
            }
        }
        let json = payload(&plan(300, false, true), 3);
        assert!(json.starts_with(b"[{\"id\":"), "{}", String::from_utf8_lossy(&json));
    }
}
