//! A WebSocket benchmark peer: the echo server of tokio-websockets, as its own
//! `examples/echo_server.rs` writes it (`ServerBuilder::accept`, a `Stream` of messages, every
//! text and binary message sent back through its `Sink`, each connection an `unconstrained`
//! task, frames unlimited in size); one current-thread runtime (one worker) and TCP_NODELAY,
//! like every peer of `bench/ws.sh`.
//!
//! ```text
//! cargo run --release --example ws_tokio_websockets -- --addr 127.0.0.1:9004
//! ```

use futures_util::{SinkExt, StreamExt};
use tokio_websockets::{Config, Limits, ServerBuilder};

#[path = "shared/tokio_peer.rs"]
mod tokio_peer;

fn main() -> std::io::Result<()> {
    tokio_peer::run("ws_tokio_websockets", "127.0.0.1:9004", |stream| {
        tokio::task::unconstrained(async move {
            let accepted = ServerBuilder::new()
                .config(Config::default().frame_size(usize::MAX))
                .limits(Limits::unlimited())
                .accept(stream)
                .await;
            let Ok((_request, mut ws)) = accepted else { return };
            while let Some(Ok(msg)) = ws.next().await {
                if (msg.is_text() || msg.is_binary()) && ws.send(msg).await.is_err() {
                    break;
                }
            }
        })
    })
}
