//! The HTTP/3 client against other servers over loopback UDP: the `h3` crate over quinn
//! (`examples/h3_quinn_peer.rs`, run in-process), Caddy (quic-go, `protocols h1 h2 h3`) and
//! aioquic (a small server on its API, `support/aioquic_h3_server.py`). Each serves a 13-byte
//! file and a 1 MiB one; bodies are compared byte for byte, one at a time and multiplexed on
//! one connection, through the one-connection API and the pooled `Client`; the h3 and aioquic
//! servers also echo a streamed request body and answer with trailers.
//!
//! Caddy and aioquic run as child processes on 127.0.0.1. A test whose tool is missing prints
//! a notice and returns, except under CI (`CI` set), where `.ci/run` installs them and a
//! missing tool fails.

mod support;

#[path = "../examples/h3_quinn_peer.rs"]
mod peer;

use std::collections::HashMap;
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine::Method;
use peregrine::client::conn::{Config, Connection, Event, Protocol, RequestId, Versions};
use peregrine::client::{Client, TlsConfig};

const SMALL: &[u8] = b"Hello, World!";

/// 1 MiB that is not all the same.
fn large() -> Vec<u8> {
    (0..1u32 << 20).map(|i| (i.wrapping_mul(7) % 251) as u8).collect()
}

fn have(tool: &str, probe: &[&str]) -> bool {
    let found = Command::new(tool)
        .args(probe)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "{tool} is required in CI (.ci/run installs it)");
        println!("NOTICE: {tool} not usable; skipping (CI installs it: .ci/run)");
    }
    found
}

