//! The flag groups `serve` and `proxy` share, as `--help` shows them: TLS, limits, logging,
//! operations; and the server configuration they describe.

use std::path::PathBuf;

use peregrine::server::{Config, Network};

use crate::log::Format;
use crate::units::{Dur, Size};

/// Running behind a load balancer.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Operations")]
pub struct OpsArgs {
    /// Expect a PROXY protocol header (v1 or v2, as HAProxy's send-proxy / send-proxy-v2
    /// sends) on every connection, from --proxy-trust peers only: the access log and handlers
    /// see the client it names. Other connections are closed unserved.
    #[arg(long)]
    pub proxy_protocol: bool,

    /// Networks allowed to send the PROXY header, comma-separated (ADDRESS or ADDRESS/PREFIX).
    #[arg(
        long,
        value_name = "NETS",
        value_delimiter = ',',
        default_value = "127.0.0.0/8,::1",
        requires = "proxy_protocol"
    )]
    pub proxy_trust: Vec<Network>,

    /// Answer GET PATH with 200 while serving and 503 once a drain begins (for a load
    /// balancer's health check), e.g. /healthz.
    #[arg(long, value_name = "PATH", value_parser = parse_path)]
    pub health: Option<String>,

    /// Answer GET PATH with Prometheus text metrics (connections, requests by status class,
    /// bytes, requests in flight), e.g. /metrics.
    #[arg(long, value_name = "PATH", value_parser = parse_path)]
    pub metrics: Option<String>,

    /// How long the listener keeps accepting after SIGTERM, while the balancer notices the
    /// failing health check.
    #[arg(long, value_name = "DURATION", default_value_t = Dur(defaults().drain_grace))]
    pub drain_grace: Dur,

    /// Share the port with another instance already listening on it (SO_REUSEPORT), to start
    /// a new version beside the old one before the old one drains.
    #[arg(long)]
    pub reuse_port: bool,
}

fn parse_path(v: &str) -> Result<String, String> {
    if v.starts_with('/') && v.bytes().all(|b| b.is_ascii_graphic() && b != b'?' && b != b'#') {
        Ok(v.to_owned())
    } else {
        Err("must be a path starting with '/' (visible ASCII, no query)".to_owned())
    }
}

/// HTTPS.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "TLS")]
pub struct TlsArgs {
    /// Serve HTTPS with this PEM certificate chain (end-entity certificate first); needs
    /// --tls-key. TLS 1.3 and 1.2, ALPN http/1.1, session resumption.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Serve HTTPS with a throw-away certificate for localhost and 127.0.0.1, generated at
    /// start; the path of its PEM file is printed, for `curl --cacert`. For local use only.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    pub tls_self_signed: bool,

    /// A client must finish the TLS handshake within this time.
    #[arg(long, value_name = "DURATION", default_value_t = Dur(defaults().tls_handshake_timeout))]
    pub tls_handshake_timeout: Dur,
}

/// Every limit and timeout of the server (`peregrine::server::Config`), with its defaults.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Limits")]
pub struct LimitArgs {
    /// Largest request head (request line and header fields) → 431; at most 64KiB-1.
    #[arg(long, value_name = "SIZE", value_parser = parse_head_bytes,
          default_value_t = Size(defaults().head.max_head_bytes as u64))]
    pub max_head_bytes: Size,

    /// Most header fields in a request → 431.
    #[arg(long, value_name = "N", default_value_t = defaults().head.max_headers)]
    pub max_headers: usize,

    /// Longest request-target → 414.
    #[arg(long, value_name = "SIZE", default_value_t = Size(defaults().head.max_target_bytes as u64))]
    pub max_target_bytes: Size,

    /// Largest request body → 413.
    #[arg(long, value_name = "SIZE", default_value_t = Size(defaults().max_body_bytes))]
    pub max_body_bytes: Size,

    /// How much of a body the handler did not read is discarded to keep the connection;
    /// beyond it the connection closes after the response.
    #[arg(long, value_name = "SIZE", default_value_t = Size(defaults().max_drain_bytes))]
    pub max_drain_bytes: Size,

    /// Connections open at once (over all workers); at the limit the longest-idle one makes
    /// room, and 503 when all are busy.
    #[arg(long, value_name = "N", default_value_t = defaults().max_connections)]
    pub max_connections: usize,

    /// A request head must arrive whole within this time (the slowloris defence).
    #[arg(long, value_name = "DURATION", default_value_t = Dur(defaults().header_read_timeout))]
    pub header_read_timeout: Dur,

    /// An idle keep-alive connection is closed after this time.
    #[arg(long, value_name = "DURATION", default_value_t = Dur(defaults().keep_alive_timeout))]
    pub keep_alive_timeout: Dur,

    /// Slowest request body, in bytes per second on average once the grace period is over
    /// (→ 408); 0 turns the check off.
    #[arg(long, value_name = "BYTES_PER_S", default_value_t = defaults().min_body_rate)]
    pub min_body_rate: u64,

    /// Grace period before --min-body-rate applies.
    #[arg(long, value_name = "DURATION", default_value_t = Dur(defaults().min_body_rate_grace))]
    pub min_body_rate_grace: Dur,

    /// A write that makes no progress for this long closes the connection.
    #[arg(long, value_name = "DURATION", default_value_t = Dur(defaults().write_timeout))]
    pub write_timeout: Dur,

    /// On shutdown, how long requests in flight may take before their connections are cut.
    #[arg(long, value_name = "DURATION", default_value_t = Dur(defaults().shutdown_timeout))]
    pub shutdown_timeout: Dur,

    /// HTTP/2 streams a client may have open on one connection (more are refused).
    #[arg(long, value_name = "N", default_value_t = defaults().h2_max_concurrent_streams)]
    pub h2_max_streams: u32,

    /// Each HTTP/2 stream's receive window: request body a client may send ahead of the
    /// handler reading it.
    #[arg(long, value_name = "SIZE", value_parser = parse_window,
          default_value_t = Size(u64::from(defaults().h2_stream_window)))]
    pub h2_stream_window: Size,

    /// An HTTP/2 connection's receive window, over all its streams.
    #[arg(long, value_name = "SIZE", value_parser = parse_window,
          default_value_t = Size(u64::from(defaults().h2_connection_window)))]
    pub h2_connection_window: Size,

    /// With --h3: response data an HTTP/3 connection may hold sent and not yet acknowledged,
    /// or not yet sent, over all its streams (also at most this much in flight per round trip).
    #[arg(long, value_name = "SIZE", value_parser = parse_window,
          default_value_t = Size(u64::from(defaults().h3_send_window)))]
    pub h3_send_window: Size,
}

