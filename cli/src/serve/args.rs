//! The flags of `peregrine serve`, grouped as `--help` shows them: site, TLS, limits, logging.

use std::path::PathBuf;

use peregrine::files::{Coding, Compression};
use peregrine::server::Config;

pub use crate::flags::{LimitArgs, LogArgs, OpsArgs, TlsArgs};
use crate::units::Size;

/// Arguments of `peregrine serve`.
#[derive(Debug, clap::Args)]
#[command(args_override_self = true)]
#[command(after_help = "\
Examples:
  peregrine serve                      serve the current directory on http://127.0.0.1:8080
  peregrine serve ./public --addr 0.0.0.0:80 --cache-control 'public, max-age=3600'
  peregrine serve --addr 127.0.0.1:0   pick a free port (the printed URL shows it)
  peregrine serve --tls-cert cert.pem --tls-key key.pem --addr 0.0.0.0:8443
  peregrine serve --tls-self-signed    HTTPS on 127.0.0.1:8080 with a throw-away certificate
  peregrine serve --tls-self-signed --h3   ... and HTTP/3 on UDP 127.0.0.1:8080
  peregrine serve --access-log access.log --log-format json
  peregrine serve --proxy-protocol --proxy-trust 10.0.0.0/8 --health /healthz --metrics /metrics
                                       behind HAProxy (send-proxy-v2, option httpchk)

HTTP/2 is served beside HTTP/1.1 on every listener: on HTTPS when the client's ALPN chooses
h2, on plain HTTP when the client starts with the HTTP/2 preface (prior knowledge) or asks
`Upgrade: h2c`; --no-h2c keeps plain HTTP at HTTP/1.1, --no-http2 turns HTTP/2 off.

Dotfiles (names starting with '.') are never served. NAME.br / NAME.gz / NAME.zst next to a
file are sent instead when the client accepts that encoding. Sizes take B, KiB, MiB or GiB;
durations ms, s, m or h. Ctrl-C or SIGTERM starts a drain: the health endpoint answers 503 at
once, responses close their connections (HTTP/2 ones get GOAWAY), the listener keeps accepting
for --drain-grace, then requests in flight finish; a second Ctrl-C or SIGTERM stops at once.
SIGHUP reopens the --access-log file (for log rotation). Under systemd socket activation
(LISTEN_FDS) the inherited sockets are served instead of --addr.")]
pub struct ServeArgs {
    /// Directory to serve.
    #[arg(default_value = ".")]
    pub dir: PathBuf,

    /// Address to listen on, as HOST:PORT. Port 0 picks a free port.
    #[arg(help_heading = "Site", long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    pub addr: String,

    /// Worker threads, each with its own event loop [default: the number of available cores].
    #[arg(help_heading = "Site", long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub workers: Option<u16>,

    /// Answer 403 for a directory without index.html instead of listing its contents.
    #[arg(help_heading = "Site", long)]
    pub no_listing: bool,

    /// Serve HTTP/1.1 only: no HTTP/2, neither by ALPN on HTTPS nor in clear text.
    #[arg(help_heading = "Site", long)]
    pub no_http2: bool,

    /// Also serve HTTP/3 over QUIC on UDP at the same port (needs TLS), and advertise it on
    /// HTTP/1.1 and HTTP/2 responses with Alt-Svc.
    #[arg(help_heading = "Site", long)]
    pub h3: bool,

    /// No HTTP/2 in clear text (prior knowledge, Upgrade: h2c) on plain HTTP; HTTPS still
    /// offers h2 by ALPN.
    #[arg(help_heading = "Site", long)]
    pub no_h2c: bool,

    /// Cache-Control value sent with every file and listing, e.g. 'public, max-age=3600'
    /// [default: none].
    #[arg(help_heading = "Site", long, value_name = "VALUE", value_parser = parse_cache_control)]
    pub cache_control: Option<String>,

