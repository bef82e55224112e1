//! The benchmark peer: the plaintext test written on may-minihttp (stackful coroutines on
//! `may`), the way its TechEmpower entry is, but on one worker thread.
//!
//! ```text
//! cargo run --release --example may_minihttp_plaintext -- --addr 127.0.0.1:8082
//! ```
//!
//! `may` runs one event-loop thread per worker (it accepts, reads, parses, answers and writes
//! there) plus a timer thread that sleeps unless a coroutine waits on a timeout; the main thread
//! only waits for the server to end. With `set_workers(1)` all the request work is on one OS
//! thread, as for the other peers of `bench/servers.sh`.
//!
//! Its response differs from `examples/plaintext.rs` and `hyper_plaintext.rs` only where
//! may-minihttp fixes the bytes: the status line is `HTTP/1.1 200 Ok`, the Server header is
//! `M`, and the headers come in the order Server, Date, Content-Length, Content-Type. It does
//! not set TCP_NODELAY (it writes every response a read produced in one write, like its
//! TechEmpower entry).

use std::io;

use may_minihttp::{HttpService, HttpServiceFactory, Request, Response};

/// One service per connection; it holds nothing.
struct Plaintext;

impl HttpService for Plaintext {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        // may-minihttp writes Server, Date and Content-Length itself.
        if req.path() == "/plaintext" {
            rsp.header("Content-Type: text/plain").body("Hello, World!");
        } else {
            rsp.status_code(404, "Not Found");
        }
        Ok(())
    }
}

/// Makes the per-connection service.
struct Factory;

impl HttpServiceFactory for Factory {
    type Service = Plaintext;

    fn new_service(&self, _id: usize) -> Plaintext {
        Plaintext
    }
}

fn main() -> io::Result<()> {
    let mut addr = String::from("127.0.0.1:8082");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            other => {
                eprintln!("usage: may_minihttp_plaintext [--addr HOST:PORT] (unknown: {other})");
                std::process::exit(2);
            }
        }
    }
    // One worker: one event-loop thread does the accepts and all connection I/O. It pins
    // itself to the first CPU of the process's affinity mask (CPU 0 under `taskset -c 0`).
    may::config().set_workers(1);
    let server = Factory.start(addr.as_str())?;
    eprintln!("may_minihttp_plaintext: listening on {addr}");
    server.join().map_err(|_| io::Error::other("the server coroutine panicked"))
}
