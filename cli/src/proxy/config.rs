//! `peregrine proxy --config FILE`: the TOML file (listeners, forwarding, upstream pools,
//! routes), checked whole into a [`ProxyBuilder`] or refused with the place and reason of the
//! first error. docs/PROXY.md is its reference.
//!
//! Every table refuses keys it does not know (a misspelt key is an error, not a silent
//! default). What the file leaves out comes from the command line's flags, then from the
//! library's defaults. Relative paths (certificates, CA files, directories) are relative to
//! the file's own directory, so a reload from anywhere reads the same files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use peregrine::files::ServeDir;
use peregrine::proxy::{
    Eject, Forwarding, HeaderOps, HealthCheck, PathRewrite, Proxy, ProxyBuilder, Retries, Route,
    Timeouts, UpstreamProtocol, Upstreams,
};
use serde::Deserialize;

use super::args::{
    ProxyArgs, UpstreamArgs, parse_balance, parse_field, parse_host_header, parse_trust,
};
use crate::units::{Dur, Size};

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    listen: Vec<ListenSpec>,
    forwarding: Option<ForwardingSpec>,
    #[serde(default)]
    upstream: BTreeMap<String, PoolSpec>,
    #[serde(default)]
    route: Vec<RouteSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListenSpec {
    addr: String,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ForwardingSpec {
    via: Option<bool>,
    x_forwarded: Option<bool>,
    forwarded: Option<bool>,
    trust: Option<Vec<String>>,
}

/// An upstream pool; unset keys take the `Upstreams` flags' values.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PoolSpec {
    #[serde(default)]
    servers: Vec<String>,
    balance: Option<String>,
    protocol: Option<String>,
    keepalive: Option<usize>,
    ca: Option<PathBuf>,
    retries: Option<u32>,
    retry_budget: Option<u32>,
    eject_after: Option<u32>,
    eject_for: Option<String>,
    health: Option<HealthSpec>,
    timeouts: Option<TimeoutSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HealthSpec {
    path: String,
    interval: Option<String>,
    timeout: Option<String>,
    rise: Option<u32>,
    fall: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimeoutSpec {
    connect: Option<String>,
    tls: Option<String>,
    response: Option<String>,
    idle: Option<String>,
    total: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteSpec {
    host: Option<String>,
    prefix: Option<String>,
    upstream: Option<String>,
    files: Option<PathBuf>,
    #[serde(default)]
    strip_prefix: bool,
    rewrite: Option<String>,
    host_header: Option<String>,
    request_headers: Option<HeaderSpec>,
    response_headers: Option<HeaderSpec>,
    max_body_bytes: Option<SizeSpec>,
    listing: Option<bool>,
    cache_control: Option<String>,
    spa: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderSpec {
    #[serde(default)]
    set: BTreeMap<String, String>,
    #[serde(default)]
    add: BTreeMap<String, String>,
    #[serde(default)]
    remove: Vec<String>,
}

/// A size as a number of bytes or a string with a unit (`"1MiB"`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum SizeSpec {
    Bytes(u64),
    Text(String),
}

/// A listener the file asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    pub addr: String,
    /// Certificate chain and key (PEM).
    pub tls: Option<(PathBuf, PathBuf)>,
}

/// What a file describes: its listeners (read at start only) and the proxy.
#[derive(Debug)]
pub struct Loaded {
    pub listeners: Vec<Listener>,
    pub proxy: ProxyBuilder,
}

/// Reads and checks `path`; the error names the file and says what and where.
pub fn load(path: &Path, args: &ProxyArgs) -> Result<Loaded, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: {}", path.display(), crate::io_error::describe(&e)))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse(&text, base, args).map_err(|e| format!("{}: {e}", path.display()))
}

/// Checks the text of a file whose relative paths are under `base`.
pub fn parse(text: &str, base: &Path, args: &ProxyArgs) -> Result<Loaded, String> {
    let file: File = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_owned())?;
    let mut listeners = Vec::new();
    for (i, l) in file.listen.iter().enumerate() {
        let tls = match (&l.tls_cert, &l.tls_key) {
            (Some(c), Some(k)) => Some((base.join(c), base.join(k))),
            (None, None) => None,
            _ => return Err(format!("listen[{i}]: tls_cert and tls_key go together")),
        };
        listeners.push(Listener { addr: l.addr.clone(), tls });
    }
    let mut pools = BTreeMap::new();
    for (name, spec) in &file.upstream {
        let pool = pool(&spec.servers, spec, &args.upstreams, base)
            .map_err(|e| format!("upstream.{name}: {e}"))?;
        pools.insert(name.as_str(), pool);
    }
    if file.route.is_empty() {
        return Err("no [[route]]: say where requests go".to_owned());
    }
    let mut builder = Proxy::builder().forwarding(forwarding(file.forwarding, args)?);
    for (i, spec) in file.route.iter().enumerate() {
        let route = route(spec, &pools, args, base).map_err(|e| format!("route[{i}]: {e}"))?;
        builder = builder.route(route);
    }
    Ok(Loaded { listeners, proxy: builder })
}

