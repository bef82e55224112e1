//! The HTTPS benchmark peer: hyper 1 over tokio-rustls, set up as `hyper_plaintext` is (one
//! current-thread runtime, TCP_NODELAY, `pipeline_flush`), with the rustls settings peregrine
//! uses: the same crypto provider (this crate's `aws-lc-rs` or `ring` feature), TLS 1.3 and 1.2,
//! ALPN `http/1.1`, session tickets and the in-memory session cache.
//!
//! `GET /plaintext` answers `Hello, World!`; with `--dir DIR`, `GET /NAME` streams the file
//! `DIR/NAME` (read in 64 KiB chunks, as nginx reads a file it cannot sendfile under TLS);
//! anything else is 404.
//!
//! ```text
//! cargo run --release --example hyper_tls -- --addr 127.0.0.1:8443 \
//!     --tls-cert cert.pem --tls-key key.pem [--dir DIR]
//! ```

use std::convert::Infallible;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, SERVER};
use http::{Request, Response, StatusCode};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
#[cfg(feature = "aws-lc-rs")]
use rustls::crypto::aws_lc_rs as provider;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
use rustls::crypto::ring as provider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The size of each read from a file.
const CHUNK: usize = 64 * 1024;

/// A response body: a short text, or a file read chunk by chunk as the connection drains.
enum Reply {
    Text(Option<Bytes>),
    File { file: File, left: u64 },
}

impl Body for Reply {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.get_mut() {
            Reply::Text(text) => Poll::Ready(text.take().map(|b| Ok(Frame::data(b)))),
            Reply::File { left: 0, .. } => Poll::Ready(None),
            Reply::File { file, left } => {
                // A blocking read from the page cache, as nginx does.
                let want = (*left).min(CHUNK as u64) as usize;
                let mut buf = BytesMut::zeroed(want);
                let result = match file.read(&mut buf) {
                    Ok(0) => Err(io::ErrorKind::UnexpectedEof.into()),
                    Ok(n) => {
                        *left -= n as u64;
                        buf.truncate(n);
                        Ok(Frame::data(buf.freeze()))
                    }
                    Err(e) => Err(e),
                };
                Poll::Ready(Some(result))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Reply::Text(None) | Reply::File { left: 0, .. })
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Reply::Text(text) => SizeHint::with_exact(text.as_ref().map_or(0, |b| b.len() as u64)),
            Reply::File { left, .. } => SizeHint::with_exact(*left),
        }
    }
}

fn answer(req: &Request<Incoming>, dir: Option<&Path>) -> Response<Reply> {
    let path = req.uri().path();
    let mut res = if path == "/plaintext" {
        let mut res = Response::new(Reply::Text(Some(Bytes::from_static(b"Hello, World!"))));
        res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        res
    } else if let Some(file) = dir.and_then(|dir| open(dir, path)) {
        file
    } else {
        let mut res = Response::new(Reply::Text(None));
        *res.status_mut() = StatusCode::NOT_FOUND;
        res
    };
    res.headers_mut().insert(SERVER, HeaderValue::from_static("hyper"));
    res
}

/// A regular file directly under `dir` named by the path (one segment, no dot files).
fn open(dir: &Path, path: &str) -> Option<Response<Reply>> {
    let name = path.strip_prefix('/')?;
    if name.is_empty() || name.starts_with('.') || name.contains('/') {
        return None;
    }
    let file = File::open(dir.join(name)).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut res = Response::new(Reply::File { file, left: meta.len() });
    res.headers_mut().insert(CONTENT_LENGTH, HeaderValue::from(meta.len()));
    res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    Some(res)
}

/// peregrine's rustls settings (`net/tls.rs`), built on the same provider.
fn tls_config(cert: &Path, key: &Path) -> io::Result<Arc<rustls::ServerConfig>> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect())
        .map_err(io::Error::other)?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(io::Error::other)?;
    let mut config =
        rustls::ServerConfig::builder_with_provider(Arc::new(provider::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(io::Error::other)?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(io::Error::other)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.ticketer = provider::Ticketer::new().map_err(io::Error::other)?;
    Ok(Arc::new(config))
}

fn main() -> io::Result<()> {
    let mut addr = String::from("127.0.0.1:8443");
    let (mut cert, mut key, mut dir) = (None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            "--tls-cert" => cert = args.next().map(PathBuf::from),
            "--tls-key" => key = args.next().map(PathBuf::from),
            "--dir" => dir = args.next().map(PathBuf::from),
            other => {
                eprintln!(
                    "usage: hyper_tls --tls-cert FILE --tls-key FILE [--addr HOST:PORT] \
                     [--dir DIR] (unknown: {other})"
                );
                std::process::exit(2);
            }
        }
    }
    let (Some(cert), Some(key)) = (cert, key) else {
        eprintln!("hyper_tls: --tls-cert FILE and --tls-key FILE are required");
        std::process::exit(2);
    };
    let acceptor = tokio_rustls::TlsAcceptor::from(tls_config(&cert, &key)?);
    let dir: Option<Arc<Path>> = dir.map(Arc::from);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
        eprintln!("hyper_tls: listening on {addr}");
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    eprintln!("accept: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let (acceptor, dir) = (acceptor.clone(), dir.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                let service = service_fn(move |req: Request<Incoming>| {
                    let res = answer(&req, dir.as_deref());
                    async move { Ok::<_, Infallible>(res) }
                });
                // hyper adds the Date header itself (cached once a second).
                let _ = hyper::server::conn::http1::Builder::new()
                    .pipeline_flush(true)
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    })
}
