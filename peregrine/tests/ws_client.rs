//! The client's WebSockets over loopback: against peregrine's own server (ws:// and wss://,
//! with and without permessage-deflate, subprotocols, the closing handshake both ways) and
//! against tokio-tungstenite's server (another implementation of the handshake and frames).

mod support;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use peregrine::client::{Client, TlsConfig as ClientTls};
use peregrine::server::TlsConfig;
use peregrine::websocket::{CloseCode, Message, WebSocketUpgrade};
use peregrine::{IntoResponse, Request, Response, Server};
use tokio_tungstenite::tungstenite;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Echoes text and binary, accepting deflate and the `echo` subprotocol.
async fn echo(mut req: Request) -> Response {
    match WebSocketUpgrade::from_request(&mut req) {
        Ok(up) => up.protocols(["echo"]).deflate(true).on_upgrade(|mut ws| async move {
            while let Some(Ok(msg)) = ws.recv().await {
                if matches!(msg, Message::Text(_) | Message::Binary(_))
                    && ws.send(msg).await.is_err()
                {
                    break;
                }
            }
        }),
        Err(refused) => refused.into_response(),
    }
}

/// Sends a mix of messages and checks each echo; returns whether deflate was agreed.
async fn exchange(ws: &mut peregrine::websocket::WebSocket) {
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let text = "héllo ".repeat(1000);
    let messages = [
        Message::text("hello"),
        Message::binary(big),
        Message::text(text),
        Message::text(""),
        Message::binary(Vec::new()),
    ];
    for m in messages {
        ws.send(m.clone()).await.unwrap();
        loop {
            match ws.recv().await.unwrap().unwrap() {
                Message::Ping(_) | Message::Pong(_) => continue,
                got => {
                    assert_eq!(got, m);
                    break;
                }
            }
        }
    }
    ws.send(Message::Ping(bytes::Bytes::from_static(b"ping"))).await.unwrap();
    assert_eq!(
        ws.recv().await.unwrap().unwrap(),
        Message::Pong(bytes::Bytes::from_static(b"ping"))
    );
}

/// RFC 6455 §4.1: the client's handshake against peregrine's server, plain and compressed;
/// every message comes back whole and equal, and the close completes.
#[test]
fn talks_to_peregrines_server() {
    let server = support::spawn(echo);
    let url = format!("ws://{}/echo", server.local_addr());
    rt().block_on(async {
        for deflate in [false, true] {
            let client = Client::new();
            let mut ws = client
                .websocket(&url)
                .protocols(["x", "echo"])
                .deflate(deflate)
                .connect()
                .await
                .unwrap();
            assert_eq!(ws.protocol(), Some("echo"));
            assert_eq!(ws.is_compressed(), deflate);
            exchange(&mut ws).await;
            ws.close(CloseCode::NORMAL, "bye").await.unwrap();
            assert!(ws.recv().await.is_none());
        }
    });
    server.shutdown();
    server.join().unwrap();
}

/// wss://: the handshake over TLS (ALPN http/1.1, the certificate checked).
#[test]
fn talks_over_tls() {
    let cert = support::tls::self_signed(&["localhost"]);
    let tls = TlsConfig::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    let server = Server::bind("127.0.0.1:0")
        .workers(1)
        .config(support::test_config())
        .tls(tls)
        .spawn(echo)
        .unwrap();
    let url = format!("wss://localhost:{}/echo", server.local_addr().port());
    rt().block_on(async {
        let trust = ClientTls::empty().add_ca_pem(cert.cert_pem.as_bytes()).unwrap();
        let client = Client::builder().tls(trust).build();
        let mut ws = client.websocket(&url).deflate(true).connect().await.unwrap();
        exchange(&mut ws).await;
        ws.close(CloseCode::NORMAL, "").await.unwrap();
        // Untrusted: refused at the TLS handshake.
        let err = Client::new().websocket(&url).connect().await.unwrap_err();
        assert!(err.is_tls(), "{err}");
    });
    server.shutdown();
    server.join().unwrap();
}

/// A server that is not a WebSocket: the client says the handshake was refused.
#[test]
fn a_refused_handshake_is_an_error() {
    let server = support::spawn(|_req: Request| async { "not a websocket" });
    let url = format!("ws://{}/", server.local_addr());
    rt().block_on(async {
        let err = Client::new().websocket(&url).connect().await.unwrap_err();
        assert!(err.is_protocol(), "{err}");
        let err = Client::new().websocket("ftp://example.com/").connect().await.unwrap_err();
        assert!(err.is_request(), "{err}");
    });
    server.shutdown();
    server.join().unwrap();
}

/// Against tokio-tungstenite's server: its echo, its Close.
#[test]
fn talks_to_tungstenite() {
    rt().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
            while let Some(Ok(msg)) = ws.next().await {
                match msg {
                    tungstenite::Message::Text(_) | tungstenite::Message::Binary(_) => {
                        ws.send(msg).await.unwrap();
                    }
                    tungstenite::Message::Close(_) => break,
                    _ => {}
                }
            }
        });
        let mut ws = Client::new().websocket(&format!("ws://{addr}/")).connect().await.unwrap();
        exchange(&mut ws).await;
        ws.close(CloseCode::NORMAL, "done").await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap();
    });
}
