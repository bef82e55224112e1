//! The axum app of `axum_app` (served by peregrine) and `axum_serve` (served by
//! `axum::serve`): one file, so the two serve the same `Router`.

use axum::Json;
use axum::Router;
use axum::http::header::{CONTENT_TYPE, HeaderValue};
use axum::routing::get;
use serde::Serialize;

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

/// `GET /plaintext`: `Hello, World!` as text/plain; `GET /json`: `{"message":"Hello, World!"}`
/// as application/json, serialised per request.
pub fn router() -> Router {
    Router::new()
        .route(
            "/plaintext",
            get(|| async {
                ([(CONTENT_TYPE, HeaderValue::from_static("text/plain"))], "Hello, World!")
            }),
        )
        .route("/json", get(|| async { Json(Message { message: "Hello, World!" }) }))
}

/// `--addr HOST:PORT` and `--workers N` from the command line.
pub fn args(name: &str) -> (String, Option<usize>) {
    let mut addr = String::from("127.0.0.1:8080");
    let mut workers = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            "--workers" => {
                workers = Some(args.next().and_then(|n| n.parse().ok()).expect("--workers N"))
            }
            other => {
                eprintln!("usage: {name} [--addr HOST:PORT] [--workers N] (unknown: {other})");
                std::process::exit(2);
            }
        }
    }
    (addr, workers)
}
