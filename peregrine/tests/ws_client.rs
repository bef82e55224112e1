//! The client's WebSockets over loopback: against peregrine's own server (ws:// and wss://,
//! with and without permessage-deflate, subprotocols, the closing handshake both ways; over
//! HTTP/1.1, and over HTTP/2 by extended CONNECT, h2c and TLS) and against tokio-tungstenite's
//! server (another implementation of the handshake and frames).

mod support;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use peregrine::client::{Client, TlsConfig as ClientTls};
use peregrine::server::TlsConfig;
use peregrine::websocket::{
    CloseCode, Config, Error as WsError, Limits, Message, WebSocketUpgrade,
};
use peregrine::{IntoResponse, Request, Response, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Echoes text and binary, accepting deflate and the `echo` subprotocol; on `/version` it
/// first sends the handshake request's version (`Http11`, `Http2`).
async fn echo(mut req: Request) -> Response {
    let version = (req.path() == "/version").then(|| format!("{:?}", req.version()));
    match WebSocketUpgrade::from_request(&mut req) {
        Ok(up) => up.protocols(["echo"]).deflate(true).on_upgrade(|mut ws| async move {
            if let Some(version) = version {
                if ws.send(Message::text(version)).await.is_err() {
                    return;
                }
            }
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

/// RFC 6455 §4.1: each connection's `Sec-WebSocket-Key` is "a randomly selected 16-byte value"
/// chosen for it (the nonce and the masking seed come from the operating system): keys of three
/// connections, read by tungstenite's server, are 24 base64 characters and all different.
#[test]
fn every_connection_has_its_own_random_key() {
    rt().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let mut keys = Vec::new();
            for _ in 0..3 {
                let (tcp, _) = listener.accept().await.unwrap();
                let mut key = None;
                // tungstenite's callback signature: its error type is a whole HTTP response.
                #[allow(clippy::result_large_err)]
                let callback =
                    |req: &tungstenite::handshake::server::Request,
                     res: tungstenite::handshake::server::Response| {
                        key = req.headers().get("sec-websocket-key").map(|v| v.as_bytes().to_vec());
                        Ok(res)
                    };
                let mut ws = tokio_tungstenite::accept_hdr_async(tcp, callback).await.unwrap();
                keys.push(key.expect("a Sec-WebSocket-Key"));
                while let Some(Ok(msg)) = ws.next().await {
                    if msg.is_close() {
                        break;
                    }
                }
            }
            keys
        });
        for _ in 0..3 {
            let mut ws = Client::new().websocket(&format!("ws://{addr}/")).connect().await.unwrap();
            ws.close(CloseCode::NORMAL, "").await.unwrap();
        }
        let keys = tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap();
        for key in &keys {
            assert_eq!(key.len(), 24, "{key:?}");
        }
        assert!(keys[0] != keys[1] && keys[1] != keys[2] && keys[0] != keys[2], "{keys:?}");
    });
}

/// The version the server saw the handshake in: `/version`'s first message.
async fn server_version(ws: &mut peregrine::websocket::WebSocket) -> String {
    match ws.recv().await.unwrap().unwrap() {
        Message::Text(v) => v.as_str().to_owned(),
        other => panic!("expected the version, got {other:?}"),
    }
}

/// RFC 8441 over h2c by prior knowledge: the client waits for the server's SETTINGS, sees
/// extended CONNECT allowed, and opens the WebSocket as a stream (the server's handler saw an
/// HTTP/2 request), with and without permessage-deflate; the same limits hold (a message over
/// the client's `max_message_size` fails with 1009).
#[test]
fn talks_over_http2_h2c() {
    let server = support::spawn(echo);
    let url = format!("ws://{}/version", server.local_addr());
    rt().block_on(async {
        let client = Client::new();
        for deflate in [false, true] {
            let mut ws = client
                .websocket(&url)
                .http2(true)
                .protocols(["echo"])
                .deflate(deflate)
                .connect()
                .await
                .unwrap();
            assert_eq!(server_version(&mut ws).await, "Http2");
            assert_eq!(ws.protocol(), Some("echo"));
            assert_eq!(ws.is_compressed(), deflate);
            exchange(&mut ws).await;
            ws.close(CloseCode::NORMAL, "bye").await.unwrap();
            assert!(ws.recv().await.is_none());
        }
        // Without `http2`, HTTP/1.1 as before.
        let mut ws = client.websocket(&url).connect().await.unwrap();
        assert_eq!(server_version(&mut ws).await, "Http11");
        ws.close(CloseCode::NORMAL, "").await.unwrap();
        // The client's limits: an echo of 2 KiB against a 1 KiB limit.
        let limits = Limits { max_message_size: 1024, ..Limits::default() };
        let config = Config { limits, ..Config::default() };
        let mut ws = client.websocket(&url).http2(true).config(config).connect().await.unwrap();
        assert_eq!(server_version(&mut ws).await, "Http2");
        ws.send(Message::binary(vec![1u8; 2048])).await.unwrap();
        match ws.recv().await {
            Some(Err(WsError::Protocol(e))) => assert_eq!(e.close_code(), CloseCode::TOO_BIG),
            other => panic!("expected 1009, got {other:?}"),
        }
    });
    server.shutdown();
    server.join().unwrap();
}

/// wss:// with `http2`: ALPN chooses h2 and the WebSocket is a stream of that connection; a
/// server with HTTP/2 off answers ALPN with http/1.1 and the same connection carries the
/// HTTP/1.1 handshake.
#[test]
fn talks_over_http2_with_tls() {
    let cert = support::tls::self_signed(&["localhost"]);
    let tls = || TlsConfig::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    let h2 = Server::bind("127.0.0.1:0")
        .workers(1)
        .config(support::test_config())
        .tls(tls())
        .spawn(echo)
        .unwrap();
    let config = peregrine::server::Config { http2: false, ..support::test_config() };
    let h1 = Server::bind("127.0.0.1:0").workers(1).config(config).tls(tls()).spawn(echo).unwrap();
    rt().block_on(async {
        let trust = ClientTls::empty().add_ca_pem(cert.cert_pem.as_bytes()).unwrap();
        let client = Client::builder().tls(trust).build();
        for deflate in [false, true] {
            let url = format!("wss://localhost:{}/version", h2.local_addr().port());
            let mut ws =
                client.websocket(&url).http2(true).deflate(deflate).connect().await.unwrap();
            assert_eq!(server_version(&mut ws).await, "Http2");
            assert_eq!(ws.is_compressed(), deflate);
            exchange(&mut ws).await;
            ws.close(CloseCode::NORMAL, "").await.unwrap();
            assert!(ws.recv().await.is_none());
        }
        let url = format!("wss://localhost:{}/version", h1.local_addr().port());
        let mut ws = client.websocket(&url).http2(true).deflate(true).connect().await.unwrap();
        assert_eq!(server_version(&mut ws).await, "Http11");
        exchange(&mut ws).await;
        ws.close(CloseCode::NORMAL, "").await.unwrap();
    });
    for server in [h2, h1] {
        server.shutdown();
        server.join().unwrap();
    }
}

/// The WebSocket's HTTP/2 connection has no read deadline: a WebSocket quiet for longer than
/// the client's read timeout stays open (its connection would otherwise fail with "no response
/// bytes within the read timeout").
#[test]
fn a_quiet_http2_websocket_outlives_the_read_timeout() {
    let server = support::spawn(echo);
    let url = format!("ws://{}/version", server.local_addr());
    rt().block_on(async {
        let client = Client::builder().read_timeout(Some(Duration::from_millis(200))).build();
        let mut ws = client.websocket(&url).http2(true).connect().await.unwrap();
        assert_eq!(server_version(&mut ws).await, "Http2");
        tokio::time::sleep(Duration::from_millis(700)).await;
        ws.send(Message::text("still there")).await.unwrap();
        assert_eq!(ws.recv().await.unwrap().unwrap(), Message::text("still there"));
        ws.close(CloseCode::NORMAL, "").await.unwrap();
    });
    server.shutdown();
    server.join().unwrap();
}

/// RFC 8441 §3: a server whose SETTINGS do not allow extended CONNECT gets no CONNECT: the
/// client reads its SETTINGS, leaves that HTTP/2 connection without opening a stream, and opens
/// the WebSocket over HTTP/1.1 on a new one (here tokio-tungstenite's server).
#[test]
fn without_extended_connect_http2_falls_back_to_http1() {
    rt().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            // The first connection speaks HTTP/2 without the setting: an empty SETTINGS.
            let (mut h2c, _) = listener.accept().await.unwrap();
            h2c.write_all(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00").await.unwrap();
            let mut got = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(5), h2c.read_to_end(&mut got)).await;
            // The second, HTTP/1.1: an echo.
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
            got
        });
        let url = format!("ws://{addr}/");
        let mut ws = Client::new().websocket(&url).http2(true).connect().await.unwrap();
        ws.send(Message::text("over HTTP/1.1")).await.unwrap();
        assert_eq!(ws.recv().await.unwrap().unwrap(), Message::text("over HTTP/1.1"));
        ws.close(CloseCode::NORMAL, "").await.unwrap();
        let got = tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap();
        // The preface, then frames: SETTINGS, its ACK, maybe WINDOW_UPDATE; never HEADERS.
        let preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
        assert!(got.starts_with(preface), "{got:?}");
        let mut frames = &got[preface.len()..];
        while frames.len() >= 9 {
            let len = u32::from_be_bytes([0, frames[0], frames[1], frames[2]]) as usize;
            assert_ne!(frames[3], 0x1, "a HEADERS frame without the setting: {got:?}");
            frames = &frames[(9 + len).min(frames.len())..];
        }
    });
}

