//! A WebSocket benchmark peer: the echo server of fastwebsockets (deno's), as its own
//! `examples/echo_server.rs` writes it: hyper's HTTP/1.1 upgrade, a `FragmentCollector`, every
//! text and binary message written back, each connection an `unconstrained` task; one
//! current-thread runtime (one worker) and TCP_NODELAY, like every peer of `bench/ws.sh`.
//!
//! ```text
//! cargo run --release --example ws_fastwebsockets -- --addr 127.0.0.1:9003
//! ```

use bytes::Bytes;
use fastwebsockets::{OpCode, WebSocketError, upgrade};
use http_body_util::Empty;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

async fn echo(fut: upgrade::UpgradeFut) -> Result<(), WebSocketError> {
    let mut ws = fastwebsockets::FragmentCollector::new(fut.await?);
    loop {
        let frame = ws.read_frame().await?;
        match frame.opcode {
            OpCode::Close => break,
            OpCode::Text | OpCode::Binary => ws.write_frame(frame).await?,
            _ => {}
        }
    }
    Ok(())
}

async fn upgrade(mut req: Request<Incoming>) -> Result<Response<Empty<Bytes>>, WebSocketError> {
    let (response, fut) = upgrade::upgrade(&mut req)?;
    tokio::task::spawn(tokio::task::unconstrained(async move {
        let _ = echo(fut).await;
    }));
    Ok(response)
}

#[path = "shared/tokio_peer.rs"]
mod tokio_peer;

fn main() -> std::io::Result<()> {
    tokio_peer::run("ws_fastwebsockets", "127.0.0.1:9003", |stream| async move {
        let conn = http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service_fn(upgrade))
            .with_upgrades();
        let _ = conn.await;
    })
}
