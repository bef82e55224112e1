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

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:9003");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            other => {
                eprintln!("usage: ws_fastwebsockets [--addr HOST:PORT] (unknown: {other})");
                std::process::exit(2);
            }
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
        eprintln!("ws_fastwebsockets: listening on {addr}");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let conn = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(upgrade))
                    .with_upgrades();
                let _ = conn.await;
            });
        }
    })
}
