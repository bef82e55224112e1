//! Hostile WebSocket peers against peregrine's server over loopback, frames written byte by
//! byte: each gets the close code RFC 6455 §7.4.1 names for what it did (1002 protocol, 1007
//! invalid payload, 1008 policy, 1009 too big) and the server closes the connection, or it
//! meets a bounded buffer and the write timeout; and while each is in progress another client's
//! echo is served by the same one-worker server.
//!
//! The memory bounds are measured with a global allocator that keeps the live heap bytes and
//! their peak (`support/live_bytes.rs`); the tests take one lock so that no other test's
//! allocations are counted.

mod support;

#[path = "support/live_bytes.rs"]
mod live_bytes;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use futures_util::{SinkExt, StreamExt};
use peregrine::websocket::{Error, Message, WebSocket, WebSocketUpgrade};
use peregrine::ws::{self, CloseCode, Config, DeflateConfig, Event, Limits};
use peregrine::{IntoResponse, Request, Response, ServerHandle, Version};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite;

#[global_allocator]
static GLOBAL: live_bytes::Tracking = live_bytes::Tracking;

/// One test at a time: the heap's peak is the process's.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// The server's write timeout: a peer that reads nothing for this long is cut.
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

fn server() -> ServerHandle {
    let config =
        peregrine::server::Config { write_timeout: WRITE_TIMEOUT, ..support::test_config() };
    support::spawn_with(config, app)
}

/// Echo sessions running.
static SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// Counts a session in [`SESSIONS`] while it lives.
struct Live;

impl Live {
    fn new() -> Live {
        SESSIONS.fetch_add(1, Ordering::SeqCst);
        Live
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        SESSIONS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What `/flood` saw: how many messages went before `send` failed, and how.
#[derive(Debug)]
struct Flood {
    version: Version,
    sent: usize,
    error: Error,
    elapsed: Duration,
}

static FLOODS: Mutex<Vec<Flood>> = Mutex::new(Vec::new());

/// The size of each message `/flood` sends.
const FLOOD_MESSAGE: usize = 64 * 1024;

/// `/flood` gives up after this many bytes sent (the test fails then: nothing bounded it).
const FLOOD_CAP: usize = 256 << 20;

/// Every path accepts permessage-deflate; `?max=N` sets the message size limit.
/// - `/flood` sends 64 KiB binary messages until `send` fails, and records it in [`FLOODS`];
/// - any other path echoes text and binary messages.
async fn app(mut req: Request) -> Response {
    let flood = req.path() == "/flood";
    let max = req.query().and_then(|q| q.strip_prefix("max=")).and_then(|n| n.parse().ok());
    let version = req.version();
    let upgrade = match WebSocketUpgrade::from_request(&mut req) {
        Ok(upgrade) => upgrade,
        Err(refused) => return refused.into_response(),
    };
    let limits = Limits {
        max_message_size: max.unwrap_or(Limits::default().max_message_size),
        ..Limits::default()
    };
    let config = Config { limits, deflate: Some(DeflateConfig::default()), ..Config::default() };
    let upgrade = upgrade.config(config);
    if flood {
        return upgrade.on_upgrade(move |ws| flood_session(ws, version));
    }
    upgrade.on_upgrade(|mut ws| async move {
        let _live = Live::new();
        while let Some(Ok(msg)) = ws.recv().await {
            if matches!(msg, Message::Text(_) | Message::Binary(_)) && ws.send(msg).await.is_err() {
                break;
            }
        }
    })
}

async fn flood_session(mut ws: WebSocket, version: Version) {
    let message = Bytes::from(vec![0x5a; FLOOD_MESSAGE]);
    let start = Instant::now();
    let mut sent = 0;
    let error = loop {
        if sent * FLOOD_MESSAGE >= FLOOD_CAP {
            break Error::Closed;
        }
        match ws.send(Message::Binary(message.clone())).await {
            Ok(()) => sent += 1,
            Err(e) => break e,
        }
    };
    let flood = Flood { version, sent, error, elapsed: start.elapsed() };
    FLOODS.lock().unwrap_or_else(|e| e.into_inner()).push(flood);
}

/// Waits for `/flood`'s report.
async fn flood_report() -> Flood {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(f) = FLOODS.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return f;
        }
        assert!(Instant::now() < deadline, "the flood never ended");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Another client (tokio-tungstenite) has a message echoed, within 5 s.
async fn echo_still_served(addr: SocketAddr) {
    let url = format!("ws://{addr}/echo");
    let echo = async {
        let (mut ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        ws.send(tungstenite::Message::text("still here")).await.unwrap();
        assert_eq!(ws.next().await.unwrap().unwrap(), tungstenite::Message::text("still here"));
        ws.close(None).await.unwrap();
    };
    tokio::time::timeout(Duration::from_secs(5), echo)
        .await
        .expect("another connection is served meanwhile");
}

/// The opening handshake to `target`, offering permessage-deflate when `deflate`: the stream
/// and what followed the 101's head.
async fn open(addr: SocketAddr, target: &str, deflate: bool) -> (TcpStream, BytesMut) {
    let ext = if deflate { "sec-websocket-extensions: permessage-deflate\r\n" } else { "" };
    let request = format!(
        "GET {target} HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\
         sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n{ext}\r\n"
    );
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tcp.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed before the head: {:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end + 4]).into_owned();
            assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
            let agreed = head.contains("sec-websocket-extensions: permessage-deflate");
            assert_eq!(agreed, deflate, "{head}");
            return (tcp, BytesMut::from(&got[end + 4..]));
        }
    }
}

