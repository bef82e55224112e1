//! The client against other servers over loopback: nginx over TLS (ALPN choosing HTTP/2 or
//! HTTP/1.1, SNI, certificates checked), nghttpd over h2c by prior knowledge, and hyper's
//! HTTP/1.1 and HTTP/2 servers. nginx and nghttpd run as child processes on 127.0.0.1, started
//! and stopped here; a test whose tool is missing prints a notice and returns (`.ci/run`
//! installs them).

mod support;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use peregrine::Method;
use peregrine::client::conn::{Config, Connection, Event, Protocol, Versions};
use peregrine::client::{Client, TlsConfig};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn have(tool: &str) -> bool {
    let found =
        Command::new(tool).arg("-v").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
    if !found {
        println!("NOTICE: {tool} not installed; skipping (CI installs it: .ci/run)");
    }
    found
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A scratch directory removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("peregrine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("www")).unwrap();
        Dir(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
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

fn wait_for(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the server did not start on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A file the servers serve: 200,000 bytes that are not all the same.
fn file_bytes() -> Vec<u8> {
    (0..200_000u32).map(|i| (i % 251) as u8).collect()
}

fn write_site(dir: &Path) {
    std::fs::write(dir.join("www/file.bin"), file_bytes()).unwrap();
    std::fs::write(dir.join("www/hello.txt"), b"hello").unwrap();
}

/// One whole response over a connection: (status, body).
async fn fetch(conn: &mut Connection, target: &str) -> (u16, Vec<u8>) {
    conn.send_request(Method::Get, target, &[("accept", b"*/*")], &[]).unwrap();
    let (mut status, mut body) = (0, Vec::new());
    loop {
        match conn.next_event().await.unwrap() {
            Event::Head { head, .. } => status = head.status(),
            Event::Data { data, .. } => body.extend_from_slice(data),
            Event::End { .. } => return (status, body),
            Event::Failed { error, .. } => panic!("{error}"),
            Event::Writable { .. } => {}
        }
    }
}

async fn get(client: &Client, url: &str) -> Result<Vec<u8>, peregrine::client::Error> {
    let mut res = client.get(url).await?;
    assert_eq!(res.status(), 200, "{url}");
    Ok(std::mem::take(res.body_mut()).to_bytes(1 << 24).await.unwrap().to_vec())
}

#[test]
fn nginx_over_tls_with_alpn_sni_and_certificate_checks() {
    if !have("nginx") {
        return;
    }
    let dir = Dir::new("nginx");
    write_site(&dir.0);
    let cert = support::tls::self_signed(&["localhost"]);
    std::fs::write(dir.0.join("cert.pem"), &cert.cert_pem).unwrap();
    std::fs::write(dir.0.join("key.pem"), &cert.key_pem).unwrap();
    let port = free_port();
    let d = dir.0.display();
    let conf = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\nerror_log {d}/error.log;\npid {d}/nginx.pid;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/t1; proxy_temp_path {d}/t2; fastcgi_temp_path {d}/t3;\n  \
         uwsgi_temp_path {d}/t4; scgi_temp_path {d}/t5;\n  keepalive_requests 100000;\n  \
         server {{\n    listen 127.0.0.1:{port} ssl http2;\n    server_name localhost;\n    \
         ssl_certificate {d}/cert.pem;\n    ssl_certificate_key {d}/key.pem;\n    root {d}/www;\n    \
         location = /echo {{ return 200 \"$server_protocol $host $ssl_server_name\"; }}\n  }}\n}}\n"
    );
    std::fs::write(dir.0.join("nginx.conf"), conf).unwrap();
    let child = Command::new("nginx")
        .arg("-p")
        .arg(&dir.0)
        .arg("-c")
        .arg(dir.0.join("nginx.conf"))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _nginx = Proc(child);
    wait_for(port);
    let trust = TlsConfig::empty().add_ca_pem(cert.cert_pem.as_bytes()).unwrap();
    let url = format!("https://localhost:{port}");
    rt().block_on(async {
        for (versions, want, proto) in [
            (Versions::Auto, Protocol::Http2, "HTTP/2.0"),
            (Versions::Http1Only, Protocol::Http1, "HTTP/1.1"),
            (Versions::Http2Only, Protocol::Http2, "HTTP/2.0"),
        ] {
            let config = Config::default().versions(versions).tls(trust.clone());
            let mut conn = Connection::connect(&url, &config).await.unwrap();
            assert_eq!(conn.protocol(), want, "{versions:?}");
            // SNI carried the name; Host / :authority says the same (default port left out
            // only for 443).
            let (status, body) = fetch(&mut conn, "/echo").await;
            let want_echo = format!("{proto} localhost localhost");
            assert_eq!((status, String::from_utf8(body).unwrap()), (200, want_echo));
            for _ in 0..3 {
                let (status, body) = fetch(&mut conn, "/file.bin").await;
                assert_eq!(status, 200);
                assert!(body == file_bytes(), "{versions:?}: the file differs");
            }
            let (status, _) = fetch(&mut conn, "/missing").await;
            assert_eq!(status, 404);
        }
        // The pooled client, concurrent requests on one HTTP/2 connection.
        let client = Client::builder().tls(trust.clone()).build();
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let (c, u) = (client.clone(), format!("{url}/hello.txt"));
            tasks.push(tokio::spawn(async move { get(&c, &u).await.unwrap() }));
        }
        for t in tasks {
            assert_eq!(t.await.unwrap(), b"hello");
        }
        assert_eq!(client.pool_size(), (0, 1));

        // Certificate errors are errors: an untrusted certificate, a name it does not cover.
        let err = get(&Client::new(), &format!("{url}/hello.txt")).await.unwrap_err();
        assert!(err.is_tls(), "{err}");
        let client = Client::builder().tls(trust.clone()).build();
        let err = get(&client, &format!("https://127.0.0.1:{port}/hello.txt")).await.unwrap_err();
        assert!(err.is_tls(), "{err}");
        // ... unless verification is turned off on purpose (the load generator's --insecure).
        let insecure =
            Client::builder().tls(TlsConfig::empty().danger_accept_invalid_certs()).build();
        assert_eq!(
            get(&insecure, &format!("https://127.0.0.1:{port}/hello.txt")).await.unwrap(),
            b"hello"
        );
    });
}

#[test]
fn nghttpd_over_h2c_prior_knowledge() {
    if !have("nghttpd") {
        return;
    }
    let dir = Dir::new("nghttpd");
    write_site(&dir.0);
    let port = free_port();
    let child = Command::new("nghttpd")
        .args(["--no-tls", "-a", "127.0.0.1", "-d"])
        .arg(dir.0.join("www"))
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _nghttpd = Proc(child);
    wait_for(port);
    let url = format!("http://127.0.0.1:{port}");
    rt().block_on(async {
        let config = Config::default().versions(Versions::Http2Only);
        let mut conn = Connection::connect(&url, &config).await.unwrap();
        assert_eq!(conn.protocol(), Protocol::Http2);
        // Multiplexed: ten at once, bodies past the default windows.
        let ids: Vec<_> = (0..10)
            .map(|_| conn.send_request(Method::Get, "/file.bin", &[], &[]).unwrap())
            .collect();
        let mut bodies: std::collections::HashMap<_, Vec<u8>> = Default::default();
        let mut ended = 0;
        while ended < ids.len() {
            match conn.next_event().await.unwrap() {
                Event::Data { id, data } => bodies.entry(id).or_default().extend_from_slice(data),
                Event::End { .. } => ended += 1,
                Event::Failed { error, .. } => panic!("{error}"),
                _ => {}
            }
        }
        for id in ids {
            assert!(bodies[&id] == file_bytes());
        }
        let client = Client::builder().http2_prior_knowledge().build();
        assert_eq!(get(&client, &format!("{url}/hello.txt")).await.unwrap(), b"hello");
        let res = client.get(&format!("{url}/missing")).await.unwrap();
        assert_eq!(res.status(), 404);
    });
}

/// hyper's server on `addr`, HTTP/1.1 or HTTP/2, answering the method, path and a header.
async fn hyper_server(h2: bool) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { return };
            let io = hyper_util::rt::TokioIo::new(tcp);
            let service = hyper::service::service_fn(
                |req: hyper::Request<hyper::body::Incoming>| async move {
                    use http_body_util::BodyExt;
                    let head = format!(
                        "{} {} {:?}",
                        req.method(),
                        req.uri().path(),
                        req.headers().get("x-test")
                    );
                    let body =
                        req.into_body().collect().await.map(|b| b.to_bytes().len()).unwrap_or(0);
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::from(
                        format!("{head} {body}"),
                    ))))
                },
            );
            tokio::spawn(async move {
                if h2 {
                    let b = hyper::server::conn::http2::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    );
                    let _ = b.serve_connection(io, service).await;
                } else {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                }
            });
        }
    });
    addr
}

#[test]
fn hyper_servers() {
    rt().block_on(async {
        for h2 in [false, true] {
            let addr = hyper_server(h2).await;
            let b = Client::builder();
            let client = if h2 { b.http2_prior_knowledge() } else { b.http1_only() }.build();
            for i in 0..3 {
                let req = http::Request::post(format!("http://{addr}/p/{i}"))
                    .header("x-test", "v")
                    .body(vec![1u8; 70_000])
                    .unwrap();
                let mut res = client.send(req).await.unwrap();
                let body = std::mem::take(res.body_mut()).to_bytes(1 << 20).await.unwrap();
                assert_eq!(body, format!("POST /p/{i} Some(\"v\") 70000"), "h2={h2}");
            }
            assert_eq!(client.pool_size(), if h2 { (0, 1) } else { (1, 0) });
        }
    });
}
