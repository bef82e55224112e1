//! The flags of `peregrine proxy`, grouped as `--help` shows them: proxy, upstreams, then the
//! groups `serve` has (TLS, limits, logging, operations).

use std::path::PathBuf;

use peregrine::proxy::{Balance, HashKey, HostHeader, Timeouts};
use peregrine::server::{Config, Network};

pub use crate::flags::{LimitArgs, LogArgs, OpsArgs, TlsArgs};
use crate::units::Dur;

/// Arguments of `peregrine proxy`.
#[derive(Debug, clap::Args)]
#[command(args_override_self = true)]
#[command(after_help = "\
Examples:
  peregrine proxy --to http://127.0.0.1:3000          everything on 127.0.0.1:8080 to one backend
  peregrine proxy --addr 0.0.0.0:80 --to http://10.0.0.1:8080,http://10.0.0.2:8080 \\
                  --balance least-requests --health-check /healthz
  peregrine proxy --tls-cert cert.pem --tls-key key.pem --addr 0.0.0.0:443 --to http://127.0.0.1:3000
  peregrine proxy --config proxy.toml                 listeners, routes, pools from a file

Requests are forwarded with their bodies streamed both ways; hop-by-hop fields are removed
(Connection and the fields it names, Keep-Alive, TE, Transfer-Encoding, Upgrade); Via,
X-Forwarded-For, -Proto and -Host are added (replacing the client's unless --trust-forwarded
names it); Host is the client's unless --host-header says otherwise. A backend that cannot be
reached, or answers with bad framing, gets 502; one that does not answer in time, 504; each
with the reason on stderr. Idempotent requests without a body are retried on another backend
(--retries) within a budget of 20% of the requests. WebSockets (HTTP/1.1 Upgrade, HTTP/2
extended CONNECT) are opened to the backend first, then their messages relayed both ways.

With --config, SIGHUP reads the file again and applies its routes and pools to new requests
without dropping a connection (a file with an error keeps the old configuration and says
why); listeners and TLS are read at start only. SIGHUP also reopens the --access-log file.
Sizes take B, KiB, MiB or GiB; durations ms, s, m or h. docs/PROXY.md has the file's format
and the nginx, HAProxy and Caddy equivalents.")]
pub struct ProxyArgs {
    /// Address to listen on, as HOST:PORT. Port 0 picks a free port.
    #[arg(
        help_heading = "Proxy",
        long,
        value_name = "HOST:PORT",
        default_value = "127.0.0.1:8080"
    )]
    pub addr: String,

    /// The backends, comma-separated: http://HOST:PORT or https://HOST:PORT.
    #[arg(
        help_heading = "Proxy",
        long,
        value_name = "URL,...",
        value_delimiter = ',',
        required_unless_present = "config",
        conflicts_with = "config"
    )]
    pub to: Vec<String>,

    /// Read listeners, routes and pools from this TOML file (see docs/PROXY.md); the other
    /// flags give the defaults it does not set. SIGHUP reloads it.
    #[arg(help_heading = "Proxy", long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Worker threads, each with its own event loop and its own kept-alive backend
    /// connections [default: the number of available cores].
    #[arg(help_heading = "Proxy", long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub workers: Option<u16>,

    /// Serve HTTP/1.1 only to clients: no HTTP/2, neither by ALPN on HTTPS nor in clear text.
    #[arg(help_heading = "Proxy", long)]
    pub no_http2: bool,

    /// No HTTP/2 in clear text (prior knowledge, Upgrade: h2c) from clients on plain HTTP.
    #[arg(help_heading = "Proxy", long)]
    pub no_h2c: bool,

    /// The Host the backend receives: keep (the client's), upstream (the backend's
    /// HOST:PORT), or a value.
    #[arg(help_heading = "Proxy", long, value_name = "keep|upstream|VALUE", default_value = "keep",
          value_parser = parse_host_header)]
    pub host_header: HostHeaderArg,

    /// Set this field on every request to the backends, e.g. 'X-Env: prod' (repeatable;
    /// replaces the client's).
    #[arg(help_heading = "Proxy", long, value_name = "NAME: VALUE", value_parser = parse_field)]
    pub header_up: Vec<(String, String)>,

    /// Set this field on every response to the clients (repeatable).
    #[arg(help_heading = "Proxy", long, value_name = "NAME: VALUE", value_parser = parse_field)]
    pub header_down: Vec<(String, String)>,

    /// Networks whose X-Forwarded-For and Forwarded are kept and appended to
    /// (comma-separated ADDRESS or ADDRESS/PREFIX, or 'all'); others' are replaced.
    #[arg(help_heading = "Proxy", long, value_name = "NETS|all", value_delimiter = ',')]
    pub trust_forwarded: Vec<String>,

    /// Add an RFC 7239 Forwarded field (for, proto, host) to requests.
    #[arg(help_heading = "Proxy", long)]
    pub forwarded: bool,

    /// Add no Via field.
    #[arg(help_heading = "Proxy", long)]
    pub no_via: bool,

    /// Add no X-Forwarded-For, -Proto and -Host fields.
    #[arg(help_heading = "Proxy", long)]
    pub no_x_forwarded: bool,

    #[command(flatten)]
    pub upstreams: UpstreamArgs,

    #[command(flatten)]
    pub tls: TlsArgs,

    #[command(flatten)]
    pub limits: LimitArgs,

    #[command(flatten)]
    pub log: LogArgs,

    #[command(flatten)]
    pub ops: OpsArgs,
}

