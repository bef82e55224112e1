//! `ServeDir` behind the real server, over loopback: framing of HEAD, 304, 206 and streamed
//! bodies on one keep-alive connection.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use peregrine::Request;
use peregrine::files::ServeDir;
use support::{RawClient, spawn};

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(tag: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("peregrine-files-it-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("docs")).unwrap();
    std::fs::write(d.join("hello.txt"), b"hello world\n").unwrap();
    std::fs::write(d.join("docs/a.txt"), b"a").unwrap();
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(d.join("big.bin"), big).unwrap();
    Dir(d)
}

fn request(method: &str, path: &str, extra: &str) -> Vec<u8> {
    format!("{method} {path} HTTP/1.1\r\nHost: t\r\n{extra}\r\n").into_bytes()
}

#[test]
fn one_connection_many_answers() {
    let d = dir("conn");
    let big = std::fs::read(d.0.join("big.bin")).unwrap();
    for ttl in [None, Some(Duration::from_secs(60))] {
        let server = spawn(ServeDir::new(&d.0).unwrap().cache_ttl(ttl));
        let mut c = RawClient::connect(server.local_addr());

        c.send(&request("GET", "/hello.txt", ""));
        let r = c.response();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"hello world\n"[..]));
        assert_eq!(r.header("content-length"), Some("12"));
        assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
        let etag = r.header("etag").unwrap().to_owned();

        // RFC 9110 §9.3.2: HEAD has the GET's Content-Length and no body; the next answer on
        // the connection proves no stray body bytes were sent.
        c.send(&request("HEAD", "/big.bin", ""));
        let r = c.head_response();
        assert_eq!((r.status, r.header("content-length")), (200, Some("3000000")));

        // RFC 9110 §15.4.5: 304 without content.
        c.send(&request("GET", "/hello.txt", &format!("If-None-Match: {etag}\r\n")));
        let r = c.response();
        assert_eq!((r.status, r.body.len()), (304, 0));
        assert_eq!(r.header("etag"), Some(etag.as_str()));

        // RFC 9110 §14: a range out of the middle of a streamed file.
        c.send(&request("GET", "/big.bin", "Range: bytes=1000000-1999999\r\n"));
        let r = c.response();
        assert_eq!(r.status, 206);
        assert_eq!(r.header("content-range"), Some("bytes 1000000-1999999/3000000"));
        assert_eq!(r.body, &big[1_000_000..2_000_000]);

        c.send(&request("GET", "/big.bin", "Range: bytes=3000000-\r\n"));
        let r = c.response();
        assert_eq!((r.status, r.header("content-range")), (416, Some("bytes */3000000")));

        // The whole large file, streamed in chunks.
        c.send(&request("GET", "/big.bin", ""));
        let r = c.response();
        assert_eq!((r.status, r.body.len()), (200, big.len()));
        assert!(r.body == big);

        c.send(&request("GET", "/docs", ""));
        let r = c.response();
        assert_eq!((r.status, r.header("location")), (301, Some("docs/")));

        c.send(&request("DELETE", "/hello.txt", ""));
        let r = c.response();
        assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD, OPTIONS")));

        for path in ["/%2e%2e/etc/passwd", "/..%2Fetc%2Fpasswd", "/a%00b"] {
            c.send(&request("GET", path, ""));
            let status = c.response().status;
            assert!(status == 400 || status == 404, "{path}: {status}");
        }

        c.send(&request("GET", "/hello.txt", ""));
        assert_eq!(c.response().status, 200);
        server.shutdown();
        server.join().unwrap();
    }
}

#[test]
fn mounted_under_a_prefix() {
    let d = dir("mount");
    let files = ServeDir::new(&d.0).unwrap();
    let server = spawn(move |req: Request| {
        let res = match req.path().strip_prefix("/static") {
            Some(rest) => files.serve_path(&req, rest.as_bytes()),
            None => peregrine::Response::with_status(http::StatusCode::NOT_FOUND, "no"),
        };
        std::future::ready(res)
    });
    let mut c = RawClient::connect(server.local_addr());
    c.send(&request("GET", "/static/docs/a.txt", ""));
    let r = c.response();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"a"[..]));
    // The redirect is relative, so it stays under the mount point.
    c.send(&request("GET", "/static/docs", ""));
    assert_eq!(c.response().header("location"), Some("docs/"));
    c.send(&request("GET", "/hello.txt", ""));
    assert_eq!(c.response().status, 404);
}

/// Regression: with the file cache on, a file truncated in place before the request was sent
/// with its old Content-Length and cut short. Its descriptor is checked now (one fstat).
#[test]
fn a_file_changed_in_place_goes_out_with_its_current_length() {
    let d = dir("changed");
    let files = ServeDir::new(&d.0).unwrap().cache_ttl(Some(Duration::from_secs(60)));
    let server = spawn(files);
    let mut c = RawClient::connect(server.local_addr());
    c.send(&request("GET", "/big.bin", ""));
    let before = c.response();
    assert_eq!(before.body.len(), 3_000_000);
    let old_tag = before.header("etag").unwrap().to_owned();

    // Truncated in place: the cached descriptor sees the new size.
    let f = std::fs::OpenOptions::new().write(true).open(d.0.join("big.bin")).unwrap();
    f.set_len(100_000).unwrap();
    drop(f);
    c.send(&request("GET", "/big.bin", ""));
    let after = c.response();
    assert_eq!(after.status, 200);
    assert_eq!(after.header("content-length"), Some("100000"));
    assert_eq!(after.body.len(), 100_000);
    assert_ne!(after.header("etag"), Some(old_tag.as_str()));
    // A conditional request with the old tag no longer matches.
    c.send(&request("GET", "/big.bin", &format!("If-None-Match: {old_tag}\r\n")));
    assert_eq!(c.response().status, 200);

    // Appended to: the new length, the whole file.
    let mut f = std::fs::OpenOptions::new().append(true).open(d.0.join("big.bin")).unwrap();
    std::io::Write::write_all(&mut f, &[7u8; 50_000]).unwrap();
    drop(f);
    c.send(&request("GET", "/big.bin", ""));
    let grown = c.response();
    assert_eq!(grown.body.len(), 150_000);
    assert_eq!(&grown.body[100_000..], &[7u8; 50_000][..]);
}
