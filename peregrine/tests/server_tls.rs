//! HTTPS over loopback with a rustls client: keep-alive and pipelining, ALPN, SNI, session
//! resumption, a large file in flat memory, the handshake timeout, plain HTTP on the TLS port,
//! and the errors of bad certificate files.

mod support;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use peregrine::Server;
use peregrine::files::ServeDir;
use peregrine::server::{Config, TlsConfig};
use rustls::HandshakeKind;
use support::tls::{TestCert, client_config, self_signed};
use support::{RawClient, app, get, test_config};

fn tls_server(cert: &TestCert, config: Config) -> peregrine::ServerHandle {
    let tls = TlsConfig::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    Server::bind("127.0.0.1:0").workers(1).config(config).tls(tls).spawn(app).expect("spawn")
}

#[test]
fn keep_alive_and_pipelining_over_tls() {
    let cert = self_signed(&["localhost"]);
    let server = tls_server(&cert, test_config());
    let client = client_config(&[&cert], &[]);
    let mut c = RawClient::connect_tls(server.local_addr(), client, "localhost");
    for _ in 0..3 {
        c.send(&get("/"));
        assert_eq!(c.response().body, b"hello");
    }
    let mut batch = Vec::new();
    for path in ["/info?a", "/", "/stream", "/info?b"] {
        batch.extend_from_slice(&get(path));
    }
    batch.extend_from_slice(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
    c.send(&batch);
    assert_eq!(c.response().body, b"GET /info a Http11");
    assert_eq!(c.response().body, b"hello");
    assert_eq!(c.response().body, b"part1;part2;part3;");
    assert_eq!(c.response().body, b"GET /info b Http11");
    assert_eq!(c.response().body, b"hello");
}

/// Pins the read path that skips the `recv` bound to fail: a short read of ciphertext marks
/// the socket not readable. Records that come later, one small record at a time, must still
/// wake the connection; a body sent at once fills rustls's reads (4 KiB and more), which keep
/// the socket readable, and must be read whole.
#[test]
fn records_trickled_or_in_bulk_are_all_read() {
    let cert = self_signed(&["localhost"]);
    let server = tls_server(&cert, test_config());
    let client = client_config(&[&cert], &[]);
    let mut c = RawClient::connect_tls(server.local_addr(), client, "localhost");
    // Each `send` is one TLS record.
    for piece in get("/info?trickled").chunks(5) {
        c.send(piece);
        std::thread::sleep(Duration::from_millis(15));
    }
    assert_eq!(c.response().body, b"GET /info trickled Http11");
    let body: Vec<u8> = (0..300_000).map(|i| b'a' + (i % 26) as u8).collect();
    let mut post =
        format!("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n", body.len())
            .into_bytes();
    post.extend_from_slice(&body);
    c.send(&post);
    assert_eq!(c.response().body, body);
    c.send(&get("/"));
    assert_eq!(c.response().body, b"hello");
}

/// The last response goes out with our close_notify after it (RFC 8446 §6.1), now in the same
/// write: the client reads the whole response, then a clean end, for `Connection: close`, an
/// HTTP/1.0 request and a refused one. The session tickets, held back to leave with the first
/// response, still arrive: the next connection resumes.
#[test]
fn the_last_response_ends_with_close_notify() {
    let cert = self_signed(&["localhost"]);
    let server = tls_server(&cert, test_config());
    let client = client_config(&[&cert], &[]);
    let requests: [&[u8]; 3] = [
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        b"GET / HTTP/1.0\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: x\r\n\r\n",
    ];
    for (i, request) in requests.into_iter().enumerate() {
        let mut stream =
            support::tls::connect(server.local_addr(), client.clone(), "localhost").unwrap();
        let kind = if i == 0 { HandshakeKind::Full } else { HandshakeKind::Resumed };
        assert_eq!(stream.conn.handshake_kind(), Some(kind), "request {i}");
        stream.write_all(request).unwrap();
        let mut got = Vec::new();
        // rustls returns Ok(0) only after close_notify; a bare FIN is an UnexpectedEof error.
        stream.read_to_end(&mut got).expect("a clean TLS close");
        let text = String::from_utf8_lossy(&got);
        let expect = if i == 2 { "HTTP/1.1 400" } else { "HTTP/1.1 200" };
        assert!(text.starts_with(expect), "request {i}: {text}");
    }
}

#[test]
fn alpn_chooses_h2_or_http11() {
    let cert = self_signed(&["localhost"]);
    let server = tls_server(&cert, test_config());
    struct Case {
        offer: &'static [&'static [u8]],
        expect: Option<&'static [u8]>,
    }
    let cases = [
        Case { offer: &[b"h2", b"http/1.1"], expect: Some(b"h2") },
        Case { offer: &[b"http/1.1", b"h2"], expect: Some(b"h2") },
        Case { offer: &[b"http/1.1"], expect: Some(b"http/1.1") },
        Case { offer: &[], expect: None },
    ];
    for case in cases {
        let client = client_config(&[&cert], case.offer);
        let stream = support::tls::connect(server.local_addr(), client, "localhost").unwrap();
        assert_eq!(stream.conn.alpn_protocol(), case.expect, "{:?}", case.offer);
    }
    // With HTTP/2 off, only http/1.1 is offered.
    let config = Config { http2: false, ..test_config() };
    let server = tls_server(&cert, config);
    let client = client_config(&[&cert], &[b"h2", b"http/1.1"]);
    let stream = support::tls::connect(server.local_addr(), client, "localhost").unwrap();
    assert_eq!(stream.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
}

#[test]
fn sni_picks_the_certificate_for_the_name() {
    let default = self_signed(&["localhost"]);
    let other = self_signed(&["api.example.test"]);
    let dir = tempdir();
    let (cert_path, key_path) = (dir.join("api.pem"), dir.join("api.key"));
    std::fs::write(&cert_path, &other.cert_pem).unwrap();
    std::fs::write(&key_path, &other.key_pem).unwrap();
    let tls = TlsConfig::from_pem(default.cert_pem.as_bytes(), default.key_pem.as_bytes())
        .unwrap()
        .with_sni_pem_files("API.example.test", &cert_path, &key_path)
        .unwrap();
    let server = Server::bind("127.0.0.1:0").workers(1).tls(tls).spawn(app).unwrap();
    // Each client trusts only one of the two certificates: the handshake proves which was sent.
    let only_other = client_config(&[&other], &[]);
    let mut c = RawClient::connect_tls(server.local_addr(), only_other.clone(), "api.example.test");
    c.send(&get("/"));
    assert_eq!(c.response().body, b"hello");
    let only_default = client_config(&[&default], &[]);
    assert!(support::tls::connect(server.local_addr(), only_default.clone(), "localhost").is_ok());
    assert!(support::tls::connect(server.local_addr(), only_other, "localhost").is_err());
    assert!(support::tls::connect(server.local_addr(), only_default, "api.example.test").is_err());
}

#[test]
fn sessions_resume() {
    let cert = self_signed(&["localhost"]);
    let server = tls_server(&cert, test_config());
    let client = client_config(&[&cert], &[]);
    let mut first =
        support::tls::connect(server.local_addr(), client.clone(), "localhost").unwrap();
    assert_eq!(first.conn.handshake_kind(), Some(HandshakeKind::Full));
    // TLS 1.3 tickets arrive after the handshake: one request reads them.
    first.write_all(&get("/")).unwrap();
    let mut buf = [0u8; 256];
    let _ = first.read(&mut buf).unwrap();
    let second = support::tls::connect(server.local_addr(), client, "localhost").unwrap();
    assert_eq!(second.conn.handshake_kind(), Some(HandshakeKind::Resumed));
}

#[test]
fn a_large_file_streams_over_tls_in_flat_memory() {
    const SIZE: usize = 48 << 20;
    let dir = tempdir();
    let content: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.join("big.bin"), &content).unwrap();
    let expect = checksum(&content);
    drop(content);
    let cert = self_signed(&["localhost"]);
    let tls = TlsConfig::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    let files = ServeDir::new(&dir.0).unwrap();
    let server = Server::bind("127.0.0.1:0").workers(1).tls(tls).spawn(files).unwrap();
    let client = client_config(&[&cert], &[]);
    let mut stream = support::tls::connect(server.local_addr(), client, "localhost").unwrap();
    let before = rss_kib();
    stream.write_all(&get("/big.bin")).unwrap();
    // Read the head, then stream the body through a checksum without keeping it.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.to_ascii_lowercase().contains(&format!("content-length: {SIZE}")), "{head}");
    let (mut got, mut sum, mut peak) = (0, Checksum::default(), before);
    let mut chunk = vec![0u8; 64 * 1024];
    while got < SIZE {
        let n = stream.read(&mut chunk[..(SIZE - got).min(64 * 1024)]).unwrap();
        assert!(n > 0, "eof after {got} bytes");
        sum.update(&chunk[..n]);
        got += n;
        if got % (8 << 20) < n {
            peak = peak.max(rss_kib());
        }
    }
    assert_eq!(sum.finish(), expect);
    // The server reads the file in 64 KiB chunks: a whole-file buffer would be 48 MiB.
    let grown = peak.saturating_sub(before);
    assert!(grown < 16 * 1024, "resident memory grew by {grown} KiB while serving 48 MiB");
}

