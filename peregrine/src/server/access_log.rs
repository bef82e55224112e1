//! The access log hook: one call per request once its response is written, refused requests
//! (which no handler saw) included.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;

use crate::Version;
use crate::request::{HeadSpans, LogSpans};

/// One request as an access log records it, handed to the function given to
/// [`Server::access_log`](crate::Server::access_log).
///
/// For a request the server refused before any handler ran (a malformed head, a body too
/// large to accept), `refused` is true and the request line is what could be read of it:
/// `method`, `target` and `version` may be `"-"`, `"-"` and `None`, and bytes that are not
/// printable ASCII are written as `\xNN`.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct LogEntry<'a> {
    /// The client's address.
    pub remote_addr: SocketAddr,
    /// The method token as sent.
    pub method: &'a str,
    /// The request-target as sent.
    pub target: &'a str,
    /// The protocol version, when the request line was understood.
    pub version: Option<Version>,
    /// The response's status code.
    pub status: u16,
    /// Content bytes of the response sent (not counting the head).
    pub body_bytes: u64,
    /// From the request head being read to the response being written.
    pub duration: Duration,
    /// The `User-Agent` field, if any.
    pub user_agent: Option<&'a [u8]>,
    /// The `Referer` field, if any.
    pub referer: Option<&'a [u8]>,
    /// The server answered without running a handler: the request broke a rule.
    pub refused: bool,
    /// The upstream server that answered, for a request a [`Proxy`](crate::proxy::Proxy)
    /// forwarded (its URL).
    pub upstream: Option<&'a str>,
    /// From the request sent upstream to its response head, for a proxied request (nginx's
    /// `$upstream_header_time`).
    pub upstream_duration: Option<Duration>,
}

impl<'a> LogEntry<'a> {
    /// An entry for an accepted request with no fields, no content and no duration: for
    /// testing a log function, or for adapting another server's requests to the same log.
    ///
    /// # Examples
    /// ```
    /// use peregrine::server::LogEntry;
    /// let mut e = LogEntry::new("127.0.0.1:80".parse().unwrap(), "GET", "/", 200);
    /// e.body_bytes = 5;
    /// assert!(!e.refused && e.version.is_none());
    /// ```
    pub fn new(remote_addr: SocketAddr, method: &'a str, target: &'a str, status: u16) -> Self {
        LogEntry {
            remote_addr,
            method,
            target,
            version: None,
            status,
            body_bytes: 0,
            duration: Duration::ZERO,
            user_agent: None,
            referer: None,
            refused: false,
            upstream: None,
            upstream_duration: None,
        }
    }
}

/// The upstream that answered the response a handler just returned, and its time: set by the
/// proxy as its future completes, taken by the driver as it receives that response (on the
/// same thread, before any other handler's response), for the access log.
type UpstreamNote = Option<(std::sync::Arc<str>, Duration)>;

thread_local! {
    static UPSTREAM: std::cell::RefCell<UpstreamNote> = const { std::cell::RefCell::new(None) };
}

/// Records the upstream of the response being returned (see [`UpstreamNote`]).
pub(crate) fn note_upstream(name: &std::sync::Arc<str>, took: Duration) {
    UPSTREAM.with_borrow_mut(|n| match n {
        // The same upstream as last time: no reference count touched.
        Some((old, t)) if std::sync::Arc::ptr_eq(old, name) => *t = took,
        _ => *n = Some((name.clone(), took)),
    });
}

/// Takes the note of the response the driver just received.
fn take_upstream() -> UpstreamNote {
    UPSTREAM.with_borrow_mut(Option::take)
}

/// The access log function, shared by the workers.
#[derive(Clone)]
pub(crate) struct AccessLog(pub(crate) Arc<dyn Fn(&LogEntry<'_>) + Send + Sync>);

impl fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessLog(..)")
    }
}

