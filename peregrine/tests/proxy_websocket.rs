//! WebSockets through the proxy, over loopback: a peregrine WebSocket echo backend behind the
//! proxy, opened by peregrine's client (HTTP/1.1 `Upgrade`) and by tokio-tungstenite's (another
//! implementation of the handshake and the frames): the subprotocol the backend chose reaches
//! the client, the backend sees the forwarding fields, text, binary and large messages come
//! back, a Close passes both ways with its code; an HTTP/2 client's extended CONNECT reaches
//! the HTTP/1.1 backend as an `Upgrade`; a backend that refuses the WebSocket is a 502,
//! and a malformed handshake is refused by the proxy without reaching the backend.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::{SinkExt, StreamExt};
use peregrine::client::Client;
use peregrine::proxy::{Proxy, Upstreams};
use peregrine::websocket::{CloseCode, Message, WebSocketUpgrade};
use peregrine::{IntoResponse, Request, Response};
use support::{RawClient, spawn};
use tokio_tungstenite::tungstenite;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// A WebSocket backend speaking `echo` (and `chat`): first a text message with the forwarding
/// fields it received, then every text and binary message echoed; `bye` closes with 4000.
fn backend(opened: Arc<AtomicUsize>) -> impl Fn(Request) -> std::future::Ready<Response> + Clone {
    move |mut req: Request| {
        opened.fetch_add(1, Ordering::SeqCst);
        let field = |n: &str| req.headers().get_str(n).unwrap_or("-").to_owned();
        let seen = format!(
            "xff={} via={} xfp={} host={} connection={}",
            field("x-forwarded-for"),
            field("via"),
            field("x-forwarded-proto"),
            field("host"),
            field("connection"),
        );
        std::future::ready(match WebSocketUpgrade::from_request(&mut req) {
            Ok(up) => up.protocols(["echo", "chat"]).on_upgrade(move |mut ws| async move {
                if ws.send(Message::text(seen)).await.is_err() {
                    return;
                }
                while let Some(Ok(msg)) = ws.recv().await {
                    if msg.as_text() == Some("bye") {
                        let _ = ws.close(CloseCode::from(4000), "bye from the backend").await;
                        return;
                    }
                    if matches!(msg, Message::Text(_) | Message::Binary(_))
                        && ws.send(msg).await.is_err()
                    {
                        break;
                    }
                }
            }),
            Err(refused) => refused.into_response(),
        })
    }
}

#[test]
fn websockets_pass_through_the_proxy() {
    let opened = Arc::new(AtomicUsize::new(0));
    let backend = spawn(backend(opened.clone()));
    let pool = Upstreams::new([format!("http://{}", backend.local_addr())]).unwrap();
    let proxy = spawn(Proxy::new(pool));
    let url = format!("ws://{}/chat", proxy.local_addr());
    rt().block_on(async {
        let client = Client::new();
        let mut ws = client.websocket(&url).protocols(["chat", "other"]).connect().await.unwrap();
        assert_eq!(ws.protocol(), Some("chat"), "the backend's choice");
        let first = ws.recv().await.unwrap().unwrap();
        let first = first.as_text().unwrap();
        assert!(first.starts_with("xff=127.0.0.1 via=1.1 peregrine xfp=http host="), "{first}");
        assert!(first.to_ascii_lowercase().contains("connection=upgrade"), "{first}");
        ws.send(Message::text("héllo")).await.unwrap();
        assert_eq!(ws.recv().await.unwrap().unwrap(), Message::text("héllo"));
        let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        ws.send(Message::binary(big.clone())).await.unwrap();
        assert_eq!(ws.recv().await.unwrap().unwrap(), Message::binary(big));
        // The client closes: the backend's answer comes back through the proxy.
        ws.close(CloseCode::NORMAL, "done").await.unwrap();

        // The backend closes with its own code and reason.
        let mut ws = client.websocket(&url).protocols(["echo"]).connect().await.unwrap();
        assert_eq!(ws.protocol(), Some("echo"));
        let _ = ws.recv().await;
        ws.send(Message::text("bye")).await.unwrap();
        match ws.recv().await {
            Some(Ok(Message::Close(Some(frame)))) => {
                assert_eq!(u16::from(frame.code), 4000);
                assert_eq!(frame.reason.as_str(), "bye from the backend");
            }
            other => panic!("expected the backend's Close, got {other:?}"),
        }
    });
    assert_eq!(opened.load(Ordering::SeqCst), 2);
}

