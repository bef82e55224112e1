//! The flags of `peregrine load`, and the [`Plan`] they add up to once checked.

use std::path::PathBuf;
use std::time::Duration;

use peregrine::Method;
use peregrine::client::conn::Versions;
use peregrine::http1::encode::{EncodeError, check_method, check_request_field};

use crate::units::{Dur, Size};

/// Arguments of `peregrine load`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  peregrine load http://127.0.0.1:8080/ -c 64 -d 10s            HTTP/1.1, closed loop
  peregrine load http://127.0.0.1:8080/ --pipeline 16           16 requests in flight per connection
  peregrine load http://127.0.0.1:8080/ --http2-prior-knowledge -c 16 -m 32
  peregrine load https://localhost:8443/ --insecure -n 100000   ALPN picks h2 or http/1.1
  peregrine load https://localhost:8443/ --h3 -c 16 -m 32       HTTP/3 over QUIC
  peregrine load http://127.0.0.1:8080/ --rate 5000 -d 30s --json out.json
  peregrine load ws://127.0.0.1:9002/ -c 100 --size 20          WebSocket echo, 20-byte messages
  peregrine load ws://127.0.0.1:9002/ --size 1KiB --text --deflate --pipeline 4

Closed loop (the default): each connection (or HTTP/2 or HTTP/3 stream) sends its next request as soon
as the last one is answered. With --rate the load is an open loop: requests are scheduled at
fixed intervals, each connection taking an equal share, and latency counts from a request's
scheduled start, so a server that stalls shows in the percentiles (coordinated omission
corrected, as wrk2 does); a request sent more than 2 ms after it was due (its connection
busy, or the generator behind) is reported late. Up to 2 ms of timer lateness is not charged
to the server.

Latency runs from the request's (scheduled) start to the end of its response; time to first
byte to its response head. Requests in flight when the run stops are not counted. Errors are
counted per request lost, by kind: connect, tls, timeout, reset, protocol, closed, body,
other. Exit status 2, with a one-line message, when the URL is bad or the first connection
fails; 0 once the report is printed (Ctrl-C stops early and still reports). The JSON report
is described field by field in docs/LOAD.md.

WebSocket (a ws:// or wss:// URL, or --ws): each connection opens a WebSocket (HTTP/1.1
Upgrade) and sends messages of --size bytes that the server must echo; latency is the round
trip from a message's send to its echo, and each echo is compared with what was sent
(a mismatch is an error). --pipeline is the messages in flight per connection (closed loop:
the next goes when an echo arrives); --rate schedules messages as it does requests.
Payloads: binary by default (pseudo-random bytes); --text sends JSON-like text (ASCII);
--deflate offers permessage-deflate and sends the JSON-like payload (compressible). Errors add handshake (the server
refused the upgrade) and mismatch (an echo that differs).")]
pub struct LoadArgs {
    /// The URL to load: http://HOST[:PORT]/PATH (HTTP/1.1, or h2c with
    /// --http2-prior-knowledge) or https:// (ALPN chooses h2 or http/1.1; QUIC with --h3).
    pub url: String,

    /// Connections to open, shared out over the threads.
    #[arg(short = 'c', long, value_name = "CONNS", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub connections: u32,

    /// Threads, each with its own event loop and its share of the connections [default: the
    /// number of available cores, at most CONNS].
    #[arg(short = 't', long, value_name = "THREADS",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,

    /// How long to run (after --warmup) [default: 10s unless -n is given].
    #[arg(short = 'd', long, value_name = "DURATION", conflicts_with = "count")]
    pub duration: Option<Dur>,

    /// Send this many requests (after --warmup), then stop.
    #[arg(short = 'n', long, value_name = "COUNT",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,

    /// Open loop: this many requests per second in all, on fixed schedules.
    #[arg(long, value_name = "REQ_PER_S", value_parser = parse_rate)]
    pub rate: Option<f64>,

