//! The HTTP/2 clients (h2c by prior knowledge and h2 over TLS, `h2` crate), each sending a few
//! streams at once, and the WebSocket echo client through the proxy (tokio-tungstenite).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use h2::client::SendRequest;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

use crate::batch::{self, Outcome};
use crate::ctx::{Ctx, Good, Rng, pacer};
use crate::h1::Resp;

/// A connection and whether any byte of the server's has come in on it.
#[derive(Clone)]
pub struct H2 {
    send: SendRequest<Bytes>,
    heard: Arc<AtomicBool>,
}

pub async fn connect(ctx: &Ctx, tls: bool) -> std::io::Result<H2> {
    let addr = if tls { &ctx.tls } else { &ctx.plain };
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let heard = Arc::new(AtomicBool::new(false));
    let tcp = Heard { io: tcp, heard: heard.clone() };
    let h2err = |e: h2::Error| std::io::Error::other(e.to_string());
    let send = if tls {
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let io = ctx.tls_h2.connect(name, tcp).await?;
        let (send, conn) = h2::client::handshake(io).await.map_err(h2err)?;
        tokio::spawn(conn);
        send
    } else {
        let (send, conn) = h2::client::handshake(tcp).await.map_err(h2err)?;
        tokio::spawn(conn);
        send
    };
    Ok(H2 { send, heard })
}

/// A socket that notes when the first byte is read from it.
struct Heard {
    io: TcpStream,
    heard: Arc<AtomicBool>,
}

impl AsyncRead for Heard {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.heard.store(true, Ordering::Relaxed);
        }
        polled
    }
}

impl AsyncWrite for Heard {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Whether `e` is the connection's reset.
fn reset(e: &h2::Error) -> bool {
    e.get_io().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionReset)
}

/// One request on `conn`: a reset before any byte of the server's during the drain is the
/// client's end ([`Outcome::Ended`]).
async fn fetch(ctx: &Ctx, conn: H2, uri: String) -> Outcome {
    let H2 { send, heard } = conn;
    let req = http::Request::get(uri).header("user-agent", "soak-good").body(()).unwrap();
    let unprocessed = |e: &h2::Error| {
        e.reason() == Some(h2::Reason::REFUSED_STREAM) || (e.is_go_away() && e.is_remote())
    };
    let mut send = match send.ready().await {
        Ok(s) => s,
        Err(e) if unprocessed(&e) => return Outcome::Unprocessed,
        Err(e) => return Outcome::Failed(format!("ready: {e}")),
    };
    let res = match send.send_request(req, true) {
        Ok((res, _)) => res,
        Err(e) if unprocessed(&e) => return Outcome::Unprocessed,
        Err(e) => return Outcome::Failed(format!("send: {e}")),
    };
    let res = match res.await {
        Ok(res) => res,
        Err(e) if unprocessed(&e) => return Outcome::Unprocessed,
        Err(e) if reset(&e) && ctx.draining() && !heard.load(Ordering::Relaxed) => {
            return Outcome::Ended;
        }
        Err(e) => return Outcome::Failed(format!("response: {e}")),
    };
    let status = res.status().as_u16();
    let headers =
        res.headers().iter().map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec())).collect();
    let mut body = res.into_body();
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        match chunk {
            Ok(c) => {
                let _ = body.flow_control().release_capacity(c.len());
                data.extend_from_slice(&c);
            }
            Err(e) => return Outcome::Failed(format!("body: {e}")),
        }
    }
    Outcome::Answered(Resp { status, headers, body: data })
}

/// `streams` requests at once on one connection, `per_s` times a second.
pub async fn client(ctx: Arc<Ctx>, tls: bool, seed: u64, per_s: f64, streams: usize) {
    let class = if tls { Good::H2Tls } else { Good::H2c };
    let (scheme, addr) = if tls { ("https", "localhost") } else { ("http", ctx.plain.as_str()) };
    let base = format!("{scheme}://{addr}");
    let open = || {
        let ctx = ctx.clone();
        async move { connect(&ctx, tls).await.map_err(|e| format!("connect: {e}")) }
    };
    let fetch = |conn, name| {
        let (ctx, uri) = (ctx.clone(), format!("{base}/{name}"));
        async move { fetch(&ctx, conn, uri).await }
    };
    batch::run(&ctx, class, seed, per_s, streams, open, fetch).await;
}

/// WebSocket echo through the proxy: a binary message of random length, the same back.
pub async fn ws(ctx: Arc<Ctx>, seed: u64, per_s: f64) {
    let class = Good::Ws;
    let mut rng = Rng::new(seed);
    let mut pace = pacer(per_s);
    let mut ws = None;
    while !ctx.good_stopped() {
        pace.tick().await;
        if ws.is_none() {
            let url = format!("ws://{}/soak/ws", ctx.proxy);
            let opened = match TcpStream::connect(&ctx.proxy).await {
                Ok(tcp) => {
                    tokio_tungstenite::client_async(url, tcp).await.map_err(|e| e.to_string())
                }
                Err(e) => Err(e.to_string()),
            };
            match opened {
                Ok((s, _)) => ws = Some(s),
                Err(e) => {
                    ctx.fail(class, format!("opening: {e}"));
                    continue;
                }
            }
        }
        let s = ws.as_mut().unwrap();
        let len = 1 + rng.below(16 << 10);
        let msg = rng.bytes(len);
        let started = Instant::now();
        let echoed = async {
            s.send(Message::binary(msg.clone())).await.map_err(|e| e.to_string())?;
            loop {
                match s.next().await {
                    Some(Ok(Message::Binary(b))) => return Ok(b),
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    Some(Ok(other)) => return Err(format!("unexpected {other:?}")),
                    Some(Err(e)) => return Err(e.to_string()),
                    None => return Err("closed".to_owned()),
                }
            }
        }
        .await;
        match echoed {
            Ok(b) if b[..] == msg[..] => ctx.ok(class, msg.len(), started),
            Ok(b) => {
                ctx.fail(class, format!("echo differs: {} bytes for {}", b.len(), msg.len()));
                ws = None;
            }
            Err(why) => {
                ctx.fail(class, why);
                ws = None;
            }
        }
    }
    if let Some(mut s) = ws {
        let _ = s.close(None).await;
    }
}
