//! The HTTP/3 client (the `h3` crate over quinn, `h3-quinn`) against the TLS server's UDP port:
//! a few requests at once on one QUIC connection, each response verified as the others are.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes};
use h3::error::{Code, ConnectionError, StreamError};

use crate::batch::{self, Outcome};
use crate::ctx::{Ctx, Good};
use crate::h1::Resp;

type SendRequest = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// A handshake that has not completed by then failed (a UDP packet to a closed port is lost
/// silently, not refused as a TCP connection is).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The QUIC client settings: the soak's CA, TLS 1.3 (RFC 9001 §4.2), ALPN `h3` (RFC 9114
/// §3.1).
pub fn client_config(roots: rustls::RootCertStore) -> quinn::ClientConfig {
    let mut tls = rustls::ClientConfig::builder_with_protocol_versions(&[&rustls::version::TLS13])
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls).expect("a TLS 1.3 config");
    quinn::ClientConfig::new(Arc::new(quic))
}

async fn connect(ctx: &Ctx, endpoint: &quinn::Endpoint) -> Result<SendRequest, String> {
    let addr: SocketAddr = ctx.tls.parse().map_err(|e| format!("{}: {e}", ctx.tls))?;
    let connecting = endpoint
        .connect_with(ctx.quic.clone(), addr, "localhost")
        .map_err(|e| format!("connect: {e}"))?;
    let quic = match tokio::time::timeout(CONNECT_TIMEOUT, connecting).await {
        Ok(Ok(quic)) => quic,
        Ok(Err(e)) => return Err(format!("QUIC handshake: {e}")),
        Err(_) => return Err(format!("QUIC handshake: no answer in {CONNECT_TIMEOUT:?}")),
    };
    let (mut driver, send) = h3::client::new(h3_quinn::Connection::new(quic))
        .await
        .map_err(|e| format!("HTTP/3 setup: {e}"))?;
    // The connection's control stream (SETTINGS, GOAWAY) is read by this task until it closes.
    tokio::spawn(async move { std::future::poll_fn(|cx| driver.poll_close(cx)).await });
    Ok(send)
}

/// The connection closed without an error (the server's drain, after its GOAWAY).
fn closed_cleanly(e: &ConnectionError) -> bool {
    e.is_h3_no_error()
}

/// A request that failed before its response head came: was it one the server did not
/// process? §5.2: after GOAWAY the client sends no new request on the connection (h3 refuses
/// them: `RemoteClosing`), and the streams at or past the GOAWAY's ID were not processed; the
/// server closes the connection with H3_NO_ERROR once the streams below it are answered, so a
/// request still without a head then is one of those. §8.1: H3_REQUEST_REJECTED says a
/// request was not processed at all.
fn unprocessed(e: &StreamError) -> bool {
    match e {
        // (Variants marked non_exhaustive match only with braces.)
        StreamError::RemoteClosing { .. } => true,
        StreamError::RemoteTerminate { code, .. } => *code == Code::H3_REQUEST_REJECTED,
        StreamError::ConnectionError { 0: c, .. } => closed_cleanly(c),
        _ => false,
    }
}

async fn fetch(mut send: SendRequest, uri: String) -> Outcome {
    let req = http::Request::get(uri).header("user-agent", "soak-good").body(()).unwrap();
    let mut stream = match send.send_request(req).await {
        Ok(s) => s,
        Err(e) if unprocessed(&e) => return Outcome::Unprocessed,
        Err(e) => return Outcome::Failed(format!("send: {e}")),
    };
    match stream.finish().await {
        Ok(()) => {}
        // RFC 9114 §4.1: a server that has its answer may stop reading the request with
        // H3_NO_ERROR before the request's end arrives ("clients MUST NOT discard complete
        // responses as a result of having their request terminated abruptly"): the response
        // is read on.
        Err(StreamError::RemoteTerminate { code, .. }) if code == Code::H3_NO_ERROR => {}
        Err(e) if unprocessed(&e) => return Outcome::Unprocessed,
        Err(e) => return Outcome::Failed(format!("finish: {e}")),
    }
    let res = match stream.recv_response().await {
        Ok(res) => res,
        Err(e) if unprocessed(&e) => return Outcome::Unprocessed,
        Err(e) => return Outcome::Failed(format!("response: {e}")),
    };
    let status = res.status().as_u16();
    let headers =
        res.headers().iter().map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec())).collect();
    let mut body = Vec::new();
    loop {
        match stream.recv_data().await {
            Ok(Some(mut chunk)) => {
                while chunk.has_remaining() {
                    let part = chunk.chunk();
                    body.extend_from_slice(part);
                    let n = part.len();
                    chunk.advance(n);
                }
            }
            Ok(None) => break,
            // Once the head came the request was processed: a cut body is a failure.
            Err(e) => return Outcome::Failed(format!("body after {} bytes: {e}", body.len())),
        }
    }
    Outcome::Answered(Resp { status, headers, body })
}

/// `streams` requests at once on one QUIC connection, `per_s` times a second; a new
/// connection when one fails or the server sends GOAWAY.
pub async fn client(ctx: Arc<Ctx>, seed: u64, per_s: f64, streams: usize) {
    let class = Good::H3;
    let endpoint = match quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()) {
        Ok(e) => e,
        Err(e) => return ctx.fail(class, format!("a UDP socket: {e}")),
    };
    let open = || {
        let (ctx, endpoint) = (ctx.clone(), endpoint.clone());
        async move { connect(&ctx, &endpoint).await }
    };
    let fetch = |send, name| fetch(send, format!("https://localhost/{name}"));
    batch::run(&ctx, class, seed, per_s, streams, open, fetch).await;
    // The connections close (H3_NO_ERROR) before the socket goes.
    endpoint.close(quinn::VarInt::from_u32(0x100), b"");
    let _ = tokio::time::timeout(Duration::from_secs(2), endpoint.wait_idle()).await;
}