    /// Concurrent streams per HTTP/2 or HTTP/3 connection (capped by the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS, or its QUIC stream limit).
    #[arg(short = 'm', long, value_name = "STREAMS_PER_CONN", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub streams: u32,

    /// HTTP/1.1 requests in flight per connection (pipelining; idempotent methods only).
    #[arg(long, value_name = "DEPTH", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub pipeline: u32,

    /// Speak HTTP/1.1 only (ALPN offers http/1.1 alone on https).
    #[arg(long, group = "proto")]
    pub http1: bool,

    /// Speak HTTP/2 only: ALPN h2 on https, prior knowledge (h2c) on http.
    #[arg(long, group = "proto")]
    pub http2: bool,

    /// HTTP/2 in clear text without negotiation (RFC 9113 §3.3), h2c.
    #[arg(long, group = "proto")]
    pub http2_prior_knowledge: bool,

    /// Speak HTTP/3 over QUIC (RFC 9114) to the https URL's UDP port, ALPN h3.
    #[arg(long, visible_alias = "http3", group = "proto")]
    pub h3: bool,

    /// Request method [default: GET, or POST with --body].
    #[arg(short = 'X', long, value_name = "METHOD", value_parser = parse_method)]
    pub method: Option<String>,

    /// Add a header field to every request, as 'Name: value' (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE", value_parser = parse_header)]
    pub headers: Vec<(String, Vec<u8>)>,

    /// Send this file's contents as every request's body.
    #[arg(long, value_name = "FILE")]
    pub body: Option<PathBuf>,

    /// Connect, TLS handshake and read timeout: a response that shows no byte for this long
    /// fails its connection's requests as timeouts.
    #[arg(long, value_name = "DURATION", default_value_t = Dur(Duration::from_secs(10)))]
    pub timeout: Dur,

    /// Load this long first without recording anything (connections warm up, the server's
    /// caches fill).
    #[arg(long, value_name = "DURATION", default_value_t = Dur(Duration::ZERO))]
    pub warmup: Dur,

    /// Also write the complete report as JSON to FILE ('-' for stdout, which then carries
    /// only the JSON).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// No live progress line (it is off anyway when stdout is not a terminal).
    #[arg(long)]
    pub no_progress: bool,

    /// Accept any TLS certificate (self-signed, wrong name): no authentication of the server.
    #[arg(long)]
    pub insecure: bool,

    /// Load a WebSocket echo server (implied by a ws:// or wss:// URL; http:// and https://
    /// are then taken as ws:// and wss://).
    #[arg(long)]
    pub ws: bool,

    /// WebSocket: payload bytes per message (e.g. 20, 1KiB, 16KiB).
    #[arg(long, value_name = "BYTES", default_value_t = Size(20))]
    pub size: Size,

    /// WebSocket: send text messages (JSON-like ASCII) instead of binary ones.
    #[arg(long, conflicts_with = "binary")]
    pub text: bool,

    /// WebSocket: send binary messages (the default).
    #[arg(long)]
    pub binary: bool,

    /// WebSocket: offer permessage-deflate (RFC 7692) and send the JSON-like payload
    /// (compressible), in binary messages unless --text.
    #[arg(long)]
    pub deflate: bool,
}

fn parse_rate(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= 1e9 => Ok(r),
        _ => Err("must be a number of requests per second above 0".to_owned()),
    }
}

/// RFC 9110 §9.1: a method is a token; checked as the client will encode it.
fn parse_method(v: &str) -> Result<String, String> {
    match check_method(v) {
        Ok(()) => Ok(v.to_owned()),
        Err(_) => Err("must be a method token such as GET or POST".to_owned()),
    }
}

