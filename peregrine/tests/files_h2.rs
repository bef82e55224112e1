//! `ServeDir` over HTTP/2 with a real client (the `h2` crate): validators and conditional
//! requests, HEAD, byte ranges, precompressed siblings, and a 64 MiB file sent in flat memory
//! (read in 64 KiB chunks as the flow-control windows open, never buffered whole).

mod support;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use peregrine::Server;
use peregrine::files::ServeDir;
use support::test_config;
use tokio::net::TcpStream;

type SendRequest = h2::client::SendRequest<Bytes>;

/// The tests run one at a time: the flat-memory one reads the process's RSS.
static SERIAL: Mutex<()> = Mutex::new(());

struct Dir(std::path::PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(tag: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("peregrine-files-h2-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("hello.txt"), b"hello world\n").unwrap();
    // Stand-ins for compressed siblings: what matters is which file is sent.
    std::fs::write(d.join("hello.txt.br"), b"BROTLI").unwrap();
    std::fs::write(d.join("hello.txt.gz"), b"GZIP").unwrap();
    std::fs::write(d.join("big.bin"), big()).unwrap();
    Dir(d)
}

fn big() -> Vec<u8> {
    (0..3_000_000u32).map(|i| (i % 253) as u8).collect()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// A prior-knowledge HTTP/2 connection with 1 MiB stream and 4 MiB connection windows.
async fn connect(addr: std::net::SocketAddr) -> SendRequest {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (send, conn) = h2::client::Builder::new()
        .initial_window_size(1 << 20)
        .initial_connection_window_size(4 << 20)
        .handshake(tcp)
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    send.ready().await.unwrap()
}

/// Sends `method path` with `fields`; returns the status, fields, and the body read chunk by
/// chunk through `each` (which sees every chunk; the body is kept when `keep`).
async fn fetch(
    send: &mut SendRequest,
    method: Method,
    path: &str,
    fields: &[(&str, &str)],
    keep: bool,
    mut each: impl FnMut(&[u8]),
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut req = http::Request::builder().method(method).uri(format!("http://localhost{path}"));
    for (n, v) in fields {
        req = req.header(*n, *v);
    }
    let (fut, _) = send.send_request(req.body(()).unwrap(), true).unwrap();
    let res = fut.await.unwrap();
    let (parts, mut recv) = res.into_parts();
    let mut body = Vec::new();
    while let Some(chunk) = recv.data().await {
        let chunk = chunk.unwrap();
        each(&chunk);
        if keep {
            body.extend_from_slice(&chunk);
        }
        recv.flow_control().release_capacity(chunk.len()).unwrap();
    }
    (parts.status, parts.headers, body)
}

async fn get(
    send: &mut SendRequest,
    path: &str,
    fields: &[(&str, &str)],
) -> (StatusCode, HeaderMap, Vec<u8>) {
    fetch(send, Method::GET, path, fields, true, |_| {}).await
}

#[test]
fn serve_dir_over_http2() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = dir("features");
    let big = big();
    for ttl in [None, Some(Duration::from_secs(60))] {
        let files = ServeDir::new(&d.0).unwrap().cache_ttl(ttl);
        let server = Server::bind("127.0.0.1:0").workers(1).config(test_config()).spawn(files);
        let server = server.unwrap();
        rt().block_on(async {
            let mut send = connect(server.local_addr()).await;

            let (status, h, body) = get(&mut send, "/hello.txt", &[]).await;
            assert_eq!((status, body.as_slice()), (StatusCode::OK, &b"hello world\n"[..]));
            assert_eq!(h["content-length"], "12");
            assert_eq!(h["content-type"], "text/plain; charset=utf-8");
            assert!(h.contains_key("last-modified") && h.contains_key("date"));
            let etag = h["etag"].to_str().unwrap().to_owned();

            // RFC 9110 §13.1.2, §15.4.5: a matching If-None-Match is 304, no content.
            let (status, h, body) = get(&mut send, "/hello.txt", &[("if-none-match", &etag)]).await;
            assert_eq!((status, body.len()), (StatusCode::NOT_MODIFIED, 0));
            assert_eq!(h["etag"].to_str().unwrap(), etag);
            // §13.1.1: If-Match that does not match is 412.
            let (status, _, _) = get(&mut send, "/hello.txt", &[("if-match", "\"other\"")]).await;
            assert_eq!(status, StatusCode::PRECONDITION_FAILED);
            // §13.1.3: If-Modified-Since the file's own date is 304.
            let (_, h, _) = get(&mut send, "/hello.txt", &[]).await;
            let lm = h["last-modified"].to_str().unwrap().to_owned();
            let (status, _, _) = get(&mut send, "/hello.txt", &[("if-modified-since", &lm)]).await;
            assert_eq!(status, StatusCode::NOT_MODIFIED);

            // §9.3.2: HEAD has the GET's content-length and no content.
            let (status, h, body) =
                fetch(&mut send, Method::HEAD, "/big.bin", &[], true, |_| {}).await;
            assert_eq!((status, body.len()), (StatusCode::OK, 0));
            assert_eq!(h["content-length"], "3000000");

            // §14: a range out of the middle, past the client's and server's windows.
            let (status, h, body) =
                get(&mut send, "/big.bin", &[("range", "bytes=1000000-2499999")]).await;
            assert_eq!(status, StatusCode::PARTIAL_CONTENT);
            assert_eq!(h["content-range"], "bytes 1000000-2499999/3000000");
            assert_eq!(h["content-length"], "1500000");
            assert!(body == big[1_000_000..2_500_000], "range content differs");
            // A suffix range; an unsatisfiable one (§15.5.17).
            let (status, _, body) = get(&mut send, "/big.bin", &[("range", "bytes=-10")]).await;
            assert_eq!(
                (status, body.as_slice()),
                (StatusCode::PARTIAL_CONTENT, &big[big.len() - 10..])
            );
            let (status, h, _) = get(&mut send, "/big.bin", &[("range", "bytes=3000000-")]).await;
            assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);
            assert_eq!(h["content-range"], "bytes */3000000");
            // If-Range with a stale validator: the whole file (§13.1.5).
            let (status, _, body) =
                get(&mut send, "/big.bin", &[("range", "bytes=0-9"), ("if-range", "\"stale\"")])
                    .await;
            assert_eq!((status, body.len()), (StatusCode::OK, big.len()));

            // Precompressed siblings by Accept-Encoding, with Vary.
            let cases = [
                ("br, gzip", Some("br"), &b"BROTLI"[..]),
                ("gzip", Some("gzip"), &b"GZIP"[..]),
                ("identity", None, &b"hello world\n"[..]),
            ];
            for (accept, coding, expect) in cases {
                let (status, h, body) =
                    get(&mut send, "/hello.txt", &[("accept-encoding", accept)]).await;
                assert_eq!((status, body.as_slice()), (StatusCode::OK, expect), "{accept}");
                assert_eq!(h.get("content-encoding").map(|v| v.to_str().unwrap()), coding);
                assert_eq!(h["vary"], "accept-encoding");
                assert_eq!(h["content-type"], "text/plain; charset=utf-8", "{accept}");
            }

            // The whole file, streamed under flow control.
            let (status, _, body) = get(&mut send, "/big.bin", &[]).await;
            assert_eq!((status, body.len()), (StatusCode::OK, big.len()));
            assert!(body == big, "whole file differs");
        });
        server.shutdown_now();
        server.join().unwrap();
    }
}

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A 64 MiB file over HTTP/2 (a sparse file: no disk space): the server reads it in 64 KiB
/// chunks as the windows allow, so the process's resident memory (server and client both live
/// here; the client drops each chunk) grows by far less than the file, sampled throughout.
#[test]
fn a_64_mib_file_in_flat_memory() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = dir("flat");
    let len = 64u64 << 20;
    let f = std::fs::File::create(d.0.join("huge.bin")).unwrap();
    f.set_len(len).unwrap();
    drop(f);
    let files = ServeDir::new(&d.0).unwrap();
    let server = Server::bind("127.0.0.1:0").workers(1).config(test_config()).spawn(files).unwrap();
    rt().block_on(async {
        let mut send = connect(server.local_addr()).await;
        // Warm up: the connection's buffers at their working size.
        let (status, _, _) = get(&mut send, "/hello.txt", &[]).await;
        assert_eq!(status, StatusCode::OK);
        let before = rss_kb();
        let (mut got, mut peak, mut last) = (0u64, before, Instant::now());
        let (status, h, _) = fetch(&mut send, Method::GET, "/huge.bin", &[], false, |chunk| {
            got += chunk.len() as u64;
            assert!(chunk.iter().all(|&b| b == 0));
            if last.elapsed() > Duration::from_millis(5) {
                peak = peak.max(rss_kb());
                last = Instant::now();
            }
        })
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(h["content-length"], len.to_string().as_str());
        assert_eq!(got, len);
        let growth = peak.saturating_sub(before);
        println!("64 MiB over HTTP/2: RSS {before} KiB, peak +{growth} KiB");
        assert!(growth < 12 * 1024, "RSS grew by {growth} KiB while sending 64 MiB");
    });
}
