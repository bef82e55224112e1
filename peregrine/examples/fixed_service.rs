//! A server with a fixed service time, for checking a load generator's latency figures
//! (`peregrine load --rate`, BENCHMARKS.md): every request spins the worker's thread for
//! `--service-us` microseconds, then answers `Hello, World!`.
//!
//! ```text
//! cargo run --release --example fixed_service -- --addr 127.0.0.1:8080 --service-us 1000
//! ```
//!
//! Why a spin and not `tokio::time::sleep`: tokio's timer wheel ticks in whole milliseconds and
//! rounds a deadline up to the next tick, so a 1 ms sleep takes 1–2 ms (and more under load),
//! which would blur the very figure under test. `std::thread::sleep` overshoots by the kernel's
//! timer slack (50 µs by default) plus the wake-up. Spinning on the clock holds the service
//! time to within a few microseconds and, with one worker, makes the server a single queue
//! whose capacity is exactly 1 ÷ (service time + per-request overhead).

use std::time::{Duration, Instant};

use http::header::{CONTENT_TYPE, HeaderValue};
use peregrine::{Body, Request, Response, Server};

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:8080");
    let mut service_us: u64 = 1000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            "--service-us" => {
                service_us = args.next().and_then(|n| n.parse().ok()).expect("--service-us N")
            }
            other => {
                eprintln!(
                    "usage: fixed_service [--addr HOST:PORT] [--service-us N] (unknown: {other})"
                );
                std::process::exit(2);
            }
        }
    }
    let service = Duration::from_micros(service_us);
    eprintln!("fixed_service: listening on {addr}, {service_us} µs per request, one worker");
    Server::bind(addr.as_str()).workers(1).run(move |_req: Request| async move {
        let start = Instant::now();
        while start.elapsed() < service {
            std::hint::spin_loop();
        }
        Response::new(Body::from_static(b"Hello, World!"))
            .with_header(CONTENT_TYPE, HeaderValue::from_static("text/plain"))
    })
}
