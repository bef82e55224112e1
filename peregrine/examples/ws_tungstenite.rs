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

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:9005");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            other => {
                eprintln!("usage: ws_tungstenite [--addr HOST:PORT] (unknown: {other})");
                std::process::exit(2);
            }
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
        eprintln!("ws_tungstenite: listening on {addr}");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let Ok(ws) = tokio_tungstenite::accept_async(stream).await else { return };
                let (write, read) = ws.split();
                let _ = read
                    .try_filter(|msg| future::ready(msg.is_text() || msg.is_binary()))
                    .forward(write)
                    .await;
            });
        }
    })
}
