//! Real HTTP/2 clients against the server, as installed on the machine: curl with
//! `--http2-prior-knowledge`, with `--http2` on `http://` (the `Upgrade: h2c` dance) and on
//! `https://` (ALPN, the certificate checked with `--cacert`), and nghttp (nghttp2's client):
//! concurrent streams, large bodies both ways, cancellation mid-stream.
//!
//! A case whose tool is missing is skipped with a printed notice (`.ci/run` installs curl and
//! nghttp2-client). Each curl invocation fetches one URL: Debian 12's curl 7.88.1 fails on
//! several URLs in one invocation over HTTP/2, against every server.

mod support;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use peregrine::server::{Config, TlsConfig};
use peregrine::{Body, IntoResponse, Request, Response, Server, ServerHandle};
use support::tls::{TestCert, self_signed};

/// The body of `/bytes?N`: byte `i` is `i % 251`, so a shifted or repeated chunk shows.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

/// FNV-1a over a body: what `/digest` answers, with the length.
fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// Streamed bodies of `/endless` alive (dropped when the client goes away).
static ENDLESS: AtomicUsize = AtomicUsize::new(0);

struct Alive;

impl Drop for Alive {
    fn drop(&mut self) {
        ENDLESS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// - `/info` answers `METHOD path version`;
/// - `/bytes?N` streams `pattern(N)` in 64 KiB chunks, with its length;
/// - `/digest` reads the request body and answers `length fnv1a-hex`;
/// - `/endless` streams 16 KiB chunks until the client goes away.
async fn app(mut req: Request) -> Response {
    match req.path() {
        "/info" => {
            format!("{} {} {:?}", req.method_str(), req.path(), req.version()).into_response()
        }
        "/bytes" => {
            let n: usize = req.query().and_then(|q| q.parse().ok()).unwrap_or(0);
            let body = Bytes::from(pattern(n));
            let mut at = 0;
            Response::new(Body::from_poll_fn_sized(n as u64, move |_| {
                if at == body.len() {
                    return Poll::Ready(None);
                }
                let end = (at + 64 * 1024).min(body.len());
                let chunk = body.slice(at..end);
                at = end;
                Poll::Ready(Some(Ok(chunk)))
            }))
        }
        "/digest" => {
            let mut body = req.take_body();
            let (mut len, mut h) = (0, FNV_START);
            while let Some(chunk) = body.chunk().await {
                match chunk {
                    Ok(chunk) => {
                        len += chunk.len();
                        h = fnv(&chunk, h);
                    }
                    Err(e) => return e.into_response(),
                }
            }
            format!("{len} {h:016x}").into_response()
        }
        "/endless" => {
            ENDLESS.fetch_add(1, Ordering::SeqCst);
            let alive = Alive;
            let chunk = Bytes::from(vec![b'z'; 16 * 1024]);
            Response::new(Body::from_poll_fn(move |_| {
                let _ = &alive;
                Poll::Ready(Some(Ok(chunk.clone())))
            }))
        }
        _ => http::StatusCode::NOT_FOUND.into_response(),
    }
}

/// Large uploads allowed.
fn config() -> Config {
    Config { max_body_bytes: 64 << 20, ..support::test_config() }
}

fn plain() -> ServerHandle {
    Server::bind("127.0.0.1:0").workers(1).config(config()).spawn(app).unwrap()
}

fn tls(cert: &TestCert) -> ServerHandle {
    let tls = TlsConfig::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    Server::bind("127.0.0.1:0").workers(1).config(config()).tls(tls).spawn(app).unwrap()
}

/// Whether `tool` runs here; prints the notice when it does not.
fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("skipped: {tool} is not installed (apt-get install curl nghttp2-client)");
    }
    ok
}

