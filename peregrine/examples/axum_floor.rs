//! What an axum `Router` costs per request on its own, with no server: the floor under any
//! server's "axum app" figure. Each iteration builds the `http::Request` a server would hand
//! the app (wrk's request: GET, a path, Host), calls the Router (prepared once with
//! `with_state`, as `axum::serve` and `peregrine::tower::service` do), and collects the
//! response's body. Prints the thread CPU time per request.
//!
//! ```text
//! cargo run --release --features axum --example axum_floor -- [/plaintext|/json] [N]
//! ```

// Only the Router is used here, not the servers' argument parsing.
#[allow(dead_code)]
#[path = "shared/axum_router.rs"]
mod axum_router;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use http_body_util::BodyExt;
use tower::Service;

/// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID, read through /proc to stay safe
/// code): utime + stime in clock ticks.
fn thread_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are the 14th and 15th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    field(11) + field(12)
}

/// Polls a future that never waits (the Router's handlers answer at once).
fn run<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "/plaintext".into());
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2_000_000);
    let mut app = axum_router::router().with_state(());
    let tick = 100.0; // CLK_TCK on Linux
    let mut bytes = 0usize;
    let t0 = thread_ticks();
    for _ in 0..n {
        let req = http::Request::get(path.as_str())
            .header(http::header::HOST, "127.0.0.1:8080")
            .body(axum::body::Body::empty())
            .expect("request");
        let res = run(app.call(req)).expect("infallible");
        bytes += run(res.into_body().collect()).expect("body").to_bytes().len();
    }
    let t1 = thread_ticks();
    let us = (t1 - t0) as f64 / tick * 1e6 / n as f64;
    println!(
        "axum Router alone, {path}: {us:.3} µs CPU per request ({n} requests, {bytes} body bytes)"
    );
}
