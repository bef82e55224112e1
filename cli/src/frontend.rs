//! What `serve` and `proxy` do alike around their handler: the access log's writer, the
//! signal handlers, the listeners (the sockets systemd passed or `--addr`, TLS, the PROXY
//! protocol, health, metrics, workers), the lines printed at start, and the wait until
//! SIGTERM (a drain, then a second signal stops at once) with SIGHUP reopening the log file
//! and calling the command's own reload.

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use peregrine::server::{Config, ProxyProtocol, TlsConfig, listen_fds};
use peregrine::{Server, ServerHandle};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::console;
use crate::flags::{LogArgs, OpsArgs, TlsArgs};
use crate::io_error::describe;
use crate::log::{self, Format, LogWriter};
use crate::tls;

/// The process around a server; see the [module docs](self).
pub struct Frontend {
    log: Option<LogWriter>,
    quiet: bool,
    signals: tokio::runtime::Runtime,
    waiting: (Signal, Signal, Signal),
    tls: Option<TlsConfig>,
    /// A throw-away certificate's file, removed at exit with its directory.
    generated: Option<PathBuf>,
    activated: bool,
    drain_grace: std::time::Duration,
}

impl Frontend {
    /// Reads the TLS files, starts the log writer and installs the signal handlers (before the
    /// server starts, so a signal is never fatal once the URL is printed; SIGHUP would end the
    /// process by default). A failure is printed and is the exit code.
    pub fn start(tls: &TlsArgs, log: &LogArgs, ops: &OpsArgs) -> Result<Frontend, ExitCode> {
        let (tls, generated) = match tls::tls_config(tls) {
            Ok(Some((tls, cert))) => (Some(tls), cert),
            Ok(None) => (None, None),
            Err(msg) => return Err(fail(format_args!("{msg}"))),
        };
        if !log.quiet {
            tracing_subscriber::fmt()
                .with_writer(io::stderr)
                .with_target(false)
                .with_level(false)
                .init();
        }
        let writer = if log.quiet {
            None
        } else {
            let dest = match &log.access_log {
                Some(path) => log::Dest::File(path.clone()),
                None => log::Dest::Stderr,
            };
            match LogWriter::start(dest) {
                Ok(w) => Some(w),
                Err(e) => {
                    let path = log.access_log.as_deref().unwrap_or(Path::new("-"));
                    return Err(fail(format_args!(
                        "{}: cannot open: {}",
                        path.display(),
                        describe(&e)
                    )));
                }
            }
        };
        let signals = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => return Err(fail(format_args!("cannot start: {e}"))),
        };
        let waiting = {
            let _guard = signals.enter();
            let kinds = [SignalKind::interrupt(), SignalKind::terminate(), SignalKind::hangup()];
            match kinds.map(signal) {
                [Ok(i), Ok(t), Ok(h)] => (i, t, h),
                [Err(e), _, _] | [_, Err(e), _] | [_, _, Err(e)] => {
                    return Err(fail(format_args!("cannot handle signals: {e}")));
                }
            }
        };
        Ok(Frontend {
            log: writer,
            quiet: log.quiet,
            signals,
            waiting,
            tls,
            generated,
            activated: false,
            drain_grace: ops.drain_grace.0,
        })
    }

    /// `https` or `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// The server the shared flags describe, on the sockets systemd passed or `addr`, its
    /// access log lines in `format`.
    pub fn server(
        &mut self,
        addr: &str,
        ops: &OpsArgs,
        config: Config,
        workers: Option<u16>,
        format: Format,
    ) -> Result<Server, ExitCode> {
        // Sockets systemd passed (socket activation) replace --addr.
        let inherited = match listen_fds() {
            Ok(sockets) => sockets,
            Err(e) => return Err(fail(format_args!("socket activation: {}", describe(&e)))),
        };
        self.activated = !inherited.is_empty();
        let mut server = match inherited_server(inherited) {
            Some(server) => server,
            None => Server::bind(addr).reuse_port(ops.reuse_port),
        };
        server = server.config(config);
        if ops.proxy_protocol {
            let trusted = ops.proxy_trust.iter().fold(ProxyProtocol::new(), |p, n| p.trust(*n));
            server = server.proxy_protocol(trusted);
        }
        if let Some(path) = &ops.health {
            server = server.health(path.as_str());
        }
        if let Some(path) = &ops.metrics {
            server = server.metrics(path.as_str());
        }
        if let Some(n) = workers {
            server = server.workers(usize::from(n));
        }
        if let Some(w) = &self.log {
            server = server.access_log(log::logger(format, w));
        }
        if let Some(tls) = &self.tls {
            server = server.tls(tls.clone());
        }
        Ok(server)
    }

    /// Prints what the start line does not say: inherited sockets, a generated certificate.
    pub fn announce(&self, handle: &ServerHandle) {
        if self.activated {
            console::out(format_args!(
                "Listening on the socket(s) systemd passed (socket activation); --addr ignored"
            ));
        }
        if let Some(cert) = &self.generated {
            console::out(format_args!(
                "TLS: throw-away certificate for localhost and 127.0.0.1 in {}; trust it with: \
                 curl --cacert {} https://localhost:{}/",
                cert.display(),
                cert.display(),
                handle.local_addr().port()
            ));
        }
    }

    /// Waits for SIGINT or SIGTERM, drains, and waits for the server to stop (a second signal
    /// stops it at once). SIGHUP reopens the access log file and calls `reload`.
    pub fn run(self, handle: ServerHandle, mut reload: impl FnMut()) -> ExitCode {
        let Frontend { log, quiet, signals, waiting, generated, drain_grace, .. } = self;
        let (mut interrupt, mut terminate, mut hangup) = waiting;
        let mut hup = || {
            if let Some(w) = &log {
                w.reopen();
            }
            reload();
        };
        signals.block_on(async {
            loop {
                tokio::select! {
                    _ = interrupt.recv() => break,
                    _ = terminate.recv() => break,
                    _ = hangup.recv() => hup(),
                }
            }
            if !quiet {
                console::err(format_args!(
                    "peregrine: draining: accepting for {drain_grace:?} more, then letting \
                     requests in flight finish (signal again to stop at once)"
                ));
            }
            handle.shutdown();
            loop {
                tokio::select! {
                    _ = interrupt.recv() => break handle.shutdown_now(),
                    _ = terminate.recv() => break handle.shutdown_now(),
                    _ = hangup.recv() => hup(),
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
}

/// A server accepting on inherited sockets, if there are any.
fn inherited_server(sockets: Vec<std::net::TcpListener>) -> Option<Server> {
    let mut sockets = sockets.into_iter();
    let first = Server::from_listener(sockets.next()?);
    Some(sockets.fold(first, Server::and_listener))
}

/// Prints `peregrine: MSG` and gives the exit code of a start-up failure (2).
pub fn fail(msg: std::fmt::Arguments<'_>) -> ExitCode {
    console::err(format_args!("peregrine: {msg}"));
    ExitCode::from(2)
}