/// Regression (the write timeout over HTTP/2): a server that accepts the extended CONNECT and
/// then never reads the stream gives no WINDOW_UPDATE; the WebSocket's `send` waited for room
/// in the stream's channel forever. It now fails with `TimedOut` after the write timeout (the
/// client's read timeout), as over HTTP/1.1.
#[test]
fn a_send_to_an_http2_server_that_never_reads_times_out() {
    rt().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut conn = h2::server::Builder::new()
                .enable_connect_protocol()
                .handshake::<_, bytes::Bytes>(tcp)
                .await
                .unwrap();
            let (req, mut respond) = conn.accept().await.unwrap().unwrap();
            assert_eq!(req.method(), http::Method::CONNECT);
            let response = http::Response::builder().status(200).body(()).unwrap();
            let _send = respond.send_response(response, false).unwrap();
            // Hold the stream without reading it; keep the connection going.
            let _body = req.into_body();
            let _ = conn.accept().await;
        });
        let client = Client::builder().read_timeout(Some(Duration::from_millis(500))).build();
        let url = format!("ws://{addr}/");
        let mut ws = client.websocket(&url).http2(true).connect().await.unwrap();
        let start = std::time::Instant::now();
        let sent = async {
            loop {
                if let Err(e) = ws.send(Message::binary(vec![0u8; 16 * 1024])).await {
                    return e;
                }
            }
        };
        let e = tokio::time::timeout(Duration::from_secs(10), sent).await.expect("send gives up");
        assert!(matches!(e, WsError::TimedOut), "{e:?}");
        assert!(start.elapsed() >= Duration::from_millis(500), "{:?}", start.elapsed());
        server.abort();
    });
}

