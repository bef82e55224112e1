//! The server's WebSockets over loopback with real peers: tokio-tungstenite over HTTP/1.1 (the
//! `101` hand-over with bytes that followed the head, echo of text and binary, Ping answered,
//! the closing handshake, limits), the `h2` crate's extended CONNECT over HTTP/2 (RFC 8441)
//! with peregrine's own frame codec on the stream, and the drain's 1001.

mod support;

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use futures_util::{SinkExt, StreamExt};
use peregrine::websocket::{Message, WebSocketUpgrade};
use peregrine::ws::{self, CloseCode, Event};
use peregrine::{IntoResponse, Request, Response};
use support::spawn;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Echoes text and binary messages on any path; `/close` closes with 4000 after one message.
async fn echo(mut req: Request) -> Response {
    let close_after_one = req.path() == "/close";
    let upgrade = match WebSocketUpgrade::from_request(&mut req) {
        Ok(upgrade) => upgrade,
        Err(refused) => return refused.into_response(),
    };
    upgrade.protocols(["echo"]).on_upgrade(move |mut ws| async move {
        while let Some(Ok(msg)) = ws.recv().await {
            if matches!(msg, Message::Text(_) | Message::Binary(_)) {
                if ws.send(msg).await.is_err() {
                    break;
                }
                if close_after_one {
                    let _ = ws.close(CloseCode::from(4000), "done").await;
                    break;
                }
            }
        }
    })
}

/// RFC 6455 §4.2.2, §5.6, §5.5.2-3: tungstenite's handshake is answered with a 101 and the
/// subprotocol; text and binary come back whole (a large one too); a Ping gets its Pong;
/// a Close from the client is echoed and the server closes the connection.
#[test]
fn echoes_over_http1_with_tungstenite() {
    let server = spawn(echo);
    let url = format!("ws://{}/chat", server.local_addr());
    rt().block_on(async {
        let mut request =
            tungstenite::client::IntoClientRequest::into_client_request(&url).unwrap();
        request.headers_mut().insert("sec-websocket-protocol", "other, echo".parse().unwrap());
        let (mut ws, response) = tokio_tungstenite::connect_async(request).await.unwrap();
        assert_eq!(response.status(), 101);
        assert_eq!(response.headers()["sec-websocket-protocol"], "echo");
        ws.send(tungstenite::Message::text("hello")).await.unwrap();
        assert_eq!(ws.next().await.unwrap().unwrap(), tungstenite::Message::text("hello"));
        let big: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        ws.send(tungstenite::Message::binary(big.clone())).await.unwrap();
        assert_eq!(ws.next().await.unwrap().unwrap(), tungstenite::Message::binary(big));
        ws.send(tungstenite::Message::Ping(Bytes::from_static(b"are you there"))).await.unwrap();
        assert_eq!(
            ws.next().await.unwrap().unwrap(),
            tungstenite::Message::Pong(Bytes::from_static(b"are you there"))
        );
        ws.close(None).await.unwrap();
        // The server's echo of the Close, then the end of the stream.
        match ws.next().await {
            Some(Ok(tungstenite::Message::Close(_))) | None => {}
            other => panic!("expected the close, got {other:?}"),
        }
    });
    server.shutdown();
    server.join().unwrap();
}

/// The server closes: the client sees the code and reason, and the end of the connection.
#[test]
fn the_server_closes_with_its_code() {
    let server = spawn(echo);
    let url = format!("ws://{}/close", server.local_addr());
    rt().block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        ws.send(tungstenite::Message::text("one")).await.unwrap();
        assert_eq!(ws.next().await.unwrap().unwrap(), tungstenite::Message::text("one"));
        match ws.next().await.unwrap().unwrap() {
            tungstenite::Message::Close(Some(frame)) => {
                assert_eq!(u16::from(frame.code), 4000);
                assert_eq!(frame.reason.as_str(), "done");
            }
            other => panic!("expected a close, got {other:?}"),
        }
    });
    server.shutdown();
    server.join().unwrap();
}

/// Writes `raw` (a handshake and maybe frames right behind it) and reads the 101 head;
/// returns the stream and what followed the head.
async fn raw_handshake(addr: std::net::SocketAddr, raw: &[u8]) -> (TcpStream, Vec<u8>, String) {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(raw).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tcp.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed before the head: {:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end + 4]).into_owned();
            return (tcp, got[end + 4..].to_vec(), head);
        }
    }
}

