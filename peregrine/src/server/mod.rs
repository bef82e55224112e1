//! The HTTP/1.1 server: a builder, worker threads, and a handle to stop them.
//!
//! - `runtime`: thread per core, one current-thread tokio runtime and one `SO_REUSEPORT`
//!   listener per worker, accept loop with back-off and the global connection limit.
//! - `conn`: one connection: read, parse, dispatch, encode, write; keep-alive and pipelining.
//! - `incoming`: request bodies read on demand by the handler.
//! - [`Config`]: every limit and timeout, with its default.
//!
//! # Examples
//! ```no_run
//! use peregrine::{Request, Server};
//!
//! fn main() -> std::io::Result<()> {
//!     Server::bind("127.0.0.1:8080")
//!         .workers(2)
//!         .run(|_req: Request| async { "Hello, World!" })
//! }
//! ```

mod buffers;
mod conn;
pub(crate) mod incoming;
mod limits;
mod runtime;
#[cfg(target_os = "linux")]
mod sendfile;
mod shutdown;
mod slots;
mod worker;

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::thread::JoinHandle;
use std::time::Duration;

pub use limits::Config;

use crate::handler::Handler;
use shutdown::ShutdownSignal;

/// Builds and starts a server.
///
/// Binds every address once per worker with `SO_REUSEPORT`; each worker is one thread with a
/// current-thread tokio runtime. [`Server::run`] blocks until SIGINT or SIGTERM;
/// [`Server::spawn`] returns a [`ServerHandle`].
#[derive(Debug)]
pub struct Server {
    addrs: Vec<SocketAddr>,
    bind_error: Option<io::Error>,
    workers: usize,
    config: Config,
}

impl Server {
    /// A server that will listen on `addr` (resolved now; an error surfaces when starting).
    pub fn bind(addr: impl ToSocketAddrs) -> Server {
        let server = Server {
            addrs: Vec::new(),
            bind_error: None,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            config: Config::default(),
        };
        server.and_bind(addr)
    }

    /// Also listens on `addr`.
    pub fn and_bind(mut self, addr: impl ToSocketAddrs) -> Server {
        match addr.to_socket_addrs() {
            Ok(addrs) => self.addrs.extend(addrs),
            Err(e) => self.bind_error = Some(e),
        }
        self
    }

    /// Number of worker threads. Default: `std::thread::available_parallelism()`.
    pub fn workers(mut self, n: usize) -> Server {
        self.workers = n.max(1);
        self
    }

    /// Replaces every limit and timeout.
    pub fn config(mut self, config: Config) -> Server {
        self.config = config;
        self
    }

    /// Connections open at once over all workers; see [`Config::max_connections`].
    pub fn max_connections(mut self, n: usize) -> Server {
        self.config.max_connections = n;
        self
    }

    /// See [`Config::header_read_timeout`].
    pub fn header_read_timeout(mut self, t: Duration) -> Server {
        self.config.header_read_timeout = t;
        self
    }

    /// See [`Config::keep_alive_timeout`].
    pub fn keep_alive_timeout(mut self, t: Duration) -> Server {
        self.config.keep_alive_timeout = t;
        self
    }

    /// See [`Config::shutdown_timeout`].
    pub fn shutdown_timeout(mut self, t: Duration) -> Server {
        self.config.shutdown_timeout = t;
        self
    }

    /// Binds the listeners and starts the workers, returning at once.
    ///
    /// # Errors
    /// Address resolution, bind or runtime creation failures.
    pub fn spawn<H: Handler>(self, handler: H) -> io::Result<ServerHandle> {
        if let Some(e) = self.bind_error {
            return Err(e);
        }
        if self.addrs.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no address to bind"));
        }
        let (listeners, addrs) = runtime::bind_all(&self.addrs, self.workers)?;
        let shutdown = Arc::new(ShutdownSignal::default());
        let open = Arc::new(AtomicUsize::new(0));
        let mut threads = Vec::with_capacity(listeners.len());
        for (index, listeners) in listeners.into_iter().enumerate() {
            let spawned = runtime::spawn_worker(
                index,
                listeners,
                handler.clone(),
                self.config,
                open.clone(),
                shutdown.clone(),
            );
            match spawned {
                Ok(thread) => threads.push(thread),
                Err(e) => {
                    shutdown.trigger();
                    return Err(e);
                }
            }
        }
        Ok(ServerHandle { addrs, shutdown, threads })
    }

    /// Starts the server and blocks until SIGINT or SIGTERM, then shuts down gracefully.
    ///
    /// # Errors
    /// As [`Server::spawn`], or when the signal handlers cannot be installed.
    pub fn run<H: Handler>(self, handler: H) -> io::Result<()> {
        let handle = self.spawn(handler)?;
        let signals = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        signals.block_on(async {
            use tokio::signal::unix::{SignalKind, signal};
            let mut interrupt = signal(SignalKind::interrupt())?;
            let mut terminate = signal(SignalKind::terminate())?;
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
                () = handle.shutdown.wait() => {}
            }
            io::Result::Ok(())
        })?;
        handle.shutdown();
        handle.join()
    }
}

/// A running server: its addresses, and the way to stop it.
///
/// Dropping the handle starts a graceful shutdown without waiting for it.
#[derive(Debug)]
pub struct ServerHandle {
    addrs: Vec<SocketAddr>,
    shutdown: Arc<ShutdownSignal>,
    threads: Vec<JoinHandle<()>>,
}

impl ServerHandle {
    /// The first bound address (with the port the kernel chose, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Every bound address, in the order given to the builder.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Starts a graceful shutdown: stop accepting, close idle connections, let in-flight
    /// requests finish within [`Config::shutdown_timeout`] (their responses carry
    /// `Connection: close`). Returns at once.
    pub fn shutdown(&self) {
        self.shutdown.trigger();
    }

    /// Waits until every worker has stopped (after [`ServerHandle::shutdown`]).
    ///
    /// # Errors
    /// When a worker thread panicked.
    pub fn join(mut self) -> io::Result<()> {
        let mut result = Ok(());
        for thread in self.threads.drain(..) {
            if thread.join().is_err() {
                result = Err(io::Error::other("a worker thread panicked"));
            }
        }
        result
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.shutdown.trigger();
        }
    }
}
