//! The TechEmpower plaintext test: `GET /plaintext` answers `Hello, World!` as text/plain,
//! with Server and Date headers; anything else is 404.
//!
//! ```text
//! cargo run --release --example plaintext -- --addr 127.0.0.1:8080 [--workers N] [--metrics PATH]
//!     [--tls-cert cert.pem --tls-key key.pem [--h3]] [--fixed]
//! ```
//!
//! `--fixed` answers `/plaintext` with a fixed answer (`Server::fixed`, the same bytes,
//! prepared once) instead of the handler; everything else still reaches the handler.
//! `--metrics PATH` turns the server's counters on (`bench/callgrind.sh` measures their cost).
//! With `--tls-cert` and `--tls-key` it answers over HTTPS instead (bench/tls.sh); HTTP/2 is
//! served beside HTTP/1.1 either way (h2c on plain TCP, ALPN h2 on TLS). `--h3` (with TLS)
//! also answers over HTTP/3 on UDP at the same port.

use http::StatusCode;
use http::header::{CONTENT_TYPE, HeaderValue, SERVER};
use peregrine::server::TlsConfig;
use peregrine::{Body, Request, Response, Server};

fn hello() -> Response {
    Response::new(Body::from_static(b"Hello, World!"))
        .with_header(CONTENT_TYPE, HeaderValue::from_static("text/plain"))
        .with_header(SERVER, HeaderValue::from_static("peregrine"))
}

async fn plaintext(req: Request) -> Response {
    if req.path() == "/plaintext" {
        hello()
    } else {
        Response::with_status(StatusCode::NOT_FOUND, Body::empty())
            .with_header(SERVER, HeaderValue::from_static("peregrine"))
    }
}

fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:8080");
    let mut workers = None;
    let mut metrics = None;
    let (mut cert, mut key) = (None, None);
    let mut fixed = false;
    let mut h3 = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            "--workers" => {
                workers = Some(args.next().and_then(|n| n.parse().ok()).expect("--workers N"))
            }
            "--metrics" => metrics = Some(args.next().expect("--metrics needs a path")),
            "--tls-cert" => cert = Some(args.next().expect("--tls-cert needs a file")),
            "--tls-key" => key = Some(args.next().expect("--tls-key needs a file")),
            "--fixed" => fixed = true,
            "--h3" => h3 = true,
            other => {
                eprintln!(
                    "usage: plaintext [--addr HOST:PORT] [--workers N] [--metrics PATH] \
                     [--tls-cert FILE --tls-key FILE [--h3]] [--fixed] (unknown: {other})"
                );
                std::process::exit(2);
            }
        }
    }
    let mut server = Server::bind(addr.as_str());
    if let Some(n) = workers {
        server = server.workers(n);
    }
    if fixed {
        server = server.fixed("/plaintext", hello());
    }
    if let Some(path) = metrics {
        server = server.metrics(path);
    }
    match (cert, key) {
        (Some(cert), Some(key)) => {
            let tls = TlsConfig::from_pem_files(cert, key).map_err(std::io::Error::other)?;
            server = server.tls(tls).http3(h3);
        }
        (None, None) if h3 => {
            eprintln!("plaintext: --h3 needs --tls-cert and --tls-key");
            std::process::exit(2);
        }
        (None, None) => {}
        _ => {
            eprintln!("plaintext: --tls-cert and --tls-key go together");
            std::process::exit(2);
        }
    }
    eprintln!("plaintext: listening on {addr}");
    server.run(plaintext)
}