/// `--to`: one route, every request to the pool of those servers, as the flags say.
pub fn from_flags(args: &ProxyArgs) -> Result<ProxyBuilder, String> {
    let pool = pool(&args.to, &PoolSpec::default(), &args.upstreams, Path::new("."))
        .map_err(|e| format!("--to: {e}"))?;
    let route = Route::new(pool)
        .host_header(args.host_header.0.clone())
        .request_headers(ops(None, &args.header_up)?)
        .response_headers(ops(None, &args.header_down)?);
    Ok(Proxy::builder().forwarding(forwarding(None, args)?).route(route))
}

/// The forwarding fields: the file's keys over the flags'.
fn forwarding(spec: Option<ForwardingSpec>, args: &ProxyArgs) -> Result<Forwarding, String> {
    let spec = spec.unwrap_or_default();
    let trust = match &spec.trust {
        Some(nets) => parse_trust(nets).map_err(|e| format!("forwarding.trust: {e}"))?,
        None => {
            parse_trust(&args.trust_forwarded).map_err(|e| format!("--trust-forwarded: {e}"))?
        }
    };
    Ok(Forwarding::default()
        .via(spec.via.unwrap_or(!args.no_via))
        .x_forwarded(spec.x_forwarded.unwrap_or(!args.no_x_forwarded))
        .forwarded(spec.forwarded.unwrap_or(args.forwarded))
        .trust(trust))
}

fn duration(
    key: &str,
    v: Option<&String>,
    default: std::time::Duration,
) -> Result<std::time::Duration, String> {
    match v {
        Some(v) => v.parse::<Dur>().map(|d| d.0).map_err(|e| format!("{key}: {e}")),
        None => Ok(default),
    }
}

/// A pool of `servers`, with the spec's settings over the flags'.
fn pool(
    servers: &[String],
    spec: &PoolSpec,
    flags: &UpstreamArgs,
    base: &Path,
) -> Result<Upstreams, String> {
    if servers.is_empty() {
        return Err("no servers".to_owned());
    }
    let mut pool = Upstreams::new(servers).map_err(|e| e.to_string())?;
    let balance = match &spec.balance {
        Some(b) => parse_balance(b).map_err(|e| format!("balance: {e}"))?,
        None => flags.balance.clone(),
    };
    pool = pool.balance(balance.0);
    let http2 = match spec.protocol.as_deref() {
        None => flags.upstream_http2,
        Some("http1") => false,
        Some("http2") => true,
        Some(other) => return Err(format!("protocol: '{other}': use http1 or http2")),
    };
    if http2 {
        pool = pool.protocol(UpstreamProtocol::Http2);
    }
    pool = pool.max_idle(spec.keepalive.unwrap_or(flags.keepalive));
    let ca = match &spec.ca {
        Some(ca) => Some(base.join(ca)),
        None => flags.upstream_ca.clone(),
    };
    if let Some(ca) = ca {
        let tls = peregrine::client::TlsConfig::empty()
            .add_ca_pem_file(&ca)
            .map_err(|e| format!("ca {}: {e}", ca.display()))?;
        pool = pool.tls(tls);
    }
    pool = pool.retries(Retries {
        attempts: spec.retries.unwrap_or(flags.retries),
        budget_percent: spec.retry_budget.unwrap_or(flags.retry_budget),
    });
    pool = pool.eject(Eject {
        after: spec.eject_after.unwrap_or(flags.eject_after),
        duration: duration("eject_for", spec.eject_for.as_ref(), flags.eject_for.0)?,
    });
    let check = match (&spec.health, &flags.health_check) {
        (Some(h), _) => Some(
            HealthCheck::new(check_path(&h.path).map_err(|e| format!("health.path: {e}"))?)
                .interval(duration(
                    "health.interval",
                    h.interval.as_ref(),
                    flags.health_interval.0,
                )?)
                .timeout(duration("health.timeout", h.timeout.as_ref(), flags.health_timeout.0)?)
                .rise(h.rise.unwrap_or(flags.health_rise))
                .fall(h.fall.unwrap_or(flags.health_fall)),
        ),
        (None, Some(path)) => Some(
            HealthCheck::new(check_path(path).map_err(|e| format!("--health-check: {e}"))?)
                .interval(flags.health_interval.0)
                .timeout(flags.health_timeout.0)
                .rise(flags.health_rise)
                .fall(flags.health_fall),
        ),
        (None, None) => None,
    };
    if let Some(check) = check {
        pool = pool.health_check(check);
    }
    let t = spec.timeouts.as_ref();
    let get = |f: fn(&TimeoutSpec) -> Option<&String>| t.and_then(f);
    let total = match get(|t| t.total.as_ref()) {
        Some(v) => Some(duration("timeouts.total", Some(v), std::time::Duration::ZERO)?),
        None => flags.total_timeout.map(|d| d.0),
    };
    pool = pool.timeouts(Timeouts {
        connect: duration(
            "timeouts.connect",
            get(|t| t.connect.as_ref()),
            flags.connect_timeout.0,
        )?,
        tls: duration("timeouts.tls", get(|t| t.tls.as_ref()), flags.upstream_tls_timeout.0)?,
        response_head: duration(
            "timeouts.response",
            get(|t| t.response.as_ref()),
            flags.response_timeout.0,
        )?,
        idle: duration("timeouts.idle", get(|t| t.idle.as_ref()), flags.upstream_idle_timeout.0)?,
        total,
        ..Timeouts::default()
    });
    Ok(pool)
}

