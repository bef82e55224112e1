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

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:9004");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            other => {
                eprintln!("usage: ws_tokio_websockets [--addr HOST:PORT] (unknown: {other})");
                std::process::exit(2);
            }
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
        eprintln!("ws_tokio_websockets: listening on {addr}");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(tokio::task::unconstrained(async move {
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
            }));
        }
    })
}
