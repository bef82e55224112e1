//! What a thread records while it loads: latency, time to first byte and connect time in HDR
//! histograms (fixed memory: recording a value never allocates), status codes and errors in
//! fixed arrays, and the live counters the progress line reads from another thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;
use peregrine::client::Error;

/// Highest value a histogram holds, in microseconds (an hour); longer values are clamped.
const MAX_US: u64 = 3_600_000_000;

/// Kinds of error, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Connect,
    Tls,
    Timeout,
    Reset,
    Protocol,
    Closed,
    Body,
    Other,
    /// WebSocket: the server did not accept the opening handshake.
    Handshake,
    /// WebSocket: an echo that differs from the message sent.
    Mismatch,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 10] = [
        ErrorKind::Connect,
        ErrorKind::Tls,
        ErrorKind::Timeout,
        ErrorKind::Reset,
        ErrorKind::Protocol,
        ErrorKind::Closed,
        ErrorKind::Body,
        ErrorKind::Other,
        ErrorKind::Handshake,
        ErrorKind::Mismatch,
    ];

    /// The kinds an HTTP run reports, in order.
    pub const HTTP: [ErrorKind; 8] = [
        ErrorKind::Connect,
        ErrorKind::Tls,
        ErrorKind::Timeout,
        ErrorKind::Reset,
        ErrorKind::Protocol,
        ErrorKind::Closed,
        ErrorKind::Body,
        ErrorKind::Other,
    ];

    /// The kinds a WebSocket run reports, in order.
    pub const WS: [ErrorKind; 8] = [
        ErrorKind::Connect,
        ErrorKind::Tls,
        ErrorKind::Timeout,
        ErrorKind::Handshake,
        ErrorKind::Protocol,
        ErrorKind::Closed,
        ErrorKind::Mismatch,
        ErrorKind::Other,
    ];

    /// The kind of a failed WebSocket opening: as [`ErrorKind::of`], but a response that does
    /// not accept the handshake (a protocol error of the client) is `handshake`.
    pub fn of_handshake(e: &Error) -> ErrorKind {
        match ErrorKind::of(e) {
            ErrorKind::Protocol => ErrorKind::Handshake,
            kind => kind,
        }
    }

    /// The kind of an open WebSocket's failure: the transport's errors are the connection
    /// closed under it.
    pub fn of_ws(e: &peregrine::websocket::Error) -> ErrorKind {
        use peregrine::websocket::Error as E;
        match e {
            E::Protocol(_) => ErrorKind::Protocol,
            E::TimedOut => ErrorKind::Timeout,
            E::Closed | E::Abnormal | E::Io(_) => ErrorKind::Closed,
            _ => ErrorKind::Other,
        }
    }

    /// The kind of a client error (timeouts first: a connect timeout is a timeout).
    pub fn of(e: &Error) -> ErrorKind {
        if e.is_timeout() {
            ErrorKind::Timeout
        } else if e.is_connect() {
            ErrorKind::Connect
        } else if e.is_tls() {
            ErrorKind::Tls
        } else if e.is_reset() {
            ErrorKind::Reset
        } else if e.is_protocol() {
            ErrorKind::Protocol
        } else if e.is_closed() {
            ErrorKind::Closed
        } else if e.is_body() {
            ErrorKind::Body
        } else {
            ErrorKind::Other
        }
    }

    /// The name in the report and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Tls => "tls",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Closed => "closed",
            ErrorKind::Body => "body",
            ErrorKind::Other => "other",
            ErrorKind::Handshake => "handshake",
            ErrorKind::Mismatch => "mismatch",
        }
    }
}

fn histogram() -> Histogram<u64> {
    // Three significant digits from 1 µs to an hour: about 200 KB, allocated once.
    Histogram::new_with_bounds(1, MAX_US, 3).expect("constant, valid bounds")
}

/// Microseconds, at least 1 (the histogram's lowest value).
pub fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).clamp(1, MAX_US)
}

/// One thread's figures (merged over the threads for the report).
pub struct Stats {
    pub latency: Histogram<u64>,
    pub ttfb: Histogram<u64>,
    pub connect: Histogram<u64>,
    /// Completed responses by status code (index = code, 0..=999).
    pub status: Box<[u64; 1000]>,
    pub errors: [u64; ErrorKind::ALL.len()],
    /// Response body bytes of completed requests.
    pub bytes: u64,
    /// Open loop: requests sent later than scheduled because their connection was busy.
    pub late: u64,
    /// Requests sent (recorded ones).
    pub sent: u64,
    /// Connections opened (and failed attempts, in errors).
    pub connects: u64,
    /// WebSocket: octets of frames sent and received while recording (after compression).
    pub wire_sent: u64,
    pub wire_received: u64,
}

impl Stats {
    pub fn new() -> Stats {
        Stats {
            latency: histogram(),
            ttfb: histogram(),
            connect: histogram(),
            status: Box::new([0; 1000]),
            errors: [0; ErrorKind::ALL.len()],
            bytes: 0,
            late: 0,
            sent: 0,
            connects: 0,
            wire_sent: 0,
            wire_received: 0,
        }
    }

    /// Completed responses.
    pub fn requests(&self) -> u64 {
        self.latency.len()
    }

    pub fn error_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    pub fn error(&mut self, kind: ErrorKind, n: u64) {
        self.errors[kind as usize] += n;
    }

    pub fn merge(&mut self, other: &Stats) {
        // Same bounds on both sides: `add` cannot fail.
        let _ = self.latency.add(&other.latency);
        let _ = self.ttfb.add(&other.ttfb);
        let _ = self.connect.add(&other.connect);
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(other.errors) {
            *a += b;
        }
        self.bytes += other.bytes;
        self.late += other.late;
        self.sent += other.sent;
        self.connects += other.connects;
        self.wire_sent += other.wire_sent;
        self.wire_received += other.wire_received;
    }
}

/// Counters a thread bumps and the progress line reads; on their own cache line so that
/// threads do not share one.
#[derive(Default)]
#[repr(align(128))]
pub struct Live {
    pub completed: AtomicU64,
    pub errors: AtomicU64,
}

impl Live {
    /// Adds to a counter only this thread writes: a plain load and store, no locked
    /// instruction.
    pub fn bump(counter: &AtomicU64, n: u64) {
        counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_clamp_into_the_histogram() {
        struct Case {
            input: Duration,
            expect: u64,
        }
        let cases = [
            Case { input: Duration::ZERO, expect: 1 },
            Case { input: Duration::from_nanos(999), expect: 1 },
            Case { input: Duration::from_micros(1500), expect: 1500 },
            Case { input: Duration::from_secs(7200), expect: MAX_US },
        ];
        for c in cases {
            assert_eq!(micros(c.input), c.expect, "{:?}", c.input);
        }
    }

    #[test]
    fn merge_adds_everything() {
        let mut a = Stats::new();
        let mut b = Stats::new();
        a.latency.record(100).unwrap();
        b.latency.record(300).unwrap();
        a.status[200] = 1;
        b.status[200] = 2;
        b.status[503] = 1;
        b.error(ErrorKind::Reset, 2);
        b.bytes = 10;
        a.merge(&b);
        assert_eq!(a.requests(), 2);
        assert_eq!((a.status[200], a.status[503]), (3, 1));
        assert_eq!(a.errors[ErrorKind::Reset as usize], 2);
        assert_eq!(a.error_total(), 2);
        assert_eq!(a.bytes, 10);
        assert_eq!(a.latency.max(), 300);
    }
}
