//! The benchmark peer of `axum_app`: the same axum `Router` under `axum::serve` (hyper), on a
//! current-thread tokio runtime: one worker thread. With `--workers N` above 1, a
//! multi-threaded runtime of N workers instead.
//!
//! ```text
//! cargo run --release --features axum --example axum_serve -- --addr 127.0.0.1:8081 [--workers N]
//! ```

#[path = "shared/axum_router.rs"]
mod axum_router;

fn main() -> std::io::Result<()> {
    let (addr, workers) = axum_router::args("axum_serve");
    let rt = match workers.unwrap_or(1) {
        1 => tokio::runtime::Builder::new_current_thread().enable_all().build()?,
        n => tokio::runtime::Builder::new_multi_thread().worker_threads(n).enable_all().build()?,
    };
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
        eprintln!("axum_serve: listening on {addr}");
        axum::serve(listener, axum_router::router()).await
    })
}
