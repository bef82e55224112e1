//! Helpers for the server integration tests: spawning a server on a loopback port and a raw
//! client that writes bytes and reads responses back.
#![allow(dead_code)]

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod browser;
pub mod h2frames;
pub mod tls;

use peregrine::server::Config;
use peregrine::{Handler, Server, ServerHandle};

/// A config with short timeouts so tests that wait for them stay fast.
pub fn test_config() -> Config {
    Config {
        header_read_timeout: Duration::from_secs(5),
        keep_alive_timeout: Duration::from_secs(5),
        shutdown_timeout: Duration::from_secs(5),
        // Tests that shut down wait for no balancer.
        drain_grace: Duration::ZERO,
        ..Config::default()
    }
}

/// Spawns a one-worker server on 127.0.0.1 with a free port.
pub fn spawn<H: Handler>(handler: H) -> ServerHandle {
    spawn_with(test_config(), handler)
}

/// Spawns a one-worker server with `config`.
pub fn spawn_with<H: Handler>(config: Config, handler: H) -> ServerHandle {
    Server::bind("127.0.0.1:0").workers(1).config(config).spawn(handler).expect("spawn server")
}

/// A response as read off the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The trailer section of a chunked body, as `name: value` lines.
    pub trailers: Vec<String>,
}

impl RawResponse {
    /// The first value of a header (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A byte stream a test client talks over: plain TCP or TLS.
pub trait Stream: Read + Write + Send {
    /// The TCP socket under the stream.
    fn tcp(&self) -> &TcpStream;
}

impl Stream for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

impl Stream for rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    fn tcp(&self) -> &TcpStream {
        &self.sock
    }
}

/// A client on a raw socket (plain or TLS).
pub struct RawClient {
    pub stream: Box<dyn Stream>,
    buf: Vec<u8>,
}

impl RawClient {
    pub fn connect(addr: SocketAddr) -> RawClient {
        let stream = tcp(addr);
        RawClient { stream: Box::new(stream), buf: Vec::new() }
    }

    /// A client over a stream the test set up itself.
    pub fn over(stream: impl Stream + 'static) -> RawClient {
        RawClient { stream: Box::new(stream), buf: Vec::new() }
    }

    /// Connects with TLS to `addr` as `name` (SNI and certificate check), handshake done.
    pub fn connect_tls(
        addr: SocketAddr,
        config: Arc<rustls::ClientConfig>,
        name: &str,
    ) -> RawClient {
        let stream = tls::connect(addr, config, name).expect("TLS handshake");
        RawClient { stream: Box::new(stream), buf: Vec::new() }
    }

    /// The TCP socket under the client.
    pub fn tcp(&self) -> &TcpStream {
        self.stream.tcp()
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write");
    }

    /// Sends bytes, ignoring errors (for tests where the server may already have closed).
    pub fn try_send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Reads what the socket has into the buffer; `Ok(0)` at end of stream.
    pub fn fill(&mut self) -> io::Result<usize> {
        let mut chunk = [0u8; 4096];
        // `read` does not retry when a signal interrupts it.
        let n = loop {
            match self.stream.read(&mut chunk) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// Reads one response (to a request that was not HEAD).
    pub fn response(&mut self) -> RawResponse {
        self.response_to(false).expect("a response")
    }

    /// Reads one response to a HEAD request (no body, whatever the headers say).
    pub fn head_response(&mut self) -> RawResponse {
        self.response_to(true).expect("a response")
    }

    /// Reads one response; `None` if the connection closed before any byte of it.
    pub fn response_to(&mut self, head: bool) -> Option<RawResponse> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut res = httparse::Response::new(&mut headers);
            match res.parse(&self.buf).expect("valid response head") {
                httparse::Status::Complete(len) => {
                    let status = res.code.unwrap();
                    let headers: Vec<(String, String)> = res
                        .headers
                        .iter()
                        .map(|h| {
                            (h.name.to_string(), String::from_utf8_lossy(h.value).into_owned())
                        })
                        .collect();
                    self.buf.drain(..len);
                    let mut out =
                        RawResponse { status, headers, body: Vec::new(), trailers: Vec::new() };
                    if head || status / 100 == 1 || status == 204 || status == 304 {
                        return Some(out);
                    }
                    if let Some(cl) = out.header("content-length") {
                        let n: usize = cl.parse().unwrap();
                        while self.buf.len() < n {
                            assert!(self.fill().expect("read body") > 0, "eof in body");
                        }
                        out.body = self.buf.drain(..n).collect();
                    } else if out.header("transfer-encoding").is_some() {
                        (out.body, out.trailers) = self.chunked_body();
                    } else {
                        while self.fill().expect("read") > 0 {}
                        out.body = std::mem::take(&mut self.buf);
                    }
                    return Some(out);
                }
                httparse::Status::Partial => {
                    if self.fill().expect("read head") == 0 {
                        assert!(self.buf.is_empty(), "eof inside a response head");
                        return None;
                    }
                }
            }
        }
    }