/// How the backends are used.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Upstreams")]
pub struct UpstreamArgs {
    /// How a backend is chosen: round-robin, least-requests (the less busy of two at random),
    /// or consistent hashing: hash-header:NAME, hash-cookie:NAME, hash-client (the client's
    /// address).
    #[arg(long, value_name = "POLICY", default_value = "round-robin", value_parser = parse_balance)]
    pub balance: BalanceArg,

    /// Speak HTTP/2 to the backends (h2c by prior knowledge for http://, ALPN h2 for https://).
    #[arg(long)]
    pub upstream_http2: bool,

    /// Check every backend with GET PATH; 2xx and 3xx pass (active health checks).
    #[arg(long, value_name = "PATH")]
    pub health_check: Option<String>,

    /// Time between two checks of a backend.
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub health_interval: Dur,

    /// Longest wait for a check's answer.
    #[arg(long, value_name = "DURATION", default_value = "2s")]
    pub health_timeout: Dur,

    /// Consecutive passed checks that bring a backend back.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub health_rise: u32,

    /// Consecutive failed checks that take a backend out.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub health_fall: u32,

    /// Consecutive failed requests that take a backend out (passive health; 0: never).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub eject_after: u32,

    /// How long a backend taken out by failed requests stays out before one request probes it.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub eject_for: Dur,

    /// Retries of a failed idempotent request without a body, each on another backend.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub retries: u32,

    /// Retries may add at most this share of the requests, in percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 20)]
    pub retry_budget: u32,

    /// Kept-alive idle connections per backend and worker (nginx's keepalive; 0: none).
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub keepalive: usize,

    /// Time allowed to connect to a backend (DNS and TCP) → 502.
    #[arg(long, value_name = "DURATION", default_value_t = Dur(Timeouts::default().connect))]
    pub connect_timeout: Dur,

    /// Time allowed for a backend's TLS handshake → 502.
    #[arg(long, value_name = "DURATION", default_value_t = Dur(Timeouts::default().tls))]
    pub upstream_tls_timeout: Dur,

    /// From the request sent to the backend's response head → 504.
    #[arg(long, value_name = "DURATION", default_value_t = Dur(Timeouts::default().response_head))]
    pub response_timeout: Dur,

    /// No byte from the backend for this long while a response is awaited → 504 (or the
    /// response cut short).
    #[arg(long, value_name = "DURATION", default_value_t = Dur(Timeouts::default().idle))]
    pub upstream_idle_timeout: Dur,

    /// The whole request until its response head, retries included → 504 [default: none].
    #[arg(long, value_name = "DURATION")]
    pub total_timeout: Option<Dur>,

    /// Trust this CA (PEM) for https:// backends, instead of Mozilla's roots.
    #[arg(long, value_name = "FILE")]
    pub upstream_ca: Option<PathBuf>,
}

/// `--host-header`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostHeaderArg(pub HostHeader);

pub fn parse_host_header(v: &str) -> Result<HostHeaderArg, String> {
    Ok(HostHeaderArg(match v {
        "keep" => HostHeader::Keep,
        "upstream" => HostHeader::Upstream,
        other => {
            peregrine::http1::encode::RequestPrelude::with_authority(other.as_bytes())
                .map_err(|_| format!("'{other}' is not a host[:port]"))?;
            HostHeader::Set(other.to_owned())
        }
    }))
}

/// `--balance`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BalanceArg(pub Balance);