/// `Name: value`, a field the connection may send (it writes Host and the framing itself),
/// checked as the client will encode it (RFC 9110 §5.1, §5.5).
fn parse_header(v: &str) -> Result<(String, Vec<u8>), String> {
    let (name, value) = v.split_once(':').ok_or("must be 'Name: value'")?;
    let value = value.trim_matches([' ', '\t']);
    match check_request_field(name, value.as_bytes()) {
        Ok(()) => Ok((name.to_owned(), value.as_bytes().to_vec())),
        Err(EncodeError::InvalidHeaderName) => Err(format!("'{name}' is not a field name")),
        Err(EncodeError::FramingHeader | EncodeError::HostHeader) => {
            Err(format!("{name} is written by the connection (from the URL and body)"))
        }
        Err(_) => Err("the value must be one line of visible characters".to_owned()),
    }
}

/// How the run stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// After this long (following the warm-up).
    After(Duration),
    /// After this many requests were sent (following the warm-up) and answered.
    Count(u64),
}

/// A WebSocket run's messages.
#[derive(Debug)]
pub struct WsPlan {
    /// Payload bytes per message.
    pub size: usize,
    /// Text messages (else binary).
    pub text: bool,
    /// Offer permessage-deflate (and send compressible payloads).
    pub deflate: bool,
}

/// The largest `--size`: the echo server's default message limit is tens of MiB; this keeps a
/// run's payloads (16 variants per run) in memory.
const MAX_WS_SIZE: u64 = 16 << 20;

/// Everything a run needs, checked: what each connection sends and how.
#[derive(Debug)]
pub struct Plan {
    /// A WebSocket run (`--ws` or a `ws://` URL).
    pub ws: Option<WsPlan>,
    pub url: String,
    pub target: String,
    pub method: String,
    pub method_tag: Method,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    pub connections: u32,
    pub threads: u16,
    pub stop: Stop,
    pub rate: Option<f64>,
    pub streams: u32,
    pub pipeline: u32,
    pub versions: Versions,
    pub timeout: Duration,
    pub warmup: Duration,
    pub insecure: bool,
}

