//! The HTTP/2 benchmark peer (bench/h2.sh): the plaintext test on hyper 1's HTTP/2 server
//! (`hyper::server::conn::http2`, h2c with prior knowledge), one current-thread runtime (one
//! worker), TCP_NODELAY, as `examples/hyper_plaintext.rs` is for HTTP/1.1.
//!
//! ```text
//! cargo run --release --example hyper_h2 -- --addr 127.0.0.1:8082
//! ```

use std::convert::Infallible;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue, SERVER};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};

async fn plaintext(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut res = if req.uri().path() == "/plaintext" {
        let mut res = Response::new(Full::new(Bytes::from_static(b"Hello, World!")));
        res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        res
    } else {
        let mut res = Response::new(Full::new(Bytes::new()));
        *res.status_mut() = StatusCode::NOT_FOUND;
        res
    };
    res.headers_mut().insert(SERVER, HeaderValue::from_static("hyper"));
    Ok(res)
}

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:8082");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            other => {
                eprintln!("usage: hyper_h2 [--addr HOST:PORT] (unknown: {other})");
                std::process::exit(2);
            }
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
        eprintln!("hyper_h2: listening on {addr}");
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
            tokio::spawn(async move {
                // hyper adds the Date header itself (cached once a second). Defaults
                // otherwise: 200 concurrent streams, its adaptive window.
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service_fn(plaintext))
                    .await;
            });
        }
    })
}
