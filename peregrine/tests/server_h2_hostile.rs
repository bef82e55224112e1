//! The HTTP/2 server under attack, as a security tester would try it: every abuse budget of
//! the wire layer (`http2::Limits`, docs/STRICTNESS.md) observed from a real loopback socket
//! with raw frames — rapid reset, provoked resets, CONTINUATION floods, an HPACK bomb,
//! control-frame floods while not reading, empty DATA floods, zero-window holds, a peer that
//! reads nothing, the stream limit.
//!
//! Each attack runs round after round (a fresh connection each time) while a second
//! connection sends a request every few milliseconds; each test checks
//! - the documented reaction (GOAWAY(ENHANCE_YOUR_CALM) after the budget's burst, resets with
//!   the documented code, nothing past the limit reaching a handler);
//! - that the second connection is answered promptly throughout (its latency is measured);
//! - that the server's memory stays bounded (the process's RSS before and after; the server
//!   runs in this process, and the attacker reuses its buffers) and that every handler and
//!   response body the attack started is dropped.
//!
//! The tests run one at a time (a lock), so the RSS and latency figures are their own.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use peregrine::http2::hpack::Encoder;
use peregrine::http2::{Config as H2Config, Conn, Event, HeadersKind, RequestHead, Role};
use peregrine::server::Config;
use peregrine::{Body, Request, Response, ServerHandle};
use support::RawClient;
use support::h2frames::{self as h2, Tally};

/// One test at a time: RSS and latency are process-wide.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Handlers running (`/slow`, `/sink`); response bodies alive (`/big`); bytes `/big` bodies
/// produced; handler calls (but the probe's).
static LIVE_HANDLERS: AtomicUsize = AtomicUsize::new(0);
static LIVE_BODIES: AtomicUsize = AtomicUsize::new(0);
static PRODUCED: AtomicU64 = AtomicU64::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);

fn reset_counters() {
    LIVE_HANDLERS.store(0, Ordering::SeqCst);
    LIVE_BODIES.store(0, Ordering::SeqCst);
    PRODUCED.store(0, Ordering::SeqCst);
    CALLS.store(0, Ordering::SeqCst);
}

