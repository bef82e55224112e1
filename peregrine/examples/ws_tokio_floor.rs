//! The tokio floor for `bench/ws.sh` and `bench/callgrind_ws.sh`: the least work a WebSocket
//! echo server built on tokio can do per message, as `bench/floor_ws_echo.c` is the least any
//! server can do. One current-thread runtime (one worker), TCP_NODELAY, each connection an
//! `unconstrained` task like the peers'. A connection's first bytes are its opening handshake:
//! read up to the blank line, the `Sec-WebSocket-Key` answered with a canned 101 (nothing else
//! of the request is checked). Then each `read` is followed, for every whole frame in it, by
//! unmasking the payload (`ws::mask::apply`) and appending an unmasked frame with the same
//! opcode and payload to one output buffer, sent with one `write_all`: one read and one write
//! per message at one message in flight. A Close is answered with a Close; Pings, fragments,
//! UTF-8 and limits are not looked at.
//!
//! It is NOT a server: it tells how much of a tokio server's user-space work per message is
//! tokio's own (the reactor, the task's wake-up, the read and write futures), which every Rust
//! peer of the benchmark (fastwebsockets, tokio-websockets, tungstenite) and peregrine share.
//!
//! ```text
//! cargo run --release --example ws_tokio_floor -- --addr 127.0.0.1:9006
//! ```

use peregrine::ws::{handshake::accept_key, mask};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[path = "shared/tokio_peer.rs"]
mod tokio_peer;

fn main() -> std::io::Result<()> {
    tokio_peer::run("ws_tokio_floor", "127.0.0.1:9006", |stream| {
        tokio::task::unconstrained(async move {
            let _ = echo(stream).await;
        })
    })
}

/// The handshake, then frames echoed until a Close or the end of the stream.
async fn echo(mut stream: TcpStream) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut filled = 0;
    let head_end = loop {
        if let Some(end) = buf[..filled].windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        if filled == buf.len() {
            return Ok(());
        }
        let n = stream.read(&mut buf[filled..]).await?;
        if n == 0 {
            return Ok(());
        }
        filled += n;
    };
    let key = buf[..head_end]
        .split(|&b| b == b'\n')
        .find_map(|line| {
            let (name, value) = line.split_at(line.iter().position(|&b| b == b':')?);
            name.eq_ignore_ascii_case(b"sec-websocket-key").then(|| value[1..].trim_ascii())
        })
        .unwrap_or_default();
    let mut out = Vec::with_capacity(64 * 1024);
    out.extend_from_slice(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Accept: ",
    );
    out.extend_from_slice(&accept_key(key));
    out.extend_from_slice(b"\r\n\r\n");
    stream.write_all(&out).await?;
    buf.copy_within(head_end..filled, 0);
    filled -= head_end;

    loop {
        out.clear();
        let mut at = 0;
        let mut closed = false;
        // Every whole frame read so far: RFC 6455 §5.2's header, the client's masking key, the
        // payload unmasked in place and echoed unmasked.
        while let Some((header, len)) = frame_at(&buf[at..filled]) {
            let (opcode, key) = (buf[at] & 0x0f, [0, 1, 2, 3].map(|i| buf[at + header - 4 + i]));
            let payload = &mut buf[at + header..at + header + len];
            mask::apply(payload, key, 0);
            out.push(0x80 | opcode);
            match len {
                0..=125 => out.push(len as u8),
                126..=0xffff => {
                    out.push(126);
                    out.extend_from_slice(&(len as u16).to_be_bytes());
                }
                _ => {
                    out.push(127);
                    out.extend_from_slice(&(len as u64).to_be_bytes());
                }
            }
            out.extend_from_slice(payload);
            at += header + len;
            if opcode == 8 {
                closed = true;
                break;
            }
        }
        if !out.is_empty() {
            stream.write_all(&out).await?;
        }
        if closed {
            return Ok(());
        }
        buf.copy_within(at..filled, 0);
        filled -= at;
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = stream.read(&mut buf[filled..]).await?;
        if n == 0 {
            return Ok(());
        }
        filled += n;
    }
}

/// The header length and payload length of the masked frame at the start of `bytes`, if the
/// whole frame is there.
fn frame_at(bytes: &[u8]) -> Option<(usize, usize)> {
    let len7 = usize::from(*bytes.get(1)? & 0x7f);
    let (header, len): (usize, usize) = match len7 {
        126 => (8, usize::from(u16::from_be_bytes(bytes.get(2..4)?.try_into().ok()?))),
        127 => (14, u64::from_be_bytes(bytes.get(2..10)?.try_into().ok()?) as usize),
        n => (6, n),
    };
    (bytes.len() >= header.checked_add(len)?).then_some((header, len))
}
