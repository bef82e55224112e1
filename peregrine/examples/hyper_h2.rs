//! The HTTP/2 benchmark peer (bench/h2.sh): the plaintext test on hyper 1's HTTP/2 server
//! (`hyper::server::conn::http2`, h2c with prior knowledge), one current-thread runtime (one
//! worker), TCP_NODELAY, as `examples/hyper_plaintext.rs` is for HTTP/1.1.
//!
//! ```text
//! cargo run --release --example hyper_h2 -- --addr 127.0.0.1:8082
//! ```

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};

#[path = "shared/hyper_plaintext.rs"]
mod handler;
#[path = "shared/tokio_peer.rs"]
mod tokio_peer;

fn main() -> std::io::Result<()> {
    tokio_peer::run("hyper_h2", "127.0.0.1:8082", |stream| async move {
        // hyper adds the Date header itself (cached once a second). Defaults otherwise: 200
        // concurrent streams, its adaptive window.
        let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .serve_connection(TokioIo::new(stream), service_fn(handler::plaintext))
            .await;
    })
}