/// Runs `tool` with `args`, killed after 30 s.
fn run(tool: &str, args: &[&str]) -> Output {
    let mut child = Command::new(tool)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Reading the pipes while it runs (a large body would fill them).
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = pipe.read_to_end(&mut all);
            all
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{tool} {args:?} did not finish in 30 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// A file in the temp directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, contents: &[u8]) -> TempFile {
        let path = std::env::temp_dir()
            .join(format!("peregrine-h2-clients-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        TempFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// curl's output: the body, then `-w`'s line `VERSION STATUS`.
fn curl(args: &[&str]) -> (Vec<u8>, String) {
    let mut all = vec!["-sS", "--max-time", "20", "-w", "\n%{http_version} %{response_code}"];
    all.extend_from_slice(args);
    let out = run("curl", &all);
    assert!(out.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let mut body = out.stdout;
    let at = body.iter().rposition(|&b| b == b'\n').unwrap();
    let trailer = String::from_utf8(body.split_off(at)).unwrap();
    (body, trailer.trim().to_string())
}

/// The `/digest` answer for `body`.
fn digest(body: &[u8]) -> String {
    format!("{} {:016x}", body.len(), fnv(body, FNV_START))
}

/// The checks every curl mode runs: a small request, 16 MiB down, 8 MiB up.
fn curl_cases(mode: &[&str], base: &str, expect_info: &str, upload: bool) {
    let info = format!("{base}/info");
    let (body, tail) = curl(&[mode, &[info.as_str()][..]].concat());
    assert_eq!((String::from_utf8(body).unwrap().as_str(), tail.as_str()), (expect_info, "2 200"));

    let n = 16 << 20;
    let bytes = format!("{base}/bytes?{n}");
    let (body, tail) = curl(&[mode, &[bytes.as_str()][..]].concat());
    assert_eq!(tail, "2 200");
    assert_eq!(body.len(), n);
    assert!(body == pattern(n), "16 MiB download differs");

    if upload {
        let data = pattern(8 << 20);
        let file = TempFile::new(&format!("upload-{}", mode.len()), &data);
        let at = format!("@{}", file.path());
        let url = format!("{base}/digest");
        let (body, tail) =
            curl(&[mode, &["--data-binary", at.as_str(), url.as_str()][..]].concat());
        assert_eq!(tail, "2 200");
        assert_eq!(String::from_utf8(body).unwrap(), digest(&data));
    }
}

#[test]
fn curl_prior_knowledge() {
    if !have("curl") {
        return;
    }
    let server = plain();
    let base = format!("http://127.0.0.1:{}", server.local_addr().port());
    curl_cases(&["--http2-prior-knowledge"], &base, "GET /info Http2", true);
}

/// `curl --http2` on `http://` asks `Upgrade: h2c` (RFC 7540 §3.2): the first request is
/// answered on stream 1 after `101`, as HTTP/2.
#[test]
fn curl_upgrade_h2c() {
    if !have("curl") {
        return;
    }
    let server = plain();
    let base = format!("http://127.0.0.1:{}", server.local_addr().port());
    // The upgraded request arrived as HTTP/1.1; the response goes as HTTP/2. curl does not
    // offer the upgrade on a request with a body.
    curl_cases(&["--http2"], &base, "GET /info Http11", false);
    let (_, tail) = curl(&["--http2", "-v", &format!("{base}/info")]);
    assert_eq!(tail, "2 200");
}

/// `curl --http2` on `https://`: ALPN picks h2, the certificate is checked.
#[test]
fn curl_https_alpn() {
    if !have("curl") {
        return;
    }
    let cert = self_signed(&["localhost"]);
    let server = tls(&cert);
    let ca = TempFile::new("ca.pem", cert.cert_pem.as_bytes());
    let port = server.local_addr().port();
    let resolve = format!("localhost:{port}:127.0.0.1");
    let mode = ["--http2", "--cacert", ca.path(), "--resolve", &resolve];
    curl_cases(&mode, &format!("https://localhost:{port}"), "GET /info Http2", true);
    // Without the certificate trusted, curl refuses: the check is real.
    let out = run(
        "curl",
        &["-sS", "--http2", "--resolve", &resolve, &format!("https://localhost:{port}/info")],
    );
    assert!(!out.status.success(), "curl trusted an unknown certificate");
}

/// nghttp's statistics table: one row per request, `(status, size)`.
fn nghttp_stats(stdout: &[u8]) -> Vec<(u16, u64)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| {
            // id responseEnd requestStart process code size path
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 7 || !cols[6].starts_with('/') {
                return None;
            }
            Some((cols[4].parse().ok()?, parse_size(cols[5])?))
        })
        .collect()
}

/// nghttp prints sizes as `13`, `97K`, `1M` (1024-based, rounded).
fn parse_size(s: &str) -> Option<u64> {
    let (num, unit) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        _ => (s, 1),
    };
    Some(num.parse::<u64>().ok()? * unit)
}

/// nghttp: many concurrent streams on one connection (`-m`), different requests in one
/// invocation, an upload (`-d`); over h2c (prior knowledge and Upgrade, `-u`) and TLS.
#[test]
fn nghttp_concurrent_streams_and_bodies() {
    if !have("nghttp") {
        return;
    }
    let cert = self_signed(&["localhost"]);
    let servers = [(plain(), "http"), (tls(&cert), "https")];
    for (server, scheme) in &servers {
        let base = format!("{scheme}://127.0.0.1:{}", server.local_addr().port());
        // 100 concurrent streams (the server's limit) of 100 KiB each: past the client's
        // 64 KiB stream windows, all sharing the connection window.
        let out = run("nghttp", &["-n", "-s", "-m", "100", &format!("{base}/bytes?102400")]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stats = nghttp_stats(&out.stdout);
        assert_eq!(stats.len(), 100, "{}", String::from_utf8_lossy(&out.stdout));
        assert!(
            stats.iter().all(|&s| s == (200, 100 << 10)),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );

        // Several requests in one invocation, bodies to stdout in order.
        let out = run("nghttp", &[&format!("{base}/info"), &format!("{base}/bytes?5")]);
        assert!(out.status.success());
        assert_eq!(out.stdout, [&b"GET /info Http2"[..], &pattern(5)].concat());

        // An upload of 8 MiB, past the server's stream (256 KiB) and connection (1 MiB)
        // windows.
        let data = pattern(8 << 20);
        let file = TempFile::new(&format!("nghttp-{scheme}"), &data);
        let out = run("nghttp", &["-d", file.path(), &format!("{base}/digest")]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8(out.stdout).unwrap(), digest(&data));

        // A 16 MiB download, compared byte for byte.
        let n = 16 << 20;
        let out = run("nghttp", &[&format!("{base}/bytes?{n}")]);
        assert!(out.status.success());
        assert!(out.stdout == pattern(n), "nghttp: 16 MiB download differs");
    }
    // h2c by Upgrade.
    let base = format!("http://127.0.0.1:{}", servers[0].0.local_addr().port());
    let out = run("nghttp", &["-u", &format!("{base}/info")]);
    assert!(out.status.success());
    assert_eq!(out.stdout, b"GET /info Http11");
}

/// Clients that give up mid-response: curl at its `--max-time`, nghttp killed (its `-t` is
/// an idle timeout, which an endless response never trips). The endless response's body is
/// dropped with the stream, and the server goes on serving.
#[test]
fn cancellation_mid_stream() {
    let curl_ok = have("curl");
    let nghttp_ok = have("nghttp");
    let server = plain();
    let base = format!("http://127.0.0.1:{}", server.local_addr().port());
    let url = format!("{base}/endless");
    // Waits until the endless body is gone.
    let dropped = |tool: &str| {
        let gone = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            ENDLESS.load(Ordering::SeqCst) == 0
        });
        assert!(gone, "{tool}: the endless body outlived its client");
    };
    if curl_ok {
        let args = ["-sS", "--http2-prior-knowledge", "--max-time", "1", "-o", "/dev/null", &url];
        let out = run("curl", &args);
        // 28: the operation timed out.
        assert_eq!(out.status.code(), Some(28), "{}", String::from_utf8_lossy(&out.stderr));
        dropped("curl");
    }
    if nghttp_ok {
        let mut child =
            Command::new("nghttp").args(["-n", &url]).stdout(Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        assert!(child.try_wait().unwrap().is_none(), "nghttp finished an endless response");
        assert_eq!(ENDLESS.load(Ordering::SeqCst), 1, "no endless response running");
        child.kill().unwrap();
        child.wait().unwrap();
        dropped("nghttp");
    }
    if curl_ok {
        let (body, tail) = curl(&["--http2-prior-knowledge", &format!("{base}/info")]);
        assert_eq!((body, tail.as_str()), (b"GET /info Http2".to_vec(), "2 200"));
    }
}