/// A port free on both TCP and UDP (Caddy listens on both).
fn free_port() -> u16 {
    loop {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A scratch directory with the site and the certificate, removed on drop.
struct Site {
    dir: PathBuf,
    cert: support::tls::TestCert,
}

impl Site {
    fn new(name: &str) -> Site {
        let dir = std::env::temp_dir().join(format!("peregrine-h3-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("www")).unwrap();
        std::fs::write(dir.join("www/small.txt"), SMALL).unwrap();
        std::fs::write(dir.join("www/large.bin"), large()).unwrap();
        let cert = support::tls::self_signed(&["localhost"]);
        std::fs::write(dir.join("cert.pem"), &cert.cert_pem).unwrap();
        std::fs::write(dir.join("key.pem"), &cert.key_pem).unwrap();
        Site { dir, cert }
    }

    fn www(&self) -> PathBuf {
        self.dir.join("www")
    }

    fn trust(&self) -> TlsConfig {
        TlsConfig::empty().add_ca_pem(self.cert.cert_pem.as_bytes()).unwrap()
    }

    fn config(&self) -> Config {
        // Short connect deadlines: a server still starting does not answer on UDP at all.
        Config::default()
            .versions(Versions::Http3Only)
            .tls(self.trust())
            .connect_timeout(Duration::from_secs(2))
            .tls_handshake_timeout(Duration::from_secs(1))
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A child process killed (by its pid) on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// A whole response: status, body, trailers.
type Whole = (u16, Vec<u8>, Vec<(String, String)>);

/// Reads events until every request in `ids` has ended; each one's response.
async fn collect(conn: &mut Connection, ids: &[RequestId]) -> HashMap<RequestId, Whole> {
    let mut got: HashMap<RequestId, Whole> = HashMap::new();
    let mut done = 0;
    while done < ids.len() {
        match conn.next_event().await.unwrap() {
            Event::Head { id, head } => {
                assert_eq!(head.version(), peregrine::Version::Http3);
                got.entry(id).or_default().0 = head.status();
            }
            Event::Data { id, data } => got.entry(id).or_default().1.extend_from_slice(data),
            Event::End { id, trailers } => {
                let t = trailers.iter().flatten();
                let t = t.map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()));
                got.entry(id).or_default().2.extend(t);
                done += 1;
            }
            Event::Failed { id, error } => panic!("request {id:?} failed: {error}"),
            Event::Writable { .. } => {}
        }
    }
    got
}

async fn get(conn: &mut Connection, target: &str) -> Whole {
    let id = conn.send_request(Method::Get, target, &[("accept", b"*/*")], &[]).unwrap();
    collect(conn, &[id]).await.remove(&id).unwrap()
}

/// Small and large bodies one at a time, then multiplexed on the same connection, then
/// through the pooled client (one connection for concurrent requests); with `echo`, a
/// streamed request body echoed back with trailers.
fn exercise(url: &str, config: Config, trust: TlsConfig, echo: bool) {
    let large = large();
    rt().block_on(async {
        let mut conn = connect(url, &config).await;
        assert_eq!(conn.protocol(), Protocol::Http3);
        let (status, body, _) = get(&mut conn, "/small.txt").await;
        assert_eq!((status, body.as_slice()), (200, SMALL));
        let (status, body, _) = get(&mut conn, "/large.bin").await;
        assert_eq!(status, 200);
        assert!(body == large, "1 MiB body differs ({} bytes)", body.len());
        let (status, _, _) = get(&mut conn, "/missing").await;
        assert_eq!(status, 404);

        // Eight streams at once on the one connection.
        let mut ids = Vec::new();
        for i in 0..8 {
            let target = if i % 2 == 0 { "/small.txt" } else { "/large.bin" };
            ids.push((conn.send_request(Method::Get, target, &[], &[]).unwrap(), i));
        }
        let all: Vec<RequestId> = ids.iter().map(|(id, _)| *id).collect();
        let got = collect(&mut conn, &all).await;
        for (id, i) in ids {
            let (status, body, _) = &got[&id];
            assert_eq!(*status, 200);
            let want: &[u8] = if i % 2 == 0 { SMALL } else { &large };
            assert!(body == want, "multiplexed response {i} differs");
        }

        if echo {
            // A streamed body of 300,000 bytes in uneven chunks, then the trailers.
            let id = conn
                .send_request_streaming(Method::Post, "/echo", &[("content-type", b"x/y")], None)
                .unwrap();
            let sent: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
            for chunk in sent.chunks(70_001) {
                let mut at = 0;
                while at < chunk.len() {
                    at += conn.send_data(id, &chunk[at..], false).unwrap();
                    if at < chunk.len() {
                        let _ = collect_writable(&mut conn).await;
                    }
                }
            }
            conn.send_data(id, &[], true).unwrap();
            let (status, body, trailers) = collect(&mut conn, &[id]).await.remove(&id).unwrap();
            assert_eq!(status, 200);
            assert!(body == sent, "echoed body differs ({} bytes)", body.len());
            assert_eq!(trailers, [("x-echo-len".to_owned(), "300000".to_owned())]);
        }

        // The pooled client: concurrent requests share one connection.
        let client = Client::builder().http3_only().tls(trust).build();
        let base = url.trim_end_matches('/');
        let gets = (0..6).map(|i| {
            let client = client.clone();
            let url = format!("{base}/{}", if i % 2 == 0 { "small.txt" } else { "large.bin" });
            tokio::spawn(async move {
                let mut res = client.get(&url).await.unwrap();
                assert_eq!(res.status(), 200);
                std::mem::take(res.body_mut()).to_bytes(1 << 21).await.unwrap()
            })
        });
        let bodies: Vec<_> = futures_util::future::join_all(gets).await;
        for (i, b) in bodies.into_iter().enumerate() {
            let b = b.unwrap();
            let want: &[u8] = if i % 2 == 0 { SMALL } else { &large };
            assert!(b.as_ref() == want, "pooled response {i} differs");
        }
        assert_eq!(client.pool_size().1, 1, "one shared HTTP/3 connection");
    });
}

async fn collect_writable(conn: &mut Connection) {
    loop {
        if let Event::Writable { .. } = conn.next_event().await.unwrap() {
            return;
        }
    }
}

/// Connects, retrying while the server is starting (its UDP socket may come last).
async fn connect(url: &str, config: &Config) -> Connection {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match Connection::connect(url, config).await {
            Ok(c) => return c,
            Err(e) if Instant::now() < deadline && !e.is_tls() => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{url}: {e}"),
        }
    }
}

/// The h3 + quinn peer in-process, on a thread of its own (one worker, as the example).
fn spawn_peer(site: &Site) -> u16 {
    let dir: Arc<Path> = Arc::from(site.www());
    spawn_quinn(site, move |endpoint| peer::run(endpoint, Some(dir)))
}

/// A quinn server endpoint on `site`'s certificate (the peer's TLS configuration), run by
/// `serve` on a thread and runtime of its own; returns its UDP port.
fn spawn_quinn<F, Fut>(site: &Site, serve: F) -> u16
where
    F: FnOnce(quinn::Endpoint) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let config =
        peer::tls_config_pem(site.cert.cert_pem.as_bytes(), site.cert.key_pem.as_bytes()).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let endpoint = quinn::Endpoint::server(config, "127.0.0.1:0".parse().unwrap()).unwrap();
            tx.send(endpoint.local_addr().unwrap().port()).unwrap();
            serve(endpoint).await;
        });
    });
    rx.recv().unwrap()
}

