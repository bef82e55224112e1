//! A real browser's WebSocket against the server: headless Chromium loads a page over HTTPS
//! whose script opens `wss://` back to the page's server, sends text (short, non-ASCII, and
//! 70,000 characters: a 64-bit length) and binary, checks every echo, reports the verdict in a
//! last message, and reports the close's code once the server closed with 1000. Twice: from a
//! server that speaks HTTP/2, where Chromium opens the WebSocket as an extended CONNECT stream
//! of the page's connection (RFC 8441: the server's SETTINGS_ENABLE_CONNECT_PROTOCOL), and
//! from one with HTTP/2 off, over HTTP/1.1. The WebSocket handler records the version its
//! request came in; Chromium offers permessage-deflate and the server accepts it.
//!
//! Skipped with a printed notice when `chromium` is not installed (`.ci/run` installs Debian's).
//! The certificate is trusted by its key's hash (`--ignore-certificate-errors-spki-list`), so
//! Chromium treats the connection as any valid HTTPS one.

mod support;

use support::browser;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use peregrine::server::{Config, TlsConfig};
use peregrine::websocket::{CloseCode, Message, WebSocketUpgrade};
use peregrine::{IntoResponse, Request, Response, Server, ServerHandle, Version};

/// What the server saw: the WebSocket requests' versions and what the pages reported.
#[derive(Default, Debug)]
struct Seen {
    versions: Vec<Version>,
    reports: Vec<String>,
}

type Shared = Arc<Mutex<Seen>>;

fn lock(seen: &Shared) -> std::sync::MutexGuard<'_, Seen> {
    seen.lock().unwrap_or_else(|e| e.into_inner())
}

/// The page: opens `wss://` to its own host and port at `/ws`, sends, checks the echoes, reports the verdict
/// as a last message (`result:pass`), and the close by a fetch of `/closed?CODE-CLEAN`.
const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>ws</title></head><body><pre id="log"></pre><script>
const sent = ["hello", "h\u00e9llo w\u00f6rld \u2713", "x".repeat(70000)];
const got = [];
const ws = new WebSocket("wss://" + location.host + "/ws");
ws.binaryType = "arraybuffer";
ws.onopen = () => {
  for (const m of sent) ws.send(m);
  ws.send(new Uint8Array([0, 1, 2, 255]).buffer);
};
ws.onmessage = (e) => {
  got.push(e.data);
  if (got.length === sent.length + 1) {
    const texts = sent.every((m, i) => got[i] === m);
    const bin = new Uint8Array(got[sent.length]);
    const binary = bin.length === 4 && bin[0] === 0 && bin[3] === 255;
    const what = got.map((m) => typeof m === "string" ? m.slice(0, 12) + "/" + m.length : "bin/" + m.byteLength);
    ws.send(texts && binary ? "result:pass" : "result:fail " + JSON.stringify(what));
  }
};
ws.onerror = () => fetch("/closed?error");
ws.onclose = (e) => fetch("/closed?" + e.code + "-" + e.wasClean);
</script></body></html>
"#;

/// `/` is the page, `/ws` the WebSocket (an echo; `result:...` is recorded and answered with
/// a close 1000), `/closed?...` records the page's report of the close.
async fn app(mut req: Request, seen: Shared) -> Response {
    match req.path() {
        "/" => Response::new(PAGE)
            .with_header(http::header::CONTENT_TYPE, "text/html; charset=utf-8".parse().unwrap()),
        "/closed" => {
            lock(&seen).reports.push(format!("closed:{}", req.query().unwrap_or("")));
            Response::new("ok")
        }
        "/ws" => {
            let version = req.version();
            let upgrade = match WebSocketUpgrade::from_request(&mut req) {
                Ok(upgrade) => upgrade,
                Err(refused) => return refused.into_response(),
            };
            lock(&seen).versions.push(version);
            upgrade.deflate(true).on_upgrade(move |mut ws| async move {
                let compressed = ws.is_compressed();
                while let Some(Ok(msg)) = ws.recv().await {
                    if let Message::Text(t) = &msg {
                        if let Some(result) = t.strip_prefix("result:") {
                            let report = format!("result:{result} deflate:{compressed}");
                            lock(&seen).reports.push(report);
                            let _ = ws.close(CloseCode::NORMAL, "done").await;
                            return;
                        }
                    }
                    if (msg.is_text() || msg.is_binary()) && ws.send(msg).await.is_err() {
                        return;
                    }
                }
            })
        }
        _ => Response::with_status(http::StatusCode::NOT_FOUND, "not found"),
    }
}

