//! The frame of the benchmark peers written on tokio (the WebSocket echo peers
//! `ws_fastwebsockets`, `ws_tokio_websockets`, `ws_tungstenite` and `ws_tokio_floor` of
//! `bench/ws.sh`; hyper's `hyper_plaintext` and `hyper_h2`): `--addr HOST:PORT`, one
//! current-thread runtime (one worker), TCP_NODELAY, each accepted connection served by a task
//! of its own.

use std::future::Future;

use tokio::net::TcpStream;

/// Serves connections on `--addr` (default `default_addr`) with `serve`, until killed.
pub fn run<F, Fut>(name: &str, default_addr: &str, serve: F) -> std::io::Result<()>
where
    F: Fn(TcpStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut addr = String::from(default_addr);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            other => {
                eprintln!("usage: {name} [--addr HOST:PORT] (unknown: {other})");
                std::process::exit(2);
            }
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
        eprintln!("{name}: listening on {addr}");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                // Out of descriptors, say: a moment for connections to close.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(serve(stream));
        }
    })
}