    /// How long, in milliseconds, a resolved file (open descriptor, validators, contents up to
    /// 32 KiB) is reused before the file system is checked again; 0 checks on every request.
    #[arg(help_heading = "Site", long, value_name = "MS", default_value_t = 1000)]
    pub file_cache_ms: u64,

    /// Add this field to every response the site gives, e.g. 'X-Frame-Options: DENY'
    /// (repeatable; as nginx's add_header, not to the server's own refusals of malformed
    /// requests: 400, 408, 413, 414, 431, 501, 505).
    #[arg(help_heading = "Site", long, value_name = "NAME: VALUE")]
    pub header: Vec<String>,

    /// Let scripts on other origins read the files (CORS): any origin, or only those listed
    /// (comma-separated, e.g. https://app.example). Answers preflight OPTIONS requests.
    /// Put DIR before this flag.
    #[arg(help_heading = "Site", long, value_name = "ORIGIN,...", num_args = 0..=1,
          default_missing_value = "*")]
    pub cors: Option<String>,

    /// Single-page app: a path that does not exist, asked for by a browser (Accept:
    /// text/html), gets /index.html; missing assets still get 404.
    #[arg(help_heading = "Site", long)]
    pub spa: bool,

    /// Answer 404 with this file instead of a short text.
    #[arg(help_heading = "Site", long = "404", value_name = "FILE")]
    pub not_found: Option<PathBuf>,

    /// Require this user and password (HTTP Basic). The password may be a bcrypt hash
    /// ($2b$..., from `htpasswd -nbB user pass` or `caddy hash-password`); a hash keeps it out
    /// of the process list. Never logged.
    #[arg(help_heading = "Site", long, value_name = "USER:PASSWORD", hide_default_value = true)]
    pub auth: Option<String>,

    /// Compress text, scripts, JSON, SVG and wasm on the fly for clients that accept it:
    /// `off`, or the codings to use with optional levels, e.g. 'gzip=9' or 'br=11,gzip'
    /// (br 0-11, zstd 1-19, gzip 1-9). Each file is compressed once and cached; NAME.br /
    /// NAME.zst / NAME.gz siblings are sent instead when present.
    #[arg(help_heading = "Site", long, value_name = "CODINGS", default_value = "br=5,zstd=3,gzip=6",
          value_parser = parse_compress)]
    pub compress: CompressArg,

    /// Files larger than this are not compressed on the fly (compressing holds a worker).
    #[arg(help_heading = "Site", long, value_name = "SIZE",
          default_value_t = Size(Compression::default().max_size_bytes()))]
    pub compress_max_size: Size,

    /// Memory for compressed copies of files.
    #[arg(help_heading = "Site", long, value_name = "SIZE",
          default_value_t = Size(Compression::default().cache_size_bytes() as u64))]
    pub compress_cache: Size,

    #[command(flatten)]
    pub tls: TlsArgs,

    #[command(flatten)]
    pub limits: LimitArgs,

    #[command(flatten)]
    pub log: LogArgs,

    #[command(flatten)]
    pub ops: OpsArgs,
}

impl ServeArgs {
    /// The server configuration the limit flags describe.
    pub fn config(&self) -> Config {
        crate::flags::server_config(&self.limits, &self.tls, &self.ops, self.no_http2, self.no_h2c)
    }
}

fn parse_cache_control(v: &str) -> Result<String, String> {
    if v.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b)) {
        Ok(v.to_owned())
    } else {
        Err("must be visible ASCII, spaces and tabs (no line breaks)".to_owned())
    }
}

/// `--compress`: the levels asked for, in `Coding::ALL`-independent form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressArg(pub Vec<(Coding, Option<u32>)>);

impl ServeArgs {
    /// The compression settings the flags describe.
    pub fn compression(&self) -> Compression {
        let mut c = Compression::off()
            .max_size(self.compress_max_size.0)
            .cache_bytes(usize::try_from(self.compress_cache.0).unwrap_or(usize::MAX));
        for &(coding, level) in &self.compress.0 {
            let default = Compression::default().level_of(coding);
            c = c.level(coding, level.or(default).or(Some(6)));
        }
        c
    }
}

