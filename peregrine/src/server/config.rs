//! Limits and timeouts of the server, in one struct with documented defaults.
//!
//! The head limits ([`http1::Limits`]) are enforced by the parser; everything else here is
//! enforced by the connection drivers (`server::conn`, `server::h1`) and the accept loop
//! (`server::runtime`).

use std::time::Duration;

use crate::http1;

/// Limits and timeouts the server enforces on every connection.
///
/// Every field has a default chosen for a public server; the comment on each field says where
/// the number comes from.
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use peregrine::server::Config;
/// let config = Config { keep_alive_timeout: Duration::from_secs(5), ..Config::default() };
/// assert_eq!(config.header_read_timeout, Duration::from_secs(10));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Request head limits (size, header count, target length) → 431 / 414.
    ///
    /// `max_head_bytes` is capped at 65,535: the request keeps its header positions as `u16`
    /// offsets into the head, which keeps a [`Request`](crate::Request) small.
    pub head: http1::Limits,
    /// Largest request body in bytes → 413. Default 2 MiB (axum's `DefaultBodyLimit`; nginx
    /// uses 1 MiB). A Content-Length above it is refused before the handler runs; a chunked
    /// body is cut off with an error from [`Body`](crate::Body) once it passes the limit.
    pub max_body_bytes: u64,
    /// How much of a request body the handler did not read is read and discarded to keep the
    /// connection alive. Beyond it the connection closes after the response. Default 64 KiB.
    pub max_drain_bytes: u64,
    /// Connections open at once, over all workers. At the limit a new connection is admitted
    /// by closing the longest-idle keep-alive connection (nginx's and Kestrel's way of
    /// reusing idle connections); only when every connection is busy is it answered
    /// `503 Service Unavailable` with `Connection: close` and closed. Default 16,384.
    pub max_connections: usize,
    /// The whole request head must arrive within this time, counted from the first byte of the
    /// request (or from the accept, for the first request): the slowloris defence. The
    /// connection is closed without a response (the client may not even be speaking HTTP).
    /// Default 10 s (hyper's `header_read_timeout` is 30 s, nginx's `client_header_timeout` 60 s).
    pub header_read_timeout: Duration,
    /// The TLS handshake must finish within this time from the accept; a client that stalls
    /// mid-handshake is cut like a slowloris. Default 10 s (as `header_read_timeout`; nginx's
    /// `ssl_handshake_timeout` is 60 s).
    pub tls_handshake_timeout: Duration,
    /// How long a kept-alive connection may sit idle between requests before it is closed.
    /// Default 75 s (nginx's `keepalive_timeout`).
    pub keep_alive_timeout: Duration,
    /// Minimum average request body data rate in bytes per second, once
    /// [`min_body_rate_grace`](Self::min_body_rate_grace) has passed since the handler first
    /// waited for body data. A slower client gets `408 Request Timeout` and the connection
    /// closes. Default 240 B/s (Kestrel's `MinRequestBodyDataRate`). 0 turns the check off.
    pub min_body_rate: u64,
    /// Grace period before [`min_body_rate`](Self::min_body_rate) applies. Default 5 s (Kestrel).
    pub min_body_rate_grace: Duration,
    /// A write that makes no progress for this long closes the connection. Default 30 s.
    pub write_timeout: Duration,
    /// On graceful shutdown (a drain), how long the listeners keep accepting before they
    /// close: the time a load balancer needs to see the health endpoint answer 503 and stop
    /// sending (HAProxy's `inter` × `fall`, a Kubernetes endpoint update). Responses say
    /// `Connection: close` from the start of the drain. Default 5 s; zero stops accepting at
    /// once. A second SIGTERM or SIGINT (or [`ServerHandle::shutdown_now`]) cuts it short.
    ///
    /// [`ServerHandle::shutdown_now`]: crate::ServerHandle::shutdown_now
    pub drain_grace: Duration,
    /// On graceful shutdown, how long in-flight requests may take, once the listeners have
    /// closed (after [`drain_grace`](Self::drain_grace)), before their connections are
    /// dropped. Until then a connection the drain closed also waits for its client's end of
    /// stream (a lingering close), so a client slow to read its last response is not reset.
    /// Default 10 s.
    pub shutdown_timeout: Duration,
    /// Serve HTTP/2: chosen by ALPN (`h2`) on TLS, and on plain TCP by the client preface or
    /// an `Upgrade: h2c` (see [`h2c`](Self::h2c)). Default on.
    pub http2: bool,
    /// Serve HTTP/2 in clear text on plain TCP listeners (prior knowledge and `Upgrade: h2c`,
    /// RFC 9113 §3.3, RFC 7540 §3.2), when [`http2`](Self::http2) is on. Default on.
    pub h2c: bool,
    /// HTTP/2 streams a client may have open on one connection (SETTINGS_MAX_CONCURRENT_STREAMS,
    /// RFC 9113 §6.5.2); more are refused with REFUSED_STREAM. Default 100 (nginx's
    /// `http2_max_concurrent_streams`, and the RFC's recommended minimum). HTTP/3's request
    /// streams are limited the same (QUIC MAX_STREAMS).
    pub h2_max_concurrent_streams: u32,
    /// Each HTTP/2 stream's receive window: how much request body a client may send ahead of
    /// the handler reading it. Fixed (no bandwidth-delay estimation). Default 256 KiB. Also
    /// each HTTP/3 request stream's (QUIC MAX_STREAM_DATA).
    pub h2_stream_window: u32,
    /// The HTTP/2 connection's receive window, over all its streams: large enough for a fast
    /// link. Default 1 MiB. Also the HTTP/3 connection's (QUIC MAX_DATA): what a client may
    /// send on all its streams together before the handlers read it.
    pub h2_connection_window: u32,
    /// Response octets one HTTP/3 connection may hold over all its streams, sent and not yet
    /// acknowledged or not yet sent (quinn's send window): what a client that grants credit
    /// and acknowledges nothing costs, as the socket's send buffer bounds it over TCP. It also
    /// caps a connection's octets in flight: at most this much per round trip. Default 4 MiB
    /// (Linux's largest TCP send buffer by default, `net.ipv4.tcp_wmem`; 335 Mb/s at a 100 ms
    /// round trip). quinn's own default is 10 MB.
    pub h3_send_window: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            head: http1::Limits::default(),
            max_body_bytes: 2 * 1024 * 1024,
            max_drain_bytes: 64 * 1024,
            max_connections: 16 * 1024,
            header_read_timeout: Duration::from_secs(10),
            tls_handshake_timeout: Duration::from_secs(10),
            keep_alive_timeout: Duration::from_secs(75),
            min_body_rate: 240,
            min_body_rate_grace: Duration::from_secs(5),
            write_timeout: Duration::from_secs(30),
            drain_grace: Duration::from_secs(5),
            shutdown_timeout: Duration::from_secs(10),
            http2: true,
            h2c: true,
            h2_max_concurrent_streams: 100,
            h2_stream_window: 256 * 1024,
            h2_connection_window: 1024 * 1024,
            h3_send_window: 4 * 1024 * 1024,
        }
    }
}

