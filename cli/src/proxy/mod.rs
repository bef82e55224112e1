//! `peregrine proxy`: a reverse proxy and load balancer in front of HTTP/1.1 and HTTP/2
//! backends, from flags (`--to`) or a TOML file (`--config`, reloaded on SIGHUP), with the
//! listeners, TLS, limits, logging and operations of `serve`.

mod args;
mod config;

use std::net::ToSocketAddrs;
use std::path::Path;
use std::process::ExitCode;

use peregrine::proxy::Proxy;
use peregrine::server::TlsConfig;

use crate::console;
use crate::frontend::{Frontend, fail};
use crate::io_error::describe;

pub use args::ProxyArgs;
use config::Listener;

/// Runs the proxy until SIGINT or SIGTERM. Start-up failures print one line and exit 2.
pub fn run(args: ProxyArgs) -> ExitCode {
    let (listeners, builder) = match &args.config {
        Some(path) => match config::load(path, &args) {
            Ok(loaded) => (loaded.listeners, loaded.proxy),
            Err(msg) => return fail(format_args!("{msg}")),
        },
        None => match config::from_flags(&args) {
            Ok(builder) => (Vec::new(), builder),
            Err(msg) => return fail(format_args!("{msg}")),
        },
    };
    let from_flags = args.tls.tls_cert.is_some() || args.tls.tls_self_signed;
    if !listeners.is_empty() && from_flags {
        return fail(format_args!(
            "the TLS flags are for --addr; the file's [[listen]] tables set their own tls_cert \
             and tls_key"
        ));
    }
    let listeners = match listen_tls(listeners) {
        Ok(l) => l,
        Err(msg) => return fail(format_args!("{msg}")),
    };
    let mut frontend = match Frontend::start(&args.tls, &args.log, &args.ops) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let first = listeners.first().map_or(args.addr.as_str(), |(l, _)| l.addr.as_str());
    let server =
        frontend.server(first, &args.ops, args.config(), args.workers, args.log.log_format);
    let mut server = match server {
        Ok(server) => server,
        Err(code) => return code,
    };
    for (i, (l, tls)) in listeners.iter().enumerate() {
        server = match (i, tls) {
            (0, Some(tls)) => server.tls(tls.clone()),
            (0, None) => server,
            (_, Some(tls)) => server.and_bind_tls(l.addr.as_str(), tls.clone()),
            (_, None) => server.and_bind(l.addr.as_str()),
        };
    }
    let proxy = builder.build();
    if args.ops.metrics.is_some() {
        let p = proxy.clone();
        server = server.metrics_extra(move || p.metrics());
    }
    let handle = match server.spawn(proxy.clone()) {
        Ok(handle) => handle,
        Err(e) => {
            let addrs: Vec<&str> = listeners.iter().map(|(l, _)| l.addr.as_str()).collect();
            let addrs = if addrs.is_empty() { args.addr.clone() } else { addrs.join(", ") };
            return fail(format_args!("cannot listen on {addrs}: {}", describe(&e)));
        }
    };
    let to = match &args.config {
        Some(path) => format!("the routes of {}", path.display()),
        None => args.to.join(", "),
    };
    for url in urls(&listeners, frontend.scheme(), handle.local_addrs()) {
        console::out(format_args!("Proxying {url} to {to}"));
    }
    frontend.announce(&handle);
    let started = listeners.into_iter().map(|(l, _)| l).collect::<Vec<_>>();
    frontend.run(handle, || {
        if let Some(path) = &args.config {
            reload(path, &args, &proxy, &started);
        }
    })
}

/// SIGHUP: the file again, applied to new requests if it is whole and right; otherwise the
/// configuration in force stays, and stderr says why.
fn reload(path: &Path, args: &ProxyArgs, proxy: &Proxy, started: &[Listener]) {
    match config::load(path, args) {
        Ok(loaded) => {
            proxy.reload(loaded.proxy);
            console::err(format_args!("peregrine: reloaded {}", path.display()));
            if loaded.listeners != started {
                console::err(format_args!(
                    "peregrine: {}: the [[listen]] tables changed; listeners are read at start \
                     only, restart to apply them",
                    path.display()
                ));
            }
        }
        Err(msg) => console::err(format_args!(
            "peregrine: reload failed, keeping the configuration in force: {msg}"
        )),
    }
}

/// Each listener with its TLS configuration read from its files.
fn listen_tls(listeners: Vec<Listener>) -> Result<Vec<(Listener, Option<TlsConfig>)>, String> {
    let mut out: Vec<(Listener, Option<TlsConfig>)> = Vec::with_capacity(listeners.len());
    for l in listeners {
        let tls = match &l.tls {
            Some((cert, key)) => Some(
                TlsConfig::from_pem_files(cert, key)
                    .map_err(|e| format!("listen {}: {e}", l.addr))?,
            ),
            None => None,
        };
        out.push((l, tls));
    }
    // The first listener takes the server's own TLS setting, which then applies to the
    // listeners added without TLS: so plain ones go first.
    out.sort_by_key(|(_, tls)| tls.is_some());
    Ok(out)
}

/// The URL of each bound address: an address given as a name may have bound several.
fn urls(
    listeners: &[(Listener, Option<TlsConfig>)],
    scheme: &str,
    bound: &[std::net::SocketAddr],
) -> Vec<String> {
    let mut schemes = Vec::new();
    for (l, tls) in listeners {
        let n = l.addr.to_socket_addrs().map_or(1, Iterator::count);
        let s = if tls.is_some() { "https" } else { "http" };
        schemes.extend(std::iter::repeat_n(s, n));
    }
    bound
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{}://{a}", schemes.get(i).copied().unwrap_or(scheme)))
        .collect()
}