    fn chunked_body(&mut self) -> (Vec<u8>, Vec<String>) {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                    break i;
                }
                assert!(self.fill().unwrap() > 0, "eof in chunk size");
            };
            let size_text = std::str::from_utf8(&self.buf[..line_end]).unwrap().to_owned();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap(), 16).unwrap();
            self.buf.drain(..line_end + 2);
            if size == 0 {
                // Trailer lines, then the final CRLF.
                let mut trailers = Vec::new();
                loop {
                    let end = loop {
                        if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                            break i;
                        }
                        assert!(self.fill().unwrap() > 0, "eof in trailers");
                    };
                    let line = String::from_utf8(self.buf[..end].to_vec()).unwrap();
                    self.buf.drain(..end + 2);
                    if line.is_empty() {
                        return (body, trailers);
                    }
                    trailers.push(line);
                }
            }
            while self.buf.len() < size + 2 {
                assert!(self.fill().unwrap() > 0, "eof in chunk");
            }
            body.extend_from_slice(&self.buf[..size]);
            assert_eq!(&self.buf[size..size + 2], b"\r\n");
            self.buf.drain(..size + 2);
        }
    }

    /// Reads raw bytes until the server closes; returns them (with anything buffered).
    pub fn read_to_close(&mut self) -> Vec<u8> {
        loop {
            match self.fill() {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => break,
                Err(e) => panic!("read: {e}"),
            }
        }
        std::mem::take(&mut self.buf)
    }

    /// Whether the server closed the connection (EOF or reset; for TLS also an EOF without
    /// `close_notify` or a fatal alert) within `within`.
    pub fn closed_within(&mut self, within: Duration) -> bool {
        let start = Instant::now();
        self.tcp().set_read_timeout(Some(within)).unwrap();
        let closed = loop {
            match self.fill() {
                Ok(0) => break true,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionReset
                            | io::ErrorKind::UnexpectedEof
                            | io::ErrorKind::InvalidData
                    ) =>
                {
                    break true;
                }
                Err(_) => break false,
            }
            if start.elapsed() > within {
                break false;
            }
        };
        self.tcp().set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        closed
    }

    /// Bytes received and not yet consumed.
    pub fn buffered(&self) -> &[u8] {
        &self.buf
    }

    /// Takes the first `n` buffered bytes, reading until there are that many.
    pub fn take(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            assert!(self.fill().expect("read") > 0, "eof after {} of {n} bytes", self.buf.len());
        }
        self.buf.drain(..n).collect()
    }
}

/// A TCP connection to `addr` with the tests' timeouts and no Nagle delay.
pub fn tcp(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// A GET request for `path` with a Host header.
pub fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").into_bytes()
}

/// The application most tests serve.
///
/// - `/` answers `hello`; `/info` answers `METHOD path query version`;
/// - `/echo` answers the request body (read whole, limit 4 MiB, errors become responses);
/// - `/stream` answers three chunks with unknown length; `/panic` panics;
/// - `/slow?MS` sleeps MS milliseconds, then answers `slept`.
pub async fn app(mut req: peregrine::Request) -> peregrine::Response {
    use peregrine::{Body, IntoResponse, Response};
    match req.path() {
        "/" => Response::new("hello"),
        "/info" => Response::new(format!(
            "{} {} {} {:?}",
            req.method_str(),
            req.path(),
            req.query().unwrap_or("-"),
            req.version()
        )),
        "/echo" => match req.take_body().to_bytes(4 << 20).await {
            Ok(bytes) => Response::new(bytes),
            Err(e) => e.into_response(),
        },
        "/peer" => Response::new(format!("{:?}", req.remote_addr())),
        // The body's length, then its trailer fields in order, one `name=value` per line.
        "/trailers" => {
            let mut body = req.take_body();
            let mut len = 0;
            while let Some(chunk) = body.chunk().await {
                match chunk {
                    Ok(chunk) => len += chunk.len(),
                    Err(e) => return e.into_response(),
                }
            }
            let mut out = format!("{len}\n");
            for (name, value) in body.take_trailers().iter().flatten() {
                out.push_str(&format!("{name}={}\n", value.to_str().unwrap_or("?")));
            }
            // Taken once.
            assert!(body.take_trailers().is_none());
            Response::new(out)
        }
        "/stream" => {
            let mut n = 0;
            Response::new(Body::from_poll_fn(move |_| {
                n += 1;
                std::task::Poll::Ready(
                    (n <= 3).then(|| Ok(bytes::Bytes::from(format!("part{n};")))),
                )
            }))
        }
        "/panic" => panic!("handler panics on purpose"),
        "/slow" => {
            let ms: u64 = req.query().and_then(|q| q.parse().ok()).unwrap_or(100);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Response::new("slept")
        }
        _ => http::StatusCode::NOT_FOUND.into_response(),
    }
}