const KEY: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// A frame header: `first` is FIN, RSV and the opcode; the length says `len` whatever follows;
/// masked with [`KEY`] unless `masked` is false.
fn header(first: u8, len: u64, masked: bool) -> Vec<u8> {
    let m = if masked { 0x80 } else { 0 };
    let mut h = vec![first];
    match len {
        0..=125 => h.push(m | len as u8),
        126..=0xffff => {
            h.push(m | 126);
            h.extend_from_slice(&(len as u16).to_be_bytes());
        }
        _ => {
            h.push(m | 127);
            h.extend_from_slice(&len.to_be_bytes());
        }
    }
    if masked {
        h.extend_from_slice(&KEY);
    }
    h
}

/// `payload` masked with [`KEY`], from its first octet.
fn masked(payload: &[u8]) -> Vec<u8> {
    payload.iter().enumerate().map(|(i, b)| b ^ KEY[i % 4]).collect()
}

/// A whole masked frame.
fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = header(first, payload.len() as u64, true);
    f.extend_from_slice(&masked(payload));
    f
}

const FIN: u8 = 0x80;
const RSV1: u8 = 0x40;
const CONT: u8 = 0x0;
const TEXT: u8 = 0x1;
const BINARY: u8 = 0x2;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;

/// Reads the server's frames until its Close and returns the code; then the server must close
/// the connection (end of stream or reset), within 5 s each.
async fn close_code(tcp: &mut (impl AsyncRead + Unpin), mut input: BytesMut) -> CloseCode {
    let config = Arc::new(ws::Config::default());
    let mut conn = ws::Conn::new(ws::Role::Client, config, None, [9; 32], Instant::now());
    let mut buf = vec![0u8; 64 * 1024];
    let code = 'read: loop {
        while let Some(event) = conn.recv(&mut input, Instant::now()) {
            match event {
                Event::Close { code, .. } => break 'read code,
                Event::Error(e) => panic!("the server broke the protocol: {e}"),
                _ => {}
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
            .await
            .expect("the server closes within 5 s")
            .expect("the Close comes before the connection's end");
        assert!(n > 0, "the connection ended without a Close");
        input.extend_from_slice(&buf[..n]);
    };
    let end = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    });
    end.await.expect("the server closes the connection after its Close");
    code
}

/// Nothing comes from the server for a moment: the connection is still open, no Close sent.
async fn still_open(tcp: &mut TcpStream) {
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_millis(300), tcp.read(&mut buf)).await;
    assert!(read.is_err(), "the server answered early: {read:?}");
}

struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    code: CloseCode,
}