impl Config {
    /// The head limits the connection driver hands to the parser: `max_head_bytes` capped at
    /// `u16::MAX` (see [`Config::head`]).
    pub(crate) fn parser_limits(&self) -> http1::Limits {
        let mut limits = self.head;
        limits.max_head_bytes = limits.max_head_bytes.min(usize::from(u16::MAX));
        limits
    }

    /// What an HTTP/1.1 connection enforces, from these settings: the parser's limits, the
    /// body limits and the deadlines (the write timeout is the transport's).
    pub(crate) fn h1_config(&self) -> http1::conn::Config {
        http1::conn::Config {
            limits: self.parser_limits(),
            max_body_bytes: self.max_body_bytes,
            max_drain_bytes: self.max_drain_bytes,
            header_read_timeout: self.header_read_timeout,
            keep_alive_timeout: self.keep_alive_timeout,
            min_body_rate: self.min_body_rate,
            min_body_rate_grace: self.min_body_rate_grace,
            read_timeout: None,
            http2_preface: self.http2 && self.h2c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_limits_cap_head_at_u16() {
        let config = Config {
            head: http1::Limits { max_head_bytes: 1 << 20, ..Default::default() },
            ..Config::default()
        };
        assert_eq!(config.parser_limits().max_head_bytes, 65_535);
    }
}