/// An HTTP/2 flow-control window: 65,535 bytes (the protocol's initial value, RFC 9113
/// §6.9.2) up to 2^31-1. HTTP/3's send window takes the same bounds.
fn parse_window(v: &str) -> Result<Size, String> {
    let size: Size = v.parse()?;
    if !(65_535..=0x7fff_ffff).contains(&size.0) {
        return Err("must be between 65535 and 2GiB-1 bytes".to_owned());
    }
    Ok(size)
}

/// The access log.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Logging")]
pub struct LogArgs {
    /// Do not write the access log.
    #[arg(long)]
    pub quiet: bool,

    /// Access log line format: Apache/nginx `common` or `combined` (with Referer and
    /// User-Agent), or `json` (one object per line).
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = Format::Combined)]
    pub log_format: Format,

    /// Append the access log to this file instead of stderr; SIGHUP reopens it (log rotation).
    /// Lines are written by their own thread; if the file falls more than 4 MiB behind, lines
    /// are dropped and counted on stderr rather than slowing requests down.
    #[arg(long, value_name = "FILE")]
    pub access_log: Option<PathBuf>,
}

fn defaults() -> Config {
    Config::default()
}

/// The server configuration the shared flags describe.
pub fn server_config(
    l: &LimitArgs,
    tls: &TlsArgs,
    ops: &OpsArgs,
    no_http2: bool,
    no_h2c: bool,
) -> Config {
    let mut config = Config::default();
    config.head.max_head_bytes = usize::try_from(l.max_head_bytes.0).unwrap_or(usize::MAX);
    config.head.max_headers = l.max_headers;
    config.head.max_target_bytes = usize::try_from(l.max_target_bytes.0).unwrap_or(usize::MAX);
    config.max_body_bytes = l.max_body_bytes.0;
    config.max_drain_bytes = l.max_drain_bytes.0;
    config.max_connections = l.max_connections;
    config.header_read_timeout = l.header_read_timeout.0;
    config.tls_handshake_timeout = tls.tls_handshake_timeout.0;
    config.keep_alive_timeout = l.keep_alive_timeout.0;
    config.min_body_rate = l.min_body_rate;
    config.min_body_rate_grace = l.min_body_rate_grace.0;
    config.write_timeout = l.write_timeout.0;
    config.shutdown_timeout = l.shutdown_timeout.0;
    config.drain_grace = ops.drain_grace.0;
    config.http2 = !no_http2;
    config.h2c = !no_h2c;
    config.h2_max_concurrent_streams = l.h2_max_streams;
    // Bounded by `parse_window`.
    config.h2_stream_window = l.h2_stream_window.0 as u32;
    config.h2_connection_window = l.h2_connection_window.0 as u32;
    config.h3_send_window = l.h3_send_window.0 as u32;
    config
}

/// The request keeps header positions as 16-bit offsets (see `server::Config::head`).
fn parse_head_bytes(v: &str) -> Result<Size, String> {
    let size: Size = v.parse()?;
    if size.0 > u64::from(u16::MAX) {
        return Err("at most 65535 bytes (64KiB-1)".to_owned());
    }
    Ok(size)
}