/// RFC 6455 §5.1, §5.2, §5.5: frames a header alone condemns, decided before any payload is
/// sent: a 2^63 length (its most significant bit "MUST be 0": 1002), lengths past the frame
/// limit (1009), fragmented and 126-byte control frames, an unmasked frame, reserved bits and
/// opcodes (1002).
#[test]
fn hostile_headers_get_their_close_codes() {
    let _serial = serial();
    let cases = [
        Case {
            name: "a 2^63 length",
            bytes: header(FIN | BINARY, 1 << 63, true),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "a length of 2^64 - 1",
            bytes: header(FIN | TEXT, u64::MAX, true),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "a length of 2^63 - 1",
            bytes: header(FIN | BINARY, (1 << 63) - 1, true),
            code: CloseCode::TOO_BIG,
        },
        Case {
            name: "one octet over the 16 MiB frame limit",
            bytes: header(FIN | BINARY, (16 << 20) + 1, true),
            code: CloseCode::TOO_BIG,
        },
        Case {
            name: "a fragmented Ping",
            bytes: frame(PING, b"part"),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "a fragmented Close",
            bytes: frame(CLOSE, b"\x03\xe8"),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "a 126-octet Ping",
            bytes: frame(FIN | PING, &[b'p'; 126]),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "a 126-octet Close",
            bytes: frame(FIN | CLOSE, &[b'c'; 126]),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "an unmasked text frame",
            bytes: [&header(FIN | TEXT, 2, false)[..], b"hi"].concat(),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "an unmasked Ping",
            bytes: header(FIN | PING, 0, false),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "RSV2 set",
            bytes: frame(FIN | 0x20 | BINARY, b"x"),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "RSV1 without permessage-deflate",
            bytes: frame(FIN | RSV1 | BINARY, b"x"),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case { name: "opcode 0x3", bytes: frame(FIN | 0x3, b"x"), code: CloseCode::PROTOCOL_ERROR },
        Case {
            name: "a continuation with no message begun",
            bytes: frame(FIN | CONT, b"x"),
            code: CloseCode::PROTOCOL_ERROR,
        },
    ];
    let server = server();
    let addr = server.local_addr();
    rt().block_on(async {
        for case in cases {
            let (mut tcp, rest) = open(addr, "/echo", false).await;
            echo_still_served(addr).await;
            tcp.write_all(&case.bytes).await.unwrap();
            assert_eq!(close_code(&mut tcp, rest).await, case.code, "{}", case.name);
            echo_still_served(addr).await;
        }
    });
    server.shutdown();
    server.join().unwrap();
}

/// A message in 1-octet fragments: the fragment limit (`Limits::max_fragments`, 65,536) fails
/// it with 1008 at the 65,537th frame, having buffered 64 KiB of it; a 100 MB message sent so
/// would otherwise cost a server 100 MB and 100 million frames' work.
#[test]
fn one_octet_fragments_stop_at_the_fragment_limit() {
    let _serial = serial();
    let server = server();
    let addr = server.local_addr();
    rt().block_on(async {
        let (mut tcp, rest) = open(addr, "/echo", false).await;
        let max = Limits::default().max_fragments as usize;
        let mut frames = frame(BINARY, b"x");
        let cont = frame(CONT, b"x");
        for _ in 1..max {
            frames.extend_from_slice(&cont);
        }
        let before = live_bytes::reset_peak();
        tcp.write_all(&frames).await.unwrap();
        // Every fragment up to the limit is taken, and the connection stays open.
        still_open(&mut tcp).await;
        echo_still_served(addr).await;
        tcp.write_all(&cont).await.unwrap();
        assert_eq!(close_code(&mut tcp, rest).await, CloseCode::POLICY);
        let growth = live_bytes::peak() - before;
        println!("{max} one-octet fragments: heap peak +{growth} B");
        assert!(growth < 4 << 20, "the server's heap grew {growth} B for 64 KiB of fragments");
        echo_still_served(addr).await;
    });
    server.shutdown();
    server.join().unwrap();
}

/// The message size limit counts fragments' payloads as they come: 1-octet fragments past
/// `max_message_size` fail the message with 1009 at the first octet over, before its end.
#[test]
fn one_octet_fragments_stop_at_the_message_limit() {
    let _serial = serial();
    let server = server();
    let addr = server.local_addr();
    rt().block_on(async {
        let (mut tcp, rest) = open(addr, "/echo?max=1000", false).await;
        let mut frames = frame(TEXT, b"x");
        for _ in 1..1000 {
            frames.extend_from_slice(&frame(CONT, b"x"));
        }
        tcp.write_all(&frames).await.unwrap();
        still_open(&mut tcp).await;
        echo_still_served(addr).await;
        tcp.write_all(&frame(CONT, b"x")).await.unwrap();
        assert_eq!(close_code(&mut tcp, rest).await, CloseCode::TOO_BIG);
        echo_still_served(addr).await;
    });
    server.shutdown();
    server.join().unwrap();
}

/// `mib` MiB of zeros as one permessage-deflate payload (RFC 7692 §7.2.1: raw deflate, the
/// final `00 00 ff ff` left out): a megabyte compressed once and repeated, each copy a
/// complete sync-flushed run of blocks that refers only to itself, so the copies chain.
fn deflate_bomb(mib: usize) -> Vec<u8> {
    let zeros = vec![0u8; 1 << 20];
    let mut c = flate2::Compress::new(flate2::Compression::best(), false);
    let mut chunk = Vec::with_capacity(64 << 10);
    c.compress_vec(&zeros, &mut chunk, flate2::FlushCompress::Sync).unwrap();
    assert_eq!(c.total_in(), 1 << 20);
    assert!(chunk.ends_with(&[0, 0, 0xff, 0xff]));
    let mut bomb = chunk.repeat(mib);
    bomb.truncate(bomb.len() - 4);
    bomb
}

/// RFC 7692 §8.1 and the size limit: a 1 MB message that inflates to 1 GiB fails with 1009
/// once its inflated size passes `max_message_size` (4 MiB here), and the server's heap grows
/// by a few times the limit at most, not by the gigabyte.
#[test]
fn a_deflate_bomb_gets_1009_within_the_limits_memory() {
    let _serial = serial();
    const LIMIT: usize = 4 << 20;
    let bomb = deflate_bomb(1024);
    assert!(bomb.len() < 2 << 20, "{}", bomb.len());
    let server = server();
    let addr = server.local_addr();
    rt().block_on(async {
        let (tcp, rest) = open(addr, &format!("/echo?max={LIMIT}"), true).await;
        let (mut rd, mut wr) = tcp.into_split();
        echo_still_served(addr).await;
        let before = live_bytes::reset_peak();
        // The writer runs apart: the server stops reading (and resets) once it has failed.
        let bomb_len = bomb.len();
        let frame =
            [&header(FIN | RSV1 | BINARY, bomb.len() as u64, true)[..], &masked(&bomb)].concat();
        let writer = tokio::spawn(async move {
            let _ = wr.write_all(&frame).await;
            wr
        });
        assert_eq!(close_code(&mut rd, rest).await, CloseCode::TOO_BIG);
        let growth = live_bytes::peak() - before;
        println!("deflate bomb: {} B inflating to 1 GiB; heap peak +{growth} B", bomb_len);
        // The frame itself (2 MB, in the test's writer) and the limit's buffer (capacity at
        // most 4 x the limit).
        assert!(growth < 24 << 20, "the heap grew {growth} B for a {LIMIT} B limit");
        let _ = writer.await;
        echo_still_served(addr).await;
    });
    server.shutdown();
    server.join().unwrap();
}

/// RFC 6455 §8.1: text is validated as it arrives, across fragments: a 4-octet sequence split
/// over three fragments whose last octet is not a continuation fails with 1007 there, before
/// the message's final fragment (never sent); so does an invalid octet early in one frame
/// whose rest never comes, and invalid text inside a compressed fragment.
#[test]
fn invalid_utf8_gets_1007_at_the_bad_octet() {
    let _serial = serial();
    let server = server();
    let addr = server.local_addr();
    rt().block_on(async {
        // "κόσμε " then F0 9F | 98 | 41: U+1F600's first three octets, then 'A'.
        let (mut tcp, rest) = open(addr, "/echo", false).await;
        let mut first = "κόσμε ".as_bytes().to_vec();
        first.extend_from_slice(b"\xf0\x9f");
        tcp.write_all(&frame(TEXT, &first)).await.unwrap();
        tcp.write_all(&frame(CONT, b"\x98")).await.unwrap();
        still_open(&mut tcp).await;
        echo_still_served(addr).await;
        tcp.write_all(&frame(CONT, b"\x41 and more")).await.unwrap();
        assert_eq!(close_code(&mut tcp, rest).await, CloseCode::INVALID_PAYLOAD);

        // One frame claiming 1000 octets; the tenth is invalid; the rest never comes.
        let (mut tcp, rest) = open(addr, "/echo", false).await;
        let mut start = header(FIN | TEXT, 1000, true);
        start.extend_from_slice(&masked(b"abcdefghi\xff"));
        tcp.write_all(&start).await.unwrap();
        assert_eq!(close_code(&mut tcp, rest).await, CloseCode::INVALID_PAYLOAD);

        // A compressed text message's first fragment inflates to invalid UTF-8.
        let (mut tcp, rest) = open(addr, "/echo", true).await;
        let mut c = flate2::Compress::new(flate2::Compression::default(), false);
        let mut payload = Vec::with_capacity(256);
        c.compress_vec(b"valid, then \xc3\x28", &mut payload, flate2::FlushCompress::Sync).unwrap();
        tcp.write_all(&frame(RSV1 | TEXT, &payload)).await.unwrap();
        assert_eq!(close_code(&mut tcp, rest).await, CloseCode::INVALID_PAYLOAD);
        echo_still_served(addr).await;
    });
    server.shutdown();
    server.join().unwrap();
}

/// A client that never reads while the server sends: `send` waits for the socket, so the
/// server holds about a message (not the stream) while the socket buffers fill, and after the
/// write timeout `send` fails with `TimedOut` and the connection is closed. Other connections
/// are served throughout.
#[test]
fn a_client_that_never_reads_is_cut_after_the_write_timeout() {
    let _serial = serial();
    let server = server();
    let addr = server.local_addr();
    rt().block_on(async {
        let before = live_bytes::reset_peak();
        let (mut tcp, rest) = open(addr, "/flood", false).await;
        tokio::time::sleep(WRITE_TIMEOUT / 2).await;
        echo_still_served(addr).await;
        let flood = flood_report().await;
        let growth = live_bytes::peak() - before;
        println!("HTTP/1.1 flood: {flood:?}; heap peak +{growth} B");
        assert!(matches!(flood.error, Error::TimedOut), "{flood:?}");
        assert_eq!(flood.version, Version::Http11);
        assert!(flood.elapsed >= WRITE_TIMEOUT, "{flood:?}");
        // What the sockets' buffers held (a few MB on loopback), not the flood's 256 MiB cap.
        assert!(flood.sent * FLOOD_MESSAGE < 32 << 20, "{flood:?}");
        assert!(growth < 8 << 20, "the heap grew {growth} B while the client did not read");
        // The client reads at last: what was written, then the end of the connection.
        let mut buf = vec![0u8; 64 * 1024];
        let mut got = rest.len();
        let end = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match tcp.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => got += n,
                }
            }
        });
        end.await.expect("the server closed the connection");
        assert!(got <= flood.sent * (FLOOD_MESSAGE + 4) + FLOOD_MESSAGE + 4, "{got} {flood:?}");
        echo_still_served(addr).await;
    });
    server.shutdown();
    server.join().unwrap();
}

