//! The hostile clients. Each attempt is bounded in time, and a client stops only between
//! attempts, so every slowloris head it starts is one the server times out (one 408 line).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{sleep, timeout};

use crate::ctx::{Bad, Ctx, Rng, pacer};

fn bad_get(path: &str) -> String {
    format!("GET /{path} HTTP/1.1\r\nHost: soak\r\nUser-Agent: soak-bad\r\n\r\n")
}

/// Reads until the peer closes (or resets); `Err` if it is still open after `limit`.
async fn closed_within(tcp: &mut TcpStream, limit: Duration) -> Result<Vec<u8>, String> {
    let mut got = Vec::new();
    let read = timeout(limit, async {
        let mut buf = [0u8; 4096];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    read.map(|()| got).map_err(|_| format!("still open after {limit:?}"))
}

pub async fn run(ctx: Arc<Ctx>, class: Bad, seed: u64, per_s: f64) {
    let mut rng = Rng::new(seed);
    let mut pace = pacer(per_s);
    while !ctx.bad_stopped() {
        pace.tick().await;
        let outcome = match class {
            Bad::Slowloris => slowloris(&ctx).await,
            Bad::AbandonedUpload => abandoned_upload(&ctx, &mut rng).await,
            Bad::StoppedReader => stopped_reader(&ctx).await,
            Bad::Reset => reset(&ctx, &mut rng).await,
            Bad::RapidReset => rapid_reset(&ctx).await,
            Bad::H2Frame => bad_frame(&ctx).await,
            Bad::H1Head => bad_head(&ctx).await,
        };
        ctx.bad(class, outcome);
    }
}

async fn tcp(addr: &str) -> Result<TcpStream, String> {
    TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))
}

/// A head sent a field line at a time, every 500 ms, never finished: the server must close
/// the connection once its header timeout passes (and log 408).
async fn slowloris(ctx: &Ctx) -> Result<(), String> {
    let mut s = tcp(&ctx.plain).await?;
    let started = Instant::now();
    let limit = ctx.header_timeout + Duration::from_secs(5);
    let _ = s.write_all(b"GET /small.txt HTTP/1.1\r\nHost: soak\r\nUser-Agent: soak-bad\r\n").await;
    let mut buf = [0u8; 512];
    while started.elapsed() < limit {
        if s.write_all(b"X-Slow: 1\r\n").await.is_err() {
            return Ok(());
        }
        // Bytes from the server (a 408 response) before it closes are allowed.
        if let Ok(Ok(0) | Err(_)) = timeout(Duration::from_millis(500), s.read(&mut buf)).await {
            return Ok(());
        }
    }
    Err(format!("a head trickling for {limit:?} was not cut"))
}

/// An upload through the proxy announcing 1 MiB, of which 64 KiB come, then the client leaves.
async fn abandoned_upload(ctx: &Ctx, rng: &mut Rng) -> Result<(), String> {
    let mut s = tcp(&ctx.proxy).await?;
    let head = "POST /soak/echo HTTP/1.1\r\nHost: soak\r\nUser-Agent: soak-bad\r\nContent-Length: 1048576\r\n\r\n";
    let _ = s.write_all(head.as_bytes()).await;
    let _ = s.write_all(&rng.bytes(64 << 10)).await;
    sleep(Duration::from_millis(200)).await;
    Ok(())
}

/// Four pipelined requests for the largest file, then nothing read for five seconds.
async fn stopped_reader(ctx: &Ctx) -> Result<(), String> {
    let mut s = tcp(&ctx.plain).await?;
    let _ = s.write_all(bad_get("big.bin").repeat(4).as_bytes()).await;
    sleep(Duration::from_secs(5)).await;
    Ok(())
}

/// A large response read in part, then the connection reset (SO_LINGER 0).
async fn reset(ctx: &Ctx, rng: &mut Rng) -> Result<(), String> {
    let mut s = tcp(&ctx.plain).await?;
    let _ = s.write_all(bad_get("big.bin").as_bytes()).await;
    let want = 1 + rng.below(128 << 10);
    let mut got = 0;
    let mut buf = vec![0u8; 16 << 10];
    while got < want {
        match timeout(Duration::from_secs(5), s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got += n,
            _ => break,
        }
    }
    let std = s.into_std().map_err(|e| e.to_string())?;
    socket2::SockRef::from(&std).set_linger(Some(Duration::ZERO)).map_err(|e| e.to_string())?;
    drop(std);
    Ok(())
}

/// HTTP/2 rapid reset (CVE-2023-44487): 200 streams opened and cancelled at once. The server
/// may go on or end the connection with GOAWAY; either is fine, as long as it lives on.
async fn rapid_reset(ctx: &Ctx) -> Result<(), String> {
    let tcp = tcp(&ctx.plain).await?;
    let (send, conn) = h2::client::handshake(tcp).await.map_err(|e| e.to_string())?;
    let conn = tokio::spawn(conn);
    let uri = format!("http://{}/big.bin", ctx.plain);
    for _ in 0..200 {
        let Ok(mut send) = send.clone().ready().await else { break };
        let req = http::Request::get(&uri).header("user-agent", "soak-bad").body(()).unwrap();
        match send.send_request(req, false) {
            Ok((_, mut stream)) => stream.send_reset(h2::Reason::CANCEL),
            Err(_) => break,
        }
    }
    drop(send);
    let _ = timeout(Duration::from_secs(5), conn).await;
    Ok(())
}

/// The HTTP/2 preface, then a DATA frame on stream 0 (a connection error, RFC 9113 §6.1): the
/// server must close the connection (after a GOAWAY).
async fn bad_frame(ctx: &Ctx) -> Result<(), String> {
    let mut s = tcp(&ctx.plain).await?;
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]); // SETTINGS, empty
    out.extend_from_slice(&[0, 0, 4, 0, 0, 0, 0, 0, 0, b'b', b'a', b'd', b'!']); // DATA on 0
    let _ = s.write_all(&out).await;
    let got = closed_within(&mut s, Duration::from_secs(10)).await?;
    // A GOAWAY frame (type 7) somewhere in what came back.
    if got.windows(4).any(|w| w[3] == 7 && w[0] == 0) {
        Ok(())
    } else {
        Err(format!("closed without a GOAWAY ({} bytes)", got.len()))
    }
}

/// A head with a field line without a colon: 400, then the connection closed.
async fn bad_head(ctx: &Ctx) -> Result<(), String> {
    let mut s = tcp(&ctx.plain).await?;
    let _ = s.write_all(b"GET /small.txt HTTP/1.1\r\nHost: soak\r\nUser-Agent: soak-bad\r\nNo colon here\r\n\r\n").await;
    let got = closed_within(&mut s, Duration::from_secs(10)).await?;
    if got.starts_with(b"HTTP/1.1 400 ") {
        Ok(())
    } else {
        Err(format!("answered {:?}", String::from_utf8_lossy(&got[..got.len().min(40)])))
    }
}
