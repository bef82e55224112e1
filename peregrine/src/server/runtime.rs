//! Thread per core: each worker is one OS thread running a current-thread tokio runtime with its
//! own `SO_REUSEPORT` listener, so the kernel spreads connections over workers and nothing is
//! shared between them on the request path but the connection counter.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::task::LocalSet;

use super::access_log::AccessLog;
use super::config::Config;
use super::conn;
use super::connections::Connections;
use super::metrics::WorkerMetrics;
use super::ops::Ops;
use super::proxy::ProxyProtocol;
use super::service::Service;
use super::shutdown::ShutdownSignal;
use super::worker::{Admitted, Load, Worker};
use crate::handler::Handler;
use crate::net::accept::{self, Listener};
use crate::net::listen;

/// Binds `workers` listeners for each address. A port 0 address is bound once to let the kernel
/// pick a port, then every other listener binds that port. `reuse_port`: join the group of a
/// port another process listens on (see `Server::reuse_port`) rather than refusing it.
pub(crate) fn bind_all(
    addrs: &[SocketAddr],
    workers: usize,
    reuse_port: bool,
) -> io::Result<(Vec<Vec<TcpListener>>, Vec<SocketAddr>)> {
    let mut per_worker: Vec<Vec<TcpListener>> = (0..workers).map(|_| Vec::new()).collect();
    let mut bound = Vec::with_capacity(addrs.len());
    for &addr in addrs {
        // A port another server listens on is refused, not shared, unless asked. Port 0 needs
        // no check: the kernel picks a free one.
        if addr.port() != 0 && !reuse_port {
            listen::check_unused(addr)?;
        }
        let (first, local) = listen::bind_reuse_port(addr)?;
        bound.push(local);
        per_worker[0].push(first);
        for listeners in per_worker.iter_mut().skip(1) {
            listeners.push(listen::bind_reuse_port(local)?.0);
        }
    }
    Ok((per_worker, bound))
}

/// Gives every worker a handle on one listening socket made elsewhere (inherited from systemd):
/// they all accept from it. Returns its address.
pub(crate) fn share_listener(
    listener: TcpListener,
    per_worker: &mut [Vec<TcpListener>],
) -> io::Result<SocketAddr> {
    let (handles, local) = listen::share(listener, per_worker.len())?;
    for (listeners, handle) in per_worker.iter_mut().zip(handles) {
        listeners.push(handle);
    }
    Ok(local)
}

/// A listener's TLS configuration, or `None` for plain TCP.
pub(crate) type Tls = Option<Arc<rustls::ServerConfig>>;

/// What every worker shares: settings, the access log, the connection count, the shutdown.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) access_log: Option<AccessLog>,
    pub(crate) load: Arc<Load>,
    pub(crate) shutdown: Arc<ShutdownSignal>,
    pub(crate) proxy: Option<Arc<ProxyProtocol>>,
    pub(crate) ops: Option<Arc<Ops>>,
    /// This worker's counters, when metrics are on.
    pub(crate) metrics: Option<Arc<WorkerMetrics>>,
    /// The UDP sockets and QUIC configurations this worker serves HTTP/3 on.
    #[cfg(feature = "http3")]
    pub(crate) quic: Vec<(std::net::UdpSocket, quinn::ServerConfig)>,
}

