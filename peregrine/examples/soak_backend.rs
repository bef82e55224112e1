//! The soak's backend (bench/soak.sh), behind `peregrine proxy`: `POST /soak/echo` sends its
//! body back, `/soak/ws` is a WebSocket echo, and `/soak/panic` panics in its handler, so the
//! server answers 500 while the connection's worker lives on. One worker by default, so the
//! requests after a panic run on the worker that panicked.
//!
//! ```text
//! cargo run --release --example soak_backend -- --addr 127.0.0.1:18602 [--workers N]
//! ```

use http::StatusCode;
use peregrine::websocket::{Message, WebSocketUpgrade};
use peregrine::{IntoResponse, Request, Response, Server};

/// Larger than any upload the soak's good clients send (its abandoned uploads announce 1 MiB).
const MAX_ECHO: usize = 4 << 20;

async fn handle(mut req: Request) -> Response {
    match req.path() {
        "/soak/echo" => match req.take_body().to_bytes(MAX_ECHO).await {
            Ok(body) => Response::new(body),
            Err(e) => Response::with_status(StatusCode::BAD_REQUEST, e.to_string()),
        },
        "/soak/panic" => panic!("soak: the marked path panics on purpose"),
        "/soak/ws" => match WebSocketUpgrade::from_request(&mut req) {
            Ok(upgrade) => upgrade.on_upgrade(|mut ws| async move {
                while let Some(Ok(msg)) = ws.recv().await {
                    if matches!(msg, Message::Text(_) | Message::Binary(_))
                        && ws.send(msg).await.is_err()
                    {
                        break;
                    }
                }
            }),
            Err(refused) => refused.into_response(),
        },
        _ => Response::with_status(StatusCode::NOT_FOUND, "not found"),
    }
}

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:18602");
    let mut workers = 1;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            "--workers" => workers = args.next().and_then(|n| n.parse().ok()).expect("--workers N"),
            other => {
                eprintln!(
                    "usage: soak_backend [--addr HOST:PORT] [--workers N] (unknown: {other})"
                );
                std::process::exit(2);
            }
        }
    }
    // The panics are the point: one short line each instead of the default hook's message.
    std::panic::set_hook(Box::new(|info| eprintln!("soak_backend: handler panicked: {info}")));
    Server::bind(addr.as_str()).workers(workers).run(handle)
}
