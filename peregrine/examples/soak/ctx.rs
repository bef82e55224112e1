//! What every client of the soak shares: the site's files, the addresses, the switches that
//! start and stop them, and the counts they keep.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The well-behaved clients, one count each.
pub const GOOD: [&str; 12] = [
    "h1_keepalive",
    "h1_pipelined",
    "h1_range",
    "h1_conditional",
    "h1_compressed",
    "h2c",
    "h2_tls",
    "h1_tls",
    "h3",
    "upload_proxy",
    "ws_proxy",
    "panic_proxy",
];

/// The hostile clients.
pub const BAD: [&str; 7] = [
    "slowloris",
    "abandoned_upload",
    "stopped_reader",
    "reset_mid_response",
    "h2_rapid_reset",
    "h2_bad_frame",
    "h1_bad_head",
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Good {
    H1,
    Pipelined,
    Range,
    Conditional,
    Compressed,
    H2c,
    H2Tls,
    H1Tls,
    H3,
    Upload,
    Ws,
    Panic,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bad {
    Slowloris,
    AbandonedUpload,
    StoppedReader,
    Reset,
    RapidReset,
    H2Frame,
    H1Head,
}

/// Which server a good client talks to, for the access-log checks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Plain,
    Tls,
    Proxy,
}

impl Good {
    pub fn target(self) -> Target {
        match self {
            Good::H2Tls | Good::H1Tls | Good::H3 => Target::Tls,
            Good::Upload | Good::Ws | Good::Panic => Target::Proxy,
            _ => Target::Plain,
        }
    }
}

#[derive(Default)]
pub struct Counts {
    /// Requests answered and verified byte for byte.
    pub ok: AtomicU64,
    /// Requests sent and not answered correctly.
    pub failed: AtomicU64,
    /// Body bytes compared with what they should be.
    pub bytes: AtomicU64,
    /// Requests the server closed the connection on before reading them (a keep-alive
    /// connection closed as the request left, or pipelined requests after a `Connection:
    /// close` response), sent again on a new connection as RFC 9112 §9.3.1 allows.
    pub retried: AtomicU64,
}

#[derive(Default)]
pub struct BadCounts {
    pub attempts: AtomicU64,
    /// Attempts the server handled as it must (see each client).
    pub handled: AtomicU64,
    /// Attempts it did not: each is also printed.
    pub unexpected: AtomicU64,
}

pub struct Ctx {
    pub files: HashMap<&'static str, Arc<Vec<u8>>>,
    pub plain: String,
    pub tls: String,
    pub proxy: String,
    pub tls_h1: tokio_rustls::TlsConnector,
    pub tls_h2: tokio_rustls::TlsConnector,
    /// The HTTP/3 client's QUIC settings (the same CA, ALPN `h3`).
    pub quic: quinn::ClientConfig,
    pub good: [Counts; GOOD.len()],
    pub bad: [BadCounts; BAD.len()],
    /// Latencies of the good clients' requests (µs) since the last sample.
    pub latency: Mutex<Vec<u32>>,
    pub stop_good: AtomicBool,
    pub stop_bad: AtomicBool,
    /// SIGTERM was sent (or is about to be): a refused connection ends a client.
    pub draining: AtomicBool,
    pub header_timeout: Duration,
    failures: Mutex<Vec<String>>,
}

impl Ctx {
    pub fn new(
        files: HashMap<&'static str, Arc<Vec<u8>>>,
        addrs: [String; 3],
        tls: [tokio_rustls::TlsConnector; 2],
        quic: quinn::ClientConfig,
        header_timeout: Duration,
    ) -> Ctx {
        let [plain, tls_addr, proxy] = addrs;
        let [tls_h1, tls_h2] = tls;
        Ctx {
            files,
            plain,
            tls: tls_addr,
            proxy,
            tls_h1,
            tls_h2,
            quic,
            good: Default::default(),
            bad: Default::default(),
            latency: Mutex::new(Vec::with_capacity(1 << 16)),
            stop_good: AtomicBool::new(false),
            stop_bad: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            header_timeout,
            failures: Mutex::new(Vec::new()),
        }
    }

    pub fn file(&self, name: &str) -> &[u8] {
        &self.files[name]
    }

    pub fn ok(&self, class: Good, bytes: usize, started: Instant) {
        let c = &self.good[class as usize];
        c.ok.fetch_add(1, Ordering::Relaxed);
        c.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        let us = u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX);
        self.latency.lock().unwrap().push(us);
    }

    pub fn fail(&self, class: Good, why: impl std::fmt::Display) {
        self.good[class as usize].failed.fetch_add(1, Ordering::Relaxed);
        self.note(format!("{}: {why}", GOOD[class as usize]));
    }

    pub fn retried(&self, class: Good, n: u64) {
        self.good[class as usize].retried.fetch_add(n, Ordering::Relaxed);
    }

    pub fn bad(&self, class: Bad, handled: Result<(), String>) {
        let c = &self.bad[class as usize];
        c.attempts.fetch_add(1, Ordering::Relaxed);
        match handled {
            Ok(()) => c.handled.fetch_add(1, Ordering::Relaxed),
            Err(why) => {
                self.note(format!("{} (bad client): {why}", BAD[class as usize]));
                c.unexpected.fetch_add(1, Ordering::Relaxed)
            }
        };
    }

    fn note(&self, line: String) {
        let mut f = self.failures.lock().unwrap();
        if f.len() < 50 {
            eprintln!("soak: {line}");
            f.push(line);
        }
    }

    pub fn failures(&self) -> Vec<String> {
        self.failures.lock().unwrap().clone()
    }

    pub fn good_stopped(&self) -> bool {
        self.stop_good.load(Ordering::Relaxed)
    }

    pub fn bad_stopped(&self) -> bool {
        self.stop_bad.load(Ordering::Relaxed)
    }

    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }
}

/// A pacer: `tick` waits for the next of `per_s` slots a second (late slots are not made up).
pub fn pacer(per_s: f64) -> tokio::time::Interval {
    let mut i = tokio::time::interval(Duration::from_secs_f64(1.0 / per_s));
    i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    i
}

/// A small deterministic generator (xorshift64*), so files and bodies need no `rand`.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}