/// A client that sends but never reads, to an echo: the echoes fill the server's socket, the
/// server stops reading (TCP pushes back on the client), and after the write timeout it closes
/// the connection; its heap stays bounded all along.
#[test]
fn a_client_that_sends_but_never_reads_is_cut() {
    let _serial = serial();
    let server = server();
    let addr = server.local_addr();
    rt().block_on(async {
        let before = live_bytes::reset_peak();
        let (mut tcp, _rest) = open(addr, "/echo", false).await;
        let message = frame(FIN | BINARY, &vec![7u8; 16 * 1024]);
        let start = Instant::now();
        let mut written = 0usize;
        let cut = loop {
            assert!(start.elapsed() < Duration::from_secs(20), "never cut after {written} B");
            match tokio::time::timeout(Duration::from_secs(1), tcp.write_all(&message)).await {
                Ok(Ok(())) => written += message.len(),
                Ok(Err(e)) => break e,
                // The server stopped reading: TCP pushes back.
                Err(_) => {}
            }
        };
        let elapsed = start.elapsed();
        assert!(elapsed >= WRITE_TIMEOUT, "cut after {elapsed:?}: {cut}");
        let growth = live_bytes::peak() - before;
        println!(
            "echo never read: cut after {elapsed:?} and {written} B ({cut}); heap peak +{growth} B"
        );
        assert!(growth < 8 << 20, "the heap grew {growth} B for {written} B sent");
        echo_still_served(addr).await;
    });
    server.shutdown();
    server.join().unwrap();
}