/// Starts one worker thread serving `listeners` until `shutdown` triggers, its grace period
/// (`config.drain_grace`) passes and its connections finish (or `config.shutdown_timeout`
/// passes), or until a forced end.
pub(crate) fn spawn_worker<H: Handler>(
    index: usize,
    listeners: Vec<(TcpListener, Tls)>,
    handler: H,
    shared: Shared,
) -> io::Result<std::thread::JoinHandle<()>> {
    #[cfg(feature = "http3")]
    let quic = shared.quic;
    let Shared { config, access_log, load, shutdown, proxy, ops, metrics, .. } = shared;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let running = shutdown.worker_started();
    std::thread::Builder::new().name(format!("peregrine-{index}")).spawn(move || {
        let _running = running;
        let mut worker = Worker::new(config, access_log, index, load);
        worker.proxy = proxy;
        worker.ops = ops;
        worker.metrics = metrics;
        worker.shutdown = Some(shutdown.clone());
        let worker = Rc::new(worker);
        let handler = Rc::new(Service::new(handler));
        let local = LocalSet::new();
        local.block_on(&runtime, async move {
            // Every connection of the worker is polled by this one task (`connections.rs`).
            let connections = Rc::new(Connections::new());
            tokio::task::spawn_local(connections.clone().run());
            for (listener, tls) in listeners {
                match Listener::register(listener) {
                    Ok(listener) => {
                        tokio::task::spawn_local(accept_loop(
                            listener,
                            tls,
                            handler.clone(),
                            worker.clone(),
                            connections.clone(),
                        ));
                    }
                    Err(e) => tracing::error!("peregrine: cannot register listener: {e}"),
                }
            }
            #[cfg(feature = "http3")]
            for (socket, config) in quic {
                match crate::net::quic::endpoint(socket, config) {
                    Ok(endpoint) => {
                        let serve =
                            super::h3::accept_loop(endpoint, handler.clone(), worker.clone());
                        tokio::task::spawn_local(serve);
                    }
                    Err(e) => tracing::error!("peregrine: cannot start QUIC: {e}"),
                }
            }
            let evictions = tokio::task::spawn_local({
                let worker = worker.clone();
                async move { worker.serve_evictions().await }
            });
            shutdown.wait().await;
            worker.begin_drain();
            // The grace period: still accepting, answering with `Connection: close`, while the
            // load balancer sees the health endpoint fail and stops sending.
            tokio::select! {
                () = tokio::time::sleep(worker.config.drain_grace) => {}
                () = shutdown.force.wait() => return,
            }
            evictions.abort();
            worker.stop_accepting();
            // In-flight requests finish; connections close as they become idle.
            tokio::select! {
                _ = tokio::time::timeout(worker.config.shutdown_timeout, worker.all_closed()) => {}
                () = shutdown.force.wait() => {}
            }
        });
        // Dropping the LocalSet and the runtime drops any connection still open past the
        // deadline, closing its socket.
    })
}

/// How long to pause accepting after an error that more accepting cannot fix right away.
fn accept_backoff(e: &io::Error) -> Option<Duration> {
    match e.raw_os_error() {
        // Out of descriptors or memory: accepting again at once would spin. Connections that
        // close free descriptors; the pending ones wait in the backlog meanwhile.
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => {
            Some(Duration::from_millis(50))
        }
        // The peer went away between SYN and accept, or a signal: just go on.
        Some(libc::ECONNABORTED | libc::EINTR | libc::EPROTO | libc::ECONNRESET | libc::EPERM) => {
            None
        }
        _ => Some(Duration::from_millis(10)),
    }
}

/// The answer to a connection over the global limit when every connection is busy
/// (RFC 9110 §15.6.4).
const REFUSED: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";

async fn accept_loop<H: Handler>(
    listener: Listener,
    tls: Tls,
    handler: Rc<Service<H>>,
    worker: Rc<Worker>,
    connections: Rc<Connections<H>>,
) {
    let start = |stream: TcpStream, peer: SocketAddr| {
        if !worker.admit() {
            // Answered without reading and closed: best effort, never waits.
            accept::refuse(stream, REFUSED);
            return;
        }
        accept::set_up(&stream);
        let admitted = Admitted::new(worker.clone());
        conn::start(stream, peer, tls.clone(), &handler, admitted, &connections);
    };
    loop {
        let accepted = tokio::select! {
            biased;
            () = worker.stopped() => {
                // The connections already in the backlog are served (their requests answered
                // with `Connection: close`, HTTP/2's refused by GOAWAY), not reset.
                for (stream, peer) in listener.close() {
                    start(stream, peer);
                }
                return;
            }
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => start(stream, peer),
            Err(e) => {
                if let Some(pause) = accept_backoff(&e) {
                    tracing::warn!("peregrine: accept failed ({e}); pausing {pause:?}");
                    tokio::select! {
                        () = worker.stopped() => return,
                        () = tokio::time::sleep(pause) => {}
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_backoff_by_errno() {
        struct Case {
            errno: i32,
            expect: bool,
        }
        let cases = [
            Case { errno: libc::EMFILE, expect: true },
            Case { errno: libc::ENFILE, expect: true },
            Case { errno: libc::ECONNABORTED, expect: false },
            Case { errno: libc::EINTR, expect: false },
            Case { errno: libc::EINVAL, expect: true },
        ];
        for case in cases {
            let e = io::Error::from_raw_os_error(case.errno);
            assert_eq!(accept_backoff(&e).is_some(), case.expect, "errno {}", case.errno);
        }
    }

    #[test]
    fn port_zero_binds_every_worker_to_one_port() {
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let (listeners, bound) = bind_all(&[addr], 3, false).unwrap();
        assert_eq!(listeners.len(), 3);
        assert_ne!(bound[0].port(), 0);
        for l in listeners.iter().flatten() {
            assert_eq!(l.local_addr().unwrap(), bound[0]);
        }
    }
}
