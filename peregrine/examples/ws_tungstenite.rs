//! A WebSocket benchmark peer: an echo server on tokio-tungstenite, the most used Rust
//! WebSocket library, written as its `examples/echo-server.rs` is (`accept_async`, the stream
//! split, its text and binary messages forwarded to the sink, which flushes when no more are
//! ready); one current-thread runtime (one worker) and TCP_NODELAY, like every peer of
//! `bench/ws.sh`.
//!
//! ```text
//! cargo run --release --example ws_tungstenite -- --addr 127.0.0.1:9005
//! ```

use futures_util::{StreamExt, TryStreamExt, future};

#[path = "shared/tokio_peer.rs"]
mod tokio_peer;

fn main() -> std::io::Result<()> {
    tokio_peer::run("ws_tungstenite", "127.0.0.1:9005", |stream| async move {
        let Ok(ws) = tokio_tungstenite::accept_async(stream).await else { return };
        let (write, read) = ws.split();
        let _ = read
            .try_filter(|msg| future::ready(msg.is_text() || msg.is_binary()))
            .forward(write)
            .await;
    })
}