/// Over HTTP/2 (RFC 8441), a client that never reads gives no WINDOW_UPDATE: the session's
/// output waits in the stream's channel (bounded), the server resets the stalled stream after
/// the write timeout, the session's `send` fails, and the connection's other streams are
/// served.
#[test]
fn an_http2_stream_that_never_reads_is_reset_after_the_write_timeout() {
    let _serial = serial();
    let server = server();
    let addr = server.local_addr();
    rt().block_on(async {
        let before = live_bytes::reset_peak();
        let mut send = h2_connect(addr).await;
        let mut req = http::Request::builder()
            .method(http::Method::CONNECT)
            .uri(format!("http://{addr}/flood"))
            .header("sec-websocket-version", "13")
            .body(())
            .unwrap();
        req.extensions_mut().insert(h2::ext::Protocol::from_static("websocket"));
        let (response, _stream) = send.send_request(req, false).unwrap();
        let response = response.await.unwrap();
        assert_eq!(response.status(), 200);
        // Never read: no capacity released, no WINDOW_UPDATE.
        let mut body = response.into_body();
        echo_still_served(addr).await;
        let flood = flood_report().await;
        let growth = live_bytes::peak() - before;
        println!("HTTP/2 flood: {flood:?}; heap peak +{growth} B");
        assert_eq!(flood.version, Version::Http2);
        // The session's own write timeout, or the server's reset of the stalled stream first.
        assert!(matches!(flood.error, Error::TimedOut | Error::Io(_)), "{flood:?}");
        assert!(flood.elapsed >= WRITE_TIMEOUT, "{flood:?}");
        assert!(flood.sent < 16, "{flood:?}");
        assert!(growth < 8 << 20, "the heap grew {growth} B while the stream did not read");
        // The stream was reset after the data the window allowed; the connection serves on.
        let ended = tokio::time::timeout(Duration::from_secs(5), async {
            while let Some(chunk) = body.data().await {
                if let Err(e) = chunk {
                    return Some(e);
                }
            }
            None
        });
        let reset = ended.await.expect("the stream ends");
        assert_eq!(reset.and_then(|e| e.reason()), Some(h2::Reason::CANCEL));
        let mut send = send.ready().await.unwrap();
        let plain = http::Request::get(format!("http://{addr}/")).body(()).unwrap();
        let (response, _) = send.send_request(plain, true).unwrap();
        assert_eq!(response.await.unwrap().status(), 400);
    });
    server.shutdown();
    server.join().unwrap();
}