fn parse_compress(v: &str) -> Result<CompressArg, String> {
    if v == "off" {
        return Ok(CompressArg(Vec::new()));
    }
    let mut out = Vec::new();
    for item in v.split(',').map(str::trim) {
        let (name, level) = match item.split_once('=') {
            Some((n, l)) => {
                let l: u32 = l.parse().map_err(|_| format!("'{l}' is not a level"))?;
                (n, Some(l))
            }
            None => (item, None),
        };
        let coding = match name {
            "gzip" => Coding::Gzip,
            "br" => Coding::Brotli,
            "zstd" => Coding::Zstd,
            _ => return Err(format!("'{name}': use off, or gzip, br and zstd with =LEVEL")),
        };
        out.push((coding, level));
    }
    Ok(CompressArg(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    /// With no flags, the CLI's configuration is the library's default, field for field.
    #[test]
    fn defaults_are_the_librarys() {
        let cli = Cli::try_parse_from(["serve"]).unwrap();
        assert_eq!(cli.serve.config(), Config::default());
    }

    #[test]
    fn every_limit_flag_reaches_the_config() {
        let cli = Cli::try_parse_from([
            "serve",
            "--max-head-bytes=20KiB",
            "--max-headers=50",
            "--max-target-bytes=4KiB",
            "--max-body-bytes=1MiB",
            "--max-drain-bytes=1KiB",
            "--max-connections=10",
            "--header-read-timeout=500ms",
            "--tls-handshake-timeout=3s",
            "--keep-alive-timeout=2m",
            "--min-body-rate=0",
            "--min-body-rate-grace=1s",
            "--write-timeout=1h",
            "--shutdown-timeout=0",
        ])
        .unwrap();
        let c = cli.serve.config();
        use std::time::Duration as D;
        assert_eq!(
            (c.head.max_head_bytes, c.head.max_headers, c.head.max_target_bytes),
            (20 << 10, 50, 4 << 10)
        );
        assert_eq!(
            (c.max_body_bytes, c.max_drain_bytes, c.max_connections),
            (1 << 20, 1 << 10, 10)
        );
        assert_eq!(c.header_read_timeout, D::from_millis(500));
        assert_eq!(c.tls_handshake_timeout, D::from_secs(3));
        assert_eq!(c.keep_alive_timeout, D::from_secs(120));
        assert_eq!((c.min_body_rate, c.min_body_rate_grace), (0, D::from_secs(1)));
        assert_eq!((c.write_timeout, c.shutdown_timeout), (D::from_secs(3600), D::ZERO));
        assert!(Cli::try_parse_from(["serve", "--max-head-bytes=64KiB"]).is_err());
    }

    #[test]
    fn compress_flag() {
        let parse = |v: &str| {
            Cli::try_parse_from(["serve", "--compress", v]).map(|c| c.serve.compression())
        };
        assert_eq!(
            Cli::try_parse_from(["serve"]).unwrap().serve.compression(),
            Compression::default()
        );
        assert!(!parse("off").unwrap().is_on());
        let c = parse("gzip=9").unwrap();
        assert_eq!(
            [c.level_of(Coding::Gzip), c.level_of(Coding::Brotli), c.level_of(Coding::Zstd)],
            [Some(9), None, None]
        );
        let c = parse("br,zstd=19").unwrap();
        assert_eq!(
            [c.level_of(Coding::Gzip), c.level_of(Coding::Brotli), c.level_of(Coding::Zstd)],
            [None, Some(5), Some(19)]
        );
        for bad in ["deflate", "gzip=x", "gzip=", ""] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(Cli::try_parse_from(["serve", "--keep-alive-timeout=75"]).is_err());
    }
}
