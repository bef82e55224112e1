//! An unmodified axum app served by peregrine: `GET /plaintext` answers `Hello, World!` as
//! text/plain, `GET /json` answers `{"message":"Hello, World!"}` as application/json (serialised
//! by `axum::Json` per request). Its peer under `axum::serve` is `axum_serve`.
//!
//! ```text
//! cargo run --release --features axum --example axum_app -- --addr 127.0.0.1:8080 [--workers N]
//! ```

#[path = "shared/axum_router.rs"]
mod axum_router;

use peregrine::Server;

fn main() -> std::io::Result<()> {
    let (addr, workers) = axum_router::args("axum_app");
    let mut server = Server::bind(addr.as_str());
    if let Some(n) = workers {
        server = server.workers(n);
    }
    eprintln!("axum_app: listening on {addr}");
    server.run(peregrine::tower::service(axum_router::router()))
}