#[test]
fn a_stalled_handshake_is_cut() {
    let cert = self_signed(&["localhost"]);
    let config = Config { tls_handshake_timeout: Duration::from_millis(300), ..test_config() };
    let server = tls_server(&cert, config);
    // Half a ClientHello record header, then silence.
    let mut c = RawClient::connect(server.local_addr());
    c.send(&[0x16, 0x03, 0x01]);
    let start = Instant::now();
    assert!(c.closed_within(Duration::from_secs(3)));
    assert!(start.elapsed() < Duration::from_secs(2), "took {:?}", start.elapsed());
    // Another client is served meanwhile and after.
    let client = client_config(&[&cert], &[]);
    let mut ok = RawClient::connect_tls(server.local_addr(), client, "localhost");
    ok.send(&get("/"));
    assert_eq!(ok.response().body, b"hello");
}

#[test]
fn plain_http_on_the_tls_port_is_closed_at_once() {
    let cert = self_signed(&["localhost"]);
    let server = tls_server(&cert, test_config());
    let mut c = RawClient::connect(server.local_addr());
    c.send(&get("/"));
    let start = Instant::now();
    assert!(c.closed_within(Duration::from_secs(3)));
    assert!(start.elapsed() < Duration::from_secs(1), "took {:?}", start.elapsed());
}

