//! A WebSocket echo server: every text and binary message comes back, on any path, over
//! HTTP/1.1 (`Upgrade`) and HTTP/2 (extended CONNECT, RFC 8441), with permessage-deflate
//! accepted when the client offers it. The Autobahn test suite's server under test, and the
//! WebSocket benchmark's server.
//!
//! ```text
//! cargo run --release --example ws_echo -- --addr 127.0.0.1:9002 [--workers N]
//!     [--tls-cert cert.pem --tls-key key.pem]
//! ```

use peregrine::server::TlsConfig;
use peregrine::websocket::{Config, DeflateConfig, Message, WebSocketUpgrade};
use peregrine::{IntoResponse, Request, Response, Server};

/// permessage-deflate for every message, however short: RFC 7692 lets an endpoint send any
/// message uncompressed (the default leaves those under 32 bytes so), but kosoku 0.1.0, the
/// Autobahn runner CI uses, fails its 12.x.1 and 13.x.1 cases (16-byte messages) on an
/// uncompressed text or binary message in a compressed session ("Strings must be encoded
/// before hashing", a Python error of its own).
fn config() -> Config {
    Config {
        deflate: Some(DeflateConfig { min_size: 0, ..DeflateConfig::default() }),
        ..Config::default()
    }
}

async fn echo(mut req: Request) -> Response {
    let upgrade = match WebSocketUpgrade::from_request(&mut req) {
        Ok(upgrade) => upgrade,
        Err(refused) => return refused.into_response(),
    };
    upgrade.config(config()).on_upgrade(|mut ws| async move {
        while let Some(Ok(msg)) = ws.recv().await {
            if matches!(msg, Message::Text(_) | Message::Binary(_)) && ws.send(msg).await.is_err() {
                break;
            }
        }
    })
}

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:9002");
    let mut workers = None;
    let (mut cert, mut key) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            "--workers" => {
                workers = Some(args.next().and_then(|n| n.parse().ok()).expect("--workers N"))
            }
            "--tls-cert" => cert = Some(args.next().expect("--tls-cert needs a file")),
            "--tls-key" => key = Some(args.next().expect("--tls-key needs a file")),
            other => {
                eprintln!(
                    "usage: ws_echo [--addr HOST:PORT] [--workers N] \
                     [--tls-cert FILE --tls-key FILE] (unknown: {other})"
                );
                std::process::exit(2);
            }
        }
    }
    let mut server = Server::bind(addr.as_str());
    if let Some(n) = workers {
        server = server.workers(n);
    }
    match (cert, key) {
        (Some(cert), Some(key)) => {
            let tls = TlsConfig::from_pem_files(cert, key).map_err(std::io::Error::other)?;
            server = server.tls(tls);
        }
        (None, None) => {}
        _ => {
            eprintln!("ws_echo: --tls-cert and --tls-key go together");
            std::process::exit(2);
        }
    }
    eprintln!("ws_echo: listening on {addr}");
    server.run(echo)
}