/// A health check's path: origin form, visible ASCII.
fn check_path(p: &str) -> Result<&str, String> {
    if p.starts_with('/') && p.bytes().all(|b| b.is_ascii_graphic()) {
        Ok(p)
    } else {
        Err(format!("'{p}' is not a path starting with '/'"))
    }
}

fn route(
    spec: &RouteSpec,
    pools: &BTreeMap<&str, Upstreams>,
    args: &ProxyArgs,
    base: &Path,
) -> Result<Route, String> {
    let mut route = match (&spec.upstream, &spec.files) {
        (Some(name), None) => {
            let pool = pools
                .get(name.as_str())
                .ok_or_else(|| format!("upstream '{name}' is not defined ([upstream.{name}])"))?;
            Route::new(pool.clone())
        }
        (None, Some(dir)) => {
            let dir = base.join(dir);
            let files = ServeDir::new(&dir).map_err(|e| {
                format!("files {}: {}", dir.display(), crate::io_error::describe(&e))
            })?;
            let files = files
                .listing(spec.listing.unwrap_or(true))
                .cache_control(spec.cache_control.clone())
                .cache_ttl(Some(std::time::Duration::from_secs(1)))
                .spa(spec.spa.unwrap_or(false));
            Route::files(files)
        }
        _ => return Err("give one of upstream = \"NAME\" or files = \"DIR\"".to_owned()),
    };
    if spec.upstream.is_some()
        && (spec.listing.is_some() || spec.cache_control.is_some() || spec.spa.is_some())
    {
        return Err("listing, cache_control and spa are for routes to files".to_owned());
    }
    if let Some(host) = &spec.host {
        let bare = host.strip_prefix("*.").unwrap_or(host);
        if bare.is_empty()
            || !bare.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        {
            return Err(format!("host: '{host}' is not a host name (without port)"));
        }
        route = route.host(host);
    }
    if let Some(prefix) = &spec.prefix {
        if !prefix.starts_with('/')
            || !prefix.bytes().all(|b| b.is_ascii_graphic() && b != b'?' && b != b'#')
        {
            return Err(format!("prefix: '{prefix}' is not a path starting with '/'"));
        }
        route = route.prefix(prefix);
    }
    route = match (&spec.rewrite, spec.strip_prefix) {
        (Some(_), true) => return Err("strip_prefix and rewrite: choose one".to_owned()),
        (Some(to), false) => {
            if !to.starts_with('/') {
                return Err(format!("rewrite: '{to}' is not a path starting with '/'"));
            }
            route.rewrite(PathRewrite::ReplacePrefix(to.clone()))
        }
        (None, true) => route.rewrite(PathRewrite::StripPrefix),
        (None, false) => route,
    };
    let host_header = match &spec.host_header {
        Some(h) => parse_host_header(h).map_err(|e| format!("host_header: {e}"))?,
        None => args.host_header.clone(),
    };
    route = route.host_header(host_header.0);
    route = route.request_headers(
        ops(spec.request_headers.as_ref(), &args.header_up)
            .map_err(|e| format!("request_headers: {e}"))?,
    );
    route = route.response_headers(
        ops(spec.response_headers.as_ref(), &args.header_down)
            .map_err(|e| format!("response_headers: {e}"))?,
    );
    if let Some(size) = &spec.max_body_bytes {
        let n = match size {
            SizeSpec::Bytes(n) => *n,
            SizeSpec::Text(t) => t.parse::<Size>().map_err(|e| format!("max_body_bytes: {e}"))?.0,
        };
        route = route.max_body_bytes(n);
    }
    Ok(route)
}