/// Regression (the tunnel's connection outlived it): a WebSocket over HTTP/2 dropped without a
/// closing handshake reset its stream, but its connection's task waited for the upload task to
/// let go of the connection, which it did only later, unseen: the connection stayed open until
/// the pool's idle timeout (90 s). A tunnel's connection now ends with its stream, closed or
/// dropped.
#[test]
fn an_http2_websocket_closes_its_connection_when_done() {
    let server = Server::bind("127.0.0.1:0")
        .workers(1)
        .config(support::test_config())
        .metrics("/metrics")
        .spawn(echo)
        .unwrap();
    let addr = server.local_addr();
    rt().block_on(async {
        // The server's open connections, this request's own included.
        let open = || async {
            let metrics = Client::builder().http1_only().pool_max_idle_per_origin(0).build();
            let mut res = metrics.get(&format!("http://{addr}/metrics")).await.unwrap();
            let text = std::mem::take(res.body_mut()).to_bytes(1 << 20).await.unwrap();
            let text = String::from_utf8(text.to_vec()).unwrap();
            let line = text.lines().find(|l| l.starts_with("peregrine_connections_open "));
            line.and_then(|l| l.rsplit(' ').next()?.parse::<u32>().ok()).unwrap()
        };
        let client = Client::new();
        for close in [true, false] {
            let mut ws =
                client.websocket(&format!("ws://{addr}/")).http2(true).connect().await.unwrap();
            ws.send(Message::text("x")).await.unwrap();
            assert_eq!(ws.recv().await.unwrap().unwrap(), Message::text("x"));
            assert_eq!(open().await, 2);
            if close {
                ws.close(CloseCode::NORMAL, "").await.unwrap();
            }
            drop(ws);
            let deadline = std::time::Instant::now() + Duration::from_secs(3);
            while open().await > 1 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the connection stayed (close: {close})"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    });
    server.shutdown();
    server.join().unwrap();
}