/// Counts itself alive in `LIVE_HANDLERS` or `LIVE_BODIES` until dropped.
struct Alive(&'static AtomicUsize);

impl Alive {
    fn new(counter: &'static AtomicUsize) -> Alive {
        counter.fetch_add(1, Ordering::SeqCst);
        Alive(counter)
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Size of each chunk of a `/big` body.
const CHUNK: usize = 16 * 1024;

/// - `/` answers `ok` (the probe's request), `/plant` answers `planted`;
/// - `/slow` holds its stream for 10 s (a handler an attack starts and must see dropped);
/// - `/hold` answers after 200 ms;
/// - `/sink` reads the request body to its end;
/// - `/big` streams 1 MiB in 16 KiB chunks made on demand (counted in `PRODUCED`).
async fn app(mut req: Request) -> Response {
    if req.path() != "/" {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }
    match req.path() {
        "/" => Response::new("ok"),
        "/plant" => Response::new("planted"),
        "/slow" => {
            let _alive = Alive::new(&LIVE_HANDLERS);
            tokio::time::sleep(Duration::from_secs(10)).await;
            Response::new("late")
        }
        "/hold" => {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Response::new("held")
        }
        "/sink" => {
            let _alive = Alive::new(&LIVE_HANDLERS);
            let mut body = req.take_body();
            let mut n = 0;
            while let Some(Ok(chunk)) = body.chunk().await {
                n += chunk.len();
            }
            Response::new(format!("{n}"))
        }
        "/big" => {
            let alive = Alive::new(&LIVE_BODIES);
            let mut left = 64;
            Response::new(Body::from_poll_fn(move |_| {
                let _ = &alive;
                if left == 0 {
                    return Poll::Ready(None);
                }
                left -= 1;
                PRODUCED.fetch_add(CHUNK as u64, Ordering::SeqCst);
                Poll::Ready(Some(Ok(Bytes::from(vec![b'x'; CHUNK]))))
            }))
        }
        _ => Response::with_status(http::StatusCode::NOT_FOUND, Body::empty()),
    }
}

fn spawn(config: Config) -> ServerHandle {
    reset_counters();
    support::spawn_with(config, app)
}

/// The tests' config: `write_timeout` short, so stalled sends give up quickly.
fn config() -> Config {
    Config { write_timeout: Duration::from_millis(400), ..support::test_config() }
}

/// The process's resident set, in KiB.
fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Waits until `f` holds, up to `within`.
fn eventually(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while !f() {
        if start.elapsed() > within {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// A well-behaved HTTP/2 client on its own connection (this crate's `http2::Conn` in the
/// client role over a blocking socket): one request at a time, timed.
struct Probe {
    tcp: TcpStream,
    conn: Conn,
    out: Vec<u8>,
    buf: Vec<u8>,
}

impl Probe {
    fn connect(addr: SocketAddr) -> Probe {
        let tcp = TcpStream::connect(addr).unwrap();
        tcp.set_nodelay(true).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let conn = Conn::new(Role::Client, H2Config::default(), Instant::now());
        Probe { tcp, conn, out: Vec::new(), buf: vec![0; 16 * 1024] }
    }

    /// GET `/`; how long the answer took. Panics on anything but a complete 200 `ok`.
    fn get(&mut self) -> Duration {
        let start = Instant::now();
        let head = RequestHead {
            method: b"GET",
            scheme: b"http",
            authority: b"localhost",
            path: b"/",
            protocol: None,
        };
        let id = self.conn.send_request(&head, [], true).unwrap();
        self.flush();
        let (mut status, mut body, mut ended) = (0, 0, false);
        while !ended {
            let n = self.tcp.read(&mut self.buf).expect("probe: no answer within 5 s");
            assert!(n > 0, "probe: the server closed the connection");
            let mut input = &self.buf[..n];
            loop {
                let (used, event) = self.conn.recv(input, Instant::now());
                match event {
                    Some(Event::Headers {
                        stream,
                        kind: HeadersKind::Response,
                        end_stream,
                        section,
                    }) if stream == id => {
                        status = section.status().unwrap_or(0);
                        ended |= end_stream;
                    }
                    Some(Event::Data { stream, data, end_stream }) if stream == id => {
                        body += data.len();
                        let len = data.len();
                        ended |= end_stream;
                        self.conn.release_capacity(stream, len);
                    }
                    Some(Event::Closed(c)) => panic!("probe: connection closed: {c:?}"),
                    Some(Event::Reset { stream, reason, .. }) => {
                        panic!("probe: {stream:?} reset {reason:?}")
                    }
                    _ => {}
                }
                input = &input[used..];
                if input.is_empty() && used == 0 {
                    break;
                }
            }
            self.flush();
        }
        assert_eq!((status, body), (200, 2), "probe: unexpected answer");
        start.elapsed()
    }

    fn flush(&mut self) {
        self.out.clear();
        self.conn.poll_transmit(&mut self.out);
        self.tcp.write_all(&self.out).unwrap();
    }
}

/// What a siege measured.
struct Siege<R> {
    rounds: Vec<R>,
    /// The probe's latencies while the attack ran.
    latencies: Vec<Duration>,
    rss_before_kb: u64,
    rss_after_kb: u64,
}

/// Runs `round` (one attack on a fresh connection) again and again for at least `min` and at
/// least `min_rounds` times, while a probe connection sends a request every 5 ms.
fn siege<R: Send>(
    addr: SocketAddr,
    min: Duration,
    min_rounds: usize,
    round: impl Fn(SocketAddr) -> R + Sync,
) -> Siege<R> {
    let mut probe = Probe::connect(addr);
    // Warm up: the probe's connection, the server's buffers for it.
    for _ in 0..20 {
        probe.get();
    }
    let rss_before_kb = rss_kb();
    let done = AtomicBool::new(false);
    let mut latencies = Vec::new();
    let rounds = std::thread::scope(|s| {
        let attacker = s.spawn(|| {
            let start = Instant::now();
            let mut rounds = Vec::new();
            while rounds.len() < min_rounds || start.elapsed() < min {
                rounds.push(round(addr));
            }
            done.store(true, Ordering::SeqCst);
            rounds
        });
        while !done.load(Ordering::SeqCst) {
            latencies.push(probe.get());
            std::thread::sleep(Duration::from_millis(5));
        }
        attacker.join().unwrap()
    });
    // The server still answers once the attack stops.
    probe.get();
    Siege { rounds, latencies, rss_before_kb, rss_after_kb: rss_kb() }
}

impl<R> Siege<R> {
    /// Prints the figures and checks the probe was answered promptly and memory stayed flat.
    fn check(&self, name: &str, max_growth_kb: u64) {
        let mut sorted = self.latencies.clone();
        sorted.sort();
        let pick = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize];
        let growth = self.rss_after_kb.saturating_sub(self.rss_before_kb);
        println!(
            "{name}: {} rounds, {} probes, latency p50 {:?} p90 {:?} max {:?}, RSS {} -> {} KiB (+{growth})",
            self.rounds.len(),
            sorted.len(),
            pick(0.5),
            pick(0.9),
            pick(1.0),
            self.rss_before_kb,
            self.rss_after_kb,
        );
        assert!(!sorted.is_empty(), "{name}: no probe ran during the attack");
        // Answered within 100 ms while the attack runs. The machine is shared, so one
        // scheduling hiccup in twenty probes is forgiven, not a slow server.
        let late = sorted.iter().filter(|l| **l > Duration::from_millis(100)).count();
        assert!(
            late * 20 <= sorted.len(),
            "{name}: {late} of {} probes took over 100 ms (max {:?})",
            sorted.len(),
            pick(1.0)
        );
        assert!(pick(1.0) < Duration::from_secs(1), "{name}: a probe took {:?}", pick(1.0));
        assert!(
            growth <= max_growth_kb,
            "{name}: RSS grew by {growth} KiB (bound {max_growth_kb})"
        );
    }
}

/// RSS growth allowed over a whole siege: the worker's buffers for a few connections, and
/// the allocator's slack; far below what any of the attacks would cost unbounded.
const MAX_GROWTH_KB: u64 = 16 * 1024;

/// A connection with the handshake done.
fn open(addr: SocketAddr, settings: &[(u16, u32)]) -> RawClient {
    let mut c = RawClient::connect(addr);
    c.tcp().set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    h2::handshake(&mut c, settings);
    c
}

/// The frames of `n` streams opened with the same request, built once so every round sends
/// the same bytes (and the attacker's memory stays flat): `frames` appends stream `id`'s
/// frames given its header block. The first block fills the dynamic table; the others are
/// its second encoding, which refers to the table only, so repeating it changes nothing.
fn batch(
    (method, path, fields): (&str, &str, &[(&str, &str)]),
    n: u32,
    frames: impl Fn(&mut Vec<u8>, u32, &[u8]),
) -> Vec<u8> {
    let mut enc = Encoder::new();
    let first = h2::request_block(&mut enc, method, path, fields);
    let again = h2::request_block(&mut enc, method, path, fields);
    assert_eq!(again, h2::request_block(&mut enc, method, path, fields));
    let mut out = Vec::new();
    for i in 0..n {
        frames(&mut out, sid(i), if i == 0 { &first } else { &again });
    }
    out
}

/// A request with no body: HEADERS with END_STREAM.
fn get(b: &mut Vec<u8>, id: u32, block: &[u8]) {
    h2::headers_into(b, id, block, true, true);
}

/// Stream `i`'s id (odd, client-opened).
fn sid(i: u32) -> u32 {
    2 * i + 1
}

/// Checks a round ended with GOAWAY(ENHANCE_YOUR_CALM).
fn calmed(name: &str, t: &Tally) {
    let Some((_, code)) = t.goaway else { panic!("{name}: no GOAWAY: {t:?}") };
    assert_eq!(code, h2::ENHANCE_YOUR_CALM, "{name}: GOAWAY code: {t:?}");
}

/// Rapid reset (CVE-2023-44487): streams opened and cancelled at once, each with a handler
/// started. The budget (burst 200, 100/s) ends the connection with GOAWAY(ENHANCE_YOUR_CALM);
/// every handler the attack started is dropped.
#[test]
fn rapid_reset() {
    let _serial = serial();
    let server = spawn(config());
    let attack = batch(("GET", "/slow", &[]), 1000, |b, id, block| {
        get(b, id, block);
        h2::rst_stream_into(b, id, h2::CANCEL);
    });
    let siege = siege(server.local_addr(), Duration::from_millis(500), 3, |addr| {
        let mut c = open(addr, &[]);
        let _ = c.try_send(&attack);
        h2::tally_to_close(&mut c)
    });
    for t in &siege.rounds {
        calmed("rapid reset", t);
        let (last, _) = t.goaway.unwrap();
        // The burst, plus what refilled while the attack ran (100/s).
        assert!((sid(199)..sid(300)).contains(&last), "rapid reset: last stream {last}");
    }
    assert!(
        eventually(Duration::from_secs(2), || LIVE_HANDLERS.load(Ordering::SeqCst) == 0),
        "handlers of cancelled streams still alive: {}",
        LIVE_HANDLERS.load(Ordering::SeqCst)
    );
    siege.check("rapid reset", MAX_GROWTH_KB);
}

/// Frames that make the server reset a stream (CVE-2025-8671, "MadeYouReset"): each opens a
/// stream (a handler starts) and breaks a rule that costs it a stream error. Every reset we
/// send spends the provoked-reset budget (burst 200, 100/s): GOAWAY(ENHANCE_YOUR_CALM).
#[test]
fn provoked_resets() {
    struct Case {
        name: &'static str,
        /// The frames of stream `id`, appended to the batch.
        frames: fn(&mut Vec<u8>, u32, &[u8]),
        /// The request: method, path, fields.
        request: (&'static str, &'static str, &'static [(&'static str, &'static str)]),
        /// The RST_STREAM code the server answers with.
        code: u32,
    }
    let cases = [
        Case {
            name: "WINDOW_UPDATE of 0 on a stream",
            frames: |b, id, block| {
                h2::headers_into(b, id, block, true, true);
                h2::window_update_into(b, id, 0);
            },
            request: ("GET", "/slow", &[]),
            code: h2::PROTOCOL_ERROR,
        },
        Case {
            name: "WINDOW_UPDATE past 2^31-1",
            frames: |b, id, block| {
                h2::headers_into(b, id, block, true, true);
                h2::window_update_into(b, id, 0x7fff_ffff);
            },
            request: ("GET", "/slow", &[]),
            code: h2::FLOW_CONTROL_ERROR,
        },
        Case {
            name: "DATA past content-length",
            frames: |b, id, block| {
                h2::headers_into(b, id, block, false, true);
                h2::data_into(b, id, b"xy", true);
            },
            request: ("POST", "/slow", &[("content-length", "1")]),
            code: h2::PROTOCOL_ERROR,
        },
        Case {
            name: "DATA after END_STREAM",
            frames: |b, id, block| {
                h2::headers_into(b, id, block, true, true);
                h2::data_into(b, id, b"x", false);
            },
            request: ("GET", "/slow", &[]),
            code: h2::STREAM_CLOSED,
        },
        Case {
            name: "malformed request (uppercase field name)",
            frames: |b, id, block| h2::headers_into(b, id, block, true, true),
            request: ("GET", "/slow", &[("X-Upper", "1")]),
            code: h2::PROTOCOL_ERROR,
        },
    ];
    let _serial = serial();
    for case in &cases {
        let server = spawn(config());
        let attack = batch(case.request, 1000, case.frames);
        let siege = siege(server.local_addr(), Duration::from_millis(300), 3, |addr| {
            let mut c = open(addr, &[]);
            let _ = c.try_send(&attack);
            h2::tally_to_close(&mut c)
        });
        for t in &siege.rounds {
            calmed(case.name, t);
            let resets = t.resets(case.code);
            assert!((200..300).contains(&resets), "{}: {resets} resets: {t:?}", case.name);
            assert_eq!(t.count(h2::RST_STREAM), resets, "{}: other resets: {t:?}", case.name);
        }
        assert!(
            eventually(Duration::from_secs(2), || LIVE_HANDLERS.load(Ordering::SeqCst) == 0),
            "{}: handlers of reset streams still alive",
            case.name
        );
        siege.check(case.name, MAX_GROWTH_KB);
        server.shutdown_now();
    }
}

/// CONTINUATION floods (CVE-2024-27316 family): a header block that never ends, in many
/// small frames or a few large ones. At most 8 CONTINUATION frames and 64 KiB per block, then
/// GOAWAY(ENHANCE_YOUR_CALM); no stream opens, the buffer is bounded.
#[test]
fn continuation_flood() {
    let cases: [(&str, usize, usize); 3] = [
        ("empty CONTINUATION frames", 0, 100_000),
        ("one-octet CONTINUATION frames", 1, 100_000),
        ("16 KiB CONTINUATION frames", 16 * 1024, 50),
    ];
    let _serial = serial();
    for (name, size, count) in cases {
        let server = spawn(config());
        let block = h2::request_block(&mut Encoder::new(), "GET", "/", &[]);
        let mut attack = Vec::new();
        // The first octets of a real block, then fragments that go nowhere.
        h2::headers_into(&mut attack, 1, &block[..2], true, false);
        let fragment = vec![0u8; size];
        for _ in 0..count {
            h2::continuation_into(&mut attack, 1, &fragment, false);
        }
        let siege = siege(server.local_addr(), Duration::from_millis(300), 3, |addr| {
            let mut c = open(addr, &[]);
            let _ = c.try_send(&attack);
            h2::tally_to_close(&mut c)
        });
        for t in &siege.rounds {
            calmed(name, t);
            // Stream 1 at most: its HEADERS named it, though it never opened.
            assert!(t.goaway.unwrap().0 <= 1, "{name}: {t:?}");
            assert_eq!(t.count(h2::HEADERS), 0, "{name}: {t:?}");
        }
        assert_eq!(CALLS.load(Ordering::SeqCst), 0, "{name}: a handler ran");
        siege.check(name, MAX_GROWTH_KB);
        server.shutdown_now();
    }
}

/// An HPACK bomb: one 4 KB dynamic-table entry, then header blocks referencing it 16,000
/// times each (64 MB decoded per 16 KB block). Decoding stops storing at the header list
/// limit (16 KiB): each bomb is answered 431 without reaching a handler, and each 431 spends
/// the provoked-reset budget: GOAWAY(ENHANCE_YOUR_CALM) after 200.
#[test]
fn hpack_bomb() {
    let _serial = serial();
    let server = spawn(config());
    // :method GET, :scheme http, then :authority localhost and :path /plant as literals
    // without indexing (RFC 7541 §6.2.2): the dynamic table holds only what follows.
    let pseudo: Vec<u8> =
        [&[0x82, 0x86, 0x01, 9][..], b"localhost", &[0x04, 6], b"/plant"].concat();
    // Literal with incremental indexing, new name `x-bomb`, a 4,000-octet value (RFC 7541
    // §6.2.1; length 4000 = 127 + 3873 as a 7-bit-prefix integer, §5.1).
    let mut plant = pseudo.clone();
    plant.extend_from_slice(&[0x40, 6]);
    plant.extend_from_slice(b"x-bomb");
    plant.extend_from_slice(&[0x7f, 0xa1, 0x1e]);
    plant.extend_from_slice(&[b'a'; 4000]);
    // Index 62: the newest dynamic entry (§2.3.3), 16,000 times.
    let mut bomb = pseudo.clone();
    bomb.extend(std::iter::repeat_n(0xbe, 16_000));
    let mut attack = Vec::new();
    for i in 1..400 {
        h2::headers_into(&mut attack, sid(i), &bomb, true, true);
    }
    let siege = siege(server.local_addr(), Duration::from_millis(500), 3, |addr| {
        let mut c = open(addr, &[]);
        // The entry, on an ordinary request (a 4 KB list is within the limit).
        c.send(&h2::headers(1, &plant, true));
        let answered = h2::tally_until(&mut c, |t| t.count(h2::DATA) > 0);
        assert_eq!(answered.count(h2::DATA), 1, "the planting request: {answered:?}");
        let _ = c.try_send(&attack);
        h2::tally_to_close(&mut c)
    });
    for t in &siege.rounds {
        calmed("hpack bomb", t);
        // Every bomb answered 431 with a HEADERS that ends the stream, until the budget.
        assert!((200..300).contains(&t.ended_by_headers), "hpack bomb: {t:?}");
        assert_eq!(t.count(h2::DATA), 0, "hpack bomb: {t:?}");
    }
    // Only the planting requests reached the handler.
    assert_eq!(CALLS.load(Ordering::SeqCst), siege.rounds.len());
    siege.check("hpack bomb", MAX_GROWTH_KB);
}

/// Control-frame floods while not reading: the peer writes frames that each ask for work or
/// an answer, and reads nothing until it is done. The control budget (burst 1000, 500/s) ends
/// the connection with GOAWAY(ENHANCE_YOUR_CALM); at most that many answers were queued.
#[test]
fn control_floods_while_not_reading() {
    type Flood = fn(&mut Vec<u8>, u32);
    let cases: [(&str, Flood); 6] = [
        ("PING", |b, i| h2::ping_into(b, (u64::from(i)).to_be_bytes(), false)),
        ("SETTINGS", |b, _| {
            b.extend_from_slice(&h2::settings(&[(h2::SETTINGS_INITIAL_WINDOW_SIZE, 65_535)]))
        }),
        ("empty SETTINGS", |b, _| b.extend_from_slice(&h2::settings(&[]))),
        ("PRIORITY", |b, i| h2::priority_into(b, sid(i), 0, 16)),
        ("WINDOW_UPDATE on the connection", |b, _| h2::window_update_into(b, 0, 1)),
        ("unknown frame type", |b, _| h2::frame_into(b, 0xfa, 0, 0, b"junk")),
    ];
    let _serial = serial();
    for (name, frame) in cases {
        let server = spawn(config());
        let mut attack = Vec::new();
        for i in 0..5000 {
            frame(&mut attack, i);
        }
        let siege = siege(server.local_addr(), Duration::from_millis(300), 3, |addr| {
            let mut c = open(addr, &[]);
            let _ = c.try_send(&attack);
            h2::tally_to_close(&mut c)
        });
        for t in &siege.rounds {
            calmed(name, t);
            // The handshake's ACK and answers to at most the burst and its refill.
            let answers = t.count(h2::PING) + t.count(h2::SETTINGS);
            assert!(answers <= 1100, "{name}: {answers} answers: {t:?}");
        }
        siege.check(name, MAX_GROWTH_KB);
        server.shutdown_now();
    }
    // A SETTINGS frame with more entries than anyone needs ends the connection at once.
    let server = spawn(config());
    let mut c = open(server.local_addr(), &[]);
    let entries: Vec<(u16, u32)> = (0..40).map(|i| (0x100 + i, 1)).collect();
    c.send(&h2::settings(&entries));
    let t = h2::tally_to_close(&mut c);
    calmed("40 SETTINGS entries", &t);
}

/// A flood of empty DATA frames (no END_STREAM) on a request body the handler reads: each
/// costs a frame's work and delivers nothing. The tiny-DATA budget (burst 1000, 500/s) ends
/// the connection with GOAWAY(ENHANCE_YOUR_CALM), and the reading handler is dropped.
#[test]
fn empty_data_flood() {
    let _serial = serial();
    let server = spawn(config());
    let block = h2::request_block(&mut Encoder::new(), "POST", "/sink", &[]);
    let mut attack = h2::headers(1, &block, false);
    for _ in 0..10_000 {
        h2::data_into(&mut attack, 1, b"", false);
    }
    let siege = siege(server.local_addr(), Duration::from_millis(500), 3, |addr| {
        let mut c = open(addr, &[]);
        let _ = c.try_send(&attack);
        h2::tally_to_close(&mut c)
    });
    for t in &siege.rounds {
        calmed("empty DATA", t);
        assert_eq!(t.goaway.unwrap().0, 1);
    }
    assert!(
        eventually(Duration::from_secs(2), || LIVE_HANDLERS.load(Ordering::SeqCst) == 0),
        "the reading handler was not dropped"
    );
    siege.check("empty DATA", MAX_GROWTH_KB);
}

/// Zero-window holds: 100 streams each ask for a 1 MiB streamed response and grant no window
/// for it — at the stream level (SETTINGS_INITIAL_WINDOW_SIZE 0) or at the connection level
/// (the initial 65,535 octets, never updated). The server's send side is stuck: each stream
/// makes no progress for `write_timeout` and is reset with RST_STREAM(CANCEL); at most one
/// chunk per stream is made meanwhile, and every body is dropped.
#[test]
fn zero_window_hold_with_many_streams() {
    let cases: [(&str, &[(u16, u32)]); 2] = [
        ("stream windows of 0", &[(h2::SETTINGS_INITIAL_WINDOW_SIZE, 0)]),
        ("connection window spent", &[]),
    ];
    let _serial = serial();
    for (name, settings) in cases {
        let config = config();
        let timeout = config.write_timeout;
        let server = spawn(config);
        let attack = batch(("GET", "/big", &[]), 100, get);
        let siege = siege(server.local_addr(), Duration::ZERO, 3, |addr| {
            let mut c = open(addr, settings);
            let start = Instant::now();
            c.send(&attack);
            let t = h2::tally_until(&mut c, |t| t.count(h2::RST_STREAM) == 100);
            (t, start.elapsed())
        });
        for (t, took) in &siege.rounds {
            assert_eq!(t.resets(h2::CANCEL), 100, "{name}: {t:?}");
            assert_eq!(t.count(h2::HEADERS), 100, "{name}: every response head went: {t:?}");
            assert!(t.goaway.is_none(), "{name}: {t:?}");
            // Reset after the stall timeout, not before, and not much later.
            assert!(
                *took >= timeout && *took < timeout + Duration::from_secs(2),
                "{name}: {took:?}"
            );
        }
        // One chunk per stream at most, per round: nothing is made ahead of the window.
        let produced = PRODUCED.load(Ordering::SeqCst);
        let bound = (siege.rounds.len() * 100 * CHUNK) as u64 + 65_535 * siege.rounds.len() as u64;
        assert!(produced <= bound, "{name}: {produced} bytes made (bound {bound})");
        assert!(
            eventually(Duration::from_secs(2), || LIVE_BODIES.load(Ordering::SeqCst) == 0),
            "{name}: response bodies of reset streams still alive"
        );
        siege.check(name, MAX_GROWTH_KB);
        server.shutdown_now();
    }
}

/// Regression: a client that shuts its side (or dies) while responses wait for a window kept
/// their streams, and the bodies, until the stall timeout, though no WINDOW_UPDATE could come
/// any more. At its end of stream they are reset at once and the connection closes.
#[test]
fn end_of_stream_while_responses_wait_for_a_window() {
    let _serial = serial();
    let server = spawn(Config { write_timeout: Duration::from_secs(30), ..support::test_config() });
    let mut c = open(server.local_addr(), &[(h2::SETTINGS_INITIAL_WINDOW_SIZE, 0)]);
    c.send(&batch(("GET", "/big", &[]), 10, get));
    assert!(
        eventually(Duration::from_secs(2), || LIVE_BODIES.load(Ordering::SeqCst) == 10),
        "the ten responses did not start"
    );
    c.tcp().shutdown(std::net::Shutdown::Write).unwrap();
    assert!(
        eventually(Duration::from_secs(2), || LIVE_BODIES.load(Ordering::SeqCst) == 0),
        "response bodies outlived the client's end of stream"
    );
    assert!(c.closed_within(Duration::from_secs(2)), "the connection stayed open");
    server.shutdown_now();
}

/// Regression: a client that shuts its side (or dies) while handlers read request bodies it
/// had not ended left them waiting for DATA that could no longer come, and the connection open,
/// for ever (no body rate applies over HTTP/2). At its end of stream the bodies fail
/// (incomplete), the handlers finish, and the connection closes.
#[test]
fn end_of_stream_while_handlers_read_unfinished_bodies() {
    let _serial = serial();
    let server = spawn(support::test_config());
    let mut c = open(server.local_addr(), &[]);
    let open_bodies = batch(("POST", "/sink", &[]), 5, |b, id, block| {
        h2::headers_into(b, id, block, false, true);
        h2::data_into(b, id, b"part of a body", false);
    });
    c.send(&open_bodies);
    assert!(
        eventually(Duration::from_secs(2), || LIVE_HANDLERS.load(Ordering::SeqCst) == 5),
        "the five handlers did not start"
    );
    c.tcp().shutdown(std::net::Shutdown::Write).unwrap();
    assert!(
        eventually(Duration::from_secs(2), || LIVE_HANDLERS.load(Ordering::SeqCst) == 0),
        "handlers waited for bodies past the client's end of stream"
    );
    assert!(c.closed_within(Duration::from_secs(2)), "the connection stayed open");
    server.shutdown_now();
}

/// A peer that grants every window and then reads nothing at all: responses pile up until
/// the socket takes no more; the connection's output is bounded (1 MiB of frames queued,
/// 1 MiB in the connection, one chunk per stream), and after `write_timeout` without progress
/// the connection is closed.
#[test]
fn a_peer_that_reads_nothing() {
    let _serial = serial();
    let config = config();
    let timeout = config.write_timeout;
    let server = spawn(config);
    // The connection's window opened all the way, then 64 requests for 1 MiB each.
    let mut attack = h2::window_update(0, 0x7fff_ffff - 65_535);
    attack.extend_from_slice(&batch(("GET", "/big", &[]), 64, get));
    let siege = siege(server.local_addr(), Duration::ZERO, 3, |addr| {
        let mut c = open(addr, &[(h2::SETTINGS_INITIAL_WINDOW_SIZE, 0x7fff_ffff)]);
        let start = Instant::now();
        c.send(&attack);
        // Read nothing until the server must have given up.
        std::thread::sleep(timeout * 2 + Duration::from_millis(200));
        let made = PRODUCED.load(Ordering::SeqCst);
        let closed = c.closed_within(Duration::from_secs(3));
        (made, closed, start.elapsed())
    });
    for (made, closed, _) in &siege.rounds {
        assert!(closed, "the connection of a peer that reads nothing stayed open");
        println!("a peer that reads nothing: {made} bytes made so far");
    }
    // Bounded per connection: socket buffers (a few MiB on loopback), 2 MiB queued, a chunk
    // per stream; far from the 64 MiB asked for.
    let produced = PRODUCED.load(Ordering::SeqCst);
    assert!(
        produced <= (siege.rounds.len() as u64) * (16 << 20),
        "{produced} bytes made over {} rounds",
        siege.rounds.len()
    );
    assert!(
        eventually(Duration::from_secs(2), || LIVE_BODIES.load(Ordering::SeqCst) == 0),
        "response bodies of a closed connection still alive"
    );
    siege.check("reads nothing", MAX_GROWTH_KB);
}

/// The stream limit (SETTINGS_MAX_CONCURRENT_STREAMS 100): streams beyond it are refused with
/// RST_STREAM(REFUSED_STREAM) and never reach a handler; the first 100 are answered. Refusals
/// are resets the peer provokes: past 200 of them, GOAWAY(ENHANCE_YOUR_CALM).
#[test]
fn stream_limit() {
    let _serial = serial();
    let server = spawn(config());
    let attack = batch(("GET", "/hold", &[]), 150, get);
    // A fresh encoder's block uses literals only: valid whatever the server's table holds.
    let next =
        h2::headers(sid(150), &h2::request_block(&mut Encoder::new(), "GET", "/", &[]), true);
    let siege = siege(server.local_addr(), Duration::from_millis(300), 3, |addr| {
        let mut c = open(addr, &[]);
        c.send(&attack);
        let t =
            h2::tally_until(&mut c, |t| t.resets(h2::REFUSED_STREAM) + t.count(h2::DATA) >= 150);
        // The connection goes on: a new stream is served once the first ones are done.
        c.send(&next);
        let after = h2::read_until_end_stream(&mut c, sid(150));
        (t, after)
    });
    for (t, after) in &siege.rounds {
        assert_eq!(t.resets(h2::REFUSED_STREAM), 50, "{t:?}");
        assert_eq!(t.count(h2::DATA), 100, "{t:?}");
        assert!(after.iter().any(|f| f.kind == h2::DATA && f.payload == b"ok"), "{after:?}");
    }
    siege.check("stream limit", MAX_GROWTH_KB);

    // Refusing streams costs the provoked-reset budget: a peer that keeps opening streams
    // past the limit is cut off.
    let mut c = open(server.local_addr(), &[]);
    let _ = c.try_send(&batch(("GET", "/slow", &[]), 1000, get));
    let t = h2::tally_to_close(&mut c);
    calmed("streams past the limit", &t);
    assert!((200..300).contains(&t.resets(h2::REFUSED_STREAM)), "{t:?}");
    server.shutdown_now();
    assert!(
        eventually(Duration::from_secs(2), || LIVE_HANDLERS.load(Ordering::SeqCst) == 0),
        "handlers of a closed connection still alive"
    );
}