/// What the access log keeps of a request being handled (only when logging is on; a
/// connection boxes it once, so connections without it carry a pointer).
#[derive(Debug, Default)]
pub(crate) struct LogState {
    pub(crate) head: Bytes,
    pub(crate) spans: Option<LogSpans>,
    pub(crate) started: Option<Instant>,
    pub(crate) status: u16,
    pub(crate) bytes: u64,
    pub(crate) upstream: UpstreamNote,
}

impl LogState {
    /// A new request, with the head it was read from.
    pub(crate) fn start(&mut self, head: &Bytes, spans: &HeadSpans) {
        self.spans = Some(spans.log_spans(head));
        self.head = head.clone();
        self.started = Some(Instant::now());
        self.status = 0;
        self.bytes = 0;
        self.upstream = None;
    }

    /// The handler's response, with `status`, was just received: the upstream it came from.
    #[inline]
    pub(crate) fn responded(&mut self, status: u16) {
        self.status = status;
        self.upstream = take_upstream();
    }

    /// Hands the finished request to `log` (once).
    pub(crate) fn emit(&mut self, log: &AccessLog, peer: SocketAddr) {
        let Some(spans) = self.spans.take() else {
            return;
        };
        let head = &self.head;
        let text =
            |r: std::ops::Range<usize>| head.get(r).and_then(crate::ascii::as_str).unwrap_or("-");
        (log.0)(&LogEntry {
            remote_addr: peer,
            method: spans.method_str(head),
            target: text(spans.target),
            version: Some(spans.version),
            status: self.status,
            body_bytes: self.bytes,
            duration: self.started.map_or_else(Default::default, |s| s.elapsed()),
            user_agent: spans.user_agent.and_then(|r| head.get(r)),
            referer: spans.referer.and_then(|r| head.get(r)),
            refused: false,
            upstream: self.upstream.as_ref().map(|(u, _)| &**u),
            upstream_duration: self.upstream.as_ref().map(|(_, d)| *d),
        });
        self.head = Bytes::new();
    }
}

/// What can be read of a request line the parser refused: method, target and version, each
/// escaped for a log line. At most the first 512 bytes before the first CR or LF are read.
pub(crate) fn refused_request_line(buf: &[u8]) -> (String, String, Option<Version>) {
    let line = &buf[..buf.len().min(512)];
    let line = match line.iter().position(|&b| b == b'\r' || b == b'\n') {
        Some(end) => &line[..end],
        None => line,
    };
    let mut parts = line.splitn(3, |&b| b == b' ');
    let method = parts.next().filter(|m| !m.is_empty()).map_or_else(|| "-".into(), escape);
    let target = parts.next().filter(|t| !t.is_empty()).map_or_else(|| "-".into(), escape);
    let version = match parts.next() {
        Some(b"HTTP/1.1") => Some(Version::Http11),
        Some(b"HTTP/1.0") => Some(Version::Http10),
        _ => None,
    };
    (method, target, version)
}

/// Printable ASCII as it is, anything else as `\xNN`: a log line cannot be split or forged by
/// what a client sends.
fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if (0x21..0x7f).contains(&b) && b != b'\\' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_lines_are_read_as_far_as_they_go() {
        struct Case {
            input: &'static [u8],
            expect: (&'static str, &'static str, Option<Version>),
        }
        let cases = [
            Case {
                input: b"GET /a HTTP/1.1\r\nHost: x\r\n",
                expect: ("GET", "/a", Some(Version::Http11)),
            },
            Case { input: b"GET /a HTTP/2.0\r\n", expect: ("GET", "/a", None) },
            Case {
                input: b"GET /a\x01b HTTP/1.0\r\n",
                expect: ("GET", "/a\\x01b", Some(Version::Http10)),
            },
            Case { input: b"\r\n", expect: ("-", "-", None) },
            Case { input: b"BREW", expect: ("BREW", "-", None) },
            Case { input: b"G\\T /\n", expect: ("G\\x5cT", "/", None) },
        ];
        for case in cases {
            let (m, t, v) = refused_request_line(case.input);
            assert_eq!((m.as_str(), t.as_str(), v), case.expect, "{:?}", case.input);
        }
    }
}