/// An h2 connection (the `h2` crate's client) whose SETTINGS, with extended CONNECT, arrived.
async fn h2_connect(addr: SocketAddr) -> h2::client::SendRequest<Bytes> {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (send, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    // The server's SETTINGS come with its first frames: a request first.
    let plain = http::Request::get(format!("http://{addr}/")).body(()).unwrap();
    let mut send = send.ready().await.unwrap();
    let (response, _) = send.send_request(plain, true).unwrap();
    assert_eq!(response.await.unwrap().status(), 400);
    let send = send.ready().await.unwrap();
    assert!(send.is_extended_connect_protocol_enabled());
    send
}

/// RFC 8441 §5: over HTTP/2 the stream's DATA carries the same frames under the same rules:
/// a hostile frame gets its close code in the stream's DATA, then the stream ends, and the
/// connection's other streams are served.
#[test]
fn hostile_frames_over_http2_get_their_close_codes() {
    let _serial = serial();
    let cases = [
        Case {
            name: "a 2^63 length",
            bytes: header(FIN | BINARY, 1 << 63, true),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "an unmasked text frame",
            bytes: [&header(FIN | TEXT, 2, false)[..], b"hi"].concat(),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "a 126-octet Ping",
            bytes: frame(FIN | PING, &[b'p'; 126]),
            code: CloseCode::PROTOCOL_ERROR,
        },
        Case {
            name: "invalid UTF-8 across fragments",
            bytes: [frame(TEXT, b"ok \xe2\x82"), frame(CONT, b"\x28")].concat(),
            code: CloseCode::INVALID_PAYLOAD,
        },
        Case {
            name: "over the message limit in fragments",
            bytes: [frame(BINARY, &[1; 600]), frame(CONT, &[2; 600])].concat(),
            code: CloseCode::TOO_BIG,
        },
    ];
    let server = server();
    let addr = server.local_addr();
    rt().block_on(async {
        let mut send = h2_connect(addr).await;
        for case in cases {
            let mut req = http::Request::builder()
                .method(http::Method::CONNECT)
                .uri(format!("http://{addr}/echo?max=1000"))
                .header("sec-websocket-version", "13")
                .body(())
                .unwrap();
            req.extensions_mut().insert(h2::ext::Protocol::from_static("websocket"));
            send = send.ready().await.unwrap();
            let (response, mut stream) = send.send_request(req, false).unwrap();
            let response = response.await.unwrap();
            assert_eq!(response.status(), 200, "{}", case.name);
            let mut body = response.into_body();
            stream.send_data(Bytes::from(case.bytes), false).unwrap();
            let config = Arc::new(ws::Config::default());
            let mut conn = ws::Conn::new(ws::Role::Client, config, None, [5; 32], Instant::now());
            let mut input = BytesMut::new();
            let mut code = None;
            let read = async {
                // Until the end of the stream: the Close comes in it, then END_STREAM.
                while let Some(chunk) = body.data().await {
                    let chunk = chunk.unwrap();
                    let _ = body.flow_control().release_capacity(chunk.len());
                    input.extend_from_slice(&chunk);
                    while let Some(event) = conn.recv(&mut input, Instant::now()) {
                        if let Event::Close { code: c, .. } = event {
                            code = Some(c);
                        }
                    }
                }
            };
            tokio::time::timeout(Duration::from_secs(5), read).await.expect("the stream ends");
            assert_eq!(code, Some(case.code), "{}", case.name);
            echo_still_served(addr).await;
        }
    });
    server.shutdown();
    server.join().unwrap();
}

/// Regression (HTTP/2, the client's end of stream): a client that went away without a Close,
/// its TCP connection closed, left its extended CONNECT session waiting for DATA that could no
/// longer come, and the server's side of the connection open (CLOSE-WAIT) for as long as the
/// session lived: without an idle timeout, for ever. At the end of stream the request bodies
/// still open now fail (they cannot end any more), the session's `recv` reports it, and the
/// connection closes.
#[test]
fn an_http2_client_gone_without_a_close_ends_its_session() {
    let _serial = serial();
    let server = server();
    let addr = server.local_addr();
    rt().block_on(async {
        let tcp = TcpStream::connect(addr).await.unwrap();
        let watch = tcp.into_std().unwrap();
        let probe = watch.try_clone().unwrap();
        let tcp = TcpStream::from_std(watch).unwrap();
        let (send, conn) = h2::client::handshake(tcp).await.unwrap();
        let driver = tokio::spawn(async move {
            let _ = conn.await;
        });
        let plain = http::Request::get(format!("http://{addr}/")).body(()).unwrap();
        let mut send = send.ready().await.unwrap();
        let (response, _) = send.send_request(plain, true).unwrap();
        assert_eq!(response.await.unwrap().status(), 400);
        let mut send = send.ready().await.unwrap();
        let mut req = http::Request::builder()
            .method(http::Method::CONNECT)
            .uri(format!("http://{addr}/echo"))
            .header("sec-websocket-version", "13")
            .body(())
            .unwrap();
        req.extensions_mut().insert(h2::ext::Protocol::from_static("websocket"));
        let (response, mut stream) = send.send_request(req, false).unwrap();
        let response = response.await.unwrap();
        assert_eq!(response.status(), 200);
        let mut body = response.into_body();
        stream.send_data(Bytes::from(frame(FIN | TEXT, b"hello")), false).unwrap();
        let echo = body.data().await.unwrap().unwrap();
        assert_eq!(&echo[..], b"\x81\x05hello");
        assert_eq!(SESSIONS.load(Ordering::SeqCst), 1);
        // Gone: the connection's task stops, the socket closes (FIN), no Close, no RST_STREAM.
        driver.abort();
        let _ = driver.await;
        drop((send, stream, body));
        probe.shutdown(std::net::Shutdown::Both).unwrap();
        let deadline = Instant::now() + Duration::from_secs(3);
        while SESSIONS.load(Ordering::SeqCst) > 0 {
            assert!(Instant::now() < deadline, "the session outlived its client");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        echo_still_served(addr).await;
    });
    server.shutdown();
    server.join().unwrap();
}