/// Field operations: the flags' sets first, then the file's (each checked before the library
/// sees it, since it panics on a bad name or value).
fn ops(spec: Option<&HeaderSpec>, flags: &[(String, String)]) -> Result<HeaderOps, String> {
    let mut ops = HeaderOps::default();
    for (n, v) in flags {
        ops = ops.set(n, v);
    }
    let Some(spec) = spec else { return Ok(ops) };
    for (n, v) in &spec.set {
        let (n, v) = parse_field(&format!("{n}: {v}"))?;
        ops = ops.set(&n, &v);
    }
    for (n, v) in &spec.add {
        let (n, v) = parse_field(&format!("{n}: {v}"))?;
        ops = ops.add(&n, &v);
    }
    for n in &spec.remove {
        let (n, _) = parse_field(&format!("{n}: x"))?;
        ops = ops.remove(&n);
    }
    Ok(ops)
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

    fn args() -> ProxyArgs {
        Cli::try_parse_from(["proxy", "--config", "x.toml"]).unwrap().proxy
    }

    #[test]
    fn good_files() {
        let dir = std::env::temp_dir();
        let text = r#"
            [[listen]]
            addr = "127.0.0.1:0"

            [forwarding]
            forwarded = true
            trust = ["10.0.0.0/8"]

            [upstream.app]
            servers = ["http://127.0.0.1:9001", "http://127.0.0.1:9002"]
            balance = "hash-cookie:sid"
            protocol = "http2"
            retries = 1
            eject_for = "30s"
            health = { path = "/healthz", interval = "1s", fall = 2 }
            timeouts = { connect = "1s", total = "30s" }

            [[route]]
            host = "*.example.com"
            prefix = "/api"
            upstream = "app"
            strip_prefix = true
            host_header = "upstream"
            request_headers = { set = { X-Env = "prod" }, remove = ["X-Debug"] }
            max_body_bytes = "1MiB"

            [[route]]
            prefix = "/static"
            files = "."
            listing = false
        "#;
        let loaded = parse(text, &dir, &args()).unwrap();
        assert_eq!(loaded.listeners, [Listener { addr: "127.0.0.1:0".into(), tls: None }]);
        let text = "[[route]]\nfiles = \".\"\nmax_body_bytes = 1024\n";
        assert!(parse(text, &dir, &args()).unwrap().listeners.is_empty());
    }

    /// Each bad file is refused with where and why.
    #[test]
    fn bad_files() {
        struct Case {
            text: &'static str,
            says: &'static str,
        }
        let cases = [
            Case { text: "", says: "no [[route]]" },
            Case {
                text: "[[route]]\nupstream = \"nope\"\n",
                says: "route[0]: upstream 'nope' is not defined",
            },
            Case {
                text: "[[route]]\nfiles = \".\"\nupstream = \"a\"\n",
                says: "route[0]: give one of",
            },
            Case { text: "[[route]]\nfile = \".\"\n", says: "unknown field `file`" },
            Case {
                text: "[upstream.a]\nservers = []\n[[route]]\nupstream = \"a\"\n",
                says: "upstream.a: no servers",
            },
            Case {
                text: "[upstream.a]\nservers = [\"ftp://x\"]\n[[route]]\nupstream = \"a\"\n",
                says: "upstream.a:",
            },
            Case {
                text: "[upstream.a]\nservers = [\"http://x:1\"]\nbalance = \"random\"\n[[route]]\nupstream = \"a\"\n",
                says: "upstream.a: balance: 'random'",
            },
            Case {
                text: "[upstream.a]\nservers = [\"http://x:1\"]\ntimeouts = { connect = \"5\" }\n[[route]]\nupstream = \"a\"\n",
                says: "upstream.a: timeouts.connect:",
            },
            Case {
                text: "[[route]]\nfiles = \".\"\nprefix = \"api\"\n",
                says: "route[0]: prefix: 'api'",
            },
            Case {
                text: "[[route]]\nfiles = \".\"\nrequest_headers = { set = { \"bad name\" = \"v\" } }\n",
                says: "route[0]: request_headers: 'bad name'",
            },
            Case {
                text: "[[route]]\nfiles = \"/no/such/dir\"\n",
                says: "route[0]: files /no/such/dir: no such file",
            },
            Case { text: "[[route]\n", says: "TOML parse error at line 1" },
            Case {
                text: "[[listen]]\naddr = \"x:1\"\ntls_cert = \"c\"\n[[route]]\nfiles = \".\"\n",
                says: "listen[0]: tls_cert and tls_key",
            },
        ];
        for c in cases {
            let err = parse(c.text, Path::new("/"), &args()).map(|_| ()).unwrap_err();
            assert!(err.contains(c.says), "{:?}: {err}", c.text);
        }
    }
}
