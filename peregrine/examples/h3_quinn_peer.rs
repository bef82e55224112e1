//! The HTTP/3 benchmark and interop peer: the `h3` crate over quinn (`h3-quinn`), one
//! current-thread runtime (one worker), a task per connection and per request, as h3's own
//! example server is written; the rustls settings peregrine uses (this crate's crypto provider,
//! TLS 1.3, ALPN `h3`).
//!
//! - `GET /plaintext`: `Hello, World!` (13 bytes).
//! - `GET /NAME` with `--dir DIR`: the file `DIR/NAME`, read in 64 KiB chunks.
//! - `POST /echo`: the request body back, then a trailer section `x-echo-len: N` (its length),
//!   for the client's streaming and trailer tests.
//! - anything else: 404.
//!
//! ```text
//! cargo run --release --example h3_quinn_peer -- --addr 127.0.0.1:8443 \
//!     --tls-cert cert.pem --tls-key key.pem [--dir DIR]
//! ```
//!
//! `tests/h3_client.rs` includes this file to run the same server in-process.
#![allow(dead_code)]

use std::fs::File;
use std::io::{self, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::{Buf, Bytes, BytesMut};
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, SERVER};
use http::{HeaderMap, Method, Response, StatusCode};
#[cfg(feature = "aws-lc-rs")]
use rustls::crypto::aws_lc_rs as provider;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
use rustls::crypto::ring as provider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The size of each read from a file.
const CHUNK: usize = 64 * 1024;

type Stream = h3::server::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// peregrine's rustls settings (`net/tls.rs`) for QUIC: TLS 1.3 only (RFC 9001 §4.2), ALPN
/// `h3` (RFC 9114 §3.1).
fn tls_config(cert: &Path, key: &Path) -> io::Result<quinn::ServerConfig> {
    let cert = std::fs::read(cert)?;
    let key = std::fs::read(key)?;
    tls_config_pem(&cert, &key)
}

/// [`tls_config`] from PEM bytes.
pub fn tls_config_pem(cert: &[u8], key: &[u8]) -> io::Result<quinn::ServerConfig> {
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(cert).collect::<Result<_, _>>().map_err(io::Error::other)?;
    let key = PrivateKeyDer::from_pem_slice(key).map_err(io::Error::other)?;
    let mut config =
        rustls::ServerConfig::builder_with_provider(Arc::new(provider::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(io::Error::other)?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(io::Error::other)?;
    config.alpn_protocols = vec![b"h3".to_vec()];
    config.max_early_data_size = 0;
    let quic = quinn::crypto::rustls::QuicServerConfig::try_from(Arc::new(config))
        .map_err(io::Error::other)?;
    Ok(quinn::ServerConfig::with_crypto(Arc::new(quic)))
}

async fn serve(
    resolver: h3::server::RequestResolver<h3_quinn::Connection, Bytes>,
    dir: Option<Arc<Path>>,
) -> Result<(), BoxError> {
    let (req, mut stream) = resolver.resolve_request().await?;
    let path = req.uri().path();
    if req.method() == Method::POST && path == "/echo" {
        return echo(stream).await;
    }
    let (mut res, body) = if path == "/plaintext" {
        let mut res = Response::new(());
        res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        res.headers_mut().insert(CONTENT_LENGTH, HeaderValue::from(13));
        (res, Some(Ok(Bytes::from_static(b"Hello, World!"))))
    } else if let Some((res, file)) = dir.as_deref().and_then(|dir| open(dir, path)) {
        (res, Some(Err(file)))
    } else {
        let mut res = Response::new(());
        *res.status_mut() = StatusCode::NOT_FOUND;
        (res, None)
    };
    res.headers_mut().insert(SERVER, HeaderValue::from_static("h3"));
    stream.send_response(res).await?;
    match body {
        Some(Ok(text)) => stream.send_data(text).await?,
        Some(Err((mut file, mut left))) => {
            while left > 0 {
                // A blocking read from the page cache, as the other peers read files.
                let want = left.min(CHUNK as u64) as usize;
                let mut buf = BytesMut::zeroed(want);
                let n = file.read(&mut buf)?;
                if n == 0 {
                    return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
                }
                buf.truncate(n);
                left -= n as u64;
                stream.send_data(buf.freeze()).await?;
            }
        }
        None => {}
    }
    stream.finish().await?;
    Ok(())
}

/// The request body back as it arrives, then its length as a trailer.
async fn echo(mut stream: Stream) -> Result<(), BoxError> {
    let mut res = Response::new(());
    res.headers_mut().insert(SERVER, HeaderValue::from_static("h3"));
    stream.send_response(res).await?;
    let mut len = 0u64;
    while let Some(mut chunk) = stream.recv_data().await? {
        len += chunk.remaining() as u64;
        let bytes = chunk.copy_to_bytes(chunk.remaining());
        stream.send_data(bytes).await?;
    }
    let mut trailers = HeaderMap::new();
    trailers.insert("x-echo-len", HeaderValue::from(len));
    stream.send_trailers(trailers).await?;
    stream.finish().await?;
    Ok(())
}

/// A regular file directly under `dir` named by the path (one segment, no dot files).
fn open(dir: &Path, path: &str) -> Option<(Response<()>, (File, u64))> {
    let name = path.strip_prefix('/')?;
    if name.is_empty() || name.starts_with('.') || name.contains('/') {
        return None;
    }
    let file = File::open(dir.join(name)).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut res = Response::new(());
    res.headers_mut().insert(CONTENT_LENGTH, HeaderValue::from(meta.len()));
    res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    Some((res, (file, meta.len())))
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
                    "usage: h3_quinn_peer --tls-cert FILE --tls-key FILE [--addr HOST:PORT] \
                     [--dir DIR] (unknown: {other})"
                );
                std::process::exit(2);
            }
        }
    }
    let (Some(cert), Some(key)) = (cert, key) else {
        eprintln!("h3_quinn_peer: --tls-cert FILE and --tls-key FILE are required");
        std::process::exit(2);
    };
    let addr: SocketAddr = addr.parse().map_err(io::Error::other)?;
    let config = tls_config(&cert, &key)?;
    let dir: Option<Arc<Path>> = dir.map(Arc::from);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let endpoint = quinn::Endpoint::server(config, addr)?;
        eprintln!("h3_quinn_peer: listening on {}", endpoint.local_addr()?);
        run(endpoint, dir).await;
        Ok(())
    })
}

/// Serves every connection `endpoint` accepts until it closes.
pub async fn run(endpoint: quinn::Endpoint, dir: Option<Arc<Path>>) {
    while let Some(incoming) = endpoint.accept().await {
        let dir = dir.clone();
        tokio::spawn(async move {
            let Ok(conn) = incoming.await else { return };
            let Ok(mut h3) =
                h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(conn)).await
            else {
                return;
            };
            while let Ok(Some(resolver)) = h3.accept().await {
                let dir = dir.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve(resolver, dir).await {
                        eprintln!("h3_quinn_peer: request: {e}");
                    }
                });
            }
        });
    }
}