#[test]
fn plain_and_tls_listeners_side_by_side() {
    let cert = self_signed(&["localhost"]);
    let tls = TlsConfig::from_pem(cert.cert_pem.as_bytes(), cert.key_pem.as_bytes()).unwrap();
    let server =
        Server::bind("127.0.0.1:0").and_bind_tls("127.0.0.1:0", tls).workers(1).spawn(app).unwrap();
    let (plain, secure) = (server.local_addrs()[0], server.local_addrs()[1]);
    let mut c = RawClient::connect(plain);
    c.send(&get("/"));
    assert_eq!(c.response().body, b"hello");
    let mut s = RawClient::connect_tls(secure, client_config(&[&cert], &[]), "localhost");
    s.send(&get("/"));
    assert_eq!(s.response().body, b"hello");
}

#[test]
fn bad_certificate_files_are_named_in_the_error() {
    let dir = tempdir();
    let cert = self_signed(&["localhost"]);
    let other = self_signed(&["localhost"]);
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let good_cert = write("cert.pem", &cert.cert_pem);
    let good_key = write("key.pem", &cert.key_pem);
    let other_key = write("other.key", &other.key_pem);
    let garbage = write("garbage.pem", "not a PEM file\n");
    let missing = dir.join("missing.pem");
    struct Case {
        cert: std::path::PathBuf,
        key: std::path::PathBuf,
        expect: String,
    }
    let at = |p: &std::path::Path, reason: &str| format!("{}: {reason}", p.display());
    let cases = [
        Case {
            cert: missing.clone(),
            key: good_key.clone(),
            expect: at(&missing, "cannot read: no such file or directory"),
        },
        Case {
            cert: garbage.clone(),
            key: good_key.clone(),
            expect: at(&garbage, "no certificate (expected a PEM CERTIFICATE block)"),
        },
        Case {
            cert: good_cert.clone(),
            key: garbage.clone(),
            expect: at(
                &garbage,
                "no private key (expected a PEM PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY block)",
            ),
        },
        Case {
            cert: good_cert.clone(),
            key: other_key.clone(),
            expect: at(&other_key, "private key does not match the certificate"),
        },
        // A key where the certificate should be.
        Case {
            cert: good_key.clone(),
            key: good_key.clone(),
            expect: at(&good_key, "no certificate (expected a PEM CERTIFICATE block)"),
        },
    ];
    for case in cases {
        let err = TlsConfig::from_pem_files(&case.cert, &case.key).unwrap_err();
        assert_eq!(err.to_string(), case.expect);
    }
    assert!(TlsConfig::from_pem_files(&good_cert, &good_key).is_ok());
}

#[test]
fn refused_requests_over_tls_get_their_status() {
    let cert = self_signed(&["localhost"]);
    let server = tls_server(&cert, test_config());
    let mut c =
        RawClient::connect_tls(server.local_addr(), client_config(&[&cert], &[]), "localhost");
    c.send(b"GET / HTTP/1.1\r\n\r\n");
    let res = c.response();
    assert_eq!(res.status, 400);
    assert_eq!(res.header("connection"), Some("close"));
    assert!(c.closed_within(Duration::from_secs(3)));
}

/// A fresh directory under the system's temp dir, removed with what it holds when dropped
/// (the large-file test writes 48 MiB into one).
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn join(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempdir() -> TempDir {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("peregrine-tls-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// This process's resident memory in KiB (server and client share it).
fn rss_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Fletcher-style checksum: cheap, order-sensitive.
#[derive(Default)]
struct Checksum(u64, u64);

impl Checksum {
    fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 + u64::from(b)) % 0xffff_fffb;
            self.1 = (self.1 + self.0) % 0xffff_fffb;
        }
    }

    fn finish(&self) -> (u64, u64) {
        (self.0, self.1)
    }
}

fn checksum(bytes: &[u8]) -> (u64, u64) {
    let mut sum = Checksum::default();
    sum.update(bytes);
    sum.finish()
}