#[test]
fn h3_quinn_peer_small_large_multiplexed_pooled_and_trailers() {
    let site = Site::new("peer");
    let port = spawn_peer(&site);
    exercise(&format!("https://localhost:{port}/"), site.config(), site.trust(), true);
}

/// RFC 9221 §3: the client reads no QUIC datagrams, so it does not offer them: the server
/// (quinn, which offers them by default) sees no room for any.
#[test]
fn the_client_does_not_offer_quic_datagrams() {
    let site = Site::new("datagrams");
    let (seen_tx, seen_rx) = std::sync::mpsc::channel();
    let port = spawn_quinn(&site, move |endpoint| async move {
        let quic = endpoint.accept().await.unwrap().await.unwrap();
        seen_tx.send(quic.max_datagram_size()).unwrap();
        // Held open until the client has seen the handshake end.
        tokio::time::sleep(Duration::from_secs(1)).await;
    });
    // The connection may not complete (nothing answers HTTP/3 here): only its handshake counts.
    let url = format!("https://localhost:{port}/");
    let _ = rt().block_on(async {
        tokio::time::timeout(Duration::from_secs(2), Connection::connect(&url, &site.config()))
            .await
    });
    let seen = seen_rx.recv_timeout(Duration::from_secs(5)).expect("the handshake completed");
    assert_eq!(seen, None, "the client offered QUIC datagrams");
}

#[test]
fn an_untrusted_certificate_is_a_tls_error() {
    let site = Site::new("untrusted");
    let port = spawn_peer(&site);
    let other = Site::new("other");
    let err = rt()
        .block_on(Connection::connect(&format!("https://localhost:{port}/"), &other.config()))
        .unwrap_err();
    assert!(err.is_tls(), "{err}");
    // And HTTP/3 has no cleartext form.
    let err = rt()
        .block_on(Connection::connect(&format!("http://localhost:{port}/"), &site.config()))
        .unwrap_err();
    assert!(err.is_request(), "{err}");
}

#[test]
fn caddy_serves_files_over_h3() {
    if !have("caddy", &["version"]) {
        return;
    }
    let site = Site::new("caddy");
    let port = free_port();
    let d = site.dir.display();
    let caddyfile = format!(
        "{{\n  admin off\n  auto_https off\n  storage file_system {d}/data\n  \
         servers {{\n    protocols h1 h2 h3\n  }}\n}}\n\
         https://localhost:{port} {{\n  tls {d}/cert.pem {d}/key.pem\n  root * {d}/www\n  \
         file_server\n}}\n"
    );
    std::fs::write(site.dir.join("Caddyfile"), caddyfile).unwrap();
    let child = Command::new("caddy")
        .args(["run", "--adapter", "caddyfile", "--config"])
        .arg(site.dir.join("Caddyfile"))
        .env("HOME", &site.dir)
        .env("XDG_DATA_HOME", site.dir.join("data"))
        .env("XDG_CONFIG_HOME", site.dir.join("config"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _caddy = Proc(child);
    exercise(&format!("https://localhost:{port}/"), site.config(), site.trust(), false);
}

#[test]
fn aioquic_serves_files_and_echoes_with_trailers() {
    let probe = ["-c", "import aioquic"];
    if !have("python3", &probe) {
        return;
    }
    let site = Site::new("aioquic");
    let port = free_port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/aioquic_h3_server.py");
    let child = Command::new("python3")
        .arg(script)
        .args(["--port", &port.to_string()])
        .arg("--cert")
        .arg(site.dir.join("cert.pem"))
        .arg("--key")
        .arg(site.dir.join("key.pem"))
        .arg("--dir")
        .arg(site.www())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _server = Proc(child);
    exercise(&format!("https://localhost:{port}/"), site.config(), site.trust(), true);
}