/// Over HTTP/2 in front (RFC 8441 extended CONNECT, h2c by prior knowledge) to the same
/// HTTP/1.1 backend: the opening becomes an HTTP/1.1 `Upgrade` behind the proxy.
#[test]
fn an_http2_websocket_to_an_http1_backend() {
    let opened = Arc::new(AtomicUsize::new(0));
    let backend = spawn(backend(opened.clone()));
    let pool = Upstreams::new([format!("http://{}", backend.local_addr())]).unwrap();
    // The proxy's access log says which protocol the client spoke.
    let versions = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = versions.clone();
    let proxy = peregrine::Server::bind("127.0.0.1:0")
        .workers(1)
        .drain_grace(std::time::Duration::ZERO)
        .access_log(move |e| seen.lock().unwrap().push(e.version))
        .spawn(Proxy::new(pool))
        .unwrap();
    rt().block_on(async {
        let url = format!("ws://{}/h2", proxy.local_addr());
        let mut ws =
            Client::new().websocket(&url).http2(true).protocols(["echo"]).connect().await.unwrap();
        assert_eq!(ws.protocol(), Some("echo"));
        let first = ws.recv().await.unwrap().unwrap();
        let first = first.as_text().unwrap();
        assert!(
            first.contains("connection=upgrade") || first.contains("connection=Upgrade"),
            "{first}"
        );
        ws.send(Message::text("over h2")).await.unwrap();
        assert_eq!(ws.recv().await.unwrap().unwrap(), Message::text("over h2"));
        ws.close(CloseCode::NORMAL, "").await.unwrap();
    });
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    proxy.shutdown();
    proxy.join().unwrap();
    assert_eq!(*versions.lock().unwrap(), [Some(peregrine::Version::Http2)]);
}

/// Another implementation's client: tokio-tungstenite's handshake and masked frames.
#[test]
fn a_tungstenite_client_through_the_proxy() {
    let backend = spawn(backend(Arc::new(AtomicUsize::new(0))));
    let pool = Upstreams::new([format!("http://{}", backend.local_addr())]).unwrap();
    let proxy = spawn(Proxy::new(pool));
    rt().block_on(async {
        let url = format!("ws://{}/", proxy.local_addr());
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let first = ws.next().await.unwrap().unwrap();
        assert!(first.to_text().unwrap().starts_with("xff=127.0.0.1"), "{first:?}");
        ws.send(tungstenite::Message::Text("ping?".into())).await.unwrap();
        assert_eq!(ws.next().await.unwrap().unwrap().to_text().unwrap(), "ping?");
        ws.close(None).await.unwrap();
    });
}

/// A backend that does not speak WebSocket answers 502; a malformed handshake (no
/// Sec-WebSocket-Key) is refused by the proxy itself and never reaches the backend.
#[test]
fn refusals() {
    let plain = spawn(|_req: Request| async { "not a websocket server" });
    let proxy =
        spawn(Proxy::new(Upstreams::new([format!("http://{}", plain.local_addr())]).unwrap()));
    rt().block_on(async {
        let url = format!("ws://{}/", proxy.local_addr());
        let err = Client::new().websocket(&url).connect().await.unwrap_err();
        assert!(err.to_string().contains("did not accept"), "{err}");
    });
    let opened = Arc::new(AtomicUsize::new(0));
    let backend = spawn(backend(opened.clone()));
    let proxy =
        spawn(Proxy::new(Upstreams::new([format!("http://{}", backend.local_addr())]).unwrap()));
    let mut c = RawClient::connect(proxy.local_addr());
    c.send(
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Version: 13\r\n\r\n",
    );
    assert_eq!(c.response().status, 400);
    assert_eq!(opened.load(Ordering::SeqCst), 0, "the backend was never asked");
    // `Upgrade: websocket` that `Connection` does not name is a plain request (RFC 9110
    // §7.8), forwarded without it: the backend answers it as one.
    c.send(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: keep-alive\r\n\r\n");
    let res = c.response();
    assert_eq!(res.status, 400, "the backend's own refusal of a request that is no handshake");
    assert_eq!(opened.load(Ordering::SeqCst), 1, "this one was forwarded");
}
