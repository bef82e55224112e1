//! `peregrine serve`: a directory over HTTP/1.1 and HTTP/2, plain or HTTPS, with an access
//! log.

mod args;
mod log;
mod site;
mod tls;

use std::io;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use peregrine::Server;
use peregrine::files::ServeDir;
use peregrine::server::{ProxyProtocol, listen_fds};

use crate::console;

pub use args::ServeArgs;

/// Runs the server until SIGINT or SIGTERM. Start-up failures print one line and exit 2.
pub fn run(args: ServeArgs) -> ExitCode {
    let files = match ServeDir::new(&args.dir) {
        Ok(files) => files,
        Err(e) => {
            return fail(format_args!("cannot serve {}: {}", args.dir.display(), describe(&e)));
        }
    };
    let files = files
        .listing(!args.no_listing)
        .cache_control(args.cache_control.clone())
        .cache_ttl(Some(Duration::from_millis(args.file_cache_ms)))
        .spa(args.spa)
        .compression(args.compression());
    let files = match site::configure(files, &args) {
        Ok(files) => files,
        Err(msg) => return fail(format_args!("{msg}")),
    };
    let root = files.root().to_owned();
    let tls = match tls::tls_config(&args.tls) {
        Ok(tls) => tls,
        Err(msg) => return fail(format_args!("{msg}")),
    };
    if !args.log.quiet {
        tracing_subscriber::fmt()
            .with_writer(io::stderr)
            .with_target(false)
            .with_level(false)
            .init();
    }
    let log = if args.log.quiet {
        None
    } else {
        let dest = match &args.log.access_log {
            Some(path) => log::Dest::File(path.clone()),
            None => log::Dest::Stderr,
        };
        match log::LogWriter::start(dest) {
            Ok(w) => Some(w),
            Err(e) => {
                let path = args.log.access_log.as_deref().unwrap_or(Path::new("-"));
                return fail(format_args!("{}: cannot open: {}", path.display(), describe(&e)));
            }
        }
    };

    // Signal handlers go in before the server starts, so a signal is never fatal once the
    // URL is printed. SIGHUP (which would end the process by default) reopens the log file.
    let signals = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(format_args!("cannot start: {e}")),
    };
    let waiting = {
        let _guard = signals.enter();
        use tokio::signal::unix::{SignalKind, signal};
        let kinds = [SignalKind::interrupt(), SignalKind::terminate(), SignalKind::hangup()];
        match kinds.map(signal) {
            [Ok(i), Ok(t), Ok(h)] => (i, t, h),
            [Err(e), _, _] | [_, Err(e), _] | [_, _, Err(e)] => {
                return fail(format_args!("cannot handle signals: {e}"));
            }
        }
    };

    // Sockets systemd passed (socket activation) replace --addr.
    let inherited = match listen_fds() {
        Ok(sockets) => sockets,
        Err(e) => return fail(format_args!("socket activation: {}", describe(&e))),
    };
    let activated = !inherited.is_empty();
    let mut server = match inherited_server(inherited) {
        Some(server) => server,
        None => Server::bind(args.addr.as_str()).reuse_port(args.ops.reuse_port),
    };
    server = server.config(args.config());
    if args.ops.proxy_protocol {
        let trusted = args.ops.proxy_trust.iter().fold(ProxyProtocol::new(), |p, n| p.trust(*n));
        server = server.proxy_protocol(trusted);
    }
    if let Some(path) = &args.ops.health {
        server = server.health(path.as_str());
    }
    if let Some(path) = &args.ops.metrics {
        server = server.metrics(path.as_str());
    }
    if let Some(n) = args.workers {
        server = server.workers(usize::from(n));
    }
    if let Some(w) = &log {
        server = server.access_log(log::logger(args.log.log_format, w));
    }
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut generated = None;
    if let Some((tls, cert)) = tls {
        server = server.tls(tls);
        generated = cert;
    }
    let handle = match server.spawn(files) {
        Ok(handle) => handle,
        Err(e) => return fail(format_args!("cannot listen on {}: {}", args.addr, describe(&e))),
    };
    let addr = handle.local_addr();
    console::out(format_args!("Serving {} on {scheme}://{addr}", root.display()));
    if activated {
        console::out(format_args!(
            "Listening on the socket(s) systemd passed (socket activation); --addr ignored"
        ));
    }
    if let Some(cert) = &generated {
        console::out(format_args!(
            "TLS: throw-away certificate for localhost and 127.0.0.1 in {}; trust it with: \
             curl --cacert {} https://localhost:{}/",
            cert.display(),
            cert.display(),
            addr.port()
        ));
    }

    let (mut interrupt, mut terminate, mut hangup) = waiting;
    let reopen = || {
        if let Some(w) = &log {
            w.reopen();
        }
    };
    signals.block_on(async {
        loop {
            tokio::select! {
                _ = interrupt.recv() => break,
                _ = terminate.recv() => break,
                _ = hangup.recv() => reopen(),
            }
        }
        if !args.log.quiet {
            console::err(format_args!(
                "peregrine: draining: accepting for {:?} more, then letting requests in flight \
                 finish (signal again to stop at once)",
                args.ops.drain_grace.0
            ));
        }
        handle.shutdown();
        loop {
            tokio::select! {
                _ = interrupt.recv() => break handle.shutdown_now(),
                _ = terminate.recv() => break handle.shutdown_now(),
                _ = hangup.recv() => reopen(),
                () = handle.stopped() => break,
            }
        }
    });
    let joined = handle.join();
    if let Some(w) = log {
        w.finish();
    }
    if let Some(dir) = generated.as_deref().and_then(Path::parent) {
        // Throw-away: the certificate and key go with the server.
        let _ = std::fs::remove_dir_all(dir);
    }
    match joined {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            console::err(format_args!("peregrine: {e}"));
            ExitCode::FAILURE
        }
    }
}

/// A server accepting on inherited sockets, if there are any.
fn inherited_server(sockets: Vec<std::net::TcpListener>) -> Option<Server> {
    let mut sockets = sockets.into_iter();
    let first = Server::from_listener(sockets.next()?);
    Some(sockets.fold(first, Server::and_listener))
}

fn fail(msg: std::fmt::Arguments<'_>) -> ExitCode {
    console::err(format_args!("peregrine: {msg}"));
    ExitCode::from(2)
}

/// An error in words, without the "(os error N)" suffix.
pub(super) fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        io::ErrorKind::NotADirectory => "not a directory".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        io::ErrorKind::AddrInUse => "address already in use".to_owned(),
        io::ErrorKind::AddrNotAvailable => "address not available on this machine".to_owned(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(i) => text[..i].to_owned(),
                None => text,
            }
        }
    }
}