const HANDSHAKE: &[u8] =
    b"GET /raw HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\
sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n";

/// A client frame: masked, FIN, `opcode`.
fn client_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut conn = ws::Conn::new(
        ws::Role::Client,
        std::sync::Arc::new(ws::Config::default()),
        None,
        [7; 32],
        Instant::now(),
    );
    match opcode {
        1 => conn.send_text(std::str::from_utf8(payload).unwrap()).unwrap(),
        2 => conn.send_binary(payload).unwrap(),
        9 => conn.send_ping(payload).unwrap(),
        _ => unreachable!(),
    }
    let mut out = Vec::new();
    conn.poll_transmit(&mut out);
    out
}

/// Reads server frames until `want` events came (or the stream ended).
async fn read_events(tcp: &mut TcpStream, mut input: BytesMut, want: usize) -> Vec<Event> {
    let config = std::sync::Arc::new(ws::Config::default());
    let mut conn = ws::Conn::new(ws::Role::Client, config, None, [9; 32], Instant::now());
    let mut events = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        while let Some(event) = conn.recv(&mut input, Instant::now()) {
            events.push(event);
            if events.len() == want {
                return events;
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
            .await
            .expect("the server answers")
            .unwrap();
        if n == 0 {
            return events;
        }
        input.extend_from_slice(&buf[..n]);
    }
}

/// RFC 6455 §4.1: frames sent right behind the handshake, in the same write, belong to the
/// WebSocket: the hand-over keeps the bytes read past the head.
#[test]
fn frames_in_the_handshakes_write_are_kept() {
    let server = spawn(echo);
    rt().block_on(async {
        let mut raw = HANDSHAKE.to_vec();
        raw.extend_from_slice(&client_frame(1, b"first"));
        raw.extend_from_slice(&client_frame(2, b"second"));
        let (mut tcp, rest, head) = raw_handshake(server.local_addr(), &raw).await;
        assert!(head.starts_with("HTTP/1.1 101 Switching Protocols\r\n"), "{head}");
        assert!(head.contains("sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "{head}");
        assert!(!head.contains("content-length"), "{head}");
        let events = read_events(&mut tcp, BytesMut::from(&rest[..]), 2).await;
        assert_eq!(
            events,
            [
                Event::Text(Bytes::from_static(b"first")),
                Event::Binary(Bytes::from_static(b"second"))
            ]
        );
    });
    server.shutdown();
    server.join().unwrap();
}

/// RFC 6455 §5.1, §7.4.1: an unmasked client frame fails the connection with 1002; a frame
/// over the size limit with 1009, decided from its header.
#[test]
fn protocol_errors_get_their_close_codes() {
    let server = spawn(echo);
    rt().block_on(async {
        for (frame, code) in [
            // Unmasked text "hi".
            (b"\x81\x02hi".to_vec(), CloseCode::PROTOCOL_ERROR),
            // A binary frame claiming 2^62 bytes, masked.
            (
                [&b"\x82\xff"[..], &(1u64 << 62).to_be_bytes(), b"\x01\x02\x03\x04"].concat(),
                CloseCode::TOO_BIG,
            ),
        ] {
            let mut raw = HANDSHAKE.to_vec();
            raw.extend_from_slice(&frame);
            let (mut tcp, rest, _) = raw_handshake(server.local_addr(), &raw).await;
            let events = read_events(&mut tcp, BytesMut::from(&rest[..]), 1).await;
            match &events[..] {
                [Event::Close { code: got, .. }] => assert_eq!(*got, code),
                other => panic!("expected a close with {code:?}, got {other:?}"),
            }
            // And the server closes the connection.
            let mut buf = [0u8; 64];
            let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf)).await;
            assert!(matches!(n, Ok(Ok(0)) | Ok(Err(_))), "{n:?}");
        }
    });
    server.shutdown();
    server.join().unwrap();
}

/// A server writes a large message from the received message's own bytes (header and payload
/// in one vectored write): to a client that reads slowly through a small receive buffer, so
/// that the server's writes stop inside headers and payloads, 16 KiB and 1 MiB echoes arrive
/// byte-exact and in order, the Pongs between them whole (RFC 6455 §5.4: control frames go
/// between a message's frames, never inside one).
#[test]
fn large_echoes_reach_a_slow_reader_byte_exact() {
    let server = spawn(echo);
    rt().block_on(async {
        // More than the server's socket buffer holds (loopback's can grow to 4 MiB), so its
        // writes end inside headers and payloads.
        let mut sizes = vec![16 * 1024, 1 << 20, 16 * 1024 + 3, 1024, 1023, 70_000, 16 * 1024];
        sizes.extend([1 << 20; 5]);
        sizes.extend([16 * 1024, 1024 + 1, 3 * 1024 * 1024 / 2]);
        let mut frames = Vec::new();
        let mut want = Vec::new();
        for (i, &size) in sizes.iter().enumerate() {
            let text = i % 3 == 2;
            let payload: Vec<u8> = if text {
                (0..size).map(|k| b'a' + ((i * 7 + k) % 26) as u8).collect()
            } else {
                (0..size).map(|k| ((i * 31 + k) % 251) as u8).collect()
            };
            frames.push(client_frame(if text { 1 } else { 2 }, &payload));
            let payload = Bytes::from(payload);
            want.push(if text { Event::Text(payload) } else { Event::Binary(payload) });
            let ping = format!("ping {i}");
            frames.push(client_frame(9, ping.as_bytes()));
            want.push(Event::Pong(Bytes::from(ping)));
        }
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut tcp = socket.connect(server.local_addr()).await.unwrap();
        tcp.write_all(HANDSHAKE).await.unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut b = [0u8; 1];
            assert_eq!(tcp.read(&mut b).await.unwrap(), 1, "the 101 head");
            head.push(b[0]);
        }
        assert!(head.starts_with(b"HTTP/1.1 101"), "{:?}", String::from_utf8_lossy(&head));
        let (mut rd, mut wr) = tcp.into_split();
        // The client writes everything while it reads: the server reads on while its echo
        // waits for the slow reader only up to its high-water mark.
        let writer = tokio::spawn(async move {
            for frame in frames {
                wr.write_all(&frame).await.unwrap();
            }
            wr
        });
        let config = std::sync::Arc::new(ws::Config::default());
        let mut conn = ws::Conn::new(ws::Role::Client, config, None, [9; 32], Instant::now());
        let mut input = BytesMut::new();
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1500];
        let mut reads = 0u32;
        // The reader starts late: the server's socket buffer fills first.
        tokio::time::sleep(Duration::from_millis(300)).await;
        while got.len() < want.len() {
            let n = tokio::time::timeout(Duration::from_secs(10), rd.read(&mut buf))
                .await
                .expect("the server keeps writing")
                .unwrap();
            assert!(n > 0, "the server closed after {} events", got.len());
            input.extend_from_slice(&buf[..n]);
            while let Some(event) = conn.recv(&mut input, Instant::now()) {
                got.push(event);
            }
            reads += 1;
            if reads % 64 == 0 {
                // Slow: the server's socket fills and its writes go part by part.
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
        assert_eq!(got.len(), want.len());
        for (i, (got, want)) in got.iter().zip(&want).enumerate() {
            assert!(got == want, "event {i} differs: {:?}", std::mem::discriminant(got));
        }
        let _wr = writer.await.unwrap();
    });
    server.shutdown();
    server.join().unwrap();
}

/// RFC 6455 §4.2.2: a request that is not a handshake gets 400; another version gets 426
/// with the version the server speaks.
#[test]
fn bad_handshakes_are_refused() {
    let server = spawn(echo);
    rt().block_on(async {
        let plain = b"GET / HTTP/1.1\r\nhost: x\r\n\r\n";
        let (_, _, head) = raw_handshake(server.local_addr(), plain).await;
        assert!(head.starts_with("HTTP/1.1 400 "), "{head}");
        let v8 =
            String::from_utf8(HANDSHAKE.to_vec()).unwrap().replace("version: 13", "version: 8");
        let (_, _, head) = raw_handshake(server.local_addr(), v8.as_bytes()).await;
        assert!(head.starts_with("HTTP/1.1 426 "), "{head}");
        assert!(head.contains("sec-websocket-version: 13\r\n"), "{head}");
    });
    server.shutdown();
    server.join().unwrap();
}

/// RFC 8441: the server offers extended CONNECT; a CONNECT with `:protocol websocket` gets a
/// 200 and the stream carries the WebSocket both ways (the `h2` crate's client, frames from
/// peregrine's codec in the client role).
#[test]
fn echoes_over_http2_extended_connect() {
    let server = spawn(echo);
    let addr = server.local_addr();
    rt().block_on(async {
        let tcp = TcpStream::connect(addr).await.unwrap();
        let (send, conn) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut send = send.ready().await.unwrap();
        // The server's SETTINGS arrive with its first frames: a request first.
        let plain = http::Request::get(format!("http://{addr}/")).body(()).unwrap();
        let (response, _) = send.send_request(plain, true).unwrap();
        assert_eq!(response.await.unwrap().status(), 400);
        let mut send = send.ready().await.unwrap();
        assert!(send.is_extended_connect_protocol_enabled());
        let mut req = http::Request::builder()
            .method(http::Method::CONNECT)
            .uri(format!("http://{addr}/chat"))
            .header("sec-websocket-version", "13")
            .header("sec-websocket-protocol", "echo")
            .body(())
            .unwrap();
        req.extensions_mut().insert(h2::ext::Protocol::from_static("websocket"));
        let (response, mut stream) = send.send_request(req, false).unwrap();
        let response = response.await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["sec-websocket-protocol"], "echo");
        let mut recv = response.into_body();
        let config = std::sync::Arc::new(ws::Config::default());
        let mut conn = ws::Conn::new(ws::Role::Client, config, None, [3; 32], Instant::now());
        let mut input = BytesMut::new();
        for (i, text) in ["one", "two", "three"].into_iter().enumerate() {
            conn.send_text(text).unwrap();
            if i == 1 {
                conn.send_ping(b"p").unwrap();
            }
            let mut out = Vec::new();
            conn.poll_transmit(&mut out);
            stream.send_data(Bytes::from(out), false).unwrap();
            let want = if i == 1 { 2 } else { 1 };
            let mut got = Vec::new();
            while got.len() < want {
                while let Some(event) = conn.recv(&mut input, Instant::now()) {
                    got.push(event);
                }
                if got.len() >= want {
                    break;
                }
                let chunk = recv.data().await.unwrap().unwrap();
                recv.flow_control().release_capacity(chunk.len()).unwrap();
                input.extend_from_slice(&chunk);
            }
            // The Pong goes as soon as the Ping is read: before the echo, or after it.
            assert!(got.contains(&Event::Text(Bytes::copy_from_slice(text.as_bytes()))), "{got:?}");
            if i == 1 {
                assert!(got.contains(&Event::Pong(Bytes::from_static(b"p"))), "{got:?}");
            }
        }
        // Our Close: the server echoes it and ends the stream.
        conn.close(CloseCode::NORMAL, "bye").unwrap();
        let mut out = Vec::new();
        conn.poll_transmit(&mut out);
        stream.send_data(Bytes::from(out), true).unwrap();
        let mut events = Vec::new();
        while let Some(chunk) = recv.data().await {
            let chunk = chunk.unwrap();
            let _ = recv.flow_control().release_capacity(chunk.len());
            input.extend_from_slice(&chunk);
            while let Some(event) = conn.recv(&mut input, Instant::now()) {
                events.push(event);
            }
        }
        assert!(
            matches!(&events[..], [Event::Close { code: CloseCode::NORMAL, .. }]),
            "{events:?}"
        );
    });
    server.shutdown();
    server.join().unwrap();
}

/// RFC 6455 §7.4.1: when the server drains, an open WebSocket gets a Close with 1001.
#[test]
fn the_drain_says_going_away() {
    let server = spawn(echo);
    let url = format!("ws://{}/chat", server.local_addr());
    rt().block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        ws.send(tungstenite::Message::text("hi")).await.unwrap();
        assert_eq!(ws.next().await.unwrap().unwrap(), tungstenite::Message::text("hi"));
        server.shutdown();
        match tokio::time::timeout(Duration::from_secs(5), ws.next()).await.unwrap() {
            Some(Ok(tungstenite::Message::Close(Some(frame)))) => {
                assert_eq!(u16::from(frame.code), 1001);
            }
            other => panic!("expected a 1001 close, got {other:?}"),
        }
    });
    server.join().unwrap();
}
