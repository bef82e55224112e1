//! Directory listings over loopback: names that are not UTF-8 (shown percent-encoded and
//! still reachable), JSON, pages, a cache that sees new entries, and a 100,000-entry
//! directory that does not stall the other connections of its worker.

mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use peregrine::files::ServeDir;
use support::{RawClient, spawn};

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(tag: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("peregrine-listing-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("docs/sub")).unwrap();
    std::fs::write(d.join("hello.txt"), b"hello world\n").unwrap();
    std::fs::write(d.join("docs/a.txt"), b"a").unwrap();
    std::fs::write(d.join("docs/bbb.txt"), b"bbb").unwrap();
    Dir(d)
}

fn get(c: &mut RawClient, target: &str) -> support::RawResponse {
    c.send(format!("GET {target} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
    c.response()
}

#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_are_shown_encoded_and_reachable() {
    use std::os::unix::ffi::OsStrExt;
    let d = dir("bytes");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9 50%.txt");
    if std::fs::write(d.0.join("docs").join(name), b"latin-1 name").is_err() {
        eprintln!("file system refuses names that are not UTF-8; skipped");
        return;
    }
    let server = spawn(ServeDir::new(&d.0).unwrap());
    let mut c = RawClient::connect(server.local_addr());
    let html = String::from_utf8(get(&mut c, "/docs/").body).unwrap();
    assert!(html.contains("<a href=\"./caf%E9%2050%25.txt\">caf%E9 50%25.txt</a>"), "{html}");
    let r = get(&mut c, "/docs/caf%E9%2050%25.txt");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"latin-1 name"[..]));
    let json: serde_json::Value =
        serde_json::from_slice(&get(&mut c, "/docs/?format=json").body).unwrap();
    let entry =
        json["entries"].as_array().unwrap().iter().find(|e| e["href"] == "caf%E9%2050%25.txt");
    assert_eq!(entry.unwrap()["name"], "caf%E9 50%25.txt", "{json}");
}

#[test]
fn json_sorting_and_the_cache_sees_new_entries() {
    let d = dir("json");
    let server = spawn(ServeDir::new(&d.0).unwrap());
    let mut c = RawClient::connect(server.local_addr());
    let r = get(&mut c, "/docs/?format=json&sort=size&order=desc");
    assert_eq!(r.header("content-type"), Some("application/json"));
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    let names: Vec<&str> =
        v["entries"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    // Descending: files by size (largest first), then directories.
    assert_eq!(names, ["bbb.txt", "a.txt", "sub"]);
    assert_eq!(v["path"], "/docs/");
    assert_eq!(
        (v["total"].as_u64(), v["page"].as_u64(), v["pages"].as_u64()),
        (Some(3), Some(1), Some(1))
    );
    let a = &v["entries"][1];
    assert_eq!(
        (a["href"].as_str(), a["dir"].as_bool(), a["size"].as_u64()),
        (Some("a.txt"), Some(false), Some(1))
    );
    assert!(a["modified"].as_str().unwrap().ends_with('Z'));
    assert_eq!(v["entries"][2]["href"], "sub/");
    // A new entry changes the directory's modification time: the next listing has it.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(d.0.join("docs/new.txt"), b"new").unwrap();
    let html = String::from_utf8(get(&mut c, "/docs/").body).unwrap();
    assert!(html.contains("./new.txt"), "{html}");
}

/// A listing of 100,000 entries is read on the blocking pool: a request on another connection
/// of the same (single) worker is answered before the listing, and pages keep each answer
/// bounded.
#[test]
fn a_huge_directory_does_not_stall_the_worker() {
    let d = dir("huge");
    let huge = d.0.join("huge");
    std::fs::create_dir_all(&huge).unwrap();
    for i in 0..100_000 {
        std::fs::write(huge.join(format!("f{i:06}.txt")), b"").unwrap();
    }
    let server = spawn(ServeDir::new(&d.0).unwrap());
    let mut slow = RawClient::connect(server.local_addr());
    let mut other = RawClient::connect(server.local_addr());
    // Warm the other connection, so its next request is a plain cached-file answer.
    assert_eq!(get(&mut other, "/hello.txt").status, 200);

    let start = Instant::now();
    let reader = std::thread::spawn(move || {
        slow.send(b"GET /huge/?format=json HTTP/1.1\r\nHost: t\r\n\r\n");
        let listing = slow.response();
        (slow, listing, start.elapsed())
    });
    std::thread::sleep(Duration::from_millis(5));
    let r = get(&mut other, "/hello.txt");
    let other_done = start.elapsed();
    assert_eq!(r.status, 200);
    let (mut slow, listing, slow_done) = reader.join().unwrap();
    assert!(
        other_done < slow_done,
        "the other request waited for the listing: {other_done:?} vs {slow_done:?}"
    );
    let v: serde_json::Value = serde_json::from_slice(&listing.body).unwrap();
    assert_eq!((v["total"].as_u64(), v["pages"].as_u64()), (Some(100_000), Some(100)));
    assert_eq!(v["entries"].as_array().unwrap().len(), 1000);
    assert_eq!(v["next"], "?page=2&format=json");
    // Later pages come from the cache; the last page, descending, starts at the last name.
    let r = get(&mut slow, "/huge/?format=json&page=100");
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["entries"][999]["name"], "f099999.txt");
    let r = get(&mut slow, "/huge/?order=desc");
    let html = String::from_utf8(r.body).unwrap();
    assert!(
        html.contains("100000 entries, 1\u{2013}1000 shown (page 1 of 100)"),
        "{}",
        &html[..2000]
    );
    let first = html.find("./f099999.txt").unwrap();
    assert!(first < html.find("./f099998.txt").unwrap());
    assert!(html.len() < 400_000, "a page is bounded: {} bytes", html.len());
}