/// A TLS server for `localhost` (HTTP/2 on or off) serving [`app`].
fn serve(cert: &support::tls::TestCert, http2: bool, seen: &Shared) -> ServerHandle {
    let tls = TlsConfig::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    let seen = seen.clone();
    let config = Config { http2, ..support::test_config() };
    Server::bind("127.0.0.1:0")
        .workers(1)
        .config(config)
        .tls(tls)
        .spawn(move |req| app(req, seen.clone()))
        .unwrap()
}

/// Waits until the server saw the page's verdict and its close, or 20 s.
fn wait_for_reports(seen: &Shared) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let reports = lock(seen).reports.clone();
        let done = reports.iter().any(|r| r.starts_with("result:"))
            && reports.iter().any(|r| r.starts_with("closed:"));
        if done || Instant::now() > deadline {
            return reports;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One run: Chromium on the server's page; what the server saw.
fn run(chromium: &Path, http2: bool) -> Seen {
    let cert = support::tls::self_signed(&["localhost"]);
    let spki = browser::spki(&cert);
    let seen = Shared::default();
    let server = serve(&cert, http2, &seen);
    let url = format!("https://localhost:{}/", server.local_addr().port());
    let profile = std::env::temp_dir().join(format!(
        "peregrine-ws-browser-{}-{}",
        std::process::id(),
        if http2 { "h2" } else { "h1" }
    ));
    let _ = std::fs::remove_dir_all(&profile);
    let chromium = browser::launch(chromium, &url, &spki, &profile, &["--disable-quic"]);
    let reports = wait_for_reports(&seen);
    browser::stop(chromium);
    let _ = std::fs::remove_dir_all(&profile);
    server.shutdown();
    server.join().unwrap();
    let mut seen = std::mem::take(&mut *lock(&seen));
    seen.reports = reports;
    seen
}

/// RFC 8441 in a browser: the page's connection is HTTP/2, the server's SETTINGS allow
/// extended CONNECT, and Chromium opens the WebSocket as a stream of it.
#[test]
fn chromium_over_http2_extended_connect() {
    let Some(chromium) = browser::chromium() else {
        println!("skipped: chromium is not installed");
        return;
    };
    let seen = run(&chromium, true);
    println!("HTTP/2 run: {seen:?}");
    assert_eq!(seen.versions, [Version::Http2], "{seen:?}");
    assert!(seen.reports.contains(&"result:pass deflate:true".to_owned()), "{seen:?}");
    assert!(seen.reports.contains(&"closed:1000-true".to_owned()), "{seen:?}");
}

/// RFC 6455 in a browser: a server with HTTP/2 off, ALPN http/1.1, the `Upgrade` handshake.
#[test]
fn chromium_over_http1() {
    let Some(chromium) = browser::chromium() else {
        println!("skipped: chromium is not installed");
        return;
    };
    let seen = run(&chromium, false);
    println!("HTTP/1.1 run: {seen:?}");
    assert_eq!(seen.versions, [Version::Http11], "{seen:?}");
    assert!(seen.reports.contains(&"result:pass deflate:true".to_owned()), "{seen:?}");
    assert!(seen.reports.contains(&"closed:1000-true".to_owned()), "{seen:?}");
}
