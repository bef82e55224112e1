//! The benchmark peer: the plaintext test written on hyper 1, tuned the way hyper's own
//! benchmarks are: one current-thread runtime (one worker), TCP_NODELAY, `pipeline_flush`.
//!
//! ```text
//! cargo run --release --example hyper_plaintext -- --addr 127.0.0.1:8081
//! ```

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

#[path = "shared/hyper_plaintext.rs"]
mod handler;
#[path = "shared/tokio_peer.rs"]
mod tokio_peer;

fn main() -> std::io::Result<()> {
    tokio_peer::run("hyper_plaintext", "127.0.0.1:8081", |stream| async move {
        // hyper adds the Date header itself (cached once a second).
        let _ = hyper::server::conn::http1::Builder::new()
            .pipeline_flush(true)
            .serve_connection(TokioIo::new(stream), service_fn(handler::plaintext))
            .await;
    })
}