impl LoadArgs {
    /// The plan the flags describe, or a one-line reason.
    pub fn plan(mut self) -> Result<Plan, String> {
        let ws = self.ws_plan()?;
        let (_, target) = peregrine::client::Origin::parse(&self.url)
            .map_err(|e| format!("{}: {}", self.url, one_line(&e.to_string())))?;
        let target = if target.is_empty() { "/".to_owned() } else { target.to_owned() };
        let body = match &self.body {
            Some(path) => std::fs::read(path)
                .map_err(|e| format!("{}: cannot read the body: {e}", path.display()))?,
            None => Vec::new(),
        };
        let method = match (&self.method, self.body.is_some()) {
            (Some(m), _) => m.clone(),
            (None, true) => "POST".to_owned(),
            (None, false) => "GET".to_owned(),
        };
        let method_tag = Method::from_token(method.as_bytes());
        if self.pipeline > 1 && !method_tag.is_idempotent() {
            return Err(format!(
                "--pipeline needs an idempotent method (RFC 9112 §9.3.2); {method} is not"
            ));
        }
        if self.h3 && !self.url.get(..8).is_some_and(|s| s.eq_ignore_ascii_case("https://")) {
            return Err("--h3 needs an https:// URL (HTTP/3 has no cleartext form)".to_owned());
        }
        if self.h3 && self.pipeline > 1 {
            return Err("--pipeline is HTTP/1.1's; with --h3 use -m".to_owned());
        }
        let versions = if self.http1 {
            Versions::Http1Only
        } else if self.h3 {
            Versions::Http3Only
        } else if self.http2 || self.http2_prior_knowledge {
            Versions::Http2Only
        } else {
            Versions::Auto
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = self.threads.map_or(cores, usize::from).min(self.connections as usize);
        let stop = match (self.duration, self.count) {
            (_, Some(n)) => Stop::Count(n),
            (Some(d), None) => Stop::After(d.0),
            (None, None) => Stop::After(Duration::from_secs(10)),
        };
        if stop == Stop::After(Duration::ZERO) {
            return Err("-d must be longer than 0".to_owned());
        }
        Ok(Plan {
            ws,
            url: self.url,
            target,
            method,
            method_tag,
            headers: self.headers,
            body,
            connections: self.connections,
            threads: u16::try_from(threads.max(1)).unwrap_or(u16::MAX),
            stop,
            rate: self.rate,
            streams: self.streams,
            pipeline: self.pipeline,
            versions,
            timeout: self.timeout.0.max(Duration::from_millis(1)),
            warmup: self.warmup.0,
            insecure: self.insecure,
        })
    }
}

impl LoadArgs {
    /// A WebSocket run's plan, `None` for HTTP; the URL becomes the `http`/`https` one its
    /// origin is parsed from (`ws` is `http`'s scheme, `wss` is `https`'s: RFC 6455 §3), and
    /// the flags that mean nothing to a WebSocket are refused.
    fn ws_plan(&mut self) -> Result<Option<WsPlan>, String> {
        let scheme = self.url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        let ws_url = matches!(scheme.as_deref(), Some("ws" | "wss"));
        if !ws_url && !self.ws {
            if self.text || self.binary || self.deflate || self.size != Size(20) {
                return Err(
                    "--size, --text, --binary and --deflate need --ws or a ws:// URL".to_owned()
                );
            }
            return Ok(None);
        }
        if ws_url {
            let (scheme, rest) = self.url.split_once("://").unwrap_or_default();
            let http = if scheme.eq_ignore_ascii_case("wss") { "https" } else { "http" };
            self.url = format!("{http}://{rest}");
        }
        let refused = [
            (
                self.streams > 1,
                "-m (a WebSocket runs over HTTP/1.1; --pipeline sets the messages in flight)",
            ),
            (
                self.http2 || self.http2_prior_knowledge,
                "--http2 (WebSockets are opened over HTTP/1.1)",
            ),
            (self.h3, "--h3 (WebSockets are opened over HTTP/1.1)"),
            (self.method.is_some(), "-X (the opening handshake is a GET)"),
            (self.body.is_some(), "--body (--size sets the messages)"),
        ];
        if let Some((_, flag)) = refused.iter().find(|(on, _)| *on) {
            return Err(format!("{flag} does not apply to a WebSocket run"));
        }
        if self.size.0 > MAX_WS_SIZE {
            return Err(format!("--size is at most {}", Size(MAX_WS_SIZE)));
        }
        Ok(Some(WsPlan { size: self.size.0 as usize, text: self.text, deflate: self.deflate }))
    }
}

/// An error message on one line.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse() {
        struct Case {
            input: &'static str,
            expect: Result<(&'static str, &'static [u8]), ()>,
        }
        let cases = [
            Case { input: "Accept: */*", expect: Ok(("Accept", b"*/*")) },
            Case { input: "x-a:b", expect: Ok(("x-a", b"b")) },
            Case { input: "x-a:  b c \t", expect: Ok(("x-a", b"b c")) },
            Case { input: "x-empty:", expect: Ok(("x-empty", b"")) },
            Case { input: "no colon", expect: Err(()) },
            Case { input: ": v", expect: Err(()) },
            Case { input: "bad name: v", expect: Err(()) },
            Case { input: "Host: example.com", expect: Err(()) },
            Case { input: "content-length: 5", expect: Err(()) },
            Case { input: "Transfer-Encoding: chunked", expect: Err(()) },
            Case { input: "x: a\r\nb", expect: Err(()) },
        ];
        for c in cases {
            let got = parse_header(c.input);
            let got = got.as_ref().map(|(n, v)| (n.as_str(), v.as_slice())).map_err(|_| ());
            assert_eq!(got, c.expect, "{}", c.input);
        }
    }

    #[test]
    fn methods_and_rates_parse() {
        assert_eq!(parse_method("PROPFIND").as_deref(), Ok("PROPFIND"));
        assert!(parse_method("GE T").is_err());
        assert!(parse_method("").is_err());
        assert_eq!(parse_rate("2500"), Ok(2500.0));
        assert_eq!(parse_rate("0.5"), Ok(0.5));
        for bad in ["0", "-1", "NaN", "inf", "x"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }
}
