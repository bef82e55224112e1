//! The HTTP/1.1 clients: a small client over any stream that reads responses by
//! Content-Length or chunked framing, and the good clients built on it (keep-alive, pipelined,
//! ranges, conditional, compressed, over TLS, uploads and the panicking path through the
//! proxy). Every body is compared with what it must be.

use std::io::{self, Read};
use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::ctx::{Ctx, Good, Rng, Target, pacer};
use crate::site::pick;

pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}
pub type Conn = Box<dyn Io>;

pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| &v[..])
    }

    pub fn closes(&self) -> bool {
        self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case(b"close"))
    }
}

pub async fn connect(ctx: &Ctx, target: Target) -> io::Result<Conn> {
    let addr = match target {
        Target::Plain => &ctx.plain,
        Target::Tls => &ctx.tls,
        Target::Proxy => &ctx.proxy,
    };
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    if target == Target::Tls {
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        return Ok(Box::new(ctx.tls_h1.connect(name, tcp).await?));
    }
    Ok(Box::new(tcp))
}

async fn fill<S: AsyncRead + Unpin + ?Sized>(s: &mut S, buf: &mut Vec<u8>) -> io::Result<usize> {
    buf.reserve(32 << 10);
    s.read_buf(buf).await
}

/// Reads one response. `Ok(None)`: the connection ended before its first byte.
pub async fn read_response<S: AsyncRead + Unpin + ?Sized>(
    s: &mut S,
    buf: &mut Vec<u8>,
) -> io::Result<Option<Resp>> {
    let (status, headers, head_len) = loop {
        let mut fields = [httparse::EMPTY_HEADER; 32];
        let mut r = httparse::Response::new(&mut fields);
        match r.parse(buf) {
            Ok(httparse::Status::Complete(n)) => {
                let headers = r
                    .headers
                    .iter()
                    .map(|h| (h.name.to_owned(), h.value.to_vec()))
                    .collect::<Vec<_>>();
                break (r.code.unwrap_or(0), headers, n);
            }
            Ok(httparse::Status::Partial) => {}
            Err(e) => return Err(io::Error::other(format!("bad response head: {e}"))),
        }
        if fill(s, buf).await? == 0 {
            if buf.is_empty() {
                return Ok(None);
            }
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    };
    buf.drain(..head_len);
    let mut resp = Resp { status, headers, body: Vec::new() };
    if status == 304 || status == 204 || (100..200).contains(&status) {
        return Ok(Some(resp));
    }
    if let Some(len) = resp.header("content-length") {
        let len: usize = std::str::from_utf8(len)
            .ok()
            .and_then(|l| l.parse().ok())
            .ok_or_else(|| io::Error::other("bad content-length"))?;
        while buf.len() < len {
            if fill(s, buf).await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        resp.body = buf.drain(..len).collect();
    } else if resp.header("transfer-encoding").is_some() {
        resp.body = read_chunked(s, buf).await?;
    } else {
        while fill(s, buf).await? != 0 {}
        resp.body = std::mem::take(buf);
    }
    Ok(Some(resp))
}

/// RFC 9112 §7.1: chunk sizes in hex, then data and CRLF, to a zero chunk and the trailer
/// section's empty line.
async fn read_chunked<S: AsyncRead + Unpin + ?Sized>(
    s: &mut S,
    buf: &mut Vec<u8>,
) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(s, buf).await?;
        let hex = line.split(|&b| b == b';').next().unwrap_or_default();
        let size = usize::from_str_radix(std::str::from_utf8(hex).unwrap_or("x").trim(), 16)
            .map_err(|_| io::Error::other("bad chunk size"))?;
        if size == 0 {
            while !read_line(s, buf).await?.is_empty() {}
            return Ok(body);
        }
        while buf.len() < size + 2 {
            if fill(s, buf).await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        body.extend(buf.drain(..size));
        buf.drain(..2);
    }
}

async fn read_line<S: AsyncRead + Unpin + ?Sized>(
    s: &mut S,
    buf: &mut Vec<u8>,
) -> io::Result<Vec<u8>> {
    loop {
        if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
            let line = buf[..i].to_vec();
            buf.drain(..i + 2);
            return Ok(line);
        }
        if fill(s, buf).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
}

/// What a response must be.
pub enum Expect {
    /// 200 and the whole file.
    File(&'static str),
    /// 206 and bytes `start..=end` of the file.
    Range(&'static str, usize, usize),
    /// 304 and no body.
    NotModified,
    /// 200, `Content-Encoding` as asked, and the file once decoded.
    Coded(&'static str, &'static str),
    /// 200 and this body (the backend's echo).
    Echo(Vec<u8>),
    /// This status, any body.
    Status(u16),
}

/// Checks a response; `Ok(bytes verified)`.
pub fn verify(ctx: &Ctx, resp: &Resp, expect: &Expect) -> Result<usize, String> {
    let status = |want: u16| {
        if resp.status == want {
            Ok(())
        } else {
            Err(format!("status {} instead of {want}", resp.status))
        }
    };
    let same = |got: &[u8], want: &[u8]| {
        if got == want {
            Ok(got.len())
        } else {
            let at = got.iter().zip(want).position(|(a, b)| a != b);
            Err(format!(
                "body differs: {} bytes for {}, first difference at {at:?}",
                got.len(),
                want.len()
            ))
        }
    };
    match expect {
        Expect::File(name) => {
            status(200)?;
            same(&resp.body, ctx.file(name))
        }
        Expect::Range(name, a, b) => {
            status(206)?;
            same(&resp.body, &ctx.file(name)[*a..=*b])
        }
        Expect::NotModified => {
            status(304)?;
            if resp.body.is_empty() { Ok(0) } else { Err("a body with 304".into()) }
        }
        Expect::Coded(name, coding) => {
            status(200)?;
            let got = resp.header("content-encoding").unwrap_or_default();
            if got != coding.as_bytes() {
                return Err(format!(
                    "content-encoding {:?} instead of {coding}",
                    String::from_utf8_lossy(got)
                ));
            }
            let decoded =
                decode(coding, &resp.body).map_err(|e| format!("{coding} decoding: {e}"))?;
            same(&decoded, ctx.file(name))
        }
        Expect::Echo(body) => {
            status(200)?;
            same(&resp.body, body)
        }
        Expect::Status(s) => status(*s).map(|()| 0),
    }
}

fn decode(coding: &str, body: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    match coding {
        "gzip" => flate2::read::GzDecoder::new(body).read_to_end(&mut out)?,
        "br" => brotli::Decompressor::new(body, 4096).read_to_end(&mut out)?,
        _ => zstd::stream::read::Decoder::new(body)?.read_to_end(&mut out)?,
    };
    Ok(out)
}

pub fn get(path: &str, extra: &str) -> Vec<u8> {
    format!("GET /{path} HTTP/1.1\r\nHost: soak\r\nUser-Agent: soak-good\r\n{extra}\r\n")
        .into_bytes()
}

fn post(path: &str, body: &[u8]) -> Vec<u8> {
    let mut req = format!(
        "POST /{path} HTTP/1.1\r\nHost: soak\r\nUser-Agent: soak-good\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    req
}

/// The next request of a one-at-a-time client and what must come back.
fn next_request(class: Good, rng: &mut Rng, etag: &mut Option<String>) -> (Vec<u8>, Expect) {
    match class {
        Good::Range => {
            let len = ctx_len("big.bin");
            let a = rng.below(len);
            let b = (a + rng.below(64 << 10)).min(len - 1);
            (get("big.bin", &format!("Range: bytes={a}-{b}\r\n")), Expect::Range("big.bin", a, b))
        }
        Good::Conditional => match etag {
            Some(tag) if rng.below(10) != 0 => {
                (get("mid.bin", &format!("If-None-Match: {tag}\r\n")), Expect::NotModified)
            }
            // Now and then an ETag that does not match: the whole file again.
            Some(_) => {
                (get("mid.bin", "If-None-Match: \"soak-other\"\r\n"), Expect::File("mid.bin"))
            }
            None => (get("mid.bin", ""), Expect::File("mid.bin")),
        },
        Good::Compressed => {
            let coding = ["gzip", "br", "zstd"][rng.below(3)];
            (
                get("app.js", &format!("Accept-Encoding: {coding}\r\n")),
                Expect::Coded("app.js", coding),
            )
        }
        Good::Upload => {
            let len = rng.below(128 << 10);
            let body = rng.bytes(len);
            (post("soak/echo", &body), Expect::Echo(body))
        }
        _ => {
            let name = pick(rng);
            (get(name, ""), Expect::File(name))
        }
    }
}

fn ctx_len(name: &str) -> usize {
    crate::site::FILES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s).unwrap_or(1)
}

/// A kept-alive connection and its read buffer; `used` once a response came on it.
pub struct Kept {
    conn: Conn,
    buf: Vec<u8>,
    used: bool,
}

pub enum Sent {
    Answered(Resp),
    /// Closed before the response's first byte on a connection that had served others: the
    /// request was not read, and is sent again.
    Unread,
}

/// Sends `req` on the kept connection (a new one if none) and reads its response.
/// `Err(None)`: a refused connection while draining, the client's end.
pub async fn exchange(
    ctx: &Ctx,
    target: Target,
    kept: &mut Option<Kept>,
    req: &[u8],
) -> Result<Sent, Option<String>> {
    if kept.is_none() {
        match connect(ctx, target).await {
            Ok(conn) => *kept = Some(Kept { conn, buf: Vec::new(), used: false }),
            Err(_) if ctx.draining() => return Err(None),
            Err(e) => return Err(Some(format!("connect: {e}"))),
        }
    }
    let k = kept.as_mut().unwrap();
    let res = async {
        k.conn.write_all(req).await?;
        read_response(&mut k.conn, &mut k.buf).await
    }
    .await;
    match res {
        Ok(Some(resp)) => {
            k.used = true;
            if resp.closes() {
                *kept = None;
            }
            Ok(Sent::Answered(resp))
        }
        Ok(None) if k.used => {
            *kept = None;
            Ok(Sent::Unread)
        }
        // After SIGTERM, a new connection the kernel queued while the listener closed is
        // reset unread: as a refused connection, the client's end.
        Ok(None) if ctx.draining() => {
            *kept = None;
            Err(None)
        }
        Err(e)
            if ctx.draining() && k.buf.is_empty() && e.kind() == io::ErrorKind::ConnectionReset =>
        {
            *kept = None;
            Err(None)
        }
        Ok(None) => {
            *kept = None;
            Err(Some("closed before any response on a new connection".into()))
        }
        // A reset instead of a clean close on a kept connection before any byte came back is
        // the same race seen through a peer that had unread bytes (our request) when it closed.
        Err(e) if k.used && k.buf.is_empty() && e.kind() == io::ErrorKind::ConnectionReset => {
            *kept = None;
            Ok(Sent::Unread)
        }
        Err(e) => {
            *kept = None;
            Err(Some(format!("{e}")))
        }
    }
}

/// A client sending one request at a time on a kept-alive connection.
pub async fn one_at_a_time(ctx: Arc<Ctx>, class: Good, seed: u64, per_s: f64) {
    let mut rng = Rng::new(seed);
    let mut pace = pacer(per_s);
    let mut kept = None;
    let mut etag = None;
    while !ctx.good_stopped() {
        pace.tick().await;
        let (req, expect) = next_request(class, &mut rng, &mut etag);
        let started = Instant::now();
        let mut tries = 0;
        loop {
            match exchange(&ctx, class.target(), &mut kept, &req).await {
                Ok(Sent::Answered(resp)) => {
                    if class == Good::Conditional && etag.is_none() {
                        etag = resp.header("etag").map(|t| String::from_utf8_lossy(t).into_owned());
                    }
                    match verify(&ctx, &resp, &expect) {
                        Ok(n) => ctx.ok(class, n, started),
                        Err(why) => ctx.fail(class, why),
                    }
                }
                Ok(Sent::Unread) if tries < 3 => {
                    tries += 1;
                    ctx.retried(class, 1);
                    continue;
                }
                Ok(Sent::Unread) => ctx.fail(class, "closed unread three times"),
                Err(None) => return,
                Err(Some(why)) => ctx.fail(class, why),
            }
            break;
        }
    }
}

/// A client sending `depth` requests in one write and reading the answers in order; after a
/// `Connection: close` answer the rest are sent again on a new connection (RFC 9112 §9.3.2).
pub async fn pipelined(ctx: Arc<Ctx>, seed: u64, per_s: f64, depth: usize) {
    let class = Good::Pipelined;
    let mut rng = Rng::new(seed);
    let mut pace = pacer(per_s);
    let mut kept: Option<Kept> = None;
    while !ctx.good_stopped() {
        pace.tick().await;
        let mut todo: Vec<&'static str> = (0..depth).map(|_| pick(&mut rng)).collect();
        let started = Instant::now();
        // A draining server may answer one request a connection; only connections that
        // answer nothing count against the client.
        let mut stalls = 0;
        while !todo.is_empty() {
            if stalls > 3 {
                ctx.fail(
                    class,
                    format!("{} requests unanswered on 4 connections in a row", todo.len()),
                );
                break;
            }
            if kept.is_none() {
                match connect(&ctx, Target::Plain).await {
                    Ok(conn) => kept = Some(Kept { conn, buf: Vec::new(), used: false }),
                    Err(_) if ctx.draining() => return,
                    Err(e) => {
                        ctx.fail(class, format!("connect: {e}"));
                        break;
                    }
                }
            }
            let k = kept.as_mut().unwrap();
            let batch: Vec<u8> = todo.iter().flat_map(|name| get(name, "")).collect();
            if let Err(e) = k.conn.write_all(&batch).await {
                // Written into a connection the server is closing: nothing was answered.
                if k.used {
                    ctx.retried(class, todo.len() as u64);
                    kept = None;
                    continue;
                }
                ctx.fail(class, format!("write: {e}"));
                kept = None;
                break;
            }
            let mut answered = 0;
            let mut close = false;
            while answered < todo.len() {
                match read_response(&mut k.conn, &mut k.buf).await {
                    Ok(Some(resp)) => {
                        match verify(&ctx, &resp, &Expect::File(todo[answered])) {
                            Ok(n) => ctx.ok(class, n, started),
                            Err(why) => ctx.fail(class, why),
                        }
                        answered += 1;
                        k.used = true;
                        if resp.closes() {
                            close = true;
                            break;
                        }
                    }
                    Ok(None) if k.used => {
                        close = true;
                        break;
                    }
                    Ok(None) if ctx.draining() => return,
                    Err(e)
                        if !k.used
                            && ctx.draining()
                            && k.buf.is_empty()
                            && e.kind() == io::ErrorKind::ConnectionReset =>
                    {
                        return;
                    }
                    Ok(None) => {
                        ctx.fail(class, "closed before any response on a new connection");
                        close = true;
                        break;
                    }
                    Err(e)
                        if k.used
                            && k.buf.is_empty()
                            && e.kind() == io::ErrorKind::ConnectionReset =>
                    {
                        close = true;
                        break;
                    }
                    Err(e) => {
                        ctx.fail(class, format!("{e} after {answered} responses"));
                        todo.clear();
                        close = true;
                        break;
                    }
                }
            }
            if answered == 0 {
                stalls += 1;
            }
            todo.drain(..answered.min(todo.len()));
            ctx.retried(class, todo.len() as u64);
            if close {
                kept = None;
            }
        }
    }
}

/// Every `period_s`: the panicking path through the proxy must answer 500, and the next
/// request on the same connection (to the same one-worker backend) must be answered.
pub async fn panics(ctx: Arc<Ctx>, seed: u64, period_s: f64) {
    let class = Good::Panic;
    let mut rng = Rng::new(seed);
    let mut pace = pacer(1.0 / period_s);
    let mut kept = None;
    while !ctx.good_stopped() {
        pace.tick().await;
        let started = Instant::now();
        match exchange(&ctx, Target::Proxy, &mut kept, &get("soak/panic", "")).await {
            Ok(Sent::Answered(resp)) => match verify(&ctx, &resp, &Expect::Status(500)) {
                Ok(_) if resp.closes() => {
                    ctx.fail(class, "the proxy closed the client's connection after the 500")
                }
                Ok(_) => ctx.ok(class, 0, started),
                Err(why) => ctx.fail(class, why),
            },
            Ok(Sent::Unread) => {
                ctx.retried(class, 1);
                continue;
            }
            Err(None) => return,
            Err(Some(why)) => ctx.fail(class, why),
        }
        let len = 1 + rng.below(4096);
        let body = rng.bytes(len);
        let started = Instant::now();
        match exchange(&ctx, Target::Proxy, &mut kept, &post("soak/echo", &body)).await {
            Ok(Sent::Answered(resp)) => match verify(&ctx, &resp, &Expect::Echo(body)) {
                Ok(n) => ctx.ok(class, n, started),
                Err(why) => ctx.fail(class, format!("after a panic: {why}")),
            },
            Ok(Sent::Unread) => ctx.fail(class, "after a panic: the connection closed unread"),
            Err(None) => return,
            Err(Some(why)) => ctx.fail(class, format!("after a panic: {why}")),
        }
    }
}
