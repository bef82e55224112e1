//! Zero allocations per WebSocket message on the server: peregrine serves a WebSocket echo over
//! a real loopback connection, a raw client (the handshake and masked frames written by hand)
//! sends thousands of messages after a warm-up, and a counting global allocator counts what the
//! server's worker thread allocates meanwhile: nothing, for binary and text messages from 20
//! bytes to 16 KiB, one at a time and several per write.
//!
//! Only allocations on the server's worker count (the session marks its thread), so the test
//! client's own do not.

use std::io::{Read, Write};
use std::net::TcpStream;

use peregrine::websocket::{Message, WebSocketUpgrade};
use peregrine::{IntoResponse, Request, Response, Server};

#[path = "support/counting.rs"]
mod counting;

use counting::mark_server_thread;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

async fn echo(mut req: Request) -> Response {
    match WebSocketUpgrade::from_request(&mut req) {
        Ok(up) => up.on_upgrade(|mut ws| async move {
            mark_server_thread();
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

/// A client frame: FIN, `opcode`, masked with `key` (RFC 6455 §5.2, §5.3).
fn frame(opcode: u8, payload: &[u8], key: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => f.push(0x80 | n as u8),
        n if n < 65536 => {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(&key);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    f
}

/// The server's (unmasked) frame of `len` payload bytes: its length on the wire.
fn echoed(len: usize) -> usize {
    len + match len {
        n if n < 126 => 2,
        n if n < 65536 => 4,
        _ => 10,
    }
}

/// Writes `batch` and reads until `expect` octets of echoes came back.
fn round_trip(stream: &mut TcpStream, batch: &[u8], expect: usize, buf: &mut [u8]) {
    stream.write_all(batch).unwrap();
    let mut got = 0;
    while got < expect {
        let n = stream.read(buf).unwrap();
        assert!(n > 0, "server closed");
        got += n;
    }
    assert_eq!(got, expect);
}

const HANDSHAKE: &[u8] = b"GET /echo HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n\
    Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    Sec-WebSocket-Version: 13\r\n\r\n";

/// Opens a WebSocket with a raw handshake.
fn open(server: &peregrine::ServerHandle, buf: &mut [u8]) -> TcpStream {
    let mut stream = TcpStream::connect(server.local_addr()).unwrap();
    stream.set_nodelay(true).unwrap();
    stream.write_all(HANDSHAKE).unwrap();
    let mut head = Vec::new();
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(buf).unwrap();
        assert!(n > 0);
        head.extend_from_slice(&buf[..n]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&head));
    stream
}

#[test]
fn steady_state_messages_allocate_nothing_on_the_server() {
    let server = Server::bind("127.0.0.1:0").workers(1).spawn(echo).unwrap();
    let mut buf = vec![0u8; 256 * 1024];
    // The first WebSockets of a worker keep their read buffer while idle; the 70th borrows
    // one from the worker's pool for each message: both paths are measured.
    let mut streams: Vec<TcpStream> = (0..70).map(|_| open(&server, &mut buf)).collect();

    let text = "a chat line or a small JSON document, {\"id\": 42, \"ok\": true}".repeat(16);
    let binary: Vec<u8> = (0..16 * 1024).map(|i| (i * 7 % 251) as u8).collect();
    // One at a time: 20 bytes, 1 KiB of text, 16 KiB; then eight small ones in one write.
    let one =
        |payload: &[u8], opcode| (frame(opcode, payload, [1, 2, 3, 4]), echoed(payload.len()));
    let batches = [
        one(&binary[..20], 2),
        one(text.as_bytes(), 1),
        one(&binary, 2),
        (frame(2, &binary[..100], [9, 8, 7, 6]).repeat(8), echoed(100) * 8),
    ];
    for at in [0, streams.len() - 1] {
        let stream = &mut streams[at];
        // Warm up: buffers grow to their sizes.
        for _ in 0..300 {
            for (batch, expect) in &batches {
                round_trip(stream, batch, *expect, &mut buf);
            }
        }
        let before = counting::allocs();
        let mut messages = 0;
        for _ in 0..2000 {
            for (batch, expect) in &batches {
                round_trip(stream, batch, *expect, &mut buf);
            }
            messages += 11;
        }
        let allocs = counting::allocs() - before;
        assert_eq!(allocs, 0, "WebSocket {at}: {allocs} allocations over {messages} messages");
    }

    // The counter is live: the server's next WebSocket allocates (its task, its buffers).
    let before = counting::allocs();
    let mut other = open(&server, &mut buf);
    round_trip(&mut other, &batches[0].0, batches[0].1, &mut buf);
    assert!(counting::allocs() > before, "the counter sees the server's allocations");
    drop(streams);
    server.shutdown_now();
    let _ = server.join();
}