pub fn parse_balance(v: &str) -> Result<BalanceArg, String> {
    let name = |n: &str| {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_graphic() && b != b':' && b != b'=') {
            Ok(n.to_owned())
        } else {
            Err(format!("'{n}' is not a field or cookie name"))
        }
    };
    Ok(BalanceArg(match v {
        "round-robin" => Balance::RoundRobin,
        "least-requests" => Balance::LeastRequests,
        "hash-client" => Balance::Hash(HashKey::ClientAddr),
        _ => match v.split_once(':') {
            Some(("hash-header", n)) => Balance::Hash(HashKey::Header(name(n)?)),
            Some(("hash-cookie", n)) => Balance::Hash(HashKey::Cookie(name(n)?)),
            _ => {
                return Err(format!(
                    "'{v}': use round-robin, least-requests, hash-header:NAME, \
                     hash-cookie:NAME or hash-client"
                ));
            }
        },
    }))
}

/// `NAME: VALUE`, checked as the library will.
pub fn parse_field(v: &str) -> Result<(String, String), String> {
    let (name, value) = v.split_once(':').ok_or("expected 'NAME: VALUE'")?;
    let (name, value) = (name.trim(), value.trim());
    http::HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("'{name}' is not a field name"))?;
    http::HeaderValue::from_str(value)
        .map_err(|_| "the value has a control character".to_owned())?;
    Ok((name.to_owned(), value.to_owned()))
}

/// `--trust-forwarded`.
pub fn parse_trust(v: &[String]) -> Result<peregrine::proxy::Trust, String> {
    use peregrine::proxy::Trust;
    if v.is_empty() {
        return Ok(Trust::Nobody);
    }
    if v.iter().any(|n| n == "all") {
        return Ok(Trust::Everyone);
    }
    let nets = v
        .iter()
        .map(|n| {
            n.parse::<Network>().map_err(|_| format!("'{n}' is not an ADDRESS or ADDRESS/PREFIX"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Trust::Networks(nets))
}

impl ProxyArgs {
    /// The server configuration the limit flags describe.
    pub fn config(&self) -> Config {
        crate::flags::server_config(&self.limits, &self.tls, &self.ops, self.no_http2, self.no_h2c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        proxy: ProxyArgs,
    }

    #[test]
    fn balance_values() {
        struct Case {
            v: &'static str,
            ok: Option<Balance>,
        }
        let cases = [
            Case { v: "round-robin", ok: Some(Balance::RoundRobin) },
            Case { v: "least-requests", ok: Some(Balance::LeastRequests) },
            Case { v: "hash-client", ok: Some(Balance::Hash(HashKey::ClientAddr)) },
            Case {
                v: "hash-header:X-User",
                ok: Some(Balance::Hash(HashKey::Header("X-User".into()))),
            },
            Case { v: "hash-cookie:sid", ok: Some(Balance::Hash(HashKey::Cookie("sid".into()))) },
            Case { v: "hash-cookie:", ok: None },
            Case { v: "random", ok: None },
        ];
        for case in cases {
            assert_eq!(parse_balance(case.v).ok().map(|b| b.0), case.ok, "{}", case.v);
        }
    }

    #[test]
    fn to_or_config_is_required_and_not_both() {
        assert!(Cli::try_parse_from(["proxy"]).is_err());
        assert!(Cli::try_parse_from(["proxy", "--to", "http://a", "--config", "f"]).is_err());
        let c = Cli::try_parse_from(["proxy", "--to", "http://a:1,http://b:2"]).unwrap();
        assert_eq!(c.proxy.to, ["http://a:1", "http://b:2"]);
        assert!(Cli::try_parse_from(["proxy", "--config", "f.toml"]).is_ok());
        // The server's limits are serve's, with the library's defaults.
        assert_eq!(c.proxy.config(), Config::default());
    }

    #[test]
    fn fields_hosts_and_trust() {
        assert_eq!(parse_field("X-Env: prod").unwrap(), ("X-Env".into(), "prod".into()));
        assert!(parse_field("bad name: v").is_err());
        assert!(parse_field("novalue").is_err());
        assert_eq!(parse_host_header("upstream").unwrap().0, HostHeader::Upstream);
        assert_eq!(parse_host_header("a.b:81").unwrap().0, HostHeader::Set("a.b:81".into()));
        assert!(parse_host_header("a b").is_err());
        use peregrine::proxy::Trust;
        assert_eq!(parse_trust(&[]).unwrap(), Trust::Nobody);
        assert_eq!(parse_trust(&["all".into()]).unwrap(), Trust::Everyone);
        assert!(
            matches!(parse_trust(&["10.0.0.0/8".into()]).unwrap(), Trust::Networks(n) if n.len() == 1)
        );
        assert!(parse_trust(&["x".into()]).is_err());
    }
}
